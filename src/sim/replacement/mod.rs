//! Cache replacement policies, one module each with its state and its hooks together: what a
//! hit does ([`ReplacementState::on_hit`]), what a fill does ([`ReplacementState::on_fill`]) and
//! which way of a full set gives way ([`ReplacementState::victim`]). A [`SetAssoc`] holds one
//! [`ReplacementState`] and calls these through a `match`, so the hot path has no virtual calls.
//!
//! The cache decides everything else: it fills empty ways first (a victim is asked for only in a
//! full set), and it owns the pseudo-random generator that random replacement draws from (its
//! capacity limit draws from it too, [`crate::sim::cache::Cache::with_capacity_lines`]).
//!
//! **Adding a policy** touches three places: its module here (state, hooks, tests), its arms in
//! [`ReplacementState`] below, and its name in `crate::input::hw::Replacement` (the config enum,
//! which serde parses by its lowercase name) with the geometry it needs in
//! [`Replacement::check_ways`](crate::input::hw::Replacement::check_ways).
//!
//! [`SetAssoc`]: crate::sim::cache::SetAssoc

pub mod fifo;
pub mod lru;
pub mod plru;
pub mod random;
pub mod srrip;
mod stamps;

pub use random::Xorshift;
pub use stamps::Stamps;

use crate::input::hw::Replacement;

/// The replacement state of one cache (or shard of one): `sets` sets of `ways` ways, slot
/// `set * ways + way`, laid out as the cache's tags.
#[derive(Debug, Clone)]
pub enum ReplacementState {
    /// [`Replacement::Lru`].
    Lru(lru::Lru),
    /// [`Replacement::Fifo`].
    Fifo(fifo::Fifo),
    /// [`Replacement::Random`].
    Random(random::Random),
    /// [`Replacement::Plru`].
    Plru(plru::Plru),
    /// [`Replacement::Srrip`].
    Srrip(srrip::Srrip),
}

impl ReplacementState {
    /// The state of an empty cache of `sets` sets of `ways` ways under `policy` (a geometry
    /// [`Replacement::check_ways`] accepts).
    pub fn new(policy: Replacement, sets: usize, ways: usize) -> ReplacementState {
        match policy {
            Replacement::Lru => ReplacementState::Lru(lru::Lru::new(sets, ways)),
            Replacement::Fifo => ReplacementState::Fifo(fifo::Fifo::new(sets, ways)),
            Replacement::Random => ReplacementState::Random(random::Random::new(ways)),
            Replacement::Plru => ReplacementState::Plru(plru::Plru::new(sets, ways)),
            Replacement::Srrip => ReplacementState::Srrip(srrip::Srrip::new(sets, ways)),
        }
    }

    /// Whether the sets of a cache under `policy` are independent, so that shards of whole sets
    /// can replay in parallel and still give the serial replay's result (random replacement
    /// draws every set's victims from one generator, which couples them).
    pub fn sets_are_independent(policy: Replacement) -> bool {
        match policy {
            Replacement::Lru => lru::SETS_ARE_INDEPENDENT,
            Replacement::Fifo => fifo::SETS_ARE_INDEPENDENT,
            Replacement::Random => random::SETS_ARE_INDEPENDENT,
            Replacement::Plru => plru::SETS_ARE_INDEPENDENT,
            Replacement::Srrip => srrip::SETS_ARE_INDEPENDENT,
        }
    }

    /// The line in `slot` was used (a hit).
    #[inline(always)]
    pub fn on_hit(&mut self, slot: usize) {
        match self {
            ReplacementState::Lru(p) => p.on_hit(slot),
            ReplacementState::Fifo(_) | ReplacementState::Random(_) => {}
            ReplacementState::Plru(p) => p.on_hit(slot),
            ReplacementState::Srrip(p) => p.on_hit(slot),
        }
    }

    /// A new line was put in `slot`.
    #[inline(always)]
    pub fn on_fill(&mut self, slot: usize) {
        match self {
            ReplacementState::Lru(p) => p.on_fill(slot),
            ReplacementState::Fifo(p) => p.on_fill(slot),
            ReplacementState::Random(_) => {}
            ReplacementState::Plru(p) => p.on_fill(slot),
            ReplacementState::Srrip(p) => p.on_fill(slot),
        }
    }

    /// The slot that gives way in the full set starting at slot `start`; `rng` is the cache's
    /// generator (only random replacement draws from it).
    #[inline]
    pub fn victim(&mut self, start: usize, rng: &mut Xorshift) -> usize {
        match self {
            ReplacementState::Lru(p) => p.victim(start),
            ReplacementState::Fifo(p) => p.victim(start),
            ReplacementState::Random(p) => p.victim(start, rng),
            ReplacementState::Plru(p) => p.victim(start),
            ReplacementState::Srrip(p) => p.victim(start),
        }
    }

    /// The least recently used of the ways in `ways` (a bit per way, at least one) of the set
    /// starting at slot `start`, under LRU; under the other policies, which keep no recency of
    /// every way, the lowest of them.
    #[inline]
    pub fn least_recent_of(&self, start: usize, ways: u32) -> usize {
        debug_assert_ne!(ways, 0);
        match self {
            ReplacementState::Lru(p) => p.least_recent_of(start, ways),
            _ => start + ways.trailing_zeros() as usize,
        }
    }

    /// Where a capacity eviction that drew the held `slot` empties a slot: the least recently
    /// used line of `slot`'s set that `evictable` allows under LRU kept as an order word, `slot`
    /// itself under any other state; `None` when that is not evictable (the caller draws again).
    #[inline]
    pub fn capacity_victim(&self, slot: usize, evictable: impl Fn(usize) -> bool) -> Option<usize> {
        match self {
            ReplacementState::Lru(p) => p.capacity_victim(slot, evictable),
            _ => evictable(slot).then_some(slot),
        }
    }
}
