//! `host new NAME --lang rust|wat|c|zig|assemblyscript|go|go-program`:
//! scaffold a workload that already follows the contract (`run(count,
//! seed) -> i64`, `setup(size)`), or with `go-program` a Go program timed
//! by the Sightglass protocol,
//! with a small working example for the user to replace and the build
//! command of that language's usual toolchain.
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
    /// C built with clang and wasi-libc into a core module.
    C,
    /// Zig built for wasm32-freestanding into a core module.
    Zig,
    /// AssemblyScript built with `asc` into a core module.
    AssemblyScript,
    /// Go built for GOOS=wasip1 as a WASI reactor (`//go:wasmexport`,
    /// `-buildmode=c-shared`) into a core module.
    Go,
    /// A Go program (GOOS=wasip1), timed by the Sightglass protocol.
    GoProgram,
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
/// `parent/name.wat` for WAT, a folder `parent/name/` for the others.
pub fn create(name: &str, lang: Lang, parent: &Path) -> Result<Scaffold> {
    validate_name(name, lang)?;
    match lang {
        Lang::Rust => rust::create_rust(name, parent),
        Lang::Wat => wat::create_wat(name, parent),
        Lang::C | Lang::Zig | Lang::AssemblyScript | Lang::Go | Lang::GoProgram => {
            recipes::create_from_templates(name, lang, parent)
        }
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

/// Create the folder `dir` of a scaffold, failing if it exists.
fn make_folder(dir: &Path) -> Result<()> {
    fs::create_dir(dir).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            anyhow::anyhow!("`{}` already exists: not overwriting it", dir.display())
        } else {
            anyhow::anyhow!("cannot create `{}`: {e}", dir.display())
        }
    })
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

/// `host new`: scaffold the workload `args` names and say how to build and
/// run it.
pub fn new(args: &NewArgs) -> Result<ExitStatus> {
    let lang = match args.lang {
        LangArg::Rust => Lang::Rust,
        LangArg::Wat => Lang::Wat,
        LangArg::C => Lang::C,
        LangArg::Zig => Lang::Zig,
        LangArg::Assemblyscript => Lang::AssemblyScript,
        LangArg::Go => Lang::Go,
        LangArg::GoProgram => Lang::GoProgram,
    };
    let made = create(&args.name, lang, &args.dir)?;
    for file in &made.files {
        println!("created {}", file.display());
    }
    println!("build: {}", made.build_command);
    println!("run:   {}", made.run_command);
    Ok(ExitStatus::Success)
}

mod recipes;
mod rust;
#[cfg(test)]
mod tests;
mod wat;
