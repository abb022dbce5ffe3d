//! Instantiate `run(count, seed)` workloads and call them: the one timed
//! region of the harness.
//!
//! [`Instance::sample`] reads the clock, calls `run(count, seed)` once, and
//! reads the clock again; nothing else sits between the two reads. The host
//! side of `bench.pause`/`bench.resume` (core modules) and of the
//! `wasm-bench:workload/timing` interface (components) lives here too, with
//! each store's limits ([`Limits`]), the WASI a workload may import (preview
//! 1 for modules, 0.2 for components, with nothing granted: no files, no
//! environment, no arguments, empty stdin, output discarded) and
//! plain-words explanations of traps. This module does not decide how often
//! to call; that is [`crate::benchmark`]'s job.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use wasmtime::component::{self, TypedFunc as ComponentFunc};
use wasmtime::{Caller, Engine, Linker, Module, Store, StoreContextMut, TypedFunc};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use crate::guest::contract::{
    BENCH_MODULE, INITIALIZE_EXPORT, SETUP_EXPORT, TIMING_INTERFACE, WASI_P1_MODULE,
};
use crate::guest::format::{Code, Format};
use crate::guest::limits::{Limiter, Limits};
pub use crate::guest::runtime::seam::RawSample;
use crate::guest::runtime::wasmtime::failure::guest_failure;
use crate::guest::sandbox;
use crate::guest::seeds::Seeds;

/// Per-store state: pause/resume bookkeeping, the limiter, and the WASI
/// contexts (nothing granted) a workload's imports reach.
pub struct HostState {
    paused_since: Option<Instant>,
    paused: Duration,
    pauses: u64,
    /// Fuel left when paused, and fuel spent while paused (fuel pass only).
    paused_fuel: Option<u64>,
    fuel_while_paused: u64,
    limiter: Limiter,
    /// WASI preview 1, for core modules that import it: made with the
    /// store when they do (a context costs microseconds an instance).
    wasi_p1: Option<WasiP1Ctx>,
    /// WASI 0.2, for components.
    wasi: Option<WasiCtx>,
    table: component::ResourceTable,
}

impl std::fmt::Debug for HostState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostState")
            .field("paused_since", &self.paused_since)
            .field("paused", &self.paused)
            .field("pauses", &self.pauses)
            .field("limiter", &self.limiter)
            .finish_non_exhaustive()
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: self.wasi.get_or_insert_with(no_grants),
            table: &mut self.table,
        }
    }
}

/// A WASI context that grants nothing: no preopened folder, no
/// environment, no arguments, empty stdin, stdout and stderr discarded,
/// no network (the builders' defaults).
fn no_grants() -> WasiCtx {
    WasiCtxBuilder::new().build()
}

impl HostState {
    /// The state of a store under `limits`, with the WASI contexts `wasi`
    /// calls for made now (any other, should it be called, when it is).
    fn new(limits: Limits, wasi: Wasi) -> Self {
        HostState {
            paused_since: None,
            paused: Duration::ZERO,
            pauses: 0,
            paused_fuel: None,
            fuel_while_paused: 0,
            limiter: Limiter::new(limits),
            wasi_p1: (wasi == Wasi::Preview1).then(|| WasiCtxBuilder::new().build_p1()),
            wasi: (wasi == Wasi::Component).then(no_grants),
            table: component::ResourceTable::new(),
        }
    }

    fn wasi_p1(&mut self) -> &mut WasiP1Ctx {
        self.wasi_p1
            .get_or_insert_with(|| WasiCtxBuilder::new().build_p1())
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
/// controls and WASI (preview 1 for modules, 0.2 for components), and
/// nothing else.
///
/// Timing linkers ([`Linkers::new`]) never touch fuel: a pause or resume does
/// nothing but read the clock and keep count. Only the linkers of the
/// instruction pass ([`Linkers::counting_fuel`]) read the fuel left, so that
/// paused work is not counted.
pub struct Linkers {
    module: Linker<HostState>,
    component: component::Linker<HostState>,
}

impl Linkers {
    /// Linkers for timing.
    pub fn new(engine: &Engine) -> Result<Self> {
        Self::build::<false>(engine)
    }

    /// Linkers for the instruction pass, on an engine with fuel.
    pub fn counting_fuel(engine: &Engine) -> Result<Self> {
        Self::build::<true>(engine)
    }

    /// With `FUEL`, pause and resume record the fuel left; without, the
    /// fuel code is not compiled into them at all.
    fn build<const FUEL: bool>(engine: &Engine) -> Result<Self> {
        let mut module = Linker::new(engine);
        module.func_wrap(
            BENCH_MODULE,
            "pause",
            |mut caller: Caller<'_, HostState>| {
                let left = if FUEL { caller.get_fuel().ok() } else { None };
                caller.data_mut().pause(left)
            },
        )?;
        module.func_wrap(
            BENCH_MODULE,
            "resume",
            |mut caller: Caller<'_, HostState>| {
                let left = if FUEL { caller.get_fuel().ok() } else { None };
                caller.data_mut().resume(left)
            },
        )?;
        wasmtime_wasi::p1::add_to_linker_sync(&mut module, |state: &mut HostState| {
            state.wasi_p1()
        })?;
        let mut component = component::Linker::new(engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut component)?;
        let mut timing = component.instance(TIMING_INTERFACE)?;
        timing.func_wrap(
            "pause",
            |mut store: StoreContextMut<'_, HostState>, (): ()| {
                let left = if FUEL { store.get_fuel().ok() } else { None };
                store.data_mut().pause(left)
            },
        )?;
        timing.func_wrap(
            "resume",
            |mut store: StoreContextMut<'_, HostState>, (): ()| {
                let left = if FUEL { store.get_fuel().ok() } else { None };
                store.data_mut().resume(left)
            },
        )?;
        Ok(Linkers { module, component })
    }
}

/// Fuel given before a call of the instruction pass: more than any call
/// spends before its deadline.
const FUEL_TANK: u64 = u64::MAX / 4;

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

/// Code with its imports resolved once, to instantiate again and again
/// (wasmtime's `InstancePre`).
pub enum Pre {
    Module(wasmtime::InstancePre<HostState>),
    Component(component::InstancePre<HostState>),
}

impl Pre {
    /// Resolve the imports of `code` with `linkers`.
    pub fn new(linkers: &Linkers, code: &Code) -> Result<Self> {
        let pre = match code {
            Code::Module(module) => linkers.module.instantiate_pre(module).map(Pre::Module),
            Code::Component(component) => (linkers.component)
                .instantiate_pre(component)
                .map(Pre::Component),
        };
        pre.map_err(anyhow::Error::from)
            .context("instantiation failed: resolving the imports")
    }
}

/// The WASI context a store is made with: preview 1 for a module that
/// imports it, 0.2 for a component, none for a module that imports none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wasi {
    None,
    Preview1,
    Component,
}

impl Wasi {
    fn of_module(module: &Module) -> Wasi {
        match module.imports().any(|i| i.module() == WASI_P1_MODULE) {
            true => Wasi::Preview1,
            false => Wasi::None,
        }
    }
}

/// What makes an instance: the linkers and the code, or a [`Pre`].
enum Maker<'a> {
    Linkers(&'a Linkers, &'a Code),
    Pre(&'a Pre),
}

impl Maker<'_> {
    /// The WASI context the instance needs.
    fn wasi(&self) -> Wasi {
        match self {
            Maker::Linkers(_, Code::Module(module)) => Wasi::of_module(module),
            Maker::Pre(Pre::Module(pre)) => Wasi::of_module(pre.module()),
            Maker::Linkers(_, Code::Component(_)) | Maker::Pre(Pre::Component(_)) => {
                Wasi::Component
            }
        }
    }

    fn engine(&self) -> &Engine {
        match self {
            Maker::Linkers(_, code) => code.engine(),
            Maker::Pre(Pre::Module(pre)) => pre.module().engine(),
            Maker::Pre(Pre::Component(pre)) => pre.component().engine(),
        }
    }
}

/// A live instance of a workload, ready to be sampled.
pub struct Instance {
    store: Store<HostState>,
    entry: Entry,
    /// The seed of each call.
    seeds: Seeds,
}

impl Instance {
    /// Instantiate `code` in a fresh store, under `limits`, run a WASI
    /// reactor's `_initialize` (its constructors) if it exports one, and
    /// look up `export`; its calls take their seeds from `seeds`.
    pub fn new(
        linkers: &Linkers,
        code: &Code,
        export: &str,
        limits: Limits,
        seeds: Seeds,
    ) -> Result<Self> {
        Self::made(Maker::Linkers(linkers, code), export, limits, seeds)
    }

    /// As [`Instance::new`], from `pre`: the imports resolved once.
    pub fn from_pre(pre: &Pre, export: &str, limits: Limits, seeds: Seeds) -> Result<Self> {
        Self::made(Maker::Pre(pre), export, limits, seeds)
    }

    fn made(maker: Maker<'_>, export: &str, limits: Limits, seeds: Seeds) -> Result<Self> {
        let mut store = Store::new(maker.engine(), HostState::new(limits, maker.wasi()));
        store.limiter(|state| &mut state.limiter);
        let entry = match maker {
            Maker::Linkers(linkers, Code::Module(module)) => {
                let made = linkers.module.instantiate(&mut store, module);
                Self::module(&mut store, made, export, limits.huge_pages)?
            }
            Maker::Pre(Pre::Module(pre)) => {
                let made = pre.instantiate(&mut store);
                Self::module(&mut store, made, export, limits.huge_pages)?
            }
            Maker::Linkers(linkers, Code::Component(component)) => {
                let made = linkers.component.instantiate(&mut store, component);
                Self::component(&mut store, made, export)?
            }
            Maker::Pre(Pre::Component(pre)) => {
                let made = pre.instantiate(&mut store);
                Self::component(&mut store, made, export)?
            }
        };
        Ok(Instance {
            store,
            entry,
            seeds,
        })
    }

    /// The entry points of the module instance `made` in `store`.
    fn module(
        store: &mut Store<HostState>,
        made: wasmtime::Result<wasmtime::Instance>,
        export: &str,
        huge_pages: bool,
    ) -> Result<Entry> {
        let instance = made
            .map_err(|e| explain(e, store.data()))
            .context("instantiation failed")?;
        if huge_pages {
            advise_huge_pages(store, &instance);
        }
        initialize(store, &instance)?;
        let run = instance
            .get_typed_func::<(i64, i64), i64>(&mut *store, export)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("export `{export}`"))?;
        let setup = match instance.get_func(&mut *store, SETUP_EXPORT) {
            Some(func) => Some(
                func.typed::<i64, ()>(&*store)
                    .map_err(anyhow::Error::from)
                    .with_context(|| format!("export `{SETUP_EXPORT}`"))?,
            ),
            None => None,
        };
        Ok(Entry::Module { run, setup })
    }

    /// The entry points of the component instance `made` in `store`.
    fn component(
        store: &mut Store<HostState>,
        made: wasmtime::Result<component::Instance>,
        export: &str,
    ) -> Result<Entry> {
        let instance = made
            .map_err(|e| explain(e, store.data()))
            .context("instantiation failed")?;
        let run = instance
            .get_typed_func::<(u64, u64), (u64,)>(&mut *store, export)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("export `{export}`"))?;
        let setup = match instance.get_func(&mut *store, SETUP_EXPORT) {
            Some(func) => Some(
                func.typed::<(u64,), ()>(&*store)
                    .map_err(anyhow::Error::from)
                    .with_context(|| format!("export `{SETUP_EXPORT}`"))?,
            ),
            None => None,
        };
        Ok(Entry::Component { run, setup })
    }

    /// The instance's store (to arm it for profiling).
    pub fn store_mut(&mut self) -> &mut Store<HostState> {
        &mut self.store
    }

    pub fn format(&self) -> Format {
        match self.entry {
            Entry::Module { .. } => Format::Module,
            Entry::Component { .. } => Format::Component,
        }
    }

    /// Call `setup(size)` if the workload exports it (untimed).
    pub fn setup(&mut self, size: u64) -> Result<()> {
        fill_tank(&mut self.store);
        let result = match &self.entry {
            Entry::Module { setup: Some(f), .. } => f.call(&mut self.store, size as i64),
            Entry::Component { setup: Some(f), .. } => f.call(&mut self.store, (size,)),
            _ => Ok(()),
        };
        result
            .map_err(|e| explain(e, self.store.data()))
            .with_context(|| format!("`setup({size})` failed"))?;
        self.check_not_paused("setup")
    }

    /// Start the seeds of the calls again from the first (see
    /// [`Seeds::restart`]).
    pub fn restart_seeds(&mut self) {
        self.seeds.restart();
    }

    /// Time one call of `run(count, seed)`, with the next seed of the
    /// instance's sequence. Nothing but the guest call sits between the two
    /// clock reads.
    #[inline(never)]
    pub fn sample(&mut self, count: u64) -> Result<RawSample> {
        if sandbox::interrupted() {
            bail!("interrupted");
        }
        self.store.data_mut().reset();
        let seed = self.seeds.take();
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
        let (checksum, elapsed) = result
            .map_err(|e| explain(e, self.store.data()))
            .context("`run` failed")?;
        self.check_not_paused("run")?;
        let state = self.store.data();
        Ok(RawSample {
            elapsed_ns: elapsed.saturating_sub(state.paused).as_nanos() as f64,
            pauses: state.pauses,
            checksum: std::hint::black_box(checksum),
        })
    }

    /// Wasm instructions (fuel) one `run` call spends on `count` operations,
    /// with the next seed of the sequence, paused work excluded. The engine
    /// must have been built with fuel.
    pub fn fuel(&mut self, count: u64) -> Result<u64> {
        const TANK: u64 = FUEL_TANK;
        self.store.data_mut().reset();
        let seed = self.seeds.take();
        self.store
            .set_fuel(TANK)
            .map_err(anyhow::Error::from)
            .context("fuel is not enabled")?;
        let result = match &self.entry {
            Entry::Module { run, .. } => run
                .call(&mut self.store, (count as i64, seed as i64))
                .map(|_| ()),
            Entry::Component { run, .. } => run.call(&mut self.store, (count, seed)).map(|_| ()),
        };
        result
            .map_err(|e| explain(e, self.store.data()))
            .context("`run` failed while counting instructions")?;
        self.check_not_paused("run")?;
        let left = self
            .store
            .get_fuel()
            .map_err(anyhow::Error::from)
            .context("reading the fuel left")?;
        Ok(TANK
            .saturating_sub(left)
            .saturating_sub(self.store.data().fuel_while_paused))
    }

    /// The bytes of linear memory the store holds: the most it has held,
    /// since linear memory never shrinks.
    pub fn peak_memory_bytes(&self) -> u64 {
        self.store.data().limiter.memory_bytes()
    }

    fn check_not_paused(&self, function: &str) -> Result<()> {
        if self.store.data().paused_since.is_some() {
            bail!("`{function}` returned while paused (pause without resume)");
        }
        Ok(())
    }
}

/// Call a WASI reactor's `_initialize` (its constructors: C's static
/// initialisers, Rust's and Zig's start-up code) once, before `setup` and
/// before anything is timed, as a WASI host does for a reactor. A workload
/// that exports none has nothing to run; the contract has checked its type.
fn initialize(store: &mut Store<HostState>, instance: &wasmtime::Instance) -> Result<()> {
    let Some(func) = instance.get_func(&mut *store, INITIALIZE_EXPORT) else {
        return Ok(());
    };
    fill_tank(store);
    func.typed::<(), ()>(&*store)
        .map_err(anyhow::Error::from)
        .with_context(|| format!("export `{INITIALIZE_EXPORT}`"))?
        .call(&mut *store, ())
        .map_err(|e| explain(e, store.data()))
        .with_context(|| format!("`{INITIALIZE_EXPORT}` failed"))
}

/// With fuel counting on (the instruction pass), fill the tank before an
/// untimed call (`_initialize`, `setup`); on other engines this is refused
/// and changes nothing.
/// What wasmtime reserves for a 32-bit linear memory on a 64-bit host by
/// default (`Config::memory_reservation`): the memory grows in place
/// within it.
const MEMORY_RESERVATION: u64 = 4 << 30;

/// Ask for transparent huge pages to back each exported 32-bit linear
/// memory of `instance`, over its reservation (or its maximum, when less),
/// before the guest touches it: what the memory grows into is covered too.
/// A refusal changes nothing measured, so it is not an error.
fn advise_huge_pages(store: &mut Store<HostState>, instance: &wasmtime::Instance) {
    let memories: Vec<wasmtime::Memory> = instance
        .exports(&mut *store)
        .filter_map(wasmtime::Export::into_memory)
        .collect();
    for memory in memories {
        let ty = memory.ty(&*store);
        if ty.is_64() || ty.is_shared() {
            continue;
        }
        let reach = ty.maximum().map_or(MEMORY_RESERVATION, |pages| {
            pages.saturating_mul(ty.page_size()).min(MEMORY_RESERVATION)
        });
        let reach = usize::try_from(reach).unwrap_or(usize::MAX);
        let _ = crate::platform::pages::advise_huge(memory.data_ptr(&*store), reach);
    }
}

fn fill_tank(store: &mut Store<HostState>) {
    let _ = store.set_fuel(FUEL_TANK);
}

/// A guest failure with its explanation: see [`guest_failure`].
fn explain(error: wasmtime::Error, state: &HostState) -> anyhow::Error {
    guest_failure(error, state.limiter.refused())
}
