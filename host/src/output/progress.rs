//! Progress while measuring: which workload, which step of the method, the
//! current estimate and its err%, and how many rows are finished; a
//! workload's name with its control characters escaped.
//!
//! The benchmark stage reports to a [`Progress`]; [`Bar`] draws it on stderr
//! with indicatif (only when stderr is a terminal and `--quiet` is not
//! given), [`crate::benchmark::progress::Silent`] ignores it. Drawing
//! happens in the parent process as the workers' events arrive, never in a
//! worker, so nothing is drawn on the measuring core; no drawing thread is
//! started either.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::benchmark::progress::{Progress, Step};
use crate::output::escape::terminal;
use crate::output::units::format_ns;

/// A progress line on stderr.
pub struct Bar {
    bar: ProgressBar,
}

impl Bar {
    /// A progress line, or `None` when stderr is not a terminal.
    pub fn new() -> Option<Self> {
        if !std::io::stderr().is_terminal() {
            return None;
        }
        let colour = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        let template = match colour {
            true => "{prefix:.bold} [{bar:20.cyan/blue}] {pos}/{len} {msg}",
            false => "{prefix} [{bar:20}] {pos}/{len} {msg}",
        };
        let style = ProgressStyle::with_template(template)
            .ok()?
            .progress_chars("=> ");
        // Redraws happen on our calls only: no ticker thread.
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr_with_hz(10));
        bar.set_style(style);
        Some(Bar { bar })
    }
}

impl Progress for Bar {
    fn rows(&self, rows: usize) {
        self.bar.set_length(rows as u64);
    }

    fn step(&self, what: &str, step: Step) {
        self.bar.set_prefix(terminal(what).into_owned());
        self.bar.set_message(step.name());
    }

    fn estimate(&self, what: &str, ns_per_op: f64, err_pct: f64) {
        self.bar.set_prefix(terminal(what).into_owned());
        self.bar
            .set_message(format!("sampling: {} ±{err_pct:.1}%", format_ns(ns_per_op)));
    }

    fn row_done(&self) {
        self.bar.inc(1);
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }

    fn suspend(&self, print: &mut dyn FnMut()) {
        self.bar.suspend(print);
    }
}
