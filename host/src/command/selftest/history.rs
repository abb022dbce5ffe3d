//! The change-point detector of `host history` on synthetic series: how
//! often it finds an injected step (recall) and how often it finds one in a
//! series without any (false alarms). Nothing is measured here: the series
//! are drawn from noise models of the run-to-run variation measured on two
//! machine classes ([`MODELS`]), with steps of 1%, 3% and 10%.
//!
//! A run's median is its machine's state of that run (a log offset drawn
//! per run, normal with sd `run_sd`) times the median of its worker
//! processes (each a log offset, normal with sd `process_sd`, around it).
//! The assumptions, said: runs independent of each other (no slow trend),
//! normal on the log scale (a machine whose runs now and then land on
//! another speed step has heavier tails, and more false alarms than shown
//! here). A step is found when a change is reported at its run or one run
//! from it.

use serde::Serialize;

use crate::analysis::changes::{MIN_SEGMENT, exact_changes, time_changes};
use crate::analysis::stats::normal;

/// Series drawn per cell of the table.
const TRIALS: usize = 1000;
/// Worker processes per run (`host run`'s least).
const PROCESSES: usize = 5;

/// A noise model: what a run's median scatters by.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Model {
    pub name: &'static str,
    /// Where its figures come from.
    pub source: &'static str,
    /// Relative sd of a run's state (log scale).
    pub run_sd: f64,
    /// Relative sd of a process around its run's state (log scale).
    pub process_sd: f64,
}

/// The machine classes modelled.
pub const MODELS: [Model; 3] = [
    Model {
        name: "Intel Xeon VM",
        source: "five separate `host run` of xor, medians 9.8% apart: sd 9.8% / 2.33 (the expected range of 5 normal values) = 4.2%; process sd 1% assumed",
        run_sd: 0.042,
        process_sd: 0.01,
    },
    Model {
        name: "AMD EPYC VM",
        source: "five separate `host run` of xor, medians 0.00% apart (run sd 0.05% taken, not 0); process sd 0.3% assumed",
        run_sd: 0.0005,
        process_sd: 0.003,
    },
    Model {
        name: "AMD EPYC VM, loaded",
        source: "five separate `host run` of xor while six builds shared its 2 cores (load 13): log sd of the medians 0.37%, between-process sd 0.27-1.09%, 0.75% taken",
        run_sd: 0.0037,
        process_sd: 0.0075,
    },
];

/// One cell: a model, a series length, a step, and what the detector did.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    pub model: &'static str,
    pub runs: usize,
    /// The injected step, relative (0 for none).
    pub step: f64,
    /// Where the step fell: `middle` (run n/2 + 1), `anywhere` (uniformly,
    /// at least two runs each side).
    pub placement: &'static str,
    /// Series with the step found (at its run or one from it).
    pub found: usize,
    /// Series with a change reported elsewhere (or, without a step, at all).
    pub false_alarms: usize,
    pub trials: usize,
}

/// Every cell: the two models and deterministic counts, 12 and 15 runs,
/// no step and steps of 1%, 3%, 10%.
pub fn history() -> Vec<Cell> {
    let mut cells = Vec::new();
    let mut rng = fastrand::Rng::with_seed(0x4157_0c4a);
    for model in MODELS {
        for (runs, placement) in [(12, "middle"), (15, "anywhere")] {
            for step in [0.0, 0.01, 0.03, 0.10] {
                cells.push(cell(&mut rng, Some(model), runs, step, placement));
            }
        }
    }
    for step in [0.0, 0.01] {
        cells.push(cell(&mut rng, None, 12, step, "middle"));
    }
    print(&cells);
    cells
}

/// `TRIALS` series of `model` (deterministic counts when `None`).
fn cell(
    rng: &mut fastrand::Rng,
    model: Option<Model>,
    runs: usize,
    step: f64,
    placement: &'static str,
) -> Cell {
    let (mut found, mut false_alarms) = (0, 0);
    for _ in 0..TRIALS {
        let at = match placement {
            "middle" => runs / 2,
            _ => rng.usize(MIN_SEGMENT..=runs - MIN_SEGMENT),
        };
        let series: Vec<f64> = (0..runs)
            .map(|i| {
                let level = if step > 0.0 && i >= at {
                    1.0 + step
                } else {
                    1.0
                };
                1000.0 * level * model.map_or(1.0, |m| run_noise(rng, m))
            })
            .collect();
        let changes = match model {
            Some(_) => time_changes(&series),
            None => exact_changes(&series),
        };
        let near = |c: &usize| step > 0.0 && c.abs_diff(at) <= 1;
        if changes.iter().any(|c| near(&c.at)) {
            found += 1;
        }
        if changes.iter().any(|c| !near(&c.at)) {
            false_alarms += 1;
        }
    }
    Cell {
        model: model.map_or("deterministic counts", |m| m.name),
        runs,
        step,
        placement,
        found,
        false_alarms,
        trials: TRIALS,
    }
}

/// One run's median as a factor: its state times its processes' median.
fn run_noise(rng: &mut fastrand::Rng, model: Model) -> f64 {
    let state = model.run_sd * normal(rng);
    let mut processes: Vec<f64> = (0..PROCESSES)
        .map(|_| model.process_sd * normal(rng))
        .collect();
    processes.sort_by(f64::total_cmp);
    (state + processes[PROCESSES / 2]).exp()
}

fn print(cells: &[Cell]) {
    println!("history: change points found on synthetic series ({TRIALS} series per line)");
    for m in MODELS {
        println!(
            "  {}: run sd {:.2}%, process sd {:.2}% ({})",
            m.name,
            100.0 * m.run_sd,
            100.0 * m.process_sd,
            m.source
        );
    }
    println!(
        "  {:<22} {:>4} {:>9} {:>5} {:>8} {:>13}",
        "noise", "runs", "step at", "step", "recall", "false alarms"
    );
    println!(
        "  (false alarms: a change reported in a series without a step, or more than one run from its step)"
    );
    for c in cells {
        let pct = |n: usize| 100.0 * n as f64 / c.trials as f64;
        let recall = match c.step > 0.0 {
            true => format!("{:.1}%", pct(c.found)),
            false => "-".to_string(),
        };
        println!(
            "  {:<22} {:>4} {:>9} {:>4.0}% {:>8} {:>12.1}%",
            c.model,
            c.runs,
            c.placement,
            100.0 * c.step,
            recall,
            pct(c.false_alarms)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic counts: every 1% step, no false alarm.
    #[test]
    fn deterministic_series_are_exact() {
        let mut rng = fastrand::Rng::with_seed(1);
        let none = cell(&mut rng, None, 12, 0.0, "middle");
        let step = cell(&mut rng, None, 12, 0.01, "middle");
        assert_eq!((none.found, none.false_alarms), (0, 0));
        assert_eq!((step.found, step.false_alarms), (TRIALS, 0));
    }
}
