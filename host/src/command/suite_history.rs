//! A suite's comparison against the earlier runs of the same suite kept in
//! the store: each side's geometric mean told where a later run's may land
//! ([`crate::analysis::suite::between_runs`]), then this run kept beside
//! them. The same suite is the same sides and benchmarks of the same
//! contents ([`suite_digest`]), compared by the same engines and metric on
//! a machine of the same CPU; runs of a busy machine, or older than a day,
//! do not count.

use std::path::PathBuf;

use crate::analysis::suite::between_runs;
use crate::benchmark::parent::history::drift_window;
use crate::benchmark::parent::suite::Suite;
use crate::command::run::{Keeper, provenance};
use crate::options::{CompareSettings, Metric};
use crate::output::escape::terminal;
use crate::results::store::{KeptRun, Measured, Store};
use crate::results::{Environment, SuiteComparison, SuiteRatio};
use crate::util::fs::{Cap, Links, stream_bounded};

/// Tell `report`'s geometric means against the earlier runs of `suite` in
/// the store, then keep it there (unless the store is not read or kept, or
/// the run was stopped). What the store refused is said on stderr (a run
/// not kept, in the report's warnings too): the comparison stands without
/// it. False when the run was to be kept and was not.
pub fn against_earlier_runs(
    settings: &CompareSettings,
    suite: &Suite,
    report: &mut SuiteComparison,
) -> bool {
    let store = &settings.settings.store;
    let Some(folder) = store.folder.as_ref().filter(|_| store.read || store.keep) else {
        return true;
    };
    let digest = suite_digest(suite, settings.settings.max_file_bytes);
    let Some(env) = report.environment.clone() else {
        return true;
    };
    if store.read {
        let (runs, notes) = drift_window(&Store::new(folder));
        for note in notes {
            eprintln!("note: {}", terminal(&note));
        }
        let earlier = same_suite(runs, &digest, &env, settings.settings.metric);
        for mean in &mut report.summary.geometric_means {
            mean.between_runs = Some(between_runs(&mean.ratio, &earlier_means(&earlier, mean)));
        }
    }
    if store.keep && report.stopped.is_none() {
        // The git state is of the first benchmark's folder.
        let files: Vec<PathBuf> = (suite.benchmarks.iter().flat_map(|b| b.files.iter()))
            .take(1)
            .cloned()
            .collect();
        let kept = KeptRun::of_suite(report, digest, provenance(&settings.settings, &files));
        if let Some(kept) = kept
            && let Err(warning) = Keeper::new(Store::new(folder)).keep(&kept, None)
        {
            if let Some(env) = report.environment.as_mut() {
                env.warnings.push(warning);
            }
            return false;
        }
    }
    true
}

/// Of `runs`, those of the suite of `digest` compared as `env` (engines,
/// CPU) and `metric` say, on a machine that was not busy, in their order.
fn same_suite(runs: Vec<KeptRun>, digest: &str, env: &Environment, metric: Metric) -> Vec<KeptRun> {
    let cpu = env.cpu_model.clone().unwrap_or_default();
    runs.into_iter()
        .filter(|run| {
            run.command == Measured::Suite
                && run.suite.as_ref().is_some_and(|s| s.digest == digest)
                && run.machine.cpu == cpu
                && run.engines == env.engines
                && run.metric == metric
                && !run.busy_machine
        })
        .collect()
}

/// The geometric means of `mean`'s side against its reference in the runs
/// `earlier`, in their order.
fn earlier_means(earlier: &[KeptRun], mean: &SuiteRatio) -> Vec<f64> {
    earlier
        .iter()
        .filter_map(|run| run.suite.as_ref())
        .flat_map(|s| &s.geometric_means)
        .filter(|m| m.side == mean.side && m.reference == mean.reference)
        .map(|m| m.value)
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect()
}

/// The SHA-256 (hex) of `suite`'s sides, and of each benchmark's name and
/// the contents of its files (each at most `max_file_bytes`, as a workload
/// is read; one that cannot be read, absent or past the cap, counts as
/// such), in the suite's order.
pub fn suite_digest(suite: &Suite, max_file_bytes: u64) -> String {
    use sha2::{Digest, Sha256};
    let cap = Cap {
        bytes: max_file_bytes,
        name: "--max-file-size",
    };
    let mut hasher = Sha256::new();
    for side in &suite.sides {
        update_text(&mut hasher, side);
    }
    for benchmark in &suite.benchmarks {
        update_text(&mut hasher, &benchmark.name);
        for file in &benchmark.files {
            let mut contents = Sha256::new();
            match stream_bounded(file, cap, Links::Follow, &mut contents) {
                Ok(_) => hasher.update(contents.finalize()),
                // The suite compared without it (its benchmark failed):
                // the same suite is the one without it too.
                Err(_) => update_text(&mut hasher, "unreadable"),
            }
        }
    }
    crate::util::bytes::hex(&hasher.finalize())
}

/// `text` into `hasher`, preceded by its length: no two lists of texts hash
/// alike.
fn update_text(hasher: &mut sha2::Sha256, text: &str) {
    use sha2::Digest;
    hasher.update((text.len() as u64).to_le_bytes());
    hasher.update(text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::benchmark::parent::suite::Benchmark;
    use crate::results::store::{KeptMean, KeptSuite, fixture};

    /// A suite of `files` (name, contents) across cranelift and winch,
    /// written under `dir`.
    fn suite(dir: &std::path::Path, files: &[(&str, &[u8])]) -> Suite {
        let benchmarks = files
            .iter()
            .map(|(name, contents)| {
                let path = dir.join(format!("{name}.wasm"));
                std::fs::write(&path, contents).expect("writes");
                Benchmark {
                    name: name.to_string(),
                    files: vec![path],
                }
            })
            .collect();
        Suite {
            sides: vec!["cranelift".into(), "winch".into()],
            benchmarks,
            unpaired: Vec::new(),
        }
    }

    /// The digest holds the sides, the names and the contents: changing
    /// any of them changes it, and nothing else does.
    #[test]
    fn the_digest_is_of_sides_names_and_contents() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        for d in [&a, &b] {
            std::fs::create_dir(d).expect("makes");
        }
        let digest = |s: &Suite| suite_digest(s, 1 << 20);
        let one = suite(&a, &[("x", b"one"), ("y", b"two")]);
        let same = suite(&b, &[("x", b"one"), ("y", b"two")]);
        assert_eq!(digest(&one), digest(&same));
        assert_ne!(
            digest(&one),
            digest(&suite(&b, &[("x", b"one"), ("y", b"2")]))
        );
        assert_ne!(
            digest(&one),
            digest(&suite(&b, &[("x", b"one"), ("z", b"two")]))
        );
        let mut other_sides = one.clone();
        other_sides.sides.reverse();
        assert_ne!(digest(&one), digest(&other_sides));
        // Names and contents cannot trade bytes.
        assert_ne!(
            digest(&suite(&a, &[("xy", b"")])),
            digest(&suite(&b, &[("x", b"y")]))
        );
        // A file past the cap, or absent, counts as unreadable, not hashed
        // in part.
        let capped = suite_digest(&one, 2);
        assert_ne!(capped, digest(&one));
        let mut absent = one.clone();
        absent.benchmarks[0].files[0] = a.join("absent.wasm");
        absent.benchmarks[1].files[0] = a.join("absent.wasm");
        assert_eq!(capped, suite_digest(&absent, 1 << 20));
    }

    /// A kept suite run of `digest` whose winch side read `value`.
    fn kept(digest: &str, value: f64) -> KeptRun {
        let mut run = fixture("0000000000001-1-0", "x", 1.0);
        run.command = Measured::Suite;
        run.rows.clear();
        run.suite = Some(KeptSuite {
            digest: digest.into(),
            geometric_means: vec![KeptMean {
                side: "winch".into(),
                reference: "cranelift".into(),
                value,
            }],
        });
        run
    }

    /// Only runs of the same suite, engines, metric and CPU, on a machine
    /// that was not busy, count; a run of rows never does.
    #[test]
    fn only_the_same_suite_counts() {
        let env = crate::analysis::fixtures::compare_report().environment;
        let cpu = env.cpu_model.clone().unwrap_or_default();
        let on_this = |mut run: KeptRun| {
            run.machine.cpu = cpu.clone();
            run.engines = env.engines.clone();
            run
        };
        let mut busy = on_this(kept("d", 1.7));
        busy.busy_machine = true;
        let mut other_cpu = on_this(kept("d", 1.6));
        other_cpu.machine.cpu = "another".into();
        let mut other_metric = on_this(kept("d", 1.5));
        other_metric.metric = Metric::Instructions;
        let mut rows = on_this(fixture("0000000000002-1-0", "x", 1.0));
        rows.suite = kept("d", 1.4).suite;
        let runs = vec![
            on_this(kept("d", 1.8)),
            on_this(kept("e", 1.9)),
            busy,
            other_cpu,
            other_metric,
            rows,
            on_this(kept("d", 1.81)),
        ];
        let same = same_suite(runs, "d", &env, Metric::Time);
        let mean = SuiteRatio {
            side: "winch".into(),
            reference: "cranelift".into(),
            benchmarks: 2,
            ratio: crate::results::Ratio::exact(1.8),
            confidence: 0.95,
            between_runs: None,
        };
        assert_eq!(earlier_means(&same, &mean), vec![1.8, 1.81]);
        let other_side = SuiteRatio {
            side: "wasmi".into(),
            ..mean
        };
        assert!(earlier_means(&same, &other_side).is_empty());
    }
}
