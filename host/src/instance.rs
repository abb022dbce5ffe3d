//! Instantiate workloads and call them: the one timed region of the harness.
//!
//! [`Instance::sample`] reads the clock, calls `run(count, seed)` once, and
//! reads the clock again; nothing else sits between the two reads. The host
//! side of `bench.pause`/`bench.resume` (core modules) and of the
//! `wasm-bench:workload/timing` interface (components) lives here too. This
//! module does not decide how often to call; that is [`crate::measure`]'s job.

use std::time::{Duration, Instant};

use anyhow::{Result, anyhow, bail};
use wasmtime::component::{self, Component, TypedFunc as ComponentFunc};
use wasmtime::{Caller, Engine, Linker, Module, Store, StoreContextMut, TypedFunc};

use crate::workload::{
    BENCH_MODULE, Code, Kind, RUN_EXPORT, SETUP_EXPORT, TIMING_INTERFACE, one_line,
};

/// The empty core guest: the same exports as a workload, and no work. Its
/// per-call cost, measured through the very same path, is subtracted from
/// every sample of a core module.
pub const EMPTY_MODULE_WAT: &str = r#"(module
  (func (export "setup") (param i64))
  (func (export "run") (param $count i64) (param $seed i64) (result i64)
    local.get $seed))"#;

/// The empty component: the same for components.
pub const EMPTY_COMPONENT_WAT: &str = r#"(component
  (core module $m
    (func (export "setup") (param i64))
    (func (export "run") (param i64 i64) (result i64) local.get 1))
  (core instance $i (instantiate $m))
  (func (export "setup") (param "size" u64) (canon lift (core func $i "setup")))
  (func (export "run") (param "count" u64) (param "seed" u64) (result u64)
    (canon lift (core func $i "run"))))"#;

/// Calls `bench.pause` then `bench.resume`, `count` times: calibrates the cost
/// of a pause/resume pair that stays inside the clock, for core modules.
pub const PAUSE_PAIR_MODULE_WAT: &str = r#"(module
  (import "bench" "pause" (func $pause))
  (import "bench" "resume" (func $resume))
  (func (export "run") (param $count i64) (param $seed i64) (result i64)
    (block $done
      (loop $again
        (br_if $done (i64.le_s (local.get $count) (i64.const 0)))
        (call $pause)
        (call $resume)
        (local.set $count (i64.sub (local.get $count) (i64.const 1)))
        (br $again)))
    local.get $seed))"#;

/// The same for components, through the timing interface.
pub const PAUSE_PAIR_COMPONENT_WAT: &str = r#"(component
  (import "wasm-bench:workload/timing@0.1.0" (instance $timing
    (export "pause" (func))
    (export "resume" (func))))
  (core func $pause (canon lower (func $timing "pause")))
  (core func $resume (canon lower (func $timing "resume")))
  (core instance $t (export "pause" (func $pause)) (export "resume" (func $resume)))
  (core module $m
    (import "t" "pause" (func $pause))
    (import "t" "resume" (func $resume))
    (func (export "run") (param $count i64) (param $seed i64) (result i64)
      (block $done
        (loop $again
          (br_if $done (i64.le_s (local.get $count) (i64.const 0)))
          (call $pause)
          (call $resume)
          (local.set $count (i64.sub (local.get $count) (i64.const 1)))
          (br $again)))
      local.get $seed))
  (core instance $i (instantiate $m (with "t" (instance $t))))
  (func (export "run") (param "count" u64) (param "seed" u64) (result u64)
    (canon lift (core func $i "run"))))"#;

/// Per-store state: the bookkeeping of pause/resume.
#[derive(Debug, Default)]
pub struct HostState {
    paused_since: Option<Instant>,
    paused: Duration,
    pauses: u64,
    /// Fuel left when paused, and fuel spent while paused (fuel pass only).
    paused_fuel: Option<u64>,
    fuel_while_paused: u64,
}

impl HostState {
    fn reset(&mut self) {
        *self = HostState::default();
    }

    /// `fuel` is the fuel left, when fuel is being counted.
    fn pause(&mut self, fuel: Option<u64>) -> wasmtime::Result<()> {
        let now = Instant::now();
        if self.paused_since.is_some() {
            return Err(wasmtime::Error::msg("pause called while already paused"));
        }
        self.paused_since = Some(now);
        self.paused_fuel = fuel;
        self.pauses += 1;
        Ok(())
    }

    fn resume(&mut self, fuel: Option<u64>) -> wasmtime::Result<()> {
        let Some(since) = self.paused_since.take() else {
            return Err(wasmtime::Error::msg("resume called without pause"));
        };
        self.paused += Instant::now().duration_since(since);
        if let (Some(before), Some(after)) = (self.paused_fuel.take(), fuel) {
            self.fuel_while_paused += before.saturating_sub(after);
        }
        Ok(())
    }
}

/// The linkers every workload is instantiated with: they provide the timing
/// controls and nothing else.
pub struct Linkers {
    module: Linker<HostState>,
    component: component::Linker<HostState>,
}

impl Linkers {
    pub fn new(engine: &Engine) -> Result<Self> {
        let mut module = Linker::new(engine);
        module.func_wrap(
            BENCH_MODULE,
            "pause",
            |mut caller: Caller<'_, HostState>| {
                let fuel = caller.get_fuel().ok();
                caller.data_mut().pause(fuel)
            },
        )?;
        module.func_wrap(
            BENCH_MODULE,
            "resume",
            |mut caller: Caller<'_, HostState>| {
                let fuel = caller.get_fuel().ok();
                caller.data_mut().resume(fuel)
            },
        )?;
        let mut component = component::Linker::new(engine);
        let mut timing = component.instance(TIMING_INTERFACE)?;
        timing.func_wrap(
            "pause",
            |mut store: StoreContextMut<'_, HostState>, (): ()| {
                let fuel = store.get_fuel().ok();
                store.data_mut().pause(fuel)
            },
        )?;
        timing.func_wrap(
            "resume",
            |mut store: StoreContextMut<'_, HostState>, (): ()| {
                let fuel = store.get_fuel().ok();
                store.data_mut().resume(fuel)
            },
        )?;
        Ok(Linkers { module, component })
    }
}

/// One timed guest call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RawSample {
    /// Time between the two clock reads, less the time spent paused, in ns.
    pub elapsed_ns: f64,
    /// Pauses during the sample.
    pub pauses: u64,
    /// What `run` returned.
    pub checksum: u64,
}

enum Entry {
    Module {
        run: TypedFunc<(i64, i64), i64>,
        setup: Option<TypedFunc<i64, ()>>,
    },
    Component {
        run: ComponentFunc<(u64, u64), (u64,)>,
        setup: Option<ComponentFunc<(u64,), ()>>,
    },
}

/// A live instance of a workload, ready to be sampled.
pub struct Instance {
    store: Store<HostState>,
    entry: Entry,
}

impl Instance {
    /// Instantiate `code` in a fresh store and look up `export`.
    pub fn new(linkers: &Linkers, code: &Code, export: &str) -> Result<Self> {
        match code {
            Code::Module(module) => Self::module(linkers, module, export),
            Code::Component(component) => Self::component(linkers, component, export),
        }
    }

    fn module(linkers: &Linkers, module: &Module, export: &str) -> Result<Self> {
        let mut store = Store::new(module.engine(), HostState::default());
        let instance = linkers
            .module
            .instantiate(&mut store, module)
            .map_err(|e| anyhow!("instantiation failed: {}", one_line(&e)))?;
        let run = instance
            .get_typed_func::<(i64, i64), i64>(&mut store, export)
            .map_err(|e| anyhow!("export `{export}`: {}", one_line(&e)))?;
        let setup = match instance.get_func(&mut store, SETUP_EXPORT) {
            Some(func) => Some(
                func.typed::<i64, ()>(&store)
                    .map_err(|e| anyhow!("export `{SETUP_EXPORT}`: {}", one_line(&e)))?,
            ),
            None => None,
        };
        Ok(Instance {
            store,
            entry: Entry::Module { run, setup },
        })
    }

    fn component(linkers: &Linkers, component: &Component, export: &str) -> Result<Self> {
        let mut store = Store::new(component.engine(), HostState::default());
        let instance = linkers
            .component
            .instantiate(&mut store, component)
            .map_err(|e| anyhow!("instantiation failed: {}", one_line(&e)))?;
        let run = instance
            .get_typed_func::<(u64, u64), (u64,)>(&mut store, export)
            .map_err(|e| anyhow!("export `{export}`: {}", one_line(&e)))?;
        let setup = match instance.get_func(&mut store, SETUP_EXPORT) {
            Some(func) => Some(
                func.typed::<(u64,), ()>(&store)
                    .map_err(|e| anyhow!("export `{SETUP_EXPORT}`: {}", one_line(&e)))?,
            ),
            None => None,
        };
        Ok(Instance {
            store,
            entry: Entry::Component { run, setup },
        })
    }

    pub fn kind(&self) -> Kind {
        match self.entry {
            Entry::Module { .. } => Kind::Module,
            Entry::Component { .. } => Kind::Component,
        }
    }

    /// Call `setup(size)` if the workload exports it (untimed).
    pub fn setup(&mut self, size: u64) -> Result<()> {
        let result = match &self.entry {
            Entry::Module { setup: Some(f), .. } => f.call(&mut self.store, size as i64),
            Entry::Component { setup: Some(f), .. } => f.call(&mut self.store, (size,)),
            _ => return Ok(()),
        };
        result.map_err(|e| anyhow!("`setup({size})` failed: {}", one_line(&e)))?;
        self.check_not_paused("setup")
    }

    /// Time one call of `run(count, seed)`. Nothing but the guest call sits
    /// between the two clock reads.
    #[inline(never)]
    pub fn sample(&mut self, count: u64, seed: u64) -> Result<RawSample> {
        self.store.data_mut().reset();
        let result = match &self.entry {
            Entry::Module { run, .. } => {
                let args = (count as i64, seed as i64);
                let start = Instant::now();
                let result = run.call(&mut self.store, args);
                let end = Instant::now();
                result.map(|r| (r as u64, end.duration_since(start)))
            }
            Entry::Component { run, .. } => {
                let start = Instant::now();
                let result = run.call(&mut self.store, (count, seed));
                let end = Instant::now();
                result.map(|(r,)| (r, end.duration_since(start)))
            }
        };
        let (checksum, elapsed) = result.map_err(|e| anyhow!("`run` failed: {}", one_line(&e)))?;
        self.check_not_paused("run")?;
        let state = self.store.data();
        Ok(RawSample {
            elapsed_ns: elapsed.saturating_sub(state.paused).as_nanos() as f64,
            pauses: state.pauses,
            checksum: std::hint::black_box(checksum),
        })
    }

    /// Wasm instructions (fuel) one `run` call spends on `count` operations,
    /// paused work excluded. The engine must have been built with fuel.
    pub fn fuel(&mut self, count: u64, seed: u64) -> Result<u64> {
        const TANK: u64 = u64::MAX / 4;
        self.store.data_mut().reset();
        self.store
            .set_fuel(TANK)
            .map_err(|e| anyhow!("fuel is not enabled: {}", one_line(&e)))?;
        let result = match &self.entry {
            Entry::Module { run, .. } => run
                .call(&mut self.store, (count as i64, seed as i64))
                .map(|_| ()),
            Entry::Component { run, .. } => run.call(&mut self.store, (count, seed)).map(|_| ()),
        };
        result
            .map_err(|e| anyhow!("`run` failed while counting instructions: {}", one_line(&e)))?;
        self.check_not_paused("run")?;
        let left = self
            .store
            .get_fuel()
            .map_err(|e| anyhow!("{}", one_line(&e)))?;
        Ok(TANK
            .saturating_sub(left)
            .saturating_sub(self.store.data().fuel_while_paused))
    }

    fn check_not_paused(&self, function: &str) -> Result<()> {
        if self.store.data().paused_since.is_some() {
            bail!("`{function}` returned while paused (pause without resume)");
        }
        Ok(())
    }
}

/// The built-in guests of one kind: the empty guest and the pause/resume
/// calibrator.
pub struct Builtins {
    pub empty: Code,
    pub pause_pair: Code,
}

impl Builtins {
    pub fn new(engine: &Engine, kind: Kind) -> Result<Self> {
        let (empty, pause_pair) = match kind {
            Kind::Module => (EMPTY_MODULE_WAT, PAUSE_PAIR_MODULE_WAT),
            Kind::Component => (EMPTY_COMPONENT_WAT, PAUSE_PAIR_COMPONENT_WAT),
        };
        Ok(Builtins {
            empty: crate::workload::builtin(engine, empty)?,
            pause_pair: crate::workload::builtin(engine, pause_pair)?,
        })
    }

    /// A fresh instance of the empty guest.
    pub fn empty_instance(&self, linkers: &Linkers) -> Result<Instance> {
        Instance::new(linkers, &self.empty, RUN_EXPORT)
    }
}
