//! Typed settings, made once from the raw flags of [`crate::cli`].
//!
//! Everything after this stage reads [`Settings`] (and [`CompareSettings`]),
//! never clap types. This module checks values and converts units
//! (durations, sizes, bytes, percentages); it does not touch the file system
//! or the machine.
//!
//! Here: `settings`, the [`Settings`] of `host run` and what they are made
//! of; `compare` holds the settings of `host compare` and `host profile`,
//! `engine` the compiler and Wasm proposals, `runtimes` the names
//! `--engine` takes ([`ENGINES`]), `exports` the export files, `parse` the
//! parsers of flag values. Every public item is reachable as
//! `crate::options::Name`.

mod compare;
mod engine;
mod exports;
mod parse;
mod runtimes;
mod settings;
mod shard;
mod store;

pub use compare::*;
pub use engine::*;
pub use exports::*;
pub use parse::*;
pub use runtimes::*;
pub use settings::*;
pub use shard::*;
pub use store::*;

#[cfg(test)]
mod tests;
