//! The intervals check: over many separate runs, how many 95% intervals
//! hold the median of all the runs' medians, and their half-widths against
//! the runs' spread.

use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use serde::Serialize;

use crate::analysis::stats;
use crate::command::selftest::runs::*;
use crate::output::units::format_ns;

/// Intervals over many separate runs of one workload.
#[derive(Debug, Serialize)]
pub(super) struct IntervalFit {
    workload: String,
    runs: usize,
    medians_ns: Vec<f64>,
    half_widths_ns: Vec<f64>,
    median_of_medians_ns: f64,
    /// Standard deviation of the runs' medians.
    sd_of_medians_ns: f64,
    /// Intervals that hold the median of the medians.
    covering: usize,
    /// The median half-width over 1.96 × the sd of the medians.
    half_width_over_sd: f64,
    processes: Vec<u64>,
    wall_s: Vec<f64>,
}

pub(super) fn intervals(path: &Path, runs: usize) -> Result<IntervalFit> {
    println!("intervals: {runs} separate runs of {}", path.display());
    let mut medians = Vec::new();
    let mut bounds = Vec::new();
    let mut processes = Vec::new();
    let mut walls = Vec::new();
    let mut drift = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        let row = result_row(&run_host(&["run"], &[path], &[])?)?;
        walls.push(start.elapsed().as_secs_f64());
        medians.push(row.ns_per_op.median);
        bounds.push((row.ns_per_op.ci95_low, row.ns_per_op.ci95_high));
        processes.push(row.processes.processes as u64);
        drift.push((
            row.drift.run_drift_pct,
            row.drift.run_drift_runs,
            row.drift.earlier_runs_departure_pct,
        ));
    }
    let centre = stats::median(&medians);
    let sd = stats::sample_sd(&medians);
    let covering = bounds
        .iter()
        .filter(|(low, high)| *low <= centre && centre <= *high)
        .count();
    let half_widths: Vec<f64> = bounds.iter().map(|(l, h)| (h - l) / 2.0).collect();
    let half_width_over_sd = stats::median(&half_widths) / (1.96 * sd);
    for ((m, (l, h)), (pct, earlier, departure)) in medians.iter().zip(&bounds).zip(&drift) {
        println!(
            "  {} [{}, {}] {}{}{}",
            format_ns(*m),
            format_ns(*l),
            format_ns(*h),
            match pct {
                Some(pct) => format!("drift {pct:.2}% over {earlier} earlier runs"),
                None => "no drift measured yet".to_string(),
            },
            match departure {
                Some(d) => format!(", {d:+.2}% from their median"),
                None => String::new(),
            },
            if *l <= centre && centre <= *h {
                ""
            } else {
                "  (misses)"
            }
        );
    }
    println!(
        "  median of medians {}, sd of medians {} ({:.3}%); {covering} of {runs} intervals hold it; median half-width {} = {half_width_over_sd:.2} × 1.96 sd (goal: at most 2.5); processes {}..{}; wall time median {:.2} s, max {:.2} s",
        format_ns(centre),
        format_ns(sd),
        sd / centre * 100.0,
        format_ns(stats::median(&half_widths)),
        processes.iter().min().unwrap_or(&0),
        processes.iter().max().unwrap_or(&0),
        stats::median(&walls),
        min_max(&walls).1
    );
    Ok(IntervalFit {
        workload: path.display().to_string(),
        runs,
        medians_ns: medians,
        half_widths_ns: half_widths,
        median_of_medians_ns: centre,
        sd_of_medians_ns: sd,
        covering,
        half_width_over_sd,
        processes,
        wall_s: walls,
    })
}
