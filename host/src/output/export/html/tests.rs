//! Tests of the HTML pages: their sections, their plots, escaping, and that
//! they load nothing.

use super::charts::shorten;
use super::histogram::evenly;
use std::error::Error;

use super::*;
use crate::analysis::fixtures;
use crate::output::export::html::palette::MAX_STRIP_POINTS;
use crate::results::{Complexity, Figures};

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
fn a_run_across_engines_has_the_runtime_table_a_grouped_chart_and_a_forest_plot() {
    let html = html_run(&fixtures::runtimes_run_report());
    assert_self_contained(&html);
    let (_, section) = html.split_once("<h2>Runtimes</h2>").expect("the section");
    let section = section.split("<h2>").next().unwrap_or_default();
    assert!(section.contains("<th>cranelift</th><th>wasmi</th><th>v8</th>"));
    assert_eq!(section.matches("<svg").count(), 2, "{section}");
    // Two benchmarks under two engines besides the reference, then a
    // diamond per engine.
    assert_eq!(section.matches("<g class=\"benchmark\">").count(), 4);
    assert_eq!(section.matches("<g class=\"geomean\">").count(), 3);
    assert!(section.contains("<title>sort · v8: 0.8"), "{section}");
    assert!(
        !html
            .split("<h2>Runtimes</h2>")
            .next()
            .unwrap_or_default()
            .contains("forest")
    );
    assert!(!section.contains("<h3>Start</h3>"), "no row has a start");
    let plain = html_run(&fixtures::run_report());
    assert!(!plain.contains("<h2>Runtimes</h2>"));
    let mut started = fixtures::runtimes_run_report();
    started.runtimes = Some(crate::output::runtime_table::tests::started_view());
    let html = html_run(&started);
    let (_, start) = html.split_once("<h3>Start</h3>").expect("a start table");
    assert!(
        start.contains("<td>5.000 µs 0.50× [0.40, 0.60]<br>100.0 ns 0.50× [0.40, 0.60]</td>"),
        "{start}"
    );
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
    report.results[0].name = "<script>alert(1)</script>".into();
    report.results[1].error = Some("bad <b>\"quote\"</b> & more".into());
    report.environment.warnings = vec!["<img src=x>".into()];
    let html = html_run(&report);
    assert!(!html.contains("<script>"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("bad &lt;b&gt;&quot;quote&quot;&lt;/b&gt; &amp; more"));
    assert!(html.contains("&lt;img src=x&gt;"));
    assert!(!html.contains("<img"));
}

#[test]
fn narrow_intervals_show_their_width_and_err_is_escaped() {
    let mut report = fixtures::run_report();
    let f = report.results[0].figures.as_mut().expect("measured");
    f.ns_per_op.median = 16.5096;
    f.ns_per_op.ci95_low = 16.507;
    f.ns_per_op.ci95_high = 16.512;
    f.time.err_pct = 0.00004;
    let html = html_run(&report);
    assert!(
        html.contains("<td>16.510 ns</td><td>±&lt;0.0001%</td><td>[16.507 ns, 16.512 ns]</td>")
    );
    assert!(html.contains("median 16.510 ns ±&lt;0.0001% · 95% CI [16.507 ns, 16.512 ns]"));
    assert!(!html.contains("<0.0001"));

    let mut report = fixtures::compare_report();
    let ratio = &mut report.comparisons[0].ratio;
    (ratio.value, ratio.low, ratio.high) = (1.4622, 1.4620, 1.4790);
    let html = html_compare(&report);
    assert!(html.contains("<td>1.4622×</td><td>[1.4620×, 1.4790×]</td>"));
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

/// Ratios a saved report may hold, however absurd (near the largest
/// double, the least one, infinite, NaN), draw in bounded time on a
/// clamped axis, the values beyond it marked (issue #30).
#[test]
fn absurd_ratios_draw_on_a_clamped_axis_in_bounded_time() {
    let cases = [
        (f64::MAX, f64::MAX / 2.0, f64::MAX, true),
        (1.7e308, 0.5, f64::INFINITY, true),
        (5e-324, 5e-324, 1e-300, true),
        (0.5, 1e-5, 2.0, true),
        (f64::INFINITY, 1.0, f64::INFINITY, false),
        (f64::NAN, f64::NEG_INFINITY, 1.0, false),
        (1.2, 1.17, 1.23, false),
    ];
    for (value, low, high, marked) in cases {
        let mut report = fixtures::compare_report();
        let ratio = &mut report.comparisons[0].ratio;
        (ratio.value, ratio.low, ratio.high) = (value, low, high);
        let started = std::time::Instant::now();
        let html = html_compare(&report);
        let took = started.elapsed();
        assert!(
            took < std::time::Duration::from_secs(5),
            "{value}: {took:?}"
        );
        assert_eq!(html.matches("<figure class=\"plot ratios\"").count(), 1);
        let svg = html
            .split("<figure class=\"plot ratios\"")
            .nth(1)
            .unwrap_or("");
        let svg = svg.split("</figure>").next().unwrap_or("");
        assert_eq!(svg.contains("(beyond the axis)"), marked, "{value}: {svg}");
        assert!(
            !svg.contains("inf") && !svg.contains("NaN"),
            "{value}: {svg}"
        );
    }
}

#[test]
fn compare_page_of_programs_has_a_table_of_phases() {
    let html = html_compare(&fixtures::compare_programs_report());
    assert_eq!(html.matches("<h3>Per phase</h3>").count(), 1);
    assert!(html.contains(
        "<tr><td class=\"name\">mod16.wasm</td><td class=\"left\">instantiate</td><td>1.002×</td><td>[0.990×, 1.010×]</td><td class=\"left same\">same</td></tr>"
    ));
    assert!(html.contains("rounds of interleaved iterations"));
    assert!(!html_compare(&fixtures::compare_report()).contains("Per phase"));
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
        assert!(svg.starts_with("<svg"), "{:?}", fit.benchmark);
        assert!(svg.contains("median per size"));
        assert!(svg.contains("<polyline"));
    }
    let empty = fixtures::fit_of("empty", Complexity::Constant, vec![]);
    assert!(complexity_svg(&empty).is_err());
    Ok(())
}

#[test]
fn histograms_survive_constant_empty_and_negative_samples() -> Plot<()> {
    let svg =
        |f: &Figures| -> Plot<String> { histogram_svg(&Distribution::of(f).ok_or("no samples")?) };
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

#[test]
fn the_ratio_axis_is_padded_and_ticked_from_end_to_end() {
    for (lo, hi) in [
        (0.69, 1.23),
        (0.995, 1.005),
        (0.001, 1000.0),
        (1.0, 1.0),
        (0.4999, 2.5001),
        (0.97, 1.6),
    ] {
        let axis = super::charts::RatioAxis::over(lo, hi);
        let ticks = &axis.ticks;
        assert!(axis.low < lo || axis.low == 0.0, "{lo}..{hi}: {axis:?}");
        assert!(axis.high > hi, "{lo}..{hi}: {axis:?}");
        assert_eq!(ticks.first(), Some(&axis.low), "{axis:?}");
        assert_eq!(ticks.last(), Some(&axis.high), "{axis:?}");
        assert!((5..=12).contains(&ticks.len()), "{lo}..{hi}: {axis:?}");
        let step = ticks[1] - ticks[0];
        for pair in ticks.windows(2) {
            assert!(((pair[1] - pair[0]) - step).abs() < step * 1e-9, "{axis:?}");
        }
        // Neighbouring labels differ.
        let labels: Vec<String> = ticks
            .iter()
            .map(|t| format!("{t:.d$}", d = axis.decimals))
            .collect();
        assert!(labels.windows(2).all(|l| l[0] != l[1]), "{labels:?}");
    }
}

#[test]
fn the_ratio_plot_uses_the_page_width() -> Result<(), Box<dyn Error>> {
    let svg = super::charts::ratio_svg(&fixtures::compare_report())?;
    let width = format!("width=\"{}\"", super::charts::RATIO_WIDTH);
    assert!(
        svg.starts_with("<svg") && svg[..200].contains(&width),
        "{}",
        &svg[..200]
    );
    const { assert!(super::charts::RATIO_WIDTH >= 960) };
    assert!(STYLE.contains("figure.ratios { max-width: none; }"));
    Ok(())
}

/// A table declared once shows the same columns and rows in Markdown and
/// in HTML.
#[test]
fn markdown_and_html_show_each_table_alike() {
    let report = fixtures::compare_report();
    let programs = fixtures::compare_programs_report();
    let tables = [
        tables::results(&report.variants),
        tables::verdicts(&report),
        tables::phases(&programs),
    ];
    for table in &tables {
        assert!(!table.rows.is_empty());
        let markdown = crate::output::export::markdown::render(table);
        let mut html = String::new();
        render(&mut html, table);
        let header = markdown.lines().next().unwrap_or_default();
        for column in table.columns {
            assert!(
                header.contains(&format!("| {} |", column.title)),
                "{header}"
            );
            assert!(html.contains(&format!(">{}</th>", column.title)), "{html}");
        }
        assert_eq!(markdown.lines().count(), table.rows.len() + 2, "{markdown}");
        assert_eq!(html.matches("<tr>").count(), table.rows.len() + 1, "{html}");
    }
}
