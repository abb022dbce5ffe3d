//! Property test of reading a baseline: arbitrary bytes, and a saved run
//! with mutated bytes or hostile values, give a baseline or an error, never
//! a panic, and a baseline read keeps no more epochs than the cap.

use proptest::prelude::*;

use serde_json::json;

use super::*;
use crate::util::fuzz::{config, json_like};

/// A saved run, as much of it as a baseline reads, and a little more.
fn saved_run() -> serde_json::Value {
    json!({
        "tool": { "name": "wasm-bench", "version": env!("CARGO_PKG_VERSION") },
        "environment": { "pinned_core": 2, "priority": "high", "cpu_model": "a CPU" },
        "results": [
            {
                "name": "xor",
                "epochs_ns_per_op": [[1.0, 2.0, 3.0], [1.5, 2.5]],
                "undisturbed": true,
                "fuel_per_op": 12.0
            },
            { "name": "broken", "error": "it failed" },
            { "name": "old", "samples_ns_per_op": [[4.0]] }
        ]
    })
}

proptest! {
    #![proptest_config(config(150))]

    #[test]
    fn a_baseline_read_back_is_a_baseline_or_an_error(bytes in json_like(&saved_run())) {
        let file = tempfile::NamedTempFile::new().expect("a temporary file");
        std::fs::write(file.path(), &bytes).expect("written");
        if let Ok(saved) = load_from("fuzz", file.path()) {
            for result in &saved.results {
                let kept: usize = result.epochs_ns_per_op.iter().map(Vec::len).sum();
                prop_assert!(kept <= MAX_EPOCHS);
                let _ = saved.result(&result.name);
            }
        }
    }
}
