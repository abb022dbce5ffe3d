//! A test engine library: wasmtime's bench-api ABI (`crates/bench-api` in
//! the wasmtime repository, which Sightglass's `-e` loads), implemented
//! over the host's own wasmtime, so that the host's loading of engine
//! libraries is tested without a wasmtime checkout. It is small on purpose
//! and not wasmtime's library: it runs WASI preview1 commands (`_start`)
//! only, with the working directory preopened as `.`, stdout and stderr
//! written to the given paths, stdin read from the given path (else empty),
//! and `WASM_BENCH_USE_SMALL_WORKLOAD` passed through; `bench.start` and
//! `bench.end` call the execution timer's callbacks. Its engine flags are a
//! small subset of wasmtime's CLI spelling ([`flags`]); without flags it
//! configures wasmtime with wasmtime's defaults, as the host's built-in
//! Cranelift engine does.
//!
//! The calls follow bench-api's state machine: `wasm_bench_create`, then
//! `wasm_bench_compile`, then any number of `wasm_bench_instantiate`, each
//! followed by at most one `wasm_bench_execute`, and `wasm_bench_free`, all
//! on one thread. Functions returning `c_int` return 0 on success and
//! nonzero on error (the error is printed on stderr, as wasmtime's does).

use std::ffi::c_void;
use std::os::raw::c_int;
use std::path::PathBuf;

use anyhow::{Context, Result};

mod abi;
pub mod flags;
mod state;

pub use abi::WasmBenchConfig;
use state::BenchState;

/// A test hook: with this variable set in the process that loads the
/// library, the library's constructor never returns, as a library whose
/// initialiser hangs would not.
pub const HANG_ON_LOAD_VAR: &str = "BENCH_ENGINE_HANG_ON_LOAD";

/// The constructor of [`HANG_ON_LOAD_VAR`], run when the library is loaded.
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static HANG_ON_LOAD: extern "C" fn() = hang_on_load;

extern "C" fn hang_on_load() {
    if std::env::var_os(HANG_ON_LOAD_VAR).is_some() {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
}

/// Success.
pub const OK: c_int = 0;
/// Failure: the error was printed on stderr.
pub const ERR: c_int = -1;

/// Create an engine from `config`; on success store it at `out_bench_ptr`
/// and return 0 (on failure `out_bench_ptr` is left untouched).
///
/// # Safety
/// The pointers of `config` must be valid for their lengths (or null where
/// bench-api allows it), its timer pointers valid for its callbacks, and
/// `out_bench_ptr` valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wasm_bench_create(
    config: WasmBenchConfig,
    out_bench_ptr: *mut *mut c_void,
) -> c_int {
    // SAFETY: the caller vouches for the pointers of `config`.
    let made = unsafe { BenchState::new(&config) };
    to_exit_code(made.map(|state| {
        // SAFETY: the caller vouches for `out_bench_ptr`.
        unsafe { *out_bench_ptr = Box::into_raw(Box::new(state)).cast() };
    }))
}

/// Free an engine made by [`wasm_bench_create`].
///
/// # Safety
/// `state` must come from [`wasm_bench_create`] and not be used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wasm_bench_free(state: *mut c_void) {
    if !state.is_null() {
        // SAFETY: the caller gives back what `wasm_bench_create` made.
        drop(unsafe { Box::from_raw(state.cast::<BenchState>()) });
    }
}

/// Compile the module in `wasm_bytes`, timed by the compilation timer.
///
/// # Safety
/// `state` must come from [`wasm_bench_create`]; `wasm_bytes` must be
/// valid for `wasm_bytes_length` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wasm_bench_compile(
    state: *mut c_void,
    wasm_bytes: *const u8,
    wasm_bytes_length: usize,
) -> c_int {
    // SAFETY: the caller vouches for both.
    let (state, bytes) = unsafe {
        (
            state.cast::<BenchState>().as_mut(),
            std::slice::from_raw_parts(wasm_bytes, wasm_bytes_length),
        )
    };
    to_exit_code(
        state
            .context("no engine")
            .and_then(|s| s.compile(bytes))
            .context("failed to compile"),
    )
}

/// Instantiate the compiled module, timed by the instantiation timer.
///
/// # Safety
/// `state` must come from [`wasm_bench_create`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wasm_bench_instantiate(state: *mut c_void) -> c_int {
    // SAFETY: the caller vouches for `state`.
    let state = unsafe { state.cast::<BenchState>().as_mut() };
    to_exit_code(
        state
            .context("no engine")
            .and_then(BenchState::instantiate)
            .context("failed to instantiate"),
    )
}

/// Run the instance's `_start`; the program's `bench.start`/`bench.end`
/// call the execution timer.
///
/// # Safety
/// `state` must come from [`wasm_bench_create`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wasm_bench_execute(state: *mut c_void) -> c_int {
    // SAFETY: the caller vouches for `state`.
    let state = unsafe { state.cast::<BenchState>().as_mut() };
    to_exit_code(
        state
            .context("no engine")
            .and_then(BenchState::execute)
            .context("failed to execute"),
    )
}

/// 0 for success; else the error, printed on stderr, and nonzero.
fn to_exit_code(result: Result<()>) -> c_int {
    match result {
        Ok(()) => OK,
        Err(error) => {
            eprintln!("{error:?}");
            ERR
        }
    }
}

/// A path given as a pointer and a length; `None` for a null pointer.
///
/// # Safety
/// A non-null `ptr` must be valid for `len` bytes.
unsafe fn path(ptr: *const u8, len: usize, what: &str) -> Result<Option<PathBuf>> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: the caller vouches for the pointer.
    let bytes = unsafe { std::slice::from_raw_parts(ptr, len) };
    let text = std::str::from_utf8(bytes).with_context(|| format!("the {what} is not UTF-8"))?;
    Ok(Some(PathBuf::from(text)))
}
