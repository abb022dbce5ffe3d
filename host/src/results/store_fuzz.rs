//! Property test of the store's one reader: a kept run's file with
//! arbitrary bytes, mutated bytes or hostile values, and a baseline
//! pointing at it, give a kept run, a baseline or an error, never a panic;
//! reading the newest runs never fails on them (it notes them).

use proptest::prelude::*;

use super::tests::run;
use super::*;
use crate::results::baseline;
use crate::util::fuzz::{config, json_like};

const ID: &str = "0000000001-00ab";

proptest! {
    #![proptest_config(config(100))]

    #[test]
    fn a_kept_run_read_back_is_a_run_or_an_error(
        bytes in json_like(&serde_json::to_value(run(ID, 2.5)).expect("serialises"))
    ) {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let store = Store::new(dir.path());
        store.prepare().expect("the store is made");
        std::fs::write(store.runs().join(format!("{ID}.json")), &bytes).expect("written");
        std::fs::create_dir_all(store.baselines()).expect("baselines");
        std::fs::write(store.baselines().join("main"), format!("{ID}\n")).expect("pointer");
        if let Ok(kept) = store.read(ID) {
            prop_assert_eq!(kept.id.as_str(), ID);
        }
        if let Ok(saved) = baseline::load(&store, "main") {
            for result in &saved.results {
                let _ = saved.result(&result.name);
            }
        }
        let (runs, notes) = store.newest(10, 0, MAX_RUN_BYTES);
        prop_assert!(runs.len() + notes.len() >= 1, "the run or a note of it");
    }
}
