//! Tests of the contract checks: what is accepted, and what each refusal
//! says.

use super::*;
use crate::guest::format::detect;
use crate::guest::runtime::wasmtime::engine::{Engines, compile};
use crate::options::EngineConfig;
use std::path::Path;

/// Compile WAT (a module or a component) and check its contract.
fn contract(wat: &str) -> Result<Contract> {
    let engine = Engines::new(EngineConfig::default(), None)?.fast;
    let bytes = wat::parse_str(wat)?;
    let code = compile(&engine, detect(&bytes)?, &bytes)?;
    check_contract(&engine, &code, &bytes, "w")
}

/// The benchmarks, set-up and pause flags of a workload contract.
fn parts(contract: &Contract) -> (Vec<Benchmark>, bool, bool) {
    match contract {
        Contract::Workload {
            benchmarks,
            has_setup,
            uses_pause,
        } => (benchmarks.clone(), *has_setup, *uses_pause),
        Contract::Program { .. } => panic!("a program: {contract:?}"),
    }
}

fn contract_error(wat: &str) -> String {
    match contract(wat) {
        Ok(c) => panic!("accepted: {c:?}"),
        Err(e) => format!("{e:#}"),
    }
}

const RUN: &str = r#"(func (export "run") (param i64 i64) (result i64) local.get 1)"#;

#[test]
fn a_plain_workload_follows_the_contract() -> Result<()> {
    let (benchmarks, has_setup, uses_pause) = parts(&contract(&format!("(module {RUN})"))?);
    assert_eq!(
        benchmarks,
        vec![Benchmark {
            name: "w".into(),
            export: "run".into()
        }]
    );
    assert!(!has_setup && !uses_pause);
    Ok(())
}

#[test]
fn setup_pause_and_several_benchmarks() -> Result<()> {
    let c = contract(
        r#"(module
            (import "bench" "pause" (func))
            (import "bench" "resume" (func))
            (memory (export "memory") 1)
            (func (export "setup") (param i64))
            (func (export "run_a") (param i64 i64) (result i64) local.get 0)
            (func (export "run_b") (param i64 i64) (result i64) local.get 1))"#,
    )?;
    let (benchmarks, has_setup, uses_pause) = parts(&c);
    let names: Vec<&str> = benchmarks.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["w:a", "w:b"]);
    assert!(has_setup && uses_pause);
    Ok(())
}

#[test]
fn contract_violations_are_named() {
    assert!(contract_error("(module)").contains("exports no `run(i64, i64) -> i64`"));
    assert!(
        contract_error(r#"(module (func (export "run") (param i32) (result i32) local.get 0))"#)
            .contains("export `run` has type (i32) -> i32, expected (i64, i64) -> i64")
    );
    assert!(
        contract_error(&format!(
            r#"(module {RUN} (func (export "setup") (param i32)))"#
        ))
        .contains("export `setup` has type (i32) -> (), expected (i64) -> ()")
    );
    assert!(
        contract_error(&format!(r#"(module (import "env" "foo" (func)) {RUN})"#))
            .contains("unknown import `env.foo`")
    );
    assert!(
        contract_error(&format!(
            r#"(module (import "bench" "pause" (func (param i32))) {RUN})"#
        ))
        .contains("import `bench.pause` has type (i32) -> (), expected () -> ()")
    );
    assert!(
        contract_error(r#"(module (global (export "run") i64 (i64.const 0)))"#)
            .contains("export `run` is a global")
    );
}

#[test]
fn a_reactor_and_a_module_with_start_and_run_are_workloads() -> Result<()> {
    let reactor = format!(r#"(module (func (export "_initialize")) {RUN})"#);
    assert_eq!(parts(&contract(&reactor)?).0.len(), 1);
    let both = format!(r#"(module (func (export "_start") unreachable) {RUN})"#);
    assert_eq!(parts(&contract(&both)?).0.len(), 1);
    assert!(
        contract_error(&format!(
            r#"(module (func (export "_initialize") (param i32)) {RUN})"#
        ))
        .contains("export `_initialize` has type (i32) -> (), expected () -> ()")
    );
    // WASI imports with `_start` and `run`: refused, naming `_start`.
    let wasi = format!(
        r#"(module (import "wasi_snapshot_preview1" "proc_exit" (func (param i32)))
            (func (export "_start")) {RUN})"#
    );
    let error = contract_error(&wasi);
    assert!(
        error.contains("imports WASI (`wasi_snapshot_preview1.proc_exit`)"),
        "{error}"
    );
    assert!(!error.contains("unknown"), "{error}");
    assert!(error.contains("exports `_start`") && error.contains("-mexec-model=reactor"));
    // The fix is the producer's language's: Go's build mode for Go.
    let go = wasi.replace(
        "(module",
        r#"(module (@producers (language "Go" "go1.27"))"#,
    );
    let error = contract_error(&go);
    assert!(error.contains("-buildmode=c-shared"), "{error}");
    assert!(!error.contains("-mexec-model"), "{error}");
    Ok(())
}

#[test]
fn a_command_export_wrapper_is_refused_with_the_reactor_fix() {
    let wrapped = r#"(module
        (@producers (language "C99" "") (processed-by "clang" "14"))
        (func $run (param i64 i64) (result i64) local.get 0)
        (func $__wasm_call_ctors)
        (func $run.command_export (param i64 i64) (result i64)
            call $__wasm_call_ctors local.get 0 local.get 1 call $run)
        (export "run" (func $run.command_export)))"#;
    let error = contract_error(wrapped);
    for words in [
        "export `run` is the linker's command wrapper `run.command_export`",
        "-mexec-model=reactor",
    ] {
        assert!(error.contains(words), "{words:?} not in: {error}");
    }
}

#[test]
fn detection_by_header() -> Result<()> {
    let detect_error = |bytes: &[u8]| match detect(bytes) {
        Ok(kind) => panic!("accepted as {kind}"),
        Err(e) => e.to_string(),
    };
    assert_eq!(detect(b"\0asm\x01\0\0\0").ok(), Some(Format::Module));
    assert_eq!(detect(b"\0asm\x0d\0\x01\0").ok(), Some(Format::Component));
    assert_eq!(
        detect(&wat::parse_str("(component)")?).ok(),
        Some(Format::Component)
    );
    assert_eq!(
        detect(&wat::parse_str("(module)")?).ok(),
        Some(Format::Module)
    );
    assert!(detect_error(b"").contains("empty"));
    assert!(detect_error(b"hello world").contains("not a WebAssembly binary"));
    assert!(detect_error(b"\0asm").contains("not a WebAssembly binary"));
    Ok(())
}

/// A component exporting `exports` (WAT items using core instance `$i`,
/// whose module has `run` (i64, i64) -> i64 and `setup` (i64)).
fn component(imports: &str, exports: &str) -> String {
    format!(
        r#"(component {imports}
            (core module $m
              (func (export "run") (param i64 i64) (result i64) local.get 1)
              (func (export "setup") (param i64))
              (func (export "narrow") (param i32) (result i32) local.get 0))
            (core instance $i (instantiate $m))
            {exports})"#
    )
}

const LIFT_RUN: &str = r#"(func (export "run") (param "count" u64) (param "seed" u64) (result u64) (canon lift (core func $i "run")))"#;

#[test]
fn components_follow_the_wit_contract() -> Result<()> {
    let c = contract(&component(
        "",
        &format!(
            r#"{LIFT_RUN}
            (func (export "run-fast") (param "count" u64) (param "seed" u64) (result u64) (canon lift (core func $i "run")))
            (func (export "setup") (param "size" u64) (canon lift (core func $i "setup")))"#
        ),
    ))?;
    let (benchmarks, has_setup, uses_pause) = parts(&c);
    let names: Vec<&str> = benchmarks.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["w", "w:fast"]);
    assert!(has_setup && !uses_pause);
    let timing = r#"(import "wasm-bench:workload/timing@0.1.0" (instance (export "pause" (func)) (export "resume" (func))))"#;
    assert!(parts(&contract(&component(timing, LIFT_RUN))?).2);
    Ok(())
}

#[test]
fn workloads_may_import_wasi() -> Result<()> {
    let module = format!(
        r#"(module
            (import "wasi_snapshot_preview1" "clock_time_get" (func (param i32 i64 i32) (result i32)))
            {RUN})"#
    );
    assert_eq!(parts(&contract(&module)?).0.len(), 1);
    let wasi = r#"(import "wasi:cli/environment@0.2.0" (instance))"#;
    assert_eq!(parts(&contract(&component(wasi, LIFT_RUN))?).0.len(), 1);
    Ok(())
}

#[test]
fn refusals_name_the_fix() {
    let abort = contract_error(&format!(
        r#"(module (import "env" "abort" (func (param i32 i32 i32 i32))) {RUN})"#
    ));
    assert!(abort.contains("--use abort="), "{abort}");
    let narrow = contract_error(
        r#"(module (func (export "run") (param i32 i32) (result i32) local.get 1))"#,
    );
    assert!(
        narrow.contains("int64_t run(int64_t count, int64_t seed)"),
        "{narrow}"
    );
    let hidden = contract_error(
        r#"(module (memory (export "memory") 1) (func (export "compute") (param i32) (result i32) local.get 0))"#,
    );
    assert!(
        hidden.contains("`memory`: memory, `compute`: (i32) -> i32"),
        "{hidden}"
    );
    assert!(hidden.contains("export_name"), "{hidden}");
}

#[test]
fn component_contract_violations_are_named() {
    assert!(
        contract_error(&component(
            r#"(import "other:cli/environment@0.2.0" (instance))"#,
            LIFT_RUN
        ))
        .contains("imports `other:cli/environment@0.2.0`")
    );
    assert!(
        contract_error(&component(
            r#"(import "wasi:cli/environment@0.3.0" (instance))"#,
            LIFT_RUN
        ))
        .contains("and WASI 0.2")
    );
    assert!(
        contract_error(&component(
            r#"(import "wasm-bench:workload/timing@0.1.0" (instance (export "sleep" (func))))"#,
            LIFT_RUN
        ))
        .contains("`sleep`")
    );
    assert!(
        contract_error(&component("", ""))
            .contains("exports no `run: func(count: u64, seed: u64) -> u64`")
    );
    assert!(
        contract_error(&component(
            "",
            r#"(func (export "run") (param "x" u32) (result u32) (canon lift (core func $i "narrow")))"#
        ))
        .contains("export `run` has type func(x: u32) -> u32, expected func(count: u64, seed: u64) -> u64")
    );
}

/// The WIT file is the contract: it must say what the host checks.
#[test]
fn the_wit_world_matches_what_the_host_checks() -> Result<()> {
    use wit_parser::{Resolve, Type as WitType, WorldItem};
    let wit = Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit");
    let mut resolve = Resolve::default();
    let (package, _) = resolve.push_dir(&wit)?;
    let world = &resolve.worlds[resolve.select_world(&[package], Some("workload"))?];

    let imports: Vec<String> = world
        .imports
        .iter()
        .map(|(key, item)| match item {
            WorldItem::Interface { id, .. } => resolve
                .id_of(*id)
                .unwrap_or_else(|| resolve.name_world_key(key)),
            _ => resolve.name_world_key(key),
        })
        .collect();
    assert_eq!(imports, [TIMING_INTERFACE]);
    let Some((_, WorldItem::Interface { id, .. })) = world.imports.first() else {
        panic!("the timing import is not an interface");
    };
    let timing: Vec<(&str, usize, bool)> = resolve.interfaces[*id]
        .functions
        .values()
        .map(|f| (f.name.as_str(), f.params.len(), f.result.is_some()))
        .collect();
    assert_eq!(timing, [("pause", 0, false), ("resume", 0, false)]);

    let exports: Vec<(String, Vec<WitType>, Option<WitType>)> = world
        .exports
        .iter()
        .map(|(key, item)| match item {
            WorldItem::Function(f) => (
                resolve.name_world_key(key),
                f.params.iter().map(|p| p.ty).collect(),
                f.result,
            ),
            _ => panic!("export {} is not a function", resolve.name_world_key(key)),
        })
        .collect();
    assert_eq!(
        exports,
        [
            (SETUP_EXPORT.to_string(), vec![WitType::U64], None),
            (
                RUN_EXPORT.to_string(),
                vec![WitType::U64, WitType::U64],
                Some(WitType::U64)
            ),
        ]
    );
    Ok(())
}

#[test]
fn a_refusal_gives_the_fix_in_the_producers_language() {
    let narrow_go = r#"(module (@producers (language "Go" "go1.27"))
        (func (export "run") (param i32 i32) (result i32) local.get 0))"#;
    let error = contract_error(narrow_go);
    assert!(
        error.contains("func run(count int64, seed int64) int64"),
        "{error}"
    );
    assert!(!error.contains("int64_t"), "{error}");
    let hidden_c = r#"(module (@producers (processed-by "clang" "14")) (func (export "go")))"#;
    let error = contract_error(hidden_c);
    assert!(error.contains("-mexec-model=reactor"), "{error}");
    assert!(!error.contains("wasmexport"), "{error}");
}
