//! Write results to files or stdout, atomically, and turn them into the
//! export formats.
//!
//! A file is written to a temporary sibling and renamed into place, so a
//! crash never leaves a half-written export. JSON is written here; each other
//! format has its own file and returns a `String` that [`write_atomically`]
//! (or stdout) takes:
//!
//! - [`markdown`]: GitHub-flavoured Markdown tables ([`markdown_run`],
//!   [`markdown_compare`]),
//! - [`csv`]: RFC 4180 CSV ([`csv_run`], [`csv_compare`]),
//! - [`dashboard`]: github-action-benchmark's `customSmallerIsBetter` JSON
//!   ([`dashboard_run`]),
//! - [`html`]: one self-contained page with SVG plots ([`html_run`],
//!   [`html_compare`]).
//!
//! This module formats nothing for the terminal ([`crate::report`] does).

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::result::{BenchResult, Figures};
use crate::settings::Output;
use crate::units::{format_count, format_ns_in, format_rate, unit_for};

pub mod csv;
pub mod dashboard;
pub mod html;
pub mod markdown;

#[cfg(test)]
mod fixtures;

pub use csv::{csv_compare, csv_run};
pub use dashboard::dashboard_run;
pub use html::{html_compare, html_run};
pub use markdown::{markdown_compare, markdown_run};

/// Write `value` as pretty JSON to `output`.
pub fn write_json<T: Serialize>(value: &T, output: &Output) -> Result<()> {
    let mut bytes = serde_json::to_vec_pretty(value).context("serialising the results as JSON")?;
    bytes.push(b'\n');
    match output {
        Output::Stdout => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(&bytes).context("writing JSON to stdout")?;
            stdout.flush().context("writing JSON to stdout")
        }
        Output::File(path) => write_atomically(path, &bytes),
    }
}

/// Write `bytes` to `path` through a temporary file in the same folder and a
/// rename.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    // Something that is not a regular file (`/dev/null`, `/dev/stdout`, a
    // pipe) is written in place: renaming over it would replace it.
    if let Ok(meta) = std::fs::metadata(path)
        && !meta.is_file()
    {
        if meta.is_dir() {
            anyhow::bail!("writing {}: it is a folder", path.display());
        }
        return std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|mut f| f.write_all(bytes))
            .with_context(|| format!("writing {}", path.display()));
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .with_context(|| format!("{}: not a file name", path.display()))?;
    let temporary = folder.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    result.with_context(|| format!("writing {}", path.display()))
}

/// The display cells of a measured row, as the terminal table shows them:
/// median and interval in one unit, err%, rate.
struct Cells {
    time: String,
    err: String,
    ci: String,
    rate: String,
    count: String,
}

impl Cells {
    fn of(f: &Figures) -> Self {
        let ns = &f.ns_per_op;
        let unit = unit_for(&[ns.median, ns.ci95_low, ns.ci95_high]);
        Cells {
            time: format_ns_in(ns.median, unit),
            err: format!("±{:.1}%", f.err_pct.min(999.9)),
            ci: format!(
                "[{}, {}]",
                format_ns_in(ns.ci95_low, unit),
                format_ns_in(ns.ci95_high, unit)
            ),
            rate: match f.indistinguishable_from_empty {
                true => "-".to_string(),
                false => format_rate(f.ops_per_sec.unwrap_or(0.0)),
            },
            count: format_count(f.count),
        }
    }
}

/// The plain-words lines under a measured row, as the terminal prints them:
/// program phases, instructions, notes, the baseline comparison.
fn row_notes(r: &BenchResult) -> Vec<String> {
    let mut notes = Vec::new();
    let Some(f) = &r.figures else {
        return notes;
    };
    if let Some(p) = &f.phases {
        let region = match p.timed_region {
            crate::program::TimedRegion::StartToEnd => "bench.start..bench.end",
            crate::program::TimedRegion::WholeStart => "whole _start",
        };
        notes.push(format!(
            "phases: compile {:.2} ms · instantiate {} · execute {} ({region}), medians of {} iterations",
            p.compile_ms,
            crate::units::format_ns(p.instantiate_ns.median),
            crate::units::format_ns(p.execute_ns.median),
            p.execute_ns.samples
        ));
    }
    if let Some(fuel) = f.fuel_per_op {
        notes.push(format!("instructions: {fuel:.2} per op"));
    }
    notes.extend(f.notes.iter().cloned());
    if let Some(b) = &r.baseline {
        let flag = if b.regression { " (regression)" } else { "" };
        notes.push(format!(
            "vs baseline `{}` ({}): {}{flag}",
            b.name, b.metric, b.text
        ));
    }
    notes
}

/// A ratio for display, e.g. `1.234×`.
fn format_ratio(ratio: f64) -> String {
    if ratio.is_finite() {
        format!("{ratio:.3}×")
    } else {
        "-".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary() -> Result<()> {
        let dir = std::env::temp_dir().join(format!("wasm-bench-export-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let path = dir.join("out.json");
        write_atomically(&path, b"first")?;
        write_atomically(&path, b"second")?;
        assert_eq!(std::fs::read(&path)?, b"second");
        let leftovers = std::fs::read_dir(&dir)?.count();
        assert_eq!(leftovers, 1);
        std::fs::remove_dir_all(&dir)?;
        Ok(())
    }

    /// Device files are written in place, never replaced (issue: renaming a
    /// temporary file over `/dev/null` as root replaced the device).
    #[cfg(unix)]
    #[test]
    fn device_files_are_written_in_place() -> Result<()> {
        use std::os::unix::fs::FileTypeExt;
        write_atomically(Path::new("/dev/null"), b"discarded")?;
        assert!(std::fs::metadata("/dev/null")?.file_type().is_char_device());
        Ok(())
    }

    #[test]
    fn missing_folder_is_an_error_naming_the_file() {
        let path = Path::new("/nonexistent-folder-wasm-bench/out.json");
        let err = write_atomically(path, b"x").err().map(|e| format!("{e:#}"));
        assert!(err.is_some_and(|e| e.contains("/nonexistent-folder-wasm-bench/out.json")));
    }
}
