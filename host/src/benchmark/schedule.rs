//! The scheduler: which row is measured when.
//!
//! - [`run_rows`] (`host run`): every row (benchmark × size × engine) in
//!   turn, each on fresh instances, each through the whole measuring sequence
//!   ([`crate::benchmark::sequence::measure`], or
//!   [`crate::benchmark::program::measure`] for programs); every finished row
//!   goes to an [`Observer`] at once.
//! - [`compare_rounds`] (`host compare`): every variant tuned, settled at one
//!   shared count, then sampled in interleaved rounds whose order rotates
//!   (A B, B A, ...), so that drift and periodic noise hit every variant
//!   alike, until every verdict is certain or the time cap.
//!
//! Results are summarised by [`crate::analysis`]; nothing here prints.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::analysis::baseline::compare_with_saved;
use crate::analysis::compare::{Rounds, judge};
use crate::analysis::complexity::fit_results;
use crate::analysis::summary::{self, Stages};
use crate::benchmark::program;
use crate::benchmark::progress::{Progress, Stage};
use crate::benchmark::sequence::{self, Blocks, MAX_SAMPLES, Plan, Subjects, Tuned};
use crate::benchmark::session::{Session, supervised};
use crate::guest::program::{Program, TimedRegion};
use crate::guest::sandbox;
use crate::guest::{Contract, Kind, Workload};
use crate::options::{CompareSettings, Metric, Settings};
use crate::results::baseline::Saved;
use crate::results::{BenchResult, CompareReport, Environment, Figures, Row, RunReport, Tool};
use crate::util::error::one_line;

/// Rounds before the verdicts may stop sampling.
pub const MIN_ROUNDS: usize = 30;
/// Target wall time of one variant's block in a round.
pub const ROUND_BLOCK_TIME: Duration = Duration::from_millis(5);
/// Most samples one variant takes in a round (very short calls).
pub const ROUND_BLOCK_MAX: usize = 100;

/// Told about progress as it happens (the terminal table listens).
pub trait Observer: Send {
    /// Before the first row: the environment and the names of every row.
    fn start(&mut self, env: &Environment, rows: &[String]);
    fn result(&mut self, result: &BenchResult);
}

/// Called from the watchdog's thread, should it have to end the process,
/// with the report of the rows finished so far (`stopped` says why).
pub type LastWord = Box<dyn Fn(&RunReport) + Send + Sync>;

/// What has been finished so far, for the watchdog's last word.
#[derive(Default)]
struct Finished {
    environment: Option<Environment>,
    results: Vec<BenchResult>,
}

/// The plan of every row of a run.
fn plan(settings: &Settings, seed: u64) -> Plan {
    Plan {
        sample_time: settings.sample_time,
        warmup_cap: settings.warmup_cap,
        count: settings.count,
        stop: settings.stop,
        seed,
    }
}

/// Measure every row of `files` in turn; failed workloads are rows with an
/// error, not a failure of the run. Rows are compared with `saved` when
/// given; complexity is fitted over sizes.
pub fn run_rows(
    settings: &Settings,
    files: &[PathBuf],
    saved: Option<&Saved>,
    observer: &mut dyn Observer,
    progress: &dyn Progress,
    last_word: LastWord,
) -> Result<RunReport> {
    let finished = Arc::new(Mutex::new(Finished::default()));
    supervised(settings, |engines, guard| {
        let shared = Arc::clone(&finished);
        let baseline = settings.baselines.compare.clone();
        guard.on_emergency(Box::new(move |reason| {
            eprintln!("error: {reason}");
            if let Ok(progress) = shared.lock()
                && let Some(environment) = &progress.environment
            {
                last_word(&RunReport {
                    tool: Tool::this(),
                    environment: environment.clone(),
                    results: progress.results.clone(),
                    complexity: Vec::new(),
                    baseline: baseline.clone(),
                    saved_baseline: None,
                    stopped: Some(reason.to_string()),
                });
            }
        }));
        let session = Session::new(settings, files, engines, guard, progress)?;
        let report = measure_rows(settings, &session, saved, observer, &finished, progress);
        progress.finish();
        report
    })
}

fn measure_rows(
    settings: &Settings,
    session: &Session,
    saved: Option<&Saved>,
    observer: &mut dyn Observer,
    finished: &Mutex<Finished>,
    progress: &dyn Progress,
) -> Result<RunReport> {
    let plan = plan(settings, session.seed);
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
        let mut result = match planned.workload {
            Err(error) => BenchResult::failed(
                row,
                error.kind,
                format!("{}: {}", row.path.display(), one_line(&error.error)),
            ),
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
        if sandbox::interrupted() {
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
        complexity: fit_results(&results),
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
    let measured = match workload.contract {
        Contract::Program { .. } => {
            measure_program(settings, session, workload, row, compile_ms, started)
        }
        Contract::Workload { .. } => measure_workload(
            settings, plan, session, workload, row, compile_ms, started, progress,
        ),
    };
    match measured {
        Ok(figures) => BenchResult::measured(row, kind, figures),
        Err(e) => BenchResult::failed(row, Some(kind), describe_failure(row, &e)),
    }
}

/// A `run(count, seed)` workload through the measuring sequence.
#[allow(clippy::too_many_arguments)]
fn measure_workload(
    settings: &Settings,
    plan: &Plan,
    session: &Session,
    workload: &Workload,
    row: &Row,
    compile_ms: f64,
    started: Instant,
    progress: &dyn Progress,
) -> Result<Figures> {
    let (mut subjects, instantiate_ms) = session.subjects(workload, row)?;
    let calibration = &session
        .format_setup(row.engine_set, workload.format)
        .calibration;
    let m = sequence::measure(
        plan,
        calibration,
        &mut subjects,
        started,
        progress,
        &row.name,
    )?;
    let mut figures = summary::figures(
        &m,
        Stages {
            kind: workload.kind(),
            compile_ms,
            compile_cache: workload.cache.clone(),
            instantiate_ms,
        },
        settings.warmup_cap.as_secs_f64() * 1e3,
        session.seed,
        settings.drift_pct,
    );
    if settings.metric == Metric::Instructions {
        figures.fuel_per_op = Some(session.fuel_per_op(workload, row, m.count)?);
    }
    Ok(figures)
}

/// A WASI program by the Sightglass protocol.
fn measure_program(
    settings: &Settings,
    session: &Session,
    workload: &Workload,
    row: &Row,
    compile_ms: f64,
    started: Instant,
) -> Result<Figures> {
    let program = Program::new(
        &row.path,
        &workload.guarded,
        &settings.grants,
        session.limits,
        &session.guard,
    )?;
    let (m, phases) = program::measure(&program, settings.stop, started, compile_ms, session.seed)?;
    let mut figures = summary::figures(
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
        figures
            .notes
            .push("calls neither bench.start nor bench.end: timed over the whole of _start".into());
    }
    figures.phases = Some(phases);
    Ok(figures)
}

/// One line naming the file, the benchmark and the size, then the error
/// chain.
fn describe_failure(row: &Row, error: &anyhow::Error) -> String {
    let size = row.size.map(|s| format!(", size {s}")).unwrap_or_default();
    format!(
        "{} ({}{size}): {}",
        row.path.display(),
        row.export,
        one_line(error)
    )
}

/// The error of a variant, naming the file, the benchmark and the size.
fn variant_error(row: &Row, error: anyhow::Error) -> anyhow::Error {
    let size = row.size.map(|s| format!(", size {s}")).unwrap_or_default();
    error.context(format!("{} ({}{size})", row.path.display(), row.export))
}

/// One variant of a comparison.
struct Variant<'a> {
    row: Row,
    workload: &'a Workload,
    subjects: Subjects,
    instantiate_ms: f64,
    tuned: Tuned,
    blocks: Option<Blocks>,
    fuel_per_op: Option<f64>,
}

/// Compare the variants in `files`: every benchmark of every file is a
/// variant; any failure stops the comparison (a verdict needs all of them).
pub fn compare_rounds(
    settings: &CompareSettings,
    files: &[PathBuf],
    progress: &dyn Progress,
) -> Result<CompareReport> {
    supervised(&settings.settings, |engines, guard| {
        let mut session = Session::new(&settings.settings, files, engines, guard, progress)?;
        // A verdict needs every variant: the first file that did not load
        // stops the comparison, with its error.
        if let Some(i) = session.loaded.iter().position(|l| l.workload.is_err()) {
            let failed = session.loaded.swap_remove(i);
            if let Err(e) = failed.workload {
                return Err(e.error.context(failed.path.display().to_string()));
            }
        }
        let report = compare_variants(settings, &session, progress);
        progress.finish();
        report
    })
}

fn compare_variants(
    settings: &CompareSettings,
    session: &Session,
    progress: &dyn Progress,
) -> Result<CompareReport> {
    let common = &settings.settings;
    let environment = session.environment(common);
    let plan = plan(common, session.seed);

    let mut variants = Vec::new();
    for planned in session.rows(&common.sizes) {
        let row = planned.row;
        let workload = planned
            .workload
            .map_err(|_| anyhow::anyhow!("{}: not loaded", row.path.display()))?;
        if let Contract::Program { .. } = workload.contract {
            bail!(
                "{}: a program (WASI `_start`) cannot be compared: compare takes `run(count, seed)` workloads (measure programs with `host run`)",
                row.path.display()
            );
        }
        progress.stage(&row.name, Stage::Warmup);
        let (mut subjects, instantiate_ms) = session
            .subjects(workload, &row)
            .map_err(|e| variant_error(&row, e))?;
        let calibration = &session
            .format_setup(row.engine_set, workload.format)
            .calibration;
        let tuned = sequence::tune(&plan, calibration, &mut subjects.guarded)
            .map_err(|e| variant_error(&row, e))?;
        variants.push(Variant {
            row,
            workload,
            subjects,
            instantiate_ms,
            tuned,
            blocks: None,
            fuel_per_op: None,
        });
    }
    // The same file twice (A against A) makes two variants of one name.
    for i in 1..variants.len() {
        let seen = variants[..i]
            .iter()
            .filter(|v| v.row.name == variants[i].row.name)
            .count();
        if seen > 0 {
            variants[i].row.name = format!("{}#{}", variants[i].row.name, seen + 1);
        }
    }
    if variants.len() < 2 {
        bail!("compare needs at least two variants (files, or `run_<name>` benchmarks)");
    }
    let reference = match &settings.reference {
        None => 0,
        Some(name) => variants
            .iter()
            .position(|v| v.row.name == *name)
            .with_context(|| {
                let names: Vec<&str> = variants.iter().map(|v| v.row.name.as_str()).collect();
                format!(
                    "--reference: no variant `{name}` (variants: {})",
                    names.join(", ")
                )
            })?,
    };

    // One shared count: the slowest variant's sample fills the target.
    let count = variants.iter().map(|v| v.tuned.count).min().unwrap_or(1);
    for v in &mut variants {
        let calibration = &session
            .format_setup(v.row.engine_set, v.workload.format)
            .calibration;
        let blocks = sequence::settle(&plan, calibration, v.tuned, count, &mut v.subjects)
            .map_err(|e| variant_error(&v.row, e))?;
        v.blocks = Some(blocks);
        if common.metric == Metric::Instructions {
            v.fuel_per_op = Some(
                session
                    .fuel_per_op(v.workload, &v.row, count)
                    .map_err(|e| variant_error(&v.row, e))?,
            );
        }
    }
    let per_block: Vec<usize> = variants
        .iter()
        .map(|v| {
            v.blocks
                .as_ref()
                .map_or(1, |b| b.samples_per(ROUND_BLOCK_TIME).min(ROUND_BLOCK_MAX))
        })
        .collect();

    progress.stage("variants", Stage::Sampling);
    let sampling = Instant::now();
    let mut rounds = 0;
    let mut comparisons;
    loop {
        let n = variants.len();
        for i in 0..n {
            // Rotate the order every round.
            let index = (i + rounds) % n;
            let v = &mut variants[index];
            if let Some(blocks) = v.blocks.as_mut() {
                blocks
                    .take(
                        &mut v.subjects.fast,
                        &mut v.subjects.empty,
                        per_block[index],
                    )
                    .map_err(|e| variant_error(&v.row, e))?;
            }
        }
        rounds += 1;
        let judged: Vec<Rounds<'_>> = variants
            .iter()
            .map(|v| Rounds {
                name: &v.row.name,
                per_op: v
                    .blocks
                    .as_ref()
                    .map(Blocks::corrected_per_op)
                    .unwrap_or_default(),
                fuel_per_op: v.fuel_per_op,
            })
            .collect();
        comparisons = judge(&judged, reference, common.noise, common.metric);
        let certain = comparisons.iter().all(|c| c.verdict.is_certain());
        let full = variants
            .iter()
            .any(|v| v.blocks.as_ref().is_some_and(|b| b.taken >= MAX_SAMPLES));
        if (rounds >= MIN_ROUNDS && certain) || sampling.elapsed() >= settings.time_cap || full {
            break;
        }
    }
    let sampling_ms = sampling.elapsed().as_secs_f64() * 1e3;

    let results = variants
        .into_iter()
        .map(|v| {
            let kind = v.workload.kind();
            match v.blocks.map(Blocks::finish) {
                Some(m) => {
                    let mut figures = summary::figures(
                        &m,
                        Stages {
                            kind,
                            compile_ms: v.workload.compile_ms,
                            compile_cache: v.workload.cache.clone(),
                            instantiate_ms: v.instantiate_ms,
                        },
                        common.warmup_cap.as_secs_f64() * 1e3,
                        session.seed,
                        common.drift_pct,
                    );
                    figures.fuel_per_op = v.fuel_per_op;
                    BenchResult::measured(&v.row, kind, figures)
                }
                None => BenchResult::failed(&v.row, Some(kind), "not sampled".into()),
            }
        })
        .collect();
    Ok(CompareReport {
        tool: Tool::this(),
        environment,
        reference: comparisons
            .first()
            .map(|c| c.reference.clone())
            .unwrap_or_default(),
        noise_pct: common.noise.width_pct(),
        count,
        rounds,
        sampling_ms,
        variants: results,
        comparisons,
    })
}
