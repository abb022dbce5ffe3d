//! Load workloads and check them against the contract.
//!
//! A workload is a core module or a component (told apart by the binary
//! header; `.wat` text is converted first). The contract is written down
//! once, in `wit/workload.wit` and README.md:
//! - core module: exports `run(i64, i64) -> i64` (or several
//!   `run_<name>`), optionally `setup(i64)`, and imports nothing but
//!   `bench.pause` and `bench.resume` (both `() -> ()`);
//! - component: exports `run: func(count: u64, seed: u64) -> u64` (or several
//!   `run-<name>`), optionally `setup: func(size: u64)`, and imports nothing
//!   but the `wasm-bench:workload/timing` interface.
//!
//! This module reads, compiles and checks; instantiating and calling is
//! [`crate::instance`]'s job.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use serde::Serialize;
use wasmtime::component::types::{ComponentFunc, ComponentItem};
use wasmtime::component::{Component, Type};
use wasmtime::{Config, Engine, ExternType, FuncType, Module, OptLevel, Strategy, ValType};

use crate::cache::{self, CacheOutcome};

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
/// Module name of WASI preview1 imports.
pub const WASI_P1_MODULE: &str = "wasi_snapshot_preview1";

/// What kind of WebAssembly binary a workload is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Module,
    Component,
    /// A WASI preview1 command (`_start`), timed by the Sightglass protocol.
    Program,
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

/// Which compiler turns wasm into code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Compiler {
    /// Cranelift, the optimising compiler (the default).
    Cranelift,
    /// Winch, the baseline compiler: fast to compile, slower code.
    Winch,
    /// Pulley, wasmtime's portable interpreter.
    Pulley,
}

/// Cranelift's optimisation level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OptimizeFor {
    None,
    Speed,
    SpeedAndSize,
}

/// How code is compiled: recorded in the report and part of cache keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct EngineConfig {
    pub compiler: Compiler,
    pub opt_level: OptimizeFor,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            compiler: Compiler::Cranelift,
            opt_level: OptimizeFor::Speed,
        }
    }
}

impl fmt::Display for EngineConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.compiler {
            Compiler::Cranelift => {
                let level = match self.opt_level {
                    OptimizeFor::None => "none",
                    OptimizeFor::Speed => "speed",
                    OptimizeFor::SpeedAndSize => "speed_and_size",
                };
                write!(f, "cranelift (opt-level {level})")
            }
            Compiler::Winch => f.write_str("winch"),
            Compiler::Pulley => f.write_str("pulley"),
        }
    }
}

impl EngineConfig {
    /// A short name for row suffixes: `cranelift`, `winch`, `pulley`.
    pub fn short_name(&self) -> &'static str {
        match self.compiler {
            Compiler::Cranelift => "cranelift",
            Compiler::Winch => "winch",
            Compiler::Pulley => "pulley",
        }
    }

    /// The wasmtime configuration: the compiler, components on, no wasm
    /// backtraces (trap messages stay one line), the default wasm stack limit
    /// (512 KiB): deep recursion ends in a stack-overflow trap.
    fn wasmtime(&self) -> Result<Config> {
        let mut config = Config::new();
        match self.compiler {
            Compiler::Cranelift => {
                config.strategy(Strategy::Cranelift);
                config.cranelift_opt_level(match self.opt_level {
                    OptimizeFor::None => OptLevel::None,
                    OptimizeFor::Speed => OptLevel::Speed,
                    OptimizeFor::SpeedAndSize => OptLevel::SpeedAndSize,
                });
            }
            Compiler::Winch => {
                config.strategy(Strategy::Winch);
            }
            Compiler::Pulley => {
                config
                    .target("pulley64")
                    .map_err(|e| anyhow!("the pulley interpreter is not available: {e}"))?;
            }
        }
        config.wasm_component_model(true);
        config.wasm_backtrace_max_frames(None);
        Ok(config)
    }
}

/// The engines workloads are compiled with, for one [`EngineConfig`].
///
/// Every workload is compiled twice: a *guarded* copy with epoch checks, which
/// a deadline can interrupt, runs everything that might not return (set-up,
/// warm-up, pilot); a *fast* copy without them takes the samples (see
/// [`crate::guard`]). Compiled code goes through the cache when one is given.
#[derive(Clone)]
pub struct Engines {
    pub config: EngineConfig,
    pub fast: Engine,
    pub guarded: Engine,
    pub cache: Option<PathBuf>,
}

impl Engines {
    pub fn new(config: EngineConfig, cache: Option<PathBuf>) -> Result<Self> {
        let create =
            |c: &Config| Engine::new(c).map_err(|e| anyhow!("creating the {config} engine: {e}"));
        let mut guarded = config.wasmtime()?;
        guarded.epoch_interruption(true);
        Ok(Engines {
            config,
            fast: create(&config.wasmtime()?)?,
            guarded: create(&guarded)?,
            cache,
        })
    }

    /// An engine with fuel counting (and epoch checks, for the deadline),
    /// for the deterministic instruction-count pass; never used for timing.
    pub fn fuel(&self) -> Result<Engine> {
        let mut config = self.config.wasmtime()?;
        config.consume_fuel(true);
        config.epoch_interruption(true);
        Engine::new(&config).map_err(|e| anyhow!("creating the wasmtime engine: {e}"))
    }

    /// Compile `bytes` of `kind` for `engine`, through the cache.
    fn compile(&self, engine: &Engine, kind: Kind, bytes: &[u8]) -> Result<(Code, CacheOutcome)> {
        match &self.cache {
            Some(folder) => {
                cache::load_or_compile(folder, engine, kind, bytes, || compile(engine, kind, bytes))
            }
            None => Ok((compile(engine, kind, bytes)?, CacheOutcome::Off)),
        }
    }
}

/// Expand the paths given on the command line: a folder stands for the
/// `.wasm` and `.wat` files directly inside it, in name order. A path that
/// does not exist is kept, so that loading it reports the error in its row.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(path)
                .with_context(|| format!("{}: cannot read the folder", path.display()))?
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && is_workload_file(p))
                .collect();
            if found.is_empty() {
                bail!(
                    "{}: the folder holds no .wasm or .wat files",
                    path.display()
                );
            }
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

fn is_workload_file(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("wasm") | Some("wat")
    )
}

/// The name of a workload: its file name without the extension.
pub fn workload_name(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// One benchmark function inside a workload file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Benchmark {
    /// Row name: `file` for `run`, `file:name` for `run_<name>`/`run-<name>`.
    pub name: String,
    /// The export to call.
    pub export: String,
}

impl Workload {
    /// Module, component or program.
    pub fn kind(&self) -> Kind {
        match self.contract.program {
            true => Kind::Program,
            false => self.code.kind(),
        }
    }
}

/// Compiled code of a workload.
#[derive(Clone)]
pub enum Code {
    Module(Module),
    Component(Component),
}

impl Code {
    pub fn kind(&self) -> Kind {
        match self {
            Code::Module(_) => Kind::Module,
            Code::Component(_) => Kind::Component,
        }
    }
}

/// A compiled workload that follows the contract.
pub struct Workload {
    pub path: PathBuf,
    /// The copy samples are taken with.
    pub code: Code,
    /// The copy with epoch checks, for everything that might not return.
    pub guarded: Code,
    pub contract: Contract,
    /// Wall time of compiling (or loading from the cache) the fast copy, in ms.
    pub compile_ms: f64,
    /// Where the fast copy came from.
    pub cache: CacheOutcome,
    /// The engine configuration it was compiled with.
    pub engine: EngineConfig,
}

/// What a workload offers under the contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contract {
    pub benchmarks: Vec<Benchmark>,
    pub has_setup: bool,
    /// Whether it imports the timing controls.
    pub uses_pause: bool,
    /// A WASI command (`_start`) rather than a `run` workload.
    pub program: bool,
}

/// Read, compile (twice: fast and guarded) and check one workload file. On
/// failure, the kind is returned when it was known.
pub fn load(engines: &Engines, path: &Path) -> Result<Workload, (Option<Kind>, anyhow::Error)> {
    let bytes = read_binary(path).map_err(|e| (None, e))?;
    load_bytes(engines, path, &bytes)
}

/// [`load`] for bytes already read (`.wat` already converted).
pub fn load_bytes(
    engines: &Engines,
    path: &Path,
    bytes: &[u8],
) -> Result<Workload, (Option<Kind>, anyhow::Error)> {
    let kind = detect(bytes).map_err(|e| (None, e))?;
    let start = Instant::now();
    let (code, cache) = engines
        .compile(&engines.fast, kind, bytes)
        .map_err(|e| (Some(kind), e))?;
    let compile_ms = start.elapsed().as_secs_f64() * 1e3;
    let contract =
        check_contract(&engines.fast, &code, &workload_name(path)).map_err(|e| (Some(kind), e))?;
    let (guarded, _) = engines
        .compile(&engines.guarded, kind, bytes)
        .map_err(|e| (Some(kind), e))?;
    Ok(Workload {
        path: path.to_path_buf(),
        code,
        guarded,
        contract,
        compile_ms,
        cache,
        engine: engines.config,
    })
}

/// Compile a workload file for one engine only (the fuel pass).
pub fn compile_file(engine: &Engine, path: &Path) -> Result<Code> {
    let bytes = read_binary(path)?;
    compile(engine, detect(&bytes)?, &bytes)
}

/// The file's bytes, with `.wat` text converted to binary.
pub fn read_binary(path: &Path) -> Result<Vec<u8>> {
    let bytes = std::fs::read(path).map_err(|e| anyhow!("cannot read the file: {e}"))?;
    if bytes.is_empty() {
        bail!("the file is empty");
    }
    if path.extension().and_then(|e| e.to_str()) == Some("wat") {
        let text =
            String::from_utf8(bytes).map_err(|_| anyhow!("the .wat file is not UTF-8 text"))?;
        return wat::parse_str(&text).map_err(|e| anyhow!("not valid WAT: {}", one_line(&e)));
    }
    Ok(bytes)
}

/// Tell a core module from a component by the binary header.
pub fn detect(bytes: &[u8]) -> Result<Kind> {
    if bytes.is_empty() {
        bail!("the file is empty");
    }
    if bytes.len() < 8 || &bytes[..4] != b"\0asm" {
        bail!("not a WebAssembly binary (no `\\0asm` header)");
    }
    // The 4 bytes after the magic: version 1 and layer 0 for a core module,
    // layer 1 for a component.
    match (bytes[6], bytes[7]) {
        (0, 0) => Ok(Kind::Module),
        (1, 0) => Ok(Kind::Component),
        _ => bail!("unknown WebAssembly binary layer"),
    }
}

fn compile(engine: &Engine, kind: Kind, bytes: &[u8]) -> Result<Code> {
    let code = match kind {
        Kind::Module | Kind::Program => Module::new(engine, bytes).map(Code::Module),
        Kind::Component => Component::new(engine, bytes).map(Code::Component),
    };
    code.map_err(|e| anyhow!("does not compile: {}", one_line(&e)))
}

/// Compile a built-in guest written in WAT (a module or a component).
pub fn builtin(engine: &Engine, wat: &str) -> Result<Code> {
    let bytes = wat::parse_str(wat).map_err(|e| anyhow!("a built-in guest: {e}"))?;
    let kind = detect(&bytes)?;
    compile(engine, kind, &bytes).context("compiling a built-in guest")
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
    for import in module.imports() {
        let qualified = format!("{}.{}", import.module(), import.name());
        let is_timing =
            import.module() == BENCH_MODULE && matches!(import.name(), "pause" | "resume");
        if !is_timing {
            bail!(
                "unknown import `{qualified}`: a workload may import only bench.pause and bench.resume"
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
    Ok(Contract {
        benchmarks,
        has_setup,
        uses_pause,
        program: false,
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
    Ok(Contract {
        benchmarks: vec![Benchmark {
            name: file_name.to_string(),
            export: START_EXPORT.to_string(),
        }],
        has_setup: false,
        uses_pause: false,
        program: true,
    })
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
        .any(|(name, _)| name.starts_with("wasi:cli/run"));
    if is_wasi_command {
        bail!(
            "is a WASI command component (exports wasi:cli/run); program workloads must be WASI preview1 command modules (build for wasm32-wasip1)"
        );
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
        for (func_name, func) in instance.exports(engine) {
            let ok = matches!(func_name, "pause" | "resume")
                && matches!(&func.ty, ComponentItem::ComponentFunc(f) if f.params().len() == 0 && f.results().len() == 0);
            if !ok {
                bail!(
                    "import `{name}` asks for `{func_name}`, which the timing interface does not have (it has pause: func() and resume: func())"
                );
            }
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
    Ok(Contract {
        benchmarks,
        has_setup,
        uses_pause,
        program: false,
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

/// An error's chain of causes on one line.
pub fn one_line(error: &dyn std::fmt::Display) -> String {
    let text = format!("{error:#}");
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compile WAT (a module or a component) and check its contract.
    fn contract(wat: &str) -> Result<Contract> {
        let engine = Engines::new(EngineConfig::default(), None)?.fast;
        let bytes = wat::parse_str(wat)?;
        let code = compile(&engine, detect(&bytes)?, &bytes)?;
        check_contract(&engine, &code, "w")
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
        let c = contract(&format!("(module {RUN})"))?;
        assert_eq!(
            c.benchmarks,
            vec![Benchmark {
                name: "w".into(),
                export: "run".into()
            }]
        );
        assert!(!c.has_setup && !c.uses_pause);
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
        let names: Vec<&str> = c.benchmarks.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["w:a", "w:b"]);
        assert!(c.has_setup && c.uses_pause);
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
    fn detection_by_header() -> Result<()> {
        let detect_error = |bytes: &[u8]| match detect(bytes) {
            Ok(kind) => panic!("accepted as {kind}"),
            Err(e) => e.to_string(),
        };
        assert_eq!(detect(b"\0asm\x01\0\0\0").ok(), Some(Kind::Module));
        assert_eq!(detect(b"\0asm\x0d\0\x01\0").ok(), Some(Kind::Component));
        assert_eq!(
            detect(&wat::parse_str("(component)")?).ok(),
            Some(Kind::Component)
        );
        assert_eq!(
            detect(&wat::parse_str("(module)")?).ok(),
            Some(Kind::Module)
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
        let names: Vec<&str> = c.benchmarks.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["w", "w:fast"]);
        assert!(c.has_setup && !c.uses_pause);
        let timing = r#"(import "wasm-bench:workload/timing@0.1.0" (instance (export "pause" (func)) (export "resume" (func))))"#;
        assert!(contract(&component(timing, LIFT_RUN))?.uses_pause);
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

    #[test]
    fn errors_fit_on_one_line() {
        let e = anyhow!("first\nsecond").context("outer");
        assert_eq!(one_line(&e), "outer: first; second");
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
