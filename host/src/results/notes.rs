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

use crate::options::Headline;
use crate::results::ProcessGroup;
use crate::util::foreign::Foreign;

/// One note about a row.
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// The interval reaches within one clock step (over the count) of 0:
    /// the row cannot be told apart from the empty guest.
    EmptyGuestIndistinguishable,
    /// A program's timed region lasts a few steps of the clock (`steps`,
    /// its median over the clock's smallest step): its time cannot be told
    /// finer than a step.
    AtClockResolution { steps: f64 },
    /// A program's interval reaches down to 0: too wide to bound its time.
    ReachesZero,
    /// The pilot stopped at its largest count: time does not grow with it.
    CountCapped { count: u64 },
    /// The warm-up did not settle within its cap.
    WarmupNotSettled { cap_ms: f64 },
    /// A program's first iteration was timed in `processes` processes: it
    /// outlasted the warm-up's time, under a runtime that runs from the
    /// first call the code it runs later.
    FirstIterationTimed { processes: u32 },
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
    /// The interval the row does not show differs from the one it shows
    /// (`--interval`): what made a later run's differ from this run's,
    /// and the other's ends.
    OtherInterval {
        /// Which interval the row shows.
        shown: Headline,
        /// The other interval, ns.
        low: f64,
        high: f64,
        /// What widened a later run's interval.
        why: Widened,
        /// The bound that cut a later run's interval, ns.
        bounded: Option<(f64, f64)>,
    },
    /// Too few earlier runs of the row to say where a later run lands: the
    /// interval is this run's processes' alone (info).
    TooFewEarlierRuns {
        /// Earlier runs of the row that count.
        runs: usize,
        /// How many are needed.
        needed: usize,
    },
    /// The processes disagree beyond what a row's err% shows: their
    /// medians' range, and the groups they fall into.
    ProcessesDisagree {
        low: f64,
        high: f64,
        processes: usize,
        /// More than one when they cluster apart.
        groups: Vec<ProcessGroup>,
        /// Why the row's runtime is known to differ between processes.
        runtime_varies: Option<&'static str>,
    },
    /// err% (the spread of epochs within the processes) is much narrower
    /// than the interval shown: why.
    ErrBesideInterval {
        err_pct: f64,
        /// How far the interval reaches below and above the median, in
        /// percent.
        below_pct: f64,
        above_pct: f64,
        /// Whether the processes disagree (else: what widened a later
        /// run's interval).
        processes: bool,
    },
    /// The row stands on its undisturbed epochs (info).
    StandsOnUndisturbed(Undisturbed),
    /// The workload paused (info).
    Pauses { per_sample: u64, pair_ns: f64 },
    /// A note as a saved report holds it: its words.
    Text(Foreign),
}

/// What widened a later run's interval beyond this run's.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Widened {
    /// The drift measured between earlier runs: relative sd, how many
    /// runs, and whether of this row (else of others measured the same way
    /// on this machine).
    pub drift: Option<(f64, usize, bool)>,
    /// `--drift`, in percent (0: none).
    pub stated_pct: f64,
    /// The machine was busy.
    pub busy: bool,
    /// This run departs from the earlier runs' median.
    pub departed: bool,
    /// No drift between runs was measured (too few earlier runs, or none
    /// read): a later run's interval spans this run's processes.
    pub unmeasured: bool,
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
