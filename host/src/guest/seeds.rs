//! The seed each `run(count, seed)` call is given.
//!
//! A workload that draws its input from the seed (keys to look up, data to
//! sort) and is given one seed on every call replays one input: the branch
//! predictor and the caches learn it, and at a small count the call reads
//! several times faster than at a large one (a binary search over 2^20 keys:
//! 25 ns per lookup at a count of 1667, 154 ns at 10^5). So by default every
//! call gets a seed of its own, derived from the run's seed and the call's
//! index in its instance ([`SeedRule::PerCall`]), as criterion's
//! `iter_batched` and divan's `with_inputs` give every iteration fresh input.
//! A run is still reproducible: the same run seed gives the same sequence,
//! and every variant of a comparison, and every deterministic pass, sees the
//! same sequence from the start of its sampling. `--same-seed` gives every
//! call the run's seed ([`SeedRule::Same`]).
//!
//! The next seed is derived before the first clock read of a call; nothing of
//! this sits inside the timed region.

pub use crate::options::SeedRule;

/// The seeds of one instance's calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seeds {
    run: u64,
    rule: SeedRule,
    /// Calls so far, since the instance was made or [`Seeds::restart`].
    calls: u64,
}

impl Seeds {
    /// The seeds of a run whose seed is `run`, under `rule`.
    pub fn new(run: u64, rule: SeedRule) -> Self {
        Seeds {
            run,
            rule,
            calls: 0,
        }
    }

    /// One seed for every call: for guests that ignore it (the built-in
    /// empty guests).
    pub fn same(run: u64) -> Self {
        Self::new(run, SeedRule::Same)
    }

    /// The run's seed.
    pub fn run(&self) -> u64 {
        self.run
    }

    /// The seed of the next call.
    pub fn take(&mut self) -> u64 {
        let index = self.calls;
        self.calls = self.calls.wrapping_add(1);
        match self.rule {
            SeedRule::PerCall => of_call(self.run, index),
            SeedRule::Same => self.run,
        }
    }

    /// Start the sequence again from its first seed: sampling starts here, so
    /// that every variant of a comparison takes its samples with the same
    /// seeds, whatever its warm-up took.
    pub fn restart(&mut self) {
        self.calls = 0;
    }
}

/// The seed of call `index` of a run seeded `run`: SplitMix64 of the pair,
/// kept to 63 bits so that a guest reading it as a signed i64 sees it
/// non-negative (as the run seed drawn at random is).
pub fn of_call(run: u64, index: u64) -> u64 {
    splitmix64(run ^ splitmix64(index)) >> 1
}

/// Sebastiano Vigna's SplitMix64 finaliser: every output bit depends on
/// every input bit, and distinct inputs give distinct outputs.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn every_call_gets_its_own_seed_and_a_run_repeats() {
        let mut seeds = Seeds::new(42, SeedRule::PerCall);
        let first: Vec<u64> = (0..10_000).map(|_| seeds.take()).collect();
        assert_eq!(first.iter().collect::<HashSet<_>>().len(), first.len());
        assert!(first.iter().all(|&s| s <= i64::MAX as u64));
        let mut again = Seeds::new(42, SeedRule::PerCall);
        assert!(first.iter().all(|&s| s == again.take()));
        let mut other = Seeds::new(43, SeedRule::PerCall);
        assert_ne!(first[0], other.take());
    }

    #[test]
    fn restart_gives_the_same_sequence_whatever_came_before() {
        let mut a = Seeds::new(7, SeedRule::PerCall);
        let mut b = Seeds::new(7, SeedRule::PerCall);
        for _ in 0..37 {
            a.take();
        }
        a.restart();
        b.restart();
        assert!((0..100).all(|_| a.take() == b.take()));
    }

    #[test]
    fn the_same_seed_rule_repeats_the_run_seed() {
        let mut seeds = Seeds::new(5, SeedRule::Same);
        assert!((0..100).all(|_| seeds.take() == 5));
    }
}
