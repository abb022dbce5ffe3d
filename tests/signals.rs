//! End-to-end tests of the parent's end (issue #30): a parent killed by
//! SIGKILL leaves no worker behind, however long the guest's call, and one
//! ended by SIGTERM or SIGHUP stops as after Ctrl-C: its worker is killed,
//! the rows measured so far are reported and exported, the exit status is
//! 130; a comparison (of workloads, of programs) so stopped exports the
//! rounds taken so far.
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
const GONE_WITHIN: Duration = Duration::from_secs(20);

/// How long a test waits for a worker to start: Valgrind starts slowly on
/// a loaded machine.
const START_WITHIN: Duration = Duration::from_secs(120);

/// A `host` process the test started, killed if the test ends first.
struct Parent(Option<Child>);

impl Parent {
    fn id(&self) -> u32 {
        self.0.as_ref().map_or(0, Child::id)
    }

    /// The process, no longer killed when this is dropped.
    fn take(mut self) -> Result<Child, Box<dyn Error>> {
        Ok(self.0.take().ok_or("taken")?)
    }
}

impl Drop for Parent {
    fn drop(&mut self) {
        if let Some(child) = &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

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

/// Wait until `worker` has run for `cpu` (on a busy machine it starts
/// slowly, and a signal before it is ready is an error of the run).
fn busy_for(worker: u32, cpu: Duration) -> TestResult {
    // /proc counts in USER_HZ ticks, 100 a second on Linux.
    const TICKS: u64 = 100;
    let start = Instant::now();
    while start.elapsed() < START_WITHIN {
        let stat = std::fs::read_to_string(format!("/proc/{worker}/stat"))?;
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
        // utime and stime, fields 14 and 15 of the line (11 and 12 here).
        let used: u64 = [11, 12]
            .iter()
            .filter_map(|&i| fields.get(i)?.parse::<u64>().ok())
            .sum();
        if Duration::from_millis(used * 1000 / TICKS) >= cpu {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(format!("worker {worker} did not run for {cpu:?} within {START_WITHIN:?}").into())
}

/// Wait until process `pid` runs Valgrind (its command line names it): a
/// child is the parent's copy until it has executed its program.
fn became_valgrind(pid: u32) -> TestResult {
    let start = Instant::now();
    let mut command = Vec::new();
    while start.elapsed() < START_WITHIN {
        command = std::fs::read(format!("/proc/{pid}/cmdline"))?;
        if String::from_utf8_lossy(&command).contains("valgrind") {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(format!(
        "process {pid} did not become Valgrind within {START_WITHIN:?}: {}",
        String::from_utf8_lossy(&command)
    )
    .into())
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
fn start(workloads: &[String]) -> Result<(Parent, tempfile::TempDir), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let mut args = vec!["run"];
    args.extend(workloads.iter().map(String::as_str));
    args.extend(["--timeout", "1000s", "--export-json", "out.json"]);
    Ok((Parent(Some(spawn_host(&args, dir.path())?)), dir))
}

/// A parent killed by SIGKILL while its worker is in a call that never
/// returns: the worker dies with it.
#[test]
fn a_killed_parent_leaves_no_worker() -> TestResult {
    let (parent, _dir) = start(&[endless()])?;
    let worker = new_worker(parent.id(), &[])?;
    // Let it reach the guest's endless call.
    busy_for(worker, Duration::from_secs(2))?;
    assert!(alive(worker), "the worker ended before the parent");
    let mut child = parent.take()?;
    child.kill()?;
    child.wait()?;
    let took = assert_gone(worker)?;
    eprintln!("the worker was gone {took:?} after its parent's SIGKILL");
    Ok(())
}

/// SIGTERM (and SIGHUP) to the parent while its worker spins: the worker is
/// killed, the run stops as after Ctrl-C.
fn stops_on(signal: &str) -> TestResult {
    let (parent, _dir) = start(&[endless()])?;
    let worker = new_worker(parent.id(), &[])?;
    // Ready and in the guest's endless call.
    busy_for(worker, Duration::from_secs(2))?;
    send(signal, parent.id())?;
    let took = assert_gone(worker)?;
    let finished = e2e::finish_within(parent.take()?, Duration::from_secs(20))?;
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
    let (parent, dir) = start(&[late_hang.display().to_string()])?;
    let first = new_worker(parent.id(), &[])?;
    // The second worker hangs in its first call.
    let second = new_worker(parent.id(), &[first])?;
    busy_for(second, Duration::from_millis(1000))?;
    send("TERM", parent.id())?;
    assert_gone(second)?;
    let finished = e2e::finish_within(parent.take()?, Duration::from_secs(20))?;
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

/// Whether Valgrind runs here; where it must (CI), its absence fails.
fn valgrind() -> Result<bool, Box<dyn Error>> {
    let here = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    match (here, std::env::var_os("WASM_BENCH_REQUIRE_VALGRIND")) {
        (false, Some(_)) => {
            Err("WASM_BENCH_REQUIRE_VALGRIND is set but valgrind is not installed".into())
        }
        (here, _) => Ok(here),
    }
}

/// The worker of the Callgrind pass runs the guest in the process Valgrind
/// was started as: it dies with a parent killed by SIGKILL too. The
/// fixture hangs in the Callgrind pass, which runs first.
#[test]
fn a_killed_parent_leaves_no_worker_under_valgrind() -> TestResult {
    if !valgrind()? {
        return Ok(());
    }
    let late_hang = fixture("hostile/late_hang.wat").display().to_string();
    let dir = tempfile::tempdir()?;
    let args = [
        "run",
        &late_hang,
        "--processes",
        "1",
        "--samples",
        "20",
        "--metric",
        "cycles-est",
        "--timeout",
        "1000s",
    ];
    let parent = Parent(Some(spawn_host(&args, dir.path())?));
    let under_valgrind = new_worker(parent.id(), &[])?;
    // The child runs the host's own code until it has executed Valgrind:
    // wait for that, then for Valgrind to have run the worker a while.
    became_valgrind(under_valgrind)?;
    busy_for(under_valgrind, Duration::from_millis(1500))?;
    assert!(
        alive(under_valgrind),
        "the Callgrind worker ended by itself"
    );
    let mut child = parent.take()?;
    child.kill()?;
    child.wait()?;
    let took = assert_gone(under_valgrind)?;
    eprintln!("the worker under Valgrind was gone {took:?} after its parent's SIGKILL");
    Ok(())
}

/// Start `host compare` of `variants` with a long deadline and a JSON
/// export in a fresh folder.
fn start_compare(variants: &[String]) -> Result<(Parent, tempfile::TempDir), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let mut args = vec!["compare"];
    args.extend(variants.iter().map(String::as_str));
    // No time cap before the test's signal: the comparison goes on.
    args.extend(["--timeout", "1000s", "--time", "1000s"]);
    args.extend(["--export-json", "out.json"]);
    Ok((Parent(Some(spawn_host(&args, dir.path())?)), dir))
}

/// SIGTERM to `host compare` of `variant` against itself once its first
/// worker has compared and the second is at work: exit 130, and the export
/// holds the rounds of the first worker and says it stopped.
fn compare_keeps_the_rounds_so_far(variant: PathBuf) -> TestResult {
    let variant = variant.display().to_string();
    let (parent, dir) = start_compare(&[variant.clone(), variant])?;
    let first = new_worker(parent.id(), &[])?;
    let second = new_worker(parent.id(), &[first])?;
    send("TERM", parent.id())?;
    assert_gone(second)?;
    let finished = e2e::finish_within(parent.take()?, Duration::from_secs(20))?;
    assert_eq!(finished.status.code(), Some(130), "{finished:?}");
    assert!(
        finished.stderr.contains("stopped: interrupted"),
        "{finished:?}"
    );
    let report: Value = serde_json::from_slice(&std::fs::read(dir.path().join("out.json"))?)?;
    e2e::validate_export(&report)?;
    assert_eq!(report["stopped"], "interrupted (Ctrl-C, SIGTERM or SIGHUP)");
    let variants = report["variants"].as_array().ok_or("no variants")?;
    assert_eq!(variants.len(), 2, "{report}");
    // The first worker's rounds, and none of the second's: as many as
    // each variant's epochs.
    let rounds = report["rounds"].as_u64().ok_or("no rounds")?;
    assert!(rounds > 0, "{report}");
    for variant in variants {
        assert_eq!(variant["epochs"].as_u64(), Some(rounds), "{report}");
    }
    for variant in variants {
        assert!(variant.get("error").is_none(), "{report}");
    }
    Ok(())
}

/// Workloads: the second worker hangs in its first call.
#[test]
fn sigterm_during_a_comparison_keeps_the_rounds_so_far() -> TestResult {
    compare_keeps_the_rounds_so_far(fixture("hostile/late_hang.wat"))
}

/// Programs: each of the second worker's iterations takes a while.
#[test]
fn sigterm_during_a_comparison_of_programs_keeps_the_rounds_so_far() -> TestResult {
    compare_keeps_the_rounds_so_far(fixture("programs/slow.wat"))
}
