//! JSON for benchmark dashboards: github-action-benchmark's
//! `customSmallerIsBetter` format.

use serde::Serialize;

use crate::results::{Foreign, RunReport};

/// One entry of github-action-benchmark's custom format.
#[derive(Debug, Serialize)]
struct Entry {
    /// JSON: serde escapes what JSON must.
    name: Foreign,
    unit: &'static str,
    value: f64,
    range: String,
    extra: String,
}

/// The measured rows of `host run` in github-action-benchmark's
/// `customSmallerIsBetter` format
/// (<https://github.com/benchmark-action/github-action-benchmark#examples>):
/// a JSON array with one object per measured row,
///
/// ```json
/// [
///   {
///     "name": "sort.wasm:quick/1000",
///     "unit": "ns/op",
///     "value": 29934.2,
///     "range": "± 41.8",
///     "extra": "samples: 2000, count: 100, err%: 0.61"
///   }
/// ]
/// ```
///
/// - `name`: the row name (`benchmark`, `benchmark/size`, `[engine]` after it);
/// - `value`: the median time per op in ns (after subtracting the fixed cost of a call);
/// - `range`: `± ` and the half-width of the 95% interval of the median, in ns;
/// - `extra`: samples, operations per sample, and err% (median absolute
///   percentage error of the samples).
///
/// Failed rows, and rows whose median is not a finite number, are left out:
/// the action needs a number in `value`. Use it with `tool:
/// 'customSmallerIsBetter'` and `output-file-path` pointing at this file.
pub fn dashboard_run(report: &RunReport) -> String {
    let entries: Vec<Entry> = report
        .results
        .iter()
        .filter_map(|r| {
            let f = r.figures.as_ref()?;
            let ns = &f.ns_per_op;
            if !ns.median.is_finite() {
                return None;
            }
            let half = (ns.ci95_high - ns.ci95_low) / 2.0;
            let range = if half.is_finite() {
                format!("± {}", round_to(half, 4))
            } else {
                "± ?".to_string()
            };
            Some(Entry {
                name: r.name.clone(),
                unit: "ns/op",
                value: ns.median,
                range,
                extra: format!(
                    "samples: {}, count: {}, err%: {:.2}",
                    f.counts.samples, f.counts.count, f.time.err_pct
                ),
            })
        })
        .collect();
    let mut json = serde_json::to_string_pretty(&entries).unwrap_or_else(|_| "[]".to_string());
    json.push('\n');
    json
}

/// `x` to `digits` significant digits, as plain text (`41.83`, `0.002357`).
fn round_to(x: f64, digits: i32) -> String {
    if x == 0.0 {
        return "0".to_string();
    }
    let magnitude = x.abs().log10().floor() as i32;
    let decimals = (digits - 1 - magnitude).max(0) as usize;
    format!("{x:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures;

    #[test]
    fn measured_rows_become_entries_and_failures_are_left_out() -> serde_json::Result<()> {
        let json = dashboard_run(&fixtures::run_report());
        let value: serde_json::Value = serde_json::from_str(&json)?;
        let entries = value.as_array().expect("an array");
        assert_eq!(entries.len(), 1);
        let e = &entries[0];
        assert_eq!(e["name"], "xor.wasm");
        assert_eq!(e["unit"], "ns/op");
        assert_eq!(e["value"], 1234.5);
        assert_eq!(e["range"], "± 5.000");
        assert_eq!(e["extra"], "samples: 100, count: 1000, err%: 0.52");
        let keys: Vec<&String> = e.as_object().expect("an object").keys().collect();
        assert_eq!(keys.len(), 5);
        Ok(())
    }

    #[test]
    fn non_finite_medians_are_left_out_and_empty_is_an_array() -> serde_json::Result<()> {
        let mut report = fixtures::run_report();
        if let Some(f) = report.results[0].figures.as_mut() {
            f.ns_per_op.median = f64::NAN;
        }
        let value: serde_json::Value = serde_json::from_str(&dashboard_run(&report))?;
        assert_eq!(value, serde_json::json!([]));
        Ok(())
    }

    #[test]
    fn ranges_keep_four_significant_digits() {
        assert_eq!(round_to(41.8349, 4), "41.83");
        assert_eq!(round_to(0.0023571, 4), "0.002357");
        assert_eq!(round_to(123456.7, 4), "123457");
        assert_eq!(round_to(0.0, 4), "0");
    }
}
