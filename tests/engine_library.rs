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

/// `host run fib.wasm --engine LIBRARY --engine-flags FLAGS --timeout
/// TIMEOUT` in a fresh folder, with `TMPDIR` a fresh folder of its own and
/// `env` set: what it left, its JSON export, and what it left in `TMPDIR`.
fn run_hostile(
    flags: &str,
    timeout: &str,
    env: &[(&str, &str)],
) -> Result<(Finished, Value, Vec<PathBuf>), Box<dyn Error>> {
    run_hostile_on(&workloads().join("fib.wasm"), flags, timeout, env, &[])
}

/// [`run_hostile`] on `program`, with `extra` arguments.
fn run_hostile_on(
    program: &Path,
    flags: &str,
    timeout: &str,
    env: &[(&str, &str)],
    extra: &[&str],
) -> Result<(Finished, Value, Vec<PathBuf>), Box<dyn Error>> {
    let library = engine_library().display().to_string();
    let dir = tempfile::tempdir()?;
    let tmp = tempfile::tempdir()?;
    let program = program.display().to_string();
    let mut command = std::process::Command::new(e2e::host_binary());
    command
        .args(["run", &program, "--samples", "3", "--warmup", "20ms"])
        .args(extra)
        .args(["--timeout", timeout, "--export-json", "-"])
        .args(["--engine", &library, "--engine-flags", flags])
        .current_dir(dir.path())
        .env("TMPDIR", tmp.path())
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let finished = e2e::finish_within(e2e::prepare(&mut command).spawn()?, BOUND)?;
    assert!(!finished.stderr.contains("panicked"), "{}", finished.stderr);
    let json = serde_json::from_str(&finished.stdout).unwrap_or(Value::Null);
    let left = std::fs::read_dir(tmp.path())?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    Ok((finished, json, left))
}

/// A library that prints bytes that are not UTF-8, and a line far longer
/// than an event may be, on the worker's stdout: none of it reaches the
/// parent's reader of events, and the row is measured.
#[test]
fn what_a_library_prints_on_stdout_never_reaches_the_events() -> TestResult {
    // 17 MiB without a newline: past the 16 MiB an event line may take.
    let (done, json, left) = run_hostile("--print-not-utf8 --print-line=17825792", "20s", &[])?;
    assert_eq!(done.status.code(), Some(0), "{}", done.stderr);
    validate_export(&json)?;
    assert!(row(&json, "fib")["error"].is_null(), "{json}");
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
    Ok(())
}

/// A program whose captured stderr grows past the cap of a program's
/// output (64 MiB, as the built-in engines') fails its row without being
/// read, and its scratch files are gone.
#[test]
fn a_captured_output_past_the_cap_fails_its_row() -> TestResult {
    let (done, json, left) = run_hostile("--stderr-bytes=68157440", "20s", &[])?;
    assert_eq!(done.status.code(), Some(1), "{}", done.stderr);
    let error = row(&json, "fib")["error"].as_str().ok_or("no error")?;
    assert!(
        error.contains("reading the program's stderr")
            && error.contains("larger than the output a program may write, 64 MiB"),
        "{error}"
    );
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
    Ok(())
}

/// A library whose constructor never returns costs its row the call
/// deadline (not the worker's start deadline of minutes), said so, and the
/// killed worker's scratch folder is removed.
#[test]
fn a_library_that_hangs_in_its_constructor_costs_the_call_deadline() -> TestResult {
    let (done, json, left) = run_hostile("", "2s", &[("BENCH_ENGINE_HANG_ON_LOAD", "1")])?;
    assert_eq!(done.status.code(), Some(1), "{}", done.stderr);
    let error = row(&json, "fib")["error"].as_str().ok_or("no error")?;
    assert!(
        error.contains("loading the engine library did not finish within --timeout 2s"),
        "{error}"
    );
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
    Ok(())
}

/// A worker that crashes in the library leaves nothing in `TMPDIR`
/// either.
#[test]
fn a_crashed_workers_scratch_files_are_removed() -> TestResult {
    let (done, _, left) = run_hostile("--crash-in-execute", "20s", &[])?;
    assert_eq!(done.status.code(), Some(1), "{}", done.stderr);
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
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

/// A worker killed for memory (its program, run by the library, grows past
/// --max-memory plus the host's share) after the program wrote on its
/// captured stderr: the row says so, and the scratch files are gone.
#[test]
fn a_worker_killed_for_memory_leaves_nothing_in_tmpdir() -> TestResult {
    let grow = e2e::fixture("programs/grow.wat");
    let extra = ["--max-memory", "64MiB"];
    let (done, json, left) = run_hostile_on(&grow, "--stderr-bytes=1048576", "20s", &[], &extra)?;
    assert_eq!(done.status.code(), Some(1), "{}", done.stderr);
    let error = row(&json, "grow")["error"].as_str().ok_or("no error")?;
    assert!(error.contains("the worker's memory grew to"), "{error}");
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
    Ok(())
}
