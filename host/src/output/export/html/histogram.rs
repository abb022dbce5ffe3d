//! The histogram of a row's per-op samples, over a strip of the samples
//! themselves with the outliers coloured.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::output::export::html::palette::{
    BAR, FONT, MAX_HISTOGRAM_SAMPLES, MAX_STRIP_POINTS, MEDIAN, MILD, Plot, SEVERE, WIDTH,
};
use crate::output::units::{format_ns, unit_for};
use crate::results::{Figures, OutlierClass};

/// A row's per-op samples with their Tukey classes, and the axis to show
/// them on.
pub(super) struct Distribution {
    samples: Vec<(f64, OutlierClass)>,
    median: f64,
    ci95: (f64, f64),
    pub(super) lo: f64,
    pub(super) hi: f64,
}

impl Distribution {
    /// `None` without a finite sample.
    pub(super) fn of(f: &Figures) -> Option<Self> {
        let samples: Vec<(f64, OutlierClass)> = f
            .series
            .epochs_ns_per_op
            .iter()
            .flatten()
            .copied()
            .zip(
                f.series
                    .epoch_classes
                    .iter()
                    .copied()
                    .chain(std::iter::repeat(OutlierClass::NotAnOutlier)),
            )
            .filter(|(x, _)| x.is_finite())
            .collect();
        if samples.is_empty() {
            return None;
        }
        let median = f.ns_per_op.median;
        let (lo, hi) = histogram_range(&samples, &f.time.outlier_counts.fences, median);
        Some(Distribution {
            samples,
            median,
            ci95: (f.ns_per_op.ci95_low, f.ns_per_op.ci95_high),
            lo,
            hi,
        })
    }

    /// The samples left off the axis, in words; `None` when all are on it.
    pub(super) fn beyond(&self) -> Option<String> {
        let below = self.samples.iter().filter(|(x, _)| *x < self.lo).count();
        let above = self.samples.iter().filter(|(x, _)| *x > self.hi).count();
        let mut parts = Vec::new();
        if below > 0 {
            parts.push(format!(
                "{below} below the axis (down to {})",
                format_ns(min_of(&self.samples))
            ));
        }
        if above > 0 {
            parts.push(format!(
                "{above} beyond the axis (up to {})",
                format_ns(max_of(&self.samples))
            ));
        }
        (!parts.is_empty())
            .then(|| format!("Far outliers: {}, drawn at its edge.", parts.join(", ")))
    }
}

/// The histogram of a row's per-op samples with the median and its
/// interval, over a strip of the samples themselves, outliers coloured.
pub(super) fn histogram_svg(d: &Distribution) -> Plot<String> {
    let unit = unit_for(&[d.lo, d.hi]);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, 300)).into_drawing_area();
        root.fill(&WHITE)?;
        let (upper, lower) = root.split_vertically(222);
        draw_bars(&upper, d, unit.ns)?;
        draw_strip(&lower, d, unit.ns, unit.name)?;
        root.present()?;
    }
    Ok(svg)
}

/// The bars over an even subset of at most [`MAX_HISTOGRAM_SAMPLES`]
/// samples, the median's interval shaded and the median labelled; the axis
/// in units of `unit_ns`.
fn draw_bars(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    d: &Distribution,
    unit_ns: f64,
) -> Plot<()> {
    let (samples, median, lo, hi) = (&d.samples, d.median, d.lo, d.hi);
    let (ci_lo, ci_hi) = d.ci95;
    let scale = |ns: f64| ns / unit_ns;
    let hist: Vec<f64> = evenly(samples, MAX_HISTOGRAM_SAMPLES)
        .into_iter()
        .map(|(_, (x, _))| x)
        .filter(|x| (lo..=hi).contains(x))
        .collect();
    let bins = ((hist.len() as f64).sqrt().round() as usize).clamp(8, 50);
    let width = (hi - lo) / bins as f64;
    let mut counts = vec![0u32; bins];
    for x in &hist {
        let bin = (((x - lo) / width) as usize).min(bins - 1);
        counts[bin] += 1;
    }
    let top = counts.iter().copied().max().unwrap_or(1).max(1);
    let y_max = top + top / 6 + 1;

    let mut chart = ChartBuilder::on(area)
        .margin_top(10)
        .margin_right(20)
        .y_label_area_size(56)
        .build_cartesian_2d(scale(lo)..scale(hi), 0u32..y_max)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(8)
        .y_labels(5)
        .y_desc("epochs")
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.08))
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 14))
        .draw()?;
    if ci_lo.is_finite() && ci_hi.is_finite() {
        chart.draw_series(std::iter::once(Rectangle::new(
            [(scale(ci_lo.max(lo)), 0), (scale(ci_hi.min(hi)), y_max)],
            MEDIAN.mix(0.12).filled(),
        )))?;
    }
    chart.draw_series(
        counts
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, &c)| {
                let x0 = scale(lo + i as f64 * width);
                let x1 = scale(lo + (i + 1) as f64 * width);
                Rectangle::new([(x0, 0), (x1, c)], BAR.mix(0.85).filled())
            }),
    )?;
    if median.is_finite() {
        let m = scale(median);
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(m, 0), (m, y_max)],
            MEDIAN.stroke_width(2),
        )))?;
        // The label on the side with more room.
        let right_half = (median - lo) > (hi - lo) / 2.0;
        let (anchor, dx) = match right_half {
            true => (HPos::Right, -5),
            false => (HPos::Left, 5),
        };
        let style = TextStyle::from((FONT, 15).into_font())
            .color(&MEDIAN)
            .pos(Pos::new(anchor, VPos::Top));
        chart.draw_series(std::iter::once(
            EmptyElement::at((m, y_max))
                + Text::new(format!("median {}", format_ns(median)), (dx, 3), style),
        ))?;
    }
    Ok(())
}

/// The strip under the bars: every sample a dot (at most
/// [`MAX_STRIP_POINTS`] per class), jittered vertically, outliers coloured;
/// samples beyond the axis sit at its edge. The axis in units of `unit_ns`,
/// named `unit_name`.
fn draw_strip(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    d: &Distribution,
    unit_ns: f64,
    unit_name: &str,
) -> Plot<()> {
    let (samples, median, lo, hi) = (&d.samples, d.median, d.lo, d.hi);
    let scale = |ns: f64| ns / unit_ns;
    // One number of decimals for every tick (the ticks are about a
    // tenth of the axis apart).
    let decimals = (-(scale(hi - lo) / 8.0).log10().floor()).clamp(0.0, 6.0) as usize;
    let tick = |x: &f64| format!("{x:.decimals$}");
    let mut strip = ChartBuilder::on(area)
        .margin_right(20)
        .margin_bottom(4)
        .x_label_area_size(38)
        .y_label_area_size(56)
        .build_cartesian_2d(scale(lo)..scale(hi), 0f64..1f64)?;
    strip
        .configure_mesh()
        .disable_mesh()
        .y_labels(0)
        .x_labels(8)
        .x_label_formatter(&tick)
        .x_desc(format!("time per op ({unit_name})"))
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 14))
        .draw()?;
    // Regular samples first, outliers drawn over them.
    let groups = [
        (Severity::None, BAR.mix(0.35).filled()),
        (Severity::Mild, MILD.mix(0.9).filled()),
        (Severity::Severe, SEVERE.mix(0.9).filled()),
    ];
    for (severity, style) in groups {
        let members: Vec<(usize, (f64, OutlierClass))> = samples
            .iter()
            .copied()
            .enumerate()
            .filter(|(_, (_, c))| Severity::of(*c) == severity)
            .collect();
        let dots = evenly(&members, MAX_STRIP_POINTS);
        strip.draw_series(dots.into_iter().map(|(_, (i, (x, _)))| {
            let jitter = 0.15 + 0.7 * (i as f64 * 0.618_033_988_749_895).fract();
            Circle::new((scale(x.clamp(lo, hi)), jitter), 2, style)
        }))?;
    }
    if median.is_finite() {
        let m = scale(median);
        strip.draw_series(std::iter::once(PathElement::new(
            vec![(m, 0.0), (m, 1.0)],
            MEDIAN.stroke_width(2),
        )))?;
    }
    Ok(())
}

/// How far out a sample is, low or high alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Severity {
    None,
    Mild,
    Severe,
}

impl Severity {
    fn of(class: OutlierClass) -> Self {
        match class {
            OutlierClass::NotAnOutlier => Severity::None,
            OutlierClass::LowMild | OutlierClass::HighMild => Severity::Mild,
            OutlierClass::LowSevere | OutlierClass::HighSevere => Severity::Severe,
        }
    }
}

/// The axis of a histogram: all samples, unless a few far ones would squash
/// the rest, then the samples within the severe fences (and the median).
pub(super) fn histogram_range(
    samples: &[(f64, OutlierClass)],
    fences: &[f64; 4],
    median: f64,
) -> (f64, f64) {
    let (min, max) = (min_of(samples), max_of(samples));
    let (mut lo, mut hi) = (min, max);
    let inside = samples
        .iter()
        .map(|s| s.0)
        .filter(|x| *x >= fences[0] && *x <= fences[3]);
    let (inner_lo, inner_hi) = inside.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    if inner_hi > inner_lo && (max - min) > 2.0 * (inner_hi - inner_lo) {
        lo = inner_lo;
        hi = inner_hi;
    }
    if median.is_finite() {
        lo = lo.min(median);
        hi = hi.max(median);
    }
    let span = hi - lo;
    let pad = if span > 0.0 {
        span * 0.04
    } else {
        (lo.abs() * 0.01).max(1e-3)
    };
    (lo - pad, hi + pad)
}

pub(super) fn min_of(samples: &[(f64, OutlierClass)]) -> f64 {
    samples.iter().map(|s| s.0).fold(f64::INFINITY, f64::min)
}

pub(super) fn max_of(samples: &[(f64, OutlierClass)]) -> f64 {
    samples
        .iter()
        .map(|s| s.0)
        .fold(f64::NEG_INFINITY, f64::max)
}

/// At most `limit` items, evenly spaced, with their index in `items`.
pub(super) fn evenly<T: Copy>(items: &[T], limit: usize) -> Vec<(usize, T)> {
    let n = items.len();
    if n <= limit {
        return items.iter().copied().enumerate().collect();
    }
    (0..limit)
        .map(|k| {
            let i = k * n / limit;
            (i, items[i])
        })
        .collect()
}
