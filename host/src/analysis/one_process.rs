//! A suite's verdicts that rest on one worker process, widened by how far
//! processes part on this machine. Under `--suite-time`, a long program's
//! first look can make a verdict certain from the rounds of one worker:
//! its interval holds that process's rounds and cannot see how far another
//! process would read (a program whose code lands at one of two speeds, a
//! process that met a busy moment throughout). The suite's benchmarks
//! compared in [`MIN_PROCESSES`] processes or more measure that spread
//! ([`Spread`]): each process's log ratio of a side to the reference
//! (their medians, paired by worker), its variance about their mean,
//! pooled by degrees of freedom over every such benchmark, per side: one
//! runtime's processes may part far more than another's (wasmi's speed
//! differs between processes), and a side's verdicts are widened by its
//! own spread, or by the pool of every side when its own rests on fewer
//! than [`MIN_FREEDOM`] degrees of freedom. A one-process interval's each
//! side in log space, `d`, becomes `√(d² + (z·s)²)`, `s` the standard
//! deviation and `z` the normal quantile of the comparison's confidence,
//! as for a random process effect of that spread; its verdict is read
//! again. Pure arithmetic.

use crate::analysis::stats::{self, normal_quantile};
use crate::analysis::verdict;
use crate::options::{Metric, NoiseBand};
use crate::results::{
    BenchResult, Comparison, Foreign, ProgramPhase, Ratio, SideSpread, SuiteBenchmark, Verdict,
};

/// The fewest processes a benchmark's comparison is compared in for its
/// processes' spread to count.
pub const MIN_PROCESSES: usize = 3;

/// The fewest degrees of freedom (processes less one, summed over its
/// benchmarks) a side's own spread stands on; fewer, and the pool of every
/// side stands in for it.
pub const MIN_FREEDOM: usize = 10;

/// The log ratio of `variant` to `reference` in each worker process (their
/// process medians, paired by worker), where both are positive.
fn process_log_ratios(reference: &BenchResult, variant: &BenchResult) -> Vec<f64> {
    let medians = |r: &BenchResult| {
        (r.figures.as_ref()).map_or(Vec::new(), |f| f.processes.process_medians_ns.clone())
    };
    (medians(variant).into_iter())
        .zip(medians(reference))
        .map(|(v, r)| (v / r).ln())
        .filter(|l| l.is_finite())
        .collect()
}

/// Each judged comparison of `benchmark`: the index among `sides` of the
/// side compared, the comparison, and its per-process log ratios.
pub fn log_ratios<'a>(
    benchmark: &'a SuiteBenchmark,
    sides: &[Foreign],
) -> Vec<(usize, &'a Comparison, Vec<f64>)> {
    let Some(report) = benchmark.judged() else {
        return Vec::new();
    };
    let named = |name: &Foreign| report.variants.iter().find(|v| v.name == *name);
    (benchmark.compared(sides))
        .filter_map(|(k, c)| {
            let logs = process_log_ratios(named(&c.reference)?, named(&c.variant)?);
            Some((k, c, logs))
        })
        .collect()
}

/// Squares of deviations and degrees of freedom, summed.
#[derive(Debug, Clone, Copy, Default)]
struct Pool {
    squares: f64,
    freedom: usize,
}

impl Pool {
    /// `logs` added, when they are of [`MIN_PROCESSES`] or more.
    fn add(&mut self, logs: &[f64]) {
        if logs.len() >= MIN_PROCESSES {
            let df = logs.len() - 1;
            self.squares += stats::sample_sd(logs).powi(2) * df as f64;
            self.freedom += df;
        }
    }

    /// `√(Σ (n − 1)·s² / Σ (n − 1))`; `None` without freedom.
    fn sd(&self) -> Option<f64> {
        let sd = (self.squares / self.freedom as f64).sqrt();
        (self.freedom > 0 && sd.is_finite()).then_some(sd)
    }
}

/// One side's spread of processes.
#[derive(Debug, Clone, Copy, PartialEq)]
struct SideSd {
    /// The log standard deviation.
    sd: f64,
    /// Whether it is the side's own; `false`: the pool of every side's.
    own: bool,
}

/// How far processes part in a suite, per side: the log standard
/// deviation each side's verdicts of one process are widened by, and
/// whether it is the side's own or the pool of every side's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spread {
    /// Per side of the suite, the reference's place included (never
    /// compared, so never its own).
    sides: Vec<Option<SideSd>>,
}

impl Spread {
    /// The spread of the judged `benchmarks` across `sides` (the suite's)
    /// compared in [`MIN_PROCESSES`] processes or more ([`Spread::pooled`]
    /// of their per-process log ratios).
    pub fn of(benchmarks: &[SuiteBenchmark], sides: &[Foreign]) -> Spread {
        let logs = (benchmarks.iter())
            .flat_map(|b| log_ratios(b, sides))
            .map(|(k, _, logs)| (k, logs));
        Spread::pooled(logs, sides.len())
    }

    /// The spread of per-process `logs` (each with its place among a
    /// suite's `sides`) of [`MIN_PROCESSES`] or more, pooled by degrees of
    /// freedom: per side, its own when it stands on [`MIN_FREEDOM`]
    /// degrees of freedom (or on all there are), else the pool of every
    /// side; `None` for a side when nothing was compared in enough
    /// processes.
    pub fn pooled(logs: impl IntoIterator<Item = (usize, Vec<f64>)>, sides: usize) -> Spread {
        let mut own = vec![Pool::default(); sides];
        let mut every = Pool::default();
        for (k, logs) in logs {
            if let Some(pool) = own.get_mut(k) {
                pool.add(&logs);
                every.add(&logs);
            }
        }
        let pooled = every.sd();
        // A side that holds every degree of freedom is the pool itself.
        let stands = |pool: &Pool| pool.freedom >= MIN_FREEDOM.min(every.freedom);
        let side = |pool: &Pool| match (stands(pool), pool.sd()) {
            (true, Some(sd)) => Some(SideSd { sd, own: true }),
            _ => pooled.map(|sd| SideSd { sd, own: false }),
        };
        Spread {
            sides: own.iter().map(side).collect(),
        }
    }

    /// The spread of the side at `k` among the suite's sides.
    fn side(&self, k: usize) -> Option<SideSd> {
        self.sides.get(k).copied().flatten()
    }

    /// The log standard deviation of each comparison of `benchmark`, in
    /// its report's order (a side after the reference's, but those left
    /// out); `None` when a side has none.
    pub fn of_comparisons(
        &self,
        benchmark: &SuiteBenchmark,
        sides: &[Foreign],
    ) -> Option<Vec<f64>> {
        (benchmark.variant_sides(sides).into_iter().skip(1))
            .map(|k| Some(self.side(k)?.sd))
            .collect()
    }

    /// Each side's spread after the reference, for the suite's summary.
    pub fn summary(&self, sides: &[Foreign]) -> Vec<SideSpread> {
        let each = self.sides.iter().map(|s| s.map(|s| (s.sd, s.own)));
        side_spreads(sides, each)
    }
}

/// Of each side after the reference among `sides` (a suite's), its log
/// standard deviation and whether it is its own (`each`, the reference's
/// first), when it has one, as the suite's summary gives it.
pub fn side_spreads(
    sides: &[Foreign],
    each: impl Iterator<Item = Option<(f64, bool)>>,
) -> Vec<SideSpread> {
    (sides.iter().zip(each).skip(1))
        .filter_map(|(side, spread)| {
            let (sd, own) = spread?;
            Some(SideSpread {
                side: side.clone(),
                pct: sd * 100.0,
                own,
            })
        })
        .collect()
}

/// `ratio` with each side of its log interval widened by `spread` (the
/// spread's log half-width at the ratio's confidence).
fn widened(ratio: Ratio, spread: f64) -> Ratio {
    let side = |end: f64| {
        let d = (end / ratio.value).ln().abs();
        (d * d + spread * spread).sqrt()
    };
    Ratio {
        value: ratio.value,
        low: ratio.value * (-side(ratio.low)).exp(),
        high: ratio.value * side(ratio.high).exp(),
    }
}

/// The ratio of `comparison` widened by the processes' log standard
/// deviation `sd` at its confidence, and its verdict read again; `None`
/// for a count (instructions), which is exact: no process moves it.
fn rejudged(comparison: &Comparison, sd: f64, band: NoiseBand) -> Option<(Ratio, Verdict)> {
    if comparison.metric != Metric::Time.name() {
        return None;
    }
    let z = normal_quantile(1.0 - (1.0 - comparison.confidence) / 2.0);
    let ratio = widened(comparison.ratio, z * sd);
    Some((ratio, verdict::verdict(&ratio, band)))
}

/// Whether `comparison`, of one worker process, would be certain once
/// widened by its side's log standard deviation `sd`, as the suite's
/// report widens it ([`widen_one_process`]).
pub fn certain_widened(comparison: &Comparison, sd: f64, band: NoiseBand) -> bool {
    rejudged(comparison, sd, band)
        .map_or(comparison.verdict, |(_, v)| v)
        .is_certain()
}

/// `comparison` widened by its side's log standard deviation `sd`
/// ([`reread`]); a count is left as it is ([`rejudged`]).
fn widen(comparison: &mut Comparison, sd: f64, band: NoiseBand) {
    if let Some((ratio, _)) = rejudged(comparison, sd, band) {
        reread(comparison, ratio, band);
    }
}

/// `comparison` with `ratio`: its verdict, its words and its execute
/// phase (the same ratio) read again.
pub fn reread(comparison: &mut Comparison, ratio: Ratio, band: NoiseBand) {
    let judged = verdict::verdict(&ratio, band);
    comparison.ratio = ratio;
    comparison.verdict = judged;
    comparison.mde_pct = verdict::mde_pct(&ratio);
    comparison.text = verdict::describe(
        &comparison.variant,
        &comparison.reference,
        &ratio,
        judged,
        band,
    );
    let execute = comparison.phases.iter_mut();
    for phase in execute.filter(|p| p.phase == ProgramPhase::Execute) {
        phase.ratio = ratio;
        phase.verdict = judged;
        phase.mde_pct = comparison.mde_pct;
        phase.text = comparison
            .text
            .after(&format!("{}: ", ProgramPhase::Execute));
    }
}

/// Widen the comparisons by time of every judged benchmark across `sides`
/// compared in one worker process, each by its side's [`Spread`] in the
/// others, recording them in `widened_pct`. One left unsure is `capped`:
/// more time (another process) would settle it. Nothing changes without
/// a spread. Gives each side's spread, for the suite's summary.
pub fn widen_one_process(
    benchmarks: &mut [SuiteBenchmark],
    sides: &[Foreign],
    band: NoiseBand,
) -> Vec<SideSpread> {
    let spread = Spread::of(benchmarks, sides);
    for b in benchmarks.iter_mut() {
        if b.processes() != Some(1) {
            continue;
        }
        let Some(sds) = spread.of_comparisons(b, sides) else {
            continue;
        };
        let Some(report) = b.report.as_mut() else {
            continue;
        };
        for (c, sd) in report.comparisons.iter_mut().zip(&sds) {
            widen(c, *sd, band);
        }
        report.capped |= report.comparisons.iter().any(|c| !c.verdict.is_certain());
        b.widened_pct = sds.iter().map(|sd| sd * 100.0).collect();
    }
    spread.summary(sides)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures;
    use crate::results::Verdict;

    fn ratio(value: f64, low: f64, high: f64) -> Ratio {
        Ratio { value, low, high }
    }

    /// The sides of a suite of `n` sides, the reference first.
    fn sides(n: usize) -> Vec<Foreign> {
        ["cranelift", "wasmer", "wasmi", "v8"][..n]
            .iter()
            .map(|s| Foreign::from(*s))
            .collect()
    }

    /// The spread a suite of two sides widens its verdicts by.
    fn spread(benchmarks: &[SuiteBenchmark]) -> Option<f64> {
        let spread = Spread::of(benchmarks, &sides(2));
        Some(spread.summary(&sides(2)).first()?.pct / 100.0)
    }

    /// The spread is pooled by degrees of freedom over the benchmarks
    /// compared in three processes or more, on the log ratios paired by
    /// process; fewer processes do not count.
    #[test]
    fn the_spread_is_pooled_over_benchmarks_of_three_processes_or_more() {
        let e = f64::exp;
        let wide = fixtures::suite_benchmark(&[e(0.1), e(-0.1), e(0.0)], ratio(1.0, 0.9, 1.1));
        let narrow = fixtures::suite_benchmark(
            &[e(0.0), e(0.02), e(0.04), e(0.06), e(0.08)],
            ratio(1.04, 1.0, 1.1),
        );
        let two = fixtures::suite_benchmark(&[e(1.0), e(-1.0)], ratio(1.0, 0.5, 2.0));
        // s² = 0.01 over 2 df, and 0.001 (0.02² · 10/4) over 4 df.
        let pooled = ((0.01 * 2.0 + 0.001 * 4.0) / 6.0f64).sqrt();
        let sd = spread(&[wide, narrow, two.clone()]).unwrap_or(f64::NAN);
        assert!((sd - pooled).abs() < 1e-12, "{sd} against {pooled}");
        assert_eq!(spread(&[two]), None);
    }

    /// Each side of the log interval grows as the root of the sum of
    /// squares; the ratio stays.
    #[test]
    fn a_side_grows_by_the_root_of_the_sum_of_squares() {
        let r = widened(
            ratio(2.0, 2.0 * (-0.03f64).exp(), 2.0 * 0.04f64.exp()),
            0.04,
        );
        assert_eq!(r.value, 2.0);
        assert!((r.low - 2.0 * (-0.05f64).exp()).abs() < 1e-12, "{r:?}");
        assert!(
            (r.high - 2.0 * 0.0032f64.sqrt().exp()).abs() < 1e-12,
            "{r:?}"
        );
    }

    /// Three benchmarks: one of five processes spread 0.1 in log, one of
    /// one process near the band (0.87×), one of one process far from it
    /// (2×).
    fn spread_close_large() -> [SuiteBenchmark; 3] {
        let e = f64::exp;
        let spread = [e(0.1), e(-0.1), e(0.0), e(0.05), e(-0.05)];
        [
            fixtures::suite_benchmark(&spread, ratio(1.2, 1.15, 1.25)),
            fixtures::suite_benchmark(&[0.87], ratio(0.87, 0.83, 0.98)),
            fixtures::suite_benchmark(&[2.0], ratio(2.0, 1.9, 2.1)),
        ]
    }

    /// A one-process verdict the spread reaches into the band becomes
    /// unsure and capped, its words read again; a large effect stays
    /// certain; a benchmark of several processes keeps its interval; the
    /// spread is recorded on what it widened.
    #[test]
    fn one_process_intervals_are_widened_by_the_spread_of_the_others() {
        let mut benchmarks = spread_close_large();
        let sd = spread(&benchmarks).unwrap_or(f64::NAN);
        widen_one_process(&mut benchmarks, &sides(2), NoiseBand::default());
        let [several, close, large] = &benchmarks;
        let first = |b: &SuiteBenchmark| b.report.as_ref().map(|r| r.comparisons[0].clone());
        let (close_c, large_c) = (
            first(close).expect("a report"),
            first(large).expect("a report"),
        );
        assert_eq!(
            first(several).map(|c| c.ratio),
            Some(ratio(1.2, 1.15, 1.25))
        );
        assert!(several.widened_pct.is_empty());
        assert_eq!(close_c.verdict, Verdict::Unsure);
        assert!(close_c.ratio.high > 1.005, "{:?}", close_c.ratio);
        assert!(
            format!("{:?}", close_c.text).contains("unsure"),
            "{:?}",
            close_c.text
        );
        assert!(close.report.as_ref().is_some_and(|r| r.capped));
        assert_eq!(close.widened_pct, [sd * 100.0]);
        assert_eq!(large_c.verdict, Verdict::Slower);
        assert!(
            large_c.ratio.low < 1.9 && large_c.ratio.high > 2.1,
            "{:?}",
            large_c.ratio
        );
        assert!(!large.report.as_ref().is_some_and(|r| r.capped));
    }

    /// What the second pass reads ahead ([`certain_widened`]) is what
    /// the report's widening then gives: a one-process verdict near the
    /// band is left unsure, a large one certain.
    #[test]
    fn certain_widened_reads_the_verdict_the_report_gives() {
        let mut benchmarks = spread_close_large();
        let sd = spread(&benchmarks).unwrap_or(f64::NAN);
        let band = NoiseBand::default();
        let first = |b: &SuiteBenchmark| b.report.as_ref().map(|r| r.comparisons[0].clone());
        let ahead: Vec<Option<bool>> = (benchmarks[1..].iter())
            .map(|b| first(b).map(|c| certain_widened(&c, sd, band)))
            .collect();
        assert_eq!(ahead, [Some(false), Some(true)]);
        widen_one_process(&mut benchmarks, &sides(2), band);
        let given: Vec<Option<bool>> = (benchmarks[1..].iter())
            .map(|b| first(b).map(|c| c.verdict.is_certain()))
            .collect();
        assert_eq!(ahead, given);
    }

    /// An exact count (instructions) is not widened.
    #[test]
    fn a_count_is_not_widened() {
        let e = f64::exp;
        let spread = [e(0.1), e(-0.1), e(0.0)];
        let mut counted = fixtures::suite_benchmark(&[2.0], Ratio::exact(2.0));
        if let Some(report) = counted.report.as_mut() {
            report.comparisons[0].metric = "instructions".into();
        }
        let mut benchmarks = [
            fixtures::suite_benchmark(&spread, ratio(1.0, 0.9, 1.1)),
            counted,
        ];
        widen_one_process(&mut benchmarks, &sides(2), NoiseBand::default());
        let first = benchmarks[1]
            .report
            .as_ref()
            .map(|r| r.comparisons[0].ratio);
        assert_eq!(first, Some(Ratio::exact(2.0)));
    }

    /// Without a benchmark of three processes or more, nothing changes.
    #[test]
    fn without_a_spread_nothing_is_widened() {
        let mut benchmarks = [fixtures::suite_benchmark(&[0.87], ratio(0.87, 0.83, 0.98))];
        widen_one_process(&mut benchmarks, &sides(2), NoiseBand::default());
        assert!(benchmarks[0].widened_pct.is_empty());
        let verdict = benchmarks[0]
            .report
            .as_ref()
            .map(|r| r.comparisons[0].verdict);
        assert_eq!(verdict, Some(Verdict::Faster));
    }

    /// Each side is widened by its own processes' spread, not by another
    /// runtime's: wasmi's processes part by 0.1 in log, wasmer's by 0.01;
    /// a side whose own rest on fewer than ten degrees of freedom takes
    /// the pool of every side, and says so.
    #[test]
    fn each_side_is_widened_by_its_own_spread() {
        let e = f64::exp;
        let several = |wasmer: f64, wasmi: f64| {
            let wasmer = [e(wasmer), e(-wasmer), e(0.0)];
            let wasmi = [e(5.0 + wasmi), e(5.0 - wasmi), e(5.0)];
            fixtures::suite_benchmark_of(&[
                (&wasmer, ratio(1.0, 0.99, 1.01)),
                (&wasmi, ratio(e(5.0), e(4.9), e(5.1))),
            ])
        };
        // Six benchmarks of three processes: 12 degrees of freedom a side.
        let mut benchmarks: Vec<SuiteBenchmark> = (0..6).map(|_| several(0.01, 0.1)).collect();
        let close = ratio(1.05, 1.03, 1.07);
        benchmarks.push(fixtures::suite_benchmark_of(&[
            (&[1.05], close),
            (&[e(5.0)], ratio(e(5.0), e(4.95), e(5.05))),
        ]));
        let three = sides(3);
        let summary = Spread::of(&benchmarks, &three).summary(&three);
        let pcts: Vec<(f64, bool)> = summary.iter().map(|s| (s.pct, s.own)).collect();
        assert_eq!(summary.len(), 2);
        assert!((pcts[0].0 - 1.0).abs() < 1e-9 && pcts[0].1, "{pcts:?}");
        assert!((pcts[1].0 - 10.0).abs() < 1e-9 && pcts[1].1, "{pcts:?}");
        widen_one_process(&mut benchmarks, &three, NoiseBand::default());
        let last = &benchmarks[6];
        assert_eq!(last.widened_pct.len(), 2);
        assert!(
            (last.widened_pct[0] - 1.0).abs() < 1e-9,
            "{:?}",
            last.widened_pct
        );
        let verdicts: Vec<Verdict> = (last.report.iter())
            .flat_map(|r| r.comparisons.iter().map(|c| c.verdict))
            .collect();
        // 1.05× [1.03, 1.07] widened by 1.96 · 1%: still slower; widened
        // by wasmi's 10% it would reach into the band.
        assert_eq!(verdicts, [Verdict::Slower, Verdict::Slower]);
        assert!(!certain_widened(
            &fixtures::comparison("w", 1.05, 1.03, 1.07, Verdict::Slower),
            0.1,
            NoiseBand::default()
        ));
        // Two benchmarks: 4 degrees of freedom a side, too few; each
        // takes the pool of both.
        let thin = [several(0.01, 0.1), several(0.01, 0.1)];
        let summary = Spread::of(&thin, &three).summary(&three);
        let pooled = ((0.0001 * 4.0 + 0.01 * 4.0) / 8.0f64).sqrt() * 100.0;
        for s in &summary {
            assert!((s.pct - pooled).abs() < 1e-9 && !s.own, "{summary:?}");
        }
    }
}
