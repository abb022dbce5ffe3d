//! A row against the same row of a saved baseline: the ratio of medians with
//! its interval ([`crate::analysis::verdict::unpaired_ratio`]), or the exact
//! ratio of instruction counts when comparisons judge by them, read against
//! the noise band. Pure arithmetic: the baseline was read, and its epochs
//! bounded, by [`crate::results::baseline`]; the verdict says when they
//! were.

use crate::analysis::stats::RESAMPLES_FINAL;
use crate::analysis::verdict;
use crate::options::{Metric, Settings};
use crate::results::Ratio;
use crate::results::baseline::Saved;
use crate::results::{BaselineComparison, Figures, Foreign};

/// The verdict against the saved result of row `name`, if there is one.
pub fn compare_with_saved(
    settings: &Settings,
    saved: &Saved,
    name: &Foreign,
    figures: &Figures,
    seed: u64,
) -> Option<BaselineComparison> {
    let then = saved.result(name)?;
    let (ratio, metric) = match (figures.exact(settings.metric), then.exact(settings.metric)) {
        (Some(now), Some(before)) if before > 0.0 => (Ratio::exact(now / before), settings.metric),
        _ => (
            verdict::unpaired_ratio(
                &figures.series.epochs_ns_per_op,
                &then.epochs_ns_per_op,
                settings.drift_pct / 100.0,
                RESAMPLES_FINAL,
                seed,
            )?,
            Metric::Time,
        ),
    };
    let baseline_name = Foreign::new(settings.baselines.compare.clone().unwrap_or_default());
    let verdict = verdict::verdict(&ratio, settings.noise);
    let regression = settings
        .baselines
        .fail_on_regression_pct
        .is_some_and(|pct| verdict::is_regression(&ratio, pct));
    let mut text = verdict::describe(
        name,
        &baseline_name.after("baseline "),
        &ratio,
        verdict,
        settings.noise,
    );
    if metric == Metric::Time
        && let Some(said) = different_epochs(figures.counts.undisturbed, then.undisturbed)
    {
        text = text.then(&said);
    }
    if metric == Metric::Time
        && let Some(read) = then.epochs_read
    {
        text = text.then(&epochs_left_out(
            then.epochs_ns_per_op.iter().map(Vec::len).sum(),
            read,
        ));
    }
    Some(BaselineComparison {
        text,
        name: baseline_name,
        metric: Foreign::new(metric.name()),
        ratio,
        verdict,
        regression,
    })
}

/// What a comparison of times says when this run's row (`now`) and the
/// baseline's (`before`) do not stand on the same epochs (`true`: on its
/// undisturbed epochs; `false`: on every epoch, which interruptions and
/// slower spells of the core move up).
fn different_epochs(now: bool, before: bool) -> Option<String> {
    let name = |undisturbed: bool| match undisturbed {
        true => "its undisturbed epochs",
        false => "every epoch",
    };
    (now != before).then(|| {
        format!(
            " (this run's time stands on {}, the baseline's on {}: the baseline predates the choice, or the calls of one side are mostly fixed cost; what the machine added is in the ratio)",
            name(now),
            name(before)
        )
    })
}

/// What a comparison of times says when the baseline's row stood on `kept`
/// of the `read` epochs saved: some were not finite, or there were more
/// than [`crate::results::baseline::MAX_EPOCHS`].
fn epochs_left_out(kept: usize, read: usize) -> String {
    format!(
        " (the baseline's row held {read} epochs: {kept} were resampled, the others were not finite or beyond the cap of {})",
        crate::results::baseline::MAX_EPOCHS
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comparison_says_how_many_saved_epochs_it_stood_on() {
        assert_eq!(
            epochs_left_out(50_001, 100_001),
            " (the baseline's row held 100001 epochs: 50001 were resampled, the others were not finite or beyond the cap of 100000)"
        );
    }

    #[test]
    fn a_comparison_says_when_the_two_rows_stand_on_different_epochs() {
        assert_eq!(different_epochs(true, true), None);
        assert_eq!(different_epochs(false, false), None);
        let said = different_epochs(true, false).expect("said");
        assert!(
            said.contains(
                "this run's time stands on its undisturbed epochs, the baseline's on every epoch"
            ),
            "{said}"
        );
        let said = different_epochs(false, true).expect("said");
        assert!(
            said.contains("stands on every epoch, the baseline's on its undisturbed epochs"),
            "{said}"
        );
    }
}
