//! What only a Callgrind pass needs of a program: it made to count, with its
//! imports and entry resolved once, its WASI context built ahead of each
//! iteration, and the iteration counted.

use std::path::Path;

use anyhow::{Context, Result, bail};
use wasmtime::Extern;
use wasmtime_wasi::WasiCtxBuilder;
use wasmtime_wasi::p2::bindings::sync::CommandPre;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;

use crate::guest::contract::START_EXPORT;
use crate::guest::format::Code;
use crate::guest::limits::Limits;
use crate::options::Grants;

use super::*;

impl Program {
    /// A program to count with Callgrind ([`Program::count`]): its
    /// `bench.start`/`bench.end`, when it imports both, toggle Callgrind's
    /// collecting; its imports and entry are resolved here, once; the
    /// guest's random numbers come from generators seeded with `seed`.
    pub fn counting(
        path: &Path,
        code: &Code,
        grants: &Grants,
        limits: Limits,
        seed: u64,
    ) -> Result<Self> {
        let mut program = Self::linked(path, code, grants, limits, true)?;
        program.seed = seed;
        program.resolved = Some(match &program.runner {
            Runner::Module { module, linker } => Resolved::Module {
                pre: linker
                    .instantiate_pre(module)
                    .map_err(anyhow::Error::from)
                    .context("instantiation failed")?,
                start: module
                    .get_export_index(START_EXPORT)
                    .context("export `_start`: not found")?,
            },
            Runner::Component { component, linker } => Resolved::Component {
                pre: linker
                    .instantiate_pre(component)
                    .and_then(CommandPre::new)
                    .map_err(anyhow::Error::from)
                    .context("instantiation failed")?,
            },
        });
        Ok(program)
    }

    /// The WASI context and output pipes of one counting iteration of a
    /// program made by [`Program::counting`].
    pub fn counting_context(&self) -> Result<CountingContext> {
        let Some(resolved) = &self.resolved else {
            bail!("a counting context is for a program made to count");
        };
        let stdout = MemoryOutputPipe::new(CAPTURE_LIMIT);
        let stderr = MemoryOutputPipe::new(CAPTURE_LIMIT);
        // File operations on this thread, not on threads of wasmtime-wasi's
        // runtime (set before the folders are opened: each keeps the
        // setting it was opened with).
        let mut builder = WasiCtxBuilder::new();
        builder.allow_blocking_current_thread(true);
        let mut builder = self.world.wasi(builder, (&stdout, &stderr), self.seed)?;
        let wasi = match resolved {
            Resolved::Module { .. } => CountingWasi::P1(builder.build_p1()),
            Resolved::Component { .. } => CountingWasi::P2(builder.build()),
        };
        Ok(CountingContext {
            wasi,
            stdout,
            stderr,
        })
    }

    /// One counting iteration of a program made by [`Program::counting`], in
    /// `context`: a fresh instance from the resolved imports, its run, the
    /// checks of [`Program::iterate`], with its phases bracketed by
    /// `bracket` (one that reads no clock: the iteration's times are zero,
    /// and it has one of them per region).
    pub fn count<B: Bracket>(
        &self,
        context: CountingContext,
        bracket: &mut B,
    ) -> Result<Iteration> {
        if sandbox::interrupted() {
            bail!("interrupted");
        }
        let CountingContext {
            wasi,
            stdout,
            stderr,
        } = context;
        let ran = match (&self.resolved, wasi) {
            (Some(Resolved::Module { pre, start }), CountingWasi::P1(wasi)) => self.run_module(
                self.store(pre.module().engine(), wasi),
                bracket,
                |store| pre.instantiate(store),
                |instance, store| {
                    instance
                        .get_module_export(&mut *store, start)
                        .and_then(Extern::into_func)
                        .context("not a function")?
                        .typed::<(), ()>(&*store)
                        .map_err(anyhow::Error::from)
                },
            )?,
            (Some(Resolved::Component { pre }), CountingWasi::P2(ctx)) => {
                self.run_component(self.store(pre.engine(), P2::new(ctx)), bracket, |store| {
                    pre.instantiate(store)
                })?
            }
            _ => bail!("a counting iteration needs a program made to count, and its own context"),
        };
        self.finish(ran, &stdout, &stderr, true)
    }

    /// One instantiation of a program made by [`Program::counting`], in
    /// `context`, bracketed by `bracket` (no run: the instance is dropped).
    pub fn count_instantiation<B: Bracket>(
        &self,
        context: CountingContext,
        bracket: &mut B,
    ) -> Result<()> {
        match (&self.resolved, context.wasi) {
            (Some(Resolved::Module { pre, .. }), CountingWasi::P1(wasi)) => {
                let mut store = self.store(pre.module().engine(), wasi);
                instantiate(&mut store, bracket, |store| pre.instantiate(store))?;
            }
            (Some(Resolved::Component { pre }), CountingWasi::P2(ctx)) => {
                let mut store = self.store(pre.engine(), P2::new(ctx));
                instantiate(&mut store, bracket, |store| pre.instantiate(store))?;
            }
            _ => {
                bail!("a counting instantiation needs a program made to count, and its own context")
            }
        }
        Ok(())
    }
}
