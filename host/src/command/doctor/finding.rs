//! The findings of `host doctor` (a topic, a status, a detail, a fix),
//! their topics, and the small readers and probes the checks share.

use std::path::Path;

use nix::errno::Errno;
use serde::Serialize;

use crate::util::fs::read_system_text;

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
    /// The word shown in the first column of [`crate::command::doctor::render`].
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
    pub(super) fn new(topic: &str, status: Status, detail: impl Into<String>) -> Self {
        Finding {
            topic: topic.to_string(),
            status,
            detail: detail.into(),
            fix: None,
        }
    }

    pub(super) fn ok(topic: &str, detail: impl Into<String>) -> Self {
        Self::new(topic, Status::Ok, detail)
    }

    pub(super) fn warn(topic: &str, detail: impl Into<String>) -> Self {
        Self::new(topic, Status::Warn, detail)
    }

    pub(super) fn info(topic: &str, detail: impl Into<String>) -> Self {
        Self::new(topic, Status::Info, detail)
    }

    pub(super) fn not_exposed(topic: &str, why: &str) -> Self {
        Self::info(topic, format!("not exposed ({why})"))
    }

    pub(super) fn fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }
}

pub(super) const CPU: &str = "cpu";
pub(super) const CORES: &str = "cores";
pub(super) const PINNING: &str = "pinning";
pub(super) const NICE: &str = "nice -20";
pub(super) const FIFO: &str = "SCHED_FIFO";
pub(super) const CLOCK_SOURCE: &str = "clock source";
pub(super) const CLOCK: &str = "clock";
pub(super) const GOVERNOR: &str = "governor";
pub(super) const TURBO: &str = "turbo";
pub(super) const VM: &str = "virtual machine";
pub(super) const LOAD: &str = "load";
pub(super) const INTERRUPTIONS: &str = "interruptions";
pub(super) const PERF: &str = "perf counters";
pub(super) const PARANOID: &str = "perf_event_paranoid";
pub(super) const BUILD: &str = "build";
pub(super) const ENGINES: &str = "engines";
pub(super) const V8: &str = "v8";
pub(super) const DRIFT: &str = "drift";

pub(super) const SYS_CPU: &str = "/sys/devices/system/cpu";
pub(super) const CLOCKSOURCE: &str = "/sys/devices/system/clocksource/clocksource0";

// ---------------------------------------------------------------------------
// Reading what the OS exposes.

/// The trimmed contents of a small text file, or `None` when it cannot be read.
pub(super) fn read_text(path: impl AsRef<Path>) -> Option<String> {
    read_system_text(path).map(|s| s.trim().to_string())
}

/// Parse a kernel CPU list such as `0-3,5,7-8`.
pub(super) fn parse_cpu_list(text: &str) -> Option<Vec<usize>> {
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
pub(super) fn format_cpu_list(ids: &[usize]) -> String {
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
pub(super) fn on_probe_thread<T: Send + 'static>(
    probe: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    std::thread::Builder::new()
        .name("doctor-probe".into())
        .spawn(probe)
        .ok()?
        .join()
        .ok()
}

/// Name of an errno value, e.g. `EACCES`.
pub(super) fn errno_name(code: i32) -> String {
    match Errno::from_raw(code) {
        Errno::UnknownErrno => format!("errno {code}"),
        known => format!("{known:?}"),
    }
}

/// A thread-priority error in plain words (errno names where there is one).
pub(super) fn priority_error(e: &thread_priority::Error) -> String {
    match e {
        thread_priority::Error::OS(code) => errno_name(*code),
        other => other.to_string(),
    }
}

/// How to name this binary in a `setcap` fix.
pub(super) fn this_binary() -> String {
    std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "target/release/host".to_string())
}

#[cfg(test)]
mod tests {
    use super::errno_name;

    #[test]
    fn errno_values_are_named() {
        assert_eq!(errno_name(libc::EACCES), "EACCES");
        assert_eq!(errno_name(libc::EOPNOTSUPP), "EOPNOTSUPP");
        assert_eq!(errno_name(-5), "errno -5");
    }
}
