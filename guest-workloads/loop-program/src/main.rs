//! `loop`: a loop-heavy program workload (the Sightglass protocol), a WASI
//! preview1 command.
//!
//! Reads n from `./loop.input.txt` (its folder is preopened read-only as
//! `.`), then, between `bench.start()` and `bench.end()`, runs n steps of a
//! xorshift64 generator folded into a checksum (a tight loop with no calls),
//! and prints `loop(n) = CHECKSUM` (hex) on stdout. The input comes from a
//! file so that the compiler cannot fold the work into a constant.

use std::process::ExitCode;

#[link(wasm_import_module = "bench")]
unsafe extern "C" {
    fn start();
    fn end();
}

const INPUT: &str = "./loop.input.txt";

fn spin(n: u64) -> u64 {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut sum: u64 = 0;
    for i in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        sum = sum.rotate_left(5) ^ x.wrapping_add(i);
    }
    sum
}

fn main() -> ExitCode {
    let n: u64 = match std::fs::read_to_string(INPUT)
        .ok()
        .and_then(|text| text.trim().parse().ok())
    {
        Some(n) => n,
        None => {
            eprintln!("loop: cannot read n from {INPUT}");
            return ExitCode::FAILURE;
        }
    };
    // SAFETY: the host's bench.start/bench.end take nothing and return nothing.
    unsafe { start() };
    let sum = spin(std::hint::black_box(n));
    // SAFETY: as above.
    unsafe { end() };
    println!("loop({n}) = {sum:016x}");
    ExitCode::SUCCESS
}
