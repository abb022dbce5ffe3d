//! The benchmark stage: when and how often each guest is called.
//!
//! - [`calibrate`]: the empty guest's call and a pause/resume pair, once per
//!   run and format;
//! - [`sequence`]: the measuring sequence of a `run(count, seed)` workload
//!   (warm-up, pilot, proof, baseline, blocks) and the stop rule, written
//!   once;
//! - [`program`]: the measuring sequence of a WASI program;
//! - [`session`]: what a measuring command sets up once (engines, guard,
//!   measuring thread, workloads, built-ins, rows);
//! - [`schedule`]: rows in turn (`run`), interleaved rounds (`compare`);
//! - [`progress`]: what the stage tells as it goes.
//!
//! It asks [`crate::analysis`] when to stop and hands back
//! [`crate::results`]; it never prints.

pub mod calibrate;
pub mod program;
pub mod progress;
pub mod schedule;
pub mod sequence;
pub mod session;
