//! A row's two 95% intervals of its median, answering two questions: how
//! precisely this run pinned its median (**this run**: between its worker
//! processes alone), and where the median of another run would land (**a
//! later run**: this run's interval widened by the drift measured between
//! earlier runs of the same row, by `--drift`, to hold every process on a
//! busy machine or while too few earlier runs measure the drift, and
//! reaching back to the earlier runs when this one departs from them). Drift is relative, so widening happens on the log
//! scale: an interval never reaches below zero and is symmetric in ratio.
//! Neither interval reaches further than [`BEYOND_MEASURED`] beyond what the
//! processes measured: this run's, for this run's interval; this run's and
//! the earlier runs' kept today, for a later run's. Pure arithmetic.

use crate::analysis::drift::{Earlier, RunDrift};
use crate::analysis::estimate::Estimate;
use crate::analysis::stats;
use crate::options::Headline;

/// How far beyond the fastest and the slowest process measured an
/// interval may reach, as a ratio: a later run's median is the median of
/// its processes, and a day's processes of one row span its modes and its
/// speed steps, so an interval past them by more than this is no longer
/// an estimate of anything measured.
pub const BEYOND_MEASURED: f64 = 1.1;

/// The 97.5% quantile of the normal law, for a stated drift.
const Z_975: f64 = 1.959_963_984_540_054;

/// What widens a later run's interval beyond this run's, and which of the
/// two a row shows.
#[derive(Debug, Clone, Copy, Default)]
pub struct Drift {
    /// `--drift`: a stated relative sd, in percent (0: none).
    pub stated_pct: f64,
    /// Measured over earlier runs on this machine, when there were enough.
    pub measured: Option<RunDrift>,
    /// Whether the earlier runs were read (a store, not `--no-store`).
    pub read: bool,
    /// How many earlier runs of this row count.
    pub earlier_runs: usize,
    /// The least and the greatest process median of those runs, ns.
    pub earlier_range_ns: Option<(f64, f64)>,
    /// Whether the machine was busy before the run: its processes then see
    /// different contention, and the run may not repeat.
    pub busy_machine: bool,
    /// Which interval the row shows (`--interval`).
    pub shown: Headline,
}

/// A row's two intervals, and what shaped the later run's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Intervals {
    /// Between this run's processes, bounded by what they measured.
    pub this_run: (f64, f64),
    /// Where a later run's median may land.
    pub later_run: (f64, f64),
    /// Whether this run departs from the median of its earlier runs
    /// beyond both intervals (the later run's then reaches back to them).
    pub departed: bool,
    /// The bound of the later run's interval, when it cut it.
    pub bounded: Option<(f64, f64)>,
}

/// The intervals of a row of median `median`, `estimate`d over its
/// processes, given what widens it (`drift`).
pub fn intervals(median: f64, estimate: &Estimate, drift: &Drift) -> Intervals {
    let measured = &estimate.process_medians;
    let this_run = clamp((estimate.low, estimate.high), bound(median, measured, None));
    let extra = Z_975 * drift.stated_pct.max(0.0) / 100.0;
    let extra = match drift.measured {
        Some(d) => extra.hypot(stats::student_t_975(d.df) * d.rel_sd),
        None => extra,
    };
    let mut wide = widen_log(median, this_run, extra);
    // Busy, or with no drift measured between runs yet, the spread between
    // this run's processes is what a later run's may be: it holds them.
    if drift.busy_machine || drift.measured.is_none() {
        wide = spanning(wide, measured);
    }
    let (wide, departed) = reach_back(wide, drift.measured.and_then(|d| d.earlier));
    let limit = bound(median, measured, drift.earlier_range_ns);
    let later_run = clamp(wide, limit);
    Intervals {
        this_run,
        later_run,
        departed,
        bounded: (later_run != wide).then_some(limit),
    }
}

/// `wide`, a later run's interval, and whether it departs from the
/// `earlier` runs' median (with its margin): a run that departs holds that
/// median too.
pub fn reach_back(wide: (f64, f64), earlier: Option<Earlier>) -> ((f64, f64), bool) {
    match earlier {
        Some(e) => (e.widen_to_hold(wide.0, wide.1), e.apart(wide.0, wide.1)),
        None => (wide, false),
    }
}

/// `[low, high]` widened on each side by `extra` (relative) in quadrature
/// on the log scale around `centre`; a side that reaches 0 or below stays
/// there. Where the centre is no positive time (a row of no work), on the
/// linear scale, `extra` of its size.
pub fn widen_log(centre: f64, (low, high): (f64, f64), extra: f64) -> (f64, f64) {
    if extra == 0.0 || extra.is_nan() {
        return (low, high);
    }
    if !(centre > 0.0 && centre.is_finite()) {
        return stats::widen(centre, low, high, extra * centre.abs());
    }
    let side = |end: f64| match end > 0.0 {
        true => (end / centre).ln().abs(),
        false => f64::INFINITY,
    };
    let below = side(low.min(centre)).hypot(extra);
    let above = side(high.max(centre)).hypot(extra);
    (centre * (-below).exp(), centre * above.exp())
}

/// The hull of `[low, high]` and every one of `medians` (NaNs left out).
pub fn spanning((low, high): (f64, f64), medians: &[f64]) -> (f64, f64) {
    medians
        .iter()
        .filter(|m| !m.is_nan())
        .fold((low, high), |(low, high), &m| (low.min(m), high.max(m)))
}

/// How far an interval around `median` may reach: [`BEYOND_MEASURED`]
/// past the least and the greatest of `medians`, `median` and `earlier`
/// (the earlier runs' processes). Unbounded where any is no positive time.
fn bound(median: f64, medians: &[f64], earlier: Option<(f64, f64)>) -> (f64, f64) {
    let mut all: Vec<f64> = medians.iter().copied().filter(|m| !m.is_nan()).collect();
    all.push(median);
    if let Some((low, high)) = earlier {
        all.extend([low, high]);
    }
    if all.iter().any(|m| !(*m > 0.0 && m.is_finite())) {
        return (f64::NEG_INFINITY, f64::INFINITY);
    }
    let least = all.iter().copied().fold(f64::INFINITY, f64::min);
    let greatest = all.iter().copied().fold(0.0, f64::max);
    (least / BEYOND_MEASURED, greatest * BEYOND_MEASURED)
}

/// `[low, high]` cut to `limit` (NaN ends stay NaN).
fn clamp((low, high): (f64, f64), (least, greatest): (f64, f64)) -> (f64, f64) {
    let cut = |end: f64| match end.is_nan() {
        true => end,
        false => end.clamp(least, greatest),
    };
    (cut(low), cut(high))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::drift::Earlier;
    use crate::analysis::estimate::Location;

    fn estimate(low: f64, high: f64, medians: &[f64]) -> Estimate {
        Estimate {
            location: Location::Every,
            per_process: Vec::new(),
            left_out: 0,
            every_median: 100.0,
            centre: 100.0,
            process_medians: medians.to_vec(),
            low,
            high,
            sample_ns: 1e6,
        }
    }

    fn measured(rel_sd: f64, runs: usize, range: (f64, f64)) -> Drift {
        Drift {
            measured: Some(RunDrift {
                rel_sd,
                df: runs - 1,
                runs,
                own: true,
                earlier: None,
            }),
            earlier_runs: runs,
            earlier_range_ns: Some(range),
            ..Drift::default()
        }
    }

    /// A drift of 20% widens on the log scale: symmetric in ratio, never
    /// below zero.
    #[test]
    fn drift_widens_in_ratio() {
        let e = estimate(99.0, 101.0, &[99.0, 100.0, 101.0]);
        let i = intervals(100.0, &e, &measured(0.2, 30, (10.0, 1000.0)));
        let (low, high) = i.later_run;
        assert!(low > 0.0);
        assert!(
            ((100.0 / low) - (high / 100.0)).abs() < 0.01,
            "{low} {high}"
        );
        let expected = (stats::student_t_975(29) * 0.2f64).hypot(0.01005).exp();
        assert!((high / 100.0 - expected).abs() < 1e-3, "{high} {expected}");
        assert_eq!(i.this_run, (99.0, 101.0));
        assert_eq!(i.bounded, None);
    }

    /// However wide the drift, a later run's interval stops at 10% past
    /// the processes measured today (this run's and the earlier runs'),
    /// and this run's at 10% past its own.
    #[test]
    fn intervals_stop_short_of_what_nobody_measured() {
        // bz2's processes: two modes; the t interval over five processes
        // reaches below both.
        let e = estimate(4.97e6, 8.0e6, &[6.1e6, 6.2e6, 6.3e6, 8.5e6, 9.0e6]);
        let i = intervals(6.3e6, &e, &measured(0.195, 5, (6.05e6, 9.4e6)));
        assert_eq!(i.this_run, (6.1e6 / 1.1, 8.0e6));
        assert_eq!(i.later_run, (6.05e6 / 1.1, 9.4e6 * 1.1));
        assert_eq!(i.bounded, Some((6.05e6 / 1.1, 9.4e6 * 1.1)));
        // The done-when of this rule: within [0.8 x, 1.25 x] of every
        // process measured.
        assert!(i.later_run.0 >= 0.8 * 6.05e6 && i.later_run.1 <= 1.25 * 9.4e6);
    }

    /// Without earlier runs (an empty store, or `--no-store`) a later run's
    /// interval is this run's, widened to hold every one of its processes.
    #[test]
    fn without_earlier_runs_a_later_run_spans_the_processes() {
        let e = estimate(99.0, 101.0, &[97.0, 100.0, 104.0]);
        let i = intervals(100.0, &e, &Drift::default());
        assert_eq!(i.this_run, (99.0, 101.0));
        assert_eq!(i.later_run, (97.0, 104.0));
        assert!(!i.departed);
    }

    #[test]
    fn a_departing_run_reaches_back_within_the_bound() {
        let e = estimate(103.5, 103.9, &[103.5, 103.7, 103.9]);
        let mut drift = measured(0.001, 12, (99.0, 101.0));
        drift.measured = drift.measured.map(|d| RunDrift {
            earlier: Some(Earlier {
                median_ns: 100.0,
                rel_margin: 0.002,
                runs: 12,
            }),
            ..d
        });
        let i = intervals(103.7, &e, &drift);
        assert!(i.departed);
        assert!(i.later_run.0 < 100.0 && i.later_run.1 >= 103.9, "{i:?}");
    }

    #[test]
    fn the_busy_machine_spans_the_processes_and_no_work_stays_linear() {
        let e = estimate(100.0, 101.0, &[99.0, 100.5, 110.0]);
        let busy = Drift {
            busy_machine: true,
            ..Drift::default()
        };
        assert_eq!(intervals(100.5, &e, &busy).later_run, (99.0, 110.0));
        // The empty guest: a median a hair below 0 widens linearly.
        assert_eq!(widen_log(-0.001, (-0.002, 0.0), 0.0), (-0.002, 0.0));
        let (low, high) = widen_log(-0.001, (-0.002, 0.0), 1.0);
        assert!(low < -0.002 && high > 0.0);
        // An end at or below 0 stays at 0 on the log scale.
        assert_eq!(widen_log(1.0, (-0.5, 2.0), 0.1).0, 0.0);
    }
}
