//! The terminal report: the environment above, one row per benchmark, notes
//! under the rows they belong to.
//!
//! Rows are printed as soon as each benchmark is done, so a long folder run
//! shows progress. This module formats; it computes no statistics.

use std::io::{self, Write};

use anstyle::{AnsiColor, Style};

use crate::options::SeedRule;
use crate::output::cells::{
    Cells, callgrind_line, costs_line, counters_line, phases_line, start_line,
};
use crate::output::escape::{Text, terminal};
use crate::output::merged;
use crate::output::units::{format_ns, format_seconds};
use crate::results::Verdict;
use crate::results::{
    BenchResult, Environment, Figures, Foreign, MergedExport, ProfileReport, RunReport,
    SuiteSummary, Tool,
};
use crate::results::{CompareReport, Comparison};

const BOLD: Style = Style::new().bold();
const DIM: Style = Style::new().dimmed();
const ERROR: Style = AnsiColor::Red.on_default().bold();
const FAST: Style = AnsiColor::Green.on_default().bold();

/// The colour of a verdict word.
fn verdict_style(verdict: Verdict) -> Style {
    match verdict {
        Verdict::Faster => AnsiColor::Green.on_default().bold(),
        Verdict::Slower => AnsiColor::Red.on_default().bold(),
        Verdict::Same => AnsiColor::Cyan.on_default(),
        Verdict::Unsure => AnsiColor::Yellow.on_default(),
    }
}

/// Writes the human-readable report to one stream. Colours are ANSI
/// escapes: give it an `anstream` stream, which drops them when the stream
/// is not a terminal or `NO_COLOR` is set.
pub struct Table<W: Write> {
    out: W,
    name_width: usize,
}

/// On a busy machine, the header's line that says so: what was busy, and
/// what follows for the rows.
pub(crate) fn busy_line(env: &Environment) -> Option<String> {
    if !env.busy_machine {
        return None;
    }
    let mut seen = Vec::new();
    if !env.core_loads.is_empty() {
        seen.push(crate::platform::load::describe(&env.core_loads));
    }
    if let Some(watched) = env.interruptions.as_ref().filter(|w| w.busy()) {
        seen.push(format!(
            "core {} lost {:.0}% of its watch to other work",
            watched.core, watched.lost_pct
        ));
    }
    Some(format!(
        "busy machine: {} before the run: results may not repeat; each interval spans its processes' medians",
        seen.join(", ")
    ))
}

impl<W: Write> Table<W> {
    pub fn new(out: W) -> Self {
        Table { out, name_width: 9 }
    }

    /// The stream, for lines of the caller's own.
    pub fn out(&mut self) -> &mut W {
        &mut self.out
    }

    /// The environment lines and the column headings; `rows` are the names of
    /// every row to come, to size the first column.
    pub fn header(&mut self, env: &Environment, rows: &[impl Text]) -> io::Result<()> {
        self.machine(env)?;
        self.settings(env, rows)
    }

    /// The header of a report merged from `exports`: in place of one
    /// machine's lines, each export's (machine, core, seed, calibration)
    /// under a line that says what differs between them; then the
    /// settings and the column headings.
    pub fn merged_header(
        &mut self,
        env: &Environment,
        exports: &[MergedExport],
        rows: &[impl Text],
    ) -> io::Result<()> {
        let tool = Tool::this();
        writeln!(
            self.out,
            "{} {} · {}",
            terminal(&tool.name),
            terminal(&tool.version),
            merged::summary(exports)
        )?;
        for export in exports {
            writeln!(self.out, "  {}", terminal(&merged::export_line(export)))?;
        }
        self.settings(env, rows)
    }

    /// The lines of the machine a report was measured on: the CPU, the
    /// core, the clock, the calibration and the seed.
    fn machine(&mut self, env: &Environment) -> io::Result<()> {
        let tool = Tool::this();
        let cpu = env
            .cpu_model
            .as_ref()
            .map_or("unknown CPU".into(), terminal);
        writeln!(
            self.out,
            "{} {} · {cpu} · {} cores",
            terminal(&tool.name),
            terminal(&tool.version),
            env.cores
        )?;
        let mut core = match env.pinned_core {
            Some(c) => match &env.core_choice {
                Some(why) => format!("pinned to core {c} ({})", terminal(why)),
                None => format!("pinned to core {c}"),
            },
            None => "not pinned".to_string(),
        };
        if let Some(watched) = &env.interruptions {
            core.push_str(&format!(
                ", interrupted {:.0}/s ({:.1}% of the time)",
                watched.per_second, watched.lost_pct
            ));
        }
        writeln!(
            self.out,
            "{core} · {} · clock resolution {}, read {}",
            terminal(&env.priority),
            format_ns(env.calibration.clock_resolution_ns),
            format_ns(env.calibration.clock_overhead_ns)
        )?;
        writeln!(
            self.out,
            "empty-guest call {} · pause/resume pair {} · sample target {:.1} ms · seed {}{}{}",
            format_ns(env.calibration.empty_call_ns),
            format_ns(env.calibration.pause_pair_ns),
            env.calibration.sample_time_ms,
            env.seed,
            match env.seed_rule {
                SeedRule::PerCall => " (a fresh seed per call)",
                SeedRule::Same => " (the same for every call)",
            },
            env.clock_note()
        )?;
        if let (Some(call), Some(pair)) = (
            env.calibration.empty_component_call_ns,
            env.calibration.component_pause_pair_ns,
        ) {
            writeln!(
                self.out,
                "components: empty-guest call {} · pause/resume pair {}",
                format_ns(call),
                format_ns(pair)
            )?;
        }
        Ok(())
    }

    /// The settings' lines (limits, engines), the busy machine and the
    /// warnings, then the column headings; `rows` are the names of every
    /// row to come, to size the first column.
    fn settings(&mut self, env: &Environment, rows: &[impl Text]) -> io::Result<()> {
        self.name_width = rows
            .iter()
            .map(|n| terminal(n).chars().count())
            .max()
            .unwrap_or(0)
            .clamp(9, 60);
        writeln!(
            self.out,
            "limits: memory {} per instance · {} per call · no capabilities beyond the timing imports and WASI granting nothing (programs: their folder read-only)",
            crate::util::bytes::format_bytes(env.max_memory_bytes),
            humantime::format_duration(std::time::Duration::from_millis(env.timeout_ms as u64))
        )?;
        let other = |e: &&crate::options::EngineConfig| {
            e.library.is_some() || e.runtime != crate::options::Runtime::Wasmtime
        };
        for engine in env.engines.iter().filter(other) {
            writeln!(
                self.out,
                "engine {}: {}",
                terminal(&engine.short_name()),
                terminal(&engine.describe())
            )?;
        }
        if let Some(busy) = busy_line(env) {
            writeln!(self.out, "{busy}")?;
        }
        for warning in &env.warnings {
            writeln!(self.out, "warning: {}", terminal(warning))?;
        }
        writeln!(self.out)?;
        writeln!(
            self.out,
            "{:<w$}  {:>11}  {:>9}  {:>26}  {:>11}  {:>7}  {:>6}  {:>8}",
            "benchmark",
            "time/op",
            "± err%",
            "95% CI of median",
            "ops/s",
            "samples",
            "count",
            "outliers",
            w = self.name_width
        )?;
        self.out.flush()
    }

    /// One row, and its notes.
    pub fn row(&mut self, result: &BenchResult) -> io::Result<()> {
        let w = self.name_width;
        let Some(f) = &result.figures else {
            let error = result.error.clone().unwrap_or("not measured".into());
            return writeln!(
                self.out,
                "{:<w$}  {ERROR}error:{ERROR:#} {}",
                terminal(&result.name),
                terminal(&error)
            )
            .and_then(|()| self.out.flush());
        };
        if f.no_measurable_work {
            // The bundled empty guests check the instrument (their per-op
            // time must be 0): say what the row is, plainly, rather than alarm (the JSON keeps
            // every figure and note).
            writeln!(
                self.out,
                "{:<w$}  {DIM}no measurable work: 0 per op, as an empty guest must be{DIM:#}",
                terminal(&result.name)
            )?;
            self.start(f)?;
            return self.out.flush();
        }
        let cells = Cells::of(f);
        writeln!(
            self.out,
            "{:<w$}  {BOLD}{:>11}{BOLD:#}  {:>9}  {:>26}  {:>11}  {:>7}  {:>6}  {:>8}",
            terminal(&result.name),
            cells.time,
            cells.err,
            cells.ci,
            cells.rate,
            f.counts.samples,
            cells.count,
            f.time.outliers,
        )?;
        if let Some(p) = &f.phases {
            writeln!(self.out, "{:<w$}  {}", "", phases_line(p, &f.warmup))?;
        }
        self.start(f)?;
        if let Some(fuel) = f.fuel_per_op {
            writeln!(self.out, "{:<w$}  instructions: {fuel:.2} per op", "")?;
        }
        if let Some(c) = &f.callgrind {
            writeln!(self.out, "{:<w$}  {}", "", callgrind_line(c))?;
        }
        if let Some(h) = &f.hardware_counters {
            writeln!(self.out, "{:<w$}  {}", "", counters_line(h))?;
        }
        if let Some(costs) = costs_line(&f.costs) {
            writeln!(self.out, "{:<w$}  {DIM}{costs}{DIM:#}", "")?;
        }
        for note in &f.notes {
            writeln!(
                self.out,
                "{:<w$}  {DIM}note: {}{DIM:#}",
                "",
                terminal(&note.words())
            )?;
        }
        if let Some(b) = &result.baseline {
            let flag = if b.regression {
                format!(" {ERROR}(regression){ERROR:#}")
            } else {
                String::new()
            };
            writeln!(
                self.out,
                "{:<w$}  vs baseline `{}` ({}): {}{flag}",
                "",
                terminal(&b.name),
                terminal(&b.metric),
                terminal(&b.text)
            )?;
        }
        self.out.flush()
    }

    /// The start line under a row, when the row measured its start.
    fn start(&mut self, f: &Figures) -> io::Result<()> {
        let w = self.name_width;
        match &f.start {
            Some(start) => writeln!(self.out, "{:<w$}  {}", "", start_line(start, &f.durations)),
            None => Ok(()),
        }
    }

    /// The report of `host compare`: environment, one row per variant, and
    /// the verdicts.
    pub fn comparison(&mut self, report: &CompareReport) -> io::Result<()> {
        let names: Vec<&Foreign> = report.variants.iter().map(|v| &v.name).collect();
        self.header(&report.environment, &names)?;
        for variant in &report.variants {
            self.row(variant)?;
        }
        writeln!(self.out)?;
        let (rounds, rows) = match report.comparisons.iter().any(|c| !c.phases.is_empty()) {
            true => (
                "interleaved iterations (a round: one of each program)".to_string(),
                "each row: the median of its iterations' execute times (the fastest timed region of each), the figures the ratios are made of",
            ),
            false => (
                format!("interleaved samples, count {} shared", report.count),
                "each row: the median of its fastest epoch in every round, the figures the ratios are made of",
            ),
        };
        writeln!(
            self.out,
            "{} rounds of {rounds}, {:.2} s; {}",
            report.rounds,
            report.sampling_ms / 1e3,
            report.noise_band()
        )?;
        writeln!(self.out, "{rows}")?;
        for c in &report.comparisons {
            let style = verdict_style(c.verdict);
            writeln!(
                self.out,
                "{style}{:<7}{style:#} {} · smallest detectable effect ±{:.2}%",
                c.verdict.to_string(),
                terminal(&c.text),
                c.mde_pct
            )?;
            self.phase_lines(c)?;
        }
        if report.capped {
            writeln!(self.out, "{}", capped_line(report.to_certain_ms))?;
        }
        if report.comparisons.len() > 1 {
            let k = report.comparisons.len();
            writeln!(
                self.out,
                "intervals hold together at 95% (each at {:.2}%, Bonferroni over {k} comparisons)",
                report.comparisons[0].confidence * 100.0
            )?;
            writeln!(self.out, "{}", relative_summary(report))?;
        }
        self.out.flush()
    }

    /// Under a program variant's verdict, the ratio of each phase.
    fn phase_lines(&mut self, c: &Comparison) -> io::Result<()> {
        for p in &c.phases {
            let style = verdict_style(p.verdict);
            writeln!(
                self.out,
                "        {:<12} {:.4} [{:.4}, {:.4}]  {style}{}{style:#} · ±{:.2}%",
                p.phase.to_string(),
                p.ratio.value,
                p.ratio.low,
                p.ratio.high,
                p.verdict,
                p.mde_pct
            )?;
        }
        Ok(())
    }

    /// Per profiled row, the functions that take the most time (at most
    /// `top`), and per variant the functions whose share changed most.
    pub fn profiles(&mut self, report: &ProfileReport, top: usize) -> io::Result<()> {
        for p in &report.profiles {
            writeln!(self.out)?;
            match (&p.error, &p.path) {
                (Some(error), _) => {
                    writeln!(
                        self.out,
                        "{}  {ERROR}error:{ERROR:#} {}",
                        terminal(&p.name),
                        terminal(error)
                    )?;
                    continue;
                }
                (None, Some(path)) => writeln!(
                    self.out,
                    "{}  {} samples · profile {} (open it in https://profiler.firefox.com)",
                    terminal(&p.name),
                    p.samples,
                    terminal(path)
                )?,
                (None, None) => writeln!(self.out, "{}  {} samples", terminal(&p.name), p.samples)?,
            }
            writeln!(self.out, "  {:>7}  {:>7}  function", "self", "total")?;
            for f in p.functions.iter().take(top) {
                writeln!(
                    self.out,
                    "  {:>6.1}%  {:>6.1}%  {}",
                    f.self_pct,
                    f.total_pct,
                    terminal(&f.name)
                )?;
            }
        }
        for c in &report.changes {
            writeln!(self.out)?;
            writeln!(
                self.out,
                "{} against {}: what got slower (share of the samples gained, then lost)",
                terminal(&c.variant),
                terminal(&c.reference)
            )?;
            if c.functions.is_empty() {
                writeln!(self.out, "  none")?;
            }
            for f in c.functions.iter().take(top) {
                writeln!(
                    self.out,
                    "  {:>+7.1} points  {:>6.1}% -> {:>6.1}%  {}",
                    f.change_points,
                    f.reference_self_pct,
                    f.variant_self_pct,
                    terminal(&f.name)
                )?;
            }
        }
        self.out.flush()
    }

    /// The closing line.
    pub fn footer(&mut self, report: &RunReport) -> io::Result<()> {
        let failures = report.failures();
        let measured = report.results.len() - failures;
        if !report.complexity.is_empty() {
            writeln!(self.out)?;
            writeln!(
                self.out,
                "complexity (per-op time against size, least squares):"
            )?;
            for fit in &report.complexity {
                writeln!(
                    self.out,
                    "{:<w$}  {:<11} coefficient {:>10}  rms {:.1}%",
                    terminal(&fit.benchmark),
                    fit.best.to_string(),
                    format_ns(fit.coefficient),
                    fit.rms * 100.0,
                    w = self.name_width
                )?;
            }
        }
        writeln!(self.out)?;
        let fastest = report
            .results
            .iter()
            .filter(|r| !r.is_control())
            .filter_map(|r| Some((r, r.figures.as_ref()?)))
            .filter(|(_, f)| !f.indistinguishable_from_empty)
            .min_by(|a, b| a.1.ns_per_op.median.total_cmp(&b.1.ns_per_op.median));
        let benchmarks = (report.results.iter())
            .filter(|r| !r.is_control() && r.figures.is_some())
            .count();
        if let Some(view) = &report.runtimes {
            crate::output::runtime_table::write_view(&mut self.out, view)?;
            writeln!(self.out)?;
        } else if let (Some((row, f)), true) = (fastest, benchmarks > 1) {
            writeln!(
                self.out,
                "fastest: {FAST}{}{FAST:#} ({} per op)",
                terminal(&row.name),
                format_ns(f.ns_per_op.median)
            )?;
        }
        // Under several engines the medians' mean mixes them: the view has
        // each engine's own.
        if let Some(suite) = (report.suite.as_ref())
            .filter(|s| report.runtimes.is_none() || s.baseline_ratio.is_some())
        {
            writeln!(self.out, "{}", suite_line(suite, report.baseline.as_ref()))?;
        }
        if failures == 0 {
            writeln!(self.out, "{measured} measured")?;
        } else {
            writeln!(
                self.out,
                "{measured} measured, {ERROR}{failures} failed{ERROR:#}"
            )?;
        }
        if let Some(reason) = &report.stopped {
            writeln!(self.out, "stopped early: {}", terminal(reason))?;
        }
        if let Some(path) = &report.saved_baseline {
            writeln!(self.out, "saved as baseline: {}", terminal(path))?;
        }
        let regressions = report.regressions();
        if regressions > 0 {
            writeln!(
                self.out,
                "{ERROR}{regressions} regression(s) against baseline{ERROR:#}"
            )?;
        }
        self.out.flush()
    }
}

/// The suite summary on one line.
pub fn suite_line(suite: &SuiteSummary, baseline: Option<&Foreign>) -> String {
    let mut line = format!(
        "suite: {} of {} ran · geometric mean of the medians {} per op",
        suite.measured,
        suite.rows,
        if suite.geomean_ns.is_finite() {
            format_ns(suite.geomean_ns)
        } else {
            "-".to_string()
        }
    );
    if let Some(r) = &suite.baseline_ratio {
        line.push_str(&format!(
            " · against baseline {}: geometric mean of {} ratios {:.4}× [{:.4}, {:.4}]",
            baseline.map_or("?".into(), terminal),
            suite.baseline_rows,
            r.value,
            r.low,
            r.high
        ));
    }
    line
}

/// What a comparison stopped at its time with a verdict open would need:
/// `to_certain_ms` (its report's), or why no time can be told.
fn capped_line(to_certain_ms: Option<f64>) -> String {
    let stopped = "stopped at its time (--time) with a verdict still unsure";
    match to_certain_ms.filter(|ms| ms.is_finite() && *ms >= 0.0) {
        Some(ms) => format!(
            "{stopped}: about {} more would make it certain, were its rounds to come as they have",
            format_seconds(ms)
        ),
        None => format!(
            "{stopped}: a close call, or rounds too spread to tell what more time would settle"
        ),
    }
}

/// Every variant against the reference on one line: "relative to `a`: `b`
/// 2.50× faster, `c` 1.010× slower, `d` same", its names escaped for the
/// terminal.
pub fn relative_summary(report: &CompareReport) -> String {
    let parts: Vec<String> = report
        .comparisons
        .iter()
        .map(|c| {
            let variant = terminal(&c.variant);
            match c.verdict {
                Verdict::Faster => format!("`{variant}` {:.3}× faster", 1.0 / c.ratio.value),
                Verdict::Slower => format!("`{variant}` {:.3}× slower", c.ratio.value),
                Verdict::Same => format!("`{variant}` the same"),
                Verdict::Unsure => format!("`{variant}` unsure ({:.3}×)", c.ratio.value),
            }
        })
        .collect();
    format!(
        "relative to `{}`: {}",
        terminal(&report.reference),
        parts.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A comparison stopped unsure says how much more time its rounds'
    /// spread calls for, or that none can be told.
    #[test]
    fn a_capped_comparison_says_what_more_time_would_do() {
        let line = capped_line(Some(12_400.0));
        assert!(
            line.contains("about 12.4s more would make it certain"),
            "{line}"
        );
        for unknown in [None, Some(f64::NAN), Some(-1.0)] {
            let line = capped_line(unknown);
            assert!(
                line.ends_with(
                    "a close call, or rounds too spread to tell what more time would settle"
                ),
                "{line}"
            );
        }
    }
}
