//! `host report FILE`: render a saved JSON export of `host run` or `host
//! compare` again, as criterion's reports can be regenerated: the terminal
//! table, and any `--export-*` file, without measuring. A file that is not a
//! wasm-bench export is refused with a clear error.

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::command::run::table_stream;
use crate::options::ReportSettings;
use crate::output::export::{check_writable_folders, write_compare_exports, write_run_exports};
use crate::output::table::Table;
use crate::results::{CompareReport, RunReport, Tool};
use crate::util::exit::ExitStatus;

/// Read the export `settings` names and render it.
pub fn report(settings: &ReportSettings) -> Result<ExitStatus> {
    let path = &settings.path;
    check_writable_folders(&settings.exports)?;
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read the file", path.display()))?;
    let value: Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
    if value.pointer("/tool/name").and_then(Value::as_str) != Some(Tool::NAME) {
        bail!(
            "{}: not a wasm-bench export (write one with `host run ... --export-json FILE`)",
            path.display()
        );
    }
    let mut table = Table::new(table_stream(&settings.exports));
    if value.get("comparisons").is_some() {
        let report: CompareReport = serde_json::from_value(value)
            .with_context(|| format!("{}: not a wasm-bench compare export", path.display()))?;
        let _ = table.comparison(&report);
        write_compare_exports(&settings.exports, &report)?;
    } else {
        let report: RunReport = serde_json::from_value(value)
            .with_context(|| format!("{}: not a wasm-bench run export", path.display()))?;
        let _ = table.header(&report.environment, &names(&report));
        for result in &report.results {
            let _ = table.row(result);
        }
        let _ = table.footer(&report);
        write_run_exports(&settings.exports, &report)?;
    }
    Ok(ExitStatus::Success)
}

fn names(report: &RunReport) -> Vec<String> {
    report.results.iter().map(|r| r.name.clone()).collect()
}
