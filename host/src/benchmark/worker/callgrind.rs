//! The Callgrind pass: deterministic cost of the machine code that runs.
//!
//! The parent runs workers under `valgrind --tool=callgrind` with
//! instrumentation and collecting off ([`valgrind_command`]): one for the
//! `run(count, seed)` workloads, one for each program (what a program leaves
//! in the worker would move the next one's counts), each given its rows
//! numbered from 0 and no paths but theirs, so that a row counts the same
//! whatever else the run measures. A worker's setup (engines, loading; no
//! calibration: [`Session::uncalibrated`]) runs unsimulated. Each row is counted
//! in a window of its own: instrumentation
//! on, which empties Callgrind's simulated caches, and its branch predictor
//! put in one fixed state ([`valgrind::reset_branch_predictor`]); the row's
//! warm-up and counted calls; instrumentation off. Within the window the
//! worker brackets exactly the region it counts with client requests
//! ([`crate::platform::valgrind`]): zero the counts, collect, call, stop,
//! dump. It reads the dumps back ([`crate::analysis::cost`]) after the
//! window, as their text (and so the work of reading it) varies from run to
//! run.
//! - a `run(count, seed)` workload: instantiated and set up before the
//!   window; in it, a call at [`OPS`] ops and one at twice as many, after
//!   two warm-up calls, on the engine that is timed; the difference per op
//!   cancels the call's fixed cost (as the fuel pass does);
//! - a program: its instantiation after a warm-up instantiation, then its
//!   execute region (between `bench.start` and `bench.end`, summed over the
//!   pairs and divided by their number, or the whole run, as it is timed) in
//!   an iteration after a warm-up iteration. The instantiations come first,
//!   before any WASI call (see below). All run on a thread of their own, so
//!   that their memory comes from an allocator arena and cache that the
//!   setup never used, as [`Program::counting`] runs them: imports resolved
//!   and WASI contexts built before the window, the guest's random numbers
//!   seeded, file operations on that thread, no clock read; with glibc's
//!   allocator on a fixed policy ([`steady_allocator`]); on an engine
//!   and code that the thread makes anew (the same configuration and machine
//!   code), not on the setup's, whose data sits where compiling or loading
//!   from the compile cache left it; and with wasmtime-wasi's runtime
//!   started, and its threads idle, before the first row
//!   ([`prepare_worker`]).
//!
//! Callgrind simulates caches and the branch predictor; as each window
//! starts from the same simulated state and runs the same work, the counts
//! repeat to the last digit from run to run, with one exception: at every
//! WASI preview1 call, wasmtime-wasi looks the guest's memory up by name in
//! a table hashed with keys drawn at random per process, so the call
//! touches other cache lines from run to run (and, when the hash's tag
//! collides, runs a few more instructions). A program that calls WASI in its
//! execute region sees that in its misses; calls before the region can
//! change which of its lines are still cached. And the run that compiles a
//! workload into the compile cache (or one with a cache folder of another
//! name) can count a few misses apart from the runs that load it: its setup
//! leaves the heap and the mappings laid out otherwise. A program that
//! itself reads a clock or varies its work from run to run is counted as it
//! runs.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::analysis::cost::{self, Totals};
use crate::benchmark::progress::{Call, Progress};
use crate::benchmark::protocol::{CALLGRIND_OUT_FILE, WorkerPlan};
use crate::benchmark::worker::session::{Session, on_measuring_thread, set_up};
use crate::guest::Contract;
use crate::guest::format::not_wasm;
use crate::guest::load::GuestFile;
use crate::guest::runtime::wasmtime::engine::{self, Engines};
use crate::guest::runtime::wasmtime::program::{Bracket, Phase, Program, Unbracketed};
use crate::platform::valgrind;
use crate::results::{CallgrindCounts, Row};
use crate::util::fs::{Cap, Links, read_bounded};

/// Ops of the first counted call of a workload (the second takes twice as
/// many): enough to see the loop, few enough for Callgrind's ~50× pace.
pub const OPS: u64 = 4096;
/// The largest Callgrind dump read: a dump holds a line per function and
/// call site of the host and the guest's code, a few MiB as a rule.
const MAX_DUMP_BYTES: u64 = 1 << 30;

/// What one row counted.
pub struct Counted {
    /// Per op (a program: per execute region).
    pub per_op: CallgrindCounts,
    /// A program's instantiation.
    pub instantiate: Option<CallgrindCounts>,
}

/// Callgrind's dumps of this worker, read back after they are written.
pub struct Dumps {
    folder: PathBuf,
    taken: usize,
}

/// One dump Callgrind wrote, to read after the window.
#[derive(Debug, Clone, Copy)]
pub struct Dump(usize);

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

    /// Dump the counts collected since they were last zeroed.
    fn dump(&mut self) -> Dump {
        valgrind::dump_stats();
        self.taken += 1;
        Dump(self.taken)
    }

    /// Read the counts of `dump`.
    pub fn read(&self, dump: Dump) -> Result<Totals> {
        let path = self.folder.join(format!("{CALLGRIND_OUT_FILE}.{}", dump.0));
        let cap = Cap {
            bytes: MAX_DUMP_BYTES,
            name: "the cap on a Callgrind dump",
        };
        let bytes = read_bounded(&path, cap, Links::Refuse)
            .with_context(|| format!("reading Callgrind's dump {}", path.display()))?;
        let text = String::from_utf8(bytes)
            .with_context(|| format!("Callgrind's dump {} is not UTF-8", path.display()))?;
        cost::parse_dump(&text).with_context(|| format!("reading {}", path.display()))
    }

    /// Zero the counts and start collecting.
    fn start(&mut self) {
        valgrind::zero_stats();
        valgrind::toggle_collect();
    }

    /// Stop collecting and dump the counts.
    fn stop(&mut self) -> Dump {
        valgrind::toggle_collect();
        self.dump()
    }

    /// Zero the counts, collect while `f` runs, and dump them.
    fn around<T>(&mut self, f: impl FnOnce() -> Result<T>) -> Result<(T, Dump)> {
        self.start();
        let result = f();
        let dump = self.stop();
        Ok((result?, dump))
    }
}

/// Run `f` in a counting window: Callgrind's instrumentation on, which
/// empties its simulated caches, and its branch predictor reset, so that
/// what `f` counts depends on what `f` runs and on nothing before it;
/// instrumentation off after.
fn window<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    valgrind::start_instrumentation();
    valgrind::reset_branch_predictor();
    let result = f();
    valgrind::stop_instrumentation();
    result
}

/// Fix glibc's threshold above which an allocation gets pages of its own
/// (`mmap`) at its default, 128 KiB. Left to itself, glibc raises it each
/// time such an allocation larger than it is freed, so where the counted
/// code's larger allocations go, and so their addresses, would follow what
/// the setup did (compiling a workload and writing it to the compile cache,
/// or loading it). Setting it turns the adjusting off. The worker calls it
/// before its setup.
pub fn steady_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt sets a parameter of glibc's allocator (under the
    // allocator's own lock), to a valid value.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

/// How long [`prepare_worker`] waits for wasmtime-wasi's threads to go
/// idle.
const RUNTIME_IDLE_WITHIN: Duration = Duration::from_secs(60);

/// What the worker does once, after its setup and before its first row:
/// start wasmtime-wasi's runtime, in which WASI host calls run (made on
/// first use, with threads of their own), and wait until all its threads
/// are parked. Made here, on the measuring thread while its heap is still as
/// the setup left it, its data sits at the same addresses from run to run;
/// and none of its threads is still starting (run by Valgrind in turn with
/// the counting thread, on the same simulated caches and predictor) when a
/// count begins.
pub fn prepare_worker() -> Result<()> {
    wasmtime_wasi::runtime::in_tokio(async {});
    let handle =
        wasmtime_wasi::runtime::with_ambient_tokio_runtime(tokio::runtime::Handle::current);
    let metrics = handle.metrics();
    let started = Instant::now();
    // An odd count of parks and unparks: the thread is parked.
    while !(0..metrics.num_workers()).all(|w| metrics.worker_park_unpark_count(w) % 2 == 1) {
        if started.elapsed() > RUNTIME_IDLE_WITHIN {
            bail!(
                "wasmtime-wasi's runtime threads did not go idle within {} s",
                RUNTIME_IDLE_WITHIN.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    // One that counted its park but has not reached the call that blocks
    // gets there now.
    std::thread::sleep(Duration::from_millis(1));
    Ok(())
}

/// Count `row` of `guest`.
pub fn count_row(
    plan: &WorkerPlan,
    session: &Session,
    guest: &GuestFile,
    row: &Row,
    dumps: &mut Dumps,
    progress: &dyn Progress,
) -> Result<Counted> {
    session.wasmtime_only(row, "Callgrind's counts")?;
    if let Contract::Program { .. } = guest.contract {
        return count_program(plan, session, guest, row, dumps, progress);
    }
    let linkers = &session.sets[row.engine_set].linkers;
    let (mut instance, _) = set_up(
        linkers,
        guest.code.as_ref().ok_or_else(not_wasm)?,
        row,
        session.limits,
        session.counted_seeds,
        progress,
    )?;
    let (one, two) = window(|| {
        for _ in 0..2 {
            progress.calling(Call::Run { count: 2 * OPS });
            instance.sample(2 * OPS)?;
        }
        progress.calling(Call::Run { count: OPS });
        let (_, one) = dumps.around(|| instance.sample(OPS))?;
        progress.calling(Call::Run { count: 2 * OPS });
        let (_, two) = dumps.around(|| instance.sample(2 * OPS))?;
        Ok((one, two))
    })?;
    Ok(Counted {
        per_op: cost::per_op(dumps.read(one)?, dumps.read(two)?, OPS),
        instantiate: None,
    })
}

/// Counts a program's instantiation.
struct InstantiationCount<'a> {
    dumps: &'a mut Dumps,
    dump: Option<Dump>,
}

impl Bracket for InstantiationCount<'_> {
    fn open(&mut self, phase: Phase) -> Result<()> {
        if phase == Phase::Instantiate {
            self.dumps.start();
        }
        Ok(())
    }
    fn close(&mut self, phase: Phase, _collecting: impl FnOnce() -> bool) -> Result<Duration> {
        if phase == Phase::Instantiate {
            self.dump = Some(self.dumps.stop());
        }
        Ok(Duration::ZERO)
    }
}

/// Counts a program's execute region.
struct ExecutionCount<'a> {
    dumps: &'a mut Dumps,
    dump: Option<Dump>,
}

impl Bracket for ExecutionCount<'_> {
    fn open(&mut self, phase: Phase) -> Result<()> {
        if let Phase::Run { whole } = phase {
            // Otherwise the program's own bench.start starts collecting.
            match whole {
                true => self.dumps.start(),
                false => valgrind::zero_stats(),
            }
        }
        Ok(())
    }
    fn close(&mut self, phase: Phase, collecting: impl FnOnce() -> bool) -> Result<Duration> {
        if let Phase::Run { whole } = phase {
            self.dump = Some(match whole || collecting() {
                true => self.dumps.stop(),
                false => self.dumps.dump(),
            });
        }
        Ok(Duration::ZERO)
    }
}

fn count_program(
    plan: &WorkerPlan,
    session: &Session,
    guest: &GuestFile,
    row: &Row,
    dumps: &mut Dumps,
    progress: &dyn Progress,
) -> Result<Counted> {
    let config = session.sets[row.engine_set].engines.config.clone();
    if let Some(library) = &config.library {
        bail!(
            "Callgrind counts built-in engines only, not the engine library {}",
            library.path.display()
        );
    }
    let (iteration, instantiate, execute) = on_measuring_thread(|| {
        // The engine and the code anew, made by this thread: what the setup
        // left (compiled on threads of its own, or loaded from the cache)
        // sits at addresses that differ from run to run and with the path.
        let engines = Engines::new(config, None)?;
        let code = engine::reload(guest.code.as_ref().ok_or_else(not_wasm)?, &engines.fast)?;
        let program = Program::counting(
            &row.path,
            &code,
            &plan.grants,
            session.limits,
            session.counted_seeds.run(),
        )?;
        let warm_instance = program.counting_context()?;
        let counted_instance = program.counting_context()?;
        let warm_up = program.counting_context()?;
        let counted = program.counting_context()?;
        // Let the thread that started this one reach its join, so that it
        // runs nothing in the window.
        std::thread::yield_now();
        window(|| {
            // Instantiations first: before any WASI call, whose lookup of
            // the guest's memory by name touches other cache lines from run
            // to run (wasmtime hashes names with per-process random keys).
            progress.calling(Call::Instantiate);
            program.count_instantiation(warm_instance, &mut Unbracketed)?;
            let mut instantiation = InstantiationCount {
                dumps: &mut *dumps,
                dump: None,
            };
            progress.calling(Call::Instantiate);
            program.count_instantiation(counted_instance, &mut instantiation)?;
            let instantiate = instantiation.dump;
            progress.calling(Call::Start);
            program.count(warm_up, &mut Unbracketed)?;
            let mut execution = ExecutionCount {
                dumps: &mut *dumps,
                dump: None,
            };
            progress.calling(Call::Start);
            let iteration = program.count(counted, &mut execution)?;
            Ok((iteration, instantiate, execution.dump))
        })
    })?;
    let (Some(instantiate), Some(execute)) = (instantiate, execute) else {
        bail!("the counted iteration left no counts");
    };
    let regions = iteration.execute_ns.len().max(1) as f64;
    Ok(Counted {
        per_op: cost::counts(dumps.read(execute)?, regions),
        instantiate: Some(cost::counts(dumps.read(instantiate)?, 1.0)),
    })
}
