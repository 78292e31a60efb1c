//! The reference's L2 and DRAM: one [`Cache`] per partition, every request handled on its own
//! in global order (tick, then SM). The rules are docs/model.md's "L2" and "Atomics": reads
//! look up the near partition and fill whole fill units, far misses cross the fabric and fill
//! the home partition, stores go to the home partition (from the far side leaving their whole
//! sectors in the writer's partition, from the home side invalidating the other copy), atomics
//! are performed at home, dirty sectors are written back on eviction (a partially written sector
//! read first) or, past the set's dirty budget, the set's least recently used dirty line. The timing-dependent corrections (the coalescer's merges, the far-read races)
//! are not here: the differential tests switch them off in production too.

use super::cache::{Cache, Index, Line};
use gputraffic::input::hw::HwConfig;
use std::collections::HashMap;

/// Counters the L2 and DRAM keep (named as the production counters they are compared with).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct L2Totals {
    pub read_sectors: u64,
    pub write_sectors: u64,
    pub read_lookup_miss_sectors: u64,
    pub fabric_sectors: u64,
    pub atomic_requests: u64,
    pub atomic_sectors: u64,
    pub sectors_left_partial: u64,
    pub partial_sectors_across_sms: u64,
    pub sectors_made_dirty: u64,
    pub dram_read_sectors: u64,
    pub dram_write_sectors: u64,
}

/// A line's sectors dirty but not wholly written ([`ReferenceL2`]'s `partial`).
#[derive(Debug)]
struct Partial {
    bytes: u128,
    first: usize,
    crossed: u8,
}

/// Bytes of each sector of `sectors` (bit i: byte i of the line).
pub fn sector_bytes(sectors: u8) -> u128 {
    (0..4)
        .filter(|s| sectors >> s & 1 == 1)
        .fold(0u128, |m, s| m | (u128::from(u32::MAX) << (32 * s)))
}

/// Sectors whose 32 bytes are all in `bytes`.
pub fn whole_sectors(bytes: u128) -> u8 {
    (0..4)
        .filter(|s| (bytes >> (32 * s)) as u32 == u32::MAX)
        .fold(0u8, |m, s| m | 1 << s)
}

/// `sectors` rounded out to whole fill units of `unit` sectors (1, 2 or 4).
fn round_to_units(unit: u32, sectors: u8) -> u8 {
    let mask = ((1u16 << unit) - 1) as u8;
    (0..4)
        .step_by(unit as usize)
        .filter(|first| sectors >> first & mask != 0)
        .fold(0u8, |out, first| out | mask << first)
}

/// The split (or unified) L2, its DRAM, and the compulsory (infinite L2) reads.
#[derive(Debug)]
pub struct ReferenceL2 {
    parts: Vec<Cache>,
    /// Each SM's partition.
    near: Vec<u8>,
    /// Address bits whose parity is a line's home partition (0: one partition).
    home_mask: u64,
    /// Sectors per DRAM fill unit.
    fill_sectors: u32,
    /// Lines of a set that may be dirty (`l2.dirty_ways`; `None`: no budget).
    dirty_ways: Option<usize>,
    /// Sectors dirty but not wholly written, by line: the bytes written so far, the SM that
    /// first wrote them, and those of them another SM has written into since.
    partial: HashMap<u64, Partial>,
    /// Compulsory tracking, by line: the fill units fetched (all their sectors' bits set) and
    /// the sectors wholly written by a store.
    units_read: HashMap<u64, u8>,
    written_whole: HashMap<u64, u8>,
    /// Compulsory DRAM read sectors.
    pub compulsory_reads: u64,
    /// What was counted.
    pub totals: L2Totals,
}

impl ReferenceL2 {
    /// An empty L2 of `hw`.
    pub fn new(hw: &HwConfig) -> ReferenceL2 {
        let c = &hw.l2;
        let home_mask = match (&c.home_hash, c.partitions) {
            (Some(h), 2) => h.mask().expect("checked on load"),
            _ => 0,
        };
        // A line and its partner in the other partition (the lowest home-hash bit) share a set.
        let pair_bit = (home_mask != 0)
            .then(|| home_mask.trailing_zeros())
            .filter(|&b| b >= 7)
            .map(|b| b - 7);
        let sets = (c.size_bytes / c.partitions as u64 / 128 / c.ways as u64) as usize;
        let parts = (0..c.partitions)
            .map(|_| {
                let index = Index::new(c.set_indexing, &[], None, pair_bit);
                Cache::new(sets, c.ways as usize, c.replacement, index)
                    .with_local_ways(c.local_ways.unwrap_or(c.ways) as usize)
            })
            .collect();
        ReferenceL2 {
            parts,
            near: hw.near_partition_of_sms(),
            home_mask,
            fill_sectors: c.fill_bytes / c.sector_bytes,
            dirty_ways: c.dirty_ways.map(|n| n as usize),
            partial: HashMap::new(),
            units_read: HashMap::new(),
            written_whole: HashMap::new(),
            compulsory_reads: 0,
            totals: L2Totals::default(),
        }
    }

    fn home(&self, line: u64) -> usize {
        ((line << 7) & self.home_mask).count_ones() as usize % 2
    }

    /// The compulsory reads of a read (or atomic) of `sectors` of `line`: a fill unit is fetched
    /// by the first read that wants one of its sectors not wholly written before (a read of
    /// written sectors only needs no DRAM), and brings its sectors that were not.
    fn compulsory_read(&mut self, line: u64, sectors: u8) {
        let unit = self.fill_sectors as u8;
        let written = self.written_whole.get(&line).copied().unwrap_or(0);
        let fetched = self.units_read.entry(line).or_default();
        for first in (0..4).step_by(unit as usize) {
            let mask = (((1u16 << unit) - 1) as u8) << first;
            let wanted = sectors & mask;
            if wanted != 0 && *fetched & mask == 0 && wanted & !written != 0 {
                *fetched |= mask;
                self.compulsory_reads += (mask & !written).count_ones() as u64;
            }
        }
    }

    /// Counts a DRAM read of `sectors` of `line`; their partial bytes are whole again.
    fn dram_read(&mut self, line: u64, sectors: u8) {
        self.totals.dram_read_sectors += sectors.count_ones() as u64;
        if let Some(p) = self.partial.get_mut(&line) {
            p.bytes &= !sector_bytes(sectors);
            if p.bytes == 0 {
                self.partial.remove(&line);
            }
        }
    }

    /// A line leaving a partition: its dirty sectors are written back, a partially written one
    /// first read.
    fn evicted(&mut self, ev: Option<(u64, Line)>) {
        let Some((line, state)) = ev else { return };
        if state.dirty == 0 {
            return;
        }
        let partial = state.dirty & !state.valid;
        self.totals.dram_write_sectors += state.dirty.count_ones() as u64;
        self.totals.dram_read_sectors += partial.count_ones() as u64;
        if partial != 0 {
            self.partial.remove(&line);
        }
    }

    /// A load miss of SM `sm` for `sectors` of `line`.
    pub fn read(&mut self, sm: usize, line: u64, sectors: u8) {
        self.totals.read_sectors += sectors.count_ones() as u64;
        self.compulsory_read(line, sectors);
        let near = self.near[sm] as usize;
        let home = self.home(line);
        let fill_sectors = self.fill_sectors;
        let (state, ev) = self.parts[near].access_or_insert(line, false);
        let missing = sectors & !state.valid;
        let fill = round_to_units(fill_sectors, missing) & !state.valid;
        state.valid |= fill;
        if missing != 0 {
            self.totals.read_lookup_miss_sectors += fill.count_ones() as u64;
            if home != near {
                self.totals.fabric_sectors += fill.count_ones() as u64;
                let (home_state, home_ev) = self.parts[home].access_or_insert(line, true);
                let lacking = fill & !home_state.valid;
                home_state.valid |= fill;
                self.dram_read(line, lacking);
                self.evicted(home_ev);
            } else {
                self.dram_read(line, fill);
            }
        }
        self.evicted(ev);
    }

    /// A store of SM `sm` to `sectors` of `line` writing `bytes`; of its sectors, those in
    /// `counted` came with the warp's store before it and are not counted again.
    pub fn write(&mut self, sm: usize, line: u64, sectors: u8, bytes: u128, counted: u8) {
        self.totals.write_sectors += (sectors & !counted).count_ones() as u64;
        let whole = whole_sectors(bytes) & sectors;
        *self.written_whole.entry(line).or_default() |= whole;
        let near = self.near[sm] as usize;
        let home = self.home(line);
        let far = home != near;
        if far {
            self.totals.fabric_sectors += (sectors & !counted).count_ones() as u64;
            if whole != 0 {
                let (st, ev) = self.parts[near].access_or_insert(line, false);
                st.valid |= whole;
                self.evicted(ev);
            } else {
                self.parts[near].access(line);
            }
        } else {
            for (p, part) in self.parts.iter_mut().enumerate() {
                if p != home
                    && let Some(st) = part.peek_mut(line)
                {
                    st.valid &= !sectors;
                }
            }
        }
        let (state, ev) = self.parts[home].access_or_insert(line, far);
        if far {
            state.stored_from_far = true;
        } else if state.stored_from_far {
            state.stored_from_far = false;
            self.totals.fabric_sectors += 1;
        }
        // Sectors still partly written that another SM than their first writer's writes into.
        let waiting = state.dirty & !state.valid;
        if let Some(p) = self.partial.get_mut(&line)
            && p.first != sm
        {
            let shared = waiting & sectors & !p.crossed;
            self.totals.partial_sectors_across_sms += shared.count_ones() as u64;
            p.crossed |= shared;
        }
        let newly_dirty = state.dirty == 0;
        self.totals.sectors_made_dirty += (sectors & !state.dirty).count_ones() as u64;
        state.dirty |= sectors;
        state.valid |= whole;
        let partial = sectors & !whole & !state.valid;
        self.totals.sectors_left_partial += (partial & !waiting).count_ones() as u64;
        if partial != 0 {
            let p = self.partial.entry(line).or_insert(Partial {
                bytes: 0,
                first: sm,
                crossed: 0,
            });
            p.bytes |= bytes & sector_bytes(partial);
            let completed = whole_sectors(p.bytes) & partial;
            p.bytes &= !sector_bytes(completed | whole);
            p.crossed &= !(completed | whole);
            state.valid |= completed;
            if p.bytes == 0 {
                self.partial.remove(&line);
            }
        } else if whole != 0
            && let Some(p) = self.partial.get_mut(&line)
        {
            p.bytes &= !sector_bytes(whole);
            p.crossed &= !whole;
            if p.bytes == 0 {
                self.partial.remove(&line);
            }
        }
        self.evicted(ev);
        if newly_dirty {
            self.keep_dirty_budget(home, line);
        }
    }

    /// After `line` of partition `part` turned dirty: over the budget, the set's least recently
    /// used dirty line is written back as on eviction (its partial sectors read first).
    fn keep_dirty_budget(&mut self, part: usize, line: u64) {
        if let Some(limit) = self.dirty_ways
            && let Some(written) = self.parts[part].clean_over_dirty_limit(line, limit)
        {
            self.evicted(Some(written));
        }
    }

    /// An atomic of SM `sm` on `sectors` of `line`, performed in the home partition.
    pub fn atomic(&mut self, sm: usize, line: u64, sectors: u8) {
        self.totals.atomic_requests += 1;
        self.totals.atomic_sectors += sectors.count_ones() as u64;
        self.compulsory_read(line, sectors);
        let near = self.near[sm] as usize;
        let home = self.home(line);
        let far = home != near;
        if far {
            self.totals.fabric_sectors += sectors.count_ones() as u64;
            if let Some(st) = self.parts[near].access(line) {
                st.valid &= !sectors;
            }
        }
        let fill_sectors = self.fill_sectors;
        let (state, ev) = self.parts[home].access_or_insert(line, far);
        let missing = sectors & !state.valid;
        let fill = round_to_units(fill_sectors, missing) & !state.valid;
        state.valid |= fill;
        let newly_dirty = state.dirty == 0;
        self.totals.sectors_made_dirty += (sectors & !state.dirty).count_ones() as u64;
        state.dirty |= sectors;
        self.dram_read(line, fill);
        self.evicted(ev);
        if newly_dirty {
            self.keep_dirty_budget(home, line);
        }
    }

    /// Dirty sectors left in the partitions.
    pub fn dirty_sectors(&self) -> u64 {
        self.parts
            .iter()
            .flat_map(|p| p.lines())
            .map(|l| l.dirty.count_ones() as u64)
            .sum()
    }
}
