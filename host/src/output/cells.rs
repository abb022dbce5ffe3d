//! The cells of a result row as every human-readable output shows them (the
//! terminal table, Markdown, HTML): the time in a unit that fits, err%, the
//! interval, the rate, the count, and the plain-words lines under a row,
//! among them the words of every [`Note`].

use std::fmt;

use crate::guest::program::TimedRegion;
use crate::guest::runtime::wasmtime::cache::CacheOutcome;
use crate::options::Headline;
use crate::output::units::{
    decimals_apart, format_count, format_err_pct, format_interval_in, format_ns, format_rate,
    unit_for,
};
use crate::results::notes::{Note, Undisturbed, Widened};
use crate::results::{
    BaselineComparison, BenchResult, CallgrindCounts, Costs, Durations, Figures, Foreign,
    HardwareCounts, Phases, ProcessGroup, Start, StartPhase, WarmupFigures,
};
use crate::util::bytes::format_bytes;

/// The display cells of a measured row, as the terminal table shows them:
/// median and interval in one unit with the digits that tell the ends
/// apart, err% with a significant digit, rate.
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
        let [time, low, high] = format_interval_in(ns.median, ns.ci95_low, ns.ci95_high, unit);
        Cells {
            time,
            err: format_err_pct(f.time.err_pct),
            ci: format!("[{low}, {high}]"),
            rate: match f.indistinguishable_from_empty {
                true => "-".to_string(),
                false => format_rate(f.time.ops_per_sec.unwrap_or(0.0)),
            },
            count: format_count(f.counts.count),
        }
    }
}

/// The plain-words lines under a measured row, as the terminal prints them:
/// program phases, instructions, notes, the baseline comparison. Outside
/// text as a whole (notes and the baseline quote names): each output
/// escapes them for its format.
pub fn row_notes(r: &BenchResult) -> Vec<Foreign> {
    let mut notes = Vec::new();
    let Some(f) = &r.figures else {
        return notes;
    };
    if let Some(p) = &f.phases {
        notes.push(Foreign::new(phases_line(p, &f.warmup)));
    }
    if let Some(fuel) = f.fuel_per_op {
        notes.push(Foreign::new(format!("instructions: {fuel:.2} per op")));
    }
    if let Some(c) = &f.callgrind {
        notes.push(Foreign::new(callgrind_line(c)));
    }
    if let Some(h) = &f.hardware_counters {
        notes.push(Foreign::new(counters_line(h)));
    }
    notes.extend(costs_line(&f.costs).map(Foreign::new));
    notes.extend(f.notes.iter().map(Note::words));
    notes.extend(f.info.iter().map(Note::words));
    if let Some(b) = &r.baseline {
        notes.push(baseline_line(b));
    }
    notes
}

/// A row against its baseline, in words: "vs baseline `main` (time): ...".
pub fn baseline_line(b: &BaselineComparison) -> Foreign {
    let flag = if b.regression { " (regression)" } else { "" };
    Foreign::compose([&b.name, &b.metric, &b.text], |[name, metric, text]| {
        format!("vs baseline `{name}` ({metric}): {text}{flag}")
    })
}

/// A ratio for display, e.g. `1.234×`.
pub fn format_ratio(ratio: f64) -> String {
    format_ratio_to(ratio, 3)
}

/// A ratio and its interval for display, `[value, low, high]`, with the
/// decimals from 3 up to 6 that tell the three apart, e.g. `1.4620×`,
/// `1.4624×`, `1.4790×`.
pub fn format_ratios(value: f64, low: f64, high: f64) -> [String; 3] {
    let decimals = decimals_apart(&[low, value, high], 3, 6);
    [value, low, high].map(|r| format_ratio_to(r, decimals))
}

fn format_ratio_to(ratio: f64, decimals: usize) -> String {
    if ratio.is_finite() {
        format!("{ratio:.decimals$}×")
    } else {
        "-".to_string()
    }
}

/// The phases of a program on one line, with how its warm-up ended.
pub fn phases_line(p: &Phases, warmup: &WarmupFigures) -> String {
    let region = match p.timed_region {
        TimedRegion::StartToEnd => "bench.start..bench.end",
        TimedRegion::WholeStart => "whole _start",
        TimedRegion::WholeStartNoEnd => "whole _start, no bench.end",
    };
    let ended = match warmup.warmup_settled {
        true => "settled",
        false => "stopped at the cap",
    };
    let warmed = match warmup.warmup_first_timed {
        0 => format!("warm-up {ended} after {} iterations", warmup.warmup_rounds),
        timed => format!(
            "{} warm-up iterations, the first timed in {timed} process(es)",
            warmup.warmup_rounds
        ),
    };
    format!(
        "phases: compile {:.2} ms · instantiate {} · execute {} ({region}), medians of {} samples · {warmed} (all processes)",
        p.compile_ms,
        format_ns(p.instantiate_ns.median),
        format_ns(p.execute_ns.median),
        p.execute_ns.samples,
    )
}

/// How a workload's fresh instances start, on one line: the compile (the
/// runtime's own, else the host's), or the load of the compiled code from
/// the cache, then the instantiation and the first call, each with its
/// interval.
pub fn start_line(start: &Start, durations: &Durations) -> String {
    let phase = |p: &StartPhase| {
        format!(
            "{} [{}, {}]",
            format_ns(p.median),
            format_ns(p.ci95_low),
            format_ns(p.ci95_high)
        )
    };
    format!(
        "start: {} {:.2} ms · instantiate {} · first call {}, medians of {} fresh instances",
        match durations.compile_cache {
            CacheOutcome::Hit => "load",
            _ => "compile",
        },
        durations.compile_ms,
        phase(&start.instantiate_ns),
        phase(&start.first_call_ns),
        start.instantiate_ns.samples
    )
}

/// What a row costs besides time, on one line (`costs: module 423 B ·
/// code 13.4 KiB · peak memory 1.0 MiB`), when anything is known.
pub fn costs_line(c: &Costs) -> Option<String> {
    let parts: Vec<String> = [
        ("module", c.module_bytes),
        ("code", c.code_bytes),
        ("peak memory", c.peak_memory_bytes),
        ("peak RSS", c.peak_rss_bytes),
    ]
    .into_iter()
    .filter_map(|(what, bytes)| Some(format!("{what} {}", format_bytes(bytes?))))
    .collect();
    (!parts.is_empty()).then(|| format!("costs: {}", parts.join(" · ")))
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

impl Note {
    /// The note in plain words, as the terminal, the exports and the JSON
    /// show it: outside text as a whole, since a note may quote a reason
    /// a file or a library gave (and a note read back is all words).
    pub fn words(&self) -> Foreign {
        match self {
            Note::CacheRefused { reason } => {
                return reason.map(|r| format!("cache entry refused ({r}): compiled again"));
            }
            Note::HardwareCountersUnavailable { why } => {
                return why.after("hardware counters: ");
            }
            Note::Text(words) => return words.clone(),
            _ => {}
        }
        Foreign::new(self.own_words())
    }

    /// The words of a note that quotes nothing from outside.
    fn own_words(&self) -> String {
        OwnWords(self).to_string()
    }
}

/// A note that quotes nothing from outside, written as words.
struct OwnWords<'a>(&'a Note);

impl fmt::Display for OwnWords<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Note::EmptyGuestIndistinguishable => {
                f.write_str("cannot be told apart from the empty guest")
            }
            Note::AtClockResolution { steps } => write!(
                f,
                "its timed region lasts {steps:.1} steps of the clock: its time is the clock's steps, left out of the geometric mean (time more work between bench.start and bench.end)"
            ),
            Note::ReachesZero => f.write_str(
                "the interval reaches down to 0: too wide to bound the time (scattered runs, or a large --drift)",
            ),
            Note::CountCapped { count } => write!(
                f,
                "time does not grow with the count (pilot stopped at {count}): the work may have been optimised away"
            ),
            Note::WarmupNotSettled { cap_ms } => {
                write!(f, "warm-up did not settle within {cap_ms:.0} ms")
            }
            Note::FirstIterationTimed { processes } => write!(
                f,
                "its first iteration was timed in {processes} process(es), not warmed up: one iteration outlasted the warm-up's time, and its runtime runs from the first call the code it runs later"
            ),
            Note::DepartsFromEarlierRuns { departure, runs } => write!(
                f,
                "{:+.2}% from the median of {runs} earlier run(s) of this benchmark, beyond this run's interval (the machine ran at another speed): the interval reaches back to them",
                departure * 100.0
            ),
            Note::BusyMachine => f.write_str(
                "the machine was busy before the run: results may not repeat; the interval spans its processes' medians",
            ),
            Note::SevereOutliers { severe, epochs } => write!(
                f,
                "{severe} of {epochs} epochs are severe outliers: the machine was busy"
            ),
            Note::TimedOverWholeStart => f.write_str(
                "calls neither bench.start nor bench.end: timed over the whole of _start",
            ),
            Note::TimedOverWholeStartNoEnd => f.write_str(
                "imports bench.start but not bench.end: timed over the whole of _start",
            ),
            Note::OutputChecked { files } => {
                write!(f, "output checked in every iteration against {}: it matched", files.join(", "))
            }
            Note::CacheHit { load_ms } => {
                write!(f, "compiled code loaded from the cache in {load_ms:.2} ms")
            }
            Note::OtherInterval {
                shown,
                low,
                high,
                why,
                bounded,
            } => other_interval(f, *shown, (*low, *high), why, *bounded),
            Note::TooFewEarlierRuns { runs, needed } => write!(
                f,
                "too few earlier runs of this benchmark to measure the drift between runs ({runs} kept today, {needed} needed): a later run's interval spans this run's processes"
            ),
            Note::ProcessesDisagree {
                low,
                high,
                processes,
                groups,
                runtime_varies,
            } => disagreement(f, (*low, *high), *processes, groups, *runtime_varies),
            Note::ErrBesideInterval {
                err_pct,
                below_pct,
                above_pct,
                processes,
            } => write!(
                f,
                "err% {} is the spread of epochs within each process; the interval reaches -{below_pct:.1}%/+{above_pct:.1}% because {}",
                format_err_pct(*err_pct),
                match processes {
                    true => "the processes disagree",
                    false => "a later run may land elsewhere",
                }
            ),
            Note::StandsOnUndisturbed(undisturbed) => undisturbed.fmt(f),
            Note::Pauses {
                per_sample,
                pair_ns,
            } => write!(
                f,
                "{per_sample} pause(s) per sample; {pair_ns:.1} ns subtracted per pause/resume pair"
            ),
            Note::CacheRefused { .. } | Note::HardwareCountersUnavailable { .. } | Note::Text(_) => {
                Ok(())
            }
        }
    }
}

/// The interval a row does not show (`low`, `high`), and why the two
/// differ.
fn other_interval(
    f: &mut fmt::Formatter<'_>,
    shown: Headline,
    (low, high): (f64, f64),
    why: &Widened,
    bounded: Option<(f64, f64)>,
) -> fmt::Result {
    let other = interval_words(low, high);
    match shown {
        Headline::LaterRun => write!(
            f,
            "{why}: the interval is where a later run may land; this run's processes alone give {other}"
        )?,
        Headline::ThisRun => write!(f, "{why}: a later run may land in {other}")?,
    }
    if let Some((low, high)) = bounded {
        write!(
            f,
            " (a later run's interval stops at {}, 10% beyond the fastest and slowest process measured today)",
            interval_words(low, high)
        )?;
    }
    Ok(())
}

/// That the processes disagree: their medians' range, their groups, and why
/// the runtime is known to differ between processes.
fn disagreement(
    f: &mut fmt::Formatter<'_>,
    (low, high): (f64, f64),
    processes: usize,
    groups: &[ProcessGroup],
    runtime_varies: Option<&str>,
) -> fmt::Result {
    write!(
        f,
        "processes disagree: {} over {processes} processes",
        range_words(low, high)
    )?;
    if !groups.is_empty() {
        let each: Vec<String> = groups
            .iter()
            .map(|g| format!("{} ({})", range_words(g.low_ns, g.high_ns), g.processes))
            .collect();
        write!(
            f,
            ", in {} groups: {}; the median depends on how many land in each",
            groups.len(),
            each.join(", ")
        )?;
    }
    f.write_str("; the interval is as wide as they disagree")?;
    match runtime_varies {
        Some(why) => write!(
            f,
            " ({why}: the median stands for these processes, not for one speed of the runtime)"
        ),
        None => Ok(()),
    }
}

/// What widened a later run's interval, in words.
impl fmt::Display for Widened {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut why = Vec::new();
        match self.drift {
            Some((rel_sd, runs, true)) => why.push(format!(
                "runs of this benchmark differed by {:.1}% today (sd over {runs} earlier runs)",
                rel_sd * 100.0
            )),
            Some((rel_sd, runs, false)) => why.push(format!(
                "runs measured the same way on this machine differed by {:.1}% today (sd of the median benchmark, {runs} earlier runs)",
                rel_sd * 100.0
            )),
            None => {}
        }
        if self.stated_pct > 0.0 {
            why.push(format!("--drift {}%", self.stated_pct));
        }
        if self.busy {
            why.push("the machine was busy".to_string());
        }
        if self.departed {
            why.push("this run departs from the earlier runs".to_string());
        }
        if self.unmeasured && !self.busy {
            why.push(
                "no drift between runs measured yet, so a later run's interval spans this run's processes"
                    .to_string(),
            );
        }
        match why.is_empty() {
            true => f.write_str("a later run may land elsewhere"),
            false => f.write_str(&why.join("; ")),
        }
    }
}

/// An interval `[low, high]` in ns, in a unit that fits both.
fn interval_words(low: f64, high: f64) -> String {
    let unit = unit_for(&[low, high]);
    let [_, low, high] = format_interval_in(low, low, high, unit);
    format!("[{low}, {high}]")
}

/// A range `low–high` in ns, in a unit that fits both.
fn range_words(low: f64, high: f64) -> String {
    let unit = unit_for(&[low, high]);
    let [_, low, high] = format_interval_in(low, low, high, unit);
    format!("{low}–{high}")
}

/// What a row that stands on its undisturbed epochs says of it: how many
/// it kept, how far above their median the median of every epoch lies,
/// and, when the core was watched, how many interruptions a sample
/// carries.
impl fmt::Display for Undisturbed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Undisturbed {
            kept,
            epochs,
            within_us,
            every_above_pct,
            sample_ns,
            interruptions_per_sample,
        } = self;
        write!(
            f,
            "the time is the median of the {kept} of {epochs} epochs within {within_us} µs per sample of their process's fastest, which neither an interruption nor a slower spell of the core reached; the median of every epoch is {every_above_pct:+.2}%"
        )?;
        if let Some(carried) = interruptions_per_sample {
            let span = match *sample_ns {
                ns if ns >= 1e6 => format!("{:.2} ms", ns / 1e6),
                ns if ns >= 1e3 => format!("{:.1} µs", ns / 1e3),
                ns => format!("{ns:.0} ns"),
            };
            write!(
                f,
                "; a sample of {span} carries about {carried:.2} of the measuring core's interruptions (watched before the run)"
            )?;
        }
        Ok(())
    }
}
