//! Change points in a series of kept runs: where a benchmark's level moved.
//!
//! Timed series ([`time_changes`]): binary segmentation of the runs' log
//! medians by the largest two-sample t statistic over every split that
//! leaves at least [`MIN_SEGMENT`] runs in each part (so a change needs one
//! run after the first to confirm it: a single run landing on another speed
//! step is not a change). A split is one cut, or two cuts setting a middle
//! part apart from the rest (a level that came and went, which one cut
//! cannot tell from noise: the other step inflates the noise of its
//! parts). The statistic's scale is the series' own noise: the pooled
//! standard deviation of the runs within the parts. A
//! split is a change when that largest statistic exceeds the (1 − [`ALPHA`])
//! quantile of the largest statistic of a series of as many runs of
//! independent normal noise ([`critical`], simulated once per length with a
//! fixed seed). One cut is tested first; only when none is a change are the
//! two-cut splits tested, against their own critical value: the chance that
//! a series without a change shows one is at most 2 × ALPHA, whatever its
//! noise, when its runs scatter independently and normally, and a single
//! step is found as often as by one-cut splits alone. Each part is then
//! searched again the same way. Each change's
//! ratio (after / before) has a 95% interval from the runs of its two
//! neighbouring segments (Student's t on the difference of their mean log
//! medians).
//!
//! Deterministic series ([`exact_changes`]: fuel, Callgrind's counts): any
//! difference between consecutive runs is a change, with an exact ratio.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use serde::Serialize;

use crate::analysis::stats::{normal, student_t_975};
use crate::results::Ratio;

/// The fewest runs on each side of a change.
pub const MIN_SEGMENT: usize = 2;
/// The false-alarm rate of one test of a series without a change.
pub const ALPHA: f64 = 0.01;
/// Series of normal noise simulated for each critical value.
const NULL_DRAWS: usize = 20_000;
/// The relative difference below which two deterministic counts are equal
/// (floating-point rounding of a division by the count).
const EXACT_TOLERANCE: f64 = 1e-9;

/// One change point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Change {
    /// Index (from 0) of the first run at the new level.
    pub at: usize,
    /// The level after over the level before.
    pub ratio: f64,
    /// Its 95% interval (the ratio itself on a deterministic series).
    pub ratio_low: f64,
    pub ratio_high: f64,
    /// The split's t statistic and the critical value it exceeded (timed
    /// series only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub statistic: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub critical: Option<f64>,
}

impl Change {
    /// Its ratio and the ratio's interval.
    pub fn interval(&self) -> Ratio {
        Ratio {
            value: self.ratio,
            low: self.ratio_low,
            high: self.ratio_high,
        }
    }
}

/// The changes of a deterministic series: every run whose count differs
/// from the run before.
pub fn exact_changes(values: &[f64]) -> Vec<Change> {
    values
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w[0] > 0.0 && (w[1] / w[0] - 1.0).abs() > EXACT_TOLERANCE)
        .map(|(i, w)| Change {
            at: i + 1,
            ratio: w[1] / w[0],
            ratio_low: w[1] / w[0],
            ratio_high: w[1] / w[0],
            statistic: None,
            critical: None,
        })
        .collect()
}

/// The changes of a timed series of medians (all positive and finite).
pub fn time_changes(medians: &[f64]) -> Vec<Change> {
    let logs: Vec<f64> = medians.iter().map(|m| m.ln()).collect();
    if logs.iter().any(|l| !l.is_finite()) {
        return Vec::new();
    }
    let mut found: Vec<(usize, f64, f64)> = Vec::new();
    segment(&logs, 0, &mut found);
    found.sort_by_key(|c| c.0);
    let mut bounds: Vec<usize> = vec![0];
    bounds.extend(found.iter().map(|c| c.0));
    bounds.push(logs.len());
    found
        .iter()
        .enumerate()
        .map(|(i, &(at, statistic, threshold))| {
            let (ratio, ratio_low, ratio_high) =
                ratio_across(&logs[bounds[i]..at], &logs[at..bounds[i + 2]]);
            Change {
                at,
                ratio,
                ratio_low,
                ratio_high,
                statistic: Some(statistic),
                critical: Some(threshold),
            }
        })
        .collect()
}

/// Search `logs` (starting at run `offset` of the series) for its best
/// split, and every part again when it is a change.
fn segment(logs: &[f64], offset: usize, found: &mut Vec<(usize, f64, f64)>) {
    let n = logs.len();
    let significant = [Cuts::One, Cuts::Two].into_iter().find_map(|cuts| {
        let split = best_split(logs, cuts)?;
        let threshold = critical(n, cuts);
        (split.statistic > threshold).then_some((split, threshold))
    });
    let Some((split, threshold)) = significant else {
        return;
    };
    let mut start = 0;
    for &cut in split.cuts.iter().chain(std::iter::once(&n)) {
        if cut < n {
            found.push((offset + cut, split.statistic, threshold));
        }
        segment(&logs[start..cut], offset + start, found);
        start = cut;
    }
}

/// Which splits are searched: one cut, or two cuts setting a middle part
/// apart from the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cuts {
    One,
    Two,
}

/// The best way to cut a series in two (one cut) or to set a middle part
/// apart from the rest (two cuts, a level that came and went), and its t
/// statistic.
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    /// The first index of each part after the first.
    pub cuts: Vec<usize>,
    pub statistic: f64,
}

/// The most runs a series may have for its two-cut splits to be searched
/// (their search takes time quadratic in the runs); a longer series is
/// searched for one cut at a time.
const MAX_RUNS_TWO_CUTS: usize = 60;

/// The split of `values` with the largest t statistic among those of
/// `cuts`: every single cut, or (from 3 × [`MIN_SEGMENT`] up to
/// [`MAX_RUNS_TWO_CUTS`] runs) every middle part, each part at least
/// [`MIN_SEGMENT`] runs; `None` when there is none. The t of a split is the
/// difference of the two levels' means over its standard error, with the
/// variance pooled within the parts.
pub fn best_split(values: &[f64], cuts: Cuts) -> Option<Split> {
    let n = values.len();
    let sums = Sums::new(values);
    let mut best: Option<Split> = None;
    let mut consider = |cuts: Vec<usize>, statistic: f64| {
        if best.as_ref().is_none_or(|b| statistic > b.statistic) {
            best = Some(Split { cuts, statistic });
        }
    };
    match cuts {
        Cuts::One if n >= 2 * MIN_SEGMENT => {
            for t in MIN_SEGMENT..=n - MIN_SEGMENT {
                let ss = sums.ss(&[0, t, n]);
                consider(
                    vec![t],
                    t_statistic(sums.part(0, t), sums.part(t, n), ss, n - 2),
                );
            }
        }
        Cuts::Two if (3 * MIN_SEGMENT..=MAX_RUNS_TWO_CUTS).contains(&n) => {
            for a in MIN_SEGMENT..=n - 2 * MIN_SEGMENT {
                for b in a + MIN_SEGMENT..=n - MIN_SEGMENT {
                    let (before, after) = (sums.part(0, a), sums.part(b, n));
                    let outside = (before.0 + after.0, before.1 + after.1);
                    let ss = sums.ss(&[0, a, b, n]);
                    consider(vec![a, b], t_statistic(outside, sums.part(a, b), ss, n - 3));
                }
            }
        }
        _ => {}
    }
    best
}

/// The t of two groups given as (count, sum), with `ss` the sum of squares
/// within the parts and `df` its degrees of freedom.
fn t_statistic(one: (f64, f64), two: (f64, f64), ss: f64, df: usize) -> f64 {
    let difference = (two.1 / two.0 - one.1 / one.0).abs();
    let variance = ss.max(0.0) / df as f64;
    match (difference > 0.0, variance > 0.0) {
        (false, _) => 0.0,
        (true, true) => difference / (variance * (1.0 / one.0 + 1.0 / two.0)).sqrt(),
        (true, false) => f64::INFINITY,
    }
}

/// Prefix sums of a series (less its first value, for precision).
struct Sums(Vec<(f64, f64)>);

impl Sums {
    fn new(values: &[f64]) -> Self {
        let origin = values.first().copied().unwrap_or(0.0);
        let mut sums = vec![(0.0, 0.0); values.len() + 1];
        for (i, v) in values.iter().enumerate() {
            let x = v - origin;
            sums[i + 1] = (sums[i].0 + x, sums[i].1 + x * x);
        }
        Sums(sums)
    }

    /// Count and sum of `[from, to)`.
    fn part(&self, from: usize, to: usize) -> (f64, f64) {
        ((to - from) as f64, self.0[to].0 - self.0[from].0)
    }

    /// The sum of squares within the parts between consecutive `bounds`.
    fn ss(&self, bounds: &[usize]) -> f64 {
        bounds
            .windows(2)
            .map(|w| {
                let (count, sum) = self.part(w[0], w[1]);
                let squares = self.0[w[1]].1 - self.0[w[0]].1;
                squares - sum * sum / count
            })
            .sum()
    }
}

/// The ratio exp(mean(after) − mean(before)) of two runs of log medians,
/// with its 95% interval (Student's t, pooled variance).
fn ratio_across(before: &[f64], after: &[f64]) -> (f64, f64, f64) {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let ss = |v: &[f64], m: f64| v.iter().map(|x| (x - m).powi(2)).sum::<f64>();
    let (mb, ma) = (mean(before), mean(after));
    let (nb, na) = (before.len(), after.len());
    let df = (nb + na).saturating_sub(2);
    let difference = ma - mb;
    if df == 0 {
        return (difference.exp(), f64::NAN, f64::NAN);
    }
    let variance = (ss(before, mb) + ss(after, ma)) / df as f64;
    let half = student_t_975(df) * (variance * (1.0 / nb as f64 + 1.0 / na as f64)).sqrt();
    (
        difference.exp(),
        (difference - half).exp(),
        (difference + half).exp(),
    )
}

/// The (1 − ALPHA) quantile of the largest split statistic of `cuts` over
/// `n` runs of independent standard normal noise: simulated once per
/// length and kind of split in a process, then remembered.
pub fn critical(n: usize, cuts: Cuts) -> f64 {
    static CACHE: OnceLock<Mutex<HashMap<(usize, Cuts), f64>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(c) = cache.lock().ok().and_then(|c| c.get(&(n, cuts)).copied()) {
        return c;
    }
    let c = null_quantile(n, 1.0 - ALPHA, cuts);
    if let Ok(mut cache) = cache.lock() {
        cache.insert((n, cuts), c);
    }
    c
}

/// The `q` quantile of the largest split statistic of `cuts` over
/// [`NULL_DRAWS`] series of `n` standard normal values (a fixed seed: the
/// same every time); infinite when no such split exists.
pub fn null_quantile(n: usize, q: f64, cuts: Cuts) -> f64 {
    let mut rng = fastrand::Rng::with_seed(0x5eed_c4a9 ^ n as u64);
    let mut values = vec![0.0; n];
    let mut maxima: Vec<f64> = (0..NULL_DRAWS)
        .map_while(|_| {
            values.iter_mut().for_each(|v| *v = normal(&mut rng));
            best_split(&values, cuts).map(|s| s.statistic)
        })
        .collect();
    if maxima.is_empty() {
        return f64::INFINITY;
    }
    maxima.sort_by(f64::total_cmp);
    let index = ((maxima.len() as f64 * q).ceil() as usize).clamp(1, maxima.len()) - 1;
    maxima[index]
}

/// The step (relative, 0.03 is 3%) a series of `n` runs with log-median
/// noise `sd` shows nine times in ten when it falls in its middle: the
/// critical value plus 1.28 standard errors of the difference of two
/// halves. Below it, this machine's noise hides a step from the history.
pub fn detectable_step(n: usize, sd: f64) -> Option<f64> {
    if n < 2 * MIN_SEGMENT || !sd.is_finite() {
        return None;
    }
    let half = (n / 2) as f64;
    let se = sd * (2.0 / half).sqrt();
    Some(((critical(n, Cuts::One) + 1.28) * se).exp() - 1.0)
}

/// The pooled standard deviation of `logs` within the segments the
/// changes at `changes` cut it into.
pub fn within_sd(logs: &[f64], changes: &[usize]) -> f64 {
    let mut bounds = vec![0];
    bounds.extend_from_slice(changes);
    bounds.push(logs.len());
    let (mut ss, mut df) = (0.0, 0usize);
    for w in bounds.windows(2) {
        let part = &logs[w[0]..w[1]];
        if part.len() < 2 {
            continue;
        }
        let mean = part.iter().sum::<f64>() / part.len() as f64;
        ss += part.iter().map(|x| (x - mean).powi(2)).sum::<f64>();
        df += part.len() - 1;
    }
    match df {
        0 => f64::NAN,
        _ => (ss / df as f64).sqrt(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noisy(levels: &[(usize, f64)], sd: f64, seed: u64) -> Vec<f64> {
        let mut rng = fastrand::Rng::with_seed(seed);
        levels
            .iter()
            .flat_map(|&(n, level)| std::iter::repeat_n(level, n))
            .map(|level| level * (sd * normal(&mut rng)).exp())
            .collect()
    }

    #[test]
    fn a_doubling_after_six_runs_is_one_change_at_run_seven() {
        let series = noisy(&[(6, 100.0), (6, 200.0)], 0.02, 1);
        let changes = time_changes(&series);
        assert_eq!(changes.len(), 1, "{changes:?}");
        let c = changes[0];
        assert_eq!(c.at, 6);
        assert!((c.ratio - 2.0).abs() < 0.1, "{c:?}");
        assert!(c.ratio_low < c.ratio && c.ratio < c.ratio_high, "{c:?}");
    }

    #[test]
    fn two_steps_are_both_found() {
        let series = noisy(&[(5, 100.0), (5, 150.0), (5, 100.0)], 0.01, 2);
        let at: Vec<usize> = time_changes(&series).iter().map(|c| c.at).collect();
        assert_eq!(at, vec![5, 10]);
    }

    /// Over many series of noise alone, about ALPHA of them show a change.
    #[test]
    fn noise_alone_rarely_shows_a_change() {
        let alarms = (0..400)
            .filter(|&seed| !time_changes(&noisy(&[(12, 100.0)], 0.05, seed)).is_empty())
            .count();
        assert!(alarms <= 12, "{alarms} of 400");
    }

    #[test]
    fn a_single_departing_run_at_the_end_is_no_change_yet() {
        let mut series = noisy(&[(11, 100.0)], 0.001, 3);
        series.push(150.0);
        assert!(time_changes(&series).is_empty());
    }

    #[test]
    fn deterministic_counts_change_exactly() {
        let changes = exact_changes(&[100.0, 100.0, 101.0, 101.0, 101.0]);
        assert_eq!(changes.len(), 1);
        assert_eq!((changes[0].at, changes[0].ratio), (2, 1.01));
        assert!(exact_changes(&[5.0; 12]).is_empty());
    }

    #[test]
    fn the_critical_value_is_that_of_the_largest_of_several_t() {
        let c12 = critical(12, Cuts::One);
        // Above a single two-sided t at 1% (3.17 at 10 df), below 8.
        assert!((3.17..8.0).contains(&c12), "{c12}");
        println!(
            "critical values: 12 runs {c12:.3}, 15 runs {:.3}",
            critical(15, Cuts::Two)
        );
        assert!(detectable_step(12, 0.0) == Some(0.0));
    }
}
