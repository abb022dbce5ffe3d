//! `--shard K/N`: which share of a run's workload files this run measures,
//! so that N runs (on N machines, or N jobs of a CI matrix) measure every
//! file exactly once and `host report` merges their exports.
//!
//! The share is stable: file number i of the run's list (in the order the
//! paths are given and folders are read, which is sorted) belongs to shard
//! `i mod N + 1`. The same paths give the same shares on every machine; a
//! file's rows (its benchmarks, sizes and engines) stay together.

use std::fmt;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Shard `index` of `count` (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Parse `K/N`, 1 ≤ K ≤ N.
    pub fn parse(text: &str) -> Result<Self> {
        let (index, count) = text
            .split_once('/')
            .with_context(|| format!("--shard {text}: expected K/N, e.g. 2/3"))?;
        let number = |part: &str| {
            part.trim()
                .parse::<usize>()
                .with_context(|| format!("--shard {text}: `{part}` is not a whole number"))
        };
        let (index, count) = (number(index)?, number(count)?);
        if count == 0 || index == 0 || index > count {
            bail!("--shard {text}: K must be between 1 and N");
        }
        Ok(Shard { index, count })
    }

    /// The files of this shard, in their order.
    pub fn select(&self, files: Vec<PathBuf>) -> Vec<PathBuf> {
        files
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % self.count + 1 == self.index)
            .map(|(_, file)| file)
            .collect()
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_cover_every_file_once() -> Result<()> {
        let files: Vec<PathBuf> = (0..10).map(|i| PathBuf::from(format!("f{i}"))).collect();
        let mut seen = Vec::new();
        for k in 1..=3 {
            let shard = Shard::parse(&format!("{k}/3"))?;
            seen.extend(shard.select(files.clone()));
        }
        seen.sort();
        let mut all = files;
        all.sort();
        assert_eq!(seen, all);
        assert_eq!(Shard::parse("2/3")?.select(all).len(), 3);
        Ok(())
    }

    #[test]
    fn malformed_shards_are_refused() {
        for bad in ["0/3", "4/3", "1/0", "3", "a/b", "1/3/4", ""] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }
}
