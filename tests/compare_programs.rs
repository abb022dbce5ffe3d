//! End-to-end tests of `host compare` on WASI programs: the bundled
//! `steps100` and `steps101` (10^6 and 1.01·10^6 dependent steps, output
//! checked), a preview 2 command component, a program whose output check
//! fails, and Callgrind's exact counts. No test asserts a time; a ratio of
//! timed runs is only checked to be of the right programs (within 2× of
//! 1), a margin a loaded machine does not cross in interleaved rounds: the
//! 1% is Callgrind's test, and `host selftest`'s.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use e2e::{fixture, host_binary, prepare, validate_export, workloads};
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

fn steps(n: u32) -> PathBuf {
    workloads().join(format!("steps{n}.wasm"))
}

/// `host compare FILES --time 3s ARGS`: its output and stderr (where the
/// table goes with `--export-json -`).
fn compare(files: &[&Path], args: &[&str]) -> Result<(Output, String), Box<dyn Error>> {
    let out = prepare(
        Command::new(host_binary())
            .arg("compare")
            .args(files)
            .args(["--time", "3s"])
            .args(args),
    )
    .output()?;
    let stderr = String::from_utf8(out.stderr.clone())?;
    assert!(!stderr.contains("panicked"), "{stderr}");
    Ok((out, stderr))
}

/// [`compare`] with `--export-json -`: the report, checked against the
/// shipped schema, and the table.
fn compare_json(files: &[&Path]) -> Result<(Value, String), Box<dyn Error>> {
    let (out, table) = compare(files, &["--export-json", "-"])?;
    assert_eq!(out.status.code(), Some(0), "{table}");
    let report: Value = serde_json::from_slice(&out.stdout)?;
    validate_export(&report)?;
    Ok((report, table))
}

fn number(value: &Value, key: &str) -> Result<f64, Box<dyn Error>> {
    value[key]
        .as_f64()
        .ok_or_else(|| format!("`{key}` is not a number: {value}").into())
}

fn comparisons(report: &Value) -> Result<&Vec<Value>, Box<dyn Error>> {
    report["comparisons"]
        .as_array()
        .ok_or_else(|| format!("`comparisons` is not a list: {report}").into())
}

/// The phases of a comparison, by name, each with its ratio inside its
/// interval; instantiate and execute always, execute's the comparison's own.
fn phases(c: &Value) -> Result<Vec<&str>, Box<dyn Error>> {
    let phases = c["phases"].as_array().ok_or("no phases")?;
    for p in phases {
        let (ratio, low, high) = (
            number(p, "ratio")?,
            number(p, "ci95_low")?,
            number(p, "ci95_high")?,
        );
        assert!(low <= ratio && ratio <= high, "{p}");
        assert!(p["verdict"].is_string() && p["text"].is_string(), "{p}");
    }
    let execute = phases
        .iter()
        .find(|p| p["phase"] == "execute")
        .ok_or("no execute phase")?;
    for key in ["ratio", "ci95_low", "ci95_high", "verdict"] {
        assert_eq!(execute[key], c[key], "execute is the verdict's phase: {c}");
    }
    Ok(phases.iter().filter_map(|p| p["phase"].as_str()).collect())
}

/// Two programs: a verdict by the execute ratio, with the ratio of each
/// phase in the JSON and under the verdict in the table; the rows carry
/// the programs' phases. 1% apart; timed, so only within 2× here.
#[test]
fn two_programs_compare_with_a_ratio_per_phase() -> TestResult {
    let (a, b) = (steps(100), steps(101));
    let (report, table) = compare_json(&[&a, &b])?;
    let [c] = comparisons(&report)?.as_slice() else {
        return Err(format!("one comparison: {report}").into());
    };
    assert_eq!(c["variant"], "steps101");
    assert_eq!(c["reference"], "steps100");
    assert_eq!(phases(c)?, ["instantiate", "execute"], "{c}");
    let ratio = number(c, "ratio")?;
    assert!((0.5..2.0).contains(&ratio), "{c}");
    assert_eq!(report["count"], 1);
    for v in report["variants"].as_array().ok_or("no variants")? {
        assert_eq!(v["kind"], "program", "{v}");
        assert!(v["phases"]["execute_ns"].is_object(), "{v}");
    }
    assert!(table.contains(" rounds of interleaved iterations (a round: one of each program), "));
    for phase in ["instantiate", "execute"] {
        assert!(
            table.lines().any(|l| l.trim_start().starts_with(phase)),
            "no {phase} line:\n{table}"
        );
    }
    Ok(())
}

/// A program against itself: neither faster nor slower (the rounds are
/// paired, so load falls on both alike), within 2× of 1.
#[test]
fn a_program_against_itself_is_not_faster_or_slower() -> TestResult {
    let a = steps(100);
    let (report, _) = compare_json(&[&a, &a])?;
    let [c] = comparisons(&report)?.as_slice() else {
        return Err(format!("one comparison: {report}").into());
    };
    assert_eq!(c["variant"], "steps100#2");
    assert!(c["verdict"] == "same" || c["verdict"] == "unsure", "{c}");
    let ratio = number(c, "ratio")?;
    assert!((0.5..=2.0).contains(&ratio), "{c}");
    Ok(())
}

/// A program whose work is a random byte of its input (up to 32,768
/// times more from one iteration to the next), against a copy of itself:
/// the iterations of a round share their random numbers, so every round's
/// ratio is about 1, and the interval lies within 2× of 1 (on a quiet
/// machine, [0.996×, 1.0001×]). Drawn from the system instead, the rounds'
/// ratios spread from 1/32,768 to 32,768, and the interval reached 0.06×
/// and 3.6×.
#[test]
fn a_rounds_variants_run_on_the_same_random_numbers() -> TestResult {
    let dir = tempfile::tempdir()?;
    let mut copies = Vec::new();
    for side in ["a", "b"] {
        std::fs::create_dir(dir.path().join(side))?;
        let copy = dir.path().join(side).join("random_work.wat");
        std::fs::copy(fixture("programs/random_work.wat"), &copy)?;
        copies.push(copy);
    }
    let (report, _) = compare_json(&[&copies[0], &copies[1]])?;
    let [c] = comparisons(&report)?.as_slice() else {
        return Err(format!("one comparison: {report}").into());
    };
    let (low, high) = (number(c, "ci95_low")?, number(c, "ci95_high")?);
    assert!(0.5 < low && high < 2.0, "{c}");
    Ok(())
}

/// Three variants: two comparisons, each interval at 97.5% so that both
/// hold together at 95%; a preview 2 command component compares too.
#[test]
fn three_programs_give_family_wise_intervals() -> TestResult {
    let (a, b) = (steps(100), steps(101));
    let (report, table) = compare_json(&[&a, &b, &a])?;
    let all = comparisons(&report)?;
    assert_eq!(all.len(), 2, "{report}");
    for c in all {
        assert!((number(c, "confidence")? - 0.975).abs() < 1e-9, "{c}");
        phases(c)?;
    }
    assert!(table.contains("intervals hold together at 95%"), "{table}");

    let component = fixture("programs/command_component.wat");
    let (report, _) = compare_json(&[&component, &component])?;
    phases(&comparisons(&report)?[0])?;
    Ok(())
}

/// A program whose output differs from its expected output stops the
/// comparison: exit status 1, one error line naming it and the check.
#[test]
fn a_failed_output_check_stops_the_comparison() -> TestResult {
    let dir = tempfile::tempdir()?;
    let bad = dir.path().join("steps101.wasm");
    std::fs::copy(steps(101), &bad)?;
    std::fs::copy(
        workloads().join("steps101.input.txt"),
        dir.path().join("steps101.input.txt"),
    )?;
    std::fs::write(
        dir.path().join("steps101.stdout.expected"),
        "steps(1010000) = 0\n",
    )?;
    let (out, stderr) = compare(&[&steps(100), &bad], &[])?;
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty());
    let line = stderr
        .lines()
        .find(|l| l.starts_with("error:"))
        .ok_or_else(|| format!("no error line:\n{stderr}"))?;
    assert!(line.contains(&bad.display().to_string()), "{line}");
    assert!(
        line.contains("stdout differs from the expected output"),
        "{line}"
    );
    Ok(())
}

/// A program against a `run(count, seed)` workload, and programs by
/// instruction count, are usage errors (exit status 2).
#[test]
fn usage_errors_of_programs() -> TestResult {
    let xor = workloads().join("xor.wasm");
    let (out, stderr) = compare(&[&steps(100), &xor], &[])?;
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot be compared"), "{stderr}");
    let (out, stderr) = compare(&[&steps(100), &steps(101)], &["--metric", "instructions"])?;
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--metric instructions"), "{stderr}");
    Ok(())
}

/// With `--metric cycles-est`, each program is counted by Callgrind and
/// the execute ratio is exact: 1.01·N steps against N is slower by 1%. It
/// needs Valgrind: without it (and without `WASM_BENCH_REQUIRE_VALGRIND`,
/// which CI sets) there is nothing to check here.
#[test]
fn programs_compare_by_estimated_cycles() -> TestResult {
    let installed = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !installed && std::env::var_os("WASM_BENCH_REQUIRE_VALGRIND").is_none() {
        return Ok(());
    }
    let (out, table) = compare(
        &[&steps(100), &steps(101)],
        &["--metric", "cycles-est", "--export-json", "-"],
    )?;
    assert_eq!(out.status.code(), Some(0), "{table}");
    let report: Value = serde_json::from_slice(&out.stdout)?;
    validate_export(&report)?;
    let c = &comparisons(&report)?[0];
    assert_eq!(c["metric"], "cycles-est", "{c}");
    assert_eq!(c["verdict"], "slower", "{c}");
    assert_eq!(c["ci95_low"], c["ci95_high"], "an exact ratio: {c}");
    assert!((1.005..1.015).contains(&number(c, "ratio")?), "{c}");
    assert_eq!(phases(c)?, ["instantiate", "execute"], "{c}");
    Ok(())
}
