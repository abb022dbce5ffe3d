//! Property test of reading a compile cache entry: arbitrary bytes, and a
//! valid entry with mutated bytes, are refused with a reason (or, when the
//! mutation left the entry as it was, loaded), never a panic, and nothing
//! that is not the entry byte for byte reaches wasmtime's deserializer.

use proptest::prelude::*;

use super::*;
use crate::guest::runtime::wasmtime::engine::compile;
use crate::util::fs::{Cap, Links, read_bounded};
use crate::util::fuzz::{bytes_like, config};

/// A valid entry of a small module under `secret`, and what reads it.
fn entry(engine: &Engine, secret: &Secret) -> (Vec<u8>, String) {
    let bytes = wat::parse_str(r#"(module (func (export "answer") (result i32) i32.const 42))"#)
        .expect("valid WAT");
    let compiled = Compiled {
        engine,
        format: Format::Module,
        key: key(engine, &bytes),
    };
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("entry.cwasm");
    let code = compile(engine, Format::Module, &bytes).expect("compiles");
    compiled
        .store(dir.path(), &path, secret, &code)
        .expect("stored");
    let cap = Cap {
        bytes: 64 << 20,
        name: "the test's cap",
    };
    let stored = read_bounded(&path, cap, Links::Refuse).expect("reads");
    (stored, compiled.key)
}

proptest! {
    #![proptest_config(config(200))]

    #[test]
    fn a_cache_entry_read_is_loaded_only_when_it_is_the_entry(
        (engine, secret, original, key, bytes) in {
            let engine = Engine::default();
            let secret = Secret::of([7; secret::LEN]);
            let (original, key) = entry(&engine, &secret);
            bytes_like(original.clone()).prop_map(move |bytes| {
                (engine.clone(), Secret::of([7; secret::LEN]), original.clone(), key.clone(), bytes)
            })
        }
    ) {
        let compiled = Compiled { engine: &engine, format: Format::Module, key };
        let _ = split(&bytes);
        match compiled.load_entry(&secret, &bytes) {
            Ok(_) => prop_assert_eq!(&bytes, &original),
            Err(reason) => prop_assert!(!reason.is_empty()),
        }
    }
}
