//! The control: a small workload built into the host, the same in every
//! run and on every machine, that `host run --control` measures beside the
//! workloads. Its row is named [`CONTROL_NAME`]. Whatever moves it moves
//! with the machine (a slower runner, a busier neighbour, a new kernel),
//! never with the code under test, so the history reads a change shared by
//! the control and a benchmark as the machine moving.
//!
//! Each op is one step of a dependent chain (a multiply, a rotate, an
//! exclusive or): no memory, so that its own noise between runs stays as
//! low as the bundled chain workloads' and a move of the machine (a slower
//! core, a busy neighbour on the same physical core) shows through.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// The control's row and series name (its file's stem).
pub const CONTROL_NAME: &str = "wasm-bench-control";

/// The control workload, in the text format.
pub const CONTROL_WAT: &str = r#"(module
  (func (export "setup") (param i64))
  (func (export "run") (param $count i64) (param $seed i64) (result i64)
    (local $h i64)
    local.get $seed
    local.set $h
    (block $done
      (loop $next
        local.get $count
        i64.eqz
        br_if $done
        local.get $h
        i64.const 0x9e3779b97f4a7c15
        i64.mul
        i64.const 17
        i64.rotl
        local.get $count
        i64.xor
        local.set $h
        local.get $count
        i64.const 1
        i64.sub
        local.set $count
        br $next))
    local.get $h))"#;

/// Whether a row or series named `benchmark` is the control.
pub fn is_control(benchmark: &str) -> bool {
    benchmark == CONTROL_NAME
}

/// The control written to a private temporary folder, for as long as it
/// lives.
pub struct ControlFile {
    _folder: tempfile::TempDir,
    path: PathBuf,
}

impl ControlFile {
    /// Write the control into a new temporary folder.
    pub fn write() -> Result<Self> {
        let folder = tempfile::tempdir().context("a temporary folder for the control")?;
        let path = folder.path().join(format!("{CONTROL_NAME}.wat"));
        std::fs::write(&path, CONTROL_WAT)
            .with_context(|| format!("writing the control to {}", path.display()))?;
        Ok(ControlFile {
            _folder: folder,
            path,
        })
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guest::name::workload_name;
    use crate::util::fs::{Cap, Links, read_bounded};

    /// The file written is named as the control's rows are.
    #[test]
    fn the_control_file_names_its_rows() -> Result<()> {
        let control = ControlFile::write()?;
        assert!(is_control(&workload_name(control.path())));
        let cap = Cap {
            bytes: 1 << 16,
            name: "the test's cap",
        };
        let written = read_bounded(control.path(), cap, Links::Refuse)?;
        assert_eq!(written, CONTROL_WAT.as_bytes());
        Ok(())
    }
}
