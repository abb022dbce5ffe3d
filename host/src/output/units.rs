//! Human-readable units: times per op and rates.
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
    if !ns.is_finite() {
        return "-".to_string();
    }
    let value = ns / unit.ns;
    // Never show "-0.000".
    let value = if value.abs() < 5e-4 { 0.0 } else { value };
    format!("{} {}", four_digits(value), unit.name)
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
    let magnitude = value.abs();
    let decimals = if magnitude >= 100.0 {
        1
    } else if magnitude >= 10.0 {
        2
    } else {
        3
    };
    format!("{value:.decimals$}")
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
