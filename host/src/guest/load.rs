//! Find workload files, read them, compile them and check them against the
//! contract: a [`Workload`] is a file ready to be
//! instantiated.
//!
//! `.wat` text is converted to binary on reading. The bytes are kept, so
//! that a later pass (the instruction count) compiles exactly what was timed.
//! This module loads; instantiating and calling is [`crate::guest::instance`]'s
//! job.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::guest::cache::CacheOutcome;
use crate::guest::contract::{Contract, Kind, check_contract};
use crate::guest::engine::Engines;
use crate::guest::format::{Code, Format, detect};
use crate::options::EngineConfig;

/// Expand the paths given on the command line: a folder stands for the
/// `.wasm` and `.wat` files directly inside it, in name order. A path that
/// does not exist is kept, so that loading it reports the error in its row.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(path)
                .with_context(|| format!("{}: cannot read the folder", path.display()))?
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && is_workload_file(p))
                .collect();
            if found.is_empty() {
                bail!(
                    "{}: the folder holds no .wasm or .wat files",
                    path.display()
                );
            }
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

fn is_workload_file(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("wasm") | Some("wat")
    )
}

/// The name of a workload: its file name without the extension.
pub fn workload_name(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// A compiled workload that follows the contract.
pub struct Workload {
    pub path: PathBuf,
    /// The binary that was compiled (`.wat` already converted).
    pub bytes: Arc<[u8]>,
    pub format: Format,
    /// The compiled code.
    pub code: Code,
    pub contract: Contract,
    /// Wall time of compiling (or loading from the cache), in ms.
    pub compile_ms: f64,
    /// Where the compiled code came from.
    pub cache: CacheOutcome,
    /// The engine configuration it was compiled with.
    pub engine: EngineConfig,
}

impl Workload {
    /// Module, component or program, as reports name it.
    pub fn kind(&self) -> Kind {
        Kind::of(self.format, &self.contract)
    }
}

/// Why a file could not be loaded: the error, and the file's kind when its
/// header was read.
#[derive(Debug)]
pub struct LoadError {
    pub kind: Option<Kind>,
    pub error: anyhow::Error,
}

/// Read, compile and check one workload file.
pub fn load(engines: &Engines, path: &Path) -> Result<Workload, LoadError> {
    let bytes = read_binary(path).map_err(|error| LoadError { kind: None, error })?;
    load_bytes(engines, path, bytes.into())
}

/// [`load`] for bytes already read (`.wat` already converted).
pub fn load_bytes(engines: &Engines, path: &Path, bytes: Arc<[u8]>) -> Result<Workload, LoadError> {
    let format = detect(&bytes).map_err(|error| LoadError { kind: None, error })?;
    let failed = |error| LoadError {
        kind: Some(format.into()),
        error,
    };
    let start = Instant::now();
    let (code, cache) = engines
        .compile(&engines.fast, format, &bytes)
        .map_err(failed)?;
    let compile_ms = start.elapsed().as_secs_f64() * 1e3;
    let contract = check_contract(&engines.fast, &code, &workload_name(path)).map_err(failed)?;
    Ok(Workload {
        path: path.to_path_buf(),
        bytes,
        format,
        code,
        contract,
        compile_ms,
        cache,
        engine: engines.config,
    })
}

/// The file's bytes, with `.wat` text converted to binary.
pub fn read_binary(path: &Path) -> Result<Vec<u8>> {
    let bytes = std::fs::read(path).context("cannot read the file")?;
    if bytes.is_empty() {
        bail!("the file is empty");
    }
    if path.extension().and_then(|e| e.to_str()) == Some("wat") {
        let text = String::from_utf8(bytes).context("the .wat file is not UTF-8 text")?;
        return wat::parse_str(&text).context("not valid WAT");
    }
    Ok(bytes)
}
