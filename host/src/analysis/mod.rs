//! The analysis stage: what the numbers mean. Pure arithmetic over samples,
//! deterministic (bootstraps take a seed), no I/O and no clocks.
//!
//! - [`stats`]: quantiles, Tukey outliers, err%, the block bootstrap;
//! - [`epochs`]: the correction (a call's fixed cost, pause pairs), epoch
//!   by epoch;
//! - [`estimate`]: which epochs a row's time stands on, and its interval;
//! - [`interval`]: a row's two intervals, this run's and a later run's;
//! - [`groups`]: whether a row's processes fall into separate groups;
//! - [`summary`]: the figures of a row and its notes;
//! - [`verdict`]: ratios with intervals, and the verdict against the noise
//!   band;
//! - [`compare`]: verdicts of interleaved variants;
//! - [`baseline`]: a row against a saved baseline;
//! - [`drift`]: run-to-run drift measured from the run history;
//! - [`gate`]: the regression gate over the history's series;
//! - [`complexity`]: per-op time fitted against input size;
//! - [`cost`]: Callgrind's counts per op and the cycle estimate;
//! - [`profile`]: functions' weights in a profile, and what changed;
//! - [`suite`]: geometric means over the rows of a suite;
//! - [`few_rounds`]: a suite's intervals on too few rounds for the sign
//!   test, made from the spread of such rounds pooled over the suite;
//! - [`one_process`]: a suite's one-process intervals widened by how far
//!   its processes part;
//! - [`runtimes`]: a run's rows read across its engines.
//!
//! The benchmark stage asks it when to stop (the precision rule, compare's
//! verdicts); results are made from what it returns.

pub mod baseline;
pub mod changes;
pub mod compare;
pub mod complexity;
pub mod cost;
pub mod drift;
pub mod epochs;
pub mod estimate;
pub mod few_rounds;
#[cfg(test)]
pub(crate) mod fixtures;
pub mod gate;
pub mod groups;
pub mod interval;
pub mod one_process;
pub mod profile;
pub mod runtimes;
pub mod stats;
pub mod suite;
pub mod summary;
pub mod trend;
pub mod verdict;
