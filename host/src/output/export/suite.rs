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
use crate::output::suite_table::{sorted_lines, summary_line};
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
/// why in its `error` field per benchmark that failed, was not judged, or
/// a later worker failed on (its records of verdicts kept), and per side
/// left out.
pub fn csv_suite(report: &SuiteComparison) -> Result<String> {
    let mut out = Records::new(HEADER)?;
    for b in &report.benchmarks {
        let why = [&b.error, &b.not_judged, &b.failed_later];
        for why in why.into_iter().flatten() {
            let mut fields = vec![String::new(); HEADER.len()];
            fields[0] = escape::csv(&b.name);
            fields[HEADER.len() - 1] = escape::csv(why);
            out.push(fields)?;
        }
        for left in &b.left_out {
            let mut fields = vec![String::new(); HEADER.len()];
            fields[0] = escape::csv(&b.name);
            fields[1] = escape::csv(&left.side);
            fields[2] = escape::csv(&report.reference);
            fields[HEADER.len() - 1] = escape::csv(&left.why);
            out.push(fields)?;
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
