//! `host selftest`: measure the harness itself.
//!
//! Every timing figure comes from separate `host run` / `host compare`
//! processes of this very binary, as a user would run them:
//! - repeatability: the median of xor over several separate runs, their
//!   spread, whether each run's 95% interval holds the median of all runs,
//!   and the wall time to a result;
//! - count independence: per-op time at counts 10^3 to 10^7, for xor (in
//!   rounds of every count, so that drift falls on all alike, all on one
//!   core) and for the empty guest (whose per-op time should be 0); a
//!   data-dependent search at counts 10^3 to 10^6, with a fresh and with a
//!   replayed input;
//! - components: the empty component (0 per op) and xor as a component
//!   against xor as a core module;
//! - verdicts: A against A, mod13 against mod16, chain100 against chain101
//!   (a real 1% difference);
//! - intervals: over many separate runs of xor, xor as a component and a
//!   program, how many 95% intervals hold the median of all the runs'
//!   medians, and their half-widths against the runs' spread;
//! - history: the change points of `host history` on synthetic series of
//!   the run-to-run noise measured on two machine classes ([`history`]);
//! - gate (only when asked for by `--only gate`): the regression gate's
//!   false-alarm rate and the smallest slow-down it catches nine times in
//!   ten, from A/A runs kept here ([`gate`]);
//! - scheduler: a synthetic suite compared unhurried and under a quarter
//!   of that time (`--suite-time`): the time each took and how many
//!   verdicts agree ([`scheduler`]);
//! - machine: what interrupts each core, as a thread spinning on it sees it
//!   ([`crate::platform::gaps`]), and the spread of xor's samples in one run
//!   at a short and at a long count;
//! - programs: the execute time `host run` reports for a call-heavy and a
//!   loop-heavy program against an uninstrumented timing of the same
//!   `_start` in fresh reference processes of this binary, each timing in
//!   itself on an engine of wasmtime's defaults ([`reference()`]).
//!
//! Apart from the reference timing and the watch of the cores, this module
//! only drives runs and prints what they reported, read back into the
//! report types of [`crate::results`].
//!
//! Here: the report, the order of the checks, and running this binary; one
//! file per check beside it.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use serde::Serialize;

use crate::cli::{SelftestArgs, SelftestSection};
use crate::options::Output;
use crate::output::export::write_json;

mod components;
mod counts;
mod gate;
mod history;
mod inputs;
mod intervals;
mod machine;
mod programs;
mod repeatability;
mod runs;
mod scheduler;
mod verdicts;

use components::{Components, components};
use counts::{CountFigures, count_independence};
use inputs::{InputFigures, fresh_inputs};
use intervals::{IntervalFit, intervals};
use machine::{Machine, machine};
pub use programs::reference;
use programs::{ProgramAgreement, program_agreement};
use repeatability::{Repeatability, repeatability};
use verdicts::{FamilyTally, Spinner, VerdictTally, family, verdicts, verdicts_with};

#[derive(Debug, Default, Serialize)]
struct SelftestReport {
    repeatability: Option<Repeatability>,
    counts: Vec<CountFigures>,
    inputs: Vec<InputFigures>,
    components: Option<Components>,
    verdicts: Vec<VerdictTally>,
    intervals: Vec<IntervalFit>,
    programs: Vec<ProgramAgreement>,
    family: Option<FamilyTally>,
    machine: Option<Machine>,
    history: Vec<history::Cell>,
    scheduler: Option<scheduler::SchedulerFigures>,
    gate: Option<crate::analysis::gate::GateCheck>,
}

pub fn selftest(args: &SelftestArgs) -> Result<()> {
    let file = |name: &str| workload(&args.workloads, name);
    if args.runs < 2 {
        bail!("--runs must be at least 2");
    }
    let wanted = |section| wanted(args, section);
    let mut report = SelftestReport::default();
    if wanted(SelftestSection::Repeatability) {
        report.repeatability = Some(repeatability(&file("xor.wasm")?, args.runs)?);
    }
    if wanted(SelftestSection::Counts) {
        report.counts = count_independence(&file("xor.wasm")?, &file("empty.wasm")?)?;
        report.inputs = fresh_inputs(&file("search-branchy.wasm")?)?;
    }
    if wanted(SelftestSection::Components) {
        report.components = Some(components(
            &file("empty-component.wasm")?,
            &file("xor.wasm")?,
            &file("xor-component.wasm")?,
        )?);
    }
    verdict_sections(args, &mut report)?;
    if wanted(SelftestSection::Intervals) {
        for name in ["xor.wasm", "xor-component.wasm", "loop.wasm"] {
            report
                .intervals
                .push(intervals(&file(name)?, args.same_runs)?);
        }
    }
    if wanted(SelftestSection::Family) {
        report.family = Some(family(
            &[
                &file("xor.wasm")?,
                &file("mod13.wasm")?,
                &file("mod16.wasm")?,
                &file("xor.wasm")?,
            ],
            10,
        )?);
    }
    if wanted(SelftestSection::History) {
        report.history = history::history();
    }
    if args.only.contains(&SelftestSection::Gate) {
        report.gate = Some(gate::gate(
            &file("xor.wasm")?,
            &file("chain100.wasm")?,
            &file("chain101.wasm")?,
            args.same_runs,
            0.0,
        )?);
    }
    if wanted(SelftestSection::Scheduler) {
        report.scheduler = Some(scheduler::scheduler(&args.workloads)?);
    }
    if wanted(SelftestSection::Machine) {
        report.machine = Some(machine(&file("xor.wasm")?)?);
    }
    if wanted(SelftestSection::Programs) {
        for name in ["fib.wasm", "loop.wasm"] {
            report.programs.push(program_agreement(&file(name)?)?);
        }
    }
    if let Some(path) = &args.export_json {
        let output = match path.as_os_str() == "-" {
            true => Output::Stdout,
            false => Output::File(path.clone()),
        };
        write_json(&report, &output)?;
    }
    Ok(())
}

/// Whether `section` runs: every section when none was named.
fn wanted(args: &SelftestArgs, section: SelftestSection) -> bool {
    args.only.is_empty() || args.only.contains(&section)
}

/// The bundled workload `name` in `dir`, which must exist.
fn workload(dir: &Path, name: &str) -> Result<PathBuf> {
    let path = dir.join(name);
    match path.is_file() {
        true => Ok(path),
        false => bail!(
            "{}: no such workload file (see --workloads)",
            path.display()
        ),
    }
}

/// The sections of `host compare` verdicts: A against A and known steps,
/// the small steps, and a step beside a busy loop.
fn verdict_sections(args: &SelftestArgs, report: &mut SelftestReport) -> Result<()> {
    let file = |name: &str| workload(&args.workloads, name);
    if wanted(args, SelftestSection::Verdicts) {
        let xor = file("xor.wasm")?;
        report
            .verdicts
            .push(verdicts("xor vs xor", &xor, &xor, args.same_runs)?);
        report.verdicts.push(verdicts(
            "mod13 vs mod16",
            &file("mod13.wasm")?,
            &file("mod16.wasm")?,
            5,
        )?);
        report.verdicts.push(verdicts(
            "chain100 vs chain101",
            &file("chain100.wasm")?,
            &file("chain101.wasm")?,
            args.same_runs,
        )?);
    }
    if wanted(args, SelftestSection::Small) {
        let small = [
            (
                "chain200",
                "chain201",
                "0.5%",
                ["--noise", "0.5", "--time", "3s"],
            ),
            (
                "chain400",
                "chain401",
                "0.25%",
                ["--noise", "0.25", "--time", "10s"],
            ),
        ];
        for (a, b, step, flags) in small {
            report.verdicts.push(verdicts_with(
                &format!("{a} vs {b} ({step})"),
                &file(&format!("{a}.wasm"))?,
                &file(&format!("{b}.wasm"))?,
                10,
                &flags,
            )?);
        }
    }
    if wanted(args, SelftestSection::Busy) {
        let _spinner = Spinner::start()?;
        report.verdicts.push(verdicts(
            "chain100 vs chain101, a busy loop on the last core",
            &file("chain100.wasm")?,
            &file("chain101.wasm")?,
            10,
        )?);
    }
    Ok(())
}
