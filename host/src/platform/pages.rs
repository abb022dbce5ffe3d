//! Transparent huge pages: what the kernel does with them
//! (`/sys/kernel/mm/transparent_hugepage/enabled`), asking for them on a
//! range of memory (`madvise(MADV_HUGEPAGE)`), and how much of a mapping
//! they back (`AnonHugePages` in `/proc/self/smaps`).
//!
//! A guest's linear memory is an anonymous mapping of its own. Backed by
//! 4 KiB pages, a table of a few MiB spans a thousand pages whose physical
//! places differ from process to process, and so do the TLB misses and
//! cache-set conflicts of code that jumps around in it; backed by 2 MiB
//! pages, it spans a handful. Where the kernel's mode is `madvise` (the
//! default of many distributions), only memory that asks gets them.

/// The size of a huge page on x86-64 and aarch64 (with 4 KiB pages).
pub const HUGE_PAGE: usize = 2 << 20;

/// The kernel's transparent-huge-page mode (`always`, `madvise` or
/// `never`), when it says.
pub fn mode() -> Option<String> {
    // A kernel file, as `/proc/stat` is for [`crate::platform::load`].
    let text = crate::util::fs::read_system_text("/sys/kernel/mm/transparent_hugepage/enabled")?;
    let start = text.find('[')?;
    let end = text[start..].find(']')?;
    Some(text[start + 1..start + end].to_string())
}

/// Ask the kernel to back `len` bytes from `start` with huge pages where it
/// can (the whole huge pages inside the range). Memory not mapped there is
/// skipped; the range must be the caller's own.
pub fn advise_huge(start: *mut u8, len: usize) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        let page = 4096usize;
        let from = (start as usize) & !(page - 1);
        let to = (start as usize).saturating_add(len);
        // SAFETY: MADV_HUGEPAGE changes how the kernel backs the range, not
        // its contents or its protection; the range lies in a mapping the
        // caller owns (unmapped parts are reported and skipped).
        let done =
            unsafe { libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE) };
        match done {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (start, len);
        Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
    }
}

/// The KiB of huge pages backing the mapping of this process that holds
/// `address`, when `/proc/self/smaps` says.
pub fn huge_kib_at(address: usize) -> Option<u64> {
    let smaps = crate::util::fs::read_system_text("/proc/self/smaps")?;
    let mut inside = false;
    for line in smaps.lines() {
        if let Some((range, _)) = line.split_once(' ')
            && let Some((from, to)) = range.split_once('-')
            && let (Ok(from), Ok(to)) = (
                usize::from_str_radix(from, 16),
                usize::from_str_radix(to, 16),
            )
        {
            inside = (from..to).contains(&address);
            continue;
        }
        if inside && let Some(kib) = line.strip_prefix("AnonHugePages:") {
            return kib.trim().trim_end_matches("kB").trim().parse().ok();
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_is_one_of_three_or_unknown() {
        if let Some(mode) = mode() {
            assert!(
                ["always", "madvise", "never"].contains(&mode.as_str()),
                "{mode}"
            );
        }
    }

    /// A huge-page-aligned anonymous mapping asked for huge pages and
    /// touched: smaps finds the mapping; where the kernel grants huge
    /// pages, they back it.
    #[cfg(target_os = "linux")]
    #[test]
    fn advised_memory_is_found_in_smaps() {
        let len = 4 * HUGE_PAGE;
        // SAFETY: a fresh private anonymous mapping, unmapped below.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len + HUGE_PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(raw, libc::MAP_FAILED);
        let aligned = (raw as usize + HUGE_PAGE - 1) & !(HUGE_PAGE - 1);
        advise_huge(aligned as *mut u8, len).expect("madvise");
        // SAFETY: inside the mapping, which is readable and writable.
        unsafe { std::ptr::write_bytes(aligned as *mut u8, 1, len) };
        let huge = huge_kib_at(aligned);
        assert!(huge.is_some(), "the mapping is not in smaps");
        // SAFETY: the mapping made above.
        unsafe { libc::munmap(raw, len + HUGE_PAGE) };
    }
}
