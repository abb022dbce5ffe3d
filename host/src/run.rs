//! `host run`: measure every row (benchmark × size) in turn, each on fresh
//! instances, hand it to an observer as soon as it is done, then fit
//! complexity and compare with a saved baseline when asked.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::baseline::{self, Saved};
use crate::complexity;
use crate::export::write_json;
use crate::guard;
use crate::measure::{self, Measurement, Plan};
use crate::program::{self, Program, TimedRegion};
use crate::progress::Progress;
use crate::result::{
    BaselineComparison, BenchResult, ComplexityResult, Environment, Figures, Row, RunReport,
    Stages, Tool,
};
use crate::session::{Session, supervised};
use crate::settings::{Metric, Settings};
use crate::verdict;
use crate::workload::{Kind, Workload, one_line};

/// Told about progress as it happens (the terminal report listens).
pub trait Observer: Send {
    /// Before the first row: the environment and the names of every row.
    fn start(&mut self, env: &Environment, rows: &[String]);
    fn result(&mut self, result: &BenchResult);
}

/// What has been finished so far, for the watchdog's last word.
#[derive(Default)]
struct Finished {
    environment: Option<Environment>,
    results: Vec<BenchResult>,
}

/// Run every workload the settings name; failed workloads are rows with an
/// error, not a failure of the run. A missing or corrupt baseline is an
/// error before anything is measured.
pub fn run(
    settings: &Settings,
    files: &[PathBuf],
    observer: &mut dyn Observer,
    progress: &dyn Progress,
) -> Result<RunReport> {
    let saved = match &settings.baselines.compare {
        Some(name) => Some(baseline::load(name)?),
        None => None,
    };
    if let Some(name) = &settings.baselines.save {
        baseline::prepare_save(name)?;
    }
    let finished = Arc::new(Mutex::new(Finished::default()));
    let mut report = supervised(settings, |engines, guard| {
        let shared = Arc::clone(&finished);
        let export = settings.export_json.clone();
        let baseline_name = settings.baselines.compare.clone();
        guard.on_emergency(Box::new(move |reason| {
            eprintln!("error: {reason}");
            // Keep what was finished: write the export with it.
            if let (Some(output), Ok(progress)) = (&export, shared.lock())
                && let Some(environment) = &progress.environment
            {
                let report = RunReport {
                    tool: Tool::this(),
                    environment: environment.clone(),
                    results: progress.results.clone(),
                    complexity: Vec::new(),
                    baseline: baseline_name.clone(),
                    saved_baseline: None,
                    stopped: Some(reason.to_string()),
                };
                if let Err(e) = write_json(&report, output) {
                    eprintln!("error: {}", one_line(&e));
                }
            }
        }));
        let session = Session::new(settings, files, engines, guard, progress)?;
        let report = measure_all(
            settings,
            &session,
            saved.as_ref(),
            observer,
            &finished,
            progress,
        );
        progress.finish();
        report
    })?;
    if let Some(name) = &settings.baselines.save
        && report.stopped.is_none()
    {
        report.saved_baseline = Some(baseline::save(name, &report)?.display().to_string());
    }
    Ok(report)
}

fn measure_all(
    settings: &Settings,
    session: &Session,
    saved: Option<&Saved>,
    observer: &mut dyn Observer,
    finished: &Mutex<Finished>,
    progress: &dyn Progress,
) -> Result<RunReport> {
    let plan = Plan {
        sample_time: settings.sample_time,
        warmup_cap: settings.warmup_cap,
        count: settings.count,
        stop: settings.stop,
        seed: session.seed,
    };
    let mut environment = session.environment(settings);
    if let Some(saved) = saved {
        environment
            .warnings
            .extend(saved.environment_differences(&environment));
    }
    let rows = session.rows(&settings.sizes);
    let names: Vec<String> = rows.iter().map(|p| p.row.name.clone()).collect();
    progress.suspend(&mut || observer.start(&environment, &names));
    if let Ok(mut finished) = finished.lock() {
        finished.environment = Some(environment.clone());
    }
    progress.rows(rows.len());

    let mut results = Vec::new();
    let mut stopped = None;
    let mut compiled = std::collections::HashSet::new();
    for planned in &rows {
        let row = &planned.row;
        let mut result = match &planned.workload {
            Err((kind, error)) => BenchResult::failed(row, *kind, error.clone()),
            Ok(workload) => {
                // The first row of a file carries its compile time, and its
                // budget includes it.
                let compile_ms = if compiled.insert((row.path.clone(), row.engine_set)) {
                    workload.compile_ms
                } else {
                    0.0
                };
                measure_row(
                    settings, &plan, session, workload, row, compile_ms, progress,
                )
            }
        };
        if guard::interrupted() {
            // The row in progress is not finished: leave it out.
            stopped = Some("interrupted (Ctrl-C)".to_string());
            break;
        }
        if let (Some(saved), Some(figures)) = (saved, &result.figures) {
            result.baseline =
                compare_with_saved(settings, saved, &result.name, figures, session.seed);
        }
        progress.suspend(&mut || observer.result(&result));
        if let Ok(mut finished) = finished.lock() {
            finished.results.push(result.clone());
        }
        progress.row_done();
        results.push(result);
    }
    Ok(RunReport {
        tool: Tool::this(),
        environment,
        complexity: fit_complexity(&results),
        baseline: settings.baselines.compare.clone(),
        saved_baseline: None,
        stopped,
        results,
    })
}

/// Measure one row into a result (figures or the error that stopped it).
fn measure_row(
    settings: &Settings,
    plan: &Plan,
    session: &Session,
    workload: &Workload,
    row: &Row,
    compile_ms: f64,
    progress: &dyn Progress,
) -> BenchResult {
    let kind = workload.kind();
    let started = Instant::now()
        .checked_sub(Duration::from_secs_f64(compile_ms / 1e3))
        .unwrap_or_else(Instant::now);
    if kind == Kind::Program {
        return measure_program(settings, session, workload, row, compile_ms, started);
    }
    let measured = measure_one(plan, session, workload, row, started, progress).and_then(
        |(m, instantiate_ms)| {
            let mut figures = Figures::new(
                &m,
                Stages {
                    kind,
                    compile_ms,
                    compile_cache: workload.cache.clone(),
                    instantiate_ms,
                },
                settings.warmup_cap.as_secs_f64() * 1e3,
                session.seed,
                settings.drift_pct,
            );
            if settings.metric == Metric::Instructions {
                figures.fuel_per_op = Some(session.fuel_per_op(row, m.count)?);
            }
            Ok(figures)
        },
    );
    match measured {
        Ok(figures) => BenchResult::measured(row, kind, figures),
        Err(e) => BenchResult::failed(row, Some(kind), describe_failure(row, &e)),
    }
}

/// Measure a program workload (the Sightglass protocol).
fn measure_program(
    settings: &Settings,
    session: &Session,
    workload: &Workload,
    row: &Row,
    compile_ms: f64,
    started: Instant,
) -> BenchResult {
    let measured = Program::new(
        &row.path,
        &workload.guarded,
        &settings.grants,
        session.limits,
        &session.guard,
    )
    .and_then(|program| {
        program::measure(&program, settings.stop, started, compile_ms, session.seed)
    })
    .map(|(m, phases)| {
        let mut figures = Figures::new(
            &m,
            Stages {
                kind: Kind::Program,
                compile_ms,
                compile_cache: workload.cache.clone(),
                instantiate_ms: phases.instantiate_ns.median / 1e6,
            },
            settings.warmup_cap.as_secs_f64() * 1e3,
            session.seed,
            settings.drift_pct,
        );
        if phases.timed_region == TimedRegion::WholeStart {
            figures.notes.push(
                "calls neither bench.start nor bench.end: timed over the whole of _start".into(),
            );
        }
        figures.phases = Some(phases);
        figures
    });
    match measured {
        Ok(figures) => BenchResult::measured(row, Kind::Program, figures),
        Err(e) => BenchResult::failed(row, Some(Kind::Program), describe_failure(row, &e)),
    }
}

/// One line naming the file, the benchmark and the size.
pub fn describe_failure(row: &Row, error: &anyhow::Error) -> String {
    let size = row.size.map(|s| format!(", size {s}")).unwrap_or_default();
    format!(
        "{} ({}{size}): {}",
        row.path.display(),
        row.export,
        one_line(error)
    )
}

/// Instantiate, set up and measure one row; returns the measurement and the
/// instantiation time in ms.
fn measure_one(
    plan: &Plan,
    session: &Session,
    workload: &Workload,
    row: &Row,
    started: Instant,
    progress: &dyn Progress,
) -> Result<(Measurement, f64)> {
    let mut instances = session.instances(workload, row)?;
    let calibration = &session
        .kind_setup(row.engine_set, workload.code.kind())
        .calibration;
    let measurement = measure::measure(
        plan,
        calibration,
        &mut instances.guarded,
        &mut instances.fast,
        &mut instances.empty,
        started,
        progress,
        &row.name,
    )?;
    Ok((measurement, instances.instantiate_ms))
}

/// The verdict against the saved result of the same row, if there is one.
fn compare_with_saved(
    settings: &Settings,
    saved: &Saved,
    name: &str,
    figures: &Figures,
    seed: u64,
) -> Option<BaselineComparison> {
    let then = saved.result(name)?;
    let (ratio, metric) = match (settings.metric, figures.fuel_per_op, then.fuel_per_op) {
        (Metric::Instructions, Some(now), Some(before)) if before > 0.0 => {
            let ratio = now / before;
            (
                verdict::Ratio {
                    ratio,
                    ci95_low: ratio,
                    ci95_high: ratio,
                },
                "instructions",
            )
        }
        _ => (
            verdict::unpaired_ratio(
                &figures.samples_ns_per_op,
                &then.samples_ns_per_op,
                settings.drift_pct / 100.0,
                measure::RESAMPLES_FINAL,
                seed,
            )?,
            "time",
        ),
    };
    let baseline_name = settings.baselines.compare.clone().unwrap_or_default();
    // The regression threshold, when given, is the noise threshold too.
    let noise = settings
        .baselines
        .fail_on_regression_pct
        .map_or(0.01, |pct| pct / 100.0);
    let verdict = verdict::verdict(&ratio, noise);
    let regression = settings
        .baselines
        .fail_on_regression_pct
        .is_some_and(|pct| verdict::is_regression(&ratio, pct));
    Some(BaselineComparison {
        text: verdict::describe(
            name,
            &format!("baseline {baseline_name}"),
            &ratio,
            verdict,
            noise,
        ),
        name: baseline_name,
        metric: metric.to_string(),
        ratio: ratio.ratio,
        ci95_low: ratio.ci95_low,
        ci95_high: ratio.ci95_high,
        verdict,
        regression,
    })
}

/// Fit per-op time against size for every benchmark measured at two or more
/// sizes.
fn fit_complexity(results: &[BenchResult]) -> Vec<ComplexityResult> {
    let mut order: Vec<(&str, &str)> = Vec::new();
    for r in results {
        if r.size.is_some() && !order.contains(&(r.path.as_str(), r.benchmark.as_str())) {
            order.push((r.path.as_str(), r.benchmark.as_str()));
        }
    }
    order
        .into_iter()
        .filter_map(|(path, benchmark)| {
            let points: Vec<(u64, f64)> = results
                .iter()
                .filter(|r| r.path == path && r.benchmark == benchmark)
                .filter_map(|r| Some((r.size?, r.figures.as_ref()?.ns_per_op.median)))
                .collect();
            let as_f64: Vec<(f64, f64)> = points.iter().map(|&(n, t)| (n as f64, t)).collect();
            let fit = complexity::fit(&as_f64)?;
            Some(ComplexityResult {
                benchmark: benchmark.to_string(),
                path: path.to_string(),
                best: fit.best,
                coefficient: fit.coefficient,
                rms: fit.rms,
                candidates: fit.candidates,
                points,
            })
        })
        .collect()
}
