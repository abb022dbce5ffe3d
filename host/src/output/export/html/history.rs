//! The HTML page of `host history`: per benchmark (and what is measured) one
//! trend plot, each series (an engine on a machine) in its own colour, every
//! run's value with its 95% interval, and each change point marked by a
//! dashed line before the run it starts at, with its ratio; under the plot
//! its legend and a table of the change points, which wraps so that the
//! page stays within its width.

use std::fmt::Write;

use plotters::prelude::*;

use super::palette::{FONT, Plot, SERIES, WIDTH, hex};
use super::{FOOT, HEAD, STYLE, svg_or_message};
use crate::analysis::trend::{Measure, Series};
use crate::output::escape::html as escape;
use crate::output::history::{describe_change, format_value, method, noise_words};
use crate::output::units::format_ns;
use crate::results::{Foreign, Tool};

/// The colour of a change point's line.
const CHANGE: RGBColor = RGBColor(214, 39, 40);

/// The page: a header, then per benchmark its plot and change points.
pub fn html_history(series: &[Series], runs: usize, store: &str) -> String {
    let title = "wasm-bench history";
    let mut page = HEAD.replace("{title}", title).replace("{style}", STYLE);
    page.push_str("</header>\n");
    let _ = writeln!(
        page,
        "<p>{runs} kept runs read from <code>{}</code>. Change points: {}.</p>",
        escape(store),
        escape(&method())
    );
    if series.is_empty() {
        page.push_str("<p>No benchmark in them.</p>\n");
    }
    let mut groups: Vec<(&Foreign, Measure, Vec<&Series>)> = Vec::new();
    for s in series {
        match groups
            .iter_mut()
            .find(|(b, m, _)| **b == s.benchmark && *m == s.measure)
        {
            Some(group) => group.2.push(s),
            None => groups.push((&s.benchmark, s.measure, vec![s])),
        }
    }
    for (benchmark, measure, members) in &groups {
        section(&mut page, benchmark, *measure, members);
    }
    let made_by = format!("{} {}", Tool::NAME, env!("CARGO_PKG_VERSION"));
    page.push_str(&FOOT.replace("{tool}", &made_by));
    page
}

/// One benchmark's plot and the table of its series.
fn section(page: &mut String, benchmark: &Foreign, measure: Measure, members: &[&Series]) {
    let _ = writeln!(
        page,
        "<h2>{} <small>{}</small></h2>\n<figure class=\"plot\">\n<figcaption>{} per run (dot) with its 95% interval (bar); a dashed red line marks a change point before the run it starts at.</figcaption>",
        escape(benchmark),
        measure.describe(),
        match measure {
            Measure::Time => "Median time per op",
            _ => "Count per op",
        }
    );
    page.push_str(&svg_or_message(trend_svg(members)));
    page.push_str(&legend(members));
    page.push_str("</figure>\n");
    page.push_str("<div class=\"table\"><table>\n<tr><th class=\"left\">series</th><th class=\"left\">machine</th><th>runs</th><th>last</th><th class=\"left\">change points</th></tr>\n");
    let mut noise = Vec::new();
    for (i, s) in members.iter().enumerate() {
        let changes = match s.changes.is_empty() {
            true => "none".to_string(),
            false => s
                .changes
                .iter()
                .map(|c| escape(&describe_change(s, c)))
                .collect::<Vec<_>>()
                .join("<br>"),
        };
        let last = s
            .points
            .last()
            .map(|p| format_value(s.measure, p.value))
            .unwrap_or_default();
        let _ = writeln!(
            page,
            "<tr><td class=\"left\" title=\"{}\"><span style=\"color:{}\">●</span> {}</td><td class=\"left\">{}</td><td>{}</td><td>{}</td><td class=\"wrap\">{}</td></tr>",
            escape(&s.engine_config),
            hex(SERIES[i % SERIES.len()]),
            escape(&s.engine),
            escape(&s.machine.describe()),
            s.points.len(),
            last,
            changes,
        );
        if let Some(words) = noise_words(s) {
            noise.push(format!("{}: {}", escape(&s.engine), escape(&words)));
        }
    }
    page.push_str("</table></div>\n");
    for line in noise {
        let _ = writeln!(page, "<p>{line}.</p>");
    }
}

/// The legend of a plot, under it (inside, it would cover the newest
/// runs): each series' colour, engine and machine.
fn legend(members: &[&Series]) -> String {
    let entries: Vec<String> = members
        .iter()
        .enumerate()
        .map(|(i, s)| {
            format!(
                "<i style=\"background:{}\"></i>{} on {}",
                hex(SERIES[i % SERIES.len()]),
                escape(&s.engine),
                escape(&s.machine.describe())
            )
        })
        .collect();
    format!("<p class=\"legend\">{}</p>\n", entries.join(" "))
}

/// The trend plot of `members`: x the run's number in its series, y its
/// value.
fn trend_svg(members: &[&Series]) -> Plot<String> {
    let values = members.iter().flat_map(|s| {
        s.points
            .iter()
            .flat_map(|p| [p.value, p.low, p.high])
            .filter(|v| v.is_finite() && *v > 0.0)
    });
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    let runs = members.iter().map(|s| s.points.len()).max().unwrap_or(0);
    if runs == 0 || !lo.is_finite() {
        return Err("no runs".into());
    }
    let pad = ((hi - lo) * 0.12).max(hi.abs() * 0.01);
    let y = (lo - pad).max(0.0)..(hi + pad);
    let x = 0.5..(runs as f64 + 0.5);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, 320)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .margin_right(24)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(x, y.clone())?;
        let measure = members[0].measure;
        chart
            .configure_mesh()
            .x_desc("run")
            .y_desc(match measure {
                Measure::Time => "time per op",
                _ => "count per op",
            })
            .x_label_formatter(&|n| format!("{n:.0}"))
            .y_label_formatter(&|v| match measure {
                Measure::Time => format_ns(*v),
                _ => format!("{v:.1}"),
            })
            .light_line_style(BLACK.mix(0.04))
            .bold_line_style(BLACK.mix(0.1))
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 13))
            .draw()?;
        for (i, s) in members.iter().enumerate() {
            let colour = SERIES[i % SERIES.len()];
            let points: Vec<(f64, f64)> = s
                .points
                .iter()
                .enumerate()
                .map(|(k, p)| ((k + 1) as f64, p.value))
                .collect();
            chart.draw_series(LineSeries::new(points.iter().copied(), colour.mix(0.5)))?;
            chart.draw_series(
                s.points
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| p.low.is_finite() && p.high.is_finite() && p.high > p.low)
                    .map(|(k, p)| {
                        ErrorBar::new_vertical((k + 1) as f64, p.low, p.value, p.high, colour, 6)
                    }),
            )?;
            chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, colour.filled())))?;
            for c in &s.changes {
                let at = c.at as f64 + 0.5;
                chart.draw_series(DashedLineSeries::new(
                    [(at, y.start), (at, y.end)],
                    6,
                    4,
                    CHANGE.stroke_width(2),
                ))?;
                chart.draw_series(std::iter::once(Text::new(
                    format!("×{:.3}", c.ratio),
                    (at, y.end),
                    (FONT, 13).into_font().color(&CHANGE),
                )))?;
            }
        }
        root.present()?;
    }
    Ok(svg)
}
