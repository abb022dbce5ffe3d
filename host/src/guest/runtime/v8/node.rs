//! The `node` process V8 runs in, for one workload or one program: which
//! `node` ([`super::node`], checked once by [`probe`]), started with the V8 flags
//! that hold `--max-memory` and the table limit within a call
//! (`--wasm-max-mem-pages`, `--wasm-max-table-size`), in the worker's
//! process group (so that the parent's kill at the call deadline ends it
//! and anything it started), dying with the thread that started it, and,
//! where a [`Confinement`] is given, confined by Landlock before it runs.
//! Its helper threads run on every core, its main thread on the measuring
//! core ([`NodeProcess::keep_main_thread`]).
//! It is spoken to over its own pipes, one request per line
//! ([`NodeProcess::request`]); a request that is no guest call (a compile)
//! has a deadline of its own ([`NodeProcess::request_within`]), since it
//! may come before the parent watches a call. Dropped, the process and
//! every process it started are killed.

use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};

use super::confine::Confinement;
use crate::guest::limits::Limits;
use crate::platform::affinity::{allow_every_core, keep_thread_to};
use crate::platform::cpu::thread_affinity;
use crate::platform::processes::{end_tree, within};

/// The JavaScript worker.
pub const SCRIPT: &str = include_str!("v8.js");

/// The longest answer line read from `node`: an answer is a few numbers,
/// or an iteration's JSON.
const MAX_ANSWER_BYTES: usize = 1 << 20;
/// How long `node` has to print its version when [`probe`]d.
const PROBE_DEADLINE: Duration = Duration::from_secs(10);
/// How long `node` has to compile and instantiate a guest: the answer to
/// a request that is no guest call.
pub const COMPILE_DEADLINE: Duration = Duration::from_secs(60);
/// The most table elements V8 allows (its own `--wasm-max-table-size`
/// default): the table limit is never raised above it.
const V8_MAX_TABLE: u64 = 10_000_000;
/// The bytes of one wasm page.
const PAGE_BYTES: u64 = 64 << 10;

/// How to get a `node` that works, said after every reason it does not.
const HOW_TO_FIX: &str = "install Node.js 18 or later (apt-get install nodejs) and put `node` on the PATH, or set $WASM_BENCH_NODE to its path";

/// The `node` to run: `$WASM_BENCH_NODE`, else `node` on the `PATH`.
pub fn node() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("WASM_BENCH_NODE") {
        return Some(PathBuf::from(path));
    }
    crate::platform::processes::on_path("node")
}

/// Node's and V8's versions (`node v20.20.2, V8 11.3.244.8-node.33`), or
/// why V8 cannot run here with a line that says how to fix it: `node`
/// missing, not starting, not answering within [`PROBE_DEADLINE`], or
/// answering what Node.js does not. Asked once per process.
pub fn probe() -> Result<String, String> {
    static PROBED: OnceLock<Result<String, String>> = OnceLock::new();
    PROBED.get_or_init(ask_version).clone()
}

/// [`probe`], asked.
fn ask_version() -> Result<String, String> {
    let Some(node) = node() else {
        return Err(format!("--engine v8 needs Node.js: {HOW_TO_FIX}"));
    };
    let shown = node.display();
    let broken = |why: String| format!("--engine v8: {shown} {why}: {HOW_TO_FIX}");
    let mut command = Command::new(&node);
    command
        .args(["-p", "`node ${process.version}, V8 ${process.versions.v8}`"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    let mut child = command
        .spawn()
        .map_err(|e| broken(format!("does not start ({e})")))?;
    let stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        stdout.map_or_else(Vec::new, |out| crate::util::stream::read_head(out, 4096))
    });
    let status = wait_within(&mut child, PROBE_DEADLINE);
    // Whatever it left behind goes with it, and its stdout closes.
    kill_group(child.id());
    let _ = child.kill();
    let _ = child.wait();
    let text = reader.join().unwrap_or_default();
    let text = String::from_utf8_lossy(&text).trim().to_string();
    match status {
        None => Err(broken(format!(
            "did not answer within {}: killed",
            humantime::format_duration(PROBE_DEADLINE)
        ))),
        Some(s) if !s.success() => Err(broken(format!("failed ({s})"))),
        Some(_) if text.starts_with("node v") && text.contains(", V8 ") && text.len() < 200 => {
            Ok(text)
        }
        Some(_) => Err(broken(
            "does not answer as Node.js does (it printed no `node vX, V8 Y`)".to_string(),
        )),
    }
}

/// `child`'s exit status, waited for at most `deadline`.
fn wait_within(child: &mut Child, deadline: Duration) -> Option<std::process::ExitStatus> {
    let since = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if since.elapsed() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => return None,
        }
    }
}

/// SIGKILL to the process group `pid` leads.
fn kill_group(pid: u32) {
    if let Ok(group) = libc::pid_t::try_from(pid) {
        // SAFETY: kill has no memory preconditions.
        unsafe { libc::kill(-group, libc::SIGKILL) };
    }
}

/// The V8 flags that hold `limits` within a call: the pages of one memory
/// and the elements of one table (V8 runs modules of one memory).
fn limit_flags(limits: Limits) -> [String; 2] {
    [
        format!(
            "--wasm-max-mem-pages={}",
            limits.max_memory_bytes / PAGE_BYTES
        ),
        format!(
            "--wasm-max-table-size={}",
            limits.max_table_elements().min(V8_MAX_TABLE)
        ),
    ]
}

/// A `node` process running [`SCRIPT`].
pub struct NodeProcess {
    child: Child,
    requests: ChildStdin,
    answers: BufReader<ChildStdout>,
    /// The request being written and the answer read: kept, so that a
    /// sample allocates nothing once they have grown.
    request: String,
    answer: String,
    /// The cores of the thread that started it (the measuring core, when
    /// pinned), which its main thread is kept to once it has made its
    /// helper threads: see [`NodeProcess::keep_main_thread`].
    measuring_cores: Option<Vec<usize>>,
}

impl NodeProcess {
    /// Start `node` under `limits` with the further V8 `flags`, confined
    /// by `confinement` where given.
    pub fn start(
        node: &Path,
        limits: Limits,
        flags: &[&str],
        confinement: Option<&Confinement>,
    ) -> Result<Self> {
        let mut command = Command::new(node);
        command
            .args(["--no-warnings", "--stack-size=900"])
            .args(limit_flags(limits))
            .args(flags)
            .args(["-e", SCRIPT])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        arm(&mut command, confinement);
        let mut child = command
            .spawn()
            .with_context(|| format!("starting {}", node.display()))?;
        let requests = child.stdin.take().context("node's stdin")?;
        let answers = BufReader::new(child.stdout.take().context("node's stdout")?);
        Ok(NodeProcess {
            child,
            requests,
            answers,
            request: String::new(),
            answer: String::new(),
            measuring_cores: thread_affinity(),
        })
    }

    /// Keep `node`'s main thread, which runs the guest and reads its
    /// clock, to the cores of the thread that started it (the measuring
    /// core), once it has answered a first request: by then V8 has made
    /// its helper threads (compile, garbage collection), which keep every
    /// core, so that tiering up and collecting do not take the guest's
    /// core, as nothing else does under wasmtime. A refusal leaves the
    /// main thread on every core.
    pub fn keep_main_thread(&self) {
        if let Some(cores) = &self.measuring_cores {
            let _ = keep_thread_to(self.child.id(), cores);
        }
    }

    /// The process's id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Send `request` and read its answer: the words after `ok`, or the
    /// script's error. A guest call: the parent holds it to `--timeout`.
    pub fn request(&mut self, request: &str) -> Result<&str> {
        self.request.clear();
        self.request.push_str(request);
        self.exchange()
    }

    /// The request line being built, cleared: a sample writes its request
    /// here, then calls [`NodeProcess::exchange`].
    pub fn request_line(&mut self) -> &mut String {
        self.request.clear();
        &mut self.request
    }

    /// [`NodeProcess::request`], the process killed (with what it started)
    /// when it has not answered within `deadline`: a compile, which the
    /// worker may ask before the parent watches its calls.
    pub fn request_within(&mut self, request: &str, deadline: Duration) -> Result<&str> {
        let pid = self.child.id();
        self.request.clear();
        self.request.push_str(request);
        let (answered, late) = within(
            deadline,
            move || end_tree(pid),
            || self.exchange().map(|_| ()),
        );
        if late {
            bail!(
                "node did not answer within {}: killed",
                humantime::format_duration(deadline)
            );
        }
        answered?;
        Ok(self.last_answer())
    }

    /// The words after `ok` of the last answer.
    fn last_answer(&self) -> &str {
        let answer = self.answer.trim_end();
        answer.split_once(' ').map_or("", |(_, rest)| rest)
    }

    /// Send the request line and read the answer.
    pub fn exchange(&mut self) -> Result<&str> {
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
        if !read {
            let status = self.child.wait().ok();
            bail!(
                "node ended ({})",
                status.map_or("?".to_string(), |s| s.to_string())
            );
        }
        self.answer = String::from_utf8(line).context("node's answer is not UTF-8")?;
        let answer = self.answer.trim_end();
        match answer.split_once(' ').unwrap_or((answer, "")) {
            ("ok", rest) => Ok(rest),
            ("err", why) => Err(anyhow!("{why}")),
            _ => bail!(
                "node answered what its script never says (`{}`)",
                answer.chars().take(60).collect::<String>()
            ),
        }
    }
}

impl Drop for NodeProcess {
    fn drop(&mut self) {
        end_tree(self.child.id());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Arm the process `command` starts: it gets SIGKILL when the thread that
/// started it ends (the measuring thread: the worker's end), it is
/// confined by `confinement`, and it may run on every core. It stays in the worker's process group,
/// which the parent kills whole at a call's deadline.
fn arm(command: &mut Command, confinement: Option<&Confinement>) {
    use std::os::unix::process::CommandExt;
    let ruleset = confinement.and_then(Confinement::ruleset_fd);
    let parent = libc::pid_t::try_from(std::process::id()).unwrap_or(0);
    let arm = move || {
        // SAFETY: prctl, getppid and the Landlock system calls are
        // async-signal-safe and touch no memory of the process.
        unsafe {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
        }
        if let Some(fd) = ruleset {
            super::confine::restrict_self(fd)?;
        }
        // node's helper threads inherit every core, not the measuring
        // core; a refusal only leaves them there.
        let _ = allow_every_core();
        Ok(())
    };
    // SAFETY: the closure calls only async-signal-safe functions and
    // allocates nothing (an error of a raw code is no allocation).
    unsafe { command.pre_exec(arm) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_become_v8_flags() {
        let limits = Limits {
            max_memory_bytes: 4 << 20,
            huge_pages: false,
        };
        assert_eq!(
            limit_flags(limits),
            [
                "--wasm-max-mem-pages=64".to_string(),
                "--wasm-max-table-size=524288".to_string()
            ]
        );
        let large = Limits {
            max_memory_bytes: 4 << 30,
            huge_pages: false,
        };
        assert_eq!(limit_flags(large)[1], "--wasm-max-table-size=10000000");
    }

    /// The cores thread `tid` of process `pid` may run on, as
    /// `/proc/PID/task/TID/status` lists them (`0-1`, `1`).
    fn cores_of(pid: u32, tid: &str) -> Option<String> {
        let text = crate::util::fs::read_system_text(format!("/proc/{pid}/task/{tid}/status"))?;
        let line = text.lines().find(|l| l.starts_with("Cpus_allowed_list:"))?;
        Some(line.split_whitespace().nth(1)?.to_string())
    }

    /// The cores of every thread of process `pid` but its main thread.
    fn helpers_cores(pid: u32) -> Vec<String> {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("tasks");
        tasks
            .filter_map(|task| task.ok()?.file_name().into_string().ok())
            .filter(|tid| *tid != pid.to_string())
            .filter_map(|tid| cores_of(pid, &tid))
            .collect()
    }

    /// Started from a thread kept to one core, `node`'s main thread keeps
    /// to that core once it has answered, while its helper threads may run
    /// on every core. Skipped without `node` or a second core.
    #[test]
    fn nodes_helper_threads_leave_the_measuring_core_to_its_main_thread() {
        let (Some(node), Some(cores)) = (node(), thread_affinity()) else {
            return eprintln!("skipped: no node, or no affinity");
        };
        if cores.len() < 2 {
            return eprintln!("skipped: one core");
        }
        let measuring = cores[cores.len() - 1];
        std::thread::spawn(move || {
            // SAFETY: gettid has no preconditions.
            let tid = unsafe { libc::gettid() } as u32;
            keep_thread_to(tid, &[measuring]).expect("keep");
            let limits = Limits {
                max_memory_bytes: 64 << 20,
                huge_pages: false,
            };
            let mut process = NodeProcess::start(&node, limits, &[], None).expect("node");
            let _ = process.request_within("memory", COMPILE_DEADLINE);
            process.keep_main_thread();
            let pid = process.id();
            let main = cores_of(pid, &pid.to_string());
            assert_eq!(main, Some(measuring.to_string()));
            let helpers = helpers_cores(pid);
            assert!(
                helpers.iter().any(|c| *c != measuring.to_string()),
                "every helper thread on the measuring core: {helpers:?}"
            );
        })
        .join()
        .expect("the thread");
    }
}
