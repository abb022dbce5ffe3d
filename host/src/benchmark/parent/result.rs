//! A row's result from what its processes measured: the figures (located,
//! summarised by [`crate::analysis::summary`]), with what the counting
//! passes added, a program's phases and a workload's start. Written once for `host run` and
//! `host compare`.

use std::time::Duration;

use crate::analysis::estimate::Estimate;
use crate::analysis::stats;
use crate::analysis::summary::{self, Drift, Preparation, phase_stats, start_phase};
use crate::benchmark::parent::row::{Compiled, Counts, RowState};
use crate::benchmark::parent::stop::{library_note, precision_reached, under_library};
use crate::benchmark::protocol::{ProcessMeasurement, StartMeasurement};
use crate::guest::name::file_stem;
use crate::guest::program::TimedRegion;
use crate::guest::program::output::expected_files;
use crate::guest::runtime::wasmtime::cache::CacheOutcome;
use crate::options::Runtime;
use crate::options::Settings;
use crate::results::{BenchResult, Figures, Foreign, Measurement, Note, Notes, Phases, Start};
use crate::util::error::one_line;

/// The figures of a row from every process's measurement, `located` from them:
/// the time, and the fuel count when a process took it.
pub fn figures(
    processes: &[ProcessMeasurement],
    located: &Estimate,
    compiled: &Compiled,
    warmup_cap: Duration,
    seed: u64,
    drift: Drift,
) -> Figures {
    let measurements: Vec<Measurement> = processes.iter().map(|s| s.measurement.clone()).collect();
    let instantiate: Vec<f64> = processes.iter().map(|s| s.instantiate_ms).collect();
    let (compile_ms, compile_cache) = compile_phase(processes, compiled);
    let stages = Preparation {
        kind: compiled.kind,
        compile_ms,
        compile_cache,
        instantiate_ms: stats::median(&instantiate),
    };
    let mut figures = summary::figures(
        &measurements,
        located,
        stages,
        warmup_cap.as_secs_f64() * 1e3,
        seed,
        drift,
    );
    say_why_processes_differ(compiled.runtime, &mut figures.notes);
    figures.start = start(processes, seed);
    if let Some(why) = processes
        .iter()
        .find_map(|s| s.start.as_ref()?.failed.as_ref())
    {
        let why = Foreign::from(why.as_str());
        figures.notes.add(Note::Text(
            why.after("fresh instances' start not measured: "),
        ));
    }
    figures.fuel_per_op = processes.iter().find_map(|s| s.fuel_per_op);
    figures.costs = crate::results::Costs {
        peak_memory_bytes: processes.iter().filter_map(|s| s.peak_memory_bytes).max(),
        peak_rss_bytes: processes.iter().filter_map(|s| s.peak_rss_bytes).max(),
        code_bytes: compiled
            .costs
            .code_bytes
            .or_else(|| processes.iter().find_map(|s| s.code_bytes)),
        ..compiled.costs
    };
    figures
}

/// How the row's fresh instances started, over every process that made
/// some: each process's values a block.
fn start(processes: &[ProcessMeasurement], seed: u64) -> Option<Start> {
    let starts: Vec<&StartMeasurement> = (processes.iter())
        .filter_map(|s| s.start.as_deref())
        .filter(|s| !s.instantiate_ns.is_empty())
        .collect();
    if starts.is_empty() {
        return None;
    }
    let blocks = |phase: fn(&StartMeasurement) -> &Vec<f64>| -> Vec<Vec<f64>> {
        starts.iter().map(|s| phase(s).clone()).collect()
    };
    Some(Start {
        instantiate_ns: start_phase(&blocks(|s| &s.instantiate_ns), seed),
        first_call_ns: start_phase(&blocks(|s| &s.first_call_ns), seed.wrapping_add(1)),
    })
}

/// A row's compile phase and where its code came from: the runtime's own
/// compile, timed in the processes that ran it (their median; V8's, which
/// no cache of the host holds), else the parent's compile of the file (or
/// its load from the compile cache).
fn compile_phase(processes: &[ProcessMeasurement], compiled: &Compiled) -> (f64, CacheOutcome) {
    let own: Vec<f64> = processes.iter().filter_map(|s| s.compile_ms).collect();
    match own.is_empty() {
        true => (compiled.compile_ms, compiled.cache.clone()),
        false => (stats::median(&own), CacheOutcome::Off),
    }
}

/// Give a note that processes disagree the reason `runtime`'s line of the
/// engine list holds, if any.
fn say_why_processes_differ(runtime: Runtime, notes: &mut Notes) {
    let Some(why) = runtime.entry().varies else {
        return;
    };
    for note in &mut notes.0 {
        if let Note::ProcessesDisagree { runtime_varies, .. } = note {
            *runtime_varies = Some(why);
        }
    }
}

/// The result of a finished row of a run.
pub fn result_of(
    settings: &Settings,
    state: &RowState,
    located: &Estimate,
    seed: u64,
    drift: Drift,
) -> BenchResult {
    let compiled = match (&state.error, &state.compiled) {
        (None, Ok(compiled)) => compiled,
        (error, _) => {
            let error = error.as_ref().map_or_else(String::new, |e| one_line(e));
            return BenchResult::failed(&state.row, state.known_kind(), error);
        }
    };
    let mut figures = figures(
        &state.processes,
        located,
        compiled,
        settings.warmup_cap,
        seed,
        drift,
    );
    figures.precision_reached = precision_reached(settings, &figures);
    figures.stopped_by = state.stopped;
    figures.callgrind = state.counts.map(|c| c.per_op);
    match state
        .processes
        .iter()
        .find_map(|s| s.hardware_counters.as_ref())
    {
        Some(Ok(counts)) => figures.hardware_counters = Some(*counts),
        Some(Err(why)) => figures.notes.add(Note::HardwareCountersUnavailable {
            why: why.clone().into(),
        }),
        None => {}
    }
    if compiled.program {
        program_figures(&mut figures, &state.processes, state.counts, compiled);
        output_checked(&mut figures, &state.row.path);
        if under_library(settings, &state.row) {
            library_note(settings, &mut figures, &state.processes);
        }
    }
    BenchResult::measured(&state.row, compiled.kind, figures)
}

/// A measured program's note of the expected-output files beside it: each
/// iteration's output was checked against them (a mismatch fails the row).
fn output_checked(figures: &mut Figures, path: &std::path::Path) {
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    let files = expected_files(folder, &file_stem(path));
    if !files.is_empty() {
        figures.notes.add(Note::OutputChecked { files });
    }
}

/// The phases of a program, over every process's iterations (`processes`),
/// with Callgrind's `counts` when taken.
pub fn program_figures(
    figures: &mut Figures,
    processes: &[ProcessMeasurement],
    counts: Option<Counts>,
    compiled: &Compiled,
) {
    let programs: Vec<_> = processes
        .iter()
        .filter_map(|s| s.program.as_ref())
        .collect();
    let instantiate: Vec<f64> = programs
        .iter()
        .flat_map(|p| p.instantiate_ns.iter().copied())
        .collect();
    let execute: Vec<f64> = processes
        .iter()
        .flat_map(|s| s.measurement.blocks.iter().flatten().copied())
        .collect();
    let region = programs
        .last()
        .map_or(TimedRegion::WholeStart, |p| p.region);
    match region {
        TimedRegion::WholeStart => figures.notes.add(Note::TimedOverWholeStart),
        TimedRegion::WholeStartNoEnd => figures.notes.add(Note::TimedOverWholeStartNoEnd),
        TimedRegion::StartToEnd => {}
    }

    // An engine library compiles every iteration: its median, else the
    // one compile of the runtime or of the parent.
    let compile_ns: Vec<f64> = programs
        .iter()
        .flat_map(|p| p.compile_ns.iter().copied())
        .collect();
    figures.phases = Some(Phases {
        compile_ms: match compile_ns.is_empty() {
            true => compile_phase(processes, compiled).0,
            false => stats::median(&compile_ns) / 1e6,
        },
        instantiate_ns: phase_stats(&instantiate),
        execute_ns: phase_stats(&execute),
        timed_region: region,
        instantiate_callgrind: counts.and_then(|c| c.instantiate),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disagree() -> Notes {
        Notes(vec![Note::ProcessesDisagree {
            low: 143.0,
            high: 260.0,
            processes: 5,
            groups: Vec::new(),
            runtime_varies: None,
        }])
    }

    /// Under wasmi, processes that disagree are said to, with why; under
    /// wasmtime, only that they disagree.
    #[test]
    fn a_runtime_known_to_vary_between_processes_says_why() {
        let mut wasmi = disagree();
        say_why_processes_differ(Runtime::Wasmi, &mut wasmi);
        let words = wasmi.0[0].words().into_unescaped();
        assert!(words.contains("processes disagree"), "{words}");
        assert!(words.contains("where its interpreter's code"), "{words}");
        let mut wasmtime = disagree();
        say_why_processes_differ(Runtime::Wasmtime, &mut wasmtime);
        assert!(!wasmtime.0[0].words().unescaped().contains("interpreter"));
    }
}
