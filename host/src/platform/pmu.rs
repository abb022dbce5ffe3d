//! Whether the kernel gives this process hardware performance counters:
//! a probe that opens (and closes) the PMU's instruction counter with
//! `perf_event_open`. On a VM without a virtual PMU it fails, and the report
//! says so in one line.

/// `PERF_TYPE_HARDWARE`.
#[cfg(target_os = "linux")]
const PERF_TYPE_HARDWARE: u32 = 0;
/// `PERF_COUNT_HW_INSTRUCTIONS`.
#[cfg(target_os = "linux")]
const PERF_COUNT_HW_INSTRUCTIONS: u64 = 1;

/// The start of `struct perf_event_attr` (version 8 is 136 bytes; the
/// kernel takes the size it is given and zero fields beyond are defaults).
#[cfg(target_os = "linux")]
#[repr(C)]
struct PerfEventAttr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    /// disabled (bit 0), exclude_kernel (bit 5), exclude_hv (bit 6), ...
    flags: u64,
    rest: [u64; 11],
}

/// "available", or why not.
pub fn availability() -> String {
    #[cfg(target_os = "linux")]
    {
        let attr = PerfEventAttr {
            kind: PERF_TYPE_HARDWARE,
            size: std::mem::size_of::<PerfEventAttr>() as u32,
            config: PERF_COUNT_HW_INSTRUCTIONS,
            sample_period: 0,
            sample_type: 0,
            read_format: 0,
            flags: 1 | (1 << 5) | (1 << 6),
            rest: [0; 11],
        };
        // SAFETY: `attr` is a valid perf_event_attr of the size it states;
        // the descriptor is closed at once.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                &attr as *const PerfEventAttr,
                0 as libc::pid_t,
                -1 as libc::c_int,
                -1 as libc::c_int,
                0 as libc::c_ulong,
            )
        };
        if fd >= 0 {
            // SAFETY: fd was just opened by this process.
            unsafe { libc::close(fd as libc::c_int) };
            return "available".to_string();
        }
        format!(
            "unavailable (perf_event_open: {})",
            std::io::Error::last_os_error()
        )
    }
    #[cfg(not(target_os = "linux"))]
    {
        "unavailable (not Linux)".to_string()
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
