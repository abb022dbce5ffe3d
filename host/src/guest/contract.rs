//! The workload contract, written down once: every export and import name the
//! host knows, and the checks that say whether compiled code follows one of
//! the two protocols.
//!
//! The binary format ([`Format`], told by [`crate::guest::format`]) and the
//! protocol ([`Contract`]: a `run(count, seed)` workload or a WASI program)
//! are separate: a module or a component may follow either.
//! - workload, core module: exports `run(i64, i64) -> i64` (or several
//!   `run_<name>`), optionally `setup(i64)` and a WASI reactor's
//!   `_initialize: () -> ()`, and imports nothing but `bench.pause` and
//!   `bench.resume` (both `() -> ()`). A module that exports `run` is a
//!   workload even if it also exports `_start`, which is then never called;
//!
//! - workload, component: exports `run: func(count: u64, seed: u64) -> u64`
//!   (or several `run-<name>`), optionally `setup: func(size: u64)`, and
//!   imports nothing but the `wasm-bench:workload/timing` interface;
//! - program: a WASI preview1 command module (`_start`) that may import
//!   `bench.start` and `bench.end`, or a WASI preview 2 command component
//!   (exports `wasi:cli/run@0.2.x`) that may import a `bench` instance with
//!   `start` and `end`.
//!
//! `wit/workload.wit` and README.md say the same in words; a test holds the
//! WIT file against these checks. This module checks; it neither compiles
//! nor runs.

use std::fmt;

use anyhow::{Result, bail};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use wasmtime::component::types::{ComponentFunc, ComponentItem};
use wasmtime::component::{Component, Type};
use wasmtime::{Engine, ExternType, FuncType, Module, ValType};

use crate::guest::format::{Code, Format};

/// Core-module name of the timing-control imports.
pub const BENCH_MODULE: &str = "bench";
/// The timing-control interface a component may import.
pub const TIMING_INTERFACE: &str = "wasm-bench:workload/timing@0.1.0";
/// Export name of the (first) benchmark function.
pub const RUN_EXPORT: &str = "run";
/// Prefix of further benchmark functions: `run_<name>` in core modules.
pub const RUN_PREFIX: &str = "run_";
/// Prefix of further benchmark functions: `run-<name>` in components (WIT
/// names are kebab-case).
pub const COMPONENT_RUN_PREFIX: &str = "run-";
/// Export name of the optional set-up function.
pub const SETUP_EXPORT: &str = "setup";
/// Entry point of a WASI command (a program workload).
pub const START_EXPORT: &str = "_start";
/// A WASI reactor's constructors, run once per instance before `setup`.
pub const INITIALIZE_EXPORT: &str = "_initialize";
/// Export of a WASI preview 2 command component (`wasi:cli/run@0.2.x`).
pub const WASI_CLI_RUN: &str = "wasi:cli/run@0.2.";
/// What runs a command component, as rows name it.
pub const COMMAND_ENTRY: &str = "wasi:cli/run";
/// Module name of WASI preview1 imports.
pub const WASI_P1_MODULE: &str = "wasi_snapshot_preview1";

/// What a row is, as reports name it: the format for `run` workloads, and
/// `program` for WASI programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Module,
    Component,
    /// A WASI command (a preview1 module's `_start`, or a preview 2
    /// component's `wasi:cli/run`), timed by the Sightglass protocol.
    Program,
}

impl Kind {
    /// The kind of a file of `format` that follows `contract`.
    pub fn of(format: Format, contract: &Contract) -> Self {
        match (contract, format) {
            (Contract::Program { .. }, _) => Kind::Program,
            (Contract::Workload { .. }, Format::Module) => Kind::Module,
            (Contract::Workload { .. }, Format::Component) => Kind::Component,
        }
    }
}

impl From<Format> for Kind {
    fn from(format: Format) -> Self {
        match format {
            Format::Module => Kind::Module,
            Format::Component => Kind::Component,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Module => "module",
            Kind::Component => "component",
            Kind::Program => "program",
        })
    }
}

/// One benchmark function inside a workload file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Benchmark {
    /// Row name: `file` for `run`, `file:name` for `run_<name>`/`run-<name>`.
    pub name: String,
    /// The export to call.
    pub export: String,
}

/// The protocol a file follows, and what it offers under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Contract {
    /// `run(count, seed)` benchmarks, called by the host in a loop it times.
    Workload {
        benchmarks: Vec<Benchmark>,
        has_setup: bool,
        /// Whether it imports the timing controls (pause/resume).
        uses_pause: bool,
    },
    /// A WASI command that times itself with `bench.start`/`bench.end`.
    Program {
        /// Row name: the file's name.
        name: String,
        /// What runs it: `_start`, or `wasi:cli/run` for a component.
        entry: &'static str,
    },
}

impl Contract {
    /// The benchmarks a workload offers; a program is one, `_start`.
    pub fn benchmarks(&self) -> Vec<Benchmark> {
        match self {
            Contract::Workload { benchmarks, .. } => benchmarks.clone(),
            Contract::Program { name, entry } => vec![Benchmark {
                name: name.clone(),
                export: entry.to_string(),
            }],
        }
    }
}

/// Check compiled code's imports and exports against the contract.
pub fn check_contract(engine: &Engine, code: &Code, file_name: &str) -> Result<Contract> {
    match code {
        Code::Module(module) => check_module(module, file_name),
        Code::Component(component) => check_component(engine, component, file_name),
    }
}

fn check_module(module: &Module, file_name: &str) -> Result<Contract> {
    let exports_run = module
        .exports()
        .any(|e| e.name() == RUN_EXPORT || e.name().starts_with(RUN_PREFIX));
    if !exports_run && module.get_export(START_EXPORT).is_some() {
        return check_program(module, file_name);
    }
    let unit = || FuncType::new(module.engine(), [], []);
    let mut uses_pause = false;
    let also_start = match module.get_export(START_EXPORT) {
        Some(_) => format!(
            " (it also exports `{START_EXPORT}`, but a module that exports `run` is measured as a \
             `run(count, seed)` workload and `{START_EXPORT}` is never called: build it as a WASI \
             reactor, `-mexec-model=reactor`, or without `run` to measure it as a program)"
        ),
        None => String::new(),
    };
    for import in module.imports() {
        let qualified = format!("{}.{}", import.module(), import.name());
        let is_timing =
            import.module() == BENCH_MODULE && matches!(import.name(), "pause" | "resume");
        if !is_timing {
            bail!(
                "unknown import `{qualified}`: a workload may import only bench.pause and bench.resume{also_start}"
            );
        }
        match import.ty() {
            ExternType::Func(ty) if FuncType::eq(&ty, &unit()) => uses_pause = true,
            other => bail!(
                "import `{qualified}` has type {}, expected () -> ()",
                describe_extern(&other)
            ),
        }
    }

    let run_type = FuncType::new(
        module.engine(),
        [ValType::I64, ValType::I64],
        [ValType::I64],
    );
    let setup_type = FuncType::new(module.engine(), [ValType::I64], []);
    match module.get_export(INITIALIZE_EXPORT) {
        None => {}
        Some(ExternType::Func(ty)) if FuncType::eq(&ty, &unit()) => {}
        Some(other) => bail!(
            "export `{INITIALIZE_EXPORT}` has type {}, expected () -> () (a WASI reactor's constructors)",
            describe_extern(&other)
        ),
    }
    let mut benchmarks = Vec::new();
    let mut has_setup = false;
    for export in module.exports() {
        let name = export.name();
        let is_run = name == RUN_EXPORT || name.starts_with(RUN_PREFIX);
        if !is_run && name != SETUP_EXPORT {
            continue;
        }
        let ty = export.ty();
        let expected = if is_run { &run_type } else { &setup_type };
        let ExternType::Func(func) = &ty else {
            bail!(
                "export `{name}` is a {}, expected a function",
                describe_extern(&ty)
            );
        };
        if !FuncType::eq(func, expected) {
            bail!(
                "export `{name}` has type {}, expected {}",
                describe_func(func),
                describe_func(expected)
            );
        }
        if is_run {
            benchmarks.push(benchmark(file_name, name, RUN_PREFIX));
        } else {
            has_setup = true;
        }
    }
    if benchmarks.is_empty() {
        bail!("exports no `run(i64, i64) -> i64` function");
    }
    Ok(Contract::Workload {
        benchmarks,
        has_setup,
        uses_pause,
    })
}

/// A WASI preview1 command: exports `_start: () -> ()`, imports only WASI
/// preview1 functions and `bench.start`/`bench.end` (`() -> ()`).
fn check_program(module: &Module, file_name: &str) -> Result<Contract> {
    let unit = FuncType::new(module.engine(), [], []);
    for import in module.imports() {
        let qualified = format!("{}.{}", import.module(), import.name());
        if import.module() == WASI_P1_MODULE {
            continue;
        }
        if import.module() != BENCH_MODULE || !matches!(import.name(), "start" | "end") {
            bail!(
                "unknown import `{qualified}`: a program may import only WASI preview1 and bench.start/bench.end"
            );
        }
        match import.ty() {
            ExternType::Func(ty) if FuncType::eq(&ty, &unit) => {}
            other => bail!(
                "import `{qualified}` has type {}, expected () -> ()",
                describe_extern(&other)
            ),
        }
    }
    match module.get_export(START_EXPORT) {
        Some(ExternType::Func(ty)) if FuncType::eq(&ty, &unit) => {}
        Some(other) => bail!(
            "export `_start` has type {}, expected () -> ()",
            describe_extern(&other)
        ),
        None => bail!("exports no `_start`"),
    }
    Ok(Contract::Program {
        name: file_name.to_string(),
        entry: START_EXPORT,
    })
}

/// A WASI preview 2 command component: exports `wasi:cli/run@0.2.x` and
/// imports only WASI 0.2 interfaces and a `bench` instance with `start` and
/// `end` (`func()`).
fn check_command_component(
    engine: &Engine,
    component: &Component,
    file_name: &str,
) -> Result<Contract> {
    let ty = component.component_type();
    for (name, item) in ty.imports(engine) {
        if name.starts_with("wasi:") {
            if !name.contains("@0.2.") {
                bail!("imports `{name}`: a command component may import WASI 0.2 (preview 2) only");
            }
            continue;
        }
        if name != BENCH_MODULE {
            bail!(
                "unknown import `{name}`: a command component may import only WASI 0.2 and a `bench` instance (start, end)"
            );
        }
        let ComponentItem::ComponentInstance(instance) = item.ty else {
            bail!("import `bench` is not an instance");
        };
        if let Some(func_name) = stray_function(engine, &instance, &["start", "end"]) {
            bail!("import `bench` asks for `{func_name}`; it offers start: func() and end: func()");
        }
    }
    Ok(Contract::Program {
        name: file_name.to_string(),
        entry: COMMAND_ENTRY,
    })
}

/// The first export of an imported `instance` that is not one of `allowed`
/// as a `func()` taking and returning nothing, if any.
fn stray_function(
    engine: &Engine,
    instance: &wasmtime::component::types::ComponentInstance,
    allowed: &[&str],
) -> Option<String> {
    instance
        .exports(engine)
        .find(|(name, func)| {
            let unit = matches!(&func.ty, ComponentItem::ComponentFunc(f) if f.params().len() == 0 && f.results().len() == 0);
            !(allowed.contains(name) && unit)
        })
        .map(|(name, _)| name.to_string())
}

fn benchmark(file_name: &str, export: &str, prefix: &str) -> Benchmark {
    let name = match export.strip_prefix(prefix) {
        Some(suffix) => format!("{file_name}:{suffix}"),
        None => file_name.to_string(),
    };
    Benchmark {
        name,
        export: export.to_string(),
    }
}

fn check_component(engine: &Engine, component: &Component, file_name: &str) -> Result<Contract> {
    let ty = component.component_type();
    let mut uses_pause = false;
    let is_wasi_command = ty
        .exports(engine)
        .any(|(name, _)| name.starts_with(WASI_CLI_RUN));
    if is_wasi_command {
        return check_command_component(engine, component, file_name);
    }
    for (name, item) in ty.imports(engine) {
        // Exactly this version of the timing interface (the one in wit/).
        if name != TIMING_INTERFACE {
            bail!(
                "imports `{name}`: a workload component targets the `wasm-bench:workload/workload` world and may import only `{TIMING_INTERFACE}`"
            );
        }
        let ComponentItem::ComponentInstance(instance) = item.ty else {
            bail!("import `{name}` is not an interface");
        };
        if let Some(func_name) = stray_function(engine, &instance, &["pause", "resume"]) {
            bail!(
                "import `{name}` asks for `{func_name}`, which the timing interface does not have (it has pause: func() and resume: func())"
            );
        }
        uses_pause = true;
    }

    let mut benchmarks = Vec::new();
    let mut has_setup = false;
    for (name, item) in ty.exports(engine) {
        let is_run = name == RUN_EXPORT || name.starts_with(COMPONENT_RUN_PREFIX);
        if !is_run && name != SETUP_EXPORT {
            continue;
        }
        let ComponentItem::ComponentFunc(func) = &item.ty else {
            bail!("export `{name}` is not a function");
        };
        let (params, results): (&[Type], &[Type]) = if is_run {
            (&[Type::U64, Type::U64], &[Type::U64])
        } else {
            (&[Type::U64], &[])
        };
        if !component_func_is(func, params, results) {
            bail!(
                "export `{name}` has type {}, expected {}",
                describe_component_func(func),
                if is_run {
                    "func(count: u64, seed: u64) -> u64"
                } else {
                    "func(size: u64)"
                }
            );
        }
        if is_run {
            benchmarks.push(benchmark(file_name, name, COMPONENT_RUN_PREFIX));
        } else {
            has_setup = true;
        }
    }
    if benchmarks.is_empty() {
        bail!(
            "exports no `run: func(count: u64, seed: u64) -> u64` (the component does not target the wasm-bench:workload/workload world)"
        );
    }
    Ok(Contract::Workload {
        benchmarks,
        has_setup,
        uses_pause,
    })
}

fn component_func_is(func: &ComponentFunc, params: &[Type], results: &[Type]) -> bool {
    func.params().map(|(_, t)| t).eq(params.iter().cloned())
        && func.results().eq(results.iter().cloned())
        && !func.async_()
}

fn describe_component_func(func: &ComponentFunc) -> String {
    let params: Vec<String> = func
        .params()
        .map(|(n, t)| format!("{n}: {}", describe_type(&t)))
        .collect();
    let results: Vec<String> = func.results().map(|t| describe_type(&t)).collect();
    match results.len() {
        0 => format!("func({})", params.join(", ")),
        _ => format!("func({}) -> {}", params.join(", "), results.join(", ")),
    }
}

fn describe_type(ty: &Type) -> String {
    let text = format!("{ty:?}");
    text.split('(').next().unwrap_or(&text).to_lowercase()
}

fn describe_func(ty: &FuncType) -> String {
    let list = |types: &mut dyn Iterator<Item = ValType>| {
        types.map(|t| t.to_string()).collect::<Vec<_>>().join(", ")
    };
    let params = list(&mut ty.params());
    let results: Vec<ValType> = ty.results().collect();
    match results.len() {
        0 => format!("({params}) -> ()"),
        1 => format!("({params}) -> {}", results[0]),
        _ => format!("({params}) -> ({})", list(&mut results.into_iter())),
    }
}

fn describe_extern(ty: &ExternType) -> String {
    match ty {
        ExternType::Func(f) => describe_func(f),
        ExternType::Global(_) => "global".into(),
        ExternType::Table(_) => "table".into(),
        ExternType::Memory(_) => "memory".into(),
        ExternType::Tag(_) => "tag".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guest::engine::{Engines, compile};
    use crate::guest::format::detect;
    use crate::options::EngineConfig;
    use std::path::Path;

    /// Compile WAT (a module or a component) and check its contract.
    fn contract(wat: &str) -> Result<Contract> {
        let engine = Engines::new(EngineConfig::default(), None)?.fast;
        let bytes = wat::parse_str(wat)?;
        let code = compile(&engine, detect(&bytes)?, &bytes)?;
        check_contract(&engine, &code, "w")
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
            contract_error(
                r#"(module (func (export "run") (param i32) (result i32) local.get 0))"#
            )
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
        assert!(error.contains("unknown import `wasi_snapshot_preview1.proc_exit`"));
        assert!(error.contains("exports `_start`") && error.contains("-mexec-model=reactor"));
        Ok(())
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
    fn component_contract_violations_are_named() {
        assert!(
            contract_error(&component(
                r#"(import "wasi:cli/environment@0.2.0" (instance))"#,
                LIFT_RUN
            ))
            .contains("imports `wasi:cli/environment@0.2.0`")
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
}
