//! Which epochs a row's time stands on ([`locate`]: those that neither an
//! interruption nor a slower spell of the core reached, or, for programs and
//! calls that are mostly fixed cost, every epoch), their median, and the
//! interval the processes give it: the row's [`Estimate`]. The stop rule
//! and the final figures both take it from here. Pure arithmetic: no I/O,
//! no clocks.

use crate::analysis::epochs::{EPOCH_NS, corrected_per_op};
use crate::analysis::stats;
use crate::guest::Kind;
use crate::platform::gaps::{self, Interruptions};
use crate::results::Measurement;

/// The median per-op time of each process, from its corrected blocks.
pub fn process_medians(per_process: &[Vec<Vec<f64>>]) -> Vec<f64> {
    per_process
        .iter()
        .map(|blocks| stats::median(&blocks.concat()))
        .collect()
}

/// Largest fraction of a sample the fixed cost of its call may take for a row
/// to stand on its fastest epochs ([`Location::Undisturbed`]) when the
/// fixed cost is measured in pairs before each block. Measured so, it spans
/// the core's states and is subtracted from every sample; the fastest epochs
/// come from its fastest state, in which the call too is quicker. A spell
/// that slows the call path by 10% then moves their per-op time by at most
/// 1%.
pub const FIXED_FRACTION: f64 = 0.1;

/// The same bound when every epoch measures the fixed cost of its own calls
/// (a short call, with doubles: see [`crate::analysis::epochs::corrected`]). The state of the core
/// is then the same for the fixed cost as for the work; what is left is
/// noise: an epoch's per-op time is a difference of two means, whose noise
/// grows as the work shrinks against the call. The fastest of noisy epochs
/// would be their noise, so a call that is mostly fixed cost (the empty
/// guest) stands on every epoch, where the noise averages out. For xor at a
/// count of 1000 (a fixed cost of 12–17% of a sample), the kept epochs of a
/// run had a standard deviation of 0.2–0.8%.
pub const FIXED_FRACTION_IN_EPOCH: f64 = 0.5;

/// Which epochs a row's time is the median of.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Location {
    /// Every epoch: a program (whose whole run is the time, as the engine
    /// without a harness runs it), or samples so short that the fixed cost
    /// of their call weighs more than [`FIXED_FRACTION`] of them (more than
    /// [`FIXED_FRACTION_IN_EPOCH`] when each epoch measures it).
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
    /// The fastest epoch of each round of a comparison: the figure its
    /// ratio is made of ([`locate_rounds`], [`crate::analysis::compare`]).
    RoundMinima,
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
    let fraction = match in_epoch {
        true => FIXED_FRACTION_IN_EPOCH,
        false => FIXED_FRACTION,
    };
    let light = fixed_ns <= fraction * sample_ns;
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

/// The epochs of each process (`per_process`: processes, blocks, epochs)
/// that `location` keeps, in their blocks and order.
pub fn kept(per_process: Vec<Vec<Vec<f64>>>, location: Location) -> Vec<Vec<Vec<f64>>> {
    let tolerance_ns = match location {
        Location::Every => return per_process,
        Location::RoundMinima => return round_minima(per_process),
        Location::Undisturbed { tolerance_ns, .. } => tolerance_ns,
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

/// The fastest epoch of each block (a comparison's round), where it has a
/// finite one.
fn round_minima(per_process: Vec<Vec<Vec<f64>>>) -> Vec<Vec<Vec<f64>>> {
    per_process
        .into_iter()
        .map(|rounds| {
            rounds
                .into_iter()
                .map(|round| least_of(&round).into_iter().collect())
                .collect()
        })
        .collect()
}

/// The least-disturbed per-op time of a round (its smallest finite epoch),
/// if it has one: what a comparison's ratio and its rows are made of.
pub fn least_of(round: &[f64]) -> Option<f64> {
    round
        .iter()
        .copied()
        .filter(|x| x.is_finite())
        .reduce(f64::min)
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
    /// The interval over the processes: Student's t over the log process
    /// medians, around `centre`, for every epoch; for the undisturbed
    /// epochs, of which one process keeps one and another hundreds, a
    /// bootstrap that draws whole processes and takes the median of their
    /// kept epochs pooled. With one process, a bootstrap over its blocks.
    pub low: f64,
    pub high: f64,
    /// The median length of a sample (one call), ns.
    pub sample_ns: f64,
}

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
    let sample_ns = median_call_ns(processes);
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
    estimate_at(processes, location, sample_ns, seed)
}

/// The estimate of one variant of a comparison, whose blocks are its
/// rounds: the median of the fastest epoch of every round, the very figures
/// the comparison's ratio is made of, so that the ratio of two variants'
/// rows is the ratio the verdict gives.
pub fn locate_rounds(processes: &[Measurement], seed: u64) -> Estimate {
    let sample_ns = median_call_ns(processes);
    estimate_at(processes, Location::RoundMinima, sample_ns, seed)
}

/// The median length of one call over every sample of `processes`, ns.
fn median_call_ns(processes: &[Measurement]) -> f64 {
    let calls: Vec<f64> = processes
        .iter()
        .flat_map(|m| m.blocks.iter().flatten().copied())
        .collect();
    stats::median(&calls)
}

/// The estimate over the epochs of `processes` that `location` keeps.
fn estimate_at(
    processes: &[Measurement],
    location: Location,
    sample_ns: f64,
    seed: u64,
) -> Estimate {
    let per_process: Vec<Vec<Vec<f64>>> = processes.iter().map(corrected_per_op).collect();
    let every: usize = per_process.iter().flatten().map(Vec::len).sum();
    let every_median = stats::median(&per_process.concat().concat());
    let per_process = kept(per_process, location);
    let centre = stats::median(&per_process.concat().concat());
    let process_medians = process_medians(&per_process);
    let (low, high) = match (per_process.len(), location) {
        (0 | 1, _) => stats::median_ci(&per_process.concat(), 0.95, stats::RESAMPLES_FINAL, seed),
        (_, Location::Every) => stats::between_processes_ci_log(centre, &process_medians),
        // Processes keep from one epoch to hundreds (or a round each):
        // resample whole processes, as the pooled median weighs them.
        (_, Location::Undisturbed { .. } | Location::RoundMinima) => {
            let clusters: Vec<Vec<f64>> = per_process.iter().map(|p| p.concat()).collect();
            stats::median_ci(&clusters, 0.95, stats::RESAMPLES_FINAL, seed)
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
