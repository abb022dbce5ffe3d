//! The HTML page of a suite's comparison: where it ran, the summary, a
//! forest plot of the per-benchmark ratios (a row per benchmark and side:
//! a dot at the ratio, a bar for its interval, on a log scale with a line
//! at 1 and the noise band shaded; the geometric means below), and the
//! table of verdicts, failures, benchmarks not judged and names not
//! paired.
//! The plot is [`forest::forest_svg`]'s.

use std::fmt::Write;

use super::forest;
use super::palette::{FASTER, SAME, SEVERE, UNSURE, hex};
use super::{HEAD, STYLE, escape, finish, start};
use crate::output::suite_table::{Line, sorted_lines, summary_line};
use crate::output::tables;
use crate::results::{Foreign, SuiteComparison, Verdict};

/// A suite's comparison as one HTML page.
pub fn html_suite(report: &SuiteComparison) -> String {
    let title = "wasm-bench compare (suite)";
    let mut page = match &report.environment {
        Some(env) => start(title, &report.tool, env, &[]),
        None => format!(
            "{}</header>\n",
            HEAD.replace("{title}", title).replace("{style}", STYLE)
        ),
    };
    let _ = writeln!(
        page,
        "<h2>Verdicts</h2>\n<p>{} benchmarks across {}, each against <b>{}</b>; {}. Ratio: median of the paired rounds' per-op minima, side / reference, with its interval (95%, or Bonferroni's with more sides); the suite's geometric mean assumes the benchmarks independent.</p>\n<p class=\"summary\">{}</p>",
        report.benchmarks.len(),
        escape(&Foreign::join(&report.sides, ", ")),
        escape(&report.reference),
        report.noise_band(),
        escape(&summary_line(&report.summary, report.sides.len() > 2))
    );
    if let Some(reason) = &report.stopped {
        let _ = writeln!(
            page,
            "<p class=\"warn\">Stopped early: {}</p>",
            escape(reason)
        );
    }
    let lines = sorted_lines(report);
    if !lines.is_empty() {
        let _ = writeln!(
            page,
            "<figure class=\"plot forest\">\n<figcaption>Each benchmark's ratio to <b>{}</b> (dot) with its interval (bar), the largest slowdown first, on a log scale; the shaded band is the {}; the geometric means at the foot.</figcaption>",
            escape(&report.reference),
            report.noise_band()
        );
        page.push_str(&suite_forest(report, &lines));
        page.push_str("</figure>\n");
    }
    super::render(&mut page, &tables::suite(report, &lines));
    if let Some(view) = &report.runtimes {
        super::runtimes::runtimes_section(&mut page, view);
    }
    finish(page, &report.tool)
}

/// The colour of a verdict's dot and bar.
fn colour(verdict: Verdict) -> String {
    hex(match verdict {
        Verdict::Faster => FASTER,
        Verdict::Slower => SEVERE,
        Verdict::Same => SAME,
        Verdict::Unsure => UNSURE,
    })
}

/// The forest plot: a row per line, then a row per geometric mean.
fn suite_forest(report: &SuiteComparison, lines: &[Line<'_>]) -> String {
    let half = report.noise_band().half();
    let band = (1.0 / (1.0 + half), 1.0 + half);
    let mut rows: Vec<forest::Line> = lines
        .iter()
        .map(|line| forest::Line {
            label: match (report.sides.len() > 2, line.side) {
                (true, Some(side)) => Foreign::join([line.benchmark, side], " · "),
                _ => line.benchmark.clone(),
            },
            ratio: line.comparison.ratio,
            colour: colour(line.comparison.verdict),
            mean: false,
        })
        .collect();
    rows.extend(report.summary.geometric_means.iter().map(|g| forest::Line {
        label: g.side.after("geometric mean · "),
        ratio: g.ratio,
        colour: "#000000".to_string(),
        mean: true,
    }));
    forest::forest_svg(&rows, Some(band), &report.reference)
}
