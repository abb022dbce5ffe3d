//! Run-to-run drift measured on this machine: how far the medians of
//! earlier runs of the same subject (or, while it has too few, of every
//! subject measured on this CPU) spread around their means. Processes of
//! one run share the machine's state of that second, so the variation
//! between them misses slower drift; the history of separate runs measures
//! it instead of assuming a constant.
//!
//! A subject's estimate is the sample standard deviation of its log
//! medians (k runs, k − 1 degrees of freedom, at least [`MIN_DF`]). The
//! machine's is the median subject's (by spread, with that subject's
//! degrees of freedom), so that one wild subject does not set it. A subject
//! with at least [`OWN_DF`] degrees of freedom of its own uses its own;
//! before that, the larger of its own and the machine's, so that a young
//! estimate errs wide; a new subject uses the machine's. The interval then adds t(df) · sd in quadrature
//! ([`crate::analysis::stats::widen`]), so few earlier runs widen it more.
//!
//! The earlier runs of the subject also give where they lie
//! ([`Earlier`]: the median of their medians, with its own 95% margin).
//! Run medians do not scatter like a normal law: most runs agree closely,
//! and now and then a whole run lands on another speed of the CPU, a few
//! percent away. An sd measured over runs that agreed cannot foresee that
//! run, so the interval of a run also holds the earlier runs' median
//! ([`Earlier::widen_to_hold`]): a run that departs from them says so and reaches
//! back, instead of stating a narrow interval a few percent away.

use std::collections::HashMap;

use crate::analysis::stats;
use crate::results::history::{Entry, plausible};

/// Runs older than this (in seconds) no longer count: the machine of last
/// week is not the machine of now.
pub const MAX_AGE_S: u64 = 24 * 3600;

/// Degrees of freedom an estimate needs before it is used.
pub const MIN_DF: usize = 2;
/// Degrees of freedom of its own after which a subject's estimate stands
/// alone.
pub const OWN_DF: usize = 8;

/// The drift between runs, as measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunDrift {
    /// Relative standard deviation of a run's median (0.01 is 1%).
    pub rel_sd: f64,
    /// Degrees of freedom of the estimate.
    pub df: usize,
    /// Earlier runs it was measured over.
    pub runs: usize,
    /// Whether those runs were of this subject (else of this machine).
    pub own: bool,
    /// Where this subject's earlier runs lie, when it has enough of them.
    pub earlier: Option<Earlier>,
}

/// Where the earlier runs of a subject lie: the median of their medians.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Earlier {
    /// The median of the earlier runs' medians, in ns.
    pub median_ns: f64,
    /// The 95% margin of that median, relative (0.01 is 1%):
    /// t(df) · 1.2533 · sd / √runs, the standard error of a median of
    /// normal values.
    pub rel_margin: f64,
    /// How many earlier runs.
    pub runs: usize,
}

impl Earlier {
    /// `[low, high]` widened just enough to hold the earlier runs' median
    /// and its margin: unchanged when the run agrees with them.
    pub fn widen_to_hold(&self, low: f64, high: f64) -> (f64, f64) {
        if !(self.median_ns.is_finite() && self.rel_margin.is_finite()) {
            return (low, high);
        }
        let (below, above) = self.margin();
        (low.min(below), high.max(above))
    }

    /// Whether a run's interval `[low, high]` and the earlier runs' median
    /// with its margin have nothing in common: the run departs from them
    /// beyond both uncertainties. (A run whose interval is a few
    /// thousandths of a percent wide misses the earlier median by as much
    /// without departing from it.)
    pub fn apart(&self, low: f64, high: f64) -> bool {
        let (below, above) = self.margin();
        above < low || below > high
    }

    /// The earlier runs' median less and plus its margin (the median alone
    /// while the margin is unknown).
    fn margin(&self) -> (f64, f64) {
        match self.rel_margin.is_finite() {
            true => (
                self.median_ns * (-self.rel_margin).exp(),
                self.median_ns * self.rel_margin.exp(),
            ),
            false => (self.median_ns, self.median_ns),
        }
    }

    /// How far `median` lies from the earlier runs' median, relative.
    pub fn departure(&self, median: f64) -> f64 {
        median / self.median_ns - 1.0
    }
}

/// Sum of squared deviations of the log medians, and their count.
fn squares(medians: &[f64]) -> (f64, usize) {
    let logs: Vec<f64> = medians
        .iter()
        .filter(|m| m.is_finite() && **m > 0.0)
        .map(|m| m.ln())
        .collect();
    if logs.len() < 2 {
        return (0.0, logs.len());
    }
    let mean = logs.iter().sum::<f64>() / logs.len() as f64;
    (logs.iter().map(|l| (l - mean).powi(2)).sum(), logs.len())
}

/// The drift of `subject` on `machine`, from the runs of `history` of the
/// last [`MAX_AGE_S`] before `now` (Unix seconds); `None` while there are
/// too few earlier runs. One pass over the history, whatever its length;
/// a median that is not a plausible time is left out.
pub fn run_drift(history: &[Entry], machine: &str, subject: &str, now: u64) -> Option<RunDrift> {
    let medians = medians_by_subject(history, machine, now);
    let estimate = |ss: f64, n: usize, groups: usize, own: bool| {
        let df = n.saturating_sub(groups);
        (df >= MIN_DF).then(|| RunDrift {
            rel_sd: (ss / df as f64).sqrt(),
            df,
            runs: n,
            own,
            earlier: None,
        })
    };
    let own_medians: &[f64] = medians.get(subject).map_or(&[], Vec::as_slice);
    let (ss, n) = squares(own_medians);
    let own = estimate(ss, n, 1, true);
    let earlier = own.map(|d| Earlier {
        median_ns: stats::median(own_medians),
        rel_margin: stats::student_t_975(d.df) * 1.2533 * d.rel_sd / (d.runs as f64).sqrt(),
        runs: d.runs,
    });
    let with_earlier = |d: RunDrift| RunDrift { earlier, ..d };
    if own.is_some_and(|d| d.df >= OWN_DF) {
        return own.map(with_earlier);
    }
    // The machine's figure: the median subject, so that one wild subject
    // (a tiny timing, a program with bimodal runs) does not set it.
    let mut estimates: Vec<RunDrift> = medians
        .values()
        .filter_map(|m| {
            let (ss, n) = squares(m);
            estimate(ss, n, 1, false)
        })
        .collect();
    let pool = (!estimates.is_empty()).then(|| {
        estimates.sort_by(|a, b| a.rel_sd.total_cmp(&b.rel_sd).then(a.df.cmp(&b.df)));
        let middle = estimates[estimates.len() / 2];
        RunDrift {
            runs: estimates.iter().map(|e| e.runs).sum(),
            ..middle
        }
    });
    let chosen = match (own, pool) {
        (Some(own), Some(pool)) if pool.rel_sd > own.rel_sd => Some(pool),
        (Some(own), _) => Some(own),
        (None, pool) => pool,
    };
    chosen.map(with_earlier)
}

/// The plausible medians of the runs on `machine` of the last
/// [`MAX_AGE_S`] before `now`, per subject, oldest first.
fn medians_by_subject<'a>(
    history: &'a [Entry],
    machine: &str,
    now: u64,
) -> HashMap<&'a str, Vec<f64>> {
    let mut medians: HashMap<&str, Vec<f64>> = HashMap::new();
    for e in history {
        if e.machine == machine
            && now.saturating_sub(e.unix_s) <= MAX_AGE_S
            && plausible(e.median_ns)
        {
            medians
                .entry(e.subject.as_str())
                .or_default()
                .push(e.median_ns);
        }
    }
    medians
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(subject: &str, medians: &[f64]) -> Vec<Entry> {
        medians
            .iter()
            .map(|&median_ns| Entry {
                machine: "cpu".into(),
                subject: subject.into(),
                median_ns,
                unix_s: 0,
            })
            .collect()
    }

    #[test]
    fn too_few_runs_measure_nothing() {
        assert_eq!(
            run_drift(&entries("a", &[100.0, 101.0]), "cpu", "a", 0),
            None
        );
        assert_eq!(run_drift(&[], "cpu", "a", 0), None);
        // Runs older than a day do not count.
        let old = entries("a", &[99.0, 100.0, 101.0]);
        assert!(run_drift(&old, "cpu", "a", MAX_AGE_S).is_some());
        assert_eq!(run_drift(&old, "cpu", "a", MAX_AGE_S + 1), None);
    }

    #[test]
    fn a_subject_with_runs_of_its_own_uses_them() {
        let h = entries("a", &[99.0, 100.0, 101.0]);
        let d = run_drift(&h, "cpu", "a", 0).expect("enough runs");
        assert!(d.own);
        assert_eq!((d.df, d.runs), (2, 3));
        // sd of ln(99), ln(100), ln(101) is about 1%.
        assert!((d.rel_sd - 0.01).abs() < 1e-4, "{}", d.rel_sd);
    }

    #[test]
    fn a_young_estimate_takes_the_wider_of_its_own_and_the_pool() {
        let mut h = entries("a", &[99.0, 100.0, 101.0]);
        h.extend(entries("b", &[90.0, 110.0, 100.0]));
        let d = run_drift(&h, "cpu", "a", 0).expect("enough runs");
        assert!(!d.own && d.rel_sd > 0.05, "{d:?}");
        // With OWN_DF degrees of freedom of its own, its own stands.
        let own: Vec<f64> = (0..=OWN_DF).map(|i| 99.0 + (i % 3) as f64).collect();
        let mut h = entries("a", &own);
        h.extend(entries("b", &[90.0, 110.0, 100.0]));
        let d = run_drift(&h, "cpu", "a", 0).expect("enough runs");
        assert!(d.own && d.rel_sd < 0.02, "{d:?}");
        assert_eq!(d.df, OWN_DF);
    }

    #[test]
    fn the_earlier_runs_give_their_median_and_its_margin() {
        let h = entries("a", &[99.0, 100.0, 101.0, 100.5, 99.5]);
        let d = run_drift(&h, "cpu", "a", 0).expect("enough runs");
        let e = d.earlier.expect("runs of its own");
        assert_eq!((e.median_ns, e.runs), (100.0, 5));
        let expected = stats::student_t_975(4) * 1.2533 * d.rel_sd / 5f64.sqrt();
        assert!((e.rel_margin - expected).abs() < 1e-12, "{e:?}");
        // A young subject that borrows the machine's sd keeps its own median.
        let mut h = entries("a", &[99.0, 100.0, 101.0]);
        h.extend(entries("b", &[90.0, 110.0, 100.0]));
        let d = run_drift(&h, "cpu", "a", 0).expect("enough runs");
        assert!(!d.own);
        assert_eq!(d.earlier.map(|e| (e.median_ns, e.runs)), Some((100.0, 3)));
        // A new subject has no earlier runs of its own.
        assert_eq!(run_drift(&h, "cpu", "new", 0).and_then(|d| d.earlier), None);
    }

    #[test]
    fn an_interval_reaches_back_to_the_earlier_runs_only_when_it_departs() {
        let e = Earlier {
            median_ns: 100.0,
            rel_margin: 0.002,
            runs: 12,
        };
        // A run that agrees keeps its interval.
        assert_eq!(e.widen_to_hold(99.0, 101.5), (99.0, 101.5));
        // A run on another speed step, 3.7% slow: reaches back past 100.
        let (low, high) = e.widen_to_hold(103.2, 104.2);
        assert!((low - 100.0 * (-0.002f64).exp()).abs() < 1e-9, "{low}");
        assert_eq!(high, 104.2);
        assert!((e.departure(103.7) - 0.037).abs() < 1e-12);
        // The same on the fast side.
        let (low, high) = e.widen_to_hold(96.0, 97.0);
        assert_eq!(low, 96.0);
        assert!(high > 100.0);
        // Nothing to reach for: unchanged.
        let nan = Earlier {
            median_ns: f64::NAN,
            ..e
        };
        assert_eq!(nan.widen_to_hold(96.0, 97.0), (96.0, 97.0));
    }

    #[test]
    fn a_new_subject_borrows_the_machines_median_subject() {
        let mut h = entries("a", &[100.0, 102.0, 101.0]);
        h.extend(entries("b", &[10.0, 10.4, 10.2]));
        h.extend(entries("wild", &[1.0, 2.0, 1.5]));
        h.extend(entries("c", &[5.0, 5.1]));
        // Other machines do not count.
        h.push(Entry {
            machine: "other".into(),
            subject: "a".into(),
            median_ns: 200.0,
            unix_s: 0,
        });
        let d = run_drift(&h, "cpu", "new", 0).expect("enough runs");
        assert!(!d.own);
        // The median of a (about 1%), b (about 2%) and wild (about 35%): b.
        assert_eq!((d.df, d.runs), (2, 9));
        let logs = [10.0f64.ln(), 10.4f64.ln(), 10.2f64.ln()];
        let mean = logs.iter().sum::<f64>() / 3.0;
        let expected = (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
        assert!(
            (d.rel_sd - expected).abs() < 1e-9,
            "{} vs {expected}",
            d.rel_sd
        );
        // A spread of 0 is measured as 0, not as missing.
        let flat = entries("f", &[3.0, 3.0, 3.0]);
        assert_eq!(run_drift(&flat, "cpu", "f", 0).map(|d| d.rel_sd), Some(0.0));
    }

    /// Medians that are no time at all (the smallest double, the largest,
    /// NaN, negative) are left out: the drift stands on the others, instead
    /// of an sd of hundreds of log units.
    #[test]
    fn implausible_medians_do_not_count() {
        let h = entries(
            "a",
            &[5e-324, 1.7e308, f64::NAN, -1.0, 0.0, 99.0, 100.0, 101.0],
        );
        let d = run_drift(&h, "cpu", "a", 0).expect("enough runs");
        assert_eq!((d.runs, d.df), (3, 2));
        assert!((d.rel_sd - 0.01).abs() < 1e-4, "{d:?}");
        assert_eq!(d.earlier.map(|e| e.median_ns), Some(100.0));
    }

    /// A history of 100,000 entries over 10,000 subjects is read in one
    /// pass: well under the bound even on a busy machine (the quadratic
    /// pass this replaced took about 30 s).
    #[test]
    fn a_history_of_100k_entries_takes_one_pass() {
        let h: Vec<Entry> = (0..100_000)
            .map(|i| Entry {
                machine: "cpu".into(),
                subject: format!("s{}", i % 10_000),
                median_ns: 100.0 + (i % 7) as f64,
                unix_s: 0,
            })
            .collect();
        let start = std::time::Instant::now();
        let d = run_drift(&h, "cpu", "s1", 0).expect("enough runs");
        let new = run_drift(&h, "cpu", "new", 0).expect("the machine's");
        let took = start.elapsed();
        assert_eq!((d.runs, new.own), (10, false));
        assert!(took < std::time::Duration::from_secs(5), "{took:?}");
    }
}
