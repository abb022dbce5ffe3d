//! Shared by the fuzz targets: one set of engines for the whole run, and the
//! checks made on every load.
//!
//! The targets only *load* (detect, compile twice, check the contract): guest
//! code is never instantiated or called, so an input that loops forever cannot
//! hang the fuzzer. Errors are fine; what the fuzzer looks for is a panic (or,
//! under AddressSanitizer, a memory error) in `host::workload::load_bytes`,
//! plus the few invariants below, which the host's callers rely on.

use std::path::Path;
use std::sync::OnceLock;

use host::workload::{
    self, COMPONENT_RUN_PREFIX, Compiler, EngineConfig, Engines, Kind, OptimizeFor, RUN_EXPORT,
    RUN_PREFIX, START_EXPORT, Workload,
};

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
    /// Compiled twice and follows the contract (a `run` workload, or a WASI
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
    let detected = workload::detect(bytes).ok();
    let engines = engines(engine);
    match workload::load_bytes(engines, path, bytes) {
        Ok(w) => {
            assert_eq!(w.engine, engines.config, "compiled with another engine");
            check_loaded(&w, path, detected);
            if verbose().is_some() {
                eprintln!("outcome: loaded {} ({})", w.kind(), engines.config);
            }
            Outcome::Loaded(w.kind())
        }
        Err((kind, error)) => {
            // The kind is given back exactly when the header told it.
            assert_eq!(kind, detected, "error kind vs detect(): {error:#}");
            let text = format!("{error:#}");
            assert!(!text.is_empty(), "an empty error message");
            let line = workload::one_line(&error);
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

fn check_loaded(w: &Workload, path: &Path, detected: Option<Kind>) {
    let code_kind = w.code.kind();
    assert_eq!(
        Some(code_kind),
        detected,
        "compiled as a {code_kind}, but detect() disagrees"
    );
    assert_eq!(
        w.guarded.kind(),
        code_kind,
        "the guarded copy is of another kind"
    );
    assert_eq!(w.path, path);
    assert!(
        w.compile_ms.is_finite() && w.compile_ms >= 0.0,
        "compile_ms = {}",
        w.compile_ms
    );
    let contract = &w.contract;
    assert!(
        !contract.benchmarks.is_empty(),
        "loaded without a benchmark"
    );
    let stem = workload::workload_name(path);
    let prefix = match w.kind() {
        Kind::Program => {
            // A WASI command: one row, the file, calling `_start`.
            assert!(contract.program);
            assert_eq!(
                code_kind,
                Kind::Module,
                "a program that is not a core module"
            );
            assert_eq!(contract.benchmarks.len(), 1);
            assert_eq!(contract.benchmarks[0].name, stem);
            assert_eq!(contract.benchmarks[0].export, START_EXPORT);
            assert!(!contract.has_setup && !contract.uses_pause);
            return;
        }
        Kind::Module => RUN_PREFIX,
        Kind::Component => COMPONENT_RUN_PREFIX,
    };
    assert!(!contract.program);
    for (i, b) in contract.benchmarks.iter().enumerate() {
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
            contract.benchmarks[..i]
                .iter()
                .all(|o| o.export != b.export),
            "benchmark export {:?} listed twice",
            b.export
        );
    }
}
