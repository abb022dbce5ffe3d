//! The wasmtime engines a workload is compiled with, and compiling.
//!
//! For one [`EngineConfig`] there is one engine, whose code carries no checks
//! of the harness's own: no epoch checks, no fuel. A call that never returns
//! is ended by the parent process killing the worker it runs in
//! ([`crate::benchmark::parent::supervisor`]), so the code that is timed is the code
//! the engine makes. A second engine, with fuel counting, is made on demand
//! for the instruction pass. Compiled code goes through the compile cache
//! ([`crate::guest::runtime::wasmtime::cache`]) when one is given. This module compiles; it
//! neither checks the contract nor runs code.

use std::path::PathBuf;

use anyhow::{Context, Result};
use wasmtime::component::Component;
use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, Module, OptLevel, PoolingAllocationConfig, Strategy,
};

use crate::guest::format::{Code, Format, detect};
use crate::guest::runtime::wasmtime::cache::{self, CacheOutcome};
use crate::options::{Allocation, Compiler, EngineConfig, OptimizeFor, Proposal};

/// The wasmtime configuration of `config`: the compiler, components on, no
/// wasm backtraces (trap messages stay one line), the default wasm stack
/// limit (512 KiB): deep recursion ends in a stack-overflow trap. Wasm
/// proposals keep wasmtime's defaults (GC, exceptions, tail calls, SIMD,
/// ... on) except those `-W` named; the pooling allocator where the
/// configuration asks for it.
fn wasmtime_config(config: &EngineConfig) -> Result<Config> {
    let mut wasmtime = Config::new();
    match config.compiler {
        Compiler::Cranelift => {
            wasmtime.strategy(Strategy::Cranelift);
            wasmtime.cranelift_opt_level(match config.opt_level {
                OptimizeFor::None => OptLevel::None,
                OptimizeFor::Speed => OptLevel::Speed,
                OptimizeFor::SpeedAndSize => OptLevel::SpeedAndSize,
            });
        }
        Compiler::Winch => {
            wasmtime.strategy(Strategy::Winch);
        }
        Compiler::Pulley => {
            wasmtime
                .target("pulley64")
                .map_err(anyhow::Error::from)
                .context("the pulley interpreter is not available")?;
        }
    }
    wasmtime.wasm_component_model(true);
    wasmtime.wasm_backtrace_max_frames(None);
    if config.allocation == Allocation::Pooling {
        wasmtime.allocation_strategy(pool());
    }
    for (proposal, on) in config.wasm.settings() {
        match proposal {
            Proposal::Gc => wasmtime.wasm_gc(on),
            Proposal::FunctionReferences => wasmtime.wasm_function_references(on),
            Proposal::Exceptions => wasmtime.wasm_exceptions(on),
            Proposal::TailCall => wasmtime.wasm_tail_call(on),
            Proposal::Simd => wasmtime.wasm_simd(on),
            Proposal::RelaxedSimd => wasmtime.wasm_relaxed_simd(on),
            Proposal::MultiMemory => wasmtime.wasm_multi_memory(on),
            Proposal::Threads => wasmtime.wasm_threads(on),
            Proposal::Memory64 => wasmtime.wasm_memory64(on),
            Proposal::ExtendedConst => wasmtime.wasm_extended_const(on),
            Proposal::WideArithmetic => wasmtime.wasm_wide_arithmetic(on),
            Proposal::CustomPageSizes => wasmtime.wasm_custom_page_sizes(on),
            Proposal::StackSwitching => wasmtime.wasm_stack_switching(on),
            Proposal::BulkMemory => wasmtime.wasm_bulk_memory(on),
            Proposal::ReferenceTypes => wasmtime.wasm_reference_types(on),
            Proposal::MultiValue => wasmtime.wasm_multi_value(on),
            Proposal::BranchHinting => wasmtime.wasm_branch_hinting(on),
        };
    }
    Ok(wasmtime)
}

/// The pooling allocator of `--engine NAME:pooling`: wasmtime's defaults
/// (memories up to 4 GiB, copy-on-write images), with room for the few
/// instances a worker holds at once (the row's, the calibration's empty
/// guests, a comparison's variants) rather than a thousand of each.
fn pool() -> InstanceAllocationStrategy {
    const SLOTS: u32 = 64;
    let mut pool = PoolingAllocationConfig::default();
    pool.total_core_instances(SLOTS)
        .total_component_instances(SLOTS)
        .total_memories(SLOTS)
        .total_tables(SLOTS)
        .total_gc_heaps(SLOTS);
    InstanceAllocationStrategy::Pooling(pool)
}

/// Make an engine from a configuration.
fn engine(config: &EngineConfig, wasmtime: &Config) -> Result<Engine> {
    Engine::new(wasmtime)
        .map_err(anyhow::Error::from)
        .with_context(|| format!("creating the {} engine", config.short_name()))
}

/// The engine workloads are compiled with, for one [`EngineConfig`].
#[derive(Clone)]
pub struct Engines {
    pub config: EngineConfig,
    /// No checks of the harness in the compiled code: samples are taken on
    /// it.
    pub fast: Engine,
    pub cache: Option<PathBuf>,
}

impl Engines {
    pub fn new(config: EngineConfig, cache: Option<PathBuf>) -> Result<Self> {
        let fast = engine(&config, &wasmtime_config(&config)?)?;
        Ok(Engines {
            config,
            fast,
            cache,
        })
    }

    /// An engine with fuel counting, for the deterministic instruction-count
    /// pass; never used for timing.
    pub fn fuel(&self) -> Result<Engine> {
        let mut wasmtime = wasmtime_config(&self.config)?;
        wasmtime.consume_fuel(true);
        engine(&self.config, &wasmtime)
    }

    /// An engine with epoch interruption, for profiling
    /// ([`crate::guest::runtime::wasmtime::profile`]): its code checks the epoch, so it is
    /// never timed.
    pub fn profiling(&self) -> Result<Engine> {
        let mut wasmtime = wasmtime_config(&self.config)?;
        wasmtime.epoch_interruption(true);
        engine(&self.config, &wasmtime)
    }

    /// Compile `bytes` of `format` for `engine`, through the cache.
    pub fn compile(
        &self,
        engine: &Engine,
        format: Format,
        bytes: &[u8],
    ) -> Result<(Code, CacheOutcome)> {
        match &self.cache {
            Some(folder) => cache::load_or_compile(folder, engine, format, bytes, || {
                compile(engine, format, bytes)
            }),
            None => Ok((compile(engine, format, bytes)?, CacheOutcome::Off)),
        }
    }
}

/// Compile `bytes` of `format` for `engine` (no cache).
pub fn compile(engine: &Engine, format: Format, bytes: &[u8]) -> Result<Code> {
    let code = match format {
        Format::Module => Module::new(engine, bytes).map(Code::Module),
        Format::Component => Component::new(engine, bytes).map(Code::Component),
        Format::Native => return Err(crate::guest::format::not_wasm()),
    };
    code.map_err(anyhow::Error::from)
        .context("does not compile")
}

/// `code` made again for `engine`, an engine of the configuration it was
/// compiled with, from its serialized form: the same machine code, with its
/// data in memory that the calling thread allocates.
pub fn reload(code: &Code, engine: &Engine) -> Result<Code> {
    let bytes = code.serialize()?;
    // SAFETY: the bytes are what wasmtime serialized a moment ago, in this
    // process, from code compiled for an engine of this configuration (which
    // wasmtime checks again).
    unsafe { Code::deserialize(engine, code.format(), &bytes) }
        .context("loading compiled code again")
}

/// Compile a built-in guest written in WAT (a module or a component) for
/// the fast engine of `engines`, through the cache.
pub fn builtin(engines: &Engines, wat: &str) -> Result<Code> {
    let bytes = wat::parse_str(wat).context("a built-in guest")?;
    let (code, _) = engines
        .compile(&engines.fast, detect(&bytes)?, &bytes)
        .context("compiling a built-in guest")?;
    Ok(code)
}
