//! The runtime view of a run measured under several engines: benchmarks
//! down, engines across, each cell an engine's median and its ratio to
//! the reference engine, the fastest engine per benchmark, and per engine
//! the geometric mean of its ratios. Plain data, made by
//! [`crate::analysis::runtimes`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::results::json::nan_if_null;
use crate::results::{BenchResult, Ratio};
use crate::util::foreign::Foreign;

/// A run's rows read across its engines.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RuntimeView {
    /// The engines, in the order `--engine` gave them.
    pub engines: Vec<Foreign>,
    /// The engine every ratio is to (`--reference`, or the first `--engine`).
    pub reference: Foreign,
    /// Whether each ratio pairs rounds measured side by side; false for a
    /// run, whose rows are measured in processes of their own, so that a
    /// ratio's interval joins the two rows' intervals of this run as
    /// independent.
    pub paired: bool,
    /// One per benchmark measured under two engines or more, in the run's
    /// order.
    pub benchmarks: Vec<RuntimeBenchmark>,
    /// One per engine, in `engines`' order.
    pub means: Vec<EngineMean>,
}

impl RuntimeView {
    /// The benchmark and the cell `row` fills, when the view has them.
    pub fn cell_of(&self, row: &BenchResult) -> Option<(&RuntimeBenchmark, &RuntimeCell)> {
        let engine = row.engine.as_ref()?;
        let name = row.name_across_engines();
        let benchmark = self.benchmarks.iter().find(|b| b.benchmark == name)?;
        let cell = benchmark.cells.iter().find(|c| c.engine == *engine)?;
        Some((benchmark, cell))
    }

    /// The geometric mean of `engine`.
    pub fn mean_of(&self, engine: &Foreign) -> Option<&EngineMean> {
        self.means.iter().find(|m| m.engine == *engine)
    }
}

/// One benchmark across the engines.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RuntimeBenchmark {
    /// The row's name without its engine (`file`, `file:benchmark`, with
    /// `/size`).
    pub benchmark: Foreign,
    /// One per engine, in the view's order.
    pub cells: Vec<RuntimeCell>,
    /// The engine of the lowest median among the rows of measurable work;
    /// absent when fewer than two have it.
    pub fastest: Option<Foreign>,
    /// The runner-up: the engine of the next lowest median.
    pub runner_up: Option<Foreign>,
    /// The runner-up's median over the fastest's, with its 95% interval:
    /// the fastest is clearly so when the interval's low end is above 1.
    pub margin: Option<Ratio>,
}

impl RuntimeBenchmark {
    /// Whether the fastest engine is faster than the runner-up beyond the
    /// 95% interval.
    pub fn clear(&self) -> bool {
        self.margin.is_some_and(|m| m.low > 1.0)
    }
}

/// One engine's figure for one benchmark.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RuntimeCell {
    pub engine: Foreign,
    /// The row's median per op, in ns; null when it was not measured.
    #[serde(deserialize_with = "nan_if_null")]
    #[schemars(with = "Option<f64>")]
    pub median_ns: f64,
    /// The median over the reference engine's, with its 95% interval;
    /// absent for the reference itself, and when either row has no
    /// measurable work or was not measured.
    pub ratio: Option<Ratio>,
    /// Why there is no figure: the row's error, or that no row ran.
    pub error: Option<Foreign>,
    /// Whether there is no figure because the engine cannot run the
    /// benchmark (a proposal it lacks; `error` is its words): a side of a
    /// suite left out as unsupported, not a failure of the run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unsupported: bool,
    /// How the row's fresh instances started, with ratios to the
    /// reference's (an empty guest's too: its start is work).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<StartCell>,
}

/// An engine's start on one benchmark: each phase's median, in ns, and its
/// ratio to the reference engine's with the 95% interval (absent for the
/// reference itself).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StartCell {
    pub instantiate_ns: f64,
    pub instantiate_ratio: Option<Ratio>,
    pub first_call_ns: f64,
    pub first_call_ratio: Option<Ratio>,
}

/// One engine over the benchmarks.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct EngineMean {
    pub engine: Foreign,
    /// The benchmarks with a ratio under this engine (for the reference:
    /// those another engine has a ratio on).
    pub benchmarks: usize,
    /// The geometric mean of its ratios to the reference with its 95%
    /// interval (the reference's is exactly 1); absent when it has none.
    pub ratio: Option<Ratio>,
    /// The benchmarks on which it is the fastest engine.
    pub fastest: usize,
}
