//! Deterministic cost from Callgrind: read the events of one dump, and turn
//! two dumps (a call at `n` ops and at `2n`) into counts per op, so that the
//! call's fixed cost cancels as it does for fuel.
//!
//! The estimated cycle count is Sightglass's weighting of Callgrind's
//! events: instructions + 10 × L1 misses + 300 × last-level misses + 15 ×
//! branch mispredictions, where L1 misses are I1mr + D1mr + D1mw, last-level
//! misses ILmr + DLmr + DLmw, and mispredictions Bcm + Bim (conditional and
//! indirect). It is a model of a machine, not this machine: it moves when
//! the code the engine makes moves, and repeats to the last digit.

use anyhow::{Context, Result, bail};

use crate::results::CallgrindCounts;

/// Weight of an L1 miss in the cycle estimate.
pub const L1_MISS_CYCLES: f64 = 10.0;
/// Weight of a last-level miss.
pub const LL_MISS_CYCLES: f64 = 300.0;
/// Weight of a branch misprediction.
pub const MISPREDICT_CYCLES: f64 = 15.0;

/// The events of one dump that the counts need, summed.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Totals {
    pub instructions: u64,
    pub l1_misses: u64,
    pub ll_misses: u64,
    pub mispredictions: u64,
}

/// Read the `events:` line and the `totals:` (or `summary:`) line of a
/// Callgrind output file. Events the run did not simulate count 0.
pub fn parse_dump(text: &str) -> Result<Totals> {
    let mut events: Option<Vec<&str>> = None;
    let mut totals: Option<Vec<u64>> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("events:") {
            events = Some(rest.split_whitespace().collect());
        } else if let Some(rest) = line
            .strip_prefix("totals:")
            .or_else(|| line.strip_prefix("summary:"))
        {
            totals = Some(
                rest.split_whitespace()
                    .map(|v| v.parse::<u64>())
                    .collect::<Result<Vec<u64>, _>>()
                    .context("a number in the totals line")?,
            );
        }
    }
    let events = events.context("no `events:` line")?;
    let totals = totals.context("no `totals:` line")?;
    if totals.len() > events.len() {
        bail!("more totals than events");
    }
    let get = |name: &str| {
        events
            .iter()
            .position(|e| *e == name)
            .and_then(|i| totals.get(i).copied())
            .unwrap_or(0)
    };
    Ok(Totals {
        instructions: get("Ir"),
        l1_misses: get("I1mr") + get("D1mr") + get("D1mw"),
        ll_misses: get("ILmr") + get("DLmr") + get("DLmw"),
        mispredictions: get("Bcm") + get("Bim"),
    })
}

/// Counts of `totals`, divided by `by` (iterations or regions).
pub fn counts(totals: Totals, by: f64) -> CallgrindCounts {
    let f = |x: u64| x as f64 / by;
    let mut c = CallgrindCounts {
        instructions: f(totals.instructions),
        l1_misses: f(totals.l1_misses),
        ll_misses: f(totals.ll_misses),
        branch_mispredictions: f(totals.mispredictions),
        cycles_est: 0.0,
    };
    c.cycles_est = cycles_est(&c);
    c
}

/// Resolution of misses and mispredictions per op: the simulated caches
/// see where the allocator put the host's data, which moves a counted call
/// by a miss or two; per op, over thousands of ops, that stays below this.
pub const PER_OP_RESOLUTION: f64 = 0.01;

/// Counts per op from a call of `ops` and one of `2 * ops`; misses and
/// mispredictions to [`PER_OP_RESOLUTION`] (instructions are exact).
pub fn per_op(one: Totals, two: Totals, ops: u64) -> CallgrindCounts {
    let d = |a: u64, b: u64| b as f64 - a as f64;
    let n = ops.max(1) as f64;
    // `+ 0.0` makes a rounded -0.0 (one miss fewer in the longer call) 0.
    let resolved = |x: f64| (x / PER_OP_RESOLUTION).round() * PER_OP_RESOLUTION + 0.0;
    let mut c = CallgrindCounts {
        instructions: d(one.instructions, two.instructions) / n,
        l1_misses: resolved(d(one.l1_misses, two.l1_misses) / n),
        ll_misses: resolved(d(one.ll_misses, two.ll_misses) / n),
        branch_mispredictions: resolved(d(one.mispredictions, two.mispredictions) / n),
        cycles_est: 0.0,
    };
    c.cycles_est = cycles_est(&c);
    c
}

/// The estimated cycles of `c`, by the weights above.
pub fn cycles_est(c: &CallgrindCounts) -> f64 {
    c.instructions
        + L1_MISS_CYCLES * c.l1_misses
        + LL_MISS_CYCLES * c.ll_misses
        + MISPREDICT_CYCLES * c.branch_mispredictions
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = "version: 1\ncreator: callgrind-3.19.0\ncmd: host worker\npart: 2\n\
events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim\n\
fn=(1) x\n0 5 1 1\ntotals: 1000 300 200 4 3 2 1 1 0 100 7 10 1\n";

    #[test]
    fn reads_the_totals_by_event_name() {
        let t = parse_dump(DUMP).expect("a dump");
        assert_eq!(
            t,
            Totals {
                instructions: 1000,
                l1_misses: 9,
                ll_misses: 2,
                mispredictions: 8
            }
        );
        // Without cache and branch simulation, only Ir is there.
        let t = parse_dump("events: Ir\nsummary: 42\n").expect("a dump");
        assert_eq!(t.instructions, 42);
        assert_eq!(t.l1_misses + t.ll_misses + t.mispredictions, 0);
        assert!(parse_dump("events: Ir\n").is_err());
        assert!(parse_dump("totals: 1\n").is_err());
    }

    #[test]
    fn per_op_cancels_the_fixed_cost_and_weighs_the_estimate() {
        let fixed = Totals {
            instructions: 500,
            l1_misses: 5,
            ll_misses: 1,
            mispredictions: 3,
        };
        let at = |n: u64| Totals {
            instructions: fixed.instructions + 4 * n,
            l1_misses: fixed.l1_misses + n / 2,
            ll_misses: fixed.ll_misses,
            mispredictions: fixed.mispredictions + n / 4,
        };
        let c = per_op(at(64), at(128), 64);
        assert_eq!(c.instructions, 4.0);
        assert_eq!(c.l1_misses, 0.5);
        assert_eq!(c.ll_misses, 0.0);
        assert_eq!(c.branch_mispredictions, 0.25);
        assert_eq!(c.cycles_est, 4.0 + 10.0 * 0.5 + 15.0 * 0.25);
        // A stray miss in one call is below the resolution per op.
        let mut two = at(4096);
        two.l1_misses += 1;
        let c = per_op(at(2048), two, 2048);
        assert!((c.l1_misses - 0.5).abs() < 1e-12, "{}", c.l1_misses);
        // One miss fewer in the longer call is none per op, not -0.
        let c = per_op(
            fixed,
            Totals {
                l1_misses: 4,
                ..fixed
            },
            2048,
        );
        assert_eq!(format!("{:.2}", c.l1_misses), "0.00");
        let whole = counts(at(64), 2.0);
        assert_eq!(whole.instructions, (500.0 + 256.0) / 2.0);
    }
}
