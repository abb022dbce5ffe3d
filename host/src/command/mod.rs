//! The commands of `host`, one module each: each takes its typed settings,
//! drives the stages below, and returns how the process should end.
//!
//! - [`run`]: measure workloads, print, compare with a baseline, keep the
//!   run in the store, export (with [`expected`], save programs' expected
//!   output first);
//! - [`history`]: each benchmark over the kept runs, with change points;
//! - [`compare`]: variants interleaved, with verdicts;
//! - [`profile`]: where the time goes, per workload;
//! - [`watch`]: measure again whenever a file changes;
//! - [`report`]: render a saved JSON export again, without measuring, or
//!   merge several run exports ([`merge`]);
//! - [`schema`]: the JSON Schema of the exports;
//! - [`selftest`]: measure the harness itself;
//! - [`doctor`]: what would disturb measurements here;
//! - [`new`]: scaffold a workload;
//! - [`completions`]: shell completions and the man page.

pub mod compare;
pub mod completions;
pub mod confirm;
pub mod doctor;
pub mod expected;
pub mod history;
pub mod merge;
pub mod new;
pub mod profile;
pub mod report;
pub mod run;
pub mod schema;
pub mod selftest;
pub mod suite_history;
pub mod watch;
