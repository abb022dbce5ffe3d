//! The check of `host doctor` that reads the store of kept runs: how many
//! earlier runs on this CPU shape today's intervals (the drift between runs,
//! [`crate::analysis::drift`]), and how to forget them.

use crate::analysis::drift::{MAX_AGE_S, MIN_RUNS};
use crate::benchmark::parent::history::MAX_DRIFT_RUNS;
use crate::command::doctor::finding::{DRIFT, Finding};
use crate::options::default_store_folder;
use crate::results::history::{self, Entry, Machine};
use crate::results::store::{DRIFT_BUDGET, Store};

/// The earlier runs of the default store that widen today's intervals.
pub(super) fn drift() -> Finding {
    let Some(folder) = default_store_folder() else {
        return Finding::not_exposed(DRIFT, "no store (no home folder, no $WASM_BENCH_STORE)");
    };
    let store = Store::new(&folder);
    let now_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let since_ms = now_s.saturating_sub(MAX_AGE_S) * 1000;
    let (runs, _) = store.newest(MAX_DRIFT_RUNS, since_ms, DRIFT_BUDGET);
    let forgotten = store.forgotten().unwrap_or_default();
    let busy = runs.iter().filter(|r| r.busy_machine).count();
    let cpu = crate::platform::cpu::cpu_model().unwrap_or_default();
    let entries = history::entries(&runs, &forgotten);
    let (rows, subjects) = count(&entries, &cpu);
    Finding::info(
        DRIFT,
        format!(
            "{} holds {rows} row(s) of the last day on this CPU that shape today's intervals ({subjects} benchmark(s) with the {MIN_RUNS} earlier runs a drift needs; {busy} run(s) of a busy machine left out)",
            folder.display()
        ),
    )
    .fix("forget them with `host run --forget-drift machine ...`, or measure without them with `--no-store`")
}

/// How many of `entries` ran on `cpu`, and how many subjects among them
/// have [`MIN_RUNS`] runs or more.
fn count(entries: &[Entry], cpu: &str) -> (usize, usize) {
    let machines: Vec<String> = [true, false]
        .map(|undisturbed| {
            Machine {
                cpu: cpu.into(),
                undisturbed,
            }
            .key()
        })
        .to_vec();
    let mut per_subject: std::collections::HashMap<&str, usize> = Default::default();
    for e in entries.iter().filter(|e| machines.contains(&e.machine)) {
        *per_subject.entry(e.subject.as_str()).or_default() += 1;
    }
    let rows = per_subject.values().sum();
    let subjects = per_subject.values().filter(|&&n| n >= MIN_RUNS).count();
    (rows, subjects)
}
