//! Native code as a variant: a shared library (`.so`) exporting the C ABI
//! `int64_t run(int64_t count, int64_t seed)` and optionally
//! `void setup(int64_t size)`, built from the same source as a wasm
//! workload, measured exactly as one is: [`Sampler::sample`] takes the
//! seed, reads the clock, calls `run` through a function pointer, and
//! reads the clock again. Its empty guest ([`empty`]) is a host function
//! called through a function pointer the same way.
//!
//! Native code is not sandboxed: it runs with the worker's rights, and
//! only a worker process loads it (a crash costs the row). No memory limit
//! holds inside it beyond the worker's resident-memory cap, and it has no
//! `bench.pause`/`bench.resume`. A library stays loaded for the life of the
//! worker (its code may have registered handlers that must not point into
//! unmapped memory).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use libloading::Library;

use crate::guest::contract::{RUN_EXPORT, SETUP_EXPORT};
use crate::guest::runtime::seam::{RawSample, Sampler};
use crate::guest::sandbox;
use crate::guest::seeds::Seeds;

pub use crate::guest::format::{NATIVE_EXTENSION as EXTENSION, is_native};

/// ELF's magic number: what a native workload starts with.
const ELF_MAGIC: &[u8] = b"\x7fELF";

type RunFn = unsafe extern "C" fn(i64, i64) -> i64;
type SetupFn = unsafe extern "C" fn(i64);

/// Check the header of a native workload read as `bytes`: an ELF file. The
/// parent reads it only; the symbols are looked up when a worker loads it.
pub fn check_header(bytes: &[u8]) -> Result<()> {
    if !bytes.starts_with(ELF_MAGIC) {
        bail!("not a shared library (no ELF header): a `.so` workload is native code");
    }
    Ok(())
}

/// A native workload loaded in this worker, ready to be sampled.
pub struct NativeInstance {
    run: RunFn,
    setup: Option<SetupFn>,
    seeds: Seeds,
}

/// Load the library at `path` (for good: see the module's doc) and find its
/// `run` (only `run`: `export` must be it) and `setup`.
pub fn instantiate(path: &Path, export: &str, seeds: Seeds) -> Result<Box<dyn Sampler>> {
    if export != RUN_EXPORT {
        bail!("native workloads export `{RUN_EXPORT}` only, not `{export}`");
    }
    // SAFETY: loading runs the library's initialisers: the user named it as
    // a native workload (not sandboxed, as the documentation and the header
    // line say), and only a worker process loads it.
    let library = unsafe { Library::new(as_file(path)) }
        .with_context(|| format!("{}: cannot load the library", path.display()))?;
    // SAFETY: the contract of a native workload is these C signatures.
    let run = unsafe { library.get::<RunFn>(RUN_EXPORT.as_bytes()) }
        .map(|symbol| *symbol)
        .with_context(|| format!("the library exports no `{RUN_EXPORT}`"))?;
    // SAFETY: as above.
    let setup = unsafe { library.get::<SetupFn>(SETUP_EXPORT.as_bytes()) }
        .ok()
        .map(|symbol| *symbol);
    // Kept loaded while the process lives: the pointers stay valid.
    std::mem::forget(library);
    Ok(Box::new(NativeInstance { run, setup, seeds }))
}

/// `path` as the dynamic loader must be given a file: with a folder in it
/// (`./x.so` for `x.so`), so that the file named is opened where it is,
/// never a library of that name looked up along the loader's search path.
fn as_file(path: &Path) -> PathBuf {
    match path.parent() {
        Some(folder) if folder.as_os_str().is_empty() => Path::new(".").join(path),
        _ => path.to_path_buf(),
    }
}

/// The empty native guest: returns its seed, like the empty wasm guest.
#[inline(never)]
extern "C" fn empty_run(_count: i64, seed: i64) -> i64 {
    seed
}

/// The empty native guest, called through a function pointer as a
/// library's `run` is.
pub fn empty() -> Box<dyn Sampler> {
    let run: RunFn = std::hint::black_box(empty_run as RunFn);
    Box::new(NativeInstance {
        run,
        setup: None,
        seeds: Seeds::same(0),
    })
}

impl Sampler for NativeInstance {
    fn setup(&mut self, size: u64) -> Result<()> {
        if let Some(setup) = self.setup {
            // SAFETY: the library's `setup(int64_t)`, loaded for good.
            unsafe { setup(size as i64) };
        }
        Ok(())
    }

    #[inline(never)]
    fn sample(&mut self, count: u64) -> Result<RawSample> {
        if sandbox::interrupted() {
            bail!("interrupted");
        }
        let run = self.run;
        let args = (count as i64, self.seeds.take() as i64);
        let start = Instant::now();
        // SAFETY: the library's `run(int64_t, int64_t)`, loaded for good.
        let result = unsafe { run(args.0, args.1) };
        let end = Instant::now();
        Ok(RawSample {
            elapsed_ns: end.duration_since(start).as_nanos() as f64,
            pauses: 0,
            checksum: std::hint::black_box(result as u64),
        })
    }

    fn restart_seeds(&mut self) {
        self.seeds.restart();
    }

    fn peak_memory_bytes(&mut self) -> Option<u64> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_file_name_is_given_to_the_loader_with_its_folder() {
        assert_eq!(as_file(Path::new("x.so")), Path::new("./x.so"));
        assert_eq!(as_file(Path::new("./x.so")), Path::new("./x.so"));
        assert_eq!(as_file(Path::new("lib/x.so")), Path::new("lib/x.so"));
        assert_eq!(as_file(Path::new("/lib/x.so")), Path::new("/lib/x.so"));
        // What the loader is given always names a file by a path.
        for path in ["x.so", "libm.so.6", "a/b.so"] {
            assert!(as_file(Path::new(path)).to_string_lossy().contains('/'));
        }
    }
}
