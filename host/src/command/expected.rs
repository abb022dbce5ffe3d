//! `host run --save-expected`: before measuring, each WASI program among
//! the files is run once in a worker process, with the grants and limits
//! the run gives it and under its call deadline (`--timeout`: a program
//! that does not finish in time ends the command with an error;
//! [`crate::benchmark::parent::expected`]), and what it wrote to stdout is
//! saved as `NAME.stdout.expected` beside it (written atomically,
//! replacing what was there). The run then checks every iteration against
//! it. Files that are `run(count, seed)` workloads are left alone.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::benchmark::parent::expected::program_outputs;
use crate::benchmark::progress::Silent;
use crate::guest::name::file_stem;
use crate::options::Settings;
use crate::output::escape::terminal;
use crate::util::fs::replace_atomically;

/// Save the expected stdout of every program among `files`.
pub fn save_expected(settings: &Settings, files: &[PathBuf]) -> Result<()> {
    let outputs = program_outputs(settings, files, &Silent).context("--save-expected")?;
    for (path, stdout) in outputs {
        let saved =
            save(&path, &stdout).with_context(|| format!("--save-expected: {}", path.display()))?;
        // On stderr: stdout may carry `--export-json -`.
        eprintln!("saved {}", terminal(&saved.display().to_string()));
    }
    Ok(())
}

/// Write `stdout` beside the program at `path`: the file written.
fn save(path: &Path, stdout: &[u8]) -> Result<PathBuf> {
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let file = folder.join(format!("{}.stdout.expected", file_stem(path)));
    replace_atomically(&file, stdout)?;
    Ok(file)
}
