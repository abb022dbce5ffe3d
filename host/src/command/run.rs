//! `host run`: measure every row, print the table as rows finish, compare
//! with a baseline, keep the run in the store, export, and say how the run
//! ended. A store that cannot keep the run never costs its results: they are
//! printed and exported, and the exit status says "measured, not kept".

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Result, bail};

use crate::benchmark::parent::run::{Observer, run_rows};
use crate::benchmark::progress::Progress;
use crate::command::expected::save_expected;
use crate::guest::control::ControlFile;
use crate::guest::discover;
use crate::options::{Exports, Settings};
use crate::output::escape::terminal;
use crate::output::export::{check_writable_folders, write_run_exports};
use crate::output::progress::Bar;
use crate::output::table::Table;
use crate::results::modules::{MODULES_BUDGET, Modules};
use crate::results::store::{KeptRun, Provenance, Store};
use crate::results::{BenchResult, Environment, RunReport, baseline};
use crate::util::error::one_line;
use crate::util::exit::ExitStatus;
use crate::util::foreign::Foreign;

/// Measure, print, save and export what `settings` asks for.
pub fn run(settings: &Settings) -> Result<ExitStatus> {
    let files = discover(&settings.paths)?;
    let files = match settings.shard {
        Some(shard) => {
            let all = files.len();
            let share = shard.select(files);
            if share.is_empty() {
                bail!("--shard {shard}: no file falls to this shard ({all} files in all)");
            }
            share
        }
        None => files,
    };
    let control = settings.control.then(ControlFile::write).transpose()?;
    let files: Vec<PathBuf> = files
        .into_iter()
        .chain(control.as_ref().map(|c| c.path().to_path_buf()))
        .collect();
    check_writable_folders(&settings.exports)?;
    if settings.save_expected {
        save_expected(settings, &files)?;
    }
    let mut printer = Printer(Table::new(table_stream(&settings.exports)));
    let progress = progress_display(settings);
    let Measured { report, kept } = measure(settings, &files, &mut printer, progress.as_ref())?;
    let _ = printer.0.footer(&report);
    write_run_exports(&settings.exports, &report)?;
    Ok(if report.stopped.is_some() {
        ExitStatus::Interrupted
    } else if report.failures() > 0 {
        ExitStatus::Failed
    } else if report.regressions() > 0 {
        ExitStatus::Regression
    } else if !kept {
        ExitStatus::NotKept
    } else {
        ExitStatus::Success
    })
}

/// A measured run, and whether the store kept it.
pub struct Measured {
    pub report: RunReport,
    /// `false` when it was to be kept and the store could not keep it.
    pub kept: bool,
}

/// Measure `files`: read the baseline to compare with (an error before
/// anything is measured when it is missing or damaged), measure every row,
/// and keep the run in the store (named as a baseline when asked). A store
/// that cannot keep it (a symbolic link inside it, read-only, full) is
/// found before measuring when it can be, said on stderr and in the
/// report's warnings, and the rows are measured and reported all the same.
pub fn measure(
    settings: &Settings,
    files: &[PathBuf],
    observer: &mut dyn Observer,
    progress: &dyn Progress,
) -> Result<Measured> {
    let store = settings.store.folder.as_deref().map(Store::new);
    let saved = match (&settings.baselines.compare, &store) {
        (Some(name), Some(store)) => Some(baseline::load(store, name)?),
        (Some(_), None) => bail!("--baseline: no store (name one with --store DIR)"),
        (None, _) => None,
    };
    let keep = settings.store.keep || settings.baselines.save.is_some();
    if keep && store.is_none() && settings.baselines.save.is_some() {
        bail!("--save-baseline: no store (name one with --store DIR)");
    }
    let keeper = store.filter(|_| keep).map(Keeper::new);
    let mut report = run_rows(settings, files, saved.as_ref(), observer, progress)?;
    let mut kept = true;
    if let (Some(keeper), None) = (keeper, &report.stopped) {
        let mut run = KeptRun::new(&report, provenance(settings, files));
        if keeper.unusable.is_none() {
            keep_modules(&keeper.store, &mut run, &report.results);
        }
        let name = settings.baselines.save.as_deref();
        match keeper.keep(&run, name) {
            Ok(path) if name.is_some() => {
                report.saved_baseline = Some(path.display().to_string().into());
            }
            Ok(_) => {}
            Err(warning) => {
                kept = false;
                report.environment.warnings.push(warning);
            }
        }
    }
    Ok(Measured { report, kept })
}

/// The store a run is to be kept in, looked at before the run is measured.
pub struct Keeper {
    store: Store,
    /// Why the store cannot keep runs, found before measuring.
    unusable: Option<anyhow::Error>,
}

impl Keeper {
    /// `store`, prepared for keeping a run ([`Store::prepare`]); what stops
    /// it (a symbolic link inside it, a read-only folder) is said on stderr
    /// now, and the run is measured all the same.
    pub fn new(store: Store) -> Self {
        let unusable = store.prepare().err();
        if let Some(e) = &unusable {
            eprintln!(
                "warning: {}: the run will be measured, not kept",
                terminal(&one_line(e))
            );
        }
        Keeper { store, unusable }
    }

    /// Keep `run` (named as baseline `name` when given): its file, or the
    /// warning that it was measured but not kept, and why (also said on
    /// stderr).
    pub fn keep(self, run: &KeptRun, name: Option<&str>) -> Result<PathBuf, Foreign> {
        let result = match self.unusable {
            Some(e) => Err(e),
            None => self.store.keep(run, name),
        };
        result.map_err(|e| {
            let warning = format!("measured, not kept in the store: {}", one_line(&e));
            eprintln!("warning: {}", terminal(&warning));
            Foreign::from(warning)
        })
    }
}

/// Keep the modules `results` measured in the store, each named in its
/// kept row of `kept`; past the budget, remove the least recently kept,
/// never a baseline's nor this run's. A module not kept is said, and the
/// run is kept all the same.
fn keep_modules(store: &Store, kept: &mut KeptRun, results: &[BenchResult]) {
    let modules = Modules::of_store(store.folder());
    let mut ours: Vec<String> = Vec::new();
    for (row, result) in kept.rows.iter_mut().zip(results) {
        let Some(module) = &result.module else {
            continue;
        };
        match modules.keep(module) {
            Ok(reference) => {
                if !ours.contains(&reference.sha256) {
                    ours.push(reference.sha256.clone());
                }
                row.module = Some(reference);
            }
            Err(e) => eprintln!(
                "warning: the module of {} was not kept: {}",
                terminal(&result.name),
                terminal(&one_line(&e))
            ),
        }
    }
    let protected = || {
        let mut protected = baseline_modules(store);
        protected.extend(ours);
        protected
    };
    if let Err(e) = modules.prune(MODULES_BUDGET, protected) {
        eprintln!("warning: the store's modules: {}", terminal(&one_line(&e)));
    }
}

/// The modules of every run a baseline of `store` names.
fn baseline_modules(store: &Store) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(store.folder().join("baselines")) else {
        return Vec::new();
    };
    entries
        .take(1000)
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|name| store.read(&store.baseline_id(&name).ok()?).ok())
        .flat_map(|run| run.rows.into_iter().filter_map(|r| r.module))
        .map(|m| m.sha256)
        .collect()
}

/// What a run measured by `settings` over `files` is kept with: its label,
/// the git state of the first file's folder, the metric.
pub fn provenance(settings: &Settings, files: &[PathBuf]) -> Provenance {
    Provenance {
        label: settings.store.label.clone(),
        git: files.first().and_then(|f| git_state(f)),
        metric: settings.metric,
    }
}

/// The git state of the folder holding `file` (a folder: itself).
fn git_state(file: &std::path::Path) -> Option<crate::platform::git::GitState> {
    let folder = match file.is_dir() {
        true => file,
        false => file.parent()?,
    };
    let folder = match folder.as_os_str().is_empty() {
        true => std::path::Path::new("."),
        false => folder,
    };
    crate::platform::git::state(folder)
}

/// Forwards finished rows to the terminal table.
pub struct Printer<W: Write + Send>(pub Table<W>);

impl<W: Write + Send> Observer for Printer<W> {
    fn start(&mut self, env: &Environment, rows: &[String]) {
        let _ = self.0.header(env, rows);
    }
    fn result(&mut self, result: &BenchResult) {
        let _ = self.0.row(result);
    }
}

/// The human-readable report goes to stdout, or to stderr when an export
/// does. anstream drops the colours when the stream is not a terminal or
/// NO_COLOR is set.
pub fn table_stream(exports: &Exports) -> Box<dyn Write + Send> {
    match exports.to_stdout() {
        true => Box::new(anstream::stderr()),
        false => Box::new(anstream::stdout()),
    }
}

/// A progress line on stderr, unless `--quiet` or stderr is not a terminal.
pub fn progress_display(settings: &Settings) -> Box<dyn Progress> {
    match (settings.quiet, Bar::new()) {
        (false, Some(bar)) => Box::new(bar),
        _ => Box::new(crate::benchmark::progress::Silent),
    }
}
