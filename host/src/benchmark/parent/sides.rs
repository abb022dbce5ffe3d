//! Which sides a benchmark's comparison in a suite keeps: across three
//! engines or more, a side after the first that fails on the benchmark
//! or cannot run it is left out, and the others are compared without it
//! ([`leaving_out`]); under `--suite-time`, a side that failed waits to be
//! left out until every benchmark had its first look ([`Sides::waiting`]).

use anyhow::Result;

use crate::benchmark::parent::compare::Taken;
use crate::benchmark::parent::row;
use crate::guest::{lacking, sandbox};
use crate::options::CompareSettings;
use crate::results::{CompareReport, LeftOut};
use crate::util::error::one_line;

/// The sides of one benchmark's comparison: the places (among the
/// suite's) of those kept, those left out with why, and, under
/// `--suite-time`, a side that failed (not one its engine cannot run)
/// waiting to be left out: a comparison of the others waits until every
/// benchmark had its first look, and is made while the suite's time
/// lasts.
pub struct Sides {
    pub kept: Vec<usize>,
    pub left_out: Vec<LeftOut>,
    /// The place in `kept` of the side that failed, and why.
    pub waiting: Option<(usize, LeftOut)>,
}

impl Sides {
    /// Every one of `sides`.
    pub fn all(sides: usize) -> Self {
        Sides {
            kept: (0..sides).collect(),
            left_out: Vec::new(),
            waiting: None,
        }
    }
}

/// Compare a benchmark with `compare` across `sides` of the suite's
/// (named `names`) and, when they are three engines or more, each
/// measuring the benchmark's `one_file`, again without each side after
/// the first that cannot run it or fails on it (a call past `--timeout`),
/// so that the others are compared; one waiting is left out first. With
/// `wait`, a side that failed waits instead ([`Sides::waiting`]): the
/// comparison's error stands for now.
pub fn leaving_out(
    settings: &CompareSettings,
    (names, one_file): (&[String], bool),
    sides: &mut Sides,
    wait: bool,
    mut compare: impl FnMut(&CompareSettings) -> Result<(CompareReport, Taken)>,
) -> Result<(CompareReport, Taken)> {
    let engines = &settings.settings.engines;
    let across_engines = one_file && names.len() == engines.len();
    if let Some((at, left)) = sides.waiting.take() {
        sides.kept.remove(at);
        sides.left_out.push(left);
    }
    loop {
        let compared = compare(&keeping(settings, &sides.kept));
        let Err(e) = &compared else {
            return compared;
        };
        let failed = row::failed_engine(e);
        let side = (sides.kept.iter().skip(1))
            .position(|&k| Some(engines[k].short_name().as_str()) == failed)
            .map(|at| at + 1);
        let Some(at) = side.filter(|_| across_engines && sides.kept.len() > 2) else {
            return compared;
        };
        if sandbox::interrupted() {
            return compared;
        }
        let left = LeftOut {
            side: names[sides.kept[at]].clone().into(),
            why: one_line(e).into(),
            unsupported: lacking(e),
        };
        if wait && !left.unsupported {
            sides.waiting = Some((at, left));
            return compared;
        }
        sides.kept.remove(at);
        sides.left_out.push(left);
    }
}

/// `settings` with the engines at the places `kept` only.
pub fn keeping(settings: &CompareSettings, kept: &[usize]) -> CompareSettings {
    let mut settings = settings.clone();
    let engines = &settings.settings.engines;
    settings.settings.engines = kept
        .iter()
        .filter_map(|&k| engines.get(k).cloned())
        .collect();
    settings
}
