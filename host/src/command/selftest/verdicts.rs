//! The verdict checks: pairs compared again and again (A against A, a real
//! difference, small differences, under a busy loop), and a family of
//! variants compared at once.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::analysis::stats;
use crate::command::selftest::runs::*;
use crate::results::CompareReport;

#[derive(Debug, Serialize)]
pub(super) struct VerdictTally {
    pair: String,
    runs: usize,
    verdicts: Vec<String>,
    ratios: Vec<(f64, f64, f64)>,
    wall_s: Vec<f64>,
}

/// A busy loop (`sh`) pinned to the last core at nice −20, as long as it
/// lives.
pub(super) struct Spinner(std::process::Child);

impl Spinner {
    pub(super) fn start() -> Result<Self> {
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
pub(super) struct FamilyTally {
    runs: usize,
    /// Runs in which every verdict was right.
    all_right: usize,
    verdicts: Vec<Vec<String>>,
    wall_s: Vec<f64>,
}

/// `host compare` of xor, mod13, mod16 and xor again, `runs` times: right
/// means mod13 and mod16 slower than xor, and xor the same as itself.
pub(super) fn family(files: &[&Path], runs: usize) -> Result<FamilyTally> {
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
        let report: CompareReport = run_host(&["compare"], files, &[])?;
        tally.wall_s.push(start.elapsed().as_secs_f64());
        let verdicts: Vec<String> = report
            .comparisons
            .iter()
            .map(|c| c.verdict.to_string())
            .collect();
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

pub(super) fn verdicts(pair: &str, a: &Path, b: &Path, runs: usize) -> Result<VerdictTally> {
    verdicts_with(pair, a, b, runs, &[])
}

pub(super) fn verdicts_with(
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
        let report: CompareReport = run_host(&["compare"], &[a, b], extra)?;
        tally.wall_s.push(start.elapsed().as_secs_f64());
        let ratio = comparison_ratio(&report)?;
        let verdict = first_verdict(&report).to_string();
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
