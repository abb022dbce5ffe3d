//! The repeatability check: the median of xor over several separate runs,
//! their spread, whether each run's 95% interval holds the median of all
//! runs, and the wall time to a result.

use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use serde::Serialize;

use crate::analysis::stats;
use crate::command::selftest::runs::*;
use crate::output::units::format_ns;

#[derive(Debug, Serialize)]
pub(super) struct RunFigures {
    median_ns: f64,
    ci95_low_ns: f64,
    ci95_high_ns: f64,
    within_run_low_ns: f64,
    within_run_high_ns: f64,
    samples: u64,
    wall_s: f64,
    interval_holds_median_of_runs: bool,
}

#[derive(Debug, Serialize)]
pub(super) struct Repeatability {
    workload: String,
    runs: Vec<RunFigures>,
    median_of_runs_ns: f64,
    spread_pct: f64,
    run_to_run_sd_pct: f64,
    intervals_holding_median: usize,
    within_run_intervals_holding_median: usize,
}

pub(super) fn repeatability(xor: &Path, runs: usize) -> Result<Repeatability> {
    println!("repeatability: {runs} separate runs of {}", xor.display());
    let mut figures = Vec::new();
    for i in 0..runs {
        let start = Instant::now();
        let row = result_row(&run_host(&["run"], &[xor], &[])?)?;
        let wall_s = start.elapsed().as_secs_f64();
        let f = RunFigures {
            median_ns: row.ns_per_op.median,
            ci95_low_ns: row.ns_per_op.ci95_low,
            ci95_high_ns: row.ns_per_op.ci95_high,
            within_run_low_ns: row.ns_per_op.ci95_within_run_low,
            within_run_high_ns: row.ns_per_op.ci95_within_run_high,
            samples: row.counts.samples as u64,
            wall_s,
            interval_holds_median_of_runs: false,
        };
        println!(
            "  run {}: {} [{}, {}] (within run [{}, {}]), {} samples, {:.2} s",
            i + 1,
            format_ns(f.median_ns),
            format_ns(f.ci95_low_ns),
            format_ns(f.ci95_high_ns),
            format_ns(f.within_run_low_ns),
            format_ns(f.within_run_high_ns),
            f.samples,
            wall_s
        );
        figures.push(f);
    }
    let medians: Vec<f64> = figures.iter().map(|r| r.median_ns).collect();
    let median_of_runs = stats::median(&medians);
    for f in &mut figures {
        f.interval_holds_median_of_runs =
            f.ci95_low_ns <= median_of_runs && median_of_runs <= f.ci95_high_ns;
    }
    let holding = figures
        .iter()
        .filter(|r| r.interval_holds_median_of_runs)
        .count();
    let within_holding = figures
        .iter()
        .filter(|r| r.within_run_low_ns <= median_of_runs && median_of_runs <= r.within_run_high_ns)
        .count();
    let (lo, hi) = min_max(&medians);
    let spread_pct = (hi - lo) / median_of_runs * 100.0;
    let mean = medians.iter().sum::<f64>() / medians.len() as f64;
    let sd = (medians.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (medians.len() - 1) as f64)
        .sqrt();
    let sd_pct = sd / mean * 100.0;
    let walls: Vec<f64> = figures.iter().map(|r| r.wall_s).collect();
    println!(
        "  median of runs {}; spread (max-min)/median {spread_pct:.2}%; run-to-run sd {sd_pct:.2}% (use it as --drift)",
        format_ns(median_of_runs)
    );
    println!(
        "  95% intervals holding the median of runs: {holding} of {runs} (within-run intervals alone: {within_holding} of {runs})"
    );
    println!(
        "  wall time to a result: median {:.2} s, max {:.2} s",
        stats::median(&walls),
        min_max(&walls).1
    );
    Ok(Repeatability {
        workload: xor.display().to_string(),
        runs: figures,
        median_of_runs_ns: median_of_runs,
        spread_pct,
        run_to_run_sd_pct: sd_pct,
        intervals_holding_median: holding,
        within_run_intervals_holding_median: within_holding,
    })
}
