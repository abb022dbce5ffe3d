//! The worker's voice: [`Emitter`] writes [`Event`]s on stdout as JSON
//! lines, flushed at once, naming the row in progress; as the worker's
//! [`Progress`], it turns steps, calls and estimates into events.

use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Result;

use crate::benchmark::progress::{Call, Progress, Step};
use crate::benchmark::protocol::Event;
use crate::util::error::one_line;

/// Writes events on stdout, naming the row in progress.
pub struct Emitter {
    out: Mutex<std::io::Stdout>,
    row: AtomicUsize,
}

impl Emitter {
    /// An emitter on this process's stdout, at row 0.
    pub fn stdout() -> Self {
        Emitter {
            out: Mutex::new(std::io::stdout()),
            row: AtomicUsize::new(0),
        }
    }

    /// Send `event`; a worker whose parent is gone exits.
    pub fn send(&self, event: &Event) {
        let Ok(mut line) = serde_json::to_vec(event) else {
            return;
        };
        line.push(b'\n');
        let written = match self.out.lock() {
            Ok(mut out) => out.write_all(&line).and_then(|()| out.flush()),
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
