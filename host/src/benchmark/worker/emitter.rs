//! The worker's voice: [`Emitter`] writes [`Event`]s as JSON lines on the
//! private event channel the parent made ([`EVENTS_FD`]), flushed at once,
//! naming the row in progress; as the worker's [`Progress`], it turns
//! steps, calls and estimates into events.

use std::fs::File;
use std::io::Write;
use std::os::fd::FromRawFd;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Result, bail};

use crate::benchmark::progress::{Call, Progress, Step};
use crate::benchmark::protocol::{EVENTS_FD, Event};
use crate::util::error::one_line;

/// Writes events on the event channel, naming the row in progress.
pub struct Emitter {
    out: Mutex<File>,
    row: AtomicUsize,
}

impl Emitter {
    /// An emitter on the event channel the parent passed at [`EVENTS_FD`],
    /// at row 0. The descriptor is closed on `exec` from here on, so that
    /// nothing the worker might start inherits it. A worker started by
    /// anything but the host has no such pipe: an error.
    pub fn channel() -> Result<Self> {
        // SAFETY: fstat writes into the zeroed buffer it is given.
        let mut stat: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above; fcntl on a descriptor touches no memory.
        let piped = unsafe {
            libc::fstat(EVENTS_FD, &mut stat) == 0
                && stat.st_mode & libc::S_IFMT == libc::S_IFIFO
                && libc::fcntl(EVENTS_FD, libc::F_SETFD, libc::FD_CLOEXEC) == 0
        };
        if !piped {
            bail!(
                "descriptor {EVENTS_FD} is not a pipe: `host worker` is started by the host, which passes its event channel there"
            );
        }
        // SAFETY: the descriptor is open, a pipe, and taken here once.
        let out = unsafe { File::from_raw_fd(EVENTS_FD) };
        Ok(Emitter {
            out: Mutex::new(out),
            row: AtomicUsize::new(0),
        })
    }

    /// Send `event`; a worker whose parent is gone exits.
    pub fn send(&self, event: &Event) {
        let Ok(mut line) = serde_json::to_vec(event) else {
            return;
        };
        line.push(b'\n');
        let written = match self.out.lock() {
            Ok(mut out) => out.write_all(&line),
            Err(_) => return,
        };
        if written.is_err() {
            // The parent is gone: nobody will read the results.
            std::process::exit(1);
        }
    }

    /// From now on, what is told is of row `row`.
    pub fn set_row(&self, row: usize) {
        self.row.store(row, Ordering::Relaxed);
    }

    fn row(&self) -> usize {
        self.row.load(Ordering::Relaxed)
    }

    /// Send what row `row` gave: its event, or its failure, the error's
    /// chain in one line (the text crosses to the parent).
    pub fn finish_row(&self, row: usize, result: Result<Event>) {
        self.send(&result.unwrap_or_else(|e| Event::Failed {
            row,
            error: one_line(&e),
            unsupported: crate::guest::lacking(&e),
        }));
    }
}

impl Progress for Emitter {
    fn step(&self, _what: &str, step: Step) {
        self.send(&Event::Step {
            row: self.row(),
            step,
        });
    }
    fn calling(&self, call: Call) {
        self.send(&Event::Calling {
            row: self.row(),
            call,
        });
    }
    fn estimate(&self, _what: &str, ns_per_op: f64, err_pct: f64) {
        self.send(&Event::Estimate {
            row: self.row(),
            ns_per_op,
            err_pct,
        });
    }
}
