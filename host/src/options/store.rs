//! Where kept runs live, and how `host run` and `host history` use them:
//! the store folder (`--store`, `$WASM_BENCH_STORE`, else under the XDG data
//! home), whether this run is kept, its label, and what `host history`
//! shows and judges (the measure of a series, the regression gate, the
//! side-by-side confirmation).

use std::path::PathBuf;

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

use crate::cli::{ForgetArg, HistoryArgs, MeasureArg, StoreArgs};
use crate::options::exports::Output;

/// The longest `--label` kept.
pub const MAX_LABEL_CHARS: usize = 200;

/// The store of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StoreSettings {
    /// The store folder; `None` where no home is known and none was named.
    pub folder: Option<PathBuf>,
    /// Whether this run is kept (not with `--no-store`, nor in `host watch`).
    pub keep: bool,
    /// Whether the drift of earlier runs is read (not with `--no-store`).
    pub read: bool,
    /// Whose drift to forget before measuring (`--forget-drift`).
    pub forget: Option<ForgetDrift>,
    pub label: Option<String>,
}

/// Whose drift `--forget-drift` forgets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ForgetDrift {
    /// The earlier runs of the rows measured now.
    Rows,
    /// Every earlier run on this CPU.
    Machine,
}

impl StoreSettings {
    /// Check and convert the store flags of `host run`.
    pub fn from_args(args: StoreArgs) -> Result<Self> {
        if let Some(label) = &args.label
            && (label.chars().count() > MAX_LABEL_CHARS || label.chars().any(char::is_control))
        {
            bail!("--label: at most {MAX_LABEL_CHARS} characters, none of them control characters");
        }
        Ok(StoreSettings {
            folder: args.store.or_else(default_store_folder),
            keep: !args.no_store,
            read: !args.no_store,
            forget: args.forget_drift.map(|f| match f {
                ForgetArg::Rows => ForgetDrift::Rows,
                ForgetArg::Machine => ForgetDrift::Machine,
            }),
            label: args.label,
        })
    }
}

/// The store folder: `$WASM_BENCH_STORE`, else `$XDG_DATA_HOME/wasm-bench/store`,
/// else `~/.local/share/wasm-bench/store`.
pub fn default_store_folder() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("WASM_BENCH_STORE").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("wasm-bench").join("store"));
    }
    std::env::var_os("HOME").map(|home| {
        PathBuf::from(home)
            .join(".local")
            .join("share")
            .join("wasm-bench")
            .join("store")
    })
}

/// What `host history` needs.
#[derive(Debug, Clone)]
pub struct HistorySettings {
    pub names: Vec<String>,
    pub store: PathBuf,
    /// The newest runs read.
    pub last: usize,
    pub json: Option<Output>,
    pub markdown: Option<Output>,
    pub html: Option<PathBuf>,
    pub fail_on_change: bool,
    /// The regression gate's threshold in percent (`--fail-on-regression`).
    pub fail_on_regression: Option<f64>,
    /// Only the series of this measure (`--metric`).
    pub measure: Option<Measure>,
    /// With `--confirm`: how long each side-by-side comparison may sample
    /// (`--confirm-time`, checked).
    pub confirm: Option<String>,
}

/// What a series of kept runs measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Measure {
    /// The median time per op, in ns.
    Time,
    /// Wasm instructions per op (fuel): deterministic.
    Instructions,
    /// Callgrind's instructions per op: deterministic.
    CallgrindInstructions,
}

impl Measure {
    pub fn deterministic(self) -> bool {
        self != Measure::Time
    }

    /// Its name in a table.
    pub fn describe(self) -> &'static str {
        match self {
            Measure::Time => "time",
            Measure::Instructions => "wasm instructions",
            Measure::CallgrindInstructions => "Callgrind instructions",
        }
    }
}

impl HistorySettings {
    /// Check and convert the flags of `host history`.
    pub fn from_args(args: HistoryArgs) -> Result<Self> {
        let Some(store) = args.store.or_else(default_store_folder) else {
            bail!("no store: name one with --store DIR or WASM_BENCH_STORE");
        };
        if args.last == 0 || args.last > MAX_HISTORY_RUNS {
            bail!("--last must be 1 to {}", MAX_HISTORY_RUNS);
        }
        let stdout = [&args.export_json, &args.export_markdown]
            .iter()
            .filter(|p| p.as_ref().is_some_and(|p| p.as_os_str() == "-"))
            .count();
        if stdout > 1 {
            bail!("only one export may go to stdout (`-`)");
        }
        let output = |p: PathBuf| match p.as_os_str() == "-" {
            true => Output::Stdout,
            false => Output::File(p),
        };
        if let Some(pct) = args.fail_on_regression
            && !(pct >= 0.0 && pct.is_finite())
        {
            bail!("--fail-on-regression must be a percentage of 0 or more");
        }
        let confirm = match args.confirm {
            true => {
                crate::options::parse::positive_duration("--confirm-time", &args.confirm_time)?;
                Some(args.confirm_time)
            }
            false => None,
        };
        Ok(HistorySettings {
            fail_on_regression: args.fail_on_regression,
            measure: args.metric.map(|m| match m {
                MeasureArg::Time => Measure::Time,
                MeasureArg::Instructions => Measure::Instructions,
                MeasureArg::CyclesEst => Measure::CallgrindInstructions,
            }),
            confirm,
            names: args.names,
            store,
            last: args.last,
            json: args.export_json.map(output),
            markdown: args.export_markdown.map(output),
            html: args.export_html,
            fail_on_change: args.fail_on_change,
        })
    }
}

/// The most runs `host history --last` reads.
pub const MAX_HISTORY_RUNS: usize = 1000;
