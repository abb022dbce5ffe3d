//! `host compare`: variants measured in one process, with one shared count,
//! interleaved in rounds whose order rotates (A B, B A, ...), so that drift
//! and periodic noise hit every variant alike.
//!
//! Each variant is warmed up and gets its own empty-guest baseline; then, in
//! every round, each variant takes a short block of samples. The ratio of a
//! variant to the reference is the median of the per-round ratios, with a
//! sign-test interval ([`crate::verdict`]). Sampling stops once every verdict
//! is certain (after a minimum of rounds), or at the time cap.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use serde::Serialize;

use crate::cache::CacheOutcome;
use crate::measure::{self, Blocks, Plan, Warmup};
use crate::progress::{Progress, Stage};
use crate::result::{BenchResult, Environment, Figures, Row, Stages, Tool};
use crate::run::describe_failure;
use crate::session::{RowInstances, Session, supervised};
use crate::settings::{CompareSettings, Metric};
use crate::stats;
use crate::verdict::{self, Ratio, Verdict};
use crate::workload::Kind;

/// Rounds before the verdicts may stop sampling.
pub const MIN_ROUNDS: usize = 30;
/// Target wall time of one variant's block in a round.
pub const ROUND_BLOCK_TIME: Duration = Duration::from_millis(5);
/// Most samples one variant takes in a round (very short calls).
pub const ROUND_BLOCK_MAX: usize = 100;

/// One variant against the reference.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub variant: String,
    pub reference: String,
    /// What the ratio is of: "time" or "instructions".
    pub metric: String,
    /// Per-op time (or instructions) of the variant over the reference's.
    pub ratio: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
    pub verdict: Verdict,
    /// The verdict in plain words.
    pub text: String,
}

/// Everything one `host compare` produced.
#[derive(Debug, Clone, Serialize)]
pub struct CompareReport {
    pub tool: Tool,
    pub environment: Environment,
    pub reference: String,
    /// Noise threshold in percent.
    pub noise_pct: f64,
    /// The shared count of operations per sample.
    pub count: u64,
    pub rounds: usize,
    pub sampling_ms: f64,
    /// Each variant's own figures, as in `host run`.
    pub variants: Vec<BenchResult>,
    pub comparisons: Vec<Comparison>,
}

/// Compare the variants in `files`.
pub fn compare(
    settings: &CompareSettings,
    files: &[PathBuf],
    progress: &dyn Progress,
) -> Result<CompareReport> {
    supervised(&settings.settings, |engines, guard| {
        let session = Session::new(&settings.settings, files, engines, guard, progress)?;
        let report = compare_all(settings, &session, progress);
        progress.finish();
        report
    })
}

struct Variant {
    row: Row,
    kind: Kind,
    compile_ms: f64,
    compile_cache: CacheOutcome,
    instances: RowInstances,
    warmup: Warmup,
    pilot_count: u64,
    blocks: Option<Blocks>,
    fuel_per_op: Option<f64>,
}

fn compare_all(
    settings: &CompareSettings,
    session: &Session,
    progress: &dyn Progress,
) -> Result<CompareReport> {
    let common = &settings.settings;
    let environment = session.environment(common);
    let plan = Plan {
        sample_time: common.sample_time,
        warmup_cap: common.warmup_cap,
        count: common.count,
        stop: common.stop,
        seed: session.seed,
    };

    // Every benchmark of every file is a variant; any failure stops the
    // comparison (a verdict needs all of them).
    let mut variants = Vec::new();
    for planned in session.rows(&common.sizes) {
        let workload = planned.workload.map_err(|(_, e)| anyhow::anyhow!("{e}"))?;
        let kind = workload.code.kind();
        let row = planned.row;
        let failed = |e: anyhow::Error| anyhow::anyhow!("{}", describe_failure(&row, &e));
        progress.stage(&row.name, Stage::Warmup);
        let mut instances = session.instances(workload, &row).map_err(failed)?;
        let calibration = &session.kind_setup(row.engine_set, kind).calibration;
        let (warmup, pilot_count) =
            measure::tune(&plan, calibration, &mut instances.guarded).map_err(failed)?;
        variants.push(Variant {
            compile_ms: workload.compile_ms,
            compile_cache: workload.cache.clone(),
            row,
            kind,
            instances,
            warmup,
            pilot_count,
            blocks: None,
            fuel_per_op: None,
        });
    }
    // The same file twice (A against A) makes two variants of one name.
    for i in 1..variants.len() {
        let seen = variants[..i]
            .iter()
            .filter(|v| v.row.name == variants[i].row.name)
            .count();
        if seen > 0 {
            variants[i].row.name = format!("{}#{}", variants[i].row.name, seen + 1);
        }
    }
    if variants.len() < 2 {
        bail!("compare needs at least two variants (files, or `run_<name>` benchmarks)");
    }
    let reference = match &settings.reference {
        None => 0,
        Some(name) => variants
            .iter()
            .position(|v| v.row.name == *name)
            .ok_or_else(|| {
                let names: Vec<&str> = variants.iter().map(|v| v.row.name.as_str()).collect();
                anyhow::anyhow!(
                    "--reference: no variant `{name}` (variants: {})",
                    names.join(", ")
                )
            })?,
    };

    // One shared count: the slowest variant's sample fills the target.
    let count = variants.iter().map(|v| v.pilot_count).min().unwrap_or(1);
    for v in &mut variants {
        let calibration = &session.kind_setup(v.row.engine_set, v.kind).calibration;
        let failed = |e: anyhow::Error| anyhow::anyhow!("{}", describe_failure(&v.row, &e));
        measure::prove(&mut v.instances.guarded, count, session.seed).map_err(failed)?;
        v.warmup = measure::warm_up_at(&plan, calibration, count, v.warmup, &mut v.instances.fast)
            .map_err(failed)?;
        v.blocks = Some(
            Blocks::start(
                calibration,
                count,
                session.seed,
                &mut v.instances.fast,
                &mut v.instances.empty,
            )
            .map_err(failed)?,
        );
        if common.metric == Metric::Instructions {
            v.fuel_per_op = Some(session.fuel_per_op(&v.row, count).map_err(failed)?);
        }
    }
    let per_block: Vec<usize> = variants
        .iter()
        .map(|v| {
            v.blocks
                .as_ref()
                .map_or(1, |b| b.samples_per(ROUND_BLOCK_TIME).min(ROUND_BLOCK_MAX))
        })
        .collect();

    progress.stage("variants", Stage::Sampling);
    let sampling = Instant::now();
    let mut rounds = 0;
    let mut comparisons;
    loop {
        let n = variants.len();
        for i in 0..n {
            // Rotate the order every round.
            let index = (i + rounds) % n;
            let v = &mut variants[index];
            if let Some(blocks) = v.blocks.as_mut() {
                blocks
                    .take(
                        &mut v.instances.fast,
                        &mut v.instances.empty,
                        per_block[index],
                    )
                    .map_err(|e| anyhow::anyhow!("{}", describe_failure(&v.row, &e)))?;
            }
        }
        rounds += 1;
        comparisons = judge(&variants, reference, settings.noise / 2.0, common.metric);
        let certain = comparisons.iter().all(|c| c.verdict.is_certain());
        let full = variants.iter().any(|v| {
            v.blocks
                .as_ref()
                .is_some_and(|b| b.taken >= measure::MAX_SAMPLES)
        });
        if (rounds >= MIN_ROUNDS && certain) || sampling.elapsed() >= settings.time_cap || full {
            break;
        }
    }
    let sampling_ms = sampling.elapsed().as_secs_f64() * 1e3;

    let results = variants
        .into_iter()
        .map(|v| {
            let measurement = v.blocks.map(|b| b.finish(v.warmup));
            match measurement {
                Some(m) => {
                    let mut figures = Figures::new(
                        &m,
                        Stages {
                            kind: v.kind,
                            compile_ms: v.compile_ms,
                            compile_cache: v.compile_cache.clone(),
                            instantiate_ms: v.instances.instantiate_ms,
                        },
                        common.warmup_cap.as_secs_f64() * 1e3,
                        session.seed,
                        common.drift_pct,
                    );
                    figures.fuel_per_op = v.fuel_per_op;
                    BenchResult::measured(&v.row, v.kind, figures)
                }
                None => BenchResult::failed(&v.row, Some(v.kind), "not sampled".into()),
            }
        })
        .collect();
    Ok(CompareReport {
        tool: Tool::this(),
        environment,
        reference: comparisons
            .first()
            .map(|c| c.reference.clone())
            .unwrap_or_default(),
        noise_pct: settings.noise * 100.0,
        count,
        rounds,
        sampling_ms,
        variants: results,
        comparisons,
    })
}

/// The verdict of every variant against the reference so far.
fn judge(variants: &[Variant], reference: usize, noise: f64, metric: Metric) -> Vec<Comparison> {
    let per_round = |v: &Variant| -> Vec<f64> {
        v.blocks
            .as_ref()
            .map(|b| {
                b.corrected_per_op()
                    .iter()
                    .map(|block| stats::median(block))
                    .collect()
            })
            .unwrap_or_default()
    };
    let reference_rounds = per_round(&variants[reference]);
    let reference_name = &variants[reference].row.name;
    variants
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != reference)
        .map(|(_, v)| {
            let (ratio, metric_name) =
                match (metric, v.fuel_per_op, variants[reference].fuel_per_op) {
                    (Metric::Instructions, Some(now), Some(base)) if base > 0.0 => {
                        let r = now / base;
                        (
                            Some(Ratio {
                                ratio: r,
                                ci95_low: r,
                                ci95_high: r,
                            }),
                            "instructions",
                        )
                    }
                    _ => {
                        let ratios: Vec<f64> = per_round(v)
                            .iter()
                            .zip(&reference_rounds)
                            .map(|(a, b)| a / b)
                            .collect();
                        (verdict::paired_ratio(&ratios, 0.95), "time")
                    }
                };
            let ratio = ratio.unwrap_or(Ratio {
                ratio: f64::NAN,
                ci95_low: f64::NAN,
                ci95_high: f64::NAN,
            });
            let verdict = verdict::verdict(&ratio, noise);
            Comparison {
                variant: v.row.name.clone(),
                reference: reference_name.clone(),
                metric: metric_name.to_string(),
                ratio: ratio.ratio,
                ci95_low: ratio.ci95_low,
                ci95_high: ratio.ci95_high,
                verdict,
                text: verdict::describe(&v.row.name, reference_name, &ratio, verdict, noise),
            }
        })
        .collect()
}
