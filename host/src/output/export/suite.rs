//! The exports of a suite's comparison ([`SuiteComparison`]): JSON, and a
//! Markdown table and CSV records of every benchmark's verdicts (the HTML
//! page with its chart is [`crate::output::export::html::html_suite`]).

use std::fmt::Write;

use anyhow::{Result, bail};

use crate::options::{ExportFormat, Exports};
use crate::output::escape::{self, markdown_text as text};
use crate::output::export::csv::{Records, number};
use crate::output::export::html::html_suite;
use crate::output::export::{write_json, write_text};
use crate::output::suite_table::{NOTES, left_out_kind, sorted_lines, summary_line};
use crate::output::tables;
use crate::results::{Foreign, SuiteComparison};

/// Every export of a suite's comparison in `exports`.
pub fn write_suite_exports(exports: &Exports, report: &SuiteComparison) -> Result<()> {
    for (format, output) in exports.iter() {
        match format {
            ExportFormat::Json => write_json(report, output)?,
            ExportFormat::Markdown => write_text(&markdown_suite(report), output)?,
            ExportFormat::Csv => write_text(&csv_suite(report)?, output)?,
            ExportFormat::Html => write_text(&html_suite(report), output)?,
            ExportFormat::Dashboard | ExportFormat::Bencher => bail!(
                "{}: for `host run` reports only (it tracks each workload over time)",
                format.flag()
            ),
        }
    }
    Ok(())
}

/// Columns of [`csv_suite`].
const HEADER: [&str; 10] = [
    "benchmark",
    "side",
    "reference",
    "metric",
    "ratio",
    "ci95_low",
    "ci95_high",
    "confidence",
    "verdict",
    "error",
];

/// One record per judged benchmark and side after the first; one with
/// its kind in `verdict` and why in `error` per note of a benchmark (it
/// failed, a later worker failed on it, its records of verdicts kept, an
/// engine cannot run it, it was not judged: [`NOTES`]' kinds) and per
/// side left out (`failed` or `unsupported`).
pub fn csv_suite(report: &SuiteComparison) -> Result<String> {
    let mut out = Records::new(HEADER)?;
    let aside = |name: &Foreign, side: Option<&Foreign>, kind: &str, why: &Foreign| {
        let mut fields = vec![String::new(); HEADER.len()];
        fields[0] = escape::csv(name);
        if let Some(side) = side {
            fields[1] = escape::csv(side);
            fields[2] = escape::csv(&report.reference);
        }
        fields[HEADER.len() - 2] = kind.to_string();
        fields[HEADER.len() - 1] = escape::csv(why);
        fields
    };
    for b in &report.benchmarks {
        for note in &NOTES {
            if let Some(why) = (note.text)(b) {
                out.push(aside(&b.name, None, note.kind, why))?;
            }
        }
        for left in &b.left_out {
            let kind = left_out_kind(left.unsupported);
            out.push(aside(&b.name, Some(&left.side), kind, &left.why))?;
        }
        for (k, c) in b.compared(&report.sides) {
            out.push([
                escape::csv(&b.name),
                report.sides.get(k).map(escape::csv).unwrap_or_default(),
                escape::csv(&report.reference),
                escape::csv(&c.metric),
                number(c.ratio.value),
                number(c.ratio.low),
                number(c.ratio.high),
                number(c.confidence),
                c.verdict.to_string(),
                String::new(),
            ])?;
        }
    }
    out.finish()
}

/// A table of every benchmark's verdicts, the failures and the names not
/// paired below it, and the summary.
pub fn markdown_suite(report: &SuiteComparison) -> String {
    let mut out = format!(
        "{} benchmarks across {}, each against {}; {}.\n\n",
        report.benchmarks.len(),
        text(&Foreign::join(&report.sides, ", ")),
        text(&report.reference),
        report.noise_band()
    );
    let lines = sorted_lines(report);
    out.push_str(&super::markdown::render(&tables::suite(report, &lines)));
    if let Some(view) = &report.runtimes {
        out.push_str(&super::markdown::runtimes_table(view));
    }
    let several = report.sides.len() > 2;
    let _ = writeln!(out, "\n{}", text(&summary_line(&report.summary, several)));
    if let Some(reason) = &report.stopped {
        let _ = writeln!(out, "\nStopped early: {}.", text(reason));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures;
    use crate::output::suite_table::suite_table;
    use crate::results::{LeftOut, SuiteBenchmark, SuiteVerdicts, Tool};

    /// A suite of three engines with one benchmark of each note's kind,
    /// and a side left out as unsupported, each with its own words of why.
    fn noted() -> SuiteComparison {
        let benchmark = |name: &str| SuiteBenchmark {
            name: name.into(),
            paths: vec![name.into()],
            error: None,
            unsupported: None,
            not_judged: None,
            report: None,
            elapsed_ms: 1.0,
            passes: 1,
            left_out: Vec::new(),
            failed_later: None,
            widened_pct: Vec::new(),
        };
        let benchmarks = vec![
            SuiteBenchmark {
                left_out: vec![LeftOut {
                    side: "winch".into(),
                    why: "no simd".into(),
                    unsupported: true,
                }],
                ..benchmark("splay")
            },
            SuiteBenchmark {
                not_judged: Some("few steps".into()),
                report: Some(fixtures::compare_report()),
                ..benchmark("tiny")
            },
            SuiteBenchmark {
                unsupported: Some("no gc".into()),
                ..benchmark("gc")
            },
            SuiteBenchmark {
                failed_later: Some("too slow".into()),
                report: Some(fixtures::compare_report()),
                ..benchmark("later")
            },
            SuiteBenchmark {
                error: Some("boom".into()),
                ..benchmark("broken")
            },
        ];
        SuiteComparison {
            tool: Tool::this(),
            environment: None,
            sides: vec!["cranelift".into(), "winch".into(), "wasmi".into()],
            reference: "cranelift".into(),
            noise_pct: 1.0,
            benchmarks,
            unpaired: Vec::new(),
            summary: SuiteVerdicts::default(),
            stopped: None,
            runtimes: None,
            elapsed_ms: 1.0,
            suite_time_ms: None,
        }
    }

    /// Where each of `words` is in `text`, each after the one before.
    fn in_order(format: &str, text: &str, words: &[&str]) {
        let mut from = 0;
        for word in words {
            let at = text[from..].find(word);
            assert!(at.is_some(), "{format}: `{word}` after {from} in {text}");
            from += at.unwrap_or(0) + word.len();
        }
    }

    /// The terminal, Markdown and HTML write a line for every kind of note
    /// and for a side left out, in one order (by kind, as `NOTES` lists
    /// them, then the sides left out); the CSV has a record for each with
    /// its kind in `verdict` and why in `error`.
    #[test]
    fn every_format_writes_every_note_in_one_order() -> Result<()> {
        let report = noted();
        let why = ["boom", "too slow", "no gc", "few steps", "no simd"];
        let mut terminal = Vec::new();
        suite_table(&mut terminal, &report)?;
        in_order("terminal", &String::from_utf8(terminal)?, &why);
        in_order("markdown", &markdown_suite(&report), &why);
        in_order("html", &html_suite(&report), &why);
        let csv = csv_suite(&report)?;
        for record in [
            "splay,winch,cranelift,,,,,,unsupported,no simd\r\n",
            "tiny,,,,,,,,not judged,few steps\r\n",
            "gc,,,,,,,,unsupported,no gc\r\n",
            "later,,,,,,,,failed later,too slow\r\n",
            "broken,,,,,,,,error,boom\r\n",
        ] {
            assert!(csv.contains(record), "{record:?} in {csv:?}");
        }
        Ok(())
    }
}
