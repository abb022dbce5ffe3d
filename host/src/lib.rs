//! wasm-bench: measure WebAssembly workloads precisely.
//!
//! One folder per stage; a stage imports only the stages below it, so data
//! flows one way:
//!
//! [`cli`] (raw flags) -> [`options`] (typed settings) -> [`platform`] (the
//! measuring thread, the clock) -> [`guest`] (the contract, engines,
//! loading, the compile cache, instances, the sandbox) -> [`results`] (plain
//! data) -> [`analysis`] (statistics, corrections, verdicts) ->
//! [`benchmark`] (calibration, the measuring sequence, the stop rule, the
//! scheduler) -> [`output`] (table, progress, exports) -> [`command`] (one
//! module per subcommand). [`util`] holds what every stage may use.
//!
//! The benchmark stage sits above analysis because it asks it when to stop
//! (the precision rule, compare's verdicts); results sit below analysis
//! because analysis makes them. docs/code.md's "Code map" says the same.

// The unit tests read back, with the raw readers clippy.toml forbids, files
// they wrote themselves; the code they test is linted without this (the
// plain build of the library).
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod analysis;
pub mod benchmark;
pub mod cli;
pub mod command;
pub mod guest;
pub mod options;
pub mod output;
pub mod platform;
pub mod results;
pub mod util;
