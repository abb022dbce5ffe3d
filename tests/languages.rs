//! End-to-end tests of `host new` for the languages beyond Rust and WAT:
//! scaffold, build with the scaffold's own `build.sh`, measure with
//! `host run`. A language whose toolchain is not on this machine is skipped
//! with a message (CI installs them all).

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
    let sysroot = std::env::var("WASI_SYSROOT").unwrap_or_else(|_| "/usr".into());
    let wasi_libc = Path::new(&sysroot).join("include/wasm32-wasi").is_dir()
        || Path::new(&sysroot).join("include/stdint.h").is_file();
    check_workload(
        "c",
        runs("clang", &["--version"]) && wasi_libc,
        "clang with wasi-libc",
    )
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
    let zig = runs("zig", &["version"]) || runs("python3", &["-m", "ziglang", "version"]);
    check_workload("zig", zig, "Zig (zig, or pip's ziglang)")
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
