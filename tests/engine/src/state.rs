//! One engine between bench-api calls: the wasmtime engine and linker made
//! from the flags, the compiled module, the instance about to run, and the
//! three phases' timers.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use wasmtime::{Engine, Instance, Linker, Module, Store};
use wasmtime_wasi::cli::{InputFile, OutputFile};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::{FsPerms, I32Exit, WasiCtxBuilder};

use crate::abi::{TimerFn, WasmBenchConfig};
use crate::flags::{Flags, Print};
use crate::path;

/// The variable passed through to the program when set, as wasmtime's
/// bench-api does.
const SMALL_WORKLOAD_VAR: &str = "WASM_BENCH_USE_SMALL_WORKLOAD";

/// A phase's timer: the caller's pointer and its two callbacks.
#[derive(Clone, Copy)]
struct Timer {
    ctx: *mut u8,
    start: TimerFn,
    end: TimerFn,
}

// SAFETY: bench-api's contract is that every call happens on one thread, so
// the pointer is never used from two threads; wasmtime only asks `Send` and
// `Sync` of host functions because a store could move between threads.
unsafe impl Send for Timer {}
// SAFETY: as for `Send`.
unsafe impl Sync for Timer {}

impl Timer {
    fn start(&self) {
        (self.start)(self.ctx);
    }
    fn end(&self) {
        (self.end)(self.ctx);
    }
}

/// Where the program's files are.
struct Files {
    working_dir: PathBuf,
    stdout: PathBuf,
    stderr: PathBuf,
    stdin: Option<PathBuf>,
}

pub struct BenchState {
    linker: Linker<WasiP1Ctx>,
    files: Files,
    compilation: Timer,
    instantiation: Timer,
    module: Option<Module>,
    instance: Option<(Store<WasiP1Ctx>, Instance)>,
    crash_in_execute: bool,
    prints: Vec<Print>,
}

impl BenchState {
    /// The engine `config` describes.
    ///
    /// # Safety
    /// The pointers of `config` must be valid for their lengths.
    pub unsafe fn new(config: &WasmBenchConfig) -> Result<Self> {
        // SAFETY: the caller vouches for the pointers.
        let (working_dir, stdout, stderr, stdin, flags) = unsafe {
            (
                path(
                    config.working_dir_ptr,
                    config.working_dir_len,
                    "working dir",
                )?,
                path(
                    config.stdout_path_ptr,
                    config.stdout_path_len,
                    "stdout path",
                )?,
                path(
                    config.stderr_path_ptr,
                    config.stderr_path_len,
                    "stderr path",
                )?,
                path(config.stdin_path_ptr, config.stdin_path_len, "stdin path")?,
                path(
                    config.execution_flags_ptr,
                    config.execution_flags_len,
                    "flags",
                )?,
            )
        };
        let flags = match flags {
            Some(text) => Flags::parse(&text.to_string_lossy())?,
            None => Flags::default(),
        };
        let files = Files {
            working_dir: working_dir.context("no working directory given")?,
            stdout: stdout.context("no stdout path given")?,
            stderr: stderr.context("no stderr path given")?,
            stdin,
        };
        let engine = Engine::new(&flags.config())
            .map_err(anyhow::Error::from)
            .context("creating the engine")?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p1::add_to_linker_sync(&mut linker, |cx| cx)?;
        let execution = Timer {
            ctx: config.execution_timer,
            start: config.execution_start,
            end: config.execution_end,
        };
        linker.func_wrap("bench", "start", move || execution.start())?;
        linker.func_wrap("bench", "end", move || execution.end())?;
        Ok(BenchState {
            linker,
            files,
            compilation: Timer {
                ctx: config.compilation_timer,
                start: config.compilation_start,
                end: config.compilation_end,
            },
            instantiation: Timer {
                ctx: config.instantiation_timer,
                start: config.instantiation_start,
                end: config.instantiation_end,
            },
            module: None,
            instance: None,
            crash_in_execute: flags.crash_in_execute,
            prints: flags.prints,
        })
    }

    pub fn compile(&mut self, bytes: &[u8]) -> Result<()> {
        self.module = None;
        self.compilation.start();
        let module = Module::from_binary(self.linker.engine(), bytes)?;
        self.compilation.end();
        self.module = Some(module);
        Ok(())
    }

    /// A fresh instance; the WASI context (which opens the files) is made
    /// before the timer starts.
    pub fn instantiate(&mut self) -> Result<()> {
        self.instance = None;
        let module = self.module.as_ref().context("nothing compiled")?;
        let wasi = self.wasi()?;
        self.instantiation.start();
        let mut store = Store::new(self.linker.engine(), wasi);
        let instance = self.linker.instantiate(&mut store, module)?;
        self.instantiation.end();
        self.instance = Some((store, instance));
        Ok(())
    }

    pub fn execute(&mut self) -> Result<()> {
        let (mut store, instance) = self.instance.take().context("nothing instantiated")?;
        if self.crash_in_execute {
            // SAFETY: none: the test hook `--crash-in-execute` crashes the
            // process on purpose, by a write through a null pointer.
            unsafe { std::ptr::null_mut::<u8>().write_volatile(1) };
        }
        for print in &self.prints {
            self.print(*print)?;
        }
        let start = instance.get_typed_func::<(), ()>(&mut store, "_start")?;
        match start.call(&mut store, ()) {
            Ok(()) => Ok(()),
            Err(e) => match e.downcast_ref::<I32Exit>() {
                Some(I32Exit(0)) => Ok(()),
                Some(I32Exit(code)) => bail!("exited with code {code}"),
                None => Err(e.into()),
            },
        }
    }

    /// Do what the test hook `print` says.
    fn print(&self, print: Print) -> Result<()> {
        use std::io::Write;
        let chunk = vec![b'x'; 1 << 20];
        let fill = |out: &mut dyn Write, mut bytes: u64| -> std::io::Result<()> {
            while bytes > 0 {
                let n = bytes.min(chunk.len() as u64);
                out.write_all(&chunk[..n as usize])?;
                bytes -= n;
            }
            out.flush()
        };
        match print {
            Print::NotUtf8 => {
                let line = b"\xff\xfe\xc0 not UTF-8 \x80\n";
                std::io::stdout().lock().write_all(line)?;
                std::io::stdout().lock().flush()?;
                std::io::stderr().lock().write_all(line)?;
            }
            Print::Line(bytes) => fill(&mut std::io::stdout().lock(), bytes)?,
            Print::CapturedStderr(bytes) => {
                let mut file = std::fs::OpenOptions::new()
                    .append(true)
                    .open(&self.files.stderr)
                    .with_context(|| format!("opening {}", self.files.stderr.display()))?;
                fill(&mut file, bytes)?;
            }
        }
        Ok(())
    }

    /// The WASI context of one instance.
    fn wasi(&self) -> Result<WasiP1Ctx> {
        let files = &self.files;
        let create = |path: &PathBuf| {
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))
        };
        let mut builder = WasiCtxBuilder::new();
        builder
            .stdout(OutputFile::new(create(&files.stdout)?))
            .stderr(OutputFile::new(create(&files.stderr)?))
            .preopened_dir(&files.working_dir, ".", FsPerms::ReadWrite)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("preopening {}", files.working_dir.display()))?;
        if let Some(stdin) = &files.stdin {
            let file = std::fs::File::open(stdin)
                .with_context(|| format!("opening {}", stdin.display()))?;
            builder.stdin(InputFile::new(file));
        }
        if let Ok(value) = std::env::var(SMALL_WORKLOAD_VAR) {
            builder.env(SMALL_WORKLOAD_VAR, value);
        }
        Ok(builder.build_p1())
    }
}
