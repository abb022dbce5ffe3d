//! The stop rule of `host run`: what one process takes of a row
//! ([`share`]) and when a row has enough ([`enough`]). By default a row
//! takes [`PROCESS_BLOCKS`] blocks per process (a program, [`PROGRAM_SHARE`]
//! of iterations), in at least [`MIN_PROCESSES`] processes, until the
//! interval over the processes is within `--precision` or the row has used
//! its budget (compile included), at most [`MAX_PROCESSES`]. A program under
//! an engine library, which makes an engine and compiles on every
//! iteration, takes [`LIBRARY_SHARE`] per process and has
//! [`LIBRARY_BUDGET`], so that it reaches the precision a built-in engine
//! reaches. `--samples` and `--time` are shared out over [`MIN_PROCESSES`]
//! processes; `--processes` fixes the number. [`enough`] says what stopped
//! a row ([`StopReason`]).

use std::time::Duration;

use crate::analysis::estimate;
use crate::analysis::stats;
use crate::analysis::summary::finest_ns;
use crate::benchmark::parent::row::RowState;
use crate::benchmark::protocol::ProcessMeasurement;
use crate::benchmark::protocol::Share;
use crate::options::{Settings, StopRule};
use crate::platform::gaps::Interruptions;
use crate::results::{Figures, Note, Row, StopReason};

/// Fewest processes a row is measured in (by default), and the number
/// `--samples` and `--time` are shared out over.
pub const MIN_PROCESSES: usize = 5;
/// Most processes a row is measured in (by default).
pub const MAX_PROCESSES: usize = 30;
/// Blocks one process takes of a row (by default).
pub const PROCESS_BLOCKS: usize = 4;
/// How long one process samples a program (by default).
pub const PROGRAM_SHARE: Duration = Duration::from_millis(100);
/// How long one process samples a program under an engine library (by
/// default): each iteration makes an engine and compiles (about 90 ms for
/// wasmtime's bench-api on a small program), so a process takes about ten.
pub const LIBRARY_SHARE: Duration = Duration::from_secs(1);
/// The time cap of a program under an engine library (by default), for
/// [`crate::options::settings::DEFAULT_BUDGET`]: room for a few hundred
/// iterations that each compile (Sightglass takes 100).
pub const LIBRARY_BUDGET: Duration = Duration::from_secs(30);

/// Whether `row` runs under an engine library.
pub fn under_library(settings: &Settings, row: &Row) -> bool {
    settings
        .engines
        .get(row.engine_set)
        .is_some_and(|e| e.library.is_some())
}

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
/// `program`, under an engine library when `library`).
pub fn share(settings: &Settings, program: bool, library: bool, process: usize) -> Share {
    let processes = fixed_processes(settings).unwrap_or(MIN_PROCESSES);
    match settings.stop {
        StopRule::Samples(n) => {
            let n = n.get();
            let base = n / processes;
            Share::Samples((base + usize::from(process < n % processes)).max(1))
        }
        StopRule::Time(t) => Share::Time(t / processes as u32),
        StopRule::Precision { .. } if program && library => Share::Time(LIBRARY_SHARE),
        StopRule::Precision { .. } if program => Share::Time(PROGRAM_SHARE),
        StopRule::Precision { .. } => Share::Blocks(PROCESS_BLOCKS),
    }
}

/// What stops a row after `processes` processes, if it has enough;
/// `watched` and `seed` as its figures will be located.
pub fn enough(
    settings: &Settings,
    state: &RowState,
    processes: usize,
    watched: Option<&Interruptions>,
    seed: u64,
) -> Option<StopReason> {
    if let Some(fixed) = fixed_processes(settings) {
        return (processes >= fixed).then_some(StopReason::Asked);
    }
    let StopRule::Precision { pct, budget } = settings.stop else {
        return Some(StopReason::Asked);
    };
    if processes < MIN_PROCESSES.min(MAX_PROCESSES) {
        return None;
    }
    let budget = match state.program() && under_library(settings, &state.row) {
        true => budget.max(LIBRARY_BUDGET),
        false => budget,
    };
    // The interval the row's figures will have.
    let located = estimate::locate(&state.measurements(), state.kind(), watched, seed);
    let (centre, low, high) = (located.centre, located.low, located.high);
    let half = (high - low) / 2.0;
    // Within a step of the clock over the count is as precise as it gets
    // (an empty guest's median is 0).
    let floor = state
        .processes
        .first()
        .map_or(0.0, |s| finest_ns(&s.measurement));
    if stats::relative_half_width_pct(centre, low, high) <= pct || half <= floor {
        Some(StopReason::PrecisionReached)
    } else if processes >= MAX_PROCESSES {
        Some(StopReason::IterationCap)
    } else if state.spent >= budget {
        Some(StopReason::TimeCap)
    } else {
        None
    }
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

/// Say on a program row under an engine library what stopped it, after how
/// many iterations in how many processes: among its facts when the
/// precision was reached, among its notes when a cap stopped it first.
pub fn library_note(settings: &Settings, f: &mut Figures, measured: &[ProcessMeasurement]) {
    let iterations: usize = measured.iter().map(|s| s.measurement.blocks.len()).sum();
    let processes = measured.len();
    let within = stats::relative_half_width_pct(
        f.ns_per_op.median,
        f.ns_per_op.ci95_low,
        f.ns_per_op.ci95_high,
    );
    let (goal, budget) = match settings.stop {
        StopRule::Precision { pct, budget } => (pct, budget.max(LIBRARY_BUDGET)),
        _ => return,
    };
    let taken = format!(
        "after {iterations} iterations in {processes} processes (each makes an engine and compiles)"
    );
    match f.stopped_by {
        Some(StopReason::PrecisionReached) => f.info.add(Note::Text(format!(
            "engine library: precision reached (±{within:.1}%, asked ±{goal}%) {taken}"
        ).into())),
        Some(StopReason::TimeCap) => f.notes.add(Note::Text(format!(
            "engine library: stopped by the time cap ({} s) at ±{within:.1}% (asked ±{goal}%) {taken}",
            budget.as_secs()
        ).into())),
        Some(StopReason::IterationCap) => f.notes.add(Note::Text(format!(
            "engine library: stopped by the iteration cap ({MAX_PROCESSES} processes) at ±{within:.1}% (asked ±{goal}%) {taken}"
        ).into())),
        Some(StopReason::Asked) | None => {}
    }
}
