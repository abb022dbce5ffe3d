//! The engine settings: compiler, optimisation level and Wasm proposals
//! (`--engine`, `--opt-level`, `-W`), an engine library and its flags
//! (`--engine PATH`, `--engine-flags`), and where compiled code is cached;
//! the names `--engine` takes are [`super::runtimes`]'s.

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cli::{EngineArg, OptLevelArg};
use crate::util::foreign::Foreign;
use crate::util::fs::{Cap, Links, stream_bounded};

use super::runtimes::{Compiler, KnownEngine, Runs, Runtime};

/// Cranelift's optimisation level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OptimizeFor {
    None,
    Speed,
    SpeedAndSize,
}

/// A WebAssembly proposal `-W` turns on or off, by wasmtime's name for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proposal {
    Gc,
    FunctionReferences,
    Exceptions,
    TailCall,
    Simd,
    RelaxedSimd,
    MultiMemory,
    Threads,
    Memory64,
    ExtendedConst,
    WideArithmetic,
    CustomPageSizes,
    StackSwitching,
    BulkMemory,
    ReferenceTypes,
    MultiValue,
    BranchHinting,
}

impl Proposal {
    /// Every proposal, in the order reports list them.
    pub const ALL: [Proposal; 17] = [
        Proposal::Gc,
        Proposal::FunctionReferences,
        Proposal::Exceptions,
        Proposal::TailCall,
        Proposal::Simd,
        Proposal::RelaxedSimd,
        Proposal::MultiMemory,
        Proposal::Threads,
        Proposal::Memory64,
        Proposal::ExtendedConst,
        Proposal::WideArithmetic,
        Proposal::CustomPageSizes,
        Proposal::StackSwitching,
        Proposal::BulkMemory,
        Proposal::ReferenceTypes,
        Proposal::MultiValue,
        Proposal::BranchHinting,
    ];

    /// The name `wasmtime run -W` gives it.
    pub fn name(self) -> &'static str {
        match self {
            Proposal::Gc => "gc",
            Proposal::FunctionReferences => "function-references",
            Proposal::Exceptions => "exceptions",
            Proposal::TailCall => "tail-call",
            Proposal::Simd => "simd",
            Proposal::RelaxedSimd => "relaxed-simd",
            Proposal::MultiMemory => "multi-memory",
            Proposal::Threads => "threads",
            Proposal::Memory64 => "memory64",
            Proposal::ExtendedConst => "extended-const",
            Proposal::WideArithmetic => "wide-arithmetic",
            Proposal::CustomPageSizes => "custom-page-sizes",
            Proposal::StackSwitching => "stack-switching",
            Proposal::BulkMemory => "bulk-memory",
            Proposal::ReferenceTypes => "reference-types",
            Proposal::MultiValue => "multi-value",
            Proposal::BranchHinting => "branch-hinting",
        }
    }

    fn bit(self) -> u32 {
        1 << (self as u32)
    }

    /// Why this build cannot run a guest that uses the proposal, when it
    /// cannot: wasmtime validates such a module, then aborts or refuses it
    /// at run time. The wasmtime features are in the workspace's
    /// `Cargo.toml`.
    pub fn missing_from_build(self) -> Option<&'static str> {
        match self {
            Proposal::StackSwitching => Some(
                "this build lacks wasmtime's `stack-switching` feature: a guest that switches stacks would abort its worker",
            ),
            Proposal::Threads => Some(
                "this build does not instantiate shared memories (their growth escapes the --max-memory limiter); atomics on unshared memories are on without -W",
            ),
            _ => None,
        }
    }
}

/// Proposals turned on or off with `-W`; the rest keep wasmtime's defaults.
/// Recorded as `{"gc": false, "memory64": true}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(
    into = "std::collections::BTreeMap<String, bool>",
    try_from = "std::collections::BTreeMap<String, bool>"
)]
pub struct WasmFlags {
    on: u32,
    off: u32,
}

impl WasmFlags {
    /// Parse `-W` values: `NAME`, `NAME=y|n` (also `yes`/`no`, `true`/
    /// `false`), comma-separated or repeated; a later value wins. A
    /// proposal this build cannot run may be turned off, not on.
    pub fn parse(values: &[String]) -> Result<Self> {
        let flags = Self::parse_names(values)?;
        for (proposal, on) in flags.settings() {
            if let (true, Some(why)) = (on, proposal.missing_from_build()) {
                bail!("-W {}: {why}", proposal.name());
            }
        }
        Ok(flags)
    }

    /// [`WasmFlags::parse`] without the check of what this build runs (a
    /// saved report keeps what its run said).
    fn parse_names(values: &[String]) -> Result<Self> {
        let mut flags = WasmFlags::default();
        for item in values.iter().flat_map(|v| v.split(',')) {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let (name, value) = item.split_once('=').unwrap_or((item, "y"));
            let on = match value {
                "y" | "yes" | "true" => true,
                "n" | "no" | "false" => false,
                _ => bail!("-W {item}: the value must be y or n"),
            };
            let proposal = Proposal::ALL
                .into_iter()
                .find(|p| p.name() == name)
                .with_context(|| {
                    let names: Vec<&str> = Proposal::ALL.iter().map(|p| p.name()).collect();
                    format!(
                        "-W {item}: unknown proposal `{name}` (known: {})",
                        names.join(", ")
                    )
                })?;
            flags.set(proposal, on);
        }
        Ok(flags)
    }

    /// Turn `proposal` on or off.
    pub fn set(&mut self, proposal: Proposal, on: bool) {
        if on {
            self.on |= proposal.bit();
            self.off &= !proposal.bit();
        } else {
            self.off |= proposal.bit();
            self.on &= !proposal.bit();
        }
    }

    /// What `-W` said of `proposal`: `None` keeps wasmtime's default.
    pub fn get(&self, proposal: Proposal) -> Option<bool> {
        if self.on & proposal.bit() != 0 {
            Some(true)
        } else if self.off & proposal.bit() != 0 {
            Some(false)
        } else {
            None
        }
    }

    /// Every proposal `-W` named, with its setting.
    pub fn settings(&self) -> impl Iterator<Item = (Proposal, bool)> + '_ {
        Proposal::ALL
            .into_iter()
            .filter_map(|p| self.get(p).map(|on| (p, on)))
    }
}

impl From<WasmFlags> for std::collections::BTreeMap<String, bool> {
    fn from(flags: WasmFlags) -> Self {
        flags
            .settings()
            .map(|(p, on)| (p.name().to_string(), on))
            .collect()
    }
}

impl TryFrom<std::collections::BTreeMap<String, bool>> for WasmFlags {
    type Error = anyhow::Error;
    fn try_from(map: std::collections::BTreeMap<String, bool>) -> Result<Self> {
        let values: Vec<String> = map
            .into_iter()
            .map(|(name, on)| format!("{name}={}", if on { "y" } else { "n" }))
            .collect();
        WasmFlags::parse_names(&values)
    }
}

impl fmt::Display for WasmFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items: Vec<String> = self
            .settings()
            .map(|(p, on)| format!("{}={}", p.name(), if on { "y" } else { "n" }))
            .collect();
        f.write_str(&items.join(","))
    }
}

/// An engine library (`--engine PATH`): a shared library implementing
/// wasmtime's bench-api, which runs programs in the workers, configured by
/// its own flags. Recorded with the file's size and SHA-256, so that a
/// report tells which build ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EngineLibrary {
    /// The library, as an absolute path.
    pub path: PathBuf,
    /// Its engine flags (`--engine-flags`), in wasmtime's CLI spelling.
    pub flags: String,
    /// The file's size, in bytes.
    pub bytes: u64,
    /// The file's SHA-256, in hex.
    pub sha256: String,
}

impl EngineLibrary {
    /// The library at `path` with `flags`; a file that cannot be read is an
    /// error naming it.
    pub fn new(path: &Path, flags: &str) -> Result<Self> {
        let (bytes, sha256) = hash_library(path)
            .with_context(|| format!("--engine {}: cannot read the library", path.display()))?;
        let path =
            std::path::absolute(path).with_context(|| format!("--engine {}", path.display()))?;
        Ok(EngineLibrary {
            path,
            flags: flags.to_string(),
            bytes,
            sha256,
        })
    }

    /// The library's file name without its extension: `main` for
    /// `./main.so`.
    pub fn name(&self) -> String {
        self.path.file_stem().map_or_else(
            || self.path.display().to_string(),
            |s| s.to_string_lossy().into_owned(),
        )
    }
}

/// The largest engine library read: a wasmtime build with its debug
/// information is some hundreds of MiB.
pub const MAX_LIBRARY_BYTES: u64 = 2 << 30;

/// The size and SHA-256 (hex) of the library at `path`, streamed from a
/// regular file of at most [`MAX_LIBRARY_BYTES`] opened without blocking
/// ([`stream_bounded`]): a FIFO or a device is refused before a byte is read.
fn hash_library(path: &Path) -> Result<(u64, String)> {
    use sha2::{Digest, Sha256};
    let cap = Cap {
        bytes: MAX_LIBRARY_BYTES,
        name: "the cap on an engine library",
    };
    let mut hasher = Sha256::new();
    let read = stream_bounded(path, cap, Links::Follow, &mut hasher)?;
    let sha256 = crate::util::bytes::hex(&hasher.finalize());
    Ok((read, sha256))
}

impl EngineLibrary {
    /// The library in words: its path and flags are outside text, so the
    /// whole is (escaped where it is shown).
    pub fn describe(&self) -> Foreign {
        let path = Foreign::new(self.path.display().to_string());
        // Read back from a report, it may be any text: cut by characters.
        let sha256: String = self.sha256.chars().take(12).collect();
        let flags = match self.flags.trim() {
            "" => ", no flags".to_string(),
            flags => format!(", flags `{flags}`"),
        };
        path.map(|path| {
            format!(
                "library {path} ({} bytes, sha256 {sha256}){flags}",
                self.bytes
            )
        })
    }
}

/// How code is compiled: recorded in the report and part of cache keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EngineConfig {
    pub compiler: Compiler,
    pub opt_level: OptimizeFor,
    /// Proposals turned on or off with `-W` (wasmtime's defaults for the
    /// rest).
    #[serde(default)]
    pub wasm: WasmFlags,
    /// An engine library runs the programs (`--engine PATH`): the host
    /// itself then only reads and checks the files, with the rest of this
    /// configuration (wasmtime's defaults).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<EngineLibrary>,
    /// The runtime that runs the workloads (wasmtime unless `--engine`
    /// named another). Under another runtime the host checks the
    /// files against the contract as wasmparser reads them, and that
    /// runtime compiles them.
    #[serde(default, skip_serializing_if = "Runtime::is_wasmtime")]
    pub runtime: Runtime,
    /// The runtime's version, as the run found it: wasmtime's and wasmi's
    /// crate versions, `node --version` with V8's own for v8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// How wasmtime allocates an instance's memories and tables
    /// (`--engine cranelift:pooling`).
    #[serde(default, skip_serializing_if = "Allocation::is_on_demand")]
    pub allocation: Allocation,
    /// wasmtime: instances made from one `InstancePre` per module, its
    /// imports resolved once (`--engine cranelift:pre`), rather than by
    /// name at each instantiation.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub instance_pre: bool,
}

/// How wasmtime allocates the memories, tables and instances of a store:
/// on demand at each instantiation (its default), or from a pool reserved
/// when the engine is made, reused from one instance to the next, with
/// copy-on-write memory images in both (wasmtime's default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Allocation {
    #[default]
    OnDemand,
    Pooling,
}

impl Allocation {
    pub fn is_on_demand(&self) -> bool {
        *self == Allocation::OnDemand
    }
}

/// An option of a wasmtime engine, `--engine NAME:OPTION[:OPTION]`.
pub struct EngineOption {
    pub name: &'static str,
    pub what: &'static str,
    /// Whether `config` has it.
    pub set: fn(&EngineConfig) -> bool,
    /// Give it to `config`.
    pub give: fn(&mut EngineConfig),
}

/// Every option of wasmtime's engines, in the order names spell them.
pub const ENGINE_OPTIONS: &[EngineOption] = &[
    EngineOption {
        name: "pooling",
        what: "instances from wasmtime's pooling allocator",
        set: |c| c.allocation == Allocation::Pooling,
        give: |c| c.allocation = Allocation::Pooling,
    },
    EngineOption {
        name: "pre",
        what: "instances made from one InstancePre: the imports resolved once, not at each instantiation",
        set: |c| c.instance_pre,
        give: |c| c.instance_pre = true,
    },
];

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            compiler: Compiler::Cranelift,
            opt_level: OptimizeFor::Speed,
            wasm: WasmFlags::default(),
            library: None,
            runtime: Runtime::Wasmtime,
            version: None,
            allocation: Allocation::OnDemand,
            instance_pre: false,
        }
    }
}

impl EngineConfig {
    /// How code is compiled, in words (`cranelift (opt-level speed)`), or
    /// the engine library that runs it: outside text, since a library's
    /// path and flags are.
    pub fn describe(&self) -> Foreign {
        if let Some(library) = &self.library {
            return library.describe();
        }
        if self.runtime != Runtime::Wasmtime {
            let name = self.runtime.name();
            return match &self.version {
                Some(version) => Foreign::new(format!("{name} {version}")),
                None => Foreign::new(name),
            };
        }
        let mut words = match self.compiler {
            Compiler::Cranelift => {
                let level = match self.opt_level {
                    OptimizeFor::None => "none",
                    OptimizeFor::Speed => "speed",
                    OptimizeFor::SpeedAndSize => "speed_and_size",
                };
                format!("cranelift (opt-level {level})")
            }
            Compiler::Winch => "winch".to_string(),
            Compiler::Pulley => "pulley".to_string(),
        };
        if self.wasm != WasmFlags::default() {
            words.push_str(&format!(" -W {}", self.wasm));
        }
        for option in ENGINE_OPTIONS.iter().filter(|o| (o.set)(self)) {
            words.push_str(&format!(", {}", option.what));
        }
        Foreign::new(words)
    }
}

impl EngineConfig {
    /// A short name for row suffixes: `cranelift`, `winch`, `pulley` (with
    /// its option: `cranelift:pooling`), another runtime's name, or an
    /// engine library's file stem (`main` for `./main.so`).
    pub fn short_name(&self) -> String {
        if let Some(library) = &self.library {
            return library.name();
        }
        if self.runtime != Runtime::Wasmtime {
            return self.runtime.name().to_string();
        }
        let compiler = match self.compiler {
            Compiler::Cranelift => "cranelift",
            Compiler::Winch => "winch",
            Compiler::Pulley => "pulley",
        };
        let mut name = compiler.to_string();
        for option in ENGINE_OPTIONS.iter().filter(|o| (o.set)(self)) {
            name.push(':');
            name.push_str(option.name);
        }
        name
    }

    /// The short names of `engines` as rows carry them, in their order.
    pub fn short_names(engines: &[EngineConfig]) -> Vec<Foreign> {
        engines
            .iter()
            .map(|e| Foreign::new(e.short_name()))
            .collect()
    }
}

/// The compile cache folder: `$WASM_BENCH_CACHE`, else
/// `$XDG_CACHE_HOME/wasm-bench` (when absolute: a relative one is
/// ignored, as the XDG spec says), else `~/.cache/wasm-bench`.
pub fn default_cache_folder() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("WASM_BENCH_CACHE") {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = crate::util::xdg::base_dir("XDG_CACHE_HOME") {
        return Some(dir.join("wasm-bench"));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache").join("wasm-bench"))
}

/// The configuration `--engine NAME[:OPTION...]` names: the options
/// ([`ENGINE_OPTIONS`]) are wasmtime's alone.
fn named_config(spelled: &str, opt_level: OptimizeFor, wasm: WasmFlags) -> Result<EngineConfig> {
    let mut parts = spelled.split(':');
    let name = parts.next().unwrap_or(spelled);
    let options: Vec<&str> = parts.collect();
    let mut config = match (KnownEngine::named(name)?.runs, options.first()) {
        (Runs::Runtime(runtime), None) => EngineConfig {
            runtime,
            ..EngineConfig::default()
        },
        (Runs::Runtime(runtime), Some(option)) => bail!(
            "--engine {spelled}: `{option}` is an option of wasmtime's engines (cranelift, winch, pulley), not of {}",
            runtime.name()
        ),
        (Runs::Wasmtime(compiler), _) => EngineConfig {
            compiler,
            opt_level,
            wasm,
            ..EngineConfig::default()
        },
    };
    for option in options {
        let Some(known) = ENGINE_OPTIONS.iter().find(|o| o.name == option) else {
            let names: Vec<&str> = ENGINE_OPTIONS.iter().map(|o| o.name).collect();
            bail!(
                "--engine {spelled}: unknown option `{option}` (known: {})",
                names.join(", ")
            );
        };
        (known.give)(&mut config);
    }
    Ok(config)
}

/// One engine configuration per `--engine`, without repeats. The values of
/// `--engine-flags` go to the engine libraries: one value to every library,
/// else one per library, in order.
pub(crate) fn engine_configs(
    engines: &[EngineArg],
    engine_flags: &[String],
    opt_level: OptLevelArg,
    wasm: WasmFlags,
) -> Result<Vec<EngineConfig>> {
    let opt_level = match opt_level {
        OptLevelArg::None => OptimizeFor::None,
        OptLevelArg::Speed => OptimizeFor::Speed,
        OptLevelArg::SpeedAndSize => OptimizeFor::SpeedAndSize,
    };
    let libraries = engines
        .iter()
        .filter(|e| matches!(e, EngineArg::Library(_)))
        .count();
    let flags_of = |index: usize| match engine_flags {
        [] => "",
        [one] => one.as_str(),
        many => many[index].as_str(),
    };
    if !engine_flags.is_empty() && libraries == 0 {
        bail!("--engine-flags applies to engine libraries (--engine PATH), and none is given");
    }
    if engine_flags.len() > 1 && engine_flags.len() != libraries {
        bail!(
            "--engine-flags: {} values for {libraries} engine libraries (give one for all, or one per library, in order)",
            engine_flags.len()
        );
    }
    let mut configs: Vec<EngineConfig> = Vec::new();
    let mut library_index = 0;
    for engine in engines {
        let config = match engine {
            EngineArg::Library(path) => {
                library_index += 1;
                EngineConfig {
                    library: Some(EngineLibrary::new(path, flags_of(library_index - 1))?),
                    ..EngineConfig::default()
                }
            }
            EngineArg::Named(spelled) => named_config(spelled, opt_level, wasm)?,
        };
        if !configs.contains(&config) {
            configs.push(config);
        }
    }
    if configs.is_empty() {
        configs.push(EngineConfig {
            wasm,
            ..EngineConfig::default()
        });
    }
    Ok(configs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(value: &str) -> Result<WasmFlags> {
        WasmFlags::parse(&[value.to_string()])
    }

    fn configs(names: &[&str]) -> Result<Vec<EngineConfig>> {
        let engines: Vec<EngineArg> = (names.iter())
            .map(|n| EngineArg::Named(n.to_string()))
            .collect();
        engine_configs(&engines, &[], OptLevelArg::Speed, WasmFlags::default())
    }

    #[test]
    fn a_wasmtime_engine_takes_options_after_colons() -> Result<()> {
        let found = configs(&["cranelift", "cranelift:pooling", "winch:pooling"])?;
        let names: Vec<String> = found.iter().map(EngineConfig::short_name).collect();
        assert_eq!(names, ["cranelift", "cranelift:pooling", "winch:pooling"]);
        assert_eq!(found[1].allocation, Allocation::Pooling);
        assert_eq!(found[1].compiler, Compiler::Cranelift);
        assert!(
            found[1]
                .describe()
                .unescaped()
                .ends_with("pooling allocator")
        );
        let other = configs(&["wasmi:pooling"]).err().context("accepted")?;
        assert!(other.to_string().contains("wasmtime's engines"), "{other}");
        let unknown = configs(&["cranelift:nope"]).err().context("accepted")?;
        assert!(
            unknown.to_string().contains("unknown option `nope`"),
            "{unknown}"
        );
        Ok(())
    }

    #[test]
    fn proposals_the_build_cannot_run_may_be_turned_off_only() -> Result<()> {
        for name in ["stack-switching", "threads"] {
            let error = parse(name).err().context("accepted")?;
            assert!(
                error
                    .to_string()
                    .starts_with(&format!("-W {name}: this build "))
            );
            assert!(parse(&format!("{name}=y")).is_err());
            assert_eq!(
                parse(&format!("{name}=n"))?.to_string(),
                format!("{name}=n")
            );
        }
        assert_eq!(parse("memory64,gc=n")?.to_string(), "gc=n,memory64=y");
        Ok(())
    }

    #[test]
    fn a_saved_setting_reads_back_as_it_was() -> Result<()> {
        let saved = std::collections::BTreeMap::from([("stack-switching".to_string(), true)]);
        let flags = WasmFlags::try_from(saved)?;
        assert_eq!(flags.get(Proposal::StackSwitching), Some(true));
        Ok(())
    }
}
