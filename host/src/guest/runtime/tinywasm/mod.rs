//! tinywasm, a small interpreter (`--engine tinywasm`, cargo feature
//! `tinywasm`): the workload's binary parsed and lowered by tinywasm,
//! instantiated with `bench.pause`/`bench.resume`; its
//! [`Sampler::sample`] reads the clock, calls `run(count, seed)`, and
//! reads it again.
//!
//! Limits: each memory lives in a `Limited` backend ([`memory`]) that
//! refuses to grow past `--max-memory`, so `memory.grow` returns -1
//! within the call.
//! tinywasm has no hook on a table's growth: each table is checked against
//! `--max-memory / 8` elements after every call, and the row fails there;
//! within the call, tinywasm's own cap (10,000,000 elements, 80 MB) bounds
//! it. tinywasm has no WASI: it runs `run(count, seed)` workloads that
//! import nothing but `bench`, not programs or components.

mod memory;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use tinywasm::{Engine, FuncContext, FunctionTyped, HostFunction, Imports, ModuleInstance, Store};

use super::Implementation;
use super::pauses::Pauses;
use crate::guest::contract::{BENCH_MODULE, INITIALIZE_EXPORT, SETUP_EXPORT};
use crate::guest::limits::Limits;
use crate::guest::runtime::seam::{CompiledProgram, Guest, RawSample, Runner, Sampler};
use crate::guest::sandbox;
use crate::guest::seeds::Seeds;
use crate::options::{Grants, Runtime};

use memory::Limited;

/// The crate's version this host is built with, from the workspace's
/// `Cargo.lock` (host/build.rs).
pub const VERSION: &str = env!("WASM_BENCH_VERSION_TINYWASM");

/// tinywasm's line of the registry.
pub const IMPLEMENTATION: Implementation = Implementation {
    runtime: Runtime::Tinywasm,
    runner: |_| Ok(Box::new(Tinywasm)),
    modules_only: true,
    lacks: |_| None,
    refuses: || None,
    version: || Some(VERSION.to_string()),
};

/// tinywasm with its default configuration; each instance gets an engine
/// whose memories hold its limit.
pub struct Tinywasm;

impl Runner for Tinywasm {
    fn instantiate(
        &self,
        guest: Guest<'_>,
        export: &str,
        limits: Limits,
        seeds: Seeds,
    ) -> Result<Box<dyn Sampler>> {
        let start = Instant::now();
        let module =
            tinywasm::parse_bytes(guest.bytes).context("tinywasm cannot read the module")?;
        let compile = start.elapsed();
        let max_bytes = usize::try_from(limits.max_memory_bytes).unwrap_or(usize::MAX);
        let mut store = Store::new(Engine::new(Limited::config(max_bytes)));
        let pauses = Arc::new(Mutex::new(Pauses::default()));
        let imports = bench_imports(&mut store, &module, &pauses)?;
        let instance = ModuleInstance::instantiate(&mut store, &module, Some(imports))
            .context("instantiation failed")?;
        if let Ok(initialize) = instance.func::<(), ()>(&store, INITIALIZE_EXPORT) {
            initialize
                .call(&mut store, ())
                .with_context(|| format!("`{INITIALIZE_EXPORT}` failed"))?;
        }
        let run = instance
            .func::<(i64, i64), i64>(&store, export)
            .with_context(|| format!("export `{export}`"))?;
        let setup = match instance.extern_item(SETUP_EXPORT) {
            Ok(_) => Some(
                instance
                    .func::<i64, ()>(&store, SETUP_EXPORT)
                    .with_context(|| format!("export `{SETUP_EXPORT}`"))?,
            ),
            Err(_) => None,
        };
        Ok(Box::new(TinywasmInstance {
            store,
            tables: module.table_types.len(),
            memories: module.memory_types.len(),
            instance,
            run,
            setup,
            pauses,
            seeds,
            max_table_elements: limits.max_memory_bytes / 8,
            compile,
        }))
    }

    fn program(
        &self,
        _guest: Guest<'_>,
        _grants: &Grants,
        _limits: Limits,
    ) -> Result<Box<dyn CompiledProgram>> {
        bail!("tinywasm has no WASI: it runs `run(count, seed)` workloads, not programs")
    }
}

/// `bench.pause` and `bench.resume`, keeping `pauses`; an import of
/// anything else is refused.
fn bench_imports(
    store: &mut Store,
    module: &tinywasm::Module,
    pauses: &Arc<Mutex<Pauses>>,
) -> Result<Imports> {
    let mut imports = Imports::new();
    for import in module.imports.iter() {
        let name = &*import.name;
        let pause = match (&*import.module, name) {
            (BENCH_MODULE, "pause") => true,
            (BENCH_MODULE, "resume") => false,
            _ => bail!(
                "imports {}.{name}: under tinywasm, which has no WASI, a workload may import bench.pause and bench.resume only",
                import.module
            ),
        };
        let pauses = Arc::clone(pauses);
        let call = move |_: FuncContext<'_>, (): ()| -> tinywasm::Result<()> {
            let mut pauses = pauses
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            let done = if pause {
                pauses.pause()
            } else {
                pauses.resume()
            };
            done.map_err(|why| tinywasm::Error::Other(why.to_string()))
        };
        imports.define(BENCH_MODULE, name, HostFunction::from(store, call));
    }
    Ok(imports)
}

/// A live tinywasm instance of a workload.
struct TinywasmInstance {
    store: Store,
    instance: ModuleInstance,
    run: FunctionTyped<(i64, i64), i64>,
    setup: Option<FunctionTyped<i64, ()>>,
    pauses: Arc<Mutex<Pauses>>,
    seeds: Seeds,
    /// The number of tables and of memories the instance defines (it
    /// imports none: [`bench_imports`] refuses them).
    tables: usize,
    memories: usize,
    /// The most elements a table may hold, checked after each call.
    max_table_elements: u64,
    /// How long tinywasm took to read and lower the module.
    compile: Duration,
}

// SAFETY: tinywasm's store, instance and functions share `Rc`s only with
// one another, and all of them are fields of this one value: nothing
// holds a clone of them outside it (the module parsed is not kept, the
// host functions hold only an `Arc`), so the value moves to another
// thread whole, and one thread at a time touches the counts.
unsafe impl Send for TinywasmInstance {}

impl TinywasmInstance {
    fn pauses(&self) -> std::sync::MutexGuard<'_, Pauses> {
        self.pauses
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// An error when `function` returned while paused, or grew a table past
    /// its limit.
    fn check(&self, function: &str) -> Result<()> {
        self.pauses().check_resumed(function)?;
        for index in 0..self.tables {
            let table = self.instance.table_by_index(index as u32)?;
            let size = table.size(&self.store)? as u64;
            if size > self.max_table_elements {
                bail!(
                    "`{function}` grew a table to {size} elements, past the limit of {} (--max-memory / 8): tinywasm cannot refuse a table's growth within a call, so the row fails after it",
                    self.max_table_elements
                );
            }
        }
        Ok(())
    }
}

impl Sampler for TinywasmInstance {
    fn setup(&mut self, size: u64) -> Result<()> {
        if let Some(setup) = &self.setup {
            setup
                .call(&mut self.store, size as i64)
                .with_context(|| format!("`setup({size})` failed"))?;
        }
        self.check("setup")
    }

    #[inline(never)]
    fn sample(&mut self, count: u64) -> Result<RawSample> {
        if sandbox::interrupted() {
            bail!("interrupted");
        }
        self.pauses().reset();
        let args = (count as i64, self.seeds.take() as i64);
        let start = Instant::now();
        let result = self.run.call(&mut self.store, args);
        let end = Instant::now();
        let checksum = result.context("`run` failed")?;
        self.check("run")?;
        Ok(self.pauses().sample(start, end, checksum as u64))
    }

    fn restart_seeds(&mut self) {
        self.seeds.restart();
    }

    fn peak_memory_bytes(&mut self) -> Option<u64> {
        let bytes = (0..self.memories)
            .filter_map(|index| self.instance.memory_by_index(index as u32).ok())
            .filter_map(|memory| memory.len(&self.store).ok())
            .map(|len| len as u64)
            .sum();
        (self.memories > 0).then_some(bytes)
    }

    fn compile_time(&self) -> Option<Duration> {
        Some(self.compile)
    }
}
