//! Verdicts of interleaved variants: each variant against the reference, by
//! the median of per-round ratios and its sign-test interval
//! ([`crate::analysis::verdict::paired_ratio`]), or exactly by instruction
//! counts. Pure arithmetic over the rounds the benchmark stage took.

use crate::analysis::stats;
use crate::analysis::summary::corrected;
use crate::analysis::verdict;
use crate::options::{Metric, NoiseBand};
use crate::results::Comparison;
use crate::results::Ratio;

/// What the verdicts need of one variant.
pub struct Rounds<'a> {
    pub name: &'a str,
    /// Per-op samples of each round (one block per round), corrected.
    pub per_op: Vec<Vec<f64>>,
    /// Instructions per op, when counted.
    pub fuel_per_op: Option<f64>,
}

impl Rounds<'_> {
    /// The corrected per-op samples of raw blocks taken at `count`.
    pub fn corrected(
        blocks: &[Vec<f64>],
        pauses: &[Vec<u64>],
        baseline_ns_per_call: f64,
        pause_pair_ns: f64,
        count: u64,
    ) -> Vec<Vec<f64>> {
        corrected(blocks, pauses, baseline_ns_per_call, pause_pair_ns, count)
    }

    /// The median per-op time of each round.
    fn medians(&self) -> Vec<f64> {
        self.per_op
            .iter()
            .map(|block| stats::median(block))
            .collect()
    }
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
                _ => {
                    let ratios: Vec<f64> = v
                        .medians()
                        .iter()
                        .zip(&base_rounds)
                        .map(|(a, b)| a / b)
                        .collect();
                    (verdict::paired_ratio(&ratios, 0.95), "time")
                }
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
