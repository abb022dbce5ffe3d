//! End-to-end tests: run the built `host` binary on the fixtures in
//! `tests/fixtures/` and on the bundled `workloads/`, and check its exit
//! status, its table and its JSON export.
//!
//! No test asserts a time: only deterministic quantities (checksums, counts,
//! sample numbers, pause counts, row names, sizes, messages) and the types of
//! the figures.
//!
//! The binary is `target/release/host`, built by `cargo build --release -p
//! host` once per test process (see [`host_binary`]); set `WASM_BENCH_HOST`
//! to the path of a prebuilt binary to skip the build.

use std::error::Error;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use e2e::{fixture, host_binary, workloads, workspace_root};
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

// ---------------------------------------------------------------------------
// Running it
// ---------------------------------------------------------------------------

/// Samples per benchmark unless a test asks for another number.
const SAMPLES: usize = 20;
/// Flags that, with few samples, keep one benchmark well under a second.
const FAST: [&str; 4] = ["--warmup", "20ms", "--sample-time", "500us"];

/// `host run PATHS --samples 20` with the fast flags; add more flags with
/// `.args(...)`.
fn bench<I, S>(paths: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    bench_samples(paths, SAMPLES)
}

/// `host run PATHS --samples N` with the fast flags.
fn bench_samples<I, S>(paths: I, samples: usize) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut command = Command::new(host_binary());
    command
        .arg("run")
        .args(paths)
        .args(FAST)
        .arg("--samples")
        .arg(samples.to_string());
    command
}

/// `host run ARGS` with nothing added (for usage errors).
fn host_run<I, S>(args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut command = Command::new(host_binary());
    command.arg("run").args(args);
    command
}

/// Run it, check that nothing panicked, and return the output with its
/// streams as text.
fn output(command: &mut Command) -> Result<(Output, String, String), Box<dyn Error>> {
    let out = e2e::prepare(command).output()?;
    let stdout = String::from_utf8(out.stdout.clone())?;
    let stderr = String::from_utf8(out.stderr.clone())?;
    for (stream, text) in [("stdout", &stdout), ("stderr", &stderr)] {
        assert!(
            !text.contains("panicked") && !text.contains("RUST_BACKTRACE"),
            "the host panicked ({stream}):\n{text}"
        );
    }
    Ok((out, stdout, stderr))
}

/// Run with `--export-json -` and parse all of stdout as JSON; returns the
/// exit code, the report and stderr (where the table went).
fn json_run(command: &mut Command) -> Result<(Option<i32>, Value, String), Box<dyn Error>> {
    let (out, stdout, stderr) = output(command.args(["--export-json", "-"]))?;
    let report: Value = serde_json::from_str(&stdout)
        .map_err(|e| format!("stdout is not pure JSON ({e}):\n{stdout}\nstderr:\n{stderr}"))?;
    // Every export the tests produce follows the shipped schema (issue #15).
    e2e::validate_export(&report)?;
    Ok((out.status.code(), report, stderr))
}

/// The result rows of a report.
fn rows(report: &Value) -> Result<&Vec<Value>, Box<dyn Error>> {
    report["results"]
        .as_array()
        .ok_or_else(|| format!("`results` is not a list: {report}").into())
}

/// The row named `name`.
fn row<'a>(report: &'a Value, name: &str) -> Result<&'a Value, Box<dyn Error>> {
    rows(report)?
        .iter()
        .find(|r| r["name"] == name)
        .ok_or_else(|| format!("no row named {name}: {report}").into())
}

fn names(report: &Value) -> Result<Vec<&str>, Box<dyn Error>> {
    Ok(rows(report)?
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect())
}

fn number(value: &Value, key: &str) -> Result<f64, Box<dyn Error>> {
    value[key]
        .as_f64()
        .ok_or_else(|| format!("`{key}` is not a number: {value}").into())
}

fn integer(value: &Value, key: &str) -> Result<u64, Box<dyn Error>> {
    value[key]
        .as_u64()
        .ok_or_else(|| format!("`{key}` is not a non-negative integer: {value}").into())
}

/// The checksum of a core module's row: `run` returns an i64.
fn checksum(value: &Value) -> Result<i64, Box<dyn Error>> {
    value["checksum"]
        .as_i64()
        .ok_or_else(|| format!("`checksum` is not a 64-bit integer: {value}").into())
}

/// The checksum of a component's row: `run` returns a u64.
fn checksum_u64(value: &Value) -> Result<u64, Box<dyn Error>> {
    value["checksum"]
        .as_u64()
        .ok_or_else(|| format!("`checksum` is not an unsigned 64-bit integer: {value}").into())
}

/// Every row, measured or failed: `benchmark` is `file` or `file:name`,
/// `size` is null or a size, and `name` is `benchmark` followed by `/size`
/// when there is a size.
fn assert_row_names(row: &Value) -> TestResult {
    let name = row["name"]
        .as_str()
        .ok_or_else(|| format!("`name` is not a string: {row}"))?;
    let benchmark = row["benchmark"]
        .as_str()
        .ok_or_else(|| format!("`benchmark` is not a string: {row}"))?;
    assert!(row["path"].is_string(), "{row}");
    match &row["size"] {
        Value::Null => assert_eq!(name, benchmark, "{row}"),
        size => {
            let size = size
                .as_u64()
                .ok_or_else(|| format!("`size` is neither null nor a size: {row}"))?;
            assert_eq!(name, format!("{benchmark}/{size}"), "{row}");
        }
    }
    Ok(())
}

/// A measured core module: see [`assert_measured_as`].
fn assert_measured(row: &Value) -> TestResult {
    assert_measured_as(row, "module")
}

/// A measured row: no `error`, this `kind`, and figures of the right types
/// that agree with each other; the checksum is an i64 for a core module and
/// a u64 for a component.
fn assert_measured_as(row: &Value, kind: &str) -> TestResult {
    assert!(row.get("error").is_none(), "the row failed: {row}");
    assert_eq!(row["kind"], kind, "{row}");
    assert_row_names(row)?;

    let count = integer(row, "count")?;
    assert!(count >= 1, "{row}");
    let samples = integer(row, "samples")?;
    assert!(samples >= 1, "{row}");

    let ns = &row["ns_per_op"];
    let stat = |key: &str| -> Result<f64, Box<dyn Error>> {
        let x = number(ns, key)?;
        assert!(x.is_finite(), "ns_per_op.{key} is not finite: {ns}");
        Ok(x)
    };
    let (median, min, max) = (stat("median")?, stat("min")?, stat("max")?);
    let (low, high) = (stat("ci95_low")?, stat("ci95_high")?);
    stat("mean")?;
    assert!(stat("stddev")? >= 0.0, "{ns}");
    assert!(min <= median && median <= max, "{ns}");
    assert!(low <= high, "{ns}");

    for key in [
        "raw_ns_per_op_median",
        "err_pct",
        "fixed_cost_ns",
        "warmup_ms",
        "compile_ms",
    ] {
        let x = number(row, key)?;
        assert!(x.is_finite() && x >= 0.0, "`{key}` = {x}: {row}");
    }
    match &row["ops_per_sec"] {
        Value::Null => {}
        Value::Number(n) => assert!(n.as_f64().is_some_and(|x| x > 0.0), "{row}"),
        other => panic!("`ops_per_sec` is {other}, expected a number or null"),
    }
    assert!(integer(row, "outliers")? <= samples, "{row}");
    match kind {
        "module" => {
            checksum(row)?;
        }
        "program" => {
            // A program returns nothing: no checksum (issue 10), its phases
            // stand in for one.
            assert!(row.get("checksum").is_none(), "{row}");
            for phase in ["instantiate_ns", "execute_ns"] {
                let median = number(&row["phases"][phase], "median")?;
                assert!(median.is_finite() && median > 0.0, "{row}");
            }
        }
        "component" => {
            checksum_u64(row)?;
        }
        other => panic!("unknown kind {other:?}"),
    }
    let pauses = integer(row, "pauses_per_sample")?;
    assert!(pauses <= 1_000_000, "{row}");

    // Raw samples: one list per block, `samples` numbers in all.
    let blocks = row["raw_samples_ns"]
        .as_array()
        .ok_or_else(|| format!("`raw_samples_ns` is not a list: {row}"))?;
    let mut taken = 0;
    for block in blocks {
        let block = block
            .as_array()
            .ok_or_else(|| format!("a block of `raw_samples_ns` is not a list: {row}"))?;
        for sample in block {
            let ns = sample
                .as_f64()
                .ok_or_else(|| format!("a raw sample is not a number: {row}"))?;
            assert!(ns.is_finite() && ns >= 0.0, "raw sample {ns}: {row}");
        }
        taken += block.len() as u64;
    }
    assert_eq!(
        taken, samples,
        "raw_samples_ns holds {taken} samples, `samples` says {samples}"
    );
    Ok(())
}

/// A failed row: an `error` string on one line, and no figures.
fn assert_failed(row: &Value) -> Result<&str, Box<dyn Error>> {
    let error = row["error"]
        .as_str()
        .ok_or_else(|| format!("the row did not fail: {row}"))?;
    assert!(
        !error.contains('\n'),
        "the error is not one line: {error:?}"
    );
    assert_row_names(row)?;
    for key in [
        "count",
        "samples",
        "ns_per_op",
        "checksum",
        "raw_samples_ns",
    ] {
        assert!(row.get(key).is_none(), "a failed row has `{key}`: {row}");
    }
    Ok(error)
}

/// `path` is a bad workload: the run still ends normally with exit status 1
/// and one failed row named `name`, whose error names the file and contains
/// `reason`, in the table and in the JSON alike.
fn assert_bad(path: &Path, name: &str, kind: Option<&str>, reason: &str) -> TestResult {
    let dir = tempfile::tempdir()?;
    let json = dir.path().join("out.json");
    let (out, stdout, stderr) = output(bench([path]).arg("--export-json").arg(&json))?;
    assert_eq!(
        out.status.code(),
        Some(1),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        !stderr.lines().any(|l| l.starts_with("error:")),
        "a bad workload is a failed row, not a fatal error:\n{stderr}"
    );

    // The table: exactly one error row, starting with the row name.
    let errors: Vec<&str> = stdout.lines().filter(|l| l.contains("  error: ")).collect();
    assert_eq!(errors.len(), 1, "expected one error row:\n{stdout}");
    let (row_name, table_error) = errors[0]
        .split_once("  error: ")
        .ok_or("no error in the row")?;
    assert_eq!(row_name.trim_end(), name, "{stdout}");
    let shown = path.display().to_string();
    assert!(
        table_error.starts_with(&shown),
        "the error does not name {shown}: {table_error}"
    );
    assert!(
        table_error.contains(reason),
        "the error does not say {reason:?}: {table_error}"
    );
    assert!(stdout.contains("0 measured, 1 failed"), "{stdout}");

    // The JSON: the same row, the same message.
    let report: Value = serde_json::from_slice(&std::fs::read(&json)?)?;
    assert_eq!(rows(&report)?.len(), 1, "{report}");
    let row = &rows(&report)?[0];
    assert_eq!(row["name"], name);
    assert_eq!(row["path"], shown.as_str());
    match kind {
        Some(kind) => assert_eq!(row["kind"], kind, "{row}"),
        None => assert!(row["kind"].is_null(), "{row}"),
    }
    assert_eq!(assert_failed(row)?, table_error);
    Ok(())
}

/// A usage or fatal error: exit status 2, nothing on stdout, and one line on
/// stderr that starts with `error:` and contains `needle`.
/// `--metric counters`: the CPU's counts per op where the kernel gives
/// hardware counters, otherwise a note that says why, in line with the
/// environment's probe; the time is measured either way.
#[test]
fn hardware_counters_count_or_say_why_not() -> TestResult {
    let xor = workloads().join("xor.wasm");
    let (code, report, table) = json_run(bench_samples([&xor], 3).args(["--metric", "counters"]))?;
    assert_eq!(code, Some(0), "{table}");
    let xor_row = row(&report, "xor")?;
    assert_measured(xor_row)?;
    let pmu = report["environment"]["pmu"]
        .as_str()
        .ok_or("no environment.pmu")?;
    let notes = xor_row["notes"].as_array().ok_or("no notes")?;
    let said = notes
        .iter()
        .filter_map(Value::as_str)
        .find(|n| n.starts_with("hardware counters: "));
    match &xor_row["hardware_counters"] {
        Value::Null => {
            let said = said.ok_or(format!("no counts and no note: {xor_row}"))?;
            assert!(
                said.starts_with("hardware counters: unavailable (perf_event_open: ")
                    || said.contains("multiplexed"),
                "{said}"
            );
            assert!(
                pmu.starts_with("unavailable (") || said.contains("multiplexed"),
                "{pmu}"
            );
        }
        counts => {
            assert_eq!(pmu, "available");
            assert!(said.is_none(), "{said:?}");
            // xor's loop body retires a few instructions per op.
            assert!(number(counts, "instructions")? > 0.5, "{counts}");
            assert!(number(counts, "cycles")? > 0.0, "{counts}");
        }
    }
    assert!(table.contains("hardware counters: "), "{table}");
    // Compare judges by time or a deterministic count, never by these.
    assert_fatal(
        Command::new(host_binary())
            .args(["compare"])
            .args([&xor, &xor])
            .args(["--metric", "counters"]),
        "--metric counters",
    )?;
    Ok(())
}

fn assert_fatal(command: &mut Command, needle: &str) -> TestResult {
    let (out, stdout, stderr) = output(command)?;
    assert_eq!(
        out.status.code(),
        Some(2),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.is_empty(), "nothing is measured:\n{stdout}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "expected one line on stderr:\n{stderr}");
    assert!(lines[0].starts_with("error: "), "{stderr}");
    assert!(
        lines[0].contains(needle),
        "the error does not name {needle:?}: {stderr}"
    );
    Ok(())
}

/// A usage error found by clap: exit status 2, nothing on stdout, and stderr
/// starting with `error:`.
fn assert_clap_error(command: &mut Command, needle: &str) -> TestResult {
    let (out, stdout, stderr) = output(command)?;
    assert_eq!(
        out.status.code(),
        Some(2),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(
        stderr.contains(needle),
        "the error does not name {needle:?}: {stderr}"
    );
    Ok(())
}

/// `r = seed; for i in 0..count { r ^= i ^ seed }; r` on u64, as in
/// xor-component.wasm and tests/fixtures/xor_component.wat.
fn xor_u64(count: u64, seed: u64) -> u64 {
    let mut r = seed;
    for i in 0..count {
        r ^= i ^ seed;
    }
    r
}

/// The same on i64, as in xor.wasm.
fn xor_checksum(count: u64, seed: u64) -> i64 {
    xor_u64(count, seed) as i64
}

/// The environment figures of components: numbers when a component was
/// loaded, null otherwise.
fn assert_component_environment(env: &Value, loaded: bool) -> TestResult {
    for key in ["empty_component_call_ns", "component_pause_pair_ns"] {
        if loaded {
            let x = number(env, key)?;
            assert!(x.is_finite() && x >= 0.0, "`{key}` = {x}: {env}");
        } else {
            assert!(env[key].is_null(), "`{key}` is not null: {env}");
        }
    }
    Ok(())
}

/// The sizes of the rows, in order (null rows left out).
fn sizes(report: &Value) -> Result<Vec<u64>, Box<dyn Error>> {
    Ok(rows(report)?
        .iter()
        .filter_map(|r| r["size"].as_u64())
        .collect())
}

/// The complexity classes a fit may pick.
const CLASSES: [&str; 5] = ["O(1)", "O(log n)", "O(n)", "O(n log n)", "O(n^2)"];

/// The `complexity` entry of `benchmark`: it names the benchmark and its
/// file, fits the median at exactly `sizes`, and its best class is the
/// candidate with the smallest error. Nothing about the times themselves.
fn assert_complexity(report: &Value, benchmark: &str, path: &Path, sizes: &[u64]) -> TestResult {
    let fits = report["complexity"]
        .as_array()
        .ok_or_else(|| format!("`complexity` is not a list: {report}"))?;
    let fit = fits
        .iter()
        .find(|f| f["benchmark"] == benchmark)
        .ok_or_else(|| format!("no complexity fit for {benchmark}: {report}"))?;
    assert_eq!(fit["path"], path.display().to_string().as_str(), "{fit}");
    let best = fit["best"]
        .as_str()
        .ok_or_else(|| format!("`best` is not a string: {fit}"))?;
    assert!(CLASSES.contains(&best), "{fit}");
    let coefficient = number(fit, "coefficient")?;
    let rms = number(fit, "rms")?;
    assert!(
        coefficient.is_finite() && rms.is_finite() && rms >= 0.0,
        "{fit}"
    );

    let candidates = fit["candidates"]
        .as_array()
        .ok_or_else(|| format!("`candidates` is not a list: {fit}"))?;
    let mut classes: Vec<&str> = candidates
        .iter()
        .filter_map(|c| c["class"].as_str())
        .collect();
    classes.sort_unstable();
    let mut all = CLASSES;
    all.sort_unstable();
    assert_eq!(classes, all, "one candidate per class: {fit}");
    for candidate in candidates {
        assert!(number(candidate, "coefficient")?.is_finite(), "{fit}");
        assert!(
            rms <= number(candidate, "rms")?,
            "best is not the least error: {fit}"
        );
        if candidate["class"] == best {
            assert_eq!(number(candidate, "coefficient")?, coefficient, "{fit}");
            assert_eq!(number(candidate, "rms")?, rms, "{fit}");
        }
    }

    let points = fit["points"]
        .as_array()
        .ok_or_else(|| format!("`points` is not a list: {fit}"))?;
    let mut fitted = Vec::new();
    for point in points {
        let (size, ns) = (&point[0], &point[1]);
        assert!(
            point.as_array().is_some_and(|p| p.len() == 2) && ns.is_number(),
            "a point is not [size, ns per op]: {fit}"
        );
        fitted.push(size.as_u64().ok_or("a point's size is not a size")?);
    }
    assert_eq!(fitted, sizes, "{fit}");
    Ok(())
}

// ---------------------------------------------------------------------------
// Bad workloads: one failed row each, exit status 1
// ---------------------------------------------------------------------------

#[test]
fn not_wasm_is_a_failed_row() -> TestResult {
    assert_bad(
        &fixture("not_wasm.wasm"),
        "not_wasm",
        None,
        "not a WebAssembly binary",
    )
}

#[test]
fn text_named_wasm_is_a_failed_row() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("x.wasm");
    std::fs::write(&path, "(module)\n")?;
    assert_bad(&path, "x", None, "not a WebAssembly binary")
}

#[test]
fn empty_file_is_a_failed_row() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("nothing.wasm");
    std::fs::write(&path, b"")?;
    assert_bad(&path, "nothing", None, "empty")
}

#[test]
fn empty_wat_file_is_a_failed_row() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("nothing.wat");
    std::fs::write(&path, b"")?;
    assert_bad(&path, "nothing", None, "empty")
}

#[test]
fn truncated_module_is_a_failed_row() -> TestResult {
    // The header says core module: the kind is known though it does not
    // compile.
    let bytes = std::fs::read(workloads().join("xor.wasm"))?;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("truncated.wasm");
    std::fs::write(&path, &bytes[..20.min(bytes.len() - 1)])?;
    assert_bad(&path, "truncated", Some("module"), "does not compile")
}

#[test]
fn truncated_component_is_a_failed_row() -> TestResult {
    // A component header, then a section that ends before its stated size.
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("cut.wasm");
    std::fs::write(&path, b"\0asm\x0d\x00\x01\x00\x01\x05\x00")?;
    assert_bad(&path, "cut", Some("component"), "does not compile")
}

#[test]
fn unknown_binary_layer_is_a_failed_row() -> TestResult {
    // The magic, then a layer that is neither module (0) nor component (1):
    // the kind cannot be told.
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("layer.wasm");
    std::fs::write(&path, b"\0asm\x01\x00\x07\x00")?;
    assert_bad(&path, "layer", None, "unknown WebAssembly binary layer")
}

#[test]
fn header_only_module_is_a_failed_row() -> TestResult {
    // A valid, empty core module: it compiles, but exports no `run`.
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("bare.wasm");
    std::fs::write(&path, b"\0asm\x01\x00\x00\x00")?;
    assert_bad(
        &path,
        "bare",
        Some("module"),
        "exports no `run(i64, i64) -> i64` function",
    )
}

#[test]
fn missing_file_is_a_failed_row() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("missing.wasm");
    assert_bad(&path, "missing", None, "cannot read the file")
}

#[test]
fn wat_syntax_error_is_one_line() -> TestResult {
    // Text that does not parse has no kind: it never became a binary.
    assert_bad(
        &fixture("syntax_error.wat"),
        "syntax_error",
        None,
        "not valid WAT",
    )
}

#[test]
fn no_run_export_is_a_failed_row() -> TestResult {
    assert_bad(
        &fixture("no_run.wat"),
        "no_run",
        Some("module"),
        "exports no `run(i64, i64) -> i64` function",
    )
}

#[test]
fn wrong_run_signature_is_a_failed_row() -> TestResult {
    assert_bad(
        &fixture("wrong_sig.wat"),
        "wrong_sig",
        Some("module"),
        "export `run` has type (i32) -> i32, expected (i64, i64) -> i64",
    )
}

#[test]
fn unknown_import_is_a_failed_row() -> TestResult {
    assert_bad(
        &fixture("unknown_import.wat"),
        "unknown_import",
        Some("module"),
        "unknown import `env.foo`",
    )
}

#[test]
fn trap_in_setup_is_a_failed_row() -> TestResult {
    assert_bad(
        &fixture("trap_setup.wat"),
        "trap_setup",
        Some("module"),
        "`setup(0)` failed",
    )?;
    assert_bad(
        &fixture("trap_setup.wat"),
        "trap_setup",
        Some("module"),
        "unreachable",
    )
}

#[test]
fn trap_in_run_is_a_failed_row() -> TestResult {
    assert_bad(
        &fixture("trap_run.wat"),
        "trap_run",
        Some("module"),
        "unreachable",
    )
}

#[test]
fn divide_by_zero_is_a_failed_row() -> TestResult {
    assert_bad(
        &fixture("div_zero.wat"),
        "div_zero",
        Some("module"),
        "integer divide by zero",
    )
}

#[test]
fn pause_without_resume_is_a_failed_row() -> TestResult {
    assert_bad(
        &fixture("pause_no_resume.wat"),
        "pause_no_resume",
        Some("module"),
        "`run` returned while paused (pause without resume)",
    )
}

/// What a component that does not target the workload world is told.
const NO_COMPONENT_RUN: &str = "exports no `run: func(count: u64, seed: u64) -> u64` (the component does not target the wasm-bench:workload/workload world)";

#[test]
fn component_binary_is_rejected() -> TestResult {
    // A bare `(component)`: a component, but it exports no `run`.
    assert_bad(
        &fixture("component.wasm"),
        "component",
        Some("component"),
        NO_COMPONENT_RUN,
    )
}

#[test]
fn component_text_is_rejected() -> TestResult {
    // The same as text: converted to binary first, so detected as a
    // component too.
    assert_bad(
        &fixture("component.wat"),
        "component",
        Some("component"),
        NO_COMPONENT_RUN,
    )
}

#[test]
fn component_with_another_import_is_rejected() -> TestResult {
    assert_bad(
        &fixture("wasi_component.wat"),
        "wasi_component",
        Some("component"),
        "imports `other:cli/environment@0.2.0`: a workload component targets the `wasm-bench:workload/workload` world and may import only `wasm-bench:workload/timing@0.1.0` and WASI 0.2",
    )
}

#[test]
fn component_with_wrong_run_type_is_rejected() -> TestResult {
    assert_bad(
        &fixture("wrong_sig_component.wat"),
        "wrong_sig_component",
        Some("component"),
        "export `run` has type func(count: u32, seed: u32) -> u32, expected func(count: u64, seed: u64) -> u64",
    )
}

#[test]
fn component_pause_without_resume_is_a_failed_row() -> TestResult {
    assert_bad(
        &fixture("pause_no_resume_component.wat"),
        "pause_no_resume_component",
        Some("component"),
        "`run` returned while paused (pause without resume)",
    )
}

// ---------------------------------------------------------------------------
// A folder mixing good and bad workloads
// ---------------------------------------------------------------------------

#[test]
fn folder_measures_good_rows_and_fails_bad_ones() -> TestResult {
    let dir = tempfile::tempdir()?;
    for name in [
        "add.wat",
        "multi.wat",
        "paused.wat",
        "trap_run.wat",
        "unknown_import.wat",
        "not_wasm.wasm",
    ] {
        std::fs::copy(fixture(name), dir.path().join(name))?;
    }
    std::fs::copy(workloads().join("xor.wasm"), dir.path().join("xor.wasm"))?;
    std::fs::write(dir.path().join("empty.wasm"), b"")?;
    // Not workloads: skipped.
    std::fs::write(dir.path().join("README.txt"), "not a workload")?;
    std::fs::create_dir(dir.path().join("sub.wasm"))?;

    let (code, report, table) =
        json_run(bench([dir.path()]).args(["--count", "100", "--same-seed", "--seed", "3"]))?;
    assert_eq!(code, Some(1), "{table}");
    // Files in name order; a file with several benchmarks gives several rows.
    assert_eq!(
        names(&report)?,
        [
            "add",
            "empty",
            "multi:a",
            "multi:b",
            "not_wasm",
            "paused",
            "trap_run",
            "unknown_import",
            "xor"
        ]
    );
    for name in ["add", "multi:a", "multi:b", "paused", "xor"] {
        let r = row(&report, name)?;
        assert_measured(r)?;
        assert_eq!(r["count"], 100, "{r}");
        assert_eq!(r["samples"], SAMPLES, "{r}");
    }
    assert_eq!(checksum(row(&report, "add")?)?, 103);
    assert_eq!(checksum(row(&report, "xor")?)?, xor_checksum(100, 3));
    for (name, kind, reason) in [
        ("empty", None, "empty"),
        ("not_wasm", None, "not a WebAssembly binary"),
        ("trap_run", Some("module"), "unreachable"),
        ("unknown_import", Some("module"), "unknown import `env.foo`"),
    ] {
        let r = row(&report, name)?;
        let error = assert_failed(r)?;
        assert!(error.contains(reason), "{name}: {error}");
        let file = Path::new(r["path"].as_str().ok_or("no path")?);
        assert!(error.starts_with(&file.display().to_string()), "{error}");
        assert_eq!(file.parent(), Some(dir.path()), "{r}");
        match kind {
            Some(kind) => assert_eq!(r["kind"], kind),
            None => assert!(r["kind"].is_null(), "{r}"),
        }
    }
    // The table went to stderr, failed rows included.
    assert!(table.contains("5 measured, 4 failed"), "{table}");
    assert_eq!(
        table.lines().filter(|l| l.contains("  error: ")).count(),
        4,
        "{table}"
    );
    Ok(())
}

// ---------------------------------------------------------------------------
// JSON export
// ---------------------------------------------------------------------------

#[test]
fn json_has_every_field_for_xor() -> TestResult {
    let (code, report, table) = json_run(
        bench(["workloads/xor.wasm"])
            .current_dir(workspace_root())
            .args([
                "--count",
                "1000",
                "--same-seed",
                "--seed",
                "7",
                "--drift",
                "0.5",
            ]),
    )?;
    assert_eq!(code, Some(0), "{table}");

    assert_eq!(report["tool"]["name"], "wasm-bench");
    assert!(report["tool"]["version"].is_string(), "{report}");

    let env = &report["environment"];
    assert!(
        env["pinned_core"].is_u64() || env["pinned_core"].is_null(),
        "{env}"
    );
    assert!(env["priority"].is_string(), "{env}");
    for key in [
        "clock_resolution_ns",
        "clock_overhead_ns",
        "empty_call_ns",
        "pause_pair_ns",
    ] {
        let x = number(env, key)?;
        assert!(x.is_finite() && x >= 0.0, "`{key}` = {x}");
    }
    assert_eq!(env["seed"], 7);
    assert_eq!(number(env, "drift_pct")?, 0.5);
    // No component was loaded.
    assert_component_environment(env, false)?;
    // No sizes: no complexity fits.
    assert_eq!(report["complexity"], Value::Array(vec![]), "{report}");

    assert_eq!(rows(&report)?.len(), 1);
    let xor = row(&report, "xor")?;
    assert_measured(xor)?;
    assert_eq!(xor["path"], "workloads/xor.wasm", "the path as given");
    assert_eq!(xor["benchmark"], "xor");
    assert!(xor["size"].is_null(), "no --size: {xor}");
    assert_eq!(xor["count"], 1000);
    assert_eq!(xor["samples"], SAMPLES);
    assert_eq!(xor["pauses_per_sample"], 0);
    assert_eq!(checksum(xor)?, xor_checksum(1000, 7));
    assert!(xor["outliers"].is_u64(), "{xor}");
    Ok(())
}

#[test]
fn checksum_is_seed_plus_count_for_add() -> TestResult {
    let (code, report, table) = json_run(bench([fixture("add.wat")]).args([
        "--count",
        "12345",
        "--same-seed",
        "--seed",
        "1000000007",
    ]))?;
    assert_eq!(code, Some(0), "{table}");
    let add = row(&report, "add")?;
    assert_measured(add)?;
    assert_eq!(add["count"], 12345);
    assert_eq!(add["samples"], SAMPLES);
    assert_eq!(checksum(add)?, 1_000_000_007 + 12345);
    assert!(table.lines().any(|l| l.starts_with("add ")), "{table}");
    assert!(table.contains("1 measured"), "{table}");
    Ok(())
}

#[test]
fn samples_is_exactly_what_was_asked() -> TestResult {
    let (code, report, table) = json_run(bench_samples([fixture("add.wat")], 7).args([
        "--count",
        "10",
        "--same-seed",
        "--seed",
        "1",
    ]))?;
    assert_eq!(code, Some(0), "{table}");
    let add = row(&report, "add")?;
    assert_measured(add)?;
    assert_eq!(add["samples"], 7);
    assert_eq!(checksum(add)?, 11);
    Ok(())
}

#[test]
fn seed_wraps_like_the_guest_does() -> TestResult {
    // The seed is a u64 handed to the guest as i64: u64::MAX is -1 there.
    let (code, report, table) = json_run(bench([fixture("add.wat")]).args([
        "--count",
        "1",
        "--same-seed",
        "--seed",
        &u64::MAX.to_string(),
    ]))?;
    assert_eq!(code, Some(0), "{table}");
    assert_eq!(report["environment"]["seed"], u64::MAX);
    assert_eq!(checksum(row(&report, "add")?)?, 0);
    Ok(())
}

#[test]
fn checksum_uses_the_reported_seed_and_count() -> TestResult {
    // No --seed, no --count: whatever the harness chose is reported, and the
    // checksum is what `run` returned for exactly those.
    let (code, report, table) = json_run(bench([fixture("add.wat")]).arg("--same-seed"))?;
    assert_eq!(code, Some(0), "{table}");
    let seed = integer(&report["environment"], "seed")?;
    let add = row(&report, "add")?;
    assert_measured(add)?;
    let count = integer(add, "count")?;
    assert_eq!(checksum(add)?, (seed as i64).wrapping_add(count as i64));
    Ok(())
}

/// The seed of call `index` of a run seeded `run`, as README gives it:
/// SplitMix64 of the pair, kept to 63 bits.
fn seed_of_call(run: u64, index: u64) -> u64 {
    let mix = |x: u64| {
        let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    mix(run ^ mix(index)) >> 1
}

#[test]
fn every_call_gets_a_seed_derived_from_the_reported_one() -> TestResult {
    // By default each call's seed is derived from the run's seed and the
    // call's index: the checksum (seed + count) of the last sample is
    // seed_of_call(seed, i) + count for an index i among the calls made, and
    // never the run's seed itself.
    let (code, report, table) = json_run(&mut bench([fixture("add.wat")]))?;
    assert_eq!(code, Some(0), "{table}");
    let seed = integer(&report["environment"], "seed")?;
    assert_eq!(report["environment"]["seed_rule"], "per_call");
    let add = row(&report, "add")?;
    let count = integer(add, "count")?;
    let called = (checksum(add)? as u64).wrapping_sub(count);
    assert_ne!(called, seed, "one seed for every call");
    assert!(
        (0..1_000_000).any(|i| seed_of_call(seed, i) == called),
        "seed {called} is not derived from the run's seed {seed}"
    );
    Ok(())
}

#[test]
fn each_run_export_is_a_row() -> TestResult {
    let (code, report, table) = json_run(bench([fixture("multi.wat")]).args([
        "--count",
        "3",
        "--same-seed",
        "--seed",
        "10",
    ]))?;
    assert_eq!(code, Some(0), "{table}");
    assert_eq!(names(&report)?, ["multi:a", "multi:b"]);
    let (a, b) = (row(&report, "multi:a")?, row(&report, "multi:b")?);
    for r in [a, b] {
        assert_measured(r)?;
        assert_eq!(
            r["path"],
            fixture("multi.wat").display().to_string().as_str()
        );
        assert_eq!(r["count"], 3);
    }
    assert_eq!(checksum(a)?, 13, "run_a returns seed + count");
    assert_eq!(checksum(b)?, 23, "run_b returns 2 * seed + count");
    assert!(table.lines().any(|l| l.starts_with("multi:a ")), "{table}");
    assert!(table.lines().any(|l| l.starts_with("multi:b ")), "{table}");
    Ok(())
}

#[test]
fn pauses_are_counted_and_setup_gets_the_size() -> TestResult {
    let (code, report, table) = json_run(bench_samples([fixture("paused.wat")], 12).args([
        "--count",
        "50",
        "--same-seed",
        "--seed",
        "8",
        "--size",
        "42",
    ]))?;
    assert_eq!(code, Some(0), "{table}");
    // With a size, the row is named after it.
    assert_eq!(names(&report)?, ["paused/42"]);
    let paused = row(&report, "paused/42")?;
    assert_measured(paused)?;
    assert_eq!(paused["benchmark"], "paused");
    assert_eq!(paused["size"], 42);
    // One size: nothing to fit.
    assert_eq!(report["complexity"], Value::Array(vec![]), "{report}");
    assert_eq!(paused["pauses_per_sample"], 1);
    assert_eq!(
        paused["pauses_total"], 12,
        "one pause in each of the 12 samples"
    );
    assert_eq!(
        checksum(paused)?,
        8 + 42,
        "run returns seed + the size given to setup"
    );
    Ok(())
}

#[test]
fn export_json_to_a_file() -> TestResult {
    let dir = tempfile::tempdir()?;
    let json = dir.path().join("results.json");
    let (out, stdout, stderr) = output(
        bench([fixture("add.wat")])
            .args([
                "--count",
                "5",
                "--same-seed",
                "--seed",
                "2",
                "--export-json",
            ])
            .arg(&json),
    )?;
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    // The table still goes to stdout.
    assert!(stdout.lines().any(|l| l.starts_with("add ")), "{stdout}");
    assert!(stdout.contains("1 measured"), "{stdout}");
    let report: Value = serde_json::from_slice(&std::fs::read(&json)?)?;
    let add = row(&report, "add")?;
    assert_measured(add)?;
    assert_eq!(checksum(add)?, 7);
    // Written in place, with no temporary left behind.
    let left: Vec<_> = std::fs::read_dir(dir.path())?.collect::<Result<_, _>>()?;
    assert_eq!(left.len(), 1, "{left:?}");
    Ok(())
}

#[test]
fn export_json_to_stdout_keeps_stdout_pure() -> TestResult {
    let (out, stdout, stderr) =
        output(bench([fixture("add.wat")]).args(["--count", "5", "--export-json", "-"]))?;
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let report: Value = serde_json::from_str(&stdout)?;
    assert_measured(row(&report, "add")?)?;
    // The whole table moved to stderr.
    assert!(stderr.lines().any(|l| l.starts_with("add ")), "{stderr}");
    assert!(stderr.contains("1 measured"), "{stderr}");
    Ok(())
}

#[test]
fn export_json_into_a_missing_folder_is_fatal() -> TestResult {
    // Rejected up front: exit status 2, one line naming the flag and the
    // folder, nothing measured (no table on stdout), nothing written.
    let dir = tempfile::tempdir()?;
    let folder = dir.path().join("no").join("such");
    let json = folder.join("out.json");
    let (out, stdout, stderr) = output(
        bench([fixture("add.wat")])
            .args(["--count", "5", "--export-json"])
            .arg(&json),
    )?;
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(stdout.is_empty(), "something was measured:\n{stdout}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert_eq!(
        lines[0],
        format!(
            "error: --export-json: the folder {} does not exist",
            folder.display()
        ),
        "{stderr}"
    );
    assert!(!folder.exists());
    Ok(())
}

#[test]
fn pinning_is_reported() -> TestResult {
    let (code, report, table) =
        json_run(bench([fixture("add.wat")]).args(["--count", "5", "--no-pin"]))?;
    assert_eq!(code, Some(0), "{table}");
    assert!(report["environment"]["pinned_core"].is_null(), "{report}");

    let (code, report, table) =
        json_run(bench([fixture("add.wat")]).args(["--count", "5", "--core", "0"]))?;
    assert_eq!(code, Some(0), "{table}");
    let env = &report["environment"];
    // Core 0 always exists; pinning may only be refused with a warning.
    let refused = env["warnings"].as_array().is_some_and(|w| !w.is_empty());
    assert!(
        env["pinned_core"] == 0 || (env["pinned_core"].is_null() && refused),
        "{env}"
    );
    Ok(())
}

// ---------------------------------------------------------------------------
// Components
// ---------------------------------------------------------------------------

#[test]
fn component_written_as_wat_is_measured() -> TestResult {
    // The same xor loop as a component and as a core module, in one run: a
    // seed above i64::MAX and an even count give a result with the top bit
    // set, which the component reports as a u64 and the module as an i64.
    let seed = u64::MAX - 6;
    let count = 1002;
    let (code, report, table) = json_run(
        bench([fixture("xor_component.wat"), workloads().join("xor.wasm")]).args([
            "--count",
            &count.to_string(),
            "--same-seed",
            "--seed",
            &seed.to_string(),
        ]),
    )?;
    assert_eq!(code, Some(0), "{table}");
    assert_eq!(names(&report)?, ["xor_component", "xor"]);
    let env = &report["environment"];
    assert_eq!(env["seed"], seed);
    assert_component_environment(env, true)?;

    let component = row(&report, "xor_component")?;
    assert_measured_as(component, "component")?;
    assert_eq!(
        component["path"],
        fixture("xor_component.wat").display().to_string().as_str()
    );
    assert_eq!(component["benchmark"], "xor_component");
    assert_eq!(component["count"], count);
    assert_eq!(component["samples"], SAMPLES);
    assert_eq!(component["pauses_per_sample"], 0);
    let expected = xor_u64(count, seed);
    assert!(expected > i64::MAX as u64, "the test needs the top bit set");
    assert_eq!(checksum_u64(component)?, expected);

    let module = row(&report, "xor")?;
    assert_measured(module)?;
    assert_eq!(checksum(module)?, expected as i64);
    assert!(checksum(module)? < 0);

    assert!(
        table.lines().any(|l| l.starts_with("xor_component ")),
        "{table}"
    );
    assert!(table.contains("components: empty-guest call"), "{table}");
    assert!(table.contains("2 measured"), "{table}");
    Ok(())
}

#[test]
fn component_pauses_are_counted_and_setup_gets_each_size() -> TestResult {
    let (code, report, table) =
        json_run(bench_samples([fixture("paused_component.wat")], 12).args([
            "--count",
            "50",
            "--same-seed",
            "--seed",
            "8",
            "--size",
            "7,42",
        ]))?;
    assert_eq!(code, Some(0), "{table}");
    assert_eq!(
        names(&report)?,
        ["paused_component/7", "paused_component/42"]
    );
    for size in [7, 42] {
        let r = row(&report, &format!("paused_component/{size}"))?;
        assert_measured_as(r, "component")?;
        assert_eq!(r["size"], size);
        assert_eq!(r["count"], 50);
        assert_eq!(r["pauses_per_sample"], 1, "{r}");
        assert_eq!(r["pauses_total"], 12, "one pause in each of the 12 samples");
        assert_eq!(
            checksum_u64(r)?,
            8 + size,
            "run returns seed + the size given to setup"
        );
    }
    assert_component_environment(&report["environment"], true)?;
    assert_complexity(
        &report,
        "paused_component",
        &fixture("paused_component.wat"),
        &[7, 42],
    )
}

#[test]
fn each_component_run_export_is_a_row() -> TestResult {
    let (code, report, table) = json_run(bench([fixture("multi_component.wat")]).args([
        "--count",
        "3",
        "--same-seed",
        "--seed",
        "10",
    ]))?;
    assert_eq!(code, Some(0), "{table}");
    assert_eq!(names(&report)?, ["multi_component:a", "multi_component:b"]);
    let (a, b) = (
        row(&report, "multi_component:a")?,
        row(&report, "multi_component:b")?,
    );
    for r in [a, b] {
        assert_measured_as(r, "component")?;
        assert_eq!(r["count"], 3);
    }
    assert_eq!(a["benchmark"], "multi_component:a");
    assert_eq!(checksum_u64(a)?, 13, "run-a returns seed + count");
    assert_eq!(checksum_u64(b)?, 23, "run-b returns 2 * seed + count");
    Ok(())
}

// ---------------------------------------------------------------------------
// Sizes
// ---------------------------------------------------------------------------

#[test]
fn each_size_is_a_row_and_the_sizes_are_fitted() -> TestResult {
    let (code, report, table) = json_run(bench_samples([fixture("sized.wat")], 5).args([
        "--same-seed",
        "--seed",
        "100",
        "--size",
        "3,5,9",
    ]))?;
    assert_eq!(code, Some(0), "{table}");
    assert_eq!(names(&report)?, ["sized/3", "sized/5", "sized/9"]);
    assert_eq!(sizes(&report)?, [3, 5, 9]);
    for size in [3, 5, 9] {
        let r = row(&report, &format!("sized/{size}"))?;
        assert_measured(r)?;
        assert_eq!(r["benchmark"], "sized");
        assert_eq!(r["size"], size);
        assert_eq!(r["samples"], 5);
        assert_eq!(
            checksum(r)?,
            100 + size,
            "run returns seed + the size given to setup"
        );
    }
    assert!(table.lines().any(|l| l.starts_with("sized/5 ")), "{table}");

    let fits = report["complexity"]
        .as_array()
        .ok_or("`complexity` is not a list")?;
    assert_eq!(fits.len(), 1, "{report}");
    assert_complexity(&report, "sized", &fixture("sized.wat"), &[3, 5, 9])?;
    assert!(table.contains("complexity"), "{table}");
    assert!(table.contains("3 measured"), "{table}");
    Ok(())
}

#[test]
fn setup_failing_for_one_size_fails_that_row_only() -> TestResult {
    // trap_size.wat's setup traps for size 5 only.
    let path = fixture("trap_size.wat");
    let (code, report, table) = json_run(bench_samples([&path], 5).args([
        "--same-seed",
        "--seed",
        "100",
        "--size",
        "3,5,9",
    ]))?;
    assert_eq!(code, Some(1), "{table}");
    assert_eq!(
        names(&report)?,
        ["trap_size/3", "trap_size/5", "trap_size/9"]
    );

    let failed = row(&report, "trap_size/5")?;
    let error = assert_failed(failed)?;
    assert_eq!(failed["kind"], "module");
    assert_eq!(failed["benchmark"], "trap_size");
    assert_eq!(failed["size"], 5);
    let prefix = format!("{} (run, size 5): `setup(5)` failed: ", path.display());
    assert!(
        error.starts_with(&prefix),
        "the error does not name the file, the export and the size: {error}"
    );
    assert!(error.contains("unreachable"), "{error}");

    for size in [3, 9] {
        let r = row(&report, &format!("trap_size/{size}"))?;
        assert_measured(r)?;
        assert_eq!(checksum(r)?, 100 + size);
    }
    // The fit uses the sizes that were measured.
    assert_complexity(&report, "trap_size", &path, &[3, 9])?;

    let errors: Vec<&str> = table.lines().filter(|l| l.contains("  error: ")).collect();
    assert_eq!(errors.len(), 1, "{table}");
    assert!(errors[0].starts_with("trap_size/5 "), "{table}");
    assert!(errors[0].ends_with(error), "{table}");
    assert!(table.contains("2 measured, 1 failed"), "{table}");
    Ok(())
}

#[test]
fn size_ranges_double_and_repeat() -> TestResult {
    let (code, report, table) = json_run(bench_samples([fixture("sized.wat")], 3).args([
        "--same-seed",
        "--seed",
        "1",
        "--size",
        "2^2..2^4",
    ]))?;
    assert_eq!(code, Some(0), "{table}");
    assert_eq!(names(&report)?, ["sized/4", "sized/8", "sized/16"]);
    assert_eq!(sizes(&report)?, [4, 8, 16]);
    for r in rows(&report)? {
        assert_measured(r)?;
        assert_eq!(checksum(r)? as u64, 1 + integer(r, "size")?);
    }
    assert_complexity(&report, "sized", &fixture("sized.wat"), &[4, 8, 16])?;

    // Repeated flags add up; sizes come out ascending, each once.
    let (code, report, table) = json_run(
        bench_samples([fixture("sized.wat")], 3).args(["--size", "16", "--size", "2,16"]),
    )?;
    assert_eq!(code, Some(0), "{table}");
    assert_eq!(names(&report)?, ["sized/2", "sized/16"]);
    assert_eq!(sizes(&report)?, [2, 16]);
    Ok(())
}

#[test]
fn bad_sizes_are_usage_errors() -> TestResult {
    // Each names the flag and the bad term.
    for bad in ["x", "8..4", "0..8", "2^"] {
        assert_fatal(
            host_run([fixture("sized.wat")]).args(["--size", bad]),
            &format!("--size: `{bad}`"),
        )?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Usage and fatal errors: exit status 2, one `error:` line
// ---------------------------------------------------------------------------

#[test]
fn count_zero_is_a_usage_error() -> TestResult {
    assert_fatal(
        host_run([fixture("add.wat")]).args(["--count", "0"]),
        "--count",
    )
}

#[test]
fn samples_zero_is_a_usage_error() -> TestResult {
    assert_fatal(
        host_run([fixture("add.wat")]).args(["--samples", "0"]),
        "--samples",
    )
}

#[test]
fn bad_durations_are_usage_errors() -> TestResult {
    assert_fatal(
        host_run([fixture("add.wat")]).args(["--warmup", "soon"]),
        "--warmup",
    )?;
    assert_fatal(
        host_run([fixture("add.wat")]).args(["--time", "0s"]),
        "--time",
    )?;
    assert_fatal(
        host_run([fixture("add.wat")]).args(["--sample-time", "0ms"]),
        "--sample-time",
    )?;
    assert_fatal(
        host_run([fixture("add.wat")]).arg("--sample-time=-1ms"),
        "--sample-time",
    )
}

#[test]
fn bad_precision_is_a_usage_error() -> TestResult {
    assert_fatal(
        host_run([fixture("add.wat")]).args(["--precision", "0"]),
        "--precision",
    )?;
    assert_fatal(
        host_run([fixture("add.wat")]).arg("--precision=-1"),
        "--precision",
    )
}

#[test]
fn folder_without_workloads_is_a_usage_error() -> TestResult {
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("notes.txt"), "nothing to measure")?;
    assert_fatal(
        &mut host_run([dir.path()]),
        &dir.path().display().to_string(),
    )?;
    // An empty folder too, even next to a good file.
    let empty = tempfile::tempdir()?;
    assert_fatal(
        &mut host_run([fixture("add.wat").as_path(), empty.path()]),
        &empty.path().display().to_string(),
    )
}

#[test]
fn clap_rejects_malformed_command_lines() -> TestResult {
    let add = fixture("add.wat");
    assert_clap_error(&mut host_run::<[&str; 0], &str>([]), "PATH")?;
    assert_clap_error(
        &mut host_run([add.as_os_str(), OsStr::new("--count"), OsStr::new("many")]),
        "--count",
    )?;
    assert_clap_error(
        &mut host_run([add.as_os_str(), OsStr::new("--priority"), OsStr::new("max")]),
        "--priority",
    )?;
    assert_clap_error(
        &mut host_run([add.as_os_str(), OsStr::new("--bogus")]),
        "--bogus",
    )?;
    assert_clap_error(
        host_run([add.as_os_str()]).args(["--samples", "5", "--time", "1s"]),
        "--time",
    )?;
    assert_clap_error(
        host_run([add.as_os_str()]).args(["--core", "0", "--no-pin"]),
        "--no-pin",
    )
}

// ---------------------------------------------------------------------------
// The bundled workloads, end to end
// ---------------------------------------------------------------------------

/// The workload files of a folder, in file-name order (as the host takes
/// them).
fn workload_files(folder: &Path) -> Result<Vec<PathBuf>, Box<dyn Error>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(folder)? {
        let path = entry?.path();
        let is_workload = matches!(
            path.extension().and_then(OsStr::to_str),
            Some("wasm" | "wat")
        );
        if is_workload && path.is_file() {
            files.push(path);
        }
    }
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    Ok(files)
}

/// What is known of a bundled workload: its kind, and the pauses per sample
/// it makes without `--size`.
const KNOWN_BUNDLED: [(&str, &str, u64); 11] = [
    ("wc", "program", 0),
    ("search-branchy", "module", 0),
    ("search-branchless", "module", 0),
    ("empty", "module", 0),
    ("empty-component", "component", 0),
    ("mod13", "module", 0),
    ("mod16", "module", 0),
    ("remove", "module", 1),
    ("remove-component", "component", 1),
    ("xor", "module", 0),
    ("xor-component", "component", 0),
];

#[test]
fn bundled_workloads_run_end_to_end() -> TestResult {
    // Workloads are added to the folder over time: the rows expected are
    // those of the files actually there, in file-name order.
    let files = workload_files(&workloads())?;
    let stems: Vec<String> = files
        .iter()
        .map(|f| f.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect::<Option<_>>()
        .ok_or("a workload without a file name")?;
    for required in ["empty", "xor"] {
        assert!(
            stems.iter().any(|s| s == required),
            "no {required}.wasm in {stems:?}"
        );
    }

    let dir = tempfile::tempdir()?;
    let json = dir.path().join("bundled.json");
    // One seed for every call, so that a checksum follows from the seed.
    let (out, stdout, stderr) = output(
        bench([workloads()])
            .arg("--same-seed")
            .arg("--export-json")
            .arg(&json),
    )?;
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(!stdout.contains("error:"), "{stdout}");

    let report: Value = serde_json::from_slice(&std::fs::read(&json)?)?;
    let results = rows(&report)?;
    assert!(
        stdout.contains(&format!("\n{} measured\n", results.len())),
        "{stdout}"
    );
    // One or more rows per file, files in order; a row is named after its
    // file (`file`, or `file:name` for further benchmarks).
    let mut paths: Vec<&str> = results.iter().filter_map(|r| r["path"].as_str()).collect();
    paths.dedup();
    let expected_paths: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    assert_eq!(paths, expected_paths, "{}", names(&report)?.join(", "));
    for r in results {
        let path = Path::new(r["path"].as_str().ok_or("no path")?);
        let stem = path
            .file_stem()
            .ok_or("no file name")?
            .to_string_lossy()
            .into_owned();
        let name = r["name"].as_str().ok_or("no name")?;
        assert!(
            name == stem || name.starts_with(&format!("{stem}:")),
            "row {name} of {}",
            path.display()
        );
        let kind = r["kind"].as_str().ok_or_else(|| format!("no kind: {r}"))?;
        assert!(matches!(kind, "module" | "component" | "program"), "{r}");
        assert_measured_as(r, kind)?;
        assert_eq!(r["samples"], SAMPLES, "{r}");
    }
    let mut names_of_files: Vec<&str> = names(&report)?
        .into_iter()
        .map(|n| n.split(':').next().unwrap_or(n))
        .collect();
    names_of_files.dedup();
    assert_eq!(names_of_files, stems);

    // The workloads known here: one row each, with their kind and pauses.
    for (name, kind, pauses) in KNOWN_BUNDLED {
        if !stems.iter().any(|s| s == name) {
            continue;
        }
        let r = row(&report, name)?;
        assert_eq!(r["kind"], kind, "{r}");
        assert_eq!(r["pauses_per_sample"], pauses, "{r}");
    }
    let any_component = results.iter().any(|r| r["kind"] == "component");
    assert_component_environment(&report["environment"], any_component)?;

    // The empty workloads return their seed; xor's checksum follows from the
    // reported seed and count.
    let seed = integer(&report["environment"], "seed")?;
    assert_eq!(checksum(row(&report, "empty")?)?, seed as i64);
    let xor = row(&report, "xor")?;
    let count = integer(xor, "count")?;
    if count <= 100_000_000 {
        assert_eq!(checksum(xor)?, xor_checksum(count, seed));
    }
    if stems.iter().any(|s| s == "empty-component") {
        assert_eq!(checksum_u64(row(&report, "empty-component")?)?, seed);
    }
    if stems.iter().any(|s| s == "xor-component") {
        let xor = row(&report, "xor-component")?;
        let count = integer(xor, "count")?;
        if count <= 100_000_000 {
            assert_eq!(checksum_u64(xor)?, xor_u64(count, seed));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Instruction counts (`--metric instructions`)
// ---------------------------------------------------------------------------

/// `fuel_per_op` of a row, which must be a number.
fn fuel(row: &Value) -> Result<f64, Box<dyn Error>> {
    let fuel = number(row, "fuel_per_op")?;
    assert!(fuel.is_finite() && fuel >= 0.0, "{row}");
    Ok(fuel)
}

/// Two instruction counts that must agree (they are integers over a power of
/// two, so in practice they are equal to the last bit).
fn assert_same_fuel(a: f64, b: f64, what: &str) {
    assert!(
        (a - b).abs() <= 1e-9 * a.abs().max(1.0),
        "{what}: {a} vs {b}"
    );
}

#[test]
fn instruction_counts_are_exact_and_repeatable() -> TestResult {
    let count_light = |count: &str| -> Result<(f64, f64), Box<dyn Error>> {
        let (code, report, table) = json_run(
            bench_samples([fixture("light.wat"), fixture("heavy.wat")], 5).args([
                "--metric",
                "instructions",
                "--count",
                count,
                "--same-seed",
                "--seed",
                "4",
            ]),
        )?;
        assert_eq!(code, Some(0), "{table}");
        let (light, heavy) = (row(&report, "light")?, row(&report, "heavy")?);
        for r in [light, heavy] {
            assert_measured(r)?;
        }
        let count: i64 = count.parse()?;
        assert_eq!(checksum(light)?, 4 + count);
        assert_eq!(checksum(heavy)?, 4 + 2 * count);
        // The table shows the count under each row.
        assert_eq!(
            table.matches("instructions: ").count(),
            2,
            "one instruction line per row:\n{table}"
        );
        Ok((fuel(light)?, fuel(heavy)?))
    };
    let (light, heavy) = count_light("1000")?;
    // A straight 13-instruction loop body per op (see light.wat); a loose
    // range, should wasmtime ever price an instruction differently.
    assert!((8.0..=30.0).contains(&light), "light: {light} per op");
    assert_same_fuel(heavy, 2.0 * light, "heavy.wat does twice light.wat's work");

    // The same again: deterministic.
    let (again, heavy_again) = count_light("1000")?;
    assert_same_fuel(again, light, "two runs");
    assert_same_fuel(heavy_again, heavy, "two runs");
    // Per op, whatever the count (7 is below the 16-op rounding).
    let (small, heavy_small) = count_light("7")?;
    assert_same_fuel(small, light, "count 7 against count 1000");
    assert_same_fuel(heavy_small, heavy, "count 7 against count 1000");
    Ok(())
}

#[test]
fn instruction_counts_are_only_there_when_asked() -> TestResult {
    let (code, report, table) =
        json_run(bench_samples([fixture("light.wat")], 3).args(["--count", "100"]))?;
    assert_eq!(code, Some(0), "{table}");
    let light = row(&report, "light")?;
    assert_measured(light)?;
    assert!(light["fuel_per_op"].is_null(), "{light}");
    assert!(!table.contains("instructions:"), "{table}");
    Ok(())
}

#[test]
fn instruction_counts_of_constant_time_and_component_workloads() -> TestResult {
    // multi.wat's benchmarks do no per-op work: 0 instructions per op. The
    // xor component counts like a module does.
    let (code, report, table) = json_run(
        bench_samples([fixture("multi.wat"), fixture("xor_component.wat")], 3).args([
            "--metric",
            "instructions",
            "--count",
            "64",
        ]),
    )?;
    assert_eq!(code, Some(0), "{table}");
    assert_eq!(fuel(row(&report, "multi:a")?)?, 0.0);
    assert_eq!(fuel(row(&report, "multi:b")?)?, 0.0);
    let xor = row(&report, "xor_component")?;
    assert_measured_as(xor, "component")?;
    assert!(fuel(xor)? > 0.0, "{xor}");
    Ok(())
}

#[test]
fn instruction_counts_leave_out_paused_work() -> TestResult {
    let (code, report, table) = json_run(bench_samples([fixture("paused_work.wat")], 3).args([
        "--metric",
        "instructions",
        "--count",
        "50",
        "--same-seed",
        "--seed",
        "9",
    ]))?;
    assert_eq!(code, Some(0), "{table}");
    let (plain, paused) = (
        row(&report, "paused_work:plain")?,
        row(&report, "paused_work:paused")?,
    );
    for r in [plain, paused] {
        assert_measured(r)?;
        assert_eq!(r["pauses_per_sample"], 50, "one pause per op: {r}");
        assert_eq!(checksum(r)?, 9);
    }
    assert!(fuel(plain)? > 0.0, "{plain}");
    assert_same_fuel(
        fuel(paused)?,
        fuel(plain)?,
        "100 paused iterations per op must not count",
    );
    Ok(())
}

#[test]
fn instruction_counts_of_workloads_with_setup() -> TestResult {
    // The counting pass calls `setup` too, on a store with fuel on (it once
    // failed there: "all fuel consumed"). sized.wat loops `size` times per
    // op: the count grows linearly with the size.
    let (code, report, table) = json_run(
        bench_samples([fixture("sized.wat"), fixture("paused.wat")], 3).args([
            "--metric",
            "instructions",
            "--count",
            "32",
            "--size",
            "3,6",
        ]),
    )?;
    assert_eq!(code, Some(0), "{table}");
    let (three, six) = (row(&report, "sized/3")?, row(&report, "sized/6")?);
    assert_measured(three)?;
    assert_measured(six)?;
    assert!(fuel(three)? > 0.0, "{three}");
    assert_same_fuel(fuel(six)?, 2.0 * fuel(three)?, "size 6 against size 3");
    for size in [3, 6] {
        let paused = row(&report, &format!("paused/{size}"))?;
        assert_measured(paused)?;
        fuel(paused)?;
    }
    Ok(())
}

#[test]
fn instruction_count_failure_is_a_failed_row() -> TestResult {
    // Timed at count 1000 it works; the counting pass (fewer ops) traps.
    let path = fixture("fuel_trap.wat");
    let (code, report, table) =
        json_run(bench_samples([&path], 3).args(["--metric", "instructions", "--count", "1000"]))?;
    assert_eq!(code, Some(1), "{table}");
    let failed = row(&report, "fuel_trap")?;
    let error = assert_failed(failed)?;
    assert!(
        error.starts_with(&format!("{} (run): ", path.display())),
        "{error}"
    );
    assert!(error.contains("counting instructions"), "{error}");
    assert!(error.contains("unreachable"), "{error}");

    // Without counting, the same file measures fine; its fresh instances'
    // first call (count 1) traps, which a note says, the row measured.
    let (code, report, table) = json_run(bench_samples([&path], 3).args(["--count", "1000"]))?;
    assert_eq!(code, Some(0), "{table}");
    let measured = row(&report, "fuel_trap")?;
    assert_measured(measured)?;
    let notes = measured["notes"].as_array().ok_or("no notes")?;
    assert!(
        notes.iter().any(|n| n
            .as_str()
            .is_some_and(|n| n.starts_with("fresh instances' start not measured: "))),
        "{notes:?}"
    );
    assert!(measured["start"].is_null(), "{measured}");
    Ok(())
}

// ---------------------------------------------------------------------------
// host compare
// ---------------------------------------------------------------------------

/// `host compare PATHS` with fast flags and a 2 s cap.
fn compare<I, S>(paths: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    compare_for(paths, "2s")
}

/// `host compare PATHS --time CAP` with fast flags.
fn compare_for<I, S>(paths: I, cap: &str) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut command = Command::new(host_binary());
    command.arg("compare").args(paths).args([
        "--warmup",
        "20ms",
        "--sample-time",
        "200us",
        "--time",
        cap,
    ]);
    command
}

/// The comparison of `variant` with the reference.
fn comparison<'a>(report: &'a Value, variant: &str) -> Result<&'a Value, Box<dyn Error>> {
    report["comparisons"]
        .as_array()
        .ok_or_else(|| format!("`comparisons` is not a list: {report}"))?
        .iter()
        .find(|c| c["variant"] == variant)
        .ok_or_else(|| format!("no comparison of {variant}: {report}").into())
}

/// The variant rows of a comparison, by name.
fn variant<'a>(report: &'a Value, name: &str) -> Result<&'a Value, Box<dyn Error>> {
    report["variants"]
        .as_array()
        .ok_or_else(|| format!("`variants` is not a list: {report}"))?
        .iter()
        .find(|v| v["name"] == name)
        .ok_or_else(|| format!("no variant named {name}: {report}").into())
}

fn variant_names(report: &Value) -> Result<Vec<&str>, Box<dyn Error>> {
    Ok(report["variants"]
        .as_array()
        .ok_or_else(|| format!("`variants` is not a list: {report}"))?
        .iter()
        .filter_map(|v| v["name"].as_str())
        .collect())
}

const VERDICTS: [&str; 4] = ["faster", "slower", "same", "unsure"];

/// The common shape of a compare report: the shared count on every variant,
/// one comparison per other variant, intervals around their ratios, and one
/// table line per verdict (`table` is what went to the terminal).
fn assert_compare_report(report: &Value, reference: &str, table: &str) -> TestResult {
    assert_eq!(report["tool"]["name"], "wasm-bench");
    assert_eq!(report["reference"], reference, "{report}");
    let count = integer(report, "count")?;
    let rounds = integer(report, "rounds")?;
    assert!(count >= 1 && rounds >= 1, "{report}");
    let sampling = number(report, "sampling_ms")?;
    assert!(sampling.is_finite() && sampling >= 0.0, "{report}");
    assert!(number(report, "noise_pct")? >= 0.0, "{report}");

    let names = variant_names(report)?;
    for v in report["variants"].as_array().ok_or("no variants")? {
        assert!(v.get("error").is_none(), "{v}");
        assert_eq!(v["count"], count, "every variant has the shared count: {v}");
        assert!(integer(v, "samples")? >= 1, "{v}");
    }
    let comparisons = report["comparisons"]
        .as_array()
        .ok_or("`comparisons` is not a list")?;
    let mut compared: Vec<&str> = comparisons
        .iter()
        .filter_map(|c| c["variant"].as_str())
        .collect();
    let mut others: Vec<&str> = names.iter().copied().filter(|n| *n != reference).collect();
    compared.sort_unstable();
    others.sort_unstable();
    assert_eq!(compared, others, "one comparison per other variant");
    for c in comparisons {
        assert_eq!(c["reference"], reference, "{c}");
        let metric = c["metric"].as_str().ok_or("no metric")?;
        assert!(metric == "time" || metric == "instructions", "{c}");
        let verdict = c["verdict"].as_str().ok_or("no verdict")?;
        assert!(VERDICTS.contains(&verdict), "{c}");
        let (ratio, low, high) = (
            number(c, "ratio")?,
            number(c, "ci95_low")?,
            number(c, "ci95_high")?,
        );
        assert!(low <= ratio && ratio <= high, "{c}");
        let text = c["text"].as_str().ok_or("no text")?;
        let variant = c["variant"].as_str().ok_or("no variant")?;
        assert!(text.contains(&format!("`{variant}`")), "{c}");
        // The terminal: the verdict word first, then the text, then the
        // smallest effect it could see.
        let mde = number(c, "mde_pct")?;
        assert!(mde >= 0.0, "{c}");
        assert!(
            table.lines().any(|l| l.starts_with(verdict)
                && l.contains(text)
                && l.ends_with(&format!("smallest detectable effect ±{mde:.2}%"))),
            "no verdict line for {variant}:\n{table}"
        );
    }
    let rounds_line = format!("{rounds} rounds of interleaved samples, count {count} shared, ");
    assert!(
        table.lines().any(|l| l.starts_with(&rounds_line)),
        "{table}"
    );
    for name in &names {
        assert!(
            table.lines().any(|l| l.starts_with(&format!("{name} "))),
            "no row for {name}:\n{table}"
        );
    }
    Ok(())
}

#[test]
fn compare_by_instructions_gives_exact_verdicts() -> TestResult {
    // light, heavy (twice the work), and light again (`light#2`).
    let (code, report, table) = json_run(
        compare([
            fixture("light.wat"),
            fixture("heavy.wat"),
            fixture("light.wat"),
        ])
        .args(["--metric", "instructions", "--same-seed", "--seed", "5"]),
    )?;
    assert_eq!(code, Some(0), "{table}");
    assert_eq!(variant_names(&report)?, ["light", "heavy", "light#2"]);
    assert_compare_report(&report, "light", &table)?;
    assert_eq!(number(&report, "noise_pct")?, 1.0);
    assert_eq!(report["environment"]["seed"], 5);

    let count = integer(&report, "count")? as i64;
    let light = variant(&report, "light")?;
    assert_measured(light)?;
    assert_measured(variant(&report, "heavy")?)?;
    assert_eq!(checksum(light)?, 5 + count);
    assert_eq!(checksum(variant(&report, "heavy")?)?, 5 + 2 * count);
    // The second light is the same file under a new name.
    let twin = variant(&report, "light#2")?;
    assert_eq!(twin["path"], light["path"], "{twin}");
    assert_eq!(checksum(twin)?, 5 + count);

    let light_fuel = fuel(light)?;
    assert_same_fuel(fuel(variant(&report, "heavy")?)?, 2.0 * light_fuel, "heavy");
    assert_same_fuel(fuel(twin)?, light_fuel, "light#2");

    let heavy = comparison(&report, "heavy")?;
    assert_eq!(heavy["metric"], "instructions", "{heavy}");
    assert_eq!(heavy["verdict"], "slower", "{heavy}");
    assert_same_fuel(number(heavy, "ratio")?, 2.0, "heavy / light");
    assert_eq!(heavy["ci95_low"], heavy["ratio"], "an exact count: {heavy}");
    assert_eq!(
        heavy["ci95_high"], heavy["ratio"],
        "an exact count: {heavy}"
    );
    assert!(
        heavy["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("`heavy` is 2.000× slower than `light`")),
        "{heavy}"
    );

    let twin = comparison(&report, "light#2")?;
    assert_eq!(twin["metric"], "instructions", "{twin}");
    assert_eq!(twin["verdict"], "same", "{twin}");
    assert_eq!(number(twin, "ratio")?, 1.0, "{twin}");
    assert!(
        table.contains("\nslower  `heavy` is 2.000× slower"),
        "{table}"
    );
    assert!(table.contains("\nsame    `light#2` vs `light`"), "{table}");
    Ok(())
}

#[test]
fn compare_reference_flag_and_table_on_stdout() -> TestResult {
    // The table goes to stdout when the JSON goes to a file.
    let dir = tempfile::tempdir()?;
    let json = dir.path().join("compare.json");
    let (out, stdout, stderr) = output(
        compare([fixture("light.wat"), fixture("heavy.wat")])
            .args(["--metric", "instructions", "--reference", "heavy"])
            .args(["--noise", "3", "--count", "20000", "--export-json"])
            .arg(&json),
    )?;
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let report: Value = serde_json::from_slice(&std::fs::read(&json)?)?;
    assert_compare_report(&report, "heavy", &stdout)?;
    assert_eq!(number(&report, "noise_pct")?, 3.0);
    assert_eq!(report["count"], 20000, "--count is the shared count");
    assert!(stdout.contains("noise band ±1.5%"), "{stdout}");

    let comparisons = report["comparisons"].as_array().ok_or("no comparisons")?;
    assert_eq!(
        comparisons.len(),
        1,
        "the reference is not compared: {report}"
    );
    let light = comparison(&report, "light")?;
    assert_eq!(light["verdict"], "faster", "{light}");
    assert_same_fuel(number(light, "ratio")?, 0.5, "light / heavy");
    assert!(
        light["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("`light` is 2.000× faster than `heavy`")),
        "{light}"
    );
    assert!(
        stdout.lines().any(|l| l.starts_with("faster  `light`")),
        "{stdout}"
    );
    // Written in place, with no temporary left behind.
    let left: Vec<_> = std::fs::read_dir(dir.path())?.collect::<Result<_, _>>()?;
    assert_eq!(left.len(), 1, "{left:?}");
    Ok(())
}

#[test]
fn compare_by_time_sees_a_300_fold_difference() -> TestResult {
    // At size 300, sized.wat loops 300 times per op; light.wat ignores the
    // size and does one iteration per op. Far beyond any timing noise. A
    // large count keeps the number of samples (and the JSON) small.
    let (code, report, table) =
        json_run(compare([fixture("light.wat"), fixture("sized.wat")]).args([
            "--size",
            "300",
            "--count",
            "20000",
            "--same-seed",
            "--seed",
            "3",
        ]))?;
    assert_eq!(code, Some(0), "{table}");
    assert_eq!(variant_names(&report)?, ["light/300", "sized/300"]);
    assert_compare_report(&report, "light/300", &table)?;
    assert_eq!(report["count"], 20000);
    for name in ["light/300", "sized/300"] {
        let v = variant(&report, name)?;
        assert_measured(v)?;
        assert_eq!(v["size"], 300, "{v}");
        assert!(v["fuel_per_op"].is_null(), "no instruction counts: {v}");
    }
    assert_eq!(checksum(variant(&report, "light/300")?)?, 3 + 20000);
    assert_eq!(checksum(variant(&report, "sized/300")?)?, 3 + 300);
    let sized = comparison(&report, "sized/300")?;
    assert_eq!(sized["metric"], "time", "{sized}");
    assert_eq!(sized["verdict"], "slower", "{sized}");
    assert!(number(sized, "ratio")? > 10.0, "{sized}");
    Ok(())
}

#[test]
fn compare_of_constant_time_variants_falls_back_to_time() -> TestResult {
    // multi.wat's two benchmarks are two variants of one file. They do no
    // per-op work: 0 instructions per op, so no instruction ratio exists and
    // the comparison is by time; per-op times of 0 may give no ratio at all
    // (null), but the report stays valid JSON. Capped at 300 ms.
    let (code, report, table) = json_run(compare_for([fixture("multi.wat")], "300ms").args([
        "--metric",
        "instructions",
        "--count",
        "1000",
    ]))?;
    assert_eq!(code, Some(0), "{table}");
    assert_eq!(variant_names(&report)?, ["multi:a", "multi:b"]);
    assert_eq!(report["reference"], "multi:a");
    for name in ["multi:a", "multi:b"] {
        let v = variant(&report, name)?;
        assert_measured(v)?;
        assert_eq!(v["count"], 1000, "{v}");
        assert_eq!(fuel(v)?, 0.0);
    }
    let b = comparison(&report, "multi:b")?;
    assert_eq!(b["metric"], "time", "{b}");
    assert_eq!(b["reference"], "multi:a", "{b}");
    let verdict = b["verdict"].as_str().ok_or("no verdict")?;
    assert!(VERDICTS.contains(&verdict), "{b}");
    for key in ["ratio", "ci95_low", "ci95_high"] {
        assert!(b[key].is_number() || b[key].is_null(), "{b}");
    }
    assert!(
        table
            .lines()
            .any(|l| l.starts_with(verdict) && l.contains("`multi:b`")),
        "{table}"
    );
    Ok(())
}

/// `host compare` stopped by a failed variant: exit status 1, nothing on
/// stdout, one `error:` line holding every needle.
fn assert_compare_error(command: &mut Command, needles: &[&str]) -> TestResult {
    assert_compare_stopped(command, 1, needles)
}

/// `host compare` stopped by a usage error: exit status 2, otherwise as
/// [`assert_compare_error`].
fn assert_compare_usage_error(command: &mut Command, needles: &[&str]) -> TestResult {
    assert_compare_stopped(command, 2, needles)
}

fn assert_compare_stopped(command: &mut Command, status: i32, needles: &[&str]) -> TestResult {
    let (out, stdout, stderr) = output(command)?;
    assert_eq!(
        out.status.code(),
        Some(status),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.is_empty(), "{stdout}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "expected one line on stderr:\n{stderr}");
    assert!(lines[0].starts_with("error: "), "{stderr}");
    for needle in needles {
        assert!(lines[0].contains(needle), "no {needle:?} in: {stderr}");
    }
    Ok(())
}

#[test]
fn compare_needs_two_variants_and_a_known_reference() -> TestResult {
    assert_compare_usage_error(
        &mut compare([fixture("light.wat")]),
        &["at least two variants"],
    )?;
    assert_compare_usage_error(
        compare([fixture("light.wat"), fixture("light.wat")]).args(["--reference", "nope"]),
        &["--reference", "`nope`", "light, light#2"],
    )
}

#[test]
fn compare_stops_at_a_broken_variant() -> TestResult {
    let light = fixture("light.wat");
    let dir = tempfile::tempdir()?;
    let missing = dir.path().join("missing.wat");
    for (bad, reason) in [
        (fixture("trap_run.wat"), "unreachable"),
        (fixture("div_zero.wat"), "integer divide by zero"),
        (fixture("pause_no_resume.wat"), "pause without resume"),
        (fixture("not_wasm.wasm"), "not a WebAssembly binary"),
        (fixture("unknown_import.wat"), "unknown import `env.foo`"),
        (missing, "cannot read the file"),
    ] {
        let shown = bad.display().to_string();
        assert_compare_error(
            &mut compare([light.as_path(), bad.as_path()]),
            &[&format!("error: {shown}"), reason],
        )?;
    }
    Ok(())
}

#[test]
fn compare_setup_failure_names_the_file() -> TestResult {
    let bad = fixture("trap_setup.wat");
    assert_compare_error(
        &mut compare([fixture("light.wat"), bad.clone()]),
        &[&format!("error: {}", bad.display()), "`setup(0)` failed"],
    )
}

#[test]
fn compare_instruction_count_failure_names_the_file() -> TestResult {
    let bad = fixture("fuel_trap.wat");
    assert_compare_error(
        compare([fixture("light.wat"), bad.clone()]).args([
            "--metric",
            "instructions",
            "--count",
            "1000",
        ]),
        &[
            &format!("error: {}", bad.display()),
            "counting instructions",
        ],
    )
}

#[test]
fn compare_usage_errors() -> TestResult {
    let (light, heavy) = (fixture("light.wat"), fixture("heavy.wat"));
    let plain = |args: &[&str]| {
        let mut command = Command::new(host_binary());
        command.arg("compare").arg(&light).arg(&heavy).args(args);
        command
    };
    assert_fatal(&mut plain(&["--noise=-1"]), "--noise")?;
    assert_fatal(&mut plain(&["--time", "0s"]), "--time")?;
    assert_fatal(&mut plain(&["--count", "0"]), "--count")?;
    assert_fatal(&mut plain(&["--size", "1,2"]), "--size")?;
    let dir = tempfile::tempdir()?;
    let json = dir.path().join("no").join("out.json");
    assert_fatal(plain(&[]).arg("--export-json").arg(&json), "--export-json")?;
    assert_clap_error(&mut plain(&["--metric", "cycles"]), "--metric")?;
    assert_clap_error(
        &mut plain(&["--fail-on-regression", "5"]),
        "--fail-on-regression",
    )?;
    let mut none = Command::new(host_binary());
    assert_clap_error(none.arg("compare"), "FILE")
}

// ---------------------------------------------------------------------------
// Saved baselines (kept runs of the store, here `store` in the test's folder)
// ---------------------------------------------------------------------------

/// `host run FILES --samples 5 --metric instructions`, run in `dir`.
fn in_dir<I, S>(dir: &Path, files: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut command = bench_samples(files, 5);
    command
        .current_dir(dir)
        .env("WASM_BENCH_STORE", dir.join("store"))
        .args(["--metric", "instructions", "--count", "256"]);
    command
}

/// Put a copy of fixture `from` at `dir/to`.
fn place(dir: &Path, from: &str, to: &str) -> TestResult {
    std::fs::copy(fixture(from), dir.join(to))?;
    Ok(())
}

/// The baselines named in `dir/store`, sorted.
fn saved_files(dir: &Path) -> Result<Vec<String>, Box<dyn Error>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir.join("store").join("baselines"))? {
        files.push(entry?.file_name().to_string_lossy().into_owned());
    }
    files.sort();
    Ok(files)
}

/// The kept run baseline `name` of `dir/store` names.
fn kept_baseline(dir: &Path, name: &str) -> Result<Value, Box<dyn Error>> {
    let store = dir.join("store");
    let id = std::fs::read_to_string(store.join("baselines").join(name))?;
    let path = store.join("runs").join(format!("{}.json", id.trim()));
    Ok(serde_json::from_slice(&std::fs::read(path)?)?)
}

/// The `baseline` object of a row, checked for shape.
fn baseline_of<'a>(report: &'a Value, name: &str) -> Result<&'a Value, Box<dyn Error>> {
    let b = &row(report, name)?["baseline"];
    assert!(
        b.is_object(),
        "row {name} has no baseline comparison: {report}"
    );
    assert!(b["name"].is_string(), "{b}");
    let metric = b["metric"].as_str().ok_or("no metric")?;
    assert!(metric == "time" || metric == "instructions", "{b}");
    let verdict = b["verdict"].as_str().ok_or("no verdict")?;
    assert!(VERDICTS.contains(&verdict), "{b}");
    let (ratio, low, high) = (
        number(b, "ratio")?,
        number(b, "ci95_low")?,
        number(b, "ci95_high")?,
    );
    assert!(ratio > 0.0 && low <= ratio && ratio <= high, "{b}");
    assert!(b["text"].is_string(), "{b}");
    assert!(b["regression"].is_boolean(), "{b}");
    Ok(b)
}

#[test]
fn save_baseline_keeps_the_run_in_the_store() -> TestResult {
    let dir = tempfile::tempdir()?;
    place(dir.path(), "light.wat", "w.wat")?;
    let (out, stdout, stderr) = output(in_dir(dir.path(), ["w.wat"]).args([
        "--save-baseline",
        "first",
        "--same-seed",
        "--seed",
        "6",
    ]))?;
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let footer: Vec<&str> = stdout.lines().rev().take(3).collect();
    assert!(footer.contains(&"1 measured"), "{stdout}");
    let runs = dir.path().join("store").join("runs");
    assert!(
        footer.iter().any(|l| l
            .strip_prefix("saved as baseline: ")
            .is_some_and(|p| p.starts_with(&*runs.to_string_lossy()))),
        "{stdout}"
    );
    assert_eq!(saved_files(dir.path())?, ["first"], "no temporary left");

    let saved = kept_baseline(dir.path(), "first")?;
    assert_eq!(saved["seed"], 6);
    let w = &saved["rows"][0];
    assert_eq!(w["name"], "w");
    assert!(fuel(w)? > 0.0, "{w}");
    assert!(number(w, "median_ns")? > 0.0, "{w}");
    assert!(
        w["epochs_ns_per_op"]
            .as_array()
            .is_some_and(|s| !s.is_empty()),
        "{w}"
    );

    // Saved again: the name points at the new run. The JSON export says
    // where it went.
    let (code, report, table) = json_run(in_dir(dir.path(), ["w.wat"]).args([
        "--save-baseline",
        "first",
        "--same-seed",
        "--seed",
        "8",
    ]))?;
    assert_eq!(code, Some(0), "{table}");
    let path = report["saved_baseline"]
        .as_str()
        .ok_or("no saved_baseline")?;
    assert!(path.starts_with(&*runs.to_string_lossy()), "{report}");
    assert!(report["baseline"].is_null(), "{report}");
    assert!(
        table.contains(&format!("saved as baseline: {path}")),
        "{table}"
    );
    assert_eq!(saved_files(dir.path())?, ["first"]);
    assert_eq!(kept_baseline(dir.path(), "first")?["seed"], 8);
    Ok(())
}

#[test]
fn baseline_verdicts_by_instructions_and_the_regression_exit() -> TestResult {
    let dir = tempfile::tempdir()?;
    let w = |from: &str| place(dir.path(), from, "w.wat");

    // The light version, saved.
    w("light.wat")?;
    let (out, stdout, stderr) =
        output(in_dir(dir.path(), ["w.wat"]).args(["--save-baseline", "light"]))?;
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");

    // Twice the work under the same name: a certain regression, exit 3. The
    // run is saved too.
    w("heavy.wat")?;
    let (code, report, table) = json_run(in_dir(dir.path(), ["w.wat"]).args([
        "--baseline",
        "light",
        "--fail-on-regression",
        "5",
        "--save-baseline",
        "heavy",
    ]))?;
    assert_eq!(code, Some(3), "{table}");
    assert_eq!(report["baseline"], "light");
    let b = baseline_of(&report, "w")?;
    assert_eq!(b["name"], "light");
    assert_eq!(b["metric"], "instructions");
    assert_eq!(b["verdict"], "slower");
    assert_eq!(b["regression"], true);
    assert_same_fuel(number(b, "ratio")?, 2.0, "heavy / light");
    assert_eq!(b["ci95_low"], b["ratio"], "{b}");
    assert_eq!(b["ci95_high"], b["ratio"], "{b}");
    assert!(
        table.contains("vs baseline `light` (instructions): `w` is 2.000× slower"),
        "{table}"
    );
    assert!(table.contains("(regression)"), "{table}");
    assert!(
        table.contains("\n1 regression(s) against baseline\n"),
        "{table}"
    );
    assert!(table.contains("saved as baseline: "), "{table}");
    assert_eq!(saved_files(dir.path())?, ["heavy", "light"]);

    // The same without --fail-on-regression: slower, but not a failure.
    let (code, report, table) =
        json_run(in_dir(dir.path(), ["w.wat"]).args(["--baseline", "light"]))?;
    assert_eq!(code, Some(0), "{table}");
    let b = baseline_of(&report, "w")?;
    assert_eq!(b["verdict"], "slower");
    assert_eq!(b["regression"], false);
    assert!(!table.contains("regression"), "{table}");

    // A threshold above the slowdown: not a regression, exit 0; the verdict
    // still reads the ratio against the noise band, which the threshold does
    // not widen (issue 10: one noise band everywhere).
    let (code, report, table) = json_run(in_dir(dir.path(), ["w.wat"]).args([
        "--baseline",
        "light",
        "--fail-on-regression",
        "150",
    ]))?;
    assert_eq!(code, Some(0), "{table}");
    let b = baseline_of(&report, "w")?;
    assert_eq!(b["regression"], false);
    assert_eq!(b["verdict"], "slower", "{b}");

    // Back to the light version against the heavy baseline: faster, exit 0.
    w("light.wat")?;
    let (code, report, table) = json_run(in_dir(dir.path(), ["w.wat"]).args([
        "--baseline",
        "heavy",
        "--fail-on-regression",
        "5",
    ]))?;
    assert_eq!(code, Some(0), "{table}");
    let b = baseline_of(&report, "w")?;
    assert_eq!(b["name"], "heavy");
    assert_eq!(b["verdict"], "faster");
    assert_eq!(b["regression"], false);
    assert_same_fuel(number(b, "ratio")?, 0.5, "light / heavy");
    assert!(
        table.contains("vs baseline `heavy` (instructions): `w` is 2.000× faster"),
        "{table}"
    );
    assert!(!table.contains("regression"), "{table}");

    // Against itself: the same.
    let (code, report, table) = json_run(in_dir(dir.path(), ["w.wat"]).args([
        "--baseline",
        "light",
        "--fail-on-regression",
        "0",
    ]))?;
    assert_eq!(code, Some(0), "{table}");
    let b = baseline_of(&report, "w")?;
    assert_eq!(b["verdict"], "same");
    assert_eq!(number(b, "ratio")?, 1.0);
    assert_eq!(b["regression"], false);
    Ok(())
}

#[test]
fn baseline_without_instruction_counts_is_compared_by_time() -> TestResult {
    let dir = tempfile::tempdir()?;
    place(dir.path(), "light.wat", "w.wat")?;
    // Saved without counting instructions...
    let (out, stdout, stderr) = output(
        bench_samples(["w.wat"], 5)
            .current_dir(dir.path())
            .env("WASM_BENCH_STORE", dir.path().join("store"))
            .args(["--count", "256", "--save-baseline", "timed"]),
    )?;
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    // ...compared with counting on: only times can be compared.
    let (code, report, table) =
        json_run(in_dir(dir.path(), ["w.wat"]).args(["--baseline", "timed"]))?;
    assert_eq!(code, Some(0), "{table}");
    assert_eq!(baseline_of(&report, "w")?["metric"], "time");
    assert!(table.contains("vs baseline `timed` (time): "), "{table}");
    Ok(())
}

#[test]
fn baseline_compares_only_rows_it_measured() -> TestResult {
    let dir = tempfile::tempdir()?;
    place(dir.path(), "light.wat", "w.wat")?;
    place(dir.path(), "trap_run.wat", "x.wat")?;
    // A run with a failed row is still saved, failure included.
    let (out, stdout, stderr) =
        output(in_dir(dir.path(), ["w.wat", "x.wat"]).args(["--save-baseline", "mixed"]))?;
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("saved as baseline: "), "{stdout}");

    // x now works, y is new: neither has anything to be compared with.
    place(dir.path(), "light.wat", "x.wat")?;
    place(dir.path(), "light.wat", "y.wat")?;
    let (code, report, table) =
        json_run(in_dir(dir.path(), ["w.wat", "x.wat", "y.wat"]).args(["--baseline", "mixed"]))?;
    assert_eq!(code, Some(0), "{table}");
    assert_eq!(baseline_of(&report, "w")?["verdict"], "same");
    for name in ["x", "y"] {
        let r = row(&report, name)?;
        assert_measured(r)?;
        assert!(r.get("baseline").is_none(), "{r}");
    }
    assert_eq!(table.matches("vs baseline `mixed`").count(), 1, "{table}");
    Ok(())
}

#[test]
fn baseline_environment_differences_are_warnings() -> TestResult {
    let dir = tempfile::tempdir()?;
    place(dir.path(), "light.wat", "w.wat")?;
    let (out, stdout, stderr) =
        output(in_dir(dir.path(), ["w.wat"]).args(["--save-baseline", "loose", "--no-pin"]))?;
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let (code, report, table) =
        json_run(in_dir(dir.path(), ["w.wat"]).args(["--baseline", "loose", "--core", "0"]))?;
    assert_eq!(code, Some(0), "warnings do not fail the run:\n{table}");
    baseline_of(&report, "w")?;
    let env = &report["environment"];
    let warnings: Vec<&str> = env["warnings"]
        .as_array()
        .ok_or_else(|| format!("`warnings` is not a list: {env}"))?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    // Core 0 always exists, but pinning may be refused (then both runs were
    // unpinned and nothing differs).
    if env["pinned_core"] == 0 {
        let pinning: Vec<&&str> = warnings
            .iter()
            .filter(|w| w.contains("baseline") && w.contains("pinned to core"))
            .collect();
        assert_eq!(pinning.len(), 1, "{warnings:?}");
        assert!(
            table
                .lines()
                .any(|l| l == format!("warning: {}", pinning[0])),
            "{table}"
        );
    }
    Ok(())
}

#[test]
fn missing_baseline_is_fatal() -> TestResult {
    let dir = tempfile::tempdir()?;
    place(dir.path(), "light.wat", "w.wat")?;
    assert_fatal(
        in_dir(dir.path(), ["w.wat"]).args(["--baseline", "nope"]),
        "`nope`",
    )?;
    let (_, _, stderr) = output(in_dir(dir.path(), ["w.wat"]).args(["--baseline", "nope"]))?;
    assert!(
        stderr.contains(&*dir.path().join("store").to_string_lossy()),
        "the error names the store: {stderr}"
    );
    assert!(
        stderr.contains("--save-baseline nope"),
        "the error says how to make one: {stderr}"
    );
    assert!(!dir.path().join("store").exists(), "nothing was created");
    Ok(())
}

#[test]
fn corrupt_baseline_is_fatal() -> TestResult {
    let dir = tempfile::tempdir()?;
    place(dir.path(), "light.wat", "w.wat")?;
    let (out, stdout, stderr) =
        output(in_dir(dir.path(), ["w.wat"]).args(["--save-baseline", "good"]))?;
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let store = dir.path().join("store");
    let good_id = std::fs::read_to_string(store.join("baselines").join("good"))?;
    let good = std::fs::read(store.join("runs").join(format!("{}.json", good_id.trim())))?;

    let corrupt: [(&str, &[u8]); 6] = [
        ("garbage", b"this is not json"),
        ("empty", b""),
        ("truncated", &good[..good.len() / 2]),
        ("object", b"{}"),
        ("list", b"[1, 2, 3]"),
        (
            "results",
            br#"{"tool": {"version": "0.1.0"}, "environment": {"priority": "x"}, "results": 5}"#,
        ),
    ];
    for (i, (name, bytes)) in corrupt.into_iter().enumerate() {
        let id = format!("000000000000{i}-1-0");
        std::fs::write(store.join("runs").join(format!("{id}.json")), bytes)?;
        std::fs::write(store.join("baselines").join(name), &id)?;
        assert_fatal(
            in_dir(dir.path(), ["w.wat"]).args(["--baseline", name]),
            &format!("baseline `{name}` is damaged"),
        )?;
    }
    // The good one still works.
    let (code, report, table) =
        json_run(in_dir(dir.path(), ["w.wat"]).args(["--baseline", "good"]))?;
    assert_eq!(code, Some(0), "{table}");
    assert_eq!(baseline_of(&report, "w")?["verdict"], "same");
    Ok(())
}

#[test]
fn bad_baseline_names_are_usage_errors() -> TestResult {
    let dir = tempfile::tempdir()?;
    place(dir.path(), "light.wat", "w.wat")?;
    for bad in ["../x", "a/b", "", ".hidden", "x y"] {
        for flag in ["--baseline", "--save-baseline"] {
            assert_fatal(
                in_dir(dir.path(), ["w.wat"]).args([flag, bad]),
                &format!("baseline name `{bad}`"),
            )?;
        }
    }
    assert!(!dir.path().join("store").exists(), "nothing was created");
    assert!(!dir.path().join("x.json").exists());
    Ok(())
}

#[test]
fn regression_threshold_needs_a_baseline_and_a_percentage() -> TestResult {
    let light = fixture("light.wat");
    assert_clap_error(
        host_run([light.as_os_str()]).args(["--fail-on-regression", "5"]),
        "--baseline",
    )?;
    assert_fatal(
        host_run([light.as_os_str()]).args(["--baseline", "b", "--fail-on-regression=-5"]),
        "--fail-on-regression",
    )
}

#[test]
fn unwritable_baseline_folder_is_measured_not_kept() -> TestResult {
    // `store` is a file: the baseline cannot be saved; the run is measured
    // and printed all the same, says that it was not kept instead of
    // claiming it was, and exits with the status of "measured, not kept".
    let dir = tempfile::tempdir()?;
    place(dir.path(), "light.wat", "w.wat")?;
    std::fs::write(dir.path().join("store"), "in the way")?;
    let (out, stdout, stderr) =
        output(in_dir(dir.path(), ["w.wat"]).args(["--save-baseline", "b"]))?;
    assert_eq!(out.status.code(), Some(4), "{stdout}\n{stderr}");
    assert!(!stdout.contains("saved as baseline"), "{stdout}");
    assert!(stdout.contains("\nw "), "the row is printed: {stdout}");
    assert!(
        stderr.contains("cannot create the store") && stderr.contains("not kept"),
        "{stderr}"
    );
    Ok(())
}
