//! Fit per-op time against input size to the usual complexity classes.
//!
//! Least squares through the origin for each candidate g(n) in O(1),
//! O(log n), O(n), O(n log n), O(n²): the coefficient is Σ t·g / Σ g², the
//! error is the root mean square of the residuals relative to the mean time,
//! and the best fit is the one with the smallest error. This is the method of
//! Google Benchmark's `MinimalLeastSq` (complexity.cc) and of nanobench's
//! `complexityBigO`. Pure arithmetic: no I/O.

use std::fmt;

use serde::Serialize;

/// A complexity class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Complexity {
    #[serde(rename = "O(1)")]
    Constant,
    #[serde(rename = "O(log n)")]
    Logarithmic,
    #[serde(rename = "O(n)")]
    Linear,
    #[serde(rename = "O(n log n)")]
    Linearithmic,
    #[serde(rename = "O(n^2)")]
    Quadratic,
}

impl Complexity {
    pub const ALL: [Complexity; 5] = [
        Complexity::Constant,
        Complexity::Logarithmic,
        Complexity::Linear,
        Complexity::Linearithmic,
        Complexity::Quadratic,
    ];

    /// g(n) of this class.
    pub fn g(self, n: f64) -> f64 {
        match self {
            Complexity::Constant => 1.0,
            Complexity::Logarithmic => n.log2(),
            Complexity::Linear => n,
            Complexity::Linearithmic => n * n.log2(),
            Complexity::Quadratic => n * n,
        }
    }
}

impl fmt::Display for Complexity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Complexity::Constant => "O(1)",
            Complexity::Logarithmic => "O(log n)",
            Complexity::Linear => "O(n)",
            Complexity::Linearithmic => "O(n log n)",
            Complexity::Quadratic => "O(n^2)",
        })
    }
}

/// One candidate fit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Candidate {
    pub class: Complexity,
    /// Time per op = coefficient · g(n), in ns.
    pub coefficient: f64,
    /// RMS of the residuals relative to the mean time (0.05 is 5%).
    pub rms: f64,
}

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
