//! The measuring sequence of a WASI program in one process: untimed
//! warm-up iterations until the program's times have stopped moving, by
//! the rule that warms workloads too ([`settled_at`]: V8 tiers a program's
//! code up over seconds), or until the warm-up cap; then iterations (each
//! a fresh instance, timed by the program itself between `bench.start` and
//! `bench.end`) until the process has taken its [`Share`]. Each iteration
//! is one block, of one sample per timed region; nothing is subtracted.
//! The first warm-up iteration is the process's start: a fresh instance's
//! first `_start`, timed as every iteration is. The iterations take the
//! session's seeds in turn (their random numbers, [`Seeds`]), the warm-up
//! from the first and the timed ones from the first again, as a workload's
//! calls do.
//! Before every iteration the sequence tells its [`Progress`], so that the
//! parent can hold the iteration to `--timeout`. A program runs under any
//! runtime or an engine library alike ([`ProgramRunner`]).

use std::time::{Duration, Instant};

use anyhow::Result;

use crate::benchmark::progress::{Call, Progress, Step};
use crate::benchmark::protocol::Share;
use crate::benchmark::protocol::{ProcessMeasurement, ProgramMeasurement, StartMeasurement};
use crate::benchmark::worker::sequence::{MAX_SAMPLES, settled_at};
use crate::guest::program::{Iteration, TimedRegion};
use crate::guest::runtime::CompiledProgram;
use crate::guest::seeds::Seeds;
use crate::results::{HardwareCounts, Measurement, Warmup};

/// What runs a program's iterations: a runtime (wasmtime's built-in
/// engines among them) or an engine library, behind one seam.
pub type ProgramRunner = Box<dyn CompiledProgram>;

/// A program's iterations in one process, as they are taken: the
/// warm-up, then one block per iteration (one sample per timed region;
/// nothing is subtracted).
pub struct Iterations {
    warmup: Warmup,
    execute_ns: Vec<Vec<f64>>,
    instantiate_ns: Vec<f64>,
    /// An engine library's compile time of each iteration; empty for a
    /// built-in engine.
    compile_ns: Vec<f64>,
    /// The runtime's one compile of the program in this process, in ms,
    /// where it compiled here ([`CompiledProgram::compile_time`]).
    compile_ms: Option<f64>,
    region: TimedRegion,
    /// The process's first iteration (its first warm-up one): a fresh
    /// instance's instantiation and `_start`, the program's first call.
    first: StartMeasurement,
}

impl Iterations {
    /// Run `program`'s untimed warm-up iterations (at least one): until
    /// the time of the last iterations (their timed regions together) is
    /// that of the ones before them ([`settled_at`]), or until `cap` has
    /// passed; each seeded with the next of `seeds`.
    pub fn warm_up(
        program: &ProgramRunner,
        cap: Duration,
        mut seeds: Seeds,
        progress: &dyn Progress,
        name: &str,
    ) -> Result<Self> {
        progress.step(name, Step::Warmup);
        let warm = Instant::now();
        let mut history = Vec::new();
        let mut first = StartMeasurement::default();
        let (iteration, settled) = loop {
            progress.calling(Call::Start);
            let iteration = program.iterate(seeds.take())?;
            history.push(iteration.execute_ns.iter().sum::<f64>());
            if first.instantiate_ns.is_empty() {
                first.instantiate_ns.push(iteration.instantiate_ns);
                first.first_call_ns.extend(history.last());
            }
            let settled = settled_at(&history);
            if settled || warm.elapsed() >= cap {
                break (iteration, settled);
            }
        };
        Ok(Iterations {
            warmup: Warmup {
                elapsed_ms: warm.elapsed().as_secs_f64() * 1e3,
                settled,
                rounds: history.len(),
                per_op_ns: None,
            },
            execute_ns: Vec::new(),
            instantiate_ns: Vec::new(),
            compile_ns: Vec::new(),
            compile_ms: program.compile_time().map(|t| t.as_secs_f64() * 1e3),
            region: iteration.region,
            first,
        })
    }

    /// Keep one timed iteration.
    pub fn push(&mut self, iteration: Iteration) {
        self.execute_ns.push(iteration.execute_ns);
        self.instantiate_ns.push(iteration.instantiate_ns);
        self.compile_ns.extend(iteration.compile_ns);
        self.region = iteration.region;
    }

    /// The timed iterations so far.
    fn len(&self) -> usize {
        self.execute_ns.len()
    }

    /// What the process measured: one op per iteration, timed by a clock
    /// of `clock_resolution_ns` steps.
    pub fn into_measurement(
        self,
        sampling_ms: f64,
        hardware_counters: Option<Result<HardwareCounts, String>>,
        clock_resolution_ns: f64,
    ) -> ProcessMeasurement {
        let measurement = Measurement {
            count: 1,
            warmup: self.warmup,
            blocks: self.execute_ns,
            pauses: Vec::new(),
            doubles: Vec::new(),
            fixed_costs_ns: Vec::new(),
            fixed_cost_ns: 0.0,
            pause_pair_ns: 0.0,
            clock_resolution_ns,
            checksum: None,
            sampling_ms,
            count_capped: false,
        };
        ProcessMeasurement {
            measurement,
            instantiate_ms: crate::analysis::stats::median(&self.instantiate_ns) / 1e6,
            fuel_per_op: None,
            hardware_counters,
            peak_memory_bytes: None,
            peak_rss_bytes: None,
            code_bytes: None,
            compile_ms: self.compile_ms,
            start: Some(Box::new(self.first)),
            program: Some(ProgramMeasurement {
                instantiate_ns: self.instantiate_ns,
                compile_ns: self.compile_ns,
                region: self.region,
            }),
        }
    }
}

/// Measure a program in this process: warm-up iterations for at most
/// `warmup_cap`, then iterations until the process has taken its `share`,
/// each seeded from `seeds`; the clock's step `clock_resolution_ns` goes
/// with the measurement.
pub fn measure(
    program: &ProgramRunner,
    (share, warmup_cap, clock_resolution_ns): (Share, Duration, f64),
    seeds: Seeds,
    progress: &dyn Progress,
    name: &str,
    hardware_counters: Option<Result<HardwareCounts, String>>,
) -> Result<ProcessMeasurement> {
    let mut taken = Iterations::warm_up(program, warmup_cap, seeds, progress, name)?;
    progress.step(name, Step::Sampling);
    let sampling = Instant::now();
    // The warm-up drew from a copy: the timed iterations take the run's
    // seeds from its first.
    let mut seeds = seeds;
    loop {
        progress.calling(Call::Start);
        taken.push(program.iterate(seeds.take())?);
        let done = match share {
            Share::Samples(n) | Share::Blocks(n) => taken.len() >= n,
            Share::Time(t) => sampling.elapsed() >= t,
        };
        if done || taken.len() >= MAX_SAMPLES {
            break;
        }
    }
    let sampling_ms = sampling.elapsed().as_secs_f64() * 1e3;
    let mut measured = taken.into_measurement(sampling_ms, hardware_counters, clock_resolution_ns);
    measured.peak_rss_bytes = program.peak_rss_bytes();
    measured.code_bytes = program.code_bytes();
    Ok(measured)
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::benchmark::progress::Silent;
    use crate::guest::seeds::{SeedRule, of_call};

    /// A program that keeps the seed of each of its iterations.
    struct Seeded(Arc<Mutex<Vec<u64>>>);

    impl CompiledProgram for Seeded {
        fn iterate(&self, seed: u64) -> Result<Iteration> {
            self.0
                .lock()
                .map_err(|_| anyhow::anyhow!("poisoned"))?
                .push(seed);
            Ok(Iteration {
                instantiate_ns: 1.0,
                execute_ns: vec![1.0],
                region: TimedRegion::WholeStart,
                compile_ns: None,
            })
        }
    }

    /// The seeds a process's iterations of a program take: one warm-up
    /// iteration (the cap is spent at once) and three timed ones.
    fn seeds_taken(rule: SeedRule) -> Result<Vec<u64>> {
        let kept = Arc::new(Mutex::new(Vec::new()));
        let program: ProgramRunner = Box::new(Seeded(kept.clone()));
        let schedule = (Share::Samples(3), Duration::ZERO, 1.0);
        measure(&program, schedule, Seeds::new(42, rule), &Silent, "p", None)?;
        let taken = kept.lock().map_err(|_| anyhow::anyhow!("poisoned"))?;
        Ok(taken.clone())
    }

    /// The warm-up takes the run's sequence from its first seed, and so do
    /// the timed iterations, whatever the warm-up took; `--same-seed`
    /// gives every iteration the run's seed.
    #[test]
    fn a_programs_iterations_take_the_runs_seeds_in_turn() -> Result<()> {
        let seed = |i| of_call(42, i);
        let expected = [seed(0), seed(0), seed(1), seed(2)];
        assert_eq!(seeds_taken(SeedRule::PerCall)?, expected);
        assert_eq!(seeds_taken(SeedRule::Same)?, [42; 4]);
        Ok(())
    }
}
