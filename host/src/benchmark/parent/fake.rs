//! An in-process [`Executor`] for the schedulers' unit tests: each worker
//! it "starts" answers from a script written for its job, with no process
//! behind it. A script is a list of [`Next`]s; after the last one, the
//! worker has exited cleanly. Ctrl-C is a [`Next::Interrupted`] in a
//! script: from then on the executor says it was pressed.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::Duration;

use anyhow::Result;

use crate::benchmark::parent::executor::{Executor, Next, WorkerProcess, Wrapper};
use crate::benchmark::progress::{Call, Step};
use crate::benchmark::protocol::{
    Event, Found, Job, ProcessMeasurement, RowJob, StartMeasurement, Task,
};
use crate::results::{Measurement, Warmup};

/// What a scripted worker answers to the `n`th job (from 0).
pub type Script = Box<dyn FnMut(usize, &Job) -> Vec<Next>>;

/// Starts scripted workers.
pub struct Fake {
    script: RefCell<Script>,
    /// Every job a worker was started on, in order.
    pub jobs: RefCell<Vec<Job>>,
    interrupted: Rc<Cell<bool>>,
}

impl Fake {
    pub fn new(script: impl FnMut(usize, &Job) -> Vec<Next> + 'static) -> Self {
        Fake {
            script: RefCell::new(Box::new(script)),
            jobs: RefCell::new(Vec::new()),
            interrupted: Rc::new(Cell::new(false)),
        }
    }

    /// How many workers were started.
    pub fn started(&self) -> usize {
        self.jobs.borrow().len()
    }
}

impl Executor for Fake {
    fn start(&self, job: &Job, _wrapper: Option<&Wrapper>) -> Result<Box<dyn WorkerProcess>> {
        let n = self.started();
        self.jobs.borrow_mut().push(job.clone());
        let answers = (self.script.borrow_mut())(n, job);
        Ok(Box::new(Scripted {
            answers: answers.into(),
            interrupted: Rc::clone(&self.interrupted),
        }))
    }

    fn interrupted(&self) -> bool {
        self.interrupted.get()
    }
}

/// A worker answering from its script.
struct Scripted {
    answers: VecDeque<Next>,
    interrupted: Rc<Cell<bool>>,
}

impl WorkerProcess for Scripted {
    fn next(&mut self, _deadline: Option<Duration>) -> Next {
        match self.answers.pop_front() {
            Some(Next::Interrupted) => {
                self.interrupted.set(true);
                Next::Interrupted
            }
            Some(next) => next,
            None => ended(0),
        }
    }
}

/// The worker exited with a raw wait status (0: success; a signal number:
/// killed by it).
pub fn ended(raw: i32) -> Next {
    use std::os::unix::process::ExitStatusExt;
    Next::Ended {
        status: Some(std::process::ExitStatus::from_raw(raw)),
        stderr: String::new(),
    }
}

/// `event`, as the worker's next answer.
pub fn event(event: Event) -> Next {
    Next::Event(Box::new(event))
}

/// The worker is ready.
pub fn ready() -> Next {
    event(Event::Ready {
        found: Found::default(),
    })
}

/// The rows of a job of rows.
pub fn rows(job: &Job) -> &[RowJob] {
    match &job.task {
        Task::Rows(rows) => rows,
        _ => &[],
    }
}

/// Row `row` entered sampling and is about to be called at `count`.
pub fn calling(row: usize, count: u64) -> [Next; 2] {
    [
        event(Event::Step {
            row,
            step: Step::Sampling,
        }),
        event(Event::Calling {
            row,
            call: Call::Run { count },
        }),
    ]
}

/// Row `row` measured: 20 samples of `ns` each (give or take 0.01%), at
/// count 1.
pub fn measured(row: usize, ns: f64) -> Next {
    event(Event::Measured {
        row,
        measured: process(ns, 1),
    })
}

/// One process's measurement: `blocks` blocks (a comparison's rounds) of
/// 20 samples of `ns` each (give or take 0.01%), at count 1.
pub fn process(ns: f64, blocks: usize) -> ProcessMeasurement {
    let block: Vec<f64> = (0..20)
        .map(|i| ns * (1.0 + 1e-4 * (i % 3) as f64))
        .collect();
    let measurement = Measurement {
        count: 1,
        warmup: Warmup {
            elapsed_ms: 1.0,
            settled: true,
            rounds: 1,
            per_op_ns: None,
            first_timed: 0,
        },
        blocks: vec![block; blocks],
        pauses: Vec::new(),
        doubles: Vec::new(),
        fixed_costs_ns: Vec::new(),
        fixed_cost_ns: 0.0,
        pause_pair_ns: 0.0,
        clock_resolution_ns: 1.0,
        checksum: None,
        sampling_ms: 1.0,
        count_capped: false,
    };
    ProcessMeasurement {
        measurement,
        instantiate_ms: 0.1,
        fuel_per_op: None,
        hardware_counters: None,
        peak_memory_bytes: None,
        peak_rss_bytes: None,
        code_bytes: None,
        compile_ms: None,
        program: None,
        start: Some(Box::new(StartMeasurement {
            instantiate_ns: vec![1000.0, 1100.0, 900.0],
            first_call_ns: vec![5000.0, 5200.0, 4800.0],
            failed: None,
        })),
    }
}

/// A worker that measures every row of `job`, each row's samples taking
/// `ns(row)`.
pub fn measuring(job: &Job, ns: impl Fn(usize) -> f64) -> Vec<Next> {
    let mut answers = vec![ready()];
    for row in rows(job) {
        answers.extend(calling(row.index, 1));
        answers.push(measured(row.index, ns(row.index)));
    }
    answers
}
