//! The settings of `host run` ([`Settings`]) and what they are made of:
//! the measuring core and priority, the seed rule, the stop rule, the
//! metric, the noise band, the grants of programs, the saved baselines.

use std::fmt;
use std::num::{NonZeroU64, NonZeroUsize};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cli::{IntervalArg, MeasureArgs, MetricArg, PriorityArg, RunArgs};
use crate::options::engine::{EngineConfig, WasmFlags, default_cache_folder, engine_configs};
use crate::options::exports::Exports;
use crate::options::parse::{
    check_baseline_name, parse_bytes, parse_duration, parse_sizes, positive_duration,
};
use crate::options::shard::Shard;

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
    /// Which interval a row shows (`--interval`).
    pub interval: Headline,
    /// Input sizes, ascending; empty when none were given (then `setup(0)`).
    pub sizes: Vec<u64>,
    /// Where each export goes.
    pub exports: Exports,
    /// What comparisons judge by.
    pub metric: Metric,
    /// Ratios that count as "no difference" (compare, baseline, watch).
    pub noise: NoiseBand,
    pub baselines: Baselines,
    /// The store of kept runs.
    pub store: crate::options::store::StoreSettings,
    /// No progress display.
    pub quiet: bool,
    /// What programs are granted beyond their own folder.
    pub grants: Grants,
    /// How code is compiled: one entry per `--engine`, in order.
    pub engines: Vec<EngineConfig>,
    /// The compile cache folder; `None` with `--no-cache`.
    pub cache: Option<PathBuf>,
    /// Cap on each instance's linear memories and tables, in bytes.
    pub max_memory_bytes: u64,
    /// Ask for transparent huge pages for workloads' linear memories.
    pub huge_pages: bool,
    /// Largest workload file read, in bytes (`--max-file-size`).
    pub max_file_bytes: u64,
    /// Deadline of one guest call.
    pub timeout: Duration,
    /// Worker processes per workload, when fixed (`--processes`).
    pub processes: Option<NonZeroUsize>,
    /// `host run --shard K/N`: the share of the files this run measures.
    pub shard: Option<Shard>,
    /// `host run --save-expected`: save each program's output from one run
    /// as its expected output before measuring.
    pub save_expected: bool,
    /// `host run --control`: measure the built-in control beside the
    /// workloads.
    pub control: bool,
    /// `host run --reference`: the engine the runtime view's ratios are
    /// to; the first `--engine` when `None`.
    pub reference: Option<String>,
}

/// Which of a row's two 95% intervals it shows: where a later run's median
/// may land (the default), or this run's processes alone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Headline {
    #[default]
    LaterRun,
    ThisRun,
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

/// Capabilities granted to programs (`--dir`, `--env`, `--arg`,
/// `--real-clock`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grants {
    /// Host folder and the guest path it appears at.
    pub dirs: Vec<(PathBuf, String)>,
    pub env: Vec<(String, String)>,
    pub args: Vec<String>,
    /// The system's wall clock, not the stepped one
    /// ([`crate::guest::seeds::GuestWallClock`]).
    #[serde(default)]
    pub real_clock: bool,
}

impl Grants {
    fn parse(dirs: &[String], env: &[String], args: &[String], real_clock: bool) -> Result<Self> {
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
            real_clock,
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
    /// `name` when it names one of `--engine` (as the rows name them).
    fn engine_named(&self, name: &str) -> Result<String> {
        let names: Vec<String> = self.engines.iter().map(|e| e.short_name()).collect();
        match names.iter().any(|n| n == name) {
            true if names.len() > 1 => Ok(name.to_string()),
            true => bail!(
                "--reference is the engine a multi-engine run's ratios are to: give two `--engine` or more"
            ),
            false => bail!(
                "--reference {name}: not one of the engines measured ({})",
                names.join(", ")
            ),
        }
    }

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
        if args.store.no_store && args.save_baseline.is_some() {
            bail!("--no-store: a baseline is a kept run; --save-baseline keeps this one");
        }
        for name in [&args.save_baseline, &args.baseline].into_iter().flatten() {
            check_baseline_name(name)?;
        }
        let baselines = Baselines {
            save: args.save_baseline,
            compare: args.baseline,
            fail_on_regression_pct: args.fail_on_regression,
        };
        let store = args.store;
        let mut settings =
            Self::from_measure_args(args.paths, args.measure, stop, args.drift, baselines)?;
        settings.exports.check()?;
        settings.shard = args.shard.as_deref().map(Shard::parse).transpose()?;
        settings.save_expected = args.save_expected;
        settings.control = args.control;
        settings.reference = args
            .reference
            .map(|name| settings.engine_named(&name))
            .transpose()?;
        settings.interval = match args.interval {
            IntervalArg::LaterRun => Headline::LaterRun,
            IntervalArg::ThisRun => Headline::ThisRun,
        };
        settings.store = crate::options::store::StoreSettings::from_args(store)?;
        Ok(settings)
    }

    /// The options every measuring command shares.
    pub(crate) fn from_measure_args(
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
            interval: Headline::default(),
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
            store: crate::options::store::StoreSettings::default(),
            quiet: args.quiet,
            grants: Grants::parse(&args.dir, &args.env, &args.arg, args.real_clock)?,
            engines: engine_configs(
                &args.engine,
                &args.engine_flags,
                args.opt_level,
                WasmFlags::parse(&args.wasm)?,
            )?,
            cache: if args.no_cache {
                None
            } else {
                default_cache_folder()
            },
            max_memory_bytes: parse_bytes("--max-memory", &args.max_memory)?,
            huge_pages: args.huge_pages == "on",
            max_file_bytes: parse_bytes("--max-file-size", &args.max_file_size)?,
            timeout: positive_duration("--timeout", &args.timeout)?,
            processes: match args.processes {
                None => None,
                Some(n) => Some(NonZeroUsize::new(n).context("--processes must be at least 1")?),
            },
            shard: None,
            save_expected: false,
            control: false,
            reference: None,
        })
    }
}
