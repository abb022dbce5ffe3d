//! The regression gate's own error rates on this machine, from runs kept
//! here as a CI job keeps them: `same_runs` A/A runs of xor and chain100
//! (`host run --metric instructions`, each kept in a temporary store), and
//! six runs of chain100 then six of chain101 (1% more work) under one
//! name. For every A/A series, time and exact counts: whether
//! `--fail-on-regression` fails it as measured, how often it fails on
//! reorderings of its runs (the false-alarm rate), and the smallest
//! slow-down injected into their second half that it catches nine times
//! in ten ([`error_rates`]); for the known step, whether it is caught.

use std::path::Path;

use anyhow::{Context, Result};

use super::runs::run_host;
use crate::analysis::gate::{GateCheck, KnownStep, SeriesRates, error_rates, fails};
use crate::analysis::trend::{Series, series};
use crate::options::default_store_folder;
use crate::output::escape::terminal;
use crate::output::history::gate_figures_lines;
use crate::results::RunReport;
use crate::results::store::{HISTORY_BUDGET, MachineId, Store};

/// The flags of every run kept: short, as a CI job's.
const RUN_FLAGS: [&str; 6] = [
    "--metric",
    "instructions",
    "--quiet",
    "--time",
    "300ms",
    "--warmup",
];

/// Keep `runs` runs of `files` in `store`.
fn keep(store: &Path, files: &[&Path], runs: usize) -> Result<()> {
    let store = store.to_string_lossy().into_owned();
    for _ in 0..runs {
        let flags: Vec<&str> = RUN_FLAGS
            .iter()
            .copied()
            .chain(["50ms", "--store", &store])
            .collect();
        run_host::<RunReport>(&["run"], files, &flags)?;
    }
    Ok(())
}

/// The series kept in `store`, and the machine of its newest run.
fn kept_series(store: &Path) -> (Vec<Series>, Option<MachineId>) {
    let (runs, _) = Store::new(store).newest(usize::MAX, 0, HISTORY_BUDGET);
    (series(&runs, &[]), runs.last().map(|r| r.machine.clone()))
}

/// Measure the gate's error rates at `threshold_pct` with `same_runs` A/A
/// runs of `xor` and `chain100`, and the known step to `chain101`.
pub fn gate(
    xor: &Path,
    chain100: &Path,
    chain101: &Path,
    same_runs: usize,
    threshold_pct: f64,
) -> Result<GateCheck> {
    let folder = tempfile::tempdir().context("a temporary store")?;
    let same = folder.path().join("same");
    keep(&same, &[xor, chain100], same_runs)?;
    let (same_series, machine) = kept_series(&same);
    let rates = same_series
        .iter()
        .map(|s| {
            let values: Vec<f64> = s.points.iter().map(|p| p.value).collect();
            SeriesRates {
                series: s.title(),
                measure: s.measure.describe().to_string(),
                noise: s.noise,
                rates: error_rates(&values, s.measure.deterministic(), threshold_pct, 1),
            }
        })
        .collect();
    let step = folder.path().join("step");
    let w = folder.path().join("w.wasm");
    for file in [chain100, chain101] {
        std::fs::copy(file, &w).with_context(|| format!("copying {}", file.display()))?;
        keep(&step, &[&w], 6)?;
    }
    let known_step = kept_series(&step)
        .0
        .iter()
        .map(|s| {
            let values: Vec<f64> = s.points.iter().map(|p| p.value).collect();
            KnownStep {
                measure: s.measure.describe().to_string(),
                caught: fails(&values, s.measure.deterministic(), threshold_pct),
                ratio: s.changes.last().map(|c| c.ratio),
            }
        })
        .collect();
    let check = GateCheck {
        threshold_pct,
        unix_ms: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64),
        machine,
        series: rates,
        known_step,
    };
    print(&check);
    if let Some(folder) = default_store_folder() {
        match Store::new(&folder).keep_gate_figures(&check) {
            Ok(()) => println!(
                "  kept in the store {}: `host history` quotes them",
                terminal(&folder.display().to_string())
            ),
            Err(e) => eprintln!("warning: the gate's figures were not kept: {e:#}"),
        }
    }
    Ok(check)
}

/// The figures on the terminal.
fn print(check: &GateCheck) {
    for line in gate_figures_lines(check) {
        println!("{}", terminal(&line));
    }
}
