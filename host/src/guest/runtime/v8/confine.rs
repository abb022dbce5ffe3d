//! The sandbox of a program under V8, since `node:wasi` is none (Node's
//! own documentation says so): the program's folder copied into a private
//! scratch folder ([`Scratch`]: regular files and folders only, no link,
//! under a size cap), which is all the program is given and which goes
//! with the row; and, where the kernel has Landlock, the `node` process
//! confined to it ([`Confinement`]): the copy read-only, the files its
//! output goes to and the `--dir` grants writable, the system's folders
//! readable (Node needs its libraries), nothing else reachable. Without
//! Landlock, what the program writes into its copy is held to
//! [`WRITE_LIMIT`] ([`Scratch::written_bytes`], watched during each
//! iteration). Each file `node` writes is held to the output cap by its
//! file-size limit (`RLIMIT_FSIZE`, set in [`super::program`]).

use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::util::bytes::format_bytes;
use crate::util::fs::{Cap, Links, open_regular};

/// The most bytes of the program's folder copied into its scratch folder.
pub const COPY_LIMIT: u64 = 1 << 30;
/// The most files and folders copied.
const COPY_ENTRIES: usize = 100_000;
/// The most bytes a program may add to its scratch folder where Landlock
/// does not make it read-only.
pub const WRITE_LIMIT: u64 = 256 << 20;

/// A program's private copy of its folder, and the folder its output goes
/// to; removed with it.
pub struct Scratch {
    root: tempfile::TempDir,
    /// The bytes copied.
    copied: u64,
}

impl Scratch {
    /// Copy `folder` into a new scratch folder.
    pub fn new(folder: &Path) -> Result<Self> {
        let root = tempfile::Builder::new()
            .prefix("wasm-bench-v8-")
            .tempdir()
            .context("making the program's scratch folder")?;
        let scratch = Scratch { root, copied: 0 };
        std::fs::create_dir(scratch.output_folder())
            .and_then(|()| std::fs::create_dir(scratch.folder()))
            .context("making the program's scratch folder")?;
        let mut copy = Copy {
            bytes: 0,
            entries: 0,
        };
        copy.folder(folder, &scratch.folder())
            .with_context(|| format!("copying {} for the program", folder.display()))?;
        Ok(Scratch {
            copied: copy.bytes,
            ..scratch
        })
    }

    /// The copy of the program's folder.
    pub fn folder(&self) -> PathBuf {
        self.root.path().join("folder")
    }

    /// The folder the program's stdout and stderr go to.
    pub fn output_folder(&self) -> PathBuf {
        self.root.path().join("output")
    }

    /// How many bytes the copy holds beyond what was copied (0 if fewer).
    pub fn written_bytes(&self) -> u64 {
        tree_bytes(&self.folder()).saturating_sub(self.copied)
    }
}

/// A copy in progress, and what it has copied so far.
struct Copy {
    bytes: u64,
    entries: usize,
}

impl Copy {
    /// Copy the regular files and folders of `from` into `to` (which
    /// exists); links and other files are left out.
    fn folder(&mut self, from: &Path, to: &Path) -> Result<()> {
        for entry in
            std::fs::read_dir(from).with_context(|| format!("listing {}", from.display()))?
        {
            let entry = entry.with_context(|| format!("listing {}", from.display()))?;
            self.entries += 1;
            if self.entries > COPY_ENTRIES {
                bail!("more than {COPY_ENTRIES} files");
            }
            let kind = entry.file_type()?;
            let target = to.join(entry.file_name());
            if kind.is_dir() {
                std::fs::create_dir(&target)?;
                self.folder(&entry.path(), &target)?;
            } else if kind.is_file() {
                self.file(&entry.path(), &target)?;
            }
        }
        Ok(())
    }

    /// Copy the regular file `from` to the new file `to`.
    fn file(&mut self, from: &Path, to: &Path) -> Result<()> {
        let cap = Cap {
            bytes: COPY_LIMIT - self.bytes.min(COPY_LIMIT),
            name: "the cap on a program's folder under v8,",
        };
        let (source, len) = open_regular(from, cap, Links::Refuse)?;
        let mut target = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(to)
            .with_context(|| format!("creating {}", to.display()))?;
        let copied = std::io::copy(&mut std::io::Read::take(source, len), &mut target)
            .and_then(|n| target.flush().map(|()| n))
            .with_context(|| format!("copying {}", from.display()))?;
        self.bytes += copied;
        Ok(())
    }
}

/// The bytes of the regular files under `folder` (links not followed).
fn tree_bytes(folder: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.file_type() {
            Ok(kind) if kind.is_dir() => tree_bytes(&entry.path()),
            Ok(kind) if kind.is_file() => entry.metadata().map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}

/// Landlock's access rights to files (`linux/landlock.h`).
mod access {
    pub const EXECUTE: u64 = 1 << 0;
    pub const WRITE_FILE: u64 = 1 << 1;
    pub const READ_FILE: u64 = 1 << 2;
    pub const READ_DIR: u64 = 1 << 3;
    /// Every right of ABI 1 (removing and making files of every kind).
    pub const ABI_1: u64 = (1 << 13) - 1;
    /// ABI 2: linking or renaming a file into another folder.
    pub const REFER: u64 = 1 << 13;
    /// ABI 3: truncating a file.
    pub const TRUNCATE: u64 = 1 << 14;
    /// Reading a folder and what is in it.
    pub const READ: u64 = EXECUTE | READ_FILE | READ_DIR;
}

/// `LANDLOCK_CREATE_RULESET_VERSION`: ask the ABI's version.
const CREATE_RULESET_VERSION: u32 = 1;
/// `LANDLOCK_RULE_PATH_BENEATH`.
const RULE_PATH_BENEATH: libc::c_int = 1;

/// `struct landlock_ruleset_attr` of ABI 1 (a later kernel reads the size).
#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
}

/// `struct landlock_path_beneath_attr`.
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// The system's folders `node` reads (its libraries, its configuration,
/// `/proc`, `/dev`), where they exist.
const SYSTEM_FOLDERS: [&str; 11] = [
    "/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc", "/proc", "/sys", "/dev", "/opt",
];

/// A Landlock ruleset for one `node` process, or nothing where the kernel
/// has no Landlock.
pub struct Confinement {
    ruleset: Option<OwnedFd>,
}

impl Confinement {
    /// The ruleset of a `node` at `node` that reads `read` and writes
    /// `write` (folders), and nothing else but the system's folders and
    /// its own; none where Landlock is not there.
    pub fn new(node: &Path, read: &[&Path], write: &[&Path]) -> Result<Self> {
        let Some(abi) = abi() else {
            return Ok(Confinement { ruleset: None });
        };
        let all = access::ABI_1
            | if abi >= 2 { access::REFER } else { 0 }
            | if abi >= 3 { access::TRUNCATE } else { 0 };
        let attr = RulesetAttr {
            handled_access_fs: all,
        };
        // SAFETY: `attr` is a valid ruleset attribute of the size given.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                &attr as *const RulesetAttr,
                std::mem::size_of::<RulesetAttr>(),
                0u32,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error()).context("making a Landlock ruleset");
        }
        // SAFETY: the kernel just made this descriptor, owned by no one else.
        let ruleset = unsafe { OwnedFd::from_raw_fd(fd as RawFd) };
        let readable = SYSTEM_FOLDERS
            .iter()
            .map(PathBuf::from)
            .chain(node_folders(node))
            .chain(read.iter().map(|p| p.to_path_buf()));
        for folder in readable.filter(|p| p.exists()) {
            allow(&ruleset, &folder, access::READ)?;
        }
        let file_rights = access::READ_FILE | access::WRITE_FILE | (all & access::TRUNCATE);
        allow(&ruleset, Path::new("/dev/null"), file_rights)?;
        for folder in write {
            allow(&ruleset, folder, all)?;
        }
        Ok(Confinement {
            ruleset: Some(ruleset),
        })
    }

    /// Whether the kernel confines `node` (it has Landlock).
    pub fn active(&self) -> bool {
        self.ruleset.is_some()
    }

    /// The ruleset's descriptor, for [`restrict_self`] in the child.
    pub fn ruleset_fd(&self) -> Option<RawFd> {
        self.ruleset.as_ref().map(AsRawFd::as_raw_fd)
    }
}

/// The folders of the `node` at `node` (and of the file it links to): its
/// own, and the prefix above a `bin` folder (`/usr/local`), where its
/// libraries are.
fn node_folders(node: &Path) -> Vec<PathBuf> {
    let real = std::fs::canonicalize(node).ok();
    [Some(node.to_path_buf()), real]
        .into_iter()
        .flatten()
        .filter_map(|path| {
            let folder = path.parent()?.to_path_buf();
            let prefix = match folder.file_name() {
                Some(name) if name == "bin" => folder.parent().map(Path::to_path_buf),
                _ => None,
            };
            Some([Some(folder), prefix])
        })
        .flatten()
        .flatten()
        .filter(|p| p.parent().is_some())
        .collect()
}

/// Landlock's ABI version here, or None where the kernel has none.
fn abi() -> Option<i64> {
    // SAFETY: asking the version passes no memory.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    (version >= 1).then_some(version)
}

/// Allow `rights` beneath `path` (a file's rights only, for a file).
fn allow(ruleset: &OwnedFd, path: &Path, rights: u64) -> Result<()> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_CLOEXEC)
        .open(path)
        .with_context(|| format!("opening {} for its Landlock rule", path.display()))?;
    let rights = match file.metadata().is_ok_and(|m| m.is_dir()) {
        true => rights,
        false => {
            rights & (access::EXECUTE | access::READ_FILE | access::WRITE_FILE | access::TRUNCATE)
        }
    };
    let rule = PathBeneathAttr {
        allowed_access: rights,
        parent_fd: file.as_raw_fd(),
    };
    // SAFETY: `rule` is a valid path-beneath attribute; both descriptors
    // are open.
    let done = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset.as_raw_fd(),
            RULE_PATH_BENEATH,
            &rule as *const PathBeneathAttr,
            0u32,
        )
    };
    if done != 0 {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("the Landlock rule of {}", path.display()));
    }
    Ok(())
}

/// Confine the calling process (a child between fork and exec) by the
/// ruleset `fd`: no new privileges, then Landlock. Async-signal-safe.
pub fn restrict_self(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: prctl and landlock_restrict_self take no memory of the process.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Why a program's scratch folder outgrew [`WRITE_LIMIT`], in words.
pub fn over_limit(written: u64) -> String {
    format!(
        "the program wrote {} into its folder, over the {} a program may write under v8: node was killed",
        format_bytes(written),
        format_bytes(WRITE_LIMIT)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::fs::{Links, read_head};

    #[test]
    fn the_copy_leaves_links_out_and_goes_with_the_scratch() {
        let outside = tempfile::tempdir().expect("tempdir");
        let folder = tempfile::tempdir().expect("tempdir");
        std::fs::write(folder.path().join("input.txt"), "data").expect("write");
        std::fs::create_dir(folder.path().join("sub")).expect("mkdir");
        std::fs::write(folder.path().join("sub/more.txt"), "more").expect("write");
        std::os::unix::fs::symlink(outside.path(), folder.path().join("out")).expect("link");
        let scratch = Scratch::new(folder.path()).expect("copied");
        let copy = scratch.folder();
        assert_eq!(
            read_head(&copy.join("input.txt"), 16, Links::Refuse).expect("read"),
            b"data"
        );
        assert_eq!(
            read_head(&copy.join("sub/more.txt"), 16, Links::Refuse).expect("read"),
            b"more"
        );
        assert!(std::fs::symlink_metadata(copy.join("out")).is_err());
        assert_eq!(scratch.written_bytes(), 0);
        std::fs::write(copy.join("new.txt"), "12345").expect("write");
        assert_eq!(scratch.written_bytes(), 5);
        let root = scratch.root.path().to_path_buf();
        drop(scratch);
        assert!(!root.exists());
    }
}
