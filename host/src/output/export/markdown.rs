//! GitHub-flavoured Markdown tables of a run or a comparison, in the spirit
//! of hyperfine's `--export-markdown`: one table row per benchmark (failed
//! rows carry their error), the notes as a list below.

use std::fmt::Write;

use crate::output::runtime_table;
use crate::output::units::format_ns;
use crate::results::CompareReport;
use crate::results::{BenchResult, Foreign, RunReport, RuntimeView};

use crate::output::cells::row_notes;
use crate::output::escape::{markdown_cell as cell, markdown_text as text};
use crate::output::tables::{self, Align, Cell, Table};

/// The results of `host run` as a Markdown table, notes (and the complexity
/// fits, and why the run stopped early) below it.
pub fn markdown_run(report: &RunReport) -> String {
    let mut out = results_table(&report.results);
    if let Some(view) = &report.runtimes {
        out.push_str(&runtimes_table(view));
    }
    if !report.complexity.is_empty() {
        out.push_str("\nComplexity (per-op time against size, least squares):\n\n");
        out.push_str("| benchmark | best fit | coefficient | rms |\n|:---|:---|---:|---:|\n");
        for fit in &report.complexity {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.1}% |",
                cell(&fit.benchmark),
                fit.best,
                format_ns(fit.coefficient),
                fit.rms * 100.0
            );
        }
    }
    if let Some(reason) = &report.stopped {
        let _ = writeln!(out, "\nStopped early: {}", text(reason));
    }
    out
}

/// The runtime view: its caption, then one row per benchmark with every
/// engine's figure, the geometric means and the fastest counts.
pub(super) fn runtimes_table(view: &RuntimeView) -> String {
    let escape = |f: &Foreign| cell(f);
    let header = runtime_table::header(view, escape);
    let mut out = format!(
        "\nRuntimes: {}\n\n| {} |\n|:---|{}:---|\n",
        runtime_table::caption(view, text),
        header.join(" | "),
        "---:|".repeat(view.engines.len())
    );
    let rows = (view.benchmarks.iter()).map(|b| runtime_table::row(b, escape, " "));
    let foot = [
        runtime_table::means_row(view),
        runtime_table::fastest_row(view),
    ];
    for row in rows.chain(foot) {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    let starts = runtime_table::start_rows(view, escape, " · ");
    if !starts.is_empty() {
        let _ = write!(
            out,
            "\nStart: {}\n\n| {} |\n|:---|{}\n",
            runtime_table::START_CAPTION,
            runtime_table::start_header(view, escape).join(" | "),
            "---:|".repeat(view.engines.len())
        );
        for row in starts {
            let _ = writeln!(out, "| {} |", row.join(" | "));
        }
    }
    out
}

/// The report of `host compare` as Markdown: the variants' table, then one
/// row per variant against the reference with its ratio and verdict.
pub fn markdown_compare(report: &CompareReport) -> String {
    let mut out = results_table(&report.variants);
    let metric = report
        .comparisons
        .first()
        .map_or("time".to_string(), |c| text(&c.metric));
    let rounds = match report.comparisons.iter().any(|c| !c.phases.is_empty()) {
        true => "interleaved iterations (one of each program per round)".to_string(),
        false => format!("interleaved samples, count {} shared", report.count),
    };
    let _ = writeln!(
        out,
        "\nRatios of {metric} per op against {}: {} rounds of {rounds}; {}.\n",
        text(&report.reference),
        report.rounds,
        report.noise_band()
    );
    out.push_str(&render(&tables::verdicts(report)));
    if report.comparisons.iter().any(|c| !c.phases.is_empty()) {
        out.push_str("\nPer phase (a round: one iteration of each program):\n\n");
        out.push_str(&render(&tables::phases(report)));
    }
    out
}

/// `table` in Markdown: a header row, the alignment row, a row per row
/// (a row cut short by a line in place of its figures filled with empty
/// cells).
pub(super) fn render(table: &Table) -> String {
    let titles: Vec<&str> = table.columns.iter().map(|c| c.title).collect();
    let rules: Vec<&str> = (table.columns.iter())
        .map(|c| match c.align {
            Align::Left => ":---",
            Align::Right => "---:",
        })
        .collect();
    let mut out = format!("| {} |\n|{}|\n", titles.join(" | "), rules.join("|"));
    for row in &table.rows {
        out.push('|');
        for i in 0..table.columns.len().max(row.len()) {
            match row.get(i).map(markdown) {
                Some(text) if !text.is_empty() => {
                    let _ = write!(out, " {text} |");
                }
                _ => out.push_str(" |"),
            }
        }
        out.push('\n');
    }
    out
}

/// A cell's Markdown: outside text escaped for a cell.
fn markdown(c: &Cell) -> String {
    match c {
        Cell::Own(own) => own.clone(),
        Cell::Foreign(f) | Cell::Linked(f, _) => cell(f),
        Cell::Verdict(v) => v.to_string(),
        Cell::Rest { words, text, .. } => format!("{words}{}", cell(text)),
    }
}

/// The table of rows, and the list of their notes below it.
fn results_table(results: &[BenchResult]) -> String {
    let mut out = render(&tables::results(results));
    let notes: Vec<String> = (results.iter())
        .flat_map(|r| row_notes(r).into_iter().map(move |note| (r, note)))
        .map(|(r, note)| format!("{}: {}", text(&r.name), text(&note)))
        .collect();
    if !notes.is_empty() {
        out.push_str("\nNotes:\n\n");
        for note in notes {
            let _ = writeln!(out, "- {note}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures;

    #[test]
    fn the_start_follows_the_runtimes_with_every_engine() {
        let view = crate::output::runtime_table::tests::started_view();
        let md = runtimes_table(&view);
        let (_, start) = md.split_once("\nStart: ").expect("a start table");
        assert!(
            start.contains("| benchmark | cranelift | wasmi | v8 |\n|:---|---:|---:|---:|\n"),
            "{start}"
        );
        assert!(
            start.contains("| xor | 10.00 µs · 100.0 ns | 5.000 µs 0.50× [0.40, 0.60] · 100.0 ns 0.50× [0.40, 0.60] |"),
            "{start}"
        );
    }

    #[test]
    fn the_runtime_view_has_a_row_per_benchmark_with_every_engine() {
        let md = markdown_run(&fixtures::runtimes_run_report());
        let (_, view) = md.split_once("\nRuntimes: ").expect("the runtime view");
        let lines: Vec<&str> = (view.lines())
            .filter(|l| l.starts_with('|') && !l.starts_with("|:"))
            .collect();
        assert_eq!(lines[0], "| benchmark | cranelift | wasmi | v8 | fastest |");
        let cells = |l: &str| l.split(" | ").count();
        assert!(lines.iter().all(|l| cells(l) == 5), "{lines:#?}");
        let row = |name: &str| {
            (lines.iter())
                .find(|l| l.starts_with(&format!("| {name} |")))
                .copied()
                .unwrap_or_else(|| panic!("no row {name}: {view}"))
        };
        let xor: Vec<&str> = row("xor").split(" | ").collect();
        assert!(
            xor[2].contains("ns 12.0") && xor[3].contains("ns 1.00"),
            "{xor:?}"
        );
        assert!(row("sort").ends_with("| v8 |"));
        assert!(row("geometric mean").contains("1× of 2"));
        assert!(!view.contains("| component |"), "one engine ran it: {view}");
    }

    #[test]
    fn run_table_has_one_row_per_result_and_notes_below() {
        let md = markdown_run(&fixtures::run_report());
        let expected = "\
| benchmark | time/op | ± err% | 95% CI | ops/s | samples | count | outliers |
|:---|---:|---:|---:|---:|---:|---:|---:|
| xor.wasm | 1.234 µs | ±0.5% | [1.230 µs, 1.240 µs] | 810.0 k/s | 100 | 1000 | 3 |
| trap.wasm | error: wasm trap: unreachable, in \\`run\\` | | | | | | |

Notes:

- xor.wasm: warm-up did not settle within 500 ms
";
        assert_eq!(md, expected);
    }

    #[test]
    fn cells_escape_pipes_newlines_and_html() {
        let mut report = fixtures::run_report();
        report.results[1].name = "a|b<script>".into();
        report.results[1].error = Some("line one\nline | two".into());
        let md = markdown_run(&report);
        assert!(
            md.contains("| a\\|b&lt;script&gt; | error: line one line \\| two | | | | | | |\n")
        );
        // Every table line keeps its 8 columns (9 unescaped pipes).
        for line in md.lines().filter(|l| l.starts_with('|')) {
            let pipes = line.replace("\\|", "").matches('|').count();
            assert_eq!(pipes, 9, "{line}");
        }
    }

    #[test]
    fn complexity_and_stop_reason_follow_the_table() {
        let mut report = fixtures::run_report();
        report.complexity = vec![fixtures::fit_of(
            "sort.wasm",
            crate::results::Complexity::Linear,
            vec![(10, 20.0), (100, 200.0)],
        )];
        report.stopped = Some("interrupted (Ctrl-C)".into());
        let md = markdown_run(&report);
        assert!(md.contains(
            "| benchmark | best fit | coefficient | rms |\n|:---|:---|---:|---:|\n| sort.wasm | O(n) | 2.000 ns | 3.0% |\n"
        ));
        assert!(md.ends_with("\nStopped early: interrupted (Ctrl-C)\n"));
    }

    #[test]
    fn compare_has_variants_and_verdicts() {
        let report = fixtures::compare_report();
        let md = markdown_compare(&report);
        let (variants, verdicts) = md
            .split_once("\nRatios of time per op against mod13.wasm: 30 rounds of interleaved samples, count 500 shared; noise band ±0.5%.\n\n")
            .expect("the summary line between the tables");
        assert_eq!(
            variants.lines().filter(|l| l.starts_with("| mod")).count(),
            4
        );
        assert!(variants.contains("| mod13\\|copy.wasm | "));
        let expected = "\
| variant | vs | ratio | 95% CI | verdict | in words |
|:---|:---|---:|---:|:---|:---|
| mod16.wasm | mod13.wasm | 1.200× | [1.170×, 1.230×] | slower | \\`mod16.wasm\\` vs \\`mod13.wasm\\`: slower |
| mod17.wasm | mod13.wasm | 0.706× | [0.690×, 0.720×] | faster | \\`mod17.wasm\\` vs \\`mod13.wasm\\`: faster |
| mod13\\|copy.wasm | mod13.wasm | 1.003× | [0.996×, 1.008×] | same | \\`mod13\\|copy.wasm\\` vs \\`mod13.wasm\\`: same |
";
        assert_eq!(verdicts, expected);
    }

    #[test]
    fn compare_of_programs_has_a_table_of_phases() {
        let md = markdown_compare(&fixtures::compare_programs_report());
        let (_, phases) = md
            .split_once("\nPer phase (a round: one iteration of each program):\n\n")
            .expect("the table of phases");
        assert!(phases.starts_with("| variant | phase | ratio | 95% CI | verdict |\n"));
        assert!(
            phases.contains("| mod16.wasm | instantiate | 1.002× | [0.990×, 1.010×] | same |"),
            "{phases}"
        );
        assert!(
            phases.contains("| mod17.wasm | execute | 0.706× | [0.690×, 0.720×] | faster |"),
            "{phases}"
        );
        assert!(!markdown_compare(&fixtures::compare_report()).contains("Per phase"));
    }

    #[test]
    fn narrow_intervals_and_ratios_show_their_width() {
        let mut report = fixtures::run_report();
        let f = report.results[0].figures.as_mut().expect("measured");
        f.ns_per_op.median = 16.5096;
        f.ns_per_op.ci95_low = 16.507;
        f.ns_per_op.ci95_high = 16.512;
        f.time.err_pct = 0.004;
        let md = markdown_run(&report);
        assert!(
            md.contains("| xor.wasm | 16.510 ns | ±0.004% | [16.507 ns, 16.512 ns] |"),
            "{md}"
        );

        let mut report = fixtures::compare_report();
        let ratio = &mut report.comparisons[0].ratio;
        (ratio.value, ratio.low, ratio.high) = (1.4622, 1.4620, 1.4790);
        let md = markdown_compare(&report);
        assert!(
            md.contains("| mod16.wasm | mod13.wasm | 1.4622× | [1.4620×, 1.4790×] | slower |"),
            "{md}"
        );
    }
}
