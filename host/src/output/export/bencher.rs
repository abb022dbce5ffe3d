//! Bencher's metric format (BMF), for collecting results from many machines
//! with Bencher (<https://bencher.dev/docs/reference/bencher-metric-format/>):
//!
//! ```json
//! {
//!   "xor": {
//!     "latency": { "value": 0.25, "lower_value": 0.247, "upper_value": 0.253 }
//!   }
//! }
//! ```
//!
//! One object per measured row, named as the row is. `latency` is the median
//! time per op in ns with the 95% interval of the median as its bounds; with
//! `--metric instructions`, `instructions` is the wasm instructions per op
//! (exact: no bounds). Failed rows and rows without a finite median are left
//! out: Bencher needs numbers.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::results::RunReport;

/// One measure of one benchmark.
#[derive(Debug, Serialize)]
struct Metric {
    value: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    lower_value: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    upper_value: Option<f64>,
}

/// The measured rows of `host run` in Bencher's metric format.
pub fn bencher_run(report: &RunReport) -> String {
    let mut benchmarks = Map::new();
    for r in &report.results {
        let Some(f) = &r.figures else { continue };
        let ns = &f.ns_per_op;
        if !ns.median.is_finite() {
            continue;
        }
        let finite = |x: f64| x.is_finite().then_some(x);
        let mut measures = Map::new();
        let latency = Metric {
            value: ns.median,
            lower_value: finite(ns.ci95_low),
            upper_value: finite(ns.ci95_high),
        };
        measures.insert("latency".into(), to_value(&latency));
        if let Some(fuel) = f.fuel_per_op.filter(|x| x.is_finite()) {
            let instructions = Metric {
                value: fuel,
                lower_value: None,
                upper_value: None,
            };
            measures.insert("instructions".into(), to_value(&instructions));
        }
        // A JSON key: serde escapes what JSON must.
        #[allow(clippy::disallowed_methods)]
        let key = r.name.unescaped().to_string();
        benchmarks.insert(key, Value::Object(measures));
    }
    let mut json =
        serde_json::to_string_pretty(&Value::Object(benchmarks)).unwrap_or_else(|_| "{}".into());
    json.push('\n');
    json
}

fn to_value(metric: &Metric) -> Value {
    serde_json::to_value(metric).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures;

    #[test]
    fn measured_rows_become_latencies_with_their_interval() -> serde_json::Result<()> {
        let value: Value = serde_json::from_str(&bencher_run(&fixtures::run_report()))?;
        let expected = serde_json::json!({
            "xor.wasm": {
                "latency": { "value": 1234.5, "lower_value": 1230.0, "upper_value": 1240.0 }
            }
        });
        assert_eq!(value, expected);
        Ok(())
    }

    #[test]
    fn instructions_are_exact_and_failures_are_left_out() -> serde_json::Result<()> {
        let mut report = fixtures::run_report();
        if let Some(f) = report.results[0].figures.as_mut() {
            f.fuel_per_op = Some(7.0);
        }
        let value: Value = serde_json::from_str(&bencher_run(&report))?;
        assert_eq!(
            value["xor.wasm"]["instructions"],
            serde_json::json!({ "value": 7.0 })
        );
        assert_eq!(value.as_object().map(|o| o.len()), Some(1));
        Ok(())
    }
}
