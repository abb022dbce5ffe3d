//! Text from outside the host ([`Foreign`]: export names, file names,
//! function names, library paths and flags, every string read back from a
//! saved report, and the errors and notes that quote them) made safe for
//! each place it is shown: one function per format. This module is the one
//! way from a [`Foreign`] to characters that are printed. A name is data:
//! on a terminal it must not move the cursor, set a title or start a line
//! of its own; in Markdown it must not end its cell, open a link, an image
//! or raw HTML, or turn into emphasis; in CSV it must not end its field or
//! start a formula; in HTML and SVG it must not open a tag or end a
//! comment.
//!
//! Every function takes any [`Text`]: a [`Foreign`], or the host's own
//! words (`str`, `String`), so a line composed of both is escaped once.
//! JSON needs nothing of this (serde escapes what JSON must).

use std::borrow::Cow;
use std::fmt::Write;

pub use crate::util::foreign::Foreign;

/// What the escaping functions take: text from outside or the host's own.
/// Sealed: its one method can be called from this module only, so a
/// [`Foreign`] reaches a printer through these functions alone.
pub trait Text {
    #[doc(hidden)]
    fn raw(&self, _: sealed::Token) -> &str;
}

mod sealed {
    /// Made only in this module: the key to [`super::Text::raw`].
    pub struct Token;
}

impl Text for str {
    fn raw(&self, _: sealed::Token) -> &str {
        self
    }
}

impl Text for String {
    fn raw(&self, _: sealed::Token) -> &str {
        self
    }
}

impl Text for Cow<'_, str> {
    fn raw(&self, _: sealed::Token) -> &str {
        self
    }
}

impl Text for Foreign {
    #[allow(clippy::disallowed_methods)] // the one way out: escaped below
    fn raw(&self, _: sealed::Token) -> &str {
        self.unescaped()
    }
}

impl<T: Text + ?Sized> Text for &T {
    fn raw(&self, token: sealed::Token) -> &str {
        (**self).raw(token)
    }
}

fn raw<T: Text + ?Sized>(s: &T) -> &str {
    s.raw(sealed::Token)
}

/// Characters that change how the text around them is shown: the control
/// characters (C0, DEL, C1) and the bidirectional overrides and isolates
/// (which reorder what a reader sees, U+202A..U+202E, U+2066..U+2069).
fn hidden(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `s` with every control character (C0 with tab, LF and CR; DEL; C1) and
/// bidirectional override written as a visible `\u{..}` escape
/// (ESC becomes `\u{1b}`, a newline `\u{a}`), the rest as is: one line that
/// moves no cursor, sets no colour or title.
pub fn terminal<T: Text + ?Sized>(s: &T) -> Cow<'_, str> {
    let s = raw(s);
    if !s.chars().any(hidden) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match hidden(c) {
            true => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            false => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Text in a Markdown paragraph: line breaks folded into spaces, other
/// control characters escaped as on the terminal; no raw HTML or autolink
/// (`<` and `&` as entities), and every character that could open a link,
/// an image, a code span, emphasis or a heading (backslash, backtick,
/// `* _ ~ [ ] #`) shown as itself with a backslash before it, so `[text](url)` and `![](url)` stay text.
pub fn markdown_text<T: Text + ?Sized>(s: &T) -> String {
    let folded = raw(s).replace("\r\n", " ").replace(['\n', '\r'], " ");
    let visible = terminal(&folded);
    let mut out = String::with_capacity(visible.len() + 8);
    for c in visible.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '`' | '*' | '_' | '~' | '[' | ']' | '#' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// Text in a Markdown table cell: as [`markdown_text`], and pipes escaped
/// so that the cell ends where the table says.
pub fn markdown_cell<T: Text + ?Sized>(s: &T) -> String {
    markdown_text(s).replace('|', "\\|")
}

/// The text of a CSV field that a spreadsheet reads as text: control
/// characters escaped as on the terminal (a record is one line), and a
/// field starting with `= + - @`, tab or CR given a leading `'` (OWASP's
/// rule against formula injection). The csv crate's writer
/// ([`crate::output::export::csv`]) quotes it as RFC 4180 says.
pub fn csv<T: Text + ?Sized>(s: &T) -> String {
    let s = raw(s);
    let visible = terminal(s);
    match s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        true => format!("'{visible}"),
        false => visible.into_owned(),
    }
}

/// Text for HTML or SVG content or a quoted attribute: `&<>"'` as
/// entities, control characters escaped as on the terminal.
pub fn html<T: Text + ?Sized>(s: &T) -> String {
    let visible = terminal(s);
    let mut out = String::with_capacity(visible.len());
    for c in visible.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Text inside an HTML comment (`<!-- .. -->`): as [`html`] (so no `>`
/// can close it), and no `--` either (which a comment may not hold): the
/// second `-` of each pair as `&#45;` (entities are not read in a comment:
/// the text stays as it is written).
pub fn html_comment<T: Text + ?Sized>(s: &T) -> String {
    html(s).replace("--", "-&#45;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_shows_control_characters_as_escapes() {
        assert_eq!(terminal("run_a\nb"), "run_a\\u{a}b");
        assert_eq!(terminal("run_\x1b[2J"), "run_\\u{1b}[2J");
        assert_eq!(
            terminal("a\tb\rc\u{7f}d\u{9b}e"),
            "a\\u{9}b\\u{d}c\\u{7f}d\\u{9b}e"
        );
        assert!(matches!(terminal("run·µs ✓"), Cow::Borrowed("run·µs ✓")));
    }

    #[test]
    fn terminal_shows_bidirectional_overrides_as_escapes() {
        assert_eq!(terminal("a\u{202e}b\u{2066}"), "a\\u{202e}b\\u{2066}");
        assert_eq!(
            terminal(&Foreign::new("\x1b]0;title\x07")),
            "\\u{1b}]0;title\\u{7}"
        );
    }

    #[test]
    fn markdown_keeps_cells_and_code_spans_closed() {
        assert_eq!(markdown_cell("a|b\nc`d<e\x1b"), "a\\|b c\\`d&lt;e\\\\u{1b}");
        assert_eq!(markdown_text("a|b"), "a|b");
    }

    #[test]
    fn markdown_links_images_and_emphasis_stay_text() {
        assert_eq!(
            markdown_text("[fix the build](https://x)"),
            "\\[fix the build\\](https://x)"
        );
        assert_eq!(markdown_text("![](https://x)"), "!\\[\\](https://x)");
        assert_eq!(markdown_text("<https://x>"), "&lt;https://x&gt;");
        assert_eq!(
            markdown_text("*a* _b_ ~c~ #d \\e"),
            "\\*a\\* \\_b\\_ \\~c\\~ \\#d \\\\e"
        );
        assert_eq!(markdown_text("&lt;"), "&amp;lt;");
    }

    #[test]
    fn csv_fields_start_no_formula_and_hold_one_line() {
        assert_eq!(csv("=cmd|' /C calc'!A0"), "'=cmd|' /C calc'!A0");
        assert_eq!(csv("+HYPERLINK(\"x\")"), "'+HYPERLINK(\"x\")");
        assert_eq!(csv("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(csv("-1+2"), "'-1+2");
        assert_eq!(csv("\tx"), "'\\u{9}x");
        assert_eq!(csv("\rx"), "'\\u{d}x");
        assert_eq!(csv("say \"hi\", a,b"), "say \"hi\", a,b");
        assert_eq!(csv("a\nb\r"), "a\\u{a}b\\u{d}");
        assert_eq!(csv("a-1"), "a-1");
    }

    #[test]
    fn html_escapes_markup_and_control_characters() {
        assert_eq!(
            html("<b a=\"x\" b='y'>&\x1b</b>"),
            "&lt;b a=&quot;x&quot; b=&#39;y&#39;&gt;&amp;\\u{1b}&lt;/b&gt;"
        );
    }

    #[test]
    fn html_comments_cannot_be_ended() {
        assert_eq!(html_comment("1 --><script>"), "1 -&#45;&gt;&lt;script&gt;");
        assert_eq!(html_comment("wasm-bench"), "wasm-bench");
        for text in ["--!>", "---", "----", "a--b--"] {
            let shown = html_comment(text);
            assert!(!shown.contains("--") && !shown.contains('>'), "{shown}");
        }
    }
}
