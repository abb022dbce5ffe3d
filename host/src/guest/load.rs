//! Find guest files (workloads, programs, native libraries), read them,
//! compile them and check them against the contract: a [`GuestFile`] is a
//! file ready to be instantiated. A file another runtime runs is checked as wasmparser
//! reads it and left for that runtime to compile.
//!
//! `.wat` text is converted to binary on reading. The bytes are kept, so
//! that a later pass (the instruction count) compiles exactly what was timed.
//! This module loads; instantiating and calling is [`crate::guest::runtime::wasmtime::instance`]'s
//! job.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::guest::contract::{Benchmark, Contract, Kind, RUN_EXPORT, check_binary, check_contract};
use crate::guest::format::{Code, Format, detect};
use crate::guest::name::workload_name;
use crate::guest::runtime::native;
use crate::guest::runtime::wasmtime::cache::CacheOutcome;
use crate::guest::runtime::wasmtime::engine::Engines;
use crate::options::{EngineConfig, Runtime};
use crate::util::bytes::sha256;
use crate::util::fs::{Cap, Links, read_bounded};

/// Expand the paths given on the command line, in order:
/// - a folder stands for the `.wasm` and `.wat` files directly inside it
///   and, one level down, inside each of its folders (Sightglass's layout:
///   a folder per benchmark), in name order; hidden folders are skipped,
///   and so is an `x.wat` beside an `x.wasm` (the binary is measured);
/// - a `.suite` file lists paths, one per line, relative to its own folder
///   (blank lines and `#` comments skipped); each is expanded the same way,
///   suites within suites to a depth of [`MAX_SUITE_DEPTH`]; a suite that
///   lists itself, directly or through others, is an error;
/// - any other path is kept, so that loading it reports the error in its
///   row (one that does not exist, or is not a regular file).
///
/// A file that a suite or a folder names again (one named on the command
/// line, or by another suite) is kept once, where it first appears, and a
/// note on stderr says so once per file. A file named twice on the command
/// line itself is kept twice: that is how a file is compared with itself.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut found = Found::default();
    found.expand(paths, &mut Vec::new())?;
    for path in &found.repeated {
        eprintln!(
            "note: {} is named more than once: measured once",
            path.display()
        );
    }
    Ok(found.files)
}

/// Extension of a suite file: a list of workload paths.
pub const SUITE_EXTENSION: &str = "suite";
/// How deep suites may list suites: a suite on the command line is at
/// depth 1.
pub const MAX_SUITE_DEPTH: usize = 16;
/// The largest `.suite` file read: 1 MiB, tens of thousands of paths.
pub const MAX_SUITE_BYTES: u64 = 1 << 20;

/// What [`discover`] has found so far.
#[derive(Default)]
struct Found {
    /// The files, in order, each once.
    files: Vec<PathBuf>,
    /// The files' canonical paths (or the path itself, for a file that
    /// cannot be resolved).
    seen: HashSet<PathBuf>,
    /// Files named again, each once.
    repeated: Vec<PathBuf>,
    /// Suites already expanded, by canonical path: a suite named again adds
    /// nothing new, and is not read again.
    suites: HashSet<PathBuf>,
}

impl Found {
    /// Add what `paths` stand for; `open` holds the suites being expanded,
    /// outermost first (canonical paths).
    fn expand(&mut self, paths: &[PathBuf], open: &mut Vec<PathBuf>) -> Result<()> {
        for path in paths {
            if path.is_dir() {
                for file in folder_files(path)? {
                    self.add(file, false);
                }
            } else if path.extension().and_then(|e| e.to_str()) == Some(SUITE_EXTENSION) {
                self.suite(path, open)?;
            } else {
                self.add(path.clone(), open.is_empty());
            }
        }
        Ok(())
    }

    /// Expand the suite at `path`, unless it is already open (a cycle: an
    /// error) or was expanded before (nothing new).
    fn suite(&mut self, path: &Path, open: &mut Vec<PathBuf>) -> Result<()> {
        let canonical = path
            .canonicalize()
            .with_context(|| format!("{}: cannot read the suite", path.display()))?;
        if let Some(first) = open.iter().position(|s| *s == canonical) {
            let chain: Vec<String> = open[first..]
                .iter()
                .chain([&canonical])
                .map(|s| s.display().to_string())
                .collect();
            bail!(
                "{}: the suite lists itself ({})",
                path.display(),
                chain.join(" -> ")
            );
        }
        if open.len() >= MAX_SUITE_DEPTH {
            bail!(
                "{}: suites list suites deeper than {MAX_SUITE_DEPTH} levels",
                path.display()
            );
        }
        if !self.suites.insert(canonical.clone()) {
            self.repeated.push(path.to_path_buf());
            return Ok(());
        }
        let entries = suite_entries(path)?;
        open.push(canonical);
        let expanded = self.expand(&entries, open);
        open.pop();
        expanded
    }

    /// Add `file` unless it was found before; one named on the command
    /// line (`explicit`) is added whatever came before it.
    fn add(&mut self, file: PathBuf, explicit: bool) {
        let key = file.canonicalize().unwrap_or_else(|_| file.clone());
        if self.seen.insert(key) || explicit {
            self.files.push(file);
        } else if !self.repeated.contains(&file) {
            self.repeated.push(file);
        }
    }
}

/// The workload files of folder `path` and of its folders one level down,
/// in name order; an error when there are none.
fn folder_files(path: &Path) -> Result<Vec<PathBuf>> {
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
    Ok(found)
}

/// The paths a `.suite` file lists, resolved against its folder.
fn suite_entries(path: &Path) -> Result<Vec<PathBuf>> {
    let cap = Cap {
        bytes: MAX_SUITE_BYTES,
        name: "the cap on a suite",
    };
    let bytes = read_bounded(path, cap, Links::Follow)
        .with_context(|| format!("{}: cannot read the suite", path.display()))?;
    let text = String::from_utf8(bytes)
        .with_context(|| format!("{}: the suite is not UTF-8 text", path.display()))?;
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
    Ok(without_sources(found))
}

/// `files` less each `x.wat` beside an `x.wasm` (the binary it was built
/// from, as Sightglass ships some benchmarks): one row, the binary's, and a
/// note on stderr saying which text was left out.
fn without_sources(files: Vec<PathBuf>) -> Vec<PathBuf> {
    let binaries: HashSet<PathBuf> = files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "wasm"))
        .map(|f| f.with_extension(""))
        .collect();
    files
        .into_iter()
        .filter(|f| {
            let shadowed = f.extension().is_some_and(|e| e == "wat")
                && binaries.contains(&f.with_extension(""));
            if shadowed {
                eprintln!(
                    "note: {} is left out: {} of the same name is measured",
                    f.display(),
                    f.with_extension("wasm").display()
                );
            }
            !shadowed
        })
        .collect()
}

fn is_hidden(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with('.') || n == "target")
}

fn is_workload_file(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("wasm") | Some("wat") | Some(native::EXTENSION)
    )
}

/// A guest file (a workload, a program or a native library) compiled
/// under one engine, following its contract.
pub struct GuestFile {
    pub path: PathBuf,
    /// The binary that was compiled (`.wat` already converted).
    pub bytes: Arc<[u8]>,
    pub format: Format,
    /// The compiled code (none for native code).
    pub code: Option<Code>,
    pub contract: Contract,
    /// Wall time of compiling (or loading from the cache), in ms.
    pub compile_ms: f64,
    /// Where the compiled code came from.
    pub cache: CacheOutcome,
    /// The engine configuration it was compiled with.
    pub engine: EngineConfig,
}

impl GuestFile {
    /// The compiled code's size under wasmtime (the image of the compiled
    /// module or component), in bytes; none under other runtimes, whose
    /// code the host does not see.
    pub fn code_bytes(&self) -> Option<u64> {
        match (&self.code, self.engine.runtime) {
            (Some(code), crate::options::Runtime::Wasmtime) => Some(code.image_bytes()),
            _ => None,
        }
    }

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
pub fn load(engines: &Engines, path: &Path, max_bytes: u64) -> Result<GuestFile, LoadError> {
    let bytes = read_binary(path, max_bytes).map_err(|error| LoadError { kind: None, error })?;
    if native::is_native(path) {
        return load_native(engines, path, bytes.into());
    }
    load_bytes(engines, path, bytes.into())
}

/// A native workload (`x.so`): its header checked, nothing run. Only a
/// worker loads the library (and finds `run` and `setup` in it).
fn load_native(engines: &Engines, path: &Path, bytes: Arc<[u8]>) -> Result<GuestFile, LoadError> {
    native::check_header(&bytes).map_err(|error| LoadError {
        kind: Some(Kind::Native),
        error,
    })?;
    Ok(GuestFile {
        path: path.to_path_buf(),
        bytes,
        format: Format::Native,
        code: None,
        contract: Contract::Workload {
            benchmarks: vec![Benchmark {
                name: workload_name(path),
                export: RUN_EXPORT.to_string(),
            }],
            has_setup: false,
            uses_pause: false,
        },
        compile_ms: 0.0,
        cache: CacheOutcome::Off,
        engine: engines.config.clone(),
    })
}

/// [`load`] for bytes already read (`.wat` already converted).
pub fn load_bytes(
    engines: &Engines,
    path: &Path,
    bytes: Arc<[u8]>,
) -> Result<GuestFile, LoadError> {
    let format = detect(&bytes).map_err(|error| LoadError { kind: None, error })?;
    let failed = |error| LoadError {
        kind: Some(format.into()),
        error,
    };
    crate::guest::runtime::check_available(engines.config.runtime, format, &bytes)
        .map_err(failed)?;
    if engines.config.runtime != Runtime::Wasmtime {
        return load_for_runtime(engines, path, bytes, format).map_err(failed);
    }
    let start = Instant::now();
    let (code, cache) = engines
        .compile(&engines.fast, format, &bytes)
        .map_err(failed)?;
    let compile_ms = start.elapsed().as_secs_f64() * 1e3;
    let contract =
        check_contract(&engines.fast, &code, &bytes, &workload_name(path)).map_err(failed)?;
    Ok(GuestFile {
        path: path.to_path_buf(),
        bytes,
        format,
        code: Some(code),
        contract,
        compile_ms,
        cache,
        engine: engines.config.clone(),
    })
}

/// A core module another runtime than wasmtime runs (wasmi, wasmer, V8):
/// checked against the contract as wasmparser reads it, not compiled
/// here; the runtime compiles it in the worker and times that.
fn load_for_runtime(
    engines: &Engines,
    path: &Path,
    bytes: Arc<[u8]>,
    format: Format,
) -> Result<GuestFile> {
    let contract = check_binary(&bytes, &workload_name(path))?;
    Ok(GuestFile {
        path: path.to_path_buf(),
        bytes,
        format,
        code: None,
        contract,
        compile_ms: 0.0,
        cache: CacheOutcome::Off,
        engine: engines.config.clone(),
    })
}

/// The file's bytes, with `.wat` text converted to binary. A path that is
/// not a regular file (after following symbolic links: a FIFO, a device, a
/// folder) or a file larger than `max_bytes` is refused before it is read
/// ([`read_bounded`]).
pub fn read_binary(path: &Path, max_bytes: u64) -> Result<Vec<u8>> {
    let cap = Cap {
        bytes: max_bytes,
        name: "--max-file-size",
    };
    let bytes = read_bounded(path, cap, Links::Follow)?;
    if bytes.is_empty() {
        bail!("the file is empty");
    }
    if path.extension().and_then(|e| e.to_str()) == Some("wat") {
        let text = String::from_utf8(bytes).context("the .wat file is not UTF-8 text")?;
        return wat::parse_str(&text).context("not valid WAT");
    }
    Ok(bytes)
}

/// What the parent found of a file under one engine set, handed to each
/// worker that loads the file so that the worker checks none of it again
/// ([`load_checked`]): its format, its contract, and the digest of the
/// bytes it checked.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Checked {
    pub path: PathBuf,
    pub engine_set: usize,
    pub format: Format,
    pub contract: Contract,
    /// SHA-256 of the binary checked (a `.wat` file's, converted), in hex.
    pub digest: String,
}

impl Checked {
    /// What `loaded` holds, when it loaded.
    pub fn of(loaded: &Loaded) -> Option<Checked> {
        let file = loaded.file.as_ref().ok()?;
        Some(Checked {
            path: loaded.path.clone(),
            engine_set: loaded.engine_set,
            format: file.format,
            contract: file.contract.clone(),
            digest: sha256(&file.bytes),
        })
    }
}

/// Load the file the parent checked as `checked`: its bytes read again
/// and held to the digest (a file changed since is refused), then, under
/// wasmtime, compiled (from the compile cache the parent filled); its
/// format and contract are the parent's, not checked again.
pub fn load_checked(
    engines: &Engines,
    checked: &Checked,
    max_bytes: u64,
) -> Result<GuestFile, LoadError> {
    let kind = Some(Kind::of(checked.format, &checked.contract));
    let failed = |error| LoadError { kind, error };
    let bytes: Arc<[u8]> = read_binary(&checked.path, max_bytes)
        .map_err(failed)?
        .into();
    if sha256(&bytes) != checked.digest {
        return Err(failed(anyhow::anyhow!(
            "the file changed after it was checked (its bytes are not those measured so far)"
        )));
    }
    let start = Instant::now();
    let (code, cache) = match (checked.format, engines.config.runtime) {
        (Format::Native, _) => (None, CacheOutcome::Off),
        (format, Runtime::Wasmtime) => {
            let (code, cache) = engines
                .compile(&engines.fast, format, &bytes)
                .map_err(failed)?;
            (Some(code), cache)
        }
        _ => (None, CacheOutcome::Off),
    };
    Ok(GuestFile {
        path: checked.path.clone(),
        bytes,
        format: checked.format,
        compile_ms: match code {
            Some(_) => start.elapsed().as_secs_f64() * 1e3,
            None => 0.0,
        },
        code,
        contract: checked.contract.clone(),
        cache,
        engine: engines.config.clone(),
    })
}

/// A file under one engine: the path, the engine set, the guest file
/// (or why it did not load).
pub struct Loaded {
    pub path: PathBuf,
    pub engine_set: usize,
    pub file: Result<GuestFile, LoadError>,
}

/// The engines of every `--engine` (`configs`, in order), caching compiled
/// code in `cache`.
pub fn all_engines(configs: &[EngineConfig], cache: Option<&PathBuf>) -> Result<Vec<Engines>> {
    configs
        .iter()
        .map(|config| Engines::new(config.clone(), cache.cloned()))
        .collect()
}

#[cfg(test)]
#[path = "load_fuzz.rs"]
mod fuzz;

#[cfg(test)]
#[path = "load_tests.rs"]
mod tests;
