//! Valid core modules from `wasm-smith`, loaded as workloads.
//!
//! Raw bytes rarely get past the validator; wasm-smith makes modules that do,
//! so compiling (both engines) and the contract check see real code. The
//! first bytes choose the engine configuration (Cranelift at opt-level speed
//! or none, Winch, Pulley: see `host_fuzz::config`) and the shape: the exports are arbitrary or forced (a `run`
//! of the right type, several `run_<name>`, a `setup`, or wrong types), and
//! the imports are arbitrary or limited to the timing controls (right or
//! wrong types). The rest drives wasm-smith's own configuration, with
//! proposals wasmtime is not built with here switched off most of the time.

#![no_main]

use std::sync::OnceLock;

use arbitrary::{Arbitrary, Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use wasm_smith::{Config, Module};

const EXPORTS: &[&str] = &[
    // One `run` of the contract's type.
    r#"(module (func (export "run") (param i64 i64) (result i64) unreachable))"#,
    // The full contract: several benchmarks, set-up and a memory.
    r#"(module
        (memory (export "memory") 1)
        (func (export "setup") (param i64) unreachable)
        (func (export "run") (param i64 i64) (result i64) unreachable)
        (func (export "run_a") (param i64 i64) (result i64) unreachable)
        (func (export "run_") (param i64 i64) (result i64) unreachable))"#,
    // Wrong types: each is a contract violation.
    r#"(module (func (export "run") (param i32 i32) (result i32) unreachable))"#,
    r#"(module
        (func (export "run") (param i64 i64) (result i64) unreachable)
        (func (export "setup") (param i64) (result i64) unreachable))"#,
    r#"(module (global (export "run") i64 (i64.const 0)))"#,
    r#"(module (memory (export "run_x") 1))"#,
    r#"(module (table (export "setup") 1 funcref))"#,
];

const IMPORTS: &[&str] = &[
    r#"(module (import "bench" "pause" (func)) (import "bench" "resume" (func)))"#,
    r#"(module (import "bench" "pause" (func)))"#,
    // Wrong: other types, other names, not functions.
    r#"(module (import "bench" "pause" (func (param i32))) (import "bench" "resume" (func (result i64))))"#,
    r#"(module (import "bench" "sleep" (func)) (import "env" "pause" (func)))"#,
    r#"(module (import "bench" "pause" (memory 1)) (import "bench" "resume" (global i32)))"#,
];

fn parsed(texts: &'static [&'static str]) -> Vec<Vec<u8>> {
    texts
        .iter()
        .map(|t| wat::parse_str(t).expect("a built-in shape"))
        .collect()
}

fn exports() -> &'static [Vec<u8>] {
    static BYTES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    BYTES.get_or_init(|| parsed(EXPORTS))
}

fn imports() -> &'static [Vec<u8>] {
    static BYTES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    BYTES.get_or_init(|| parsed(IMPORTS))
}

/// Pick an element of `choices` or none (arbitrary shape) by one byte.
fn pick(u: &mut Unstructured, choices: &'static [Vec<u8>]) -> Result<Option<Vec<u8>>> {
    let i = u.choose_index(choices.len() + 1)?;
    Ok(choices.get(i).cloned())
}

fn module(u: &mut Unstructured) -> Result<Vec<u8>> {
    let exports = pick(u, exports())?;
    let imports = pick(u, imports())?;
    let unrestricted: bool = u.ratio(1, 8)?;
    let mut config = Config::arbitrary(u)?;
    if !unrestricted {
        // Proposals the host's wasmtime (no `gc`, `threads` features) rejects;
        // an arbitrary config turns each on half the time, which would spend
        // most inputs on one validation error.
        config.gc_enabled = false;
        config.threads_enabled = false;
        config.shared_everything_threads_enabled = false;
        config.exceptions_enabled = false;
    }
    config.exports = exports;
    config.available_imports = imports;
    Ok(Module::new(config, u)?.to_bytes())
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(engine) = u.choose_index(host_fuzz::CONFIGS) else {
        return;
    };
    let Ok(bytes) = module(&mut u) else { return };
    host_fuzz::load(engine, "smith.wasm", &bytes);
});
