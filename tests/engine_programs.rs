//! End-to-end tests of programs (WASI commands, the Sightglass protocol)
//! under the runtimes other than wasmtime: wasmi and wasmer (skipped with
//! a message where the host is built without them: run them with `cargo
//! test --release -p e2e --features all-engines`) and V8 (skipped with a
//! message where `node` is missing). Each runtime must judge a run as
//! wasmtime does: the output checked, the exit code, the
//! `bench.start`/`bench.end` protocol, traps. No test asserts a time.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use e2e::{fixture, workloads};
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

const BOUND: Duration = Duration::from_secs(300);

/// The runtimes of this file.
const RUNTIMES: [&str; 3] = ["wasmi", "wasmer", "v8"];

fn program(name: &str) -> PathBuf {
    fixture(&format!("programs/{name}"))
}

/// `host run FILES --engine RUNTIME --samples 3 ... --export-json -` in
/// `dir`, with the cache in `dir/cache`: the exit code and the report.
fn run(files: &[&Path], runtime: &str, dir: &Path) -> Result<(Option<i32>, Value), Box<dyn Error>> {
    run_with(files, runtime, dir, &[])
}

/// [`run`] with `extra` arguments.
fn run_with(
    files: &[&Path],
    runtime: &str,
    dir: &Path,
    extra: &[&str],
) -> Result<(Option<i32>, Value), Box<dyn Error>> {
    let mut command = Command::new(e2e::host_binary());
    command
        .arg("run")
        .args(files)
        .args(extra)
        .args(["--engine", runtime, "--warmup", "20ms"])
        .args(match extra.contains(&"--samples") {
            true => &[][..],
            false => &["--samples", "3"][..],
        })
        .args(["--timeout", "60s", "--export-json", "-"])
        .current_dir(dir)
        .env("WASM_BENCH_CACHE", dir.join("cache"))
        .env_remove("WASM_BENCH_USE_SMALL_WORKLOAD")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let finished = e2e::finish_within(e2e::prepare(&mut command).spawn()?, BOUND)?;
    assert!(!finished.stderr.contains("panicked"), "{}", finished.stderr);
    let report: Value = serde_json::from_str(&finished.stdout).map_err(|e| {
        format!(
            "{e}: stdout {} / stderr {}",
            finished.stdout, finished.stderr
        )
    })?;
    e2e::validate_export(&report)?;
    Ok((finished.status.code(), report))
}

fn row<'a>(report: &'a Value, name: &str) -> Result<&'a Value, Box<dyn Error>> {
    report["results"]
        .as_array()
        .ok_or("no results")?
        .iter()
        .find(|r| r["name"] == name)
        .ok_or_else(|| format!("no row {name}: {report}").into())
}

fn error_of<'a>(report: &'a Value, name: &str) -> Result<&'a str, Box<dyn Error>> {
    Ok(row(report, name)?["error"].as_str().unwrap_or(""))
}

/// The runtimes that run here; a message for each that does not.
fn available(dir: &Path) -> Result<Vec<&'static str>, Box<dyn Error>> {
    let mut found = Vec::new();
    for runtime in RUNTIMES {
        let (_, report) = run(&[&program("hello.wat")], runtime, dir)?;
        let error = error_of(&report, "hello")?;
        if error.contains("built without") || error.contains("needs Node.js") {
            eprintln!("skipped: --engine {runtime} is not available here ({error})");
        } else {
            found.push(runtime);
        }
    }
    Ok(found)
}

/// The bundled programs (one reads its input from its folder) run with
/// their output checked against the expected files beside them, timed
/// between `bench.start` and `bench.end`; a wrong expectation is a row
/// error that quotes the difference.
#[test]
fn programs_run_with_their_output_checked() -> TestResult {
    let dir = tempfile::tempdir()?;
    for runtime in available(dir.path())? {
        let files = [workloads().join("wc.wasm"), workloads().join("fib.wasm")];
        let files: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
        let (code, report) = run(&files, runtime, dir.path())?;
        assert_eq!(code, Some(0), "{runtime}: {report}");
        for name in ["wc", "fib"] {
            let row = row(&report, name)?;
            assert!(row["error"].is_null(), "{runtime}: {row}");
            assert_eq!(row["phases"]["timed_region"], "start_to_end", "{row}");
            assert!(row["ns_per_op"]["median"].as_f64().is_some_and(|m| m > 0.0));
        }

        let copy = dir.path().join("hello.wat");
        std::fs::copy(program("hello.wat"), &copy)?;
        std::fs::write(dir.path().join("hello.stdout.expected"), "goodbye\n")?;
        let (code, report) = run(&[&copy], runtime, dir.path())?;
        assert_eq!(code, Some(1), "{runtime}: {report}");
        let error = error_of(&report, "hello")?;
        assert!(
            error.contains("got `hello`, expected `goodbye`"),
            "{runtime}: {error}"
        );
        std::fs::remove_file(dir.path().join("hello.stdout.expected"))?;
    }
    Ok(())
}

/// Exit codes, the `bench.start`/`bench.end` protocol and traps are judged
/// as under wasmtime.
#[test]
fn exits_protocol_and_traps_are_judged_as_under_wasmtime() -> TestResult {
    let dir = tempfile::tempdir()?;
    for runtime in available(dir.path())? {
        let files = [
            "exit_code.wat",
            "exit_zero.wat",
            "end_first.wat",
            "start_no_end.wat",
            "whole.wat",
            "trap.wat",
            "two_pairs.wat",
        ]
        .map(program);
        let files: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
        let (_, report) = run(&files, runtime, dir.path())?;
        let says = |name: &str, words: &str| -> TestResult {
            let error = error_of(&report, name)?;
            assert!(error.contains(words), "{runtime} {name}: {error}");
            Ok(())
        };
        says("exit_code", "exited with code 3")?;
        says("end_first", "bench.end called before bench.start")?;
        says("start_no_end", "called bench.start but never bench.end")?;
        says("trap", "failed")?;
        assert!(row(&report, "exit_zero")?["error"].is_null(), "{report}");
        let whole = row(&report, "whole")?;
        assert_eq!(whole["phases"]["timed_region"], "whole_start", "{whole}");
        let two = row(&report, "two_pairs")?;
        assert_eq!(two["phases"]["timed_region"], "start_to_end", "{two}");
        assert_eq!(
            two["phases"]["execute_ns"]["samples"],
            2 * two["phases"]["instantiate_ns"]["samples"]
                .as_u64()
                .unwrap_or(0),
            "{runtime}: {two}"
        );
    }
    Ok(())
}

/// Under wasmi and wasmer the program's folder is read-only, as under
/// wasmtime: creating a file in it fails and nothing is made. (Under V8
/// the program gets a private copy, read-only only where the kernel has
/// Landlock: tests/v8_promises.rs.)
#[test]
fn the_folder_is_read_only_under_wasmi_and_wasmer() -> TestResult {
    let dir = tempfile::tempdir()?;
    let folder = dir.path().join("program");
    std::fs::create_dir(&folder)?;
    let copy = folder.join("write_folder.wat");
    std::fs::copy(program("write_folder.wat"), &copy)?;
    for runtime in available(dir.path())?
        .into_iter()
        .filter(|r| *r != "v8")
        .chain(["cranelift"])
    {
        let (_, report) = run(&[&copy], runtime, dir.path())?;
        let error = error_of(&report, "write_folder")?;
        assert!(error.contains("exited with code"), "{runtime}: {report}");
        assert!(!folder.join("made.txt").exists(), "{runtime} made a file");
    }
    Ok(())
}

/// `--max-memory` holds for programs: every runtime refuses the growth
/// (the program exits with the code it chose).
#[test]
fn the_memory_limit_holds_for_programs() -> TestResult {
    let dir = tempfile::tempdir()?;
    for runtime in available(dir.path())? {
        let file = program("grow_or_exit.wat");
        let (_, report) = run_with(&[&file], runtime, dir.path(), &["--max-memory", "4MiB"])?;
        let error = error_of(&report, "grow_or_exit")?;
        assert!(error.contains("exited with code 9"), "{runtime}: {report}");
        let (_, report) = run(&[&file], runtime, dir.path())?;
        assert!(
            row(&report, "grow_or_exit")?["error"].is_null(),
            "{runtime}: {report}"
        );
    }
    Ok(())
}

/// Many iterations of a program that leaves a large instance behind each
/// time, under V8: each iteration's `node:wasi` context is collected
/// between iterations (Node 20 aborts when a collection set off inside a
/// WASI call finalizes another context).
#[test]
fn many_iterations_of_a_large_program_under_v8() -> TestResult {
    let dir = tempfile::tempdir()?;
    if !available(dir.path())?.contains(&"v8") {
        return Ok(());
    }
    let file = program("big_writer.wat");
    let extra = ["--samples", "40", "--processes", "1"];
    let (_, report) = run_with(&[&file], "v8", dir.path(), &extra)?;
    let row = row(&report, "big_writer")?;
    assert!(row["error"].is_null(), "{row}");
    Ok(())
}
