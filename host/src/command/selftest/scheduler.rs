//! The scheduler check: a synthetic suite of two paired folders (many short
//! `run(count, seed)` pairs, two long programs, two close pairs) compared
//! by this binary twice: unhurried (`--time 20s` a benchmark) and under a
//! `--suite-time` of a quarter of the unhurried run's wall time. It prints
//! the time of each, how many verdicts agree, and each disagreement with
//! both ratios, so that one can see whether it is a close call.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::command::selftest::runs::run_host;
use crate::output::escape::terminal;
use crate::results::{SuiteBenchmark, SuiteComparison};

/// The bundled `run(count, seed)` workloads compared with themselves: the
/// many short benchmarks, each "the same".
const SHORT_SAME: &[&str] = &[
    "xor",
    "search",
    "search-branchless",
    "remove",
    "sort-merge",
    "sort-insertion",
    "mod16",
    "chain200",
];

/// Benchmarks whose two sides differ by much (reference, other).
const LARGE: &[(&str, &str, &str)] = &[
    ("mod", "mod16", "mod13"),
    ("search-kind", "search-branchless", "search-branchy"),
];

/// Benchmarks whose sides differ by about 1%: a `run(count, seed)` pair
/// and a pair of programs.
const CLOSE: &[(&str, &str, &str)] = &[("chain", "chain100", "chain101")];
const CLOSE_PROGRAMS: &[(&str, &str, &str)] = &[("steps", "steps100", "steps101")];

/// Iterations of the long programs' loop: a few hundred ms an iteration.
const LONG_LOOP: u64 = 600_000_000;

/// What the check found.
#[derive(Debug, Serialize)]
pub(super) struct SchedulerFigures {
    benchmarks: usize,
    unhurried_s: f64,
    suite_time_s: f64,
    hurried_s: f64,
    /// Benchmarks whose verdict is the same in both runs.
    agree: usize,
    differ: Vec<Differ>,
    /// Benchmarks of the hurried run that stopped at their time, unsettled.
    capped: usize,
    /// Each run's geometric mean of the ratios.
    geometric_means: (f64, f64),
}

/// A benchmark whose verdicts differ: its name, then each run's verdict and
/// ratio with its interval.
#[derive(Debug, Serialize)]
struct Differ {
    name: String,
    unhurried: (String, f64, f64, f64),
    hurried: (String, f64, f64, f64),
}

pub(super) fn scheduler(workloads: &Path) -> Result<SchedulerFigures> {
    let folder = tempfile::tempdir().context("a temporary suite")?;
    let (old, new) = (folder.path().join("old"), folder.path().join("new"));
    let benchmarks = synthetic_suite(workloads, &old, &new)?;
    println!(
        "scheduler: a synthetic suite of {benchmarks} benchmarks ({} short alike, {} far apart, {} close, 2 long programs), unhurried (--time 20s) then under --suite-time",
        SHORT_SAME.len(),
        LARGE.len(),
        CLOSE.len() + CLOSE_PROGRAMS.len()
    );
    let paths = [old.as_path(), new.as_path()];
    let started = Instant::now();
    let unhurried: SuiteComparison = run_host(&["compare"], &paths, &["--time", "20s"])?;
    let unhurried_s = started.elapsed().as_secs_f64();
    let suite_time_s = (unhurried_s / 4.0).ceil();
    let budget = format!("{suite_time_s}s");
    let started = Instant::now();
    let hurried: SuiteComparison = run_host(&["compare"], &paths, &["--suite-time", &budget])?;
    let hurried_s = started.elapsed().as_secs_f64();
    let figures = tally(&unhurried, &hurried, (unhurried_s, suite_time_s, hurried_s));
    print(&figures);
    Ok(figures)
}

/// Fill `old` and `new` with the synthetic suite; how many benchmarks.
fn synthetic_suite(workloads: &Path, old: &Path, new: &Path) -> Result<usize> {
    for side in [old, new] {
        std::fs::create_dir_all(side).context("a side's folder")?;
    }
    let copy = |from: &str, to: &Path| -> Result<()> {
        let source = workloads.join(from);
        std::fs::copy(&source, to).with_context(|| format!("copying {}", source.display()))?;
        Ok(())
    };
    for name in SHORT_SAME {
        copy(&format!("{name}.wasm"), &old.join(format!("{name}.wasm")))?;
        copy(&format!("{name}.wasm"), &new.join(format!("{name}.wasm")))?;
    }
    for (name, reference, other) in LARGE.iter().chain(CLOSE) {
        copy(
            &format!("{reference}.wasm"),
            &old.join(format!("{name}.wasm")),
        )?;
        copy(&format!("{other}.wasm"), &new.join(format!("{name}.wasm")))?;
    }
    // A program reads its input by its own name: each side's program is
    // `NAME/benchmark.wasm` (named NAME, as Sightglass's are) beside its
    // input, its expected output renamed to match.
    for (name, reference, other) in CLOSE_PROGRAMS {
        for (side, program) in [(old, reference), (new, other)] {
            let folder = side.join(name);
            std::fs::create_dir_all(&folder).context("a program's folder")?;
            copy(&format!("{program}.wasm"), &folder.join("benchmark.wasm"))?;
            let input = format!("{program}.input.txt");
            copy(&input, &folder.join(&input))?;
            for stream in ["stdout", "stderr"] {
                let expected = format!("{program}.{stream}.expected");
                copy(
                    &expected,
                    &folder.join(format!("benchmark.{stream}.expected")),
                )?;
            }
        }
    }
    let long = |loops: u64| long_program(loops);
    for (side, slower) in [(old, LONG_LOOP), (new, LONG_LOOP * 5 / 4)] {
        std::fs::write(side.join("long-same.wat"), long(LONG_LOOP))?;
        std::fs::write(side.join("long-slower.wat"), long(slower))?;
    }
    Ok(SHORT_SAME.len() + LARGE.len() + CLOSE.len() + CLOSE_PROGRAMS.len() + 2)
}

/// A WASI program whose `_start` spins `loops` times, its result stored
/// where the host can read it (so that no compiler deletes the loop).
fn long_program(loops: u64) -> String {
    format!(
        r#"(module
  (memory (export "memory") 1)
  (func (export "_start") (local $i i64) (local $acc i64)
    (loop $spin
      (local.set $acc (i64.add (local.get $acc) (i64.mul (local.get $i) (local.get $i))))
      (local.set $i (i64.add (local.get $i) (i64.const 1)))
      (br_if $spin (i64.lt_u (local.get $i) (i64.const {loops}))))
    (i64.store (i32.const 0) (local.get $acc))))
"#
    )
}

/// The verdict of a benchmark's one comparison and its ratio.
fn verdict(benchmark: &SuiteBenchmark) -> (String, f64, f64, f64) {
    match benchmark
        .report
        .as_ref()
        .and_then(|r| r.comparisons.first())
    {
        Some(c) => (
            c.verdict.to_string(),
            c.ratio.value,
            c.ratio.low,
            c.ratio.high,
        ),
        None => ("none".into(), f64::NAN, f64::NAN, f64::NAN),
    }
}

/// The two runs side by side.
fn tally(
    unhurried: &SuiteComparison,
    hurried: &SuiteComparison,
    (unhurried_s, suite_time_s, hurried_s): (f64, f64, f64),
) -> SchedulerFigures {
    let mut agree = 0;
    let mut differ = Vec::new();
    for before in &unhurried.benchmarks {
        let after = hurried.benchmarks.iter().find(|b| b.name == before.name);
        let (v0, v1) = (verdict(before), after.map(verdict));
        match v1 {
            Some(v1) if v1.0 == v0.0 => agree += 1,
            v1 => differ.push(Differ {
                name: terminal(&before.name).into_owned(),
                unhurried: v0,
                hurried: v1.unwrap_or(("none".into(), f64::NAN, f64::NAN, f64::NAN)),
            }),
        }
    }
    let mean = |s: &SuiteComparison| {
        s.summary
            .geometric_means
            .first()
            .map_or(f64::NAN, |g| g.ratio.value)
    };
    SchedulerFigures {
        benchmarks: unhurried.benchmarks.len(),
        unhurried_s,
        suite_time_s,
        hurried_s,
        agree,
        differ,
        capped: hurried.summary.capped,
        geometric_means: (mean(unhurried), mean(hurried)),
    }
}

fn print(f: &SchedulerFigures) {
    println!(
        "  unhurried {:.1} s; --suite-time {:.0}s took {:.1} s ({:+.1}% of it); {} of {} verdicts agree, {} stopped at their time; geometric means {:.4}× and {:.4}×",
        f.unhurried_s,
        f.suite_time_s,
        f.hurried_s,
        (f.hurried_s / f.suite_time_s - 1.0) * 100.0,
        f.agree,
        f.benchmarks,
        f.capped,
        f.geometric_means.0,
        f.geometric_means.1
    );
    for d in &f.differ {
        let (a, b) = (&d.unhurried, &d.hurried);
        println!(
            "  {}: unhurried {} {:.4}× [{:.4}, {:.4}], hurried {} {:.4}× [{:.4}, {:.4}]",
            d.name, a.0, a.1, a.2, a.3, b.0, b.1, b.2, b.3
        );
    }
}
