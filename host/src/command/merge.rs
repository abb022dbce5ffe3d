//! Several exports of `host run` made one report (`host report A.json
//! B.json ...`): the shards of a `--shard K/N` run, measured on several
//! machines or CI jobs, merged as if one run had measured every row.
//!
//! The rows are taken as they are (each keeps the figures and notes its
//! run gave it, a busy machine's among them) and ordered by file path, each
//! file's rows in their run's order; a row name found twice, in two exports
//! or in one, is an error (names are looked up in a map: the merge is
//! linear in the rows). The suite summary is computed again over every row,
//! by the rule a single run uses. Every export's environment is kept
//! (`merged_from`); the report's own is the first export's, busy only when
//! every export's was, with a warning naming each export measured on a
//! busy machine or on another machine.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::analysis::runtimes::runtime_view;
use crate::analysis::suite::summarize;
use crate::options::EngineConfig;
use crate::output::escape::terminal;
use crate::results::{Foreign, MergedExport, RunReport};

/// Merge `runs` (each with the path it was read from) into one report.
pub fn merge_runs(runs: Vec<(PathBuf, RunReport)>) -> Result<RunReport> {
    refuse_repeated_rows(&runs)?;
    let mut runs = runs.into_iter();
    let Some((first_path, mut first)) = runs.next() else {
        bail!("no export to merge");
    };
    // The first export's settings, without copying its rows.
    let (results, complexity) = (
        std::mem::take(&mut first.results),
        std::mem::take(&mut first.complexity),
    );
    let mut merged = RunReport {
        shards: Vec::new(),
        stopped: None,
        merged_from: Vec::new(),
        ..first.clone()
    };
    first.results = results;
    first.complexity = complexity;
    for (path, run) in std::iter::once((first_path, first)).chain(runs) {
        absorb(&mut merged, run, &path);
    }
    merged.environment.busy_machine = merged
        .merged_from
        .iter()
        .all(|e| e.environment.busy_machine);
    let busy = busy_warnings(&merged.merged_from);
    merged.environment.warnings.extend(busy);
    merged.results.sort_by(|a, b| a.path.cmp(&b.path));
    merged.shards.sort_by_key(|s| (s.count, s.index));
    merged.shards.dedup();
    merged.suite = summarize(&merged.results);
    let reference = (merged.runtimes.as_ref()).map(|v| v.reference.clone());
    let order = EngineConfig::short_names(&merged.environment.engines);
    merged.runtimes = runtime_view(
        &merged.results,
        &order,
        reference.as_ref(),
        merged.environment.drift_pct / 100.0,
        merged.environment.seed,
    );
    Ok(merged)
}

/// Refuse a row name found twice, in two exports or in one: each name is
/// looked up once in a map of the names seen, with the export it came from.
fn refuse_repeated_rows(runs: &[(PathBuf, RunReport)]) -> Result<()> {
    let total = runs.iter().map(|(_, run)| run.results.len()).sum();
    let mut origin: HashMap<&Foreign, usize> = HashMap::with_capacity(total);
    for (k, (path, run)) in runs.iter().enumerate() {
        for result in &run.results {
            let Some(other) = origin.insert(&result.name, k) else {
                continue;
            };
            let place = match other == k {
                true => format!("twice in {}", path.display()),
                false => format!("in both {} and {}", runs[other].0.display(), path.display()),
            };
            bail!(
                "row `{}` is {place}: merge the exports of one run's shards, each once",
                terminal(&result.name)
            );
        }
    }
    Ok(())
}

/// Add `run`'s rows, fits, shards, stop and environment to `merged`.
fn absorb(merged: &mut RunReport, run: RunReport, path: &Path) {
    let first = merged.merged_from.first().map(|e| &e.environment);
    if let Some(first) = first
        && run.environment.cpu_model != first.cpu_model
    {
        let cpu = run
            .environment
            .cpu_model
            .clone()
            .unwrap_or("unknown CPU".into());
        merged.environment.warnings.push(cpu.map(|cpu| {
            format!(
                "{} was measured on another machine ({cpu}): its rows are not comparable with the others'",
                path.display()
            )
        }));
    }
    merged.merged_from.push(MergedExport {
        path: Foreign::new(path.display().to_string()),
        rows: run.results.iter().map(|r| r.name.clone()).collect(),
        environment: run.environment,
    });
    merged.results.extend(run.results);
    merged.complexity.extend(run.complexity);
    merged.shards.extend(run.shards);
    if let Some(stopped) = run.stopped {
        merged.stopped = Some(stopped.after(&format!("{}: ", path.display())));
    }
}

/// When some exports but not all were measured on a busy machine: one
/// warning per busy export, naming how many of the rows are its.
fn busy_warnings(exports: &[MergedExport]) -> Vec<Foreign> {
    let busy = exports
        .iter()
        .filter(|e| e.environment.busy_machine)
        .count();
    if busy == 0 || busy == exports.len() {
        return Vec::new();
    }
    exports
        .iter()
        .filter(|e| e.environment.busy_machine)
        .map(|e| {
            e.path.map(|path| {
                format!(
                    "{path} was measured on a busy machine: its {} row{} may not repeat (each says so); the other exports' machines were quiet",
                    e.rows.len(),
                    if e.rows.len() == 1 { "" } else { "s" }
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::{fixed_figures, measured, run_report, samples};
    use crate::results::BenchResult;
    use anyhow::Context;

    #[test]
    fn a_merge_reads_every_shard_across_the_engines_against_the_same_reference() -> Result<()> {
        let whole = crate::analysis::fixtures::runtimes_run_report();
        let (mut a, mut b) = (whole.clone(), whole);
        a.results.retain(|r| r.benchmark == "xor");
        b.results.retain(|r| r.benchmark != "xor");
        a.runtimes = runtime_view(&a.results, &[], Some(&"wasmi".into()), 0.0, 1);
        b.runtimes = None;
        let merged = merge_runs(vec![("a.json".into(), a), ("b.json".into(), b)])?;
        let view = merged.runtimes.context("a view")?;
        assert_eq!(view.reference, "wasmi");
        let names: Vec<&str> = view
            .benchmarks
            .iter()
            .map(|b| b.benchmark.unescaped())
            .collect();
        assert_eq!(names, ["sort", "xor"]);
        Ok(())
    }

    /// A run of `rows`, each measured at `median` ns per op.
    fn run_of(rows: &[(&str, f64)], busy: bool) -> RunReport {
        let mut report = run_report();
        report.environment.busy_machine = busy;
        report.results = rows.iter().map(|(name, m)| row(name, *m)).collect();
        report.suite = summarize(&report.results);
        report
    }

    fn row(name: &str, median: f64) -> BenchResult {
        let mut figures = fixed_figures(samples(1234.5, 0.01, 4, 25, 1));
        figures.ns_per_op.median = median;
        if median.abs() < 1e-6 {
            // As the empty guest: its interval reaches 0.
            figures.ns_per_op.ci95_low = -0.1;
            figures.indistinguishable_from_empty = true;
            figures.no_measurable_work = true;
        }
        measured(name, None, figures)
    }

    #[test]
    fn a_run_and_the_merge_of_its_shards_take_the_same_rows_into_the_mean() {
        // The empty row's noise is positive in the whole run, negative in
        // its shard: neither counts it.
        let whole = run_of(&[("a", 10.0), ("b", 40.0), ("empty", 1.8e-12)], false);
        let one = run_of(&[("a", 10.0), ("b", 40.0)], false);
        let two = run_of(&[("empty", -3e-12)], false);
        let merged = merge_runs(vec![("1.json".into(), one), ("2.json".into(), two)])
            .expect("disjoint shards");
        let (whole, merged) = (whole.suite.expect("3 rows"), merged.suite.expect("3 rows"));
        assert_eq!((whole.timed_rows, merged.timed_rows), (2, 2));
        assert!(
            (whole.geomean_ns - 20.0).abs() < 1e-9,
            "{}",
            whole.geomean_ns
        );
        assert_eq!(whole.geomean_ns, merged.geomean_ns);
        assert_eq!((whole.rows, merged.rows), (3, 3));
    }

    #[test]
    fn each_export_keeps_its_environment_and_only_a_busy_ones_rows_are_named() {
        let mut quiet = run_of(&[("c", 5.0)], false);
        quiet.environment.seed = 7;
        let mut busy = run_of(&[("a", 1.0), ("b", 2.0)], true);
        busy.environment.seed = 9;
        let merged = merge_runs(vec![
            ("busy.json".into(), busy),
            ("quiet.json".into(), quiet),
        ])
        .expect("disjoint shards");
        assert!(!merged.environment.busy_machine);
        let seeds: Vec<u64> = merged
            .merged_from
            .iter()
            .map(|e| e.environment.seed)
            .collect();
        assert_eq!(seeds, [9, 7]);
        assert_eq!(merged.merged_from[0].rows, ["a", "b"]);
        let warnings = Foreign::join(&merged.environment.warnings, "\n").into_unescaped();
        assert!(
            warnings.contains("busy.json was measured on a busy machine: its 2 rows"),
            "{warnings}"
        );
        assert!(!warnings.contains("quiet.json was measured"), "{warnings}");
    }

    #[test]
    fn a_row_twice_in_the_first_export_is_refused() {
        let twice = run_of(&[("a", 1.0), ("a", 2.0)], false);
        let other = run_of(&[("b", 1.0)], false);
        let error = merge_runs(vec![("1.json".into(), twice), ("2.json".into(), other)])
            .expect_err("a row twice");
        assert!(
            error.to_string().contains("`a` is twice in 1.json"),
            "{error}"
        );
    }

    /// The CPU time this thread has used.
    fn thread_cpu_time() -> std::time::Duration {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `now` is a valid timespec for the call to write.
        let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
        assert_eq!(status, 0, "the thread's CPU clock");
        std::time::Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
    }

    #[test]
    fn two_exports_of_a_hundred_thousand_rows_each_merge_in_under_a_second() {
        let mut template = row("x", 3.0);
        let series = &mut template.figures.as_mut().expect("measured").series;
        series.raw_samples_ns.clear();
        series.epochs_ns_per_op.clear();
        series.epoch_classes.clear();
        series.fixed_costs_ns.clear();
        let shard = |k: usize| {
            let mut report = run_of(&[], false);
            report.results = (0..100_000)
                // A shard's rows come in file order, as a run gives them.
                .map(|i| BenchResult {
                    name: format!("w{k}_{i:06}").into(),
                    ..template.clone()
                })
                .collect();
            report
        };
        let (one, two) = (shard(1), shard(2));
        let start = thread_cpu_time();
        let merged = merge_runs(vec![("1.json".into(), one), ("2.json".into(), two)])
            .expect("disjoint shards");
        let took = thread_cpu_time() - start;
        assert_eq!(merged.results.len(), 200_000);
        // A quadratic check makes 10^10 name comparisons; this one makes
        // 2·10^5 lookups. The bound is on this thread's CPU time, which
        // other processes on the machine do not add to.
        println!("merged 2 x 100000 rows in {took:?} of CPU time");
        assert!(took.as_secs_f64() < 1.0, "{took:?}");
    }
}
