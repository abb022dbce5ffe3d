//! Calibration, once per worker process and format, before any workload:
//! the cost of one call of the empty guest through the timed path, and the
//! cost of a pause/resume pair that stays inside the clock (subtracted once
//! per pause).
//! The clock itself is calibrated by [`crate::platform::clock`].

use anyhow::{Context, Result};
use serde::Serialize;

use crate::analysis::stats;
use crate::guest::runtime::Sampler;
use crate::platform::clock::ClockCalibration;

/// Figures measured once per worker process and format, before any
/// workload.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Calibration {
    pub clock: ClockCalibration,
    /// Cost of one call of the empty guest with count 1, as seen by the timed
    /// path (two clock reads around a call), in ns.
    pub empty_call_ns: f64,
    /// Cost of a `bench.pause`/`bench.resume` pair that stays inside the
    /// clock, in ns.
    pub pause_pair_ns: f64,
}

/// Measure the calibration figures: the empty guest's call cost and the
/// pause/resume pair cost (none without a `pause_pair` guest: native code
/// has no pauses).
pub fn calibrate(
    clock: ClockCalibration,
    empty: &mut dyn Sampler,
    pause_pair: Option<&mut dyn Sampler>,
) -> Result<Calibration> {
    const PAIRS: u64 = 1_000;
    const CALLS: usize = 500;
    let mut one = Vec::with_capacity(CALLS);
    let mut empty_at_pairs = Vec::with_capacity(CALLS / 10);
    let mut pairs = Vec::with_capacity(CALLS / 10);
    for _ in 0..CALLS {
        one.push(empty.sample(1)?.elapsed_ns);
    }
    let Some(pause_pair) = pause_pair else {
        return Ok(Calibration {
            clock,
            empty_call_ns: stats::median(&one),
            pause_pair_ns: 0.0,
        });
    };
    for _ in 0..CALLS / 10 {
        empty_at_pairs.push(empty.sample(PAIRS)?.elapsed_ns);
        pairs.push(
            pause_pair
                .sample(PAIRS)
                .context("calibrating pause/resume")?
                .elapsed_ns,
        );
    }
    let pause_pair_ns =
        ((stats::median(&pairs) - stats::median(&empty_at_pairs)) / PAIRS as f64).max(0.0);
    Ok(Calibration {
        clock,
        empty_call_ns: stats::median(&one),
        pause_pair_ns,
    })
}
