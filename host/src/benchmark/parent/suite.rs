//! The scheduler of a suite's comparison: which benchmarks `host compare`'s
//! paths hold and what each is compared across ([`suite_of`]: the
//! engines, or the paths, side by side), then one comparison per benchmark
//! ([`compare_further`]) after another ([`compare_suite`]); under
//! `--suite-time`, a first pass that gives every benchmark its first
//! worker, then a second that takes the verdicts still open further with
//! the time left ([`Further`]), the verdicts likeliest to become certain
//! soonest first. A benchmark that
//! fails (it does not load, its output check fails, its worker crashes) is
//! an error in the result and the suite goes on; across three engines or
//! more, a side after the first that fails or cannot run it is left out
//! of it instead and the others compared ([`leaving_out`]); a worker that
//! fails after others of its comparison compared leaves it the figures
//! of the workers before ([`later_failure`], [`kept_with_failure`]).
//! Ctrl-C stops
//! the suite with the benchmarks done. The summary is
//! [`crate::analysis::suite`]'s.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::analysis::few_rounds::{RoundSpread, certain_as_reported, moderate_few_rounds};
use crate::analysis::one_process::{Spread, widen_one_process};
use crate::analysis::suite::suite_verdicts;
use crate::benchmark::parent::ahead::compile_ahead;
use crate::benchmark::parent::compare::{Taken, Until, compare_further};
use crate::benchmark::parent::sides::{Sides, keeping, leaving_out};
use crate::benchmark::progress::{Call, Progress, Step};
use crate::guest::load::SUITE_EXTENSION;
use crate::guest::name::workload_names;
use crate::guest::{discover, lacking, sandbox};
use crate::options::{CompareSettings, NoiseBand};
use crate::results::{CompareReport, Foreign, SuiteBenchmark, SuiteComparison, Tool, Unpaired};
use crate::util::error::one_line;

/// What a suite's comparison takes: the sides every benchmark is compared
/// across, the benchmarks, and the names not every path holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suite {
    /// One label per variant of a benchmark, in the order the comparison
    /// makes its variants: per path, per engine.
    pub sides: Vec<String>,
    pub benchmarks: Vec<Benchmark>,
    pub unpaired: Vec<Unpaired>,
}

impl Suite {
    /// Its sides, as a report names them.
    fn named_sides(&self) -> Vec<Foreign> {
        self.sides.iter().cloned().map(Foreign::from).collect()
    }
}

/// One benchmark of the suite: its file under each path (one file when
/// the sides are engines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Benchmark {
    pub name: String,
    pub files: Vec<PathBuf>,
}

/// How `host compare` reads `paths` under `engines` (their short names):
/// a suite when two or more paths are all folders or `.suite` files (their
/// files paired by benchmark name, the first path the reference), or when
/// two or more engines meet two or more files (each file compared across
/// the engines); otherwise `None`: the files are the variants of one
/// comparison.
pub fn suite_of(paths: &[PathBuf], engines: &[impl AsRef<str>]) -> Result<Option<Suite>> {
    let engines = distinct(engines.iter().map(|e| e.as_ref().to_string()).collect());
    if paths.len() >= 2 && paths.iter().all(|p| is_collection(p)) {
        return pair_paths(paths, &engines).map(Some);
    }
    if engines.len() < 2 {
        return Ok(None);
    }
    let mut seen = HashSet::new();
    let files: Vec<PathBuf> = discover(paths)?
        .into_iter()
        .filter(|f| seen.insert(f.clone()))
        .collect();
    if files.len() < 2 {
        return Ok(None);
    }
    let benchmarks = benchmark_names(&files)
        .into_iter()
        .zip(files)
        .map(|(name, file)| Benchmark {
            name,
            files: vec![file],
        })
        .collect();
    Ok(Some(Suite {
        sides: engines,
        benchmarks,
        unpaired: Vec::new(),
    }))
}

/// A folder or a `.suite` file: a path that stands for several files.
fn is_collection(path: &Path) -> bool {
    path.is_dir() || path.extension().and_then(|e| e.to_str()) == Some(SUITE_EXTENSION)
}

/// The files of every path paired by benchmark name, in the first path's
/// order (then the names the first path lacks, which are unpaired).
fn pair_paths(paths: &[PathBuf], engines: &[String]) -> Result<Suite> {
    let labels = distinct(paths.iter().map(|p| label(p)).collect());
    let mut named: Vec<Vec<(String, PathBuf)>> = Vec::new();
    for path in paths {
        let files = discover(std::slice::from_ref(path))?;
        named.push(benchmark_names(&files).into_iter().zip(files).collect());
    }
    let mut names: Vec<&String> = Vec::new();
    for (name, _) in named.iter().flatten() {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let mut suite = Suite {
        sides: sides(&labels, engines),
        benchmarks: Vec::new(),
        unpaired: Vec::new(),
    };
    for name in names {
        let found: Vec<Option<&PathBuf>> = named
            .iter()
            .map(|side| side.iter().find(|(n, _)| n == name).map(|(_, f)| f))
            .collect();
        match found.iter().copied().collect::<Option<Vec<&PathBuf>>>() {
            Some(files) => suite.benchmarks.push(Benchmark {
                name: name.clone(),
                files: files.into_iter().cloned().collect(),
            }),
            None => suite.unpaired.push(Unpaired {
                name: name.clone().into(),
                found_in: labels
                    .iter()
                    .zip(&found)
                    .filter(|(_, f)| f.is_some())
                    .map(|(l, _)| Foreign::new(l.clone()))
                    .collect(),
            }),
        }
    }
    Ok(suite)
}

/// The sides of paired paths: the paths' labels, each per engine
/// (`old[winch]`) when there are several.
fn sides(labels: &[String], engines: &[String]) -> Vec<String> {
    match engines.len() {
        0 | 1 => labels.to_vec(),
        _ => labels
            .iter()
            .flat_map(|l| engines.iter().map(move |e| format!("{l}[{e}]")))
            .collect(),
    }
}

/// A path as the user gave it, without a trailing `/`.
fn label(path: &Path) -> String {
    let text = path.display().to_string();
    match text.trim_end_matches('/') {
        "" => text,
        trimmed => trimmed.to_string(),
    }
}

/// `names` with a repeated one told apart by `#2`, `#3`, as compare names
/// its variants.
fn distinct(names: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let seen = names[..i].iter().filter(|n| *n == name).count();
        out.push(match seen {
            0 => name.clone(),
            n => format!("{name}#{}", n + 1),
        });
    }
    out
}

/// The benchmark name of each of `files`, as a run names its rows
/// ([`workload_names`]: Sightglass's `bz2/benchmark.wasm` is `bz2`).
fn benchmark_names(files: &[PathBuf]) -> Vec<String> {
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    workload_names(&paths)
}

/// Compare every benchmark of `suite` across its sides, one after another,
/// each until its verdicts settle or its time is up: `--time`, or under
/// `--suite-time` its first worker's ([`first_share`]); then, while the
/// suite's time lasts, those waiting to be compared without a side that
/// failed ([`FirstPass::without_failed_sides`]); then the benchmarks
/// whose verdicts are still open are taken further ([`Further`]) with
/// the time left.
pub fn compare_suite(
    settings: &CompareSettings,
    suite: &Suite,
    progress: &dyn Progress,
) -> SuiteComparison {
    progress.rows(suite.benchmarks.len());
    let began = Instant::now();
    let files = suite.benchmarks.iter().flat_map(|b| b.files.clone());
    let ahead = compile_ahead(&settings.settings, files.collect());
    let end = settings.suite_time.map(|t| began + t);
    let mut first = first_pass(settings, suite, progress);
    let mut interrupted = first.interrupted;
    if let (false, Some(end)) = (interrupted, end) {
        interrupted = first.without_failed_sides(settings, suite, end, progress);
    }
    let (mut benchmarks, open) = (first.benchmarks, first.open);
    if let (false, Some(end)) = (interrupted, end) {
        let compare =
            |benchmark: &Benchmark, kept: &[usize], at, taken, progress: &dyn Progress| {
                let until = Until { at, back: None };
                let settings = keeping(settings, kept);
                let files = &benchmark.files;
                compare_further(&settings, files, Some(until), Some(taken), progress)
            };
        let further = Further {
            suite,
            cap: settings.time_cap,
            band: settings.settings.noise,
            progress,
            end,
            compare: &compare,
        };
        interrupted = further.take(open, &mut benchmarks);
    }
    ahead.store(true, Ordering::Relaxed);
    progress.finish();
    let stopped = interrupted.then(|| Foreign::new("interrupted (Ctrl-C)"));
    report(settings, suite, benchmarks, stopped, began.elapsed())
}

/// The first pass: every benchmark, one after another, each until its
/// verdicts settle or `--time` is up; under `--suite-time`, each its
/// [`first_share`], the second pass coming back to its open verdicts.
/// Gives every benchmark's entry, the ones whose verdicts are still open
/// (under `--suite-time` only: the second pass's), those waiting to be
/// compared without a side that failed ([`Sides::waiting`]), and whether
/// it was interrupted.
fn first_pass(settings: &CompareSettings, suite: &Suite, progress: &dyn Progress) -> FirstPass {
    let mut pass = FirstPass::default();
    for index in 0..suite.benchmarks.len() {
        let sides = Sides::all(suite.sides.len());
        let Some(sides) = pass.look(settings, suite, index, sides, progress) else {
            pass.interrupted = true;
            return pass;
        };
        if sides.waiting.is_some() {
            pass.waiting.push((index, sides));
        }
        progress.row_done();
        if sandbox::interrupted() {
            pass.interrupted = true;
            return pass;
        }
    }
    pass
}

/// What the first pass gave: every benchmark's entry, the benchmarks to
/// take further, those waiting to be compared without a side that
/// failed, and whether it was interrupted.
#[derive(Default)]
struct FirstPass {
    benchmarks: Vec<SuiteBenchmark>,
    open: Vec<Open>,
    waiting: Vec<(usize, Sides)>,
    interrupted: bool,
}

impl FirstPass {
    /// Compare the benchmark at `index` across `sides` ([`leaving_out`]),
    /// its time the first pass's share, its entry set (pushed when it is
    /// the next); the sides it kept, or `None` when interrupted half-way.
    fn look(
        &mut self,
        settings: &CompareSettings,
        suite: &Suite,
        index: usize,
        mut sides: Sides,
        progress: &dyn Progress,
    ) -> Option<Sides> {
        let again = settings.suite_time.is_some();
        let share = first_share(settings, suite.benchmarks.len());
        let benchmark = &suite.benchmarks[index];
        let within = Within {
            progress,
            name: &benchmark.name,
        };
        let start = Instant::now();
        let compared = leaving_out(
            settings,
            (&suite.sides, benchmark.files.len() == 1),
            &mut sides,
            again,
            |settings| {
                let until = Some(Until {
                    at: Instant::now() + share,
                    back: again.then_some(share),
                });
                compare_further(settings, &benchmark.files, until, None, &within)
            },
        );
        // A benchmark interrupted half-way is left out: its verdicts are
        // of the rounds taken so far.
        let cut = compared.as_ref().map_or(true, |(r, _)| r.stopped.is_some());
        if cut && sandbox::interrupted() {
            return None;
        }
        let (compared, taken) = split(compared);
        let before = self.benchmarks.get(index).map_or(0.0, |b| b.elapsed_ms);
        let spent = Duration::from_secs_f64(before / 1e3) + start.elapsed();
        let mut entry = judged(benchmark, compared, sides.kept.len(), spent);
        entry.left_out = sides.left_out.clone();
        entry.failed_later = later_failure(taken.as_ref());
        // Only a second pass reads what a benchmark took.
        if again {
            self.open
                .extend(Open::further(index, taken, &entry, spent, 0));
        }
        match self.benchmarks.get_mut(index) {
            Some(earlier) => *earlier = entry,
            None => self.benchmarks.push(entry),
        }
        Some(sides)
    }

    /// Compare the benchmarks waiting without a side that failed, in
    /// the suite's order, while the suite's time (`end`) lasts (one whose
    /// next side fails then waits again, after the others); the entry of
    /// each the time left no turn says so. Whether interrupted.
    fn without_failed_sides(
        &mut self,
        settings: &CompareSettings,
        suite: &Suite,
        end: Instant,
        progress: &dyn Progress,
    ) -> bool {
        let mut waiting = std::collections::VecDeque::from(std::mem::take(&mut self.waiting));
        while let Some((index, sides)) = waiting.pop_front() {
            if Instant::now() >= end {
                let entry = &mut self.benchmarks[index];
                let side = sides.waiting.map(|(_, l)| l.side).unwrap_or_default();
                let error = entry.error.take().unwrap_or_default();
                entry.error = Some(Foreign::compose([&error, &side], |[error, side]| {
                    format!(
                        "{error} (the suite's time was up before its other sides could be compared without {side}: more --suite-time would)"
                    )
                }));
                continue;
            }
            match self.look(settings, suite, index, sides, progress) {
                None => return true,
                Some(sides) if sides.waiting.is_some() => waiting.push_back((index, sides)),
                Some(_) => {}
            }
            if sandbox::interrupted() {
                return true;
            }
        }
        false
    }
}

/// The suite's report of `benchmarks` (those on too few rounds with their
/// rounds' spread moderated by the suite's, [`moderate_few_rounds`];
/// those compared in one process widened by how far the others'
/// processes part), with the runtime view when its sides are engines.
fn report(
    settings: &CompareSettings,
    suite: &Suite,
    mut benchmarks: Vec<SuiteBenchmark>,
    stopped: Option<Foreign>,
    elapsed: Duration,
) -> SuiteComparison {
    let (sides, band) = (suite.named_sides(), settings.settings.noise);
    let round_spreads = moderate_few_rounds(&mut benchmarks, &sides, band);
    let spreads = widen_one_process(&mut benchmarks, &sides, band);
    let mut report = SuiteComparison {
        tool: Tool::this(),
        environment: benchmarks
            .iter()
            .find_map(|b| b.report.as_ref())
            .map(|r| r.environment.clone()),
        sides,
        reference: suite.sides.first().cloned().unwrap_or_default().into(),
        noise_pct: settings.settings.noise.width_pct(),
        summary: suite_verdicts(&benchmarks, &suite.sides, suite.unpaired.len()),
        benchmarks,
        unpaired: suite.unpaired.clone(),
        stopped,
        runtimes: None,
        elapsed_ms: elapsed.as_secs_f64() * 1e3,
        suite_time_ms: settings.suite_time.map(|t| t.as_secs_f64() * 1e3),
    };
    report.summary.spreads = spreads;
    report.summary.round_spreads = round_spreads;
    let engines = settings.settings.engines.len();
    if engines > 1 && suite.sides.len() == engines {
        report.runtimes = crate::analysis::runtimes::suite_view(&report);
    }
    report
}

/// The share of `--suite-time` the first pass splits evenly among the
/// benchmarks, each its first worker's time: enough for a short
/// benchmark's worker to warm up and take a few rounds (0.45 s each for
/// Sightglass's 128 in 4m50s). A long program's first worker takes one
/// round whatever its share, its interval the suite's other rounds'
/// ([`crate::analysis::few_rounds`]); the second pass has the time left.
pub const FIRST_PASS: f64 = 0.2;

/// Each benchmark's time in the first pass: `--time`, or under
/// `--suite-time` an even share of its [`FIRST_PASS`] (at most `--time`),
/// the same for every benchmark whatever those before it took, so that no
/// benchmark's first look depends on its place in the suite. It counts
/// from the benchmark's start: loading and compiling its files, and its
/// worker's start, included.
fn first_share(settings: &CompareSettings, benchmarks: usize) -> Duration {
    let Some(suite_time) = settings.suite_time else {
        return settings.time_cap;
    };
    let benchmarks = u32::try_from(benchmarks.max(1)).unwrap_or(u32::MAX);
    (suite_time.mul_f64(FIRST_PASS) / benchmarks).min(settings.time_cap)
}

/// A benchmark whose verdicts the first pass left open: its place in the
/// suite, what its workers took, and the time it has had.
struct Open {
    index: usize,
    taken: Taken,
    spent: Duration,
}

impl Open {
    /// The benchmark at `index`, to be taken further, when what its
    /// workers took leaves a verdict open, it was judged (`entry`), and
    /// it took rounds past the `rounds` it had before this go (a go that
    /// took none would take none again); `spent`, its time so far.
    fn further(
        index: usize,
        taken: Option<Taken>,
        entry: &SuiteBenchmark,
        spent: Duration,
        rounds: usize,
    ) -> Option<Open> {
        let judged = entry.not_judged.is_none();
        let taken = taken.filter(|t| judged && t.open() && t.rounds() > rounds)?;
        Some(Open {
            index,
            taken,
            spent,
        })
    }
}

/// The report and what it was made of, or the error.
fn split(compared: Result<(CompareReport, Taken)>) -> (Result<CompareReport>, Option<Taken>) {
    match compared {
        Ok((report, taken)) => (Ok(report), Some(taken)),
        Err(e) => (Err(e), None),
    }
}

/// Compare a benchmark further: its files, the places of the sides its
/// comparison kept, the time its new workers stop at, what its workers
/// took so far, the progress to tell.
type CompareFurther<'a> = dyn Fn(&Benchmark, &[usize], Instant, Taken, &dyn Progress) -> Result<(CompareReport, Taken)>
    + 'a;

/// The second pass of a suite under `--suite-time`: the time left to its
/// end goes to the benchmarks still open, first to the unsure verdicts
/// that more rounds are likeliest to make certain soonest, so that the
/// time goes where it settles the most verdicts, and a long program with a
/// large effect left unsure at one or two rounds is not left for a close
/// call that no time at hand would settle.
struct Further<'a> {
    suite: &'a Suite,
    /// `--time` (without it, the suite's time): a benchmark's time over
    /// both passes.
    cap: Duration,
    /// The noise band the verdicts are judged against.
    band: NoiseBand,
    progress: &'a dyn Progress,
    end: Instant,
    compare: &'a CompareFurther<'a>,
}

impl Further<'_> {
    /// Take the benchmarks of `open` further, go after go
    /// ([`Further::go`]), while the time left holds a round of one still
    /// open that its last go moved on (took rounds). A benchmark's entry
    /// in `benchmarks` is replaced by what all its workers took (those
    /// before one that failed). Whether
    /// it was interrupted (the benchmark cut then keeps its entry before).
    fn take(&self, mut open: Vec<Open>, benchmarks: &mut [SuiteBenchmark]) -> bool {
        while !open.is_empty() {
            match self.go(open, benchmarks) {
                Some(again) => open = again,
                None => return true,
            }
        }
        false
    }

    /// One go over `open`, the next always the first in the order of
    /// [`Further::turn`] (read again after each, as the time left and the
    /// spread of the suite's processes move), while the time left holds
    /// one more of a benchmark's rounds (the mean of its rounds so far,
    /// its workers' start spread over them), each benchmark at most
    /// `--time` in all. Each gets an even share of the time left among the
    /// benchmarks left whose round could still fit in it, and at least one
    /// round's time while one fits. Gives the benchmarks still open that
    /// took rounds, for the next go; `None` when interrupted.
    fn go(&self, mut open: Vec<Open>, benchmarks: &mut [SuiteBenchmark]) -> Option<Vec<Open>> {
        let mut shares = Shares::new(self.end, open.len());
        let (mut again, sides) = (Vec::new(), self.suite.named_sides());
        while !open.is_empty() {
            let left = self.end.saturating_duration_since(Instant::now());
            let spread = Spread::of(benchmarks, &sides);
            let rounds = RoundSpread::of(benchmarks, &sides);
            let turn = |k: &usize| {
                let (entry, taken) = (&benchmarks[open[*k].index], &open[*k].taken);
                let spreads = (&rounds, &spread);
                let reported = (taken.of_one_worker())
                    .and_then(|c| certain_as_reported(c, entry, spreads, &sides, self.band));
                self.turn(taken, left, reported)
            };
            let next = open.remove((0..open.len()).min_by_key(turn).unwrap_or(0));
            let cost = next.taken.per_round();
            let fits = |o: &&Open| o.taken.per_round() <= left;
            shares.left = usize::from(cost <= left) + open.iter().filter(fits).count();
            let cap = self.cap.saturating_sub(next.spent);
            // A benchmark whose round fits gets at least that round's
            // time, so that the time goes to the open verdicts first.
            let share = shares.share(cap).max(cost.min(left)).min(cap);
            if share < cost {
                continue;
            }
            match self.further(next, share, benchmarks) {
                Err(Interrupted) => return None,
                Ok(still) => again.extend(still),
            }
        }
        Some(again)
    }

    /// When `taken` goes, `left` being the pass's time and `reported`
    /// whether the suite's report would read its verdicts of one worker
    /// certain ([`certain_as_reported`]: on too few rounds moderated by
    /// the suite's rounds, widened by how far its processes part;
    /// `None` for more workers, or without a spread of processes):
    /// first the unsure verdicts that would become certain within it,
    /// were their rounds to come as they have ([`Taken::time_to_certain`]),
    /// and those of one worker certain on their own that the report would
    /// leave unsure (another worker tells), the soonest first; then those
    /// of one round that the report leaves unsure (a long program's first
    /// look, with no interval, or one from the suite's rounds too wide):
    /// a second round gives it an interval of its own; then the other
    /// unsure ones (close calls, and those the time left would not
    /// settle); then those certain from fewer processes than the stop
    /// rule needs; last those of one worker the report reads certain, the
    /// cheapest workers first within each.
    fn turn(&self, taken: &Taken, left: Duration, reported: Option<bool>) -> (u8, Duration) {
        let rank = match (reported, taken.unsure()) {
            (Some(true), _) => 4,
            (Some(false), false) => 0,
            (None, false) => 3,
            (_, true) => match taken.time_to_certain(self.band) {
                Some(time) if time <= left => return (0, time),
                _ if taken.rounds() == 1 => 1,
                _ => 2,
            },
        };
        (rank, taken.per_process())
    }

    /// Take `open` further for `share`, its entry in `benchmarks`
    /// replaced (its passes counted on), or, when a worker fails, kept
    /// with why ([`kept_with_failure`], [`later_failure`]). Gives it
    /// again when it is still open and took rounds; `Err` when
    /// interrupted.
    fn further(
        &self,
        open: Open,
        share: Duration,
        benchmarks: &mut [SuiteBenchmark],
    ) -> Result<Option<Open>, Interrupted> {
        let benchmark = &self.suite.benchmarks[open.index];
        let within = Within {
            progress: self.progress,
            name: &benchmark.name,
        };
        let start = Instant::now();
        let rounds = open.taken.rounds();
        let before = &benchmarks[open.index];
        let kept = before.variant_sides(&self.suite.named_sides());
        let left_out = before.left_out.clone();
        let compared = (self.compare)(benchmark, &kept, start + share, open.taken, &within);
        let cut = compared.as_ref().map_or(true, |(r, _)| r.stopped.is_some());
        if cut && sandbox::interrupted() {
            return Err(Interrupted);
        }
        let spent = open.spent + start.elapsed();
        let (compared, taken) = split(compared);
        let entry = match compared {
            Err(e) if before.report.is_some() => kept_with_failure(before, &e, spent),
            compared => {
                let mut entry = judged(benchmark, compared, kept.len(), spent);
                entry.passes = before.passes + 1;
                entry.left_out = left_out;
                entry.failed_later = later_failure(taken.as_ref());
                entry
            }
        };
        let again = Open::further(open.index, taken, &entry, spent, rounds);
        benchmarks[open.index] = entry;
        match sandbox::interrupted() {
            true => Err(Interrupted),
            false => Ok(again),
        }
    }
}

/// The entry of a benchmark whose worker failed, `error`, as the second
/// pass took it further: its entry `before`, the report of the workers
/// that did not fail, with why the later one did, its time `spent` and
/// this pass counted. One slower process can outlast `--timeout` where
/// the first did not; the rounds taken before it still stand.
fn kept_with_failure(
    before: &SuiteBenchmark,
    error: &anyhow::Error,
    spent: Duration,
) -> SuiteBenchmark {
    SuiteBenchmark {
        failed_later: Some(one_line(error).into()),
        elapsed_ms: spent.as_secs_f64() * 1e3,
        passes: before.passes + 1,
        ..before.clone()
    }
}

/// Why a worker failed after others of the comparison had compared (what
/// they took stands), as an entry says it.
fn later_failure(taken: Option<&Taken>) -> Option<Foreign> {
    taken.and_then(Taken::failed).map(|e| one_line(e).into())
}

/// A suite interrupted (Ctrl-C) while it took a benchmark further.
struct Interrupted;

/// The time each benchmark of the second pass may take: an even share of
/// the time left to the pass's `end` among the benchmarks left (at most
/// what `--time` leaves it), so that what a benchmark settled early
/// leaves goes to the ones after it. A benchmark's time counts from its
/// start: loading its files, and its workers' start, included.
struct Shares {
    /// When the pass's time is up.
    end: Instant,
    left: usize,
}

impl Shares {
    fn new(end: Instant, benchmarks: usize) -> Self {
        Shares {
            end,
            left: benchmarks,
        }
    }

    /// The next benchmark's share, at most `cap`.
    fn share(&mut self, cap: Duration) -> Duration {
        let left = self.left.max(1) as u32;
        self.left = self.left.saturating_sub(1);
        let spare = self.end.saturating_duration_since(Instant::now());
        (spare / left).min(cap)
    }
}

/// One benchmark's entry: its report, or why there is none (an error, or
/// an engine that cannot run it). A file with
/// several benchmarks (`run_<name>` exports) makes more variants than
/// sides, which no side-by-side reading can pair: an error. A side whose
/// per-op time cannot be told apart from the empty guest's gives a ratio
/// of noise: not judged.
fn judged(
    benchmark: &Benchmark,
    compared: Result<CompareReport>,
    sides: usize,
    elapsed: Duration,
) -> SuiteBenchmark {
    let mut entry = SuiteBenchmark {
        name: benchmark.name.clone().into(),
        paths: benchmark
            .files
            .iter()
            .map(|f| Foreign::new(f.display().to_string()))
            .collect(),
        error: None,
        unsupported: None,
        not_judged: None,
        report: None,
        elapsed_ms: elapsed.as_secs_f64() * 1e3,
        passes: 1,
        left_out: Vec::new(),
        failed_later: None,
        widened_pct: Vec::new(),
    };
    match compared {
        Ok(report) if report.variants.len() != sides => {
            entry.error = Some(Foreign::new(format!(
                "{} variants for {sides} sides: a suite compares files of one benchmark each (this one has `run_<name>` benchmarks)",
                report.variants.len()
            )));
        }
        Ok(report) => {
            let figures = || report.variants.iter().filter_map(|v| v.figures.as_ref());
            let steps = figures().any(|f| f.at_clock_resolution);
            let empty = figures().any(|f| !f.measurable_work());
            entry.not_judged = match (steps, empty) {
                (true, _) => Some(Foreign::new(
                    "a side's timed region lasts a few steps of the clock: its ratio is a quotient of steps",
                )),
                (false, true) => Some(Foreign::new(
                    "a side cannot be told apart from the empty guest: its ratio is noise",
                )),
                (false, false) => None,
            };
            entry.report = Some(report);
        }
        Err(e) => match lacking(&e) {
            true => entry.unsupported = Some(one_line(&e).into()),
            false => entry.error = Some(one_line(&e).into()),
        },
    }
    entry
}

/// The progress of one benchmark's comparison within the suite's: its
/// steps named by the benchmark; the suite counts the benchmarks done and
/// finishes the display.
struct Within<'a> {
    progress: &'a dyn Progress,
    name: &'a str,
}

impl Progress for Within<'_> {
    fn step(&self, _what: &str, step: Step) {
        self.progress.step(self.name, step);
    }
    fn calling(&self, call: Call) {
        self.progress.calling(call);
    }
    fn estimate(&self, what: &str, ns_per_op: f64, err_pct: f64) {
        self.progress.estimate(what, ns_per_op, err_pct);
    }
    fn suspend(&self, print: &mut dyn FnMut()) {
        self.progress.suspend(print);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::comparison;
    use crate::benchmark::parent::row;
    use crate::options::EngineConfig;
    use crate::results::{Comparison, LeftOut, Ratio, Row, Verdict};

    /// A fresh folder under the system temp dir, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(tag: &str) -> Self {
            let path =
                std::env::temp_dir().join(format!("wasm-bench-suite-{tag}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&path);
            std::fs::create_dir_all(&path).expect("create a temp dir");
            TempDir(path)
        }

        fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("folder");
        std::fs::write(path, b"").expect("file");
    }

    #[test]
    fn engines_over_files_make_a_suite_and_one_file_does_not() -> Result<()> {
        let dir = TempDir::new("engines");
        let (a, b) = (dir.path().join("a.wat"), dir.path().join("b.wasm"));
        touch(&a);
        touch(&b);
        let engines = ["cranelift", "winch"];
        let suite = suite_of(&[dir.path().to_path_buf()], &engines)?.expect("a suite");
        assert_eq!(suite.sides, ["cranelift", "winch"]);
        let names: Vec<&str> = suite.benchmarks.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(suite.benchmarks[1].files, std::slice::from_ref(&b));
        assert_eq!(suite_of(std::slice::from_ref(&a), &engines)?, None);
        assert_eq!(suite_of(&[a.clone(), b.clone()], &["cranelift"])?, None);
        // The same file twice is one benchmark.
        assert_eq!(suite_of(&[a.clone(), a], &engines)?, None);
        Ok(())
    }

    #[test]
    fn folders_pair_by_name_and_sightglass_folders_by_theirs() -> Result<()> {
        let dir = TempDir::new("folders");
        let (old, new) = (dir.path().join("old"), dir.path().join("new"));
        for side in [&old, &new] {
            touch(&side.join("bz2").join("benchmark.wasm"));
            touch(&side.join("regex").join("benchmark.wasm"));
        }
        touch(&old.join("gone.wat"));
        touch(&new.join("added.wat"));
        let suite = suite_of(&[old.clone(), new.clone()], &["cranelift"])?.expect("a suite");
        assert_eq!(suite.sides, [label(&old), label(&new)]);
        let names: Vec<&str> = suite.benchmarks.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["bz2", "regex"]);
        assert_eq!(
            suite.benchmarks[0].files,
            [
                old.join("bz2").join("benchmark.wasm"),
                new.join("bz2").join("benchmark.wasm")
            ]
        );
        let unpaired: Vec<(&str, Vec<String>)> = suite
            .unpaired
            .iter()
            .map(|u| {
                let found_in = u.found_in.iter().map(|f| f.unescaped().to_string());
                (u.name.unescaped(), found_in.collect())
            })
            .collect();
        assert_eq!(
            unpaired,
            [("gone", vec![label(&old)]), ("added", vec![label(&new)])]
        );
        // Two engines on paired folders: a side per folder and engine.
        let both = suite_of(&[old.clone(), new], &["cranelift", "winch"])?.expect("a suite");
        assert_eq!(both.sides.len(), 4);
        assert_eq!(both.sides[1], format!("{}[winch]", label(&old)));
        Ok(())
    }

    /// In the second pass each benchmark gets an even share of the time
    /// left, at most `--time`; what one leaves goes to those after it.
    #[test]
    fn shares_split_the_time_left_and_never_pass_the_cap() {
        let cap = Duration::from_secs(10);
        let mut shares = Shares::new(Instant::now() + Duration::from_secs(40), 8);
        let first = shares.share(cap);
        assert!(first <= Duration::from_secs(5), "{first:?}");
        assert!(first >= Duration::from_millis(4900), "{first:?}");
        // Six of the seven left settle at once: the last two share 40 s.
        shares.left = 2;
        let next = shares.share(cap);
        assert!(next <= cap, "capped by --time: {next:?}");
        assert!(next >= Duration::from_millis(9900), "{next:?}");
        // A cap of its own (a benchmark of the second pass, with part of
        // its --time spent) bounds the share as --time does.
        shares.left = 2;
        let own = shares.share(Duration::from_secs(3));
        assert_eq!(own, Duration::from_secs(3));
        // Past the pass's end, no share at all.
        let mut spent = Shares::new(Instant::now(), 3);
        assert_eq!(spent.share(cap), Duration::ZERO);
    }

    /// The first pass gives every benchmark the same time, a fifth of
    /// `--suite-time` split evenly (at most `--time`), or `--time`
    /// without a suite's time.
    #[test]
    fn the_first_pass_gives_every_benchmark_the_same_share() -> Result<()> {
        let settings = |time: &[&str]| {
            let engines = ["a", "--engine", "cranelift", "--engine", "winch"];
            CompareSettings::parse(&[&engines[..], time].concat())
        };
        let ten = Duration::from_secs(10);
        assert_eq!(first_share(&settings(&["--time", "10s"])?, 128), ten);
        let budget = settings(&["--suite-time", "290s", "--time", "10s"])?;
        let share = Duration::from_secs(290).mul_f64(FIRST_PASS) / 128;
        assert_eq!(first_share(&budget, 128), share);
        assert_eq!(first_share(&budget, 0), ten, "at most --time");
        let capped = settings(&["--suite-time", "290s", "--time", "1s"])?;
        assert_eq!(first_share(&capped, 2), Duration::from_secs(1));
        Ok(())
    }

    /// The engines of [`three_engines`].
    const THREE: [&str; 3] = ["cranelift", "winch", "pulley"];

    /// A comparison of `a.wasm` across [`THREE`].
    fn three_engines() -> Result<CompareSettings> {
        let mut args = vec!["a.wasm"];
        args.extend(THREE.iter().flat_map(|e| ["--engine", e]));
        CompareSettings::parse(&args)
    }

    /// Across three engines or more, a side after the first that fails on
    /// a benchmark (a call past `--timeout`) or cannot run it is left
    /// out, with why, and the others are compared; the reference's
    /// failure, or one with two sides left, fails the benchmark.
    #[test]
    fn a_side_that_fails_is_left_out_and_the_others_compared() -> Result<()> {
        let settings = three_engines()?;
        let suite = Suite {
            sides: THREE.map(String::from).to_vec(),
            ..suite_named(&["a"])
        };
        // A fake comparison in which the engines named in `failing` fail
        // (winch as an engine that lacks a proposal), from `sides`, with
        // a side that failed waiting when `wait`: what it gave, the sides
        // it ended with, and how many comparisons it made.
        let compare_from = |failing: &[&str], mut sides: Sides, wait: bool| {
            let calls = std::cell::Cell::new(0);
            let benchmark = &suite.benchmarks[0];
            let fake = |settings: &CompareSettings| {
                calls.set(calls.get() + 1);
                let names = EngineConfig::short_names(&settings.settings.engines);
                let set = names.iter().position(|n| failing.contains(&n.unescaped()));
                if let Some(set) = set {
                    let engine = names[set].unescaped();
                    let row = Row::new(Path::new("a.wasm"), "a", "_start", None, set, Some(engine));
                    return Err(row::failed(&row, failure(engine)));
                }
                let mut report = crate::analysis::fixtures::compare_report();
                report.variants.truncate(names.len());
                report.comparisons.truncate(names.len() - 1);
                Ok((report, Taken::made_of((1, 2), Duration::ZERO, slower())))
            };
            let one_file = (&suite.sides[..], benchmark.files.len() == 1);
            let compared = leaving_out(&settings, one_file, &mut sides, wait, fake);
            ((compared, sides), calls.get())
        };
        let compare = |failing: &[&str]| {
            let ((compared, sides), calls) = compare_from(failing, Sides::all(3), false);
            ((compared, sides.left_out), calls)
        };
        let ((compared, left_out), calls) = compare(&["pulley"]);
        assert_eq!((compared?.0.variants.len(), calls), (2, 2));
        let [pulley] = left_out.as_slice() else {
            panic!("{left_out:?}");
        };
        assert_eq!(
            (pulley.side.unescaped(), pulley.unsupported),
            ("pulley", false)
        );
        let why = pulley.why.unescaped();
        assert!(
            why.starts_with("a.wasm (_start, under pulley): did not return"),
            "{why}"
        );
        let ((compared, left_out), _) = compare(&["winch"]);
        assert!(compared.is_ok());
        assert_eq!(left_out.len(), 1);
        assert!(left_out[0].unsupported, "{left_out:?}");
        // With two sides left, a side that fails fails the benchmark.
        let ((compared, left_out), calls) = compare(&["pulley", "winch"]);
        let error = compared.err().expect("pulley fails");
        assert_eq!(row::failed_engine(&error), Some("pulley"));
        assert_eq!((left_out.len(), calls), (1, 2));
        assert_eq!(left_out[0].side.unescaped(), "winch");
        // The reference is never left out.
        let ((compared, left_out), calls) = compare(&["cranelift"]);
        assert!(compared.is_err());
        assert_eq!((left_out.len(), calls), (0, 1));
        // Under --suite-time, a side that failed waits: the error stands,
        // and the next comparison leaves it out before it begins.
        let ((compared, sides), calls) = compare_from(&["pulley"], Sides::all(3), true);
        assert!(compared.is_err() && sides.left_out.is_empty());
        assert_eq!((sides.kept.len(), calls), (3, 1));
        let waiting = sides
            .waiting
            .as_ref()
            .map(|(at, l)| (*at, l.side.unescaped()));
        assert_eq!(waiting, Some((2, "pulley")));
        let ((compared, sides), calls) = compare_from(&["pulley"], sides, true);
        assert_eq!((compared?.0.variants.len(), calls), (2, 1));
        assert_eq!(
            (sides.kept.as_slice(), sides.left_out.len()),
            (&[0, 1][..], 1)
        );
        assert!(sides.waiting.is_none());
        // One its engine cannot run does not wait: it costs no call limit.
        let ((compared, sides), calls) = compare_from(&["winch"], Sides::all(3), true);
        assert!(compared.is_ok() && sides.waiting.is_none());
        assert_eq!((sides.left_out.len(), calls), (1, 2));
        Ok(())
    }

    /// A benchmark whose side failed and waits, when the suite's time is
    /// up before its turn, keeps its error, which says so.
    #[test]
    fn a_side_waiting_past_the_suites_time_says_why_it_was_not_left_out() -> Result<()> {
        let settings = three_engines()?;
        let suite = suite_named(&["a"]);
        let mut sides = Sides::all(3);
        let why = "a.wasm (_start, under pulley): did not return within --timeout 10s";
        sides.waiting = Some((
            2,
            LeftOut {
                side: "pulley".into(),
                why: why.into(),
                unsupported: false,
            },
        ));
        let mut pass = FirstPass {
            benchmarks: first_pass_errors(&suite),
            waiting: vec![(0, sides)],
            ..FirstPass::default()
        };
        pass.benchmarks[0].error = Some(why.into());
        let silent = crate::benchmark::progress::Silent;
        assert!(!pass.without_failed_sides(&settings, &suite, Instant::now(), &silent));
        let error = pass.benchmarks[0].error.as_ref().map(|e| e.unescaped());
        let error = error.unwrap_or_default();
        assert!(error.starts_with(why), "{error}");
        assert!(
            error.contains("compared without pulley: more --suite-time would"),
            "{error}"
        );
        assert!(pass.benchmarks[0].left_out.is_empty());
        Ok(())
    }

    /// What a fake engine's failure says: winch lacks a proposal, the
    /// others outlast the call limit.
    fn failure(engine: &str) -> anyhow::Error {
        match engine {
            "winch" => anyhow::Error::new(crate::guest::Unsupported(
                "array indexed types not supported without the gc feature".into(),
            )),
            _ => anyhow::anyhow!("did not return within --timeout 10s"),
        }
    }

    /// A suite of cranelift against winch over a file `NAME.wasm` per name.
    fn suite_named(names: &[&str]) -> Suite {
        let benchmark = |name: &&str| Benchmark {
            name: name.to_string(),
            files: vec![PathBuf::from(format!("{name}.wasm"))],
        };
        Suite {
            sides: vec!["cranelift".into(), "winch".into()],
            benchmarks: names.iter().map(benchmark).collect(),
            unpaired: Vec::new(),
        }
    }

    /// winch certainly slower than cranelift, 1.5× [1.4×, 1.6×].
    fn slower() -> Comparison {
        comparison("winch", 1.5, 1.4, 1.6, Verdict::Slower)
    }

    /// winch unsure against cranelift: `ratio` [`low`, `high`].
    fn unsure(ratio: f64, low: f64, high: f64) -> Comparison {
        comparison("winch", ratio, low, high, Verdict::Unsure)
    }

    /// A comparison's report of two variants, as a fake comparison gives.
    fn report_of_two() -> CompareReport {
        let mut report = crate::analysis::fixtures::compare_report();
        report.variants.truncate(2);
        report.comparisons.truncate(1);
        report
    }

    /// The second pass over `suite` until `end`, comparing with `compare`.
    fn second_pass<'a>(
        suite: &'a Suite,
        end: Instant,
        compare: &'a CompareFurther<'a>,
    ) -> Further<'a> {
        Further {
            suite,
            cap: Duration::from_secs(600),
            band: NoiseBand::default(),
            progress: &crate::benchmark::progress::Silent,
            end,
            compare,
        }
    }

    /// The benchmark `index` still open after workers and rounds
    /// `workers_rounds` of `per_process` each, judged `judged`.
    fn open(
        index: usize,
        workers_rounds: (usize, usize),
        per_process: Duration,
        judged: Comparison,
    ) -> Open {
        Open {
            index,
            taken: Taken::made_of(workers_rounds, per_process, judged),
            spent: per_process,
        }
    }

    /// The names, in order, of the benchmarks of `suite` that a second
    /// pass of 20 s takes from `open`, the first pass having given
    /// `benchmarks`.
    fn second_pass_order(
        suite: &Suite,
        open: Vec<Open>,
        benchmarks: &mut [SuiteBenchmark],
    ) -> Vec<String> {
        let taken = std::cell::RefCell::new(Vec::new());
        let compare =
            |b: &Benchmark, _kept: &[usize], _until: Instant, more: Taken, _: &dyn Progress| {
                taken.borrow_mut().push(b.name.clone());
                Ok((report_of_two(), more))
            };
        let further = second_pass(suite, Instant::now() + Duration::from_secs(20), &compare);
        assert!(!further.take(open, benchmarks));
        taken.into_inner()
    }

    /// Every benchmark's entry after a first pass in which each failed.
    fn first_pass_errors(suite: &Suite) -> Vec<SuiteBenchmark> {
        let first_pass =
            |b: &Benchmark| judged(b, Err(anyhow::anyhow!("first pass")), 2, Duration::ZERO);
        suite.benchmarks.iter().map(first_pass).collect()
    }

    /// The second pass takes the benchmarks whose workers cost least
    /// first, skips one whose round costs more than the time left, and
    /// replaces the entry of each it took further.
    #[test]
    fn the_second_pass_takes_the_cheap_first_and_skips_what_does_not_fit() {
        let suite = suite_named(&["dear", "cheaper", "cheapest"]);
        let taken = std::cell::RefCell::new(Vec::new());
        let compare =
            |b: &Benchmark, _kept: &[usize], _until: Instant, more: Taken, _: &dyn Progress| {
                taken.borrow_mut().push(b.name.clone());
                Ok((report_of_two(), more))
            };
        let further = second_pass(&suite, Instant::now() + Duration::from_secs(20), &compare);
        let open = |index, per_process: Duration| Open {
            index,
            taken: Taken::made_of((1, 2), per_process, slower()),
            spent: per_process + Duration::from_millis(100),
        };
        let mut benchmarks = first_pass_errors(&suite);
        let open = vec![
            open(0, Duration::from_secs(60)),
            open(1, Duration::from_secs(1)),
            open(2, Duration::from_millis(10)),
        ];
        assert!(!further.take(open, &mut benchmarks));
        assert_eq!(*taken.borrow(), ["cheapest", "cheaper"]);
        for taken_further in &benchmarks[1..] {
            assert_eq!(taken_further.passes, 2);
            assert!(taken_further.report.is_some());
        }
        assert!(benchmarks[1].elapsed_ms >= 1100.0, "its first pass counts");
        // Two rounds in 60 s, 30 s a round against 20 s left: not taken
        // further.
        assert_eq!(benchmarks[0].passes, 1);
        assert!(benchmarks[0].report.is_none());
    }

    /// An unsure verdict goes before certain ones, dearer though its
    /// worker is: it gets at least that worker's time while one fits.
    #[test]
    fn the_second_pass_takes_an_unsure_verdict_first() {
        let suite = suite_named(&["certain", "unsure"]);
        let taken = std::cell::RefCell::new(Vec::new());
        let compare =
            |b: &Benchmark, _kept: &[usize], until: Instant, more: Taken, _: &dyn Progress| {
                taken.borrow_mut().push((b.name.clone(), until));
                Ok((report_of_two(), more))
            };
        let end = Instant::now() + Duration::from_secs(4);
        let verdict_of = |is_unsure| match is_unsure {
            true => unsure(1.5, 0.9, 2.5),
            false => slower(),
        };
        let further = second_pass(&suite, end, &compare);
        let open = |index, per_process: Duration, is_unsure| Open {
            index,
            taken: Taken::made_of((1, 2), per_process, verdict_of(is_unsure)),
            spent: per_process,
        };
        let mut benchmarks = first_pass_errors(&suite);
        let open = vec![
            open(0, Duration::from_millis(10), false),
            open(1, Duration::from_secs(6), true),
        ];
        assert!(!further.take(open, &mut benchmarks));
        let taken = taken.borrow();
        let names: Vec<&str> = taken.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["unsure", "certain"]);
        // Two share 4 s: an even share (2 s) would not hold one of its
        // rounds (3 s: two in 6 s).
        let (_, until) = taken[0];
        assert!(until + Duration::from_millis(100) >= end - Duration::from_secs(1));
    }

    /// Of the unsure verdicts, those that more rounds would make certain
    /// within the time left go first, the soonest first (a long program
    /// with a large effect left at two rounds among them); then those of
    /// one round, which have no interval, dear though their workers are;
    /// then close calls, cheap though their workers are; then the certain
    /// ones. One that would take longer than the time left waits with the
    /// close calls (here its worker does not fit at all).
    #[test]
    fn the_second_pass_takes_first_what_more_rounds_would_settle_soonest() {
        let suite = suite_named(&["close", "certain", "long", "nearer", "beyond", "one"]);
        let ms = Duration::from_millis;
        let open = vec![
            open(0, (6, 35), ms(10), unsure(1.004, 0.982, 1.007)),
            open(1, (1, 2), ms(10), slower()),
            // One round more: one worker.
            open(2, (1, 2), ms(1000), unsure(1.94, 0.93, 4.06)),
            // Three rounds more, two a worker: two workers.
            open(3, (2, 4), ms(200), unsure(1.242, 0.880, 1.536)),
            open(4, (1, 2), ms(60_000), unsure(1.94, 0.93, 4.06)),
            // A long program's first look: one round, no interval.
            open(5, (1, 1), ms(1500), unsure(2.2, f64::NAN, f64::NAN)),
        ];
        let mut benchmarks = first_pass_errors(&suite);
        let order = second_pass_order(&suite, open, &mut benchmarks);
        assert_eq!(order, ["nearer", "long", "one", "close", "certain"]);
        assert_eq!(benchmarks[4].passes, 1);
    }

    /// Once the suite's processes part (a benchmark whose three workers
    /// read winch 5% apart), a verdict of one worker that the report's
    /// widening would leave unsure goes first, before a close call; one
    /// that stays certain widened goes last, after one certain from two
    /// workers, cheaper though its worker is.
    #[test]
    fn the_second_pass_takes_first_a_verdict_of_one_worker_that_widening_would_leave_unsure() {
        let suite = suite_named(&["spread", "safe", "two", "close", "thin"]);
        let ms = Duration::from_millis;
        let thin = comparison("winch", 1.03, 1.02, 1.04, Verdict::Slower);
        let open = vec![
            open(1, (1, 2), ms(10), slower()),
            open(2, (2, 4), ms(20), slower()),
            open(3, (6, 35), ms(10), unsure(1.004, 0.982, 1.007)),
            open(4, (1, 2), ms(100), thin),
        ];
        let mut benchmarks = first_pass_errors(&suite);
        let ratio = Ratio::exact(1.0);
        benchmarks[0] = crate::analysis::fixtures::suite_benchmark(&[1.0, 1.05, 0.95], ratio);
        let order = second_pass_order(&suite, open, &mut benchmarks);
        assert_eq!(order, ["thin", "close", "two", "safe"]);
    }

    /// The second pass goes over what is still open again while time is
    /// left: a benchmark whose go took rounds is taken again, one whose go
    /// took none is not; each go counts as a pass.
    #[test]
    fn the_second_pass_goes_again_over_what_is_still_open() {
        let suite = suite_named(&["moving", "stuck"]);
        let taken = std::cell::RefCell::new(Vec::new());
        let compare =
            |b: &Benchmark, _kept: &[usize], _until: Instant, more: Taken, _: &dyn Progress| {
                taken.borrow_mut().push(b.name.clone());
                let rounds = more.rounds();
                let more = match (b.name.as_str(), rounds) {
                    ("moving", ..8) => Taken::made_of(
                        (rounds / 2 + 1, rounds + 2),
                        Duration::from_millis(10) * (rounds as u32 + 2),
                        unsure(1.2, 0.9, 1.6),
                    ),
                    _ => more,
                };
                Ok((report_of_two(), more))
            };
        let further = second_pass(&suite, Instant::now() + Duration::from_secs(20), &compare);
        let open = |index| Open {
            index,
            taken: Taken::made_of((1, 2), Duration::from_millis(20), unsure(1.2, 0.9, 1.6)),
            spent: Duration::from_millis(20),
        };
        let mut benchmarks = first_pass_errors(&suite);
        assert!(!further.take(vec![open(0), open(1)], &mut benchmarks));
        let count = |name: &str| taken.borrow().iter().filter(|n| *n == name).count();
        assert_eq!((count("moving"), count("stuck")), (4, 1));
        assert_eq!((benchmarks[0].passes, benchmarks[1].passes), (5, 2));
    }

    /// A worker of the second pass that fails (a call past `--timeout` in
    /// a slower process) leaves the benchmark its figures from before,
    /// with why the later worker failed, and it is not taken again.
    #[test]
    fn a_later_worker_failing_keeps_the_figures_before_it() {
        let suite = suite_named(&["flaky"]);
        let calls = std::cell::Cell::new(0);
        let compare =
            |_: &Benchmark, _kept: &[usize], _until: Instant, _: Taken, _: &dyn Progress| {
                calls.set(calls.get() + 1);
                Err(failure("wasmi"))
            };
        let further = second_pass(&suite, Instant::now() + Duration::from_secs(20), &compare);
        let open = Open {
            index: 0,
            taken: Taken::made_of((1, 2), Duration::from_millis(20), unsure(1.2, 0.9, 1.6)),
            spent: Duration::from_millis(20),
        };
        let first = judged(&suite.benchmarks[0], Ok(report_of_two()), 2, Duration::ZERO);
        let mut benchmarks = vec![first.clone()];
        assert!(!further.take(vec![open], &mut benchmarks));
        assert_eq!(calls.get(), 1);
        let entry = &benchmarks[0];
        let rounds = |e: &SuiteBenchmark| e.report.as_ref().map(|r| (r.rounds, r.variants.len()));
        assert_eq!(rounds(entry), rounds(&first));
        assert!(rounds(entry).is_some());
        assert_eq!(entry.error, None);
        assert_eq!(entry.passes, 2);
        let why = entry.failed_later.as_ref().map(|w| w.unescaped());
        assert_eq!(why, Some("did not return within --timeout 10s"));
    }

    /// A worker that fails after others of the go compared leaves the
    /// benchmark what they all took, with why, and it is not taken again.
    #[test]
    fn a_worker_failing_after_others_compared_keeps_what_they_took() {
        let suite = suite_named(&["flaky"]);
        let calls = std::cell::Cell::new(0);
        let ms = Duration::from_millis;
        let compare =
            |_: &Benchmark, _kept: &[usize], _until: Instant, more: Taken, _: &dyn Progress| {
                calls.set(calls.get() + 1);
                let rounds = more.rounds() + 2;
                let more = Taken::made_of((2, rounds), ms(40), slower());
                Ok((report_of_two(), more.failing(failure("wasmi"))))
            };
        let further = second_pass(&suite, Instant::now() + Duration::from_secs(20), &compare);
        let open = Open {
            index: 0,
            taken: Taken::made_of((1, 2), ms(20), unsure(1.2, 0.9, 1.6)),
            spent: ms(20),
        };
        let mut benchmarks = first_pass_errors(&suite);
        assert!(!further.take(vec![open], &mut benchmarks));
        assert_eq!(calls.get(), 1);
        let entry = &benchmarks[0];
        assert!(entry.report.is_some());
        assert_eq!((entry.error.as_ref(), entry.passes), (None, 2));
        let why = entry.failed_later.as_ref().map(|w| w.unescaped());
        assert_eq!(why, Some("did not return within --timeout 10s"));
    }

    #[test]
    fn repeated_sides_are_told_apart() {
        let names = distinct(vec!["a".into(), "a".into(), "b".into()]);
        assert_eq!(names, ["a", "a#2", "b"]);
        assert_eq!(label(Path::new("old/")), "old");
        assert_eq!(label(Path::new("/")), "/");
    }
}
