//! Parsers of flag values: durations, byte sizes, `--size` lists and
//! baseline names. Each error names its flag.

use std::time::Duration;

use anyhow::{Context, Result, bail};

/// Parse a size in bytes: `1GiB`, `512MiB`, `64KiB`, `1G`, `100M` (binary
/// units either way) or a plain number of bytes.
pub fn parse_bytes(flag: &str, text: &str) -> Result<u64> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => bail!("{flag}: `{text}` is not a size (try `1GiB` or `256MiB`)"),
    };
    let value: u64 = number
        .parse()
        .ok()
        .with_context(|| format!("{flag}: `{text}` is not a size (try `1GiB` or `256MiB`)"))?;
    let bytes = value
        .checked_mul(scale)
        .with_context(|| format!("{flag}: `{text}` is too large"))?;
    if bytes == 0 {
        bail!("{flag} must be larger than zero");
    }
    Ok(bytes)
}

/// A duration that must be longer than zero.
pub(crate) fn positive_duration(flag: &str, text: &str) -> Result<Duration> {
    let duration = parse_duration(flag, text)?;
    if duration.is_zero() {
        bail!("{flag} must be longer than zero");
    }
    Ok(duration)
}

/// Baseline names become file names: keep them plain.
pub(crate) fn check_baseline_name(name: &str) -> Result<()> {
    let plain = !name.is_empty()
        && name.len() <= MAX_BASELINE_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with('.');
    if !plain {
        bail!(
            "baseline name `{name}`: at most {MAX_BASELINE_NAME} letters, digits, `-`, `_` and `.`, not starting with `.`"
        );
    }
    Ok(())
}

/// The longest baseline name, in bytes.
pub(crate) const MAX_BASELINE_NAME: usize = 100;

/// Most rows one `--size` range may produce.
pub(super) const MAX_SIZES: usize = 1_000;

/// Parse `--size` values: comma-separated terms, each a number, a power
/// (`2^10`) or a doubling range (`16..4096`, `2^4..2^16`, ends included).
/// Returns the sizes ascending, without repeats.
pub fn parse_sizes(specs: &[String]) -> Result<Vec<u64>> {
    let mut sizes = Vec::new();
    for spec in specs {
        for term in spec.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            match term.split_once("..") {
                Some((from, to)) => {
                    let (from, to) = (size_term(from)?, size_term(to)?);
                    if from == 0 || from > to {
                        bail!(
                            "--size: `{term}` is not a range from a positive size up to a larger one"
                        );
                    }
                    let mut n = from;
                    while n < to {
                        sizes.push(n);
                        n = n.saturating_mul(2);
                        if sizes.len() > MAX_SIZES {
                            bail!("--size: `{term}` gives more than {MAX_SIZES} sizes");
                        }
                    }
                    sizes.push(to);
                }
                None => sizes.push(size_term(term)?),
            }
        }
    }
    sizes.sort_unstable();
    sizes.dedup();
    Ok(sizes)
}

pub(crate) fn size_term(term: &str) -> Result<u64> {
    let term = term.trim();
    let value = match term.split_once('^') {
        Some((base, exp)) => {
            let base: u64 = base
                .trim()
                .parse()
                .ok()
                .with_context(|| format!("--size: `{term}` is not a size"))?;
            let exp: u32 = exp
                .trim()
                .parse()
                .ok()
                .with_context(|| format!("--size: `{term}` is not a size"))?;
            base.checked_pow(exp)
                .with_context(|| format!("--size: `{term}` is too large"))?
        }
        None => term
            .parse()
            .ok()
            .with_context(|| format!("--size: `{term}` is not a size"))?,
    };
    if value > i64::MAX as u64 {
        bail!("--size: `{term}` must fit in a signed 64-bit integer");
    }
    Ok(value)
}

/// Parse a duration such as `1s`, `500ms`, `2.5s`, naming the flag on error.
pub fn parse_duration(flag: &str, text: &str) -> Result<Duration> {
    let text = text.trim();
    if let Ok(duration) = humantime::parse_duration(text) {
        return Ok(duration);
    }
    // humantime has no fractional units; accept "2.5s" and plain seconds.
    let (number, scale) = if let Some(n) = text.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1.0)
    } else {
        (text, 1.0)
    };
    match number.trim().parse::<f64>() {
        Ok(value) if value >= 0.0 && value.is_finite() => {
            Ok(Duration::from_secs_f64(value * scale))
        }
        _ => bail!("{flag}: `{text}` is not a duration (try `1s` or `500ms`)"),
    }
}
