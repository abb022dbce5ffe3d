//! What the benchmark stage tells as it goes: the [`Progress`] it reports to
//! (which workload, which stage, which guest call is about to begin, the
//! current estimate). It is told between samples, never inside the timed
//! region. In a worker process the listener sends it to the parent
//! ([`crate::benchmark::worker`]); in the parent, the terminal display
//! ([`crate::output::progress`]) listens.

use serde::{Deserialize, Serialize};

/// What the harness is doing to a workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

/// A guest call (or a round of calls with the same arguments) about to
/// begin: what the supervisor holds to `--timeout`, and names in its error
/// if the call never returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Call {
    /// Instantiating the workload (its start function runs).
    Instantiate,
    /// `setup(size)`.
    Setup { size: u64 },
    /// `run(count, seed)`.
    Run { count: u64 },
    /// A program's `_start` (one iteration).
    Start,
}

/// Receives progress; every method has a do-nothing default.
pub trait Progress: Sync {
    /// How many rows there are to measure.
    fn rows(&self, _rows: usize) {}
    /// `what` entered `stage`.
    fn stage(&self, _what: &str, _stage: Stage) {}
    /// A guest call is about to begin.
    fn calling(&self, _call: Call) {}
    /// The current estimate of `what` while sampling.
    fn estimate(&self, _what: &str, _ns_per_op: f64, _err_pct: f64) {}
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
