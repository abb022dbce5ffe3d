//! The guest stage: everything that touches WebAssembly.
//!
//! - [`format`](mod@format): the binary format told from the header, and compiled code;
//! - [`contract`]: every name and check of the workload contract;
//! - [`engine`]: wasmtime engines (for timing, with fuel, for profiling)
//!   and compiling;
//! - [`cache`]: the compile cache on disk;
//! - [`load`]: finding, reading, compiling and checking workload files;
//! - [`name`]: what a workload file's rows are named (Sightglass's
//!   `bz2/benchmark.wasm` is `bz2`);
//! - [`limits`]: each store's memory and table limits;
//! - [`sandbox`]: Ctrl-C (the call deadline and crash containment are the
//!   supervisor's, in [`crate::benchmark::parent::supervisor`]);
//! - [`seeds`]: the seed of each `run(count, seed)` call;
//! - [`instance`]: `run(count, seed)` workloads instantiated and called, the
//!   one timed region;
//! - [`failure`]: a guest's failure under wasmtime in plain words;
//! - [`runtime`]: the seam every runtime plugs into (a runner instantiates,
//!   a sampler times one call), wasmtime its first;
//! - [`builtin`]: the empty guests and the pause/resume calibrator;
//! - [`control`]: the control workload `host run --control` measures
//!   beside the workloads;
//! - [`program`]: one iteration of a WASI program (the Sightglass protocol),
//!   and what every runtime's program sees and is held to;
//! - [`library`]: one iteration of a WASI program under an engine library
//!   (wasmtime's bench-api, as Sightglass loads it);
//! - [`profile`]: sampling a guest's stack with wasmtime's GuestProfiler.
//!
//! Nothing here decides how often to call a guest, or what the numbers mean.

pub mod builtin;
pub mod cache;
pub mod contract;
pub mod control;
pub mod engine;
pub mod failure;
pub mod format;
pub mod instance;
pub mod library;
pub mod limits;
pub mod load;
pub mod name;
pub mod profile;
pub mod program;
pub mod runtime;
pub mod sandbox;
pub mod seeds;

pub use contract::{Contract, Kind};
pub use format::Format;
pub use load::{LoadError, Workload, discover};
pub use name::workload_name;
