//! End-to-end tests of names from guests (issue #30): an export name or a
//! file name with a newline or an escape sequence in it is shown escaped on
//! the terminal (one row, no raw control character), in Markdown (its cell
//! closed), in HTML (no raw control character either) and in CSV; the
//! JSON keeps it exactly. An export read back with hostile text in every
//! text field (`host report`) is rendered as text: no markup, link, formula
//! or control character of its own reaches the terminal or an export.

use std::error::Error;
use std::path::Path;
use std::time::Duration;

use e2e::{fixture, run_host_within};
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

/// Whether `text` holds a control character other than a line break.
fn raw_control(text: &str) -> Option<char> {
    text.chars().find(|&c| c.is_control() && c != '\n')
}

/// Run `host run` in `dir` on the export-name fixture and on a copy of a
/// file that is not wasm under a hostile name, with every text export.
fn run_hostile_names(dir: &Path) -> Result<e2e::Finished, Box<dyn Error>> {
    std::fs::copy(fixture("names/control.wat"), dir.join("control.wat"))?;
    std::fs::copy(fixture("not_wasm.wasm"), dir.join("bad\n\x1b[2J.wasm"))?;
    let args = [
        "run",
        "control.wat",
        "bad\n\x1b[2J.wasm",
        "--samples",
        "20",
        "--warmup",
        "20ms",
        "--sample-time",
        "500us",
        "--export-json",
        "out.json",
        "--export-markdown",
        "out.md",
        "--export-csv",
        "out.csv",
        "--export-html",
        "out.html",
    ];
    run_host_within(&args, dir, Duration::from_secs(120))
}

#[test]
fn control_characters_in_names_are_escaped_everywhere() -> TestResult {
    let dir = tempfile::tempdir()?;
    let finished = run_hostile_names(dir.path())?;
    // One row failed (the file that is not wasm).
    assert_eq!(finished.status.code(), Some(1), "{finished:?}");
    for (stream, text) in [("stdout", &finished.stdout), ("stderr", &finished.stderr)] {
        assert_eq!(raw_control(text), None, "{stream}: {text:?}");
    }
    let lines = |needle: &str| {
        finished
            .stdout
            .lines()
            .filter(|l| l.starts_with(needle))
            .count()
    };
    assert_eq!(lines("control:a\\u{a}b "), 1, "{}", finished.stdout);
    assert_eq!(lines("control:\\u{1b}[2J "), 1, "{}", finished.stdout);
    assert_eq!(lines("b "), 0, "a forged row: {}", finished.stdout);
    assert!(
        finished.stdout.contains("bad\\u{a}\\u{1b}[2J"),
        "{}",
        finished.stdout
    );

    let report: Value = serde_json::from_slice(&std::fs::read(dir.path().join("out.json"))?)?;
    let names: Vec<&str> = report["results"]
        .as_array()
        .ok_or("no results")?
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert!(names.contains(&"control:a\nb"), "{names:?}");
    assert!(names.contains(&"control:\x1b[2J"), "{names:?}");

    let markdown = std::fs::read_to_string(dir.path().join("out.md"))?;
    assert_eq!(raw_control(&markdown), None, "{markdown:?}");
    assert!(markdown.contains("| control:a b | "), "{markdown}");
    assert!(
        markdown.contains("| control:\\\\u{1b}\\[2J | "),
        "{markdown}"
    );
    for line in markdown.lines().filter(|l| l.starts_with('|')) {
        let pipes = line.replace("\\|", "").matches('|').count();
        assert_eq!(pipes, 9, "{line}");
    }

    let html = std::fs::read_to_string(dir.path().join("out.html"))?;
    assert_eq!(
        raw_control(&html),
        None,
        "raw control character in the HTML"
    );
    assert!(
        html.contains("control:a\\u{a}b"),
        "escaped name in the HTML"
    );

    let csv = std::fs::read_to_string(dir.path().join("out.csv"))?;
    assert!(
        csv.contains("\r\ncontrol:a\\u{a}b,control:a\\u{a}b,,,control.wat,"),
        "{csv:?}"
    );
    Ok(())
}

/// One text of each hostile class, put in turn in every text field of a
/// forged export.
const HOSTILE: [&str; 10] = [
    "<script>alert(1)</script>",
    "=cmd|' /C calc'!A0",
    "+HYPERLINK(\"https://x\",\"click\")",
    "@SUM(A1:A9)",
    "-1+2",
    "\t=1",
    "[fix the build](https://x)",
    "![](https://x/pixel.png)",
    "\x1b]0;title\x07\x1b[2J",
    "a\nfaster  0.500× --><!--\r=1",
];

/// Every string of `value` that is free text (not an enum's name, not the
/// tool's name `host report` checks) replaced by `hostile`; how many.
fn forge(value: &mut Value, at: &str, hostile: &str) -> usize {
    const NAMES: [&str; 9] = [
        "kind",
        "verdict",
        "best",
        "class",
        "seed_rule",
        "compiler",
        "opt_level",
        "timed_region",
        "epoch_classes",
    ];
    let enum_name = NAMES.iter().any(|n| at.contains(&format!("/{n}")))
        || at == "/tool/name"
        || (at.starts_with("/results/") && at.ends_with("/compile_cache"));
    match value {
        Value::String(text) if !enum_name => {
            *text = hostile.to_string();
            1
        }
        Value::Array(items) => items
            .iter_mut()
            .enumerate()
            .map(|(i, item)| forge(item, &format!("{at}/{i}"), hostile))
            .sum(),
        Value::Object(map) => map
            .iter_mut()
            .map(|(key, item)| forge(item, &format!("{at}/{key}"), hostile))
            .sum(),
        _ => 0,
    }
}

/// The fields of one CSV record (RFC 4180: a quoted field holds anything).
fn csv_fields(record: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = record.chars().peekable();
    while let Some(c) = chars.next() {
        let Some(current) = fields.last_mut() else {
            break;
        };
        match (c, quoted) {
            ('"', false) if current.is_empty() => quoted = true,
            ('"', true) if chars.peek() == Some(&'"') => {
                current.push('"');
                chars.next();
            }
            ('"', true) => quoted = false,
            (',', false) => fields.push(String::new()),
            (c, _) => current.push(c),
        }
    }
    fields
}

/// What `host report` made of a forged export: the terminal's text, the
/// HTML, the Markdown and the CSV.
struct Shown {
    stdout: String,
    html: String,
    markdown: String,
    csv: String,
}

/// `export` with `hostile` in every text field, rendered by `host report`
/// to the terminal and every text export, each checked for what no text
/// may bring: a control character, markup, a link, a cell or a line of its
/// own, a formula.
fn report_forged(dir: &Path, export: &Value, hostile: &str) -> Result<Shown, Box<dyn Error>> {
    let mut export = export.clone();
    let forged = forge(&mut export, "", hostile);
    assert!(forged > 20, "{forged} text fields");
    std::fs::write(dir.join("forged.json"), export.to_string())?;
    let args = [
        "report",
        "forged.json",
        "--export-html",
        "out.html",
        "--export-markdown",
        "out.md",
        "--export-csv",
        "out.csv",
    ];
    let finished = run_host_within(&args, dir, Duration::from_secs(60))?;
    assert_eq!(finished.status.code(), Some(0), "{finished:?}");
    let rows = export["results"].as_array().map_or(0, Vec::len);
    let shown = Shown {
        stdout: finished.stdout,
        html: std::fs::read_to_string(dir.join("out.html"))?,
        markdown: std::fs::read_to_string(dir.join("out.md"))?,
        csv: std::fs::read_to_string(dir.join("out.csv"))?,
    };
    assert_eq!(raw_control(&shown.stdout), None, "{:?}", shown.stdout);

    let html = &shown.html;
    assert_eq!(
        raw_control(html),
        None,
        "{hostile:?}: raw control in the HTML"
    );
    assert!(
        !html.contains("<script"),
        "{hostile:?}: a script in the HTML"
    );
    assert_eq!(html.matches("<!--").count(), 1, "{hostile:?}: one comment");
    assert_eq!(html.matches("-->").count(), 1, "{hostile:?}: one comment");

    let markdown = &shown.markdown;
    assert_eq!(raw_control(markdown), None, "{markdown:?}");
    assert!(!markdown.contains('<'), "{markdown}");
    let links = markdown.replace("\\]", "");
    assert!(!links.contains("]("), "a live link: {markdown}");
    for line in markdown.lines().filter(|l| l.starts_with('|')) {
        let pipes = line.replace("\\|", "").matches('|').count();
        assert!(pipes == 9 || pipes == 5, "{line}");
    }

    let records: Vec<&str> = shown.csv.split_terminator("\r\n").collect();
    assert_eq!(records.len(), 1 + rows, "{:?}", shown.csv);
    for record in &records {
        assert_eq!(raw_control(record), None, "{record:?}");
        let fields = csv_fields(record);
        assert_eq!(fields.len(), 34, "{record:?}");
        for field in fields {
            let formula = field.starts_with(['=', '+', '-', '@', '\t', '\r']);
            assert!(!formula || field.parse::<f64>().is_ok(), "{field:?}");
        }
    }
    Ok(shown)
}

#[test]
fn a_forged_export_is_rendered_as_text_by_host_report() -> TestResult {
    let dir = tempfile::tempdir()?;
    std::fs::copy(fixture("names/control.wat"), dir.path().join("control.wat"))?;
    let args = [
        "run",
        "control.wat",
        "--samples",
        "20",
        "--warmup",
        "20ms",
        "--sample-time",
        "500us",
        "--export-json",
        "run.json",
    ];
    let ran = run_host_within(&args, dir.path(), Duration::from_secs(120))?;
    assert_eq!(ran.status.code(), Some(0), "{ran:?}");
    let mut export: Value = serde_json::from_slice(&std::fs::read(dir.path().join("run.json"))?)?;
    export["environment"]["warnings"] = Value::from(vec!["x"]);
    export["environment"]["core_choice"] = Value::from("x");
    export["stopped"] = Value::from("x");
    for hostile in HOSTILE {
        report_forged(dir.path(), &export, hostile)?;
    }
    let shown = report_forged(dir.path(), &export, "<script>alert(1)</script>")?;
    assert!(
        shown
            .html
            .contains("<!-- wasm-bench &lt;script&gt;alert(1)&lt;/script&gt; -->")
    );
    assert!(
        shown
            .html
            .contains("Made by wasm-bench &lt;script&gt;alert(1)&lt;/script&gt;.")
    );
    let shown = report_forged(dir.path(), &export, "=cmd|' /C calc'!A0")?;
    assert!(
        shown
            .csv
            .contains("\r\n'=cmd|' /C calc'!A0,'=cmd|' /C calc'!A0,")
    );
    let shown = report_forged(dir.path(), &export, "[fix the build](https://x)")?;
    assert!(
        shown
            .markdown
            .contains("| \\[fix the build\\](https://x) | ")
    );
    let shown = report_forged(dir.path(), &export, "\x1b]0;title\x07")?;
    assert!(
        shown.stdout.contains("(\\u{1b}]0;title\\u{7})"),
        "{}",
        shown.stdout
    );
    let shown = report_forged(dir.path(), &export, "a\nfaster 0.5×")?;
    assert!(!shown.stdout.lines().any(|l| l.starts_with("faster")));
    assert!(
        shown.stdout.contains("a\\u{a}faster 0.5×"),
        "{}",
        shown.stdout
    );
    Ok(())
}
