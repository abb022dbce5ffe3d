//! A row of a run as the parent follows it from process to process:
//! [`RowState`], what its guest is ([`Compiled`]), what each process
//! measured, how much of its budget it has spent, and whether it is
//! finished.

use std::time::Duration;

use crate::benchmark::parent::catalog::Planned;
use crate::benchmark::protocol::ProcessMeasurement;
use crate::guest::Kind;
use crate::guest::contract::Contract;
use crate::guest::runtime::wasmtime::cache::CacheOutcome;
use crate::options::Runtime;
use crate::results::modules::Module;
use crate::results::{CallgrindCounts, Measurement, Row, StopReason};

/// What a row's guest is, as its figures report it.
#[derive(Debug, Clone)]
pub struct Compiled {
    pub kind: Kind,
    /// A WASI program (rather than a `run(count, seed)` workload).
    pub program: bool,
    /// Compile time, counted on a file's first row only.
    pub compile_ms: f64,
    pub cache: CacheOutcome,
    /// The file's size and the compiled code's, where known.
    pub costs: crate::results::Costs,
    /// The module measured (none for native code), kept with the run.
    pub module: Option<Module>,
    /// The runtime that runs it.
    pub runtime: Runtime,
}

#[cfg(test)]
impl Compiled {
    /// A core module under wasmtime that needed no compile: for the
    /// schedulers' tests.
    pub fn module_for_tests() -> Self {
        Compiled {
            kind: Kind::Module,
            program: false,
            compile_ms: 0.0,
            cache: CacheOutcome::Off,
            costs: crate::results::Costs::default(),
            module: None,
            runtime: Runtime::Wasmtime,
        }
    }
}

impl Compiled {
    /// What `guest` is, as its rows' figures report it.
    pub fn of(guest: &crate::guest::GuestFile) -> Self {
        Compiled {
            kind: guest.kind(),
            program: matches!(guest.contract, Contract::Program { .. }),
            compile_ms: guest.compile_ms,
            cache: guest.cache.clone(),
            costs: costs(guest),
            module: module(guest),
            runtime: guest.engine.runtime,
        }
    }
}

/// The module `guest` measures, as the store keeps it; none for native
/// code.
pub fn module(guest: &crate::guest::GuestFile) -> Option<Module> {
    (guest.kind() != Kind::Native).then(|| Module {
        bytes: guest.bytes.clone(),
        file: crate::guest::name::workload_name(&guest.path),
    })
}

/// What `guest` costs besides time, as far as the parent knows: the
/// file's size and wasmtime's compiled code's (the peak memory, and
/// another runtime's code size, come from the workers).
pub fn costs(guest: &crate::guest::GuestFile) -> crate::results::Costs {
    crate::results::Costs {
        module_bytes: Some(guest.bytes.len() as u64),
        code_bytes: guest.code_bytes(),
        peak_memory_bytes: None,
        peak_rss_bytes: None,
    }
}

/// Where a row stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// More processes to come.
    Measuring,
    /// It has enough (or failed), and waits for the rows before it.
    Finished,
    /// Its result went to the observer.
    Reported,
}

/// Callgrind's counts of a row: per op (a program: per timed region), and a
/// program's instantiation.
#[derive(Debug, Clone, Copy)]
pub struct Counts {
    pub per_op: CallgrindCounts,
    pub instantiate: Option<CallgrindCounts>,
}

/// A row of a run, as the parent follows it.
pub struct RowState {
    pub row: Row,
    /// The guest, or why it failed to load (its kind when known).
    pub compiled: Result<Compiled, Option<Kind>>,
    /// What each process measured so far.
    pub processes: Vec<ProcessMeasurement>,
    /// Why the row failed.
    pub error: Option<anyhow::Error>,
    /// The count every process takes, once the first has fixed it.
    pub count: Option<u64>,
    /// Wall time spent on the row, compile included.
    pub spent: Duration,
    pub status: Status,
    /// What was measured, as the run history names it (loaded rows).
    pub subject: Option<String>,
    /// With `--metric cycles-est`.
    pub counts: Option<Counts>,
    /// What stopped its sampling, once something did.
    pub stopped: Option<StopReason>,
}

impl RowState {
    /// The state of `planned` before its first process, its subject as
    /// `subject` names it; `count` is the user's.
    pub fn new(planned: &Planned<'_>, count: Option<u64>, subject: Option<String>) -> Self {
        let (compiled, error) = match planned.file {
            Ok(w) => (Ok(Compiled::of(w)), None),
            Err(e) => (
                Err(e.kind),
                Some(
                    anyhow::Error::msg(crate::util::error::one_line(&e.error))
                        .context(planned.row.path.display().to_string()),
                ),
            ),
        };
        let compile_ms = compiled.as_ref().map_or(0.0, |c| c.compile_ms);
        RowState {
            row: planned.row.clone(),
            compiled,
            processes: Vec::new(),
            error,
            count,
            spent: Duration::from_secs_f64(compile_ms / 1e3),
            status: Status::Measuring,
            subject,
            counts: None,
            stopped: None,
        }
    }

    /// The row's kind: its guest's, else what the failed load knew.
    pub fn known_kind(&self) -> Option<Kind> {
        match &self.compiled {
            Ok(c) => Some(c.kind),
            Err(kind) => *kind,
        }
    }

    /// The row's kind, a module when not known.
    pub fn kind(&self) -> Kind {
        self.known_kind().unwrap_or(Kind::Module)
    }

    /// Whether the row is a WASI program.
    pub fn program(&self) -> bool {
        self.compiled.as_ref().is_ok_and(|c| c.program)
    }

    /// Whether more processes are to measure it.
    pub fn pending(&self) -> bool {
        self.status == Status::Measuring && self.error.is_none()
    }

    /// The measurement of each process so far.
    pub fn measurements(&self) -> Vec<Measurement> {
        self.processes
            .iter()
            .map(|s| s.measurement.clone())
            .collect()
    }
}

/// What names a row in its error: the file, the export, the size, and the
/// engine when several are measured (one file is then several rows).
pub fn describe(row: &Row) -> String {
    let size = row.size.map(|s| format!(", size {s}")).unwrap_or_default();
    let engine = row.engine.as_ref().map(|e| format!(", under {e}"));
    let engine = engine.unwrap_or_default();
    format!("{} ({}{size}{engine})", row.path.display(), row.export)
}

/// `error`, of `row`, with what names the row ([`describe`]) as its
/// context: typed [`UnderEngine`] when several engines are measured, so
/// that a suite across engines can tell which side failed.
pub fn failed(row: &Row, error: anyhow::Error) -> anyhow::Error {
    under(row, describe(row), error)
}

/// `error` of loading `row`'s file, with its path (and engine, as
/// [`failed`]) as its context.
pub fn not_loaded(row: &Row, error: anyhow::Error) -> anyhow::Error {
    let text = match &row.engine {
        Some(engine) => format!("{} (under {engine})", row.path.display()),
        None => row.path.display().to_string(),
    };
    under(row, text, error)
}

fn under(row: &Row, text: String, error: anyhow::Error) -> anyhow::Error {
    match &row.engine {
        Some(engine) => error.context(UnderEngine {
            engine: engine.clone(),
            text,
        }),
        None => error.context(text),
    }
}

/// The context of an error of a variant measured under one of several
/// engines: what names it, and the engine's short name.
#[derive(Debug)]
pub struct UnderEngine {
    pub engine: String,
    text: String,
}

impl std::fmt::Display for UnderEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// The engine (its short name) whose variant `error` is of, when several
/// were measured.
pub fn failed_engine(error: &anyhow::Error) -> Option<&str> {
    error
        .downcast_ref::<UnderEngine>()
        .map(|u| u.engine.as_str())
}
