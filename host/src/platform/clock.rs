//! Calibrate the clock before trusting it: its resolution and the cost of one
//! read.
//!
//! The clock is `std::time::Instant` (CLOCK_MONOTONIC on Linux). Resolution
//! is the smallest step seen between two successive reads; the cost of a read
//! comes from many back-to-back reads, as classic timer classes do at start-up
//! (divan's `time/timer.rs` does the same). This module measures the clock;
//! it does not time workloads.

use std::hint::black_box;
use std::time::Instant;

use serde::Serialize;

/// Reads per round when measuring the cost of one read.
const READS_PER_ROUND: u32 = 10_000;
/// Rounds of back-to-back reads; the median round is kept.
const ROUNDS: usize = 5;
/// Times the clock is watched for a step when measuring its resolution.
const STEP_TRIALS: usize = 1_000;

/// What the clock can resolve and what reading it costs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ClockCalibration {
    /// Smallest step seen between two successive reads, in ns.
    pub resolution_ns: f64,
    /// Cost of one read, in ns.
    pub overhead_ns: f64,
}

/// Measure the clock on the calling thread.
pub fn calibrate() -> ClockCalibration {
    ClockCalibration {
        resolution_ns: resolution_ns(),
        overhead_ns: overhead_ns(),
    }
}

fn resolution_ns() -> f64 {
    let mut smallest = u128::MAX;
    for _ in 0..STEP_TRIALS {
        let start = Instant::now();
        let step = loop {
            let now = Instant::now();
            if now != start {
                break now.duration_since(start).as_nanos();
            }
        };
        smallest = smallest.min(step);
    }
    smallest as f64
}

fn overhead_ns() -> f64 {
    let mut rounds: Vec<f64> = (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..READS_PER_ROUND {
                black_box(Instant::now());
            }
            start.elapsed().as_nanos() as f64 / f64::from(READS_PER_ROUND)
        })
        .collect();
    rounds.sort_by(f64::total_cmp);
    rounds[ROUNDS / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibration_is_positive_and_finite() {
        // No absolute times are asserted: only that the figures are sane.
        let c = calibrate();
        assert!(c.resolution_ns > 0.0 && c.resolution_ns.is_finite());
        assert!(c.overhead_ns > 0.0 && c.overhead_ns.is_finite());
    }
}
