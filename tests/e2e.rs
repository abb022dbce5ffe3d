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
use std::sync::OnceLock;

use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

// ---------------------------------------------------------------------------
// Locating things
// ---------------------------------------------------------------------------

/// The workspace root (the folder above this package).
fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the e2e package lives inside the workspace")
}

/// A file in `tests/fixtures/`, as an absolute path.
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

/// The bundled `workloads/` folder, as an absolute path.
fn workloads() -> PathBuf {
    workspace_root().join("workloads")
}

/// The `host` binary, built once per test process.
///
/// Neither `cargo test --workspace` nor a dev-dependency on `host` builds the
/// binary of another package, and `CARGO_BIN_EXE_host` exists only for the
/// tests of `host` itself. So the first test to need it runs `cargo build
/// --release -p host` (with the `cargo` that runs the tests): a no-op taking a
/// fraction of a second when the binary is fresh, a rebuild when the sources
/// changed. Cargo reports where it put the binary, so a custom target folder
/// is handled too.
/// A failed build is remembered too, so that every test reports it without
/// running cargo again.
fn host_binary() -> &'static Path {
    static HOST: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let host = HOST.get_or_init(|| match std::env::var_os("WASM_BENCH_HOST") {
        Some(path) => Ok(PathBuf::from(path)),
        None => build_host().map_err(|e| e.to_string()),
    });
    match host {
        Ok(path) => path,
        Err(e) => panic!("cannot build the host binary: {e}"),
    }
}

fn build_host() -> Result<PathBuf, Box<dyn Error>> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(&cargo)
        .current_dir(workspace_root())
        .args(["build", "--release", "-p", "host", "--bin", "host"])
        .arg("--message-format=json-render-diagnostics")
        .output()?;
    if !output.status.success() {
        return Err(format!(
            "`{} build --release -p host` failed ({}):\n{}",
            cargo.to_string_lossy(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    let stdout = String::from_utf8(output.stdout)?;
    for line in stdout.lines() {
        let Ok(message) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let is_host_bin = message["reason"] == "compiler-artifact"
            && message["target"]["name"] == "host"
            && message["target"]["kind"]
                .as_array()
                .is_some_and(|kinds| kinds.iter().any(|k| k == "bin"));
        if let (true, Some(executable)) = (is_host_bin, message["executable"].as_str()) {
            return Ok(PathBuf::from(executable));
        }
    }
    Err("cargo built no `host` executable".into())
}

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
    let out = command.output()?;
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
    let report = serde_json::from_str(&stdout)
        .map_err(|e| format!("stdout is not pure JSON ({e}):\n{stdout}\nstderr:\n{stderr}"))?;
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
        "baseline_ns_per_call",
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
        "imports `wasi:cli/environment@0.2.0`: a workload component targets the `wasm-bench:workload/workload` world and may import only `wasm-bench:workload/timing@0.1.0`",
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
        json_run(bench([dir.path()]).args(["--count", "100", "--seed", "3"]))?;
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
            .args(["--count", "1000", "--seed", "7", "--drift", "0.5"]),
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
    let (code, report, table) =
        json_run(bench([fixture("add.wat")]).args(["--count", "12345", "--seed", "1000000007"]))?;
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
    let (code, report, table) =
        json_run(bench_samples([fixture("add.wat")], 7).args(["--count", "10", "--seed", "1"]))?;
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
    let (code, report, table) = json_run(&mut bench([fixture("add.wat")]))?;
    assert_eq!(code, Some(0), "{table}");
    let seed = integer(&report["environment"], "seed")?;
    let add = row(&report, "add")?;
    assert_measured(add)?;
    let count = integer(add, "count")?;
    assert_eq!(checksum(add)?, (seed as i64).wrapping_add(count as i64));
    Ok(())
}

#[test]
fn each_run_export_is_a_row() -> TestResult {
    let (code, report, table) =
        json_run(bench([fixture("multi.wat")]).args(["--count", "3", "--seed", "10"]))?;
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
    let (code, report, table) = json_run(
        bench_samples([fixture("paused.wat")], 12)
            .args(["--count", "50", "--seed", "8", "--size", "42"]),
    )?;
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
            .args(["--count", "5", "--seed", "2", "--export-json"])
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
    let (code, report, table) = json_run(
        bench_samples([fixture("paused_component.wat")], 12)
            .args(["--count", "50", "--seed", "8", "--size", "7,42"]),
    )?;
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
    let (code, report, table) =
        json_run(bench([fixture("multi_component.wat")]).args(["--count", "3", "--seed", "10"]))?;
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
    let (code, report, table) = json_run(
        bench_samples([fixture("sized.wat")], 5).args(["--seed", "100", "--size", "3,5,9"]),
    )?;
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
    let (code, report, table) =
        json_run(bench_samples([&path], 5).args(["--seed", "100", "--size", "3,5,9"]))?;
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
    let (code, report, table) = json_run(
        bench_samples([fixture("sized.wat")], 3).args(["--seed", "1", "--size", "2^2..2^4"]),
    )?;
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
const KNOWN_BUNDLED: [(&str, &str, u64); 8] = [
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
    let (out, stdout, stderr) = output(bench([workloads()]).arg("--export-json").arg(&json))?;
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
        assert!(kind == "module" || kind == "component", "{r}");
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
