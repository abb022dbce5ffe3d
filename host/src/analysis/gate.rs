//! The regression gate of `host history`: per series, whether its newest
//! level (the runs since its newest change point) is slower than the level
//! before it, by more than a threshold; a speed-up is told, never failed.
//! With a side-by-side confirmation of the series' newest module change
//! ([`Confirmation`], measured by the command), the comparison's verdict
//! decides instead of the change point.
//!
//! A timed change fails when the low end of its ratio's 95% interval is
//! above 1 + threshold (certainly slower by more than it); a count's change
//! is exact, and fails when the ratio itself is above it.
//!
//! The gate's own error rates on a machine ([`error_rates`]) come from a
//! series of runs measured there without any change (A/A): how often the
//! gate fails on reorderings of them (its false alarms) and how small a
//! slow-down injected in their second half it catches nine times in ten.

use serde::{Deserialize, Serialize};

use crate::analysis::changes::{Change, exact_changes, time_changes};
use crate::analysis::trend::Series;
use crate::analysis::verdict::is_regression;
use crate::results::modules::ModuleRef;
use crate::results::store::MachineId;
use crate::results::{Ratio, Verdict};
use crate::util::foreign::Foreign;

/// A series' newest level against the one before, as the gate reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Judgement {
    /// Too few runs to tell a change.
    TooShort,
    /// No change point in the runs shown.
    NoChange,
    /// Slower since its newest change, by more than the threshold: fails.
    Slower,
    /// Slower since its newest change, but not certainly by more than the
    /// threshold.
    WithinThreshold,
    /// Faster since its newest change: told, not failed.
    Faster,
    /// The side-by-side comparison found no slow-down where the history
    /// found one: the alarm is withdrawn.
    Withdrawn,
    /// The control changed the same way at the same run, by as much: the
    /// machine moved, not the benchmark; told, not failed.
    MachineMoved,
}

/// What the gate found in one series.
#[derive(Debug, Clone, Serialize)]
pub struct SeriesGate {
    pub judgement: Judgement,
    /// The newest change point's index among the series' changes.
    #[serde(skip)]
    pub change: Option<usize>,
    /// Whether this series fails the gate.
    pub fails: bool,
    /// The side-by-side comparison of the module change, with `--confirm`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confirmation: Option<Confirmation>,
    /// The control's change at the same run, when it had one the same way.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine: Option<MachineMove>,
}

/// The control's change at the run where a series changed, and the
/// series' change measured against it.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct MachineMove {
    /// The control's ratio (level after over level before).
    pub control: Ratio,
    /// The series' ratio over the control's, with a conservative interval
    /// (each end against the other's opposite end).
    pub relative: Ratio,
}

/// A series' newest module measured against the module before its change,
/// side by side in one comparison on this machine.
#[derive(Debug, Clone, Serialize)]
pub struct Confirmation {
    /// The module before the change, and the newest.
    pub before: ModuleRef,
    pub after: ModuleRef,
    /// The run (numbered from 1 in the series) where the newest module
    /// first appears.
    pub starts_at_run: usize,
    /// Where the modules came from: always `store`, the store's own copies.
    pub source: &'static str,
    /// The comparison's verdict and ratio (after over before), absent when
    /// it could not be made (`error` says why).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<Ratio>,
    /// What the ratio is of: `time`, `instructions`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// Seconds the comparison took.
    pub seconds: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What fails a series: the exit status of `host history` follows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// Nothing fails (no gate asked for): the judgements are told.
    None,
    /// A slow-down beyond the threshold (`--fail-on-regression`).
    Regression,
    /// Any change point, either way (`--fail-on-change`).
    AnyChange,
}

/// The gate over every series shown.
#[derive(Debug, Clone, Serialize)]
pub struct Gate {
    pub rule: Rule,
    /// The threshold, in percent.
    pub threshold_pct: f64,
    /// Whether only confirmed slow-downs fail (`--confirm`).
    pub confirmed: bool,
    /// One per series, in the series' order.
    pub series: Vec<SeriesGate>,
    /// The gate's latest error rates on this store's machine, when
    /// `host selftest --only gate` measured them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub figures: Option<GateCheck>,
}

impl Gate {
    /// Judge every series of `all` against `threshold_pct`; with
    /// `confirmations` (one per series, `None` where its module did not
    /// change), a series fails only on a confirmed slow-down.
    pub fn judge(
        all: &[Series],
        rule: Rule,
        threshold_pct: f64,
        confirmations: Option<Vec<Option<Confirmation>>>,
    ) -> Self {
        let confirmed = confirmations.is_some();
        let mut confirmations = confirmations.unwrap_or_default().into_iter();
        let series = all
            .iter()
            .map(|s| {
                let gate = judge_series(s, threshold_pct);
                let confirmation = confirmations.next().flatten();
                let mut gate = match (confirmed, s.measure.deterministic()) {
                    (true, false) => confirm(gate, confirmation, threshold_pct),
                    (false, false) => against_control(gate, s, all, threshold_pct),
                    (_, true) => gate,
                };
                gate.fails = match rule {
                    Rule::None => false,
                    _ if s.is_control() => false,
                    Rule::Regression => gate.fails,
                    Rule::AnyChange => !s.changes.is_empty(),
                };
                gate
            })
            .collect();
        Gate {
            rule,
            threshold_pct,
            confirmed,
            series,
            figures: None,
        }
    }

    /// Whether any series fails.
    pub fn fails(&self) -> bool {
        self.series.iter().any(|s| s.fails)
    }
}

/// The gate's reading of one series, from its change points alone.
pub fn judge_series(series: &Series, threshold_pct: f64) -> SeriesGate {
    let newest = series.changes.len().checked_sub(1);
    let judgement = match newest.map(|i| &series.changes[i]) {
        None if series.too_short() => Judgement::TooShort,
        None => Judgement::NoChange,
        Some(change) => judge_change(change, threshold_pct),
    };
    SeriesGate {
        judgement,
        change: newest,
        fails: judgement == Judgement::Slower,
        confirmation: None,
        machine: None,
    }
}

/// The timed series `gate` read against the control's series of the same
/// machine, command and engine (any engine's when none is the same): when
/// the control changed the same way at the same run (within one run), the
/// series' change is measured against the control's, and a change no
/// longer a slow-down beyond the threshold once the machine's own move is
/// taken out is the machine moving.
fn against_control(
    mut gate: SeriesGate,
    series: &Series,
    all: &[Series],
    threshold_pct: f64,
) -> SeriesGate {
    let Some(change) = gate.change.and_then(|i| series.changes.get(i)) else {
        return gate;
    };
    if series.is_control() {
        return gate;
    }
    let Some(control) = control_change(series, change, all) else {
        return gate;
    };
    let relative = Ratio {
        value: change.ratio / control.value,
        low: change.ratio_low / control.high,
        high: change.ratio_high / control.low,
    };
    if !is_regression(&relative, threshold_pct) {
        gate.judgement = Judgement::MachineMoved;
        gate.fails = false;
    }
    gate.machine = Some(MachineMove { control, relative });
    gate
}

/// The change of the control of `series` (see [`against_control`]) at
/// `change`'s run, within one run, and the same way.
fn control_change(series: &Series, change: &Change, all: &[Series]) -> Option<Ratio> {
    let near: Vec<&str> = series.points
        [change.at.saturating_sub(1)..(change.at + 2).min(series.points.len())]
        .iter()
        .map(|p| p.run.as_str())
        .collect();
    let controls = all.iter().filter(|c| {
        c.is_control()
            && c.measure == series.measure
            && c.machine == series.machine
            && c.command == series.command
    });
    let same_engine = controls
        .clone()
        .filter(|c| c.engine_config == series.engine_config);
    same_engine.chain(controls).find_map(|c| {
        c.changes
            .iter()
            .rev()
            .find(|k| {
                (k.ratio > 1.0) == (change.ratio > 1.0)
                    && c.points
                        .get(k.at)
                        .is_some_and(|p| near.contains(&p.run.as_str()))
            })
            .map(Change::interval)
    })
}

/// One change against the threshold.
fn judge_change(change: &Change, threshold_pct: f64) -> Judgement {
    let ratio = change.interval();
    if change.ratio < 1.0 {
        Judgement::Faster
    } else if is_regression(&ratio, threshold_pct) {
        Judgement::Slower
    } else {
        Judgement::WithinThreshold
    }
}

/// The timed series `gate` decided by its side-by-side comparison: a
/// confirmed slow-down beyond the threshold fails; any other verdict, or
/// no module change to compare, withdraws a slow-down. (An exact count's
/// change is its own confirmation: it is judged as it stands.)
fn confirm(
    mut gate: SeriesGate,
    confirmation: Option<Confirmation>,
    threshold_pct: f64,
) -> SeriesGate {
    let Some(confirmation) = confirmation else {
        gate.fails = false;
        if gate.judgement == Judgement::Slower {
            gate.judgement = Judgement::Withdrawn;
        }
        return gate;
    };
    let slower = confirmation.verdict == Some(Verdict::Slower)
        && confirmation
            .ratio
            .is_some_and(|r| is_regression(&r, threshold_pct));
    gate.judgement = match (slower, confirmation.verdict) {
        (true, _) => Judgement::Slower,
        (false, Some(Verdict::Faster)) => Judgement::Faster,
        (false, _) if gate.judgement == Judgement::Slower => Judgement::Withdrawn,
        (false, _) => gate.judgement,
    };
    gate.fails = slower;
    gate.confirmation = Some(confirmation);
    gate
}

/// Whether the gate fails a series of `values` (oldest first), exact when
/// `deterministic`, at `threshold_pct`.
pub fn fails(values: &[f64], deterministic: bool, threshold_pct: f64) -> bool {
    let changes = match deterministic {
        true => exact_changes(values),
        false => time_changes(values),
    };
    changes
        .last()
        .is_some_and(|c| judge_change(c, threshold_pct) == Judgement::Slower)
}

/// Reorderings of an A/A series drawn for each rate.
pub const ORDERINGS: usize = 200;
/// The slow-downs injected, in percent.
pub const STEPS_PCT: [f64; 11] = [0.01, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0];

/// The gate's figures of one series.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SeriesRates {
    pub series: Foreign,
    pub measure: String,
    /// The relative sd of its runs (log scale); 0 for counts.
    pub noise: f64,
    #[serde(flatten)]
    pub rates: ErrorRates,
}

/// A known step, and whether the gate caught it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KnownStep {
    pub measure: String,
    pub caught: bool,
    /// The newest change's ratio, when one was found.
    pub ratio: Option<f64>,
}

/// The gate's error rates on a machine (`host selftest --only gate`), as
/// kept in the store for `host history` to quote.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GateCheck {
    pub threshold_pct: f64,
    /// When they were measured.
    #[serde(default)]
    pub unix_ms: u64,
    /// Where.
    #[serde(default)]
    pub machine: Option<MachineId>,
    pub series: Vec<SeriesRates>,
    pub known_step: Vec<KnownStep>,
}

/// The gate's error rates on one A/A series.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorRates {
    /// Runs in the series.
    pub runs: usize,
    /// Whether the gate fails the series as measured, in its order.
    pub fails_as_measured: bool,
    /// Of [`ORDERINGS`] random orderings of its runs, how many the gate
    /// fails: its false-alarm rate where runs are exchangeable.
    pub false_alarms: usize,
    pub orderings: usize,
    /// The smallest of [`STEPS_PCT`] that, injected into the second half of
    /// the reordered runs, fails the gate at least nine times in ten; none
    /// when no step of the list does.
    pub step_9_in_10_pct: Option<f64>,
}

/// The gate's error rates at `threshold_pct` on `values`, runs measured
/// without a change (exact when `deterministic`); reorderings drawn from
/// `seed`.
pub fn error_rates(
    values: &[f64],
    deterministic: bool,
    threshold_pct: f64,
    seed: u64,
) -> ErrorRates {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut shuffled = values.to_vec();
    let mut draw = |step: f64| -> usize {
        (0..ORDERINGS)
            .filter(|_| {
                rng.shuffle(&mut shuffled);
                let half = shuffled.len() / 2;
                let stepped: Vec<f64> = shuffled
                    .iter()
                    .enumerate()
                    .map(|(i, v)| if i >= half { v * (1.0 + step) } else { *v })
                    .collect();
                fails(&stepped, deterministic, threshold_pct)
            })
            .count()
    };
    let false_alarms = draw(0.0);
    let step_9_in_10_pct = STEPS_PCT
        .into_iter()
        .find(|pct| draw(pct / 100.0) * 10 >= ORDERINGS * 9);
    ErrorRates {
        runs: values.len(),
        fails_as_measured: fails(values, deterministic, threshold_pct),
        false_alarms,
        orderings: ORDERINGS,
        step_9_in_10_pct,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::trend::series;
    use crate::guest::control::CONTROL_NAME;
    use crate::results::store::{KeptRun, fixture};

    fn runs(levels: &[f64]) -> Vec<KeptRun> {
        levels
            .iter()
            .enumerate()
            .map(|(i, &level)| {
                let mut run = fixture(&format!("{i:013}-1-0"), "w.wasm", level);
                run.unix_ms = i as u64;
                run.rows[0].fuel_per_op = Some(level);
                run
            })
            .collect()
    }

    fn judged(levels: &[f64], pct: f64) -> Vec<(Judgement, bool)> {
        let all = series(&runs(levels), &[]);
        Gate::judge(&all, Rule::Regression, pct, None)
            .series
            .iter()
            .map(|s| (s.judgement, s.fails))
            .collect()
    }

    /// A speed-up is told and passes; a slow-down fails, in time and in
    /// counts; a slow-down under the threshold passes.
    #[test]
    fn only_slow_downs_fail() {
        let up: Vec<f64> = [200.0; 6].into_iter().chain([100.0; 6]).collect();
        assert_eq!(
            judged(&up, 0.0),
            vec![(Judgement::Faster, false), (Judgement::Faster, false)]
        );
        let down: Vec<f64> = [100.0; 6].into_iter().chain([200.0; 6]).collect();
        assert_eq!(
            judged(&down, 0.0),
            vec![(Judgement::Slower, true), (Judgement::Slower, true)]
        );
        assert_eq!(
            judged(&down, 150.0),
            vec![
                (Judgement::WithinThreshold, false),
                (Judgement::WithinThreshold, false)
            ]
        );
    }

    /// A slow-down undone later passes: the gate reads the newest level.
    #[test]
    fn a_slow_down_undone_passes() {
        let levels: Vec<f64> = [100.0; 4]
            .into_iter()
            .chain([200.0; 4])
            .chain([100.0; 4])
            .collect();
        let gate = judged(&levels, 0.0);
        assert!(
            gate.iter()
                .all(|&(j, fails)| j == Judgement::Faster && !fails),
            "{gate:?}"
        );
        // --fail-on-change fails on it all the same.
        let all = series(&runs(&levels), &[]);
        assert!(Gate::judge(&all, Rule::AnyChange, 0.0, None).fails());
        assert!(!Gate::judge(&all, Rule::None, 0.0, None).fails());
    }

    /// Three runs: too few for a timed change, enough for an exact one.
    #[test]
    fn three_runs_judge_counts_but_not_times() {
        assert_eq!(
            judged(&[100.0, 200.0, 200.0], 0.0),
            vec![(Judgement::TooShort, false), (Judgement::Slower, true)]
        );
    }

    /// Exact counts: no false alarm, the smallest step caught; a noisy
    /// time: some false alarms at most, a step of a few noise widths.
    #[test]
    fn error_rates_of_counts_and_times() {
        let counts = error_rates(&[1000.0; 20], true, 0.0, 1);
        assert_eq!(
            (counts.false_alarms, counts.step_9_in_10_pct),
            (0, Some(0.01))
        );
        let mut rng = fastrand::Rng::with_seed(7);
        let times: Vec<f64> = (0..20)
            .map(|_| 100.0 * (0.01 * crate::analysis::stats::normal(&mut rng)).exp())
            .collect();
        let rates = error_rates(&times, false, 0.0, 1);
        assert!(rates.false_alarms <= 20, "{rates:?}");
        let step = rates.step_9_in_10_pct.unwrap_or(f64::INFINITY);
        assert!((1.0..=5.0).contains(&step), "{rates:?}");
    }

    /// Under confirmation, a timed slow-down whose module did not change is
    /// withdrawn.
    #[test]
    fn an_unconfirmed_slow_down_is_withdrawn() {
        let down: Vec<f64> = [100.0; 6].into_iter().chain([200.0; 6]).collect();
        let all = series(&runs(&down), &[]);
        let gate = Gate::judge(&all, Rule::Regression, 0.0, Some(vec![None, None]));
        assert_eq!(gate.series[0].judgement, Judgement::Withdrawn);
        assert!(!gate.series[0].fails);
        // The exact count stands as it is.
        assert!(gate.series[1].fails);
    }

    /// Runs of a benchmark `w` and the control, timed only, with a little
    /// noise: each the level given, run by run.
    fn with_control(bench: &[f64], control: &[f64]) -> Vec<Series> {
        let runs: Vec<KeptRun> = bench
            .iter()
            .zip(control)
            .enumerate()
            .map(|(i, (&b, &c))| {
                let wobble = 1.0 + 0.002 * (i % 3) as f64;
                let mut run = fixture(&format!("{i:013}-1-0"), "w", b * wobble);
                run.unix_ms = i as u64;
                let mut row = fixture("", CONTROL_NAME, c * wobble).rows.remove(0);
                row.engine = 0;
                run.rows.push(row);
                run
            })
            .collect();
        series(&runs, &[])
    }

    fn steps(before: f64, after: f64) -> Vec<f64> {
        [before; 6].into_iter().chain([after; 6]).collect()
    }

    /// A slow-down the control shares at the same run is the machine
    /// moving: told, not failed; one the control does not share, or well
    /// beyond the control's, fails; the control itself never fails.
    #[test]
    fn a_change_shared_with_the_control_is_the_machine() {
        let judge = |bench: &[f64], control: &[f64]| {
            let all = with_control(bench, control);
            assert!(all[1].is_control());
            let gate = Gate::judge(&all, Rule::Regression, 2.0, None);
            (gate.series[0].clone(), gate.series[1].fails)
        };
        let (moved, control_fails) = judge(&steps(100.0, 130.0), &steps(50.0, 65.0));
        assert_eq!(moved.judgement, Judgement::MachineMoved);
        assert!(!moved.fails && !control_fails);
        let machine = moved.machine.expect("the control's move");
        assert!((machine.control.value - 1.3).abs() < 0.01, "{machine:?}");
        let (alone, _) = judge(&steps(100.0, 130.0), &[50.0; 12]);
        assert_eq!(alone.judgement, Judgement::Slower);
        assert!(alone.fails && alone.machine.is_none());
        let (beyond, _) = judge(&steps(100.0, 200.0), &steps(50.0, 65.0));
        assert_eq!(beyond.judgement, Judgement::Slower);
        assert!(beyond.fails && beyond.machine.is_some());
        let (opposite, _) = judge(&steps(100.0, 130.0), &steps(65.0, 50.0));
        assert_eq!(opposite.judgement, Judgement::Slower);
    }
}
