//! Several exports of `host run` made one report (`host report A.json
//! B.json ...`): the shards of a `--shard K/N` run, measured on several
//! machines or CI jobs, merged as if one run had measured every row.
//!
//! The rows are taken as they are (each keeps the figures its run gave it)
//! and ordered by file path, each file's rows in their run's order; a row
//! name found in two exports is an error. The suite summary is computed
//! again over every row; the environment is the first export's, with a
//! warning when the exports come from different machines.

use std::path::PathBuf;

use anyhow::{Result, bail};

use crate::analysis::suite::summarize;
use crate::output::escape::terminal;
use crate::results::{Foreign, RunReport};

/// Merge `runs` (each with the path it was read from) into one report.
pub fn merge_runs(runs: Vec<(PathBuf, RunReport)>) -> Result<RunReport> {
    let mut runs = runs.into_iter();
    let Some((first_path, mut merged)) = runs.next() else {
        bail!("no export to merge");
    };
    let mut origin: Vec<(Foreign, PathBuf)> = merged
        .results
        .iter()
        .map(|r| (r.name.clone(), first_path.clone()))
        .collect();
    for (path, run) in runs {
        for result in &run.results {
            if let Some((_, other)) = origin.iter().find(|(name, _)| *name == result.name) {
                bail!(
                    "row `{}` is in both {} and {}: merge the exports of one run's shards",
                    terminal(&result.name),
                    other.display(),
                    path.display()
                );
            }
            origin.push((result.name.clone(), path.clone()));
        }
        absorb(&mut merged, run, &path);
    }
    merged.results.sort_by(|a, b| a.path.cmp(&b.path));
    merged.shards.sort_by_key(|s| (s.count, s.index));
    merged.shards.dedup();
    merged.suite = summarize(&merged.results);
    Ok(merged)
}

/// Add `run`'s rows, fits, shards and stop to `merged`.
fn absorb(merged: &mut RunReport, run: RunReport, path: &std::path::Path) {
    if run.environment.cpu_model != merged.environment.cpu_model {
        let cpu = run.environment.cpu_model.unwrap_or("unknown CPU".into());
        merged.environment.warnings.push(cpu.map(|cpu| {
            format!(
                "{} was measured on another machine ({cpu}): its rows are not comparable with the others'",
                path.display()
            )
        }));
    }
    merged.results.extend(run.results);
    merged.complexity.extend(run.complexity);
    merged.shards.extend(run.shards);
    if let Some(stopped) = run.stopped {
        merged.stopped = Some(stopped.after(&format!("{}: ", path.display())));
    }
}
