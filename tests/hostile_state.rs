//! What the host reads back from disk, placed there by someone else: a
//! FIFO in a `.suite`'s place, `/dev/zero` in a kept run's, a compile
//! cache entry copied over another module's key. Each is refused without
//! hanging or growing the host, and said so.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use e2e::{Finished, finish_within, host_binary, prepare, workloads};
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

/// Far above what each run takes; a FIFO read without care blocks forever.
const BOUND: Duration = Duration::from_secs(120);

/// `host ARGS` in `dir`, with its compile cache in `cache` and its store of
/// kept runs in `dir/store`.
fn host(args: &[&str], dir: &Path, cache: &Path) -> Result<Finished, Box<dyn Error>> {
    let mut command = Command::new(host_binary());
    command
        .args(args)
        .current_dir(dir)
        .env("WASM_BENCH_CACHE", cache)
        .env("WASM_BENCH_STORE", dir.join("store"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let finished = finish_within(prepare(&mut command).spawn()?, BOUND)?;
    assert!(!finished.stderr.contains("panicked"), "{}", finished.stderr);
    Ok(finished)
}

/// `host run FILE` measured briefly at a fixed count and seed, with its JSON
/// report.
fn run(file: &Path, dir: &Path, cache: &Path) -> Result<(Finished, Value), Box<dyn Error>> {
    let file = file.display().to_string();
    let args = [
        "run",
        &file,
        "--samples",
        "5",
        "--warmup",
        "20ms",
        "--count",
        "1000",
        "--seed",
        "7",
        "--export-json",
        "-",
    ];
    let finished = host(&args, dir, cache)?;
    let report = serde_json::from_str(&finished.stdout).map_err(|e| {
        format!(
            "{e}: stdout {} / stderr {}",
            finished.stdout, finished.stderr
        )
    })?;
    Ok((finished, report))
}

#[test]
fn a_fifo_in_a_suites_place_is_refused_at_once() -> TestResult {
    let dir = tempfile::tempdir()?;
    let suite = dir.path().join("all.suite");
    let made = Command::new("mkfifo").arg(&suite).status()?;
    assert!(made.success());
    let finished = host(&["run", "all.suite"], dir.path(), &dir.path().join("cache"))?;
    assert_eq!(finished.status.code(), Some(2), "{}", finished.stderr);
    assert!(
        finished
            .stderr
            .contains("all.suite: cannot read the suite: reading all.suite: not a regular file (a FIFO, socket or device): refused without reading it"),
        "{}",
        finished.stderr
    );
    assert!(
        finished.elapsed < Duration::from_secs(10),
        "{:?}",
        finished.elapsed
    );
    Ok(())
}

#[test]
fn dev_zero_in_a_kept_runs_place_is_refused_and_the_run_goes_on() -> TestResult {
    let dir = tempfile::tempdir()?;
    let cache = dir.path().join("cache");
    let runs = dir.path().join("store").join("runs");
    std::fs::create_dir_all(&runs)?;
    // Named as a run kept a moment ago: the drift reads the last day's.
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_millis();
    let link = runs.join(format!("{now_ms:013}-1-0.json"));
    std::os::unix::fs::symlink("/dev/zero", &link)?;
    let (finished, report) = run(&workloads().join("xor.wasm"), dir.path(), &cache)?;
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    let warnings = report["environment"]["warnings"].to_string();
    assert!(
        warnings.contains("a kept run was skipped: reading")
            && warnings.contains("-1-0.json: a symbolic link: refused without following it"),
        "{warnings}"
    );
    // The run was kept beside it, and /dev/zero was never written through.
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata("/dev/zero")?.file_type().is_char_device());
    assert_eq!(std::fs::read_dir(&runs)?.count(), 2);
    assert!(finished.elapsed < BOUND);
    Ok(())
}

/// The compile cache entries in `cache`, by the part of their name after
/// the workload's hash (the engine configuration and the host's version).
fn entries(cache: &Path) -> Result<Vec<(String, PathBuf)>, Box<dyn Error>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(cache)? {
        let path = entry?.path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        if let Some((_, rest)) = name.as_deref().and_then(|n| n.split_once('-'))
            && rest.ends_with(".cwasm")
        {
            found.push((rest.to_string(), path));
        }
    }
    Ok(found)
}

/// Another module's entry copied over xor's is refused, xor is compiled
/// again, and the row's checksum is xor's.
#[test]
fn a_swapped_cache_entry_is_refused_and_the_right_module_runs() -> TestResult {
    let dir = tempfile::tempdir()?;
    let cache = dir.path().join("cache");
    let other_cache = dir.path().join("other");
    let xor = workloads().join("xor.wasm");
    let (_, first) = run(&xor, dir.path(), &cache)?;
    run(&workloads().join("mod13.wasm"), dir.path(), &other_cache)?;
    let others = entries(&other_cache)?;
    let mut swapped = 0;
    for (rest, path) in entries(&cache)? {
        if let Some((_, other)) = others.iter().find(|(r, _)| *r == rest) {
            std::fs::copy(other, &path)?;
            swapped += 1;
        }
    }
    assert!(swapped > 0, "no entry of the same engine to swap");
    let (finished, again) = run(&xor, dir.path(), &cache)?;
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    let row = &again["results"][0];
    let outcome = row["compile_cache"]["rebuilt"].as_str().unwrap_or_default();
    assert!(outcome.contains("written for another key"), "{row}");
    assert_eq!(row["checksum"], first["results"][0]["checksum"], "{row}");
    assert!(row["checksum"].is_i64(), "{row}");
    Ok(())
}

/// A FIFO or `/dev/zero` given as `--engine`: refused at once, before a
/// byte is read (hashing the library used to block on the FIFO and read
/// `/dev/zero` into memory without end).
#[test]
fn a_fifo_or_dev_zero_as_the_engine_library_is_refused_at_once() -> TestResult {
    let dir = tempfile::tempdir()?;
    let fifo = dir.path().join("engine.so");
    assert!(Command::new("mkfifo").arg(&fifo).status()?.success());
    let fib = workloads().join("fib.wasm").display().to_string();
    for library in ["./engine.so", "/dev/zero"] {
        let args = ["run", &fib, "--engine", library];
        let finished = host(&args, dir.path(), &dir.path().join("cache"))?;
        assert_eq!(finished.status.code(), Some(2), "{}", finished.stderr);
        assert!(
            finished
                .stderr
                .contains(&format!("--engine {library}: cannot read the library"))
                && finished.stderr.contains(
                    "not a regular file (a FIFO, socket or device): refused without reading it"
                ),
            "{}",
            finished.stderr
        );
        assert!(
            finished.elapsed < Duration::from_secs(10),
            "{:?}",
            finished.elapsed
        );
    }
    Ok(())
}

/// A relative `$XDG_CONFIG_HOME` or `$XDG_CACHE_HOME` is ignored, as the
/// XDG spec says: the cache key and the compile cache go under `$HOME`,
/// nothing inside the folder the run started in.
#[test]
fn a_relative_xdg_folder_is_ignored() -> TestResult {
    let dir = tempfile::tempdir()?;
    let home = dir.path().join("home");
    std::fs::create_dir(&home)?;
    let xor = workloads().join("xor.wasm").display().to_string();
    let mut command = Command::new(host_binary());
    command
        .args([
            "run",
            &xor,
            "--samples",
            "3",
            "--warmup",
            "20ms",
            "--count",
            "1000",
        ])
        .current_dir(dir.path())
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", "config")
        .env("XDG_CACHE_HOME", "cache")
        // Without it, the tests' compile cache would be named.
        .env_remove("WASM_BENCH_CACHE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let finished = finish_within(prepare(&mut command).spawn()?, BOUND)?;
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    assert!(!dir.path().join("config").exists());
    assert!(!dir.path().join("cache").exists());
    assert!(home.join(".config/wasm-bench/cache.key").is_file());
    assert!(home.join(".cache/wasm-bench").is_dir());
    Ok(())
}
