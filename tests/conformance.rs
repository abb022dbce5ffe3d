//! One conformance suite, run for every runtime built into the host
//! (wasmtime's Cranelift, Winch and Pulley always; wasmi, wasmer and
//! wasmer-singlepass and tinywasm with the `all-engines` feature: `cargo
//! test --release -p e2e --features all-engines --test conformance`; V8
//! where `node` runs). A runtime that runs no programs (tinywasm, which has
//! no WASI) holds each program property by failing the program's row with
//! a line that says so. Each property is
//! held against a module that would break it, every runtime in one run:
//!
//! - the empty guest reads 0, and a guest that does work does not;
//! - a memory grown past `--max-memory` within one call fails the row;
//! - a table grown past the table limit within one call fails the row;
//! - the time per op does not depend on the count of ops a sample calls;
//! - a program is warmed by iterations until consecutive rounds agree, and
//!   its row says how the warm-up ended;
//! - `--timeout` ends a call that never returns, and the other rows are
//!   measured;
//! - a WASI program cannot write through a link out of its folder, nor
//!   into its folder, which is read-only;
//! - the compile phase is the runtime's own: a warm wasmtime cache is no
//!   other runtime's;
//! - a program row's peak resident memory is its own, not that of a row
//!   measured before it in the same process;
//! - a runtime not built in fails its own rows with a line that says how
//!   to build it, and the other rows are measured;
//! - a program's random numbers are the host's, drawn from the seed: the
//!   same bytes under every runtime for one seed, others for another;
//! - a program's time of day is the host's stepped wall clock: the same
//!   readings under every runtime, unless `--real-clock` grants the
//!   system's.
//!
//! No test asserts a time: only zeros, failures, files and ratios with
//! wide margins.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use e2e::{fixture, host_binary, workloads};
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

/// Every runtime `--engine` names.
const RUNTIMES: [&str; 8] = [
    "cranelift",
    "winch",
    "pulley",
    "wasmi",
    "wasmer",
    "wasmer-singlepass",
    "v8",
    "tinywasm",
];

/// The runtimes of [`RUNTIMES`] that run no WASI programs.
const NO_PROGRAMS: [&str; 1] = ["tinywasm"];

/// Whether `runtime` refused the program of `row`, as a runtime of
/// [`NO_PROGRAMS`] must, with the line that says why: then the row holds
/// no figures to check.
fn refused_program(runtime: &str, row: &Value) -> bool {
    let refuses = NO_PROGRAMS.contains(&runtime);
    if refuses {
        assert!(error(row).contains("not programs"), "{runtime}: {row}");
    }
    refuses
}

/// The longest a run of the suite may take.
const BOUND: Duration = Duration::from_secs(600);

/// Short measuring flags.
const FAST: [&str; 6] = [
    "--warmup",
    "20ms",
    "--sample-time",
    "500us",
    "--samples",
    "10",
];

fn conformance(name: &str) -> PathBuf {
    fixture(&format!("conformance/{name}"))
}

/// The runtimes of [`RUNTIMES`] that run here: built into the host, as
/// `host --version` lists them, and, for V8, with a `node` that `host
/// doctor` finds working.
fn built_in() -> Result<Vec<&'static str>, Box<dyn Error>> {
    let out = Command::new(host_binary()).arg("--version").output()?;
    let version = String::from_utf8(out.stdout)?;
    let missing = version.split("not built in:").nth(1).unwrap_or("");
    let listed = |name: &str| missing.split([',', ' ', '(', ')']).any(|word| word == name);
    let node = node_works()?;
    let built: Vec<&str> = RUNTIMES
        .into_iter()
        .filter(|r| !listed(r) && (*r != "v8" || node))
        .collect();
    for runtime in RUNTIMES.iter().filter(|r| !built.contains(r)) {
        eprintln!("{runtime} does not run here: its properties are not checked here");
    }
    Ok(built)
}

/// Whether `host doctor` finds a working `node` for `--engine v8`.
fn node_works() -> Result<bool, Box<dyn Error>> {
    let out = Command::new(host_binary())
        .args(["doctor", "--json"])
        .output()?;
    let findings: Value = serde_json::from_slice(&out.stdout)?;
    let v8 = findings
        .as_array()
        .and_then(|all| all.iter().find(|f| f["topic"] == "v8"))
        .ok_or("no v8 finding in `host doctor --json`")?;
    Ok(v8["status"] == "ok")
}

/// `host run FILES` under every runtime of `runtimes`, with `extra`
/// arguments, in `dir` with its own cache and store: the exit code and
/// the report.
fn run(
    files: &[PathBuf],
    runtimes: &[&str],
    extra: &[&str],
    dir: &Path,
) -> Result<(Option<i32>, Value), Box<dyn Error>> {
    let mut command = Command::new(host_binary());
    command.arg("run").args(files).args(extra);
    for runtime in runtimes {
        command.args(["--engine", runtime]);
    }
    command
        .args(["--export-json", "-"])
        .current_dir(dir)
        .env("WASM_BENCH_CACHE", dir.join("cache"))
        .env("WASM_BENCH_STORE", dir.join("store"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let finished = e2e::finish_within(e2e::prepare(&mut command).spawn()?, BOUND)?;
    assert!(!finished.stderr.contains("panicked"), "{}", finished.stderr);
    let report: Value = serde_json::from_str(&finished.stdout).map_err(|e| {
        format!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            finished.stdout, finished.stderr
        )
    })?;
    e2e::validate_export(&report)?;
    Ok((finished.status.code(), report))
}

/// The row of `file`'s stem under `runtime`.
fn row<'a>(report: &'a Value, stem: &str, runtime: &str) -> Result<&'a Value, Box<dyn Error>> {
    let rows = report["results"].as_array().ok_or("no results")?;
    let single = rows.len() == 1;
    rows.iter()
        .find(|r| r["name"] == format!("{stem}[{runtime}]") || (single && r["name"] == stem))
        .ok_or_else(|| format!("no row {stem}[{runtime}]: {report}").into())
}

fn error(row: &Value) -> &str {
    row["error"].as_str().unwrap_or("")
}

/// The empty guest reads 0 within 0.05 ns under every runtime, and xor,
/// which does work, reads more.
#[test]
fn the_empty_guest_reads_zero_and_a_working_one_does_not() -> TestResult {
    let runtimes = built_in()?;
    let dir = tempfile::tempdir()?;
    let files = [workloads().join("empty.wasm"), workloads().join("xor.wasm")];
    let (_, report) = run(&files, &runtimes, &FAST, dir.path())?;
    for runtime in &runtimes {
        let empty = row(&report, "empty", runtime)?;
        assert!(empty["error"].is_null(), "{runtime}: {empty}");
        let median = empty["ns_per_op"]["median"].as_f64().ok_or("no median")?;
        assert!(
            median.abs() <= 0.05,
            "{runtime}: the empty guest reads {median} ns"
        );
        let xor = row(&report, "xor", runtime)?;
        let median = xor["ns_per_op"]["median"].as_f64().ok_or("no median")?;
        assert!(median > 0.05, "{runtime}: xor reads {median} ns");
    }
    Ok(())
}

/// A `run` that grows its memory to 4 MiB within the one call fails its
/// row under `--max-memory 2MiB` under every runtime, and is measured
/// under 64 MiB.
#[test]
fn a_memory_grown_past_the_limit_within_one_call_fails_the_row() -> TestResult {
    the_limit_holds_within_one_call("grow_in_run")
}

/// A `run` that grows a table to 1,048,576 elements within the one call
/// fails its row under `--max-memory 2MiB` (a table limit of 262,144
/// elements) under every runtime, and is measured under 64 MiB.
#[test]
fn a_table_grown_past_the_limit_within_one_call_fails_the_row() -> TestResult {
    the_limit_holds_within_one_call("grow_table_in_run")
}

/// The workload `stem` fails its row under `--max-memory 2MiB`, and is
/// measured under 64 MiB, under every runtime.
fn the_limit_holds_within_one_call(stem: &str) -> TestResult {
    let runtimes = built_in()?;
    let dir = tempfile::tempdir()?;
    let files = [conformance(&format!("{stem}.wat"))];
    for (limit, fails) in [("2MiB", true), ("64MiB", false)] {
        let mut extra = FAST.to_vec();
        extra.extend(["--max-memory", limit]);
        let (_, report) = run(&files, &runtimes, &extra, dir.path())?;
        for runtime in &runtimes {
            let row = row(&report, stem, runtime)?;
            assert_eq!(
                !error(row).is_empty(),
                fails,
                "{runtime} under --max-memory {limit}: {row}"
            );
        }
    }
    Ok(())
}

/// xor's time per op under every runtime is the same, within a wide
/// margin (a factor of 1.5 either way, which no load reaches with the two
/// runs side by side), whether a sample calls it with 20,000 ops or with
/// 320,000: the fixed cost of a call is not in the time per op. Each run
/// is read at its fastest process, the one load disturbed least (a loaded
/// machine once slowed five of a run's eight processes under pulley, 2.8
/// to 4.4 ns at the median); under wasmer-singlepass, whose
/// xor runs at one of two speeds a process (about 0.25 and 0.47 ns, in
/// proportions that change from run to run, whatever the count), and
/// under wasmi, whose speed differs from process to process (1.37 to
/// 2.43 ns across the eight processes of one run), the processes of the
/// two runs must overlap instead.
#[test]
fn the_time_per_op_does_not_depend_on_the_count() -> TestResult {
    let runtimes = built_in()?;
    let dir = tempfile::tempdir()?;
    let files = [workloads().join("xor.wasm")];
    let mut runs = Vec::new();
    for count in ["20000", "320000"] {
        let mut extra = FAST.to_vec();
        extra.extend(["--count", count, "--processes", "8"]);
        let (_, report) = run(&files, &runtimes, &extra, dir.path())?;
        runs.push(report);
    }
    for runtime in &runtimes {
        let (few, many) = (
            row(&runs[0], "xor", runtime)?,
            row(&runs[1], "xor", runtime)?,
        );
        let (a, b) = (process_medians(few)?, process_medians(many)?);
        let why = format!("{runtime}: processes at 20,000 ops {a:?} ns, at 320,000 {b:?} ns");
        let fastest = |m: &[f64]| m[0];
        match ["wasmer-singlepass", "wasmi"].contains(runtime) {
            true => assert!(
                a[0] / 1.5 < b[b.len() - 1] && b[0] / 1.5 < a[a.len() - 1],
                "{why}"
            ),
            false => assert!(
                (1.0 / 1.5..1.5).contains(&(fastest(&a) / fastest(&b))),
                "{why}"
            ),
        }
    }
    Ok(())
}

/// A program is warmed by untimed iterations under every runtime, as
/// workloads are: in one process, a warm-up that settled compared at least
/// two windows of three iterations (six or more), and one that did not
/// settle went on to its cap and says so in a note of the row.
#[test]
fn a_program_is_warmed_until_its_iterations_agree() -> TestResult {
    let runtimes = built_in()?;
    let dir = tempfile::tempdir()?;
    let files = [fixture("programs/spin.wat")];
    let extra = ["--warmup", "3s", "--samples", "3", "--processes", "1"];
    let (_, report) = run(&files, &runtimes, &extra, dir.path())?;
    for runtime in &runtimes {
        let spin = row(&report, "spin", runtime)?;
        if refused_program(runtime, spin) {
            continue;
        }
        assert!(spin["error"].is_null(), "{runtime}: {spin}");
        let rounds = spin["warmup_rounds"].as_u64().ok_or("no warm-up rounds")?;
        match spin["warmup_settled"].as_bool() {
            Some(true) => assert!(rounds >= 6, "{runtime}: settled after {rounds}"),
            _ => {
                let ms = spin["warmup_ms"].as_f64().ok_or("no warm-up time")?;
                assert!(ms >= 3000.0, "{runtime}: ended at {ms} ms: {spin}");
                let notes = spin["notes"].to_string();
                assert!(notes.contains("did not settle"), "{runtime}: {notes}");
            }
        }
    }
    Ok(())
}

/// The medians of a row's processes, in order.
fn process_medians(row: &Value) -> Result<Vec<f64>, Box<dyn Error>> {
    let mut medians: Vec<f64> = row["process_medians_ns"]
        .as_array()
        .ok_or_else(|| format!("no process medians: {row}"))?
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    if medians.is_empty() {
        return Err(format!("no process medians: {row}").into());
    }
    medians.sort_by(f64::total_cmp);
    Ok(medians)
}

/// A `run` that never returns is ended by `--timeout` under every
/// runtime, its row failing with the deadline; xor, in the same run, is
/// measured.
#[test]
fn the_timeout_ends_a_call_that_never_returns() -> TestResult {
    let runtimes = built_in()?;
    let dir = tempfile::tempdir()?;
    let files = [conformance("hang.wat"), workloads().join("xor.wasm")];
    let mut extra = FAST.to_vec();
    extra.extend(["--timeout", "2s", "--processes", "1"]);
    let (code, report) = run(&files, &runtimes, &extra, dir.path())?;
    assert_eq!(code, Some(1), "{report}");
    for runtime in &runtimes {
        let hang = row(&report, "hang", runtime)?;
        assert!(error(hang).contains("--timeout"), "{runtime}: {hang}");
        let xor = row(&report, "xor", runtime)?;
        assert!(xor["error"].is_null(), "{runtime}: {xor}");
    }
    Ok(())
}

/// A program whose folder holds a link to a file outside and a link to a
/// folder outside cannot, under any runtime, truncate that file, write
/// into it, or make a file in that folder.
#[test]
fn a_program_cannot_write_through_a_link_out_of_its_folder() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (outside, folder) = (dir.path().join("outside"), dir.path().join("program"));
    std::fs::create_dir(&outside)?;
    std::fs::create_dir(&folder)?;
    std::fs::write(outside.join("secret.txt"), "the original words\n")?;
    std::os::unix::fs::symlink("../outside/secret.txt", folder.join("link.txt"))?;
    std::os::unix::fs::symlink("../outside", folder.join("dir"))?;
    run_the_writer(dir.path(), &folder, &outside.join("secret.txt"))?;
    assert!(!outside.join("made.txt").exists());
    Ok(())
}

/// A program cannot, under any runtime, truncate a file of its own
/// folder, write into it, or make a file in a folder of its own folder:
/// the folder is read-only.
#[test]
fn a_programs_own_folder_is_read_only() -> TestResult {
    let dir = tempfile::tempdir()?;
    let folder = dir.path().join("program");
    std::fs::create_dir_all(folder.join("dir"))?;
    std::fs::write(folder.join("link.txt"), "the original words\n")?;
    run_the_writer(dir.path(), &folder, &folder.join("link.txt"))?;
    assert!(!folder.join("dir/made.txt").exists());
    Ok(())
}

/// The conformance fixture `name`, copied into `folder`: its path there.
fn copied(folder: &Path, name: &str) -> Result<PathBuf, Box<dyn Error>> {
    let path = folder.join(name);
    std::fs::copy(conformance(name), &path)?;
    Ok(path)
}

/// Run write_through_link.wat from `folder` under every runtime, in `dir`:
/// each runtime has its row, and `kept` (which `link.txt` is, or leads to)
/// still holds its original words.
fn run_the_writer(dir: &Path, folder: &Path, kept: &Path) -> TestResult {
    let runtimes = built_in()?;
    let program = copied(folder, "write_through_link.wat")?;
    let mut extra = FAST.to_vec();
    extra[5] = "2";
    let (_, report) = run(&[program], &runtimes, &extra, dir)?;
    for runtime in &runtimes {
        refused_program(runtime, row(&report, "write_through_link", runtime)?);
    }
    assert_eq!(
        std::fs::read_to_string(kept)?,
        "the original words\n",
        "{report}"
    );
    Ok(())
}

/// With the wasmtime cache warm from a first run, wasmtime's rows read
/// their code from it (`hit`), while every other runtime's rows, workload
/// and program, report the compile their runtime did in the worker (no
/// cache: `off`), never wasmtime's cache load.
#[test]
fn the_compile_phase_is_the_runtimes_own() -> TestResult {
    let runtimes = built_in()?;
    let dir = tempfile::tempdir()?;
    let files = [workloads().join("xor.wasm"), workloads().join("fib.wasm")];
    let mut extra = FAST.to_vec();
    extra[5] = "2";
    run(&files, &runtimes, &extra, dir.path())?;
    let (_, report) = run(&files, &runtimes, &extra, dir.path())?;
    for runtime in &runtimes {
        let wasmtime = ["cranelift", "winch", "pulley"].contains(runtime);
        let xor = row(&report, "xor", runtime)?;
        assert!(xor["error"].is_null(), "{runtime}: {xor}");
        let cache = if wasmtime { "hit" } else { "off" };
        assert_eq!(xor["compile_cache"], cache, "{runtime}: {xor}");
        let fib = row(&report, "fib", runtime)?;
        if refused_program(runtime, fib) {
            continue;
        }
        assert!(fib["error"].is_null(), "{runtime}: {fib}");
        let phase = fib["phases"]["compile_ms"].as_f64().ok_or("no compile")?;
        assert!(phase > 0.0, "{runtime}: {fib}");
        assert_eq!(fib["compile_cache"], cache, "{runtime}: {fib}");
    }
    Ok(())
}

/// A program that touches 192 MiB, then a small one, in one process: the
/// small one's peak resident memory is not the big one's (it reads at
/// least 128 MiB less), under every runtime.
#[test]
fn a_rows_peak_resident_memory_is_its_own() -> TestResult {
    let runtimes = built_in()?;
    let dir = tempfile::tempdir()?;
    let files = [
        conformance("big_then_gone.wat"),
        fixture("programs/hello.wat"),
    ];
    let extra = ["--warmup", "20ms", "--samples", "2", "--processes", "1"];
    let (_, report) = run(&files, &runtimes, &extra, dir.path())?;
    for runtime in &runtimes {
        if refused_program(runtime, row(&report, "hello", runtime)?) {
            continue;
        }
        let peak = |stem: &str| -> Result<u64, Box<dyn Error>> {
            let row = row(&report, stem, runtime)?;
            assert!(row["error"].is_null(), "{runtime}: {row}");
            Ok(row["peak_rss_bytes"].as_u64().ok_or("no peak")?)
        };
        let (big, small) = (peak("big_then_gone")?, peak("hello")?);
        assert!(
            small + (128 << 20) < big,
            "{runtime}: the small program's peak {small} B, the big one's {big} B"
        );
    }
    Ok(())
}

/// Every runtime not built into the host fails its own rows with a line
/// that says how to build it, while wasmtime's row of the same run is
/// measured; `--version` and the rows agree on what is built in.
#[test]
fn a_runtime_not_built_in_fails_its_own_rows_and_says_how() -> TestResult {
    let built = built_in()?;
    let dir = tempfile::tempdir()?;
    let (_, report) = run(
        &[workloads().join("xor.wasm")],
        &RUNTIMES,
        &FAST,
        dir.path(),
    )?;
    for runtime in RUNTIMES {
        let row = row(&report, "xor", runtime)?;
        if built.contains(&runtime) {
            assert!(row["error"].is_null(), "{runtime}: {row}");
        } else if runtime == "v8" {
            assert!(error(row).contains("Node.js"), "{runtime}: {row}");
        } else {
            let error = error(row);
            assert!(
                error.contains("built without") && error.contains("--features all-engines"),
                "{runtime}: {error}"
            );
        }
    }
    Ok(())
}

/// `host run --help` and `host compare --help` name every runtime and
/// alias, and say which are built in.
#[test]
fn the_help_names_every_runtime() -> TestResult {
    for command in ["run", "compare"] {
        let out = Command::new(host_binary())
            .args([command, "--help"])
            .output()?;
        let help = String::from_utf8(out.stdout)?;
        for name in RUNTIMES
            .iter()
            .chain(&["v8", "wasmtime", "singlepass", "node"])
        {
            assert!(
                help.contains(name),
                "{command} --help lacks {name}:\n{help}"
            );
        }
        assert!(help.contains("built in"), "{help}");
        assert!(help.contains("--huge-pages"), "{help}");
    }
    Ok(())
}

/// The rows of program `stem` in `report`, one per runtime of `runtimes`
/// that runs programs (one of [`NO_PROGRAMS`] must refuse it, which
/// [`refused_program`] checks).
fn program_rows<'a>(
    report: &'a Value,
    stem: &str,
    runtimes: &[&'static str],
) -> Result<Vec<(&'static str, &'a Value)>, Box<dyn Error>> {
    let mut rows = Vec::new();
    for &runtime in runtimes {
        let found = row(report, stem, runtime)?;
        if !refused_program(runtime, found) {
            rows.push((runtime, found));
        }
    }
    Ok(rows)
}

/// The bytes a program seeded 7 reads first from `random_get` (the host's
/// generator, pinned in its unit tests too).
const SEVEN: [u8; 5] = [65, 164, 74, 60, 198];

/// A program's random numbers come from the seed under every runtime: the
/// output of a program that writes what two `random_get` calls gave it,
/// saved under cranelift with `--seed 7 --same-seed`, begins with the
/// generator's bytes for 7, and every runtime's iterations write it again
/// (the output check holds); seeded 8, they write other bytes (it fails).
#[test]
fn a_program_reads_the_same_random_numbers_under_every_runtime() -> TestResult {
    let runtimes = built_in()?;
    let dir = tempfile::tempdir()?;
    let program = copied(dir.path(), "random.wat")?;
    let files = [program];
    let seeded = |seed| {
        let mut extra = FAST.to_vec();
        extra.extend(["--processes", "1", "--seed", seed, "--same-seed"]);
        extra
    };
    let mut save = seeded("7");
    save.push("--save-expected");
    let (code, report) = run(&files, &["cranelift"], &save, dir.path())?;
    assert_eq!(code, Some(0), "{report}");
    let saved = std::fs::read(dir.path().join("random.stdout.expected"))?;
    assert_eq!(saved.len(), 32);
    assert_eq!(saved[..5], SEVEN);
    let (_, report) = run(&files, &runtimes, &seeded("7"), dir.path())?;
    for (runtime, random) in program_rows(&report, "random", &runtimes)? {
        assert!(random["error"].is_null(), "{runtime}, seed 7: {random}");
    }
    let (_, report) = run(&files, &runtimes, &seeded("8"), dir.path())?;
    for (runtime, random) in program_rows(&report, "random", &runtimes)? {
        assert!(
            error(random).contains("stdout"),
            "{runtime}, seed 8: {random}"
        );
    }
    Ok(())
}

/// What the clock program writes under the stepped wall clock: its first
/// two readings (2020-01-01T00:00:00Z, then 1 µs more) and its resolution
/// (1 µs), little-endian.
fn stepped_readings() -> Vec<u8> {
    [
        1_577_836_800_000_000_000u64,
        1_577_836_800_000_001_000,
        1_000,
    ]
    .iter()
    .flat_map(|v| v.to_le_bytes())
    .collect()
}

/// A program's time of day is the host's stepped wall clock under every
/// runtime: the output of a program that writes its wall clock's readings,
/// saved under cranelift, is [`stepped_readings`], and every runtime's
/// iterations write it again (the output check holds); with
/// `--real-clock`, they read the system's time of day and write something
/// else (it fails).
#[test]
fn a_program_reads_the_same_time_of_day_under_every_runtime() -> TestResult {
    let runtimes = built_in()?;
    let dir = tempfile::tempdir()?;
    let program = copied(dir.path(), "clock.wat")?;
    let files = [program];
    let once = |extra: &[&'static str]| {
        let mut all = FAST.to_vec();
        all.extend(["--processes", "1"]);
        all.extend(extra);
        all
    };
    let (code, report) = run(
        &files,
        &["cranelift"],
        &once(&["--save-expected"]),
        dir.path(),
    )?;
    assert_eq!(code, Some(0), "{report}");
    let saved = std::fs::read(dir.path().join("clock.stdout.expected"))?;
    assert_eq!(saved, stepped_readings());
    let (_, report) = run(&files, &runtimes, &once(&[]), dir.path())?;
    for (runtime, clock) in program_rows(&report, "clock", &runtimes)? {
        assert!(clock["error"].is_null(), "{runtime}: {clock}");
    }
    let (_, report) = run(&files, &runtimes, &once(&["--real-clock"]), dir.path())?;
    for (runtime, clock) in program_rows(&report, "clock", &runtimes)? {
        assert!(
            error(clock).contains("stdout"),
            "{runtime}, --real-clock: {clock}"
        );
    }
    Ok(())
}
