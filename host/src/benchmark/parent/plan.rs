//! What the parent decides once, before any worker starts: the measuring
//! core, the seeds ([`seeding`], the one place the seed's rule is written),
//! and so each worker's [`WorkerPlan`]; and the report's environment, from
//! what the first worker found and what the run was asked.

use crate::benchmark::protocol::{Found, Seeding, WorkerPlan};
use crate::options::{EngineConfig, PinRequest, Settings};
use crate::platform::gaps::Interruptions;
use crate::platform::load::{self, CoreLoad};
use crate::platform::thread::available_cores;
use crate::results::{Environment, Foreign, HugePages};

/// The run's plan for its workers, and what the parent settled to make it.
pub struct RunPlan {
    /// What every worker of the run is sent.
    pub worker: WorkerPlan,
    /// Why the measuring core was chosen, when the parent chose it.
    pub core_choice: Option<String>,
    /// Each core's load over a short watch before the run, where it could
    /// be read.
    pub loads: Option<Vec<CoreLoad>>,
}

impl RunPlan {
    /// Settle the core and the seeds of a run asked for by `settings`.
    pub fn settle(settings: &Settings) -> Self {
        let loads = available_cores().and_then(|cores| load::watch(&cores));
        let (pin, core_choice) = choose_core(settings.pin, loads.as_deref());
        RunPlan {
            worker: WorkerPlan {
                pin,
                priority: settings.priority,
                seeds: seeding(settings),
                engines: settings.engines.clone(),
                cache: settings.cache.clone(),
                max_memory_bytes: settings.max_memory_bytes,
                huge_pages: settings.huge_pages,
                max_file_bytes: settings.max_file_bytes,
                sample_time: settings.sample_time,
                warmup_cap: settings.warmup_cap,
                count: settings.count,
                grants: settings.grants.clone(),
                checked: Vec::new(),
            },
            core_choice,
            loads,
        }
    }

    /// Whether the machine was busy before the run: the measuring core (as
    /// settled), or every core, busy with other work by the load watched;
    /// or the measuring core shared with other work by what `watched` saw
    /// interrupt it.
    pub fn busy(&self, watched: Option<&Interruptions>) -> bool {
        let measuring = match self.worker.pin {
            PinRequest::Core(core) => Some(core),
            PinRequest::Quietest | PinRequest::None => None,
        };
        let loaded = self
            .loads
            .as_deref()
            .is_some_and(|loads| load::busy_machine(loads, measuring));
        loaded || watched.is_some_and(Interruptions::busy)
    }

    /// The run's seed: the seed of its timed calls.
    pub fn seed(&self) -> u64 {
        self.worker.seeds.timed
    }

    /// The plan of a worker that only counts (the Callgrind pass): every
    /// call takes the counted seed, so that nothing in its job varies from
    /// run to run (the job's text moves the worker's heap, and with it
    /// Callgrind's simulated cache).
    pub fn counting(&self) -> WorkerPlan {
        let counted = self.worker.seeds.counted;
        WorkerPlan {
            seeds: Seeding {
                timed: counted,
                ..self.worker.seeds
            },
            ..self.worker.clone()
        }
    }

    /// The report's environment: what the worker `found`, what the run was
    /// asked, and what the parent settled and watched (the cores' load, and
    /// the `interruptions` of the measuring core when watched).
    pub fn environment(
        &self,
        settings: &Settings,
        found: Found,
        interruptions: Option<Interruptions>,
    ) -> Environment {
        Environment {
            pinned_core: found.pinned_core,
            core_choice: self.core_choice.clone().map(Foreign::from),
            core_loads: self.loads.clone().unwrap_or_default(),
            busy_machine: self.busy(interruptions.as_ref()),
            interruptions,
            cores: found.cores,
            priority: found.priority.into(),
            calibration: found.calibration,
            seed: self.seed(),
            seed_rule: self.worker.seeds.rule,
            real_clock: settings.grants.real_clock,
            drift_pct: settings.drift_pct,
            cpu_model: found.cpu_model.map(Foreign::from),
            engines: settings
                .engines
                .iter()
                .map(|engine| EngineConfig {
                    version: crate::guest::runtime::version(engine.runtime),
                    ..engine.clone()
                })
                .collect(),
            compile_cache: settings
                .cache
                .as_ref()
                .map(|p| Foreign::new(p.display().to_string())),
            max_memory_bytes: settings.max_memory_bytes,
            huge_pages: Some(HugePages {
                asked: settings.huge_pages,
                kernel_mode: crate::platform::pages::mode(),
            }),
            timeout_ms: settings.timeout.as_secs_f64() * 1e3,
            warnings: found.warnings.into_iter().map(Foreign::from).collect(),
            pmu: found.pmu.into(),
        }
    }
}

/// The seeds of a run, decided here and nowhere else:
/// - the timed calls take the run's seed: the user's `--seed`, else a fresh
///   random one (reported in the header and the JSON, so that the run can
///   be repeated with `--seed`);
/// - the counted calls (fuel, Callgrind) take the user's `--seed`, else 0:
///   their counts are the same from run to run unless the user asks for
///   another seed;
/// - either way, every `run` call gets its own seed derived from these and
///   the call's index, or the same one under `--same-seed`
///   ([`crate::guest::seeds`]).
pub fn seeding(settings: &Settings) -> Seeding {
    Seeding {
        timed: settings.seed.unwrap_or_else(|| fastrand::u64(..) >> 1),
        counted: settings.seed.unwrap_or(0),
        rule: settings.seed_rule,
    }
}

/// Settle the measuring core before any worker starts: by default the
/// quietest core of the `loads` watched (every worker then pins the same
/// one), and why.
fn choose_core(pin: PinRequest, loads: Option<&[CoreLoad]>) -> (PinRequest, Option<String>) {
    if pin != PinRequest::Quietest {
        return (pin, None);
    }
    match loads.and_then(|loads| Some((load::quietest(loads)?, load::why_quietest(loads)))) {
        Some((core, why)) => (PinRequest::Core(core), Some(why)),
        None => (pin, None),
    }
}
