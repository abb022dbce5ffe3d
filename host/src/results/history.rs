//! The drift's view of the store of kept runs: the median per op of every
//! row `host run` kept ([`entries`]), keyed by what was measured
//! ([`Subject`]: the file's contents, benchmark, size, engine, metric, huge
//! pages and measuring plan; its [`settings_key`] leaves out the file) and
//! where ([`Machine`]: the CPU model, and which epochs the median stands
//! on). Runs the user asked to forget ([`Forgotten`]) are left out. Both keys are typed structs of named fields, written by
//! serde: renaming a Rust name never changes a key. Later runs read it to
//! measure how much this machine drifts between runs
//! ([`crate::analysis::drift`]). A median that is not [`plausible`] is
//! skipped (and counted when it is [`absurd`]), as are the runs of a busy
//! machine. (The history `host history` draws keys by benchmark instead:
//! [`crate::analysis::trend`].)

use std::num::{NonZeroU64, NonZeroUsize};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::options::{EngineConfig, Metric, StopRule};
use crate::results::store::{Forgotten, KeptRun};
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
    /// What comparisons judge by: a run under Callgrind or with fuel is
    /// measured another way.
    pub metric: Metric,
    /// Whether huge pages were asked for its linear memories.
    pub huge_pages: bool,
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
    /// compiled by `engine`, judged by `metric`, with or without
    /// `huge_pages`, and measured by `plan`.
    pub fn new(
        contents: &[u8],
        benchmark: &str,
        size: Option<u64>,
        (engine, metric, huge_pages): (Option<&EngineConfig>, Metric, bool),
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
            metric,
            huge_pages,
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

/// The settings of the subject of key `subject`: the key with the file's
/// contents and the benchmark left out, so that subjects measured the same
/// way (engine, size, metric, huge pages, plan) share it. `None` for a key
/// this version does not read (a run kept before the metric and huge pages
/// were part of it): such a run feeds no drift.
pub fn settings_key(subject: &str) -> Option<String> {
    let parsed: Subject = serde_json::from_str(subject).ok()?;
    Some(
        Subject {
            contents: String::new(),
            benchmark: String::new(),
            ..parsed
        }
        .key(),
    )
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
    /// How: [`settings_key`] of the subject.
    pub settings: String,
    /// The row's median, ns per op.
    pub median_ns: f64,
    /// The least and the greatest median of its worker processes, ns (the
    /// row's median when none were kept).
    pub processes_ns: (f64, f64),
    /// When, in seconds since the Unix epoch.
    pub unix_s: u64,
}

/// The drift's view of the store: one entry per measured row of the kept
/// runs `runs` (oldest first) on a machine that was not busy, with a
/// plausible median and a subject the run filed it under that this
/// version reads, unless `forgotten` forgets it.
pub fn entries(runs: &[KeptRun], forgotten: &Forgotten) -> Vec<Entry> {
    runs.iter()
        .filter(|run| !run.busy_machine)
        .flat_map(|run| {
            run.rows.iter().filter_map(move |row| {
                let subject = row.drift_subject.clone()?;
                let settings = settings_key(&subject)?;
                let counts = row.error.is_none()
                    && plausible(row.median_ns)
                    && !forgotten.forgets(&run.machine.cpu, &subject, run.unix_ms);
                counts.then(|| Entry {
                    machine: Machine {
                        cpu: run.machine.cpu.clone(),
                        undisturbed: row.undisturbed,
                    }
                    .key(),
                    subject,
                    settings,
                    median_ns: row.median_ns,
                    processes_ns: extent(&row.process_medians_ns, row.median_ns),
                    unix_s: run.unix_ms / 1000,
                })
            })
        })
        .collect()
}

/// The least and the greatest of the plausible `medians`, or `median`
/// twice when there are none.
fn extent(medians: &[f64], median: f64) -> (f64, f64) {
    medians
        .iter()
        .copied()
        .filter(|m| plausible(*m))
        .fold(None, |seen: Option<(f64, f64)>, m| {
            Some(seen.map_or((m, m), |(low, high)| (low.min(m), high.max(m))))
        })
        .unwrap_or((median, median))
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
    use crate::results::store::Forget;

    /// The key of `benchmark` measured by default, with `metric` and
    /// `huge_pages`.
    fn subject(benchmark: &str, metric: Metric, huge_pages: bool) -> String {
        Subject::new(
            benchmark.as_bytes(),
            benchmark,
            None,
            (None, metric, huge_pages),
            (
                StopRule::Time(Duration::from_secs(2)),
                None,
                None,
                Duration::from_millis(1),
            ),
        )
        .key()
    }

    #[test]
    fn keys_are_named_fields() {
        let subject = Subject::new(
            b"wasm",
            "xor.wasm",
            Some(10),
            (None, Metric::Time, true),
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
            key.contains(r#""benchmark":"xor.wasm","size":10,"engine":null,"metric":"Time","huge_pages":true"#),
            "{key}"
        );
        assert!(key.contains(r#""count":100"#), "{key}");
        let machine = Machine {
            cpu: "cpu".into(),
            undisturbed: true,
        };
        assert_eq!(machine.key(), r#"{"cpu":"cpu","undisturbed":true}"#);
    }

    /// Two benchmarks measured the same way share their settings; the
    /// same benchmark under another metric or without huge pages does not;
    /// a key kept before the metric was part of it is read as none.
    #[test]
    fn settings_leave_out_the_file_only() {
        let key = |b, m, h| settings_key(&subject(b, m, h)).expect("a key of this version");
        assert_eq!(key("a", Metric::Time, true), key("b", Metric::Time, true));
        assert_ne!(
            key("a", Metric::Time, true),
            key("a", Metric::Instructions, true)
        );
        assert_ne!(key("a", Metric::Time, true), key("a", Metric::Time, false));
        let old = r#"{"contents":"00","benchmark":"a","size":null,"engine":null,"stop":{"Time":{"secs":2,"nanos":0}},"processes":null,"count":null,"sample_time":{"secs":0,"nanos":1000000}}"#;
        assert_eq!(settings_key(old), None);
    }

    /// A kept run of rows `a` (an absurd median), `b` and `c` (no subject),
    /// all of subject `s`, kept at 1 s.
    fn kept(s: &str) -> KeptRun {
        let text = r#"{"format":1,"id":"0000000001000-1-0","unix_ms":1000,"tool_version":"0",
            "label":null,"git":null,"machine":{"cpu":"cpu","cores":2,"platform":"p"},
            "pinned_core":null,"priority":"normal","busy_machine":false,"seed":0,"metric":"Time",
            "engines":[],"rows":[
            {"name":"a","benchmark":"a","size":null,"engine":0,"median_ns":5e-324,
             "ci95_low":null,"ci95_high":null,"undisturbed":true,"drift_subject":SUBJECT},
            {"name":"b","benchmark":"b","size":null,"engine":0,"median_ns":100.0,
             "ci95_low":null,"ci95_high":null,"undisturbed":true,"drift_subject":SUBJECT,
             "process_medians_ns":[99.0,100.0,104.0]},
            {"name":"c","benchmark":"c","size":null,"engine":0,"median_ns":100.0,
             "ci95_low":null,"ci95_high":null,"undisturbed":true}]}"#;
        let quoted = serde_json::to_string(s).expect("a string");
        serde_json::from_str(&text.replace("SUBJECT", &quoted)).expect("a kept run")
    }

    #[test]
    fn absurd_medians_and_busy_runs_are_left_out() {
        let s = subject("b", Metric::Time, true);
        let run = kept(&s);
        let none = Forgotten::default();
        let found = entries(std::slice::from_ref(&run), &none);
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].median_ns, found[0].unix_s), (100.0, 1));
        assert_eq!(found[0].processes_ns, (99.0, 104.0));
        assert_eq!(Some(found[0].settings.clone()), settings_key(&s));
        assert_eq!(absurd_medians(std::slice::from_ref(&run)), 1);
        let busy = KeptRun {
            busy_machine: true,
            ..run.clone()
        };
        assert!(entries(&[busy], &none).is_empty());
        // A subject this version cannot read feeds nothing.
        assert!(entries(&[kept("s")], &none).is_empty());
    }

    #[test]
    fn forgotten_runs_are_left_out() {
        let s = subject("b", Metric::Time, true);
        let run = kept(&s);
        let forget = |cpu: &str, subject: Option<&str>, until_ms| Forgotten {
            format: 1,
            marks: vec![Forget {
                cpu: cpu.into(),
                subject: subject.map(str::to_string),
                until_ms,
            }],
        };
        let count = |f: &Forgotten| entries(std::slice::from_ref(&run), f).len();
        // The machine's drift, the subject's, and neither (another
        // subject, another CPU, or forgotten before the run was kept).
        assert_eq!(count(&forget("cpu", None, 1000)), 0);
        assert_eq!(count(&forget("cpu", Some(&s), 2000)), 0);
        assert_eq!(count(&forget("cpu", Some("other"), 2000)), 1);
        assert_eq!(count(&forget("other cpu", None, 2000)), 1);
        assert_eq!(count(&forget("cpu", None, 999)), 1);
    }
}
