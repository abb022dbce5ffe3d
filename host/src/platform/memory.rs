//! How much memory a process has held: its peak resident set (`VmHWM` in
//! `/proc/PID/status`), the figure a program's row reports as its memory,
//! and that peak started afresh, so that a row's is its own.

/// The peak resident set of process `pid` (this process when `None`), in
/// bytes, where the kernel tells.
pub fn peak_rss_bytes(pid: Option<u32>) -> Option<u64> {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/status"),
        None => "/proc/self/status".to_string(),
    };
    let status = crate::util::fs::read_system_text(&path)?;
    parse_peak(&status)
}

/// Start this process's peak resident set afresh, from what it holds now:
/// the heap's free pages handed back to the kernel first (`malloc_trim`,
/// with glibc), then the high-water mark reset (Linux: `5` written to
/// `/proc/self/clear_refs`). Whether the mark was reset: where it was not,
/// the peak is the process's since it started.
pub fn reset_peak() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only hands free pages of the heap back to the
    // kernel; it touches no memory in use.
    unsafe {
        libc::malloc_trim(0);
    }
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Have glibc's allocator hand freed memory back to the kernel as it
/// goes: an allocation of 128 KiB or more gets pages of its own (`mmap`),
/// unmapped when freed, and the heap is trimmed once 128 KiB at its top are
/// free. Left to itself, glibc raises both thresholds each time a large
/// allocation is freed, so that a large row (a program's memory, a
/// runtime's compile) would leave its memory resident for the rows after
/// it, and their peak would be its. A worker sets this before its setup.
pub fn hand_back_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt sets parameters of glibc's allocator (under the
    // allocator's own lock), to valid values.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 128 * 1024);
    }
}

/// `VmHWM:  1234 kB` of a status file, in bytes.
fn parse_peak(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peak_is_read_in_bytes() {
        let status = "Name:\thost\nVmPeak:\t 9000 kB\nVmHWM:\t   2048 kB\nVmRSS:\t 1024 kB\n";
        assert_eq!(parse_peak(status), Some(2048 * 1024));
        assert_eq!(parse_peak("VmRSS: 1 kB\n"), None);
        #[cfg(target_os = "linux")]
        assert!(peak_rss_bytes(None).is_some_and(|b| b > 0));
    }

    /// 64 MiB touched and freed, then the peak reset: it reads less than
    /// the 64 MiB it read before (by half of them, a wide margin).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_reset_peak_forgets_memory_freed_before_it() {
        let big = vec![1u8; 64 << 20];
        std::hint::black_box(&big);
        let before = peak_rss_bytes(None).unwrap_or(0);
        drop(big);
        assert!(reset_peak(), "the kernel refused the reset");
        let after = peak_rss_bytes(None).unwrap_or(u64::MAX);
        assert!(
            after + (32 << 20) < before,
            "{after} after, {before} before"
        );
    }
}
