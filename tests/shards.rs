//! End-to-end test of sharded runs: `host run workloads/ --shard K/3` for
//! K = 1, 2, 3 measures every row exactly once, and `host report` merges
//! the three exports into a report of the same rows as a single run.

use std::collections::BTreeSet;
use std::error::Error;
use std::path::Path;
use std::time::Duration;

use e2e::{run_host_within, validate_export, workloads};
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

/// Short settings: the rows matter here, not their precision.
const FAST: [&str; 6] = ["--samples", "5", "--warmup", "10ms", "--processes", "1"];

/// `host run workloads/ EXTRA... --export-json OUT` in `dir`: the export.
fn run(dir: &Path, extra: &[&str], out: &str) -> Result<Value, Box<dyn Error>> {
    let folder = workloads().display().to_string();
    let mut args = vec!["run", folder.as_str(), "--export-json", out];
    args.extend_from_slice(&FAST);
    args.extend_from_slice(extra);
    let finished = run_host_within(&args, dir, Duration::from_secs(600))?;
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    Ok(serde_json::from_str(&std::fs::read_to_string(
        dir.join(out),
    )?)?)
}

fn names(report: &Value) -> Result<Vec<String>, Box<dyn Error>> {
    Ok(report["results"]
        .as_array()
        .ok_or("no results")?
        .iter()
        .filter_map(|r| r["name"].as_str().map(str::to_string))
        .collect())
}

/// The rows of `report` with measurable work: measured, a median above
/// zero, neither "no measurable work" nor indistinguishable from the empty
/// guest.
fn measurable(report: &Value) -> Result<usize, Box<dyn Error>> {
    Ok(report["results"]
        .as_array()
        .ok_or("no results")?
        .iter()
        .filter(|r| {
            r["error"].is_null()
                && r["ns_per_op"]["median"].as_f64().is_some_and(|m| m > 0.0)
                && r["no_measurable_work"] != true
                && r["indistinguishable_from_empty"] != true
        })
        .count())
}

#[test]
fn three_shards_cover_every_row_once_and_merge_into_one_run() -> TestResult {
    let dir = tempfile::tempdir()?;
    let whole_report = run(dir.path(), &[], "whole.json")?;
    let whole: BTreeSet<String> = names(&whole_report)?.into_iter().collect();
    let mut sharded = Vec::new();
    for k in 1..=3 {
        let out = format!("shard{k}.json");
        let report = run(dir.path(), &["--shard", &format!("{k}/3")], &out)?;
        assert_eq!(report["shards"][0]["index"], k, "{}", report["shards"]);
        sharded.extend(names(&report)?);
    }
    let unique: BTreeSet<String> = sharded.iter().cloned().collect();
    assert_eq!(
        unique.len(),
        sharded.len(),
        "a row in two shards: {sharded:?}"
    );
    assert_eq!(unique, whole);

    let args = [
        "report",
        "shard1.json",
        "shard2.json",
        "shard3.json",
        "--export-json",
        "merged.json",
    ];
    let finished = run_host_within(&args, dir.path(), Duration::from_secs(180))?;
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    let merged: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("merged.json"))?)?;
    validate_export(&merged)?;
    let merged_names: Vec<String> = names(&merged)?;
    assert_eq!(merged_names.len(), whole.len());
    assert_eq!(merged_names.into_iter().collect::<BTreeSet<_>>(), whole);
    assert_eq!(merged["shards"].as_array().map(Vec::len), Some(3));
    assert_eq!(merged["suite"]["rows"], whole.len());
    // One rule for the rows in the geometric mean (no row of no measurable
    // work, whatever the sign of its noise), in a run and in a merge alike:
    // the rows it keeps, counted from the rows' own flags. (Whether an empty
    // guest can be told apart from the empty guest is itself measured, so the
    // whole run and the shards may judge it differently.)
    for report in [&merged, &whole_report] {
        assert_eq!(
            report["suite"]["timed_rows"],
            measurable(report)?,
            "{}",
            report["suite"]
        );
    }
    assert_eq!(merged["merged_from"].as_array().map(Vec::len), Some(3));

    // The same shard twice is refused: its rows would count twice.
    let twice = ["report", "shard1.json", "shard1.json"];
    let finished = run_host_within(&twice, dir.path(), Duration::from_secs(180))?;
    assert_eq!(finished.status.code(), Some(2), "{}", finished.stderr);
    assert!(
        finished.stderr.contains("is in both"),
        "{}",
        finished.stderr
    );
    Ok(())
}
