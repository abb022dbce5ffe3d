//! `wc`: a program workload (the Sightglass protocol), a WASI preview1 command.
//!
//! Reads `./wc.input.txt` (its folder is preopened read-only as `.`), then,
//! between `bench.start()` and `bench.end()`, counts lines (`\n`), words
//! (maximal runs of bytes other than ASCII whitespace: space, `\t`, `\n`,
//! `\v`, `\f`, `\r`, as `LC_ALL=C wc`) and bytes, the distinct words (an
//! open-addressing hash set over the words' bytes), and an FNV-1a 64 hash of
//! the words, each followed by one `\n` (= the hash of the text rewritten one
//! word per line). Prints exactly one line to stdout:
//!
//! `lines L words W bytes B unique U fnv HHHHHHHHHHHHHHHH`
//!
//! No clocks, randomness, environment or arguments: the output depends on the
//! input file alone.

use std::io::Write;
use std::process::ExitCode;

#[link(wasm_import_module = "bench")]
unsafe extern "C" {
    fn start();
    fn end();
}

const INPUT: &str = "./wc.input.txt";

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

struct Counts {
    lines: u64,
    words: u64,
    bytes: u64,
    unique: u64,
    fnv: u64,
}

/// The set of distinct words: open addressing with linear probing, keyed by
/// each word's own FNV-1a hash, confirmed by comparing the bytes.
struct WordSet<'a> {
    text: &'a [u8],
    /// (hash, start, len); len == u32::MAX marks an empty slot.
    slots: Vec<(u64, u32, u32)>,
    len: usize,
}

const EMPTY: (u64, u32, u32) = (0, 0, u32::MAX);

impl<'a> WordSet<'a> {
    fn new(text: &'a [u8]) -> Self {
        WordSet {
            text,
            slots: vec![EMPTY; 1024],
            len: 0,
        }
    }

    fn insert(&mut self, hash: u64, start: usize, end: usize) {
        let word = &self.text[start..end];
        let mask = self.slots.len() - 1;
        let mut i = (hash ^ (hash >> 32)) as usize & mask;
        loop {
            let (h, s, l) = self.slots[i];
            if l == u32::MAX {
                break;
            }
            if h == hash && &self.text[s as usize..s as usize + l as usize] == word {
                return;
            }
            i = (i + 1) & mask;
        }
        self.slots[i] = (hash, start as u32, word.len() as u32);
        self.len += 1;
        if self.len * 2 > self.slots.len() {
            self.grow();
        }
    }

    fn grow(&mut self) {
        let bigger = vec![EMPTY; self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, bigger);
        let mask = self.slots.len() - 1;
        for slot in old.into_iter().filter(|s| s.2 != u32::MAX) {
            let mut i = (slot.0 ^ (slot.0 >> 32)) as usize & mask;
            while self.slots[i].2 != u32::MAX {
                i = (i + 1) & mask;
            }
            self.slots[i] = slot;
        }
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// The measured kernel.
fn count(text: &[u8]) -> Counts {
    let mut set = WordSet::new(text);
    let mut lines = 0u64;
    let mut words = 0u64;
    let mut fnv = FNV_OFFSET;
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if is_space(b) {
            lines += (b == b'\n') as u64;
            i += 1;
            continue;
        }
        // A word: text[begin..i].
        let begin = i;
        let mut word_hash = FNV_OFFSET;
        while i < text.len() && !is_space(text[i]) {
            word_hash = (word_hash ^ text[i] as u64).wrapping_mul(FNV_PRIME);
            fnv = (fnv ^ text[i] as u64).wrapping_mul(FNV_PRIME);
            i += 1;
        }
        fnv = (fnv ^ b'\n' as u64).wrapping_mul(FNV_PRIME);
        words += 1;
        set.insert(word_hash, begin, i);
    }
    Counts {
        lines,
        words,
        bytes: text.len() as u64,
        unique: set.len as u64,
        fnv,
    }
}

fn main() -> ExitCode {
    let text = match std::fs::read(INPUT) {
        Ok(text) if text.len() < u32::MAX as usize => text,
        Ok(_) => {
            eprintln!("wc: {INPUT}: too large");
            return ExitCode::FAILURE;
        }
        Err(e) => {
            eprintln!("wc: {INPUT}: {e}");
            return ExitCode::FAILURE;
        }
    };
    unsafe { start() };
    let c = std::hint::black_box(count(std::hint::black_box(&text)));
    unsafe { end() };
    let line = format!(
        "lines {} words {} bytes {} unique {} fnv {:016x}\n",
        c.lines, c.words, c.bytes, c.unique, c.fnv
    );
    let mut out = std::io::stdout().lock();
    if out
        .write_all(line.as_bytes())
        .and_then(|()| out.flush())
        .is_err()
    {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
