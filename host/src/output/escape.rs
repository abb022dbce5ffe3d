//! Text from guests (export names, file names, function names, and the
//! errors and notes that quote them) made safe for each place it is shown:
//! one function per format. A name is data: on a terminal it must not move
//! the cursor or start a line of its own, in Markdown it must not end its
//! cell, in HTML it must not open a tag.
//!
//! JSON needs nothing of this (serde escapes what JSON must); CSV keeps a
//! name exactly, quoted per RFC 4180, for the programs that read it.

use std::borrow::Cow;
use std::fmt::Write;

/// `s` with every control character (C0 with tab, LF and CR; DEL; C1)
/// written as a visible `\u{..}` escape
/// (ESC becomes `\u{1b}`, a newline `\u{a}`), the rest as is: one line that
/// moves no cursor and sets no colour.
pub fn terminal(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c.is_control() {
            true => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            false => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Text in a Markdown paragraph: line breaks folded into spaces, other
/// control characters escaped as on the terminal, no raw HTML, backticks
/// shown as themselves (no code span can start in a name).
pub fn markdown_text(s: &str) -> String {
    let folded = s.replace("\r\n", " ").replace(['\n', '\r'], " ");
    terminal(&folded).replace('<', "&lt;").replace('`', "\\`")
}

/// Text in a Markdown table cell: as [`markdown_text`], and pipes escaped
/// so that the cell ends where the table says.
pub fn markdown_cell(s: &str) -> String {
    markdown_text(s).replace('|', "\\|")
}

/// A CSV field (RFC 4180): quoted, its quotes doubled, when it holds a
/// comma, a double quote, CR or LF; as is otherwise.
pub fn csv(s: &str) -> String {
    if s.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Text for HTML content or a quoted attribute: `&<>"'` as entities,
/// control characters escaped as on the terminal.
pub fn html(s: &str) -> String {
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
    fn markdown_keeps_cells_and_code_spans_closed() {
        assert_eq!(markdown_cell("a|b\nc`d<e\x1b"), "a\\|b c\\`d&lt;e\\u{1b}");
        assert_eq!(markdown_text("a|b"), "a|b");
    }

    #[test]
    fn csv_quotes_what_rfc_4180_says() {
        assert_eq!(csv("plain"), "plain");
        assert_eq!(csv("a,b"), "\"a,b\"");
        assert_eq!(csv("say \"hi\"\r\n"), "\"say \"\"hi\"\"\r\n\"");
        assert_eq!(csv("cr\r"), "\"cr\r\"");
        assert_eq!(csv(""), "");
    }

    #[test]
    fn html_escapes_markup_and_control_characters() {
        assert_eq!(
            html("<b a=\"x\" b='y'>&\x1b</b>"),
            "&lt;b a=&quot;x&quot; b=&#39;y&#39;&gt;&amp;\\u{1b}&lt;/b&gt;"
        );
    }
}
