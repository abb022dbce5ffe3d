//! A suite's files compiled into the compile cache ahead of their turn,
//! while the benchmarks before them are measured ([`compile_ahead`]).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::guest::load::{self, all_engines};
use crate::guest::sandbox;
use crate::options::Settings;
use crate::platform::thread::run_when_idle;

/// Compile `files` (a suite's benchmarks') into the compile cache ahead of
/// their turn, on a thread of the idle scheduling class
/// ([`run_when_idle`]: it takes only a core the measuring worker leaves
/// free), so that a benchmark's own load is a cache hit. It stops when
/// the flag returned is set, or at Ctrl-C; without a cache it does
/// nothing. What it cannot compile each benchmark finds again on its turn.
pub fn compile_ahead(settings: &Settings, files: Vec<PathBuf>) -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let Some(cache) = settings.cache.clone() else {
        return stop;
    };
    let (configs, max_bytes) = (settings.engines.clone(), settings.max_file_bytes);
    let stopped = Arc::clone(&stop);
    let compile = move || {
        run_when_idle();
        let Ok(engines) = all_engines(&configs, Some(&cache)) else {
            return;
        };
        for path in &files {
            for engines in &engines {
                if stopped.load(Ordering::Relaxed) || sandbox::interrupted() {
                    return;
                }
                let _ = load::load(engines, path, max_bytes);
            }
        }
    };
    if std::thread::Builder::new()
        .name("compile-ahead".into())
        .spawn(compile)
        .is_err()
    {
        stop.store(true, Ordering::Relaxed);
    }
    stop
}
