//! `host compare`: variants measured in one process, interleaved in rounds
//! ([`crate::benchmark::parent::compare::compare_rounds`]), with a verdict per
//! variant; or, for a suite ([`suite_of`] says when), a comparison per
//! benchmark across the engines or the paths given
//! ([`crate::benchmark::parent::suite::compare_suite`]). Print the verdicts
//! and export.

use anyhow::{Result, bail};

use crate::benchmark::parent::compare::compare_rounds;
use crate::benchmark::parent::suite::{Suite, compare_suite, suite_of};
use crate::command::run::{Keeper, progress_display, table_stream};
use crate::guest::{discover, sandbox};
use crate::options::CompareSettings;
use crate::output::escape::terminal;
use crate::output::export::{check_writable_folders, write_compare_exports, write_suite_exports};
use crate::output::suite_table::suite_table;
use crate::output::table::Table;
use crate::results::store::{KeptRun, Store};
use crate::util::error::one_line;
use crate::util::exit::ExitStatus;
use crate::util::usage::{UsageError, is_usage};

/// Compare the variants `settings` names, or every benchmark of a suite.
pub fn compare(settings: &CompareSettings) -> Result<ExitStatus> {
    let common = &settings.settings;
    let engines: Vec<String> = common.engines.iter().map(|e| e.short_name()).collect();
    if let Some(found) = suite_of(&common.paths, &engines)? {
        return suite(settings, &found);
    }
    if settings.suite_time.is_some() {
        bail!(UsageError(
            "--suite-time: these paths make one comparison, not a suite; give its cap with --time"
                .into()
        ));
    }
    let files = discover(&common.paths)?;
    check_writable_folders(&common.exports)?;
    let keeper = match (&common.store.folder, common.store.keep) {
        (Some(folder), true) => Some(Keeper::new(Store::new(folder))),
        _ => None,
    };
    let progress = progress_display(common);
    let mut report = match compare_rounds(settings, &files, progress.as_ref()) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("error: {}", terminal(&one_line(&e)));
            return Ok(match (is_usage(&e), sandbox::interrupted()) {
                (true, _) => ExitStatus::Usage,
                (false, true) => ExitStatus::Interrupted,
                (false, false) => ExitStatus::Failed,
            });
        }
    };
    let mut kept = true;
    if let (Some(keeper), None) = (keeper, &report.stopped) {
        let run = KeptRun::of_comparison(&report, crate::command::run::provenance(common, &files));
        if let Err(warning) = keeper.keep(&run, None) {
            kept = false;
            report.environment.warnings.push(warning);
        }
    }
    let mut table = Table::new(table_stream(&common.exports));
    let _ = table.comparison(&report);
    if let (Some(profile), Some(profiling)) = (&report.profile, &settings.profile) {
        let _ = table.profiles(profile, profiling.top);
    }
    write_compare_exports(&common.exports, &report)?;
    Ok(match &report.stopped {
        Some(why) => {
            eprintln!("stopped: {why}: the verdicts are of the rounds taken so far");
            ExitStatus::Interrupted
        }
        None if !kept => ExitStatus::NotKept,
        None => ExitStatus::Success,
    })
}

/// Compare every benchmark of `suite`, print the verdicts sorted by effect
/// and the summary, and export.
fn suite(settings: &CompareSettings, suite: &Suite) -> Result<ExitStatus> {
    if settings.reference.is_some() {
        bail!(UsageError(
            "--reference: a suite is compared against its first engine (or first path): give that one first".into()
        ));
    }
    if settings.profile.is_some() {
        bail!(UsageError(
            "--profile: profile the variants of one benchmark (compare its files), not a suite"
                .into()
        ));
    }
    let common = &settings.settings;
    check_writable_folders(&common.exports)?;
    let progress = progress_display(common);
    let mut report = compare_suite(settings, suite, progress.as_ref());
    let kept = crate::command::suite_history::against_earlier_runs(settings, suite, &mut report);
    let _ = suite_table(&mut table_stream(&common.exports), &report);
    write_suite_exports(&common.exports, &report)?;
    Ok(if report.stopped.is_some() {
        ExitStatus::Interrupted
    } else if report.failures() > 0 || (settings.fail_on_unsupported && report.unsupported() > 0) {
        ExitStatus::Failed
    } else if !kept {
        ExitStatus::NotKept
    } else {
        ExitStatus::Success
    })
}
