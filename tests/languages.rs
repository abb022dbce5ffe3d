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

#[test]
fn a_zig_workload_is_scaffolded_built_and_measured() -> TestResult {
    let zig = runs("zig", &["version"]) || runs("python3", &["-m", "ziglang", "version"]);
    check_workload("zig", zig, "Zig (zig, or pip's ziglang)")
}

#[test]
fn an_assemblyscript_workload_is_scaffolded_built_and_measured() -> TestResult {
    check_workload("assemblyscript", runs("npm", &["--version"]), "npm")
}

/// The Go scaffold is a program: it reads its input file from its folder
/// (preopened as `/`, where Go's runtime looks) and is timed between
/// `bench.start` and `bench.end`.
#[test]
fn a_go_program_is_scaffolded_built_and_reads_its_input() -> TestResult {
    if !runs("go", &["version"]) {
        println!("skipped: Go is not installed here");
        return Ok(());
    }
    let tmp = tempfile::tempdir()?;
    let row = scaffold_build_run(tmp.path(), "go", "my-prog")?;
    assert_eq!(row["error"], Value::Null, "{row}");
    assert_eq!(row["kind"], "program", "{row}");
    assert_eq!(row["phases"]["timed_region"], "start_to_end", "{row}");
    Ok(())
}
