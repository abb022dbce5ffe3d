//! Tests of the settings: flags in, typed settings or a usage error out.

use std::num::{NonZeroU64, NonZeroUsize};
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::*;
use clap::Parser;

fn settings(args: &[&str]) -> Result<Settings> {
    let mut argv = vec!["host", "run"];
    argv.extend_from_slice(args);
    let cli = crate::cli::Cli::try_parse_from(argv)?;
    match cli.command {
        crate::cli::Command::Run(run) => Settings::from_run_args(run),
        _ => bail!("not a run"),
    }
}

#[test]
fn defaults() -> Result<()> {
    let s = settings(&["x.wasm"])?;
    assert_eq!(s.pin, PinRequest::Quietest);
    assert_eq!(s.priority, PriorityRequest::Nice);
    assert_eq!(s.warmup_cap, Duration::from_secs(1));
    assert_eq!(s.sample_time, Duration::from_millis(1));
    assert_eq!(s.count, None);
    assert_eq!(
        s.stop,
        StopRule::Precision {
            pct: 1.0,
            budget: DEFAULT_BUDGET
        }
    );
    assert_eq!(s.exports.get(ExportFormat::Json), None);
    Ok(())
}

#[test]
fn overrides() -> Result<()> {
    let s = settings(&[
        "x.wasm",
        "--core",
        "0",
        "--count",
        "1000",
        "--samples",
        "7",
        "--warmup",
        "250ms",
        "--export-json",
        "-",
    ])?;
    assert_eq!(s.pin, PinRequest::Core(0));
    assert_eq!(s.count.map(NonZeroU64::get), Some(1000));
    assert_eq!(
        s.stop,
        StopRule::Samples(NonZeroUsize::new(7).context("7")?)
    );
    assert_eq!(s.warmup_cap, Duration::from_millis(250));
    assert_eq!(s.exports.get(ExportFormat::Json), Some(&Output::Stdout));
    let s = settings(&["x.wasm", "--time", "2.5s", "--no-pin"])?;
    assert_eq!(s.stop, StopRule::Time(Duration::from_millis(2500)));
    assert_eq!(s.pin, PinRequest::None);
    Ok(())
}

#[test]
fn sizes_lists_powers_and_ranges() -> Result<()> {
    let parse =
        |specs: &[&str]| parse_sizes(&specs.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    assert_eq!(parse(&[])?, Vec::<u64>::new());
    assert_eq!(parse(&["100,1000,10000"])?, [100, 1000, 10000]);
    assert_eq!(parse(&["2^4..2^7"])?, [16, 32, 64, 128]);
    assert_eq!(parse(&["10..50"])?, [10, 20, 40, 50]);
    assert_eq!(parse(&["101", "100", "2^10", "100"])?, [100, 101, 1024]);
    for bad in ["x", "2^", "0..8", "8..4", "2^70", "-3"] {
        assert!(parse(&[bad]).is_err(), "{bad} was accepted");
    }
    Ok(())
}

#[test]
fn byte_sizes() -> Result<()> {
    assert_eq!(parse_bytes("--max-memory", "1GiB")?, 1 << 30);
    assert_eq!(parse_bytes("--max-memory", "256MiB")?, 256 << 20);
    assert_eq!(parse_bytes("--max-memory", "64k")?, 64 << 10);
    assert_eq!(parse_bytes("--max-memory", "4096")?, 4096);
    for bad in ["", "GiB", "1.5GiB", "0", "12 parsecs", "99999999999T"] {
        assert!(
            parse_bytes("--max-memory", bad).is_err(),
            "{bad} was accepted"
        );
    }
    let s = settings(&["x.wasm", "--max-memory", "64MiB", "--timeout", "2s"])?;
    assert_eq!(
        (s.max_memory_bytes, s.timeout),
        (64 << 20, Duration::from_secs(2))
    );
    Ok(())
}

#[test]
fn bad_values_name_the_flag() {
    for (args, flag) in [
        (&["x.wasm", "--count", "0"][..], "--count"),
        (&["x.wasm", "--samples", "0"][..], "--samples"),
        (&["x.wasm", "--warmup", "soon"][..], "--warmup"),
        (&["x.wasm", "--time", "0s"][..], "--time"),
        (&["x.wasm", "--precision=-1"][..], "--precision"),
        (&["x.wasm", "--drift=-1"][..], "--drift"),
        (&["x.wasm", "--max-memory", "lots"][..], "--max-memory"),
        (&["x.wasm", "--timeout", "0s"][..], "--timeout"),
    ] {
        match settings(args) {
            Ok(_) => panic!("{args:?} was accepted"),
            Err(e) => assert!(format!("{e:#}").contains(flag), "{e:#}"),
        }
    }
}

#[test]
fn one_noise_band_for_every_comparison() -> Result<()> {
    let s = settings(&["x.wasm"])?;
    assert_eq!(s.noise.width_pct(), 1.0);
    assert_eq!(s.noise.half(), 0.005);
    assert_eq!(s.noise.to_string(), "noise band ±0.5%");
    let s = settings(&["x.wasm", "--noise", "3"])?;
    assert_eq!(s.noise.half(), 0.015);
    assert!(settings(&["x.wasm", "--noise=-1"]).is_err());
    Ok(())
}

/// A baseline name becomes a file name in the store: one that could leave
/// its folder, hide, or be longer than the store keeps is refused with the
/// flags, before anything is measured.
#[test]
fn hostile_baseline_names_are_refused_with_the_flags() -> Result<()> {
    let long = "a".repeat(MAX_BASELINE_NAME + 1);
    for flag in ["--save-baseline", "--baseline"] {
        for name in [
            "../x",
            "a/b",
            ".hidden",
            "..",
            "",
            "é",
            "a b",
            "x\u{1b}[2J",
            &long,
        ] {
            let refused = settings(&["x.wasm", flag, name]).is_err();
            assert!(refused, "{flag} {name:?}");
        }
        let longest = "a".repeat(MAX_BASELINE_NAME);
        settings(&["x.wasm", flag, "main-1.2_x"])?;
        settings(&["x.wasm", flag, &longest])?;
    }
    Ok(())
}

#[test]
fn the_reference_is_one_of_the_engines_measured() -> Result<()> {
    let two = ["x.wasm", "--engine", "cranelift", "--engine", "winch"];
    let s = settings(&[&two[..], &["--reference", "winch"]].concat())?;
    assert_eq!(s.reference.as_deref(), Some("winch"));
    assert_eq!(settings(&two)?.reference, None);
    let unknown = settings(&[&two[..], &["--reference", "v8"]].concat());
    let said = format!("{:#}", unknown.err().context("v8 was not measured")?);
    assert!(
        said.contains("not one of the engines measured (cranelift, winch)"),
        "{said}"
    );
    let alone = settings(&["x.wasm", "--reference", "cranelift"]);
    assert!(format!("{:#}", alone.err().context("one engine")?).contains("two `--engine`"));
    Ok(())
}

fn compare_settings(args: &[&str]) -> Result<CompareSettings> {
    let mut argv = vec!["host", "compare", "a.wasm", "b.wasm"];
    argv.extend_from_slice(args);
    match crate::cli::Cli::try_parse_from(argv)?.command {
        crate::cli::Command::Compare(compare) => CompareSettings::from_args(compare),
        _ => bail!("not a compare"),
    }
}

/// A comparison samples for at most `--time`, 10 s by default; under
/// `--suite-time`, without `--time`, a benchmark has no cap but the
/// suite's time (its shares bound it), and `--time` still caps it when
/// given.
#[test]
fn the_time_cap_is_the_suites_time_unless_time_is_given() -> Result<()> {
    let cap = |args: &[&str]| compare_settings(args).map(|s| s.time_cap);
    assert_eq!(cap(&[])?, Duration::from_secs(10));
    assert_eq!(cap(&["--time", "3s"])?, Duration::from_secs(3));
    assert_eq!(cap(&["--suite-time", "5m"])?, Duration::from_secs(300));
    let both = ["--suite-time", "5m", "--time", "20s"];
    assert_eq!(cap(&both)?, Duration::from_secs(20));
    assert!(cap(&["--suite-time", "0s"]).is_err());
    Ok(())
}
