//! Pause/resume bookkeeping of one instance under wasmi or wasmer, as
//! wasmtime's instances keep it: `bench.pause` and `bench.resume` read the
//! clock first, and a sample is the time between its two clock reads less
//! the time spent paused.

use std::time::{Duration, Instant};

use anyhow::{Result, bail};

use super::seam::RawSample;

/// The pauses of the current call.
#[derive(Debug, Default)]
pub struct Pauses {
    paused_since: Option<Instant>,
    paused: Duration,
    pauses: u64,
}

impl Pauses {
    /// Forget the last call's pauses (before a call is timed).
    pub fn reset(&mut self) {
        *self = Pauses::default();
    }

    /// `bench.pause`.
    pub fn pause(&mut self) -> Result<(), &'static str> {
        let now = Instant::now();
        if self.paused_since.is_some() {
            return Err("pause called while already paused");
        }
        self.paused_since = Some(now);
        self.pauses += 1;
        Ok(())
    }

    /// `bench.resume`.
    pub fn resume(&mut self) -> Result<(), &'static str> {
        let now = Instant::now();
        let Some(since) = self.paused_since.take() else {
            return Err("resume called without pause");
        };
        self.paused += now.duration_since(since);
        Ok(())
    }

    /// An error when `function` returned while paused.
    pub fn check_resumed(&self, function: &str) -> Result<()> {
        if self.paused_since.is_some() {
            bail!("`{function}` returned while paused (pause without resume)");
        }
        Ok(())
    }

    /// The sample of a call timed from `start` to `end` that returned
    /// `checksum`, its paused time taken out.
    pub fn sample(&self, start: Instant, end: Instant, checksum: u64) -> RawSample {
        RawSample {
            elapsed_ns: end
                .duration_since(start)
                .saturating_sub(self.paused)
                .as_nanos() as f64,
            pauses: self.pauses,
            checksum: std::hint::black_box(checksum),
        }
    }
}
