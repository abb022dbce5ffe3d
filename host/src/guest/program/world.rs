//! What a program's iteration sees and is held to, whatever runtime runs
//! it: its [`World`] (the folder, the grants, the WASI context built from
//! them, the expected output) and the checks of one run ([`World::finish`]
//! on a [`Ran`]: the exit, the `bench.start`/`bench.end` protocol, the
//! output), so that wasmtime and every other runtime judge a run alike.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

use super::output::{check_output, expected, tail};
use crate::guest::name::file_stem;
use crate::guest::seeds::{GuestRandom, GuestWallClock};
use crate::options::Grants;
use crate::platform::valgrind;

/// The one variable of the host's environment a program sees (when the
/// host has it): some benchmarks read a smaller input then.
pub const SMALL_WORKLOAD_VAR: &str = "WASM_BENCH_USE_SMALL_WORKLOAD";
/// The guest's name of the root folder, which the program's folder is too.
const ROOT: &str = "/";

/// What a program's timed region was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TimedRegion {
    /// Between `bench.start` and `bench.end`.
    StartToEnd,
    /// The whole run (the program calls neither).
    WholeStart,
    /// The whole run: the program imports `bench.start` but not
    /// `bench.end`.
    WholeStartNoEnd,
}

/// One iteration's figures.
#[derive(Debug, Clone)]
pub struct Iteration {
    /// Instantiation (the WASI context is built before the clock starts).
    pub instantiate_ns: f64,
    /// The timed regions, in order: one per `bench.start`/`bench.end` pair,
    /// or the whole run.
    pub execute_ns: Vec<f64>,
    pub region: TimedRegion,
    /// Compilation in this iteration: an engine library compiles every
    /// iteration; None for a built-in engine, which compiles once.
    pub compile_ns: Option<f64>,
}

/// The `bench.start`/`bench.end` calls of one iteration.
#[derive(Default)]
pub(crate) struct Timing {
    started: Option<Instant>,
    regions: Vec<Duration>,
    error: Option<&'static str>,
    /// Counting with Callgrind: whether its collecting is on.
    pub(crate) collecting: bool,
}

impl Timing {
    /// `bench.start` at `now` (a second one restarts the region).
    pub(crate) fn start(&mut self, now: Instant) {
        self.started = Some(now);
    }

    /// Whether `bench.start` was ever called: a region ended, or one open
    /// (counting: collecting).
    fn any_start(&self) -> bool {
        !self.regions.is_empty() || self.started.is_some() || self.collecting
    }

    /// `bench.end` at `now`: the region since `bench.start` is kept.
    pub(crate) fn end(&mut self, now: Instant) {
        match self.started.take() {
            Some(started) => self.regions.push(now.duration_since(started)),
            None => {
                self.error
                    .get_or_insert("bench.end called before bench.start");
            }
        }
    }

    /// Regions measured elsewhere (a runtime in another process), in ns,
    /// with whether a region was left open.
    pub(crate) fn from_regions(regions_ns: &[u64], open: bool) -> Self {
        Timing {
            started: open.then(Instant::now),
            regions: regions_ns
                .iter()
                .map(|&ns| Duration::from_nanos(ns))
                .collect(),
            error: None,
            collecting: false,
        }
    }

    /// Record a protocol error (the first one is kept).
    pub(crate) fn fail(&mut self, why: &'static str) {
        self.error.get_or_insert(why);
    }

    /// `bench.start` of a counting pass: Callgrind collects from here (a
    /// restart keeps collecting). No clock is read.
    pub(crate) fn start_counting(&mut self) {
        if !self.collecting {
            valgrind::toggle_collect();
            self.collecting = true;
        }
    }

    /// `bench.end` of a counting pass: Callgrind stops collecting, and the
    /// region counts as one, of no length.
    pub(crate) fn end_counting(&mut self) {
        if self.collecting {
            valgrind::toggle_collect();
            self.collecting = false;
            self.regions.push(Duration::ZERO);
        } else {
            self.error
                .get_or_insert("bench.end called before bench.start");
        }
    }
}

/// How a program's run ended.
pub(crate) enum Ended {
    /// `_start` returned, or `wasi:cli/run` returned `ok`.
    Returned,
    /// `proc_exit` with this code.
    Exited(i32),
    /// A component's `wasi:cli/run` returned `err`.
    ReturnedErr,
    /// A trap or a refusal, in words.
    Failed(anyhow::Error),
}

/// What one run of a program left, under any runtime.
pub(crate) struct Ran {
    pub instantiate: Duration,
    /// The whole run (`_start` or `wasi:cli/run`).
    pub whole: Duration,
    pub ended: Ended,
    pub timing: Timing,
}

/// What a program sees and is held to: its folder (preopened read-only as
/// `/` and `.`), the grants, and the expected output beside it.
pub struct World {
    folder: PathBuf,
    grants: Grants,
    /// Whether it imports `bench.end` (else only `bench.start`, or neither).
    imports_end: bool,
    expected_stdout: Option<Vec<u8>>,
    expected_stderr: Option<Vec<u8>>,
}

impl World {
    /// The world of the program at `path`, granted `grants`; its expected
    /// output is read here.
    pub fn new(path: &Path, grants: &Grants, imports_end: bool) -> Result<Self> {
        let folder = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = file_stem(path);
        Ok(World {
            expected_stdout: expected(&folder, &name, "stdout")?,
            expected_stderr: expected(&folder, &name, "stderr")?,
            folder,
            grants: grants.clone(),
            imports_end,
        })
    }

    /// The program's folder.
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// Its `--dir`, `--env` and `--arg`.
    pub fn grants(&self) -> &Grants {
        &self.grants
    }

    /// Whether the folder is preopened as `/` as well as `.` (not when a
    /// `--dir` names `/` itself).
    pub fn folder_is_root(&self) -> bool {
        !self.grants.dirs.iter().any(|(_, guest)| guest == ROOT)
    }

    /// The environment the program sees: `WASM_BENCH_USE_SMALL_WORKLOAD`
    /// when the host has it, then the `--env` grants.
    pub fn env(&self) -> Vec<(String, String)> {
        let small = std::env::var_os(SMALL_WORKLOAD_VAR).map(|value| {
            (
                SMALL_WORKLOAD_VAR.to_string(),
                value.to_string_lossy().into(),
            )
        });
        small.into_iter().chain(self.grants.env.clone()).collect()
    }

    /// The WASI context of an iteration, from `builder`, writing to `stdout`
    /// and `stderr`, its random numbers seeded with `seed` ([`GuestRandom`]),
    /// its wall clock stepped ([`GuestWallClock`]) unless the system's is
    /// granted.
    pub(crate) fn wasi(
        &self,
        mut builder: WasiCtxBuilder,
        (stdout, stderr): (&MemoryOutputPipe, &MemoryOutputPipe),
        seed: u64,
    ) -> Result<WasiCtxBuilder> {
        builder.stdout(stdout.clone()).stderr(stderr.clone());
        builder
            .secure_random(GuestRandom::new(seed))
            .insecure_random(GuestRandom::new(!seed))
            .insecure_random_seed(u128::from(seed));
        if !self.grants.real_clock {
            builder.wall_clock(GuestWallClock::default());
        }
        // Go's runtime (GOOS=wasip1) takes the first preopen's name for its
        // working folder (without `PWD`) and cannot open a relative path
        // under `.`: the folder is `/` first, then `.` (wasi-libc finds it
        // either way), unless a `--dir` names `/` itself.
        if self.folder_is_root() {
            builder
                .preopened_dir(&self.folder, ROOT, FsPerms::ReadOnly)
                .map_err(anyhow::Error::from)
                .with_context(|| format!("preopening {} as /", self.folder.display()))?;
        }
        builder
            .preopened_dir(&self.folder, ".", FsPerms::ReadOnly)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("preopening {}", self.folder.display()))?;
        for arg in &self.grants.args {
            builder.arg(arg);
        }
        for (key, value) in self.env() {
            builder.env(key, value);
        }
        for (host, guest) in &self.grants.dirs {
            builder
                .preopened_dir(host, guest, FsPerms::ReadWrite)
                .map_err(anyhow::Error::from)
                .with_context(|| format!("--dir {}", host.display()))?;
        }
        Ok(builder)
    }

    /// The WASI preview 1 context of an iteration of a core module, writing
    /// to `stdout` and `stderr`, seeded with `seed`.
    pub fn p1(
        &self,
        outputs: (&MemoryOutputPipe, &MemoryOutputPipe),
        seed: u64,
    ) -> Result<WasiP1Ctx> {
        Ok(self.wasi(WasiCtxBuilder::new(), outputs, seed)?.build_p1())
    }

    /// One iteration of a core module under a runtime that answers WASI
    /// with wasmtime-wasi's preview 1: `run` runs a fresh instance with the
    /// context [`World::p1`] builds, seeded with `seed`; the run is checked
    /// by [`World::finish`], its output captured on the way.
    #[cfg(feature = "wasi-p1")]
    pub(crate) fn iterate_p1(
        &self,
        seed: u64,
        run: impl FnOnce(WasiP1Ctx) -> Result<Ran>,
    ) -> Result<Iteration> {
        let stdout = MemoryOutputPipe::new(super::output::CAPTURE_LIMIT);
        let stderr = MemoryOutputPipe::new(super::output::CAPTURE_LIMIT);
        let ran = run(self.p1((&stdout, &stderr), seed)?)?;
        self.finish(ran, &stdout.contents(), &stderr.contents(), true)
    }

    /// The checks after a run: the exit, the protocol and, when `check`
    /// says so, the output; the iteration's figures.
    pub(crate) fn finish(
        &self,
        ran: Ran,
        stdout: &[u8],
        stderr: &[u8],
        check: bool,
    ) -> Result<Iteration> {
        match ran.ended {
            Ended::Returned | Ended::Exited(0) => {}
            Ended::Exited(code) => bail!("exited with code {code}{}", tail(stderr)),
            Ended::ReturnedErr => bail!(
                "wasi:cli/run returned an error (exit code 1){}",
                tail(stderr)
            ),
            Ended::Failed(e) => return Err(e),
        }
        if let Some(problem) = ran.timing.error {
            bail!("{problem}");
        }
        let whole = vec![ran.whole.as_nanos() as f64];
        let (execute_ns, region) = match (ran.timing.regions.is_empty(), ran.timing.any_start()) {
            (false, _) => (
                ran.timing
                    .regions
                    .iter()
                    .map(|d| d.as_nanos() as f64)
                    .collect(),
                TimedRegion::StartToEnd,
            ),
            (true, false) => (whole, TimedRegion::WholeStart),
            (true, true) if !self.imports_end => (whole, TimedRegion::WholeStartNoEnd),
            (true, true) => bail!("called bench.start but never bench.end"),
        };
        if check {
            check_output("stdout", stdout, self.expected_stdout.as_deref())?;
            check_output("stderr", stderr, self.expected_stderr.as_deref())?;
        }
        Ok(Iteration {
            instantiate_ns: ran.instantiate.as_nanos() as f64,
            execute_ns,
            region,
            compile_ns: None,
        })
    }
}
