//! The compile cache's secret: 32 random bytes kept outside the cache's
//! folder (`$XDG_CONFIG_HOME/wasm-bench/cache.key`, else
//! `~/.config/wasm-bench/cache.key`), readable and writable by this user
//! alone, that authenticates every entry (HMAC-SHA256). Whoever can write
//! the cache folder but not read this file cannot make an entry the host
//! accepts. This module makes, reads and uses the secret; what an entry
//! holds is [`super`]'s.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::util::fs::{Cap, Links, is_not_found, read_bounded};

/// Bytes in a secret, and in an HMAC-SHA256.
pub const LEN: usize = 32;

/// The secret that authenticates cache entries.
pub struct Secret([u8; LEN]);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// Where the secret lives; `None` without `$XDG_CONFIG_HOME` or `$HOME`
/// (a relative `$XDG_CONFIG_HOME` is ignored, as the XDG spec says).
pub fn path() -> Option<PathBuf> {
    let config = match crate::util::xdg::base_dir("XDG_CONFIG_HOME") {
        Some(dir) => dir,
        None => PathBuf::from(std::env::var_os("HOME")?).join(".config"),
    };
    Some(config.join("wasm-bench").join("cache.key"))
}

impl Secret {
    /// The secret at `path`, made there first when there is none.
    pub fn load_or_make(path: &Path) -> Result<Secret> {
        match Secret::load(path) {
            Err(e) if is_not_found(&e) => Secret::make(path),
            loaded => loaded,
        }
    }

    /// The secret at `path`: a regular file (not a link) of [`LEN`] bytes,
    /// owned by this user, that no one else may read or write.
    pub fn load(path: &Path) -> Result<Secret> {
        let meta = std::fs::symlink_metadata(path)
            .with_context(|| format!("reading the cache key {}", path.display()))?;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        if meta.uid() != me {
            bail!(
                "the cache key {} belongs to user {}, not to this user ({me})",
                path.display(),
                meta.uid()
            );
        }
        if meta.mode() & 0o077 != 0 {
            bail!(
                "the cache key {} may be read or written by others (mode {:o}; make it 600)",
                path.display(),
                meta.mode() & 0o777
            );
        }
        let cap = Cap {
            bytes: LEN as u64,
            name: "a cache key's size",
        };
        let bytes = read_bounded(path, cap, Links::Refuse)?;
        let secret: [u8; LEN] = bytes.try_into().map_err(|b: Vec<u8>| {
            anyhow::anyhow!(
                "the cache key {} holds {} bytes, not {LEN}",
                path.display(),
                b.len()
            )
        })?;
        Ok(Secret(secret))
    }

    /// Make a new secret at `path` (mode 600, in a folder of mode 700),
    /// complete before it appears there: a process making one at the same
    /// time finds it whole, and the one that comes second reads the first's.
    fn make(path: &Path) -> Result<Secret> {
        let folder = path.parent().unwrap_or(Path::new("."));
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(folder)
            .with_context(|| format!("creating {}", folder.display()))?;
        let mut secret = [0u8; LEN];
        fill_random(&mut secret).context("drawing a cache key from the kernel's random numbers")?;
        let made = (|| -> std::io::Result<()> {
            let mut file = tempfile::Builder::new()
                .prefix(".cache.key")
                .permissions(std::fs::Permissions::from_mode(0o600))
                .tempfile_in(folder)?;
            file.write_all(&secret)?;
            file.as_file().sync_all()?;
            file.persist_noclobber(path).map_err(|e| e.error)?;
            Ok(())
        })();
        match made {
            Ok(()) => Ok(Secret(secret)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Secret::load(path),
            Err(e) => {
                Err(anyhow::Error::new(e)).with_context(|| format!("creating {}", path.display()))
            }
        }
    }

    /// A secret of the given bytes, for tests.
    #[cfg(test)]
    pub fn of(bytes: [u8; LEN]) -> Secret {
        Secret(bytes)
    }

    /// HMAC-SHA256 (RFC 2104) of `parts`, one after the other, under this
    /// secret.
    pub fn mac(&self, parts: &[&[u8]]) -> [u8; LEN] {
        hmac(&self.0, parts)
    }

    /// Whether `mac` is the HMAC of `parts` under this secret, compared in
    /// a time that does not depend on where they differ.
    pub fn verifies(&self, parts: &[&[u8]], mac: &[u8]) -> bool {
        keyed(&self.0, parts).verify_slice(mac).is_ok()
    }
}

/// Fill `buf` from the kernel's random numbers (`getrandom(2)`, as
/// `/dev/urandom` gives them; blocks only before the pool is first seeded).
fn fill_random(buf: &mut [u8]) -> std::io::Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        let rest = &mut buf[filled..];
        // SAFETY: the kernel writes at most `rest.len()` bytes into `rest`.
        let got = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        match got {
            n if n > 0 => filled += n as usize,
            _ => {
                let error = std::io::Error::last_os_error();
                if error.kind() != std::io::ErrorKind::Interrupted {
                    return Err(error);
                }
            }
        }
    }
    Ok(())
}

/// The HMAC-SHA256 of `parts` under `key`, one after the other.
fn keyed(key: &[u8], parts: &[&[u8]]) -> Hmac<Sha256> {
    // HMAC takes a key of any length: a longer one is hashed, a shorter
    // one padded, so this never fails.
    let Ok(mut mac) = <Hmac<Sha256> as Mac>::new_from_slice(key) else {
        unreachable!("HMAC takes a key of any length")
    };
    for part in parts {
        mac.update(part);
    }
    mac
}

/// HMAC-SHA256 of `parts` under `key`.
fn hmac(key: &[u8], parts: &[&[u8]]) -> [u8; LEN] {
    keyed(key, parts).finalize().into_bytes().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::util::bytes::hex;

    /// RFC 4231, test cases 1 and 2.
    #[test]
    fn hmac_matches_the_rfc_vectors() {
        assert_eq!(
            hex(&hmac(&[0x0b; 20], &[b"Hi ", b"There"])),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        assert_eq!(
            hex(&hmac(b"Jefe", &[b"what do ya want for nothing?"])),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        let secret = Secret::of([7; LEN]);
        let mac = secret.mac(&[b"ab", b"c"]);
        assert!(secret.verifies(&[b"abc"], &mac));
        assert!(!secret.verifies(&[b"abd"], &mac));
        assert!(!secret.verifies(&[b"abc"], &mac[..31]));
    }

    #[test]
    fn a_secret_is_made_private_once_and_refused_when_others_may_read_it() -> Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("wasm-bench").join("cache.key");
        let made = Secret::load_or_make(&path)?;
        let meta = std::fs::metadata(&path)?;
        assert_eq!(meta.mode() & 0o777, 0o600);
        let folder = std::fs::metadata(dir.path().join("wasm-bench"))?;
        assert_eq!(folder.mode() & 0o777, 0o700);
        assert_eq!(Secret::load_or_make(&path)?.0, made.0);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))?;
        let said = format!("{:#}", Secret::load(&path).expect_err("refused"));
        assert!(
            said.contains("may be read or written by others (mode 644"),
            "{said}"
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
        std::fs::write(&path, b"short")?;
        let said = format!("{:#}", Secret::load(&path).expect_err("refused"));
        assert!(said.contains("holds 5 bytes, not 32"), "{said}");
        // A link, a FIFO or /dev/zero in its place is refused unread.
        std::fs::remove_file(&path)?;
        std::os::unix::fs::symlink("/dev/zero", &path)?;
        let said = format!("{:#}", Secret::load(&path).expect_err("refused"));
        assert!(said.contains("by others (mode 777"), "{said}");
        std::fs::remove_file(&path)?;
        let made = std::process::Command::new("mkfifo")
            .args(["-m", "600"])
            .arg(&path)
            .status()?;
        assert!(made.success());
        let said = format!("{:#}", Secret::load(&path).expect_err("refused"));
        assert!(said.contains("not a regular file (a FIFO"), "{said}");
        Ok(())
    }
}
