//! What the parent knows before any worker starts: every file loaded under
//! every engine (compiled, which fills the compile cache for the workers,
//! and checked against the contract: what the workers are handed,
//! [`Catalog::checked`], so that they check nothing again), and the rows to measure: one per
//! benchmark, size and engine, or one failed row per file (and engine) that
//! could not be loaded. A program is one row whatever the sizes: it takes no
//! size. Rows are named as [`crate::guest::name`] says (Sightglass's
//! `bz2/benchmark.wasm` is `bz2`); files that share a name are told apart
//! by a folder (`folder/name`) or by what they are (`x (native)`). Under an engine library the files are
//! loaded the same way, with wasmtime's defaults (through the compile
//! cache), to check them against the contract; the library itself is
//! loaded by the workers only.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::benchmark::progress::{Progress, Step};
use crate::guest::contract::{Contract, RUN_EXPORT};
use crate::guest::load::{self, Checked, GuestFile, LoadError};
use crate::guest::load::{Loaded, all_engines};
use crate::guest::name::{Apart, told_apart, workload_name};
use crate::options::Settings;
use crate::results::Row;

/// One row to measure: what it is, and its guest file or why it failed.
pub struct Planned<'a> {
    pub row: Row,
    pub file: Result<&'a GuestFile, &'a LoadError>,
}

/// Every file under every engine.
pub struct Catalog {
    pub loaded: Vec<Loaded>,
    engine_names: Vec<String>,
}

impl Catalog {
    /// Load `files` under every engine of `settings`.
    pub fn load(settings: &Settings, files: &[PathBuf], progress: &dyn Progress) -> Result<Self> {
        let engines = all_engines(&settings.engines, settings.cache.as_ref())?;
        let mut loaded = Vec::new();
        for path in files {
            for (engine_set, engines) in engines.iter().enumerate() {
                progress.step(&workload_name(path), Step::Compile);
                loaded.push(Loaded {
                    path: path.clone(),
                    engine_set,
                    file: load::load(engines, path, settings.max_file_bytes),
                });
            }
        }
        Ok(Catalog {
            loaded,
            engine_names: engines.iter().map(|e| e.config.short_name()).collect(),
        })
    }

    /// What the workers are handed of every file that loaded, so that
    /// they check none of it again.
    pub fn checked(&self) -> Vec<Checked> {
        self.loaded.iter().filter_map(Checked::of).collect()
    }

    /// Every row, in file order.
    pub fn rows(&self, sizes: &[u64]) -> Vec<Planned<'_>> {
        let several = self.engine_names.len() > 1;
        let paths: Vec<&Path> = self.loaded.iter().map(|l| l.path.as_path()).collect();
        self.loaded
            .iter()
            .zip(told_apart(&paths))
            .flat_map(|(loaded, apart)| {
                let engine = several.then(|| self.engine_names[loaded.engine_set].as_str());
                rows_of(loaded, engine, sizes, &apart)
            })
            .collect()
    }
}

fn rows_of<'a>(
    loaded: &'a Loaded,
    engine: Option<&str>,
    sizes: &[u64],
    apart: &Apart,
) -> Vec<Planned<'a>> {
    let path = &loaded.path;
    let set = loaded.engine_set;
    let named = |name: &str| apart.name(name);
    match &loaded.file {
        Err(error) => vec![Planned {
            row: Row::new(
                path,
                &named(&workload_name(path)),
                RUN_EXPORT,
                None,
                set,
                engine,
            ),
            file: Err(error),
        }],
        Ok(guest) => {
            let sizes: Vec<Option<u64>> = match (&guest.contract, sizes) {
                (Contract::Program { .. }, _) | (_, []) => vec![None],
                (Contract::Workload { .. }, sizes) => sizes.iter().copied().map(Some).collect(),
            };
            guest
                .contract
                .benchmarks()
                .into_iter()
                .flat_map(|bench| {
                    sizes
                        .iter()
                        .map(|&size| Planned {
                            row: Row::new(
                                path,
                                &named(&bench.name),
                                &bench.export,
                                size,
                                set,
                                engine,
                            ),
                            file: Ok(guest),
                        })
                        .collect::<Vec<_>>()
                })
                .collect()
        }
    }
}
