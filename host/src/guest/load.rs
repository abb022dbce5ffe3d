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
use crate::util::bytes::format_bytes;

/// Expand the paths given on the command line, in order:
/// - a folder stands for the `.wasm` and `.wat` files directly inside it
///   and, one level down, inside each of its folders (Sightglass's layout:
///   a folder per benchmark), in name order; hidden folders are skipped;
/// - a `.suite` file lists paths, one per line, relative to its own folder
///   (blank lines and `#` comments skipped); each is expanded the same way;
/// - any other path is kept, so that loading it reports the error in its
///   row (one that does not exist, or is not a regular file).
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut found = workload_files_in(path)?;
            let mut folders: Vec<PathBuf> = read_folder(path)?
                .into_iter()
                .filter(|p| p.is_dir() && !is_hidden(p))
                .collect();
            folders.sort();
            for folder in folders {
                found.extend(workload_files_in(&folder)?);
            }
            if found.is_empty() {
                bail!(
                    "{}: the folder holds no .wasm or .wat files (nor do its folders)",
                    path.display()
                );
            }
            files.extend(found);
        } else if path.extension().and_then(|e| e.to_str()) == Some(SUITE_EXTENSION) {
            files.extend(discover(&suite_entries(path)?)?);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

/// Extension of a suite file: a list of workload paths.
pub const SUITE_EXTENSION: &str = "suite";

/// The paths a `.suite` file lists, resolved against its folder.
fn suite_entries(path: &Path) -> Result<Vec<PathBuf>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read the suite", path.display()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    let entries: Vec<PathBuf> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| base.join(l))
        .collect();
    if entries.is_empty() {
        bail!("{}: the suite lists no workloads", path.display());
    }
    Ok(entries)
}

fn read_folder(path: &Path) -> Result<Vec<PathBuf>> {
    Ok(std::fs::read_dir(path)
        .with_context(|| format!("{}: cannot read the folder", path.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .collect())
}

/// The workload files directly in `folder`, in name order: anything but a
/// folder with a workload extension (a FIFO or device so named is kept, and
/// refused when read).
fn workload_files_in(folder: &Path) -> Result<Vec<PathBuf>> {
    let mut found: Vec<PathBuf> = read_folder(folder)?
        .into_iter()
        .filter(|p| !p.is_dir() && is_workload_file(p))
        .collect();
    found.sort();
    Ok(found)
}

fn is_hidden(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with('.') || n == "target")
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

/// Read (at most `max_bytes`), compile and check one workload file.
pub fn load(engines: &Engines, path: &Path, max_bytes: u64) -> Result<Workload, LoadError> {
    let bytes = read_binary(path, max_bytes).map_err(|error| LoadError { kind: None, error })?;
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
        engine: engines.config.clone(),
    })
}

/// The file's bytes, with `.wat` text converted to binary. A path that is
/// not a regular file (after following symbolic links: a FIFO, a device, a
/// folder) or a file larger than `max_bytes` is refused before it is read.
pub fn read_binary(path: &Path, max_bytes: u64) -> Result<Vec<u8>> {
    use std::io::Read;
    let meta = std::fs::metadata(path).context("cannot read the file")?;
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a folder"
        } else {
            "a FIFO, socket or device"
        };
        bail!("not a regular file ({what}): refused without reading it");
    }
    if meta.len() > max_bytes {
        bail!(
            "the file is {}, larger than --max-file-size {}",
            format_bytes(meta.len()),
            format_bytes(max_bytes)
        );
    }
    // The file may grow between the check and the read: read one byte more
    // than the cap at most.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(path)
        .and_then(|f| f.take(max_bytes.saturating_add(1)).read_to_end(&mut bytes))
        .context("cannot read the file")?;
    if bytes.len() as u64 > max_bytes {
        bail!(
            "the file grew past --max-file-size {} while it was read",
            format_bytes(max_bytes)
        );
    }
    if bytes.is_empty() {
        bail!("the file is empty");
    }
    if path.extension().and_then(|e| e.to_str()) == Some("wat") {
        let text = String::from_utf8(bytes).context("the .wat file is not UTF-8 text")?;
        return wat::parse_str(&text).context("not valid WAT");
    }
    Ok(bytes)
}
