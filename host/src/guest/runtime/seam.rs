//! The seam every runtime plugs into: a [`Runner`] (one per `--engine`)
//! instantiates a `run(count, seed)` workload into a [`Sampler`], whose
//! `sample` is the timed call, and compiles a program into a
//! [`CompiledProgram`]. Each runtime times its own compile and
//! instantiation in the worker; what it did not time (wasmtime's compile,
//! which the parent did, from its cache) it leaves to the caller.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;

use crate::guest::format::Code;
use crate::guest::limits::Limits;
use crate::guest::program::Iteration;
use crate::guest::seeds::Seeds;
use crate::options::Grants;

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

    /// How long the runtime took to compile the guest it instantiated,
    /// timed in this process, where it compiled here (wasmi, wasmer);
    /// `None` where the code came compiled (wasmtime's, from the parent's
    /// compile and its cache). The instantiation time excludes it.
    fn compile_time(&self) -> Option<Duration> {
        None
    }

    /// How long the runtime took to instantiate the guest, where it timed
    /// that in a process of its own (V8): the worker's clock would count
    /// talking to that process.
    fn instantiate_time(&self) -> Option<Duration> {
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
    /// code and the output. Its random numbers are those
    /// [`crate::guest::seeds::GuestRandom`] draws from `seed`, and its wall
    /// clock is a [`crate::guest::seeds::GuestWallClock`] unless the
    /// system's is granted, under every runtime; an engine library answers
    /// WASI itself, and its program draws its own numbers and reads the
    /// system's clock.
    fn iterate(&self, seed: u64) -> Result<Iteration>;

    /// The peak resident memory of the process the iterations ran in: the
    /// worker's, unless the runtime has a process of its own.
    fn peak_rss_bytes(&self) -> Option<u64> {
        crate::platform::memory::peak_rss_bytes(None)
    }

    /// The size of the compiled code, as [`Sampler::code_bytes`].
    fn code_bytes(&self) -> Option<u64> {
        None
    }

    /// How long the runtime took to compile the program, timed in this
    /// process, as [`Sampler::compile_time`].
    fn compile_time(&self) -> Option<Duration> {
        None
    }

    /// Whether the runtime's code for the program changes while it runs
    /// (V8 tiers hot functions up from its baseline compiler over
    /// seconds), so that a first iteration is never its steady state. A
    /// runtime that compiles ahead of time, or interprets, runs from the
    /// first call the code every later iteration runs.
    fn tiers_up(&self) -> bool {
        false
    }
}
