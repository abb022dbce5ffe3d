//! The guest stage: everything that touches WebAssembly.
//!
//! - [`format`](mod@format): the binary format told from the header, and compiled code;
//! - [`contract`]: every name and check of the workload contract;
//! - [`load`]: finding, reading, compiling and checking workload files;
//! - [`name`]: what a workload file's rows are named (Sightglass's
//!   `bz2/benchmark.wasm` is `bz2`);
//! - [`limits`]: each store's memory and table limits;
//! - [`sandbox`]: Ctrl-C (the call deadline and crash containment are the
//!   supervisor's, in [`crate::benchmark::parent::supervisor`]);
//! - [`seeds`]: the seed of each `run(count, seed)` call;
//! - [`support`]: whether an engine cannot run a guest (GC under winch);
//! - [`runtime`]: the seam every runtime plugs into (a runner instantiates,
//!   a sampler times one call), and each runtime in a folder of its own:
//!   wasmtime's (its engines, compile cache, instances, programs, failures
//!   in words and profiles) first;
//! - [`builtin`]: the empty guests and the pause/resume calibrator;
//! - [`control`]: the control workload `host run --control` measures
//!   beside the workloads;
//! - [`program`]: the Sightglass protocol of a WASI program, and what every
//!   runtime's program sees and is held to;
//! - [`library`]: one iteration of a WASI program under an engine library
//!   (wasmtime's bench-api, as Sightglass loads it).
//!
//! Nothing here decides how often to call a guest, or what the numbers mean.

pub mod builtin;
pub mod contract;
pub mod control;
pub mod format;
pub mod library;
pub mod limits;
pub mod load;
pub mod name;
pub mod program;
pub mod runtime;
pub mod sandbox;
pub mod seeds;
pub mod support;

pub use contract::{Contract, Kind};
pub use format::Format;
pub use load::{GuestFile, LoadError, discover};
pub use name::workload_name;
pub use support::{Unsupported, lacking};
