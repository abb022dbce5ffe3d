//! What every measuring command sets up once, on the measuring thread: the
//! prepared thread, the calibrated clock, the engine, the linkers, the
//! workloads loaded and checked, and the built-in guests of each kind with
//! their calibration.
//!
//! Commands ([`crate::run`], [`crate::compare`]) build a [`Session`] and
//! then measure; nothing here measures a workload.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use wasmtime::Engine;

use crate::clock::{self, ClockCalibration};
use crate::env::{Prepared, prepare_measuring_thread};
use crate::instance::{Builtins, Instance, Linkers};
use crate::measure::{self, Calibration};
use crate::result::{Environment, Row};
use crate::settings::Settings;
use crate::workload::{self, Kind, RUN_EXPORT, Workload, one_line, workload_name};

/// Run `work` on a dedicated measuring thread, so that the calling thread
/// (and anything it spawns) is not pinned with it.
pub fn on_measuring_thread<T: Send>(work: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("measure".into())
            .spawn_scoped(scope, work)
            .context("starting the measuring thread")?
            .join()
            .map_err(|_| anyhow!("the measuring thread panicked"))?
    })
}

/// The built-in guests of one kind and their calibration.
pub struct KindSetup {
    pub builtins: Builtins,
    pub calibration: Calibration,
}

impl KindSetup {
    fn new(
        engine: &Engine,
        linkers: &Linkers,
        kind: Kind,
        clock: ClockCalibration,
    ) -> Result<Self> {
        let builtins = Builtins::new(engine, kind)?;
        let calibration = measure::calibrate(
            clock,
            &mut builtins.empty_instance(linkers)?,
            &mut Instance::new(linkers, &builtins.pause_pair, RUN_EXPORT)?,
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

/// Everything set up before measuring.
pub struct Session {
    pub prepared: Prepared,
    pub engine: Engine,
    pub linkers: Linkers,
    pub workloads: Vec<(PathBuf, Result<Workload, LoadError>)>,
    pub modules: KindSetup,
    pub components: Option<KindSetup>,
    pub seed: u64,
}

impl Session {
    /// Prepare the calling (measuring) thread, calibrate, and load `files`.
    pub fn new(settings: &Settings, files: &[PathBuf]) -> Result<Self> {
        let prepared = prepare_measuring_thread(settings.pin, settings.priority);
        let clock = clock::calibrate();
        let engine = workload::engine()?;
        let linkers = Linkers::new(&engine)?;
        let workloads: Vec<(PathBuf, Result<Workload, LoadError>)> = files
            .iter()
            .map(|path| {
                let loaded = workload::load(&engine, path)
                    .map_err(|(kind, e)| (kind, format!("{}: {}", path.display(), one_line(&e))));
                (path.clone(), loaded)
            })
            .collect();
        let modules = KindSetup::new(&engine, &linkers, Kind::Module, clock)?;
        let any_component = workloads
            .iter()
            .any(|(_, w)| matches!(w, Ok(w) if w.code.kind() == Kind::Component));
        let components = match any_component {
            true => Some(KindSetup::new(&engine, &linkers, Kind::Component, clock)?),
            false => None,
        };
        Ok(Session {
            prepared,
            engine,
            linkers,
            workloads,
            modules,
            components,
            seed: settings.seed.unwrap_or_else(|| fastrand::u64(..) >> 1),
        })
    }

    /// The built-ins and calibration for workloads of `kind`.
    pub fn kind_setup(&self, kind: Kind) -> &KindSetup {
        match (kind, &self.components) {
            (Kind::Component, Some(components)) => components,
            _ => &self.modules,
        }
    }

    pub fn environment(&self, settings: &Settings) -> Environment {
        Environment::new(
            &self.prepared,
            &self.modules.calibration,
            self.components.as_ref().map(|c| &c.calibration),
            self.seed,
            settings.drift_pct,
            measure::target_sample_time(settings.sample_time, &self.modules.calibration)
                .as_secs_f64()
                * 1e3,
        )
    }

    /// Every row: one per benchmark and size, or one failed row per file
    /// that could not be loaded.
    pub fn rows(&self, sizes: &[u64]) -> Vec<Planned<'_>> {
        self.workloads
            .iter()
            .flat_map(|(path, loaded)| rows_of(path, loaded, sizes))
            .collect()
    }
}

fn rows_of<'a>(
    path: &Path,
    loaded: &'a Result<Workload, LoadError>,
    sizes: &[u64],
) -> Vec<Planned<'a>> {
    match loaded {
        Err(error) => vec![Planned {
            row: Row::new(path, &workload_name(path), RUN_EXPORT, None),
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
                        row: Row::new(path, &bench.name, &bench.export, size),
                        workload: Ok(workload),
                    })
                })
                .collect()
        }
    }
}

/// Count wasm instructions per op with fuel: compile `workload` again with
/// fuel on, and difference two calls so that per-call overhead cancels.
pub fn fuel_per_op(row: &Row, count: u64, seed: u64) -> Result<f64> {
    let engine = workload::fuel_engine()?;
    let linkers = Linkers::new(&engine)?;
    let workload = workload::load(&engine, &row.path).map_err(|(_, e)| e)?;
    let mut instance = Instance::new(&linkers, &workload.code, &row.export)?;
    instance.setup(row.size.unwrap_or(0))?;
    // Loops unrolled by the compiler are exact multiples of 16 iterations.
    let ops = count.clamp(1, 256);
    let ops = if ops >= 16 { ops / 16 * 16 } else { ops };
    let one = instance.fuel(ops, seed)?;
    let two = instance.fuel(2 * ops, seed)?;
    Ok(two.saturating_sub(one) as f64 / ops as f64)
}
