//! Running this binary as a user would, and reading what its runs reported
//! into the report types of [`crate::results`].

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde::de::DeserializeOwned;

use crate::results::CompareReport;
use crate::results::Figures;
use crate::results::Ratio;
use crate::results::RunReport;

/// The smallest and the largest of `values`.
pub(super) fn min_max(values: &[f64]) -> (f64, f64) {
    values
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &m| (lo.min(m), hi.max(m)))
}

/// Run this binary with `command FILES... --export-json - EXTRA...` and
/// read its JSON report (a [`RunReport`] or a [`CompareReport`]).
pub(super) fn run_host<T: DeserializeOwned>(
    command: &[&str],
    files: &[&Path],
    extra: &[&str],
) -> Result<T> {
    let exe = std::env::current_exe().context("locating the host binary")?;
    let output = Command::new(exe)
        .args(command)
        .args(files)
        .args(["--export-json", "-"])
        .args(extra)
        .output()
        .context("starting a separate run")?;
    if !output.status.success() {
        bail!(
            "a separate `{}` failed: {}",
            command.join(" "),
            String::from_utf8_lossy(&output.stderr)
                .lines()
                .last()
                .unwrap_or("")
        );
    }
    serde_json::from_slice(&output.stdout).context("reading a run's JSON")
}

/// The figures of the single result row of a `host run` report; its error
/// when it failed.
pub(super) fn result_row(report: &RunReport) -> Result<Figures> {
    let row = report.results.first().context("a run reported no result")?;
    if let Some(error) = &row.error {
        bail!("{}", crate::output::escape::terminal(error));
    }
    row.figures
        .clone()
        .context("a run's result row has no figures")
}

/// The first comparison's ratio with its interval.
pub(super) fn comparison_ratio(report: &CompareReport) -> Result<Ratio> {
    let c = report
        .comparisons
        .first()
        .context("a compare reported no comparison")?;
    Ok(c.ratio)
}

/// The first comparison's verdict in words, `?` without one.
pub(super) fn first_verdict(report: &CompareReport) -> String {
    report
        .comparisons
        .first()
        .map_or_else(|| "?".to_string(), |c| c.verdict.to_string())
}

/// A program row's median execute time, in ns.
pub(super) fn execute_median(row: &Figures) -> Result<f64> {
    let phases = row
        .phases
        .as_ref()
        .context("a program's row has no phases")?;
    Ok(phases.execute_ns.median)
}

/// All the time of a row's samples over all their ops: each sample less
/// the row's fixed cost, summed, over the samples times the count. Unlike
/// the median of epochs, it keeps every interruption, at any count.
pub(super) fn all_time_per_op(row: &Figures) -> f64 {
    let per_op = every_sample_per_op(row);
    per_op.iter().sum::<f64>() / per_op.len() as f64
}

/// Every sample of a row, less the fixed cost, per op: the interrupted
/// ones and those of slow spells included (a row's epochs may leave them
/// out).
pub(super) fn every_sample_per_op(row: &Figures) -> Vec<f64> {
    let count = row.counts.count as f64;
    row.series
        .raw_samples_ns
        .iter()
        .flatten()
        .map(|ns| (ns - row.time.fixed_cost_ns) / count)
        .collect()
}
