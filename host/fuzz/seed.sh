#!/usr/bin/env bash
# Seed the `load` target's corpus (corpus/ is not committed) with the
# project's own workloads and test fixtures: real modules, components,
# programs and .wat text, good, bad and hostile, for libFuzzer to mutate.
set -euo pipefail
cd "$(dirname "$0")"
root=../..
mkdir -p corpus/load
find "$root/workloads" "$root/tests/fixtures" -type f \( -name '*.wasm' -o -name '*.wat' \) |
    while read -r f; do
        rel=${f#"$root/"}
        cp "$f" "corpus/load/seed-${rel//\//-}"
    done
echo "corpus/load: $(ls corpus/load | wc -l) files"
