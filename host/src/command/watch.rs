//! `host watch`: measure workloads, then measure each one again whenever its
//! file changes, printing the change against its previous measurement (for
//! the edit-rebuild-measure loop).
//!
//! File events come from the `notify` crate; events are collected for a short
//! while so that a rebuild that writes a file several times is measured once.
//! The comparison with the previous measurement is the one `--baseline`
//! makes ([`crate::analysis::verdict::unpaired_ratio`]), read against the
//! same noise band (`--noise`). Ctrl-C ends it.

use std::collections::{BTreeSet, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, Result};
use notify::{EventKind, RecursiveMode, Watcher};

use crate::analysis::stats::RESAMPLES_FINAL;
use crate::analysis::verdict;
use crate::benchmark::parent::run::Observer;
use crate::benchmark::progress::Silent;
use crate::command::run;
use crate::guest::{discover, sandbox};
use crate::options::Settings;
use crate::output::escape::terminal;
use crate::output::table::Table;
use crate::results::{BenchResult, Environment, Foreign};

/// How long file events are collected before measuring.
const SETTLE: Duration = Duration::from_millis(300);

/// Prints the header once, then every row.
struct Printer<W: Write + Send> {
    table: Table<W>,
    started: bool,
}

impl<W: Write + Send> Observer for Printer<W> {
    fn start(&mut self, env: &Environment, rows: &[String]) {
        if !self.started {
            let _ = self.table.header(env, rows);
            self.started = true;
        }
    }
    fn result(&mut self, result: &BenchResult) {
        let _ = self.table.row(result);
    }
}

/// Watch the workloads `settings` names until Ctrl-C.
pub fn watch(settings: &Settings, out: impl Write + Send) -> Result<()> {
    let files = discover(&settings.paths)?;
    let mut printer = Printer {
        table: Table::new(out),
        started: false,
    };
    let mut previous: HashMap<Foreign, BenchResult> = HashMap::new();
    measure(settings, &files, &mut printer, &mut previous)?;

    let (sender, events) = mpsc::channel();
    let mut watcher = notify::recommended_watcher(move |event| {
        let _ = sender.send(event);
    })
    .context("starting the file watcher")?;
    let mut watched = BTreeSet::new();
    for path in &settings.paths {
        // A file is watched through its folder: editors and compilers often
        // replace files rather than write them in place.
        let folder = if path.is_dir() {
            path.clone()
        } else {
            path.parent()
                .filter(|p| !p.as_os_str().is_empty())
                .map_or(PathBuf::from("."), Path::to_path_buf)
        };
        if watched.insert(folder.clone()) {
            watcher
                .watch(&folder, RecursiveMode::NonRecursive)
                .with_context(|| format!("watching {}", folder.display()))?;
        }
    }
    let _ = writeln!(
        printer.table.out(),
        "watching {} (Ctrl-C to stop)",
        terminal(&list(&watched))
    );

    while !sandbox::interrupted() {
        let first = match events.recv_timeout(Duration::from_millis(200)) {
            Ok(event) => event,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        let mut changed = BTreeSet::new();
        collect(first, settings, &files, &mut changed);
        while let Ok(event) = events.recv_timeout(SETTLE) {
            collect(event, settings, &files, &mut changed);
        }
        let changed: Vec<PathBuf> = changed.into_iter().filter(|p| p.is_file()).collect();
        if !changed.is_empty() {
            measure(settings, &changed, &mut printer, &mut previous)?;
        }
    }
    Ok(())
}

/// Add the workload files an event touched.
fn collect(
    event: notify::Result<notify::Event>,
    settings: &Settings,
    files: &[PathBuf],
    changed: &mut BTreeSet<PathBuf>,
) {
    let Ok(event) = event else { return };
    if !matches!(event.kind, EventKind::Create(_) | EventKind::Modify(_)) {
        return;
    }
    for path in event.paths {
        let is_workload = matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("wasm" | "wat")
        );
        // Watched folders take new files; watched files only themselves.
        let wanted = files.iter().any(|f| same_file(f, &path))
            || settings
                .paths
                .iter()
                .any(|p| p.is_dir() && path.parent().is_some_and(|parent| same_file(p, parent)));
        if is_workload && wanted {
            // Report it under the name it was given (or found) by.
            let name = files
                .iter()
                .find(|f| same_file(f, &path))
                .cloned()
                .unwrap_or(path);
            changed.insert(name);
        }
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Measure `files`, print each row and its change against the previous
/// measurement of the same row.
fn measure<W: Write + Send>(
    settings: &Settings,
    files: &[PathBuf],
    printer: &mut Printer<W>,
    previous: &mut HashMap<Foreign, BenchResult>,
) -> Result<()> {
    let report = run::measure(settings, files, printer, &Silent)?.report;
    for result in report.results {
        if let (Some(now), Some(before)) = (
            result.figures.as_ref(),
            previous.get(&result.name).and_then(|r| r.figures.as_ref()),
        ) {
            let change = verdict::unpaired_ratio(
                &now.series.epochs_ns_per_op,
                &before.series.epochs_ns_per_op,
                settings.drift_pct / 100.0,
                RESAMPLES_FINAL,
                report.environment.seed,
            );
            if let Some(ratio) = change {
                let judged = verdict::verdict(&ratio, settings.noise);
                let text = verdict::describe(
                    &result.name,
                    &Foreign::new("its previous measurement"),
                    &ratio,
                    judged,
                    settings.noise,
                );
                let _ = writeln!(printer.table.out(), "  {}", terminal(&text));
            }
        }
        previous.insert(result.name.clone(), result);
    }
    Ok(())
}

fn list(paths: &BTreeSet<PathBuf>) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
