//! Plan and take the measurements of one benchmark: warm-up, pilot, baseline
//! and sampling in blocks.
//!
//! Method (after divan's tuning, criterion's warm-up and nanobench's epochs):
//! 1. *Warm-up* in rounds of about one target sample each, growing the count
//!    until a sample fills the target, until the per-op times of the last
//!    rounds agree within [`SETTLE_TOLERANCE`] or the cap is reached.
//! 2. *Pilot*: the settled per-op estimate gives the count that makes one
//!    sample last the target duration (at least 1000x the clock resolution and
//!    the per-call overhead).
//! 3. *Baseline*: an empty guest with the same exports is sampled with the
//!    same count through the very same call path, a few calls before every
//!    block; the median of those calls is subtracted from every sample.
//! 4. *Sampling* in blocks spread over the run, so that drift between blocks
//!    shows up in the interval (see [`crate::stats::median_ci`]).
//!
//! This module decides when and how often to call the guest; the timed region
//! itself is [`crate::workload::Instance::sample`], and summaries are
//! [`crate::stats`]'s job.

use std::num::NonZeroU64;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::clock::ClockCalibration;
use crate::instance::{Instance, RawSample};
use crate::progress::{Progress, Stage};
use crate::settings::StopRule;
use crate::stats;

/// The pilot never asks for more operations per sample than this. A workload
/// that reaches it does not get slower with its count: its loop was probably
/// optimised away, or it does nothing.
pub const MAX_COUNT: u64 = 1 << 32;
/// Warm-up rounds that must agree before the warm-up counts as settled.
pub const SETTLE_ROUNDS: usize = 5;
/// How closely they must agree: (max - min) / median.
pub const SETTLE_TOLERANCE: f64 = 0.02;
/// Target wall time of one block of samples.
pub const BLOCK_TIME: Duration = Duration::from_millis(50);
/// Fewest blocks before the precision rule may stop sampling.
pub const MIN_BLOCKS: usize = 8;
/// Bounds on the samples in one block.
pub const BLOCK_SAMPLES: (usize, usize) = (5, 5_000);
/// Most samples kept for one benchmark.
pub const MAX_SAMPLES: usize = 50_000;
/// Empty-guest calls before every block.
pub const BASELINE_CALLS_PER_BLOCK: usize = 25;
/// Bootstrap resamples for the checks made while sampling, and for the final
/// summary.
pub const RESAMPLES_WHILE_SAMPLING: usize = 300;
pub const RESAMPLES_FINAL: usize = 2_000;

/// How one benchmark is to be measured.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Target duration of one sample.
    pub sample_time: Duration,
    pub warmup_cap: Duration,
    /// Fixed count, if the user chose one.
    pub count: Option<NonZeroU64>,
    pub stop: StopRule,
    pub seed: u64,
}

/// Figures measured once per run, before any workload.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Calibration {
    pub clock: ClockCalibration,
    /// Cost of one call of the empty guest with count 1, as seen by the timed
    /// path (two clock reads around a call), in ns.
    pub empty_call_ns: f64,
    /// Cost of a `bench.pause`/`bench.resume` pair that stays inside the
    /// clock, in ns.
    pub pause_pair_ns: f64,
}

/// How the warm-up went.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Warmup {
    pub elapsed_ms: f64,
    pub settled: bool,
    pub rounds: usize,
    /// Per-op estimate (raw, overhead included) of the settled rounds, in ns.
    pub per_op_ns: f64,
}

/// Everything measured for one benchmark, before statistics.
#[derive(Debug, Clone, Serialize)]
pub struct Measurement {
    pub count: u64,
    pub warmup: Warmup,
    /// Raw samples, block by block: time of one call, in ns.
    pub blocks: Vec<Vec<f64>>,
    /// Pauses in each sample (the same layout as `blocks`); empty when the
    /// workload never paused.
    pub pauses: Vec<Vec<u64>>,
    /// Empty-guest calls with the same count, in ns.
    pub baseline_calls_ns: Vec<f64>,
    /// Median of `baseline_calls_ns`.
    pub baseline_ns_per_call: f64,
    pub pause_pair_ns: f64,
    pub checksum: u64,
    pub sampling_ms: f64,
    /// Whether the precision goal was reached (only for the precision rule).
    pub precision_reached: bool,
}

impl Measurement {
    /// Per-op times after subtracting the empty-guest call and calibrated
    /// pause/resume pairs, block by block.
    pub fn corrected_per_op(&self) -> Vec<Vec<f64>> {
        corrected(
            &self.blocks,
            &self.pauses,
            self.baseline_ns_per_call,
            self.pause_pair_ns,
            self.count,
        )
    }

    /// Per-op times as measured, block by block.
    pub fn raw_per_op(&self) -> Vec<Vec<f64>> {
        let count = self.count as f64;
        self.blocks
            .iter()
            .map(|b| b.iter().map(|ns| ns / count).collect())
            .collect()
    }

    /// Total pauses over all samples.
    pub fn total_pauses(&self) -> u64 {
        self.pauses.iter().flatten().sum()
    }
}

fn corrected(
    blocks: &[Vec<f64>],
    pauses: &[Vec<u64>],
    baseline: f64,
    pair: f64,
    count: u64,
) -> Vec<Vec<f64>> {
    let count = count as f64;
    blocks
        .iter()
        .enumerate()
        .map(|(b, block)| {
            block
                .iter()
                .enumerate()
                .map(|(i, ns)| {
                    let p = pauses.get(b).and_then(|p| p.get(i)).copied().unwrap_or(0) as f64;
                    (ns - baseline - p * pair) / count
                })
                .collect()
        })
        .collect()
}

/// Measure the run-wide calibration figures: the empty guest's call cost and
/// the pause/resume pair cost.
pub fn calibrate(
    clock: ClockCalibration,
    empty: &mut Instance,
    pause_pair: &mut Instance,
) -> Result<Calibration> {
    const PAIRS: u64 = 1_000;
    const CALLS: usize = 2_000;
    let seed = 0;
    let mut one = Vec::with_capacity(CALLS);
    let mut empty_at_pairs = Vec::with_capacity(CALLS / 10);
    let mut pairs = Vec::with_capacity(CALLS / 10);
    for _ in 0..CALLS {
        one.push(empty.sample(1, seed)?.elapsed_ns);
    }
    for _ in 0..CALLS / 10 {
        empty_at_pairs.push(empty.sample(PAIRS, seed)?.elapsed_ns);
        pairs.push(
            pause_pair
                .sample(PAIRS, seed)
                .context("calibrating pause/resume")?
                .elapsed_ns,
        );
    }
    let pause_pair_ns =
        ((stats::median(&pairs) - stats::median(&empty_at_pairs)) / PAIRS as f64).max(0.0);
    Ok(Calibration {
        clock,
        empty_call_ns: stats::median(&one),
        pause_pair_ns,
    })
}

/// Measure one benchmark. `started` is when work on it began (compile
/// included), for the time budget.
///
/// `guarded` is the copy with epoch checks: the warm-up and the pilot run on
/// it, and it must return from one call at the chosen count before `fast`,
/// the copy without checks, is warmed up and sampled at that count.
///
/// Stages and estimates go to `progress`, under the row name `name`.
#[allow(clippy::too_many_arguments)]
pub fn measure(
    plan: &Plan,
    calibration: &Calibration,
    guarded: &mut Instance,
    fast: &mut Instance,
    empty: &mut Instance,
    started: Instant,
    progress: &dyn Progress,
    name: &str,
) -> Result<Measurement> {
    progress.stage(name, Stage::Warmup);
    let (tuning, count) = tune(plan, calibration, guarded)?;
    progress.stage(name, Stage::Pilot);
    prove(guarded, count, plan.seed)?;
    let warmup = warm_up_at(plan, calibration, count, tuning, fast)?;
    progress.stage(name, Stage::Baseline);
    let blocks = Blocks::start(calibration, count, plan.seed, fast, empty)?;
    progress.stage(name, Stage::Sampling);
    sample(
        plan,
        calibration,
        blocks,
        warmup,
        fast,
        empty,
        started,
        &|per_op: &[Vec<f64>], left| {
            let all: Vec<f64> = per_op.iter().flatten().copied().collect();
            let median = stats::median(&all);
            let deviations: Vec<f64> = all
                .iter()
                .filter(|x| **x != 0.0)
                .map(|x| ((x - median) / x).abs() * 100.0)
                .collect();
            progress.estimate(name, median, stats::median(&deviations), left);
        },
    )
}

/// Warm up the guarded copy and pick the count (the pilot): returns the
/// warm-up record and the count.
pub fn tune(
    plan: &Plan,
    calibration: &Calibration,
    guarded: &mut Instance,
) -> Result<(Warmup, u64)> {
    let target = target_sample_time(plan.sample_time, calibration);
    let (warmup, warm_count) = warm_up(plan, target, guarded)?;
    let count = match plan.count {
        Some(n) => n.get(),
        None => pilot(warm_count, warmup.per_op_ns, target),
    };
    Ok((warmup, count))
}

/// One guarded call at `count`: the proof that the workload returns from it.
pub fn prove(guarded: &mut Instance, count: u64, seed: u64) -> Result<()> {
    guarded
        .sample(count, seed)
        .map(|_| ())
        .map_err(|e| anyhow::anyhow!("at count {count}: {e:#}"))
}

/// Warm up the fast copy at the chosen count; the record adds up both
/// warm-ups, and is settled when the fast copy's is.
pub fn warm_up_at(
    plan: &Plan,
    calibration: &Calibration,
    count: u64,
    tuning: Warmup,
    fast: &mut Instance,
) -> Result<Warmup> {
    let target = target_sample_time(plan.sample_time, calibration);
    let fixed = Plan {
        count: NonZeroU64::new(count),
        ..*plan
    };
    let (warmup, _) = warm_up(&fixed, target, fast)?;
    Ok(Warmup {
        elapsed_ms: tuning.elapsed_ms + warmup.elapsed_ms,
        settled: warmup.settled,
        rounds: tuning.rounds + warmup.rounds,
        per_op_ns: warmup.per_op_ns,
    })
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
pub fn pilot(warm_count: u64, per_op_ns: f64, target: Duration) -> u64 {
    if per_op_ns.is_nan() || per_op_ns <= 0.0 || per_op_ns.is_infinite() {
        return warm_count.max(1);
    }
    let count = (target.as_nanos() as f64 / per_op_ns).round();
    (count as u64).clamp(1, MAX_COUNT)
}

/// Warm up in rounds of about `target` each (at the fixed count, if the plan
/// has one); returns the warm-up record and the count reached.
pub fn warm_up(plan: &Plan, target: Duration, workload: &mut Instance) -> Result<(Warmup, u64)> {
    let start = Instant::now();
    let target_ns = target.as_nanos() as f64;
    let mut count = plan.count.map_or(1, NonZeroU64::get);
    let mut history: Vec<f64> = Vec::new();
    let mut returned_at = None;
    let mut rounds = 0;
    let mut settled = false;
    loop {
        rounds += 1;
        let (round_ns, calls) =
            round(workload, count, plan.seed, target_ns).map_err(|e| match returned_at {
                Some(good) if good != count => {
                    anyhow::anyhow!("at count {count} (it had returned at count {good}): {e:#}")
                }
                _ => anyhow::anyhow!("at count {count}: {e:#}"),
            })?;
        returned_at = Some(count);
        let per_call = round_ns / calls as f64;
        if plan.count.is_none() && per_call < target_ns / 2.0 && count < MAX_COUNT {
            // Too short: grow the count (at most 100x a round) and start over.
            let factor = (target_ns / per_call.max(1.0)).clamp(2.0, 100.0);
            count = ((count as f64 * factor) as u64).clamp(count + 1, MAX_COUNT);
            history.clear();
        } else {
            history.push(per_call / count as f64);
            if let Some(last) = history
                .len()
                .checked_sub(SETTLE_ROUNDS)
                .map(|i| &history[i..])
            {
                let (lo, hi) = last
                    .iter()
                    .fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
                if (hi - lo) <= SETTLE_TOLERANCE * stats::median(last) {
                    settled = true;
                    break;
                }
            }
        }
        if start.elapsed() >= plan.warmup_cap {
            break;
        }
    }
    let recent = &history[history.len().saturating_sub(SETTLE_ROUNDS)..];
    let per_op_ns = if recent.is_empty() {
        f64::NAN
    } else {
        stats::median(recent)
    };
    let warmup = Warmup {
        elapsed_ms: start.elapsed().as_secs_f64() * 1e3,
        settled,
        rounds,
        per_op_ns,
    };
    Ok((warmup, count))
}

/// Call the workload at `count` until at least `target_ns` of calls are
/// spent (at least once); returns the total time and the number of calls.
fn round(workload: &mut Instance, count: u64, seed: u64, target_ns: f64) -> Result<(f64, u64)> {
    let mut total = 0.0;
    let mut calls = 0;
    while total < target_ns || calls == 0 {
        total += workload.sample(count, seed)?.elapsed_ns;
        calls += 1;
    }
    Ok((total, calls))
}

/// Told, after every block, the per-op samples so far and the time left.
type Report<'a> = dyn Fn(&[Vec<f64>], Option<Duration>) + 'a;

/// Sample in blocks until the stop rule says so.
///
/// After every block, `report` gets the per-op samples so far and the time
/// left, if known.
#[allow(clippy::too_many_arguments)]
fn sample(
    plan: &Plan,
    calibration: &Calibration,
    mut blocks: Blocks,
    warmup: Warmup,
    workload: &mut Instance,
    empty: &mut Instance,
    started: Instant,
    report: &Report<'_>,
) -> Result<Measurement> {
    let count = blocks.count;
    let per_block = blocks.samples_per(BLOCK_TIME);
    loop {
        let block_len = match plan.stop {
            StopRule::Samples(n) => per_block
                .min(n.get() - blocks.taken)
                .max(1)
                .min(n.get().div_ceil(MIN_BLOCKS).max(1)),
            _ => per_block,
        };
        blocks.take(workload, empty, block_len)?;
        let per_op = blocks.corrected_per_op();
        let done = match plan.stop {
            StopRule::Samples(n) => blocks.taken >= n.get(),
            StopRule::Time(t) => blocks.started.elapsed() >= t,
            StopRule::Precision { pct, budget } => {
                if blocks.blocks.len() >= MIN_BLOCKS {
                    blocks.precision_reached = precise_enough(
                        &per_op,
                        pct,
                        calibration.clock.resolution_ns / count as f64,
                        plan.seed,
                    );
                }
                blocks.precision_reached || started.elapsed() >= budget
            }
        };
        if done || blocks.taken >= MAX_SAMPLES {
            break;
        }
        let left = match plan.stop {
            StopRule::Samples(n) => {
                let per_sample = blocks.started.elapsed() / blocks.taken.max(1) as u32;
                Some(per_sample * (n.get() - blocks.taken) as u32)
            }
            StopRule::Time(t) => Some(t.saturating_sub(blocks.started.elapsed())),
            StopRule::Precision { budget, .. } => Some(budget.saturating_sub(started.elapsed())),
        };
        report(&per_op, left);
    }
    Ok(blocks.finish(warmup))
}

/// Samples taken block by block, each block right after a few empty-guest
/// calls with the same count.
pub struct Blocks {
    count: u64,
    seed: u64,
    pause_pair_ns: f64,
    started: Instant,
    /// Time of one call in ns, block by block.
    pub blocks: Vec<Vec<f64>>,
    pauses: Vec<Vec<u64>>,
    baseline_calls_ns: Vec<f64>,
    checksum: u64,
    /// Samples taken so far.
    pub taken: usize,
    probe_ns: f64,
    precision_reached: bool,
}

impl Blocks {
    /// Start sampling `workload` at `count`: one probe call, and a few calls
    /// of the empty guest to warm it at this count.
    pub fn start(
        calibration: &Calibration,
        count: u64,
        seed: u64,
        workload: &mut Instance,
        empty: &mut Instance,
    ) -> Result<Self> {
        let started = Instant::now();
        let probe = workload.sample(count, seed)?;
        for _ in 0..BASELINE_CALLS_PER_BLOCK {
            empty.sample(count, seed)?;
        }
        Ok(Blocks {
            count,
            seed,
            pause_pair_ns: calibration.pause_pair_ns,
            started,
            blocks: Vec::new(),
            pauses: Vec::new(),
            baseline_calls_ns: Vec::new(),
            checksum: probe.checksum,
            taken: 0,
            probe_ns: probe.elapsed_ns,
            precision_reached: false,
        })
    }

    /// How many samples fill about `time`.
    pub fn samples_per(&self, time: Duration) -> usize {
        ((time.as_nanos() as f64 / self.probe_ns.max(1.0)) as usize)
            .clamp(BLOCK_SAMPLES.0, BLOCK_SAMPLES.1)
    }

    /// Take one block of `len` samples.
    pub fn take(
        &mut self,
        workload: &mut Instance,
        empty: &mut Instance,
        len: usize,
    ) -> Result<()> {
        for _ in 0..BASELINE_CALLS_PER_BLOCK {
            self.baseline_calls_ns
                .push(empty.sample(self.count, self.seed)?.elapsed_ns);
        }
        let mut block = Vec::with_capacity(len);
        let mut block_pauses = Vec::with_capacity(len);
        for _ in 0..len {
            let RawSample {
                elapsed_ns,
                pauses,
                checksum,
            } = workload.sample(self.count, self.seed)?;
            block.push(elapsed_ns);
            block_pauses.push(pauses);
            self.checksum = checksum;
        }
        self.taken += block.len();
        self.blocks.push(block);
        self.pauses.push(block_pauses);
        Ok(())
    }

    /// Per-op times so far, corrected with the empty-guest calls so far.
    pub fn corrected_per_op(&self) -> Vec<Vec<f64>> {
        corrected(
            &self.blocks,
            &self.pauses,
            stats::median(&self.baseline_calls_ns),
            self.pause_pair_ns,
            self.count,
        )
    }

    /// The measurement these blocks make.
    pub fn finish(self, warmup: Warmup) -> Measurement {
        let pauses = match self.pauses.iter().flatten().all(|&p| p == 0) {
            true => Vec::new(),
            false => self.pauses,
        };
        Measurement {
            count: self.count,
            warmup,
            baseline_ns_per_call: stats::median(&self.baseline_calls_ns),
            blocks: self.blocks,
            pauses,
            baseline_calls_ns: self.baseline_calls_ns,
            pause_pair_ns: self.pause_pair_ns,
            checksum: self.checksum,
            sampling_ms: self.started.elapsed().as_secs_f64() * 1e3,
            precision_reached: self.precision_reached,
        }
    }
}

/// Whether the 95% interval of the median is within `pct` percent of it, or
/// narrower than `floor_ns` (one clock tick spread over the count) either side.
pub fn precise_enough(per_op: &[Vec<f64>], pct: f64, floor_ns: f64, seed: u64) -> bool {
    let all: Vec<f64> = per_op.iter().flatten().copied().collect();
    let median = stats::median(&all);
    let (low, high) = stats::median_ci(per_op, 0.95, RESAMPLES_WHILE_SAMPLING, seed);
    let half_width = (median - low).max(high - median);
    stats::relative_half_width_pct(median, low, high) <= pct || half_width <= floor_ns
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calibration(resolution_ns: f64, empty_call_ns: f64) -> Calibration {
        Calibration {
            clock: ClockCalibration {
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
    fn pilot_fills_the_target() {
        assert_eq!(pilot(1, 0.5, Duration::from_millis(1)), 2_000_000);
        assert_eq!(pilot(1, 2e6, Duration::from_millis(1)), 1);
        assert_eq!(pilot(7, f64::NAN, Duration::from_millis(1)), 7);
        assert_eq!(pilot(1, 1e-12, Duration::from_millis(1)), MAX_COUNT);
    }

    #[test]
    fn correction_subtracts_baseline_and_pauses_per_call() {
        let blocks = vec![vec![1030.0, 1130.0]];
        let pauses = vec![vec![0, 2]];
        let per_op = corrected(&blocks, &pauses, 30.0, 50.0, 100);
        assert_eq!(per_op, vec![vec![10.0, 10.0]]);
        // Without pause records, nothing is subtracted for pauses.
        assert_eq!(
            corrected(&blocks, &[], 30.0, 50.0, 100),
            vec![vec![10.0, 11.0]]
        );
    }

    #[test]
    fn precision_rule() {
        let tight: Vec<Vec<f64>> = (0..4)
            .map(|b| {
                (0..50)
                    .map(|i| 100.0 + ((i * 7 + b) % 5) as f64 * 0.01)
                    .collect()
            })
            .collect();
        assert!(precise_enough(&tight, 1.0, 0.0, 1));
        // Blocks centred 10% apart: the interval spans them.
        let loose: Vec<Vec<f64>> = (0..4)
            .map(|b| {
                (0..50)
                    .map(|i| 100.0 + 10.0 * b as f64 + (i % 5) as f64 * 0.01)
                    .collect()
            })
            .collect();
        assert!(!precise_enough(&loose, 1.0, 0.0, 1));
        // Around zero only the absolute floor can be met.
        let zero: Vec<Vec<f64>> = (0..4)
            .map(|b| {
                let mut rng = fastrand::Rng::with_seed(b);
                (0..50).map(|_| (rng.f64() - 0.5) * 1e-8).collect()
            })
            .collect();
        assert!(!precise_enough(&zero, 1.0, 0.0, 1));
        assert!(precise_enough(&zero, 1.0, 1e-8, 1));
    }
}
