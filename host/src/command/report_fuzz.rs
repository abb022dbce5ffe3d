//! Property test of reading exports back (`host report`): arbitrary bytes,
//! and run and compare exports with mutated bytes or hostile values, give
//! an export or an error, never a panic.

use proptest::prelude::*;

use super::*;
use crate::analysis::fixtures;
use crate::util::fuzz::{config, json_like};

/// Read `bytes` back as an export, through a file as `host report` does,
/// and use what was read.
fn read_back(bytes: &[u8]) {
    let file = tempfile::NamedTempFile::new().expect("a temporary file");
    std::fs::write(file.path(), bytes).expect("written");
    match read_export(file.path()) {
        Ok(Export::Run(report)) => {
            let _ = (names(&report), report.failures(), report.regressions());
        }
        Ok(Export::Compare(report)) => {
            let _ = report.noise_band();
        }
        Err(e) => {
            let _ = format!("{e:#}");
        }
    }
}

fn run_export() -> serde_json::Value {
    serde_json::to_value(fixtures::realistic_run_report()).expect("serialises")
}

fn compare_export() -> serde_json::Value {
    serde_json::to_value(fixtures::compare_report()).expect("serialises")
}

proptest! {
    #![proptest_config(config(80))]

    #[test]
    fn a_run_export_read_back_is_a_report_or_an_error(bytes in json_like(&run_export())) {
        read_back(&bytes);
    }

    #[test]
    fn a_compare_export_read_back_is_a_report_or_an_error(bytes in json_like(&compare_export())) {
        read_back(&bytes);
    }
}
