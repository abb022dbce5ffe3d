#!/usr/bin/env bash
# Build {{name}}.wasm with Zig (`zig` on the PATH, else `pip install ziglang`).
set -euo pipefail
cd "$(dirname "$0")"
if command -v zig >/dev/null 2>&1; then zig=(zig); else zig=(python3 -m ziglang); fi
"${zig[@]}" build-exe {{name}}.zig -target wasm32-freestanding -fno-entry -rdynamic \
    -O ReleaseFast -femit-bin={{name}}.wasm
echo "built {{name}}.wasm"
# The same source as native code, a shared library for this machine, to
# compare with the wasm (not sandboxed: `host compare {{name}}.wasm {{name}}.so`).
"${zig[@]}" build-lib {{name}}.zig -dynamic -O ReleaseFast -femit-bin={{name}}.so
echo "built {{name}}.so (native code)"
