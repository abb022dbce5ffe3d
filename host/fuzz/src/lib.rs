//! Shared by the fuzz targets: one set of engines for the whole run, and the
//! checks made on every load.
//!
//! The targets only *load* (detect, compile, check the contract): guest code
//! is never instantiated or called, so an input that loops forever cannot
//! hang the fuzzer. Errors are fine; what the fuzzer looks for is a panic (or,
//! under AddressSanitizer, a memory error) in `host::guest::load::load_bytes`,
//! plus the few invariants below, which the host's callers rely on.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use host::guest::contract::{
    COMPONENT_RUN_PREFIX, Contract, Kind, RUN_EXPORT, RUN_PREFIX, START_EXPORT,
};
use host::guest::runtime::wasmtime::engine::Engines;
use host::guest::format::{Format, detect};
use host::guest::load::{LoadError, Workload, load_bytes, workload_name};
use host::options::{Compiler, EngineConfig, OptimizeFor};
use host::util::error::one_line;

/// How many engine configurations [`config`] knows.
pub const CONFIGS: usize = 4;

/// Engine configuration `i` (`0..CONFIGS`): 0 is the host's default
/// (Cranelift, opt-level speed), then Cranelift unoptimised, Winch and Pulley.
pub fn config(i: usize) -> EngineConfig {
    let with = |compiler, opt_level| EngineConfig {
        compiler,
        opt_level,
    };
    match i {
        0 => EngineConfig::default(),
        1 => with(Compiler::Cranelift, OptimizeFor::None),
        2 => with(Compiler::Winch, OptimizeFor::Speed),
        _ => with(Compiler::Pulley, OptimizeFor::Speed),
    }
}

/// The engines for configuration `i`, created once (creating them per input
/// would dominate the time), with no compilation cache (no disk I/O).
pub fn engines(i: usize) -> &'static Engines {
    static ENGINES: [OnceLock<Engines>; CONFIGS] = [const { OnceLock::new() }; CONFIGS];
    let i = i % CONFIGS;
    ENGINES[i].get_or_init(|| Engines::new(config(i), None).expect("creating the wasmtime engines"))
}

/// Whether `data` should take the text path (as a `.wat` file would): UTF-8
/// whose first non-blank character opens an s-expression or a comment
/// (fixtures start with `;;` comments).
pub fn looks_like_wat(data: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(data).ok()?;
    match text.trim_start().as_bytes().first() {
        Some(b'(') | Some(b';') => Some(text),
        _ => None,
    }
}

/// What one load gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Not a WebAssembly binary (no kind known).
    NotWasm,
    /// A module or component that did not compile or broke the contract.
    Rejected(Kind),
    /// Compiled and follows the contract (a `run` workload, or a WASI
    /// command: [`Kind::Program`]).
    Loaded(Kind),
}

/// Whether to print every outcome, to see what a target's inputs turn into:
/// `HOST_FUZZ_VERBOSE=1` prints error messages up to their first detail (so
/// alike ones group: `2>&1 | grep '^outcome' | sort | uniq -c`), `=full`
/// prints them whole.
fn verbose() -> Option<bool> {
    static VERBOSE: OnceLock<Option<bool>> = OnceLock::new();
    *VERBOSE.get_or_init(|| std::env::var_os("HOST_FUZZ_VERBOSE").map(|v| v.as_os_str() == "full"))
}

/// Load `bytes` as the workload file `file_name` (which must have a stem)
/// with the engines of configuration `engine` (see [`config`]), and check
/// the invariants of the answer.
pub fn load(engine: usize, file_name: &str, bytes: &[u8]) -> Outcome {
    let path = Path::new(file_name);
    let detected = detect(bytes).ok();
    let engines = engines(engine);
    match load_bytes(engines, path, Arc::from(bytes)) {
        Ok(w) => {
            assert_eq!(w.engine, engines.config, "compiled with another engine");
            check_loaded(&w, path, detected);
            if verbose().is_some() {
                eprintln!("outcome: loaded {} ({})", w.kind(), engines.config);
            }
            Outcome::Loaded(w.kind())
        }
        Err(LoadError { kind, error }) => {
            // The kind is given back exactly when the header told it.
            assert_eq!(
                kind,
                detected.map(Kind::from),
                "error kind vs detect(): {error:#}"
            );
            let text = format!("{error:#}");
            assert!(!text.is_empty(), "an empty error message");
            let line = one_line(&error);
            assert!(!line.contains('\n'), "one_line() left a newline: {line:?}");
            if let Some(full) = verbose() {
                let head = match full {
                    true => &line[..],
                    false => line.split(['`', ':']).next().unwrap_or_default(),
                };
                eprintln!("outcome: rejected {kind:?} ({}): {head}", engines.config);
            }
            match kind {
                None => Outcome::NotWasm,
                Some(kind) => Outcome::Rejected(kind),
            }
        }
    }
}

fn check_loaded(w: &Workload, path: &Path, detected: Option<Format>) {
    let format = w.code.format();
    assert_eq!(
        Some(format),
        detected,
        "compiled as a {format}, but detect() disagrees"
    );
    assert_eq!(w.format, format, "the workload's format is not its code's");
    assert_eq!(w.path, path);
    assert!(
        w.compile_ms.is_finite() && w.compile_ms >= 0.0,
        "compile_ms = {}",
        w.compile_ms
    );
    let stem = workload_name(path);
    let benchmarks = match &w.contract {
        Contract::Program { name } => {
            // A WASI command: one row, the file, calling `_start`.
            assert_eq!(w.kind(), Kind::Program);
            assert_eq!(
                format,
                Format::Module,
                "a program that is not a core module"
            );
            assert_eq!(name, &stem);
            let rows = w.contract.benchmarks();
            assert_eq!(rows.len(), 1);
            assert_eq!(rows[0].export, START_EXPORT);
            return;
        }
        Contract::Workload { benchmarks, .. } => benchmarks,
    };
    assert!(!benchmarks.is_empty(), "loaded without a benchmark");
    let prefix = match format {
        Format::Module => RUN_PREFIX,
        Format::Component => COMPONENT_RUN_PREFIX,
    };
    for (i, b) in benchmarks.iter().enumerate() {
        if b.export == RUN_EXPORT {
            assert_eq!(b.name, stem);
        } else {
            let suffix = b
                .export
                .strip_prefix(prefix)
                .unwrap_or_else(|| panic!("benchmark export {:?} is not run/{prefix}*", b.export));
            assert_eq!(b.name, format!("{stem}:{suffix}"));
        }
        assert!(
            benchmarks[..i].iter().all(|o| o.export != b.export),
            "benchmark export {:?} listed twice",
            b.export
        );
    }
}
