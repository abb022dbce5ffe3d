//! Load workloads, check them against the contract, instantiate them, and
//! call them.
//!
//! A core module is a workload when it exports `run(i64, i64) -> i64` (or
//! several `run_<name>` functions of that type), optionally `setup(i64)`, and
//! imports nothing but `bench.pause` and `bench.resume` (both `() -> ()`).
//! The contract is written down once, in `wit/workload.wit` and README.md.
//!
//! This module owns the one timed region of the harness,
//! [`Instance::sample`]: two clock reads around one guest call. It does not
//! decide how often to call; that is [`crate::measure`]'s job.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use serde::Serialize;
use wasmtime::{
    Caller, Config, Engine, ExternType, FuncType, Linker, Module, OptLevel, Store, TypedFunc,
    ValType,
};

/// Module name of the timing-control imports.
pub const BENCH_MODULE: &str = "bench";
/// Export name of the (first) benchmark function.
pub const RUN_EXPORT: &str = "run";
/// Prefix of further benchmark functions: `run_<name>`.
pub const RUN_PREFIX: &str = "run_";
/// Export name of the optional set-up function.
pub const SETUP_EXPORT: &str = "setup";

/// The empty guest: the same exports as a workload, and no work. Its per-call
/// cost, measured through the very same path, is subtracted from every sample.
pub const EMPTY_GUEST_WAT: &str = r#"(module
  (func (export "setup") (param i64))
  (func (export "run") (param $count i64) (param $seed i64) (result i64)
    local.get $seed))"#;

/// Calls `bench.pause` then `bench.resume`, `count` times: calibrates the cost
/// of a pause/resume pair that stays inside the clock.
pub const PAUSE_PAIR_WAT: &str = r#"(module
  (import "bench" "pause" (func $pause))
  (import "bench" "resume" (func $resume))
  (func (export "run") (param $count i64) (param $seed i64) (result i64)
    (block $done
      (loop $again
        (br_if $done (i64.le_s (local.get $count) (i64.const 0)))
        (call $pause)
        (call $resume)
        (local.set $count (i64.sub (local.get $count) (i64.const 1)))
        (br $again)))
    local.get $seed))"#;

/// What kind of WebAssembly binary a workload is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Module,
    Component,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Module => "module",
            Kind::Component => "component",
        })
    }
}

/// Create the engine every workload is compiled with: Cranelift, optimised
/// for speed, no wasm backtraces (trap messages stay one line).
pub fn engine() -> Result<Engine> {
    let mut config = Config::new();
    config.cranelift_opt_level(OptLevel::Speed);
    config.wasm_backtrace_max_frames(None);
    Engine::new(&config).map_err(|e| anyhow!("creating the wasmtime engine: {e}"))
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
    /// Row name: `file` for `run`, `file:name` for `run_<name>`.
    pub name: String,
    /// The export to call.
    pub export: String,
}

/// A compiled workload that follows the contract.
pub struct Workload {
    pub path: PathBuf,
    pub kind: Kind,
    pub module: Module,
    pub benchmarks: Vec<Benchmark>,
    pub has_setup: bool,
    /// Whether it imports `bench.pause`/`bench.resume`.
    pub uses_pause: bool,
    /// Wall time of reading and compiling it, in ms.
    pub compile_ms: f64,
}

/// Read, compile and check one workload file.
pub fn load(engine: &Engine, path: &Path) -> Result<Workload> {
    let bytes = std::fs::read(path).map_err(|e| anyhow!("cannot read the file: {e}"))?;
    let start = Instant::now();
    let kind = detect(path, &bytes)?;
    if kind == Kind::Component {
        bail!(
            "is a WebAssembly component; this version measures core modules only (see wit/workload.wit for the contract)"
        );
    }
    let module =
        Module::new(engine, &bytes).map_err(|e| anyhow!("does not compile: {}", one_line(&e)))?;
    let compile_ms = start.elapsed().as_secs_f64() * 1e3;
    let contract = check_contract(&module, &workload_name(path))?;
    Ok(Workload {
        path: path.to_path_buf(),
        kind,
        module,
        benchmarks: contract.benchmarks,
        has_setup: contract.has_setup,
        uses_pause: contract.uses_pause,
        compile_ms,
    })
}

/// Compile a built-in guest written in WAT.
pub fn builtin(engine: &Engine, wat: &str) -> Result<Module> {
    Module::new(engine, wat).map_err(|e| anyhow!("compiling a built-in guest: {e}"))
}

/// Tell a core module from a component by the binary header; WAT text is a
/// module.
pub fn detect(path: &Path, bytes: &[u8]) -> Result<Kind> {
    if bytes.is_empty() {
        bail!("the file is empty");
    }
    if path.extension().and_then(|e| e.to_str()) == Some("wat") {
        return Ok(Kind::Module);
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

/// What a module offers under the contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contract {
    pub benchmarks: Vec<Benchmark>,
    pub has_setup: bool,
    pub uses_pause: bool,
}

/// Check a compiled module's imports and exports against the contract.
pub fn check_contract(module: &Module, file_name: &str) -> Result<Contract> {
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
        let (ExternType::Func(func), expected) =
            (&ty, if is_run { &run_type } else { &setup_type })
        else {
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
            let row = match name.strip_prefix(RUN_PREFIX) {
                Some(suffix) => format!("{file_name}:{suffix}"),
                None => file_name.to_string(),
            };
            benchmarks.push(Benchmark {
                name: row,
                export: name.to_string(),
            });
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
    })
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

/// Per-store state: the bookkeeping of `bench.pause`/`bench.resume`.
#[derive(Debug, Default)]
pub struct HostState {
    paused_since: Option<Instant>,
    paused: Duration,
    pauses: u64,
}

impl HostState {
    fn reset(&mut self) {
        self.paused_since = None;
        self.paused = Duration::ZERO;
        self.pauses = 0;
    }
}

/// The linker every workload is instantiated with: it provides the timing
/// imports and nothing else.
pub fn linker(engine: &Engine) -> Result<Linker<HostState>> {
    let mut linker = Linker::new(engine);
    linker.func_wrap(
        BENCH_MODULE,
        "pause",
        |mut caller: Caller<'_, HostState>| {
            let now = Instant::now();
            let state = caller.data_mut();
            if state.paused_since.is_some() {
                return Err(wasmtime::Error::msg(
                    "bench.pause called while already paused",
                ));
            }
            state.paused_since = Some(now);
            state.pauses += 1;
            Ok(())
        },
    )?;
    linker.func_wrap(
        BENCH_MODULE,
        "resume",
        |mut caller: Caller<'_, HostState>| {
            let state = caller.data_mut();
            let Some(since) = state.paused_since.take() else {
                return Err(wasmtime::Error::msg(
                    "bench.resume called without bench.pause",
                ));
            };
            let now = Instant::now();
            state.paused += now.duration_since(since);
            Ok(())
        },
    )?;
    Ok(linker)
}

/// One timed guest call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RawSample {
    /// Time between the two clock reads, less the time spent paused, in ns.
    pub elapsed_ns: f64,
    /// `bench.pause` calls during the sample.
    pub pauses: u64,
    /// What `run` returned.
    pub checksum: i64,
}

/// A live instance of a workload, ready to be sampled.
pub struct Instance {
    store: Store<HostState>,
    run: TypedFunc<(i64, i64), i64>,
    setup: Option<TypedFunc<i64, ()>>,
}

impl Instance {
    /// Instantiate `module` in a fresh store and look up `export`.
    pub fn new(linker: &Linker<HostState>, module: &Module, export: &str) -> Result<Self> {
        let mut store = Store::new(module.engine(), HostState::default());
        let instance = linker
            .instantiate(&mut store, module)
            .map_err(|e| anyhow!("instantiation failed: {}", one_line(&e)))?;
        let run = instance
            .get_typed_func::<(i64, i64), i64>(&mut store, export)
            .map_err(|e| anyhow!("export `{export}`: {}", one_line(&e)))?;
        let setup = match instance.get_func(&mut store, SETUP_EXPORT) {
            Some(func) => Some(
                func.typed::<i64, ()>(&store)
                    .map_err(|e| anyhow!("export `{SETUP_EXPORT}`: {}", one_line(&e)))?,
            ),
            None => None,
        };
        Ok(Instance { store, run, setup })
    }

    /// Call `setup(size)` if the module exports it (untimed).
    pub fn setup(&mut self, size: u64) -> Result<()> {
        if let Some(setup) = &self.setup {
            setup
                .call(&mut self.store, size as i64)
                .map_err(|e| anyhow!("`setup({size})` failed: {}", one_line(&e)))?;
        }
        Ok(())
    }

    /// Time one call of `run(count, seed)`. Nothing but the guest call sits
    /// between the two clock reads.
    #[inline(never)]
    pub fn sample(&mut self, count: u64, seed: u64) -> Result<RawSample> {
        self.store.data_mut().reset();
        let (count, seed) = (count as i64, seed as i64);
        let start = Instant::now();
        let result = self.run.call(&mut self.store, (count, seed));
        let end = Instant::now();
        let checksum = result.map_err(|e| anyhow!("`run` failed: {}", one_line(&e)))?;
        let state = self.store.data();
        if state.paused_since.is_some() {
            bail!("`run` returned while paused (bench.pause without bench.resume)");
        }
        let elapsed = end.duration_since(start).saturating_sub(state.paused);
        Ok(RawSample {
            elapsed_ns: elapsed.as_nanos() as f64,
            pauses: state.pauses,
            checksum: std::hint::black_box(checksum),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contract(wat: &str) -> Result<Contract> {
        let engine = engine()?;
        let module = Module::new(&engine, wat).map_err(|e| anyhow!("{e}"))?;
        check_contract(&module, "w")
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
    fn detection_by_header() {
        let path = Path::new("x.wasm");
        let detect_error = |bytes: &[u8]| match detect(path, bytes) {
            Ok(kind) => panic!("accepted as {kind}"),
            Err(e) => e.to_string(),
        };
        assert_eq!(detect(path, b"\0asm\x01\0\0\0").ok(), Some(Kind::Module));
        assert_eq!(
            detect(path, b"\0asm\x0d\0\x01\0").ok(),
            Some(Kind::Component)
        );
        assert_eq!(
            detect(Path::new("x.wat"), b"(module)").ok(),
            Some(Kind::Module)
        );
        assert!(detect_error(b"").contains("empty"));
        assert!(detect_error(b"hello world").contains("not a WebAssembly binary"));
        assert!(detect_error(b"\0asm").contains("not a WebAssembly binary"));
    }

    #[test]
    fn errors_fit_on_one_line() {
        let e = anyhow!("first\nsecond").context("outer");
        assert_eq!(one_line(&e), "outer: first; second");
    }
}
