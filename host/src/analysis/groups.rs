//! Whether a row's worker processes fall into separate groups: some
//! programs (and some runtimes' dispatch loops) run at one of a few speeds
//! depending on where their code and data land in a process, so that the
//! medians of their processes cluster apart (bz2 here: 6.1–6.4 ms and
//! 8.0–9.4 ms) rather than scatter around one value. Such a row's median
//! depends on how many processes landed in each group, and the interval is
//! as wide as the groups are apart: the row says so.
//!
//! The rule, on the log medians sorted: split at the widest gap between
//! neighbours when it leaves at least [`MIN_GROUP`] processes on each side,
//! is at least [`MIN_GAP`] (relative) and at least [`GAP_OVER_SD`] times
//! the standard deviation pooled within the two sides; then the same
//! within each side. On normal process medians the first split is false
//! 2.6% of the time with 8 processes and 0.3% with 12 (simulated), and
//! never with 20; fewer than [`MIN_PROCESSES`] processes are not split.
//! Pure arithmetic.

use crate::results::ProcessGroup;

/// The fewest processes a group holds.
pub const MIN_GROUP: usize = 2;
/// The fewest processes split at all.
pub const MIN_PROCESSES: usize = 6;
/// The narrowest gap between groups, relative (3%).
pub const MIN_GAP: f64 = 0.03;
/// How many pooled standard deviations the gap must span.
pub const GAP_OVER_SD: f64 = 4.0;
/// The most groups told apart.
pub const MAX_GROUPS: usize = 4;

/// The groups `medians` fall into, fastest first: one group when they do
/// not separate, none when there are no positive medians.
pub fn groups(medians: &[f64]) -> Vec<ProcessGroup> {
    let mut sorted: Vec<f64> = medians
        .iter()
        .copied()
        .filter(|m| m.is_finite() && *m > 0.0)
        .collect();
    sorted.sort_by(f64::total_cmp);
    let logs: Vec<f64> = sorted.iter().map(|m| m.ln()).collect();
    if logs.is_empty() {
        return Vec::new();
    }
    // Each part as the range of indices it holds.
    let whole = 0..logs.len();
    let mut parts = vec![whole];
    let split_any = logs.len() >= MIN_PROCESSES;
    while split_any && parts.len() < MAX_GROUPS {
        let Some((at, cut)) = parts
            .iter()
            .enumerate()
            .find_map(|(at, part)| split(&logs[part.clone()]).map(|cut| (at, part.start + cut)))
        else {
            break;
        };
        let part = parts[at].clone();
        parts.splice(at..=at, [part.start..cut, cut..part.end]);
    }
    parts
        .into_iter()
        .map(|part| ProcessGroup {
            low_ns: sorted[part.start],
            high_ns: sorted[part.end - 1],
            processes: part.len(),
        })
        .collect()
}

/// Where sorted `logs` split into two groups, if they do: the index of the
/// first of the second.
fn split(logs: &[f64]) -> Option<usize> {
    if logs.len() < 2 * MIN_GROUP {
        return None;
    }
    let cut = (MIN_GROUP..=logs.len() - MIN_GROUP)
        .max_by(|&a, &b| (logs[a] - logs[a - 1]).total_cmp(&(logs[b] - logs[b - 1])))?;
    let gap = logs[cut] - logs[cut - 1];
    let (left, right) = logs.split_at(cut);
    let squares = |part: &[f64]| {
        let mean = part.iter().sum::<f64>() / part.len() as f64;
        part.iter().map(|l| (l - mean).powi(2)).sum::<f64>()
    };
    let pooled_sd = ((squares(left) + squares(right)) / (logs.len() - 2) as f64).sqrt();
    (gap >= MIN_GAP.ln_1p() && gap >= GAP_OVER_SD * pooled_sd).then_some(cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(medians: &[f64]) -> Vec<(f64, f64, usize)> {
        groups(medians)
            .iter()
            .map(|g| (g.low_ns, g.high_ns, g.processes))
            .collect()
    }

    fn close(found: &[(f64, f64, usize)], expected: &[(f64, f64, usize)]) -> bool {
        found.len() == expected.len()
            && found
                .iter()
                .zip(expected)
                .all(|(a, b)| (a.0 - b.0).abs() < 1e-9 && (a.1 - b.1).abs() < 1e-9 && a.2 == b.2)
    }

    /// bz2's processes on this machine, and wasmi's chain100: two groups
    /// each.
    #[test]
    fn processes_in_two_modes_are_two_groups() {
        let bz2 = [6.09e6, 8.68e6, 6.12e6, 6.2e6, 8.02e6, 6.31e6, 6.38e6, 6.4e6];
        let found = spans(&bz2);
        assert!(
            close(&found, &[(6.09e6, 6.4e6, 6), (8.02e6, 8.68e6, 2)]),
            "{found:?}"
        );
        let chain = [143.0, 147.0, 162.0, 169.0, 231.0, 240.0, 250.0, 260.0];
        let found = spans(&chain);
        assert!(
            close(&found, &[(143.0, 169.0, 4), (231.0, 260.0, 4)]),
            "{found:?}"
        );
    }

    /// One process far off is no group; few processes are not split; a
    /// gap under 3% is no gap; nothing positive, no group.
    #[test]
    fn scatter_outliers_and_few_processes_stay_one_group() {
        let one = |m: &[f64]| groups(m).len() == 1;
        assert!(one(&[100.0, 100.5, 99.8, 100.2, 100.1, 130.0]));
        assert!(one(&[100.0, 100.1, 150.0, 150.1, 150.2]));
        assert!(one(&[100.0, 100.01, 100.02, 102.0, 102.01, 102.02]));
        assert!(groups(&[f64::NAN, -1.0, 0.0]).is_empty());
        assert_eq!(spans(&[5.0]), vec![(5.0, 5.0, 1)]);
    }

    /// Process medians scattered normally (sd 5%) are one group in at
    /// least 95% of 2000 draws of 8 processes and 99% of 12.
    #[test]
    fn normal_scatter_is_rarely_split() {
        let mut rng = fastrand::Rng::with_seed(11);
        let mut normal = || crate::analysis::stats::normal(&mut rng);
        for (processes, most) in [(8, 100), (12, 20)] {
            let split = (0..2000)
                .filter(|_| {
                    let m: Vec<f64> = (0..processes)
                        .map(|_| 100.0 * (0.05 * normal()).exp())
                        .collect();
                    groups(&m).len() > 1
                })
                .count();
            assert!(split <= most, "{split} of 2000 draws of {processes} split");
        }
    }
}
