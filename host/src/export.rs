//! Write results to files or stdout, atomically.
//!
//! A file is written to a temporary sibling and renamed into place, so a
//! crash never leaves a half-written export. This module turns results into
//! bytes and puts them somewhere; it formats nothing for the terminal.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::settings::Output;

/// Write `value` as pretty JSON to `output`.
pub fn write_json<T: Serialize>(value: &T, output: &Output) -> Result<()> {
    let mut bytes = serde_json::to_vec_pretty(value).context("serialising the results as JSON")?;
    bytes.push(b'\n');
    match output {
        Output::Stdout => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(&bytes).context("writing JSON to stdout")?;
            stdout.flush().context("writing JSON to stdout")
        }
        Output::File(path) => write_atomically(path, &bytes),
    }
}

/// Write `bytes` to `path` through a temporary file in the same folder and a
/// rename.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .with_context(|| format!("{}: not a file name", path.display()))?;
    let temporary = folder.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    result.with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary() -> Result<()> {
        let dir = std::env::temp_dir().join(format!("wasm-bench-export-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let path = dir.join("out.json");
        write_atomically(&path, b"first")?;
        write_atomically(&path, b"second")?;
        assert_eq!(std::fs::read(&path)?, b"second");
        let leftovers = std::fs::read_dir(&dir)?.count();
        assert_eq!(leftovers, 1);
        std::fs::remove_dir_all(&dir)?;
        Ok(())
    }

    #[test]
    fn missing_folder_is_an_error_naming_the_file() {
        let path = Path::new("/nonexistent-folder-wasm-bench/out.json");
        let err = write_atomically(path, b"x").err().map(|e| format!("{e:#}"));
        assert!(err.is_some_and(|e| e.contains("/nonexistent-folder-wasm-bench/out.json")));
    }
}
