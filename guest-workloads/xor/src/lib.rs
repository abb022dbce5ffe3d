//! `count` iterations of a one-cycle dependent xor: measures loop overhead
//! plus the cheapest possible ALU op per iteration.
#![no_std]

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    core::arch::wasm32::unreachable()
}

#[unsafe(no_mangle)]
pub extern "C" fn run(count: i64, seed: i64) -> i64 {
    let mut r = seed;
    for i in 0..count {
        r ^= i ^ seed;
    }
    r
}
