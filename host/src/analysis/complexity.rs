//! Fit per-op time against input size to the usual complexity classes.
//!
//! Least squares through the origin for each candidate g(n) in O(1),
//! O(log n), O(n), O(n log n), O(n²): the coefficient is Σ t·g / Σ g², the
//! error is the root mean square of the residuals relative to the mean time,
//! and the best fit is the one with the smallest error. This is the method of
//! Google Benchmark's `MinimalLeastSq` (complexity.cc) and of nanobench's
//! `complexityBigO`. Pure arithmetic: no I/O.

use serde::Serialize;

use crate::results::{BenchResult, Candidate, Complexity, ComplexityResult, Foreign};

/// The best fit and every candidate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fit {
    pub best: Complexity,
    pub coefficient: f64,
    pub rms: f64,
    pub candidates: Vec<Candidate>,
}

/// Fit `(size, ns per op)` points; `None` with fewer than two distinct
/// positive sizes.
pub fn fit(points: &[(f64, f64)]) -> Option<Fit> {
    let points: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|(n, t)| *n > 0.0 && n.is_finite() && t.is_finite())
        .collect();
    let mut sizes: Vec<f64> = points.iter().map(|p| p.0).collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    if sizes.len() < 2 {
        return None;
    }
    let mean = points.iter().map(|p| p.1).sum::<f64>() / points.len() as f64;
    let candidates: Vec<Candidate> = Complexity::ALL
        .iter()
        .map(|&class| {
            let gg: f64 = points.iter().map(|(n, _)| class.g(*n).powi(2)).sum();
            let tg: f64 = points.iter().map(|(n, t)| t * class.g(*n)).sum();
            let coefficient = if gg > 0.0 { tg / gg } else { 0.0 };
            let residuals: f64 = points
                .iter()
                .map(|(n, t)| (t - coefficient * class.g(*n)).powi(2))
                .sum();
            let rms = (residuals / points.len() as f64).sqrt() / mean.abs();
            Candidate {
                class,
                coefficient,
                rms,
            }
        })
        .collect();
    let best = candidates
        .iter()
        .copied()
        .min_by(|a, b| a.rms.total_cmp(&b.rms))?;
    Some(Fit {
        best: best.class,
        coefficient: best.coefficient,
        rms: best.rms,
        candidates,
    })
}

/// Fit per-op time against size for every benchmark measured at two or more
/// sizes.
pub fn fit_results(results: &[BenchResult]) -> Vec<ComplexityResult> {
    let mut order: Vec<(&Foreign, &Foreign)> = Vec::new();
    for r in results {
        if r.size.is_some() && !order.contains(&(&r.path, &r.benchmark)) {
            order.push((&r.path, &r.benchmark));
        }
    }
    order
        .into_iter()
        .filter_map(|(path, benchmark)| {
            let points: Vec<(u64, f64)> = results
                .iter()
                .filter(|r| r.path == *path && r.benchmark == *benchmark)
                .filter_map(|r| Some((r.size?, r.figures.as_ref()?.ns_per_op.median)))
                .collect();
            let as_f64: Vec<(f64, f64)> = points.iter().map(|&(n, t)| (n as f64, t)).collect();
            let fit = fit(&as_f64)?;
            Some(ComplexityResult {
                benchmark: benchmark.clone(),
                path: path.clone(),
                best: fit.best,
                coefficient: fit.coefficient,
                rms: fit.rms,
                candidates: fit.candidates,
                points,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZES: [f64; 6] = [16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0];

    fn points(f: impl Fn(f64) -> f64) -> Vec<(f64, f64)> {
        SIZES.iter().map(|&n| (n, f(n))).collect()
    }

    #[test]
    fn exact_curves_are_recognised_with_their_coefficient() -> Result<(), String> {
        for class in Complexity::ALL {
            let fit = fit(&points(|n| 3.0 * class.g(n))).ok_or("no fit")?;
            assert_eq!(fit.best, class);
            assert!(
                (fit.coefficient - 3.0).abs() < 1e-9,
                "{class}: {}",
                fit.coefficient
            );
            assert!(fit.rms < 1e-9);
        }
        Ok(())
    }

    #[test]
    fn noisy_curves_still_fit() -> Result<(), String> {
        // ±3% deterministic noise.
        let noise = |i: usize| 1.0 + [0.03, -0.02, 0.01, -0.03, 0.02, -0.01][i % 6];
        let n_log_n: Vec<(f64, f64)> = SIZES
            .iter()
            .enumerate()
            .map(|(i, &n)| (n, 2.5 * n * n.log2() * noise(i)))
            .collect();
        let fit_nlogn = fit(&n_log_n).ok_or("no fit")?;
        assert_eq!(fit_nlogn.best, Complexity::Linearithmic);
        assert!((fit_nlogn.coefficient / 2.5 - 1.0).abs() < 0.05);
        let quadratic: Vec<(f64, f64)> = SIZES
            .iter()
            .enumerate()
            .map(|(i, &n)| (n, 0.7 * n * n * noise(i)))
            .collect();
        assert_eq!(fit(&quadratic).ok_or("no fit")?.best, Complexity::Quadratic);
        Ok(())
    }

    #[test]
    fn too_few_sizes_give_no_fit() {
        assert!(fit(&[]).is_none());
        assert!(fit(&[(16.0, 1.0), (16.0, 1.1)]).is_none());
        assert!(fit(&[(0.0, 1.0), (16.0, 1.1)]).is_none());
        assert!(fit(&[(16.0, 1.0), (32.0, 2.0)]).is_some());
    }
}
