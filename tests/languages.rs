//! End-to-end tests of `host new` for the languages beyond WAT: scaffold,
//! build with the scaffold's own `build.sh` (Rust: cargo), measure with
//! `host run`, and where the scaffold builds native code too (C, Rust),
//! compare the two as its README says. A language whose toolchain is not on
//! this machine is skipped with a message (CI installs them all).

use std::error::Error;
use std::path::Path;
use std::process::Command;

use e2e::{host_binary, prepare};
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

/// Whether `program args` runs and succeeds here.
fn runs(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// What the example workloads return for `run(1000, 42)` after no `setup`
/// (the xorshift64 fold every scaffold starts with).
const EXAMPLE_CHECKSUM: i64 = 9_039_693_506_924_713_897;

/// Scaffold `name` in `lang`, build it, and measure it once: the row of
/// the JSON report.
fn scaffold_build_run(dir: &Path, lang: &str, name: &str) -> Result<Value, Box<dyn Error>> {
    let made = prepare(Command::new(host_binary()).args(["new", name, "--lang", lang]))
        .arg("--dir")
        .arg(dir)
        .output()?;
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let built = Command::new("bash")
        .arg(dir.join(name).join("build.sh"))
        .output()?;
    assert!(
        built.status.success(),
        "{lang}: build.sh failed:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let wasm = dir.join(name).join(format!("{name}.wasm"));
    let out = prepare(Command::new(host_binary()).arg("run").arg(&wasm).args([
        "--count",
        "1000",
        "--seed",
        "42",
        "--same-seed",
        "--samples",
        "10",
        "--warmup",
        "20ms",
        "--export-json",
        "-",
    ]))
    .output()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{lang}: {stderr}");
    let report: Value = serde_json::from_slice(&out.stdout)?;
    Ok(report["results"][0].clone())
}

/// A workload scaffold measures what the example computes.
fn check_workload(lang: &str, available: bool, toolchain: &str) -> TestResult {
    if !available {
        println!("skipped: {toolchain} is not installed here");
        return Ok(());
    }
    let tmp = tempfile::tempdir()?;
    let row = scaffold_build_run(tmp.path(), lang, "my-bench")?;
    assert_eq!(row["error"], Value::Null, "{row}");
    assert_eq!(row["checksum"], EXAMPLE_CHECKSUM, "{row}");
    Ok(())
}

#[test]
fn a_c_workload_is_scaffolded_built_and_measured() -> TestResult {
    check_workload(
        "c",
        runs("clang", &["--version"]) && has_wasi_libc(),
        "clang with wasi-libc",
    )
}

/// `host compare WASM NATIVE` in `dir`, as a scaffold's README says (file
/// names relative to `dir`): the JSON report and the terminal's text.
fn compare_in(dir: &Path, wasm: &str, native: &str) -> Result<(Value, String), Box<dyn Error>> {
    let out = prepare(
        Command::new(host_binary())
            .current_dir(dir)
            .args(["compare", wasm, native])
            .args(["--warmup", "20ms", "--time", "3s"])
            .args(["--export-json", "compared.json"]),
    )
    .output()?;
    let stdout = String::from_utf8(out.stdout)?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let report: Value = serde_json::from_slice(&std::fs::read(dir.join("compared.json"))?)?;
    Ok((report, stdout))
}

/// A comparison of `name`'s wasm and native code names each side by what
/// it is, in the JSON and in the verdict on the terminal.
fn check_wasm_against_native(report: &Value, stdout: &str, name: &str) -> TestResult {
    let (wasm, native) = (format!("{name} (wasm)"), format!("{name} (native)"));
    let variants = report["variants"].as_array().ok_or("no variants")?;
    let names: Vec<&str> = variants.iter().filter_map(|v| v["name"].as_str()).collect();
    assert_eq!(names, [wasm.as_str(), native.as_str()], "{report}");
    assert_eq!(variants[0]["kind"], "module", "{report}");
    assert_eq!(variants[1]["kind"], "native", "{report}");
    assert_eq!(report["reference"], wasm.as_str(), "{report}");
    let text = report["comparisons"][0]["text"].as_str().unwrap_or("");
    assert!(text.contains(&native) && text.contains(&wasm), "{text}");
    assert!(stdout.contains(&native), "{stdout}");
    assert!(!stdout.contains('#'), "{stdout}");
    Ok(())
}

/// A scaffold of `lang` made in a temporary folder and built by its
/// `build.sh`, which builds native code too; then, as its README says,
/// `host compare NAME.wasm NAME.so` in its folder (a bare file name is the
/// file there, not a library the loader searches for): both sides named by
/// what they are.
fn compare_scaffold(lang: &str, name: &str) -> TestResult {
    let tmp = tempfile::tempdir()?;
    let made = prepare(Command::new(host_binary()).args(["new", name, "--lang", lang]))
        .current_dir(tmp.path())
        .output()?;
    assert!(made.status.success(), "{made:?}");
    let dir = tmp.path().join(name);
    let readme = std::fs::read_to_string(dir.join("README.md"))?;
    let command = format!("    host compare {name}.wasm {name}.so\n");
    assert!(readme.contains(&command), "{readme}");
    let built = Command::new("./build.sh").current_dir(&dir).output()?;
    assert!(built.status.success(), "{built:?}");
    let said = String::from_utf8_lossy(&built.stdout);
    if !said.contains(&format!("built {name}.so")) {
        println!("skipped: {lang}: no native shared library built here: {said}");
        return Ok(());
    }
    let (report, stdout) = compare_in(&dir, &format!("{name}.wasm"), &format!("{name}.so"))?;
    check_wasm_against_native(&report, &stdout, name)
}

#[test]
fn a_c_workload_compares_with_its_native_build_as_its_readme_says() -> TestResult {
    if !(runs("clang", &["--version"]) && has_wasi_libc()) {
        println!("skipped: clang with wasi-libc is not installed here");
        return Ok(());
    }
    compare_scaffold("c", "cmix")
}

#[test]
fn a_zig_workload_compares_with_its_native_build_as_its_readme_says() -> TestResult {
    if !has_zig() {
        println!("skipped: Zig (zig, or pip's ziglang) is not installed here");
        return Ok(());
    }
    compare_scaffold("zig", "zmix")
}

/// Whether Zig runs here, on the PATH or as pip's package.
fn has_zig() -> bool {
    runs("zig", &["version"]) || runs("python3", &["-m", "ziglang", "version"])
}

/// Whether the Rust target for core wasm modules is installed.
fn has_rust_wasm_target() -> bool {
    Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .is_ok_and(|o| {
            o.status.success()
                && String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .any(|l| l.trim() == "wasm32-unknown-unknown")
        })
}

/// `cargo build --release --offline` in `dir` with `args`, as the README
/// says (no target folder, flags or wrapper from outside).
fn cargo_build(dir: &Path, args: &[&str]) -> TestResult {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let built = Command::new(cargo)
        .current_dir(dir)
        .args(["build", "--release", "--offline", "--quiet"])
        .args(args)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .env_remove("RUSTC_WRAPPER")
        .output()?;
    assert!(
        built.status.success(),
        "cargo build {args:?}:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    Ok(())
}

/// The Rust scaffold's README: built for wasm and, from the same source,
/// for the machine (a `cdylib`, `libNAME.so`), the two are compared and
/// named by what they are. The crate needs no other crate: it builds
/// offline, in seconds.
#[test]
fn a_rust_workload_compares_with_its_native_build_as_its_readme_says() -> TestResult {
    if !has_rust_wasm_target() {
        println!("skipped: the Rust target wasm32-unknown-unknown is not installed here");
        return Ok(());
    }
    let tmp = tempfile::tempdir()?;
    let made = prepare(Command::new(host_binary()).args(["new", "rmix", "--lang", "rust"]))
        .current_dir(tmp.path())
        .output()?;
    assert!(made.status.success(), "{made:?}");
    let dir = tmp.path().join("rmix");
    let (wasm, native) = (
        "target/wasm32-unknown-unknown/release/rmix.wasm",
        "target/release/librmix.so",
    );
    let readme = std::fs::read_to_string(dir.join("README.md"))?;
    assert!(
        readme.contains(&format!("    host compare {wasm} {native}\n")),
        "{readme}"
    );
    cargo_build(&dir, &["--target", "wasm32-unknown-unknown"])?;
    cargo_build(&dir, &[])?;
    let (report, stdout) = compare_in(&dir, wasm, native)?;
    check_wasm_against_native(&report, &stdout, "rmix")?;
    // The same example in both: one checksum.
    let checksums: Vec<&Value> = report["variants"]
        .as_array()
        .ok_or("no variants")?
        .iter()
        .map(|v| &v["checksum"])
        .collect();
    assert_eq!(checksums[0], checksums[1], "{report}");
    Ok(())
}

/// Whether wasi-libc is installed where the C scaffold's build looks.
fn has_wasi_libc() -> bool {
    let sysroot = std::env::var("WASI_SYSROOT").unwrap_or_else(|_| "/usr".into());
    Path::new(&sysroot).join("include/wasm32-wasi").is_dir()
        || Path::new(&sysroot).join("include/stdint.h").is_file()
}

/// A C workload whose constructor traps when it runs a second time: it
/// counts in a `volatile` so that the compiler cannot run it at build time.
const COUNTED_CONSTRUCTOR: &str = r#"#include <stdint.h>
static volatile int calls;
__attribute__((constructor)) static void init(void) { if (++calls != 1) __builtin_trap(); }
__attribute__((export_name("run"))) int64_t run(int64_t count, int64_t seed) {
    uint64_t x = (uint64_t)seed | 1, acc = 0;
    for (int64_t i = 0; i < count; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; acc ^= x; }
    return (int64_t)acc + calls;
}
"#;

/// Built by the scaffold's build.sh (a reactor), a C workload's
/// constructor runs once per instance and the row is measured; built with
/// the old command flags, whose export wrapper runs it on every call, the
/// module is refused with the fix.
#[test]
fn a_c_constructor_runs_once_and_a_command_wrapper_is_refused() -> TestResult {
    let sysroot = std::env::var("WASI_SYSROOT").unwrap_or_else(|_| "/usr".into());
    if !(runs("clang", &["--version"]) && Path::new(&sysroot).join("include").is_dir()) {
        println!("skipped: clang with wasi-libc is not installed here");
        return Ok(());
    }
    let tmp = tempfile::tempdir()?;
    let made = prepare(Command::new(host_binary()).args(["new", "ctor", "--lang", "c"]))
        .arg("--dir")
        .arg(tmp.path())
        .output()?;
    assert!(made.status.success(), "{made:?}");
    let dir = tmp.path().join("ctor");
    std::fs::write(dir.join("ctor.c"), COUNTED_CONSTRUCTOR)?;
    let built = Command::new("bash").arg(dir.join("build.sh")).output()?;
    assert!(built.status.success(), "{built:?}");
    let old = Command::new("clang")
        .args([
            "--target=wasm32-wasi",
            &format!("--sysroot={sysroot}"),
            "-O2",
        ])
        .args([
            "-nostartfiles",
            "-Wl,--no-entry",
            "-o",
            "old.wasm",
            "ctor.c",
        ])
        .current_dir(&dir)
        .output()?;
    assert!(old.status.success(), "{old:?}");
    let measure = |file: &str| -> Result<Value, Box<dyn Error>> {
        let out = prepare(
            Command::new(host_binary())
                .arg("run")
                .arg(dir.join(file))
                .args([
                    "--samples",
                    "5",
                    "--warmup",
                    "10ms",
                    "--processes",
                    "1",
                    "--export-json",
                    "-",
                    "--quiet",
                ]),
        )
        .output()?;
        let report: Value = serde_json::from_slice(&out.stdout)?;
        Ok(report["results"][0].clone())
    };
    let row = measure("ctor.wasm")?;
    assert_eq!(row["error"], Value::Null, "{row}");
    let row = measure("old.wasm")?;
    let error = row["error"].as_str().ok_or("the old build was measured")?;
    for words in ["run.command_export", "-mexec-model=reactor"] {
        assert!(error.contains(words), "{words:?} not in: {error}");
    }
    Ok(())
}

#[test]
fn a_zig_workload_is_scaffolded_built_and_measured() -> TestResult {
    check_workload("zig", has_zig(), "Zig (zig, or pip's ziglang)")
}

#[test]
fn an_assemblyscript_workload_is_scaffolded_built_and_measured() -> TestResult {
    check_workload("assemblyscript", runs("npm", &["--version"]), "npm")
}

/// A Go workload (`//go:wasmexport run`, built as a reactor with
/// `-buildmode=c-shared`) is measured: Go's runtime starts once, in
/// `_initialize`.
#[test]
fn a_go_workload_is_scaffolded_built_and_measured() -> TestResult {
    check_workload("go", runs("go", &["version"]), "Go")
}

/// The Go program scaffold: it reads its input file from its folder
/// (preopened as `/`, where Go's runtime looks) and is timed between
/// `bench.start` and `bench.end`.
#[test]
fn a_go_program_is_scaffolded_built_and_reads_its_input() -> TestResult {
    if !runs("go", &["version"]) {
        println!("skipped: Go is not installed here");
        return Ok(());
    }
    let tmp = tempfile::tempdir()?;
    let row = scaffold_build_run(tmp.path(), "go-program", "my-prog")?;
    assert_eq!(row["error"], Value::Null, "{row}");
    assert_eq!(row["kind"], "program", "{row}");
    assert_eq!(row["phases"]["timed_region"], "start_to_end", "{row}");
    Ok(())
}
