//! What a worker process sets up once before it measures: the measuring
//! thread (pinned, its priority raised), the calibrated clock, the guests
//! it was given loaded (from the compile cache, as a rule), and the built-in
//! guests of each format with their calibration (a worker that only counts
//! with Callgrind, or that runs a program for its output, skips these two:
//! [`Session::uncalibrated`]). It also
//! instantiates and sets up the instances of a row, and counts instructions.
//!
//! [`crate::benchmark::worker`] builds a [`Session`] on the thread
//! [`on_measuring_thread`] starts, from its [`WorkerPlan`]; nothing here
//! decides what to measure. The parent's catalog loads the same files first
//! ([`crate::benchmark::parent::catalog`]), which fills the compile cache
//! and checks each against the contract; the worker is handed what it
//! found ([`load::Checked`]: the format, the contract, the bytes' digest),
//! reads each file again, refuses one whose bytes changed since, and
//! compiles it (from the cache) without checking it again.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};

use crate::benchmark::progress::{Call, Progress};
use crate::benchmark::protocol::{Found, WorkerPlan};
use crate::benchmark::worker::calibrate::{self, Calibration};
use crate::benchmark::worker::program::ProgramRunner;
use crate::benchmark::worker::sequence;
use crate::guest::builtin::Builtins;
use crate::guest::format::{Code, Format};
use crate::guest::library::LibraryProgram;
use crate::guest::limits::Limits;
use crate::guest::load::{self, GuestFile, LoadError, Loaded, all_engines};
use crate::guest::runtime::wasmtime::engine::{Engines, compile};
use crate::guest::runtime::wasmtime::instance::{Instance, Linkers};
use crate::guest::runtime::{self, Guest, Runner, Sampler, native};
use crate::guest::seeds::Seeds;
use crate::options::{EngineLibrary, Grants, Runtime};
use crate::platform::clock::{self, ClockCalibration};
use crate::platform::cpu::cpu_model;
use crate::platform::processes;
use crate::platform::thread::{Prepared, prepare_measuring_thread};
use crate::results::{CalibrationFigures, Row};

/// Native stack of the measuring thread: room for wasm's own 512 KiB limit
/// and the host frames around it.
const MEASURING_STACK: usize = 8 << 20;
/// How long a runtime in processes of its own (V8) has to run its
/// built-in guests for the calibration, which comes before the parent
/// watches any call: past it, its processes are killed and its rows fail.
const CALIBRATION_DEADLINE: Duration = Duration::from_secs(30);

/// Run `work` on a dedicated measuring thread with room on its native stack
/// for wasm's own 512 KiB limit and the host frames around it, so that the
/// thread that reads the parent's job is not pinned with it.
pub fn on_measuring_thread<T: Send>(work: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("measure".into())
            .stack_size(MEASURING_STACK)
            .spawn_scoped(scope, work)
            .context("starting the measuring thread")?
            .join()
            .map_err(|_| anyhow!("the measuring thread panicked"))?
    })
}

/// The built-in guests of one format and their calibration.
pub struct FormatSetup {
    /// None in a worker that only counts.
    pub builtins: Option<Builtins>,
    pub calibration: Calibration,
}

impl FormatSetup {
    fn new(
        engines: &Engines,
        runner: &dyn Runner,
        limits: Limits,
        format: Format,
        clock: ClockCalibration,
    ) -> Result<Self> {
        let builtins = Builtins::new(engines, format)?;
        let calibration = calibrate::calibrate(
            clock,
            builtins.empty_instance(runner, limits)?.as_mut(),
            Some(builtins.pause_pair_instance(runner, limits)?.as_mut()),
        )?;
        Ok(FormatSetup {
            builtins: Some(builtins),
            calibration,
        })
    }

    /// Of native code: its empty guest is the host's own function
    /// ([`native::empty`]), and it has no pauses.
    fn native(clock: ClockCalibration) -> Result<Self> {
        Ok(FormatSetup {
            builtins: None,
            calibration: calibrate::calibrate(clock, native::empty().as_mut(), None)?,
        })
    }

    /// Of a worker that only counts: no built-ins, and calibration figures
    /// of zero.
    fn uncalibrated() -> Self {
        FormatSetup {
            builtins: None,
            calibration: Calibration {
                clock: ClockCalibration {
                    resolution_ns: 0.0,
                    overhead_ns: 0.0,
                },
                empty_call_ns: 0.0,
                pause_pair_ns: 0.0,
            },
        }
    }
}

/// One engine configuration with its linkers, its runner and its built-in
/// guests.
pub struct EngineSet {
    pub engines: Engines,
    /// wasmtime's linkers (the passes that run wasmtime itself: fuel,
    /// Callgrind, profiles).
    pub linkers: Linkers,
    /// What instantiates the timed workloads (the configuration's
    /// runtime), or why it could not start.
    pub runner: Result<Box<dyn Runner>, String>,
    pub modules: FormatSetup,
    pub components: Option<FormatSetup>,
}

impl EngineSet {
    /// Set up `engines` (set `index`): its runner and, with a calibrated
    /// `clock`, its built-in guests and their calibration (for components
    /// only when `loaded` has any under it). A runtime that cannot start
    /// here (not built, `node` missing) leaves the set's rows its error.
    fn new(
        engines: &Engines,
        loaded: &[Loaded],
        index: usize,
        limits: Limits,
        clock: Option<ClockCalibration>,
    ) -> Result<Self> {
        let linkers = Linkers::new(&engines.fast)?;
        let runner = runtime::runner(engines).map_err(|e| format!("{e:#}"));
        let (Some(clock), Ok(ready)) = (clock, &runner) else {
            return Ok(EngineSet {
                engines: engines.clone(),
                linkers,
                runner,
                modules: FormatSetup::uncalibrated(),
                components: None,
            });
        };
        let modules = match calibrated(engines, &**ready, limits, clock) {
            Ok(modules) => modules,
            Err(e) if engines.config.runtime != Runtime::Wasmtime => {
                // A broken runtime (a `node` that hangs or answers garbage)
                // fails its own rows; the others are measured.
                return Ok(EngineSet {
                    engines: engines.clone(),
                    linkers,
                    runner: Err(format!(
                        "{} failed to run the built-in empty guest: {e:#}",
                        engines.config.runtime.name()
                    )),
                    modules: FormatSetup::uncalibrated(),
                    components: None,
                });
            }
            Err(e) => return Err(e),
        };
        let any_component = any_of(loaded, Format::Component, Some(index));
        let components =
            match any_component && runtime::runs(engines.config.runtime, Format::Component) {
                true => Some(FormatSetup::new(
                    engines,
                    &**ready,
                    limits,
                    Format::Component,
                    clock,
                )?),
                false => None,
            };
        Ok(EngineSet {
            engines: engines.clone(),
            linkers,
            runner,
            modules,
            components,
        })
    }
}

/// The built-in modules of `engines` and their calibration under `runner`:
/// a runtime other than wasmtime within [`CALIBRATION_DEADLINE`] (its
/// processes killed past it).
fn calibrated(
    engines: &Engines,
    runner: &dyn Runner,
    limits: Limits,
    clock: ClockCalibration,
) -> Result<FormatSetup> {
    let setup = || FormatSetup::new(engines, runner, limits, Format::Module, clock);
    if engines.config.runtime == Runtime::Wasmtime {
        return setup();
    }
    match processes::within(CALIBRATION_DEADLINE, processes::end_children, setup) {
        (done, false) => done,
        (_, true) => anyhow::bail!(
            "not done within {}: its processes were killed",
            humantime::format_duration(CALIBRATION_DEADLINE)
        ),
    }
}

/// Whether any file of `loaded` is of `format` (in engine set `set`, if
/// given).
fn any_of(loaded: &[Loaded], format: Format, set: Option<usize>) -> bool {
    loaded.iter().any(|l| {
        set.is_none_or(|set| l.engine_set == set) && matches!(&l.file, Ok(w) if w.format == format)
    })
}

/// Everything set up before measuring.
pub struct Session {
    pub prepared: Prepared,
    /// One per `--engine`, in order.
    pub sets: Vec<EngineSet>,
    /// The calibration of native code, when any was given.
    pub native: Option<FormatSetup>,
    pub limits: Limits,
    pub loaded: Vec<Loaded>,
    /// The seeds of every timed instance's calls, from the run's seed.
    pub seeds: Seeds,
    /// The seeds of the counted calls (fuel, Callgrind).
    pub counted_seeds: Seeds,
}

impl Session {
    /// Prepare the calling (measuring) thread, calibrate, and load each
    /// file of `files` under its engine set, as the parent checked it.
    pub fn new(plan: &WorkerPlan, files: &[(PathBuf, usize)]) -> Result<Self> {
        Self::build(plan, files, true)
    }

    /// [`Session::new`] for a worker that does not time: one that counts
    /// with Callgrind, or runs programs for their output. No
    /// clock calibration, no built-in guests and no calibration with them
    /// (its environment reports zeros). They are not needed to count, and
    /// they would leave the heap in a state that moves from run to run (it
    /// differs after the built-ins are compiled), where what the worker
    /// makes next (wasmtime-wasi's runtime, which counted programs use)
    /// would then sit.
    pub fn uncalibrated(plan: &WorkerPlan, files: &[(PathBuf, usize)]) -> Result<Self> {
        Self::build(plan, files, false)
    }

    fn build(plan: &WorkerPlan, files: &[(PathBuf, usize)], calibrating: bool) -> Result<Self> {
        let prepared = prepare_measuring_thread(plan.pin, plan.priority);
        let clock = match calibrating {
            true => clock::calibrate(),
            false => FormatSetup::uncalibrated().calibration.clock,
        };
        let limits = Limits {
            max_memory_bytes: plan.max_memory_bytes,
            huge_pages: plan.huge_pages,
        };
        let engines = all_engines(&plan.engines, plan.cache.as_ref())?;
        let loaded: Vec<Loaded> = files
            .iter()
            .map(|(path, engine_set)| Loaded {
                path: path.clone(),
                engine_set: *engine_set,
                file: load_given(plan, &engines[*engine_set], path, *engine_set),
            })
            .collect();
        let mut sets = Vec::new();
        for (index, engines) in engines.iter().enumerate() {
            // The first set is always calibrated: the report's environment
            // gives its figures.
            let used = index == 0
                || loaded
                    .iter()
                    .any(|l| l.engine_set == index && l.file.is_ok());
            let calibrated = match calibrating && used {
                true => Some(clock),
                false => None,
            };
            sets.push(EngineSet::new(engines, &loaded, index, limits, calibrated)?);
        }
        let native = match calibrating && any_of(&loaded, Format::Native, None) {
            true => Some(FormatSetup::native(clock)?),
            false => None,
        };
        Ok(Session {
            prepared,
            sets,
            native,
            limits,
            loaded,
            seeds: Seeds::new(plan.seeds.timed, plan.seeds.rule),
            counted_seeds: Seeds::new(plan.seeds.counted, plan.seeds.rule),
        })
    }

    /// The built-ins and calibration for workloads of `format` measured in
    /// engine set `set`.
    pub fn format_setup(&self, set: usize, format: Format) -> &FormatSetup {
        let set = &self.sets[set];
        match (format, &set.components, &self.native) {
            (Format::Component, Some(components), _) => components,
            (Format::Native, _, Some(native)) => native,
            _ => &set.modules,
        }
    }

    /// The smallest step of the clock this worker found (0 when it did not
    /// calibrate).
    pub fn clock_resolution_ns(&self) -> f64 {
        (self.sets.first()).map_or(0.0, |s| s.modules.calibration.clock.resolution_ns)
    }

    /// What this worker found where it measures, for the report's
    /// environment.
    pub fn found(&self, plan: &WorkerPlan) -> Found {
        let first = &self.sets[0];
        let calibration = &first.modules.calibration;
        let component = first.components.as_ref().map(|c| &c.calibration);
        Found {
            pinned_core: self.prepared.pinned_core,
            cores: self.prepared.cores,
            priority: self.prepared.priority.clone(),
            calibration: CalibrationFigures {
                clock_resolution_ns: calibration.clock.resolution_ns,
                clock_overhead_ns: calibration.clock.overhead_ns,
                empty_call_ns: calibration.empty_call_ns,
                pause_pair_ns: calibration.pause_pair_ns,
                empty_component_call_ns: component.map(|c| c.empty_call_ns),
                component_pause_pair_ns: component.map(|c| c.pause_pair_ns),
                sample_time_ms: sequence::target_sample_time(plan.sample_time, calibration)
                    .as_secs_f64()
                    * 1e3,
            },
            cpu_model: cpu_model(),
            warnings: self.warnings(),
            pmu: crate::platform::pmu::availability(),
        }
    }

    /// What the header warns of: what was asked for and refused, and
    /// native code, which is not sandboxed.
    fn warnings(&self) -> Vec<String> {
        let mut warnings = self.prepared.warnings.clone();
        let mut native: Vec<String> = Vec::new();
        for loaded in &self.loaded {
            let path = loaded.path.display().to_string();
            if matches!(&loaded.file, Ok(w) if w.format == Format::Native)
                && !native.contains(&path)
            {
                native.push(path);
            }
        }
        if !native.is_empty() {
            warnings.push(format!(
                "native code is not sandboxed: {} runs with this user's rights",
                native.join(", ")
            ));
        }
        warnings
    }

    /// The guest file of `row`, as this worker loaded it.
    pub fn file(&self, row: &Row) -> Result<&GuestFile> {
        let loaded = self
            .loaded
            .iter()
            .find(|l| l.path == row.path && l.engine_set == row.engine_set)
            .with_context(|| format!("{}: not given to this worker", row.path.display()))?;
        match &loaded.file {
            Ok(file) => Ok(file),
            Err(e) => Err(anyhow!("{}", crate::util::error::one_line(&e.error))),
        }
    }

    /// Instantiate the workload of `row` under its engine's runtime and
    /// call its `setup` (telling `progress` each). Returns it and the
    /// instantiation time, in ms (neither setup nor a compile the runtime
    /// did here included: [`Sampler::compile_time`]).
    pub fn instance(
        &self,
        file: &GuestFile,
        row: &Row,
        progress: &dyn Progress,
    ) -> Result<(Box<dyn Sampler>, f64)> {
        progress.calling(Call::Instantiate);
        let start = Instant::now();
        let mut instance = match file.format {
            Format::Native => native::instantiate(&file.path, &row.export, self.seeds)?,
            _ => self.runner(row)?.instantiate(
                borrowed(file),
                &row.export,
                self.limits,
                self.seeds,
            )?,
        };
        // A runtime that compiled here timed it: that is its compile phase,
        // not its instantiation; one in a process of its own (V8) timed its
        // instantiation there.
        let instantiate_ms = match instance.instantiate_time() {
            Some(own) => own.as_secs_f64() * 1e3,
            None => {
                let compile = instance.compile_time().unwrap_or_default();
                start.elapsed().saturating_sub(compile).as_secs_f64() * 1e3
            }
        };
        let size = row.size.unwrap_or(0);
        progress.calling(Call::Setup { size });
        instance.setup(size)?;
        Ok((instance, instantiate_ms))
    }

    /// The runtime of `row`'s engine set, or why it cannot run here.
    fn runner(&self, row: &Row) -> Result<&dyn Runner> {
        self.sets[row.engine_set]
            .runner
            .as_ref()
            .map(|runner| runner.as_ref())
            .map_err(|why| anyhow!("{why}"))
    }

    /// An error unless `row`'s engine runs on wasmtime: `what` (programs,
    /// the instruction count, Callgrind's counts, profiles) is wasmtime's
    /// alone.
    pub fn wasmtime_only(&self, row: &Row, what: &str) -> Result<()> {
        let runtime = self.sets[row.engine_set].engines.config.runtime;
        if runtime != Runtime::Wasmtime {
            anyhow::bail!(
                "{what}: under wasmtime only, not under {} (it measures `run(count, seed)` workloads)",
                runtime.name()
            );
        }
        Ok(())
    }

    /// The engine library of `row`'s engine set, if it has one.
    pub fn library(&self, row: &Row) -> Option<&EngineLibrary> {
        self.sets[row.engine_set].engines.config.library.as_ref()
    }

    /// What runs the iterations of the program `file` of `row`, under
    /// its engine: its runtime (wasmtime's built-in engines run the compiled
    /// code; another runtime compiles the file's bytes), or the engine
    /// library (loaded here, told to `progress` first as a call: its
    /// constructors run, under the call deadline) with the file's bytes.
    /// `grants` are the program's `--dir`, `--env` and `--arg`.
    pub fn program(
        &self,
        file: &GuestFile,
        row: &Row,
        grants: &Grants,
        progress: &dyn Progress,
    ) -> Result<ProgramRunner> {
        Ok(match self.library(row) {
            Some(library) => {
                progress.calling(Call::Load);
                Box::new(LibraryProgram::new(
                    library,
                    &row.path,
                    file.bytes.clone(),
                    grants,
                )?)
            }
            None => self
                .runner(row)?
                .program(borrowed(file), grants, self.limits)?,
        })
    }

    /// Count wasm instructions per op with fuel: compile the very bytes that
    /// were timed again with fuel on, and difference two calls so that
    /// per-call overhead cancels. The calls take the counted seeds.
    pub fn fuel_per_op(
        &self,
        file: &GuestFile,
        row: &Row,
        count: u64,
        progress: &dyn Progress,
    ) -> Result<f64> {
        self.wasmtime_only(row, "the instruction count (--metric instructions)")?;
        let engine = self.sets[row.engine_set].engines.fuel()?;
        let linkers = Linkers::counting_fuel(&engine)?;
        let code = compile(&engine, file.format, &file.bytes)?;
        let (mut instance, _) = set_up(
            &linkers,
            &code,
            row,
            self.limits,
            self.counted_seeds,
            progress,
        )?;
        // Loops unrolled by the compiler are exact multiples of 16 iterations.
        let ops = count.clamp(1, 256);
        let ops = if ops >= 16 { ops / 16 * 16 } else { ops };
        progress.calling(Call::Run { count: ops });
        let one = instance.fuel(ops)?;
        progress.calling(Call::Run { count: 2 * ops });
        let two = instance.fuel(2 * ops)?;
        Ok(two.saturating_sub(one) as f64 / ops as f64)
    }
}

/// Instantiate `row`'s export of `code` under `limits`, its calls seeded
/// from `seeds`, and call its `setup` (telling `progress` each): every pass
/// that calls a `run(count, seed)` workload starts so. Returns the instance
/// and how long instantiating took (setup not included).
pub fn set_up(
    linkers: &Linkers,
    code: &Code,
    row: &Row,
    limits: Limits,
    seeds: Seeds,
    progress: &dyn Progress,
) -> Result<(Instance, Duration)> {
    progress.calling(Call::Instantiate);
    let start = Instant::now();
    let mut instance = Instance::new(linkers, code, &row.export, limits, seeds)?;
    let instantiate = start.elapsed();
    let size = row.size.unwrap_or(0);
    progress.calling(Call::Setup { size });
    instance.setup(size)?;
    Ok((instance, instantiate))
}

/// The file at `path` under engine set `set`, as the parent checked it
/// and handed it in `plan` ([`load::load_checked`]); a file it did not
/// hand is refused.
fn load_given(
    plan: &WorkerPlan,
    engines: &Engines,
    path: &Path,
    set: usize,
) -> Result<GuestFile, LoadError> {
    match (plan.checked.iter()).find(|c| c.path == path && c.engine_set == set) {
        Some(checked) => load::load_checked(engines, checked, plan.max_file_bytes),
        None => Err(LoadError {
            kind: None,
            error: anyhow!("{}: not checked by the parent", path.display()),
        }),
    }
}

/// What a runtime instantiates or compiles of `file`: its file's bytes
/// and wasmtime's compiled code.
fn borrowed(file: &GuestFile) -> Guest<'_> {
    Guest {
        path: &file.path,
        bytes: &file.bytes,
        code: file.code.as_ref(),
    }
}
