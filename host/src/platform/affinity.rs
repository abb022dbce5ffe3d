//! The cores of a process the measuring thread starts (V8's `node`): every
//! core for its helper threads, which a child of a pinned thread would
//! otherwise share with the thread that runs the guest, then the measuring
//! core for its main thread alone. Off Linux both steps do nothing.

/// Let the calling thread run on every core the process's cpuset allows
/// (the kernel keeps only those of a full mask). Async-signal-safe and
/// allocation-free: it may run between `fork` and `exec`, so that the
/// started process and the threads it makes inherit every core.
pub fn allow_every_core() -> std::io::Result<()> {
    set_cores(0, |_| true)
}

/// Keep the thread `tid` alone to `cores` (a process's id is its main
/// thread's; the threads it made before keep theirs).
pub fn keep_thread_to(tid: u32, cores: &[usize]) -> std::io::Result<()> {
    let tid =
        libc::pid_t::try_from(tid).map_err(|_| std::io::Error::from_raw_os_error(libc::ESRCH))?;
    set_cores(tid, |core| cores.contains(&core))
}

/// Let thread `tid` (0: the calling thread) run on the cores `wanted`
/// takes: no allocation, no call but `sched_setaffinity`.
#[cfg(target_os = "linux")]
fn set_cores(tid: libc::pid_t, wanted: impl Fn(usize) -> bool) -> std::io::Result<()> {
    // SAFETY: `set` is a cpu_set_t owned by us, alive for the calls; every
    // core set is below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for core in (0..libc::CPU_SETSIZE as usize).filter(|&c| wanted(c)) {
            libc::CPU_SET(core, &mut set);
        }
        if libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// A thread's cores: nothing to set off Linux.
#[cfg(not(target_os = "linux"))]
fn set_cores(_tid: libc::pid_t, _wanted: impl Fn(usize) -> bool) -> std::io::Result<()> {
    Ok(())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::platform::cpu::thread_affinity;

    /// A thread kept to one core reads that core alone; allowed every
    /// core, it reads at least the cores it had before.
    #[test]
    fn a_thread_is_kept_to_a_core_and_allowed_every_core_again() {
        std::thread::spawn(|| {
            let every = thread_affinity().expect("affinity");
            let first = every[0];
            // SAFETY: gettid has no preconditions.
            let tid = unsafe { libc::gettid() } as u32;
            keep_thread_to(tid, &[first]).expect("keep");
            assert_eq!(thread_affinity(), Some(vec![first]));
            allow_every_core().expect("allow");
            let allowed = thread_affinity().expect("affinity");
            assert!(every.iter().all(|core| allowed.contains(core)));
        })
        .join()
        .expect("the thread");
    }
}
