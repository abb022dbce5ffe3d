//! Tests of `host new`: names, files, and the scaffolds built and checked
//! against the contract.

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
fn check_example(engine: &Engine, module: Module, bytes: &[u8], file_name: &str) {
    let code = Code::Module(module.clone());
    let contract = check_contract(engine, &code, bytes, file_name).expect("follows the contract");
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
    let bytes = ::wat::parse_str(&text).expect("valid WAT");
    let engine = Engine::default();
    let module = Module::new(&engine, &bytes).expect("compiles");
    check_example(&engine, module, &bytes, "my-bench.wat");
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
    assert!(lib.contains("#![cfg_attr(target_arch = \"wasm32\", no_std)]"));
    // The panic handler is wasm's only: native code has the standard one.
    assert!(lib.contains("#[cfg(target_arch = \"wasm32\")]\n#[panic_handler]"));
    assert!(lib.contains("pub extern \"C\" fn run(count: i64, seed: i64) -> i64"));
    assert!(lib.contains("pub extern \"C\" fn setup(size: i64)"));
    assert!(lib.contains("#[link(wasm_import_module = \"bench\")]"));
    let readme = fs::read_to_string(dir.join("README.md")).expect("reads");
    assert!(readme.contains("cargo build --release --target wasm32-unknown-unknown"));
    assert!(readme.contains(&format!("host run {wasm_rel}")));
    assert!(readme.contains(&format!(
        "    cargo build --release\n    host compare {wasm_rel} target/release/libmy_bench.so\n"
    )));
    assert!(readme.contains("`my_bench (wasm)` and `my_bench (native)`"));

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
    check_example(&engine, module, &bytes, &format!("{lib_name}.wasm"));
}

#[test]
fn templated_scaffolds_name_their_files_and_leave_no_placeholder() {
    use std::os::unix::fs::PermissionsExt as _;
    let tmp = TempDir::new("templates");
    for (lang, source) in [
        (Lang::C, "my-bench.c"),
        (Lang::Zig, "my-bench.zig"),
        (Lang::AssemblyScript, "my-bench.ts"),
        (Lang::Go, "my-bench.go"),
        (Lang::GoProgram, "main.go"),
    ] {
        let parent = tmp.0.join(format!("{lang:?}"));
        fs::create_dir(&parent).expect("creates");
        let s = create("my-bench", lang, &parent).expect("creates");
        let dir = parent.join("my-bench");
        assert!(
            s.files.contains(&dir.join(source)),
            "{lang:?}: {:?}",
            s.files
        );
        assert_eq!(s.build_command, shell_path(&dir.join("build.sh")));
        let wasm = dir.join("my-bench.wasm");
        assert_eq!(s.run_command, format!("host run {}", shell_path(&wasm)));
        for file in &s.files {
            let text = fs::read_to_string(file).expect("reads");
            assert!(
                !text.contains("{{"),
                "{}: a placeholder is left",
                file.display()
            );
        }
        let build = fs::read_to_string(dir.join("build.sh")).expect("reads");
        assert!(build.contains("-o my-bench.wasm") || build.contains("=my-bench.wasm"));
        let mode = fs::metadata(dir.join("build.sh"))
            .expect("stats")
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111, "{lang:?}: build.sh is not executable");
        // A second scaffold of the same name overwrites nothing.
        let err = create("my-bench", lang, &parent).expect_err("exists");
        assert!(err.to_string().contains("already exists"), "{err}");
    }
}
