//! A compile cache on disk: compiled code keyed by the workload's bytes, the
//! engine's configuration and the host's version, so repeated runs skip
//! compilation.
//!
//! An entry is [`MAGIC`], the length of its key and the key it was written
//! for, an HMAC-SHA256 of all that and the payload under this user's secret
//! ([`secret`]), then the payload (wasmtime's serialized module or
//! component). An entry is trusted only when it was written for the key
//! asked for and its MAC matches: one copied over another module's key, or
//! patched, or written without the secret, is refused, like one that is
//! damaged or that wasmtime refuses to load (another version or
//! configuration); it is reported, compiled again and replaced. Entries are
//! read bounded and written atomically ([`crate::util::fs`]). Without a
//! secret (no home folder, or one that others may read) nothing is stored
//! and nothing read is trusted. This module stores and loads; it does not
//! decide what to compile.

use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::OnceLock;

use anyhow::{Context, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use wasmtime::Engine;

use crate::guest::format::{Code, Format};
use crate::util::bytes::hex;
use crate::util::error::one_line;
use crate::util::fs::{Cap, Links, is_not_found, read_bounded, replace_atomically};

pub mod secret;

use secret::Secret;

/// The first bytes of an entry of this layout (`wbcache1` entries held a
/// plain SHA-256 of the payload, which anyone could recompute).
pub const MAGIC: &[u8; 8] = b"wbcache2";
/// The largest entry read: compiled code of a workload far beyond any
/// `--max-file-size` in use.
pub const MAX_ENTRY_BYTES: u64 = 1 << 30;

/// Where the compiled code came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CacheOutcome {
    /// No cache: it is off (`--no-cache`), or the runtime (any but
    /// wasmtime) compiled in its workers, timed there.
    Off,
    /// Compiled now and stored.
    Miss,
    /// Loaded from the cache.
    Hit,
    /// An entry was there but damaged or stale: compiled again and replaced.
    Rebuilt(String),
}

/// The key of `bytes` compiled by `engine`.
pub fn key(engine: &Engine, bytes: &[u8]) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    let digest = Sha256::digest(bytes);
    format!(
        "{}-{:016x}-{}",
        hex(&digest),
        hasher.finish(),
        env!("CARGO_PKG_VERSION")
    )
}

/// This user's secret, read (or made) once per process; why there is none
/// otherwise.
fn user_secret() -> Result<&'static Secret, &'static str> {
    static SECRET: OnceLock<Result<Secret, String>> = OnceLock::new();
    SECRET
        .get_or_init(|| match secret::path() {
            Some(path) => Secret::load_or_make(&path).map_err(|e| one_line(&e)),
            None => Err("neither $XDG_CONFIG_HOME nor $HOME is set".into()),
        })
        .as_ref()
        .map_err(String::as_str)
}

/// Load `bytes` compiled by `engine` from `folder`, or compile with
/// `compile` and store the result.
pub fn load_or_compile(
    folder: &Path,
    engine: &Engine,
    format: Format,
    bytes: &[u8],
    compile: impl FnOnce() -> Result<Code>,
) -> Result<(Code, CacheOutcome)> {
    let compiled = Compiled {
        engine,
        format,
        key: key(engine, bytes),
    };
    compiled.load_or_compile(folder, user_secret(), compile)
}

/// What is compiled, and the key it is cached under.
struct Compiled<'a> {
    engine: &'a Engine,
    format: Format,
    key: String,
}

impl Compiled<'_> {
    /// [`load_or_compile`] with the secret given.
    fn load_or_compile(
        &self,
        folder: &Path,
        secret: Result<&Secret, &str>,
        compile: impl FnOnce() -> Result<Code>,
    ) -> Result<(Code, CacheOutcome)> {
        let path = folder.join(format!("{}.cwasm", self.key));
        let cap = Cap {
            bytes: MAX_ENTRY_BYTES,
            name: "the cap on a cache entry",
        };
        let outcome = match (read_bounded(&path, cap, Links::Refuse), secret) {
            (Err(e), _) if is_not_found(&e) => CacheOutcome::Miss,
            (Err(e), _) => CacheOutcome::Rebuilt(one_line(&e)),
            (Ok(_), Err(why)) => CacheOutcome::Rebuilt(format!("no cache key to check it ({why})")),
            (Ok(entry), Ok(secret)) => match self.load_entry(secret, &entry) {
                Ok(code) => return Ok((code, CacheOutcome::Hit)),
                Err(reason) => CacheOutcome::Rebuilt(reason),
            },
        };
        let code = compile()?;
        // A cache that cannot be written only costs time: compile and go on.
        if let Ok(secret) = secret {
            let _ = self.store(folder, &path, secret, &code);
        }
        Ok((code, outcome))
    }

    /// Check an entry and deserialize it; the error says why it was refused.
    fn load_entry(&self, secret: &Secret, entry: &[u8]) -> std::result::Result<Code, String> {
        let (header, payload) = split(entry).ok_or("not a cache entry of this host")?;
        if header.key != self.key.as_bytes() {
            return Err(format!(
                "written for another key ({})",
                String::from_utf8_lossy(header.key)
            ));
        }
        if !secret.verifies(&[header.signed, payload], header.mac) {
            return Err("checksum mismatch: its MAC under this user's cache key does not match (damaged, or not written by this user)".into());
        }
        // SAFETY: the payload is byte for byte what `serialize` wrote for this
        // key: its HMAC under this user's secret, which no one else can read,
        // matches. wasmtime checks that it was made by this version with a
        // compatible configuration.
        let code = unsafe { Code::deserialize(self.engine, self.format, payload) };
        code.map_err(|e| format!("stale entry ({e})"))
    }

    fn store(&self, folder: &Path, path: &Path, secret: &Secret, code: &Code) -> Result<()> {
        let payload = code.serialize()?;
        std::fs::create_dir_all(folder)
            .with_context(|| format!("creating {}", folder.display()))?;
        let key = self.key.as_bytes();
        let length = u32::try_from(key.len()).context("a cache key of over 4 GiB")?;
        let mut entry = Vec::with_capacity(MAGIC.len() + 4 + key.len() + 32 + payload.len());
        entry.extend_from_slice(MAGIC);
        entry.extend_from_slice(&length.to_le_bytes());
        entry.extend_from_slice(key);
        let mac = secret.mac(&[&entry, &payload]);
        entry.extend_from_slice(&mac);
        entry.extend_from_slice(&payload);
        replace_atomically(path, &entry)
    }
}

/// An entry's header, as stored.
struct Header<'a> {
    /// The key it was written for.
    key: &'a [u8],
    /// Its MAC.
    mac: &'a [u8],
    /// What the MAC covers before the payload: magic, length and key.
    signed: &'a [u8],
}

/// An entry's header and payload; `None` when it is not an entry of this
/// layout.
fn split(entry: &[u8]) -> Option<(Header<'_>, &[u8])> {
    let rest = entry.strip_prefix(MAGIC)?;
    let (length, rest) = rest.split_first_chunk::<4>()?;
    let length = usize::try_from(u32::from_le_bytes(*length)).ok()?;
    let key = rest.get(..length)?;
    let signed = &entry[..MAGIC.len() + 4 + length];
    let (mac, payload) = rest.get(length..)?.split_at_checked(secret::LEN)?;
    Some((Header { key, mac, signed }, payload))
}

#[cfg(test)]
mod fuzz;

#[cfg(test)]
mod tests;
