// {{name}}: a wasm-bench workload in Go (a WASI preview 1 reactor).
//
// The contract `host run` checks:
//   - `run(count, seed) -> i64` performs `count` operations starting from
//     `seed` and returns a value that depends on every one of them, so that
//     nothing can be optimised away. The host picks the seed at run time.
//     Both parameters and the result are 64-bit: `int64`.
//   - `setup(size)` (optional) is called once per instance, untimed, with the
//     `--size` of the row (0 without `--size`).
//   - Exported with `//go:wasmexport` and built as a reactor
//     (`-buildmode=c-shared`, build.sh): Go's runtime starts once per
//     instance, in `_initialize`, which the host calls before `setup`.
//     Without `-buildmode=c-shared` the module is a command, refused.
//   - More benchmarks in one module: export more `run_<name>` functions of
//     the same type; each becomes a row named `file:name`.
//   - Imports: `bench.pause` and `bench.resume` (below) to keep per-op set-up
//     out of the clock (pause as rarely as you can), and WASI preview 1,
//     which Go's runtime needs and which grants nothing.
//
// The example is a working benchmark of a xorshift64 step; replace the
// marked operation with yours.
package main

//go:wasmimport bench pause
func pause()

//go:wasmimport bench resume
func resume()

var size int64

//go:wasmexport setup
func setup(s int64) {
	size = s // prepare inputs of this size here: setup is not timed
}

//go:wasmexport run
func run(count int64, seed int64) int64 {
	x := uint64(seed) | 1 // xorshift64 state: never zero
	acc := uint64(size)
	for i := int64(0); i < count; i++ {
		// --- one operation (replace it), folded into acc
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		acc = (acc<<1 | acc>>63) ^ x
		// ---
	}
	return int64(acc)
}

// main is not called in a reactor; Go requires it in package main.
func main() {}
