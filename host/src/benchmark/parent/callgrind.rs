//! The Callgrind pass, in the parent (`--metric cycles-est`): groups of rows
//! counted in workers run under Valgrind
//! ([`crate::benchmark::worker::callgrind`] counts them), each group in a
//! worker of its own, with a plan that is the same from run to run.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow};

use crate::benchmark::parent::driver::{Crew, Done, Outcome};
use crate::benchmark::parent::executor::{Executor, Wrapper};
use crate::benchmark::parent::plan::RunPlan;
use crate::benchmark::parent::row::Counts;
use crate::benchmark::progress::Progress;
use crate::benchmark::protocol::{CALLGRIND_OUT_FILE, Job, RowJob, Task, WorkerPlan};
use crate::platform::processes::on_path;
use crate::results::Row;

/// How much slower code runs under Callgrind, at most: the call deadline of
/// the Callgrind pass is `--timeout` times this (`--help`, README and a
/// row's error say so).
const CALLGRIND_SLOWDOWN: u32 = 100;

/// What the pass gave a row: its counts, or why it could not count it.
pub type RowCounts = Result<Counts>;

/// The Callgrind pass of a run or a comparison.
pub struct Pass<'a> {
    /// The counting plan: the same whatever the run (no paths, the counted
    /// seed).
    plan: WorkerPlan,
    timeout: Duration,
    progress: &'a dyn Progress,
    names: &'a [String],
}

impl<'a> Pass<'a> {
    /// The pass of a run planned as `plan`, its guest calls held to
    /// `timeout` times `CALLGRIND_SLOWDOWN` (100); rows named in `names`.
    pub fn new(
        plan: &RunPlan,
        timeout: Duration,
        progress: &'a dyn Progress,
        names: &'a [String],
    ) -> Self {
        Pass {
            plan: plan.counting(),
            timeout: timeout.saturating_mul(CALLGRIND_SLOWDOWN),
            progress,
            names,
        }
    }

    /// Count `groups` of rows (indices into the names), each group in
    /// workers of its own: per row, its counts or why it could not be
    /// counted.
    pub fn count(
        &self,
        executor: &dyn Executor,
        groups: Vec<Vec<(usize, Row)>>,
    ) -> Result<Vec<(usize, RowCounts)>> {
        let mut counted = Vec::new();
        for rows in groups.into_iter().filter(|g| !g.is_empty()) {
            let folder = std::env::temp_dir()
                .join(format!("wasm-bench-callgrind-{:016x}", fastrand::u64(..)));
            std::fs::create_dir_all(&folder)
                .with_context(|| format!("creating {}", folder.display()))?;
            let group = valgrind_command(&folder).and_then(|wrapper| {
                self.group(executor, &rows, &folder, wrapper)
                    .context("the Callgrind pass")
            });
            let _ = std::fs::remove_dir_all(&folder);
            let group = group?;
            counted.extend(rows.iter().map(|(i, _)| *i).zip(group));
        }
        Ok(counted)
    }

    /// Count `rows` in workers run under Callgrind (`wrapper`) writing into
    /// `folder`: per row (in order), its counts or why not.
    fn group(
        &self,
        executor: &dyn Executor,
        rows: &[(usize, Row)],
        folder: &std::path::Path,
        wrapper: Wrapper,
    ) -> Result<Vec<RowCounts>> {
        // Rows numbered from 0 in the worker, whatever their place in the
        // run (the number it is given moves a branch misprediction).
        let local_names: Vec<String> = rows
            .iter()
            .map(|(i, _)| self.names.get(*i).cloned().unwrap_or_default())
            .collect();
        let deadline = format!(
            "{CALLGRIND_SLOWDOWN} × --timeout = {}, the deadline under Callgrind",
            humantime::format_duration(self.timeout)
        );
        let crew =
            Crew::new(executor, self.progress, &local_names, self.timeout).under(wrapper, deadline);
        let mut counts: Vec<Option<RowCounts>> = rows.iter().map(|_| None).collect();
        let next = |counts: &Vec<Option<RowCounts>>| {
            let left = RowJob::left(counts, |local| rows[local].1.clone());
            (!left.is_empty()).then(|| Job {
                plan: self.plan.clone(),
                task: Task::Callgrind {
                    rows: left,
                    folder: folder.to_path_buf(),
                },
            })
        };
        crew.work(&mut counts, next, |counts, outcome| {
            match outcome {
                Outcome::Ready(_) => {}
                Outcome::Done { row, done, .. } => {
                    let Done::Counted(per_op, instantiate) = done else {
                        return Err(done.unexpected());
                    };
                    counts[row] = Some(Ok(Counts {
                        per_op,
                        instantiate,
                    }));
                }
                Outcome::Failed { row, error } => counts[row] = Some(Err(error)),
            }
            Ok(())
        })?;
        Ok(counts
            .into_iter()
            .map(|c| c.unwrap_or_else(|| Err(anyhow!("the Callgrind pass did not reach it"))))
            .collect())
    }
}

/// The command that runs a worker under Callgrind, writing into `folder`:
/// Valgrind's path and arguments, the host binary and its own arguments
/// follow.
pub fn valgrind_command(folder: &Path) -> Result<(PathBuf, Vec<OsString>)> {
    let valgrind = on_path("valgrind").context(
        "--metric cycles-est needs Valgrind, which is not installed: install it with `sudo apt-get install valgrind` (Debian, Ubuntu) or `sudo dnf install valgrind` (Fedora)",
    )?;
    let mut out = OsString::from("--callgrind-out-file=");
    out.push(folder.join(CALLGRIND_OUT_FILE));
    let args = [
        "--tool=callgrind",
        "--instr-atstart=no",
        "--collect-atstart=no",
        "--cache-sim=yes",
        "--branch-sim=yes",
        "--quiet",
    ]
    .into_iter()
    .map(OsString::from)
    .chain([out])
    .collect();
    Ok((valgrind, args))
}
