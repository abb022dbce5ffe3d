//! `host run`: the stages in order, on a dedicated measuring thread.
//!
//! The measuring thread pins itself and raises its own priority, so the
//! calling thread (and anything it spawns) stays unpinned. Every file is
//! loaded and checked first, so the report knows all its rows; then each row
//! (benchmark × size) is measured on a fresh instance and handed to an
//! observer as soon as it is done; last come the complexity fits.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};

use crate::complexity;
use crate::env::prepare_measuring_thread;
use crate::instance::{Builtins, Instance, Linkers};
use crate::measure::{self, Calibration, Measurement, Plan};
use crate::result::{
    BenchResult, ComplexityResult, Environment, Figures, Row, RunReport, Stages, Tool,
};
use crate::settings::Settings;
use crate::workload::{self, Kind, RUN_EXPORT, Workload, one_line, workload_name};

/// Told about progress as it happens (the terminal report listens).
pub trait Observer: Send {
    /// Before the first row: the environment and the names of every row.
    fn start(&mut self, env: &Environment, rows: &[String]);
    fn result(&mut self, result: &BenchResult);
}

/// Run every workload the settings name; failed workloads are rows with an
/// error, not a failure of the run.
pub fn run(
    settings: &Settings,
    files: &[PathBuf],
    observer: &mut dyn Observer,
) -> Result<RunReport> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("measure".into())
            .spawn_scoped(scope, || measure_all(settings, files, observer))
            .context("starting the measuring thread")?
            .join()
            .map_err(|_| anyhow!("the measuring thread panicked"))?
    })
}

/// The per-kind machinery: built-in guests and their calibration.
struct KindSetup {
    builtins: Builtins,
    calibration: Calibration,
}

impl KindSetup {
    fn new(
        engine: &wasmtime::Engine,
        linkers: &Linkers,
        kind: Kind,
        clock: crate::clock::ClockCalibration,
    ) -> Result<Self> {
        let builtins = Builtins::new(engine, kind)?;
        let calibration = measure::calibrate(
            clock,
            &mut builtins.empty_instance(linkers)?,
            &mut Instance::new(linkers, &builtins.pause_pair, RUN_EXPORT)?,
        )?;
        Ok(KindSetup {
            builtins,
            calibration,
        })
    }
}

/// Why a file could not be loaded: its kind when known, and one line.
type LoadError = (Option<Kind>, String);

/// A file as loaded: its workload, or why it failed.
type Loaded = (PathBuf, Result<Workload, (Option<Kind>, anyhow::Error)>);

fn measure_all(
    settings: &Settings,
    files: &[PathBuf],
    observer: &mut dyn Observer,
) -> Result<RunReport> {
    let prepared = prepare_measuring_thread(settings.pin, settings.priority);
    let clock = crate::clock::calibrate();
    let engine = workload::engine()?;
    let linkers = Linkers::new(&engine)?;

    let loaded: Vec<Loaded> = files
        .iter()
        .map(|path| (path.clone(), workload::load(&engine, path)))
        .collect();
    let modules = KindSetup::new(&engine, &linkers, Kind::Module, clock)?;
    let any_component = loaded
        .iter()
        .any(|(_, w)| matches!(w, Ok(w) if w.code.kind() == Kind::Component));
    let components = match any_component {
        true => Some(KindSetup::new(&engine, &linkers, Kind::Component, clock)?),
        false => None,
    };

    let seed = settings.seed.unwrap_or_else(|| fastrand::u64(..) >> 1);
    let plan = Plan {
        sample_time: settings.sample_time,
        warmup_cap: settings.warmup_cap,
        count: settings.count,
        stop: settings.stop,
        seed,
    };
    let environment = Environment::new(
        &prepared,
        &modules.calibration,
        components.as_ref().map(|c| &c.calibration),
        seed,
        settings.drift_pct,
        measure::target_sample_time(settings.sample_time, &modules.calibration).as_secs_f64() * 1e3,
    );
    let rows: Vec<(Row, Option<&Workload>, Option<LoadError>)> = loaded
        .iter()
        .flat_map(|(path, loaded)| rows_of(path, loaded, &settings.sizes))
        .collect();
    let names: Vec<String> = rows.iter().map(|(row, _, _)| row.name.clone()).collect();
    observer.start(&environment, &names);

    let mut results = Vec::new();
    let mut compiled_first = std::collections::HashSet::new();
    for (row, workload, load_error) in &rows {
        let result = match (workload, load_error) {
            (Some(workload), _) => {
                let kind = workload.code.kind();
                let setup = match kind {
                    Kind::Module => &modules,
                    Kind::Component => components.as_ref().unwrap_or(&modules),
                };
                // The first row of a file carries its compile time, and its
                // budget includes it.
                let compile_ms = if compiled_first.insert(row.path.clone()) {
                    workload.compile_ms
                } else {
                    0.0
                };
                let started = Instant::now()
                    .checked_sub(Duration::from_secs_f64(compile_ms / 1e3))
                    .unwrap_or_else(Instant::now);
                match measure_row(&plan, setup, &linkers, workload, row, started) {
                    Ok((measurement, instantiate_ms)) => BenchResult::measured(
                        row,
                        kind,
                        Figures::new(
                            &measurement,
                            Stages {
                                kind,
                                compile_ms,
                                instantiate_ms,
                            },
                            settings.warmup_cap.as_secs_f64() * 1e3,
                            seed,
                            settings.drift_pct,
                        ),
                    ),
                    Err(e) => BenchResult::failed(row, Some(kind), describe_failure(row, &e)),
                }
            }
            (None, error) => {
                let (kind, message) = error.clone().unwrap_or_default();
                BenchResult::failed(row, kind, message)
            }
        };
        observer.result(&result);
        results.push(result);
    }
    let complexity = fit_complexity(&results);
    Ok(RunReport {
        tool: Tool::this(),
        environment,
        results,
        complexity,
    })
}

/// The rows of one file: one per benchmark and size, or one failed row.
fn rows_of<'a>(
    path: &std::path::Path,
    loaded: &'a Result<Workload, (Option<Kind>, anyhow::Error)>,
    sizes: &[u64],
) -> Vec<(Row, Option<&'a Workload>, Option<LoadError>)> {
    match loaded {
        Err((kind, e)) => vec![(
            Row::new(path, &workload_name(path), RUN_EXPORT, None),
            None,
            Some((*kind, format!("{}: {}", path.display(), one_line(e)))),
        )],
        Ok(workload) => workload
            .contract
            .benchmarks
            .iter()
            .flat_map(|bench| {
                let sizes: Vec<Option<u64>> = match sizes {
                    [] => vec![None],
                    sizes => sizes.iter().copied().map(Some).collect(),
                };
                sizes.into_iter().map(|size| {
                    (
                        Row::new(path, &bench.name, &bench.export, size),
                        Some(workload),
                        None,
                    )
                })
            })
            .collect(),
    }
}

/// One line naming the file, the benchmark and the size.
fn describe_failure(row: &Row, error: &anyhow::Error) -> String {
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
fn measure_row(
    plan: &Plan,
    setup: &KindSetup,
    linkers: &Linkers,
    workload: &Workload,
    row: &Row,
    started: Instant,
) -> Result<(Measurement, f64)> {
    let size = row.size.unwrap_or(0);
    let instantiate_start = Instant::now();
    let mut instance = Instance::new(linkers, &workload.code, &row.export)?;
    let instantiate_ms = instantiate_start.elapsed().as_secs_f64() * 1e3;
    instance.setup(size)?;
    let mut empty = setup.builtins.empty_instance(linkers)?;
    empty.setup(size)?;
    let measurement =
        measure::measure(plan, &setup.calibration, &mut instance, &mut empty, started)?;
    Ok((measurement, instantiate_ms))
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
