//! Valgrind's client requests, for Callgrind: whether this process runs
//! under Valgrind, and zeroing, toggling and dumping Callgrind's counts, so
//! that a pass brackets exactly the region it counts.
//!
//! A client request is a special instruction sequence (four rotates of a
//! register that add up to a full turn, then `xchg rbx, rbx`) that does
//! nothing on a real CPU and that Valgrind's JIT recognises; the request's
//! arguments are passed in memory through `rax`, the answer comes back in
//! `rdx`. This is the sequence of `valgrind.h` for x86-64, written here
//! rather than taken from a crate because the crates that wrap it
//! (crabgrind) need Valgrind's headers and a C compiler when the host is
//! built, and the host must build on a machine without Valgrind. On other
//! architectures every request answers "not under Valgrind".

/// `VG_USERREQ__RUNNING_ON_VALGRIND`.
const RUNNING_ON_VALGRIND: usize = 0x1001;
/// `VG_USERREQ_TOOL_BASE('C', 'T')`: Callgrind's requests.
const CALLGRIND_BASE: usize = ((b'C' as usize) << 24) | ((b'T' as usize) << 16);
const DUMP_STATS: usize = CALLGRIND_BASE;
const ZERO_STATS: usize = CALLGRIND_BASE + 1;
const TOGGLE_COLLECT: usize = CALLGRIND_BASE + 2;

/// One client request; `default` is the answer when not under Valgrind.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn request(default: usize, code: usize, arg1: usize) -> usize {
    let args: [usize; 6] = [code, arg1, 0, 0, 0, 0];
    let result: usize;
    // SAFETY: the rotates turn rdi a full 128 bits (it keeps its value) and
    // `xchg rbx, rbx` changes nothing; on a real CPU the sequence has no
    // effect. Under Valgrind, it reads `args` through rax and writes rdx.
    unsafe {
        core::arch::asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            inout("rdx") default => result,
            in("rax") args.as_ptr(),
            options(nostack, preserves_flags),
        );
    }
    result
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn request(default: usize, _code: usize, _arg1: usize) -> usize {
    default
}

/// Whether this process runs under Valgrind.
pub fn running_on_valgrind() -> bool {
    request(0, RUNNING_ON_VALGRIND, 0) > 0
}

/// Set Callgrind's counts to zero.
#[inline(always)]
pub fn zero_stats() {
    request(0, ZERO_STATS, 0);
}

/// Turn Callgrind's collecting on if it is off, off if it is on.
#[inline(always)]
pub fn toggle_collect() {
    request(0, TOGGLE_COLLECT, 0);
}

/// Write Callgrind's counts so far as a new part of its output file, and
/// zero them.
#[inline(always)]
pub fn dump_stats() {
    request(0, DUMP_STATS, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_do_nothing_on_a_real_cpu() {
        assert!(!running_on_valgrind());
        zero_stats();
        toggle_collect();
        toggle_collect();
        dump_stats();
        assert_eq!(request(7, RUNNING_ON_VALGRIND, 0), 7);
    }
}
