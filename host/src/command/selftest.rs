//! `host selftest`: measure the harness itself.
//!
//! Every timing figure comes from separate `host run` / `host compare`
//! processes of this very binary, as a user would run them:
//! - repeatability: the median of xor over several separate runs, their
//!   spread, whether each run's 95% interval holds the median of all runs,
//!   and the wall time to a result;
//! - count independence: per-op time at counts 10^3 to 10^7, for xor (in
//!   rounds of every count, so that drift falls on all alike, all on one
//!   core) and for the empty guest (whose per-op time should be 0);
//! - components: the empty component (0 per op) and xor as a component
//!   against xor as a core module;
//! - verdicts: A against A, mod13 against mod16, chain100 against chain101
//!   (a real 1% difference);
//! - intervals: over many separate runs of xor, xor as a component and a
//!   program, how many 95% intervals hold the median of all the runs'
//!   medians, and their half-widths against the runs' spread;
//! - machine: what interrupts each core, as a thread spinning on it sees it
//!   ([`crate::platform::gaps`]), and the spread of xor's samples in one run
//!   at a short and at a long count;
//! - programs: the execute time `host run` reports for a call-heavy and a
//!   loop-heavy program against an uninstrumented timing of the same
//!   `_start` in fresh reference processes of this binary, each timing in
//!   itself on an engine of wasmtime's defaults ([`reference`]).
//!
//! Apart from the reference timing and the watch of the cores, this module
//! only drives runs and prints what they reported.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::analysis::{stats, summary};
use crate::cli::{ReferenceArgs, SelftestArgs, SelftestSection};
use crate::options::Output;
use crate::output::export::write_json;
use crate::output::units::format_ns;
use crate::platform::gaps::{self, Interruptions};
use crate::results::Ratio;

/// Counts for the count-independence check.
const COUNTS: [u64; 5] = [1_000, 10_000, 100_000, 1_000_000, 10_000_000];
/// Rounds of the count check: every count once per round, the order rotated,
/// so that the machine's drift over the check falls on every count alike.
const COUNT_ROUNDS: usize = 5;

#[derive(Debug, Default, Serialize)]
struct SelftestReport {
    repeatability: Option<Repeatability>,
    counts: Vec<CountFigures>,
    components: Option<Components>,
    verdicts: Vec<VerdictTally>,
    intervals: Vec<IntervalFit>,
    programs: Vec<ProgramAgreement>,
    family: Option<FamilyTally>,
    machine: Option<Machine>,
}

/// The machine under the harness.
#[derive(Debug, Serialize)]
struct Machine {
    interruptions: Vec<Interruptions>,
    samples: Vec<SampleSpread>,
}

/// The spread of one run's per-op samples (corrected epochs), in ns.
#[derive(Debug, Serialize)]
struct SampleSpread {
    count: u64,
    samples: usize,
    /// Length of one sample (a call at the count), in µs.
    sample_us: f64,
    min_ns: f64,
    p10_ns: f64,
    p25_ns: f64,
    median_ns: f64,
    p75_ns: f64,
    p90_ns: f64,
}

/// Intervals over many separate runs of one workload.
#[derive(Debug, Serialize)]
struct IntervalFit {
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

/// A program's execute time under `host run` against an uninstrumented
/// timing in reference processes.
#[derive(Debug, Serialize)]
struct ProgramAgreement {
    workload: String,
    /// The harness's compiled code is byte for byte that of an engine of
    /// wasmtime's defaults.
    identical_code: bool,
    host_run_medians_ns: Vec<f64>,
    /// Per round, the median of the reference processes' medians.
    reference_medians_ns: Vec<f64>,
    /// Median of `host run` over median of the reference.
    ratio: f64,
    /// Median over the rounds of each round's `host run` over the reference:
    /// neighbours in time, so slow swings of the machine cancel.
    ratio_of_neighbours: f64,
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
    /// Median of the rounds.
    workload_ns_per_op: f64,
    /// Each round's median, in round order.
    workload_runs_ns_per_op: Vec<f64>,
    workload_vs_largest_count_pct: f64,
    /// Median of the rounds of all the time over all the ops: every
    /// sample's time less the fixed cost, interruptions included.
    all_time_ns_per_op: f64,
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
            args.same_runs,
        )?);
    }
    if wanted(SelftestSection::Intervals) {
        for name in ["xor.wasm", "xor-component.wasm", "loop.wasm"] {
            report
                .intervals
                .push(intervals(&file(name)?, args.same_runs)?);
        }
    }
    if wanted(SelftestSection::Small) {
        report.verdicts.push(verdicts_with(
            "chain200 vs chain201 (0.5%)",
            &file("chain200.wasm")?,
            &file("chain201.wasm")?,
            10,
            &["--noise", "0.5", "--time", "3s"],
        )?);
        report.verdicts.push(verdicts_with(
            "chain400 vs chain401 (0.25%)",
            &file("chain400.wasm")?,
            &file("chain401.wasm")?,
            10,
            &["--noise", "0.25", "--time", "10s"],
        )?);
    }
    if wanted(SelftestSection::Family) {
        report.family = Some(family(
            &[
                &file("xor.wasm")?,
                &file("mod13.wasm")?,
                &file("mod16.wasm")?,
                &file("xor.wasm")?,
            ],
            10,
        )?);
    }
    if wanted(SelftestSection::Busy) {
        let _spinner = Spinner::start()?;
        report.verdicts.push(verdicts(
            "chain100 vs chain101, a busy loop on the last core",
            &file("chain100.wasm")?,
            &file("chain101.wasm")?,
            10,
        )?);
    }
    if wanted(SelftestSection::Machine) {
        report.machine = Some(machine(&file("xor.wasm")?)?);
    }
    if wanted(SelftestSection::Programs) {
        for name in ["fib.wasm", "loop.wasm"] {
            report.programs.push(program_agreement(&file(name)?)?);
        }
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

/// How long each core is watched.
const WATCH: Duration = Duration::from_secs(2);
/// The counts whose samples are spread out: a sample of about 250 µs and one
/// of about 2.5 ms.
const SPREAD_COUNTS: [u64; 2] = [1_000_000, 10_000_000];

fn machine(xor: &Path) -> Result<Machine> {
    println!(
        "machine: gaps over {} µs between back-to-back clock reads on each core ({} s each)",
        gaps::THRESHOLD.as_micros(),
        WATCH.as_secs()
    );
    let cores: Vec<usize> = core_affinity::get_core_ids()
        .unwrap_or_default()
        .iter()
        .map(|c| c.id)
        .collect();
    let mut interruptions = Vec::new();
    for core in cores {
        let Some(i) = gaps::watch(core, WATCH) else {
            println!("  core {core}: could not be pinned");
            continue;
        };
        println!(
            "  core {}: {:.0} per second, {:.2}% of the time; length median {}, p90 {}, p99 {}, max {}; a sample of 1 ms carries {:.1} on average",
            i.core,
            i.per_second,
            i.lost_pct,
            format_ns(i.p50_ns),
            format_ns(i.p90_ns),
            format_ns(i.p99_ns),
            format_ns(i.max_ns),
            i.per_span(1e6)
        );
        interruptions.push(i);
    }
    println!(
        "xor's corrected samples in one run at each count (a step between levels is the CPU changing speed; a long sample averages over steps and carries interruptions):"
    );
    let mut samples = Vec::new();
    for count in SPREAD_COUNTS {
        let flag = count.to_string();
        let row = result_row(&run_host(&["run"], &[xor], &["--count", &flag])?)?;
        let mut per_op = every_sample_per_op(&row)?;
        if per_op.is_empty() {
            bail!("a run at count {count} kept no samples");
        }
        per_op.sort_by(f64::total_cmp);
        let q = |q| stats::quantile_sorted(&per_op, q);
        let spread = SampleSpread {
            count,
            samples: per_op.len(),
            sample_us: q(0.5) * count as f64 / 1e3,
            min_ns: per_op[0],
            p10_ns: q(0.1),
            p25_ns: q(0.25),
            median_ns: q(0.5),
            p75_ns: q(0.75),
            p90_ns: q(0.9),
        };
        println!(
            "  count {:>10} ({} samples of {:.0} µs): min {} · p10 {} · p25 {} · median {} · p75 {} · p90 {}; median over min {:+.2}%",
            count,
            spread.samples,
            spread.sample_us,
            format_ns(spread.min_ns),
            format_ns(spread.p10_ns),
            format_ns(spread.p25_ns),
            format_ns(spread.median_ns),
            format_ns(spread.p75_ns),
            format_ns(spread.p90_ns),
            (spread.median_ns / spread.min_ns - 1.0) * 100.0
        );
        samples.push(spread);
    }
    Ok(Machine {
        interruptions,
        samples,
    })
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

fn count_independence(xor: &Path, empty: &Path) -> Result<Vec<CountFigures>> {
    // Every run of the check on one core, the quietest when it begins: the
    // cores of a virtual machine need not be alike (on one, in runs a few
    // minutes apart, calls of xor at a count of 1000 took 276 ns in every
    // process on one core and 297 ns in every process on the other, while
    // per-op times at 10^4 and 10^7 agreed), and runs that each picked
    // their own core would put that difference between the counts.
    let core = crate::platform::thread::quietest_core().map(|(core, why)| {
        println!("count independence on core {core} ({why})");
        core.to_string()
    });
    let run = |file: &Path, extra: &[&str]| -> Result<Value> {
        let mut args = extra.to_vec();
        if let Some(core) = &core {
            args.extend(["--core", core.as_str()]);
        }
        run_host(&["run"], &[file], &args)
    };
    let default_empty = result_row(&run(empty, &[])?)?;
    println!(
        "empty guest, default run: {} per op [{}, {}]",
        format_ns(number(&default_empty, "/ns_per_op/median")?),
        format_ns(number(&default_empty, "/ns_per_op/ci95_low")?),
        format_ns(number(&default_empty, "/ns_per_op/ci95_high")?)
    );
    println!(
        "count independence (ns/op; {COUNT_ROUNDS} rounds of every count in rotated order; median of the rounds, difference against the largest count):"
    );
    let mut rounds: Vec<Vec<f64>> = vec![Vec::new(); COUNTS.len()];
    let mut all_time: Vec<Vec<f64>> = vec![Vec::new(); COUNTS.len()];
    // What interrupted the measuring core before each run.
    let mut watches: Vec<Interruptions> = Vec::new();
    for round in 0..COUNT_ROUNDS {
        for k in 0..COUNTS.len() {
            let i = (k + round) % COUNTS.len();
            let flag = COUNTS[i].to_string();
            let report = run(xor, &["--count", &flag])?;
            if let Some(watched) = report.pointer("/environment/interruptions") {
                watches.push(
                    Interruptions::deserialize(watched)
                        .context("a run's JSON has unreadable interruptions")?,
                );
            }
            let row = result_row(&report)?;
            rounds[i].push(number(&row, "/ns_per_op/median")?);
            all_time[i].push(all_time_per_op(&row)?);
        }
    }
    let mut counts = Vec::new();
    for ((count, runs), all_time) in COUNTS.into_iter().zip(rounds).zip(all_time) {
        let flag = count.to_string();
        let empty = result_row(&run(empty, &["--count", &flag])?)?;
        counts.push(CountFigures {
            count,
            workload_ns_per_op: stats::median(&runs),
            workload_runs_ns_per_op: runs,
            workload_vs_largest_count_pct: 0.0,
            all_time_ns_per_op: stats::median(&all_time),
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
        let (lo, hi) = min_max(&c.workload_runs_ns_per_op);
        println!(
            "  count {:>10}: {:>10} ({:+.2}%; rounds {:.2}% apart; all time over all ops {})   empty {:>10} [{}, {}]",
            c.count,
            format_ns(c.workload_ns_per_op),
            c.workload_vs_largest_count_pct,
            (hi - lo) / c.workload_ns_per_op * 100.0,
            format_ns(c.all_time_ns_per_op),
            format_ns(c.empty_ns_per_op),
            format_ns(c.empty_ci95.0),
            format_ns(c.empty_ci95.1)
        );
    }
    let medians: Vec<f64> = counts.iter().map(|c| c.workload_ns_per_op).collect();
    let (lo, hi) = min_max(&medians);
    println!(
        "  largest difference between counts: {:.2}% (goal: within 1%)",
        (hi / lo - 1.0) * 100.0
    );
    let all_time: Vec<f64> = counts.iter().map(|c| c.all_time_ns_per_op).collect();
    let (all_lo, all_hi) = min_max(&all_time);
    println!(
        "  all the time over all the ops, interruptions included at every count (not what a row reports): largest difference {:.2}%",
        (all_hi / all_lo - 1.0) * 100.0
    );
    if let Some(first) = watches.first() {
        let of_all = |field: fn(&Interruptions) -> f64| {
            stats::median(&watches.iter().map(field).collect::<Vec<_>>())
        };
        let typical = Interruptions {
            per_second: of_all(|w| w.per_second),
            lost_pct: of_all(|w| w.lost_pct),
            ..first.clone()
        };
        let carried: Vec<String> = counts
            .iter()
            .map(|c| {
                let sample_ns = c.workload_ns_per_op * c.count as f64;
                format!("{:.2} at {}", typical.per_span(sample_ns), c.count)
            })
            .collect();
        println!(
            "  the measuring core was interrupted {:.0}/s ({:.2}% of the time; median of the watches before each run): a sample carries {} on average; a row stands on the epochs that neither they nor a slower spell reached unless the call's fixed cost is over {:.0}% of a sample ({:.0}% where each epoch measures its own)",
            typical.per_second,
            typical.lost_pct,
            carried.join(", "),
            summary::FIXED_SHARE * 100.0,
            summary::FIXED_SHARE_IN_EPOCH * 100.0
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
        ratio.value,
        ratio.low,
        ratio.high,
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

/// A busy loop (`sh`) pinned to the last core at nice −20, as long as it
/// lives.
struct Spinner(std::process::Child);

impl Spinner {
    fn start() -> Result<Self> {
        let child = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .context("starting a busy loop")?;
        let pid = child.id() as libc::pid_t;
        let last = core_affinity::get_core_ids()
            .and_then(|ids| ids.last().map(|c| c.id))
            .context("listing the cores")?;
        // SAFETY: `set` is a zeroed cpu_set_t owned here; pid is our child.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(last, &mut set);
            libc::sched_setaffinity(pid, std::mem::size_of::<libc::cpu_set_t>(), &set);
            libc::setpriority(libc::PRIO_PROCESS, pid as libc::id_t, -20);
        }
        println!("busy loop: pid {pid} on core {last}, nice -20");
        Ok(Spinner(child))
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[derive(Debug, Serialize)]
struct FamilyTally {
    runs: usize,
    /// Runs in which every verdict was right.
    all_right: usize,
    verdicts: Vec<Vec<String>>,
    wall_s: Vec<f64>,
}

/// `host compare` of xor, mod13, mod16 and xor again, `runs` times: right
/// means mod13 and mod16 slower than xor, and xor the same as itself.
fn family(files: &[&Path], runs: usize) -> Result<FamilyTally> {
    println!("four variants (xor, mod13, mod16, xor): {runs} separate `host compare` runs");
    let expected = ["slower", "slower", "same"];
    let mut tally = FamilyTally {
        runs,
        all_right: 0,
        verdicts: Vec::new(),
        wall_s: Vec::new(),
    };
    for _ in 0..runs {
        let start = Instant::now();
        let report = run_host(&["compare"], files, &[])?;
        tally.wall_s.push(start.elapsed().as_secs_f64());
        let verdicts: Vec<String> = report["comparisons"]
            .as_array()
            .map(|cs| {
                cs.iter()
                    .map(|c| c["verdict"].as_str().unwrap_or("?").to_string())
                    .collect()
            })
            .unwrap_or_default();
        let right = verdicts == expected;
        tally.all_right += usize::from(right);
        println!(
            "  {} in {:.2} s{}",
            verdicts.join(", "),
            tally.wall_s.last().copied().unwrap_or(0.0),
            if right { "" } else { "  (wrong)" }
        );
        tally.verdicts.push(verdicts);
    }
    println!(
        "  every verdict right in {} of {runs}; wall time median {:.2} s",
        tally.all_right,
        stats::median(&tally.wall_s)
    );
    Ok(tally)
}

fn verdicts(pair: &str, a: &Path, b: &Path, runs: usize) -> Result<VerdictTally> {
    verdicts_with(pair, a, b, runs, &[])
}

fn verdicts_with(
    pair: &str,
    a: &Path,
    b: &Path,
    runs: usize,
    extra: &[&str],
) -> Result<VerdictTally> {
    println!(
        "{pair}: {runs} separate `host compare {}` runs",
        extra.join(" ")
    );
    let mut tally = VerdictTally {
        pair: pair.to_string(),
        runs,
        verdicts: Vec::new(),
        ratios: Vec::new(),
        wall_s: Vec::new(),
    };
    for _ in 0..runs {
        let start = Instant::now();
        let report = run_host(&["compare"], &[a, b], extra)?;
        tally.wall_s.push(start.elapsed().as_secs_f64());
        let ratio = comparison_ratio(&report)?;
        let verdict = report
            .pointer("/comparisons/0/verdict")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string();
        println!(
            "  {verdict:<7} ratio {:.4} [{:.4}, {:.4}] in {:.2} s",
            ratio.value,
            ratio.low,
            ratio.high,
            tally.wall_s.last().copied().unwrap_or(0.0)
        );
        tally.verdicts.push(verdict);
        tally.ratios.push((ratio.value, ratio.low, ratio.high));
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
    println!(
        "  verdicts: {}; wall time median {:.2} s, max {:.2} s",
        summary.join(", "),
        stats::median(&tally.wall_s),
        min_max(&tally.wall_s).1
    );
    Ok(tally)
}

fn intervals(path: &Path, runs: usize) -> Result<IntervalFit> {
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
        medians.push(number(&row, "/ns_per_op/median")?);
        bounds.push((
            number(&row, "/ns_per_op/ci95_low")?,
            number(&row, "/ns_per_op/ci95_high")?,
        ));
        processes.push(number(&row, "/processes")? as u64);
        drift.push((
            row.pointer("/run_drift_pct").and_then(Value::as_f64),
            number(&row, "/run_drift_runs")?,
            row.pointer("/earlier_runs_departure_pct")
                .and_then(Value::as_f64),
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

/// Rounds of the program agreement: `host run`, then reference processes.
const AGREEMENT_ROUNDS: usize = 10;
/// Fresh reference processes per round, as a run has worker processes: a
/// process's code lands where it lands, and some programs run at a speed
/// that differs from process to process.
const REFERENCE_PROCESSES: usize = 5;

/// What a reference process prints.
#[derive(Debug, Serialize, serde::Deserialize)]
struct ReferenceTiming {
    /// The median execute time of the iterations it timed.
    execute_ns: f64,
    /// Its code is byte for byte what the harness's engine compiles.
    identical_code: bool,
    text_bytes: usize,
}

fn program_agreement(path: &Path) -> Result<ProgramAgreement> {
    println!(
        "programs: {} under `host run` against the same _start timed in fresh processes on an engine of wasmtime's defaults ({AGREEMENT_ROUNDS} alternating rounds of one run and {REFERENCE_PROCESSES} processes)",
        path.display()
    );
    let mut host_run = Vec::new();
    let mut reference = Vec::new();
    let mut identical_code = true;
    for round in 0..AGREEMENT_ROUNDS {
        let row = result_row(&run_host(&["run"], &[path], &[])?)?;
        host_run.push(number(&row, "/phases/execute_ns/median")?);
        // As many iterations as the run timed, so that both sides span
        // about as much of the machine's time.
        let iterations = (number(&row, "/samples")? as usize / REFERENCE_PROCESSES).max(10);
        let mut processes = Vec::new();
        for _ in 0..REFERENCE_PROCESSES {
            let timing = run_reference(path, iterations)?;
            if round == 0 && processes.is_empty() {
                println!(
                    "  compiled code of the harness's engine and of wasmtime's defaults: {} ({} bytes of .text)",
                    if timing.identical_code {
                        "identical"
                    } else {
                        "DIFFERENT"
                    },
                    timing.text_bytes
                );
            }
            identical_code &= timing.identical_code;
            processes.push(timing.execute_ns);
        }
        reference.push(stats::median(&processes));
    }
    let ratio = stats::median(&host_run) / stats::median(&reference);
    let neighbours: Vec<f64> = host_run
        .iter()
        .zip(&reference)
        .map(|(h, p)| h / p)
        .collect();
    let ratio_of_neighbours = stats::median(&neighbours);
    for (h, p) in host_run.iter().zip(&reference) {
        println!("  host run {} · reference {}", format_ns(*h), format_ns(*p));
    }
    println!(
        "  median: host run {} · reference {} · ratio {ratio:.4}; median of each round's ratio {ratio_of_neighbours:.4} (goal: within 1%)",
        format_ns(stats::median(&host_run)),
        format_ns(stats::median(&reference))
    );
    Ok(ProgramAgreement {
        workload: path.display().to_string(),
        identical_code,
        host_run_medians_ns: host_run,
        reference_medians_ns: reference,
        ratio,
        ratio_of_neighbours,
    })
}

/// Time `path` in a fresh reference process of this binary.
fn run_reference(path: &Path, iterations: usize) -> Result<ReferenceTiming> {
    let exe = std::env::current_exe().context("locating the host binary")?;
    let output = Command::new(exe)
        .arg("selftest-reference")
        .arg(path)
        .args(["--iterations", &iterations.to_string()])
        .output()
        .context("starting a reference process")?;
    if !output.status.success() {
        bail!(
            "a reference process failed: {}",
            String::from_utf8_lossy(&output.stderr)
                .lines()
                .last()
                .unwrap_or("")
        );
    }
    serde_json::from_slice(&output.stdout).context("reading a reference process's timing")
}

/// A reference process of the program check: time `_start` between
/// `bench.start` and `bench.end` on an engine of wasmtime's defaults (no
/// epoch checks, no fuel, nothing of the harness), on a measuring thread
/// prepared as a worker's is, and print the median as JSON.
pub fn reference(args: &ReferenceArgs) -> Result<()> {
    use crate::guest::engine::Engines;
    use crate::guest::format::Code;
    use crate::guest::limits::Limits;
    use crate::guest::program::Program;
    use crate::options::{EngineConfig, Grants, PinRequest, PriorityRequest};

    let engine = wasmtime::Engine::new(&wasmtime::Config::new())
        .map_err(anyhow::Error::from)
        .context("creating a default engine")?;
    let bytes = crate::guest::load::read_binary(&args.file, u64::MAX)?;
    let module = wasmtime::Module::new(&engine, &bytes)
        .map_err(anyhow::Error::from)
        .context("compiling the program")?;
    // The code the harness times, compiled by its own engine: the same
    // machine code, byte for byte, when nothing of the harness is in it.
    let ours = Engines::new(EngineConfig::default(), None)?;
    let timed = wasmtime::Module::new(&ours.fast, &bytes)
        .map_err(anyhow::Error::from)
        .context("compiling the program")?;
    let identical_code = timed.text() == module.text();
    let text_bytes = module.text().len();
    let program = Program::new(
        &args.file,
        &Code::Module(module),
        &Grants::default(),
        Limits {
            max_memory_bytes: 1 << 30,
        },
    )?;
    crate::platform::thread::prepare_measuring_thread(PinRequest::Quietest, PriorityRequest::Nice);
    program.iterate()?;
    let mut times = Vec::with_capacity(args.iterations);
    for _ in 0..args.iterations {
        times.extend(program.iterate()?.execute_ns);
    }
    let timing = ReferenceTiming {
        execute_ns: stats::median(&times),
        identical_code,
        text_bytes,
    };
    serde_json::to_writer(std::io::stdout().lock(), &timing).context("writing the reference timing")
}

/// The smallest and the largest of `values`.
fn min_max(values: &[f64]) -> (f64, f64) {
    values
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &m| (lo.min(m), hi.max(m)))
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
        value: number(report, "/comparisons/0/ratio")?,
        low: number(report, "/comparisons/0/ci95_low")?,
        high: number(report, "/comparisons/0/ci95_high")?,
    })
}

/// All the time of a row's samples over all their ops: each sample less
/// the row's fixed cost, summed, over the samples times the count. Unlike
/// the median of epochs, it keeps every interruption, at any count.
fn all_time_per_op(row: &Value) -> Result<f64> {
    let per_op = every_sample_per_op(row)?;
    Ok(per_op.iter().sum::<f64>() / per_op.len() as f64)
}

/// Every sample of a row, less the fixed cost, per op: the interrupted
/// ones and those of slow spells included (a row's epochs may leave them
/// out).
fn every_sample_per_op(row: &Value) -> Result<Vec<f64>> {
    let fixed = number(row, "/fixed_cost_ns")?;
    let count = number(row, "/count")?;
    Ok(flattened(row, "/raw_samples_ns")?
        .into_iter()
        .map(|ns| (ns - fixed) / count)
        .collect())
}

/// The numbers of a row's field that holds them block by block, in one list.
fn flattened(row: &Value, pointer: &str) -> Result<Vec<f64>> {
    Ok(row
        .pointer(pointer)
        .and_then(Value::as_array)
        .with_context(|| format!("a run's JSON lacks {pointer}"))?
        .iter()
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(Value::as_f64)
        .collect())
}

fn number(row: &Value, pointer: &str) -> Result<f64> {
    row.pointer(pointer)
        .and_then(Value::as_f64)
        .with_context(|| format!("a run's JSON lacks {pointer}"))
}
