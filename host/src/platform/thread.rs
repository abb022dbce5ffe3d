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
use super::load;
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

/// The quietest core this process may use, and why: each core's busy share
/// over [`load::WINDOW`]. `None` where the load cannot be read (the caller
/// falls back to the last core).
pub fn quietest_core() -> Option<(usize, String)> {
    let loads = load::watch(&available_cores()?)?;
    let chosen = load::quietest(&loads)?;
    Some((chosen, load::why_quietest(&loads)))
}

/// The cores this process may use.
pub fn available_cores() -> Option<Vec<usize>> {
    Some(
        core_affinity::get_core_ids()?
            .iter()
            .map(|c| c.id)
            .collect(),
    )
}

/// Put the calling thread at the scheduler's idle class (`SCHED_IDLE`): it
/// runs only on a core no other thread wants, so never in place of a
/// measuring worker. Threads it spawns inherit the class. Whether the
/// scheduler agreed.
pub fn run_when_idle() -> bool {
    set_thread_priority_and_policy(
        thread_native_id(),
        ThreadPriority::Min,
        ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle),
    )
    .is_ok()
}
