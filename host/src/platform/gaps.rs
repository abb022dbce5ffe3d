//! What interrupts a core, as a thread spinning on it sees it: the gaps
//! between consecutive clock reads that are far longer than a read. On a
//! virtual machine most of them come from below the guest (the hypervisor)
//! and are charged to the thread, so that no clock leaves them out: a timed
//! sample carries, on average, its length times the time they take. A watch
//! that loses a large share of its time to them shares the core with other
//! work: the machine is busy.
//!
//! This module watches a core; it times no workload.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A gap between two clock reads longer than this is an interruption.
pub const THRESHOLD: Duration = Duration::from_micros(1);

/// How long `host run` watches the measuring core before it starts: long
/// enough to see about a hundred interruptions on a virtual machine that
/// has thousands per second.
pub const BEFORE_A_RUN: Duration = Duration::from_millis(30);

/// Interruptions of one core over a watch.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Interruptions {
    pub core: usize,
    /// How long the core was watched, in seconds.
    pub watched_s: f64,
    /// Interruptions per second.
    pub per_second: f64,
    /// Share of the watch they took, in percent.
    pub lost_pct: f64,
    /// Their lengths' median, 90th and 99th percentiles (nearest rank) and
    /// maximum, in ns.
    pub p50_ns: f64,
    pub p90_ns: f64,
    pub p99_ns: f64,
    pub max_ns: f64,
}

/// Watch `core` for `duration` from a thread pinned to it that reads the
/// clock back to back; `None` if the thread could not be pinned there.
pub fn watch(core: usize, duration: Duration) -> Option<Interruptions> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                if !core_affinity::set_for_current(core_affinity::CoreId { id: core }) {
                    return None;
                }
                let mut gaps: Vec<f64> = Vec::with_capacity(1 << 16);
                let start = Instant::now();
                let mut previous = start;
                loop {
                    let now = Instant::now();
                    let gap = now.duration_since(previous);
                    if gap > THRESHOLD && gaps.len() < gaps.capacity() {
                        gaps.push(gap.as_nanos() as f64);
                    }
                    previous = now;
                    if now.duration_since(start) >= duration {
                        break;
                    }
                }
                let watched = previous.duration_since(start).as_secs_f64();
                Some(summarize(core, watched, gaps))
            })
            .join()
            .ok()
            .flatten()
    })
}

/// The figures of `gaps` (ns) seen over `watched_s` seconds.
fn summarize(core: usize, watched_s: f64, mut gaps: Vec<f64>) -> Interruptions {
    gaps.sort_by(f64::total_cmp);
    let quantile = |q: f64| match gaps.len() {
        0 => 0.0,
        n => gaps[((n - 1) as f64 * q).round() as usize],
    };
    let lost_ns: f64 = gaps.iter().sum();
    Interruptions {
        core,
        watched_s,
        per_second: gaps.len() as f64 / watched_s.max(f64::MIN_POSITIVE),
        lost_pct: lost_ns / (watched_s * 1e9).max(f64::MIN_POSITIVE) * 100.0,
        p50_ns: quantile(0.5),
        p90_ns: quantile(0.9),
        p99_ns: quantile(0.99),
        max_ns: gaps.last().copied().unwrap_or(0.0),
    }
}

/// Share of a core's time (percent) lost to interruptions from which samples
/// of a millisecond or more read measurably high.
pub const NOTABLE_LOST_PCT: f64 = 0.5;

/// Share of a core's time (percent) lost to interruptions from which the
/// watching thread, at normal priority, is taken to share the core with
/// other work: the machine is busy.
pub const BUSY_LOST_PCT: f64 = 25.0;

impl Interruptions {
    /// How many of them a span of `span_ns` carries on average.
    pub fn per_span(&self, span_ns: f64) -> f64 {
        self.per_second * span_ns / 1e9
    }

    /// Whether they take enough of the time to move a long sample
    /// (at least [`NOTABLE_LOST_PCT`]).
    pub fn notable(&self) -> bool {
        self.lost_pct >= NOTABLE_LOST_PCT
    }

    /// Whether they take so much of the time that the core is shared with
    /// other work (at least [`BUSY_LOST_PCT`]).
    pub fn busy(&self) -> bool {
        self.lost_pct >= BUSY_LOST_PCT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_are_counted_and_measured() {
        let gaps = vec![2_000.0, 10_000.0, 4_000.0, 1_500.0];
        let i = summarize(0, 0.5, gaps);
        assert_eq!(i.per_second, 8.0);
        // 17.5 µs of 0.5 s.
        assert!((i.lost_pct - 0.0035).abs() < 1e-12, "{}", i.lost_pct);
        assert_eq!(i.max_ns, 10_000.0);
        // Nearest rank: the third of four.
        assert_eq!(i.p50_ns, 4_000.0);
        assert!(!i.busy());
    }

    #[test]
    fn a_core_that_loses_a_quarter_of_its_time_is_busy() {
        // 100 ms lost of 0.4 s: the watching thread shared its core.
        let i = summarize(0, 0.4, vec![50e6, 50e6]);
        assert!(i.busy() && i.notable(), "{i:?}");
    }

    #[test]
    fn a_quiet_watch_is_all_zeros() {
        let i = summarize(1, 1.0, Vec::new());
        assert_eq!(
            (i.per_second, i.lost_pct, i.p50_ns, i.max_ns),
            (0.0, 0.0, 0.0, 0.0)
        );
    }

    #[test]
    fn a_watch_takes_about_as_long_as_asked() {
        let core = core_affinity::get_core_ids()
            .and_then(|ids| ids.first().map(|c| c.id))
            .unwrap_or(0);
        if let Some(i) = watch(core, Duration::from_millis(20)) {
            assert!(i.watched_s >= 0.02 && i.watched_s < 5.0, "{i:?}");
            assert!(i.lost_pct >= 0.0 && i.lost_pct <= 100.0, "{i:?}");
        }
    }
}
