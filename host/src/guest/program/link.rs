//! The `bench` imports of a program: whether it imports them, and how they
//! are linked (timing its regions, or switching Callgrind's collecting).

use std::time::Instant;

use anyhow::{Context, Result};
use wasmtime::{Caller, Linker, StoreContextMut};
use wasmtime_wasi::p1::WasiP1Ctx;

use crate::guest::contract::BENCH_MODULE;
use crate::guest::format::Code;

use super::*;

/// Whether `code` imports `bench.<func>`: a function of the `bench` module,
/// or of a component's `bench` instance.
pub(super) fn imports_bench(code: &Code, func: &str) -> bool {
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
pub(super) fn link_module_bench<const COUNTING: bool>(
    linker: &mut Linker<State<WasiP1Ctx>>,
) -> Result<()> {
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
pub(super) fn link_component_bench<const COUNTING: bool>(
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
