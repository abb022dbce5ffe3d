//! The components check: the empty component (0 per op), and xor as a
//! component against xor as a core module.

use std::path::Path;

use anyhow::Result;
use serde::Serialize;

use crate::command::selftest::runs::*;
use crate::output::units::format_ns;
use crate::results::{CompareReport, Ratio};

#[derive(Debug, Serialize)]
pub(super) struct Components {
    empty_component_ns_per_op: f64,
    empty_component_ci95: (f64, f64),
    /// xor as a component over xor as a core module, from `host compare`.
    xor_component_vs_module: Ratio,
}

pub(super) fn components(
    empty_component: &Path,
    xor: &Path,
    xor_component: &Path,
) -> Result<Components> {
    let empty = result_row(&run_host(
        &["run"],
        &[empty_component],
        &["--count", "1000"],
    )?)?;
    let (median, low, high) = (
        empty.ns_per_op.median,
        empty.ns_per_op.ci95_low,
        empty.ns_per_op.ci95_high,
    );
    println!(
        "empty component at count 1000: {} per op [{}, {}]",
        format_ns(median),
        format_ns(low),
        format_ns(high)
    );
    let compared: CompareReport = run_host(&["compare"], &[xor, xor_component], &[])?;
    let ratio = comparison_ratio(&compared)?;
    println!(
        "xor as a component against xor as a core module: {:.4}x [{:.4}, {:.4}] ({})",
        ratio.value,
        ratio.low,
        ratio.high,
        first_verdict(&compared)
    );
    Ok(Components {
        empty_component_ns_per_op: median,
        empty_component_ci95: (low, high),
        xor_component_vs_module: ratio,
    })
}
