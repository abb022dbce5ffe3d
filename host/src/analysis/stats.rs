//! Pure statistics over samples of per-op times (f64 nanoseconds).
//!
//! This module turns a set of timing samples, grouped in blocks (one block
//! per measurement round), into a [`Summary`]: median, mean, sample standard
//! deviation, min/max, a 95% confidence interval of the median, nanobench's
//! err% and Tukey outlier counts.
//!
//! It does **not** measure anything, read clocks, do I/O or print: callers
//! hand it numbers and get numbers back. All functions are deterministic
//! (the bootstrap takes an explicit seed) and never panic on any input,
//! including empty slices and NaNs (those propagate as NaN rather than
//! panicking). All ordering uses [`f64::total_cmp`].
//!
//! Methods implemented:
//!
//! * **Quantiles**: linear interpolation between order statistics,
//!   Hyndman & Fan (1996) type 7, the default of R and numpy
//!   ([`quantile_sorted`], [`median`]).
//! * **Outliers**: Tukey's fences (Tukey 1977, *Exploratory Data Analysis*),
//!   mild beyond 1.5×IQR and severe beyond 3×IQR from the quartiles, with
//!   strict comparisons, as in criterion's
//!   `stats/univariate/outliers/tukey.rs` ([`tukey`]).
//! * **err%**: the median absolute percentage error,
//!   median over i of |xᵢ − median| / |xᵢ| × 100, as reported by nanobench
//!   ([`Summary::err_pct`]).
//! * **Confidence interval of the median**: percentile bootstrap
//!   (Efron & Tibshirani 1993, *An Introduction to the Bootstrap*) that
//!   resamples whole blocks with replacement — a cluster/block bootstrap —
//!   so that drift between blocks widens the interval instead of being
//!   averaged away ([`median_ci`]).
//! * **Run-to-run drift**: a relative standard uncertainty that no sampling
//!   inside one run can see (the machine itself speeds up and slows down over
//!   minutes) is added to each side of the interval in quadrature, as a
//!   type-B component in the GUM (JCGM 100:2008) ([`widen_for_drift`]).

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

use crate::results::{OutlierClass, Outliers};

/// Summary statistics of one set of samples.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub median: f64,
    pub mean: f64,
    /// sample standard deviation (n-1 denominator); 0 for fewer than 2 samples
    pub stddev: f64,
    pub min: f64,
    pub max: f64,
    /// 95% confidence interval of the median (see `median_ci`)
    pub ci95_low: f64,
    pub ci95_high: f64,
    /// median absolute percentage error, in percent: median over i of |x_i - median| / |x_i| * 100  (nanobench's err%). Samples equal to 0 are skipped in that median; if all are 0 (or no samples), err_pct is 0.
    pub err_pct: f64,
    pub outliers: Outliers,
    /// Tukey class of every sample, in input order (block by block).
    pub classes: Vec<OutlierClass>,
}

/// The sample standard deviation (n − 1 denominator); 0 for fewer than two
/// values.
pub fn sample_sd(values: &[f64]) -> f64 {
    let n = values.len();
    if n < 2 {
        return 0.0;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    (values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
}

/// The 97.5% quantile of Student's t distribution with `freedom` degrees
/// of freedom, not a whole number (statrs); the normal's when infinite,
/// infinite with none.
pub fn student_t_975_of(freedom: f64) -> f64 {
    match freedom {
        f if f.is_infinite() && f > 0.0 => normal_quantile(0.975),
        f => match StudentsT::new(0.0, 1.0, f) {
            Ok(t) => t.inverse_cdf(0.975),
            Err(_) => f64::INFINITY,
        },
    }
}

/// The digamma function ψ, the derivative of ln Γ (statrs).
pub fn digamma(x: f64) -> f64 {
    statrs::function::gamma::digamma(x)
}

/// The trigamma function ψ′ for `x` > 0: the recurrence ψ′(x) = ψ′(x + 1)
/// + 1/x² up to 10, then its asymptotic series (error below 1e-12).
pub fn trigamma(x: f64) -> f64 {
    if x.is_nan() || x <= 0.0 {
        return f64::NAN;
    }
    let (mut x, mut sum) = (x, 0.0);
    while x < 10.0 {
        sum += 1.0 / (x * x);
        x += 1.0;
    }
    let f = 1.0 / (x * x);
    let tail = f / x * (1.0 / 6.0 - f * (1.0 / 30.0 - f * (1.0 / 42.0 - f / 30.0)));
    sum + 1.0 / x + f / 2.0 + tail
}

/// The `x` > 0 with ψ′(x) = `y` > 0 ([`trigamma`], which falls from
/// infinity to 0), by bisection in log space; NaN for `y` ≤ 0.
pub fn trigamma_inverse(y: f64) -> f64 {
    if y.is_nan() || y <= 0.0 {
        return f64::NAN;
    }
    let (mut low, mut high) = (1e-12f64.ln(), 1e12f64.ln());
    for _ in 0..200 {
        let mid = (low + high) / 2.0;
        match trigamma(mid.exp()) > y {
            true => low = mid,
            false => high = mid,
        }
    }
    ((low + high) / 2.0).exp()
}

/// The 97.5% quantile of Student's t distribution with `df` degrees of
/// freedom (statrs; infinite with none), remembered for the first few
/// hundred.
pub fn student_t_975(df: usize) -> f64 {
    const REMEMBERED: usize = 256;
    static TABLE: std::sync::OnceLock<Vec<f64>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| (0..REMEMBERED).map(|df| student_t(0.975, df)).collect());
    table
        .get(df)
        .copied()
        .unwrap_or_else(|| student_t(0.975, df))
}

/// The `p` quantile of Student's t with `df` degrees of freedom, `p` in
/// (0, 1); infinite with no degree of freedom.
fn student_t(p: f64, df: usize) -> f64 {
    match StudentsT::new(0.0, 1.0, df as f64) {
        Ok(t) if p > 0.0 && p < 1.0 => t.inverse_cdf(p),
        _ => f64::INFINITY,
    }
}

/// The standard normal quantile of `p` in (0, 1) (statrs); NaN outside.
pub fn normal_quantile(p: f64) -> f64 {
    match p > 0.0 && p < 1.0 {
        true => Normal::standard().inverse_cdf(p),
        false => f64::NAN,
    }
}

/// A standard normal value drawn from `rng` (Box–Muller): the one source
/// of normal noise for the simulations of the method and its tests.
pub fn normal(rng: &mut fastrand::Rng) -> f64 {
    let u = 1.0 - rng.f64();
    let v = rng.f64();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// The 95% interval of `centre` from the medians of separate processes:
/// `centre ± t(0.975, P − 1) · sd / √P` (Student's t over the process
/// medians), so that the interval is as wide as the processes disagree.
pub fn between_processes_ci(centre: f64, process_medians: &[f64]) -> (f64, f64) {
    let p = process_medians.len();
    if p < 2 {
        return (f64::NAN, f64::NAN);
    }
    let half = student_t_975(p - 1) * sample_sd(process_medians) / (p as f64).sqrt();
    (centre - half, centre + half)
}

/// The same on the log scale: `centre · exp(±t(0.975, P − 1) · sd / √P)`
/// with sd that of the log medians, so that the interval is symmetric in
/// ratio and never reaches 0 (the linear interval where a median is no
/// positive time).
pub fn between_processes_ci_log(centre: f64, process_medians: &[f64]) -> (f64, f64) {
    let positive = centre > 0.0 && process_medians.iter().all(|m| *m > 0.0 && m.is_finite());
    if !positive {
        return between_processes_ci(centre, process_medians);
    }
    let p = process_medians.len();
    if p < 2 {
        return (f64::NAN, f64::NAN);
    }
    let logs: Vec<f64> = process_medians.iter().map(|m| m.ln()).collect();
    let half = student_t_975(p - 1) * sample_sd(&logs) / (p as f64).sqrt();
    (centre * (-half).exp(), centre * half.exp())
}

/// nanobench's err%: the median absolute percentage error of `samples`
/// around `median`, in percent, skipping samples equal to 0 (0 when none is
/// left).
pub fn err_pct(samples: &[f64], median: f64) -> f64 {
    let mut ape: Vec<f64> = samples
        .iter()
        .filter(|&&x| x != 0.0)
        .map(|&x| (x - median).abs() / x.abs() * 100.0)
        .collect();
    if ape.is_empty() {
        0.0
    } else {
        median_in_place(&mut ape)
    }
}

/// Quantile with linear interpolation between order statistics (Hyndman & Fan type 7, the default of R and numpy). `sorted` must be sorted ascending and non-empty; q in \[0,1\].
///
/// Out-of-contract inputs do not panic: an empty slice or a NaN `q` gives
/// NaN, and `q` outside \[0,1\] is clamped.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    if n == 0 || q.is_nan() {
        return f64::NAN;
    }
    let q = q.clamp(0.0, 1.0);
    // Type 7: h = (n - 1) q, interpolate between x[floor h] and x[floor h + 1].
    let h = (n - 1) as f64 * q;
    let lo = (h.floor() as usize).min(n - 1);
    let hi = (lo + 1).min(n - 1);
    let frac = h - lo as f64;
    let (a, b) = (sorted[lo], sorted[hi]);
    if frac <= 0.0 || lo == hi {
        a
    } else {
        a + frac * (b - a)
    }
}

/// Median of the samples (type-7: mean of the two middle values for even n). Returns NaN for an empty slice.
pub fn median(samples: &[f64]) -> f64 {
    let mut scratch = samples.to_vec();
    median_in_place(&mut scratch)
}

/// Classify every sample against Tukey's fences computed from these samples (type-7 quartiles). Returns the counts and one class per sample, in input order.
pub fn tukey(samples: &[f64]) -> (Outliers, Vec<OutlierClass>) {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    let fences = tukey_fences(&sorted);
    let mut outliers = Outliers {
        fences,
        ..Outliers::empty()
    };
    let classes = samples
        .iter()
        .map(|&x| {
            let class = classify(x, &fences);
            count(&mut outliers, class);
            class
        })
        .collect();
    (outliers, classes)
}

/// 95% (or `confidence`) percentile-bootstrap confidence interval of the median of all samples, resampling whole BLOCKS with replacement (a cluster bootstrap), so that drift between blocks widens the interval. `blocks` holds the samples grouped by block (a block may be any non-empty length; empty blocks are ignored). Each resample draws as many blocks as there are, with replacement, pools their samples and takes the median. `resamples` resamples (e.g. 2000); deterministic for a given `seed` (use fastrand::Rng::with_seed). With a single non-empty block, fall back to resampling the individual samples of that block (ordinary bootstrap). Returns (low, high). For zero samples return (NaN, NaN); for one sample (x, x).
///
/// `resamples == 0` means no bootstrap at all: the interval collapses to the
/// median of the pooled samples. A NaN `confidence` gives (NaN, NaN);
/// one outside \[0,1\] is clamped.
pub fn median_ci(blocks: &[Vec<f64>], confidence: f64, resamples: usize, seed: u64) -> (f64, f64) {
    let non_empty: Vec<&[f64]> = blocks
        .iter()
        .filter(|b| !b.is_empty())
        .map(Vec::as_slice)
        .collect();
    let total: usize = non_empty.iter().map(|b| b.len()).sum();
    match (non_empty.as_slice(), total) {
        (_, 0) => return (f64::NAN, f64::NAN),
        ([only], 1) => return (only[0], only[0]),
        _ => {}
    }
    if confidence.is_nan() {
        return (f64::NAN, f64::NAN);
    }
    if resamples == 0 {
        let mut pooled: Vec<f64> = non_empty.concat();
        let m = median_in_place(&mut pooled);
        return (m, m);
    }

    let mut medians = bootstrap_medians(&non_empty, resamples, seed);
    medians.sort_unstable_by(f64::total_cmp);
    let alpha = (1.0 - confidence.clamp(0.0, 1.0)) / 2.0;
    (
        quantile_sorted(&medians, alpha),
        quantile_sorted(&medians, 1.0 - alpha),
    )
}

/// Summarise samples grouped in blocks (order: block by block). Calls `median_ci(blocks, 0.95, resamples, seed)`. Panics never; an empty input gives a Summary of NaNs with zero outliers.
///
/// For an empty input, `stddev` and `err_pct` are 0 as their field docs
/// specify (fewer than 2 samples / no samples); every other number is NaN.
pub fn summarize(blocks: &[Vec<f64>], resamples: usize, seed: u64) -> Summary {
    let samples: Vec<f64> = blocks.concat();
    if samples.is_empty() {
        return Summary {
            median: f64::NAN,
            mean: f64::NAN,
            // Per the field docs: 0 for fewer than 2 samples / no samples.
            stddev: 0.0,
            min: f64::NAN,
            max: f64::NAN,
            ci95_low: f64::NAN,
            ci95_high: f64::NAN,
            err_pct: 0.0,
            outliers: Outliers::empty(),
            classes: Vec::new(),
        };
    }

    let n = samples.len();
    let mut sorted = samples.clone();
    sorted.sort_unstable_by(f64::total_cmp);
    let med = quantile_sorted(&sorted, 0.5);

    let mean = samples.iter().sum::<f64>() / n as f64;
    let stddev = if n < 2 {
        0.0
    } else {
        let ss: f64 = samples.iter().map(|&x| (x - mean) * (x - mean)).sum();
        (ss / (n - 1) as f64).sqrt()
    };

    let err_pct = err_pct(&samples, med);

    let fences = tukey_fences(&sorted);
    let mut outliers = Outliers {
        fences,
        ..Outliers::empty()
    };
    let classes: Vec<OutlierClass> = samples.iter().map(|&x| classify(x, &fences)).collect();
    for &class in &classes {
        count(&mut outliers, class);
    }

    let (ci95_low, ci95_high) = median_ci(blocks, 0.95, resamples, seed);

    Summary {
        median: med,
        mean,
        stddev,
        min: sorted[0],
        max: sorted[n - 1],
        ci95_low,
        ci95_high,
        err_pct,
        outliers,
        classes,
    }
}

/// Relative half-width of an interval around a centre, in percent: max(centre - low, high - centre) / |centre| * 100. Infinity when centre is 0 or any input is NaN.
pub fn relative_half_width_pct(centre: f64, low: f64, high: f64) -> f64 {
    if centre.is_nan() || low.is_nan() || high.is_nan() || centre == 0.0 {
        return f64::INFINITY;
    }
    let half = (centre - low).max(high - centre);
    half / centre.abs() * 100.0
}

/// Medians of `resamples` bootstrap resamples of the pooled samples: whole
/// blocks are drawn with replacement (a cluster bootstrap), or single samples
/// when there is one block. Empty blocks must have been removed.
fn bootstrap_medians(non_empty: &[&[f64]], resamples: usize, seed: u64) -> Vec<f64> {
    let total: usize = non_empty.iter().map(|b| b.len()).sum();
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut medians = Vec::with_capacity(resamples);
    let mut scratch: Vec<f64> = Vec::with_capacity(total);

    if let [only] = non_empty {
        // Ordinary bootstrap over the individual samples of the one block.
        let n = only.len();
        for _ in 0..resamples {
            scratch.clear();
            scratch.extend((0..n).map(|_| only[rng.usize(0..n)]));
            medians.push(median_in_place(&mut scratch));
        }
    } else {
        // Cluster bootstrap: draw k whole blocks with replacement, pool, median.
        let k = non_empty.len();
        for _ in 0..resamples {
            scratch.clear();
            for _ in 0..k {
                scratch.extend_from_slice(non_empty[rng.usize(0..k)]);
            }
            medians.push(median_in_place(&mut scratch));
        }
    }

    medians
}

/// Bootstrap resamples for a row's final interval.
pub const RESAMPLES_FINAL: usize = 2_000;

/// Bootstrap medians of samples grouped in blocks (see [`median_ci`]); empty
/// for no samples. Deterministic for a given `seed`.
pub fn resampled_medians(blocks: &[Vec<f64>], resamples: usize, seed: u64) -> Vec<f64> {
    let non_empty: Vec<&[f64]> = blocks
        .iter()
        .filter(|b| !b.is_empty())
        .map(Vec::as_slice)
        .collect();
    if non_empty.is_empty() {
        return Vec::new();
    }
    bootstrap_medians(&non_empty, resamples, seed)
}

/// Type-7 median of `v`, reordering `v` in place; O(n) via selection.
/// NaN for an empty slice.
fn median_in_place(v: &mut [f64]) -> f64 {
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    let mid = n / 2;
    let (left, upper, _) = v.select_nth_unstable_by(mid, f64::total_cmp);
    let upper = *upper;
    if n % 2 == 1 {
        return upper;
    }
    // Even n: the lower middle value is the largest element left of `mid`.
    let lower = left
        .iter()
        .copied()
        .reduce(|a, b| if b.total_cmp(&a).is_gt() { b } else { a })
        .unwrap_or(upper);
    // Same interpolation as `quantile_sorted` at q = 0.5.
    if lower == upper {
        lower
    } else {
        lower + 0.5 * (upper - lower)
    }
}

/// Tukey's fences from ascending-sorted samples:
/// [q1 - 3 IQR, q1 - 1.5 IQR, q3 + 1.5 IQR, q3 + 3 IQR]; NaN if empty.
pub fn tukey_fences(sorted: &[f64]) -> [f64; 4] {
    if sorted.is_empty() {
        return [f64::NAN; 4];
    }
    let q1 = quantile_sorted(sorted, 0.25);
    let q3 = quantile_sorted(sorted, 0.75);
    let iqr = q3 - q1;
    [
        q1 - 3.0 * iqr,
        q1 - 1.5 * iqr,
        q3 + 1.5 * iqr,
        q3 + 3.0 * iqr,
    ]
}

/// Class of one sample; strict comparisons, so a sample exactly on a fence
/// is on the inner side. NaN samples (and NaN fences) give `NotAnOutlier`.
fn classify(x: f64, fences: &[f64; 4]) -> OutlierClass {
    let [low_severe, low_mild, high_mild, high_severe] = *fences;
    if x < low_severe {
        OutlierClass::LowSevere
    } else if x < low_mild {
        OutlierClass::LowMild
    } else if x > high_severe {
        OutlierClass::HighSevere
    } else if x > high_mild {
        OutlierClass::HighMild
    } else {
        OutlierClass::NotAnOutlier
    }
}

fn count(outliers: &mut Outliers, class: OutlierClass) {
    match class {
        OutlierClass::LowSevere => outliers.low_severe += 1,
        OutlierClass::LowMild => outliers.low_mild += 1,
        OutlierClass::NotAnOutlier => {}
        OutlierClass::HighMild => outliers.high_mild += 1,
        OutlierClass::HighSevere => outliers.high_severe += 1,
    }
}

/// Widen the interval `[low, high]` around `centre` by a relative standard
/// uncertainty `rel_sd` (a fraction: 0.01 is 1%) at the normal 97.5%
/// quantile: [`widen`] by 1.96 · rel_sd · |centre|. `rel_sd` of 0 returns the
/// interval unchanged.
pub fn widen_for_drift(centre: f64, low: f64, high: f64, rel_sd: f64) -> (f64, f64) {
    const Z_975: f64 = 1.959_963_984_540_054;
    widen(centre, low, high, Z_975 * rel_sd.max(0.0) * centre.abs())
}

/// Widen each side of `[low, high]` around `centre` by `extra` in
/// quadrature: side' = sqrt(side² + extra²).
pub fn widen(centre: f64, low: f64, high: f64, extra: f64) -> (f64, f64) {
    let below = (centre - low).max(0.0);
    let above = (high - centre).max(0.0);
    (centre - below.hypot(extra), centre + above.hypot(extra))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ψ′ against known values (ψ′(1/2) = π²/2, ψ′(1) = π²/6) and its
    /// inverse against it; Student's t of a fractional freedom between
    /// its whole neighbours.
    #[test]
    fn trigamma_and_its_inverse() {
        let pi2 = std::f64::consts::PI.powi(2);
        assert!((trigamma(0.5) - pi2 / 2.0).abs() < 1e-10);
        assert!((trigamma(1.0) - pi2 / 6.0).abs() < 1e-10);
        assert!((trigamma(10.0) - 0.105_166_335_681_685).abs() < 1e-10);
        for x in [0.05, 0.8, 3.0, 40.0, 2000.0] {
            let back = trigamma_inverse(trigamma(x));
            assert!((back / x - 1.0).abs() < 1e-9, "{x}: {back}");
        }
        assert!(trigamma_inverse(0.0).is_nan());
        let t = student_t_975_of(2.5);
        assert!(t < student_t_975(2) && t > student_t_975(3), "{t}");
        assert!((student_t_975_of(f64::INFINITY) - 1.959_964).abs() < 1e-6);
        assert!((digamma(1.0) + 0.577_215_664_901_532_9).abs() < 1e-12);
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    /// `n` samples uniform in [centre - spread, centre + spread).
    fn uniform(rng: &mut fastrand::Rng, n: usize, centre: f64, spread: f64) -> Vec<f64> {
        (0..n)
            .map(|_| centre + spread * (2.0 * rng.f64() - 1.0))
            .collect()
    }

    fn width((lo, hi): (f64, f64)) -> f64 {
        hi - lo
    }

    #[test]
    fn quantiles_are_the_tables() {
        for (df, t) in [
            (1, 12.706),
            (2, 4.303),
            (5, 2.571),
            (30, 2.042),
            (120, 1.980),
        ] {
            assert!(
                (student_t_975(df) - t).abs() < 5e-4,
                "t({df}) = {}",
                student_t_975(df)
            );
        }
        assert!((student_t_975(1000) - 1.962_339).abs() < 1e-5);
        assert!(student_t_975(0).is_infinite());
        assert!((normal_quantile(0.975) - 1.959_963_985).abs() < 1e-8);
        assert!((normal_quantile(0.995) - 2.575_829_304).abs() < 1e-8);
        assert!((normal_quantile(0.5)).abs() < 1e-12);
        assert!((normal_quantile(0.01) + 2.326_347_874).abs() < 1e-8);
        assert!(normal_quantile(0.0).is_nan() && normal_quantile(1.0).is_nan());
    }

    #[test]
    fn median_odd_even_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[5.0, 1.0, 9.0, 7.0, 3.0]), 5.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[10.0, 20.0]), 15.0);
        assert_eq!(median(&[7.0]), 7.0);
        assert_eq!(median(&[2.0, 2.0, 2.0, 2.0]), 2.0);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn median_matches_sorted_quantile() {
        let mut rng = fastrand::Rng::with_seed(7);
        for n in 1..40 {
            let v = uniform(&mut rng, n, 100.0, 50.0);
            let mut s = v.clone();
            s.sort_unstable_by(f64::total_cmp);
            assert_eq!(median(&v), quantile_sorted(&s, 0.5), "n = {n}");
        }
    }

    #[test]
    fn quantile_type7_matches_numpy() {
        let x: Vec<f64> = (1..=10).map(f64::from).collect();
        // np.quantile(np.arange(1, 11), q)
        assert!(close(quantile_sorted(&x, 0.25), 3.25, 1e-12));
        assert!(close(quantile_sorted(&x, 0.5), 5.5, 1e-12));
        assert!(close(quantile_sorted(&x, 0.75), 7.75, 1e-12));
        assert!(close(quantile_sorted(&x, 0.1), 1.9, 1e-12));
        assert!(close(quantile_sorted(&x, 0.9), 9.1, 1e-12));
        assert_eq!(quantile_sorted(&x, 0.0), 1.0);
        assert_eq!(quantile_sorted(&x, 1.0), 10.0);
        // np.quantile([1, 2, 4, 8], 0.4) = 2 + 0.2 * (4 - 2) = 2.4
        assert!(close(
            quantile_sorted(&[1.0, 2.0, 4.0, 8.0], 0.4),
            2.4,
            1e-12
        ));
        assert_eq!(quantile_sorted(&[42.0], 0.3), 42.0);
        // Out of contract: no panic.
        assert!(quantile_sorted(&[], 0.5).is_nan());
        assert!(quantile_sorted(&x, f64::NAN).is_nan());
        assert_eq!(quantile_sorted(&x, 2.0), 10.0);
        assert_eq!(quantile_sorted(&x, -1.0), 1.0);
    }

    #[test]
    fn summary_mean_stddev_min_max() {
        let s = summarize(&[vec![2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]], 200, 1);
        assert!(close(s.mean, 5.0, 1e-12));
        // sqrt(32 / 7)
        assert!(close(s.stddev, 2.138_089_935_299_395, 1e-12));
        assert_eq!(s.median, 4.5);
        assert_eq!(s.min, 2.0);
        assert_eq!(s.max, 9.0);
        assert!(s.ci95_low <= s.median && s.median <= s.ci95_high);

        let one = summarize(&[vec![3.0]], 200, 1);
        assert_eq!(one.stddev, 0.0);
        assert_eq!((one.ci95_low, one.ci95_high), (3.0, 3.0));
        assert_eq!(one.err_pct, 0.0);
    }

    #[test]
    fn err_pct_by_hand() {
        // median 2; APEs: |1-2|/1 = 100%, 0%, |4-2|/4 = 50% -> median 50%.
        let s = summarize(&[vec![1.0, 2.0, 4.0]], 100, 1);
        assert!(close(s.err_pct, 50.0, 1e-12));

        // median 2; the 0 is skipped; APEs 100%, 33.3%, 50% -> median 50%.
        let s = summarize(&[vec![0.0, 1.0], vec![3.0, 4.0]], 100, 1);
        assert_eq!(s.median, 2.0);
        assert!(close(s.err_pct, 50.0, 1e-12));

        // Even count of non-zero APEs: [10, 12] with median 11 -> 10%, 8.33% -> 9.1666%.
        let s = summarize(&[vec![10.0, 12.0]], 100, 1);
        assert!(close(s.err_pct, (10.0 + 100.0 / 12.0) / 2.0, 1e-12));

        let zeros = summarize(&[vec![0.0, 0.0, 0.0]], 100, 1);
        assert_eq!(zeros.err_pct, 0.0);
    }

    #[test]
    fn tukey_known_outliers() {
        // Sorted: -20 -10 2 3 4 5 6 7 8 9 18 20 40 (n = 13)
        // q1 = x[3] = 3, q3 = x[9] = 9, IQR = 6
        // fences: -15, -6, 18, 27
        let samples = [
            5.0, 40.0, 2.0, -10.0, 9.0, 18.0, 3.0, 20.0, 4.0, -20.0, 6.0, 7.0, 8.0,
        ];
        let (o, classes) = tukey(&samples);
        assert_eq!(o.fences, [-15.0, -6.0, 18.0, 27.0]);
        assert_eq!(o.low_severe, 1);
        assert_eq!(o.low_mild, 1);
        assert_eq!(o.high_mild, 1);
        assert_eq!(o.high_severe, 1);
        assert_eq!(o.total(), 4);

        use OutlierClass::*;
        let expected = [
            NotAnOutlier, // 5
            HighSevere,   // 40
            NotAnOutlier, // 2
            LowMild,      // -10
            NotAnOutlier, // 9
            NotAnOutlier, // 18: exactly on the mild fence, not an outlier
            NotAnOutlier, // 3
            HighMild,     // 20
            NotAnOutlier, // 4
            LowSevere,    // -20
            NotAnOutlier, // 6
            NotAnOutlier, // 7
            NotAnOutlier, // 8
        ];
        assert_eq!(classes, expected);

        // summarize reports the same counts over the pooled blocks.
        let s = summarize(&[samples[..6].to_vec(), samples[6..].to_vec()], 100, 3);
        assert_eq!(s.outliers, o);
    }

    #[test]
    fn tukey_empty_and_constant() {
        let (o, c) = tukey(&[]);
        assert_eq!(o.total(), 0);
        assert!(c.is_empty());
        assert!(o.fences.iter().all(|f| f.is_nan()));

        let (o, c) = tukey(&[1.0; 5]);
        assert_eq!(o.total(), 0);
        assert_eq!(c, vec![OutlierClass::NotAnOutlier; 5]);
    }

    #[test]
    fn median_ci_trivial_cases() {
        let (lo, hi) = median_ci(&[], 0.95, 100, 1);
        assert!(lo.is_nan() && hi.is_nan());
        let (lo, hi) = median_ci(&[vec![], vec![]], 0.95, 100, 1);
        assert!(lo.is_nan() && hi.is_nan());
        assert_eq!(median_ci(&[vec![7.5]], 0.95, 100, 1), (7.5, 7.5));
        assert_eq!(
            median_ci(&[vec![], vec![7.5], vec![]], 0.95, 100, 1),
            (7.5, 7.5)
        );
        // No resamples: collapses to the pooled median.
        assert_eq!(
            median_ci(&[vec![1.0, 2.0], vec![4.0]], 0.95, 0, 1),
            (2.0, 2.0)
        );
        // Constant data: zero-width interval.
        assert_eq!(
            median_ci(&[vec![3.0; 10], vec![3.0; 4]], 0.95, 100, 1),
            (3.0, 3.0)
        );
    }

    #[test]
    fn median_ci_deterministic_and_contains_median() {
        let mut rng = fastrand::Rng::with_seed(11);
        let blocks: Vec<Vec<f64>> = (0..8).map(|_| uniform(&mut rng, 30, 100.0, 5.0)).collect();
        let a = median_ci(&blocks, 0.95, 1000, 42);
        let b = median_ci(&blocks, 0.95, 1000, 42);
        assert_eq!(a, b);
        let c = median_ci(&blocks, 0.95, 1000, 43);
        assert_ne!(a, c);

        let m = median(&blocks.concat());
        assert!(a.0 <= m && m <= a.1, "{a:?} vs {m}");
        assert!(a.0 < a.1);

        // Single block (ordinary bootstrap), also deterministic and containing the median.
        let single = vec![uniform(&mut rng, 200, 50.0, 3.0)];
        let s1 = median_ci(&single, 0.95, 1000, 5);
        assert_eq!(s1, median_ci(&single, 0.95, 1000, 5));
        let m = median(&single[0]);
        assert!(s1.0 <= m && m <= s1.1, "{s1:?} vs {m}");

        // A lower confidence gives a narrower (nested) interval.
        let s50 = median_ci(&single, 0.5, 1000, 5);
        assert!(s1.0 <= s50.0 && s50.1 <= s1.1 && width(s50) < width(s1));
    }

    #[test]
    fn median_ci_narrows_as_n_grows() {
        let mut rng = fastrand::Rng::with_seed(99);
        // Ordinary bootstrap, one block: width ~ 1/sqrt(n), so 100x the samples ~ 1/10 the width.
        let small = median_ci(&[uniform(&mut rng, 100, 100.0, 10.0)], 0.95, 2000, 1);
        let large = median_ci(&[uniform(&mut rng, 10_000, 100.0, 10.0)], 0.95, 2000, 1);
        assert!(width(large) * 4.0 < width(small), "{small:?} vs {large:?}");

        // Cluster bootstrap of i.i.d. blocks narrows the same way.
        let small: Vec<Vec<f64>> = (0..10)
            .map(|_| uniform(&mut rng, 10, 100.0, 10.0))
            .collect();
        let large: Vec<Vec<f64>> = (0..10)
            .map(|_| uniform(&mut rng, 1000, 100.0, 10.0))
            .collect();
        let (ws, wl) = (
            width(median_ci(&small, 0.95, 2000, 1)),
            width(median_ci(&large, 0.95, 2000, 1)),
        );
        assert!(wl * 4.0 < ws, "{ws} vs {wl}");
    }

    #[test]
    fn median_ci_widens_with_drift_between_blocks() {
        let mut rng = fastrand::Rng::with_seed(2024);
        // 10 blocks of 50, block k centred at 100 + k, within-block scatter +-1.
        let drifting: Vec<Vec<f64>> = (0..10)
            .map(|k| uniform(&mut rng, 50, 100.0 + f64::from(k), 1.0))
            .collect();
        // Same number of samples, same scatter, all in one block centred at 104.5.
        let pooled = vec![uniform(&mut rng, 500, 104.5, 1.0)];
        // ...and the same 500 stable samples split into 10 blocks.
        let stable_blocks: Vec<Vec<f64>> = pooled[0].chunks(50).map(<[f64]>::to_vec).collect();

        let wd = width(median_ci(&drifting, 0.95, 2000, 8));
        let wp = width(median_ci(&pooled, 0.95, 2000, 8));
        let ws = width(median_ci(&stable_blocks, 0.95, 2000, 8));
        assert!(wd > 5.0 * wp, "drifting {wd} vs pooled {wp}");
        assert!(wd > 5.0 * ws, "drifting {wd} vs stable blocks {ws}");
        // The drift spans 9 ns; the interval of the median should reflect a good part of it.
        assert!(wd > 1.0, "drifting {wd}");
    }

    #[test]
    fn median_ci_unequal_blocks() {
        let blocks = vec![vec![1.0], vec![2.0, 2.0, 2.0], vec![], vec![10.0, 11.0]];
        let (lo, hi) = median_ci(&blocks, 0.95, 500, 3);
        assert!(lo.is_finite() && hi.is_finite());
        assert!((1.0..=11.0).contains(&lo) && (1.0..=11.0).contains(&hi) && lo <= hi);
    }

    #[test]
    fn summarize_empty_does_not_panic() {
        for input in [vec![], vec![vec![]], vec![vec![], vec![]]] {
            let s = summarize(&input, 100, 1);
            assert!(s.median.is_nan() && s.mean.is_nan());
            assert_eq!((s.stddev, s.err_pct), (0.0, 0.0));
            assert!(s.min.is_nan() && s.max.is_nan());
            assert!(s.ci95_low.is_nan() && s.ci95_high.is_nan());
            assert_eq!(s.outliers.total(), 0);
        }
    }

    #[test]
    fn summarize_with_nan_does_not_panic() {
        let s = summarize(&[vec![1.0, f64::NAN, 3.0], vec![2.0]], 100, 1);
        assert!(s.mean.is_nan());
        let _ = tukey(&[f64::NAN, 1.0]);
        let _ = median_ci(&[vec![f64::NAN], vec![1.0, 2.0]], 0.95, 50, 1);
        let _ = median_ci(&[vec![1.0, 2.0]], f64::NAN, 50, 1);
    }

    #[test]
    fn summarize_uses_median_ci() {
        let mut rng = fastrand::Rng::with_seed(5);
        let blocks: Vec<Vec<f64>> = (0..5).map(|_| uniform(&mut rng, 20, 10.0, 1.0)).collect();
        let s = summarize(&blocks, 500, 77);
        assert_eq!((s.ci95_low, s.ci95_high), median_ci(&blocks, 0.95, 500, 77));
        assert_eq!(s.median, median(&blocks.concat()));
    }

    #[test]
    fn relative_half_width_examples() {
        assert!(close(
            relative_half_width_pct(100.0, 98.0, 101.0),
            2.0,
            1e-12
        ));
        assert!(close(
            relative_half_width_pct(100.0, 99.5, 103.0),
            3.0,
            1e-12
        ));
        assert!(close(
            relative_half_width_pct(-50.0, -51.0, -49.5),
            2.0,
            1e-12
        ));
        assert_eq!(relative_half_width_pct(10.0, 10.0, 10.0), 0.0);
        assert_eq!(relative_half_width_pct(0.0, -1.0, 1.0), f64::INFINITY);
        assert_eq!(relative_half_width_pct(f64::NAN, 1.0, 2.0), f64::INFINITY);
        assert_eq!(relative_half_width_pct(1.0, f64::NAN, 2.0), f64::INFINITY);
        assert_eq!(relative_half_width_pct(1.0, 0.5, f64::NAN), f64::INFINITY);
    }

    #[test]
    fn types_are_serialize() {
        // Compile-time check (no JSON serializer among the dependencies).
        fn assert_serialize<T: Serialize>() {}
        assert_serialize::<OutlierClass>();
        assert_serialize::<Outliers>();
        assert_serialize::<Summary>();
    }

    #[test]
    fn drift_widens_in_quadrature() {
        let (low, high) = widen_for_drift(100.0, 97.0, 104.0, 0.0);
        assert_eq!((low, high), (97.0, 104.0));
        // 1.96 * 1% of 100 = 1.96; sqrt(3^2 + 1.96^2) = 3.5835...
        let (low, high) = widen_for_drift(100.0, 97.0, 104.0, 0.01);
        assert!((100.0 - low - 3.583_498).abs() < 1e-5, "{low}");
        assert!((high - 100.0 - 4.454_375).abs() < 1e-5, "{high}");
        // Around zero, drift adds nothing.
        assert_eq!(widen_for_drift(0.0, -0.5, 0.5, 0.01), (-0.5, 0.5));
    }
}
