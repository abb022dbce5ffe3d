//! The scheduler of `host profile` (and of `host compare --profile`): every
//! row that loads is profiled in worker processes, one profile each; a
//! worker that dies fails its row, and the next worker takes the rest.

use std::path::PathBuf;

use anyhow::{Result, bail};

use crate::benchmark::parent::catalog::Catalog;
use crate::benchmark::parent::driver::{Crew, Done, Outcome};
use crate::benchmark::parent::plan::RunPlan;
use crate::benchmark::parent::row::describe;
use crate::benchmark::parent::supervisor::Subprocesses;
use crate::benchmark::progress::Progress;
use crate::benchmark::protocol::{Job, RowJob, Task};
use crate::guest::sandbox;
use crate::options::{Profiling, Settings};
use crate::results::{Foreign, ProfileChanges, ProfileReport, Row, RowProfile};
use crate::util::error::one_line;

/// Profile the workloads in `files` (`host profile`): every row that loads,
/// in worker processes, one profile each.
pub fn profile_files(
    settings: &Settings,
    profiling: &Profiling,
    files: &[PathBuf],
    progress: &dyn Progress,
) -> Result<ProfileReport> {
    let catalog = Catalog::load(settings, files, progress)?;
    let mut rows = Vec::new();
    let mut failed = Vec::new();
    for planned in catalog.rows(&settings.sizes) {
        match planned.file {
            Ok(_) => rows.push(planned.row),
            Err(e) => failed.push(RowProfile {
                name: planned.row.name.clone().into(),
                path: None,
                error: Some(Foreign::new(format!(
                    "{}: {}",
                    planned.row.path.display(),
                    one_line(&e.error)
                ))),
                samples: 0,
                functions: Vec::new(),
            }),
        }
    }
    let mut plan = RunPlan::settle(settings);
    plan.worker.checked = catalog.checked();
    let mut report = profile_rows(settings, &plan, profiling, &rows, progress)?;
    report.profiles.extend(failed);
    Ok(report)
}

/// Profile `rows` in worker processes planned as `plan` (a worker that dies
/// fails its row; the next worker takes the rest).
pub fn profile_rows(
    settings: &Settings,
    plan: &RunPlan,
    profiling: &Profiling,
    rows: &[Row],
    progress: &dyn Progress,
) -> Result<ProfileReport> {
    let executor = &Subprocesses;
    let names: Vec<String> = rows.iter().map(|r| r.name.clone()).collect();
    // A profiled call may run as long as a timed one.
    let timeout = settings.timeout.max(profiling.duration * 2);
    let crew = Crew::new(executor, progress, &names, timeout);
    let mut profiles: Vec<Option<RowProfile>> = vec![None; rows.len()];
    let next = |profiles: &Vec<Option<RowProfile>>| {
        let left = RowJob::left(profiles, |i| rows[i].clone());
        (!left.is_empty()).then(|| Job {
            plan: plan.worker.clone(),
            task: Task::Profile {
                rows: left,
                duration: profiling.duration,
                interval: profiling.interval,
                folder: profiling.folder.clone(),
            },
        })
    };
    crew.work(&mut profiles, next, |profiles, outcome| {
        match outcome {
            Outcome::Ready(_) => {}
            Outcome::Done { row, done, .. } => {
                let Done::Profiled(profile) = done else {
                    return Err(done.unexpected());
                };
                profiles[row] = Some(*profile);
            }
            Outcome::Failed { row, error } => {
                profiles[row] = Some(RowProfile {
                    name: rows[row].name.clone().into(),
                    path: None,
                    error: Some(one_line(&error.context(describe(&rows[row]))).into()),
                    samples: 0,
                    functions: Vec::new(),
                });
            }
        }
        Ok(())
    })?;
    if crew.interrupted() {
        bail!(sandbox::STOPPED);
    }
    Ok(ProfileReport {
        profiles: profiles.into_iter().flatten().collect(),
        changes: Vec::new(),
    })
}

/// What changed in each variant's profile against the reference's.
pub fn profile_changes(profiles: &[RowProfile], reference: &str) -> Vec<ProfileChanges> {
    let Some(base) = profiles
        .iter()
        .find(|p| p.name == reference && p.error.is_none())
    else {
        return Vec::new();
    };
    profiles
        .iter()
        .filter(|p| p.error.is_none() && p.name != base.name)
        .map(|p| ProfileChanges {
            variant: p.name.clone(),
            reference: base.name.clone(),
            functions: crate::analysis::profile::changes(&base.functions, &p.functions),
        })
        .collect()
}
