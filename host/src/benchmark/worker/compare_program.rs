//! A comparison of WASI programs in one worker process: a warm-up iteration
//! of each variant, then rounds in which every variant runs one iteration
//! (a fresh instance, timed as `host run` times it: instantiation, and the
//! regions between `bench.start` and `bench.end`), in the order of a
//! Williams design rotated per round and per process, so that a state of
//! the machine falls on every variant alike. A failed iteration (its output
//! check included) is an error of its variant.

use anyhow::Result;

use crate::benchmark::progress::{Call, Progress, Step};
use crate::benchmark::protocol::{Event, ProcessSample, ProgramSample, WorkerPlan};
use crate::benchmark::worker::compare::{Comparison, VariantError, williams_order};
use crate::benchmark::worker::emitter::Emitter;
use crate::benchmark::worker::program::ProgramRunner;
use crate::benchmark::worker::session::Session;
use crate::guest::program::{Iteration, TimedRegion};
use crate::results::{Measurement, Row, Warmup};

/// The runner of `row`'s program in this process: every iteration of a
/// variant goes through what this returns.
fn program_of(plan: &WorkerPlan, session: &Session, row: &Row) -> Result<ProgramRunner> {
    let workload = session.workload(row)?;
    session.program(workload, row, &plan.grants)
}

/// What one variant's iterations gave in this process: a block per round.
struct Taken {
    program: ProgramRunner,
    warmup: Warmup,
    execute_ns: Vec<Vec<f64>>,
    instantiate_ns: Vec<f64>,
    compile_ns: Vec<f64>,
    region: TimedRegion,
}

impl Taken {
    fn push(&mut self, iteration: Iteration) {
        self.execute_ns.push(iteration.execute_ns);
        self.instantiate_ns.push(iteration.instantiate_ns);
        self.compile_ns.extend(iteration.compile_ns);
        self.region = iteration.region;
    }

    /// The process's sample: one op per iteration, one block per round.
    fn finish(self, sampling_ms: f64) -> ProcessSample {
        let measurement = Measurement {
            count: 1,
            warmup: self.warmup,
            blocks: self.execute_ns,
            pauses: Vec::new(),
            doubles: Vec::new(),
            fixed_costs_ns: Vec::new(),
            fixed_cost_ns: 0.0,
            pause_pair_ns: 0.0,
            clock_resolution_ns: 0.0,
            checksum: None,
            sampling_ms,
            count_capped: false,
        };
        ProcessSample {
            measurement,
            instantiate_ms: crate::analysis::stats::median(&self.instantiate_ns) / 1e6,
            fuel_per_op: None,
            hardware_counters: None,
            program: Some(ProgramSample {
                instantiate_ns: self.instantiate_ns,
                compile_ns: self.compile_ns,
                region: self.region,
            }),
        }
    }
}

/// Compare the programs of `task` in this process: a warm-up iteration of
/// each, then `task.rounds` rounds of one iteration each.
pub fn compare(
    plan: &WorkerPlan,
    session: &Session,
    task: &Comparison<'_>,
    progress: &Emitter,
) -> Result<Event, VariantError> {
    let mut taken = Vec::new();
    for (i, row) in task.variants.iter().enumerate() {
        progress.set_row(i);
        taken.push(warm_up(plan, session, row, progress).map_err(|e| (i, e))?);
    }
    let started = std::time::Instant::now();
    for (i, row) in task.variants.iter().enumerate() {
        progress.set_row(i);
        progress.step(&row.name, Step::Sampling);
    }
    for round in 0..task.rounds {
        for index in williams_order(taken.len(), round + task.offset) {
            progress.set_row(index);
            progress.calling(Call::Start);
            let iteration = taken[index].program.iterate().map_err(|e| (index, e))?;
            taken[index].push(iteration);
        }
    }
    let sampling_ms = started.elapsed().as_secs_f64() * 1e3;
    Ok(Event::Compared {
        count: 1,
        rounds: task.rounds,
        variants: taken.into_iter().map(|t| t.finish(sampling_ms)).collect(),
    })
}

/// Load `row`'s program and run its untimed warm-up iteration.
fn warm_up(plan: &WorkerPlan, session: &Session, row: &Row, progress: &Emitter) -> Result<Taken> {
    progress.step(&row.name, Step::Warmup);
    let program = program_of(plan, session, row)?;
    let warm = std::time::Instant::now();
    progress.calling(Call::Start);
    let iteration = program.iterate()?;
    Ok(Taken {
        program,
        warmup: Warmup {
            elapsed_ms: warm.elapsed().as_secs_f64() * 1e3,
            settled: true,
            rounds: 1,
            per_op_ns: None,
        },
        execute_ns: Vec::new(),
        instantiate_ns: Vec::new(),
        compile_ns: Vec::new(),
        region: iteration.region,
    })
}
