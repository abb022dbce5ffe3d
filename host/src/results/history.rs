//! The run history: the median per op of every row `host run` measured,
//! keyed by what was measured ([`Subject`]: the file's contents, benchmark,
//! size, engine and measuring plan) and where ([`Machine`]: the CPU model,
//! and which epochs the median stands on), kept as [`FILE`] in the compile
//! cache's folder. Both keys are typed structs of named fields, written by
//! serde: renaming a Rust name never changes a key. Later runs read it to measure how much this machine
//! drifts between runs ([`crate::analysis::drift`]). This module stores and
//! reads; a missing or damaged file is an empty history, never an error of
//! the run.

use std::num::{NonZeroU64, NonZeroUsize};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::options::{EngineConfig, StopRule};
use crate::util::fs::replace_atomically;

/// File name of the history inside the cache folder. Its number changes
/// when what a row's median stands on, or how a key is written, changes
/// (2: the epochs that neither an interruption nor a slower spell of the
/// core reached; 3: keys of named fields), so that runs measured or filed
/// one way are never taken as the drift of runs measured another; an older
/// file is simply not read.
pub const FILE: &str = "history-3.json";
/// Runs kept per subject: the newest ones.
pub const KEPT_PER_SUBJECT: usize = 12;
/// Subjects kept: those measured most recently.
pub const KEPT_SUBJECTS: usize = 200;

/// Where a row ran, as the history files it: the CPU, and which epochs
/// its median stands on (medians of the two kinds drift differently).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Machine {
    /// The CPU model (empty when unknown).
    pub cpu: String,
    /// Whether the median stands on the undisturbed epochs, rather than on
    /// every epoch.
    pub undisturbed: bool,
}

/// What a row measured, as the history files it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Subject {
    /// The first 12 bytes of the SHA-256 of the file's contents, in hex.
    pub contents: String,
    pub benchmark: String,
    pub size: Option<u64>,
    /// How its code was compiled.
    pub engine: Option<EngineConfig>,
    /// The measuring plan: a run of five samples drifts more than one of
    /// the precision rule.
    pub stop: StopRule,
    pub processes: Option<NonZeroUsize>,
    pub count: Option<NonZeroU64>,
    pub sample_time: Duration,
}

impl Machine {
    /// The key an [`Entry`] holds: the machine's named fields, as JSON.
    pub fn key(&self) -> String {
        key_of(self)
    }
}

impl Subject {
    /// The subject of `benchmark` at `size` in a file of `contents`,
    /// compiled by `engine` and measured by the plan of the other fields.
    pub fn new(
        contents: &[u8],
        benchmark: &str,
        size: Option<u64>,
        engine: Option<&EngineConfig>,
        plan: (StopRule, Option<NonZeroUsize>, Option<NonZeroU64>, Duration),
    ) -> Self {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(contents);
        let (stop, processes, count, sample_time) = plan;
        Subject {
            contents: digest[..12].iter().map(|b| format!("{b:02x}")).collect(),
            benchmark: benchmark.to_string(),
            size,
            engine: engine.copied(),
            stop,
            processes,
            count,
            sample_time,
        }
    }

    /// The key an [`Entry`] holds: the subject's named fields, as JSON.
    pub fn key(&self) -> String {
        key_of(self)
    }
}

/// `value` as compact JSON: its named fields, in the order declared.
fn key_of(value: &impl Serialize) -> String {
    // Structs of strings, numbers, options and enums always serialise.
    serde_json::to_string(value).unwrap_or_default()
}

/// One earlier run of one row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Where it ran: [`Machine::key`].
    pub machine: String,
    /// What was measured: [`Subject::key`].
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
        replace_atomically(path, &bytes)
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
    fn keys_are_named_fields() {
        let subject = Subject::new(
            b"wasm",
            "xor.wasm",
            Some(10),
            None,
            (
                StopRule::Time(Duration::from_millis(5)),
                None,
                NonZeroU64::new(100),
                Duration::from_millis(1),
            ),
        );
        let key = subject.key();
        assert!(key.starts_with(r#"{"contents":""#), "{key}");
        assert!(
            key.contains(r#""benchmark":"xor.wasm","size":10,"engine":null"#),
            "{key}"
        );
        assert!(key.contains(r#""count":100"#), "{key}");
        let machine = Machine {
            cpu: "cpu".into(),
            undisturbed: true,
        };
        assert_eq!(machine.key(), r#"{"cpu":"cpu","undisturbed":true}"#);
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
