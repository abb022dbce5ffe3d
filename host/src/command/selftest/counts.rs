//! The count-independence check: per-op time at counts 10^3 to 10^7, for
//! xor in rounds of every count on one core, and for the empty guest.

use std::path::Path;

use anyhow::Result;
use serde::Serialize;

use crate::analysis::{estimate, stats};
use crate::command::selftest::runs::*;
use crate::output::units::format_ns;
use crate::platform::gaps::Interruptions;
use crate::results::RunReport;

/// Counts for the count-independence check.
pub(super) const COUNTS: [u64; 5] = [1_000, 10_000, 100_000, 1_000_000, 10_000_000];
/// Rounds of the count check: every count once per round, the order rotated,
/// so that the machine's drift over the check falls on every count alike.
pub(super) const COUNT_ROUNDS: usize = 5;

#[derive(Debug, Serialize)]
pub(super) struct CountFigures {
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

pub(super) fn count_independence(xor: &Path, empty: &Path) -> Result<Vec<CountFigures>> {
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
    let run = |file: &Path, extra: &[&str]| -> Result<RunReport> {
        let mut args = extra.to_vec();
        if let Some(core) = &core {
            args.extend(["--core", core.as_str()]);
        }
        run_host(&["run"], &[file], &args)
    };
    let default_empty = result_row(&run(empty, &[])?)?;
    println!(
        "empty guest, default run: {} per op [{}, {}]",
        format_ns(default_empty.ns_per_op.median),
        format_ns(default_empty.ns_per_op.ci95_low),
        format_ns(default_empty.ns_per_op.ci95_high)
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
            if let Some(watched) = &report.environment.interruptions {
                watches.push(watched.clone());
            }
            let row = result_row(&report)?;
            rounds[i].push(row.ns_per_op.median);
            all_time[i].push(all_time_per_op(&row));
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
            empty_ns_per_op: empty.ns_per_op.median,
            empty_ci95: (empty.ns_per_op.ci95_low, empty.ns_per_op.ci95_high),
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
    print_interruptions(&watches, &counts);
    Ok(counts)
}

/// What interrupted the measuring core (the median of the watches before
/// each run), and how many interruptions a sample carries at each count.
fn print_interruptions(watches: &[Interruptions], counts: &[CountFigures]) {
    let Some(first) = watches.first() else {
        return;
    };
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
        estimate::FIXED_FRACTION * 100.0,
        estimate::FIXED_FRACTION_IN_EPOCH * 100.0
    );
}
