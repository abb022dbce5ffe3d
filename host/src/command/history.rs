//! `host history`: each benchmark over the kept runs of the store, with the
//! change points found in it and the gate's reading of its newest change
//! ([`crate::analysis::gate`]), on the terminal and in the exports asked
//! for; with `--confirm`, each series whose module changed is measured side
//! by side first ([`crate::command::confirm`]). `--fail-on-regression`
//! exits with status 3 when a series shown is slower since its newest
//! change (confirmed, with `--confirm`); `--fail-on-change` when any
//! series shown has a change point. The terminal, the exports and the exit
//! status are all made from the one judgement.

use anyhow::Result;

use crate::analysis::gate::{Gate, Rule};
use crate::analysis::trend::series;
use crate::command::confirm::confirm_all;
use crate::options::{HistorySettings, Output, confirm_settings};
use crate::output::escape::terminal;
use crate::output::export::html::html_history;
use crate::output::export::{write_json, write_text};
use crate::output::history::{Export, markdown, table};
use crate::results::store::{HISTORY_BUDGET, Store};
use crate::util::exit::ExitStatus;
use crate::util::fs::write_atomically;

/// Read the newest kept runs, find each series' changes, judge them, and
/// show them.
pub fn history(settings: &HistorySettings) -> Result<ExitStatus> {
    let store = Store::new(&settings.store);
    let (runs, notes) = store.newest(settings.last, 0, HISTORY_BUDGET);
    for note in &notes {
        eprintln!("warning: {}", terminal(note));
    }
    let mut all = series(&runs, &settings.names);
    if let Some(measure) = settings.measure {
        all.retain(|s| s.measure == measure);
    }
    let confirmations = match &settings.confirm {
        Some(time) => Some(confirm_all(&settings.store, &all, &confirm_settings(time)?)),
        None => None,
    };
    let rule = match (settings.fail_on_regression, settings.fail_on_change) {
        (Some(_), _) => Rule::Regression,
        (None, true) => Rule::AnyChange,
        (None, false) => Rule::None,
    };
    let threshold = settings.fail_on_regression.unwrap_or(0.0);
    let mut gate = Gate::judge(&all, rule, threshold, confirmations);
    gate.figures = store.gate_figures().unwrap_or_else(|e| {
        eprintln!("warning: {}", terminal(format!("{e:#}").as_str()));
        None
    });
    let where_ = settings.store.display().to_string();
    let to_stdout = [&settings.json, &settings.markdown]
        .iter()
        .any(|o| matches!(o, Some(Output::Stdout)));
    let text = table(&all, runs.len(), &where_, &gate);
    match to_stdout {
        true => eprint!("{text}"),
        false => print!("{text}"),
    }
    if let Some(output) = &settings.json {
        write_json(
            &Export::new(where_.clone(), runs.len(), &all, &gate),
            output,
        )?;
    }
    if let Some(output) = &settings.markdown {
        write_text(&markdown(&all, runs.len(), &gate), output)?;
    }
    if let Some(path) = &settings.html {
        write_atomically(path, html_history(&all, runs.len(), &where_).as_bytes())?;
    }
    Ok(match gate.fails() {
        true => ExitStatus::Regression,
        false => ExitStatus::Success,
    })
}
