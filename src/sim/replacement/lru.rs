//! Least recently used: a hit or a fill makes the line its set's most recent, and the least
//! recent line gives way. Sets of 2 to 16 ways (a power of two) keep their order in one word
//! (the L2's sets are megabytes: a stamp per way would take a cache line per set); other way
//! counts keep a stamp per way.

use super::Stamps;

/// LRU keeps each set to itself.
pub const SETS_ARE_INDEPENDENT: bool = true;

/// The recency order of every set.
#[derive(Debug, Clone)]
pub enum Lru {
    /// One word per set: way numbers in nibbles from the least recently used up.
    Order(OrderWords),
    /// A stamp per way, the newest the most recent.
    Stamps(Stamps),
}

/// Per set, its ways from the least recently used up, one per nibble; unused nibbles 0xF.
#[derive(Debug, Clone)]
pub struct OrderWords {
    words: Vec<u64>,
    ways: usize,
    /// log2 of the ways, to split a slot without dividing.
    ways_shift: u32,
}

/// Whether sets of `ways` ways keep their order in one word.
pub fn by_order_word(ways: usize) -> bool {
    ways.is_power_of_two() && (2..=16).contains(&ways)
}

impl Lru {
    /// An empty cache of `sets` sets of `ways` ways.
    pub fn new(sets: usize, ways: usize) -> Lru {
        if by_order_word(ways) {
            Lru::Order(OrderWords {
                words: vec![initial_order(ways); sets],
                ways,
                ways_shift: ways.trailing_zeros(),
            })
        } else {
            Lru::Stamps(Stamps::new(sets, ways))
        }
    }

    /// A hit makes the line its set's most recent.
    #[inline(always)]
    pub fn on_hit(&mut self, slot: usize) {
        self.make_most_recent(slot);
    }

    /// A new line is its set's most recent.
    #[inline(always)]
    pub fn on_fill(&mut self, slot: usize) {
        self.make_most_recent(slot);
    }

    #[inline(always)]
    fn make_most_recent(&mut self, slot: usize) {
        match self {
            Lru::Order(o) => {
                let (set, way) = (slot >> o.ways_shift, slot & (o.ways - 1));
                o.words[set] = promoted(o.words[set], way, o.ways);
            }
            Lru::Stamps(s) => s.stamp(slot),
        }
    }

    /// The least recently used slot of the full set starting at `start`.
    #[inline]
    pub fn victim(&self, start: usize) -> usize {
        match self {
            Lru::Order(o) => start + (o.words[start >> o.ways_shift] & 0xF) as usize,
            Lru::Stamps(s) => s.oldest(start),
        }
    }

    /// The least recently used of the ways in `ways` (a bit per way) of the set starting at
    /// slot `start`.
    #[inline]
    pub fn least_recent_of(&self, start: usize, ways: u32) -> usize {
        match self {
            Lru::Order(o) => {
                let order = o.words[start >> o.ways_shift];
                (0..o.ways)
                    .map(|k| (order >> (4 * k) & 0xF) as usize)
                    .find(|&w| ways >> w & 1 == 1)
                    .map_or(start, |w| start + w)
            }
            Lru::Stamps(s) => s.oldest_of(start, ways),
        }
    }

    /// See [`ReplacementState::capacity_victim`](super::ReplacementState::capacity_victim): the
    /// least recently used evictable slot of `slot`'s set when the order is a word; `slot`
    /// itself under stamps.
    #[inline]
    pub fn capacity_victim(&self, slot: usize, evictable: impl Fn(usize) -> bool) -> Option<usize> {
        match self {
            Lru::Order(o) => {
                let set = slot >> o.ways_shift;
                let order = o.words[set];
                (0..o.ways)
                    .map(|k| (set << o.ways_shift) + (order >> (4 * k) & 0xF) as usize)
                    .find(|&s| evictable(s))
            }
            Lru::Stamps(_) => evictable(slot).then_some(slot),
        }
    }
}

/// The order of an empty set: ways 0 (least recent) to `ways - 1`, unused nibbles 0xF.
fn initial_order(ways: usize) -> u64 {
    (0..16).fold(0u64, |o, k| {
        o | ((if k < ways { k } else { 0xF }) as u64) << (4 * k)
    })
}

/// `order` with `way` moved to the most recent of `ways` places.
#[inline]
fn promoted(order: u64, way: usize, ways: usize) -> u64 {
    const ONES: u64 = 0x1111_1111_1111_1111;
    let top = 4 * (ways as u32 - 1);
    if (order >> top) & 0xF == way as u64 {
        return order;
    }
    // The first nibble equal to `way` (a zero nibble of the difference: the lowest flag is
    // exact; flags above a zero may be false, and are not read).
    let x = order ^ (way as u64 * ONES);
    let zero = x.wrapping_sub(ONES) & !x & (ONES << 3);
    let rank = zero.trailing_zeros() / 4;
    debug_assert!(4 * rank < top, "way {way} not in the order {order:#x}");
    let below = order & ((1u64 << (4 * rank)) - 1);
    let above = (order >> (4 * (rank + 1))) << (4 * rank);
    let used = if ways == 16 {
        u64::MAX
    } else {
        (1u64 << (4 * ways)) - 1
    };
    ((below | above) & used & !(0xF << top)) | (way as u64) << top | !used
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::hw::{Replacement, SetIndexing};
    use crate::sim::cache::{Cache, Evicted, Geometry, LineState};

    /// An LRU cache of `sets` sets of `ways` ways, set = line % sets.
    fn lru(sets: usize, ways: usize) -> Cache {
        Cache::new(Geometry {
            sets,
            ways,
            replacement: Replacement::Lru,
            indexing: SetIndexing::Modulo,
            pair_bit: None,
            matrix: None,
        })
    }

    #[test]
    fn lru_keeps_the_recently_used_line_and_evicts_the_other() {
        let mut c = lru(2, 2);
        // Lines 0, 2, 4 map to set 0 of a 2-set, 2-way cache.
        c.insert(0).0.valid = 0b1111;
        c.insert(2).0.valid = 0b0001;
        assert!(c.access(0).is_some()); // 0 is now more recent than 2
        let (_, ev) = c.insert(4);
        assert_eq!(
            ev,
            Some(Evicted {
                line: 2,
                state: LineState {
                    valid: 0b0001,
                    ..LineState::default()
                }
            })
        );
        assert!(c.peek(0).is_some() && c.peek(4).is_some() && c.peek(2).is_none());
        // Set 1 is untouched by all of this.
        c.insert(1);
        assert!(c.peek(0).is_some());
        // Now 0 is least recent in set 0.
        assert!(c.access(4).is_some());
        assert_eq!(c.insert(6).1.map(|e| e.line), Some(0));
    }

    #[test]
    fn lru_evicts_what_a_list_of_recency_evicts_as_an_order_word_and_as_stamps() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        // 2-16 ways keep an order word; 3 and 12 keep stamps.
        for ways in [2usize, 3, 4, 8, 12, 16] {
            let sets = 3;
            assert_eq!(by_order_word(ways), ways != 3 && ways != 12, "{ways} ways");
            let mut cache = lru(sets, ways);
            // Per set, lines from least to most recently used.
            let mut lists: Vec<Vec<u64>> = vec![Vec::new(); sets];
            for _ in 0..20_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let line = x % (sets * (ways + ways / 2 + 1)) as u64;
                let list = &mut lists[line as usize % sets];
                let (_, hit, evicted) = cache.access_or_insert(line);
                let was = list.iter().position(|&l| l == line);
                assert_eq!(hit, was.is_some(), "{ways} ways, line {line}");
                if let Some(i) = was {
                    list.remove(i);
                } else if list.len() == ways {
                    let lru = list.remove(0);
                    assert_eq!(evicted.map(|e| e.line), Some(lru), "{ways} ways");
                } else {
                    assert!(evicted.is_none());
                }
                list.push(line);
            }
        }
    }

    #[test]
    fn promoting_the_most_recent_way_changes_nothing_and_others_move_to_the_top() {
        let o = initial_order(4);
        assert_eq!(o, 0xFFFF_FFFF_FFFF_3210);
        assert_eq!(promoted(o, 3, 4), o);
        assert_eq!(promoted(o, 0, 4), 0xFFFF_FFFF_FFFF_0321);
        assert_eq!(promoted(o, 1, 4), 0xFFFF_FFFF_FFFF_1320);
        let full = initial_order(16);
        assert_eq!(full, 0xFEDC_BA98_7654_3210);
        assert_eq!(promoted(full, 0, 16), 0x0FED_CBA9_8765_4321);
        assert_eq!(promoted(full, 14, 16), 0xEFDC_BA98_7654_3210);
    }
}
