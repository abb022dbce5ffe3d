//! `host doctor`: what this machine offers a benchmark, and what would
//! disturb its measurements.
//!
//! Every check reads what the OS exposes (sysfs, procfs, a few syscalls) and
//! says it in one line, with a one-line fix where there is one. A file that
//! is missing, as is usual in a VM or a container, is a neutral "not
//! exposed", never an error. Whatever needs asking the OS for (pinning, nice
//! -20, SCHED_FIFO, a counter) is tried on a short-lived thread of its own:
//! the calling thread is never pinned or reprioritised. This module changes
//! no setting of the machine and measures no workload; it does not decide
//! anything for `host run` either ([`crate::platform::thread`] prepares the measuring
//! thread on its own).
//!
//! Here: the findings, the order of the checks and how they are printed;
//! `probes` holds the checks that ask the OS for something on a probe
//! thread (pinning, nice -20, SCHED_FIFO), `system` those that only read,
//! `drift` the one that reads the store of kept runs.

use std::fmt::Write as _;

use crate::options::Output;
use crate::output::export::write_json;
use crate::util::exit::ExitStatus;

mod drift;
mod finding;
mod probes;
mod system;

use finding::{
    BUILD, CLOCK, CLOCK_SOURCE, CORES, CPU, DRIFT, ENGINES, FIFO, GOVERNOR, INTERRUPTIONS, LOAD,
    NICE, PARANOID, PERF, PINNING, TURBO, V8, VM,
};
pub use finding::{Finding, Status};

use probes::{fifo, nice, pinning};
use system::{
    build, clock, clock_source, cores_available, cpu_model, engines, governor, interruptions, load,
    perf_counters, perf_paranoid, turbo, v8, virtual_machine,
};

/// Every topic [`examine`] reports, in its order.
pub const TOPICS: [&str; 18] = [
    CPU,
    CORES,
    PINNING,
    NICE,
    FIFO,
    CLOCK_SOURCE,
    CLOCK,
    GOVERNOR,
    TURBO,
    VM,
    LOAD,
    INTERRUPTIONS,
    PERF,
    PARANOID,
    BUILD,
    ENGINES,
    V8,
    DRIFT,
];

/// Run every check, in the order of [`TOPICS`]. Takes a fraction of a
/// second (the clock calibration dominates).
pub fn examine() -> Vec<Finding> {
    let cores: Vec<usize> = core_affinity::get_core_ids()
        .unwrap_or_default()
        .into_iter()
        .map(|c| c.id)
        .collect();
    vec![
        cpu_model(),
        cores_available(&cores),
        pinning(&cores),
        nice(),
        fifo(),
        clock_source(),
        clock(),
        governor(),
        turbo(),
        virtual_machine(),
        load(cores.len()),
        interruptions(&cores),
        perf_counters(),
        perf_paranoid(),
        build(),
        engines(),
        v8(),
        drift::drift(),
    ]
}

/// One line per finding: status, topic and detail in aligned columns, plus
/// an indented `fix: ...` line under the detail when there is a fix.
pub fn render(findings: &[Finding]) -> String {
    let status_width = [Status::Ok, Status::Warn, Status::Info]
        .iter()
        .map(|s| s.label().len())
        .max()
        .unwrap_or(0);
    let topic_width = findings
        .iter()
        .map(|f| f.topic.chars().count())
        .max()
        .unwrap_or(0);
    let indent = status_width + 2 + topic_width + 2;
    let mut out = String::new();
    for f in findings {
        let line = format!(
            "{:<status_width$}  {:<topic_width$}  {}",
            f.status.label(),
            f.topic,
            f.detail
        );
        let _ = writeln!(out, "{}", line.trim_end());
        if let Some(fix) = &f.fix {
            let _ = writeln!(out, "{:indent$}fix: {fix}", "");
        }
    }
    out
}

/// `host doctor`: print the findings, as a table or as JSON.
pub fn doctor(json: bool) -> anyhow::Result<ExitStatus> {
    let findings = examine();
    if json {
        write_json(&findings, &Output::Stdout)?;
    } else {
        print!("{}", render(&findings));
    }
    Ok(ExitStatus::Success)
}

#[cfg(test)]
mod tests;
