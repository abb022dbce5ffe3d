//! What a toolchain left in a core module's binary beyond its imports and
//! exports, read for the contract's refusals: the source language (the
//! `producers` custom section's `language` and `processed-by` fields, else
//! what the imports and function names betray), so that a refusal gives
//! the fix in that language; and the exports that are command-style export
//! wrappers: wasm-ld's `NAME.command_export`, which runs the C/C++
//! constructors (`__wasm_call_ctors`) before the body and the destructors
//! after it on every call, found through the `name` section's function
//! names (kept unless the module was stripped). It reads bytes; it neither
//! compiles nor checks.

use std::collections::HashMap;
use std::fmt;

/// The language a module was written in, as far as its binary tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// C or C++ (clang).
    C,
    Rust,
    Go,
    Zig,
    AssemblyScript,
    /// Nothing in the binary says.
    Unknown,
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Language::C => "C/C++",
            Language::Rust => "Rust",
            Language::Go => "Go",
            Language::Zig => "Zig",
            Language::AssemblyScript => "AssemblyScript",
            Language::Unknown => "a toolchain its sections do not name",
        })
    }
}

/// What the binary of a core module says of its toolchain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolchain {
    pub language: Language,
    /// Exports whose function is a command-style export wrapper, with the
    /// wrapper's name (`run` -> `run.command_export`).
    pub command_wrappers: Vec<(String, String)>,
}

/// How a module written in `language` is built as a WASI reactor: its
/// runtime or C library started once, by `_initialize`, and no `_start`
/// nor command wrapper around each export.
pub fn reactor_fix(language: Language) -> &'static str {
    match language {
        Language::C => {
            "build it as a WASI reactor: `clang -mexec-model=reactor` (instead of \
             `-nostartfiles -Wl,--no-entry`), whose `_initialize` runs the constructors once per instance"
        }
        Language::Go => {
            "build it as a WASI reactor: `GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared`, \
             whose `_initialize` starts Go's runtime once per instance"
        }
        Language::Rust => {
            "build it as a WASI reactor: a library crate (`crate-type = [\"cdylib\"]`, no `main`), \
             whose `_initialize` runs once per instance"
        }
        Language::Zig => {
            "build it as a WASI reactor: `zig build-exe -mexec-model=reactor -rdynamic` (or for \
             wasm32-freestanding with `-fno-entry`)"
        }
        Language::AssemblyScript => {
            "build it without `--exportStart` (or with `--exportStart _initialize`): a reactor"
        }
        Language::Unknown => {
            "build it as a WASI reactor: clang `-mexec-model=reactor`, Go \
             `go build -buildmode=c-shared`, Rust `crate-type = [\"cdylib\"]`"
        }
    }
}

/// The suffix wasm-ld gives the wrapper of an export of a command.
pub const COMMAND_EXPORT_SUFFIX: &str = ".command_export";

/// What the sections of a core module hold that [`read`] looks at.
#[derive(Default)]
struct Sections {
    /// `producers` fields: (field, values).
    producers: Vec<(String, Vec<String>)>,
    /// Function names from the `name` section, by function index.
    names: HashMap<u32, String>,
    /// Exported functions: (export name, function index).
    exported_functions: Vec<(String, u32)>,
    /// Imports: (module, name).
    imports: Vec<(String, String)>,
}

/// Read `bytes`, a core module: its language and command wrappers. A
/// section that cannot be read is skipped (the compiler has already
/// validated the module; custom sections are not validated).
pub fn read(bytes: &[u8]) -> Toolchain {
    let sections = sections(bytes);
    let language = language_of(&sections);
    let command_wrappers = sections
        .exported_functions
        .iter()
        .filter_map(|(export, index)| {
            let name = sections.names.get(index)?;
            name.ends_with(COMMAND_EXPORT_SUFFIX)
                .then(|| (export.clone(), name.clone()))
        })
        .collect();
    Toolchain {
        language,
        command_wrappers,
    }
}

/// The values of the `producers` field `field`.
fn values<'a>(sections: &'a Sections, field: &'a str) -> impl Iterator<Item = &'a String> + 'a {
    sections
        .producers
        .iter()
        .filter(move |(f, _)| f == field)
        .flat_map(|(_, v)| v.iter())
}

fn language_of(sections: &Sections) -> Language {
    let values = |field: &'static str| values(sections, field);
    let told = |value: &str| {
        let v = value.to_ascii_lowercase();
        if v.starts_with("rust") {
            Some(Language::Rust)
        } else if v == "go" || v.starts_with("go ") {
            Some(Language::Go)
        } else if v.starts_with("zig") {
            Some(Language::Zig)
        } else if v.starts_with("assemblyscript") {
            Some(Language::AssemblyScript)
        } else if v.contains("clang") {
            Some(Language::C)
        } else {
            None
        }
    };
    if let Some(language) = values("processed-by")
        .chain(values("language"))
        .find_map(|v| told(v))
    {
        return language;
    }
    // A C-family `language` (C99, C11, C_plus_plus) with no `processed-by`:
    // Zig's LLVM backend writes just that (clang adds `processed-by`).
    if values("language").any(|v| v.to_ascii_lowercase().starts_with('c')) {
        return match values("processed-by").next() {
            Some(_) => Language::C,
            None => Language::Zig,
        };
    }
    let imports_env = |name: &str| {
        sections
            .imports
            .iter()
            .any(|(m, n)| m == "env" && n == name)
    };
    let named = |prefix: &str| sections.names.values().any(|n| n.starts_with(prefix));
    if imports_env("abort") || imports_env("trace") || named("~lib/") {
        Language::AssemblyScript
    } else if named("runtime.") {
        Language::Go
    } else if named("__wasm_call_ctors") || named("__wasm_call_dtors") {
        Language::C
    } else {
        Language::Unknown
    }
}

/// The sections of `bytes` [`read`] needs; what cannot be read is left out.
fn sections(bytes: &[u8]) -> Sections {
    let mut found = Sections::default();
    let mut reader = Reader {
        bytes,
        at: 8.min(bytes.len()),
    };
    while let Some(id) = reader.byte() {
        let Some(payload) = reader.u32().and_then(|size| reader.take(size as usize)) else {
            break;
        };
        let mut section = Reader {
            bytes: payload,
            at: 0,
        };
        match id {
            0 => custom(&mut section, &mut found),
            2 => {
                found.imports = imports(&mut section).unwrap_or_default();
            }
            7 => {
                found.exported_functions = exports(&mut section).unwrap_or_default();
            }
            _ => {}
        }
    }
    found
}

fn custom(section: &mut Reader, found: &mut Sections) {
    match section.name().as_deref() {
        Some("producers") => found.producers = producers(section).unwrap_or_default(),
        Some("name") => found.names = function_names(section).unwrap_or_default(),
        _ => {}
    }
}

/// The `producers` section: fields, each with its (name, version) values;
/// the names are kept.
fn producers(section: &mut Reader) -> Option<Vec<(String, Vec<String>)>> {
    let mut fields = Vec::new();
    for _ in 0..section.u32()? {
        let field = section.name()?;
        let mut values = Vec::new();
        for _ in 0..section.u32()? {
            values.push(section.name()?);
            section.name()?; // the version
        }
        fields.push((field, values));
    }
    Some(fields)
}

/// The `name` section's function names (subsection 1).
fn function_names(section: &mut Reader) -> Option<HashMap<u32, String>> {
    while let Some(id) = section.byte() {
        let size = section.u32()? as usize;
        let payload = section.take(size)?;
        if id != 1 {
            continue;
        }
        let mut sub = Reader {
            bytes: payload,
            at: 0,
        };
        let mut names = HashMap::new();
        for _ in 0..sub.u32()? {
            let index = sub.u32()?;
            names.insert(index, sub.name()?);
        }
        return Some(names);
    }
    None
}

/// The import section's (module, name) pairs; stops at a description it
/// cannot skip (only function imports' are read past with certainty).
fn imports(section: &mut Reader) -> Option<Vec<(String, String)>> {
    let mut found = Vec::new();
    for _ in 0..section.u32()? {
        let module = section.name()?;
        let name = section.name()?;
        found.push((module, name));
        match section.byte()? {
            0x00 => {
                section.u32()?;
            }
            _ => break,
        }
    }
    Some(found)
}

/// The export section's functions: (name, function index).
fn exports(section: &mut Reader) -> Option<Vec<(String, u32)>> {
    let mut found = Vec::new();
    for _ in 0..section.u32()? {
        let name = section.name()?;
        let kind = section.byte()?;
        let index = section.u32()?;
        if kind == 0x00 {
            found.push((name, index));
        }
    }
    Some(found)
}

/// A cursor over bytes of the binary format.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    /// An unsigned LEB128 of at most 32 bits.
    fn u32(&mut self) -> Option<u32> {
        let mut value: u64 = 0;
        for shift in (0..35).step_by(7) {
            let b = self.byte()?;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return u32::try_from(value).ok();
            }
        }
        None
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let slice = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(slice)
    }

    /// A length-prefixed UTF-8 name (lossy: names are only compared).
    fn name(&mut self) -> Option<String> {
        let n = self.u32()? as usize;
        Some(String::from_utf8_lossy(self.take(n)?).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_export_wrapper_and_the_language_are_read_from_the_sections() {
        // What wasm-ld writes for a C command that exports `run`: the
        // export is the wrapper, named in the `name` section.
        let wat = r#"(module
            (@producers (language "C99" "") (processed-by "Debian clang" "14.0.6"))
            (func $run (param i64 i64) (result i64) local.get 0)
            (func $__wasm_call_ctors)
            (func $run.command_export (param i64 i64) (result i64)
                call $__wasm_call_ctors local.get 0 local.get 1 call $run)
            (export "run" (func $run.command_export)))"#;
        let bytes = wat::parse_str(wat).expect("valid WAT");
        let toolchain = read(&bytes);
        assert_eq!(toolchain.language, Language::C);
        assert_eq!(
            toolchain.command_wrappers,
            [("run".to_string(), "run.command_export".to_string())]
        );
    }

    #[test]
    fn go_rust_and_assemblyscript_are_told_apart() {
        let language = |wat: &str| read(&wat::parse_str(wat).expect("valid WAT")).language;
        assert_eq!(
            language(r#"(module (@producers (language "Go" "go1.27.3")))"#),
            Language::Go
        );
        assert_eq!(
            language(r#"(module (@producers (language "Rust" "") (processed-by "rustc" "1.9")))"#),
            Language::Rust
        );
        assert_eq!(
            language(r#"(module (import "env" "abort" (func (param i32 i32 i32 i32))))"#),
            Language::AssemblyScript
        );
        assert_eq!(
            language(r#"(module (@producers (language "C99" "")))"#),
            Language::Zig
        );
        assert_eq!(language("(module)"), Language::Unknown);
        // Bytes that are not a module at all read as nothing.
        assert_eq!(
            read(b"\0asm\x01\0\0\0\x00\xff\xff").language,
            Language::Unknown
        );
    }
}
