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
//! Programs run on the guarded copy (epoch checks on), so that every
//! iteration is bounded by `--timeout`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use serde::Serialize;
use wasmtime::{Caller, Linker, Module, Store};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{FsPerms, I32Exit, WasiCtxBuilder};

use crate::guard::{self, Guard};
use crate::instance::{Limiter, Limits, explain_trap};
use crate::measure::{MAX_SAMPLES, Measurement, Warmup};
use crate::settings::{Grants, StopRule};
use crate::stats;
use crate::workload::{BENCH_MODULE, Code, START_EXPORT, workload_name};

/// Most bytes captured from each of stdout and stderr per iteration.
const CAPTURE_LIMIT: usize = 64 << 20;
/// Fewest iterations before the precision rule may stop.
const MIN_ITERATIONS: usize = 5;

/// What a program's timed region was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TimedRegion {
    /// Between `bench.start` and `bench.end`.
    StartToEnd,
    /// The whole of `_start` (the program calls neither).
    WholeStart,
}

/// Per-phase statistics.
#[derive(Debug, Clone, Serialize)]
pub struct Phases {
    pub compile_ms: f64,
    pub instantiate_ns: PhaseStats,
    pub execute_ns: PhaseStats,
    pub timed_region: TimedRegion,
}

/// Summary of one phase over the iterations, in ns.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseStats {
    pub median: f64,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    pub samples: usize,
}

impl PhaseStats {
    fn of(values: &[f64]) -> Self {
        PhaseStats {
            median: stats::median(values),
            mean: values.iter().sum::<f64>() / values.len().max(1) as f64,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            samples: values.len(),
        }
    }
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
struct Iteration {
    instantiate_ns: f64,
    execute_ns: f64,
    region: TimedRegion,
}

/// Runs one program: its compiled guarded copy and everything an
/// iteration needs.
pub struct Program {
    module: Module,
    linker: Linker<ProgramState>,
    folder: PathBuf,
    expected_stdout: Option<Vec<u8>>,
    expected_stderr: Option<Vec<u8>>,
    grants: Grants,
    limits: Limits,
    guard: Arc<Guard>,
}

impl Program {
    pub fn new(
        path: &Path,
        guarded: &Code,
        grants: &Grants,
        limits: Limits,
        guard: &Arc<Guard>,
    ) -> Result<Self> {
        let Code::Module(module) = guarded else {
            bail!("a program must be a core module");
        };
        let mut linker: Linker<ProgramState> = Linker::new(module.engine());
        wasmtime_wasi::p1::add_to_linker_sync(&mut linker, |s: &mut ProgramState| &mut s.wasi)
            .map_err(|e| anyhow!("linking WASI: {e}"))?;
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
            .map_err(|e| anyhow!("{e}"))?;
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
            .map_err(|e| anyhow!("{e}"))?;
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
            guard: Arc::clone(guard),
        })
    }

    /// One fresh instance: instantiate, run `_start`, check the protocol,
    /// the exit code and the output.
    fn iterate(&self) -> Result<Iteration> {
        if guard::interrupted() {
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
            .map_err(|e| anyhow!("preopening {}: {e}", self.folder.display()))?;
        for arg in &self.grants.args {
            builder.arg(arg);
        }
        for (key, value) in &self.grants.env {
            builder.env(key, value);
        }
        for (host, guest) in &self.grants.dirs {
            builder
                .preopened_dir(host, guest, FsPerms::ReadWrite)
                .map_err(|e| anyhow!("--dir {}: {e}", host.display()))?;
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
        store.set_epoch_deadline(self.guard.deadline_ticks());
        let timeout = Some(self.guard.timeout());

        let before = Instant::now();
        let instance = self
            .linker
            .instantiate(&mut store, &self.module)
            .map_err(|e| {
                anyhow!(
                    "instantiation failed: {}",
                    explain_trap(&e, store.data().limiter.refused(), timeout)
                )
            })?;
        let instantiated = Instant::now();
        let start = instance
            .get_typed_func::<(), ()>(&mut store, START_EXPORT)
            .map_err(|e| anyhow!("export `_start`: {e}"))?;
        let call_start = Instant::now();
        let result = start.call(&mut store, ());
        let call_end = Instant::now();
        if let Err(e) = result {
            match e.downcast_ref::<I32Exit>() {
                Some(I32Exit(0)) => {}
                Some(I32Exit(code)) => bail!("exited with code {code}{}", stderr_tail(&stderr)),
                None => bail!(
                    "`_start` failed: {}",
                    explain_trap(&e, store.data().limiter.refused(), timeout)
                ),
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

/// Measure a program: one warm-up iteration, then iterations until the stop
/// rule says so (at least five). Returns the measurement (one op per
/// iteration, nothing subtracted) and the phases.
pub fn measure(
    program: &Program,
    stop: StopRule,
    started: Instant,
    compile_ms: f64,
    seed: u64,
) -> Result<(Measurement, Phases)> {
    let warm = Instant::now();
    program.iterate()?;
    let warmup = Warmup {
        elapsed_ms: warm.elapsed().as_secs_f64() * 1e3,
        settled: true,
        rounds: 1,
        per_op_ns: f64::NAN,
    };
    let sampling = Instant::now();
    let mut instantiate = Vec::new();
    let mut execute: Vec<Vec<f64>> = Vec::new();
    let mut region;
    let mut precision_reached = false;
    loop {
        let iteration = program.iterate()?;
        instantiate.push(iteration.instantiate_ns);
        execute.push(vec![iteration.execute_ns]);
        region = iteration.region;
        let n = execute.len();
        let done = match stop {
            StopRule::Samples(want) => n >= want.get(),
            StopRule::Time(t) => sampling.elapsed() >= t,
            StopRule::Precision { pct, budget } => {
                if n >= MIN_ITERATIONS {
                    let all: Vec<f64> = execute.iter().flatten().copied().collect();
                    let median = stats::median(&all);
                    let (low, high) = stats::median_ci(
                        &execute,
                        0.95,
                        crate::measure::RESAMPLES_WHILE_SAMPLING,
                        seed,
                    );
                    precision_reached = stats::relative_half_width_pct(median, low, high) <= pct;
                }
                precision_reached || (n >= MIN_ITERATIONS && started.elapsed() >= budget)
            }
        };
        if done || n >= MAX_SAMPLES {
            break;
        }
    }
    let all: Vec<f64> = execute.iter().flatten().copied().collect();
    let phases = Phases {
        compile_ms,
        instantiate_ns: PhaseStats::of(&instantiate),
        execute_ns: PhaseStats::of(&all),
        timed_region: region,
    };
    let measurement = Measurement {
        count: 1,
        warmup,
        blocks: execute,
        pauses: Vec::new(),
        baseline_calls_ns: Vec::new(),
        baseline_ns_per_call: 0.0,
        pause_pair_ns: 0.0,
        checksum: 0,
        sampling_ms: sampling.elapsed().as_secs_f64() * 1e3,
        precision_reached,
    };
    Ok((measurement, phases))
}
