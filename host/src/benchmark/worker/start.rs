//! How a `run(count, seed)` workload starts, in one process: fresh
//! instances made one after another, each instantiated as the row's own
//! instance was ([`Session::instance`]: neither setup nor a compile the
//! runtime did here included) and called once, `run(1, seed)`, its first
//! call. Taken after the row's sampling, so that it does not disturb it;
//! the summary is [`crate::results::Start`].

use std::time::{Duration, Instant};

use anyhow::Result;

use crate::benchmark::progress::{Call, Progress};
use crate::benchmark::protocol::StartMeasurement;
use crate::benchmark::worker::session::Session;
use crate::guest::load::GuestFile;
use crate::results::Row;

/// Fresh instances stop being made once this much time has passed...
const BUDGET: Duration = Duration::from_millis(50);
/// ... and at least this many were made (a runtime whose instance is a
/// process, V8's, makes only these) ...
const LEAST: usize = 3;
/// ... or at once when this many were.
const MOST: usize = 100;

/// Instantiate `row`'s workload afresh and call it once, again and again
/// within the budget; `pause_pair_ns` is the calibrated cost of a pause
/// and resume, left out of the first call's time as from every sample.
/// A fresh instance that fails (a workload that traps at count 1) ends
/// them, and the sample says why.
pub fn measure(
    session: &Session,
    guest: &GuestFile,
    row: &Row,
    pause_pair_ns: f64,
    progress: &dyn Progress,
) -> StartMeasurement {
    let began = Instant::now();
    let mut sample = StartMeasurement::default();
    while more(sample.instantiate_ns.len(), began.elapsed()) {
        match fresh(session, guest, row, pause_pair_ns, progress) {
            Ok((instantiate_ns, first_call_ns)) => {
                sample.instantiate_ns.push(instantiate_ns);
                sample.first_call_ns.push(first_call_ns);
            }
            Err(e) => {
                sample.failed = Some(crate::util::error::one_line(&e));
                break;
            }
        }
    }
    sample
}

/// One fresh instance's instantiation and first call, in ns.
fn fresh(
    session: &Session,
    guest: &GuestFile,
    row: &Row,
    pause_pair_ns: f64,
    progress: &dyn Progress,
) -> Result<(f64, f64)> {
    let (mut instance, instantiate_ms) = session.instance(guest, row, progress)?;
    progress.calling(Call::Run { count: 1 });
    let first = instance.sample(1)?;
    Ok((instantiate_ms * 1e6, first.net_ns(pause_pair_ns)))
}

/// Whether to make another fresh instance after `made` in `spent`.
fn more(made: usize, spent: Duration) -> bool {
    made < LEAST || (made < MOST && spent < BUDGET)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_least_three_at_most_a_hundred_else_within_the_budget() {
        assert!(more(0, Duration::from_secs(10)));
        assert!(more(2, Duration::from_secs(10)));
        assert!(!more(3, BUDGET));
        assert!(more(3, BUDGET / 2));
        assert!(!more(MOST, Duration::ZERO));
    }
}
