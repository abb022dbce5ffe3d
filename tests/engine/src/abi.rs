//! The configuration bench-api's `wasm_bench_create` takes, field for field
//! as wasmtime's `crates/bench-api` declares it (`#[repr(C)]`).

/// A timer callback: given the timer pointer of its phase.
pub type TimerFn = extern "C" fn(*mut u8);

/// What an engine is created with.
#[repr(C)]
pub struct WasmBenchConfig {
    /// The working directory, preopened as `.`.
    pub working_dir_ptr: *const u8,
    pub working_dir_len: usize,
    /// The file created and used as stdout.
    pub stdout_path_ptr: *const u8,
    pub stdout_path_len: usize,
    /// The file created and used as stderr.
    pub stderr_path_ptr: *const u8,
    pub stderr_path_len: usize,
    /// The file used as stdin (null: none).
    pub stdin_path_ptr: *const u8,
    pub stdin_path_len: usize,
    pub compilation_timer: *mut u8,
    pub compilation_start: TimerFn,
    pub compilation_end: TimerFn,
    pub instantiation_timer: *mut u8,
    pub instantiation_start: TimerFn,
    pub instantiation_end: TimerFn,
    pub execution_timer: *mut u8,
    pub execution_start: TimerFn,
    pub execution_end: TimerFn,
    /// Engine flags, in wasmtime's CLI spelling (null: none).
    pub execution_flags_ptr: *const u8,
    pub execution_flags_len: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// 19 pointer-sized fields, in bench-api's order.
    #[test]
    fn layout_is_bench_apis() {
        let word = size_of::<usize>();
        assert_eq!(size_of::<WasmBenchConfig>(), 19 * word);
        assert_eq!(offset_of!(WasmBenchConfig, stdout_path_ptr), 2 * word);
        assert_eq!(offset_of!(WasmBenchConfig, stdin_path_len), 7 * word);
        assert_eq!(offset_of!(WasmBenchConfig, compilation_timer), 8 * word);
        assert_eq!(offset_of!(WasmBenchConfig, instantiation_timer), 11 * word);
        assert_eq!(offset_of!(WasmBenchConfig, execution_timer), 14 * word);
        assert_eq!(offset_of!(WasmBenchConfig, execution_end), 16 * word);
        assert_eq!(offset_of!(WasmBenchConfig, execution_flags_ptr), 17 * word);
        assert_eq!(offset_of!(WasmBenchConfig, execution_flags_len), 18 * word);
    }
}
