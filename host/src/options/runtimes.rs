//! The engines `--engine` names, wasmtime's [`Compiler`]s and the other
//! runtimes: every name, alias, cargo feature and what each is
//! ([`ENGINES`]), which option parsing, `--help`, the man page,
//! `--version`, `host doctor` and the "not built in" error read; where
//! each runtime's code lives is [`crate::guest::runtime`].

use anyhow::{Result, bail};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which compiler turns wasm into code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Compiler {
    /// Cranelift, the optimising compiler (the default).
    Cranelift,
    /// Winch, the baseline compiler: fast to compile, slower code.
    Winch,
    /// Pulley, wasmtime's portable interpreter.
    Pulley,
}

/// Which runtime runs the workloads: wasmtime (with the compiler of
/// [`Compiler`]), or another runtime. A runtime's name is what `--engine`
/// takes; where its code lives is [`crate::guest::runtime`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Runtime {
    /// wasmtime, built in (its compiler is [`EngineConfig::compiler`]).
    #[default]
    Wasmtime,
    /// wasmi, an interpreter (the `wasmi` crate; cargo feature `wasmi`).
    Wasmi,
    /// V8, through Node.js (`node`).
    V8,
    /// wasmer with its Cranelift (cargo feature `wasmer`).
    Wasmer,
    /// wasmer with its single-pass compiler (cargo feature `wasmer`).
    WasmerSinglepass,
    /// tinywasm, a small interpreter (cargo feature `tinywasm`).
    Tinywasm,
}

impl Runtime {
    /// The name `--engine` gives it (the row's suffix, the report's
    /// `runtime`).
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Wasmtime => "wasmtime",
            _ => self.entry().name,
        }
    }

    /// Its line of [`ENGINES`].
    pub fn entry(self) -> &'static KnownEngine {
        ENGINES
            .iter()
            .find(|e| matches!(e.runs, Runs::Runtime(r) if r == self))
            .unwrap_or(&ENGINES[0])
    }

    pub(super) fn is_wasmtime(&self) -> bool {
        *self == Runtime::Wasmtime
    }
}

/// What a name of `--engine` runs: a compiler of wasmtime's, or another
/// runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runs {
    Wasmtime(Compiler),
    Runtime(Runtime),
}

/// One engine `--engine` names: its name, its aliases, what it is, and
/// whether this host has it built in. [`ENGINES`] lists every one; option
/// parsing, `--help`, the man page, `--version`, `host doctor` and the
/// "not built in" error read that list and nothing else.
#[derive(Debug)]
pub struct KnownEngine {
    /// The name rows and reports give it.
    pub name: &'static str,
    /// Other names `--engine` takes for it.
    pub aliases: &'static [&'static str],
    /// What it is, in a few words.
    pub what: &'static str,
    pub runs: Runs,
    /// The cargo feature that builds it in, when it is optional.
    pub feature: Option<&'static str>,
    /// Whether this host has it built in.
    pub built_in: bool,
    /// What it needs on the machine besides the host, if anything.
    pub needs: Option<&'static str>,
    /// Why its speed differs between processes, where it is known to: a
    /// row whose processes disagree says so.
    pub varies: Option<&'static str>,
}

/// Every engine `--engine` takes by name, in the order help lists them.
pub const ENGINES: &[KnownEngine] = &[
    KnownEngine {
        name: "cranelift",
        aliases: &["wasmtime"],
        what: "wasmtime with Cranelift, its optimising compiler (the default)",
        runs: Runs::Wasmtime(Compiler::Cranelift),
        feature: None,
        built_in: true,
        needs: None,
        varies: None,
    },
    KnownEngine {
        name: "winch",
        aliases: &[],
        what: "wasmtime with Winch, its baseline compiler",
        runs: Runs::Wasmtime(Compiler::Winch),
        feature: None,
        built_in: true,
        needs: None,
        varies: None,
    },
    KnownEngine {
        name: "pulley",
        aliases: &[],
        what: "wasmtime's Pulley interpreter",
        runs: Runs::Wasmtime(Compiler::Pulley),
        feature: None,
        built_in: true,
        needs: None,
        varies: None,
    },
    KnownEngine {
        name: "wasmi",
        aliases: &[],
        what: "wasmi, an interpreter",
        runs: Runs::Runtime(Runtime::Wasmi),
        feature: Some("wasmi"),
        built_in: cfg!(feature = "wasmi"),
        needs: None,
        varies: Some(
            "wasmi's speed depends on where its interpreter's code and data land in each process",
        ),
    },
    KnownEngine {
        name: "wasmer",
        aliases: &["wasmer-cranelift"],
        what: "wasmer with its Cranelift",
        runs: Runs::Runtime(Runtime::Wasmer),
        feature: Some("wasmer"),
        built_in: cfg!(feature = "wasmer"),
        needs: None,
        varies: None,
    },
    KnownEngine {
        name: "wasmer-singlepass",
        aliases: &["singlepass"],
        what: "wasmer with its single-pass compiler (no SIMD)",
        runs: Runs::Runtime(Runtime::WasmerSinglepass),
        feature: Some("wasmer"),
        built_in: cfg!(feature = "wasmer"),
        needs: None,
        varies: Some("single-pass code's speed depends on where its loops land in each process"),
    },
    KnownEngine {
        name: "v8",
        aliases: &["node"],
        what: "V8, through Node.js",
        runs: Runs::Runtime(Runtime::V8),
        feature: None,
        built_in: true,
        needs: Some("`node` on the PATH, or $WASM_BENCH_NODE"),
        varies: None,
    },
    KnownEngine {
        name: "tinywasm",
        aliases: &[],
        what: "tinywasm, a small interpreter (workloads only: no WASI)",
        runs: Runs::Runtime(Runtime::Tinywasm),
        feature: Some("tinywasm"),
        built_in: cfg!(feature = "tinywasm"),
        needs: None,
        varies: Some(
            "tinywasm's speed depends on where its interpreter's code and data land in each process",
        ),
    },
];

impl KnownEngine {
    /// The engine `--engine NAME` names, by its name or an alias.
    pub fn named(name: &str) -> Result<&'static KnownEngine> {
        if let Some(engine) = ENGINES
            .iter()
            .find(|e| e.name == name || e.aliases.contains(&name))
        {
            return Ok(engine);
        }
        let known: Vec<&str> = ENGINES.iter().map(|e| e.name).collect();
        bail!(
            "--engine {name}: unknown engine (known: {}, or the path of an engine library)",
            known.join(", ")
        )
    }

    /// Why it cannot run in this host, if it is not built in: what to
    /// build instead.
    pub fn not_built(&self) -> Option<String> {
        match (self.built_in, self.feature) {
            (false, Some(feature)) => Some(format!(
                "this host is built without {}: build it with `cargo build --release -p host --features all-engines` (or `--features {feature}`)",
                self.name
            )),
            _ => None,
        }
    }

    /// Its name with its aliases: `cranelift (or wasmtime)`.
    fn names(&self) -> String {
        match self.aliases {
            [] => self.name.to_string(),
            aliases => format!("{} (or {})", self.name, aliases.join(", ")),
        }
    }
}

/// The engines built into this host, and those that are not, in one line:
/// for `--version` and `host doctor`.
pub fn engines_built_in() -> String {
    let names = |built: bool| -> Vec<String> {
        ENGINES
            .iter()
            .filter(|e| e.built_in == built)
            .map(|e| match e.needs {
                Some(needs) => format!("{} (needs {needs})", e.name),
                None => e.name.to_string(),
            })
            .collect()
    };
    let mut line = format!("engines built in: {}", names(true).join(", "));
    let missing = names(false);
    if !missing.is_empty() {
        line.push_str(&format!(
            "; not built in: {} (cargo feature all-engines)",
            missing.join(", ")
        ));
    }
    line
}

/// The long help of `--engine`: every engine of [`ENGINES`] with its
/// aliases, whether this host has it, and engine libraries.
pub fn engine_help() -> String {
    let mut help = String::from(
        "The engine to measure under. Repeat it to measure every workload under each; rows are then named `name[engine]` (a library: its file name without extension), and `host compare` compares them. One of:\n",
    );
    help.push_str(&engine_list());
    help.push_str(
        "\n\nA wasmtime engine takes options after colons, to measure what they buy at instantiation: `cranelift:pooling` allocates instances from wasmtime's pooling allocator (with copy-on-write memory images, as by default); `cranelift:pre` makes them from one InstancePre per module (the imports resolved once); `cranelift:pooling:pre` both.\n\nOr the PATH of an engine library (wasmtime's bench-api, as Sightglass's `-e` loads it: a value with a `/`, or ending in `.so` or `.dylib`), which runs programs only. Runtimes other than wasmtime run core modules only, and ignore --opt-level, -W and --huge-pages.",
    );
    help
}

/// Every engine of [`ENGINES`], a line each: its names, what it is, and
/// whether this host has it built in.
fn engine_list() -> String {
    let mut list = String::new();
    for engine in ENGINES {
        let status = match (engine.not_built(), engine.needs) {
            (Some(_), _) => format!(
                "not built into this host (cargo feature `{}`, or all-engines)",
                engine.feature.unwrap_or("all-engines")
            ),
            (None, Some(needs)) => format!("built in; needs {needs}"),
            (None, None) => "built in".to_string(),
        };
        list.push_str(&format!(
            "\n  {}: {}; {status}",
            engine.names(),
            engine.what
        ));
    }
    list
}

/// `command` (the host's clap command) with the help of `--engine` and the
/// long version written from [`ENGINES`], so that `--help`, the man page
/// and `--version` say which engines this host has.
pub fn describe_engines(command: clap::Command) -> clap::Command {
    // clap keeps a version as `&'static str`: made once, at start-up.
    let version: &'static str = format!(
        "{} ({})",
        command.get_version().unwrap_or_default(),
        engines_built_in()
    )
    .leak();
    let names: Vec<String> = command
        .get_subcommands()
        .filter(|c| c.get_arguments().any(|a| a.get_id() == "engine"))
        .map(|c| c.get_name().to_string())
        .collect();
    let all: Vec<&str> = ENGINES.iter().map(|e| e.name).collect();
    let short = format!(
        "Engine: {} (the first is the default), or the PATH of an engine library; --help says which this host has",
        all.join(", ")
    );
    let mut command = command.long_version(version).after_long_help(format!(
        "Engines (--engine of {}):{}",
        names.join(", "),
        engine_list()
    ));
    for name in names {
        command = command.mut_subcommand(name, |sub| {
            sub.mut_arg("engine", |arg| {
                arg.help(short.clone()).long_help(engine_help())
            })
        });
    }
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_and_alias_names_one_engine_and_the_help_lists_it() -> Result<()> {
        let help = engine_help();
        let mut seen = std::collections::HashSet::new();
        for engine in ENGINES {
            for name in std::iter::once(&engine.name).chain(engine.aliases) {
                assert!(seen.insert(*name), "{name} names two engines");
                assert_eq!(KnownEngine::named(name)?.name, engine.name);
                assert!(help.contains(name), "the help lacks {name}");
            }
            assert_eq!(engine.not_built().is_some(), !engine.built_in);
        }
        assert!(KnownEngine::named("wasm3").is_err());
        for runtime in [
            Runtime::Wasmi,
            Runtime::V8,
            Runtime::Wasmer,
            Runtime::WasmerSinglepass,
            Runtime::Tinywasm,
        ] {
            assert_eq!(runtime.entry().runs, Runs::Runtime(runtime));
        }
        Ok(())
    }
}
