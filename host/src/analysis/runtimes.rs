//! The runtime view ([`RuntimeView`]) of a run measured under several
//! engines, or of a suite compared across engines ([`suite_view`]): its
//! rows grouped by benchmark, each engine's median over the
//! reference engine's with an interval, the fastest engine per benchmark
//! and how clearly, and per engine the geometric mean of its ratios.
//!
//! A run measures each row in processes of its own, so a ratio of two rows
//! is unpaired: its interval joins the two rows' intervals of this run
//! (which span their processes when these disagree) as independent, and
//! is never narrower than [`verdict::unpaired_ratio`]'s bootstrap of
//! their epochs (`drift` added to each side as for a baseline); the
//! geometric means take the benchmarks as independent
//! ([`suite::geometric_mean_ratio`]). A row with no measurable work
//! ([`crate::results::Figures::measurable_work`]) has a median but no
//! ratio: its median is noise around zero. A cell also holds how the
//! row's fresh instances started, each phase over the reference's with
//! the two intervals joined the same way (an empty guest's too).

use crate::analysis::stats::RESAMPLES_FINAL;
use crate::analysis::{suite, verdict};
use crate::results::{
    BenchResult, EngineMean, Figures, Foreign, Ratio, RuntimeBenchmark, RuntimeCell, RuntimeView,
    StartCell, StartPhase, SuiteBenchmark, SuiteComparison,
};

/// The view of `results` across their engines, in the order of `order`
/// (`--engine`'s; an engine it lacks after them), the ratios to
/// `reference` (the first engine when `None` or not among them); `None`
/// unless two engines or more measured one benchmark.
pub fn runtime_view(
    results: &[BenchResult],
    order: &[Foreign],
    reference: Option<&Foreign>,
    drift: f64,
    seed: u64,
) -> Option<RuntimeView> {
    let mut engines = engines_of(results);
    engines.sort_by_key(|e| order.iter().position(|o| o == e).unwrap_or(order.len()));
    let reference = reference
        .and_then(|name| engines.iter().find(|e| *e == name))
        .or(engines.first())?
        .clone();
    let benchmarks: Vec<RuntimeBenchmark> = benchmarks_of(results)
        .into_iter()
        .enumerate()
        .map(|(i, (name, rows))| {
            let seed = seed.wrapping_add(1_000 * i as u64);
            benchmark(name, &rows, &engines, &reference, drift, seed)
        })
        .filter(|b| b.cells.iter().filter(|c| c.error.is_none()).count() >= 2)
        .collect();
    if benchmarks.is_empty() {
        return None;
    }
    let means = engines
        .iter()
        .map(|e| engine_mean(e, &reference, &benchmarks))
        .collect();
    Some(RuntimeView {
        engines,
        reference,
        paired: false,
        benchmarks,
        means,
    })
}

/// The view of a suite compared across engines (`host compare DIR
/// --engine a --engine b ...`): each benchmark's sides, its ratios those
/// of its paired rounds at the confidence its comparison states, the means
/// the suite's; `None` when no benchmark was compared.
pub fn suite_view(report: &SuiteComparison) -> Option<RuntimeView> {
    let engines = report.sides.clone();
    let benchmarks: Vec<RuntimeBenchmark> = (report.benchmarks.iter().enumerate())
        .filter_map(|(i, b)| suite_benchmark(b, &engines, 1_000 * i as u64))
        .collect();
    if benchmarks.is_empty() || engines.len() < 2 {
        return None;
    }
    let geometric = &report.summary.geometric_means;
    let means = engines
        .iter()
        .enumerate()
        .map(|(k, engine)| {
            let fastest = (benchmarks.iter())
                .filter(|b| b.fastest.as_ref() == Some(engine))
                .count();
            let mean = (k > 0).then(|| geometric.iter().find(|g| g.side == *engine));
            let (benchmarks, ratio) = match mean {
                None => (benchmarks.len(), Some(Ratio::exact(1.0))),
                Some(None) => (0, None),
                Some(Some(g)) => (g.benchmarks, Some(g.ratio)),
            };
            EngineMean {
                engine: engine.clone(),
                benchmarks,
                ratio,
                fastest,
            }
        })
        .collect();
    Some(RuntimeView {
        reference: report.reference.clone(),
        engines,
        paired: true,
        benchmarks,
        means,
    })
}

/// One benchmark of a suite across its sides: a variant per side, in
/// order, but for the sides left out of its comparison (their cells say
/// why); the ratios of a benchmark not judged are left out.
fn suite_benchmark(b: &SuiteBenchmark, engines: &[Foreign], seed: u64) -> Option<RuntimeBenchmark> {
    let measured = b.variant_sides(engines);
    let report = b
        .report
        .as_ref()
        .filter(|r| r.variants.len() == measured.len())?;
    let judged = b.not_judged.is_none();
    // The place among the report's variants of side `k`, when measured.
    let place = |k: usize| measured.iter().position(|&m| m == k);
    let paired = |k: usize| match place(k)? {
        0 => None,
        at => report
            .comparisons
            .get(at - 1)
            .map(|c| c.ratio)
            .filter(|_| judged),
    };
    let cells = (engines.iter().enumerate())
        .map(|(k, engine)| match place(k) {
            Some(at) => cell(engine, report.variants.get(at), paired(k)),
            None => left_out_cell(engine, b),
        })
        .collect();
    let mut ranked: Vec<(usize, &Figures)> = (report.variants.iter().zip(&measured))
        .filter_map(|(v, &k)| Some((k, v.figures.as_ref().filter(|f| f.measurable_work())?)))
        .collect();
    ranked.sort_by(|a, b| a.1.ns_per_op.median.total_cmp(&b.1.ns_per_op.median));
    let (fastest, runner_up, margin) = match ranked.as_slice() {
        [(f, first), (r, second), ..] => {
            let margin = match (*f, *r) {
                (0, r) => paired(r),
                (f, 0) => paired(f).map(|p| Ratio {
                    value: 1.0 / p.value,
                    low: 1.0 / p.high,
                    high: 1.0 / p.low,
                }),
                _ => ratio_of(second, first, 0.0, seed),
            };
            (Some(engines[*f].clone()), Some(engines[*r].clone()), margin)
        }
        _ => (None, None, None),
    };
    Some(RuntimeBenchmark {
        benchmark: b.name.clone(),
        cells,
        fastest,
        runner_up,
        margin,
    })
}

/// The engines of the rows, in the order they first appear (the order of
/// `--engine`); none when the rows name none.
fn engines_of(results: &[BenchResult]) -> Vec<Foreign> {
    let mut engines: Vec<Foreign> = Vec::new();
    for engine in results.iter().filter_map(|r| r.engine.as_ref()) {
        if !engines.contains(engine) {
            engines.push(engine.clone());
        }
    }
    engines
}

/// The rows grouped by benchmark (its name without the engine), in the
/// order each benchmark first appears; the control's row left out.
fn benchmarks_of(results: &[BenchResult]) -> Vec<(Foreign, Vec<&BenchResult>)> {
    let mut groups: Vec<(Foreign, Vec<&BenchResult>)> = Vec::new();
    for row in results
        .iter()
        .filter(|r| r.engine.is_some() && !r.is_control())
    {
        let name = row.name_across_engines();
        match groups.iter_mut().find(|(n, _)| *n == name) {
            Some((_, rows)) => rows.push(row),
            None => groups.push((name, vec![row])),
        }
    }
    groups
}

/// One benchmark's cells, its fastest engine and the margin over the
/// runner-up.
fn benchmark(
    name: Foreign,
    rows: &[&BenchResult],
    engines: &[Foreign],
    reference: &Foreign,
    drift: f64,
    seed: u64,
) -> RuntimeBenchmark {
    let row_of = |engine: &Foreign| rows.iter().find(|r| r.engine.as_ref() == Some(engine));
    let timed = |engine: &Foreign| {
        row_of(engine)
            .and_then(|r| r.figures.as_ref())
            .filter(|f| f.measurable_work())
    };
    let base = timed(reference);
    let cells = engines
        .iter()
        .enumerate()
        .map(|(k, engine)| {
            let ratio = match (engine == reference, timed(engine), base) {
                (false, Some(f), Some(b)) => ratio_of(f, b, drift, seed.wrapping_add(k as u64)),
                _ => None,
            };
            let figures_of = |e: &Foreign| row_of(e).and_then(|r| r.figures.as_ref());
            let base = (engine != reference)
                .then(|| figures_of(reference))
                .flatten();
            let start = start_cell(figures_of(engine), base);
            RuntimeCell {
                start,
                ..cell(engine, row_of(engine).copied(), ratio)
            }
        })
        .collect();
    let mut ranked: Vec<(&Foreign, &Figures)> = engines
        .iter()
        .filter_map(|e| Some((e, timed(e)?)))
        .collect();
    ranked.sort_by(|a, b| a.1.ns_per_op.median.total_cmp(&b.1.ns_per_op.median));
    let (fastest, runner_up, margin) = match ranked.as_slice() {
        [(first, f), (second, s), ..] => (
            Some((*first).clone()),
            Some((*second).clone()),
            ratio_of(s, f, drift, seed.wrapping_add(500)),
        ),
        _ => (None, None, None),
    };
    RuntimeBenchmark {
        benchmark: name,
        cells,
        fastest,
        runner_up,
        margin,
    }
}

/// `f`'s median over `base`'s, with the interval of two independent rows:
/// their this-run intervals (which span their processes when these
/// disagree) joined on logs, each side on its own, in quadrature; never
/// narrower than the bootstrap of their epochs.
fn ratio_of(f: &Figures, base: &Figures, drift: f64, seed: u64) -> Option<Ratio> {
    let epochs = verdict::unpaired_ratio(
        &f.series.epochs_ns_per_op,
        &base.series.epochs_ns_per_op,
        drift,
        RESAMPLES_FINAL,
        seed,
    )?;
    let (a, b) = (&f.ns_per_op, &base.ns_per_op);
    let Some(joined) = joined(
        (a.median, a.ci95_this_run_low, a.ci95_this_run_high),
        (b.median, b.ci95_this_run_low, b.ci95_this_run_high),
    ) else {
        return Some(epochs);
    };
    Some(Ratio {
        value: joined.value,
        low: epochs.low.min(joined.low),
        high: epochs.high.max(joined.high),
    })
}

/// The ratio of two independent medians, each `(median, low, high)`, with
/// their intervals joined on logs, each side on its own, in quadrature;
/// `None` unless every figure is a positive number.
fn joined(a: (f64, f64, f64), b: (f64, f64, f64)) -> Option<Ratio> {
    let value = a.0 / b.0;
    let below = |m: f64, low: f64| (m / low).ln();
    let above = |m: f64, high: f64| (high / m).ln();
    let down = below(a.0, a.1).hypot(above(b.0, b.2));
    let up = above(a.0, a.2).hypot(below(b.0, b.1));
    if !(value.is_finite() && value > 0.0 && down.is_finite() && up.is_finite()) {
        return None;
    }
    Some(Ratio {
        value,
        low: (value * (-down).exp()).min(value),
        high: (value * up.exp()).max(value),
    })
}

/// An engine's start (`f`'s) beside the reference's (`base`'s, `None`
/// for the reference itself): each phase's median and its ratio.
fn start_cell(f: Option<&Figures>, base: Option<&Figures>) -> Option<StartCell> {
    let start = f?.start.as_ref()?;
    let base = base.and_then(|b| b.start.as_ref());
    let ratio = |p: &StartPhase, q: Option<&StartPhase>| {
        let q = q?;
        joined(
            (p.median, p.ci95_low, p.ci95_high),
            (q.median, q.ci95_low, q.ci95_high),
        )
    };
    Some(StartCell {
        instantiate_ns: start.instantiate_ns.median,
        instantiate_ratio: ratio(&start.instantiate_ns, base.map(|b| &b.instantiate_ns)),
        first_call_ns: start.first_call_ns.median,
        first_call_ratio: ratio(&start.first_call_ns, base.map(|b| &b.first_call_ns)),
    })
}

/// An engine's cell: its row's median, or why it has none.
fn cell(engine: &Foreign, row: Option<&BenchResult>, ratio: Option<Ratio>) -> RuntimeCell {
    let (median_ns, error) = match row {
        Some(BenchResult {
            figures: Some(f), ..
        }) => (f.ns_per_op.median, None),
        Some(BenchResult {
            error: Some(error), ..
        }) => (f64::NAN, Some(error.clone())),
        _ => (f64::NAN, Some(Foreign::from("not run under this engine"))),
    };
    RuntimeCell {
        engine: engine.clone(),
        median_ns,
        ratio,
        error,
        unsupported: false,
        start: None,
    }
}

/// The cell of `engine`, a side left out of `b`'s comparison: why.
fn left_out_cell(engine: &Foreign, b: &SuiteBenchmark) -> RuntimeCell {
    let why = (b.left_out.iter()).find(|l| l.side == *engine);
    RuntimeCell {
        engine: engine.clone(),
        median_ns: f64::NAN,
        ratio: None,
        error: Some(why.map_or_else(|| Foreign::from("left out"), |l| l.why.clone())),
        unsupported: why.is_some_and(|l| l.unsupported),
        start: None,
    }
}

/// One engine's geometric mean over the benchmarks with a ratio.
fn engine_mean(
    engine: &Foreign,
    reference: &Foreign,
    benchmarks: &[RuntimeBenchmark],
) -> EngineMean {
    let fastest = (benchmarks.iter())
        .filter(|b| b.fastest.as_ref() == Some(engine))
        .count();
    let cells = benchmarks
        .iter()
        .flat_map(|b| b.cells.iter().filter(|c| c.engine == *engine));
    if engine == reference {
        let timed = (benchmarks.iter())
            .filter(|b| b.cells.iter().any(|c| c.ratio.is_some()))
            .count();
        return EngineMean {
            engine: engine.clone(),
            benchmarks: timed,
            ratio: (timed > 0).then(|| Ratio::exact(1.0)),
            fastest,
        };
    }
    let ratios: Vec<Ratio> = cells.filter_map(|c| c.ratio).collect();
    EngineMean {
        engine: engine.clone(),
        benchmarks: ratios.len(),
        ratio: suite::geometric_mean_ratio(&ratios),
        fastest,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::{
        compare_report, failed, figures_from, measured, samples, start,
    };
    use crate::results::{SuiteRatio, SuiteVerdicts};

    /// A row of `benchmark` under `engine` whose epochs sit around `median`.
    fn row(benchmark: &str, engine: &str, median: f64, seed: u64) -> BenchResult {
        let mut r = measured(
            benchmark,
            None,
            figures_from(samples(median, 0.01, 5, 20, seed), 1000, seed),
        );
        r.name = Foreign::from(format!("{benchmark}[{engine}]"));
        r.engine = Some(Foreign::from(engine));
        r
    }

    fn rows() -> Vec<BenchResult> {
        vec![
            row("xor", "cranelift", 1.0, 1),
            row("xor", "wasmi", 12.0, 2),
            row("xor", "v8", 1.001, 3),
            row("sort", "cranelift", 100.0, 4),
            row("sort", "wasmi", 300.0, 5),
            row("sort", "v8", 80.0, 6),
        ]
    }

    #[test]
    fn each_cell_is_its_median_over_the_reference_with_an_interval() {
        let view = runtime_view(&rows(), &[], None, 0.0, 7).expect("a view");
        assert_eq!(view.reference, "cranelift");
        assert_eq!(view.engines, ["cranelift", "wasmi", "v8"]);
        let names: Vec<&Foreign> = view.benchmarks.iter().map(|b| &b.benchmark).collect();
        assert_eq!(names, ["xor", "sort"]);
        let xor = &view.benchmarks[0];
        assert!(xor.cells[0].ratio.is_none(), "the reference has no ratio");
        let wasmi = xor.cells[1].ratio.expect("a ratio");
        assert!((wasmi.value - 12.0).abs() < 0.5, "{wasmi:?}");
        assert!(wasmi.low < wasmi.value && wasmi.value < wasmi.high);
        assert!(wasmi.low > 10.0 && wasmi.high < 14.0, "{wasmi:?}");
        assert_eq!(
            xor.fastest.as_ref().map(|f| f.unescaped()),
            Some("cranelift")
        );
        assert!(!xor.clear(), "0.1% apart at 1% spread is no clear win");
        let sort = &view.benchmarks[1];
        assert_eq!(sort.fastest.as_ref().map(|f| f.unescaped()), Some("v8"));
        assert!(sort.clear(), "{:?}", sort.margin);
    }

    #[test]
    fn each_engine_has_the_geometric_mean_of_its_ratios() {
        let view = runtime_view(&rows(), &[], None, 0.0, 7).expect("a view");
        let mean = |engine: &str| {
            let m = view
                .means
                .iter()
                .find(|m| m.engine == engine)
                .expect("a mean");
            (m.ratio.expect("a ratio"), m.benchmarks, m.fastest)
        };
        let (reference, n, fastest) = mean("cranelift");
        assert_eq!((reference, n, fastest), (Ratio::exact(1.0), 2, 1));
        let (wasmi, n, _) = mean("wasmi");
        assert_eq!(n, 2);
        assert!((wasmi.value - 6.0).abs() < 0.2, "√(12·3) = 6: {wasmi:?}");
        assert!(wasmi.low < 6.0 && wasmi.high > 6.0);
        let (v8, _, fastest) = mean("v8");
        assert!((v8.value - (1.001f64 * 0.8).sqrt()).abs() < 0.02, "{v8:?}");
        assert_eq!(fastest, 1);
    }

    #[test]
    fn the_reference_is_the_one_named() {
        let view = runtime_view(&rows(), &[], Some(&"wasmi".into()), 0.0, 7).expect("a view");
        assert_eq!(view.reference, "wasmi");
        let cranelift = view.benchmarks[0].cells[0].ratio.expect("a ratio");
        assert!((cranelift.value - 1.0 / 12.0).abs() < 0.01, "{cranelift:?}");
        let unknown = runtime_view(&rows(), &[], Some(&"nope".into()), 0.0, 7).expect("a view");
        assert_eq!(unknown.reference, "cranelift");
    }

    #[test]
    fn a_failed_row_says_why_and_a_benchmark_under_one_engine_is_left_out() {
        let mut results = rows();
        let mut broken = failed("xor", "wasmi runs core modules only");
        broken.name = Foreign::from("xor[wasmi]");
        broken.engine = Some(Foreign::from("wasmi"));
        results[1] = broken;
        results.push(row("alone", "cranelift", 5.0, 8));
        let view = runtime_view(&results, &[], None, 0.0, 7).expect("a view");
        assert_eq!(view.benchmarks.len(), 2, "`alone` ran under one engine");
        let cell = &view.benchmarks[0].cells[1];
        assert!(cell.median_ns.is_nan() && cell.ratio.is_none());
        assert_eq!(
            cell.error.as_ref().map(|e| e.unescaped()),
            Some("wasmi runs core modules only")
        );
        let wasmi = view
            .means
            .iter()
            .find(|m| m.engine == "wasmi")
            .expect("a mean");
        assert_eq!(wasmi.benchmarks, 1);
    }

    #[test]
    fn a_row_of_no_measurable_work_has_no_ratio() {
        let mut results = rows();
        if let Some(f) = results[0].figures.as_mut() {
            f.indistinguishable_from_empty = true;
        }
        let view = runtime_view(&results, &[], None, 0.0, 7).expect("a view");
        let xor = &view.benchmarks[0];
        assert!(xor.cells.iter().all(|c| c.ratio.is_none()));
        assert_eq!(xor.fastest.as_ref().map(|f| f.unescaped()), Some("v8"));
    }

    /// A suite of two benchmarks across the four sides of the fixture's
    /// comparison (850, 1020, 600 and 853 ns), the second not judged.
    fn suite() -> SuiteComparison {
        let report = compare_report();
        let sides: Vec<Foreign> = report.variants.iter().map(|v| v.name.clone()).collect();
        let benchmark = |name: &str, not_judged: Option<&str>| SuiteBenchmark {
            name: name.into(),
            paths: vec![name.into()],
            error: None,
            unsupported: None,
            not_judged: not_judged.map(Foreign::from),
            report: Some(report.clone()),
            elapsed_ms: 1.0,
            passes: 1,
            left_out: Vec::new(),
            failed_later: None,
            widened_pct: Vec::new(),
        };
        let mean = |k: usize, value: f64| SuiteRatio {
            side: sides[k].clone(),
            reference: sides[0].clone(),
            benchmarks: 1,
            ratio: Ratio::exact(value),
            confidence: 0.95,
            between_runs: None,
        };
        SuiteComparison {
            tool: report.tool.clone(),
            environment: None,
            reference: sides[0].clone(),
            noise_pct: 1.0,
            benchmarks: vec![benchmark("a", None), benchmark("b", Some("noise"))],
            unpaired: Vec::new(),
            summary: SuiteVerdicts {
                geometric_means: vec![mean(1, 1.2), mean(2, 0.706), mean(3, 1.003)],
                ..SuiteVerdicts::default()
            },
            stopped: None,
            runtimes: None,
            sides,
            elapsed_ms: 0.0,
            suite_time_ms: None,
        }
    }

    #[test]
    fn a_suite_across_engines_reads_its_paired_ratios_and_means() {
        let view = suite_view(&suite()).expect("a view");
        assert!(view.paired);
        assert_eq!(view.reference, "mod13.wasm");
        let a = &view.benchmarks[0];
        let ratios: Vec<Option<f64>> = a.cells.iter().map(|c| c.ratio.map(|r| r.value)).collect();
        assert_eq!(ratios, [None, Some(1.2), Some(0.706), Some(1.003)]);
        assert_eq!(
            a.fastest.as_ref().map(|f| f.unescaped()),
            Some("mod17.wasm")
        );
        assert_eq!(
            a.runner_up.as_ref().map(|f| f.unescaped()),
            Some("mod13.wasm")
        );
        let margin = a.margin.expect("the reference's paired ratio, turned over");
        assert!((margin.value - 1.0 / 0.706).abs() < 1e-9 && margin.low > 1.38 && a.clear());
        let b = &view.benchmarks[1];
        assert!(b.cells.iter().all(|c| c.ratio.is_none()), "not judged");
        let means: Vec<Option<f64>> = view
            .means
            .iter()
            .map(|m| m.ratio.map(|r| r.value))
            .collect();
        assert_eq!(means, [Some(1.0), Some(1.2), Some(0.706), Some(1.003)]);
        assert_eq!(view.means[2].fastest, 2);
    }

    /// A side left out of a benchmark's comparison has a cell that says
    /// why; the sides after it keep their places and their ratios.
    #[test]
    fn a_side_left_out_says_why_and_the_others_keep_their_places() {
        let timeout = "did not return within --timeout 10s";
        let report = left_out_of_first(2, (timeout, false));
        let view = suite_view(&report).expect("a view");
        let a = &view.benchmarks[0];
        let ratios: Vec<Option<f64>> = a.cells.iter().map(|c| c.ratio.map(|r| r.value)).collect();
        assert_eq!(ratios, [None, Some(1.2), None, Some(1.003)]);
        let why = a.cells[2].error.as_ref().map(|e| e.unescaped());
        assert_eq!(why, Some("did not return within --timeout 10s"));
        assert!(a.cells[2].median_ns.is_nan());
        assert!(!a.cells[2].unsupported);
        assert_eq!(a.fastest.as_ref(), Some(&report.sides[0]));
        assert_eq!(a.runner_up.as_ref(), Some(&report.sides[3]));
    }

    /// A side left out as unsupported has a cell that says so.
    #[test]
    fn a_side_left_out_as_unsupported_says_so_in_its_cell() {
        let component = "wasmer runs core modules only, not a component";
        let report = left_out_of_first(1, (component, true));
        let view = suite_view(&report).expect("a view");
        let unsupported: Vec<bool> = (view.benchmarks[0].cells.iter())
            .map(|c| c.unsupported)
            .collect();
        assert_eq!(unsupported, [false, true, false, false]);
    }

    /// The suite with side `k` (after the first) left out of its first
    /// benchmark, `why` and whether as unsupported.
    fn left_out_of_first(k: usize, (why, unsupported): (&str, bool)) -> SuiteComparison {
        let mut report = suite();
        let side = report.sides[k].clone();
        let a = &mut report.benchmarks[0];
        a.left_out = vec![crate::results::LeftOut {
            side,
            why: why.into(),
            unsupported,
        }];
        if let Some(r) = a.report.as_mut() {
            r.variants.remove(k);
            r.comparisons.remove(k - 1);
        }
        report
    }

    #[test]
    fn the_engines_follow_the_order_given() {
        let order: Vec<Foreign> = ["v8", "cranelift", "wasmi"].map(Foreign::from).to_vec();
        let view = runtime_view(&rows(), &order, None, 0.0, 7).expect("a view");
        assert_eq!(view.engines, order);
        assert_eq!(view.reference, "v8");
        assert_eq!(view.benchmarks[0].cells[2].engine, "wasmi");
    }

    #[test]
    fn a_ratio_is_as_uncertain_as_the_rows_whose_processes_disagree() {
        let mut results = rows();
        if let Some(f) = results[0].figures.as_mut() {
            let m = f.ns_per_op.median;
            (
                f.ns_per_op.ci95_this_run_low,
                f.ns_per_op.ci95_this_run_high,
            ) = (0.8 * m, 1.2 * m);
        }
        let view = runtime_view(&results, &[], None, 0.0, 7).expect("a view");
        let wasmi = view.benchmarks[0].cells[1].ratio.expect("a ratio");
        assert!(wasmi.low < 10.1 && wasmi.high > 14.9, "{wasmi:?}");
        let alone = runtime_view(&rows(), &[], None, 0.0, 7).expect("a view");
        let narrow = alone.benchmarks[0].cells[1].ratio.expect("a ratio");
        assert!(narrow.low > 11.0 && narrow.high < 13.0, "{narrow:?}");
    }

    /// `row` with its fresh instances' start: `instantiate` and `first`
    /// ns, each ±5%.
    fn started(mut r: BenchResult, instantiate: f64, first: f64) -> BenchResult {
        if let Some(f) = r.figures.as_mut() {
            f.start = Some(start(instantiate, first, 0.05));
        }
        r
    }

    #[test]
    fn a_cell_starts_against_the_reference_even_without_measurable_work() {
        let mut results = rows();
        results[0] = started(results[0].clone(), 20_000.0, 100.0);
        results[1] = started(results[1].clone(), 10_000.0, 300.0);
        results[0]
            .figures
            .as_mut()
            .expect("figures")
            .no_measurable_work = true;
        let view = runtime_view(&results, &[], None, 0.0, 7).expect("a view");
        let xor = &view.benchmarks[0];
        let reference = xor.cells[0].start.expect("a start");
        assert_eq!(reference.instantiate_ns, 20_000.0);
        assert!(reference.instantiate_ratio.is_none() && reference.first_call_ratio.is_none());
        let wasmi = xor.cells[1].start.expect("a start");
        let halved = wasmi.instantiate_ratio.expect("a ratio");
        assert!((halved.value - 0.5).abs() < 1e-12, "{halved:?}");
        // ±5% on each side, joined in quadrature: about ±7%.
        let spread = (halved.high / halved.value).ln();
        assert!((spread - 0.05f64.ln_1p().hypot(0.05f64.ln_1p())).abs() < 0.01);
        assert!((wasmi.first_call_ratio.expect("a ratio").value - 3.0).abs() < 1e-12);
        assert!(xor.cells[2].start.is_none(), "v8's row has none");
    }

    #[test]
    fn rows_of_one_engine_make_no_view() {
        let one: Vec<BenchResult> = rows()
            .into_iter()
            .filter(|r| r.engine == Some("v8".into()))
            .collect();
        assert!(runtime_view(&one, &[], None, 0.0, 7).is_none());
    }
}
