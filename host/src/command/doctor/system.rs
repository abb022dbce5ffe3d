//! The checks of `host doctor` that only read what the OS exposes: the CPU,
//! its cores, the clock, frequency scaling, virtualisation, load,
//! interruptions, performance counters and the build.

use std::collections::BTreeMap;
use std::fs;

use crate::command::doctor::finding::{
    BUILD, CLOCK, CLOCK_SOURCE, CLOCKSOURCE, CORES, CPU, ENGINES, Finding, GOVERNOR, INTERRUPTIONS,
    LOAD, PARANOID, PERF, SYS_CPU, TURBO, V8, VM, errno_name, format_cpu_list, parse_cpu_list,
    read_text,
};
use crate::output::units::format_ns;
use crate::platform::gaps::{self, Interruptions};

pub(super) fn cpu_model() -> Finding {
    let arch = std::env::consts::ARCH;
    match crate::platform::cpu::cpu_model() {
        Some(model) => Finding::info(CPU, format!("{model} ({arch})")),
        None => Finding::info(CPU, format!("model not exposed ({arch})")),
    }
}

pub(super) fn cores_available(cores: &[usize]) -> Finding {
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

pub(super) fn clock_source() -> Finding {
    let Some(current) = read_text(format!("{CLOCKSOURCE}/current_clocksource")) else {
        return Finding::not_exposed(CLOCK_SOURCE, "no clocksource in sysfs");
    };
    let available = read_text(format!("{CLOCKSOURCE}/available_clocksource")).unwrap_or_default();
    judge_clock_source(std::env::consts::ARCH, &current, &available)
}

pub(super) fn judge_clock_source(arch: &str, current: &str, available: &str) -> Finding {
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
pub(super) const SLOW_CLOCK_NS: f64 = 100.0;
pub(super) const COARSE_CLOCK_NS: f64 = 1_000.0;

pub(super) fn clock() -> Finding {
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

pub(super) fn governor() -> Finding {
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

pub(super) fn judge_governors(governors: &[String]) -> Finding {
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

pub(super) fn turbo() -> Finding {
    let no_turbo = read_text(format!("{SYS_CPU}/intel_pstate/no_turbo"));
    let boost = read_text(format!("{SYS_CPU}/cpufreq/boost"));
    judge_turbo(no_turbo.as_deref(), boost.as_deref())
}

pub(super) fn judge_turbo(no_turbo: Option<&str>, boost: Option<&str>) -> Finding {
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
pub(super) const VM_MARKERS: [&str; 14] = [
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

pub(super) fn virtual_machine() -> Finding {
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

pub(super) fn judge_vm(hypervisor_flag: Option<bool>, dmi: Option<&str>) -> Finding {
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
pub(super) const LOAD_PER_CORE: f64 = 0.5;

pub(super) fn load(cores: usize) -> Finding {
    match read_text("/proc/loadavg") {
        Some(text) => judge_load(&text, cores),
        None => Finding::not_exposed(LOAD, "no /proc/loadavg"),
    }
}

pub(super) fn judge_load(loadavg: &str, cores: usize) -> Finding {
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
pub(super) const WATCH: std::time::Duration = std::time::Duration::from_millis(200);

pub(super) fn interruptions(cores: &[usize]) -> Finding {
    let watched: Vec<Interruptions> = cores
        .iter()
        .filter_map(|&core| gaps::watch(core, WATCH))
        .collect();
    judge_interruptions(&watched)
}

pub(super) fn judge_interruptions(watched: &[Interruptions]) -> Finding {
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

pub(super) fn perf_counters() -> Finding {
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

pub(super) fn perf_paranoid() -> Finding {
    match read_text("/proc/sys/kernel/perf_event_paranoid") {
        Some(value) => Finding::info(PARANOID, describe_paranoid(&value)),
        None => Finding::not_exposed(PARANOID, "no /proc/sys/kernel/perf_event_paranoid"),
    }
}

pub(super) fn describe_paranoid(value: &str) -> String {
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

pub(super) fn build() -> Finding {
    judge_build(cfg!(debug_assertions))
}

pub(super) fn judge_build(debug: bool) -> Finding {
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

/// Which engines this host has built in (the list `--engine` reads), and
/// how to build the others.
pub(super) fn engines() -> Finding {
    let finding = Finding::info(ENGINES, crate::options::engines_built_in());
    match crate::options::ENGINES.iter().all(|e| e.built_in) {
        true => finding,
        false => finding.fix("cargo build --release -p host --features all-engines"),
    }
}

/// Whether `--engine v8` runs here: the `node` it found, with Node's and
/// V8's versions, or why not and how to fix it.
pub(super) fn v8() -> Finding {
    match crate::guest::runtime::v8::found() {
        Ok(version) => Finding::ok(V8, format!("--engine v8 runs under {version}")),
        Err(why) => Finding::info(V8, why),
    }
}
