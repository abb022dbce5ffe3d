//! `host report FILE...`: render a saved JSON export of `host run` or `host
//! compare` again, as criterion's reports can be regenerated: the terminal
//! table, and any `--export-*` file, without measuring; several exports of
//! `host run` (the shards of a sharded run) are merged into one report
//! first ([`crate::command::merge`]). A file that is not a wasm-bench
//! export is refused with a clear error.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::command::merge::merge_runs;
use crate::command::run::table_stream;
use crate::options::ReportSettings;
use crate::output::export::{check_writable_folders, write_compare_exports, write_run_exports};
use crate::output::table::Table;
use crate::results::{CompareReport, Foreign, RunReport, Tool};
use crate::util::exit::ExitStatus;
use crate::util::fs::{Cap, Links, read_bounded};

/// The largest export read back: 256 MiB, far above the JSON of a run of
/// hundreds of rows with their raw samples.
pub const MAX_REPORT_BYTES: u64 = 256 << 20;

/// Read the export(s) `settings` names and render them.
pub fn report(settings: &ReportSettings) -> Result<ExitStatus> {
    check_writable_folders(&settings.exports)?;
    let mut table = Table::new(table_stream(&settings.exports));
    let report = match settings.paths.as_slice() {
        [path] => match read_export(path)? {
            Export::Run(report) => *report,
            Export::Compare(report) => {
                let _ = table.comparison(&report);
                write_compare_exports(&settings.exports, &report)?;
                return Ok(ExitStatus::Success);
            }
        },
        paths => {
            let mut runs = Vec::new();
            for path in paths {
                match read_export(path)? {
                    Export::Run(report) => runs.push((path.clone(), *report)),
                    Export::Compare(_) => bail!(
                        "{}: a compare export: only exports of `host run` are merged",
                        path.display()
                    ),
                }
            }
            merge_runs(runs)?
        }
    };
    let _ = match report.merged_from.as_slice() {
        [] => table.header(&report.environment, &names(&report)),
        exports => table.merged_header(&report.environment, exports, &names(&report)),
    };
    for result in &report.results {
        let _ = table.row(result);
    }
    let _ = table.footer(&report);
    write_run_exports(&settings.exports, &report)?;
    Ok(ExitStatus::Success)
}

/// A saved export, of either kind.
enum Export {
    Run(Box<RunReport>),
    Compare(Box<CompareReport>),
}

/// Read the export at `path`, bounded, and tell its kind.
fn read_export(path: &Path) -> Result<Export> {
    let cap = Cap {
        bytes: MAX_REPORT_BYTES,
        name: "the cap on an export read back",
    };
    let bytes = read_bounded(path, cap, Links::Follow)?;
    let value: Value =
        serde_json::from_slice(&bytes).with_context(|| format!("{}: not JSON", path.display()))?;
    if value.pointer("/tool/name").and_then(Value::as_str) != Some(Tool::NAME) {
        bail!(
            "{}: not a wasm-bench export (write one with `host run ... --export-json FILE`)",
            path.display()
        );
    }
    Ok(match value.get("comparisons").is_some() {
        true => Export::Compare(
            serde_json::from_value(value)
                .with_context(|| format!("{}: not a wasm-bench compare export", path.display()))?,
        ),
        false => Export::Run(
            serde_json::from_value(value)
                .with_context(|| format!("{}: not a wasm-bench run export", path.display()))?,
        ),
    })
}

fn names(report: &RunReport) -> Vec<&Foreign> {
    report.results.iter().map(|r| &r.name).collect()
}

#[cfg(test)]
#[path = "report_fuzz.rs"]
mod fuzz;

#[cfg(test)]
mod tests {
    use super::*;

    fn said(path: &std::path::Path) -> String {
        let settings = ReportSettings {
            paths: vec![path.to_path_buf()],
            exports: Default::default(),
        };
        match report(&settings) {
            Ok(status) => format!("{status:?}"),
            Err(e) => format!("{e:#}"),
        }
    }

    #[test]
    fn a_fifo_a_device_or_an_oversized_file_is_refused_unread() {
        let dir = tempfile::tempdir().expect("temp dir");
        let fifo = dir.path().join("fifo.json");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()));
        let text = said(&fifo);
        assert!(text.contains("fifo.json: not a regular file"), "{text}");
        let zero = dir.path().join("zero.json");
        std::os::unix::fs::symlink("/dev/zero", &zero).expect("links");
        assert!(said(&zero).contains("not a regular file"));
        let big = dir.path().join("big.json");
        let file = std::fs::File::create(&big).expect("creates");
        file.set_len(MAX_REPORT_BYTES + 1).expect("grows");
        let text = said(&big);
        assert!(
            text.contains("larger than the cap on an export read back 256 MiB"),
            "{text}"
        );
    }
}
