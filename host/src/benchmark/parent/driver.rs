//! The one driver of workers: a [`Crew`] starts a worker on a job, holds
//! its guest calls to `--timeout`, turns its events into [`Outcome`]s, and
//! replaces it when it is lost. Every scheduler (run, compare, profile, the
//! Callgrind pass) is a fold over these outcomes ([`Crew::work`]).
//!
//! The lost-worker policy, written here once:
//! - a worker that hangs in a guest call past the deadline, outgrows its
//!   memory or dies while a row is in progress fails that row with the
//!   cause; the scheduler's next job (a new worker) takes the rows left;
//! - a worker that dies between rows (or before it was ready) is replaced;
//!   after [`LOST_WORKERS`] such workers in a row, none reporting a row,
//!   the schedule gives up;
//! - a worker that stops answering between rows is an error;
//! - Ctrl-C ends the worker and the work at once.

use std::time::{Duration, Instant};

use anyhow::{Result, anyhow, bail};

use crate::benchmark::parent::executor::{Executor, Next, Wrapper};
use crate::benchmark::parent::supervisor::{describe_end, describe_memory};
use crate::benchmark::progress::{Call, Progress};
use crate::benchmark::protocol::{Event, Found, Job, ProcessMeasurement, Task};
use crate::results::{CallgrindCounts, RowProfile};
use crate::util::bytes::unhex;

/// Workers in a row that may die between rows before a schedule gives up.
pub const LOST_WORKERS: usize = 3;
/// Time a worker may take to start, calibrate and load from the cache before
/// it must have said it is ready (compiling without the cache included).
const START_DEADLINE: Duration = Duration::from_secs(600);

/// What a worker reported.
pub enum Outcome {
    /// The worker is ready: what it found where it measures.
    Ready(Box<Found>),
    /// Row `row` is done, taking `took` of wall time in the worker (a
    /// comparison reports all its variants at once, as row 0).
    Done {
        row: usize,
        took: Duration,
        done: Done,
    },
    /// Row `row` failed: why.
    Failed { row: usize, error: anyhow::Error },
}

/// What a row's task gave.
pub enum Done {
    Measured(Box<ProcessMeasurement>),
    Compared {
        count: u64,
        rounds: usize,
        variants: Vec<ProcessMeasurement>,
    },
    /// Counted by Callgrind: per op, and a program's instantiation.
    Counted(CallgrindCounts, Option<CallgrindCounts>),
    Profiled(Box<RowProfile>),
    /// What a program wrote to stdout in one run.
    Output(Vec<u8>),
}

impl Done {
    /// What a worker answered, when it was not what the task asked for.
    pub fn unexpected(&self) -> anyhow::Error {
        let what = match self {
            Done::Measured(_) => "a measurement",
            Done::Compared { .. } => "a comparison",
            Done::Counted(..) => "Callgrind's counts",
            Done::Profiled(_) => "a profile",
            Done::Output(_) => "a program's output",
        };
        anyhow!("a worker answered with {what}, which its task did not ask for")
    }
}

/// Runs workers for a schedule: one after the other, each on the job the
/// schedule gives, under the lost-worker policy.
pub struct Crew<'a> {
    executor: &'a dyn Executor,
    progress: &'a dyn Progress,
    /// The names of the rows the jobs' indices point into.
    names: &'a [String],
    /// The deadline of one guest call.
    timeout: Duration,
    /// The deadline in the words of a row's error (`--timeout 10s`).
    deadline: String,
    wrapper: Option<Wrapper>,
}

impl<'a> Crew<'a> {
    /// A crew starting workers with `executor`, telling `progress` under
    /// `names`, holding guest calls to `timeout`.
    pub fn new(
        executor: &'a dyn Executor,
        progress: &'a dyn Progress,
        names: &'a [String],
        timeout: Duration,
    ) -> Self {
        Crew {
            executor,
            progress,
            names,
            timeout,
            deadline: format!("--timeout {}", humantime::format_duration(timeout)),
            wrapper: None,
        }
    }

    /// The workers start under `wrapper` (Valgrind); a row's error names
    /// the call deadline in the words `deadline`.
    pub fn under(mut self, wrapper: Wrapper, deadline: String) -> Self {
        self.wrapper = Some(wrapper);
        self.deadline = deadline;
        self
    }

    /// Whether the user pressed Ctrl-C.
    pub fn interrupted(&self) -> bool {
        self.executor.interrupted()
    }

    /// Run `print` (which writes to the terminal) with the progress display
    /// hidden.
    pub fn suspend(&self, print: &mut dyn FnMut()) {
        self.progress.suspend(print);
    }

    /// Start workers one after the other, each on the job `next` gives for
    /// `state`, until it gives none or Ctrl-C; fold every outcome into
    /// `state` as the worker's end. Fails when `fold` does, when a worker
    /// cannot be started or stops answering between rows, and after
    /// [`LOST_WORKERS`] workers in a row lost between rows.
    pub fn work<S>(
        &self,
        state: &mut S,
        mut next: impl FnMut(&S) -> Option<Job>,
        mut fold: impl FnMut(&mut S, Outcome) -> Result<()>,
    ) -> Result<()> {
        let mut lost = 0;
        while let Some(job) = next(state) {
            let shift = self.shift(&job)?;
            let rows = shift
                .outcomes
                .iter()
                .filter(|o| !matches!(o, Outcome::Ready(_)))
                .count();
            let reported = rows > 0;
            for outcome in shift.outcomes {
                fold(state, outcome)?;
            }
            if reported {
                lost = 0;
            }
            let lost_why = match shift.end {
                End::Interrupted => return Ok(()),
                End::Lost(why) => Some(format!("{why} between rows")),
                // A worker that exits cleanly has reported every row; one
                // that did not is lost like one that died.
                End::Finished if rows < expected(&job.task) => {
                    Some("the worker process exited with rows unreported".to_string())
                }
                End::Finished | End::Killed => None,
            };
            if let Some(why) = lost_why {
                lost += 1;
                if lost >= LOST_WORKERS {
                    bail!("{why}, {lost} times in a row: giving up");
                }
            }
            if self.executor.interrupted() {
                return Ok(());
            }
        }
        Ok(())
    }

    /// Run one worker on `job` until it has reported every row, died or
    /// was killed.
    fn shift(&self, job: &Job) -> Result<Shift> {
        let mut worker = self.executor.start(job, self.wrapper.as_ref())?;
        let mut watch = Watch::new(self.timeout, &self.deadline);
        let mut outcomes = Vec::new();
        loop {
            let end = match worker.next(Some(watch.deadline())) {
                Next::Event(event) => {
                    let outcome = watch.on_event(*event, self.progress, self.names);
                    outcomes.extend(outcome.filter(|o| of_the_job(o, &job.task)));
                    continue;
                }
                Next::Ended { status, stderr } => {
                    let clean = status.is_some_and(|s| s.success());
                    let why = describe_end(status, &stderr);
                    match clean && watch.current.is_none() {
                        true => End::Finished,
                        false => watch.fail(anyhow!("{why} while measuring it"), why),
                    }
                }
                Next::TimedOut => {
                    if watch.current.is_none() {
                        bail!("a worker process stopped answering; it was killed");
                    }
                    let why = watch.hung();
                    watch.fail(why, String::new())
                }
                Next::Memory { resident, cap } => {
                    let why = describe_memory(resident, cap);
                    watch.fail(anyhow!("{why}"), why)
                }
                Next::Broken(why) => watch.fail(anyhow!("{why}"), why),
                Next::Interrupted => End::Interrupted,
            };
            let failed = watch.failed.take();
            outcomes.extend(failed.filter(|o| of_the_job(o, &job.task)));
            return Ok(Shift { outcomes, end });
        }
    }
}

/// How many outcomes a worker on `task` reports: one per row, and one
/// for all the variants of a comparison.
fn expected(task: &Task) -> usize {
    match task {
        Task::Compare { .. } => 1,
        _ => task.rows().len(),
    }
}

/// Whether `outcome` is of a row of `task` (a worker names rows by their
/// index in the parent's list; a comparison's, by the variant's place).
fn of_the_job(outcome: &Outcome, task: &Task) -> bool {
    let row = match outcome {
        Outcome::Ready(_) => return true,
        Outcome::Done { row, .. } | Outcome::Failed { row, .. } => *row,
    };
    match task {
        Task::Compare { variants, .. } => row < variants.len(),
        Task::Rows(jobs)
        | Task::Callgrind { rows: jobs, .. }
        | Task::Profile { rows: jobs, .. }
        | Task::Output(jobs) => jobs.iter().any(|j| j.index == row),
    }
}

/// What one worker reported, and how it ended.
struct Shift {
    outcomes: Vec<Outcome>,
    end: End,
}

/// How a worker ended.
enum End {
    /// Every row reported, and it exited cleanly.
    Finished,
    /// Killed or dead while a row was in progress: that row failed.
    Killed,
    /// Dead between rows (or before it was ready): why.
    Lost(String),
    /// Ctrl-C.
    Interrupted,
}

/// What the driver follows of one worker: the row in progress, the guest
/// call in progress and the count of the last `run` call that returned.
struct Watch<'d> {
    timeout: Duration,
    /// The deadline in words, for the error of a call that outlived it.
    deadline: &'d str,
    ready: bool,
    current: Option<usize>,
    call: Option<Call>,
    returned: Option<u64>,
    row_started: Instant,
    /// The row in progress, failed with the cause of the worker's end.
    failed: Option<Outcome>,
}

impl<'d> Watch<'d> {
    fn new(timeout: Duration, deadline: &'d str) -> Self {
        Watch {
            timeout,
            deadline,
            ready: false,
            current: None,
            call: None,
            returned: None,
            row_started: Instant::now(),
            failed: None,
        }
    }

    /// How long the worker may stay silent now: the call deadline during a
    /// guest call, the start deadline otherwise.
    fn deadline(&self) -> Duration {
        match (self.call, self.ready) {
            (Some(_), _) => self.timeout,
            (None, false) => START_DEADLINE,
            (None, true) => self.timeout.max(START_DEADLINE),
        }
    }

    /// Row `row` is in progress (a new row resets what was returned).
    fn enter(&mut self, row: usize) {
        if self.current != Some(row) {
            self.current = Some(row);
            self.returned = None;
            self.row_started = Instant::now();
        }
    }

    /// Take `event`: tell `progress`, and the outcome it is, if any.
    fn on_event(
        &mut self,
        event: Event,
        progress: &dyn Progress,
        names: &[String],
    ) -> Option<Outcome> {
        let took = self.row_started.elapsed();
        let (row, done) = match event {
            Event::Ready { found } => {
                self.ready = true;
                return Some(Outcome::Ready(Box::new(found)));
            }
            Event::Failed {
                row,
                error,
                unsupported,
            } => {
                (self.current, self.call) = (None, None);
                let error = match unsupported {
                    true => anyhow::Error::new(crate::guest::Unsupported(error)),
                    false => anyhow::Error::msg(error),
                };
                return Some(Outcome::Failed { row, error });
            }
            Event::Measured { row, measured } => (row, Done::Measured(Box::new(measured))),
            Event::Compared {
                count,
                rounds,
                variants,
            } => {
                let compared = Done::Compared {
                    count,
                    rounds,
                    variants,
                };
                (0, compared)
            }
            Event::Counted {
                row,
                per_op,
                instantiate,
            } => (row, Done::Counted(per_op, instantiate)),
            Event::Profiled { row, profile } => (row, Done::Profiled(Box::new(profile))),
            Event::Output { row, stdout } => match unhex(&stdout) {
                Some(bytes) => (row, Done::Output(bytes)),
                None => {
                    (self.current, self.call) = (None, None);
                    let error = anyhow!("the worker's output of a program was not hex");
                    return Some(Outcome::Failed { row, error });
                }
            },
            told => {
                self.follow(told, progress, names);
                return None;
            }
        };
        (self.current, self.call) = (None, None);
        Some(Outcome::Done { row, took, done })
    }

    /// Follow an event that tells what the worker is doing: a step, a
    /// call, an estimate.
    fn follow(&mut self, event: Event, progress: &dyn Progress, names: &[String]) {
        let name = |row: usize| names.get(row).map(String::as_str);
        match event {
            Event::Step { row, step } => {
                self.enter(row);
                if let Some(name) = name(row) {
                    progress.step(name, step);
                }
            }
            Event::Calling { row, call } => {
                self.enter(row);
                if let (Some(Call::Run { count }), Call::Run { .. }) = (self.call, call) {
                    self.returned = Some(count);
                }
                self.call = Some(call);
            }
            Event::Estimate {
                row,
                ns_per_op,
                err_pct,
            } => {
                if let Some(name) = name(row) {
                    progress.estimate(name, ns_per_op, err_pct);
                }
            }
            _ => {}
        }
    }

    /// The worker ended or was killed: the row in progress fails with
    /// `cause`; with none in progress, the worker was lost (`why`).
    fn fail(&mut self, cause: anyhow::Error, why: String) -> End {
        match self.current {
            Some(row) => {
                self.failed = Some(Outcome::Failed { row, error: cause });
                End::Killed
            }
            None => End::Lost(why),
        }
    }

    /// What the call that never returned was, in the words of the row's
    /// error.
    fn hung(&self) -> anyhow::Error {
        let limit = format!(
            "did not return within {}, the limit of one call (an infinite loop? if the call is only long, raise the limit with --timeout); the worker was killed",
            self.deadline
        );
        let what = match self.call {
            Some(Call::Setup { size }) => format!("`setup({size})` failed: {limit}"),
            Some(Call::Instantiate) => format!("instantiation failed: {limit}"),
            Some(Call::Start) => format!("`_start` failed: {limit}"),
            Some(Call::Load) => format!(
                "loading the engine library did not finish within {} (a constructor that hangs?); the worker was killed",
                self.deadline
            ),
            Some(Call::Run { count }) => match self.returned {
                Some(good) if good != count => format!(
                    "at count {count} (it had returned at count {good}): `run` failed: {limit}"
                ),
                _ => format!("at count {count}: `run` failed: {limit}"),
            },
            None => limit,
        };
        anyhow::Error::msg(what)
    }
}
