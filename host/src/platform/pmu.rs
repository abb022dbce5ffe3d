//! Hardware performance counters: open the PMU's user-space instruction
//! counter with `perf_event_open` and count a short loop with it. `host
//! doctor` reports the outcome with a fix; every run's environment says in
//! one line whether the counters are there ([`availability`]). On a VM
//! without a virtual PMU the open fails.

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
#[cfg(target_os = "linux")]
const PERF_COUNT_HW_INSTRUCTIONS: u64 = 1;
#[cfg(target_os = "linux")]
const PERF_EXCLUDE_KERNEL: u64 = 1 << 5;
#[cfg(target_os = "linux")]
const PERF_EXCLUDE_HV: u64 = 1 << 6;
#[cfg(target_os = "linux")]
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;

/// Open a user-space hardware instruction counter on the calling thread.
/// Err is the errno of perf_event_open.
#[cfg(target_os = "linux")]
fn open_instruction_counter() -> Result<std::os::fd::OwnedFd, i32> {
    use std::os::fd::{FromRawFd, OwnedFd, RawFd};
    let attr = PerfEventAttr {
        kind: PERF_TYPE_HARDWARE,
        size: std::mem::size_of::<PerfEventAttr>() as u32,
        config: PERF_COUNT_HW_INSTRUCTIONS,
        // Enabled from the start; user space only, which even
        // perf_event_paranoid = 2 permits.
        flags: PERF_EXCLUDE_KERNEL | PERF_EXCLUDE_HV,
        ..PerfEventAttr::default()
    };
    // SAFETY: `attr` is a fully initialised perf_event_attr whose `size`
    // matches its layout, alive for the call; the other arguments are plain
    // integers passed as longs (this thread, any CPU, no group, close-on-exec).
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const PerfEventAttr,
            0 as libc::c_long,
            -1 as libc::c_long,
            -1 as libc::c_long,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EINVAL));
    }
    // SAFETY: the kernel just returned this descriptor; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
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
        Err(code) => format!(
            "unavailable (perf_event_open: {})",
            std::io::Error::from_raw_os_error(code)
        ),
    }
}

#[cfg(test)]
mod tests {
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
