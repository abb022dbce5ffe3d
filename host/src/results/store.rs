//! The store of kept runs: every `host run` and `host compare` kept as one
//! JSON file
//! ([`KeptRun`]) in `<store>/runs/`, and the drift the user asked to forget
//! ([`Forgotten`], `<store>/forgotten.json`), with its time, the git state of the
//! workloads' repository or a label, the machine, the engines, and per row
//! what a later comparison needs (median, interval, the medians of the
//! worker processes, the epochs thinned to [`MAX_KEPT_EPOCHS`], the
//! deterministic counts). A named baseline is a pointer to one kept run
//! (`<store>/baselines/NAME`); the run history (`host history`), the
//! baselines ([`crate::results::baseline`]) and the drift between runs
//! ([`crate::results::history`]) are all read from here, through the one
//! reader [`Store::read`].
//!
//! Every file is written through [`replace_atomically`] and read through
//! [`read_bounded`] (a regular file, no symbolic link, at most
//! [`MAX_RUN_BYTES`]); only names the store itself makes are read, its
//! folders (`runs`, `baselines`) are refused when they are symbolic links
//! (nothing is read or written outside the store), and at most
//! [`MAX_KEPT_RUNS`] runs are kept (on keeping a new one, the runs dated
//! after it go first, then the oldest; none that a baseline names, never
//! the new one).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::options::{EngineConfig, Metric, check_baseline_name};
use crate::platform::git::GitState;
use crate::results::json::nan_if_null;
use crate::results::modules::ModuleRef;
use crate::results::{
    BenchResult, CallgrindCounts, CompareReport, Environment, RunReport, SuiteComparison, Tool,
};
use crate::util::error::one_line;
use crate::util::foreign::Foreign;
use crate::util::fs::{Cap, Links, is_not_found, read_bounded, replace_atomically};

/// The format of a kept run; a file of another format is skipped.
pub const FORMAT: u32 = 1;
/// Runs kept: beyond it, the oldest that no baseline names are removed.
pub const MAX_KEPT_RUNS: usize = 1000;
/// The largest kept run read: 64 MiB.
pub const MAX_RUN_BYTES: u64 = 64 << 20;
/// The most epochs a kept row holds (every k-th of each process beyond it):
/// enough for a baseline's resampling, some 20 KB of JSON a row.
pub const MAX_KEPT_EPOCHS: usize = 2000;
/// The most bytes of kept runs `host history` reads.
pub const HISTORY_BUDGET: u64 = 512 << 20;
/// The most bytes of kept runs a run reads for its drift.
pub const DRIFT_BUDGET: u64 = 128 << 20;
/// The most folder entries looked at when listing the runs.
const MAX_ENTRIES: usize = 100_000;
/// The largest baseline pointer read.
const MAX_POINTER_BYTES: u64 = 1024;
/// The largest figure a kept run holds (a time per op in ns, a count per
/// op): some 30 years, 10^18 instructions, either way of zero. A larger
/// one was not written by the host.
const MAX_FIGURE: f64 = 1e18;
/// The most worker processes of one kept row.
const MAX_PROCESSES: usize = 10_000;
/// The largest file of forgotten drift read: 1 MiB.
const MAX_FORGOTTEN_BYTES: u64 = 1 << 20;
/// The most marks of forgotten drift kept (the newest).
const MAX_FORGET_MARKS: usize = 1000;
/// Marks older than this (ms) are dropped: the runs they forget no longer
/// count anyway ([`crate::analysis::drift::MAX_AGE_S`]).
const FORGET_MARK_AGE_MS: u64 = 24 * 3600 * 1000;

/// The drift the user asked to forget (`host run --forget-drift`): runs
/// kept up to a time no longer feed the drift of one subject, or of every
/// subject on a CPU.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Forgotten {
    pub format: u32,
    pub marks: Vec<Forget>,
}

/// One mark of forgotten drift.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Forget {
    /// The CPU model the runs were kept on.
    pub cpu: Foreign,
    /// The subject ([`crate::results::history::Subject::key`]) whose
    /// drift is forgotten; every subject's on the CPU when absent.
    pub subject: Option<String>,
    /// Runs kept at or before this time (ms since the Unix epoch) are
    /// forgotten.
    pub until_ms: u64,
}

impl Forgotten {
    /// Whether the row of `subject` of a run kept at `unix_ms` on `cpu`
    /// is forgotten.
    pub fn forgets(&self, cpu: &Foreign, subject: &str, unix_ms: u64) -> bool {
        self.marks.iter().any(|m| {
            m.cpu == *cpu
                && unix_ms <= m.until_ms
                && m.subject.as_deref().is_none_or(|s| s == subject)
        })
    }
}

/// The machine a run was kept on: what tells machines apart in a series
/// (not its host name, which changes with every CI job).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineId {
    /// The CPU model (empty when unknown).
    pub cpu: Foreign,
    /// Cores available to the process.
    pub cores: usize,
    /// `linux-x86_64` and the like.
    pub platform: String,
}

impl MachineId {
    /// This machine, as a run that reported `cpu` and `cores` ran on it.
    pub fn new(cpu: Option<&Foreign>, cores: usize) -> Self {
        MachineId {
            cpu: cpu.cloned().unwrap_or_default(),
            cores,
            platform: format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH),
        }
    }

    /// A short name: the CPU model and the cores.
    pub fn describe(&self) -> Foreign {
        let cpu = match self.cpu.is_empty() {
            true => Foreign::new("an unknown CPU"),
            false => self.cpu.clone(),
        };
        cpu.then(&format!(", {} cores", self.cores))
    }
}

/// One kept run of `host run` or `host compare`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KeptRun {
    pub format: u32,
    /// Its file name without `.json`: the time in ms, the process, a nonce.
    pub id: String,
    /// When it was kept, in ms since the Unix epoch.
    pub unix_ms: u64,
    pub tool_version: Foreign,
    /// Which command measured it (rows of a comparison are its variants,
    /// measured interleaved at one shared count).
    #[serde(default)]
    pub command: Measured,
    /// `--label`, when given.
    pub label: Option<Foreign>,
    /// The git state of the first workload's folder, when in a repository.
    pub git: Option<GitState>,
    pub machine: MachineId,
    /// The core measured on, the priority: what a baseline compares.
    pub pinned_core: Option<usize>,
    pub priority: Foreign,
    /// Whether the machine was busy: such a run is no measure of drift.
    pub busy_machine: bool,
    /// The run's seed.
    pub seed: u64,
    /// The deterministic metric measured beside the time.
    pub metric: Metric,
    pub engines: Vec<EngineConfig>,
    pub rows: Vec<KeptRow>,
    /// A suite's comparison: what it compared and its geometric means (its
    /// benchmarks are not kept as rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<KeptSuite>,
}

/// A suite's comparison as kept: enough for a later run of the same suite
/// to measure how its geometric means drift between runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KeptSuite {
    /// The SHA-256 (hex) of its sides and of each benchmark's name and
    /// files' contents: runs of the same suite share it.
    pub digest: String,
    /// Per side after the first, its geometric mean of ratios.
    pub geometric_means: Vec<KeptMean>,
}

/// One side's geometric mean of ratios to the reference, as kept.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KeptMean {
    pub side: Foreign,
    pub reference: Foreign,
    #[serde(deserialize_with = "nan_if_null")]
    pub value: f64,
}

/// The command a run was kept by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Measured {
    #[default]
    Run,
    Compare,
    /// `host compare` of a suite.
    Suite,
}

/// One row of a kept run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KeptRow {
    /// As in the report: `benchmark`, `/size`, `[engine]`.
    pub name: Foreign,
    pub benchmark: Foreign,
    pub size: Option<u64>,
    /// Index into the run's `engines`.
    pub engine: usize,
    /// Why it failed; absent when measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Foreign>,
    /// Median per op in ns, and its 95% interval.
    #[serde(deserialize_with = "nan_if_null")]
    pub median_ns: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub ci95_low: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub ci95_high: f64,
    /// The median per op of each worker process.
    #[serde(default)]
    pub process_medians_ns: Vec<f64>,
    /// Per-op time of each epoch, process by process, thinned to
    /// [`MAX_KEPT_EPOCHS`] (single precision).
    #[serde(default)]
    pub epochs_ns_per_op: Vec<Vec<f32>>,
    pub undisturbed: bool,
    /// Wasm instructions per op (fuel), with `--metric instructions`.
    #[serde(default)]
    pub fuel_per_op: Option<f64>,
    /// Callgrind's counts per op, with `--metric cycles-est`.
    #[serde(default)]
    pub callgrind: Option<CallgrindCounts>,
    /// What the drift between runs files this row under (its file's
    /// contents, benchmark, size, engine and plan).
    #[serde(default)]
    pub drift_subject: Option<String>,
    /// The module measured, kept by content in the store's modules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<ModuleRef>,
}

/// What a run is kept with, besides its report.
#[derive(Debug, Clone)]
pub struct Provenance {
    pub label: Option<String>,
    pub git: Option<GitState>,
    pub metric: Metric,
}

impl KeptRun {
    /// The run `report` as kept now.
    pub fn new(report: &RunReport, provenance: Provenance) -> Self {
        Self::of(
            &report.tool,
            &report.environment,
            &report.results,
            provenance,
        )
    }

    /// The comparison `report` as kept now: its variants are its rows.
    pub fn of_comparison(report: &CompareReport, provenance: Provenance) -> Self {
        let mut kept = Self::of(
            &report.tool,
            &report.environment,
            &report.variants,
            provenance,
        );
        kept.command = Measured::Compare;
        kept
    }

    /// The suite comparison `report`, of the suite whose sides and
    /// benchmarks' files hash to `digest`, as kept now: its geometric
    /// means, no rows. `None` when no benchmark was compared (no
    /// environment was reported).
    pub fn of_suite(
        report: &SuiteComparison,
        digest: String,
        provenance: Provenance,
    ) -> Option<Self> {
        let env = report.environment.as_ref()?;
        let mut kept = Self::of(&report.tool, env, &[], provenance);
        kept.command = Measured::Suite;
        kept.suite = Some(KeptSuite {
            digest,
            geometric_means: (report.summary.geometric_means.iter())
                .map(|g| KeptMean {
                    side: g.side.clone(),
                    reference: g.reference.clone(),
                    value: g.ratio.value,
                })
                .collect(),
        });
        Some(kept)
    }

    /// The rows `results` measured with `tool` in `env`, as kept now.
    fn of(tool: &Tool, env: &Environment, results: &[BenchResult], provenance: Provenance) -> Self {
        let unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let engines = env.engines.clone();
        KeptRun {
            format: FORMAT,
            id: format!(
                "{unix_ms:013}-{}-{:08x}",
                std::process::id(),
                fastrand::u32(..)
            ),
            unix_ms,
            tool_version: tool.version.clone(),
            command: Measured::Run,
            label: provenance.label.map(Foreign::from),
            git: provenance.git,
            machine: MachineId::new(env.cpu_model.as_ref(), env.cores),
            pinned_core: env.pinned_core,
            priority: env.priority.clone(),
            busy_machine: env.busy_machine,
            seed: env.seed,
            metric: provenance.metric,
            rows: results.iter().map(|r| KeptRow::new(r, &engines)).collect(),
            engines,
            suite: None,
        }
    }
}

impl KeptRow {
    fn new(result: &BenchResult, engines: &[EngineConfig]) -> Self {
        let engine = result
            .engine
            .as_ref()
            .and_then(|name| {
                engines
                    .iter()
                    .position(|e| Foreign::new(e.short_name()) == *name)
            })
            .unwrap_or(0);
        let mut row = KeptRow {
            name: result.name.clone(),
            benchmark: result.benchmark.clone(),
            size: result.size,
            engine,
            error: result.error.clone(),
            median_ns: f64::NAN,
            ci95_low: f64::NAN,
            ci95_high: f64::NAN,
            process_medians_ns: Vec::new(),
            epochs_ns_per_op: Vec::new(),
            undisturbed: false,
            fuel_per_op: None,
            callgrind: None,
            drift_subject: result.subject.clone(),
            module: None,
        };
        if let Some(f) = &result.figures {
            row.median_ns = f.ns_per_op.median;
            row.ci95_low = f.ns_per_op.ci95_low;
            row.ci95_high = f.ns_per_op.ci95_high;
            row.process_medians_ns = f.processes.process_medians_ns.clone();
            row.epochs_ns_per_op = thin(&f.series.epochs_ns_per_op, MAX_KEPT_EPOCHS);
            row.undisturbed = f.counts.undisturbed;
            row.fuel_per_op = f.fuel_per_op;
            row.callgrind = f.callgrind;
        }
        row
    }

    /// Whether it was measured with a plausible median.
    pub fn measured(&self) -> bool {
        self.error.is_none() && self.median_ns.is_finite()
    }
}

/// `epochs`, process by process, as single precision, every k-th of each
/// (k the least that keeps at most `cap` in all).
fn thin(epochs: &[Vec<f64>], cap: usize) -> Vec<Vec<f32>> {
    let all: usize = epochs.iter().map(Vec::len).sum();
    let step = all.div_ceil(cap.max(1)).max(1);
    epochs
        .iter()
        .map(|p| p.iter().step_by(step).map(|&e| e as f32).collect())
        .filter(|p: &Vec<f32>| !p.is_empty())
        .collect()
}

/// The file of the gate's error rates, in the store's folder.
const GATE_FIGURES: &str = "gate-figures.json";

/// The largest file of the gate's figures read.
const MAX_GATE_FIGURES_BYTES: u64 = 1 << 20;

/// A folder of kept runs.
#[derive(Debug, Clone)]
pub struct Store {
    folder: PathBuf,
}

/// Whether `id` is a name the store makes: digits, `-` and hex digits.
fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
}

/// That `folder`, a folder of the store, is not a symbolic link nor
/// anything but a folder. One that is not there (or cannot be looked at)
/// passes: what is done with it next fails on its own.
fn check_inside(folder: &Path) -> Result<()> {
    match std::fs::symlink_metadata(folder) {
        Ok(meta) if meta.file_type().is_symlink() => bail!(
            "{}: a symbolic link inside the store: refused without following it",
            folder.display()
        ),
        Ok(meta) if !meta.is_dir() => bail!("{}: not a folder", folder.display()),
        _ => Ok(()),
    }
}

impl Store {
    pub fn new(folder: &Path) -> Self {
        Store {
            folder: folder.to_path_buf(),
        }
    }

    pub fn folder(&self) -> &Path {
        &self.folder
    }

    fn runs(&self) -> PathBuf {
        self.folder.join("runs")
    }

    fn baselines(&self) -> PathBuf {
        self.folder.join("baselines")
    }

    /// Make sure runs can be kept, before anything is measured: the folder
    /// of runs is made (a symbolic link is refused) and a file can be
    /// created in it.
    pub fn prepare(&self) -> Result<()> {
        check_inside(&self.runs())?;
        std::fs::create_dir_all(self.runs())
            .with_context(|| format!("cannot create the store {}", self.folder.display()))?;
        check_inside(&self.runs())?;
        tempfile::Builder::new()
            .prefix(".probe")
            .tempfile_in(self.runs())
            .map(drop)
            .with_context(|| format!("cannot write in the store {}", self.folder.display()))
    }

    /// Keep `run`, named as a baseline when `baseline` is given, and remove
    /// the oldest runs beyond [`MAX_KEPT_RUNS`]; returns its file.
    pub fn keep(&self, run: &KeptRun, baseline: Option<&str>) -> Result<PathBuf> {
        self.prepare()?;
        check_inside(&self.baselines())?;
        let path = self.runs().join(format!("{}.json", run.id));
        let mut bytes = serde_json::to_vec(run).context("serialising the kept run")?;
        bytes.push(b'\n');
        replace_atomically(&path, &bytes)?;
        if let Some(name) = baseline {
            self.name_baseline(name, &run.id)?;
        }
        self.prune(&run.id)?;
        Ok(path)
    }

    /// Point baseline `name` at kept run `id`.
    fn name_baseline(&self, name: &str, id: &str) -> Result<()> {
        check_baseline_name(name)?;
        check_inside(&self.baselines())?;
        std::fs::create_dir_all(self.baselines())
            .with_context(|| format!("creating {}", self.baselines().display()))?;
        replace_atomically(&self.baselines().join(name), format!("{id}\n").as_bytes())
    }

    /// Keep the gate's error rates measured on this machine
    /// (`host selftest --only gate`), replacing the ones before.
    pub fn keep_gate_figures(&self, figures: &impl Serialize) -> Result<()> {
        check_inside(&self.folder)?;
        std::fs::create_dir_all(&self.folder)
            .with_context(|| format!("cannot create the store {}", self.folder.display()))?;
        let mut bytes = serde_json::to_vec_pretty(figures).context("serialising the figures")?;
        bytes.push(b'\n');
        replace_atomically(&self.folder.join(GATE_FIGURES), &bytes)
    }

    /// The gate's error rates kept by [`Store::keep_gate_figures`]; `None`
    /// when none were kept.
    pub fn gate_figures<T: DeserializeOwned>(&self) -> Result<Option<T>> {
        let path = self.folder.join(GATE_FIGURES);
        let cap = Cap {
            bytes: MAX_GATE_FIGURES_BYTES,
            name: "the cap on the gate's figures",
        };
        let bytes = match read_bounded(&path, cap, Links::Refuse) {
            Ok(bytes) => bytes,
            Err(e) if is_not_found(&e) => return Ok(None),
            Err(e) => return Err(e),
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .with_context(|| format!("{}: not the gate's figures", path.display()))
    }

    /// The kept run baseline `name` points at.
    pub fn baseline_id(&self, name: &str) -> Result<String> {
        check_baseline_name(name)?;
        check_inside(&self.baselines())?;
        let path = self.baselines().join(name);
        let cap = Cap {
            bytes: MAX_POINTER_BYTES,
            name: "the cap on a baseline name",
        };
        let bytes = match read_bounded(&path, cap, Links::Refuse) {
            Ok(bytes) => bytes,
            Err(e) if is_not_found(&e) => bail!(
                "no baseline `{name}` in the store {} (save one with --save-baseline {name})",
                self.folder.display()
            ),
            Err(e) => return Err(e.context(format!("cannot read baseline `{name}`"))),
        };
        let id = String::from_utf8_lossy(&bytes).trim().to_string();
        if !valid_id(&id) {
            bail!("{}: not the name of a kept run", path.display());
        }
        Ok(id)
    }

    /// The ids of the kept runs, oldest first.
    pub fn ids(&self) -> Result<Vec<String>> {
        check_inside(&self.runs())?;
        let entries = match std::fs::read_dir(self.runs()) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(e).with_context(|| format!("listing {}", self.runs().display()));
            }
        };
        let mut ids: Vec<String> = entries
            .take(MAX_ENTRIES)
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let id = name.strip_suffix(".json")?;
                valid_id(id).then(|| id.to_string())
            })
            .collect();
        ids.sort();
        Ok(ids)
    }

    /// Kept run `id`: the one reader of the store.
    pub fn read(&self, id: &str) -> Result<KeptRun> {
        let cap = Cap {
            bytes: MAX_RUN_BYTES,
            name: "the cap on a kept run",
        };
        self.read_capped(id, cap).map(|(run, _)| run)
    }

    /// Kept run `id`, read under `cap`, and its size in bytes.
    fn read_capped(&self, id: &str, cap: Cap) -> Result<(KeptRun, u64)> {
        if !valid_id(id) {
            bail!("`{id}` is not the name of a kept run");
        }
        check_inside(&self.runs())?;
        let path = self.runs().join(format!("{id}.json"));
        let bytes = read_bounded(&path, cap, Links::Refuse)?;
        let run: KeptRun = serde_json::from_slice(&bytes)
            .with_context(|| format!("{} is not a kept run", path.display()))?;
        if run.format != FORMAT || run.id != id {
            bail!("{} is not a kept run of this format", path.display());
        }
        check_plausible(&run).with_context(|| format!("{} is not a kept run", path.display()))?;
        Ok((run, bytes.len() as u64))
    }

    /// The newest `limit` runs kept since `since_ms` (ms since the Unix
    /// epoch) whose files together hold at most `budget` bytes, oldest
    /// first, with a note per file that could not be read (and one when
    /// the budget left older runs unread).
    pub fn newest(&self, limit: usize, since_ms: u64, budget: u64) -> (Vec<KeptRun>, Vec<String>) {
        let mut notes = Vec::new();
        let ids = match self.ids() {
            Ok(ids) => ids,
            Err(e) => {
                notes.push(format!("the store was not read: {}", one_line(&e)));
                return (Vec::new(), notes);
            }
        };
        let since = format!("{since_ms:013}");
        let mut runs: Vec<KeptRun> = Vec::new();
        let mut left = budget;
        for id in ids
            .iter()
            .rev()
            .take_while(|id| id.as_str() >= since.as_str())
        {
            if runs.len() >= limit {
                break;
            }
            let cap = Cap {
                bytes: MAX_RUN_BYTES.min(left),
                name: "what is left of the budget for reading kept runs",
            };
            match self.read_capped(id, cap) {
                Ok((run, bytes)) => {
                    left -= bytes.min(left);
                    runs.push(run);
                }
                Err(e) if left < MAX_RUN_BYTES && one_line(&e).contains(cap.name) => {
                    notes.push(format!(
                        "the store: older runs left unread, past {} of kept runs read",
                        crate::util::bytes::format_bytes(budget)
                    ));
                    break;
                }
                Err(e) => notes.push(format!("a kept run was skipped: {}", one_line(&e))),
            }
        }
        runs.reverse();
        (runs, notes)
    }

    fn forgotten_file(&self) -> PathBuf {
        self.folder.join("forgotten.json")
    }

    /// The drift forgotten in this store (none when it never was).
    pub fn forgotten(&self) -> Result<Forgotten> {
        let cap = Cap {
            bytes: MAX_FORGOTTEN_BYTES,
            name: "the cap on the file of forgotten drift",
        };
        let path = self.forgotten_file();
        let bytes = match read_bounded(&path, cap, Links::Refuse) {
            Ok(bytes) => bytes,
            Err(e) if is_not_found(&e) => return Ok(Forgotten::default()),
            Err(e) => return Err(e.context(format!("cannot read {}", path.display()))),
        };
        let forgotten: Forgotten = serde_json::from_slice(&bytes)
            .with_context(|| format!("{} is not a file of forgotten drift", path.display()))?;
        if forgotten.format != FORMAT {
            bail!(
                "{} is not a file of forgotten drift of this format",
                path.display()
            );
        }
        Ok(forgotten)
    }

    /// Add `marks` to the forgotten drift, at `now_ms`, dropping marks
    /// older than a day and the oldest beyond [`MAX_FORGET_MARKS`].
    pub fn forget(&self, marks: Vec<Forget>, now_ms: u64) -> Result<()> {
        self.prepare()?;
        let mut forgotten = self.forgotten()?;
        forgotten.format = FORMAT;
        forgotten
            .marks
            .retain(|m| now_ms.saturating_sub(m.until_ms) <= FORGET_MARK_AGE_MS);
        forgotten.marks.extend(marks);
        let excess = forgotten.marks.len().saturating_sub(MAX_FORGET_MARKS);
        forgotten.marks.drain(..excess);
        let mut bytes =
            serde_json::to_vec(&forgotten).context("serialising the forgotten drift")?;
        bytes.push(b'\n');
        replace_atomically(&self.forgotten_file(), &bytes)
    }

    /// Remove runs beyond [`MAX_KEPT_RUNS`] that no baseline names, `kept`
    /// (the run just kept) never: first those dated after it (a clock ahead,
    /// or a name the store did not make), then the oldest.
    fn prune(&self, kept: &str) -> Result<()> {
        let mut ids = self.ids()?;
        if ids.len() <= MAX_KEPT_RUNS {
            return Ok(());
        }
        let at = ids.partition_point(|id| id.as_str() <= kept);
        ids.rotate_left(at);
        check_inside(&self.baselines())?;
        let named: Vec<String> = match std::fs::read_dir(self.baselines()) {
            Ok(entries) => entries
                .take(MAX_ENTRIES)
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter_map(|name| self.baseline_id(&name).ok())
                .collect(),
            Err(_) => Vec::new(),
        };
        let excess = ids.len() - MAX_KEPT_RUNS;
        let removable = ids
            .iter()
            .filter(|id| !named.contains(id) && id.as_str() != kept);
        for id in removable.take(excess) {
            let _ = std::fs::remove_file(self.runs().join(format!("{id}.json")));
        }
        Ok(())
    }
}

/// That the numbers of `run` are ones the host writes: every figure absent
/// (NaN) or between 0 and [`MAX_FIGURE`], every row's engine among the
/// run's, its epochs thinned, its processes within [`MAX_PROCESSES`].
/// Crafted numbers (1e308, a million processes) would otherwise reach the
/// plots and the searches of `host history`.
fn check_plausible(run: &KeptRun) -> Result<()> {
    // A time per op less the fixed cost may be a little below zero (an
    // empty guest's interval straddles it): bounded both ways.
    let figure = |v: f64| v.is_nan() || (-MAX_FIGURE..=MAX_FIGURE).contains(&v);
    for (i, row) in run.rows.iter().enumerate() {
        let epochs: usize = row.epochs_ns_per_op.iter().map(Vec::len).sum();
        let counts = row.callgrind.map_or([f64::NAN; 5], |c| {
            [
                c.instructions,
                c.l1_misses,
                c.ll_misses,
                c.branch_mispredictions,
                c.cycles_est,
            ]
        });
        let mut figures = [row.median_ns, row.ci95_low, row.ci95_high]
            .into_iter()
            .chain(row.process_medians_ns.iter().copied())
            .chain(row.fuel_per_op)
            .chain(counts)
            .chain(row.epochs_ns_per_op.iter().flatten().map(|&e| f64::from(e)));
        if row.engine >= run.engines.len()
            || row.process_medians_ns.len() > MAX_PROCESSES
            || epochs > MAX_KEPT_EPOCHS + row.epochs_ns_per_op.len()
            || !figures.all(figure)
        {
            bail!("row {} holds numbers the host does not keep", i + 1);
        }
    }
    Ok(())
}

/// A kept run of one measured row `benchmark` (its interval ±1%, five
/// process medians at the median, one process of three epochs), the
/// fixture of the tests that read kept runs.
#[cfg(test)]
pub fn fixture(id: &str, benchmark: &str, median_ns: f64) -> KeptRun {
    KeptRun {
        format: FORMAT,
        id: id.to_string(),
        unix_ms: 0,
        tool_version: "0".into(),
        command: Measured::Run,
        label: None,
        git: None,
        machine: MachineId::new(Some(&"cpu".into()), 2),
        pinned_core: None,
        priority: "normal".into(),
        busy_machine: false,
        seed: 0,
        metric: Metric::Time,
        engines: vec![EngineConfig::default()],
        rows: vec![KeptRow {
            name: benchmark.into(),
            benchmark: benchmark.into(),
            size: None,
            engine: 0,
            error: None,
            median_ns,
            ci95_low: median_ns * 0.99,
            ci95_high: median_ns * 1.01,
            process_medians_ns: vec![median_ns; 5],
            epochs_ns_per_op: vec![vec![median_ns as f32; 3]],
            undisturbed: true,
            fuel_per_op: None,
            callgrind: None,
            drift_subject: None,
            module: None,
        }],
        suite: None,
    }
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "store_fuzz.rs"]
mod fuzz;
