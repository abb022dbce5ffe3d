//! A benchmark's trend over the kept runs: its series (one per benchmark,
//! size, engine configuration, machine and command, never per file contents: a
//! changed file is the change a user wants to see), the change points of
//! each ([`crate::analysis::changes`]), and how large a step the series'
//! own noise hides.

use serde::Serialize;

use crate::analysis::changes::{
    Change, MIN_SEGMENT, detectable_step, exact_changes, time_changes, within_sd,
};
use crate::guest::control::CONTROL_NAME;
use crate::options::EngineConfig;
pub use crate::options::Measure;
use crate::platform::git::GitState;
use crate::results::modules::ModuleRef;
use crate::results::store::{KeptRow, KeptRun, MachineId, Measured};
use crate::util::foreign::Foreign;

/// One run of a series.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    /// The kept run's id.
    pub run: String,
    pub unix_ms: u64,
    pub label: Option<Foreign>,
    pub git: Option<GitState>,
    /// The value: ns per op, or a count per op.
    pub value: f64,
    /// Its 95% interval (the value itself for a count; NaN when unknown).
    pub low: f64,
    pub high: f64,
    /// The medians of the worker processes (time only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub process_medians_ns: Vec<f64>,
    /// The module measured, when the store kept it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub module: Option<ModuleRef>,
}

/// One series and what was found in it.
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    /// `benchmark` or `benchmark/size`.
    pub benchmark: Foreign,
    /// The engine's short name and configuration.
    pub engine: Foreign,
    pub engine_config: Foreign,
    pub machine: MachineId,
    pub measure: Measure,
    /// The command that measured it: runs and comparisons are series
    /// apart (a comparison measures its variants interleaved).
    pub command: Measured,
    pub points: Vec<Point>,
    pub changes: Vec<Change>,
    /// The relative noise between runs within the segments (log sd; 0.01 is
    /// 1%); NaN when too few runs.
    pub noise: f64,
    /// The step the series shows nine times in ten at its length and noise,
    /// relative; null for deterministic series and short ones.
    pub detectable_step: Option<f64>,
    /// What measuring it again takes: the kept rows' benchmark (without
    /// its size), size and engine configuration.
    #[serde(skip)]
    pub subject: SeriesSubject,
}

/// A series' benchmark as its kept rows name it, its size and its engine
/// configuration: what a comparison of its modules measures.
#[derive(Debug, Clone, Default)]
pub struct SeriesSubject {
    pub benchmark: Foreign,
    pub size: Option<u64>,
    pub engine: EngineConfig,
}

/// The series of `runs` (oldest first) whose benchmark `names` select
/// (every one when empty), in the order first seen.
pub fn series(runs: &[KeptRun], names: &[String]) -> Vec<Series> {
    let mut all: Vec<Series> = Vec::new();
    for run in runs {
        for row in run
            .rows
            .iter()
            .filter(|r| r.measured() && selected(r, names))
        {
            for measure in [
                Measure::Time,
                Measure::Instructions,
                Measure::CallgrindInstructions,
            ] {
                let Some(point) = point(run, row, measure) else {
                    continue;
                };
                let engine = run.engines.get(row.engine).cloned().unwrap_or_default();
                let benchmark = match row.size {
                    Some(size) => row.benchmark.then(&format!("/{size}")),
                    None => row.benchmark.clone(),
                };
                let config = engine.describe();
                let found = all.iter_mut().find(|s| {
                    s.benchmark == benchmark
                        && s.engine_config == config
                        && s.machine == run.machine
                        && s.measure == measure
                        && s.command == run.command
                });
                match found {
                    Some(series) => series.points.push(point),
                    None => all.push(Series {
                        benchmark,
                        engine: Foreign::new(engine.short_name()),
                        engine_config: config,
                        machine: run.machine.clone(),
                        measure,
                        command: run.command,
                        points: vec![point],
                        changes: Vec::new(),
                        noise: f64::NAN,
                        detectable_step: None,
                        subject: SeriesSubject {
                            benchmark: row.benchmark.clone(),
                            size: row.size,
                            engine,
                        },
                    }),
                }
            }
        }
    }
    for s in &mut all {
        s.judge();
    }
    all
}

/// Whether `row` is among `names` (its name, its benchmark, or the file
/// its benchmark is in, with or without `.wasm`/`.wat`).
fn selected(row: &KeptRow, names: &[String]) -> bool {
    // Compared, not shown.
    #[allow(clippy::disallowed_methods)]
    let (name, benchmark) = (row.name.unescaped(), row.benchmark.unescaped());
    let file = benchmark.split(':').next().unwrap_or(benchmark);
    let stem = file
        .strip_suffix(".wasm")
        .or_else(|| file.strip_suffix(".wat"))
        .unwrap_or(file);
    names.is_empty()
        || names
            .iter()
            .any(|n| n == name || n == benchmark || n == file || n == stem)
}

/// `row` of `run` as a point of a series of `measure`, when measured so.
fn point(run: &KeptRun, row: &KeptRow, measure: Measure) -> Option<Point> {
    let exact = match measure {
        Measure::Time => None,
        Measure::Instructions => Some(row.fuel_per_op?),
        Measure::CallgrindInstructions => Some(row.callgrind?.instructions),
    };
    let (value, low, high) = match exact {
        Some(count) => (count, count, count),
        None => (row.median_ns, row.ci95_low, row.ci95_high),
    };
    (value.is_finite() && value > 0.0).then(|| Point {
        run: run.id.clone(),
        unix_ms: run.unix_ms,
        label: run.label.clone(),
        git: run.git.clone(),
        value,
        low,
        high,
        process_medians_ns: match measure {
            Measure::Time => row.process_medians_ns.clone(),
            _ => Vec::new(),
        },
        module: row.module.clone(),
    })
}

impl Series {
    /// Find its changes, its noise and the step that noise hides.
    fn judge(&mut self) {
        let values: Vec<f64> = self.points.iter().map(|p| p.value).collect();
        if self.measure.deterministic() {
            self.changes = exact_changes(&values);
            self.noise = 0.0;
            return;
        }
        self.changes = time_changes(&values);
        let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
        let at: Vec<usize> = self.changes.iter().map(|c| c.at).collect();
        self.noise = within_sd(&logs, &at);
        self.detectable_step = detectable_step(values.len(), self.noise);
    }

    /// Whether it is the control's series (`host run --control`): the
    /// machine's, never a benchmark's.
    pub fn is_control(&self) -> bool {
        self.subject.benchmark == CONTROL_NAME
    }

    /// A name for tables: benchmark, engine, and what is measured when not
    /// time.
    pub fn title(&self) -> Foreign {
        let mut title = Foreign::compose([&self.benchmark, &self.engine], |[benchmark, engine]| {
            format!("{benchmark} [{engine}]")
        });
        if self.measure != Measure::Time {
            title = title.then(&format!(" {}", self.measure.describe()));
        }
        if self.command == Measured::Compare {
            title = title.then(" (in host compare)");
        }
        title
    }

    /// Whether the series is too short to show a change yet: a timed one
    /// needs [`MIN_SEGMENT`] runs each side, an exact one two runs.
    pub fn too_short(&self) -> bool {
        match self.measure.deterministic() {
            true => self.points.len() < 2,
            false => self.points.len() < 2 * MIN_SEGMENT,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::store::fixture;

    fn kept(i: usize, benchmark: &str, median_ns: f64, fuel: Option<f64>) -> KeptRun {
        let mut run = fixture(&format!("{i:013}-1-0"), benchmark, median_ns);
        run.unix_ms = i as u64;
        run.rows[0].fuel_per_op = fuel;
        run
    }

    /// Runs of one file name are one series whatever the file held; the
    /// deterministic count is a series of its own; a name selects.
    #[test]
    fn series_follow_the_benchmark_not_the_file() {
        let runs: Vec<KeptRun> = (0..12)
            .map(|i| {
                let level = if i < 6 { 100.0 } else { 101.0 };
                kept(
                    i,
                    "w.wasm",
                    level * (1.0 + 0.0001 * (i % 3) as f64),
                    Some(level),
                )
            })
            .chain((12..14).map(|i| kept(i, "other.wasm", 5.0, None)))
            .collect();
        let all = series(&runs, &[]);
        assert_eq!(all.len(), 3);
        let fuel = all
            .iter()
            .find(|s| s.measure == Measure::Instructions)
            .expect("a count series");
        assert_eq!(fuel.changes.len(), 1);
        assert_eq!(fuel.changes[0].at, 6);
        assert!((fuel.changes[0].ratio - 1.01).abs() < 1e-12);
        let only = series(&runs, &["w".to_string()]);
        assert!(only.iter().all(|s| s.benchmark == "w.wasm"));
        assert_eq!(only[0].points.len(), 12);
    }
}
