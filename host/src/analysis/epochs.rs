//! The correction step of the method, once: every sample less the fixed
//! cost of a call (measured by the sequence on the workload itself:
//! 2·T(m) − T(2m)), less the calibrated cost of each pause/resume pair,
//! pooled into epochs of at least [`EPOCH_NS`] and divided by the count.
//! Pure arithmetic: no I/O, no clocks.

use crate::analysis::stats;
use crate::results::Measurement;

/// Least time one epoch spans, in ns: consecutive samples of a block are
/// pooled into epochs of at least this much, and each epoch gives one per-op
/// time. Samples of 0.5 ms or more (the default target is 1 ms) are epochs of
/// their own.
///
/// Why (after nanobench's epochs): the speed of a core moves over short
/// spans (frequency, the sibling thread, the host of a virtual machine). A
/// sample of a few hundred ns falls in one such state, and the median of
/// short samples is the fast state, while a long sample averages the states.
/// Pooling short samples into epochs of a fixed length makes the per-op time
/// of a small count the same quantity as that of a large one.
pub const EPOCH_NS: f64 = 500_000.0;

/// Per-op times of `m`, epoch by epoch (see [`corrected`]).
pub fn corrected_per_op(m: &Measurement) -> Vec<Vec<f64>> {
    corrected(
        &m.blocks,
        &m.pauses,
        &m.doubles,
        m.fixed_cost_ns,
        m.pause_pair_ns,
        m.count,
    )
}

/// Per-op times of `blocks` (time of one call each) taken at `count`, less
/// `pair` per pause and the fixed cost of a call, one per epoch:
/// consecutive samples of a block spanning at least [`EPOCH_NS`], the
/// samples left at the end of a block going to its last epoch (a block
/// shorter than an epoch is one epoch).
///
/// The fixed cost is `fixed_cost` for every sample of a block without
/// `doubles` (calls at twice the count among its samples); with them, each
/// epoch measures its own: twice the mean of its samples less the mean of
/// its doubles, 2·T(n) − T(2n) (at least 0), so that its per-op time is
/// (T(2n) − T(n)) / n with both calls taken in the same state of the core.
///
/// Where epochs pool several samples (a block's median sample is shorter
/// than half an epoch), an epoch's mean leaves out the samples (and
/// doubles) beyond the block's far Tukey fence (q3 + 3 IQR): calls that an
/// interrupt or the scheduler cut into, which the median drops when every
/// sample is an epoch of its own. They still count towards the epoch's
/// span.
pub fn corrected(
    blocks: &[Vec<f64>],
    pauses: &[Vec<u64>],
    doubles: &[Vec<(usize, f64)>],
    fixed_cost: f64,
    pair: f64,
    count: u64,
) -> Vec<Vec<f64>> {
    let count = count as f64;
    epochs(blocks, pauses, doubles, fixed_cost, pair)
        .into_iter()
        .map(|block| {
            block
                .into_iter()
                .map(|e| (e.call_ns - e.fixed_ns) / count)
                .collect()
        })
        .collect()
}

/// The fixed cost of a call in each epoch of blocks that carry `doubles`
/// (see [`corrected`]), in order.
pub fn fixed_costs_of_epochs(
    blocks: &[Vec<f64>],
    pauses: &[Vec<u64>],
    doubles: &[Vec<(usize, f64)>],
    pair: f64,
) -> Vec<f64> {
    epochs(blocks, pauses, doubles, f64::NAN, pair)
        .into_iter()
        .flatten()
        .map(|e| e.fixed_ns)
        .collect()
}

/// One epoch of a block: the mean time of its calls (less pauses and
/// fenced), and the fixed cost of a call in it.
struct Epoch {
    call_ns: f64,
    fixed_ns: f64,
}

/// The epochs of every block (see [`corrected`]).
fn epochs(
    blocks: &[Vec<f64>],
    pauses: &[Vec<u64>],
    doubles: &[Vec<(usize, f64)>],
    fixed_cost: f64,
    pair: f64,
) -> Vec<Vec<Epoch>> {
    blocks
        .iter()
        .enumerate()
        .map(|(b, block)| {
            let mut sorted = block.clone();
            sorted.sort_unstable_by(f64::total_cmp);
            let pooled = stats::quantile_sorted(&sorted, 0.5) < EPOCH_NS / 2.0;
            let far_fence = |sorted: &[f64]| match pooled {
                true => stats::tukey_fences(sorted)[3],
                false => f64::INFINITY,
            };
            let fence = far_fence(&sorted);
            let doubles: &[(usize, f64)] = doubles.get(b).map_or(&[], Vec::as_slice);
            let mut sorted_doubles: Vec<f64> = doubles.iter().map(|d| d.1).collect();
            sorted_doubles.sort_unstable_by(f64::total_cmp);
            let double_fence = far_fence(&sorted_doubles);
            let kept = |ns: f64, fence: f64| ns <= fence || fence.is_nan();
            // The mean of the doubles that came before samples `from..to`
            // (of every double of the block when none did); NaN without any.
            let doubles_mean = |from: usize, to: usize| {
                let mean_of = |within: bool| {
                    let (sum, n) = doubles
                        .iter()
                        .filter(|d| !within || (from..to).contains(&d.0))
                        .filter(|d| kept(d.1, double_fence))
                        .fold((0.0, 0.0), |(sum, n), d| (sum + d.1, n + 1.0));
                    sum / n
                };
                let own = mean_of(true);
                if own.is_nan() { mean_of(false) } else { own }
            };
            // (first sample, net time, calls kept) of each epoch.
            let mut spans: Vec<(usize, f64, f64)> = Vec::new();
            let (mut first, mut spent, mut net, mut calls) = (0, 0.0, 0.0, 0.0);
            for (i, &ns) in block.iter().enumerate() {
                spent += ns;
                if kept(ns, fence) {
                    let p = pauses.get(b).and_then(|p| p.get(i)).copied().unwrap_or(0) as f64;
                    net += ns - p * pair;
                    calls += 1.0;
                }
                if spent >= EPOCH_NS && calls > 0.0 {
                    spans.push((first, net, calls));
                    (first, spent, net, calls) = (i + 1, 0.0, 0.0, 0.0);
                }
            }
            if calls > 0.0 {
                match spans.last_mut() {
                    Some(last) => *last = (last.0, last.1 + net, last.2 + calls),
                    None => spans.push((first, net, calls)),
                }
            }
            let ends: Vec<usize> = spans
                .iter()
                .skip(1)
                .map(|s| s.0)
                .chain([block.len()])
                .collect();
            spans
                .into_iter()
                .zip(ends)
                .map(|((from, net, calls), to)| {
                    let call_ns = net / calls;
                    // Never below nothing: a workload whose time grows
                    // faster than its count (outside the contract), or
                    // the noise of an epoch of a few calls, as the pairs'.
                    let fixed_ns = match doubles.is_empty() {
                        true => fixed_cost,
                        false => (2.0 * call_ns - doubles_mean(from, to)).max(0.0),
                    };
                    Epoch { call_ns, fixed_ns }
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn correction_subtracts_the_fixed_cost_and_pauses_per_call() {
        let blocks = vec![vec![1030.0, 1130.0]];
        let pauses = vec![vec![0, 2]];
        // Both samples together are shorter than an epoch: one epoch.
        let per_op = corrected(&blocks, &pauses, &[], 30.0, 50.0, 100);
        assert_eq!(per_op, vec![vec![10.0]]);
        // Without pause records, nothing is subtracted for pauses.
        assert_eq!(
            corrected(&blocks, &[], &[], 30.0, 50.0, 100),
            vec![vec![10.5]]
        );
    }

    #[test]
    fn long_samples_are_epochs_of_their_own() {
        let long = EPOCH_NS + 100.0;
        let blocks = vec![vec![long, long + 100.0], vec![long + 200.0]];
        let per_op = corrected(&blocks, &[], &[], 100.0, 0.0, 10);
        let expect = |ns: f64| (ns - 100.0) / 10.0;
        assert_eq!(
            per_op,
            vec![
                vec![expect(long), expect(long + 100.0)],
                vec![expect(long + 200.0)]
            ]
        );
    }

    #[test]
    fn short_samples_pool_into_epochs_and_the_rest_joins_the_last() {
        // 0.2 ms samples: an epoch closes at the third sample (0.6 ms); the
        // seventh, left over, joins the second epoch.
        let ns = EPOCH_NS * 0.4;
        let block: Vec<f64> = (0..7).map(|i| ns + i as f64).collect();
        let per_op = corrected(std::slice::from_ref(&block), &[], &[], 0.0, 0.0, 1);
        let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
        assert_eq!(per_op, vec![vec![mean(&block[..3]), mean(&block[3..])]]);
    }

    #[test]
    fn a_short_call_is_corrected_with_the_fixed_cost_of_its_own_epoch() {
        // 300 ns calls at 1000 (0.25 ns per op), in two epochs of one block:
        // in the first the call costs 50 ns besides its work, in the second
        // (a slower spell of the call path) 70 ns. Each epoch takes the
        // fixed cost of its own samples and doubles.
        let n = 1_000;
        let work = 250.0;
        let first = 1_667;
        let block: Vec<f64> = (0..3_400)
            .map(|i| work + if i < first { 50.0 } else { 70.0 })
            .collect();
        let doubles: Vec<(usize, f64)> = (0..3_400)
            .step_by(3)
            .map(|i| (i, 2.0 * work + if i < first { 50.0 } else { 70.0 }))
            .collect();
        let blocks = std::slice::from_ref(&block);
        let per_op = corrected(blocks, &[], std::slice::from_ref(&doubles), 60.0, 0.0, n);
        assert_eq!(per_op.len(), 1);
        assert_eq!(per_op[0].len(), 2, "two epochs: {per_op:?}");
        for epoch in &per_op[0] {
            assert!((epoch - 0.25).abs() < 1e-9, "{per_op:?}");
        }
        assert_eq!(
            fixed_costs_of_epochs(blocks, &[], std::slice::from_ref(&doubles), 0.0),
            vec![50.0, 70.0]
        );
        // A double more than twice the sample (one call each, or a workload
        // whose time grows faster than its count): no fixed cost below 0.
        let single = [vec![1_000.0]];
        assert_eq!(
            fixed_costs_of_epochs(&single, &[], &[vec![(0, 2_300.0)]], 0.0),
            vec![0.0]
        );
        // One fixed cost for the whole block (the pairs before it) reads
        // each spell off by its difference.
        let once = corrected(blocks, &[], &[], 60.0, 0.0, n);
        assert!((once[0][0] - 0.24).abs() < 1e-9 && (once[0][1] - 0.26).abs() < 1e-9);
    }

    #[test]
    fn an_interrupted_call_counts_for_the_span_not_the_mean() {
        // 1 µs calls, one of them 50 µs (beyond the far fence): it is left
        // out of its epoch's mean, and still closes the epoch sooner.
        let mut block = vec![1_000.0; 1_000];
        block[10] = 50_000.0;
        let per_op = corrected(&[block], &[], &[], 0.0, 0.0, 1);
        assert_eq!(per_op, vec![vec![1_000.0, 1_000.0]]);
    }
}
