//! Summaries: from the raw [`Measurement`]s of a row's processes, and the
//! [`Estimate`] of its time ([`crate::analysis::estimate`]), to the
//! [`Figures`] of the row: statistics of the epochs it stands on, its two
//! intervals ([`crate::analysis::interval`]: this run's, and a later run's
//! widened by the drift between runs), the groups its processes fall into
//! ([`crate::analysis::groups`]), and the [`Note`]s a reader needs (as
//! data: the output stage words them). Pure arithmetic: no I/O, no clocks.

use crate::analysis::drift::MIN_RUNS;
use crate::analysis::estimate::{Estimate, Location};
use crate::analysis::groups;
use crate::analysis::interval::{Intervals, intervals};
use crate::analysis::stats::{self, Summary};
use crate::guest::Kind;
use crate::guest::runtime::wasmtime::cache::CacheOutcome;
use crate::options::Headline;
use crate::platform::gaps;
use crate::results::notes::{Undisturbed, Widened};
use crate::results::{
    Checksum, Counts, DriftFigures, Durations, Figures, Measurement, Note, Notes, NsPerOp, Pauses,
    PhaseStats, ProcessFigures, Series, StartPhase, Time, WarmupFigures,
};

/// What came before measurement: the kind of workload, and how long
/// compiling and instantiating took, in ms.
#[derive(Debug, Clone)]
pub struct Preparation {
    pub kind: Kind,
    pub compile_ms: f64,
    pub compile_cache: CacheOutcome,
    pub instantiate_ms: f64,
}

/// The measurements of several processes as one: blocks, pauses, doubles
/// and fixed costs side by side, times and warm-up rounds added up.
pub fn pool(processes: &[Measurement]) -> Measurement {
    let paused = processes.iter().any(|m| !m.pauses.is_empty());
    let mut pooled = Measurement {
        count: processes.first().map_or(1, |m| m.count),
        warmup: crate::results::Warmup {
            elapsed_ms: 0.0,
            settled: true,
            rounds: 0,
            per_op_ns: processes.last().and_then(|m| m.warmup.per_op_ns),
            first_timed: 0,
        },
        blocks: Vec::new(),
        pauses: Vec::new(),
        doubles: Vec::new(),
        fixed_costs_ns: Vec::new(),
        fixed_cost_ns: stats::median(
            &processes
                .iter()
                .map(|m| m.fixed_cost_ns)
                .collect::<Vec<_>>(),
        ),
        pause_pair_ns: processes.first().map_or(0.0, |m| m.pause_pair_ns),
        clock_resolution_ns: processes
            .iter()
            .map(|m| m.clock_resolution_ns)
            .fold(0.0, f64::max),
        checksum: processes.last().and_then(|m| m.checksum),
        sampling_ms: 0.0,
        count_capped: processes.iter().any(|m| m.count_capped),
    };
    for m in processes {
        pooled.warmup.elapsed_ms += m.warmup.elapsed_ms;
        pooled.warmup.settled &= m.warmup.settled;
        pooled.warmup.rounds += m.warmup.rounds;
        pooled.warmup.first_timed += m.warmup.first_timed;
        pooled.sampling_ms += m.sampling_ms;
        pooled.blocks.extend(m.blocks.iter().cloned());
        match m.doubles.is_empty() {
            true => pooled.doubles.extend(m.blocks.iter().map(|_| Vec::new())),
            false => pooled.doubles.extend(m.doubles.iter().cloned()),
        }
        pooled.fixed_costs_ns.extend(&m.fixed_costs_ns);
        if paused {
            match m.pauses.is_empty() {
                true => pooled
                    .pauses
                    .extend(m.blocks.iter().map(|b| vec![0; b.len()])),
                false => pooled.pauses.extend(m.pauses.iter().cloned()),
            }
        }
    }
    pooled
}

/// The finest per-op difference a sample of `m` can show: one step of the
/// clock over the count.
pub fn finest_ns(m: &Measurement) -> f64 {
    m.clock_resolution_ns / m.count.max(1) as f64
}

/// Fewest steps of the clock a program's timed region must last for its
/// time to be more than the clock's steps: below, one step is a tenth of
/// it or more, and a ratio of two such times moves by a tenth with a step.
pub const PROGRAM_CLOCK_STEPS: f64 = 10.0;

/// Whether a program's median timed region `median_ns` lasts fewer than
/// [`PROGRAM_CLOCK_STEPS`] steps of the clock its processes found (none
/// is known of a measurement whose worker did not calibrate: 0).
pub fn at_clock_resolution(median_ns: f64, m: &Measurement) -> bool {
    m.clock_resolution_ns > 0.0 && median_ns < PROGRAM_CLOCK_STEPS * m.clock_resolution_ns
}

/// Summary of one program phase over the iterations, in ns.
pub fn phase_stats(values: &[f64]) -> PhaseStats {
    PhaseStats {
        median: stats::median(values),
        mean: values.iter().sum::<f64>() / values.len().max(1) as f64,
        min: values.iter().copied().fold(f64::INFINITY, f64::min),
        max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        samples: values.len(),
    }
}

/// One phase of a workload's start from each process's values (a block
/// each): the median with a 95% interval that resamples whole processes,
/// so that processes which disagree widen it.
pub fn start_phase(blocks: &[Vec<f64>], seed: u64) -> StartPhase {
    let all: Vec<f64> = blocks.concat();
    let (ci95_low, ci95_high) = stats::median_ci(blocks, 0.95, stats::RESAMPLES_FINAL, seed);
    let stats = phase_stats(&all);
    StartPhase {
        median: stats.median,
        ci95_low,
        ci95_high,
        min: stats.min,
        max: stats.max,
        samples: stats.samples,
    }
}

pub use crate::analysis::interval::Drift;

/// Summarise the measurements of a row's processes, `estimate` from them
/// ([`crate::analysis::estimate::locate`]), into its figures: statistics of the epochs it stands on,
/// the interval (from the processes, widened by the drift between runs),
/// and its notes.
pub fn figures(
    processes: &[Measurement],
    estimate: &Estimate,
    preparation: Preparation,
    warmup_cap_ms: f64,
    seed: u64,
    drift: Drift,
) -> Figures {
    let m = &pool(processes);
    let per_op: Vec<Vec<f64>> = estimate.per_process.concat();
    let summary = stats::summarize(&per_op, stats::RESAMPLES_FINAL, seed);
    let intervals = intervals(summary.median, estimate, &drift);
    let (ci95_low, ci95_high) = match drift.shown {
        Headline::LaterRun => intervals.later_run,
        Headline::ThisRun => intervals.this_run,
    };
    // Within one clock step over the count of 0, or NaN (no samples): as
    // the empty guest. A program has no empty guest to be told apart from:
    // such an interval is just too wide to bound its time.
    let program = preparation.kind == Kind::Program;
    let reaches_zero = ci95_low.is_nan() || ci95_low <= finest_ns(m);
    let indistinguishable = reaches_zero && !program;
    let at_resolution = program && at_clock_resolution(summary.median, m);
    let epochs = per_op.iter().map(Vec::len).sum::<usize>();
    let found = Found {
        m,
        summary: &summary,
        estimate,
        preparation: &preparation,
        drift,
        epochs,
        intervals,
        shown: (ci95_low, ci95_high),
        reaches_zero,
        program,
        at_resolution,
    };
    Figures {
        counts: Counts {
            count: m.count,
            samples: m.blocks.iter().map(Vec::len).sum::<usize>(),
            epochs,
            epochs_disturbed: estimate.left_out,
            undisturbed: matches!(estimate.location, Location::Undisturbed { .. }),
        },
        ns_per_op: ns_per_op(&summary, &intervals, drift.shown),
        time: time(m, &summary),
        warmup: WarmupFigures {
            warmup_ms: m.warmup.elapsed_ms,
            warmup_settled: m.warmup.settled,
            warmup_rounds: m.warmup.rounds,
            warmup_first_timed: m.warmup.first_timed,
        },
        durations: Durations {
            compile_ms: preparation.compile_ms,
            compile_cache: preparation.compile_cache.clone(),
            instantiate_ms: preparation.instantiate_ms,
            sampling_ms: m.sampling_ms,
        },
        checksum: m.checksum.map(|bits| Checksum::new(preparation.kind, bits)),
        pauses: Pauses {
            pauses_per_sample: pauses_per_sample(m),
            pauses_total: m.total_pauses(),
        },
        phases: None,
        start: None,
        fuel_per_op: None,
        indistinguishable_from_empty: indistinguishable,
        no_measurable_work: indistinguishable && m.count_capped,
        at_clock_resolution: at_resolution,
        // Decided by the parent's stop rule, which knows the goal.
        precision_reached: false,
        stopped_by: None,
        notes: notes(&found, warmup_cap_ms),
        info: info(&found),
        costs: crate::results::Costs::default(),
        processes: process_figures(processes.len(), estimate, summary.median),
        drift: drift_figures(drift, summary.median),
        callgrind: None,
        hardware_counters: None,
        series: Series {
            raw_samples_ns: m.blocks.clone(),
            epochs_ns_per_op: per_op,
            epoch_classes: summary.classes.clone(),
            fixed_costs_ns: m.fixed_costs_ns.clone(),
        },
    }
}

/// The statistics of a row's epochs, with its two intervals, of which it
/// shows `shown`.
fn ns_per_op(summary: &Summary, intervals: &Intervals, shown: Headline) -> NsPerOp {
    let ci95 = match shown {
        Headline::LaterRun => intervals.later_run,
        Headline::ThisRun => intervals.this_run,
    };
    NsPerOp {
        median: summary.median,
        mean: summary.mean,
        stddev: summary.stddev,
        min: summary.min,
        max: summary.max,
        ci95_low: ci95.0,
        ci95_high: ci95.1,
        ci95_shown: shown,
        ci95_this_run_low: intervals.this_run.0,
        ci95_this_run_high: intervals.this_run.1,
        ci95_later_run_low: intervals.later_run.0,
        ci95_later_run_high: intervals.later_run.1,
        ci95_within_run_low: summary.ci95_low,
        ci95_within_run_high: summary.ci95_high,
    }
}

/// The drift between runs that widened the interval of a row of median
/// `median`, and how far it lies from its earlier runs.
fn drift_figures(drift: Drift, median: f64) -> DriftFigures {
    DriftFigures {
        run_drift_pct: drift.measured.map(|d| d.rel_sd * 100.0),
        run_drift_runs: drift.measured.map_or(0, |d| d.runs),
        earlier_runs: drift.earlier_runs,
        earlier_runs_departure_pct: drift
            .measured
            .and_then(|d| d.earlier)
            .map(|e| e.departure(median) * 100.0),
    }
}

/// The rest of a row's time: before correction, spread, rate, the fixed
/// cost subtracted, outliers.
fn time(m: &Measurement, summary: &Summary) -> Time {
    let raw: Vec<f64> = m.raw_per_op().into_iter().flatten().collect();
    Time {
        raw_ns_per_op_median: stats::median(&raw),
        err_pct: summary.err_pct,
        ops_per_sec: (summary.median > 0.0).then(|| 1e9 / summary.median),
        fixed_cost_ns: m.fixed_cost_ns,
        outliers: summary.outliers.total(),
        outlier_counts: summary.outliers.clone(),
    }
}

/// The median number of pauses in a sample of `m` (0 without any).
fn pauses_per_sample(m: &Measurement) -> u64 {
    let pauses: Vec<f64> = m.pauses.iter().flatten().map(|&p| p as f64).collect();
    if pauses.is_empty() {
        0
    } else {
        stats::median(&pauses) as u64
    }
}

/// The processes of a row: how many, their medians, how far apart, and
/// the groups they fall into.
fn process_figures(processes: usize, estimate: &Estimate, median: f64) -> ProcessFigures {
    let medians = estimate.process_medians.clone();
    let between_process_sd_pct = match medians.len() {
        0 | 1 => 0.0,
        _ => stats::sample_sd(&medians) / median.abs() * 100.0,
    };
    let groups = groups::groups(&medians);
    let spread = match (groups.first(), groups.last()) {
        (Some(fastest), Some(slowest)) => Some((slowest.high_ns / fastest.low_ns - 1.0) * 100.0),
        _ => None,
    };
    ProcessFigures {
        processes,
        process_medians_ns: medians,
        between_process_sd_pct,
        process_spread_pct: spread,
        process_groups: groups,
    }
}

/// What the notes of a row are read from.
struct Found<'a> {
    /// The processes' measurements pooled.
    m: &'a Measurement,
    summary: &'a Summary,
    estimate: &'a Estimate,
    preparation: &'a Preparation,
    drift: Drift,
    /// Epochs the row stands on.
    epochs: usize,
    /// Its two intervals, and the one shown.
    intervals: Intervals,
    shown: (f64, f64),
    reaches_zero: bool,
    program: bool,
    /// A program timed in fewer than [`PROGRAM_CLOCK_STEPS`] clock steps.
    at_resolution: bool,
}

/// The notes a reader may have to act on, in the order the terminal shows
/// them.
fn notes(found: &Found, warmup_cap_ms: f64) -> Notes {
    let Found { m, summary, .. } = found;
    let mut notes = Notes::default();
    if found.reaches_zero && !found.program {
        notes.add(Note::EmptyGuestIndistinguishable);
    }
    if found.reaches_zero && found.program {
        notes.add(Note::ReachesZero);
    }
    if found.at_resolution {
        notes.add(Note::AtClockResolution {
            steps: summary.median / m.clock_resolution_ns,
        });
    }
    if m.count_capped {
        notes.add(Note::CountCapped { count: m.count });
    }
    if m.warmup.first_timed > 0 {
        notes.add(Note::FirstIterationTimed {
            processes: m.warmup.first_timed,
        });
    } else if !m.warmup.settled {
        notes.add(Note::WarmupNotSettled {
            cap_ms: warmup_cap_ms,
        });
    }
    if let CacheOutcome::Rebuilt(reason) = &found.preparation.compile_cache {
        notes.add(Note::CacheRefused {
            reason: reason.clone().into(),
        });
    }
    if found.drift.busy_machine {
        notes.add(Note::BusyMachine);
    }
    if let Some(e) = found.drift.measured.and_then(|d| d.earlier)
        && found.intervals.departed
    {
        notes.add(Note::DepartsFromEarlierRuns {
            departure: e.departure(summary.median),
            runs: e.runs,
        });
    }
    if let Some(other) = other_interval(found) {
        notes.add(other);
    }
    let disagree = disagreement(found.estimate);
    if let Some(note) = &disagree {
        notes.add(note.clone());
    }
    if let Some(note) = err_beside_interval(found, disagree.is_some()) {
        notes.add(note);
    }
    let severe = summary.outliers.high_severe + summary.outliers.low_severe;
    if severe > found.epochs / 10 {
        notes.add(Note::SevereOutliers {
            severe,
            epochs: found.epochs,
        });
    }
    notes
}

/// The interval a row does not show, when it differs from the one shown
/// by more than a thousandth of either end, with what widened a later
/// run's.
fn other_interval(found: &Found) -> Option<Note> {
    let Intervals {
        this_run,
        later_run,
        departed,
        bounded,
    } = found.intervals;
    let apart = |a: f64, b: f64| (a - b).abs() > 1e-3 * a.abs().max(b.abs());
    let differ = apart(this_run.0, later_run.0) || apart(this_run.1, later_run.1);
    if !differ {
        return None;
    }
    let drift = found.drift;
    let (low, high) = match drift.shown {
        Headline::LaterRun => this_run,
        Headline::ThisRun => later_run,
    };
    Some(Note::OtherInterval {
        shown: drift.shown,
        low,
        high,
        why: Widened {
            drift: drift.measured.map(|d| (d.rel_sd, d.runs, d.own)),
            stated_pct: drift.stated_pct,
            busy: drift.busy_machine,
            departed,
            unmeasured: drift.measured.is_none(),
        },
        bounded,
    })
}

/// The widest the processes' medians may spread before a row says they
/// disagree: 5%.
pub const DISAGREE_PCT: f64 = 5.0;

/// That a row's processes disagree, when their medians span more than
/// [`DISAGREE_PCT`], or fall into separate groups.
fn disagreement(estimate: &Estimate) -> Option<Note> {
    let groups = groups::groups(&estimate.process_medians);
    let (low, high) = (groups.first()?.low_ns, groups.last()?.high_ns);
    let spread = (high / low - 1.0) * 100.0;
    (spread > DISAGREE_PCT || groups.len() > 1).then(|| Note::ProcessesDisagree {
        low,
        high,
        processes: groups.iter().map(|g| g.processes).sum(),
        groups: match groups.len() {
            1 => Vec::new(),
            _ => groups,
        },
        runtime_varies: None,
    })
}

/// How many times err% the interval shown may reach before a row says
/// why the two differ.
pub const ERR_BESIDE_INTERVAL: f64 = 3.0;

/// Why err% is much narrower than the interval shown, when it is (by more
/// than [`ERR_BESIDE_INTERVAL`] times, and more than 1%): the processes
/// disagree (`disagree`), or a later run's interval was widened.
fn err_beside_interval(found: &Found, disagree: bool) -> Option<Note> {
    let median = found.summary.median;
    let err_pct = found.summary.err_pct;
    let (low, high) = found.shown;
    if !(median > 0.0 && low.is_finite() && high.is_finite()) {
        return None;
    }
    let below_pct = (1.0 - low / median) * 100.0;
    let above_pct = (high / median - 1.0) * 100.0;
    let widest = below_pct.max(above_pct);
    (widest > ERR_BESIDE_INTERVAL * err_pct && widest > 1.0).then_some(Note::ErrBesideInterval {
        err_pct,
        below_pct,
        above_pct,
        processes: disagree,
    })
}

/// The facts about a row that need no action.
fn info(found: &Found) -> Notes {
    let mut info = Notes::default();
    if let CacheOutcome::Hit = found.preparation.compile_cache {
        info.add(Note::CacheHit {
            load_ms: found.preparation.compile_ms,
        });
    }
    if found.drift.read && found.drift.measured.is_none() {
        info.add(Note::TooFewEarlierRuns {
            runs: found.drift.earlier_runs,
            needed: MIN_RUNS,
        });
    }
    if let Some(undisturbed) = undisturbed(found.estimate) {
        info.add(Note::StandsOnUndisturbed(undisturbed));
    }
    let per_sample = pauses_per_sample(found.m);
    if per_sample > 0 {
        info.add(Note::Pauses {
            per_sample,
            pair_ns: found.m.pause_pair_ns,
        });
    }
    info
}

/// What a row that stands on its undisturbed epochs says of them: how many
/// it kept, how far above their median the median of every epoch lies,
/// and, when the core was watched, how many interruptions a sample
/// carries.
fn undisturbed(estimate: &Estimate) -> Option<Undisturbed> {
    let Location::Undisturbed { carried, .. } = estimate.location else {
        return None;
    };
    let kept: usize = estimate.per_process.iter().flatten().map(Vec::len).sum();
    Some(Undisturbed {
        kept,
        epochs: kept + estimate.left_out,
        within_us: gaps::THRESHOLD.as_micros(),
        every_above_pct: (estimate.every_median / estimate.centre - 1.0) * 100.0,
        sample_ns: estimate.sample_ns,
        interruptions_per_sample: carried,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::drift::RunDrift;
    use crate::analysis::estimate::{kept, locate, location};
    use crate::platform::gaps::Interruptions;

    #[test]
    fn a_short_call_stands_on_its_undisturbed_epochs_unless_mostly_fixed_cost() {
        // xor at 1000: a fixed cost of 18% of the sample.
        let undisturbed = |l: Location| matches!(l, Location::Undisturbed { .. });
        assert!(!undisturbed(location(
            Kind::Module,
            280.0,
            1_000,
            50.0,
            false,
            None
        )));
        assert!(undisturbed(location(
            Kind::Module,
            280.0,
            1_000,
            50.0,
            true,
            None
        )));
        // The empty guest: all of it.
        assert!(!undisturbed(location(
            Kind::Module,
            40.0,
            1_000,
            39.0,
            true,
            None
        )));
    }

    #[test]
    fn pooling_keeps_each_block_with_its_doubles() {
        let short = Measurement {
            doubles: vec![vec![(0, 600.0)]],
            ..process(0.25)
        };
        let long = process(0.25);
        let pooled = pool(&[long.clone(), short, long]);
        assert_eq!(pooled.blocks.len(), 3);
        assert_eq!(
            pooled.doubles,
            vec![Vec::new(), vec![(0, 600.0)], Vec::new()]
        );
    }

    /// One process whose samples all take `per_op_ns` at count 1000.
    fn process(per_op_ns: f64) -> Measurement {
        Measurement {
            count: 1_000,
            warmup: crate::results::Warmup {
                elapsed_ms: 1.0,
                settled: true,
                rounds: 1,
                per_op_ns: None,
                first_timed: 0,
            },
            blocks: vec![vec![per_op_ns * 1_000.0; 3_000]],
            pauses: Vec::new(),
            doubles: Vec::new(),
            fixed_costs_ns: vec![0.0],
            fixed_cost_ns: 0.0,
            pause_pair_ns: 0.0,
            clock_resolution_ns: 1.0,
            checksum: None,
            sampling_ms: 1.0,
            count_capped: false,
        }
    }

    fn row(drift: Drift) -> Figures {
        row_of(&[process(103.5), process(103.7), process(103.9)], drift)
    }

    /// The figures of a core module's row measured in `processes`.
    fn row_of(processes: &[Measurement], drift: Drift) -> Figures {
        let stages = Preparation {
            kind: Kind::Module,
            compile_ms: 0.0,
            compile_cache: CacheOutcome::Off,
            instantiate_ms: 0.0,
        };
        let located = locate(processes, Kind::Module, None, 1);
        figures(processes, &located, stages, 1_000.0, 1, drift)
    }

    /// A program whose timed region lasts a few steps of the clock (40 ns
    /// on a 20 ns clock) is timed at the clock's resolution: noted, and
    /// no measurable work for a geometric mean; one of 100 steps is not.
    #[test]
    fn a_program_timed_in_a_few_clock_steps_is_at_the_clock_resolution() {
        let program = |ns: f64| {
            let one = Measurement {
                count: 1,
                blocks: vec![vec![ns; 50]],
                clock_resolution_ns: 20.0,
                ..process(ns)
            };
            let processes = [one.clone(), one.clone(), one];
            let stages = Preparation {
                kind: Kind::Program,
                compile_ms: 0.0,
                compile_cache: CacheOutcome::Off,
                instantiate_ms: 0.0,
            };
            let located = locate(&processes, Kind::Program, None, 1);
            figures(&processes, &located, stages, 1_000.0, 1, Drift::default())
        };
        let short = program(40.0);
        assert!(short.at_clock_resolution && !short.measurable_work());
        assert!(
            (short.notes.iter())
                .any(|n| matches!(n, Note::AtClockResolution { steps } if *steps == 2.0)),
            "{:?}",
            short.notes
        );
        let long = program(2_000.0);
        assert!(!long.at_clock_resolution && long.measurable_work());
    }

    #[test]
    fn a_run_that_departs_from_its_earlier_runs_reaches_back_to_them() {
        let earlier = |median_ns| crate::analysis::drift::Earlier {
            median_ns,
            rel_margin: 0.002,
            runs: 12,
        };
        let drift = |e| Drift {
            stated_pct: 0.0,
            measured: Some(RunDrift {
                rel_sd: 0.001,
                df: 11,
                runs: 12,
                own: true,
                earlier: Some(e),
            }),
            busy_machine: false,
            ..Drift::default()
        };
        // Three processes at 103.5–103.9 ns and earlier runs at 100 ns.
        let departed = row(drift(earlier(100.0)));
        let ns = &departed.ns_per_op;
        assert!(ns.ci95_low < 100.0 && ns.ci95_high > 103.9, "{ns:?}");
        let departure = departed.drift.earlier_runs_departure_pct.expect("measured");
        assert!((departure - 3.7).abs() < 1e-9, "{departure}");
        assert!(
            departed.notes.iter().any(|n| n
                .words()
                .unescaped()
                .contains("+3.70% from the median of 12 earlier run(s)")),
            "{:?}",
            departed.notes
        );
        // Earlier runs at 103.7 ns: the interval and the notes stay as they were.
        let agreed = row(drift(earlier(103.7)));
        let alone = row(Drift {
            stated_pct: 0.0,
            measured: drift(earlier(103.7))
                .measured
                .map(|d| RunDrift { earlier: None, ..d }),
            busy_machine: false,
            ..Drift::default()
        });
        assert_eq!(
            (agreed.ns_per_op.ci95_low, agreed.ns_per_op.ci95_high),
            (alone.ns_per_op.ci95_low, alone.ns_per_op.ci95_high)
        );
        assert!(
            !agreed
                .notes
                .iter()
                .any(|n| n.words().unescaped().contains("from the median of"))
        );
        assert_eq!(alone.drift.earlier_runs_departure_pct, None);
    }

    #[test]
    fn a_run_departs_only_beyond_both_its_interval_and_the_earlier_margin() {
        // Three processes at exactly 242.5 ps, and a drift of 0.001%: an
        // interval a few thousandths of a percent wide.
        let processes = [process(0.2425), process(0.2425), process(0.2425)];
        let notes = |median_ns: f64| {
            let earlier = crate::analysis::drift::Earlier {
                median_ns,
                rel_margin: 0.002,
                runs: 12,
            };
            let drift = Drift {
                stated_pct: 0.0,
                measured: Some(RunDrift {
                    rel_sd: 0.000_01,
                    df: 11,
                    runs: 12,
                    own: true,
                    earlier: Some(earlier),
                }),
                busy_machine: false,
                ..Drift::default()
            };
            row_of(&processes, drift).notes
        };
        let departs = |notes: Notes| {
            notes
                .iter()
                .any(|n| n.words().unescaped().contains("from the median of"))
        };
        // 0.01% away, within the earlier runs' own margin of 0.2%.
        assert!(!departs(notes(0.242_475)));
        // 1% away.
        assert!(departs(notes(0.240_1)));
    }

    #[test]
    fn on_a_busy_machine_the_interval_spans_every_process_median() {
        let medians = [103.0, 103.5, 103.6, 103.7, 103.8, 103.9, 104.0, 110.0];
        let processes: Vec<Measurement> = medians.iter().map(|&m| process(m)).collect();
        // Quiet, with the drift between runs measured (a small one).
        let measured = Drift {
            measured: Some(RunDrift {
                rel_sd: 0.001,
                df: 11,
                runs: 12,
                own: true,
                earlier: None,
            }),
            ..Drift::default()
        };
        let quiet = row_of(&processes, measured);
        let busy = row_of(
            &processes,
            Drift {
                busy_machine: true,
                ..measured
            },
        );
        let (q, b) = (&quiet.ns_per_op, &busy.ns_per_op);
        assert!(
            q.ci95_high < 110.0,
            "the quiet interval stays narrow: {q:?}"
        );
        assert!(b.ci95_low <= 103.0 && b.ci95_high >= 110.0, "{b:?}");
        assert!(b.ci95_low <= q.ci95_low && b.ci95_high >= q.ci95_high);
        assert_eq!(q.median, b.median);
        let busy_note = |f: &Figures| f.notes.iter().any(|n| *n == Note::BusyMachine);
        assert!(busy_note(&busy) && !busy_note(&quiet));
    }

    fn said(notes: &Notes) -> String {
        notes
            .iter()
            .map(|n| n.words().into_unescaped())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Processes in two modes (bz2's, in ms per op): the row says they
    /// disagree, names the groups, and says why err% (0 here: every
    /// process's samples are equal) is narrower than the interval; the
    /// JSON has the groups and the spread.
    #[test]
    fn processes_in_separate_groups_are_said_as_such() {
        let medians = [6.09e6, 6.12e6, 6.2e6, 6.31e6, 6.38e6, 6.4e6, 8.02e6, 8.68e6];
        let processes: Vec<Measurement> = medians.iter().map(|&m| process(m)).collect();
        let row = row_of(&processes, Drift::default());
        let words = said(&row.notes);
        assert!(
            words.contains("processes disagree: 6.090 ms–8.680 ms over 8 processes, in 2 groups: 6.090 ms–6.400 ms (6), 8.020 ms–8.680 ms (2)"),
            "{words}"
        );
        assert!(
            words.contains("is the spread of epochs within each process; the interval reaches")
                && words.contains("because the processes disagree"),
            "{words}"
        );
        assert_eq!(row.processes.process_groups.len(), 2);
        let spread = row.processes.process_spread_pct.expect("a spread");
        assert!(
            (spread - (8.68 / 6.09 - 1.0) * 100.0).abs() < 1e-9,
            "{spread}"
        );
        // Processes that agree: nothing of the kind.
        let agree: Vec<Measurement> = [100.0, 100.2, 100.4].map(process).to_vec();
        let words = said(&row_of(&agree, Drift::default()).notes);
        assert!(
            !words.contains("disagree") && !words.contains("err%"),
            "{words}"
        );
    }

    /// With drift measured over five earlier runs, the row shows a later
    /// run's interval and says this run's; with `--interval this-run` the
    /// other way round; with fewer runs, that there are too few to say.
    #[test]
    fn the_row_says_the_interval_it_does_not_show() {
        let processes: Vec<Measurement> = [8.40e6, 8.46e6, 8.52e6].map(process).to_vec();
        let drift = |shown| Drift {
            measured: Some(RunDrift {
                rel_sd: 0.195,
                df: 4,
                runs: 5,
                own: true,
                earlier: None,
            }),
            read: true,
            earlier_runs: 5,
            earlier_range_ns: Some((6.09e6, 9.4e6)),
            shown,
            ..Drift::default()
        };
        let later = row_of(&processes, drift(Headline::LaterRun));
        let words = said(&later.notes);
        assert!(
            words.contains("runs of this benchmark differed by 19.5% today (sd over 5 earlier runs): the interval is where a later run may land; this run's processes alone give ["),
            "{words}"
        );
        let ns = &later.ns_per_op;
        assert_eq!(
            (ns.ci95_low, ns.ci95_high),
            (ns.ci95_later_run_low, ns.ci95_later_run_high)
        );
        assert!(
            ns.ci95_low >= 6.09e6 / 1.1 && ns.ci95_high <= 9.4e6 * 1.1,
            "{ns:?}"
        );
        let this = row_of(&processes, drift(Headline::ThisRun));
        let words = said(&this.notes);
        assert!(words.contains("a later run may land in ["), "{words}");
        let ns = &this.ns_per_op;
        assert_eq!(
            (ns.ci95_low, ns.ci95_high),
            (ns.ci95_this_run_low, ns.ci95_this_run_high)
        );
        let few = Drift {
            read: true,
            earlier_runs: 3,
            ..Drift::default()
        };
        let words = said(&row_of(&processes, few).info);
        assert!(
            words.contains("too few earlier runs of this benchmark to measure the drift between runs (3 kept today, 5 needed): a later run's interval spans this run's processes"),
            "{words}"
        );
    }

    fn watched(per_second: f64) -> Interruptions {
        Interruptions {
            core: 1,
            watched_s: 0.03,
            per_second,
            lost_pct: 3.5,
            p50_ns: 2_500.0,
            p90_ns: 20_000.0,
            p99_ns: 70_000.0,
            max_ns: 100_000.0,
        }
    }

    #[test]
    fn rows_stand_on_undisturbed_epochs_unless_programs_or_mostly_fixed_cost() {
        let core = watched(2_000.0);
        // 2.5 ms samples carry 5 interruptions on average; one
        // interruption's least length (1 µs) over the count of 10^7.
        assert_eq!(
            location(Kind::Module, 2.5e6, 10_000_000, 40.0, false, Some(&core)),
            Location::Undisturbed {
                tolerance_ns: 1e-4,
                carried: Some(5.0)
            }
        );
        // 2.5 µs samples: two hundred pool into an epoch, which a gap of
        // 1 µs moves by a two-hundredth as much per op. Unwatched: nothing
        // said of interruptions.
        assert_eq!(
            location(Kind::Component, 2_500.0, 10_000, 40.0, false, None),
            Location::Undisturbed {
                tolerance_ns: 1_000.0 / (10_000.0 * 200.0),
                carried: None
            }
        );
        // A call whose fixed cost is over a tenth of the sample (xor at a
        // count of 1000, the empty guest), a program: every epoch.
        assert_eq!(
            location(Kind::Module, 280.0, 1_000, 39.0, false, Some(&core)),
            Location::Every
        );
        assert_eq!(
            location(Kind::Module, 40.0, 1_000, 39.0, false, Some(&core)),
            Location::Every
        );
        assert_eq!(
            location(Kind::Program, 2.5e6, 1, 0.0, false, Some(&core)),
            Location::Every
        );
        assert_eq!(
            location(Kind::Module, f64::NAN, 1, 0.0, false, None),
            Location::Every
        );
    }

    #[test]
    fn each_process_keeps_the_epochs_within_the_tolerance_of_its_fastest() {
        let located = Location::Undisturbed {
            tolerance_ns: 0.5,
            carried: Some(3.0),
        };
        let per_process = vec![
            vec![vec![10.0, 12.0, 10.4], vec![10.5, 10.6]],
            // A process no untouched sample reached keeps its fastest.
            vec![vec![13.0, 11.2]],
        ];
        assert_eq!(
            kept(per_process.clone(), located),
            vec![vec![vec![10.0, 10.4], vec![10.5]], vec![vec![11.2]]]
        );
        assert_eq!(kept(per_process.clone(), Location::Every), per_process);
    }

    #[test]
    fn a_row_stands_on_the_epochs_that_neither_interruptions_nor_slower_spells_reached() {
        // 2 ms samples at 10^6 (2 ns per op), each carrying 0 to 3 gaps of
        // 5–40 µs, and one in four in a spell 3% slower; about a quarter
        // carry neither.
        let mut rng = fastrand::Rng::with_seed(7);
        let processes: Vec<Measurement> = (0..5)
            .map(|_| {
                let samples = (0..60)
                    .map(|_| {
                        let gaps = [0, 0, 1, 1, 2, 3][rng.usize(0..6)];
                        let lost: f64 = (0..gaps).map(|_| rng.f64() * 35_000.0 + 5_000.0).sum();
                        let spell = if rng.usize(0..4) == 0 { 1.03 } else { 1.0 };
                        // Undisturbed samples scatter by a few ns.
                        (2e6 + rng.f64() * 5.0) * spell + lost
                    })
                    .collect();
                Measurement {
                    count: 1_000_000,
                    blocks: vec![samples],
                    doubles: Vec::new(),
                    fixed_costs_ns: vec![40.0],
                    fixed_cost_ns: 40.0,
                    ..process(0.0)
                }
            })
            .collect();
        let fixed = 40e-6;
        // 500 per second: a 2 ms sample carries one on average.
        let core = watched(500.0);
        let located = locate(&processes, Kind::Module, Some(&core), 1);
        assert!(
            located.centre >= 2.0 - fixed && located.centre < 2.000_01 - fixed,
            "{located:?}"
        );
        assert!(located.high < 2.000_01 - fixed, "{located:?}");
        // The median of every epoch keeps the interruptions of most samples.
        assert!(located.every_median > 2.005, "{}", located.every_median);
        // A program stands on every epoch.
        let program = locate(&processes, Kind::Program, Some(&core), 1);
        assert_eq!(
            (program.left_out, program.centre),
            (0, located.every_median)
        );

        let stages = Preparation {
            kind: Kind::Module,
            compile_ms: 0.0,
            compile_cache: CacheOutcome::Off,
            instantiate_ms: 0.0,
        };
        let row = figures(&processes, &located, stages, 1_000.0, 1, Drift::default());
        assert!(row.counts.undisturbed);
        assert_eq!(row.ns_per_op.median, located.centre);
        assert_eq!(row.counts.epochs + row.counts.epochs_disturbed, 300);
        assert!(
            row.counts.epochs >= 30 && row.counts.epochs < 120,
            "{}",
            row.counts.epochs
        );
        let said = row
            .info
            .iter()
            .map(|n| n.words().into_unescaped())
            .find(|line| line.contains("neither an interruption nor a slower spell"))
            .unwrap_or_else(|| panic!("says what the time stands on: {:?}", row.info));
        assert!(
            said.contains(&format!(
                "the median of the {} of 300 epochs",
                row.counts.epochs
            )),
            "{said}"
        );
        assert!(
            said.contains("of the measuring core's interruptions"),
            "{said}"
        );
    }
}
