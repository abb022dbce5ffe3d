//! What the benchmark stage tells as it goes: the [`Progress`] it reports to
//! (which workload, which stage, the current estimate, the time left). It is
//! told between samples, never inside the timed region. The terminal display
//! that listens is [`crate::output::progress`]'s.

use std::time::Duration;

/// What the harness is doing to a workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Compile,
    Warmup,
    Pilot,
    Baseline,
    Sampling,
}

impl Stage {
    pub fn name(self) -> &'static str {
        match self {
            Stage::Compile => "compile",
            Stage::Warmup => "warm-up",
            Stage::Pilot => "pilot",
            Stage::Baseline => "baseline",
            Stage::Sampling => "sampling",
        }
    }
}

/// Receives progress; every method has a do-nothing default.
pub trait Progress: Sync {
    /// How many rows there are to measure.
    fn rows(&self, _rows: usize) {}
    /// `what` entered `stage`.
    fn stage(&self, _what: &str, _stage: Stage) {}
    /// The current estimate of `what` while sampling.
    fn estimate(&self, _what: &str, _ns_per_op: f64, _err_pct: f64, _left: Option<Duration>) {}
    /// One row is finished.
    fn row_done(&self) {}
    /// Everything is finished: clear the display.
    fn finish(&self) {}
    /// Run `print` (which writes to the terminal) with the display hidden.
    fn suspend(&self, print: &mut dyn FnMut()) {
        print();
    }
}

/// Shows nothing.
pub struct Silent;

impl Progress for Silent {}
