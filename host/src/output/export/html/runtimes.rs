//! The runtime view's section of a run's page: its table (benchmarks down,
//! engines across), a grouped chart of each benchmark's ratios, one row
//! per engine in the engine's colour, and a forest plot of each engine's
//! geometric mean; then how fresh instances start. The cells are
//! [`crate::output::runtime_table`]'s.

use std::fmt::Write;

use super::escape;
use super::forest::{self, Line};
use super::palette::{SERIES, hex};
use crate::output::runtime_table::{self as cells, caption, fastest_row, header, means_row};
use crate::results::{Foreign, RuntimeView};

/// The section: a heading, the table, the two plots.
pub(super) fn runtimes_section(page: &mut String, view: &RuntimeView) {
    let html = |f: &Foreign| escape(f);
    let _ = writeln!(
        page,
        "<h2>Runtimes</h2>\n<p>{}</p>",
        caption(view, |f| format!("<b>{}</b>", escape(f)))
    );
    page.push_str("<div class=\"table\"><table>\n");
    table_row(page, "th", &header(view, html));
    for b in &view.benchmarks {
        table_row(page, "td", &cells::row(b, html, "<br>"));
    }
    table_row(page, "th", &means_row(view));
    table_row(page, "td", &fastest_row(view));
    page.push_str("</table></div>\n");
    let _ = writeln!(
        page,
        "<figure class=\"plot forest\">\n<figcaption>Each benchmark's ratio to <b>{}</b> per engine (dot) with its interval (bar), on a log scale.</figcaption>\n<p class=\"legend\">{}</p>",
        escape(&view.reference),
        legend(view)
    );
    page.push_str(&forest::forest_svg(&grouped(view), None, &view.reference));
    page.push_str("</figure>\n");
    let _ = writeln!(
        page,
        "<figure class=\"plot forest\">\n<figcaption>Each engine's geometric mean of its ratios to <b>{}</b> (diamond) with its interval.</figcaption>",
        escape(&view.reference)
    );
    page.push_str(&forest::forest_svg(&means(view), None, &view.reference));
    page.push_str("</figure>\n");
    start_table(page, view);
}

/// How fresh instances start, a table under its caption, where some row
/// measured it.
fn start_table(page: &mut String, view: &RuntimeView) {
    let html = |f: &Foreign| escape(f);
    let starts = cells::start_rows(view, html, "<br>");
    if starts.is_empty() {
        return;
    }
    let _ = writeln!(page, "<h3>Start</h3>\n<p>{}</p>", cells::START_CAPTION);
    page.push_str("<div class=\"table\"><table>\n");
    figures_row(page, "th", &cells::start_header(view, html), false);
    for row in &starts {
        figures_row(page, "td", row, false);
    }
    page.push_str("</table></div>\n");
}

/// One row of the runtime table, its first cell a name, its last the
/// fastest engine (set left).
fn table_row(page: &mut String, tag: &str, cells: &[String]) {
    figures_row(page, tag, cells, true);
}

/// One row of a table, its first cell a name, the others figures but the
/// last when `last_left`.
fn figures_row(page: &mut String, tag: &str, cells: &[String], last_left: bool) {
    page.push_str("<tr>");
    for (i, cell) in cells.iter().enumerate() {
        let class = match i {
            0 => " class=\"name\"",
            _ if last_left && i + 1 == cells.len() => " class=\"left\"",
            _ => "",
        };
        let _ = write!(page, "<{tag}{class}>{cell}</{tag}>");
    }
    page.push_str("</tr>\n");
}

/// The colour of the engine at `index` in the view.
fn colour(index: usize) -> String {
    hex(SERIES[index % SERIES.len()])
}

/// Each engine's colour, named.
fn legend(view: &RuntimeView) -> String {
    let mut text = String::new();
    for (k, engine) in view.engines.iter().enumerate() {
        let _ = write!(
            text,
            "<i style=\"background:{}\"></i>{}",
            colour(k),
            escape(engine)
        );
    }
    text
}

/// A row per benchmark and engine other than the reference, with a ratio.
fn grouped(view: &RuntimeView) -> Vec<Line> {
    let mut lines = Vec::new();
    for b in &view.benchmarks {
        for (k, cell) in b.cells.iter().enumerate() {
            let Some(ratio) = cell.ratio else { continue };
            lines.push(Line {
                label: Foreign::join([&b.benchmark, &cell.engine], " · "),
                ratio,
                colour: colour(k),
                mean: false,
            });
        }
    }
    lines
}

/// A row per engine with a geometric mean.
fn means(view: &RuntimeView) -> Vec<Line> {
    (view.means.iter().enumerate())
        .filter_map(|(k, m)| {
            Some(Line {
                label: m.engine.clone(),
                ratio: m.ratio?,
                colour: colour(k),
                mean: true,
            })
        })
        .collect()
}
