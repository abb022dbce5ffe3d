//! The plots of a complexity fit (medians against size with the fitted
//! curve) and of a comparison (each ratio with its interval against the
//! noise band, the page's width, on an axis padded beyond every point and
//! ticked at round ratios from end to end: [`RatioAxis`]).

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::output::cells::format_ratio;
use crate::output::escape::{Text as Escapable, terminal};
use crate::output::export::html::palette::{
    BAR, FASTER, FIT, FONT, Plot, SAME, SEVERE, UNSURE, WIDTH,
};
use crate::output::units::{format_count, format_ns};
use crate::results::{CompareReport, ComplexityResult, Verdict};

/// Median time per op against size, with the best fit coefficient · g(n):
/// log-log when the sizes span a decade or more, linear otherwise.
pub(super) fn complexity_svg(fit: &ComplexityResult) -> Plot<String> {
    let points: Vec<(f64, f64)> = fit
        .points
        .iter()
        .map(|&(n, t)| (n as f64, t))
        .filter(|(n, t)| n.is_finite() && t.is_finite())
        .collect();
    if points.is_empty() {
        return Err("no points".into());
    }
    let (n_min, n_max) = points
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.0), b.max(p.0))
        });
    let log = n_min > 0.0 && n_max / n_min >= 8.0 && points.iter().all(|p| p.1 > 0.0);
    let curve: Vec<(f64, f64)> = (0..=120)
        .map(|k| {
            let t = k as f64 / 120.0;
            let n = match log {
                true => n_min * (n_max / n_min).powf(t),
                false => n_min + (n_max - n_min) * t,
            };
            (n, fit.coefficient * fit.best.g(n))
        })
        .filter(|(_, t)| t.is_finite() && (!log || *t > 0.0))
        .collect();
    let (t_min, t_max) = points
        .iter()
        .chain(&curve)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.1), b.max(p.1))
        });
    let label = format!("fit {}: {} · g(n)", fit.best, format_ns(fit.coefficient));
    let mut svg = String::new();
    if log {
        let x = (n_min / 1.5)..(n_max * 1.5);
        let y = (t_min / 1.6)..(t_max * 1.6);
        fit_chart(
            &mut svg,
            x.log_scale(),
            y.log_scale(),
            &points,
            &curve,
            &label,
        )?;
    } else {
        let pad = ((n_max - n_min) * 0.06).max(n_max.abs() * 0.05).max(1.0);
        let x = (n_min - pad).max(0.0)..(n_max + pad);
        let y_hi = t_max.max(0.0) * 1.15;
        let y_lo = t_min.min(0.0) * 1.15;
        let y = y_lo..(if y_hi > y_lo { y_hi } else { y_lo + 1.0 });
        fit_chart(&mut svg, x, y, &points, &curve, &label)?;
    }
    Ok(svg)
}

pub(super) fn fit_chart<X, Y>(
    svg: &mut String,
    x: X,
    y: Y,
    points: &[(f64, f64)],
    curve: &[(f64, f64)],
    label: &str,
) -> Plot<()>
where
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let root = SVGBackend::with_string(svg, (WIDTH, 340)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .margin(12)
        .margin_right(24)
        .x_label_area_size(40)
        .y_label_area_size(72)
        .build_cartesian_2d(x, y)?;
    chart
        .configure_mesh()
        .x_desc("size n")
        .y_desc("time per op")
        .x_label_formatter(&|n| format_count(n.max(0.0).round() as u64))
        .y_label_formatter(&|t| format_ns(*t))
        .light_line_style(BLACK.mix(0.04))
        .bold_line_style(BLACK.mix(0.1))
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 14))
        .draw()?;
    chart
        .draw_series(LineSeries::new(curve.iter().copied(), FIT.stroke_width(2)))?
        .label(label)
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], FIT.stroke_width(2)));
    chart
        .draw_series(points.iter().map(|&p| Circle::new(p, 4, BAR.filled())))?
        .label("median per size")
        .legend(|(x, y)| Circle::new((x + 9, y), 4, BAR.filled()));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK.mix(0.2))
        .label_font((FONT, 14))
        .draw()?;
    root.present()?;
    Ok(())
}

/// The widest span of the ratio axis: a ratio or an interval's end beyond it
/// (a saved report may hold 1.7e308 or 5e-324) is drawn at its edge and its
/// label says so, so that the axis and its ticks stay finite and few.
const RATIO_AXIS: (f64, f64) = (1e-3, 1e3);

/// `ratio` on the axis: clamped to [`RATIO_AXIS`], and whether it was.
fn on_axis(ratio: f64) -> (f64, bool) {
    let clamped = ratio.clamp(RATIO_AXIS.0, RATIO_AXIS.1);
    (clamped, clamped != ratio)
}

/// One row per comparison: the ratio (dot) and its interval (bar), a line at
/// 1 and the noise band shaded.
pub(super) fn ratio_svg(report: &CompareReport) -> Plot<String> {
    let comparisons = &report.comparisons;
    let n = comparisons.len();
    let noise = report.noise_band().half();
    let (band_lo, band_hi) = (on_axis(1.0 / (1.0 + noise)).0, on_axis(1.0 + noise).0);
    let (lo, hi) = comparisons
        .iter()
        .flat_map(|c| [c.ratio.low, c.ratio.value, c.ratio.high])
        .filter(|x| x.is_finite())
        .map(|x| on_axis(x).0)
        .fold((band_lo, band_hi), |(a, b), x| (a.min(x), b.max(x)));
    let axis = RatioAxis::over(lo, hi);
    let (lo, hi) = (axis.low, axis.high);
    let names: Vec<String> = comparisons
        .iter()
        .map(|c| shorten(&c.variant, 34))
        .collect();
    let label_width = names
        .iter()
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(0)
        .saturating_mul(7)
        .clamp(60, 250) as u32
        + 12;
    let height = 80 + 40 * n as u32;
    let rows = n as f64;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (RATIO_WIDTH, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(10)
            .margin_right(24)
            .x_label_area_size(40)
            .y_label_area_size(label_width)
            .build_cartesian_2d(lo..hi, 0f64..rows)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .disable_x_mesh()
            .y_labels(0)
            .x_labels(0)
            .x_desc(format!(
                "ratio to {} (below 1: faster)",
                shorten(&report.reference, 40)
            ))
            .light_line_style(WHITE.mix(0.0))
            .bold_line_style(BLACK.mix(0.1))
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 14))
            .draw()?;
        ratio_ticks(&root, &chart, &axis, rows)?;
        chart.draw_series(std::iter::once(Rectangle::new(
            [(band_lo, 0.0), (band_hi, rows)],
            SAME.mix(0.18).filled(),
        )))?;
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(1.0, 0.0), (1.0, rows)],
            BLACK.stroke_width(1),
        )))?;
        for (i, c) in comparisons.iter().enumerate() {
            let y = rows - i as f64 - 0.5;
            ratio_row(&root, &mut chart, c, y, &names[i])?;
        }
        let (px, py) = chart.backend_coord(&(band_hi, rows));
        root.draw(&Text::new(
            report.noise_band().to_string(),
            (px + 4, py + 2),
            TextStyle::from((FONT, 13).into_font())
                .color(&SAME)
                .pos(Pos::new(HPos::Left, VPos::Top)),
        ))?;
        root.present()?;
    }
    Ok(svg)
}

/// The drawing area of the ratio plot, and its chart.
type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
type RatioChart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// One comparison's row at height `y`: its interval (bar), its ratio (dot)
/// and verdict, and its name at the left.
fn ratio_row(
    root: &Area<'_>,
    chart: &mut RatioChart<'_, '_>,
    c: &crate::results::Comparison,
    y: f64,
    name: &str,
) -> Plot<()> {
    let color = verdict_color(c.verdict);
    let [(low, cut_low), (value, cut_value), (high, cut_high)] =
        [c.ratio.low, c.ratio.value, c.ratio.high].map(on_axis);
    let beyond = match cut_low || cut_value || cut_high {
        true => " (beyond the axis)",
        false => "",
    };
    if c.ratio.low.is_finite() && c.ratio.high.is_finite() {
        chart.draw_series(std::iter::once(ErrorBar::new_horizontal(
            y,
            low,
            value,
            high,
            color.stroke_width(2),
            12,
        )))?;
    }
    if c.ratio.value.is_finite() {
        let style = TextStyle::from((FONT, 14).into_font())
            .color(&color)
            .pos(Pos::new(HPos::Center, VPos::Bottom));
        chart.draw_series(std::iter::once(
            EmptyElement::at((value, y))
                + Circle::new((0, 0), 5, color.filled())
                + Text::new(
                    format!("{} {}{beyond}", format_ratio(c.ratio.value), c.verdict),
                    (0, -9),
                    style,
                ),
        ))?;
    }
    let (px, py) = chart.backend_coord(&(chart.x_range().start, y));
    let style = TextStyle::from((FONT, 14).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Right, VPos::Center));
    root.draw(&Text::new(name.to_string(), (px - 8, py), style))?;
    Ok(())
}

/// The ratio axis' ticks: a light line across the plot and a label under
/// it at every tick of `axis`, from end to end.
fn ratio_ticks(
    root: &Area<'_>,
    chart: &RatioChart<'_, '_>,
    axis: &RatioAxis,
    rows: f64,
) -> Plot<()> {
    let style = TextStyle::from((FONT, 14).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    for &tick in &axis.ticks {
        let (x, bottom) = chart.backend_coord(&(tick, 0.0));
        let (_, top) = chart.backend_coord(&(tick, rows));
        root.draw(&PathElement::new(
            vec![(x, top), (x, bottom + 5)],
            BLACK.mix(0.12).stroke_width(1),
        ))?;
        let label = format!("{tick:.decimals$}×", decimals = axis.decimals);
        root.draw(&Text::new(label, (x, bottom + 8), style.clone()))?;
    }
    Ok(())
}

/// Width of the ratio plot, in px: the page's width (its text column).
pub(super) const RATIO_WIDTH: u32 = 980;

/// The x axis of the ratio plot: its ends, a step apart from the ratios
/// and the band (padded, so that no axis ends on a point), and evenly
/// spaced round ticks over the whole of it, from end to end.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct RatioAxis {
    pub low: f64,
    pub high: f64,
    pub ticks: Vec<f64>,
    /// Decimals that tell the ticks apart.
    pub decimals: usize,
}

impl RatioAxis {
    /// Ticks aimed for: from 5 to 10 over the axis.
    const TICKS: f64 = 8.0;

    /// The axis over the values from `lo` to `hi` (finite): padded by 8%
    /// of the span (at least 0.005) on each side, then widened to the
    /// round step (1, 2, 2.5 or 5 times a power of ten) that gives about
    /// eight ticks; not below 0.
    pub fn over(lo: f64, hi: f64) -> Self {
        let pad = ((hi - lo) * 0.08).max(0.005);
        let (lo, hi) = (lo - pad, hi + pad);
        let rough = (hi - lo) / Self::TICKS;
        let exponent = rough.log10().floor();
        let power = 10f64.powf(exponent);
        let multiple = [1.0, 2.0, 2.5, 5.0, 10.0]
            .into_iter()
            .find(|m| m * power >= rough)
            .unwrap_or(10.0);
        let step = multiple * power;
        let first = ((lo / step).floor() * step).max(0.0);
        let count = ((hi - first) / step).ceil().max(1.0) as usize;
        let ticks: Vec<f64> = (0..=count).map(|k| first + k as f64 * step).collect();
        // A step of 0.025 needs 3 decimals, one of 0.05 needs 2; at least 2.
        let decimals = -exponent + f64::from(u8::from(multiple == 2.5));
        RatioAxis {
            low: first,
            high: first + count as f64 * step,
            ticks,
            decimals: decimals.clamp(2.0, 6.0) as usize,
        }
    }
}

/// A name for a chart: control characters escaped (plotters escapes the
/// markup), at most `max` characters, an ellipsis in the middle when cut.
pub(super) fn shorten<T: Escapable + ?Sized>(s: &T, max: usize) -> String {
    let s = terminal(s);
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let keep = max - 1;
    let head: String = s.chars().take(keep / 2).collect();
    let tail: String = s.chars().skip(n - (keep - keep / 2)).collect();
    format!("{head}…{tail}")
}

pub(super) fn verdict_color(v: Verdict) -> RGBColor {
    match v {
        Verdict::Faster => FASTER,
        Verdict::Slower => SEVERE,
        Verdict::Same => SAME,
        Verdict::Unsure => UNSURE,
    }
}
