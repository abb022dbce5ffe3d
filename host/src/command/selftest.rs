//! `host selftest`: measure the harness itself.
//!
//! Every timing figure comes from separate `host run` / `host compare`
//! processes of this very binary, as a user would run them (except the
//! epoch-check cost, which needs both copies of one workload in one process):
//! - repeatability: the median of xor over several separate runs, their
//!   spread, whether each run's 95% interval holds the median of all runs,
//!   and the wall time to a result;
//! - count independence: per-op time at counts 10^3 to 10^7, for xor and for
//!   the empty guest (whose per-op time should be 0);
//! - epoch checks: the guarded copy against the fast copy of xor;
//! - components: the empty component (0 per op) and xor as a component
//!   against xor as a core module;
//! - verdicts: A against A, mod13 against mod16, chain100 against chain101
//!   (a real 1% difference).
//!
//! This module only drives runs and prints what they reported.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Parser;
use serde::Serialize;
use serde_json::Value;

use crate::analysis::{stats, verdict};
use crate::benchmark::progress::Silent;
use crate::benchmark::sequence::{self, Blocks, Plan};
use crate::benchmark::session::{Session, supervised};
use crate::cli::{Cli, Command as CliCommand, SelftestArgs, SelftestSection};
use crate::options::{Output, Settings};
use crate::output::export::write_json;
use crate::output::units::format_ns;
use crate::results::Ratio;

/// Counts for the count-independence check.
const COUNTS: [u64; 5] = [1_000, 10_000, 100_000, 1_000_000, 10_000_000];
/// Interleaved rounds for the epoch-check cost.
const EPOCH_ROUNDS: usize = 200;

#[derive(Debug, Default, Serialize)]
struct SelftestReport {
    repeatability: Option<Repeatability>,
    counts: Vec<CountFigures>,
    /// Guarded copy (epoch checks) over fast copy, per workload.
    epoch_check_ratios: Vec<(String, Ratio)>,
    components: Option<Components>,
    verdicts: Vec<VerdictTally>,
}

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
struct Repeatability {
    workload: String,
    runs: Vec<RunFigures>,
    median_of_runs_ns: f64,
    spread_pct: f64,
    run_to_run_sd_pct: f64,
    intervals_holding_median: usize,
    within_run_intervals_holding_median: usize,
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
struct Components {
    empty_component_ns_per_op: f64,
    empty_component_ci95: (f64, f64),
    /// xor as a component over xor as a core module, from `host compare`.
    xor_component_vs_module: Ratio,
}

#[derive(Debug, Serialize)]
struct VerdictTally {
    pair: String,
    runs: usize,
    verdicts: Vec<String>,
    ratios: Vec<(f64, f64, f64)>,
    wall_s: Vec<f64>,
}

pub fn selftest(args: &SelftestArgs) -> Result<()> {
    let dir = &args.workloads;
    let file = |name: &str| -> Result<PathBuf> {
        let path = dir.join(name);
        match path.is_file() {
            true => Ok(path),
            false => bail!(
                "{}: no such workload file (see --workloads)",
                path.display()
            ),
        }
    };
    if args.runs < 2 {
        bail!("--runs must be at least 2");
    }
    let wanted = |section| args.only.is_empty() || args.only.contains(&section);
    let mut report = SelftestReport::default();
    if wanted(SelftestSection::Repeatability) {
        report.repeatability = Some(repeatability(&file("xor.wasm")?, args.runs)?);
    }
    if wanted(SelftestSection::Counts) {
        report.counts = count_independence(&file("xor.wasm")?, &file("empty.wasm")?)?;
    }
    if wanted(SelftestSection::Epoch) {
        for name in ["xor.wasm", "mod16.wasm"] {
            let path = file(name)?;
            let ratio = epoch_check_cost(&path)?;
            println!(
                "epoch checks: the guarded copy of {} takes {:.4}x the time of the fast copy [{:.4}, {:.4}] ({EPOCH_ROUNDS} interleaved rounds); samples are taken on the fast copy",
                path.display(),
                ratio.ratio,
                ratio.ci95_low,
                ratio.ci95_high,
            );
            report.epoch_check_ratios.push((name.to_string(), ratio));
        }
    }
    if wanted(SelftestSection::Components) {
        report.components = Some(components(
            &file("empty-component.wasm")?,
            &file("xor.wasm")?,
            &file("xor-component.wasm")?,
        )?);
    }
    if wanted(SelftestSection::Verdicts) {
        let xor = file("xor.wasm")?;
        report
            .verdicts
            .push(verdicts("xor vs xor", &xor, &xor, args.same_runs)?);
        report.verdicts.push(verdicts(
            "mod13 vs mod16",
            &file("mod13.wasm")?,
            &file("mod16.wasm")?,
            5,
        )?);
        report.verdicts.push(verdicts(
            "chain100 vs chain101",
            &file("chain100.wasm")?,
            &file("chain101.wasm")?,
            5,
        )?);
    }
    if let Some(path) = &args.export_json {
        let output = match path.as_os_str() == "-" {
            true => Output::Stdout,
            false => Output::File(path.clone()),
        };
        write_json(&report, &output)?;
    }
    Ok(())
}

fn repeatability(xor: &Path, runs: usize) -> Result<Repeatability> {
    println!("repeatability: {runs} separate runs of {}", xor.display());
    let mut figures = Vec::new();
    for i in 0..runs {
        let start = Instant::now();
        let row = result_row(&run_host(&["run"], &[xor], &[])?)?;
        let wall_s = start.elapsed().as_secs_f64();
        let f = RunFigures {
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
    let (lo, hi) = medians
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &m| (lo.min(m), hi.max(m)));
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
        walls.iter().copied().fold(0.0, f64::max)
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

fn count_independence(xor: &Path, empty: &Path) -> Result<Vec<CountFigures>> {
    let default_empty = result_row(&run_host(&["run"], &[empty], &[])?)?;
    println!(
        "empty guest, default run: {} per op [{}, {}]",
        format_ns(number(&default_empty, "/ns_per_op/median")?),
        format_ns(number(&default_empty, "/ns_per_op/ci95_low")?),
        format_ns(number(&default_empty, "/ns_per_op/ci95_high")?)
    );
    println!("count independence (ns/op; difference against the largest count):");
    let mut counts = Vec::new();
    for count in COUNTS {
        let flag = count.to_string();
        let row = result_row(&run_host(&["run"], &[xor], &["--count", &flag])?)?;
        let empty = result_row(&run_host(&["run"], &[empty], &["--count", &flag])?)?;
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
    Ok(counts)
}

fn components(empty_component: &Path, xor: &Path, xor_component: &Path) -> Result<Components> {
    let empty = result_row(&run_host(
        &["run"],
        &[empty_component],
        &["--count", "1000"],
    )?)?;
    let (median, low, high) = (
        number(&empty, "/ns_per_op/median")?,
        number(&empty, "/ns_per_op/ci95_low")?,
        number(&empty, "/ns_per_op/ci95_high")?,
    );
    println!(
        "empty component at count 1000: {} per op [{}, {}]",
        format_ns(median),
        format_ns(low),
        format_ns(high)
    );
    let compared = run_host(&["compare"], &[xor, xor_component], &[])?;
    let ratio = comparison_ratio(&compared)?;
    println!(
        "xor as a component against xor as a core module: {:.4}x [{:.4}, {:.4}] ({})",
        ratio.ratio,
        ratio.ci95_low,
        ratio.ci95_high,
        compared
            .pointer("/comparisons/0/verdict")
            .and_then(Value::as_str)
            .unwrap_or("?")
    );
    Ok(Components {
        empty_component_ns_per_op: median,
        empty_component_ci95: (low, high),
        xor_component_vs_module: ratio,
    })
}

fn verdicts(pair: &str, a: &Path, b: &Path, runs: usize) -> Result<VerdictTally> {
    println!("{pair}: {runs} separate `host compare` runs");
    let mut tally = VerdictTally {
        pair: pair.to_string(),
        runs,
        verdicts: Vec::new(),
        ratios: Vec::new(),
        wall_s: Vec::new(),
    };
    for _ in 0..runs {
        let start = Instant::now();
        let report = run_host(&["compare"], &[a, b], &[])?;
        tally.wall_s.push(start.elapsed().as_secs_f64());
        let ratio = comparison_ratio(&report)?;
        let verdict = report
            .pointer("/comparisons/0/verdict")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string();
        println!(
            "  {verdict:<7} ratio {:.4} [{:.4}, {:.4}] in {:.2} s",
            ratio.ratio,
            ratio.ci95_low,
            ratio.ci95_high,
            tally.wall_s.last().copied().unwrap_or(0.0)
        );
        tally.verdicts.push(verdict);
        tally
            .ratios
            .push((ratio.ratio, ratio.ci95_low, ratio.ci95_high));
    }
    let mut counts: Vec<(String, usize)> = Vec::new();
    for v in &tally.verdicts {
        match counts.iter_mut().find(|(name, _)| name == v) {
            Some((_, n)) => *n += 1,
            None => counts.push((v.clone(), 1)),
        }
    }
    let summary: Vec<String> = counts
        .iter()
        .map(|(v, n)| format!("{v} {n}/{runs}"))
        .collect();
    println!("  verdicts: {}", summary.join(", "));
    Ok(tally)
}

/// Run this binary with `command FILES... --export-json - EXTRA...` and
/// return its JSON report.
fn run_host(command: &[&str], files: &[&Path], extra: &[&str]) -> Result<Value> {
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

/// The single result row of a `host run` report.
fn result_row(report: &Value) -> Result<Value> {
    let row = report
        .pointer("/results/0")
        .cloned()
        .context("a run reported no result")?;
    if let Some(error) = row.get("error").and_then(Value::as_str) {
        bail!("{error}");
    }
    Ok(row)
}

fn comparison_ratio(report: &Value) -> Result<Ratio> {
    Ok(Ratio {
        ratio: number(report, "/comparisons/0/ratio")?,
        ci95_low: number(report, "/comparisons/0/ci95_low")?,
        ci95_high: number(report, "/comparisons/0/ci95_high")?,
    })
}

fn number(row: &Value, pointer: &str) -> Result<f64> {
    row.pointer(pointer)
        .and_then(Value::as_f64)
        .with_context(|| format!("a run's JSON lacks {pointer}"))
}

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
        let mut session = Session::new(
            &settings,
            std::slice::from_ref(&file.to_path_buf()),
            engines,
            guard,
            &Silent,
        )?;
        if let Some(loaded) = session.loaded.pop_if(|l| l.workload.is_err())
            && let Err(e) = loaded.workload
        {
            return Err(e.error.context(loaded.path.display().to_string()));
        }
        let planned = session
            .rows(&[])
            .into_iter()
            .next()
            .context("no benchmark")?;
        let workload = planned
            .workload
            .map_err(|_| anyhow::anyhow!("{}: not loaded", file.display()))?;
        let (mut subjects, _) = session.subjects(workload, &planned.row)?;
        let calibration = &session
            .format_setup(planned.row.engine_set, workload.format)
            .calibration;
        let plan = Plan {
            sample_time: settings.sample_time,
            warmup_cap: settings.warmup_cap,
            count: None,
            stop: settings.stop,
            seed: session.seed,
        };
        // The measuring sequence of `host run` up to the first block (the
        // count proven on the guarded copy), then the guarded copy sampled
        // beside the fast one, in interleaved rounds.
        let tuned = sequence::tune(&plan, calibration, &mut subjects.guarded)?;
        let mut fast = sequence::settle(&plan, calibration, tuned, tuned.count, &mut subjects)?;
        let mut guarded = Blocks::start(
            calibration,
            tuned.count,
            session.seed,
            tuned.warmup,
            &mut subjects.guarded,
            &mut subjects.empty,
        )?;
        for round in 0..EPOCH_ROUNDS {
            if round % 2 == 0 {
                guarded.take(&mut subjects.guarded, &mut subjects.empty, 5)?;
                fast.take(&mut subjects.fast, &mut subjects.empty, 5)?;
            } else {
                fast.take(&mut subjects.fast, &mut subjects.empty, 5)?;
                guarded.take(&mut subjects.guarded, &mut subjects.empty, 5)?;
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
