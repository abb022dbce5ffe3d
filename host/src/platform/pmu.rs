//! Hardware performance counters through `perf_event_open`: a group of
//! user-space counters on the calling thread, started and stopped together
//! ([`Counters`]; instructions and cycles for `--metric counters`), and the
//! probe that counts a short loop with the instruction counter. `host
//! doctor` reports the probe with a fix; every run's environment says in one
//! line whether the counters are there ([`availability`]). On a VM without a
//! virtual PMU the open fails.

/// `struct perf_event_attr` as of PERF_ATTR_SIZE_VER0 (64 bytes): the
/// kernel accepts this size and zero-extends it.
#[cfg(target_os = "linux")]
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    /// The bit fields: disabled (bit 0), inherit, pinned, exclusive,
    /// exclude_user, exclude_kernel (bit 5), exclude_hv (bit 6), ...
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

#[cfg(target_os = "linux")]
const _: () = assert!(std::mem::size_of::<PerfEventAttr>() == 64);

#[cfg(target_os = "linux")]
const PERF_TYPE_HARDWARE: u32 = 0;
#[cfg(all(target_os = "linux", test))]
const PERF_TYPE_SOFTWARE: u32 = 1;
#[cfg(target_os = "linux")]
const PERF_COUNT_HW_CPU_CYCLES: u64 = 0;
#[cfg(target_os = "linux")]
const PERF_COUNT_HW_INSTRUCTIONS: u64 = 1;
#[cfg(all(target_os = "linux", test))]
const PERF_COUNT_SW_TASK_CLOCK: u64 = 1;
#[cfg(target_os = "linux")]
const PERF_DISABLED: u64 = 1;
/// read_format: one read gives the whole group, with the times the group
/// was enabled and running (they differ when the kernel multiplexed it).
#[cfg(target_os = "linux")]
const PERF_FORMAT_TOTAL_TIME_ENABLED: u64 = 1 << 0;
#[cfg(target_os = "linux")]
const PERF_FORMAT_TOTAL_TIME_RUNNING: u64 = 1 << 1;
#[cfg(target_os = "linux")]
const PERF_FORMAT_GROUP: u64 = 1 << 3;
/// `_IO('$', 0)`, `_IO('$', 1)`, `_IO('$', 3)`.
#[cfg(target_os = "linux")]
const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;
#[cfg(target_os = "linux")]
const PERF_EVENT_IOC_DISABLE: libc::c_ulong = 0x2401;
#[cfg(target_os = "linux")]
const PERF_EVENT_IOC_RESET: libc::c_ulong = 0x2403;
#[cfg(target_os = "linux")]
const PERF_IOC_FLAG_GROUP: libc::c_ulong = 1;
#[cfg(target_os = "linux")]
const PERF_EXCLUDE_KERNEL: u64 = 1 << 5;
#[cfg(target_os = "linux")]
const PERF_EXCLUDE_HV: u64 = 1 << 6;
#[cfg(target_os = "linux")]
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;

/// Open a user-space counter of `kind`/`config` on the calling thread, in
/// the group of `leader` (or as a leader), with `flags` and `read_format`.
/// Err is the errno of perf_event_open.
#[cfg(target_os = "linux")]
fn open_counter(
    kind: u32,
    config: u64,
    flags: u64,
    read_format: u64,
    leader: Option<&std::os::fd::OwnedFd>,
) -> Result<std::os::fd::OwnedFd, i32> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
    let attr = PerfEventAttr {
        kind,
        size: std::mem::size_of::<PerfEventAttr>() as u32,
        config,
        read_format,
        // User space only, which even perf_event_paranoid = 2 permits.
        flags: flags | PERF_EXCLUDE_KERNEL | PERF_EXCLUDE_HV,
        ..PerfEventAttr::default()
    };
    let group = leader.map_or(-1, |fd| fd.as_raw_fd() as libc::c_long);
    // SAFETY: `attr` is a fully initialised perf_event_attr whose `size`
    // matches its layout, alive for the call; the other arguments are plain
    // integers passed as longs (this thread, any CPU, the group leader's
    // descriptor or -1, close-on-exec).
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const PerfEventAttr,
            0 as libc::c_long,
            -1 as libc::c_long,
            group,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(last_errno());
    }
    // SAFETY: the kernel just returned this descriptor; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

#[cfg(target_os = "linux")]
fn last_errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EINVAL)
}

/// Open a user-space hardware instruction counter on the calling thread,
/// counting from now. Err is the errno of perf_event_open.
#[cfg(target_os = "linux")]
fn open_instruction_counter() -> Result<std::os::fd::OwnedFd, i32> {
    open_counter(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 0, 0, None)
}

/// A group of user-space counters on the calling thread that start and stop
/// together: the kernel schedules a group onto the PMU as one, so its
/// counts cover the same instructions.
#[cfg(target_os = "linux")]
pub struct Counters {
    leader: std::os::fd::OwnedFd,
    /// The other members: open as long as the group is.
    _members: Vec<std::os::fd::OwnedFd>,
    len: usize,
}

/// What a group counted between [`Counters::start`] and [`Counters::stop`].
#[derive(Debug, Clone, PartialEq)]
pub struct Counted {
    /// One count per event, in the order the group was opened.
    pub values: Vec<u64>,
    /// Whether the group ran the whole time it was enabled; when the kernel
    /// multiplexed the PMU between groups, the counts are partial.
    pub complete: bool,
}

#[cfg(target_os = "linux")]
impl Counters {
    /// Instructions retired and CPU cycles, in that order.
    pub fn instructions_and_cycles() -> Result<Self, i32> {
        Self::open(&[
            (PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS),
            (PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES),
        ])
    }

    /// Open a group of `(type, config)` events, stopped.
    fn open(events: &[(u32, u64)]) -> Result<Self, i32> {
        let read_format =
            PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
        let Some((&(kind, config), rest)) = events.split_first() else {
            return Err(libc::EINVAL);
        };
        let leader = open_counter(kind, config, PERF_DISABLED, read_format, None)?;
        let members = rest
            .iter()
            .map(|&(kind, config)| open_counter(kind, config, 0, read_format, Some(&leader)))
            .collect::<Result<Vec<_>, i32>>()?;
        Ok(Counters {
            leader,
            _members: members,
            len: events.len(),
        })
    }

    /// Zero the group's counts and start counting.
    pub fn start(&mut self) -> Result<(), i32> {
        self.ioctl(PERF_EVENT_IOC_RESET)?;
        self.ioctl(PERF_EVENT_IOC_ENABLE)
    }

    /// Stop counting and read what the group counted since [`Self::start`].
    pub fn stop(&mut self) -> Result<Counted, i32> {
        self.ioctl(PERF_EVENT_IOC_DISABLE)?;
        self.read()
    }

    fn ioctl(&self, request: libc::c_ulong) -> Result<(), i32> {
        use std::os::fd::AsRawFd;
        // SAFETY: a perf event descriptor this group owns, and a request of
        // the perf ioctl family whose argument is a plain flag.
        let done = unsafe { libc::ioctl(self.leader.as_raw_fd(), request, PERF_IOC_FLAG_GROUP) };
        match done {
            0 => Ok(()),
            _ => Err(last_errno()),
        }
    }

    /// The group's read: the number of events, the times enabled and
    /// running, then one value per event.
    fn read(&self) -> Result<Counted, i32> {
        use std::io::Read;
        let mut words = vec![0u8; 8 * (3 + self.len)];
        let mut file = std::fs::File::from(
            self.leader
                .try_clone()
                .map_err(|e| e.raw_os_error().unwrap_or(libc::EINVAL))?,
        );
        file.read_exact(&mut words)
            .map_err(|e| e.raw_os_error().unwrap_or(libc::EINVAL))?;
        let word = |i: usize| {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(&words[8 * i..8 * i + 8]);
            u64::from_ne_bytes(bytes)
        };
        if word(0) as usize != self.len {
            return Err(libc::EIO);
        }
        let (enabled, running) = (word(1), word(2));
        Ok(Counted {
            values: (0..self.len).map(|i| word(3 + i)).collect(),
            complete: running == enabled,
        })
    }
}

/// Where there is no `perf_event_open`, no group opens.
#[cfg(not(target_os = "linux"))]
pub struct Counters;

#[cfg(not(target_os = "linux"))]
impl Counters {
    pub fn instructions_and_cycles() -> Result<Self, i32> {
        Err(libc::ENOSYS)
    }
    pub fn start(&mut self) -> Result<(), i32> {
        Err(libc::ENOSYS)
    }
    pub fn stop(&mut self) -> Result<Counted, i32> {
        Err(libc::ENOSYS)
    }
}

/// A perf_event_open errno in words, for a row or the environment.
pub fn describe(code: i32) -> String {
    format!(
        "perf_event_open: {}",
        std::io::Error::from_raw_os_error(code)
    )
}

/// Count the user-space instructions of a short loop; Err is an errno.
#[cfg(target_os = "linux")]
pub fn count_instructions() -> Result<u64, i32> {
    use std::io::Read;
    let fd = open_instruction_counter()?;
    let mut x = 0u64;
    for i in 0..10_000u64 {
        x = std::hint::black_box(x ^ i);
    }
    std::hint::black_box(x);
    let mut counter = std::fs::File::from(fd);
    let mut bytes = [0u8; 8];
    counter
        .read_exact(&mut bytes)
        .map_err(|e| e.raw_os_error().unwrap_or(libc::EINVAL))?;
    Ok(u64::from_ne_bytes(bytes))
    // `counter` is dropped here, closing the descriptor.
}

#[cfg(not(target_os = "linux"))]
pub fn count_instructions() -> Result<u64, i32> {
    Err(libc::ENOSYS)
}

/// "available", or why not, on one line.
pub fn availability() -> String {
    match count_instructions() {
        Ok(n) if n > 0 => "available".to_string(),
        Ok(_) => "unavailable (the instruction counter opened but counted nothing)".to_string(),
        Err(code) => format!("unavailable ({})", describe(code)),
    }
}

#[cfg(test)]
mod tests {
    /// The group mechanism, on software clocks that every Linux kernel has:
    /// counts start at zero, run only between start and stop, and come back
    /// one per event.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_group_counts_only_between_start_and_stop() {
        use super::*;
        let mut group = match Counters::open(&[
            (PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK),
            (PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK),
        ]) {
            Ok(group) => group,
            // A sandbox that forbids perf_event_open altogether.
            Err(libc::EACCES | libc::EPERM | libc::ENOSYS) => return,
            Err(code) => panic!("{}", describe(code)),
        };
        let spin = |ms: u64| {
            let until = std::time::Instant::now() + std::time::Duration::from_millis(ms);
            while std::time::Instant::now() < until {
                std::hint::spin_loop();
            }
        };
        spin(30);
        let started = std::time::Instant::now();
        group.start().expect("start");
        spin(10);
        let counted = group.stop().expect("stop");
        let window = started.elapsed().as_nanos() as u64;
        spin(30);
        let again = group.read().expect("read");
        assert_eq!(counted.values.len(), 2);
        for &ns in &counted.values {
            // Task clock in ns: some of the window counted (the thread ran
            // in it), none of the 30 ms before it.
            assert!(
                ns > 0 && ns <= window,
                "{counted:?} in a window of {window} ns"
            );
        }
        assert_eq!(again.values, counted.values, "counted while stopped");
    }

    #[test]
    fn the_probe_answers_in_one_line() {
        let answer = super::availability();
        assert!(
            answer == "available" || answer.starts_with("unavailable ("),
            "{answer}"
        );
        assert!(!answer.contains('\n'));
    }
}
