//! A comparison of WASI programs in one worker process: each variant warmed
//! up as `host run` warms a program, then rounds in which every variant runs one iteration
//! (a fresh instance, timed as `host run` times it: instantiation, and the
//! regions between `bench.start` and `bench.end`), in the order of a
//! Williams design rotated per round and per process, so that a state of
//! the machine falls on every variant alike. A round's iterations share
//! one seed, so that every variant runs on the same random numbers: the
//! rounds are paired in their input too. Each worker takes the run's
//! sequence of seeds up after the rounds of the workers before it
//! ([`round_seeds`]): were every worker to replay the first seeds, a
//! comparison would read a handful of inputs in all, its interval would
//! hold nothing of how the ratio varies with the input, and the next run
//! (another run seed) would read another ratio (libsodium's `sodium_utils2`,
//! cranelift against winch: 3.27x [3.11, 3.50], then 2.54x [2.52, 2.56]).
//! A failed iteration (its output check included) is an error of its
//! variant.

use anyhow::Result;

use crate::benchmark::progress::{Call, Progress, Step};
use crate::benchmark::protocol::{Event, WorkerPlan};
use crate::benchmark::worker::compare::{Comparison, VariantError, williams_order};
use crate::benchmark::worker::emitter::Emitter;
use crate::benchmark::worker::program::{Iterations, ProgramRunner};
use crate::benchmark::worker::session::Session;
use crate::guest::seeds::Seeds;
use crate::results::Row;

/// The runner of `row`'s program in this process: every iteration of a
/// variant goes through what this returns.
fn program_of(
    plan: &WorkerPlan,
    session: &Session,
    row: &Row,
    progress: &Emitter,
) -> Result<ProgramRunner> {
    let guest = session.file(row)?;
    session.program(guest, row, &plan.grants, progress)
}

/// A variant of the comparison: its program and what its iterations gave
/// in this process (a block per round).
struct Taken {
    program: ProgramRunner,
    iterations: Iterations,
}

/// Compare the programs of `task` in this process: each warmed up, then
/// `task.rounds` rounds of one iteration each.
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
    let mut rounds = 0;
    let mut seeds = round_seeds(session.seeds, task);
    while task.pace.another(rounds, started) {
        let seed = seeds.take();
        for index in williams_order(taken.len(), rounds + task.offset) {
            progress.set_row(index);
            progress.calling(Call::Start);
            let iteration = taken[index].program.iterate(seed).map_err(|e| (index, e))?;
            taken[index].iterations.push(iteration);
        }
        rounds += 1;
    }
    let sampling_ms = started.elapsed().as_secs_f64() * 1e3;
    let resolution = session.clock_resolution_ns();
    Ok(Event::Compared {
        count: 1,
        rounds,
        variants: taken
            .into_iter()
            .map(|t| (t.iterations).into_measurement(sampling_ms, None, resolution))
            .collect(),
    })
}

/// The seeds of `task`'s rounds: the run's sequence after the rounds of
/// the workers before this one (each asked for as many rounds).
fn round_seeds(run: Seeds, task: &Comparison<'_>) -> Seeds {
    let before = task.offset.saturating_mul(task.rounds);
    run.from_index(u64::try_from(before).unwrap_or(u64::MAX))
}

/// Load `row`'s program and run its untimed warm-up iterations.
fn warm_up(plan: &WorkerPlan, session: &Session, row: &Row, progress: &Emitter) -> Result<Taken> {
    let program = program_of(plan, session, row, progress)?;
    let cap = plan.warmup_cap;
    let iterations = Iterations::warm_up(&program, cap, session.seeds, progress, &row.name)?;
    Ok(Taken {
        program,
        iterations,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::benchmark::worker::compare::Pace;
    use crate::guest::seeds::SeedRule;

    /// The seeds the rounds of the comparison's worker `offset` take.
    fn worker_seeds(offset: usize, rule: SeedRule) -> Vec<u64> {
        let task = Comparison {
            variants: &[],
            count: None,
            rounds: 6,
            offset,
            fuel: false,
            pace: Pace::new(6, None, offset),
        };
        let mut seeds = round_seeds(Seeds::new(42, rule), &task);
        (0..task.rounds).map(|_| seeds.take()).collect()
    }

    /// Three workers' rounds take 18 seeds of the run's sequence, each once,
    /// in order; under `--same-seed` every round takes the run's seed.
    #[test]
    fn each_worker_takes_the_seeds_after_the_workers_before_it() {
        let taken: Vec<u64> = (0..3)
            .flat_map(|w| worker_seeds(w, SeedRule::PerCall))
            .collect();
        let mut run = Seeds::new(42, SeedRule::PerCall);
        let sequence: Vec<u64> = (0..18).map(|_| run.take()).collect();
        assert_eq!(taken, sequence);
        assert_eq!(taken.iter().collect::<HashSet<_>>().len(), 18);
        assert_eq!(worker_seeds(2, SeedRule::Same), [42; 6]);
    }
}
