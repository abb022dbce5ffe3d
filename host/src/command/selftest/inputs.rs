//! The fresh-input check: a data-dependent workload (a branchy binary
//! search over 2^20 keys) at counts 10^3 to 10^6, with a fresh seed per call
//! (the default) and with one seed for every call (`--same-seed`), in
//! rounds of every count on one core. With a replayed input the branch
//! predictor and the caches learn the key sequence at small counts; with a
//! fresh one the per-op time should not move with the count.

use std::path::Path;

use anyhow::Result;
use serde::Serialize;

use crate::analysis::stats;
use crate::command::selftest::runs::*;
use crate::output::units::format_ns;

/// Counts of the fresh-input check.
const COUNTS: [u64; 4] = [1_000, 10_000, 100_000, 1_000_000];
/// Rounds of the check: every count once per round, the order rotated.
const ROUNDS: usize = 3;

#[derive(Debug, Serialize)]
pub(super) struct InputFigures {
    /// `per_call` (a fresh seed per call) or `same` (`--same-seed`).
    seed_rule: &'static str,
    counts: Vec<u64>,
    /// Median over the rounds, per count.
    ns_per_op: Vec<f64>,
    /// Largest over smallest of the medians.
    largest_over_smallest: f64,
}

/// Search at every count, with either seed rule.
pub(super) fn fresh_inputs(search: &Path) -> Result<Vec<InputFigures>> {
    let core = crate::platform::thread::quietest_core().map(|(core, _)| core.to_string());
    println!(
        "fresh input (a branchy binary search over 2^20 keys, ns/op; {ROUNDS} rounds of every count in rotated order):"
    );
    let mut figures = Vec::new();
    for (seed_rule, extra) in [("per_call", None), ("same", Some("--same-seed"))] {
        let mut rounds: Vec<Vec<f64>> = vec![Vec::new(); COUNTS.len()];
        for round in 0..ROUNDS {
            for k in 0..COUNTS.len() {
                let i = (k + round) % COUNTS.len();
                let count = COUNTS[i].to_string();
                let mut args = vec!["--size", "2^20", "--count", &count];
                args.extend(["--processes", "3", "--samples", "9"]);
                args.extend(extra);
                if let Some(core) = &core {
                    args.extend(["--core", core.as_str()]);
                }
                let report = run_host(&["run"], &[search], &args)?;
                rounds[i].push(result_row(&report)?.ns_per_op.median);
            }
        }
        let ns_per_op: Vec<f64> = rounds.iter().map(|r| stats::median(r)).collect();
        let (lo, hi) = min_max(&ns_per_op);
        let shown: Vec<String> = COUNTS
            .iter()
            .zip(&ns_per_op)
            .map(|(c, ns)| format!("{c}: {}", format_ns(*ns)))
            .collect();
        println!(
            "  seed {seed_rule:>8}: {}; largest/smallest {:.2}x (goal with a fresh seed: within 1.5x)",
            shown.join(", "),
            hi / lo
        );
        figures.push(InputFigures {
            seed_rule,
            counts: COUNTS.to_vec(),
            ns_per_op,
            largest_over_smallest: hi / lo,
        });
    }
    Ok(figures)
}
