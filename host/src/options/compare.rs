//! The settings of `host compare` and `host profile`.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Parser;
use serde::{Deserialize, Serialize};

use crate::cli::{Cli, Command, CompareArgs, ProfileArgs};
use crate::options::parse::positive_duration;
use crate::options::settings::{Baselines, Metric, Settings, StopRule};

/// How long a comparison samples while a verdict is unsure, without
/// `--time` (and, in a suite, without `--suite-time`).
pub const DEFAULT_TIME: Duration = Duration::from_secs(10);

/// What `host compare` needs beyond [`Settings`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CompareSettings {
    pub settings: Settings,
    /// Name of the reference variant; the first when `None`.
    pub reference: Option<String>,
    /// Sampling stops at this point even if a verdict is unsure: `--time`;
    /// without it, [`DEFAULT_TIME`], or under `--suite-time` the suite's
    /// time (a benchmark's shares of it bound it).
    pub time_cap: Duration,
    /// A suite's whole time (`--suite-time`), shared out among its
    /// benchmarks.
    #[serde(default)]
    pub suite_time: Option<Duration>,
    /// A suite fails when an engine cannot run one of its benchmarks
    /// (`--fail-on-unsupported`).
    #[serde(default)]
    pub fail_on_unsupported: bool,
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

/// The settings of one `host compare` of two files, with its defaults,
/// sampling up to `time` and keeping nothing in the store.
pub fn confirm_settings(time: &str) -> Result<CompareSettings> {
    let args = ["before", "after", "--time", time, "--no-store", "--quiet"];
    CompareSettings::parse(&args).context("--confirm-time")
}

impl CompareSettings {
    /// The settings of `host compare ARGS`, as its command line gives them.
    pub fn parse(args: &[&str]) -> Result<Self> {
        let argv = ["host", "compare"].iter().chain(args);
        let Command::Compare(args) = Cli::try_parse_from(argv)?.command else {
            bail!("not a comparison");
        };
        CompareSettings::from_args(args)
    }

    /// Check and convert the flags of `host compare`.
    pub fn from_args(args: CompareArgs) -> Result<Self> {
        let suite_time = (args.suite_time.as_deref())
            .map(|t| positive_duration("--suite-time", t))
            .transpose()?;
        let time_cap = match (&args.time, suite_time) {
            (Some(time), _) => positive_duration("--time", time)?,
            // A benchmark's shares of the suite's time bound it: a long
            // program's second worker is not refused for a cap meant for
            // one comparison.
            (None, Some(suite)) => suite,
            (None, None) => DEFAULT_TIME,
        };
        let mut settings = Settings::from_measure_args(
            args.paths,
            args.measure,
            StopRule::Time(time_cap),
            0.0,
            Baselines::default(),
        )?;
        settings.store = crate::options::store::StoreSettings::from_args(args.store)?;
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
            suite_time,
            fail_on_unsupported: args.fail_on_unsupported,
            profile: args.profile.then(Profiling::default),
        })
    }
}
