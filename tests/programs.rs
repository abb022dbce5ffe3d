//! End-to-end tests of programs (the Sightglass protocol), engine
//! selection and the compile cache (issue #6). No test asserts a time.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::Duration;

use e2e::{Finished, fixture, run_host_within, workloads};
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

const BOUND: Duration = Duration::from_secs(180);

fn program(name: &str) -> PathBuf {
    fixture(&format!("programs/{name}"))
}

/// Run `host run FILES --samples 5 ... --export-json -` in `dir` with the
/// cache in `dir/cache`; returns the finished process and its JSON.
fn run(files: &[&Path], extra: &[&str], dir: &Path) -> Result<(Finished, Value), Box<dyn Error>> {
    run_env(files, extra, dir, &[])
}

/// [`run`] with environment variables set (`Some`) or removed (`None`).
fn run_env(
    files: &[&Path],
    extra: &[&str],
    dir: &Path,
    env: &[(&str, Option<&str>)],
) -> Result<(Finished, Value), Box<dyn Error>> {
    let mut args: Vec<String> = vec!["run".into()];
    args.extend(files.iter().map(|p| p.display().to_string()));
    for a in [
        "--samples",
        "5",
        "--warmup",
        "20ms",
        "--timeout",
        "5s",
        "--export-json",
        "-",
    ] {
        args.push(a.into());
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // SAFETY-free: the cache folder is chosen through the environment.
    let finished = {
        let mut command = std::process::Command::new(e2e::host_binary());
        command
            .args(&args)
            .current_dir(dir)
            .env("WASM_BENCH_CACHE", dir.join("cache"))
            .env_remove("WASM_BENCH_USE_SMALL_WORKLOAD")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        for (key, value) in env {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        e2e::finish_within(e2e::prepare(&mut command).spawn()?, BOUND)?
    };
    assert!(!finished.stderr.contains("panicked"), "{}", finished.stderr);
    let report: Value = serde_json::from_str(&finished.stdout).map_err(|e| {
        format!(
            "{e}: stdout was {} / stderr {}",
            finished.stdout, finished.stderr
        )
    })?;
    e2e::validate_export(&report)?;
    Ok((finished, report))
}

fn row<'a>(report: &'a Value, name: &str) -> Result<&'a Value, Box<dyn Error>> {
    report["results"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["name"] == name))
        .ok_or_else(|| format!("no row {name}: {report}").into())
}

fn error_of(report: &Value, name: &str) -> Result<String, Box<dyn Error>> {
    Ok(row(report, name)?["error"]
        .as_str()
        .ok_or_else(|| format!("{name} did not fail"))?
        .to_string())
}

#[test]
fn the_bundled_program_is_measured_with_phases() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (finished, report) = run(&[&workloads().join("wc.wasm")], &[], dir.path())?;
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    let wc = row(&report, "wc")?;
    assert_eq!(wc["kind"], "program");
    assert_eq!(wc["samples"], 5);
    let phases = &wc["phases"];
    assert!(
        phases["compile_ms"].as_f64().is_some_and(|x| x > 0.0),
        "{phases}"
    );
    for phase in ["instantiate_ns", "execute_ns"] {
        let p = &phases[phase];
        for key in ["median", "mean", "min", "max"] {
            assert!(
                p[key].as_f64().is_some_and(|x| x > 0.0),
                "{phase}.{key}: {p}"
            );
        }
        assert_eq!(p["samples"], 5);
    }
    assert_eq!(phases["timed_region"], "start_to_end");
    assert_eq!(wc["ns_per_op"]["median"], phases["execute_ns"]["median"]);
    Ok(())
}

#[test]
fn a_program_is_never_told_apart_from_an_empty_guest() -> TestResult {
    let dir = tempfile::tempdir()?;
    // A stated drift of 200% widens the interval on the log scale: it
    // stays above zero, and a program is never taken for an empty guest.
    let (finished, report) = run(
        &[&program("spin.wat")],
        &["--drift", "200", "--processes", "1"],
        dir.path(),
    )?;
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    let spin = row(&report, "spin")?;
    assert!(
        spin["ns_per_op"]["ci95_low"]
            .as_f64()
            .is_some_and(|x| x > 0.0),
        "{spin}"
    );
    assert_eq!(spin["indistinguishable_from_empty"], false);
    let notes = spin["notes"].to_string();
    assert!(!notes.contains("empty guest"), "{notes}");
    Ok(())
}

#[test]
fn expected_output_passes_and_fails() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (finished, report) = run(&[&program("hello.wat")], &[], dir.path())?;
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    assert!(row(&report, "hello")?.get("error").is_none());

    // The same program beside a wrong expectation.
    let copy = dir.path().join("hello.wat");
    std::fs::copy(program("hello.wat"), &copy)?;
    std::fs::write(dir.path().join("hello.stdout.expected"), "goodbye\n")?;
    let (finished, report) = run(&[&copy], &[], dir.path())?;
    assert_eq!(finished.status.code(), Some(1));
    let error = error_of(&report, "hello")?;
    assert!(
        error.contains("stdout differs from the expected output"),
        "{error}"
    );
    assert!(error.contains("got `hello`, expected `goodbye`"), "{error}");

    // `default.stdout.expected` applies when there is no `<name>.stdout.expected`.
    std::fs::remove_file(dir.path().join("hello.stdout.expected"))?;
    std::fs::write(dir.path().join("default.stdout.expected"), "hello\n")?;
    std::fs::write(dir.path().join("default.stderr.expected"), "")?;
    let (finished, _) = run(&[&copy], &[], dir.path())?;
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stdout);
    std::fs::write(dir.path().join("default.stderr.expected"), "a warning\n")?;
    let (_, report) = run(&[&copy], &[], dir.path())?;
    assert!(error_of(&report, "hello")?.contains("stderr differs"));
    Ok(())
}

#[test]
fn exit_codes() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (finished, report) = run(
        &[&program("exit_code.wat"), &program("exit_zero.wat")],
        &[],
        dir.path(),
    )?;
    assert_eq!(finished.status.code(), Some(1));
    let error = error_of(&report, "exit_code")?;
    assert!(error.ends_with("exited with code 3"), "{error}");
    assert!(row(&report, "exit_zero")?.get("error").is_none());
    Ok(())
}

#[test]
fn start_and_end_protocol() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (_, report) = run(
        &[
            &program("only_start.wat"),
            &program("start_no_end.wat"),
            &program("end_first.wat"),
            &program("whole.wat"),
            &program("trap.wat"),
            &program("two_pairs.wat"),
        ],
        &[],
        dir.path(),
    )?;
    // Imports bench.start only: the whole of _start is timed, and said.
    let only_start = row(&report, "only_start")?;
    assert!(only_start.get("error").is_none(), "{only_start}");
    assert_eq!(only_start["phases"]["timed_region"], "whole_start_no_end");
    let notes = only_start["notes"].to_string();
    assert!(
        notes.contains("imports bench.start but not bench.end"),
        "{notes}"
    );
    // Imports both, calls only start: an error.
    assert!(error_of(&report, "start_no_end")?.contains("called bench.start but never bench.end"));
    assert!(error_of(&report, "end_first")?.contains("bench.end called before bench.start"));
    assert!(error_of(&report, "trap")?.contains("wasm `unreachable` executed"));
    let whole = row(&report, "whole")?;
    assert_eq!(whole["phases"]["timed_region"], "whole_start");
    let notes = whole["notes"].to_string();
    assert!(notes.contains("timed over the whole of _start"), "{notes}");
    // Two pairs per run: two execution samples per iteration (5 iterations).
    let two = row(&report, "two_pairs")?;
    assert_eq!(two["phases"]["timed_region"], "start_to_end");
    assert_eq!(two["phases"]["execute_ns"]["samples"], 10, "{two}");
    assert_eq!(two["phases"]["instantiate_ns"]["samples"], 5, "{two}");
    Ok(())
}

/// Expected output is text compared line by line: "0\n" matches "0", CRLF
/// matches LF, and a program with no expected file is not checked.
#[test]
fn expected_output_is_compared_as_lines() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (finished, report) = run(
        &[&program("zero.wat"), &program("crlf.wat")],
        &[],
        dir.path(),
    )?;
    assert_eq!(finished.status.code(), Some(0), "{report}");
    // A line that really differs still fails, with its line number.
    let copy = dir.path().join("zero.wat");
    std::fs::copy(program("zero.wat"), &copy)?;
    std::fs::write(dir.path().join("zero.stdout.expected"), "1")?;
    let (_, report) = run(&[&copy], &[], dir.path())?;
    let error = error_of(&report, "zero")?;
    assert!(
        error.contains("stdout differs from the expected output at line 1: got `0`, expected `1`"),
        "{error}"
    );
    // No expected file at all: nothing to check, not an error.
    std::fs::remove_file(dir.path().join("zero.stdout.expected"))?;
    let (finished, report) = run(&[&copy], &[], dir.path())?;
    assert_eq!(finished.status.code(), Some(0), "{report}");
    assert!(row(&report, "zero")?.get("error").is_none());
    Ok(())
}

/// Wasm 3.0 modules run as wasmtime runs them by default; `-W` turns a
/// proposal off, and the report records it.
#[test]
fn wasm_3_features_and_engine_flags() -> TestResult {
    let dir = tempfile::tempdir()?;
    let files = [
        program("gc.wat"),
        program("exceptions.wat"),
        program("tail_call.wat"),
    ];
    let files: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let (finished, report) = run(&files, &[], dir.path())?;
    assert_eq!(finished.status.code(), Some(0), "{report}");
    for name in ["gc", "exceptions", "tail_call"] {
        assert!(row(&report, name)?.get("error").is_none(), "{name}");
    }
    assert_eq!(
        report["environment"]["engines"][0]["wasm"],
        serde_json::json!({})
    );

    let (finished, report) = run(&files, &["-W", "gc=n,tail-call=n"], dir.path())?;
    assert_eq!(finished.status.code(), Some(1), "{report}");
    assert_eq!(
        report["environment"]["engines"][0]["wasm"],
        serde_json::json!({"gc": false, "tail-call": false})
    );
    assert!(error_of(&report, "gc")?.contains("does not compile"));
    assert!(error_of(&report, "tail_call")?.contains("does not compile"));
    assert!(row(&report, "exceptions")?.get("error").is_none());

    let bad = run_host_within(&["run", "x.wasm", "-W", "gcc"], dir.path(), BOUND)?;
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        bad.stderr.contains("unknown proposal `gcc`"),
        "{}",
        bad.stderr
    );
    Ok(())
}

/// A WASI preview 2 command component importing a `bench` instance runs as
/// a program; `wasi:cli/run` returning err fails its row.
#[test]
fn command_components_run_as_programs() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (finished, report) = run(
        &[
            &program("command_component.wat"),
            &program("command_component_err.wat"),
        ],
        &[],
        dir.path(),
    )?;
    assert_eq!(finished.status.code(), Some(1), "{report}");
    let ok = row(&report, "command_component")?;
    assert!(ok.get("error").is_none(), "{ok}");
    assert_eq!(ok["kind"], "program");
    assert_eq!(ok["phases"]["timed_region"], "start_to_end");
    assert_eq!(ok["phases"]["execute_ns"]["samples"], 5);
    let error = error_of(&report, "command_component_err")?;
    assert!(error.contains("wasi:cli/run returned an error"), "{error}");
    Ok(())
}

/// A program sees no arguments and no environment, except the small-
/// workload variable when the host has it.
#[test]
fn arguments_and_the_small_workload_variable() -> TestResult {
    let dir = tempfile::tempdir()?;
    // args.wat exits with its argument count: 0 passes.
    let (finished, report) = run(&[&program("args.wat")], &[], dir.path())?;
    assert_eq!(finished.status.code(), Some(0), "{report}");
    let (_, report) = run(&[&program("args.wat")], &["--arg", "x"], dir.path())?;
    assert!(error_of(&report, "args")?.ends_with("exited with code 1"));

    // small.wat prints "small" when it sees exactly one variable.
    let small = program("small.wat");
    let (finished, report) = run_env(
        &[&small],
        &[],
        dir.path(),
        &[
            ("WASM_BENCH_USE_SMALL_WORKLOAD", Some("1")),
            ("SOMETHING_ELSE", Some("1")),
        ],
    )?;
    assert_eq!(finished.status.code(), Some(0), "{report}");
    let (_, report) = run(&[&small], &[], dir.path())?;
    assert!(error_of(&report, "small")?.contains("got `full`, expected `small`"));
    Ok(())
}

/// A path that is not a regular file, or a file past --max-file-size, fails
/// its own row at once; the good workload beside them is measured.
#[cfg(unix)]
#[test]
fn files_that_are_not_workloads_are_refused() -> TestResult {
    let dir = tempfile::tempdir()?;
    let folder = dir.path().join("in");
    std::fs::create_dir(&folder)?;
    let fifo = folder.join("fifo.wasm");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status()?;
    assert!(made.success());
    std::os::unix::fs::symlink("/dev/zero", folder.join("zero.wasm"))?;
    let mut big = std::fs::read(workloads().join("xor.wasm"))?;
    big.resize(64 << 10, 0);
    std::fs::write(folder.join("big.wasm"), &big)?;
    std::fs::copy(workloads().join("xor.wasm"), folder.join("xor.wasm"))?;
    let (finished, report) = run(&[&folder], &["--max-file-size", "32KiB"], dir.path())?;
    assert_eq!(finished.status.code(), Some(1), "{report}");
    for name in ["fifo", "zero"] {
        let error = error_of(&report, name)?;
        assert!(error.contains("not a regular file"), "{name}: {error}");
    }
    let error = error_of(&report, "big")?;
    assert!(
        error.contains("the file is 64 KiB, larger than --max-file-size 32 KiB"),
        "{error}"
    );
    assert!(row(&report, "xor")?.get("error").is_none());
    Ok(())
}

/// A folder of benchmark folders (Sightglass's layout) and a `.suite` file
/// run every benchmark; rows sharing a file name are named by folder, and
/// the report ends with a suite summary, against a baseline too.
#[test]
fn suites_of_benchmark_folders() -> TestResult {
    let dir = tempfile::tempdir()?;
    let suite = dir.path().join("suite");
    for (folder, file) in [("zero", "zero.wat"), ("pairs", "two_pairs.wat")] {
        std::fs::create_dir_all(suite.join(folder))?;
        std::fs::copy(program(file), suite.join(folder).join("benchmark.wat"))?;
    }
    std::fs::write(suite.join("zero").join("benchmark.stdout.expected"), "0")?;
    let (finished, report) = run(&[&suite], &[], dir.path())?;
    assert_eq!(finished.status.code(), Some(0), "{report}");
    let names: Vec<&str> = report["results"]
        .as_array()
        .ok_or("no results")?
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(names, ["pairs", "zero"]);
    let summary = &report["suite"];
    assert_eq!(summary["rows"], 2, "{summary}");
    assert_eq!(summary["measured"], 2);
    // A program timed in a few steps of the clock (`zero`, as a rule) is
    // in no geometric mean.
    let medians: Vec<f64> = report["results"]
        .as_array()
        .ok_or("no results")?
        .iter()
        .filter(|r| r["at_clock_resolution"] != true)
        .filter_map(|r| r["ns_per_op"]["median"].as_f64())
        .collect();
    assert_eq!(summary["timed_rows"], medians.len(), "{summary}");
    let geomean = medians.iter().map(|m| m.ln()).sum::<f64>() / medians.len() as f64;
    let geomean = geomean.exp();
    let reported = summary["geomean_ns"].as_f64().ok_or("no geomean")?;
    assert!(
        (reported - geomean).abs() <= geomean * 1e-9,
        "{reported} vs {geomean}"
    );
    assert!(finished.stdout.is_empty() || !finished.stdout.contains("panicked"));

    // The same two through a .suite file, saved, then against the baseline.
    std::fs::write(
        suite.join("all.suite"),
        "# two benchmarks\nzero/benchmark.wat\n\npairs/benchmark.wat\n",
    )?;
    let listed = suite.join("all.suite");
    let (finished, report) = run(&[&listed], &["--save-baseline", "s"], dir.path())?;
    assert_eq!(finished.status.code(), Some(0), "{report}");
    let (finished, report) = run(&[&listed], &["--baseline", "s"], dir.path())?;
    assert_eq!(finished.status.code(), Some(0), "{report}");
    let summary = &report["suite"];
    assert_eq!(summary["baseline_rows"], 2, "{summary}");
    let ratio = &summary["baseline_ratio"];
    let (low, mid, high) = (
        ratio["ci95_low"].as_f64().ok_or("no low")?,
        ratio["ratio"].as_f64().ok_or("no ratio")?,
        ratio["ci95_high"].as_f64().ok_or("no high")?,
    );
    assert!(low <= mid && mid <= high && low > 0.0, "{ratio}");

    // The store files the rows under the folders' names too.
    let store = dir.path().join("store");
    let store_arg = store.display().to_string();
    let (finished, report) = run(&[&suite], &["--store", &store_arg], dir.path())?;
    assert_eq!(finished.status.code(), Some(0), "{report}");
    let out = e2e::prepare(std::process::Command::new(e2e::host_binary()).args([
        "history",
        "--store",
        &store_arg,
        "--export-json",
        "-",
    ]))
    .output()?;
    let history: Value = serde_json::from_slice(&out.stdout)?;
    let mut series: Vec<&str> = history["series"]
        .as_array()
        .ok_or("no series")?
        .iter()
        .filter_map(|s| s["benchmark"].as_str())
        .collect();
    series.dedup();
    assert_eq!(series, ["pairs", "zero"], "{history}");
    Ok(())
}

#[test]
fn program_grants() -> TestResult {
    // Without --dir, a program sees only its own folder (read-only): the
    // bundled wc reads its input from there.
    let dir = tempfile::tempdir()?;
    let (finished, _) = run(
        &[&workloads().join("wc.wasm")],
        &["--env", "A=1", "--arg", "x"],
        dir.path(),
    )?;
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    let bad = run_host_within(&["run", "x.wasm", "--env", "novalue"], dir.path(), BOUND)?;
    assert_eq!(bad.status.code(), Some(2));
    assert!(bad.stderr.contains("--env"), "{}", bad.stderr);
    Ok(())
}

#[test]
fn engines_are_selected_and_recorded() -> TestResult {
    let dir = tempfile::tempdir()?;
    let xor = workloads().join("xor.wasm");
    let (finished, report) = run(
        &[&xor],
        &[
            "--engine",
            "cranelift",
            "--engine",
            "winch",
            "--engine",
            "pulley",
            "--count",
            "1000",
            // One seed for every call, so that every engine's last call
            // computes the same checksum.
            "--same-seed",
        ],
        dir.path(),
    )?;
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    let engines = report["environment"]["engines"]
        .as_array()
        .ok_or("no engines")?;
    let compilers: Vec<&str> = engines
        .iter()
        .filter_map(|e| e["compiler"].as_str())
        .collect();
    assert_eq!(compilers, ["cranelift", "winch", "pulley"]);
    for engine in ["cranelift", "winch", "pulley"] {
        let r = row(&report, &format!("xor[{engine}]"))?;
        assert_eq!(r["engine"], engine);
        assert!(r.get("error").is_none(), "{r}");
        // Every engine computes the same thing.
        assert_eq!(r["checksum"], row(&report, "xor[cranelift]")?["checksum"]);
    }
    let (_, report) = run(&[&xor], &["--opt-level", "none"], dir.path())?;
    assert_eq!(report["environment"]["engines"][0]["opt_level"], "none");
    assert!(row(&report, "xor")?.get("engine").is_none());

    // Compare across engines: one variant per engine.
    let compared = run_host_within(
        &[
            "compare",
            &xor.display().to_string(),
            "--engine",
            "cranelift",
            "--engine",
            "winch",
            "--metric",
            "instructions",
            "--time",
            "2s",
            "--export-json",
            "-",
        ],
        dir.path(),
        BOUND,
    )?;
    assert_eq!(compared.status.code(), Some(0), "{}", compared.stderr);
    let compared: Value = serde_json::from_str(&compared.stdout)?;
    assert_eq!(compared["comparisons"][0]["variant"], "xor[winch]");
    assert_eq!(compared["comparisons"][0]["reference"], "xor[cranelift]");
    // The same wasm: the same instruction count under both compilers.
    assert_eq!(compared["comparisons"][0]["verdict"], "same");
    Ok(())
}

#[test]
fn compile_cache_miss_hit_and_damaged_entry() -> TestResult {
    let dir = tempfile::tempdir()?;
    let xor = workloads().join("xor.wasm");
    let (_, report) = run(&[&xor], &[], dir.path())?;
    assert_eq!(row(&report, "xor")?["compile_cache"], "miss");
    let (_, report) = run(&[&xor], &[], dir.path())?;
    assert_eq!(row(&report, "xor")?["compile_cache"], "hit");
    let (_, report) = run(&[&xor], &["--no-cache"], dir.path())?;
    assert_eq!(row(&report, "xor")?["compile_cache"], "off");
    assert_eq!(report["environment"]["compile_cache"], Value::Null);

    // Damage every entry: each is refused, rebuilt and replaced.
    let entries: Vec<PathBuf> = std::fs::read_dir(dir.path().join("cache"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    assert!(!entries.is_empty());
    for entry in &entries {
        let mut bytes = std::fs::read(entry)?;
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0xff;
        std::fs::write(entry, &bytes)?;
    }
    let (finished, report) = run(&[&xor], &[], dir.path())?;
    assert_eq!(finished.status.code(), Some(0));
    let outcome = &row(&report, "xor")?["compile_cache"];
    assert!(
        outcome["rebuilt"]
            .as_str()
            .is_some_and(|r| r.contains("checksum mismatch")),
        "{outcome}"
    );
    let (_, report) = run(&[&xor], &[], dir.path())?;
    assert_eq!(row(&report, "xor")?["compile_cache"], "hit");

    // An entry that is not an entry at all.
    for entry in &entries {
        std::fs::write(entry, b"junk")?;
    }
    let (_, report) = run(&[&xor], &[], dir.path())?;
    assert!(row(&report, "xor")?["compile_cache"]["rebuilt"].is_string());
    Ok(())
}

/// A program takes no size: `--size` gives workloads a row per size, and a
/// program one row, without a size and without a complexity fit (issue 10).
#[test]
fn programs_take_no_size() -> TestResult {
    let dir = tempfile::tempdir()?;
    let wc = workloads().join("wc.wasm");
    let xor = workloads().join("xor.wasm");
    let (finished, report) = run(&[&wc, &xor], &["--size", "16,32"], dir.path())?;
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    let names: Vec<&str> = report["results"]
        .as_array()
        .ok_or("no results")?
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(names, ["wc", "xor/16", "xor/32"], "{report}");
    assert!(row(&report, "wc")?["size"].is_null());
    let fitted: Vec<&str> = report["complexity"]
        .as_array()
        .ok_or("no complexity")?
        .iter()
        .filter_map(|c| c["benchmark"].as_str())
        .collect();
    assert_eq!(fitted, ["xor"], "{report}");
    Ok(())
}

/// `host compare` compares programs with programs and `run(count, seed)`
/// workloads with workloads; a program against a workload is refused before
/// anything is measured, with a line that says why (issue 10).
#[test]
fn compare_refuses_a_program() -> TestResult {
    let dir = tempfile::tempdir()?;
    let wc = workloads().join("wc.wasm").display().to_string();
    let xor = workloads().join("xor.wasm").display().to_string();
    let finished = run_host_within(&["compare", &xor, &wc], dir.path(), BOUND)?;
    assert_eq!(
        finished.status.code(),
        Some(2),
        "a usage error: {finished:?}"
    );
    let line = finished
        .stderr
        .lines()
        .find(|l| l.starts_with("error:"))
        .ok_or("no error line")?;
    assert!(line.contains("wc.wasm"), "{line}");
    assert!(line.contains("cannot be compared"), "{line}");
    assert!(!finished.stderr.contains("panicked"), "{}", finished.stderr);
    Ok(())
}

/// The selftest's reference process times a bundled program on an engine of
/// wasmtime's defaults, whose code is byte for byte the harness's.
#[test]
fn the_selftest_reference_times_the_same_code() -> TestResult {
    let dir = tempfile::tempdir()?;
    let loop_wasm = workloads().join("loop.wasm");
    let path = loop_wasm.display().to_string();
    let finished = run_host_within(
        &["selftest-reference", &path, "--iterations", "2"],
        dir.path(),
        BOUND,
    )?;
    assert!(finished.status.success(), "{}", finished.stderr);
    let timing: Value = serde_json::from_str(&finished.stdout)?;
    assert_eq!(timing["identical_code"], true, "{timing}");
    assert!(
        timing["text_bytes"].as_u64().is_some_and(|n| n > 0),
        "{timing}"
    );
    assert!(
        timing["execute_ns"].as_f64().is_some_and(|t| t > 0.0),
        "{timing}"
    );
    Ok(())
}

/// `--save-expected` writes a program's stdout beside it before measuring;
/// the row then says its output was checked. An expected file that links
/// out of the program's folder is refused, and what it points to is not
/// quoted.
#[test]
fn save_expected_writes_the_output_and_a_link_out_of_the_folder_is_refused() -> TestResult {
    let dir = tempfile::tempdir()?;
    let folder = dir.path().join("prog");
    std::fs::create_dir(&folder)?;
    for file in ["wc.wasm", "wc.input.txt"] {
        std::fs::copy(workloads().join(file), folder.join(file))?;
    }
    let wc = folder.join("wc.wasm");
    let (finished, report) = run(&[&wc], &["--save-expected"], dir.path())?;
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    let saved = std::fs::read_to_string(folder.join("wc.stdout.expected"))?;
    let bundled = std::fs::read_to_string(workloads().join("wc.stdout.expected"))?;
    assert_eq!(saved.trim_end(), bundled.trim_end());
    let notes = row(&report, "wc")?["notes"].to_string();
    assert!(
        notes.contains("output checked in every iteration against wc.stdout.expected"),
        "{notes}"
    );

    std::fs::write(dir.path().join("secret.txt"), "the secret words\n")?;
    std::fs::remove_file(folder.join("wc.stdout.expected"))?;
    std::os::unix::fs::symlink("../secret.txt", folder.join("wc.stdout.expected"))?;
    let (finished, report) = run(&[&wc], &[], dir.path())?;
    assert_eq!(finished.status.code(), Some(1), "{}", finished.stderr);
    let error = error_of(&report, "wc")?;
    assert!(
        error.contains("leading out of the program's folder"),
        "{error}"
    );
    assert!(!report.to_string().contains("the secret words"), "{report}");
    Ok(())
}

/// `--save-expected` runs a program in a worker held to `--timeout`: one
/// that never ends fails the command with the deadline, within the bound,
/// and saves nothing.
#[test]
fn save_expected_ends_a_program_that_never_ends_at_the_timeout() -> TestResult {
    let dir = tempfile::tempdir()?;
    let forever = dir.path().join("forever.wat");
    std::fs::copy(fixture("programs/forever.wat"), &forever)?;
    let finished = run_host_within(
        &[
            "run",
            "forever.wat",
            "--save-expected",
            "--timeout",
            "2s",
            "--no-store",
        ],
        dir.path(),
        BOUND,
    )?;
    assert_eq!(finished.status.code(), Some(2), "{}", finished.stderr);
    assert!(
        finished.stderr.contains("--save-expected") && finished.stderr.contains("--timeout 2s"),
        "{}",
        finished.stderr
    );
    assert!(!dir.path().join("forever.stdout.expected").exists());
    Ok(())
}
