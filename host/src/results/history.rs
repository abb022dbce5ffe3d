//! The drift's view of the store of kept runs: the median per op of every
//! row `host run` kept ([`entries`]), keyed by what was measured
//! ([`Subject`]: the file's contents, benchmark, size, engine and measuring
//! plan) and where ([`Machine`]: the CPU model, and which epochs the median
//! stands on). Both keys are typed structs of named fields, written by
//! serde: renaming a Rust name never changes a key. Later runs read it to
//! measure how much this machine drifts between runs
//! ([`crate::analysis::drift`]). A median that is not [`plausible`] is
//! skipped (and counted when it is [`absurd`]), as are the runs of a busy
//! machine. (The history `host history` draws keys by benchmark instead:
//! [`crate::analysis::trend`].)

use std::num::{NonZeroU64, NonZeroUsize};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::options::{EngineConfig, StopRule};
use crate::results::store::KeptRun;
use crate::util::foreign::Foreign;

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
    pub cpu: Foreign,
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
            contents: crate::util::bytes::hex(&digest[..12]),
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

/// The drift's view of the store: one entry per measured row of the kept
/// runs `runs` (oldest first) on a machine that was not busy, with a
/// plausible median and the subject the run filed it under.
pub fn entries(runs: &[KeptRun]) -> Vec<Entry> {
    runs.iter()
        .filter(|run| !run.busy_machine)
        .flat_map(|run| {
            run.rows.iter().filter_map(move |row| {
                let subject = row.drift_subject.clone()?;
                (row.error.is_none() && plausible(row.median_ns)).then(|| Entry {
                    machine: Machine {
                        cpu: run.machine.cpu.clone(),
                        undisturbed: row.undisturbed,
                    }
                    .key(),
                    subject,
                    median_ns: row.median_ns,
                    unix_s: run.unix_ms / 1000,
                })
            })
        })
        .collect()
}

/// How many medians in `runs` are no time at all (skipped by [`entries`]).
pub fn absurd_medians(runs: &[KeptRun]) -> usize {
    runs.iter()
        .flat_map(|r| &r.rows)
        .filter(|row| row.error.is_none() && absurd(row.median_ns) && !row.median_ns.is_nan())
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn absurd_medians_and_busy_runs_are_left_out() {
        let text = r#"{"format":1,"id":"0000000001000-1-0","unix_ms":1000,"tool_version":"0",
            "label":null,"git":null,"machine":{"cpu":"cpu","cores":2,"platform":"p"},
            "pinned_core":null,"priority":"normal","busy_machine":false,"seed":0,"metric":"Time",
            "engines":[],"rows":[
            {"name":"a","benchmark":"a","size":null,"engine":0,"median_ns":5e-324,
             "ci95_low":null,"ci95_high":null,"undisturbed":true,"drift_subject":"s"},
            {"name":"b","benchmark":"b","size":null,"engine":0,"median_ns":100.0,
             "ci95_low":null,"ci95_high":null,"undisturbed":true,"drift_subject":"s"},
            {"name":"c","benchmark":"c","size":null,"engine":0,"median_ns":100.0,
             "ci95_low":null,"ci95_high":null,"undisturbed":true}]}"#;
        let run: KeptRun = serde_json::from_str(text).expect("a kept run");
        let found = entries(std::slice::from_ref(&run));
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].median_ns, found[0].unix_s), (100.0, 1));
        assert_eq!(absurd_medians(std::slice::from_ref(&run)), 1);
        let busy = KeptRun {
            busy_machine: true,
            ..run
        };
        assert!(entries(&[busy]).is_empty());
    }
}
