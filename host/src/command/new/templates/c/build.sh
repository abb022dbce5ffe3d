#!/usr/bin/env bash
# Build {{name}}.wasm with clang and wasi-libc (Debian: apt install clang
# lld wasi-libc libclang-rt-dev-wasm32; elsewhere set WASI_SYSROOT, e.g.
# wasi-sdk's share/wasi-sysroot). A WASI reactor (-mexec-model=reactor): its
# _initialize runs the constructors once per instance, not on every call.
set -euo pipefail
cd "$(dirname "$0")"
"${CC:-clang}" --target=wasm32-wasi --sysroot="${WASI_SYSROOT:-/usr}" -O2 \
    -mexec-model=reactor -o {{name}}.wasm {{name}}.c
echo "built {{name}}.wasm"
# The same source as native code, to compare with the wasm (not sandboxed:
# `host compare {{name}}.wasm {{name}}.so`); skipped without a native clang.
if "${CC:-clang}" -O2 -shared -fPIC -o {{name}}.so {{name}}.c 2>/dev/null; then
    echo "built {{name}}.so (native code)"
else
    echo "did not build {{name}}.so (native code): ${CC:-clang} cannot build a shared library here"
fi
