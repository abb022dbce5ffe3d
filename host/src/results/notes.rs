//! A row's notes as data: what a reader may have to act on ([`Note`]s in
//! `notes`), and facts that need no action (in `info`). Analysis and the
//! benchmark stage say which note applies and with what numbers; the words
//! are written once, by the output stage (`Note::words` in
//! [`crate::output::cells`]), as outside text ([`Foreign`]: a note may quote
//! a reason given by a file or a library). In the JSON a note is its words,
//! so a report read back holds each note as [`Note::Text`].

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::util::foreign::Foreign;

/// One note about a row.
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// The interval reaches within one clock step (over the count) of 0:
    /// the row cannot be told apart from the empty guest.
    EmptyGuestIndistinguishable,
    /// A program's interval reaches down to 0: too wide to bound its time.
    ReachesZero,
    /// The pilot stopped at its largest count: time does not grow with it.
    CountCapped { count: u64 },
    /// The warm-up did not settle within its cap.
    WarmupNotSettled { cap_ms: f64 },
    /// A cache entry was refused, and the code compiled again.
    CacheRefused { reason: Foreign },
    /// This run's median lies beyond its interval from the median of the
    /// earlier runs of the benchmark; the interval was widened to hold it.
    DepartsFromEarlierRuns {
        /// This run's median over theirs, less 1.
        departure: f64,
        runs: usize,
    },
    /// The machine was busy before the run (the measuring core, or every
    /// core, or the watch of the measuring core): the run may not repeat,
    /// and the interval was widened to hold every process's median.
    BusyMachine,
    /// Too many epochs beyond the far Tukey fences.
    SevereOutliers { severe: usize, epochs: usize },
    /// The hardware counters were asked for and not available.
    HardwareCountersUnavailable { why: Foreign },
    /// A program imports neither `bench.start` nor `bench.end`.
    TimedOverWholeStart,
    /// A program imports `bench.start` but not `bench.end`.
    TimedOverWholeStartNoEnd,
    /// A program's output was checked, in every iteration, against these
    /// expected-output files beside it, and matched.
    OutputChecked { files: Vec<String> },
    /// The compiled code came from the cache (info).
    CacheHit { load_ms: f64 },
    /// The interval was widened by the drift measured over earlier runs
    /// (info).
    DriftMeasured {
        /// Relative standard deviation between runs.
        rel_sd: f64,
        runs: usize,
        /// Over the runs of this benchmark, rather than of this machine.
        own: bool,
    },
    /// The row stands on its undisturbed epochs (info).
    StandsOnUndisturbed(Undisturbed),
    /// The workload paused (info).
    Pauses { per_sample: u64, pair_ns: f64 },
    /// A note as a saved report holds it: its words.
    Text(Foreign),
}

/// What a row that stands on its undisturbed epochs says of them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Undisturbed {
    /// Epochs kept, of `epochs`.
    pub kept: usize,
    pub epochs: usize,
    /// The tolerance per sample from a process's fastest epoch, in µs.
    pub within_us: u128,
    /// How far above the kept epochs' median the median of every epoch
    /// lies, in percent.
    pub every_above_pct: f64,
    /// The median length of a sample, ns.
    pub sample_ns: f64,
    /// Interruptions a sample carries, when the core was watched.
    pub interruptions_per_sample: Option<f64>,
}

impl From<String> for Note {
    fn from(words: String) -> Self {
        Note::Text(Foreign::new(words))
    }
}

impl From<&str> for Note {
    fn from(words: &str) -> Self {
        Note::Text(Foreign::new(words))
    }
}

/// Written as its words, as every export shows them.
impl Serialize for Note {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.words().serialize(serializer)
    }
}

/// Read back as its words ([`Note::Text`]).
impl<'de> Deserialize<'de> for Note {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Foreign::deserialize(deserializer).map(Note::Text)
    }
}

impl JsonSchema for Note {
    fn schema_name() -> Cow<'static, str> {
        String::schema_name()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(generator)
    }
}

/// A row's notes, in the order they were found: in the JSON, a list of
/// their words.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Notes(pub Vec<Note>);

impl JsonSchema for Notes {
    fn schema_name() -> Cow<'static, str> {
        Vec::<String>::schema_name()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Vec::<String>::json_schema(generator)
    }
}

impl Notes {
    /// Add `note`.
    pub fn add(&mut self, note: Note) {
        self.0.push(note);
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Note> {
        self.0.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }
}

impl<'a> IntoIterator for &'a Notes {
    type Item = &'a Note;
    type IntoIter = std::slice::Iter<'a, Note>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl FromIterator<Note> for Notes {
    fn from_iter<I: IntoIterator<Item = Note>>(iter: I) -> Self {
        Notes(iter.into_iter().collect())
    }
}
