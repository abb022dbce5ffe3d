#!/usr/bin/env bash
# Seed the `load` target's corpus (corpus/ is not committed) with the
# project's own workloads and test fixtures: real modules, components and
# .wat text, good and bad, for libFuzzer to mutate.
set -euo pipefail
cd "$(dirname "$0")"
root=../..
mkdir -p corpus/load
for f in "$root"/workloads/*.wasm "$root"/tests/fixtures/*.wat "$root"/tests/fixtures/*.wasm; do
    [ -f "$f" ] && cp "$f" "corpus/load/seed-$(basename "$f")"
done
echo "corpus/load: $(ls corpus/load | wc -l) files"
