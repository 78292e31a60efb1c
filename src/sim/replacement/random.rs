//! Random replacement: a pseudo-random way of the full set, from the cache's fixed-seed
//! generator, so runs repeat. That one generator serves every set (and the cache's capacity
//! limit), which couples the sets: a cache under random replacement is replayed in one piece.

/// The sets share the generator: a draw for one set moves every later draw.
pub const SETS_ARE_INDEPENDENT: bool = false;

/// Random replacement keeps no state of its own but the set width.
#[derive(Debug, Clone)]
pub struct Random {
    ways: usize,
}

impl Random {
    /// Sets of `ways` ways.
    pub fn new(ways: usize) -> Random {
        Random { ways }
    }

    /// A way of the set starting at `start` drawn from `rng`.
    #[inline]
    pub fn victim(&self, start: usize, rng: &mut Xorshift) -> usize {
        start + rng.below(self.ways)
    }
}

/// The cache's pseudo-random generator (xorshift64), seeded the same for every cache.
#[derive(Debug, Clone)]
pub struct Xorshift(u64);

impl Default for Xorshift {
    fn default() -> Xorshift {
        Xorshift(0x9E37_79B9_7F4A_7C15)
    }
}

impl Xorshift {
    /// A pseudo-random number below `n` (the next state's high half scaled to `n`).
    #[inline]
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 32) as usize * n) >> 32
    }
}

#[cfg(test)]
mod tests {
    use crate::input::hw::{Replacement, SetIndexing};
    use crate::sim::cache::{Cache, Geometry};
    use crate::sim::replacement::ReplacementState;

    /// A random-replacement cache of 2 sets of 2 ways (set = line % 2).
    fn two_way() -> Cache {
        Cache::new(Geometry {
            sets: 2,
            ways: 2,
            replacement: Replacement::Random,
            indexing: SetIndexing::Modulo,
            pair_bit: None,
            matrix: None,
        })
    }

    #[test]
    fn random_replacement_spreads_evictions_and_repeats_itself() {
        let evictions = || {
            let mut c = two_way();
            // Even lines all map to set 0; each insert beyond two evicts one of the set's ways.
            (0..200u64)
                .filter_map(|i| c.insert(2 * i).1.map(|e| e.line))
                .collect::<Vec<_>>()
        };
        let first = evictions();
        assert_eq!(first.len(), 198);
        assert_eq!(first, evictions());
        // Random, not FIFO or LRU (which always evict the older of the two): eviction i comes
        // with the insert of line 2(i+2), when the newest line present is 2(i+1).
        let young = first
            .iter()
            .enumerate()
            .filter(|&(i, &line)| line == 2 * (i as u64 + 1))
            .count();
        assert!(
            young > 40 && young < 160,
            "{young} of 198 evictions took the newest line"
        );
    }

    #[test]
    fn random_replacement_couples_the_sets_through_its_one_generator() {
        // The same inserts into set 0, with and without evictions in set 1 between them.
        let victims = |with_set_1: bool| {
            let mut c = two_way();
            c.insert(1);
            c.insert(3);
            let mut victims = Vec::new();
            for i in 0..64u64 {
                victims.push(c.insert(2 * i).1.map(|e| e.line));
                if with_set_1 {
                    c.insert(5 + 2 * i);
                }
            }
            victims
        };
        assert_ne!(victims(false), victims(true));
        // So the L2 under random replacement replays in one piece.
        assert!(!ReplacementState::sets_are_independent(Replacement::Random));
    }
}
