//! The runtime view ([`RuntimeView`]) as every format shows it: the
//! columns, each cell's text (an engine's median and its ratio to the
//! reference with the interval), an engine's geometric mean, the fastest
//! engine and how clearly, how fresh instances start; and the terminal's
//! tables of them. Cell texts
//! are made of numbers only; names (benchmarks, engines) are outside text,
//! escaped by each format with the function it passes in.

use std::io::{self, Write};

use crate::output::escape::terminal;
use crate::output::units::{decimals_apart, format_ns};
use crate::results::{
    EngineMean, Foreign, Ratio, RuntimeBenchmark, RuntimeCell, RuntimeView, StartCell,
};

/// What the table shows, in a sentence (names escaped by `escape`).
pub fn caption(view: &RuntimeView, escape: impl Fn(&Foreign) -> String) -> String {
    let ratio = match view.paired {
        true => {
            ": the ratio of the paired rounds with its interval at the comparison's confidence (Bonferroni's with three engines or more)"
        }
        false => " with the 95% interval (each row measured in processes of its own, so unpaired)",
    };
    format!(
        "Each engine's median per op and its ratio to {}{ratio}; the geometric mean of an engine's ratios assumes the benchmarks independent. Fastest: the lowest median; `a ≈ b` when the runner-up's interval reaches the fastest's.",
        escape(&view.reference)
    )
}

/// The header's cells: the benchmark, each engine, the fastest.
pub fn header(view: &RuntimeView, escape: impl Fn(&Foreign) -> String) -> Vec<String> {
    std::iter::once("benchmark".to_string())
        .chain(view.engines.iter().map(&escape))
        .chain(std::iter::once("fastest".to_string()))
        .collect()
}

/// One benchmark's cells, in the header's order, each engine's median
/// and ratio joined by `join`.
pub fn row(b: &RuntimeBenchmark, escape: impl Fn(&Foreign) -> String, join: &str) -> Vec<String> {
    std::iter::once(escape(&b.benchmark))
        .chain(b.cells.iter().map(|c| cell_text(c, join)))
        .chain(std::iter::once(fastest_text(b, escape)))
        .collect()
}

/// The geometric means' cells, in the header's order.
pub fn means_row(view: &RuntimeView) -> Vec<String> {
    std::iter::once("geometric mean".to_string())
        .chain(view.means.iter().map(mean_text))
        .chain(std::iter::once(String::new()))
        .collect()
}

/// How many benchmarks each engine is the fastest on, in the header's
/// order.
pub fn fastest_row(view: &RuntimeView) -> Vec<String> {
    std::iter::once("fastest on".to_string())
        .chain(view.means.iter().map(|m| m.fastest.to_string()))
        .chain(std::iter::once(String::new()))
        .collect()
}

/// A cell: the median, then `join` and the ratio with its interval;
/// "failed" when the row has no figure ("unsupported" when its engine
/// cannot run the benchmark).
pub fn cell_text(cell: &RuntimeCell, join: &str) -> String {
    match (&cell.error, cell.ratio) {
        (Some(_), _) if cell.unsupported => "unsupported".to_string(),
        (Some(_), _) if cell.median_ns.is_nan() => "failed".to_string(),
        (_, Some(ratio)) => format!("{}{join}{}", format_ns(cell.median_ns), ratio_text(&ratio)),
        _ => format_ns(cell.median_ns),
    }
}

/// An engine's geometric mean over the benchmarks it has a ratio on, and
/// how many they are: `4.37× [4.12, 4.63] of 20`.
pub fn mean_text(m: &EngineMean) -> String {
    match m.ratio {
        Some(r) => format!("{} of {}", ratio_text(&r), m.benchmarks),
        None => "-".to_string(),
    }
}

/// `2.50× [2.41, 2.60]`, or `1×` when exact; `-` for what is not a number.
fn ratio_text(r: &Ratio) -> String {
    if !r.value.is_finite() {
        return "-".to_string();
    }
    if r.low == r.high && r.value == r.low {
        return match r.value.fract() == 0.0 {
            true => format!("{}×", r.value),
            false => format!("{:.3}×", r.value),
        };
    }
    // Three significant digits, more where the ends would print alike.
    let least = match r.value.abs() {
        v if v >= 100.0 => 0,
        v if v >= 10.0 => 1,
        _ => 2,
    };
    let d = decimals_apart(&[r.low, r.value, r.high], least, 6);
    format!("{:.d$}× [{:.d$}, {:.d$}]", r.value, r.low, r.high)
}

/// The fastest engine, `fastest ≈ runner-up` when not clearly ahead, `-`
/// when fewer than two engines measured work.
pub fn fastest_text(b: &RuntimeBenchmark, escape: impl Fn(&Foreign) -> String) -> String {
    match (&b.fastest, &b.runner_up) {
        (Some(f), Some(r)) if !b.clear() => format!("{} ≈ {}", escape(f), escape(r)),
        (Some(f), _) => escape(f),
        _ => "-".to_string(),
    }
}

/// The start of fresh instances, in a sentence.
pub const START_CAPTION: &str = "How fresh instances start under each engine: the median instantiation, then the median first call (`run(1, seed)` of a fresh instance, its fixed cost included), each with its ratio to the reference and the 95% interval. The first call is cold as a fresh instance is, not as a cold machine is.";

/// The start table's header: the benchmark and each engine (no fastest
/// column).
pub fn start_header(view: &RuntimeView, escape: impl Fn(&Foreign) -> String) -> Vec<String> {
    let mut cells = header(view, escape);
    cells.pop();
    cells
}

/// The start table's rows, a benchmark each where some engine measured a
/// start (see [`start_row`]); empty when none did.
pub fn start_rows(
    view: &RuntimeView,
    escape: impl Fn(&Foreign) -> String,
    join: &str,
) -> Vec<Vec<String>> {
    (view.benchmarks.iter())
        .filter_map(|b| start_row(b, &escape, join))
        .collect()
}

/// One benchmark's start cells, in the header's order (`-` where an
/// engine has none), the two phases joined by `join`; `None` when no
/// engine has one.
fn start_row(
    b: &RuntimeBenchmark,
    escape: impl Fn(&Foreign) -> String,
    join: &str,
) -> Option<Vec<String>> {
    b.cells.iter().any(|c| c.start.is_some()).then(|| {
        std::iter::once(escape(&b.benchmark))
            .chain(b.cells.iter().map(|c| match &c.start {
                Some(start) => start_text(start, join),
                None => "-".to_string(),
            }))
            .collect()
    })
}

/// A start cell: each phase's median and its ratio, joined by `join`.
fn start_text(start: &StartCell, join: &str) -> String {
    let phase = |median: f64, ratio: Option<Ratio>| match ratio {
        Some(r) => format!("{} {}", format_ns(median), ratio_text(&r)),
        None => format_ns(median),
    };
    format!(
        "{}{join}{}",
        phase(start.instantiate_ns, start.instantiate_ratio),
        phase(start.first_call_ns, start.first_call_ratio)
    )
}

/// The view as aligned tables on the terminal, each under its caption:
/// the steady state, then how fresh instances start, where they were
/// measured.
pub fn write_view(out: &mut dyn Write, view: &RuntimeView) -> io::Result<()> {
    let escape = |f: &Foreign| terminal(f).into_owned();
    let mut lines = vec![header(view, escape)];
    lines.extend(view.benchmarks.iter().map(|b| row(b, escape, " ")));
    lines.push(means_row(view));
    lines.push(fastest_row(view));
    writeln!(out, "runtimes: {}", caption(view, escape))?;
    write_aligned(out, &lines)?;
    let starts = start_rows(view, escape, " · ");
    if !starts.is_empty() {
        writeln!(out, "start: {START_CAPTION}")?;
        write_aligned(out, &[vec![start_header(view, escape)], starts].concat())?;
    }
    Ok(())
}

/// `lines` of cells as columns, each as wide as its widest cell.
fn write_aligned(out: &mut dyn Write, lines: &[Vec<String>]) -> io::Result<()> {
    let columns = lines.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            (lines.iter())
                .filter_map(|l| l.get(c))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for line in lines {
        let mut text = String::new();
        for (cell, width) in line.iter().zip(&widths) {
            let pad = width - cell.chars().count();
            text.push_str(cell);
            text.push_str(&" ".repeat(pad + 2));
        }
        writeln!(out, "  {}", text.trim_end())?;
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::analysis::fixtures::runtimes_run_report;

    #[test]
    fn the_terminal_table_aligns_its_columns_and_names_the_fastest() {
        let view = runtimes_run_report().runtimes.expect("a view");
        let mut out = Vec::new();
        write_view(&mut out, &view).expect("written");
        let text = String::from_utf8(out).expect("utf-8");
        let lines: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(lines.len(), 5, "header, xor, sort, means, fastest: {text}");
        let v8 = lines[0].find("v8").expect("a v8 column");
        for line in &lines {
            let chars: Vec<char> = line.chars().collect();
            assert!(
                chars[v8 - 2..v8] == [' ', ' '] && chars[v8] != ' ',
                "{line}"
            );
        }
        assert!(lines[1].ends_with("cranelift ≈ v8"), "{}", lines[1]);
        assert!(lines[2].ends_with("v8"), "{}", lines[2]);
        assert!(
            lines[3].starts_with("  geometric mean  1× of 2"),
            "{}",
            lines[3]
        );
    }

    /// A cell without a figure says whether its engine failed or cannot
    /// run the benchmark.
    #[test]
    fn a_cell_without_a_figure_says_failed_or_unsupported() {
        let cell = |unsupported| RuntimeCell {
            engine: "wasmer".into(),
            median_ns: f64::NAN,
            ratio: None,
            error: Some("why".into()),
            unsupported,
            start: None,
        };
        assert_eq!(cell_text(&cell(false), " "), "failed");
        assert_eq!(cell_text(&cell(true), " "), "unsupported");
    }

    /// The fixture's view with a start in every cell: instantiation 10 µs
    /// under the reference, half as long under the others.
    pub(crate) fn started_view() -> RuntimeView {
        let mut view = runtimes_run_report().runtimes.expect("a view");
        for b in &mut view.benchmarks {
            for (e, cell) in b.cells.iter_mut().enumerate() {
                let ratio = (e > 0).then_some(Ratio {
                    value: 0.5,
                    low: 0.4,
                    high: 0.6,
                });
                cell.start = Some(StartCell {
                    instantiate_ns: if e == 0 { 10_000.0 } else { 5_000.0 },
                    instantiate_ratio: ratio,
                    first_call_ns: 100.0,
                    first_call_ratio: ratio,
                });
            }
        }
        view
    }

    #[test]
    fn the_start_is_a_second_table_with_a_column_per_engine() {
        let mut out = Vec::new();
        write_view(&mut out, &started_view()).expect("written");
        let text = String::from_utf8(out).expect("utf-8");
        let (_, start) = text.split_once("\nstart: ").expect("a start table");
        let lines: Vec<&str> = start.lines().skip(1).collect();
        assert_eq!(lines.len(), 3, "header, xor, sort: {start}");
        assert!(
            lines[0].trim_end().ends_with("v8"),
            "no fastest column: {}",
            lines[0]
        );
        assert!(
            lines[1].contains("10.00 µs · 100.0 ns  5.000 µs 0.50× [0.40, 0.60] · 100.0 ns 0.50×"),
            "{}",
            lines[1]
        );
        let mut plain = Vec::new();
        let view = runtimes_run_report().runtimes.expect("a view");
        write_view(&mut plain, &view).expect("written");
        assert!(
            !String::from_utf8(plain)
                .expect("utf-8")
                .contains("\nstart: ")
        );
    }

    #[test]
    fn a_ratio_has_three_significant_digits_or_as_many_as_tell_its_ends_apart() {
        let r = |value, low, high| ratio_text(&Ratio { value, low, high });
        assert_eq!(r(16.81, 12.8, 20.1), "16.8× [12.8, 20.1]");
        assert_eq!(r(1.006, 0.987, 1.039), "1.01× [0.99, 1.04]");
        assert_eq!(r(1.0012, 1.0004, 1.0021), "1.001× [1.000, 1.002]");
        assert_eq!(r(250.4, 200.2, 301.0), "250× [200, 301]");
        assert_eq!(ratio_text(&Ratio::exact(1.0)), "1×");
        assert_eq!(ratio_text(&Ratio::exact(1.858940902704645)), "1.859×");
        assert_eq!(r(f64::NAN, 1.0, 2.0), "-");
    }
}
