//! Typed settings, made once from the raw flags of [`crate::cli`].
//!
//! Everything after this stage reads [`Settings`] (and [`CompareSettings`]),
//! never clap types. This module checks values and converts units
//! (durations, sizes, bytes, percentages); it does not touch the file system
//! or the machine.

use std::fmt;
use std::num::{NonZeroU64, NonZeroUsize};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cli::{
    CompareArgs, EngineArg, ExportArgs, MeasureArgs, MetricArg, OptLevelArg, PriorityArg,
    ProfileArgs, ReportArgs, RunArgs,
};

/// Default wall-clock budget for one workload, compile included.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(2);

/// Where the measuring thread should run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PinRequest {
    /// The quietest core (by load, watched briefly before measuring); the
    /// last core when loads cannot be read.
    Quietest,
    /// A core chosen by the user.
    Core(usize),
    /// Do not pin.
    None,
}

/// Which scheduling class the measuring thread asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PriorityRequest {
    /// nice -20 under the normal scheduler.
    Nice,
    /// SCHED_FIFO, falling back to nice -20.
    Fifo,
    /// Leave it alone.
    None,
}

/// Which seed each `run(count, seed)` call gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SeedRule {
    /// Every call gets a seed of its own, derived from the run's seed and
    /// the call's index ([`crate::guest::seeds`]).
    #[default]
    PerCall,
    /// Every call gets the run's seed (`--same-seed`).
    Same,
}

/// When sampling stops.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum StopRule {
    /// Stop once the 95% interval of the median is within `pct` percent of
    /// it, or once the workload has used `budget` (compile included).
    Precision { pct: f64, budget: Duration },
    /// Take exactly this many samples.
    Samples(NonZeroUsize),
    /// Sample for this long.
    Time(Duration),
}

/// Where an export goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Output {
    Stdout,
    File(PathBuf),
}

impl Output {
    fn from_path(path: PathBuf) -> Self {
        if path.as_os_str() == "-" {
            Output::Stdout
        } else {
            Output::File(path)
        }
    }
}

/// Everything `host run` needs to know, checked.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Settings {
    /// Files or folders as given; [`crate::guest::discover`] expands folders.
    pub paths: Vec<PathBuf>,
    pub pin: PinRequest,
    pub priority: PriorityRequest,
    /// Upper bound on the warm-up of one workload.
    pub warmup_cap: Duration,
    /// Operations per sample, when fixed by the user.
    pub count: Option<NonZeroU64>,
    pub stop: StopRule,
    /// Target duration of one sample; the pilot picks a count that fills it.
    pub sample_time: Duration,
    /// The run's seed; `None` draws a fresh one.
    pub seed: Option<u64>,
    /// Whether each call gets a seed of its own or the run's seed.
    pub seed_rule: SeedRule,
    /// Run-to-run drift added to the interval, in percent.
    pub drift_pct: f64,
    /// Input sizes, ascending; empty when none were given (then `setup(0)`).
    pub sizes: Vec<u64>,
    /// Where each export goes.
    pub exports: Exports,
    /// What comparisons judge by.
    pub metric: Metric,
    /// Ratios that count as "no difference" (compare, baseline, watch).
    pub noise: NoiseBand,
    pub baselines: Baselines,
    /// No progress display.
    pub quiet: bool,
    /// What program workloads are granted beyond their own folder.
    pub grants: Grants,
    /// How code is compiled: one entry per `--engine`, in order.
    pub engines: Vec<EngineConfig>,
    /// The compile cache folder; `None` with `--no-cache`.
    pub cache: Option<PathBuf>,
    /// Cap on each instance's linear memories and tables, in bytes.
    pub max_memory_bytes: u64,
    /// Largest workload file read, in bytes (`--max-file-size`).
    pub max_file_bytes: u64,
    /// Deadline of one guest call.
    pub timeout: Duration,
    /// Worker processes per workload, when fixed (`--processes`).
    pub processes: Option<NonZeroUsize>,
}

/// What comparisons judge by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Metric {
    /// Time per op.
    Time,
    /// Wasm instructions per op (fuel), measured beside the time.
    Instructions,
    /// Callgrind's estimated cycles per op (and its counts), measured beside
    /// the time in a worker run under Valgrind.
    CyclesEst,
    /// Instructions and cycles per op from the hardware counters, counted
    /// beside the time on the code that is timed; informative, never judged
    /// by (cycles move with the machine as time does).
    Counters,
}

impl Metric {
    /// The name comparisons give it.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Time => "time",
            Metric::Instructions => "instructions",
            Metric::CyclesEst => "cycles-est",
            Metric::Counters => "counters",
        }
    }
}

/// The band of ratios that count as "no difference". `--noise PCT` is its
/// width: with the default 1, ratios within ±0.5% of 1 are "same". The band
/// is symmetric in log space, `[1/(1+h), 1+h]` with `h` half the width.
/// Compare, the baseline comparison and watch all read this one definition.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NoiseBand {
    width_pct: f64,
}

impl NoiseBand {
    /// The band `--noise PCT` asks for.
    pub fn from_width_pct(width_pct: f64) -> Result<Self> {
        if !(width_pct >= 0.0 && width_pct.is_finite()) {
            bail!("--noise must be a percentage of 0 or more");
        }
        Ok(NoiseBand { width_pct })
    }

    /// The whole width, in percent (what `--noise` says).
    pub fn width_pct(&self) -> f64 {
        self.width_pct
    }

    /// Half the width, as a fraction: `h` in `[1/(1+h), 1+h]`.
    pub fn half(&self) -> f64 {
        self.width_pct / 200.0
    }
}

impl Default for NoiseBand {
    fn default() -> Self {
        NoiseBand { width_pct: 1.0 }
    }
}

impl fmt::Display for NoiseBand {
    /// `noise band ±0.5%`: the one wording every output uses.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "noise band ±{}%", self.width_pct / 2.0)
    }
}

/// Which compiler turns wasm into code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Compiler {
    /// Cranelift, the optimising compiler (the default).
    Cranelift,
    /// Winch, the baseline compiler: fast to compile, slower code.
    Winch,
    /// Pulley, wasmtime's portable interpreter.
    Pulley,
}

/// Cranelift's optimisation level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OptimizeFor {
    None,
    Speed,
    SpeedAndSize,
}

/// A WebAssembly proposal `-W` turns on or off, by wasmtime's name for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proposal {
    Gc,
    FunctionReferences,
    Exceptions,
    TailCall,
    Simd,
    RelaxedSimd,
    MultiMemory,
    Threads,
    Memory64,
    ExtendedConst,
    WideArithmetic,
    CustomPageSizes,
    StackSwitching,
    BulkMemory,
    ReferenceTypes,
    MultiValue,
    BranchHinting,
}

impl Proposal {
    /// Every proposal, in the order reports list them.
    pub const ALL: [Proposal; 17] = [
        Proposal::Gc,
        Proposal::FunctionReferences,
        Proposal::Exceptions,
        Proposal::TailCall,
        Proposal::Simd,
        Proposal::RelaxedSimd,
        Proposal::MultiMemory,
        Proposal::Threads,
        Proposal::Memory64,
        Proposal::ExtendedConst,
        Proposal::WideArithmetic,
        Proposal::CustomPageSizes,
        Proposal::StackSwitching,
        Proposal::BulkMemory,
        Proposal::ReferenceTypes,
        Proposal::MultiValue,
        Proposal::BranchHinting,
    ];

    /// The name `wasmtime run -W` gives it.
    pub fn name(self) -> &'static str {
        match self {
            Proposal::Gc => "gc",
            Proposal::FunctionReferences => "function-references",
            Proposal::Exceptions => "exceptions",
            Proposal::TailCall => "tail-call",
            Proposal::Simd => "simd",
            Proposal::RelaxedSimd => "relaxed-simd",
            Proposal::MultiMemory => "multi-memory",
            Proposal::Threads => "threads",
            Proposal::Memory64 => "memory64",
            Proposal::ExtendedConst => "extended-const",
            Proposal::WideArithmetic => "wide-arithmetic",
            Proposal::CustomPageSizes => "custom-page-sizes",
            Proposal::StackSwitching => "stack-switching",
            Proposal::BulkMemory => "bulk-memory",
            Proposal::ReferenceTypes => "reference-types",
            Proposal::MultiValue => "multi-value",
            Proposal::BranchHinting => "branch-hinting",
        }
    }

    fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

/// Proposals turned on or off with `-W`; the rest keep wasmtime's defaults.
/// Recorded as `{"gc": false, "memory64": true}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(
    into = "std::collections::BTreeMap<String, bool>",
    try_from = "std::collections::BTreeMap<String, bool>"
)]
pub struct WasmFlags {
    on: u32,
    off: u32,
}

impl WasmFlags {
    /// Parse `-W` values: `NAME`, `NAME=y|n` (also `yes`/`no`, `true`/
    /// `false`), comma-separated or repeated; a later value wins.
    pub fn parse(values: &[String]) -> Result<Self> {
        let mut flags = WasmFlags::default();
        for item in values.iter().flat_map(|v| v.split(',')) {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let (name, value) = item.split_once('=').unwrap_or((item, "y"));
            let on = match value {
                "y" | "yes" | "true" => true,
                "n" | "no" | "false" => false,
                _ => bail!("-W {item}: the value must be y or n"),
            };
            let proposal = Proposal::ALL
                .into_iter()
                .find(|p| p.name() == name)
                .with_context(|| {
                    let names: Vec<&str> = Proposal::ALL.iter().map(|p| p.name()).collect();
                    format!(
                        "-W {item}: unknown proposal `{name}` (known: {})",
                        names.join(", ")
                    )
                })?;
            flags.set(proposal, on);
        }
        Ok(flags)
    }

    /// Turn `proposal` on or off.
    pub fn set(&mut self, proposal: Proposal, on: bool) {
        if on {
            self.on |= proposal.bit();
            self.off &= !proposal.bit();
        } else {
            self.off |= proposal.bit();
            self.on &= !proposal.bit();
        }
    }

    /// What `-W` said of `proposal`: `None` keeps wasmtime's default.
    pub fn get(&self, proposal: Proposal) -> Option<bool> {
        if self.on & proposal.bit() != 0 {
            Some(true)
        } else if self.off & proposal.bit() != 0 {
            Some(false)
        } else {
            None
        }
    }

    /// Every proposal `-W` named, with its setting.
    pub fn settings(&self) -> impl Iterator<Item = (Proposal, bool)> + '_ {
        Proposal::ALL
            .into_iter()
            .filter_map(|p| self.get(p).map(|on| (p, on)))
    }
}

impl From<WasmFlags> for std::collections::BTreeMap<String, bool> {
    fn from(flags: WasmFlags) -> Self {
        flags
            .settings()
            .map(|(p, on)| (p.name().to_string(), on))
            .collect()
    }
}

impl TryFrom<std::collections::BTreeMap<String, bool>> for WasmFlags {
    type Error = anyhow::Error;
    fn try_from(map: std::collections::BTreeMap<String, bool>) -> Result<Self> {
        let values: Vec<String> = map
            .into_iter()
            .map(|(name, on)| format!("{name}={}", if on { "y" } else { "n" }))
            .collect();
        WasmFlags::parse(&values)
    }
}

impl fmt::Display for WasmFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items: Vec<String> = self
            .settings()
            .map(|(p, on)| format!("{}={}", p.name(), if on { "y" } else { "n" }))
            .collect();
        f.write_str(&items.join(","))
    }
}

/// How code is compiled: recorded in the report and part of cache keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EngineConfig {
    pub compiler: Compiler,
    pub opt_level: OptimizeFor,
    /// Proposals turned on or off with `-W` (wasmtime's defaults for the
    /// rest).
    #[serde(default)]
    pub wasm: WasmFlags,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            compiler: Compiler::Cranelift,
            opt_level: OptimizeFor::Speed,
            wasm: WasmFlags::default(),
        }
    }
}

impl fmt::Display for EngineConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.compiler {
            Compiler::Cranelift => {
                let level = match self.opt_level {
                    OptimizeFor::None => "none",
                    OptimizeFor::Speed => "speed",
                    OptimizeFor::SpeedAndSize => "speed_and_size",
                };
                write!(f, "cranelift (opt-level {level})")?;
            }
            Compiler::Winch => f.write_str("winch")?,
            Compiler::Pulley => f.write_str("pulley")?,
        }
        if self.wasm != WasmFlags::default() {
            write!(f, " -W {}", self.wasm)?;
        }
        Ok(())
    }
}

impl EngineConfig {
    /// A short name for row suffixes: `cranelift`, `winch`, `pulley`.
    pub fn short_name(&self) -> &'static str {
        match self.compiler {
            Compiler::Cranelift => "cranelift",
            Compiler::Winch => "winch",
            Compiler::Pulley => "pulley",
        }
    }
}

/// The compile cache folder: `$WASM_BENCH_CACHE`, else
/// `$XDG_CACHE_HOME/wasm-bench`, else `~/.cache/wasm-bench`.
pub fn default_cache_folder() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("WASM_BENCH_CACHE") {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return Some(PathBuf::from(dir).join("wasm-bench"));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache").join("wasm-bench"))
}

/// An export format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExportFormat {
    Json,
    Markdown,
    Csv,
    Html,
    /// github-action-benchmark's `customSmallerIsBetter` JSON.
    Dashboard,
    /// Bencher's metric format.
    Bencher,
}

impl ExportFormat {
    /// The flag that asks for it.
    pub fn flag(self) -> &'static str {
        match self {
            ExportFormat::Json => "--export-json",
            ExportFormat::Markdown => "--export-markdown",
            ExportFormat::Csv => "--export-csv",
            ExportFormat::Html => "--export-html",
            ExportFormat::Dashboard => "--export-dashboard",
            ExportFormat::Bencher => "--export-bencher",
        }
    }

    /// Formats that track each workload over time: `host run` only.
    fn run_only(self) -> bool {
        matches!(self, ExportFormat::Dashboard | ExportFormat::Bencher)
    }
}

/// The exports asked for: a list of (format, where it goes).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exports(Vec<(ExportFormat, Output)>);

impl Exports {
    fn from_args(args: ExportArgs) -> Self {
        let asked = [
            (ExportFormat::Json, args.export_json),
            (ExportFormat::Markdown, args.export_markdown),
            (ExportFormat::Csv, args.export_csv),
            (ExportFormat::Html, args.export_html),
            (ExportFormat::Dashboard, args.export_dashboard),
            (ExportFormat::Bencher, args.export_bencher),
        ];
        Exports(
            asked
                .into_iter()
                .filter_map(|(format, path)| path.map(|p| (format, Output::from_path(p))))
                .collect(),
        )
    }

    /// Every export asked for.
    pub fn iter(&self) -> impl Iterator<Item = (ExportFormat, &Output)> {
        self.0.iter().map(|(format, output)| (*format, output))
    }

    /// Where `format` goes, if it was asked for.
    pub fn get(&self, format: ExportFormat) -> Option<&Output> {
        self.iter().find(|(f, _)| *f == format).map(|(_, o)| o)
    }

    /// Whether an export goes to stdout (then the table goes to stderr).
    pub fn to_stdout(&self) -> bool {
        self.iter().any(|(_, o)| *o == Output::Stdout)
    }

    /// At most one export may go to stdout.
    fn check(&self) -> Result<()> {
        let to_stdout: Vec<&str> = self
            .iter()
            .filter(|(_, o)| **o == Output::Stdout)
            .map(|(format, _)| format.flag())
            .collect();
        if to_stdout.len() > 1 {
            bail!(
                "{}: only one export can go to stdout (`-`)",
                to_stdout.join(", ")
            );
        }
        Ok(())
    }

    /// Compare reports have no per-workload history formats.
    fn check_for_compare(&self) -> Result<()> {
        if let Some((format, _)) = self.iter().find(|(f, _)| f.run_only()) {
            bail!(
                "{}: for `host run` only (it tracks each workload over time)",
                format.flag()
            );
        }
        Ok(())
    }
}

/// What `host report` needs: the saved export and where to render it.
#[derive(Debug, Clone)]
pub struct ReportSettings {
    pub path: PathBuf,
    pub exports: Exports,
}

impl ReportSettings {
    /// Check and convert the flags of `host report`.
    pub fn from_args(args: ReportArgs) -> Result<Self> {
        let exports = Exports::from_args(args.exports);
        exports.check()?;
        Ok(ReportSettings {
            path: args.path,
            exports,
        })
    }
}

/// Capabilities granted to program workloads (`--dir`, `--env`, `--arg`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grants {
    /// Host folder and the guest path it appears at.
    pub dirs: Vec<(PathBuf, String)>,
    pub env: Vec<(String, String)>,
    pub args: Vec<String>,
}

impl Grants {
    fn parse(dirs: &[String], env: &[String], args: &[String]) -> Result<Self> {
        let dirs = dirs
            .iter()
            .map(|d| match d.split_once("::") {
                Some((host, guest)) if !host.is_empty() && !guest.is_empty() => {
                    Ok((PathBuf::from(host), guest.to_string()))
                }
                Some(_) => bail!("--dir: `{d}` is not HOST::GUEST"),
                None => Ok((PathBuf::from(d), d.clone())),
            })
            .collect::<Result<Vec<_>>>()?;
        let env = env
            .iter()
            .map(|e| match e.split_once('=') {
                Some((key, value)) if !key.is_empty() => Ok((key.to_string(), value.to_string())),
                _ => bail!("--env: `{e}` is not KEY=VALUE"),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Grants {
            dirs,
            env,
            args: args.to_vec(),
        })
    }
}

/// Saved baselines to write or compare with.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Baselines {
    pub save: Option<String>,
    pub compare: Option<String>,
    /// Exit with a distinct status when a workload is certainly slower than
    /// the baseline by more than this many percent.
    pub fail_on_regression_pct: Option<f64>,
}

impl Settings {
    /// Check and convert the flags of `host run`.
    pub fn from_run_args(args: RunArgs) -> Result<Self> {
        let stop = match (args.samples, args.time) {
            (Some(n), _) => {
                StopRule::Samples(NonZeroUsize::new(n).context("--samples must be at least 1")?)
            }
            (None, Some(time)) => StopRule::Time(positive_duration("--time", &time)?),
            (None, None) => {
                if !(args.precision > 0.0 && args.precision.is_finite()) {
                    bail!("--precision must be a positive percentage");
                }
                StopRule::Precision {
                    pct: args.precision,
                    budget: DEFAULT_BUDGET,
                }
            }
        };
        if !(args.drift >= 0.0 && args.drift.is_finite()) {
            bail!("--drift must be a percentage of 0 or more");
        }
        if let Some(pct) = args.fail_on_regression
            && !(pct >= 0.0 && pct.is_finite())
        {
            bail!("--fail-on-regression must be a percentage of 0 or more");
        }
        for name in [&args.save_baseline, &args.baseline].into_iter().flatten() {
            check_baseline_name(name)?;
        }
        let baselines = Baselines {
            save: args.save_baseline,
            compare: args.baseline,
            fail_on_regression_pct: args.fail_on_regression,
        };
        let settings =
            Self::from_measure_args(args.paths, args.measure, stop, args.drift, baselines)?;
        settings.exports.check()?;
        Ok(settings)
    }

    /// The options every measuring command shares.
    fn from_measure_args(
        paths: Vec<PathBuf>,
        args: MeasureArgs,
        stop: StopRule,
        drift_pct: f64,
        baselines: Baselines,
    ) -> Result<Self> {
        let pin = match (args.no_pin, args.core) {
            (true, _) => PinRequest::None,
            (false, Some(core)) => PinRequest::Core(core),
            (false, None) => PinRequest::Quietest,
        };
        let priority = match args.priority {
            PriorityArg::Nice => PriorityRequest::Nice,
            PriorityArg::Fifo => PriorityRequest::Fifo,
            PriorityArg::None => PriorityRequest::None,
        };
        let count = match args.count {
            None => None,
            Some(n) => {
                let n = NonZeroU64::new(n).context("--count must be at least 1")?;
                if n.get() > i64::MAX as u64 {
                    bail!("--count must fit in a signed 64-bit integer");
                }
                Some(n)
            }
        };
        Ok(Settings {
            paths,
            pin,
            priority,
            warmup_cap: parse_duration("--warmup", &args.warmup)?,
            count,
            stop,
            sample_time: positive_duration("--sample-time", &args.sample_time)?,
            seed: args.seed,
            seed_rule: match args.same_seed {
                true => SeedRule::Same,
                false => SeedRule::PerCall,
            },
            drift_pct,
            sizes: parse_sizes(&args.size)?,
            exports: Exports::from_args(args.exports),
            noise: NoiseBand::from_width_pct(args.noise)?,
            metric: match args.metric {
                MetricArg::Time => Metric::Time,
                MetricArg::Instructions => Metric::Instructions,
                MetricArg::CyclesEst => Metric::CyclesEst,
                MetricArg::Counters => Metric::Counters,
            },
            baselines,
            quiet: args.quiet,
            grants: Grants::parse(&args.dir, &args.env, &args.arg)?,
            engines: engine_configs(&args.engine, args.opt_level, WasmFlags::parse(&args.wasm)?),
            cache: if args.no_cache {
                None
            } else {
                default_cache_folder()
            },
            max_memory_bytes: parse_bytes("--max-memory", &args.max_memory)?,
            max_file_bytes: parse_bytes("--max-file-size", &args.max_file_size)?,
            timeout: positive_duration("--timeout", &args.timeout)?,
            processes: match args.processes {
                None => None,
                Some(n) => Some(NonZeroUsize::new(n).context("--processes must be at least 1")?),
            },
        })
    }
}

/// What `host compare` needs beyond [`Settings`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CompareSettings {
    pub settings: Settings,
    /// Name of the reference variant; the first when `None`.
    pub reference: Option<String>,
    /// Sampling stops at this point even if a verdict is unsure.
    pub time_cap: Duration,
    /// Profile the variants too (`--profile`).
    pub profile: Option<Profiling>,
}

/// How `host profile` (and `compare --profile`) samples.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Profiling {
    /// How long each workload runs while sampled.
    pub duration: Duration,
    /// Between two stack samples.
    pub interval: Duration,
    /// Where the profiles are written.
    pub folder: PathBuf,
    /// Functions listed per workload.
    pub top: usize,
}

impl Default for Profiling {
    fn default() -> Self {
        Profiling {
            duration: Duration::from_secs(1),
            interval: Duration::from_millis(1),
            folder: PathBuf::from("results/profiles"),
            top: 10,
        }
    }
}

/// The settings of `host profile`.
#[derive(Debug, Clone)]
pub struct ProfileSettings {
    pub settings: Settings,
    pub profiling: Profiling,
}

impl ProfileSettings {
    /// Check and convert the flags of `host profile`.
    pub fn from_args(args: ProfileArgs) -> Result<Self> {
        let duration = positive_duration("--duration", &args.duration)?;
        let interval = positive_duration("--interval", &args.interval)?;
        if args.top == 0 {
            bail!("--top must be at least 1");
        }
        let settings = Settings::from_measure_args(
            args.paths,
            args.measure,
            StopRule::Time(duration),
            0.0,
            Baselines::default(),
        )?;
        settings.exports.check()?;
        Ok(ProfileSettings {
            settings,
            profiling: Profiling {
                duration,
                interval,
                folder: args.out,
                top: args.top,
            },
        })
    }
}

impl CompareSettings {
    /// Check and convert the flags of `host compare`.
    pub fn from_args(args: CompareArgs) -> Result<Self> {
        let time_cap = positive_duration("--time", &args.time)?;
        let settings = Settings::from_measure_args(
            args.paths,
            args.measure,
            StopRule::Time(time_cap),
            0.0,
            Baselines::default(),
        )?;
        settings.exports.check()?;
        settings.exports.check_for_compare()?;
        if settings.metric == Metric::Counters {
            bail!(
                "--metric counters: compare judges by time, instructions or cycles-est; count hardware counters with `host run`"
            );
        }
        if settings.sizes.len() > 1 {
            bail!("--size: compare takes one size (variants are compared at the same size)");
        }
        Ok(CompareSettings {
            settings,
            reference: args.reference,
            time_cap,
            profile: args.profile.then(Profiling::default),
        })
    }
}

/// One engine configuration per `--engine`, without repeats.
fn engine_configs(
    engines: &[EngineArg],
    opt_level: OptLevelArg,
    wasm: WasmFlags,
) -> Vec<EngineConfig> {
    let opt_level = match opt_level {
        OptLevelArg::None => OptimizeFor::None,
        OptLevelArg::Speed => OptimizeFor::Speed,
        OptLevelArg::SpeedAndSize => OptimizeFor::SpeedAndSize,
    };
    let mut configs: Vec<EngineConfig> = Vec::new();
    for engine in engines {
        let compiler = match engine {
            EngineArg::Cranelift => Compiler::Cranelift,
            EngineArg::Winch => Compiler::Winch,
            EngineArg::Pulley => Compiler::Pulley,
        };
        let config = EngineConfig {
            compiler,
            opt_level,
            wasm,
        };
        if !configs.contains(&config) {
            configs.push(config);
        }
    }
    if configs.is_empty() {
        configs.push(EngineConfig {
            wasm,
            ..EngineConfig::default()
        });
    }
    configs
}

/// Parse a size in bytes: `1GiB`, `512MiB`, `64KiB`, `1G`, `100M` (binary
/// units either way) or a plain number of bytes.
pub fn parse_bytes(flag: &str, text: &str) -> Result<u64> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => bail!("{flag}: `{text}` is not a size (try `1GiB` or `256MiB`)"),
    };
    let value: u64 = number
        .parse()
        .ok()
        .with_context(|| format!("{flag}: `{text}` is not a size (try `1GiB` or `256MiB`)"))?;
    let bytes = value
        .checked_mul(scale)
        .with_context(|| format!("{flag}: `{text}` is too large"))?;
    if bytes == 0 {
        bail!("{flag} must be larger than zero");
    }
    Ok(bytes)
}

/// A duration that must be longer than zero.
fn positive_duration(flag: &str, text: &str) -> Result<Duration> {
    let duration = parse_duration(flag, text)?;
    if duration.is_zero() {
        bail!("{flag} must be longer than zero");
    }
    Ok(duration)
}

/// Baseline names become file names: keep them plain.
fn check_baseline_name(name: &str) -> Result<()> {
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with('.');
    if !plain {
        bail!("baseline name `{name}`: use letters, digits, `-`, `_` and `.` only");
    }
    Ok(())
}

/// Most rows one `--size` range may produce.
const MAX_SIZES: usize = 1_000;

/// Parse `--size` values: comma-separated terms, each a number, a power
/// (`2^10`) or a doubling range (`16..4096`, `2^4..2^16`, ends included).
/// Returns the sizes ascending, without repeats.
pub fn parse_sizes(specs: &[String]) -> Result<Vec<u64>> {
    let mut sizes = Vec::new();
    for spec in specs {
        for term in spec.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            match term.split_once("..") {
                Some((from, to)) => {
                    let (from, to) = (size_term(from)?, size_term(to)?);
                    if from == 0 || from > to {
                        bail!(
                            "--size: `{term}` is not a range from a positive size up to a larger one"
                        );
                    }
                    let mut n = from;
                    while n < to {
                        sizes.push(n);
                        n = n.saturating_mul(2);
                        if sizes.len() > MAX_SIZES {
                            bail!("--size: `{term}` gives more than {MAX_SIZES} sizes");
                        }
                    }
                    sizes.push(to);
                }
                None => sizes.push(size_term(term)?),
            }
        }
    }
    sizes.sort_unstable();
    sizes.dedup();
    Ok(sizes)
}

fn size_term(term: &str) -> Result<u64> {
    let term = term.trim();
    let value = match term.split_once('^') {
        Some((base, exp)) => {
            let base: u64 = base
                .trim()
                .parse()
                .ok()
                .with_context(|| format!("--size: `{term}` is not a size"))?;
            let exp: u32 = exp
                .trim()
                .parse()
                .ok()
                .with_context(|| format!("--size: `{term}` is not a size"))?;
            base.checked_pow(exp)
                .with_context(|| format!("--size: `{term}` is too large"))?
        }
        None => term
            .parse()
            .ok()
            .with_context(|| format!("--size: `{term}` is not a size"))?,
    };
    if value > i64::MAX as u64 {
        bail!("--size: `{term}` must fit in a signed 64-bit integer");
    }
    Ok(value)
}

/// Parse a duration such as `1s`, `500ms`, `2.5s`, naming the flag on error.
pub fn parse_duration(flag: &str, text: &str) -> Result<Duration> {
    let text = text.trim();
    if let Ok(duration) = humantime::parse_duration(text) {
        return Ok(duration);
    }
    // humantime has no fractional units; accept "2.5s" and plain seconds.
    let (number, scale) = if let Some(n) = text.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1.0)
    } else {
        (text, 1.0)
    };
    match number.trim().parse::<f64>() {
        Ok(value) if value >= 0.0 && value.is_finite() => {
            Ok(Duration::from_secs_f64(value * scale))
        }
        _ => bail!("{flag}: `{text}` is not a duration (try `1s` or `500ms`)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn settings(args: &[&str]) -> Result<Settings> {
        let mut argv = vec!["host", "run"];
        argv.extend_from_slice(args);
        let cli = crate::cli::Cli::try_parse_from(argv)?;
        match cli.command {
            crate::cli::Command::Run(run) => Settings::from_run_args(run),
            _ => bail!("not a run"),
        }
    }

    #[test]
    fn defaults() -> Result<()> {
        let s = settings(&["x.wasm"])?;
        assert_eq!(s.pin, PinRequest::Quietest);
        assert_eq!(s.priority, PriorityRequest::Nice);
        assert_eq!(s.warmup_cap, Duration::from_secs(1));
        assert_eq!(s.sample_time, Duration::from_millis(1));
        assert_eq!(s.count, None);
        assert_eq!(
            s.stop,
            StopRule::Precision {
                pct: 1.0,
                budget: DEFAULT_BUDGET
            }
        );
        assert_eq!(s.exports.get(ExportFormat::Json), None);
        Ok(())
    }

    #[test]
    fn overrides() -> Result<()> {
        let s = settings(&[
            "x.wasm",
            "--core",
            "0",
            "--count",
            "1000",
            "--samples",
            "7",
            "--warmup",
            "250ms",
            "--export-json",
            "-",
        ])?;
        assert_eq!(s.pin, PinRequest::Core(0));
        assert_eq!(s.count.map(NonZeroU64::get), Some(1000));
        assert_eq!(
            s.stop,
            StopRule::Samples(NonZeroUsize::new(7).context("7")?)
        );
        assert_eq!(s.warmup_cap, Duration::from_millis(250));
        assert_eq!(s.exports.get(ExportFormat::Json), Some(&Output::Stdout));
        let s = settings(&["x.wasm", "--time", "2.5s", "--no-pin"])?;
        assert_eq!(s.stop, StopRule::Time(Duration::from_millis(2500)));
        assert_eq!(s.pin, PinRequest::None);
        Ok(())
    }

    #[test]
    fn sizes_lists_powers_and_ranges() -> Result<()> {
        let parse =
            |specs: &[&str]| parse_sizes(&specs.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(parse(&[])?, Vec::<u64>::new());
        assert_eq!(parse(&["100,1000,10000"])?, [100, 1000, 10000]);
        assert_eq!(parse(&["2^4..2^7"])?, [16, 32, 64, 128]);
        assert_eq!(parse(&["10..50"])?, [10, 20, 40, 50]);
        assert_eq!(parse(&["101", "100", "2^10", "100"])?, [100, 101, 1024]);
        for bad in ["x", "2^", "0..8", "8..4", "2^70", "-3"] {
            assert!(parse(&[bad]).is_err(), "{bad} was accepted");
        }
        Ok(())
    }

    #[test]
    fn byte_sizes() -> Result<()> {
        assert_eq!(parse_bytes("--max-memory", "1GiB")?, 1 << 30);
        assert_eq!(parse_bytes("--max-memory", "256MiB")?, 256 << 20);
        assert_eq!(parse_bytes("--max-memory", "64k")?, 64 << 10);
        assert_eq!(parse_bytes("--max-memory", "4096")?, 4096);
        for bad in ["", "GiB", "1.5GiB", "0", "12 parsecs", "99999999999T"] {
            assert!(
                parse_bytes("--max-memory", bad).is_err(),
                "{bad} was accepted"
            );
        }
        let s = settings(&["x.wasm", "--max-memory", "64MiB", "--timeout", "2s"])?;
        assert_eq!(
            (s.max_memory_bytes, s.timeout),
            (64 << 20, Duration::from_secs(2))
        );
        Ok(())
    }

    #[test]
    fn bad_values_name_the_flag() {
        for (args, flag) in [
            (&["x.wasm", "--count", "0"][..], "--count"),
            (&["x.wasm", "--samples", "0"][..], "--samples"),
            (&["x.wasm", "--warmup", "soon"][..], "--warmup"),
            (&["x.wasm", "--time", "0s"][..], "--time"),
            (&["x.wasm", "--precision=-1"][..], "--precision"),
            (&["x.wasm", "--drift=-1"][..], "--drift"),
            (&["x.wasm", "--max-memory", "lots"][..], "--max-memory"),
            (&["x.wasm", "--timeout", "0s"][..], "--timeout"),
        ] {
            match settings(args) {
                Ok(_) => panic!("{args:?} was accepted"),
                Err(e) => assert!(format!("{e:#}").contains(flag), "{e:#}"),
            }
        }
    }

    #[test]
    fn one_noise_band_for_every_comparison() -> Result<()> {
        let s = settings(&["x.wasm"])?;
        assert_eq!(s.noise.width_pct(), 1.0);
        assert_eq!(s.noise.half(), 0.005);
        assert_eq!(s.noise.to_string(), "noise band ±0.5%");
        let s = settings(&["x.wasm", "--noise", "3"])?;
        assert_eq!(s.noise.half(), 0.015);
        assert!(settings(&["x.wasm", "--noise=-1"]).is_err());
        Ok(())
    }
}
