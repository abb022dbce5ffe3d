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
//! thread (pinning, nice -20, SCHED_FIFO), `system` those that only read.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use serde::Serialize;

use crate::options::Output;
use crate::output::export::write_json;
use crate::util::exit::ExitStatus;

mod probes;
mod system;

use probes::{fifo, nice, pinning};
use system::{
    build, clock, clock_source, cores_available, cpu_model, governor, interruptions, load,
    perf_counters, perf_paranoid, turbo, virtual_machine,
};

/// How a finding bears on measurements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Good for measuring.
    Ok,
    /// Would disturb measurements (or make them slower or coarser).
    Warn,
    /// A neutral fact.
    Info,
}

impl Status {
    /// The word shown in the first column of [`render`].
    pub fn label(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Info => "info",
        }
    }
}

/// One check's outcome: a topic, how it bears on measurements, what was
/// seen, and what to do about it when there is something to do.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub topic: String,
    pub status: Status,
    pub detail: String,
    pub fix: Option<String>,
}

impl Finding {
    fn new(topic: &str, status: Status, detail: impl Into<String>) -> Self {
        Finding {
            topic: topic.to_string(),
            status,
            detail: detail.into(),
            fix: None,
        }
    }

    fn ok(topic: &str, detail: impl Into<String>) -> Self {
        Self::new(topic, Status::Ok, detail)
    }

    fn warn(topic: &str, detail: impl Into<String>) -> Self {
        Self::new(topic, Status::Warn, detail)
    }

    fn info(topic: &str, detail: impl Into<String>) -> Self {
        Self::new(topic, Status::Info, detail)
    }

    fn not_exposed(topic: &str, why: &str) -> Self {
        Self::info(topic, format!("not exposed ({why})"))
    }

    fn fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }
}

const CPU: &str = "cpu";
const CORES: &str = "cores";
const PINNING: &str = "pinning";
const NICE: &str = "nice -20";
const FIFO: &str = "SCHED_FIFO";
const CLOCK_SOURCE: &str = "clock source";
const CLOCK: &str = "clock";
const GOVERNOR: &str = "governor";
const TURBO: &str = "turbo";
const VM: &str = "virtual machine";
const LOAD: &str = "load";
const INTERRUPTIONS: &str = "interruptions";
const PERF: &str = "perf counters";
const PARANOID: &str = "perf_event_paranoid";
const BUILD: &str = "build";

/// Every topic [`examine`] reports, in its order.
pub const TOPICS: [&str; 15] = [
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
];

const SYS_CPU: &str = "/sys/devices/system/cpu";
const CLOCKSOURCE: &str = "/sys/devices/system/clocksource/clocksource0";

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

// ---------------------------------------------------------------------------
// Reading what the OS exposes.

/// The trimmed contents of a small text file, or `None` when it cannot be read.
fn read_text(path: impl AsRef<Path>) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// Parse a kernel CPU list such as `0-3,5,7-8`.
fn parse_cpu_list(text: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let a: usize = a.trim().parse().ok()?;
                let b: usize = b.trim().parse().ok()?;
                if a > b {
                    return None;
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(part.trim().parse().ok()?),
        }
    }
    Some(cpus)
}

/// Write CPU ids compactly, e.g. `0-3,5`.
fn format_cpu_list(ids: &[usize]) -> String {
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            ids[i].to_string()
        } else {
            format!("{}-{}", ids[i], ids[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// Run `probe` on a short-lived thread of its own, so that whatever it asks
/// the OS for (a pin, a priority) never sticks to the calling thread.
/// `None` when the thread cannot be spawned or panics.
fn on_probe_thread<T: Send + 'static>(probe: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    std::thread::Builder::new()
        .name("doctor-probe".into())
        .spawn(probe)
        .ok()?
        .join()
        .ok()
}

/// Name of an errno value, e.g. `EACCES`.
fn errno_name(code: i32) -> String {
    let name = match code {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::EACCES => "EACCES",
        libc::EBUSY => "EBUSY",
        libc::ENODEV => "ENODEV",
        libc::EINVAL => "EINVAL",
        libc::ENOSYS => "ENOSYS",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::E2BIG => "E2BIG",
        libc::EMFILE => "EMFILE",
        _ => return format!("errno {code}"),
    };
    name.to_string()
}

/// A thread-priority error in plain words (errno names where there is one).
fn priority_error(e: &thread_priority::Error) -> String {
    match e {
        thread_priority::Error::OS(code) => errno_name(*code),
        other => other.to_string(),
    }
}

/// How to name this binary in a `setcap` fix.
fn this_binary() -> String {
    std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "target/release/host".to_string())
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
