// {{name}}: a wasm-bench workload in AssemblyScript (a core wasm module).
//
// The contract `host run` checks:
// - `run(count, seed) -> i64` performs `count` operations starting from
//   `seed` and returns a value that depends on every one of them, so that
//   nothing can be optimised away. The host picks the seed at run time.
// - `setup(size)` (optional) is called once per instance, untimed, with the
//   `--size` of the row (0 without `--size`).
// - No `env.abort` import: build.sh compiles with `--use abort=` (a failed
//   assertion then traps, and the row says so).
// - More benchmarks in one module: export more `run_<name>` functions of
//   the same type; each becomes a row named `file:name`.
// - Imports: optionally `bench.pause` and `bench.resume`, to keep per-op
//   set-up out of the clock (pause as rarely as you can):
//     @external("bench", "pause") declare function pause(): void;
//     @external("bench", "resume") declare function resume(): void;
//
// The example is a working benchmark of a xorshift64 step; replace the
// marked operation with yours.

let size: i64 = 0;

export function setup(s: i64): void {
  size = s; // prepare inputs of this size here: setup is not timed
}

export function run(count: i64, seed: i64): i64 {
  let x: u64 = <u64>seed | 1; // xorshift64 state: never zero
  let acc: u64 = <u64>size;
  for (let i: i64 = 0; i < count; i++) {
    // --- one operation (replace it), folded into acc
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    acc = rotl<u64>(acc, 1) ^ x;
    // ---
  }
  return <i64>acc;
}
