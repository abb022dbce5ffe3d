//! Components with arbitrary imports and exports, loaded as workloads.
//!
//! wasm-smith cannot generate components any more, and raw bytes seldom make
//! a valid one, so this target builds one from a structured description: an
//! import list (the timing interface, other versions, other interfaces, bare
//! functions; each asking for arbitrary functions) and an export list (`run`,
//! `run-<name>`, `setup`, other names; functions lifted from a core module,
//! of the contract's type or of arbitrary primitive types, or a core module
//! in place of a function). It is written as WAT, converted, and loaded with one of the engine
//! configurations; a description that
//! makes no valid component (a duplicate name, say) is an error like any
//! other. Guest code is never run (the core functions are `unreachable`).

#![no_main]

use std::fmt::Write;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Spec {
    /// Engine configuration (see `host_fuzz::config`).
    engine: u8,
    imports: Vec<Import>,
    exports: Vec<Export>,
}

#[derive(Arbitrary, Debug)]
enum Word {
    Run,
    Setup,
    Pause,
    Resume,
    A,
    Fast,
    Count,
    X2,
}

impl Word {
    fn text(&self) -> &'static str {
        match self {
            Word::Run => "run",
            Word::Setup => "setup",
            Word::Pause => "pause",
            Word::Resume => "resume",
            Word::A => "a",
            Word::Fast => "fast",
            Word::Count => "count",
            Word::X2 => "x2",
        }
    }
}

/// A kebab-case name: `first(-word)*`.
#[derive(Arbitrary, Debug)]
struct Name(Word, Vec<Word>);

impl Name {
    fn text(&self) -> String {
        let mut s = self.0.text().to_string();
        for w in self.1.iter().take(3) {
            s.push('-');
            s.push_str(w.text());
        }
        s
    }
}

#[derive(Arbitrary, Debug)]
enum ImportName {
    Timing,
    TimingVersion(u8, u8, u8),
    Unversioned,
    Wasi,
    Plain(Name),
}

impl ImportName {
    fn text(&self) -> String {
        match self {
            ImportName::Timing => "wasm-bench:workload/timing@0.1.0".into(),
            ImportName::TimingVersion(a, b, c) => {
                format!("wasm-bench:workload/timing@{}.{}.{}", a % 3, b % 3, c % 3)
            }
            ImportName::Unversioned => "wasm-bench:workload/timing".into(),
            ImportName::Wasi => "wasi:cli/environment@0.2.0".into(),
            ImportName::Plain(n) => n.text(),
        }
    }
}

#[derive(Arbitrary, Debug)]
enum FuncName {
    Pause,
    Resume,
    Other(Name),
}

#[derive(Arbitrary, Debug)]
struct Import {
    name: ImportName,
    /// An instance asking for these functions, or (when `None`) a bare
    /// function.
    funcs: Option<Vec<(FuncName, Typing)>>,
}

#[derive(Arbitrary, Debug)]
enum ExportName {
    Run,
    RunNamed(Name),
    Setup,
    Other(Name),
}

#[derive(Arbitrary, Debug)]
struct Export {
    name: ExportName,
    /// A lifted function, or (when `None`) a core module.
    sig: Option<Typing>,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Prim {
    Bool,
    S8,
    U8,
    S16,
    U16,
    S32,
    U32,
    S64,
    U64,
    F32,
    F64,
    Char,
}

impl Prim {
    fn text(self) -> &'static str {
        match self {
            Prim::Bool => "bool",
            Prim::S8 => "s8",
            Prim::U8 => "u8",
            Prim::S16 => "s16",
            Prim::U16 => "u16",
            Prim::S32 => "s32",
            Prim::U32 => "u32",
            Prim::S64 => "s64",
            Prim::U64 => "u64",
            Prim::F32 => "f32",
            Prim::F64 => "f64",
            Prim::Char => "char",
        }
    }

    /// The core type it flattens to.
    fn core(self) -> &'static str {
        match self {
            Prim::S64 | Prim::U64 => "i64",
            Prim::F32 => "f32",
            Prim::F64 => "f64",
            _ => "i32",
        }
    }
}

/// A function's type: the one the contract asks for in its place (half the
/// time, so that components that follow the contract are common), or any.
#[derive(Arbitrary, Debug)]
enum Typing {
    Right,
    Any(Sig),
}

impl Typing {
    /// The type, where `right` is the contract's.
    fn sig(&self, right: &[Prim], right_result: Option<Prim>) -> Sig {
        match self {
            Typing::Right => Sig {
                params: right.to_vec(),
                result: right_result,
            },
            Typing::Any(sig) => sig.clone(),
        }
    }

    /// For an export named `name`: `run*` take (u64, u64) -> u64, `setup`
    /// takes (u64); anything else, nothing.
    fn export_sig(&self, name: &str) -> Sig {
        if name == "run" || name.starts_with("run-") {
            self.sig(&[Prim::U64, Prim::U64], Some(Prim::U64))
        } else if name == "setup" {
            self.sig(&[Prim::U64], None)
        } else {
            self.sig(&[], None)
        }
    }
}

#[derive(Arbitrary, Debug, Clone)]
struct Sig {
    params: Vec<Prim>,
    result: Option<Prim>,
}

impl Sig {
    /// At most 4 parameters: their flat form stays in registers, so a lift
    /// needs no memory.
    fn params(&self) -> &[Prim] {
        &self.params[..self.params.len().min(4)]
    }

    fn component(&self) -> String {
        let mut s = String::new();
        for (i, p) in self.params().iter().enumerate() {
            let _ = write!(s, " (param \"p{i}\" {})", p.text());
        }
        if let Some(r) = self.result {
            let _ = write!(s, " (result {})", r.text());
        }
        s
    }

    fn core(&self) -> String {
        let mut s = String::new();
        for p in self.params() {
            let _ = write!(s, " (param {})", p.core());
        }
        if let Some(r) = self.result {
            let _ = write!(s, " (result {})", r.core());
        }
        s
    }
}

fn wat(spec: &Spec) -> String {
    let mut w = String::from("(component\n");
    for import in spec.imports.iter().take(4) {
        let name = import.name.text();
        match &import.funcs {
            None => {
                let _ = writeln!(w, "  (import \"{name}\" (func))");
            }
            Some(funcs) => {
                let _ = write!(w, "  (import \"{name}\" (instance");
                for (f, typing) in funcs.iter().take(4) {
                    let sig = typing.sig(&[], None);
                    let f = match f {
                        FuncName::Pause => "pause".to_string(),
                        FuncName::Resume => "resume".to_string(),
                        FuncName::Other(n) => n.text(),
                    };
                    let _ = write!(w, " (export \"{f}\" (func{}))", sig.component());
                }
                w.push_str("))\n");
            }
        }
    }
    let exports: Vec<(String, Option<Sig>)> = spec
        .exports
        .iter()
        .take(6)
        .map(|e| {
            let name = match &e.name {
                ExportName::Run => "run".to_string(),
                ExportName::RunNamed(n) => format!("run-{}", n.text()),
                ExportName::Setup => "setup".to_string(),
                ExportName::Other(n) => n.text(),
            };
            let sig = e.sig.as_ref().map(|t| t.export_sig(&name));
            (name, sig)
        })
        .collect();
    w.push_str("  (core module $m\n");
    for (i, (_, sig)) in exports.iter().enumerate() {
        if let Some(sig) = sig {
            let _ = writeln!(w, "    (func (export \"f{i}\"){} unreachable)", sig.core());
        }
    }
    w.push_str("  )\n  (core instance $i (instantiate $m))\n");
    for (i, (name, sig)) in exports.iter().enumerate() {
        match sig {
            Some(sig) => {
                let _ = writeln!(
                    w,
                    "  (func (export \"{name}\"){} (canon lift (core func $i \"f{i}\")))",
                    sig.component()
                );
            }
            None => {
                let _ = writeln!(w, "  (export \"{name}\" (core module $m))");
            }
        }
    }
    w.push(')');
    w
}

fuzz_target!(|spec: Spec| {
    let text = wat(&spec);
    if let Ok(bytes) = wat::parse_str(&text) {
        host_fuzz::load(usize::from(spec.engine), "component.wasm", &bytes);
    }
});
