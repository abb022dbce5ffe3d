/* search: a binary search over 65,536 sorted 64-bit keys, one lookup per
 * operation, the key drawn from a xorshift64 sequence started at the seed.
 * One source, built two ways by ../build.sh: a core wasm module
 * (workloads/search.wasm, clang --target=wasm32, no C library) and a native
 * shared library (search.so, clang -shared, built on demand and not
 * committed), so that `host compare search.wasm search.so` says what wasm
 * costs against native code. */
#include <stdint.h>

#ifdef __wasm__
#define EXPORT(name) __attribute__((export_name(name)))
#else
#define EXPORT(name) __attribute__((visibility("default")))
#endif

#define KEYS 65536

static int64_t keys[KEYS];

/* The keys: 0, 3, 6, ...: a lookup of x mod 3*KEYS finds a key one time
 * in three. */
EXPORT("setup") void setup(int64_t size) {
    (void)size;
    for (int64_t i = 0; i < KEYS; i++) {
        keys[i] = 3 * i;
    }
}

/* The index of the first key >= `key`. */
static int64_t lower_bound(int64_t key) {
    int64_t low = 0;
    int64_t n = KEYS;
    while (n > 0) {
        int64_t half = n / 2;
        if (keys[low + half] < key) {
            low += half + 1;
            n -= half + 1;
        } else {
            n = half;
        }
    }
    return low;
}

EXPORT("run") int64_t run(int64_t count, int64_t seed) {
    uint64_t x = (uint64_t)seed | 1;
    int64_t acc = 0;
    for (int64_t i = 0; i < count; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        acc += lower_bound((int64_t)(x % (3 * KEYS)));
    }
    return acc;
}
