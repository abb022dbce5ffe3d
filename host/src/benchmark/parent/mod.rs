//! The parent's side of the benchmark stage: it plans, starts and feeds the
//! worker processes, and combines what they measured.
//!
//! - [`catalog`]: every file loaded and checked (filling the compile cache
//!   for the workers), and the rows;
//! - [`plan`]: what the parent decides once for every worker (the core, the
//!   seeds) and the report's environment;
//! - [`executor`]: the seam between the schedulers and the processes they
//!   start; [`supervisor`]: the real worker process, fed, listened to and
//!   contained (the call deadline, the memory cap, crashes, Ctrl-C), over
//!   the pipes of [`channel`] (its private event channel, its log);
//! - [`driver`]: one worker after another on a schedule's jobs, their events
//!   turned into outcomes, under the lost-worker policy;
//! - the schedulers, each a fold over the driver's outcomes: [`run`]
//!   (`host run`, with its stop rule in [`stop`], its rows in [`row`], their
//!   results in [`result`] and the run history in [`history`]), [`compare`]
//!   (`host compare`), [`suite`] (`host compare` of a suite: a comparison
//!   per benchmark, its files compiled [`ahead`]), [`profile`] (`host profile`), [`callgrind`] (the
//!   Callgrind pass of `--metric cycles-est`) and [`expected`] (each
//!   program run once for its output, `host run --save-expected`).

pub mod ahead;
pub mod callgrind;
pub mod catalog;
pub mod channel;
pub mod compare;
pub mod driver;
pub mod executor;
pub mod expected;
pub mod history;
pub mod plan;
pub mod profile;
pub mod result;
pub mod row;
pub mod run;
pub mod sides;
pub mod stop;
pub mod suite;
pub mod supervisor;

#[cfg(test)]
mod fake;
#[cfg(test)]
mod tests;
