//! Bottom-up merge sort of `size` u64 values (O(n log n) per op): the
//! other half of a pair with `sort-insertion`, which sorts the very same
//! inputs.
//!
//! `setup(size)` reserves room for `size` u64 values plus as much scratch at
//! the end of linear memory. Each of the `count` operations of
//! `run(count, seed)` refills the array, untimed (between `bench.pause` and
//! `bench.resume`), with `size` xorshift64 values seeded from `seed` and the
//! op index, then sorts it with a plain bottom-up merge sort (stable, no
//! insertion-sort cut-off for short runs) that merges back and forth between
//! the array and the scratch, and folds a few positions of the sorted values
//! into an order-dependent checksum, which `run` returns. One op = one full
//! sort.
//! Without `setup`, or with size 0, `run` does nothing and returns a value
//! derived from `seed`.
#![no_std]

use core::arch::wasm32;

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    wasm32::unreachable()
}

#[link(wasm_import_module = "bench")]
unsafe extern "C" {
    fn pause();
    fn resume();
}

const PAGE: u64 = 65536;
/// Largest `size` (1 GiB of u64, plus 1 GiB of scratch); `setup` with more
/// traps. Also keeps `size < 2^32`, which the index reduction in `fold`
/// relies on.
const MAX_LEN: u64 = 1 << 27;

/// Start of the array, followed by the scratch (0 = not yet chosen):
/// everything from here to the end of linear memory belongs to them; nothing
/// else grows memory.
static mut BASE: usize = 0;
/// Elements per op, as set by `setup` (0 = no work).
static mut LEN: usize = 0;

/// Returns the start of a region of at least `bytes` bytes at the end of
/// linear memory, growing memory if needed; later calls reuse the region.
fn region(bytes: u64) -> usize {
    // SAFETY: single-threaded module; plain read/write of a `usize` static.
    let base = unsafe {
        if BASE == 0 {
            BASE = wasm32::memory_size(0) * PAGE as usize;
        }
        BASE
    };
    let end = base as u64 + bytes;
    let have = wasm32::memory_size(0) as u64 * PAGE;
    if end > have {
        let pages = (end - have).div_ceil(PAGE);
        if wasm32::memory_grow(0, pages as usize) == usize::MAX {
            wasm32::unreachable();
        }
    }
    base
}

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Fills `a[0..n]` with xorshift64 values seeded from `seed` and `op`
/// (the same inputs as `sort-insertion`).
///
/// SAFETY: `a[0..n]` must be addressable linear memory.
unsafe fn fill(a: *mut u64, n: usize, seed: u64, op: u64) {
    let mut x = splitmix64(seed.wrapping_add(op.wrapping_mul(0x9E37_79B9_7F4A_7C15))) | 1;
    for k in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        unsafe { a.add(k).write(x) };
    }
}

/// Folds the first, middle and last element and one at a position chosen by
/// the running checksum into `r` (the same fold as `sort-insertion`).
///
/// SAFETY: `a[0..n]` must be addressable, `0 < n < 2^32`.
unsafe fn fold(mut r: u64, a: *const u64, n: usize) -> u64 {
    unsafe {
        r = r.rotate_left(5) ^ a.read();
        r = r.rotate_left(5) ^ a.add(n / 2).read();
        r = r.rotate_left(5) ^ a.add(n - 1).read();
        let k = (((r >> 32) * n as u64) >> 32) as usize; // uniform in 0..n
        r.rotate_left(5) ^ a.add(k).read()
    }
}

/// Merges the sorted runs `src[lo..mid]` and `src[mid..hi]` into
/// `dst[lo..hi]` (stable: ties take the left run first).
///
/// SAFETY: `src[lo..hi]` and `dst[lo..hi]` must be addressable and disjoint.
unsafe fn merge(src: *const u64, dst: *mut u64, lo: usize, mid: usize, hi: usize) {
    let (mut i, mut j, mut k) = (lo, mid, lo);
    // SAFETY: i < mid <= hi, j < hi and k = i + j - mid < hi below.
    unsafe {
        while i < mid && j < hi {
            let x = src.add(i).read();
            let y = src.add(j).read();
            if y < x {
                dst.add(k).write(y);
                j += 1;
            } else {
                dst.add(k).write(x);
                i += 1;
            }
            k += 1;
        }
        core::ptr::copy_nonoverlapping(src.add(i), dst.add(k), mid - i);
        k += mid - i;
        core::ptr::copy_nonoverlapping(src.add(j), dst.add(k), hi - j);
    }
}

/// Sorts the values of `a[0..n]` ascending, using `b[0..n]` as scratch, and
/// returns where the sorted values ended up (`a` or `b`: runs of width 1, 2,
/// 4, ... are merged back and forth between the two, with no final copy).
///
/// SAFETY: `a[0..n]` and `b[0..n]` must be addressable and disjoint,
/// `n < 2^31`.
unsafe fn merge_sort(a: *mut u64, b: *mut u64, n: usize) -> *const u64 {
    let (mut src, mut dst) = (a, b);
    let mut width = 1;
    while width < n {
        let mut lo = 0;
        while lo < n {
            let mid = (lo + width).min(n);
            let hi = (mid + width).min(n);
            // SAFETY: lo <= mid <= hi <= n.
            unsafe { merge(src, dst, lo, mid, hi) };
            lo = hi;
        }
        core::mem::swap(&mut src, &mut dst);
        width *= 2;
    }
    src
}

/// Reserves room for `size` u64 values and as much scratch. Called once per
/// fresh instance; calling it again just resizes (reusing and, if needed,
/// growing memory).
/// Elements sorted when no size is given.
const DEFAULT_LEN: u64 = 1024;

#[unsafe(no_mangle)]
pub extern "C" fn setup(size: i64) {
    // Without `--size` the host passes 0: sort a default of 1024 elements.
    let n = if size == 0 { DEFAULT_LEN } else { size as u64 };
    if n > MAX_LEN {
        wasm32::unreachable();
    }
    if n > 0 {
        region(n * 16);
    }
    // SAFETY: single-threaded module.
    unsafe { LEN = n as usize };
}

#[unsafe(no_mangle)]
pub extern "C" fn run(count: i64, seed: i64) -> i64 {
    let s = seed as u64;
    // SAFETY: single-threaded module.
    let (n, base) = unsafe { (LEN, BASE) };
    if count <= 0 || n == 0 {
        return splitmix64(s) as i64;
    }
    let a = base as *mut u64;
    // SAFETY: `setup` reserved `2 * n` values from `base`.
    let b = unsafe { a.add(n) };
    let mut r = s;
    for op in 0..count as u64 {
        // SAFETY: `setup` made `a[0..n]` and `b[0..n]` addressable;
        // `pause`/`resume` are plain host callbacks without arguments.
        unsafe {
            pause();
            fill(a, n, s, op);
            resume();
            let sorted = merge_sort(a, b, n);
            r = fold(r, sorted, n);
        }
    }
    r as i64
}
