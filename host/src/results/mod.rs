//! The results stage: plain data, the one contract every output is made
//! from (JSON export, baselines, terminal table, Markdown, CSV, HTML).
//!
//! [`report`]: the run and compare reports, their environment and rows,
//! and complexity fits; [`figures`]: raw measurements and the figures summarised from them;
//! [`comparison`]: ratios and verdicts; [`suite_comparison`]: a suite's
//! comparisons and their summary; [`runtimes`]: a run across its engines; [`json`]: unknown numbers read back; [`notes`]: a
//! row's notes as data. Nothing here measures, computes statistics or
//! words a note; [`baseline`] stores and reads saved reports, [`history`]
//! the medians of earlier runs, [`modules`] the measured modules by content. Every text that came from outside (names,
//! paths, errors, every string read back) is a [`Foreign`].

pub mod baseline;
pub mod comparison;
pub mod figures;
pub mod history;
pub mod json;
pub mod modules;
pub mod notes;
pub mod report;
pub mod runtimes;
pub mod store;
pub mod suite_comparison;

pub use crate::util::foreign::Foreign;
pub use comparison::{
    BaselineComparison, Comparison, FunctionChange, FunctionWeight, PhaseComparison,
    ProfileChanges, ProfileReport, ProgramPhase, Ratio, RowProfile, Verdict,
};
pub use figures::{
    CallgrindCounts, Checksum, Costs, Counts, DriftFigures, Durations, Figures, HardwareCounts,
    Measurement, NsPerOp, OutlierClass, Outliers, Pauses, PhaseStats, Phases, ProcessFigures,
    ProcessGroup, Series, Start, StartPhase, StopReason, Time, Warmup, WarmupFigures, exact_per_op,
};
pub use notes::{Note, Notes};
pub use report::{
    BenchResult, CalibrationFigures, Candidate, CompareReport, Complexity, ComplexityResult,
    Environment, HugePages, MergedExport, Row, RunReport, SuiteSummary, Tool,
};
pub use runtimes::{EngineMean, RuntimeBenchmark, RuntimeCell, RuntimeView, StartCell};
pub use suite_comparison::{
    BetweenRuns, LeftOut, SideSpread, SuiteBenchmark, SuiteComparison, SuiteRatio, SuiteVerdicts,
    Unpaired,
};
