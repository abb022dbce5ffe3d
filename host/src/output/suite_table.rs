//! The terminal report of a suite's comparison: a line on where it ran, one
//! verdict line per benchmark (and side, when more than two are compared)
//! sorted by effect, the largest slowdown first, then the benchmarks'
//! notes (an error, a later worker's failure, an engine that cannot run
//! it, why it is not judged: [`NOTES`], which every format writes in one
//! order), the sides left out and the names that could not be paired, then
//! the summary ("2 faster, 1 slower, 7 the same; geometric mean 0.973×
//! [0.968×, 0.978×] (95%)") and, when the sides are engines, the runtime
//! view. This module formats; it computes no statistics. Every name (a
//! benchmark, a side, a path, an error) is outside text, escaped for the
//! terminal.

use std::io::{self, Write};

use anstyle::{AnsiColor, Style};

use crate::analysis::drift::MIN_RUNS;
use crate::output::cells::format_ratios;
use crate::output::escape::terminal;
use crate::output::units::format_seconds;
use crate::results::{
    BetweenRuns, Comparison, Foreign, SideSpread, SuiteBenchmark, SuiteComparison, SuiteVerdicts,
    Verdict,
};

const ERROR: Style = AnsiColor::Red.on_default().bold();
const DIM: Style = Style::new().dimmed();

/// The colour of a verdict word, as the comparison's table gives it.
fn verdict_style(verdict: Verdict) -> Style {
    match verdict {
        Verdict::Faster => AnsiColor::Green.on_default().bold(),
        Verdict::Slower => AnsiColor::Red.on_default().bold(),
        Verdict::Same => AnsiColor::Cyan.on_default(),
        Verdict::Unsure => AnsiColor::Yellow.on_default(),
    }
}

/// One benchmark's comparison of one side, to sort and print.
pub struct Line<'a> {
    pub benchmark: &'a Foreign,
    pub comparison: &'a Comparison,
    /// The side compared with the reference.
    pub side: Option<&'a Foreign>,
    /// Whether it is judged on one worker process
    /// ([`SuiteBenchmark::one_process`]).
    pub one_process: bool,
}

/// What a line judged on one process says after its interval.
pub const ONE_PROCESS: &str = "from 1 process";

/// Every verdict of `report`, the largest slowdown first (ratios that are
/// not numbers last).
pub fn sorted_lines(report: &SuiteComparison) -> Vec<Line<'_>> {
    let mut lines: Vec<Line<'_>> = report
        .benchmarks
        .iter()
        .flat_map(|b| {
            b.compared(&report.sides).map(|(k, c)| Line {
                benchmark: &b.name,
                comparison: c,
                side: report.sides.get(k),
                one_process: b.one_process(),
            })
        })
        .collect();
    lines.sort_by(|a, b| {
        let (x, y) = (a.comparison.ratio.value, b.comparison.ratio.value);
        match (x.is_nan(), y.is_nan()) {
            (false, false) => y.total_cmp(&x),
            (nan_x, nan_y) => nan_x.cmp(&nan_y),
        }
        .then_with(|| a.benchmark.cmp(b.benchmark))
    });
    lines
}

/// What a side left out of a benchmark's comparison is, before why.
pub fn left_out_words(unsupported: bool) -> &'static str {
    match unsupported {
        true => "unsupported, left out: ",
        false => "failed, left out: ",
    }
}

/// What a benchmark a later worker failed on is, before why.
pub const FAILED_LATER: &str = "a later worker failed, figures from the workers before it: ";

/// A kind of text a benchmark may have on a line of its own, in place
/// of its verdicts or beside them: its error, a later worker's failure,
/// why an engine cannot run it, why it is not judged. Every format writes
/// these from [`NOTES`], in its order.
pub struct Note {
    /// The benchmark's text of this kind, if it has one.
    pub text: fn(&SuiteBenchmark) -> Option<&Foreign>,
    /// Whether it is a failure of the run (styled as an error) or not.
    pub failed: bool,
    /// The words before the text on its line.
    pub words: &'static str,
    /// The kind in one word, for a CSV record's `verdict`.
    pub kind: &'static str,
}

/// The kinds of [`Note`], in the order their lines are written.
pub const NOTES: [Note; 4] = [
    Note {
        text: |b| b.error.as_ref(),
        failed: true,
        words: "error: ",
        kind: "error",
    },
    Note {
        text: |b| b.failed_later.as_ref(),
        failed: true,
        words: FAILED_LATER,
        kind: "failed later",
    },
    Note {
        text: |b| b.unsupported.as_ref(),
        failed: false,
        words: "unsupported: ",
        kind: "unsupported",
    },
    Note {
        text: |b| b.not_judged.as_ref(),
        failed: false,
        words: "not judged: ",
        kind: "not judged",
    },
];

/// Every benchmark's notes in the order they are written: by kind, as
/// [`NOTES`] lists them, then in the suite's order.
pub fn notes(
    report: &SuiteComparison,
) -> impl Iterator<Item = (&SuiteBenchmark, &'static Note, &Foreign)> {
    NOTES.iter().flat_map(move |note| {
        (report.benchmarks.iter()).filter_map(move |b| Some((b, note, (note.text)(b)?)))
    })
}

/// The word of a side left out, as a CSV record's `verdict`.
pub fn left_out_kind(unsupported: bool) -> &'static str {
    match unsupported {
        true => "unsupported",
        false => "failed",
    }
}

/// A line's style: an error's for a failure of the run, dim otherwise.
fn note_style(failed: bool) -> Style {
    match failed {
        true => ERROR,
        false => DIM,
    }
}

/// The report of a suite's comparison on `out`.
pub fn suite_table(out: &mut dyn Write, report: &SuiteComparison) -> io::Result<()> {
    heading(out, report)?;
    let several = report.sides.len() > 2;
    let width = report
        .benchmarks
        .iter()
        .map(|b| &b.name)
        .chain(report.unpaired.iter().map(|u| &u.name))
        .map(|n| terminal(n).chars().count())
        .max()
        .unwrap_or(0)
        .clamp(9, 60);
    writeln!(out)?;
    for line in sorted_lines(report) {
        let c = line.comparison;
        let [ratio, low, high] = format_ratios(c.ratio.value, c.ratio.low, c.ratio.high);
        let style = verdict_style(c.verdict);
        let side = match several {
            true => format!("  {}", line.side.map_or("".into(), terminal)),
            false => String::new(),
        };
        let one = match line.one_process {
            true => format!("  {DIM}{ONE_PROCESS}{DIM:#}"),
            false => String::new(),
        };
        writeln!(
            out,
            "{:<width$}  {style}{:<7}{style:#} {ratio:>10} [{low}, {high}]{side}{one}",
            terminal(line.benchmark),
            c.verdict.to_string(),
        )?;
    }
    for (b, note, why) in notes(report) {
        let (name, why) = (terminal(&b.name), terminal(why));
        let (style, words) = (note_style(note.failed), note.words);
        writeln!(out, "{name:<width$}  {style}{words}{style:#}{why}")?;
    }
    for b in &report.benchmarks {
        for left in &b.left_out {
            let style = note_style(!left.unsupported);
            writeln!(
                out,
                "{:<width$}  {}  {style}{}{style:#}{}",
                terminal(&b.name),
                terminal(&left.side),
                left_out_words(left.unsupported),
                terminal(&left.why)
            )?;
        }
    }
    for u in &report.unpaired {
        writeln!(
            out,
            "{:<width$}  {DIM}only in {}: not compared{DIM:#}",
            terminal(&u.name),
            terminal(&Foreign::join(&u.found_in, ", "))
        )?;
    }
    writeln!(out)?;
    writeln!(out, "{}", summary_line(&report.summary, several))?;
    writeln!(out, "{}", time_line(report))?;
    if let Some(reason) = &report.stopped {
        writeln!(out, "stopped early: {}", terminal(reason))?;
    }
    if let Some(view) = &report.runtimes {
        writeln!(out)?;
        crate::output::runtime_table::write_view(out, view)?;
    }
    out.flush()
}

/// Where the suite ran and what it compares.
fn heading(out: &mut dyn Write, report: &SuiteComparison) -> io::Result<()> {
    if let Some(env) = &report.environment {
        let core = match env.pinned_core {
            Some(c) => format!("pinned to core {c}"),
            None => "not pinned".to_string(),
        };
        writeln!(
            out,
            "{} {} · {} · {} cores · {core} · {}",
            terminal(&report.tool.name),
            terminal(&report.tool.version),
            env.cpu_model
                .as_ref()
                .map_or("unknown CPU".into(), terminal),
            env.cores,
            terminal(&env.priority)
        )?;
        if let Some(busy) = crate::output::table::busy_line(env) {
            writeln!(out, "{busy}")?;
        }
    }
    let busy = report
        .benchmarks
        .iter()
        .filter(|b| {
            b.report
                .as_ref()
                .is_some_and(|r| r.environment.busy_machine)
        })
        .count();
    if busy > 0 {
        writeln!(
            out,
            "busy machine: {busy} of {} benchmarks were compared on a busy machine: their verdicts may not repeat",
            report.benchmarks.len()
        )?;
    }
    writeln!(
        out,
        "{} benchmarks across {}, each against `{}`; {}",
        report.benchmarks.len(),
        terminal(&Foreign::join(&report.sides, ", ")),
        terminal(&report.reference),
        report.noise_band()
    )?;
    writeln!(
        out,
        "ratio: median of the paired rounds' per-op minima, side / reference, with its 95% interval; largest slowdown first"
    )
}

/// How long the suite took, against its `--suite-time`, and the
/// benchmarks whose time ran out before their verdicts settled.
fn time_line(report: &SuiteComparison) -> String {
    let took = format_seconds(report.elapsed_ms);
    let mut line = match report.suite_time_ms {
        Some(budget) => format!(
            "took {took} of --suite-time {}",
            humantime::format_duration(std::time::Duration::from_secs_f64(budget / 1e3))
        ),
        None => format!("took {took}"),
    };
    let further = report.benchmarks.iter().filter(|b| b.passes > 1).count();
    if further > 0 {
        line.push_str(&format!(
            "; {further} taken further in a second pass, with the time the first left"
        ));
    }
    let capped: Vec<String> = report
        .benchmarks
        .iter()
        .filter(|b| b.capped())
        .map(|b| terminal(&b.name).into_owned())
        .collect();
    if !capped.is_empty() {
        line.push_str(&format!(
            "; {} stopped at their time before their verdicts settled (more --suite-time or --time may settle them): {}",
            capped.len(),
            capped.join(", ")
        ));
    }
    let estimated: Vec<f64> = (report.benchmarks.iter())
        .filter(|b| b.capped())
        .filter_map(|b| b.judged()?.to_certain_ms)
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
        .collect();
    if !estimated.is_empty() {
        line.push_str(&format!(
            "; about {} more would make {} of them certain, were their rounds to come as they have",
            format_seconds(estimated.iter().sum()),
            estimated.len()
        ));
    }
    line
}

/// The summary on one line: the verdicts counted, failures, and each
/// side's geometric mean ratio with its interval (named when `several`
/// sides are compared with the reference).
pub fn summary_line(summary: &SuiteVerdicts, several: bool) -> String {
    let mut line = format!(
        "{} faster, {} slower, {} the same",
        summary.faster, summary.slower, summary.same
    );
    if summary.unsure > 0 {
        line.push_str(&format!(", {} unsure", summary.unsure));
    }
    if summary.failed > 0 {
        line.push_str(&format!(", {} failed", summary.failed));
    }
    if summary.unsupported > 0 {
        line.push_str(&format!(", {} unsupported", summary.unsupported));
    }
    for (sides, what) in [
        (summary.sides_failed, "failed"),
        (summary.sides_unsupported, "unsupported"),
    ] {
        if sides > 0 {
            let plural = if sides == 1 { "" } else { "s" };
            line.push_str(&format!(", {sides} side{plural} {what} and left out"));
        }
    }
    if summary.failed_later > 0 {
        line.push_str(&format!(
            ", {} failed in a later worker (the figures before it kept)",
            summary.failed_later
        ));
    }
    if summary.one_process > 0 {
        let how = widened(&summary.spreads);
        line.push_str(&format!(", {} {ONE_PROCESS} ({how})", summary.one_process));
    }
    if summary.few_rounds > 0 {
        let how = moderated(&summary.round_spreads);
        line.push_str(&format!(", {} {FEW_ROUNDS} ({how})", summary.few_rounds));
    }
    if summary.not_judged > 0 {
        line.push_str(&format!(", {} not judged", summary.not_judged));
    }
    if summary.unpaired > 0 {
        line.push_str(&format!(", {} not paired", summary.unpaired));
    }
    for g in &summary.geometric_means {
        let [ratio, low, high] = format_ratios(g.ratio.value, g.ratio.low, g.ratio.high);
        let whose = match several {
            true => format!(" of `{}`", terminal(&g.side)),
            false => String::new(),
        };
        line.push_str(&format!(
            "; geometric mean{whose} {ratio} [{low}, {high}] ({:.0}%, {} benchmark{})",
            g.confidence * 100.0,
            g.benchmarks,
            if g.benchmarks == 1 { "" } else { "s" }
        ));
        if let Some(between) = &g.between_runs {
            line.push_str(&between_runs(between));
        }
    }
    line
}

/// A geometric mean against the earlier runs of its suite: where a later
/// run's may land, or how many earlier runs there are while too few tell.
fn between_runs(between: &BetweenRuns) -> String {
    let runs = between.earlier_runs;
    let plural = if runs == 1 { "" } else { "s" };
    let (Some(later), Some(drift)) = (between.later_run, between.drift_pct) else {
        return format!(
            ", an interval of this run alone ({runs} earlier run{plural} of this suite kept; {MIN_RUNS} tell how far it moves between runs)"
        );
    };
    let [_, low, high] = format_ratios(later.value, later.low, later.high);
    let mut text = format!(
        ", a later run's within [{low}, {high}] (it moved {drift:.1}% between {runs} earlier runs"
    );
    if let (true, Some(median)) = (between.departed, between.earlier_median) {
        let [median, ..] = format_ratios(median, median, median);
        text.push_str(&format!("; this run departs from their {median}"));
    }
    text.push(')');
    text
}

/// How the intervals of one process were widened: by each side's spread
/// ([`SideSpread`]; one taken from every side's says so), or not at all.
fn widened(spreads: &[SideSpread]) -> String {
    match spreads {
        [] => "intervals that cannot see how far processes part".to_string(),
        [one] => format!(
            "intervals widened by the {} processes part in this suite",
            percent(one)
        ),
        several => format!(
            "intervals widened by how far each side's processes part in this suite: {}",
            each_side(several)
        ),
    }
}

/// What a summary says of the benchmarks on too few rounds for the sign
/// test.
pub const FEW_ROUNDS: &str = "on too few rounds for the sign test";

/// Where the intervals on too few rounds come from: their own rounds'
/// spread moderated by how far each side's such rounds part
/// ([`SideSpread`]), or their own rounds alone.
fn moderated(spreads: &[SideSpread]) -> String {
    match spreads {
        [] => "intervals from their own rounds alone".to_string(),
        [one] => format!(
            "their rounds' spread moderated by the {} such rounds part in this suite",
            percent(one)
        ),
        several => format!(
            "their rounds' spread moderated by how far each side's such rounds part in this suite: {}",
            each_side(several)
        ),
    }
}

/// A spread in percent.
fn percent(spread: &SideSpread) -> String {
    format!("{:.1}%", spread.pct)
}

/// Each side's spread, one taken from every side's saying so.
fn each_side(spreads: &[SideSpread]) -> String {
    let each: Vec<String> = (spreads.iter())
        .map(|s| match s.own {
            true => format!("`{}` {}", terminal(&s.side), percent(s)),
            false => format!("`{}` {} (every side's)", terminal(&s.side), percent(s)),
        })
        .collect();
    each.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures;
    use crate::results::{Ratio, SuiteBenchmark, SuiteRatio};

    /// A suite under `--suite-time` of one benchmark per `(name, capped,
    /// to_certain_ms)`.
    fn budgeted(benchmarks: &[(&str, bool, Option<f64>)]) -> SuiteComparison {
        let benchmark = |&(name, capped, to_certain_ms): &(&str, bool, Option<f64>)| {
            let report = fixtures::compare_report();
            SuiteBenchmark {
                name: name.into(),
                paths: vec![name.into()],
                error: None,
                unsupported: None,
                not_judged: None,
                report: Some(crate::results::CompareReport {
                    capped,
                    to_certain_ms,
                    ..report
                }),
                elapsed_ms: 1.0,
                passes: 1,
                left_out: Vec::new(),
                failed_later: None,
                widened_pct: Vec::new(),
            }
        };
        SuiteComparison {
            tool: crate::results::Tool::this(),
            environment: None,
            sides: vec!["a".into(), "b".into()],
            reference: "a".into(),
            noise_pct: 1.0,
            benchmarks: benchmarks.iter().map(benchmark).collect(),
            unpaired: Vec::new(),
            summary: SuiteVerdicts::default(),
            stopped: None,
            runtimes: None,
            elapsed_ms: 290_400.0,
            suite_time_ms: Some(290_000.0),
        }
    }

    /// The time line names the benchmarks stopped unsettled, and adds up
    /// what their rounds' spread says more time would take (none that is
    /// not a time, nor a benchmark that settled).
    #[test]
    fn the_time_line_says_how_much_more_would_settle_what_stopped() {
        let suite = budgeted(&[
            ("long", true, Some(8_600.0)),
            ("noisy", true, Some(3_500.0)),
            ("close", true, None),
            ("crafted", true, Some(f64::NAN)),
            ("settled", false, Some(60_000.0)),
        ]);
        let line = time_line(&suite);
        assert!(
            line.starts_with("took 4m 50s of --suite-time 4m 50s"),
            "{line}"
        );
        assert!(
            line.contains("4 stopped at their time before their verdicts settled (more --suite-time or --time may settle them): long, noisy, close, crafted"),
            "{line}"
        );
        assert!(
            line.ends_with("; about 12.1s more would make 2 of them certain, were their rounds to come as they have"),
            "{line}"
        );
        let none = budgeted(&[("close", true, None)]);
        assert!(!time_line(&none).contains("more would make"));
    }

    /// A verdict judged on one worker process says so after its
    /// interval, in the terminal and in the Markdown table's interval; one
    /// of more processes does not.
    #[test]
    fn a_verdict_from_one_process_says_so() {
        let mut suite = budgeted(&[("long", false, None)]);
        let lines = |suite: &SuiteComparison| {
            let mut out = Vec::new();
            suite_table(&mut out, suite).expect("writes");
            String::from_utf8(out).expect("text")
        };
        let one = lines(&suite);
        let slower = one.lines().find(|l| l.contains("slower")).unwrap_or("");
        assert!(
            slower.ends_with(&format!("{DIM}{ONE_PROCESS}{DIM:#}")),
            "{one}"
        );
        let markdown = crate::output::export::suite::markdown_suite(&suite);
        assert!(markdown.contains("(95.0%, from 1 process)"), "{markdown}");
        let variants = suite
            .benchmarks
            .iter_mut()
            .filter_map(|b| b.report.as_mut());
        for v in variants.flat_map(|r| &mut r.variants) {
            if let Some(figures) = v.figures.as_mut() {
                figures.processes.processes = 3;
            }
        }
        assert!(!lines(&suite).contains(ONE_PROCESS), "{}", lines(&suite));
    }

    #[test]
    fn the_summary_names_counts_and_the_geometric_mean() {
        let summary = SuiteVerdicts {
            faster: 12,
            slower: 3,
            same: 107,
            unsure: 0,
            failed: 1,
            unsupported: 2,
            sides_unsupported: 0,
            sides_failed: 0,
            failed_later: 0,
            capped: 0,
            one_process: 0,
            spreads: Vec::new(),
            few_rounds: 0,
            round_spreads: Vec::new(),
            not_judged: 0,
            unpaired: 0,
            geometric_means: vec![SuiteRatio {
                side: "winch".into(),
                reference: "cranelift".into(),
                benchmarks: 122,
                ratio: Ratio {
                    value: 0.973,
                    low: 0.968,
                    high: 0.978,
                },
                confidence: 0.95,
                between_runs: None,
            }],
        };
        assert_eq!(
            summary_line(&summary, false),
            "12 faster, 3 slower, 107 the same, 1 failed, 2 unsupported; geometric mean 0.973× [0.968×, 0.978×] (95%, 122 benchmarks)"
        );
        assert!(summary_line(&summary, true).contains("geometric mean of `winch` 0.973×"));
        let left_out = SuiteVerdicts {
            sides_failed: 11,
            sides_unsupported: 1,
            ..summary
        };
        assert!(
            summary_line(&left_out, true).contains(
                "2 unsupported, 11 sides failed and left out, 1 side unsupported and left out;"
            ),
            "{}",
            summary_line(&left_out, true)
        );
        let later = SuiteVerdicts {
            failed_later: 2,
            one_process: 3,
            ..left_out
        };
        assert!(
            summary_line(&later, true)
                .contains("and left out, 2 failed in a later worker (the figures before it kept), 3 from 1 process (intervals that cannot see how far processes part);"),
            "{}",
            summary_line(&later, true)
        );
        let spread = |side: &str, pct, own| SideSpread {
            side: side.into(),
            pct,
            own,
        };
        let widened = SuiteVerdicts {
            spreads: vec![spread("winch", 5.74, true)],
            ..later.clone()
        };
        assert!(
            summary_line(&widened, true).contains(
                ", 3 from 1 process (intervals widened by the 5.7% processes part in this suite);"
            ),
            "{}",
            summary_line(&widened, true)
        );
        let sides = SuiteVerdicts {
            spreads: vec![spread("wasmer", 2.04, true), spread("v8", 6.3, false)],
            ..later
        };
        assert!(
            summary_line(&sides, true).contains(
                ", 3 from 1 process (intervals widened by how far each side's processes part in this suite: `wasmer` 2.0%, `v8` 6.3% (every side's));"
            ),
            "{}",
            summary_line(&sides, true)
        );
        let few = SuiteVerdicts {
            few_rounds: 2,
            round_spreads: vec![spread("winch", 9.94, true)],
            ..widened
        };
        assert!(
            summary_line(&few, true).contains(
                ", 2 on too few rounds for the sign test (their rounds' spread moderated by the 9.9% such rounds part in this suite);"
            ),
            "{}",
            summary_line(&few, true)
        );
    }
}
