//! A program under wasmtime: compiled once, each iteration a fresh
//! instance, as [`crate::guest::program`] says.
//!
//! Programs run on the same code as every workload, without checks of the
//! harness: an iteration that outlives `--timeout` is ended by the parent
//! killing the worker process. This module runs one iteration; how
//! many, and when to stop, is [`crate::benchmark`]'s job.
//!
//! Counting with Callgrind ([`Program::counting`], [`Program::count`],
//! [`Program::count_instantiation`]), an iteration runs the same code with
//! as little in it as can be that moves from run to run: the imports and
//! `_start` (a component's exports) are resolved once, beforehand, so that
//! the host looks no name up (wasmtime's linkers and export maps hash names
//! with keys drawn at random per process, and how far a lookup probes, and
//! where, varies with them; wasmtime-wasi's own lookup of the guest's memory
//! at each preview1 call remains); the WASI context is built ahead of the
//! iteration, with the guest's random numbers drawn from generators seeded
//! by the run's seed and file operations done on the calling thread (not on
//! threads of wasmtime-wasi's runtime); and no clock is read
//! (`bench.start`/`bench.end` only switch Callgrind's collecting, and an
//! iteration's times are zero). The counted instantiation is thus the timed
//! one less resolving the imports.
//!
//! Here: the program, its iterations and their times; `counting` holds what
//! only a Callgrind pass needs.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use wasmtime::component::{Component, ResourceTable};
use wasmtime::{
    Caller, InstancePre, Linker, Module, ModuleExport, Store, StoreContextMut, TypedFunc,
};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::p2::bindings::sync::{Command, CommandPre};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{I32Exit, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use crate::guest::contract::{BENCH_MODULE, START_EXPORT};
use crate::guest::format::Code;
use crate::guest::limits::{Limiter, Limits};
use crate::guest::runtime::wasmtime::failure::guest_failure;
use crate::guest::sandbox;
use crate::options::Grants;

mod counting;

use crate::guest::program::world::{Ended, Ran, Timing};
use crate::guest::program::{CAPTURE_LIMIT, Iteration, World};

/// A phase of an iteration, as a [`Bracket`] sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The instantiation.
    Instantiate,
    /// The run; `whole` when the run is the region (the program's own
    /// `bench.start`/`bench.end` do not bracket it).
    Run { whole: bool },
}

/// What brackets the two phases of an iteration: the last thing before
/// each and the first after it. The timed iteration reads the clock
/// ([`Clock`]); a counting pass switches Callgrind (in
/// `benchmark::callgrind`); a warm-up or a profile brackets with nothing
/// ([`Unbracketed`]). One iteration, generic over it, serves all of them.
pub trait Bracket {
    /// The iteration's store, before anything runs in it.
    fn prepare_store<T: 'static>(&mut self, _store: &mut Store<T>) {}
    /// Just before `phase` (nothing, unless said otherwise).
    fn open(&mut self, _phase: Phase) -> Result<()> {
        Ok(())
    }
    /// Just after `phase`: how long it took (zero, unless timed).
    /// `collecting` tells whether the region bracketed by the program was
    /// left open (asked only by a bracket that needs it, after its own
    /// first step).
    fn close(&mut self, _phase: Phase, _collecting: impl FnOnce() -> bool) -> Result<Duration> {
        Ok(Duration::ZERO)
    }
}

/// The bracket of a timed iteration: a clock read on each side of a phase.
pub struct Clock(Instant);

impl Clock {
    pub fn new() -> Self {
        Clock(Instant::now())
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}

impl Bracket for Clock {
    #[inline(always)]
    fn open(&mut self, _phase: Phase) -> Result<()> {
        self.0 = Instant::now();
        Ok(())
    }
    #[inline(always)]
    fn close(&mut self, _phase: Phase, _collecting: impl FnOnce() -> bool) -> Result<Duration> {
        Ok(self.0.elapsed())
    }
}

/// A bracket that does nothing: the phases take no time that is kept.
pub struct Unbracketed;

impl Bracket for Unbracketed {}

/// `work` on `store`, bracketed by `bracket` as `phase`; what it returned,
/// and how long it took.
#[inline(always)]
fn bracketed<B: Bracket, W, R>(
    bracket: &mut B,
    phase: Phase,
    store: &mut Store<State<W>>,
    work: impl FnOnce(&mut Store<State<W>>) -> R,
) -> Result<(R, Duration)> {
    bracket.open(phase)?;
    let done = work(store);
    let took = bracket.close(phase, || store.data().timing.collecting)?;
    Ok((done, took))
}

/// Store data of one iteration; `W` is the WASI context of the module or
/// component flavour.
struct State<W> {
    wasi: W,
    limiter: Limiter,
    timing: Timing,
}

/// The WASI preview 2 context of a component.
struct P2 {
    ctx: WasiCtx,
    table: ResourceTable,
}

impl P2 {
    fn new(ctx: WasiCtx) -> Self {
        P2 {
            ctx,
            table: ResourceTable::new(),
        }
    }
}

impl WasiView for State<P2> {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi.ctx,
            table: &mut self.wasi.table,
        }
    }
}

/// What [`Program::counting`] resolves once, so that a counting iteration
/// looks no name up: the instance's imports, and `_start` (a component's
/// exports).
enum Resolved {
    Module {
        pre: InstancePre<State<WasiP1Ctx>>,
        start: ModuleExport,
    },
    Component {
        pre: CommandPre<State<P2>>,
    },
}

/// The WASI context of one counting iteration.
enum CountingWasi {
    P1(WasiP1Ctx),
    P2(WasiCtx),
}

/// What one counting iteration runs with, built ahead of it
/// ([`Program::counting_context`]): building a WASI context draws random
/// seeds (wasmtime-wasi's defaults, replaced by the seeded generators of
/// [`World::wasi`]).
pub struct CountingContext {
    wasi: CountingWasi,
    stdout: MemoryOutputPipe,
    stderr: MemoryOutputPipe,
}

/// The compiled program and its linker.
enum Runner {
    Module {
        module: Module,
        linker: Linker<State<WasiP1Ctx>>,
    },
    Component {
        component: Component,
        linker: wasmtime::component::Linker<State<P2>>,
    },
}

/// Runs one program: its compiled code and everything an
/// iteration needs.
pub struct Program {
    runner: Runner,
    /// Whether its own `bench.start`/`bench.end` toggle Callgrind (a
    /// counting pass of a program that imports both).
    bench_toggles: bool,
    world: World,
    limits: Limits,
    /// A counting pass's imports and entry, resolved once.
    resolved: Option<Resolved>,
    /// Seed of a counting pass's random numbers.
    seed: u64,
}

/// Whether `code` imports `bench.<func>`: a function of the `bench` module,
/// or of a component's `bench` instance.
fn imports_bench(code: &Code, func: &str) -> bool {
    match code {
        Code::Module(module) => module
            .imports()
            .any(|i| i.module() == BENCH_MODULE && i.name() == func),
        Code::Component(component) => {
            let engine = component.engine();
            component.component_type().imports(engine).any(|(name, item)| {
                name == BENCH_MODULE
                    && matches!(item.ty, wasmtime::component::types::ComponentItem::ComponentInstance(i)
                        if i.exports(engine).any(|(f, _)| f == func))
            })
        }
    }
}

/// Link `bench.start`/`bench.end` of a module: the timed ones read the
/// clock first; with `COUNTING` (a constant: the other branch is compiled
/// away), they switch Callgrind's collecting instead, and read no clock.
fn link_module_bench<const COUNTING: bool>(linker: &mut Linker<State<WasiP1Ctx>>) -> Result<()> {
    linker
        .func_wrap(
            BENCH_MODULE,
            "start",
            |mut caller: Caller<'_, State<WasiP1Ctx>>| {
                if COUNTING {
                    caller.data_mut().timing.start_counting();
                } else {
                    let now = Instant::now();
                    caller.data_mut().timing.start(now);
                }
            },
        )
        .and_then(|l| {
            l.func_wrap(
                BENCH_MODULE,
                "end",
                |mut caller: Caller<'_, State<WasiP1Ctx>>| {
                    if COUNTING {
                        caller.data_mut().timing.end_counting();
                    } else {
                        let now = Instant::now();
                        caller.data_mut().timing.end(now);
                    }
                },
            )
        })
        .map(|_| ())
        .map_err(anyhow::Error::from)
        .context("linking the bench imports")
}

/// Link the `bench` instance (start, end) of a component; `COUNTING` as
/// for modules.
fn link_component_bench<const COUNTING: bool>(
    linker: &mut wasmtime::component::Linker<State<P2>>,
) -> Result<()> {
    let mut bench = linker
        .instance(BENCH_MODULE)
        .map_err(anyhow::Error::from)
        .context("linking the bench instance")?;
    bench
        .func_wrap(
            "start",
            |mut store: StoreContextMut<'_, State<P2>>, (): ()| {
                if COUNTING {
                    store.data_mut().timing.start_counting();
                } else {
                    let now = Instant::now();
                    store.data_mut().timing.start(now);
                }
                Ok(())
            },
        )
        .and_then(|()| {
            bench.func_wrap(
                "end",
                |mut store: StoreContextMut<'_, State<P2>>, (): ()| {
                    if COUNTING {
                        store.data_mut().timing.end_counting();
                    } else {
                        let now = Instant::now();
                        store.data_mut().timing.end(now);
                    }
                    Ok(())
                },
            )
        })
        .map_err(anyhow::Error::from)
        .context("linking the bench instance")
}

impl Program {
    /// A program to time.
    pub fn new(path: &Path, code: &Code, grants: &Grants, limits: Limits) -> Result<Self> {
        Self::linked(path, code, grants, limits, false)
    }

    fn linked(
        path: &Path,
        code: &Code,
        grants: &Grants,
        limits: Limits,
        counting: bool,
    ) -> Result<Self> {
        let (imports_start, imports_end) =
            (imports_bench(code, "start"), imports_bench(code, "end"));
        let bench_toggles = counting && imports_start && imports_end;
        let runner = match code {
            Code::Module(module) => {
                let mut linker = Linker::new(module.engine());
                wasmtime_wasi::p1::add_to_linker_sync(&mut linker, |s: &mut State<WasiP1Ctx>| {
                    &mut s.wasi
                })
                .map_err(anyhow::Error::from)
                .context("linking WASI preview1")?;
                match bench_toggles {
                    true => link_module_bench::<true>(&mut linker)?,
                    false => link_module_bench::<false>(&mut linker)?,
                }
                Runner::Module {
                    module: module.clone(),
                    linker,
                }
            }
            Code::Component(component) => {
                let mut linker = wasmtime::component::Linker::new(component.engine());
                wasmtime_wasi::p2::add_to_linker_sync(&mut linker)
                    .map_err(anyhow::Error::from)
                    .context("linking WASI preview 2")?;
                match bench_toggles {
                    true => link_component_bench::<true>(&mut linker)?,
                    false => link_component_bench::<false>(&mut linker)?,
                }
                Runner::Component {
                    component: component.clone(),
                    linker,
                }
            }
        };
        Ok(Program {
            runner,
            bench_toggles,
            world: World::new(path, grants, imports_end)?,
            limits,
            resolved: None,
            seed: 0,
        })
    }

    /// One fresh instance: instantiate, run, check the protocol, the exit
    /// code and the output; its random numbers seeded with `seed`.
    pub fn iterate(&self, seed: u64) -> Result<Iteration> {
        self.iterate_with(seed, &mut Clock::new())
    }

    /// [`Program::iterate`], with its phases bracketed by `bracket` instead
    /// of the clock.
    pub fn iterate_with<B: Bracket>(&self, seed: u64, bracket: &mut B) -> Result<Iteration> {
        let (ran, stdout, stderr) = self.run_once(seed, bracket)?;
        self.finish(ran, &stdout, &stderr, true)
    }

    /// One fresh instance run and checked as [`Program::iterate`] does,
    /// but for its output: what it wrote to stdout, which `host run
    /// --save-expected` saves as its expected output.
    pub fn stdout_of_one_run(&self, seed: u64) -> Result<Vec<u8>> {
        let (ran, stdout, stderr) = self.run_once(seed, &mut Clock::new())?;
        self.finish(ran, &stdout, &stderr, false)?;
        Ok(stdout.contents().to_vec())
    }

    /// One fresh instance, run: what it left and the output it wrote.
    fn run_once<B: Bracket>(
        &self,
        seed: u64,
        bracket: &mut B,
    ) -> Result<(Ran, MemoryOutputPipe, MemoryOutputPipe)> {
        if sandbox::interrupted() {
            bail!("interrupted");
        }
        let stdout = MemoryOutputPipe::new(CAPTURE_LIMIT);
        let stderr = MemoryOutputPipe::new(CAPTURE_LIMIT);
        let mut builder = self
            .world
            .wasi(WasiCtxBuilder::new(), (&stdout, &stderr), seed)?;
        let ran = match &self.runner {
            Runner::Module { module, linker } => self.run_module(
                self.store(module.engine(), builder.build_p1()),
                bracket,
                |store| linker.instantiate(store, module),
                |instance, store| {
                    instance
                        .get_typed_func::<(), ()>(store, START_EXPORT)
                        .map_err(anyhow::Error::from)
                },
            )?,
            Runner::Component { component, linker } => self.run_component(
                self.store(component.engine(), P2::new(builder.build())),
                bracket,
                |store| Command::instantiate(store, component, linker),
            )?,
        };
        Ok((ran, stdout, stderr))
    }

    /// The store of an iteration, with the WASI context `wasi` and the
    /// memory limiter.
    fn store<W: 'static>(&self, engine: &wasmtime::Engine, wasi: W) -> Store<State<W>> {
        let state = State {
            wasi,
            limiter: Limiter::new(self.limits),
            timing: Timing::default(),
        };
        let mut store = Store::new(engine, state);
        store.limiter(|s| &mut s.limiter);
        store
    }

    /// An iteration of a command module in `store`: instantiated by
    /// `instantiate`, its `_start` found by `entry`, run; both phases
    /// bracketed by `bracket`.
    fn run_module<B: Bracket>(
        &self,
        mut store: Store<State<WasiP1Ctx>>,
        bracket: &mut B,
        make: impl FnOnce(&mut Store<State<WasiP1Ctx>>) -> wasmtime::Result<wasmtime::Instance>,
        entry: impl FnOnce(
            &wasmtime::Instance,
            &mut Store<State<WasiP1Ctx>>,
        ) -> Result<TypedFunc<(), ()>>,
    ) -> Result<Ran> {
        let whole = !self.bench_toggles;
        let (instance, instantiate) = instantiate(&mut store, bracket, make)?;
        let start = entry(&instance, &mut store).context("export `_start`")?;
        let (result, took) = bracketed(bracket, Phase::Run { whole }, &mut store, |store| {
            start.call(store, ())
        })?;
        Ok(ran(
            &mut store,
            "`_start`",
            (instantiate, took),
            result.err(),
            false,
        ))
    }

    /// An iteration of a command component in `store`: instantiated by
    /// `instantiate`, its `wasi:cli/run` run; both phases bracketed by
    /// `bracket`.
    fn run_component<B: Bracket>(
        &self,
        mut store: Store<State<P2>>,
        bracket: &mut B,
        make: impl FnOnce(&mut Store<State<P2>>) -> wasmtime::Result<Command>,
    ) -> Result<Ran> {
        let whole = !self.bench_toggles;
        let (command, instantiate) = instantiate(&mut store, bracket, make)?;
        let (result, took) = bracketed(bracket, Phase::Run { whole }, &mut store, |store| {
            command.wasi_cli_run().call_run(store)
        })?;
        let (failed, returned_err) = match result {
            Ok(Ok(())) => (None, false),
            Ok(Err(())) => (None, true),
            Err(e) => (Some(e), false),
        };
        Ok(ran(
            &mut store,
            "`wasi:cli/run`",
            (instantiate, took),
            failed,
            returned_err,
        ))
    }

    /// The checks after a run (see [`World::finish`]).
    fn finish(
        &self,
        ran: Ran,
        stdout: &MemoryOutputPipe,
        stderr: &MemoryOutputPipe,
        check: bool,
    ) -> Result<Iteration> {
        self.world
            .finish(ran, &stdout.contents(), &stderr.contents(), check)
    }
}

/// What an iteration in `store` left, under the runtime-neutral name of
/// its end: the limiter's refusal joins a trap's words, and an exit is an
/// exit.
fn ran<W>(
    store: &mut Store<State<W>>,
    entry: &'static str,
    (instantiate, whole): (Duration, Duration),
    failed: Option<wasmtime::Error>,
    returned_err: bool,
) -> Ran {
    let ended = match failed {
        None if returned_err => Ended::ReturnedErr,
        None => Ended::Returned,
        Some(e) => match e.downcast_ref::<I32Exit>() {
            Some(I32Exit(code)) => Ended::Exited(*code),
            None => Ended::Failed(
                guest_failure(e, store.data().limiter.refused()).context(format!("{entry} failed")),
            ),
        },
    };
    Ran {
        instantiate,
        whole,
        ended,
        timing: std::mem::take(&mut store.data_mut().timing),
    }
}

/// Instantiate in `store` by `make`, bracketed by `bracket` (the store
/// prepared first); the instance, and how long it took.
fn instantiate<B: Bracket, W: 'static, I>(
    store: &mut Store<State<W>>,
    bracket: &mut B,
    make: impl FnOnce(&mut Store<State<W>>) -> wasmtime::Result<I>,
) -> Result<(I, Duration)> {
    bracket.prepare_store(store);
    let (made, took) = bracketed(bracket, Phase::Instantiate, store, make)?;
    let made = made
        .map_err(|e| guest_failure(e, store.data().limiter.refused()))
        .context("instantiation failed")?;
    Ok((made, took))
}
