//! End-to-end tests of the parent's end (issue #30): a parent killed by
//! SIGKILL leaves no worker behind, however long the guest's call, and one
//! ended by SIGTERM or SIGHUP stops as after Ctrl-C: its worker is killed,
//! the rows measured so far are reported and exported, the exit status is
//! 130.
//!
//! Every run has a time bound; none asserts a measured time.

use std::error::Error;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use e2e::{fixture, spawn_host};
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

/// How long a worker may outlive its parent's end: the death signal is
/// immediate, this bounds a loaded machine.
const GONE_WITHIN: Duration = Duration::from_secs(5);

/// How long the parent may wait for its worker to start.
const START_WITHIN: Duration = Duration::from_secs(30);

/// A guest whose `run` never returns.
fn endless() -> String {
    fixture("hostile/loop_run.wat").display().to_string()
}

/// The children of process `pid`, from every one of its threads.
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .filter_map(|task| task.ok())
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|list| {
            list.split_whitespace()
                .filter_map(|id| id.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// Whether process `pid` still runs (a zombie waiting for whoever adopted
/// it runs no more).
fn alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The state follows the command's closing parenthesis.
    let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
    !matches!(state.and_then(|s| s.chars().next()), Some('Z' | 'X') | None)
}

/// The first worker `host` (process `pid`) starts whose id is not in
/// `seen`, once it runs.
fn new_worker(pid: u32, seen: &[u32]) -> Result<u32, Box<dyn Error>> {
    let start = Instant::now();
    while start.elapsed() < START_WITHIN {
        if let Some(&worker) = children(pid).iter().find(|c| !seen.contains(c)) {
            return Ok(worker);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(format!("no new worker of {pid} within {START_WITHIN:?}").into())
}

/// Send `signal` (a name `kill` knows) to process `pid`.
fn send(signal: &str, pid: u32) -> TestResult {
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()?;
    assert!(status.success(), "kill -{signal} {pid}: {status}");
    Ok(())
}

/// Wait until `worker` is gone; fail past [`GONE_WITHIN`].
fn assert_gone(worker: u32) -> Result<Duration, Box<dyn Error>> {
    let start = Instant::now();
    while alive(worker) {
        if start.elapsed() > GONE_WITHIN {
            // Do not leave it spinning for the tests after this one.
            let _ = send("KILL", worker);
            return Err(format!("worker {worker} outlived its parent by {GONE_WITHIN:?}").into());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(start.elapsed())
}

/// Start `host run` on `workloads` with a long deadline and a JSON export in
/// a fresh folder.
fn start(workloads: &[String]) -> Result<(Child, tempfile::TempDir), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let mut args = vec!["run"];
    args.extend(workloads.iter().map(String::as_str));
    args.extend(["--timeout", "1000s", "--export-json", "out.json"]);
    Ok((spawn_host(&args, dir.path())?, dir))
}

/// A parent killed by SIGKILL while its worker is in a call that never
/// returns: the worker dies with it.
#[test]
fn a_killed_parent_leaves_no_worker() -> TestResult {
    let (mut child, _dir) = start(&[endless()])?;
    let worker = new_worker(child.id(), &[])?;
    // Let it reach the guest's endless call.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(alive(worker), "the worker ended before the parent");
    child.kill()?;
    child.wait()?;
    let took = assert_gone(worker)?;
    eprintln!("the worker was gone {took:?} after its parent's SIGKILL");
    Ok(())
}

/// SIGTERM (and SIGHUP) to the parent while its worker spins: the worker is
/// killed, the run stops as after Ctrl-C.
fn stops_on(signal: &str) -> TestResult {
    let (child, _dir) = start(&[endless()])?;
    let worker = new_worker(child.id(), &[])?;
    std::thread::sleep(Duration::from_millis(1500));
    send(signal, child.id())?;
    let took = assert_gone(worker)?;
    let finished = e2e::finish_within(child, Duration::from_secs(20))?;
    eprintln!("SIG{signal}: the worker was gone after {took:?}; {finished:?}");
    assert_eq!(finished.status.code(), Some(130), "{finished:?}");
    assert!(
        finished.stdout.contains("stopped early: interrupted"),
        "{finished:?}"
    );
    Ok(())
}

#[test]
fn sigterm_ends_the_worker_and_the_run() -> TestResult {
    stops_on("TERM")
}

#[test]
fn sighup_ends_the_worker_and_the_run() -> TestResult {
    stops_on("HUP")
}

/// SIGTERM once a row was measured in one worker process and the next
/// worker hangs in it: the row is reported and exported with what it has.
#[test]
fn sigterm_keeps_the_rows_measured_so_far() -> TestResult {
    let late_hang: PathBuf = fixture("hostile/late_hang.wat");
    let (child, dir) = start(&[late_hang.display().to_string()])?;
    let first = new_worker(child.id(), &[])?;
    // The second worker hangs in its first call.
    let second = new_worker(child.id(), &[first])?;
    std::thread::sleep(Duration::from_millis(1000));
    send("TERM", child.id())?;
    assert_gone(second)?;
    let finished = e2e::finish_within(child, Duration::from_secs(20))?;
    assert_eq!(finished.status.code(), Some(130), "{finished:?}");
    assert!(finished.stdout.contains("late_hang"), "{finished:?}");
    let report: Value = serde_json::from_slice(&std::fs::read(dir.path().join("out.json"))?)?;
    e2e::validate_export(&report)?;
    assert_eq!(report["stopped"], "interrupted (Ctrl-C, SIGTERM or SIGHUP)");
    let results = report["results"].as_array().ok_or("no results")?;
    assert_eq!(results.len(), 1, "{report}");
    assert!(results[0].get("error").is_none(), "{report}");
    assert_eq!(results[0]["processes"], 1, "{report}");
    Ok(())
}
