use super::*;
use crate::guest::runtime::wasmtime::engine::compile;

/// A module whose `answer` export returns `n`.
fn module(n: i32) -> Vec<u8> {
    wat::parse_str(format!(
        r#"(module (func (export "answer") (result i32) i32.const {n}))"#
    ))
    .expect("valid WAT")
}

/// What `answer` of `code` returns.
fn answer(engine: &Engine, code: &Code) -> i32 {
    let Code::Module(module) = code else {
        panic!("a module")
    };
    let mut store = wasmtime::Store::new(engine, ());
    let instance = wasmtime::Instance::new(&mut store, module, &[]).expect("instantiates");
    let func = instance
        .get_typed_func::<(), i32>(&mut store, "answer")
        .expect("exported");
    func.call(&mut store, ()).expect("runs")
}

struct Cache {
    dir: tempfile::TempDir,
    engine: Engine,
    secret: Secret,
}

impl Cache {
    fn new() -> Cache {
        Cache {
            dir: tempfile::tempdir().expect("temp dir"),
            engine: Engine::default(),
            secret: Secret::of([7; secret::LEN]),
        }
    }

    /// Load module `n` through the cache: its answer, the outcome, and
    /// whether it was compiled.
    fn load(&self, n: i32) -> (i32, CacheOutcome, bool) {
        self.load_with(n, Ok(&self.secret))
    }

    fn load_with(&self, n: i32, secret: Result<&Secret, &str>) -> (i32, CacheOutcome, bool) {
        let bytes = module(n);
        let compiled = Compiled {
            engine: &self.engine,
            format: Format::Module,
            key: key(&self.engine, &bytes),
        };
        let mut compiled_now = false;
        let (code, outcome) = compiled
            .load_or_compile(self.dir.path(), secret, || {
                compiled_now = true;
                compile(&self.engine, Format::Module, &bytes)
            })
            .expect("loads or compiles");
        (answer(&self.engine, &code), outcome, compiled_now)
    }

    fn entry(&self, n: i32) -> std::path::PathBuf {
        let key = key(&self.engine, &module(n));
        self.dir.path().join(format!("{key}.cwasm"))
    }
}

fn rebuilt_because(outcome: &CacheOutcome, why: &str) -> bool {
    matches!(outcome, CacheOutcome::Rebuilt(reason) if reason.contains(why))
}

#[test]
fn an_entry_is_stored_then_loaded() {
    let cache = Cache::new();
    assert_eq!(cache.load(1), (1, CacheOutcome::Miss, true));
    assert_eq!(cache.load(1), (1, CacheOutcome::Hit, false));
}

/// An entry copied over another module's key is refused, and the module
/// asked for is compiled and answers: not the copied one.
#[test]
fn a_swapped_entry_is_refused_and_rebuilt() {
    let cache = Cache::new();
    cache.load(1);
    cache.load(2);
    std::fs::copy(cache.entry(2), cache.entry(1)).expect("copies");
    let (answer, outcome, compiled) = cache.load(1);
    assert_eq!((answer, compiled), (1, true));
    assert!(
        rebuilt_because(&outcome, "written for another key"),
        "{outcome:?}"
    );
    assert_eq!(cache.load(1), (1, CacheOutcome::Hit, false));
}

/// A patched payload is refused, whether its MAC is left as it was or the
/// entry is rewritten in the older layout, with the plain SHA-256 of the
/// patched payload that anyone can compute.
#[test]
fn a_tampered_entry_is_refused_and_rebuilt() {
    let cache = Cache::new();
    cache.load(1);
    cache.load(2);
    let stored = std::fs::read(cache.entry(1)).expect("reads");
    let (header, _) = split(&stored).expect("an entry");
    let payload_at = header.signed.len() + secret::LEN;
    // Module 2's payload under module 1's header and MAC.
    let other = std::fs::read(cache.entry(2)).expect("reads");
    let (other_header, other_payload) = split(&other).expect("an entry");
    assert!(other_header.signed.len() + secret::LEN <= other.len());
    let mut patched = stored[..payload_at].to_vec();
    patched.extend_from_slice(other_payload);
    std::fs::write(cache.entry(1), &patched).expect("writes");
    let (answer, outcome, compiled) = cache.load(1);
    assert_eq!((answer, compiled), (1, true));
    assert!(
        rebuilt_because(&outcome, "checksum mismatch"),
        "{outcome:?}"
    );
    // The older layout: magic, SHA-256 of the payload, payload.
    let mut old = b"wbcache1".to_vec();
    old.extend_from_slice(&Sha256::digest(other_payload));
    old.extend_from_slice(other_payload);
    std::fs::write(cache.entry(1), &old).expect("writes");
    let (answer, outcome, _) = cache.load(1);
    assert_eq!(answer, 1);
    assert!(
        rebuilt_because(&outcome, "not a cache entry"),
        "{outcome:?}"
    );
}

/// An entry made under another secret is refused; without a secret,
/// nothing read is trusted and nothing is stored.
#[test]
fn an_entry_needs_this_users_secret() {
    let cache = Cache::new();
    cache.load(1);
    let stranger = Secret::of([8; secret::LEN]);
    let (answer, outcome, _) = cache.load_with(1, Ok(&stranger));
    assert_eq!(answer, 1);
    assert!(
        rebuilt_because(&outcome, "checksum mismatch"),
        "{outcome:?}"
    );
    let (_, outcome, _) = cache.load_with(1, Err("no home"));
    assert!(rebuilt_because(&outcome, "no home"), "{outcome:?}");
    std::fs::remove_file(cache.entry(3)).ok();
    assert_eq!(cache.load_with(3, Err("no home")).1, CacheOutcome::Miss);
    assert!(!cache.entry(3).exists());
}

/// A FIFO, a link to `/dev/zero` or an oversized file in an entry's place
/// is refused without being read (or blocking), and replaced.
#[test]
fn an_entry_that_is_not_a_regular_file_is_refused_unread() {
    let cache = Cache::new();
    let made = std::process::Command::new("mkfifo")
        .arg(cache.entry(1))
        .status();
    assert!(made.is_ok_and(|s| s.success()));
    let (_, outcome, _) = cache.load(1);
    assert!(
        rebuilt_because(&outcome, "not a regular file"),
        "{outcome:?}"
    );
    std::fs::remove_file(cache.entry(2)).ok();
    std::os::unix::fs::symlink("/dev/zero", cache.entry(2)).expect("links");
    let (_, outcome, _) = cache.load(2);
    assert!(rebuilt_because(&outcome, "symbolic link"), "{outcome:?}");
    let big = std::fs::File::create(cache.entry(3)).expect("creates");
    big.set_len(MAX_ENTRY_BYTES + 1).expect("grows");
    let (_, outcome, _) = cache.load(3);
    assert!(
        rebuilt_because(&outcome, "larger than the cap on a cache entry"),
        "{outcome:?}"
    );
    assert_eq!(cache.load(3).1, CacheOutcome::Hit);
}
