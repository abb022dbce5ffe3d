//! Whether a guest's engine cannot run it: a proposal or a feature that
//! engine lacks (GC under winch), told apart from a guest that is broken or
//! a run that failed. The engines say so in their own errors; this module
//! reads them, in one place, and [`Unsupported`] carries the answer across
//! the worker's channel and up the parent's error chain.

use std::fmt;

/// An engine cannot run a guest: its words, as the error's message.
#[derive(Debug)]
pub struct Unsupported(pub String);

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unsupported {}

/// What the engines say when a module uses what they lack: wasmparser's
/// validator for a proposal the engine's configuration leaves off, winch
/// and Cranelift for what they do not compile, and the other runtimes'
/// own words.
const LACKING: &[&str] = &[
    // wasmparser (wasmtime, wasmi, wasmer): "array indexed types not
    // supported without the gc feature", "SIMD support is not enabled",
    // "tail calls support is not enabled", "gc proposal not enabled".
    "not supported without the",
    "support is not enabled",
    "proposal not enabled",
    // wasmtime's configuration check.
    "is not supported on this compiler configuration",
    // winch's code generator.
    "unimplemented wasm instruction",
    "unsupported wasm type",
    // V8, for a proposal behind a flag: "Unknown type code 0x5e, enable
    // with --experimental-wasm-gc".
    "enable with --experimental-wasm-",
];

/// Whether `error` says an engine cannot run the guest: an [`Unsupported`]
/// anywhere in its chain, or an engine's words for it.
pub fn lacking(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause.is::<Unsupported>() || {
            let text = cause.to_string().to_ascii_lowercase();
            LACKING.iter().any(|words| text.contains(words))
        }
    })
}

#[cfg(test)]
mod tests {
    use anyhow::anyhow;

    use super::*;

    #[test]
    fn an_engine_that_lacks_a_proposal_is_told_from_a_broken_guest() {
        let gc =
            anyhow!("array indexed types not supported without the gc feature (at offset 0xb)")
                .context("failed to parse WebAssembly module")
                .context("does not compile");
        assert!(lacking(&gc));
        let simd = anyhow!("SIMD support is not enabled (at offset 0x2a)");
        assert!(lacking(&simd));
        let v8 = anyhow!("CompileError: WebAssembly.Module(): Unknown type code 0x5e, enable with --experimental-wasm-gc @+11")
            .context("V8 does not compile it");
        assert!(lacking(&v8));
        let carried =
            anyhow::Error::new(Unsupported("gone through a worker".into())).context("bz2 (_start)");
        assert!(lacking(&carried));
        for broken in [
            "wasm trap: wasm `unreachable` instruction executed",
            "failed to parse WebAssembly module: unexpected end-of-file (at offset 0x8)",
            "type mismatch: expected i32, found i64 (at offset 0x40)",
            "did not return within --timeout 10s",
        ] {
            assert!(!lacking(&anyhow!("{broken}")), "{broken}");
        }
    }
}
