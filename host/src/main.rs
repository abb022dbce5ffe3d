//! The `host` binary: parse flags, run the stages, print, export, pick the
//! exit code. Errors become one line on stderr.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;

use host::cli::{Cli, Command};
use host::export::write_json;
use host::report::Table;
use host::result::{BenchResult, Environment};
use host::run::Observer;
use host::settings::{Output, Settings};
use host::{selftest, workload};

/// Exit code when some workload failed.
const EXIT_FAILED: u8 = 1;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Run(args) => Settings::from_run_args(args).and_then(|s| run(&s)),
        Command::Selftest(args) => selftest::selftest(&args).map(|()| ExitCode::SUCCESS),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", workload::one_line(&e));
            ExitCode::from(2)
        }
    }
}

/// Forwards progress to the terminal table.
struct Printer<W: Write + Send>(Table<W>);

impl<W: Write + Send> Observer for Printer<W> {
    fn start(&mut self, env: &Environment, rows: &[String]) {
        let _ = self.0.header(env, rows);
    }
    fn result(&mut self, result: &BenchResult) {
        let _ = self.0.row(result);
    }
}

/// Fail before measuring when an export could not be written afterwards.
fn check_writable_folder(path: &std::path::Path) -> Result<()> {
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    if !folder.is_dir() {
        anyhow::bail!(
            "--export-json: the folder {} does not exist",
            folder.display()
        );
    }
    Ok(())
}

fn run(settings: &Settings) -> Result<ExitCode> {
    let files = workload::discover(&settings.paths)?;
    if let Some(Output::File(path)) = &settings.export_json {
        check_writable_folder(path)?;
    }
    // With JSON on stdout, the table goes to stderr.
    let table_out: Box<dyn Write + Send> = match settings.export_json {
        Some(Output::Stdout) => Box::new(std::io::stderr()),
        _ => Box::new(std::io::stdout()),
    };
    let mut printer = Printer(Table::new(table_out));
    let report = host::run::run(settings, &files, &mut printer)?;
    let _ = printer.0.footer(&report);
    if let Some(output) = &settings.export_json {
        write_json(&report, output)?;
    }
    Ok(if report.failures() > 0 {
        ExitCode::from(EXIT_FAILED)
    } else {
        ExitCode::SUCCESS
    })
}
