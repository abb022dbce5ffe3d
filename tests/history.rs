//! End-to-end tests of the store of kept runs and `host history`: a file
//! whose contents change from chain100 to chain200 under one name shows one
//! change at the run it changed (ratio about 2), twelve runs of xor show
//! none, wasm instruction counts (and Callgrind's, where Valgrind runs) show
//! an exact 1% change, `--fail-on-change`
//! exits with status 3, the regression gate fails on slow-downs only (and
//! its table, JSON and exit status agree), `--confirm` compares the kept
//! modules side by side, and the HTML page renders in headless Chromium.
//! Every test keeps its runs in a temporary store of its own; each run is
//! kept short (three processes of 100 ms each).

use std::error::Error;
use std::path::Path;
use std::process::Command;

use e2e::{fixture, host_binary, prepare, workloads};
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

/// Held while a test keeps its runs: the tests of this file take turns, so
/// that one's runs do not start or stop loading the cores while another's
/// series is measured (a real step in the machine, which the history would
/// rightly report).
static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Wait for this test's turn.
fn turn() -> std::sync::MutexGuard<'static, ()> {
    TURN.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `host run FILE` kept in `store`, short, with `extra` flags.
fn keep_run(store: &Path, file: &Path, extra: &[&str]) -> TestResult {
    let out = prepare(
        Command::new(host_binary())
            .arg("run")
            .arg(file)
            .args(["--time", "100ms", "--processes", "3", "--warmup", "50ms"])
            .args(["--quiet", "--store"])
            .arg(store)
            .args(extra),
    )
    .output()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "host run {}: {}\n{stderr}",
        file.display(),
        out.status
    );
    Ok(())
}

/// `host history --export-json -` of `store`: the exit code and the JSON.
fn history(store: &Path, extra: &[&str]) -> Result<(Option<i32>, Value), Box<dyn Error>> {
    let out = prepare(
        Command::new(host_binary())
            .arg("history")
            .arg("--store")
            .arg(store)
            .args(["--export-json", "-"])
            .args(extra),
    )
    .output()?;
    let stdout = String::from_utf8(out.stdout)?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let json: Value = serde_json::from_str(&stdout)
        .map_err(|e| format!("not JSON ({e}): {stdout}\nstderr: {stderr}"))?;
    assert!(!stderr.contains("panicked"), "{stderr}");
    Ok((out.status.code(), json))
}

/// The series of `json` measuring `measure` (`time`, `instructions`).
fn series<'a>(json: &'a Value, measure: &str) -> Vec<&'a Value> {
    json["series"]
        .as_array()
        .map(|all| all.iter().filter(|s| s["measure"] == measure).collect())
        .unwrap_or_default()
}

/// The change points of a series: (run it starts at, ratio).
fn changes(series: &Value) -> Vec<(u64, f64)> {
    series["change_points"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|c| {
                    (
                        c["starts_at_run"].as_u64().unwrap_or(0),
                        c["ratio"].as_f64().unwrap_or(f64::NAN),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Six runs of `w.wasm` holding `first`, then six holding `second`, kept
/// in `store` with `extra` flags.
fn six_and_six(dir: &Path, store: &Path, first: &str, second: &str, extra: &[&str]) -> TestResult {
    let w = dir.join("w.wasm");
    for (file, runs) in [(first, 6), (second, 6)] {
        std::fs::copy(workloads().join(file), &w)?;
        for _ in 0..runs {
            keep_run(store, &w, extra)?;
        }
    }
    Ok(())
}

#[test]
fn a_file_that_doubles_its_work_is_one_change_at_run_seven() -> TestResult {
    let _turn = turn();
    let dir = tempfile::tempdir()?;
    let store = dir.path().join("store");
    six_and_six(dir.path(), &store, "chain100.wasm", "chain200.wasm", &[])?;
    let (code, json) = history(&store, &[])?;
    assert_eq!(code, Some(0), "{json}");
    let time = series(&json, "time");
    assert_eq!(time.len(), 1, "one series for w.wasm: {json}");
    assert_eq!(time[0]["points"].as_array().map(Vec::len), Some(12));
    // The doubling is one change at run 7. A busy machine may move a few
    // runs by some percent, which the detector may rightly call a change
    // too; no load makes one of 25%.
    let found = changes(time[0]);
    let steps: Vec<usize> = (0..found.len())
        .filter(|&k| !(0.8..1.25).contains(&found[k].1))
        .collect();
    assert_eq!(steps.len(), 1, "{found:?}: {}", time[0]);
    let (run, ratio) = found[steps[0]];
    assert_eq!(run, 7, "{found:?}");
    assert!((1.6..2.4).contains(&ratio), "{ratio}");
    let change = &time[0]["change_points"][steps[0]];
    let (low, high) = (
        change["ratio_low"].as_f64().unwrap_or(f64::NAN),
        change["ratio_high"].as_f64().unwrap_or(f64::NAN),
    );
    assert!(low <= ratio && ratio <= high, "{change}");

    // The gate: status 3 with --fail-on-change.
    let (code, _) = history(&store, &["--fail-on-change"])?;
    assert_eq!(code, Some(3));

    // The terminal table says the same; the HTML page renders.
    let out = prepare(
        Command::new(host_binary())
            .args(["history", "w", "--store"])
            .arg(&store)
            .arg("--export-html")
            .arg(dir.path().join("history.html")),
    )
    .output()?;
    let text = String::from_utf8(out.stdout)?;
    assert!(text.contains("change at run 7"), "{text}");
    screenshot(&dir.path().join("history.html"))
}

#[test]
fn twelve_runs_of_xor_show_no_change() -> TestResult {
    let _turn = turn();
    let dir = tempfile::tempdir()?;
    let store = dir.path().join("store");
    for _ in 0..12 {
        keep_run(
            &store,
            &workloads().join("xor.wasm"),
            &["--metric", "instructions"],
        )?;
    }
    let (_, json) = history(&store, &["xor"])?;
    // The count per op does not move: no change, exactly.
    let counts = series(&json, "instructions");
    assert_eq!(counts.len(), 1, "{json}");
    assert_eq!(changes(counts[0]), vec![], "{}", counts[0]);
    // The time may move by some percent on a busy machine (the detector
    // may then rightly find a change); no load moves it by 25%.
    let time = series(&json, "time");
    assert_eq!(time.len(), 1, "{json}");
    for (_, ratio) in changes(time[0]) {
        assert!((0.8..1.25).contains(&ratio), "{}", time[0]);
    }
    Ok(())
}

/// `host run FILE` in `store` with `extra` flags, short: its one row's
/// JSON. (A rewritten kept run is read as not busy: a busy run feeds no
/// drift.)
fn run_row(store: &Path, file: &Path, extra: &[&str]) -> Result<Value, Box<dyn Error>> {
    let out = prepare(
        Command::new(host_binary())
            .arg("run")
            .arg(file)
            .args(["--time", "100ms", "--processes", "3", "--warmup", "50ms"])
            .args(["--quiet", "--export-json", "-", "--store"])
            .arg(store)
            .args(extra),
    )
    .output()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "host run: {}\n{stderr}", out.status);
    let json: Value = serde_json::from_slice(&out.stdout)?;
    Ok(json["results"][0].clone())
}

/// The kept runs of `store`, as files.
fn kept_files(store: &Path) -> Result<Vec<std::path::PathBuf>, Box<dyn Error>> {
    let mut files: Vec<_> = std::fs::read_dir(store.join("runs"))?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    files.sort();
    Ok(files)
}

/// A number of `row`: its own, or of its `ns_per_op` (the intervals).
fn number(row: &Value, key: &str) -> Result<f64, Box<dyn Error>> {
    Ok(row[key]
        .as_f64()
        .or_else(|| row["ns_per_op"][key].as_f64())
        .ok_or_else(|| format!("no {key}: {row}"))?)
}

/// Five kept runs of xor, rewritten to scatter over 0.7×–1.4× (runs on
/// other speeds): a sixth run widens its interval for them, and stops
/// within 10% past the fastest and slowest process kept or measured;
/// `--no-store` reads none of them (no earlier run: this run's interval
/// spanning its processes, as in an empty store) and keeps nothing;
/// `--forget-drift rows` forgets them.
#[test]
fn drift_is_read_only_from_the_store_and_bounded_by_what_was_measured() -> TestResult {
    let _turn = turn();
    let dir = tempfile::tempdir()?;
    let store = dir.path().join("store");
    let xor = workloads().join("xor.wasm");
    for _ in 0..5 {
        keep_run(&store, &xor, &[])?;
    }
    let files = kept_files(&store)?;
    assert_eq!(files.len(), 5);
    let mut measured = Vec::new();
    for (file, factor) in files.iter().zip([0.7, 0.85, 1.0, 1.2, 1.4]) {
        scale_rows(file, factor, |_| true)?;
        let run: Value = serde_json::from_slice(&std::fs::read(file)?)?;
        measured.extend(
            run["rows"][0]["process_medians_ns"]
                .as_array()
                .ok_or("medians")?
                .iter()
                .filter_map(Value::as_f64),
        );
    }
    let this_run = |row: &Value| -> Result<bool, Box<dyn Error>> {
        Ok(
            number(row, "ci95_low")? == number(row, "ci95_this_run_low")?
                && number(row, "ci95_high")? == number(row, "ci95_this_run_high")?,
        )
    };

    // No drift measured: a later run's interval is this run's, widened to
    // hold every process.
    let spans_processes = |row: &Value| -> Result<bool, Box<dyn Error>> {
        let medians: Vec<f64> = row["process_medians_ns"]
            .as_array()
            .ok_or("medians")?
            .iter()
            .filter_map(Value::as_f64)
            .collect();
        let (low, high) = (number(row, "ci95_low")?, number(row, "ci95_high")?);
        let this = (
            number(row, "ci95_this_run_low")?,
            number(row, "ci95_this_run_high")?,
        );
        let least = medians.iter().copied().fold(this.0, f64::min);
        let greatest = medians.iter().copied().fold(this.1, f64::max);
        Ok(low == least && high == greatest)
    };
    // --no-store: as an empty store.
    let alone = run_row(&store, &xor, &["--no-store"])?;
    let empty = run_row(&dir.path().join("empty"), &xor, &["--no-store"])?;
    for row in [&alone, &empty] {
        assert_eq!(row["earlier_runs"], 0, "{row}");
        assert_eq!(row["run_drift_pct"], Value::Null, "{row}");
        assert!(spans_processes(row)?, "{row}");
    }
    assert_eq!(kept_files(&store)?.len(), 5, "--no-store keeps nothing");

    // The sixth run reads the five.
    let sixth = run_row(&store, &xor, &[])?;
    assert_eq!(sixth["earlier_runs"], 5, "{sixth}");
    assert!(number(&sixth, "run_drift_pct")? > 10.0, "{sixth}");
    assert!(!this_run(&sixth)?, "{sixth}");
    measured.extend(
        sixth["process_medians_ns"]
            .as_array()
            .ok_or("medians")?
            .iter()
            .filter_map(Value::as_f64),
    );
    let least = measured.iter().copied().fold(f64::INFINITY, f64::min);
    let greatest = measured.iter().copied().fold(0.0, f64::max);
    let (low, high) = (number(&sixth, "ci95_low")?, number(&sixth, "ci95_high")?);
    assert!(
        low >= least / 1.1 * (1.0 - 1e-9) && high <= greatest * 1.1 * (1.0 + 1e-9),
        "[{low}, {high}] against processes {least}..{greatest}"
    );
    let notes = sixth["notes"].to_string();
    assert!(
        notes.contains("runs of this benchmark differed by")
            && notes.contains("this run's processes alone give"),
        "{notes}"
    );

    // --interval this-run shows this run's, and says where a later run may land.
    let shown = run_row(&store, &xor, &["--interval", "this-run"])?;
    assert!(this_run(&shown)?, "{shown}");
    assert!(
        shown["notes"]
            .to_string()
            .contains("a later run may land in"),
        "{shown}"
    );
    let forgot = run_row(&store, &xor, &["--forget-drift", "rows"])?;
    assert_eq!(forgot["earlier_runs"], 0, "{forgot}");
    assert!(spans_processes(&forgot)?, "{forgot}");
    Ok(())
}

#[test]
fn instruction_counts_show_an_exact_one_percent_change() -> TestResult {
    let _turn = turn();
    let dir = tempfile::tempdir()?;
    let store = dir.path().join("store");
    let metric = ["--metric", "instructions"];
    six_and_six(
        dir.path(),
        &store,
        "chain100.wasm",
        "chain101.wasm",
        &metric,
    )?;
    let (_, json) = history(&store, &[])?;
    let counts = series(&json, "instructions");
    assert_eq!(counts.len(), 1, "{json}");
    let found = changes(counts[0]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, 7);
    assert!((found[0].1 - 1.01).abs() < 0.002, "{found:?}");
    Ok(())
}

/// Whether Valgrind runs here; without it, a Callgrind test passes unless
/// `WASM_BENCH_REQUIRE_VALGRIND` is set (as CI sets it).
fn valgrind() -> Result<bool, Box<dyn Error>> {
    let found = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    match (
        found,
        std::env::var_os("WASM_BENCH_REQUIRE_VALGRIND").is_some(),
    ) {
        (false, true) => {
            Err("WASM_BENCH_REQUIRE_VALGRIND is set but valgrind is not installed".into())
        }
        (found, _) => Ok(found),
    }
}

#[test]
fn callgrind_counts_show_the_same_change() -> TestResult {
    if !valgrind()? {
        println!("skipped: valgrind not installed");
        return Ok(());
    }
    let _turn = turn();
    let dir = tempfile::tempdir()?;
    let store = dir.path().join("store");
    let metric = ["--metric", "cycles-est"];
    six_and_six(
        dir.path(),
        &store,
        "chain100.wasm",
        "chain101.wasm",
        &metric,
    )?;
    let (_, json) = history(&store, &[])?;
    let counts = series(&json, "callgrind-instructions");
    assert_eq!(counts.len(), 1, "{json}");
    let found = changes(counts[0]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, 7);
    assert!((found[0].1 - 1.01).abs() < 0.003, "{found:?}");
    Ok(())
}

/// A kept run named as a baseline is what `--baseline` compares with; a
/// store holding a link in a run's place says so and reads the rest.
#[test]
fn baselines_live_in_the_store_and_links_are_refused() -> TestResult {
    let _turn = turn();
    let dir = tempfile::tempdir()?;
    let store = dir.path().join("store");
    let light = fixture("light.wat");
    // Judged by exact counts: a loaded machine cannot fail the gate.
    let counts = ["--metric", "instructions"];
    keep_run(
        &store,
        &light,
        &[&counts[..], &["--save-baseline", "b"]].concat(),
    )?;
    keep_run(
        &store,
        &light,
        &[
            &counts[..],
            &["--baseline", "b", "--fail-on-regression", "50"],
        ]
        .concat(),
    )?;
    let named = std::fs::read_to_string(store.join("baselines").join("b"))?;
    assert!(
        store
            .join("runs")
            .join(format!("{}.json", named.trim()))
            .is_file(),
        "{named}"
    );
    std::os::unix::fs::symlink(
        "/dev/zero",
        store.join("runs").join("9999999999999-1-0.json"),
    )?;
    let out = prepare(
        Command::new(host_binary())
            .args(["history", "--store"])
            .arg(&store),
    )
    .output()?;
    let (stdout, stderr) = (
        String::from_utf8(out.stdout)?,
        String::from_utf8(out.stderr)?,
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("symbolic link"), "{stderr}");
    assert!(stdout.contains("2 kept runs"), "{stdout}");
    Ok(())
}

/// `host history --export-json - EXTRA` of `store`: the exit code, the
/// JSON and the table (on stderr, as the JSON takes stdout).
fn history_text(
    store: &Path,
    extra: &[&str],
) -> Result<(Option<i32>, Value, String), Box<dyn Error>> {
    let out = prepare(
        Command::new(host_binary())
            .arg("history")
            .arg("--store")
            .arg(store)
            .args(["--export-json", "-"])
            .args(extra),
    )
    .output()?;
    let json: Value = serde_json::from_slice(&out.stdout)?;
    Ok((out.status.code(), json, String::from_utf8(out.stderr)?))
}

/// The gate on exact counts: a speed-up (chain200 then chain100) is told
/// and passes; a slow-down after it (chain200 again) fails; at `--last 3`
/// the table, the JSON and the exit status say the same of one window.
#[test]
fn the_regression_gate_fails_on_slow_downs_only() -> TestResult {
    let _turn = turn();
    let dir = tempfile::tempdir()?;
    let store = dir.path().join("store");
    let metric = ["--metric", "instructions"];
    six_and_six(
        dir.path(),
        &store,
        "chain200.wasm",
        "chain100.wasm",
        &metric,
    )?;
    let gate = ["--fail-on-regression", "--metric", "instructions"];
    let (code, json, text) = history_text(&store, &gate)?;
    assert_eq!(code, Some(0), "{text}");
    let counts = series(&json, "instructions");
    assert_eq!(
        series(&json, "time").len(),
        0,
        "--metric keeps the counts only"
    );
    assert_eq!(counts.len(), 1, "{json}");
    assert_eq!(counts[0]["gate"]["judgement"], "faster", "{}", counts[0]);
    assert_eq!(json["gate"]["fails"], false);
    assert!(text.contains("a speed-up, told, not failed"), "{text}");
    assert!(text.contains("passes"), "{text}");
    // Any change still fails --fail-on-change.
    let (code, _) = history(&store, &["--fail-on-change", "--metric", "instructions"])?;
    assert_eq!(code, Some(3));

    // chain100, then chain200: a slow-down, in every window that holds it.
    std::fs::copy(workloads().join("chain200.wasm"), dir.path().join("w.wasm"))?;
    for _ in 0..2 {
        keep_run(&store, &dir.path().join("w.wasm"), &metric)?;
    }
    for last in ["50", "3"] {
        let (code, json, text) = history_text(&store, &[&gate[..], &["--last", last]].concat())?;
        let counts = series(&json, "instructions");
        assert_eq!(
            counts[0]["gate"]["judgement"], "slower",
            "--last {last}: {json}"
        );
        assert_eq!(code, Some(3), "--last {last}: {text}");
        assert_eq!(json["gate"]["fails"], true);
        assert!(text.contains("fails the gate"), "--last {last}: {text}");
        assert!(!text.contains("too few runs"), "--last {last}: {text}");
        let (ratio, at) = (changes(counts[0]), if last == "3" { 2 } else { 13 });
        assert_eq!(ratio.last().map(|c| c.0), Some(at), "{ratio:?}");
        assert!((ratio[ratio.len() - 1].1 - 2.0).abs() < 0.05, "{ratio:?}");
    }
    // The Markdown of the window says the same.
    let out = prepare(
        Command::new(host_binary())
            .args([
                "history",
                "--last",
                "3",
                "--export-markdown",
                "-",
                "--store",
            ])
            .arg(&store)
            .args(gate),
    )
    .output()?;
    let md = String::from_utf8(out.stdout)?;
    assert_eq!(out.status.code(), Some(3), "{md}");
    assert!(md.contains("fails the gate"), "{md}");
    // Beyond the threshold only: a doubling is not a slow-down of more
    // than 150%.
    let (code, json) = history(
        &store,
        &["--fail-on-regression", "150", "--metric", "instructions"],
    )?;
    assert_eq!(code, Some(0), "{json}");
    Ok(())
}

/// Six runs of chain100 then six of chain101 (1% more work) under one
/// name, beside an unchanged file; the files deleted, `--confirm` compares
/// the two modules the store kept, side by side: a paired verdict for the
/// changed series, none for the unchanged one.
#[test]
fn confirm_compares_the_kept_modules_side_by_side() -> TestResult {
    let _turn = turn();
    let dir = tempfile::tempdir()?;
    let store = dir.path().join("store");
    let files = dir.path().join("files");
    std::fs::create_dir(&files)?;
    std::fs::copy(workloads().join("xor.wasm"), files.join("x.wasm"))?;
    for (file, runs) in [("chain100.wasm", 6), ("chain101.wasm", 6)] {
        std::fs::copy(workloads().join(file), files.join("w.wasm"))?;
        for _ in 0..runs {
            keep_run(&store, &files, &[])?;
        }
    }
    std::fs::remove_dir_all(&files)?;
    let kept = std::fs::read_dir(store.join("modules"))?.count();
    assert_eq!(kept, 3, "chain100, chain101 and xor, each once");
    let (code, json, text) = history_text(&store, &["--confirm", "--confirm-time", "3s"])?;
    assert_eq!(code, Some(0), "{text}");
    let time = series(&json, "time");
    assert_eq!(time.len(), 2, "{json}");
    let w = time
        .iter()
        .find(|s| s["benchmark"] == "w")
        .ok_or("no series of w")?;
    let c = &w["gate"]["confirmation"];
    assert_eq!(c["source"], "store", "{c}");
    assert_eq!(c["starts_at_run"], 7, "{c}");
    assert!(c.get("error").is_none(), "{c}");
    assert_ne!(c["before"]["sha256"], c["after"]["sha256"], "{c}");
    // The verdict and ratio depend on the machine's load: their shape only.
    let verdict = c["verdict"].as_str().unwrap_or("");
    assert!(
        ["slower", "same", "unsure", "faster"].contains(&verdict),
        "{c}"
    );
    let (ratio, low, high) = (
        c["ratio"].as_f64().unwrap_or(f64::NAN),
        c["ci95_low"].as_f64().unwrap_or(f64::NAN),
        c["ci95_high"].as_f64().unwrap_or(f64::NAN),
    );
    assert!(
        low <= ratio && ratio <= high && ratio > 0.5 && ratio < 2.0,
        "{c}"
    );
    println!("confirmation of chain101 against chain100: {c}");
    assert!(text.contains("side by side"), "{text}");
    let x = time
        .iter()
        .find(|s| s["benchmark"] == "x")
        .ok_or("no series of x")?;
    assert!(x["gate"].get("confirmation").is_none(), "{x}");
    Ok(())
}

/// Scale every kept row of `file` that `which` names (its median, its
/// interval and its processes') by `factor`, and call the machine quiet.
fn scale_rows(file: &Path, factor: f64, which: impl Fn(&str) -> bool) -> TestResult {
    let mut run: Value = serde_json::from_slice(&std::fs::read(file)?)?;
    for row in run["rows"].as_array_mut().ok_or("rows")? {
        if !row["benchmark"].as_str().is_some_and(&which) {
            continue;
        }
        for key in ["median_ns", "ci95_low", "ci95_high"] {
            row[key] = (row[key].as_f64().ok_or("a median")? * factor).into();
        }
        let medians: Vec<f64> = row["process_medians_ns"]
            .as_array()
            .ok_or("process medians")?
            .iter()
            .filter_map(Value::as_f64)
            .map(|m| m * factor)
            .collect();
        row["process_medians_ns"] = medians.into();
    }
    run["busy_machine"] = false.into();
    std::fs::write(file, serde_json::to_vec(&run)?)?;
    Ok(())
}

/// Rewrite the rows of every kept run in `files` to the first run's
/// numbers, each run's scaled by a jitter of 0.2% that repeats every three
/// runs (no step): a series whose only steps are those a test writes,
/// whatever the machine did while the runs were measured.
fn level_rows(files: &[std::path::PathBuf]) -> TestResult {
    const KEYS: [&str; 4] = ["median_ns", "ci95_low", "ci95_high", "process_medians_ns"];
    let [first, ..] = files else {
        return Err("no kept runs".into());
    };
    let base: Value = serde_json::from_slice(&std::fs::read(first)?)?;
    let base = base["rows"].as_array().ok_or("rows")?;
    for (i, file) in files.iter().enumerate() {
        let mut run: Value = serde_json::from_slice(&std::fs::read(file)?)?;
        for row in run["rows"].as_array_mut().ok_or("rows")? {
            let like = base
                .iter()
                .find(|b| b["benchmark"] == row["benchmark"])
                .ok_or("a benchmark the first run lacks")?;
            for key in KEYS {
                row[key] = like[key].clone();
            }
        }
        std::fs::write(file, serde_json::to_vec(&run)?)?;
        let jitter = 1.0 + 0.002 * ((i % 3) as f64 - 1.0);
        scale_rows(file, jitter, |_| true)?;
    }
    Ok(())
}

/// Twelve kept runs of xor with the control, leveled (so that the machine's
/// own drift while they ran is not in the series), the last six rewritten
/// 1.3× slower (a machine that moved): the history reads xor's step as the
/// machine's and the gate passes; xor 1.69× where the control moved 1.3×
/// is a slow-down beyond the machine's own, and fails.
#[test]
fn a_step_the_control_shares_is_the_machine_moving() -> TestResult {
    const CONTROL: &str = "wasm-bench-control";
    let _turn = turn();
    let dir = tempfile::tempdir()?;
    let store = dir.path().join("store");
    for _ in 0..12 {
        keep_run(&store, &workloads().join("xor.wasm"), &["--control"])?;
    }
    let files = kept_files(&store)?;
    level_rows(&files)?;
    for file in &files[6..] {
        scale_rows(file, 1.3, |_| true)?;
    }
    let gate = ["--fail-on-regression", "2"];
    let (code, json, text) = history_text(&store, &gate)?;
    let timed = series(&json, "time");
    let [xor, control] = timed[..] else {
        return Err(format!("not xor and the control: {json}").into());
    };
    assert_eq!(control["benchmark"], CONTROL, "{json}");
    assert_eq!(xor["gate"]["judgement"], "machine-moved", "{xor}");
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("the machine moved"), "{text}");
    assert!(text.contains("never fails the gate"), "{text}");
    for file in &files[6..] {
        scale_rows(file, 1.3, |b| b != CONTROL)?;
    }
    let (code, json, text) = history_text(&store, &gate)?;
    let xor = series(&json, "time")[0];
    assert_eq!(xor["gate"]["judgement"], "slower", "{xor}");
    let relative = xor["gate"]["machine"]["relative"]["ratio"]
        .as_f64()
        .ok_or("no ratio against the control")?;
    assert!((relative - 1.3).abs() < 0.05, "{xor}");
    assert_eq!(code, Some(3), "{text}");
    Ok(())
}

/// Render `page` in headless Chromium when `/usr/bin/chromium` exists and
/// check the screenshot is a real image (kept in `WASM_BENCH_KEEP_HTML` when
/// set).
fn screenshot(page: &Path) -> TestResult {
    let chromium = Path::new("/usr/bin/chromium");
    if !chromium.exists() {
        println!("skipped: /usr/bin/chromium not found; the page was not rendered");
        return Ok(());
    }
    let html = std::fs::read_to_string(page)?;
    assert!(html.contains("<svg"), "no plot in the page");
    assert!(html.contains("run 7"), "no change point in the page");
    let dir = page.parent().ok_or("no folder")?;
    let shot = match std::env::var_os("WASM_BENCH_KEEP_HTML") {
        Some(keep) => {
            std::fs::create_dir_all(&keep)?;
            std::fs::copy(page, Path::new(&keep).join("history.html"))?;
            Path::new(&keep).join("history.png")
        }
        None => dir.join("history.png"),
    };
    let status = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1000,1400")
        .arg(format!("file://{}", page.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()?;
    assert!(status.success(), "chromium: {status}");
    let png = std::fs::read(&shot)?;
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert!(png.len() > 30_000, "{} bytes: a blank page?", png.len());
    Ok(())
}
