// Shared body of the `chainN` crates (100/101, 200/201, 400/401), pulled in
// by their `src/lib.rs` with `include!` after they define `const STEPS: u32`
// (the only difference between the crates). Not a crate of its own.
//
// One op = a dependent chain of exactly `STEPS` identical steps of a
// non-linear mixing function (the first step of SplitMix64's finaliser) on a
// running 64-bit state. On x86-64 one step is shift -> xor -> multiply, about
// 5 cycles of latency, and each step needs the previous one's result, so the
// chain is latency-bound and cannot be vectorised, reordered or folded into a
// closed form (unlike an affine LCG). The state carries across ops, so ops
// cannot overlap either; the loop over ops (an add, a compare and a branch)
// runs alongside the chain and adds no latency to it.
//
// The chain is emitted as straight-line code with no loop at all, so that no
// unrolling heuristic (LLVM's full-unroll threshold sits right around 100
// steps of 3 instructions) can treat the two step counts differently: `STEPS`
// is split into powers of two, each a nest of `#[inline(always)]` doublings,
// behind `if`s on constants that fold away.

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    core::arch::wasm32::unreachable()
}

const _: () = assert!(STEPS < 512, "`chain` covers STEPS up to 511");

/// One step: `x ^= x >> 29; x *= 0xBF58476D1CE4E5B9` (wrapping).
#[inline(always)]
fn step1(x: u64) -> u64 {
    (x ^ (x >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9)
}

#[inline(always)]
fn step2(x: u64) -> u64 {
    step1(step1(x))
}

#[inline(always)]
fn step4(x: u64) -> u64 {
    step2(step2(x))
}

#[inline(always)]
fn step8(x: u64) -> u64 {
    step4(step4(x))
}

#[inline(always)]
fn step16(x: u64) -> u64 {
    step8(step8(x))
}

#[inline(always)]
fn step32(x: u64) -> u64 {
    step16(step16(x))
}

#[inline(always)]
fn step64(x: u64) -> u64 {
    step32(step32(x))
}

#[inline(always)]
fn step128(x: u64) -> u64 {
    step64(step64(x))
}

#[inline(always)]
fn step256(x: u64) -> u64 {
    step128(step128(x))
}

/// Exactly `STEPS` applications of `step1`, as straight-line code.
#[inline(always)]
fn chain(mut x: u64) -> u64 {
    if STEPS & 256 != 0 {
        x = step256(x);
    }
    if STEPS & 128 != 0 {
        x = step128(x);
    }
    if STEPS & 64 != 0 {
        x = step64(x);
    }
    if STEPS & 32 != 0 {
        x = step32(x);
    }
    if STEPS & 16 != 0 {
        x = step16(x);
    }
    if STEPS & 8 != 0 {
        x = step8(x);
    }
    if STEPS & 4 != 0 {
        x = step4(x);
    }
    if STEPS & 2 != 0 {
        x = step2(x);
    }
    if STEPS & 1 != 0 {
        x = step1(x);
    }
    x
}

/// `count` ops from state `seed` (`count <= 0`: none); returns the final
/// state, so the result depends on every step of every op.
#[unsafe(no_mangle)]
pub extern "C" fn run(count: i64, seed: i64) -> i64 {
    let mut x = seed as u64;
    let mut i: i64 = 0;
    while i < count {
        x = chain(x);
        i += 1;
    }
    x as i64
}
