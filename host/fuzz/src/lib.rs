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
    RUN_PREFIX, Workload,
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
    /// Compiled twice and follows the contract.
    Loaded(Kind),
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
            Outcome::Loaded(w.code.kind())
        }
        Err((kind, error)) => {
            // The kind is given back exactly when the header told it.
            assert_eq!(kind, detected, "error kind vs detect(): {error:#}");
            let text = format!("{error:#}");
            assert!(!text.is_empty(), "an empty error message");
            let line = workload::one_line(&error);
            assert!(!line.contains('\n'), "one_line() left a newline: {line:?}");
            match kind {
                None => Outcome::NotWasm,
                Some(kind) => Outcome::Rejected(kind),
            }
        }
    }
}

fn check_loaded(w: &Workload, path: &Path, detected: Option<Kind>) {
    let kind = w.code.kind();
    assert_eq!(Some(kind), detected, "loaded as {kind}, but detect() disagrees");
    assert_eq!(w.guarded.kind(), kind, "the guarded copy is of another kind");
    assert_eq!(w.path, path);
    assert!(
        w.compile_ms.is_finite() && w.compile_ms >= 0.0,
        "compile_ms = {}",
        w.compile_ms
    );
    let contract = &w.contract;
    assert!(!contract.benchmarks.is_empty(), "loaded without a benchmark");
    let stem = workload::workload_name(path);
    let prefix = match kind {
        Kind::Module => RUN_PREFIX,
        Kind::Component => COMPONENT_RUN_PREFIX,
    };
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
            contract.benchmarks[..i].iter().all(|o| o.export != b.export),
            "benchmark export {:?} listed twice",
            b.export
        );
    }
}
