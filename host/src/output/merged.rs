//! The environments of a merged report's exports (`host report A.json
//! B.json ...`), as the terminal and the HTML headers show them: what each
//! export was measured on (machine, core, seed, calibration), and in plain
//! words whether they differ. Text from outside (a path, a CPU model, a
//! priority) stays [`Foreign`], escaped by the format that prints it.

use crate::options::SeedRule;
use crate::output::units::format_ns;
use crate::results::{Environment, Foreign, MergedExport};

/// What an export's environment is made of, each a thing to tell apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aspect {
    /// The CPU model and the cores.
    Machine,
    /// The core the measuring thread was pinned to, and its priority.
    Core,
    /// The seed and its rule.
    Seed,
    /// Whether programs read the system's time of day or the stepped one.
    Clock,
}

impl Aspect {
    const ALL: [Aspect; 4] = [Aspect::Machine, Aspect::Core, Aspect::Seed, Aspect::Clock];

    fn word(self) -> &'static str {
        match self {
            Aspect::Machine => "machine",
            Aspect::Core => "core",
            Aspect::Seed => "seed",
            Aspect::Clock => "programs' time of day",
        }
    }

    /// Whether `a` and `b` differ in this.
    fn differs(self, a: &Environment, b: &Environment) -> bool {
        match self {
            Aspect::Machine => a.cpu_model != b.cpu_model || a.cores != b.cores,
            Aspect::Core => a.pinned_core != b.pinned_core || a.priority != b.priority,
            Aspect::Seed => a.seed != b.seed || a.seed_rule != b.seed_rule,
            Aspect::Clock => a.real_clock != b.real_clock,
        }
    }
}

/// The aspects in which some export's environment differs from the
/// first's.
pub fn differences(exports: &[MergedExport]) -> Vec<Aspect> {
    let Some((first, rest)) = exports.split_first() else {
        return Vec::new();
    };
    Aspect::ALL
        .into_iter()
        .filter(|aspect| {
            rest.iter()
                .any(|e| aspect.differs(&first.environment, &e.environment))
        })
        .collect()
}

/// The line that heads a merged report: how many exports, and in plain
/// words what differs between their environments and what does not; the
/// calibration's spread (it is measured anew by every run, so it always
/// differs a little).
pub fn summary(exports: &[MergedExport]) -> String {
    let differ = differences(exports);
    let alike: Vec<&str> = Aspect::ALL
        .into_iter()
        .filter(|a| !differ.contains(a))
        .map(Aspect::word)
        .collect();
    let words = |aspects: &[&str]| aspects.join(", ");
    let machines = differ.contains(&Aspect::Machine);
    let mut line = format!("merged from {} exports", exports.len());
    if !differ.is_empty() {
        let differ: Vec<&str> = differ.iter().map(|a| a.word()).collect();
        line.push_str(&format!(": they differ in {}", words(&differ)));
        if !alike.is_empty() {
            line.push_str(&format!(" (the same {})", words(&alike)));
        }
    } else {
        line.push_str(&format!(": the same {}", words(&alike)));
    }
    line.push_str(&format!("; {}", calibration(exports)));
    if machines {
        line.push_str("; rows of different machines are not comparable");
    }
    line
}

/// The calibration's spread over the exports, in words: the largest ratio
/// of one export's figure to another's, the empty-guest call's or the
/// pause/resume pair's.
fn calibration(exports: &[MergedExport]) -> String {
    let spread = |figure: fn(&Environment) -> f64| -> Option<(f64, f64)> {
        let values: Vec<f64> = exports
            .iter()
            .map(|e| figure(&e.environment))
            .filter(|v| v.is_finite() && *v > 0.0)
            .collect();
        let low = values.iter().copied().reduce(f64::min)?;
        let high = values.iter().copied().reduce(f64::max)?;
        Some((low, high))
    };
    let call = spread(|e| e.calibration.empty_call_ns);
    let pair = spread(|e| e.calibration.pause_pair_ns);
    let ratio = [call, pair]
        .into_iter()
        .flatten()
        .map(|(low, high)| high / low)
        .fold(1.0, f64::max);
    let range = |(low, high): (f64, f64)| match low == high {
        true => format_ns(low),
        false => format!("{} to {}", format_ns(low), format_ns(high)),
    };
    let figures: Vec<String> = [("empty-guest call", call), ("pause/resume pair", pair)]
        .into_iter()
        .filter_map(|(name, spread)| Some(format!("{name} {}", range(spread?))))
        .collect();
    let percent = (ratio - 1.0) * 100.0;
    match percent.round() as i64 {
        0 if ratio == 1.0 => "the same calibration".to_string(),
        0 => format!(
            "calibration differs by less than 1% ({})",
            figures.join(", ")
        ),
        p => format!("calibration differs by up to {p}% ({})", figures.join(", ")),
    }
}

/// One export's environment on one line: where it was read, its rows, the
/// machine, the core, the seed and the calibration.
pub fn export_line(export: &MergedExport) -> Foreign {
    let env = &export.environment;
    let rows = export.rows.len();
    let cpu = env.cpu_model.clone().unwrap_or("unknown CPU".into());
    let core = match env.pinned_core {
        Some(c) => format!("pinned to core {c}"),
        None => "not pinned".to_string(),
    };
    let seed = match env.seed_rule {
        SeedRule::PerCall => "a fresh seed per call",
        SeedRule::Same => "the same for every call",
    };
    export
        .path
        .then(&format!(
            " ({rows} row{}): ",
            if rows == 1 { "" } else { "s" }
        ))
        .concat(&cpu)
        .then(&format!(" · {} cores · {core} · ", env.cores))
        .concat(&env.priority)
        .then(&format!(
            " · seed {} ({seed}) · empty-guest call {} · pause/resume pair {} · clock read {}",
            env.seed,
            format_ns(env.calibration.empty_call_ns),
            format_ns(env.calibration.pause_pair_ns),
            format_ns(env.calibration.clock_overhead_ns)
        ))
        .then(env.clock_note())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::run_report;

    fn export(path: &str, cpu: &str, seed: u64, empty_call_ns: f64) -> MergedExport {
        let mut environment = run_report().environment;
        environment.cpu_model = Some(cpu.into());
        environment.seed = seed;
        environment.calibration.empty_call_ns = empty_call_ns;
        MergedExport {
            path: path.into(),
            rows: vec!["a".into(), "b".into()],
            environment,
        }
    }

    #[test]
    fn exports_that_differ_say_in_what() {
        let a = export("a.json", "Intel Xeon", 7, 1.0);
        let b = export("b.json", "AMD EPYC 7763", 9, 1.25);
        assert_eq!(
            differences(&[a.clone(), b.clone()]),
            [Aspect::Machine, Aspect::Seed]
        );
        let line = summary(&[a.clone(), b.clone()]);
        assert!(
            line.starts_with("merged from 2 exports: they differ in machine, seed (the same core, programs' time of day); calibration differs by up to 25% (empty-guest call 1.000 ns to 1.250 ns, "),
            "{line}"
        );
        assert!(line.ends_with("; rows of different machines are not comparable"));
        let shown = export_line(&b);
        assert!(
            shown
                .unescaped()
                .starts_with("b.json (2 rows): AMD EPYC 7763 · "),
            "{shown:?}"
        );
        assert!(
            shown
                .unescaped()
                .contains(" · seed 9 (a fresh seed per call) · ")
        );
    }

    #[test]
    fn exports_alike_say_so() {
        let a = export("a.json", "Intel Xeon", 7, 1.0);
        let b = export("b.json", "Intel Xeon", 7, 1.0);
        assert!(differences(&[a.clone(), b.clone()]).is_empty());
        assert_eq!(
            summary(&[a, b]),
            "merged from 2 exports: the same machine, core, seed, programs' time of day; the same calibration"
        );
    }

    #[test]
    fn exports_whose_programs_read_other_clocks_say_so() {
        let a = export("a.json", "Intel Xeon", 7, 1.0);
        let mut b = export("b.json", "Intel Xeon", 7, 1.0);
        b.environment.real_clock = true;
        assert_eq!(differences(&[a.clone(), b.clone()]), [Aspect::Clock]);
        assert!(summary(&[a.clone(), b.clone()]).starts_with(
            "merged from 2 exports: they differ in programs' time of day (the same machine, core, seed)"
        ));
        assert!(!export_line(&a).unescaped().contains("time of day"));
        assert!(
            export_line(&b)
                .unescaped()
                .ends_with(" · programs read the system's time of day")
        );
    }
}
