//! An error chain on one line, for the edge of the program (the terminal and
//! the `error` field of a result row). Library code keeps the chain as an
//! `anyhow::Error` and calls this only where text leaves the process.

/// An error's chain of causes on one line (`outer: inner: root`), with any
/// line breaks inside a message folded into `; `.
pub fn one_line(error: &dyn std::fmt::Display) -> String {
    let text = format!("{error:#}");
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_reads_on_one_line() {
        let error = anyhow::anyhow!("root\ncause").context("outer");
        assert_eq!(one_line(&error), "outer: root; cause");
    }
}
