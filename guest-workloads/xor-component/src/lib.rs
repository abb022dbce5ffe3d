//! The core `xor` workload as a component: `count` iterations of a
//! one-cycle dependent xor, `r ^= i ^ seed` (on u64), with exactly the loop
//! of `../xor`, so that the per-op time of the two can be compared.
#![no_std]

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
    core::arch::wasm32::unreachable()
}

struct Workload;

impl Guest for Workload {
    /// Nothing to prepare (the world requires the export).
    fn setup(_size: u64) {}

    fn run(count: u64, seed: u64) -> u64 {
        let mut r = seed;
        for i in 0..count {
            r ^= i ^ seed;
        }
        r
    }
}

export!(Workload);
