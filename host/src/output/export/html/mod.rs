//! One self-contained HTML page of a run or a comparison: the environment,
//! the results table, and inline SVG plots drawn with plotters: per measured
//! row the distribution of its samples (histogram, median, outliers), per
//! complexity fit the medians against size with the fitted curve, and for a
//! comparison the ratios with their intervals against the noise band.
//!
//! The page loads nothing: inline CSS, no script, no font, no image file. The
//! only URL in it is the SVG namespace (`xmlns`), which is a name, not a
//! resource.
//!
//! Here: the page and its sections, from `head.html`, `style.css` and
//! `foot.html` beside this file; `histogram` draws a row's samples,
//! `charts` the complexity fits and a comparison's ratios; `forest` a
//! forest plot of ratios, `suite` a suite's page, `runtimes` a run's
//! section across engines.

use std::fmt::Write;

use crate::output::cells::{Cells, row_notes};
use crate::output::escape::{html as escape, html_comment};
use crate::output::merged;
use crate::output::tables::{self, Align, Cell, Table};
use crate::output::units::format_ns;
use crate::results::{
    BenchResult, CompareReport, ComplexityResult, Environment, Foreign, MergedExport, RunReport,
    Tool, Verdict,
};

/// The page's style sheet.
const STYLE: &str = include_str!("style.css");
/// The start of the page, up to its header's title: `{title}` and `{style}`
/// are filled in.
const HEAD: &str = include_str!("head.html");
/// The end of the page: `{tool}` is filled in.
const FOOT: &str = include_str!("foot.html");

mod charts;
mod forest;
mod histogram;
mod history;
mod palette;
mod runtimes;
mod suite;
#[cfg(test)]
mod tests;

use charts::{complexity_svg, ratio_svg};
use histogram::{Distribution, histogram_svg};
pub use history::html_history;
use palette::{BAR, MAX_HISTOGRAM_SAMPLES, MEDIAN, MILD, Plot, SEVERE, hex};
pub use suite::html_suite;

/// The report of `host run` as one HTML page: environment, results table,
/// a histogram of the samples of every measured row, and a plot of every
/// complexity fit.
pub fn html_run(report: &RunReport) -> String {
    let mut page = start(
        "wasm-bench run",
        &report.tool,
        &report.environment,
        &report.merged_from,
    );
    if let Some(name) = &report.baseline {
        let _ = writeln!(
            page,
            "<p>Compared with baseline <b>{}</b>.</p>",
            escape(name)
        );
    }
    if let Some(path) = &report.saved_baseline {
        let _ = writeln!(page, "<p>Saved as baseline: {}</p>", escape(path));
    }
    if let Some(reason) = &report.stopped {
        let _ = writeln!(
            page,
            "<p class=\"warn\">Stopped early: {}</p>",
            escape(reason)
        );
    }
    page.push_str("<h2>Results</h2>\n");
    results_table(&mut page, &report.results);
    let failures = report.failures();
    let _ = writeln!(
        page,
        "<p>{} measured{}.</p>",
        report.results.len() - failures,
        match failures {
            0 => String::new(),
            n => format!(", {n} failed"),
        }
    );
    if let Some(view) = &report.runtimes {
        runtimes::runtimes_section(&mut page, view);
    }
    distributions(&mut page, &report.results);
    if !report.complexity.is_empty() {
        page.push_str("<h2>Complexity</h2>\n<p>Median time per op against size, and the best fit of least squares through the origin over O(1), O(log n), O(n), O(n log n), O(n²).</p>\n");
        for fit in &report.complexity {
            complexity_figure(&mut page, fit);
        }
    }
    finish(page, &report.tool)
}

/// The report of `host compare` as one HTML page: environment, the
/// variants' table, the verdicts with a chart of the ratios, and a histogram
/// of the samples of every variant.
pub fn html_compare(report: &CompareReport) -> String {
    let mut page = start("wasm-bench compare", &report.tool, &report.environment, &[]);
    page.push_str("<h2>Variants</h2>\n");
    results_table(&mut page, &report.variants);
    let metric = report
        .comparisons
        .first()
        .map_or(Foreign::new("time"), |c| c.metric.clone());
    let rounds = match report.comparisons.iter().any(|c| !c.phases.is_empty()) {
        true => "interleaved iterations (one of each program per round)".to_string(),
        false => format!("interleaved samples, count {} shared", report.count),
    };
    let _ = writeln!(
        page,
        "<h2>Verdicts</h2>\n<p>Ratios of {} per op against <b>{}</b>: {} rounds of {rounds}, {:.2} s; {}.</p>",
        escape(&metric),
        escape(&report.reference),
        report.rounds,
        report.sampling_ms / 1e3,
        report.noise_band()
    );
    render(&mut page, &tables::verdicts(report));
    if report.comparisons.iter().any(|c| !c.phases.is_empty()) {
        page.push_str("<h3>Per phase</h3>\n<p>A round is one iteration of each program; each phase's ratio is of the variants' times in it.</p>\n");
        render(&mut page, &tables::phases(report));
    }
    if !report.comparisons.is_empty() {
        let _ = writeln!(
            page,
            "<figure class=\"plot ratios\">\n<figcaption>Each variant's ratio to <b>{}</b> (dot) with its 95% interval (bar); the shaded band is the {}.</figcaption>",
            escape(&report.reference),
            report.noise_band()
        );
        page.push_str(&svg_or_message(ratio_svg(report)));
        page.push_str("</figure>\n");
    }
    distributions(&mut page, &report.variants);
    finish(page, &report.tool)
}

/// The head of the page, the title and the environment: one machine's, or
/// for a report merged from `exports` each export's, under a line that
/// says what differs between them.
fn start(title: &str, tool: &Tool, env: &Environment, exports: &[MergedExport]) -> String {
    let mut page = String::with_capacity(64 * 1024);
    page.push_str(&HEAD.replace("{title}", title).replace("{style}", STYLE));
    let engines: Vec<Foreign> = env.engines.iter().map(|e| e.describe()).collect();
    let engines = Foreign::join(&engines, ", ");
    let mut rows = match exports {
        [] => machine(env),
        _ => vec![("merged", Foreign::new(merged::summary(exports)))],
    };
    let seed = match exports {
        [] => format!(" · seed {}", env.seed),
        _ => String::new(),
    };
    rows.extend([
        ("engines", engines),
        (
            "sampling",
            Foreign::new(format!(
                "target {:.1} ms per sample · drift ±{}%{seed}",
                env.calibration.sample_time_ms, env.drift_pct
            )),
        ),
        (
            "limits",
            Foreign::new(format!(
                "memory {} per instance · {:.0} ms per call",
                crate::util::bytes::format_bytes(env.max_memory_bytes),
                env.timeout_ms
            )),
        ),
        (
            "compile cache",
            env.compile_cache.clone().unwrap_or("off".into()),
        ),
    ]);
    page.push_str("<dl class=\"env\">\n");
    for (term, value) in rows {
        let _ = writeln!(page, "<dt>{term}</dt><dd>{}</dd>", escape(&value));
    }
    page.push_str("</dl>\n");
    if !exports.is_empty() {
        page.push_str("<ul class=\"exports\">\n");
        for export in exports {
            let _ = writeln!(page, "<li>{}</li>", escape(&merged::export_line(export)));
        }
        page.push_str("</ul>\n");
    }
    for warning in &env.warnings {
        let _ = writeln!(page, "<p class=\"warn\">warning: {}</p>", escape(warning));
    }
    let _ = writeln!(
        page,
        "</header>\n<!-- {} {} -->",
        html_comment(&tool.name),
        html_comment(&tool.version)
    );
    page
}

/// The header's rows of the machine a report was measured on: the CPU,
/// the core, the priority, the clock and the calibration.
fn machine(env: &Environment) -> Vec<(&'static str, Foreign)> {
    let core = match env.pinned_core {
        Some(c) => format!("pinned to core {c}"),
        None => "not pinned".to_string(),
    };
    let mut calls = format!(
        "empty-guest call {} · pause/resume pair {}",
        format_ns(env.calibration.empty_call_ns),
        format_ns(env.calibration.pause_pair_ns)
    );
    if let (Some(call), Some(pair)) = (
        env.calibration.empty_component_call_ns,
        env.calibration.component_pause_pair_ns,
    ) {
        let _ = write!(
            calls,
            "; components: empty-guest call {} · pause/resume pair {}",
            format_ns(call),
            format_ns(pair)
        );
    }
    let cpu = env.cpu_model.clone().unwrap_or("unknown CPU".into());
    vec![
        ("cpu", cpu.then(&format!(" · {} cores", env.cores))),
        ("core", Foreign::new(core)),
        ("priority", env.priority.clone()),
        (
            "clock",
            Foreign::new(format!(
                "resolution {}, read {}",
                format_ns(env.calibration.clock_resolution_ns),
                format_ns(env.calibration.clock_overhead_ns)
            )),
        ),
        ("calls", Foreign::new(calls)),
    ]
}

/// The page's footer and its end.
fn finish(mut page: String, tool: &Tool) -> String {
    let made_by = format!("{} {}", escape(&tool.name), escape(&tool.version));
    page.push_str(&FOOT.replace("{tool}", &made_by));
    page
}

/// The results table, and the notes under it.
fn results_table(page: &mut String, results: &[BenchResult]) {
    render(page, &tables::results(results));
    let notes: Vec<String> = (results.iter())
        .flat_map(|r| row_notes(r).into_iter().map(move |note| (r, note)))
        .map(|(r, note)| format!("<li><b>{}</b>: {}</li>", escape(&r.name), escape(&note)))
        .collect();
    if !notes.is_empty() {
        page.push_str("<ul class=\"notes\">\n");
        for note in notes {
            page.push_str(&note);
            page.push('\n');
        }
        page.push_str("</ul>\n");
    }
}

/// `table` as an HTML table: its first column the names, a column set
/// left when it is, a verdict coloured by its class, and a line in place
/// of a row's figures spanning the columns left.
pub(super) fn render(page: &mut String, table: &Table) {
    page.push_str("<div class=\"table\"><table>\n<tr>");
    for (i, column) in table.columns.iter().enumerate() {
        let class = match (i, column.align) {
            (1.., Align::Left) => " class=\"left\"",
            _ => "",
        };
        let _ = write!(page, "<th{class}>{}</th>", column.title);
    }
    page.push_str("</tr>\n");
    for row in &table.rows {
        page.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let align = table.columns.get(i).map_or(Align::Left, |c| c.align);
            page.push_str(&td(cell, i, align, table.columns.len()));
        }
        page.push_str("</tr>\n");
    }
    page.push_str("</table></div>\n");
}

/// The `<td>` of `cell` in column `i` of `columns`.
fn td(cell: &Cell, i: usize, align: Align, columns: usize) -> String {
    let class = match (i, align) {
        (0, _) => " class=\"name\"",
        (_, Align::Left) => " class=\"left\"",
        (_, Align::Right) => "",
    };
    match cell {
        Cell::Own(own) => format!("<td{class}>{}</td>", escape(own)),
        Cell::Foreign(f) => format!("<td{class}>{}</td>", escape(f)),
        Cell::Linked(f, row) => format!("<td{class}><a href=\"#row-{row}\">{}</a></td>", escape(f)),
        Cell::Verdict(v) => format!("<td class=\"left {}\">{v}</td>", verdict_class(*v)),
        Cell::Rest {
            words,
            text,
            failed,
        } => {
            let class = if *failed { "error" } else { "left" };
            let span = columns.saturating_sub(i).max(1);
            format!(
                "<td class=\"{class}\" colspan=\"{span}\">{words}{}</td>",
                escape(text)
            )
        }
    }
}

/// One histogram per measured row.
fn distributions(page: &mut String, results: &[BenchResult]) {
    if results.iter().all(|r| r.figures.is_none()) {
        return;
    }
    let _ = writeln!(
        page,
        "<h2>Distributions</h2>\n<p class=\"legend\">Time per op of every epoch a row stands on: a sample, or consecutive short samples adding up to at least 0.5 ms. Epochs the machine slowed are left out (the JSON counts them as epochs_disturbed); at most {MAX_HISTOGRAM_SAMPLES} in a histogram.<i class=\"bar\" style=\"background:{}\"></i>epochs<i class=\"line\" style=\"background:{}\"></i>median, its 95% interval shaded<i style=\"background:{}\"></i>mild outlier<i style=\"background:{}\"></i>severe outlier (Tukey's fences)</p>",
        hex(BAR),
        hex(MEDIAN),
        hex(MILD),
        hex(SEVERE)
    );
    for (i, r) in results.iter().enumerate() {
        let Some(f) = &r.figures else { continue };
        let c = Cells::of(f);
        let o = &f.time.outlier_counts;
        let _ = writeln!(
            page,
            "<figure class=\"plot histogram\" id=\"row-{i}\">\n<h3>{}</h3>\n<figcaption>median {} ±{} · 95% CI {} · {} samples × {} ops in {} epochs · outliers: {} low severe, {} low mild, {} high mild, {} high severe</figcaption>",
            escape(&r.name),
            c.time,
            escape(c.err.trim_start_matches('±')),
            c.ci,
            f.counts.samples,
            c.count,
            f.counts.epochs,
            o.low_severe,
            o.low_mild,
            o.high_mild,
            o.high_severe
        );
        let svg = match Distribution::of(f) {
            Some(d) => {
                if let Some(beyond) = d.beyond() {
                    let _ = writeln!(page, "<figcaption>{beyond}</figcaption>");
                }
                histogram_svg(&d)
            }
            None => Err("no samples".into()),
        };
        page.push_str(&svg_or_message(svg));
        page.push_str("</figure>\n");
    }
}

fn complexity_figure(page: &mut String, fit: &ComplexityResult) {
    let _ = writeln!(
        page,
        "<figure class=\"plot complexity\">\n<h3>{}</h3>\n<figcaption>best fit {}: {} · g(n), rms of the residuals {:.1}% of the mean</figcaption>",
        escape(&fit.benchmark),
        fit.best,
        format_ns(fit.coefficient),
        fit.rms * 100.0
    );
    page.push_str(&svg_or_message(complexity_svg(fit)));
    if !fit.candidates.is_empty() {
        page.push_str("<div class=\"table\"><table>\n<tr><th>candidate</th><th>coefficient</th><th>rms</th></tr>\n");
        for c in &fit.candidates {
            let best = if c.class == fit.best { " (best)" } else { "" };
            let _ = writeln!(
                page,
                "<tr><td>{}{best}</td><td>{}</td><td>{:.1}%</td></tr>",
                c.class,
                format_ns(c.coefficient),
                c.rms * 100.0
            );
        }
        page.push_str("</table></div>\n");
    }
    page.push_str("</figure>\n");
}

fn svg_or_message(svg: Plot<String>) -> String {
    match svg {
        Ok(svg) => svg,
        Err(e) => format!(
            "<p class=\"warn\">no plot: {}</p>\n",
            escape(&e.to_string())
        ),
    }
}

fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Faster => "faster",
        Verdict::Slower => "slower",
        Verdict::Same => "same",
        Verdict::Unsure => "unsure",
    }
}
