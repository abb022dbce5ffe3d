//! `count` iterations each doing one unsigned 64-bit remainder by 13.
//! `mod13` and `mod16` are identical except for the constant: `% 16` can
//! compile to a mask, `% 13` cannot (compare the pair).
#![no_std]

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    core::arch::wasm32::unreachable()
}

const MODULUS: u64 = 13;

#[unsafe(no_mangle)]
pub extern "C" fn run(count: i64, seed: i64) -> i64 {
    let s = seed as u64;
    let mut r = s;
    let mut i: u64 = 0;
    let n = if count > 0 { count as u64 } else { 0 };
    while i < n {
        r = r.wrapping_add((i ^ s) % MODULUS);
        i += 1;
    }
    r as i64
}
