//! The worker process: `host worker` (hidden) reads a [`Job`] as JSON on
//! stdin, measures, and writes [`Event`]s as JSON lines on stdout, one per
//! line, flushed at once. It is the same binary as the parent, so the code
//! that measures is the code the user runs.
//!
//! A worker prepares its measuring thread and calibrates, loads the files it
//! was given (from the compile cache, as a rule), then measures each row of
//! the job in the order given (or compares the variants in interleaved
//! rounds), telling the parent before every guest call what it calls. A
//! guest that fails fails its row; the worker goes on with the next. What
//! the worker cannot survive (a hang, a crash, memory beyond the cap), the
//! parent ([`crate::benchmark::supervisor`]) contains.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::benchmark::callgrind;
use crate::benchmark::counters;
use crate::benchmark::profile;
use crate::benchmark::program::{self, ProgramRun};
use crate::benchmark::progress::{Call, Progress, Stage};
use crate::benchmark::sequence::{self, Blocks, Plan, Share};
use crate::benchmark::session::{Session, on_measuring_thread};
use crate::guest::Contract;
use crate::guest::instance::Instance;
use crate::guest::program::{Program, TimedRegion};
use crate::options::Settings;
use crate::results::{CallgrindCounts, Environment, HardwareCounts, Measurement, Row, RowProfile};
use crate::util::error::one_line;

/// Target wall time of one variant's block in a round of a comparison.
pub const ROUND_BLOCK_TIME: std::time::Duration = std::time::Duration::from_millis(5);
/// Most samples one variant takes in a round (very short calls).
pub const ROUND_BLOCK_MAX: usize = 100;
/// Chunks a variant's block of a round is taken in, alternating with the
/// other variants' chunks.
pub const ROUND_CHUNKS: usize = 5;

/// The samples of chunk `chunk` of a block of `len`: the block split into
/// [`ROUND_CHUNKS`] chunks as evenly as it goes (the first ones larger;
/// empty chunks for a block of fewer samples).
fn chunk_len(len: usize, chunk: usize) -> usize {
    len / ROUND_CHUNKS + usize::from(chunk < len % ROUND_CHUNKS)
}

/// Fault injection for the supervisor's tests: a worker given this variable
/// aborts (SIGABRT) when it comes to the row of that name, as a worker whose
/// guest brought the process down would.
pub const ABORT_ON: &str = "WASM_BENCH_WORKER_ABORT_ON";

/// What the parent asks of one worker.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Job {
    /// The run's settings, the seed fixed.
    pub settings: Settings,
    pub task: Task,
}

/// The work of one worker.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Task {
    /// Measure these rows, in this order.
    Rows(Vec<RowJob>),
    /// Compare these variants in interleaved rounds.
    Compare {
        variants: Vec<Row>,
        /// The shared count, once a worker has fixed it.
        count: Option<u64>,
        rounds: usize,
        /// Rotate the order of the variants starting here.
        offset: usize,
        /// Count instructions too.
        fuel: bool,
    },
    /// Count these rows with Callgrind (the worker runs under it), its
    /// output going into `folder`.
    Callgrind { rows: Vec<RowJob>, folder: PathBuf },
    /// Profile these rows, each for `duration`, a stack sample every
    /// `interval`, writing the profiles into `folder`.
    Profile {
        rows: Vec<RowJob>,
        duration: std::time::Duration,
        interval: std::time::Duration,
        folder: PathBuf,
    },
}

/// One row of a [`Task::Rows`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RowJob {
    /// The row's index in the parent's list: events name it.
    pub index: usize,
    pub row: Row,
    /// The count every process takes, once the first has fixed it.
    pub count: Option<u64>,
    pub share: Share,
    /// Count instructions too.
    pub fuel: bool,
    /// Count with the hardware counters too.
    #[serde(default)]
    pub counters: bool,
}

/// What a worker tells the parent.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Event {
    /// Calibrated and loaded: where and how it measures.
    Ready { environment: Environment },
    /// Row (or variant) `row` entered `stage`.
    Stage { row: usize, stage: Stage },
    /// A guest call of row `row` is about to begin.
    Calling { row: usize, call: Call },
    /// The current estimate of row `row`.
    Estimate {
        row: usize,
        ns_per_op: f64,
        err_pct: f64,
    },
    /// Row `row` is measured in this process.
    Measured { row: usize, sample: ProcessSample },
    /// Row `row` failed in this process (the worker goes on).
    Failed { row: usize, error: String },
    /// Row `row`, counted by Callgrind.
    Counted {
        row: usize,
        per_op: CallgrindCounts,
        instantiate: Option<CallgrindCounts>,
    },
    /// Row `row`, profiled.
    Profiled { row: usize, profile: RowProfile },
    /// The variants of a comparison, in the job's order.
    Compared {
        count: u64,
        rounds: usize,
        variants: Vec<ProcessSample>,
    },
}

/// What one process measured of one row.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProcessSample {
    pub measurement: Measurement,
    pub instantiate_ms: f64,
    pub fuel_per_op: Option<f64>,
    /// The hardware counters per op, or why they could not count.
    #[serde(default)]
    pub hardware_counters: Option<Result<HardwareCounts, String>>,
    /// Programs: instantiation of every iteration, and the timed region.
    pub program: Option<ProgramSample>,
}

/// What a program adds to a [`ProcessSample`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProgramSample {
    pub instantiate_ns: Vec<f64>,
    pub region: TimedRegion,
}

/// Writes events on stdout, naming the row in progress.
struct Emitter {
    out: Mutex<std::io::Stdout>,
    row: AtomicUsize,
}

impl Emitter {
    fn send(&self, event: &Event) {
        let Ok(mut line) = serde_json::to_vec(event) else {
            return;
        };
        line.push(b'\n');
        let written = match self.out.lock() {
            Ok(mut out) => out.write_all(&line).and_then(|()| out.flush()),
            Err(_) => return,
        };
        if written.is_err() {
            // The parent is gone: nobody will read the results.
            std::process::exit(1);
        }
    }

    fn row(&self) -> usize {
        self.row.load(Ordering::Relaxed)
    }

    /// Send what row `row` gave: its event, or its failure in one line.
    fn finish_row(&self, row: usize, result: Result<Event>) {
        self.send(&result.unwrap_or_else(|e| Event::Failed {
            row,
            error: one_line(&e),
        }));
    }
}

impl Progress for Emitter {
    fn stage(&self, _what: &str, stage: Stage) {
        self.send(&Event::Stage {
            row: self.row(),
            stage,
        });
    }
    fn calling(&self, call: Call) {
        self.send(&Event::Calling {
            row: self.row(),
            call,
        });
    }
    fn estimate(&self, _what: &str, ns_per_op: f64, err_pct: f64) {
        self.send(&Event::Estimate {
            row: self.row(),
            ns_per_op,
            err_pct,
        });
    }
}

/// `host worker`: read the job, measure, report.
pub fn serve() -> Result<()> {
    let job: Job =
        serde_json::from_reader(std::io::stdin().lock()).context("reading the worker's job")?;
    let emitter = Emitter {
        out: Mutex::new(std::io::stdout()),
        row: AtomicUsize::new(0),
    };
    on_measuring_thread(|| {
        let rows: Vec<&Row> = match &job.task {
            Task::Rows(jobs)
            | Task::Callgrind { rows: jobs, .. }
            | Task::Profile { rows: jobs, .. } => jobs.iter().map(|j| &j.row).collect(),
            Task::Compare { variants, .. } => variants.iter().collect(),
        };
        let files: BTreeSet<(PathBuf, usize)> = rows
            .iter()
            .map(|r| (r.path.clone(), r.engine_set))
            .collect();
        let files: Vec<(PathBuf, usize)> = files.into_iter().collect();
        let session = match &job.task {
            Task::Callgrind { .. } => {
                callgrind::steady_allocator();
                Session::counting(&job.settings, &files)?
            }
            _ => Session::new(&job.settings, &files)?,
        };
        emitter.send(&Event::Ready {
            environment: session.environment(&job.settings),
        });
        match &job.task {
            Task::Rows(jobs) => {
                let abort_on = std::env::var_os(ABORT_ON);
                for row_job in jobs {
                    emitter.row.store(row_job.index, Ordering::Relaxed);
                    if abort_on.as_deref() == Some(row_job.row.name.as_ref()) {
                        emitter.stage(&row_job.row.name, Stage::Warmup);
                        std::process::abort();
                    }
                    let measured = measure_row(&job.settings, &session, row_job, &emitter);
                    emitter.finish_row(
                        row_job.index,
                        measured.map(|sample| Event::Measured {
                            row: row_job.index,
                            sample,
                        }),
                    );
                }
            }
            Task::Callgrind { rows, folder } => {
                let mut dumps = callgrind::Dumps::new(folder)?;
                callgrind::prepare_worker()?;
                for row_job in rows {
                    emitter.row.store(row_job.index, Ordering::Relaxed);
                    emitter.stage(&row_job.row.name, Stage::Sampling);
                    let counted = session.workload(&row_job.row).and_then(|workload| {
                        callgrind::count_row(
                            &job.settings,
                            &session,
                            workload,
                            &row_job.row,
                            &mut dumps,
                            &emitter,
                        )
                    });
                    emitter.finish_row(
                        row_job.index,
                        counted.map(|counted| Event::Counted {
                            row: row_job.index,
                            per_op: counted.per_op,
                            instantiate: counted.instantiate,
                        }),
                    );
                }
            }
            Task::Profile {
                rows,
                duration,
                interval,
                folder,
            } => {
                for row_job in rows {
                    emitter.row.store(row_job.index, Ordering::Relaxed);
                    emitter.stage(&row_job.row.name, Stage::Sampling);
                    let row = &row_job.row;
                    let profiled = session.workload(row).and_then(|workload| {
                        let profiled = profile::profile_row(
                            &job.settings,
                            &session,
                            workload,
                            row,
                            *duration,
                            *interval,
                            &emitter,
                        )?;
                        let path = profile::write(folder, &row.name, &profiled)?;
                        let (samples, functions) =
                            crate::analysis::profile::shares(&profiled.json)?;
                        Ok(RowProfile {
                            name: row.name.clone(),
                            path: Some(path.display().to_string()),
                            error: None,
                            samples,
                            functions,
                        })
                    });
                    emitter.finish_row(
                        row_job.index,
                        profiled.map(|profile| Event::Profiled {
                            row: row_job.index,
                            profile,
                        }),
                    );
                }
            }
            Task::Compare {
                variants,
                count,
                rounds,
                offset,
                fuel,
            } => {
                let compared = compare(
                    &job.settings,
                    &session,
                    variants,
                    *count,
                    *rounds,
                    *offset,
                    *fuel,
                    &emitter,
                );
                match compared {
                    Ok(event) => emitter.send(&event),
                    Err((row, e)) => emitter.finish_row(row, Err(e)),
                }
            }
        }
        Ok(())
    })
}

/// The order of `n` variants in round `round`: row `round` of a Williams
/// design, a Latin square (every variant once in every position over `n`
/// rounds; `2n` for odd `n`) in which every variant also follows every
/// other equally often, so that neither position nor the variant before
/// favours one.
pub fn williams_order(n: usize, round: usize) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    // First row: 0, 1, n-1, 2, n-2, ...
    let mut first = Vec::with_capacity(n);
    let (mut low, mut high) = (0, n);
    for j in 0..n {
        if j % 2 == 0 {
            first.push(low);
            low += 1;
        } else {
            high -= 1;
            first.push(high);
        }
    }
    let rows = if n.is_multiple_of(2) { n } else { 2 * n };
    let r = round % rows;
    let shifted = |row: usize| first.iter().map(move |&v| (v + row) % n);
    if r < n {
        shifted(r).collect()
    } else {
        let mut reversed: Vec<usize> = shifted(r - n).collect();
        reversed.reverse();
        reversed
    }
}

/// The plan of a row in this process.
fn plan(settings: &Settings, count: Option<u64>, share: Share) -> Plan {
    Plan {
        sample_time: settings.sample_time,
        warmup_cap: settings.warmup_cap,
        count: count.and_then(std::num::NonZeroU64::new).or(settings.count),
        share,
    }
}

/// Measure one row in this process.
fn measure_row(
    settings: &Settings,
    session: &Session,
    job: &RowJob,
    progress: &Emitter,
) -> Result<ProcessSample> {
    let workload = session.workload(&job.row)?;
    if let Contract::Program { .. } = workload.contract {
        let program = Program::new(
            &job.row.path,
            &workload.code,
            &settings.grants,
            session.limits,
        )?;
        let ProgramRun {
            measurement,
            instantiate_ns,
            region,
        } = program::measure(&program, job.share, progress, &job.row.name)?;
        return Ok(ProcessSample {
            instantiate_ms: crate::analysis::stats::median(&instantiate_ns) / 1e6,
            measurement,
            fuel_per_op: None,
            hardware_counters: job.counters.then(|| {
                Err(
                    "not counted: they count `run(count, seed)` workloads, not programs"
                        .to_string(),
                )
            }),
            program: Some(ProgramSample {
                instantiate_ns,
                region,
            }),
        });
    }
    let (mut instance, instantiate_ms) = session.instance(workload, &job.row, progress)?;
    let calibration = &session
        .format_setup(job.row.engine_set, workload.format)
        .calibration;
    let plan = plan(settings, job.count, job.share);
    let measurement =
        sequence::measure(&plan, calibration, &mut instance, progress, &job.row.name)?;
    let fuel_per_op = match job.fuel {
        true => Some(session.fuel_per_op(workload, &job.row, measurement.count, progress)?),
        false => None,
    };
    let hardware_counters = match job.counters {
        true => Some(counters::per_op(
            &mut instance,
            measurement.count,
            progress,
        )?),
        false => None,
    };
    Ok(ProcessSample {
        measurement,
        instantiate_ms,
        fuel_per_op,
        hardware_counters,
        program: None,
    })
}

/// Compare `variants` in this process: tune each (unless the count is
/// fixed), settle each at the shared count, then `rounds` rounds in which
/// every variant takes one short block, in chunks alternating with the
/// other variants', the order rotating. An error names the variant it
/// belongs to.
#[allow(clippy::too_many_arguments)]
fn compare(
    settings: &Settings,
    session: &Session,
    variants: &[Row],
    count: Option<u64>,
    rounds: usize,
    offset: usize,
    fuel: bool,
    progress: &Emitter,
) -> Result<Event, (usize, anyhow::Error)> {
    let share = Share::Blocks(rounds);
    let plan = plan(settings, count, share);
    let mut prepared: Vec<(Instance, f64, sequence::Tuned)> = Vec::new();
    for (i, row) in variants.iter().enumerate() {
        progress.row.store(i, Ordering::Relaxed);
        let step = || -> Result<_> {
            let workload = session.workload(row)?;
            progress.stage(&row.name, Stage::Warmup);
            let (mut instance, instantiate_ms) = session.instance(workload, row, progress)?;
            let calibration = &session
                .format_setup(row.engine_set, workload.format)
                .calibration;
            let tuned = sequence::tune(&plan, calibration, &mut instance, progress)?;
            Ok((instance, instantiate_ms, tuned))
        };
        prepared.push(step().map_err(|e| (i, e))?);
    }
    // One shared count: the slowest variant's sample fills the target.
    let count = prepared.iter().map(|p| p.2.count).min().unwrap_or(1);
    let mut blocks: Vec<Blocks> = Vec::new();
    for (i, (instance, _, tuned)) in prepared.iter_mut().enumerate() {
        progress.row.store(i, Ordering::Relaxed);
        let row = &variants[i];
        let mut settle = || -> Result<Blocks> {
            let workload = session.workload(row)?;
            let calibration = &session
                .format_setup(row.engine_set, workload.format)
                .calibration;
            sequence::settle(&plan, calibration, *tuned, count, instance, progress)
        };
        blocks.push(settle().map_err(|e| (i, e))?);
    }
    let per_block: Vec<usize> = blocks
        .iter()
        .map(|b| b.samples_per(ROUND_BLOCK_TIME).min(ROUND_BLOCK_MAX))
        .collect();
    let n = variants.len();
    for round in 0..rounds {
        let mut order = williams_order(n, round + offset);
        for &index in &order {
            progress.row.store(index, Ordering::Relaxed);
            progress.calling(Call::Run { count });
            let (instance, _, _) = &mut prepared[index];
            blocks[index]
                .open(instance, per_block[index])
                .map_err(|e| (index, e))?;
        }
        // A round's blocks are taken in chunks that alternate between the
        // variants, the order reversing every chunk (A B B A A B ...), so
        // that every block spans the same stretch of time. A state of the
        // machine that lasts a few milliseconds (on one VM, `xor` ran at
        // one of two speeds 3.3% apart for milliseconds at a time) then
        // falls on every variant's block alike, and their minima agree: A
        // against A stopped at the 3-process floor in 5 of 8 runs, against
        // 1 of 8 with whole blocks one after the other.
        for chunk in 0..ROUND_CHUNKS {
            for &index in &order {
                progress.row.store(index, Ordering::Relaxed);
                let (instance, _, _) = &mut prepared[index];
                blocks[index]
                    .extend(instance, chunk_len(per_block[index], chunk))
                    .map_err(|e| (index, e))?;
            }
            order.reverse();
        }
    }
    let mut samples = Vec::new();
    for (i, (b, (_, instantiate_ms, _))) in blocks.into_iter().zip(&prepared).enumerate() {
        let measurement = b.finish();
        let fuel_per_op = match fuel {
            true => {
                progress.row.store(i, Ordering::Relaxed);
                let row = &variants[i];
                let count_fuel = || -> Result<f64> {
                    let workload = session.workload(row)?;
                    session.fuel_per_op(workload, row, count, progress)
                };
                Some(count_fuel().map_err(|e| (i, e))?)
            }
            false => None,
        };
        samples.push(ProcessSample {
            measurement,
            instantiate_ms: *instantiate_ms,
            fuel_per_op,
            hardware_counters: None,
            program: None,
        });
    }
    Ok(Event::Compared {
        count,
        rounds,
        variants: samples,
    })
}

#[cfg(test)]
mod tests {
    use super::{ROUND_CHUNKS, chunk_len, williams_order};

    /// The chunks of a block add up to the block, differ by at most one
    /// sample; a block of fewer samples than chunks fills the first chunks
    /// with one each.
    #[test]
    fn chunks_share_a_block_out_evenly() {
        for len in [0, 1, 3, 5, 7, 100, 101] {
            let chunks: Vec<usize> = (0..ROUND_CHUNKS).map(|c| chunk_len(len, c)).collect();
            assert_eq!(chunks.iter().sum::<usize>(), len, "{len}: {chunks:?}");
            let (lo, hi) = (chunks.iter().min(), chunks.iter().max());
            assert!(
                hi.zip(lo).is_some_and(|(h, l)| h - l <= 1),
                "{len}: {chunks:?}"
            );
        }
        assert_eq!(
            (0..ROUND_CHUNKS)
                .map(|c| chunk_len(3, c))
                .collect::<Vec<_>>(),
            [1, 1, 1, 0, 0]
        );
    }

    /// Every variant once per position, and every ordered pair of
    /// neighbours equally often, over a full square.
    fn balanced(n: usize) {
        let rows = if n.is_multiple_of(2) { n } else { 2 * n };
        let mut position = vec![vec![0; n]; n];
        let mut follows = vec![vec![0; n]; n];
        for r in 0..rows {
            let order = williams_order(n, r);
            let mut sorted = order.clone();
            sorted.sort();
            assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "row {r}: {order:?}");
            for (p, &v) in order.iter().enumerate() {
                position[v][p] += 1;
            }
            for pair in order.windows(2) {
                follows[pair[0]][pair[1]] += 1;
            }
        }
        let per_position = rows / n;
        assert!(
            position.iter().flatten().all(|&c| c == per_position),
            "{position:?}"
        );
        let per_pair = rows / n;
        for (a, row) in follows.iter().enumerate() {
            for (b, &count) in row.iter().enumerate() {
                let want = if a == b { 0 } else { per_pair };
                assert_eq!(count, want, "n {n}: {a} then {b}");
            }
        }
    }

    #[test]
    fn williams_squares_balance_positions_and_neighbours() {
        for n in 2..=7 {
            balanced(n);
        }
        assert_eq!(williams_order(1, 5), vec![0]);
    }
}
