//! End-to-end tests of the sandbox (issue #5): every hostile or broken
//! workload ends in a one-line error naming the file and the cause, within
//! its limit, without a panic, and the good workloads beside it are measured
//! in full; Ctrl-C keeps the finished results. Measuring happens in worker
//! processes (issue #11): a worker that hangs, aborts, is killed or outgrows
//! its memory fails its own row, and the rows beside it are measured.
//!
//! Every run has a time bound; none asserts a measured time.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::Duration;

use e2e::{Finished, fixture, run_host_within, spawn_host, workloads};
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

/// Flags that keep a run short: a 1 s deadline, a 64 MiB memory cap, few
/// samples.
const FAST: [&str; 10] = [
    "--timeout",
    "1s",
    "--max-memory",
    "64MiB",
    "--samples",
    "20",
    "--warmup",
    "50ms",
    "--sample-time",
    "200us",
];

/// Upper bound on one run of a single hostile workload.
const BOUND: Duration = Duration::from_secs(120);

fn hostile(name: &str) -> PathBuf {
    fixture(&format!("hostile/{name}"))
}

fn run(paths: &[&Path], extra: &[&str], dir: &Path) -> Result<Finished, Box<dyn Error>> {
    let mut args: Vec<String> = vec!["run".into()];
    args.extend(paths.iter().map(|p| p.display().to_string()));
    args.extend(FAST.iter().map(|s| s.to_string()));
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let finished = run_host_within(&args, dir, BOUND)?;
    for text in [&finished.stdout, &finished.stderr] {
        assert!(!text.contains("panicked"), "a panic:\n{text}");
    }
    Ok(finished)
}

/// The error row of a single-workload run: exit 1, one failed row whose
/// one-line error names the file and contains `cause`.
fn assert_fails_with(file: &Path, cause: &str) -> TestResult {
    let dir = tempfile::tempdir()?;
    let json = dir.path().join("out.json");
    let json_flag = json.display().to_string();
    let finished = run(&[file], &["--export-json", &json_flag], dir.path())?;
    assert_eq!(finished.status.code(), Some(1), "{finished:?}");
    let report: Value = serde_json::from_slice(&std::fs::read(&json)?)?;
    e2e::validate_export(&report)?;
    let results = report["results"].as_array().ok_or("no results")?;
    assert_eq!(results.len(), 1, "{report}");
    let error = results[0]["error"].as_str().ok_or("no error")?;
    assert!(!error.contains('\n'), "{error}");
    assert!(error.starts_with(&file.display().to_string()), "{error}");
    assert!(error.contains(cause), "`{cause}` not in: {error}");
    let line = finished
        .stdout
        .lines()
        .find(|l| l.contains("error:"))
        .ok_or("no error line in the table")?;
    assert!(line.contains(cause), "{line}");
    eprintln!(
        "{}: {:.2} s: {error}",
        file.display(),
        finished.elapsed.as_secs_f64()
    );
    Ok(())
}

#[test]
fn infinite_loop_in_run() -> TestResult {
    assert_fails_with(
        &hostile("loop_run.wat"),
        "did not return within --timeout 1s",
    )
}

#[test]
fn infinite_loop_in_setup() -> TestResult {
    assert_fails_with(
        &hostile("loop_setup.wat"),
        "`setup(0)` failed: did not return within --timeout 1s",
    )
}

/// Fast for small counts, never returns for the count the pilot grows to:
/// the pilot stops there, and the error says where it last returned.
#[test]
fn run_that_never_finishes_the_pilots_count() -> TestResult {
    assert_fails_with(&hostile("slow_big.wat"), "(it had returned at count")?;
    assert_fails_with(
        &hostile("slow_big.wat"),
        "did not return within --timeout 1s",
    )
}

#[test]
fn unreachable() -> TestResult {
    assert_fails_with(&hostile("unreachable.wat"), "wasm `unreachable` executed")
}

#[test]
fn integer_divide_by_zero() -> TestResult {
    assert_fails_with(&hostile("div_zero.wat"), "integer divide by zero")
}

#[test]
fn out_of_bounds_load() -> TestResult {
    assert_fails_with(&hostile("out_of_bounds.wat"), "out-of-bounds memory access")
}

#[test]
fn start_function_that_traps() -> TestResult {
    assert_fails_with(&hostile("start_trap.wat"), "instantiation failed")
}

#[test]
fn unbounded_memory_grow_touching_each_page() -> TestResult {
    assert_fails_with(
        &hostile("grow_touch.wat"),
        "refused: over the --max-memory limit of 64 MiB",
    )
}

#[test]
fn huge_initial_memory() -> TestResult {
    assert_fails_with(
        &hostile("huge_memory.wat"),
        "growing linear memory to 4 GiB",
    )
}

#[test]
fn unbounded_table_grow() -> TestResult {
    assert_fails_with(&hostile("table_grow.wat"), "table of")?;
    assert_fails_with(&hostile("table_grow.wat"), "refused")
}

#[test]
fn unbounded_recursion() -> TestResult {
    assert_fails_with(&hostile("recursion.wat"), "stack overflow")
}

#[test]
fn unknown_import() -> TestResult {
    assert_fails_with(
        &hostile("unknown_import.wat"),
        "unknown import `env.system`",
    )
}

/// A workload may import WASI, which grants it nothing: what it writes is
/// discarded (no forged row reaches the table), it finds no folder, no
/// environment and no arguments.
#[test]
fn a_workload_s_wasi_grants_nothing() -> TestResult {
    let dir = tempfile::tempdir()?;
    let json = dir.path().join("out.json");
    let json_flag = json.display().to_string();
    let finished = run(
        &[&e2e::fixture("wasi_write.wat")],
        &["--export-json", &json_flag],
        dir.path(),
    )?;
    assert_eq!(finished.status.code(), Some(0), "{finished:?}");
    assert!(!finished.stdout.contains("FORGED"), "{}", finished.stdout);
    assert!(!finished.stderr.contains("FORGED"), "{}", finished.stderr);
    let report: Value = serde_json::from_slice(&std::fs::read(&json)?)?;
    assert_eq!(report["results"][0]["checksum"], 8, "{report}");
    Ok(())
}

#[test]
fn missing_export() -> TestResult {
    assert_fails_with(
        &hostile("missing_export.wat"),
        "exports no `run(i64, i64) -> i64` function",
    )
}

#[test]
fn mistyped_export() -> TestResult {
    assert_fails_with(
        &hostile("mistyped_export.wat"),
        "export `run` has type (f64) -> f64, expected (i64, i64) -> i64",
    )
}

#[test]
fn not_wasm_at_all() -> TestResult {
    assert_fails_with(&hostile("not_wasm.wasm"), "not a WebAssembly binary")
}

#[test]
fn empty_file() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("empty.wasm");
    std::fs::write(&path, b"")?;
    assert_fails_with(&path, "the file is empty")
}

#[test]
fn truncated_module() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("truncated.wasm");
    let bytes = std::fs::read(workloads().join("xor.wasm"))?;
    std::fs::write(&path, &bytes[..bytes.len() / 2])?;
    assert_fails_with(&path, "does not compile")
}

#[test]
fn damaged_component() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("damaged.wasm");
    let mut bytes = std::fs::read(workloads().join("xor-component.wasm"))?;
    // Overwrite the middle of the component with junk.
    let middle = bytes.len() / 2;
    for b in &mut bytes[middle..middle + 16] {
        *b = 0xff;
    }
    std::fs::write(&path, &bytes)?;
    assert_fails_with(&path, "does not compile")
}

/// Every hostile workload in one folder beside a good one: the good one is
/// measured in full, every other row fails on its own, within its limit.
#[test]
fn a_folder_of_hostile_workloads_beside_a_good_one() -> TestResult {
    let dir = tempfile::tempdir()?;
    let folder = dir.path().join("mixed");
    std::fs::create_dir(&folder)?;
    for entry in std::fs::read_dir(fixture("hostile"))? {
        let path = entry?.path();
        let name = path.file_name().ok_or("no name")?;
        std::fs::copy(&path, folder.join(name))?;
    }
    std::fs::copy(workloads().join("xor.wasm"), folder.join("xor.wasm"))?;
    let finished = run_host_within(
        &[
            "run",
            "mixed",
            "--timeout",
            "1s",
            "--max-memory",
            "64MiB",
            "--samples",
            "50",
            "--export-json",
            "-",
        ],
        dir.path(),
        BOUND,
    )?;
    assert_eq!(finished.status.code(), Some(1), "{}", finished.stderr);
    let report: Value = serde_json::from_str(&finished.stdout)?;
    e2e::validate_export(&report)?;
    let results = report["results"].as_array().ok_or("no results")?;
    let xor = results
        .iter()
        .find(|r| r["name"] == "xor")
        .ok_or("no xor row")?;
    assert!(xor.get("error").is_none(), "{xor}");
    assert_eq!(xor["samples"], 50);
    assert!(
        xor["ns_per_op"]["median"]
            .as_f64()
            .is_some_and(f64::is_finite)
    );
    for r in results
        .iter()
        .filter(|r| r["name"] != "xor" && r["name"] != "slow_big")
    {
        let error = r["error"]
            .as_str()
            .ok_or_else(|| format!("{} was measured", r["name"]))?;
        assert!(!error.contains('\n'));
    }
    Ok(())
}

/// A guest cannot write to the host's stdout: the only output stream it
/// could ask for (WASI) is an unknown import, so `--export-json -` stays
/// pure JSON.
#[test]
fn json_on_stdout_stays_pure() -> TestResult {
    let dir = tempfile::tempdir()?;
    let finished = run(
        &[
            &hostile("unknown_import.wat"),
            &workloads().join("xor.wasm"),
        ],
        &["--export-json", "-"],
        dir.path(),
    )?;
    let report: Value = serde_json::from_str(&finished.stdout)?;
    e2e::validate_export(&report)?;
    assert_eq!(report["results"].as_array().map(Vec::len), Some(2));
    Ok(())
}

/// A workload that returns in the first worker process (its first call has
/// count 1), then hangs in the next (its first call has the count the run
/// fixed): with no check compiled into the guest, the parent kills the
/// worker after `--timeout`; the row fails with the cause, the other row is
/// measured, and the run ends with status 1, not a watchdog's status
/// (issue #11).
#[test]
fn a_hang_after_the_first_process_fails_only_its_row() -> TestResult {
    let dir = tempfile::tempdir()?;
    let folder = dir.path().join("w");
    std::fs::create_dir(&folder)?;
    std::fs::copy(workloads().join("xor.wasm"), folder.join("a_xor.wasm"))?;
    std::fs::copy(hostile("late_hang.wat"), folder.join("late_hang.wat"))?;
    let finished = run_host_within(
        &[
            "run",
            "w",
            "--timeout",
            "1s",
            "--samples",
            "20",
            "--export-json",
            "out.json",
        ],
        dir.path(),
        BOUND,
    )?;
    assert_eq!(finished.status.code(), Some(1), "{finished:?}");
    let report: Value = serde_json::from_slice(&std::fs::read(dir.path().join("out.json"))?)?;
    e2e::validate_export(&report)?;
    assert_eq!(report["results"][0]["name"], "a_xor");
    assert!(report["results"][0].get("error").is_none(), "{report}");
    assert_eq!(report["results"][0]["samples"], 20);
    let error = report["results"][1]["error"]
        .as_str()
        .ok_or("late_hang was measured")?;
    assert!(
        error.contains("late_hang.wat (run): at count")
            && error.contains("did not return within --timeout 1s"),
        "{error}"
    );
    assert!(report["stopped"].is_null(), "{report}");
    Ok(())
}

/// The pid of a worker process of `parent`, once one has started.
#[cfg(target_os = "linux")]
fn worker_of(parent: u32) -> Result<u32, Box<dyn Error>> {
    let start = std::time::Instant::now();
    while start.elapsed() < BOUND {
        let children = std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children"))
            .unwrap_or_default();
        if let Some(pid) = children.split_whitespace().next() {
            return Ok(pid.parse()?);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Err("no worker process started".into())
}

/// Wait until process `pid` has had `cpu` of processor time.
#[cfg(target_os = "linux")]
fn ran_for(pid: u32, cpu: Duration) -> TestResult {
    // /proc counts in USER_HZ ticks, 100 a second on Linux.
    const TICKS: u64 = 100;
    let start = std::time::Instant::now();
    while start.elapsed() < BOUND {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
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
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(format!("process {pid} did not run for {cpu:?} within {BOUND:?}").into())
}

/// The children of process `pid`, from every one of its threads.
#[cfg(target_os = "linux")]
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

/// Wait until process `pid` has started `n` children (worker processes),
/// one after another.
#[cfg(target_os = "linux")]
fn started_workers(pid: u32, n: usize) -> TestResult {
    let start = std::time::Instant::now();
    let mut seen: Vec<u32> = Vec::new();
    while start.elapsed() < BOUND {
        for child in children(pid) {
            if !seen.contains(&child) {
                seen.push(child);
            }
        }
        if seen.len() >= n {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Err(format!(
        "{pid} started {} of {n} workers within {BOUND:?}",
        seen.len()
    )
    .into())
}

/// A worker killed with SIGKILL while it measures: the row it was measuring
/// fails with the signal, a new worker takes the rest, and every other row
/// is measured in full (issue #11).
#[cfg(target_os = "linux")]
#[test]
fn a_worker_killed_mid_run_fails_only_its_row() -> TestResult {
    let dir = tempfile::tempdir()?;
    let folder = dir.path().join("w");
    std::fs::create_dir(&folder)?;
    for name in ["xor.wasm", "mod13.wasm", "mod16.wasm", "chain100.wasm"] {
        std::fs::copy(workloads().join(name), folder.join(name))?;
    }
    // 2000 samples a row, 400 in each of 5 processes: a few tenths of a
    // second a row, so that the first worker is well inside its rows when
    // it is killed.
    let child = spawn_host(
        &["run", "w", "--samples", "2000", "--export-json", "out.json"],
        dir.path(),
    )?;
    let worker = worker_of(child.id())?;
    // Let it load, calibrate and get into its rows (by the processor time
    // it has had, which a loaded machine gives out slowly), then kill it.
    ran_for(worker, Duration::from_millis(800))?;
    let kill = std::process::Command::new("kill")
        .args(["-KILL", &worker.to_string()])
        .status()?;
    assert!(kill.success());
    let finished = e2e::finish_within(child, BOUND)?;
    assert_eq!(finished.status.code(), Some(1), "{finished:?}");
    let report: Value = serde_json::from_slice(&std::fs::read(dir.path().join("out.json"))?)?;
    e2e::validate_export(&report)?;
    let results = report["results"].as_array().ok_or("no results")?;
    assert_eq!(results.len(), 4, "{report}");
    let failed: Vec<&Value> = results
        .iter()
        .filter(|r| r.get("error").is_some())
        .collect();
    assert_eq!(failed.len(), 1, "{report}");
    let error = failed[0]["error"].as_str().unwrap_or("");
    assert!(error.contains("killed by signal 9 (SIGKILL)"), "{error}");
    for r in results.iter().filter(|r| r.get("error").is_none()) {
        assert_eq!(r["samples"], 2000, "{r}");
    }
    Ok(())
}

/// A workload that brings its worker process down (here by the supervisor's
/// fault-injection variable, which makes the worker abort as a crashing
/// guest would): its row fails with the signal and the worker's last words,
/// the others are measured (issue #11).
#[test]
fn a_worker_that_aborts_fails_only_its_row() -> TestResult {
    let dir = tempfile::tempdir()?;
    let xor = workloads().join("xor.wasm").display().to_string();
    let mod16 = workloads().join("mod16.wasm").display().to_string();
    let child = e2e::prepare(
        std::process::Command::new(e2e::host_binary())
            .args(["run", &xor, &mod16, "--samples", "20", "--export-json", "-"])
            .env("WASM_BENCH_WORKER_ABORT_ON", "mod16")
            .current_dir(dir.path())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped()),
    )
    .spawn()?;
    let finished = e2e::finish_within(child, BOUND)?;
    assert_eq!(finished.status.code(), Some(1), "{finished:?}");
    let report: Value = serde_json::from_str(&finished.stdout)?;
    e2e::validate_export(&report)?;
    assert!(report["results"][0].get("error").is_none(), "{report}");
    assert_eq!(report["results"][0]["samples"], 20);
    let error = report["results"][1]["error"]
        .as_str()
        .ok_or("mod16 was measured")?;
    assert!(error.contains("mod16.wasm (run)"), "{error}");
    assert!(error.contains("killed by signal 6 (SIGABRT)"), "{error}");
    Ok(())
}

/// Ctrl-C during a folder run: the rows measured so far (in the processes
/// finished so far) are printed and exported, and the exit status is 130.
#[test]
fn ctrl_c_keeps_the_finished_results() -> TestResult {
    let dir = tempfile::tempdir()?;
    let folder = workloads().display().to_string();
    let child = spawn_host(&["run", &folder, "--export-json", "out.json"], dir.path())?;
    let pid = child.id().to_string();
    // Let at least one row finish: a second worker process starts once the
    // first has measured every row once.
    started_workers(child.id(), 2)?;
    let kill = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()?;
    assert!(kill.success());
    let finished = e2e::finish_within(child, BOUND)?;
    assert_eq!(finished.status.code(), Some(130), "{finished:?}");
    assert!(
        finished
            .stdout
            .contains("stopped early: interrupted (Ctrl-C, SIGTERM or SIGHUP)"),
        "{}",
        finished.stdout
    );
    let report: Value = serde_json::from_slice(&std::fs::read(dir.path().join("out.json"))?)?;
    e2e::validate_export(&report)?;
    let results = report["results"].as_array().ok_or("no results")?;
    assert!(!results.is_empty(), "no finished row was exported");
    // Stopped early: some row was left out, or measured in fewer processes
    // than a full run takes.
    let full = results.len() >= 14 && results.iter().all(|r| r["processes"].as_u64() >= Some(5));
    assert!(!full, "the run was not stopped: {report}");
    for r in results {
        assert!(
            r.get("error").is_none(),
            "an unfinished row was exported: {r}"
        );
    }
    assert_eq!(report["stopped"], "interrupted (Ctrl-C, SIGTERM or SIGHUP)");
    // No temporary file is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
    Ok(())
}
