//! A row measured in one worker process: a `run(count, seed)` workload
//! through the measuring sequence ([`crate::benchmark::worker::sequence`]),
//! with fuel and the hardware counters when asked, then its fresh
//! instances' start ([`crate::benchmark::worker::start`]); a program through its own
//! ([`crate::benchmark::worker::program`]).

use std::num::NonZeroU64;

use anyhow::{Result, bail};

use crate::benchmark::progress::Progress;
use crate::benchmark::protocol::Share;
use crate::benchmark::protocol::{ProcessMeasurement, RowJob, WorkerPlan};
use crate::benchmark::worker::counters;
use crate::benchmark::worker::program;
use crate::benchmark::worker::sequence::{self, Schedule};
use crate::benchmark::worker::session::Session;
use crate::benchmark::worker::start;
use crate::guest::Contract;
use crate::guest::load::GuestFile;

/// The schedule of a row in this process: the count the run fixed, else the
/// user's.
pub fn row_schedule(plan: &WorkerPlan, count: Option<u64>, share: Share) -> Schedule {
    Schedule {
        sample_time: plan.sample_time,
        warmup_cap: plan.warmup_cap,
        count: count.and_then(NonZeroU64::new).or(plan.count),
        share,
    }
}

/// Measure one row in this process.
pub fn measure_row(
    plan: &WorkerPlan,
    session: &Session,
    job: &RowJob,
    progress: &dyn Progress,
) -> Result<ProcessMeasurement> {
    let file = session.file(&job.row)?;
    if let Contract::Program { .. } = file.contract {
        return measure_program(plan, session, file, job, progress);
    }
    if let Some(library) = session.library(&job.row) {
        bail!(
            "an engine library ({}) runs WASI programs only, not `run(count, seed)` workloads",
            library.path.display()
        );
    }
    let (mut instance, instantiate_ms) = session.instance(file, &job.row, progress)?;
    let calibration = &session
        .format_setup(job.row.engine_set, file.format)
        .calibration;
    let schedule = row_schedule(plan, job.count, job.share);
    let measurement = sequence::measure(
        &schedule,
        calibration,
        instance.as_mut(),
        progress,
        &job.row.name,
    )?;
    let fuel_per_op = match job.fuel {
        true => Some(session.fuel_per_op(file, &job.row, measurement.count, progress)?),
        false => None,
    };
    let hardware_counters = match job.counters {
        // Why they did not count crosses to the parent as the row's note.
        true => Some(
            counters::per_op(instance.as_mut(), measurement.count, progress)?
                .map_err(|why| why.to_string()),
        ),
        false => None,
    };
    let start = start::measure(session, file, &job.row, calibration.pause_pair_ns, progress);
    Ok(ProcessMeasurement {
        measurement,
        instantiate_ms,
        fuel_per_op,
        hardware_counters,
        program: None,
        peak_memory_bytes: instance.peak_memory_bytes(),
        peak_rss_bytes: None,
        code_bytes: instance.code_bytes(),
        compile_ms: instance.compile_time().map(|t| t.as_secs_f64() * 1e3),
        start: Some(Box::new(start)),
    })
}

/// Measure a program in this process.
fn measure_program(
    plan: &WorkerPlan,
    session: &Session,
    file: &GuestFile,
    job: &RowJob,
    progress: &dyn Progress,
) -> Result<ProcessMeasurement> {
    // The row's peak resident set is its own, not that of the rows this
    // process measured before it.
    crate::platform::memory::reset_peak();
    let program = session.program(file, &job.row, &plan.grants, progress)?;
    let counters = job.counters.then(|| {
        Err("not counted: they count `run(count, seed)` workloads, not programs".to_string())
    });
    let schedule = (job.share, plan.warmup_cap, session.clock_resolution_ns());
    let seeds = session.seeds;
    program::measure(&program, schedule, seeds, progress, &job.row.name, counters)
}
