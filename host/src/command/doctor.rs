//! `host doctor`: what this machine offers a benchmark, and what would
//! disturb its measurements.
//!
//! Every check reads what the OS exposes (sysfs, procfs, a few syscalls) and
//! says it in one line, with a one-line fix where there is one. A file that
//! is missing, as is usual in a VM or a container, is a neutral "not
//! exposed", never an error. Whatever needs asking the OS for (pinning, nice
//! -20, SCHED_FIFO, a counter) is tried on a short-lived thread of its own:
//! the calling thread is never pinned or reprioritised. This module changes
//! no setting of the machine and measures no workload; it does not decide
//! anything for `host run` either ([`crate::platform::thread`] prepares the measuring
//! thread on its own).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use serde::Serialize;

use crate::options::Output;
use crate::output::export::write_json;
use crate::output::units::format_ns;
use crate::platform::gaps::{self, Interruptions};
use crate::util::exit::ExitStatus;

/// How a finding bears on measurements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Good for measuring.
    Ok,
    /// Would disturb measurements (or make them slower or coarser).
    Warn,
    /// A neutral fact.
    Info,
}

impl Status {
    /// The word shown in the first column of [`render`].
    pub fn label(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Info => "info",
        }
    }
}

/// One check's outcome: a topic, how it bears on measurements, what was
/// seen, and what to do about it when there is something to do.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub topic: String,
    pub status: Status,
    pub detail: String,
    pub fix: Option<String>,
}

impl Finding {
    fn new(topic: &str, status: Status, detail: impl Into<String>) -> Self {
        Finding {
            topic: topic.to_string(),
            status,
            detail: detail.into(),
            fix: None,
        }
    }

    fn ok(topic: &str, detail: impl Into<String>) -> Self {
        Self::new(topic, Status::Ok, detail)
    }

    fn warn(topic: &str, detail: impl Into<String>) -> Self {
        Self::new(topic, Status::Warn, detail)
    }

    fn info(topic: &str, detail: impl Into<String>) -> Self {
        Self::new(topic, Status::Info, detail)
    }

    fn not_exposed(topic: &str, why: &str) -> Self {
        Self::info(topic, format!("not exposed ({why})"))
    }

    fn fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }
}

const CPU: &str = "cpu";
const CORES: &str = "cores";
const PINNING: &str = "pinning";
const NICE: &str = "nice -20";
const FIFO: &str = "SCHED_FIFO";
const CLOCK_SOURCE: &str = "clock source";
const CLOCK: &str = "clock";
const GOVERNOR: &str = "governor";
const TURBO: &str = "turbo";
const VM: &str = "virtual machine";
const LOAD: &str = "load";
const INTERRUPTIONS: &str = "interruptions";
const PERF: &str = "perf counters";
const PARANOID: &str = "perf_event_paranoid";
const BUILD: &str = "build";

/// Every topic [`examine`] reports, in its order.
pub const TOPICS: [&str; 15] = [
    CPU,
    CORES,
    PINNING,
    NICE,
    FIFO,
    CLOCK_SOURCE,
    CLOCK,
    GOVERNOR,
    TURBO,
    VM,
    LOAD,
    INTERRUPTIONS,
    PERF,
    PARANOID,
    BUILD,
];

const SYS_CPU: &str = "/sys/devices/system/cpu";
const CLOCKSOURCE: &str = "/sys/devices/system/clocksource/clocksource0";

/// Run every check, in the order of [`TOPICS`]. Takes a fraction of a
/// second (the clock calibration dominates).
pub fn examine() -> Vec<Finding> {
    let cores: Vec<usize> = core_affinity::get_core_ids()
        .unwrap_or_default()
        .into_iter()
        .map(|c| c.id)
        .collect();
    vec![
        cpu_model(),
        cores_available(&cores),
        pinning(&cores),
        nice(),
        fifo(),
        clock_source(),
        clock(),
        governor(),
        turbo(),
        virtual_machine(),
        load(cores.len()),
        interruptions(&cores),
        perf_counters(),
        perf_paranoid(),
        build(),
    ]
}

/// One line per finding: status, topic and detail in aligned columns, plus
/// an indented `fix: ...` line under the detail when there is a fix.
pub fn render(findings: &[Finding]) -> String {
    let status_width = [Status::Ok, Status::Warn, Status::Info]
        .iter()
        .map(|s| s.label().len())
        .max()
        .unwrap_or(0);
    let topic_width = findings
        .iter()
        .map(|f| f.topic.chars().count())
        .max()
        .unwrap_or(0);
    let indent = status_width + 2 + topic_width + 2;
    let mut out = String::new();
    for f in findings {
        let line = format!(
            "{:<status_width$}  {:<topic_width$}  {}",
            f.status.label(),
            f.topic,
            f.detail
        );
        let _ = writeln!(out, "{}", line.trim_end());
        if let Some(fix) = &f.fix {
            let _ = writeln!(out, "{:indent$}fix: {fix}", "");
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Reading what the OS exposes.

/// The trimmed contents of a small text file, or `None` when it cannot be read.
fn read_text(path: impl AsRef<Path>) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// The first value of a `key : value` line in /proc/cpuinfo among `keys`.
fn cpuinfo_value(cpuinfo: &str, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|key| {
        cpuinfo.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            (k.trim() == *key && !v.trim().is_empty()).then(|| v.trim().to_string())
        })
    })
}

/// Parse a kernel CPU list such as `0-3,5,7-8`.
fn parse_cpu_list(text: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let a: usize = a.trim().parse().ok()?;
                let b: usize = b.trim().parse().ok()?;
                if a > b {
                    return None;
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(part.trim().parse().ok()?),
        }
    }
    Some(cpus)
}

/// Write CPU ids compactly, e.g. `0-3,5`.
fn format_cpu_list(ids: &[usize]) -> String {
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            ids[i].to_string()
        } else {
            format!("{}-{}", ids[i], ids[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// Run `probe` on a short-lived thread of its own, so that whatever it asks
/// the OS for (a pin, a priority) never sticks to the calling thread.
/// `None` when the thread cannot be spawned or panics.
fn on_probe_thread<T: Send + 'static>(probe: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    std::thread::Builder::new()
        .name("doctor-probe".into())
        .spawn(probe)
        .ok()?
        .join()
        .ok()
}

/// Name of an errno value, e.g. `EACCES`.
fn errno_name(code: i32) -> String {
    let name = match code {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::EACCES => "EACCES",
        libc::EBUSY => "EBUSY",
        libc::ENODEV => "ENODEV",
        libc::EINVAL => "EINVAL",
        libc::ENOSYS => "ENOSYS",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::E2BIG => "E2BIG",
        libc::EMFILE => "EMFILE",
        _ => return format!("errno {code}"),
    };
    name.to_string()
}

/// A thread-priority error in plain words (errno names where there is one).
fn priority_error(e: &thread_priority::Error) -> String {
    match e {
        thread_priority::Error::OS(code) => errno_name(*code),
        other => other.to_string(),
    }
}

/// How to name this binary in a `setcap` fix.
fn this_binary() -> String {
    std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "target/release/host".to_string())
}

// ---------------------------------------------------------------------------
// The checks, in the order of TOPICS.

fn cpu_model() -> Finding {
    let arch = std::env::consts::ARCH;
    let model = read_text("/proc/cpuinfo").and_then(|text| {
        cpuinfo_value(
            &text,
            &[
                "model name",
                "Model",
                "cpu model",
                "Hardware",
                "uarch",
                "cpu",
            ],
        )
    });
    match model {
        Some(model) => Finding::info(CPU, format!("{model} ({arch})")),
        None => Finding::info(CPU, format!("model not exposed ({arch})")),
    }
}

fn cores_available(cores: &[usize]) -> Finding {
    let online = read_text(format!("{SYS_CPU}/online"))
        .and_then(|t| parse_cpu_list(&t))
        .map(|c| c.len());
    let of_online = online.map_or(String::new(), |n| format!(" of {n} online"));
    match cores.len() {
        0 => Finding::warn(
            CORES,
            format!("the cores this process may use are not exposed{of_online}: the measuring thread will not be pinned"),
        ),
        1 => Finding::warn(
            CORES,
            format!(
                "1 usable by this process (core {}){of_online}: the measuring thread shares it with everything else",
                format_cpu_list(cores)
            ),
        )
        .fix("give the machine (or container) at least 2 cores"),
        n => Finding::ok(
            CORES,
            format!(
                "{n} usable by this process (cores {}){of_online}",
                format_cpu_list(cores)
            ),
        ),
    }
}

fn pinning(cores: &[usize]) -> Finding {
    let Some(&last) = cores.last() else {
        return Finding::info(PINNING, "not tried: no core list");
    };
    let outcome = on_probe_thread(move || {
        let set = core_affinity::set_for_current(core_affinity::CoreId { id: last });
        (set, thread_affinity())
    });
    match outcome {
        None => Finding::info(PINNING, "not tried: could not start a probe thread"),
        Some((true, Some(now))) if now == [last] => Finding::ok(
            PINNING,
            format!("permitted: a thread was pinned to core {last} (the default measuring core)"),
        ),
        Some((true, None)) => Finding::info(
            PINNING,
            format!("pinning to core {last} was accepted, but the affinity is not exposed"),
        ),
        Some((true, Some(now))) => Finding::warn(
            PINNING,
            format!(
                "asked for core {last}, the thread may run on cores {}",
                format_cpu_list(&now)
            ),
        )
        .fix("check the container's cpuset and seccomp profile (sched_setaffinity must be allowed)"),
        Some((false, _)) => Finding::warn(
            PINNING,
            format!("pinning a thread to core {last} was refused: measurements may migrate between cores"),
        )
        .fix("check the container's cpuset and seccomp profile (sched_setaffinity must be allowed)"),
    }
}

fn nice() -> Finding {
    use thread_priority::{
        NormalThreadSchedulePolicy, ThreadPriority, ThreadSchedulePolicy,
        set_thread_priority_and_policy, thread_native_id,
    };
    // The very call `host run` makes (see crate::platform::thread), on a probe thread.
    let outcome = on_probe_thread(|| {
        let normal = ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Other);
        let set = set_thread_priority_and_policy(thread_native_id(), ThreadPriority::Max, normal)
            .map_err(|e| priority_error(&e));
        (set, thread_nice())
    });
    let fix = format!(
        "run as root, or `sudo setcap cap_sys_nice+ep {}`, or set `<user> - nice -20` in /etc/security/limits.conf",
        this_binary()
    );
    match outcome {
        None => Finding::info(NICE, "not tried: could not start a probe thread"),
        Some((Ok(()), Some(-20))) => Finding::ok(
            NICE,
            "permitted: a thread was raised to nice -20 (what `host run` asks for)",
        ),
        Some((Ok(()), None)) => {
            Finding::info(NICE, "accepted, but the thread's nice value is not exposed")
        }
        Some((Ok(()), Some(n))) => {
            Finding::warn(NICE, format!("asked for nice -20, the thread got nice {n}")).fix(fix)
        }
        Some((Err(e), now)) => {
            let stays = now.map_or(String::new(), |n| format!(" at nice {n}"));
            Finding::warn(
                NICE,
                format!("refused ({e}): the measuring thread stays{stays} and competes equally with other work"),
            )
            .fix(fix)
        }
    }
}

fn fifo() -> Finding {
    use thread_priority::{
        RealtimeThreadSchedulePolicy, ThreadPriority, ThreadSchedulePolicy,
        set_thread_priority_and_policy, thread_native_id,
    };
    // The call `host run --priority fifo` makes, on a probe thread that ends
    // right after.
    let outcome = on_probe_thread(|| {
        let fifo = ThreadSchedulePolicy::Realtime(RealtimeThreadSchedulePolicy::Fifo);
        let set = set_thread_priority_and_policy(thread_native_id(), ThreadPriority::Max, fifo)
            .map_err(|e| priority_error(&e));
        (set, thread_fifo_priority())
    });
    match outcome {
        None => Finding::info(FIFO, "not tried: could not start a probe thread"),
        Some((Ok(()), Some(priority))) => Finding::ok(
            FIFO,
            format!(
                "permitted (priority {priority}); {}",
                rt_throttling(
                    read_text("/proc/sys/kernel/sched_rt_runtime_us"),
                    read_text("/proc/sys/kernel/sched_rt_period_us"),
                )
            ),
        ),
        Some((Ok(()), None)) => Finding::info(
            FIFO,
            "accepted, but the thread's policy read back is not SCHED_FIFO",
        ),
        Some((Err(e), _)) => Finding::info(
            FIFO,
            format!("refused ({e}): `--priority fifo` falls back to nice -20"),
        )
        .fix(format!(
            "only `--priority fifo` needs it: run as root, or `sudo setcap cap_sys_nice+ep {}`",
            this_binary()
        )),
    }
}

/// What the kernel's real-time throttling does to a busy SCHED_FIFO loop,
/// from `sched_rt_runtime_us` and `sched_rt_period_us`.
fn rt_throttling(runtime: Option<String>, period: Option<String>) -> String {
    let runtime: Option<i64> = runtime.and_then(|t| t.parse().ok());
    let period: Option<i64> = period.and_then(|t| t.parse().ok());
    match (runtime, period) {
        (Some(r), _) if r < 0 => "RT throttling off (sched_rt_runtime_us = -1)".to_string(),
        (Some(r), Some(p)) if r >= p => {
            format!("RT throttling off (sched_rt_runtime_us {r} >= sched_rt_period_us {p})")
        }
        (Some(r), Some(p)) => format!(
            "a busy loop under SCHED_FIFO is stopped for {} µs every {p} µs (sched_rt_runtime_us {r})",
            p - r
        ),
        _ => "RT throttling not exposed".to_string(),
    }
}

fn clock_source() -> Finding {
    let Some(current) = read_text(format!("{CLOCKSOURCE}/current_clocksource")) else {
        return Finding::not_exposed(CLOCK_SOURCE, "no clocksource in sysfs");
    };
    let available = read_text(format!("{CLOCKSOURCE}/available_clocksource")).unwrap_or_default();
    judge_clock_source(std::env::consts::ARCH, &current, &available)
}

fn judge_clock_source(arch: &str, current: &str, available: &str) -> Finding {
    if arch != "x86_64" {
        return Finding::info(CLOCK_SOURCE, current);
    }
    if current == "tsc" {
        return Finding::ok(CLOCK_SOURCE, "tsc");
    }
    let offered = available.split_whitespace().any(|s| s == "tsc");
    let others = if available.is_empty() {
        String::new()
    } else {
        format!(" (available: {available})")
    };
    let finding = Finding::warn(
        CLOCK_SOURCE,
        format!("{current}{others}: clock reads may be slower and coarser than with tsc"),
    );
    if offered {
        finding.fix(format!(
            "echo tsc | sudo tee {CLOCKSOURCE}/current_clocksource"
        ))
    } else {
        finding.fix("the kernel does not offer tsc here (it judged it unstable); use longer samples (--sample-time)")
    }
}

/// Above either figure, the clock costs precision in short samples.
const SLOW_CLOCK_NS: f64 = 100.0;
const COARSE_CLOCK_NS: f64 = 1_000.0;

fn clock() -> Finding {
    let c = crate::platform::clock::calibrate();
    let detail = format!(
        "resolution {}, one read {}",
        format_ns(c.resolution_ns),
        format_ns(c.overhead_ns)
    );
    if c.overhead_ns > SLOW_CLOCK_NS || c.resolution_ns > COARSE_CLOCK_NS {
        Finding::warn(
            CLOCK,
            format!("{detail}: slow or coarse, short samples lose precision"),
        )
        .fix("use the tsc clock source if offered, or longer samples (--sample-time 10ms)")
    } else {
        Finding::ok(CLOCK, detail)
    }
}

fn governor() -> Finding {
    let mut governors = Vec::new();
    if let Ok(entries) = fs::read_dir(SYS_CPU) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let is_cpu = name
                .strip_prefix("cpu")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
            if !is_cpu {
                continue;
            }
            if let Some(g) = read_text(entry.path().join("cpufreq/scaling_governor")) {
                governors.push(g);
            }
        }
    }
    judge_governors(&governors)
}

fn judge_governors(governors: &[String]) -> Finding {
    if governors.is_empty() {
        return Finding::not_exposed(GOVERNOR, "no cpufreq: usual in a VM");
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for g in governors {
        *counts.entry(g.as_str()).or_default() += 1;
    }
    if counts.len() == 1 && counts.contains_key("performance") {
        return Finding::ok(
            GOVERNOR,
            format!("performance on all {} cpus", governors.len()),
        );
    }
    let list: Vec<String> = counts
        .iter()
        .map(|(g, n)| format!("{g} on {n} cpu{}", if *n == 1 { "" } else { "s" }))
        .collect();
    Finding::warn(
        GOVERNOR,
        format!(
            "{}: the clock speed follows the load, early samples run slower",
            list.join(", ")
        ),
    )
    .fix("sudo cpupower frequency-set -g performance")
}

fn turbo() -> Finding {
    let no_turbo = read_text(format!("{SYS_CPU}/intel_pstate/no_turbo"));
    let boost = read_text(format!("{SYS_CPU}/cpufreq/boost"));
    judge_turbo(no_turbo.as_deref(), boost.as_deref())
}

fn judge_turbo(no_turbo: Option<&str>, boost: Option<&str>) -> Finding {
    match (no_turbo, boost) {
        (Some("1"), _) => Finding::ok(TURBO, "off (intel_pstate/no_turbo = 1)"),
        (Some("0"), _) => Finding::warn(
            TURBO,
            "on (intel_pstate): the clock speed follows temperature and load",
        )
        .fix(format!("echo 1 | sudo tee {SYS_CPU}/intel_pstate/no_turbo")),
        (_, Some("0")) => Finding::ok(TURBO, "off (cpufreq/boost = 0)"),
        (_, Some("1")) => Finding::warn(
            TURBO,
            "on (cpufreq/boost): the clock speed follows temperature and load",
        )
        .fix(format!("echo 0 | sudo tee {SYS_CPU}/cpufreq/boost")),
        (Some(v), _) | (None, Some(v)) => {
            Finding::info(TURBO, format!("unrecognised setting `{v}`"))
        }
        (None, None) => {
            Finding::not_exposed(TURBO, "no intel_pstate or cpufreq boost: usual in a VM")
        }
    }
}

/// Words in the DMI vendor or product name that mean a virtual machine.
const VM_MARKERS: [&str; 14] = [
    "kvm",
    "qemu",
    "vmware",
    "virtualbox",
    "innotek",
    "xen",
    "virtual machine",
    "bochs",
    "bhyve",
    "parallels",
    "google compute engine",
    "openstack",
    "standard pc",
    "cloud hypervisor",
];

fn virtual_machine() -> Finding {
    let cpuinfo = read_text("/proc/cpuinfo");
    let flag = cpuinfo.as_deref().map(|text| {
        text.lines()
            .filter(|l| l.starts_with("flags"))
            .any(|l| l.split_whitespace().any(|w| w == "hypervisor"))
    });
    let vendor = read_text("/sys/class/dmi/id/sys_vendor");
    let product = read_text("/sys/class/dmi/id/product_name");
    let dmi = match (vendor, product) {
        (None, None) => None,
        (v, p) => Some(
            [v, p]
                .into_iter()
                .flatten()
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join(" "),
        ),
    };
    judge_vm(flag, dmi.as_deref())
}

fn judge_vm(hypervisor_flag: Option<bool>, dmi: Option<&str>) -> Finding {
    let dmi_says_vm = dmi.is_some_and(|d| {
        let d = d.to_lowercase();
        VM_MARKERS.iter().any(|m| d.contains(m))
    });
    let mut evidence = Vec::new();
    if hypervisor_flag == Some(true) {
        evidence.push("hypervisor flag in /proc/cpuinfo".to_string());
    }
    if let (true, Some(d)) = (dmi_says_vm, dmi) {
        evidence.push(d.to_string());
    }
    if !evidence.is_empty() {
        return Finding::warn(
            VM,
            format!(
                "yes ({}): other guests and steal time add noise",
                evidence.join("; ")
            ),
        )
        .fix(
            "prefer bare metal or dedicated cores; `host selftest` measures this machine's drift",
        );
    }
    match (hypervisor_flag, dmi) {
        (None, None) => Finding::not_exposed(VM, "no /proc/cpuinfo or DMI"),
        _ => Finding::ok(VM, "none detected"),
    }
}

/// Above this 1-minute load per core, other work competes with the
/// measuring thread.
const LOAD_PER_CORE: f64 = 0.5;

fn load(cores: usize) -> Finding {
    match read_text("/proc/loadavg") {
        Some(text) => judge_load(&text, cores),
        None => Finding::not_exposed(LOAD, "no /proc/loadavg"),
    }
}

fn judge_load(loadavg: &str, cores: usize) -> Finding {
    let mut fields = loadavg.split_whitespace().map(str::parse::<f64>);
    let (Some(Ok(one)), Some(Ok(five))) = (fields.next(), fields.next()) else {
        return Finding::info(LOAD, format!("unreadable /proc/loadavg `{loadavg}`"));
    };
    let cores = cores.max(1);
    let detail = format!(
        "1-min {one:.2}, 5-min {five:.2} on {cores} core{}",
        if cores == 1 { "" } else { "s" }
    );
    if one > LOAD_PER_CORE * cores as f64 {
        Finding::warn(LOAD, format!("{detail}: other work competes for the cores"))
            .fix("let other work (builds, tests, indexers) finish first; `top` shows what runs")
    } else {
        Finding::ok(LOAD, detail)
    }
}

/// How long each core is watched for interruptions.
const WATCH: std::time::Duration = std::time::Duration::from_millis(200);

fn interruptions(cores: &[usize]) -> Finding {
    let watched: Vec<Interruptions> = cores
        .iter()
        .filter_map(|&core| gaps::watch(core, WATCH))
        .collect();
    judge_interruptions(&watched)
}

fn judge_interruptions(watched: &[Interruptions]) -> Finding {
    let Some(worst) = watched
        .iter()
        .max_by(|a, b| a.lost_pct.total_cmp(&b.lost_pct))
    else {
        return Finding::info(INTERRUPTIONS, "not watched (no core could be pinned)");
    };
    let per_core: Vec<String> = watched
        .iter()
        .map(|i| {
            format!(
                "core {} {:.0}/s, {:.2}% of the time",
                i.core, i.per_second, i.lost_pct
            )
        })
        .collect();
    let detail = format!(
        "gaps over {} µs in a spinning thread: {}",
        gaps::THRESHOLD.as_micros(),
        per_core.join("; ")
    );
    if worst.notable() {
        Finding::warn(
            INTERRUPTIONS,
            format!(
                "{detail}: a sample of 1 ms carries about {:.1} of them; `host run` times such samples by the epochs none reached, and a program's whole run keeps them",
                worst.per_span(1e6)
            ),
        )
        .fix("prefer bare metal or dedicated cores; `host selftest --only machine` watches longer")
    } else {
        Finding::ok(INTERRUPTIONS, detail)
    }
}

fn perf_counters() -> Finding {
    match crate::platform::pmu::count_instructions() {
        Ok(n) if n > 0 => Finding::ok(
            PERF,
            "available: a hardware instruction counter opened and counted",
        ),
        Ok(_) => Finding::info(
            PERF,
            "a hardware instruction counter opened but counted nothing (a VM hiding the PMU?)",
        ),
        Err(code) if [libc::ENOENT, libc::EOPNOTSUPP, libc::ENODEV].contains(&code) => {
            Finding::info(
                PERF,
                format!(
                    "not available ({}): no hardware counters exposed, usual in a VM",
                    errno_name(code)
                ),
            )
        }
        Err(code) if [libc::EACCES, libc::EPERM].contains(&code) => Finding::info(
            PERF,
            format!(
                "refused ({}): perf_event_paranoid or a seccomp profile forbids them",
                errno_name(code)
            ),
        )
        .fix("sudo sysctl kernel.perf_event_paranoid=2 (containers: allow perf_event_open)"),
        Err(code) if code == libc::ENOSYS => Finding::info(
            PERF,
            "not available (ENOSYS): the kernel has no perf events",
        ),
        Err(code) => Finding::info(PERF, format!("not available ({})", errno_name(code))),
    }
}

fn perf_paranoid() -> Finding {
    match read_text("/proc/sys/kernel/perf_event_paranoid") {
        Some(value) => Finding::info(PARANOID, describe_paranoid(&value)),
        None => Finding::not_exposed(PARANOID, "no /proc/sys/kernel/perf_event_paranoid"),
    }
}

fn describe_paranoid(value: &str) -> String {
    let meaning = match value.parse::<i32>() {
        Ok(v) if v < 0 => "no restrictions",
        Ok(0) => "CPU-wide and per-process events for every user",
        Ok(1) => "user and kernel counting of one's own processes",
        Ok(2) => "user-space counting of one's own processes",
        Ok(_) => "no counters for unprivileged users",
        Err(_) => "unrecognised",
    };
    format!("{value} ({meaning})")
}

fn build() -> Finding {
    judge_build(cfg!(debug_assertions))
}

fn judge_build(debug: bool) -> Finding {
    if debug {
        Finding::warn(
            BUILD,
            "built without --release: the harness is slow and its own overheads are large",
        )
        .fix("cargo build --release")
    } else {
        Finding::ok(BUILD, "release")
    }
}

// ---------------------------------------------------------------------------
// The few syscalls, Linux only.

/// The cores the calling thread may run on.
#[cfg(target_os = "linux")]
fn thread_affinity() -> Option<Vec<usize>> {
    // SAFETY: `set` is a zeroed cpu_set_t of the size passed, owned by us and
    // alive for the call; pid 0 is the calling thread.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        set
    };
    Some(
        (0..libc::CPU_SETSIZE as usize)
            // SAFETY: `i` is below CPU_SETSIZE, inside the set.
            .filter(|&i| unsafe { libc::CPU_ISSET(i, &set) })
            .collect(),
    )
}

#[cfg(not(target_os = "linux"))]
fn thread_affinity() -> Option<Vec<usize>> {
    None
}

/// The calling thread's nice value (on Linux, PRIO_PROCESS with who = 0 is
/// the calling thread).
#[cfg(target_os = "linux")]
fn thread_nice() -> Option<i32> {
    // SAFETY: errno is thread-local and writable; getpriority takes no
    // pointers. -1 is a valid nice value, so errno tells an error apart.
    unsafe {
        *libc::__errno_location() = 0;
        let nice = libc::getpriority(libc::PRIO_PROCESS, 0);
        (nice != -1 || *libc::__errno_location() == 0).then_some(nice)
    }
}

#[cfg(not(target_os = "linux"))]
fn thread_nice() -> Option<i32> {
    None
}

/// The calling thread's SCHED_FIFO priority, `None` unless it is SCHED_FIFO.
#[cfg(target_os = "linux")]
fn thread_fifo_priority() -> Option<i32> {
    // SAFETY: pid 0 is the calling thread; `param` is a valid out-parameter
    // that outlives the call.
    unsafe {
        if libc::sched_getscheduler(0) != libc::SCHED_FIFO {
            return None;
        }
        let mut param = libc::sched_param { sched_priority: 0 };
        (libc::sched_getparam(0, &mut param) == 0).then_some(param.sched_priority)
    }
}

#[cfg(not(target_os = "linux"))]
fn thread_fifo_priority() -> Option<i32> {
    None
}

/// `host doctor`: print the findings, as a table or as JSON.
pub fn doctor(json: bool) -> anyhow::Result<ExitStatus> {
    let findings = examine();
    if json {
        write_json(&findings, &Output::Stdout)?;
    } else {
        print!("{}", render(&findings));
    }
    Ok(ExitStatus::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(topic: &str, status: Status, detail: &str, fix: Option<&str>) -> Finding {
        Finding {
            topic: topic.to_string(),
            status,
            detail: detail.to_string(),
            fix: fix.map(str::to_string),
        }
    }

    #[test]
    fn render_aligns_columns_and_indents_fixes() {
        let findings = [
            finding("cores", Status::Ok, "2 usable", None),
            finding(
                "governor",
                Status::Warn,
                "powersave on 2 cpus",
                Some("sudo cpupower frequency-set -g performance"),
            ),
            finding("cpu", Status::Info, "AMD EPYC (x86_64)", None),
        ];
        let expected = "\
ok    cores     2 usable
warn  governor  powersave on 2 cpus
                fix: sudo cpupower frequency-set -g performance
info  cpu       AMD EPYC (x86_64)
";
        assert_eq!(render(&findings), expected);
    }

    #[test]
    fn render_of_nothing_is_empty_and_never_leaves_trailing_spaces() {
        assert_eq!(render(&[]), "");
        let text = render(&[finding("a-long-topic", Status::Info, "", None)]);
        assert_eq!(text, "info  a-long-topic\n");
    }

    #[test]
    fn status_serialises_in_snake_case() {
        let json = serde_json::to_string(&finding("build", Status::Warn, "d", Some("f")))
            .expect("serialises");
        assert_eq!(
            json,
            r#"{"topic":"build","status":"warn","detail":"d","fix":"f"}"#
        );
    }

    #[test]
    fn examine_reports_every_topic_exactly_once_in_order() {
        let findings = examine();
        let topics: Vec<&str> = findings.iter().map(|f| f.topic.as_str()).collect();
        assert_eq!(topics, TOPICS);
        for f in &findings {
            assert!(!f.detail.is_empty(), "{} has no detail", f.topic);
            assert!(!f.detail.contains('\n'), "{} detail spans lines", f.topic);
            if let Some(fix) = &f.fix {
                assert!(!fix.is_empty() && !fix.contains('\n'), "{} fix", f.topic);
            }
        }
        let text = render(&findings);
        let fixes = findings.iter().filter(|f| f.fix.is_some()).count();
        assert_eq!(text.lines().count(), findings.len() + fixes);
    }

    #[test]
    fn examine_leaves_the_calling_thread_alone() {
        let before = (thread_affinity(), thread_nice(), thread_fifo_priority());
        let _ = examine();
        assert_eq!(
            (thread_affinity(), thread_nice(), thread_fifo_priority()),
            before
        );
    }

    #[test]
    fn cpu_lists_parse_and_format() {
        assert_eq!(
            parse_cpu_list("0-3,5,7-8\n"),
            Some(vec![0, 1, 2, 3, 5, 7, 8])
        );
        assert_eq!(parse_cpu_list("0"), Some(vec![0]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("x"), None);
        assert_eq!(format_cpu_list(&[5, 0, 1, 2, 3, 7, 8]), "0-3,5,7-8");
        assert_eq!(format_cpu_list(&[1]), "1");
        assert_eq!(format_cpu_list(&[]), "");
    }

    #[test]
    fn rt_throttling_says_how_long_a_fifo_loop_stops() {
        let s = |v: &str| Some(v.to_string());
        assert_eq!(
            rt_throttling(s("950000"), s("1000000")),
            "a busy loop under SCHED_FIFO is stopped for 50000 µs every 1000000 µs (sched_rt_runtime_us 950000)"
        );
        assert_eq!(
            rt_throttling(s("-1"), s("1000000")),
            "RT throttling off (sched_rt_runtime_us = -1)"
        );
        assert_eq!(rt_throttling(None, None), "RT throttling not exposed");
    }

    #[test]
    fn judgements_of_hand_made_inputs() {
        let g = |v: &[&str]| judge_governors(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(g(&["performance", "performance"]).status, Status::Ok);
        let mixed = g(&["powersave", "performance", "powersave"]);
        assert_eq!(mixed.status, Status::Warn);
        assert!(
            mixed
                .detail
                .starts_with("performance on 1 cpu, powersave on 2 cpus")
        );
        assert_eq!(g(&[]).status, Status::Info);

        assert_eq!(judge_turbo(Some("1"), None).status, Status::Ok);
        assert_eq!(judge_turbo(Some("0"), Some("0")).status, Status::Warn);
        assert_eq!(judge_turbo(None, Some("1")).status, Status::Warn);
        assert_eq!(judge_turbo(None, None).status, Status::Info);

        assert_eq!(
            judge_clock_source("x86_64", "tsc", "tsc hpet").status,
            Status::Ok
        );
        let hpet = judge_clock_source("x86_64", "hpet", "tsc hpet acpi_pm");
        assert_eq!(hpet.status, Status::Warn);
        assert!(hpet.fix.expect("a fix").starts_with("echo tsc | sudo tee"));
        assert_eq!(
            judge_clock_source("aarch64", "arch_sys_counter", "").status,
            Status::Info
        );

        assert_eq!(judge_vm(Some(true), None).status, Status::Warn);
        assert_eq!(
            judge_vm(Some(false), Some("QEMU Standard PC (Q35)")).status,
            Status::Warn
        );
        assert_eq!(
            judge_vm(Some(false), Some("Dell Inc. PowerEdge R650")).status,
            Status::Ok
        );
        assert_eq!(judge_vm(None, None).status, Status::Info);

        assert_eq!(judge_load("0.20 0.30 0.40 1/200 42", 2).status, Status::Ok);
        let busy = judge_load("3.21 3.17 3.07 3/101 17721", 2);
        assert_eq!(busy.status, Status::Warn);
        assert!(busy.detail.starts_with("1-min 3.21, 5-min 3.17 on 2 cores"));
        assert_eq!(judge_load("garbage", 2).status, Status::Info);

        let watched = |core, per_second, lost_pct| Interruptions {
            core,
            watched_s: 0.2,
            per_second,
            lost_pct,
            p50_ns: 2_000.0,
            p90_ns: 10_000.0,
            p99_ns: 50_000.0,
            max_ns: 100_000.0,
        };
        let quiet = judge_interruptions(&[watched(0, 250.0, 0.05), watched(1, 260.0, 0.06)]);
        assert_eq!(quiet.status, Status::Ok);
        assert!(
            quiet
                .detail
                .contains("core 0 250/s, 0.05% of the time; core 1 260/s")
        );
        // The worst core decides.
        let noisy = judge_interruptions(&[watched(0, 250.0, 0.05), watched(1, 5_000.0, 3.4)]);
        assert_eq!(noisy.status, Status::Warn);
        assert!(
            noisy.detail.contains("a sample of 1 ms carries about 5.0"),
            "{}",
            noisy.detail
        );
        assert_eq!(judge_interruptions(&[]).status, Status::Info);

        assert_eq!(
            describe_paranoid("2"),
            "2 (user-space counting of one's own processes)"
        );
        assert_eq!(
            judge_build(true).fix.as_deref(),
            Some("cargo build --release")
        );
        assert_eq!(judge_build(false).status, Status::Ok);
    }
}
