//! Programs under V8: the WASI command module compiled once in a `node`
//! process of its own ([`super::node`]); each iteration a fresh instance
//! with a fresh `node:wasi` context, timed by Node with
//! `process.hrtime.bigint()` (the compile, each instantiation, the run,
//! and each region between `bench.start` and `bench.end`), with V8's
//! garbage collected before it (so that what earlier instances left is not
//! collected during the run). `node:wasi` is no sandbox: the program gets
//! a private copy of its folder ([`super::confine`]), preopened as `/`
//! and `.`, which goes with the row, and `node` is confined by Landlock
//! where the kernel has it (the copy read-only). Its stdout and stderr go
//! to files in the scratch folder, capped by the `node` process's
//! file-size limit, and are read back bounded. A program given no `--arg`
//! gets its file name as `argv[0]` (see [`V8Command::args`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use serde::Deserialize;

use super::confine::{Confinement, Scratch, WRITE_LIMIT, over_limit};
use super::node::{COMPILE_DEADLINE, NodeProcess};
use crate::guest::limits::Limits;
use crate::guest::program::world::{Ended, Ran, Timing};
use crate::guest::program::{CAPTURE_LIMIT, Iteration, World};
use crate::guest::runtime::{CompiledProgram, Guest};
use crate::options::Grants;
use crate::platform::processes::end_tree;
use crate::util::bytes::hex;
use crate::util::fs::{Cap, Links, read_bounded};

/// The V8 flags a program's `node` runs with: node:wasi's functions are
/// called the ordinary way, not as V8's fast API calls (Node 20 lets a
/// garbage collection run inside a fast call, when node:wasi allocates,
/// which finalizes WASI contexts with their locks held and aborts the
/// process: `tests/fixtures/programs/big_writer.wat` aborts at the first
/// or fourth iteration without it); and `gc()` is there for the script to
/// collect between iterations. Workloads' `node` keeps fast calls:
/// `process.hrtime.bigint()` is one.
const FLAGS: [&str; 2] = ["--no-turbo-fast-api-calls", "--expose-gc"];
/// How often the scratch folder's size is looked at during an iteration
/// where Landlock does not make it read-only.
const WATCH: Duration = Duration::from_millis(20);

/// A program compiled in a `node` process.
pub struct V8Command {
    node: Mutex<NodeProcess>,
    /// The program's file name, its `argv[0]` when it has no `--arg`.
    name: String,
    world: World,
    /// The copy of its folder, where its output goes too; removed on drop
    /// (after `node`, dropped first).
    scratch: Scratch,
    /// Whether Landlock confines `node` (else its writes are watched).
    confined: bool,
    /// V8's compile of the module, timed by Node, in ns.
    compile_ns: f64,
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

/// Copy the program's folder, start `node` confined to the copy, compile
/// `guest` in it, and hold its file writes to the output a program may
/// write.
pub fn program(
    node: &Path,
    guest: Guest<'_>,
    grants: &Grants,
    limits: Limits,
) -> Result<Box<dyn CompiledProgram>> {
    let world = World::new(guest.path, grants, false)?;
    let scratch = Scratch::new(world.folder())?;
    let dirs: Vec<&Path> = grants.dirs.iter().map(|(host, _)| host.as_path()).collect();
    let output = scratch.output_folder();
    let writable: Vec<&Path> = [output.as_path()].into_iter().chain(dirs).collect();
    let folder = scratch.folder();
    let confinement = Confinement::new(node, &[folder.as_path()], &writable)?;
    let mut process = NodeProcess::start(node, limits, &FLAGS, Some(&confinement))?;
    limit_file_size(process.id(), CAPTURE_LIMIT as u64)?;
    let answer = process
        .request_within(
            &format!("program {} {}", limits.max_memory_bytes, hex(guest.bytes)),
            COMPILE_DEADLINE,
        )
        .with_context(|| format!("{}: V8 does not compile it", guest.path.display()))?;
    let (imports_end, compile_ns) = match answer.split_once(' ') {
        Some((end, ns)) => (end == "1", ns.parse::<f64>().unwrap_or(0.0)),
        None => bail!("node's answer to a compile: `{answer}`"),
    };
    process.keep_main_thread();
    Ok(Box::new(V8Command {
        node: Mutex::new(process),
        name: guest
            .path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        world: World::new(guest.path, grants, imports_end)?,
        scratch,
        confined: confinement.active(),
        compile_ns,
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
        self.scratch.output_folder().join(stream)
    }

    /// The request of one iteration: what the guest is granted (its clocks
    /// among it), and the seed of its random numbers (as text: JSON numbers
    /// are doubles).
    fn request(&self, seed: u64) -> Result<String> {
        let world = &self.world;
        let text = |p: &Path| p.to_str().map(str::to_string);
        let folder = text(&self.scratch.folder()).context("the scratch folder is not UTF-8")?;
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
            "seed": seed.to_string(),
            "real_clock": world.grants().real_clock,
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

    /// Node's answer to `request`, an iteration; where Landlock does not
    /// make the folder read-only, `node` is killed as soon as the program
    /// has written more than [`WRITE_LIMIT`] into it.
    fn answer(&self, node: &mut NodeProcess, request: &str) -> Result<Answer> {
        if self.confined {
            return serde_json::from_str(node.request(request)?)
                .context("node's answer to an iteration");
        }
        let pid = node.id();
        let done = AtomicBool::new(false);
        let overflow = std::thread::scope(|scope| {
            let watcher = scope.spawn(|| {
                while !done.load(Ordering::Relaxed) {
                    let written = self.scratch.written_bytes();
                    if written > WRITE_LIMIT {
                        end_tree(pid);
                        return Some(written);
                    }
                    std::thread::sleep(WATCH);
                }
                None
            });
            let answer = node.request(request).map(str::to_string);
            done.store(true, Ordering::Relaxed);
            (answer, watcher.join().ok().flatten())
        });
        match overflow {
            (_, Some(written)) => bail!("{}", over_limit(written)),
            (answer, None) => {
                serde_json::from_str(&answer?).context("node's answer to an iteration")
            }
        }
    }
}

impl CompiledProgram for V8Command {
    fn iterate(&self, seed: u64) -> Result<Iteration> {
        let request = self.request(seed)?;
        let mut node = self.node.lock().unwrap_or_else(PoisonError::into_inner);
        let answer = self.answer(&mut node, &request)?;
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
        crate::platform::memory::peak_rss_bytes(Some(node.id()))
    }

    fn compile_time(&self) -> Option<Duration> {
        Some(Duration::from_secs_f64(self.compile_ns.max(0.0) / 1e9))
    }

    fn tiers_up(&self) -> bool {
        true
    }
}
