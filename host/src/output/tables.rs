//! The tables the Markdown and HTML exports show, each declared once: its
//! columns and, per row, its cells ([`Table`]); each format renders them
//! ([`crate::output::export::markdown::render`],
//! [`crate::output::export::html::render`]) and escapes outside text its own
//! way. A cell says what its text is ([`Cell`]): ours, outside text, a
//! verdict, or a line in place of the figures (an error). The CSV exports
//! keep their own records: their columns are data, every digit of a
//! number, not these cells' text.

use crate::output::cells::{Cells, format_ratios};
use crate::output::suite_table::{Line, ONE_PROCESS, left_out_words, notes};
use crate::results::{
    BenchResult, CompareReport, Comparison, Foreign, PhaseComparison, SuiteComparison, Verdict,
};

/// Where a column's text sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A column: its title, and where its cells sit.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    pub title: &'static str,
    pub align: Align,
}

const fn left(title: &'static str) -> Column {
    Column {
        title,
        align: Align::Left,
    }
}

const fn right(title: &'static str) -> Column {
    Column {
        title,
        align: Align::Right,
    }
}

/// One cell, by what its text is.
#[derive(Debug, Clone)]
pub enum Cell {
    /// Our own words and figures, safe in every format as they are.
    Own(String),
    /// Outside text (a name, a path, an engine's words): escaped by each
    /// format.
    Foreign(Foreign),
    /// A row's name, which a format that can links to the row's figure
    /// (the HTML page's histogram at `#row-N`).
    Linked(Foreign, usize),
    /// A verdict, which a format that can colours.
    Verdict(Verdict),
    /// A line in place of the rest of the row's cells: our `words`, then
    /// outside text (an error's, or why a benchmark is not judged);
    /// `failed` when it is an error.
    Rest {
        words: &'static str,
        text: Foreign,
        failed: bool,
    },
}

/// A table: its columns, and its rows of cells in the columns' order (a
/// row that ends in [`Cell::Rest`] has fewer).
#[derive(Debug, Clone)]
pub struct Table {
    pub columns: &'static [Column],
    pub rows: Vec<Vec<Cell>>,
}

const RESULTS: &[Column] = &[
    left("benchmark"),
    right("time/op"),
    right("± err%"),
    right("95% CI"),
    right("ops/s"),
    right("samples"),
    right("count"),
    right("outliers"),
];

/// The rows of a run, or the variants of a comparison: a measured row's
/// time, err%, interval, rate, samples, count and outliers; a failed
/// row's error.
pub fn results(results: &[BenchResult]) -> Table {
    let rows = results.iter().enumerate().map(|(i, r)| {
        let Some(f) = &r.figures else {
            let error = r.error.clone().unwrap_or("not measured".into());
            return vec![Cell::Foreign(r.name.clone()), failed(error)];
        };
        let c = Cells::of(f);
        vec![
            Cell::Linked(r.name.clone(), i),
            Cell::Own(c.time),
            Cell::Own(c.err),
            Cell::Own(c.ci),
            Cell::Own(c.rate),
            Cell::Own(f.counts.samples.to_string()),
            Cell::Own(c.count),
            Cell::Own(f.time.outliers.to_string()),
        ]
    });
    Table {
        columns: RESULTS,
        rows: rows.collect(),
    }
}

const VERDICTS: &[Column] = &[
    left("variant"),
    left("vs"),
    right("ratio"),
    right("95% CI"),
    left("verdict"),
    left("in words"),
];

/// A comparison's verdicts: each variant against the reference, its
/// ratio, interval, verdict and the verdict in words.
pub fn verdicts(report: &CompareReport) -> Table {
    let rows = report.comparisons.iter().map(|c: &Comparison| {
        let [ratio, interval] = ratio_cells(c.ratio.value, c.ratio.low, c.ratio.high);
        vec![
            Cell::Foreign(c.variant.clone()),
            Cell::Foreign(c.reference.clone()),
            ratio,
            interval,
            Cell::Verdict(c.verdict),
            Cell::Foreign(c.text.clone()),
        ]
    });
    Table {
        columns: VERDICTS,
        rows: rows.collect(),
    }
}

const PHASES: &[Column] = &[
    left("variant"),
    left("phase"),
    right("ratio"),
    right("95% CI"),
    left("verdict"),
];

/// A comparison of programs: each variant's ratio per phase.
pub fn phases(report: &CompareReport) -> Table {
    let rows = report.comparisons.iter().flat_map(|c| {
        c.phases.iter().map(|p: &PhaseComparison| {
            let [ratio, interval] = ratio_cells(p.ratio.value, p.ratio.low, p.ratio.high);
            vec![
                Cell::Foreign(c.variant.clone()),
                Cell::Own(p.phase.to_string()),
                ratio,
                interval,
                Cell::Verdict(p.verdict),
            ]
        })
    });
    Table {
        columns: PHASES,
        rows: rows.collect(),
    }
}

const SUITE: &[Column] = &[
    left("benchmark"),
    left("side"),
    right("ratio"),
    right("interval"),
    left("verdict"),
];

/// A suite's verdicts in `lines`' order (each with its interval's
/// confidence), then its benchmarks' notes (errors, later workers'
/// failures, the unsupported, those not judged), the sides left out and
/// the names not paired, in the terminal's order.
pub fn suite(report: &SuiteComparison, lines: &[Line<'_>]) -> Table {
    let mut rows: Vec<Vec<Cell>> = lines
        .iter()
        .map(|line| {
            let c = line.comparison;
            let [low, high] = [c.ratio.low, c.ratio.high];
            let [ratio, low, high] = format_ratios(c.ratio.value, low, high);
            vec![
                Cell::Foreign(line.benchmark.clone()),
                Cell::Foreign(line.side.cloned().unwrap_or_default()),
                Cell::Own(ratio),
                Cell::Own(format!(
                    "[{low}, {high}] ({:.1}%{})",
                    c.confidence * 100.0,
                    match line.one_process {
                        true => format!(", {ONE_PROCESS}"),
                        false => String::new(),
                    }
                )),
                Cell::Verdict(c.verdict),
            ]
        })
        .collect();
    for (b, note, why) in notes(report) {
        rows.push(vec![
            Cell::Foreign(b.name.clone()),
            Cell::Rest {
                words: note.words,
                text: why.clone(),
                failed: note.failed,
            },
        ]);
    }
    for b in &report.benchmarks {
        for left in &b.left_out {
            rows.push(vec![
                Cell::Foreign(b.name.clone()),
                Cell::Foreign(left.side.clone()),
                Cell::Rest {
                    words: left_out_words(left.unsupported),
                    text: left.why.clone(),
                    failed: !left.unsupported,
                },
            ]);
        }
    }
    for u in &report.unpaired {
        rows.push(vec![
            Cell::Foreign(u.name.clone()),
            Cell::Rest {
                words: "only in ",
                text: Foreign::join(&u.found_in, ", ").then(": not compared"),
                failed: false,
            },
        ]);
    }
    Table {
        columns: SUITE,
        rows,
    }
}

/// An error in place of a row's figures.
fn failed(error: Foreign) -> Cell {
    Cell::Rest {
        words: "error: ",
        text: error,
        failed: true,
    }
}

/// A ratio's cells: the ratio, and its interval, with the digits that
/// tell them apart.
fn ratio_cells(value: f64, low: f64, high: f64) -> [Cell; 2] {
    let [ratio, low, high] = format_ratios(value, low, high);
    [Cell::Own(ratio), Cell::Own(format!("[{low}, {high}]"))]
}
