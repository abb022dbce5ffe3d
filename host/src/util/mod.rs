//! Helpers every stage may use and that know nothing of benchmarks: writing
//! files atomically, an error chain on one line, the process's exit statuses,
//! what a usage error is, text from outside (`foreign`).

pub mod bytes;
pub mod error;
pub mod exit;
pub mod foreign;
pub mod fs;
pub mod usage;
