//! The scheduler of `host run --save-expected`: each WASI program among
//! the files runs once under wasmtime in a worker process, held to
//! `--timeout`, the worker's memory cap and Ctrl-C like any measured call,
//! and what it wrote to stdout comes back to the parent. A program that
//! fails, hangs or takes its worker down ends the command with its error;
//! files that are `run(count, seed)` workloads are left alone.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};

use crate::benchmark::parent::catalog::Catalog;
use crate::benchmark::parent::driver::{Crew, Done, Outcome};
use crate::benchmark::parent::plan::RunPlan;
use crate::benchmark::parent::supervisor::Subprocesses;
use crate::benchmark::progress::Progress;
use crate::benchmark::protocol::{Job, RowJob, Task};
use crate::guest::load::Checked;
use crate::guest::sandbox;
use crate::guest::{Contract, Kind};
use crate::options::{Runtime, Settings};
use crate::results::Row;

/// What each program among `files` writes to stdout in one run, with the
/// grants and limits `settings` give it, in file order.
pub fn program_outputs(
    settings: &Settings,
    files: &[PathBuf],
    progress: &dyn Progress,
) -> Result<Vec<(PathBuf, Vec<u8>)>> {
    let settings = under_wasmtime(settings);
    let (rows, checked) = programs(&settings, files, progress)?;
    let mut plan = RunPlan::settle(&settings);
    plan.worker.checked = checked;
    let names: Vec<String> = rows.iter().map(|r| r.name.clone()).collect();
    let crew = Crew::new(&Subprocesses, progress, &names, settings.timeout);
    let mut outputs: Vec<Option<Result<Vec<u8>>>> = rows.iter().map(|_| None).collect();
    let next = |outputs: &Vec<Option<Result<Vec<u8>>>>| {
        let left = RowJob::left(outputs, |i| rows[i].clone());
        (!left.is_empty()).then(|| Job {
            plan: plan.worker.clone(),
            task: Task::Output(left),
        })
    };
    crew.work(&mut outputs, next, |outputs, outcome| {
        match outcome {
            Outcome::Ready(_) => {}
            Outcome::Done { row, done, .. } => {
                let Done::Output(stdout) = done else {
                    return Err(done.unexpected());
                };
                outputs[row] = Some(Ok(stdout));
            }
            Outcome::Failed { row, error } => outputs[row] = Some(Err(error)),
        }
        Ok(())
    })?;
    if crew.interrupted() {
        bail!(sandbox::STOPPED);
    }
    rows.into_iter()
        .zip(outputs)
        .map(|(row, output)| {
            let stdout = output
                .context("no worker ran it")
                .and_then(|o| o)
                .with_context(|| format!("{}", row.path.display()))?;
            Ok((row.path, stdout))
        })
        .collect()
}

/// `settings` with the first engine's configuration as wasmtime's own: the
/// output is the program's, whatever engine measures it.
fn under_wasmtime(settings: &Settings) -> Settings {
    let mut config = settings.engines.first().cloned().unwrap_or_default();
    config.library = None;
    config.runtime = Runtime::Wasmtime;
    Settings {
        engines: vec![config],
        ..settings.clone()
    }
}

/// A row for each program among `files`, loaded (and its compiled code
/// cached for the worker), and what the workers are handed of them; a
/// program that does not load is an error.
fn programs(
    settings: &Settings,
    files: &[PathBuf],
    progress: &dyn Progress,
) -> Result<(Vec<Row>, Vec<Checked>)> {
    let catalog = Catalog::load(settings, files, progress)?;
    let checked = catalog.checked();
    let mut rows: Vec<Row> = Vec::new();
    for planned in catalog.rows(&settings.sizes) {
        let program = planned
            .file
            .is_ok_and(|w| matches!(w.contract, Contract::Program { .. }));
        if program {
            rows.push(planned.row);
        }
    }
    for loaded in catalog.loaded {
        if let Err(failed) = loaded.file
            && failed.kind == Some(Kind::Program)
        {
            return Err(failed.error).context(format!("{}", loaded.path.display()));
        }
    }
    Ok((rows, checked))
}
