//! The one result type every output is made from: environment, settings and
//! per-benchmark figures, serialisable as JSON.
//!
//! Figures are computed here from a [`Measurement`] and its statistics; the
//! display lives in [`crate::report`], files in [`crate::export`].

use std::path::Path;

use serde::Serialize;

use crate::cache::CacheOutcome;
use crate::complexity::{Candidate, Complexity};
use crate::env::Prepared;
use crate::measure::{Calibration, MAX_COUNT, Measurement, RESAMPLES_FINAL};
use crate::stats::{self, OutlierClass, Outliers};
use crate::verdict::Verdict;
use crate::workload::{EngineConfig, Kind};

/// Everything one `host run` produced.
#[derive(Debug, Clone, Serialize)]
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
    /// Why the run stopped before measuring every row (Ctrl-C, watchdog).
    pub stopped: Option<String>,
}

/// A row against the same row of a saved baseline.
#[derive(Debug, Clone, Serialize)]
pub struct BaselineComparison {
    /// Name of the baseline.
    pub name: String,
    /// What the ratio is of: "time" or "instructions".
    pub metric: String,
    /// Now / then (above 1: slower now).
    pub ratio: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
    pub verdict: Verdict,
    /// The verdict in plain words.
    pub text: String,
    /// Slower by more than `--fail-on-regression` with certainty.
    pub regression: bool,
}

/// The complexity fit of one benchmark over its sizes.
#[derive(Debug, Clone, Serialize)]
pub struct ComplexityResult {
    /// `file` or `file:benchmark`.
    pub benchmark: String,
    pub path: String,
    /// Best fit, e.g. `O(n log n)`.
    pub best: Complexity,
    /// ns per op = coefficient · g(size).
    pub coefficient: f64,
    /// RMS of the residuals relative to the mean.
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

#[derive(Debug, Clone, Serialize)]
pub struct Tool {
    pub name: &'static str,
    pub version: &'static str,
}

impl Tool {
    pub fn this() -> Self {
        Tool {
            name: "wasm-bench",
            version: env!("CARGO_PKG_VERSION"),
        }
    }
}

/// Where and how the measurements were taken.
#[derive(Debug, Clone, Serialize)]
pub struct Environment {
    /// The core the measuring thread was pinned to; null when not pinned.
    pub pinned_core: Option<usize>,
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
    /// The seed passed to every `run` call.
    pub seed: u64,
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
}

impl Environment {
    pub fn new(
        prepared: &Prepared,
        calibration: &Calibration,
        component: Option<&Calibration>,
        seed: u64,
        settings: &crate::settings::Settings,
        sample_time_ms: f64,
    ) -> Self {
        Environment {
            pinned_core: prepared.pinned_core,
            cores: prepared.cores,
            priority: prepared.priority.clone(),
            clock_resolution_ns: calibration.clock.resolution_ns,
            clock_overhead_ns: calibration.clock.overhead_ns,
            empty_call_ns: calibration.empty_call_ns,
            pause_pair_ns: calibration.pause_pair_ns,
            empty_component_call_ns: component.map(|c| c.empty_call_ns),
            component_pause_pair_ns: component.map(|c| c.pause_pair_ns),
            seed,
            drift_pct: settings.drift_pct,
            sample_time_ms,
            engines: settings.engines.clone(),
            compile_cache: settings.cache.as_ref().map(|p| p.display().to_string()),
            max_memory_bytes: settings.max_memory_bytes,
            timeout_ms: settings.timeout.as_secs_f64() * 1e3,
            cpu_model: cpu_model(),
            warnings: prepared.warnings.clone(),
        }
    }
}

fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, model)| model.trim().to_string())
}

/// One row: a benchmark that was measured, or one that failed.
#[derive(Debug, Clone, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Eq)]
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
#[derive(Debug, Clone, Serialize)]
pub struct NsPerOp {
    pub median: f64,
    pub mean: f64,
    pub stddev: f64,
    pub min: f64,
    pub max: f64,
    /// 95% interval of the median: percentile bootstrap over blocks, widened
    /// by the run-to-run drift (`environment.drift_pct`).
    pub ci95_low: f64,
    pub ci95_high: f64,
    /// The bootstrap interval alone: what sampling inside this run can tell.
    pub ci95_within_run_low: f64,
    pub ci95_within_run_high: f64,
}

/// The figures of a measured benchmark.
#[derive(Debug, Clone, Serialize)]
pub struct Figures {
    /// Operations per sample.
    pub count: u64,
    /// Number of samples.
    pub samples: usize,
    /// After subtracting the empty-guest call (and pause/resume pairs).
    pub ns_per_op: NsPerOp,
    /// Median before any subtraction.
    pub raw_ns_per_op_median: f64,
    /// Median absolute percentage error of the per-op samples.
    pub err_pct: f64,
    /// 1e9 / median; null when the median is not positive.
    pub ops_per_sec: Option<f64>,
    /// Median empty-guest call with the same count, subtracted per sample.
    pub baseline_ns_per_call: f64,
    /// Samples outside Tukey's fences (kept, not dropped).
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
    /// core modules, u64 for components).
    pub checksum: Checksum,
    /// `bench.pause` calls per sample (median), and in all.
    pub pauses_per_sample: u64,
    pub pauses_total: u64,
    /// Program workloads: compile, instantiate and execute phases.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phases: Option<crate::program::Phases>,
    /// Wasm instructions per op (fuel), with `--metric instructions`.
    pub fuel_per_op: Option<f64>,
    /// True when the per-op time cannot be told apart from the empty guest.
    pub indistinguishable_from_empty: bool,
    /// Whether sampling stopped because the precision goal was met.
    pub precision_reached: bool,
    /// Plain-words warnings about this row.
    pub notes: Vec<String>,
    /// Raw samples: time of one call in ns, block by block.
    pub raw_samples_ns: Vec<Vec<f64>>,
    /// Per-op samples after subtraction, block by block (the statistics above).
    pub samples_ns_per_op: Vec<Vec<f64>>,
    /// Tukey class of every per-op sample, in order.
    pub sample_classes: Vec<OutlierClass>,
    /// Empty-guest calls with the same count, in ns.
    pub baseline_calls_ns: Vec<f64>,
}

/// A value returned by `run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Checksum {
    Signed(i64),
    Unsigned(u64),
}

impl Checksum {
    pub fn new(kind: Kind, bits: u64) -> Self {
        match kind {
            Kind::Module | Kind::Program => Checksum::Signed(bits as i64),
            Kind::Component => Checksum::Unsigned(bits),
        }
    }
}

/// Timings of the stages before measurement, in ms.
#[derive(Debug, Clone)]
pub struct Stages {
    pub kind: Kind,
    pub compile_ms: f64,
    pub compile_cache: CacheOutcome,
    pub instantiate_ms: f64,
}

impl Figures {
    /// Summarise a measurement.
    pub fn new(
        m: &Measurement,
        stages: Stages,
        warmup_cap_ms: f64,
        seed: u64,
        drift_pct: f64,
    ) -> Self {
        let per_op = m.corrected_per_op();
        let summary = stats::summarize(&per_op, RESAMPLES_FINAL, seed);
        let (ci95_low, ci95_high) = stats::widen_for_drift(
            summary.median,
            summary.ci95_low,
            summary.ci95_high,
            drift_pct / 100.0,
        );
        let raw: Vec<f64> = m.raw_per_op().into_iter().flatten().collect();
        let all: Vec<f64> = per_op.iter().flatten().copied().collect();
        let samples = all.len();
        let pauses: Vec<f64> = m.pauses.iter().flatten().map(|&p| p as f64).collect();
        let pauses_per_sample = if pauses.is_empty() {
            0
        } else {
            stats::median(&pauses) as u64
        };
        // NaN (no samples) counts as indistinguishable too.
        let indistinguishable = ci95_low.is_nan() || ci95_low <= 0.0;

        let mut notes = Vec::new();
        if indistinguishable {
            notes.push("cannot be told apart from the empty guest".to_string());
        }
        if m.count >= MAX_COUNT {
            notes.push(format!(
                "time does not grow with the count (pilot stopped at {MAX_COUNT}): the work may have been optimised away"
            ));
        }
        if !m.warmup.settled {
            notes.push(format!(
                "warm-up did not settle within {warmup_cap_ms:.0} ms"
            ));
        }
        match &stages.compile_cache {
            CacheOutcome::Hit => notes.push(format!(
                "compiled code loaded from the cache in {:.2} ms",
                stages.compile_ms
            )),
            CacheOutcome::Rebuilt(reason) => {
                notes.push(format!("cache entry refused ({reason}): compiled again"))
            }
            CacheOutcome::Off | CacheOutcome::Miss => {}
        }
        if pauses_per_sample > 0 {
            notes.push(format!(
                "{pauses_per_sample} pause(s) per sample; {:.1} ns subtracted per pause/resume pair",
                m.pause_pair_ns
            ));
        }
        if summary.outliers.high_severe + summary.outliers.low_severe > samples / 10 {
            notes.push(format!(
                "{} of {samples} samples are severe outliers: the machine was busy",
                summary.outliers.high_severe + summary.outliers.low_severe
            ));
        }

        Figures {
            count: m.count,
            samples,
            ns_per_op: NsPerOp {
                median: summary.median,
                mean: summary.mean,
                stddev: summary.stddev,
                min: summary.min,
                max: summary.max,
                ci95_low,
                ci95_high,
                ci95_within_run_low: summary.ci95_low,
                ci95_within_run_high: summary.ci95_high,
            },
            raw_ns_per_op_median: stats::median(&raw),
            err_pct: summary.err_pct,
            ops_per_sec: (summary.median > 0.0).then(|| 1e9 / summary.median),
            baseline_ns_per_call: m.baseline_ns_per_call,
            outliers: summary.outliers.total(),
            outlier_counts: summary.outliers.clone(),
            warmup_ms: m.warmup.elapsed_ms,
            warmup_settled: m.warmup.settled,
            warmup_rounds: m.warmup.rounds,
            compile_ms: stages.compile_ms,
            compile_cache: stages.compile_cache.clone(),
            instantiate_ms: stages.instantiate_ms,
            sampling_ms: m.sampling_ms,
            checksum: Checksum::new(stages.kind, m.checksum),
            pauses_per_sample,
            pauses_total: m.total_pauses(),
            phases: None,
            fuel_per_op: None,
            indistinguishable_from_empty: indistinguishable,
            precision_reached: m.precision_reached,
            notes,
            raw_samples_ns: m.blocks.clone(),
            samples_ns_per_op: per_op,
            sample_classes: summary.classes.clone(),
            baseline_calls_ns: m.baseline_calls_ns.clone(),
        }
    }
}
