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

const BOUND: Duration = Duration::from_secs(60);
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
