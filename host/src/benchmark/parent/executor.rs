//! The seam between the schedulers and the worker processes they start:
//! an [`Executor`] starts a worker on a job ([`Executor::start`]) and says
//! whether the user pressed Ctrl-C; a started worker is a [`WorkerProcess`]
//! that gives its events one at a time ([`Next`]). The real executor starts
//! `host worker` processes ([`crate::benchmark::parent::supervisor`]); the
//! schedulers' unit tests give them a fake that answers in-process.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

use anyhow::Result;

use crate::benchmark::protocol::{Event, Job};

/// A program and its arguments a worker is started under (Valgrind).
pub type Wrapper = (PathBuf, Vec<OsString>);

/// What waiting for a worker gave.
pub enum Next {
    Event(Box<Event>),
    /// The worker ended: its exit status and the last lines of its stdout
    /// and stderr.
    Ended {
        status: Option<ExitStatus>,
        stderr: String,
    },
    /// No event within the deadline: the worker was killed.
    TimedOut,
    /// Its memory grew past the cap: the worker was killed.
    Memory {
        resident: u64,
        cap: u64,
    },
    /// Ctrl-C: the worker was killed.
    Interrupted,
    /// The worker's event channel carried what is not an event, or it
    /// closed and the worker did not exit: why; the worker was killed.
    Broken(String),
}

/// Starts workers.
pub trait Executor {
    /// Start a worker on `job`, under `wrapper` when given.
    fn start(&self, job: &Job, wrapper: Option<&Wrapper>) -> Result<Box<dyn WorkerProcess>>;
    /// Whether the user pressed Ctrl-C.
    fn interrupted(&self) -> bool;
}

/// A started worker.
pub trait WorkerProcess {
    /// The next event, waiting at most `deadline` (none: as long as it
    /// takes). A worker that times out, outgrows its memory or is
    /// interrupted is killed before this returns.
    fn next(&mut self, deadline: Option<Duration>) -> Next;
}
