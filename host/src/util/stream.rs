//! Streams from other processes (a worker's event channel, a `node`
//! process's answers, `git`'s output) read the one bounded way: a line no
//! longer than a cap, or the first bytes of a stream up to a cap. The
//! unbounded readers (`BufRead::lines`, `Read::read_to_end`) are refused by
//! `clippy.toml` everywhere else.

use std::io::{BufRead, Read};

use anyhow::{Result, bail};

use crate::util::bytes::format_bytes;

/// Read one line (without its newline) into `line`, refusing one longer
/// than `max` bytes before it is held whole; `false` at the end of the
/// stream (a last line without its newline is still a line). `what` names
/// the stream in errors.
pub fn read_line(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
    max: usize,
    what: &str,
) -> Result<bool> {
    loop {
        let buffer = match reader.fill_buf() {
            Ok(buffer) => buffer,
            Err(e) => return Err(anyhow::Error::new(e).context(format!("reading {what}"))),
        };
        if buffer.is_empty() {
            return Ok(!line.is_empty());
        }
        let (take, ended) = match buffer.iter().position(|&b| b == b'\n') {
            Some(at) => (at, true),
            None => (buffer.len(), false),
        };
        if line.len() + take > max {
            bail!("a line of {what} longer than {}", format_bytes(max as u64));
        }
        line.extend_from_slice(&buffer[..take]);
        reader.consume(take + usize::from(ended));
        if ended {
            return Ok(true);
        }
    }
}

/// The first `max` bytes of `reader` (what it gives before its end, or
/// before an error).
pub fn read_head(reader: impl Read, max: u64) -> Vec<u8> {
    let mut bytes = Vec::new();
    // The `take` is the bound.
    #[allow(clippy::disallowed_methods)]
    let _ = reader.take(max).read_to_end(&mut bytes);
    bytes
}
