//! The machine check: what interrupts each core, as a thread spinning on it
//! sees it, and the spread of xor's samples in one run at a short and at a
//! long count.

use std::path::Path;
use std::time::Duration;

use anyhow::{Result, bail};
use serde::Serialize;

use crate::analysis::stats;
use crate::command::selftest::runs::*;
use crate::output::units::format_ns;
use crate::platform::gaps::{self, Interruptions};

/// The machine under the harness.
#[derive(Debug, Serialize)]
pub(super) struct Machine {
    interruptions: Vec<Interruptions>,
    samples: Vec<SampleSpread>,
}

/// The spread of one run's per-op samples (corrected epochs), in ns.
#[derive(Debug, Serialize)]
pub(super) struct SampleSpread {
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

/// How long each core is watched.
pub(super) const WATCH: Duration = Duration::from_secs(2);
/// The counts whose samples are spread out: a sample of about 250 µs and one
/// of about 2.5 ms.
pub(super) const SPREAD_COUNTS: [u64; 2] = [1_000_000, 10_000_000];

pub(super) fn machine(xor: &Path) -> Result<Machine> {
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
        let mut per_op = every_sample_per_op(&row);
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
