//! The figures of a measured row ([`Figures`], made by
//! [`crate::analysis`]) in groups (counts, time, warm-up, durations,
//! pauses, processes, drift, series), and the raw [`Measurement`] they are
//! summarised from. Plain data: each group is flattened into the row's JSON
//! object, so the JSON keys are those of one flat object.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::guest::Kind;
use crate::guest::program::TimedRegion;
use crate::guest::runtime::wasmtime::cache::CacheOutcome;
use crate::options::Headline;
use crate::results::json::nan_if_null;
use crate::results::notes::Notes;

/// NaN, the value of an interval end a report of an older version lacks.
fn unknown() -> f64 {
    f64::NAN
}

/// What stopped a row's sampling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The samples, time or processes asked for (`--samples`, `--time`,
    /// `--processes`).
    Asked,
    /// The interval came within `--precision`.
    PrecisionReached,
    /// The row used its time budget first.
    TimeCap,
    /// The row reached the most processes a row takes first.
    IterationCap,
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

    /// Whether the row measured work: a finite, positive median whose
    /// interval is told apart from the empty guest's. The one rule for
    /// what a geometric mean may take (a run's, a merge's, a suite
    /// comparison's): a row of no measurable work has a median that is
    /// noise around 0, whose sign and logarithm mean nothing.
    pub fn measurable_work(&self) -> bool {
        let median = self.ns_per_op.median;
        median.is_finite()
            && median > 0.0
            && !self.indistinguishable_from_empty
            && !self.no_measurable_work
            && !self.at_clock_resolution
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
    /// The 95% interval of the median the row shows (`ci95_shown`): by
    /// default where a later run's median may land
    /// (`ci95_later_run_low/high`), with `--interval this-run` this run's
    /// (`ci95_this_run_low/high`).
    #[serde(deserialize_with = "nan_if_null")]
    #[schemars(with = "Option<f64>")]
    pub ci95_low: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[schemars(with = "Option<f64>")]
    pub ci95_high: f64,
    /// Which interval `ci95_low/high` is.
    #[serde(default)]
    pub ci95_shown: Headline,
    /// 95% interval of this run's median from its worker processes alone:
    /// Student's t over their log medians (a bootstrap of whole processes
    /// for a row on its undisturbed epochs; of blocks with one process),
    /// no further than 10% past the fastest and slowest process.
    #[serde(default = "unknown", deserialize_with = "nan_if_null")]
    #[schemars(with = "Option<f64>")]
    pub ci95_this_run_low: f64,
    #[serde(default = "unknown", deserialize_with = "nan_if_null")]
    #[schemars(with = "Option<f64>")]
    pub ci95_this_run_high: f64,
    /// 95% interval of where a later run's median may land: this run's,
    /// widened on the log scale by the drift measured over earlier runs
    /// (`run_drift_pct`, once there are 5) and by `--drift`
    /// (`environment.drift_pct`), on a busy machine to hold every process's
    /// median, reaching back to the earlier runs' median when this run
    /// departs from them (`earlier_runs_departure_pct`), and no further
    /// than 10% past the fastest and slowest process of this run and of the
    /// earlier runs kept today.
    #[serde(default = "unknown", deserialize_with = "nan_if_null")]
    #[schemars(with = "Option<f64>")]
    pub ci95_later_run_low: f64,
    #[serde(default = "unknown", deserialize_with = "nan_if_null")]
    #[schemars(with = "Option<f64>")]
    pub ci95_later_run_high: f64,
    /// The block-bootstrap interval over all epochs: what the blocks alone
    /// can tell, blind to variation between processes.
    pub ci95_within_run_low: f64,
    pub ci95_within_run_high: f64,
}

/// The figures of a measured benchmark, grouped; each group is flattened
/// into the row's JSON object, so the keys stay where they always were.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Figures {
    /// What a row's statistics are over: the count, samples and epochs.
    #[serde(flatten)]
    pub counts: Counts,
    /// After subtracting the fixed cost of a call (and pause/resume pairs).
    pub ns_per_op: NsPerOp,
    /// The rest of a row's time: before correction, spread, rate, the fixed cost
    /// subtracted, outliers.
    #[serde(flatten)]
    pub time: Time,
    /// How the warm-up went, over every process.
    #[serde(flatten)]
    pub warmup: WarmupFigures,
    /// How long compiling, instantiating and sampling took.
    #[serde(flatten)]
    pub durations: Durations,
    /// What `run(count, seed)` returned (as the guest typed it: i64 for
    /// core modules, u64 for components); absent for programs, which return
    /// nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checksum: Option<Checksum>,
    /// The pauses a workload made.
    #[serde(flatten)]
    pub pauses: Pauses,
    /// Programs: compile, instantiate and execute phases.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phases: Option<Phases>,
    /// How fresh instances start, besides the steady state the per-op
    /// time is (a program: each process's first iteration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Start>,
    /// Wasm instructions per op (fuel), with `--metric instructions`.
    pub fuel_per_op: Option<f64>,
    /// True when the per-op time cannot be told apart from the empty guest.
    pub indistinguishable_from_empty: bool,
    /// True when, besides, time does not grow with the count: the row does
    /// no measurable work (as the bundled empty guests do by design).
    pub no_measurable_work: bool,
    /// A program whose timed region lasts fewer than
    /// [`crate::analysis::summary::PROGRAM_CLOCK_STEPS`] steps of the clock:
    /// its time is the clock's steps, and a ratio of two such times a
    /// quotient of a few steps. It is left out of geometric means and not
    /// judged in a suite.
    #[serde(default)]
    pub at_clock_resolution: bool,
    /// Whether sampling stopped because the precision goal was met.
    pub precision_reached: bool,
    /// What stopped sampling (`host run`): the amount asked for, the
    /// precision reached, the time cap or the iteration cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<StopReason>,
    /// Plain-words warnings about this row: what a reader may have to act
    /// on.
    pub notes: Notes,
    /// Plain-words facts about this row that need no action (where the
    /// compiled code came from): in the JSON and the HTML report, not in the
    /// terminal.
    pub info: Notes,
    /// What the runtime costs besides time: the file's size, the compiled
    /// code's size and the most linear memory, where they are known.
    #[serde(flatten, default)]
    pub costs: Costs,
    /// The worker processes a row's samples come from.
    #[serde(flatten)]
    pub processes: ProcessFigures,
    /// The drift between runs, measured over the run history.
    #[serde(flatten)]
    pub drift: DriftFigures,
    /// Callgrind's counts per op (a program: per timed region), with
    /// `--metric cycles-est`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callgrind: Option<CallgrindCounts>,
    /// The CPU's hardware counters per op, with `--metric counters` where
    /// the kernel gives them (otherwise a note says why not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware_counters: Option<HardwareCounts>,
    /// The numbers a row's statistics come from, in the order taken.
    #[serde(flatten)]
    pub series: Series,
}

/// What a row's statistics are over: the count, samples and epochs.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Counts {
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
}

/// The rest of a row's time: before correction, spread, rate, the fixed cost
/// subtracted, outliers.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Time {
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
}

/// What a runtime costs besides time, per row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Costs {
    /// The workload file's size (the wasm binary, or the native library),
    /// in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module_bytes: Option<u64>,
    /// The compiled machine code's size, in bytes, where the engine exposes
    /// it (wasmtime: the image of the compiled module; wasmer: its
    /// serialized module, the code with its metadata); absent under wasmi
    /// (no machine code), V8 and for native code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_bytes: Option<u64>,
    /// The most linear memory one instance held (the largest over the
    /// processes), in bytes, where the runtime tells (wasmtime and wasmer:
    /// every memory; wasmi and V8: the exported ones); absent for programs
    /// and native code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_memory_bytes: Option<u64>,
    /// Programs: the peak resident memory of the process that ran them
    /// (the largest over the processes), in bytes: the worker's (the host's
    /// own memory with it; its high-water mark is reset before each row, so
    /// that the peak is the row's own), or `node`'s under V8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_bytes: Option<u64>,
}

/// How the warm-up went, over every process.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct WarmupFigures {
    pub warmup_ms: f64,
    pub warmup_settled: bool,
    pub warmup_rounds: usize,
    /// Programs: the processes whose first iteration was timed, not a
    /// warm-up one: it alone outlasted the warm-up's time, lasted at least
    /// 0.5 s, and its runtime does not tier up.
    #[serde(default)]
    pub warmup_first_timed: u32,
}

/// How long compiling, instantiating and sampling took.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Durations {
    pub compile_ms: f64,
    /// Where the compiled code came from: `off`, `miss`, `hit`, or `rebuilt`.
    pub compile_cache: CacheOutcome,
    pub instantiate_ms: f64,
    pub sampling_ms: f64,
}

/// The pauses a workload made.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Pauses {
    /// `bench.pause` calls per sample (median), and in all.
    pub pauses_per_sample: u64,
    pub pauses_total: u64,
}

/// One group of process medians (`process_groups`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProcessGroup {
    /// The least and the greatest median of its processes, ns.
    pub low_ns: f64,
    pub high_ns: f64,
    /// How many processes.
    pub processes: usize,
}

/// The worker processes a row's samples come from.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ProcessFigures {
    /// Worker processes the samples come from.
    pub processes: usize,
    /// The median per-op time of each process, in ns.
    pub process_medians_ns: Vec<f64>,
    /// Standard deviation of the process medians, in percent of the median.
    #[serde(deserialize_with = "nan_if_null")]
    #[schemars(with = "Option<f64>")]
    pub between_process_sd_pct: f64,
    /// How far the slowest process median lies above the fastest, in
    /// percent (null with no positive process median).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_spread_pct: Option<f64>,
    /// The groups the process medians fall into, fastest first: one when
    /// they scatter around one value, more when they cluster apart
    /// (`crate::analysis::groups`).
    #[serde(default)]
    pub process_groups: Vec<ProcessGroup>,
}

/// The drift between runs, measured over the run history.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DriftFigures {
    /// Run-to-run drift measured on this machine (relative sd of a run's
    /// median over earlier runs, in percent), added to a later run's
    /// interval at Student's t on the log scale; null while there were too
    /// few earlier runs (fewer than 5 of this row, and none measured the
    /// same way).
    #[serde(default)]
    pub run_drift_pct: Option<f64>,
    /// How many earlier runs that drift was measured over (0: none).
    #[serde(default)]
    pub run_drift_runs: usize,
    /// How many earlier runs of this row kept today count (not busy, not
    /// forgotten, measured the same way; 0 with `--no-store`).
    #[serde(default)]
    pub earlier_runs: usize,
    /// How far this run's median lies from the median of the earlier runs
    /// of the same benchmark on this machine, in percent; null while there
    /// were too few of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earlier_runs_departure_pct: Option<f64>,
}

/// The numbers a row's statistics come from, in the order taken.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Series {
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
            Kind::Module | Kind::Native | Kind::Program => Checksum::Signed(bits as i64),
        }
    }
}

/// How the warm-up went.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Warmup {
    pub elapsed_ms: f64,
    pub settled: bool,
    pub rounds: usize,
    /// Per-op estimate (raw, overhead included) of the last rounds, or of
    /// the last round when the count was still growing, in ns; `None` when
    /// the warm-up does not estimate one (programs).
    pub per_op_ns: Option<f64>,
    /// Programs: the processes whose first iteration was timed rather than
    /// a warm-up one (it outlasted the warm-up's time under a runtime that
    /// does not tier up: [`crate::benchmark::worker::program::first_counts`]);
    /// 0 or 1 for one process.
    #[serde(default)]
    pub first_timed: u32,
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
    /// (see [`crate::benchmark::worker::sequence::Blocks`]), block by block: the
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

/// How a row starts. A `run(count, seed)` workload: fresh instances made
/// one after another in each process, after its sampling, each
/// instantiated (as the row's own instance was: neither setup nor a
/// compile included) and called once, `run(1, seed)`; that first call is
/// cold as a fresh instance is (memory and tables untouched, lazy parts of
/// the runtime not yet run), not as a cold machine is: the code was run
/// before. A program: the first iteration of each process, its
/// instantiation and its timed region, the first `_start` the process ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Start {
    pub instantiate_ns: StartPhase,
    /// The whole first call, in ns: its fixed cost included, its pauses
    /// not (a program: its timed region).
    pub first_call_ns: StartPhase,
}

/// One phase of [`Start`] over every fresh instance of every process, in
/// ns: the median with a 95% interval that resamples whole processes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StartPhase {
    pub median: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
    pub min: f64,
    pub max: f64,
    /// Fresh instances, over every process (a program: one a process).
    pub samples: usize,
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
