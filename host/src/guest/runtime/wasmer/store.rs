//! What every wasmer store of the host shares, for workloads and programs
//! alike: the tunables that hold its linear memories and tables to the
//! sandbox's limits ([`Limited`], with the [`Limiter`] wasmtime's stores
//! use), and a trap told in plain words, with the limit refused on the way
//! ([`explain`]).

use std::ptr::NonNull;
use std::sync::{Arc, Mutex, MutexGuard};

use wasmer::sys::vm::{
    LinearMemory, MemoryError, MemoryStyle, TableStyle, TrapCode, VMMemory, VMMemoryDefinition,
    VMTable, VMTableDefinition,
};
use wasmer::sys::{BaseTunables, Tunables};
use wasmer::{MemoryType, Pages, RuntimeError, TableType};
use wasmtime::ResourceLimiter;

use crate::guest::limits::{Limiter, Limits};
use crate::guest::runtime::wasmtime::failure;

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
/// ([`crate::guest::runtime::wasmtime::failure`]).
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
pub(super) struct Limited {
    pub(super) base: BaseTunables,
    pub(super) limits: Limits,
    pub(super) limiter: Arc<Mutex<Limiter>>,
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
