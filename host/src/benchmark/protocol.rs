//! What crosses between the parent and a worker process, and nothing else:
//! the parent writes one [`Job`] as JSON on the worker's stdin (a
//! [`WorkerPlan`] and a [`Task`]); the worker answers with [`Event`]s, one
//! JSON line each, on a pipe of their own the parent made (descriptor
//! [`EVENTS_FD`] in the worker), never on its stdout or stderr, where the
//! engine, an engine library or the code it links may print anything.
//!
//! The plan holds only what a worker needs, decided once by the parent
//! ([`crate::benchmark::parent::plan`]): the core, the priority, the seeds,
//! the engines and the compile cache, the limits, the sampling targets and
//! the grants of programs. The parent keeps the rest (the stop rule, the
//! call deadline, what the report says of the run).

use std::num::NonZeroU64;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::benchmark::progress::{Call, Step};
use crate::guest::load::Checked;
use crate::guest::program::TimedRegion;
use crate::options::{EngineConfig, Grants, PinRequest, PriorityRequest, SeedRule};
use crate::results::{
    CalibrationFigures, CallgrindCounts, HardwareCounts, Measurement, Row, RowProfile,
};

/// The descriptor a worker writes its events on: the write end of the pipe
/// the parent made for them.
pub const EVENTS_FD: i32 = 3;
/// The longest event line the parent reads, in bytes: a longer one is an
/// error for that worker (the largest events, a profile's or a long run's
/// samples, are well under a MiB).
pub const MAX_EVENT_BYTES: usize = 16 << 20;

/// How much one process samples of one benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Share {
    /// Exactly this many samples (at least one).
    Samples(usize),
    /// Sample for this long (at least one block).
    Time(Duration),
    /// This many blocks of about 25 ms (the worker's `BLOCK_TIME`).
    Blocks(usize),
}

/// File name of Callgrind's output in a counting worker's folder (the
/// parent names it to Valgrind; the worker reads its dumps back):
/// dumps are `callgrind.out.1`, `callgrind.out.2`, ...
pub const CALLGRIND_OUT_FILE: &str = "callgrind.out";

/// What the parent asks of one worker.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Job {
    pub plan: WorkerPlan,
    pub task: Task,
}

impl Job {
    /// The job as a worker is sent it: the files checked cut down to the
    /// ones its task's rows name, so that what a worker reads (and, under
    /// Callgrind, the heap it moves) depends on its own rows only.
    pub fn for_worker(&self) -> Job {
        let rows = self.task.rows();
        let named = |c: &Checked| {
            rows.iter()
                .any(|r| r.path == c.path && r.engine_set == c.engine_set)
        };
        let mut job = self.clone();
        job.plan.checked.retain(named);
        job
    }
}

/// What a worker needs to know to measure, whatever its task.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkerPlan {
    /// The measuring core: a core fixed by the parent, or none.
    pub pin: PinRequest,
    pub priority: PriorityRequest,
    pub seeds: Seeding,
    /// One entry per `--engine`, in order.
    pub engines: Vec<EngineConfig>,
    /// The compile cache folder, which the parent filled; `None` with
    /// `--no-cache`.
    pub cache: Option<PathBuf>,
    /// Cap on each instance's linear memories and tables, in bytes.
    pub max_memory_bytes: u64,
    /// Ask for transparent huge pages for workloads' linear memories.
    #[serde(default)]
    pub huge_pages: bool,
    /// Largest workload file read, in bytes.
    pub max_file_bytes: u64,
    /// Target duration of one sample.
    pub sample_time: Duration,
    /// Upper bound on the warm-up of one row.
    pub warmup_cap: Duration,
    /// Operations per sample, when the user fixed it.
    pub count: Option<NonZeroU64>,
    /// What programs are granted beyond their own folder.
    pub grants: Grants,
    /// What the parent checked of each file (its format, contract and
    /// digest): a worker loads only these, and checks none of it again.
    #[serde(default)]
    pub checked: Vec<Checked>,
}

/// The seeds of a worker's guest calls (see
/// [`crate::benchmark::parent::plan::seeding`] for the rule that picks
/// them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seeding {
    /// The seed of the timed calls: the run's seed.
    pub timed: u64,
    /// The seed of the counted calls (fuel, Callgrind).
    pub counted: u64,
    /// Whether each call gets a seed of its own, derived from these.
    pub rule: SeedRule,
}

/// The work of one worker.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Task {
    /// Measure these rows, in this order.
    Rows(Vec<RowJob>),
    /// Compare these variants in interleaved rounds.
    Compare {
        variants: Vec<Row>,
        /// The shared count, once a worker has fixed it.
        count: Option<u64>,
        rounds: usize,
        /// Rotate the order of the variants starting here.
        offset: usize,
        /// Count instructions too.
        fuel: bool,
        /// The time the comparison has left, counted from when the task
        /// begins: no round is begun that would end past it (the first
        /// `least` are always taken), and no variant warms up for more than
        /// a quarter of it.
        #[serde(default)]
        budget: Option<Duration>,
        /// Rounds taken whatever the budget.
        least: usize,
    },
    /// Count these rows with Callgrind (the worker runs under it), its
    /// output going into `folder`.
    Callgrind { rows: Vec<RowJob>, folder: PathBuf },
    /// Profile these rows, each for `duration`, a stack sample every
    /// `interval`, writing the profiles into `folder`.
    Profile {
        rows: Vec<RowJob>,
        duration: Duration,
        interval: Duration,
        folder: PathBuf,
    },
    /// Run each of these programs once, for what it writes to stdout
    /// (`host run --save-expected`).
    Output(Vec<RowJob>),
}

impl Task {
    /// The rows (or variants) of the task, in its order.
    pub fn rows(&self) -> Vec<&Row> {
        match self {
            Task::Rows(jobs)
            | Task::Callgrind { rows: jobs, .. }
            | Task::Profile { rows: jobs, .. }
            | Task::Output(jobs) => jobs.iter().map(|j| &j.row).collect(),
            Task::Compare { variants, .. } => variants.iter().collect(),
        }
    }
}

/// One row of a task.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RowJob {
    /// The row's index in the parent's list: events name it.
    pub index: usize,
    pub row: Row,
    /// The count every process takes, once the first has fixed it.
    pub count: Option<u64>,
    pub share: Share,
    /// Count instructions too.
    pub fuel: bool,
    /// Count with the hardware counters too.
    #[serde(default)]
    pub counters: bool,
}

impl RowJob {
    /// Row `index` counted or profiled once: no count fixed, one sample,
    /// nothing counted beside.
    pub fn once(index: usize, row: Row) -> Self {
        RowJob {
            index,
            row,
            count: None,
            share: Share::Samples(1),
            fuel: false,
            counters: false,
        }
    }

    /// Each row not yet `answered`, once ([`RowJob::once`]), numbered by
    /// its place there; `row` gives the row of a place.
    pub fn left<T>(answered: &[Option<T>], row: impl Fn(usize) -> Row) -> Vec<Self> {
        answered
            .iter()
            .enumerate()
            .filter(|(_, answer)| answer.is_none())
            .map(|(i, _)| RowJob::once(i, row(i)))
            .collect()
    }
}

/// What a worker tells the parent.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Event {
    /// Calibrated and loaded: where and how it measures.
    Ready { found: Found },
    /// Row (or variant) `row` entered `step`.
    Step { row: usize, step: Step },
    /// A guest call of row `row` is about to begin.
    Calling { row: usize, call: Call },
    /// The current estimate of row `row`.
    Estimate {
        row: usize,
        ns_per_op: f64,
        err_pct: f64,
    },
    /// Row `row` is measured in this process.
    Measured {
        row: usize,
        measured: ProcessMeasurement,
    },
    /// Row `row` failed in this process (the worker goes on): the error's
    /// chain in one line, and whether it says the row's engine cannot run
    /// it ([`crate::guest::lacking`]).
    Failed {
        row: usize,
        error: String,
        #[serde(default)]
        unsupported: bool,
    },
    /// Row `row`, counted by Callgrind.
    Counted {
        row: usize,
        per_op: CallgrindCounts,
        instantiate: Option<CallgrindCounts>,
    },
    /// Row `row`, profiled.
    Profiled { row: usize, profile: RowProfile },
    /// Program row `row` ran once: what it wrote to stdout, as hex (two
    /// digits a byte).
    Output { row: usize, stdout: String },
    /// The variants of a comparison, in the job's order.
    Compared {
        count: u64,
        rounds: usize,
        variants: Vec<ProcessMeasurement>,
    },
}

/// What a worker found where it measures, once it is ready: the facts of
/// the report's environment that only the worker can know.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Found {
    /// The core the measuring thread is pinned to, if pinning succeeded.
    pub pinned_core: Option<usize>,
    /// Cores the worker may use.
    pub cores: usize,
    /// Scheduler and priority in force.
    pub priority: String,
    /// The clock and the empty guests' calls.
    #[serde(flatten)]
    pub calibration: CalibrationFigures,
    pub cpu_model: Option<String>,
    /// What preparing the measuring thread could not do.
    pub warnings: Vec<String>,
    /// Whether hardware counters can be read, and why not.
    pub pmu: String,
}

/// What one process measured of one row.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProcessMeasurement {
    pub measurement: Measurement,
    pub instantiate_ms: f64,
    pub fuel_per_op: Option<f64>,
    /// The hardware counters per op, or why they could not count.
    #[serde(default)]
    pub hardware_counters: Option<Result<HardwareCounts, String>>,
    /// Programs: instantiation of every iteration, and the timed region.
    pub program: Option<ProgramMeasurement>,
    /// The most linear memory the instance held, where its runtime tells.
    #[serde(default)]
    pub peak_memory_bytes: Option<u64>,
    /// Programs: the peak resident memory of the process they ran in.
    #[serde(default)]
    pub peak_rss_bytes: Option<u64>,
    /// The compiled code's size, where the runtime told the worker.
    #[serde(default)]
    pub code_bytes: Option<u64>,
    /// How long the runtime took to compile the guest in this process (or
    /// in its own, V8's), in ms, where it compiled the file itself: the
    /// row's compile phase, rather than the parent's wasmtime compile (or
    /// cache load) of the file.
    #[serde(default)]
    pub compile_ms: Option<f64>,
    /// Fresh instances' start (a program: the first iteration; boxed: the
    /// events stay small).
    #[serde(default)]
    pub start: Option<Box<StartMeasurement>>,
}

/// What fresh instances of a workload took in one process, in ns, one
/// value per instance: their instantiation and their first call.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct StartMeasurement {
    pub instantiate_ns: Vec<f64>,
    pub first_call_ns: Vec<f64>,
    /// Why a fresh instance failed (the error's chain in one line), which
    /// ended them: the row's own measurement stands.
    #[serde(default)]
    pub failed: Option<String>,
}

/// What a program adds to a [`ProcessMeasurement`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProgramMeasurement {
    pub instantiate_ns: Vec<f64>,
    /// Compilation of every iteration, in ns; empty when the program is
    /// compiled once, not per iteration.
    #[serde(default)]
    pub compile_ns: Vec<f64>,
    pub region: TimedRegion,
}
