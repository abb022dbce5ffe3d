//! The programs check: the execute time `host run` reports for a program
//! against an uninstrumented timing of the same `_start` in fresh reference
//! processes of this binary, and the reference process itself.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde::Serialize;

use crate::analysis::stats;
use crate::cli::ReferenceArgs;
use crate::command::selftest::runs::*;
use crate::output::units::format_ns;

/// A program's execute time under `host run` against an uninstrumented
/// timing in reference processes.
#[derive(Debug, Serialize)]
pub(super) struct ProgramAgreement {
    program: String,
    /// The harness's compiled code is byte for byte that of an engine of
    /// wasmtime's defaults.
    identical_code: bool,
    host_run_medians_ns: Vec<f64>,
    /// Per round, the median of the reference processes' medians.
    reference_medians_ns: Vec<f64>,
    /// Median of `host run` over median of the reference.
    ratio: f64,
    /// Median over the rounds of each round's `host run` over the reference:
    /// neighbours in time, so slow swings of the machine cancel.
    ratio_of_neighbours: f64,
}

/// Rounds of the program agreement: `host run`, then reference processes.
pub(super) const AGREEMENT_ROUNDS: usize = 10;
/// Fresh reference processes per round, as a run has worker processes: a
/// process's code lands where it lands, and some programs run at a speed
/// that differs from process to process.
pub(super) const REFERENCE_PROCESSES: usize = 5;

/// What a reference process prints.
#[derive(Debug, Serialize, serde::Deserialize)]
pub(super) struct ReferenceTiming {
    /// The median execute time of the iterations it timed.
    execute_ns: f64,
    /// Its code is byte for byte what the harness's engine compiles.
    identical_code: bool,
    text_bytes: usize,
}

pub(super) fn program_agreement(path: &Path) -> Result<ProgramAgreement> {
    println!(
        "programs: {} under `host run` against the same _start timed in fresh processes on an engine of wasmtime's defaults ({AGREEMENT_ROUNDS} alternating rounds of one run and {REFERENCE_PROCESSES} processes)",
        path.display()
    );
    let mut host_run = Vec::new();
    let mut reference = Vec::new();
    let mut identical_code = true;
    for round in 0..AGREEMENT_ROUNDS {
        // One seed, the reference's: a program that draws random numbers
        // runs on the same ones on both sides.
        let seeded = ["--seed", "0", "--same-seed"];
        let row = result_row(&run_host(&["run"], &[path], &seeded)?)?;
        host_run.push(execute_median(&row)?);
        // As many iterations as the run timed, so that both sides span
        // about as much of the machine's time.
        let iterations = (row.counts.samples / REFERENCE_PROCESSES).max(10);
        let mut processes = Vec::new();
        for _ in 0..REFERENCE_PROCESSES {
            let timing = run_reference(path, iterations)?;
            if round == 0 && processes.is_empty() {
                println!(
                    "  compiled code of the harness's engine and of wasmtime's defaults: {} ({} bytes of .text)",
                    if timing.identical_code {
                        "identical"
                    } else {
                        "DIFFERENT"
                    },
                    timing.text_bytes
                );
            }
            identical_code &= timing.identical_code;
            processes.push(timing.execute_ns);
        }
        reference.push(stats::median(&processes));
    }
    let ratio = stats::median(&host_run) / stats::median(&reference);
    let neighbours: Vec<f64> = host_run
        .iter()
        .zip(&reference)
        .map(|(h, p)| h / p)
        .collect();
    let ratio_of_neighbours = stats::median(&neighbours);
    for (h, p) in host_run.iter().zip(&reference) {
        println!("  host run {} · reference {}", format_ns(*h), format_ns(*p));
    }
    println!(
        "  median: host run {} · reference {} · ratio {ratio:.4}; median of each round's ratio {ratio_of_neighbours:.4} (goal: within 1%)",
        format_ns(stats::median(&host_run)),
        format_ns(stats::median(&reference))
    );
    Ok(ProgramAgreement {
        program: path.display().to_string(),
        identical_code,
        host_run_medians_ns: host_run,
        reference_medians_ns: reference,
        ratio,
        ratio_of_neighbours,
    })
}

/// Time `path` in a fresh reference process of this binary.
pub(super) fn run_reference(path: &Path, iterations: usize) -> Result<ReferenceTiming> {
    let exe = std::env::current_exe().context("locating the host binary")?;
    let output = Command::new(exe)
        .arg("selftest-reference")
        .arg(path)
        .args(["--iterations", &iterations.to_string()])
        .output()
        .context("starting a reference process")?;
    if !output.status.success() {
        bail!(
            "a reference process failed: {}",
            String::from_utf8_lossy(&output.stderr)
                .lines()
                .last()
                .unwrap_or("")
        );
    }
    serde_json::from_slice(&output.stdout).context("reading a reference process's timing")
}

/// A reference process of the program check: time `_start` between
/// `bench.start` and `bench.end` on an engine of wasmtime's defaults (no
/// epoch checks, no fuel, nothing of the harness), on a measuring thread
/// prepared as a worker's is, and print the median as JSON.
pub fn reference(args: &ReferenceArgs) -> Result<()> {
    use crate::guest::format::Code;
    use crate::guest::limits::Limits;
    use crate::guest::runtime::wasmtime::engine::Engines;
    use crate::guest::runtime::wasmtime::program::Program;
    use crate::options::{EngineConfig, Grants, PinRequest, PriorityRequest};

    let engine = wasmtime::Engine::new(&wasmtime::Config::new())
        .map_err(anyhow::Error::from)
        .context("creating a default engine")?;
    let bytes = crate::guest::load::read_binary(&args.file, u64::MAX)?;
    let module = wasmtime::Module::new(&engine, &bytes)
        .map_err(anyhow::Error::from)
        .context("compiling the program")?;
    // The code the harness times, compiled by its own engine: the same
    // machine code, byte for byte, when nothing of the harness is in it.
    let ours = Engines::new(EngineConfig::default(), None)?;
    let timed = wasmtime::Module::new(&ours.fast, &bytes)
        .map_err(anyhow::Error::from)
        .context("compiling the program")?;
    let identical_code = timed.text() == module.text();
    let text_bytes = module.text().len();
    let program = Program::new(
        &args.file,
        &Code::Module(module),
        &Grants::default(),
        Limits {
            max_memory_bytes: 1 << 30,
            huge_pages: false,
        },
    )?;
    crate::platform::thread::prepare_measuring_thread(PinRequest::Quietest, PriorityRequest::Nice);
    // Seeded as the host's row is with `--seed 0 --same-seed`.
    program.iterate(0)?;
    let mut times = Vec::with_capacity(args.iterations);
    for _ in 0..args.iterations {
        times.extend(program.iterate(0)?.execute_ns);
    }
    let timing = ReferenceTiming {
        execute_ns: stats::median(&times),
        identical_code,
        text_bytes,
    };
    serde_json::to_writer(std::io::stdout().lock(), &timing).context("writing the reference timing")
}
