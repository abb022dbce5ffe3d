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
//! Each runtime has a folder (or a file) of its own here and one line in
//! [`implementations`], its [`Implementation`]: how to make its runner,
//! which guests it refuses and why, and its version. wasmtime (Cranelift,
//! Winch, Pulley) is [`wasmtime`]. A new runtime is a folder here (its
//! [`Runner`], [`Sampler`] and [`CompiledProgram`], the traits of
//! [`seam`]), its line in [`implementations`], its line in
//! [`crate::options::ENGINES`] (its `--engine` name, aliases and cargo
//! feature) with its variant of [`crate::options::Runtime`], and its cargo
//! feature. This module does not decide how often to call; that is
//! [`crate::benchmark`]'s job.

pub mod native;
#[cfg(feature = "embedded")]
mod pauses;
pub mod seam;
#[cfg(feature = "tinywasm")]
pub mod tinywasm;
pub mod v8;
#[cfg(feature = "wasi-p1")]
pub mod wasi_p1;
#[cfg(feature = "wasmer")]
pub mod wasmer;
#[cfg(feature = "wasmi")]
pub mod wasmi;
pub mod wasmtime;

use anyhow::{Result, anyhow, bail};

pub use seam::{CompiledProgram, Guest, RawSample, Runner, Sampler};

use crate::guest::format::Format;
use crate::guest::runtime::wasmtime::engine::Engines;
use crate::guest::support::Unsupported;
use crate::options::Runtime;

/// One runtime built into the host: its line of the registry.
pub struct Implementation {
    /// Which `--engine` runtime it is.
    pub runtime: Runtime,
    /// Its runner, configured as `engines` says.
    pub runner: fn(&Engines) -> Result<Box<dyn Runner>>,
    /// Whether it runs core modules only (no components).
    pub modules_only: bool,
    /// What of the core module `bytes` it cannot run, if anything, beyond
    /// the format: SIMD under wasmer's single-pass compiler.
    pub lacks: fn(&[u8]) -> Option<String>,
    /// Why it cannot run anything on this machine, if it cannot: no `node`.
    pub refuses: fn() -> Option<String>,
    /// Its version, with what of its configuration differs from its
    /// defaults.
    pub version: fn() -> Option<String>,
}

/// The registry: every runtime built into this host.
#[allow(unused_mut)]
pub fn implementations() -> Vec<&'static Implementation> {
    let mut all = vec![&wasmtime::IMPLEMENTATION, &v8::IMPLEMENTATION];
    #[cfg(feature = "wasmi")]
    all.push(&wasmi::IMPLEMENTATION);
    #[cfg(feature = "wasmer")]
    all.extend([&wasmer::CRANELIFT, &wasmer::SINGLEPASS]);
    #[cfg(feature = "tinywasm")]
    all.push(&tinywasm::IMPLEMENTATION);
    all
}

/// `runtime`'s line of the registry, or why it is not built in.
fn implementation(runtime: Runtime) -> Result<&'static Implementation, String> {
    implementations()
        .into_iter()
        .find(|i| i.runtime == runtime)
        .ok_or_else(|| not_built(runtime))
}

/// The runner of `engines`'s configuration: wasmtime's, or the runtime
/// `--engine` named.
pub fn runner(engines: &Engines) -> Result<Box<dyn Runner>> {
    match implementation(engines.config.runtime) {
        Ok(implementation) => (implementation.runner)(engines),
        Err(why) => bail!("{why}"),
    }
}

/// Whether `runtime`, built in, runs WebAssembly guests of `format`.
pub fn runs(runtime: Runtime, format: Format) -> bool {
    implementation(runtime).is_ok_and(|i| !i.modules_only || format == Format::Module)
}

/// Why `runtime` is missing from this host, and how to get it, as the
/// list of engines says.
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
    implementation(runtime).ok().and_then(|i| (i.version)())
}

/// Whether `runtime` can run the guest `bytes`, of `format`, in this build
/// and on this machine: checked by the parent when it loads a file, so
/// that the row says why not. A guest the runtime cannot run (a component
/// under a runtime of core modules, SIMD under wasmer-singlepass) is an
/// [`Unsupported`] error; a runtime not built in or missing its `node` is
/// a plain one.
pub fn check_available(runtime: Runtime, format: Format, bytes: &[u8]) -> Result<()> {
    let implementation = implementation(runtime).map_err(|why| anyhow!(why))?;
    if implementation.modules_only && format != Format::Module {
        let why = format!("{} runs core modules only, not a {format}", runtime.name());
        return Err(Unsupported(why).into());
    }
    if let Some(why) = (implementation.lacks)(bytes) {
        return Err(Unsupported(why).into());
    }
    match (implementation.refuses)() {
        Some(why) => bail!("{why}"),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each runtime's version is the one the lock file holds, read at
    /// build time: a version, not a placeholder.
    #[test]
    fn versions_are_read_from_the_lock_file() {
        let versions = [
            wasmtime::VERSION,
            #[cfg(feature = "wasmer")]
            wasmer::VERSION,
            #[cfg(feature = "wasmi")]
            wasmi::VERSION,
            #[cfg(feature = "tinywasm")]
            tinywasm::VERSION,
        ];
        for version in versions {
            assert!(semver::Version::parse(version).is_ok(), "{version}");
        }
    }

    /// A runtime of core modules cannot run a component: the guest is
    /// unsupported there, not broken; a core module is run.
    #[cfg(feature = "wasmer")]
    #[test]
    fn a_component_under_a_runtime_of_core_modules_is_unsupported() {
        let error = check_available(Runtime::Wasmer, Format::Component, b"")
            .expect_err("wasmer runs no component");
        assert!(crate::guest::lacking(&error), "{error:#}");
        assert!(check_available(Runtime::Wasmer, Format::Module, b"\0asm\x01\0\0\0").is_ok());
    }

    /// Each runtime has one line of the registry, and every runtime the
    /// list of engines says is built in has one.
    #[test]
    fn the_registry_holds_each_built_in_runtime_once() {
        let all = implementations();
        for (i, implementation) in all.iter().enumerate() {
            let runtime = implementation.runtime;
            assert!(all[..i].iter().all(|other| other.runtime != runtime));
            assert!(runtime == Runtime::Wasmtime || runtime.entry().built_in);
        }
        for engine in crate::options::ENGINES.iter().filter(|e| e.built_in) {
            if let crate::options::Runs::Runtime(runtime) = engine.runs {
                assert!(
                    implementation(runtime).is_ok(),
                    "{} has no line",
                    engine.name
                );
            }
        }
    }
}
