//! Every exit status of `host`, in one place. `main` returns them; a second
//! Ctrl-C ends the process with its own.

use std::process::ExitCode;

/// How a `host` process ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Every workload was measured.
    Success,
    /// Some workload failed (the others were measured and reported).
    Failed,
    /// The command stopped with an error (`error: ...` on stderr): a usage
    /// error, a file it cannot read or refuses, an export it cannot write,
    /// nothing that could be measured. What was measured before it stopped
    /// may be reported; a failed row alone is [`ExitStatus::Failed`].
    Usage,
    /// A workload is certainly slower than the baseline beyond
    /// `--fail-on-regression`.
    Regression,
    /// Every workload was measured, reported and exported, but the store
    /// could not keep the run (a symbolic link inside it, read-only, full):
    /// measured, not kept.
    NotKept,
    /// Ctrl-C: the finished rows were reported.
    Interrupted,
}

impl ExitStatus {
    /// The number the process exits with.
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Failed => 1,
            ExitStatus::Usage => 2,
            ExitStatus::Regression => 3,
            ExitStatus::NotKept => 4,
            ExitStatus::Interrupted => 130,
        }
    }

    /// End the process now with this status (for threads other than `main`).
    pub fn exit_now(self) -> ! {
        std::process::exit(i32::from(self.code()))
    }
}

impl From<ExitStatus> for ExitCode {
    fn from(status: ExitStatus) -> Self {
        ExitCode::from(status.code())
    }
}
