//! `host schema run|compare|suite`: the JSON Schema of the `--export-json`
//! of `host run`, `host compare` or `host compare` of a suite, generated from the result types themselves
//! (schemars). The same schemas are shipped in `host/schema/`; a test holds
//! them to the types, and the end-to-end tests validate every export they
//! produce against them.

use std::io::Write;

use anyhow::{Context, Result};

use crate::cli::SchemaKind;
use crate::results::{CompareReport, RunReport, SuiteComparison};
use crate::util::exit::ExitStatus;

/// The schema of one export, as pretty JSON with a final newline.
pub fn schema(kind: SchemaKind) -> Result<String> {
    let schema = match kind {
        SchemaKind::Run => schemars::schema_for!(RunReport),
        SchemaKind::Compare => schemars::schema_for!(CompareReport),
        SchemaKind::Suite => schemars::schema_for!(SuiteComparison),
    };
    let mut text = serde_json::to_string_pretty(&schema).context("serialising the schema")?;
    text.push('\n');
    Ok(text)
}

/// Print the schema of `kind` on `out`.
pub fn print(kind: SchemaKind, out: &mut dyn Write) -> Result<ExitStatus> {
    out.write_all(schema(kind)?.as_bytes())
        .context("writing the schema")?;
    Ok(ExitStatus::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shipped schemas are the types' own: regenerate them with
    /// `cargo run -p host -- schema run > host/schema/run.schema.json` (and
    /// `compare`, `suite`) when the result types change.
    #[test]
    fn the_shipped_schemas_match_the_types() -> Result<()> {
        let shipped = [
            (
                SchemaKind::Run,
                include_str!("../../schema/run.schema.json"),
            ),
            (
                SchemaKind::Compare,
                include_str!("../../schema/compare.schema.json"),
            ),
            (
                SchemaKind::Suite,
                include_str!("../../schema/suite.schema.json"),
            ),
        ];
        for (kind, text) in shipped {
            assert_eq!(schema(kind)?, text, "host/schema is stale for {kind:?}");
        }
        Ok(())
    }
}
