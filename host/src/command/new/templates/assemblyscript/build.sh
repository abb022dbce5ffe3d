#!/usr/bin/env bash
# Build {{name}}.wasm with AssemblyScript (Node.js and npm; the compiler is
# installed into node_modules/ on the first build).
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -d node_modules/assemblyscript ]; then
    npm install --no-fund --no-audit --silent
fi
npx asc {{name}}.ts -O3 --use abort= -o {{name}}.wasm
echo "built {{name}}.wasm"
