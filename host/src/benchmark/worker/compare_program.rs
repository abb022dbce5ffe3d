//! A comparison of WASI programs in one worker process: each variant warmed
//! up as `host run` warms a program (in the order of the first round, from
//! its seed, so that a variant's first iteration that counts as a timed
//! one, a long program's that leaves no time to warm up, is its iteration
//! of the first round: [`first_round`]), then rounds in which every
//! variant runs one iteration
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

use std::time::{Duration, Instant};

use anyhow::Result;

use crate::benchmark::progress::{Call, Progress, Step};
use crate::benchmark::protocol::{Event, WorkerPlan};
use crate::benchmark::worker::compare::{Comparison, VariantError, williams_order};
use crate::benchmark::worker::emitter::Emitter;
use crate::benchmark::worker::program::{Iterations, ProgramRunner, began_before};
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
    let mut seeds = round_seeds(session.seeds, task);
    let mut taken = warm_up(plan, session, task, seeds, progress)?;
    for (i, row) in task.variants.iter().enumerate() {
        progress.set_row(i);
        progress.step(&row.name, Step::Sampling);
    }
    let iterate = |variant: &mut Taken, index: usize, seed: u64| {
        progress.set_row(index);
        progress.calling(Call::Start);
        let iteration = variant.program.iterate(seed).map_err(|e| (index, e))?;
        variant.iterations.push(iteration);
        Ok(())
    };
    let seed = seeds.take();
    let first = first_round(&mut taken, task.offset, |v, i| iterate(v, i, seed))?;
    let started = began_before(first);
    let mut rounds = 1;
    while task.pace.another(rounds, started) {
        let seed = seeds.take();
        for index in williams_order(taken.len(), rounds + task.offset) {
            iterate(&mut taken[index], index, seed)?;
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

/// Load every variant's program, then run each one's untimed warm-up
/// iterations, in the order of the first round, each from the first
/// round's seed (the first of `seeds`), so that the variants' first
/// iterations can make that round.
fn warm_up(
    plan: &WorkerPlan,
    session: &Session,
    task: &Comparison<'_>,
    seeds: Seeds,
    progress: &Emitter,
) -> Result<Vec<Taken>, VariantError> {
    let programs = (task.variants.iter().enumerate())
        .map(|(i, row)| {
            progress.set_row(i);
            program_of(plan, session, row, progress).map_err(|e| (i, e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut warmed = Vec::new();
    for i in williams_order(programs.len(), task.offset) {
        progress.set_row(i);
        let name = &task.variants[i].name;
        let warm = Iterations::warm_up(&programs[i], plan.warmup_cap, seeds, progress, name);
        warmed.push((i, warm.map_err(|e| (i, e))?));
    }
    warmed.sort_by_key(|(i, _)| *i);
    let taken = programs.into_iter().zip(warmed);
    Ok(taken
        .map(|(program, (_, iterations))| Taken {
            program,
            iterations,
        })
        .collect())
}

/// The first round, in its order (the order the variants warmed up in):
/// each variant's first iteration when it counts as a timed one (a long
/// program under a runtime that does not tier up, which leaves no time to
/// warm up: [`crate::benchmark::worker::program::first_counts`]), else one
/// `iterate`d now. How long its iterations took on the wall clock.
fn first_round(
    taken: &mut [Taken],
    offset: usize,
    mut iterate: impl FnMut(&mut Taken, usize) -> Result<(), VariantError>,
) -> Result<Duration, VariantError> {
    let mut took = Duration::ZERO;
    for index in williams_order(taken.len(), offset) {
        if let Some(lasted) = taken[index].iterations.time_opening() {
            took += lasted;
            continue;
        }
        let began = Instant::now();
        iterate(&mut taken[index], index)?;
        took += began.elapsed();
    }
    Ok(took)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::benchmark::worker::compare::Pace;
    use crate::benchmark::worker::program::LONG_ITERATION;
    use crate::benchmark::worker::program::fake::Seeded;
    use crate::guest::seeds::SeedRule;

    /// The seeds the rounds of the comparison's worker `offset` take.
    fn worker_seeds(offset: usize, rule: SeedRule) -> Vec<u64> {
        let task = Comparison {
            variants: &[],
            count: None,
            rounds: 6,
            offset,
            fuel: false,
            pace: Pace::new(6, None, 1),
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

    /// Variants of programs lasting `ns`, each warmed up with the cap spent
    /// at once.
    fn warmed(ns: &[f64]) -> Result<Vec<Taken>> {
        let seeds = Seeds::new(42, SeedRule::PerCall);
        let silent = &crate::benchmark::progress::Silent;
        ns.iter()
            .map(|&ns| {
                let program: ProgramRunner = Box::new(Seeded::lasting(ns));
                let iterations = Iterations::warm_up(&program, Duration::ZERO, seeds, silent, "p")?;
                Ok(Taken {
                    program,
                    iterations,
                })
            })
            .collect()
    }

    /// A variant whose first iteration counts takes it into the first
    /// round; the others run one there, with the round's seed.
    #[test]
    fn a_first_iteration_that_counts_is_its_variants_in_the_first_round() -> Result<()> {
        let long = LONG_ITERATION.as_nanos() as f64;
        let mut taken = warmed(&[long, long / 2.0])?;
        let mut ran = Vec::new();
        first_round(&mut taken, 0, |variant, index| {
            ran.push(index);
            let iteration = variant.program.iterate(7).map_err(|e| (index, e))?;
            variant.iterations.push(iteration);
            Ok(())
        })
        .map_err(|(_, e)| e)?;
        assert_eq!(ran, [1]);
        assert!(taken.iter().all(|t| t.iterations.len() == 1));
        assert!(taken[0].iterations.time_opening().is_none());
        Ok(())
    }
}
