//! Saved baselines: a kept run of the store ([`crate::results::store`])
//! that `--save-baseline NAME` named, read back to compare with.
//!
//! Reading goes through the store's one reader (bounded, links refused),
//! says plainly when the baseline is missing or damaged, leaves a
//! non-finite epoch out, and thins a row of more than [`MAX_EPOCHS`] epochs
//! before anything resamples it. This module reads; the comparison is
//! [`crate::analysis::baseline`]'s.

use anyhow::{Context, Result};

use crate::results::store::{KeptRun, Store};
use crate::results::{Environment, Foreign};

/// The most epochs of a saved row a comparison resamples: a row measured
/// for minutes has some 10^5 epochs of 1 ms; one with more is thinned to
/// every k-th epoch of each process (2000 resamples over 20 million epochs
/// took minutes).
pub const MAX_EPOCHS: usize = 100_000;

/// Read baseline `name` of `store`.
pub fn load(store: &Store, name: &str) -> Result<Saved> {
    let id = store
        .baseline_id(name)
        .context("--baseline: cannot read the baseline")?;
    let run = store
        .read(&id)
        .with_context(|| format!("--baseline: baseline `{name}` is damaged"))?;
    let mut saved = Saved::from(&run);
    for result in &mut saved.results {
        result.bound_epochs(MAX_EPOCHS);
    }
    Ok(saved)
}

impl From<&KeptRun> for Saved {
    fn from(run: &KeptRun) -> Self {
        Saved {
            tool: SavedTool {
                version: run.tool_version.clone(),
            },
            environment: SavedEnvironment {
                pinned_core: run.pinned_core,
                priority: run.priority.clone(),
                cpu_model: (!run.machine.cpu.is_empty()).then(|| run.machine.cpu.clone()),
            },
            results: run
                .rows
                .iter()
                .map(|row| SavedResult {
                    name: row.name.clone(),
                    error: row.error.clone(),
                    epochs_ns_per_op: row
                        .epochs_ns_per_op
                        .iter()
                        .map(|p| p.iter().map(|&e| f64::from(e)).collect())
                        .collect(),
                    undisturbed: row.undisturbed,
                    epochs_read: None,
                    fuel_per_op: row.fuel_per_op,
                    callgrind: row.callgrind,
                })
                .collect(),
        }
    }
}

/// A saved baseline, as much of it as comparisons need.
#[derive(Debug, Clone)]
pub struct Saved {
    pub tool: SavedTool,
    pub environment: SavedEnvironment,
    pub results: Vec<SavedResult>,
}

#[derive(Debug, Clone)]
pub struct SavedTool {
    pub version: Foreign,
}

#[derive(Debug, Clone)]
pub struct SavedEnvironment {
    pub pinned_core: Option<usize>,
    pub priority: Foreign,
    pub cpu_model: Option<Foreign>,
}

#[derive(Debug, Clone)]
pub struct SavedResult {
    pub name: Foreign,
    pub error: Option<Foreign>,
    /// Per-op time of each epoch, process by process.
    pub epochs_ns_per_op: Vec<Vec<f64>>,
    /// Whether its time stood on the undisturbed epochs.
    pub undisturbed: bool,
    /// How many epochs it held as read, when some were left out (not
    /// finite) or it was thinned to [`MAX_EPOCHS`].
    pub epochs_read: Option<usize>,
    pub fuel_per_op: Option<f64>,
    pub callgrind: Option<crate::results::CallgrindCounts>,
}

impl SavedResult {
    /// Its deterministic cost per op under `metric`, when it was measured.
    pub fn exact(&self, metric: crate::options::Metric) -> Option<f64> {
        crate::results::exact_per_op(metric, self.fuel_per_op, self.callgrind.as_ref())
    }
}

impl SavedResult {
    /// Leave out the epochs that are not finite, and keep at most `cap`
    /// (every k-th of each process, k the least that fits); remember how
    /// many there were when any went.
    fn bound_epochs(&mut self, cap: usize) {
        let read: usize = self.epochs_ns_per_op.iter().map(Vec::len).sum();
        for epochs in &mut self.epochs_ns_per_op {
            epochs.retain(|e| e.is_finite());
        }
        let finite: usize = self.epochs_ns_per_op.iter().map(Vec::len).sum();
        if finite > cap {
            let step = finite.div_ceil(cap);
            for epochs in &mut self.epochs_ns_per_op {
                *epochs = epochs.iter().copied().step_by(step).collect();
            }
        }
        self.epochs_ns_per_op.retain(|epochs| !epochs.is_empty());
        let kept: usize = self.epochs_ns_per_op.iter().map(Vec::len).sum();
        self.epochs_read = (kept < read).then_some(read);
    }
}

impl Saved {
    /// The saved result of row `name`, when it was measured.
    pub fn result(&self, name: &Foreign) -> Option<&SavedResult> {
        self.results
            .iter()
            .find(|r| r.name == *name && r.error.is_none() && !r.epochs_ns_per_op.is_empty())
    }

    /// How the environment now differs from the saved one, in plain words
    /// (outside text: they quote the saved file and the machine).
    pub fn environment_differences(&self, now: &Environment) -> Vec<Foreign> {
        let mut differences = Vec::new();
        let version = env!("CARGO_PKG_VERSION");
        if self.tool.version != version {
            differences.push(
                self.tool
                    .version
                    .map(|then| format!("baseline made with host {then}, this is {version}")),
            );
        }
        if self.environment.pinned_core != now.pinned_core {
            let pin = |c: Option<usize>| {
                c.map_or("not pinned".to_string(), |c| format!("pinned to core {c}"))
            };
            differences.push(Foreign::new(format!(
                "baseline {}, now {}",
                pin(self.environment.pinned_core),
                pin(now.pinned_core)
            )));
        }
        if now.priority != self.environment.priority {
            differences.push(Foreign::compose(
                [&self.environment.priority, &now.priority],
                |[then, now]| format!("baseline ran at priority `{then}`, now `{now}`"),
            ));
        }
        let then_cpu = self.environment.cpu_model.clone();
        if then_cpu != now.cpu_model {
            let cpu = |c: &Option<Foreign>| c.clone().unwrap_or("an unknown CPU".into());
            differences.push(Foreign::compose(
                [&cpu(&then_cpu), &cpu(&now.cpu_model)],
                |[then, now]| format!("baseline ran on {then}, now on {now}"),
            ));
        }
        differences
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(epochs: Vec<Vec<f64>>) -> SavedResult {
        SavedResult {
            name: "xor".into(),
            error: None,
            epochs_ns_per_op: epochs,
            undisturbed: true,
            epochs_read: None,
            fuel_per_op: None,
            callgrind: None,
        }
    }

    /// A row just over the cap is thinned to at most the cap, every process
    /// keeping its share; a row within it is kept whole.
    #[test]
    fn a_row_of_more_epochs_than_the_cap_is_thinned() {
        let per_process = MAX_EPOCHS / 4 + 1;
        let epochs: Vec<Vec<f64>> = (0..5).map(|_| vec![1.0; per_process]).collect();
        let mut r = result(epochs);
        r.bound_epochs(MAX_EPOCHS);
        let kept: usize = r.epochs_ns_per_op.iter().map(Vec::len).sum();
        assert!((MAX_EPOCHS / 2..=MAX_EPOCHS).contains(&kept), "{kept}");
        assert_eq!(r.epochs_ns_per_op.len(), 5);
        assert_eq!(r.epochs_read, Some(5 * per_process));
        let mut whole = result(vec![vec![1.0; 10]; 3]);
        whole.bound_epochs(MAX_EPOCHS);
        assert_eq!((whole.epochs_ns_per_op.len(), whole.epochs_read), (3, None));
    }

    #[test]
    fn epochs_that_are_not_finite_are_left_out() {
        let mut r = result(vec![vec![1.0, f64::NAN, f64::INFINITY], vec![f64::NAN]]);
        r.bound_epochs(MAX_EPOCHS);
        assert_eq!(r.epochs_ns_per_op, vec![vec![1.0]]);
        assert_eq!(r.epochs_read, Some(4));
    }

    /// A FIFO or a link in a baseline's place is refused without blocking
    /// or reading it; a missing one says how to save it.
    #[test]
    fn a_baseline_that_is_not_a_regular_file_is_refused_unread() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = Store::new(dir.path());
        let said = |name: &str| match load(&store, name) {
            Ok(_) => "read".to_string(),
            Err(e) => format!("{e:#}"),
        };
        assert!(
            said("none").contains("--save-baseline none"),
            "{}",
            said("none")
        );
        let folder = dir.path().join("baselines");
        std::fs::create_dir_all(&folder).expect("creates");
        let made = std::process::Command::new("mkfifo")
            .arg(folder.join("fifo"))
            .status();
        assert!(made.is_ok_and(|s| s.success()));
        assert!(
            said("fifo").contains("not a regular file (a FIFO"),
            "{}",
            said("fifo")
        );
        std::os::unix::fs::symlink("/dev/zero", folder.join("zero")).expect("links");
        assert!(said("zero").contains("symbolic link"), "{}", said("zero"));
        std::fs::write(folder.join("bad"), "../../etc/passwd").expect("writes");
        assert!(
            said("bad").contains("not the name of a kept run"),
            "{}",
            said("bad")
        );
    }
}
