//! `host run --save-expected`: before measuring, each WASI program among
//! the files is run once, in this process, with the grants and limits the
//! run gives it and under its call deadline (`--timeout`: a program that
//! does not finish in time ends the command with an error), and what it wrote to stdout is saved as
//! `NAME.stdout.expected` beside it (written atomically, replacing what
//! was there). The run then checks every iteration against it. Files that
//! are `run(count, seed)` workloads are left alone.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::guest::contract::Contract;
use crate::guest::engine::Engines;
use crate::guest::format::Code;
use crate::guest::limits::Limits;
use crate::guest::load::load;
use crate::guest::name::file_stem;
use crate::guest::program::Program;
use crate::options::{Grants, Runtime, Settings};
use crate::output::escape::terminal;
use crate::util::fs::replace_atomically;

/// Save the expected stdout of every program among `files`.
pub fn save_expected(settings: &Settings, files: &[PathBuf]) -> Result<()> {
    let mut config = settings.engines.first().cloned().unwrap_or_default();
    // The output is the program's, whatever engine runs it: the built-in
    // one writes it.
    config.library = None;
    config.runtime = Runtime::Wasmtime;
    let engines = Engines::new(config, None)?;
    let limits = Limits {
        max_memory_bytes: settings.max_memory_bytes,
        huge_pages: false,
    };
    for path in files {
        let workload = load(&engines, path, settings.max_file_bytes).map_err(|e| e.error)?;
        let (Contract::Program { .. }, Some(code)) = (&workload.contract, &workload.code) else {
            continue;
        };
        let saved = save_within(path, code, settings, limits)
            .with_context(|| format!("--save-expected: {}", path.display()))?;
        // On stderr: stdout may carry `--export-json -`.
        eprintln!("saved {}", terminal(&saved.display().to_string()));
    }
    Ok(())
}

/// [`save_one`] on a thread of its own, waited for no longer than
/// `--timeout`: a program that hangs is left to end with the process.
fn save_within(path: &Path, code: &Code, settings: &Settings, limits: Limits) -> Result<PathBuf> {
    let (send, receive) = std::sync::mpsc::channel();
    let (owned, code, grants) = (path.to_path_buf(), code.clone(), settings.grants.clone());
    std::thread::spawn(move || {
        let _ = send.send(save_one(&owned, &code, &grants, limits));
    });
    match receive.recv_timeout(settings.timeout) {
        Ok(saved) => saved,
        Err(_) => bail!(
            "the program did not finish within --timeout {}",
            humantime::format_duration(settings.timeout)
        ),
    }
}

/// Run the program at `path` once and write its stdout beside it: the
/// file written.
fn save_one(path: &Path, code: &Code, grants: &Grants, limits: Limits) -> Result<PathBuf> {
    let program = Program::new(path, code, grants, limits)?;
    let stdout = program.stdout_of_one_run()?;
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let file = folder.join(format!("{}.stdout.expected", file_stem(path)));
    replace_atomically(&file, &stdout)?;
    Ok(file)
}
