//! `host history`: each benchmark over the kept runs of the store, with the
//! change points found in it, on the terminal and in the exports asked for;
//! `--fail-on-change` exits with status 3 when any series shown has one.

use anyhow::Result;

use crate::analysis::trend::series;
use crate::options::{HistorySettings, Output};
use crate::output::escape::terminal;
use crate::output::export::html::html_history;
use crate::output::export::{write_json, write_text};
use crate::output::history::{Export, markdown, table};
use crate::results::store::{HISTORY_BUDGET, Store};
use crate::util::exit::ExitStatus;
use crate::util::fs::write_atomically;

/// Read the newest kept runs, find each series' changes, and show them.
pub fn history(settings: &HistorySettings) -> Result<ExitStatus> {
    let store = Store::new(&settings.store);
    let (runs, notes) = store.newest(settings.last, 0, HISTORY_BUDGET);
    for note in &notes {
        eprintln!("warning: {}", terminal(note));
    }
    let all = series(&runs, &settings.names);
    let where_ = settings.store.display().to_string();
    let to_stdout = [&settings.json, &settings.markdown]
        .iter()
        .any(|o| matches!(o, Some(Output::Stdout)));
    let text = table(&all, runs.len(), &where_);
    match to_stdout {
        true => eprint!("{text}"),
        false => print!("{text}"),
    }
    if let Some(output) = &settings.json {
        write_json(&Export::new(where_.clone(), runs.len(), &all), output)?;
    }
    if let Some(output) = &settings.markdown {
        write_text(&markdown(&all, runs.len()), output)?;
    }
    if let Some(path) = &settings.html {
        write_atomically(path, html_history(&all, runs.len(), &where_).as_bytes())?;
    }
    let changed = all.iter().any(|s| !s.changes.is_empty());
    Ok(match settings.fail_on_change && changed {
        true => ExitStatus::Regression,
        false => ExitStatus::Success,
    })
}
