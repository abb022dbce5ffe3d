//! The binary format of a WebAssembly file, told by its header, and compiled
//! code in that format. Nothing here knows the contract.

use std::fmt;

use anyhow::{Context, Result, bail};
use wasmtime::component::Component;
use wasmtime::{Engine, Module};

/// The binary format of a file, told by its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    Module,
    Component,
    /// Not wasm: a shared library of native code (a `.so`), run by
    /// [`crate::guest::runtime::native`].
    Native,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Module => "module",
            Format::Component => "component",
            Format::Native => "native library",
        })
    }
}

/// Tell a core module from a component by the binary header.
pub fn detect(bytes: &[u8]) -> Result<Format> {
    if bytes.is_empty() {
        bail!("the file is empty");
    }
    if bytes.len() < 8 || &bytes[..4] != b"\0asm" {
        bail!("not a WebAssembly binary (no `\\0asm` header)");
    }
    // The 4 bytes after the magic: version 1 and layer 0 for a core module,
    // layer 1 for a component.
    match (bytes[6], bytes[7]) {
        (0, 0) => Ok(Format::Module),
        (1, 0) => Ok(Format::Component),
        _ => bail!("unknown WebAssembly binary layer"),
    }
}

/// Compiled code of a workload, in its binary format.
#[derive(Clone)]
pub enum Code {
    Module(Module),
    Component(Component),
}

impl Code {
    pub fn format(&self) -> Format {
        match self {
            Code::Module(_) => Format::Module,
            Code::Component(_) => Format::Component,
        }
    }

    /// The size of the compiled image (machine code and its metadata), in
    /// bytes.
    pub fn image_bytes(&self) -> u64 {
        let range = match self {
            Code::Module(module) => module.image_range(),
            Code::Component(component) => component.image_range(),
        };
        (range.end as usize).saturating_sub(range.start as usize) as u64
    }

    /// Whether `self` and `other` are the same compiled code (not two
    /// compiles alike): a component by where its image lies in memory.
    pub fn same(&self, other: &Code) -> bool {
        match (self, other) {
            (Code::Module(a), Code::Module(b)) => Module::same(a, b),
            (Code::Component(a), Code::Component(b)) => a.image_range() == b.image_range(),
            _ => false,
        }
    }

    /// The engine the code was compiled for.
    pub fn engine(&self) -> &Engine {
        match self {
            Code::Module(module) => module.engine(),
            Code::Component(component) => component.engine(),
        }
    }

    /// The machine code and its metadata as bytes, for [`Code::deserialize`].
    pub fn serialize(&self) -> Result<Vec<u8>> {
        match self {
            Code::Module(module) => module.serialize(),
            Code::Component(component) => component.serialize(),
        }
        .map_err(anyhow::Error::from)
        .context("serializing compiled code")
    }

    /// Code of `format` for `engine` from what [`Code::serialize`] wrote
    /// (wasmtime checks the version and the engine's configuration).
    ///
    /// # Safety
    /// `bytes` must be what [`Code::serialize`] wrote, unaltered: wasmtime
    /// runs the machine code in them.
    pub unsafe fn deserialize(engine: &Engine, format: Format, bytes: &[u8]) -> Result<Code> {
        // SAFETY: the caller vouches for the bytes, as above.
        unsafe {
            match format {
                Format::Module => Module::deserialize(engine, bytes).map(Code::Module),
                Format::Component => Component::deserialize(engine, bytes).map(Code::Component),
                Format::Native => return Err(not_wasm()),
            }
        }
        .map_err(anyhow::Error::from)
    }
}

/// The file name extension of native workloads (shared libraries).
pub const NATIVE_EXTENSION: &str = "so";

/// Whether `path` names a native workload (by its extension).
pub fn is_native(path: &std::path::Path) -> bool {
    path.extension().is_some_and(|e| e == NATIVE_EXTENSION)
}

/// The error of asking for wasm code of a native library.
pub fn not_wasm() -> anyhow::Error {
    anyhow::anyhow!("native code is not wasm: no wasm engine compiles or runs it")
}
