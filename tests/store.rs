//! The store of kept runs when it cannot keep a run, or is not what it
//! should be: a store under a regular file, a symbolic link inside it, a
//! read-only and a full store (each a tmpfs mounted in a mount namespace of
//! its own, where `unshare` may make one) cost no measured result: the rows
//! are printed and exported, a warning says why the run was not kept, and
//! the exit status is 4 ("measured, not kept"). A baseline name that could
//! not name a file of the store is refused before anything is measured;
//! crafted numbers in kept runs do not hold `host history` up.

use std::error::Error;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use e2e::{Finished, finish_within, host_binary, prepare, workloads};
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

/// Far above what each command takes.
const BOUND: Duration = Duration::from_secs(120);

/// The exit status of a run measured and exported but not kept.
const NOT_KEPT: i32 = 4;

/// The flags of a short, fixed-count `host run` of xor with its JSON report
/// on stdout, kept in `store`.
fn run_args(store: &Path) -> Vec<String> {
    let xor = workloads().join("xor.wasm");
    [
        "run",
        &xor.display().to_string(),
        "--samples",
        "5",
        "--warmup",
        "20ms",
        "--count",
        "1000",
        "--export-json",
        "-",
        "--store",
        &store.display().to_string(),
    ]
    .map(String::from)
    .to_vec()
}

/// `command` run to its end (within [`BOUND`]), checked not to panic.
fn finish(command: &mut Command) -> Result<Finished, Box<dyn Error>> {
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let finished = finish_within(child, BOUND)?;
    assert!(!finished.stderr.contains("panicked"), "{}", finished.stderr);
    Ok(finished)
}

/// `host ARGS`.
fn host(args: &[String]) -> Result<Finished, Box<dyn Error>> {
    finish(prepare(Command::new(host_binary()).args(args)))
}

/// That `finished` measured xor, exported it, and says it was not kept,
/// with `why` in the warning.
fn assert_measured_not_kept(finished: &Finished, why: &str) -> TestResult {
    let report: Value = serde_json::from_str(&finished.stdout)
        .map_err(|e| format!("{e}: {} / {}", finished.stdout, finished.stderr))?;
    assert_eq!(
        finished.status.code(),
        Some(NOT_KEPT),
        "{}",
        finished.stderr
    );
    let median = &report["results"][0]["ns_per_op"]["median"];
    assert!(median.as_f64().is_some_and(|m| m > 0.0), "{report}");
    let warnings = report["environment"]["warnings"].to_string();
    assert!(
        warnings.contains("measured, not kept in the store") && warnings.contains(why),
        "{warnings}"
    );
    assert!(
        finished
            .stderr
            .contains("warning: measured, not kept in the store"),
        "{}",
        finished.stderr
    );
    Ok(())
}

#[test]
fn a_store_that_cannot_be_made_keeps_the_results() -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("file");
    std::fs::write(&file, "")?;
    let finished = host(&run_args(&file.join("store")))?;
    assert_measured_not_kept(&finished, "cannot create the store")?;
    assert!(
        finished
            .stderr
            .contains("the run will be measured, not kept"),
        "said before measuring: {}",
        finished.stderr
    );
    Ok(())
}

#[test]
fn a_symbolic_link_inside_the_store_is_refused() -> TestResult {
    let dir = tempfile::tempdir()?;
    let elsewhere = tempfile::tempdir()?;
    let store = dir.path().join("store");
    std::fs::create_dir(&store)?;
    std::os::unix::fs::symlink(elsewhere.path(), store.join("runs"))?;
    let finished = host(&run_args(&store))?;
    assert_measured_not_kept(&finished, "a symbolic link inside the store")?;
    assert_eq!(std::fs::read_dir(elsewhere.path())?.count(), 0);
    Ok(())
}

/// `host ARGS` in a mount namespace of its own where `store` is a fresh
/// tmpfs of `size`, prepared by the shell command `setup` (`$1` is the
/// store); `None` when this machine lets no such namespace be made.
fn in_a_tmpfs(store: &Path, size: &str, setup: &str, args: &[String]) -> Option<Finished> {
    std::fs::create_dir_all(store).ok()?;
    let probe = Command::new("unshare")
        .args(["--map-root-user", "--mount", "sh", "-c"])
        .arg("mount -t tmpfs tmpfs \"$1\"")
        .arg("sh")
        .arg(store)
        .stderr(Stdio::null())
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        eprintln!("skipped: no mount namespace with a tmpfs on this machine (unshare)");
        return None;
    }
    let script =
        format!("mount -t tmpfs -o size={size} tmpfs \"$1\" && {setup} && shift && exec \"$@\"");
    let mut command = Command::new("unshare");
    command
        .args(["--map-root-user", "--mount", "sh", "-c", &script, "sh"])
        .arg(store)
        .arg(host_binary())
        .args(args);
    Some(finish(prepare(&mut command)).expect("the host ran"))
}

#[test]
fn a_read_only_store_keeps_the_results() -> TestResult {
    let dir = tempfile::tempdir()?;
    let store = dir.path().join("store");
    let setup = "mkdir \"$1/runs\" && mount -o remount,ro \"$1\"";
    let Some(finished) = in_a_tmpfs(&store, "1m", setup, &run_args(&store)) else {
        return Ok(());
    };
    assert_measured_not_kept(&finished, "Read-only file system")?;
    Ok(())
}

#[test]
fn a_full_store_keeps_the_results() -> TestResult {
    let dir = tempfile::tempdir()?;
    let store = dir.path().join("store");
    // The folder of runs made, then every block taken.
    let setup = "mkdir \"$1/runs\" && { head -c 1m /dev/zero > \"$1/filler\" || true; }";
    let Some(finished) = in_a_tmpfs(&store, "64k", setup, &run_args(&store)) else {
        return Ok(());
    };
    assert_measured_not_kept(&finished, "No space left on device")?;
    Ok(())
}

#[test]
fn a_hostile_baseline_name_is_refused_before_measuring() -> TestResult {
    let dir = tempfile::tempdir()?;
    let store = dir.path().join("store");
    let long = "a".repeat(101);
    for flag in ["--save-baseline", "--baseline"] {
        for name in ["../../outside", ".hidden", long.as_str(), "a/b"] {
            let mut args = run_args(&store);
            args.extend([flag.to_string(), name.to_string()]);
            let finished = host(&args)?;
            assert_eq!(finished.status.code(), Some(2), "{}", finished.stderr);
            assert!(
                finished.stderr.contains("baseline name"),
                "{}",
                finished.stderr
            );
            assert!(finished.stdout.is_empty(), "measured: {}", finished.stdout);
            assert!(!store.exists(), "the store was touched");
        }
    }
    Ok(())
}
