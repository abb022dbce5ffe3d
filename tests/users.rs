//! End-to-end tests of what users' own code needs from the harness: a fresh
//! input for every call (so that code whose work depends on its input does
//! not replay one), WASI reactors initialised, a module that exports both
//! `_start` and `run` treated as README says, and usage errors that exit
//! with 2.

use std::error::Error;
use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard};

use e2e::{fixture, host_binary, prepare, workloads};
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

/// The tests of this file run one at a time, so that their runs do not
/// crowd each other's cores.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `host ARGS --export-json -` (for `run` and `compare`): its output, the
/// parsed report (`Value::Null` when stdout is not JSON) and the table.
fn host_json<I, S>(args: I) -> Result<(Output, Value, String), Box<dyn Error>>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let out = prepare(
        Command::new(host_binary())
            .args(args)
            .args(["--export-json", "-"]),
    )
    .output()?;
    let stderr = String::from_utf8(out.stderr.clone())?;
    assert!(!stderr.contains("panicked"), "{stderr}");
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    Ok((out, report, stderr))
}

/// The one row of a `host run` report.
fn only_row(report: &Value) -> Result<&Value, Box<dyn Error>> {
    match report["results"].as_array().map(Vec::as_slice) {
        Some([row]) => Ok(row),
        _ => Err(format!("expected one row: {report}").into()),
    }
}

fn median_ns(row: &Value) -> Result<f64, Box<dyn Error>> {
    row["ns_per_op"]["median"]
        .as_f64()
        .ok_or_else(|| format!("no median: {row}").into())
}

/// A binary search over 2^20 keys, drawn from the seed: with one seed for
/// every call, the branch predictor and the caches learn the key sequence at
/// small counts (27 ns per lookup at a count of 1000 against 163 ns at
/// 10^5 on one machine); with a fresh seed per call the per-op time is the
/// same at every count. Times move with the machine's load, so `host
/// selftest --only counts` measures that claim; here, what does not move:
/// every call of the run gets its own seed at a small count and a large
/// one, and the per-op work (wasm instructions, by fuel) is the same at
/// both, paused work and setup left out.
#[test]
fn a_data_dependent_workload_gets_fresh_input_at_every_count() -> TestResult {
    let _serial = one_at_a_time();
    let path = workloads().join("search-branchy.wasm");
    let mut per_op = Vec::new();
    for count in ["1000", "100000"] {
        let (out, report, stderr) = host_json([
            OsStr::new("run"),
            path.as_os_str(),
            OsStr::new("--size"),
            OsStr::new("2^20"),
            OsStr::new("--count"),
            OsStr::new(count),
            OsStr::new("--processes"),
            OsStr::new("1"),
            OsStr::new("--samples"),
            OsStr::new("3"),
            OsStr::new("--warmup"),
            OsStr::new("20ms"),
            OsStr::new("--metric"),
            OsStr::new("instructions"),
        ])?;
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert_eq!(report["environment"]["seed_rule"], "per_call", "{report}");
        let row = only_row(&report)?;
        let fuel = row["fuel_per_op"]
            .as_f64()
            .ok_or_else(|| format!("no fuel_per_op: {row}"))?;
        per_op.push((count, fuel));
    }
    let (least, most) = per_op.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), m| {
        (lo.min(m.1), hi.max(m.1))
    });
    // A lookup's instructions depend a little on its key (the search may
    // end early): the mean over 1000 keys is within 2% of the mean over
    // 10^5, and a replayed count or a leak of setup would be far off.
    assert!(
        least > 0.0 && most / least < 1.02,
        "instructions per op moved with the count: {per_op:?}"
    );
    Ok(())
}

/// A reactor's `_initialize` runs before `setup` (which traps otherwise) and
/// before anything is timed: `run` returns the initialised state plus the
/// count, in the timed samples and in the instruction pass alike.
#[test]
fn a_reactor_is_initialised_before_setup_and_run() -> TestResult {
    let _serial = one_at_a_time();
    for metric in ["time", "instructions"] {
        let (out, report, stderr) = host_json([
            OsStr::new("run"),
            fixture("reactor.wat").as_os_str(),
            OsStr::new("--count"),
            OsStr::new("18"),
            OsStr::new("--samples"),
            OsStr::new("10"),
            OsStr::new("--warmup"),
            OsStr::new("20ms"),
            OsStr::new("--metric"),
            OsStr::new(metric),
        ])?;
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert_eq!(only_row(&report)?["checksum"], 1_000_018, "{report}");
    }
    Ok(())
}

/// README's rule: a module that exports `run` is a workload even if it also
/// exports `_start`, which is never called; if it imports WASI it is
/// refused, and the message names `_start` and what to do.
#[test]
fn a_module_with_start_and_run_is_a_workload_and_start_is_never_called() -> TestResult {
    let _serial = one_at_a_time();
    let run = |file: &Path| {
        host_json([
            OsStr::new("run"),
            file.as_os_str(),
            OsStr::new("--samples"),
            OsStr::new("10"),
            OsStr::new("--warmup"),
            OsStr::new("20ms"),
        ])
    };
    let (out, report, stderr) = run(&fixture("start_and_run.wat"))?;
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(only_row(&report)?["kind"], "module", "{report}");

    let (out, report, stderr) = run(&fixture("start_and_run_wasi.wat"))?;
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let error = only_row(&report)?["error"]
        .as_str()
        .ok_or("no error")?
        .to_string();
    for words in [
        "imports WASI (`wasi_snapshot_preview1.proc_exit`)",
        "exports `_start`",
        "-mexec-model=reactor",
    ] {
        assert!(error.contains(words), "{words:?} not in: {error}");
    }
    Ok(())
}

/// Every usage error of `host compare` exits with 2, with one line that
/// says what is wrong.
#[test]
fn usage_errors_of_compare_exit_with_2() -> TestResult {
    let _serial = one_at_a_time();
    let xor = workloads().join("xor.wasm");
    let wc = workloads().join("wc.wasm");
    let cases: [(Vec<&OsStr>, &str); 3] = [
        (
            vec![OsStr::new("compare"), xor.as_os_str()],
            "at least two variants",
        ),
        (
            vec![OsStr::new("compare"), wc.as_os_str(), xor.as_os_str()],
            "cannot be compared",
        ),
        (
            vec![
                OsStr::new("compare"),
                xor.as_os_str(),
                xor.as_os_str(),
                OsStr::new("--reference"),
                OsStr::new("nope"),
            ],
            "--reference: no variant `nope`",
        ),
    ];
    for (args, words) in cases {
        let (out, _, stderr) = host_json(&args)?;
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        let line = stderr.lines().find(|l| l.starts_with("error: "));
        assert!(
            line.is_some_and(|l| l.contains(words)),
            "{args:?}: {words:?} not in:\n{stderr}"
        );
    }
    Ok(())
}

/// The rows of a comparison are what its ratio is made of: the ratio of the
/// two rows' medians is the ratio the verdict gives, inside its interval.
#[test]
fn a_compare_s_rows_and_ratio_tell_one_story() -> TestResult {
    let _serial = one_at_a_time();
    let (mod13, mod16) = (
        workloads().join("mod13.wasm"),
        workloads().join("mod16.wasm"),
    );
    let (out, report, stderr) = host_json([
        OsStr::new("compare"),
        mod13.as_os_str(),
        mod16.as_os_str(),
        OsStr::new("--warmup"),
        OsStr::new("50ms"),
    ])?;
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let median = |name: &str| -> Result<f64, Box<dyn Error>> {
        let variants = report["variants"].as_array().ok_or("no variants")?;
        let row = variants
            .iter()
            .find(|v| v["name"] == name)
            .ok_or_else(|| format!("no variant {name}: {report}"))?;
        median_ns(row)
    };
    let shown = median("mod16")? / median("mod13")?;
    let c = &report["comparisons"][0];
    let number = |key: &str| c[key].as_f64().ok_or_else(|| format!("no {key}: {c}"));
    let (ratio, low, high) = (number("ratio")?, number("ci95_low")?, number("ci95_high")?);
    assert!(
        (ratio / shown - 1.0).abs() < 1e-9,
        "rows {shown} against ratio {ratio}: {c}"
    );
    assert!(low <= ratio && ratio <= high, "{c}");
    Ok(())
}
