//! Per-slot stamps from one clock: the order in which slots were last stamped, which is recency
//! when a use stamps (LRU over any way count, the split L2's near-line limit) and age when only
//! an insertion does (FIFO).

/// A stamp per slot of `sets` sets of `ways` ways, and the clock they are taken from.
#[derive(Debug, Clone)]
pub struct Stamps {
    stamps: Vec<u32>,
    clock: u32,
    ways: usize,
}

impl Stamps {
    /// Unstamped slots (stamp 0, older than any stamp taken).
    pub fn new(sets: usize, ways: usize) -> Stamps {
        Stamps {
            stamps: vec![0; sets * ways],
            clock: 0,
            ways,
        }
    }

    /// Gives `slot` the newest stamp.
    #[inline(always)]
    pub fn stamp(&mut self, slot: usize) {
        if self.clock == u32::MAX {
            self.renumber();
        }
        self.clock += 1;
        self.stamps[slot] = self.clock;
    }

    /// The clock would wrap: each set's stamps become their ranks (0 the oldest), the order kept.
    #[cold]
    fn renumber(&mut self) {
        for set in self.stamps.chunks_mut(self.ways) {
            let mut order: Vec<usize> = (0..set.len()).collect();
            order.sort_by_key(|&w| set[w]);
            for (age, w) in order.into_iter().enumerate() {
                set[w] = age as u32;
            }
        }
        self.clock = self.ways as u32;
    }

    /// The slot of the set starting at `start` with the oldest stamp (the first such way).
    #[inline]
    pub fn oldest(&self, start: usize) -> usize {
        let stamps = &self.stamps[start..start + self.ways];
        let mut w = 0;
        for (i, &s) in stamps.iter().enumerate() {
            if s < stamps[w] {
                w = i;
            }
        }
        start + w
    }

    /// The slot with the oldest stamp among the ways of the set starting at `start` whose bits
    /// are set in `ways` (at least one; the first such way on a tie).
    #[inline]
    pub fn oldest_of(&self, start: usize, ways: u32) -> usize {
        debug_assert!(ways != 0);
        let candidates = (0..self.ways).filter(|w| ways >> w & 1 == 1);
        start + candidates.min_by_key(|&w| self.stamps[start + w]).unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_stamp_survives_the_clock_wrapping() {
        let mut s = Stamps::new(2, 3);
        for slot in [3, 4, 5, 0, 1, 2] {
            s.stamp(slot);
        }
        s.clock = u32::MAX - 1;
        s.stamp(3); // stamp u32::MAX: set 1 is now 4, 5, 3 from the oldest
        s.stamp(4); // renumbers every set, then stamps: 5, 3, 4
        assert_eq!(s.clock, 4);
        assert_eq!(s.oldest(3), 5);
        assert_eq!(s.oldest(0), 0, "set 0 keeps its order");
        assert_eq!(s.oldest_of(3, 0b011), 3, "of ways 0 and 1, slot 3 is older");
        s.stamp(5);
        assert_eq!(s.oldest(3), 3);
    }
}
