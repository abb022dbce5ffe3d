//! `--engine wasmer` and `--engine wasmer-singlepass` under the built host:
//! the bundled workloads measure, the empty guest reads zero, a comparison
//! with wasmtime's Cranelift gives a verdict, and what wasmer cannot run is
//! a row error.
//!
//! These need a host built with wasmer (`cargo build --release -p host
//! --features wasmer`, run with `WASM_BENCH_HOST` naming that binary, as
//! the default test build replaces it): on a host without it each test says
//! so and passes without measuring. No test asserts a time other than the
//! empty guest's zero.

use std::error::Error;
use std::process::Command;

use e2e::{host_binary, workloads};
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

const FAST: [&str; 6] = [
    "--warmup",
    "20ms",
    "--sample-time",
    "500us",
    "--samples",
    "20",
];

/// Run `host ARGS --export-json -` and parse its report.
fn json(args: &[&str]) -> Result<Value, Box<dyn Error>> {
    let mut command = Command::new(host_binary());
    command.args(args).args(["--export-json", "-"]);
    let out = e2e::prepare(&mut command).output()?;
    let stdout = String::from_utf8(out.stdout)?;
    let stderr = String::from_utf8(out.stderr)?;
    assert!(!stderr.contains("panicked"), "{stderr}");
    let report: Value = serde_json::from_str(&stdout)
        .map_err(|e| format!("stdout is not JSON ({e}):\n{stdout}\nstderr:\n{stderr}"))?;
    e2e::validate_export(&report)?;
    Ok(report)
}

fn rows(report: &Value) -> Result<&Vec<Value>, Box<dyn Error>> {
    report["results"]
        .as_array()
        .ok_or_else(|| format!("`results` is not a list: {report}").into())
}

/// Whether the host runs wasmer; if not, say so on stderr.
fn built_with_wasmer() -> Result<bool, Box<dyn Error>> {
    let xor = workloads().join("xor.wasm");
    let xor = xor.to_str().ok_or("path")?;
    let report = json(&["run", xor, "--engine", "wasmer", "--samples", "1"])?;
    let without = rows(&report)?
        .iter()
        .filter_map(|r| r["error"].as_str())
        .any(|e| e.contains("built without wasmer"));
    if without {
        eprintln!(
            "skipped: this host is built without wasmer \
             (cargo build --release -p host --features wasmer; WASM_BENCH_HOST=<that binary>)"
        );
    }
    Ok(!without)
}

#[test]
fn workloads_measure_under_both_compilers_and_the_empty_guest_reads_zero() -> TestResult {
    if !built_with_wasmer()? {
        return Ok(());
    }
    let (xor, empty) = (workloads().join("xor.wasm"), workloads().join("empty.wasm"));
    let mut args = vec![
        "run",
        xor.to_str().ok_or("path")?,
        empty.to_str().ok_or("path")?,
    ];
    args.extend(["--engine", "wasmer", "--engine", "wasmer-singlepass"]);
    args.extend(FAST);
    let report = json(&args)?;
    let rows = rows(&report)?;
    assert_eq!(rows.len(), 4, "{report}");
    for row in rows {
        assert!(row.get("error").is_none(), "{row}");
        let name = row["name"].as_str().ok_or("no name")?;
        assert!(name.contains("wasmer"), "{name}");
        let median = row["ns_per_op"]["median"].as_f64().ok_or("no median")?;
        if name.starts_with("empty") {
            assert!(median.abs() <= 0.05, "{name}: {median} ns per op");
        }
        assert!(
            row["peak_memory_bytes"].as_u64().is_none_or(|b| b > 0),
            "{row}"
        );
    }
    Ok(())
}

#[test]
fn a_comparison_with_cranelift_gives_a_verdict() -> TestResult {
    if !built_with_wasmer()? {
        return Ok(());
    }
    let xor = workloads().join("xor.wasm");
    let report = json(&[
        "compare",
        xor.to_str().ok_or("path")?,
        "--engine",
        "cranelift",
        "--engine",
        "wasmer",
        "--warmup",
        "20ms",
        "--sample-time",
        "200us",
        "--time",
        "2s",
    ])?;
    let comparisons = report["comparisons"].as_array().ok_or("no comparisons")?;
    assert_eq!(comparisons.len(), 1, "{report}");
    let verdict = comparisons[0]["verdict"].as_str().ok_or("no verdict")?;
    assert!(
        ["faster", "slower", "same", "unsure"].contains(&verdict),
        "{report}"
    );
    Ok(())
}

#[test]
fn what_wasmer_cannot_run_is_a_row_error() -> TestResult {
    if !built_with_wasmer()? {
        return Ok(());
    }
    let component = workloads().join("xor-component.wasm");
    let report = json(&[
        "run",
        component.to_str().ok_or("path")?,
        "--engine",
        "wasmer",
        "--samples",
        "1",
    ])?;
    let errors: Vec<&str> = rows(&report)?
        .iter()
        .filter_map(|r| r["error"].as_str())
        .collect();
    assert_eq!(errors.len(), 1, "{report}");
    assert!(
        errors.iter().any(|e| e.contains("core modules only")),
        "{errors:?}"
    );
    Ok(())
}

/// A module that uses SIMD under wasmer's single-pass compiler, which has
/// none: a row error that says so in words (not the compiler's "not yet
/// implemented"), while wasmer's Cranelift measures it.
#[test]
fn singlepass_says_it_has_no_simd() -> TestResult {
    if !built_with_wasmer()? {
        return Ok(());
    }
    let simd = e2e::fixture("conformance/simd.wat");
    let mut args = vec!["run", simd.to_str().ok_or("path")?];
    args.extend(["--engine", "wasmer-singlepass", "--engine", "wasmer"]);
    args.extend(FAST);
    let report = json(&args)?;
    let rows = rows(&report)?;
    let singlepass = rows
        .iter()
        .find(|r| r["name"] == "simd[wasmer-singlepass]")
        .ok_or("no singlepass row")?;
    let error = singlepass["error"].as_str().unwrap_or("");
    assert!(
        error.contains("wasmer-singlepass does not support SIMD"),
        "{singlepass}"
    );
    assert!(!error.contains("not yet implemented"), "{error}");
    let cranelift = rows
        .iter()
        .find(|r| r["name"] == "simd[wasmer]")
        .ok_or("no wasmer row")?;
    assert!(cranelift.get("error").is_none(), "{cranelift}");
    Ok(())
}
