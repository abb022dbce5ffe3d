//! Write results to files or stdout, atomically
//! ([`crate::util::fs::write_atomically`]), in the export formats a command
//! asks for. JSON is written here; each other format has its own file and
//! returns a `String`:
//!
//! - [`markdown`]: GitHub-flavoured Markdown tables ([`markdown_run`],
//!   [`markdown_compare`]),
//! - [`csv`]: RFC 4180 CSV ([`csv_run`], [`csv_compare`]),
//! - [`dashboard`]: github-action-benchmark's `customSmallerIsBetter` JSON
//!   ([`dashboard_run`]),
//! - [`bencher`]: Bencher's metric format, BMF ([`bencher_run`]),
//! - [`html`]: one self-contained page with SVG plots ([`html_run`],
//!   [`html_compare`], [`html::html_suite`]);
//! - [`suite`]: every export of a suite's comparison.
//!
//! This module formats nothing for the terminal ([`crate::output::table`] does).

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::options::{ExportFormat, Exports, Output};
use crate::results::{CompareReport, RunReport};
use crate::util::fs::write_atomically;

pub mod bencher;
pub mod csv;
pub mod dashboard;
pub mod html;
pub mod markdown;
pub mod suite;

pub use bencher::bencher_run;
pub use csv::{csv_compare, csv_run};
pub use dashboard::dashboard_run;
pub use html::{html_compare, html_run};
pub use markdown::{markdown_compare, markdown_run};
pub use suite::write_suite_exports;

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

/// Write `text` to `output`.
pub fn write_text(text: &str, output: &Output) -> Result<()> {
    match output {
        Output::Stdout => {
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush())
                .context("writing to stdout")
        }
        Output::File(path) => write_atomically(path, text.as_bytes()),
    }
}

/// Fail before measuring when an export could not be written afterwards.
pub fn check_writable_folders(exports: &Exports) -> Result<()> {
    for (format, output) in exports.iter() {
        let Output::File(path) = output else { continue };
        let folder = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        if !folder.is_dir() {
            anyhow::bail!(
                "{}: the folder {} does not exist",
                format.flag(),
                folder.display()
            );
        }
    }
    Ok(())
}

/// Every export of a `host run` report in `exports`.
pub fn write_run_exports(exports: &Exports, report: &RunReport) -> Result<()> {
    for (format, output) in exports.iter() {
        match format {
            ExportFormat::Json => write_json(report, output)?,
            ExportFormat::Markdown => write_text(&markdown_run(report), output)?,
            ExportFormat::Csv => write_text(&csv_run(report)?, output)?,
            ExportFormat::Html => write_text(&html_run(report), output)?,
            ExportFormat::Dashboard => write_text(&dashboard_run(report), output)?,
            ExportFormat::Bencher => write_text(&bencher_run(report), output)?,
        }
    }
    Ok(())
}

/// Every export of a `host compare` report in `exports`.
pub fn write_compare_exports(exports: &Exports, report: &CompareReport) -> Result<()> {
    for (format, output) in exports.iter() {
        match format {
            ExportFormat::Json => write_json(report, output)?,
            ExportFormat::Markdown => write_text(&markdown_compare(report), output)?,
            ExportFormat::Csv => write_text(&csv_compare(report)?, output)?,
            ExportFormat::Html => write_text(&html_compare(report), output)?,
            ExportFormat::Dashboard | ExportFormat::Bencher => anyhow::bail!(
                "{}: for `host run` reports only (it tracks each workload over time)",
                format.flag()
            ),
        }
    }
    Ok(())
}
