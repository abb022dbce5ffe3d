//! End-to-end tests of `--metric cycles-est`: Callgrind's counts of the
//! machine code, deterministic, and the verdicts they give. They need
//! Valgrind; CI installs it and sets `WASM_BENCH_REQUIRE_VALGRIND=1`, so
//! that there a missing Valgrind fails them. Elsewhere, without Valgrind,
//! they check the error that says how to install it. Counts are kept
//! small: Callgrind runs code about 50× slower.

use std::error::Error;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use e2e::{Finished, finish_within, fixture, prepare, validate_export, workloads};
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

const BOUND: Duration = Duration::from_secs(300);

fn valgrind_installed() -> bool {
    Command::new("valgrind")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether to run the counting tests: Valgrind is there, or it must be.
fn counting() -> Result<bool, Box<dyn Error>> {
    let required = std::env::var_os("WASM_BENCH_REQUIRE_VALGRIND").is_some();
    match (valgrind_installed(), required) {
        (true, _) => Ok(true),
        (false, true) => {
            Err("WASM_BENCH_REQUIRE_VALGRIND is set but valgrind is not installed".into())
        }
        (false, false) => Ok(false),
    }
}

fn host(args: &[&str], dir: &Path, path_var: Option<&str>) -> Result<Finished, Box<dyn Error>> {
    let mut command = Command::new(e2e::host_binary());
    command
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(path) = path_var {
        command.env("PATH", path);
    }
    finish_within(prepare(&mut command).spawn()?, BOUND)
}

fn report(finished: &Finished) -> Result<Value, Box<dyn Error>> {
    let value: Value = serde_json::from_str(&finished.stdout)
        .map_err(|e| format!("{e}: {} / {}", finished.stdout, finished.stderr))?;
    validate_export(&value)?;
    Ok(value)
}

fn counts<'a>(report: &'a Value, name: &str) -> Result<&'a Value, Box<dyn Error>> {
    report["results"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["name"] == name))
        .map(|r| &r["callgrind"])
        .filter(|c| c.is_object())
        .ok_or_else(|| format!("no counts of {name}: {report}").into())
}

#[test]
fn a_missing_valgrind_is_a_clear_error() -> TestResult {
    let dir = tempfile::tempdir()?;
    let xor = workloads().join("xor.wasm").display().to_string();
    let finished = host(
        &["run", &xor, "--metric", "cycles-est", "--samples", "3"],
        dir.path(),
        Some("/nonexistent"),
    )?;
    assert!(!finished.status.success(), "{finished:?}");
    assert!(
        finished.stderr.contains("needs Valgrind")
            && finished.stderr.contains("apt-get install valgrind"),
        "{}",
        finished.stderr
    );
    Ok(())
}

#[test]
fn counts_repeat_and_follow_the_code() -> TestResult {
    if !counting()? {
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    let xor = workloads().join("xor.wasm").display().to_string();
    let mod13 = workloads().join("mod13.wasm").display().to_string();
    let hello = fixture("programs/hello.wat").display().to_string();
    let args = [
        "run",
        &xor,
        &mod13,
        &hello,
        "--metric",
        "cycles-est",
        "--engine",
        "cranelift",
        "--engine",
        "winch",
        "--processes",
        "1",
        "--samples",
        "3",
        "--export-json",
        "-",
    ];
    let first = report(&host(&args, dir.path(), None)?)?;
    let second = report(&host(&args, dir.path(), None)?)?;
    for name in [
        "xor[cranelift]",
        "xor[winch]",
        "mod13[cranelift]",
        "mod13[winch]",
    ] {
        let (a, b) = (counts(&first, name)?, counts(&second, name)?);
        // Instructions retired are exact, run after run.
        assert_eq!(a["instructions"], b["instructions"], "{name}");
        assert!(a["instructions"].as_f64().is_some_and(|x| x > 0.0), "{a}");
        assert!(a["cycles_est"].as_f64().is_some_and(|x| x > 0.0), "{a}");
    }
    // The counts see the compiler: the baseline compiler retires more.
    let instructions = |r: &Value, n: &str| counts(r, n).map(|c| c["instructions"].as_f64());
    assert!(instructions(&first, "xor[winch]")? > instructions(&first, "xor[cranelift]")?);
    // A program is counted per phase.
    let program = first["results"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["name"] == "hello[cranelift]"))
        .ok_or("no hello")?;
    assert!(
        program["callgrind"]["instructions"]
            .as_f64()
            .is_some_and(|x| x > 0.0),
        "{program}"
    );
    assert!(
        program["phases"]["instantiate_callgrind"]["instructions"]
            .as_f64()
            .is_some_and(|x| x > 0.0),
        "{program}"
    );
    Ok(())
}

/// A program's counts, both phases, in `report`.
fn program_counts(report: &Value, name: &str) -> Result<(Value, Value), Box<dyn Error>> {
    let row = report["results"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["name"] == name))
        .ok_or_else(|| format!("no {name}: {report}"))?;
    Ok((
        row["callgrind"].clone(),
        row["phases"]["instantiate_callgrind"].clone(),
    ))
}

/// The report of `host run FILES --metric cycles-est` with one process of 3
/// samples, compiled afresh (no cache, so that every run sets up alike).
fn count_programs(files: &[&Path], dir: &Path) -> Result<Value, Box<dyn Error>> {
    let files: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let mut args = vec!["run"];
    args.extend(files.iter().map(String::as_str));
    args.extend_from_slice(&[
        "--metric",
        "cycles-est",
        "--no-cache",
        "--processes",
        "1",
        "--samples",
        "3",
        "--export-json",
        "-",
    ]);
    report(&host(&args, dir, None)?)
}

#[test]
fn a_programs_counts_repeat_to_the_last_digit() -> TestResult {
    if !counting()? {
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    // No WASI call: wasmtime-wasi looks the guest's memory up by name in a
    // table hashed with random keys at each one, which can move a miss.
    let spin = fixture("programs/spin.wat");
    let first = program_counts(&count_programs(&[&spin], dir.path())?, "spin")?;
    let second = program_counts(&count_programs(&[&spin], dir.path())?, "spin")?;
    for (phase, counts) in [("execute", &first.0), ("instantiate", &first.1)] {
        assert!(
            counts["instructions"].as_f64().is_some_and(|x| x > 0.0),
            "{phase}: {counts}"
        );
    }
    // Every count of both phases, misses and mispredictions too.
    assert_eq!(first, second, "two separate runs");
    Ok(())
}

#[test]
fn a_program_counts_alike_alone_and_after_another() -> TestResult {
    if !counting()? {
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    // `hello` calls WASI (and leaves the worker's heap as its run does);
    // each program is counted in a worker of its own, so `spin` after it
    // counts what it counts alone.
    let spin = fixture("programs/spin.wat");
    let hello = fixture("programs/hello.wat");
    let alone = program_counts(&count_programs(&[&spin], dir.path())?, "spin")?;
    let after = program_counts(&count_programs(&[&hello, &spin], dir.path())?, "spin")?;
    assert_eq!(alone, after, "spin alone, and after hello");
    Ok(())
}

#[test]
fn compare_judges_by_estimated_cycles() -> TestResult {
    if !counting()? {
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    let xor = workloads().join("xor.wasm").display().to_string();
    let finished = host(
        &[
            "compare",
            &xor,
            "--engine",
            "cranelift",
            "--engine",
            "winch",
            "--metric",
            "cycles-est",
            "--time",
            "1s",
            "--export-json",
            "-",
        ],
        dir.path(),
        None,
    )?;
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    let report = report(&finished)?;
    let c = &report["comparisons"][0];
    assert_eq!(c["metric"], "cycles-est", "{c}");
    assert_eq!(c["ci95_low"], c["ratio"], "an exact ratio: {c}");
    assert_eq!(c["ci95_high"], c["ratio"], "an exact ratio: {c}");
    assert_eq!(c["verdict"], "slower", "winch's code is slower: {c}");
    Ok(())
}

/// A call that never returns under Callgrind fails its row once the pass's
/// own deadline is over, and the error says what that deadline is: 100 ×
/// `--timeout` (issue #30). The fixture returns in the timing pass (one
/// worker process, whose first call has count 1) and hangs in the
/// Callgrind pass.
#[test]
fn the_callgrind_deadline_is_stated() -> TestResult {
    if !counting()? {
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    let late_hang = fixture("hostile/late_hang.wat").display().to_string();
    let args = [
        "run",
        &late_hang,
        "--processes",
        "1",
        "--samples",
        "20",
        "--metric",
        "cycles-est",
        "--timeout",
        "100ms",
        "--export-json",
        "-",
    ];
    let finished = host(&args, dir.path(), None)?;
    assert_eq!(finished.status.code(), Some(1), "{finished:?}");
    let report = report(&finished)?;
    let error = report["results"][0]["error"]
        .as_str()
        .ok_or("the row was counted")?;
    assert!(error.contains("the Callgrind pass"), "{error}");
    assert!(
        error.contains("did not return within 100 × --timeout = 10s, the deadline under Callgrind"),
        "{error}"
    );
    // Far less than the bound, which a call that was never stopped would
    // reach; wide enough for Valgrind's start on a loaded machine.
    assert!(finished.elapsed < Duration::from_secs(150), "{finished:?}");
    Ok(())
}
