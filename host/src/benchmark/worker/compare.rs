//! A comparison in one worker process: every variant tuned, settled at one
//! shared count, then measured in interleaved rounds (a Williams design, in
//! chunks that alternate between the variants), so that a state of the
//! machine falls on every variant alike. (Programs take rounds of their
//! own, in `compare_program`.)

use std::time::{Duration, Instant};

use anyhow::Result;

use crate::benchmark::progress::{Call, Progress, Step};
use crate::benchmark::protocol::Share;
use crate::benchmark::protocol::{Event, ProcessMeasurement, WorkerPlan};
use crate::benchmark::worker::emitter::Emitter;
use crate::benchmark::worker::rows::row_schedule;
use crate::benchmark::worker::sequence::{self, Blocks, Schedule, Tuned};
use crate::benchmark::worker::session::Session;
use crate::guest::runtime::Sampler;
use crate::results::Row;

/// Target wall time of one variant's block in a round of a comparison.
pub const ROUND_BLOCK_TIME: std::time::Duration = std::time::Duration::from_millis(5);
/// Most samples one variant takes in a round (very short calls).
pub const ROUND_BLOCK_MAX: usize = 100;
/// Chunks a variant's block of a round is taken in, alternating with the
/// other variants' chunks.
pub const ROUND_CHUNKS: usize = 5;

/// The samples of chunk `chunk` of a block of `len`: the block split into
/// [`ROUND_CHUNKS`] chunks as evenly as it goes (the first ones larger;
/// empty chunks for a block of fewer samples).
fn chunk_len(len: usize, chunk: usize) -> usize {
    len / ROUND_CHUNKS + usize::from(chunk < len % ROUND_CHUNKS)
}

/// A comparison's task in this worker.
pub struct Comparison<'a> {
    pub variants: &'a [Row],
    /// The shared count, once a worker has fixed it.
    pub count: Option<u64>,
    pub rounds: usize,
    /// Rotate the order of the variants starting here.
    pub offset: usize,
    /// Count instructions too.
    pub fuel: bool,
    /// When the rounds stop.
    pub pace: Pace,
}

/// When a worker's rounds stop: after the rounds asked for, or, under a
/// budget, before a round that would end past it (its length taken as the
/// mean of the rounds so far); the first `least` (the parent's
/// [`crate::benchmark::parent::compare::least_rounds`]) are always
/// taken, so that the comparison has rounds with a spread to judge (one
/// round has no interval of its own). A worker whose start (loading,
/// calibrating and warming up its variants: a runtime's own compile, a tiering engine's
/// warm-up) outlasted its budget still takes rounds while they cost, in
/// all, no more than that start: another worker would pay it again for
/// fewer.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    rounds: usize,
    budget: Option<Duration>,
    /// Rounds taken whatever the budget.
    least: usize,
    began: Instant,
}

impl Pace {
    /// The pace of a task of `rounds` under `budget`, counted from now,
    /// the first `least` taken whatever the budget.
    pub fn new(rounds: usize, budget: Option<Duration>, least: usize) -> Self {
        Pace {
            rounds,
            budget,
            least,
            began: Instant::now(),
        }
    }

    /// Whether to begin another round after `taken`, the first of which
    /// began at `first`.
    pub fn another(&self, taken: usize, first: Instant) -> bool {
        if taken >= self.rounds {
            return false;
        }
        let Some(budget) = self.budget.filter(|_| taken >= self.least) else {
            return true;
        };
        let rounds = first.elapsed();
        let next = rounds.div_f64(taken as f64);
        let start = first.saturating_duration_since(self.began);
        self.began.elapsed() + next <= budget || rounds + next < start
    }
}

/// `plan` with its warm-up cap at most a quarter of `budget`, so that a
/// long program's warm-up leaves time for its rounds.
pub fn pace_warmup(plan: &WorkerPlan, budget: Option<Duration>) -> WorkerPlan {
    let mut paced = plan.clone();
    if let Some(budget) = budget {
        paced.warmup_cap = paced.warmup_cap.min(budget / 4);
    }
    paced
}

/// A variant ready for its rounds: its instance, its instantiation time in
/// ms, and its samples.
struct Variant {
    instance: Box<dyn Sampler>,
    instantiate_ms: f64,
    blocks: Blocks,
    per_block: usize,
}

/// An error of the comparison, and the variant it belongs to.
pub type VariantError = (usize, anyhow::Error);

/// Compare the variants in this process: tune each (unless the count is
/// fixed), settle each at the shared count, then the rounds in which every
/// variant takes one short block, in chunks alternating with the other
/// variants', the order rotating.
pub fn compare(
    plan: &WorkerPlan,
    session: &Session,
    task: &Comparison<'_>,
    progress: &Emitter,
) -> Result<Event, VariantError> {
    let schedule = row_schedule(plan, task.count, Share::Blocks(task.rounds));
    let mut tuned = Vec::new();
    for (i, row) in task.variants.iter().enumerate() {
        progress.set_row(i);
        tuned.push(tune(&schedule, session, row, progress).map_err(|e| (i, e))?);
    }
    // One shared count: the slowest variant's sample fills the target.
    let count = tuned.iter().map(|t| t.2.count).min().unwrap_or(1);
    let mut variants = Vec::new();
    for (i, (mut instance, instantiate_ms, tuned)) in tuned.into_iter().enumerate() {
        progress.set_row(i);
        let row = &task.variants[i];
        let settled = calibration(session, row).and_then(|calibration| {
            sequence::settle(
                &schedule,
                calibration,
                tuned,
                count,
                instance.as_mut(),
                progress,
            )
        });
        let blocks = settled.map_err(|e| (i, e))?;
        let per_block = blocks.samples_per(ROUND_BLOCK_TIME).min(ROUND_BLOCK_MAX);
        variants.push(Variant {
            instance,
            instantiate_ms,
            blocks,
            per_block,
        });
    }
    let first = Instant::now();
    let mut rounds = 0;
    while task.pace.another(rounds, first) {
        take_round(&mut variants, rounds + task.offset, count, progress)?;
        rounds += 1;
    }
    let mut measured = Vec::new();
    for (i, mut variant) in variants.into_iter().enumerate() {
        let fuel_per_op = match task.fuel {
            true => {
                progress.set_row(i);
                let row = &task.variants[i];
                let fuel = session
                    .file(row)
                    .and_then(|guest| session.fuel_per_op(guest, row, count, progress));
                Some(fuel.map_err(|e| (i, e))?)
            }
            false => None,
        };
        measured.push(ProcessMeasurement {
            measurement: variant.blocks.finish(),
            instantiate_ms: variant.instantiate_ms,
            fuel_per_op,
            hardware_counters: None,
            program: None,
            peak_memory_bytes: variant.instance.peak_memory_bytes(),
            peak_rss_bytes: None,
            code_bytes: variant.instance.code_bytes(),
            compile_ms: variant
                .instance
                .compile_time()
                .map(|t| t.as_secs_f64() * 1e3),
            start: None,
        });
    }
    Ok(Event::Compared {
        count,
        rounds,
        variants: measured,
    })
}

/// The calibration `row`'s workload is measured with.
fn calibration<'s>(
    session: &'s Session,
    row: &Row,
) -> Result<&'s crate::benchmark::worker::calibrate::Calibration> {
    let guest = session.file(row)?;
    Ok(&session
        .format_setup(row.engine_set, guest.format)
        .calibration)
}

/// Instantiate, set up and warm up `row`.
fn tune(
    schedule: &Schedule,
    session: &Session,
    row: &Row,
    progress: &Emitter,
) -> Result<(Box<dyn Sampler>, f64, Tuned)> {
    let guest = session.file(row)?;
    progress.step(&row.name, Step::Warmup);
    let (mut instance, instantiate_ms) = session.instance(guest, row, progress)?;
    let calibration = calibration(session, row)?;
    let tuned = sequence::tune(schedule, calibration, instance.as_mut(), progress)?;
    Ok((instance, instantiate_ms, tuned))
}

/// Round `round` of the design: every variant one block.
fn take_round(
    variants: &mut [Variant],
    round: usize,
    count: u64,
    progress: &Emitter,
) -> Result<(), VariantError> {
    let mut order = williams_order(variants.len(), round);
    for &index in &order {
        progress.set_row(index);
        progress.calling(Call::Run { count });
        let v = &mut variants[index];
        v.blocks
            .open(v.instance.as_mut(), v.per_block)
            .map_err(|e| (index, e))?;
    }
    // A round's blocks are taken in chunks that alternate between the
    // variants, the order reversing every chunk (A B B A A B ...), so
    // that every block spans the same stretch of time. A state of the
    // machine that lasts a few milliseconds (on one VM, `xor` ran at
    // one of two speeds 3.3% apart for milliseconds at a time) then
    // falls on every variant's block alike, and their minima agree: A
    // against A stopped at the 3-process floor in 5 of 8 runs, against
    // 1 of 8 with whole blocks one after the other.
    for chunk in 0..ROUND_CHUNKS {
        for &index in &order {
            progress.set_row(index);
            let v = &mut variants[index];
            v.blocks
                .extend(v.instance.as_mut(), chunk_len(v.per_block, chunk))
                .map_err(|e| (index, e))?;
        }
        order.reverse();
    }
    Ok(())
}

/// The order of `n` variants in round `round`: row `round` of a Williams
/// design, a Latin square (every variant once in every position over `n`
/// rounds; `2n` for odd `n`) in which every variant also follows every
/// other equally often, so that neither position nor the variant before
/// favours one.
pub fn williams_order(n: usize, round: usize) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    // First row: 0, 1, n-1, 2, n-2, ...
    let mut first = Vec::with_capacity(n);
    let (mut low, mut high) = (0, n);
    for j in 0..n {
        if j % 2 == 0 {
            first.push(low);
            low += 1;
        } else {
            high -= 1;
            first.push(high);
        }
    }
    let rows = if n.is_multiple_of(2) { n } else { 2 * n };
    let r = round % rows;
    let shifted = |row: usize| first.iter().map(move |&v| (v + row) % n);
    if r < n {
        shifted(r).collect()
    } else {
        let mut reversed: Vec<usize> = shifted(r - n).collect();
        reversed.reverse();
        reversed
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::{Pace, ROUND_CHUNKS, chunk_len, williams_order};

    /// Without a budget every round asked for is taken; with a budget
    /// already spent only the `least` (two; one for a later worker, or a
    /// suite's first look); with one that a round's length outlasts, none
    /// after them, unless the worker's start cost more than its rounds so
    /// far.
    #[test]
    fn the_pace_takes_two_rounds_and_none_past_the_budget() {
        let now = Instant::now();
        let free = Pace::new(6, None, 2);
        assert!((0..6).all(|taken| free.another(taken, now)));
        assert!(!free.another(6, now));
        let spent = Pace::new(6, Some(Duration::ZERO), 2);
        assert!((0..2).all(|taken| spent.another(taken, now)));
        assert!(!spent.another(2, now));
        assert!(!Pace::new(1, Some(Duration::ZERO), 2).another(1, now));
        // A later worker adds to rounds taken, as a suite's first look at a
        // long program does: one is enough.
        let later = Pace::new(6, Some(Duration::ZERO), 1);
        assert!(later.another(0, now) && !later.another(1, now));
        // Three rounds took 50 ms each; another would end past 170 ms.
        let first = now - Duration::from_millis(150);
        let tight = Pace {
            began: first,
            ..Pace::new(6, Some(Duration::from_millis(170)), 2)
        };
        assert!(!tight.another(3, first));
        let roomy = Pace {
            began: first,
            ..Pace::new(6, Some(Duration::from_secs(60)), 2)
        };
        assert!(roomy.another(3, first));
        // A start of 3 s past a budget of 1 s: rounds of 200 ms go on
        // while they cost no more than the start, then stop.
        let began = now - Duration::from_millis(3400);
        let first = now - Duration::from_millis(400);
        let slow_start = Pace {
            began,
            ..Pace::new(6, Some(Duration::from_secs(1)), 2)
        };
        assert!(
            slow_start.another(2, first),
            "0.6 s of rounds after a 3 s start"
        );
        let first = now - Duration::from_millis(2900);
        let later = Pace {
            began: first - Duration::from_secs(3),
            ..Pace::new(20, Some(Duration::from_secs(1)), 2)
        };
        assert!(!later.another(10, first), "rounds past the start's 3 s");
    }

    /// The chunks of a block add up to the block, differ by at most one
    /// sample; a block of fewer samples than chunks fills the first chunks
    /// with one each.
    #[test]
    fn chunks_share_a_block_out_evenly() {
        for len in [0, 1, 3, 5, 7, 100, 101] {
            let chunks: Vec<usize> = (0..ROUND_CHUNKS).map(|c| chunk_len(len, c)).collect();
            assert_eq!(chunks.iter().sum::<usize>(), len, "{len}: {chunks:?}");
            let (lo, hi) = (chunks.iter().min(), chunks.iter().max());
            assert!(
                hi.zip(lo).is_some_and(|(h, l)| h - l <= 1),
                "{len}: {chunks:?}"
            );
        }
        assert_eq!(
            (0..ROUND_CHUNKS)
                .map(|c| chunk_len(3, c))
                .collect::<Vec<_>>(),
            [1, 1, 1, 0, 0]
        );
    }

    /// Every variant once per position, and every ordered pair of
    /// neighbours equally often, over a full square.
    fn balanced(n: usize) {
        let rows = if n.is_multiple_of(2) { n } else { 2 * n };
        let mut position = vec![vec![0; n]; n];
        let mut follows = vec![vec![0; n]; n];
        for r in 0..rows {
            let order = williams_order(n, r);
            let mut sorted = order.clone();
            sorted.sort();
            assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "row {r}: {order:?}");
            for (p, &v) in order.iter().enumerate() {
                position[v][p] += 1;
            }
            for pair in order.windows(2) {
                follows[pair[0]][pair[1]] += 1;
            }
        }
        let per_position = rows / n;
        assert!(
            position.iter().flatten().all(|&c| c == per_position),
            "{position:?}"
        );
        let per_pair = rows / n;
        for (a, row) in follows.iter().enumerate() {
            for (b, &count) in row.iter().enumerate() {
                let want = if a == b { 0 } else { per_pair };
                assert_eq!(count, want, "n {n}: {a} then {b}");
            }
        }
    }

    #[test]
    fn williams_squares_balance_positions_and_neighbours() {
        for n in 2..=7 {
            balanced(n);
        }
        assert_eq!(williams_order(1, 5), vec![0]);
    }
}
