//! How much memory a process has held: its peak resident set (`VmHWM` in
//! `/proc/PID/status`), the figure a program's row reports as its memory.

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
}
