//! Tests of the wasmer runtime: calls, checksums, pauses, the memory limit,
//! refused imports and formats, under both of its compilers.

use std::path::Path;

use anyhow::{Context, Result};

use super::{Compiler, Wasmer, WasmerSampler};
use crate::guest::format::Format;
use crate::guest::limits::Limits;
use crate::guest::runtime::wasmtime::engine::compile;
use crate::guest::runtime::{Guest, Runner, Sampler};
use crate::guest::seeds::{SeedRule, Seeds};

const COMPILERS: [Compiler; 2] = [Compiler::Cranelift, Compiler::Singlepass];

const MIB: u64 = 1 << 20;

/// `run` returns count + seed; `setup` stores its size in a global that
/// `run` adds too.
const ADD: &str = r#"(module
  (global $size (mut i64) (i64.const 0))
  (func (export "setup") (param i64) (global.set $size (local.get 0)))
  (func (export "run") (param i64 i64) (result i64)
    (i64.add (global.get $size) (i64.add (local.get 0) (local.get 1)))))"#;

/// Pauses and resumes `count` times.
const PAUSES: &str = r#"(module
  (import "bench" "pause" (func $pause))
  (import "bench" "resume" (func $resume))
  (func (export "run") (param i64 i64) (result i64)
    (local $i i64)
    (block $done
      (loop $next
        (br_if $done (i64.ge_u (local.get $i) (local.get 0)))
        (call $pause)
        (call $resume)
        (local.set $i (i64.add (local.get $i) (i64.const 1)))
        (br $next)))
    (local.get $i)))"#;

/// Grows its memory by `count` pages and returns what memory.grow said.
const GROW: &str = r#"(module
  (memory 1)
  (func (export "run") (param i64 i64) (result i64)
    (i64.extend_i32_s (memory.grow (i32.wrap_i64 (local.get 0))))))"#;

fn sampler(compiler: Compiler, wat: &str, limits: Limits) -> Result<WasmerSampler> {
    let bytes = wat::parse_str(wat)?;
    let code = compile(&wasmtime::Engine::default(), Format::Module, &bytes)?;
    let guest = Guest {
        path: Path::new("test.wasm"),
        bytes: &bytes,
        code: Some(&code),
    };
    let seeds = Seeds::new(7, SeedRule::Same);
    Wasmer::new(compiler).instance(guest, "run", limits, seeds)
}

fn limits(max_memory_bytes: u64) -> Limits {
    Limits {
        max_memory_bytes,
        huge_pages: false,
    }
}

#[test]
fn run_gets_count_and_seed_and_setup_runs_first() -> Result<()> {
    for compiler in COMPILERS {
        let mut s = sampler(compiler, ADD, limits(MIB))?;
        s.setup(100)?;
        let sample = s.sample(5)?;
        assert_eq!(sample.checksum, 100 + 5 + 7, "{compiler:?}");
        assert_eq!(sample.pauses, 0);
        assert!(sample.elapsed_ns >= 0.0);
    }
    Ok(())
}

#[test]
fn pauses_are_counted_and_their_time_taken_out() -> Result<()> {
    for compiler in COMPILERS {
        let mut s = sampler(compiler, PAUSES, limits(MIB))?;
        let sample = s.sample(1000)?;
        assert_eq!(sample.checksum, 1000, "{compiler:?}");
        assert_eq!(sample.pauses, 1000, "{compiler:?}");
        assert_eq!(s.sample(3)?.pauses, 3, "counted per sample");
    }
    Ok(())
}

#[test]
fn growth_past_the_memory_limit_is_refused_and_peak_memory_kept() -> Result<()> {
    const PAGE: u64 = 64 * 1024;
    for compiler in COMPILERS {
        let mut s = sampler(compiler, GROW, limits(4 * PAGE))?;
        assert_eq!(s.peak_memory_bytes(), Some(PAGE));
        assert_eq!(s.sample(2)?.checksum, 1, "grown from 1 page");
        assert_eq!(s.peak_memory_bytes(), Some(3 * PAGE));
        assert_eq!(s.sample(2)?.checksum as i64, -1, "5 pages refused");
        assert_eq!(s.peak_memory_bytes(), Some(3 * PAGE));
        assert_eq!(s.sample(1)?.checksum, 3, "4 pages granted");
    }
    let error = sampler(Compiler::Singlepass, GROW, limits(PAGE / 2))
        .err()
        .context("a memory over the limit was made")?;
    assert!(
        format!("{error:#}").contains("over the --max-memory limit"),
        "{error:#}"
    );
    Ok(())
}

#[test]
fn table_growth_past_the_element_cap_is_refused() -> Result<()> {
    let wat = r#"(module
      (table 1 funcref)
      (func (export "run") (param i64 i64) (result i64)
        (i64.extend_i32_s (table.grow (ref.null func) (i32.wrap_i64 (local.get 0))))))"#;
    for compiler in COMPILERS {
        // A cap of 1 MiB / 8 = 131072 elements.
        let mut s = sampler(compiler, wat, limits(MIB))?;
        assert_eq!(s.sample(10)?.checksum, 1, "{compiler:?}");
        assert_eq!(s.sample(200_000)?.checksum as i64, -1, "{compiler:?}");
        assert_eq!(
            s.sample(131_061)?.checksum,
            11,
            "{compiler:?}: up to the cap"
        );
    }
    Ok(())
}

#[test]
fn traps_say_what_they_mean() -> Result<()> {
    let wat = r#"(module (func (export "run") (param i64 i64) (result i64) unreachable))"#;
    for compiler in COMPILERS {
        let error = sampler(compiler, wat, limits(MIB))?
            .sample(1)
            .err()
            .context("no trap")?;
        let text = format!("{error:#}");
        assert!(text.contains("`run` failed"), "{text}");
        assert!(text.contains("wasm `unreachable` executed"), "{text}");
    }
    Ok(())
}

#[test]
fn a_pause_left_open_fails_the_call() -> Result<()> {
    let wat = r#"(module (import "bench" "pause" (func $p))
      (func (export "run") (param i64 i64) (result i64) (call $p) (i64.const 0)))"#;
    let error = sampler(Compiler::Cranelift, wat, limits(MIB))?
        .sample(1)
        .err()
        .context("accepted")?;
    assert!(format!("{error:#}").contains("returned while paused"));
    Ok(())
}

#[test]
fn wasi_grants_nothing_and_a_misdeclared_import_is_refused() -> Result<()> {
    // environ_sizes_get's errno (0) and count (0), and 100 times the errno
    // of fd_prestat_get(3): 8 (EBADF), no folder is preopened.
    let wat = r#"(module
      (import "wasi_snapshot_preview1" "environ_sizes_get" (func $sizes (param i32 i32) (result i32)))
      (import "wasi_snapshot_preview1" "fd_prestat_get" (func $prestat (param i32 i32) (result i32)))
      (memory (export "memory") 1)
      (func (export "run") (param i64 i64) (result i64)
        (i64.add (i64.extend_i32_u (call $sizes (i32.const 0) (i32.const 4)))
          (i64.add (i64.load32_u (i32.const 0))
            (i64.mul (i64.const 100)
              (i64.extend_i32_u (call $prestat (i32.const 3) (i32.const 8))))))))"#;
    let mut granted = sampler(Compiler::Cranelift, wat, limits(MIB))?;
    assert_eq!(granted.sample(1)?.checksum, 800);
    let misdeclared = r#"(module
      (import "wasi_snapshot_preview1" "random_get" (func (param i32) (result i32)))
      (func (export "run") (param i64 i64) (result i64) (i64.const 0)))"#;
    let error = sampler(Compiler::Cranelift, misdeclared, limits(MIB))
        .err()
        .context("accepted")?;
    let text = format!("{error:#}");
    assert!(
        text.contains("not a function of WASI preview 1")
            && text.contains("wasi_snapshot_preview1.random_get"),
        "{text}"
    );
    Ok(())
}

#[test]
fn compiled_code_has_a_size_and_the_runner_boxes_it() -> Result<()> {
    for compiler in COMPILERS {
        let s = sampler(compiler, ADD, limits(MIB))?;
        assert!(s.code_bytes()? > 0, "{compiler:?}");
    }
    let bytes = wat::parse_str(ADD)?;
    let code = compile(&wasmtime::Engine::default(), Format::Module, &bytes)?;
    let guest = Guest {
        path: Path::new("test.wasm"),
        bytes: &bytes,
        code: Some(&code),
    };
    let runner: &dyn Runner = &Wasmer::new(Compiler::Singlepass);
    let runs =
        |format| crate::guest::runtime::runs(crate::options::Runtime::WasmerSinglepass, format);
    assert!(runs(Format::Module) && !runs(Format::Component));
    let mut boxed = runner.instantiate(guest, "run", limits(MIB), Seeds::same(1))?;
    assert_eq!(boxed.sample(2)?.checksum, 3);
    Ok(())
}
