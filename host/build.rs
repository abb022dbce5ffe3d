//! Nothing to build. The script exists for `[build-dependencies]` in
//! Cargo.toml, which turn on for the build platform the features the
//! optional runtimes' build dependencies turn on, so that one build of
//! wasmtime serves the default build and `--features all-engines`.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
}
