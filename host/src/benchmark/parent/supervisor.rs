//! The parent's side of a worker process: start it (the same binary, `host
//! worker`), hand it its job, read its events on their private channel
//! ([`crate::benchmark::parent::channel`]), and contain it.
//!
//! Containment is what makes the sandbox free in the timed code: no epoch
//! interruption check, no fuel, nothing of the harness is compiled into it. Instead:
//! - a guest call that outlives `--timeout` (no event for that long after
//!   the worker said it was about to call the guest) gets the worker
//!   killed;
//! - a worker whose resident memory grows past `--max-memory` plus
//!   [`HOST_MEMORY`] for the host itself is killed (the worker's own
//!   `ResourceLimiter` refuses growth first, as a rule);
//! - a worker that dies (a signal, an abort, a native stack overflow, an
//!   exit) is reported with its cause and the last lines it wrote on stdout
//!   or stderr; one that closes its event channel has
//!   [`EXIT_DEADLINE`] to exit, and one whose channel carries what is not
//!   an event is killed: the parent waits on a worker with a deadline only,
//!   and what a worker leaves running in its process group is killed when
//!   it exits;
//! - its scratch files (its `TMPDIR`) are in a folder the parent made and
//!   removes when the worker is gone, killed or not;
//! - Ctrl-C, SIGTERM or SIGHUP to the parent kills it at once;
//! - it dies with the parent: it is started with `PR_SET_PDEATHSIG` set to
//!   SIGKILL, so a parent killed by SIGKILL leaves no worker spinning in a
//!   guest call. It leads a process group of its own, which the terminal's
//!   Ctrl-C does not reach (the parent ends it) and which a kill ends whole.
//!
//! What the caller does with a failure (fail the row, start another worker
//! for the rest) is [`crate::benchmark::parent::driver`]'s. [`Subprocesses`]
//! is the real [`Executor`].

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use crate::benchmark::parent::channel::{self, LogTail};
use crate::benchmark::parent::executor::{Executor, Next, WorkerProcess, Wrapper};
use crate::benchmark::protocol::{Event, Job};
use crate::guest::sandbox;
use crate::util::bytes::format_bytes;
use crate::util::fs::read_system_text;

/// Memory the host itself may use in a worker beyond `--max-memory`:
/// compiled code, the runtime, buffers.
pub const HOST_MEMORY: u64 = 512 << 20;
/// How often the parent looks at the worker while waiting for an event.
const POLL: Duration = Duration::from_millis(20);
/// How long a worker that closed its event channel has to exit before it
/// is killed.
const EXIT_DEADLINE: Duration = Duration::from_secs(5);

/// Starts `host worker` processes of this binary.
pub struct Subprocesses;

impl Executor for Subprocesses {
    fn start(&self, job: &Job, wrapper: Option<&Wrapper>) -> Result<Box<dyn WorkerProcess>> {
        Ok(Box::new(Worker::start(job, wrapper)?))
    }

    fn interrupted(&self) -> bool {
        sandbox::interrupted()
    }
}

/// A running worker.
pub struct Worker {
    child: Child,
    events: Receiver<Result<Event, String>>,
    log: LogTail,
    /// Closed once the log reader has read the worker's last line.
    log_done: Receiver<()>,
    memory_cap: u64,
    /// The worker's scratch folder (its `TMPDIR`): the parent's, removed
    /// when the worker is gone, whatever its end.
    _scratch: tempfile::TempDir,
}

/// The running process's own executable image (Linux).
const OWN_IMAGE: &str = "/proc/self/exe";

impl Worker {
    /// Start a worker on `job`, under `wrapper` (a program and its
    /// arguments, such as Valgrind) when given.
    pub fn start(job: &Job, wrapper: Option<&Wrapper>) -> Result<Self> {
        let mut command = match wrapper {
            Some((program, args)) => {
                let exe = std::env::current_exe().context("locating the host binary")?;
                let mut command = Command::new(program);
                command.args(args).arg(exe);
                command
            }
            // The parent's own image, as the forked child sees it: the very
            // code of the parent, even when the file was replaced (a
            // rebuild, an install) during a long run.
            None if Path::new(OWN_IMAGE).exists() => Command::new(OWN_IMAGE),
            None => Command::new(std::env::current_exe().context("locating the host binary")?),
        };
        die_with_parent(&mut command);
        let scratch = tempfile::Builder::new()
            .prefix("wasm-bench-worker.")
            .tempdir()
            .context("making a worker's scratch folder")?;
        let (events_read, events_write) = channel::pipe()?;
        let (log_read, log_write) = channel::pipe()?;
        let passed = channel::pass_events(&mut command, &events_write)?;
        command
            .arg("worker")
            .env("TMPDIR", scratch.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::from(log_write.try_clone()?))
            .stderr(Stdio::from(log_write));
        let spawned = command.spawn().context("starting a worker process");
        // The parent keeps no write end: the pipes close when the worker's
        // last copy does.
        drop((command, passed, events_write));
        let mut child = spawned?;
        let input = serde_json::to_vec(&job.for_worker()).context("writing the worker's job")?;
        if let Some(mut stdin) = child.stdin.take() {
            // A worker that dies at once shows up as its exit below.
            let _ = stdin.write_all(&input);
        }
        let (send, events) = mpsc::channel();
        std::thread::spawn(move || channel::read_events(events_read, &send));
        let log = LogTail::default();
        let (log_closed, log_done) = mpsc::channel::<()>();
        let kept = log.clone();
        std::thread::spawn(move || {
            // Dropped when the reader ends: the worker's log closed.
            let _closed = log_closed;
            kept.drain(log_read);
        });
        // Valgrind keeps its own copy of the code and its shadow state.
        let wrapped = if wrapper.is_some() {
            HOST_MEMORY * 4
        } else {
            0
        };
        Ok(Worker {
            child,
            events,
            log,
            log_done,
            memory_cap: job
                .plan
                .max_memory_bytes
                .saturating_add(HOST_MEMORY + wrapped),
            _scratch: scratch,
        })
    }

    /// Kill the worker, and anything it started, and reap it.
    pub fn kill(&mut self) {
        // Not reaped yet, so its id still names its process group.
        self.kill_group();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGKILL to the worker's process group (not reaped yet, the worker's
    /// id still names it).
    fn kill_group(&self) {
        if let Ok(group) = libc::pid_t::try_from(self.child.id()) {
            let _ = killpg(Pid::from_raw(group), Signal::SIGKILL);
        }
    }

    /// The worker closed its event channel: its exit status, waited for at
    /// most [`EXIT_DEADLINE`] (then it is killed), and the last lines of
    /// its log.
    fn ended(&mut self) -> Next {
        let since = Instant::now();
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if since.elapsed() < EXIT_DEADLINE => std::thread::sleep(POLL),
                Ok(None) => {
                    self.kill();
                    return Next::Broken(format!(
                        "the worker closed its event channel but did not exit within {}: killed",
                        humantime::format_duration(EXIT_DEADLINE)
                    ));
                }
                Err(_) => break None,
            }
        };
        // What the worker left running (a runtime's process, what that
        // started) ends with it: its process group, whose id no new
        // process takes while a member of it lives.
        self.kill_group();
        // Let the log reader take the last lines: it ends when the
        // worker's stdout and stderr close (at once, as a rule; at most
        // POLL when something else still holds them).
        let _ = self.log_done.recv_timeout(POLL);
        Next::Ended {
            status,
            stderr: self.log.text(),
        }
    }
}

impl WorkerProcess for Worker {
    fn next(&mut self, deadline: Option<Duration>) -> Next {
        let since = Instant::now();
        loop {
            if sandbox::interrupted() {
                self.kill();
                return Next::Interrupted;
            }
            match self.events.recv_timeout(POLL) {
                Ok(Ok(event)) => return Next::Event(Box::new(event)),
                Ok(Err(e)) => {
                    self.kill();
                    return Next::Broken(format!("the worker's event channel broke: {e}; killed"));
                }
                Err(RecvTimeoutError::Disconnected) => return self.ended(),
                Err(RecvTimeoutError::Timeout) => {}
            }
            if let Some(resident) = resident_bytes(self.child.id())
                && resident > self.memory_cap
            {
                self.kill();
                return Next::Memory {
                    resident,
                    cap: self.memory_cap,
                };
            }
            if deadline.is_some_and(|d| since.elapsed() > d) {
                self.kill();
                return Next::TimedOut;
            }
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.kill();
        }
    }
}

/// Make the process `command` starts a process group of its own that gets
/// SIGKILL when the thread that started it ends (the schedulers start every
/// worker from the main thread: its end is the parent's). The death signal
/// outlives the `exec` of the worker, or of Valgrind, which runs the guest
/// in the process it was started as; `getppid` after `prctl` closes the
/// window in which the parent died before the death signal was armed.
#[cfg(target_os = "linux")]
fn die_with_parent(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    let parent = libc::pid_t::try_from(std::process::id()).unwrap_or(0);
    let arm = move || {
        // SAFETY: setpgid, prctl and getppid are async-signal-safe and
        // touch no memory of the process.
        unsafe {
            if libc::setpgid(0, 0) != 0 || libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
        }
        Ok(())
    };
    // SAFETY: the closure calls only async-signal-safe functions and
    // allocates nothing (an error of a raw code is no allocation).
    unsafe { command.pre_exec(arm) };
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
}

/// Why a worker ended, in plain words: the signal or the exit code, and the
/// last words on its stdout and stderr (`output`).
pub fn describe_end(status: Option<ExitStatus>, output: &str) -> String {
    let how = match status {
        None => "ended".to_string(),
        Some(status) => match (status.code(), signal_of(&status)) {
            (Some(code), _) => format!("exited with code {code}"),
            (None, Some(signal)) => {
                format!("was killed by signal {signal} ({})", signal_name(signal))
            }
            (None, None) => "ended".to_string(),
        },
    };
    match output.is_empty() {
        true => format!("the worker process {how}"),
        false => format!("the worker process {how} (its last output: {output})"),
    }
}

/// What killing for memory means, in plain words.
pub fn describe_memory(resident: u64, cap: u64) -> String {
    format!(
        "the worker's memory grew to {} past {} (--max-memory plus {} for the host): killed",
        format_bytes(resident),
        format_bytes(cap),
        format_bytes(HOST_MEMORY)
    )
}

#[cfg(unix)]
fn signal_of(status: &ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

#[cfg(not(unix))]
fn signal_of(_status: &ExitStatus) -> Option<i32> {
    None
}

fn signal_name(signal: i32) -> &'static str {
    Signal::try_from(signal).map_or("a signal", Signal::as_str)
}

/// The resident memory of process `pid`, in bytes, when the OS says.
fn resident_bytes(pid: u32) -> Option<u64> {
    let statm = read_system_text(format!("/proc/{pid}/statm"))?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages.saturating_mul(u64::try_from(page).ok()?))
}

#[cfg(test)]
mod tests {
    use super::{ExitStatus, describe_end};

    #[cfg(unix)]
    #[test]
    fn a_signal_is_named() {
        use std::os::unix::process::ExitStatusExt;
        let killed = |signal| describe_end(Some(ExitStatus::from_raw(signal)), "");
        assert!(killed(11).contains("signal 11 (SIGSEGV)"), "{}", killed(11));
        assert!(
            killed(100).contains("signal 100 (a signal)"),
            "{}",
            killed(100)
        );
    }
}
