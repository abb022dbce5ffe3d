//! The `host` binary: parse the flags, dispatch to a command, and turn its
//! outcome into an exit status ([`ExitStatus`], every code in one place).
//! An error becomes one line on stderr.

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use host::cli::{Cli, Command};
use host::command;
use host::guest::sandbox;
use host::options::{
    CompareSettings, HistorySettings, ProfileSettings, ReportSettings, Settings, describe_engines,
};
use host::output::escape::terminal;
use host::util::error::one_line;
use host::util::exit::ExitStatus;

fn main() -> ExitCode {
    let matches = describe_engines(Cli::command()).get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // A worker keeps the default dispositions: its parent ends it, and so
    // does any signal sent to it alone.
    if !matches!(cli.command, Command::Worker) {
        sandbox::install_signal_handler();
    }
    let outcome = match cli.command {
        Command::Run(args) => Settings::from_run_args(args).and_then(|s| command::run::run(&s)),
        Command::Profile(args) => {
            ProfileSettings::from_args(args).and_then(|s| command::profile::profile(&s))
        }
        Command::Compare(args) => {
            CompareSettings::from_args(args).and_then(|s| command::compare::compare(&s))
        }
        Command::Watch(args) => Settings::from_run_args(args).and_then(|mut s| {
            // Every edit measured again is no run to keep.
            s.store.keep = false;
            command::watch::watch(&s, anstream::stdout())?;
            Ok(ExitStatus::Interrupted)
        }),
        Command::Selftest(args) => command::selftest::selftest(&args).map(|()| ExitStatus::Success),
        Command::Doctor(args) => command::doctor::doctor(args.json),
        Command::History(args) => {
            HistorySettings::from_args(args).and_then(|s| command::history::history(&s))
        }
        Command::Report(args) => {
            ReportSettings::from_args(args).and_then(|s| command::report::report(&s))
        }
        Command::New(args) => command::new::new(&args),
        Command::Completions { shell } => {
            command::completions::completions(shell, &mut std::io::stdout())
                .map(|()| ExitStatus::Success)
        }
        Command::Schema { kind } => command::schema::print(kind, &mut std::io::stdout()),
        Command::Man => {
            command::completions::man_page(&mut std::io::stdout()).map(|()| ExitStatus::Success)
        }
        Command::Worker => host::benchmark::worker::serve().map(|()| ExitStatus::Success),
        Command::SelftestReference(args) => {
            command::selftest::reference(&args).map(|()| ExitStatus::Success)
        }
    };
    match outcome {
        Ok(status) => status.into(),
        Err(e) => {
            eprintln!("error: {}", terminal(&one_line(&e)));
            ExitStatus::Usage.into()
        }
    }
}
