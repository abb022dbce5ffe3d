//! V8, through Node.js (`--engine v8`): each instance is a `node` process
//! of its own ([`node`]) running a small worker in JavaScript,
//! started by the measuring thread (so it inherits the thread's core and
//! priority). Node times each call itself with `process.hrtime.bigint()`
//! around `run(count, seed)` and nothing else; the host takes the seed
//! before sending the request. Node times the compile
//! (`new WebAssembly.Module`) and the instantiation too: they are the row's
//! phases. `bench.pause`/`bench.resume` are the script's; WASI preview 1 is
//! Node's `node:wasi` with nothing granted (programs:
//! [`program`]). Components are not run. `--max-memory` and the
//! table limit are V8's own flags, held within a call; the call deadline
//! kills the worker's process group, the `node` process with it.

mod confine;
mod node;
mod program;

use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::guest::limits::Limits;
use crate::guest::runtime::{CompiledProgram, Guest, Implementation, RawSample, Runner, Sampler};
use crate::guest::sandbox;
use crate::guest::seeds::Seeds;
use crate::options::{Grants, Runtime};
use crate::util::bytes::hex;
use node::{COMPILE_DEADLINE, NodeProcess};

/// Node's and V8's versions, or why V8 cannot run here (no `node`, or one
/// that does not answer as Node.js does) with how to fix it.
pub fn found() -> Result<String, String> {
    node::probe()
}

/// Why V8 cannot run here, if it cannot: no `node`, or one that does not
/// answer as Node.js does; with how to fix it.
pub fn missing() -> Option<String> {
    node::probe().err()
}

/// Node's and V8's versions: `node v20.20.2, V8 11.3.244.8-node.33`.
pub fn version() -> Option<String> {
    node::probe().ok()
}

/// V8's line of the registry: core modules, where a working `node` is
/// found.
pub const IMPLEMENTATION: Implementation = Implementation {
    runtime: Runtime::V8,
    runner: |_| Ok(Box::new(V8::new()?)),
    modules_only: true,
    lacks: |_| None,
    refuses: missing,
    version,
};

/// V8 through the `node` found at start.
pub struct V8 {
    node: std::path::PathBuf,
}

impl V8 {
    pub fn new() -> Result<Self> {
        if let Some(why) = missing() {
            bail!("{why}");
        }
        let node = node::node().context("no node")?;
        Ok(V8 { node })
    }
}

impl Runner for V8 {
    fn instantiate(
        &self,
        guest: Guest<'_>,
        export: &str,
        limits: Limits,
        seeds: Seeds,
    ) -> Result<Box<dyn Sampler>> {
        let mut node = NodeProcess::start(&self.node, limits, &[], None)?;
        let answer = node
            .request_within(
                &format!(
                    "load {export} {} {}",
                    limits.max_memory_bytes,
                    hex(guest.bytes)
                ),
                COMPILE_DEADLINE,
            )
            .with_context(|| format!("{}: instantiation failed under v8", guest.path.display()))?;
        let (compile_ns, instantiate_ns) = two_numbers(answer)?;
        node.keep_main_thread();
        Ok(Box::new(NodeWorkload {
            node,
            seeds,
            compile_ns,
            instantiate_ns,
        }))
    }

    fn program(
        &self,
        guest: Guest<'_>,
        grants: &Grants,
        limits: Limits,
    ) -> Result<Box<dyn CompiledProgram>> {
        program::program(&self.node, guest, grants, limits)
    }
}

/// The first two numbers of `answer`.
fn two_numbers(answer: &str) -> Result<(f64, f64)> {
    let mut words = answer.split(' ').map(str::parse::<f64>);
    match (words.next(), words.next()) {
        (Some(Ok(a)), Some(Ok(b))) => Ok((a, b)),
        _ => bail!("node's answer to a load: `{answer}`"),
    }
}

/// One workload instantiated in a `node` process of its own.
struct NodeWorkload {
    node: NodeProcess,
    seeds: Seeds,
    /// V8's compile and instantiation, timed by Node, in ns.
    compile_ns: f64,
    instantiate_ns: f64,
}

impl Sampler for NodeWorkload {
    fn setup(&mut self, size: u64) -> Result<()> {
        self.node
            .request(&format!("setup {size}"))
            .with_context(|| format!("`setup({size})` failed"))?;
        Ok(())
    }

    fn sample(&mut self, count: u64) -> Result<RawSample> {
        use std::fmt::Write as _;
        if sandbox::interrupted() {
            bail!("interrupted");
        }
        let seed = self.seeds.take();
        let _ = write!(self.node.request_line(), "sample {count} {seed}");
        let answer = self.node.exchange().context("`run` failed")?;
        let mut words = answer.split(' ');
        let mut next = |what: &str| -> Result<u64> {
            let word = words
                .next()
                .with_context(|| format!("no {what} in `{answer}`"))?;
            word.parse::<u64>()
                .with_context(|| format!("node's {what} `{word}`"))
        };
        let elapsed = next("time")?;
        let pauses = next("pauses")?;
        let checksum = next("result")?;
        Ok(RawSample {
            elapsed_ns: elapsed as f64,
            pauses,
            checksum: std::hint::black_box(checksum),
        })
    }

    fn restart_seeds(&mut self) {
        self.seeds.restart();
    }

    fn peak_memory_bytes(&mut self) -> Option<u64> {
        let answer = self.node.request("memory").ok()?;
        answer.parse::<u64>().ok()
    }

    fn compile_time(&self) -> Option<Duration> {
        Some(Duration::from_secs_f64(self.compile_ns.max(0.0) / 1e9))
    }

    fn instantiate_time(&self) -> Option<Duration> {
        Some(Duration::from_secs_f64(self.instantiate_ns.max(0.0) / 1e9))
    }
}
