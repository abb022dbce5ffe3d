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
//! its [`CompiledProgram`]),
//! a variant of [`crate::options::Runtime`] (its `--engine` name), and an
//! arm in [`runner`]. This module does not decide how often to call; that
//! is [`crate::benchmark`]'s job.

pub mod native;
#[cfg(any(feature = "wasmi", feature = "wasmer"))]
mod pauses;
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
#[cfg(feature = "wasmi")]
pub mod wasmi;
#[cfg(feature = "wasmi")]
mod wasmi_program;
pub mod wasmtime;

use std::path::Path;

use anyhow::{Result, bail};

use crate::guest::engine::Engines;
use crate::guest::format::{Code, Format};
use crate::guest::limits::Limits;
use crate::guest::program::Iteration;
use crate::guest::seeds::Seeds;
use crate::options::Grants;
use crate::options::Runtime;

/// One timed guest call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RawSample {
    /// Time between the two clock reads, less the time spent paused, in ns.
    pub elapsed_ns: f64,
    /// Pauses during the sample.
    pub pauses: u64,
    /// What `run` returned.
    pub checksum: u64,
}

impl RawSample {
    /// The time of the call less the calibrated cost, `pair_ns`, of each of
    /// its pause/resume pairs, in ns.
    pub fn net_ns(&self, pair_ns: f64) -> f64 {
        self.elapsed_ns - self.pauses as f64 * pair_ns
    }
}

/// A workload instantiated under one runtime, ready to be sampled.
pub trait Sampler: Send {
    /// Call `setup(size)` if the workload exports it (untimed).
    fn setup(&mut self, size: u64) -> Result<()>;

    /// Time one call of `run(count, seed)` with the next seed of the
    /// instance's sequence: the seed is taken before the first clock read,
    /// and nothing but the guest call sits between the two reads.
    fn sample(&mut self, count: u64) -> Result<RawSample>;

    /// Start the seeds of the calls again from the first (see
    /// [`Seeds::restart`]).
    fn restart_seeds(&mut self);

    /// The most bytes of linear memory the instance has held so far, where
    /// the runtime tells.
    fn peak_memory_bytes(&mut self) -> Option<u64>;

    /// The size of the compiled code, where the runtime tells and the host
    /// did not see it (wasmer: its serialized module).
    fn code_bytes(&self) -> Option<u64> {
        None
    }

    /// The runtime's own compile of the guest, in ns, where it compiles
    /// the file itself and times it (V8, in its `node` process).
    fn compile_ns(&self) -> Option<f64> {
        None
    }

    /// The runtime's own instantiation, in ns, where it times it in a
    /// process of its own (V8): the worker's clock would count starting
    /// that process.
    fn instantiate_ns(&self) -> Option<f64> {
        None
    }
}

/// A guest to instantiate: the file's binary and wasmtime's compiled code of
/// it (which the host checked the contract on). A runtime uses one or the
/// other.
#[derive(Clone, Copy)]
pub struct Guest<'a> {
    pub path: &'a Path,
    pub bytes: &'a [u8],
    pub code: Option<&'a Code>,
}

/// One runtime, configured as one `--engine` asks: it instantiates guests.
pub trait Runner: Send + Sync {
    /// Instantiate `guest` under `limits` (running a reactor's
    /// `_initialize`), its calls to `export` seeded from `seeds`.
    fn instantiate(
        &self,
        guest: Guest<'_>,
        export: &str,
        limits: Limits,
        seeds: Seeds,
    ) -> Result<Box<dyn Sampler>>;

    /// Whether it runs guests of `format`.
    fn runs(&self, format: Format) -> bool;

    /// Compile the WASI command module `guest` (a program) to run fresh
    /// instances of it, granted `grants`, under `limits`.
    fn program(
        &self,
        guest: Guest<'_>,
        grants: &Grants,
        limits: Limits,
    ) -> Result<Box<dyn CompiledProgram>>;
}

/// A program compiled by one runtime: each iteration is a fresh instance,
/// with WASI preview 1 as its [`crate::guest::program::World`] says, its
/// `bench.start` and `bench.end` reading the clock (the runtime's own, in
/// its own process for V8), checked by
/// [`crate::guest::program::World::finish`].
pub trait CompiledProgram: Send {
    /// One fresh instance: instantiate, run, check the protocol, the exit
    /// code and the output.
    fn iterate(&self) -> Result<Iteration>;

    /// The peak resident memory of the process the iterations ran in: the
    /// worker's, unless the runtime has a process of its own.
    fn peak_rss_bytes(&self) -> Option<u64> {
        crate::platform::memory::peak_rss_bytes(None)
    }

    /// The size of the compiled code, as [`Sampler::code_bytes`].
    fn code_bytes(&self) -> Option<u64> {
        None
    }

    /// The runtime's own compile of the program, as
    /// [`Sampler::compile_ns`].
    fn compile_ns(&self) -> Option<f64> {
        None
    }
}

/// The runner of `engines`'s configuration: wasmtime's, or the runtime
/// `--engine` named.
pub fn runner(engines: &Engines) -> Result<Box<dyn Runner>> {
    Ok(match engines.config.runtime {
        Runtime::Wasmtime => Box::new(wasmtime::Wasmtime::new(engines)?),
        #[cfg(feature = "wasmi")]
        Runtime::Wasmi => Box::new(wasmi::Wasmi::new()?),
        #[cfg(not(feature = "wasmi"))]
        Runtime::Wasmi => bail!("{}", not_built("wasmi")),
        Runtime::V8 => Box::new(v8::V8::new()?),
        #[cfg(feature = "wasmer")]
        Runtime::Wasmer => Box::new(wasmer::Wasmer::new(wasmer::Compiler::Cranelift)),
        #[cfg(feature = "wasmer")]
        Runtime::WasmerSinglepass => Box::new(wasmer::Wasmer::new(wasmer::Compiler::Singlepass)),
        #[cfg(not(feature = "wasmer"))]
        Runtime::Wasmer | Runtime::WasmerSinglepass => bail!("{}", not_built("wasmer")),
    })
}

/// Why `runtime` cannot run a guest of `format` in this build or on this
/// machine, if it cannot: checked by the parent when it loads a file, so
/// that the row says so.
pub fn unavailable(runtime: Runtime, format: Format) -> Option<String> {
    let modules_only = (format != Format::Module)
        .then(|| format!("{} runs core modules only, not a {format}", runtime.name()));
    match runtime {
        Runtime::Wasmtime => None,
        #[cfg(feature = "wasmi")]
        Runtime::Wasmi => modules_only,
        #[cfg(not(feature = "wasmi"))]
        Runtime::Wasmi => Some(not_built("wasmi")),
        Runtime::V8 => modules_only.or_else(v8::missing),
        #[cfg(feature = "wasmer")]
        Runtime::Wasmer | Runtime::WasmerSinglepass => modules_only,
        #[cfg(not(feature = "wasmer"))]
        Runtime::Wasmer | Runtime::WasmerSinglepass => Some(not_built("wasmer")),
    }
}

/// Why a runtime behind a cargo feature is missing, and how to get it.
#[allow(dead_code)]
fn not_built(name: &str) -> String {
    format!(
        "this host is built without {name}: build it with `cargo build --release -p host --features all-engines` (or `--features {name}`)"
    )
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
pub fn check_available(runtime: Runtime, format: Format) -> Result<()> {
    match unavailable(runtime, format) {
        Some(why) => bail!("{why}"),
        None => Ok(()),
    }
}
