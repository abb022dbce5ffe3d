//! The `host` binary: parse flags, run the stages, print, export, pick the
//! exit code. Errors become one line on stderr.
//!
//! Exit codes: 0 all measured; 1 some workload failed; 2 usage error (or
//! nothing could be measured); 3 a regression against the baseline.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;

use host::cli::{Cli, Command};
use host::compare::compare;
use host::export::{self, write_json};
use host::progress::{Bar, Progress, Silent};
use host::report::Table;
use host::result::{BenchResult, Environment};
use host::run::Observer;
use host::settings::{CompareSettings, Output, Settings};
use host::{selftest, workload};

/// Some workload failed.
const EXIT_FAILED: u8 = 1;
/// Usage error, or nothing could be measured.
const EXIT_USAGE: u8 = 2;
/// A workload is slower than the baseline beyond `--fail-on-regression`.
const EXIT_REGRESSION: u8 = 3;

fn main() -> ExitCode {
    let cli = Cli::parse();
    host::guard::install_ctrl_c();
    let outcome = match cli.command {
        Command::Run(args) => Settings::from_run_args(args).and_then(|s| run(&s)),
        Command::Compare(args) => {
            CompareSettings::from_args(args).and_then(|s| compare_variants(&s))
        }
        Command::Watch(args) => Settings::from_run_args(args).and_then(|s| {
            host::watch::watch(&s, anstream::stdout())?;
            Ok(ExitCode::from(host::guard::EXIT_INTERRUPTED as u8))
        }),
        Command::Selftest(args) => selftest::selftest(&args).map(|()| ExitCode::SUCCESS),
        Command::Doctor(args) => doctor(args.json),
        Command::New(args) => scaffold(&args),
        Command::Completions { shell } => {
            host::completions::completions(shell, &mut std::io::stdout())
                .map(|()| ExitCode::SUCCESS)
        }
        Command::Man => {
            host::completions::man_page(&mut std::io::stdout()).map(|()| ExitCode::SUCCESS)
        }
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", workload::one_line(&e));
            ExitCode::from(EXIT_USAGE)
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

/// The human-readable report goes to stdout, or to stderr when an export
/// does.
fn table_stream(settings: &Settings) -> Box<dyn Write + Send> {
    // anstream drops the colours when the stream is not a terminal or
    // NO_COLOR is set.
    match settings.exports_to_stdout() {
        true => Box::new(anstream::stderr()),
        false => Box::new(anstream::stdout()),
    }
}

/// Fail before measuring when an export could not be written afterwards.
fn check_writable_folders(settings: &Settings) -> Result<()> {
    for (flag, output) in settings.exports() {
        let Output::File(path) = output else { continue };
        let folder = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        if !folder.is_dir() {
            anyhow::bail!("{flag}: the folder {} does not exist", folder.display());
        }
    }
    Ok(())
}

/// Write `text` to `output`.
fn write_text(text: &str, output: &Output) -> Result<()> {
    match output {
        Output::Stdout => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(text.as_bytes())?;
            stdout.flush()?;
            Ok(())
        }
        Output::File(path) => export::write_atomically(path, text.as_bytes()),
    }
}

/// Every export of a `host run` report.
fn write_run_exports(settings: &Settings, report: &host::result::RunReport) -> Result<()> {
    if let Some(output) = &settings.export_json {
        write_json(report, output)?;
    }
    if let Some(output) = &settings.export_markdown {
        write_text(&export::markdown_run(report), output)?;
    }
    if let Some(output) = &settings.export_csv {
        write_text(&export::csv_run(report), output)?;
    }
    if let Some(output) = &settings.export_html {
        write_text(&export::html_run(report), output)?;
    }
    if let Some(output) = &settings.export_dashboard {
        write_text(&export::dashboard_run(report), output)?;
    }
    Ok(())
}

fn doctor(json: bool) -> Result<ExitCode> {
    let findings = host::doctor::examine();
    if json {
        write_json(&findings, &Output::Stdout)?;
    } else {
        print!("{}", host::doctor::render(&findings));
    }
    Ok(ExitCode::SUCCESS)
}

fn scaffold(args: &host::cli::NewArgs) -> Result<ExitCode> {
    let lang = match args.lang {
        host::cli::LangArg::Rust => host::scaffold::Lang::Rust,
        host::cli::LangArg::Wat => host::scaffold::Lang::Wat,
    };
    let made = host::scaffold::create(&args.name, lang, &args.dir)?;
    for file in &made.files {
        println!("created {}", file.display());
    }
    println!("build: {}", made.build_command);
    println!("run:   {}", made.run_command);
    Ok(ExitCode::SUCCESS)
}

/// A progress line on stderr, unless `--quiet` or stderr is not a terminal.
fn progress_display(settings: &Settings) -> Box<dyn Progress> {
    match (settings.quiet, Bar::new()) {
        (false, Some(bar)) => Box::new(bar),
        _ => Box::new(Silent),
    }
}

fn run(settings: &Settings) -> Result<ExitCode> {
    let files = workload::discover(&settings.paths)?;
    check_writable_folders(settings)?;
    let mut printer = Printer(Table::new(table_stream(settings)));
    let progress = progress_display(settings);
    let report = host::run::run(settings, &files, &mut printer, progress.as_ref())?;
    let _ = printer.0.footer(&report);
    write_run_exports(settings, &report)?;
    Ok(if report.stopped.is_some() {
        ExitCode::from(host::guard::EXIT_INTERRUPTED as u8)
    } else if report.failures() > 0 {
        ExitCode::from(EXIT_FAILED)
    } else if report.regressions() > 0 {
        ExitCode::from(EXIT_REGRESSION)
    } else {
        ExitCode::SUCCESS
    })
}

fn compare_variants(settings: &CompareSettings) -> Result<ExitCode> {
    let files = workload::discover(&settings.settings.paths)?;
    check_writable_folders(&settings.settings)?;
    let progress = progress_display(&settings.settings);
    let report = match compare(settings, &files, progress.as_ref()) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("error: {}", workload::one_line(&e));
            return Ok(ExitCode::from(EXIT_FAILED));
        }
    };
    let mut table = Table::new(table_stream(&settings.settings));
    let _ = table.comparison(&report);
    let common = &settings.settings;
    if let Some(output) = &common.export_json {
        write_json(&report, output)?;
    }
    if let Some(output) = &common.export_markdown {
        write_text(&export::markdown_compare(&report), output)?;
    }
    if let Some(output) = &common.export_csv {
        write_text(&export::csv_compare(&report), output)?;
    }
    if let Some(output) = &common.export_html {
        write_text(&export::html_compare(&report), output)?;
    }
    Ok(ExitCode::SUCCESS)
}
