//! Where results go: the export formats and their files (`--export-*`),
//! and the settings of `host report`.

use std::path::PathBuf;

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

use crate::cli::{ExportArgs, ReportArgs};

/// An export format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExportFormat {
    Json,
    Markdown,
    Csv,
    Html,
    /// github-action-benchmark's `customSmallerIsBetter` JSON.
    Dashboard,
    /// Bencher's metric format.
    Bencher,
}

impl ExportFormat {
    /// The flag that asks for it.
    pub fn flag(self) -> &'static str {
        match self {
            ExportFormat::Json => "--export-json",
            ExportFormat::Markdown => "--export-markdown",
            ExportFormat::Csv => "--export-csv",
            ExportFormat::Html => "--export-html",
            ExportFormat::Dashboard => "--export-dashboard",
            ExportFormat::Bencher => "--export-bencher",
        }
    }

    /// Formats that track each workload over time: `host run` only.
    fn run_only(self) -> bool {
        matches!(self, ExportFormat::Dashboard | ExportFormat::Bencher)
    }
}

/// The exports asked for: a list of (format, where it goes).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exports(Vec<(ExportFormat, Output)>);

impl Exports {
    pub(super) fn from_args(args: ExportArgs) -> Self {
        let asked = [
            (ExportFormat::Json, args.export_json),
            (ExportFormat::Markdown, args.export_markdown),
            (ExportFormat::Csv, args.export_csv),
            (ExportFormat::Html, args.export_html),
            (ExportFormat::Dashboard, args.export_dashboard),
            (ExportFormat::Bencher, args.export_bencher),
        ];
        Exports(
            asked
                .into_iter()
                .filter_map(|(format, path)| path.map(|p| (format, Output::from_path(p))))
                .collect(),
        )
    }

    /// Every export asked for.
    pub fn iter(&self) -> impl Iterator<Item = (ExportFormat, &Output)> {
        self.0.iter().map(|(format, output)| (*format, output))
    }

    /// Where `format` goes, if it was asked for.
    pub fn get(&self, format: ExportFormat) -> Option<&Output> {
        self.iter().find(|(f, _)| *f == format).map(|(_, o)| o)
    }

    /// Whether an export goes to stdout (then the table goes to stderr).
    pub fn to_stdout(&self) -> bool {
        self.iter().any(|(_, o)| *o == Output::Stdout)
    }

    /// At most one export may go to stdout.
    pub(super) fn check(&self) -> Result<()> {
        let to_stdout: Vec<&str> = self
            .iter()
            .filter(|(_, o)| **o == Output::Stdout)
            .map(|(format, _)| format.flag())
            .collect();
        if to_stdout.len() > 1 {
            bail!(
                "{}: only one export can go to stdout (`-`)",
                to_stdout.join(", ")
            );
        }
        Ok(())
    }

    /// Compare reports have no per-workload history formats.
    pub(super) fn check_for_compare(&self) -> Result<()> {
        if let Some((format, _)) = self.iter().find(|(f, _)| f.run_only()) {
            bail!(
                "{}: for `host run` only (it tracks each workload over time)",
                format.flag()
            );
        }
        Ok(())
    }
}

/// What `host report` needs: the saved export and where to render it.
#[derive(Debug, Clone)]
pub struct ReportSettings {
    /// One export to render, or several run exports to merge.
    pub paths: Vec<PathBuf>,
    pub exports: Exports,
}

impl ReportSettings {
    /// Check and convert the flags of `host report`.
    pub fn from_args(args: ReportArgs) -> Result<Self> {
        let exports = Exports::from_args(args.exports);
        exports.check()?;
        Ok(ReportSettings {
            paths: args.paths,
            exports,
        })
    }
}

/// Where an export goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Output {
    Stdout,
    File(PathBuf),
}

impl Output {
    fn from_path(path: PathBuf) -> Self {
        if path.as_os_str() == "-" {
            Output::Stdout
        } else {
            Output::File(path)
        }
    }
}
