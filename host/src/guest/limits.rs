//! The sandbox's limits on one store: the bytes of all its linear memories
//! together and the elements of its tables, enforced by a wasmtime
//! `ResourceLimiter` that remembers what it refused, so that an error can say
//! why a guest failed. This module limits; it does not run guests.

use wasmtime::ResourceLimiter;

use crate::util::bytes::format_bytes;

/// The sandbox's limits on one store: the bytes of all its linear memories
/// together, and the elements of its tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_memory_bytes: u64,
    /// Ask for transparent huge pages to back the linear memories of a
    /// `run(count, seed)` workload ([`crate::platform::pages`]).
    pub huge_pages: bool,
}

impl Limits {
    /// Table elements allowed: a pointer each, within the memory cap.
    pub fn max_table_elements(&self) -> u64 {
        self.max_memory_bytes / 8
    }
}

/// Tracks the store's memory against [`Limits`] and remembers a refusal, so
/// that the error can say why a guest failed.
#[derive(Debug)]
pub struct Limiter {
    limits: Limits,
    memory_bytes: u64,
    refused: Option<String>,
}

impl Limiter {
    pub fn new(limits: Limits) -> Self {
        Limiter {
            limits,
            memory_bytes: 0,
            refused: None,
        }
    }

    /// The bytes of linear memory granted so far, all memories together.
    pub fn memory_bytes(&self) -> u64 {
        self.memory_bytes
    }

    /// The last refusal, in plain words.
    pub fn refused(&self) -> Option<&str> {
        self.refused.as_deref()
    }
}

impl ResourceLimiter for Limiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let total = self.memory_bytes - (current as u64).min(self.memory_bytes) + desired as u64;
        if total > self.limits.max_memory_bytes {
            self.refused = Some(format!(
                "growing linear memory to {} ({desired} bytes) refused: over the --max-memory limit of {}",
                format_bytes(desired as u64),
                format_bytes(self.limits.max_memory_bytes)
            ));
            return Ok(false);
        }
        self.memory_bytes = total;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired as u64 > self.limits.max_table_elements() {
            self.refused = Some(format!(
                "table of {desired} elements refused: over the limit of {} (--max-memory / 8 bytes)",
                self.limits.max_table_elements()
            ));
            return Ok(false);
        }
        Ok(true)
    }
}
