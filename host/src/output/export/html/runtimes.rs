//! The runtime view's section of a run's page: its table (benchmarks down,
//! engines across), a grouped chart of each benchmark's ratios, one row
//! per engine in the engine's colour, and a forest plot of each engine's
//! geometric mean. The cells are [`crate::output::runtime_table`]'s.

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
}

/// One row of the table, its first cell a name.
fn table_row(page: &mut String, tag: &str, cells: &[String]) {
    page.push_str("<tr>");
    for (i, cell) in cells.iter().enumerate() {
        let class = match i {
            0 => " class=\"name\"",
            _ if i + 1 == cells.len() => " class=\"left\"",
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
