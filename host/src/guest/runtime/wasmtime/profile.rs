//! Where the time goes: sampling a guest's stack with wasmtime's
//! `GuestProfiler` while it runs.
//!
//! Profiling needs the guest interrupted at regular intervals, so it runs on
//! an engine of its own with epoch interruption on
//! ([`crate::guest::runtime::wasmtime::engine::Engines::profiling`]); a ticker thread advances
//! the epoch every interval and each tick records the guest's stack. That
//! engine's code carries epoch checks: a profile shows where the time goes,
//! never how long it takes (timings come from the engine without them).
//! Function names come from the module's name section where it has one.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context, Result};
use wasmtime::{Engine, GuestProfiler, Store, UpdateDeadline};

use crate::guest::format::Code;

/// A profile being recorded, shared with the stores it samples.
#[derive(Clone)]
pub struct Recording {
    profiler: Arc<Mutex<Option<GuestProfiler>>>,
    interval: Duration,
}

impl Recording {
    /// Start recording `code` (named `name`) every `interval`.
    pub fn new(engine: &Engine, name: &str, code: &Code, interval: Duration) -> Result<Self> {
        let profiler = match code {
            Code::Module(module) => {
                GuestProfiler::new(engine, name, interval, [(name.to_string(), module.clone())])
            }
            Code::Component(component) => {
                GuestProfiler::new_component(engine, name, interval, component.clone(), [])
            }
        }
        .map_err(anyhow::Error::from)
        .context("starting the profiler")?;
        Ok(Recording {
            profiler: Arc::new(Mutex::new(Some(profiler))),
            interval,
        })
    }

    /// Make every epoch tick of `store` take a sample.
    pub fn arm<T: 'static>(&self, store: &mut Store<T>) {
        let profiler = Arc::clone(&self.profiler);
        let interval = self.interval;
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(move |context| {
            if let Ok(mut guard) = profiler.lock()
                && let Some(profiler) = guard.as_mut()
            {
                profiler.sample(&context, interval);
            }
            Ok(UpdateDeadline::Continue(1))
        });
    }

    /// The profile, as the Firefox Profiler's processed-profile JSON.
    pub fn finish(self) -> Result<Vec<u8>> {
        let profiler = self
            .profiler
            .lock()
            .ok()
            .and_then(|mut guard| guard.take())
            .context("the profile was already finished")?;
        let mut json = Vec::new();
        profiler
            .finish(&mut json)
            .map_err(anyhow::Error::from)
            .context("writing the profile")?;
        Ok(json)
    }
}

/// A thread that advances `engine`'s epoch every interval until dropped.
pub struct Ticker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Ticker {
    pub fn start(engine: &Engine, interval: Duration) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let engine = engine.clone();
        let stopped = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            while !stopped.load(Ordering::Relaxed) {
                std::thread::sleep(interval);
                engine.increment_epoch();
            }
        });
        Ticker {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
