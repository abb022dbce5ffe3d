//! Programs under wasmi: the WASI command module compiled once by wasmi;
//! each iteration a fresh store and instance, with WASI preview 1 answered
//! by [`crate::guest::runtime::wasi_p1`] (the context [`World::p1`] builds, as wasmtime's
//! programs get it), `bench.start`/`bench.end` reading the clock, and
//! wasmi's store limits holding memory and tables to `--max-memory`.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use wasmi::{
    Caller, Engine, Extern, ExternType, Linker, Module, Store, StoreLimits, StoreLimitsBuilder, Val,
};
use wasmtime_wasi::p1::WasiP1Ctx;

use crate::guest::contract::{BENCH_MODULE, START_EXPORT};
use crate::guest::limits::Limits;
use crate::guest::program::world::{Ended, Ran, Timing};
use crate::guest::program::{Iteration, World};
use crate::guest::runtime::seam::{CompiledProgram, Guest};
use crate::guest::runtime::wasi_p1::{self, Stop};
use crate::options::Grants;

/// Store data of one iteration.
struct State {
    wasi: WasiP1Ctx,
    timing: Timing,
    /// `proc_exit`'s code, once called.
    exit: Option<i32>,
    limits: StoreLimits,
}

/// A program compiled by wasmi, with its linker.
pub struct WasmiCommand {
    engine: Engine,
    module: Module,
    linker: Linker<State>,
    world: World,
    limits: Limits,
    /// How long wasmi took to compile the module.
    compile: Duration,
}

/// Compile `guest` and link its imports: each WASI import to
/// [`wasi_p1::call`], `bench.start`/`bench.end` to the clock.
pub fn program(
    engine: &Engine,
    guest: Guest<'_>,
    grants: &Grants,
    limits: Limits,
) -> Result<Box<dyn CompiledProgram>> {
    let (module, compile) = compile(engine, guest.bytes)?;
    let mut linker = Linker::new(engine);
    let mut imports_end = false;
    for import in module.imports() {
        let (module_name, name) = (import.module(), import.name());
        let ty = match import.ty() {
            ExternType::Func(ty) => Some(ty.clone()),
            _ => None,
        };
        wasi_p1::check_import(module_name, name, ty.as_ref().map(|t| t.params().len()))?;
        let ty = ty.context("not a function")?;
        match (module_name, name) {
            (BENCH_MODULE, "start") => {
                linker.func_wrap(BENCH_MODULE, "start", |mut caller: Caller<'_, State>| {
                    let now = Instant::now();
                    caller.data_mut().timing.start(now);
                })
            }
            (BENCH_MODULE, _) => {
                imports_end = true;
                linker.func_wrap(BENCH_MODULE, "end", |mut caller: Caller<'_, State>| {
                    let now = Instant::now();
                    caller.data_mut().timing.end(now);
                })
            }
            _ => link_wasi(&mut linker, name, ty),
        }
        .map_err(|e| anyhow!("{e}"))?;
    }
    Ok(Box::new(WasmiCommand {
        engine: engine.clone(),
        module,
        linker,
        world: World::new(guest.path, grants, imports_end)?,
        limits,
        compile,
    }))
}

/// `bytes` compiled by wasmi (validated, its functions translated lazily,
/// as wasmi does by default), and how long that took.
pub(super) fn compile(engine: &Engine, bytes: &[u8]) -> Result<(Module, Duration)> {
    let start = Instant::now();
    let module = Module::new(engine, bytes)
        .map_err(|e| anyhow!("{e}"))
        .context("wasmi does not compile it")?;
    Ok((module, start.elapsed()))
}

/// Store data that answers the guest's WASI preview 1 calls.
pub(super) trait WasiState {
    /// The WASI context.
    fn wasi(&mut self) -> &mut WasiP1Ctx;
    /// `proc_exit` was called with `code`.
    fn exited(&mut self, code: i32);
}

impl WasiState for State {
    fn wasi(&mut self) -> &mut WasiP1Ctx {
        &mut self.wasi
    }

    fn exited(&mut self, code: i32) {
        self.exit = Some(code);
    }
}

/// Link `wasi_snapshot_preview1.<name>`, of type `ty`, to
/// [`wasi_p1::call`].
pub(super) fn link_wasi<'a, T: WasiState + 'static>(
    linker: &'a mut Linker<T>,
    name: &str,
    ty: wasmi::FuncType,
) -> Result<&'a mut Linker<T>, wasmi::errors::LinkerError> {
    let owned = name.to_string();
    linker.func_new(wasi_p1::MODULE, name, ty, move |caller, params, results| {
        wasi(caller, &owned, params, results)
    })
}

/// One WASI call of the guest, on its exported memory.
fn wasi<T: WasiState>(
    mut caller: Caller<'_, T>,
    name: &str,
    params: &[Val],
    results: &mut [Val],
) -> Result<(), wasmi::Error> {
    let memory = caller
        .get_export("memory")
        .and_then(Extern::into_memory)
        .ok_or_else(|| wasmi::Error::new("a WASI call needs the exported `memory`"))?;
    let args: Vec<i64> = params
        .iter()
        .map(|v| match v {
            Val::I32(v) => i64::from(*v),
            Val::I64(v) => *v,
            _ => 0,
        })
        .collect();
    let (bytes, state) = memory.data_and_store_mut(&mut caller);
    match wasi_p1::call(state.wasi(), bytes, name, &args) {
        Ok(errno) => {
            if let Some(slot) = results.first_mut() {
                *slot = Val::I32(errno);
            }
            Ok(())
        }
        Err(Stop::Exit(code)) => {
            state.exited(code);
            Err(wasmi::Error::i32_exit(code))
        }
        Err(Stop::Trap(e)) => Err(wasmi::Error::new(format!("{e:#}"))),
    }
}

impl WasmiCommand {
    /// One fresh store and instance, run: what it left.
    fn run(&self, wasi: WasiP1Ctx) -> Result<Ran> {
        let state = State {
            wasi,
            timing: Timing::default(),
            exit: None,
            limits: StoreLimitsBuilder::new()
                .memory_size(usize::try_from(self.limits.max_memory_bytes).unwrap_or(usize::MAX))
                .table_elements(
                    usize::try_from(self.limits.max_memory_bytes / 8).unwrap_or(usize::MAX),
                )
                .build(),
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| &mut state.limits);
        let start = Instant::now();
        let instance = self
            .linker
            .instantiate_and_start(&mut store, &self.module)
            .map_err(|e| anyhow!("{e}"))
            .context("instantiation failed")?;
        let instantiate = start.elapsed();
        let entry = instance
            .get_typed_func::<(), ()>(&store, START_EXPORT)
            .map_err(|e| anyhow!("{e}"))
            .context("export `_start`")?;
        let start = Instant::now();
        let result = entry.call(&mut store, ());
        let whole = start.elapsed();
        let ended = match (store.data().exit, result) {
            (Some(code), _) => Ended::Exited(code),
            (None, Ok(())) => Ended::Returned,
            (None, Err(e)) => Ended::Failed(anyhow!("{e}").context("`_start` failed")),
        };
        Ok(Ran {
            instantiate,
            whole,
            ended,
            timing: std::mem::take(&mut store.data_mut().timing),
        })
    }
}

impl CompiledProgram for WasmiCommand {
    fn iterate(&self, seed: u64) -> Result<Iteration> {
        self.world.iterate_p1(seed, |wasi| self.run(wasi))
    }

    fn compile_time(&self) -> Option<Duration> {
        Some(self.compile)
    }
}
