//! Human-readable units: times per op and rates.
//!
//! Display only; every figure is kept in ns (or ops/s) in the results.

/// A time in ns with a unit that fits (ps, ns, µs, ms, s) and four
/// significant digits, e.g. `312.4 ps`, `1.234 µs`.
pub fn format_ns(ns: f64) -> String {
    if !ns.is_finite() {
        return "-".to_string();
    }
    let magnitude = ns.abs();
    let (value, unit) = if magnitude == 0.0 {
        (0.0, "ns")
    } else if magnitude < 1.0 {
        (ns * 1e3, "ps")
    } else if magnitude < 1e3 {
        (ns, "ns")
    } else if magnitude < 1e6 {
        (ns / 1e3, "µs")
    } else if magnitude < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    format!("{} {unit}", four_digits(value))
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
