//! End-to-end test of a busy machine: a run started beside a busy loop on
//! every core, at the same priority, says so in its environment, its header
//! and every row (a call's and a program's), and each interval spans its
//! processes' medians; a run on a quiet machine says nothing of the kind.
//!
//! The busy loops are threads of this test process. A machine that is busy
//! anyway (a shared CI runner) cannot show the quiet half: it is skipped
//! with a message.

use std::error::Error;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use e2e::{finish_within, host_binary, workloads};
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

/// The longest the busy loops spin, whatever happens to the test.
const SPIN_LIMIT: Duration = Duration::from_secs(150);

/// The longest one run of the host may take: a bound against a hang, wide
/// enough for a machine busy with more than this test's loops.
const RUN_LIMIT: Duration = Duration::from_secs(120);

/// What the header and the rows say of a busy machine.
const HEADER: &str = "busy machine: ";
const NOTE: &str = "the machine was busy before the run";

/// One thread spinning on each core until dropped (or [`SPIN_LIMIT`]).
struct BusyLoops {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl BusyLoops {
    fn start() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let stop = Arc::new(AtomicBool::new(false));
        let deadline = Instant::now() + SPIN_LIMIT;
        let threads = (0..cores)
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let mut x = 1u64;
                    while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                        for _ in 0..10_000 {
                            x = std::hint::black_box(x.wrapping_mul(6364136223846793005) ^ 1);
                        }
                    }
                })
            })
            .collect();
        BusyLoops { stop, threads }
    }
}

impl Drop for BusyLoops {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// `host run` of the bundled xor (a call) and fib (a program) with few
/// samples and a compile cache of its own (so that no run history outside
/// `cache` sees it): its JSON report and its table.
fn run_xor_and_fib(cache: &Path) -> Result<(Value, String), Box<dyn Error>> {
    let args = [
        "run",
        "xor.wasm",
        "fib.wasm",
        "--samples",
        "20",
        "--warmup",
        "20ms",
        "--export-json",
        "-",
    ];
    let child = e2e::prepare(
        Command::new(host_binary())
            .args(args)
            .env("WASM_BENCH_CACHE", cache),
    )
    .current_dir(workloads())
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()?;
    let run = finish_within(child, RUN_LIMIT)?;
    assert!(run.status.success(), "{}\n{}", run.stdout, run.stderr);
    let report: Value = serde_json::from_str(&run.stdout)
        .map_err(|e| format!("stdout is not pure JSON ({e}):\n{}", run.stdout))?;
    e2e::validate_export(&report)?;
    Ok((report, run.stderr))
}

/// The two rows of a report: xor's and fib's.
fn the_rows(report: &Value) -> Result<&[Value], Box<dyn Error>> {
    match report["results"].as_array().map(Vec::as_slice) {
        Some(rows @ [_, _]) => Ok(rows),
        _ => Err(format!("not two rows: {report}").into()),
    }
}

/// Whether a row's notes say the machine was busy.
fn says_busy(row: &Value) -> bool {
    row["notes"].as_array().is_some_and(|notes| {
        notes
            .iter()
            .any(|n| n.as_str().is_some_and(|n| n.contains(NOTE)))
    })
}

fn number(value: &Value, key: &str) -> Result<f64, Box<dyn Error>> {
    value[key]
        .as_f64()
        .ok_or_else(|| format!("{key} is not a number: {value}").into())
}

#[test]
fn a_run_beside_busy_loops_says_so_and_a_quiet_run_does_not() -> TestResult {
    let cache = tempfile::tempdir()?;
    // The binary is built (when it must be) before the loops spin: a build
    // beside them could outlast them, and the run would then see a quiet
    // machine.
    host_binary();
    let (report, table) = {
        let _loops = BusyLoops::start();
        std::thread::sleep(Duration::from_millis(200));
        run_xor_and_fib(cache.path())?
    };
    let env = &report["environment"];
    assert_eq!(env["busy_machine"], true, "{env}");
    assert!(
        env["core_loads"].as_array().is_some_and(|l| !l.is_empty()),
        "{env}"
    );
    assert!(
        table.lines().any(|l| l.starts_with(HEADER)
            && l.contains("results may not repeat")
            && l.contains("% busy")),
        "{table}"
    );
    assert_eq!(table.matches(NOTE).count(), 2, "{table}");
    for row in the_rows(&report)? {
        assert!(says_busy(row), "{row}");
        // The interval holds every process's median.
        let ns = &row["ns_per_op"];
        let (low, high) = (number(ns, "ci95_low")?, number(ns, "ci95_high")?);
        let medians = row["process_medians_ns"]
            .as_array()
            .ok_or("no process medians")?;
        for median in medians {
            let median = median.as_f64().ok_or("a process median is not a number")?;
            assert!(low <= median && median <= high, "{median} in {ns}");
        }
    }

    let (report, table) = run_xor_and_fib(cache.path())?;
    if report["environment"]["busy_machine"] == true {
        eprintln!(
            "the machine is busy without the loops ({}): the quiet half is skipped",
            report["environment"]["core_loads"]
        );
        return Ok(());
    }
    assert!(!table.contains(HEADER), "{table}");
    assert!(!table.contains(NOTE), "{table}");
    for row in the_rows(&report)? {
        assert!(!says_busy(row), "{row}");
    }
    Ok(())
}
