//! The Callgrind pass: deterministic cost of the machine code that runs.
//!
//! The parent runs one worker under `valgrind --tool=callgrind` with
//! collecting off ([`valgrind_command`]); the worker brackets exactly the
//! region it counts with client requests
//! ([`crate::platform::valgrind`]): zero the counts, collect, call, stop,
//! dump, then reads the dump back ([`crate::analysis::cost`]).
//! - a `run(count, seed)` workload: a call at [`OPS`] ops and one at twice
//!   as many, after two warm-up calls, on the engine that is timed; the
//!   difference per op cancels the call's fixed cost (as the fuel pass
//!   does);
//! - a program: one iteration after a warm-up one, counted per phase:
//!   instantiation, and the execute region (between `bench.start` and
//!   `bench.end`, summed over the pairs and divided by their number, or the
//!   whole run, as it is timed).
//!
//! Callgrind simulates caches and the branch predictor, so the counts
//! repeat to the last digit from run to run.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::analysis::cost::{self, Totals};
use crate::benchmark::progress::{Call, Progress};
use crate::benchmark::session::Session;
use crate::guest::Contract;
use crate::guest::instance::Instance;
use crate::guest::load::Workload;
use crate::guest::program::{Hooks, Program};
use crate::options::Settings;
use crate::platform::valgrind;
use crate::results::{CallgrindCounts, Row};

/// Ops of the first counted call of a workload (the second takes twice as
/// many): enough to see the loop, few enough for Callgrind's ~50× pace.
pub const OPS: u64 = 4096;
/// File name of Callgrind's output in the pass's folder; dumps are
/// `callgrind.out.1`, `callgrind.out.2`, ...
pub const OUT_FILE: &str = "callgrind.out";

/// What one row counted.
pub struct Counted {
    /// Per op (a program: per execute region).
    pub per_op: CallgrindCounts,
    /// A program's instantiation.
    pub instantiate: Option<CallgrindCounts>,
}

/// The command that runs a worker under Callgrind, writing into `folder`:
/// Valgrind's path and arguments, the host binary and its own arguments
/// follow.
pub fn valgrind_command(folder: &Path) -> Result<(PathBuf, Vec<OsString>)> {
    let valgrind = find_in_path("valgrind").context(
        "--metric cycles-est needs Valgrind, which is not installed: install it with `sudo apt-get install valgrind` (Debian, Ubuntu) or `sudo dnf install valgrind` (Fedora)",
    )?;
    let mut out = OsString::from("--callgrind-out-file=");
    out.push(folder.join(OUT_FILE));
    let args = [
        "--tool=callgrind",
        "--collect-atstart=no",
        "--cache-sim=yes",
        "--branch-sim=yes",
        "--quiet",
    ]
    .into_iter()
    .map(OsString::from)
    .chain([out])
    .collect();
    Ok((valgrind, args))
}

/// `name` in a folder of `$PATH`, if it is there.
fn find_in_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|folder| folder.join(name))
            .find(|candidate| candidate.is_file())
    })
}

/// Callgrind's dumps of this worker, read back as they are written.
pub struct Dumps {
    folder: PathBuf,
    taken: usize,
}

impl Dumps {
    /// Dumps written into `folder`; fails unless this process runs under
    /// Valgrind.
    pub fn new(folder: &Path) -> Result<Self> {
        if !valgrind::running_on_valgrind() {
            bail!("the Callgrind pass must run under `valgrind --tool=callgrind`");
        }
        Ok(Dumps {
            folder: folder.to_path_buf(),
            taken: 0,
        })
    }

    /// Dump the counts collected since they were last zeroed, and read them.
    pub fn take(&mut self) -> Result<Totals> {
        valgrind::dump_stats();
        self.taken += 1;
        let path = self.folder.join(format!("{OUT_FILE}.{}", self.taken));
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading Callgrind's dump {}", path.display()))?;
        cost::parse_dump(&text).with_context(|| format!("reading {}", path.display()))
    }

    /// Zero the counts and start collecting.
    fn start(&mut self) {
        valgrind::zero_stats();
        valgrind::toggle_collect();
    }

    /// Stop collecting and read the counts.
    fn stop(&mut self) -> Result<Totals> {
        valgrind::toggle_collect();
        self.take()
    }

    /// Zero the counts, collect while `f` runs, and read them.
    fn around<T>(&mut self, f: impl FnOnce() -> Result<T>) -> Result<(T, Totals)> {
        self.start();
        let result = f();
        let totals = self.stop()?;
        Ok((result?, totals))
    }
}

/// Count `row` of `workload`.
pub fn count_row(
    settings: &Settings,
    session: &Session,
    workload: &Workload,
    row: &Row,
    dumps: &mut Dumps,
    progress: &dyn Progress,
) -> Result<Counted> {
    if let Contract::Program { .. } = workload.contract {
        return count_program(settings, session, workload, row, dumps, progress);
    }
    let linkers = &session.sets[row.engine_set].linkers;
    progress.calling(Call::Instantiate);
    let mut instance = Instance::new(linkers, &workload.code, &row.export, session.limits)?;
    let size = row.size.unwrap_or(0);
    progress.calling(Call::Setup { size });
    instance.setup(size)?;
    for _ in 0..2 {
        progress.calling(Call::Run { count: 2 * OPS });
        instance.sample(2 * OPS, session.seed)?;
    }
    progress.calling(Call::Run { count: OPS });
    let (_, one) = dumps.around(|| instance.sample(OPS, session.seed))?;
    progress.calling(Call::Run { count: 2 * OPS });
    let (_, two) = dumps.around(|| instance.sample(2 * OPS, session.seed))?;
    Ok(Counted {
        per_op: cost::per_op(one, two, OPS),
        instantiate: None,
    })
}

/// What a program's counted iteration leaves.
struct PhaseCounts<'a> {
    dumps: &'a mut Dumps,
    instantiate: Option<Totals>,
    execute: Option<Totals>,
}

impl Hooks for PhaseCounts<'_> {
    fn before_instantiate(&mut self) -> Result<()> {
        self.dumps.start();
        Ok(())
    }
    fn after_instantiate(&mut self) -> Result<()> {
        self.instantiate = Some(self.dumps.stop()?);
        Ok(())
    }
    fn before_run(&mut self, whole: bool) -> Result<()> {
        // Otherwise the program's own bench.start starts collecting.
        match whole {
            true => self.dumps.start(),
            false => valgrind::zero_stats(),
        }
        Ok(())
    }
    fn after_run(&mut self, whole: bool, collecting: bool) -> Result<()> {
        self.execute = Some(match whole || collecting {
            true => self.dumps.stop()?,
            false => self.dumps.take()?,
        });
        Ok(())
    }
}

fn count_program(
    settings: &Settings,
    session: &Session,
    workload: &Workload,
    row: &Row,
    dumps: &mut Dumps,
    progress: &dyn Progress,
) -> Result<Counted> {
    let program = Program::counting(&row.path, &workload.code, &settings.grants, session.limits)?;
    progress.calling(Call::Start);
    program.iterate()?;
    let mut hooks = PhaseCounts {
        dumps,
        instantiate: None,
        execute: None,
    };
    progress.calling(Call::Start);
    let iteration = program.iterate_with(&mut hooks)?;
    let (Some(instantiate), Some(execute)) = (hooks.instantiate, hooks.execute) else {
        bail!("the counted iteration left no counts");
    };
    let regions = iteration.execute_ns.len().max(1) as f64;
    Ok(Counted {
        per_op: cost::counts(execute, regions),
        instantiate: Some(cost::counts(instantiate, 1.0)),
    })
}
