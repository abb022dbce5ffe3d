//! The checks of `host doctor` that ask the OS for something (a pin, nice
//! -20, SCHED_FIFO), each on a short-lived probe thread of its own, and the
//! read-backs of what the thread got.

use crate::command::doctor::finding::{
    FIFO, Finding, NICE, PINNING, format_cpu_list, on_probe_thread, priority_error, read_text,
    this_binary,
};
use crate::platform::cpu::thread_affinity;

pub(super) fn pinning(cores: &[usize]) -> Finding {
    let Some(&last) = cores.last() else {
        return Finding::info(PINNING, "not tried: no core list");
    };
    let outcome = on_probe_thread(move || {
        let set = core_affinity::set_for_current(core_affinity::CoreId { id: last });
        (set, thread_affinity())
    });
    match outcome {
        None => Finding::info(PINNING, "not tried: could not start a probe thread"),
        Some((true, Some(now))) if now == [last] => Finding::ok(
            PINNING,
            format!("permitted: a thread was pinned to core {last} (the default measuring core)"),
        ),
        Some((true, None)) => Finding::info(
            PINNING,
            format!("pinning to core {last} was accepted, but the affinity is not exposed"),
        ),
        Some((true, Some(now))) => Finding::warn(
            PINNING,
            format!(
                "asked for core {last}, the thread may run on cores {}",
                format_cpu_list(&now)
            ),
        )
        .fix("check the container's cpuset and seccomp profile (sched_setaffinity must be allowed)"),
        Some((false, _)) => Finding::warn(
            PINNING,
            format!("pinning a thread to core {last} was refused: measurements may migrate between cores"),
        )
        .fix("check the container's cpuset and seccomp profile (sched_setaffinity must be allowed)"),
    }
}

pub(super) fn nice() -> Finding {
    use thread_priority::{
        NormalThreadSchedulePolicy, ThreadPriority, ThreadSchedulePolicy,
        set_thread_priority_and_policy, thread_native_id,
    };
    // The very call `host run` makes (see crate::platform::thread), on a probe thread.
    let outcome = on_probe_thread(|| {
        let normal = ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Other);
        let set = set_thread_priority_and_policy(thread_native_id(), ThreadPriority::Max, normal)
            .map_err(|e| priority_error(&e));
        (set, thread_nice())
    });
    let fix = format!(
        "run as root, or `sudo setcap cap_sys_nice+ep {}`, or set `<user> - nice -20` in /etc/security/limits.conf",
        this_binary()
    );
    match outcome {
        None => Finding::info(NICE, "not tried: could not start a probe thread"),
        Some((Ok(()), Some(-20))) => Finding::ok(
            NICE,
            "permitted: a thread was raised to nice -20 (what `host run` asks for)",
        ),
        Some((Ok(()), None)) => {
            Finding::info(NICE, "accepted, but the thread's nice value is not exposed")
        }
        Some((Ok(()), Some(n))) => {
            Finding::warn(NICE, format!("asked for nice -20, the thread got nice {n}")).fix(fix)
        }
        Some((Err(e), now)) => {
            let stays = now.map_or(String::new(), |n| format!(" at nice {n}"));
            Finding::warn(
                NICE,
                format!("refused ({e}): the measuring thread stays{stays} and competes equally with other work"),
            )
            .fix(fix)
        }
    }
}

pub(super) fn fifo() -> Finding {
    use thread_priority::{
        RealtimeThreadSchedulePolicy, ThreadPriority, ThreadSchedulePolicy,
        set_thread_priority_and_policy, thread_native_id,
    };
    // The call `host run --priority fifo` makes, on a probe thread that ends
    // right after.
    let outcome = on_probe_thread(|| {
        let fifo = ThreadSchedulePolicy::Realtime(RealtimeThreadSchedulePolicy::Fifo);
        let set = set_thread_priority_and_policy(thread_native_id(), ThreadPriority::Max, fifo)
            .map_err(|e| priority_error(&e));
        (set, thread_fifo_priority())
    });
    match outcome {
        None => Finding::info(FIFO, "not tried: could not start a probe thread"),
        Some((Ok(()), Some(priority))) => Finding::ok(
            FIFO,
            format!(
                "permitted (priority {priority}); {}",
                rt_throttling(
                    read_text("/proc/sys/kernel/sched_rt_runtime_us"),
                    read_text("/proc/sys/kernel/sched_rt_period_us"),
                )
            ),
        ),
        Some((Ok(()), None)) => Finding::info(
            FIFO,
            "accepted, but the thread's policy read back is not SCHED_FIFO",
        ),
        Some((Err(e), _)) => Finding::info(
            FIFO,
            format!("refused ({e}): `--priority fifo` falls back to nice -20"),
        )
        .fix(format!(
            "only `--priority fifo` needs it: run as root, or `sudo setcap cap_sys_nice+ep {}`",
            this_binary()
        )),
    }
}

/// What the kernel's real-time throttling does to a busy SCHED_FIFO loop,
/// from `sched_rt_runtime_us` and `sched_rt_period_us`.
pub(super) fn rt_throttling(runtime: Option<String>, period: Option<String>) -> String {
    let runtime: Option<i64> = runtime.and_then(|t| t.parse().ok());
    let period: Option<i64> = period.and_then(|t| t.parse().ok());
    match (runtime, period) {
        (Some(r), _) if r < 0 => "RT throttling off (sched_rt_runtime_us = -1)".to_string(),
        (Some(r), Some(p)) if r >= p => {
            format!("RT throttling off (sched_rt_runtime_us {r} >= sched_rt_period_us {p})")
        }
        (Some(r), Some(p)) => format!(
            "a busy loop under SCHED_FIFO is stopped for {} µs every {p} µs (sched_rt_runtime_us {r})",
            p - r
        ),
        _ => "RT throttling not exposed".to_string(),
    }
}

/// The calling thread's nice value (on Linux, PRIO_PROCESS with who = 0 is
/// the calling thread).
#[cfg(target_os = "linux")]
pub(super) fn thread_nice() -> Option<i32> {
    // SAFETY: errno is thread-local and writable; getpriority takes no
    // pointers. -1 is a valid nice value, so errno tells an error apart.
    unsafe {
        *libc::__errno_location() = 0;
        let nice = libc::getpriority(libc::PRIO_PROCESS, 0);
        (nice != -1 || *libc::__errno_location() == 0).then_some(nice)
    }
}

#[cfg(not(target_os = "linux"))]
pub(super) fn thread_nice() -> Option<i32> {
    None
}

/// The calling thread's SCHED_FIFO priority, `None` unless it is SCHED_FIFO.
#[cfg(target_os = "linux")]
pub(super) fn thread_fifo_priority() -> Option<i32> {
    // SAFETY: pid 0 is the calling thread; `param` is a valid out-parameter
    // that outlives the call.
    unsafe {
        if libc::sched_getscheduler(0) != libc::SCHED_FIFO {
            return None;
        }
        let mut param = libc::sched_param { sched_priority: 0 };
        (libc::sched_getparam(0, &mut param) == 0).then_some(param.sched_priority)
    }
}

#[cfg(not(target_os = "linux"))]
pub(super) fn thread_fifo_priority() -> Option<i32> {
    None
}
