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
//!   `bench.resume` (both `() -> ()`) and WASI preview 1. A module that
//!   exports `run` is a workload even if it also exports `_start`, which is
//!   then never called (and such a command module may not import WASI: its
//!   C library would run uninitialised);
//! - workload, component: exports `run: func(count: u64, seed: u64) -> u64`
//!   (or several `run-<name>`), optionally `setup: func(size: u64)`, and
//!   imports nothing but the `wasm-bench:workload/timing` interface and
//!   WASI 0.2;
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
use wasmtime::Engine;
use wasmtime::component::types::{ComponentFunc, ComponentItem};
use wasmtime::component::{Component, Type};

use crate::guest::format::{Code, Format};
use toolchain::{Language, Toolchain, reactor_fix};

pub mod shape;
pub mod toolchain;

use shape::{Item, Shape, Signature};

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
/// Entry point of a WASI command (a program).
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
    /// Native code: a shared library's `run(count, seed)`, not sandboxed.
    Native,
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
            (Contract::Workload { .. }, Format::Native) => Kind::Native,
        }
    }
}

impl From<Format> for Kind {
    fn from(format: Format) -> Self {
        match format {
            Format::Module => Kind::Module,
            Format::Component => Kind::Component,
            Format::Native => Kind::Native,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Module => "module",
            Kind::Component => "component",
            Kind::Native => "native",
            Kind::Program => "program",
        })
    }
}

/// One benchmark function inside a workload file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Benchmark {
    /// Row name: `file` for `run`, `file:name` for `run_<name>`/`run-<name>`.
    pub name: String,
    /// The export to call.
    pub export: String,
}

/// The protocol a file follows, and what it offers under it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
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
        entry: String,
    },
}

impl Contract {
    /// The benchmarks a workload offers; a program is one, `_start`.
    pub fn benchmarks(&self) -> Vec<Benchmark> {
        match self {
            Contract::Workload { benchmarks, .. } => benchmarks.clone(),
            Contract::Program { name, entry } => vec![Benchmark {
                name: name.clone(),
                export: entry.clone(),
            }],
        }
    }
}

/// Check compiled code's imports and exports against the contract;
/// `bytes` is the binary it was compiled from, whose custom sections tell
/// the toolchain a refusal gives its fix for ([`toolchain`]).
pub fn check_contract(
    engine: &Engine,
    code: &Code,
    bytes: &[u8],
    file_name: &str,
) -> Result<Contract> {
    match code {
        Code::Module(module) => check_module(
            &Shape::of_module(module),
            &toolchain::read(bytes),
            file_name,
        ),
        Code::Component(component) => check_component(engine, component, file_name),
    }
}

/// Check the core module `bytes` against the contract without compiling
/// it, its imports and exports read by wasmparser: for a runtime other
/// than wasmtime, which compiles the file itself.
pub fn check_binary(bytes: &[u8], file_name: &str) -> Result<Contract> {
    check_module(&Shape::parse(bytes)?, &toolchain::read(bytes), file_name)
}

fn check_module(module: &Shape, toolchain: &Toolchain, file_name: &str) -> Result<Contract> {
    let is_run = |name: &str| name == RUN_EXPORT || name.starts_with(RUN_PREFIX);
    let exports_run = module.exports.iter().any(|(name, _)| is_run(name));
    if !exports_run && module.export(START_EXPORT).is_some() {
        return check_program(module, file_name);
    }
    refuse_command_wrappers(toolchain)?;
    let uses_pause = check_module_imports(module, toolchain)?;
    let unit = Signature::of(&[], &[]);
    let run_type = Signature::of(&["i64", "i64"], &["i64"]);
    let setup_type = Signature::of(&["i64"], &[]);
    match module.export(INITIALIZE_EXPORT) {
        None => {}
        Some(Item::Func(ty)) if *ty == unit => {}
        Some(other) => bail!(
            "export `{INITIALIZE_EXPORT}` has type {other}, expected () -> () (a WASI reactor's constructors)"
        ),
    }
    let mut benchmarks = Vec::new();
    let mut has_setup = false;
    for (name, item) in &module.exports {
        let run = is_run(name);
        if !run && name != SETUP_EXPORT {
            continue;
        }
        let expected = if run { &run_type } else { &setup_type };
        let Item::Func(func) = item else {
            bail!("export `{name}` is a {item}, expected a function");
        };
        if func != expected {
            bail!(
                "export `{name}` has type {func}, expected {expected}{}",
                if run {
                    run_types_hint(toolchain.language)
                } else {
                    ""
                }
            );
        }
        if run {
            benchmarks.push(benchmark(file_name, name, RUN_PREFIX));
        } else {
            has_setup = true;
        }
    }
    if benchmarks.is_empty() {
        bail!(
            "exports no `run(i64, i64) -> i64` function; it exports {}{}",
            list_exports(module),
            run_export_hint(toolchain.language)
        );
    }
    Ok(Contract::Workload {
        benchmarks,
        has_setup,
        uses_pause,
    })
}

/// A workload module's imports: `bench.pause`/`bench.resume` (`() -> ()`)
/// and WASI preview 1, which a command (`_start` beside `run`) may not
/// import. Whether it imports the timing controls.
fn check_module_imports(module: &Shape, toolchain: &Toolchain) -> Result<bool> {
    let unit = Item::Func(Signature::of(&[], &[]));
    let mut uses_pause = false;
    let fix = reactor_fix(toolchain.language);
    let is_command = module.export(START_EXPORT).is_some();
    for import in &module.imports {
        let qualified = format!("{}.{}", import.module, import.name);
        if import.module == WASI_P1_MODULE {
            if !is_command {
                continue;
            }
            bail!(
                "imports WASI (`{qualified}`) and exports `{START_EXPORT}` as well as `run`: a WASI \
                 command (made by {}), whose runtime or C library `{START_EXPORT}` would start; a \
                 module that exports `run` is measured as a `run(count, seed)` workload and \
                 `{START_EXPORT}` is never called, so it would run uninitialised: {fix} (or drop \
                 `run` to measure it as a program)",
                toolchain.language
            );
        }
        let is_timing =
            import.module == BENCH_MODULE && matches!(import.name.as_str(), "pause" | "resume");
        if !is_timing {
            bail!(
                "unknown import `{qualified}`: a workload may import only bench.pause, bench.resume \
                 and WASI preview 1{}",
                import_hint(&import.module, &import.name)
            );
        }
        match &import.item {
            item if *item == unit => uses_pause = true,
            other => bail!("import `{qualified}` has type {other}, expected () -> ()"),
        }
    }
    Ok(uses_pause)
}

/// Refuse a module whose benchmark or set-up export is a command-style
/// export wrapper (wasm-ld's `NAME.command_export`): it runs the C/C++
/// constructors and destructors on every call, inside the timed region.
fn refuse_command_wrappers(toolchain: &Toolchain) -> Result<()> {
    let wrapped = toolchain.command_wrappers.iter().find(|(export, _)| {
        export == RUN_EXPORT || export.starts_with(RUN_PREFIX) || export == SETUP_EXPORT
    });
    if let Some((export, wrapper)) = wrapped {
        bail!(
            "export `{export}` is the linker's command wrapper `{wrapper}`, which runs the \
             constructors (`__wasm_call_ctors`) and destructors on every call, inside the timed \
             region: {}",
            reactor_fix(toolchain.language)
        );
    }
    Ok(())
}

/// A WASI preview1 command: exports `_start: () -> ()`, imports only WASI
/// preview1 functions and `bench.start`/`bench.end` (`() -> ()`).
fn check_program(module: &Shape, file_name: &str) -> Result<Contract> {
    let unit = Item::Func(Signature::of(&[], &[]));
    for import in &module.imports {
        let qualified = format!("{}.{}", import.module, import.name);
        if import.module == WASI_P1_MODULE {
            continue;
        }
        if import.module != BENCH_MODULE || !matches!(import.name.as_str(), "start" | "end") {
            bail!(
                "unknown import `{qualified}`: a program may import only WASI preview1 and bench.start/bench.end"
            );
        }
        if import.item != unit {
            bail!(
                "import `{qualified}` has type {}, expected () -> ()",
                import.item
            );
        }
    }
    match module.export(START_EXPORT) {
        Some(item) if *item == unit => {}
        Some(other) => bail!("export `_start` has type {other}, expected () -> ()"),
        None => bail!("exports no `_start`"),
    }
    Ok(Contract::Program {
        name: file_name.to_string(),
        entry: START_EXPORT.to_string(),
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
        entry: COMMAND_ENTRY.to_string(),
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
        if name.starts_with("wasi:") && name.contains("@0.2.") {
            continue;
        }
        // Exactly this version of the timing interface (the one in wit/).
        if name != TIMING_INTERFACE {
            bail!(
                "imports `{name}`: a workload component targets the `wasm-bench:workload/workload` world and may import only `{TIMING_INTERFACE}` and WASI 0.2"
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

/// How the language a module came from spells `run`'s types (every
/// language's when the module does not say).
fn run_types_hint(language: Language) -> &'static str {
    match language {
        Language::C => " (64-bit integers: `int64_t run(int64_t count, int64_t seed)`, not `int`)",
        Language::Rust => " (64-bit integers: `extern \"C\" fn run(count: i64, seed: i64) -> i64`)",
        Language::Go => " (64-bit integers: `func run(count int64, seed int64) int64`)",
        Language::Zig => " (64-bit integers: `export fn run(count: i64, seed: i64) i64`)",
        Language::AssemblyScript => {
            " (64-bit integers: `export function run(count: i64, seed: i64): i64`)"
        }
        Language::Unknown => {
            " (64-bit integers: in C `int64_t run(int64_t count, int64_t seed)`, in Go `func \
             run(count int64, seed int64) int64`, in Zig `export fn run(count: i64, seed: i64) \
             i64`, in AssemblyScript `export function run(count: i64, seed: i64): i64`)"
        }
    }
}

/// How the language a module came from exports `run` at all (every
/// language's when the module does not say).
fn run_export_hint(language: Language) -> &'static str {
    match language {
        Language::C => {
            " (mark it `__attribute__((export_name(\"run\")))` and build a WASI reactor, \
             `-mexec-model=reactor`; `host new NAME --lang c` writes a working example)"
        }
        Language::Rust => {
            " (`#[unsafe(no_mangle)] pub extern \"C\" fn run` in a `cdylib` crate; `host new \
             NAME --lang rust` writes a working example)"
        }
        Language::Go => {
            " (`//go:wasmexport run` and `-buildmode=c-shared`; `host new NAME --lang go` writes \
             a working example)"
        }
        Language::Zig => {
            " (`export fn run` and `-fno-entry -rdynamic`; `host new NAME --lang zig` writes a \
             working example)"
        }
        Language::AssemblyScript => {
            " (`export function run` in the entry file; `host new NAME --lang assemblyscript` \
             writes a working example)"
        }
        Language::Unknown => {
            " (in C, mark it `__attribute__((export_name(\"run\")))` and build a WASI reactor, \
             `-mexec-model=reactor`; in Go, `//go:wasmexport run` and `-buildmode=c-shared`; in \
             Zig, `export fn` and `-fno-entry -rdynamic`; `host new NAME --lang \
             c|go|zig|assemblyscript` writes a working example)"
        }
    }
}

/// What to do about an import the contract refuses, when a toolchain is
/// known to add it.
fn import_hint(module: &str, name: &str) -> &'static str {
    match (module, name) {
        ("env", "abort") => {
            " (AssemblyScript's default: build with `--use abort=` to drop it; a failed \
             assertion then traps)"
        }
        ("env", "seed") => " (AssemblyScript's Math.random: seed it from `run`'s seed instead)",
        ("env", "trace") => " (AssemblyScript's trace(): remove the calls)",
        ("env", _) => " (a function the linker left undefined: define it, or link it in)",
        _ => "",
    }
}

/// Every export of `module` with its type, for an error message.
fn list_exports(module: &Shape) -> String {
    let exports: Vec<String> = module
        .exports
        .iter()
        .map(|(name, item)| format!("`{name}`: {item}"))
        .collect();
    match exports.is_empty() {
        true => "nothing".to_string(),
        false => exports.join(", "),
    }
}

#[cfg(test)]
mod tests;
