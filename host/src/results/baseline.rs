//! Saved baselines: results of an earlier `host run`, stored under
//! `results/baselines/NAME.json` in the working directory, and read back to
//! compare with.
//!
//! A baseline is the run's JSON report, written atomically (temporary file,
//! then rename), so a crash never leaves half a baseline. Reading checks it
//! and says plainly when it is missing or damaged; it is read bounded
//! ([`MAX_FILE_BYTES`], a regular file), a non-finite epoch is left out, and
//! a row of more than [`MAX_EPOCHS`] epochs is thinned to that many before
//! anything resamples it. This module stores and reads; the comparison is
//! [`crate::analysis::baseline`]'s.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use crate::results::{Environment, Foreign, RunReport};
use crate::util::fs::{Cap, Links, is_not_found, read_bounded, replace_atomically};

/// Folder of saved baselines, relative to the working directory.
pub const FOLDER: &str = "results/baselines";

/// The largest baseline read: 256 MiB, far above the JSON of a run of
/// hundreds of rows.
pub const MAX_FILE_BYTES: u64 = 256 << 20;
/// The most epochs of a saved row a comparison resamples: a row measured
/// for minutes has some 10^5 epochs of 1 ms; one with more is thinned to
/// every k-th epoch of each process (2000 resamples over 20 million epochs
/// took minutes).
pub const MAX_EPOCHS: usize = 100_000;

/// Where baseline `name` lives.
pub fn path(name: &str) -> PathBuf {
    PathBuf::from(FOLDER).join(format!("{name}.json"))
}

/// Make sure baseline `name` can be written, before anything is measured.
pub fn prepare_save(name: &str) -> Result<()> {
    std::fs::create_dir_all(FOLDER)
        .with_context(|| format!("--save-baseline {name}: cannot create {FOLDER}"))?;
    Ok(())
}

/// Save `report` as baseline `name`; returns where.
pub fn save(name: &str, report: &RunReport) -> Result<PathBuf> {
    let path = path(name);
    std::fs::create_dir_all(FOLDER).with_context(|| format!("creating {FOLDER}"))?;
    let mut bytes = serde_json::to_vec_pretty(report).context("serialising the baseline")?;
    bytes.push(b'\n');
    replace_atomically(&path, &bytes)?;
    Ok(path)
}

/// A saved baseline, as much of it as comparisons need.
#[derive(Debug, Clone, Deserialize)]
pub struct Saved {
    pub tool: SavedTool,
    pub environment: SavedEnvironment,
    pub results: Vec<SavedResult>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SavedTool {
    pub version: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SavedEnvironment {
    pub pinned_core: Option<usize>,
    pub priority: String,
    pub cpu_model: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SavedResult {
    pub name: String,
    #[serde(default)]
    pub error: Option<String>,
    /// Per-op time of each epoch (baselines saved before epochs hold one
    /// per sample, under the old name).
    #[serde(default, alias = "samples_ns_per_op")]
    pub epochs_ns_per_op: Vec<Vec<f64>>,
    /// Whether its time stood on the undisturbed epochs (baselines saved
    /// before that choice did not).
    #[serde(default)]
    pub undisturbed: bool,
    /// How many epochs it held as read, when some were left out (not
    /// finite) or it was thinned to [`MAX_EPOCHS`].
    #[serde(skip)]
    pub epochs_read: Option<usize>,
    #[serde(default)]
    pub fuel_per_op: Option<f64>,
    #[serde(default)]
    pub callgrind: Option<crate::results::CallgrindCounts>,
}

impl SavedResult {
    /// Its deterministic cost per op under `metric`, when it was measured.
    pub fn exact(&self, metric: crate::options::Metric) -> Option<f64> {
        crate::results::exact_per_op(metric, self.fuel_per_op, self.callgrind.as_ref())
    }
}

/// Read baseline `name`.
pub fn load(name: &str) -> Result<Saved> {
    load_from(name, &path(name))
}

/// Read baseline `name` from `path`.
fn load_from(name: &str, path: &Path) -> Result<Saved> {
    let cap = Cap {
        bytes: MAX_FILE_BYTES,
        name: "the cap on a baseline",
    };
    let bytes = match read_bounded(path, cap, Links::Follow) {
        Ok(bytes) => bytes,
        Err(e) if is_not_found(&e) => bail!(
            "--baseline: no baseline `{name}` ({} does not exist; save one with --save-baseline {name})",
            path.display()
        ),
        Err(e) => return Err(e.context("--baseline: cannot read the baseline")),
    };
    let mut saved: Saved = serde_json::from_slice(&bytes)
        .with_context(|| format!("--baseline: {} is not a valid baseline", path.display()))?;
    for result in &mut saved.results {
        result.bound_epochs(MAX_EPOCHS);
    }
    Ok(saved)
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
    pub fn result(&self, name: &str) -> Option<&SavedResult> {
        self.results
            .iter()
            .find(|r| r.name == name && r.error.is_none() && !r.epochs_ns_per_op.is_empty())
    }

    /// How the environment now differs from the saved one, in plain words
    /// (outside text: they quote the saved file and the machine).
    pub fn environment_differences(&self, now: &Environment) -> Vec<Foreign> {
        let mut differences = Vec::new();
        let version = env!("CARGO_PKG_VERSION");
        if self.tool.version != version {
            differences.push(Foreign::new(format!(
                "baseline made with host {}, this is {version}",
                self.tool.version
            )));
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
        if now.priority != self.environment.priority.as_str() {
            differences.push(now.priority.map(|now| {
                format!(
                    "baseline ran at priority `{}`, now `{now}`",
                    self.environment.priority
                )
            }));
        }
        let then_cpu = self.environment.cpu_model.clone().map(Foreign::from);
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
#[path = "baseline_fuzz.rs"]
mod fuzz;

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

    /// A FIFO, a link to `/dev/zero` or an oversized file in a baseline's
    /// place is refused without blocking or reading it, and a baseline of
    /// more epochs than the cap is read thinned.
    #[test]
    fn a_baseline_that_is_not_a_regular_file_is_refused_unread() {
        let dir = tempfile::tempdir().expect("temp dir");
        let folder = dir.path().join(FOLDER);
        std::fs::create_dir_all(&folder).expect("creates");
        let said = |file: &Path| match load_from("b", file) {
            Ok(_) => "read".to_string(),
            Err(e) => format!("{e:#}"),
        };
        let fifo = folder.join("fifo.json");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()));
        assert!(said(&fifo).contains("not a regular file (a FIFO"));
        let zero = folder.join("zero.json");
        std::os::unix::fs::symlink("/dev/zero", &zero).expect("links");
        assert!(said(&zero).contains("not a regular file"));
        let big = folder.join("big.json");
        let file = std::fs::File::create(&big).expect("creates");
        file.set_len(MAX_FILE_BYTES + 1).expect("grows");
        assert!(said(&big).contains("larger than the cap on a baseline 256 MiB"));
        let many = folder.join("many.json");
        let epochs = vec![vec![1.5; MAX_EPOCHS + 1]];
        let json = serde_json::json!({
            "tool": {"version": "0"},
            "environment": {"pinned_core": null, "priority": "normal", "cpu_model": null},
            "results": [{"name": "xor", "epochs_ns_per_op": epochs}],
        });
        std::fs::write(&many, json.to_string()).expect("writes");
        let saved = load_from("many", &many).expect("reads");
        let row = saved.result("xor").expect("measured");
        assert_eq!(row.epochs_ns_per_op[0].len(), MAX_EPOCHS / 2 + 1);
        assert_eq!(row.epochs_read, Some(MAX_EPOCHS + 1));
    }
}
