//! What a program wrote, checked against the `.expected` files beside it.
//! An expected file that is a symbolic link leading out of the program's
//! folder is refused, neither followed nor quoted.

use std::path::Path;

use anyhow::{Result, bail};

use crate::util::fs::{Cap, Links, is_not_found, read_bounded};

/// Most bytes captured from each of stdout and stderr per iteration.
pub(crate) const CAPTURE_LIMIT: usize = 64 << 20;

/// The two files that may hold a stream's expected output, the first
/// found wins: `<name>.<stream>.expected`, `default.<stream>.expected`.
fn candidates(name: &str, stream: &str) -> [String; 2] {
    [
        format!("{name}.{stream}.expected"),
        format!("default.{stream}.expected"),
    ]
}

/// The expected-output files a program's output is checked against: per
/// stream, the first of [`candidates`] beside it (it may still be refused
/// when read).
pub fn expected_files(folder: &Path, name: &str) -> Vec<String> {
    ["stdout", "stderr"]
        .iter()
        .filter_map(|stream| {
            candidates(name, stream)
                .into_iter()
                .find(|file| std::fs::symlink_metadata(folder.join(file)).is_ok())
        })
        .collect()
}

/// `<name>.<stream>.expected`, else `default.<stream>.expected`, if either
/// sits beside the program. One that is not a regular file, is larger
/// than the output a program may write ([`crate::util::fs::read_bounded`]),
/// or is a symbolic link leading out of `folder` is an error.
pub(crate) fn expected(folder: &Path, name: &str, stream: &str) -> Result<Option<Vec<u8>>> {
    let cap = Cap {
        bytes: CAPTURE_LIMIT as u64,
        name: "the output a program may write,",
    };
    for file in candidates(name, stream) {
        let path = folder.join(file);
        stays_inside(folder, &path)?;
        match read_bounded(&path, cap, Links::Follow) {
            Ok(bytes) => return Ok(Some(bytes)),
            Err(e) if is_not_found(&e) => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}

/// Refuse `path` when it is a symbolic link whose target (every link
/// resolved) is not inside `folder`: a planted link to `/etc/passwd` or
/// `../secret.txt` would otherwise be read and quoted in a mismatch. A
/// missing `path` passes (the read says it is missing).
fn stays_inside(folder: &Path, path: &Path) -> Result<()> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    if !meta.file_type().is_symlink() {
        return Ok(());
    }
    let inside = match (std::fs::canonicalize(folder), std::fs::canonicalize(path)) {
        (Ok(home), Ok(target)) => target.starts_with(home),
        _ => false,
    };
    if !inside {
        bail!(
            "reading {}: a symbolic link leading out of the program's folder (or nowhere): refused without following it",
            path.display()
        );
    }
    Ok(())
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
        assert!(
            text.contains("leading out of the program's folder"),
            "{text}"
        );
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

    #[test]
    fn an_expected_file_linking_out_of_the_folder_is_refused_unread() {
        let outer = tempfile::tempdir().expect("temp dir");
        let folder = outer.path().join("program");
        std::fs::create_dir(&folder).expect("creates");
        let secret = outer.path().join("secret.txt");
        std::fs::write(&secret, b"the secret").expect("writes");
        let file = folder.join("w.stdout.expected");
        for target in [
            Path::new("../secret.txt"),
            Path::new("/etc/passwd"),
            &secret,
        ] {
            std::os::unix::fs::symlink(target, &file).expect("links");
            let text = said(&folder);
            assert!(
                text.contains("leading out of the program's folder"),
                "{target:?}: {text}"
            );
            assert!(!text.contains("the secret"), "{text}");
            std::fs::remove_file(&file).expect("removes");
        }
        // A link within the folder is followed.
        std::fs::write(folder.join("real.txt"), b"ok").expect("writes");
        std::os::unix::fs::symlink("real.txt", &file).expect("links");
        assert_eq!(said(&folder), "Some([111, 107])");
        assert_eq!(expected_files(&folder, "w"), ["w.stdout.expected"]);
    }
}
