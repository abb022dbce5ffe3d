//! The worker process: `host worker` (hidden) reads a
//! [`crate::benchmark::protocol::Job`] as JSON on stdin, measures, and writes
//! [`crate::benchmark::protocol::Event`]s as JSON lines on the event channel
//! the parent made for them (not stdout: what a guest, an engine library or
//! the code it links prints there never reaches the parent's reader). It is the
//! same binary as the parent, so the code that measures is the code the user
//! runs.
//!
//! A worker prepares its measuring thread and calibrates, loads the files it
//! was given (from the compile cache the parent filled, as a rule), then
//! takes its task: measures each row in the order given, compares the
//! variants in interleaved rounds, counts rows under Callgrind, profiles
//! them, or runs programs once for their output, telling the parent before
//! every guest call what it calls. A guest that fails fails its row; the
//! worker goes on with the next. What the
//! worker cannot survive (a hang, a crash, memory beyond the cap), the
//! parent ([`crate::benchmark::parent::supervisor`]) contains.
//!
//! - [`emitter`]: the events, written as the worker's progress;
//! - [`session`]: the measuring thread, calibrated, with its workloads;
//! - [`calibrate`]: the empty guest's call and a pause/resume pair;
//! - [`rows`]: one row measured; [`sequence`]: the measuring sequence of a
//!   `run(count, seed)` workload (warm-up, pilot, fixed cost, blocks),
//!   written once; [`program`]: that of a WASI program;
//! - [`compare`]: variants in interleaved rounds; [`compare_program`]: those
//!   of programs, an iteration each;
//! - [`callgrind`]: the Callgrind pass (run under Valgrind: the counts of
//!   the machine code per op, or per program phase);
//! - [`counters`]: the hardware-counter pass (the CPU's counts of the timed
//!   code per op);
//! - [`profile`]: the profiling pass (where the time goes).

pub mod calibrate;
pub mod callgrind;
pub mod compare;
pub mod compare_program;
pub mod counters;
pub mod emitter;
pub mod profile;
pub mod program;
pub mod rows;
pub mod sequence;
pub mod session;
pub mod start;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};

use crate::benchmark::progress::{Call, Progress, Step};
use crate::benchmark::protocol::{Event, Job, RowJob, Task, WorkerPlan};
use crate::benchmark::worker::compare::{Comparison, Pace, pace_warmup};
use crate::benchmark::worker::emitter::Emitter;
use crate::benchmark::worker::session::{Session, on_measuring_thread};
use crate::guest::Contract;
use crate::guest::runtime::wasmtime::program::Program;
use crate::results::{Row, RowProfile};
use crate::util::bytes::hex;

/// Fault injection for the end-to-end tests: a worker given this variable
/// aborts (SIGABRT) when it comes to the row of that name, as a worker whose
/// guest brought the process down would.
pub const ABORT_ON: &str = "WASM_BENCH_WORKER_ABORT_ON";

/// `host worker`: read the job, measure, report.
pub fn serve() -> Result<()> {
    let emitter = Emitter::channel()?;
    let job: Job =
        serde_json::from_reader(std::io::stdin().lock()).context("reading the worker's job")?;
    on_measuring_thread(|| {
        let files: BTreeSet<(PathBuf, usize)> = job
            .task
            .rows()
            .iter()
            .map(|r| (r.path.clone(), r.engine_set))
            .collect();
        let files: Vec<(PathBuf, usize)> = files.into_iter().collect();
        let session = match &job.task {
            Task::Callgrind { .. } => {
                callgrind::steady_allocator();
                Session::uncalibrated(&job.plan, &files)?
            }
            Task::Output(_) => Session::uncalibrated(&job.plan, &files)?,
            _ => {
                crate::platform::memory::hand_back_freed_memory();
                Session::new(&job.plan, &files)?
            }
        };
        emitter.send(&Event::Ready {
            found: session.found(&job.plan),
        });
        take_task(&job.plan, &job.task, &session, &emitter)
    })
}

/// Do `task` with `session`, every row's outcome sent as it comes.
fn take_task(plan: &WorkerPlan, task: &Task, session: &Session, emitter: &Emitter) -> Result<()> {
    match task {
        Task::Rows(jobs) => {
            let abort_on = std::env::var_os(ABORT_ON);
            each_row(jobs, emitter, Step::Warmup, |job| {
                if abort_on.as_deref() == Some(job.row.name.as_ref()) {
                    std::process::abort();
                }
                let measured = rows::measure_row(plan, session, job, emitter)?;
                Ok(Event::Measured {
                    row: job.index,
                    measured,
                })
            });
        }
        Task::Callgrind { rows, folder } => {
            let mut dumps = callgrind::Dumps::new(folder)?;
            callgrind::prepare_worker()?;
            each_row(rows, emitter, Step::Sampling, |job| {
                let guest = session.file(&job.row)?;
                let counted =
                    callgrind::count_row(plan, session, guest, &job.row, &mut dumps, emitter)?;
                Ok(Event::Counted {
                    row: job.index,
                    per_op: counted.per_op,
                    instantiate: counted.instantiate,
                })
            });
        }
        Task::Profile {
            rows,
            duration,
            interval,
            folder,
        } => each_row(rows, emitter, Step::Sampling, |job| {
            let profile = profile_row(plan, session, job, (*duration, *interval), folder, emitter)?;
            Ok(Event::Profiled {
                row: job.index,
                profile,
            })
        }),
        Task::Output(rows) => each_row(rows, emitter, Step::Sampling, |job| {
            let stdout = output(plan, session, &job.row, emitter)?;
            Ok(Event::Output {
                row: job.index,
                stdout: hex(&stdout),
            })
        }),
        Task::Compare {
            variants,
            count,
            rounds,
            offset,
            fuel,
            budget,
            least,
        } => {
            let task = Comparison {
                variants,
                count: *count,
                rounds: *rounds,
                offset: *offset,
                fuel: *fuel,
                pace: Pace::new(*rounds, *budget, *least),
            };
            let plan = &pace_warmup(plan, *budget);
            // The variants are all programs or none (the parent checked).
            let programs = variants.first().map(|row| session.file(row));
            let compared = match programs {
                Some(Ok(w)) if matches!(w.contract, Contract::Program { .. }) => {
                    compare_program::compare(plan, session, &task, emitter)
                }
                _ => compare::compare(plan, session, &task, emitter),
            };
            match compared {
                Ok(event) => emitter.send(&event),
                Err((row, e)) => emitter.finish_row(row, Err(e)),
            }
        }
    }
    Ok(())
}

/// Each row of `jobs` in turn: told as entering `step`, then `f`'s event or
/// its failure sent.
fn each_row(
    jobs: &[RowJob],
    emitter: &Emitter,
    step: Step,
    mut f: impl FnMut(&RowJob) -> Result<Event>,
) {
    for job in jobs {
        emitter.set_row(job.index);
        emitter.step(&job.row.name, step);
        emitter.finish_row(job.index, f(job));
    }
}

/// What the program of `row` writes to stdout in one run under wasmtime's
/// compiled code, told to `progress` as a call (the parent holds it to
/// `--timeout`).
fn output(
    plan: &WorkerPlan,
    session: &Session,
    row: &Row,
    progress: &dyn Progress,
) -> Result<Vec<u8>> {
    let guest = session.file(row)?;
    let code = guest
        .code
        .as_ref()
        .context("no compiled code: a program's output is taken under wasmtime")?;
    let program = Program::new(&row.path, code, &plan.grants, session.limits)?;
    progress.calling(Call::Start);
    program.stdout_of_one_run(session.seeds.first())
}

/// Profile one row for `duration`, sampling every `interval` (the `timing`),
/// and write its profile into `folder`.
fn profile_row(
    plan: &WorkerPlan,
    session: &Session,
    job: &RowJob,
    (duration, interval): (Duration, Duration),
    folder: &Path,
    progress: &dyn Progress,
) -> Result<RowProfile> {
    let row = &job.row;
    let guest = session.file(row)?;
    let profiled = profile::profile_row(plan, session, guest, row, duration, interval, progress)?;
    let path = profile::write(folder, &row.name, &profiled)?;
    let (samples, functions) = crate::analysis::profile::weights(&profiled.json)?;
    Ok(RowProfile {
        name: row.name.clone().into(),
        path: Some(path.display().to_string().into()),
        error: None,
        samples,
        functions,
    })
}
