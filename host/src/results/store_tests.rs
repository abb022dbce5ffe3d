use super::*;

pub(super) fn run(id: &str, median_ns: f64) -> KeptRun {
    let mut run = fixture(id, "xor", median_ns);
    run.rows[0].ci95_low = f64::NAN;
    run
}
#[test]
fn keeps_reads_and_names_a_baseline() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::new(dir.path());
    assert!(store.ids().expect("lists").is_empty());
    store
        .keep(&run("0000000000001-1-0", 10.0), None)
        .expect("keeps");
    store
        .keep(&run("0000000000002-1-0", 20.0), Some("main"))
        .expect("keeps");
    assert_eq!(store.ids().expect("lists").len(), 2);
    assert_eq!(
        store.baseline_id("main").expect("named"),
        "0000000000002-1-0"
    );
    let (runs, notes) = store.newest(10, 2, HISTORY_BUDGET);
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].rows[0].median_ns, 20.0);
    // NaN is written as null and read back as NaN.
    assert!(runs[0].rows[0].ci95_low.is_nan());
    assert!(store.baseline_id("../x").is_err());
    assert!(store.baseline_id("nothing").is_err());
}

/// A link or a FIFO in a run's place is skipped with a note, unread; a
/// file of another name is not looked at.
#[test]
fn links_and_fifos_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::new(dir.path());
    store
        .keep(&run("0000000000001-1-0", 10.0), None)
        .expect("keeps");
    let runs = dir.path().join("runs");
    std::os::unix::fs::symlink("/dev/zero", runs.join("0000000000002-1-0.json")).expect("links");
    let fifo = runs.join("0000000000003-1-0.json");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()));
    std::fs::write(runs.join("notes.json"), "{}").expect("writes");
    let (kept, notes) = store.newest(10, 0, HISTORY_BUDGET);
    assert_eq!(kept.len(), 1);
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(
        notes.iter().any(|n| n.contains("symbolic link")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.contains("not a regular file")),
        "{notes:?}"
    );
}

#[test]
fn thinning_keeps_every_process_within_the_cap() {
    let epochs = vec![vec![1.0; 5000], vec![2.0; 5000]];
    let thinned = thin(&epochs, MAX_KEPT_EPOCHS);
    let kept: usize = thinned.iter().map(Vec::len).sum();
    assert!(
        (MAX_KEPT_EPOCHS / 2..=MAX_KEPT_EPOCHS).contains(&kept),
        "{kept}"
    );
    assert_eq!(thinned.len(), 2);
}

/// Past the budget, older runs are left unread and said so once.
#[test]
fn a_budget_bounds_what_is_read() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::new(dir.path());
    for i in 1..=3 {
        let id = format!("000000000000{i}-1-0");
        store.keep(&run(&id, 10.0), None).expect("keeps");
    }
    let size = std::fs::metadata(dir.path().join("runs").join("0000000000003-1-0.json"))
        .expect("kept")
        .len();
    let (kept, notes) = store.newest(10, 0, 2 * size + size / 2);
    assert_eq!(kept.len(), 2);
    assert_eq!(kept[0].id, "0000000000002-1-0");
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("older runs left unread"), "{notes:?}");
}

/// `runs` or `baselines` made symbolic links to a folder elsewhere: the
/// store refuses them, and nothing is read from or written to that folder.
#[test]
fn links_inside_the_store_are_refused() {
    for inner in ["runs", "baselines"] {
        let dir = tempfile::tempdir().expect("temp dir");
        let elsewhere = tempfile::tempdir().expect("temp dir");
        let store = Store::new(dir.path());
        let planted = "0000000000001-1-0";
        let bytes = serde_json::to_vec(&run(planted, 10.0)).expect("serialises");
        std::fs::write(elsewhere.path().join(format!("{planted}.json")), bytes).expect("writes");
        std::fs::write(elsewhere.path().join("main"), format!("{planted}\n")).expect("writes");
        std::os::unix::fs::symlink(elsewhere.path(), dir.path().join(inner)).expect("links");
        let kept = store.keep(&run("0000000000002-1-0", 10.0), Some("main"));
        let error = one_line(&kept.expect_err("refused"));
        assert!(
            error.contains("a symbolic link inside the store"),
            "{error}"
        );
        match inner {
            "runs" => {
                assert!(store.prepare().is_err());
                assert!(store.ids().is_err());
                assert!(store.read(planted).is_err());
                let (runs, notes) = store.newest(10, 0, HISTORY_BUDGET);
                assert!(runs.is_empty() && notes.len() == 1, "{notes:?}");
            }
            _ => assert!(store.baseline_id("main").is_err()),
        }
        let left: Vec<_> = std::fs::read_dir(elsewhere.path())
            .expect("lists")
            .map(|e| e.expect("an entry").file_name())
            .collect();
        assert_eq!(left.len(), 2, "written outside the store: {left:?}");
    }
}

/// Runs dated ahead of the clock (or named so) never push out the run just
/// kept nor the others of today: they are the first pruned.
#[test]
fn runs_dated_ahead_are_pruned_first() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::new(dir.path());
    store.prepare().expect("prepares");
    let plant = |id: &str| {
        let bytes = serde_json::to_vec(&run(id, 10.0)).expect("serialises");
        replace_atomically(&dir.path().join("runs").join(format!("{id}.json")), &bytes)
            .expect("writes");
    };
    plant("0000000000100-1-0");
    plant("ffffffff");
    for i in 0..MAX_KEPT_RUNS - 2 {
        plant(&format!("9{i:012}-1-0"));
    }
    store
        .keep(&run("0000000000200-1-0", 10.0), None)
        .expect("keeps");
    store
        .keep(&run("0000000000300-1-0", 10.0), None)
        .expect("keeps");
    let ids = store.ids().expect("lists");
    assert_eq!(ids.len(), MAX_KEPT_RUNS);
    for id in [
        "0000000000100-1-0",
        "0000000000200-1-0",
        "0000000000300-1-0",
    ] {
        assert!(ids.iter().any(|i| i == id), "{id} was pruned");
    }
    assert!(!ids.iter().any(|i| i == "9000000000000-1-0"));
    assert!(!ids.iter().any(|i| i == "9000000000001-1-0"));
}

/// When every other run is named by a baseline, the run just kept is not
/// removed to make room (the store holds one more than the cap).
#[test]
fn the_run_just_kept_is_never_pruned() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::new(dir.path());
    store.prepare().expect("prepares");
    std::fs::create_dir(dir.path().join("baselines")).expect("creates");
    for i in 0..MAX_KEPT_RUNS {
        let id = format!("{i:013}-1-0");
        let bytes = serde_json::to_vec(&run(&id, 10.0)).expect("serialises");
        replace_atomically(&dir.path().join("runs").join(format!("{id}.json")), &bytes)
            .expect("writes");
        let pointer = dir.path().join("baselines").join(format!("b{i}"));
        replace_atomically(&pointer, format!("{id}\n").as_bytes()).expect("writes");
    }
    store
        .keep(&run("0000000009999-1-0", 10.0), None)
        .expect("keeps");
    assert!(store.read("0000000009999-1-0").is_ok());
    assert_eq!(store.ids().expect("lists").len(), MAX_KEPT_RUNS + 1);
}

/// Crafted numbers (1e308, a time of -1e300, an epoch that overflows, an
/// engine that is not there, more epochs than are kept) make the file no
/// kept run: it is skipped with a note, the others are read.
#[test]
fn crafted_numbers_are_refused() {
    let craft: [fn(&mut KeptRow); 6] = [
        |r| r.median_ns = 1e308,
        |r| r.ci95_high = -1e300,
        |r| r.epochs_ns_per_op = vec![vec![12345.0]],
        |r| r.engine = 7,
        |r| r.fuel_per_op = Some(1e300),
        |r| r.epochs_ns_per_op = vec![vec![1.0; MAX_KEPT_EPOCHS + 2]],
    ];
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::new(dir.path());
    store.prepare().expect("prepares");
    for (i, change) in craft.iter().enumerate() {
        let id = format!("{:013}-1-0", i + 1);
        let mut crafted = run(&id, 10.0);
        change(&mut crafted.rows[0]);
        // An epoch beyond single precision: written as text.
        let text = serde_json::to_string(&crafted).expect("serialises");
        let text = text.replace("[[12345.0]]", "[[1e308]]");
        replace_atomically(
            &dir.path().join("runs").join(format!("{id}.json")),
            text.as_bytes(),
        )
        .expect("writes");
        let error = one_line(&store.read(&id).expect_err("refused"));
        assert!(error.contains("numbers the host does not keep"), "{error}");
    }
    store
        .keep(&run("0000000000100-1-0", 10.0), None)
        .expect("keeps");
    let (runs, notes) = store.newest(100, 0, HISTORY_BUDGET);
    assert_eq!(runs.len(), 1);
    assert_eq!(notes.len(), craft.len(), "{notes:?}");
}

/// Forgotten drift is kept in the store: marks add up, those older than a
/// day are dropped, a link in its place is refused, and a store that never
/// forgot anything forgets nothing.
#[test]
fn forgotten_drift_is_kept_and_bounded() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::new(dir.path());
    assert_eq!(store.forgotten().expect("reads"), Forgotten::default());
    let mark = |subject: Option<&str>, until_ms| Forget {
        cpu: "cpu".into(),
        subject: subject.map(str::to_string),
        until_ms,
    };
    store
        .forget(vec![mark(Some("s"), 1_000)], 1_000)
        .expect("forgets");
    let day = FORGET_MARK_AGE_MS;
    store
        .forget(vec![mark(None, day + 2_000)], day + 2_000)
        .expect("forgets");
    let forgotten = store.forgotten().expect("reads");
    // The first mark is over a day old: dropped.
    assert_eq!(forgotten.marks, vec![mark(None, day + 2_000)]);
    assert!(forgotten.forgets(&"cpu".into(), "any", day));
    assert!(!forgotten.forgets(&"cpu".into(), "any", day + 3_000));
    assert!(!forgotten.forgets(&"other".into(), "any", 0));
    std::fs::remove_file(dir.path().join("forgotten.json")).expect("removes");
    std::os::unix::fs::symlink("/etc/passwd", dir.path().join("forgotten.json")).expect("links");
    assert!(store.forgotten().is_err());
}

/// A suite's comparison is kept with its digest and geometric means, no
/// rows, and read back as kept; a run kept before suites were has none.
#[test]
fn keeps_a_suite_comparison() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::new(dir.path());
    let mut suite = fixture("0000000000001-1-0", "x", 1.0);
    suite.command = Measured::Suite;
    suite.rows.clear();
    suite.suite = Some(KeptSuite {
        digest: "abc".into(),
        geometric_means: vec![KeptMean {
            side: "winch".into(),
            reference: "cranelift".into(),
            value: 1.8,
        }],
    });
    store.keep(&suite, None).expect("keeps");
    store
        .keep(&run("0000000000002-1-0", 10.0), None)
        .expect("keeps");
    let (runs, notes) = store.newest(10, 0, HISTORY_BUDGET);
    assert!(notes.is_empty(), "{notes:?}");
    let read = runs
        .iter()
        .find(|r| r.command == Measured::Suite)
        .expect("the suite");
    let kept = read.suite.as_ref().expect("its means");
    assert_eq!(
        (kept.digest.as_str(), kept.geometric_means[0].value),
        ("abc", 1.8)
    );
    assert!(read.rows.is_empty());
    let row_run = runs
        .iter()
        .find(|r| r.command == Measured::Run)
        .expect("the run");
    assert!(row_run.suite.is_none());
    let text =
        std::fs::read_to_string(dir.path().join("runs/0000000000002-1-0.json")).expect("reads");
    assert!(!text.contains("\"suite\""), "{text}");
}
