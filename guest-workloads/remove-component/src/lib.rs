//! The core `remove` workload as a component, the same algorithm and
//! checksum, with `pause`/`resume` imported from `wasm-bench:workload/timing`.
//!
//! Removal from a table: per `run(count, seed)` the host-excluded set-up
//! (between `pause` and `resume`) fills a table in linear memory with `count`
//! xorshift64 values; the timed part then removes them one by one with a
//! `swap_remove` at a pseudo-random index taken from a running hash, and
//! returns an order-dependent checksum of the removed values. O(1) per op.
//!
//! The table lives in a region at the end of linear memory that is grown with
//! `memory.grow` the first time a larger `count` is seen and reused by every
//! later call: memory use is bounded by the largest `count`, never leaked.
#![no_std]

use core::arch::wasm32;
use wasm_bench::workload::timing::{pause, resume};

wit_bindgen::generate!({
    path: "../../wit",
    world: "workload",
    // No C constructors here: let the exports skip the "run ctors once" check.
    disable_run_ctors_once_workaround: true,
});

// wit-bindgen links the `alloc` crate, so an allocator must exist; with only
// u64 in the contract the bindings never allocate, so this one never does.
struct NoAlloc;

// SAFETY: never hands out memory (null = allocation failure).
unsafe impl core::alloc::GlobalAlloc for NoAlloc {
    unsafe fn alloc(&self, _: core::alloc::Layout) -> *mut u8 {
        core::ptr::null_mut()
    }
    unsafe fn dealloc(&self, _: *mut u8, _: core::alloc::Layout) {}
}

#[global_allocator]
static ALLOCATOR: NoAlloc = NoAlloc;

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    wasm32::unreachable()
}

const PAGE: u64 = 65536;
/// Largest table (entries of 8 bytes: 2 GiB); larger counts trap.
/// Also keeps `len < 2^32`, which the index reduction below relies on.
const MAX_ENTRIES: u64 = 1 << 28;

/// Start of the table region (0 = not yet chosen). Everything from here to
/// the end of linear memory belongs to the table; nothing else grows memory.
static mut REGION: usize = 0;

/// Returns a pointer to room for `n` u64 entries, growing memory if needed.
fn table(n: u64) -> *mut u64 {
    if n > MAX_ENTRIES {
        wasm32::unreachable();
    }
    // SAFETY: single-threaded module; plain read/write of a `usize` static.
    let base = unsafe {
        if REGION == 0 {
            REGION = wasm32::memory_size(0) * PAGE as usize;
        }
        REGION
    };
    let end = base as u64 + n * 8;
    let have = wasm32::memory_size(0) as u64 * PAGE;
    if end > have {
        let pages = (end - have).div_ceil(PAGE);
        if wasm32::memory_grow(0, pages as usize) == usize::MAX {
            wasm32::unreachable();
        }
    }
    base as *mut u64
}

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

struct Workload;

impl Guest for Workload {
    /// Nothing to prepare (the world requires the export).
    fn setup(_size: u64) {}

    fn run(count: u64, seed: u64) -> u64 {
        remove(count, seed)
    }
}

export!(Workload);

/// `run` of `../remove` on u64, with `pause` and `resume` imported from
/// `timing`: for every `count` from 0 to `MAX_ENTRIES` it returns the same
/// value as the core module.
fn remove(count: u64, seed: u64) -> u64 {
    let s = seed;
    if count == 0 {
        return splitmix64(s);
    }
    let n = count;

    // --- untimed: fill the table -------------------------------------------
    pause();
    let p = table(n);
    let mut x = splitmix64(s) | 1; // xorshift64 state must be non-zero
    for k in 0..n as usize {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // SAFETY: `table(n)` made `p[0..n]` addressable linear memory.
        unsafe { p.add(k).write(x) };
    }
    resume();

    // --- timed: remove every entry ------------------------------------------
    let mut h = splitmix64(s ^ 0x5DEE_CE66_D1CE_4E5B); // running hash
    let mut acc = s;
    let mut len = n;
    while len > 0 {
        h = h
            .wrapping_mul(0x5851_F42D_4C95_7F2D)
            .wrapping_add(0x1405_7B7E_F767_814F);
        // Uniform index in 0..len (len < 2^32): high 32 bits of h times len.
        let idx = (((h >> 32) * len) >> 32) as usize;
        let last = (len - 1) as usize;
        // SAFETY: idx <= last < n, inside the table.
        let v = unsafe {
            let v = p.add(idx).read();
            p.add(idx).write(p.add(last).read());
            v
        };
        len -= 1;
        acc = acc.rotate_left(5) ^ v;
        h ^= v;
    }
    acc
}
