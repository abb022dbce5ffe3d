//! Helpers every stage may use and that know nothing of benchmarks: writing
//! files atomically and reading them bounded, an error chain on one line, the
//! process's exit statuses, what a usage error is, the XDG base directories,
//! text from outside (`foreign`).

pub mod bytes;
pub mod error;
pub mod exit;
pub mod foreign;
pub mod fs;
#[cfg(test)]
pub(crate) mod fuzz;
pub mod stream;
pub mod usage;
pub mod xdg;
