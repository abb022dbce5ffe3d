//! A row against the same row of a saved baseline: the ratio of medians with
//! its interval ([`crate::analysis::verdict::unpaired_ratio`]), or the exact
//! ratio of instruction counts when comparisons judge by them, read against
//! the noise band. Pure arithmetic: the baseline was read by
//! [`crate::results::baseline`].

use crate::analysis::summary::RESAMPLES_FINAL;
use crate::analysis::verdict;
use crate::options::Settings;
use crate::results::Ratio;
use crate::results::baseline::Saved;
use crate::results::{BaselineComparison, Figures};

/// The verdict against the saved result of row `name`, if there is one.
pub fn compare_with_saved(
    settings: &Settings,
    saved: &Saved,
    name: &str,
    figures: &Figures,
    seed: u64,
) -> Option<BaselineComparison> {
    let then = saved.result(name)?;
    let (ratio, metric) = match (figures.exact(settings.metric), then.exact(settings.metric)) {
        (Some(now), Some(before)) if before > 0.0 => {
            (Ratio::exact(now / before), settings.metric.name())
        }
        _ => (
            verdict::unpaired_ratio(
                &figures.epochs_ns_per_op,
                &then.epochs_ns_per_op,
                settings.drift_pct / 100.0,
                RESAMPLES_FINAL,
                seed,
            )?,
            "time",
        ),
    };
    let baseline_name = settings.baselines.compare.clone().unwrap_or_default();
    let verdict = verdict::verdict(&ratio, settings.noise);
    let regression = settings
        .baselines
        .fail_on_regression_pct
        .is_some_and(|pct| verdict::is_regression(&ratio, pct));
    Some(BaselineComparison {
        text: verdict::describe(
            name,
            &format!("baseline {baseline_name}"),
            &ratio,
            verdict,
            settings.noise,
        ),
        name: baseline_name,
        metric: metric.to_string(),
        ratio: ratio.ratio,
        ci95_low: ratio.ci95_low,
        ci95_high: ratio.ci95_high,
        verdict,
        regression,
    })
}
