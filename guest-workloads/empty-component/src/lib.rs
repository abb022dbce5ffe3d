//! Baseline component: does no work. Measures the fixed cost of one
//! host -> guest `run` call through the component model.
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
    /// Nothing to prepare.
    fn setup(_size: u64) {}

    /// Returns `seed` unchanged, whatever `count` is.
    fn run(_count: u64, seed: u64) -> u64 {
        seed
    }
}

export!(Workload);
