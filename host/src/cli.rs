//! Raw command-line flags, parsed by clap.
//!
//! Nothing here is validated beyond what clap does itself: [`crate::options`]
//! turns these flags into typed settings once, and nothing after it reads clap
//! types. This module imports nothing of the crate.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Measure WebAssembly workloads precisely: per-op times with honest error bars.
#[derive(Debug, Parser)]
#[command(
    name = "host",
    version = concat!(env!("CARGO_PKG_VERSION"), " (wasm-bench)"),
    about,
    long_about = None
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure workloads (`.wasm` or `.wat` files, or folders of them).
    Run(RunArgs),
    /// Compare variants, interleaved in rounds, with a verdict per variant.
    Compare(CompareArgs),
    /// Where the time goes: sample each workload's wasm stack while it runs
    /// and write a profile the Firefox Profiler opens, with a table of the
    /// functions that take the most time.
    Profile(ProfileArgs),
    /// Measure workloads, then again whenever a file changes, with the
    /// change against the previous measurement (takes the flags of `run`).
    Watch(RunArgs),
    /// Measure the harness itself: repeatability over separate runs, count
    /// independence, time to a result.
    Selftest(SelftestArgs),
    /// What this machine offers and what would disturb measurements, with a
    /// fix for each finding where there is one.
    Doctor(DoctorArgs),
    /// Scaffold a workload that builds against the contract.
    New(NewArgs),
    /// Print a shell completion script (`host completions bash > ...`).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Each benchmark over the kept runs (`host run` and `host compare` keep every run): the
    /// last runs, the trend, and the change points found.
    History(HistoryArgs),
    /// Render a saved JSON export again (`--export-json` of `run` or
    /// `compare`): the table, and any other export, without measuring.
    Report(ReportArgs),
    /// Print the JSON Schema of the `--export-json` of `run`, `compare` or
    /// `compare` of a suite.
    Schema {
        #[arg(value_enum)]
        kind: SchemaKind,
    },
    /// Print the man page (roff).
    Man,
    /// A worker process: reads a job on stdin, writes events on stdout
    /// (started by `run` and `compare`, not by hand).
    #[command(hide = true)]
    Worker,
    /// The reference timing of `host selftest`'s program check: a program's
    /// execute time on an engine of wasmtime's defaults, in this process
    /// (started by `selftest`, not by hand).
    #[command(hide = true)]
    SelftestReference(ReferenceArgs),
}

/// What one reference process of the program check times.
#[derive(Debug, Args)]
pub struct ReferenceArgs {
    /// The program.
    pub file: PathBuf,
    /// Iterations to time, after one untimed.
    #[arg(long, value_name = "N")]
    pub iterations: usize,
}

/// Which export `host schema` describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemaKind {
    /// The JSON export of `host run`.
    Run,
    /// The JSON export of `host compare`.
    Compare,
    /// The JSON export of `host compare` of a suite.
    Suite,
}

/// Which scheduling class the measuring thread asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PriorityArg {
    /// The lowest nice value (-20) under the normal scheduler (default: a busy
    /// loop under SCHED_FIFO is throttled by the kernel's real-time limit).
    Nice,
    /// SCHED_FIFO at its highest priority, falling back to nice -20 when refused.
    Fifo,
    /// Leave the priority alone.
    None,
}

/// Options shared by every command that measures.
#[derive(Debug, Args)]
pub struct MeasureArgs {
    /// Core to pin the measuring thread to (default: the quietest core, by
    /// its load watched briefly before measuring; the last core when loads
    /// cannot be read).
    #[arg(long, value_name = "N")]
    pub core: Option<usize>,

    /// Do not pin the measuring thread to a core.
    #[arg(long, conflicts_with = "core")]
    pub no_pin: bool,

    /// Scheduling priority of the measuring thread.
    #[arg(long, value_enum, default_value_t = PriorityArg::Nice)]
    pub priority: PriorityArg,

    /// Cap on the warm-up per workload or program, e.g. `1s`, `500ms`
    /// (warm-up ends earlier once consecutive rounds, or a program's
    /// iterations, agree).
    #[arg(long, value_name = "DURATION", default_value = "1s")]
    pub warmup: String,

    /// Fix the number of operations per sample instead of letting the pilot
    /// choose it.
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,

    /// Target duration of one sample, e.g. `1ms`; the pilot picks the count
    /// that fills it.
    #[arg(long, value_name = "DURATION", default_value = "1ms")]
    pub sample_time: String,

    /// The run's seed (default: a fresh random one per run). Every `run`
    /// call gets a seed of its own derived from it and the call's index, so
    /// that code that draws its input from the seed does not replay one
    /// input; the same run seed gives the same sequence.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Give every `run` call the run's seed itself, as one fixed input
    /// (a workload that draws its input from the seed then replays it).
    #[arg(long)]
    pub same_seed: bool,

    /// Input sizes: each is measured as its own row, on a fresh instance
    /// set up with `setup(size)`. A list (`100,1000,10000`), powers
    /// (`2^10`), or a doubling range (`2^4..2^16`, `16..4096`); may be
    /// repeated. With several sizes, per-op time is fitted against size.
    #[arg(long, value_name = "SIZES")]
    pub size: Vec<String>,

    #[command(flatten)]
    pub exports: ExportArgs,

    /// No progress display on stderr (it is off anyway when stderr is not a
    /// terminal).
    #[arg(long, short)]
    pub quiet: bool,

    /// The engine: its help is written from the options' list of engines
    /// (`options::engine::describe_engines`), which says which this host
    /// has built in.
    #[arg(long, value_name = "ENGINE", default_value = "cranelift", value_parser = EngineArg::parse)]
    pub engine: Vec<EngineArg>,

    /// Engine libraries only: their engine flags, one string in wasmtime's
    /// CLI spelling (`"-O opt-level=2 -W simd=n"`), as Sightglass's
    /// `--engine-flags`. Given once, it applies to every library; repeated,
    /// the first goes to the first `--engine PATH`, the second to the
    /// second, and so on.
    #[arg(long, value_name = "FLAGS", allow_hyphen_values = true)]
    pub engine_flags: Vec<String>,

    /// Cranelift's optimisation level.
    #[arg(long, value_enum, value_name = "LEVEL", default_value_t = OptLevelArg::Speed)]
    pub opt_level: OptLevelArg,

    /// Turn a WebAssembly proposal on or off, as `wasmtime run -W` spells
    /// it: `gc=n`, `tail-call`, `memory64=y`; a comma-separated list, or
    /// repeated. Without it, what wasmtime enables by default is on (GC,
    /// function references, exceptions, tail calls, SIMD, relaxed SIMD,
    /// multi-memory, atomics, ...). Names: gc, function-references,
    /// exceptions, tail-call, simd, relaxed-simd, multi-memory, threads,
    /// memory64, extended-const, wide-arithmetic, custom-page-sizes,
    /// stack-switching, bulk-memory, reference-types, multi-value,
    /// branch-hinting. `stack-switching` and `threads` may only be turned
    /// off: this build runs no stack switching and no shared memory.
    #[arg(short = 'W', long = "wasm", value_name = "NAME[=y|n]")]
    pub wasm: Vec<String>,

    /// Compile every time instead of using the compile cache
    /// (`$WASM_BENCH_CACHE`, else `~/.cache/wasm-bench`).
    #[arg(long)]
    pub no_cache: bool,

    /// Programs only: preopen HOST (read-write) as GUEST (`HOST::GUEST`, or
    /// HOST as itself). The workload's own folder is always preopened
    /// read-only as `.`.
    #[arg(long, value_name = "HOST[::GUEST]")]
    pub dir: Vec<String>,

    /// Programs only: set an environment variable (`KEY=VALUE`).
    #[arg(long, value_name = "KEY=VALUE")]
    pub env: Vec<String>,

    /// Programs only: pass an argument (argv is empty otherwise: no program
    /// name).
    #[arg(long, value_name = "ARG", allow_hyphen_values = true)]
    pub arg: Vec<String>,

    /// Programs only: give a program the system's time of day. Without it,
    /// each iteration's wall clock starts at 2020-01-01T00:00:00Z and steps
    /// 1 µs a read, so that a program whose input follows the time of day
    /// (libsodium's random numbers) runs on the same input in every
    /// iteration and under every runtime (the monotonic clock is always the
    /// system's). An engine library's programs always read the system's.
    #[arg(long)]
    pub real_clock: bool,

    /// Cap on each instance's linear memories (all together) and tables,
    /// e.g. `1GiB`, `256MiB`; a guest that grows past it gets a failed grow.
    #[arg(long, value_name = "SIZE", default_value = "1GiB")]
    pub max_memory: String,

    /// Ask the kernel for transparent huge pages to back the linear
    /// memories of `run(count, seed)` workloads (`madvise`), so that where
    /// their pages land varies less between worker processes: `on` or
    /// `off`. Under wasmtime's engines only (cranelift, winch, pulley):
    /// wasmi, wasmer and V8 allocate their memories themselves. Recorded in
    /// the JSON's `environment.huge_pages`.
    #[arg(long, value_name = "on|off", default_value = "on", value_parser = ["on", "off"])]
    pub huge_pages: String,

    /// Refuse a workload file larger than this, e.g. `128MiB`, `1GiB`
    /// (a path that is not a regular file, such as a FIFO or a device, is
    /// refused whatever its size).
    #[arg(long, value_name = "SIZE", default_value = "128MiB")]
    pub max_file_size: String,

    /// Deadline of one guest call (set-up included), e.g. `10s`.
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub timeout: String,

    /// Measure every workload in exactly N worker processes (default: as
    /// many as the precision rule needs, at least 5).
    #[arg(long, value_name = "N")]
    pub processes: Option<usize>,

    /// Width of the noise band, in percent: ratios within ±half of it count
    /// as "same" (the default 1 is ±0.5%), in `host compare`, against a
    /// `--baseline` and in `host watch`.
    #[arg(long, value_name = "PCT", default_value_t = 1.0)]
    pub noise: f64,

    /// Also measure a deterministic cost per op in a separate pass: wasm
    /// instructions with wasmtime's fuel (`instructions`), or Callgrind's
    /// counts of the machine code and a cycle estimate (`cycles-est`, needs
    /// Valgrind; a guest call under it may take 100 × `--timeout`, as code
    /// runs up to 100 times slower there); `host compare` and `--baseline`
    /// then judge by it. Or, with
    /// `host run`, the CPU's own counts of the timed code (`counters`:
    /// instructions and cycles per op from the hardware counters, where the
    /// kernel gives them).
    #[arg(long, value_enum, default_value_t = MetricArg::Time)]
    pub metric: MetricArg,
}

/// Where each export goes.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Write every figure, raw samples included, as JSON to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,

    /// Write a Markdown table to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,

    /// Write CSV to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,

    /// Write one self-contained HTML page with plots to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_html: Option<PathBuf>,

    /// Write results in github-action-benchmark's `customSmallerIsBetter`
    /// JSON to FILE (`-` for stdout), for dashboards (`host run` only).
    #[arg(long, value_name = "FILE")]
    pub export_dashboard: Option<PathBuf>,

    /// Write results in Bencher's metric format (BMF JSON) to FILE (`-` for
    /// stdout), for collecting results from many machines (`host run` only).
    #[arg(long, value_name = "FILE")]
    pub export_bencher: Option<PathBuf>,
}

/// What `--engine` names: an engine by name (the options check it against
/// their list of engines), or an engine library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineArg {
    /// An engine's name or alias (`cranelift`, `wasmi`, `singlepass`), with
    /// an option after a colon (`cranelift:pooling`).
    Named(String),
    /// The path of an engine library.
    Library(PathBuf),
}

impl EngineArg {
    /// A path (a value with a `/`, or ending in `.so` or `.dylib`), or a
    /// name.
    fn parse(value: &str) -> Result<Self, String> {
        match value {
            path if path.contains('/') || path.ends_with(".so") || path.ends_with(".dylib") => {
                Ok(EngineArg::Library(PathBuf::from(path)))
            }
            name if !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == ':') =>
            {
                Ok(EngineArg::Named(name.to_string()))
            }
            other => Err(format!(
                "`{other}` is neither an engine's name nor the path of an engine library (./main.so)"
            )),
        }
    }
}

/// `--opt-level` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OptLevelArg {
    None,
    Speed,
    SpeedAndSize,
}

/// `--interval` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IntervalArg {
    /// Where a later run's median may land.
    LaterRun,
    /// This run's processes alone.
    ThisRun,
}

/// `--forget-drift` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ForgetArg {
    /// The earlier runs of the rows measured now.
    Rows,
    /// Every earlier run on this CPU.
    Machine,
}

/// What comparisons judge by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MetricArg {
    /// Wall time per op.
    Time,
    /// Wasm instructions per op (fuel), beside the time.
    Instructions,
    /// Callgrind's counts of the machine code per op (instructions, cache
    /// misses, mispredictions) and a cycle estimate from them, beside the
    /// time; needs Valgrind.
    CyclesEst,
    /// Instructions and cycles per op from the CPU's hardware counters
    /// (`perf_event_open`), beside the time; `host run` only.
    Counters,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Workload files (`.wasm`, `.wat`) or folders holding them.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Take exactly N samples (no early stop on precision).
    #[arg(long, value_name = "N", conflicts_with = "time")]
    pub samples: Option<usize>,

    /// Sample for this long per workload (no early stop on precision), e.g. `3s`.
    #[arg(long, value_name = "DURATION")]
    pub time: Option<String>,

    /// Stop measuring once the 95% interval of the median (over the worker
    /// processes) is within this many percent of it (or when the workload
    /// has used 2 s, compile included; 30 s for a program under an engine
    /// library, which compiles on every iteration).
    #[arg(long, value_name = "PCT", default_value_t = 1.0)]
    pub precision: f64,

    /// An extra run-to-run drift, in percent (relative standard deviation
    /// of medians measured in separate runs), added in quadrature to each
    /// side of the 95% interval. Off by default: the interval already comes
    /// from separate worker processes.
    #[arg(long, value_name = "PCT", default_value_t = 0.0)]
    pub drift: f64,

    /// Which 95% interval the table shows: where a later run's median may
    /// land (this run's processes with the drift measured over earlier runs
    /// of the same row), or this run's processes alone. The row says the
    /// other when it differs; the JSON holds both.
    #[arg(long, value_enum, value_name = "WHICH", default_value_t = IntervalArg::LaterRun)]
    pub interval: IntervalArg,

    /// Keep this run in the store as baseline NAME.
    #[arg(long, value_name = "NAME")]
    pub save_baseline: Option<String>,

    /// Compare every workload with baseline NAME of the store.
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,

    /// With `--baseline`: exit with status 3 when a workload is certainly
    /// slower than the baseline by more than PCT percent (0 when PCT is not
    /// given); a speed-up is reported, never failed. With `--metric
    /// instructions` (or `cycles-est`) the workloads are judged by their
    /// exact counts alone.
    #[arg(
        long,
        value_name = "PCT",
        requires = "baseline",
        num_args = 0..=1,
        default_missing_value = "0"
    )]
    pub fail_on_regression: Option<f64>,

    /// Measure only shard K of N (`2/3`): file i of the list (paths in the
    /// order given, folders read in sorted order) belongs to shard
    /// i mod N + 1, the same on every machine; merge the shards' JSON
    /// exports with `host report A.json B.json ...`.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,

    /// Before measuring, run each WASI program once and save what it wrote
    /// to stdout as `NAME.stdout.expected` beside it (replacing that file):
    /// every iteration measured is then checked against it.
    #[arg(long)]
    pub save_expected: bool,

    /// Measure a control beside the workloads: a small workload built into
    /// the host (its row is `wasm-bench-control`), the same in every run.
    /// `host history` reads a change that every series shares with the
    /// control as the machine moving, not as each benchmark changing.
    #[arg(long)]
    pub control: bool,

    /// With several `--engine`: the engine the runtime view's ratios are
    /// to (default: the first `--engine`).
    #[arg(long, value_name = "ENGINE")]
    pub reference: Option<String>,

    #[command(flatten)]
    pub store: StoreArgs,

    #[command(flatten)]
    pub measure: MeasureArgs,
}

/// Where `host run` and `host compare` keep their runs, and what they keep
/// them with.
#[derive(Debug, Args)]
pub struct StoreArgs {
    /// The store of kept runs (default: `$WASM_BENCH_STORE`, else
    /// `$XDG_DATA_HOME/wasm-bench/store`, else
    /// `~/.local/share/wasm-bench/store`). Baselines, the drift between runs
    /// and `host history` are read from it. A store that cannot keep the run
    /// (read-only, full, a symbolic link inside it) is warned about, the run
    /// is measured and exported all the same, and the exit status is 4.
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,

    /// Neither keep this run in the store nor read the drift of earlier
    /// runs from it: the intervals are those of an empty store (a baseline
    /// named by `--baseline` is still read).
    #[arg(long)]
    pub no_store: bool,

    /// Forget the drift between runs before measuring: the earlier runs
    /// kept of the rows measured now (`rows`), or every earlier run on this
    /// CPU (`machine`), no longer widen any interval. The runs stay kept
    /// (for baselines and `host history`).
    #[arg(long, value_enum, value_name = "WHAT", conflicts_with = "no_store")]
    pub forget_drift: Option<ForgetArg>,

    /// A label kept with the run (shown by `host history`), e.g. a build
    /// name where the workloads are in no git repository.
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
}

/// What `host history` shows and where.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Benchmarks to show (a row name, a benchmark, or a file with or
    /// without `.wasm`); every one when none is given.
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,

    /// The store of kept runs (as `host run --store`).
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,

    /// How many of the newest kept runs to read.
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub last: usize,

    /// Write each series and its change points as JSON to FILE (`-` for
    /// stdout).
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,

    /// Write a Markdown summary to FILE (`-` for stdout), e.g. for a CI
    /// job summary.
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,

    /// Write one self-contained HTML page with a trend plot per benchmark
    /// to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_html: Option<PathBuf>,

    /// The regression gate: exit with status 3 when a series shown is
    /// slower since its newest change point, certainly by more than PCT
    /// percent (0 when PCT is not given: any certain slow-down). A speed-up
    /// is reported, never failed. Put PCT right after the flag
    /// (`--fail-on-regression 5`) or leave it last.
    #[arg(long, value_name = "PCT", num_args = 0..=1, default_missing_value = "0")]
    pub fail_on_regression: Option<f64>,

    /// Only the series of this measure: `time`, the exact wasm instruction
    /// counts of `--metric instructions` runs (`instructions`), or
    /// Callgrind's exact counts of `--metric cycles-est` runs
    /// (`cycles-est`); what is shown, exported and judged by the gate.
    #[arg(long, value_enum, value_name = "MEASURE")]
    pub metric: Option<MeasureArg>,

    /// For each series whose module changed within the runs shown,
    /// measure the newest module against the one before the change, side
    /// by side in one `host compare` on this machine, from the modules the
    /// store keeps; with `--fail-on-regression`, only a slow-down the
    /// comparison confirms fails.
    #[arg(long)]
    pub confirm: bool,

    /// With `--confirm`: how long each comparison may sample while its
    /// verdict is unsure (as `host compare --time`).
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "10s",
        requires = "confirm"
    )]
    pub confirm_time: String,

    /// Exit with status 3 when any series shown has a change point, a
    /// speed-up as much as a slow-down (use `--fail-on-regression` for a
    /// gate).
    #[arg(long)]
    pub fail_on_change: bool,
}

/// What a series of `host history` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MeasureArg {
    /// The median time per op.
    Time,
    /// Wasm instructions per op (fuel), of `--metric instructions` runs.
    Instructions,
    /// Callgrind's instructions per op, of `--metric cycles-est` runs.
    CyclesEst,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Variants: workload files (every benchmark in them is a variant). A
    /// suite instead, each benchmark compared on its own: with two or more
    /// `--engine` over two or more files (folders and `.suite` files count
    /// their files), every file across the engines; with two or more
    /// folders or `.suite` files, their files paired by benchmark name
    /// (the first path the reference).
    #[arg(required = true, value_name = "FILE")]
    pub paths: Vec<PathBuf>,

    /// The variant the others are compared with (default: the first).
    #[arg(long, value_name = "NAME")]
    pub reference: Option<String>,

    /// Keep sampling while any verdict is unsure, up to this long (in a
    /// suite, per benchmark) [default: 10s; under --suite-time, no cap
    /// but the suite's time]
    #[arg(long, value_name = "DURATION")]
    pub time: Option<String>,

    /// A suite's whole time: a first pass gives every benchmark its first
    /// worker (an even share of a fifth of it, at most `--time` when
    /// given), then a second gives the time left to the verdicts still
    /// open, those likeliest to become certain soonest first.
    #[arg(long, value_name = "DURATION")]
    pub suite_time: Option<String>,

    /// In a suite, exit with status 1 when an engine cannot run a
    /// benchmark (by default such a benchmark is reported as unsupported,
    /// or across three engines or more that engine is left out of it,
    /// and the suite succeeds).
    #[arg(long)]
    pub fail_on_unsupported: bool,

    /// Also profile every variant (as `host profile` does, with its
    /// defaults): tables of the functions that take the most time, and for
    /// each variant the functions whose share changed most.
    #[arg(long)]
    pub profile: bool,

    #[command(flatten)]
    pub store: StoreArgs,

    #[command(flatten)]
    pub measure: MeasureArgs,
}

#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// Workload files (`.wasm`, `.wat`) or folders holding them.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// How long to run each workload while sampling, e.g. `2s`.
    #[arg(long, value_name = "DURATION", default_value = "1s")]
    pub duration: String,

    /// Time between two stack samples, e.g. `500us`.
    #[arg(long, value_name = "DURATION", default_value = "1ms")]
    pub interval: String,

    /// Folder the profiles are written to (`NAME.profile.json` each).
    #[arg(long, value_name = "DIR", default_value = "results/profiles")]
    pub out: PathBuf,

    /// Functions listed per workload.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,

    #[command(flatten)]
    pub measure: MeasureArgs,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A JSON export of `host run` or `host compare`; several exports of
    /// `host run` (the shards of a `--shard K/N` run) are merged into one
    /// report.
    #[arg(value_name = "FILE", required = true)]
    pub paths: Vec<PathBuf>,

    #[command(flatten)]
    pub exports: ExportArgs,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print the findings as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Languages `host new` scaffolds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LangArg {
    /// A Rust crate built for wasm32-unknown-unknown (a core module).
    Rust,
    /// A WAT file, measured as it is.
    Wat,
    /// A C file built with clang and wasi-libc (a core module).
    C,
    /// A Zig file built for wasm32-freestanding (a core module).
    Zig,
    /// An AssemblyScript file built with `asc` (a core module).
    Assemblyscript,
    /// A Go workload (`//go:wasmexport run`) built with GOOS=wasip1 as a
    /// WASI reactor (`-buildmode=c-shared`, a core module).
    Go,
    /// A Go program (`main`) built with GOOS=wasip1, timed by the Sightglass
    /// protocol (`bench.start`/`bench.end`).
    GoProgram,
}

#[derive(Debug, Args)]
pub struct NewArgs {
    /// Name of the workload (letters, digits, `-`, `_`).
    pub name: String,

    #[arg(long, value_enum, default_value_t = LangArg::Rust)]
    pub lang: LangArg,

    /// Folder to create it in.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct SelftestArgs {
    /// Folder of the bundled workloads (xor, empty, mod13, mod16, the chain
    /// pairs, xor-component, empty-component, fib, loop).
    #[arg(long, value_name = "DIR", default_value = "workloads")]
    pub workloads: PathBuf,

    /// Sections to run (default: all).
    #[arg(long, value_enum, value_name = "SECTION")]
    pub only: Vec<SelftestSection>,

    /// Number of separate runs for repeatability.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub runs: usize,

    /// Number of separate A-against-A comparisons, 1% comparisons, and runs
    /// for interval coverage.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub same_runs: usize,

    /// Write the self-test figures as JSON to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
}

/// Parts of `host selftest`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SelftestSection {
    /// Medians of xor over separate runs, their spread, interval coverage,
    /// time to a result.
    Repeatability,
    /// Per-op time of xor (five rounds of every count) and the empty guest at
    /// counts 10^3 to 10^7, every run on one core.
    Counts,
    /// Components against core modules: empty and xor.
    Components,
    /// Verdicts of `host compare`: A against A, mod13 against mod16, a real
    /// 1% difference (chain100 against chain101).
    Verdicts,
    /// Interval coverage over separate runs of xor, xor as a component and
    /// the loop program.
    Intervals,
    /// A call-heavy and a loop-heavy program under `host run` against an
    /// uninstrumented timing of the same `_start`.
    Programs,
    /// The 1% pair compared while a busy loop of the same priority spins on
    /// the last core (the measuring core before the quietest was chosen).
    Busy,
    /// The 0.5% pair (chain200, chain201) with `--noise 0.5 --time 3s` and
    /// the 0.25% pair (chain400, chain401) with `--noise 0.25 --time 10s`,
    /// ten runs each (the budgets are the goals: 3 s and 10 s).
    Small,
    /// Four variants at once (xor, mod13, mod16, xor): every verdict, with
    /// family-wise intervals, ten runs.
    Family,
    /// The change-point detector of `host history` on synthetic series
    /// (noise as measured between runs on two machine classes, steps of 1%,
    /// 3% and 10% injected): recall and false alarms. Measures nothing.
    History,
    /// The regression gate of `host history --fail-on-regression` on runs
    /// kept here (`--same-runs` A/A runs of xor and chain100, then chain100
    /// against chain101): its false-alarm rate per series and the smallest
    /// slow-down it catches nine times in ten, for time and exact counts.
    /// Only with `--only gate` (it keeps some 50 runs).
    Gate,
    /// The suite scheduler: a synthetic suite of paired folders (many short
    /// pairs, two long programs, two close pairs) compared unhurried
    /// (`--time 20s`) and under `--suite-time` a quarter of that: each
    /// one's time and how many verdicts agree.
    Scheduler,
    /// The machine itself: what interrupts each core (a thread spinning on
    /// it, 2 s each), and the spread of xor's samples at counts 10^6 and
    /// 10^7 (the CPU's speed steps and what a long sample carries).
    Machine,
}
