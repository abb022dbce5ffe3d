//! `host run`: the stages in order, on a dedicated measuring thread.
//!
//! The measuring thread pins itself and raises its own priority, so the
//! calling thread (and anything it spawns) stays unpinned. Rows are handed
//! to an observer as soon as each benchmark is done.

use std::time::Instant;

use anyhow::{Context, Result, anyhow};

use crate::env::prepare_measuring_thread;
use crate::measure::{self, Calibration, Plan};
use crate::result::{BenchResult, Environment, Figures, RunReport, Stages, Tool};
use crate::settings::Settings;
use crate::workload::{self, EMPTY_GUEST_WAT, Instance, PAUSE_PAIR_WAT, one_line, workload_name};

/// Told about progress as it happens (the terminal report listens).
pub trait Observer: Send {
    fn environment(&mut self, env: &Environment);
    fn result(&mut self, result: &BenchResult);
}

/// Run every workload the settings name; failed workloads are rows with an
/// error, not a failure of the run.
pub fn run(
    settings: &Settings,
    files: &[std::path::PathBuf],
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

fn measure_all(
    settings: &Settings,
    files: &[std::path::PathBuf],
    observer: &mut dyn Observer,
) -> Result<RunReport> {
    let prepared = prepare_measuring_thread(settings.pin, settings.priority);
    let clock = crate::clock::calibrate();
    let engine = workload::engine()?;
    let linker = workload::linker(&engine)?;
    let empty_module = workload::builtin(&engine, EMPTY_GUEST_WAT)?;
    let pause_module = workload::builtin(&engine, PAUSE_PAIR_WAT)?;
    let calibration = measure::calibrate(
        clock,
        &mut Instance::new(&linker, &empty_module, workload::RUN_EXPORT)?,
        &mut Instance::new(&linker, &pause_module, workload::RUN_EXPORT)?,
    )?;
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
        &calibration,
        seed,
        settings.drift_pct,
        measure::target_sample_time(settings.sample_time, &calibration).as_secs_f64() * 1e3,
    );
    observer.environment(&environment);

    let mut results = Vec::new();
    for path in files {
        let started = Instant::now();
        let name = workload_name(path);
        let loaded = match workload::load(&engine, path) {
            Ok(w) => w,
            Err(e) => {
                let row = BenchResult::failed(
                    name,
                    path,
                    None,
                    format!("{}: {}", path.display(), one_line(&e)),
                );
                observer.result(&row);
                results.push(row);
                continue;
            }
        };
        for (index, bench) in loaded.benchmarks.iter().enumerate() {
            // The first benchmark of a file carries its compile time.
            let started = if index == 0 { started } else { Instant::now() };
            let compile_ms = if index == 0 { loaded.compile_ms } else { 0.0 };
            let row = match measure_one(
                settings,
                &plan,
                &calibration,
                &linker,
                &empty_module,
                &loaded.module,
                &bench.export,
                started,
            ) {
                Ok((measurement, instantiate_ms)) => BenchResult {
                    name: bench.name.clone(),
                    path: path.display().to_string(),
                    kind: Some(loaded.kind),
                    error: None,
                    figures: Some(Figures::new(
                        &measurement,
                        Stages {
                            compile_ms,
                            instantiate_ms,
                        },
                        settings.warmup_cap.as_secs_f64() * 1e3,
                        seed,
                        settings.drift_pct,
                    )),
                },
                Err(e) => BenchResult::failed(
                    bench.name.clone(),
                    path,
                    Some(loaded.kind),
                    format!("{} ({}): {}", path.display(), bench.export, one_line(&e)),
                ),
            };
            observer.result(&row);
            results.push(row);
        }
    }
    Ok(RunReport {
        tool: Tool::this(),
        environment,
        results,
    })
}

/// Instantiate, set up and measure one benchmark; returns the measurement and
/// the instantiation time in ms.
#[allow(clippy::too_many_arguments)]
fn measure_one(
    settings: &Settings,
    plan: &Plan,
    calibration: &Calibration,
    linker: &wasmtime::Linker<workload::HostState>,
    empty_module: &wasmtime::Module,
    module: &wasmtime::Module,
    export: &str,
    started: Instant,
) -> Result<(measure::Measurement, f64)> {
    let instantiate_start = Instant::now();
    let mut instance = Instance::new(linker, module, export)?;
    let instantiate_ms = instantiate_start.elapsed().as_secs_f64() * 1e3;
    instance.setup(settings.size)?;
    let mut empty = Instance::new(linker, empty_module, workload::RUN_EXPORT)?;
    empty.setup(settings.size)?;
    let measurement = measure::measure(plan, calibration, &mut instance, &mut empty, started)?;
    Ok((measurement, instantiate_ms))
}
