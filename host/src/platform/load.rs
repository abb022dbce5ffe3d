//! How busy each core is: the share of a short watch that the kernel spent
//! on anything but idle, from `/proc/stat` (Linux; elsewhere nothing is
//! known). The parent reads it once before a run, to choose the quietest core
//! and to tell a busy machine: when even the measuring core, or every core,
//! is busy with other work, a run's numbers depend on what that work does
//! meanwhile and may not repeat.
//!
//! This module watches the cores; it times no workload.

use std::collections::HashMap;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How long the cores' load is watched.
pub const WINDOW: Duration = Duration::from_millis(40);

/// A core busy for at least this share of the watch is busy.
pub const BUSY_SHARE: f64 = 0.5;

/// Cores within this share of busy time of the quietest count as quiet as
/// it; the last of them is chosen (the cores the system uses least, as a
/// rule).
const QUIET_MARGIN: f64 = 0.10;

/// The load of one core over a watch.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CoreLoad {
    pub core: usize,
    /// The share of the watch it was busy, in percent.
    pub busy_pct: f64,
}

impl CoreLoad {
    /// Whether the core was busy for at least [`BUSY_SHARE`] of the watch.
    pub fn is_busy(&self) -> bool {
        self.busy_pct >= BUSY_SHARE * 100.0
    }
}

/// Watch `cores` for [`WINDOW`]; `None` where `/proc/stat` cannot be read.
pub fn watch(cores: &[usize]) -> Option<Vec<CoreLoad>> {
    let before = cpu_times()?;
    std::thread::sleep(WINDOW);
    let after = cpu_times()?;
    Some(loads(cores, &before, &after))
}

/// The busy share of each of `cores` between two readings of `/proc/stat`.
fn loads(
    cores: &[usize],
    before: &HashMap<usize, (u64, u64)>,
    after: &HashMap<usize, (u64, u64)>,
) -> Vec<CoreLoad> {
    cores
        .iter()
        .filter_map(|&core| {
            let (b, a) = (before.get(&core)?, after.get(&core)?);
            let total = a.0.saturating_sub(b.0);
            let idle = a.1.saturating_sub(b.1);
            let busy = match total {
                0 => 0.0,
                _ => total.saturating_sub(idle) as f64 / total as f64,
            };
            Some(CoreLoad {
                core,
                busy_pct: busy * 100.0,
            })
        })
        .collect()
}

/// The quietest of the cores watched: the last of those within
/// `QUIET_MARGIN` (0.10) of the least busy.
pub fn quietest(loads: &[CoreLoad]) -> Option<usize> {
    let least = loads
        .iter()
        .map(|l| l.busy_pct)
        .fold(f64::INFINITY, f64::min);
    loads
        .iter()
        .filter(|l| l.busy_pct <= least + QUIET_MARGIN * 100.0)
        .map(|l| l.core)
        .next_back()
}

/// Why the quietest core was chosen, in words: `the quietest: core 0 5%
/// busy, core 1 80% busy`.
pub fn why_quietest(loads: &[CoreLoad]) -> String {
    format!("the quietest: {}", describe(loads))
}

/// Each core's load in words: `core 0 5% busy, core 1 80% busy`.
pub fn describe(loads: &[CoreLoad]) -> String {
    let each: Vec<String> = loads
        .iter()
        .map(|l| format!("core {} {:.0}% busy", l.core, l.busy_pct))
        .collect();
    each.join(", ")
}

/// Whether a run measured on `measuring` (when pinned) shares the machine
/// with other work: that core busy, or every core busy.
pub fn busy_machine(loads: &[CoreLoad], measuring: Option<usize>) -> bool {
    let core_busy = measuring
        .and_then(|m| loads.iter().find(|l| l.core == m))
        .is_some_and(CoreLoad::is_busy);
    let all_busy = !loads.is_empty() && loads.iter().all(CoreLoad::is_busy);
    core_busy || all_busy
}

/// Per core: (total, idle + iowait) jiffies so far.
fn cpu_times() -> Option<HashMap<usize, (u64, u64)>> {
    let stat = crate::util::fs::read_system_text("/proc/stat")?;
    Some(parse_stat(&stat))
}

/// The per-core lines of `/proc/stat`: user nice system idle iowait irq
/// softirq steal (guest time is already in user).
fn parse_stat(stat: &str) -> HashMap<usize, (u64, u64)> {
    let mut times = HashMap::new();
    for line in stat.lines() {
        let Some(rest) = line.strip_prefix("cpu") else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let Some(Ok(core)) = fields.next().map(str::parse::<usize>) else {
            continue;
        };
        let values: Vec<u64> = fields.filter_map(|f| f.parse().ok()).collect();
        if values.len() < 5 {
            continue;
        }
        let total: u64 = values.iter().take(8).sum();
        times.insert(core, (total, values[3] + values[4]));
    }
    times
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_shares_come_from_the_difference_of_two_readings() {
        let before =
            parse_stat("cpu  10 0 10 100 0 0 0 0\ncpu0 5 0 5 50 0 0 0 0\ncpu1 5 0 5 50 0 0 0 0\n");
        let after = parse_stat("cpu0 105 0 5 50 0 0 0 0\ncpu1 10 0 10 140 0 0 0 0\n");
        let loads = loads(&[0, 1, 2], &before, &after);
        assert_eq!(loads.len(), 2, "core 2 is not in /proc/stat");
        assert_eq!(loads[0].busy_pct, 100.0);
        assert_eq!(loads[1].busy_pct, 10.0);
        assert!(loads[0].is_busy() && !loads[1].is_busy());
    }

    #[test]
    fn a_machine_is_busy_when_its_measuring_core_or_every_core_is() {
        let load = |core, busy_pct| CoreLoad { core, busy_pct };
        let one_busy = [load(0, 100.0), load(1, 5.0)];
        assert!(busy_machine(&one_busy, Some(0)));
        assert!(!busy_machine(&one_busy, Some(1)));
        assert!(!busy_machine(&one_busy, None));
        assert!(busy_machine(&[load(0, 90.0), load(1, 60.0)], None));
        assert!(!busy_machine(&[], Some(0)));
    }
}
