//! What a program wrote, checked against the `.expected` files beside it.

use std::path::Path;

use anyhow::{Result, bail};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;

use crate::util::fs::{Cap, Links, is_not_found, read_bounded};

/// `<name>.<stream>.expected`, else `default.<stream>.expected`, if either
/// sits beside the workload. One that is not a regular file, or is larger
/// than the output a program may write, is an error
/// ([`crate::util::fs::read_bounded`]).
pub(crate) fn expected(folder: &Path, name: &str, stream: &str) -> Result<Option<Vec<u8>>> {
    let cap = Cap {
        bytes: super::CAPTURE_LIMIT as u64,
        name: "the output a program may write,",
    };
    for file in [
        format!("{name}.{stream}.expected"),
        format!("default.{stream}.expected"),
    ] {
        match read_bounded(&folder.join(file), cap, Links::Follow) {
            Ok(bytes) => return Ok(Some(bytes)),
            Err(e) if is_not_found(&e) => continue,
            Err(e) => return Err(e),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn said(folder: &Path) -> String {
        match expected(folder, "w", "stdout") {
            Ok(found) => format!("{found:?}"),
            Err(e) => format!("{e:#}"),
        }
    }

    #[test]
    fn expected_output_is_read_only_from_a_regular_file_under_the_cap() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert_eq!(said(dir.path()), "None");
        let file = dir.path().join("w.stdout.expected");
        std::fs::write(&file, b"hi").expect("writes");
        assert_eq!(said(dir.path()), "Some([104, 105])");
        std::fs::remove_file(&file).expect("removes");
        let made = std::process::Command::new("mkfifo").arg(&file).status();
        assert!(made.is_ok_and(|s| s.success()));
        let text = said(dir.path());
        assert!(
            text.contains("w.stdout.expected: not a regular file"),
            "{text}"
        );
        std::fs::remove_file(&file).expect("removes");
        std::os::unix::fs::symlink("/dev/zero", &file).expect("links");
        let text = said(dir.path());
        assert!(text.contains("not a regular file"), "{text}");
        std::fs::remove_file(&file).expect("removes");
        let big = std::fs::File::create(&file).expect("creates");
        big.set_len(super::super::CAPTURE_LIMIT as u64 + 1)
            .expect("grows");
        let text = said(dir.path());
        assert!(
            text.contains("larger than the output a program may write, 64 MiB"),
            "{text}"
        );
    }
}
