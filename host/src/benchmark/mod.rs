//! The benchmark stage: when and how often each guest is called.
//!
//! Measuring happens in worker processes (the same binary, `host worker`);
//! the parent plans, supervises and combines. The two sides are apart:
//! - [`parent`]: the catalog of rows, the plan sent to every worker, the
//!   driver that starts and replaces workers, and the schedulers of `run`,
//!   `compare`, `profile` and the Callgrind pass;
//! - [`worker`]: what a worker process does with its job: calibrate, load,
//!   and measure, compare, count or profile its rows;
//! - [`protocol`]: what crosses between them (the job, the worker's plan,
//!   the events), in one file;
//! - [`progress`]: what the stage tells as it goes, on both sides.
//!
//! The stage asks [`crate::analysis`] when a row has enough and hands back
//! [`crate::results`]; it never prints.

pub mod parent;
pub mod progress;
pub mod protocol;
pub mod worker;
