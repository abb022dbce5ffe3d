//! A suite's verdicts that rest on too few rounds for the sign test, their
//! interval's spread moderated by the spread of such rounds across the
//! suite, per side. Under `--suite-time`, a long program (seconds an
//! iteration) gets one round in the suite's first look, and a second only
//! when the time left comes to it: one round has no interval, two have
//! Student's t on one degree of freedom, 12.7 standard errors each side,
//! which no effect short of several-fold makes certain, and tell their
//! spread badly. The suite's other comparisons
//! of the same side on few rounds of one worker, and those whose every
//! worker took one round (a long program taken further round by round),
//! tell it together, as far as their rounds part alike: Smyth's moderated
//! variance (empirical Bayes, "Linear models and empirical Bayes methods
//! for assessing differential expression", 2004, as limma's
//! `squeezeVar`). Their
//! variances are taken as drawn from a scaled inverse χ² of `d0` degrees of
//! freedom about `s0²`, both fitted by moments of their logarithms
//! ([`prior`]); each comparison's variance `s²`, on `d` degrees of
//! freedom, becomes `(d0·s0² + d·s²)/(d0 + d)` on `d0 + d` (one round's,
//! on no freedom of its own, is the prior's: `s0²` on `d0`). Where the
//! rounds of a side part alike, `d0` is large and the interval is the
//! pool's; where they part unlike (V8's or libsodium's rounds, some of
//! which part twofold), `d0` is small and each keeps nearly its own. `d0`
//! is at most the degrees of freedom it is fitted on; a side's own prior
//! from [`MIN_FREEDOM`] of them, else every side's, and none below that
//! (the intervals then stay their own). Each such interval becomes the
//! mean log ratio ± t·s/√n at the comparison's confidence, holding every
//! round's ratio and the ratio of the rows, and its verdict is read
//! again. Pure arithmetic, before
//! [`crate::analysis::one_process::widen_one_process`] widens the
//! intervals of one process by how far processes part.

use crate::analysis::one_process::{
    MIN_FREEDOM, Spread, certain_widened, log_ratios, reread, side_spreads,
};
use crate::analysis::stats::{self, digamma, normal_quantile, trigamma, trigamma_inverse};
use crate::options::{Metric, NoiseBand};
use crate::results::{Comparison, Foreign, Ratio, SideSpread, SuiteBenchmark};

/// The round log ratios of `comparison` when it is by time on too few
/// rounds ([`Comparison::few_rounds`]): one or more.
fn few_rounds(comparison: &Comparison) -> Option<&[f64]> {
    let logs = comparison.few_rounds.as_slice();
    (comparison.metric == Metric::Time.name() && !logs.is_empty()).then_some(logs)
}

/// The round log ratios of each judged comparison of `benchmark` on too
/// few rounds ([`few_rounds`]), with the index among `sides` of the side
/// compared.
fn round_logs<'a>(benchmark: &'a SuiteBenchmark, sides: &[Foreign]) -> Vec<(usize, &'a [f64])> {
    (benchmark.compared(sides))
        .filter_map(|(k, c)| Some((k, few_rounds(c)?)))
        .collect()
}

/// The log ratios of each judged comparison by time of `benchmark` whose
/// every worker took one round (two or more workers, as many rounds):
/// each a round of its own process, the spread a one-round comparison's
/// round has, its process's effect included. With the index among
/// `sides` of the side compared.
fn one_round_each(benchmark: &SuiteBenchmark, sides: &[Foreign]) -> Vec<(usize, Vec<f64>)> {
    let rounds = benchmark.judged().map_or(0, |r| r.rounds);
    (log_ratios(benchmark, sides).into_iter())
        .filter(|(_, c, logs)| {
            c.metric == Metric::Time.name() && logs.len() >= 2 && logs.len() == rounds
        })
        .map(|(k, _, logs)| (k, logs))
        .collect()
}

/// The variance of `logs` about their mean and its degrees of freedom
/// (none for one: its variance 0, which weighs nothing).
fn variance(logs: &[f64]) -> (f64, usize) {
    (stats::sample_sd(logs).powi(2), logs.len().saturating_sub(1))
}

/// What one side's rounds on too few rounds tell of any one's spread: the
/// prior of their variances.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prior {
    /// `s0`, the log standard deviation the variances gather about.
    pub sd: f64,
    /// `d0`, how closely they gather: the weight of `s0²` against a
    /// comparison's own variance, in degrees of freedom.
    pub freedom: f64,
    /// Whether it is fitted on the side's own comparisons; `false`: on
    /// every side's.
    pub own: bool,
}

/// Smyth's prior of `variances` (each with its degrees of freedom), fitted
/// by the moments of their logarithms: `e = ln s² − ψ(d/2) + ln(d/2)` has
/// mean `ln s0² − ψ(d0/2) + ln(d0/2)` and variance beyond `ψ′(d/2)` of
/// `ψ′(d0/2)`. Where they part no more than their own freedom predicts,
/// `d0` is infinite and `s0²` their pooled variance. `d0` is held to the
/// freedom they stand on. `None`
/// for fewer than two positive variances. Gives `(s0², d0)`.
fn prior(variances: &[(f64, usize)]) -> Option<(f64, f64)> {
    let e: Vec<(f64, f64)> = (variances.iter())
        .filter(|(s2, d)| *s2 > 0.0 && s2.is_finite() && *d > 0)
        .map(|&(s2, d)| {
            let half = d as f64 / 2.0;
            (s2.ln() - digamma(half) + half.ln(), trigamma(half))
        })
        .collect();
    if e.len() < 2 {
        return None;
    }
    let n = e.len() as f64;
    let mean = e.iter().map(|(e, _)| e).sum::<f64>() / n;
    let spread = e.iter().map(|(e, _)| (e - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let beyond = spread - e.iter().map(|(_, t)| t).sum::<f64>() / n;
    let stands = variances.iter().map(|(_, d)| *d as f64).sum::<f64>();
    let (s2, d0) = match beyond > 0.0 {
        true => {
            let d0 = 2.0 * trigamma_inverse(beyond);
            let half = d0 / 2.0;
            ((mean + digamma(half) - half.ln()).exp(), d0)
        }
        // Alike: their pooled variance, the estimate of a common one.
        false => {
            let squares = variances.iter().map(|(s2, d)| s2 * *d as f64).sum::<f64>();
            (squares / stands, f64::INFINITY)
        }
    };
    Some((s2, d0.min(stands)))
}

/// Each side's [`Prior`] of the rounds of a suite's comparisons on too few
/// rounds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoundSpread {
    /// Per side of the suite, the reference's place included (never
    /// compared).
    sides: Vec<Option<Prior>>,
}

impl RoundSpread {
    /// The prior of the judged `benchmarks`' comparisons on too few rounds
    /// across `sides` (the suite's), per side, and of those whose every
    /// worker took one round ([`one_round_each`]: a long program taken
    /// further round by round): its own from [`MIN_FREEDOM`] degrees of
    /// freedom, else every side's from as many.
    pub fn of(benchmarks: &[SuiteBenchmark], sides: &[Foreign]) -> RoundSpread {
        let mut own = vec![Vec::new(); sides.len()];
        let few = (benchmarks.iter())
            .flat_map(|b| round_logs(b, sides))
            .map(|(k, logs)| (k, variance(logs)));
        let each = (benchmarks.iter())
            .flat_map(|b| one_round_each(b, sides))
            .map(|(k, logs)| (k, variance(&logs)));
        for (k, v) in few.chain(each) {
            if let Some(side) = own.get_mut(k) {
                side.push(v);
            }
        }
        let freedom = |v: &[(f64, usize)]| v.iter().map(|(_, d)| d).sum::<usize>();
        let fitted = |v: &[(f64, usize)], own| {
            let (s2, freedom) = prior(v).filter(|_| freedom(v) >= MIN_FREEDOM)?;
            Some(Prior {
                sd: s2.sqrt(),
                freedom,
                own,
            })
        };
        let every = fitted(&own.concat(), false);
        RoundSpread {
            sides: own.iter().map(|v| fitted(v, true).or(every)).collect(),
        }
    }

    /// The prior of the side at `k` among the suite's sides.
    fn side(&self, k: usize) -> Option<Prior> {
        self.sides.get(k).copied().flatten()
    }

    /// Each side's prior after the reference, as a spread, for the
    /// suite's summary.
    pub fn summary(&self, sides: &[Foreign]) -> Vec<SideSpread> {
        let each = self.sides.iter().map(|p| p.map(|p| (p.sd, p.own)));
        side_spreads(sides, each)
    }
}

/// The ratio of `comparison`, on `logs` (its rounds' log ratios), at its
/// confidence from its variance moderated by the side's `prior`: the mean
/// log ratio ± t·s/√n, stretched to hold every round's ratio and its
/// ratio.
fn moderated_ratio(comparison: &Comparison, logs: &[f64], prior: Prior) -> Ratio {
    let n = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / n;
    let (s2, d) = variance(logs);
    let freedom = prior.freedom + d as f64;
    let moderated = (prior.freedom * prior.sd.powi(2) + d as f64 * s2) / freedom;
    let confidence = comparison.confidence;
    let scale = normal_quantile(1.0 - (1.0 - confidence) / 2.0) / normal_quantile(0.975);
    let half = stats::student_t_975_of(freedom) * scale.max(1.0) * (moderated / n).sqrt();
    let (least, most) = (logs.iter().copied())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, m), x| {
            (l.min(x), m.max(x))
        });
    let value = comparison.ratio.value;
    Ratio {
        value,
        low: (mean - half).min(least).exp().min(value),
        high: (mean + half).max(most).exp().max(value),
    }
}

/// Each of `comparisons` (with the index among the suite's sides of the
/// side each compares, `places`) on too few rounds whose side has a prior
/// in `spread`, with the ratio it makes ([`moderated_ratio`]).
fn moderated<'a>(
    comparisons: impl IntoIterator<Item = (usize, &'a Comparison)>,
    spread: &RoundSpread,
) -> Vec<(usize, Ratio)> {
    (comparisons.into_iter().enumerate())
        .filter_map(|(i, (k, c))| Some((i, moderated_ratio(c, few_rounds(c)?, spread.side(k)?))))
        .collect()
}

/// Whether `comparisons`, of one worker, of `benchmark` (its entry: which
/// sides it compares) would all be certain as a suite's report reads
/// them: on too few rounds, moderated by their side's prior in `rounds`;
/// then widened by their side's spread of `processes`
/// ([`certain_widened`]). `None` when a side has no spread of processes.
pub fn certain_as_reported(
    comparisons: &[Comparison],
    benchmark: &SuiteBenchmark,
    (rounds, processes): (&RoundSpread, &Spread),
    sides: &[Foreign],
    band: NoiseBand,
) -> Option<bool> {
    let sds = processes.of_comparisons(benchmark, sides)?;
    let places = benchmark.variant_sides(sides).into_iter().skip(1);
    let mut comparisons = comparisons.to_vec();
    for (i, ratio) in moderated(places.zip(&comparisons), rounds) {
        reread(&mut comparisons[i], ratio, band);
    }
    let one = comparisons.len() == sds.len();
    let mut each = comparisons.iter().zip(&sds);
    one.then(|| each.all(|(c, sd)| certain_widened(c, *sd, band)))
}

/// Make every judged comparison of `benchmarks` across `sides` on too few
/// rounds ([`Comparison::few_rounds`]) from its variance moderated by its
/// side's prior ([`RoundSpread`]), and read its verdict again against
/// `band`. Nothing changes where no prior stands. Gives each side's
/// prior as a spread, for the suite's summary.
pub fn moderate_few_rounds(
    benchmarks: &mut [SuiteBenchmark],
    sides: &[Foreign],
    band: NoiseBand,
) -> Vec<SideSpread> {
    let spread = RoundSpread::of(benchmarks, sides);
    for b in benchmarks.iter_mut() {
        let ratios = moderated(b.compared(sides), &spread);
        let Some(report) = b.report.as_mut().filter(|_| !ratios.is_empty()) else {
            continue;
        };
        for (i, ratio) in ratios {
            reread(&mut report.comparisons[i], ratio, band);
        }
        report.capped = report.comparisons.iter().any(|c| !c.verdict.is_certain());
    }
    spread.summary(sides)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures;
    use crate::results::Verdict;

    fn sides() -> Vec<Foreign> {
        vec!["cranelift".into(), "winch".into()]
    }

    /// A benchmark of two sides whose comparison rests on rounds of log
    /// ratios `logs`, judged as its own rounds judge it.
    fn on_rounds(logs: &[f64]) -> SuiteBenchmark {
        static ONE: std::sync::OnceLock<SuiteBenchmark> = std::sync::OnceLock::new();
        let mean = logs.iter().sum::<f64>() / logs.len() as f64;
        let ratio = crate::analysis::verdict::paired_ratio(
            &logs.iter().map(|l| l.exp()).collect::<Vec<_>>(),
            0.95,
        )
        .unwrap_or(Ratio {
            value: mean.exp(),
            low: f64::NAN,
            high: f64::NAN,
        });
        // What differs from one to the next: its processes' ratio and its
        // comparison.
        let mut b =
            (ONE.get_or_init(|| fixtures::suite_benchmark(&[1.0], Ratio::exact(1.0)))).clone();
        if let Some(report) = b.report.as_mut() {
            if let Some(f) = report.variants.get_mut(1).and_then(|v| v.figures.as_mut()) {
                f.processes.process_medians_ns = vec![100.0 * ratio.value];
            }
            let verdict = crate::analysis::verdict::verdict(&ratio, NoiseBand::default());
            let (value, low, high) = (ratio.value, ratio.low, ratio.high);
            let mut c = fixtures::comparison("mod16.wasm", value, low, high, verdict);
            c.few_rounds = logs.to_vec();
            report.comparisons = vec![c];
        }
        b
    }

    /// Eleven pairs of rounds 10% apart, the last at 1.6x (log 0.47).
    fn alike_pairs() -> Vec<SuiteBenchmark> {
        let pair = |k: usize| on_rounds(&[0.3 + 0.01 * k as f64, 0.4 + 0.01 * k as f64]);
        let mut suite: Vec<SuiteBenchmark> = (0..10).map(pair).collect();
        suite.push(on_rounds(&[0.42, 0.52]));
        suite
    }

    fn first(b: &SuiteBenchmark) -> Option<&Comparison> {
        b.report.as_ref()?.comparisons.first()
    }

    /// Two rounds 10% apart give an interval of several-fold on their
    /// own; with the spread of ten other pairs alike, pooled, it narrows
    /// to the width that spread predicts, and a 1.6x effect is certain.
    #[test]
    fn a_pair_of_rounds_is_judged_by_the_suites_spread() {
        let mut suite = alike_pairs();
        let before = first(&suite[10]).map(|c| (c.ratio, c.verdict));
        assert!(matches!(before, Some((_, Verdict::Unsure))), "{before:?}");
        let spreads = moderate_few_rounds(&mut suite, &sides(), NoiseBand::default());
        // Each pair: s² = 0.1² / 2 on one degree of freedom.
        let sd = (0.01f64 / 2.0).sqrt();
        assert_eq!(spreads.len(), 1);
        assert!((spreads[0].pct - sd * 100.0).abs() < 1e-9, "{spreads:?}");
        let c = first(&suite[10]).map(|c| (c.ratio, c.verdict));
        let Some((ratio, Verdict::Slower)) = c else {
            panic!("{c:?}");
        };
        let half = stats::student_t_975(12) * sd / 2f64.sqrt();
        assert!((ratio.low.ln() - (0.47 - half)).abs() < 1e-9, "{ratio:?}");
        assert!((ratio.high.ln() - (0.47 + half)).abs() < 1e-9, "{ratio:?}");
    }

    /// One round has no interval of its own; the suite's pairs give it
    /// theirs: the prior's spread on the prior's degrees of freedom.
    #[test]
    fn one_round_is_judged_by_the_suites_spread_alone() {
        let mut suite = alike_pairs();
        suite.push(on_rounds(&[0.47]));
        let before = first(&suite[11]).map(|c| (c.ratio, c.verdict));
        let Some((ratio, Verdict::Unsure)) = before else {
            panic!("{before:?}");
        };
        assert!(ratio.low.is_nan() && ratio.high.is_nan(), "{ratio:?}");
        moderate_few_rounds(&mut suite, &sides(), NoiseBand::default());
        let c = first(&suite[11]).map(|c| (c.ratio, c.verdict));
        let Some((ratio, Verdict::Slower)) = c else {
            panic!("{c:?}");
        };
        // Eleven pairs alike: s0² = 0.1²/2 on d0 = 11.
        let half = stats::student_t_975(11) * (0.01f64 / 2.0).sqrt();
        assert!((ratio.low.ln() - (0.47 - half)).abs() < 1e-9, "{ratio:?}");
        assert!((ratio.high.ln() - (0.47 + half)).abs() < 1e-9, "{ratio:?}");
        assert!((ratio.value.ln() - 0.47).abs() < 1e-12);
    }

    /// Long programs taken further round by round (three workers of one
    /// round each) tell the spread of a round across processes: a
    /// one-round comparison takes it as its prior, where no comparison of
    /// one worker is left to tell it.
    #[test]
    fn rounds_of_a_worker_each_give_a_one_round_comparison_its_interval() {
        let each = |k: usize| {
            let third = 0.4 + 0.01 * k as f64;
            let ratios = [0.3f64.exp(), 0.4f64.exp(), third.exp()];
            let mut b = fixtures::suite_benchmark(&ratios, Ratio::exact(0.4f64.exp()));
            if let Some(r) = b.report.as_mut() {
                r.rounds = 3;
            }
            b
        };
        let mut suite: Vec<SuiteBenchmark> = (0..5).map(each).collect();
        suite.push(on_rounds(&[0.47]));
        let rounds = RoundSpread::of(&suite, &sides());
        let variances: Vec<(f64, usize)> = (0..5)
            .map(|k| variance(&[0.3, 0.4, 0.4 + 0.01 * k as f64]))
            .collect();
        let Some((s2, d0)) = prior(&variances) else {
            panic!("ten degrees of freedom make a prior");
        };
        let side = rounds.side(1).map(|p| (p.sd, p.freedom));
        assert!(
            side.is_some_and(|(sd, d)| (sd - s2.sqrt()).abs() < 1e-12 && d == d0),
            "{side:?}"
        );
        // The same suite but with six rounds in those three workers: no
        // round a worker, no prior.
        let mut more = suite.clone();
        for b in more.iter_mut().take(5) {
            if let Some(r) = b.report.as_mut() {
                r.rounds = 6;
            }
        }
        assert_eq!(RoundSpread::of(&more, &sides()).side(1), None);
        moderate_few_rounds(&mut suite, &sides(), NoiseBand::default());
        let c = first(&suite[5]).map(|c| (c.ratio, c.verdict));
        let Some((ratio, Verdict::Slower)) = c else {
            panic!("{c:?}");
        };
        let half = stats::student_t_975_of(d0) * s2.sqrt();
        assert!((ratio.low.ln() - (0.47 - half)).abs() < 1e-9, "{ratio:?}");
    }

    /// A pair that parts far wider than its side's pool keeps both its
    /// rounds inside its interval.
    #[test]
    fn a_wide_pair_keeps_its_rounds() {
        let mut suite: Vec<SuiteBenchmark> = (0..12).map(|_| on_rounds(&[0.30, 0.31])).collect();
        suite.push(on_rounds(&[0.1, 0.9]));
        moderate_few_rounds(&mut suite, &sides(), NoiseBand::default());
        let Some(ratio) = first(&suite[12]).map(|c| c.ratio) else {
            panic!("no comparison");
        };
        assert!(
            ratio.low <= 0.1f64.exp() && ratio.high >= 0.9f64.exp(),
            "{ratio:?}"
        );
    }

    /// Whether the report would read a benchmark of one worker certain:
    /// moderated, then widened by how far processes part; without a spread
    /// of processes, nobody can tell.
    #[test]
    fn certain_as_reported_moderates_then_widens() {
        let mut suite = alike_pairs();
        suite.push(on_rounds(&[-0.05, 0.05]));
        let rounds = RoundSpread::of(&suite, &sides());
        let processes = Spread::pooled([(1, vec![0.0, 0.05, -0.05, 0.02])], 2);
        let band = NoiseBand::default();
        let read = |b: &SuiteBenchmark, p: &Spread| {
            let comparisons = &b.report.as_ref()?.comparisons;
            certain_as_reported(comparisons, b, (&rounds, p), &sides(), band)
        };
        assert!(matches!(
            first(&suite[10]).map(|c| c.verdict),
            Some(Verdict::Unsure)
        ));
        assert_eq!(read(&suite[10], &processes), Some(true));
        assert_eq!(read(&suite[11], &processes), Some(false));
        assert_eq!(read(&suite[10], &Spread::default()), None);
    }

    /// Below ten degrees of freedom in all, no pool stands: nothing
    /// changes.
    #[test]
    fn too_few_degrees_of_freedom_change_nothing() {
        let mut suite: Vec<SuiteBenchmark> = (0..9).map(|_| on_rounds(&[0.3, 0.4])).collect();
        let before = suite.clone();
        let spreads = moderate_few_rounds(&mut suite, &sides(), NoiseBand::default());
        assert!(spreads.is_empty());
        assert_eq!(format!("{suite:?}"), format!("{before:?}"));
    }

    /// How often the intervals hold the true ratio over 100 suites of 20
    /// comparisons of two rounds each, their log ratios normal about their
    /// own true value with a spread `sd` draws for each.
    fn coverage(sd: impl Fn(&mut fastrand::Rng) -> f64) -> f64 {
        coverage_of(sd, |_| 2).0
    }

    /// [`coverage`] where the comparison `k` of each suite takes
    /// `rounds(k)` rounds: the share of all the intervals, and of those of
    /// one round, that hold the true ratio.
    fn coverage_of(
        sd: impl Fn(&mut fastrand::Rng) -> f64,
        rounds: impl Fn(usize) -> usize,
    ) -> (f64, f64) {
        let mut rng = fastrand::Rng::with_seed(7);
        let (mut covered, mut all) = ([0, 0], [0, 0]);
        for _ in 0..100 {
            let truth: Vec<f64> = (0..20).map(|_| rng.f64() * 0.6 - 0.3).collect();
            let mut suite: Vec<SuiteBenchmark> = (truth.iter().enumerate())
                .map(|(k, t)| {
                    let s = sd(&mut rng);
                    let logs: Vec<f64> = (0..rounds(k))
                        .map(|_| t + s * stats::normal(&mut rng))
                        .collect();
                    on_rounds(&logs)
                })
                .collect();
            moderate_few_rounds(&mut suite, &sides(), NoiseBand::default());
            for (k, (b, t)) in suite.iter().zip(&truth).enumerate() {
                let Some(r) = first(b).map(|c| c.ratio) else {
                    continue;
                };
                let holds = usize::from(r.low <= t.exp() && t.exp() <= r.high);
                all[0] += 1;
                covered[0] += holds;
                if rounds(k) == 1 {
                    all[1] += 1;
                    covered[1] += holds;
                }
            }
        }
        let share = |k: usize| covered[k] as f64 / all[k] as f64;
        (share(0), share(1))
    }

    /// The intervals hold the true ratio about as often as they claim
    /// where every comparison's rounds part alike (93% to 97%), and not
    /// far less where their spreads differ about twofold (log-normal, σ
    /// 0.7: at least 91%).
    #[test]
    fn moderated_intervals_cover_the_true_ratio() {
        let alike = coverage(|_| 0.05);
        assert!((0.93..=0.97).contains(&alike), "{alike}");
        let unlike = coverage(|rng| 0.05 * (0.7 * stats::normal(rng)).exp());
        assert!((0.91..=0.97).contains(&unlike), "{unlike}");
    }

    /// Where half a suite's comparisons take one round (a first look at
    /// long programs), their intervals, the prior's alone, hold the true
    /// ratio about as often as they claim where the rounds part alike, and
    /// not far less where their spreads differ about twofold.
    #[test]
    fn one_round_intervals_cover_the_true_ratio() {
        let half = |k: usize| 1 + k % 2;
        let (_, alike) = coverage_of(|_| 0.05, half);
        assert!((0.93..=0.97).contains(&alike), "{alike}");
        let (_, unlike) = coverage_of(|rng| 0.05 * (0.7 * stats::normal(rng)).exp(), half);
        eprintln!(
            "one round's intervals hold the true ratio: alike {alike:.3}, unlike {unlike:.3}"
        );
        assert!((0.88..=0.97).contains(&unlike), "{unlike}");
    }

    /// Where some of a side's comparisons part by far more than others
    /// (a runtime that tiers up, a program at two speeds), the quiet ones
    /// keep about their own interval: the prior weighs little.
    #[test]
    fn quiet_rounds_are_not_drowned_by_loud_ones() {
        let mut suite: Vec<SuiteBenchmark> = (0..24)
            .map(|k| match k % 2 {
                0 => on_rounds(&[0.099 + 0.0001 * k as f64, 0.101]),
                _ => on_rounds(&[-0.5 + 0.01 * k as f64, 0.5]),
            })
            .collect();
        moderate_few_rounds(&mut suite, &sides(), NoiseBand::default());
        for quiet in suite.iter().step_by(2) {
            let c = first(quiet).map(|c| (c.ratio, c.verdict));
            assert!(matches!(c, Some((_, Verdict::Slower))), "{c:?}");
        }
    }
}
