//! The run history: the median per op of every row `host run` measured,
//! keyed by what was measured ([`Subject`]: the file's contents, benchmark,
//! size, engine and measuring plan) and where ([`Machine`]: the CPU model,
//! and which epochs the median stands on), kept as [`FILE`] in the compile
//! cache's folder. Both keys are typed structs of named fields, written by
//! serde: renaming a Rust name never changes a key. Later runs read it to measure how much this machine
//! drifts between runs ([`crate::analysis::drift`]). This module stores and
//! reads; a missing or damaged file is an empty history, never an error of
//! the run. What is read is bounded: a file that is not a regular file or
//! is larger than [`MAX_FILE_BYTES`] is refused unread, an entry whose
//! median is not [`plausible`] is skipped (with a note when it is
//! [`absurd`]), and the
//! entries beyond the limits ([`KEPT_PER_SUBJECT`], [`KEPT_SUBJECTS`]) are
//! dropped on reading as on adding, in time linear in the entries.

use std::collections::HashMap;
use std::num::{NonZeroU64, NonZeroUsize};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::options::{EngineConfig, StopRule};
use crate::util::error::one_line;
use crate::util::fs::{Cap, Links, is_not_found, read_bounded, replace_atomically};

/// File name of the history inside the cache folder. Its number changes
/// when what a row's median stands on, or how a key is written, changes
/// (2: the epochs that neither an interruption nor a slower spell of the
/// core reached; 3: keys of named fields), so that runs measured or filed
/// one way are never taken as the drift of runs measured another; an older
/// file is simply not read.
pub const FILE: &str = "history-3.json";
/// Runs kept per subject: the newest ones.
pub const KEPT_PER_SUBJECT: usize = 12;
/// Subjects kept: those measured most recently. So a history holds at
/// most `KEPT_SUBJECTS * KEPT_PER_SUBJECT` (2400) entries.
pub const KEPT_SUBJECTS: usize = 200;
/// The largest history file read: 64 MiB, some 25 times what the limits
/// above keep.
pub const MAX_FILE_BYTES: u64 = 64 << 20;
/// The shortest median per op the history keeps, in ns (a picosecond):
/// below it a row measured nothing distinguishable from no work (its
/// median may even be a hair below 0), and has no drift relative to itself.
pub const MIN_MEDIAN_NS: f64 = 1e-3;
/// The longest median per op taken as a time, in ns (about 11.6 days).
pub const MAX_MEDIAN_NS: f64 = 1e15;

/// Whether `median_ns` is a time the history keeps and the drift uses:
/// within [`MIN_MEDIAN_NS`, `MAX_MEDIAN_NS`].
pub fn plausible(median_ns: f64) -> bool {
    (MIN_MEDIAN_NS..=MAX_MEDIAN_NS).contains(&median_ns)
}

/// Whether `median_ns` is no time a row could have measured at all: not
/// finite, subnormal (5e-324), beyond [`MAX_MEDIAN_NS`] or below
/// −[`MIN_MEDIAN_NS`]. (A median within a picosecond of 0 is a row of no
/// measurable work, not an absurd one.)
pub fn absurd(median_ns: f64) -> bool {
    !median_ns.is_finite()
        || median_ns.is_subnormal()
        || !(-MIN_MEDIAN_NS..=MAX_MEDIAN_NS).contains(&median_ns)
}

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
            engine: engine.cloned(),
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
    /// The history at `path`, with a note when something in it was refused
    /// or skipped; empty when there is none or it cannot be read.
    pub fn load(path: &Path) -> (History, Option<String>) {
        let cap = Cap {
            bytes: MAX_FILE_BYTES,
            name: "the cap on a run history",
        };
        let bytes = match read_bounded(path, cap, Links::Refuse) {
            Ok(bytes) => bytes,
            Err(e) if is_not_found(&e) => return (History::default(), None),
            Err(e) => {
                let note = format!("the run history was not read: {}", one_line(&e));
                return (History::default(), Some(note));
            }
        };
        let Ok(mut history) = serde_json::from_slice::<History>(&bytes) else {
            return (History::default(), None);
        };
        let skipped = history
            .entries
            .iter()
            .filter(|e| absurd(e.median_ns))
            .count();
        history.entries.retain(|e| plausible(e.median_ns));
        history.trim();
        let note = (skipped > 0).then(|| {
            format!(
                "the run history {}: {skipped} entr{} with a median per op that is no time at all (not finite, subnormal, or outside -{MIN_MEDIAN_NS:e}..{MAX_MEDIAN_NS:e} ns) skipped",
                path.display(),
                if skipped == 1 { "y" } else { "ies" }
            )
        });
        (history, note)
    }

    /// Add `entry`, dropping the oldest entries beyond the limits; an entry
    /// whose median is not [`plausible`] (no work, or no time) is not added.
    pub fn push(&mut self, entry: Entry) {
        if plausible(entry.median_ns) {
            self.entries.push(entry);
            self.trim();
        }
    }

    /// Drop the entries beyond the limits: the oldest of a subject beyond
    /// [`KEPT_PER_SUBJECT`], and every entry of the subjects beyond the
    /// [`KEPT_SUBJECTS`] measured most recently. One pass from the newest
    /// entry back, and one to keep the order.
    fn trim(&mut self) {
        // Per subject, its rank by its newest entry and its entries so far.
        let mut subjects: HashMap<(&str, &str), (usize, usize)> = HashMap::new();
        let mut keep = vec![false; self.entries.len()];
        for (i, e) in self.entries.iter().enumerate().rev() {
            let rank = subjects.len();
            let (rank, seen) = subjects
                .entry((e.machine.as_str(), e.subject.as_str()))
                .or_insert((rank, 0));
            *seen += 1;
            keep[i] = *rank < KEPT_SUBJECTS && *seen <= KEPT_PER_SUBJECT;
        }
        let mut kept = keep.into_iter();
        self.entries.retain(|_| kept.next().unwrap_or(false));
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
        assert!(History::load(&file).0.entries.is_empty());
        let mut h = History::default();
        h.push(entry("a", 2.5));
        h.save(&file).expect("save");
        assert_eq!(History::load(&file).0.entries, h.entries);
        std::fs::remove_dir_all(&dir).expect("clean");
    }

    fn write_entries(file: &Path, entries: impl Iterator<Item = Entry>) {
        let history = History {
            entries: entries.collect(),
        };
        std::fs::write(file, serde_json::to_vec(&history).expect("serialises")).expect("writes");
    }

    /// A 100,000-entry history is read, trimmed to the limits, added to
    /// and saved in well under the bound (the quadratic `push` this replaced
    /// took about 30 s).
    #[test]
    fn a_history_of_100k_entries_loads_and_pushes_in_linear_time() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = path(dir.path());
        write_entries(
            &file,
            (0..100_000).map(|i| entry(&format!("s{}", i % 1000), 1.0 + (i % 7) as f64)),
        );
        let start = std::time::Instant::now();
        let (mut h, note) = History::load(&file);
        assert_eq!(note, None);
        assert_eq!(h.entries.len(), KEPT_SUBJECTS * KEPT_PER_SUBJECT);
        for i in 0..1000 {
            h.push(entry(&format!("new{i}"), 2.0));
        }
        h.save(&file).expect("saves");
        let took = start.elapsed();
        assert!(took < std::time::Duration::from_secs(5), "{took:?}");
        // The 1000 new subjects, one entry each, pushed the older ones out.
        assert_eq!(h.entries.len(), KEPT_SUBJECTS);
        assert_eq!(h.entries.last().map(|e| e.subject.as_str()), Some("new999"));
    }

    #[test]
    fn implausible_medians_are_skipped_and_said_once() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = path(dir.path());
        let medians = [5e-324, 1.7e308, -3.0, 0.0, -5e-10, 1e16, 100.0, 101.0];
        write_entries(&file, medians.iter().map(|&m| entry("a", m)));
        let (h, note) = History::load(&file);
        let kept: Vec<f64> = h.entries.iter().map(|e| e.median_ns).collect();
        assert_eq!(kept, vec![100.0, 101.0]);
        let note = note.expect("said");
        assert!(
            note.contains("4 entries with a median per op that is no time at all"),
            "{note}"
        );
        let mut h = h;
        h.push(entry("a", f64::NAN));
        h.push(entry("a", f64::INFINITY));
        assert_eq!(h.entries.len(), 2);
    }

    /// A FIFO, a link to `/dev/zero` or an oversized file in the history's
    /// place is an empty history and a note, without blocking or reading.
    #[test]
    fn a_history_that_is_not_a_regular_file_is_refused_unread() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = path(dir.path());
        let made = std::process::Command::new("mkfifo").arg(&file).status();
        assert!(made.is_ok_and(|s| s.success()));
        let (h, note) = History::load(&file);
        assert!(h.entries.is_empty());
        assert!(note.is_some_and(|n| n.contains("not a regular file (a FIFO")));
        std::fs::remove_file(&file).expect("removes");
        std::os::unix::fs::symlink("/dev/zero", &file).expect("links");
        let note = History::load(&file).1.unwrap_or_default();
        assert!(note.contains("a symbolic link: refused"), "{note}");
        std::fs::remove_file(&file).expect("removes");
        let big = std::fs::File::create(&file).expect("creates");
        big.set_len(MAX_FILE_BYTES + 1).expect("grows");
        let note = History::load(&file).1.unwrap_or_default();
        assert!(
            note.contains("larger than the cap on a run history 64 MiB"),
            "{note}"
        );
        // Saving replaces it.
        let mut h = History::default();
        h.push(entry("a", 1.0));
        h.save(&file).expect("saves");
        assert_eq!(History::load(&file).0.entries, h.entries);
    }
}
