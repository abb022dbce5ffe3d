#!/usr/bin/env bash
# Rebuild every bundled guest workload into ../workloads/<name>.wasm: the core
# modules (wasm32-unknown-unknown; C ones with clang, and their native .so
# into target/native/), the components (wasm32-wasip2, against
# ../wit/workload.wit) and the programs (WASI preview1 commands following the
# Sightglass protocol, wasm32-wasip1; crate `<name>-program` becomes
# <name>.wasm), plus the programs' generated inputs (wc.input.txt).
# Works from any current directory and any clone location; the output is
# byte-for-byte reproducible (no absolute paths are embedded).
set -euo pipefail

here="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
cd "$here"

core_target=wasm32-unknown-unknown
component_target=wasm32-wasip2
program_target=wasm32-wasip1
core_workloads=(empty xor mod13 mod16 remove sort-insertion sort-merge chain100 chain101 chain200 chain201 chain400 chain401)
component_workloads=(empty-component xor-component remove-component)
program_workloads=(wc-program fib-program loop-program)
# Programs built as several commands of one crate: <crate> <command>...
program_crate=steps-program
program_commands=(steps100-program steps101-program)
# Core modules written in WAT (wat/<name>.wat), where the instructions
# themselves are the point (a branch against a select).
wat_workloads=(search-branchy search-branchless)
# Workloads written in C (c/<name>.c), built with clang as core modules
# with no C library; the same source builds a native shared library
# (target/native/<name>.so, by the same clang, not committed) that `host compare x.wasm x.so`
# measures against the module.
c_workloads=(search)
out_dir="../workloads"

installed="$(rustup target list --installed)"
for target in "$core_target" "$component_target" "$program_target"; do
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

# install_program <crate>...: copy the built commands (bins keep their `-`)
# to workloads/<crate without -program>.wasm.
install_program() {
    for name in "$@"; do
        local short="${name%-program}"
        cp "target/$program_target/release/$name.wasm" "$out_dir/$short.wasm"
        printf 'wrote workloads/%s.wasm (%s bytes)\n' "$short" "$(wc -c < "$out_dir/$short.wasm" | tr -d ' ')"
    done
}

# gen_wc_input <file>: write the input of the wc program, ~256 KiB of
# pseudo-words (1-4 syllables from a skewed pick, so a few words are far more
# frequent than most; occasional punctuation), 0-15 words a line (0 = an empty
# line), separated by a space, sometimes two spaces or a tab. Deterministic:
# a fixed-seed 31-bit LCG in shell arithmetic (never overflows 64 bits), ASCII
# only, no dependence on locale, bash version or platform.
gen_wc_input() {
    local LC_ALL=C
    local -a syl=(ka to ri mu ne so la vi en or an ut be de fi go
                  hu ja ke lo ma no pe qu ra se ti ul va we xo yi)
    local -a punct=("," "." ";" ":" "!" "?")
    local x=20240601 total=0 target=262144 line word n i k r
    local text=""
    while (( total < target )); do
        x=$(( (x * 1103515245 + 12345) & 0x7fffffff )); r=$(( x >> 16 ))
        n=$(( r % 16 ))
        line=""
        for (( i = 0; i < n; i++ )); do
            x=$(( (x * 1103515245 + 12345) & 0x7fffffff )); r=$(( x >> 16 ))
            k=$(( 1 + (r & 3) * (r >> 2 & 3) / 3 ))
            word=""
            while (( k-- > 0 )); do
                x=$(( (x * 1103515245 + 12345) & 0x7fffffff )); r=$(( x >> 16 ))
                word+=${syl[ (r & 31) * (r >> 5 & 31) / 31 ]}
            done
            (( r >> 10 & 15 )) || word+=${punct[ (r >> 5) % 6 ]}
            if (( i > 0 )); then
                case $(( r >> 11 & 31 )) in
                    0) line+=$'\t' ;;
                    1) line+="  " ;;
                    *) line+=" " ;;
                esac
            fi
            line+=$word
        done
        text+=$line$'\n'
        total=$(( total + ${#line} + 1 ))
    done
    printf '%s' "$text" > "$1"
    printf 'wrote workloads/%s (%s bytes)\n' "${1##*/}" "$(wc -c < "$1" | tr -d ' ')"
}

build "$core_target" "${core_workloads[@]}"
build "$component_target" "${component_workloads[@]}"
build "$program_target" "${program_workloads[@]}" "$program_crate"

mkdir -p "$out_dir"
install "$core_target" "${core_workloads[@]}"
install "$component_target" "${component_workloads[@]}"
install_program "${program_workloads[@]}" "${program_commands[@]}"
# The native tool runs on the machine's own target, without the remapping
# flags' effect on its output (it embeds no path in what it writes).
cargo build --release --locked -p wat2wasm
for name in "${wat_workloads[@]}"; do
    target/release/wat2wasm "wat/$name.wat" "$out_dir/$name.wasm"
    printf 'wrote workloads/%s.wasm (%s bytes)\n' "$name" "$(wc -c < "$out_dir/$name.wasm" | tr -d ' ')"
done
for name in "${c_workloads[@]}"; do
    "${CLANG:-clang}" --target=wasm32 -nostdlib -O2 -Wl,--no-entry -o "$out_dir/$name.wasm" "c/$name.c"
    printf 'wrote workloads/%s.wasm (%s bytes)\n' "$name" "$(wc -c < "$out_dir/$name.wasm" | tr -d ' ')"
    mkdir -p target/native
    "${CLANG:-clang}" -O2 -shared -fPIC -o "target/native/$name.so" "c/$name.c"
    printf 'wrote guest-workloads/target/native/%s.so\n' "$name"
done
# The programs' inputs. (Their <name>.stdout.expected / .stderr.expected are
# committed, not generated: producing them needs a WASI runtime.)
gen_wc_input "$out_dir/wc.input.txt"
