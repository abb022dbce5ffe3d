//! Verdicts of interleaved variants: each variant against the reference.
//!
//! Rounds pair the variants: in every round of every worker process each
//! variant took one block, so the ratio of the two block medians is one
//! paired observation. The ratio is the median of all of them, and its 95%
//! interval must hold for both sources of variation:
//! - within processes: the sign-test interval over every round
//!   ([`crate::analysis::verdict::paired_ratio`]);
//! - between processes (three or more): Student's t over the log of each
//!   process's median ratio.
//!
//! The interval reported spans both. With instruction counts, the ratio is
//! exact. Pure arithmetic over what the workers measured.

use crate::analysis::stats;
use crate::analysis::verdict;
use crate::options::{Metric, NoiseBand};
use crate::results::{Comparison, Ratio};

/// What the verdicts need of one variant.
pub struct Rounds<'a> {
    pub name: &'a str,
    /// Per worker process, per round, the corrected per-op samples.
    pub per_op: Vec<Vec<Vec<f64>>>,
    /// Instructions per op, when counted.
    pub fuel_per_op: Option<f64>,
}

impl Rounds<'_> {
    /// The median per-op time of each round, per process.
    fn medians(&self) -> Vec<Vec<f64>> {
        self.per_op
            .iter()
            .map(|rounds| rounds.iter().map(|block| stats::median(block)).collect())
            .collect()
    }
}

/// The ratio of `variant` to `reference` over paired rounds, per process.
pub fn paired_across_processes(variant: &[Vec<f64>], reference: &[Vec<f64>]) -> Option<Ratio> {
    let per_process: Vec<Vec<f64>> = variant
        .iter()
        .zip(reference)
        .map(|(v, r)| v.iter().zip(r).map(|(a, b)| a / b).collect())
        .collect();
    let pooled: Vec<f64> = per_process.concat();
    let within = verdict::paired_ratio(&pooled, 0.95)?;
    let logs: Vec<f64> = per_process
        .iter()
        .map(|ratios| stats::median(ratios).ln())
        .filter(|l| l.is_finite())
        .collect();
    if logs.len() < 3 {
        return Some(within);
    }
    let centre = within.ratio.ln();
    let (low, high) = stats::between_processes_ci(centre, &logs);
    Some(Ratio {
        ratio: within.ratio,
        ci95_low: within.ci95_low.min(low.exp()),
        ci95_high: within.ci95_high.max(high.exp()),
    })
}

/// The verdict of every variant against `variants[reference]`.
pub fn judge(
    variants: &[Rounds<'_>],
    reference: usize,
    band: NoiseBand,
    metric: Metric,
) -> Vec<Comparison> {
    let base = &variants[reference];
    let base_rounds = base.medians();
    variants
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != reference)
        .map(|(_, v)| {
            let (ratio, metric_name) = match (metric, v.fuel_per_op, base.fuel_per_op) {
                (Metric::Instructions, Some(now), Some(then)) if then > 0.0 => {
                    (Some(Ratio::exact(now / then)), "instructions")
                }
                _ => (paired_across_processes(&v.medians(), &base_rounds), "time"),
            };
            let ratio = ratio.unwrap_or(Ratio::exact(f64::NAN));
            let verdict = verdict::verdict(&ratio, band);
            Comparison {
                variant: v.name.to_string(),
                reference: base.name.to_string(),
                metric: metric_name.to_string(),
                ratio: ratio.ratio,
                ci95_low: ratio.ci95_low,
                ci95_high: ratio.ci95_high,
                verdict,
                text: verdict::describe(v.name, base.name, &ratio, verdict, band),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processes_that_disagree_widen_the_interval() -> Result<(), String> {
        // Within each process the rounds agree closely; the processes do
        // not: 0.99, 1.00, 1.01.
        let reference: Vec<Vec<f64>> = (0..3).map(|_| vec![1.0; 30]).collect();
        let variant: Vec<Vec<f64>> = (0..3)
            .map(|p| {
                (0..30)
                    .map(|r| 0.99 + 0.01 * p as f64 + (r % 3) as f64 * 1e-5)
                    .collect()
            })
            .collect();
        let r = paired_across_processes(&variant, &reference).ok_or("no ratio")?;
        assert!(r.ci95_low < 0.99 && r.ci95_high > 1.01, "{r:?}");
        // Processes that agree: the sign test alone.
        let same: Vec<Vec<f64>> = (0..3)
            .map(|_| (0..30).map(|r| 1.0 + (r % 3) as f64 * 1e-5).collect())
            .collect();
        let r = paired_across_processes(&same, &reference).ok_or("no ratio")?;
        assert!(r.ci95_high - r.ci95_low < 1e-4, "{r:?}");
        Ok(())
    }
}
