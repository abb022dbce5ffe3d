//! End-to-end tests of engine libraries (`--engine PATH`, issue #29): the
//! workspace's test engine library (`tests/engine`, wasmtime's bench-api
//! over the workspace's wasmtime) loaded by the workers. No test asserts a
//! time.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use e2e::{Finished, run_host_within, validate_export, workloads, workspace_root};
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

const BOUND: Duration = Duration::from_secs(120);

/// The test engine library, built once per test process with the host (so
/// that the build resolves the same features as the host's, and shares its
/// wasmtime): cargo reports where it put the shared library.
fn engine_library() -> &'static Path {
    static LIBRARY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let library = LIBRARY.get_or_init(|| build_library().map_err(|e| e.to_string()));
    match library {
        Ok(path) => path,
        Err(e) => panic!("cannot build the test engine library: {e}"),
    }
}

fn build_library() -> Result<PathBuf, Box<dyn Error>> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(&cargo)
        .current_dir(workspace_root())
        .args(["build", "--release", "-p", "host", "-p", "bench-engine"])
        .arg("--message-format=json-render-diagnostics")
        .output()?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned().into());
    }
    for line in String::from_utf8(output.stdout)?.lines() {
        let Ok(message) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if message["reason"] != "compiler-artifact" || message["target"]["name"] != "bench_engine" {
            continue;
        }
        let shared = message["filenames"].as_array().and_then(|files| {
            files
                .iter()
                .filter_map(Value::as_str)
                .find(|f| f.ends_with(".so") || f.ends_with(".dylib"))
        });
        if let Some(shared) = shared {
            return Ok(PathBuf::from(shared));
        }
    }
    Err("cargo built no bench_engine shared library".into())
}

/// `host run FILES --samples 3 ... --export-json - EXTRA` in a fresh folder.
fn run(files: &[&str], extra: &[&str]) -> Result<(Finished, Value), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let paths: Vec<String> = files
        .iter()
        .map(|f| workloads().join(f).display().to_string())
        .collect();
    let mut args: Vec<&str> = vec!["run"];
    args.extend(paths.iter().map(String::as_str));
    args.extend([
        "--samples",
        "3",
        "--processes",
        "2",
        "--warmup",
        "20ms",
        "--timeout",
        "20s",
        "--export-json",
        "-",
    ]);
    args.extend(extra);
    let finished = run_host_within(&args, dir.path(), BOUND)?;
    let json = serde_json::from_str(&finished.stdout).unwrap_or(Value::Null);
    Ok((finished, json))
}

/// The row named `name`.
fn row<'a>(json: &'a Value, name: &str) -> &'a Value {
    json["results"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["name"] == name))
        .unwrap_or_else(|| panic!("no row {name} in {json}"))
}

#[test]
fn a_program_runs_under_the_library_with_its_phases_and_configuration() -> TestResult {
    let library = engine_library().display().to_string();
    let (done, json) = run(
        &["fib.wasm"],
        &[
            "--engine",
            "cranelift",
            "--engine",
            &library,
            "--engine-flags",
            "-O opt-level=2",
        ],
    )?;
    assert!(done.status.success(), "{}", done.stderr);
    validate_export(&json)?;
    let fib = row(&json, "fib[libbench_engine]");
    assert!(fib["error"].is_null(), "{fib}");
    let phases = &fib["phases"];
    assert!(
        phases["execute_ns"]["median"]
            .as_f64()
            .is_some_and(|t| t > 0.0),
        "{fib}"
    );
    assert!(
        phases["instantiate_ns"]["median"]
            .as_f64()
            .is_some_and(|t| t > 0.0),
        "{fib}"
    );
    assert!(
        phases["compile_ms"].as_f64().is_some_and(|t| t > 0.0),
        "{fib}"
    );
    assert_eq!(phases["timed_region"], "start_to_end");
    let engines = json["environment"]["engines"]
        .as_array()
        .ok_or("no engines")?;
    assert!(engines[0].get("library").is_none(), "{}", engines[0]);
    let recorded = &engines[1]["library"];
    assert_eq!(recorded["flags"], "-O opt-level=2");
    assert_eq!(recorded["sha256"].as_str().map(str::len), Some(64));
    assert!(
        recorded["path"]
            .as_str()
            .is_some_and(|p| p.ends_with(".so") || p.ends_with(".dylib"))
    );
    assert!(
        done.stderr.contains("engine libbench_engine: library "),
        "{}",
        done.stderr
    );
    Ok(())
}

#[test]
fn a_crash_in_the_library_costs_its_row_only() -> TestResult {
    let library = engine_library().display().to_string();
    let (done, json) = run(
        &["fib.wasm"],
        &[
            "--engine",
            "cranelift",
            "--engine",
            &library,
            "--engine-flags",
            "--crash-in-execute",
        ],
    )?;
    assert!(!done.status.success());
    let crashed = row(&json, "fib[libbench_engine]");
    let error = crashed["error"].as_str().ok_or("the crash is no error")?;
    assert!(
        error.contains("SIGSEGV") || error.contains("signal"),
        "{error}"
    );
    assert!(row(&json, "fib[cranelift]")["error"].is_null());
    Ok(())
}

#[test]
fn a_wrong_engine_flag_is_a_clear_row_error() -> TestResult {
    let library = engine_library().display().to_string();
    let (done, json) = run(
        &["fib.wasm"],
        &["--engine", &library, "--engine-flags", "-O opt-level=9"],
    )?;
    assert!(!done.status.success());
    let error = row(&json, "fib")["error"].as_str().ok_or("no error")?;
    assert!(error.contains("opt-level=9"), "{error}");
    assert!(error.contains("wasm_bench_create failed"), "{error}");
    Ok(())
}

#[test]
fn a_run_workload_under_the_library_is_a_row_error() -> TestResult {
    let library = engine_library().display().to_string();
    let (done, json) = run(&["xor.wasm", "fib.wasm"], &["--engine", &library])?;
    assert!(!done.status.success());
    let error = row(&json, "xor")["error"].as_str().ok_or("no error")?;
    assert!(error.contains("runs WASI programs only"), "{error}");
    assert!(row(&json, "fib")["error"].is_null());
    Ok(())
}

#[test]
fn a_missing_library_is_a_usage_error() -> TestResult {
    let dir = tempfile::tempdir()?;
    let fib = workloads().join("fib.wasm").display().to_string();
    let done = run_host_within(
        &["run", &fib, "--engine", "./missing.so"],
        dir.path(),
        BOUND,
    )?;
    assert_eq!(done.status.code(), Some(2), "{}", done.stderr);
    assert!(done.stderr.contains("missing.so"), "{}", done.stderr);
    let done = run_host_within(
        &["run", &fib, "--engine-flags", "-O opt-level=2"],
        dir.path(),
        BOUND,
    )?;
    assert_eq!(done.status.code(), Some(2), "{}", done.stderr);
    assert!(done.stderr.contains("--engine-flags"), "{}", done.stderr);
    Ok(())
}

/// Under the default stop rule a library row takes processes of about a
/// second of iterations each (each iteration compiles anew) until it is
/// precise, and says so: `stopped_by` in the JSON, and a fact with its
/// iterations. A wide `--precision` keeps the test short; what stopped it
/// is the precision, not the built-in engines' 2 s budget.
#[test]
fn a_library_row_iterates_until_precise_and_says_what_stopped_it() -> TestResult {
    let library = engine_library().display().to_string();
    let dir = tempfile::tempdir()?;
    let fib = workloads().join("fib.wasm").display().to_string();
    let args = [
        "run",
        &fib,
        "--engine",
        &library,
        "--precision",
        "50",
        "--timeout",
        "20s",
        "--export-json",
        "-",
    ];
    let done = run_host_within(&args, dir.path(), BOUND)?;
    assert!(done.status.success(), "{}", done.stderr);
    let json: Value = serde_json::from_str(&done.stdout)?;
    validate_export(&json)?;
    let fib = row(&json, "fib");
    assert!(fib["error"].is_null(), "{fib}");
    assert_eq!(fib["stopped_by"], "precision_reached", "{fib}");
    // At least 5 processes of at least one timed iteration each.
    assert!(fib["samples"].as_u64().is_some_and(|n| n >= 5), "{fib}");
    let info = fib["info"].to_string();
    assert!(
        info.contains("engine library: precision reached") && info.contains(" iterations in "),
        "{info}"
    );
    Ok(())
}
