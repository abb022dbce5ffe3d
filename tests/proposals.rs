//! End-to-end tests of the Wasm proposals this build cannot run (issue
//! #30): `-W stack-switching` and `-W threads` are usage errors (exit 2,
//! one line naming the proposal), and a guest that uses either without `-W`
//! fails its own row in one line, without a panic.

use std::error::Error;
use std::time::Duration;

use e2e::{fixture, run_host_within};
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

const BOUND: Duration = Duration::from_secs(180);

fn proposal(name: &str) -> String {
    fixture(&format!("proposals/{name}")).display().to_string()
}

#[test]
fn proposals_the_build_lacks_are_usage_errors() -> TestResult {
    let dir = tempfile::tempdir()?;
    let add = fixture("add.wat").display().to_string();
    for (flag, needle) in [
        (
            "stack-switching",
            "lacks wasmtime's `stack-switching` feature",
        ),
        ("threads=y", "does not instantiate shared memories"),
    ] {
        let finished = run_host_within(&["run", &add, "-W", flag], dir.path(), BOUND)?;
        assert_eq!(finished.status.code(), Some(2), "{finished:?}");
        assert!(finished.stdout.is_empty(), "{finished:?}");
        let lines: Vec<&str> = finished.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{finished:?}");
        assert!(lines[0].starts_with("error: -W "), "{finished:?}");
        assert!(lines[0].contains(needle), "{finished:?}");
    }
    Ok(())
}

#[test]
fn guests_using_them_fail_their_own_row_in_one_line() -> TestResult {
    let dir = tempfile::tempdir()?;
    let shared = proposal("shared_memory.wat");
    let switching = proposal("stack_switching.wat");
    let args = [
        "run",
        &shared,
        &switching,
        "--samples",
        "5",
        "--export-json",
        "-",
    ];
    let finished = run_host_within(&args, dir.path(), BOUND)?;
    assert_eq!(finished.status.code(), Some(1), "{finished:?}");
    assert!(!finished.stderr.contains("panicked"), "{finished:?}");
    let report: Value = serde_json::from_str(&finished.stdout)?;
    let results = report["results"].as_array().ok_or("no results")?;
    assert_eq!(results.len(), 2, "{report}");
    for (row, needle) in results.iter().zip(["shared memory", "stack switching"]) {
        let error = row["error"].as_str().ok_or("the row was measured")?;
        assert!(error.contains(needle), "{error}");
        assert!(
            !error.contains("SIGABRT") && !error.contains('\n'),
            "{error}"
        );
    }
    Ok(())
}
