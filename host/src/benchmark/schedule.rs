//! The scheduler, in the parent: which row is measured when, in which worker
//! process, and when a row has enough.
//!
//! - [`run_rows`] (`host run`): every row is measured in several worker
//!   processes, each taking its own warm-up, pilot and baseline at the count
//!   the first process fixed, with the order of the rows shuffled from one
//!   process to the next. By default a row takes [`PROCESS_BLOCKS`] blocks
//!   per process, in at least [`MIN_PROCESSES`] processes, until the
//!   interval over the processes is within `--precision` or the row has used
//!   its budget (compile included), at most [`MAX_PROCESSES`]. `--samples`
//!   and `--time` are shared out over [`MIN_PROCESSES`] processes;
//!   `--processes` fixes the number. Finished rows go to an [`Observer`] in
//!   the order of the rows, each as soon as the rows before it are finished.
//! - [`compare_rounds`] (`host compare`): every worker runs every variant in
//!   interleaved rounds at one shared count; workers follow each other until
//!   every verdict is certain (at least [`MIN_COMPARE_PROCESSES`] workers and
//!   [`MIN_ROUNDS`] rounds in all) or the time cap.
//!
//! A row whose worker hangs past `--timeout`, outgrows its memory or dies
//! fails with the cause, and a new worker takes the rows that were left.
//! A run's interval also counts the drift between runs measured on this
//! machine: each row's median joins the run history in the cache folder.
//! Results are summarised by [`crate::analysis`]; nothing here prints.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::analysis::baseline::compare_with_saved;
use crate::analysis::compare::{Rounds, judge, may_stop};
use crate::analysis::complexity::fit_results;
use crate::analysis::drift;
use crate::analysis::stats;
use crate::analysis::summary::{self, Drift, Stages, corrected_per_op, finest_ns, phase_stats};
use crate::benchmark::callgrind;
use crate::benchmark::catalog::Catalog;
use crate::benchmark::progress::{Call, Progress, Stage};
use crate::benchmark::sequence::Share;
use crate::benchmark::supervisor::{Next, Worker, describe_end, describe_memory};
use crate::benchmark::worker::{Event, Job, ProcessSample, RowJob, Task};
use crate::guest::load::Workload;
use crate::guest::program::TimedRegion;
use crate::guest::{Contract, Kind, sandbox};
use crate::options::{CompareSettings, Metric, PinRequest, Profiling, Settings, StopRule};
use crate::platform::gaps::{self, Interruptions};
use crate::results::baseline::Saved;
use crate::results::history::{self, Entry as HistoryEntry, History};
use crate::results::{
    BenchResult, CallgrindCounts, CompareReport, Environment, Figures, Measurement, Phases,
    ProfileChanges, ProfileReport, Row, RowProfile, RunReport, Tool,
};
use crate::util::error::one_line;
use crate::util::usage::UsageError;

/// Fewest processes a row is measured in (by default), and the number
/// `--samples` and `--time` are shared out over.
pub const MIN_PROCESSES: usize = 5;
/// Most processes a row is measured in (by default).
pub const MAX_PROCESSES: usize = 30;
/// Blocks one process takes of a row (by default).
pub const PROCESS_BLOCKS: usize = 4;
/// How long one process samples a program (by default).
pub const PROGRAM_SHARE: Duration = Duration::from_millis(100);
/// Rounds one worker takes in a comparison.
pub const ROUNDS_PER_PROCESS: usize = 10;
/// Most worker processes of one comparison: a bound, not the budget (the
/// time cap, `--time`, stops a comparison first, as a rule).
pub const MAX_COMPARE_PROCESSES: usize = 200;
pub use crate::analysis::compare::{MIN_COMPARE_PROCESSES, MIN_ROUNDS};
/// Time a worker may take to start, calibrate and load from the cache before
/// it must have said it is ready (compiling without the cache included).
const START_DEADLINE: Duration = Duration::from_secs(600);

/// Told about progress as it happens (the terminal table listens).
pub trait Observer: Send {
    /// Before the first row: the environment and the names of every row.
    fn start(&mut self, env: &Environment, rows: &[String]);
    fn result(&mut self, result: &BenchResult);
}

/// A row of a run, as the parent follows it.
struct RowState {
    row: Row,
    kind: Option<Kind>,
    program: bool,
    compile_ms: f64,
    compile_cache: crate::guest::cache::CacheOutcome,
    samples: Vec<ProcessSample>,
    error: Option<String>,
    count: Option<u64>,
    /// Wall time spent on the row, compile included.
    spent: Duration,
    done: bool,
    reported: bool,
    /// What was measured, as the run history names it.
    subject: Option<String>,
    /// Where the run history files it: the CPU, and which epochs its
    /// median stands on ([`summary::Location::label`]); set once the row
    /// is reported.
    shelf: Option<String>,
    /// Callgrind's counts per op (a program: per timed region), and of one
    /// instantiation of a program, with `--metric cycles-est`.
    callgrind: Option<CallgrindCounts>,
    instantiate_callgrind: Option<CallgrindCounts>,
}

impl RowState {
    /// The measurement of each process so far.
    fn measurements(&self) -> Vec<Measurement> {
        self.samples.iter().map(|s| s.measurement.clone()).collect()
    }
}

/// What `row` of `workload` measures, as the run history names it: the
/// file's contents, the benchmark, the size, the engine and the measuring
/// plan (a run of five samples drifts more than one of the precision rule).
fn subject(settings: &Settings, row: &Row, workload: &Workload) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(&workload.bytes);
    let hex: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
    let engine = settings
        .engines
        .get(row.engine_set)
        .and_then(|e| serde_json::to_string(e).ok())
        .unwrap_or_default();
    format!(
        "{hex} {} {} {engine} {:?} {:?} {:?} {:?}",
        row.benchmark,
        row.size.map_or_else(String::new, |s| s.to_string()),
        settings.stop,
        settings.processes,
        settings.count,
        settings.sample_time
    )
}

/// Seconds since the Unix epoch.
fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Settle the measuring core before any worker starts: by default the
/// quietest core now (every worker then pins the same one), and why.
fn choose_core(settings: &mut Settings) -> Option<String> {
    if settings.pin != PinRequest::Quietest {
        return None;
    }
    let (core, why) = crate::platform::thread::quietest_core()?;
    settings.pin = PinRequest::Core(core);
    Some(why)
}

/// The seed of a run: the user's, or a fresh one.
fn seed_of(settings: &Settings) -> u64 {
    settings.seed.unwrap_or_else(|| fastrand::u64(..) >> 1)
}

/// What a call that never returned was, in the words of the row's error.
fn hung(call: Option<Call>, returned: Option<u64>, timeout: Duration) -> String {
    let limit = format!(
        "did not return within --timeout {} (infinite loop?); the worker was killed",
        humantime::format_duration(timeout)
    );
    match call {
        Some(Call::Setup { size }) => format!("`setup({size})` failed: {limit}"),
        Some(Call::Instantiate) => format!("instantiation failed: {limit}"),
        Some(Call::Start) => format!("`_start` failed: {limit}"),
        Some(Call::Run { count }) => match returned {
            Some(good) if good != count => {
                format!("at count {count} (it had returned at count {good}): `run` failed: {limit}")
            }
            _ => format!("at count {count}: `run` failed: {limit}"),
        },
        None => limit,
    }
}

/// One line naming the file, the benchmark and the size, then the cause.
fn describe_failure(row: &Row, cause: &str) -> String {
    let size = row.size.map(|s| format!(", size {s}")).unwrap_or_default();
    format!("{} ({}{size}): {cause}", row.path.display(), row.export)
}

/// How a worker's job went, row by row.
enum Outcome {
    Measured(usize, Box<ProcessSample>, Duration),
    Failed(usize, String),
    Compared(u64, usize, Vec<ProcessSample>),
    /// Row `index` counted by Callgrind: per op, and a program's
    /// instantiation.
    Counted(usize, CallgrindCounts, Option<CallgrindCounts>),
    /// Row `index` profiled.
    Profiled(usize, Box<RowProfile>),
    /// The worker died between rows (or before it was ready): why.
    Lost(String),
}

/// Workers in a row that may die between rows before the run gives up.
const LOST_WORKERS: usize = 3;

/// Run one worker on `job` until it has reported every row (or died).
/// Returns the environment it reported, what it measured, and the rows
/// (indices) it never reached because it died.
fn run_worker(
    job: &Job,
    progress: &dyn Progress,
    names: &[String],
) -> Result<(Option<Environment>, Vec<Outcome>, bool)> {
    run_worker_under(job, progress, names, None)
}

/// [`run_worker`], the worker started under `wrapper` when given.
fn run_worker_under(
    job: &Job,
    progress: &dyn Progress,
    names: &[String],
    wrapper: Option<&(PathBuf, Vec<std::ffi::OsString>)>,
) -> Result<(Option<Environment>, Vec<Outcome>, bool)> {
    let timeout = job.settings.timeout;
    let mut worker = Worker::start_under(job, wrapper)?;
    let mut environment = None;
    let mut outcomes = Vec::new();
    let mut current: Option<usize> = None;
    let mut call: Option<Call> = None;
    let mut returned: Option<u64> = None;
    let mut row_started = Instant::now();
    loop {
        let deadline = match call {
            Some(_) => Some(timeout),
            None if environment.is_none() => Some(START_DEADLINE),
            None => Some(timeout.max(START_DEADLINE)),
        };
        let failed_row = |cause: String, outcomes: &mut Vec<Outcome>| {
            if let Some(row) = current {
                outcomes.push(Outcome::Failed(row, cause));
            }
        };
        match worker.next(deadline) {
            Next::Event(event) => match *event {
                Event::Ready { environment: env } => environment = Some(env),
                Event::Stage { row, stage } => {
                    if current != Some(row) {
                        current = Some(row);
                        returned = None;
                        row_started = Instant::now();
                    }
                    if let Some(name) = names.get(row) {
                        progress.stage(name, stage);
                    }
                }
                Event::Calling { row, call: next } => {
                    if current != Some(row) {
                        current = Some(row);
                        returned = None;
                        row_started = Instant::now();
                    }
                    if let (Some(Call::Run { count }), Call::Run { .. }) = (call, next) {
                        returned = Some(count);
                    }
                    call = Some(next);
                }
                Event::Estimate {
                    row,
                    ns_per_op,
                    err_pct,
                } => {
                    if let Some(name) = names.get(row) {
                        progress.estimate(name, ns_per_op, err_pct);
                    }
                }
                Event::Measured { row, sample } => {
                    outcomes.push(Outcome::Measured(
                        row,
                        Box::new(sample),
                        row_started.elapsed(),
                    ));
                    (current, call) = (None, None);
                }
                Event::Failed { row, error } => {
                    outcomes.push(Outcome::Failed(row, error));
                    (current, call) = (None, None);
                }
                Event::Compared {
                    count,
                    rounds,
                    variants,
                } => {
                    outcomes.push(Outcome::Compared(count, rounds, variants));
                    (current, call) = (None, None);
                }
                Event::Counted {
                    row,
                    per_op,
                    instantiate,
                } => {
                    outcomes.push(Outcome::Counted(row, per_op, instantiate));
                    (current, call) = (None, None);
                }
                Event::Profiled { row, profile } => {
                    outcomes.push(Outcome::Profiled(row, Box::new(profile)));
                    (current, call) = (None, None);
                }
            },
            Next::Ended { status, stderr } => {
                let clean = status.is_some_and(|s| s.success()) && current.is_none();
                if !clean {
                    match current {
                        Some(_) => failed_row(
                            format!("{} while measuring it", describe_end(status, &stderr)),
                            &mut outcomes,
                        ),
                        None => outcomes.push(Outcome::Lost(describe_end(status, &stderr))),
                    }
                }
                return Ok((environment, outcomes, !clean));
            }
            Next::TimedOut => {
                if current.is_none() {
                    bail!("a worker process stopped answering; it was killed");
                }
                failed_row(hung(call, returned, timeout), &mut outcomes);
                return Ok((environment, outcomes, true));
            }
            Next::Memory { resident } => {
                failed_row(
                    describe_memory(resident, worker.memory_cap()),
                    &mut outcomes,
                );
                return Ok((environment, outcomes, true));
            }
            Next::Interrupted => return Ok((environment, outcomes, true)),
        }
    }
}

/// Measure every row of `files` in worker processes; failed workloads are
/// rows with an error, not a failure of the run. Rows are compared with
/// `saved` when given; complexity is fitted over sizes.
pub fn run_rows(
    settings: &Settings,
    files: &[PathBuf],
    saved: Option<&Saved>,
    observer: &mut dyn Observer,
    progress: &dyn Progress,
) -> Result<RunReport> {
    let mut settings = settings.clone();
    let core_choice = choose_core(&mut settings);
    // What interrupts the measuring core: a long sample carries it.
    let interruptions = match settings.pin {
        PinRequest::Core(core) => gaps::watch(core, gaps::BEFORE_A_RUN),
        _ => None,
    };
    let original_seed = settings.seed;
    let seed = seed_of(&settings);
    settings.seed = Some(seed);
    let catalog = Catalog::load(&settings, files, progress)?;
    let planned = catalog.rows(&settings.sizes);
    let names: Vec<String> = planned.iter().map(|p| p.row.name.clone()).collect();
    let mut states: Vec<RowState> = planned
        .iter()
        .map(|p| {
            let (kind, program, compile_ms, compile_cache, load_error) = match p.workload {
                Ok(w) => (
                    Some(w.kind()),
                    matches!(w.contract, Contract::Program { .. }),
                    w.compile_ms,
                    w.cache.clone(),
                    None,
                ),
                Err(e) => (
                    e.kind,
                    false,
                    0.0,
                    crate::guest::cache::CacheOutcome::Off,
                    Some(e),
                ),
            };
            RowState {
                row: p.row.clone(),
                kind,
                program,
                compile_ms,
                compile_cache,
                samples: Vec::new(),
                error: load_error
                    .map(|e| format!("{}: {}", p.row.path.display(), one_line(&e.error))),
                count: settings.count.map(|c| c.get()),
                spent: Duration::from_secs_f64(compile_ms / 1e3),
                done: false,
                reported: false,
                subject: p.workload.ok().map(|w| subject(&settings, &p.row, w)),
                shelf: None,
                callgrind: None,
                instantiate_callgrind: None,
            }
        })
        .collect();
    let machine = crate::platform::thread::cpu_model().unwrap_or_default();
    let history_path = settings.cache.as_deref().map(history::path);
    let mut history = history_path
        .as_deref()
        .map(History::load)
        .unwrap_or_default();
    if settings.metric == Metric::CyclesEst {
        // The `run(count, seed)` workloads in one worker; each program in a
        // worker of its own, as what one program leaves in the worker's heap
        // (a WASI call's lookup hashed with random keys) moves the next
        // one's misses.
        let mut groups = vec![Vec::new()];
        for (i, state) in states.iter().enumerate().filter(|(_, s)| s.error.is_none()) {
            let row = (i, state.row.clone());
            match state.program {
                true => groups.push(vec![row]),
                false => groups[0].push(row),
            }
        }
        let seed = original_seed.unwrap_or(0);
        for (i, counted) in callgrind_pass(&settings, seed, groups, progress, &names)? {
            match counted {
                Ok((per_op, instantiate)) => {
                    states[i].callgrind = Some(per_op);
                    states[i].instantiate_callgrind = instantiate;
                }
                Err(error) => {
                    states[i].error = Some(format!(
                        "{}: the Callgrind pass: {error}",
                        states[i].row.path.display()
                    ))
                }
            }
        }
    }
    // A file's compile time counts once, on its first row.
    let mut first = std::collections::HashSet::new();
    for state in &mut states {
        if !first.insert((state.row.path.clone(), state.row.engine_set)) {
            state.compile_ms = 0.0;
        }
    }
    progress.rows(states.len());

    let mut environment: Option<Environment> = None;
    let mut results: Vec<(usize, BenchResult)> = Vec::new();
    let mut stopped = None;
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut process = 0;
    loop {
        let mut pending: Vec<usize> = (0..states.len())
            .filter(|&i| !states[i].done && states[i].error.is_none())
            .collect();
        if pending.is_empty() && environment.is_some() {
            break;
        }
        rng.shuffle(&mut pending);
        let started = Instant::now();
        let mut left: Vec<RowJob> = pending
            .iter()
            .map(|&i| RowJob {
                index: i,
                row: states[i].row.clone(),
                count: states[i].count,
                share: share(&settings, &states[i], process),
                fuel: settings.metric == Metric::Instructions && states[i].samples.is_empty(),
                counters: settings.metric == Metric::Counters && states[i].samples.is_empty(),
            })
            .collect();
        // Workers follow each other until this process's rows are done; a
        // worker that dies leaves the rows after the one it died on.
        let mut lost = 0;
        loop {
            let job = Job {
                settings: settings.clone(),
                task: Task::Rows(left.clone()),
            };
            let (env, outcomes, died) = run_worker(&job, progress, &names)?;
            if environment.is_none() && env.is_some() {
                environment = env;
                if let Some(env) = &mut environment {
                    env.core_choice = core_choice.clone();
                    env.interruptions = interruptions.clone();
                    if let Some(saved) = saved {
                        env.warnings.extend(saved.environment_differences(env));
                    }
                    progress.suspend(&mut || observer.start(env, &names));
                }
            }
            for outcome in outcomes {
                match outcome {
                    Outcome::Measured(i, sample, took) => {
                        states[i].count.get_or_insert(sample.measurement.count);
                        states[i].spent += took;
                        states[i].samples.push(*sample);
                        left.retain(|j| j.index != i);
                    }
                    Outcome::Failed(i, error) => {
                        states[i].error = Some(describe_failure(&states[i].row, &error));
                        left.retain(|j| j.index != i);
                    }
                    Outcome::Lost(why) => {
                        lost += 1;
                        if lost >= LOST_WORKERS {
                            bail!("{why} between rows, {lost} times in a row: giving up");
                        }
                    }
                    Outcome::Compared(..) | Outcome::Counted(..) | Outcome::Profiled(..) => {}
                }
            }
            if sandbox::interrupted() || !died || left.is_empty() {
                break;
            }
        }
        let overhead = started.elapsed() / pending.len().max(1) as u32;
        process += 1;
        for &i in &pending {
            let state = &mut states[i];
            state.spent += overhead;
            state.done = state.error.is_none()
                && enough(&settings, state, process, interruptions.as_ref(), seed);
        }
        if sandbox::interrupted() {
            stopped = Some("interrupted (Ctrl-C)".to_string());
            // A row measured in at least one process is reported with what
            // it has; a row not measured yet is left out.
            for state in &mut states {
                state.done |= state.error.is_none() && !state.samples.is_empty();
            }
        }
        // Report finished rows in the order of the rows: a row as soon as
        // it and every row before it are finished (after Ctrl-C, every row
        // measured so far).
        for (index, state) in states.iter_mut().enumerate() {
            let failed = state.error.is_some() && stopped.is_none();
            if state.reported {
                continue;
            }
            if !(state.done || failed) {
                match stopped {
                    None => break,
                    Some(_) => continue,
                }
            }
            state.reported = true;
            let located = summary::locate(
                &state.measurements(),
                state.kind.unwrap_or(Kind::Module),
                interruptions.as_ref(),
                seed,
            );
            let shelf = format!("{machine} · {}", located.location.label());
            let drift = Drift {
                stated_pct: settings.drift_pct,
                measured: history_path
                    .as_ref()
                    .and(state.subject.as_deref())
                    .and_then(|subject| {
                        drift::run_drift(&history.entries, &shelf, subject, now_unix())
                    }),
            };
            state.shelf = Some(shelf);
            let mut result = result_of(&settings, state, &located, seed, drift);
            if let (Some(saved), Some(figures)) = (saved, &result.figures) {
                result.baseline = compare_with_saved(&settings, saved, &result.name, figures, seed);
            }
            progress.suspend(&mut || observer.result(&result));
            progress.row_done();
            results.push((index, result));
        }
        if stopped.is_some() {
            break;
        }
    }
    progress.finish();
    results.sort_by_key(|(index, _)| *index);
    let mut environment = environment.context("interrupted before a worker process was ready")?;
    // A run cut short by Ctrl-C adds nothing to the history.
    if let (Some(path), None) = (&history_path, &stopped) {
        let now = now_unix();
        let measured: Vec<(String, String, f64)> = results
            .iter()
            .filter_map(|(index, result)| {
                let median_ns = result.figures.as_ref()?.ns_per_op.median;
                let state = &states[*index];
                Some((state.shelf.clone()?, state.subject.clone()?, median_ns))
            })
            .collect();
        for (shelf, subject, median_ns) in &measured {
            history.push(HistoryEntry {
                machine: shelf.clone(),
                subject: subject.clone(),
                median_ns: *median_ns,
                unix_s: now,
            });
        }
        if !measured.is_empty()
            && let Err(error) = history.save(path)
        {
            environment.warnings.push(format!(
                "the run history was not saved: {}",
                one_line(&error)
            ));
        }
    }
    let results: Vec<BenchResult> = results.into_iter().map(|(_, r)| r).collect();
    Ok(RunReport {
        tool: Tool::this(),
        environment,
        complexity: fit_results(&results),
        suite: crate::analysis::suite::summarize(&results),
        baseline: settings.baselines.compare.clone(),
        saved_baseline: None,
        stopped,
        results,
    })
}

/// What the Callgrind pass gave a row: per op, and a program's
/// instantiation; or why it could not count it.
type RowCounts = Result<(CallgrindCounts, Option<CallgrindCounts>), String>;

/// How much slower code runs under Callgrind, at most: the call deadline of
/// the Callgrind pass is `--timeout` times this.
const CALLGRIND_SLOWDOWN: u32 = 100;

/// Count `groups` of rows (indices into `names`) under Callgrind, each group
/// in a worker of its own: per row, its counts or why it could not be
/// counted.
fn callgrind_pass(
    settings: &Settings,
    seed: u64,
    groups: Vec<Vec<(usize, Row)>>,
    progress: &dyn Progress,
    names: &[String],
) -> Result<Vec<(usize, RowCounts)>> {
    let mut counted = Vec::new();
    for rows in groups {
        counted.extend(callgrind_worker(settings, seed, rows, progress, names)?);
    }
    Ok(counted)
}

/// Count `rows` (indices into `names`) in one worker run under Callgrind:
/// per row, its counts or why it could not be counted.
fn callgrind_worker(
    settings: &Settings,
    seed: u64,
    rows: Vec<(usize, Row)>,
    progress: &dyn Progress,
    names: &[String],
) -> Result<Vec<(usize, RowCounts)>> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    // Names of one length, and one seed (the user's, else 0), whatever the
    // run: the worker's memory layout, and with it Callgrind's simulated
    // cache, then repeats from run to run.
    let folder =
        std::env::temp_dir().join(format!("wasm-bench-callgrind-{:016x}", fastrand::u64(..)));
    std::fs::create_dir_all(&folder).with_context(|| format!("creating {}", folder.display()))?;
    let wrapper = callgrind::valgrind_command(&folder);
    let mut job_settings = settings.clone();
    // The worker reads its rows, not the paths the user named: without them,
    // its plan (and the heap that reading it leaves) is the same whatever
    // else the run measures.
    job_settings.paths = Vec::new();
    job_settings.timeout = settings.timeout.saturating_mul(CALLGRIND_SLOWDOWN);
    job_settings.seed = Some(seed);
    // Rows numbered from 0 in the worker, whatever their place in the run
    // (the number it is given moves a branch misprediction), and mapped back
    // below.
    let local_names: Vec<String> = rows
        .iter()
        .map(|(i, _)| names.get(*i).cloned().unwrap_or_default())
        .collect();
    let jobs: Vec<RowJob> = rows
        .iter()
        .enumerate()
        .map(|(local, (_, row))| RowJob {
            index: local,
            row: row.clone(),
            count: None,
            share: Share::Samples(1),
            fuel: false,
            counters: false,
        })
        .collect();
    let job = Job {
        settings: job_settings,
        task: Task::Callgrind {
            rows: jobs,
            folder: folder.clone(),
        },
    };
    let ran =
        wrapper.and_then(|wrapper| run_worker_under(&job, progress, &local_names, Some(&wrapper)));
    let _ = std::fs::remove_dir_all(&folder);
    let (_, outcomes, _) = ran?;
    let mut counted: Vec<(usize, Result<_, String>)> = Vec::new();
    let index = |local: usize| rows.get(local).map(|(i, _)| *i);
    for outcome in outcomes {
        match outcome {
            Outcome::Counted(local, per_op, instantiate) => {
                if let Some(i) = index(local) {
                    counted.push((i, Ok((per_op, instantiate))));
                }
            }
            Outcome::Failed(local, error) => {
                if let Some(i) = index(local) {
                    counted.push((i, Err(error)));
                }
            }
            Outcome::Lost(why) => bail!("the Callgrind pass: {why}"),
            Outcome::Measured(..) | Outcome::Compared(..) | Outcome::Profiled(..) => {}
        }
    }
    for (index, _) in &rows {
        if !counted.iter().any(|(i, _)| i == index) {
            counted.push((
                *index,
                Err("the Callgrind pass did not reach it".to_string()),
            ));
        }
    }
    Ok(counted)
}

/// Profile the workloads in `files` (`host profile`): every row that loads,
/// in worker processes, one profile each.
pub fn profile_files(
    settings: &Settings,
    profiling: &Profiling,
    files: &[PathBuf],
    progress: &dyn Progress,
) -> Result<ProfileReport> {
    let mut settings = settings.clone();
    settings.seed = Some(seed_of(&settings));
    let catalog = Catalog::load(&settings, files, progress)?;
    let mut rows = Vec::new();
    let mut failed = Vec::new();
    for planned in catalog.rows(&settings.sizes) {
        match planned.workload {
            Ok(_) => rows.push(planned.row),
            Err(e) => failed.push((
                planned.row.name.clone(),
                format!("{}: {}", planned.row.path.display(), one_line(&e.error)),
            )),
        }
    }
    let mut report = profile_rows(&settings, profiling, &rows, progress)?;
    for (name, error) in failed {
        report.profiles.push(RowProfile {
            name,
            path: None,
            error: Some(error),
            samples: 0,
            functions: Vec::new(),
        });
    }
    Ok(report)
}

/// Profile `rows` in worker processes (a worker that dies fails its row;
/// the next worker takes the rest), then what changed against the first.
pub fn profile_rows(
    settings: &Settings,
    profiling: &Profiling,
    rows: &[Row],
    progress: &dyn Progress,
) -> Result<ProfileReport> {
    let names: Vec<String> = rows.iter().map(|r| r.name.clone()).collect();
    let mut profiles: Vec<Option<RowProfile>> = vec![None; rows.len()];
    let mut job_settings = settings.clone();
    // A profiled call may run as long as a timed one.
    job_settings.timeout = settings.timeout.max(profiling.duration * 2);
    let mut lost = 0;
    loop {
        let left: Vec<RowJob> = (0..rows.len())
            .filter(|&i| profiles[i].is_none())
            .map(|i| RowJob {
                index: i,
                row: rows[i].clone(),
                count: None,
                share: Share::Samples(1),
                fuel: false,
                counters: false,
            })
            .collect();
        if left.is_empty() {
            break;
        }
        let job = Job {
            settings: job_settings.clone(),
            task: Task::Profile {
                rows: left,
                duration: profiling.duration,
                interval: profiling.interval,
                folder: profiling.folder.clone(),
            },
        };
        let (_, outcomes, _) = run_worker(&job, progress, &names)?;
        if sandbox::interrupted() {
            bail!("interrupted (Ctrl-C)");
        }
        for outcome in outcomes {
            match outcome {
                Outcome::Profiled(i, profile) => profiles[i] = Some(*profile),
                Outcome::Failed(i, error) => {
                    profiles[i] = Some(RowProfile {
                        name: rows[i].name.clone(),
                        path: None,
                        error: Some(describe_failure(&rows[i], &error)),
                        samples: 0,
                        functions: Vec::new(),
                    })
                }
                Outcome::Lost(why) => {
                    lost += 1;
                    if lost >= LOST_WORKERS {
                        bail!("{why} between rows, {lost} times in a row: giving up");
                    }
                }
                Outcome::Measured(..) | Outcome::Compared(..) | Outcome::Counted(..) => {}
            }
        }
    }
    Ok(ProfileReport {
        profiles: profiles.into_iter().flatten().collect(),
        changes: Vec::new(),
    })
}

/// What changed in each variant's profile against the reference's.
fn profile_changes(profiles: &[RowProfile], reference: &str) -> Vec<ProfileChanges> {
    let Some(base) = profiles
        .iter()
        .find(|p| p.name == reference && p.error.is_none())
    else {
        return Vec::new();
    };
    profiles
        .iter()
        .filter(|p| p.error.is_none() && p.name != base.name)
        .map(|p| ProfileChanges {
            variant: p.name.clone(),
            reference: base.name.clone(),
            functions: crate::analysis::profile::changes(&base.functions, &p.functions),
        })
        .collect()
}

/// How many processes a row is measured in when the user fixed it or the
/// rule does.
fn fixed_processes(settings: &Settings) -> Option<usize> {
    match (settings.processes, settings.stop) {
        (Some(p), _) => Some(p.get()),
        (None, StopRule::Samples(n)) => Some(MIN_PROCESSES.min(n.get())),
        (None, StopRule::Time(_)) => Some(MIN_PROCESSES),
        (None, StopRule::Precision { .. }) => None,
    }
}

/// What process `process` takes of a row.
fn share(settings: &Settings, state: &RowState, process: usize) -> Share {
    let processes = fixed_processes(settings).unwrap_or(MIN_PROCESSES);
    match settings.stop {
        StopRule::Samples(n) => {
            let n = n.get();
            let base = n / processes;
            Share::Samples((base + usize::from(process < n % processes)).max(1))
        }
        StopRule::Time(t) => Share::Time(t / processes as u32),
        StopRule::Precision { .. } if state.program => Share::Time(PROGRAM_SHARE),
        StopRule::Precision { .. } => Share::Blocks(PROCESS_BLOCKS),
    }
}

/// Whether a row has enough after `processes` processes.
fn enough(
    settings: &Settings,
    state: &RowState,
    processes: usize,
    watched: Option<&Interruptions>,
    seed: u64,
) -> bool {
    if let Some(fixed) = fixed_processes(settings) {
        return processes >= fixed;
    }
    let StopRule::Precision { pct, budget } = settings.stop else {
        return true;
    };
    if processes >= MAX_PROCESSES {
        return true;
    }
    if processes < MIN_PROCESSES {
        return false;
    }
    // The interval the row's figures will have.
    let measurements = state.measurements();
    let located = summary::locate(
        &measurements,
        state.kind.unwrap_or(Kind::Module),
        watched,
        seed,
    );
    let (centre, low, high) = (located.centre, located.low, located.high);
    let half = (high - low) / 2.0;
    // Within a step of the clock over the count is as precise as it gets
    // (an empty guest's median is 0).
    let floor = state
        .samples
        .first()
        .map_or(0.0, |s| finest_ns(&s.measurement));
    stats::relative_half_width_pct(centre, low, high) <= pct
        || half <= floor
        || state.spent >= budget
}

/// The result of a finished row.
fn result_of(
    settings: &Settings,
    state: &RowState,
    located: &summary::Located,
    seed: u64,
    drift: Drift,
) -> BenchResult {
    if let Some(error) = &state.error {
        return BenchResult::failed(&state.row, state.kind, error.clone());
    }
    let kind = state.kind.unwrap_or(Kind::Module);
    let measurements = state.measurements();
    let instantiate_ms = stats::median(
        &state
            .samples
            .iter()
            .map(|s| s.instantiate_ms)
            .collect::<Vec<_>>(),
    );
    let stages = Stages {
        kind,
        compile_ms: state.compile_ms,
        compile_cache: state.compile_cache.clone(),
        instantiate_ms,
    };
    let mut figures = summary::figures(
        &measurements,
        located,
        stages,
        settings.warmup_cap.as_secs_f64() * 1e3,
        seed,
        drift,
    );
    figures.precision_reached = precision_reached(settings, &figures);
    figures.fuel_per_op = state.samples.iter().find_map(|s| s.fuel_per_op);
    figures.callgrind = state.callgrind;
    match state
        .samples
        .iter()
        .find_map(|s| s.hardware_counters.as_ref())
    {
        Some(Ok(counts)) => figures.hardware_counters = Some(*counts),
        Some(Err(why)) => figures.notes.push(format!("hardware counters: {why}")),
        None => {}
    }
    if state.program {
        program_figures(&mut figures, state);
    }
    BenchResult::measured(&state.row, kind, figures)
}

/// Whether the interval reached `--precision` (the precision rule only).
fn precision_reached(settings: &Settings, f: &Figures) -> bool {
    match settings.stop {
        StopRule::Precision { pct, .. } => {
            stats::relative_half_width_pct(
                f.ns_per_op.median,
                f.ns_per_op.ci95_low,
                f.ns_per_op.ci95_high,
            ) <= pct
        }
        _ => false,
    }
}

/// The phases of a program, over every process's iterations.
fn program_figures(figures: &mut Figures, state: &RowState) {
    let programs: Vec<_> = state
        .samples
        .iter()
        .filter_map(|s| s.program.as_ref())
        .collect();
    let instantiate: Vec<f64> = programs
        .iter()
        .flat_map(|p| p.instantiate_ns.iter().copied())
        .collect();
    let execute: Vec<f64> = state
        .samples
        .iter()
        .flat_map(|s| s.measurement.blocks.iter().flatten().copied())
        .collect();
    let region = programs
        .last()
        .map_or(TimedRegion::WholeStart, |p| p.region);
    match region {
        TimedRegion::WholeStart => figures
            .notes
            .push("calls neither bench.start nor bench.end: timed over the whole of _start".into()),
        TimedRegion::WholeStartNoEnd => figures
            .notes
            .push("imports bench.start but not bench.end: timed over the whole of _start".into()),
        TimedRegion::StartToEnd => {}
    }
    figures.phases = Some(Phases {
        compile_ms: state.compile_ms,
        instantiate_ns: phase_stats(&instantiate),
        execute_ns: phase_stats(&execute),
        timed_region: region,
        instantiate_callgrind: state.instantiate_callgrind,
    });
}

/// Compare the variants in `files`: every benchmark of every file is a
/// variant; any failure stops the comparison (a verdict needs all of them).
pub fn compare_rounds(
    settings: &CompareSettings,
    files: &[PathBuf],
    progress: &dyn Progress,
) -> Result<CompareReport> {
    let mut common = settings.settings.clone();
    let core_choice = choose_core(&mut common);
    let seed = seed_of(&common);
    common.seed = Some(seed);
    let catalog = Catalog::load(&common, files, progress)?;
    let mut rows = Vec::new();
    let mut kinds = Vec::new();
    for planned in catalog.rows(&common.sizes) {
        let workload = match planned.workload {
            Ok(workload) => workload,
            Err(e) => {
                bail!("{}: {}", planned.row.path.display(), one_line(&e.error));
            }
        };
        if let Contract::Program { .. } = workload.contract {
            bail!(UsageError(format!(
                "{}: a program (WASI `_start`) cannot be compared: compare takes `run(count, seed)` workloads (measure programs with `host run`)",
                planned.row.path.display()
            )));
        }
        kinds.push((workload.kind(), workload.compile_ms, workload.cache.clone()));
        rows.push(planned.row);
    }
    // The same file twice (A against A) makes two variants of one name.
    for i in 1..rows.len() {
        let seen = rows[..i].iter().filter(|r| r.name == rows[i].name).count();
        if seen > 0 {
            rows[i].name = format!("{}#{}", rows[i].name, seen + 1);
        }
    }
    if rows.len() < 2 {
        bail!(UsageError(
            "compare needs at least two variants (files, or `run_<name>` benchmarks)".into()
        ));
    }
    let reference = match &settings.reference {
        None => 0,
        Some(name) => rows.iter().position(|r| r.name == *name).ok_or_else(|| {
            let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
            anyhow::Error::new(UsageError(format!(
                "--reference: no variant `{name}` (variants: {})",
                names.join(", ")
            )))
        })?,
    };
    let names: Vec<String> = rows.iter().map(|r| r.name.clone()).collect();
    // With --metric cycles-est, every variant is counted by Callgrind first.
    let mut counted: Vec<Option<CallgrindCounts>> = vec![None; rows.len()];
    if common.metric == Metric::CyclesEst {
        let indexed = vec![rows.iter().cloned().enumerate().collect()];
        let seed = settings.settings.seed.unwrap_or(0);
        for (i, result) in callgrind_pass(&common, seed, indexed, progress, &names)? {
            match result {
                Ok((per_op, _)) => counted[i] = Some(per_op),
                Err(error) => bail!("{}", describe_failure(&rows[i], &error)),
            }
        }
    }
    progress.stage("variants", Stage::Sampling);
    let sampling = Instant::now();
    let mut environment = None;
    let mut count = common.count.map(|c| c.get());
    let mut per_variant: Vec<Vec<ProcessSample>> = vec![Vec::new(); rows.len()];
    let mut rounds = 0;
    let mut comparisons = Vec::new();
    for process in 0..MAX_COMPARE_PROCESSES {
        let job = Job {
            settings: common.clone(),
            task: Task::Compare {
                variants: rows.clone(),
                count,
                rounds: ROUNDS_PER_PROCESS,
                offset: process,
                fuel: common.metric == Metric::Instructions && process == 0,
            },
        };
        let (env, outcomes, _) = run_worker(&job, progress, &names)?;
        if environment.is_none() {
            environment = env;
            if let Some(env) = &mut environment {
                env.core_choice = core_choice.clone();
            }
        }
        if sandbox::interrupted() {
            bail!("interrupted (Ctrl-C)");
        }
        for outcome in outcomes {
            match outcome {
                Outcome::Compared(shared, taken, samples) => {
                    count = Some(shared);
                    rounds += taken;
                    for (i, sample) in samples.into_iter().enumerate() {
                        per_variant[i].push(sample);
                    }
                }
                Outcome::Failed(i, error) => {
                    bail!("{}", describe_failure(&rows[i], &error));
                }
                Outcome::Lost(why) => bail!("{why}"),
                Outcome::Measured(..) | Outcome::Counted(..) | Outcome::Profiled(..) => {}
            }
        }
        if per_variant[0].len() <= process {
            bail!("a worker process compared nothing");
        }
        let judged: Vec<Rounds<'_>> = rows
            .iter()
            .zip(&per_variant)
            .enumerate()
            .map(|(i, (row, samples))| Rounds {
                name: &row.name,
                per_op: samples
                    .iter()
                    .map(|s| corrected_per_op(&s.measurement))
                    .collect(),
                exact_per_op: match common.metric {
                    Metric::Time | Metric::Counters => None,
                    Metric::Instructions => samples.iter().find_map(|s| s.fuel_per_op),
                    Metric::CyclesEst => counted[i].map(|c| c.cycles_est),
                },
            })
            .collect();
        comparisons = judge(&judged, reference, common.noise, common.metric);
        if may_stop(process + 1, rounds, &comparisons) || sampling.elapsed() >= settings.time_cap {
            break;
        }
    }
    let sampling_ms = sampling.elapsed().as_secs_f64() * 1e3;
    let results = rows
        .iter()
        .zip(&per_variant)
        .zip(&kinds)
        .zip(&counted)
        .map(|(((row, samples), (kind, compile_ms, cache)), counted)| {
            let measurements: Vec<Measurement> =
                samples.iter().map(|s| s.measurement.clone()).collect();
            let located = summary::locate(&measurements, *kind, None, seed);
            let mut figures = summary::figures(
                &measurements,
                &located,
                Stages {
                    kind: *kind,
                    compile_ms: *compile_ms,
                    compile_cache: cache.clone(),
                    instantiate_ms: stats::median(
                        &samples.iter().map(|s| s.instantiate_ms).collect::<Vec<_>>(),
                    ),
                },
                common.warmup_cap.as_secs_f64() * 1e3,
                seed,
                Drift {
                    stated_pct: common.drift_pct,
                    measured: None,
                },
            );
            figures.fuel_per_op = samples.iter().find_map(|s| s.fuel_per_op);
            figures.callgrind = *counted;
            BenchResult::measured(row, *kind, figures)
        })
        .collect();
    let profile = match &settings.profile {
        Some(profiling) => {
            let mut report = profile_rows(&common, profiling, &rows, progress)?;
            report.changes = profile_changes(&report.profiles, &rows[reference].name);
            Some(report)
        }
        None => None,
    };
    progress.finish();
    Ok(CompareReport {
        tool: Tool::this(),
        environment: environment.context("no worker process was ready")?,
        reference: comparisons
            .first()
            .map(|c| c.reference.clone())
            .unwrap_or_default(),
        noise_pct: common.noise.width_pct(),
        count: count.unwrap_or(1),
        rounds,
        sampling_ms,
        variants: results,
        comparisons,
        profile,
    })
}
