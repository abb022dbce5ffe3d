//! End-to-end tests of the promises `--engine v8` keeps as wasmtime does
//! (skipped with a message where `node` is missing): a program warmed up
//! until its times settle, and the row saying how the warm-up ended; V8's
//! own compile and instantiation as the row's phases; `--max-memory` and
//! the table limit held within one call; a `node` that is missing, hangs,
//! answers garbage or leaves children behind failing only the v8 rows,
//! with nothing left running; a program kept to a private copy of its
//! folder. No test asserts a time.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use e2e::{fixture, workloads};
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

const BOUND: Duration = Duration::from_secs(300);

/// `host run FILES --engine E... ARGS --export-json -` in `dir`, with the
/// cache in `dir/cache` and `node` as `node` says (`None`: the PATH's):
/// the exit code, the report and stderr.
fn run(
    files: &[&Path],
    engines: &[&str],
    args: &[&str],
    dir: &Path,
    node: Option<&Path>,
) -> Result<(Option<i32>, Value, String), Box<dyn Error>> {
    let mut command = Command::new(e2e::host_binary());
    command.arg("run").args(files);
    for engine in engines {
        command.args(["--engine", engine]);
    }
    command
        .args(args)
        .args(["--export-json", "-"])
        .current_dir(dir)
        .env("WASM_BENCH_CACHE", dir.join("cache"))
        .env_remove("WASM_BENCH_USE_SMALL_WORKLOAD")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match node {
        Some(node) => command.env("WASM_BENCH_NODE", node),
        None => command.env_remove("WASM_BENCH_NODE"),
    };
    let finished = e2e::finish_within(e2e::prepare(&mut command).spawn()?, BOUND)?;
    assert!(!finished.stderr.contains("panicked"), "{}", finished.stderr);
    let report: Value = serde_json::from_str(&finished.stdout).map_err(|e| {
        format!(
            "{e}: stdout {} / stderr {}",
            finished.stdout, finished.stderr
        )
    })?;
    e2e::validate_export(&report)?;
    Ok((finished.status.code(), report, finished.stderr))
}

fn row<'a>(report: &'a Value, name: &str) -> Result<&'a Value, Box<dyn Error>> {
    report["results"]
        .as_array()
        .ok_or("no results")?
        .iter()
        .find(|r| r["name"] == name)
        .ok_or_else(|| format!("no row {name}: {report}").into())
}

fn error_of<'a>(report: &'a Value, name: &str) -> Result<&'a str, Box<dyn Error>> {
    Ok(row(report, name)?["error"].as_str().unwrap_or(""))
}

/// Whether `node` runs here (with a message when it does not).
fn v8_here(dir: &Path) -> Result<bool, Box<dyn Error>> {
    let hello = fixture("programs/hello.wat");
    let (_, report, _) = run(&[&hello], &["v8"], &["--samples", "2"], dir, None)?;
    let error = error_of(&report, "hello")?;
    if error.contains("needs Node.js") {
        eprintln!("skipped: --engine v8 is not available here ({error})");
        return Ok(false);
    }
    Ok(true)
}

/// Write `text` to `dir/name` and return its path.
fn write(dir: &Path, name: &str, text: &str) -> Result<PathBuf, Box<dyn Error>> {
    let path = dir.join(name);
    std::fs::write(&path, text)?;
    Ok(path)
}

/// A program under V8 is warmed up by the rule that warms workloads: it
/// settles after at least two windows of rounds (six iterations a
/// process), or stops at the cap; the row says which, in its JSON and on
/// the terminal. With a cap of a millisecond, one iteration a process.
#[test]
fn a_program_is_warmed_up_until_it_settles_or_the_cap() -> TestResult {
    let dir = tempfile::tempdir()?;
    if !v8_here(dir.path())? {
        return Ok(());
    }
    let wc = workloads().join("wc.wasm");
    let args = ["--processes", "2", "--samples", "6", "--warmup", "3s"];
    let (_, report, _) = run(&[&wc], &["v8"], &args, dir.path(), None)?;
    let row = row(&report, "wc")?;
    assert!(row["error"].is_null(), "{row}");
    let rounds = row["warmup_rounds"].as_u64().ok_or("no rounds")?;
    match row["warmup_settled"].as_bool() {
        Some(true) => assert!(rounds >= 2 * 6, "{row}"),
        Some(false) => assert!(
            row["warmup_ms"]
                .as_f64()
                .is_some_and(|ms| ms >= 2.0 * 3000.0),
            "{row}"
        ),
        None => return Err(format!("no warm-up: {row}").into()),
    }

    let args = ["--processes", "2", "--samples", "2", "--warmup", "1ms"];
    let mut command = Command::new(e2e::host_binary());
    command
        .arg("run")
        .arg(&wc)
        .args(["--engine", "v8"])
        .args(args)
        .env("WASM_BENCH_CACHE", dir.path().join("cache"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let finished = e2e::finish_within(e2e::prepare(&mut command).spawn()?, BOUND)?;
    assert!(
        finished
            .stdout
            .contains("warm-up stopped at the cap after 2 iterations"),
        "{}\n{}",
        finished.stdout,
        finished.stderr
    );
    Ok(())
}

/// The compile and instantiate phases of a v8 row are V8's, timed by Node
/// (not the parent's wasmtime compile, nor its load from the cache): with
/// wasmtime's compiled code in the cache, the v8 row says nothing of the
/// cache and its code came from no cache; a program's phases and a
/// workload's durations alike.
#[test]
fn compile_and_instantiate_are_v8s_own() -> TestResult {
    let dir = tempfile::tempdir()?;
    if !v8_here(dir.path())? {
        return Ok(());
    }
    let wc = workloads().join("wc.wasm");
    let xor = workloads().join("xor.wasm");
    let files = [wc.as_path(), xor.as_path()];
    let args = ["--samples", "3", "--warmup", "20ms"];
    // The first run fills the cache; the second loads wasmtime's code
    // from it.
    run(&files, &["cranelift", "v8"], &args, dir.path(), None)?;
    let (_, report, stderr) = run(&files, &["cranelift", "v8"], &args, dir.path(), None)?;
    for name in ["wc[v8]", "xor[v8]"] {
        let row = row(&report, name)?;
        assert!(row["error"].is_null(), "{row}");
        assert_eq!(row["compile_cache"], "off", "{row}");
        assert!(!row["info"].to_string().contains("cache"), "{row}");
        let compile = row["compile_ms"].as_f64().ok_or("no compile")?;
        assert!(compile > 0.0, "{row}");
    }
    let program = row(&report, "wc[v8]")?;
    assert!(
        program["phases"]["compile_ms"]
            .as_f64()
            .is_some_and(|ms| ms > 0.0),
        "{program}"
    );
    let cranelift = row(&report, "wc[cranelift]")?;
    assert_eq!(cranelift["compile_cache"], "hit", "{cranelift}");
    assert!(
        cranelift["info"]
            .to_string()
            .contains("loaded from the cache"),
        "{cranelift}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    Ok(())
}

/// A workload whose one call grows its memory (or its table) past the
/// limit is refused within that call, as under wasmtime: the guest sees
/// `memory.grow` (`table.grow`) return -1 and traps, which fails its v8
/// row; with room enough, the same call returns.
#[test]
fn growth_past_the_limits_within_one_call_fails_the_v8_row() -> TestResult {
    let dir = tempfile::tempdir()?;
    if !v8_here(dir.path())? {
        return Ok(());
    }
    // 512 pages: 32 MiB of memory; 3 000 000 table elements.
    let memory = write(
        dir.path(),
        "grow_memory.wat",
        r#"(module
  (memory (export "memory") 1)
  (func (export "run") (param i64 i64) (result i64)
    (if (i32.eq (memory.grow (i32.const 512)) (i32.const -1))
      (then unreachable))
    (i64.const 1)))"#,
    )?;
    let table = write(
        dir.path(),
        "grow_table.wat",
        r#"(module
  (table 1 funcref)
  (func (export "run") (param i64 i64) (result i64)
    (if (i32.eq (table.grow (ref.null func) (i32.const 3000000)) (i32.const -1))
      (then unreachable))
    (i64.const 1)))"#,
    )?;
    let files = [memory.as_path(), table.as_path()];
    let quick = ["--samples", "2", "--warmup", "1ms", "--count", "1"];
    let limited = [&quick[..], &["--max-memory", "16MiB"]].concat();
    let (_, report, _) = run(&files, &["v8"], &limited, dir.path(), None)?;
    for name in ["grow_memory", "grow_table"] {
        let error = error_of(&report, name)?;
        assert!(error.contains("unreachable"), "{name}: {report}");
    }
    let roomy = [&quick[..], &["--max-memory", "1GiB"]].concat();
    let (_, report, _) = run(&files, &["v8"], &roomy, dir.path(), None)?;
    for name in ["grow_memory", "grow_table"] {
        let row = row(&report, name)?;
        // Once grown, a second call grows again: the first call returned.
        let error = row["error"].as_str().unwrap_or("");
        assert!(!error.contains("limit"), "{name}: {row}");
    }
    Ok(())
}

/// A fake `node`: a shell script that answers the version question as
/// Node.js does and then does `then` for every other start.
fn fake_node(dir: &Path, then: &str) -> Result<PathBuf, Box<dyn Error>> {
    let path = dir.join("node");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\ncase \"$1\" in -p) echo 'node v20.0.0, V8 11.3.0'; exit 0;; esac\n{then}\n"
        ),
    )?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    Ok(path)
}

/// The processes running `sleep MARK`, from `/proc`.
fn running(mark: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .filter(|e| {
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            let zombie = stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            !zombie && String::from_utf8_lossy(&cmdline).contains(mark)
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// cranelift's and v8's rows of wc under `node`: the cranelift row is
/// measured, the run does not abort (no exit code 2), and the v8 row's
/// error is returned.
fn only_v8_fails(dir: &Path, node: &Path) -> Result<String, Box<dyn Error>> {
    let wc = workloads().join("wc.wasm");
    let args = ["--samples", "2", "--warmup", "1ms", "--timeout", "5s"];
    let (code, report, stderr) = run(&[&wc], &["cranelift", "v8"], &args, dir, Some(node))?;
    assert_ne!(code, Some(2), "{report}\n{stderr}");
    let cranelift = row(&report, "wc[cranelift]")?;
    assert!(cranelift["error"].is_null(), "{cranelift}");
    let error = error_of(&report, "wc[v8]")?;
    assert!(!error.is_empty(), "{report}");
    Ok(error.to_string())
}

/// A missing `$WASM_BENCH_NODE`, or one that answers the version question
/// with garbage, fails the v8 rows with a line that says how to fix it.
#[test]
fn a_missing_or_broken_node_fails_only_the_v8_rows() -> TestResult {
    let dir = tempfile::tempdir()?;
    let missing = dir.path().join("no-such-node");
    let error = only_v8_fails(dir.path(), &missing)?;
    assert!(error.contains("WASM_BENCH_NODE"), "{error}");

    let garbage = dir.path().join("garbage");
    std::fs::create_dir(&garbage)?;
    let node = fake_node(&garbage, "")?;
    std::fs::write(&node, "#!/bin/sh\necho 'hello there'\n")?;
    let error = only_v8_fails(dir.path(), &node)?;
    assert!(
        error.contains("does not answer as Node.js does") && error.contains("WASM_BENCH_NODE"),
        "{error}"
    );
    Ok(())
}

/// A `node` that answers its requests with garbage, or floods them, fails
/// the v8 rows; the other engine's are measured.
#[test]
fn a_node_that_answers_garbage_fails_only_the_v8_rows() -> TestResult {
    let dir = tempfile::tempdir()?;
    let node = fake_node(dir.path(), "while read line; do echo 'ok ok ok'; done")?;
    let error = only_v8_fails(dir.path(), &node)?;
    assert!(error.contains("node"), "{error}");

    let flood = dir.path().join("flood");
    std::fs::create_dir(&flood)?;
    let node = fake_node(&flood, "yes 'garbage garbage garbage'")?;
    let error = only_v8_fails(dir.path(), &node)?;
    assert!(error.contains("node"), "{error}");
    Ok(())
}

/// A `node` that hangs, having started a child, is killed by the deadline
/// with its child: the v8 rows fail, the others are measured, and nothing
/// it started is left running.
#[test]
fn a_hung_node_and_its_child_are_ended() -> TestResult {
    let dir = tempfile::tempdir()?;
    let mark = format!("{}.{}", 4000 + std::process::id() % 1000, 7);
    let node = fake_node(dir.path(), &format!("sleep {mark} &\nsleep {mark}\ntrue"))?;
    let error = only_v8_fails(dir.path(), &node)?;
    assert!(error.contains("killed"), "{error}");
    let since = std::time::Instant::now();
    while !running(&mark).is_empty() && since.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        running(&mark).is_empty(),
        "left running: {:?}",
        running(&mark)
    );
    Ok(())
}

/// A program under V8 gets a private copy of its folder: writing through
/// a link out of its folder touches nothing outside, and what it writes
/// into its folder does not survive the row.
#[test]
fn a_v8_program_touches_nothing_outside_its_copy() -> TestResult {
    let dir = tempfile::tempdir()?;
    if !v8_here(dir.path())? {
        return Ok(());
    }
    let target = write(dir.path(), "precious.txt", "precious\n")?;
    let folder = dir.path().join("program");
    std::fs::create_dir(&folder)?;
    std::os::unix::fs::symlink(&target, folder.join("link.txt"))?;
    // Opens `link.txt` (created, truncated, for writing) in its folder and
    // writes "pwned" to it; exits with the errno of the open.
    let writer = write(
        &folder,
        "through_link.wat",
        r#"(module
  (import "wasi_snapshot_preview1" "path_open"
    (func $open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "link.txt")
  (data (i32.const 32) "pwned\n")
  (func (export "_start")
    (local $errno i32)
    ;; O_CREAT | O_TRUNC (9), rights fd_write (1 << 6); the fd lands at 64.
    (local.set $errno
      (call $open (i32.const 3) (i32.const 0) (i32.const 16) (i32.const 8)
        (i32.const 9) (i64.const 64) (i64.const 0) (i32.const 0) (i32.const 64)))
    (if (i32.eqz (local.get $errno))
      (then
        (i32.store (i32.const 0) (i32.const 32))
        (i32.store (i32.const 4) (i32.const 6))
        (drop (call $write (i32.load (i32.const 64)) (i32.const 0) (i32.const 1) (i32.const 8)))))
    (call $exit (local.get $errno))))"#,
    )?;
    let maker = folder.join("write_folder.wat");
    std::fs::copy(fixture("programs/write_folder.wat"), &maker)?;
    let before: Vec<_> = std::fs::read_dir(&folder)?
        .flatten()
        .map(|e| e.file_name())
        .collect();
    let args = ["--samples", "2", "--warmup", "1ms"];
    run(&[&writer, &maker], &["v8"], &args, dir.path(), None)?;
    assert_eq!(std::fs::read_to_string(&target)?, "precious\n");
    let after: Vec<_> = std::fs::read_dir(&folder)?
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(before.len(), after.len(), "{after:?}");
    assert!(!folder.join("made.txt").exists());
    Ok(())
}
