//! Property test of reading the run history: arbitrary bytes, and a
//! history with mutated bytes or hostile values, give a history (empty when
//! unreadable, with a note when entries were skipped), never a panic, and
//! keep no entry whose median is no time at all.

use proptest::prelude::*;

use crate::results::history::{Entry, History, plausible};
use crate::util::fuzz::{config, json_like};

fn saved_history() -> serde_json::Value {
    let mut history = History::default();
    for (i, median_ns) in [1.5, 2.0e3, 7.25e6].into_iter().enumerate() {
        history.push(Entry {
            machine: format!("{{\"cpu\":\"cpu {i}\",\"undisturbed\":true}}"),
            subject: format!("{{\"benchmark\":\"b{i}\"}}"),
            median_ns,
            unix_s: 1_700_000_000 + i as u64,
        });
    }
    serde_json::to_value(&history).expect("serialises")
}

proptest! {
    #![proptest_config(config(100))]

    #[test]
    fn a_history_read_back_keeps_only_plausible_entries(bytes in json_like(&saved_history())) {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("history.json");
        std::fs::write(&path, &bytes).expect("written");
        let (mut history, _note) = History::load(&path);
        prop_assert!(history.entries.iter().all(|e| plausible(e.median_ns)));
        history.push(Entry {
            machine: "m".into(),
            subject: "s".into(),
            median_ns: 1.0,
            unix_s: 0,
        });
        history.save(&path).expect("saved");
    }
}

#[test]
fn the_seed_is_a_history() {
    let bytes = serde_json::to_vec(&saved_history()).expect("serialises");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("history.json");
    std::fs::write(&path, bytes).expect("written");
    assert_eq!(History::load(&path).0.entries.len(), 3);
}
