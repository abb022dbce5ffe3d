//! `steps100` and `steps101`: WASI preview1 commands (the Sightglass
//! protocol) whose work differs by a known 1%.
//!
//! Each reads its step count from its input file (its folder is preopened
//! read-only as `.`), so that the compiler cannot fold the work into a
//! constant, then, between `bench.start()` and `bench.end()`, takes that
//! many dependent steps of a xorshift64 generator folded into a checksum
//! (each step needs the one before: no instruction-level parallelism to
//! hide a longer loop), and prints `steps(n) = CHECKSUM` (hex) on stdout.
//! The input files hold 1000000 and 1010000.

use std::process::ExitCode;

#[link(wasm_import_module = "bench")]
unsafe extern "C" {
    fn start();
    fn end();
}

fn steps(n: u64) -> u64 {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut sum: u64 = 0;
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        sum = sum.wrapping_mul(31) ^ x;
    }
    sum
}

/// The program: read n from `input`, time n steps, print the checksum.
pub fn main(input: &str) -> ExitCode {
    let n: u64 = match std::fs::read_to_string(input)
        .ok()
        .and_then(|text| text.trim().parse().ok())
    {
        Some(n) => n,
        None => {
            eprintln!("steps: cannot read n from {input}");
            return ExitCode::FAILURE;
        }
    };
    // SAFETY: the host's bench.start/bench.end take nothing and return nothing.
    unsafe { start() };
    let sum = steps(std::hint::black_box(n));
    // SAFETY: as above.
    unsafe { end() };
    println!("steps({n}) = {sum:016x}");
    ExitCode::SUCCESS
}
