//! What every measuring command sets up once: the engines and the guard
//! thread (on the calling thread), then, on the measuring thread, the
//! prepared thread, the calibrated clock, the workloads loaded and checked,
//! the built-in guests of each format with their calibration, and the rows
//! to measure.
//!
//! The scheduler ([`crate::benchmark::schedule`]) calls [`supervised`] and
//! builds a [`Session`] inside; nothing here measures a workload.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, anyhow};

use crate::benchmark::calibrate::{self, Calibration};
use crate::benchmark::progress::{Progress, Stage};
use crate::benchmark::sequence::{self, Subjects};
use crate::guest::builtin::Builtins;
use crate::guest::contract::{Contract, RUN_EXPORT};
use crate::guest::engine::{Engines, compile};
use crate::guest::format::Format;
use crate::guest::instance::{Instance, Linkers, Safety};
use crate::guest::limits::Limits;
use crate::guest::load::{self, LoadError, Workload, workload_name};
use crate::guest::sandbox::Guard;
use crate::options::Settings;
use crate::platform::clock::{self, ClockCalibration};
use crate::platform::thread::{Prepared, cpu_model, measuring_core, prepare_measuring_thread};
use crate::results::{Environment, Row};

/// Native stack of the measuring thread: room for wasm's own 512 KiB limit
/// and the host frames around it.
const MEASURING_STACK: usize = 8 << 20;

/// Create the engines, start the guard thread (off the measuring core), and
/// run `work` on a dedicated measuring thread, so that the calling thread
/// and the guard are not pinned with it.
pub fn supervised<T: Send>(
    settings: &Settings,
    work: impl FnOnce(&[Engines], &Arc<Guard>) -> Result<T> + Send,
) -> Result<T> {
    let engines = settings
        .engines
        .iter()
        .map(|&config| Engines::new(config, settings.cache.clone()))
        .collect::<Result<Vec<_>>>()?;
    let first = engines.first().context("no engine configured")?;
    let (guard, ticker) = Guard::start(
        first.guarded.clone(),
        settings.timeout,
        measuring_core(settings.pin),
    );
    for other in &engines[1..] {
        guard.watch_engine(&other.guarded);
    }
    let result = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("measure".into())
            .stack_size(MEASURING_STACK)
            .spawn_scoped(scope, || work(&engines, &guard))
            .context("starting the measuring thread")?
            .join()
            .map_err(|_| anyhow!("the measuring thread panicked"))?
    });
    guard.stop();
    let _ = ticker.join();
    result
}

/// The built-in guests of one format and their calibration.
pub struct FormatSetup {
    pub builtins: Builtins,
    pub calibration: Calibration,
}

impl FormatSetup {
    fn new(
        engines: &Engines,
        linkers: &Linkers,
        limits: Limits,
        format: Format,
        clock: ClockCalibration,
    ) -> Result<Self> {
        let builtins = Builtins::new(&engines.fast, format)?;
        let calibration = calibrate::calibrate(
            clock,
            &mut builtins.empty_instance(linkers, limits)?,
            &mut Instance::new(
                linkers,
                &builtins.pause_pair,
                RUN_EXPORT,
                limits,
                Safety::Trusted,
            )?,
        )?;
        Ok(FormatSetup {
            builtins,
            calibration,
        })
    }
}

/// One row to measure: what it is, and its workload or why it failed.
pub struct Planned<'a> {
    pub row: Row,
    pub workload: Result<&'a Workload, &'a LoadError>,
}

/// One engine configuration with its linkers and its built-in guests.
pub struct EngineSet {
    pub engines: Engines,
    pub linkers: Linkers,
    pub guarded_linkers: Linkers,
    pub modules: FormatSetup,
    pub components: Option<FormatSetup>,
}

/// Every file under every engine: the path, the engine set, the workload.
pub struct Loaded {
    pub path: PathBuf,
    pub engine_set: usize,
    pub workload: Result<Workload, LoadError>,
}

/// Everything set up before measuring.
pub struct Session {
    pub prepared: Prepared,
    /// One per `--engine`, in order.
    pub sets: Vec<EngineSet>,
    pub guard: Arc<Guard>,
    pub limits: Limits,
    pub loaded: Vec<Loaded>,
    pub seed: u64,
}

impl Session {
    /// Prepare the calling (measuring) thread, calibrate, and load `files`
    /// under every engine.
    pub fn new(
        settings: &Settings,
        files: &[PathBuf],
        engines: &[Engines],
        guard: &Arc<Guard>,
        progress: &dyn Progress,
    ) -> Result<Self> {
        let prepared = prepare_measuring_thread(settings.pin, settings.priority);
        let clock = clock::calibrate();
        let limits = Limits {
            max_memory_bytes: settings.max_memory_bytes,
        };
        let mut loaded = Vec::new();
        for path in files {
            for (engine_set, engines) in engines.iter().enumerate() {
                progress.stage(&workload_name(path), Stage::Compile);
                loaded.push(Loaded {
                    path: path.clone(),
                    engine_set,
                    workload: load::load(engines, path),
                });
            }
        }
        let mut sets = Vec::new();
        for (index, engines) in engines.iter().enumerate() {
            let linkers = Linkers::new(&engines.fast)?;
            let modules = FormatSetup::new(engines, &linkers, limits, Format::Module, clock)?;
            let any_component = loaded.iter().any(|l| {
                l.engine_set == index
                    && matches!(&l.workload, Ok(w) if w.format == Format::Component)
            });
            let components = match any_component {
                true => Some(FormatSetup::new(
                    engines,
                    &linkers,
                    limits,
                    Format::Component,
                    clock,
                )?),
                false => None,
            };
            sets.push(EngineSet {
                guarded_linkers: Linkers::new(&engines.guarded)?,
                engines: engines.clone(),
                linkers,
                modules,
                components,
            });
        }
        Ok(Session {
            prepared,
            sets,
            guard: Arc::clone(guard),
            limits,
            loaded,
            seed: settings.seed.unwrap_or_else(|| fastrand::u64(..) >> 1),
        })
    }

    /// The built-ins and calibration for workloads of `format` measured in
    /// engine set `set`.
    pub fn format_setup(&self, set: usize, format: Format) -> &FormatSetup {
        let set = &self.sets[set];
        match (format, &set.components) {
            (Format::Component, Some(components)) => components,
            _ => &set.modules,
        }
    }

    /// Where and how the measurements are taken.
    pub fn environment(&self, settings: &Settings) -> Environment {
        let first = &self.sets[0];
        let calibration = &first.modules.calibration;
        let component = first.components.as_ref().map(|c| &c.calibration);
        Environment {
            pinned_core: self.prepared.pinned_core,
            cores: self.prepared.cores,
            priority: self.prepared.priority.clone(),
            clock_resolution_ns: calibration.clock.resolution_ns,
            clock_overhead_ns: calibration.clock.overhead_ns,
            empty_call_ns: calibration.empty_call_ns,
            pause_pair_ns: calibration.pause_pair_ns,
            empty_component_call_ns: component.map(|c| c.empty_call_ns),
            component_pause_pair_ns: component.map(|c| c.pause_pair_ns),
            seed: self.seed,
            drift_pct: settings.drift_pct,
            sample_time_ms: sequence::target_sample_time(settings.sample_time, calibration)
                .as_secs_f64()
                * 1e3,
            engines: settings.engines.clone(),
            compile_cache: settings.cache.as_ref().map(|p| p.display().to_string()),
            max_memory_bytes: settings.max_memory_bytes,
            timeout_ms: settings.timeout.as_secs_f64() * 1e3,
            cpu_model: cpu_model(),
            warnings: self.prepared.warnings.clone(),
        }
    }

    /// Every row: one per benchmark, size and engine, or one failed row per
    /// file (and engine) that could not be loaded. A program is one row
    /// whatever the sizes: it takes no size.
    pub fn rows(&self, sizes: &[u64]) -> Vec<Planned<'_>> {
        let several = self.sets.len() > 1;
        self.loaded
            .iter()
            .flat_map(|loaded| {
                let engine =
                    several.then(|| self.sets[loaded.engine_set].engines.config.short_name());
                rows_of(loaded, engine, sizes)
            })
            .collect()
    }

    /// Instantiate and set up the guarded copy first (it may not return:
    /// the deadline stops it), then the fast copy and the empty guest.
    /// Returns them and the instantiation time of the fast copy, in ms.
    pub fn subjects(&self, workload: &Workload, row: &Row) -> Result<(Subjects, f64)> {
        let set = &self.sets[row.engine_set];
        let size = row.size.unwrap_or(0);
        let mut guarded = Instance::new(
            &set.guarded_linkers,
            &workload.guarded,
            &row.export,
            self.limits,
            Safety::Guarded(Arc::clone(&self.guard)),
        )?;
        guarded.setup(size)?;
        self.guard
            .describe_unguarded(format!("{} ({})", row.path.display(), row.export));
        let start = Instant::now();
        let mut fast = Instance::new(
            &set.linkers,
            &workload.code,
            &row.export,
            self.limits,
            Safety::Watched(Arc::clone(&self.guard)),
        )?;
        let instantiate_ms = start.elapsed().as_secs_f64() * 1e3;
        fast.setup(size)?;
        let mut empty = self
            .format_setup(row.engine_set, workload.format)
            .builtins
            .empty_instance(&set.linkers, self.limits)?;
        empty.setup(size)?;
        Ok((
            Subjects {
                guarded,
                fast,
                empty,
            },
            instantiate_ms,
        ))
    }

    /// Count wasm instructions per op with fuel: compile the very bytes that
    /// were timed again with fuel on, and difference two calls so that
    /// per-call overhead cancels.
    pub fn fuel_per_op(&self, workload: &Workload, row: &Row, count: u64) -> Result<f64> {
        let engine = self.sets[row.engine_set].engines.fuel()?;
        self.guard.watch_engine(&engine);
        let linkers = Linkers::counting_fuel(&engine)?;
        let code = compile(&engine, workload.format, &workload.bytes)?;
        let safety = Safety::Guarded(Arc::clone(&self.guard));
        let mut instance = Instance::new(&linkers, &code, &row.export, self.limits, safety)?;
        instance.setup(row.size.unwrap_or(0))?;
        // Loops unrolled by the compiler are exact multiples of 16 iterations.
        let ops = count.clamp(1, 256);
        let ops = if ops >= 16 { ops / 16 * 16 } else { ops };
        let one = instance.fuel(ops, self.seed)?;
        let two = instance.fuel(2 * ops, self.seed)?;
        Ok(two.saturating_sub(one) as f64 / ops as f64)
    }
}

fn rows_of<'a>(loaded: &'a Loaded, engine: Option<&str>, sizes: &[u64]) -> Vec<Planned<'a>> {
    let path = &loaded.path;
    let set = loaded.engine_set;
    match &loaded.workload {
        Err(error) => vec![Planned {
            row: Row::new(path, &workload_name(path), RUN_EXPORT, None, set, engine),
            workload: Err(error),
        }],
        Ok(workload) => {
            let sizes: Vec<Option<u64>> = match (&workload.contract, sizes) {
                (Contract::Program { .. }, _) | (_, []) => vec![None],
                (Contract::Workload { .. }, sizes) => sizes.iter().copied().map(Some).collect(),
            };
            workload
                .contract
                .benchmarks()
                .into_iter()
                .flat_map(|bench| {
                    sizes
                        .iter()
                        .map(|&size| Planned {
                            row: Row::new(path, &bench.name, &bench.export, size, set, engine),
                            workload: Ok(workload),
                        })
                        .collect::<Vec<_>>()
                })
                .collect()
        }
    }
}
