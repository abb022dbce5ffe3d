//! The cells of a result row as every human-readable output shows them (the
//! terminal table, Markdown, HTML): the time in a unit that fits, err%, the
//! interval, the rate, the count, and the plain-words lines under a row.

use crate::guest::program::TimedRegion;
use crate::output::units::{format_count, format_ns, format_ns_in, format_rate, unit_for};
use crate::results::{BenchResult, CallgrindCounts, Figures, HardwareCounts, Phases};

/// The display cells of a measured row, as the terminal table shows them:
/// median and interval in one unit, err%, rate.
pub struct Cells {
    /// The median per-op time.
    pub time: String,
    /// err%.
    pub err: String,
    /// The 95% interval.
    pub ci: String,
    /// ops/s, or `-` when it cannot be told apart from the empty guest.
    pub rate: String,
    /// Operations per sample.
    pub count: String,
}

impl Cells {
    pub fn of(f: &Figures) -> Self {
        let ns = &f.ns_per_op;
        let unit = unit_for(&[ns.median, ns.ci95_low, ns.ci95_high]);
        Cells {
            time: format_ns_in(ns.median, unit),
            err: format!("±{:.1}%", f.err_pct.min(999.9)),
            ci: format!(
                "[{}, {}]",
                format_ns_in(ns.ci95_low, unit),
                format_ns_in(ns.ci95_high, unit)
            ),
            rate: match f.indistinguishable_from_empty {
                true => "-".to_string(),
                false => format_rate(f.ops_per_sec.unwrap_or(0.0)),
            },
            count: format_count(f.count),
        }
    }
}

/// The plain-words lines under a measured row, as the terminal prints them:
/// program phases, instructions, notes, the baseline comparison.
pub fn row_notes(r: &BenchResult) -> Vec<String> {
    let mut notes = Vec::new();
    let Some(f) = &r.figures else {
        return notes;
    };
    if let Some(p) = &f.phases {
        notes.push(phases_line(p));
    }
    if let Some(fuel) = f.fuel_per_op {
        notes.push(format!("instructions: {fuel:.2} per op"));
    }
    if let Some(c) = &f.callgrind {
        notes.push(callgrind_line(c));
    }
    if let Some(h) = &f.hardware_counters {
        notes.push(counters_line(h));
    }
    notes.extend(f.notes.iter().cloned());
    notes.extend(f.info.iter().cloned());
    if let Some(b) = &r.baseline {
        let flag = if b.regression { " (regression)" } else { "" };
        notes.push(format!(
            "vs baseline `{}` ({}): {}{flag}",
            b.name, b.metric, b.text
        ));
    }
    notes
}

/// A ratio for display, e.g. `1.234×`.
pub fn format_ratio(ratio: f64) -> String {
    if ratio.is_finite() {
        format!("{ratio:.3}×")
    } else {
        "-".to_string()
    }
}

/// The phases of a program on one line.
pub fn phases_line(p: &Phases) -> String {
    let region = match p.timed_region {
        TimedRegion::StartToEnd => "bench.start..bench.end",
        TimedRegion::WholeStart => "whole _start",
        TimedRegion::WholeStartNoEnd => "whole _start, no bench.end",
    };
    format!(
        "phases: compile {:.2} ms · instantiate {} · execute {} ({region}), medians of {} samples",
        p.compile_ms,
        format_ns(p.instantiate_ns.median),
        format_ns(p.execute_ns.median),
        p.execute_ns.samples
    )
}

/// The hardware counters on one line.
pub fn counters_line(h: &HardwareCounts) -> String {
    format!(
        "hardware counters: {:.2} instructions per op · {:.2} cycles · {:.2} instructions per cycle (median of {} pairs)",
        h.instructions,
        h.cycles,
        h.instructions / h.cycles,
        h.pairs
    )
}

/// Callgrind's counts on one line.
pub fn callgrind_line(c: &CallgrindCounts) -> String {
    format!(
        "callgrind: {:.2} cycles-est per op · {:.2} instructions · {:.3} L1 misses · {:.3} LL misses · {:.3} mispredictions",
        c.cycles_est, c.instructions, c.l1_misses, c.ll_misses, c.branch_mispredictions
    )
}
