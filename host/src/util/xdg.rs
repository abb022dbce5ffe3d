//! The XDG base directories the host reads (`$XDG_CONFIG_HOME`,
//! `$XDG_CACHE_HOME`), as the XDG Base Directory Specification has them: a
//! variable that is unset, empty or a relative path is ignored, so that no
//! file of the host's lands inside whatever folder a run started in.

use std::path::PathBuf;

/// The folder the XDG variable `var` names, when it is an absolute path.
pub fn base_dir(var: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os(var)?);
    dir.is_absolute().then_some(dir)
}
