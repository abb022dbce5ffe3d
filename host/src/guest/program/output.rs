//! What a program wrote, checked against the `.expected` files beside it.

use std::path::Path;

use anyhow::{Context, Result, bail};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;

/// `<name>.<stream>.expected`, else `default.<stream>.expected`, if either
/// sits beside the workload.
pub(crate) fn expected(folder: &Path, name: &str, stream: &str) -> Result<Option<Vec<u8>>> {
    for file in [
        format!("{name}.{stream}.expected"),
        format!("default.{stream}.expected"),
    ] {
        let path = folder.join(file);
        if path.is_file() {
            return std::fs::read(&path)
                .map(Some)
                .with_context(|| format!("reading {}", path.display()));
        }
    }
    Ok(None)
}

/// Whether `got` matches `expected` as text, line by line: CRLF and LF
/// are the same line ending, and a final newline does not count.
pub fn same_lines(got: &[u8], expected: &[u8]) -> bool {
    String::from_utf8_lossy(got)
        .lines()
        .eq(String::from_utf8_lossy(expected).lines())
}

pub(crate) fn check_output(stream: &str, got: &[u8], expected: Option<&[u8]>) -> Result<()> {
    let Some(expected) = expected else {
        return Ok(());
    };
    if same_lines(got, expected) {
        return Ok(());
    }
    let got_text = String::from_utf8_lossy(got);
    let expected_text = String::from_utf8_lossy(expected);
    // The first line that differs, 1-based.
    let mut got_lines = got_text.lines();
    let mut expected_lines = expected_text.lines();
    let mut line = 1;
    let (g, e) = loop {
        match (got_lines.next(), expected_lines.next()) {
            (Some(g), Some(e)) if g == e => line += 1,
            (g, e) => {
                break (
                    g.unwrap_or("(end of output)"),
                    e.unwrap_or("(end of output)"),
                );
            }
        }
    };
    let clip = |s: &str| s.chars().take(80).collect::<String>();
    bail!(
        "{stream} differs from the expected output at line {line}: got `{}`, expected `{}`",
        clip(g),
        clip(e)
    )
}

pub(super) fn stderr_tail(stderr: &MemoryOutputPipe) -> String {
    tail(&stderr.contents())
}

/// The last line of what a program wrote to stderr, as ` (stderr: ...)`,
/// or nothing.
pub(crate) fn tail(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    match text.lines().last() {
        Some(line) if !line.trim().is_empty() => format!(" (stderr: {})", line.trim()),
        _ => String::new(),
    }
}
