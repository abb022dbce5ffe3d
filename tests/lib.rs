//! Helpers shared by the end-to-end test files: where the built `host`
//! binary, the fixtures and the bundled workloads are, and how to run the
//! binary with a time bound.

use std::error::Error;
use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The workspace root (the folder above this package).
pub fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the e2e package lives inside the workspace")
}

/// A file in `tests/fixtures/`, as an absolute path.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

/// The bundled `workloads/` folder, as an absolute path.
pub fn workloads() -> PathBuf {
    workspace_root().join("workloads")
}

/// The `host` binary, built once per test process.
///
/// Neither `cargo test --workspace` nor a dev-dependency on `host` builds the
/// binary of another package, and `CARGO_BIN_EXE_host` exists only for the
/// tests of `host` itself. So the first test to need it runs `cargo build
/// --release -p host` (with the `cargo` that runs the tests): a no-op taking a
/// fraction of a second when the binary is fresh, a rebuild when the sources
/// changed. Cargo reports where it put the binary, so a custom target folder
/// is handled too. A failed build is remembered, so that every test reports
/// it without running cargo again. `WASM_BENCH_HOST` names a prebuilt binary
/// instead.
pub fn host_binary() -> &'static Path {
    static HOST: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let host = HOST.get_or_init(|| match std::env::var_os("WASM_BENCH_HOST") {
        Some(path) => Ok(PathBuf::from(path)),
        None => build_host().map_err(|e| e.to_string()),
    });
    match host {
        Ok(path) => path,
        Err(e) => panic!("cannot build the host binary: {e}"),
    }
}

fn build_host() -> Result<PathBuf, Box<dyn Error>> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(&cargo)
        .current_dir(workspace_root())
        .args(["build", "--release", "-p", "host", "--bin", "host"])
        .args(
            cfg!(feature = "all-engines")
                .then_some(["--features", "host/all-engines"])
                .into_iter()
                .flatten(),
        )
        .arg("--message-format=json-render-diagnostics")
        .output()?;
    if !output.status.success() {
        return Err(format!(
            "`{} build --release -p host` failed ({}):\n{}",
            cargo.to_string_lossy(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    let stdout = String::from_utf8(output.stdout)?;
    for line in stdout.lines() {
        let Ok(message) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let is_host_bin = message["reason"] == "compiler-artifact"
            && message["target"]["name"] == "host"
            && message["target"]["kind"]
                .as_array()
                .is_some_and(|kinds| kinds.iter().any(|k| k == "bin"));
        if let (true, Some(executable)) = (is_host_bin, message["executable"].as_str()) {
            return Ok(PathBuf::from(executable));
        }
    }
    Err("cargo built no `host` executable".into())
}

/// The shipped schemas, compiled once: (all, run, compare).
type Compiled = (boon::Schemas, boon::SchemaIndex, boon::SchemaIndex);

/// Check a JSON export of `host run` or `host compare` against the schema
/// shipped in `host/schema/` (the one for compare exports when it has
/// `comparisons`), with the boon validator. Every error is in the message.
pub fn validate_export(export: &Value) -> Result<(), String> {
    static SCHEMAS: OnceLock<Result<Compiled, String>> = OnceLock::new();
    let compiled = SCHEMAS.get_or_init(|| {
        let mut schemas = boon::Schemas::new();
        let mut compiler = boon::Compiler::new();
        let mut load = |name: &str| -> Result<boon::SchemaIndex, String> {
            let path = workspace_root().join("host").join("schema").join(name);
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let schema: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
            let url = format!("file:///wasm-bench/{name}");
            compiler
                .add_resource(&url, schema)
                .map_err(|e| format!("{e:#}"))?;
            compiler
                .compile(&url, &mut schemas)
                .map_err(|e| format!("{e:#}"))
        };
        let run = load("run.schema.json")?;
        let compare = load("compare.schema.json")?;
        Ok((schemas, run, compare))
    });
    let (schemas, run, compare) = compiled.as_ref().map_err(Clone::clone)?;
    let index = match export.get("comparisons") {
        Some(_) => *compare,
        None => *run,
    };
    schemas
        .validate(export, index)
        .map_err(|e| format!("the export does not follow host/schema: {e}"))
}

/// What a bounded run of the binary left.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

/// The compile cache of the tests: a folder under the build output, apart
/// from the user's own cache.
pub fn test_cache() -> PathBuf {
    workspace_root().join("target").join("test-cache")
}

/// The store of kept runs of the tests: a folder under the build output,
/// apart from the user's own store.
pub fn test_store() -> PathBuf {
    workspace_root().join("target").join("test-store")
}

/// Make `command` (a `host` command with all its arguments) ready to run the
/// way every test runs it: with the tests' compile cache and store unless it
/// names its own, and, when it measures and names no core, pinned to the next core in
/// turn, so that tests running side by side do not all pin the same core.
pub fn prepare(command: &mut Command) -> &mut Command {
    if !command.get_envs().any(|(key, _)| key == "WASM_BENCH_CACHE") {
        command.env("WASM_BENCH_CACHE", test_cache());
    }
    if !command.get_envs().any(|(key, _)| key == "WASM_BENCH_STORE") {
        command.env("WASM_BENCH_STORE", test_store());
    }
    let args: Vec<&OsStr> = command.get_args().collect();
    let measures = matches!(
        args.first().and_then(|a| a.to_str()),
        Some("run" | "compare" | "watch")
    );
    let placed = args.iter().any(|a| {
        a.to_str()
            .is_some_and(|a| a == "--no-pin" || a == "--core" || a.starts_with("--core="))
    });
    if measures && !placed {
        command.args(["--core", &next_core().to_string()]);
    }
    command
}

/// The cores of this machine in turn.
fn next_core() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    NEXT.fetch_add(1, Ordering::Relaxed) % cores
}

/// Start `host` with `args` in `dir`, with piped output.
pub fn spawn_host(args: &[&str], dir: &Path) -> std::io::Result<Child> {
    prepare(Command::new(host_binary()).args(args))
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
}

/// Wait for `child` at most `limit`; kill it and fail past that.
pub fn finish_within(mut child: Child, limit: Duration) -> Result<Finished, Box<dyn Error>> {
    let start = Instant::now();
    // Read the pipes on threads so that a chatty child never blocks.
    let mut out = child.stdout.take().ok_or("no stdout")?;
    let mut err = child.stderr.take().ok_or("no stderr")?;
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("the host did not finish within {limit:?}").into());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ok(Finished {
        status,
        stdout: out_reader.join().map_err(|_| "stdout reader panicked")?,
        stderr: err_reader.join().map_err(|_| "stderr reader panicked")?,
        elapsed: start.elapsed(),
    })
}

/// Run `host` with `args` in `dir`, bounded by `limit`.
pub fn run_host_within(
    args: &[&str],
    dir: &Path,
    limit: Duration,
) -> Result<Finished, Box<dyn Error>> {
    finish_within(spawn_host(args, dir)?, limit)
}
