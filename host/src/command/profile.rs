//! `host profile`: sample each workload's wasm stack while it runs
//! ([`crate::benchmark::parent::profile::profile_files`]), write a profile per
//! workload, print the functions that take the most time, and export the
//! tables as JSON when asked.

use anyhow::{Result, bail};

use crate::benchmark::parent::profile::profile_files;
use crate::command::run::{progress_display, table_stream};
use crate::guest::discover;
use crate::options::{ExportFormat, ProfileSettings};
use crate::output::export::{check_writable_folders, write_json};
use crate::output::table::Table;
use crate::util::exit::ExitStatus;

/// Profile what `settings` names.
pub fn profile(settings: &ProfileSettings) -> Result<ExitStatus> {
    let common = &settings.settings;
    for (format, _) in common.exports.iter() {
        if format != ExportFormat::Json {
            bail!("{}: `host profile` exports JSON only", format.flag());
        }
    }
    let files = discover(&common.paths)?;
    check_writable_folders(&common.exports)?;
    let progress = progress_display(common);
    let report = profile_files(common, &settings.profiling, &files, progress.as_ref())?;
    progress.finish();
    let mut table = Table::new(table_stream(&common.exports));
    let _ = table.profiles(&report, settings.profiling.top);
    for (_, output) in common.exports.iter() {
        write_json(&report, output)?;
    }
    Ok(if report.profiles.iter().any(|p| p.error.is_some()) {
        ExitStatus::Failed
    } else {
        ExitStatus::Success
    })
}
