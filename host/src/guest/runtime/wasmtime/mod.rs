//! wasmtime as a [`Runner`]: the workload's code compiled by the engine of
//! its `--engine` (Cranelift, Winch or Pulley), instantiated with the
//! harness's linkers into an [`Instance`], whose
//! [`Instance::sample`] is the timed region; a program is a
//! [`Program`].
//!
//! Here too is all of wasmtime's own: its [`engine`]s (for timing, with
//! fuel, for profiling) and compiling, the compile [`cache`] on disk, the
//! [`instance`] of a `run(count, seed)` workload (the one timed region),
//! the [`program`] and its iterations, a guest's [`failure`] in plain
//! words, and the [`profile`] of a guest's stack by GuestProfiler.

pub mod cache;
pub mod engine;
pub mod failure;
pub mod instance;
pub mod profile;
pub mod program;

use std::sync::{Arc, Mutex};

use anyhow::Result;

use self::engine::Engines;
use self::instance::{Instance, Linkers, Pre};
use self::program::Program;
use crate::guest::format::{Code, not_wasm};
use crate::guest::limits::Limits;
use crate::guest::program::Iteration;
use crate::guest::runtime::Implementation;
use crate::guest::runtime::seam::{CompiledProgram, Guest, RawSample, Runner, Sampler};
use crate::guest::seeds::Seeds;
use crate::options::{Grants, Runtime};

/// The crate's version this host is built with, from the workspace's
/// `Cargo.lock` (host/build.rs).
pub const VERSION: &str = env!("WASM_BENCH_VERSION_WASMTIME");

/// wasmtime's line of the registry: it runs modules, components and
/// programs, and refuses nothing but native code.
pub const IMPLEMENTATION: Implementation = Implementation {
    runtime: Runtime::Wasmtime,
    runner: |engines| Ok(Box::new(Wasmtime::new(engines)?)),
    modules_only: false,
    lacks: |_| None,
    refuses: || None,
    version: || Some(VERSION.to_string()),
};

/// wasmtime, with the linkers of one engine configuration; with
/// `--engine NAME:pre`, one [`Pre`] per code it instantiated, kept for
/// the next instance.
pub struct Wasmtime {
    linkers: Linkers,
    pres: Option<Pres>,
}

/// The [`Pre`] of each code instantiated so far.
type Pres = Mutex<Vec<(Code, Arc<Pre>)>>;

impl Wasmtime {
    pub fn new(engines: &Engines) -> Result<Self> {
        Ok(Wasmtime {
            linkers: Linkers::new(&engines.fast)?,
            pres: engines.config.instance_pre.then(|| Mutex::new(Vec::new())),
        })
    }

    /// The [`Pre`] of `code`: the one kept, else made now and kept.
    fn pre(pres: &Pres, linkers: &Linkers, code: &Code) -> Result<Arc<Pre>> {
        let mut pres = pres
            .lock()
            .map_err(|_| anyhow::anyhow!("instantiation failed: a thread panicked"))?;
        if let Some((_, pre)) = pres.iter().find(|(kept, _)| kept.same(code)) {
            return Ok(Arc::clone(pre));
        }
        let pre = Arc::new(Pre::new(linkers, code)?);
        pres.push((code.clone(), Arc::clone(&pre)));
        Ok(pre)
    }
}

impl Runner for Wasmtime {
    fn instantiate(
        &self,
        guest: Guest<'_>,
        export: &str,
        limits: Limits,
        seeds: Seeds,
    ) -> Result<Box<dyn Sampler>> {
        let code = guest.code.ok_or_else(not_wasm)?;
        Ok(Box::new(match &self.pres {
            Some(pres) => {
                let pre = Self::pre(pres, &self.linkers, code)?;
                Instance::from_pre(&pre, export, limits, seeds)?
            }
            None => Instance::new(&self.linkers, code, export, limits, seeds)?,
        }))
    }

    fn program(
        &self,
        guest: Guest<'_>,
        grants: &Grants,
        limits: Limits,
    ) -> Result<Box<dyn CompiledProgram>> {
        Ok(Box::new(Program::new(
            guest.path,
            guest.code.ok_or_else(not_wasm)?,
            grants,
            limits,
        )?))
    }
}

impl CompiledProgram for Program {
    fn iterate(&self, seed: u64) -> Result<Iteration> {
        Program::iterate(self, seed)
    }
}

impl Sampler for Instance {
    fn setup(&mut self, size: u64) -> Result<()> {
        Instance::setup(self, size)
    }

    #[inline]
    fn sample(&mut self, count: u64) -> Result<RawSample> {
        Instance::sample(self, count)
    }

    fn restart_seeds(&mut self) {
        Instance::restart_seeds(self)
    }

    fn peak_memory_bytes(&mut self) -> Option<u64> {
        Some(Instance::peak_memory_bytes(self))
    }
}
