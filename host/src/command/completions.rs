//! Shell completions and the man page of `host`, generated from the clap
//! definition in [`crate::cli`], so they never drift from the real flags.
//!
//! This module only writes text to the given writer; it does not install
//! anything or decide where the files go.

use std::io::Write;

use anyhow::{Context, Result};
use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::Cli;
use crate::options::describe_engines;

/// The binary name completions and the man page are written for.
const BIN_NAME: &str = "host";

/// Write the completion script of `shell` for `host` to `out`.
pub fn completions(shell: Shell, out: &mut dyn Write) -> Result<()> {
    let mut command = describe_engines(Cli::command());
    // clap_complete panics on a failed write: generate into memory, then
    // write with a proper error.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, BIN_NAME, &mut script);
    out.write_all(&script)
        .and_then(|()| out.flush())
        .with_context(|| format!("writing the {shell} completions"))
}

/// Write the man page (roff) of the top-level `host` command to `out`.
pub fn man_page(out: &mut dyn Write) -> Result<()> {
    let command = describe_engines(Cli::command()).name(BIN_NAME);
    let mut page = Vec::new();
    clap_mangen::Man::new(command)
        .render(&mut page)
        .context("rendering the man page")?;
    out.write_all(&page)
        .and_then(|()| out.flush())
        .context("writing the man page")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(shell: Shell) -> String {
        let mut out = Vec::new();
        completions(shell, &mut out).expect("generates");
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn completions_cover_the_subcommands() {
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            let text = script(shell);
            assert!(!text.is_empty(), "{shell}: empty");
            assert!(text.contains("host"), "{shell}: no binary name");
            assert!(text.contains("run"), "{shell}: no `run`");
            assert!(text.contains("compare"), "{shell}: no `compare`");
        }
    }

    #[test]
    fn man_page_is_roff_for_host() {
        let mut out = Vec::new();
        man_page(&mut out).expect("renders");
        let text = String::from_utf8(out).expect("UTF-8");
        assert!(text.contains(".TH"), "no .TH header");
        assert!(text.contains("host"), "no binary name");
        assert!(text.contains("compare"), "no subcommand list");
    }

    #[test]
    fn a_failing_writer_is_an_error_not_a_panic() {
        struct Broken;
        impl Write for Broken {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("disk full"))
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        assert!(completions(Shell::Bash, &mut Broken).is_err());
        assert!(man_page(&mut Broken).is_err());
    }
}
