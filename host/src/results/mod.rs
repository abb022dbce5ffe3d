//! The results stage: plain data, the one contract every output is made
//! from (JSON export, baselines, terminal table, Markdown, CSV, HTML).
//!
//! Raw measurements ([`Measurement`]), the figures summarised from them
//! ([`Figures`], made by [`crate::analysis`]), run and compare reports, and
//! the small value types they hold (verdicts, ratios, outlier classes,
//! complexity classes). Nothing here measures, computes statistics or
//! formats; [`baseline`] stores and reads saved reports, [`history`] the
//! medians of earlier runs.

use std::fmt;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::guest::Kind;
use crate::guest::cache::CacheOutcome;
use crate::guest::program::TimedRegion;
use crate::options::{EngineConfig, NoiseBand, SeedRule};

pub mod baseline;
pub mod history;

/// Everything one `host run` produced.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RunReport {
    pub tool: Tool,
    pub environment: Environment,
    pub results: Vec<BenchResult>,
    /// Per benchmark measured at several sizes: the fit of per-op time
    /// against size.
    pub complexity: Vec<ComplexityResult>,
    /// The saved baseline compared with (`--baseline`), if any.
    pub baseline: Option<String>,
    /// Where the results were saved (`--save-baseline`), if they were.
    pub saved_baseline: Option<String>,
    /// Why the run stopped before measuring every row (Ctrl-C).
    pub stopped: Option<String>,
    /// Over the rows, when there were at least two.
    #[serde(default)]
    pub suite: Option<SuiteSummary>,
}

/// Callgrind's counts, from its simulation of this machine's caches and
/// branch predictor: deterministic. `cycles_est` is instructions + 10 × L1
/// misses + 300 × last-level misses + 15 × mispredictions (Sightglass's
/// weights).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CallgrindCounts {
    /// Instructions retired (Ir).
    pub instructions: f64,
    /// L1 misses, instruction and data (I1mr + D1mr + D1mw).
    pub l1_misses: f64,
    /// Last-level misses (ILmr + DLmr + DLmw).
    pub ll_misses: f64,
    /// Mispredicted conditional and indirect branches (Bcm + Bim).
    pub branch_mispredictions: f64,
    pub cycles_est: f64,
}

/// What the CPU's hardware counters saw per op: the difference of a call at
/// the row's count and one at twice the count, so the call's fixed cost
/// cancels; the median of several such pairs, user space only.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HardwareCounts {
    /// Instructions retired.
    pub instructions: f64,
    /// CPU cycles (the core's clock, as it ran).
    pub cycles: f64,
    /// Pairs counted.
    pub pairs: usize,
}

/// The deterministic cost per op `metric` judges by: fuel's instructions,
/// or Callgrind's estimated cycles; `None` for time or when not measured.
pub fn exact_per_op(
    metric: crate::options::Metric,
    fuel_per_op: Option<f64>,
    callgrind: Option<&CallgrindCounts>,
) -> Option<f64> {
    match metric {
        crate::options::Metric::Time | crate::options::Metric::Counters => None,
        crate::options::Metric::Instructions => fuel_per_op,
        crate::options::Metric::CyclesEst => callgrind.map(|c| c.cycles_est),
    }
}

impl Figures {
    /// Its deterministic cost per op under `metric`, when it was measured.
    pub fn exact(&self, metric: crate::options::Metric) -> Option<f64> {
        exact_per_op(metric, self.fuel_per_op, self.callgrind.as_ref())
    }
}

/// One wasm function's share of a profile's samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FunctionShare {
    /// From the module's name section, else `wasm-function[N]`.
    pub name: String,
    /// Samples with it at the top of the stack, in percent.
    pub self_pct: f64,
    /// Samples with it anywhere on the stack, in percent.
    pub total_pct: f64,
}

/// A function's self share in two profiles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FunctionChange {
    pub name: String,
    pub reference_self_pct: f64,
    pub variant_self_pct: f64,
    /// variant − reference, in percentage points.
    pub change_points: f64,
}

/// The profile of one row.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RowProfile {
    pub name: String,
    /// The profile file (the Firefox Profiler opens it); absent when the
    /// row failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Stack samples taken.
    pub samples: usize,
    /// Functions by self share, largest first.
    pub functions: Vec<FunctionShare>,
}

/// What profiling gave: a profile per row and, between variants, what
/// changed against the reference.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ProfileReport {
    pub profiles: Vec<RowProfile>,
    /// In a comparison, per variant, the functions whose self share changed
    /// against the reference, from the largest gain to the largest loss.
    pub changes: Vec<ProfileChanges>,
}

/// A variant's functions against the reference's.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ProfileChanges {
    pub variant: String,
    pub reference: String,
    pub functions: Vec<FunctionChange>,
}

/// A suite's rows taken together.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SuiteSummary {
    pub rows: usize,
    pub measured: usize,
    pub failed: usize,
    /// Geometric mean of the measured rows' medians per op, in ns (a
    /// program's op is its execute time); null when none was measured.
    #[serde(deserialize_with = "nan_if_null")]
    #[schemars(with = "Option<f64>")]
    pub geomean_ns: f64,
    /// Rows in that mean.
    pub timed_rows: usize,
    /// Rows compared with the baseline (`--baseline`).
    pub baseline_rows: usize,
    /// Geometric mean of the ratios now / then, with its 95% interval.
    pub baseline_ratio: Option<Ratio>,
}

/// Read a float that may be unknown: JSON has no NaN, so serde_json writes
/// one as `null`; it reads back as NaN. The schema of such a field says
/// "number or null".
fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// A row against the same row of a saved baseline.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct BaselineComparison {
    /// Name of the baseline.
    pub name: String,
    /// What the ratio is of: "time" or "instructions".
    pub metric: String,
    /// Now / then (above 1: slower now), with its 95% interval.
    #[serde(flatten)]
    pub ratio: Ratio,
    pub verdict: Verdict,
    /// The verdict in plain words.
    pub text: String,
    /// Slower by more than `--fail-on-regression` with certainty.
    pub regression: bool,
}

/// The complexity fit of one benchmark over its sizes.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ComplexityResult {
    /// `file` or `file:benchmark`.
    pub benchmark: String,
    pub path: String,
    /// Best fit, e.g. `O(n log n)`.
    pub best: Complexity,
    /// ns per op = coefficient · g(size).
    #[serde(deserialize_with = "nan_if_null")]
    #[schemars(with = "Option<f64>")]
    pub coefficient: f64,
    /// RMS of the residuals relative to the mean.
    #[serde(deserialize_with = "nan_if_null")]
    #[schemars(with = "Option<f64>")]
    pub rms: f64,
    pub candidates: Vec<Candidate>,
    /// The (size, median ns/op) points fitted.
    pub points: Vec<(u64, f64)>,
}

impl RunReport {
    /// Rows that failed.
    pub fn failures(&self) -> usize {
        self.results.iter().filter(|r| r.error.is_some()).count()
    }

    /// Rows certainly slower than the baseline beyond `--fail-on-regression`.
    pub fn regressions(&self) -> usize {
        self.results
            .iter()
            .filter(|r| r.baseline.as_ref().is_some_and(|b| b.regression))
            .count()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

impl Tool {
    /// The name every export of this tool carries.
    pub const NAME: &str = "wasm-bench";

    pub fn this() -> Self {
        Tool {
            name: Self::NAME.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}

/// Where and how the measurements were taken.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Environment {
    /// The core the measuring thread was pinned to; null when not pinned.
    pub pinned_core: Option<usize>,
    /// Why that core, when the host chose it (the quietest by load).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_choice: Option<String>,
    /// What interrupted the measuring core while `host run` watched it
    /// before measuring (gaps between back-to-back clock reads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interruptions: Option<crate::platform::gaps::Interruptions>,
    /// Cores available to the process.
    pub cores: usize,
    /// Scheduler and priority of the measuring thread, e.g. `nice -20 (SCHED_OTHER)`.
    pub priority: String,
    pub clock_resolution_ns: f64,
    pub clock_overhead_ns: f64,
    /// One call of the empty core module through the timed path, in ns.
    pub empty_call_ns: f64,
    /// A pause/resume pair in a core module, in ns (subtracted per pause).
    pub pause_pair_ns: f64,
    /// The same two figures for components, when any were measured.
    pub empty_component_call_ns: Option<f64>,
    pub component_pause_pair_ns: Option<f64>,
    /// The run's seed.
    pub seed: u64,
    /// Whether every `run` call got a seed of its own derived from the run's
    /// seed and the call's index (`per_call`), or the run's seed (`same`).
    #[serde(default)]
    pub seed_rule: SeedRule,
    /// Run-to-run drift added to every interval (relative standard deviation, %).
    pub drift_pct: f64,
    /// Target duration of one sample, in ms.
    pub sample_time_ms: f64,
    pub cpu_model: Option<String>,
    /// How code was compiled, per `--engine`.
    pub engines: Vec<EngineConfig>,
    /// Whether compiled code went through the on-disk cache.
    pub compile_cache: Option<String>,
    /// Cap on each instance's memories and tables, in bytes.
    pub max_memory_bytes: u64,
    /// Deadline of one guest call, in ms.
    pub timeout_ms: f64,
    /// Things asked for and refused (pinning, priority).
    pub warnings: Vec<String>,
    /// Hardware performance counters: "available", or why not.
    #[serde(default)]
    pub pmu: String,
}

/// One row: a benchmark that was measured, or one that failed.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct BenchResult {
    /// `file` or `file:benchmark`, followed by `/size` when sizes were given.
    pub name: String,
    /// `file` or `file:benchmark`.
    pub benchmark: String,
    /// The size passed to `setup`, when sizes were given.
    pub size: Option<u64>,
    /// The engine, when several are measured (`--engine`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    pub path: String,
    pub kind: Option<Kind>,
    /// Why it failed, on one line; absent when it was measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub figures: Option<Figures>,
    /// Against the saved baseline, with `--baseline`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineComparison>,
}

impl BenchResult {
    pub fn failed(row: &Row, kind: Option<Kind>, error: String) -> Self {
        BenchResult {
            name: row.name.clone(),
            benchmark: row.benchmark.clone(),
            size: row.size,
            engine: row.engine.clone(),
            path: row.path.display().to_string(),
            kind,
            error: Some(error),
            figures: None,
            baseline: None,
        }
    }

    pub fn measured(row: &Row, kind: Kind, figures: Figures) -> Self {
        BenchResult {
            name: row.name.clone(),
            benchmark: row.benchmark.clone(),
            size: row.size,
            engine: row.engine.clone(),
            path: row.path.display().to_string(),
            kind: Some(kind),
            error: None,
            figures: Some(figures),
            baseline: None,
        }
    }
}

/// What one row of the report measures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Row {
    pub name: String,
    pub benchmark: String,
    pub size: Option<u64>,
    pub path: std::path::PathBuf,
    /// The export to call.
    pub export: String,
    /// Which engine set (`--engine`, in order) measures it.
    pub engine_set: usize,
    /// The engine's short name, when several engines are compared.
    pub engine: Option<String>,
}

impl Row {
    /// A row named `benchmark`, `benchmark/size`, and `[engine]` after it
    /// when several engines are measured.
    pub fn new(
        path: &Path,
        benchmark: &str,
        export: &str,
        size: Option<u64>,
        engine_set: usize,
        engine: Option<&str>,
    ) -> Self {
        let mut name = match size {
            Some(size) => format!("{benchmark}/{size}"),
            None => benchmark.to_string(),
        };
        if let Some(engine) = engine {
            name = format!("{name}[{engine}]");
        }
        Row {
            name,
            benchmark: benchmark.to_string(),
            size,
            path: path.to_path_buf(),
            export: export.to_string(),
            engine_set,
            engine: engine.map(str::to_string),
        }
    }
}

/// Per-op statistics in ns.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NsPerOp {
    pub median: f64,
    pub mean: f64,
    pub stddev: f64,
    pub min: f64,
    pub max: f64,
    /// 95% interval of the median: Student's t over the medians of the
    /// worker processes (a block bootstrap when there is one process),
    /// widened by the run-to-run drift measured on this machine
    /// (`run_drift_pct`) and by `--drift` when given
    /// (`environment.drift_pct`), and reaching back to the median of the
    /// earlier runs of the same benchmark when this run departs from them
    /// (`earlier_runs_departure_pct`).
    #[serde(deserialize_with = "nan_if_null")]
    #[schemars(with = "Option<f64>")]
    pub ci95_low: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[schemars(with = "Option<f64>")]
    pub ci95_high: f64,
    /// The block-bootstrap interval over all epochs: what the blocks alone
    /// can tell, blind to variation between processes.
    pub ci95_within_run_low: f64,
    pub ci95_within_run_high: f64,
}

/// The figures of a measured benchmark.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Figures {
    /// Operations per sample.
    pub count: u64,
    /// Number of samples (calls of `run`).
    pub samples: usize,
    /// Number of epochs the samples were pooled into (runs of consecutive
    /// samples of at least 0.5 ms each) and kept: the statistics are over
    /// them. Reports written before epochs hold none, and one value per
    /// sample.
    #[serde(default)]
    pub epochs: usize,
    /// Epochs left out because the machine added time to them (an
    /// interruption of the measuring core, a slower spell of it): of each
    /// process, only the epochs within one interruption's least length (per
    /// sample) of its fastest are kept (0 for programs, and for calls that
    /// are mostly fixed cost, which stand on every epoch).
    #[serde(default)]
    pub epochs_disturbed: usize,
    /// Whether the time stands on the undisturbed epochs (the rest of each
    /// process's epochs left out, however few), rather than on every epoch.
    #[serde(default)]
    pub undisturbed: bool,
    /// After subtracting the fixed cost of a call (and pause/resume pairs).
    pub ns_per_op: NsPerOp,
    /// Median before any subtraction.
    pub raw_ns_per_op_median: f64,
    /// Median absolute percentage error of the per-op epochs.
    pub err_pct: f64,
    /// 1e9 / median; null when the median is not positive.
    pub ops_per_sec: Option<f64>,
    /// The fixed cost of one call (the median of `fixed_costs_ns`),
    /// subtracted from every sample; the epochs of a short call each
    /// subtract their own (reports written before held the empty guest's
    /// call, under the old name).
    #[serde(alias = "baseline_ns_per_call")]
    pub fixed_cost_ns: f64,
    /// Epochs outside Tukey's fences (kept, not dropped).
    pub outliers: usize,
    pub outlier_counts: Outliers,
    pub warmup_ms: f64,
    pub warmup_settled: bool,
    pub warmup_rounds: usize,
    pub compile_ms: f64,
    /// Where the compiled code came from: `off`, `miss`, `hit`, or `rebuilt`.
    pub compile_cache: CacheOutcome,
    pub instantiate_ms: f64,
    pub sampling_ms: f64,
    /// What `run(count, seed)` returned (as the guest typed it: i64 for
    /// core modules, u64 for components); absent for programs, which return
    /// nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checksum: Option<Checksum>,
    /// `bench.pause` calls per sample (median), and in all.
    pub pauses_per_sample: u64,
    pub pauses_total: u64,
    /// Program workloads: compile, instantiate and execute phases.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phases: Option<Phases>,
    /// Wasm instructions per op (fuel), with `--metric instructions`.
    pub fuel_per_op: Option<f64>,
    /// True when the per-op time cannot be told apart from the empty guest.
    pub indistinguishable_from_empty: bool,
    /// True when, besides, time does not grow with the count: the row does
    /// no measurable work (as the bundled empty guests, the instrument's own
    /// baselines, do by design).
    pub no_measurable_work: bool,
    /// Whether sampling stopped because the precision goal was met.
    pub precision_reached: bool,
    /// Plain-words warnings about this row: what a reader may have to act
    /// on.
    pub notes: Vec<String>,
    /// Plain-words facts about this row that need no action (where the
    /// compiled code came from): in the JSON and the HTML report, not in the
    /// terminal.
    pub info: Vec<String>,
    /// Worker processes the samples come from.
    pub processes: usize,
    /// The median per-op time of each process, in ns.
    pub process_medians_ns: Vec<f64>,
    /// Standard deviation of the process medians, in percent of the median.
    #[serde(deserialize_with = "nan_if_null")]
    #[schemars(with = "Option<f64>")]
    pub between_process_sd_pct: f64,
    /// Run-to-run drift measured on this machine (relative sd of a run's
    /// median over earlier runs, in percent), added to the interval at
    /// Student's t; null while there were too few earlier runs.
    #[serde(default)]
    pub run_drift_pct: Option<f64>,
    /// How many earlier runs that drift was measured over (0: none).
    #[serde(default)]
    pub run_drift_runs: usize,
    /// How far this run's median lies from the median of the earlier runs
    /// of the same benchmark on this machine, in percent; null while there
    /// were too few of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earlier_runs_departure_pct: Option<f64>,
    /// Callgrind's counts per op (a program: per timed region), with
    /// `--metric cycles-est`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callgrind: Option<CallgrindCounts>,
    /// The CPU's hardware counters per op, with `--metric counters` where
    /// the kernel gives them (otherwise a note says why not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware_counters: Option<HardwareCounts>,
    /// Raw samples: time of one call in ns, block by block.
    pub raw_samples_ns: Vec<Vec<f64>>,
    /// Per-op time of each epoch the row stands on, after subtraction,
    /// block by block (the statistics above; `epochs_disturbed` counts
    /// those left out).
    #[serde(alias = "samples_ns_per_op")]
    pub epochs_ns_per_op: Vec<Vec<f64>>,
    /// Tukey class of every epoch, in order.
    #[serde(alias = "sample_classes")]
    pub epoch_classes: Vec<OutlierClass>,
    /// The fixed cost of a call as each pair of calls at counts m and 2m
    /// measured it, 2·T(m) − T(2m) in ns; for a short call, as each epoch
    /// measured it from its own calls at the count and at twice it.
    #[serde(alias = "baseline_calls_ns")]
    pub fixed_costs_ns: Vec<f64>,
}

/// A value returned by `run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Checksum {
    Signed(i64),
    Unsigned(u64),
}

impl Checksum {
    pub fn new(kind: Kind, bits: u64) -> Self {
        match kind {
            Kind::Component => Checksum::Unsigned(bits),
            Kind::Module | Kind::Program => Checksum::Signed(bits as i64),
        }
    }
}

/// One variant against the reference.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Comparison {
    pub variant: String,
    pub reference: String,
    /// What the ratio is of: "time" or "instructions".
    pub metric: String,
    /// Per-op time (or instructions) of the variant over the reference's,
    /// with its interval.
    #[serde(flatten)]
    pub ratio: Ratio,
    /// Confidence of this interval: 0.95 for one comparison; with k, 1 −
    /// 0.05/k, so that the k intervals hold together at 95% (Bonferroni).
    #[serde(default = "default_confidence")]
    pub confidence: f64,
    /// The smallest effect the comparison could see when it stopped: the
    /// half-width of the interval, in percent of the ratio.
    #[serde(default, deserialize_with = "nan_if_null")]
    #[schemars(with = "Option<f64>")]
    pub mde_pct: f64,
    pub verdict: Verdict,
    /// The verdict in plain words.
    pub text: String,
}

fn default_confidence() -> f64 {
    0.95
}

impl CompareReport {
    /// The noise band the verdicts were read against.
    pub fn noise_band(&self) -> NoiseBand {
        NoiseBand::from_width_pct(self.noise_pct).unwrap_or_default()
    }
}

/// Everything one `host compare` produced.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CompareReport {
    pub tool: Tool,
    pub environment: Environment,
    pub reference: String,
    /// Width of the noise band in percent (`--noise`): ratios within ±half
    /// of it are "same".
    pub noise_pct: f64,
    /// The shared count of operations per sample.
    pub count: u64,
    pub rounds: usize,
    pub sampling_ms: f64,
    /// Each variant's own figures, as in `host run`.
    pub variants: Vec<BenchResult>,
    pub comparisons: Vec<Comparison>,
    /// With `--profile`: each variant's profile, and what changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<ProfileReport>,
}

/// How the warm-up went.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Warmup {
    pub elapsed_ms: f64,
    pub settled: bool,
    pub rounds: usize,
    /// Per-op estimate (raw, overhead included) of the settled rounds, in
    /// ns; `None` when the warm-up does not estimate one (programs).
    pub per_op_ns: Option<f64>,
}

/// Everything measured for one benchmark, before statistics.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Measurement {
    pub count: u64,
    pub warmup: Warmup,
    /// Raw samples, block by block: time of one call, in ns.
    pub blocks: Vec<Vec<f64>>,
    /// Pauses in each sample (the same layout as `blocks`); empty when the
    /// workload never paused.
    pub pauses: Vec<Vec<u64>>,
    /// Calls at twice the count taken among the samples of a short call
    /// (see [`crate::benchmark::sequence::Blocks`]), block by block: the
    /// index of the sample each came before, and its time less its pauses,
    /// in ns. Empty for longer calls, whose fixed cost is measured in pairs
    /// before each block.
    #[serde(default)]
    pub doubles: Vec<Vec<(usize, f64)>>,
    /// The fixed cost of a call, in ns: 2·T(m) − T(2m) of every pair of
    /// fixed-cost calls, or, with `doubles`, of every epoch's calls.
    pub fixed_costs_ns: Vec<f64>,
    /// Median of `fixed_costs_ns`: subtracted from every sample that has no
    /// `doubles` to measure it in its own epoch.
    pub fixed_cost_ns: f64,
    pub pause_pair_ns: f64,
    /// The clock's resolution, in ns: per op, one step of it over the count
    /// is the finest difference a sample can show.
    pub clock_resolution_ns: f64,
    /// What the last `run` call returned; `None` for programs.
    pub checksum: Option<u64>,
    pub sampling_ms: f64,
    /// Whether the precision goal was reached (only for the precision rule).
    pub precision_reached: bool,
    /// Whether the pilot stopped at its largest count: time did not grow
    /// with the count.
    pub count_capped: bool,
}

impl Measurement {
    /// Per-op times as measured, block by block.
    pub fn raw_per_op(&self) -> Vec<Vec<f64>> {
        let count = self.count as f64;
        self.blocks
            .iter()
            .map(|b| b.iter().map(|ns| ns / count).collect())
            .collect()
    }

    /// Total pauses over all samples.
    pub fn total_pauses(&self) -> u64 {
        self.pauses.iter().flatten().sum()
    }
}

/// Per-phase statistics.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Phases {
    pub compile_ms: f64,
    pub instantiate_ns: PhaseStats,
    pub execute_ns: PhaseStats,
    pub timed_region: TimedRegion,
    /// Callgrind's counts of one instantiation, with `--metric cycles-est`
    /// (the execute phase's are the row's `callgrind`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instantiate_callgrind: Option<CallgrindCounts>,
}

/// Summary of one phase over the iterations, in ns.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PhaseStats {
    pub median: f64,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    pub samples: usize,
}

/// The three (four with its sign) states of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Faster,
    Slower,
    Same,
    Unsure,
}

impl Verdict {
    /// Whether more samples could still change the verdict for the better.
    pub fn is_certain(self) -> bool {
        self != Verdict::Unsure
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Same => "same",
            Verdict::Unsure => "unsure",
        })
    }
}

/// A ratio of per-op times (variant / reference, or now / then) with its
/// interval: the one shape of every comparison's result. Unknown values
/// (JSON has no NaN) are written as null.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Ratio {
    #[serde(rename = "ratio", deserialize_with = "nan_if_null")]
    #[schemars(with = "Option<f64>")]
    pub value: f64,
    #[serde(rename = "ci95_low", deserialize_with = "nan_if_null")]
    #[schemars(with = "Option<f64>")]
    pub low: f64,
    #[serde(rename = "ci95_high", deserialize_with = "nan_if_null")]
    #[schemars(with = "Option<f64>")]
    pub high: f64,
}

impl Ratio {
    /// A ratio known exactly (deterministic counts): the interval is the
    /// point.
    pub fn exact(value: f64) -> Self {
        Ratio {
            value,
            low: value,
            high: value,
        }
    }
}

/// Where a sample falls against Tukey's fences.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutlierClass {
    LowSevere,
    LowMild,
    NotAnOutlier,
    HighMild,
    HighSevere,
}

/// Counts of outliers by Tukey's fences (1.5×IQR mild, 3×IQR severe), plus the fences themselves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Outliers {
    pub low_severe: usize,
    pub low_mild: usize,
    pub high_mild: usize,
    pub high_severe: usize,
    /// q1 - 3 IQR, q1 - 1.5 IQR, q3 + 1.5 IQR, q3 + 3 IQR
    pub fences: [f64; 4],
}

impl Outliers {
    /// All outliers, mild and severe, low and high.
    pub fn total(&self) -> usize {
        self.low_severe + self.low_mild + self.high_mild + self.high_severe
    }

    /// No samples: zero counts and NaN fences.
    pub fn empty() -> Self {
        Outliers {
            low_severe: 0,
            low_mild: 0,
            high_mild: 0,
            high_severe: 0,
            fences: [f64::NAN; 4],
        }
    }
}

/// A complexity class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Complexity {
    #[serde(rename = "O(1)")]
    Constant,
    #[serde(rename = "O(log n)")]
    Logarithmic,
    #[serde(rename = "O(n)")]
    Linear,
    #[serde(rename = "O(n log n)")]
    Linearithmic,
    #[serde(rename = "O(n^2)")]
    Quadratic,
}

impl Complexity {
    pub const ALL: [Complexity; 5] = [
        Complexity::Constant,
        Complexity::Logarithmic,
        Complexity::Linear,
        Complexity::Linearithmic,
        Complexity::Quadratic,
    ];

    /// g(n) of this class.
    pub fn g(self, n: f64) -> f64 {
        match self {
            Complexity::Constant => 1.0,
            Complexity::Logarithmic => n.log2(),
            Complexity::Linear => n,
            Complexity::Linearithmic => n * n.log2(),
            Complexity::Quadratic => n * n,
        }
    }
}

impl fmt::Display for Complexity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Complexity::Constant => "O(1)",
            Complexity::Logarithmic => "O(log n)",
            Complexity::Linear => "O(n)",
            Complexity::Linearithmic => "O(n log n)",
            Complexity::Quadratic => "O(n^2)",
        })
    }
}

/// One candidate fit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Candidate {
    pub class: Complexity,
    /// Time per op = coefficient · g(n), in ns.
    #[serde(deserialize_with = "nan_if_null")]
    #[schemars(with = "Option<f64>")]
    pub coefficient: f64,
    /// RMS of the residuals relative to the mean time (0.05 is 5%).
    #[serde(deserialize_with = "nan_if_null")]
    #[schemars(with = "Option<f64>")]
    pub rms: f64,
}
