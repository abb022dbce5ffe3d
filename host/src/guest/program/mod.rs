//! Programs: WASI commands timed by the Sightglass protocol, and what a
//! program sees and is held to under every runtime ([`World`]); each
//! runtime's own iterations are in its folder of [`crate::guest::runtime`].
//!
//! A program is a WASI preview1 command module (exports `_start`, may
//! import `bench.start()` and `bench.end()`) or a WASI preview 2 command
//! component (exports `wasi:cli/run@0.2.x`, may import a `bench` instance
//! with `start` and `end`). Compiled once, each iteration is a fresh
//! instance: instantiate (timed; building the WASI context is not), run,
//! and time each region between `bench.start` and `bench.end`: several
//! pairs are several execution samples, a second `start` restarts the
//! clock, `end` before `start` is an error. A program that calls neither is
//! timed over the whole run, and so is one that imports `bench.start` but
//! not `bench.end`; the report says which.
//!
//! What the guest sees: the program's folder preopened read-only as `.`
//! and as `/` (where Go's runtime looks; not when `--dir` names `/`),
//! no arguments, no environment but `WASM_BENCH_USE_SMALL_WORKLOAD` (passed
//! through when the host has it), empty stdin, unless granted more
//! (`--dir`, `--env`, `--arg`). Stdout and stderr are captured per
//! iteration and compared line by line, as text (line endings and a final
//! newline do not count), with `<name>.stdout.expected` /
//! `<name>.stderr.expected`, else `default.*.expected`, beside the
//! program; a missing file checks nothing. Success is a normal return or
//! exit code 0.
//!
//! Here: `world`, what a program sees and the checks after each run;
//! `output`, the checks of what a program wrote.

pub(crate) mod output;
#[cfg(test)]
mod tests;
pub mod world;

pub(crate) use output::CAPTURE_LIMIT;
pub use output::same_lines;
pub use world::{Iteration, SMALL_WORKLOAD_VAR, TimedRegion, World};
