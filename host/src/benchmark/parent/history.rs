//! The run history's bookkeeping in a run: what a row is filed under
//! ([`subject`], and the [`Machine`]: the CPU and which epochs its median
//! stands on), and the drift measured over the earlier runs of it kept in
//! the store ([`crate::results::store`], read through
//! [`crate::results::history`]). The run itself is kept by `host run` at
//! its end.

use crate::analysis::drift;
use crate::analysis::estimate::{Estimate, Location};
use crate::analysis::summary::Drift;
use crate::guest::load::Workload;
use crate::options::Settings;
use crate::results::Row;
use crate::results::history::{self, Entry, Machine, Subject};
use crate::results::store::{DRIFT_BUDGET, Store};

/// What `row` of `workload` measures, as the run history names it: the
/// file's contents, the benchmark, the size, the engine and the measuring
/// plan (a run of five samples drifts more than one of the precision rule).
pub fn subject(settings: &Settings, row: &Row, workload: &Workload) -> String {
    Subject::new(
        &workload.bytes,
        &row.benchmark,
        row.size,
        settings.engines.get(row.engine_set),
        (
            settings.stop,
            settings.processes,
            settings.count,
            settings.sample_time,
        ),
    )
    .key()
}

/// Seconds since the Unix epoch.
fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The most kept runs of the last day read for the drift.
pub const MAX_DRIFT_RUNS: usize = 300;

/// The run history as a run uses it: the kept runs of the last day, read
/// before the first row.
pub struct RunHistory {
    /// Whether there is a store to read.
    stored: bool,
    entries: Vec<Entry>,
    /// The CPU model, the first half of every machine key.
    cpu: String,
    /// What reading the store refused or skipped, said once.
    notes: Vec<String>,
}

impl RunHistory {
    /// The kept runs of the last [`drift::MAX_AGE_S`] in the store
    /// `settings` names.
    pub fn load(settings: &Settings) -> Self {
        let (runs, mut notes) = match &settings.store.folder {
            Some(folder) => {
                let since_ms = now_unix().saturating_sub(drift::MAX_AGE_S) * 1000;
                Store::new(folder).newest(MAX_DRIFT_RUNS, since_ms, DRIFT_BUDGET)
            }
            None => (Vec::new(), Vec::new()),
        };
        let absurd = history::absurd_medians(&runs);
        if absurd > 0 {
            notes.push(format!(
                "the store: {absurd} median{} per op that {} no time at all (not finite, subnormal, or outside -{:e}..{:e} ns) skipped",
                if absurd == 1 { "" } else { "s" },
                if absurd == 1 { "is" } else { "are" },
                history::MIN_MEDIAN_NS,
                history::MAX_MEDIAN_NS,
            ));
        }
        RunHistory {
            stored: settings.store.folder.is_some(),
            entries: history::entries(&runs),
            notes,
            cpu: crate::platform::cpu::cpu_model().unwrap_or_default(),
        }
    }

    /// The machine a row estimated so is filed under: the CPU, and which
    /// epochs its median stands on.
    pub fn machine(&self, estimate: &Estimate) -> String {
        Machine {
            cpu: self.cpu.clone().into(),
            undisturbed: matches!(estimate.location, Location::Undisturbed { .. }),
        }
        .key()
    }

    /// The drift of a row: `stated_pct` (`--drift`), the drift measured
    /// over earlier runs of `subject` on `machine`, when kept, and whether
    /// the machine is busy.
    pub fn drift(
        &self,
        stated_pct: f64,
        machine: &str,
        subject: Option<&str>,
        busy_machine: bool,
    ) -> Drift {
        let measured = match (self.stored, subject) {
            (true, Some(subject)) => drift::run_drift(&self.entries, machine, subject, now_unix()),
            _ => None,
        };
        Drift {
            stated_pct,
            measured,
            busy_machine,
        }
    }

    /// What reading the store refused or skipped.
    pub fn notes(self) -> Vec<String> {
        self.notes
    }
}
