//! A compile cache on disk: compiled code keyed by the workload's bytes, the
//! engine's configuration and the host's version, so repeated runs skip
//! compilation.
//!
//! An entry is `MAGIC`, the SHA-256 of the payload, then the payload
//! (wasmtime's serialized module or component). An entry whose checksum does
//! not match, or that wasmtime refuses to load (another version or
//! configuration), is reported, rebuilt and overwritten: it is never
//! trusted. Entries are written atomically. This module stores and loads; it
//! does not decide what to compile.

use std::hash::{Hash, Hasher};
use std::path::Path;

use anyhow::{Context, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use wasmtime::Engine;

use crate::guest::format::{Code, Format};
use crate::util::fs::write_atomically;

const MAGIC: &[u8; 8] = b"wbcache1";

/// Where the compiled code came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CacheOutcome {
    /// The cache is off (`--no-cache`).
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

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
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
    let path = folder.join(format!("{}.cwasm", key(engine, bytes)));
    let mut outcome = CacheOutcome::Miss;
    if let Ok(entry) = std::fs::read(&path) {
        match load_entry(engine, format, &entry) {
            Ok(code) => return Ok((code, CacheOutcome::Hit)),
            Err(reason) => outcome = CacheOutcome::Rebuilt(reason),
        }
    }
    let code = compile()?;
    // A cache that cannot be written only costs time: compile and go on.
    let _ = store(folder, &path, &code);
    Ok((code, outcome))
}

/// Check an entry and deserialize it; the error says why it was refused.
fn load_entry(engine: &Engine, format: Format, entry: &[u8]) -> std::result::Result<Code, String> {
    if entry.len() < MAGIC.len() + 32 || &entry[..MAGIC.len()] != MAGIC {
        return Err("not a cache entry".into());
    }
    let (sum, payload) = entry[MAGIC.len()..].split_at(32);
    if Sha256::digest(payload).as_slice() != sum {
        return Err("checksum mismatch (damaged entry)".into());
    }
    // SAFETY: the payload is byte for byte what `serialize` wrote for this
    // key (its SHA-256 matches), in a folder of this user's; wasmtime checks
    // that it was made by this version with a compatible configuration.
    let code = unsafe { Code::deserialize(engine, format, payload) };
    code.map_err(|e| format!("stale entry ({e})"))
}

fn store(folder: &Path, path: &Path, code: &Code) -> Result<()> {
    let payload = code.serialize()?;
    std::fs::create_dir_all(folder).with_context(|| format!("creating {}", folder.display()))?;
    let mut entry = Vec::with_capacity(MAGIC.len() + 32 + payload.len());
    entry.extend_from_slice(MAGIC);
    entry.extend_from_slice(&Sha256::digest(&payload));
    entry.extend_from_slice(&payload);
    write_atomically(path, &entry)
}
