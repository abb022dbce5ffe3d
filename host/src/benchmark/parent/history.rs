//! The run history's bookkeeping in a run: what a row is filed under
//! ([`subject`], and the [`Machine`]: the CPU and which epochs its median
//! stands on), the drift measured over earlier runs of it, and the medians of this
//! run added and saved at its end (the store itself is
//! [`crate::results::history`]).

use std::path::PathBuf;

use crate::analysis::drift;
use crate::analysis::estimate::{Estimate, Location};
use crate::analysis::summary::Drift;
use crate::guest::load::Workload;
use crate::options::Settings;
use crate::results::Row;
use crate::results::history::{self, Entry, History, Machine, Subject};
use crate::util::error::one_line;

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

/// The run history as a run uses it: read before the first row, added to
/// as rows are reported, saved at the end.
pub struct RunHistory {
    /// Where it is kept; `None` without a compile cache (no history).
    path: Option<PathBuf>,
    history: History,
    /// The CPU model, the first half of every machine key.
    cpu: String,
    /// This run's rows: machine key, subject key, median.
    measured: Vec<(String, String, f64)>,
    /// What reading the history refused or skipped, said once.
    note: Option<String>,
}

impl RunHistory {
    /// The history of the cache folder `settings` names.
    pub fn load(settings: &Settings) -> Self {
        let path = settings.cache.as_deref().map(history::path);
        let (history, note) = path.as_deref().map(History::load).unwrap_or_default();
        RunHistory {
            history,
            note,
            path,
            cpu: crate::platform::cpu::cpu_model().unwrap_or_default(),
            measured: Vec::new(),
        }
    }

    /// The machine a row estimated so is filed under: the CPU, and which
    /// epochs its median stands on.
    pub fn machine(&self, estimate: &Estimate) -> String {
        Machine {
            cpu: self.cpu.clone(),
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
        let measured = match (&self.path, subject) {
            (Some(_), Some(subject)) => {
                drift::run_drift(&self.history.entries, machine, subject, now_unix())
            }
            _ => None,
        };
        Drift {
            stated_pct,
            measured,
            busy_machine,
        }
    }

    /// Keep a row's median, to add at the end of the run.
    pub fn record(&mut self, machine: String, subject: String, median_ns: f64) {
        self.measured.push((machine, subject, median_ns));
    }

    /// Add this run's rows and save; the warnings: what reading it refused
    /// or skipped, and whether it could not be saved.
    pub fn save(mut self) -> Vec<String> {
        let mut warnings: Vec<String> = self.note.take().into_iter().collect();
        let Some(path) = self.path.as_ref() else {
            return warnings;
        };
        if self.measured.is_empty() {
            return warnings;
        }
        let now = now_unix();
        for (machine, subject, median_ns) in self.measured {
            self.history.push(Entry {
                machine,
                subject,
                median_ns,
                unix_s: now,
            });
        }
        if let Err(error) = self.history.save(path) {
            warnings.push(format!(
                "the run history was not saved: {}",
                one_line(&error)
            ));
        }
        warnings
    }
}
