//! A forest plot in plain SVG: a row per ratio, its label at the left, a
//! dot at the ratio and a bar for its interval on a log scale with a line
//! at 1 (a diamond for a geometric mean), and a band shaded when given.
//!
//! Its axis spans the ratios within [1/[`MAX_SPAN`], [`MAX_SPAN`]]: an end
//! of an interval beyond is drawn at the edge as an arrow, a ratio beyond
//! as its dot at the edge, and one that is not a number is named instead
//! of drawn, so the drawing stays bounded whatever the data.

use std::fmt::Write;

use super::escape;
use super::palette::{SAME, hex};
use crate::output::cells::format_ratios;
use crate::results::{Foreign, Ratio};

/// The widest ratio the axis shows, either way of 1.
pub(super) const MAX_SPAN: f64 = 100.0;
/// Width of the plot, its label column and its rows, in px.
const WIDTH: f64 = 720.0;
const LABELS: f64 = 230.0;
const RIGHT: f64 = 24.0;
const ROW: f64 = 22.0;
const TOP: f64 = 12.0;
const AXIS: f64 = 44.0;

/// One row of the plot.
pub(super) struct Line {
    pub label: Foreign,
    pub ratio: Ratio,
    /// Its dot's and bar's colour, `#rrggbb`.
    pub colour: String,
    /// Whether it is a geometric mean (a diamond).
    pub mean: bool,
}

/// The forest plot: a row per line, the band shaded when given.
pub(super) fn forest_svg(lines: &[Line], band: Option<(f64, f64)>, reference: &Foreign) -> String {
    let ratios: Vec<Ratio> = lines.iter().map(|l| l.ratio).collect();
    let axis = Axis::over(&ratios, band.unwrap_or((1.0, 1.0)));
    let bottom = TOP + ROW * lines.len() as f64;
    let height = bottom + AXIS;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {height}\" width=\"{WIDTH}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
    );
    if let Some(band) = band {
        let (b0, b1) = (
            axis.x(band.0).unwrap_or(LABELS),
            axis.x(band.1).unwrap_or(LABELS),
        );
        let _ = writeln!(
            svg,
            "<rect class=\"band\" x=\"{b0:.1}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\" fill-opacity=\"0.18\"/>",
            (b1 - b0).max(1.0),
            bottom - TOP,
            hex(SAME)
        );
    }
    axis_lines(&mut svg, &axis, bottom, reference);
    for (i, line) in lines.iter().enumerate() {
        let y = TOP + ROW * (i as f64 + 0.5);
        forest_row(&mut svg, &axis, y, line);
    }
    svg.push_str("</svg>\n");
    svg
}

/// The log-scaled axis of the plot: ln of its ends.
struct Axis {
    low: f64,
    high: f64,
}

impl Axis {
    /// An axis over every finite, positive ratio and end of `ratios` and
    /// the band, within [1/MAX_SPAN, MAX_SPAN], a little padded.
    fn over(ratios: &[Ratio], band: (f64, f64)) -> Self {
        let (low, high) = ratios
            .iter()
            .flat_map(|r| [r.low, r.value, r.high])
            .filter(|x| x.is_finite() && *x > 0.0)
            .map(|x| x.clamp(1.0 / MAX_SPAN, MAX_SPAN).ln())
            .fold((band.0.ln(), band.1.ln()), |(a, b), x| (a.min(x), b.max(x)));
        let pad = (high - low) * 0.06;
        Axis {
            low: low - pad,
            high: high + pad,
        }
    }

    /// The x of `ratio`, at an edge when beyond; `None` when not a number.
    fn x(&self, ratio: f64) -> Option<f64> {
        if ratio.is_nan() {
            return None;
        }
        let at = match ratio > 0.0 {
            true => (ratio.ln() - self.low) / (self.high - self.low),
            false => 0.0,
        };
        Some(LABELS + at.clamp(0.0, 1.0) * (WIDTH - LABELS - RIGHT))
    }

    /// Whether `ratio` lies beyond the axis.
    fn beyond(&self, ratio: f64) -> bool {
        ratio.is_finite() && ratio > 0.0 && !(self.low..=self.high).contains(&ratio.ln())
            || ratio.is_infinite()
            || ratio <= 0.0
    }

    /// Round ratios within the axis to label it with, 1 first, none
    /// closer than 44 px to another.
    fn ticks(&self) -> Vec<f64> {
        const NICE: [f64; 25] = [
            0.01, 0.02, 0.05, 0.1, 0.2, 0.33, 0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 1.01, 1.02, 1.05,
            1.1, 1.25, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0,
        ];
        let mut ticks = vec![1.0];
        for tick in NICE {
            let (Some(x), true) = (self.x(tick), (self.low..=self.high).contains(&tick.ln()))
            else {
                continue;
            };
            let apart = ticks
                .iter()
                .filter_map(|t| self.x(*t))
                .all(|other| (other - x).abs() >= 44.0);
            if apart {
                ticks.push(tick);
            }
        }
        ticks
    }
}

/// The line at 1, the ticks and the axis' caption.
fn axis_lines(svg: &mut String, axis: &Axis, bottom: f64, reference: &Foreign) {
    for tick in axis.ticks() {
        let Some(x) = axis.x(tick) else { continue };
        let (stroke, width) = match tick == 1.0 {
            true => ("#000000", 1.2),
            false => ("#d0d7de", 0.8),
        };
        let _ = writeln!(
            svg,
            "<line x1=\"{x:.1}\" y1=\"{TOP}\" x2=\"{x:.1}\" y2=\"{bottom:.1}\" stroke=\"{stroke}\" stroke-width=\"{width}\"/>\n<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}×</text>",
            bottom + 15.0,
            tick
        );
    }
    let _ = writeln!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">ratio to {} (log scale; below 1: faster)</text>",
        LABELS + (WIDTH - LABELS - RIGHT) / 2.0,
        bottom + 36.0,
        escape(reference)
    );
}

/// One row of the plot: its label, the bar of the interval and the dot.
fn forest_row(svg: &mut String, axis: &Axis, y: f64, line: &Line) {
    let (label, ratio, colour) = (&line.label, &line.ratio, line.colour.as_str());
    let class = match line.mean {
        true => "geomean",
        false => "benchmark",
    };
    let [value, low, high] = format_ratios(ratio.value, ratio.low, ratio.high);
    let _ = writeln!(
        svg,
        "<g class=\"{class}\"><title>{}: {value} [{low}, {high}]</title>\n<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
        escape(label),
        LABELS - 8.0,
        y + 4.0,
        escape(&label.map(|l| shorten(l, 34)))
    );
    interval_bar(svg, axis, y, ratio, colour);
    marker(svg, axis, y, ratio.value, colour, class == "geomean");
    svg.push_str("</g>\n");
}

/// The bar of an interval, with a tick at each end, or an arrow at the
/// axis' edge for an end beyond it.
fn interval_bar(svg: &mut String, axis: &Axis, y: f64, ratio: &Ratio, colour: &str) {
    if let (Some(x0), Some(x1)) = (axis.x(ratio.low), axis.x(ratio.high)) {
        let _ = writeln!(
            svg,
            "<line x1=\"{x0:.1}\" y1=\"{y:.1}\" x2=\"{x1:.1}\" y2=\"{y:.1}\" stroke=\"{colour}\" stroke-width=\"2\"/>"
        );
        for (x, end) in [(x0, ratio.low), (x1, ratio.high)] {
            let mark = match axis.beyond(end) {
                true => format!(
                    "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"{colour}\">{}</text>",
                    y + 4.0,
                    if x <= LABELS { "◀" } else { "▶" }
                ),
                false => format!(
                    "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"{colour}\" stroke-width=\"2\"/>",
                    y - 5.0,
                    y + 5.0
                ),
            };
            let _ = writeln!(svg, "{mark}");
        }
    }
}

/// A dot at `value` (a diamond for a geometric mean), or "no ratio".
fn marker(svg: &mut String, axis: &Axis, y: f64, value: f64, colour: &str, diamond: bool) {
    match axis.x(value) {
        Some(x) if diamond => {
            let _ = writeln!(
                svg,
                "<path d=\"M {:.1} {y:.1} L {x:.1} {:.1} L {:.1} {y:.1} L {x:.1} {:.1} Z\" fill=\"{colour}\"/>",
                x - 6.0,
                y - 6.0,
                x + 6.0,
                y + 6.0
            );
        }
        Some(x) => {
            let _ = writeln!(
                svg,
                "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"4.5\" fill=\"{colour}\"/>"
            );
        }
        None => {
            let _ = writeln!(
                svg,
                "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"{colour}\">no ratio</text>",
                LABELS + 4.0,
                y + 4.0
            );
        }
    }
}

/// `s` cut to `max` characters, with an ellipsis when cut.
fn shorten(s: &str, max: usize) -> String {
    match s.chars().count() > max {
        true => format!("{}…", s.chars().take(max - 1).collect::<String>()),
        false => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_axis_is_bounded_and_places_what_is_beyond_at_its_edges() {
        let absurd = [
            Ratio {
                value: 1e12,
                low: 0.0,
                high: f64::INFINITY,
            },
            Ratio::exact(f64::NAN),
            Ratio::exact(1.02),
        ];
        let axis = Axis::over(&absurd, (1.0 / 1.005, 1.005));
        assert!(axis.low >= -(MAX_SPAN.ln() * 1.2) && axis.high <= MAX_SPAN.ln() * 1.2);
        let right = WIDTH - RIGHT;
        assert_eq!(axis.x(1e12), Some(right));
        assert_eq!(axis.x(f64::INFINITY), Some(right));
        assert_eq!(axis.x(0.0), Some(LABELS));
        assert_eq!(axis.x(f64::NAN), None);
        assert!(axis.beyond(1e12) && axis.beyond(0.0) && !axis.beyond(1.02));
        let ticks = axis.ticks();
        assert!(ticks.contains(&1.0) && ticks.len() <= 10, "{ticks:?}");
    }

    #[test]
    fn a_narrow_axis_still_has_its_line_at_one() {
        let axis = Axis::over(&[Ratio::exact(1.001)], (1.0 / 1.005, 1.005));
        assert!(axis.ticks().contains(&1.0));
        let x = axis.x(1.001).expect("a number");
        assert!(x > LABELS && x < WIDTH - RIGHT);
    }
}
