//! The WAT scaffold: a core module in WebAssembly text, measured as it is.

use std::path::Path;

use anyhow::Result;

use super::{NO_BUILD, Scaffold, shell_path, under, write_new};

pub(super) fn create_wat(name: &str, parent: &Path) -> Result<Scaffold> {
    let file_name = format!("{name}.wat");
    let path = under(parent, &file_name);
    write_new(&path, &wat_text(name))?;
    Ok(Scaffold {
        build_command: NO_BUILD.to_string(),
        run_command: format!("host run {}", shell_path(&path)),
        files: vec![path],
    })
}

pub(super) fn wat_text(name: &str) -> String {
    format!(
        r#";; {name}: a wasm-bench workload (a core module in WebAssembly text).
;;
;; The contract `host run` checks:
;; - `run(count, seed) -> i64` performs `count` operations starting from
;;   `seed` and returns a value that depends on every one of them, so that
;;   nothing can be optimised away. The host picks the seed at run time.
;; - `setup(size)` (optional) is called once per instance, untimed, with the
;;   `--size` of the row (0 without `--size`).
;; - The module imports nothing, except optionally, to keep per-op set-up
;;   out of the clock (pause as rarely as you can: each pair adds noise):
;;     (import "bench" "pause" (func $pause))
;;     (import "bench" "resume" (func $resume))
;; - More benchmarks in one module: export more `run_<name>` functions of
;;   the same type; each becomes a row named `file:name`.
;;
;; The example is a working benchmark of a xorshift64 step; replace the
;; marked operation in the loop with yours. No build needed:
;;   host run {name}.wat
(module
  ;; The input size given to `setup` (0 without `--size`).
  (global $size (mut i64) (i64.const 0))

  (func (export "setup") (param $size i64)
    (global.set $size (local.get $size)))

  (func (export "run") (param $count i64) (param $seed i64) (result i64)
    (local $x i64)   ;; xorshift64 state: never zero
    (local $acc i64) ;; depends on every iteration
    (local.set $x (i64.or (local.get $seed) (i64.const 1)))
    (local.set $acc (global.get $size))
    (block $done
      (loop $next
        (br_if $done (i64.le_s (local.get $count) (i64.const 0)))
        ;; --- one operation (replace it): a xorshift64 step, folded into $acc
        (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 13))))
        (local.set $x (i64.xor (local.get $x) (i64.shr_u (local.get $x) (i64.const 7))))
        (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 17))))
        (local.set $acc (i64.xor (i64.rotl (local.get $acc) (i64.const 1)) (local.get $x)))
        ;; ---
        (local.set $count (i64.sub (local.get $count) (i64.const 1)))
        (br $next)))
    (local.get $acc)))
"#
    )
}
