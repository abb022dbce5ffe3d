//! Human-readable units: times per op, intervals, err% and rates, each with
//! as many digits as it takes to show what it holds.
//!
//! Display only; every figure is kept in ns (or ops/s) in the results.

/// A unit of time: its name and how many ns it holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeUnit {
    pub name: &'static str,
    pub ns: f64,
}

const UNITS: [TimeUnit; 5] = [
    TimeUnit {
        name: "ps",
        ns: 1e-3,
    },
    TimeUnit {
        name: "ns",
        ns: 1.0,
    },
    TimeUnit {
        name: "µs",
        ns: 1e3,
    },
    TimeUnit {
        name: "ms",
        ns: 1e6,
    },
    TimeUnit { name: "s", ns: 1e9 },
];

/// The unit that fits the largest magnitude among `values` (ns for zero).
pub fn unit_for(values: &[f64]) -> TimeUnit {
    let magnitude = values
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    if magnitude == 0.0 {
        return UNITS[1];
    }
    UNITS
        .iter()
        .rev()
        .find(|u| magnitude >= u.ns)
        .copied()
        .unwrap_or(UNITS[0])
}

/// A time in ns with a unit that fits (ps, ns, µs, ms, s) and four
/// significant digits, e.g. `312.4 ps`, `1.234 µs`.
pub fn format_ns(ns: f64) -> String {
    format_ns_in(ns, unit_for(&[ns]))
}

/// A time in ns, shown in `unit`.
pub fn format_ns_in(ns: f64, unit: TimeUnit) -> String {
    let decimals = decimals_for(ns / unit.ns, 4);
    format_ns_fixed(ns, unit, decimals)
}

/// A median and its interval in ns, shown in `unit` with the same decimals,
/// so that the three line up: the fewest significant digits from 4 up to 7
/// at which the two ends print differently (4 when they print alike at 7),
/// counted from the largest of the three. Returns `[median, low, high]`.
pub fn format_interval_in(median: f64, low: f64, high: f64, unit: TimeUnit) -> [String; 3] {
    let largest = [median, low, high]
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max((v / unit.ns).abs()));
    let decimals = (4..=7)
        .map(|digits| decimals_for(largest, digits))
        .find(|&d| format_ns_fixed(low, unit, d) != format_ns_fixed(high, unit, d))
        .unwrap_or_else(|| decimals_for(largest, 4));
    [median, low, high].map(|ns| format_ns_fixed(ns, unit, decimals))
}

/// The fewest decimals from `min` up to `max` at which no two of `values`
/// print alike (`min` when some two always do).
pub fn decimals_apart(values: &[f64], min: usize, max: usize) -> usize {
    (min..=max)
        .find(|&d| {
            let printed: Vec<String> = values.iter().map(|v| format!("{v:.d$}")).collect();
            printed
                .iter()
                .enumerate()
                .all(|(i, p)| !printed[i + 1..].contains(p))
        })
        .unwrap_or(min)
}

/// err% with at least one significant digit, at least 1 decimal and at most
/// 4, e.g. `±2.3%`, `±0.004%`, `±<0.0001%`, `±0%`; at most `±999.9%`.
pub fn format_err_pct(pct: f64) -> String {
    let pct = pct.min(999.9);
    if pct == 0.0 {
        return "±0%".to_string();
    }
    if pct.abs() < 1e-4 {
        return "±<0.0001%".to_string();
    }
    let decimals = (-pct.abs().log10().floor()).clamp(1.0, 4.0) as usize;
    format!("±{pct:.decimals$}%")
}

/// A time in ns, shown in `unit` with `decimals` decimals (`-` when not
/// finite, never `-0.000`).
fn format_ns_fixed(ns: f64, unit: TimeUnit, decimals: usize) -> String {
    if !ns.is_finite() {
        return "-".to_string();
    }
    let value = ns / unit.ns;
    let value = if value.abs() < 0.5 * 10f64.powi(-(decimals as i32)) {
        0.0
    } else {
        value
    };
    format!("{value:.decimals$} {}", unit.name)
}

/// The decimals that give `value` (in a unit, so below 1000) `digits`
/// significant digits.
fn decimals_for(value: f64, digits: usize) -> usize {
    let whole = match value.abs() {
        m if m >= 100.0 => 3,
        m if m >= 10.0 => 2,
        _ => 1,
    };
    digits.saturating_sub(whole)
}

/// A rate with an SI prefix, e.g. `3.201 G/s`.
pub fn format_rate(per_sec: f64) -> String {
    if !per_sec.is_finite() || per_sec <= 0.0 {
        return "-".to_string();
    }
    let (value, prefix) = if per_sec >= 1e12 {
        (per_sec / 1e12, "T")
    } else if per_sec >= 1e9 {
        (per_sec / 1e9, "G")
    } else if per_sec >= 1e6 {
        (per_sec / 1e6, "M")
    } else if per_sec >= 1e3 {
        (per_sec / 1e3, "k")
    } else {
        (per_sec, "")
    };
    format!("{} {prefix}/s", four_digits(value))
}

/// A count with an SI suffix when large, e.g. `2.1M`.
pub fn format_count(n: u64) -> String {
    match n {
        0..10_000 => n.to_string(),
        10_000..10_000_000 => format!("{:.0}k", n as f64 / 1e3),
        10_000_000..10_000_000_000 => format!("{:.0}M", n as f64 / 1e6),
        _ => format!("{:.0}G", n as f64 / 1e9),
    }
}

fn four_digits(value: f64) -> String {
    let decimals = decimals_for(value, 4);
    format!("{value:.decimals$}")
}

/// `ms` as humantime writes a duration, in whole seconds ("4m 50s"), or
/// under a minute in tenths of one ("12.4s"); 0.0s for a negative time,
/// 0s for NaN.
pub fn format_seconds(ms: f64) -> String {
    let seconds = ms / 1e3;
    if seconds < 59.95 {
        return format!("{:.1}s", seconds.max(0.0));
    }
    humantime::format_duration(std::time::Duration::from_secs(seconds.round() as u64)).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_pick_a_fitting_unit() {
        assert_eq!(format_ns(0.3124), "312.4 ps");
        assert_eq!(format_ns(0.0), "0.000 ns");
        assert_eq!(format_ns(12.345), "12.35 ns");
        assert_eq!(format_ns(1234.0), "1.234 µs");
        assert_eq!(format_ns(2.5e6), "2.500 ms");
        assert_eq!(format_ns(3.2e9), "3.200 s");
        assert_eq!(format_ns(-0.00002), "-0.020 ps");
        assert_eq!(format_ns(-1e-9), "0.000 ps");
        assert_eq!(
            format_ns_in(0.0, unit_for(&[0.0, -0.002, 0.004])),
            "0.000 ps"
        );
        assert_eq!(
            format_ns_in(1500.0, unit_for(&[1500.0, 1600.0])),
            "1.500 µs"
        );
        assert_eq!(format_ns(f64::NAN), "-");
    }

    #[test]
    fn intervals_take_the_digits_that_tell_their_ends_apart() {
        let ns = unit_for(&[16.51]);
        assert_eq!(
            format_interval_in(16.5096, 16.507, 16.512, ns),
            ["16.510 ns", "16.507 ns", "16.512 ns"]
        );
        // Four digits when four tell the ends apart.
        assert_eq!(
            format_interval_in(1234.0, 1230.0, 1240.0, unit_for(&[1240.0])),
            ["1.234 µs", "1.230 µs", "1.240 µs"]
        );
        // Up to seven, counted from the largest of the three.
        assert_eq!(
            format_interval_in(99.99996, 99.99991, 100.00002, ns),
            ["100.0000 ns", "99.9999 ns", "100.0000 ns"]
        );
        assert_eq!(
            format_interval_in(57.6203, 57.62011, 57.62049, ns),
            ["57.6203 ns", "57.6201 ns", "57.6205 ns"]
        );
        assert_eq!(
            format_interval_in(0.3124, 0.3124001, 0.3124002, unit_for(&[0.3124])),
            ["312.4000 ps", "312.4001 ps", "312.4002 ps"]
        );
        // Equal ends, or ends apart only beyond seven digits: four.
        assert_eq!(
            format_interval_in(16.51, 16.51, 16.51, ns),
            ["16.51 ns", "16.51 ns", "16.51 ns"]
        );
        assert_eq!(
            format_interval_in(16.51, 16.5100001, 16.5100002, ns),
            ["16.51 ns", "16.51 ns", "16.51 ns"]
        );
        assert_eq!(
            format_interval_in(0.0, -0.00001, 0.00001, unit_for(&[0.00001])),
            ["0.000 ps", "-0.010 ps", "0.010 ps"]
        );
        assert_eq!(
            format_interval_in(f64::NAN, 1.0, 2.0, ns),
            ["-", "1.000 ns", "2.000 ns"]
        );
    }

    #[test]
    fn err_shows_a_significant_digit() {
        assert_eq!(format_err_pct(2.3), "±2.3%");
        assert_eq!(format_err_pct(12.34), "±12.3%");
        assert_eq!(format_err_pct(0.04), "±0.04%");
        assert_eq!(format_err_pct(0.004), "±0.004%");
        assert_eq!(format_err_pct(0.00042), "±0.0004%");
        assert_eq!(format_err_pct(0.00004), "±<0.0001%");
        assert_eq!(format_err_pct(0.0), "±0%");
        assert_eq!(format_err_pct(5000.0), "±999.9%");
        assert_eq!(format_err_pct(f64::INFINITY), "±999.9%");
    }

    #[test]
    fn decimals_tell_values_apart() {
        assert_eq!(decimals_apart(&[1.462, 1.471, 1.479], 3, 6), 3);
        assert_eq!(decimals_apart(&[1.4620, 1.4624, 1.4790], 3, 6), 4);
        assert_eq!(decimals_apart(&[1.4620, 1.4711, 1.4624], 3, 6), 4);
        assert_eq!(decimals_apart(&[1.0, 1.0, 1.1], 3, 6), 3);
        assert_eq!(decimals_apart(&[0.99999991, 1.0, 1.00000001], 3, 6), 3);
    }

    #[test]
    fn seconds_are_whole_and_never_panic() {
        assert_eq!(format_seconds(290_400.0), "4m 50s");
        assert_eq!(format_seconds(12_449.0), "12.4s");
        assert_eq!(format_seconds(274.7), "0.3s");
        assert_eq!(format_seconds(59_990.0), "1m");
        assert_eq!(format_seconds(-5.0), "0.0s");
        assert_eq!(format_seconds(f64::NAN), "0s");
        assert!(!format_seconds(f64::INFINITY).is_empty());
    }

    #[test]
    fn rates_and_counts() {
        assert_eq!(format_rate(3.2e9), "3.200 G/s");
        assert_eq!(format_rate(999.0), "999.0 /s");
        assert_eq!(format_rate(0.0), "-");
        assert_eq!(format_count(1000), "1000");
        assert_eq!(format_count(2_100_000), "2100k");
        assert_eq!(format_count(4_294_967_296), "4295M");
        assert_eq!(format_count(20_000_000_000), "20G");
    }
}
