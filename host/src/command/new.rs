//! `host new NAME --lang rust|wat`: scaffold a workload that already follows
//! the contract (`run(count, seed) -> i64`, `setup(size)`), with a small
//! working example for the user to replace.
//!
//! It writes new files only: it refuses a name the contract or cargo cannot
//! use and never overwrites anything. It does not build what it writes (it
//! says how to) and does not run it.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::cli::{LangArg, NewArgs};
use crate::util::exit::ExitStatus;

/// The language of a new workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// A `no_std` Rust crate built for wasm32-unknown-unknown (a core module).
    Rust,
    /// A core module in WebAssembly text, run as is.
    Wat,
}

/// What [`create`] wrote and how to build and run it.
#[derive(Debug, Clone)]
pub struct Scaffold {
    /// Every file written, as `parent.join(...)`.
    pub files: Vec<PathBuf>,
    /// The shell command that builds the workload, or `no build needed`.
    pub build_command: String,
    /// The shell command that measures it.
    pub run_command: String,
}

/// What [`Scaffold::build_command`] says for WAT.
pub const NO_BUILD: &str = "no build needed";

/// The Rust target a core-module workload is built for.
pub const RUST_TARGET: &str = "wasm32-unknown-unknown";

/// Write a new workload called `name` into `parent` (which must exist):
/// `parent/name/` (a cargo crate) for Rust, `parent/name.wat` for WAT.
pub fn create(name: &str, lang: Lang, parent: &Path) -> Result<Scaffold> {
    validate_name(name, lang)?;
    match lang {
        Lang::Rust => create_rust(name, parent),
        Lang::Wat => create_wat(name, parent),
    }
}

/// Rust keywords and the crates every Rust build already has: cargo refuses
/// them as package names.
const RUST_RESERVED: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen", "core", "std",
    "alloc", "test",
];

/// A name is letters, digits, `-` and `_`, starting with a letter.
fn validate_name(name: &str, lang: Lang) -> Result<()> {
    if name.is_empty() {
        bail!(
            "the workload name is empty: use letters, digits, '-' and '_', starting with a letter"
        );
    }
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        bail!("invalid workload name `{name}`: it must start with a letter (a-z, A-Z)");
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
    {
        bail!(
            "invalid workload name `{name}`: `{bad}` is not allowed (use letters, digits, '-' and '_')"
        );
    }
    if lang == Lang::Rust {
        let crate_name = name.replace('-', "_");
        if RUST_RESERVED.contains(&name) || RUST_RESERVED.contains(&crate_name.as_str()) {
            bail!(
                "invalid workload name `{name}`: a Rust keyword or built-in crate name, which cargo refuses as a package name"
            );
        }
    }
    Ok(())
}

/// Create `path` and write `contents`, failing if it exists.
fn write_new(path: &Path, contents: &str) -> Result<()> {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                anyhow::anyhow!("`{}` already exists: not overwriting it", path.display())
            } else {
                anyhow::anyhow!("cannot create `{}`: {e}", path.display())
            }
        })?;
    file.write_all(contents.as_bytes())
        .with_context(|| format!("writing `{}`", path.display()))
}

/// A path for a shell command: as is when it is plain, single-quoted when it
/// holds anything a shell would interpret.
fn shell_path(path: &Path) -> String {
    let text = path.display().to_string();
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@=".contains(c));
    if plain {
        text
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// `parent/rest`, written without a leading `./` when `parent` is the
/// current directory.
fn under(parent: &Path, rest: impl AsRef<Path>) -> PathBuf {
    if parent.as_os_str().is_empty() || parent == Path::new(".") {
        rest.as_ref().to_path_buf()
    } else {
        parent.join(rest)
    }
}

fn create_rust(name: &str, parent: &Path) -> Result<Scaffold> {
    let dir = under(parent, name);
    fs::create_dir(&dir).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            anyhow::anyhow!("`{}` already exists: not overwriting it", dir.display())
        } else {
            anyhow::anyhow!("cannot create `{}`: {e}", dir.display())
        }
    })?;
    let written = write_rust_files(name, &dir);
    if written.is_err() {
        // The folder is ours (create_dir just made it): leave nothing half-done.
        let _ = fs::remove_dir_all(&dir);
    }
    let files = written?;
    let wasm = rust_wasm_path(name);
    Ok(Scaffold {
        files,
        build_command: format!(
            "cd {} && cargo build --release --target {RUST_TARGET}",
            shell_path(&dir)
        ),
        run_command: format!("host run {}", shell_path(&dir.join(wasm))),
    })
}

/// Where cargo puts the module, relative to the crate folder.
fn rust_wasm_path(name: &str) -> String {
    format!(
        "target/{RUST_TARGET}/release/{}.wasm",
        name.replace('-', "_")
    )
}

fn write_rust_files(name: &str, dir: &Path) -> Result<Vec<PathBuf>> {
    let src = dir.join("src");
    fs::create_dir(&src).with_context(|| format!("cannot create `{}`", src.display()))?;
    let files = [
        (dir.join("Cargo.toml"), rust_cargo_toml(name)),
        (src.join("lib.rs"), rust_lib_rs(name)),
        (dir.join("README.md"), rust_readme(name)),
        (dir.join(".gitignore"), "/target\n".to_string()),
    ];
    for (path, contents) in &files {
        write_new(path, contents)?;
    }
    Ok(files.into_iter().map(|(path, _)| path).collect())
}

fn rust_cargo_toml(name: &str) -> String {
    format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"
publish = false

[lib]
# A cdylib for wasm32-unknown-unknown is a core wasm module.
crate-type = ["cdylib"]
path = "src/lib.rs"

# A workspace of its own: building here never joins an enclosing workspace.
[workspace]

[profile.release]
opt-level = 3
lto = true
codegen-units = 1
panic = "abort"
strip = true
"#
    )
}

fn rust_lib_rs(name: &str) -> String {
    format!(
        r#"//! {name}: a wasm-bench workload (a core wasm module).
//!
//! The contract `host run` checks:
//! - `run(count, seed) -> i64` performs `count` operations starting from
//!   `seed` and returns a value that depends on every one of them, so that
//!   nothing can be optimised away. The host picks the seed at run time.
//! - `setup(size)` (optional) is called once per instance, untimed, before
//!   anything is measured, with the `--size` of the row (0 without `--size`).
//! - The module imports nothing, except optionally `bench.pause` and
//!   `bench.resume` (see below).
//! - More benchmarks in one module: export more `run_<name>` functions of
//!   the same type; each becomes a row named `file:name`.
//!
//! The example below is a working benchmark of a xorshift64 step; replace
//! the body of the loop in `run` with the operation you want to measure.
#![no_std]

use core::sync::atomic::{{AtomicI64, Ordering}};

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {{
    core::arch::wasm32::unreachable()
}}

/// The input size given to `setup` (0 when `host run` has no `--size`).
static SIZE: AtomicI64 = AtomicI64::new(0);

#[unsafe(no_mangle)]
pub extern "C" fn setup(size: i64) {{
    SIZE.store(size, Ordering::Relaxed);
    // Prepare inputs of this size here (e.g. grow memory and fill a table):
    // setup is not timed.
}}

#[unsafe(no_mangle)]
pub extern "C" fn run(count: i64, seed: i64) -> i64 {{
    let mut x = (seed as u64) | 1; // xorshift64 state: never zero
    let mut acc = SIZE.load(Ordering::Relaxed) as u64;
    for _ in 0..count {{
        // One operation (replace it): a xorshift64 step, folded into `acc`
        // so that the result depends on every iteration.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        acc = acc.rotate_left(1) ^ x;
    }}
    acc as i64
}}

// Per-op set-up that must not be timed goes between `bench.pause()` and
// `bench.resume()`. To use them, declare the imports:
//
// #[link(wasm_import_module = "bench")]
// unsafe extern "C" {{
//     fn pause();
//     fn resume();
// }}
//
// and in `run`:
//
//     // SAFETY: host callbacks without arguments.
//     unsafe {{ pause() }};
//     // ... prepare the inputs of the `count` operations, untimed ...
//     unsafe {{ resume() }};
//
// The cost of a pause/resume pair is calibrated and subtracted once per
// pause, but every pair adds noise: pause as rarely as you can (once per
// `run` call, not once per operation).
"#
    )
}

fn rust_readme(name: &str) -> String {
    let wasm = rust_wasm_path(name);
    format!(
        r#"# {name}

A wasm-bench workload: a `no_std` Rust crate built into a core wasm module
that exports `run(count, seed) -> i64` and `setup(size)`. Replace the example operation in `src/lib.rs` with yours.

Build (in this folder; once: `rustup target add {RUST_TARGET}`):

    cargo build --release --target {RUST_TARGET}

The module is then `{wasm}` (unless `CARGO_TARGET_DIR` is set). Measure it:

    host run {wasm}

Other flags of `host run` apply, e.g. `--size 1000` (passed to `setup`) or
`host compare` against another variant.
"#
    )
}

fn create_wat(name: &str, parent: &Path) -> Result<Scaffold> {
    let file_name = format!("{name}.wat");
    let path = under(parent, &file_name);
    write_new(&path, &wat_text(name))?;
    Ok(Scaffold {
        build_command: NO_BUILD.to_string(),
        run_command: format!("host run {}", shell_path(&path)),
        files: vec![path],
    })
}

fn wat_text(name: &str) -> String {
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

/// `host new`: scaffold the workload `args` names and say how to build and
/// run it.
pub fn new(args: &NewArgs) -> Result<ExitStatus> {
    let lang = match args.lang {
        LangArg::Rust => Lang::Rust,
        LangArg::Wat => Lang::Wat,
    };
    let made = create(&args.name, lang, &args.dir)?;
    for file in &made.files {
        println!("created {}", file.display());
    }
    println!("build: {}", made.build_command);
    println!("run:   {}", made.run_command);
    Ok(ExitStatus::Success)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guest::Contract;
    use crate::guest::contract::check_contract;
    use crate::guest::format::Code;
    use std::process::Command;
    use wasmtime::{Engine, Instance, Module, Store};

    /// A fresh folder under the system temp dir, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(tag: &str) -> Self {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            let path = std::env::temp_dir().join(format!(
                "wasm-bench-scaffold-{tag}-{}-{nanos}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            fs::create_dir_all(&path).expect("create a temp dir");
            TempDir(path)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    /// What the examples compute, in plain Rust.
    fn reference(size: i64, count: i64, seed: i64) -> i64 {
        let mut x = (seed as u64) | 1;
        let mut acc = size as u64;
        for _ in 0..count {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            acc = acc.rotate_left(1) ^ x;
        }
        acc as i64
    }

    /// Check the contract and call setup/run on a compiled example.
    fn check_example(engine: &Engine, module: Module, file_name: &str) {
        let code = Code::Module(module.clone());
        let contract = check_contract(engine, &code, file_name).expect("follows the contract");
        let Contract::Workload {
            benchmarks,
            has_setup,
            uses_pause,
        } = contract
        else {
            panic!("a program: {contract:?}");
        };
        assert_eq!(benchmarks.len(), 1);
        assert!(has_setup);
        assert!(!uses_pause);

        let mut store = Store::new(engine, ());
        let instance = Instance::new(&mut store, &module, &[]).expect("instantiates");
        let run = instance
            .get_typed_func::<(i64, i64), i64>(&mut store, "run")
            .expect("run(i64, i64) -> i64");
        let setup = instance
            .get_typed_func::<i64, ()>(&mut store, "setup")
            .expect("setup(i64)");
        assert_eq!(
            run.call(&mut store, (1000, 42)).expect("runs"),
            reference(0, 1000, 42)
        );
        assert_eq!(
            run.call(&mut store, (0, 7)).expect("runs"),
            reference(0, 0, 7)
        );
        setup.call(&mut store, 64).expect("sets up");
        assert_eq!(
            run.call(&mut store, (999, -5)).expect("runs"),
            reference(64, 999, -5)
        );
        // The result depends on the count and on the seed.
        assert_ne!(
            run.call(&mut store, (10, 1)).expect("runs"),
            run.call(&mut store, (11, 1)).expect("runs")
        );
        assert_ne!(
            run.call(&mut store, (10, 2)).expect("runs"),
            run.call(&mut store, (10, 4)).expect("runs")
        );
    }

    #[test]
    fn names_are_validated_with_the_name_in_the_error() {
        for good in ["xor", "My-bench_2", "a"] {
            assert!(validate_name(good, Lang::Rust).is_ok(), "{good}");
            assert!(validate_name(good, Lang::Wat).is_ok(), "{good}");
        }
        for bad in ["2fast", "-x", "_x", "a b", "a/b", "../x", "naïve", "x.wat"] {
            let err = validate_name(bad, Lang::Wat).expect_err(bad).to_string();
            assert!(err.contains(&format!("`{bad}`")), "{err}");
        }
        assert!(validate_name("", Lang::Rust).is_err());
        // Cargo refuses keywords and built-in crates; WAT files do not care.
        let err = validate_name("fn", Lang::Rust)
            .expect_err("keyword")
            .to_string();
        assert!(err.contains("`fn`"), "{err}");
        assert!(validate_name("test", Lang::Rust).is_err());
        assert!(validate_name("fn", Lang::Wat).is_ok());
    }

    #[test]
    fn invalid_name_writes_nothing() {
        let tmp = TempDir::new("invalid");
        assert!(create("../escape", Lang::Wat, &tmp.0).is_err());
        assert!(create("9lives", Lang::Rust, &tmp.0).is_err());
        assert_eq!(fs::read_dir(&tmp.0).expect("lists").count(), 0);
    }

    #[test]
    fn wat_scaffold_compiles_and_follows_the_contract() {
        let tmp = TempDir::new("wat");
        let s = create("my-bench", Lang::Wat, &tmp.0).expect("creates");
        let path = tmp.0.join("my-bench.wat");
        assert_eq!(s.files, vec![path.clone()]);
        assert_eq!(s.build_command, "no build needed");
        assert_eq!(s.run_command, format!("host run {}", shell_path(&path)));

        let text = fs::read_to_string(&path).expect("reads");
        assert!(text.contains("host run my-bench.wat"));
        assert!(text.contains(r#"(import "bench" "pause" (func $pause))"#));
        let bytes = wat::parse_str(&text).expect("valid WAT");
        let engine = Engine::default();
        let module = Module::new(&engine, &bytes).expect("compiles");
        check_example(&engine, module, "my-bench.wat");
    }

    #[test]
    fn existing_files_are_never_overwritten() {
        let tmp = TempDir::new("exists");
        create("twice", Lang::Wat, &tmp.0).expect("first time");
        let err = create("twice", Lang::Wat, &tmp.0)
            .expect_err("second time")
            .to_string();
        assert!(
            err.contains("twice.wat") && err.contains("already exists"),
            "{err}"
        );

        fs::create_dir(tmp.0.join("taken")).expect("mkdir");
        fs::write(tmp.0.join("taken/keep.txt"), "mine").expect("write");
        let err = create("taken", Lang::Rust, &tmp.0)
            .expect_err("folder exists")
            .to_string();
        assert!(
            err.contains("taken") && err.contains("already exists"),
            "{err}"
        );
        assert_eq!(
            fs::read_to_string(tmp.0.join("taken/keep.txt")).expect("kept"),
            "mine"
        );
    }

    #[test]
    fn commands_relative_to_the_current_directory_and_quoted_when_needed() {
        assert_eq!(under(Path::new("."), "x.wat"), PathBuf::from("x.wat"));
        assert_eq!(under(Path::new(""), "x.wat"), PathBuf::from("x.wat"));
        assert_eq!(under(Path::new("a/b"), "x.wat"), PathBuf::from("a/b/x.wat"));
        assert_eq!(shell_path(Path::new("a/b-c_d.wat")), "a/b-c_d.wat");
        assert_eq!(shell_path(Path::new("my dir/x.wat")), "'my dir/x.wat'");
        assert_eq!(shell_path(Path::new("it's/x")), r"'it'\''s/x'");
    }

    #[test]
    fn rust_scaffold_has_its_files_and_builds_against_the_contract() {
        let tmp = TempDir::new("rust");
        let s = create("my-bench", Lang::Rust, &tmp.0).expect("creates");
        let dir = tmp.0.join("my-bench");
        assert_eq!(
            s.files,
            vec![
                dir.join("Cargo.toml"),
                dir.join("src/lib.rs"),
                dir.join("README.md"),
                dir.join(".gitignore"),
            ]
        );
        assert_eq!(
            s.build_command,
            format!(
                "cd {} && cargo build --release --target wasm32-unknown-unknown",
                shell_path(&dir)
            )
        );
        let wasm_rel = "target/wasm32-unknown-unknown/release/my_bench.wasm";
        assert_eq!(
            s.run_command,
            format!("host run {}", shell_path(&dir.join(wasm_rel)))
        );

        let toml = fs::read_to_string(dir.join("Cargo.toml")).expect("reads");
        for line in [
            r#"name = "my-bench""#,
            r#"edition = "2024""#,
            r#"crate-type = ["cdylib"]"#,
            "[workspace]",
            "opt-level = 3",
            "lto = true",
            "codegen-units = 1",
            r#"panic = "abort""#,
            "strip = true",
        ] {
            assert!(toml.lines().any(|l| l == line), "Cargo.toml lacks {line}");
        }
        let lib = fs::read_to_string(dir.join("src/lib.rs")).expect("reads");
        assert!(lib.contains("#![no_std]"));
        assert!(lib.contains("pub extern \"C\" fn run(count: i64, seed: i64) -> i64"));
        assert!(lib.contains("pub extern \"C\" fn setup(size: i64)"));
        assert!(lib.contains("#[link(wasm_import_module = \"bench\")]"));
        let readme = fs::read_to_string(dir.join("README.md")).expect("reads");
        assert!(readme.contains("cargo build --release --target wasm32-unknown-unknown"));
        assert!(readme.contains(&format!("host run {wasm_rel}")));

        build_and_check(&dir, "my_bench");
    }

    /// Build the generated crate when the wasm target is installed, and
    /// check the module; otherwise say why not.
    fn build_and_check(dir: &Path, lib_name: &str) {
        let installed = Command::new("rustup")
            .args(["target", "list", "--installed"])
            .output();
        let has_target = installed.as_ref().is_ok_and(|o| {
            o.status.success()
                && String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .any(|l| l.trim() == RUST_TARGET)
        });
        if !has_target {
            println!("note: {RUST_TARGET} is not installed: the generated crate was not built");
            return;
        }
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let target_dir = dir.join("target");
        let out = Command::new(cargo)
            .current_dir(dir)
            .args([
                "build",
                "--release",
                "--offline",
                "--quiet",
                "--target",
                RUST_TARGET,
            ])
            .env("CARGO_TARGET_DIR", &target_dir)
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("CARGO_BUILD_RUSTFLAGS")
            .output()
            .expect("cargo starts");
        assert!(
            out.status.success(),
            "cargo build failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let wasm = target_dir.join(format!("{RUST_TARGET}/release/{lib_name}.wasm"));
        let bytes = fs::read(&wasm).expect("the module was built");
        let engine = Engine::default();
        let module = Module::new(&engine, &bytes).expect("compiles");
        check_example(&engine, module, &format!("{lib_name}.wasm"));
    }
}
