//! The hardware-counter pass (`--metric counters`): the CPU's own counts of
//! the code that is timed, on the instance that was timed, after its
//! samples.
//!
//! A group of user-space counters (instructions retired, cycles;
//! [`crate::platform::pmu::Counters`]) counts one call at the row's count
//! and one at twice the count; their difference per op cancels the call's
//! fixed cost, as the fuel and Callgrind passes do. [`PAIRS`] such pairs,
//! the median of each. Where the kernel gives no hardware counters (a VM
//! without a virtual PMU), the pass says why instead.

use std::fmt;

use anyhow::Result;

use crate::analysis::stats;
use crate::benchmark::progress::{Call, Progress};
use crate::guest::runtime::Sampler;
use crate::platform::pmu::{Counted, Counters, describe};
use crate::results::HardwareCounts;

/// Counted pairs of calls (count, then twice the count).
pub const PAIRS: usize = 5;

/// Why the counters did not count: not a failure of the row, a note on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uncounted(pub String);

impl fmt::Display for Uncounted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Uncounted {}

/// What the counters gave a row: its counts per op, or why there are none.
pub type Counting = std::result::Result<HardwareCounts, Uncounted>;

/// Count `instance` per op at `count`: `Ok(Err(why))` when the counters are
/// not there or were shared with other work; `Err` when a call failed.
pub fn per_op(instance: &mut dyn Sampler, count: u64, progress: &dyn Progress) -> Result<Counting> {
    let count = count.max(1);
    let mut counters = match Counters::instructions_and_cycles() {
        Ok(counters) => counters,
        Err(code) => return Ok(Err(unavailable(code))),
    };
    let mut instructions = Vec::with_capacity(PAIRS);
    let mut cycles = Vec::with_capacity(PAIRS);
    for _ in 0..PAIRS {
        let mut counted = |n: u64| -> Result<std::result::Result<Counted, Uncounted>> {
            progress.calling(Call::Run { count: n });
            if let Err(code) = counters.start() {
                return Ok(Err(unavailable(code)));
            }
            let called = instance.sample(n);
            let stopped = counters.stop().map_err(unavailable);
            called?;
            Ok(stopped.and_then(|c| match c.complete {
                true => Ok(c),
                false => Err(Uncounted(
                    "not counted: the kernel shared the counters with other work (multiplexed), so the counts were partial"
                        .to_string(),
                )),
            }))
        };
        let one = match counted(count)? {
            Ok(c) => c,
            Err(why) => return Ok(Err(why)),
        };
        let two = match counted(2 * count)? {
            Ok(c) => c,
            Err(why) => return Ok(Err(why)),
        };
        let per = |i: usize| (two.values[i] as f64 - one.values[i] as f64) / count as f64;
        instructions.push(per(0));
        cycles.push(per(1));
    }
    Ok(Ok(HardwareCounts {
        instructions: stats::median(&instructions),
        cycles: stats::median(&cycles),
        pairs: PAIRS,
    }))
}

/// Why the counters are not there, for the row's note.
fn unavailable(code: i32) -> Uncounted {
    Uncounted(format!("unavailable ({})", describe(code)))
}
