//! End-to-end tests of names from guests (issue #30): an export name or a
//! file name with a newline or an escape sequence in it is shown escaped on
//! the terminal (one row, no raw control character), in Markdown (its cell
//! closed), in HTML (no raw control character either) and quoted in CSV;
//! the JSON keeps it exactly.

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
    assert!(markdown.contains("| control:\\u{1b}[2J | "), "{markdown}");
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
        csv.contains("\r\n\"control:a\nb\",\"control:a\nb\",,,control.wat,"),
        "{csv:?}"
    );
    Ok(())
}
