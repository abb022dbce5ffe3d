//! The scheduler of `host compare`: every worker runs every variant in
//! interleaved rounds (at one shared count; programs, an iteration each);
//! workers follow each other until every verdict is certain (at least
//! [`MIN_COMPARE_PROCESSES`] workers and [`MIN_ROUNDS`] rounds in all) or
//! the time cap. Any failure stops the comparison: a verdict needs every
//! variant. Interrupted (Ctrl-C, SIGTERM, SIGHUP) once a worker has
//! compared, the report holds the rounds taken so far and says it stopped.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::analysis::compare::{
    Look, ProgramRounds, Rounds, judge, judge_programs, may_stop, rounds_to_certain,
};
use crate::analysis::epochs::corrected_per_op;
use crate::analysis::estimate;
use crate::analysis::summary::Drift;
use crate::benchmark::parent::callgrind;
use crate::benchmark::parent::catalog::Catalog;
use crate::benchmark::parent::driver::{Crew, Done, Outcome};
use crate::benchmark::parent::plan::RunPlan;
use crate::benchmark::parent::profile::{profile_changes, profile_rows};
use crate::benchmark::parent::result::{figures, program_figures};
use crate::benchmark::parent::row::{self, Compiled, Counts};
use crate::benchmark::parent::supervisor::Subprocesses;
use crate::benchmark::progress::{Progress, Step};
use crate::benchmark::protocol::{Found, Job, ProcessMeasurement, ProgramMeasurement, Task};
use crate::guest::load::LoadError;
use crate::guest::{Contract, Unsupported, lacking, sandbox};
use crate::options::{CompareSettings, Metric, NoiseBand};
use crate::results::{BenchResult, CompareReport, Comparison, Row, Tool};
use crate::util::error::one_line;
use crate::util::usage::UsageError;

pub use crate::analysis::compare::{MIN_COMPARE_PROCESSES, MIN_ROUNDS};

/// Rounds one worker takes in a comparison.
pub const ROUNDS_PER_PROCESS: usize = 10;
/// Rounds one worker takes in a comparison of programs (a round: one
/// iteration of each variant): few, so that a clear verdict is looked at
/// early, after the fewest processes ([`Look::settled_early`]).
pub const PROGRAM_ROUNDS_PER_PROCESS: usize = 6;
/// Most worker processes of one comparison: a bound, not the budget (the
/// time cap, `--time`, stops a comparison first, as a rule).
pub const MAX_COMPARE_PROCESSES: usize = 200;

/// The variants of a comparison, in order, and their workloads.
struct Variants {
    rows: Vec<Row>,
    compiled: Vec<Compiled>,
    names: Vec<String>,
    /// Whether the variants are WASI programs (all of them, or none).
    programs: bool,
}

/// Compare the variants in `files`: every benchmark of every file is a
/// variant; any failure stops the comparison (a verdict needs all of them).
/// Sampling stops `--time` after the first worker began, short of the stop
/// rule.
pub fn compare_rounds(
    settings: &CompareSettings,
    files: &[PathBuf],
    progress: &dyn Progress,
) -> Result<CompareReport> {
    let (report, taken) = compare_further(settings, files, None, None, progress)?;
    match taken.judged.failed {
        Some(error) => Err(error),
        None => Ok(report),
    }
}

/// Rounds a comparison's first worker takes whatever its budget: two,
/// the fewest with an interval of their own. The comparison takes a third
/// in another worker only when its verdicts are not yet certain at two
/// (the analysis' `LEAST_ROUNDS`): a long program's round can last half a
/// minute.
pub const FIRST_ROUNDS: usize = 2;

/// The rounds a comparison's worker takes whatever its budget: the first
/// worker [`FIRST_ROUNDS`], a later one one, since it adds to rounds the
/// comparison already has; the first worker of a suite's first look (a
/// suite that `comes_back` to its open verdicts) one too: a long program's
/// one round, whose interval the suite's other rounds give
/// (`crate::analysis::few_rounds`), the second waiting for the suite's
/// time left, which goes first to the verdicts that one round leaves open.
pub fn least_rounds(offset: usize, comes_back: bool) -> usize {
    match (offset, comes_back) {
        (0, false) => FIRST_ROUNDS,
        _ => 1,
    }
}

/// When a comparison's time is up, short of its stop rule: a suite's
/// share for a benchmark.
#[derive(Debug, Clone, Copy)]
pub struct Until {
    /// The time its workers stop at.
    pub at: Instant,
    /// The benchmark's share, when the suite comes back to its open
    /// verdicts (its first pass, whose second takes them further by need).
    /// A comparison its time stopped short of rounds takes another while a
    /// verdict is open ([`Look::short_of_rounds`]); with a share, only when
    /// one of its rounds costs no more than the share, the dearer one
    /// waiting for its turn among the others'. Its first worker is then
    /// told one round at least, not two ([`least_rounds`]).
    pub back: Option<Duration>,
}

impl Until {
    /// Whether a comparison whose time is up takes one more round: while
    /// it is `short` of rounds, and one `round` costs no more than the
    /// share of a suite that comes back to it.
    fn another_round(&self, short: bool, round: Duration) -> bool {
        short && self.back.is_none_or(|share| round <= share)
    }
}

/// What a comparison has taken so far: its workers' measurements, their
/// verdicts, and Callgrind's counts, so that more workers may add to them
/// ([`compare_further`]) when a suite has time left for a verdict still
/// open.
pub struct Taken {
    judged: Judged,
    counted: Vec<Option<Counts>>,
}

impl Taken {
    /// Whether more workers may change what it says: its verdicts are not
    /// settled by the stop rule (it stopped at its time, or took fewer
    /// processes than the rule needs), and it was neither interrupted nor
    /// stopped by a worker that failed.
    pub fn open(&self) -> bool {
        let judged = &self.judged;
        !judged.settled
            && !judged.stopped
            && judged.failed.is_none()
            && judged.processes > 0
            && judged.processes < MAX_COMPARE_PROCESSES
    }

    /// Why a worker failed after others had compared: what they took
    /// stands, and no worker followed it.
    pub fn failed(&self) -> Option<&anyhow::Error> {
        self.judged.failed.as_ref()
    }

    /// The rounds its workers took, in all.
    pub fn rounds(&self) -> usize {
        self.judged.rounds
    }

    /// Whether a verdict is still unsure (not only unsettled).
    pub fn unsure(&self) -> bool {
        let comparisons = &self.judged.comparisons;
        comparisons.iter().any(|c| !c.verdict.is_certain())
    }

    /// Its verdicts so far, when they rest on one worker.
    pub fn of_one_worker(&self) -> Option<&[Comparison]> {
        (self.judged.processes == 1).then_some(self.judged.comparisons.as_slice())
    }

    /// The mean time of one of its workers (start, warm-up and rounds):
    /// what one more costs.
    pub fn per_process(&self) -> Duration {
        let processes = self.judged.processes.max(1) as u32;
        self.judged.sampling / processes
    }

    /// The time of one of its rounds, its workers' start and warm-up
    /// spread over them: what one more worker told to take one round
    /// costs, about (a long program's: one iteration of each variant).
    pub fn per_round(&self) -> Duration {
        self.judged.per_round(Duration::ZERO)
    }

    /// The time its verdicts would take to become certain, were their
    /// rounds to come spread as they have ([`rounds_to_certain`]) and each
    /// to take [`Taken::per_round`]: `None` when one of them is a close
    /// call.
    pub fn time_to_certain(&self, band: NoiseBand) -> Option<Duration> {
        self.judged.time_to_certain(band)
    }
}

#[cfg(test)]
impl Taken {
    /// What `processes` workers took in `rounds` and `sampling`, not
    /// settled, judged `comparison`, with no measurement: for the suite's
    /// tests.
    pub fn made_of(
        (processes, rounds): (usize, usize),
        sampling: Duration,
        comparison: Comparison,
    ) -> Taken {
        Taken {
            judged: Judged {
                processes,
                rounds,
                sampling,
                comparisons: vec![comparison],
                ..Judged::default()
            },
            counted: Vec::new(),
        }
    }

    /// What it took, then a worker that failed with `error`.
    pub fn failing(mut self, error: anyhow::Error) -> Taken {
        self.judged.failed = Some(error);
        self
    }
}

/// [`compare_rounds`] until `until` when given, adding to what earlier
/// workers of the same comparison took when `taken` is given (the same
/// files, under the same settings): the verdicts read every round of every
/// worker, the stop rule counting on from them. Gives the report and what
/// it was made of.
pub fn compare_further(
    settings: &CompareSettings,
    files: &[PathBuf],
    until: Option<Until>,
    taken: Option<Taken>,
    progress: &dyn Progress,
) -> Result<(CompareReport, Taken)> {
    let common = &settings.settings;
    let mut plan = RunPlan::settle(common);
    let catalog = Catalog::load(common, files, progress)?;
    plan.worker.checked = catalog.checked();
    let variants = variants(&catalog, &common.sizes)?;
    if variants.programs && common.metric == Metric::Instructions {
        bail!(UsageError(
            "--metric instructions: programs are not counted by fuel; compare them by time or by `--metric cycles-est`".into()
        ));
    }
    let reference = reference_of(settings, &variants.rows)?;
    let (judged, counted) = match taken {
        Some(Taken { judged, counted }) => (judged, counted),
        // With --metric cycles-est, every variant is counted by Callgrind first.
        None => match common.metric {
            Metric::CyclesEst => {
                let counted = count_variants(&plan, common.timeout, &variants, progress)?;
                (Judged::new(variants.rows.len()), counted)
            }
            _ => (
                Judged::new(variants.rows.len()),
                vec![None; variants.rows.len()],
            ),
        },
    };
    progress.step("variants", Step::Sampling);
    let crew = Crew::new(&Subprocesses, progress, &variants.names, common.timeout);
    let until = until.unwrap_or_else(|| Until {
        at: Instant::now() + settings.time_cap,
        back: None,
    });
    let judged = take_rounds(
        &crew,
        settings,
        &plan,
        &variants,
        (judged, &counted, reference),
        until,
    )?;
    let results = rows(&plan, common, &variants, &judged, &counted);
    let profile = match &settings.profile {
        Some(profiling) if !judged.stopped && judged.failed.is_none() => {
            let mut report = profile_rows(common, &plan, profiling, &variants.rows, progress)?;
            report.changes = profile_changes(&report.profiles, &variants.rows[reference].name);
            Some(report)
        }
        _ => None,
    };
    progress.finish();
    let found = judged
        .found
        .clone()
        .context("no worker process was ready")?;
    let to_certain = (judged.capped)
        .then(|| judged.time_to_certain(common.noise))
        .flatten();
    let report = CompareReport {
        tool: Tool::this(),
        environment: plan.environment(common, found, None),
        reference: judged
            .comparisons
            .first()
            .map(|c| c.reference.clone())
            .unwrap_or_default(),
        noise_pct: common.noise.width_pct(),
        count: judged.count.unwrap_or(1),
        rounds: judged.rounds,
        sampling_ms: judged.sampling.as_secs_f64() * 1e3,
        variants: results,
        comparisons: judged.comparisons.clone(),
        profile,
        stopped: judged.stopped.then(|| sandbox::STOPPED.to_string()),
        capped: judged.capped,
        to_certain_ms: to_certain.map(|t| t.as_secs_f64() * 1e3),
    };
    Ok((report, Taken { judged, counted }))
}

/// The row of every variant, made of what its ratio is made of: the
/// fastest epoch of each round (a program's: its iteration's fastest timed
/// region), with a program's phases and Callgrind's counts when taken.
fn rows(
    plan: &RunPlan,
    common: &crate::options::Settings,
    variants: &Variants,
    judged: &Judged,
    counted: &[Option<Counts>],
) -> Vec<BenchResult> {
    let seed = plan.seed();
    variants
        .rows
        .iter()
        .zip(&judged.per_variant)
        .zip(&variants.compiled)
        .zip(counted)
        .map(|(((row, processes), compiled), counted)| {
            let measurements: Vec<_> = processes.iter().map(|s| s.measurement.clone()).collect();
            let located = estimate::locate_rounds(&measurements, seed);
            let drift = Drift {
                stated_pct: common.drift_pct,
                busy_machine: plan.busy(None),
                ..Drift::default()
            };
            let mut figures = figures(
                processes,
                &located,
                compiled,
                common.warmup_cap,
                seed,
                drift,
            );
            figures.callgrind = counted.map(|c| c.per_op);
            if compiled.program {
                program_figures(&mut figures, processes, *counted, compiled);
            }
            BenchResult::measured(row, compiled.kind, figures)
        })
        .collect()
}

/// The variants of `catalog`: every row that loaded, all of them WASI
/// programs or all `run(count, seed)` workloads (wasm and native code of
/// one name are told apart by the catalog: `x (wasm)`, `x (native)`); the
/// same file twice makes two variants of one name, told apart by `#2`.
fn variants(catalog: &Catalog, sizes: &[u64]) -> Result<Variants> {
    let mut rows: Vec<Row> = Vec::new();
    let mut compiled: Vec<Compiled> = Vec::new();
    for planned in catalog.rows(sizes) {
        let guest = match planned.file {
            Ok(guest) => guest,
            Err(e) => return Err(not_loaded(&planned.row, e)),
        };
        let program = matches!(guest.contract, Contract::Program { .. });
        if let Some(first) = compiled.first()
            && first.program != program
        {
            bail!(UsageError(format!(
                "{} and {}: a program (WASI `_start`) and a `run(count, seed)` workload cannot be compared (their times are of different things)",
                rows[0].path.display(),
                planned.row.path.display()
            )));
        }
        compiled.push(Compiled::of(guest));
        rows.push(planned.row);
    }
    tell_apart(&mut rows);
    if rows.len() < 2 {
        bail!(UsageError(
            "compare needs at least two variants (files, or `run_<name>` benchmarks)".into()
        ));
    }
    let names = rows.iter().map(|r| r.name.clone()).collect();
    Ok(Variants {
        programs: compiled.iter().all(|c| c.program),
        rows,
        compiled,
        names,
    })
}

/// Why a variant's file did not load, on one line with its path (and
/// engine, [`row::not_loaded`]), the engine's words kept; typed
/// [`Unsupported`] when the engine cannot run it (the catalog keeps the
/// error, so its chain is read here, not moved), so that a suite reports
/// it as unsupported.
fn not_loaded(row: &Row, failed: &LoadError) -> anyhow::Error {
    let line = one_line(&failed.error);
    let error = match lacking(&failed.error) {
        true => anyhow::Error::new(Unsupported(line)),
        false => anyhow::anyhow!(line),
    };
    row::not_loaded(row, error)
}

/// Variants of one name (the same file twice) told apart by `#2`, `#3`.
fn tell_apart(rows: &mut [Row]) {
    for i in 1..rows.len() {
        let seen = rows[..i].iter().filter(|r| r.name == rows[i].name).count();
        if seen > 0 {
            rows[i].name = format!("{}#{}", rows[i].name, seen + 1);
        }
    }
}

/// The place of the reference variant: `--reference`, else the first.
fn reference_of(settings: &CompareSettings, rows: &[Row]) -> Result<usize> {
    let Some(name) = &settings.reference else {
        return Ok(0);
    };
    rows.iter().position(|r| r.name == *name).ok_or_else(|| {
        let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        anyhow::Error::new(UsageError(format!(
            "--reference: no variant `{name}` (variants: {})",
            names.join(", ")
        )))
    })
}

/// Callgrind's counts of every variant: `run(count, seed)` workloads in one
/// worker, each program in a worker of its own (as `host run` counts them).
fn count_variants(
    plan: &RunPlan,
    timeout: Duration,
    variants: &Variants,
    progress: &dyn Progress,
) -> Result<Vec<Option<Counts>>> {
    let rows = variants.rows.iter().cloned().enumerate();
    let groups = match variants.programs {
        true => rows.map(|row| vec![row]).collect(),
        false => vec![rows.collect()],
    };
    let pass = callgrind::Pass::new(plan, timeout, progress, &variants.names);
    let mut counted = vec![None; variants.rows.len()];
    for (i, result) in pass.count(&Subprocesses, groups)? {
        let counts = result.map_err(|e| row::failed(&variants.rows[i], e))?;
        counted[i] = Some(counts);
    }
    Ok(counted)
}

/// What the workers of a comparison gave, and the verdicts on it.
#[derive(Default)]
struct Judged {
    /// What the first worker found.
    found: Option<Found>,
    /// The shared count, once the first worker fixed it.
    count: Option<u64>,
    /// What every worker measured of each variant.
    per_variant: Vec<Vec<ProcessMeasurement>>,
    rounds: usize,
    comparisons: Vec<Comparison>,
    /// Workers that compared.
    processes: usize,
    /// Whether the verdicts may stop here.
    done: bool,
    /// Whether the stop rule (not the time) said so.
    settled: bool,
    /// Interrupted (Ctrl-C, SIGTERM, SIGHUP) after a worker compared.
    stopped: bool,
    /// Stopped at the time cap with a verdict still unsure.
    capped: bool,
    /// A worker that failed after others had compared: the comparison
    /// stopped there.
    failed: Option<anyhow::Error>,
    /// The time its workers took, over every call of [`take_rounds`].
    sampling: Duration,
}

impl Judged {
    /// The time of one of its rounds ([`Taken::per_round`]), with
    /// `running` of its workers' time not yet added to `sampling`.
    fn per_round(&self, running: Duration) -> Duration {
        (self.sampling + running) / self.rounds.max(1) as u32
    }

    /// [`Taken::time_to_certain`] of what was taken.
    fn time_to_certain(&self, band: NoiseBand) -> Option<Duration> {
        let most = self.rounds.max(MIN_ROUNDS) * 10;
        let needed = (self.comparisons.iter())
            .map(|c| rounds_to_certain(c, self.rounds, band, most))
            .collect::<Option<Vec<usize>>>()?;
        let more = needed.into_iter().max()?.saturating_sub(self.rounds);
        self.per_round(Duration::ZERO)
            .checked_mul(u32::try_from(more).ok()?)
    }

    /// Nothing taken yet of `variants` variants.
    fn new(variants: usize) -> Self {
        Judged {
            per_variant: vec![Vec::new(); variants],
            ..Judged::default()
        }
    }
}

/// Take worker after worker of rounds until [`may_stop`] says the verdicts
/// are certain, `until` (each worker told the time left, so that it stops
/// its rounds on time; past it, while [`Until::another_round`]), or
/// [`MAX_COMPARE_PROCESSES`]; after the workers of `judged`, when it holds
/// some. A worker that fails after others compared stops it there, what
/// they took standing (`failed`); one that fails before any compared is
/// the comparison's error.
fn take_rounds(
    crew: &Crew<'_>,
    settings: &CompareSettings,
    plan: &RunPlan,
    variants: &Variants,
    (mut judged, counted, reference): (Judged, &[Option<Counts>], usize),
    until: Until,
) -> Result<Judged> {
    let common = &settings.settings;
    let started = Instant::now();
    judged.done = false;
    let next = |judged: &Judged| {
        (!judged.done && judged.processes < MAX_COMPARE_PROCESSES).then(|| Job {
            plan: plan.worker.clone(),
            task: Task::Compare {
                variants: variants.rows.clone(),
                count: judged.count,
                rounds: match variants.programs {
                    true => PROGRAM_ROUNDS_PER_PROCESS,
                    false => ROUNDS_PER_PROCESS,
                },
                offset: judged.processes,
                fuel: common.metric == Metric::Instructions && judged.processes == 0,
                budget: Some(until.at.saturating_duration_since(Instant::now())),
                least: least_rounds(judged.processes, until.back.is_some()),
            },
        })
    };
    crew.work(&mut judged, next, |judged, outcome| {
        let (count, rounds, measured) = match outcome {
            Outcome::Ready(found) => {
                judged.found.get_or_insert(*found);
                return Ok(());
            }
            Outcome::Failed { row, error } => {
                let error = row::failed(&variants.rows[row], error);
                if judged.processes == 0 {
                    return Err(error);
                }
                judged.failed = Some(error);
                judged.done = true;
                return Ok(());
            }
            Outcome::Done {
                done:
                    Done::Compared {
                        count,
                        rounds,
                        variants,
                    },
                ..
            } => (count, rounds, variants),
            Outcome::Done { done, .. } => return Err(done.unexpected()),
        };
        judged.count = Some(count);
        judged.rounds += rounds;
        for (i, variant) in measured.into_iter().enumerate() {
            judged.per_variant[i].push(variant);
        }
        judged.processes += 1;
        judged.comparisons = verdicts(judged, variants, counted, reference, common);
        let (settled, short) = {
            let execute = execute_rounds(judged, variants, counted, common.metric);
            let look = Look {
                variants: &execute,
                reference,
                band: common.noise,
                metric: common.metric,
            };
            let (processes, rounds) = (judged.processes, judged.rounds);
            let settled = look.settled_early(processes, rounds)
                || may_stop(processes, rounds, &judged.comparisons, common.noise);
            (settled, look.short_of_rounds(rounds))
        };
        // Its time spent, a comparison still takes a third round (another
        // worker's) while its two leave a verdict open, unless the suite
        // comes back to it and the round costs more than its share.
        let round = judged.per_round(started.elapsed());
        let time_up = Instant::now() >= until.at && !until.another_round(short, round);
        let open = judged.comparisons.iter().any(|c| !c.verdict.is_certain());
        judged.capped = !settled && time_up && open;
        judged.settled = settled;
        judged.done = settled || time_up;
        Ok(())
    })?;
    if crew.interrupted() {
        if judged.processes == 0 {
            bail!(sandbox::STOPPED);
        }
        judged.stopped = true;
    }
    judged.sampling += started.elapsed();
    Ok(judged)
}

/// The verdict on every variant against the reference, from what the
/// workers gave so far; programs, with the ratio of every phase.
fn verdicts(
    judged: &Judged,
    variants: &Variants,
    counted: &[Option<Counts>],
    reference: usize,
    common: &crate::options::Settings,
) -> Vec<Comparison> {
    let metric = common.metric;
    let execute = execute_rounds(judged, variants, counted, metric);
    match variants.programs {
        true => {
            let rounds = program_rounds(judged, variants, execute);
            judge_programs(&rounds, reference, common.noise, metric)
        }
        false => judge(&execute, reference, common.noise, metric),
    }
}

/// The rounds of every variant the comparison's verdict reads (a
/// program's: its execute phase), with the exact cost per op of `metric`
/// when counted.
fn execute_rounds<'a>(
    judged: &'a Judged,
    variants: &'a Variants,
    counted: &[Option<Counts>],
    metric: Metric,
) -> Vec<Rounds<'a>> {
    variants
        .rows
        .iter()
        .zip(&judged.per_variant)
        .enumerate()
        .map(|(i, (row, processes))| Rounds {
            name: &row.name,
            per_op: processes
                .iter()
                .map(|s| corrected_per_op(&s.measurement))
                .collect(),
            exact_per_op: match metric {
                Metric::Time | Metric::Counters => None,
                Metric::Instructions => processes.iter().find_map(|s| s.fuel_per_op),
                Metric::CyclesEst => counted[i].map(|c| c.per_op.cycles_est),
            },
        })
        .collect()
}

/// The rounds of program variants, per phase: `execute` as given; one round
/// of instantiate (and compile) per iteration, its time the round's.
fn program_rounds<'a>(
    judged: &'a Judged,
    variants: &'a Variants,
    execute: Vec<Rounds<'a>>,
) -> ProgramRounds<'a> {
    let phase = |times: fn(&ProgramMeasurement) -> &Vec<f64>| -> Vec<Rounds<'a>> {
        variants
            .rows
            .iter()
            .zip(&judged.per_variant)
            .map(|(row, processes)| Rounds {
                name: &row.name,
                per_op: processes
                    .iter()
                    .filter_map(|s| s.program.as_ref())
                    .map(|p| times(p).iter().map(|&ns| vec![ns]).collect())
                    .collect(),
                exact_per_op: None,
            })
            .collect()
    };
    // Compile is a phase only when every variant timed it in every round.
    let timed = judged.per_variant.iter().flatten().all(|s| {
        s.program.as_ref().is_some_and(|p| {
            !p.compile_ns.is_empty() && p.compile_ns.len() == p.instantiate_ns.len()
        })
    });
    ProgramRounds {
        execute,
        instantiate: phase(|p| &p.instantiate_ns),
        compile: timed.then(|| phase(|p| &p.compile_ns)),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::benchmark::parent::executor::Next;
    use crate::benchmark::parent::fake::{self, Fake};
    use crate::benchmark::progress::Silent;
    use crate::benchmark::protocol::Event;

    /// The settings of `host compare a.wasm b.wasm`, unpinned, without a
    /// cache, seed 1.
    fn settings() -> Result<CompareSettings> {
        let args = ["a.wasm", "b.wasm", "--no-pin", "--no-cache", "--seed", "1"];
        CompareSettings::parse(&args)
    }

    /// Two loaded `run(count, seed)` modules, `a` and `b`.
    fn variants() -> Variants {
        let rows: Vec<Row> = ["a", "b"]
            .iter()
            .map(|n| Row::new(Path::new(&format!("{n}.wasm")), n, "run", None, 0, None))
            .collect();
        let compiled = rows.iter().map(|_| Compiled::module_for_tests()).collect();
        Variants {
            names: rows.iter().map(|r| r.name.clone()).collect(),
            rows,
            compiled,
            programs: false,
        }
    }

    /// A worker that compares `a` (100 ns) with `b` (200 ns) in
    /// [`ROUNDS_PER_PROCESS`] rounds.
    fn comparing() -> Vec<Next> {
        let rounds = ROUNDS_PER_PROCESS;
        compared(rounds, fake::process(200.0, rounds))
    }

    /// A worker that compares `a` (100 ns) with `b` in `rounds` rounds.
    fn compared(rounds: usize, b: ProcessMeasurement) -> Vec<Next> {
        vec![
            fake::ready(),
            fake::event(Event::Compared {
                count: 1,
                rounds,
                variants: vec![fake::process(100.0, rounds), b],
            }),
        ]
    }

    /// A file an engine cannot run stays unsupported on its way out of
    /// the comparison (a suite reads it so), and other failures do not.
    #[test]
    fn a_file_an_engine_cannot_run_fails_as_unsupported() {
        let path = Path::new("c.wasm");
        let alone = Row::new(path, "c", "run", None, 0, None);
        let failed = |error| LoadError { kind: None, error };
        let component = || {
            let words = "wasmer runs core modules only, not a component";
            anyhow::Error::new(Unsupported(words.into())).context("loading")
        };
        let unsupported = not_loaded(&alone, &failed(component()));
        assert!(unsupported.is::<Unsupported>(), "{unsupported:#}");
        let line = one_line(&unsupported);
        assert!(line.starts_with("c.wasm: loading: wasmer runs"), "{line}");
        assert_eq!(row::failed_engine(&unsupported), None);
        let trap = not_loaded(&alone, &failed(anyhow::anyhow!("wasm trap")));
        assert!(!lacking(&trap), "{trap:#}");
        // Under one of several engines, the error names the engine, typed
        // so that a suite can leave that side out.
        let beside = Row::new(path, "c", "run", None, 1, Some("wasmer"));
        let unsupported = not_loaded(&beside, &failed(component()));
        assert!(unsupported.is::<Unsupported>(), "{unsupported:#}");
        let line = one_line(&unsupported);
        assert!(
            line.starts_with("c.wasm (under wasmer): loading:"),
            "{line}"
        );
        assert_eq!(row::failed_engine(&unsupported), Some("wasmer"));
    }

    /// A worker of `rounds` rounds: `a` at 100 ns, `b` at `b_ns` in each.
    fn rounds_of(b_ns: &[f64]) -> Vec<Next> {
        let rounds = b_ns.len();
        let mut b = fake::process(100.0, rounds);
        b.measurement.blocks = b_ns.iter().map(|&ns| vec![ns; 20]).collect();
        compared(rounds, b)
    }

    /// Out of time after a first worker's two rounds, a comparison stops
    /// when they make its verdict certain, and otherwise takes a third
    /// round in one more worker (told no time: one round), then stops;
    /// unless the suite comes back to it, whose first look takes one
    /// round (the least its worker is told) and stops there, open.
    #[test]
    fn out_of_time_a_comparison_takes_a_third_round_only_for_an_open_verdict() -> Result<()> {
        let settings = settings()?;
        let plan = RunPlan::settle(&settings.settings);
        let variants = variants();
        let taken = |first: &'static [f64], back| -> Result<(Judged, usize)> {
            // A worker out of time takes the least it is told.
            let fake = Fake::new(move |started, job| match (started, &job.task) {
                (0, Task::Compare { least, .. }) => rounds_of(&first[..first.len().min(*least)]),
                _ => rounds_of(&[110.0]),
            });
            let crew = Crew::new(&fake, &Silent, &variants.names, settings.settings.timeout);
            let given = (Judged::new(2), &[None, None][..], 0);
            let until = Until {
                at: Instant::now(),
                back,
            };
            let judged = take_rounds(&crew, &settings, &plan, &variants, given, until)?;
            Ok((judged, fake.started()))
        };
        let (clear, workers) = taken(&[200.0, 202.0], None)?;
        assert_eq!((workers, clear.rounds), (1, 2));
        assert!(clear.comparisons[0].verdict.is_certain());
        let (open, workers) = taken(&[120.0, 95.0], None)?;
        assert_eq!((workers, open.rounds), (2, 3));
        assert!(open.capped, "three rounds still leave it unsure");
        let (back, workers) = taken(&[120.0, 95.0], Some(Duration::ZERO))?;
        assert_eq!((workers, back.rounds), (1, 1));
        assert!(
            back.capped && !back.settled,
            "a round dearer than its share: open, for the suite's second pass"
        );
        let one = back.comparisons[0].ratio;
        assert!((one.value - 1.2).abs() < 1e-3, "{one:?}");
        assert!(
            one.low.is_nan() && one.high.is_nan(),
            "one round: no interval"
        );
        Ok(())
    }

    /// Out of time and short of rounds, a comparison takes one more round;
    /// in a suite's first pass, only one that costs no more than its share.
    #[test]
    fn a_first_pass_takes_a_third_round_only_as_dear_as_its_share() {
        let (second, share) = (Duration::from_secs(1), Duration::from_millis(450));
        let alone = Until {
            at: Instant::now(),
            back: None,
        };
        let first_pass = Until {
            back: Some(share),
            ..alone
        };
        assert!(alone.another_round(true, 20 * second));
        assert!(!alone.another_round(false, Duration::ZERO));
        assert!(first_pass.another_round(true, share));
        assert!(!first_pass.another_round(true, share + Duration::from_millis(1)));
        assert!(!first_pass.another_round(false, Duration::ZERO));
    }

    /// A comparison out of time is open; taken further, its workers add to
    /// the first one's (their rounds, the offsets of their orders), until
    /// the stop rule settles it.
    #[test]
    fn a_comparison_taken_further_counts_on_from_its_workers() -> Result<()> {
        let settings = settings()?;
        let plan = RunPlan::settle(&settings.settings);
        let variants = variants();
        let fake = Fake::new(|_, _| comparing());
        let crew = Crew::new(&fake, &Silent, &variants.names, settings.settings.timeout);
        let counted = vec![None; 2];
        let take = |judged, at| {
            let given = (judged, counted.as_slice(), 0);
            let until = Until { at, back: None };
            take_rounds(&crew, &settings, &plan, &variants, given, until)
        };
        let first = take(Judged::new(2), Instant::now())?;
        assert_eq!(first.processes, 1);
        let taken = Taken {
            judged: first,
            counted: counted.clone(),
        };
        assert!(
            taken.open(),
            "one process: the stop rule has not settled it"
        );
        let second = take(taken.judged, Instant::now())?;
        assert_eq!(second.processes, 2);
        assert_eq!(second.rounds, 2 * ROUNDS_PER_PROCESS);
        assert!(!second.settled);
        let third = take(second, Instant::now() + Duration::from_secs(600))?;
        assert_eq!(third.processes, MIN_COMPARE_PROCESSES);
        assert!(third.settled, "three processes of a clear ratio settle it");
        assert!(third.per_variant.iter().all(|v| v.len() == 3));
        assert!(third.comparisons[0].verdict.is_certain());
        let taken = Taken {
            judged: third,
            counted,
        };
        assert!(!taken.open());
        let offsets: Vec<usize> = fake
            .jobs
            .borrow()
            .iter()
            .filter_map(|job| match job.task {
                Task::Compare { offset, .. } => Some(offset),
                _ => None,
            })
            .collect();
        assert_eq!(offsets, [0, 1, 2]);
        Ok(())
    }
}
