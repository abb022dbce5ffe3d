//! The modules of kept runs, by content: each measured module's bytes kept
//! once in `<store>/modules/<sha256>.wasm` (the binary compiled: a `.wat`
//! already converted), named from a kept row by a [`ModuleRef`], so that
//! `host history --confirm` can measure two of them side by side after the
//! files themselves are gone.
//!
//! Bounded: a module over [`MAX_MODULE_BYTES`] is not kept, and past
//! [`MODULES_BUDGET`] in all the least recently kept are removed, except
//! those a caller protects (the baselines' and the run just kept). Every
//! module is written through [`replace_atomically`] and read back through
//! [`read_bounded`] (no link, under the cap), and its bytes are checked
//! against its name before use.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

use crate::util::bytes::sha256;
use crate::util::foreign::Foreign;
use crate::util::fs::{Cap, Links, read_bounded, replace_atomically};

/// The largest module kept.
pub const MAX_MODULE_BYTES: u64 = 64 << 20;
/// The most bytes of modules kept in a store.
pub const MODULES_BUDGET: u64 = 1 << 30;
/// The most folder entries looked at when listing the modules.
const MAX_ENTRIES: usize = 100_000;

/// A measured module, as a run's row carries it to the store (not
/// exported).
#[derive(Clone)]
pub struct Module {
    /// The binary that was compiled.
    pub bytes: Arc<[u8]>,
    /// Its file's name without extension, which names its benchmarks.
    pub file: String,
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Module({} bytes)", self.bytes.len())
    }
}

/// A kept row's module: its content hash, and its file's name without
/// extension.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModuleRef {
    pub sha256: String,
    pub file: Foreign,
}

impl ModuleRef {
    /// The first 12 hex digits of its hash, for a table.
    pub fn short(&self) -> String {
        self.sha256.chars().take(12).collect()
    }

    /// A file name (without extension) to write it under: its own when
    /// plain (letters, digits, `-`, `_`, `.`, not starting with `.`, at
    /// most 100 bytes), else `module`.
    pub fn file_name(&self) -> String {
        // A file name to write, checked before use.
        #[allow(clippy::disallowed_methods)]
        let file = self.file.unescaped();
        let plain = !file.is_empty()
            && file.len() <= 100
            && !file.starts_with('.')
            && file
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        match plain {
            true => file.to_string(),
            false => "module".to_string(),
        }
    }
}

/// Whether `name` is a hex SHA-256.
fn valid_sha256(name: &str) -> bool {
    name.len() == 64 && name.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f'))
}

/// The modules folder of a store.
#[derive(Debug, Clone)]
pub struct Modules {
    folder: PathBuf,
}

impl Modules {
    /// The modules of the store in `store`.
    pub fn of_store(store: &Path) -> Self {
        Modules {
            folder: store.join("modules"),
        }
    }

    fn path(&self, sha256: &str) -> PathBuf {
        self.folder.join(format!("{sha256}.wasm"))
    }

    /// Keep `module` (once: a module already kept is marked as kept now).
    pub fn keep(&self, module: &Module) -> Result<ModuleRef> {
        let bytes = module.bytes.len() as u64;
        if bytes > MAX_MODULE_BYTES {
            bail!(
                "a module of {} is not kept (the cap is {})",
                crate::util::bytes::format_bytes(bytes),
                crate::util::bytes::format_bytes(MAX_MODULE_BYTES)
            );
        }
        let sha256 = sha256(&module.bytes);
        let path = self.path(&sha256);
        if !self.touch(&path, bytes) {
            std::fs::create_dir_all(&self.folder).map_err(|e| {
                anyhow::Error::new(e).context(format!("creating {}", self.folder.display()))
            })?;
            replace_atomically(&path, &module.bytes)?;
        }
        Ok(ModuleRef {
            sha256,
            file: Foreign::new(&module.file),
        })
    }

    /// Mark the regular file at `path` (not a link), of `bytes` bytes, as
    /// kept now; false when there is none such.
    fn touch(&self, path: &Path, bytes: u64) -> bool {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path);
        file.and_then(|f| {
            let meta = f.metadata()?;
            if !meta.is_file() || meta.len() != bytes {
                return Err(std::io::ErrorKind::InvalidData.into());
            }
            f.set_modified(std::time::SystemTime::now())
        })
        .is_ok()
    }

    /// The bytes of `module`, checked against its hash.
    pub fn read(&self, module: &ModuleRef) -> Result<Vec<u8>> {
        if !valid_sha256(&module.sha256) {
            bail!("`{}` is not the hash of a kept module", module.short());
        }
        let cap = Cap {
            bytes: MAX_MODULE_BYTES,
            name: "the cap on a kept module",
        };
        let bytes = read_bounded(&self.path(&module.sha256), cap, Links::Refuse)?;
        if sha256(&bytes) != module.sha256 {
            bail!(
                "the kept module {} does not hold what it was kept with",
                module.short()
            );
        }
        Ok(bytes)
    }

    /// Remove the least recently kept modules beyond `budget` bytes,
    /// except those whose hash `protected` lists (asked only when over the
    /// budget); returns how many went.
    pub fn prune(&self, budget: u64, protected: impl FnOnce() -> Vec<String>) -> Result<usize> {
        let entries = match std::fs::read_dir(&self.folder) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => {
                return Err(
                    anyhow::Error::new(e).context(format!("listing {}", self.folder.display()))
                );
            }
        };
        let mut kept: Vec<(std::time::SystemTime, u64, String)> = entries
            .take(MAX_ENTRIES)
            .filter_map(|e| {
                let e = e.ok()?;
                let name = e.file_name().into_string().ok()?;
                let sha = name.strip_suffix(".wasm").filter(|s| valid_sha256(s))?;
                let meta = e.metadata().ok().filter(|m| m.is_file())?;
                Some((meta.modified().ok()?, meta.len(), sha.to_string()))
            })
            .collect();
        let mut total: u64 = kept.iter().map(|k| k.1).sum();
        if total <= budget {
            return Ok(0);
        }
        let protected = protected();
        kept.sort();
        let mut removed = 0;
        for (_, bytes, sha) in kept {
            if total <= budget {
                break;
            }
            if protected.contains(&sha) {
                continue;
            }
            if std::fs::remove_file(self.path(&sha)).is_ok() {
                total -= bytes;
                removed += 1;
            }
        }
        Ok(removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(bytes: &[u8]) -> Module {
        Module {
            bytes: Arc::from(bytes),
            file: "w".to_string(),
        }
    }

    /// A module is kept once by content and read back checked; one changed
    /// on disk is refused; a link in its place is refused.
    #[test]
    fn modules_are_kept_by_content_and_checked() -> Result<()> {
        let dir = tempfile::tempdir()?;
        let modules = Modules::of_store(dir.path());
        let one = modules.keep(&module(b"\0asm one"))?;
        let again = modules.keep(&module(b"\0asm one"))?;
        assert_eq!(one, again);
        assert_eq!(std::fs::read_dir(dir.path().join("modules"))?.count(), 1);
        assert_eq!(modules.read(&one)?, b"\0asm one");
        std::fs::write(modules.path(&one.sha256), b"\0asm two")?;
        assert!(modules.read(&one).is_err());
        std::fs::remove_file(modules.path(&one.sha256))?;
        std::os::unix::fs::symlink("/etc/passwd", modules.path(&one.sha256))?;
        assert!(modules.read(&one).is_err());
        let hostile = ModuleRef {
            sha256: "../../etc/passwd".into(),
            file: "../x".into(),
        };
        assert!(modules.read(&hostile).is_err());
        assert_eq!(hostile.file_name(), "module");
        Ok(())
    }

    /// Past the budget, the least recently kept go first; protected ones
    /// stay.
    #[test]
    fn pruning_keeps_the_protected_and_the_recent() -> Result<()> {
        let dir = tempfile::tempdir()?;
        let modules = Modules::of_store(dir.path());
        let old = modules.keep(&module(&[1; 100]))?;
        let base = modules.keep(&module(&[2; 100]))?;
        let new = modules.keep(&module(&[3; 100]))?;
        let past = std::time::SystemTime::now() - std::time::Duration::from_secs(100);
        for (m, age) in [(&old, 3), (&base, 2), (&new, 1)] {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(modules.path(&m.sha256))?;
            f.set_modified(past - std::time::Duration::from_secs(age))?;
        }
        assert_eq!(modules.prune(300, || unreachable!())?, 0);
        let removed = modules.prune(150, || vec![base.sha256.clone()])?;
        assert_eq!(removed, 2);
        assert!(modules.read(&base).is_ok());
        assert!(modules.read(&old).is_err() && modules.read(&new).is_err());
        Ok(())
    }
}
