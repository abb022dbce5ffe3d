//! What a workload file's rows are named: the file's name without its
//! extension (`fib.wasm` is `fib`), except a file named `benchmark`, which
//! takes its folder's name as Sightglass names its benchmarks
//! (`benchmarks/bz2/benchmark.wasm` is `bz2`). Files that share a name in
//! one run are told apart by the folder above what named them
//! (`old/bz2`, `new/bz2`; `a/fib`, `b/fib`), and wasm from native code by
//! what they are (`x (wasm)`, `x (native)`). A shared library goes without
//! its `lib` prefix (`libfib.so` is `fib`), so that native code built from
//! a workload's source has the workload's name.
//!
//! The files beside a program (`benchmark.stdout.expected`) keep the file's
//! own name: [`file_stem`].

use std::path::{Path, PathBuf};

use crate::guest::format::is_native;

/// The file name (without extension) that Sightglass gives every
/// benchmark, each in a folder of its own: such a file is named by its
/// folder.
pub const FOLDER_NAMED: &str = "benchmark";

/// The prefix a linker gives a shared library (`libfib.so` for `-lfib`,
/// cargo's `cdylib`): a native workload's name goes without it.
pub const LIBRARY_PREFIX: &str = "lib";

/// The name of the workload at `path`, as its rows are named: its file
/// name without the extension (and a native library's without `lib`), or
/// its folder's name for a `benchmark.*`.
pub fn workload_name(path: &Path) -> String {
    let named = named_by(path);
    if named != path {
        return last_name(&named).unwrap_or_else(|| file_stem(path));
    }
    let stem = file_stem(path);
    match stem.strip_prefix(LIBRARY_PREFIX) {
        Some(name) if is_native(path) && !name.is_empty() => name.to_string(),
        _ => stem,
    }
}

/// The file name of `path` without its extension: what the files beside
/// a program are named after (`NAME.stdout.expected`).
pub fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// The name of each of `paths`, as a run names its rows: [`workload_name`],
/// told apart from another file's of the same name ([`Apart`]).
pub fn workload_names(paths: &[&Path]) -> Vec<String> {
    paths
        .iter()
        .zip(told_apart(paths))
        .map(|(path, apart)| apart.name(&workload_name(path)))
        .collect()
}

/// How a file is told apart from the other files of its name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Apart {
    /// The folder its name goes under, when theirs differ: the name of the
    /// folder above what named it (`.` when none): `old` for
    /// `old/bz2/benchmark.wasm`, `a` for `a/fib.wasm`.
    pub folder: Option<String>,
    /// What it is, when some are native code and some wasm (`x.wasm` and
    /// `x.so`): `wasm` or `native`.
    pub kind: Option<&'static str>,
}

impl Apart {
    /// `name` (a benchmark of the file) told apart: `folder/name (kind)`.
    pub fn name(&self, name: &str) -> String {
        let mut named = match &self.folder {
            Some(folder) => format!("{folder}/{name}"),
            None => name.to_string(),
        };
        if let Some(kind) = self.kind {
            named.push_str(&format!(" ({kind})"));
        }
        named
    }
}

/// For each of `paths`, how it is told apart from the other, different
/// files of its [`workload_name`]: by what it is when some are native code
/// and some wasm, by its folder when those of its kind are in others. The same path twice
/// is not a clash (a file compared with itself).
pub fn told_apart(paths: &[&Path]) -> Vec<Apart> {
    let names: Vec<String> = paths.iter().map(|p| workload_name(p)).collect();
    paths
        .iter()
        .zip(&names)
        .map(|(path, name)| {
            let others: Vec<&&Path> = paths
                .iter()
                .zip(&names)
                .filter(|(other, n)| *n == name && *other != path)
                .map(|(other, _)| other)
                .collect();
            let folder = folder_above(path);
            let native = is_native(path);
            Apart {
                // Of a wasm file and a native one, what they are tells
                // them apart; the folder only among files of one kind.
                folder: others
                    .iter()
                    .filter(|o| is_native(o) == native)
                    .any(|o| folder_above(o) != folder)
                    .then_some(folder),
                kind: others
                    .iter()
                    .any(|o| is_native(o) != native)
                    .then_some(if native { "native" } else { "wasm" }),
            }
        })
        .collect()
}

/// What names the file at `path`: the file itself, or the folder it sits
/// in when it is a `benchmark.*` (that folder found in the file system
/// when `path` does not name it: `benchmark.wasm`, `../benchmark.wasm`).
fn named_by(path: &Path) -> PathBuf {
    if path.file_stem().is_none_or(|s| s != FOLDER_NAMED) {
        return path.to_path_buf();
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match folder.file_name() {
        Some(_) => folder.to_path_buf(),
        None => folder
            .canonicalize()
            .ok()
            .filter(|f| f.file_name().is_some())
            .unwrap_or_else(|| path.to_path_buf()),
    }
}

/// The name of the folder above what names `path` (`.` when none).
fn folder_above(path: &Path) -> String {
    named_by(path)
        .parent()
        .and_then(last_name)
        .unwrap_or_else(|| ".".to_string())
}

/// The last component of `path`, when it has a name (not `.` or `..`).
fn last_name(path: &Path) -> Option<String> {
    path.file_name().map(|n| n.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(paths: &[&str]) -> Vec<String> {
        let paths: Vec<&Path> = paths.iter().map(Path::new).collect();
        workload_names(&paths)
    }

    #[test]
    fn a_file_is_named_by_its_stem_and_a_benchmark_file_by_its_folder() {
        assert_eq!(workload_name(Path::new("dir/fib.wasm")), "fib");
        assert_eq!(workload_name(Path::new("sg/bz2/benchmark.wasm")), "bz2");
        assert_eq!(workload_name(Path::new("sg/bz2/benchmark.wat")), "bz2");
        assert_eq!(workload_name(Path::new("native/bz2/benchmark.so")), "bz2");
        assert_eq!(workload_name(Path::new("/bz2.d/benchmark.wasm")), "bz2.d");
        // Only the file name `benchmark` is the folder's.
        assert_eq!(
            workload_name(Path::new("bz2/benchmarks.wasm")),
            "benchmarks"
        );
        assert_eq!(
            workload_name(Path::new("bz2/benchmark.c.wasm")),
            "benchmark.c"
        );
        assert_eq!(file_stem(Path::new("sg/bz2/benchmark.wasm")), "benchmark");
        // A native library goes without `lib`; a wasm file keeps it.
        assert_eq!(workload_name(Path::new("release/libfib.so")), "fib");
        assert_eq!(workload_name(Path::new("fib.so")), "fib");
        assert_eq!(workload_name(Path::new("lib.so")), "lib");
        assert_eq!(workload_name(Path::new("libfib.wasm")), "libfib");
    }

    #[test]
    fn a_benchmark_file_without_a_folder_in_its_path_takes_the_working_folder() {
        let dir = tempfile::tempdir().expect("temp dir");
        let bz2 = dir.path().join("bz2");
        std::fs::create_dir(&bz2).expect("creates");
        let inner = bz2.join("inner");
        std::fs::create_dir(&inner).expect("creates");
        assert_eq!(workload_name(&inner.join("../benchmark.wasm")), "bz2");
        assert_eq!(workload_name(&bz2.join("./benchmark.wasm")), "bz2");
        // The root has no name: the file's own is kept.
        assert_eq!(workload_name(Path::new("/benchmark.wasm")), "benchmark");
    }

    #[test]
    fn names_that_clash_are_told_apart_by_the_folder_above() {
        assert_eq!(
            names(&["sg/bz2/benchmark.wasm", "sg/regex/benchmark.wasm"]),
            ["bz2", "regex"]
        );
        assert_eq!(
            names(&["old/bz2/benchmark.wasm", "new/bz2/benchmark.wasm"]),
            ["old/bz2", "new/bz2"]
        );
        assert_eq!(
            names(&["x/bz2.wasm", "sg/bz2/benchmark.wasm", "y/fib.wasm"]),
            ["x/bz2", "sg/bz2", "fib"]
        );
        assert_eq!(names(&["a/fib.wasm", "b/fib.wasm"]), ["a/fib", "b/fib"]);
        assert_eq!(names(&["fib.wasm", "b/fib.wasm"]), ["./fib", "b/fib"]);
        // The same file twice is one name (compare tells them apart).
        assert_eq!(names(&["a/fib.wasm", "a/fib.wasm"]), ["fib", "fib"]);
        // Wasm and native code of one name: by what they are.
        assert_eq!(names(&["x.wasm", "x.so"]), ["x (wasm)", "x (native)"]);
        assert_eq!(
            names(&["t/wasm32/release/x.wasm", "t/release/libx.so"]),
            ["x (wasm)", "x (native)"]
        );
        assert_eq!(
            names(&["a/x.wasm", "a/x.so", "b/x.wasm"]),
            ["a/x (wasm)", "x (native)", "b/x (wasm)"]
        );
        // Two files of one name in one folder: nothing to tell them apart.
        assert_eq!(names(&["a/x.wasm", "a/x.wat"]), ["x", "x"]);
    }
}
