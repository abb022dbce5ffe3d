//! What a core module imports and exports, with its functions' types: read
//! from wasmtime's compiled module where wasmtime runs the file, or from
//! the binary by wasmparser where another runtime compiles it, so that the
//! contract is checked the same way whichever runtime runs it, and no
//! runtime waits for wasmtime's compile of a file it does not run.

use std::fmt;

use anyhow::{Context, Result, bail};
use wasmparser::{CompositeInnerType, ExternalKind, Parser, Payload, TypeRef};

/// A function's parameter and result types, as wasm names them (`i64`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    pub params: Vec<String>,
    pub results: Vec<String>,
}

impl Signature {
    /// `(params) -> results` of value types named as wasm names them.
    pub fn of(params: &[&str], results: &[&str]) -> Self {
        let owned = |types: &[&str]| types.iter().map(|t| t.to_string()).collect();
        Signature {
            params: owned(params),
            results: owned(results),
        }
    }
}

/// `(i64, i64) -> i64`, `() -> ()`, `(i32) -> (i32, i32)`.
impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}) -> ", self.params.join(", "))?;
        match self.results.len() {
            0 => f.write_str("()"),
            1 => f.write_str(&self.results[0]),
            _ => write!(f, "({})", self.results.join(", ")),
        }
    }
}

/// What an import or an export is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Func(Signature),
    Global,
    Table,
    Memory,
    Tag,
}

/// A function's type, or what else the item is, in an error message.
impl fmt::Display for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Item::Func(signature) => signature.fmt(f),
            Item::Global => f.write_str("global"),
            Item::Table => f.write_str("table"),
            Item::Memory => f.write_str("memory"),
            Item::Tag => f.write_str("tag"),
        }
    }
}

/// One import: its module, its name and what it is.
#[derive(Debug, Clone)]
pub struct Import {
    pub module: String,
    pub name: String,
    pub item: Item,
}

/// A core module's imports and exports, in the module's order.
#[derive(Debug, Clone, Default)]
pub struct Shape {
    pub imports: Vec<Import>,
    pub exports: Vec<(String, Item)>,
}

impl Shape {
    /// The shape of a module wasmtime compiled.
    pub fn of_module(module: &wasmtime::Module) -> Self {
        Shape {
            imports: module
                .imports()
                .map(|i| Import {
                    module: i.module().to_string(),
                    name: i.name().to_string(),
                    item: item_of(&i.ty()),
                })
                .collect(),
            exports: module
                .exports()
                .map(|e| (e.name().to_string(), item_of(&e.ty())))
                .collect(),
        }
    }

    /// The shape of the core module `bytes`, read by wasmparser: its type,
    /// import, function and export sections, nothing compiled.
    pub fn parse(bytes: &[u8]) -> Result<Self> {
        let mut reading = Reading::default();
        for payload in Parser::new(0).parse_all(bytes) {
            reading
                .read(payload.context("not a valid WebAssembly module")?)
                .context("not a valid WebAssembly module")?;
        }
        Ok(reading.shape)
    }

    /// The export called `name`.
    pub fn export(&self, name: &str) -> Option<&Item> {
        self.exports.iter().find(|(n, _)| n == name).map(|(_, i)| i)
    }
}

/// wasmtime's type of an import or an export as an [`Item`].
fn item_of(ty: &wasmtime::ExternType) -> Item {
    let names = |types: &mut dyn Iterator<Item = wasmtime::ValType>| {
        types.map(|t| t.to_string()).collect::<Vec<_>>()
    };
    match ty {
        wasmtime::ExternType::Func(f) => Item::Func(Signature {
            params: names(&mut f.params()),
            results: names(&mut f.results()),
        }),
        wasmtime::ExternType::Global(_) => Item::Global,
        wasmtime::ExternType::Table(_) => Item::Table,
        wasmtime::ExternType::Memory(_) => Item::Memory,
        wasmtime::ExternType::Tag(_) => Item::Tag,
    }
}

/// The sections read so far: the types (a function's signature, `None`
/// for a type that is no function), the functions' types, the shape.
#[derive(Default)]
struct Reading {
    types: Vec<Option<Signature>>,
    functions: Vec<u32>,
    shape: Shape,
}

impl Reading {
    fn read(&mut self, payload: Payload<'_>) -> Result<()> {
        match payload {
            Payload::TypeSection(reader) => {
                for group in reader {
                    for sub in group?.into_types() {
                        self.types.push(match sub.composite_type.inner {
                            CompositeInnerType::Func(f) => Some(Signature {
                                params: f.params().iter().map(|t| t.to_string()).collect(),
                                results: f.results().iter().map(|t| t.to_string()).collect(),
                            }),
                            _ => None,
                        });
                    }
                }
            }
            Payload::ImportSection(reader) => {
                for import in reader.into_imports() {
                    let import = import?;
                    let item = match import.ty {
                        TypeRef::Func(index) | TypeRef::FuncExact(index) => {
                            self.functions.push(index);
                            self.func(index)?
                        }
                        TypeRef::Table(_) => Item::Table,
                        TypeRef::Memory(_) => Item::Memory,
                        TypeRef::Global(_) => Item::Global,
                        TypeRef::Tag(_) => Item::Tag,
                    };
                    self.shape.imports.push(Import {
                        module: import.module.to_string(),
                        name: import.name.to_string(),
                        item,
                    });
                }
            }
            Payload::FunctionSection(reader) => {
                for index in reader {
                    self.functions.push(index?);
                }
            }
            Payload::ExportSection(reader) => {
                for export in reader {
                    let export = export?;
                    let item = match export.kind {
                        ExternalKind::Func | ExternalKind::FuncExact => {
                            let ty = self.functions.get(export.index as usize).copied();
                            self.func(ty.context("an export of a function that is not there")?)?
                        }
                        ExternalKind::Table => Item::Table,
                        ExternalKind::Memory => Item::Memory,
                        ExternalKind::Global => Item::Global,
                        ExternalKind::Tag => Item::Tag,
                    };
                    self.shape.exports.push((export.name.to_string(), item));
                }
            }
            Payload::Version {
                encoding: wasmparser::Encoding::Component,
                ..
            } => bail!("a component, not a core module"),
            _ => {}
        }
        Ok(())
    }

    /// The function of type `index`.
    fn func(&self, index: u32) -> Result<Item> {
        match self.types.get(index as usize) {
            Some(Some(signature)) => Ok(Item::Func(signature.clone())),
            _ => bail!("a function of type {index}, which is no function type"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// wasmparser and wasmtime read one module's imports and exports alike.
    #[test]
    fn wasmparser_and_wasmtime_read_one_shape() -> Result<()> {
        let wat = r#"(module
            (import "bench" "pause" (func))
            (import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32)))
            (import "env" "m" (memory 1))
            (table (export "t") 1 funcref)
            (global (export "g") i32 (i32.const 0))
            (func (export "run") (param i64 i64) (result i64) (local.get 0))
            (func (export "pair") (param f32) (result i32 v128) (i32.const 0) (v128.const i64x2 0 0)))"#;
        let bytes = wat::parse_str(wat)?;
        let parsed = Shape::parse(&bytes)?;
        let engine = wasmtime::Engine::default();
        let compiled = Shape::of_module(&wasmtime::Module::new(&engine, &bytes)?);
        let words = |s: &Shape| {
            let imports: Vec<String> = s
                .imports
                .iter()
                .map(|i| format!("{}.{}: {}", i.module, i.name, i.item))
                .collect();
            let exports: Vec<String> = s.exports.iter().map(|(n, i)| format!("{n}: {i}")).collect();
            (imports, exports)
        };
        assert_eq!(words(&parsed), words(&compiled));
        assert_eq!(
            parsed.export("run"),
            Some(&Item::Func(Signature::of(&["i64", "i64"], &["i64"])))
        );
        assert_eq!(
            parsed.export("pair").map(|i| i.to_string()),
            Some("(f32) -> (i32, v128)".into())
        );
        Ok(())
    }

    /// Bytes that are no module, or a component, are refused.
    #[test]
    fn what_is_no_core_module_is_refused() {
        assert!(Shape::parse(b"\0asm\x01\0\0\0\x01\x05").is_err());
        assert!(Shape::parse(b"not wasm").is_err());
        let component = wat::parse_str("(component)").expect("a component");
        assert!(Shape::parse(&component).is_err());
    }
}
