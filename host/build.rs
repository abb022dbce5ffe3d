//! The runtimes' versions, read from the workspace's `Cargo.lock` at build
//! time (`WASM_BENCH_VERSION_<CRATE>`, read with `env!` by each runtime's
//! module), so that the version a report names is the one built in.
//!
//! The script also exists for `[build-dependencies]` in Cargo.toml, which
//! turn on for the build platform the features the optional runtimes'
//! build dependencies turn on, so that one build of wasmtime serves the
//! default build and `--features all-engines`.

use std::path::PathBuf;

/// The crates whose versions the host names.
const CRATES: [&str; 4] = ["wasmtime", "wasmer", "wasmi", "tinywasm"];

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    let lock = manifest.and_then(|m| Some(m.parent()?.join("Cargo.lock")));
    let text = match &lock {
        Some(lock) => {
            println!("cargo::rerun-if-changed={}", lock.display());
            // The workspace's own lock file, not a guest's file.
            #[allow(clippy::disallowed_methods)]
            std::fs::read_to_string(lock).unwrap_or_default()
        }
        None => String::new(),
    };
    for name in CRATES {
        let version = locked_version(&text, name).unwrap_or_else(|| "unknown".to_string());
        let key = name.to_ascii_uppercase();
        println!("cargo::rustc-env=WASM_BENCH_VERSION_{key}={version}");
    }
}

/// The version of the package `name` in the lock file `text`: the line
/// after its `name = "..."` line (the versions joined with `/` where the
/// lock holds several).
fn locked_version(text: &str, name: &str) -> Option<String> {
    let wanted = format!("name = \"{name}\"");
    let mut lines = text.lines();
    let mut versions = Vec::new();
    while let Some(line) = lines.next() {
        if line.trim() == wanted {
            let version = lines.next()?.trim().strip_prefix("version = \"")?;
            versions.push(version.trim_end_matches('"').to_string());
        }
    }
    (!versions.is_empty()).then(|| versions.join("/"))
}
