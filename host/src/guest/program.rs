//! Program workloads: WASI preview1 commands timed by the Sightglass
//! protocol.
//!
//! A program exports `_start` and may import `bench.start()` and
//! `bench.end()`. Compiled once, each iteration is a fresh instance:
//! instantiate (timed), run `_start`, and time the region between
//! `bench.start` and `bench.end` (or the whole of `_start` when it calls
//! neither, which the report says). The workload's folder is preopened
//! read-only as `.`; no arguments, environment or stdin unless granted
//! (`--dir`, `--env`, `--arg`); stdout and stderr are captured per iteration
//! and compared with `<name>.stdout.expected` / `<name>.stderr.expected` (or
//! `default.*.expected`) beside the workload. `proc_exit(0)` is success.
//!
//! Programs run on the same code as every workload, without checks of the
//! harness: an iteration that outlives `--timeout` is ended by the parent
//! killing the worker process. This module runs one iteration; how
//! many, and when to stop, is [`crate::benchmark`]'s job.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use wasmtime::{Caller, Linker, Module, Store};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{FsPerms, I32Exit, WasiCtxBuilder};

use crate::guest::contract::{BENCH_MODULE, START_EXPORT};
use crate::guest::format::Code;
use crate::guest::instance::guest_failure;
use crate::guest::limits::{Limiter, Limits};
use crate::guest::load::workload_name;
use crate::guest::sandbox;
use crate::options::Grants;

/// Most bytes captured from each of stdout and stderr per iteration.
const CAPTURE_LIMIT: usize = 64 << 20;

/// What a program's timed region was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TimedRegion {
    /// Between `bench.start` and `bench.end`.
    StartToEnd,
    /// The whole of `_start` (the program calls neither).
    WholeStart,
}

/// Store data of one iteration.
struct ProgramState {
    wasi: WasiP1Ctx,
    limiter: Limiter,
    started: Option<Instant>,
    ended: Option<Instant>,
    protocol_error: Option<&'static str>,
}

/// One iteration's figures.
#[derive(Debug, Clone, Copy)]
pub struct Iteration {
    /// Instantiation (the WASI context is built before the clock starts).
    pub instantiate_ns: f64,
    /// The timed region.
    pub execute_ns: f64,
    pub region: TimedRegion,
}

/// Runs one program: its compiled code and everything an
/// iteration needs.
pub struct Program {
    module: Module,
    linker: Linker<ProgramState>,
    folder: PathBuf,
    expected_stdout: Option<Vec<u8>>,
    expected_stderr: Option<Vec<u8>>,
    grants: Grants,
    limits: Limits,
}

impl Program {
    pub fn new(path: &Path, code: &Code, grants: &Grants, limits: Limits) -> Result<Self> {
        let Code::Module(module) = code else {
            bail!("a program must be a core module");
        };
        let mut linker: Linker<ProgramState> = Linker::new(module.engine());
        wasmtime_wasi::p1::add_to_linker_sync(&mut linker, |s: &mut ProgramState| &mut s.wasi)
            .map_err(anyhow::Error::from)
            .context("linking WASI")?;
        linker
            .func_wrap(
                BENCH_MODULE,
                "start",
                |mut caller: Caller<'_, ProgramState>| {
                    let now = Instant::now();
                    let state = caller.data_mut();
                    if state.started.is_some() {
                        state.protocol_error = Some("bench.start called twice");
                    } else {
                        state.started = Some(now);
                    }
                },
            )
            .map_err(anyhow::Error::from)
            .context("linking the bench imports")?;
        linker
            .func_wrap(
                BENCH_MODULE,
                "end",
                |mut caller: Caller<'_, ProgramState>| {
                    let now = Instant::now();
                    let state = caller.data_mut();
                    match (state.started, state.ended) {
                        (None, _) => {
                            state.protocol_error = Some("bench.end called before bench.start")
                        }
                        (Some(_), Some(_)) => state.protocol_error = Some("bench.end called twice"),
                        (Some(_), None) => state.ended = Some(now),
                    }
                },
            )
            .map_err(anyhow::Error::from)
            .context("linking the bench imports")?;
        let folder = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = workload_name(path);
        Ok(Program {
            module: module.clone(),
            linker,
            expected_stdout: expected(&folder, &name, "stdout")?,
            expected_stderr: expected(&folder, &name, "stderr")?,
            folder,
            grants: grants.clone(),
            limits,
        })
    }

    /// One fresh instance: instantiate, run `_start`, check the protocol,
    /// the exit code and the output.
    pub fn iterate(&self) -> Result<Iteration> {
        if sandbox::interrupted() {
            bail!("interrupted");
        }
        let stdout = MemoryOutputPipe::new(CAPTURE_LIMIT);
        let stderr = MemoryOutputPipe::new(CAPTURE_LIMIT);
        let mut builder = WasiCtxBuilder::new();
        builder
            .stdout(stdout.clone())
            .stderr(stderr.clone())
            .arg(START_EXPORT)
            .preopened_dir(&self.folder, ".", FsPerms::ReadOnly)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("preopening {}", self.folder.display()))?;
        for arg in &self.grants.args {
            builder.arg(arg);
        }
        for (key, value) in &self.grants.env {
            builder.env(key, value);
        }
        for (host, guest) in &self.grants.dirs {
            builder
                .preopened_dir(host, guest, FsPerms::ReadWrite)
                .map_err(anyhow::Error::from)
                .with_context(|| format!("--dir {}", host.display()))?;
        }
        let state = ProgramState {
            wasi: builder.build_p1(),
            limiter: Limiter::new(self.limits),
            started: None,
            ended: None,
            protocol_error: None,
        };
        let mut store = Store::new(self.module.engine(), state);
        store.limiter(|s| &mut s.limiter);

        let before = Instant::now();
        let instance = self
            .linker
            .instantiate(&mut store, &self.module)
            .map_err(|e| guest_failure(e, store.data().limiter.refused()))
            .context("instantiation failed")?;
        let instantiated = Instant::now();
        let start = instance
            .get_typed_func::<(), ()>(&mut store, START_EXPORT)
            .map_err(anyhow::Error::from)
            .context("export `_start`")?;
        let call_start = Instant::now();
        let result = start.call(&mut store, ());
        let call_end = Instant::now();
        if let Err(e) = result {
            match e.downcast_ref::<I32Exit>() {
                Some(I32Exit(0)) => {}
                Some(I32Exit(code)) => bail!("exited with code {code}{}", stderr_tail(&stderr)),
                None => {
                    return Err(guest_failure(e, store.data().limiter.refused()))
                        .context("`_start` failed");
                }
            }
        }
        let state = store.data();
        if let Some(problem) = state.protocol_error {
            bail!("{problem}");
        }
        let (execute, region) = match (state.started, state.ended) {
            (Some(s), Some(e)) => (e.duration_since(s), TimedRegion::StartToEnd),
            (None, None) => (call_end.duration_since(call_start), TimedRegion::WholeStart),
            (Some(_), None) => bail!("called bench.start but never bench.end"),
            (None, Some(_)) => bail!("called bench.end without bench.start"),
        };
        check_output(
            "stdout",
            &stdout.contents(),
            self.expected_stdout.as_deref(),
        )?;
        check_output(
            "stderr",
            &stderr.contents(),
            self.expected_stderr.as_deref(),
        )?;
        Ok(Iteration {
            instantiate_ns: instantiated.duration_since(before).as_nanos() as f64,
            execute_ns: execute.as_nanos() as f64,
            region,
        })
    }
}

/// `<name>.<stream>.expected`, else `default.<stream>.expected`, if either
/// sits beside the workload.
fn expected(folder: &Path, name: &str, stream: &str) -> Result<Option<Vec<u8>>> {
    for file in [
        format!("{name}.{stream}.expected"),
        format!("default.{stream}.expected"),
    ] {
        let path = folder.join(file);
        if path.is_file() {
            return std::fs::read(&path)
                .map(Some)
                .with_context(|| format!("reading {}", path.display()));
        }
    }
    Ok(None)
}

fn check_output(stream: &str, got: &[u8], expected: Option<&[u8]>) -> Result<()> {
    let Some(expected) = expected else {
        return Ok(());
    };
    if got == expected {
        return Ok(());
    }
    let first_line = |b: &[u8]| {
        String::from_utf8_lossy(b)
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(80)
            .collect::<String>()
    };
    bail!(
        "{stream} differs from the expected output ({} bytes, expected {}): got `{}`, expected `{}`",
        got.len(),
        expected.len(),
        first_line(got),
        first_line(expected)
    )
}

fn stderr_tail(stderr: &MemoryOutputPipe) -> String {
    let text = stderr.contents();
    let text = String::from_utf8_lossy(&text);
    match text.lines().last() {
        Some(line) if !line.trim().is_empty() => format!(" (stderr: {})", line.trim()),
        _ => String::new(),
    }
}
