//! The scheduler of `host run`: every row is measured in several worker
//! processes, each taking its own warm-up, pilot and fixed cost at the count
//! the first process fixed, with the order of the rows shuffled from one
//! process to the next, until the stop rule says a row has enough
//! ([`crate::benchmark::parent::stop`]). A worker lost on the way is
//! replaced by the driver ([`crate::benchmark::parent::driver`]); a row
//! whose worker hangs past `--timeout`, outgrows its memory or dies fails
//! with the cause. Finished rows go to an [`Observer`] in the order of the
//! rows, each as soon as the rows before it are finished; after Ctrl-C,
//! every row measured so far. A run's interval also counts the drift between
//! runs measured on this machine, read from the kept runs
//! ([`crate::benchmark::parent::history`]).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};

use crate::analysis::baseline::compare_with_saved;
use crate::analysis::complexity::fit_results;
use crate::analysis::estimate;
use crate::analysis::summary::Drift;
use crate::benchmark::parent::callgrind;
use crate::benchmark::parent::catalog::Catalog;
use crate::benchmark::parent::driver::{Crew, Done, Outcome};
use crate::benchmark::parent::executor::Executor;
use crate::benchmark::parent::history::{RunHistory, subject};
use crate::benchmark::parent::plan::RunPlan;
use crate::benchmark::parent::result::result_of;
use crate::benchmark::parent::row::{RowState, Status, describe};
use crate::benchmark::parent::stop::{enough, share, under_library};
use crate::benchmark::parent::supervisor::Subprocesses;
use crate::benchmark::progress::Progress;
use crate::benchmark::protocol::{Job, RowJob, Task};
use crate::guest::sandbox;
use crate::options::{EngineConfig, Metric, PinRequest, Settings};
use crate::platform::gaps::{self, Interruptions};
use crate::results::baseline::Saved;
use crate::results::{BenchResult, Environment, Foreign, RunReport, Tool};

/// Told about progress as it happens (the terminal table listens).
pub trait Observer: Send {
    /// Before the first row: the environment and the names of every row.
    fn start(&mut self, env: &Environment, rows: &[String]);
    fn result(&mut self, result: &BenchResult);
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
    let mut plan = RunPlan::settle(settings);
    // What interrupts the measuring core: a long sample carries it.
    let watched = match plan.worker.pin {
        PinRequest::Core(core) => gaps::watch(core, gaps::BEFORE_A_RUN),
        _ => None,
    };
    let catalog = Catalog::load(settings, files, progress)?;
    plan.worker.checked = catalog.checked();
    let mut states: Vec<RowState> = catalog
        .rows(&settings.sizes)
        .iter()
        .map(|p| {
            let subject = p.file.ok().map(|w| subject(settings, &p.row, w));
            RowState::new(p, settings.count.map(|c| c.get()), subject)
        })
        .collect();
    let names: Vec<String> = states.iter().map(|s| s.row.name.clone()).collect();
    if settings.metric == Metric::CyclesEst {
        count_with_callgrind(settings, &plan, &mut states, progress, &names)?;
    }
    // A file's compile time counts once, on its first row.
    let mut first = std::collections::HashSet::new();
    for state in &mut states {
        if !first.insert((state.row.path.clone(), state.row.engine_set))
            && let Ok(compiled) = &mut state.compiled
        {
            compiled.compile_ms = 0.0;
        }
    }
    progress.rows(states.len());
    let run = Run {
        settings,
        plan,
        watched,
        saved,
        states,
        names,
    };
    run.schedule(&Subprocesses, observer, progress)
}

/// Count the rows that loaded under Callgrind (`--metric cycles-est`): the
/// `run(count, seed)` workloads in one worker; each program in a worker of
/// its own, as what one program leaves in the worker's heap (a WASI call's
/// lookup hashed with random keys) moves the next one's misses.
fn count_with_callgrind(
    settings: &Settings,
    plan: &RunPlan,
    states: &mut [RowState],
    progress: &dyn Progress,
    names: &[String],
) -> Result<()> {
    let mut groups = vec![Vec::new()];
    for (i, state) in states.iter().enumerate().filter(|(_, s)| s.error.is_none()) {
        let row = (i, state.row.clone());
        match state.program() {
            true => groups.push(vec![row]),
            false => groups[0].push(row),
        }
    }
    let pass = callgrind::Pass::new(plan, settings.timeout, progress, names);
    for (i, counted) in pass.count(&Subprocesses, groups)? {
        let state = &mut states[i];
        match counted {
            Ok(counts) => state.counts = Some(counts),
            Err(error) => {
                let path = state.row.path.display().to_string();
                state.error = Some(error.context("the Callgrind pass").context(path));
            }
        }
    }
    Ok(())
}

/// A run being measured.
pub struct Run<'a> {
    pub settings: &'a Settings,
    pub plan: RunPlan,
    /// What interrupted the measuring core before the run.
    pub watched: Option<Interruptions>,
    pub saved: Option<&'a Saved>,
    pub states: Vec<RowState>,
    pub names: Vec<String>,
}

/// What the workers of one process of a run have left, and what the run
/// has so far.
struct Wave<'s> {
    states: &'s mut [RowState],
    environment: &'s mut Option<Environment>,
    left: Vec<RowJob>,
}

/// What the rows reported so far, and why the run stopped.
struct Reported {
    results: Vec<(usize, BenchResult)>,
    stopped: Option<String>,
    history: RunHistory,
}

impl Run<'_> {
    /// Measure process after process, each worker started by `executor`,
    /// until every row has enough (or Ctrl-C); report to `observer` as rows
    /// finish.
    pub fn schedule(
        mut self,
        executor: &dyn Executor,
        observer: &mut dyn Observer,
        progress: &dyn Progress,
    ) -> Result<RunReport> {
        let names = self.names.clone();
        let crew = Crew::new(executor, progress, &names, self.settings.timeout);
        let mut environment = None;
        let mut reported = Reported {
            results: Vec::new(),
            stopped: None,
            history: RunHistory::load(
                self.settings,
                &self
                    .states
                    .iter()
                    .filter_map(|s| s.subject.as_deref())
                    .collect::<Vec<_>>(),
            ),
        };
        let mut rng = fastrand::Rng::with_seed(self.plan.seed());
        let mut process = 0;
        loop {
            let mut pending: Vec<usize> = (0..self.states.len())
                .filter(|&i| self.states[i].pending())
                .collect();
            if pending.is_empty() && environment.is_some() {
                break;
            }
            rng.shuffle(&mut pending);
            let started = Instant::now();
            self.take_process(&crew, &pending, process, &mut environment, observer)?;
            let overhead = started.elapsed() / pending.len().max(1) as u32;
            process += 1;
            self.settle_process(&pending, process, overhead);
            if crew.interrupted() {
                reported.stopped = Some(sandbox::STOPPED.to_string());
                // A row measured in at least one process is reported with
                // what it has; a row not measured yet is left out.
                for state in &mut self.states {
                    if state.error.is_none() && !state.processes.is_empty() {
                        state.status = Status::Finished;
                    }
                }
            }
            self.report_finished(&mut reported, observer, progress);
            if reported.stopped.is_some() {
                break;
            }
        }
        progress.finish();
        self.finish(environment, reported)
    }

    /// Process `process` of the rows `pending` (in that order): workers
    /// follow each other until every row is measured or failed; a worker
    /// that dies leaves the rows after the one it died on.
    fn take_process(
        &mut self,
        crew: &Crew<'_>,
        pending: &[usize],
        process: usize,
        environment: &mut Option<Environment>,
        observer: &mut dyn Observer,
    ) -> Result<()> {
        let left = pending.iter().map(|&i| self.row_job(i, process)).collect();
        let mut wave = Wave {
            states: &mut self.states,
            environment,
            left,
        };
        let (settings, plan, watched, saved, names) = (
            self.settings,
            &self.plan,
            &self.watched,
            self.saved,
            &self.names,
        );
        let next = |wave: &Wave<'_>| {
            (!wave.left.is_empty() || wave.environment.is_none()).then(|| Job {
                plan: plan.worker.clone(),
                task: Task::Rows(wave.left.clone()),
            })
        };
        crew.work(&mut wave, next, |wave, outcome| {
            match outcome {
                Outcome::Ready(found) if wave.environment.is_none() => {
                    let mut env = plan.environment(settings, *found, watched.clone());
                    if let Some(saved) = saved {
                        env.warnings.extend(saved.environment_differences(&env));
                    }
                    crew.suspend(&mut || observer.start(&env, names));
                    *wave.environment = Some(env);
                }
                Outcome::Ready(_) => {}
                Outcome::Done { row, took, done } => {
                    let Done::Measured(measured) = done else {
                        return Err(done.unexpected());
                    };
                    let state = &mut wave.states[row];
                    state.count.get_or_insert(measured.measurement.count);
                    state.spent += took;
                    state.processes.push(*measured);
                    wave.left.retain(|j| j.index != row);
                }
                Outcome::Failed { row, error } => {
                    let state = &mut wave.states[row];
                    state.error = Some(error.context(describe(&state.row)));
                    wave.left.retain(|j| j.index != row);
                }
            }
            Ok(())
        })
    }

    /// What process `process` takes of row `i`.
    fn row_job(&self, i: usize, process: usize) -> RowJob {
        let state = &self.states[i];
        let first = state.processes.is_empty();
        RowJob {
            index: i,
            row: state.row.clone(),
            count: state.count,
            share: share(
                self.settings,
                state.program(),
                under_library(self.settings, &state.row),
                process,
            ),
            fuel: self.settings.metric == Metric::Instructions && first,
            counters: self.settings.metric == Metric::Counters && first,
        }
    }

    /// After `processes` processes of the rows `pending`: each row's share
    /// of the process's `overhead` counts in its budget, and the stop rule
    /// says which have enough.
    fn settle_process(
        &mut self,
        pending: &[usize],
        processes: usize,
        overhead: std::time::Duration,
    ) {
        for &i in pending {
            let state = &mut self.states[i];
            state.spent += overhead;
            let seed = self.plan.seed();
            if state.error.is_some() {
                continue;
            }
            let stopped = enough(self.settings, state, processes, self.watched.as_ref(), seed);
            if stopped.is_some() {
                state.stopped = stopped;
                state.status = Status::Finished;
            }
        }
    }

    /// Report finished rows in the order of the rows: a row as soon as it
    /// and every row before it are finished (after Ctrl-C, every row
    /// measured so far).
    fn report_finished(
        &mut self,
        reported: &mut Reported,
        observer: &mut dyn Observer,
        progress: &dyn Progress,
    ) {
        for index in 0..self.states.len() {
            let state = &self.states[index];
            let failed = state.error.is_some() && reported.stopped.is_none();
            if state.status == Status::Reported {
                continue;
            }
            if !(state.status == Status::Finished || failed) {
                match reported.stopped {
                    None => break,
                    Some(_) => continue,
                }
            }
            let result = self.result(index, &reported.history);
            self.states[index].status = Status::Reported;
            progress.suspend(&mut || observer.result(&result));
            progress.row_done();
            reported.results.push((index, result));
        }
    }

    /// The result of row `index`, with what the drift files it under.
    fn result(&self, index: usize, history: &RunHistory) -> BenchResult {
        let state = &self.states[index];
        let seed = self.plan.seed();
        let located = estimate::locate(
            &state.measurements(),
            state.kind(),
            self.watched.as_ref(),
            seed,
        );
        let machine = history.machine(&located);
        let busy_machine = self.plan.busy(self.watched.as_ref());
        let drift = Drift {
            shown: self.settings.interval,
            ..history.drift(
                self.settings.drift_pct,
                &machine,
                state.subject.as_deref(),
                busy_machine,
            )
        };
        let mut result = result_of(self.settings, state, &located, seed, drift);
        if let Some(figures) = &result.figures
            && let Some(saved) = self.saved
        {
            result.baseline = compare_with_saved(self.settings, saved, &result.name, figures, seed);
        }
        result.subject = state.subject.clone();
        result.module = state.compiled.as_ref().ok().and_then(|c| c.module.clone());
        result
    }

    /// The report of the run: the rows in order, with what reading the
    /// store refused.
    fn finish(self, environment: Option<Environment>, reported: Reported) -> Result<RunReport> {
        let Reported {
            mut results,
            stopped,
            history,
        } = reported;
        results.sort_by_key(|(index, _)| *index);
        let mut environment =
            environment.context("interrupted before a worker process was ready")?;
        environment
            .warnings
            .extend(history.notes().into_iter().map(Foreign::from));
        let results: Vec<BenchResult> = results.into_iter().map(|(_, r)| r).collect();
        let seed = environment.seed;
        Ok(RunReport {
            tool: Tool::this(),
            environment,
            complexity: fit_results(&results),
            suite: crate::analysis::suite::summarize(&results),
            runtimes: crate::analysis::runtimes::runtime_view(
                &results,
                &EngineConfig::short_names(&self.settings.engines),
                self.settings.reference.clone().map(Foreign::from).as_ref(),
                self.settings.drift_pct / 100.0,
                seed,
            ),
            baseline: self.settings.baselines.compare.clone().map(Foreign::from),
            saved_baseline: None,
            stopped: stopped.map(Foreign::from),
            results,
            shards: self.settings.shard.into_iter().collect(),
            merged_from: Vec::new(),
        })
    }
}
