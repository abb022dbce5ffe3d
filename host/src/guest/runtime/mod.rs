//! The runtimes workloads and programs are measured under, behind one
//! seam: a [`Runner`] (one per `--engine`) instantiates a `run(count,
//! seed)` workload into a [`Sampler`], which the measuring sequence, the
//! calibration with the built-in guests, the comparisons and the hardware
//! counters call, and compiles a program into a [`CompiledProgram`], whose
//! iterations the program sequence runs. Each
//! sampler times its own calls: it takes the seed, reads the clock, calls
//! the guest's `run(count, seed)`, reads the clock again, and nothing else
//! sits between the two reads.
//!
//! wasmtime (Cranelift, Winch, Pulley) is [`wasmtime`]. Another runtime
//! plugs in with a file of its own here (a [`Runner`], its [`Sampler`] and
//! its [`CompiledProgram`], the traits of [`seam`]), a variant of
//! [`crate::options::Runtime`] with its line in
//! [`crate::options::ENGINES`] (its `--engine` name, aliases and cargo
//! feature), and an arm in [`runner`]. This module does not decide how often to call; that
//! is [`crate::benchmark`]'s job.

pub mod native;
#[cfg(any(feature = "wasmi", feature = "wasmer"))]
mod pauses;
pub mod seam;
pub mod v8;
mod v8_node;
mod v8_program;
mod v8_sandbox;
#[cfg(any(feature = "wasmi", feature = "wasmer"))]
pub mod wasi_p1;
#[cfg(feature = "wasmer")]
pub mod wasmer;
#[cfg(feature = "wasmer")]
mod wasmer_program;
#[cfg(feature = "wasmer")]
mod wasmer_store;
#[cfg(feature = "wasmi")]
pub mod wasmi;
#[cfg(feature = "wasmi")]
mod wasmi_program;
pub mod wasmtime;

use anyhow::{Result, bail};

pub use seam::{CompiledProgram, Guest, RawSample, Runner, Sampler};

use crate::guest::engine::Engines;
use crate::guest::format::Format;
use crate::options::Runtime;

/// The runner of `engines`'s configuration: wasmtime's, or the runtime
/// `--engine` named.
pub fn runner(engines: &Engines) -> Result<Box<dyn Runner>> {
    Ok(match engines.config.runtime {
        Runtime::Wasmtime => Box::new(wasmtime::Wasmtime::new(engines)?),
        #[cfg(feature = "wasmi")]
        Runtime::Wasmi => Box::new(wasmi::Wasmi::new()?),
        #[cfg(not(feature = "wasmi"))]
        Runtime::Wasmi => bail!("{}", not_built(Runtime::Wasmi)),
        Runtime::V8 => Box::new(v8::V8::new()?),
        #[cfg(feature = "wasmer")]
        Runtime::Wasmer => Box::new(wasmer::Wasmer::new(wasmer::Compiler::Cranelift)),
        #[cfg(feature = "wasmer")]
        Runtime::WasmerSinglepass => Box::new(wasmer::Wasmer::new(wasmer::Compiler::Singlepass)),
        #[cfg(not(feature = "wasmer"))]
        runtime @ (Runtime::Wasmer | Runtime::WasmerSinglepass) => bail!("{}", not_built(runtime)),
    })
}

/// Why `runtime` cannot run the guest `bytes`, of `format`, in this build
/// or on this machine, if it cannot: checked by the parent when it loads a
/// file, so that the row says so.
pub fn unavailable(runtime: Runtime, format: Format, bytes: &[u8]) -> Option<String> {
    let modules_only = (format != Format::Module)
        .then(|| format!("{} runs core modules only, not a {format}", runtime.name()));
    match runtime {
        Runtime::Wasmtime => None,
        #[cfg(feature = "wasmi")]
        Runtime::Wasmi => modules_only,
        #[cfg(not(feature = "wasmi"))]
        Runtime::Wasmi => Some(not_built(runtime)),
        Runtime::V8 => modules_only.or_else(v8::missing),
        #[cfg(feature = "wasmer")]
        Runtime::Wasmer => modules_only,
        #[cfg(feature = "wasmer")]
        Runtime::WasmerSinglepass => modules_only.or_else(|| wasmer::singlepass_refuses(bytes)),
        #[cfg(not(feature = "wasmer"))]
        Runtime::Wasmer | Runtime::WasmerSinglepass => {
            let _ = bytes;
            Some(not_built(runtime))
        }
    }
}

/// Why `runtime` is missing from this host, and how to get it, as the
/// list of engines says.
#[allow(dead_code)]
fn not_built(runtime: Runtime) -> String {
    runtime
        .entry()
        .not_built()
        .unwrap_or_else(|| format!("{} is not built into this host", runtime.name()))
}

/// The version of `runtime` that runs here, with what of its
/// configuration differs from its defaults: the crate's, or `node
/// --version` with V8's own.
pub fn version(runtime: Runtime) -> Option<String> {
    match runtime {
        Runtime::Wasmtime => Some(WASMTIME_VERSION.to_string()),
        #[cfg(feature = "wasmi")]
        Runtime::Wasmi => Some(format!(
            "{} (max recursion depth {}, value stack {} MiB)",
            wasmi::VERSION,
            wasmi::MAX_RECURSION_DEPTH,
            wasmi::MAX_STACK_BYTES >> 20
        )),
        #[cfg(not(feature = "wasmi"))]
        Runtime::Wasmi => None,
        Runtime::V8 => v8::version(),
        #[cfg(feature = "wasmer")]
        Runtime::Wasmer | Runtime::WasmerSinglepass => Some(wasmer::VERSION.to_string()),
        #[cfg(not(feature = "wasmer"))]
        Runtime::Wasmer | Runtime::WasmerSinglepass => None,
    }
}

/// The wasmtime crate's version the host is built with (the workspace's
/// `Cargo.toml` pins it).
pub const WASMTIME_VERSION: &str = "48.0.8";

/// [`unavailable`] as an error.
pub fn check_available(runtime: Runtime, format: Format, bytes: &[u8]) -> Result<()> {
    match unavailable(runtime, format, bytes) {
        Some(why) => bail!("{why}"),
        None => Ok(()),
    }
}
