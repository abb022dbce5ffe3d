//! Programs under wasmer: the WASI command module compiled once by the
//! compiler `--engine` names; each iteration a fresh store and instance on
//! that engine (its memories held to `--max-memory` by the engine's
//! limiter, started afresh), with WASI preview 1 answered by
//! [`crate::guest::runtime::wasi_p1`] (the context [`World::p1`] builds, as wasmtime's
//! programs get it) and `bench.start`/`bench.end` reading the clock.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use wasmer::{
    Engine, ExternType, Function, FunctionEnv, FunctionEnvMut, Imports, Instance, Memory, Module,
    RuntimeError, Store, Value,
};
use wasmtime_wasi::p1::WasiP1Ctx;

use super::store::{explain, explain_with, lock};
use crate::guest::contract::{BENCH_MODULE, START_EXPORT};
use crate::guest::limits::{Limiter, Limits};
use crate::guest::program::world::{Ended, Ran, Timing};
use crate::guest::program::{Iteration, World};
use crate::guest::runtime::seam::{CompiledProgram, Guest};
use crate::guest::runtime::wasi_p1::{self, Stop};
use crate::options::Grants;

/// The host state of one iteration (a program's instance: of its
/// lifetime), for WASI and the program's regions.
pub(super) struct State {
    wasi: WasiP1Ctx,
    timing: Timing,
    /// `proc_exit`'s code, once called.
    exit: Option<i32>,
    /// The instance's exported memory, once instantiated.
    memory: Option<Memory>,
}

/// A module compiled by wasmer: the engine that compiled it, the module,
/// and how long compiling took.
pub struct Compiled {
    pub engine: Engine,
    pub module: Module,
    pub compile: Duration,
}

/// A program compiled by wasmer.
pub struct WasmerCommand {
    engine: Engine,
    module: Module,
    compile: Duration,
    limiter: Arc<Mutex<Limiter>>,
    world: World,
    limits: Limits,
}

// SAFETY: a `Module` and an `Engine` are shareable between threads
// (wasmer's `Module` is `Send + Sync`); no store is kept between
// iterations, so nothing here holds a pointer into one.
unsafe impl Send for WasmerCommand {}

/// The program `guest`, `compiled` by an engine whose tunables hold
/// memories through `limiter`, once it imports only what a program may.
pub fn program(
    compiled: Compiled,
    limiter: Arc<Mutex<Limiter>>,
    guest: Guest<'_>,
    grants: &Grants,
    limits: Limits,
) -> Result<Box<dyn CompiledProgram>> {
    let Compiled {
        engine,
        module,
        compile,
    } = compiled;
    let mut imports_end = false;
    for import in module.imports() {
        let params = match import.ty() {
            ExternType::Function(ty) => Some(ty.params().len()),
            _ => None,
        };
        wasi_p1::check_import(import.module(), import.name(), params)?;
        imports_end |= import.module() == BENCH_MODULE && import.name() == "end";
    }
    Ok(Box::new(WasmerCommand {
        engine,
        module,
        compile,
        limiter,
        world: World::new(guest.path, grants, imports_end)?,
        limits,
    }))
}

/// The imports of one iteration: each WASI import to [`wasi_p1::call`],
/// `bench.start`/`bench.end` to the clock.
fn imports(store: &mut Store, env: &FunctionEnv<State>, module: &Module) -> Imports {
    let mut imports = Imports::new();
    for import in module.imports() {
        let ExternType::Function(ty) = import.ty() else {
            continue;
        };
        let function = match (import.module(), import.name()) {
            (BENCH_MODULE, "start") => {
                Function::new_typed_with_env(store, env, |mut env: FunctionEnvMut<State>| {
                    let now = Instant::now();
                    env.data_mut().timing.start(now);
                })
            }
            (BENCH_MODULE, _) => {
                Function::new_typed_with_env(store, env, |mut env: FunctionEnvMut<State>| {
                    let now = Instant::now();
                    env.data_mut().timing.end(now);
                })
            }
            (_, name) => link_wasi(store, env, name, ty),
        };
        imports.define(import.module(), import.name(), function);
    }
    imports
}

impl State {
    /// The state of an instance whose WASI context is `wasi`.
    pub(super) fn new(wasi: WasiP1Ctx) -> Self {
        State {
            wasi,
            timing: Timing::default(),
            exit: None,
            memory: None,
        }
    }

    /// Reach the instance's exported memory, once instantiated.
    pub(super) fn reach_memory(&mut self, instance: &Instance) {
        self.memory = instance.exports.get_memory("memory").ok().cloned();
    }
}

/// A host function for `wasi_snapshot_preview1.<name>`, of type `ty`, that
/// calls [`wasi_p1::call`].
pub(super) fn link_wasi(
    store: &mut Store,
    env: &FunctionEnv<State>,
    name: &str,
    ty: &wasmer::FunctionType,
) -> Function {
    let name = name.to_string();
    Function::new_with_env(store, env, ty.clone(), move |env, args| {
        wasi(env, &name, args)
    })
}

/// One WASI call of the guest, on its exported memory.
fn wasi(
    mut env: FunctionEnvMut<State>,
    name: &str,
    args: &[Value],
) -> Result<Vec<Value>, RuntimeError> {
    let args: Vec<i64> = args
        .iter()
        .map(|v| match v {
            Value::I32(v) => i64::from(*v),
            Value::I64(v) => *v,
            _ => 0,
        })
        .collect();
    let (state, store) = env.data_and_store_mut();
    let memory = state
        .memory
        .clone()
        .ok_or_else(|| RuntimeError::new("a WASI call needs the exported `memory`"))?;
    let view = memory.view(&store);
    // SAFETY: the guest is stopped in this call for its whole length, and
    // nothing else touches its memory meanwhile: the slice is the only view
    // of it until `call` returns, as a wasmtime host call's is.
    let bytes = unsafe { view.data_unchecked_mut() };
    match wasi_p1::call(&mut state.wasi, bytes, name, &args) {
        Ok(errno) => Ok(vec![Value::I32(errno)]),
        Err(Stop::Exit(code)) => {
            state.exit = Some(code);
            Err(RuntimeError::new(format!("exit with code {code}")))
        }
        Err(Stop::Trap(e)) => Err(RuntimeError::new(format!("{e:#}"))),
    }
}

impl WasmerCommand {
    /// One fresh store and instance, run: what it left.
    fn run(&self, wasi: WasiP1Ctx) -> Result<Ran> {
        *lock(&self.limiter) = Limiter::new(self.limits);
        let mut store = Store::new(self.engine.clone());
        let env = FunctionEnv::new(&mut store, State::new(wasi));
        let imports = imports(&mut store, &env, &self.module);
        let start = Instant::now();
        let instance = Instance::new(&mut store, &self.module, &imports)
            .map_err(|e| explain_with(anyhow::Error::from(e), &self.limiter))
            .context("instantiation failed")?;
        let instantiate = start.elapsed();
        env.as_mut(&mut store).reach_memory(&instance);
        let entry = instance
            .exports
            .get_typed_function::<(), ()>(&store, START_EXPORT)
            .context("export `_start`")?;
        let start = Instant::now();
        let result = entry.call(&mut store);
        let whole = start.elapsed();
        let state = env.as_mut(&mut store);
        let ended = match (state.exit, result) {
            (Some(code), _) => Ended::Exited(code),
            (None, Ok(())) => Ended::Returned,
            (None, Err(e)) => Ended::Failed(explain(e, &self.limiter).context("`_start` failed")),
        };
        Ok(Ran {
            instantiate,
            whole,
            ended,
            timing: std::mem::take(&mut state.timing),
        })
    }
}

impl CompiledProgram for WasmerCommand {
    fn iterate(&self, seed: u64) -> Result<Iteration> {
        self.world.iterate_p1(seed, |wasi| self.run(wasi))
    }

    /// The serialized module's size (the machine code with its metadata).
    fn code_bytes(&self) -> Option<u64> {
        self.module.serialize().ok().map(|bytes| bytes.len() as u64)
    }

    fn compile_time(&self) -> Option<Duration> {
        Some(self.compile)
    }
}
