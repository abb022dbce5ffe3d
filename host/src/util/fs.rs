//! Files on disk, read and written the one way every stage uses: a file the
//! host did not just write is read through [`read_bounded`] (a regular file,
//! under a size cap, read no further than the cap), and a file is written
//! through [`replace_atomically`] (a fresh temporary sibling created
//! exclusively, then a rename; [`write_atomically`] for a file the user
//! named, which may be a device), so that a crash never leaves half a file
//! and a symbolic link planted beside the target is never followed.

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::util::bytes::format_bytes;

/// Whether the last component of a path read may be a symbolic link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Followed: a file the user names (a workload, a suite, a report).
    Follow,
    /// Refused: a file the host itself keeps (a cache entry, the history, a
    /// key), where a link can only have been planted.
    Refuse,
}

/// The cap on a file read, and how a refusal names it.
#[derive(Debug, Clone, Copy)]
pub struct Cap<'a> {
    /// The largest size read, in bytes.
    pub bytes: u64,
    /// What the cap is, as a refusal names it (`--max-file-size`, "the cap
    /// on a run history").
    pub name: &'a str,
}

/// The bytes of `path`, read without trusting it: opened without blocking
/// (a FIFO does not hang the host) and without following a final symbolic
/// link when `links` refuses them, checked on the opened handle to be a
/// regular file of at most `cap.bytes` (a device such as `/dev/zero` is
/// refused before a byte is read), then read no further than one byte past
/// the cap (a file growing meanwhile is refused too). Errors keep the
/// operating system's error in their chain: [`is_not_found`] tells a missing
/// file apart.
pub fn read_bounded(path: &Path, cap: Cap, links: Links) -> Result<Vec<u8>> {
    let (file, len) = open_regular(path, cap, links)?;
    read_open(file, len, cap).with_context(|| format!("reading {}", path.display()))
}

/// `path` opened for reading as [`read_bounded`] opens it, checked the same
/// way (a regular file of at most `cap.bytes`), with its size: for a reader
/// that streams the file (a hash) rather than holding it. Read it no further
/// than the cap (`Read::take`).
pub fn open_regular(path: &Path, cap: Cap, links: Links) -> Result<(File, u64)> {
    let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC;
    if links == Links::Refuse {
        flags |= libc::O_NOFOLLOW;
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
        .map_err(
            |e| match e.raw_os_error() == Some(libc::ELOOP) && links == Links::Refuse {
                true => {
                    anyhow::Error::new(e).context("a symbolic link: refused without following it")
                }
                false => anyhow::Error::new(e).context("cannot read the file"),
            },
        )
        .with_context(|| format!("reading {}", path.display()))?;
    let len = check_regular(&file, cap).with_context(|| format!("reading {}", path.display()))?;
    Ok((file, len))
}

/// The bytes of `path`, opened as [`open_regular`] opens it, streamed into
/// `sink` (a hash) without being held: how many there were. Refused, after
/// the cap's worth, when the file grew past `cap.bytes` while read.
pub fn stream_bounded(path: &Path, cap: Cap, links: Links, sink: &mut impl Write) -> Result<u64> {
    let (file, _) = open_regular(path, cap, links)?;
    let read = std::io::copy(&mut file.take(cap.bytes.saturating_add(1)), sink)
        .with_context(|| format!("reading {}", path.display()))?;
    if read > cap.bytes {
        bail!(
            "{}: the file grew past {} while it was read",
            path.display(),
            cap.name
        );
    }
    Ok(read)
}

/// The first `bytes` bytes of `path` (all of it when shorter), opened as
/// [`read_bounded`] opens a file: what a file of any size begins with.
pub fn read_head(path: &Path, bytes: u64, links: Links) -> Result<Vec<u8>> {
    let cap = Cap {
        bytes: u64::MAX,
        name: "no cap",
    };
    let (file, _) = open_regular(path, cap, links)?;
    let mut head = Vec::new();
    // The `take` is the bound.
    #[allow(clippy::disallowed_methods)]
    file.take(bytes)
        .read_to_end(&mut head)
        .with_context(|| format!("reading {}", path.display()))?;
    Ok(head)
}

/// The text of a small file the kernel makes (`/proc/cpuinfo`,
/// `/proc/PID/statm`, a `/sys` attribute), read through [`read_bounded`]
/// with a cap of [`SYSTEM_FILE_BYTES`] (such files report a size of 0 or
/// one page, and are read to their end); `None` when it cannot be read or
/// is not UTF-8.
pub fn read_system_text(path: impl AsRef<Path>) -> Option<String> {
    let cap = Cap {
        bytes: SYSTEM_FILE_BYTES,
        name: "the cap on a system file",
    };
    String::from_utf8(read_bounded(path.as_ref(), cap, Links::Follow).ok()?).ok()
}

/// The largest `/proc` or `/sys` file read: `/proc/cpuinfo` of a machine
/// of a thousand cores fits.
pub const SYSTEM_FILE_BYTES: u64 = 4 << 20;

/// That the opened `file` is a regular file of at most `cap.bytes`: its
/// size.
fn check_regular(file: &File, cap: Cap) -> Result<u64> {
    let meta = file.metadata().context("cannot read its metadata")?;
    if !meta.is_file() {
        let what = match meta.is_dir() {
            true => "a folder",
            false => "a FIFO, socket or device",
        };
        bail!("not a regular file ({what}): refused without reading it");
    }
    if meta.len() > cap.bytes {
        bail!(
            "the file is {}, larger than {} {}",
            format_bytes(meta.len()),
            cap.name,
            format_bytes(cap.bytes)
        );
    }
    Ok(meta.len())
}

/// [`read_bounded`] once the file is open and checked (`len`: its size).
fn read_open(file: File, len: u64, cap: Cap) -> Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(len as usize);
    // The one unbounded-looking read: `take` bounds it one byte past the cap.
    #[allow(clippy::disallowed_methods)]
    file.take(cap.bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .context("cannot read it")?;
    if bytes.len() as u64 > cap.bytes {
        bail!(
            "the file grew past {} {} while it was read",
            cap.name,
            format_bytes(cap.bytes)
        );
    }
    Ok(bytes)
}

/// Whether `error` says that a file did not exist.
pub fn is_not_found(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::NotFound)
    })
}

/// Write `bytes` to `path`, a file the user named (an export): something
/// that is not a regular file there (`/dev/null`, `/dev/stdout`, a pipe) is
/// written in place, since renaming over it would replace it; anything
/// else as [`replace_atomically`] does.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Ok(meta) = std::fs::metadata(path)
        && !meta.is_file()
    {
        if meta.is_dir() {
            bail!("writing {}: it is a folder", path.display());
        }
        return std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|mut f| f.write_all(bytes))
            .with_context(|| format!("writing {}", path.display()));
    }
    replace_atomically(path, bytes)
}

/// Write `bytes` to `path`, a file the host keeps (a cache entry, the run
/// history, a baseline), through a temporary file in the same folder and a
/// rename. The temporary file has an unpredictable name and is created
/// exclusively (`O_EXCL`): a symbolic link planted at any name in the
/// folder is neither followed nor overwritten, and the rename replaces
/// whatever is at `path` itself (a link, a FIFO) rather than writing
/// through it.
pub fn replace_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .with_context(|| format!("{}: not a file name", path.display()))?;
    let result = (|| -> Result<()> {
        let mut prefix = std::ffi::OsString::from(".");
        prefix.push(name);
        let mut file = tempfile::Builder::new()
            .prefix(&prefix)
            .suffix(".tmp")
            // As `File::create` would: the umask decides.
            .permissions(std::fs::Permissions::from_mode(0o666))
            .tempfile_in(folder)?;
        file.write_all(bytes)?;
        file.as_file().sync_all()?;
        // A failed rename drops the temporary file, which removes it.
        file.persist(path)?;
        Ok(())
    })();
    result.with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
#[path = "fs_tests.rs"]
mod tests;
