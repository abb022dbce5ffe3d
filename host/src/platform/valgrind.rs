//! Valgrind's client requests, for Callgrind: whether this process runs
//! under Valgrind, zeroing, toggling and dumping Callgrind's counts, so
//! that a pass brackets exactly the region it counts, and switching its
//! instrumentation on and off; and [`reset_branch_predictor`], which puts
//! Callgrind's simulated branch predictor in one fixed state.
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
const START_INSTRUMENTATION: usize = CALLGRIND_BASE + 4;
const STOP_INSTRUMENTATION: usize = CALLGRIND_BASE + 5;

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

/// Switch Callgrind's instrumentation on: from here, code is simulated
/// (caches, branch predictor) and can be counted. Switching it on empties
/// the simulated caches (and drops Valgrind's translations, which are made
/// again as code runs); the branch predictor keeps its state. With
/// `--instr-atstart=no`, code runs unsimulated until this request.
#[inline(always)]
pub fn start_instrumentation() {
    request(0, START_INSTRUMENTATION, 0);
}

/// Switch Callgrind's instrumentation off: code runs unsimulated, the caches
/// and the branch predictor see none of it, and nothing is counted.
#[inline(always)]
pub fn stop_instrumentation() {
    request(0, STOP_INSTRUMENTATION, 0);
}

/// Conditional branches the predictor reset runs: 4 rounds of the 64 × 256
/// steps that take every pair of history and address once.
const RESET_STEPS: u32 = 4 * 64 * 256;

/// A de Bruijn sequence of order 8, bit `t` of the 256 at bit `t % 64` of
/// word `t / 64`: read as a cycle, its 256 windows of 8 bits are all
/// different.
static DE_BRUIJN: [u64; 4] = de_bruijn();

/// The de Bruijn sequence of order 8 that starts with eight zeros and
/// prefers ones: each next bit is a one if the window it ends is new, else a
/// zero.
const fn de_bruijn() -> [u64; 4] {
    let mut seen = [false; 256];
    let mut bits = [0u64; 4];
    seen[0] = true;
    let mut window = 0usize;
    let mut t = 8;
    while t < 256 {
        let one = ((window << 1) | 1) & 0xff;
        let bit = if seen[one] { 0 } else { 1 };
        window = ((window << 1) | bit) & 0xff;
        seen[window] = true;
        bits[t / 64] |= (bit as u64) << (t % 64);
        t += 1;
    }
    bits
}

/// Put Callgrind's simulated branch predictor in one fixed state, whatever
/// code it saw before, so that a count that starts here depends only on the
/// code that runs from here.
///
/// The predictor (Valgrind's `cg_branchpred.c`) keeps a 2-bit counter for
/// every pair of global history (the last 7 conditional outcomes) and
/// address (its low 7 bits): 16,384 counters; and, for indirect branches,
/// the last target for each of 512 address classes (the low 9 bits). The
/// reset runs 128 conditional branches, one at each of the 128 address
/// classes, each always taken (odd classes) or never taken (even ones), in
/// an order whose outcomes follow a de Bruijn sequence: every pair of
/// history and address comes up at least 3 times, each counter moves in one
/// direction only, and so ends saturated (taken for odd classes, not taken
/// for even ones) from any start. Then it runs one indirect jump at each of
/// the 512 classes, all to the same target. The steps between branches are
/// computed without a conditional branch, and nothing else in it branches.
///
/// It changes nothing a program can see (registers it may clobber aside);
/// on a real CPU it is a few hundred thousand instructions. On other
/// architectures than x86-64 it does nothing (nor does any request here).
#[cfg(target_arch = "x86_64")]
pub fn reset_branch_predictor() {
    unsafe extern "C" {
        fn wasm_bench_reset_branch_predictor();
    }
    // SAFETY: the routine below reads `DE_BRUIJN` and its own code, writes
    // no memory, does not touch the stack but for its return address, and
    // clobbers only registers the C calling convention lets a call clobber
    // (rax, rcx, rdx, rsi, rdi, r8-r10, flags).
    unsafe { wasm_bench_reset_branch_predictor() }
}

#[cfg(not(target_arch = "x86_64"))]
pub fn reset_branch_predictor() {}

// The routine of `reset_branch_predictor`. Conditional part: step `s` (of
// RESET_STEPS) takes the stub of address class `a = 2 * ((s >> 8) & 63) +
// DE_BRUIJN bit (s & 255)`; stub `a` sits at 129 × a bytes past a 128-byte
// boundary, so its address is `a` modulo 128, and is `jne` (even `a`) or
// `je` (odd `a`) with ZF set, then an indirect jump back (rdi). The taken
// outcomes thus follow the de Bruijn bits, and over 256 steps the history
// of the last 7 bits meets each of the two classes of step `s` once.
// Indirect part: one `jmp rsi` at each address class modulo 512, the even
// ones in a row of 256 two-byte jumps, the odd ones in a second row one
// byte off; every jump lands back on the loop. `cmove` picks the way out
// when the steps are done.
#[cfg(target_arch = "x86_64")]
core::arch::global_asm!(
    ".pushsection .text.wasm_bench_reset_branch_predictor,\"ax\",@progbits",
    ".globl wasm_bench_reset_branch_predictor",
    ".hidden wasm_bench_reset_branch_predictor",
    ".type wasm_bench_reset_branch_predictor,@function",
    ".p2align 4",
    "wasm_bench_reset_branch_predictor:",
    "lea r8, [rip + .Lwb_cond_stubs]",
    "lea r9, [rip + {de_bruijn}]",
    "lea rdi, [rip + .Lwb_cond_next]",
    "lea r10, [rip + .Lwb_cond_done]",
    "xor ecx, ecx",
    ".Lwb_cond_next:",
    "mov edx, ecx",
    "shr edx, 8",
    "and edx, 63",
    "add edx, edx",
    "mov eax, ecx",
    "and eax, 255",
    "bt qword ptr [r9], rax",
    "adc edx, 0",
    "imul edx, edx, 129",
    "add rdx, r8",
    "cmp ecx, {steps}",
    "cmove rdx, r10",
    "inc ecx",
    "xor eax, eax",
    "jmp rdx",
    ".Lwb_cond_done:",
    "lea r8, [rip + .Lwb_ind_stubs]",
    "lea rsi, [rip + .Lwb_ind_next]",
    "lea r10, [rip + .Lwb_ind_done]",
    "xor ecx, ecx",
    ".Lwb_ind_next:",
    "mov edx, ecx",
    "and edx, 1",
    "shl edx, 10",
    "add edx, ecx",
    "add rdx, r8",
    "cmp ecx, 512",
    "cmove rdx, r10",
    "inc ecx",
    "jmp rdx",
    ".Lwb_ind_done:",
    "ret",
    // 64 pairs of stubs, 129 bytes apart: `jne +2` / `je +2`, then
    // `jmp rdi` twice (fall-through and target); int3 between.
    ".p2align 7",
    ".Lwb_cond_stubs:",
    ".rept 64",
    ".byte 0x75, 0x02, 0xff, 0xe7, 0xff, 0xe7",
    ".skip 123, 0xcc",
    ".byte 0x74, 0x02, 0xff, 0xe7, 0xff, 0xe7",
    ".skip 123, 0xcc",
    ".endr",
    // `jmp rsi` at every even address modulo 512, then at every odd one.
    ".p2align 10",
    ".Lwb_ind_stubs:",
    ".rept 256",
    ".byte 0xff, 0xe6",
    ".endr",
    ".skip 513, 0xcc",
    ".rept 256",
    ".byte 0xff, 0xe6",
    ".endr",
    ".size wasm_bench_reset_branch_predictor, . - wasm_bench_reset_branch_predictor",
    ".popsection",
    de_bruijn = sym DE_BRUIJN,
    steps = const RESET_STEPS,
);

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
        start_instrumentation();
        stop_instrumentation();
        assert_eq!(request(7, RUNNING_ON_VALGRIND, 0), 7);
    }

    #[test]
    fn the_de_bruijn_windows_are_all_different() {
        let bit = |t: usize| (DE_BRUIJN[(t % 256) / 64] >> (t % 64)) & 1;
        let mut seen = [false; 256];
        for end in 0..256 {
            let window = (0..8).fold(0, |w, i| (w << 1) | bit(end + 256 - 7 + i) as usize);
            assert!(!seen[window], "window {window:08b} twice");
            seen[window] = true;
        }
    }

    #[test]
    fn the_predictor_reset_returns() {
        // On a real CPU it only runs its branches.
        reset_branch_predictor();
        reset_branch_predictor();
    }
}
