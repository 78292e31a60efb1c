//! A sectored, set-associative cache of 128-byte lines made of four 32-byte sectors.
//!
//! Both the per-SM L1 and each L2 partition are one of these. The cache only keeps per-line state
//! (tag, valid / dirty sector masks) and its replacement policy's state, whose hooks live in
//! [`crate::sim::replacement`]; what a hit or miss costs is decided by the level that owns it. An
//! "infinite" variant (a hash map) gives the compulsory behaviour.

use crate::input::hw::{Replacement, SetIndexing};
use crate::sim::replacement::{ReplacementState, Stamps, Xorshift};
use hashbrown::HashMap;

use crate::metrics::{LINE_SHIFT, MAX_LINE};

/// The state of one line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LineState {
    /// Sectors holding valid data.
    pub valid: u8,
    /// Sectors written since they came from DRAM.
    pub dirty: u8,
    /// In a home partition of a split L2: a store of the other side has passed through since the
    /// home side last stored here, so the other partition may hold a copy that the home side's
    /// next store must invalidate across the fabric.
    pub stored_from_far: bool,
    /// In a home partition of a split L2 that logs races: a far miss brought sectors in since
    /// the home side last read the line (`crate::sim::l2`).
    pub far_fill_unread: bool,
    /// In a home partition of a split L2 that logs races: a miss of the home side brought
    /// sectors in since the other side last fetched the line (`crate::sim::l2`).
    pub home_fill_unfetched: bool,
    /// In an L1: the tick (its low 16 bits, little-endian) of the SM's last load that missed
    /// sectors of the line, whose fill may still be on its way
    /// (`crate::sim::data_stage::hit_in_flight`). Bytes, not a `u16`, so that the state keeps an
    /// alignment of 1 and stays 8 bytes: every cache's state array is walked on each lookup.
    pub missed_at: [u8; 2],
    /// In an L1: a load found the line's last fill arrived (more than the in-flight window
    /// after `missed_at`), so later hits need not look at `missed_at`, whose 16 bits wrap.
    pub filled: bool,
}

// Every lookup walks a set's states: keep them 8 bytes (the L2's arrays are megabytes).
const _: () = assert!(std::mem::size_of::<LineState>() == 8);

/// A line pushed out of the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evicted {
    /// Line address (byte address >> 7).
    pub line: u64,
    /// Its state when it left.
    pub state: LineState,
}

/// Geometry and policy of one cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// Number of sets (any positive number).
    pub sets: usize,
    /// Lines per set.
    pub ways: usize,
    /// Replacement policy.
    pub replacement: Replacement,
    /// Set indexing.
    pub indexing: SetIndexing,
    /// For [`SetIndexing::Balanced`] in a split L2: the line-address bit that tells a line from its
    /// partner in the other partition; it is left out of the set index, so partners share a set.
    pub pair_bit: Option<u32>,
    /// For [`SetIndexing::XorMatrix`]: the index function (`sets` is `2^` its bits).
    pub matrix: Option<XorIndex>,
}

/// [`SetIndexing::XorMatrix`]'s function: set-index bit `i` is the parity of `line & masks[i]`,
/// and the line-address bits from `hashed_from` up add a pseudo-random value to the whole index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XorIndex {
    masks: [u64; 16],
    bits: u32,
    hashed_from: u32,
}

impl XorIndex {
    /// The function of `masks` (1 to 16 of them, checked by the configuration) with the bits
    /// from `hashed_from` up hashed (`None`: no bit is).
    pub fn new(masks: &[u64], hashed_from: Option<u32>) -> XorIndex {
        assert!((1..=16).contains(&masks.len()), "1 to 16 set-index masks");
        let mut m = [0u64; 16];
        m[..masks.len()].copy_from_slice(masks);
        XorIndex {
            masks: m,
            bits: masks.len() as u32,
            hashed_from: hashed_from.unwrap_or(64),
        }
    }

    /// The number of sets it indexes.
    pub fn sets(&self) -> usize {
        1 << self.bits
    }

    /// The set of `line`.
    #[inline(always)]
    pub fn set(&self, line: u64) -> usize {
        let mut set = 0u64;
        for (i, m) in self.masks[..self.bits as usize].iter().enumerate() {
            set |= ((line & m).count_ones() as u64 & 1) << i;
        }
        if self.hashed_from < 64 {
            // splitmix64's finaliser: every hashed bit moves every index bit.
            let mut h = (line >> self.hashed_from).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            h ^= h >> 27;
            set ^= h >> (64 - self.bits);
        }
        set as usize
    }
}

impl Geometry {
    /// Geometry of a cache of `bytes` with `ways` ways of 128-byte lines.
    pub fn new(bytes: u64, ways: u32, replacement: Replacement, indexing: SetIndexing) -> Geometry {
        let ways = ways as usize;
        Geometry {
            sets: (bytes as usize >> LINE_SHIFT) / ways,
            ways,
            replacement,
            indexing,
            pair_bit: None,
            matrix: None,
        }
    }

    /// Geometry of a cache indexed by `matrix`, with `ways` ways.
    pub fn xor_matrix(matrix: XorIndex, ways: u32, replacement: Replacement) -> Geometry {
        Geometry {
            sets: matrix.sets(),
            ways: ways as usize,
            replacement,
            indexing: SetIndexing::XorMatrix,
            pair_bit: None,
            matrix: Some(matrix),
        }
    }

    /// This geometry with [`Geometry::pair_bit`] set.
    pub fn with_pair_bit(self, pair_bit: Option<u32>) -> Geometry {
        Geometry { pair_bit, ..self }
    }
}

/// A sectored cache: set-associative, or unbounded.
// The set-associative variant is the one every lookup uses: boxing it to even the variants' sizes
// would add a pointer chase to each of them.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Cache {
    /// Finite, set-associative.
    SetAssoc(SetAssoc),
    /// Never evicts: compulsory misses only.
    Infinite(HashMap<u64, LineState, ahash::RandomState>),
}

/// The step of [`SetIndexing::XorFold`]: on the shipped 16 × 124 tree-PLRU L1, 7 bits gives the
/// smallest error at the knee of the measured H100/H200 pointer chase (6 bits leaves fewer misses
/// below capacity; docs/model.md "L1 geometry").
pub const XOR_FOLD_BITS: u32 = 7;

/// The line address folded onto itself in steps of [`XOR_FOLD_BITS`] (before the modulo of
/// [`SetIndexing::XorFold`]).
#[inline]
fn xor_fold(line: u64) -> u64 {
    let mut folded = line;
    let mut rest = line >> XOR_FOLD_BITS;
    while rest != 0 {
        folded ^= rest;
        rest >>= XOR_FOLD_BITS;
    }
    folded
}

/// `x % d` by one multiplication for `x < 2^32` (Lemire, Kaser & Kurz, "Faster remainder by
/// direct computation", 2019: exact for every 32-bit `x` and `d`), a division otherwise. Set
/// indices of non-power-of-two set counts (the L1's 124 sets) are on the hottest path.
#[derive(Debug, Clone, Copy)]
struct FastRem {
    d: u64,
    magic: u64,
}

impl FastRem {
    fn new(d: u64) -> FastRem {
        assert!(d > 0 && d <= u32::MAX as u64, "divisor out of range");
        FastRem {
            d,
            magic: (u64::MAX / d).wrapping_add(1),
        }
    }

    #[inline]
    fn rem(self, x: u64) -> u64 {
        if x >> 32 == 0 {
            let low = self.magic.wrapping_mul(x);
            ((low as u128 * self.d as u128) >> 64) as u64
        } else {
            x % self.d
        }
    }

    /// `x / d`, by one multiplication for `x < 2^32` (the same paper's `fastdiv`).
    #[inline]
    fn div(self, x: u64) -> u64 {
        if x >> 32 == 0 && self.d > 1 {
            ((self.magic as u128 * x as u128) >> 64) as u64
        } else {
            x / self.d
        }
    }
}

/// The set a line maps to in a cache of `geometry` (0..sets).
#[inline]
pub fn set_index(geometry: &Geometry, line: u64) -> usize {
    let sets = geometry.sets as u64;
    set_index_by(
        geometry,
        line,
        |x| x % sets,
        |x| x / sets,
        |x| permute(x, sets),
    )
}

/// [`set_index`] for one geometry, with its divisions by the set count made multiplications
/// (for callers on a hot path, such as the L2's shard router).
#[derive(Debug, Clone, Copy)]
pub struct SetIndexer {
    geometry: Geometry,
    sets: FastRem,
    /// [`permutation_table`] of a balanced geometry (empty otherwise).
    perm: &'static [u32],
}

impl SetIndexer {
    /// The indexer of `geometry` (at least one set).
    pub fn new(geometry: Geometry) -> SetIndexer {
        SetIndexer {
            geometry,
            sets: FastRem::new(geometry.sets.max(1) as u64),
            perm: permutation_table(&geometry),
        }
    }

    /// The set `line` maps to, as [`set_index`].
    #[inline(always)]
    pub fn set(&self, line: u64) -> usize {
        let (sets, perm) = (self.sets, self.perm);
        set_index_by(
            &self.geometry,
            line,
            |x| sets.rem(x),
            |x| sets.div(x),
            |x| perm[x as usize] as u64,
        )
    }
}

/// The permutation [`balanced_set`] applies to a run's places, as a table: worked out once per
/// set count and kept for the process (4 bytes a set; a program meets a few set counts), since the
/// L2's lookups would spend a tenth of the run in [`permute`]. Empty unless `geometry` is
/// balanced.
fn permutation_table(geometry: &Geometry) -> &'static [u32] {
    type Tables = std::sync::Mutex<HashMap<u64, &'static [u32], ahash::RandomState>>;
    static TABLES: std::sync::OnceLock<Tables> = std::sync::OnceLock::new();
    if geometry.indexing != SetIndexing::Balanced {
        return &[];
    }
    let sets = geometry.sets as u64;
    let mut tables = TABLES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    tables.entry(sets).or_insert_with(|| {
        let table: Vec<u32> = (0..sets).map(|x| permute(x, sets) as u32).collect();
        Box::leak(table.into_boxed_slice())
    })
}

/// [`set_index`], taking `% sets` by `rem`, `/ sets` by `div` (the caches pass their
/// [`FastRem`]'s) and [`permute`] by `perm` (their [`permutation_table`]).
#[inline(always)]
fn set_index_by(
    geometry: &Geometry,
    line: u64,
    rem: impl Fn(u64) -> u64,
    div: impl Fn(u64) -> u64,
    perm: impl Fn(u64) -> u64,
) -> usize {
    let sets = geometry.sets;
    match geometry.indexing {
        SetIndexing::Modulo => rem(line) as usize,
        SetIndexing::XorFold => rem(xor_fold(line)) as usize,
        SetIndexing::Hash => {
            // Mix the line address, then map to 0..sets without a division.
            let h = (line ^ (line >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let h = h ^ (h >> 32);
            ((h as u128 * sets as u128) >> 64) as usize
        }
        SetIndexing::Balanced => balanced_set(line, sets as u64, geometry.pair_bit, div, perm),
        SetIndexing::XorMatrix => geometry
            .matrix
            .expect("an xor-matrix geometry carries its matrix")
            .set(line),
    }
}

/// [`SetIndexing::Balanced`]: the partition-local line (the pair bit left out) splits into a run
/// of `sets` lines and a place in it; the place goes through a pseudo-random permutation of the
/// sets (a bijection of the run onto the sets) and is shifted by an offset drawn from the run's
/// number.
#[inline(always)]
fn balanced_set(
    line: u64,
    sets: u64,
    pair_bit: Option<u32>,
    div: impl Fn(u64) -> u64,
    perm: impl Fn(u64) -> u64,
) -> usize {
    let local = match pair_bit {
        Some(b) => ((line >> (b + 1)) << b) | (line & ((1u64 << b) - 1)),
        None => line,
    };
    let run = div(local);
    let place = local - run * sets;
    let h = (run ^ (run >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let offset = (((h >> 32) as u128 * sets as u128) >> 32) as u64;
    let set = perm(place) + offset;
    (if set >= sets { set - sets } else { set }) as usize
}

/// A pseudo-random permutation of `0..n` (`x < n`): four Feistel rounds on the smallest square
/// power of two of at least `n` values, repeated until the value falls below `n` (cycle walking:
/// the square holds fewer than `4n` values, so fewer than four passes on average).
///
/// A multiplier, the permutation `balanced` used until 2026-11-25, maps every arithmetic
/// progression of lines (a row or plane pitch) onto one of sets, so that some pitches crowd a
/// stencil's planes into part of the sets: star4 128x4x2 at 512x512x256 (planes 16,900 lines
/// apart) read 15% more DRAM than the H100, which reads 10.6, 11.1 and 10.4 B per update at 512,
/// 520 and 496 points in x (`tests/data/h100/pitch`, `tests/l2_pitch.rs`).
#[inline(always)]
fn permute(x: u64, n: u64) -> u64 {
    let half = (64 - n.saturating_sub(1).leading_zeros())
        .div_ceil(2)
        .max(1);
    let mask = (1u64 << half) - 1;
    let mut v = x;
    loop {
        let (mut l, mut r) = (v >> half, v & mask);
        for round in 0..4u64 {
            let f = ((r ^ (round << 32)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - half)) & mask;
            (l, r) = (r, l ^ f);
        }
        v = (l << half) | r;
        if v < n {
            return v;
        }
    }
}

/// A hint to bring the memory at `p` into the CPU's caches (no effect where unsupported).
#[inline(always)]
fn prefetch_read<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and does not dereference `p` in the program's sense.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The first way of `set` holding `tag` (a tag is in a set at most once; 0 marks an empty way).
/// Sets of 16 ways, the L1s' and L2s', are compared whole without branching.
#[inline(always)]
fn first_way(set: &[u32], tag: u32) -> Option<usize> {
    match <&[u32; 16]>::try_from(set) {
        Ok(set) => {
            let hits = ways_matching(set, tag);
            (hits != 0).then(|| hits.trailing_zeros() as usize)
        }
        Err(_) => set.iter().position(|&t| t == tag),
    }
}

/// Bit w set where `set[w] == tag`. SSE2, which every x86-64 CPU has, compares four ways at a
/// time and gathers the results with one movemask each; the portable loop compiles to a compare,
/// mask and shift per way.
#[inline(always)]
fn ways_matching(set: &[u32; 16], tag: u32) -> u32 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of the x86-64 baseline; the four unaligned loads read the 64 bytes of
    // `set` and nothing beyond.
    unsafe {
        use std::arch::x86_64::*;
        let t = _mm_set1_epi32(tag as i32);
        let p = set.as_ptr().cast::<__m128i>();
        let mut hits = 0u32;
        for q in 0..4 {
            let eq = _mm_cmpeq_epi32(_mm_loadu_si128(p.add(q)), t);
            hits |= (_mm_movemask_ps(_mm_castsi128_ps(eq)) as u32) << (4 * q);
        }
        hits
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut hits = 0u32;
        for (w, &t) in set.iter().enumerate() {
            hits |= u32::from(t == tag) << w;
        }
        hits
    }
}

/// The finite cache. Arrays are laid out set by set so a lookup touches one contiguous run. A
/// shard holds only the sets `s` with `s % shards == shard` (set `s` at local position
/// `s / shards`): sets never interact, so shards of one cache can run on different threads
/// (unless the policy couples them: [`ReplacementState::sets_are_independent`]).
#[derive(Debug, Clone)]
pub struct SetAssoc {
    geometry: Geometry,
    /// log2 of the number of shards.
    shard_shift: u32,
    /// The set of a line.
    indexer: SetIndexer,
    /// Sets held here.
    local_sets: usize,
    /// line + 1 per way (0 = empty).
    tags: Vec<u32>,
    states: Vec<LineState>,
    /// The replacement policy's state and hooks.
    replacement: ReplacementState,
    /// The generator random replacement and the capacity limit draw from.
    rng: Xorshift,
    /// The limit on near lines of [`Cache::with_local_ways`] (`None`: no limit).
    near_limit: Option<NearLimit>,
    /// The most lines the cache may hold (`usize::MAX`: every way); see
    /// [`Cache::with_capacity_lines`].
    capacity_lines: usize,
    /// Lines held.
    held: usize,
}

/// [`Cache::with_local_ways`]'s limit: which ways hold lines of the far side, and a recency
/// stamp per way of its own, whatever the policy keeps.
#[derive(Debug, Clone)]
struct NearLimit {
    /// How many ways of a set lines of the near side may hold.
    local_ways: usize,
    /// Per set, a bit per way holding a line brought in for the far side.
    far_ways: Vec<u32>,
    /// Last use of each way.
    used: Stamps,
}

impl Cache {
    /// A finite cache with the given geometry.
    pub fn new(geometry: Geometry) -> Cache {
        Cache::shard(geometry, 0, 1)
    }

    /// Shard `shard` of `shards` (a power of two) of a finite cache with the given geometry: the
    /// sets `s` with `s % shards == shard`. Only lines of those sets may be looked up or inserted.
    pub fn shard(geometry: Geometry, shard: usize, shards: usize) -> Cache {
        assert!(shards.is_power_of_two(), "shards must be a power of two");
        let local_sets = geometry.sets.saturating_sub(shard).div_ceil(shards);
        let n = local_sets * geometry.ways;
        Cache::SetAssoc(SetAssoc {
            geometry,
            shard_shift: shards.trailing_zeros(),
            indexer: SetIndexer::new(geometry),
            local_sets,
            tags: vec![0; n],
            states: vec![LineState::default(); n],
            replacement: ReplacementState::new(geometry.replacement, local_sets, geometry.ways),
            rng: Xorshift::default(),
            near_limit: None,
            capacity_lines: usize::MAX,
            held: 0,
        })
    }

    /// Lets the cache hold at most `lines` lines although its ways hold more: a line that enters
    /// an empty way while that many are held pushes out the least recently used line of a
    /// pseudo-random set. Models the H100/H200 L1, whose tags cover 256 KiB while its data shares
    /// the array with shared memory (`validation/l1_index.cu`; docs/model.md "L1 geometry").
    pub fn with_capacity_lines(mut self, lines: usize) -> Cache {
        if let Cache::SetAssoc(c) = &mut self
            && lines < c.tags.len()
        {
            c.capacity_lines = lines.max(1);
        }
        self
    }

    /// Lets lines of the near side (`far == false` in [`Cache::access_or_insert_for`]) hold at
    /// most `local_ways` ways of a set: a near line entering a set that holds that many takes
    /// the place of the least recently used of them (by the limit's own recency stamps), while a
    /// far line may take any way, as the policy picks. The configuration allows it under the
    /// policies [`Replacement::allows_local_ways`] names.
    pub fn with_local_ways(mut self, local_ways: usize) -> Cache {
        if let Cache::SetAssoc(c) = &mut self
            && local_ways < c.geometry.ways
        {
            debug_assert!(c.geometry.replacement.allows_local_ways());
            c.near_limit = Some(NearLimit {
                local_ways,
                far_ways: vec![0; c.local_sets],
                used: Stamps::new(c.local_sets, c.geometry.ways),
            });
        }
        self
    }

    /// A cache that never evicts.
    pub fn infinite() -> Cache {
        Cache::Infinite(HashMap::with_hasher(ahash::RandomState::with_seeds(
            1, 2, 3, 4,
        )))
    }

    /// The state of `line` if it is present (does not count as a use).
    #[inline(always)]
    pub fn peek(&self, line: u64) -> Option<LineState> {
        match self {
            Cache::SetAssoc(c) => c.find(line).map(|i| c.states[i]),
            Cache::Infinite(m) => m.get(&line).copied(),
        }
    }

    /// The state of `line` for update if it is present, without counting as a use (an
    /// invalidation from elsewhere, not a request of this cache's own).
    #[inline]
    pub fn peek_mut(&mut self, line: u64) -> Option<&mut LineState> {
        match self {
            Cache::SetAssoc(c) => c.find(line).map(|i| &mut c.states[i]),
            Cache::Infinite(m) => m.get_mut(&line),
        }
    }

    /// Looks `line` up, marking it used; returns its state for update, or `None` on a line miss.
    #[inline(always)]
    pub fn access(&mut self, line: u64) -> Option<&mut LineState> {
        match self {
            Cache::SetAssoc(c) => {
                let i = c.find(line)?;
                c.use_slot(i);
                Some(&mut c.states[i])
            }
            Cache::Infinite(m) => m.get_mut(&line),
        }
    }

    /// Inserts `line` (which must be absent) with an empty state, evicting the set's victim if the
    /// set is full. Returns the new line's state and what was evicted.
    #[inline]
    pub fn insert(&mut self, line: u64) -> (&mut LineState, Option<Evicted>) {
        match self {
            Cache::SetAssoc(c) => c.insert(line),
            Cache::Infinite(m) => (m.entry(line).or_default(), None),
        }
    }

    /// Asks the CPU to bring `line`'s set (tags and states) into its cache ahead of a lookup: the
    /// L2's sets are megabytes, and its replay knows its next requests, so it need not wait for
    /// each set in turn. A hint only; nothing changes.
    #[inline(always)]
    pub fn prefetch(&self, line: u64) {
        self.prefetch_at(self.set_start(line));
    }

    /// Where `line`'s set starts among the cache's slots (0 in an infinite cache), for the
    /// lookups that take it (`..._at`): worked out once for all the lookups of one request, in
    /// every cache of the same geometry and shard (the partitions of an L2 share both).
    #[inline(always)]
    pub fn set_start(&self, line: u64) -> usize {
        match self {
            Cache::SetAssoc(c) => c.set_of(line) * c.geometry.ways,
            Cache::Infinite(_) => 0,
        }
    }

    /// [`Cache::prefetch`] of the set starting at `start` ([`Cache::set_start`]).
    #[inline(always)]
    pub fn prefetch_at(&self, start: usize) {
        if let Cache::SetAssoc(c) = self {
            prefetch_read(c.tags.as_ptr().wrapping_add(start));
            prefetch_read(c.states.as_ptr().wrapping_add(start));
        }
    }

    /// [`Cache::access`], and on a line miss [`Cache::insert`]: the line's state (empty when
    /// new), whether it was present, and what its insertion evicted. One set lookup for both.
    #[inline(always)]
    pub fn access_or_insert(&mut self, line: u64) -> (&mut LineState, bool, Option<Evicted>) {
        match self {
            Cache::SetAssoc(c) => c.access_or_insert(line),
            Cache::Infinite(m) => infinite_access_or_insert(m, line),
        }
    }

    /// [`Cache::access_or_insert`] for a request of the far side (`far`) or the near side, under
    /// the limit of [`Cache::with_local_ways`] (without one, the same as
    /// `access_or_insert`). A use by the near side makes a far line near.
    #[inline(always)]
    pub fn access_or_insert_for(
        &mut self,
        line: u64,
        far: bool,
    ) -> (&mut LineState, bool, Option<Evicted>) {
        let start = self.set_start(line);
        self.access_or_insert_for_at(start, line, far)
    }

    /// [`Cache::access_or_insert_for`] of `line`, whose set starts at `start`
    /// ([`Cache::set_start`]).
    #[inline(always)]
    pub fn access_or_insert_for_at(
        &mut self,
        start: usize,
        line: u64,
        far: bool,
    ) -> (&mut LineState, bool, Option<Evicted>) {
        match self {
            Cache::SetAssoc(c) => {
                if c.near_limit.is_some() {
                    c.access_or_insert_for(start, line, far)
                } else {
                    c.access_or_insert_in(start, line)
                }
            }
            Cache::Infinite(m) => infinite_access_or_insert(m, line),
        }
    }

    /// [`Cache::access`] of `line`, whose set starts at `start` ([`Cache::set_start`]).
    #[inline(always)]
    pub fn access_at(&mut self, start: usize, line: u64) -> Option<&mut LineState> {
        match self {
            Cache::SetAssoc(c) => {
                let i = c.find_in(start, line)?;
                c.use_slot(i);
                // A use is a use for the near-line limit too, whatever the policy.
                if let Some(limit) = c.near_limit.as_mut() {
                    limit.used.stamp(i);
                }
                Some(&mut c.states[i])
            }
            Cache::Infinite(m) => m.get_mut(&line),
        }
    }

    /// [`Cache::peek_mut`] of `line`, whose set starts at `start` ([`Cache::set_start`]).
    #[inline(always)]
    pub fn peek_mut_at(&mut self, start: usize, line: u64) -> Option<&mut LineState> {
        match self {
            Cache::SetAssoc(c) => c.find_in(start, line).map(|i| &mut c.states[i]),
            Cache::Infinite(m) => m.get_mut(&line),
        }
    }

    /// Writes back the least recently used dirty line of the set starting at `start` when more
    /// than `limit` of its lines hold dirty sectors: the line stays, clean and with its dirty
    /// sectors valid (a partly written sector is filled first), and its line and state before
    /// come back for the caller to count the write-back. The L2's dirty budget
    /// (`l2.dirty_ways`); an infinite cache never writes back.
    pub fn clean_over_dirty_limit(&mut self, start: usize, limit: usize) -> Option<Evicted> {
        let Cache::SetAssoc(c) = self else {
            return None;
        };
        let mut dirty = 0u32;
        for w in 0..c.geometry.ways {
            if c.tags[start + w] != 0 && c.states[start + w].dirty != 0 {
                dirty |= 1 << w;
            }
        }
        if dirty.count_ones() as usize <= limit {
            return None;
        }
        let slot = c.replacement.least_recent_of(start, dirty);
        let state = c.states[slot];
        c.states[slot].valid |= state.dirty;
        c.states[slot].dirty = 0;
        Some(Evicted {
            line: c.tags[slot] as u64 - 1,
            state,
        })
    }

    /// Removes `line` if present, returning its state.
    pub fn remove(&mut self, line: u64) -> Option<LineState> {
        match self {
            Cache::SetAssoc(c) => {
                let i = c.find(line)?;
                c.tags[i] = 0;
                c.held -= 1;
                Some(std::mem::take(&mut c.states[i]))
            }
            Cache::Infinite(m) => m.remove(&line),
        }
    }

    /// Every present line and its state (for end-of-kernel accounting).
    pub fn lines(&self) -> Box<dyn Iterator<Item = (u64, LineState)> + '_> {
        match self {
            Cache::SetAssoc(c) => Box::new(
                c.tags
                    .iter()
                    .zip(&c.states)
                    .filter(|(t, _)| **t != 0)
                    .map(|(t, s)| (*t as u64 - 1, *s)),
            ),
            Cache::Infinite(m) => Box::new(m.iter().map(|(l, s)| (*l, *s))),
        }
    }
}

/// [`Cache::access_or_insert`] in an infinite cache.
#[inline]
fn infinite_access_or_insert(
    m: &mut HashMap<u64, LineState, ahash::RandomState>,
    line: u64,
) -> (&mut LineState, bool, Option<Evicted>) {
    match m.entry(line) {
        hashbrown::hash_map::Entry::Occupied(e) => (e.into_mut(), true, None),
        hashbrown::hash_map::Entry::Vacant(e) => (e.insert(LineState::default()), false, None),
    }
}

impl SetAssoc {
    /// The local position of `line`'s set.
    #[inline(always)]
    fn set_of(&self, line: u64) -> usize {
        let s = self.indexer.set(line) >> self.shard_shift;
        debug_assert_eq!(s, set_index(&self.geometry, line) >> self.shard_shift);
        debug_assert!(s < self.local_sets);
        s
    }

    #[inline]
    fn find(&self, line: u64) -> Option<usize> {
        self.find_in(self.set_of(line) * self.geometry.ways, line)
    }

    /// The slot of `line` in the set starting at slot `start`.
    #[inline]
    fn find_in(&self, start: usize, line: u64) -> Option<usize> {
        let set = &self.tags[start..start + self.geometry.ways];
        first_way(set, (line + 1) as u32).map(|w| start + w)
    }

    /// Marks slot `i` used.
    #[inline(always)]
    fn use_slot(&mut self, i: usize) {
        self.replacement.on_hit(i);
    }

    /// [`Cache::access_or_insert`], finding the set once.
    #[inline(always)]
    fn access_or_insert(&mut self, line: u64) -> (&mut LineState, bool, Option<Evicted>) {
        self.access_or_insert_in(self.set_of(line) * self.geometry.ways, line)
    }

    /// [`Cache::access_or_insert`] of `line`, whose set starts at slot `start`.
    #[inline(always)]
    fn access_or_insert_in(
        &mut self,
        start: usize,
        line: u64,
    ) -> (&mut LineState, bool, Option<Evicted>) {
        debug_assert_eq!(start, self.set_of(line) * self.geometry.ways);
        if let Some(i) = self.find_in(start, line) {
            self.use_slot(i);
            return (&mut self.states[i], true, None);
        }
        let (state, evicted) = self.insert_at(start, line);
        (state, false, evicted)
    }

    /// [`Cache::access_or_insert_for`] in a set with a limit on near lines, the set of `line`
    /// starting at slot `start`.
    fn access_or_insert_for(
        &mut self,
        start: usize,
        line: u64,
        far: bool,
    ) -> (&mut LineState, bool, Option<Evicted>) {
        let ways = self.geometry.ways;
        debug_assert_eq!(start, self.set_of(line) * ways);
        let set = start / ways;
        if let Some(i) = self.find_in(start, line) {
            self.use_slot(i);
            let limit = self.near_limit.as_mut().expect("a limit on near lines");
            limit.used.stamp(i);
            if !far {
                limit.far_ways[set] &= !(1 << (i - start));
            }
            return (&mut self.states[i], true, None);
        }
        let limit = self.near_limit.as_ref().expect("a limit on near lines");
        let mut near = 0u32;
        for w in 0..ways {
            if self.tags[start + w] != 0 && limit.far_ways[set] >> w & 1 == 0 {
                near |= 1 << w;
            }
        }
        let slot = if !far && near.count_ones() as usize >= limit.local_ways {
            // The least recently used near line gives way.
            limit.used.oldest_of(start, near)
        } else {
            self.victim(start)
        };
        let evicted = self.fill(slot, line).1;
        let limit = self.near_limit.as_mut().expect("a limit on near lines");
        let bit = 1 << (slot - start);
        limit.far_ways[set] = if far {
            limit.far_ways[set] | bit
        } else {
            limit.far_ways[set] & !bit
        };
        limit.used.stamp(slot);
        (&mut self.states[slot], false, evicted)
    }

    #[inline]
    fn insert(&mut self, line: u64) -> (&mut LineState, Option<Evicted>) {
        self.insert_at(self.set_of(line) * self.geometry.ways, line)
    }

    /// The slot a new line of the set starting at `start` goes to: an empty way, else the
    /// policy's victim.
    #[inline]
    fn victim(&mut self, start: usize) -> usize {
        match first_way(&self.tags[start..start + self.geometry.ways], 0) {
            Some(w) => start + w,
            None => self.replacement.victim(start, &mut self.rng),
        }
    }

    /// Empties a held slot other than `keep` (the capacity is full) and returns what it held: the
    /// policy's [`ReplacementState::capacity_victim`] of a pseudo-random held slot.
    fn evict_anywhere(&mut self, keep: usize) -> Evicted {
        loop {
            let drawn = self.rng.below(self.tags.len());
            if self.tags[drawn] == 0 {
                continue;
            }
            let tags = &self.tags;
            let evictable = |s: usize| s != keep && tags[s] != 0;
            if let Some(slot) = self.replacement.capacity_victim(drawn, evictable) {
                let line = self.tags[slot] as u64 - 1;
                self.tags[slot] = 0;
                return Evicted {
                    line,
                    state: std::mem::take(&mut self.states[slot]),
                };
            }
        }
    }

    /// Inserts `line` into the set starting at slot `start`: into an empty way, else in place
    /// of the policy's victim.
    #[inline]
    fn insert_at(&mut self, start: usize, line: u64) -> (&mut LineState, Option<Evicted>) {
        let slot = self.victim(start);
        self.fill(slot, line)
    }

    /// Puts `line` in `slot` with an empty state, as the policy marks an insertion; returns
    /// the new state and the line that left.
    #[inline]
    fn fill(&mut self, slot: usize, line: u64) -> (&mut LineState, Option<Evicted>) {
        let evicted = if self.tags[slot] != 0 {
            Some(Evicted {
                line: self.tags[slot] as u64 - 1,
                state: self.states[slot],
            })
        } else if self.held >= self.capacity_lines {
            Some(self.evict_anywhere(slot))
        } else {
            self.held += 1;
            None
        };
        debug_assert!(line <= MAX_LINE);
        self.tags[slot] = (line + 1) as u32;
        self.replacement.on_fill(slot);
        self.states[slot] = LineState::default();
        (&mut self.states[slot], evicted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fast_remainder_and_quotient_equal_the_division() {
        let mut x = 0x1234_5678_9abc_def0u64;
        let divisors = (1..=300u64).chain([124 * 16, 40960, 65_535, 1 << 31, u32::MAX as u64]);
        for d in divisors {
            let r = FastRem::new(d);
            let edges = [0, 1, d - 1, d, d + 1, u32::MAX as u64, 1 << 32, u64::MAX];
            for v in edges {
                assert_eq!(r.rem(v), v % d, "{v} % {d}");
                assert_eq!(r.div(v), v / d, "{v} / {d}");
            }
            for _ in 0..2000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let v = x >> (x % 40); // every width, most below 2^32
                assert_eq!(r.rem(v), v % d, "{v} % {d}");
                assert_eq!(r.div(v), v / d, "{v} / {d}");
            }
        }
    }

    #[test]
    fn an_xor_matrix_index_takes_each_set_bit_as_the_parity_of_its_mask() {
        let index = XorIndex::new(&[0b011, 0b100], None);
        assert_eq!(index.sets(), 4);
        // line 1: bit 0 = parity(1 & 3) = 1, bit 1 = parity(1 & 4) = 0
        let sets: Vec<usize> = [0u64, 1, 2, 3, 4, 5, 7]
            .iter()
            .map(|&l| index.set(l))
            .collect();
        assert_eq!(sets, vec![0, 1, 1, 0, 2, 3, 2]);
        // Hashed bits move the index, the same way for lines that differ only below them.
        let hashed = XorIndex::new(&[0b011, 0b100], Some(8));
        assert_eq!(hashed.set(5), index.set(5));
        let (a, b) = (hashed.set(0x100), hashed.set(0x105));
        assert_eq!(a ^ b, index.set(5));
    }

    #[test]
    fn a_cache_that_holds_fewer_lines_than_its_ways_pushes_out_its_least_recently_used() {
        let geometry = Geometry {
            sets: 1,
            ways: 8,
            replacement: Replacement::Lru,
            indexing: SetIndexing::Modulo,
            pair_bit: None,
            matrix: None,
        };
        let mut cache = Cache::new(geometry).with_capacity_lines(4);
        for line in 0..4 {
            assert_eq!(cache.insert(line).1, None);
        }
        assert!(cache.access(0).is_some());
        // Four held: the fifth line takes a free way and line 1, the least recently used, goes.
        assert_eq!(cache.insert(4).1.map(|e| e.line), Some(1));
        assert_eq!(cache.lines().count(), 4);
        assert!(cache.remove(0).is_some());
        assert_eq!(cache.insert(5).1, None, "room again after a removal");
    }

    fn two_way(replacement: Replacement) -> Cache {
        Cache::new(Geometry {
            sets: 2,
            ways: 2,
            replacement,
            indexing: SetIndexing::Modulo,
            pair_bit: None,
            matrix: None,
        })
    }

    /// One set of four ways, at most two of them for near lines.
    fn one_set_two_local_ways(replacement: Replacement) -> Cache {
        Cache::new(Geometry {
            sets: 1,
            ways: 4,
            replacement,
            indexing: SetIndexing::Modulo,
            pair_bit: None,
            matrix: None,
        })
        .with_local_ways(2)
    }

    #[test]
    fn near_lines_past_the_local_ways_replace_the_least_recent_near_line() {
        for policy in [Replacement::Lru, Replacement::Plru] {
            let mut c = one_set_two_local_ways(policy);
            let evicted = |r: (&mut LineState, bool, Option<Evicted>)| r.2.map(|e| e.line);
            assert_eq!(evicted(c.access_or_insert_for(10, true)), None); // far A
            assert_eq!(evicted(c.access_or_insert_for(11, false)), None); // near B
            assert_eq!(evicted(c.access_or_insert_for(12, false)), None); // near C
            // A third near line: B, the older near line, leaves though a way is empty.
            assert_eq!(
                evicted(c.access_or_insert_for(13, false)),
                Some(11),
                "{policy:?}"
            );
            // A far line takes the empty way, and the next one replaces by the policy: A.
            assert_eq!(evicted(c.access_or_insert_for(14, true)), None);
            assert_eq!(
                evicted(c.access_or_insert_for(15, true)),
                Some(10),
                "{policy:?}"
            );
            // A near use of far line 14 makes it near: three near lines, C the oldest of them.
            assert!(c.access_or_insert_for(14, false).1);
            assert_eq!(
                evicted(c.access_or_insert_for(16, false)),
                Some(12),
                "{policy:?}"
            );
            let mut left: Vec<u64> = c.lines().map(|(l, _)| l).collect();
            left.sort();
            assert_eq!(left, [13, 14, 15, 16], "{policy:?}");
        }
    }

    #[test]
    fn without_a_limit_the_side_of_a_request_changes_nothing() {
        let mut plain = two_way(Replacement::Plru);
        let mut sided = two_way(Replacement::Plru).with_local_ways(2);
        for (i, line) in [0u64, 2, 4, 0, 6, 2, 8].into_iter().enumerate() {
            let a = plain.access_or_insert(line);
            let (a1, a2) = (a.1, a.2.map(|e| e.line));
            let b = sided.access_or_insert_for(line, i % 2 == 0);
            assert_eq!((a1, a2), (b.1, b.2.map(|e| e.line)));
        }
    }

    /// A balanced geometry of `sets` sets (4 ways, LRU), with or without a pair bit.
    fn balanced(sets: usize, pair_bit: Option<u32>) -> Geometry {
        Geometry {
            sets,
            ways: 4,
            replacement: Replacement::Lru,
            indexing: SetIndexing::Balanced,
            pair_bit,
            matrix: None,
        }
    }

    #[test]
    fn balanced_indexing_puts_every_run_of_sets_lines_once_in_each_set() {
        for sets in [1, 7, 100, 12800] {
            let g = balanced(sets, None);
            for run in 0..5u64 {
                let mut seen: Vec<usize> = (0..sets as u64)
                    .map(|i| set_index(&g, run * sets as u64 + i))
                    .collect();
                seen.sort_unstable();
                assert_eq!(
                    seen,
                    (0..sets).collect::<Vec<_>>(),
                    "{sets} sets, run {run}"
                );
            }
        }
    }

    #[test]
    fn balanced_indexing_maps_no_pitch_of_lines_onto_a_stride_of_sets_and_shifts_each_run() {
        // A multiplier sends every pair of lines `pitch` apart the same number of sets apart;
        // the permutation sends them all over (star4's planes 16,900 lines apart, `permute`).
        let g = balanced(12800, None);
        for pitch in [1u64, 2, 16, 33, 4096, 8450, 8580] {
            let mut steps = std::collections::HashMap::new();
            for l in 0..12800 - pitch {
                let step = (set_index(&g, l + pitch) + 12800 - set_index(&g, l)) % 12800;
                *steps.entry(step).or_insert(0u32) += 1;
            }
            let most = *steps.values().max().unwrap() as f64 / (12800 - pitch) as f64;
            assert!(
                most < 0.01,
                "pitch {pitch}: {most:.3} of the pairs one step apart"
            );
        }
        let g = balanced(100, None);
        let firsts: Vec<usize> = (0..8u64).map(|run| set_index(&g, run * 100)).collect();
        let mut distinct = firsts.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert!(distinct.len() >= 6, "runs start in {firsts:?}");
    }

    #[test]
    fn balanced_indexing_gives_a_line_and_its_partner_one_set_and_leaves_the_pair_bit_out() {
        let g = balanced(100, Some(5));
        for line in 0..10_000u64 {
            assert_eq!(set_index(&g, line), set_index(&g, line ^ 32), "line {line}");
        }
        // The first 100 lines of one partition (bit 5 clear) fill every set once.
        let own: Vec<u64> = (0..).filter(|l| l & 32 == 0).take(100).collect();
        let mut seen: Vec<usize> = own.iter().map(|&l| set_index(&g, l)).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn shards_of_a_cache_together_behave_as_the_whole_cache() {
        let geometry = Geometry {
            sets: 5,
            ways: 2,
            replacement: Replacement::Lru,
            indexing: SetIndexing::Hash,
            pair_bit: None,
            matrix: None,
        };
        let mut whole = Cache::new(geometry);
        let mut shards: Vec<Cache> = (0..4).map(|k| Cache::shard(geometry, k, 4)).collect();
        let mut x = 12345u64;
        for _ in 0..2000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let line = (x >> 33) % 40;
            let s = &mut shards[set_index(&geometry, line) % 4];
            match (whole.access(line).is_some(), s.access(line).is_some()) {
                (true, true) => {}
                (false, false) => assert_eq!(whole.insert(line).1, s.insert(line).1),
                other => panic!("line {line}: whole and shard disagree: {other:?}"),
            }
        }
        // 5 sets over 4 shards: 2, 1, 1 and 1 sets.
        let held: Vec<usize> = shards.iter().map(|s| s.lines().count()).collect();
        assert_eq!(held.iter().sum::<usize>(), whole.lines().count());
        assert!(held[1..].iter().all(|&h| h <= 2), "{held:?}");
    }

    #[test]
    fn hashed_indexing_stays_in_range_and_spreads_strides() {
        let g = Geometry {
            sets: 15360,
            ways: 16,
            replacement: Replacement::Lru,
            indexing: SetIndexing::Hash,
            pair_bit: None,
            matrix: None,
        };
        let Cache::SetAssoc(c) = Cache::new(g) else {
            unreachable!()
        };
        let mut used = std::collections::HashSet::new();
        for i in 0..4096u64 {
            let s = c.set_of(i * 1024); // a 128 KiB stride: one set under modulo-of-power-of-two
            assert!(s < 15360);
            used.insert(s);
        }
        assert!(used.len() > 3000, "{}", used.len());
    }

    #[test]
    fn xor_fold_indexing_gives_consecutive_lines_and_power_of_two_strides_distinct_sets() {
        // 640 sets of 3 ways: the 3-way trial L1 of docs/model.md "L1 geometry" (the shipped one
        // has 124 sets of 16), a set count that 640 consecutive lines fill exactly.
        let g = Geometry {
            sets: 640,
            ways: 3,
            replacement: Replacement::Lru,
            indexing: SetIndexing::XorFold,
            pair_bit: None,
            matrix: None,
        };
        let Cache::SetAssoc(c) = Cache::new(g) else {
            unreachable!()
        };
        for stride in [1u64, 512, 4096] {
            let sets: std::collections::HashSet<usize> =
                (0..640).map(|i| c.set_of(i * stride)).collect();
            assert_eq!(sets.len(), 640, "stride {stride} lines");
        }
        // 1920 lines 64 KiB apart fill every set exactly: no conflict misses at capacity, as the
        // chase measured; modulo indexing puts them all in 5 sets.
        let mut per_set = vec![0; 640];
        for i in 0..1920u64 {
            per_set[c.set_of(i * 512)] += 1;
        }
        assert!(per_set.iter().all(|&n| n == 3));
        let mut modulo = Cache::new(Geometry {
            indexing: SetIndexing::Modulo,
            ..g
        });
        for i in 0..1920u64 {
            if modulo.access(i * 512).is_none() {
                modulo.insert(i * 512);
            }
        }
        assert_eq!(modulo.lines().count(), 15);
    }

    #[test]
    fn infinite_never_evicts() {
        let mut c = Cache::infinite();
        for l in 0..10_000 {
            assert_eq!(c.insert(l).1, None);
        }
        assert_eq!(c.lines().count(), 10_000);
        assert_eq!(c.remove(5), Some(LineState::default()));
        assert!(c.peek(5).is_none());
    }
}
