//! `fib`: a call-heavy program workload (the Sightglass protocol), a WASI
//! preview1 command.
//!
//! Reads n from `./fib.input.txt` (its folder is preopened read-only as
//! `.`), then, between `bench.start()` and `bench.end()`, computes the n-th
//! Fibonacci number by naive recursion (about 1.6^n calls, none of them
//! inlined away), and prints `fib(n) = F` on stdout. The input comes from a
//! file so that the compiler cannot fold the work into a constant.

use std::process::ExitCode;

#[link(wasm_import_module = "bench")]
unsafe extern "C" {
    fn start();
    fn end();
}

const INPUT: &str = "./fib.input.txt";

#[inline(never)]
fn fib(n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    fib(n - 1).wrapping_add(fib(n - 2))
}

fn main() -> ExitCode {
    let n: u32 = match std::fs::read_to_string(INPUT)
        .ok()
        .and_then(|text| text.trim().parse().ok())
    {
        Some(n) => n,
        None => {
            eprintln!("fib: cannot read n from {INPUT}");
            return ExitCode::FAILURE;
        }
    };
    // SAFETY: the host's bench.start/bench.end take nothing and return nothing.
    unsafe { start() };
    let f = fib(std::hint::black_box(n));
    // SAFETY: as above.
    unsafe { end() };
    println!("fib({n}) = {f}");
    ExitCode::SUCCESS
}
