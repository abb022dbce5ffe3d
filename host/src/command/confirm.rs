//! `host history --confirm`: for each timed series whose module changed
//! within the runs shown, the newest module measured against the module
//! before the change, side by side in one `host compare` on this machine
//! ([`compare_rounds`], at `host compare`'s defaults and the series' own
//! engine configuration and size), from the copies the store keeps
//! ([`crate::results::modules`]): the files themselves may be long gone.
//! One comparison per pair of modules, benchmark, size and engine, however
//! many series share it.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::analysis::gate::Confirmation;
use crate::analysis::trend::Series;
use crate::benchmark::parent::compare::compare_rounds;
use crate::benchmark::progress::Silent;
use crate::options::CompareSettings;
use crate::output::escape::terminal;
use crate::results::modules::{ModuleRef, Modules};
use crate::util::error::one_line;
use crate::util::fs::replace_atomically;

/// The side-by-side comparison of each series of `all` (one per series,
/// in order; `None` where the series is exact, or its module did not
/// change within its runs, or was not kept), made with the settings of
/// `template`, from the modules of the store in `store`.
pub fn confirm_all(
    store: &Path,
    all: &[Series],
    template: &CompareSettings,
) -> Vec<Option<Confirmation>> {
    let modules = Modules::of_store(store);
    let mut done: Vec<(String, Confirmation)> = Vec::new();
    all.iter()
        .map(|series| {
            if series.measure.deterministic() {
                return None;
            }
            let (at, before, after) = module_change(series)?;
            let key = format!(
                "{} {} {:?} {:?} {:?}",
                before.sha256,
                after.sha256,
                series.subject.benchmark,
                series.subject.size,
                series.subject.engine
            );
            if let Some((_, c)) = done.iter().find(|(k, _)| *k == key) {
                return Some(Confirmation {
                    starts_at_run: at + 1,
                    ..c.clone()
                });
            }
            eprintln!(
                "confirming {}: {} against {}, side by side",
                terminal(&series.title()),
                after.short(),
                before.short()
            );
            let c = confirm_one(&modules, series, before, after, at, template);
            done.push((key, c.clone()));
            Some(c)
        })
        .collect()
}

/// Where the newest module of `series` first appears (its index), the
/// module before it and the newest; `None` when every run measured the
/// newest, or a module of the two was not kept.
fn module_change(series: &Series) -> Option<(usize, &ModuleRef, &ModuleRef)> {
    let after = series.points.last()?.module.as_ref()?;
    let start = series
        .points
        .iter()
        .rposition(|p| p.module.as_ref().map(|m| &m.sha256) != Some(&after.sha256))?
        + 1;
    let before = series.points[start - 1].module.as_ref()?;
    Some((start, before, after))
}

/// Compare `after` against `before` for `series`, saying why not when
/// the comparison could not be made.
fn confirm_one(
    modules: &Modules,
    series: &Series,
    before: &ModuleRef,
    after: &ModuleRef,
    at: usize,
    template: &CompareSettings,
) -> Confirmation {
    let start = Instant::now();
    let mut confirmation = Confirmation {
        before: before.clone(),
        after: after.clone(),
        starts_at_run: at + 1,
        source: "store",
        verdict: None,
        ratio: None,
        metric: None,
        seconds: 0.0,
        error: None,
    };
    match compare_modules(modules, series, before, after, template) {
        Ok(found) => {
            confirmation.verdict = Some(found.verdict);
            confirmation.ratio = Some(found.ratio);
            // The metric's own name (`time`, `instructions`).
            #[allow(clippy::disallowed_methods)]
            let metric = found.metric.unescaped().to_string();
            confirmation.metric = Some(metric);
        }
        Err(e) => confirmation.error = Some(one_line(&e)),
    }
    confirmation.seconds = start.elapsed().as_secs_f64();
    confirmation
}

/// The comparison of `after` against `before` for `series`: the two
/// modules written from the store to a temporary folder as
/// `before/NAME.wasm` and `after/NAME.wasm`, compared at the series' size
/// and engine configuration.
fn compare_modules(
    modules: &Modules,
    series: &Series,
    before: &ModuleRef,
    after: &ModuleRef,
    template: &CompareSettings,
) -> Result<crate::results::Comparison> {
    let name = after.file_name();
    let within = benchmark_within(series, after)?;
    let folder = tempfile::tempdir().context("a folder for the modules compared")?;
    let files: Vec<PathBuf> = [("before", before), ("after", after)]
        .into_iter()
        .map(|(side, module)| -> Result<PathBuf> {
            let bytes = modules.read(module)?;
            let dir = folder.path().join(side);
            std::fs::create_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
            let path = dir.join(format!("{name}.wasm"));
            replace_atomically(&path, &bytes)?;
            Ok(path)
        })
        .collect::<Result<_>>()?;
    let mut settings = template.clone();
    settings.settings.paths = files.clone();
    settings.settings.engines = vec![series.subject.engine.clone()];
    settings.settings.sizes = series.subject.size.into_iter().collect();
    settings.reference = Some(format!("before/{name}{within}"));
    let variant = format!("after/{name}{within}");
    let report = compare_rounds(&settings, &files, &Silent)?;
    if report.stopped.is_some() {
        bail!("interrupted");
    }
    report
        .comparisons
        .into_iter()
        .find(|c| c.variant == variant.as_str())
        .context("the comparison has no verdict for the newest module")
}

/// The part of the series' benchmark name after its file's name: empty
/// for a file's `run`, `:NAME` for its `run_NAME`.
fn benchmark_within(series: &Series, module: &ModuleRef) -> Result<String> {
    // Compared, not shown: the names of the store's rows.
    #[allow(clippy::disallowed_methods)]
    let (benchmark, file) = (
        series.subject.benchmark.unescaped(),
        module.file.unescaped(),
    );
    let rest = match benchmark.strip_prefix(file) {
        Some(rest) => Some(rest),
        None => benchmark
            .find(&format!("/{file}"))
            .map(|at| &benchmark[at + 1 + file.len()..]),
    };
    match rest {
        Some(rest) if rest.is_empty() || rest.starts_with(':') => Ok(rest.to_string()),
        _ => bail!("the benchmark is not named after its module's file"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::trend::series;
    use crate::results::store::{KeptRun, fixture};

    fn kept(i: usize, benchmark: &str, sha: char) -> KeptRun {
        let mut run = fixture(&format!("{i:013}-1-0"), benchmark, 100.0);
        run.rows[0].module = Some(ModuleRef {
            sha256: sha.to_string().repeat(64),
            file: "w".into(),
        });
        run
    }

    /// The newest module against the one just before it, from the run it
    /// first appears at; none when the module never changed.
    #[test]
    fn the_newest_module_change_is_the_one_compared() -> Result<()> {
        let runs: Vec<KeptRun> = "aaabbbcc"
            .chars()
            .enumerate()
            .map(|(i, sha)| kept(i, "w:fast", sha))
            .collect();
        let all = series(&runs, &[]);
        let (at, before, after) = module_change(&all[0]).context("a change")?;
        assert_eq!(at, 6);
        assert!(before.sha256.starts_with('b') && after.sha256.starts_with('c'));
        assert_eq!(benchmark_within(&all[0], after)?, ":fast");
        let same: Vec<KeptRun> = (0..5).map(|i| kept(i, "w", 'a')).collect();
        assert!(module_change(&series(&same, &[])[0]).is_none());
        let other: Vec<KeptRun> = (0..2).map(|i| kept(i, "sub/w", 'a')).collect();
        assert_eq!(benchmark_within(&series(&other, &[])[0], after)?, "");
        let wrong: Vec<KeptRun> = (0..2).map(|i| kept(i, "wx", 'a')).collect();
        assert!(benchmark_within(&series(&wrong, &[])[0], after).is_err());
        Ok(())
    }
}
