use super::*;

const CAP: Cap = Cap {
    bytes: 1024,
    name: "the test's cap",
};

fn message(result: Result<Vec<u8>>) -> String {
    match result {
        Ok(bytes) => format!("read {} bytes", bytes.len()),
        Err(e) => format!("{e:#}"),
    }
}

#[test]
fn atomic_write_replaces_and_leaves_no_temporary() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("out.json");
    write_atomically(&path, b"first")?;
    write_atomically(&path, b"second")?;
    assert_eq!(std::fs::read(&path)?, b"second");
    let leftovers = std::fs::read_dir(dir.path())?.count();
    assert_eq!(leftovers, 1);
    Ok(())
}

/// A symbolic link planted at the name the old writer used for its
/// temporary file (`.{name}.{pid}.tmp`), or at the target itself, is never
/// followed: the file it points to is left as it was.
#[test]
fn planted_symbolic_links_are_never_followed() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"untouched")?;
    let path = dir.path().join("history.json");
    let planted = dir
        .path()
        .join(format!(".history.json.{}.tmp", std::process::id()));
    std::os::unix::fs::symlink(&victim, &planted)?;
    write_atomically(&path, b"written")?;
    assert_eq!(std::fs::read(&victim)?, b"untouched");
    assert_eq!(std::fs::read(&path)?, b"written");
    assert!(std::fs::symlink_metadata(&planted)?.is_symlink());
    // A link at the target's own name is replaced, not written through.
    let target = dir.path().join("entry.cwasm");
    std::os::unix::fs::symlink(&victim, &target)?;
    write_atomically(&target, b"entry")?;
    assert_eq!(std::fs::read(&victim)?, b"untouched");
    assert!(!std::fs::symlink_metadata(&target)?.is_symlink());
    // A FIFO at a kept file's name is replaced, not written to (which
    // would block).
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status()?;
    assert!(made.success());
    replace_atomically(&fifo, b"kept")?;
    assert_eq!(std::fs::read(&fifo)?, b"kept");
    Ok(())
}

/// Device files are written in place, never replaced (issue: renaming a
/// temporary file over `/dev/null` as root replaced the device).
#[test]
fn device_files_are_written_in_place() -> Result<()> {
    use std::os::unix::fs::FileTypeExt;
    write_atomically(Path::new("/dev/null"), b"discarded")?;
    assert!(std::fs::metadata("/dev/null")?.file_type().is_char_device());
    Ok(())
}

#[test]
fn missing_folder_is_an_error_naming_the_file() {
    let path = Path::new("/nonexistent-folder-wasm-bench/out.json");
    let err = write_atomically(path, b"x").err().map(|e| format!("{e:#}"));
    assert!(err.is_some_and(|e| e.contains("/nonexistent-folder-wasm-bench/out.json")));
}

#[test]
fn a_regular_file_under_the_cap_is_read() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("f");
    std::fs::write(&path, vec![7u8; 1024])?;
    assert_eq!(read_bounded(&path, CAP, Links::Refuse)?.len(), 1024);
    let missing = read_bounded(&dir.path().join("none"), CAP, Links::Follow);
    assert!(missing.as_ref().is_err_and(is_not_found), "{missing:?}");
    Ok(())
}

#[test]
fn a_file_over_the_cap_is_refused_naming_it() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("big");
    std::fs::write(&path, vec![0u8; 1025])?;
    let said = message(read_bounded(&path, CAP, Links::Follow));
    assert!(said.contains(&path.display().to_string()), "{said}");
    assert!(
        said.contains("the file is 1.00 KiB, larger than the test's cap 1 KiB"),
        "{said}"
    );
    Ok(())
}

/// A FIFO is refused at once (opened without blocking), and so is a link
/// to `/dev/zero` (refused as a device when links are followed, as a link
/// when they are not): nothing is read from either.
#[test]
fn a_fifo_and_a_device_are_refused_without_reading() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status()?;
    assert!(made.success());
    let said = message(read_bounded(&fifo, CAP, Links::Follow));
    assert!(said.contains("not a regular file (a FIFO"), "{said}");
    let zero = dir.path().join("zero");
    std::os::unix::fs::symlink("/dev/zero", &zero)?;
    let said = message(read_bounded(&zero, CAP, Links::Follow));
    assert!(said.contains("not a regular file"), "{said}");
    let said = message(read_bounded(&zero, CAP, Links::Refuse));
    assert!(said.contains("a symbolic link: refused"), "{said}");
    let said = message(read_bounded(dir.path(), CAP, Links::Follow));
    assert!(said.contains("a folder"), "{said}");
    Ok(())
}

#[test]
fn a_head_is_read_of_a_file_of_any_size_and_only_of_a_regular_file() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("big.log");
    std::fs::write(&path, vec![b'x'; 10_000])?;
    assert_eq!(read_head(&path, 100, Links::Refuse)?.len(), 100);
    assert_eq!(read_head(&path, 1 << 20, Links::Refuse)?.len(), 10_000);
    let text = message(read_head(Path::new("/dev/zero"), 100, Links::Follow));
    assert!(text.contains("not a regular file"), "{text}");
    let link = dir.path().join("link.log");
    std::os::unix::fs::symlink(&path, &link)?;
    let text = message(read_head(&link, 100, Links::Refuse));
    assert!(text.contains("a symbolic link: refused"), "{text}");
    Ok(())
}

#[test]
fn a_stream_opened_regular_is_checked_against_the_cap_first() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("library.so");
    std::fs::write(&path, vec![0u8; 2048])?;
    let text = open_regular(&path, CAP, Links::Follow).map(|_| ()).err();
    let text = text.map(|e| format!("{e:#}")).unwrap_or_default();
    assert!(text.contains("larger than the test's cap"), "{text}");
    std::fs::write(&path, vec![0u8; 512])?;
    assert_eq!(open_regular(&path, CAP, Links::Follow)?.1, 512);
    Ok(())
}

#[test]
fn a_system_file_is_read_to_its_end_though_it_says_it_is_empty() {
    // /proc files report a size of 0.
    let stat = read_system_text("/proc/self/stat").unwrap_or_default();
    assert!(stat.contains(')'), "{stat}");
    assert!(read_system_text("/proc/no such file").is_none());
}
