//! The stop rule of `host run`: what one process takes of a row
//! ([`share`]) and when a row has enough ([`enough`]). By default a row
//! takes [`PROCESS_BLOCKS`] blocks per process (a program, [`PROGRAM_SHARE`]
//! of iterations), in at least [`MIN_PROCESSES`] processes, until the
//! interval over the processes is within `--precision` or the row has used
//! its budget (compile included), at most [`MAX_PROCESSES`]. `--samples`
//! and `--time` are shared out over [`MIN_PROCESSES`] processes;
//! `--processes` fixes the number.

use std::time::Duration;

use crate::analysis::estimate;
use crate::analysis::stats;
use crate::analysis::summary::finest_ns;
use crate::benchmark::parent::row::RowState;
use crate::benchmark::worker::sequence::Share;
use crate::options::{Settings, StopRule};
use crate::platform::gaps::Interruptions;
use crate::results::Figures;

/// Fewest processes a row is measured in (by default), and the number
/// `--samples` and `--time` are shared out over.
pub const MIN_PROCESSES: usize = 5;
/// Most processes a row is measured in (by default).
pub const MAX_PROCESSES: usize = 30;
/// Blocks one process takes of a row (by default).
pub const PROCESS_BLOCKS: usize = 4;
/// How long one process samples a program (by default).
pub const PROGRAM_SHARE: Duration = Duration::from_millis(100);

/// How many processes a row is measured in when the user fixed it or the
/// rule does.
fn fixed_processes(settings: &Settings) -> Option<usize> {
    match (settings.processes, settings.stop) {
        (Some(p), _) => Some(p.get()),
        (None, StopRule::Samples(n)) => Some(MIN_PROCESSES.min(n.get())),
        (None, StopRule::Time(_)) => Some(MIN_PROCESSES),
        (None, StopRule::Precision { .. }) => None,
    }
}

/// What process `process` (from 0) takes of a row (a program when
/// `program`).
pub fn share(settings: &Settings, program: bool, process: usize) -> Share {
    let processes = fixed_processes(settings).unwrap_or(MIN_PROCESSES);
    match settings.stop {
        StopRule::Samples(n) => {
            let n = n.get();
            let base = n / processes;
            Share::Samples((base + usize::from(process < n % processes)).max(1))
        }
        StopRule::Time(t) => Share::Time(t / processes as u32),
        StopRule::Precision { .. } if program => Share::Time(PROGRAM_SHARE),
        StopRule::Precision { .. } => Share::Blocks(PROCESS_BLOCKS),
    }
}

/// Whether a row has enough after `processes` processes; `watched` and
/// `seed` as its figures will be located.
pub fn enough(
    settings: &Settings,
    state: &RowState,
    processes: usize,
    watched: Option<&Interruptions>,
    seed: u64,
) -> bool {
    if let Some(fixed) = fixed_processes(settings) {
        return processes >= fixed;
    }
    let StopRule::Precision { pct, budget } = settings.stop else {
        return true;
    };
    if processes >= MAX_PROCESSES {
        return true;
    }
    if processes < MIN_PROCESSES {
        return false;
    }
    // The interval the row's figures will have.
    let located = estimate::locate(&state.measurements(), state.kind(), watched, seed);
    let (centre, low, high) = (located.centre, located.low, located.high);
    let half = (high - low) / 2.0;
    // Within a step of the clock over the count is as precise as it gets
    // (an empty guest's median is 0).
    let floor = state
        .samples
        .first()
        .map_or(0.0, |s| finest_ns(&s.measurement));
    stats::relative_half_width_pct(centre, low, high) <= pct
        || half <= floor
        || state.spent >= budget
}

/// Whether the interval reached `--precision` (the precision rule only).
pub fn precision_reached(settings: &Settings, f: &Figures) -> bool {
    match settings.stop {
        StopRule::Precision { pct, .. } => {
            stats::relative_half_width_pct(
                f.ns_per_op.median,
                f.ns_per_op.ci95_low,
                f.ns_per_op.ci95_high,
            ) <= pct
        }
        _ => false,
    }
}
