//! The measuring sequence of a WASI program: one warm-up iteration, then
//! iterations (each a fresh instance, timed by the program itself between
//! `bench.start` and `bench.end`) until the stop rule says so, at least
//! [`MIN_ITERATIONS`]. Each iteration is one block of one sample; nothing is
//! subtracted. The stop rule is the one of `run` workloads
//! ([`crate::benchmark::sequence::stop_now`]).

use std::time::Instant;

use anyhow::Result;

use crate::analysis::summary::phase_stats;
use crate::benchmark::sequence::{MAX_SAMPLES, Sampled, stop_now};
use crate::guest::program::Program;
use crate::options::StopRule;
use crate::results::{Measurement, Phases, Warmup};

/// Fewest iterations before the stop rule may stop.
pub const MIN_ITERATIONS: usize = 5;

/// Measure a program. `started` is when work on it began (compile
/// included), for the time budget. Returns the measurement (one op per
/// iteration) and the phases.
pub fn measure(
    program: &Program,
    stop: StopRule,
    started: Instant,
    compile_ms: f64,
    seed: u64,
) -> Result<(Measurement, Phases)> {
    let warm = Instant::now();
    program.iterate()?;
    let warmup = Warmup {
        elapsed_ms: warm.elapsed().as_secs_f64() * 1e3,
        settled: true,
        rounds: 1,
        per_op_ns: None,
    };
    let sampling = Instant::now();
    let mut instantiate = Vec::new();
    let mut execute: Vec<Vec<f64>> = Vec::new();
    let mut precision_reached = false;
    let region = loop {
        let iteration = program.iterate()?;
        instantiate.push(iteration.instantiate_ns);
        execute.push(vec![iteration.execute_ns]);
        let sampled = Sampled {
            per_op: &execute,
            taken: execute.len(),
            sampling_since: sampling,
            work_since: started,
        };
        let decision = stop_now(stop, &sampled, MIN_ITERATIONS, MIN_ITERATIONS, 0.0, seed);
        precision_reached |= decision.precision_reached;
        if decision.stop || execute.len() >= MAX_SAMPLES {
            break iteration.region;
        }
    };
    let all: Vec<f64> = execute.iter().flatten().copied().collect();
    let phases = Phases {
        compile_ms,
        instantiate_ns: phase_stats(&instantiate),
        execute_ns: phase_stats(&all),
        timed_region: region,
    };
    let measurement = Measurement {
        count: 1,
        warmup,
        blocks: execute,
        pauses: Vec::new(),
        baseline_calls_ns: Vec::new(),
        baseline_ns_per_call: 0.0,
        pause_pair_ns: 0.0,
        checksum: None,
        sampling_ms: sampling.elapsed().as_secs_f64() * 1e3,
        precision_reached,
        count_capped: false,
    };
    Ok((measurement, phases))
}
