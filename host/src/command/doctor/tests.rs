//! Tests of `host doctor`: rendering, the order of the topics, and each
//! judgement on hand-made inputs.

use super::probes::{rt_throttling, thread_fifo_priority, thread_nice};
use super::system::{
    describe_paranoid, judge_build, judge_clock_source, judge_governors, judge_interruptions,
    judge_load, judge_turbo, judge_vm,
};
use super::*;
use crate::command::doctor::finding::{format_cpu_list, parse_cpu_list};
use crate::platform::cpu::thread_affinity;
use crate::platform::gaps::Interruptions;

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
    let json =
        serde_json::to_string(&finding("build", Status::Warn, "d", Some("f"))).expect("serialises");
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
