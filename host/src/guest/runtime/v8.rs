//! V8, through Node.js (`--engine v8`): each instance is a `node` process
//! running a small worker in JavaScript ([`SCRIPT`], embedded in the host),
//! started by the measuring thread (so it inherits the thread's core and
//! priority) and spoken to over its own pipes, one request per line. Node
//! times each call itself with `process.hrtime.bigint()` around
//! `run(count, seed)` and nothing else; the host takes the seed before
//! sending the request. `bench.pause`/`bench.resume` are the script's;
//! WASI preview 1 is Node's `node:wasi` with nothing granted (programs:
//! [`super::v8_program`]). Components
//! are not run. The memory cap is checked after every call (V8 has no hook
//! on growth); the call deadline kills the worker's process group, the
//! `node` process with it.

use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// The longest answer line read from `node`: an answer is a few numbers.
const MAX_ANSWER_BYTES: usize = 1 << 20;

use anyhow::{Context, Result, anyhow, bail};

use crate::guest::format::Format;
use crate::guest::limits::Limits;
use crate::guest::runtime::{CompiledProgram, Guest, RawSample, Runner, Sampler};
use crate::guest::sandbox;
use crate::guest::seeds::Seeds;
use crate::options::Grants;
use crate::util::bytes::hex;

/// The JavaScript worker.
pub const SCRIPT: &str = include_str!("v8.js");

/// The `node` to run: `$WASM_BENCH_NODE`, else `node` on the `PATH`.
pub fn node() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("WASM_BENCH_NODE") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("node"))
        .find(|candidate| candidate.is_file())
}

/// Why V8 cannot run here, if it cannot: no `node`.
pub fn missing() -> Option<String> {
    match node() {
        Some(_) => None,
        None => Some(
            "--engine v8 needs Node.js (`node` on the PATH, or $WASM_BENCH_NODE): apt-get install nodejs"
                .to_string(),
        ),
    }
}

/// Node's and V8's versions: `node v20.20.2, V8 11.3.244.8-node.33`.
pub fn version() -> Option<String> {
    let output = Command::new(node()?)
        .args(["-p", "`node ${process.version}, V8 ${process.versions.v8}`"])
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    Some(text.trim().to_string()).filter(|v| !v.is_empty())
}

/// V8 through the `node` found at start.
pub struct V8 {
    node: PathBuf,
}

impl V8 {
    pub fn new() -> Result<Self> {
        let node = node().context(
            "--engine v8 needs Node.js (`node` on the PATH, or $WASM_BENCH_NODE): apt-get install nodejs",
        )?;
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
        let mut instance = NodeInstance::start(&self.node, &[], seeds)?;
        instance
            .request(&format!(
                "load {export} {} {}",
                limits.max_memory_bytes,
                hex(guest.bytes)
            ))
            .with_context(|| format!("{}: instantiation failed under v8", guest.path.display()))?;
        Ok(Box::new(instance))
    }

    fn runs(&self, format: Format) -> bool {
        format == Format::Module
    }

    fn program(
        &self,
        guest: Guest<'_>,
        grants: &Grants,
        limits: Limits,
    ) -> Result<Box<dyn CompiledProgram>> {
        super::v8_program::program(&self.node, guest, grants, limits)
    }
}

/// One workload instantiated in a `node` process of its own.
pub(super) struct NodeInstance {
    pub(super) child: Child,
    requests: ChildStdin,
    answers: BufReader<ChildStdout>,
    /// The request being written and the answer read: kept, so that a
    /// sample allocates nothing once they have grown.
    request: String,
    answer: String,
    seeds: Seeds,
}

impl NodeInstance {
    /// Start `node` with the V8 `flags`, its calls seeded from `seeds`.
    pub(super) fn start(node: &Path, flags: &[&str], seeds: Seeds) -> Result<Self> {
        let mut child = Command::new(node)
            .args(["--no-warnings", "--stack-size=900"])
            .args(flags)
            .args(["-e", SCRIPT])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {}", node.display()))?;
        let requests = child.stdin.take().context("node's stdin")?;
        let answers = BufReader::new(child.stdout.take().context("node's stdout")?);
        Ok(NodeInstance {
            child,
            requests,
            answers,
            request: String::new(),
            answer: String::new(),
            seeds,
        })
    }

    /// Send `request` and read its answer: the words after `ok`, or the
    /// script's error.
    pub(super) fn request(&mut self, request: &str) -> Result<&str> {
        self.request.clear();
        self.request.push_str(request);
        self.exchange()
    }

    /// Send [`NodeInstance::request`]'s line and read the answer.
    fn exchange(&mut self) -> Result<&str> {
        self.request.push('\n');
        self.requests
            .write_all(self.request.as_bytes())
            .and_then(|()| self.requests.flush())
            .context("node ended")?;
        let mut line = Vec::new();
        let read = crate::util::stream::read_line(
            &mut self.answers,
            &mut line,
            MAX_ANSWER_BYTES,
            "node's answers",
        )
        .context("node ended")?;
        self.answer = String::from_utf8(line).context("node's answer is not UTF-8")?;
        if !read {
            let status = self.child.wait().ok();
            bail!(
                "node ended ({})",
                status.map_or("?".to_string(), |s| s.to_string())
            );
        }
        let answer = self.answer.trim_end();
        match answer.split_once(' ').unwrap_or((answer, "")) {
            ("ok", rest) => Ok(rest),
            ("err", why) => Err(anyhow!("{why}")),
            _ => bail!("node answered `{answer}`"),
        }
    }
}

impl Sampler for NodeInstance {
    fn setup(&mut self, size: u64) -> Result<()> {
        self.request(&format!("setup {size}"))
            .with_context(|| format!("`setup({size})` failed"))?;
        Ok(())
    }

    fn sample(&mut self, count: u64) -> Result<RawSample> {
        use std::fmt::Write as _;
        if sandbox::interrupted() {
            bail!("interrupted");
        }
        let seed = self.seeds.take();
        self.request.clear();
        let _ = write!(self.request, "sample {count} {seed}");
        let answer = self.exchange().context("`run` failed")?;
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
        let answer = self.request("memory").ok()?;
        answer.parse::<u64>().ok()
    }
}

impl Drop for NodeInstance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
