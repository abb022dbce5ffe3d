//! The summary of a suite: of a run's rows, how many ran, the geometric
//! mean of the medians of those with measurable work
//! ([`crate::results::Figures::measurable_work`], the same rule for a run
//! and a merge of its shards) and, against a saved baseline, the geometric mean
//! of the ratios with its 95% interval; of a suite compared across engines
//! or paths ([`suite_verdicts`]), the counts of each verdict and, per side,
//! the geometric mean of its ratios to the reference with its 95% interval.
//!
//! The interval of the geometric mean of ratios works on logs: each ratio's
//! interval at confidence c gives a standard error, (ln high − ln low) /
//! (2 · z), z the normal quantile of 1 − (1 − c)/2 (1.96 at 95%; a
//! comparison of three or more variants states a higher c, Bonferroni's);
//! the mean of n log ratios has standard error sqrt(Σ se²) / n, and the
//! interval is exp(mean ± z₉₅ · se). Rows are taken as independent: what
//! the machine did to one benchmark is not assumed to repeat in the next.
//! What the machine does to a whole run (an hour when many benchmarks'
//! ratios move together) only separate runs measure: [`between_runs`]
//! reads a geometric mean against the earlier runs of its suite.

use crate::analysis::drift;
use crate::analysis::interval::{reach_back, widen_log};
use crate::analysis::stats::{normal_quantile, student_t_975};
use crate::results::{
    BenchResult, BetweenRuns, Foreign, Ratio, SuiteBenchmark, SuiteRatio, SuiteSummary,
    SuiteVerdicts, Verdict,
};

/// Confidence of every geometric mean's interval.
pub const SUITE_CONFIDENCE: f64 = 0.95;

/// The summary of `results` but the control's row; `None` for fewer than
/// two rows.
pub fn summarize(results: &[BenchResult]) -> Option<SuiteSummary> {
    let results: Vec<&BenchResult> = results.iter().filter(|r| !r.is_control()).collect();
    if results.len() < 2 {
        return None;
    }
    let medians: Vec<f64> = results
        .iter()
        .filter_map(|r| r.figures.as_ref())
        .filter(|f| f.measurable_work())
        .map(|f| f.ns_per_op.median)
        .collect();
    let measured = results.iter().filter(|r| r.figures.is_some()).count();
    let ratios: Vec<Ratio> = results
        .iter()
        .filter_map(|r| r.baseline.as_ref())
        .map(|b| b.ratio)
        .filter(|r| r.value.is_finite() && r.value > 0.0)
        .collect();
    Some(SuiteSummary {
        rows: results.len(),
        measured,
        failed: results.len() - measured,
        geomean_ns: geometric_mean(&medians),
        timed_rows: medians.len(),
        baseline_rows: ratios.len(),
        baseline_ratio: geometric_mean_ratio(&ratios),
    })
}

/// exp(mean(ln x)); NaN when `values` is empty.
pub fn geometric_mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    (values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp()
}

/// The geometric mean of `ratios` (each with a 95% interval) with its 95%
/// interval; `None` when empty.
pub fn geometric_mean_ratio(ratios: &[Ratio]) -> Option<Ratio> {
    let stated: Vec<(Ratio, f64)> = ratios.iter().map(|r| (*r, SUITE_CONFIDENCE)).collect();
    geometric_mean_at(&stated)
}

/// The geometric mean of `ratios`, each given with the confidence of its
/// interval, with its interval at [`SUITE_CONFIDENCE`]; ratios that are
/// not finite and positive are left out, `None` when none is left. One
/// without an interval (NaN bounds: one round) leaves the mean none.
pub fn geometric_mean_at(ratios: &[(Ratio, f64)]) -> Option<Ratio> {
    let usable: Vec<&(Ratio, f64)> = ratios
        .iter()
        .filter(|(r, _)| r.value.is_finite() && r.value > 0.0)
        .collect();
    if usable.is_empty() {
        return None;
    }
    let n = usable.len() as f64;
    let mean = usable.iter().map(|(r, _)| r.value.ln()).sum::<f64>() / n;
    let variance: f64 = usable
        .iter()
        .map(|(r, confidence)| log_standard_error(r, *confidence).powi(2))
        .sum();
    let se = variance.sqrt() / n;
    let z = two_sided_z(SUITE_CONFIDENCE);
    Some(Ratio {
        value: mean.exp(),
        low: (mean - z * se).exp(),
        high: (mean + z * se).exp(),
    })
}

/// The standard error of ln `ratio` that its interval at `confidence`
/// implies; 0 for an exact ratio or an interval that cannot be read; NaN
/// for none (NaN bounds: one round), which leaves a mean over it none.
fn log_standard_error(ratio: &Ratio, confidence: f64) -> f64 {
    let (low, high) = (ratio.low, ratio.high);
    if low.is_nan() || high.is_nan() {
        return f64::NAN;
    }
    if !(low > 0.0 && high >= low && high.is_finite()) {
        return 0.0;
    }
    let confidence = match confidence > 0.0 && confidence < 1.0 {
        true => confidence,
        false => SUITE_CONFIDENCE,
    };
    (high.ln() - low.ln()) / (2.0 * two_sided_z(confidence))
}

/// z such that a standard normal lies within ±z with probability
/// `confidence`.
fn two_sided_z(confidence: f64) -> f64 {
    normal_quantile(1.0 - (1.0 - confidence) / 2.0)
}

/// The geometric mean `ratio` of one side against `earlier`, the
/// geometric means of the same side in earlier runs of the same suite
/// (oldest first): once they are enough to tell the drift between runs
/// ([`drift::of_runs`]), where a later run's may land, as a row's later
/// run's interval is made ([`crate::analysis::interval`]).
pub fn between_runs(ratio: &Ratio, earlier: &[f64]) -> BetweenRuns {
    let Some(drift) = drift::of_runs(earlier) else {
        return BetweenRuns {
            earlier_runs: earlier.len(),
            drift_pct: None,
            earlier_median: None,
            later_run: None,
            departed: false,
        };
    };
    let extra = student_t_975(drift.df) * drift.rel_sd;
    let wide = widen_log(ratio.value, (ratio.low, ratio.high), extra);
    let (wide, departed) = reach_back(wide, drift.earlier);
    BetweenRuns {
        earlier_runs: earlier.len(),
        drift_pct: Some(drift.rel_sd * 100.0),
        earlier_median: drift.earlier.map(|e| e.median_ns),
        later_run: Some(Ratio {
            value: ratio.value,
            low: wide.0,
            high: wide.1,
        }),
        departed,
    }
}

/// The summary of a suite compared across `sides` (the first the
/// reference): the verdicts counted over every judged benchmark's
/// comparisons, the benchmarks that failed or were not judged, the sides
/// left out, the benchmarks a later worker failed on, those judged in
/// one worker process, `unpaired` names, and per side after the first the geometric mean of
/// its ratios over the benchmarks that compared it.
pub fn suite_verdicts(
    benchmarks: &[SuiteBenchmark],
    sides: &[String],
    unpaired: usize,
) -> SuiteVerdicts {
    let mut summary = tally(benchmarks, sides);
    summary.failed = benchmarks.iter().filter(|b| b.error.is_some()).count();
    summary.unsupported = benchmarks
        .iter()
        .filter(|b| b.unsupported.is_some())
        .count();
    let left_out = || benchmarks.iter().flat_map(|b| &b.left_out);
    summary.sides_unsupported = left_out().filter(|l| l.unsupported).count();
    summary.sides_failed = left_out().filter(|l| !l.unsupported).count();
    summary.failed_later = (benchmarks.iter())
        .filter(|b| b.failed_later.is_some())
        .count();
    summary.capped = benchmarks.iter().filter(|b| b.capped()).count();
    summary.one_process = benchmarks.iter().filter(|b| b.one_process()).count();
    let few = |b: &SuiteBenchmark| {
        b.judged()
            .is_some_and(|r| r.comparisons.iter().any(|c| !c.few_rounds.is_empty()))
    };
    summary.few_rounds = benchmarks.iter().filter(|b| few(b)).count();
    summary.not_judged = benchmarks.iter().filter(|b| b.not_judged.is_some()).count();
    summary.unpaired = unpaired;
    summary
}

/// The verdicts of the judged `benchmarks` counted, and each side's
/// geometric mean.
fn tally(benchmarks: &[SuiteBenchmark], sides: &[String]) -> SuiteVerdicts {
    let named: Vec<Foreign> = sides.iter().cloned().map(Foreign::from).collect();
    let mut summary = SuiteVerdicts::default();
    let mut per_side: Vec<Vec<(Ratio, f64)>> = vec![Vec::new(); sides.len()];
    for (k, c) in benchmarks.iter().flat_map(|b| b.compared(&named)) {
        *match c.verdict {
            Verdict::Faster => &mut summary.faster,
            Verdict::Slower => &mut summary.slower,
            Verdict::Same => &mut summary.same,
            Verdict::Unsure => &mut summary.unsure,
        } += 1;
        per_side[k].push((c.ratio, c.confidence));
    }
    summary.geometric_means = (per_side.iter().enumerate().skip(1))
        .filter_map(|(k, ratios)| {
            Some(SuiteRatio {
                side: sides[k].clone().into(),
                reference: sides[0].clone().into(),
                benchmarks: ratios
                    .iter()
                    .filter(|(r, _)| r.value.is_finite() && r.value > 0.0)
                    .count(),
                ratio: geometric_mean_at(ratios)?,
                confidence: SUITE_CONFIDENCE,
                between_runs: None,
            })
        })
        .collect();
    summary
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Comparison;

    /// A benchmark stopped at its time with its verdict open is capped; one
    /// not judged has no verdict to settle, whatever its report says.
    #[test]
    fn a_benchmark_not_judged_is_never_capped() {
        let mut benchmark = benchmark(&[], &[]);
        if let Some(report) = benchmark.report.as_mut() {
            report.capped = true;
        }
        assert!(benchmark.capped());
        benchmark.not_judged = Some("a few steps of the clock".into());
        assert!(!benchmark.capped());
    }

    /// A geometric mean of 1.80× [1.79×, 1.81×].
    fn suite_mean() -> Ratio {
        Ratio {
            value: 1.80,
            low: 1.79,
            high: 1.81,
        }
    }

    /// While fewer earlier runs than the drift needs are kept, a suite's
    /// geometric mean says how many there are, and no later run's
    /// interval.
    #[test]
    fn a_few_earlier_runs_tell_no_drift() {
        let between = between_runs(&suite_mean(), &[1.80, 1.83, 1.78, 1.81]);
        assert_eq!(between.earlier_runs, 4);
        assert!(between.later_run.is_none() && between.drift_pct.is_none());
        assert!(!between.departed);
        assert_eq!(between_runs(&suite_mean(), &[]).earlier_runs, 0);
    }

    /// Six earlier runs whose geometric means move by about 1% widen the
    /// interval by t(5) times that in quadrature, around the same value.
    #[test]
    fn earlier_runs_widen_by_their_drift() {
        let earlier = [1.78, 1.80, 1.82, 1.79, 1.81, 1.80];
        let between = between_runs(&suite_mean(), &earlier);
        let later = between.later_run.expect("six runs tell the drift");
        let drift = between.drift_pct.expect("a drift") / 100.0;
        assert!((0.005..0.02).contains(&drift), "{drift}");
        assert_eq!(later.value, 1.80);
        let this_run = (1.81f64 / 1.80).ln();
        let expected = this_run.hypot(crate::analysis::stats::student_t_975(5) * drift);
        assert!(
            ((later.high / 1.80).ln() - expected).abs() < 1e-12,
            "{later:?}"
        );
        assert!(later.low < 1.79 && !between.departed);
    }

    /// A run far from its earlier runs says so, and its later run's
    /// interval reaches back to their median.
    #[test]
    fn a_run_that_departs_reaches_back() {
        let earlier = [1.80, 1.801, 1.799, 1.8005, 1.7995];
        let far = Ratio {
            value: 1.70,
            low: 1.69,
            high: 1.71,
        };
        let between = between_runs(&far, &earlier);
        assert!(between.departed);
        let later = between.later_run.expect("five runs tell the drift");
        assert!(later.high >= 1.80, "{later:?}");
        assert_eq!(between.earlier_median, Some(1.80));
    }

    #[test]
    fn geometric_mean_of_known_values() {
        assert!((geometric_mean(&[1.0, 4.0]) - 2.0).abs() < 1e-12);
        assert!((geometric_mean(&[2.0, 8.0, 4.0]) - 4.0).abs() < 1e-12);
        assert!(geometric_mean(&[]).is_nan());
    }

    #[test]
    fn ratios_combine_on_logs() {
        let exact = [Ratio::exact(2.0), Ratio::exact(0.5)];
        let g = geometric_mean_ratio(&exact).expect("two ratios");
        assert!((g.value - 1.0).abs() < 1e-12);
        assert_eq!((g.low, g.high), (g.value, g.value));
        // Two equal rows of interval e^±0.1: the mean's is e^±(0.1/√2).
        let wide = Ratio {
            value: 1.0,
            low: (-0.1f64).exp(),
            high: 0.1f64.exp(),
        };
        let g = geometric_mean_ratio(&[wide, wide]).expect("two ratios");
        let half = 0.1 / 2f64.sqrt();
        assert!((g.high.ln() - half).abs() < 1e-9, "{g:?}");
        assert!((g.low.ln() + half).abs() < 1e-9, "{g:?}");
        assert!(geometric_mean_ratio(&[]).is_none());
        // A ratio of one round has no interval: the mean keeps its value
        // and has none either.
        let one = Ratio {
            value: 4.0,
            low: f64::NAN,
            high: f64::NAN,
        };
        let g = geometric_mean_ratio(&[wide, one]).expect("two ratios");
        assert!((g.value - 2.0).abs() < 1e-12, "{g:?}");
        assert!(g.low.is_nan() && g.high.is_nan(), "{g:?}");
    }

    fn compared(verdict: Verdict, ratio: Ratio, confidence: f64) -> Comparison {
        Comparison {
            variant: "v".into(),
            reference: "r".into(),
            metric: "time".into(),
            ratio,
            confidence,
            mde_pct: 0.0,
            verdict,
            text: crate::results::Foreign::default(),
            phases: Vec::new(),
            few_rounds: Vec::new(),
        }
    }

    /// A judged benchmark whose report holds `comparisons`, `left_out`
    /// of its sides.
    fn benchmark(comparisons: &[Comparison], left_out: &[&str]) -> SuiteBenchmark {
        let mut report = crate::analysis::fixtures::compare_report();
        report.comparisons = comparisons.to_vec();
        SuiteBenchmark {
            left_out: (left_out.iter())
                .map(|side| crate::results::LeftOut {
                    side: (*side).into(),
                    why: "did not return within --timeout 10s".into(),
                    unsupported: false,
                })
                .collect(),
            ..crate::analysis::fixtures::judged(report)
        }
    }

    /// `benchmark` with every side's figures from `processes` processes.
    fn in_processes(mut benchmark: SuiteBenchmark, processes: usize) -> SuiteBenchmark {
        let variants = benchmark.report.iter_mut().flat_map(|r| &mut r.variants);
        for figures in variants.filter_map(|v| v.figures.as_mut()) {
            figures.processes.processes = processes;
        }
        benchmark
    }

    /// A benchmark judged on one worker process (its fewest) is counted;
    /// one of more processes, or not judged, is not.
    #[test]
    fn benchmarks_judged_in_one_process_are_counted() {
        let sides = ["a".to_string(), "b".to_string()];
        let with = |verdict, processes| {
            let comparisons = [compared(verdict, Ratio::exact(2.0), 0.95)];
            in_processes(benchmark(&comparisons, &[]), processes)
        };
        let mut fewest = with(Verdict::Slower, 3);
        let variants = fewest.report.iter_mut().flat_map(|r| &mut r.variants);
        if let Some(figures) = variants.last().and_then(|v| v.figures.as_mut()) {
            figures.processes.processes = 1;
        }
        let not_judged = SuiteBenchmark {
            not_judged: Some("a few steps of the clock".into()),
            ..with(Verdict::Slower, 1)
        };
        let benchmarks = [
            with(Verdict::Unsure, 1),
            fewest,
            with(Verdict::Same, 2),
            not_judged,
        ];
        let one: Vec<bool> = benchmarks.iter().map(|b| b.one_process()).collect();
        assert_eq!(one, [true, true, false, false]);
        let summary = suite_verdicts(&benchmarks, &sides, 0);
        assert_eq!(summary.one_process, 2);
    }

    /// A benchmark a later worker failed on keeps its verdicts and its
    /// place in the geometric means, and counts among the failures.
    #[test]
    fn a_later_worker_failing_keeps_the_verdicts_and_counts_as_a_failure() {
        let sides = ["a".to_string(), "b".to_string()];
        let slower = [compared(Verdict::Slower, Ratio::exact(2.0), 0.95)];
        let later = SuiteBenchmark {
            failed_later: Some("did not return within --timeout 10s".into()),
            ..benchmark(&slower, &[])
        };
        let benchmarks = [benchmark(&slower, &[]), later];
        let summary = suite_verdicts(&benchmarks, &sides, 0);
        assert_eq!(
            (summary.slower, summary.failed, summary.failed_later),
            (2, 0, 1)
        );
        assert_eq!(summary.geometric_means[0].benchmarks, 2);
    }

    /// A side left out of one benchmark is missing from its geometric
    /// mean, not taken for the next side: each ratio counts for the side
    /// it measures.
    #[test]
    fn a_side_left_out_leaves_the_others_in_their_places() {
        let sides = ["a".to_string(), "b".to_string(), "c".to_string()];
        let both = [
            compared(Verdict::Slower, Ratio::exact(2.0), 0.975),
            compared(Verdict::Faster, Ratio::exact(0.5), 0.975),
        ];
        let without_b = [compared(Verdict::Faster, Ratio::exact(0.125), 0.95)];
        let benchmarks = [benchmark(&both, &[]), benchmark(&without_b, &["b"])];
        let summary = suite_verdicts(&benchmarks, &sides, 0);
        assert_eq!((summary.faster, summary.slower), (2, 1));
        assert_eq!((summary.sides_failed, summary.sides_unsupported), (1, 0));
        let [b, c] = summary.geometric_means.as_slice() else {
            panic!("{summary:?}");
        };
        assert_eq!((b.side.unescaped(), b.benchmarks), ("b", 1));
        assert_eq!(b.ratio, Ratio::exact(2.0));
        assert_eq!((c.side.unescaped(), c.benchmarks), ("c", 2));
        assert!((c.ratio.value - 0.25).abs() < 1e-12, "{c:?}");
    }

    #[test]
    fn a_suite_counts_verdicts_and_takes_each_sides_geometric_mean() {
        let sides = ["a".to_string(), "b".to_string(), "c".to_string()];
        // Two sides against `a`, each interval at Bonferroni's 97.5%.
        let wide = |v: f64| Ratio {
            value: v,
            low: v * (-0.05f64).exp(),
            high: v * 0.05f64.exp(),
        };
        let first = [
            compared(Verdict::Slower, wide(2.0), 0.975),
            compared(Verdict::Same, Ratio::exact(1.0), 0.975),
        ];
        let second = [
            compared(Verdict::Faster, wide(0.5), 0.975),
            compared(Verdict::Unsure, Ratio::exact(f64::NAN), 0.975),
        ];
        let benchmarks = [benchmark(&first, &[]), benchmark(&second, &[])];
        let summary = tally(&benchmarks, &sides);
        assert_eq!(
            (summary.faster, summary.slower, summary.same, summary.unsure),
            (1, 1, 1, 1)
        );
        let [b, c] = summary.geometric_means.as_slice() else {
            panic!("{summary:?}");
        };
        assert_eq!((b.side.unescaped(), b.reference.unescaped()), ("b", "a"));
        assert_eq!((b.benchmarks, c.benchmarks), (2, 1));
        assert!((b.ratio.value - 1.0).abs() < 1e-12, "{b:?}");
        // Each log interval ±0.05 at 97.5% is a standard error of
        // 0.05 / z(0.9875); the mean of two has sqrt(2)·se / 2, read at 95%.
        let se = 0.05 / normal_quantile(0.9875) * 2f64.sqrt() / 2.0;
        let half = normal_quantile(0.975) * se;
        assert!((b.ratio.high.ln() - half).abs() < 1e-9, "{b:?}");
        assert!((b.ratio.low.ln() + half).abs() < 1e-9, "{b:?}");
        // The side whose second ratio is unknown: the mean of the one left.
        assert_eq!(c.ratio, Ratio::exact(1.0));
        assert!(tally(&[], &sides).geometric_means.is_empty());
    }
}
