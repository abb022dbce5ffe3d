//! {{name}}: a wasm-bench workload in Zig (a core wasm module).
//!
//! The contract `host run` checks:
//! - `run(count, seed) -> i64` performs `count` operations starting from
//!   `seed` and returns a value that depends on every one of them, so that
//!   nothing can be optimised away. The host picks the seed at run time.
//! - `setup(size)` (optional) is called once per instance, untimed, with the
//!   `--size` of the row (0 without `--size`).
//! - `export fn` and build.sh's flags (`wasm32-freestanding`, `-fno-entry`,
//!   `-rdynamic`) export exactly these, with no entry point; built for
//!   the machine (`build-lib -dynamic`), the same `export fn`s are the C
//!   functions of a shared library, native code to compare with.
//! - More benchmarks in one module: export more `run_<name>` functions of
//!   the same type; each becomes a row named `file:name`.
//! - Imports: optionally `bench.pause` and `bench.resume`, to keep per-op
//!   set-up out of the clock (pause as rarely as you can); native code has
//!   no pause (the time between them counts), so declare them for wasm
//!   only:
//!       const bench = if (@import("builtin").cpu.arch.isWasm()) struct {
//!           extern "bench" fn pause() void;
//!           extern "bench" fn @"resume"() void;
//!       } else struct {
//!           fn pause() void {}
//!           fn @"resume"() void {}
//!       };
//!   called as `bench.pause()` and `bench.@"resume"()` (`resume` is a
//!   Zig keyword).
//!
//! The example is a working benchmark of a xorshift64 step; replace the
//! marked operation with yours.

var size: i64 = 0;

export fn setup(s: i64) void {
    size = s; // prepare inputs of this size here: setup is not timed
}

export fn run(count: i64, seed: i64) i64 {
    var x: u64 = @as(u64, @bitCast(seed)) | 1; // xorshift64 state: never zero
    var acc: u64 = @bitCast(size);
    var i: i64 = 0;
    while (i < count) : (i += 1) {
        // --- one operation (replace it), folded into acc
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        acc = ((acc << 1) | (acc >> 63)) ^ x;
        // ---
    }
    return @bitCast(acc);
}
