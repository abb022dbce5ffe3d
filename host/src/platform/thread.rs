//! Prepare the measuring thread: pin it to one core and raise its priority.
//!
//! Every step records what it asked for and what it got; a refusal is a note
//! in the report, never a failure. This module only prepares the thread it
//! runs on; it measures nothing.

use serde::Serialize;
use thread_priority::{
    NormalThreadSchedulePolicy, RealtimeThreadSchedulePolicy, ThreadPriority, ThreadSchedulePolicy,
    set_thread_priority_and_policy, thread_native_id,
};

/// The CPU's model: see [`super::cpu::cpu_model`].
pub use super::cpu::cpu_model;
use super::cpu::thread_affinity;
use crate::options::{PinRequest, PriorityRequest};

/// What preparing the measuring thread achieved.
#[derive(Debug, Clone, Serialize)]
pub struct Prepared {
    /// The core the measuring thread is pinned to, if pinning succeeded.
    pub pinned_core: Option<usize>,
    /// Number of cores this process may use.
    pub cores: usize,
    /// Scheduler and priority in force, e.g. `nice -20 (SCHED_OTHER)`.
    pub priority: String,
    /// Things that were asked for and refused, in plain words.
    pub warnings: Vec<String>,
}

/// Pin the calling thread and raise its priority as requested.
///
/// Call this on the measuring thread itself, after any helper thread has been
/// spawned elsewhere: threads spawned from a pinned thread inherit its pin and
/// priority.
pub fn prepare_measuring_thread(pin: PinRequest, priority: PriorityRequest) -> Prepared {
    let mut warnings = Vec::new();
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    let pinned_core = match pin {
        PinRequest::None => None,
        PinRequest::Quietest | PinRequest::Core(_) => match measuring_core(pin) {
            None => {
                warnings
                    .push("could not list the cores: the measuring thread is not pinned".into());
                None
            }
            Some(id) if !cores.iter().any(|c| c.id == id) => {
                warnings.push(format!(
                    "core {id} is not available to this process (cores: {}): not pinned",
                    core_list(&cores)
                ));
                None
            }
            Some(id) => {
                if core_affinity::set_for_current(core_affinity::CoreId { id })
                    && thread_affinity() == Some(vec![id])
                {
                    Some(id)
                } else {
                    warnings.push(format!("pinning to core {id} was refused: not pinned"));
                    None
                }
            }
        },
    };
    let priority = raise_priority(priority, &mut warnings);
    Prepared {
        pinned_core,
        cores: cores.len(),
        priority,
        warnings,
    }
}

fn core_list(cores: &[core_affinity::CoreId]) -> String {
    let ids: Vec<String> = cores.iter().map(|c| c.id.to_string()).collect();
    ids.join(",")
}

/// Raise the calling thread's priority; returns a description of what is in force.
fn raise_priority(request: PriorityRequest, warnings: &mut Vec<String>) -> String {
    let thread = thread_native_id();
    if request == PriorityRequest::Fifo {
        let fifo = ThreadSchedulePolicy::Realtime(RealtimeThreadSchedulePolicy::Fifo);
        match set_thread_priority_and_policy(thread, ThreadPriority::Max, fifo) {
            Ok(()) => return describe_current(),
            Err(e) => warnings.push(format!("SCHED_FIFO was refused ({e:?}): trying nice -20")),
        }
    }
    if request != PriorityRequest::None {
        let normal = ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Other);
        if let Err(e) = set_thread_priority_and_policy(thread, ThreadPriority::Max, normal) {
            warnings.push(format!(
                "raising the priority to nice -20 was refused ({e:?})"
            ));
        }
    }
    describe_current()
}

/// The scheduling policy and priority of the calling thread, read back from the OS.
fn describe_current() -> String {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: plain syscalls on the calling thread with no pointers
        // except a valid `sched_param` out-parameter.
        unsafe {
            let policy = libc::sched_getscheduler(0);
            let mut param = libc::sched_param { sched_priority: 0 };
            libc::sched_getparam(0, &mut param);
            match policy {
                libc::SCHED_FIFO => format!("SCHED_FIFO {}", param.sched_priority),
                libc::SCHED_RR => format!("SCHED_RR {}", param.sched_priority),
                _ => {
                    *libc::__errno_location() = 0;
                    let nice = libc::getpriority(libc::PRIO_PROCESS, 0);
                    let name = match policy {
                        libc::SCHED_BATCH => "SCHED_BATCH",
                        libc::SCHED_IDLE => "SCHED_IDLE",
                        _ => "SCHED_OTHER",
                    };
                    format!("nice {nice} ({name})")
                }
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        match thread_priority::get_current_thread_priority() {
            Ok(p) => format!("{p:?}"),
            Err(_) => "unknown".to_string(),
        }
    }
}

/// The core the measuring thread will be pinned to, if any: what
/// [`prepare_measuring_thread`] will ask for.
pub fn measuring_core(pin: PinRequest) -> Option<usize> {
    match pin {
        PinRequest::None => None,
        PinRequest::Core(n) => Some(n),
        PinRequest::Quietest => quietest_core()
            .map(|(core, _)| core)
            .or_else(|| core_affinity::get_core_ids()?.last().map(|c| c.id)),
    }
}

/// How long each core's load is watched before the quietest is chosen.
pub const LOAD_WINDOW: std::time::Duration = std::time::Duration::from_millis(40);
/// Cores within this share of busy time of the quietest count as quiet as
/// it; the last of them is chosen (the cores the system uses least, as a
/// rule).
const QUIET_MARGIN: f64 = 0.10;

/// The quietest core this process may use, and why: each core's busy share
/// over [`LOAD_WINDOW`], from `/proc/stat`. `None` where the load cannot be
/// read (the caller falls back to the last core).
pub fn quietest_core() -> Option<(usize, String)> {
    let cores: Vec<usize> = core_affinity::get_core_ids()?
        .iter()
        .map(|c| c.id)
        .collect();
    let before = cpu_times()?;
    std::thread::sleep(LOAD_WINDOW);
    let after = cpu_times()?;
    let mut busy: Vec<(usize, f64)> = Vec::new();
    for &core in &cores {
        let (Some(b), Some(a)) = (before.get(&core), after.get(&core)) else {
            continue;
        };
        let total = a.0.saturating_sub(b.0);
        let idle = a.1.saturating_sub(b.1);
        let share = if total == 0 {
            0.0
        } else {
            total.saturating_sub(idle) as f64 / total as f64
        };
        busy.push((core, share));
    }
    let least = busy.iter().map(|b| b.1).fold(f64::INFINITY, f64::min);
    let chosen = busy
        .iter()
        .filter(|b| b.1 <= least + QUIET_MARGIN)
        .map(|b| b.0)
        .next_back()?;
    let loads: Vec<String> = busy
        .iter()
        .map(|(core, share)| format!("core {core} {:.0}% busy", share * 100.0))
        .collect();
    Some((chosen, format!("the quietest: {}", loads.join(", "))))
}

/// Per core: (total, idle + iowait) jiffies so far.
fn cpu_times() -> Option<std::collections::HashMap<usize, (u64, u64)>> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let mut times = std::collections::HashMap::new();
    for line in stat.lines() {
        let Some(rest) = line.strip_prefix("cpu") else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let Some(Ok(core)) = fields.next().map(str::parse::<usize>) else {
            continue;
        };
        let values: Vec<u64> = fields.filter_map(|f| f.parse().ok()).collect();
        if values.len() < 5 {
            continue;
        }
        // user nice system idle iowait irq softirq steal (guest time is
        // already in user).
        let total: u64 = values.iter().take(8).sum();
        times.insert(core, (total, values[3] + values[4]));
    }
    Some(times)
}
