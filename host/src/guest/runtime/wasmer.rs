//! wasmer as a [`Runner`] (`--engine wasmer`: its Cranelift;
//! `--engine wasmer-singlepass`: its single-pass compiler): a core module's
//! binary compiled by wasmer into a store of its own, with the harness's
//! `bench.pause`/`bench.resume` and the sandbox's memory limit, and a
//! [`Sampler`] whose `sample` is the timed region. WASI preview 1 grants a
//! workload nothing, as under wasmtime; programs (WASI commands) are
//! [`super::wasmer_program`]'s; both get wasmtime-wasi's preview 1 (through
//! [`super::wasi_p1`]) rather than wasmer's own WASI runtime (not built
//! here). Components are refused: wasmer does not run them.

use std::ptr::NonNull;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use wasmer::sys::vm::{
    LinearMemory, MemoryError, MemoryStyle, TableStyle, TrapCode, VMMemory, VMMemoryDefinition,
    VMTable, VMTableDefinition,
};
use wasmer::sys::{BaseTunables, Cranelift, NativeEngineExt, Singlepass, Tunables};
use wasmer::{
    Engine, ExternType, Function, FunctionEnv, FunctionEnvMut, Imports, Instance, MemoryType,
    Module, Pages, RuntimeError, Store, TableType, TypedFunction,
};
use wasmtime::ResourceLimiter;

use wasmtime_wasi::WasiCtxBuilder;

use super::pauses::Pauses;
use super::{wasi_p1, wasmer_program};
use crate::guest::contract::{BENCH_MODULE, INITIALIZE_EXPORT, SETUP_EXPORT};
use crate::guest::failure;
use crate::guest::format::Format;
use crate::guest::limits::{Limiter, Limits};
use crate::guest::runtime::{CompiledProgram, Guest, RawSample, Runner, Sampler};
use crate::guest::sandbox;
use crate::guest::seeds::Seeds;
use crate::options::Grants;

/// The wasmer crate's version this host is built with (host/Cargo.toml pins
/// it).
pub const VERSION: &str = "7.3.0";

/// Which of wasmer's compilers makes the code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compiler {
    /// Its Cranelift (a separate build from wasmtime's), at opt-level speed.
    Cranelift,
    /// Its single-pass compiler.
    Singlepass,
}

/// wasmer with one compiler.
pub struct Wasmer {
    compiler: Compiler,
}

impl Wasmer {
    pub fn new(compiler: Compiler) -> Self {
        Wasmer { compiler }
    }

    /// An engine of the compiler whose memories and tables are held to the
    /// limits `limiter` keeps.
    fn engine(&self, limits: Limits, limiter: &Arc<Mutex<Limiter>>) -> Engine {
        let mut engine = match self.compiler {
            Compiler::Cranelift => Engine::from(Cranelift::new()),
            Compiler::Singlepass => Engine::from(Singlepass::new()),
        };
        let base = BaseTunables::for_target(engine.target());
        engine.set_tunables(Limited {
            base,
            limits,
            limiter: Arc::clone(limiter),
        });
        engine
    }

    /// [`Runner::instantiate`], keeping the sampler's type.
    pub fn instance(
        &self,
        guest: Guest<'_>,
        export: &str,
        limits: Limits,
        seeds: Seeds,
    ) -> Result<WasmerSampler> {
        let limiter = Arc::new(Mutex::new(Limiter::new(limits)));
        let mut store = Store::new(self.engine(limits, &limiter));
        let module = Module::new(&store, guest.bytes).context("wasmer: compiling failed")?;
        let pauses = FunctionEnv::new(&mut store, Pauses::default());
        let wasi = FunctionEnv::new(
            &mut store,
            wasmer_program::State::new(WasiCtxBuilder::new().build_p1()),
        );
        let imports = imports(&mut store, &pauses, &wasi, &module)?;
        let instance = Instance::new(&mut store, &module, &imports)
            .map_err(|e| explain_with(anyhow::Error::from(e), &limiter))
            .context("instantiation failed")?;
        wasi.as_mut(&mut store).reach_memory(&instance);
        let mut sampler = WasmerSampler {
            run: instance
                .exports
                .get_typed_function(&store, export)
                .with_context(|| format!("export `{export}`"))?,
            setup: match instance.exports.get_function(SETUP_EXPORT) {
                Ok(f) => Some(
                    f.typed(&store)
                        .with_context(|| format!("export `{SETUP_EXPORT}`"))?,
                ),
                Err(_) => None,
            },
            store,
            pauses,
            limiter,
            module,
            seeds,
        };
        sampler.initialize(&instance)?;
        Ok(sampler)
    }
}

impl Runner for Wasmer {
    fn instantiate(
        &self,
        guest: Guest<'_>,
        export: &str,
        limits: Limits,
        seeds: Seeds,
    ) -> Result<Box<dyn Sampler>> {
        Ok(Box::new(self.instance(guest, export, limits, seeds)?))
    }

    fn runs(&self, format: Format) -> bool {
        format == Format::Module
    }

    fn program(
        &self,
        guest: Guest<'_>,
        grants: &Grants,
        limits: Limits,
    ) -> Result<Box<dyn CompiledProgram>> {
        let limiter = Arc::new(Mutex::new(Limiter::new(limits)));
        let engine = self.engine(limits, &limiter);
        super::wasmer_program::program(engine, limiter, guest, grants, limits)
    }
}

/// The imports a workload gets: `bench.pause` and `bench.resume`, and
/// WASI preview 1 granting nothing (`wasi`'s context). An import of
/// another WASI is refused by name; any other is left to wasmer's link
/// error.
fn imports(
    store: &mut Store,
    pauses: &FunctionEnv<Pauses>,
    wasi: &FunctionEnv<wasmer_program::State>,
    module: &Module,
) -> Result<Imports> {
    let mut imports = Imports::new();
    for import in module.imports() {
        let ExternType::Function(ty) = import.ty() else {
            continue;
        };
        match import.module() {
            wasi_p1::MODULE if wasi_p1::arity(import.name()) == Some(ty.params().len()) => {
                let function = wasmer_program::link_wasi(store, wasi, import.name(), ty);
                imports.define(wasi_p1::MODULE, import.name(), function);
            }
            other if other.starts_with("wasi") => bail!(
                "wasmer: `{other}.{}` is not a function of WASI preview 1 as the workload declares it",
                import.name()
            ),
            _ => {}
        }
    }
    let pause = Function::new_typed_with_env(store, pauses, |mut env: FunctionEnvMut<Pauses>| {
        env.data_mut().pause().map_err(RuntimeError::new)
    });
    let resume = Function::new_typed_with_env(store, pauses, |mut env: FunctionEnvMut<Pauses>| {
        env.data_mut().resume().map_err(RuntimeError::new)
    });
    imports.define(BENCH_MODULE, "pause", pause);
    imports.define(BENCH_MODULE, "resume", resume);
    Ok(imports)
}

/// A workload instantiated under wasmer.
pub struct WasmerSampler {
    store: Store,
    run: TypedFunction<(i64, i64), i64>,
    setup: Option<TypedFunction<i64, ()>>,
    pauses: FunctionEnv<Pauses>,
    limiter: Arc<Mutex<Limiter>>,
    module: Module,
    seeds: Seeds,
}

impl WasmerSampler {
    /// Call a WASI reactor's `_initialize` once, before anything else, as
    /// wasmtime's instances do.
    fn initialize(&mut self, instance: &Instance) -> Result<()> {
        let Ok(func) = instance.exports.get_function(INITIALIZE_EXPORT) else {
            return Ok(());
        };
        func.typed::<(), ()>(&self.store)
            .with_context(|| format!("export `{INITIALIZE_EXPORT}`"))?
            .call(&mut self.store)
            .map_err(|e| self.explain(e))
            .with_context(|| format!("`{INITIALIZE_EXPORT}` failed"))
    }

    /// The size of the compiled code, as wasmer serializes it (the machine
    /// code with its metadata: wasmer tells no size of the code alone).
    pub fn code_bytes(&self) -> Result<u64> {
        let bytes = self
            .module
            .serialize()
            .context("wasmer: serializing the module")?;
        Ok(bytes.len() as u64)
    }

    fn explain(&self, error: RuntimeError) -> anyhow::Error {
        explain(error, &self.limiter)
    }

    fn check_not_paused(&self, function: &str) -> Result<()> {
        self.pauses.as_ref(&self.store).check_resumed(function)
    }
}

// SAFETY: wasmer's `Store` is not `Send` because of raw pointers into the
// instance it owns and an optional `on_called` callback that need not be
// `Send`. The sampler owns the store together with every handle into it
// (functions, environment, module), installs no `on_called` callback, and
// shares none of them: moving it moves all of them at once, and it is
// only ever used by one thread at a time (`&mut self`).
unsafe impl Send for WasmerSampler {}

impl Sampler for WasmerSampler {
    fn setup(&mut self, size: u64) -> Result<()> {
        if let Some(setup) = &self.setup {
            setup
                .call(&mut self.store, size as i64)
                .map_err(|e| self.explain(e))
                .with_context(|| format!("`setup({size})` failed"))?;
        }
        self.check_not_paused("setup")
    }

    /// Time one call of `run(count, seed)`, with the next seed of the
    /// instance's sequence. Nothing but the guest call sits between the two
    /// clock reads.
    #[inline(never)]
    fn sample(&mut self, count: u64) -> Result<RawSample> {
        if sandbox::interrupted() {
            bail!("interrupted");
        }
        self.pauses.as_mut(&mut self.store).reset();
        let seed = self.seeds.take();
        let (count_arg, seed_arg) = (count as i64, seed as i64);
        let start = Instant::now();
        let result = self.run.call(&mut self.store, count_arg, seed_arg);
        let end = Instant::now();
        let checksum = result
            .map_err(|e| self.explain(e))
            .context("`run` failed")? as u64;
        self.check_not_paused("run")?;
        Ok(self.pauses.as_ref(&self.store).sample(start, end, checksum))
    }

    fn restart_seeds(&mut self) {
        self.seeds.restart();
    }

    fn peak_memory_bytes(&mut self) -> Option<u64> {
        Some(lock(&self.limiter).memory_bytes())
    }

    fn code_bytes(&self) -> Option<u64> {
        WasmerSampler::code_bytes(self).ok()
    }
}

/// A trap in plain words, with the limit refused on the way.
pub(super) fn explain(error: RuntimeError, limiter: &Mutex<Limiter>) -> anyhow::Error {
    let words = plain_words(&error);
    let error = anyhow::Error::from(error);
    let error = match words {
        Some(words) => error.context(words),
        None => error,
    };
    explain_with(error, limiter)
}

/// The limiter, whether or not a guest call panicked while holding it.
pub(super) fn lock(limiter: &Mutex<Limiter>) -> MutexGuard<'_, Limiter> {
    limiter
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `error` with the limit refused on the way, if one was.
pub(super) fn explain_with(error: anyhow::Error, limiter: &Mutex<Limiter>) -> anyhow::Error {
    match lock(limiter).refused() {
        Some(refused) => error.context(refused.to_string()),
        None => error,
    }
}

/// What a trap means, in plain words, in the words wasmtime's rows use
/// ([`crate::guest::failure`]).
fn plain_words(error: &RuntimeError) -> Option<&'static str> {
    Some(match error.clone().to_trap()? {
        TrapCode::StackOverflow => failure::STACK_OVERFLOW,
        TrapCode::IntegerDivisionByZero => failure::DIVISION_BY_ZERO,
        TrapCode::HeapAccessOutOfBounds => failure::OUT_OF_BOUNDS,
        TrapCode::UnreachableCodeReached => failure::UNREACHABLE,
        _ => return None,
    })
}

/// wasmer's default tunables, with every linear memory and table of the
/// store held to the sandbox's limits by the same [`Limiter`] wasmtime's
/// stores use: all memories together within `--max-memory` (a growth past
/// it fails, and `memory.grow` returns -1), each table within the element
/// cap (its maximum lowered to it).
struct Limited {
    base: BaseTunables,
    limits: Limits,
    limiter: Arc<Mutex<Limiter>>,
}

impl Limited {
    /// Grant a new memory its initial pages, or say why not.
    fn grant(&self, ty: &MemoryType, memory: VMMemory) -> Result<VMMemory, MemoryError> {
        let bytes = ty.minimum.bytes().0;
        let mut limiter = lock(&self.limiter);
        if !matches!(limiter.memory_growing(0, bytes, None), Ok(true)) {
            let why = limiter.refused().unwrap_or("a linear memory refused");
            return Err(MemoryError::Generic(why.to_string()));
        }
        drop(limiter);
        Ok(VMMemory(Box::new(LimitedMemory {
            inner: memory,
            limiter: Arc::clone(&self.limiter),
        })))
    }

    /// `ty` with its initial elements checked against the limit and its
    /// maximum lowered to it, so that `table.grow` past it fails (returns
    /// -1) as under wasmtime.
    fn capped(&self, ty: &TableType) -> Result<TableType, String> {
        let mut limiter = lock(&self.limiter);
        if !matches!(
            limiter.table_growing(0, ty.minimum as usize, None),
            Ok(true)
        ) {
            return Err(limiter.refused().unwrap_or("table refused").to_string());
        }
        let cap = u32::try_from(self.limits.max_table_elements()).unwrap_or(u32::MAX);
        let mut capped = *ty;
        capped.maximum = Some(ty.maximum.map_or(cap, |m| m.min(cap)));
        Ok(capped)
    }
}

impl Tunables for Limited {
    fn memory_style(&self, memory: &MemoryType) -> MemoryStyle {
        self.base.memory_style(memory)
    }

    fn table_style(&self, table: &TableType) -> TableStyle {
        self.base.table_style(table)
    }

    fn create_host_memory(
        &self,
        ty: &MemoryType,
        style: &MemoryStyle,
    ) -> Result<VMMemory, MemoryError> {
        self.grant(ty, self.base.create_host_memory(ty, style)?)
    }

    unsafe fn create_vm_memory(
        &self,
        ty: &MemoryType,
        style: &MemoryStyle,
        vm_definition_location: NonNull<VMMemoryDefinition>,
    ) -> Result<VMMemory, MemoryError> {
        // SAFETY: the caller's guarantee for `vm_definition_location`,
        // passed on unchanged.
        let memory = unsafe {
            self.base
                .create_vm_memory(ty, style, vm_definition_location)?
        };
        self.grant(ty, memory)
    }

    fn create_host_table(&self, ty: &TableType, style: &TableStyle) -> Result<VMTable, String> {
        self.base.create_host_table(&self.capped(ty)?, style)
    }

    unsafe fn create_vm_table(
        &self,
        ty: &TableType,
        style: &TableStyle,
        vm_definition_location: NonNull<VMTableDefinition>,
    ) -> Result<VMTable, String> {
        let ty = self.capped(ty)?;
        // SAFETY: the caller's guarantee for `vm_definition_location`,
        // passed on unchanged.
        unsafe {
            self.base
                .create_vm_table(&ty, style, vm_definition_location)
        }
    }
}

/// A linear memory whose growth the store's [`Limiter`] grants first.
#[derive(Debug)]
struct LimitedMemory {
    inner: VMMemory,
    limiter: Arc<Mutex<Limiter>>,
}

impl LimitedMemory {
    /// Ask the limiter for growth from the current size to `desired` bytes.
    fn ask(&self, desired: u64) -> Result<(), MemoryError> {
        let current = LinearMemory::size(&self.inner).bytes().0;
        let desired = usize::try_from(desired).unwrap_or(usize::MAX);
        let mut limiter = lock(&self.limiter);
        match limiter.memory_growing(current, desired, None) {
            Ok(true) => Ok(()),
            _ => Err(MemoryError::Generic(
                limiter.refused().unwrap_or("growth refused").to_string(),
            )),
        }
    }
}

impl LinearMemory for LimitedMemory {
    fn ty(&self) -> MemoryType {
        LinearMemory::ty(&self.inner)
    }

    fn size(&self) -> Pages {
        LinearMemory::size(&self.inner)
    }

    fn style(&self) -> MemoryStyle {
        LinearMemory::style(&self.inner)
    }

    fn grow(&mut self, delta: Pages) -> Result<Pages, MemoryError> {
        let pages = u64::from(LinearMemory::size(&self.inner).0) + u64::from(delta.0);
        self.ask(pages.saturating_mul(wasmer::WASM_PAGE_SIZE as u64))?;
        LinearMemory::grow(&mut self.inner, delta)
    }

    fn grow_at_least(&mut self, min_size: u64) -> Result<(), MemoryError> {
        if min_size > LinearMemory::size(&self.inner).bytes().0 as u64 {
            self.ask(min_size)?;
        }
        LinearMemory::grow_at_least(&mut self.inner, min_size)
    }

    fn reset(&mut self) -> Result<(), MemoryError> {
        LinearMemory::reset(&mut self.inner)
    }

    fn vmmemory(&self) -> NonNull<VMMemoryDefinition> {
        LinearMemory::vmmemory(&self.inner)
    }

    fn try_clone(&self) -> Result<Box<dyn LinearMemory + Send + Sync + 'static>, MemoryError> {
        LinearMemory::try_clone(&self.inner)
    }

    fn copy(&self) -> Result<Box<dyn LinearMemory + Send + Sync + 'static>, MemoryError> {
        LinearMemory::copy(&self.inner)
    }

    fn as_shared(&self) -> Result<wasmer::sys::vm::VMSharedMemory, MemoryError> {
        LinearMemory::as_shared(&self.inner)
    }
}

#[cfg(test)]
#[path = "wasmer_tests.rs"]
mod tests;
