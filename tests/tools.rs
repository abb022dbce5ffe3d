//! End-to-end tests of the tools around measuring (issue #7): the progress
//! display and colours, `host doctor`, `host new`, `host watch`, shell
//! completions and the man page, and the exit codes. No test asserts a time.

use std::error::Error;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use e2e::{host_binary, run_host_within, workloads};
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

const BOUND: Duration = Duration::from_secs(180);
const FAST: [&str; 4] = ["--samples", "20", "--warmup", "20ms"];

/// Run the host under a pseudo-terminal (util-linux `script`), so that it
/// sees a terminal on stdout and stderr. `None` when `script` is missing.
fn under_terminal(args: &[&str], env: &[(&str, &str)]) -> Result<Option<String>, Box<dyn Error>> {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("`script` (util-linux) is missing: skipped");
        return Ok(None);
    }
    let mut line = host_binary().display().to_string();
    for a in args {
        line.push(' ');
        line.push_str(a);
    }
    let output = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env("WASM_BENCH_CACHE", e2e::test_cache())
        .env_remove("NO_COLOR")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()?;
    Ok(Some(String::from_utf8_lossy(&output.stdout).into_owned()))
}

#[test]
fn no_progress_and_no_colour_when_not_a_terminal() -> TestResult {
    let xor = workloads().join("xor.wasm").display().to_string();
    let dir = tempfile::tempdir()?;
    let mut args = vec!["run", &xor];
    args.extend(FAST);
    let finished = run_host_within(&args, dir.path(), BOUND)?;
    assert_eq!(finished.status.code(), Some(0));
    assert!(finished.stderr.is_empty(), "stderr: {}", finished.stderr);
    assert!(
        !finished.stdout.contains('\u{1b}'),
        "escape codes in a pipe: {}",
        finished.stdout
    );
    Ok(())
}

#[test]
fn progress_and_colour_on_a_terminal() -> TestResult {
    let xor = workloads().join("xor.wasm").display().to_string();
    let mut args = vec!["run", &xor, &xor];
    args.extend(FAST);
    let Some(screen) = under_terminal(&args, &[])? else {
        return Ok(());
    };
    // The progress line names the stages, and the table is coloured.
    assert!(screen.contains("sampling: "), "{screen}");
    assert!(screen.contains("] 0/2 warm-up"), "{screen}");
    assert!(screen.contains("\u{1b}[1m"), "no colour: {screen}");
    // `--quiet` drops the progress line; NO_COLOR drops the colours.
    args.push("--quiet");
    let Some(quiet) = under_terminal(&args, &[("NO_COLOR", "1")])? else {
        return Ok(());
    };
    assert!(!quiet.contains("sampling: "), "{quiet}");
    assert!(
        !quiet.contains('\u{1b}'),
        "colour despite NO_COLOR: {quiet}"
    );
    assert!(quiet.contains("2 measured"), "{quiet}");
    Ok(())
}

#[test]
fn doctor_lists_every_finding() -> TestResult {
    let dir = tempfile::tempdir()?;
    let text = run_host_within(&["doctor"], dir.path(), BOUND)?;
    assert_eq!(text.status.code(), Some(0));
    for topic in [
        "cores",
        "pinning",
        "nice -20",
        "SCHED_FIFO",
        "clock source",
        "governor",
        "virtual machine",
        "load",
        "perf counters",
        "build",
    ] {
        assert!(text.stdout.contains(topic), "no {topic}: {}", text.stdout);
    }
    let json = run_host_within(&["doctor", "--json"], dir.path(), BOUND)?;
    let findings: Value = serde_json::from_str(&json.stdout)?;
    let findings = findings.as_array().ok_or("not a list")?;
    assert!(findings.len() >= 10);
    for f in findings {
        assert!(
            matches!(f["status"].as_str(), Some("ok" | "warn" | "info")),
            "{f}"
        );
        assert!(f["topic"].is_string() && f["detail"].is_string(), "{f}");
    }
    Ok(())
}

#[test]
fn new_scaffolds_a_workload_that_runs() -> TestResult {
    let dir = tempfile::tempdir()?;
    let made = run_host_within(&["new", "fresh", "--lang", "wat"], dir.path(), BOUND)?;
    assert_eq!(made.status.code(), Some(0), "{}", made.stderr);
    assert!(made.stdout.contains("created fresh.wat"), "{}", made.stdout);
    assert!(
        made.stdout.contains("run:   host run fresh.wat"),
        "{}",
        made.stdout
    );
    let mut args = vec!["run", "fresh.wat"];
    args.extend(FAST);
    let measured = run_host_within(&args, dir.path(), BOUND)?;
    assert_eq!(measured.status.code(), Some(0), "{}", measured.stdout);
    // Never overwrite; a bad name is refused.
    let again = run_host_within(&["new", "fresh", "--lang", "wat"], dir.path(), BOUND)?;
    assert_eq!(again.status.code(), Some(2));
    assert!(again.stderr.contains("fresh.wat"), "{}", again.stderr);
    let bad = run_host_within(&["new", "9lives"], dir.path(), BOUND)?;
    assert_eq!(bad.status.code(), Some(2));
    assert!(bad.stderr.contains("9lives"), "{}", bad.stderr);
    // Rust: the crate's files and the build command.
    let rust = run_host_within(&["new", "crate-one", "--lang", "rust"], dir.path(), BOUND)?;
    assert_eq!(rust.status.code(), Some(0), "{}", rust.stderr);
    assert!(dir.path().join("crate-one/Cargo.toml").is_file());
    assert!(dir.path().join("crate-one/src/lib.rs").is_file());
    assert!(
        rust.stdout
            .contains("cargo build --release --target wasm32-unknown-unknown"),
        "{}",
        rust.stdout
    );
    Ok(())
}

#[test]
fn completions_and_man_page() -> TestResult {
    let dir = tempfile::tempdir()?;
    for shell in ["bash", "zsh", "fish"] {
        let out = run_host_within(&["completions", shell], dir.path(), BOUND)?;
        assert_eq!(out.status.code(), Some(0));
        assert!(
            out.stdout.contains("compare") && out.stdout.contains("run"),
            "{shell}"
        );
    }
    let man = run_host_within(&["man"], dir.path(), BOUND)?;
    assert!(man.stdout.contains(".TH host"), "{}", man.stdout);
    let help = run_host_within(&["run", "--help"], dir.path(), BOUND)?;
    for flag in [
        "--export-json",
        "--baseline",
        "--timeout",
        "--engine",
        "--quiet",
    ] {
        assert!(help.stdout.contains(flag), "--help lacks {flag}");
    }
    Ok(())
}

/// Exit codes as README documents them: 0, 1, 2 here (3 and 130 are
/// tested with baselines and Ctrl-C).
#[test]
fn exit_codes() -> TestResult {
    let dir = tempfile::tempdir()?;
    let xor = workloads().join("xor.wasm").display().to_string();
    let mut ok = vec!["run", &xor];
    ok.extend(FAST);
    assert_eq!(
        run_host_within(&ok, dir.path(), BOUND)?.status.code(),
        Some(0)
    );
    std::fs::write(dir.path().join("bad.wasm"), b"not wasm")?;
    let mut failed = vec!["run", &xor, "bad.wasm"];
    failed.extend(FAST);
    assert_eq!(
        run_host_within(&failed, dir.path(), BOUND)?.status.code(),
        Some(1)
    );
    assert_eq!(
        run_host_within(&["run", "--count", "0", &xor], dir.path(), BOUND)?
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        run_host_within(&["frobnicate"], dir.path(), BOUND)?
            .status
            .code(),
        Some(2)
    );
    Ok(())
}

/// `host watch` measures, then measures a file again when it changes (and a
/// new file when it appears), with the change against the previous run.
#[test]
fn watch_measures_again_on_change() -> TestResult {
    let dir = tempfile::tempdir()?;
    let folder = dir.path().join("w");
    std::fs::create_dir(&folder)?;
    std::fs::copy(workloads().join("xor.wasm"), folder.join("xor.wasm"))?;
    let mut child = e2e::prepare(Command::new(host_binary()).args([
        "watch",
        "w",
        "--samples",
        "20",
        "--warmup",
        "20ms",
    ]))
    .current_dir(dir.path())
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let (lines_in, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines_in.send(line);
        }
    });
    let start = Instant::now();
    let wait_for = |needle: &str| -> Result<String, Box<dyn Error>> {
        while start.elapsed() < BOUND {
            if let Ok(line) = lines.recv_timeout(Duration::from_millis(100))
                && line.contains(needle)
            {
                return Ok(line);
            }
        }
        Err(format!("no line with {needle:?}").into())
    };
    wait_for("watching")?;
    std::fs::copy(workloads().join("mod16.wasm"), folder.join("added.wasm"))?;
    wait_for("added")?;
    std::fs::copy(workloads().join("xor.wasm"), folder.join("xor.wasm"))?;
    let change = wait_for("its previous measurement")?;
    assert!(change.contains("`xor`"), "{change}");
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()?;
    let status = child.wait()?;
    assert_eq!(status.code(), Some(130));
    Ok(())
}

/// Every export flag writes its format; only one may go to stdout.
#[test]
fn exports_in_every_format() -> TestResult {
    let dir = tempfile::tempdir()?;
    let xor = workloads().join("xor.wasm").display().to_string();
    let mut args = vec![
        "run",
        &xor,
        "--export-markdown",
        "out.md",
        "--export-csv",
        "out.csv",
        "--export-html",
        "out.html",
        "--export-dashboard",
        "-",
    ];
    args.extend(FAST);
    let finished = run_host_within(&args, dir.path(), BOUND)?;
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    // The dashboard went to stdout (pure JSON); the table to stderr.
    let dashboard: Value = serde_json::from_str(&finished.stdout)?;
    assert_eq!(dashboard[0]["name"], "xor");
    assert_eq!(dashboard[0]["unit"], "ns/op");
    assert!(dashboard[0]["value"].as_f64().is_some_and(|v| v > 0.0));
    assert!(
        finished.stderr.contains("1 measured"),
        "{}",
        finished.stderr
    );
    let markdown = std::fs::read_to_string(dir.path().join("out.md"))?;
    assert!(
        markdown.starts_with("| benchmark | time/op |"),
        "{markdown}"
    );
    let csv = std::fs::read_to_string(dir.path().join("out.csv"))?;
    assert!(csv.starts_with("name,benchmark,size,"), "{csv}");
    assert_eq!(csv.lines().count(), 2);
    let html = std::fs::read_to_string(dir.path().join("out.html"))?;
    assert!(html.contains("<svg") && html.contains("xor"));
    assert!(
        !html.contains("<script") && !html.contains("src="),
        "the page must be self-contained"
    );

    // Compare exports its verdicts.
    let compared = run_host_within(
        &[
            "compare",
            &xor,
            &xor,
            "--export-markdown",
            "-",
            "--export-html",
            "cmp.html",
            "--time",
            "1s",
        ],
        dir.path(),
        BOUND,
    )?;
    assert_eq!(compared.status.code(), Some(0), "{}", compared.stderr);
    assert!(
        compared.stdout.contains("| variant |"),
        "{}",
        compared.stdout
    );
    assert!(std::fs::read_to_string(dir.path().join("cmp.html"))?.contains("<svg"));

    // Two exports to stdout, or a dashboard of a comparison: usage errors.
    let two = run_host_within(
        &["run", &xor, "--export-json", "-", "--export-csv", "-"],
        dir.path(),
        BOUND,
    )?;
    assert_eq!(two.status.code(), Some(2));
    assert!(
        two.stderr.contains("only one export can go to stdout"),
        "{}",
        two.stderr
    );
    let dash = run_host_within(
        &["compare", &xor, &xor, "--export-dashboard", "d.json"],
        dir.path(),
        BOUND,
    )?;
    assert_eq!(dash.status.code(), Some(2));
    Ok(())
}

/// `--export-bencher` writes Bencher's metric format: one object per row,
/// `latency` with the interval as its bounds (issue #15).
#[test]
fn bencher_metric_format() -> TestResult {
    let dir = tempfile::tempdir()?;
    let xor = workloads().join("xor.wasm").display().to_string();
    let mut args = vec!["run", &xor, "--export-bencher", "-"];
    args.extend(FAST);
    let finished = run_host_within(&args, dir.path(), BOUND)?;
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    let bmf: Value = serde_json::from_str(&finished.stdout)?;
    let latency = &bmf["xor"]["latency"];
    let (low, value, high) = (
        latency["lower_value"].as_f64().ok_or("no lower_value")?,
        latency["value"].as_f64().ok_or("no value")?,
        latency["upper_value"].as_f64().ok_or("no upper_value")?,
    );
    assert!(low <= value && value <= high, "{bmf}");
    assert_eq!(bmf.as_object().map(|o| o.len()), Some(1), "{bmf}");
    let compared = run_host_within(
        &["compare", &xor, &xor, "--export-bencher", "b.json"],
        dir.path(),
        BOUND,
    )?;
    assert_eq!(compared.status.code(), Some(2), "{}", compared.stderr);
    assert!(
        compared.stderr.contains("--export-bencher"),
        "{}",
        compared.stderr
    );
    Ok(())
}

/// `host report` renders a saved export again without measuring, in every
/// format, for run and compare exports alike, and refuses a file that is not
/// a wasm-bench export (issue #15).
#[test]
fn report_renders_a_saved_export() -> TestResult {
    let dir = tempfile::tempdir()?;
    let xor = workloads().join("xor.wasm").display().to_string();
    let mut args = vec!["run", &xor, "--export-json", "run.json"];
    args.extend(FAST);
    let measured = run_host_within(&args, dir.path(), BOUND)?;
    assert_eq!(measured.status.code(), Some(0), "{}", measured.stderr);
    let rendered = run_host_within(
        &[
            "report",
            "run.json",
            "--export-html",
            "run.html",
            "--export-markdown",
            "run.md",
            "--export-bencher",
            "run.bmf.json",
        ],
        dir.path(),
        BOUND,
    )?;
    assert_eq!(rendered.status.code(), Some(0), "{}", rendered.stderr);
    // The same table as the run printed, from the file.
    assert!(rendered.stdout.contains("xor"), "{}", rendered.stdout);
    assert!(
        rendered.stdout.contains("1 measured"),
        "{}",
        rendered.stdout
    );
    let html = std::fs::read_to_string(dir.path().join("run.html"))?;
    assert!(html.contains("<svg") && html.contains("xor"));
    assert!(std::fs::read_to_string(dir.path().join("run.md"))?.contains("| xor |"));
    let bmf: Value = serde_json::from_slice(&std::fs::read(dir.path().join("run.bmf.json"))?)?;
    let saved: Value = serde_json::from_slice(&std::fs::read(dir.path().join("run.json"))?)?;
    e2e::validate_export(&saved)?;
    assert_eq!(
        bmf["xor"]["latency"]["value"], saved["results"][0]["ns_per_op"]["median"],
        "the report renders the saved figures, not new ones"
    );

    // The schema holds exports to their shape: a report without its rows
    // does not pass.
    let broken = serde_json::json!({"tool": {"name": "wasm-bench", "version": "0.1.0"}});
    assert!(e2e::validate_export(&broken).is_err());

    // A compare export renders its verdicts.
    let compared = run_host_within(
        &[
            "compare",
            &xor,
            &xor,
            "--time",
            "1s",
            "--export-json",
            "cmp.json",
        ],
        dir.path(),
        BOUND,
    )?;
    assert_eq!(compared.status.code(), Some(0), "{}", compared.stderr);
    let rendered = run_host_within(
        &["report", "cmp.json", "--export-markdown", "-"],
        dir.path(),
        BOUND,
    )?;
    assert_eq!(rendered.status.code(), Some(0), "{}", rendered.stderr);
    assert!(
        rendered.stdout.contains("| variant |"),
        "{}",
        rendered.stdout
    );

    // Not a wasm-bench export: refused, with one clear line.
    std::fs::write(dir.path().join("other.json"), r#"{"benchmarks": []}"#)?;
    let refused = run_host_within(&["report", "other.json"], dir.path(), BOUND)?;
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    assert!(
        refused
            .stderr
            .contains("other.json: not a wasm-bench export"),
        "{}",
        refused.stderr
    );
    Ok(())
}

/// `host --version` names the tool, not only the binary (issue #15).
#[test]
fn version_names_wasm_bench() -> TestResult {
    let dir = tempfile::tempdir()?;
    let finished = run_host_within(&["--version"], dir.path(), BOUND)?;
    assert_eq!(finished.status.code(), Some(0));
    assert!(
        finished.stdout.contains("wasm-bench"),
        "{}",
        finished.stdout
    );
    Ok(())
}

/// The terminal table of the bundled folder shows the empty guests as the
/// baselines they are, without alarms, and no routine notes; the JSON keeps
/// every note (issue #15).
#[test]
fn the_table_is_quiet_and_the_json_complete() -> TestResult {
    let dir = tempfile::tempdir()?;
    let empty = workloads().join("empty.wasm").display().to_string();
    let xor = workloads().join("xor.wasm").display().to_string();
    let mut args = vec!["run", &empty, &xor, "--export-json", "out.json"];
    args.extend(FAST);
    // Twice: the second run loads from the compile cache.
    run_host_within(&args, dir.path(), BOUND)?;
    let finished = run_host_within(&args, dir.path(), BOUND)?;
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    let table = &finished.stdout;
    // Whether the empty guest's count reached its cap (the row then says
    // "no measurable work") depends on how busy the machine is; that it
    // cannot be told apart from the empty guest does not.
    assert!(
        table.contains("no measurable work")
            || table.contains("cannot be told apart from the empty guest"),
        "{table}"
    );
    for alarm in ["optimised away", "±50.0%", "loaded from the cache"] {
        assert!(!table.contains(alarm), "`{alarm}` in the table:\n{table}");
    }
    let report: Value = serde_json::from_slice(&std::fs::read(dir.path().join("out.json"))?)?;
    e2e::validate_export(&report)?;
    let empty_row = &report["results"][0];
    assert!(
        empty_row["no_measurable_work"] == true
            || empty_row["indistinguishable_from_empty"] == true,
        "{empty_row}"
    );
    let notes = empty_row["notes"].to_string();
    assert!(notes.contains("optimised away"), "{notes}");
    let info = report["results"][1]["info"].to_string();
    assert!(info.contains("loaded from the cache"), "{info}");
    Ok(())
}

/// The GitHub Actions workflows of docs/tools.md, read by a YAML parser.
fn recipes() -> Result<Vec<serde_yaml::Value>, Box<dyn Error>> {
    let path = e2e::workspace_root().join("docs").join("tools.md");
    let text = std::fs::read_to_string(path)?;
    let mut workflows = Vec::new();
    for block in text.split("```yaml\n").skip(1) {
        let yaml = block.split("```").next().ok_or("an unclosed block")?;
        workflows.push(serde_yaml::from_str(yaml)?);
    }
    Ok(workflows)
}

/// Each step of `workflow`, by job.
fn steps(workflow: &serde_yaml::Value) -> Vec<&serde_yaml::Value> {
    let jobs = workflow["jobs"].as_mapping().into_iter().flatten();
    jobs.flat_map(|(_, job)| job["steps"].as_sequence().into_iter().flatten())
        .collect()
}

/// docs/tools.md's workflows run as written on a runner without root:
/// every job installs `host` (or restores it) before calling it, shard
/// exports are merged into one folder, the store's cache key names the
/// attempt, the commit is not labelled twice, and the Markdown reaches the
/// job summary.
#[test]
fn the_ci_recipes_run_as_written() -> TestResult {
    let workflows = recipes()?;
    assert_eq!(workflows.len(), 2, "the sharded run and the history");
    let mut summaries = 0;
    for workflow in &workflows {
        assert!(workflow["on"].as_sequence().is_some(), "{workflow:?}");
        for (name, job) in workflow["jobs"].as_mapping().ok_or("no jobs")? {
            let mut installed = false;
            for step in job["steps"].as_sequence().ok_or("no steps")? {
                let uses = step["uses"].as_str().unwrap_or_default();
                let run = step["run"].as_str().unwrap_or_default();
                assert!(uses.is_empty() != run.is_empty(), "{name:?}: {step:?}");
                let restores = uses.starts_with("actions/cache@")
                    && step["with"]["path"] == "~/.cargo/bin/host";
                installed |= restores || run.starts_with("cargo install --path host");
                if run.starts_with("host ") {
                    assert!(installed, "{name:?}: `host` before it is installed");
                }
                if run.starts_with("host run") {
                    assert!(run.contains("--priority none"), "{run}");
                    assert!(!run.contains("--label"), "{run}");
                    // Runs kept for the history carry the control.
                    if workflow["name"] == "history" {
                        assert!(run.contains("--control"), "{run}");
                    }
                }
                if run.contains("--export-markdown") {
                    assert!(
                        run.ends_with(r#"--export-markdown - >> "$GITHUB_STEP_SUMMARY""#),
                        "{run}"
                    );
                    summaries += 1;
                }
                if let Some(key) = step["with"]["key"].as_str()
                    && key.contains("github.run_id")
                {
                    assert!(
                        key.ends_with("${{ github.run_id }}-${{ github.run_attempt }}"),
                        "{key}"
                    );
                }
                if uses.starts_with("actions/download-artifact@") {
                    assert_eq!(step["with"]["merge-multiple"], true, "{step:?}");
                    assert_eq!(step["with"]["pattern"], "shard-*", "{step:?}");
                }
            }
        }
    }
    assert_eq!(summaries, 2);
    let uploads: Vec<_> = steps(&workflows[0])
        .into_iter()
        .filter(|s| s["uses"] == "actions/upload-artifact@v4")
        .collect();
    assert_eq!(uploads.len(), 1);
    assert_eq!(uploads[0]["with"]["name"], "shard-${{ matrix.shard }}");
    Ok(())
}
