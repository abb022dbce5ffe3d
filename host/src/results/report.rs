//! The reports: a run's ([`RunReport`]) and a comparison's
//! ([`CompareReport`]), with the environment they were measured in, their
//! rows, the suite's summary and the complexity fits.

use std::fmt;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::guest::Kind;
use crate::options::{EngineConfig, NoiseBand, SeedRule};
use crate::results::comparison::{BaselineComparison, Comparison, ProfileReport, Ratio};
use crate::results::figures::Figures;
use crate::results::json::nan_if_null;
use crate::util::foreign::Foreign;

/// Transparent huge pages for the linear memories of `run(count, seed)`
/// workloads (`--huge-pages`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HugePages {
    /// Whether each workload's linear memories asked for them
    /// (`madvise(MADV_HUGEPAGE)`).
    pub asked: bool,
    /// The kernel's mode (`/sys/kernel/mm/transparent_hugepage/enabled`):
    /// `always` (backed whether asked or not), `madvise` (only when asked)
    /// or `never`; absent where it cannot be read.
    pub kernel_mode: Option<String>,
}

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
    pub baseline: Option<Foreign>,
    /// Where the results were saved (`--save-baseline`), if they were.
    pub saved_baseline: Option<Foreign>,
    /// Why the run stopped before measuring every row (Ctrl-C).
    pub stopped: Option<Foreign>,
    /// Over the rows, when there were at least two.
    #[serde(default)]
    pub suite: Option<SuiteSummary>,
    /// With several `--engine`: the rows read across the engines, each
    /// benchmark's engines against the reference engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtimes: Option<crate::results::RuntimeView>,
    /// The shards (`--shard K/N`) whose rows this report holds: one for a
    /// sharded run, several for a merge of shards, none for a whole run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<crate::options::Shard>,
    /// The exports this report was merged from (`host report A.json
    /// B.json ...`), each with its own environment (seed, busy machine,
    /// CPU); empty for one run's report, whose environment is
    /// `environment`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<MergedExport>,
}

/// One export of a merged report: where it was read, its rows and the
/// environment they were measured in.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MergedExport {
    /// The file it was read from.
    pub path: Foreign,
    /// The names of its rows.
    pub rows: Vec<Foreign>,
    pub environment: Environment,
}

/// A suite's rows taken together.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SuiteSummary {
    pub rows: usize,
    pub measured: usize,
    pub failed: usize,
    /// Geometric mean of the medians per op, in ns, of the rows with
    /// measurable work (a program's op is its execute time); a row of no
    /// measurable work (its interval reaches the empty guest's) is never
    /// in it. Null when no row is.
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

/// The complexity fit of one benchmark over its sizes.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ComplexityResult {
    /// `file` or `file:benchmark`.
    pub benchmark: Foreign,
    pub path: Foreign,
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
    pub name: Foreign,
    pub version: Foreign,
}

impl Tool {
    /// The name every export of this tool carries.
    pub const NAME: &str = "wasm-bench";

    pub fn this() -> Self {
        Tool {
            name: Foreign::new(Self::NAME),
            version: Foreign::new(env!("CARGO_PKG_VERSION")),
        }
    }
}

/// What a worker measured of the clock and the timed path before it
/// measured anything: one declaration for what the worker sends
/// ([`crate::benchmark::protocol::Found`]) and the report's environment
/// keeps (its fields sit among the environment's in the JSON).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema)]
pub struct CalibrationFigures {
    /// The smallest step seen between two successive clock reads, in ns.
    pub clock_resolution_ns: f64,
    /// The cost of one clock read, in ns.
    pub clock_overhead_ns: f64,
    /// One call of the empty core module through the timed path, in ns.
    pub empty_call_ns: f64,
    /// A pause/resume pair in a core module, in ns (subtracted per pause).
    pub pause_pair_ns: f64,
    /// The same two figures for components, when any were measured.
    pub empty_component_call_ns: Option<f64>,
    pub component_pause_pair_ns: Option<f64>,
    /// Target duration of one sample, in ms, as calibration raised it.
    pub sample_time_ms: f64,
}

/// Where and how the measurements were taken.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Environment {
    /// The core the measuring thread was pinned to; null when not pinned.
    pub pinned_core: Option<usize>,
    /// Why that core, when the host chose it (the quietest by load).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_choice: Option<Foreign>,
    /// What interrupted the measuring core while `host run` watched it
    /// before measuring (gaps between back-to-back clock reads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interruptions: Option<crate::platform::gaps::Interruptions>,
    /// Each core's load over a short watch before the run (empty where it
    /// could not be read).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub core_loads: Vec<crate::platform::load::CoreLoad>,
    /// Whether the machine was busy before the run: the measuring core, or
    /// every core, busy with other work, or the measuring core shared with
    /// it as its watch saw. Such a run may not repeat; every row says so and
    /// its interval spans its processes' medians.
    #[serde(default)]
    pub busy_machine: bool,
    /// Cores available to the process.
    pub cores: usize,
    /// Scheduler and priority of the measuring thread, e.g. `nice -20 (SCHED_OTHER)`.
    pub priority: Foreign,
    /// The clock and the empty guests' calls, as the worker found them.
    #[serde(flatten)]
    pub calibration: CalibrationFigures,
    /// The run's seed.
    pub seed: u64,
    /// Whether every `run` call got a seed of its own derived from the run's
    /// seed and the call's index (`per_call`), or the run's seed (`same`).
    #[serde(default)]
    pub seed_rule: SeedRule,
    /// Whether programs read the system's wall clock (`--real-clock`)
    /// rather than the host's stepped one.
    #[serde(default)]
    pub real_clock: bool,
    /// Run-to-run drift added to every interval (relative standard deviation, %).
    pub drift_pct: f64,
    pub cpu_model: Option<Foreign>,
    /// How code was compiled, per `--engine`.
    pub engines: Vec<EngineConfig>,
    /// Whether compiled code went through the on-disk cache.
    pub compile_cache: Option<Foreign>,
    /// Cap on each instance's memories and tables, in bytes.
    pub max_memory_bytes: u64,
    /// Whether the linear memories of `run(count, seed)` workloads asked
    /// for transparent huge pages, and what the kernel does with them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub huge_pages: Option<HugePages>,
    /// Deadline of one guest call, in ms.
    pub timeout_ms: f64,
    /// Things asked for and refused (pinning, priority).
    pub warnings: Vec<Foreign>,
    /// Hardware performance counters: "available", or why not.
    #[serde(default)]
    pub pmu: Foreign,
}

impl Environment {
    /// What a line about this run's environment adds when programs read
    /// the system's time of day (`--real-clock`): nothing otherwise.
    pub fn clock_note(&self) -> &'static str {
        match self.real_clock {
            true => " · programs read the system's time of day",
            false => "",
        }
    }
}

/// One row: a benchmark that was measured, or one that failed.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct BenchResult {
    /// `file` or `file:benchmark`, followed by `/size` when sizes were given.
    pub name: Foreign,
    /// `file` or `file:benchmark`.
    pub benchmark: Foreign,
    /// The size passed to `setup`, when sizes were given.
    pub size: Option<u64>,
    /// The engine, when several are measured (`--engine`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<Foreign>,
    pub path: Foreign,
    pub kind: Option<Kind>,
    /// Why it failed, on one line; absent when it was measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Foreign>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub figures: Option<Figures>,
    /// Against the saved baseline, with `--baseline`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineComparison>,
    /// What the drift between runs files it under (kept with the run, not
    /// exported).
    #[serde(skip)]
    #[schemars(skip)]
    pub subject: Option<String>,
    /// The module measured, to keep with the run (not exported).
    #[serde(skip)]
    #[schemars(skip)]
    pub module: Option<crate::results::modules::Module>,
}

impl BenchResult {
    /// Whether it is the control's row (`host run --control`): the
    /// machine's, left out of the suite's summary.
    pub fn is_control(&self) -> bool {
        self.benchmark == crate::guest::control::CONTROL_NAME
    }

    /// The row's name without its engine: `benchmark`, or `benchmark/size`.
    pub fn name_across_engines(&self) -> Foreign {
        match self.size {
            Some(size) => self.benchmark.map(|b| format!("{b}/{size}")),
            None => self.benchmark.clone(),
        }
    }

    pub fn failed(row: &Row, kind: Option<Kind>, error: impl Into<Foreign>) -> Self {
        BenchResult {
            name: Foreign::new(&*row.name),
            benchmark: Foreign::new(&*row.benchmark),
            size: row.size,
            engine: row.engine.as_deref().map(Foreign::from),
            path: Foreign::new(row.path.display().to_string()),
            kind,
            error: Some(error.into()),
            figures: None,
            baseline: None,
            subject: None,
            module: None,
        }
    }

    pub fn measured(row: &Row, kind: Kind, figures: Figures) -> Self {
        BenchResult {
            name: Foreign::new(&*row.name),
            benchmark: Foreign::new(&*row.benchmark),
            size: row.size,
            engine: row.engine.as_deref().map(Foreign::from),
            path: Foreign::new(row.path.display().to_string()),
            kind: Some(kind),
            error: None,
            figures: Some(figures),
            baseline: None,
            subject: None,
            module: None,
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

/// Everything one `host compare` produced.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CompareReport {
    pub tool: Tool,
    pub environment: Environment,
    pub reference: Foreign,
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
    /// Why the comparison stopped before its verdicts were certain
    /// (Ctrl-C, SIGTERM or SIGHUP): the rounds are those taken so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// Whether sampling stopped at its time cap (`--time`, or the
    /// benchmark's share of a suite's `--suite-time`) with a verdict still
    /// unsure: more time could settle it.
    #[serde(default)]
    pub capped: bool,
    /// When `capped`: about how much more sampling, in ms, would make its
    /// verdicts certain, were its rounds to come spread as they have, each
    /// as long as those so far (its workers' start spread over them): an
    /// estimate from the rounds' own spread. Absent for a close call (a
    /// ratio inside the noise band, which more rounds settle only by
    /// narrowing its interval) and past ten times its rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_certain_ms: Option<f64>,
}

impl CompareReport {
    /// The noise band the verdicts were read against.
    pub fn noise_band(&self) -> NoiseBand {
        NoiseBand::from_width_pct(self.noise_pct).unwrap_or_default()
    }
}
