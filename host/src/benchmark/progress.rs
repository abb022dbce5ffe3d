//! What the benchmark stage tells as it goes: the [`Progress`] it reports to
//! (which workload, which step of the method, which guest call is about to
//! begin, the current estimate). It is told between samples, never inside
//! the timed region. In a worker process the listener sends it to the
//! parent as events ([`crate::benchmark::protocol::Event`]); in the parent,
//! the terminal display ([`crate::output::progress`]) listens.

use serde::{Deserialize, Serialize};

/// The step of the method the harness is taking with a workload (the pilot
/// is told as part of the warm-up, which it ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Step {
    Compile,
    Warmup,
    /// The fixed-cost pairs, 2·T(m) − T(2m).
    FixedCost,
    Sampling,
}

impl Step {
    /// The step in the words of the progress line.
    pub fn name(self) -> &'static str {
        match self {
            Step::Compile => "compile",
            Step::Warmup => "warm-up",
            Step::FixedCost => "fixed cost",
            Step::Sampling => "sampling",
        }
    }
}

/// A guest call (or a round of calls with the same arguments) about to
/// begin: what the parent holds to `--timeout`, and names in its error
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
    /// Loading an engine library: its constructors run.
    Load,
}

/// Receives progress; every method has a do-nothing default.
pub trait Progress: Sync {
    /// How many rows there are to measure.
    fn rows(&self, _rows: usize) {}
    /// `what` entered `step`.
    fn step(&self, _what: &str, _step: Step) {}
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
