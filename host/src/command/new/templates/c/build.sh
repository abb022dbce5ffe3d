#!/usr/bin/env bash
# Build {{name}}.wasm with clang and wasi-libc (Debian: apt install clang
# lld wasi-libc; elsewhere set WASI_SYSROOT, e.g. wasi-sdk's share/wasi-sysroot).
set -euo pipefail
cd "$(dirname "$0")"
"${CC:-clang}" --target=wasm32-wasi --sysroot="${WASI_SYSROOT:-/usr}" -O2 \
    -nostartfiles -Wl,--no-entry -o {{name}}.wasm {{name}}.c
echo "built {{name}}.wasm"
