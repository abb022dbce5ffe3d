//! Instantiate workloads and call them: the one timed region of the harness.
//!
//! [`Instance::sample`] reads the clock, calls `run(count, seed)` once, and
//! reads the clock again; nothing else sits between the two reads. The host
//! side of `bench.pause`/`bench.resume` (core modules) and of the
//! `wasm-bench:workload/timing` interface (components) lives here too, and so
//! do the sandbox's limits on each store: linear memory and tables
//! ([`Limits`]), the call deadline of guarded copies, and plain-words
//! explanations of traps. This module does not decide how often to call;
//! that is [`crate::measure`]'s job.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow, bail};
use wasmtime::component::{self, Component, TypedFunc as ComponentFunc};
use wasmtime::{
    Caller, Engine, Linker, Module, ResourceLimiter, Store, StoreContextMut, Trap, TypedFunc,
};

use crate::guard::{self, Guard};

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

/// The sandbox's limits on one store: the bytes of all its linear memories
/// together, and the elements of its tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_memory_bytes: u64,
}

impl Limits {
    /// Table elements allowed: a pointer each, within the memory cap.
    fn max_table_elements(&self) -> u64 {
        self.max_memory_bytes / 8
    }
}

/// Tracks the store's memory against [`Limits`] and remembers a refusal, so
/// that the error can say why a guest failed.
#[derive(Debug)]
pub struct Limiter {
    limits: Limits,
    memory_bytes: u64,
    refused: Option<String>,
}

impl Limiter {
    pub fn new(limits: Limits) -> Self {
        Limiter {
            limits,
            memory_bytes: 0,
            refused: None,
        }
    }

    /// The last refusal, in plain words.
    pub fn refused(&self) -> Option<&str> {
        self.refused.as_deref()
    }
}

impl ResourceLimiter for Limiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let total = self.memory_bytes - (current as u64).min(self.memory_bytes) + desired as u64;
        if total > self.limits.max_memory_bytes {
            self.refused = Some(format!(
                "growing linear memory to {} ({desired} bytes) refused: over the --max-memory limit of {}",
                bytes(desired as u64),
                bytes(self.limits.max_memory_bytes)
            ));
            return Ok(false);
        }
        self.memory_bytes = total;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired as u64 > self.limits.max_table_elements() {
            self.refused = Some(format!(
                "table of {desired} elements refused: over the limit of {} (--max-memory / 8 bytes)",
                self.limits.max_table_elements()
            ));
            return Ok(false);
        }
        Ok(true)
    }
}

/// A byte count in binary units.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if value.fract() == 0.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.2} {}", UNITS[unit])
    }
}

/// Per-store state: pause/resume bookkeeping and the limiter.
#[derive(Debug)]
pub struct HostState {
    paused_since: Option<Instant>,
    paused: Duration,
    pauses: u64,
    /// Fuel left when paused, and fuel spent while paused (fuel pass only).
    paused_fuel: Option<u64>,
    fuel_while_paused: u64,
    limiter: Limiter,
}

impl HostState {
    fn new(limits: Limits) -> Self {
        HostState {
            paused_since: None,
            paused: Duration::ZERO,
            pauses: 0,
            paused_fuel: None,
            fuel_while_paused: 0,
            limiter: Limiter::new(limits),
        }
    }

    fn reset(&mut self) {
        self.paused_since = None;
        self.paused = Duration::ZERO;
        self.pauses = 0;
        self.paused_fuel = None;
        self.fuel_while_paused = 0;
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

/// Fuel given before a call of the instruction pass: more than any call
/// spends before its deadline.
const FUEL_TANK: u64 = u64::MAX / 4;

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

/// How a store is protected from a call that never returns.
#[derive(Clone)]
pub enum Safety {
    /// A guarded copy (epoch checks): every call gets the deadline.
    Guarded(Arc<Guard>),
    /// A fast copy, only called at counts a guarded copy returned from; the
    /// watchdog ends the run should a call hang all the same.
    Watched(Arc<Guard>),
    /// A built-in guest.
    Trusted,
}

/// A live instance of a workload, ready to be sampled.
pub struct Instance {
    store: Store<HostState>,
    entry: Entry,
    safety: Safety,
}

impl Instance {
    /// Instantiate `code` in a fresh store, under `limits`, and look up
    /// `export`.
    pub fn new(
        linkers: &Linkers,
        code: &Code,
        export: &str,
        limits: Limits,
        safety: Safety,
    ) -> Result<Self> {
        let engine = match code {
            Code::Module(module) => module.engine(),
            Code::Component(component) => component.engine(),
        };
        let mut store = Store::new(engine, HostState::new(limits));
        store.limiter(|state| &mut state.limiter);
        if let Safety::Guarded(guard) = &safety {
            store.set_epoch_deadline(guard.deadline_ticks());
        }
        let entry = match code {
            Code::Module(module) => Self::module(&mut store, linkers, module, export, &safety)?,
            Code::Component(component) => {
                Self::component(&mut store, linkers, component, export, &safety)?
            }
        };
        Ok(Instance {
            store,
            entry,
            safety,
        })
    }

    fn module(
        store: &mut Store<HostState>,
        linkers: &Linkers,
        module: &Module,
        export: &str,
        safety: &Safety,
    ) -> Result<Entry> {
        let instance = linkers
            .module
            .instantiate(&mut *store, module)
            .map_err(|e| {
                anyhow!(
                    "instantiation failed: {}",
                    explain(&e, store.data(), safety)
                )
            })?;
        let run = instance
            .get_typed_func::<(i64, i64), i64>(&mut *store, export)
            .map_err(|e| anyhow!("export `{export}`: {}", one_line(&e)))?;
        let setup = match instance.get_func(&mut *store, SETUP_EXPORT) {
            Some(func) => Some(
                func.typed::<i64, ()>(&*store)
                    .map_err(|e| anyhow!("export `{SETUP_EXPORT}`: {}", one_line(&e)))?,
            ),
            None => None,
        };
        Ok(Entry::Module { run, setup })
    }

    fn component(
        store: &mut Store<HostState>,
        linkers: &Linkers,
        component: &Component,
        export: &str,
        safety: &Safety,
    ) -> Result<Entry> {
        let instance = linkers
            .component
            .instantiate(&mut *store, component)
            .map_err(|e| {
                anyhow!(
                    "instantiation failed: {}",
                    explain(&e, store.data(), safety)
                )
            })?;
        let run = instance
            .get_typed_func::<(u64, u64), (u64,)>(&mut *store, export)
            .map_err(|e| anyhow!("export `{export}`: {}", one_line(&e)))?;
        let setup = match instance.get_func(&mut *store, SETUP_EXPORT) {
            Some(func) => Some(
                func.typed::<(u64,), ()>(&*store)
                    .map_err(|e| anyhow!("export `{SETUP_EXPORT}`: {}", one_line(&e)))?,
            ),
            None => None,
        };
        Ok(Entry::Component { run, setup })
    }

    /// Give the next call its full deadline (guarded copies only).
    fn arm(&mut self) {
        if let Safety::Guarded(guard) = &self.safety {
            self.store.set_epoch_deadline(guard.deadline_ticks());
        }
    }

    pub fn kind(&self) -> Kind {
        match self.entry {
            Entry::Module { .. } => Kind::Module,
            Entry::Component { .. } => Kind::Component,
        }
    }

    /// Call `setup(size)` if the workload exports it (untimed).
    pub fn setup(&mut self, size: u64) -> Result<()> {
        self.arm();
        // With fuel counting on (the instruction pass), fill the tank; on
        // other engines this is refused and changes nothing.
        let _ = self.store.set_fuel(FUEL_TANK);
        let watchdog = match &self.safety {
            Safety::Watched(guard) => Some(Arc::clone(guard)),
            _ => None,
        };
        if let Some(guard) = &watchdog {
            guard.unguarded_start();
        }
        let result = match &self.entry {
            Entry::Module { setup: Some(f), .. } => f.call(&mut self.store, size as i64),
            Entry::Component { setup: Some(f), .. } => f.call(&mut self.store, (size,)),
            _ => Ok(()),
        };
        if let Some(guard) = &watchdog {
            guard.unguarded_end();
        }
        result.map_err(|e| {
            anyhow!(
                "`setup({size})` failed: {}",
                explain(&e, self.store.data(), &self.safety)
            )
        })?;
        self.check_not_paused("setup")
    }

    /// Time one call of `run(count, seed)`. Nothing but the guest call sits
    /// between the two clock reads.
    #[inline(never)]
    pub fn sample(&mut self, count: u64, seed: u64) -> Result<RawSample> {
        if guard::interrupted() {
            bail!("interrupted");
        }
        self.store.data_mut().reset();
        self.arm();
        let watchdog = match &self.safety {
            Safety::Watched(guard) => Some(Arc::clone(guard)),
            _ => None,
        };
        if let Some(guard) = &watchdog {
            guard.unguarded_start();
        }
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
        if let Some(guard) = &watchdog {
            guard.unguarded_end();
        }
        let (checksum, elapsed) = result.map_err(|e| {
            anyhow!(
                "`run` failed: {}",
                explain(&e, self.store.data(), &self.safety)
            )
        })?;
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
        const TANK: u64 = FUEL_TANK;
        self.store.data_mut().reset();
        self.arm();
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
            Kind::Module | Kind::Program => (EMPTY_MODULE_WAT, PAUSE_PAIR_MODULE_WAT),
            Kind::Component => (EMPTY_COMPONENT_WAT, PAUSE_PAIR_COMPONENT_WAT),
        };
        Ok(Builtins {
            empty: crate::workload::builtin(engine, empty)?,
            pause_pair: crate::workload::builtin(engine, pause_pair)?,
        })
    }

    /// A fresh instance of the empty guest.
    pub fn empty_instance(&self, linkers: &Linkers, limits: Limits) -> Result<Instance> {
        Instance::new(linkers, &self.empty, RUN_EXPORT, limits, Safety::Trusted)
    }
}

/// A guest failure in plain words: the trap, what it means, and any limit
/// that was refused on the way.
fn explain(error: &wasmtime::Error, state: &HostState, safety: &Safety) -> String {
    let timeout = match safety {
        Safety::Guarded(guard) => Some(guard.timeout()),
        _ => None,
    };
    explain_trap(error, state.limiter.refused.as_deref(), timeout)
}

/// A trap in plain words, with the refused limit if any; `timeout` is the
/// deadline when the code was guarded.
pub fn explain_trap(
    error: &wasmtime::Error,
    refused: Option<&str>,
    timeout: Option<Duration>,
) -> String {
    let mut text = match error.downcast_ref::<Trap>() {
        Some(Trap::Interrupt) if guard::interrupted() => "interrupted".to_string(),
        Some(Trap::Interrupt) => match timeout {
            Some(timeout) => format!(
                "did not return within --timeout {} (infinite loop?)",
                humantime::format_duration(timeout)
            ),
            None => "interrupted".to_string(),
        },
        Some(Trap::StackOverflow) => {
            "stack overflow: call stack exhausted (unbounded recursion?)".to_string()
        }
        Some(Trap::IntegerDivisionByZero) => "integer divide by zero".to_string(),
        Some(Trap::MemoryOutOfBounds) => "out-of-bounds memory access".to_string(),
        Some(Trap::UnreachableCodeReached) => {
            "wasm `unreachable` executed (the guest aborted)".to_string()
        }
        _ => one_line(error),
    };
    if let Some(refused) = refused {
        text.push_str("; ");
        text.push_str(refused);
    }
    text
}
