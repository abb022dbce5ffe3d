//! Baseline workload: does no work. Measures the fixed cost of one
//! host -> guest `run` call (the "empty guest").
#![no_std]

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    core::arch::wasm32::unreachable()
}

/// Called once per instance before timing; nothing to prepare.
#[unsafe(no_mangle)]
pub extern "C" fn setup(_size: i64) {}

/// Returns `seed` unchanged, whatever `count` is.
#[unsafe(no_mangle)]
pub extern "C" fn run(_count: i64, seed: i64) -> i64 {
    seed
}
