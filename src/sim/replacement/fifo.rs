//! First in, first out: the line that entered its set first gives way; hits change nothing.

use super::Stamps;

/// FIFO keeps each set to itself.
pub const SETS_ARE_INDEPENDENT: bool = true;

/// The insertion order of every set, as a stamp per way taken at the fill.
#[derive(Debug, Clone)]
pub struct Fifo {
    inserted: Stamps,
}

impl Fifo {
    /// An empty cache of `sets` sets of `ways` ways.
    pub fn new(sets: usize, ways: usize) -> Fifo {
        Fifo {
            inserted: Stamps::new(sets, ways),
        }
    }

    /// A new line is its set's newest.
    #[inline(always)]
    pub fn on_fill(&mut self, slot: usize) {
        self.inserted.stamp(slot);
    }

    /// The first inserted line of the full set starting at `start`.
    #[inline]
    pub fn victim(&self, start: usize) -> usize {
        self.inserted.oldest(start)
    }
}

#[cfg(test)]
mod tests {
    use crate::input::hw::{Replacement, SetIndexing};
    use crate::sim::cache::{Cache, Geometry};

    #[test]
    fn fifo_evicts_the_first_line_in_however_recently_it_was_used() {
        let mut c = Cache::new(Geometry {
            sets: 2,
            ways: 2,
            replacement: Replacement::Fifo,
            indexing: SetIndexing::Modulo,
            pair_bit: None,
            matrix: None,
        });
        c.insert(0);
        c.insert(2);
        assert!(c.access(0).is_some());
        assert_eq!(c.insert(4).1.map(|e| e.line), Some(0));
        // Then 2, the older of 2 and 4, though it was not used after 0.
        assert_eq!(c.insert(6).1.map(|e| e.line), Some(2));
    }
}
