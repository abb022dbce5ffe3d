//! The run history: the median per op of every row `host run` measured,
//! keyed by what was measured (the file's contents, benchmark, size and
//! engine) and where (the CPU model), kept as [`FILE`] in the compile
//! cache's folder. Later runs read it to measure how much this machine
//! drifts between runs ([`crate::analysis::drift`]). This module stores and
//! reads; a missing or damaged file is an empty history, never an error of
//! the run.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::util::fs::write_atomically;

/// File name of the history inside the cache folder. Its number changes
/// when what a row's median stands on changes (2: the epochs that neither
/// an interruption nor a slower spell of the core reached), so that runs
/// measured one way are never taken as the drift of runs measured another.
pub const FILE: &str = "history-2.json";
/// Runs kept per subject: the newest ones.
pub const KEPT_PER_SUBJECT: usize = 12;
/// Subjects kept: those measured most recently.
pub const KEPT_SUBJECTS: usize = 200;

/// One earlier run of one row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The CPU it ran on, and which epochs its median stands on (medians
    /// of the two kinds drift differently).
    pub machine: String,
    /// What was measured: contents, benchmark, size, engine.
    pub subject: String,
    /// The row's median, ns per op.
    pub median_ns: f64,
    /// When, in seconds since the Unix epoch.
    pub unix_s: u64,
}

/// Every entry kept, oldest first.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct History {
    pub entries: Vec<Entry>,
}

/// Where the history of cache folder `cache` lives.
pub fn path(cache: &Path) -> PathBuf {
    cache.join(FILE)
}

impl History {
    /// The history at `path`; empty when there is none or it cannot be read.
    pub fn load(path: &Path) -> History {
        std::fs::read(path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Add `entry`, dropping the oldest entries beyond the limits.
    pub fn push(&mut self, entry: Entry) {
        let same = |e: &Entry| e.machine == entry.machine && e.subject == entry.subject;
        let earlier = self.entries.iter().filter(|e| same(e)).count();
        if earlier >= KEPT_PER_SUBJECT {
            let mut excess = earlier + 1 - KEPT_PER_SUBJECT;
            self.entries.retain(|e| {
                let drop = excess > 0 && same(e);
                excess -= usize::from(drop);
                !drop
            });
        }
        self.entries.push(entry);
        // Subjects by their newest entry; the least recent ones go.
        let mut newest: Vec<(&str, &str)> = Vec::new();
        for e in self.entries.iter().rev() {
            let id = (e.machine.as_str(), e.subject.as_str());
            if !newest.contains(&id) {
                newest.push(id);
            }
        }
        if newest.len() > KEPT_SUBJECTS {
            let kept: Vec<(String, String)> = newest[..KEPT_SUBJECTS]
                .iter()
                .map(|(m, s)| (m.to_string(), s.to_string()))
                .collect();
            self.entries
                .retain(|e| kept.iter().any(|(m, s)| *m == e.machine && *s == e.subject));
        }
    }

    /// Write the history to `path` atomically.
    pub fn save(&self, path: &Path) -> Result<()> {
        if let Some(folder) = path.parent() {
            std::fs::create_dir_all(folder)
                .with_context(|| format!("creating {}", folder.display()))?;
        }
        let bytes = serde_json::to_vec(self).context("serialising the run history")?;
        write_atomically(path, &bytes)
            .with_context(|| format!("writing the run history {}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(subject: &str, median_ns: f64) -> Entry {
        Entry {
            machine: "cpu".into(),
            subject: subject.into(),
            median_ns,
            unix_s: 0,
        }
    }

    #[test]
    fn keeps_the_newest_runs_of_a_subject() {
        let mut h = History::default();
        for i in 0..KEPT_PER_SUBJECT + 5 {
            h.push(entry("a", i as f64));
        }
        h.push(entry("b", 1.0));
        let a: Vec<f64> = h
            .entries
            .iter()
            .filter(|e| e.subject == "a")
            .map(|e| e.median_ns)
            .collect();
        assert_eq!(a.len(), KEPT_PER_SUBJECT);
        assert_eq!(a[0], 5.0);
        assert_eq!(h.entries.last(), Some(&entry("b", 1.0)));
    }

    #[test]
    fn drops_the_least_recent_subjects() {
        let mut h = History::default();
        for i in 0..KEPT_SUBJECTS + 3 {
            h.push(entry(&i.to_string(), 1.0));
        }
        assert_eq!(h.entries.len(), KEPT_SUBJECTS);
        assert_eq!(h.entries[0].subject, "3");
    }

    #[test]
    fn a_damaged_file_is_an_empty_history_and_saving_round_trips() {
        let dir = std::env::temp_dir().join(format!("history-test-{}", std::process::id()));
        let file = path(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(&file, b"{not json").expect("write");
        assert!(History::load(&file).entries.is_empty());
        let mut h = History::default();
        h.push(entry("a", 2.5));
        h.save(&file).expect("save");
        assert_eq!(History::load(&file).entries, h.entries);
        std::fs::remove_dir_all(&dir).expect("clean");
    }
}
