//! The built-in guests: an empty guest of each format, with the same exports
//! as a workload and no work (its cost through the very same call path is
//! subtracted from every sample), and a guest that only pauses and resumes
//! (the cost of a pause/resume pair is calibrated on it). They are part of
//! the instrument, not results.

use anyhow::Result;

use crate::guest::contract::RUN_EXPORT;
use std::path::Path;

use anyhow::Context;

use crate::guest::format::{Code, Format};
use crate::guest::limits::Limits;
use crate::guest::runtime::wasmtime::engine::{Engines, builtin};
use crate::guest::runtime::{Guest, Runner, Sampler};
use crate::guest::seeds::Seeds;

/// The empty core guest: the same exports as a workload, and no work. Its
/// per-call cost, measured through the very same path, is subtracted from
/// every sample of a core module.
pub const EMPTY_MODULE_WAT: &str = r#"(module
  (func (export "setup") (param i64))
  (func (export "run") (param $count i64) (param $seed i64) (result i64)
    local.get $seed))"#;

/// The empty component: the same for components.
pub const EMPTY_COMPONENT_WAT: &str = r#"(component
  (core module $m
    (func (export "setup") (param i64))
    (func (export "run") (param i64 i64) (result i64) local.get 1))
  (core instance $i (instantiate $m))
  (func (export "setup") (param "size" u64) (canon lift (core func $i "setup")))
  (func (export "run") (param "count" u64) (param "seed" u64) (result u64)
    (canon lift (core func $i "run"))))"#;

/// Calls `bench.pause` then `bench.resume`, `count` times: calibrates the cost
/// of a pause/resume pair that stays inside the clock, for core modules.
pub const PAUSE_PAIR_MODULE_WAT: &str = r#"(module
  (import "bench" "pause" (func $pause))
  (import "bench" "resume" (func $resume))
  (func (export "run") (param $count i64) (param $seed i64) (result i64)
    (block $done
      (loop $again
        (br_if $done (i64.le_s (local.get $count) (i64.const 0)))
        (call $pause)
        (call $resume)
        (local.set $count (i64.sub (local.get $count) (i64.const 1)))
        (br $again)))
    local.get $seed))"#;

/// The same for components, through the timing interface.
pub const PAUSE_PAIR_COMPONENT_WAT: &str = r#"(component
  (import "wasm-bench:workload/timing@0.1.0" (instance $timing
    (export "pause" (func))
    (export "resume" (func))))
  (core func $pause (canon lower (func $timing "pause")))
  (core func $resume (canon lower (func $timing "resume")))
  (core instance $t (export "pause" (func $pause)) (export "resume" (func $resume)))
  (core module $m
    (import "t" "pause" (func $pause))
    (import "t" "resume" (func $resume))
    (func (export "run") (param $count i64) (param $seed i64) (result i64)
      (block $done
        (loop $again
          (br_if $done (i64.le_s (local.get $count) (i64.const 0)))
          (call $pause)
          (call $resume)
          (local.set $count (i64.sub (local.get $count) (i64.const 1)))
          (br $again)))
      local.get $seed))
  (core instance $i (instantiate $m (with "t" (instance $t))))
  (func (export "run") (param "count" u64) (param "seed" u64) (result u64)
    (canon lift (core func $i "run"))))"#;

/// The built-in guests of one kind: the empty guest and the pause/resume
/// calibrator, as binaries and as wasmtime's code, so that every runtime
/// instantiates them as it does a workload.
pub struct Builtins {
    pub empty: Code,
    pub pause_pair: Code,
    empty_bytes: Vec<u8>,
    pause_pair_bytes: Vec<u8>,
}

impl Builtins {
    pub fn new(engines: &Engines, format: Format) -> Result<Self> {
        let (empty, pause_pair) = match format {
            Format::Module => (EMPTY_MODULE_WAT, PAUSE_PAIR_MODULE_WAT),
            Format::Component => (EMPTY_COMPONENT_WAT, PAUSE_PAIR_COMPONENT_WAT),
            Format::Native => return Err(crate::guest::format::not_wasm()),
        };
        Ok(Builtins {
            empty: builtin(engines, empty)?,
            pause_pair: builtin(engines, pause_pair)?,
            empty_bytes: wat::parse_str(empty).context("a built-in guest")?,
            pause_pair_bytes: wat::parse_str(pause_pair).context("a built-in guest")?,
        })
    }

    /// A fresh instance of the empty guest under `runner`.
    pub fn empty_instance(&self, runner: &dyn Runner, limits: Limits) -> Result<Box<dyn Sampler>> {
        let guest = Guest {
            path: Path::new("empty"),
            bytes: &self.empty_bytes,
            code: Some(&self.empty),
        };
        runner.instantiate(guest, RUN_EXPORT, limits, Seeds::same(0))
    }

    /// A fresh instance of the pause/resume calibrator under `runner`.
    pub fn pause_pair_instance(
        &self,
        runner: &dyn Runner,
        limits: Limits,
    ) -> Result<Box<dyn Sampler>> {
        let guest = Guest {
            path: Path::new("pause-pair"),
            bytes: &self.pause_pair_bytes,
            code: Some(&self.pause_pair),
        };
        runner.instantiate(guest, RUN_EXPORT, limits, Seeds::same(0))
    }
}
