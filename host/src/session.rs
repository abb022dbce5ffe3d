//! What every measuring command sets up once: the engines and the guard
//! thread (on the calling thread), then, on the measuring thread, the
//! prepared thread, the calibrated clock, the workloads loaded and checked,
//! and the built-in guests of each kind with their calibration.
//!
//! Commands ([`crate::run`], [`crate::compare`]) call [`supervised`] and
//! build a [`Session`] inside; nothing here measures a workload.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, anyhow};

use crate::clock::{self, ClockCalibration};
use crate::env::{Prepared, measuring_core, prepare_measuring_thread};
use crate::guard::Guard;
use crate::instance::{Builtins, Instance, Limits, Linkers, Safety};
use crate::measure::{self, Calibration};
use crate::progress::{Progress, Stage};
use crate::result::{Environment, Row};
use crate::settings::Settings;
use crate::workload::{self, Engines, Kind, RUN_EXPORT, Workload, one_line, workload_name};

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

/// The built-in guests of one kind and their calibration.
pub struct KindSetup {
    pub builtins: Builtins,
    pub calibration: Calibration,
}

impl KindSetup {
    fn new(
        engines: &Engines,
        linkers: &Linkers,
        limits: Limits,
        kind: Kind,
        clock: ClockCalibration,
    ) -> Result<Self> {
        let builtins = Builtins::new(&engines.fast, kind)?;
        let calibration = measure::calibrate(
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
        Ok(KindSetup {
            builtins,
            calibration,
        })
    }
}

/// Why a file could not be loaded: its kind when known, and one line.
pub type LoadError = (Option<Kind>, String);

/// One row to measure: what it is, and its workload or why it failed.
pub struct Planned<'a> {
    pub row: Row,
    pub workload: Result<&'a Workload, LoadError>,
}

/// The instances one row is measured with.
pub struct RowInstances {
    /// The copy with epoch checks (set up).
    pub guarded: Instance,
    /// The copy without them (set up).
    pub fast: Instance,
    /// The empty guest of the same kind (set up).
    pub empty: Instance,
    /// Instantiation of the fast copy, in ms.
    pub instantiate_ms: f64,
}

/// One engine configuration with its linkers and its built-in guests.
pub struct EngineSet {
    pub engines: Engines,
    pub linkers: Linkers,
    pub guarded_linkers: Linkers,
    pub modules: KindSetup,
    pub components: Option<KindSetup>,
}

/// Everything set up before measuring.
pub struct Session {
    pub prepared: Prepared,
    /// One per `--engine`, in order.
    pub sets: Vec<EngineSet>,
    pub guard: Arc<Guard>,
    pub limits: Limits,
    /// Every file under every engine: the path, the engine set, the workload.
    pub workloads: Vec<(PathBuf, usize, Result<Workload, LoadError>)>,
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
        let mut workloads = Vec::new();
        for path in files {
            for (set, engines) in engines.iter().enumerate() {
                progress.stage(&workload_name(path), Stage::Compile);
                let loaded = workload::load(engines, path)
                    .map_err(|(kind, e)| (kind, format!("{}: {}", path.display(), one_line(&e))));
                workloads.push((path.clone(), set, loaded));
            }
        }
        let mut sets = Vec::new();
        for (index, engines) in engines.iter().enumerate() {
            let linkers = Linkers::new(&engines.fast)?;
            let modules = KindSetup::new(engines, &linkers, limits, Kind::Module, clock)?;
            let any_component = workloads.iter().any(|(_, set, w)| {
                *set == index && matches!(w, Ok(w) if w.code.kind() == Kind::Component)
            });
            let components = match any_component {
                true => Some(KindSetup::new(
                    engines,
                    &linkers,
                    limits,
                    Kind::Component,
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
            workloads,
            seed: settings.seed.unwrap_or_else(|| fastrand::u64(..) >> 1),
        })
    }

    /// The built-ins and calibration for workloads of `kind` measured in
    /// engine set `set`.
    pub fn kind_setup(&self, set: usize, kind: Kind) -> &KindSetup {
        let set = &self.sets[set];
        match (kind, &set.components) {
            (Kind::Component, Some(components)) => components,
            _ => &set.modules,
        }
    }

    pub fn environment(&self, settings: &Settings) -> Environment {
        let first = &self.sets[0];
        Environment::new(
            &self.prepared,
            &first.modules.calibration,
            first.components.as_ref().map(|c| &c.calibration),
            self.seed,
            settings,
            measure::target_sample_time(settings.sample_time, &first.modules.calibration)
                .as_secs_f64()
                * 1e3,
        )
    }

    /// Every row: one per benchmark, size and engine, or one failed row per
    /// file (and engine) that could not be loaded.
    pub fn rows(&self, sizes: &[u64]) -> Vec<Planned<'_>> {
        let several = self.sets.len() > 1;
        self.workloads
            .iter()
            .flat_map(|(path, set, loaded)| {
                let engine = several.then(|| (*set, self.sets[*set].engines.config.short_name()));
                rows_of(path, engine, loaded, sizes)
            })
            .collect()
    }

    /// Instantiate and set up the guarded copy first (it may not return:
    /// the deadline stops it), then the fast copy and the empty guest.
    pub fn instances(&self, workload: &Workload, row: &Row) -> Result<RowInstances> {
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
            .kind_setup(row.engine_set, workload.code.kind())
            .builtins
            .empty_instance(&set.linkers, self.limits)?;
        empty.setup(size)?;
        Ok(RowInstances {
            guarded,
            fast,
            empty,
            instantiate_ms,
        })
    }

    /// Count wasm instructions per op with fuel: compile the row's workload
    /// again with fuel on, and difference two calls so that per-call overhead
    /// cancels.
    pub fn fuel_per_op(&self, row: &Row, count: u64) -> Result<f64> {
        let engine = self.sets[row.engine_set].engines.fuel()?;
        self.guard.watch_engine(&engine);
        let linkers = Linkers::new(&engine)?;
        let code = workload::compile_file(&engine, &row.path)?;
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

fn rows_of<'a>(
    path: &Path,
    engine: Option<(usize, &str)>,
    loaded: &'a Result<Workload, LoadError>,
    sizes: &[u64],
) -> Vec<Planned<'a>> {
    let set = engine.map_or(0, |(set, _)| set);
    let suffix = engine.map(|(_, name)| name);
    match loaded {
        Err(error) => vec![Planned {
            row: Row::new(path, &workload_name(path), RUN_EXPORT, None, set, suffix),
            workload: Err(error.clone()),
        }],
        Ok(workload) => {
            let sizes: Vec<Option<u64>> = match sizes {
                [] => vec![None],
                sizes => sizes.iter().copied().map(Some).collect(),
            };
            workload
                .contract
                .benchmarks
                .iter()
                .flat_map(|bench| {
                    sizes.iter().map(move |&size| Planned {
                        row: Row::new(path, &bench.name, &bench.export, size, set, suffix),
                        workload: Ok(workload),
                    })
                })
                .collect()
        }
    }
}
