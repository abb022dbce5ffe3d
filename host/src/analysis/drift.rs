//! Run-to-run drift measured on this machine: how far the medians of
//! earlier runs of the same subject (or, while it has too few, of the
//! subjects measured the same way on this CPU) spread around their means.
//! Processes of one run share the machine's state of that second, so the
//! variation between them misses slower drift; the history of separate
//! runs measures it instead of assuming a constant.
//!
//! A subject's estimate is the sample standard deviation of its log
//! medians (k runs, k − 1 degrees of freedom), once it has at least
//! [`MIN_RUNS`] earlier runs: with fewer, an sd is so uncertain that the
//! t multiplier it needs (t(3) = 3.18 for four runs) widens an interval
//! more than anything measured, so the row says there are too few to say
//! instead. The machine's estimate is the median subject's (by spread,
//! with that subject's degrees of freedom) among the subjects with
//! [`MIN_RUNS`] runs measured with the same settings (engine, size,
//! metric, huge pages, plan: [`crate::results::history::settings_key`]),
//! so that one wild subject does not set it and a run made another way
//! never feeds it. A subject with at least [`OWN_DF`] degrees of freedom
//! of its own uses its own; before that, the larger of its own and the
//! machine's, so that a young estimate errs wide; a new subject uses the
//! machine's. The interval then adds t(df) · sd on the log scale
//! ([`crate::analysis::interval`]).
//!
//! The earlier runs of the subject also give where they lie
//! ([`Earlier`]: the median of their medians, with its own 95% margin) and
//! what their processes measured ([`EarlierRuns::range_ns`]), which bounds
//! how far an interval reaches.
//! Run medians do not scatter like a normal law: most runs agree closely,
//! and now and then a whole run lands on another speed of the CPU, a few
//! percent away. An sd measured over runs that agreed cannot foresee that
//! run, so the interval of a run also holds the earlier runs' median
//! ([`Earlier::widen_to_hold`]): a run that departs from them says so and reaches
//! back, instead of stating a narrow interval a few percent away.

use std::collections::HashMap;

use crate::analysis::stats;
use crate::results::history::{Entry, plausible, settings_key};

/// Runs older than this (in seconds) no longer count: the machine of last
/// week is not the machine of now.
pub const MAX_AGE_S: u64 = 24 * 3600;

/// Earlier runs a subject needs before their spread is used (4 degrees of
/// freedom: t = 2.78).
pub const MIN_RUNS: usize = 5;
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

/// What the earlier runs of a subject say, as a row uses it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EarlierRuns {
    /// How many earlier runs of the subject count.
    pub runs: usize,
    /// The least and the greatest median of their worker processes, ns.
    pub range_ns: Option<(f64, f64)>,
    /// The drift between runs, once it can be told ([`run_drift`]).
    pub drift: Option<RunDrift>,
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

/// What the runs of `history` of the last [`MAX_AGE_S`] before `now` (Unix
/// seconds) on `machine` say of `subject`: how many, the range of their
/// processes, and the drift ([`run_drift`]).
pub fn earlier_runs(history: &[Entry], machine: &str, subject: &str, now: u64) -> EarlierRuns {
    let by_subject = by_subject(history, machine, now);
    let own = by_subject.get(subject);
    EarlierRuns {
        runs: own.map_or(0, |r| r.medians.len()),
        range_ns: own.map(|r| r.range_ns),
        drift: drift_of(&by_subject, subject),
    }
}

/// The drift of `subject` on `machine`, from the runs of `history` of the
/// last [`MAX_AGE_S`] before `now` (Unix seconds); `None` while there are
/// too few earlier runs. One pass over the history, whatever its length;
/// a median that is not a plausible time is left out.
pub fn run_drift(history: &[Entry], machine: &str, subject: &str, now: u64) -> Option<RunDrift> {
    drift_of(&by_subject(history, machine, now), subject)
}

/// The drift of a value measured once a run (a row's median, a suite's
/// geometric mean of ratios) over `earlier` separate runs: its own
/// estimate, with where those runs lie (their median, with its 95% margin
/// t(df) · 1.2533 · sd / √runs); `None` while there are fewer than
/// [`MIN_RUNS`].
pub fn of_runs(earlier: &[f64]) -> Option<RunDrift> {
    let own = estimate(earlier, true)?;
    let lie = Earlier {
        median_ns: stats::median(earlier),
        rel_margin: stats::student_t_975(own.df) * 1.2533 * own.rel_sd / (own.runs as f64).sqrt(),
        runs: own.runs,
    };
    Some(RunDrift {
        earlier: Some(lie),
        ..own
    })
}

/// The sd of the log of `medians`, once there are [`MIN_RUNS`] plausible
/// ones, filed as `own` or the machine's.
fn estimate(medians: &[f64], own: bool) -> Option<RunDrift> {
    let (ss, n) = squares(medians);
    (n >= MIN_RUNS).then(|| RunDrift {
        rel_sd: (ss / (n - 1) as f64).sqrt(),
        df: n - 1,
        runs: n,
        own,
        earlier: None,
    })
}

/// The drift of `subject` from the earlier runs `by_subject`.
fn drift_of(by_subject: &HashMap<&str, Runs<'_>>, subject: &str) -> Option<RunDrift> {
    let own_runs = by_subject.get(subject);
    let own_medians: &[f64] = own_runs.map_or(&[], |r| r.medians.as_slice());
    let own = of_runs(own_medians);
    let earlier = own.and_then(|d| d.earlier);
    let with_earlier = |d: RunDrift| RunDrift { earlier, ..d };
    if own.is_some_and(|d| d.df >= OWN_DF) {
        return own.map(with_earlier);
    }
    // The machine's figure: the median subject measured the same way, so
    // that one wild subject (a tiny timing, a program with bimodal runs)
    // does not set it.
    let settings = settings_key(subject);
    let mut estimates: Vec<RunDrift> = by_subject
        .values()
        .filter(|r| settings.as_deref() == Some(r.settings))
        .filter_map(|r| estimate(&r.medians, false))
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

/// The earlier runs of one subject.
struct Runs<'a> {
    /// How it was measured ([`Entry::settings`]).
    settings: &'a str,
    /// Their medians, oldest first.
    medians: Vec<f64>,
    /// The least and the greatest of their processes' medians.
    range_ns: (f64, f64),
}

/// The runs on `machine` of the last [`MAX_AGE_S`] before `now` with a
/// plausible median, per subject.
fn by_subject<'a>(history: &'a [Entry], machine: &str, now: u64) -> HashMap<&'a str, Runs<'a>> {
    let mut runs: HashMap<&str, Runs> = HashMap::new();
    for e in history {
        if e.machine == machine
            && now.saturating_sub(e.unix_s) <= MAX_AGE_S
            && plausible(e.median_ns)
        {
            let (low, high) = e.processes_ns;
            let r = runs.entry(e.subject.as_str()).or_insert_with(|| Runs {
                settings: e.settings.as_str(),
                medians: Vec::new(),
                range_ns: (low, high),
            });
            r.medians.push(e.median_ns);
            r.range_ns = (r.range_ns.0.min(low), r.range_ns.1.max(high));
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{Metric, StopRule};
    use crate::results::history::Subject;
    use std::time::Duration;

    /// The subject key of benchmark `name`, measured by default (or
    /// judged by instructions when `name` ends in `#fuel`).
    fn key(name: &str) -> String {
        let metric = match name.ends_with("#fuel") {
            true => Metric::Instructions,
            false => Metric::Time,
        };
        Subject::new(
            name.as_bytes(),
            name,
            None,
            (None, metric, true),
            (
                StopRule::Time(Duration::from_secs(2)),
                None,
                None,
                Duration::from_millis(1),
            ),
        )
        .key()
    }

    fn entries(subject: &str, medians: &[f64]) -> Vec<Entry> {
        let subject = key(subject);
        medians
            .iter()
            .map(|&median_ns| Entry {
                machine: "cpu".into(),
                settings: settings_key(&subject).expect("a key"),
                subject: subject.clone(),
                median_ns,
                processes_ns: (median_ns * 0.9, median_ns * 1.2),
                unix_s: 0,
            })
            .collect()
    }

    fn drift(h: &[Entry], subject: &str, now: u64) -> Option<RunDrift> {
        run_drift(h, "cpu", &key(subject), now)
    }

    #[test]
    fn too_few_runs_measure_nothing() {
        let four = entries("a", &[100.0, 101.0, 99.0, 100.5]);
        assert_eq!(drift(&four, "a", 0), None);
        let e = earlier_runs(&four, "cpu", &key("a"), 0);
        assert_eq!((e.runs, e.drift), (4, None));
        assert_eq!(e.range_ns, Some((99.0 * 0.9, 101.0 * 1.2)));
        assert_eq!(drift(&[], "a", 0), None);
        // Runs older than a day do not count.
        let old = entries("a", &[99.0, 100.0, 101.0, 100.5, 99.5]);
        assert!(drift(&old, "a", MAX_AGE_S).is_some());
        assert_eq!(drift(&old, "a", MAX_AGE_S + 1), None);
        assert_eq!(earlier_runs(&old, "cpu", &key("a"), MAX_AGE_S + 1).runs, 0);
    }

    #[test]
    fn a_subject_with_runs_of_its_own_uses_them() {
        let h = entries("a", &[99.0, 100.0, 101.0, 100.0, 100.0]);
        let d = drift(&h, "a", 0).expect("enough runs");
        assert!(d.own);
        assert_eq!((d.df, d.runs), (4, 5));
        // sd of ln(99), ln(100), ln(101), ln(100), ln(100): about 0.71%.
        assert!((d.rel_sd - 0.00707).abs() < 1e-4, "{}", d.rel_sd);
    }

    #[test]
    fn a_young_estimate_takes_the_wider_of_its_own_and_the_pool() {
        let mut h = entries("a", &[99.0, 100.0, 101.0, 100.0, 100.0]);
        h.extend(entries("b", &[90.0, 110.0, 100.0, 95.0, 105.0]));
        let d = drift(&h, "a", 0).expect("enough runs");
        assert!(!d.own && d.rel_sd > 0.05, "{d:?}");
        // With OWN_DF degrees of freedom of its own, its own stands.
        let own: Vec<f64> = (0..=OWN_DF).map(|i| 99.0 + (i % 3) as f64).collect();
        let mut h = entries("a", &own);
        h.extend(entries("b", &[90.0, 110.0, 100.0, 95.0, 105.0]));
        let d = drift(&h, "a", 0).expect("enough runs");
        assert!(d.own && d.rel_sd < 0.02, "{d:?}");
        assert_eq!(d.df, OWN_DF);
    }

    /// Runs made another way (here: judged by instructions) never feed
    /// the drift of a subject measured by time.
    #[test]
    fn runs_with_other_settings_feed_no_drift() {
        let h = entries("b#fuel", &[90.0, 110.0, 100.0, 95.0, 105.0]);
        assert_eq!(drift(&h, "new", 0), None);
        assert!(drift(&h, "new#fuel", 0).is_some());
    }

    #[test]
    fn the_earlier_runs_give_their_median_and_its_margin() {
        let h = entries("a", &[99.0, 100.0, 101.0, 100.5, 99.5]);
        let d = drift(&h, "a", 0).expect("enough runs");
        let e = d.earlier.expect("runs of its own");
        assert_eq!((e.median_ns, e.runs), (100.0, 5));
        let expected = stats::student_t_975(4) * 1.2533 * d.rel_sd / 5f64.sqrt();
        assert!((e.rel_margin - expected).abs() < 1e-12, "{e:?}");
        // A young subject that borrows the machine's sd keeps its own median.
        let mut h = entries("a", &[99.0, 100.0, 101.0, 100.0, 100.0]);
        h.extend(entries("b", &[90.0, 110.0, 100.0, 95.0, 105.0]));
        let d = drift(&h, "a", 0).expect("enough runs");
        assert!(!d.own);
        assert_eq!(d.earlier.map(|e| (e.median_ns, e.runs)), Some((100.0, 5)));
        // A new subject has no earlier runs of its own.
        assert_eq!(drift(&h, "new", 0).and_then(|d| d.earlier), None);
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
        let mut h = entries("a", &[100.0, 102.0, 101.0, 101.0, 101.0]);
        h.extend(entries("b", &[10.0, 10.4, 10.2, 10.2, 10.2]));
        h.extend(entries("wild", &[1.0, 2.0, 1.5, 1.5, 1.5]));
        h.extend(entries("c", &[5.0, 5.1, 5.0, 5.1]));
        // Other machines do not count.
        h.push(Entry {
            machine: "other".into(),
            ..entries("a", &[200.0])[0].clone()
        });
        let d = drift(&h, "new", 0).expect("enough runs");
        assert!(!d.own);
        // The median of a (about 0.7%), b (about 1.4%) and wild (about
        // 25%): b; c has too few runs.
        assert_eq!((d.df, d.runs), (4, 15));
        let logs = [10.0f64, 10.4, 10.2, 10.2, 10.2].map(f64::ln);
        let mean = logs.iter().sum::<f64>() / 5.0;
        let expected = (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / 4.0).sqrt();
        assert!(
            (d.rel_sd - expected).abs() < 1e-9,
            "{} vs {expected}",
            d.rel_sd
        );
        // A spread of 0 is measured as 0, not as missing.
        let flat = entries("f", &[3.0; 5]);
        assert_eq!(drift(&flat, "f", 0).map(|d| d.rel_sd), Some(0.0));
    }

    /// Medians that are no time at all (the smallest double, the largest,
    /// NaN, negative) are left out: the drift stands on the others, instead
    /// of an sd of hundreds of log units.
    #[test]
    fn implausible_medians_do_not_count() {
        let h = entries(
            "a",
            &[
                5e-324,
                1.7e308,
                f64::NAN,
                -1.0,
                0.0,
                99.0,
                100.0,
                101.0,
                100.0,
                100.0,
            ],
        );
        let d = drift(&h, "a", 0).expect("enough runs");
        assert_eq!((d.runs, d.df), (5, 4));
        assert!((d.rel_sd - 0.00707).abs() < 1e-4, "{d:?}");
        assert_eq!(d.earlier.map(|e| e.median_ns), Some(100.0));
    }

    /// A history of 100,000 entries over 10,000 subjects is read in one
    /// pass: well under the bound even on a busy machine (the quadratic
    /// pass this replaced took about 30 s).
    #[test]
    fn a_history_of_100k_entries_takes_one_pass() {
        let keys: Vec<String> = (0..10_000).map(|i| key(&format!("s{i}"))).collect();
        let settings = settings_key(&keys[0]).expect("a key");
        let h: Vec<Entry> = (0..100_000)
            .map(|i| Entry {
                machine: "cpu".into(),
                subject: keys[i % 10_000].clone(),
                settings: settings.clone(),
                median_ns: 100.0 + (i % 7) as f64,
                processes_ns: (100.0, 107.0),
                unix_s: 0,
            })
            .collect();
        let start = std::time::Instant::now();
        let d = run_drift(&h, "cpu", &keys[1], 0).expect("enough runs");
        let new = drift(&h, "new", 0).expect("the machine's");
        let took = start.elapsed();
        assert_eq!((d.runs, new.own), (10, false));
        assert!(took < std::time::Duration::from_secs(5), "{took:?}");
    }
}
