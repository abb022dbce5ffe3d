//! The benchmark stage: when and how often each guest is called.
//!
//! Measuring happens in worker processes (the same binary, `host worker`);
//! the parent plans, supervises and combines.
//!
//! In the parent:
//! - [`catalog`]: every file loaded and checked, and the rows;
//! - [`schedule`]: which rows each worker measures, and when a row has
//!   enough (`run`); workers of interleaved rounds (`compare`);
//! - [`supervisor`]: a worker started, fed, listened to and contained (the
//!   call deadline, the memory cap, crashes, Ctrl-C).
//!
//! In a worker:
//! - [`worker`]: the job and the events, and the worker's main loop;
//! - [`session`]: the measuring thread, calibrated, with its workloads;
//! - [`calibrate`]: the empty guest's call and a pause/resume pair;
//! - [`sequence`]: the measuring sequence of a `run(count, seed)` workload
//!   (warm-up, pilot, baseline, blocks), written once;
//! - [`program`]: the measuring sequence of a WASI program;
//! - [`callgrind`]: the Callgrind pass (run under Valgrind: the counts of
//!   the machine code per op, or per program phase);
//! - [`counters`]: the hardware-counter pass (the CPU's counts of the
//!   timed code per op);
//! - [`profile`]: the profiling pass (where the time goes).
//!
//! Both: [`progress`], what the stage tells as it goes. The stage asks
//! [`crate::analysis`] when a row has enough and hands back
//! [`crate::results`]; it never prints.

pub mod calibrate;
pub mod callgrind;
pub mod catalog;
pub mod counters;
pub mod profile;
pub mod program;
pub mod progress;
pub mod schedule;
pub mod sequence;
pub mod session;
pub mod supervisor;
pub mod worker;
