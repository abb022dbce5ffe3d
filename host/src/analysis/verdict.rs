//! Is a variant faster than its reference, and is that real? Ratios of
//! per-op times with 95% intervals, and a three-state verdict.
//!
//! Two sources of ratios:
//! - interleaved rounds (`host compare`): in each round every variant takes a
//!   block of samples; the ratio is the median of the per-round ratios (of
//!   the blocks' minima: [`crate::analysis::compare`] says why), and
//!   its interval comes from the sign test (distribution-free order
//!   statistics: the k-th smallest and largest per-round ratio, with k from
//!   the binomial(n, 1/2) distribution), as in nanobench's `compare`;
//! - two separate runs (`--baseline`): the ratio of the two medians, with a
//!   percentile-bootstrap interval (blocks of each run resampled
//!   independently), widened by the run-to-run drift of both runs.
//!
//! The verdict reads the interval against a threshold h either side of 1:
//! "same" when it lies within [1/(1+h), 1+h]; "slower" when it lies wholly
//! above 1+h, "faster" when wholly below 1/(1+h); "unsure" when it straddles
//! a threshold (more samples would narrow it). Pure arithmetic: no I/O, no
//! clocks.

use crate::analysis::stats::{self, normal_quantile};
use crate::options::NoiseBand;
use crate::results::{Foreign, Ratio, Verdict};

/// The verdict on `ratio` against the noise band.
pub fn verdict(ratio: &Ratio, band: NoiseBand) -> Verdict {
    let (low, high) = (ratio.low, ratio.high);
    if !(low.is_finite() && high.is_finite()) {
        return Verdict::Unsure;
    }
    let upper = 1.0 + band.half();
    let lower = 1.0 / upper;
    if low >= lower && high <= upper {
        Verdict::Same
    } else if low > upper {
        Verdict::Slower
    } else if high < lower {
        Verdict::Faster
    } else {
        Verdict::Unsure
    }
}

/// The verdict in plain words, e.g. "`mod16` is 1.42× faster than `mod13`
/// [1.40×, 1.44×]".
pub fn describe(
    variant: &Foreign,
    reference: &Foreign,
    ratio: &Ratio,
    verdict: Verdict,
    band: NoiseBand,
) -> Foreign {
    Foreign::compose([variant, reference], |[variant, reference]| match verdict {
        Verdict::Faster => format!(
            "`{variant}` is {:.3}× faster than `{reference}` [{:.3}×, {:.3}×]",
            1.0 / ratio.value,
            1.0 / ratio.high,
            1.0 / ratio.low
        ),
        Verdict::Slower => format!(
            "`{variant}` is {:.3}× slower than `{reference}` [{:.3}×, {:.3}×]",
            ratio.value, ratio.low, ratio.high
        ),
        Verdict::Same => format!(
            "`{variant}` vs `{reference}`: no difference beyond ±{:.2}% (the band is ±{}%; ratio {:.4} [{:.4}, {:.4}])",
            reach_pct(ratio),
            band.half() * 100.0,
            ratio.value,
            ratio.low,
            ratio.high
        ),
        Verdict::Unsure if ratio.value.is_finite() && ratio.low.is_nan() && ratio.high.is_nan() => {
            format!(
                "`{variant}` vs `{reference}`: unsure, no interval yet (ratio {:.4} of one round)",
                ratio.value
            )
        }
        Verdict::Unsure => format!(
            "`{variant}` vs `{reference}`: unsure, needs more samples (ratio {:.4} [{:.4}, {:.4}])",
            ratio.value, ratio.low, ratio.high
        ),
    })
}

/// How far from 1 the interval reaches, in percent: the largest difference
/// the data cannot rule out.
pub fn reach_pct(ratio: &Ratio) -> f64 {
    (1.0 - ratio.low).abs().max((ratio.high - 1.0).abs()) * 100.0
}

/// The smallest effect a comparison could see when it stopped: the
/// half-width of the ratio's interval, in percent of the ratio.
pub fn mde_pct(ratio: &Ratio) -> f64 {
    (ratio.high - ratio.low) / 2.0 / ratio.value * 100.0
}

/// The median of per-round ratios and its sign-test interval at
/// `confidence`; with too few rounds for the sign test at that confidence
/// (fewer than 6 at 95%: a round cut short by a time budget), Student's t
/// over the log ratios, never narrower than their extremes. `None` for no
/// finite positive ratios, or for one: a single round has no interval.
pub fn paired_ratio(ratios: &[f64], confidence: f64) -> Option<Ratio> {
    let mut sorted: Vec<f64> = ratios
        .iter()
        .copied()
        .filter(|r| r.is_finite() && *r > 0.0)
        .collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let k = sign_test_rank(n, 1.0 - confidence);
    // k is 1-based.
    let (low, high) = match k {
        Some(k) => (sorted[k - 1], sorted[n - k]),
        None if n >= 2 => {
            let (low, high) = few_rounds_interval(&sorted, confidence);
            (low.min(sorted[0]), high.max(sorted[n - 1]))
        }
        None => return None,
    };
    Some(Ratio {
        value: stats::median(&sorted),
        low,
        high,
    })
}

/// Student's t interval at `confidence` of the mean log ratio of at least
/// two `ratios`, as ratios: the 95% quantile of t scaled to `confidence` by
/// the normal quantiles' ratio (as [`crate::analysis::compare`] scales the
/// processes' interval).
fn few_rounds_interval(ratios: &[f64], confidence: f64) -> (f64, f64) {
    let logs: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
    let n = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / n;
    let scale = normal_quantile(1.0 - (1.0 - confidence) / 2.0) / normal_quantile(0.975);
    let half =
        stats::student_t_975(logs.len() - 1) * scale.max(1.0) * stats::sample_sd(&logs) / n.sqrt();
    ((mean - half).exp(), (mean + half).exp())
}

/// The largest k >= 1 with P(B <= k - 1) <= alpha / 2 for B ~ binomial(n, 1/2):
/// `[x_(k), x_(n-k+1)]` is then a distribution-free interval of the median
/// with coverage at least 1 - alpha. `None` when even k = 1 is too wide.
pub fn sign_test_rank(n: usize, alpha: f64) -> Option<usize> {
    let mut k = None;
    let mut cumulative = 0.0;
    // ln P(B = j), updated from j to j + 1 by the factor (n - j) / (j + 1).
    let mut ln_pmf = -(n as f64) * std::f64::consts::LN_2;
    for j in 0..n.div_ceil(2) {
        cumulative += ln_pmf.exp();
        if cumulative > alpha / 2.0 {
            break;
        }
        k = Some(j + 1);
        ln_pmf += ((n - j) as f64 / (j + 1) as f64).ln();
    }
    k
}

/// Ratio of the median of `current` to the median of `saved` (both per-op
/// samples by block), with a percentile-bootstrap interval widened in log
/// space by the drift of both runs (`drift` a relative standard deviation per
/// run, as a fraction).
pub fn unpaired_ratio(
    current: &[Vec<f64>],
    saved: &[Vec<f64>],
    drift: f64,
    resamples: usize,
    seed: u64,
) -> Option<Ratio> {
    let all = |blocks: &[Vec<f64>]| blocks.iter().flatten().copied().collect::<Vec<f64>>();
    let (now, then) = (stats::median(&all(current)), stats::median(&all(saved)));
    if !(now > 0.0 && then > 0.0) {
        return None;
    }
    let a = stats::resampled_medians(current, resamples, seed);
    let b = stats::resampled_medians(saved, resamples, seed.wrapping_add(1));
    let mut logs: Vec<f64> = a
        .iter()
        .zip(&b)
        .filter(|(x, y)| **x > 0.0 && **y > 0.0)
        .map(|(x, y)| (x / y).ln())
        .collect();
    if logs.is_empty() {
        return None;
    }
    logs.sort_by(f64::total_cmp);
    let centre = (now / then).ln();
    let (low, high) = (
        stats::quantile_sorted(&logs, 0.025),
        stats::quantile_sorted(&logs, 0.975),
    );
    // Both runs drift independently: sd of the log ratio from drift is
    // drift·√2; add it to each side in quadrature.
    let widen = 1.959_963_984_540_054 * drift * std::f64::consts::SQRT_2;
    let below = (centre - low).max(0.0).hypot(widen);
    let above = (high - centre).max(0.0).hypot(widen);
    Some(Ratio {
        value: centre.exp(),
        low: (centre - below).exp(),
        high: (centre + above).exp(),
    })
}

/// Whether a slowdown by more than `pct` percent is certain.
pub fn is_regression(ratio: &Ratio, pct: f64) -> bool {
    ratio.low > 1.0 + pct / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The band of ±`half` (a fraction) either side of 1.
    fn band(half: f64) -> NoiseBand {
        NoiseBand::from_width_pct(half * 200.0).unwrap_or_default()
    }

    fn ratio(ratio: f64, low: f64, high: f64) -> Ratio {
        Ratio {
            value: ratio,
            low,
            high,
        }
    }

    #[test]
    fn verdicts_against_the_noise_threshold() {
        let t = 0.01;
        assert_eq!(verdict(&ratio(1.0, 0.995, 1.005), band(t)), Verdict::Same);
        assert_eq!(verdict(&ratio(1.005, 1.002, 1.008), band(t)), Verdict::Same);
        assert_eq!(verdict(&ratio(1.42, 1.40, 1.44), band(t)), Verdict::Slower);
        // Straddling the threshold: more samples needed, even if 1 is out.
        assert_eq!(
            verdict(&ratio(1.01, 1.005, 1.015), band(t)),
            Verdict::Unsure
        );
        assert_eq!(
            verdict(&ratio(1.02, 1.015, 1.025), band(t)),
            Verdict::Slower
        );
        assert_eq!(verdict(&ratio(0.70, 0.69, 0.71), band(t)), Verdict::Faster);
        assert_eq!(verdict(&ratio(1.0, 0.98, 1.03), band(t)), Verdict::Unsure);
        assert_eq!(
            verdict(&ratio(1.0, f64::NAN, 1.0), band(t)),
            Verdict::Unsure
        );
        // The threshold is symmetric in log space.
        assert_eq!(
            verdict(&ratio(0.995, 1.0 / 1.01, 1.0), band(t)),
            Verdict::Same
        );
    }

    #[test]
    fn sign_test_ranks_match_tables() {
        // Known ranks for the 95% interval of a median (e.g. Conover's table):
        // n = 6 -> 1, n = 10 -> 2, n = 20 -> 6, n = 50 -> 18, n = 100 -> 40.
        assert_eq!(sign_test_rank(5, 0.05), None);
        assert_eq!(sign_test_rank(6, 0.05), Some(1));
        assert_eq!(sign_test_rank(10, 0.05), Some(2));
        assert_eq!(sign_test_rank(20, 0.05), Some(6));
        assert_eq!(sign_test_rank(50, 0.05), Some(18));
        assert_eq!(sign_test_rank(100, 0.05), Some(40));
        // Large n does not overflow.
        let k = sign_test_rank(100_000, 0.05).unwrap_or(0);
        assert!((49_680..49_700).contains(&k), "{k}");
    }

    #[test]
    fn paired_ratio_of_known_rounds() -> Result<(), String> {
        // 20 rounds: ratios 1.00, 1.01, ..., 1.19 in shuffled order.
        let mut ratios: Vec<f64> = (0..20).map(|i| 1.0 + i as f64 * 0.01).collect();
        ratios.reverse();
        let r = paired_ratio(&ratios, 0.95).ok_or("no ratio")?;
        assert!((r.value - 1.095).abs() < 1e-12);
        // k = 6: the 6th smallest (1.05) and the 6th largest (1.14).
        assert!((r.low - 1.05).abs() < 1e-12 && (r.high - 1.14).abs() < 1e-12);
        assert_eq!(verdict(&r, band(0.01)), Verdict::Slower);
        assert!(paired_ratio(&[], 0.95).is_none());
        Ok(())
    }

    /// Fewer rounds than the sign test needs: one round has no interval;
    /// two to five get Student's t over their logs, at least as wide as
    /// their extremes, and wider at a higher confidence.
    #[test]
    fn a_few_rounds_get_a_t_interval_and_one_round_none() -> Result<(), String> {
        assert!(paired_ratio(&[1.8], 0.95).is_none());
        let two = paired_ratio(&[1.80, 1.82], 0.95).ok_or("no ratio")?;
        // t(0.975, 1) = 12.7062: the mean log ± t · sd / √2.
        let (mean, sd) = (
            (1.8f64.ln() + 1.82f64.ln()) / 2.0,
            (1.82f64 / 1.8).ln() / 2f64.sqrt(),
        );
        let half = 12.706_204_736 * sd / 2f64.sqrt();
        assert!((two.low - (mean - half).exp()).abs() < 1e-8, "{two:?}");
        assert!((two.high - (mean + half).exp()).abs() < 1e-8, "{two:?}");
        assert_eq!(verdict(&two, band(0.005)), Verdict::Slower);
        // Rounds that disagree make the verdict unsure, not certain.
        let apart = paired_ratio(&[0.99, 1.03, 1.00], 0.95).ok_or("no ratio")?;
        assert_eq!(verdict(&apart, band(0.005)), Verdict::Unsure);
        // Identical rounds: the interval is their one value, never narrower.
        let alike = paired_ratio(&[1.5, 1.5], 0.95).ok_or("no ratio")?;
        assert_eq!((alike.low, alike.high), (1.5, 1.5));
        let family = paired_ratio(&[1.80, 1.82], 1.0 - 0.05 / 3.0).ok_or("no ratio")?;
        assert!(family.low < two.low && family.high > two.high, "{family:?}");
        Ok(())
    }

    #[test]
    fn a_against_a_is_the_same_and_a_real_difference_is_found() -> Result<(), String> {
        let mut rng = fastrand::Rng::with_seed(7);
        // Per-round noise of ±1% (uniform) on both sides.
        let noisy = |rng: &mut fastrand::Rng, x: f64| x * (1.0 + (rng.f64() - 0.5) * 0.02);
        let same: Vec<f64> = (0..200)
            .map(|_| noisy(&mut rng, 1.0) / noisy(&mut rng, 1.0))
            .collect();
        let r = paired_ratio(&same, 0.95).ok_or("no ratio")?;
        assert_eq!(verdict(&r, band(0.01)), Verdict::Same, "{r:?}");
        let slower: Vec<f64> = (0..200)
            .map(|_| noisy(&mut rng, 1.015) / noisy(&mut rng, 1.0))
            .collect();
        let r = paired_ratio(&slower, 0.95).ok_or("no ratio")?;
        assert_eq!(verdict(&r, band(0.01)), Verdict::Slower, "{r:?}");
        Ok(())
    }

    #[test]
    fn unpaired_ratio_and_regressions() -> Result<(), String> {
        let blocks = |centre: f64| -> Vec<Vec<f64>> {
            (0..10)
                .map(|b| {
                    (0..20)
                        .map(|i| centre * (1.0 + ((i * 7 + b * 3) % 11) as f64 * 0.001))
                        .collect()
                })
                .collect()
        };
        let r = unpaired_ratio(&blocks(1.2), &blocks(1.0), 0.0, 500, 3).ok_or("no ratio")?;
        assert!((r.value - 1.2).abs() < 1e-9);
        assert!(r.low > 1.19 && r.high < 1.21, "{r:?}");
        assert!(is_regression(&r, 10.0));
        assert!(!is_regression(&r, 25.0));
        // Drift widens the interval.
        let wide = unpaired_ratio(&blocks(1.2), &blocks(1.0), 0.01, 500, 3).ok_or("no ratio")?;
        assert!(wide.low < r.low && wide.high > r.high);
        assert!(unpaired_ratio(&[], &blocks(1.0), 0.0, 10, 1).is_none());
        Ok(())
    }

    #[test]
    fn descriptions_read_plainly() {
        let r = ratio(1.0 / 1.42, 1.0 / 1.44, 1.0 / 1.40);
        assert_eq!(
            describe(
                &"mod16".into(),
                &"mod13".into(),
                &r,
                Verdict::Faster,
                band(0.01)
            ),
            "`mod16` is 1.420× faster than `mod13` [1.400×, 1.440×]"
        );
        assert!(
            describe(
                &"a".into(),
                &"b".into(),
                &ratio(1.0, 0.999, 1.001),
                Verdict::Same,
                band(0.01)
            )
            .unescaped()
            .contains("no difference beyond ±0.10% (the band is ±1%")
        );
        assert!((reach_pct(&ratio(1.0, 0.997, 1.001)) - 0.3).abs() < 1e-9);
        assert!((mde_pct(&ratio(2.0, 1.9, 2.1)) - 5.0).abs() < 1e-9);
    }
}
