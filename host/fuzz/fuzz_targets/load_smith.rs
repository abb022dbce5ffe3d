//! Valid core modules from `wasm-smith`, loaded as workloads.
//!
//! Raw bytes rarely get past the validator; wasm-smith makes modules that do,
//! so compiling (both engines) and the contract check see real code. The
//! first bytes choose the engine configuration (Cranelift at opt-level speed
//! or none, Winch, Pulley: see `host_fuzz::config`) and the shape: the
//! exports are arbitrary or forced (a `run` of the right type, several
//! `run_<name>`, a `setup`, a WASI `_start`, or wrong types), and the imports
//! are arbitrary or limited to the timing controls or to a program's WASI and
//! bench.start/end imports (right or wrong types). The rest drives
//! wasm-smith's own configuration, with proposals wasmtime is not built with
//! here switched off most of the time.

#![no_main]

use std::sync::OnceLock;

use arbitrary::{Arbitrary, Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use wasm_smith::{Config, Module};

/// Export shapes that follow the contract.
const RIGHT_EXPORTS: &[&str] = &[
    // One `run` of the contract's type.
    r#"(module (func (export "run") (param i64 i64) (result i64) unreachable))"#,
    // The full contract: several benchmarks, set-up and a memory.
    r#"(module
        (memory (export "memory") 1)
        (func (export "setup") (param i64) unreachable)
        (func (export "run") (param i64 i64) (result i64) unreachable)
        (func (export "run_a") (param i64 i64) (result i64) unreachable)
        (func (export "run_") (param i64 i64) (result i64) unreachable))"#,
    // A WASI command (a program).
    r#"(module (memory (export "memory") 1) (func (export "_start") unreachable))"#,
];

/// Export shapes that break it: wrong types, not functions.
const WRONG_EXPORTS: &[&str] = &[
    r#"(module (func (export "run") (param i32 i32) (result i32) unreachable))"#,
    r#"(module
        (func (export "run") (param i64 i64) (result i64) unreachable)
        (func (export "setup") (param i64) (result i64) unreachable))"#,
    r#"(module (global (export "run") i64 (i64.const 0)))"#,
    r#"(module (memory (export "run_x") 1))"#,
    r#"(module (table (export "setup") 1 funcref))"#,
    r#"(module (func (export "_start") (param i32) unreachable))"#,
];

/// Import shapes that follow the contract (of a `run` workload or of a
/// program).
const RIGHT_IMPORTS: &[&str] = &[
    r#"(module)"#,
    r#"(module (import "bench" "pause" (func)) (import "bench" "resume" (func)))"#,
    r#"(module (import "bench" "pause" (func)))"#,
    r#"(module
        (import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32)))
        (import "wasi_snapshot_preview1" "proc_exit" (func (param i32)))
        (import "bench" "start" (func))
        (import "bench" "end" (func)))"#,
];

/// Import shapes that break it: other types, other names, not functions.
const WRONG_IMPORTS: &[&str] = &[
    r#"(module (import "bench" "pause" (func (param i32))) (import "bench" "resume" (func (result i64))))"#,
    r#"(module (import "bench" "sleep" (func)) (import "env" "pause" (func)))"#,
    r#"(module (import "bench" "pause" (memory 1)) (import "bench" "resume" (global i32)))"#,
    r#"(module (import "bench" "start" (func (param i32))) (import "bench" "end" (func)))"#,
];

/// Shapes as binaries, converted once.
struct Shapes {
    right: Vec<Vec<u8>>,
    wrong: Vec<Vec<u8>>,
}

impl Shapes {
    fn new(right: &[&str], wrong: &[&str]) -> Shapes {
        let parse = |texts: &[&str]| -> Vec<Vec<u8>> {
            texts
                .iter()
                .map(|t| wat::parse_str(t).expect("a built-in shape"))
                .collect()
        };
        Shapes {
            right: parse(right),
            wrong: parse(wrong),
        }
    }

    /// A right shape half the time, a wrong one a quarter, and none (let
    /// wasm-smith choose freely) a quarter.
    fn pick(&self, u: &mut Unstructured) -> Result<Option<Vec<u8>>> {
        Ok(match u.choose_index(4)? {
            0 | 1 => Some(u.choose(&self.right)?.clone()),
            2 => Some(u.choose(&self.wrong)?.clone()),
            _ => None,
        })
    }
}

fn exports() -> &'static Shapes {
    static SHAPES: OnceLock<Shapes> = OnceLock::new();
    SHAPES.get_or_init(|| Shapes::new(RIGHT_EXPORTS, WRONG_EXPORTS))
}

fn imports() -> &'static Shapes {
    static SHAPES: OnceLock<Shapes> = OnceLock::new();
    SHAPES.get_or_init(|| Shapes::new(RIGHT_IMPORTS, WRONG_IMPORTS))
}

fn module(u: &mut Unstructured) -> Result<Vec<u8>> {
    let exports = exports().pick(u)?;
    let imports = imports().pick(u)?;
    let unrestricted: bool = u.ratio(1, 16)?;
    let mut config = Config::arbitrary(u)?;
    if !unrestricted {
        // Proposals the host's wasmtime (no `gc`, `threads` features) rejects;
        // an arbitrary config turns each on half the time, which would spend
        // most inputs on one validation error. Reference types go too: with
        // them wasm-smith uses `externref`, which needs gc types here.
        config.gc_enabled = false;
        config.threads_enabled = false;
        config.shared_everything_threads_enabled = false;
        config.exceptions_enabled = false;
        config.compact_imports_enabled = false;
        config.reference_types_enabled = false;
        config.max_tables = config.max_tables.min(1);
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
