//! `host history` written out: the terminal table ([`table`]), the Markdown
//! summary for a CI job ([`markdown`]) and the JSON export ([`Export`]) of
//! every series with its change points and the gate's reading of it
//! ([`crate::analysis::gate`]): all three are made from one [`Gate`], the
//! one the exit status follows. Every name read from the store is escaped
//! for its format.

use std::fmt::Write;

use serde::Serialize;

use crate::analysis::changes::{ALPHA, Change, MIN_SEGMENT};
use crate::analysis::gate::{Confirmation, Gate, GateCheck, Judgement, Rule, SeriesGate};
use crate::analysis::trend::{Measure, Point, Series};
use crate::output::cells::format_ratios;
use crate::output::escape::{markdown_cell, markdown_text, terminal};
use crate::output::units::format_ns;
use crate::results::store::MachineId;
use crate::results::{Foreign, Tool};

/// Runs shown in a trend line.
const TREND_POINTS: usize = 16;

/// How the change points were found, in one sentence.
pub fn method() -> String {
    format!(
        "binary segmentation of log medians: the largest two-sample t over every cut leaving at least {MIN_SEGMENT} runs a side \
         (then over every middle part, for a level that came and went), each against the {:.0}% quantile of that largest t \
         for as many runs of normal noise (false alarms at most {:.0}% per series without a change); \
         deterministic counts: any difference",
        100.0 * (1.0 - ALPHA),
        200.0 * ALPHA
    )
}

/// The JSON export of `host history`.
#[derive(Debug, Serialize)]
pub struct Export<'a> {
    pub tool: Tool,
    /// The store read.
    pub store: String,
    /// Kept runs read.
    pub runs: usize,
    pub method: String,
    /// The gate: its rule, threshold, whether it asked for confirmation,
    /// and whether it fails (the exit status 3).
    pub gate: GateExport<'a>,
    pub series: Vec<SeriesExport<'a>>,
}

/// The gate in the JSON export.
#[derive(Debug, Serialize)]
pub struct GateExport<'a> {
    pub rule: Rule,
    pub threshold_pct: f64,
    pub confirmed: bool,
    pub fails: bool,
    /// The gate's error rates measured on this store's machine
    /// (`host selftest --only gate`), when kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub figures: Option<&'a GateCheck>,
}

/// One series in the JSON export.
#[derive(Debug, Serialize)]
pub struct SeriesExport<'a> {
    #[serde(flatten)]
    pub series: &'a Series,
    /// Each change with the run it starts at (numbered from 1 in the
    /// series) and that run's id.
    pub change_points: Vec<ChangeExport<'a>>,
    /// The gate's reading of its newest change (and the side-by-side
    /// comparison, with `--confirm`).
    pub gate: &'a SeriesGate,
}

/// A change point in the JSON export.
#[derive(Debug, Serialize)]
pub struct ChangeExport<'a> {
    /// The run it starts at, numbered from 1 within the series.
    pub starts_at_run: usize,
    /// That kept run.
    pub run: &'a Point,
    #[serde(flatten)]
    pub change: &'a Change,
}

impl<'a> Export<'a> {
    pub fn new(store: String, runs: usize, series: &'a [Series], gate: &'a Gate) -> Self {
        Export {
            tool: Tool::this(),
            store,
            runs,
            method: method(),
            gate: GateExport {
                rule: gate.rule,
                threshold_pct: gate.threshold_pct,
                confirmed: gate.confirmed,
                fails: gate.fails(),
                figures: gate.figures.as_ref(),
            },
            series: series
                .iter()
                .zip(&gate.series)
                .map(|(s, gate)| SeriesExport {
                    gate,
                    series: s,
                    change_points: s
                        .changes
                        .iter()
                        .map(|c| ChangeExport {
                            starts_at_run: c.at + 1,
                            run: &s.points[c.at],
                            change: c,
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}

/// A value of `measure` for display.
pub fn format_value(measure: Measure, value: f64) -> String {
    match measure {
        Measure::Time => format_ns(value),
        _ => format!("{value:.2}"),
    }
}

/// A point's provenance: its commit (7 digits, `*` when dirty) and branch,
/// or its label, and its time.
pub fn provenance(point: &Point) -> Foreign {
    let when = std::time::UNIX_EPOCH + std::time::Duration::from_millis(point.unix_ms);
    let when = humantime::format_rfc3339_seconds(when).to_string();
    // The commit, the branch and the label come from the store's files.
    let mut text = Foreign::default();
    if let Some(git) = &point.git {
        let short: String = git.commit.chars().take(7).collect();
        let dirty = if git.dirty { "*" } else { "" };
        text = Foreign::new(format!("{short}{dirty}"));
        if let Some(branch) = &git.branch {
            text = text.concat(&Foreign::new(format!(" {branch}")));
        }
        text = text.then(" ");
    }
    if let Some(label) = &point.label {
        text = text.concat(&label.after("\"")).then("\" ");
    }
    text.then(&when)
}

/// One change in words: `run 7 (abc1234 main ...): 2.003× [1.98×, 2.02×]`.
pub fn describe_change(series: &Series, change: &Change) -> Foreign {
    let [ratio, low, high] = format_ratios(change.ratio, change.ratio_low, change.ratio_high);
    let interval = match series.measure.deterministic() {
        true => "exact".to_string(),
        false => format!("95% CI [{low}, {high}]"),
    };
    provenance(&series.points[change.at])
        .after(&format!("run {} (", change.at + 1))
        .then(&format!("): {ratio} {interval}"))
}

/// A line of block characters for the last runs' values.
fn sparkline(points: &[Point]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let last = &points[points.len().saturating_sub(TREND_POINTS)..];
    let (lo, hi) = last
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.value), b.max(p.value))
        });
    last.iter()
        .map(|p| match hi > lo {
            true => BARS[(((p.value - lo) / (hi - lo)) * 7.0).round().clamp(0.0, 7.0) as usize],
            false => BARS[3],
        })
        .collect()
}

/// What a series' noise hides, in words; `None` when nothing to say.
pub fn noise_words(series: &Series) -> Option<String> {
    if series.measure.deterministic() {
        return Some("deterministic: any change is exact".to_string());
    }
    let step = series.detectable_step?;
    let mut text = format!(
        "noise between runs {:.2}%: a step under about {:.1}% may go unseen in {} runs",
        100.0 * series.noise,
        100.0 * step,
        series.points.len()
    );
    if step > 0.02 {
        text.push_str(
            " (compare the two builds in one `host compare`, or keep runs with `--metric instructions`)",
        );
    }
    Some(text)
}

/// The gate's reading of a series in words, `None` when there is nothing
/// to tell (no change, too few runs).
pub fn gate_words(series: &Series, gate: &SeriesGate, threshold_pct: f64) -> Option<String> {
    let ratio = gate
        .change
        .and_then(|i| series.changes.get(i))
        .map(|c| format_ratios(c.ratio, c.ratio_low, c.ratio_high)[0].clone())
        .unwrap_or_default();
    // A confirmation may judge a series whose history shows no change.
    let since = match ratio.is_empty() {
        true => "side by side".to_string(),
        false => format!("since its newest change ({ratio})"),
    };
    let mut words = match gate.judgement {
        Judgement::TooShort | Judgement::NoChange => return None,
        Judgement::Slower => format!("slower {since}, beyond {threshold_pct}%"),
        Judgement::WithinThreshold => {
            format!("slower {since}, not certainly beyond {threshold_pct}%")
        }
        Judgement::Faster => format!("faster {since}: a speed-up, told, not failed"),
        Judgement::Withdrawn => "the history's slow-down is withdrawn: side by side, the modules are not slower (or the module did not change)".to_string(),
        Judgement::MachineMoved => format!("changed since its newest change ({ratio}), with the control: the machine moved"),
    };
    if series.is_control() {
        words = format!("the control, the machine's own series: {words}; never fails the gate");
    }
    if let Some(m) = &gate.machine {
        let [control, ..] = format_ratios(m.control.value, m.control.low, m.control.high);
        let [relative, low, high] =
            format_ratios(m.relative.value, m.relative.low, m.relative.high);
        let _ = write!(
            words,
            " (the control changed {control} at the same run; against it {relative} [{low}, {high}])"
        );
    }
    if gate.judgement == Judgement::Slower
        && !ratio.is_empty()
        && let Some(c) = &gate.confirmation
        && c.verdict.is_some()
    {
        words.push_str(", confirmed side by side");
    }
    if gate.fails {
        words.push_str(": fails the gate");
    }
    Some(words)
}

/// A side-by-side comparison in words.
pub fn confirmation_words(c: &Confirmation) -> String {
    let pair = format!(
        "{} against {} (from run {}, the store's copies)",
        c.after.short(),
        c.before.short(),
        c.starts_at_run
    );
    match (&c.verdict, &c.ratio, &c.error) {
        (Some(verdict), Some(r), _) => {
            let [ratio, low, high] = format_ratios(r.value, r.low, r.high);
            format!(
                "side by side, {pair}: {verdict} {ratio} [{low}, {high}] by {}, in {:.1} s",
                c.metric.as_deref().unwrap_or("time"),
                c.seconds
            )
        }
        (_, _, Some(error)) => format!(
            "side by side, {pair}: not compared: {}",
            terminal(&Foreign::new(error.as_str()))
        ),
        _ => format!("side by side, {pair}: no verdict"),
    }
}

/// The gate's summary line: what failed, and the exit status; each
/// series' title escaped by `escape`.
pub fn gate_line(
    series: &[Series],
    gate: &Gate,
    escape: impl Fn(&Foreign) -> String,
) -> Option<String> {
    let failing: Vec<String> = series
        .iter()
        .zip(&gate.series)
        .filter(|(_, g)| g.fails)
        .map(|(s, _)| escape(&s.title()))
        .collect();
    let rule = match gate.rule {
        Rule::None => return None,
        Rule::Regression => format!(
            "--fail-on-regression {}%{}",
            gate.threshold_pct,
            if gate.confirmed {
                ", confirmed side by side"
            } else {
                ""
            }
        ),
        Rule::AnyChange => "--fail-on-change".to_string(),
    };
    let moved = gate
        .series
        .iter()
        .filter(|g| g.judgement == Judgement::MachineMoved)
        .count();
    let moved = match moved {
        0 => String::new(),
        n => format!("; {n} series moved with the control: the machine moved, not failed"),
    };
    Some(match failing.is_empty() {
        true => format!("gate ({rule}): passes, no series fails{moved}"),
        false => format!(
            "gate ({rule}): fails (exit status 3), {} series: {}{moved}",
            failing.len(),
            failing.join(", ")
        ),
    })
}

/// The gate's error rates measured on a machine, in lines: the heading,
/// then one per series and one per known step.
pub fn gate_figures_lines(check: &GateCheck) -> Vec<Foreign> {
    let when = std::time::UNIX_EPOCH + std::time::Duration::from_millis(check.unix_ms);
    let machine = check
        .machine
        .as_ref()
        .map_or_else(|| Foreign::new("this machine"), MachineId::describe);
    let mut lines = vec![machine.after("gate figures on ").then(&format!(
        " (host selftest --only gate, {}): `host history --fail-on-regression {}`",
        humantime::format_rfc3339_seconds(when),
        check.threshold_pct
    ))];
    for s in &check.series {
        let r = &s.rates;
        let step = r
            .step_9_in_10_pct
            .map_or_else(|| "none of up to 50%".to_string(), |p| format!("{p}%"));
        // A count's title already says what it counts.
        let what = match s.measure == Measure::Time.describe() {
            true => " (time)",
            false => "",
        };
        lines.push(s.series.after("  ").then(&format!(
            "{what}: {} A/A runs, noise {:.2}%; as measured: {}; false alarms {} of {} orderings ({:.1}%); slow-down caught 9 times in 10: {step}",
            r.runs,
            100.0 * s.noise,
            if r.fails_as_measured { "fails" } else { "passes" },
            r.false_alarms,
            r.orderings,
            100.0 * r.false_alarms as f64 / r.orderings.max(1) as f64,
        )));
    }
    for k in &check.known_step {
        lines.push(Foreign::new(format!(
            "  chain100 then chain101 (1% more work), {}: {}{}",
            k.measure,
            if k.caught { "caught" } else { "missed" },
            k.ratio.map(|r| format!(" ({r:.4}×)")).unwrap_or_default()
        )));
    }
    lines
}

/// The terminal table: per series its last value, trend, changes, noise
/// and the gate's reading.
pub fn table(series: &[Series], runs: usize, store: &str, gate: &Gate) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{runs} kept runs read from {}", terminal(store));
    if series.is_empty() {
        out.push_str("no benchmark in them (run `host run` to keep runs)\n");
        return out;
    }
    for (i, s) in series.iter().enumerate() {
        let last = s.points.last().map(|p| {
            let value = format_value(s.measure, p.value);
            match s.measure.deterministic() || !p.low.is_finite() || !p.high.is_finite() {
                true => value,
                false => format!(
                    "{value} [{}, {}]",
                    format_value(s.measure, p.low),
                    format_value(s.measure, p.high)
                ),
            }
        });
        let _ = writeln!(
            out,
            "\n{}  on {}\n  {} runs, last {}  {}",
            terminal(&s.title()),
            terminal(&s.machine.describe()),
            s.points.len(),
            last.unwrap_or_default(),
            sparkline(&s.points)
        );
        match (s.changes.is_empty(), s.too_short()) {
            (_, true) => out.push_str("  too few runs to tell a change\n"),
            (true, false) => out.push_str("  no change point\n"),
            (false, false) => {
                for c in &s.changes {
                    let _ = writeln!(out, "  change at {}", terminal(&describe_change(s, c)));
                }
            }
        }
        if let Some(words) = noise_words(s) {
            let _ = writeln!(out, "  {words}");
        }
        if let Some(g) = gate.series.get(i) {
            if let Some(words) = gate_words(s, g, gate.threshold_pct) {
                let _ = writeln!(out, "  {words}");
            }
            if let Some(c) = &g.confirmation {
                let _ = writeln!(out, "  {}", confirmation_words(c));
            }
        }
    }
    let _ = writeln!(out, "\nmethod: {}", method());
    if gate.rule != Rule::None
        && let Some(figures) = &gate.figures
    {
        for line in gate_figures_lines(figures) {
            let _ = writeln!(out, "{}", terminal(&line));
        }
    }
    if let Some(line) = gate_line(series, gate, |t| terminal(t).into_owned()) {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// The Markdown summary: the gate's line, and one table row per series.
pub fn markdown(series: &[Series], runs: usize, gate: &Gate) -> String {
    let mut out = String::from("## wasm-bench history\n\n");
    let _ = writeln!(out, "{runs} kept runs.\n");
    if series.is_empty() {
        out.push_str("No benchmark in them.\n");
        return out;
    }
    if let Some(line) = gate_line(series, gate, markdown_text) {
        let _ = writeln!(out, "**{line}**\n");
    }
    out.push_str("| benchmark | machine | runs | last | change points | noise | gate |\n");
    out.push_str("|---|---|--:|--:|---|---|---|\n");
    for (i, s) in series.iter().enumerate() {
        let last = s
            .points
            .last()
            .map(|p| format_value(s.measure, p.value))
            .unwrap_or_default();
        let changes = match s.changes.is_empty() {
            true => "none".to_string(),
            false => s
                .changes
                .iter()
                .map(|c| markdown_cell(&describe_change(s, c)))
                .collect::<Vec<_>>()
                .join("<br>"),
        };
        let judged = gate.series.get(i).map(|g| {
            let mut words = gate_words(s, g, gate.threshold_pct).unwrap_or_default();
            if let Some(c) = &g.confirmation {
                words = format!(
                    "{words}<br>{}",
                    markdown_cell(&Foreign::new(confirmation_words(c)))
                );
            }
            words
        });
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            markdown_cell(&s.title()),
            markdown_cell(&s.machine.describe()),
            s.points.len(),
            last,
            changes,
            markdown_cell(&noise_words(s).unwrap_or_default()),
            judged.unwrap_or_default()
        );
    }
    let _ = writeln!(out, "\nMethod: {}.", markdown_text(&method()));
    if gate.rule != Rule::None
        && let Some(figures) = &gate.figures
    {
        let lines: Vec<String> = gate_figures_lines(figures)
            .iter()
            .map(markdown_text)
            .collect();
        let _ = writeln!(out, "\n{}", lines.join("<br>\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::trend::series;
    use crate::platform::git::GitState;
    use crate::results::store::{KeptRun, MachineId, fixture};

    fn kept(i: usize, name: &str, median_ns: f64) -> KeptRun {
        let mut run = fixture(&format!("{i:013}-1-0"), name, median_ns);
        run.unix_ms = i as u64 * 1000;
        run.label = Some("build|<b>\u{1b}[31m".into());
        run.git = Some(GitState {
            commit: "0123456789abcdef".into(),
            branch: Some("main".into()),
            dirty: true,
        });
        run.machine = MachineId::new(Some(&"cpu|x".into()), 2);
        run
    }

    /// A doubling is told with its run, commit and ratio; hostile names
    /// neither end a Markdown cell nor colour the terminal.
    #[test]
    fn a_change_is_told_with_its_run_and_names_are_escaped() {
        let name = "w|\u{1b}[2J.wasm";
        let runs: Vec<KeptRun> = (0..12)
            .map(|i| kept(i, name, if i < 6 { 100.0 } else { 200.0 } + (i % 3) as f64))
            .collect();
        let all = series(&runs, &[]);
        let gate = Gate::judge(&all, Rule::Regression, 5.0, None);
        let text = table(&all, runs.len(), "/store", &gate);
        assert!(text.contains("change at run 7 (0123456*"), "{text}");
        assert!(!text.contains('\u{1b}'), "{text}");
        assert!(text.contains("beyond 5%: fails the gate"), "{text}");
        assert!(
            text.contains("gate (--fail-on-regression 5%): fails (exit status 3), 1 series: w|"),
            "{text}"
        );
        let md = markdown(&all, runs.len(), &gate);
        assert!(md.contains("w\\|"), "{md}");
        assert!(!md.contains("<b>"), "{md}");
        assert!(!md.contains('\u{1b}'), "{md}");
        assert!(md.contains("fails the gate"), "{md}");
        let json =
            serde_json::to_value(Export::new("/store".into(), 12, &all, &gate)).expect("json");
        assert_eq!(json["gate"]["fails"], true);
        assert_eq!(json["series"][0]["gate"]["judgement"], "slower");
        let change = &json["series"][0]["change_points"][0];
        assert_eq!(change["starts_at_run"], 7);
        assert!(
            (change["ratio"].as_f64().unwrap_or(0.0) - 2.0).abs() < 0.05,
            "{change}"
        );
    }
}
