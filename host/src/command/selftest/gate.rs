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
use serde::Serialize;

use super::runs::run_host;
use crate::analysis::gate::{ErrorRates, error_rates, fails};
use crate::analysis::trend::{Series, series};
use crate::output::escape::terminal;
use crate::results::RunReport;
use crate::results::store::{HISTORY_BUDGET, Store};

/// The flags of every run kept: short, as a CI job's.
const RUN_FLAGS: [&str; 6] = [
    "--metric",
    "instructions",
    "--quiet",
    "--time",
    "300ms",
    "--warmup",
];

/// The gate's figures of one series.
#[derive(Debug, Clone, Serialize)]
pub struct SeriesRates {
    pub series: String,
    pub measure: String,
    /// The relative sd of its runs (log scale); 0 for counts.
    pub noise: f64,
    #[serde(flatten)]
    pub rates: ErrorRates,
}

/// A known step, and whether the gate caught it.
#[derive(Debug, Clone, Serialize)]
pub struct KnownStep {
    pub measure: String,
    pub caught: bool,
    /// The newest change's ratio, when one was found.
    pub ratio: Option<f64>,
}

/// The gate section of the self-test.
#[derive(Debug, Clone, Serialize)]
pub struct GateCheck {
    pub threshold_pct: f64,
    pub series: Vec<SeriesRates>,
    pub known_step: Vec<KnownStep>,
}

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

/// The series kept in `store`.
fn kept_series(store: &Path) -> Vec<Series> {
    let (runs, _) = Store::new(store).newest(usize::MAX, 0, HISTORY_BUDGET);
    series(&runs, &[])
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
    let rates = kept_series(&same)
        .iter()
        .map(|s| {
            let values: Vec<f64> = s.points.iter().map(|p| p.value).collect();
            SeriesRates {
                series: terminal(&s.title()).into_owned(),
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
        series: rates,
        known_step,
    };
    print(&check);
    Ok(check)
}

/// The figures on the terminal.
fn print(check: &GateCheck) {
    println!(
        "gate: `host history --fail-on-regression {}` on runs kept on this machine",
        check.threshold_pct
    );
    for s in &check.series {
        let r = &s.rates;
        let step = r
            .step_9_in_10_pct
            .map_or_else(|| "none of up to 50%".to_string(), |p| format!("{p}%"));
        println!(
            "  {} ({}): {} A/A runs, noise {:.2}%; as measured: {}; false alarms {} of {} orderings ({:.1}%); slow-down caught 9 times in 10: {step}",
            s.series,
            s.measure,
            r.runs,
            100.0 * s.noise,
            if r.fails_as_measured {
                "fails"
            } else {
                "passes"
            },
            r.false_alarms,
            r.orderings,
            100.0 * r.false_alarms as f64 / r.orderings.max(1) as f64,
        );
    }
    for k in &check.known_step {
        println!(
            "  chain100 then chain101 (1% more work), {}: {}{}",
            k.measure,
            if k.caught { "caught" } else { "missed" },
            k.ratio.map(|r| format!(" ({r:.4}×)")).unwrap_or_default()
        );
    }
}
