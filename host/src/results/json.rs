//! How the results read unknown numbers back: JSON has no NaN.

use serde::Deserialize;

/// Read a float that may be unknown: JSON has no NaN, so serde_json writes
/// one as `null`; it reads back as NaN. The schema of such a field says
/// "number or null".
pub fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}
