#!/usr/bin/env bash
# Rebuild every bundled guest workload into ../workloads/<name>.wasm.
# Works from any current directory and any clone location; the output is
# byte-for-byte reproducible (no absolute paths are embedded).
set -euo pipefail

here="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
cd "$here"

target=wasm32-unknown-unknown
workloads=(empty xor mod13 mod16 remove)
out_dir="../workloads"

if ! rustup target list --installed | grep -qx "$target"; then
    rustup target add "$target"
fi

# Remap the checkout, cargo registry and toolchain paths so that panic
# locations or other embedded paths never depend on where this runs.
sysroot="$(rustc --print sysroot)"
# (CARGO_ENCODED_RUSTFLAGS: 0x1f-separated, so paths may contain spaces;
# it also overrides any RUSTFLAGS / config rustflags of the caller.)
sep=$'\x1f'
flags="--remap-path-prefix=$here=/guest-workloads"
flags+="$sep--remap-path-prefix=${CARGO_HOME:-$HOME/.cargo}=/cargo"
flags+="$sep--remap-path-prefix=$sysroot=/rustc"
export CARGO_ENCODED_RUSTFLAGS="$flags"
unset RUSTFLAGS CARGO_BUILD_RUSTFLAGS
export CARGO_TARGET_DIR="$here/target"

cargo build --release --locked --target "$target"

mkdir -p "$out_dir"
for name in "${workloads[@]}"; do
    src="target/$target/release/$name.wasm"
    cp "$src" "$out_dir/$name.wasm"
    printf 'wrote workloads/%s.wasm (%s bytes)\n' "$name" "$(wc -c < "$out_dir/$name.wasm" | tr -d ' ')"
done
