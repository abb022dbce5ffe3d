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
                && r["at_clock_resolution"] != true
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

/// Two shards' exports whose machines differ (the second's CPU model
/// edited): the merged report's terminal and HTML headers show each
/// export's machine, core, seed and calibration, and say they differ.
#[test]
fn a_merge_of_two_machines_shows_both_in_its_headers() -> TestResult {
    let dir = tempfile::tempdir()?;
    let files: Vec<String> = ["xor.wasm", "mod16.wasm"]
        .iter()
        .map(|f| workloads().join(f).display().to_string())
        .collect();
    for k in 1..=2 {
        let shard = format!("{k}/2");
        let out = format!("shard{k}.json");
        let mut args = vec!["run", &files[0], &files[1], "--shard", &shard];
        args.extend_from_slice(&["--seed", if k == 1 { "7" } else { "9" }]);
        args.extend_from_slice(&["--export-json", &out]);
        args.extend_from_slice(&FAST);
        let finished = run_host_within(&args, dir.path(), Duration::from_secs(180))?;
        assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    }
    let path = dir.path().join("shard2.json");
    let mut second: Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
    second["environment"]["cpu_model"] = Value::from("Forged CPU 9000 @ 1.00GHz");
    std::fs::write(&path, second.to_string())?;
    let first: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("shard1.json"))?)?;
    let cpu = first["environment"]["cpu_model"]
        .as_str()
        .unwrap_or("unknown CPU")
        .to_string();

    let args = [
        "report",
        "shard1.json",
        "shard2.json",
        "--export-html",
        "merged.html",
    ];
    let finished = run_host_within(&args, dir.path(), Duration::from_secs(180))?;
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    let html = std::fs::read_to_string(dir.path().join("merged.html"))?;
    let header = html.split("</header>").next().unwrap_or("");
    let terminal = finished.stdout.split("\nbenchmark ").next().unwrap_or("");
    for shown in [terminal, header] {
        // The core each shard took depends on the load: it may differ too.
        assert!(
            shown.contains("merged from 2 exports: they differ in machine, ")
                && shown.contains("seed"),
            "{shown}"
        );
        assert!(shown.contains("calibration"), "{shown}");
        for (export, cpu, seed) in [
            ("shard1.json (1 row): ", cpu.as_str(), "seed 7 "),
            (
                "shard2.json (1 row): Forged CPU 9000 @ 1.00GHz",
                "",
                "seed 9 ",
            ),
        ] {
            let line = shown
                .lines()
                .find(|l| l.contains(export))
                .ok_or_else(|| format!("no line of {export}:\n{shown}"))?;
            assert!(line.contains(cpu) && line.contains(seed), "{line}");
            assert!(line.contains("empty-guest call"), "{line}");
        }
    }
    // One machine's line is not shown as if it were the report's.
    assert!(!terminal.contains(&format!("· {cpu} ·")), "{terminal}");
    Ok(())
}
