//! The engine flags this library understands: a small subset of
//! `wasmtime run`'s spelling, given as one string split at spaces (as
//! wasmtime's bench-api and Sightglass's `--engine-flags` pass them).
//!
//! - `-O opt-level=0|1|2|s`: Cranelift's optimisation level (`0` none,
//!   `1` and `2` speed, `s` speed and size, as wasmtime's CLI reads them);
//! - `-C compiler=cranelift|winch`: the compiler;
//! - `-W NAME=y|n` (`NAME` alone is `y`) for the proposals `gc`, `simd`,
//!   `relaxed-simd`, `tail-call`, `threads`, `multi-memory`, `memory64`,
//!   `exceptions`;
//! - `--crash-in-execute`: a test hook, known to this library alone: the
//!   next `wasm_bench_execute` writes through a null pointer, so that a
//!   harness can check that a crashing engine costs what it should;
//! - test hooks of what a library may print where nobody asked it to, each
//!   `wasm_bench_execute`: `--print-not-utf8` (a line of bytes that are not
//!   UTF-8 on the process's stdout and stderr), `--print-line=BYTES` (that
//!   many bytes and no newline on the process's stdout), `--stderr-bytes=BYTES`
//!   (that many bytes more in the program's captured stderr).
//!
//! An option may be glued to its value (`-Oopt-level=2`) and take several
//! comma-separated settings (`-W gc=n,simd=y`). Anything else is refused.

use anyhow::{Result, bail};
use wasmtime::{Config, OptLevel, Strategy};

/// A proposal `-W` may turn on or off, with the setter of wasmtime's
/// [`Config`] that does it.
type Setter = fn(&mut Config, bool) -> &mut Config;

/// The proposals `-W` knows, by wasmtime's CLI name.
const PROPOSALS: [(&str, Setter); 8] = [
    ("gc", Config::wasm_gc),
    ("simd", Config::wasm_simd),
    ("relaxed-simd", Config::wasm_relaxed_simd),
    ("tail-call", Config::wasm_tail_call),
    ("threads", Config::wasm_threads),
    ("multi-memory", Config::wasm_multi_memory),
    ("memory64", Config::wasm_memory64),
    ("exceptions", Config::wasm_exceptions),
];

/// The settings the flags asked for; `None` keeps wasmtime's default.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Flags {
    pub opt_level: Option<OptLevel>,
    pub strategy: Option<Strategy>,
    /// `-W` settings, by index into [`PROPOSALS`], in the order given.
    pub proposals: Vec<(usize, bool)>,
    /// The test hook `--crash-in-execute`.
    pub crash_in_execute: bool,
    /// The test hooks that print: what, in the order given.
    pub prints: Vec<Print>,
}

/// What a test hook prints at each `wasm_bench_execute`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Print {
    /// `--print-not-utf8`.
    NotUtf8,
    /// `--print-line=BYTES`.
    Line(u64),
    /// `--stderr-bytes=BYTES`.
    CapturedStderr(u64),
}

impl Print {
    /// The hook `word` names, if it is one.
    fn parse(word: &str) -> Result<Option<Print>> {
        let bytes = |value: &str| {
            value
                .parse::<u64>()
                .map_err(|e| anyhow::anyhow!("{word}: not a byte count ({e})"))
        };
        Ok(match word.split_once('=') {
            None if word == "--print-not-utf8" => Some(Print::NotUtf8),
            Some(("--print-line", n)) => Some(Print::Line(bytes(n)?)),
            Some(("--stderr-bytes", n)) => Some(Print::CapturedStderr(bytes(n)?)),
            _ => None,
        })
    }
}

impl Flags {
    /// Parse `text`: words separated by spaces.
    pub fn parse(text: &str) -> Result<Flags> {
        let mut flags = Flags::default();
        let mut words = text.split(' ').filter(|w| !w.is_empty());
        while let Some(word) = words.next() {
            if word == "--crash-in-execute" {
                flags.crash_in_execute = true;
                continue;
            }
            if let Some(print) = Print::parse(word)? {
                flags.prints.push(print);
                continue;
            }
            let Some(option @ ("-O" | "-C" | "-W")) = word.get(..2) else {
                bail!("unknown engine flag `{word}` (known: -O, -C, -W, --crash-in-execute)");
            };
            let glued = &word[2..];
            let value = match glued {
                "" => match words.next() {
                    Some(value) => value,
                    None => bail!("engine flag `{option}` needs a value"),
                },
                glued => glued,
            };
            for setting in value.split(',').filter(|s| !s.is_empty()) {
                flags.set(option, setting)?;
            }
        }
        Ok(flags)
    }

    /// Apply one `KEY=VALUE` setting of `option`.
    fn set(&mut self, option: &str, setting: &str) -> Result<()> {
        let (key, value) = setting.split_once('=').unwrap_or((setting, "y"));
        match (option, key, value) {
            ("-O", "opt-level", "0") => self.opt_level = Some(OptLevel::None),
            ("-O", "opt-level", "1" | "2") => self.opt_level = Some(OptLevel::Speed),
            ("-O", "opt-level", "s") => self.opt_level = Some(OptLevel::SpeedAndSize),
            ("-C", "compiler", "cranelift") => self.strategy = Some(Strategy::Cranelift),
            ("-C", "compiler", "winch") => self.strategy = Some(Strategy::Winch),
            ("-W", name, value) => {
                let Some(index) = PROPOSALS.iter().position(|(n, _)| *n == name) else {
                    bail!("-W {setting}: unknown proposal `{name}`");
                };
                let on = match value {
                    "y" | "yes" | "true" => true,
                    "n" | "no" | "false" => false,
                    _ => bail!("-W {setting}: the value must be y or n"),
                };
                self.proposals.push((index, on));
            }
            _ => bail!("unknown engine flag `{option} {setting}`"),
        }
        Ok(())
    }

    /// The wasmtime configuration: wasmtime's defaults, changed where the
    /// flags said so.
    pub fn config(&self) -> Config {
        let mut config = Config::new();
        if let Some(strategy) = self.strategy {
            config.strategy(strategy);
        }
        if let Some(level) = self.opt_level {
            config.cranelift_opt_level(level);
        }
        for &(index, on) in &self.proposals {
            (PROPOSALS[index].1)(&mut config, on);
        }
        config
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_flags_keep_the_defaults() -> Result<()> {
        assert_eq!(Flags::parse("")?, Flags::default());
        assert_eq!(Flags::parse("   ")?, Flags::default());
        Ok(())
    }

    #[test]
    fn wasmtime_spellings_are_read() -> Result<()> {
        let flags = Flags::parse("-O opt-level=0 -Ccompiler=winch -W gc=n,simd -W simd=n")?;
        assert_eq!(flags.opt_level, Some(OptLevel::None));
        assert_eq!(flags.strategy, Some(Strategy::Winch));
        assert_eq!(flags.proposals, vec![(0, false), (1, true), (1, false)]);
        assert!(!flags.crash_in_execute);
        let size = Flags::parse("-O opt-level=s")?;
        assert_eq!(size.opt_level, Some(OptLevel::SpeedAndSize));
        assert!(Flags::parse("--crash-in-execute")?.crash_in_execute);
        Ok(())
    }

    #[test]
    fn unknown_flags_are_refused() {
        for bad in [
            "--fuel",
            "-O",
            "-O opt-level=3",
            "-C compiler=pulley",
            "-W nonesuch=y",
            "-W gc=maybe",
            "-D debug-info",
            "opt-level=2",
        ] {
            assert!(Flags::parse(bad).is_err(), "{bad} was accepted");
        }
    }
}
