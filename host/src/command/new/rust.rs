//! The Rust scaffold: a crate built for wasm32-unknown-unknown into a core
//! module (`no_std` there), and the same source for the machine into a
//! native shared library to compare with it.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::{RUST_TARGET, Scaffold, make_folder, shell_path, under, write_new};

pub(super) fn create_rust(name: &str, parent: &Path) -> Result<Scaffold> {
    let dir = under(parent, name);
    make_folder(&dir)?;
    let written = write_rust_files(name, &dir);
    if written.is_err() {
        // The folder is ours (create_dir just made it): leave nothing half-done.
        let _ = fs::remove_dir_all(&dir);
    }
    let files = written?;
    let wasm = rust_wasm_path(name);
    Ok(Scaffold {
        files,
        build_command: format!(
            "cd {} && cargo build --release --target {RUST_TARGET}",
            shell_path(&dir)
        ),
        run_command: format!("host run {}", shell_path(&dir.join(wasm))),
    })
}

/// Where cargo puts the module, relative to the crate folder.
pub(super) fn rust_wasm_path(name: &str) -> String {
    format!(
        "target/{RUST_TARGET}/release/{}.wasm",
        name.replace('-', "_")
    )
}

/// Where cargo puts the native library (built for the machine), relative
/// to the crate folder.
pub(super) fn rust_native_path(name: &str) -> String {
    format!("target/release/lib{}.so", name.replace('-', "_"))
}

fn write_rust_files(name: &str, dir: &Path) -> Result<Vec<PathBuf>> {
    let src = dir.join("src");
    fs::create_dir(&src).with_context(|| format!("cannot create `{}`", src.display()))?;
    let files = [
        (dir.join("Cargo.toml"), rust_cargo_toml(name)),
        (src.join("lib.rs"), rust_lib_rs(name)),
        (dir.join("README.md"), rust_readme(name)),
        (dir.join(".gitignore"), "/target\n".to_string()),
    ];
    for (path, contents) in &files {
        write_new(path, contents)?;
    }
    Ok(files.into_iter().map(|(path, _)| path).collect())
}

fn rust_cargo_toml(name: &str) -> String {
    format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"
publish = false

[lib]
# A cdylib is a core wasm module for wasm32-unknown-unknown, and for the
# machine a shared library (target/release/lib{lib}.so), native code to
# compare with.
crate-type = ["cdylib"]
path = "src/lib.rs"

# A workspace of its own: building here never joins an enclosing workspace.
[workspace]

[profile.release]
opt-level = 3
lto = true
codegen-units = 1
panic = "abort"
strip = true
"#,
        lib = name.replace('-', "_")
    )
}

fn rust_lib_rs(name: &str) -> String {
    format!(
        r#"//! {name}: a wasm-bench workload (a core wasm module), and the same source
//! as native code (a shared library) to compare with it.
//!
//! The contract `host run` checks:
//! - `run(count, seed) -> i64` performs `count` operations starting from
//!   `seed` and returns a value that depends on every one of them, so that
//!   nothing can be optimised away. The host picks the seed at run time.
//! - `setup(size)` (optional) is called once per instance, untimed, before
//!   anything is measured, with the `--size` of the row (0 without `--size`).
//! - The module imports nothing, except optionally `bench.pause` and
//!   `bench.resume` (see below).
//! - More benchmarks in one module: export more `run_<name>` functions of
//!   the same type; each becomes a row named `file:name`.
//!
//! The example below is a working benchmark of a xorshift64 step; replace
//! the body of the loop in `run` with the operation you want to measure.
//! Built for wasm the crate is `no_std` (nothing but `core`); built for the
//! machine it links the standard library, which brings its panic handler.
#![cfg_attr(target_arch = "wasm32", no_std)]

use core::sync::atomic::{{AtomicI64, Ordering}};

#[cfg(target_arch = "wasm32")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {{
    core::arch::wasm32::unreachable()
}}

/// The input size given to `setup` (0 when `host run` has no `--size`).
static SIZE: AtomicI64 = AtomicI64::new(0);

#[unsafe(no_mangle)]
pub extern "C" fn setup(size: i64) {{
    SIZE.store(size, Ordering::Relaxed);
    // Prepare inputs of this size here (e.g. grow memory and fill a table):
    // setup is not timed.
}}

#[unsafe(no_mangle)]
pub extern "C" fn run(count: i64, seed: i64) -> i64 {{
    let mut x = (seed as u64) | 1; // xorshift64 state: never zero
    let mut acc = SIZE.load(Ordering::Relaxed) as u64;
    for _ in 0..count {{
        // One operation (replace it): a xorshift64 step, folded into `acc`
        // so that the result depends on every iteration.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        acc = acc.rotate_left(1) ^ x;
    }}
    acc as i64
}}

// Per-op set-up that must not be timed goes between `bench.pause()` and
// `bench.resume()`. To use them, declare the imports for wasm, and for
// native code (which has no pause: the time between them counts) functions
// that do nothing:
//
// #[cfg(target_arch = "wasm32")]
// #[link(wasm_import_module = "bench")]
// unsafe extern "C" {{
//     fn pause();
//     fn resume();
// }}
// #[cfg(not(target_arch = "wasm32"))]
// unsafe fn pause() {{}}
// #[cfg(not(target_arch = "wasm32"))]
// unsafe fn resume() {{}}
//
// and in `run`:
//
//     // SAFETY: host callbacks without arguments.
//     unsafe {{ pause() }};
//     // ... prepare the inputs of the `count` operations, untimed ...
//     unsafe {{ resume() }};
//
// The cost of a pause/resume pair is calibrated and subtracted once per
// pause, but every pair adds noise: pause as rarely as you can (once per
// `run` call, not once per operation).
"#
    )
}

fn rust_readme(name: &str) -> String {
    let wasm = rust_wasm_path(name);
    let native = rust_native_path(name);
    format!(
        r#"# {name}

A wasm-bench workload: a Rust crate built into a core wasm module (`no_std`)
that exports `run(count, seed) -> i64` and `setup(size)`. Replace the example operation in `src/lib.rs` with yours.

Build (in this folder; once: `rustup target add {RUST_TARGET}`):

    cargo build --release --target {RUST_TARGET}

The module is then `{wasm}` (unless `CARGO_TARGET_DIR` is set). Measure it:

    host run {wasm}

Other flags of `host run` apply, e.g. `--size 1000` (passed to `setup`) or
`host compare` against another variant.

To see what wasm costs, build the same source as native code, a shared
library for this machine (native code is not sandboxed: it runs with your
rights), and compare the two:

    cargo build --release
    host compare {wasm} {native}

The verdict names the sides by what they are (the library's `lib` prefix
dropped): `{lib} (wasm)` and `{lib} (native)`.
"#,
        lib = name.replace('-', "_")
    )
}
