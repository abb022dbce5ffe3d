//! The pipes between the parent and a worker, and how the parent reads
//! them without trusting what comes through: the worker's private event
//! channel (a pipe of its own, at descriptor
//! [`crate::benchmark::protocol::EVENTS_FD`] in the worker, read line by
//! line with each line bounded) and its log (stdout and stderr, where the
//! engine, an engine library and anything linked into the worker may print:
//! drained to the end, its last lines kept, each cut short).
//!
//! Nothing printed on the worker's stdout or stderr reaches the event
//! parser; an event line that is too long, not UTF-8 or not an event is an
//! error for that worker, not a hang and not a parent that grows.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::process::Command;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::unistd;

use crate::benchmark::protocol::{EVENTS_FD, Event, MAX_EVENT_BYTES};

/// Lines of the worker's log kept for the error message.
const LOG_LINES: usize = 8;
/// The longest line of the worker's log kept, in bytes: the rest is cut.
const LOG_LINE_BYTES: usize = 1024;
/// A descriptor number above the standard ones, where the parent keeps
/// the worker's end of the event channel until the worker starts.
const ABOVE_STDIO: RawFd = 10;

/// A pipe: its read end and its write end, both closed on `exec`.
pub fn pipe() -> Result<(OwnedFd, OwnedFd)> {
    unistd::pipe2(OFlag::O_CLOEXEC).context("making a pipe for a worker")
}

/// Make the process `command` starts find `write` (the write end of the
/// event channel) at [`EVENTS_FD`], and nothing else of the parent's there.
/// The parent keeps the returned descriptor (a copy of `write` above the
/// standard descriptors, so that setting up the child's stdin, stdout and
/// stderr cannot clobber it) until the child has started, then drops it.
pub fn pass_events(command: &mut Command, write: &OwnedFd) -> Result<OwnedFd> {
    use std::os::unix::process::CommandExt;
    let copy = fcntl(write, FcntlArg::F_DUPFD_CLOEXEC(ABOVE_STDIO))
        .context("passing the event channel")?;
    // SAFETY: `copy` was just made and is owned here alone.
    let copy = unsafe { OwnedFd::from_raw_fd(copy) };
    let fd = copy.as_raw_fd();
    let place = move || {
        // SAFETY: dup2 is async-signal-safe and touches no memory; the copy
        // it makes at EVENTS_FD is not closed on exec. (nix's dup2 wants an
        // owned descriptor at EVENTS_FD, which the child has none of yet.)
        let placed = unsafe { libc::dup2(fd, EVENTS_FD) };
        Errno::result(placed)
            .map(drop)
            .map_err(std::io::Error::from)
    };
    // SAFETY: the closure calls only dup2 and allocates nothing.
    unsafe { command.pre_exec(place) };
    Ok(copy)
}

/// Read the event channel `read` until it closes, sending each event (or
/// the error that ends the reading) on `send`; stops when nobody listens.
pub fn read_events(read: OwnedFd, send: &Sender<Result<Event, String>>) {
    let mut reader = BufReader::with_capacity(64 << 10, File::from(read));
    let mut line = Vec::new();
    loop {
        line.clear();
        let event = match read_line(&mut reader, &mut line, MAX_EVENT_BYTES) {
            Ok(false) => return,
            Ok(true) => parse_event(&line),
            Err(e) => Err(format!("{e:#}")),
        };
        let failed = event.is_err();
        if send.send(event).is_err() || failed {
            return;
        }
    }
}

/// One event line.
fn parse_event(line: &[u8]) -> Result<Event, String> {
    let text =
        std::str::from_utf8(line).map_err(|e| format!("an event that is not UTF-8 ({e})"))?;
    serde_json::from_str::<Event>(text).map_err(|e| {
        let shown: String = text.chars().take(200).collect();
        format!("an unreadable event ({e}): {shown:?}")
    })
}

/// Read one event line (without its newline) into `line`, refusing one
/// longer than `max` bytes before it is held whole; `false` at the end of
/// the stream.
pub fn read_line(reader: &mut impl BufRead, line: &mut Vec<u8>, max: usize) -> Result<bool> {
    crate::util::stream::read_line(reader, line, max, "the worker's event channel")
}

/// The last lines of a worker's log, kept as it is drained.
#[derive(Clone, Default)]
pub struct LogTail(Arc<Mutex<VecDeque<String>>>);

impl LogTail {
    /// Drain `read` to its end, keeping the last [`LOG_LINES`] lines, each
    /// cut to [`LOG_LINE_BYTES`]: a worker printing without end costs the
    /// parent a buffer, not its memory.
    pub fn drain(&self, read: OwnedFd) {
        let mut file = File::from(read);
        let mut chunk = vec![0u8; 64 << 10];
        let mut line = Vec::new();
        loop {
            let n = match file.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            for &byte in &chunk[..n] {
                match byte {
                    b'\n' => self.keep(&mut line),
                    _ if line.len() < LOG_LINE_BYTES => line.push(byte),
                    _ => {}
                }
            }
        }
        self.keep(&mut line);
    }

    fn keep(&self, line: &mut Vec<u8>) {
        let text = String::from_utf8_lossy(line).trim().to_string();
        line.clear();
        if text.is_empty() {
            return;
        }
        if let Ok(mut kept) = self.0.lock() {
            if kept.len() == LOG_LINES {
                kept.pop_front();
            }
            kept.push_back(text);
        }
    }

    /// The lines kept, joined.
    pub fn text(&self) -> String {
        self.0
            .lock()
            .map(|l| l.iter().cloned().collect::<Vec<_>>().join("; "))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: usize) -> Vec<Result<Vec<u8>, String>> {
        let mut reader = BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        loop {
            let mut line = Vec::new();
            match read_line(&mut reader, &mut line, max) {
                Ok(true) => out.push(Ok(line)),
                Ok(false) => return out,
                Err(e) => {
                    out.push(Err(e.to_string()));
                    return out;
                }
            }
        }
    }

    #[test]
    fn lines_are_read_whole_and_bounded() {
        assert_eq!(
            lines(b"ab\ncdefg\n\nh", 8),
            vec![
                Ok(b"ab".to_vec()),
                Ok(b"cdefg".to_vec()),
                Ok(vec![]),
                Ok(b"h".to_vec())
            ]
        );
        let long = lines(b"ok\n0123456789abcdef\nnever", 8);
        assert_eq!(long.len(), 2);
        assert!(long[1].as_ref().is_err_and(|e| e.contains("longer than")));
    }

    #[test]
    fn an_event_that_is_not_utf8_or_not_an_event_is_an_error() {
        assert!(parse_event(b"\xff\xfe").is_err_and(|e| e.contains("not UTF-8")));
        assert!(parse_event(b"{\"nope\":1}").is_err_and(|e| e.contains("unreadable")));
    }

    #[test]
    fn the_log_keeps_its_last_lines_cut_short() -> Result<()> {
        let (read, write) = pipe()?;
        let writer = std::thread::spawn(move || {
            let mut file = File::from(write);
            let long = vec![b'x'; 3 * LOG_LINE_BYTES];
            for n in 0..20 {
                let _ = std::io::Write::write_all(&mut file, format!("line {n}\n").as_bytes());
            }
            let _ = std::io::Write::write_all(&mut file, &long);
        });
        let tail = LogTail::default();
        tail.drain(read);
        writer
            .join()
            .map_err(|_| anyhow::anyhow!("the writer panicked"))?;
        let text = tail.text();
        assert!(text.starts_with("line 13; "), "{text}");
        assert!(text.ends_with(&"x".repeat(LOG_LINE_BYTES)), "{text}");
        assert!(text.len() < 8 * LOG_LINE_BYTES, "{}", text.len());
        Ok(())
    }
}
