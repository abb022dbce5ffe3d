use super::*;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("writes");
    path
}

fn error_of(result: Result<Vec<PathBuf>>) -> String {
    match result {
        Ok(files) => format!("found {files:?}"),
        Err(e) => format!("{e:#}"),
    }
}

#[test]
fn a_suite_that_lists_itself_is_an_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let suite = write(dir.path(), "self.suite", "self.suite\n");
    let said = error_of(discover(&[suite]));
    assert!(
        said.contains("self.suite: the suite lists itself"),
        "{said}"
    );
}

#[test]
fn two_suites_that_list_each_other_are_an_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    write(dir.path(), "a.wat", "(module)");
    let a = write(dir.path(), "a.suite", "a.wat\nb.suite\n");
    write(dir.path(), "b.suite", "a.suite\n");
    let said = error_of(discover(&[a]));
    assert!(said.contains("the suite lists itself"), "{said}");
    assert!(
        said.contains("a.suite -> ") && said.contains("b.suite -> "),
        "{said}"
    );
}

#[test]
fn suites_nest_no_deeper_than_the_limit() {
    let dir = tempfile::tempdir().expect("temp dir");
    write(dir.path(), "w.wat", "(module)");
    for depth in 0..=MAX_SUITE_DEPTH {
        write(
            dir.path(),
            &format!("{depth}.suite"),
            &format!("{}.suite\n", depth + 1),
        );
    }
    write(
        dir.path(),
        &format!("{}.suite", MAX_SUITE_DEPTH + 1),
        "w.wat\n",
    );
    let said = error_of(discover(&[dir.path().join("0.suite")]));
    assert!(said.contains("deeper than 16 levels"), "{said}");
    // One level less is accepted.
    let found = discover(&[dir.path().join("2.suite")]).expect("within the limit");
    assert_eq!(found, vec![dir.path().join("w.wat")]);
}

/// A file named on the command line and again through a suite, many times
/// through a suite, and again through a second suite (and a suite named
/// twice) is measured once; one named twice on the command line itself is
/// measured twice (a file compared with itself).
#[test]
fn a_file_named_more_than_once_is_kept_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let wat = write(dir.path(), "w.wat", "(module)");
    let other = write(dir.path(), "o.wat", "(module)");
    let many = "w.wat\n".repeat(10_000);
    let a = write(dir.path(), "a.suite", &many);
    let b = write(dir.path(), "b.suite", "./w.wat\no.wat\na.suite\n");
    let found = discover(&[wat.clone(), a.clone(), b, a]).expect("found");
    assert_eq!(found, vec![wat.clone(), other]);
    let found = discover(&[wat.clone(), wat.clone()]).expect("found");
    assert_eq!(found, vec![wat.clone(), wat]);
}

#[test]
fn a_fifo_or_device_in_a_suites_place_is_refused_without_blocking() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("fifo.suite");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()));
    let said = error_of(discover(&[fifo]));
    assert!(
        said.contains("cannot read the suite") && said.contains("not a regular file"),
        "{said}"
    );
    let zero = dir.path().join("zero.suite");
    std::os::unix::fs::symlink("/dev/zero", &zero).expect("links");
    let said = error_of(discover(&[zero]));
    assert!(said.contains("not a regular file"), "{said}");
    let big = write(dir.path(), "big.suite", &"x.wat\n".repeat(200_000));
    let said = error_of(discover(&[big]));
    assert!(
        said.contains("larger than the cap on a suite 1 MiB"),
        "{said}"
    );
}

#[test]
fn a_fifo_or_device_in_a_workloads_place_is_refused_without_blocking() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("fifo.wasm");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()));
    let said = read_binary(&fifo, 1 << 20).map_err(|e| format!("{e:#}"));
    assert!(
        said.as_ref()
            .is_err_and(|e| e.contains("not a regular file")),
        "{said:?}"
    );
    let zero = dir.path().join("zero.wasm");
    std::os::unix::fs::symlink("/dev/zero", &zero).expect("links");
    let said = read_binary(&zero, 1 << 20).map_err(|e| format!("{e:#}"));
    assert!(
        said.as_ref()
            .is_err_and(|e| e.contains("not a regular file")),
        "{said:?}"
    );
}

#[test]
fn a_folder_s_wat_beside_its_wasm_is_one_row_the_binary() -> Result<()> {
    let dir = tempfile::tempdir()?;
    write(dir.path(), "x.wasm", "");
    write(dir.path(), "x.wat", "(module)");
    write(dir.path(), "y.wat", "(module)");
    let found = discover(&[dir.path().to_path_buf()])?;
    assert_eq!(
        found,
        vec![dir.path().join("x.wasm"), dir.path().join("y.wat")]
    );
    Ok(())
}
