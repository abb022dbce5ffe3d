//! Verdicts of interleaved variants: each variant against the reference.
//!
//! Rounds pair the variants: in every round of every worker process each
//! variant took one block, so the ratio of the two blocks' least-disturbed
//! per-op times (their minima) is one paired observation. Its 95% interval
//! is the sign-test interval over every round
//! ([`crate::analysis::verdict::paired_ratio`]), widened by the design
//! effect when the processes disagree more than their rounds predict
//! ([`design_effect`]), so that it holds for both sources of variation. The
//! ratio itself is that of the variants' rows: each row is the median of its
//! rounds' minima ([`crate::analysis::estimate::locate_rounds`]), and the
//! interval holds their ratio ([`made_of`]), so that the rows shown beside
//! a verdict and its ratio tell one story. With instruction counts, the
//! ratio is exact. Pure arithmetic over what the workers measured.
//!
//! Programs ([`judge_programs`]): a round is one iteration of each variant,
//! and its per-op time for a phase is that iteration's time in the phase
//! (for execute, its fastest timed region: the one region of a program that
//! brackets its work once). Every phase gets a ratio and a verdict this
//! way; the execute phase's is the comparison's own, which the stop rule
//! reads.
//!
//! Why the minimum of a block: every sample of a block repeats the same call
//! (same count, same seed), so what varies between them is what the machine
//! added (an interrupt, another tenant on the core, a cache someone else
//! flushed), and that only ever adds time. The least-disturbed sample is
//! then the most repeatable estimate of the work, as Julia's BenchmarkTools
//! argues for its `judge` (Chen and Revels, "Robust benchmarking in noisy
//! environments", 2016). On a shared VM whose samples scatter by 3% around
//! the median, block minima of two variants 1% apart give per-round ratios
//! of 1.0100 within a few hundredths of a percent, where block medians
//! scatter by a percent. A round whose minimum is off (a variant caught a
//! faster or slower state of the machine for a whole block) is one round:
//! the median over rounds and its sign-test interval do not rest on it.

use crate::analysis::estimate;
use crate::analysis::stats::{self, normal_quantile};
use crate::analysis::verdict;
use crate::options::{Metric, NoiseBand};
use crate::results::{Comparison, Foreign, PhaseComparison, ProgramPhase, Ratio};

/// What the verdicts need of one variant.
pub struct Rounds<'a> {
    pub name: &'a str,
    /// Per worker process, per round, the corrected per-op epochs
    /// ([`crate::analysis::epochs::corrected`]): one per sample at the
    /// default 1 ms target; a block of samples shorter than half an epoch
    /// is one epoch, the mean of its calls less the interrupted ones. A
    /// program's round: its iteration's times in the phase judged.
    pub per_op: Vec<Vec<Vec<f64>>>,
    /// The deterministic cost per op of the metric compared by
    /// (instructions, estimated cycles), when measured.
    pub exact_per_op: Option<f64>,
}

impl Rounds<'_> {
    /// The least-disturbed per-op time of each round (its block's smallest
    /// epoch), per process.
    fn least(&self) -> Vec<Vec<f64>> {
        self.per_op
            .iter()
            .map(|rounds| rounds.iter().map(|block| least(block)).collect())
            .collect()
    }
}

/// The smallest of a block's per-op times ([`estimate::least_of`]; NaN for
/// an empty block, so that its round drops out of the ratios).
fn least(block: &[f64]) -> f64 {
    estimate::least_of(block).unwrap_or(f64::NAN)
}

/// The ratio of `variant` to `reference` over paired rounds, per process.
///
/// The sign-test interval over every round assumes the rounds independent.
/// When the processes disagree more than their rounds predict (each process
/// has an effect of its own), the rounds are clustered: the interval is
/// widened, in log space, by the square root of the design effect, the
/// observed variance of the processes' median log-ratios over the variance
/// their rounds alone would give them (Kish's design effect; never below 1).
pub fn paired_across_processes(
    variant: &[Vec<f64>],
    reference: &[Vec<f64>],
    confidence: f64,
) -> Option<Ratio> {
    let per_process = paired_logs(variant, reference);
    let pooled: Vec<f64> = per_process.concat();
    let ratios: Vec<f64> = pooled.iter().map(|l| l.exp()).collect();
    let within = verdict::paired_ratio(&ratios, confidence)?;
    let effect = design_effect(&per_process);
    if effect > 1.0 && (effect.is_infinite() || within.low >= within.high) {
        // No spread within the rounds to scale (block minima can repeat to
        // the nanosecond), yet the processes disagree: the interval is the
        // sign-test interval of the processes' medians (their extremes
        // while there are too few of them for one).
        let medians: Vec<f64> = per_process.iter().map(|p| stats::median(p).exp()).collect();
        let between = verdict::paired_ratio(&medians, confidence)?;
        return Some(Ratio {
            value: within.value,
            low: between.low.min(within.value),
            high: between.high.max(within.value),
        });
    }
    let centre = within.value.ln();
    let widen = effect.sqrt();
    // The processes' own interval (Student's t over their median
    // log-ratios) caps the widening: where the rounds of each process barely
    // move (an interpreter's minima repeat to the last digits) but the
    // pooled interval spans the processes, the design effect is huge, and
    // the widened interval with it (a wasmi comparison read an upper bound
    // of 10^22).
    // Its 95% half-width is scaled to `confidence` by the normal quantiles.
    let medians: Vec<f64> = per_process.iter().map(|p| stats::median(p)).collect();
    let (_, high_95) = stats::between_processes_ci(centre, &medians);
    let scale = normal_quantile(1.0 - (1.0 - confidence) / 2.0) / normal_quantile(0.975);
    let cap = (high_95 - centre) * scale.max(1.0);
    let low = (centre - (centre - within.low.ln()) * widen).max(centre - cap);
    let high = (centre + (within.high.ln() - centre) * widen).min(centre + cap);
    Some(Ratio {
        value: within.value,
        low: low.exp().min(within.low),
        high: high.exp().max(within.high),
    })
}

/// The log ratio of each pair of rounds of `variant` and `reference`, per
/// worker process (a process without one left out).
fn paired_logs(variant: &[Vec<f64>], reference: &[Vec<f64>]) -> Vec<Vec<f64>> {
    (variant.iter().zip(reference))
        .map(|(v, r)| {
            (v.iter().zip(r))
                .map(|(a, b)| (a / b).ln())
                .filter(|l| l.is_finite())
                .collect::<Vec<f64>>()
        })
        .filter(|logs| !logs.is_empty())
        .collect()
}

/// The log ratios of the paired rounds of `variant` and `reference` when
/// they are too few for the sign test ([`verdict::sign_test_rank`]), all
/// of one worker process: two or more, whose interval at `confidence` is
/// Student's t over them, or one, which has none ([`one_round`]). Empty
/// otherwise. What a suite pools
/// the rounds' spread from ([`crate::analysis::few_rounds`]).
pub fn few_rounds(variant: &[Vec<f64>], reference: &[Vec<f64>], confidence: f64) -> Vec<f64> {
    match paired_logs(variant, reference).as_slice() {
        [one] if verdict::sign_test_rank(one.len(), 1.0 - confidence).is_none() => one.clone(),
        _ => Vec::new(),
    }
}

/// The ratio of two variants' medians of their rounds' least per-op times
/// (the figures their rows show: [`crate::analysis::estimate::locate_rounds`]),
/// with the interval of the paired rounds ([`paired_across_processes`])
/// stretched to hold it. The median of the paired ratios and the ratio of
/// the medians differ by a few hundredths of a percent on a quiet machine;
/// where they differ more, the interval holds both rather than contradict
/// the rows shown beside it.
pub fn made_of(variant: &[Vec<f64>], reference: &[Vec<f64>], confidence: f64) -> Option<Ratio> {
    let Some(paired) = paired_across_processes(variant, reference, confidence) else {
        return one_round(variant, reference);
    };
    let median = |rounds: &[Vec<f64>]| {
        let all: Vec<f64> = rounds
            .concat()
            .into_iter()
            .filter(|x| x.is_finite())
            .collect();
        stats::median(&all)
    };
    let value = median(variant) / median(reference);
    if !value.is_finite() {
        return Some(paired);
    }
    Some(Ratio {
        value,
        low: paired.low.min(value),
        high: paired.high.max(value),
    })
}

/// The ratio of a single pair of rounds, with no interval (NaN bounds: its
/// verdict unsure): a suite's first look at a long program, whose interval
/// the suite's other rounds give ([`crate::analysis::few_rounds`]). `None`
/// for no pair, or more than one (those have an interval).
fn one_round(variant: &[Vec<f64>], reference: &[Vec<f64>]) -> Option<Ratio> {
    match paired_logs(variant, reference).concat().as_slice() {
        [log] => Some(Ratio {
            value: log.exp(),
            low: f64::NAN,
            high: f64::NAN,
        }),
        _ => None,
    }
}

/// Kish's design effect of rounds clustered in processes: the variance of
/// the processes' medians over the variance their rounds predict for a
/// median (π/2 · s² / n, for rounds of spread s), at least 1. With fewer
/// than three processes there is nothing to compare: 1. Infinite when the
/// processes disagree but no process has any spread of its own.
pub fn design_effect(per_process: &[Vec<f64>]) -> f64 {
    if per_process.len() < 3 {
        return 1.0;
    }
    let medians: Vec<f64> = per_process.iter().map(|p| stats::median(p)).collect();
    let observed = stats::sample_sd(&medians).powi(2);
    let predicted: Vec<f64> = per_process
        .iter()
        .map(|p| std::f64::consts::FRAC_PI_2 * stats::sample_sd(p).powi(2) / p.len() as f64)
        .collect();
    let predicted = predicted.iter().sum::<f64>() / predicted.len() as f64;
    match predicted > 0.0 {
        true => (observed / predicted).max(1.0),
        false if observed > 0.0 => f64::INFINITY,
        false => 1.0,
    }
}

/// Rounds, in all, before the verdicts may stop a comparison.
pub const MIN_ROUNDS: usize = 30;
/// Fewest worker processes before the verdicts may stop a comparison.
pub const MIN_COMPARE_PROCESSES: usize = 3;

/// The error each early look ([`Look::settled_early`]) may spend on a false
/// verdict, shared over the comparisons (against the 5% of every verdict).
pub const EARLY_ALPHA: f64 = 0.001;

/// The sequential stop rule of a comparison, looked at after every worker
/// process: stop once every verdict is settled, after at least
/// [`MIN_COMPARE_PROCESSES`] processes and [`MIN_ROUNDS`] rounds (the
/// caller also stops at its time cap, and may stop at the early look,
/// [`Look::settled_early`]). A verdict is settled when it is certain (faster,
/// slower or same) or when its smallest detectable effect lies well inside
/// the noise band: an interval that straddles one of the band's edges and
/// is narrower than half the band ([`SETTLED_FRACTION`]), so that more
/// rounds would only tell on which side of the edge, within a quarter of
/// the band, the ratio lies; it stays "unsure". Looking again and again
/// inflates false verdicts; stopping on an unsure verdict makes none. The
/// test `sequential_stopping_error_rates` measures the rule, early look
/// included, on data with known answers.
pub fn may_stop(
    processes: usize,
    rounds: usize,
    comparisons: &[Comparison],
    band: NoiseBand,
) -> bool {
    processes >= MIN_COMPARE_PROCESSES
        && rounds >= MIN_ROUNDS
        && comparisons
            .iter()
            .all(|c| c.verdict.is_certain() || c.mde_pct < band.half() * 100.0 * SETTLED_FRACTION)
}

/// How narrow, against the band's half-width, the interval of an unsure
/// verdict must be for the verdict to be settled: a half-width of half the
/// band's leaves a real difference a little beyond the edge (a 1% one
/// against ±0.5%) the rounds to become certain first.
pub const SETTLED_FRACTION: f64 = 0.5;

/// Rounds, in all, a comparison takes whatever its time, unless every
/// verdict is certain at two ([`Look::short_of_rounds`]). One round has no
/// interval; two give Student's t of one degree of freedom, 12.7 standard
/// errors either side, so that a long program twice as slow stays unsure
/// when one of its iterations ran 10% slow; three give 4.3. A long
/// program's round can last half a minute, so a comparison stopped by its
/// time takes the third only when the second leaves a verdict open.
pub const LEAST_ROUNDS: usize = 3;

/// The error the look at two rounds ([`Look::short_of_rounds`]) may spend
/// on a false verdict: half the 5% of every verdict. A comparison stopped
/// by its time is looked at twice, at two rounds and at three, so that its
/// chance of a false verdict is at most this and the 5% of the verdict at
/// three.
pub const TWO_ROUNDS_ALPHA: f64 = 0.025;

/// What a look at a comparison's verdicts before its stop rule reads: the
/// rounds of every variant, the reference's place among them, the noise
/// band and the metric.
pub struct Look<'a> {
    pub variants: &'a [Rounds<'a>],
    pub reference: usize,
    pub band: NoiseBand,
    pub metric: Metric,
}

impl Look<'_> {
    /// The early look, after at least [`MIN_COMPARE_PROCESSES`] processes
    /// but fewer than [`MIN_ROUNDS`] rounds (a comparison of programs, whose
    /// workers take few rounds each): whether every verdict is already
    /// certain at 1 − [`EARLY_ALPHA`]/k (`all_certain`). A ratio far
    /// from the band (winch against cranelift, 2×) passes; one near it waits
    /// for the rule of [`may_stop`]. Each early look adds at most
    /// [`EARLY_ALPHA`] to the chance of a false verdict.
    pub fn settled_early(&self, processes: usize, rounds: usize) -> bool {
        processes >= MIN_COMPARE_PROCESSES && rounds < MIN_ROUNDS && self.all_certain(EARLY_ALPHA)
    }

    /// Whether a comparison of `rounds` rounds that its time has stopped
    /// takes another round all the same: while it has fewer than
    /// [`LEAST_ROUNDS`], unless every verdict is already certain at
    /// 1 − [`TWO_ROUNDS_ALPHA`]/k (`all_certain`).
    pub fn short_of_rounds(&self, rounds: usize) -> bool {
        rounds < LEAST_ROUNDS && !self.all_certain(TWO_ROUNDS_ALPHA)
    }

    /// Whether every verdict against the reference is certain at
    /// 1 − `alpha`/k (k comparisons), its interval made as the verdict's is
    /// (the sign test over the rounds, widened by the design effect of the
    /// processes; an exact ratio where the metric counts).
    fn all_certain(&self, alpha: f64) -> bool {
        let base = &self.variants[self.reference];
        let base_rounds = base.least();
        let k = self.variants.len().saturating_sub(1).max(1);
        let confidence = 1.0 - alpha / k as f64;
        (self.variants.iter().enumerate())
            .filter(|&(i, _)| i != self.reference)
            .all(|(_, v)| {
                let ratio = match (self.metric, v.exact_per_op, base.exact_per_op) {
                    (Metric::Instructions | Metric::CyclesEst, Some(now), Some(then))
                        if then > 0.0 =>
                    {
                        Some(Ratio::exact(now / then))
                    }
                    _ => made_of(&v.least(), &base_rounds, confidence),
                };
                ratio.is_some_and(|r| verdict::verdict(&r, self.band).is_certain())
            })
    }
}

/// The rounds, in all, at which `comparison`'s interval, made of `rounds`
/// rounds, would no longer reach into the noise band, were the rounds to
/// come spread as they have: the interval's side toward the band narrows
/// as Student's t of its degrees of freedom and 1/√n. Its present rounds
/// when it is certain. `None` for a close call (its ratio inside the band,
/// which more rounds settle only by narrowing the interval to a fraction of
/// the band, [`may_stop`]), and past `most` rounds. What a suite's second
/// pass orders its open verdicts by: the fewest rounds to a verdict first.
pub fn rounds_to_certain(
    comparison: &Comparison,
    rounds: usize,
    band: NoiseBand,
    most: usize,
) -> Option<usize> {
    if comparison.verdict.is_certain() {
        return Some(rounds);
    }
    let Ratio { value, low, high } = comparison.ratio;
    let edge = (1.0 + band.half()).ln();
    let (gap, side) = match value >= 1.0 {
        true => (value.ln() - edge, (value / low).ln()),
        false => (-value.ln() - edge, (high / value).ln()),
    };
    if !(gap > 0.0 && side.is_finite() && rounds >= 2) {
        return None;
    }
    let t = stats::student_t_975(rounds - 1);
    (rounds + 1..=most)
        .find(|&n| side * stats::student_t_975(n - 1) / t * (rounds as f64 / n as f64).sqrt() < gap)
}

/// The confidence of each of `k` intervals that hold together at 95%.
pub fn family_confidence(k: usize) -> f64 {
    1.0 - 0.05 / k.max(1) as f64
}

/// The verdict of every variant against `variants[reference]`.
pub fn judge(
    variants: &[Rounds<'_>],
    reference: usize,
    band: NoiseBand,
    metric: Metric,
) -> Vec<Comparison> {
    let base = &variants[reference];
    let base_rounds = base.least();
    // Family-wise 95%: with k comparisons, each interval at 1 − 0.05/k
    // (Bonferroni), so that all k hold together at least 95% of the time.
    let confidence = family_confidence(variants.len().saturating_sub(1));
    variants
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != reference)
        .map(|(_, v)| {
            let (ratio, judged_by, few) = match (metric, v.exact_per_op, base.exact_per_op) {
                (Metric::Instructions | Metric::CyclesEst, Some(now), Some(then)) if then > 0.0 => {
                    (Some(Ratio::exact(now / then)), metric, Vec::new())
                }
                _ => {
                    let least = v.least();
                    let ratio = made_of(&least, &base_rounds, confidence);
                    let few = few_rounds(&least, &base_rounds, confidence);
                    (ratio, Metric::Time, few)
                }
            };
            let ratio = ratio.unwrap_or(Ratio::exact(f64::NAN));
            let verdict = verdict::verdict(&ratio, band);
            Comparison {
                variant: Foreign::new(v.name),
                reference: Foreign::new(base.name),
                metric: Foreign::new(judged_by.name()),
                ratio,
                confidence,
                mde_pct: verdict::mde_pct(&ratio),
                verdict,
                text: verdict::describe(
                    &Foreign::new(v.name),
                    &Foreign::new(base.name),
                    &ratio,
                    verdict,
                    band,
                ),
                phases: Vec::new(),
                few_rounds: few,
            }
        })
        .collect()
}

/// The rounds of program variants, per phase, in the variants' order.
pub struct ProgramRounds<'a> {
    pub execute: Vec<Rounds<'a>>,
    pub instantiate: Vec<Rounds<'a>>,
    /// When every variant compiles per iteration.
    pub compile: Option<Vec<Rounds<'a>>>,
}

/// The verdict of every program variant against `reference`: that of the
/// execute phase (by `metric`), with the ratio of every phase (compile,
/// when timed; instantiate; execute), each by time at the same confidence.
pub fn judge_programs(
    rounds: &ProgramRounds<'_>,
    reference: usize,
    band: NoiseBand,
    metric: Metric,
) -> Vec<Comparison> {
    let mut comparisons = judge(&rounds.execute, reference, band, metric);
    let mut others = Vec::new();
    if let Some(compile) = &rounds.compile {
        others.push(judge(compile, reference, band, Metric::Time));
    }
    others.push(judge(&rounds.instantiate, reference, band, Metric::Time));
    let phases = [ProgramPhase::Compile, ProgramPhase::Instantiate];
    let phases = &phases[phases.len() - others.len()..];
    for (i, comparison) in comparisons.iter_mut().enumerate() {
        let mut judged: Vec<PhaseComparison> = phases
            .iter()
            .zip(&others)
            .map(|(&phase, judged)| phase_of(phase, &judged[i]))
            .collect();
        judged.push(phase_of(ProgramPhase::Execute, comparison));
        comparison.phases = judged;
    }
    comparisons
}

/// `comparison` as the judgement of `phase`.
fn phase_of(phase: ProgramPhase, comparison: &Comparison) -> PhaseComparison {
    PhaseComparison {
        phase,
        ratio: comparison.ratio,
        mde_pct: comparison.mde_pct,
        verdict: comparison.verdict,
        text: comparison.text.after(&format!("{phase}: ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Verdict;

    /// Rounds per worker process in the simulations, as the worker takes
    /// them (`benchmark::parent::compare::ROUNDS_PER_PROCESS`).
    const ROUNDS: usize = 10;
    /// Rounds per worker process of programs
    /// (`benchmark::parent::compare::PROGRAM_ROUNDS_PER_PROCESS`).
    const PROGRAM_ROUNDS: usize = 6;

    /// Variants `a` and `b` of these rounds (per process, per round, a
    /// block), timed.
    fn pair(a: Vec<Vec<Vec<f64>>>, b: Vec<Vec<Vec<f64>>>) -> [Rounds<'static>; 2] {
        let rounds = |name, per_op| Rounds {
            name,
            per_op,
            exact_per_op: None,
        };
        [rounds("a", a), rounds("b", b)]
    }

    /// A look at `variants` against the first, in the default band, by time.
    fn look<'a>(variants: &'a [Rounds<'a>]) -> Look<'a> {
        Look {
            variants,
            reference: 0,
            band: NoiseBand::default(),
            metric: Metric::Time,
        }
    }

    /// One synthetic comparison with a known true ratio: processes of
    /// `per_process` rounds, each round's per-op times log-normal around 100 ns with
    /// `noise` (relative sd) per sample and a process effect of
    /// `process_noise`, stopped by the early look ([`Look::settled_early`]), by
    /// [`may_stop`] or after 30 processes: its verdict and processes.
    fn simulate(
        true_ratio: f64,
        noise: f64,
        process_noise: f64,
        per_process: usize,
        rng: &mut fastrand::Rng,
    ) -> (Verdict, usize) {
        let normal = crate::analysis::stats::normal;
        let mut a: Vec<Vec<Vec<f64>>> = Vec::new();
        let mut b: Vec<Vec<Vec<f64>>> = Vec::new();
        let mut rounds = 0;
        let band = NoiseBand::default();
        for process in 1..=30 {
            let effect = process_noise * normal(rng);
            let mut pa = Vec::new();
            let mut pb = Vec::new();
            for _ in 0..per_process {
                pa.push(vec![100.0 * (noise * normal(rng)).exp()]);
                pb.push(vec![
                    100.0 * true_ratio * (effect + noise * normal(rng)).exp(),
                ]);
            }
            a.push(pa);
            b.push(pb);
            rounds += per_process;
            let variants = pair(a.clone(), b.clone());
            let c = judge(&variants, 0, band, Metric::Time);
            let early = look(&variants).settled_early(process, rounds);
            if early || may_stop(process, rounds, &c, band) || process == 30 {
                return (c[0].verdict, process);
            }
        }
        (Verdict::Unsure, 30)
    }

    /// One pair of rounds gives its ratio and no interval (unsure), and is
    /// a comparison on too few rounds, which a suite gives an interval;
    /// two give Student's t's; none, no ratio.
    #[test]
    fn one_round_has_its_ratio_and_no_interval() {
        let (variant, reference) = (vec![vec![150.0]], vec![vec![100.0]]);
        let Some(one) = made_of(&variant, &reference, 0.95) else {
            panic!("one pair has a ratio");
        };
        assert!((one.value - 1.5).abs() < 1e-12, "{one:?}");
        assert!(one.low.is_nan() && one.high.is_nan(), "{one:?}");
        let band = NoiseBand::default();
        assert_eq!(verdict::verdict(&one, band), Verdict::Unsure);
        assert_eq!(few_rounds(&variant, &reference, 0.95), [1.5f64.ln()]);
        let two = made_of(&[vec![150.0, 160.0]], &[vec![100.0, 100.0]], 0.95);
        assert!(two.is_some_and(|r| r.low.is_finite() && r.high.is_finite()));
        assert!(made_of(&[vec![]], &[vec![]], 0.95).is_none());
    }

    /// The stop rule on data with known answers: no difference, and a
    /// real 1% one, at a per-sample noise of 1% and process effects of
    /// 0.1%, in workers of 10 rounds (calls) and of 6 (programs, looked at
    /// early as well). Looking after every process must not make false
    /// verdicts common: A against A may come out "faster" or "slower" in at
    /// most 5% of comparisons, and a real 1% difference must not come out
    /// "faster" or "same".
    #[test]
    fn sequential_stopping_error_rates() {
        for per_process in [ROUNDS, PROGRAM_ROUNDS] {
            error_rates(per_process);
        }
    }

    fn error_rates(per_process: usize) {
        let mut rng = fastrand::Rng::with_seed(42);
        let trials = 300;
        let mut false_difference = 0;
        let mut wrong_on_real = 0;
        let mut found_real = 0;
        for _ in 0..trials {
            if matches!(
                simulate(1.0, 0.01, 0.001, per_process, &mut rng).0,
                Verdict::Faster | Verdict::Slower
            ) {
                false_difference += 1;
            }
            match simulate(1.01, 0.01, 0.001, per_process, &mut rng).0 {
                Verdict::Slower => found_real += 1,
                Verdict::Faster | Verdict::Same => wrong_on_real += 1,
                Verdict::Unsure => {}
            }
        }
        let rate = |n: usize| n as f64 / trials as f64;
        eprintln!(
            "{per_process} rounds a process: A vs A: {false_difference} of {trials} false; 1%: {found_real} slower, {wrong_on_real} wrong"
        );
        assert!(
            rate(false_difference) <= 0.05,
            "A vs A: {false_difference} of {trials} false"
        );
        assert!(
            rate(wrong_on_real) <= 0.05,
            "1%: {wrong_on_real} of {trials} wrong"
        );
        assert!(
            rate(found_real) >= 0.9,
            "1%: found in {found_real} of {trials}"
        );
    }

    /// The early look: a large difference (2×) between programs stops at
    /// the fewest processes, with process effects of 1%; A against A and a
    /// difference at the band's edge, with the same process effects (which
    /// three processes estimate roughly), come out certain at an early look
    /// in at most 1% of comparisons (3 of 600 with this seed).
    #[test]
    fn the_early_look_stops_large_differences_only() {
        let mut rng = fastrand::Rng::with_seed(11);
        let trials = 300;
        let mut early_large = 0;
        let mut false_early = 0;
        let early = |processes: usize| processes * PROGRAM_ROUNDS < MIN_ROUNDS;
        for _ in 0..trials {
            let (verdict, processes) = simulate(2.0, 0.01, 0.01, PROGRAM_ROUNDS, &mut rng);
            if verdict == Verdict::Slower && processes == MIN_COMPARE_PROCESSES {
                early_large += 1;
            }
            for ratio in [1.0, 1.005] {
                let (verdict, processes) = simulate(ratio, 0.01, 0.01, PROGRAM_ROUNDS, &mut rng);
                if early(processes) && verdict.is_certain() && verdict != Verdict::Same {
                    false_early += 1;
                }
            }
        }
        eprintln!("2x: {early_large} of {trials} at the early look; {false_early} false there");
        assert!(
            early_large >= trials * 95 / 100,
            "{early_large} of {trials}"
        );
        assert!(
            false_early <= 2 * trials / 100,
            "{false_early} of {} false at the early look",
            2 * trials
        );
    }

    /// A long program's comparison stopped by its time, its rounds one
    /// iteration each with 3% noise, one process: two rounds of a 2×
    /// difference are enough in most comparisons (a third is taken in 106
    /// of 1000 with this seed), where without a difference a third round is
    /// taken in most, and the verdict, looked at twice, is false in about
    /// the 2.5% and 5% of the two looks together (7.5%; 72 of 1000 with
    /// this seed, whose binomial spread is 0.8%).
    #[test]
    fn two_rounds_suffice_for_a_large_difference_only() {
        let mut rng = fastrand::Rng::with_seed(5);
        let normal = crate::analysis::stats::normal;
        let band = NoiseBand::default();
        let trials = 1000;
        let mut taken = |ratio: f64| -> (usize, Verdict) {
            let mut iteration = |scale: f64| vec![scale * (0.03 * normal(&mut rng)).exp()];
            let (mut a, mut b) = (Vec::new(), Vec::new());
            loop {
                a.push(iteration(1.0));
                b.push(iteration(ratio));
                let variants = pair(vec![a.clone()], vec![b.clone()]);
                let rounds = a.len();
                if rounds >= 2 && !look(&variants).short_of_rounds(rounds) {
                    return (rounds, judge(&variants, 0, band, Metric::Time)[0].verdict);
                }
            }
        };
        let large: Vec<(usize, Verdict)> = (0..trials).map(|_| taken(2.0)).collect();
        let null: Vec<(usize, Verdict)> = (0..trials).map(|_| taken(1.0)).collect();
        let thirds = |outcomes: &[(usize, Verdict)]| {
            (outcomes.iter())
                .filter(|(r, _)| *r == LEAST_ROUNDS)
                .count()
        };
        let (large_thirds, null_thirds) = (thirds(&large), thirds(&null));
        let false_verdicts = (null.iter())
            .filter(|(_, v)| matches!(v, Verdict::Faster | Verdict::Slower))
            .count();
        eprintln!(
            "2x: third round in {large_thirds} of {trials}; 1x: {null_thirds}, {false_verdicts} false"
        );
        assert!(
            large_thirds < trials * 15 / 100,
            "{large_thirds} of {trials}"
        );
        assert!(null_thirds > trials * 9 / 10, "{null_thirds} of {trials}");
        assert!(
            false_verdicts <= trials * 8 / 100,
            "{false_verdicts} of {trials}"
        );
    }

    /// Blocks of five samples, each disturbed with probability ½ by an
    /// added time (exponential, mean 5%), as a shared machine disturbs: the
    /// ratio of block minima finds a 1% difference to within 0.05%, with an
    /// interval narrower than 0.2%, where the medians of the same blocks
    /// would scatter by a percent.
    #[test]
    fn block_minima_see_through_added_time() {
        let mut rng = fastrand::Rng::with_seed(7);
        let mut block = |clean: f64| -> Vec<f64> {
            (0..5)
                .map(|_| match rng.bool() {
                    true => clean * (1.0 - 0.05 * rng.f64().max(1e-12).ln()),
                    false => clean,
                })
                .collect()
        };
        let mut a = Vec::new();
        let mut b = Vec::new();
        for _ in 0..3 {
            a.push((0..ROUNDS).map(|_| block(100.0)).collect::<Vec<_>>());
            b.push((0..ROUNDS).map(|_| block(101.0)).collect::<Vec<_>>());
        }
        let variants = pair(a, b);
        let c = &judge(&variants, 0, NoiseBand::default(), Metric::Time)[0];
        assert_eq!(c.verdict, Verdict::Slower, "{}", c.text.unescaped());
        assert!(
            (c.ratio.value - 1.01).abs() < 5e-4,
            "{}",
            c.text.unescaped()
        );
        assert!(c.ratio.high - c.ratio.low < 2e-3, "{}", c.text.unescaped());
        // An empty block drops out of the ratios instead of poisoning them.
        assert!(least(&[]).is_nan());
        assert_eq!(least(&[3.0, 1.0, 2.0]), 1.0);
    }

    #[test]
    fn processes_that_disagree_widen_the_interval() -> Result<(), String> {
        // Within each process the rounds agree closely; the processes do
        // not: 0.99, 1.00, 1.01.
        let reference: Vec<Vec<f64>> = (0..3).map(|_| vec![1.0; 30]).collect();
        let variant: Vec<Vec<f64>> = (0..3)
            .map(|p| {
                (0..30)
                    .map(|r| 0.99 + 0.01 * p as f64 + (r % 3) as f64 * 1e-5)
                    .collect()
            })
            .collect();
        let r = paired_across_processes(&variant, &reference, 0.95).ok_or("no ratio")?;
        assert!(r.low < 0.99 && r.high > 1.01, "{r:?}");
        // Processes that agree: the sign test alone.
        let same: Vec<Vec<f64>> = (0..3)
            .map(|_| (0..30).map(|r| 1.0 + (r % 3) as f64 * 1e-5).collect())
            .collect();
        let r = paired_across_processes(&same, &reference, 0.95).ok_or("no ratio")?;
        assert!(r.high - r.low < 1e-4, "{r:?}");
        // Every round of a process the same to the last digit, the processes
        // apart: a finite interval that spans them, not an endless "unsure".
        let exact: Vec<Vec<f64>> = [0.997, 1.0, 1.003].iter().map(|&r| vec![r; 30]).collect();
        let r = paired_across_processes(&exact, &reference, 0.95).ok_or("no ratio")?;
        assert!(r.low <= 0.997 && r.high >= 1.003, "{r:?}");
        assert!(r.low > 0.99 && r.high < 1.01, "{r:?}");
        // Rounds that barely move within a process, a pooled interval that
        // spans the processes (40, 10 and 40 rounds at 7.4, 7.5 and 7.6):
        // the processes' own interval holds the widening.
        let levels = [(7.4, 40), (7.5, 10), (7.6, 40)];
        let spread: Vec<Vec<f64>> = levels
            .iter()
            .map(|&(level, n)| (0..n).map(|r| level + (r % 2) as f64 * 1e-7).collect())
            .collect();
        let ones: Vec<Vec<f64>> = levels.iter().map(|&(_, n)| vec![1.0; n]).collect();
        let r = paired_across_processes(&spread, &ones, 0.95).ok_or("no ratio")?;
        assert!(r.low <= 7.4 && r.high >= 7.6, "{r:?}");
        assert!(r.low > 7.0 && r.high < 8.2, "{r:?}");
        Ok(())
    }

    /// Programs: the execute phase is the comparison's verdict; every phase
    /// has its own ratio, compile only when every variant timed it.
    #[test]
    fn programs_are_judged_per_phase() {
        // Three processes of ten rounds, one value per round, 0.1% jitter.
        let rounds = |name, ns: f64| Rounds {
            name,
            per_op: (0..3)
                .map(|p| {
                    (0..ROUNDS)
                        .map(|r| vec![ns * (1.0 + ((p * 7 + r * 3) % 5) as f64 * 2e-4)])
                        .collect()
                })
                .collect(),
            exact_per_op: None,
        };
        let mut program = ProgramRounds {
            execute: vec![rounds("a", 2e6), rounds("b", 2.1e6)],
            instantiate: vec![rounds("a", 1e5), rounds("b", 1e5)],
            compile: None,
        };
        let c = &judge_programs(&program, 0, NoiseBand::default(), Metric::Time)[0];
        assert_eq!(c.verdict, Verdict::Slower, "{}", c.text.unescaped());
        let phases: Vec<ProgramPhase> = c.phases.iter().map(|p| p.phase).collect();
        assert_eq!(phases, [ProgramPhase::Instantiate, ProgramPhase::Execute]);
        assert_eq!(
            c.phases[0].verdict,
            Verdict::Same,
            "{}",
            c.phases[0].text.unescaped()
        );
        assert_eq!(c.phases[1].ratio, c.ratio);
        assert!(
            (c.ratio.value - 1.05).abs() < 1e-3,
            "{}",
            c.text.unescaped()
        );
        program.compile = Some(vec![rounds("a", 5e7), rounds("b", 2.5e7)]);
        let c = &judge_programs(&program, 0, NoiseBand::default(), Metric::Time)[0];
        assert_eq!(c.phases[0].phase, ProgramPhase::Compile);
        assert_eq!(
            c.phases[0].verdict,
            Verdict::Faster,
            "{}",
            c.phases[0].text.unescaped()
        );
        assert!(c.phases[0].text.unescaped().starts_with("compile: "));
        // Workloads have no phases.
        assert!(
            judge(&program.execute, 0, NoiseBand::default(), Metric::Time)[0]
                .phases
                .is_empty()
        );
    }

    /// A 1.9× ratio left unsure at two rounds (Student's t of one degree
    /// of freedom is 12.7) needs one round more, a slower or a faster one
    /// alike; a wider interval nearer the band needs more; a ratio inside
    /// the band never gets there; a certain verdict needs none.
    #[test]
    fn the_rounds_to_a_verdict_grow_with_the_interval_and_a_close_call_has_none() {
        use crate::analysis::fixtures::comparison;
        let band = NoiseBand::default();
        let slower = comparison("box8", 1.942, 0.929, 4.063, Verdict::Unsure);
        assert_eq!(rounds_to_certain(&slower, 2, band, 100), Some(3));
        assert_eq!(rounds_to_certain(&slower, 2, band, 2), None, "past `most`");
        let faster = comparison("faster", 0.6, 0.5, 1.3, Verdict::Unsure);
        assert_eq!(rounds_to_certain(&faster, 2, band, 100), Some(3));
        let nearer = comparison("minicsv", 1.242, 0.880, 1.536, Verdict::Unsure);
        assert_eq!(rounds_to_certain(&nearer, 4, band, 100), Some(7));
        let close = comparison("keccak", 1.004, 0.982, 1.007, Verdict::Unsure);
        assert_eq!(rounds_to_certain(&close, 35, band, 10_000), None);
        let certain = comparison("certain", 1.5, 1.4, 1.6, Verdict::Slower);
        assert_eq!(rounds_to_certain(&certain, 2, band, 100), Some(2));
    }
}
