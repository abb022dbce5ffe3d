//! Hand-made rows and reports for the tests of analysis and the stages
//! after it (output, command): a small run report with fixed
//! figures (for exact snapshots), and realistic reports built from generated
//! samples (for the plots).

use crate::analysis::{complexity, stats, verdict};
use crate::guest::Kind;
use crate::guest::runtime::wasmtime::cache::CacheOutcome;
use crate::options::{EngineConfig, Headline, NoiseBand};
use crate::results::{
    BenchResult, Checksum, CompareReport, Comparison, Complexity, ComplexityResult, Counts,
    DriftFigures, Durations, Environment, Figures, Note, Notes, NsPerOp, Pauses, PhaseComparison,
    ProcessFigures, ProgramPhase, Ratio, RunReport, Series, Start, StartPhase, SuiteBenchmark,
    Time, Tool, Verdict, WarmupFigures,
};

pub fn environment() -> Environment {
    Environment {
        pinned_core: Some(3),
        cores: 8,
        priority: "nice -20 (SCHED_OTHER)".into(),
        calibration: crate::results::CalibrationFigures {
            clock_resolution_ns: 20.0,
            clock_overhead_ns: 18.5,
            empty_call_ns: 4.2,
            pause_pair_ns: 9.8,
            empty_component_call_ns: None,
            component_pause_pair_ns: None,
            sample_time_ms: 10.0,
        },
        seed: 42,
        seed_rule: crate::options::SeedRule::PerCall,
        real_clock: false,
        drift_pct: 0.5,
        cpu_model: Some("Test CPU @ 3.00GHz".into()),
        engines: vec![EngineConfig::default()],
        compile_cache: None,
        max_memory_bytes: 1 << 30,
        huge_pages: None,
        timeout_ms: 10_000.0,
        core_choice: None,
        interruptions: None,
        core_loads: vec![],
        busy_machine: false,
        warnings: vec![],
        pmu: "unavailable (perf_event_open: No such file or directory (os error 2))".into(),
    }
}

/// Blocks of per-op samples around `median` with a spread of `spread`
/// (relative), a few mild and severe high outliers, deterministic per `seed`.
pub fn samples(
    median: f64,
    spread: f64,
    blocks: usize,
    per_block: usize,
    seed: u64,
) -> Vec<Vec<f64>> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..blocks)
        .map(|_| {
            (0..per_block)
                .map(|_| {
                    // Roughly normal: the sum of three uniforms.
                    let z = (rng.f64() + rng.f64() + rng.f64() - 1.5) * 2.0;
                    let mut x = median * (1.0 + spread * z);
                    let roll = rng.f64();
                    if roll < 0.01 {
                        x *= 1.0 + 20.0 * spread * (1.0 + rng.f64());
                    } else if roll < 0.04 {
                        x *= 1.0 + 5.0 * spread * (1.0 + rng.f64() * 0.5);
                    }
                    x
                })
                .collect()
        })
        .collect()
}

/// Figures with hand-set statistics (for exact snapshots) over `samples`.
pub fn fixed_figures(samples: Vec<Vec<f64>>) -> Figures {
    let all: Vec<f64> = samples.iter().flatten().copied().collect();
    let (outlier_counts, epoch_classes) = stats::tukey(&all);
    Figures {
        counts: Counts {
            count: 1000,
            samples: 100,
            epochs: 100,
            epochs_disturbed: 0,
            undisturbed: false,
        },
        ns_per_op: NsPerOp {
            median: 1234.5,
            mean: 1240.0,
            stddev: 12.0,
            min: 1200.0,
            max: 1300.0,
            ci95_low: 1230.0,
            ci95_high: 1240.0,
            ci95_shown: Headline::LaterRun,
            ci95_this_run_low: 1230.0,
            ci95_this_run_high: 1240.0,
            ci95_later_run_low: 1230.0,
            ci95_later_run_high: 1240.0,
            ci95_within_run_low: 1231.0,
            ci95_within_run_high: 1239.0,
        },
        time: Time {
            raw_ns_per_op_median: 1238.7,
            err_pct: 0.52,
            ops_per_sec: Some(810_044.552),
            fixed_cost_ns: 4200.0,
            outliers: 3,
            outlier_counts,
        },
        warmup: WarmupFigures {
            warmup_ms: 120.0,
            warmup_settled: true,
            warmup_rounds: 4,
            warmup_first_timed: 0,
        },
        durations: Durations {
            compile_ms: 12.5,
            compile_cache: CacheOutcome::Miss,
            instantiate_ms: 0.4,
            sampling_ms: 1500.0,
        },
        checksum: Some(Checksum::Signed(-7)),
        pauses: Pauses {
            pauses_per_sample: 0,
            pauses_total: 0,
        },
        phases: None,
        start: None,
        fuel_per_op: None,
        indistinguishable_from_empty: false,
        precision_reached: true,
        stopped_by: None,
        notes: Notes(vec![Note::WarmupNotSettled { cap_ms: 500.0 }]),
        info: Notes::default(),
        no_measurable_work: false,
        at_clock_resolution: false,
        costs: crate::results::Costs::default(),
        processes: ProcessFigures {
            processes: 1,
            process_medians_ns: Vec::new(),
            between_process_sd_pct: 0.0,
            process_spread_pct: None,
            process_groups: Vec::new(),
        },
        drift: DriftFigures {
            run_drift_pct: None,
            run_drift_runs: 0,
            earlier_runs: 0,
            earlier_runs_departure_pct: None,
        },
        callgrind: None,
        hardware_counters: None,
        series: Series {
            raw_samples_ns: samples.clone(),
            epochs_ns_per_op: samples,
            epoch_classes,
            fixed_costs_ns: vec![4200.0; 10],
        },
    }
}

/// Figures computed from `samples` the way a run computes them.
pub fn figures_from(samples: Vec<Vec<f64>>, count: u64, seed: u64) -> Figures {
    let summary = stats::summarize(&samples, 1000, seed);
    let all: Vec<f64> = samples.iter().flatten().copied().collect();
    let (_, epoch_classes) = stats::tukey(&all);
    let mut f = fixed_figures(samples);
    f.counts.count = count;
    f.counts.samples = all.len();
    f.counts.epochs = all.len();
    f.ns_per_op = NsPerOp {
        median: summary.median,
        mean: summary.mean,
        stddev: summary.stddev,
        min: summary.min,
        max: summary.max,
        ci95_low: summary.ci95_low,
        ci95_high: summary.ci95_high,
        ci95_shown: Headline::LaterRun,
        ci95_this_run_low: summary.ci95_low,
        ci95_this_run_high: summary.ci95_high,
        ci95_later_run_low: summary.ci95_low,
        ci95_later_run_high: summary.ci95_high,
        ci95_within_run_low: summary.ci95_low,
        ci95_within_run_high: summary.ci95_high,
    };
    f.time.raw_ns_per_op_median = summary.median + 4.2;
    f.time.err_pct = summary.err_pct;
    f.time.ops_per_sec = (summary.median > 0.0).then(|| 1e9 / summary.median);
    f.time.outliers = summary.outliers.total();
    f.time.outlier_counts = summary.outliers;
    f.series.epoch_classes = epoch_classes;
    f.notes = Notes::default();
    f
}

/// A start whose instantiation and first call have the medians
/// `instantiate` and `first` ns, each interval `spread` (relative) either
/// side, over 30 instances.
pub fn start(instantiate: f64, first: f64, spread: f64) -> Start {
    let phase = |median: f64| StartPhase {
        median,
        ci95_low: median * (1.0 - spread),
        ci95_high: median * (1.0 + spread),
        min: median * (1.0 - 2.0 * spread),
        max: median * (1.0 + 2.0 * spread),
        samples: 30,
    };
    Start {
        instantiate_ns: phase(instantiate),
        first_call_ns: phase(first),
    }
}

pub fn measured(name: &str, size: Option<u64>, figures: Figures) -> BenchResult {
    let benchmark = name.split('/').next().unwrap_or(name).to_string();
    BenchResult {
        name: name.into(),
        path: format!(
            "workloads/{}",
            benchmark.split(':').next().unwrap_or(&benchmark)
        )
        .into(),
        benchmark: benchmark.into(),
        size,
        engine: None,
        kind: Some(Kind::Module),
        error: None,
        figures: Some(figures),
        baseline: None,
        subject: None,
        module: None,
    }
}

pub fn failed(name: &str, error: &str) -> BenchResult {
    BenchResult {
        name: name.into(),
        benchmark: name.into(),
        size: None,
        engine: None,
        path: format!("workloads/{name}").into(),
        kind: Some(Kind::Module),
        error: Some(error.into()),
        figures: None,
        baseline: None,
        subject: None,
        module: None,
    }
}

/// Two rows: one measured with fixed figures, one failed.
pub fn run_report() -> RunReport {
    RunReport {
        tool: Tool::this(),
        environment: environment(),
        results: vec![
            measured(
                "xor.wasm",
                None,
                fixed_figures(samples(1234.5, 0.01, 4, 25, 1)),
            ),
            failed("trap.wasm", "wasm trap: unreachable, in `run`"),
        ],
        complexity: vec![],
        suite: None,
        runtimes: None,
        baseline: None,
        saved_baseline: None,
        stopped: None,
        shards: Vec::new(),
        merged_from: Vec::new(),
    }
}

/// Two benchmarks under three engines (`xor` 1, 12 and 1.001 ns, `sort`
/// 100, 300 and 80 ns under cranelift, wasmi and v8), a component cranelift
/// alone ran, and the runtime view of them.
pub fn runtimes_run_report() -> RunReport {
    let mut report = run_report();
    let engines = ["cranelift", "wasmi", "v8"];
    let mut results = Vec::new();
    for (k, (benchmark, medians)) in [("xor", [1.0, 12.0, 1.001]), ("sort", [100.0, 300.0, 80.0])]
        .into_iter()
        .enumerate()
    {
        for (e, engine) in engines.into_iter().enumerate() {
            let seed = (3 * k + e) as u64;
            let samples = samples(medians[e], 0.01, 5, 20, seed);
            let mut row = measured(benchmark, None, figures_from(samples, 1000, seed));
            row.name = format!("{benchmark}[{engine}]").into();
            row.engine = Some(engine.into());
            results.push(row);
        }
    }
    for (e, engine) in engines.into_iter().enumerate() {
        let mut row = match e {
            0 => measured(
                "component",
                None,
                fixed_figures(samples(50.0, 0.01, 4, 25, 9)),
            ),
            _ => failed("component", "runs core modules only, not a component"),
        };
        row.name = format!("component[{engine}]").into();
        row.engine = Some(engine.into());
        results.push(row);
    }
    report.results = results;
    report.runtimes = crate::analysis::runtimes::runtime_view(&report.results, &[], None, 0.0, 1);
    report
}

/// `variant` against `mod13.wasm`: its ratio, interval and verdict.
pub fn comparison(variant: &str, ratio: f64, low: f64, high: f64, verdict: Verdict) -> Comparison {
    Comparison {
        variant: variant.into(),
        reference: "mod13.wasm".into(),
        metric: "time".into(),
        ratio: Ratio {
            value: ratio,
            low,
            high,
        },
        confidence: 0.95,
        mde_pct: (high - low) / 2.0 / ratio * 100.0,
        verdict,
        text: format!("`{variant}` vs `mod13.wasm`: {verdict}").into(),
        phases: Vec::new(),
        few_rounds: Vec::new(),
    }
}

/// [`compare_report`] of programs: each comparison with its instantiate
/// phase (a ratio of 1.002, the same) and its execute phase (its own).
pub fn compare_programs_report() -> CompareReport {
    let mut report = compare_report();
    for c in &mut report.comparisons {
        let instantiate = Ratio {
            value: 1.002,
            low: 0.99,
            high: 1.01,
        };
        c.phases = vec![
            PhaseComparison {
                phase: ProgramPhase::Instantiate,
                ratio: instantiate,
                mde_pct: 1.0,
                verdict: Verdict::Same,
                text: c
                    .variant
                    .map(|v| format!("instantiate: `{v}` vs `mod13.wasm`: same")),
            },
            PhaseComparison {
                phase: ProgramPhase::Execute,
                ratio: c.ratio,
                mde_pct: c.mde_pct,
                verdict: c.verdict,
                text: c.text.after("execute: "),
            },
        ];
    }
    report.count = 1;
    report
}

/// Three variants against the first: slower, faster, same.
pub fn compare_report() -> CompareReport {
    let variant = |name: &str, median: f64, seed: u64| {
        measured(
            name,
            None,
            figures_from(samples(median, 0.02, 30, 40, seed), 500, seed),
        )
    };
    CompareReport {
        tool: Tool::this(),
        environment: environment(),
        reference: "mod13.wasm".into(),
        noise_pct: 1.0,
        count: 500,
        rounds: 30,
        sampling_ms: 1800.0,
        variants: vec![
            variant("mod13.wasm", 850.0, 11),
            variant("mod16.wasm", 1020.0, 12),
            variant("mod17.wasm", 600.0, 13),
            variant("mod13|copy.wasm", 853.0, 14),
        ],
        comparisons: vec![
            comparison("mod16.wasm", 1.2, 1.17, 1.23, Verdict::Slower),
            comparison("mod17.wasm", 0.706, 0.69, 0.72, Verdict::Faster),
            comparison("mod13|copy.wasm", 1.003, 0.996, 1.008, Verdict::Same),
        ],
        profile: None,
        stopped: None,
        capped: false,
        to_certain_ms: None,
    }
}

/// A benchmark of two sides whose processes read the side at
/// `ratios` of the reference, judged `ratio`.
pub fn suite_benchmark(ratios: &[f64], ratio: Ratio) -> SuiteBenchmark {
    suite_benchmark_of(&[(ratios, ratio)])
}

/// A benchmark of a reference and a side per item of `sides` (at most
/// three), whose processes read that side at its ratios of the
/// reference, judged at its ratio.
pub fn suite_benchmark_of(sides: &[(&[f64], Ratio)]) -> SuiteBenchmark {
    let mut report = compare_report();
    report.variants.truncate(sides.len() + 1);
    report.comparisons.truncate(sides.len());
    let processes = sides.first().map_or(0, |(r, _)| r.len());
    let medians = |k: usize| match k {
        0 => vec![100.0; processes],
        _ => sides[k - 1].0.iter().map(|r| 100.0 * r).collect(),
    };
    for (k, v) in report.variants.iter_mut().enumerate() {
        if let Some(figures) = v.figures.as_mut() {
            figures.processes.processes = processes;
            figures.processes.process_medians_ns = medians(k);
        }
    }
    let names = ["mod16.wasm", "mod17.wasm", "mod13|copy.wasm"];
    for ((c, (_, ratio)), name) in report.comparisons.iter_mut().zip(sides).zip(names) {
        let verdict = verdict::verdict(ratio, NoiseBand::default());
        *c = comparison(name, ratio.value, ratio.low, ratio.high, verdict);
    }
    judged(report)
}

/// A benchmark named "x", judged in one pass into `report`.
pub fn judged(report: CompareReport) -> SuiteBenchmark {
    SuiteBenchmark {
        name: "x".into(),
        paths: Vec::new(),
        error: None,
        unsupported: None,
        not_judged: None,
        report: Some(report),
        elapsed_ms: 1.0,
        passes: 1,
        left_out: Vec::new(),
        failed_later: None,
        widened_pct: Vec::new(),
    }
}

/// A run over three sizes of one benchmark, one plain row, one failure, and
/// the complexity fit of the sized benchmark.
pub fn realistic_run_report() -> RunReport {
    let mut results = Vec::new();
    let mut points = Vec::new();
    for (i, size) in [100u64, 1_000, 10_000, 100_000].into_iter().enumerate() {
        let n = size as f64;
        let median = 3.0 * n * n.log2() + 40.0;
        let f = figures_from(samples(median, 0.015, 40, 50, i as u64), 100, i as u64);
        points.push((size, f.ns_per_op.median));
        results.push(measured(&format!("sort.wasm:quick/{size}"), Some(size), f));
    }
    let mut xor = figures_from(samples(3.2, 0.05, 100, 200, 9), 1_000_000, 9);
    xor.notes = Notes(vec![Note::Text(
        "2 of 20000 samples are severe outliers: the machine was busy".into(),
    )]);
    results.push(measured("xor.wasm", None, xor));
    results.push(failed(
        "trap.wasm",
        "wasm trap: wasm `unreachable` instruction executed",
    ));
    let fitted: Vec<(f64, f64)> = points.iter().map(|&(n, t)| (n as f64, t)).collect();
    let fit = complexity::fit(&fitted).expect("four sizes fit");
    RunReport {
        tool: Tool::this(),
        environment: environment(),
        results,
        suite: None,
        runtimes: None,
        complexity: vec![ComplexityResult {
            benchmark: "sort.wasm:quick".into(),
            path: "workloads/sort.wasm".into(),
            best: fit.best,
            coefficient: fit.coefficient,
            rms: fit.rms,
            candidates: fit.candidates,
            points,
        }],
        baseline: None,
        saved_baseline: None,
        stopped: None,
        shards: Vec::new(),
        merged_from: Vec::new(),
    }
}

/// A complexity fit of `class` over `points` (for tests of the plot).
pub fn fit_of(benchmark: &str, class: Complexity, points: Vec<(u64, f64)>) -> ComplexityResult {
    ComplexityResult {
        benchmark: benchmark.into(),
        path: format!("workloads/{benchmark}").into(),
        best: class,
        coefficient: 2.0,
        rms: 0.03,
        candidates: vec![],
        points,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_export_with_the_names_of_before_epochs_still_has_its_figures() -> serde_json::Result<()> {
        let report = run_report();
        let mut value = serde_json::to_value(&report)?;
        let renamed = [
            ("epochs_ns_per_op", "samples_ns_per_op"),
            ("epoch_classes", "sample_classes"),
            ("fixed_cost_ns", "baseline_ns_per_call"),
            ("fixed_costs_ns", "baseline_calls_ns"),
        ];
        for row in value["results"].as_array_mut().into_iter().flatten() {
            let Some(row) = row.as_object_mut() else {
                continue;
            };
            row.remove("epochs");
            for (now, before) in renamed {
                if let Some(v) = row.remove(now) {
                    row.insert(before.to_string(), v);
                }
            }
        }
        let read: RunReport = serde_json::from_value(value)?;
        for (old, new) in read.results.iter().zip(&report.results) {
            assert_eq!(
                old.figures.is_some(),
                new.figures.is_some(),
                "{:?}",
                old.name
            );
            if let (Some(old), Some(new)) = (&old.figures, &new.figures) {
                assert_eq!(old.series.epochs_ns_per_op, new.series.epochs_ns_per_op);
                assert_eq!(old.time.fixed_cost_ns, new.time.fixed_cost_ns);
                assert_eq!(old.counts.epochs, 0);
            }
        }
        Ok(())
    }
}
