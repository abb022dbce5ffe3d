//! What comparisons produce: one [`Ratio`] with its interval shared by
//! `host compare`'s [`Comparison`]s (with a program's [`PhaseComparison`]s)
//! and the [`BaselineComparison`] of a row, the [`Verdict`], and what
//! profiling compared.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::results::json::nan_if_null;
use crate::util::foreign::Foreign;

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

/// One variant against the reference.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Comparison {
    pub variant: Foreign,
    pub reference: Foreign,
    /// What the ratio is of: "time" or "instructions".
    pub metric: Foreign,
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
    pub text: Foreign,
    /// Programs: the ratio of each phase (execute, the one the verdict above
    /// is; instantiate; compile when both variants time it per iteration),
    /// at the same confidence. Absent for `run(count, seed)` workloads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<PhaseComparison>,
    /// By time, when its interval rests on too few paired rounds, all of
    /// one worker process, for the sign test's (Student's t over them
    /// instead): their log ratios, from which a suite pools the spread of
    /// such rounds. Empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub few_rounds: Vec<f64>,
}

/// A phase of a program's iterations, as a comparison judges it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProgramPhase {
    Compile,
    Instantiate,
    Execute,
}

impl fmt::Display for ProgramPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ProgramPhase::Compile => "compile",
            ProgramPhase::Instantiate => "instantiate",
            ProgramPhase::Execute => "execute",
        })
    }
}

/// One phase of a program variant against the reference's: the ratio of
/// their times in that phase, with its interval and verdict.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PhaseComparison {
    pub phase: ProgramPhase,
    /// The variant's time in this phase over the reference's.
    #[serde(flatten)]
    pub ratio: Ratio,
    /// The half-width of the interval, in percent of the ratio.
    #[serde(default, deserialize_with = "nan_if_null")]
    #[schemars(with = "Option<f64>")]
    pub mde_pct: f64,
    pub verdict: Verdict,
    /// The verdict in plain words.
    pub text: Foreign,
}

fn default_confidence() -> f64 {
    0.95
}

/// A row against the same row of a saved baseline.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct BaselineComparison {
    /// Name of the baseline.
    pub name: Foreign,
    /// What the ratio is of: "time" or "instructions".
    pub metric: Foreign,
    /// Now / then (above 1: slower now), with its 95% interval.
    #[serde(flatten)]
    pub ratio: Ratio,
    pub verdict: Verdict,
    /// The verdict in plain words.
    pub text: Foreign,
    /// Slower by more than `--fail-on-regression` with certainty.
    pub regression: bool,
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

/// One wasm function's weight in a profile: its part of the samples.
// The schema keeps the definition's published name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "FunctionShare")]
pub struct FunctionWeight {
    /// From the module's name section, else `wasm-function[N]`.
    pub name: Foreign,
    /// Samples with it at the top of the stack, in percent.
    pub self_pct: f64,
    /// Samples with it anywhere on the stack, in percent.
    pub total_pct: f64,
}

/// A function's self weight in two profiles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FunctionChange {
    pub name: Foreign,
    pub reference_self_pct: f64,
    pub variant_self_pct: f64,
    /// variant − reference, in percentage points.
    pub change_points: f64,
}

/// The profile of one row.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RowProfile {
    pub name: Foreign,
    /// The profile file (the Firefox Profiler opens it); absent when the
    /// row failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<Foreign>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Foreign>,
    /// Stack samples taken.
    pub samples: usize,
    /// Functions by self weight, largest first.
    pub functions: Vec<FunctionWeight>,
}

/// What profiling gave: a profile per row and, between variants, what
/// changed against the reference.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ProfileReport {
    pub profiles: Vec<RowProfile>,
    /// In a comparison, per variant, the functions whose self weight changed
    /// against the reference, from the largest gain to the largest loss.
    pub changes: Vec<ProfileChanges>,
}

/// A variant's functions against the reference's.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ProfileChanges {
    pub variant: Foreign,
    pub reference: Foreign,
    pub functions: Vec<FunctionChange>,
}
