//! End-to-end tests of `host compare` on a suite (issue #29): a folder of
//! benchmark folders compared across two engines, and two folders paired
//! by benchmark name. No test asserts a time; one asserts the direction of
//! a verdict Winch against Cranelift gives by a wide margin (threefold on
//! `mod13`).

use std::error::Error;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use e2e::{Finished, fixture, run_host_within, workloads, workspace_root};
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

/// Far above what the suites below take (a few seconds per benchmark).
const BOUND: Duration = Duration::from_secs(180);

/// Flags that keep a benchmark's comparison short.
const SHORT: [&str; 6] = ["--time", "2s", "--warmup", "20ms", "--timeout", "10s"];

/// Copy bundled workload `name` to `to`, making its folder.
fn copy_workload(name: &str, to: &Path) -> TestResult {
    std::fs::create_dir_all(to.parent().ok_or("no folder")?)?;
    std::fs::copy(workloads().join(name), to)?;
    Ok(())
}

/// `host compare ARGS` with the short flags, in `dir`.
fn compare(args: &[&str], dir: &Path) -> Result<Finished, Box<dyn Error>> {
    let mut all = vec!["compare"];
    all.extend_from_slice(args);
    all.extend_from_slice(&SHORT);
    run_host_within(&all, dir, BOUND)
}

/// Check a suite's JSON export against `host/schema/suite.schema.json`.
fn validate_suite(export: &Value) -> Result<(), String> {
    static SCHEMA: OnceLock<Result<(boon::Schemas, boon::SchemaIndex), String>> = OnceLock::new();
    let compiled = SCHEMA.get_or_init(|| {
        let path = workspace_root().join("host/schema/suite.schema.json");
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let schema: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        let url = "file:///wasm-bench/suite.schema.json";
        let mut schemas = boon::Schemas::new();
        let mut compiler = boon::Compiler::new();
        compiler
            .add_resource(url, schema)
            .map_err(|e| format!("{e:#}"))?;
        let index = compiler
            .compile(url, &mut schemas)
            .map_err(|e| format!("{e:#}"))?;
        Ok((schemas, index))
    });
    let (schemas, index) = compiled.as_ref().map_err(Clone::clone)?;
    schemas
        .validate(export, *index)
        .map_err(|e| format!("the export does not follow host/schema: {e}"))
}

/// The benchmark of `report` named `name`.
fn benchmark<'a>(report: &'a Value, name: &str) -> Result<&'a Value, Box<dyn Error>> {
    report["benchmarks"]
        .as_array()
        .ok_or("no benchmarks")?
        .iter()
        .find(|b| b["name"] == name)
        .ok_or_else(|| format!("no benchmark {name}: {report}").into())
}

#[test]
fn a_folder_of_benchmark_folders_is_compared_across_two_engines() -> TestResult {
    let dir = tempfile::tempdir()?;
    let suite = dir.path().join("suite");
    let judged = ["xor", "mod13", "chain100", "search-branchless"];
    for name in judged {
        copy_workload(
            &format!("{name}.wasm"),
            &suite.join(name).join("benchmark.wasm"),
        )?;
    }
    // An empty guest: compared, but its ratio is noise, so not judged.
    copy_workload("empty.wasm", &suite.join("empty").join("benchmark.wasm"))?;
    // A benchmark that traps: an error line, and the others still judged.
    std::fs::create_dir_all(suite.join("trap"))?;
    std::fs::copy(fixture("trap_run.wat"), suite.join("trap/benchmark.wat"))?;
    let (json, html) = (dir.path().join("suite.json"), dir.path().join("suite.html"));
    let (json_arg, html_arg) = (json.display().to_string(), html.display().to_string());
    let finished = compare(
        &[
            "--engine",
            "cranelift",
            "--engine",
            "winch",
            &suite.display().to_string(),
            "--export-json",
            &json_arg,
            "--export-html",
            &html_arg,
        ],
        dir.path(),
    )?;
    let table = &finished.stdout;
    assert_eq!(
        finished.status.code(),
        Some(1),
        "a benchmark failed: {finished:?}"
    );
    // One verdict line per benchmark that ran, the error after them.
    let verdicts = ["faster", "slower", "same", "unsure"];
    for name in judged {
        let line = table
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .ok_or_else(|| format!("no line for {name}:\n{table}"))?;
        assert!(verdicts.iter().any(|v| line.contains(v)), "{line}");
    }
    let lines: Vec<&str> = table.lines().collect();
    let error = lines
        .iter()
        .position(|l| l.starts_with("trap ") && l.contains("error:"))
        .ok_or_else(|| format!("no error line:\n{table}"))?;
    let last_verdict = lines
        .iter()
        .rposition(|l| verdicts.iter().any(|v| l.contains(&format!(" {v} "))))
        .ok_or("no verdict")?;
    assert!(error > last_verdict, "errors follow the verdicts:\n{table}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("empty ") && l.contains("not judged")),
        "{table}"
    );
    let summary = table
        .lines()
        .find(|l| l.contains("geometric mean"))
        .ok_or_else(|| format!("no summary:\n{table}"))?;
    assert!(
        summary.contains("1 failed")
            && summary.contains("1 not judged")
            && summary.contains('[')
            && summary.contains("(95%"),
        "{summary}"
    );

    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json)?)?;
    validate_suite(&report)?;
    assert_eq!(report["sides"], serde_json::json!(["cranelift", "winch"]));
    assert_eq!(report["reference"], "cranelift");
    assert_eq!(report["benchmarks"].as_array().map(Vec::len), Some(6));
    let empty = benchmark(&report, "empty")?;
    assert!(
        empty["not_judged"].is_string() && empty["report"].is_object(),
        "{empty}"
    );
    let trap = benchmark(&report, "trap")?;
    assert!(
        trap["error"].is_string() && trap.get("report").is_none(),
        "{trap}"
    );
    for name in judged {
        let comparisons = &benchmark(&report, name)?["report"]["comparisons"];
        assert_eq!(
            comparisons.as_array().map(Vec::len),
            Some(1),
            "{comparisons}"
        );
    }
    // Winch's code for mod13 is about three times slower than Cranelift's.
    let mod13 = &benchmark(&report, "mod13")?["report"]["comparisons"][0];
    assert_eq!(mod13["verdict"], "slower", "{mod13}");
    let summary = &report["summary"];
    let counted: u64 = ["faster", "slower", "same", "unsure"]
        .iter()
        .filter_map(|k| summary[k].as_u64())
        .sum();
    assert_eq!(
        (
            counted,
            summary["failed"].as_u64(),
            summary["not_judged"].as_u64()
        ),
        (4, Some(1), Some(1)),
        "{summary}"
    );
    let mean = &summary["geometric_means"][0];
    assert_eq!(
        (&mean["side"], &mean["benchmarks"]),
        (&"winch".into(), &4.into())
    );
    let [ratio, low, high] = ["ratio", "ci95_low", "ci95_high"].map(|k| mean[k].as_f64());
    let (ratio, low, high) = (
        ratio.ok_or("ratio")?,
        low.ok_or("low")?,
        high.ok_or("high")?,
    );
    assert!(low <= ratio && ratio <= high && low > 0.0, "{mean}");

    let page = std::fs::read_to_string(&html)?;
    let (verdicts, runtimes) = page
        .split_once("<h2>Runtimes</h2>")
        .ok_or("the suite across engines ends with the runtime view")?;
    assert_eq!(
        verdicts.matches("<g class=\"benchmark\">").count(),
        4,
        "a row per benchmark judged"
    );
    assert_eq!(verdicts.matches("<g class=\"geomean\">").count(), 1);
    assert!(verdicts.contains(">trap<") && verdicts.contains("error:"));
    // The view: winch's ratio per benchmark judged, a mean per engine.
    assert_eq!(runtimes.matches("<g class=\"benchmark\">").count(), 4);
    assert_eq!(runtimes.matches("<g class=\"geomean\">").count(), 2);
    assert!(
        table.contains("runtimes: ") && table.contains("fastest on"),
        "{table}"
    );
    assert_eq!(report["runtimes"]["paired"], true, "{}", report["runtimes"]);
    Ok(())
}

/// Folders `old` and `new` under `dir`, each holding the bundled `xor`
/// and `mod16`.
fn alike_folders(dir: &Path) -> Result<(PathBuf, PathBuf), Box<dyn Error>> {
    let (old, new) = (dir.join("old"), dir.join("new"));
    for side in [&old, &new] {
        copy_workload("xor.wasm", &side.join("xor.wasm"))?;
        copy_workload("mod16.wasm", &side.join("mod16.wasm"))?;
    }
    Ok((old, new))
}

#[test]
fn two_folders_pair_their_files_by_name() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (old, new) = alike_folders(dir.path())?;
    copy_workload("chain100.wasm", &old.join("chain100.wasm"))?;
    copy_workload("chain101.wasm", &new.join("chain101.wasm"))?;
    let finished = compare(&["old", "new/", "--export-json", "-"], dir.path())?;
    assert_eq!(finished.status.code(), Some(0), "{finished:?}");
    // The JSON goes to stdout, so the table goes to stderr.
    let table = &finished.stderr;
    let report: Value = serde_json::from_str(&finished.stdout)?;
    validate_suite(&report)?;
    assert_eq!(report["sides"], serde_json::json!(["old", "new"]));
    let names: Vec<&str> = report["benchmarks"]
        .as_array()
        .ok_or("no benchmarks")?
        .iter()
        .filter_map(|b| b["name"].as_str())
        .collect();
    assert_eq!(names, ["mod16", "xor"]);
    let xor = benchmark(&report, "xor")?;
    assert_eq!(xor["paths"].as_array().map(Vec::len), Some(2), "{xor}");
    assert_eq!(
        xor["report"]["comparisons"].as_array().map(Vec::len),
        Some(1)
    );
    let unpaired = report["unpaired"].as_array().ok_or("no unpaired")?;
    assert_eq!(unpaired.len(), 2, "{unpaired:?}");
    assert_eq!(unpaired[0]["name"], "chain100");
    assert_eq!(unpaired[0]["found_in"], serde_json::json!(["old"]));
    assert_eq!(report["summary"]["unpaired"], 2);
    for name in ["chain100", "chain101"] {
        assert!(
            table
                .lines()
                .any(|l| l.starts_with(name) && l.contains("not compared")),
            "{name}:\n{table}"
        );
    }
    Ok(())
}

#[test]
fn a_suite_is_compared_against_its_first_side() -> TestResult {
    let dir = tempfile::tempdir()?;
    let xor = workloads().join("xor.wasm").display().to_string();
    let mod13 = workloads().join("mod13.wasm").display().to_string();
    let finished = compare(
        &[
            &xor,
            &mod13,
            "--engine",
            "cranelift",
            "--engine",
            "winch",
            "--reference",
            "xor",
        ],
        dir.path(),
    )?;
    assert_eq!(finished.status.code(), Some(2), "{finished:?}");
    assert!(
        finished.stderr.contains("--reference"),
        "{}",
        finished.stderr
    );
    Ok(())
}

/// Copy bundled program `name` (its `.wasm`, input and expected output) into
/// the folder `to`.
fn copy_program(name: &str, to: &Path) -> TestResult {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(workloads())? {
        let path = entry?.path();
        let file = path.file_name().and_then(|f| f.to_str()).unwrap_or("");
        if file.split('.').next() == Some(name) {
            std::fs::copy(&path, to.join(file))?;
        }
    }
    Ok(())
}

/// Four program folders across two engines (a program's benchmark is named
/// after its file): a verdict each, the suite's
/// geometric mean with its interval, in the table and the exports; a fifth
/// whose output check fails is an error line, not a verdict.
#[test]
fn a_folder_of_program_folders_is_compared_across_two_engines() -> TestResult {
    let dir = tempfile::tempdir()?;
    let suite = dir.path().join("programs");
    let judged = ["fib", "loop", "wc", "steps100"];
    for name in judged {
        copy_program(name, &suite.join(name))?;
    }
    copy_program("steps101", &suite.join("steps101"))?;
    std::fs::write(
        suite.join("steps101/steps101.stdout.expected"),
        "steps(1010000) = 0000000000000000\n",
    )?;
    let (json, html) = (dir.path().join("p.json"), dir.path().join("p.html"));
    let (json_arg, html_arg) = (json.display().to_string(), html.display().to_string());
    let finished = compare(
        &[
            "--engine",
            "cranelift",
            "--engine",
            "winch",
            &suite.display().to_string(),
            "--export-json",
            &json_arg,
            "--export-html",
            &html_arg,
        ],
        dir.path(),
    )?;
    assert_eq!(finished.status.code(), Some(1), "{finished:?}");
    let table = &finished.stdout;
    for name in judged {
        let line = table
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .ok_or_else(|| format!("no line for {name}:\n{table}"))?;
        assert!(
            ["faster", "slower", "same", "unsure"]
                .iter()
                .any(|v| line.contains(v)),
            "{line}"
        );
    }
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("steps101") && l.contains("error:") && l.contains("stdout")),
        "{table}"
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json)?)?;
    validate_suite(&report)?;
    for name in judged {
        let b = benchmark(&report, name)?;
        let phases = &b["report"]["comparisons"][0]["phases"];
        assert!(
            phases
                .as_array()
                .is_some_and(|p| p.iter().any(|p| p["phase"] == "execute")),
            "{b}"
        );
    }
    let mean = &report["summary"]["geometric_means"][0];
    assert_eq!(mean["side"], "winch", "{mean}");
    assert_eq!(mean["benchmarks"], 4, "{mean}");
    let (low, value, high) = (
        mean["ci95_low"].as_f64().ok_or("no low")?,
        mean["ratio"].as_f64().ok_or("no ratio")?,
        mean["ci95_high"].as_f64().ok_or("no high")?,
    );
    assert!(low <= value && value <= high && low > 0.0, "{mean}");
    assert!(
        table.lines().any(|l| l.contains("geometric mean")),
        "{table}"
    );
    let html = std::fs::read_to_string(&html)?;
    for name in judged {
        assert!(html.contains(name), "{name} not in the chart");
    }
    Ok(())
}

/// A module that declares a GC array type (the `gc` proposal), with a
/// plain `run`: an engine without GC cannot compile it.
const GC_WAT: &str = r#"(module
  (type $bytes (array (mut i8)))
  (func (export "run") (param i64 i64) (result i64) (local.get 1)))
"#;

/// A folder of a GC module (which winch cannot compile) and `xor`, and
/// where its JSON export goes: the folder, the suite, the export.
fn gc_suite() -> Result<(tempfile::TempDir, PathBuf, PathBuf), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let suite = dir.path().join("suite");
    std::fs::create_dir_all(&suite)?;
    std::fs::write(suite.join("gc.wat"), GC_WAT)?;
    copy_workload("xor.wasm", &suite.join("xor.wasm"))?;
    let json = dir.path().join("s.json");
    Ok((dir, suite, json))
}

/// A benchmark one engine cannot compile (GC under winch) is reported as
/// unsupported, not as an error: the suite succeeds, and fails only with
/// `--fail-on-unsupported`. The suite's time and its `--suite-time` are in
/// the JSON.
#[test]
fn a_benchmark_an_engine_cannot_run_is_unsupported_not_failed() -> TestResult {
    let (dir, suite, json) = gc_suite()?;
    let args = [
        "--engine",
        "cranelift",
        "--engine",
        "winch",
        &suite.display().to_string(),
        "--suite-time",
        "20s",
        "--export-json",
        &json.display().to_string(),
    ];
    let finished = compare(&args, dir.path())?;
    assert_eq!(finished.status.code(), Some(0), "{finished:?}");
    assert!(
        finished
            .stdout
            .lines()
            .any(|l| l.starts_with("gc ") && l.contains("unsupported: ") && l.contains("gc")),
        "{}",
        finished.stdout
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json)?)?;
    validate_suite(&report)?;
    let gc = benchmark(&report, "gc")?;
    assert!(gc.get("error").is_none(), "{gc}");
    assert!(gc["unsupported"].is_string(), "{gc}");
    assert_eq!(report["summary"]["unsupported"], 1, "{report}");
    assert_eq!(report["summary"]["failed"], 0, "{report}");
    assert_eq!(report["suite_time_ms"], 20000.0, "{report}");
    assert!(report["elapsed_ms"].as_f64().is_some_and(|t| t > 0.0));
    let mut strict = args.to_vec();
    strict.push("--fail-on-unsupported");
    let finished = compare(&strict, dir.path())?;
    assert_eq!(finished.status.code(), Some(1), "{finished:?}");
    Ok(())
}

/// Across three engines, a side whose engine cannot run a benchmark (GC
/// under winch) is left out of that benchmark and the other two are
/// compared: the benchmark has its report, the side is named with the
/// engine's words, the suite succeeds, and fails only with
/// `--fail-on-unsupported`.
#[test]
fn a_side_that_cannot_run_a_benchmark_is_left_out_of_it() -> TestResult {
    let (dir, suite, json) = gc_suite()?;
    let mut args = Vec::new();
    for engine in ["cranelift", "winch", "pulley"] {
        args.extend(["--engine", engine]);
    }
    let (suite, json_path) = (suite.display().to_string(), json.display().to_string());
    args.extend([suite.as_str(), "--export-json", json_path.as_str()]);
    let finished = compare(&args, dir.path())?;
    assert_eq!(finished.status.code(), Some(0), "{finished:?}");
    let said = |l: &&str| l.starts_with("gc ") && l.contains("winch  unsupported, left out: ");
    assert!(
        finished.stdout.lines().any(|l| said(&l)),
        "{}",
        finished.stdout
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json)?)?;
    validate_suite(&report)?;
    let gc = benchmark(&report, "gc")?;
    assert!(
        gc.get("unsupported").is_none() && gc.get("error").is_none(),
        "{gc}"
    );
    assert_eq!(gc["left_out"][0]["side"], "winch", "{gc}");
    assert_eq!(gc["left_out"][0]["unsupported"], true, "{gc}");
    let why = gc["left_out"][0]["why"].as_str().unwrap_or_default();
    assert!(why.contains("under winch") && why.contains("gc"), "{why}");
    let variants = gc["report"]["variants"].as_array().map(Vec::len);
    assert_eq!(variants, Some(2), "{gc}");
    assert_eq!(report["summary"]["sides_unsupported"], 1, "{report}");
    assert_eq!(report["summary"]["unsupported"], 0, "{report}");
    args.push("--fail-on-unsupported");
    let finished = compare(&args, dir.path())?;
    assert_eq!(finished.status.code(), Some(1), "{finished:?}");
    Ok(())
}

/// `--suite-time` where the paths make one comparison is a usage error.
#[test]
fn suite_time_needs_a_suite() -> TestResult {
    let dir = tempfile::tempdir()?;
    let xor = workloads().join("xor.wasm").display().to_string();
    let finished = compare(&[&xor, &xor, "--suite-time", "10s"], dir.path())?;
    assert_eq!(finished.status.code(), Some(2), "{finished:?}");
    assert!(
        finished.stderr.contains("--suite-time"),
        "{}",
        finished.stderr
    );
    Ok(())
}

/// A program that spins `loops` times in `_start` (about a second for
/// 2·10⁹ on the machines here), its result stored in its memory.
fn spinning_program(loops: u64) -> String {
    format!(
        r#"(module
  (memory (export "memory") 1)
  (func (export "_start") (local $i i64) (local $acc i64)
    (loop $spin
      (local.set $acc (i64.add (local.get $acc) (i64.mul (local.get $i) (local.get $i))))
      (local.set $i (i64.add (local.get $i) (i64.const 1)))
      (br_if $spin (i64.lt_u (local.get $i) (i64.const {loops}))))
    (i64.store (i32.const 0) (local.get $acc))))
"#
    )
}

/// A worker told the time its comparison has left stops its rounds on
/// time: two long programs under `--time 2s` take fewer rounds than the
/// six a worker takes of programs (a round of two iterations outlasts the
/// time left after the warm-up), where without the budget the first
/// worker took all six whatever the cap.
#[test]
fn a_long_program_stops_its_rounds_at_the_time_it_was_given() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (a, b) = (dir.path().join("a.wat"), dir.path().join("b.wat"));
    std::fs::write(&a, spinning_program(2_000_000_000))?;
    std::fs::write(&b, spinning_program(2_000_000_000))?;
    let finished = compare(
        &[
            &a.display().to_string(),
            &b.display().to_string(),
            "--export-json",
            "-",
            "--quiet",
        ],
        dir.path(),
    )?;
    assert_eq!(finished.status.code(), Some(0), "{finished:?}");
    let report: Value = serde_json::from_str(&finished.stdout)?;
    let rounds = report["rounds"].as_u64().ok_or("no rounds")?;
    assert!((2..6).contains(&rounds), "{rounds} rounds");
    Ok(())
}

/// Each suite comparison is kept in the store, and the next run of the same
/// suite reads its geometric mean against the earlier ones: how many, and
/// with five (of a machine that was not busy) where a later run's may land,
/// wider than this run's interval; another suite does not count, and
/// `--no-store` neither keeps nor reads.
#[test]
fn a_suite_is_read_against_its_earlier_runs() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (old, new) = alike_folders(dir.path())?;
    let store = dir.path().join("store").display().to_string();
    let mean_of = |extra: &[&str]| -> Result<Value, Box<dyn Error>> {
        let mut args = vec!["old", "new", "--export-json", "-", "--store", &store];
        args.extend_from_slice(extra);
        let finished = compare(&args, dir.path())?;
        assert_eq!(finished.status.code(), Some(0), "{finished:?}");
        let report: Value = serde_json::from_str(&finished.stdout)?;
        validate_suite(&report)?;
        Ok(report["summary"]["geometric_means"][0].clone())
    };
    let first = mean_of(&[])?;
    assert_eq!(first["between_runs"]["earlier_runs"], 0, "{first}");
    assert!(first["between_runs"]["later_run"].is_null(), "{first}");

    // The kept run made five, of a quiet machine, 2% apart each way.
    let runs = dir.path().join("store/runs");
    let kept: Vec<PathBuf> = std::fs::read_dir(&runs)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    assert_eq!(kept.len(), 1, "{kept:?}");
    let mut run: Value = serde_json::from_str(&std::fs::read_to_string(&kept[0])?)?;
    assert_eq!(run["command"], "suite", "{run}");
    assert_eq!(run["rows"], serde_json::json!([]), "{run}");
    run["busy_machine"] = false.into();
    let id = run["id"].as_str().ok_or("an id")?.to_string();
    let value = run["suite"]["geometric_means"][0]["value"]
        .as_f64()
        .ok_or("a kept mean")?;
    for (k, factor) in [0.98, 0.99, 1.0, 1.01, 1.02].into_iter().enumerate() {
        let id = format!("{}{k:08x}", &id[..id.len() - 8]);
        run["id"] = id.clone().into();
        run["suite"]["geometric_means"][0]["value"] = (value * factor).into();
        std::fs::write(runs.join(format!("{id}.json")), run.to_string())?;
    }
    std::fs::remove_file(&kept[0])?;
    let sixth = mean_of(&[])?;
    let between = &sixth["between_runs"];
    assert_eq!(between["earlier_runs"], 5, "{sixth}");
    assert!(between["drift_pct"].as_f64() > Some(1.0), "{sixth}");
    let later = &between["later_run"];
    let (low, high) = (sixth["ci95_low"].as_f64(), sixth["ci95_high"].as_f64());
    assert!(
        later["ci95_low"].as_f64() < low && later["ci95_high"].as_f64() > high,
        "{sixth}"
    );

    // Another suite (one benchmark fewer) has no earlier run.
    std::fs::remove_file(new.join("mod16.wasm"))?;
    std::fs::remove_file(old.join("mod16.wasm"))?;
    assert_eq!(mean_of(&[])?["between_runs"]["earlier_runs"], 0);
    assert!(mean_of(&["--no-store"])?["between_runs"].is_null());
    assert_eq!(
        std::fs::read_dir(&runs)?.count(),
        7,
        "--no-store keeps nothing"
    );
    Ok(())
}
