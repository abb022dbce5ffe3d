//! The run history's bookkeeping in a run: what a row is filed under
//! ([`subject`], and the [`Machine`]: the CPU and which epochs its median
//! stands on), the drift the user asks to forget (`--forget-drift`), and
//! the drift measured over the earlier runs of it kept in the store
//! ([`crate::results::store`], read through [`crate::results::history`];
//! not with `--no-store`). The run itself is kept by `host run` at its
//! end.

use crate::analysis::drift;
use crate::analysis::estimate::{Estimate, Location};
use crate::analysis::summary::Drift;
use crate::guest::load::GuestFile;
use crate::options::{ForgetDrift, Headline, Settings};
use crate::results::Row;
use crate::results::history::{self, Entry, Machine, Subject};
use crate::results::store::{DRIFT_BUDGET, Forget, Forgotten, KeptRun, Store};
use crate::util::error::one_line;

/// What `row` of `guest` measures, as the run history names it: the
/// file's contents, the benchmark, the size, the engine, the metric,
/// whether huge pages were asked for, and the measuring plan (a run of
/// five samples drifts more than one of the precision rule).
pub fn subject(settings: &Settings, row: &Row, guest: &GuestFile) -> String {
    Subject::new(
        &guest.bytes,
        &row.benchmark,
        row.size,
        (
            settings.engines.get(row.engine_set),
            settings.metric,
            settings.huge_pages,
        ),
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

/// What `--forget-drift` writes into the store: a mark per subject of
/// the rows measured now, or one for every subject on `cpu`.
fn marks(what: ForgetDrift, cpu: &str, subjects: &[&str]) -> Vec<Forget> {
    let until_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let mark = |subject: Option<&str>| Forget {
        cpu: cpu.into(),
        subject: subject.map(str::to_string),
        until_ms,
    };
    match what {
        ForgetDrift::Machine => vec![mark(None)],
        ForgetDrift::Rows => subjects.iter().map(|s| mark(Some(s))).collect(),
    }
}

/// The most kept runs of the last day read for the drift.
pub const MAX_DRIFT_RUNS: usize = 300;

/// The kept runs the drift between runs reads: the newest
/// [`MAX_DRIFT_RUNS`] of the last [`drift::MAX_AGE_S`], within
/// [`DRIFT_BUDGET`] bytes, oldest first, with what reading refused.
pub fn drift_window(store: &Store) -> (Vec<KeptRun>, Vec<String>) {
    let since_ms = now_unix().saturating_sub(drift::MAX_AGE_S) * 1000;
    store.newest(MAX_DRIFT_RUNS, since_ms, DRIFT_BUDGET)
}

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
    /// `settings` names, after forgetting what `--forget-drift` asks of
    /// the rows of `subjects`; none with `--no-store`.
    pub fn load(settings: &Settings, subjects: &[&str]) -> Self {
        let cpu = crate::platform::cpu::cpu_model().unwrap_or_default();
        let folder = settings
            .store
            .folder
            .as_ref()
            .filter(|_| settings.store.read);
        let (runs, forgotten, mut notes) = match folder {
            Some(folder) => {
                let store = Store::new(folder);
                let mut notes = Vec::new();
                if let Some(what) = settings.store.forget
                    && let Err(e) = store.forget(marks(what, &cpu, subjects), now_unix() * 1000)
                {
                    notes.push(format!("--forget-drift: {}", one_line(&e)));
                }
                let forgotten = store.forgotten().unwrap_or_else(|e| {
                    notes.push(format!("the store: {}", one_line(&e)));
                    Forgotten::default()
                });
                let (runs, read) = drift_window(&store);
                notes.extend(read);
                (runs, forgotten, notes)
            }
            None => (Vec::new(), Forgotten::default(), Vec::new()),
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
            stored: folder.is_some(),
            entries: history::entries(&runs, &forgotten),
            notes,
            cpu,
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

    /// The drift of a row: `stated_pct` (`--drift`), what the earlier
    /// runs of `subject` on `machine` kept say (their drift, how many, the
    /// range of their processes), and whether the machine is busy.
    pub fn drift(
        &self,
        stated_pct: f64,
        machine: &str,
        subject: Option<&str>,
        busy_machine: bool,
    ) -> Drift {
        let earlier = match (self.stored, subject) {
            (true, Some(subject)) => {
                drift::earlier_runs(&self.entries, machine, subject, now_unix())
            }
            _ => drift::EarlierRuns::default(),
        };
        Drift {
            stated_pct,
            measured: earlier.drift,
            read: self.stored,
            earlier_runs: earlier.runs,
            earlier_range_ns: earlier.range_ns,
            busy_machine,
            shown: Headline::default(),
        }
    }

    /// What reading the store refused or skipped.
    pub fn notes(self) -> Vec<String> {
        self.notes
    }
}
