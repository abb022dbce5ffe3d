//! End-to-end tests of `host profile` and `host compare --profile`: the
//! profile files have the Firefox Profiler's processed-profile shape, the
//! tables add up, and a compare names the function whose share grew.

use std::error::Error;
use std::time::Duration;

use e2e::{fixture, run_host_within, validate_export, workloads};
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

const BOUND: Duration = Duration::from_secs(120);

/// The fields of a processed profile that the Firefox Profiler reads.
fn check_shape(profile: &Value) -> Result<usize, Box<dyn Error>> {
    assert!(profile["meta"]["interval"].is_number(), "meta.interval");
    assert!(profile["meta"]["version"].is_number(), "meta.version");
    let threads = profile["threads"].as_array().ok_or("no threads")?;
    assert!(!threads.is_empty());
    let thread = &threads[0];
    for table in ["samples", "stackTable", "frameTable", "funcTable"] {
        assert!(thread[table]["length"].is_number(), "{table}.length");
    }
    assert!(thread["samples"]["stack"].is_array());
    assert!(thread["stackTable"]["prefix"].is_array());
    assert!(thread["frameTable"]["func"].is_array());
    assert!(thread["funcTable"]["name"].is_array());
    assert!(thread["stringArray"].is_array());
    Ok(thread["samples"]["length"].as_u64().unwrap_or(0) as usize)
}

#[test]
fn a_program_profile_opens_with_the_expected_shape() -> TestResult {
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("profiles");
    let fib = workloads().join("fib.wasm").display().to_string();
    let xor = workloads().join("xor.wasm").display().to_string();
    let finished = run_host_within(
        &[
            "profile",
            &fib,
            &xor,
            "--duration",
            "300ms",
            "--out",
            &out.display().to_string(),
            "--export-json",
            "-",
        ],
        dir.path(),
        BOUND,
    )?;
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    let report: Value = serde_json::from_str(&finished.stdout)?;
    let profiles = report["profiles"].as_array().ok_or("no profiles")?;
    assert_eq!(profiles.len(), 2);
    for (p, name) in profiles.iter().zip(["fib", "xor"]) {
        assert_eq!(p["name"], name);
        let path = p["path"].as_str().ok_or("no path")?;
        assert!(path.ends_with(&format!("{name}.profile.json")), "{path}");
        let profile: Value = serde_json::from_slice(&std::fs::read(path)?)?;
        let samples = check_shape(&profile)?;
        assert!(samples > 0, "{name}: no samples");
        assert_eq!(p["samples"].as_u64(), Some(samples as u64));
        // Self shares add up to the whole.
        let total: f64 = p["functions"]
            .as_array()
            .ok_or("no functions")?
            .iter()
            .filter_map(|f| f["self_pct"].as_f64())
            .sum();
        assert!((total - 100.0).abs() < 1e-6, "{name}: {total}");
    }
    assert_eq!(report["changes"].as_array().map(Vec::len), Some(0));
    Ok(())
}

#[test]
fn compare_profile_names_what_got_slower() -> TestResult {
    let dir = tempfile::tempdir()?;
    let before = fixture("profile/before.wat").display().to_string();
    let after = fixture("profile/after.wat").display().to_string();
    let finished = run_host_within(
        &[
            "compare",
            &before,
            &after,
            "--profile",
            "--time",
            "2s",
            "--export-json",
            "-",
        ],
        dir.path(),
        BOUND,
    )?;
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    let report: Value = serde_json::from_str(&finished.stdout)?;
    validate_export(&report)?;
    let profile = &report["profile"];
    let first = |name: &str| -> Result<String, Box<dyn Error>> {
        let p = profile["profiles"]
            .as_array()
            .and_then(|ps| ps.iter().find(|p| p["name"] == name))
            .ok_or("no profile")?;
        Ok(p["functions"][0]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string())
    };
    // Names come from the name section; the hot function moved.
    assert_eq!(first("before")?, "mix");
    assert_eq!(first("after")?, "tally");
    let change = &profile["changes"][0];
    assert_eq!(change["variant"], "after");
    assert_eq!(change["reference"], "before");
    assert_eq!(change["functions"][0]["name"], "tally", "{change}");
    assert!(
        change["functions"][0]["change_points"]
            .as_f64()
            .is_some_and(|x| x > 20.0),
        "{change}"
    );
    assert!(
        dir.path()
            .join("results/profiles/after.profile.json")
            .is_file()
    );
    Ok(())
}
