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
//! same sequence from the start of its sampling; in a comparison of
//! programs, each worker takes the sequence up after the rounds of the
//! workers before it, so that every round runs on an input of its own.
//! `--same-seed` gives every call the run's seed ([`SeedRule::Same`]).
//!
//! The next seed is derived before the first clock read of a call; nothing of
//! this sits inside the timed region.
//!
//! A WASI program draws its input from `random_get` instead (libsodium's
//! message lengths and keys, a Rust `HashMap`'s keys, a quicksort's data):
//! each iteration's random numbers come from [`GuestRandom`], seeded as a
//! call is, so that every variant of a comparison's round runs on the same
//! input under every runtime (wasmtime, wasmi and wasmer through
//! wasmtime-wasi, V8 through the same generator in its node harness). Drawn
//! from the system, one round's inputs differed: a libsodium benchmark whose
//! iterations took 0.3 to 112 ms read its two engines as 1.24x [0.018, 642].
//!
//! A program's time of day is an input too: libsodium's generator takes its
//! nonce from `gettimeofday`, so that `secretbox_easy2`'s message lengths,
//! and its work, followed the clock (cranelift against winch: 2.31x
//! [1.03, 3.98] in one run, 0.74x [0.01, 16.6] in the next). So each
//! iteration's wall clock is a [`GuestWallClock`]: it starts at a fixed
//! instant and steps [`CLOCK_STEP_NS`] at every read, whatever the time
//! taken between reads, under every runtime (wasmtime-wasi's wall clock, and
//! V8's harness computing the same readings). The monotonic clock, what a
//! program times itself and sleeps by, stays the system's: one that stepped
//! would make a program that sleeps until its clock passes a deadline wake,
//! read 1 µs gone, and sleep again. `--real-clock` grants the system's wall
//! clock too.

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

    /// The first seed of the sequence, whatever was taken before.
    pub fn first(mut self) -> u64 {
        self.restart();
        self.take()
    }

    /// The sequence from its seed `index` on: where a comparison's worker
    /// takes up the sequence after the rounds of the workers before it.
    pub fn from_index(mut self, index: u64) -> Self {
        self.calls = index;
        self
    }

    /// Start the sequence again from its first seed: sampling starts here, so
    /// that every variant of a comparison takes its samples with the same
    /// seeds, whatever its warm-up took.
    pub fn restart(&mut self) {
        self.calls = 0;
    }
}

/// The random numbers of one program iteration seeded `seed`: xoshiro128**
/// (Blackman and Vigna), its state the two SplitMix64 outputs that follow
/// `seed`. wasmtime-wasi answers `random_get` a byte per [`Rng::next_u32`]
/// (its low byte); V8's harness (`v8.js`) computes the same bytes.
///
/// [`Rng::next_u32`]: rand::Rng::next_u32
#[derive(Debug, Clone)]
pub struct GuestRandom {
    state: [u32; 4],
}

impl GuestRandom {
    /// The generator of an iteration seeded `seed`.
    pub fn new(seed: u64) -> Self {
        let (a, b) = (splitmix64(seed), splitmix64(seed.wrapping_add(GOLDEN)));
        GuestRandom {
            state: [a as u32, (a >> 32) as u32, b as u32, (b >> 32) as u32],
        }
    }

    fn next(&mut self) -> u32 {
        let s = &mut self.state;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 9;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(11);
        result
    }
}

impl rand::TryRng for GuestRandom {
    type Error = std::convert::Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Ok(self.next())
    }

    /// Two draws, the first the low half.
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        let low = u64::from(self.next());
        Ok(low | (u64::from(self.next()) << 32))
    }

    /// A draw per four bytes, little-endian.
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        for chunk in dst.chunks_mut(4) {
            let bytes = self.next().to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
        Ok(())
    }
}

/// Nanoseconds a program's wall clock moves at each read of it: a
/// microsecond, so that a program that waits for the time of day to pass an
/// instant reads it a million times for each second it waits, and returns.
pub const CLOCK_STEP_NS: u64 = 1_000;

/// The time of day a program's wall clock reads first, in seconds since the
/// Unix epoch: 2020-01-01T00:00:00Z.
pub const CLOCK_EPOCH_S: u64 = 1_577_836_800;

/// An iteration's wall clock: its first read gives [`CLOCK_EPOCH_S`], and
/// each read after it [`CLOCK_STEP_NS`] more; its resolution is the step.
#[derive(Debug, Default)]
pub struct GuestWallClock {
    reads: std::cell::Cell<u64>,
}

impl GuestWallClock {
    /// The next reading, in nanoseconds since the Unix epoch.
    pub fn read(&self) -> u64 {
        let reads = self.reads.get();
        self.reads.set(reads.wrapping_add(1));
        (CLOCK_EPOCH_S * 1_000_000_000).wrapping_add(reads.wrapping_mul(CLOCK_STEP_NS))
    }
}

impl wasmtime_wasi::HostWallClock for GuestWallClock {
    fn resolution(&self) -> std::time::Duration {
        std::time::Duration::from_nanos(CLOCK_STEP_NS)
    }

    fn now(&self) -> std::time::Duration {
        std::time::Duration::from_nanos(self.read())
    }
}

/// SplitMix64's increment, the golden ratio in 64 bits.
const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// The seed of call `index` of a run seeded `run`: SplitMix64 of the pair,
/// kept to 63 bits so that a guest reading it as a signed i64 sees it
/// non-negative (as the run seed drawn at random is).
pub fn of_call(run: u64, index: u64) -> u64 {
    splitmix64(run ^ splitmix64(index)) >> 1
}

/// Sebastiano Vigna's SplitMix64 finaliser: every output bit depends on
/// every input bit, and distinct inputs give distinct outputs.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(GOLDEN);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    /// The first eight bytes `random_get` gives a program seeded 7.
    const PINNED: [u8; 8] = [65, 164, 74, 60, 198, 103, 38, 166];

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

    /// The bytes a program reads from `random_get` for a seed: pinned, since
    /// V8's harness computes them too (the conformance suite holds every
    /// runtime to the same output); another seed gives others.
    #[test]
    fn a_seed_gives_a_program_the_same_random_numbers() {
        use rand::Rng;
        let bytes = |seed| {
            let mut random = GuestRandom::new(seed);
            (0..8).map(|_| random.next_u32() as u8).collect::<Vec<u8>>()
        };
        assert_eq!(bytes(7), bytes(7));
        assert_ne!(bytes(7), bytes(8));
        assert_eq!(bytes(7), PINNED);
        let mut random = GuestRandom::new(7);
        let mut filled = [0u8; 6];
        random.fill_bytes(&mut filled);
        let mut again = GuestRandom::new(7);
        let words = [again.next_u32(), again.next_u32()];
        assert_eq!(filled[..4], words[0].to_le_bytes());
        assert_eq!(filled[4..], words[1].to_le_bytes()[..2]);
    }

    /// The wall clock starts at its fixed instant and steps a microsecond a
    /// read, whatever the time between reads (pinned: V8's harness computes
    /// the same readings).
    #[test]
    fn a_programs_wall_clock_steps_at_each_read_from_a_fixed_instant() {
        use wasmtime_wasi::HostWallClock;
        let wall = GuestWallClock::default();
        assert_eq!(wall.now().as_secs(), 1_577_836_800);
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert_eq!(wall.now().as_nanos(), 1_577_836_800_000_001_000);
        assert_eq!(wall.read(), 1_577_836_800_000_002_000);
        assert_eq!(wall.resolution().as_nanos(), 1_000);
    }

    #[test]
    fn a_sequence_taken_up_at_an_index_goes_on_from_there() {
        let mut all = Seeds::new(9, SeedRule::PerCall);
        let first: Vec<u64> = (0..12).map(|_| all.take()).collect();
        let mut later = Seeds::new(9, SeedRule::PerCall).from_index(6);
        assert!((6..12).all(|i| later.take() == first[i]));
        let mut same = Seeds::new(9, SeedRule::Same).from_index(6);
        assert_eq!(same.take(), 9);
    }

    #[test]
    fn the_same_seed_rule_repeats_the_run_seed() {
        let mut seeds = Seeds::new(5, SeedRule::Same);
        assert!((0..100).all(|_| seeds.take() == 5));
    }
}
