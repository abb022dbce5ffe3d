//! `host compare`: variants measured in one process, interleaved in rounds
//! ([`crate::benchmark::parent::compare::compare_rounds`]), with a verdict per
//! variant; print the verdicts and export.

use anyhow::Result;

use crate::benchmark::parent::compare::compare_rounds;
use crate::command::run::{progress_display, table_stream};
use crate::guest::discover;
use crate::options::CompareSettings;
use crate::output::escape::terminal;
use crate::output::export::{check_writable_folders, write_compare_exports};
use crate::output::table::Table;
use crate::util::error::one_line;
use crate::util::exit::ExitStatus;
use crate::util::usage::is_usage;

/// Compare the variants `settings` names.
pub fn compare(settings: &CompareSettings) -> Result<ExitStatus> {
    let common = &settings.settings;
    let files = discover(&common.paths)?;
    check_writable_folders(&common.exports)?;
    let progress = progress_display(common);
    let report = match compare_rounds(settings, &files, progress.as_ref()) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("error: {}", terminal(&one_line(&e)));
            return Ok(match is_usage(&e) {
                true => ExitStatus::Usage,
                false => ExitStatus::Failed,
            });
        }
    };
    let mut table = Table::new(table_stream(&common.exports));
    let _ = table.comparison(&report);
    if let (Some(profile), Some(profiling)) = (&report.profile, &settings.profile) {
        let _ = table.profiles(profile, profiling.top);
    }
    write_compare_exports(&common.exports, &report)?;
    Ok(ExitStatus::Success)
}
