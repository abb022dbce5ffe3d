//! Tests of the one way out for text (tests only): reports whose every
//! string field holds hostile text (markup, formula prefixes, Markdown link
//! and image syntax, terminal escape sequences, line breaks, bidirectional
//! overrides), rendered to the terminal (run, compare, suite), Markdown,
//! CSV and HTML. Each output is checked against the same report with a
//! plain word in every field: no raw control character, the same lines,
//! the same markup and table cells, no CSV field that starts a formula.
//! A property test does the same with arbitrary text in every field.

use proptest::prelude::*;
use proptest::test_runner::Config;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::analysis::fixtures;
use crate::options::{EngineConfig, EngineLibrary};
use crate::output::export::html::html_suite;
use crate::output::export::suite::{csv_suite, markdown_suite};
use crate::output::export::{
    csv_compare, csv_run, html_compare, html_run, markdown_compare, markdown_run,
};
use crate::output::suite_table::suite_table;
use crate::output::table::Table;
use crate::results::{
    BaselineComparison, CompareReport, Foreign, LeftOut, Note, Ratio, RunReport, SuiteBenchmark,
    SuiteComparison, SuiteRatio, SuiteVerdicts, Unpaired, Verdict,
};

/// One text of each hostile class.
const HOSTILE: [&str; 16] = [
    "<script>alert(1)</script>",
    "=cmd|' /C calc'!A0",
    "+HYPERLINK(\"https://x\",\"click\")",
    "@SUM(A1:A9)",
    "-1+2",
    "\t=1+1",
    "\r=1+1",
    "[fix the build](https://x)",
    "![](https://x/pixel.png)",
    "<https://x>",
    "\x1b]0;title\x07",
    "\x1b[2J\x1b[H",
    "a\nfaster  0.500× [0.4×, 0.6×]",
    "1 --><script>x</script><!--",
    "a\u{202e}b | *c* _d_ ~e~ #f `g`",
    "\"q\",'r',&amp;",
];

/// A character a reader does not see as itself: a control character or a
/// bidirectional override.
fn hidden(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Every JSON pointer to a string in `value`.
fn string_pointers(value: &Value, at: &str, found: &mut Vec<String>) {
    match value {
        Value::String(_) => found.push(at.to_string()),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                string_pointers(item, &format!("{at}/{i}"), found);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                let key = key.replace('~', "~0").replace('/', "~1");
                string_pointers(item, &format!("{at}/{key}"), found);
            }
        }
        _ => {}
    }
}

/// A report as JSON and the string fields that read back as any text
/// (not the name of an enum's variant): every field a forged export can
/// fill with text of its choice.
struct Forgeable {
    json: Value,
    fields: Vec<String>,
}

/// A pointer with its array indices left out: the fields of every element
/// of an array share it.
fn shape(pointer: &str) -> String {
    pointer
        .split('/')
        .filter(|part| part.parse::<usize>().is_err())
        .collect::<Vec<_>>()
        .join("/")
}

impl Forgeable {
    /// The fields of `report` that take any text: probed one per shape (a
    /// field of an array's elements stands for all of them), and kept when
    /// the report reads back with the probe where it was put (a field of a
    /// flattened optional part that no longer reads drops that part).
    fn of<T: Serialize + DeserializeOwned>(report: &T) -> Self {
        let json = serde_json::to_value(report).expect("a report serialises");
        let mut all = Vec::new();
        string_pointers(&json, "", &mut all);
        let mut free = std::collections::BTreeMap::new();
        let fields = all
            .into_iter()
            .filter(|pointer| {
                *free.entry(shape(pointer)).or_insert_with(|| {
                    let probe = Value::String("\u{1}probe".into());
                    let mut forged = json.clone();
                    if let Some(field) = forged.pointer_mut(pointer) {
                        *field = probe.clone();
                    }
                    serde_json::from_value::<T>(forged)
                        .ok()
                        .and_then(|read| serde_json::to_value(read).ok())
                        .is_some_and(|read| read.pointer(pointer) == Some(&probe))
                })
            })
            .collect();
        Forgeable { json, fields }
    }

    /// The report with its text fields set to `texts` in turn.
    fn with<T: DeserializeOwned>(&self, texts: &[String]) -> T {
        let mut json = self.json.clone();
        for (k, pointer) in self.fields.iter().enumerate() {
            if let Some(field) = json.pointer_mut(pointer) {
                *field = Value::String(texts[k % texts.len()].clone());
            }
        }
        serde_json::from_value(json).expect("a forged report reads back")
    }
}

/// An engine library, so that its path and flags are fields too.
fn library() -> EngineConfig {
    EngineConfig {
        library: Some(EngineLibrary {
            path: "/opt/engine.so".into(),
            flags: "-O opt-level=2".into(),
            bytes: 1,
            sha256: "00".repeat(32),
        }),
        ..EngineConfig::default()
    }
}

/// A run with every optional text present: a library, warnings, a core
/// choice, a note, a baseline comparison, a fit, a stop.
fn run_report() -> RunReport {
    let mut report = fixtures::run_report();
    let env = &mut report.environment;
    env.engines.push(library());
    env.warnings = vec!["x".into()];
    env.core_choice = Some("x".into());
    env.compile_cache = Some("x".into());
    let measured = &mut report.results[0];
    measured.engine = Some("x".into());
    if let Some(f) = measured.figures.as_mut() {
        f.notes.add(Note::Text("x".into()));
    }
    measured.baseline = Some(BaselineComparison {
        name: "x".into(),
        metric: "x".into(),
        ratio: Ratio::exact(1.5),
        verdict: Verdict::Slower,
        text: "x".into(),
        regression: true,
    });
    report.complexity = vec![fixtures::fit_of(
        "x",
        crate::results::Complexity::Linear,
        vec![(10, 20.0), (100, 200.0)],
    )];
    report.baseline = Some("x".into());
    report.saved_baseline = Some("x".into());
    report.stopped = Some("x".into());
    report.runtimes = fixtures::runtimes_run_report().runtimes;
    report
}

fn compare_report() -> CompareReport {
    let mut report = fixtures::compare_report();
    report.environment.engines.push(library());
    report.environment.warnings = vec!["x".into()];
    report
}

/// A suite of two sides: a benchmark compared, one failed, one not
/// judged, a name not paired, a geometric mean and a stop.
fn suite_report() -> SuiteComparison {
    let mut compared = fixtures::compare_report();
    compared.variants.truncate(2);
    compared.comparisons.truncate(1);
    let benchmark = |error: Option<&str>, not_judged: Option<&str>, report| SuiteBenchmark {
        name: "x".into(),
        paths: vec!["x".into()],
        error: error.map(Foreign::from),
        unsupported: None,
        not_judged: not_judged.map(Foreign::from),
        report,
        elapsed_ms: 1.0,
        passes: 1,
        left_out: Vec::new(),
        failed_later: None,
        widened_pct: Vec::new(),
    };
    let unsupported = SuiteBenchmark {
        unsupported: Some("x".into()),
        ..benchmark(None, None, None)
    };
    let mut report = SuiteComparison {
        tool: crate::results::Tool::this(),
        environment: Some(compared.environment.clone()),
        sides: vec!["x".into(), "x".into()],
        reference: "x".into(),
        noise_pct: 1.0,
        benchmarks: vec![
            SuiteBenchmark {
                failed_later: Some("x".into()),
                ..benchmark(None, None, Some(compared.clone()))
            },
            SuiteBenchmark {
                left_out: vec![LeftOut {
                    side: "x".into(),
                    why: "x".into(),
                    unsupported: false,
                }],
                ..benchmark(Some("x"), None, None)
            },
            benchmark(None, Some("x"), Some(compared)),
            unsupported,
        ],
        unpaired: vec![Unpaired {
            name: "x".into(),
            found_in: vec!["x".into()],
        }],
        summary: SuiteVerdicts {
            slower: 1,
            failed: 1,
            unsupported: 1,
            sides_failed: 1,
            failed_later: 1,
            not_judged: 1,
            unpaired: 1,
            geometric_means: vec![SuiteRatio {
                side: "x".into(),
                reference: "x".into(),
                benchmarks: 1,
                ratio: Ratio::exact(1.2),
                confidence: 0.95,
                between_runs: None,
            }],
            ..SuiteVerdicts::default()
        },
        stopped: Some("x".into()),
        elapsed_ms: 1000.0,
        suite_time_ms: Some(1000.0),
        runtimes: None,
    };
    report.runtimes = crate::analysis::runtimes::suite_view(&report);
    report
}

/// What a report looks like in every format.
struct Rendered {
    terminal: String,
    markdown: String,
    csv: String,
    html: String,
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).expect("the terminal table is UTF-8")
}

fn render_run(report: &RunReport) -> Rendered {
    let mut table = Table::new(Vec::new());
    let names: Vec<&Foreign> = report.results.iter().map(|r| &r.name).collect();
    table.header(&report.environment, &names).expect("writes");
    for row in &report.results {
        table.row(row).expect("writes");
    }
    table.footer(report).expect("writes");
    Rendered {
        terminal: text(std::mem::take(table.out())),
        markdown: markdown_run(report),
        csv: csv_run(report).expect("written"),
        html: html_run(report),
    }
}

fn render_compare(report: &CompareReport) -> Rendered {
    let mut table = Table::new(Vec::new());
    table.comparison(report).expect("writes");
    Rendered {
        terminal: text(std::mem::take(table.out())),
        markdown: markdown_compare(report),
        csv: csv_compare(report).expect("written"),
        html: html_compare(report),
    }
}

fn render_suite(report: &SuiteComparison) -> Rendered {
    let mut terminal = Vec::new();
    suite_table(&mut terminal, report).expect("writes");
    Rendered {
        terminal: text(terminal),
        markdown: markdown_suite(report),
        csv: csv_suite(report).expect("written"),
        html: html_suite(report),
    }
}

/// `s` without the colours the table writes itself (`ESC [ digits ; m`).
fn without_styles(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find("\x1b[") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let end = after.find(|c: char| !(c.is_ascii_digit() || c == ';'));
        match end {
            Some(end) if after[end..].starts_with('m') => rest = &after[end + 1..],
            _ => {
                out.push_str("\x1b[");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn check(ok: bool, what: &str, output: &str) -> Result<(), String> {
    match ok {
        true => Ok(()),
        false => Err(format!("{what}: {output:?}")),
    }
}

/// The first character a reader would not see as itself, other than a
/// line break.
fn raw_hidden(s: &str) -> Option<char> {
    s.chars().find(|&c| hidden(c) && c != '\n')
}

fn terminal_ok(plain: &str, forged: &str) -> Result<(), String> {
    let (plain, forged) = (without_styles(plain), without_styles(forged));
    check(
        raw_hidden(&forged).is_none(),
        "terminal: raw control",
        &forged,
    )?;
    check(
        forged.lines().count() == plain.lines().count(),
        "terminal: a line of its own",
        &forged,
    )
}

/// The positions in `line` of `pattern` not escaped by a backslash (an
/// even run of backslashes before it).
fn unescaped(line: &str, pattern: &str) -> usize {
    line.match_indices(pattern)
        .filter(|(at, _)| {
            let slashes = line[..*at].chars().rev().take_while(|&c| c == '\\').count();
            slashes % 2 == 0
        })
        .count()
}

fn markdown_ok(plain: &str, forged: &str) -> Result<(), String> {
    check(
        raw_hidden(forged).is_none(),
        "markdown: raw control",
        forged,
    )?;
    check(!forged.contains('<'), "markdown: raw `<`", forged)?;
    check(
        unescaped(forged, "](") == 0,
        "markdown: a live link",
        forged,
    )?;
    let (plain_lines, forged_lines): (Vec<&str>, Vec<&str>) =
        (plain.lines().collect(), forged.lines().collect());
    check(
        plain_lines.len() == forged_lines.len(),
        "markdown: lines",
        forged,
    )?;
    for (p, f) in plain_lines.iter().zip(&forged_lines) {
        // A pipe ends a cell in a table's lines only.
        let table = p.starts_with('|');
        for syntax in ["|", "`", "*", "_", "~", "[", "]", "#"] {
            if syntax == "|" && !table {
                continue;
            }
            check(
                unescaped(p, syntax) == unescaped(f, syntax),
                &format!("markdown: `{syntax}` live"),
                f,
            )?;
        }
    }
    Ok(())
}

/// The records of a CSV text and their fields, read by the csv crate.
fn csv_records(text: &str) -> Result<Vec<Vec<String>>, String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let fields = |r: csv::StringRecord| r.iter().map(str::to_string).collect();
    (reader.records())
        .map(|r| r.map(fields).map_err(|e| format!("csv: {e}")))
        .collect()
}

fn csv_ok(plain: &str, forged: &str) -> Result<(), String> {
    let body = forged.replace("\r\n", "");
    check(raw_hidden(&body).is_none(), "csv: raw control", forged)?;
    let (plain, forged_records) = (csv_records(plain)?, csv_records(forged)?);
    check(plain.len() == forged_records.len(), "csv: records", forged)?;
    for (p, f) in plain.iter().zip(&forged_records) {
        check(p.len() == f.len(), "csv: fields", forged)?;
        for field in f {
            let formula = field.starts_with(['=', '+', '-', '@', '\t', '\r']);
            check(
                !formula || field.parse::<f64>().is_ok(),
                "csv: a formula",
                field,
            )?;
        }
    }
    Ok(())
}

fn html_ok(plain: &str, forged: &str) -> Result<(), String> {
    check(raw_hidden(forged).is_none(), "html: raw control", forged)?;
    for markup in ["<", "-->", "<!--", "\""] {
        check(
            plain.matches(markup).count() == forged.matches(markup).count(),
            &format!("html: `{markup}` live"),
            forged,
        )?;
    }
    check(!forged.contains("<script"), "html: a script", forged)
}

fn rendered_ok(plain: &Rendered, forged: &Rendered) -> Result<(), String> {
    terminal_ok(&plain.terminal, &forged.terminal)?;
    markdown_ok(&plain.markdown, &forged.markdown)?;
    csv_ok(&plain.csv, &forged.csv)?;
    html_ok(&plain.html, &forged.html)
}

/// The three reports, their fields, and their rendering with a plain word
/// in every field.
struct Cases {
    run: Forgeable,
    compare: Forgeable,
    suite: Forgeable,
    plain: [Rendered; 3],
}

impl Cases {
    fn new() -> Self {
        let (run, compare, suite) = (run_report(), compare_report(), suite_report());
        let (run, compare, suite) = (
            Forgeable::of(&run),
            Forgeable::of(&compare),
            Forgeable::of(&suite),
        );
        let plain = vec!["x".to_string()];
        let rendered = [
            render_run(&run.with(&plain)),
            render_compare(&compare.with(&plain)),
            render_suite(&suite.with(&plain)),
        ];
        Cases {
            run,
            compare,
            suite,
            plain: rendered,
        }
    }

    /// Every report with `texts` in its fields, rendered and checked.
    fn check(&self, texts: &[String]) -> Result<(), String> {
        rendered_ok(&self.plain[0], &render_run(&self.run.with(texts)))?;
        rendered_ok(&self.plain[1], &render_compare(&self.compare.with(texts)))?;
        rendered_ok(&self.plain[2], &render_suite(&self.suite.with(texts)))
    }
}

#[test]
fn every_text_field_of_a_report_is_forgeable_here() {
    let cases = Cases::new();
    let fields = |f: &Forgeable| f.fields.join(" ");
    let run = fields(&cases.run);
    for field in [
        "/tool/version",
        "/environment/cpu_model",
        "/environment/core_choice",
        "/environment/priority",
        "/environment/warnings/0",
        "/environment/engines/1/library/path",
        "/environment/engines/1/library/flags",
        "/results/0/name",
        "/results/0/notes/1",
        "/results/0/baseline/text",
        "/results/1/error",
        "/complexity/0/benchmark",
        "/stopped",
        "/runtimes/reference",
        "/runtimes/engines/1",
        "/runtimes/benchmarks/0/benchmark",
        "/runtimes/benchmarks/0/cells/1/engine",
        "/runtimes/benchmarks/0/fastest",
        "/runtimes/benchmarks/0/runner_up",
        "/runtimes/means/1/engine",
    ] {
        assert!(run.contains(field), "{field} in {run}");
    }
    assert!(fields(&cases.compare).contains("/comparisons/0/text"));
    let suite = fields(&cases.suite);
    for field in [
        "/sides/1",
        "/benchmarks/1/error",
        "/unpaired/0/found_in/0",
        "/runtimes/benchmarks/0/benchmark",
        "/runtimes/means/1/engine",
    ] {
        assert!(suite.contains(field), "{field} in {suite}");
    }
}

#[test]
fn each_hostile_class_is_shown_as_text_in_every_format() {
    let cases = Cases::new();
    for hostile in HOSTILE {
        if let Err(e) = cases.check(&[hostile.to_string()]) {
            panic!("{hostile:?}: {e}");
        }
    }
}

#[test]
fn a_forged_version_and_names_stay_text_in_each_output() {
    let cases = Cases::new();
    let run: RunReport = cases.run.with(&["<script>alert(1)</script>".to_string()]);
    let html = html_run(&run);
    assert!(html.contains("<!-- &lt;script&gt;alert(1)&lt;/script&gt; &lt;script&gt;"));
    assert!(html.contains("Made by &lt;script&gt;alert(1)&lt;/script&gt;"));
    let run: RunReport = cases.run.with(&["=cmd|' /C calc'!A0".to_string()]);
    let csv = csv_run(&run).expect("written");
    assert!(
        csv.contains("'=cmd|' /C calc'!A0,'=cmd|' /C calc'!A0,"),
        "{csv}"
    );
    let run: RunReport = cases.run.with(&["[fix the build](https://x)".to_string()]);
    assert!(markdown_run(&run).contains("| \\[fix the build\\](https://x) | "));
    let run: RunReport = cases.run.with(&["\x1b]0;title\x07".to_string()]);
    let terminal = render_run(&run).terminal;
    assert!(
        terminal.contains("· \\u{1b}]0;title\\u{7} · "),
        "{terminal}"
    );
    let suite: SuiteComparison = cases.suite.with(&["a\nfaster 0.5×".to_string()]);
    let terminal = render_suite(&suite).terminal;
    assert!(
        !terminal.lines().any(|l| l.starts_with("faster")),
        "{terminal}"
    );
    assert!(terminal.contains("a\\u{a}faster 0.5×"), "{terminal}");
}

/// Text for the property test: arbitrary, or made of hostile pieces.
fn any_text() -> impl Strategy<Value = String> {
    const PIECES: [&str; 24] = [
        "<",
        ">",
        "&",
        "\"",
        "'",
        "=",
        "+",
        "-",
        "@",
        "\t",
        "\r",
        "\n",
        "[",
        "](",
        "![",
        "`",
        "*",
        "_",
        "|",
        "--",
        "\x1b[2J",
        "\x1b]0;t\x07",
        "\u{202e}",
        "\u{85}",
    ];
    let piece = prop_oneof![
        proptest::sample::select(PIECES.to_vec()).prop_map(str::to_string),
        any::<char>().prop_map(String::from),
    ];
    prop_oneof![
        any::<String>(),
        proptest::collection::vec(piece, 0..12).prop_map(|p| p.concat()),
    ]
}

#[test]
fn arbitrary_text_in_every_field_renders_as_text_in_every_format() {
    let cases = Cases::new();
    let config = Config {
        cases: 48,
        failure_persistence: None,
        ..Config::default()
    };
    let texts = proptest::collection::vec(any_text(), 1..4);
    proptest::test_runner::TestRunner::new(config)
        .run(&texts, |texts| {
            cases.check(&texts).map_err(TestCaseError::fail)?;
            Ok(())
        })
        .expect("no hostile text gets through");
}

#[test]
fn a_suite_across_engines_shows_its_runtime_view_in_every_readable_format() {
    let report = suite_report();
    assert!(report.runtimes.is_some());
    let shown = render_suite(&report);
    assert!(shown.terminal.contains("runtimes: "), "{}", shown.terminal);
    assert!(
        shown.markdown.contains("\nRuntimes: "),
        "{}",
        shown.markdown
    );
    assert!(shown.html.contains("<h2>Runtimes</h2>"));
    let without = SuiteComparison {
        runtimes: None,
        ..report
    };
    assert!(!render_suite(&without).terminal.contains("runtimes: "));
}
