//! What `host compare` gives for a suite ([`SuiteComparison`]): per
//! benchmark the comparison of its sides (the engines, or the paths given)
//! or why it failed, the names that could not be paired, and the summary
//! over the suite. Plain data: [`crate::analysis::suite`] makes the summary.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::options::NoiseBand;
use crate::results::comparison::{Comparison, Ratio};
use crate::results::report::{CompareReport, Environment, Tool};
use crate::util::foreign::Foreign;

/// Everything one `host compare` of a suite produced.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SuiteComparison {
    pub tool: Tool,
    /// The environment of the first benchmark compared (every benchmark's
    /// report has its own); null when none was.
    pub environment: Option<Environment>,
    /// What each benchmark is compared across, in order: the engines
    /// (`--engine`), the paths given, or both (`path[engine]`).
    pub sides: Vec<Foreign>,
    /// The side the others are compared with: the first.
    pub reference: Foreign,
    /// Width of the noise band in percent (`--noise`).
    pub noise_pct: f64,
    /// One entry per benchmark, in the order they were compared.
    pub benchmarks: Vec<SuiteBenchmark>,
    /// Names found under some of the paths only: not compared.
    pub unpaired: Vec<Unpaired>,
    pub summary: SuiteVerdicts,
    /// Why the suite stopped before comparing every benchmark (Ctrl-C).
    pub stopped: Option<Foreign>,
    /// When the sides are engines: the suite read across them, each
    /// benchmark's engines against the reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtimes: Option<crate::results::RuntimeView>,
    /// How long the whole suite took, in ms: loading, compiling,
    /// measuring and judging every benchmark.
    #[serde(default)]
    pub elapsed_ms: f64,
    /// The suite's whole time (`--suite-time`) in ms, shared out among its
    /// benchmarks; absent without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite_time_ms: Option<f64>,
}

/// One benchmark of the suite: its comparison, or why it failed.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SuiteBenchmark {
    pub name: Foreign,
    /// Its file under each path given, in order (one file when the sides
    /// are engines).
    pub paths: Vec<Foreign>,
    /// Why it could not be compared, on one line; absent when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Foreign>,
    /// Set instead of `error` when a side's engine cannot run it (a
    /// proposal or feature that engine lacks, such as GC under winch):
    /// the engine's own words. Not a failure of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsupported: Option<Foreign>,
    /// Why its comparison, though made, is left out of the verdicts and
    /// the geometric means (a side whose per-op time cannot be told apart
    /// from the empty guest's, so that its ratio means nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_judged: Option<Foreign>,
    /// The comparison of its sides, as `host compare` reports one: its
    /// `comparisons` are the sides after the first, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<CompareReport>,
    /// Its time in the suite, from the start of its load to its verdicts,
    /// over every pass (its workers' part is its report's `sampling_ms`);
    /// 0 in reports written before it was kept.
    #[serde(default)]
    pub elapsed_ms: f64,
    /// The passes it was compared in: 2 or more when `--suite-time` had
    /// time left to take its verdicts, open after the first, further (the
    /// second pass goes over those still open again while time is left);
    /// 0 in reports written before it was kept.
    #[serde(default)]
    pub passes: u32,
    /// The sides left out of its comparison, each with why: with three
    /// sides or more, a side after the first that cannot run it (its
    /// engine lacks a proposal) or fails on it (a call past `--timeout`)
    /// is left out, and the others are compared without it. Its report
    /// then has no variant and no comparison of those sides.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<LeftOut>,
    /// Why a worker failed after others of its comparison had compared (a
    /// call past `--timeout` in a slower process, a trap only some runs
    /// meet): its report is what the workers before that one took, and it
    /// was taken no further. A failure of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_later: Option<Foreign>,
    /// When its comparison was made in one worker process: per comparison,
    /// in its report's order, how far, in percent (a standard deviation
    /// of log ratios), the suite's benchmarks compared in three processes
    /// or more read apart from one process to the next on that side, by
    /// which its interval was widened (`crate::analysis::one_process`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub widened_pct: Vec<f64>,
}

/// How far one side's processes (or its rounds) read apart in a suite:
/// the spread its verdicts of one process are widened by (or their
/// intervals on few rounds made from).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SideSpread {
    pub side: Foreign,
    /// A standard deviation of per-process (or per-round) log ratios to
    /// the reference, in percent.
    pub pct: f64,
    /// Whether it is measured on the side's own benchmarks; `false`: on
    /// every side's, its own being too few.
    pub own: bool,
}

/// A side left out of a benchmark's comparison, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LeftOut {
    pub side: Foreign,
    /// Its error on one line, in the engine's own words.
    pub why: Foreign,
    /// Whether its engine cannot run the benchmark (a proposal it lacks):
    /// not a failure of the run, as a benchmark `unsupported`.
    pub unsupported: bool,
}

impl SuiteBenchmark {
    /// Its comparison, when it counts among the verdicts.
    pub fn judged(&self) -> Option<&CompareReport> {
        self.report.as_ref().filter(|_| self.not_judged.is_none())
    }

    /// The fewest worker processes any of its sides' figures come from,
    /// when it is judged.
    pub fn processes(&self) -> Option<usize> {
        let variants = self.judged()?.variants.iter();
        variants
            .filter_map(|v| Some(v.figures.as_ref()?.processes.processes))
            .min()
    }

    /// Whether it is judged on the rounds of a single worker process:
    /// its own interval cannot see how far another process would read
    /// apart (a suite widens it: `widened_pct`).
    pub fn one_process(&self) -> bool {
        self.processes() == Some(1)
    }

    /// Whether its comparison, judged, stopped at its time with a verdict
    /// still open (a benchmark not judged has no verdict to settle).
    pub fn capped(&self) -> bool {
        self.judged().is_some_and(|r| r.capped)
    }

    /// For each variant of its report, in order, the index among `sides`
    /// (the suite's) of the side it measures: every side but those left
    /// out.
    pub fn variant_sides(&self, sides: &[Foreign]) -> Vec<usize> {
        let left_out = |side: &Foreign| self.left_out.iter().any(|l| l.side == *side);
        (sides.iter().enumerate())
            .filter(|(_, side)| !left_out(side))
            .map(|(k, _)| k)
            .collect()
    }

    /// Its judged comparisons, each with the index among `sides` of the
    /// side compared with the reference; none when it is not judged.
    pub fn compared<'a>(
        &'a self,
        sides: &[Foreign],
    ) -> impl Iterator<Item = (usize, &'a Comparison)> + 'a {
        let after_first = self.variant_sides(sides).into_iter().skip(1);
        let comparisons = self.judged().into_iter().flat_map(|r| &r.comparisons);
        after_first.zip(comparisons)
    }
}

/// A benchmark name that not every path holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Unpaired {
    pub name: Foreign,
    /// The paths given that hold it.
    pub found_in: Vec<Foreign>,
}

/// The suite taken together. The counts are of comparisons: one per
/// benchmark and side after the first.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct SuiteVerdicts {
    pub faster: usize,
    pub slower: usize,
    pub same: usize,
    pub unsure: usize,
    /// Benchmarks that failed (an error instead of a comparison).
    pub failed: usize,
    /// Benchmarks that a side's engine cannot run (`unsupported`).
    #[serde(default)]
    pub unsupported: usize,
    /// Benchmarks whose sampling stopped at their time with a verdict
    /// still open (their report's `capped`).
    #[serde(default)]
    pub capped: usize,
    /// Sides left out of a benchmark's comparison because their engine
    /// cannot run it (`left_out`, `unsupported`), over every benchmark.
    #[serde(default)]
    pub sides_unsupported: usize,
    /// Sides left out of a benchmark's comparison because they failed on
    /// it (`left_out`, not `unsupported`): a failure of the run.
    #[serde(default)]
    pub sides_failed: usize,
    /// Benchmarks whose report is what their first workers took, a later
    /// worker having failed (`failed_later`): a failure of the run.
    #[serde(default)]
    pub failed_later: usize,
    /// Benchmarks judged on the rounds of one worker process (under
    /// `--suite-time`, a long program's first look), whose own intervals
    /// cannot see how far another process would read apart.
    #[serde(default)]
    pub one_process: usize,
    /// Per side after the first, how far its processes read apart: the
    /// spread that widens its verdicts of one process (their
    /// `widened_pct`); empty when no benchmark was compared in three
    /// processes or more.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spreads: Vec<SideSpread>,
    /// Benchmarks with a comparison on too few rounds of one process for
    /// the sign test (a comparison's `few_rounds`): a long program's two
    /// rounds under `--suite-time`.
    #[serde(default)]
    pub few_rounds: usize,
    /// Per side after the first, how far its rounds of such comparisons
    /// part, pooled over the suite: the spread their intervals are made
    /// from; empty when too few rounds were pooled for one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round_spreads: Vec<SideSpread>,
    /// Benchmarks compared but not judged (`not_judged`).
    pub not_judged: usize,
    /// Names not compared because not every path holds them.
    pub unpaired: usize,
    /// Per side after the first: the geometric mean of its ratios to the
    /// reference over the benchmarks compared.
    pub geometric_means: Vec<SuiteRatio>,
}

/// The geometric mean of one side's ratios over the suite.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SuiteRatio {
    pub side: Foreign,
    pub reference: Foreign,
    /// Benchmarks with a ratio in the mean.
    pub benchmarks: usize,
    /// Geometric mean of side / reference, with its interval at
    /// `confidence` (benchmarks taken as independent).
    #[serde(flatten)]
    pub ratio: Ratio,
    pub confidence: f64,
    /// Against the earlier runs of the same suite, sides and engines kept
    /// on this machine in the last day: where a later run's geometric mean
    /// may land. Absent when no store was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub between_runs: Option<BetweenRuns>,
}

/// A suite's geometric mean against the earlier runs of the same suite:
/// the intervals of one run hold its processes and its rounds, not what
/// moves from one hour of the machine to the next, which only separate
/// runs measure ([`crate::analysis::drift`]).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct BetweenRuns {
    /// Earlier runs kept (of the last day, on a machine that was not busy).
    pub earlier_runs: usize,
    /// The relative sd of their geometric means, in percent, once there
    /// are enough of them (5) to tell it.
    pub drift_pct: Option<f64>,
    /// The median of their geometric means, when the drift is told.
    pub earlier_median: Option<f64>,
    /// Where a later run's geometric mean may land: this run's interval
    /// widened in quadrature by t(runs − 1) times the drift on the log
    /// scale, and reaching back to the earlier runs' median when this run
    /// departs from them. Absent while the drift cannot be told.
    pub later_run: Option<Ratio>,
    /// Whether this run's interval and the earlier runs' median (with its
    /// margin) have nothing in common.
    pub departed: bool,
}

impl SuiteComparison {
    /// The noise band the verdicts were read against.
    pub fn noise_band(&self) -> NoiseBand {
        NoiseBand::from_width_pct(self.noise_pct).unwrap_or_default()
    }

    /// The benchmarks that failed, the sides left out of a benchmark's
    /// comparison because they failed, and the benchmarks a later worker
    /// failed on.
    pub fn failures(&self) -> usize {
        let summary = &self.summary;
        summary.failed + summary.sides_failed + summary.failed_later
    }

    /// The benchmarks, and the sides of a benchmark, that an engine
    /// cannot run.
    pub fn unsupported(&self) -> usize {
        self.summary.unsupported + self.summary.sides_unsupported
    }
}
