//! A usage error: the command was asked for something it does not do (too
//! few variants, a program where a `run(count, seed)` workload is needed, an
//! unknown `--reference`), as against a workload that failed. `main` exits
//! with [`crate::util::exit::ExitStatus::Usage`] (2) for it, wherever in the
//! error chain it sits.

use std::fmt;

/// A usage error, with the words that say what to do instead.
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Whether `error`'s chain holds a [`UsageError`].
pub fn is_usage(error: &anyhow::Error) -> bool {
    error.chain().any(|e| e.is::<UsageError>())
}
