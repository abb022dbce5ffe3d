//! wasmi, an interpreter (`--engine wasmi`, cargo feature `wasmi`): the
//! workload's binary compiled by wasmi (lazily, as it does by default) and
//! instantiated with `bench.pause`/`bench.resume`; its
//! [`Sampler::sample`] reads the clock, calls `run(count, seed)`, and reads
//! it again. Each memory is capped at `--max-memory` and each table at
//! `--max-memory / 8` elements (wasmi's store limits). WASI preview 1
//! grants a workload nothing, as under wasmtime (wasmtime-wasi's preview 1
//! through [`crate::guest::runtime::wasi_p1`]); programs (WASI commands) are
//! [`program`]'s. Components are not run.

mod program;

use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use wasmi::{
    Caller, Engine, ExternType, Linker, Store, StoreLimits, StoreLimitsBuilder, TypedFunc,
};
use wasmtime_wasi::WasiCtxBuilder;
use wasmtime_wasi::p1::WasiP1Ctx;

use crate::guest::runtime::pauses::Pauses;
use crate::guest::runtime::wasi_p1;
use program::{WasiState, compile, link_wasi};

use crate::guest::contract::{BENCH_MODULE, INITIALIZE_EXPORT, SETUP_EXPORT};
use crate::guest::limits::Limits;
use crate::guest::runtime::Implementation;
use crate::guest::runtime::seam::{CompiledProgram, Guest, RawSample, Runner, Sampler};
use crate::guest::sandbox;
use crate::guest::seeds::Seeds;
use crate::options::{Grants, Runtime};

/// The crate's version this host is built with, from the workspace's
/// `Cargo.lock` (host/build.rs).
pub const VERSION: &str = env!("WASM_BENCH_VERSION_WASMI");

/// wasmi's line of the registry: core modules and programs.
pub const IMPLEMENTATION: Implementation = Implementation {
    runtime: Runtime::Wasmi,
    runner: |_| Ok(Box::new(Wasmi::new()?)),
    modules_only: true,
    lacks: |_| None,
    refuses: || None,
    version: || {
        Some(format!(
            "{VERSION} (max recursion depth {MAX_RECURSION_DEPTH}, value stack {} MiB)",
            MAX_STACK_BYTES >> 20
        ))
    },
};

/// Per-store state: pause/resume bookkeeping, the limits, and the WASI
/// context that grants nothing.
struct State {
    pauses: Pauses,
    limits: StoreLimits,
    wasi: WasiP1Ctx,
    /// `proc_exit`'s code, once called.
    exit: Option<i32>,
}

impl WasiState for State {
    fn wasi(&mut self) -> &mut WasiP1Ctx {
        &mut self.wasi
    }

    fn exited(&mut self, code: i32) {
        self.exit = Some(code);
    }
}

/// The deepest recursion wasmi allows (its default: 1,000 calls). Raised
/// so that deeply recursive programs (Sightglass's shootout-ackermann)
/// run as under wasmtime, whose limit is 512 KiB of native stack.
pub const MAX_RECURSION_DEPTH: usize = 1 << 16;
/// The most bytes wasmi's value stack may hold (its default: 1 MB).
pub const MAX_STACK_BYTES: usize = 64 << 20;

/// wasmi with its default configuration but for the stack limits
/// ([`MAX_RECURSION_DEPTH`], [`MAX_STACK_BYTES`]).
pub struct Wasmi {
    engine: Engine,
    linker: Linker<State>,
}

impl Wasmi {
    pub fn new() -> Result<Self> {
        let mut config = wasmi::Config::default();
        config
            .set_max_recursion_depth(MAX_RECURSION_DEPTH)
            .set_max_stack_height(MAX_STACK_BYTES);
        let engine = Engine::new(&config);
        let mut linker = Linker::new(&engine);
        linker
            .func_wrap(BENCH_MODULE, "pause", |mut caller: Caller<'_, State>| {
                caller.data_mut().pauses.pause().map_err(wasmi::Error::new)
            })
            .map_err(|e| anyhow!("{e}"))?;
        linker
            .func_wrap(BENCH_MODULE, "resume", |mut caller: Caller<'_, State>| {
                caller.data_mut().pauses.resume().map_err(wasmi::Error::new)
            })
            .map_err(|e| anyhow!("{e}"))?;
        Ok(Wasmi { engine, linker })
    }
}

impl Runner for Wasmi {
    fn instantiate(
        &self,
        guest: Guest<'_>,
        export: &str,
        limits: Limits,
        seeds: Seeds,
    ) -> Result<Box<dyn Sampler>> {
        let (module, compile) = compile(&self.engine, guest.bytes)?;
        let mut linker = self.linker.clone();
        for import in module.imports() {
            match (import.module(), import.ty()) {
                (BENCH_MODULE, _) => {}
                (wasi_p1::MODULE, ExternType::Func(ty))
                    if wasi_p1::arity(import.name()) == Some(ty.params().len()) =>
                {
                    link_wasi(&mut linker, import.name(), ty.clone())
                        .map_err(|e| anyhow!("{e}"))?;
                }
                _ => bail!(
                    "imports {}.{}: a workload may import bench.pause, bench.resume and functions of WASI preview 1 (as it declares them)",
                    import.module(),
                    import.name()
                ),
            }
        }
        let state = State {
            pauses: Pauses::default(),
            limits: StoreLimitsBuilder::new()
                .memory_size(usize::try_from(limits.max_memory_bytes).unwrap_or(usize::MAX))
                .table_elements(usize::try_from(limits.max_memory_bytes / 8).unwrap_or(usize::MAX))
                .build(),
            wasi: WasiCtxBuilder::new().build_p1(),
            exit: None,
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| &mut state.limits);
        let instance = linker
            .instantiate_and_start(&mut store, &module)
            .map_err(|e| anyhow!("{e}"))
            .context("instantiation failed")?;
        if let Ok(initialize) = instance.get_typed_func::<(), ()>(&store, INITIALIZE_EXPORT) {
            initialize
                .call(&mut store, ())
                .map_err(|e| anyhow!("{e}"))
                .with_context(|| format!("`{INITIALIZE_EXPORT}` failed"))?;
        }
        let run = instance
            .get_typed_func::<(i64, i64), i64>(&store, export)
            .map_err(|e| anyhow!("{e}"))
            .with_context(|| format!("export `{export}`"))?;
        let setup = match instance.get_export(&store, SETUP_EXPORT) {
            Some(_) => Some(
                instance
                    .get_typed_func::<i64, ()>(&store, SETUP_EXPORT)
                    .map_err(|e| anyhow!("{e}"))
                    .with_context(|| format!("export `{SETUP_EXPORT}`"))?,
            ),
            None => None,
        };
        Ok(Box::new(WasmiInstance {
            store,
            instance,
            run,
            setup,
            seeds,
            compile,
        }))
    }

    fn program(
        &self,
        guest: Guest<'_>,
        grants: &Grants,
        limits: Limits,
    ) -> Result<Box<dyn CompiledProgram>> {
        program::program(&self.engine, guest, grants, limits)
    }
}

/// A live wasmi instance of a workload.
struct WasmiInstance {
    store: Store<State>,
    instance: wasmi::Instance,
    run: TypedFunc<(i64, i64), i64>,
    setup: Option<TypedFunc<i64, ()>>,
    seeds: Seeds,
    /// How long wasmi took to compile the module.
    compile: Duration,
}

impl WasmiInstance {
    fn check_not_paused(&self, function: &str) -> Result<()> {
        self.store.data().pauses.check_resumed(function)
    }
}

impl Sampler for WasmiInstance {
    fn setup(&mut self, size: u64) -> Result<()> {
        if let Some(setup) = &self.setup {
            setup
                .call(&mut self.store, size as i64)
                .map_err(|e| anyhow!("{e}"))
                .with_context(|| format!("`setup({size})` failed"))?;
        }
        self.check_not_paused("setup")
    }

    #[inline(never)]
    fn sample(&mut self, count: u64) -> Result<RawSample> {
        if sandbox::interrupted() {
            bail!("interrupted");
        }
        self.store.data_mut().pauses.reset();
        let args = (count as i64, self.seeds.take() as i64);
        let start = Instant::now();
        let result = self.run.call(&mut self.store, args);
        let end = Instant::now();
        let checksum = result.map_err(|e| anyhow!("{e}")).context("`run` failed")?;
        self.check_not_paused("run")?;
        Ok(self.store.data().pauses.sample(start, end, checksum as u64))
    }

    fn restart_seeds(&mut self) {
        self.seeds.restart();
    }

    fn peak_memory_bytes(&mut self) -> Option<u64> {
        let memories: Vec<wasmi::Memory> = self
            .instance
            .exports(&self.store)
            .filter_map(|export| export.into_memory())
            .collect();
        let bytes = memories
            .iter()
            .map(|memory| memory.data_size(&self.store) as u64)
            .sum();
        (!memories.is_empty()).then_some(bytes)
    }

    fn compile_time(&self) -> Option<Duration> {
        Some(self.compile)
    }
}
