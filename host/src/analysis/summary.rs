//! Summaries: from a raw [`Measurement`] to the [`Figures`] of a row.
//!
//! The correction step of the method lives here, once: every sample less the
//! fixed cost of a call (measured by the sequence on the workload itself:
//! 2·T(m) − T(2m)), less the calibrated cost of
//! each pause/resume pair, pooled into epochs of at least [`EPOCH_NS`] and
//! divided by the count. Then which epochs the row's time stands on
//! ([`locate`]: those that neither an interruption nor a slower spell of
//! the core reached, or, for programs and calls that are mostly fixed
//! cost, every epoch), the
//! statistics of [`crate::analysis::stats`] over them, and the notes a
//! reader needs. Pure arithmetic: no I/O, no clocks.

use crate::analysis::drift::RunDrift;
use crate::analysis::stats;
use crate::guest::Kind;
use crate::guest::cache::CacheOutcome;
use crate::platform::gaps::{self, Interruptions};
use crate::results::{Checksum, Figures, Measurement, NsPerOp, PhaseStats};

/// Bootstrap resamples for the checks made while sampling.
pub const RESAMPLES_WHILE_SAMPLING: usize = 300;
/// Bootstrap resamples for the final summary.
pub const RESAMPLES_FINAL: usize = 2_000;

/// Timings of the stages before measurement, in ms.
#[derive(Debug, Clone)]
pub struct Stages {
    pub kind: Kind,
    pub compile_ms: f64,
    pub compile_cache: CacheOutcome,
    pub instantiate_ms: f64,
}

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
        precision_reached: processes.iter().any(|m| m.precision_reached),
        count_capped: processes.iter().any(|m| m.count_capped),
    };
    for m in processes {
        pooled.warmup.elapsed_ms += m.warmup.elapsed_ms;
        pooled.warmup.settled &= m.warmup.settled;
        pooled.warmup.rounds += m.warmup.rounds;
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

/// The median per-op time of each process, from its corrected blocks.
pub fn process_medians(per_process: &[Vec<Vec<f64>>]) -> Vec<f64> {
    per_process
        .iter()
        .map(|blocks| stats::median(&blocks.concat()))
        .collect()
}

/// The finest per-op difference a sample of `m` can show: one step of the
/// clock over the count.
pub fn finest_ns(m: &Measurement) -> f64 {
    m.clock_resolution_ns / m.count.max(1) as f64
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

/// Largest share of a sample the fixed cost of its call may take for a row
/// to stand on its fastest epochs ([`Location::Undisturbed`]) when the
/// fixed cost is measured in pairs before each block. Measured so, it spans
/// the core's states and is subtracted from every sample; the fastest epochs
/// come from its fastest state, in which the call too is quicker. A spell
/// that slows the call path by 10% then moves their per-op time by at most
/// 1%.
pub const FIXED_SHARE: f64 = 0.1;

/// The same bound when every epoch measures the fixed cost of its own calls
/// (a short call, with doubles: see [`corrected`]). The state of the core
/// is then the same for the fixed cost as for the work; what is left is
/// noise: an epoch's per-op time is a difference of two means, whose noise
/// grows as the work shrinks against the call. The fastest of noisy epochs
/// would be their noise, so a call that is mostly fixed cost (the empty
/// guest) stands on every epoch, where the noise averages out. For xor at a
/// count of 1000 (a fixed cost of 12–17% of a sample), the kept epochs of a
/// run had a standard deviation of 0.2–0.8%.
pub const FIXED_SHARE_IN_EPOCH: f64 = 0.5;

/// Which epochs a row's time is the median of.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Location {
    /// Every epoch: a program (whose whole run is the time, as the engine
    /// without a harness runs it), or samples so short that the fixed cost
    /// of their call weighs more than [`FIXED_SHARE`] of them (more than
    /// [`FIXED_SHARE_IN_EPOCH`] when each epoch measures it).
    Every,
    /// The epochs nothing the machine adds reached. The machine only ever
    /// adds time to the work: an interruption (at least
    /// [`gaps::THRESHOLD`] per gap; hundreds to thousands a second on a
    /// virtual machine) or a spell in which the core runs slower (a few
    /// percent, for milliseconds). Every sample repeats the same call, so
    /// an epoch that neither reached is as fast as the work allows: of each
    /// process, the epochs within `tolerance_ns` per op (one threshold per
    /// sample, spread over the epoch's samples) of its fastest. Each
    /// process keeps at least its fastest, so a process that no untouched
    /// sample reached still counts, with one epoch.
    Undisturbed {
        /// The widest an undisturbed epoch lies above its process's
        /// fastest, ns per op.
        tolerance_ns: f64,
        /// Interruptions a sample carries on average, when the core was
        /// watched before the run.
        carried: Option<f64>,
    },
}

/// Which epochs give the time of a row whose samples (one call each) take
/// `sample_ns` at `count`, of which the call's fixed cost is `fixed_ns`
/// (measured in each epoch when `in_epoch`), on a core `watched` before the
/// run.
pub fn location(
    kind: Kind,
    sample_ns: f64,
    count: u64,
    fixed_ns: f64,
    in_epoch: bool,
    watched: Option<&Interruptions>,
) -> Location {
    let share = match in_epoch {
        true => FIXED_SHARE_IN_EPOCH,
        false => FIXED_SHARE,
    };
    let light = fixed_ns <= share * sample_ns;
    match kind {
        Kind::Program => Location::Every,
        _ if !light || !sample_ns.is_finite() => Location::Every,
        _ => {
            // A gap in a pooled epoch is spread over all of its samples.
            let samples_per_epoch = (EPOCH_NS / sample_ns).max(1.0);
            Location::Undisturbed {
                tolerance_ns: gaps::THRESHOLD.as_nanos() as f64
                    / (count.max(1) as f64 * samples_per_epoch),
                carried: watched.map(|w| w.per_span(sample_ns)),
            }
        }
    }
}

impl Location {
    /// What the run history files a row's median under, beside the CPU:
    /// medians of the two kinds drift differently between runs.
    pub fn label(&self) -> &'static str {
        match self {
            Location::Every => "every epoch",
            Location::Undisturbed { .. } => "undisturbed epochs",
        }
    }
}

/// The epochs of each process (`per_process`: processes, blocks, epochs)
/// that `location` keeps, in their blocks and order.
pub fn kept(per_process: Vec<Vec<Vec<f64>>>, location: Location) -> Vec<Vec<Vec<f64>>> {
    let Location::Undisturbed { tolerance_ns, .. } = location else {
        return per_process;
    };
    per_process
        .into_iter()
        .map(|blocks| {
            let fastest = blocks
                .iter()
                .flatten()
                .copied()
                .fold(f64::INFINITY, f64::min);
            let bound = fastest + tolerance_ns;
            blocks
                .into_iter()
                .map(|block| block.into_iter().filter(|&x| x <= bound).collect())
                .collect()
        })
        .collect()
}

/// An estimate of a row's time with its interval over the processes,
/// before any drift between runs widens it.
#[derive(Debug, Clone)]
pub struct Estimate {
    pub location: Location,
    /// The epochs kept, by process and block.
    pub per_process: Vec<Vec<Vec<f64>>>,
    /// How many epochs were left out.
    pub left_out: usize,
    /// The median of every epoch, kept or not.
    pub every_median: f64,
    /// The median of every kept epoch.
    pub centre: f64,
    /// The median of each process's kept epochs.
    pub process_medians: Vec<f64>,
    /// The interval over the processes: Student's t over the process
    /// medians, around `centre`, for every epoch; for the undisturbed
    /// epochs, of which one process keeps one and another hundreds, a
    /// bootstrap that draws whole processes and takes the median of their
    /// kept epochs pooled. With one process, a bootstrap over its blocks.
    pub low: f64,
    pub high: f64,
    /// The median length of a sample (one call), ns.
    pub sample_ns: f64,
}

/// Former name of [`Estimate`].
pub type Located = Estimate;

/// The time of a row measured in `processes` (each corrected with its own
/// fixed cost), of `kind`, on a core `watched` before the run: which epochs
/// it stands on, their median, and the interval the processes give it. The
/// stopping rule and the final figures both take it from here.
pub fn locate(
    processes: &[Measurement],
    kind: Kind,
    watched: Option<&Interruptions>,
    seed: u64,
) -> Estimate {
    let per_process: Vec<Vec<Vec<f64>>> = processes.iter().map(corrected_per_op).collect();
    let every: usize = per_process.iter().flatten().map(Vec::len).sum();
    let every_median = stats::median(&per_process.concat().concat());
    let calls: Vec<f64> = processes
        .iter()
        .flat_map(|m| m.blocks.iter().flatten().copied())
        .collect();
    let sample_ns = stats::median(&calls);
    let fixed: Vec<f64> = processes.iter().map(|m| m.fixed_cost_ns).collect();
    let count = processes.first().map_or(1, |m| m.count);
    let in_epoch = processes.iter().all(|m| !m.doubles.is_empty());
    let location = location(
        kind,
        sample_ns,
        count,
        stats::median(&fixed),
        in_epoch,
        watched,
    );
    let per_process = kept(per_process, location);
    let centre = stats::median(&per_process.concat().concat());
    let process_medians = process_medians(&per_process);
    let (low, high) = match (per_process.len(), location) {
        (0 | 1, _) => stats::median_ci(&per_process.concat(), 0.95, RESAMPLES_FINAL, seed),
        (_, Location::Every) => stats::between_processes_ci(centre, &process_medians),
        // Processes keep from one epoch to hundreds: resample whole
        // processes, as the pooled median weighs them.
        (_, Location::Undisturbed { .. }) => {
            let clusters: Vec<Vec<f64>> = per_process.iter().map(|p| p.concat()).collect();
            stats::median_ci(&clusters, 0.95, RESAMPLES_FINAL, seed)
        }
    };
    Estimate {
        sample_ns,
        location,
        left_out: every - per_process.iter().flatten().map(Vec::len).sum::<usize>(),
        every_median,
        per_process,
        centre,
        process_medians,
        low,
        high,
    }
}

/// What a row that stands on its undisturbed epochs says of it: how many
/// it kept, how far above their median the median of every epoch lies,
/// and, when the core was watched, how many interruptions a sample
/// carries.
fn undisturbed_info(located: &Estimate) -> Option<String> {
    let Location::Undisturbed { carried, .. } = located.location else {
        return None;
    };
    let span = match located.sample_ns {
        ns if ns >= 1e6 => format!("{:.2} ms", ns / 1e6),
        ns if ns >= 1e3 => format!("{:.1} µs", ns / 1e3),
        ns => format!("{ns:.0} ns"),
    };
    let kept: usize = located.per_process.iter().flatten().map(Vec::len).sum();
    let carried = carried.map_or(String::new(), |c| {
        format!(
            "; a sample of {span} carries about {c:.2} of the measuring core's interruptions (watched before the run)"
        )
    });
    Some(format!(
        "the time is the median of the {kept} of {} epochs within {} µs per sample of their process's fastest, which neither an interruption nor a slower spell of the core reached; the median of every epoch is {:+.2}%{carried}",
        kept + located.left_out,
        gaps::THRESHOLD.as_micros(),
        (located.every_median / located.centre - 1.0) * 100.0
    ))
}

/// What widens an interval beyond the variation inside one run.
#[derive(Debug, Clone, Copy, Default)]
pub struct Drift {
    /// `--drift`: a stated relative sd, in percent (0: none).
    pub stated_pct: f64,
    /// Measured over earlier runs on this machine, when there were enough.
    pub measured: Option<RunDrift>,
}

/// Summarise the measurements of a row's processes, `located` from them
/// ([`locate`]), into its figures: statistics of the epochs it stands on,
/// the interval (from the processes, widened by the drift between runs),
/// and plain-words notes.
pub fn figures(
    processes: &[Measurement],
    located: &Estimate,
    stages: Stages,
    warmup_cap_ms: f64,
    seed: u64,
    drift: Drift,
) -> Figures {
    let m = &pool(processes);
    let per_op: Vec<Vec<f64>> = located.per_process.concat();
    let summary = stats::summarize(&per_op, RESAMPLES_FINAL, seed);
    let process_medians = located.process_medians.clone();
    let (low, high) = (located.low, located.high);
    let (low, high) = stats::widen_for_drift(summary.median, low, high, drift.stated_pct / 100.0);
    let (ci95_low, ci95_high) = match drift.measured {
        Some(d) => stats::widen(
            summary.median,
            low,
            high,
            stats::student_t_975(d.df) * d.rel_sd * summary.median.abs(),
        ),
        None => (low, high),
    };
    let earlier = drift.measured.and_then(|d| d.earlier);
    let departed = earlier.filter(|e| e.apart(ci95_low, ci95_high));
    let (ci95_low, ci95_high) = match earlier {
        Some(e) => e.reach(ci95_low, ci95_high),
        None => (ci95_low, ci95_high),
    };
    let between_process_sd_pct = match process_medians.len() {
        0 | 1 => 0.0,
        _ => stats::sample_sd(&process_medians) / summary.median.abs() * 100.0,
    };
    let raw: Vec<f64> = m.raw_per_op().into_iter().flatten().collect();
    let epochs = per_op.iter().map(Vec::len).sum::<usize>();
    let samples = m.blocks.iter().map(Vec::len).sum::<usize>();
    let pauses: Vec<f64> = m.pauses.iter().flatten().map(|&p| p as f64).collect();
    let pauses_per_sample = if pauses.is_empty() {
        0
    } else {
        stats::median(&pauses) as u64
    };
    // Within one clock step over the count of 0, or NaN (no samples): as
    // the empty guest. A program has no empty guest to be told apart from:
    // such an interval is just too wide to bound its time.
    let program = stages.kind == Kind::Program;
    let reaches_zero = ci95_low.is_nan() || ci95_low <= finest_ns(m);
    let indistinguishable = reaches_zero && !program;

    let mut notes = Vec::new();
    // Notes that need no action: in the JSON and the HTML, not the terminal.
    let mut info = Vec::new();
    if indistinguishable {
        notes.push("cannot be told apart from the empty guest".to_string());
    }
    if reaches_zero && program {
        notes.push("the interval reaches down to 0: too wide to bound the time (scattered runs, or a large --drift)".to_string());
    }
    if m.count_capped {
        notes.push(format!(
                "time does not grow with the count (pilot stopped at {}): the work may have been optimised away",
                m.count
            ));
    }
    if !m.warmup.settled {
        notes.push(format!(
            "warm-up did not settle within {warmup_cap_ms:.0} ms"
        ));
    }
    match &stages.compile_cache {
        CacheOutcome::Hit => info.push(format!(
            "compiled code loaded from the cache in {:.2} ms",
            stages.compile_ms
        )),
        CacheOutcome::Rebuilt(reason) => {
            notes.push(format!("cache entry refused ({reason}): compiled again"))
        }
        CacheOutcome::Off | CacheOutcome::Miss => {}
    }
    if let Some(d) = drift.measured {
        info.push(format!(
            "interval widened by a run-to-run drift of {:.2}% measured over {} earlier run(s) {}",
            d.rel_sd * 100.0,
            d.runs,
            if d.own {
                "of this benchmark"
            } else {
                "on this machine"
            }
        ));
    }
    if let Some(e) = departed {
        notes.push(format!(
            "{:+.2}% from the median of {} earlier run(s) of this benchmark, beyond this run's interval (the machine ran at another speed): the interval reaches back to them",
            e.departure(summary.median) * 100.0,
            e.runs
        ));
    }
    if let Some(line) = undisturbed_info(located) {
        info.push(line);
    }
    if pauses_per_sample > 0 {
        info.push(format!(
            "{pauses_per_sample} pause(s) per sample; {:.1} ns subtracted per pause/resume pair",
            m.pause_pair_ns
        ));
    }
    if summary.outliers.high_severe + summary.outliers.low_severe > epochs / 10 {
        notes.push(format!(
            "{} of {epochs} epochs are severe outliers: the machine was busy",
            summary.outliers.high_severe + summary.outliers.low_severe
        ));
    }

    Figures {
        count: m.count,
        samples,
        epochs,
        epochs_disturbed: located.left_out,
        undisturbed: matches!(located.location, Location::Undisturbed { .. }),
        ns_per_op: NsPerOp {
            median: summary.median,
            mean: summary.mean,
            stddev: summary.stddev,
            min: summary.min,
            max: summary.max,
            ci95_low,
            ci95_high,
            ci95_within_run_low: summary.ci95_low,
            ci95_within_run_high: summary.ci95_high,
        },
        raw_ns_per_op_median: stats::median(&raw),
        err_pct: summary.err_pct,
        ops_per_sec: (summary.median > 0.0).then(|| 1e9 / summary.median),
        fixed_cost_ns: m.fixed_cost_ns,
        outliers: summary.outliers.total(),
        outlier_counts: summary.outliers.clone(),
        warmup_ms: m.warmup.elapsed_ms,
        warmup_settled: m.warmup.settled,
        warmup_rounds: m.warmup.rounds,
        compile_ms: stages.compile_ms,
        compile_cache: stages.compile_cache.clone(),
        instantiate_ms: stages.instantiate_ms,
        sampling_ms: m.sampling_ms,
        checksum: m.checksum.map(|bits| Checksum::new(stages.kind, bits)),
        pauses_per_sample,
        pauses_total: m.total_pauses(),
        phases: None,
        fuel_per_op: None,
        indistinguishable_from_empty: indistinguishable,
        no_measurable_work: indistinguishable && m.count_capped,
        precision_reached: m.precision_reached,
        notes,
        info,
        processes: processes.len(),
        process_medians_ns: process_medians,
        between_process_sd_pct,
        run_drift_pct: drift.measured.map(|d| d.rel_sd * 100.0),
        run_drift_runs: drift.measured.map_or(0, |d| d.runs),
        earlier_runs_departure_pct: earlier.map(|e| e.departure(summary.median) * 100.0),
        callgrind: None,
        hardware_counters: None,
        raw_samples_ns: m.blocks.clone(),
        epochs_ns_per_op: per_op,
        epoch_classes: summary.classes.clone(),
        fixed_costs_ns: m.fixed_costs_ns.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn correction_subtracts_baseline_and_pauses_per_call() {
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
            precision_reached: false,
            count_capped: false,
        }
    }

    fn row(drift: Drift) -> Figures {
        row_of(&[process(103.5), process(103.7), process(103.9)], drift)
    }

    /// The figures of a core module's row measured in `processes`.
    fn row_of(processes: &[Measurement], drift: Drift) -> Figures {
        let stages = Stages {
            kind: Kind::Module,
            compile_ms: 0.0,
            compile_cache: CacheOutcome::Off,
            instantiate_ms: 0.0,
        };
        let located = locate(processes, Kind::Module, None, 1);
        figures(processes, &located, stages, 1_000.0, 1, drift)
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
        };
        // Three processes at 103.5–103.9 ns and earlier runs at 100 ns.
        let departed = row(drift(earlier(100.0)));
        let ns = &departed.ns_per_op;
        assert!(ns.ci95_low < 100.0 && ns.ci95_high > 103.9, "{ns:?}");
        let departure = departed.earlier_runs_departure_pct.expect("measured");
        assert!((departure - 3.7).abs() < 1e-9, "{departure}");
        assert!(
            departed
                .notes
                .iter()
                .any(|n| n.contains("+3.70% from the median of 12 earlier run(s)")),
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
        });
        assert_eq!(
            (agreed.ns_per_op.ci95_low, agreed.ns_per_op.ci95_high),
            (alone.ns_per_op.ci95_low, alone.ns_per_op.ci95_high)
        );
        assert!(!agreed.notes.iter().any(|n| n.contains("earlier run")));
        assert_eq!(alone.earlier_runs_departure_pct, None);
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
            };
            row_of(&processes, drift).notes
        };
        let departs = |notes: Vec<String>| notes.iter().any(|n| n.contains("earlier run"));
        // 0.01% away, within the earlier runs' own margin of 0.2%.
        assert!(!departs(notes(0.242_475)));
        // 1% away.
        assert!(departs(notes(0.240_1)));
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

        let stages = Stages {
            kind: Kind::Module,
            compile_ms: 0.0,
            compile_cache: CacheOutcome::Off,
            instantiate_ms: 0.0,
        };
        let row = figures(&processes, &located, stages, 1_000.0, 1, Drift::default());
        assert!(row.undisturbed);
        assert_eq!(row.ns_per_op.median, located.centre);
        assert_eq!(row.epochs + row.epochs_disturbed, 300);
        assert!(row.epochs >= 30 && row.epochs < 120, "{}", row.epochs);
        let said = row
            .info
            .iter()
            .find(|line| line.contains("neither an interruption nor a slower spell"))
            .unwrap_or_else(|| panic!("says what the time stands on: {:?}", row.info));
        assert!(
            said.contains(&format!("the median of the {} of 300 epochs", row.epochs)),
            "{said}"
        );
        assert!(
            said.contains("of the measuring core's interruptions"),
            "{said}"
        );
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
