//! Saved baselines: results of an earlier `host run`, stored under
//! `results/baselines/NAME.json` in the working directory, and read back to
//! compare with.
//!
//! A baseline is the run's JSON report, written atomically (temporary file,
//! then rename), so a crash never leaves half a baseline. Reading checks it
//! and says plainly when it is missing or damaged. This module stores and
//! reads; the comparison is [`crate::analysis::baseline`]'s.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use crate::results::{Environment, RunReport};
use crate::util::fs::replace_atomically;

/// Folder of saved baselines, relative to the working directory.
pub const FOLDER: &str = "results/baselines";

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
    let path = path(name);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "--baseline: no baseline `{name}` ({} does not exist; save one with --save-baseline {name})",
            path.display()
        ),
        Err(e) => bail!("--baseline: cannot read {}: {e}", path.display()),
    };
    let saved: Saved = serde_json::from_slice(&bytes)
        .with_context(|| format!("--baseline: {} is not a valid baseline", path.display()))?;
    Ok(saved)
}

impl Saved {
    /// The saved result of row `name`, when it was measured.
    pub fn result(&self, name: &str) -> Option<&SavedResult> {
        self.results
            .iter()
            .find(|r| r.name == name && r.error.is_none() && !r.epochs_ns_per_op.is_empty())
    }

    /// How the environment now differs from the saved one, in plain words.
    pub fn environment_differences(&self, now: &Environment) -> Vec<String> {
        let mut differences = Vec::new();
        let version = env!("CARGO_PKG_VERSION");
        if self.tool.version != version {
            differences.push(format!(
                "baseline made with host {}, this is {version}",
                self.tool.version
            ));
        }
        if self.environment.pinned_core != now.pinned_core {
            let pin = |c: Option<usize>| {
                c.map_or("not pinned".to_string(), |c| format!("pinned to core {c}"))
            };
            differences.push(format!(
                "baseline {}, now {}",
                pin(self.environment.pinned_core),
                pin(now.pinned_core)
            ));
        }
        if self.environment.priority != now.priority {
            differences.push(format!(
                "baseline ran at priority `{}`, now `{}`",
                self.environment.priority, now.priority
            ));
        }
        if self.environment.cpu_model != now.cpu_model {
            let cpu =
                |c: &Option<String>| c.clone().unwrap_or_else(|| "an unknown CPU".to_string());
            differences.push(format!(
                "baseline ran on {}, now on {}",
                cpu(&self.environment.cpu_model),
                cpu(&now.cpu_model)
            ));
        }
        differences
    }
}
