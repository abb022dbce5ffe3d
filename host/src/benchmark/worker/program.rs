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
//! A process's first iteration is its first timed one instead when it
//! alone outlasted the warm-up's time and lasts at least
//! [`LONG_ITERATION`] under a runtime that does not tier up
//! ([`first_counts`]): a long program that leaves no time to warm up is
//! not made to pay an iteration it cannot use.
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

/// The shortest first iteration in a process that may count as a timed
/// one ([`first_counts`]). What a process pays once (its code faulted in,
/// caches and branch predictors cold: a few milliseconds) is about 1% of
/// it: over two runs of Sightglass's 23 programs that run longer than
/// 100 ms under cranelift, the fastest first iteration of three processes
/// ran 1.0% and 2.6% slower than the fastest later one (geometric means;
/// 1.9% and 1.4% under winch), where programs under 100 ms ran 33% to 52%
/// slower.
pub const LONG_ITERATION: Duration = Duration::from_millis(500);

/// Whether a process's first iteration of `program`, which took
/// `first_ns` in its timed regions and alone outlasted the warm-up's
/// time, counts as its first timed one: when it lasts at least
/// [`LONG_ITERATION`] and the runtime runs from the first call the code it
/// runs later (not V8, which tiers up: [`CompiledProgram::tiers_up`]). A
/// second warm-up iteration would cost as much as a timed one, where the
/// first is already within about 1% of the steady state.
pub fn first_counts(program: &dyn CompiledProgram, first_ns: f64) -> bool {
    !program.tiers_up() && first_ns >= LONG_ITERATION.as_nanos() as f64
}

/// The instant `lasted` ago (now, were the clock to start later): when
/// iterations that took `lasted` on the wall clock began.
pub fn began_before(lasted: Duration) -> Instant {
    Instant::now()
        .checked_sub(lasted)
        .unwrap_or_else(Instant::now)
}

/// A process's first iteration, when it may count as a timed one
/// ([`first_counts`]), and how long it took on the wall clock.
struct Opening {
    iteration: Iteration,
    lasted: Duration,
}

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
    /// The first iteration, kept while it may count as a timed one.
    opening: Option<Opening>,
}

impl Iterations {
    /// Run `program`'s untimed warm-up iterations (at least one): until
    /// the time of the last iterations (their timed regions together) is
    /// that of the ones before them ([`settled_at`]), or until `cap` has
    /// passed; each seeded with the next of `seeds`. A first iteration
    /// that alone outlasted `cap` is kept while it may count as a timed
    /// one ([`first_counts`], [`Iterations::time_opening`]).
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
        let counts = history.len() == 1 && first_counts(program.as_ref(), history[0]);
        Ok(Iterations {
            warmup: Warmup {
                elapsed_ms: warm.elapsed().as_secs_f64() * 1e3,
                settled,
                rounds: history.len(),
                per_op_ns: None,
                first_timed: 0,
            },
            execute_ns: Vec::new(),
            instantiate_ns: Vec::new(),
            compile_ns: Vec::new(),
            compile_ms: program.compile_time().map(|t| t.as_secs_f64() * 1e3),
            region: iteration.region,
            first,
            opening: counts.then(|| Opening {
                iteration,
                lasted: warm.elapsed(),
            }),
        })
    }

    /// Count the first iteration as the first timed one, when it may
    /// ([`first_counts`]): there was then no warm-up. How long it took on
    /// the wall clock, or `None` (it stays a warm-up one).
    pub fn time_opening(&mut self) -> Option<Duration> {
        let opening = self.opening.take()?;
        self.push(opening.iteration);
        self.warmup = Warmup {
            elapsed_ms: 0.0,
            rounds: 0,
            first_timed: 1,
            ..self.warmup
        };
        Some(opening.lasted)
    }

    /// Keep one timed iteration.
    pub fn push(&mut self, iteration: Iteration) {
        self.execute_ns.push(iteration.execute_ns);
        self.instantiate_ns.push(iteration.instantiate_ns);
        self.compile_ns.extend(iteration.compile_ns);
        self.region = iteration.region;
    }

    /// The timed iterations so far.
    pub(crate) fn len(&self) -> usize {
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
    // The warm-up drew from a copy: the timed iterations take the run's
    // seeds from its first (the first iteration's, when it counts).
    let mut seeds = seeds;
    let opened = taken.time_opening();
    if opened.is_some() {
        seeds.take();
    }
    let sampling = began_before(opened.unwrap_or_default());
    let done = |taken: &Iterations| {
        let shared = match share {
            Share::Samples(n) | Share::Blocks(n) => taken.len() >= n,
            Share::Time(t) => sampling.elapsed() >= t,
        };
        taken.len() > 0 && (shared || taken.len() >= MAX_SAMPLES)
    };
    while !done(&taken) {
        progress.calling(Call::Start);
        taken.push(program.iterate(seeds.take())?);
    }
    let sampling_ms = sampling.elapsed().as_secs_f64() * 1e3;
    let mut measured = taken.into_measurement(sampling_ms, hardware_counters, clock_resolution_ns);
    measured.peak_rss_bytes = program.peak_rss_bytes();
    measured.code_bytes = program.code_bytes();
    Ok(measured)
}

/// A program for the tests of the sequences that run programs.
#[cfg(test)]
pub mod fake {
    use std::sync::{Arc, Mutex};

    use anyhow::Result;

    use crate::guest::program::{Iteration, TimedRegion};
    use crate::guest::runtime::CompiledProgram;

    /// A program that keeps the seed of each of its iterations, each of
    /// which it says took `ns` in its timed region; V8's when `tiers_up`.
    pub struct Seeded {
        pub seeds: Arc<Mutex<Vec<u64>>>,
        pub ns: f64,
        pub tiers_up: bool,
    }

    impl Seeded {
        /// A program of `ns` an iteration that does not tier up.
        pub fn lasting(ns: f64) -> Self {
            Seeded {
                seeds: Arc::default(),
                ns,
                tiers_up: false,
            }
        }
    }

    impl CompiledProgram for Seeded {
        fn iterate(&self, seed: u64) -> Result<Iteration> {
            self.seeds
                .lock()
                .map_err(|_| anyhow::anyhow!("poisoned"))?
                .push(seed);
            Ok(Iteration {
                instantiate_ns: 1.0,
                execute_ns: vec![self.ns],
                region: TimedRegion::WholeStart,
                compile_ns: None,
            })
        }

        fn tiers_up(&self) -> bool {
            self.tiers_up
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::fake::Seeded;
    use super::*;
    use crate::benchmark::progress::Silent;
    use crate::guest::seeds::{SeedRule, of_call};

    /// The seeds a process's iterations of a program of `ns` an iteration
    /// take, three timed ones asked for (the warm-up's cap is spent at
    /// once), and the processes whose first iteration was timed.
    fn taken_by(rule: SeedRule, ns: f64, tiers_up: bool) -> Result<(Vec<u64>, u32)> {
        let seeds = Arc::new(Mutex::new(Vec::new()));
        let program: ProgramRunner = Box::new(Seeded {
            seeds: seeds.clone(),
            ns,
            tiers_up,
        });
        let schedule = (Share::Samples(3), Duration::ZERO, 1.0);
        let measured = measure(&program, schedule, Seeds::new(42, rule), &Silent, "p", None)?;
        let taken = seeds.lock().map_err(|_| anyhow::anyhow!("poisoned"))?;
        assert_eq!(measured.measurement.blocks.len(), 3);
        Ok((taken.clone(), measured.measurement.warmup.first_timed))
    }

    /// The seeds a short program's iterations take: one warm-up iteration
    /// and three timed ones.
    fn seeds_taken(rule: SeedRule) -> Result<Vec<u64>> {
        Ok(taken_by(rule, 1.0, false)?.0)
    }

    /// A first iteration that outlasts the warm-up's time is the first
    /// timed one when it lasts at least [`LONG_ITERATION`] and its runtime
    /// does not tier up; then the timed ones take the seeds on from it.
    #[test]
    fn a_long_first_iteration_counts_unless_the_runtime_tiers_up() -> Result<()> {
        let seed = |i| of_call(42, i);
        let long = LONG_ITERATION.as_nanos() as f64;
        let timed = taken_by(SeedRule::PerCall, long, false)?;
        assert_eq!(timed, (vec![seed(0), seed(1), seed(2)], 1));
        let warmed = vec![seed(0), seed(0), seed(1), seed(2)];
        assert_eq!(
            taken_by(SeedRule::PerCall, long, true)?,
            (warmed.clone(), 0)
        );
        assert_eq!(taken_by(SeedRule::PerCall, long - 1.0, false)?, (warmed, 0));
        Ok(())
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
