/* {{name}}: a wasm-bench workload in C (a core wasm module).
 *
 * The contract `host run` checks:
 * - `run(count, seed) -> i64` performs `count` operations starting from
 *   `seed` and returns a value that depends on every one of them, so that
 *   nothing can be optimised away. The host picks the seed at run time.
 *   Both parameters and the result are 64-bit: `int64_t`, not `int`.
 * - `setup(size)` (optional) is called once per instance, untimed, with the
 *   `--size` of the row (0 without `--size`).
 * - Exported by name (`export_name`), with no `main`, built as a WASI
 *   reactor (build.sh: `-mexec-model=reactor`): static constructors run
 *   once per instance, through `_initialize`, never inside `run`.
 * - More benchmarks in one module: export more `run_<name>` functions of
 *   the same type; each becomes a row named `file:name`.
 * - Imports: `bench.pause` and `bench.resume` (below), and WASI preview 1
 *   with nothing granted if the C library needs it.
 *
 * The example is a working benchmark of a xorshift64 step; replace the
 * marked operation with yours. */
#include <stdint.h>

#ifdef __wasm__
#define EXPORT(name) __attribute__((export_name(name)))
#define BENCH_IMPORT(name) __attribute__((import_module("bench"), import_name(name)))

/* Per-op set-up that must not be timed goes between pause() and resume():
 * pause as rarely as you can (each pair adds noise). Unused here. */
BENCH_IMPORT("pause") void pause(void);
BENCH_IMPORT("resume") void resume(void);
#else
/* The same source as native code ({{name}}.so, build.sh's second step), to
 * compare with the wasm: `host compare {{name}}.wasm {{name}}.so`. Native
 * code has no pause: the time between these counts. */
#define EXPORT(name) __attribute__((visibility("default")))
static inline void pause(void) {}
static inline void resume(void) {}
#endif

static int64_t size;

EXPORT("setup") void setup(int64_t s) {
    size = s; /* prepare inputs of this size here: setup is not timed */
}

EXPORT("run") int64_t run(int64_t count, int64_t seed) {
    uint64_t x = (uint64_t)seed | 1; /* xorshift64 state: never zero */
    uint64_t acc = (uint64_t)size;
    for (int64_t i = 0; i < count; i++) {
        /* --- one operation (replace it), folded into acc */
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        acc = (acc << 1 | acc >> 63) ^ x;
        /* --- */
    }
    return (int64_t)acc;
}
