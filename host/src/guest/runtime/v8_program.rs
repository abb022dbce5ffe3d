//! Programs under V8: the WASI command module compiled once in a `node`
//! process of its own ([`super::v8`]'s script); each iteration a fresh
//! instance with a fresh `node:wasi` context, timed by Node with
//! `process.hrtime.bigint()` (instantiation, the run, and each region
//! between `bench.start` and `bench.end`). The program's folder is
//! preopened as `/` and `.` by `node:wasi`, which cannot make a preopen
//! read-only: under V8 a program could write into its own folder (the
//! expected output is read before the first iteration). Its stdout and
//! stderr go to files in a temporary folder, capped by the `node`
//! process's file-size limit, and are read back bounded. A program given
//! no `--arg` gets its file name as `argv[0]` (see [`V8Command::args`]).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use serde::Deserialize;

use super::v8::NodeInstance;
use super::{CompiledProgram, Guest};
use crate::guest::limits::Limits;
use crate::guest::program::world::{Ended, Ran, Timing};
use crate::guest::program::{CAPTURE_LIMIT, Iteration, World};
use crate::guest::seeds::Seeds;
use crate::options::Grants;
use crate::util::bytes::hex;
use crate::util::fs::{Cap, Links, read_bounded};

/// The V8 flag a program's `node` runs with: node:wasi's functions are
/// called the ordinary way, not as V8's fast API calls. Node 20 lets a
/// garbage collection run inside a fast call (when node:wasi allocates),
/// which finalizes WASI contexts with their locks held and aborts the
/// process (`tests/fixtures/programs/big_writer.wat` aborts at the first or
/// fourth iteration without it). Workloads' `node` keeps fast calls:
/// `process.hrtime.bigint()` is one.
const NO_FAST_CALLS: &str = "--no-turbo-fast-api-calls";

/// A program compiled in a `node` process.
pub struct V8Command {
    node: Mutex<NodeInstance>,
    /// The program's file name, its `argv[0]` when it has no `--arg`.
    name: String,
    world: World,
    /// Where node writes the program's stdout and stderr; removed on drop.
    capture: tempfile::TempDir,
}

/// What Node says of one iteration.
#[derive(Deserialize)]
struct Answer {
    instantiate: u64,
    whole: u64,
    /// `proc_exit`'s code, or 0 when `_start` returned.
    exit: Option<i32>,
    /// The trap or error that ended the run.
    failed: Option<String>,
    regions: Vec<u64>,
    /// Whether a region was left open.
    open: bool,
    /// A protocol error (`bench.end` before `bench.start`).
    error: Option<String>,
}

/// Start `node`, compile `guest` in it, and hold its file writes to the
/// output a program may write.
pub fn program(
    node: &Path,
    guest: Guest<'_>,
    grants: &Grants,
    limits: Limits,
) -> Result<Box<dyn CompiledProgram>> {
    let mut instance = NodeInstance::start(node, &[NO_FAST_CALLS], Seeds::same(0))?;
    limit_file_size(instance.child.id(), CAPTURE_LIMIT as u64)?;
    let imports_end = instance
        .request(&format!(
            "program {} {}",
            limits.max_memory_bytes,
            hex(guest.bytes)
        ))
        .with_context(|| format!("{}: V8 does not compile it", guest.path.display()))?
        == "1";
    Ok(Box::new(V8Command {
        node: Mutex::new(instance),
        name: guest
            .path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        world: World::new(guest.path, grants, imports_end)?,
        capture: tempfile::Builder::new()
            .prefix("wasm-bench-v8-")
            .tempdir()
            .context("making a folder for the program's output")?,
    }))
}

/// Hold the files process `pid` writes to `bytes` each (`RLIMIT_FSIZE`: a
/// write past it fails, and the process is sent `SIGXFSZ`).
fn limit_file_size(pid: u32, bytes: u64) -> Result<()> {
    let limit = libc::rlimit {
        rlim_cur: bytes,
        rlim_max: bytes,
    };
    // SAFETY: `limit` is a valid rlimit, and no old limit is asked for.
    let done = unsafe {
        libc::prlimit(
            pid as libc::pid_t,
            libc::RLIMIT_FSIZE,
            &limit,
            std::ptr::null_mut(),
        )
    };
    if done != 0 {
        return Err(std::io::Error::last_os_error()).context("limiting node's file sizes");
    }
    Ok(())
}

impl V8Command {
    fn output(&self, stream: &str) -> PathBuf {
        self.capture.path().join(stream)
    }

    /// The request of one iteration: what the guest is granted.
    fn request(&self) -> Result<String> {
        let world = &self.world;
        let text = |p: &Path| p.to_str().map(str::to_string);
        let folder = text(world.folder()).context("the program's folder is not UTF-8")?;
        let dirs: Vec<(String, String)> = world
            .grants()
            .dirs
            .iter()
            .map(|(host, guest)| Some((text(host)?, guest.clone())))
            .collect::<Option<_>>()
            .context("a --dir is not UTF-8")?;
        let request = serde_json::json!({
            "folder": folder,
            "root": world.folder_is_root(),
            "dirs": dirs,
            "args": self.args(),
            "env": world.env(),
            "stdout": text(&self.output("stdout")),
            "stderr": text(&self.output("stderr")),
        });
        Ok(format!("iterate {request}"))
    }

    /// The program's arguments: the `--arg` grants; with none, its file
    /// name alone, because `node:wasi` cannot start a program with no
    /// arguments at all (a wasi-libc of wasi-sdk 19, as Sightglass's bz2
    /// was built with, exits with code 71 when `argc` is 0).
    fn args(&self) -> Vec<String> {
        match self.world.grants().args.is_empty() {
            true => vec![self.name.clone()],
            false => self.world.grants().args.clone(),
        }
    }

    /// What node wrote for the program to `stream`, read back bounded.
    fn read(&self, stream: &str) -> Result<Vec<u8>> {
        let cap = Cap {
            bytes: CAPTURE_LIMIT as u64,
            name: "the output a program may write,",
        };
        read_bounded(&self.output(stream), cap, Links::Refuse)
    }
}

impl CompiledProgram for V8Command {
    fn iterate(&self) -> Result<Iteration> {
        let request = self.request()?;
        let mut node = self.node.lock().unwrap_or_else(PoisonError::into_inner);
        let answer: Answer = serde_json::from_str(node.request(&request)?)
            .context("node's answer to an iteration")?;
        drop(node);
        let mut timing = Timing::from_regions(&answer.regions, answer.open);
        if answer.error.is_some() {
            timing.fail("bench.end called before bench.start");
        }
        let ended = match (answer.failed, answer.exit) {
            (Some(why), _) => Ended::Failed(anyhow!("{why}").context("`_start` failed")),
            (None, Some(code)) if code != 0 => Ended::Exited(code),
            (None, _) => Ended::Returned,
        };
        let ran = Ran {
            instantiate: Duration::from_nanos(answer.instantiate),
            whole: Duration::from_nanos(answer.whole),
            ended,
            timing,
        };
        self.world
            .finish(ran, &self.read("stdout")?, &self.read("stderr")?, true)
    }

    /// The `node` process's peak resident memory.
    fn peak_rss_bytes(&self) -> Option<u64> {
        let node = self.node.lock().unwrap_or_else(PoisonError::into_inner);
        crate::platform::memory::peak_rss_bytes(Some(node.child.id()))
    }
}
