//! Write files atomically: a temporary sibling, then a rename, so that a
//! crash never leaves half a file. Exports, baselines and the compile cache
//! all write through here.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

/// Write `bytes` to `path` through a temporary file in the same folder and a
/// rename.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    // Something that is not a regular file (`/dev/null`, `/dev/stdout`, a
    // pipe) is written in place: renaming over it would replace it.
    if let Ok(meta) = std::fs::metadata(path)
        && !meta.is_file()
    {
        if meta.is_dir() {
            anyhow::bail!("writing {}: it is a folder", path.display());
        }
        return std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|mut f| f.write_all(bytes))
            .with_context(|| format!("writing {}", path.display()));
    }
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

    /// Device files are written in place, never replaced (issue: renaming a
    /// temporary file over `/dev/null` as root replaced the device).
    #[cfg(unix)]
    #[test]
    fn device_files_are_written_in_place() -> Result<()> {
        use std::os::unix::fs::FileTypeExt;
        write_atomically(Path::new("/dev/null"), b"discarded")?;
        assert!(std::fs::metadata("/dev/null")?.file_type().is_char_device());
        Ok(())
    }

    #[test]
    fn missing_folder_is_an_error_naming_the_file() {
        let path = Path::new("/nonexistent-folder-wasm-bench/out.json");
        let err = write_atomically(path, b"x").err().map(|e| format!("{e:#}"));
        assert!(err.is_some_and(|e| e.contains("/nonexistent-folder-wasm-bench/out.json")));
    }
}
