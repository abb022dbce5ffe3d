//! wasm-bench: measure WebAssembly workloads precisely.
//!
//! The pipeline runs one way, one module per stage:
//! [`cli`] (raw flags) -> [`settings`] (validated options) -> [`env`] (pin the
//! measuring thread, raise its priority) -> [`clock`] (calibrate the clock) ->
//! [`workload`] (load, check the contract, instantiate) -> [`measure`] (warm up,
//! pilot, baseline, sample) -> [`stats`] -> [`result`] (the one result type) ->
//! [`report`] (terminal table) and [`export`] (JSON).
//!
//! [`run`] ties the stages together for `host run`; [`selftest`] measures the
//! harness itself.

pub mod baseline;
pub mod cache;
pub mod cli;
pub mod clock;
pub mod compare;
pub mod completions;
pub mod complexity;
pub mod doctor;
pub mod env;
pub mod export;
pub mod guard;
pub mod instance;
pub mod measure;
pub mod program;
pub mod progress;
pub mod report;
pub mod result;
pub mod run;
pub mod scaffold;
pub mod selftest;
pub mod session;
pub mod settings;
pub mod stats;
pub mod units;
pub mod verdict;
pub mod watch;
pub mod workload;
