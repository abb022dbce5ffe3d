//! Engine libraries: a shared library implementing wasmtime's bench-api
//! (`crates/bench-api` in the wasmtime repository; Sightglass's `-e` loads
//! the same), loaded with `libloading`, running one program iteration:
//! create an engine, compile, instantiate, execute, free, with the three
//! phases timed by the library's calls of our timer callbacks (execution:
//! each `bench.start`/`bench.end` pair of the program is a region; a
//! program that calls neither is timed over the whole `wasm_bench_execute`).
//! Stdout and stderr go to files in a temporary folder (under the worker's
//! `TMPDIR`, a folder the parent removes whatever the worker's end), read
//! back under the cap of a built-in engine's capture and checked against
//! the expected output as a built-in engine's are.
//!
//! Only worker processes load a library, so that a crash in it costs the
//! row it measures. A library once loaded stays loaded for the life of the
//! process: wasmtime inside it installs signal handlers that must not point
//! into unmapped code. The program's folder is its working directory; it
//! gets no arguments, no environment but what the library passes, and no
//! stdin. This module runs one iteration; how many is
//! [`crate::benchmark`]'s job.

use std::cell::{Cell, RefCell};
use std::ffi::c_void;
use std::os::raw::c_int;
use std::path::Path;
use std::ptr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use libloading::Library;

use crate::guest::program::output::tail;
use crate::guest::program::world::{Ended, Ran, Timing};
use crate::guest::program::{CAPTURE_LIMIT, Iteration, World};
use crate::guest::runtime::CompiledProgram;
use crate::guest::sandbox;
use crate::options::{EngineLibrary, Grants};
use crate::util::fs::{Cap, Links, is_not_found, read_bounded, read_head};

/// A timer callback: given the timer pointer of its phase.
type TimerFn = extern "C" fn(*mut u8);

/// The configuration `wasm_bench_create` takes, field for field as
/// wasmtime's `crates/bench-api` declares it.
#[repr(C)]
struct WasmBenchConfig {
    working_dir_ptr: *const u8,
    working_dir_len: usize,
    stdout_path_ptr: *const u8,
    stdout_path_len: usize,
    stderr_path_ptr: *const u8,
    stderr_path_len: usize,
    stdin_path_ptr: *const u8,
    stdin_path_len: usize,
    compilation_timer: *mut u8,
    compilation_start: TimerFn,
    compilation_end: TimerFn,
    instantiation_timer: *mut u8,
    instantiation_start: TimerFn,
    instantiation_end: TimerFn,
    execution_timer: *mut u8,
    execution_start: TimerFn,
    execution_end: TimerFn,
    execution_flags_ptr: *const u8,
    execution_flags_len: usize,
}

/// bench-api's functions, as the library exports them.
#[derive(Clone, Copy)]
struct Api {
    create: unsafe extern "C" fn(WasmBenchConfig, *mut *mut c_void) -> c_int,
    free: unsafe extern "C" fn(*mut c_void),
    compile: unsafe extern "C" fn(*mut c_void, *const u8, usize) -> c_int,
    instantiate: unsafe extern "C" fn(*mut c_void) -> c_int,
    execute: unsafe extern "C" fn(*mut c_void) -> c_int,
}

impl Api {
    /// Load the library at `path` (for good: see the module's doc) and find
    /// its functions.
    fn load(path: &Path) -> Result<Api> {
        // SAFETY: loading runs the library's initialisers: the user named
        // it as an engine library, and only a worker process loads it.
        let library = unsafe { Library::new(path) }
            .with_context(|| format!("loading the engine library {}", path.display()))?;
        let library: &'static Library = Box::leak(Box::new(library));
        // SAFETY: the signatures are bench-api's; a library exporting these
        // names with other signatures is not an engine library.
        unsafe {
            Ok(Api {
                create: *symbol(library, "wasm_bench_create")?,
                free: *symbol(library, "wasm_bench_free")?,
                compile: *symbol(library, "wasm_bench_compile")?,
                instantiate: *symbol(library, "wasm_bench_instantiate")?,
                execute: *symbol(library, "wasm_bench_execute")?,
            })
        }
    }
}

/// The export `name` of `library`, of type `T`.
///
/// # Safety
/// `T` must be the export's type.
unsafe fn symbol<T>(
    library: &'static Library,
    name: &str,
) -> Result<libloading::Symbol<'static, T>> {
    // SAFETY: the caller vouches for `T`.
    unsafe { library.get::<T>(name.as_bytes()) }
        .with_context(|| format!("the engine library has no `{name}`"))
}

/// What the timer callbacks saw during one iteration.
#[derive(Default)]
struct Clocks {
    started: Cell<Option<Instant>>,
    compile: Cell<Option<Duration>>,
    instantiate: Cell<Option<Duration>>,
    regions: RefCell<Vec<Duration>>,
    /// An end came without its start.
    unmatched_end: Cell<bool>,
    /// An execution region was started.
    any_start: Cell<bool>,
}

impl Clocks {
    /// # Safety
    /// `ctx` must point to the [`Clocks`] of the running iteration.
    unsafe fn of<'a>(ctx: *mut u8) -> &'a Clocks {
        // SAFETY: the caller vouches for the pointer; only shared
        // references to the clocks exist while the library runs.
        unsafe { &*ctx.cast::<Clocks>() }
    }

    /// How long since the last start, if one is open (closing it).
    fn elapsed(&self, now: Instant) -> Option<Duration> {
        let took = self.started.take().map(|s| now.duration_since(s));
        if took.is_none() {
            self.unmatched_end.set(true);
        }
        took
    }
}

extern "C" fn phase_start(ctx: *mut u8) {
    // SAFETY: the library passes back the pointer we gave it.
    unsafe { Clocks::of(ctx) }.started.set(Some(Instant::now()));
}

extern "C" fn execution_start(ctx: *mut u8) {
    // SAFETY: as for `phase_start`.
    let clocks = unsafe { Clocks::of(ctx) };
    clocks.any_start.set(true);
    // The clock is read last: only the guest's work follows it.
    clocks.started.set(Some(Instant::now()));
}

extern "C" fn compilation_end(ctx: *mut u8) {
    let now = Instant::now();
    // SAFETY: as for `phase_start`.
    let clocks = unsafe { Clocks::of(ctx) };
    clocks.compile.set(clocks.elapsed(now));
}

extern "C" fn instantiation_end(ctx: *mut u8) {
    let now = Instant::now();
    // SAFETY: as for `phase_start`.
    let clocks = unsafe { Clocks::of(ctx) };
    clocks.instantiate.set(clocks.elapsed(now));
}

extern "C" fn execution_end(ctx: *mut u8) {
    let now = Instant::now();
    // SAFETY: as for `phase_start`.
    let clocks = unsafe { Clocks::of(ctx) };
    if let Some(took) = clocks.elapsed(now) {
        clocks.regions.borrow_mut().push(took);
    }
}

/// A program run by an engine library.
pub struct LibraryProgram {
    api: Api,
    flags: String,
    bytes: Arc<[u8]>,
    /// The program's folder, absolute: its working directory.
    folder: String,
    /// Where its stdout and stderr go.
    scratch: tempfile::TempDir,
    /// What it is held to, as under every runtime.
    world: World,
}

impl LibraryProgram {
    /// The program `bytes` read from `path`, to run under `library`.
    /// `grants` must be empty: bench-api has no way to pass them.
    pub fn new(
        library: &EngineLibrary,
        path: &Path,
        bytes: Arc<[u8]>,
        grants: &Grants,
    ) -> Result<Self> {
        if !grants.dirs.is_empty() || !grants.env.is_empty() || !grants.args.is_empty() {
            bail!("an engine library passes no --dir, --env or --arg to a program");
        }
        // bench-api cannot say which of bench.start and bench.end a program
        // imports: one that calls start but never end is an error.
        let world = World::new(path, grants, true)?;
        Ok(LibraryProgram {
            api: Api::load(&library.path)?,
            flags: library.flags.clone(),
            bytes,
            folder: utf8(&std::path::absolute(world.folder())?)?.to_string(),
            scratch: tempfile::tempdir().context("making a folder for the program's output")?,
            world,
        })
    }

    /// One iteration: a fresh engine compiles, instantiates and runs the
    /// program; the run is checked by [`World::finish`].
    fn run_once(&self) -> Result<Iteration> {
        if sandbox::interrupted() {
            bail!("interrupted");
        }
        let stdout = self.scratch.path().join("stdout");
        let stderr = self.scratch.path().join("stderr");
        let said = self.scratch.path().join("engine");
        let clocks = Clocks::default();
        let whole = with_stderr_to(&said, || self.run(&clocks, utf8(&stdout)?, utf8(&stderr)?))?;
        let stderr_text = read_output(&stderr, "stderr")?;
        let whole = whole.map_err(|e| match engine_said(&said) {
            Some(text) => e.context(format!("the engine library said: {text}")),
            None => e,
        });
        let whole = match tail(&stderr_text) {
            program_said if program_said.is_empty() => whole?,
            program_said => whole.context(format!("the program's last words{program_said}"))?,
        };
        if clocks.unmatched_end.get() {
            bail!(
                "the engine library ended a phase it had not started (or bench.end came before bench.start)"
            );
        }
        let regions: Vec<u64> = clocks
            .regions
            .take()
            .iter()
            .map(|d| d.as_nanos() as u64)
            .collect();
        let open = regions.is_empty() && clocks.any_start.get();
        let ran = Ran {
            instantiate: clocks
                .instantiate
                .get()
                .context("instantiation not timed")?,
            whole,
            ended: Ended::Returned,
            timing: Timing::from_regions(&regions, open),
        };
        let stdout_text = read_output(&stdout, "stdout")?;
        let iteration = self.world.finish(ran, &stdout_text, &stderr_text, true)?;
        Ok(Iteration {
            compile_ns: Some(nanos(
                clocks.compile.get().context("compilation not timed")?,
            )),
            ..iteration
        })
    }

    /// Create, compile, instantiate, execute, free; how long
    /// `wasm_bench_execute` took.
    fn run(&self, clocks: &Clocks, stdout: &str, stderr: &str) -> Result<Duration> {
        let timer = ptr::from_ref(clocks).cast_mut().cast::<u8>();
        let config = WasmBenchConfig {
            working_dir_ptr: self.folder.as_ptr(),
            working_dir_len: self.folder.len(),
            stdout_path_ptr: stdout.as_ptr(),
            stdout_path_len: stdout.len(),
            stderr_path_ptr: stderr.as_ptr(),
            stderr_path_len: stderr.len(),
            stdin_path_ptr: ptr::null(),
            stdin_path_len: 0,
            compilation_timer: timer,
            compilation_start: phase_start,
            compilation_end,
            instantiation_timer: timer,
            instantiation_start: phase_start,
            instantiation_end,
            execution_timer: timer,
            execution_start,
            execution_end,
            execution_flags_ptr: self.flags.as_ptr(),
            execution_flags_len: self.flags.len(),
        };
        let mut state = ptr::null_mut();
        // SAFETY: every pointer of `config` outlives the engine (freed
        // below), and `state` receives it.
        let created = unsafe { (self.api.create)(config, &mut state) };
        if created != 0 || state.is_null() {
            bail!("wasm_bench_create failed ({created}): the engine flags or paths were refused");
        }
        let ran = self.phases(state);
        // SAFETY: `state` is the engine `create` made, freed once.
        unsafe { (self.api.free)(state) };
        ran
    }

    /// Compile, instantiate and execute in the engine `state`.
    fn phases(&self, state: *mut c_void) -> Result<Duration> {
        let api = self.api;
        // SAFETY: `state` is a live engine; the bytes outlive the call.
        let compiled = unsafe { (api.compile)(state, self.bytes.as_ptr(), self.bytes.len()) };
        check(compiled, "wasm_bench_compile")?;
        // SAFETY: `state` is a live engine with a compiled module.
        check(
            unsafe { (api.instantiate)(state) },
            "wasm_bench_instantiate",
        )?;
        let start = Instant::now();
        // SAFETY: `state` is a live engine with an instance.
        let executed = unsafe { (api.execute)(state) };
        let whole = start.elapsed();
        check(executed, "wasm_bench_execute")?;
        Ok(whole)
    }
}

/// Run `work` with this process's stderr (where a bench-api library prints
/// its errors) sent to the file `path`, restored after.
fn with_stderr_to<T>(path: &Path, work: impl FnOnce() -> T) -> Result<T> {
    use std::os::fd::AsRawFd;
    let file =
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    // SAFETY: duplicating and replacing descriptor 2 touches no memory;
    // the saved copy puts it back.
    let saved = unsafe { libc::dup(2) };
    if saved < 0 || unsafe { libc::dup2(file.as_raw_fd(), 2) } < 0 {
        bail!("redirecting stderr: {}", std::io::Error::last_os_error());
    }
    let done = work();
    // SAFETY: as above; `saved` is ours to close.
    unsafe {
        libc::dup2(saved, 2);
        libc::close(saved);
    }
    Ok(done)
}

/// What the program wrote on `stream`, in the file `path` of the scratch
/// folder: read as a built-in engine's capture is, up to
/// [`CAPTURE_LIMIT`]; a file the library never made is nothing written.
fn read_output(path: &Path, stream: &str) -> Result<Vec<u8>> {
    let cap = Cap {
        bytes: CAPTURE_LIMIT as u64,
        name: "the output a program may write,",
    };
    match read_bounded(path, cap, Links::Refuse) {
        Ok(bytes) => Ok(bytes),
        Err(e) if is_not_found(&e) => Ok(Vec::new()),
        Err(e) => Err(e.context(format!("reading the program's {stream}"))),
    }
}

/// The most read of what the library printed on stderr.
const ENGINE_SAID_BYTES: u64 = 64 << 10;

/// What the library printed (its error), on one line, without a
/// backtrace, if anything.
fn engine_said(path: &Path) -> Option<String> {
    let head = read_head(path, ENGINE_SAID_BYTES, Links::Refuse).ok()?;
    let text = String::from_utf8_lossy(&head);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Stack backtrace:"))
        .filter(|l| !l.is_empty() && *l != "Caused by:")
        .collect();
    let joined = lines.join("; ");
    (!joined.is_empty()).then(|| joined.chars().take(400).collect())
}

/// An error for a nonzero return of `call`.
fn check(code: c_int, call: &str) -> Result<()> {
    match code {
        0 => Ok(()),
        code => bail!("{call} failed ({code})"),
    }
}

fn utf8(path: &Path) -> Result<&str> {
    path.to_str()
        .with_context(|| format!("{}: an engine library takes UTF-8 paths", path.display()))
}

fn nanos(d: Duration) -> f64 {
    d.as_nanos() as f64
}

impl CompiledProgram for LibraryProgram {
    /// The library's own WASI context draws the program's random numbers:
    /// bench-api takes no seed.
    fn iterate(&self, _seed: u64) -> Result<Iteration> {
        self.run_once()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// bench-api's configuration: 19 pointer-sized fields, in its order.
    #[test]
    fn config_layout_is_bench_apis() {
        let word = size_of::<usize>();
        assert_eq!(size_of::<WasmBenchConfig>(), 19 * word);
        assert_eq!(offset_of!(WasmBenchConfig, working_dir_len), word);
        assert_eq!(offset_of!(WasmBenchConfig, stdin_path_ptr), 6 * word);
        assert_eq!(offset_of!(WasmBenchConfig, compilation_timer), 8 * word);
        assert_eq!(offset_of!(WasmBenchConfig, compilation_end), 10 * word);
        assert_eq!(offset_of!(WasmBenchConfig, instantiation_timer), 11 * word);
        assert_eq!(offset_of!(WasmBenchConfig, execution_timer), 14 * word);
        assert_eq!(offset_of!(WasmBenchConfig, execution_flags_ptr), 17 * word);
        assert_eq!(offset_of!(WasmBenchConfig, execution_flags_len), 18 * word);
    }

    #[test]
    fn callbacks_time_phases_and_regions() {
        let clocks = Clocks::default();
        let ctx = ptr::from_ref(&clocks).cast_mut().cast::<u8>();
        phase_start(ctx);
        compilation_end(ctx);
        execution_start(ctx);
        execution_end(ctx);
        execution_start(ctx);
        execution_end(ctx);
        assert!(clocks.compile.get().is_some());
        assert_eq!(clocks.regions.borrow().len(), 2);
        assert!(!clocks.unmatched_end.get());
        execution_end(ctx);
        assert!(clocks.unmatched_end.get());
    }
}
