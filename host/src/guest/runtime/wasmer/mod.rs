//! wasmer as a [`Runner`] (`--engine wasmer`: its Cranelift;
//! `--engine wasmer-singlepass`: its single-pass compiler): a core module's
//! binary compiled by wasmer into a store of its own, with the harness's
//! `bench.pause`/`bench.resume` and the sandbox's memory limit, and a
//! [`Sampler`] whose `sample` is the timed region. WASI preview 1 grants a
//! workload nothing, as under wasmtime; programs (WASI commands) are
//! [`program`]'s; both get wasmtime-wasi's preview 1 (through
//! [`crate::guest::runtime::wasi_p1`]) rather than wasmer's own WASI runtime (not built
//! here). Components are refused: wasmer does not run them.

mod program;
mod store;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use wasmer::sys::{BaseTunables, Cranelift, NativeEngineExt, Singlepass};
use wasmer::{
    Engine, ExternType, Function, FunctionEnv, FunctionEnvMut, Imports, Instance, Module,
    RuntimeError, Store, TypedFunction,
};

use wasmtime_wasi::WasiCtxBuilder;

use crate::guest::contract::{BENCH_MODULE, INITIALIZE_EXPORT, SETUP_EXPORT};
use crate::guest::limits::{Limiter, Limits};
use crate::guest::runtime::Implementation;
use crate::guest::runtime::pauses::Pauses;
use crate::guest::runtime::seam::{CompiledProgram, Guest, RawSample, Runner, Sampler};
use crate::guest::runtime::wasi_p1;
use crate::guest::sandbox;
use crate::guest::seeds::Seeds;
use crate::options::{Grants, Runtime};
use store::{Limited, explain, explain_with, lock};

/// The crate's version this host is built with, from the workspace's
/// `Cargo.lock` (host/build.rs).
pub const VERSION: &str = env!("WASM_BENCH_VERSION_WASMER");

/// wasmer with its Cranelift's line of the registry: core modules and
/// programs.
pub const CRANELIFT: Implementation = Implementation {
    runtime: Runtime::Wasmer,
    runner: |_| Ok(Box::new(Wasmer::new(Compiler::Cranelift))),
    modules_only: true,
    lacks: |_| None,
    refuses: || None,
    version: || Some(VERSION.to_string()),
};

/// wasmer with its single-pass compiler's line of the registry: core
/// modules without SIMD, and programs.
pub const SINGLEPASS: Implementation = Implementation {
    runtime: Runtime::WasmerSinglepass,
    runner: |_| Ok(Box::new(Wasmer::new(Compiler::Singlepass))),
    modules_only: true,
    lacks: singlepass_lacks,
    refuses: || None,
    version: || Some(VERSION.to_string()),
};

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

    /// `bytes` compiled for `store`'s engine, and how long that took.
    pub fn compile(&self, store: &Store, bytes: &[u8]) -> Result<(Module, Duration)> {
        let start = Instant::now();
        let module = Module::new(store, bytes).context("wasmer: compiling failed")?;
        Ok((module, start.elapsed()))
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
        let (module, compile) = self.compile(&store, guest.bytes)?;
        let pauses = FunctionEnv::new(&mut store, Pauses::default());
        let wasi = FunctionEnv::new(
            &mut store,
            program::State::new(WasiCtxBuilder::new().build_p1()),
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
            compile,
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

    fn program(
        &self,
        guest: Guest<'_>,
        grants: &Grants,
        limits: Limits,
    ) -> Result<Box<dyn CompiledProgram>> {
        let limiter = Arc::new(Mutex::new(Limiter::new(limits)));
        let engine = self.engine(limits, &limiter);
        let (module, compile) = self.compile(&Store::new(engine.clone()), guest.bytes)?;
        let compiled = program::Compiled {
            engine,
            module,
            compile,
        };
        program::program(compiled, limiter, guest, grants, limits)
    }
}

/// Why wasmer's single-pass compiler cannot compile the module `bytes`,
/// if it cannot: it has no SIMD (128-bit vectors), and would stop at the
/// first vector instruction with "not yet implemented". A module valid
/// with SIMD and invalid without it uses it.
pub fn singlepass_lacks(bytes: &[u8]) -> Option<String> {
    let validates = |simd: bool| {
        let mut config = wasmtime::Config::new();
        config.wasm_relaxed_simd(simd).wasm_simd(simd);
        wasmtime::Engine::new(&config)
            .is_ok_and(|engine| wasmtime::Module::validate(&engine, bytes).is_ok())
    };
    (validates(true) && !validates(false)).then(|| {
        "wasmer-singlepass does not support SIMD, and this module uses 128-bit vector instructions: measure it with --engine wasmer (its Cranelift) or under wasmtime".to_string()
    })
}

/// The imports a workload gets: `bench.pause` and `bench.resume`, and
/// WASI preview 1 granting nothing (`wasi`'s context). An import of
/// another WASI is refused by name; any other is left to wasmer's link
/// error.
fn imports(
    store: &mut Store,
    pauses: &FunctionEnv<Pauses>,
    wasi: &FunctionEnv<program::State>,
    module: &Module,
) -> Result<Imports> {
    let mut imports = Imports::new();
    for import in module.imports() {
        let ExternType::Function(ty) = import.ty() else {
            continue;
        };
        match import.module() {
            wasi_p1::MODULE if wasi_p1::arity(import.name()) == Some(ty.params().len()) => {
                let function = program::link_wasi(store, wasi, import.name(), ty);
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
    /// How long wasmer took to compile the module.
    compile: Duration,
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

    fn compile_time(&self) -> Option<Duration> {
        Some(self.compile)
    }
}

#[cfg(test)]
mod tests;
