//! `host selftest`: measure the harness itself.
//!
//! Every figure comes from separate `host run` processes of this very binary,
//! as a user would run them:
//! - repeatability: the median of the same workload over several separate
//!   runs, their spread, and whether each run's 95% interval holds the median
//!   of all runs;
//! - count independence: per-op time at counts 10^3 to 10^7, for the workload
//!   and for the empty guest (whose per-op time should be 0);
//! - time to a result: wall time of each default run, compile included.
//!
//! This module only drives runs and prints what they reported.

use clap::Parser;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde::Serialize;
use serde_json::Value;

use crate::cli::{Cli, Command as CliCommand, SelftestArgs};
use crate::export::write_json;
use crate::measure::{self, Blocks, Plan};
use crate::session::{Session, supervised};
use crate::settings::Output;
use crate::settings::Settings;
use crate::stats;
use crate::units::format_ns;
use crate::verdict::{self, Ratio};

/// Counts for the count-independence check.
const COUNTS: [u64; 5] = [1_000, 10_000, 100_000, 1_000_000, 10_000_000];

#[derive(Debug, Serialize)]
struct RunFigures {
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
struct CountFigures {
    count: u64,
    workload_ns_per_op: f64,
    workload_vs_largest_count_pct: f64,
    empty_ns_per_op: f64,
    empty_ci95: (f64, f64),
}

#[derive(Debug, Serialize)]
struct SelftestReport {
    workload: String,
    runs: Vec<RunFigures>,
    median_of_runs_ns: f64,
    spread_pct: f64,
    run_to_run_sd_pct: f64,
    intervals_holding_median: usize,
    default_empty_ns_per_op: f64,
    counts: Vec<CountFigures>,
    /// Guarded copy (epoch checks) over fast copy, per-op time.
    epoch_check_ratio: Ratio,
}

pub fn selftest(args: &SelftestArgs) -> Result<()> {
    for path in [&args.workload, &args.empty] {
        if !path.is_file() {
            bail!("{}: no such workload file", path.display());
        }
    }
    if args.runs < 2 {
        bail!("--runs must be at least 2");
    }
    let workload = args.workload.display().to_string();
    println!(
        "wasm-bench selftest: {} separate runs of {workload}",
        args.runs
    );

    // Repeatability and time to a result.
    let mut runs = Vec::new();
    for i in 0..args.runs {
        let start = Instant::now();
        let row = run_one(&args.workload, &[])?;
        let wall_s = start.elapsed().as_secs_f64();
        let figures = RunFigures {
            median_ns: number(&row, "/ns_per_op/median")?,
            ci95_low_ns: number(&row, "/ns_per_op/ci95_low")?,
            ci95_high_ns: number(&row, "/ns_per_op/ci95_high")?,
            within_run_low_ns: number(&row, "/ns_per_op/ci95_within_run_low")?,
            within_run_high_ns: number(&row, "/ns_per_op/ci95_within_run_high")?,
            samples: number(&row, "/samples")? as u64,
            wall_s,
            interval_holds_median_of_runs: false,
        };
        println!(
            "  run {}: {} [{}, {}] (within run [{}, {}]), {} samples, {:.2} s",
            i + 1,
            format_ns(figures.median_ns),
            format_ns(figures.ci95_low_ns),
            format_ns(figures.ci95_high_ns),
            format_ns(figures.within_run_low_ns),
            format_ns(figures.within_run_high_ns),
            figures.samples,
            wall_s
        );
        runs.push(figures);
    }
    let medians: Vec<f64> = runs.iter().map(|r| r.median_ns).collect();
    let median_of_runs = stats::median(&medians);
    for run in &mut runs {
        run.interval_holds_median_of_runs =
            run.ci95_low_ns <= median_of_runs && median_of_runs <= run.ci95_high_ns;
    }
    let holding = runs
        .iter()
        .filter(|r| r.interval_holds_median_of_runs)
        .count();
    let within_holding = runs
        .iter()
        .filter(|r| r.within_run_low_ns <= median_of_runs && median_of_runs <= r.within_run_high_ns)
        .count();
    let (lo, hi) = medians
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &m| (lo.min(m), hi.max(m)));
    let spread_pct = (hi - lo) / median_of_runs * 100.0;
    let mean = medians.iter().sum::<f64>() / medians.len() as f64;
    let sd = (medians.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (medians.len() - 1) as f64)
        .sqrt();
    let sd_pct = sd / mean * 100.0;
    let walls: Vec<f64> = runs.iter().map(|r| r.wall_s).collect();
    println!(
        "  median of runs {}; spread (max-min)/median {spread_pct:.2}%; run-to-run sd {sd_pct:.2}%",
        format_ns(median_of_runs)
    );
    println!(
        "  95% intervals holding the median of runs: {holding} of {} (within-run intervals alone: {within_holding} of {})",
        runs.len(),
        runs.len()
    );
    println!(
        "  wall time to a result: median {:.2} s, max {:.2} s",
        stats::median(&walls),
        walls.iter().copied().fold(0.0, f64::max)
    );

    // The empty guest with the default settings.
    let empty_row = run_one(&args.empty, &[])?;
    let default_empty = number(&empty_row, "/ns_per_op/median")?;
    println!(
        "empty guest, default run: {} per op [{}, {}]",
        format_ns(default_empty),
        format_ns(number(&empty_row, "/ns_per_op/ci95_low")?),
        format_ns(number(&empty_row, "/ns_per_op/ci95_high")?)
    );

    // Count independence.
    println!("count independence (ns/op; difference against the largest count):");
    let mut counts = Vec::new();
    for count in COUNTS {
        let flag = count.to_string();
        let row = run_one(&args.workload, &["--count", &flag])?;
        let empty = run_one(&args.empty, &["--count", &flag])?;
        counts.push(CountFigures {
            count,
            workload_ns_per_op: number(&row, "/ns_per_op/median")?,
            workload_vs_largest_count_pct: 0.0,
            empty_ns_per_op: number(&empty, "/ns_per_op/median")?,
            empty_ci95: (
                number(&empty, "/ns_per_op/ci95_low")?,
                number(&empty, "/ns_per_op/ci95_high")?,
            ),
        });
    }
    let reference = counts.last().map_or(f64::NAN, |c| c.workload_ns_per_op);
    for c in &mut counts {
        c.workload_vs_largest_count_pct = (c.workload_ns_per_op / reference - 1.0) * 100.0;
        println!(
            "  count {:>10}: {:>10} ({:+.2}%)   empty {:>10} [{}, {}]",
            c.count,
            format_ns(c.workload_ns_per_op),
            c.workload_vs_largest_count_pct,
            format_ns(c.empty_ns_per_op),
            format_ns(c.empty_ci95.0),
            format_ns(c.empty_ci95.1)
        );
    }

    // What epoch checks (the deadline of guarded copies) would cost.
    let epoch = epoch_check_cost(&args.workload)?;
    println!(
        "epoch checks: the guarded copy of {} takes {:.4}x the time of the fast copy [{:.4}, {:.4}] ({} interleaved rounds); samples are taken on the fast copy",
        args.workload.display(),
        epoch.ratio,
        epoch.ci95_low,
        epoch.ci95_high,
        EPOCH_ROUNDS
    );

    let report = SelftestReport {
        workload,
        runs,
        median_of_runs_ns: median_of_runs,
        spread_pct,
        run_to_run_sd_pct: sd_pct,
        intervals_holding_median: holding,
        default_empty_ns_per_op: default_empty,
        counts,
        epoch_check_ratio: epoch,
    };
    if let Some(path) = &args.export_json {
        let output = if path.as_os_str() == "-" {
            Output::Stdout
        } else {
            Output::File(path.clone())
        };
        write_json(&report, &output)?;
    }
    Ok(())
}

/// Run `host run FILE --export-json - EXTRA...` in a separate process and
/// return its single result row.
fn run_one(file: &Path, extra: &[&str]) -> Result<Value> {
    let exe = std::env::current_exe().context("locating the host binary")?;
    let output = Command::new(exe)
        .arg("run")
        .arg(file)
        .args(["--export-json", "-"])
        .args(extra)
        .output()
        .context("starting a separate run")?;
    if !output.status.success() {
        bail!(
            "a separate run of {} failed: {}",
            file.display(),
            String::from_utf8_lossy(&output.stderr)
                .lines()
                .last()
                .unwrap_or("")
        );
    }
    let report: Value = serde_json::from_slice(&output.stdout).context("reading a run's JSON")?;
    let row = report
        .pointer("/results/0")
        .cloned()
        .context("a run reported no result")?;
    if let Some(error) = row.get("error").and_then(Value::as_str) {
        bail!("{error}");
    }
    Ok(row)
}

fn number(row: &Value, pointer: &str) -> Result<f64> {
    row.pointer(pointer)
        .and_then(Value::as_f64)
        .with_context(|| format!("a run's JSON lacks {pointer}"))
}

/// Interleaved rounds for the epoch-check cost.
const EPOCH_ROUNDS: usize = 200;

/// Per-op time of the guarded copy (epoch checks) over the fast copy of
/// `file`, measured in this process in interleaved rounds, with a sign-test
/// interval.
fn epoch_check_cost(file: &Path) -> Result<Ratio> {
    let cli = Cli::try_parse_from(["host", "run", &file.display().to_string()])?;
    let CliCommand::Run(args) = cli.command else {
        bail!("internal: not a run");
    };
    let settings = Settings::from_run_args(args)?;
    supervised(&settings, |engines, guard| {
        let session = Session::new(
            &settings,
            std::slice::from_ref(&file.to_path_buf()),
            engines,
            guard,
        )?;
        let planned = session
            .rows(&[])
            .into_iter()
            .next()
            .context("no benchmark")?;
        let workload = planned.workload.map_err(|(_, e)| anyhow::anyhow!("{e}"))?;
        let mut instances = session.instances(workload, &planned.row)?;
        let calibration = &session.kind_setup(workload.code.kind()).calibration;
        let plan = Plan {
            sample_time: settings.sample_time,
            warmup_cap: settings.warmup_cap,
            count: None,
            stop: settings.stop,
            seed: session.seed,
        };
        let (tuning, count) = measure::tune(&plan, calibration, &mut instances.guarded)?;
        measure::warm_up_at(&plan, calibration, count, tuning, &mut instances.fast)?;
        let mut guarded = Blocks::start(
            calibration,
            count,
            session.seed,
            &mut instances.guarded,
            &mut instances.empty,
        )?;
        let mut fast = Blocks::start(
            calibration,
            count,
            session.seed,
            &mut instances.fast,
            &mut instances.empty,
        )?;
        for round in 0..EPOCH_ROUNDS {
            if round % 2 == 0 {
                guarded.take(&mut instances.guarded, &mut instances.empty, 5)?;
                fast.take(&mut instances.fast, &mut instances.empty, 5)?;
            } else {
                fast.take(&mut instances.fast, &mut instances.empty, 5)?;
                guarded.take(&mut instances.guarded, &mut instances.empty, 5)?;
            }
        }
        let per_round = |b: &Blocks| -> Vec<f64> {
            b.corrected_per_op()
                .iter()
                .map(|r| stats::median(r))
                .collect()
        };
        let ratios: Vec<f64> = per_round(&guarded)
            .iter()
            .zip(per_round(&fast))
            .map(|(g, f)| g / f)
            .collect();
        verdict::paired_ratio(&ratios, 0.95).context("no rounds")
    })
}
