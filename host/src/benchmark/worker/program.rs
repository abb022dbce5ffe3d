//! The measuring sequence of a WASI program in one process: one warm-up
//! iteration, then iterations (each a fresh instance, timed by the program
//! itself between `bench.start` and `bench.end`) until the process has taken
//! its [`Share`]. Each iteration is one block, of one sample per timed
//! region; nothing is subtracted. Before every iteration the sequence tells its [`Progress`],
//! so that the parent can hold the iteration to `--timeout`. A program runs
//! on a built-in engine or an engine library alike ([`ProgramRunner`]).

use std::time::Instant;

use anyhow::Result;

use crate::benchmark::progress::{Call, Progress, Step};
use crate::benchmark::worker::sequence::{MAX_SAMPLES, Share};
use crate::guest::library::LibraryProgram;
use crate::guest::program::{Iteration, Program, TimedRegion};
use crate::results::{Measurement, Warmup};

/// What runs a program's iterations: a built-in engine, or an engine
/// library.
pub enum ProgramRunner {
    Builtin(Box<Program>),
    Library(LibraryProgram),
}

impl ProgramRunner {
    /// One fresh iteration, its output checked.
    pub fn iterate(&self) -> Result<Iteration> {
        match self {
            ProgramRunner::Builtin(program) => program.iterate(),
            ProgramRunner::Library(program) => program.iterate(),
        }
    }
}

/// What one process measured of a program.
pub struct ProgramRun {
    /// One op per iteration.
    pub measurement: Measurement,
    /// Instantiation of every iteration, in ns.
    pub instantiate_ns: Vec<f64>,
    /// Compilation of every iteration, in ns (an engine library's; empty
    /// for a built-in engine).
    pub compile_ns: Vec<f64>,
    pub region: TimedRegion,
}

/// Measure a program in this process.
pub fn measure(
    program: &ProgramRunner,
    share: Share,
    progress: &dyn Progress,
    name: &str,
) -> Result<ProgramRun> {
    progress.step(name, Step::Warmup);
    let warm = Instant::now();
    progress.calling(Call::Start);
    program.iterate()?;
    let warmup = Warmup {
        elapsed_ms: warm.elapsed().as_secs_f64() * 1e3,
        settled: true,
        rounds: 1,
        per_op_ns: None,
    };
    progress.step(name, Step::Sampling);
    let sampling = Instant::now();
    let mut instantiate_ns = Vec::new();
    let mut compile_ns = Vec::new();
    let mut execute: Vec<Vec<f64>> = Vec::new();
    let region = loop {
        progress.calling(Call::Start);
        let iteration = program.iterate()?;
        instantiate_ns.push(iteration.instantiate_ns);
        compile_ns.extend(iteration.compile_ns);
        execute.push(iteration.execute_ns);
        let done = match share {
            Share::Samples(n) | Share::Blocks(n) => execute.len() >= n,
            Share::Time(t) => sampling.elapsed() >= t,
        };
        if done || execute.len() >= MAX_SAMPLES {
            break iteration.region;
        }
    };
    let measurement = Measurement {
        count: 1,
        warmup,
        blocks: execute,
        pauses: Vec::new(),
        doubles: Vec::new(),
        fixed_costs_ns: Vec::new(),
        fixed_cost_ns: 0.0,
        pause_pair_ns: 0.0,
        clock_resolution_ns: 0.0,
        checksum: None,
        sampling_ms: sampling.elapsed().as_secs_f64() * 1e3,
        count_capped: false,
    };
    Ok(ProgramRun {
        measurement,
        instantiate_ns,
        compile_ns,
        region,
    })
}
