//! Text that came from outside the host ([`Foreign`]): names of files,
//! exports, suites and functions, library paths and engine flags, every
//! string read back from a saved report, error text that quotes any of
//! them. Plain data, written to and read from JSON as a string.
//!
//! It cannot be printed as it is: it has no `Display`, no `Deref` or
//! `AsRef<str>`, and the one way to its characters for showing them is
//! `crate::output::escape`, one function per format (terminal, Markdown,
//! CSV, HTML). [`Foreign::unescaped`] gives the raw text for what is not
//! showing it (opening a file, comparing, hashing); clippy refuses it
//! outside the places that say why they need it (`clippy.toml`).

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Text from outside the host: data, never markup. See the module.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Foreign(String);

impl Foreign {
    /// `text`, marked as coming from outside.
    pub fn new(text: impl Into<String>) -> Self {
        Foreign(text.into())
    }

    /// The raw text, for what does not show it (a path to open, a key to
    /// compare). Never for printing: escape it for its format instead.
    pub fn unescaped(&self) -> &str {
        &self.0
    }

    /// The raw text, owned, for what does not show it.
    pub fn into_unescaped(self) -> String {
        self.0
    }

    /// Whether it holds no character.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// New outside text made of this one and words of the host's own
    /// around it: `compose` gets the raw text, and what it returns is
    /// outside text as a whole (escaped as a whole where it is shown).
    pub fn map(&self, compose: impl FnOnce(&str) -> String) -> Foreign {
        Foreign(compose(&self.0))
    }

    /// New outside text made of several and the host's own words:
    /// `compose` gets their raw texts, in order.
    pub fn compose<const N: usize>(
        parts: [&Foreign; N],
        compose: impl FnOnce([&str; N]) -> String,
    ) -> Foreign {
        Foreign(compose(parts.map(|p| p.0.as_str())))
    }

    /// Outside texts joined by `separator` (the host's own words): outside
    /// text as a whole.
    pub fn join<'a>(parts: impl IntoIterator<Item = &'a Foreign>, separator: &str) -> Foreign {
        let parts: Vec<&str> = parts.into_iter().map(|p| p.0.as_str()).collect();
        Foreign(parts.join(separator))
    }

    /// Outside text and the host's own words after it.
    pub fn then(&self, own: &str) -> Foreign {
        Foreign(format!("{}{own}", self.0))
    }

    /// The host's own words, then this text.
    pub fn after(&self, own: &str) -> Foreign {
        Foreign(format!("{own}{}", self.0))
    }

    /// This text, then `other`: outside text as a whole.
    pub fn concat(&self, other: &Foreign) -> Foreign {
        Foreign(format!("{}{}", self.0, other.0))
    }
}

/// Debug quotes the text and escapes its control characters, as it does
/// for a `String`: for test failures and logs, not for a reader.
impl fmt::Debug for Foreign {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl From<String> for Foreign {
    fn from(text: String) -> Self {
        Foreign(text)
    }
}

impl From<&str> for Foreign {
    fn from(text: &str) -> Self {
        Foreign(text.to_string())
    }
}

impl PartialEq<str> for Foreign {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Foreign {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// In the JSON Schema, a string.
impl JsonSchema for Foreign {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        String::schema_name()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_holds_it_as_a_string() {
        let name = Foreign::new("<b>\n");
        let json = serde_json::to_string(&name).expect("serialises");
        assert_eq!(json, "\"<b>\\n\"");
        let back: Foreign = serde_json::from_str(&json).expect("reads back");
        assert_eq!(back, name);
        assert_eq!(
            serde_json::to_value(schemars::schema_for!(Foreign)).expect("a schema")["type"],
            "string"
        );
    }

    #[test]
    fn composing_keeps_it_outside_text() {
        let name = Foreign::new("a");
        assert_eq!(name.map(|n| format!("[{n}]")), "[a]");
        assert_eq!(Foreign::join([&name, &Foreign::new("b")], ", "), "a, b");
        assert_eq!(name.then("!").after("¡"), "¡a!");
        let b = Foreign::new("b");
        assert_eq!(
            Foreign::compose([&name, &b], |[a, b]| format!("{b}{a}")),
            "ba"
        );
    }
}
