//! The measuring sequence of a `run(count, seed)` workload, written once and
//! used by every worker process of `host run` and `host compare`: warm-up,
//! pilot, fixed cost, sampling in blocks, and a process's share of the samples.
//!
//! Method (after divan's tuning, criterion's warm-up and nanobench's epochs):
//! 1. *Warm-up* ([`tune`]) in rounds of about one target sample each,
//!    growing the count until a sample fills the target, until the median
//!    per-op time of the last rounds is within [`SETTLE_TOLERANCE`] of the
//!    rounds before them, or the cap is reached.
//! 2. *Pilot*: the settled per-op estimate gives the count that makes one
//!    sample last the target duration (at least 1000x the clock resolution
//!    and the per-call overhead). A count fixed by the user or by the run
//!    (so that every process takes the same one) skips it.
//! 3. *Fixed cost* ([`settle`]): after a warm-up at the chosen count, the
//!    workload itself is called at a small count m and at 2m, which gives
//!    2·T(m) − T(2m), the cost of a call without its operations
//!    (criterion's linear sampling, on two points). Measured on the
//!    workload's own call, with its operations in flight, it is the fixed
//!    cost the CPU actually pays: on an out-of-order core part of a call's
//!    entry and exit overlaps the loop, so an empty guest's call would
//!    overstate it. A sample longer than [`FIXED_COST_CALL`] is corrected
//!    with the median of pairs taken before every block, at a count m that
//!    lasts about that long. A shorter sample, of which the fixed cost is a
//!    large share, has its calls at twice the count ("doubles") taken among
//!    its samples, so that each epoch measures the fixed cost in the state
//!    the core was in for its samples ([`Blocks`]).
//! 4. *Sampling* in blocks ([`Blocks`]) until the process has taken its
//!    [`Share`].
//!
//! Before every guest call (or round of calls) the sequence tells its
//! [`Progress`] what it calls, so that the supervising parent can hold the
//! call to `--timeout`. This module decides when and how often to call the
//! guest; the timed region itself is
//! [`crate::guest::runtime::Sampler::sample`] (wasmtime's:
//! [`crate::guest::runtime::wasmtime::instance::Instance::sample`]), and what the numbers mean is
//! [`crate::analysis`]'s job.

use std::num::NonZeroU64;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::analysis::epochs;
use crate::analysis::stats;
use crate::benchmark::progress::{Call, Progress, Step};
use crate::benchmark::protocol::Share;
use crate::benchmark::worker::calibrate::Calibration;
use crate::guest::runtime::{RawSample, Sampler};
use crate::results::{Measurement, Warmup};

/// The pilot never asks for more operations per sample than this. A workload
/// that reaches it does not get slower with its count: its loop was probably
/// optimised away, or it does nothing.
pub const MAX_COUNT: u64 = 1 << 32;
/// Warm-up rounds in each of the two windows compared.
pub const SETTLE_ROUNDS: usize = 3;
/// How closely the windows' medians must agree, relative.
pub const SETTLE_TOLERANCE: f64 = 0.02;
/// Target wall time of one block of samples.
pub const BLOCK_TIME: Duration = Duration::from_millis(25);
/// Bounds on the samples in one block.
pub const BLOCK_SAMPLES: (usize, usize) = (5, 5_000);
/// Most samples kept for one benchmark in one process.
pub const MAX_SAMPLES: usize = 50_000;
/// Pairs of calls measuring the fixed cost before every block of samples
/// longer than [`FIXED_COST_CALL`].
pub const FIXED_COST_PAIRS_PER_BLOCK: usize = 25;
/// The longest call of a fixed-cost pair's smaller count: a longer sample's
/// fixed cost is measured at a count that lasts about this long (the fixed
/// cost is the same at any count, and is a vanishing part of a long sample).
/// A sample no longer than this has doubles among its samples instead.
pub const FIXED_COST_CALL: Duration = Duration::from_micros(2);
/// Samples of a short call taken after each double (see [`Blocks`]).
pub const SAMPLES_PER_DOUBLE: usize = 3;

/// How one benchmark is to be measured in one process.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    /// Target duration of one sample.
    pub sample_time: Duration,
    pub warmup_cap: Duration,
    /// Fixed count, if the user or the run chose one.
    pub count: Option<NonZeroU64>,
    pub share: Share,
}

/// What [`tune`] found: the warm-up so far and the count.
#[derive(Debug, Clone, Copy)]
pub struct Tuned {
    pub warmup: Warmup,
    pub count: u64,
}

/// Measure one benchmark: every step in order. Steps, calls and estimates
/// go to `progress`, under the row name `name`.
pub fn measure(
    schedule: &Schedule,
    calibration: &Calibration,
    workload: &mut dyn Sampler,
    progress: &dyn Progress,
    name: &str,
) -> Result<Measurement> {
    progress.step(name, Step::Warmup);
    let tuned = tune(schedule, calibration, workload, progress)?;
    progress.step(name, Step::FixedCost);
    let mut blocks = settle(
        schedule,
        calibration,
        tuned,
        tuned.count,
        workload,
        progress,
    )?;
    progress.step(name, Step::Sampling);
    let per_block = blocks.samples_per(BLOCK_TIME);
    loop {
        let len = match schedule.share {
            Share::Samples(n) => per_block.min(n.saturating_sub(blocks.taken)).max(1),
            _ => per_block,
        };
        progress.calling(Call::Run {
            count: blocks.count,
        });
        blocks.take(workload, len)?;
        let per_op = blocks.corrected_per_op();
        let all: Vec<f64> = per_op.iter().flatten().copied().collect();
        let median = stats::median(&all);
        progress.estimate(name, median, stats::err_pct(&all, median));
        let done = match schedule.share {
            Share::Samples(n) => blocks.taken >= n,
            Share::Time(t) => blocks.started.elapsed() >= t,
            Share::Blocks(n) => blocks.blocks.len() >= n,
        };
        if done || blocks.taken >= MAX_SAMPLES {
            break;
        }
    }
    Ok(blocks.finish())
}

/// Steps 1 and 2: warm up and pick the count (the pilot).
pub fn tune(
    schedule: &Schedule,
    calibration: &Calibration,
    workload: &mut dyn Sampler,
    progress: &dyn Progress,
) -> Result<Tuned> {
    let target = target_sample_time(schedule.sample_time, calibration);
    let (warmup, warm_count) = warm_up(schedule, target, workload, progress)?;
    let count = match schedule.count {
        Some(n) => n.get(),
        None => pilot(warm_count, warmup.per_op_ns, target),
    };
    Ok(Tuned { warmup, count })
}

/// Step 3: warm up at `count` (the tuned count, or one shared by several
/// variants) unless step 1 already warmed up at that very count (a count the
/// schedule fixed), then start the blocks (the fixed cost's first pairs).
pub fn settle(
    schedule: &Schedule,
    calibration: &Calibration,
    tuned: Tuned,
    count: u64,
    workload: &mut dyn Sampler,
    progress: &dyn Progress,
) -> Result<Blocks> {
    let warmup = if schedule.count.map(NonZeroU64::get) == Some(count) {
        tuned.warmup
    } else {
        let target = target_sample_time(schedule.sample_time, calibration);
        let fixed = Schedule {
            count: NonZeroU64::new(count),
            ..*schedule
        };
        let (at_count, _) = warm_up(&fixed, target, workload, progress)?;
        Warmup {
            elapsed_ms: tuned.warmup.elapsed_ms + at_count.elapsed_ms,
            settled: at_count.settled,
            rounds: tuned.warmup.rounds + at_count.rounds,
            per_op_ns: at_count.per_op_ns,
            first_timed: 0,
        }
    };
    progress.calling(Call::Run { count });
    Blocks::start(calibration, count, warmup, workload)
}

/// The target duration of one sample: what the user asked for, but never
/// shorter than 1000x the clock resolution or 1000x the empty-guest call.
pub fn target_sample_time(asked: Duration, calibration: &Calibration) -> Duration {
    let floor_ns = 1000.0
        * calibration
            .clock
            .resolution_ns
            .max(calibration.empty_call_ns);
    asked.max(Duration::from_nanos(floor_ns as u64))
}

/// The count that makes one sample last `target`, from a per-op estimate.
pub fn pilot(warm_count: u64, per_op_ns: Option<f64>, target: Duration) -> u64 {
    let Some(per_op_ns) = per_op_ns.filter(|ns| ns.is_finite() && *ns > 0.0) else {
        return warm_count.max(1);
    };
    let count = (target.as_nanos() as f64 / per_op_ns).round();
    (count as u64).clamp(1, MAX_COUNT)
}

/// The smaller count of the fixed-cost pairs for samples of `count`
/// operations that take `sample_ns`: the count that lasts about
/// [`FIXED_COST_CALL`] (the pilot's arithmetic), never more than `count`.
pub fn pair_count(count: u64, sample_ns: f64) -> u64 {
    let per_op_ns = sample_ns / count.max(1) as f64;
    pilot(count, Some(per_op_ns), FIXED_COST_CALL).min(count.max(1))
}

/// Warm up in rounds of about `target` each (at the fixed count, if the schedule
/// has one); returns the warm-up record and the count reached.
fn warm_up(
    schedule: &Schedule,
    target: Duration,
    workload: &mut dyn Sampler,
    progress: &dyn Progress,
) -> Result<(Warmup, u64)> {
    let start = Instant::now();
    let target_ns = target.as_nanos() as f64;
    let mut count = schedule.count.map_or(1, NonZeroU64::get);
    let mut history: Vec<f64> = Vec::new();
    // The last round's estimate, kept while the count still grows: what
    // the pilot starts from when the cap ends the warm-up before a round
    // lasted long enough.
    let mut growing_per_op = None;
    let mut returned_at = None;
    let mut rounds = 0;
    let mut settled = false;
    loop {
        rounds += 1;
        progress.calling(Call::Run { count });
        let (round_ns, calls) =
            round(workload, count, target_ns).with_context(|| match returned_at {
                Some(good) if good != count => {
                    format!("at count {count} (it had returned at count {good})")
                }
                _ => format!("at count {count}"),
            })?;
        returned_at = Some(count);
        let per_call = round_ns / calls as f64;
        if schedule.count.is_none() && per_call < target_ns / 2.0 && count < MAX_COUNT {
            // Too short: grow the count (at most 100x a round) and start over.
            growing_per_op = Some(per_call / count as f64);
            let factor = (target_ns / per_call.max(1.0)).clamp(2.0, 100.0);
            count = ((count as f64 * factor) as u64).clamp(count + 1, MAX_COUNT);
            history.clear();
        } else {
            history.push(per_call / count as f64);
            if settled_at(&history) {
                settled = true;
                break;
            }
        }
        if start.elapsed() >= schedule.warmup_cap {
            break;
        }
    }
    let recent = &history[history.len().saturating_sub(SETTLE_ROUNDS)..];
    let per_op_ns = if recent.is_empty() {
        growing_per_op
    } else {
        Some(stats::median(recent))
    };
    let warmup = Warmup {
        elapsed_ms: start.elapsed().as_secs_f64() * 1e3,
        settled,
        rounds,
        per_op_ns,
        first_timed: 0,
    };
    Ok((warmup, count))
}

/// Whether the per-op times of the warm-up rounds so far have stopped
/// moving: the median of the last [`SETTLE_ROUNDS`] rounds is within
/// [`SETTLE_TOLERANCE`] of the median of the [`SETTLE_ROUNDS`] before them.
/// Comparing medians of windows, not the range of one window, tells a trend
/// (caches, the clock ramping up) from the noise of a busy machine, which
/// never lets five rounds agree within 2%.
pub fn settled_at(history: &[f64]) -> bool {
    let n = history.len();
    if n < 2 * SETTLE_ROUNDS {
        return false;
    }
    let last = stats::median(&history[n - SETTLE_ROUNDS..]);
    let before = stats::median(&history[n - 2 * SETTLE_ROUNDS..n - SETTLE_ROUNDS]);
    (last - before).abs() <= SETTLE_TOLERANCE * before.abs()
}

/// Call the workload at `count` until at least `target_ns` of calls are
/// timed or as long has passed (at least once); returns the total time
/// timed and the number of calls. The wall clock bounds a round whose calls
/// cost more than they time (a request to another process: a round of V8
/// at a count of 1 would otherwise take thousands of round trips).
fn round(workload: &mut dyn Sampler, count: u64, target_ns: f64) -> Result<(f64, u64)> {
    let start = Instant::now();
    let mut total = 0.0;
    let mut calls = 0;
    while (total < target_ns && (start.elapsed().as_nanos() as f64) < target_ns) || calls == 0 {
        total += workload.sample(count)?.elapsed_ns;
        calls += 1;
    }
    Ok((total, calls))
}

/// One call of `workload` at `count`, timed right after an untimed one at
/// the same count (so that the branch predictor knows where its loop ends,
/// as it does for every sample of a block), less its pauses at `pair_ns`
/// each.
fn timed_after_one(workload: &mut dyn Sampler, count: u64, pair_ns: f64) -> Result<f64> {
    workload.sample(count)?;
    Ok(workload.sample(count)?.net_ns(pair_ns))
}

/// Samples taken block by block, with the calls that measure the fixed
/// cost of a call.
///
/// A sample longer than [`FIXED_COST_CALL`]: each block comes right after a
/// few pairs of fixed-cost calls. A shorter one (xor at a count of 1000:
/// about 280 ns, of which the fixed cost is 12–17%): every
/// [`SAMPLES_PER_DOUBLE`] samples come after an untimed and a timed call at
/// twice the count (the double) and an untimed call at the count, and each
/// epoch's fixed cost is 2·T(n) − T(2n) of its own samples and doubles
/// ([`crate::analysis::epochs::corrected`]). The call path has spells of
/// tens of milliseconds in which it costs more: on one virtual machine a
/// call of xor at 1000 took 275 ns, or 287–298 ns in such a spell, which
/// the pairs before a block mostly missed; the processes of one run then
/// read 241.2 to 258.3 ps per op. With each epoch's own fixed cost, the
/// processes of four runs agreed within 0.1–1.6 ps, the epochs of a spell
/// being as slow as the core was (and left out with the disturbed ones).
pub struct Blocks {
    count: u64,
    /// The smaller count of a fixed-cost pair (the other is twice it).
    pair_count: u64,
    pause_pair_ns: f64,
    clock_resolution_ns: f64,
    started: Instant,
    /// Time of one call in ns, block by block.
    pub blocks: Vec<Vec<f64>>,
    pauses: Vec<Vec<u64>>,
    /// Whether the samples are short: doubles among them, no pairs.
    short: bool,
    /// The doubles of each block: the index of the sample each came before,
    /// and its time less its pauses.
    doubles: Vec<Vec<(usize, f64)>>,
    /// 2·T(m) − T(2m) of every pair, pauses subtracted.
    fixed_costs_ns: Vec<f64>,
    checksum: u64,
    /// Samples taken so far.
    pub taken: usize,
    probe_ns: f64,
    /// Both warm-ups (the pilot's and the one at the chosen count) added up.
    warmup: Warmup,
}

impl Blocks {
    /// Start sampling `workload` at `count`: one probe call, which tells a
    /// short sample from a longer one and fixes the counts of the
    /// fixed-cost pairs (a short sample's are the count and its double),
    /// and a few pairs to warm the calls at them. The seeds of the calls
    /// start afresh here, so that every variant of a comparison samples with
    /// the same seeds. `warmup` is what the measurement will report of the
    /// warm-up.
    pub fn start(
        calibration: &Calibration,
        count: u64,
        warmup: Warmup,
        workload: &mut dyn Sampler,
    ) -> Result<Self> {
        let started = Instant::now();
        workload.restart_seeds();
        let probe = workload.sample(count)?;
        let short = probe.elapsed_ns <= FIXED_COST_CALL.as_nanos() as f64;
        let blocks = Blocks {
            count,
            pair_count: pair_count(count, probe.elapsed_ns),
            pause_pair_ns: calibration.pause_pair_ns,
            clock_resolution_ns: calibration.clock.resolution_ns,
            started,
            blocks: Vec::new(),
            pauses: Vec::new(),
            short,
            doubles: Vec::new(),
            fixed_costs_ns: Vec::new(),
            checksum: probe.checksum,
            taken: 0,
            probe_ns: probe.elapsed_ns,
            warmup,
        };
        for _ in 0..FIXED_COST_PAIRS_PER_BLOCK {
            blocks.fixed_cost(workload)?;
        }
        Ok(blocks)
    }

    /// How many samples fill about `time` (with their doubles, and the
    /// untimed calls around them: five calls' worth of the count for every
    /// [`SAMPLES_PER_DOUBLE`] samples).
    pub fn samples_per(&self, time: Duration) -> usize {
        let per_sample = match self.short {
            true => (SAMPLES_PER_DOUBLE + 5) as f64 / SAMPLES_PER_DOUBLE as f64,
            false => 1.0,
        };
        ((time.as_nanos() as f64 / (self.probe_ns.max(1.0) * per_sample)) as usize)
            .clamp(BLOCK_SAMPLES.0, BLOCK_SAMPLES.1)
    }

    /// One pair of calls at the pair counts: 2·T(m) − T(2m), each call less
    /// its pauses, kept within [0, T(m)]: a workload whose time grows faster
    /// than its count (outside the contract) gets no negative fixed cost.
    ///
    /// Each timed call follows an untimed call at the same count, as every
    /// sample of a block follows one at its count: the branch predictor then
    /// knows where the guest's loop ends in both. Timed right after a call
    /// at the other count, both calls paid for a mispredicted loop exit,
    /// which the difference counted as fixed cost: per-op times at a count
    /// of 1000 came out 0.4–3.4% below those at 10^5 (four runs each, side by
    /// side), and within ±0.6% with the untimed calls.
    fn fixed_cost(&self, workload: &mut dyn Sampler) -> Result<f64> {
        let pair = self.pause_pair_ns;
        let single = timed_after_one(workload, self.pair_count, pair)?;
        let double = timed_after_one(workload, 2 * self.pair_count, pair)?;
        Ok((2.0 * single - double).clamp(0.0, single.max(0.0)))
    }

    /// Take one block of `len` samples, after its fixed-cost pairs.
    pub fn take(&mut self, workload: &mut dyn Sampler, len: usize) -> Result<()> {
        self.open(workload, len)?;
        self.extend(workload, len)
    }

    /// Begin a block of about `len` samples: its fixed-cost pairs (none for
    /// short samples), and room for the samples (and doubles) that
    /// [`Blocks::extend`] adds (so that adding them allocates nothing).
    pub fn open(&mut self, workload: &mut dyn Sampler, len: usize) -> Result<()> {
        if !self.short {
            for _ in 0..FIXED_COST_PAIRS_PER_BLOCK {
                let cost = self.fixed_cost(workload)?;
                self.fixed_costs_ns.push(cost);
            }
        }
        self.blocks.push(Vec::with_capacity(len));
        self.pauses.push(Vec::with_capacity(len));
        // At most one double per sample, however the block is chunked.
        let doubles = if self.short { len } else { 0 };
        self.doubles.push(Vec::with_capacity(doubles));
        Ok(())
    }

    /// Add `len` samples to the block opened last: a comparison takes a
    /// variant's block in a few chunks, between the other variants' chunks.
    /// Short samples come [`SAMPLES_PER_DOUBLE`] at a time after a double
    /// and an untimed call at the count, starting afresh in every chunk
    /// (the call before it may be another variant's).
    pub fn extend(&mut self, workload: &mut dyn Sampler, len: usize) -> Result<()> {
        let (Some(block), Some(block_pauses), Some(doubles)) = (
            self.blocks.last_mut(),
            self.pauses.last_mut(),
            self.doubles.last_mut(),
        ) else {
            anyhow::bail!("samples added before a block was opened");
        };
        for i in 0..len {
            if self.short && i % SAMPLES_PER_DOUBLE == 0 {
                let double = timed_after_one(workload, 2 * self.count, self.pause_pair_ns)?;
                doubles.push((block.len(), double));
                workload.sample(self.count)?;
            }
            let RawSample {
                elapsed_ns,
                pauses,
                checksum,
            } = workload.sample(self.count)?;
            block.push(elapsed_ns);
            block_pauses.push(pauses);
            self.checksum = checksum;
        }
        self.taken += len;
        Ok(())
    }

    /// The count every sample is taken at.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Per-op times so far, corrected with the fixed cost so far.
    pub fn corrected_per_op(&self) -> Vec<Vec<f64>> {
        epochs::corrected(
            &self.blocks,
            &self.pauses,
            &self.doubles,
            stats::median(&self.fixed_costs_ns),
            self.pause_pair_ns,
            self.count,
        )
    }

    /// The measurement these blocks make.
    pub fn finish(self) -> Measurement {
        let fixed_costs_ns = match self.short {
            true => epochs::fixed_costs_of_epochs(
                &self.blocks,
                &self.pauses,
                &self.doubles,
                self.pause_pair_ns,
            ),
            false => self.fixed_costs_ns,
        };
        let doubles = match self.short {
            true => self.doubles,
            false => Vec::new(),
        };
        let pauses = match self.pauses.iter().flatten().all(|&p| p == 0) {
            true => Vec::new(),
            false => self.pauses,
        };
        Measurement {
            count: self.count,
            warmup: self.warmup,
            count_capped: self.count >= MAX_COUNT,
            fixed_cost_ns: stats::median(&fixed_costs_ns),
            blocks: self.blocks,
            pauses,
            doubles,
            fixed_costs_ns,
            pause_pair_ns: self.pause_pair_ns,
            clock_resolution_ns: self.clock_resolution_ns,
            checksum: Some(self.checksum),
            sampling_ms: self.started.elapsed().as_secs_f64() * 1e3,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calibration(resolution_ns: f64, empty_call_ns: f64) -> Calibration {
        Calibration {
            clock: crate::platform::clock::ClockCalibration {
                resolution_ns,
                overhead_ns: 20.0,
            },
            empty_call_ns,
            pause_pair_ns: 0.0,
        }
    }

    #[test]
    fn target_is_never_below_1000_ticks() {
        let c = calibration(20.0, 30.0);
        assert_eq!(
            target_sample_time(Duration::from_millis(1), &c),
            Duration::from_millis(1)
        );
        assert_eq!(
            target_sample_time(Duration::from_micros(1), &c),
            Duration::from_micros(30)
        );
    }

    #[test]
    fn warm_up_settles_on_a_plateau_not_on_noise() {
        // Still falling: not settled.
        let falling: Vec<f64> = (0..10).map(|i| 100.0 - 3.0 * i as f64).collect();
        assert!(!settled_at(&falling));
        // A noisy plateau (up to ±4% round to round): settled.
        let wiggle = [0.04, -0.04, 0.02, -0.02, 0.0, -0.03, 0.01, 0.03, -0.01, 0.0];
        let noisy: Vec<f64> = wiggle.iter().map(|w| 100.0 * (1.0 + w)).collect();
        assert!(settled_at(&noisy));
        assert!(!settled_at(&noisy[..9]));
    }

    /// A guest in another process: each call costs `wall` of round trip
    /// but times `per_op_ns` per op.
    struct Remote {
        wall: Duration,
        per_op_ns: f64,
    }

    impl Sampler for Remote {
        fn setup(&mut self, _: u64) -> Result<()> {
            Ok(())
        }
        fn sample(&mut self, count: u64) -> Result<RawSample> {
            let start = Instant::now();
            while start.elapsed() < self.wall {
                std::hint::spin_loop();
            }
            Ok(RawSample {
                elapsed_ns: count as f64 * self.per_op_ns,
                pauses: 0,
                checksum: 0,
            })
        }
        fn restart_seeds(&mut self) {}
        fn peak_memory_bytes(&mut self) -> Option<u64> {
            None
        }
    }

    #[test]
    fn a_guest_whose_calls_cost_more_than_they_time_reaches_its_count() {
        // 20 µs a round trip, 0.25 ns an op: 4M ops fill 1 ms. A round
        // bounded by the guest's time alone would make 4M round trips at a
        // count of 1 (80 s, past the cap): the warm-up would not settle.
        let schedule = Schedule {
            sample_time: Duration::from_millis(1),
            warmup_cap: Duration::from_secs(10),
            count: None,
            share: Share::Samples(1),
        };
        let mut remote = Remote {
            wall: Duration::from_micros(20),
            per_op_ns: 0.25,
        };
        let tuned = tune(
            &schedule,
            &calibration(20.0, 30.0),
            &mut remote,
            &crate::benchmark::progress::Silent,
        )
        .expect("the fake guest does not fail");
        assert!(tuned.warmup.settled, "{tuned:?}");
        assert!(tuned.count >= 1_000_000, "{tuned:?}");
    }

    #[test]
    fn pilot_fills_the_target() {
        assert_eq!(pilot(1, Some(0.5), Duration::from_millis(1)), 2_000_000);
        assert_eq!(pilot(1, Some(2e6), Duration::from_millis(1)), 1);
        assert_eq!(pilot(7, None, Duration::from_millis(1)), 7);
        assert_eq!(pilot(7, Some(f64::NAN), Duration::from_millis(1)), 7);
        assert_eq!(pilot(1, Some(1e-12), Duration::from_millis(1)), MAX_COUNT);
    }

    #[test]
    fn fixed_cost_pairs_last_at_most_their_call_time() {
        // A short sample: its own count.
        assert_eq!(pair_count(1_000, 300.0), 1_000);
        // A 1 ms sample of 4M ops: the count that lasts 2 µs.
        assert_eq!(pair_count(4_000_000, 1e6), 8_000);
        // A sample of one op longer than 2 µs: one op.
        assert_eq!(pair_count(1, 5e6), 1);
    }
}
