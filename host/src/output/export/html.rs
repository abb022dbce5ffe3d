//! One self-contained HTML page of a run or a comparison: the environment,
//! the results table, and inline SVG plots drawn with plotters: per measured
//! row the distribution of its samples (histogram, median, outliers), per
//! complexity fit the medians against size with the fitted curve, and for a
//! comparison the ratios with their intervals against the noise band.
//!
//! The page loads nothing: inline CSS, no script, no font, no image file. The
//! only URL in it is the SVG namespace (`xmlns`), which is a name, not a
//! resource.

use std::error::Error;
use std::fmt::Write;

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::output::units::{format_count, format_ns, unit_for};
use crate::results::CompareReport;
use crate::results::OutlierClass;
use crate::results::Verdict;
use crate::results::{BenchResult, ComplexityResult, Environment, Figures, RunReport, Tool};

use crate::output::cells::{Cells, format_ratio, row_notes};

/// Width of every plot, in px.
const WIDTH: u32 = 640;
/// At most this many samples go into a histogram (evenly spaced).
const MAX_HISTOGRAM_SAMPLES: usize = 20_000;
/// At most this many points per class (regular, mild, severe) in the strip
/// under a histogram.
const MAX_STRIP_POINTS: usize = 600;

const FONT: &str = "sans-serif";
const BAR: RGBColor = RGBColor(76, 120, 168);
const MEDIAN: RGBColor = RGBColor(0, 0, 0);
const MILD: RGBColor = RGBColor(245, 133, 24);
const SEVERE: RGBColor = RGBColor(214, 39, 40);
const FIT: RGBColor = RGBColor(214, 39, 40);
const FASTER: RGBColor = RGBColor(44, 160, 44);
const SAME: RGBColor = RGBColor(110, 110, 110);
const UNSURE: RGBColor = RGBColor(255, 127, 14);

type Plot<T> = Result<T, Box<dyn Error>>;

const STYLE: &str = r#"
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: #1f2328; background: #fff; margin: 0 auto; max-width: 1040px; padding: 12px 24px 40px; }
h1 { font-size: 1.45em; margin: 0.3em 0 0.2em; }
h2 { font-size: 1.15em; margin: 1.6em 0 0.5em; padding-bottom: 0.2em; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 1em; margin: 0 0 0.2em; overflow-wrap: anywhere; }
dl.env { display: grid; grid-template-columns: max-content 1fr; gap: 1px 16px; margin: 0.6em 0; }
dl.env dt { color: #59636e; }
dl.env dd { margin: 0; }
.warn { background: #fff8c5; border: 1px solid #d4a72c; border-radius: 4px; padding: 4px 10px; margin: 4px 0; }
.table { overflow-x: auto; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin: 0.4em 0; }
th, td { padding: 3px 10px; border-bottom: 1px solid #d8dee4; text-align: right; white-space: nowrap; }
th { background: #f6f8fa; font-weight: 600; }
th:first-child, td:first-child { text-align: left; }
td.name { white-space: normal; overflow-wrap: anywhere; max-width: 320px; }
td.error { color: #b3261e; text-align: left; white-space: normal; }
td.left, th.left { text-align: left; }
.faster { color: #1a7f37; font-weight: 600; }
.slower { color: #b3261e; font-weight: 600; }
.unsure { color: #9a6700; font-weight: 600; }
ul.notes { margin: 0.4em 0; padding-left: 1.3em; color: #3d444d; }
a { color: #0969da; text-decoration: none; }
a:hover { text-decoration: underline; }
figure { margin: 1.2em 0 1.6em; max-width: 640px; }
figure svg { display: block; width: 100%; height: auto; border: 1px solid #e4e8ec; border-radius: 4px; }
figcaption { color: #3d444d; font-size: 0.93em; margin-bottom: 4px; }
.legend { color: #3d444d; font-size: 0.93em; }
.legend i { display: inline-block; width: 10px; height: 10px; border-radius: 50%; margin: 0 4px 0 12px; vertical-align: -1px; }
.legend i.bar { border-radius: 0; }
.legend i.line { width: 3px; border-radius: 0; }
footer { margin-top: 2em; color: #59636e; font-size: 0.9em; }
"#;

/// The report of `host run` as one HTML page: environment, results table,
/// a histogram of the samples of every measured row, and a plot of every
/// complexity fit.
pub fn html_run(report: &RunReport) -> String {
    let mut page = start("wasm-bench run", &report.tool, &report.environment);
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
    let mut page = start("wasm-bench compare", &report.tool, &report.environment);
    page.push_str("<h2>Variants</h2>\n");
    results_table(&mut page, &report.variants);
    let metric = report
        .comparisons
        .first()
        .map_or("time", |c| c.metric.as_str());
    let _ = writeln!(
        page,
        "<h2>Verdicts</h2>\n<p>Ratios of {} per op against <b>{}</b>: {} rounds of interleaved samples, count {} shared, {:.2} s; {}.</p>",
        escape(metric),
        escape(&report.reference),
        report.rounds,
        report.count,
        report.sampling_ms / 1e3,
        report.noise_band()
    );
    page.push_str("<div class=\"table\"><table>\n<tr><th>variant</th><th class=\"left\">vs</th><th>ratio</th><th>95% CI</th><th class=\"left\">verdict</th><th class=\"left\">in words</th></tr>\n");
    for c in &report.comparisons {
        let _ = writeln!(
            page,
            "<tr><td class=\"name\">{}</td><td class=\"left\">{}</td><td>{}</td><td>[{}, {}]</td><td class=\"left {}\">{}</td><td class=\"left\">{}</td></tr>",
            escape(&c.variant),
            escape(&c.reference),
            format_ratio(c.ratio.value),
            format_ratio(c.ratio.low),
            format_ratio(c.ratio.high),
            verdict_class(c.verdict),
            c.verdict,
            escape(&c.text)
        );
    }
    page.push_str("</table></div>\n");
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

/// The head of the page, the title and the environment.
fn start(title: &str, tool: &Tool, env: &Environment) -> String {
    let mut page = String::with_capacity(64 * 1024);
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<header>\n<h1>{title}</h1>\n"
    );
    let core = match env.pinned_core {
        Some(c) => format!("pinned to core {c}"),
        None => "not pinned".to_string(),
    };
    let engines = env
        .engines
        .iter()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let mut calls = format!(
        "empty-guest call {} · pause/resume pair {}",
        format_ns(env.empty_call_ns),
        format_ns(env.pause_pair_ns)
    );
    if let (Some(call), Some(pair)) = (env.empty_component_call_ns, env.component_pause_pair_ns) {
        let _ = write!(
            calls,
            "; components: empty-guest call {} · pause/resume pair {}",
            format_ns(call),
            format_ns(pair)
        );
    }
    let rows = [
        (
            "cpu",
            format!(
                "{} · {} cores",
                env.cpu_model.as_deref().unwrap_or("unknown CPU"),
                env.cores
            ),
        ),
        ("core", core),
        ("priority", env.priority.clone()),
        (
            "clock",
            format!(
                "resolution {}, read {}",
                format_ns(env.clock_resolution_ns),
                format_ns(env.clock_overhead_ns)
            ),
        ),
        ("engines", engines),
        ("calls", calls),
        (
            "sampling",
            format!(
                "target {:.1} ms per sample · drift ±{}% · seed {}",
                env.sample_time_ms, env.drift_pct, env.seed
            ),
        ),
        (
            "limits",
            format!(
                "memory {} per instance · {:.0} ms per call",
                crate::util::bytes::format_bytes(env.max_memory_bytes),
                env.timeout_ms
            ),
        ),
        (
            "compile cache",
            env.compile_cache
                .clone()
                .unwrap_or_else(|| "off".to_string()),
        ),
    ];
    page.push_str("<dl class=\"env\">\n");
    for (term, value) in rows {
        let _ = writeln!(page, "<dt>{term}</dt><dd>{}</dd>", escape(&value));
    }
    page.push_str("</dl>\n");
    for warning in &env.warnings {
        let _ = writeln!(page, "<p class=\"warn\">warning: {}</p>", escape(warning));
    }
    let _ = writeln!(page, "</header>\n<!-- {} {} -->", tool.name, tool.version);
    page
}

fn finish(mut page: String, tool: &Tool) -> String {
    let _ = writeln!(
        page,
        "<footer>Made by {} {}. All figures are per op, after subtracting the fixed cost of a call; intervals are 95%.</footer>\n</body>\n</html>",
        tool.name, tool.version
    );
    page
}

/// The results table, and the notes under it.
fn results_table(page: &mut String, results: &[BenchResult]) {
    page.push_str("<div class=\"table\"><table>\n<tr><th>benchmark</th><th>time/op</th><th>± err%</th><th>95% CI</th><th>ops/s</th><th>samples</th><th>count</th><th>outliers</th></tr>\n");
    let mut notes = Vec::new();
    for (i, r) in results.iter().enumerate() {
        let name = escape(&r.name);
        let Some(f) = &r.figures else {
            let error = r.error.as_deref().unwrap_or("not measured");
            let _ = writeln!(
                page,
                "<tr><td class=\"name\">{name}</td><td class=\"error\" colspan=\"7\">error: {}</td></tr>",
                escape(error)
            );
            continue;
        };
        let c = Cells::of(f);
        let _ = writeln!(
            page,
            "<tr><td class=\"name\"><a href=\"#row-{i}\">{name}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            c.time, c.err, c.ci, c.rate, f.counts.samples, c.count, f.time.outliers
        );
        for note in row_notes(r) {
            notes.push(format!("<li><b>{name}</b>: {}</li>", escape(&note)));
        }
    }
    page.push_str("</table></div>\n");
    if !notes.is_empty() {
        page.push_str("<ul class=\"notes\">\n");
        for note in notes {
            page.push_str(&note);
            page.push('\n');
        }
        page.push_str("</ul>\n");
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
            c.err.trim_start_matches('±'),
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

/// A row's per-op samples with their Tukey classes, and the axis to show
/// them on.
struct Distribution {
    samples: Vec<(f64, OutlierClass)>,
    median: f64,
    ci95: (f64, f64),
    lo: f64,
    hi: f64,
}

impl Distribution {
    /// `None` without a finite sample.
    fn of(f: &Figures) -> Option<Self> {
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
    fn beyond(&self) -> Option<String> {
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
fn histogram_svg(d: &Distribution) -> Plot<String> {
    let (samples, median, lo, hi) = (&d.samples, d.median, d.lo, d.hi);
    let (ci_lo, ci_hi) = d.ci95;
    let unit = unit_for(&[lo, hi]);
    let scale = |ns: f64| ns / unit.ns;
    // One number of decimals for every tick (the ticks are about a
    // tenth of the axis apart).
    let decimals = (-(scale(hi - lo) / 8.0).log10().floor()).clamp(0.0, 6.0) as usize;
    let tick = |x: &f64| format!("{x:.decimals$}");

    // Bars over an even subset of at most MAX_HISTOGRAM_SAMPLES samples.
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

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, 300)).into_drawing_area();
        root.fill(&WHITE)?;
        let (upper, lower) = root.split_vertically(222);
        let (x_lo, x_hi) = (scale(lo), scale(hi));
        let mut chart = ChartBuilder::on(&upper)
            .margin_top(10)
            .margin_right(20)
            .y_label_area_size(56)
            .build_cartesian_2d(x_lo..x_hi, 0u32..y_max)?;
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

        // The strip: every sample a dot (at most MAX_STRIP_POINTS per class),
        // jittered vertically; samples beyond the axis sit at its edge.
        let mut strip = ChartBuilder::on(&lower)
            .margin_right(20)
            .margin_bottom(4)
            .x_label_area_size(38)
            .y_label_area_size(56)
            .build_cartesian_2d(x_lo..x_hi, 0f64..1f64)?;
        strip
            .configure_mesh()
            .disable_mesh()
            .y_labels(0)
            .x_labels(8)
            .x_label_formatter(&tick)
            .x_desc(format!("time per op ({})", unit.name))
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
        root.present()?;
    }
    Ok(svg)
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
fn histogram_range(samples: &[(f64, OutlierClass)], fences: &[f64; 4], median: f64) -> (f64, f64) {
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

fn min_of(samples: &[(f64, OutlierClass)]) -> f64 {
    samples.iter().map(|s| s.0).fold(f64::INFINITY, f64::min)
}

fn max_of(samples: &[(f64, OutlierClass)]) -> f64 {
    samples
        .iter()
        .map(|s| s.0)
        .fold(f64::NEG_INFINITY, f64::max)
}

/// At most `limit` items, evenly spaced, with their index in `items`.
fn evenly<T: Copy>(items: &[T], limit: usize) -> Vec<(usize, T)> {
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

/// Median time per op against size, with the best fit coefficient · g(n):
/// log-log when the sizes span a decade or more, linear otherwise.
fn complexity_svg(fit: &ComplexityResult) -> Plot<String> {
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

fn fit_chart<X, Y>(
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

/// One row per comparison: the ratio (dot) and its interval (bar), a line at
/// 1 and the noise band shaded.
fn ratio_svg(report: &CompareReport) -> Plot<String> {
    let comparisons = &report.comparisons;
    let n = comparisons.len();
    let noise = report.noise_band().half();
    let (band_lo, band_hi) = (1.0 / (1.0 + noise), 1.0 + noise);
    let (mut lo, mut hi) = comparisons
        .iter()
        .flat_map(|c| [c.ratio.low, c.ratio.value, c.ratio.high])
        .filter(|x| x.is_finite())
        .fold((band_lo, band_hi), |(a, b), x| (a.min(x), b.max(x)));
    let pad = ((hi - lo) * 0.08).max(0.005);
    lo -= pad;
    hi += pad;
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
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
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
            .y_labels(0)
            .x_labels(8)
            .x_desc(format!(
                "ratio to {} (below 1: faster)",
                shorten(&report.reference, 40)
            ))
            .x_label_formatter(&|r| format!("{r:.2}×"))
            .light_line_style(WHITE.mix(0.0))
            .bold_line_style(BLACK.mix(0.1))
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 14))
            .draw()?;
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
            let color = verdict_color(c.verdict);
            if c.ratio.low.is_finite() && c.ratio.high.is_finite() {
                chart.draw_series(std::iter::once(ErrorBar::new_horizontal(
                    y,
                    c.ratio.low,
                    c.ratio.value,
                    c.ratio.high,
                    color.stroke_width(2),
                    12,
                )))?;
            }
            if c.ratio.value.is_finite() {
                let style = TextStyle::from((FONT, 14).into_font())
                    .color(&color)
                    .pos(Pos::new(HPos::Center, VPos::Bottom));
                chart.draw_series(std::iter::once(
                    EmptyElement::at((c.ratio.value, y))
                        + Circle::new((0, 0), 5, color.filled())
                        + Text::new(
                            format!("{} {}", format_ratio(c.ratio.value), c.verdict),
                            (0, -9),
                            style,
                        ),
                ))?;
            }
            let (px, py) = chart.backend_coord(&(lo, y));
            let style = TextStyle::from((FONT, 14).into_font())
                .color(&BLACK)
                .pos(Pos::new(HPos::Right, VPos::Center));
            root.draw(&Text::new(names[i].clone(), (px - 8, py), style))?;
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

/// At most `max` characters, an ellipsis in the middle when cut.
fn shorten(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let keep = max - 1;
    let head: String = s.chars().take(keep / 2).collect();
    let tail: String = s.chars().skip(n - (keep - keep / 2)).collect();
    format!("{head}…{tail}")
}

fn verdict_color(v: Verdict) -> RGBColor {
    match v {
        Verdict::Faster => FASTER,
        Verdict::Slower => SEVERE,
        Verdict::Same => SAME,
        Verdict::Unsure => UNSURE,
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

fn hex(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// Text for HTML content or a quoted attribute.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::export::fixtures;
    use crate::results::Complexity;

    /// Every `http://` or `https://` in the page is an SVG namespace, and
    /// no `src=` or `href=` leaves the page.
    fn assert_self_contained(html: &str) {
        for scheme in ["http://", "https://"] {
            for (at, _) in html.match_indices(scheme) {
                assert!(
                    html[..at].ends_with("xmlns=\""),
                    "network reference at {at}: {}",
                    &html[at.saturating_sub(40)..(at + 60).min(html.len())]
                );
            }
        }
        assert!(!html.contains("src="));
        assert!(!html.contains("<script"));
        assert!(!html.contains("<link"));
        assert!(!html.contains("url("));
        for (at, _) in html.match_indices("href=") {
            assert!(html[at..].starts_with("href=\"#"), "{}", &html[at..at + 40]);
        }
    }

    #[test]
    fn run_page_has_one_histogram_per_measured_row_and_one_plot_per_fit() {
        let report = fixtures::realistic_run_report();
        let html = html_run(&report);
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.trim_end().ends_with("</html>"));
        let measured = report
            .results
            .iter()
            .filter(|r| r.figures.is_some())
            .count();
        assert_eq!(measured, 5);
        assert_eq!(
            html.matches("<figure class=\"plot histogram\"").count(),
            measured
        );
        assert_eq!(html.matches("<figure class=\"plot complexity\"").count(), 1);
        assert_eq!(html.matches("<svg").count(), measured + 1);
        assert_eq!(html.matches("</svg>").count(), measured + 1);
        assert!(!html.contains("no plot"));
        // Every measured row links to its plot.
        for i in [0, 1, 2, 3, 4] {
            assert!(html.contains(&format!("href=\"#row-{i}\"")));
            assert!(html.contains(&format!("id=\"row-{i}\"")));
        }
        assert!(html.contains("error: wasm trap: wasm `unreachable` instruction executed"));
        assert!(html.contains("<dt>core</dt><dd>pinned to core 3</dd>"));
        assert!(html.contains("<dt>cpu</dt><dd>Test CPU @ 3.00GHz · 8 cores</dd>"));
        assert!(html.contains("<dt>engines</dt><dd>cranelift (opt-level speed)</dd>"));
        assert!(html.contains("median "));
        assert!(html.contains("time per op (µs)"));
        assert_self_contained(&html);
    }

    #[test]
    fn two_row_page_has_one_histogram_and_no_complexity() {
        let html = html_run(&fixtures::run_report());
        assert_eq!(html.matches("<figure class=\"plot histogram\"").count(), 1);
        assert_eq!(html.matches("<figure class=\"plot complexity\"").count(), 0);
        assert_eq!(html.matches("<svg").count(), 1);
        assert!(html.contains(
            "<td class=\"error\" colspan=\"7\">error: wasm trap: unreachable, in `run`</td>"
        ));
        assert!(html.contains("<li><b>xor.wasm</b>: warm-up did not settle within 500 ms</li>"));
        assert_self_contained(&html);
    }

    #[test]
    fn names_and_errors_are_escaped() {
        let mut report = fixtures::run_report();
        report.results[0].name = "<script>alert(1)</script>".to_string();
        report.results[1].error = Some("bad <b>\"quote\"</b> & more".to_string());
        report.environment.warnings = vec!["<img src=x>".to_string()];
        let html = html_run(&report);
        assert!(!html.contains("<script>"));
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("bad &lt;b&gt;&quot;quote&quot;&lt;/b&gt; &amp; more"));
        assert!(html.contains("&lt;img src=x&gt;"));
        assert!(!html.contains("<img"));
    }

    #[test]
    fn compare_page_has_the_ratio_chart_and_every_variant() {
        let report = fixtures::compare_report();
        let html = html_compare(&report);
        assert_eq!(html.matches("<figure class=\"plot ratios\"").count(), 1);
        assert_eq!(
            html.matches("<figure class=\"plot histogram\"").count(),
            report.variants.len()
        );
        assert_eq!(html.matches("<svg").count(), report.variants.len() + 1);
        assert!(html.contains("<td class=\"left slower\">slower</td>"));
        assert!(html.contains("<td class=\"left faster\">faster</td>"));
        assert!(html.contains("noise band ±0.5%"));
        assert!(html.contains("1.200× slower"));
        assert_self_contained(&html);
    }

    #[test]
    fn complexity_plots_log_or_linear_and_survive_odd_points() -> Plot<()> {
        // A decade or more of sizes: log-log; a small span: linear.
        let wide = fixtures::fit_of(
            "wide",
            Complexity::Linearithmic,
            vec![(10, 66.0), (100, 1329.0), (1000, 19932.0)],
        );
        let narrow = fixtures::fit_of("narrow", Complexity::Linear, vec![(10, 20.0), (20, 41.0)]);
        // O(log n) at n = 1 is 0: not drawable on a log axis, left out.
        let from_one = fixtures::fit_of(
            "from-one",
            Complexity::Logarithmic,
            vec![(1, 5.0), (16, 8.0), (256, 16.0)],
        );
        for fit in [wide, narrow, from_one] {
            let svg = complexity_svg(&fit)?;
            assert!(svg.starts_with("<svg"), "{}", fit.benchmark);
            assert!(svg.contains("median per size"));
            assert!(svg.contains("<polyline"));
        }
        let empty = fixtures::fit_of("empty", Complexity::Constant, vec![]);
        assert!(complexity_svg(&empty).is_err());
        Ok(())
    }

    #[test]
    fn histograms_survive_constant_empty_and_negative_samples() -> Plot<()> {
        let svg = |f: &Figures| -> Plot<String> {
            histogram_svg(&Distribution::of(f).ok_or("no samples")?)
        };
        let mut f = fixtures::fixed_figures(vec![vec![5.0; 50]]);
        f.ns_per_op.median = 5.0;
        assert!(svg(&f)?.starts_with("<svg"));
        f.series.epochs_ns_per_op = vec![vec![-0.2, 0.1, 0.0, -0.05, 0.3]];
        f.series.epoch_classes = vec![];
        f.ns_per_op.median = 0.0;
        assert!(svg(&f)?.starts_with("<svg"));
        f.series.epochs_ns_per_op = vec![vec![f64::NAN]];
        assert!(Distribution::of(&f).is_none());
        f.series.epochs_ns_per_op = vec![];
        assert!(Distribution::of(&f).is_none());
        Ok(())
    }

    #[test]
    fn far_outliers_are_counted_at_the_edge_and_large_runs_are_thinned() -> Plot<()> {
        let mut blocks = fixtures::samples(100.0, 0.01, 100, 300, 3);
        blocks[0][0] = 100_000.0;
        let f = fixtures::figures_from(blocks, 10, 3);
        let d = Distribution::of(&f).ok_or("no samples")?;
        let beyond = d.beyond().ok_or("nothing beyond")?;
        assert!(
            beyond.contains(" beyond the axis (up to 100.0 µs)"),
            "{beyond}"
        );
        assert!(d.hi < 1000.0, "the axis ends at {}", d.hi);
        let svg = histogram_svg(&d)?;
        // 30,000 samples: the strip holds at most MAX_STRIP_POINTS per class.
        assert!(svg.matches("<circle").count() <= 3 * MAX_STRIP_POINTS);
        assert!(svg.len() < 400_000, "{} bytes", svg.len());
        Ok(())
    }

    #[test]
    fn evenly_keeps_at_most_the_limit() {
        let items: Vec<u32> = (0..10).collect();
        assert_eq!(evenly(&items, 20).len(), 10);
        let picked = evenly(&items, 4);
        assert_eq!(picked, vec![(0, 0), (2, 2), (5, 5), (7, 7)]);
        assert_eq!(shorten("abcdefghij", 5), "ab…ij");
        assert_eq!(shorten("abc", 5), "abc");
    }

    /// Renders a realistic run page and a compare page in headless Chromium
    /// when `/usr/bin/chromium` exists, and checks the screenshots are real
    /// images; skipped (passing) without Chromium. Set
    /// `WASM_BENCH_KEEP_HTML=DIR` to keep the pages and screenshots in DIR.
    #[test]
    fn pages_render_in_headless_chromium() -> Result<(), Box<dyn Error>> {
        let chromium = std::path::Path::new("/usr/bin/chromium");
        let keep = std::env::var_os("WASM_BENCH_KEEP_HTML").map(std::path::PathBuf::from);
        let dir = match &keep {
            Some(dir) => dir.clone(),
            None => std::env::temp_dir().join(format!("wasm-bench-html-{}", std::process::id())),
        };
        std::fs::create_dir_all(&dir)?;
        let pages = [
            ("run", html_run(&fixtures::realistic_run_report())),
            ("compare", html_compare(&fixtures::compare_report())),
        ];
        for (name, html) in &pages {
            std::fs::write(dir.join(format!("{name}.html")), html)?;
        }
        if !chromium.exists() {
            println!("skipped: /usr/bin/chromium not found; the pages were not rendered");
            if keep.is_none() {
                std::fs::remove_dir_all(&dir)?;
            }
            return Ok(());
        }
        for (name, _) in &pages {
            let html = dir.join(format!("{name}.html"));
            let shot = dir.join(format!("{name}.png"));
            let profile = dir.join(format!("profile-{name}"));
            let _ = std::fs::remove_file(&shot);
            let mut child = std::process::Command::new(chromium)
                .args([
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--no-first-run",
                    "--hide-scrollbars",
                ])
                .arg(format!("--user-data-dir={}", profile.display()))
                .arg(format!("--screenshot={}", shot.display()))
                .arg("--window-size=1000,2000")
                .arg(format!("file://{}", html.display()))
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()?;
            let started = std::time::Instant::now();
            let status = loop {
                if let Some(status) = child.try_wait()? {
                    break status;
                }
                if started.elapsed() > std::time::Duration::from_secs(120) {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!("{name}: chromium took over 120 s").into());
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            };
            assert!(status.success(), "chromium: {status}");
            let png = std::fs::read(&shot)?;
            assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{name}: not a PNG");
            // A blank 1000x2000 page compresses to a few KB; plots and text
            // make it far larger.
            assert!(png.len() > 40_000, "{name}: {} bytes", png.len());
        }
        if keep.is_none() {
            std::fs::remove_dir_all(&dir)?;
        }
        Ok(())
    }
}
