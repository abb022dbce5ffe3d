//! The profiling pass, in a worker: run one row for a while on the
//! profiling engine with wasmtime's `GuestProfiler` sampling its stack
//! ([`crate::guest::runtime::wasmtime::profile`]), and write the profile.
//!
//! A `run(count, seed)` workload is called at a count whose call takes
//! about [`CALL_TIME`], again and again until the duration is spent; a
//! program runs iteration after iteration. The samples of every call go
//! into one profile.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::benchmark::progress::{Call, Progress};
use crate::benchmark::protocol::WorkerPlan;
use crate::benchmark::worker::session::Session;
use crate::guest::Contract;
use crate::guest::load::GuestFile;
use crate::guest::runtime::wasmtime::engine::compile;
use crate::guest::runtime::wasmtime::instance::{Instance, Linkers};
use crate::guest::runtime::wasmtime::profile::{Recording, Ticker};
use crate::guest::runtime::wasmtime::program::{Bracket, Program};
use crate::results::Row;

/// About how long one call of a `run(count, seed)` workload takes while it
/// is profiled.
pub const CALL_TIME: Duration = Duration::from_millis(10);

/// What profiling one row gave: the profile (processed-profile JSON).
pub struct Profiled {
    pub json: Vec<u8>,
}

/// Profile `row` of `guest` for `duration`, sampling every `interval`.
pub fn profile_row(
    plan: &WorkerPlan,
    session: &Session,
    guest: &GuestFile,
    row: &Row,
    duration: Duration,
    interval: Duration,
    progress: &dyn Progress,
) -> Result<Profiled> {
    session.wasmtime_only(row, "profiles")?;
    let engines = &session.sets[row.engine_set].engines;
    let engine = engines.profiling()?;
    let code = compile(&engine, guest.format, &guest.bytes)?;
    let recording = Recording::new(&engine, &row.name, &code, interval)?;
    let started = Instant::now();
    if let Contract::Program { .. } = guest.contract {
        let program = Program::new(&row.path, &code, &plan.grants, session.limits)?;
        let mut arm = Arm(&recording);
        let _ticker = Ticker::start(&engine, interval);
        let mut seeds = session.seeds;
        loop {
            progress.calling(Call::Start);
            program.iterate_with(seeds.take(), &mut arm)?;
            if started.elapsed() >= duration {
                break;
            }
        }
    } else {
        let linkers = Linkers::new(&engine)?;
        progress.calling(Call::Instantiate);
        let mut instance =
            Instance::new(&linkers, &code, &row.export, session.limits, session.seeds)?;
        recording.arm(instance.store_mut());
        let _ticker = Ticker::start(&engine, interval);
        let size = row.size.unwrap_or(0);
        progress.calling(Call::Setup { size });
        instance.setup(size)?;
        // Double the count until one call takes about CALL_TIME.
        let mut count = 1u64;
        loop {
            progress.calling(Call::Run { count });
            let sample = instance.sample(count)?;
            let took = Duration::from_nanos(sample.elapsed_ns as u64);
            if took >= CALL_TIME || count >= 1 << 40 || started.elapsed() >= duration {
                break;
            }
            count *= 2;
        }
        while started.elapsed() < duration {
            progress.calling(Call::Run { count });
            instance.sample(count)?;
        }
    }
    Ok(Profiled {
        json: recording.finish()?,
    })
}

/// The bracket of a profiled program's iterations: it arms every store for
/// the recording, and times nothing.
struct Arm<'a>(&'a Recording);

impl Bracket for Arm<'_> {
    fn prepare_store<T: 'static>(&mut self, store: &mut wasmtime::Store<T>) {
        self.0.arm(store);
    }
}

/// A file name for the profile of `row`: its name with anything but
/// letters, digits, `-`, `_` and `.` turned into `_`.
pub fn file_name(row: &str) -> String {
    let safe: String = row
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{safe}.profile.json")
}

/// Write `profiled` for `row` into `folder`; returns the path.
pub fn write(folder: &Path, row: &str, profiled: &Profiled) -> Result<std::path::PathBuf> {
    std::fs::create_dir_all(folder).with_context(|| format!("creating {}", folder.display()))?;
    let path = folder.join(file_name(row));
    crate::util::fs::write_atomically(&path, &profiled.json)?;
    Ok(path)
}
