#!/usr/bin/env bash
# Rebuild every bundled guest workload into ../workloads/<name>.wasm: the core
# modules (wasm32-unknown-unknown) and the components (wasm32-wasip2, against
# ../wit/workload.wit).
# Works from any current directory and any clone location; the output is
# byte-for-byte reproducible (no absolute paths are embedded).
set -euo pipefail

here="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
cd "$here"

core_target=wasm32-unknown-unknown
component_target=wasm32-wasip2
core_workloads=(empty xor mod13 mod16 remove sort-insertion sort-merge chain100 chain101)
component_workloads=(empty-component xor-component remove-component)
out_dir="../workloads"

installed="$(rustup target list --installed)"
for target in "$core_target" "$component_target"; do
    if ! grep -qx "$target" <<<"$installed"; then
        rustup target add "$target"
    fi
done

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

# build <target> <crate>...: build the crates for one target.
build() {
    local target="$1"
    shift
    local packages=()
    for name in "$@"; do
        packages+=(-p "$name")
    done
    cargo build --release --locked --target "$target" "${packages[@]}"
}

# install <target> <crate>...: copy the built crates to workloads/<crate>.wasm
# (cargo names the file after the lib, with `_` for `-`).
install() {
    local target="$1"
    shift
    for name in "$@"; do
        cp "target/$target/release/${name//-/_}.wasm" "$out_dir/$name.wasm"
        printf 'wrote workloads/%s.wasm (%s bytes)\n' "$name" "$(wc -c < "$out_dir/$name.wasm" | tr -d ' ')"
    done
}

build "$core_target" "${core_workloads[@]}"
build "$component_target" "${component_workloads[@]}"

mkdir -p "$out_dir"
install "$core_target" "${core_workloads[@]}"
install "$component_target" "${component_workloads[@]}"
