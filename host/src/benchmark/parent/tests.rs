//! The schedulers through the fake executor: the stop rule, the lost-worker
//! policy, a hung worker and Ctrl-C, with no process started.

use std::path::Path;

use anyhow::{Result, bail};
use clap::Parser;

use crate::benchmark::parent::driver::LOST_WORKERS;
use crate::benchmark::parent::executor::Next;
use crate::benchmark::parent::fake::{self, Fake};
use crate::benchmark::parent::plan::RunPlan;
use crate::benchmark::parent::row::{Compiled, RowState, Status};
use crate::benchmark::parent::run::{Observer, Run};
use crate::benchmark::parent::stop::{LIBRARY_SHARE, MAX_PROCESSES, MIN_PROCESSES};
use crate::benchmark::progress::{Call, Silent};
use crate::benchmark::protocol::Event;
use crate::benchmark::protocol::Share;
use crate::options::Settings;
use crate::results::{BenchResult, Environment, Foreign, Row, RunReport, StopReason};

/// The settings of `host run` with `args`, unpinned, without a cache (and
/// so without a run history), seed 1.
fn settings(args: &[&str]) -> Result<Settings> {
    let mut argv = vec![
        "host",
        "run",
        "x.wasm",
        "--no-pin",
        "--no-cache",
        "--seed",
        "1",
    ];
    argv.extend_from_slice(args);
    match crate::cli::Cli::try_parse_from(argv)?.command {
        crate::cli::Command::Run(run) => Settings::from_run_args(run),
        _ => bail!("not a run"),
    }
}

/// A loaded module row named `name`.
fn row(name: &str) -> RowState {
    RowState {
        row: Row::new(
            Path::new(&format!("{name}.wasm")),
            name,
            "run",
            None,
            0,
            None,
        ),
        compiled: Ok(Compiled::module_for_tests()),
        processes: Vec::new(),
        error: None,
        count: None,
        spent: std::time::Duration::ZERO,
        status: Status::Measuring,
        subject: None,
        counts: None,
        stopped: None,
    }
}

/// Keeps what it is told.
#[derive(Default)]
struct Seen {
    started: bool,
    results: Vec<BenchResult>,
}

impl Observer for Seen {
    fn start(&mut self, _env: &Environment, _rows: &[String]) {
        self.started = true;
    }
    fn result(&mut self, result: &BenchResult) {
        self.results.push(result.clone());
    }
}

/// Schedule `names` under `settings` with `fake`'s workers.
fn schedule(settings: &Settings, names: &[&str], fake: &Fake) -> Result<(RunReport, Seen)> {
    let states: Vec<RowState> = names.iter().map(|n| row(n)).collect();
    let run = Run {
        settings,
        plan: RunPlan::settle(settings),
        watched: None,
        saved: None,
        names: states.iter().map(|s| s.row.name.clone()).collect(),
        states,
    };
    let mut seen = Seen::default();
    let report = run.schedule(fake, &mut seen, &Silent)?;
    Ok((report, seen))
}

/// The result of row `name`.
fn result<'r>(report: &'r RunReport, name: &str) -> &'r BenchResult {
    let found = report.results.iter().find(|r| r.name == name);
    found.unwrap_or_else(|| panic!("no result for {name}: {:?}", report.results))
}

#[test]
fn a_precise_row_takes_the_fewest_processes_and_stops() -> Result<()> {
    let settings = settings(&["--precision", "1"])?;
    let fake = Fake::new(|n, job| fake::measuring(job, |_| 1e6 + n as f64));
    let (report, seen) = schedule(&settings, &["a"], &fake)?;
    // Precise from the first process on, yet not stopped below the floor.
    assert_eq!(fake.started(), MIN_PROCESSES);
    let figures = result(&report, "a").figures.as_ref().expect("measured");
    assert!(figures.precision_reached);
    assert_eq!(figures.stopped_by, Some(StopReason::PrecisionReached));
    assert!(seen.started && seen.results.len() == 1);
    Ok(())
}

#[test]
fn a_row_starts_as_its_processes_fresh_instances_did() -> Result<()> {
    let settings = settings(&["--precision", "1"])?;
    let fake = Fake::new(|n, job| fake::measuring(job, |_| 1e6 + n as f64));
    let (report, _) = schedule(&settings, &["a"], &fake)?;
    let figures = result(&report, "a").figures.as_ref().expect("measured");
    let start = figures.start.as_ref().expect("a start");
    // Each fake process made three instances: 900, 1000, 1100 ns.
    assert_eq!(start.instantiate_ns.samples, 3 * fake.started());
    assert_eq!(start.instantiate_ns.median, 1000.0);
    assert_eq!(
        (start.instantiate_ns.min, start.instantiate_ns.max),
        (900.0, 1100.0)
    );
    assert_eq!(start.first_call_ns.median, 5000.0);
    let i = &start.instantiate_ns;
    assert!(i.ci95_low <= i.median && i.median <= i.ci95_high);
    Ok(())
}

#[test]
fn a_row_that_never_settles_stops_at_the_most_processes() -> Result<()> {
    let settings = settings(&["--precision", "1"])?;
    // Every other process twice as slow: the interval never narrows.
    let fake = Fake::new(|n, job| fake::measuring(job, |_| 1e6 * (1 + n % 2) as f64));
    let (report, _) = schedule(&settings, &["a"], &fake)?;
    assert_eq!(fake.started(), MAX_PROCESSES);
    let figures = result(&report, "a").figures.as_ref().expect("measured");
    assert!(!figures.precision_reached);
    assert_eq!(figures.stopped_by, Some(StopReason::IterationCap));
    Ok(())
}

/// A program under an engine library: every process takes the library's
/// share (an iteration compiles anew, so a process takes several), and the
/// row goes on past the built-in engines' budget until it is precise.
#[test]
fn a_library_program_row_takes_its_share_and_stops_when_precise() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let library = dir.path().join("libengine.so");
    std::fs::write(&library, b"not loaded by the fake workers")?;
    let library = library.display().to_string();
    let settings = settings(&["--engine", &library])?;
    let fake = Fake::new(|n, job| {
        // A process takes longer than the built-in engines' budget shared
        // over the fewest processes; processes differ by ±1%, so that the
        // interval comes within 1% after a few more.
        std::thread::sleep(std::time::Duration::from_millis(450));
        let ns = 1e6 * (1.0 + 0.01 * [-1.0, 1.0][n % 2]);
        fake::measuring(job, move |_| ns)
    });
    let mut state = row("p");
    if let Ok(compiled) = &mut state.compiled {
        compiled.program = true;
    }
    let run = Run {
        settings: &settings,
        plan: RunPlan::settle(&settings),
        watched: None,
        saved: None,
        names: vec![state.row.name.clone()],
        states: vec![state],
    };
    let report = run.schedule(&fake, &mut Seen::default(), &Silent)?;
    for job in fake.jobs.borrow().iter() {
        assert!(
            fake::rows(job)
                .iter()
                .all(|r| r.share == Share::Time(LIBRARY_SHARE)),
            "{job:?}"
        );
    }
    // Past the built-in budget of 2 s (5 × 0.45 s), on to precision.
    assert!(fake.started() > MIN_PROCESSES, "{}", fake.started());
    let figures = result(&report, "p").figures.as_ref().expect("measured");
    assert_eq!(figures.stopped_by, Some(StopReason::PrecisionReached));
    Ok(())
}

#[test]
fn a_fixed_number_of_processes_is_taken_exactly() -> Result<()> {
    let settings = settings(&["--processes", "3", "--samples", "30"])?;
    let fake = Fake::new(|_, job| fake::measuring(job, |_| 1e6));
    let (report, _) = schedule(&settings, &["a", "b"], &fake)?;
    assert_eq!(fake.started(), 3);
    // Both rows in every worker, each taking its share of the samples.
    for job in fake.jobs.borrow().iter() {
        assert_eq!(fake::rows(job).len(), 2);
    }
    assert!(report.results.iter().all(|r| r.error.is_none()));
    Ok(())
}

#[test]
fn a_crash_fails_its_row_and_a_new_worker_takes_the_rest() -> Result<()> {
    let settings = settings(&["--processes", "1", "--samples", "5"])?;
    // The first worker crashes on the first row of its job.
    let fake = Fake::new(|n, job| {
        let mut answers = vec![fake::ready()];
        for (i, row) in fake::rows(job).iter().enumerate() {
            answers.extend(fake::calling(row.index, 1));
            if n == 0 && i == 0 {
                answers.push(fake::ended(11));
                return answers;
            }
            answers.push(fake::measured(row.index, 1e6));
        }
        answers
    });
    let (report, _) = schedule(&settings, &["a", "b", "c"], &fake)?;
    let jobs = fake.jobs.borrow();
    assert_eq!(jobs.len(), 2, "one worker replaced the one lost");
    let names =
        |job| -> Vec<String> { fake::rows(job).iter().map(|r| r.row.name.clone()).collect() };
    let (first, second) = (names(&jobs[0]), names(&jobs[1]));
    // The new worker is given only the rows the first never reached.
    assert_eq!(second, first[1..]);
    let crashed = &first[0];
    let error = result(&report, crashed)
        .error
        .as_ref()
        .map(Foreign::unescaped)
        .unwrap_or_default();
    assert_eq!(
        error,
        format!(
            "{crashed}.wasm (run): the worker process was killed by signal 11 (SIGSEGV) while measuring it"
        )
    );
    for name in &second {
        assert!(result(&report, name).figures.is_some(), "{name}");
    }
    Ok(())
}

#[test]
fn a_hung_call_fails_its_row_naming_the_call_and_the_timeout() -> Result<()> {
    let settings = settings(&["--processes", "1", "--samples", "5", "--timeout", "3s"])?;
    let fake = Fake::new(|_, job| {
        let mut answers = vec![fake::ready()];
        for row in fake::rows(job) {
            answers.extend(fake::calling(row.index, 64));
            if row.row.name == "hangs" {
                answers.extend(fake::calling(row.index, 128));
                answers.push(Next::TimedOut);
                return answers;
            }
            answers.push(fake::measured(row.index, 1e6));
        }
        answers
    });
    let (report, _) = schedule(&settings, &["hangs", "fine"], &fake)?;
    let error = result(&report, "hangs")
        .error
        .as_ref()
        .map(Foreign::unescaped)
        .unwrap_or_default();
    assert_eq!(
        error,
        "hangs.wasm (run): at count 128 (it had returned at count 64): `run` failed: did not return within --timeout 3s, the limit of one call (an infinite loop? if the call is only long, raise the limit with --timeout); the worker was killed"
    );
    assert!(result(&report, "fine").figures.is_some());
    Ok(())
}

#[test]
fn a_broken_event_channel_or_a_hung_library_load_fails_its_row_only() -> Result<()> {
    let settings = settings(&["--processes", "1", "--samples", "5", "--timeout", "2s"])?;
    let fake = Fake::new(|_, job| {
        let mut answers = vec![fake::ready()];
        for row in fake::rows(job) {
            match row.row.name.as_str() {
                "broken" => {
                    answers.extend(fake::calling(row.index, 64));
                    answers.push(Next::Broken("an event line longer than 16 MiB".into()));
                    return answers;
                }
                "loads" => {
                    answers.push(fake::event(Event::Calling {
                        row: row.index,
                        call: Call::Load,
                    }));
                    answers.push(Next::TimedOut);
                    return answers;
                }
                _ => answers.push(fake::measured(row.index, 1e6)),
            }
        }
        answers
    });
    let (report, _) = schedule(&settings, &["broken", "loads", "fine"], &fake)?;
    let error = |name| result(&report, name).error.clone().unwrap_or_default();
    assert_eq!(
        error("broken"),
        "broken.wasm (run): an event line longer than 16 MiB"
    );
    assert_eq!(
        error("loads"),
        "loads.wasm (run): loading the engine library did not finish within --timeout 2s (a constructor that hangs?); the worker was killed"
    );
    assert!(result(&report, "fine").figures.is_some());
    Ok(())
}

#[test]
fn workers_lost_between_rows_are_replaced_then_given_up_on() -> Result<()> {
    let settings = settings(&["--processes", "1", "--samples", "5"])?;
    // Two workers die before they are ready; the third measures.
    let fake = Fake::new(|n, job| match n {
        0 | 1 => vec![fake::ended(6)],
        _ => fake::measuring(job, |_| 1e6),
    });
    let (report, _) = schedule(&settings, &["a"], &fake)?;
    assert!(result(&report, "a").figures.is_some());
    assert_eq!(fake.started(), 3);
    // Every worker dies: the run gives up after LOST_WORKERS.
    let fake = Fake::new(|_, _| vec![fake::ended(6)]);
    let error = schedule(&settings, &["a"], &fake).err().expect("gives up");
    assert_eq!(fake.started(), LOST_WORKERS);
    assert_eq!(
        error.to_string(),
        format!(
            "the worker process was killed by signal 6 (SIGABRT) between rows, {LOST_WORKERS} times in a row: giving up"
        )
    );
    Ok(())
}

#[test]
fn ctrl_c_stops_the_run_with_the_rows_measured_so_far() -> Result<()> {
    let settings = settings(&["--processes", "5", "--samples", "50"])?;
    // The third worker is interrupted as it starts its first row.
    let fake = Fake::new(|n, job| match n {
        2 => vec![fake::ready(), Next::Interrupted],
        _ => fake::measuring(job, |_| 1e6),
    });
    let (report, seen) = schedule(&settings, &["a", "b"], &fake)?;
    assert_eq!(fake.started(), 3, "no worker after Ctrl-C");
    assert_eq!(
        report.stopped.as_ref().map(Foreign::unescaped),
        Some(crate::guest::sandbox::STOPPED)
    );
    assert_eq!(seen.results.len(), 2);
    for name in ["a", "b"] {
        let figures = result(&report, name).figures.as_ref().expect("measured");
        assert_eq!(figures.processes.processes, 2, "{name}");
    }
    Ok(())
}
