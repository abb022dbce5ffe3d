//! The summary of a suite of rows: how many ran, the geometric mean of
//! their medians, and, against a saved baseline, the geometric mean of the
//! ratios with its 95% interval.
//!
//! The interval of the geometric mean of ratios works on logs: each row's
//! interval gives a standard error, (ln high − ln low) / (2 · 1.96); the
//! mean of n log ratios has standard error sqrt(Σ se²) / n, and the interval
//! is exp(mean ± 1.96 · se). Rows are taken as independent.

use crate::results::{BenchResult, Ratio, SuiteSummary};

const Z_975: f64 = 1.959_963_984_540_054;

/// The summary of `results`; `None` for fewer than two rows.
pub fn summarize(results: &[BenchResult]) -> Option<SuiteSummary> {
    if results.len() < 2 {
        return None;
    }
    let medians: Vec<f64> = results
        .iter()
        .filter_map(|r| r.figures.as_ref())
        .map(|f| f.ns_per_op.median)
        .filter(|m| m.is_finite() && *m > 0.0)
        .collect();
    let measured = results.iter().filter(|r| r.figures.is_some()).count();
    let ratios: Vec<Ratio> = results
        .iter()
        .filter_map(|r| r.baseline.as_ref())
        .map(|b| b.ratio)
        .filter(|r| r.value.is_finite() && r.value > 0.0)
        .collect();
    Some(SuiteSummary {
        rows: results.len(),
        measured,
        failed: results.len() - measured,
        geomean_ns: geometric_mean(&medians),
        timed_rows: medians.len(),
        baseline_rows: ratios.len(),
        baseline_ratio: geometric_mean_ratio(&ratios),
    })
}

/// exp(mean(ln x)); NaN when `values` is empty.
pub fn geometric_mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    (values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp()
}

/// The geometric mean of `ratios` with its interval; `None` when empty.
pub fn geometric_mean_ratio(ratios: &[Ratio]) -> Option<Ratio> {
    if ratios.is_empty() {
        return None;
    }
    let n = ratios.len() as f64;
    let mean = ratios.iter().map(|r| r.value.ln()).sum::<f64>() / n;
    let variance: f64 = ratios
        .iter()
        .map(|r| {
            let (low, high) = (r.low, r.high);
            if low > 0.0 && high >= low && high.is_finite() {
                ((high.ln() - low.ln()) / (2.0 * Z_975)).powi(2)
            } else {
                0.0
            }
        })
        .sum();
    let se = variance.sqrt() / n;
    Some(Ratio {
        value: mean.exp(),
        low: (mean - Z_975 * se).exp(),
        high: (mean + Z_975 * se).exp(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometric_mean_of_known_values() {
        assert!((geometric_mean(&[1.0, 4.0]) - 2.0).abs() < 1e-12);
        assert!((geometric_mean(&[2.0, 8.0, 4.0]) - 4.0).abs() < 1e-12);
        assert!(geometric_mean(&[]).is_nan());
    }

    #[test]
    fn ratios_combine_on_logs() {
        let exact = [Ratio::exact(2.0), Ratio::exact(0.5)];
        let g = geometric_mean_ratio(&exact).expect("two ratios");
        assert!((g.value - 1.0).abs() < 1e-12);
        assert_eq!((g.low, g.high), (g.value, g.value));
        // Two equal rows of interval e^±0.1: the mean's is e^±(0.1/√2).
        let wide = Ratio {
            value: 1.0,
            low: (-0.1f64).exp(),
            high: 0.1f64.exp(),
        };
        let g = geometric_mean_ratio(&[wide, wide]).expect("two ratios");
        let half = 0.1 / 2f64.sqrt();
        assert!((g.high.ln() - half).abs() < 1e-9, "{g:?}");
        assert!((g.low.ln() + half).abs() < 1e-9, "{g:?}");
        assert!(geometric_mean_ratio(&[]).is_none());
    }
}
