//! The L1 data stage: how many passes (wavefronts, `l1tex__data_pipe_lsu_wavefronts`) one warp
//! instruction costs, by the rule measured on the H100 (`validation/l1_wavefronts.cu`,
//! `validation/l1_store_wavefronts.cu`, data in `tests/data/h100/micro/`; docs/model.md):
//!
//! - The lanes are served in groups that move at most 128 bytes: 32 lanes of 1–4-byte accesses,
//!   16 lanes of 8 bytes, 8 lanes of 16 bytes. A group needs as many passes as the largest number
//!   of distinct 4-byte words one of the 32 banks must deliver (lanes reading the same word share
//!   it; a word's bank is its index mod 32).
//! - The lines a group touches are looked up 4 at a time (the tag stage's wavefronts: the H100's
//!   `t_out_wf` is a quarter of the lines, `tests/data/h100/micro/summary.md`), and the bank
//!   rule holds within each 4 lines, not across them: a group's words, in address order, are cut
//!   after every fourth line and the parts' passes add up. Up to 4 lines this is the bank rule
//!   itself (8 doubles × 4 rows over 6 lines, 3 per half warp, take 2 passes as over 4 lines);
//!   it matters for narrow tiles whose rows move across the banks (4 floats × 8 rows, rows 2
//!   banks apart: 2 passes by banks, 4 in two parts of 4 lines; the H200 benchmark of
//!   `validation/wavefront_replay.cu`, `tests/data/h200/wavefront_replay/`, takes 4.9 in
//!   one-warp blocks, all missing, and a column of 32 floats one bank apart 8.9 where the banks
//!   alone give 1).
//! - Loads and stores of the same pattern cost the same; a miss costs no extra pass on an idle SM.
//!
//! What the rule leaves out is added per launch by [`extra_wavefronts`]: the passes that loads
//! cost under load (loads that miss, hits on lines whose fill is still in flight
//! ([`hit_in_flight`]), both scaled down for blocks with few loads in flight) and the passes
//! every warp costs at launch.

use crate::input::hw::L1Config;
use crate::launch::Launch;
use crate::metrics::SECTOR_BYTES;
use crate::sim::cache::LineState;
use crate::sim::counters::L1Counters;

/// Banks of the L1 data array, 4 bytes wide.
const BANKS: usize = 32;

/// Lines the tag stage looks up per wavefront (the H100's `l1tex__t_output_wavefronts` per
/// load instruction is a quarter of its lines: strides of 8, 16 and 32 floats, 8, 16 and 32
/// lines, take 2, 4 and 8; `tests/data/h100/micro/summary.md`, column t_out_wf). The bank rule
/// holds within the lines of one such wavefront ([`passes`]).
const LINES_PER_TAG_WAVEFRONT: u64 = 4;

/// Lanes served together for an access of `bytes` per lane: 128 bytes' worth, at most 32.
#[inline]
fn group_lanes(bytes: u32) -> usize {
    (128 / bytes.clamp(4, 16)) as usize
}

/// Passes one warp instruction needs in the data stage: the bank rule over the active lanes
/// (`mask`) of `addrs`, per group of lanes and within each 4 lines of the group (one tag-stage
/// wavefront's lines; 0 when no lane is active).
pub fn passes(addrs: &[u64; 32], mask: u32, bytes: u32) -> u64 {
    sum_over_groups(mask, bytes, |first, m| {
        if m == 0 {
            0
        } else if bytes <= 16 && contiguous(addrs, first, m, bytes) {
            // A run of at most 128 bytes: every bank delivers at most one word.
            1
        } else {
            group_passes(addrs, first, m, bytes)
        }
    })
}

/// Whether [`passes`] of these lanes stays the same wherever the warp starts, by whole words:
/// true when no lane group touches more than 4 lines (one tag-stage wavefront's) at any word
/// offset in a line, so that the bank rule alone decides (moving every lane by whole words only
/// renames the banks). A table of passes worked out once for a pattern of lane offsets holds
/// for every base only then.
pub fn passes_ignore_word_offset(addrs: &[u64; 32], mask: u32, bytes: u32) -> bool {
    sum_over_groups(mask, bytes, |first, m| {
        let mut words = Vec::new();
        let mut rest = m;
        while rest != 0 {
            let l = first + rest.trailing_zeros() as usize;
            rest &= rest - 1;
            words.extend((addrs[l] >> 2)..=((addrs[l] + bytes.max(1) as u64 - 1) >> 2));
        }
        words.sort_unstable();
        words.dedup();
        // 32 words to a line: every offset of the first word in its line.
        let most_lines = (0..32u64)
            .map(|offset| {
                let mut lines = words.iter().map(|w| (w + offset) >> 5).collect::<Vec<_>>();
                lines.dedup();
                lines.len() as u64
            })
            .max()
            .unwrap_or(0);
        u64::from(most_lines > LINES_PER_TAG_WAVEFRONT)
    }) == 0
}

/// The sum of `group(first lane, active lanes of the group)` over the lane groups of an access
/// of `bytes` per lane ([`group_lanes`]).
#[inline]
fn sum_over_groups(mask: u32, bytes: u32, group: impl Fn(usize, u32) -> u64) -> u64 {
    let g = group_lanes(bytes);
    let group_mask = if g == 32 { u32::MAX } else { (1u32 << g) - 1 };
    (0..32)
        .step_by(g)
        .map(|first| group(first, (mask >> first) & group_mask))
        .sum()
}

/// Whether the active lanes of a group read one contiguous run, lane after lane (the common
/// unit-stride case, answered without sorting).
#[inline]
fn contiguous(addrs: &[u64; 32], first: usize, m: u32, bytes: u32) -> bool {
    let base_lane = first + m.trailing_zeros() as usize;
    let base = addrs[base_lane];
    let mut rest = m;
    while rest != 0 {
        let l = first + rest.trailing_zeros() as usize;
        rest &= rest - 1;
        if addrs[l] != base.wrapping_add(((l - base_lane) as u64) * bytes as u64) {
            return false;
        }
    }
    // Starting on a word boundary, a run of at most 128 bytes covers at most 32 words; one that
    // starts mid-word may take a 33rd (runs of 1- or 2-byte accesses are at most 64 bytes).
    base.is_multiple_of(4) || bytes < 4
}

/// The bank rule for one group: the largest count of distinct words in one bank, summed over
/// the group's parts of [`LINES_PER_TAG_WAVEFRONT`] lines (its words in address order).
fn group_passes(addrs: &[u64; 32], first: usize, m: u32, bytes: u32) -> u64 {
    let words_per_lane = (bytes / 4).max(1) as u64;
    // 8 lanes of at most 128 bytes, each one word more when misaligned.
    let mut words = [0u64; 8 * 33];
    let mut n = 0;
    let mut rest = m;
    while rest != 0 {
        let l = first + rest.trailing_zeros() as usize;
        rest &= rest - 1;
        let w0 = addrs[l] >> 2;
        // An access that is not word-aligned touches one word more.
        let last = (addrs[l] + bytes as u64 - 1) >> 2;
        for w in w0..=last.max(w0 + words_per_lane - 1) {
            if n < words.len() {
                words[n] = w;
                n += 1;
            }
        }
    }
    let words = &mut words[..n];
    words.sort_unstable();
    banks_within_tag_wavefronts(words, true)
}

/// The bank rule over `words` (sorted, 4-byte word addresses), within each
/// [`LINES_PER_TAG_WAVEFRONT`] lines: each part's busiest bank, summed. `share`: lanes on one
/// word share it (loads and stores) rather than each counting (atomics).
fn banks_within_tag_wavefronts(words: &[u64], share: bool) -> u64 {
    // 32 words to a 128-byte line.
    let line_of = |w: u64| w >> 5;
    let mut per_bank = [0u8; BANKS];
    let (mut total, mut prev, mut lines, mut line) = (0, None, 0, None);
    for &w in words {
        if share && prev == Some(w) {
            continue;
        }
        prev = Some(w);
        if line != Some(line_of(w)) {
            line = Some(line_of(w));
            lines += 1;
            if lines > LINES_PER_TAG_WAVEFRONT {
                // The next tag wavefront: the banks start afresh.
                total += per_bank.iter().copied().max().unwrap_or(0) as u64;
                per_bank = [0; BANKS];
                lines = 1;
            }
        }
        per_bank[(w % BANKS as u64) as usize] += 1;
    }
    total + per_bank.iter().copied().max().unwrap_or(0) as u64
}

/// What one shared-memory warp instruction (`LDS`/`STS`) costs the data pipe.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SharedCost {
    /// Wavefronts (`l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}`).
    pub wavefronts: u64,
    /// Bank conflicts (`l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}`): the
    /// wavefronts beyond those the instruction would take if no bank held more than one word.
    pub conflicts: u64,
}

/// The shared-memory bank rule, measured on the H200 (`tests/data/h200/shared/`, 384 warp
/// instructions, every one exact):
///
/// 1. The warp is served in phases of 128 bytes' worth of lanes: all 32 lanes for accesses of
///    1–4 bytes, half-warps for 8 bytes, quarter-warps for 16.
/// 2. A phase takes as many wavefronts as the most distinct 4-byte words one of the 32 banks
///    must deliver to its active lanes (lanes on one word share it: a broadcast); a phase with
///    no active lane takes none.
/// 3. Loads of 8 and 16 bytes whose every quad of lanes (0–3, 4–7, …) reads at most two distinct
///    addresses pair their phases (the two halves of an 8-byte load; quarters 0+1 and 2+3 of a
///    16-byte one): a pair whose lanes together need at most one word per bank takes one
///    wavefront (one that would need more, not measured, takes its phases' sum). Stores never
///    pair.
/// 4. Bank conflicts are the wavefronts beyond one per phase (per pair where rule 3 pairs).
///
/// `addrs` are the lanes' byte addresses in shared memory, `mask` the active lanes.
pub fn shared_wavefronts(addrs: &[u64; 32], mask: u32, bytes: u32, is_store: bool) -> SharedCost {
    let phase_lanes = group_lanes(bytes);
    let phases = 32 / phase_lanes;
    let phase_mask = |p: usize| {
        let m = if phase_lanes == 32 {
            u32::MAX
        } else {
            (1u32 << phase_lanes) - 1
        };
        mask & (m << (p * phase_lanes))
    };
    let pairs = !is_store && phases > 1 && quads_read_at_most_two_addresses(addrs, mask);
    let mut cost = SharedCost::default();
    let mut p = 0;
    while p < phases {
        if pairs {
            let (a, b) = (phase_mask(p), phase_mask(p + 1));
            if a | b != 0 {
                let together = bank_depth(addrs, a | b, bytes);
                let w = if together <= 1 {
                    together
                } else {
                    bank_depth(addrs, a, bytes) + bank_depth(addrs, b, bytes)
                };
                cost.wavefronts += w;
                cost.conflicts += w - 1;
            }
            p += 2;
        } else {
            let w = bank_depth(addrs, phase_mask(p), bytes);
            cost.wavefronts += w;
            cost.conflicts += w.saturating_sub(1);
            p += 1;
        }
    }
    cost
}

/// Whether every quad of lanes (0–3, 4–7, …) reads at most two distinct addresses among its
/// active lanes (rule 3 of [`shared_wavefronts`]).
fn quads_read_at_most_two_addresses(addrs: &[u64; 32], mask: u32) -> bool {
    (0..32).step_by(4).all(|q| {
        let mut seen: [Option<u64>; 2] = [None; 2];
        (q..q + 4).filter(|l| mask >> l & 1 == 1).all(|l| {
            let a = Some(addrs[l]);
            if seen.contains(&a) {
                true
            } else if let Some(free) = seen.iter_mut().find(|s| s.is_none()) {
                *free = a;
                true
            } else {
                false
            }
        })
    })
}

/// The most distinct 4-byte words one bank must deliver to the lanes of `m` (all 32 lanes may
/// be in it), each lane reading `bytes` from its address; 0 when `m` is empty.
fn bank_depth(addrs: &[u64; 32], m: u32, bytes: u32) -> u64 {
    let mut words = [0u64; 32 * 4];
    let mut n = 0;
    let mut rest = m;
    while rest != 0 {
        let l = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        let first = addrs[l] >> 2;
        let last = (addrs[l] + bytes.max(1) as u64 - 1) >> 2;
        for w in first..=last.min(first + 3) {
            words[n] = w;
            n += 1;
        }
    }
    let words = &mut words[..n];
    words.sort_unstable();
    let mut per_bank = [0u8; BANKS];
    let mut prev = None;
    for &w in words.iter() {
        if prev != Some(w) {
            per_bank[(w % BANKS as u64) as usize] += 1;
            prev = Some(w);
        }
    }
    per_bank.iter().copied().max().unwrap_or(0) as u64
}

/// Passes of an atomic warp instruction: the bank rule, except that lanes on the same word do
/// not share it (measured on the H100: 32 lanes adding to one word take 32 passes, 32 distinct
/// words 1, stride 8 words 8; tests/data/h100/micro/atomics/), counted within each 4 lines as
/// for loads ([`passes`]): 32 words 7 apart, over 7 lines without a bank conflict, take 2 passes,
/// not 1 (the H100's `red_bins7`; the H200's histogram pattern on 256 bins,
/// tests/data/h200/atomics_contention: 2.00 per instruction).
pub fn atomic_passes(addrs: &[u64; 32], mask: u32, bytes: u32) -> u64 {
    sum_over_groups(mask, bytes, |first, m| {
        // Each word of each lane's access (atomics are naturally aligned), in address order;
        // lanes on one word each count.
        let mut words = [0u64; 32 * 4];
        let mut n = 0;
        let mut rest = m;
        while rest != 0 {
            let l = first + rest.trailing_zeros() as usize;
            rest &= rest - 1;
            for w in 0..(bytes / 4).clamp(1, 4) as u64 {
                words[n] = (addrs[l] >> 2) + w;
                n += 1;
            }
        }
        let words = &mut words[..n];
        words.sort_unstable();
        banks_within_tag_wavefronts(words, false)
    })
}

/// The data-pipe wavefronts the L1 counters `c` hold, instruction by instruction: the global
/// accesses' passes by the measured rule, the shared accesses' by the bank rule, and each warp
/// shuffle's `wavefronts_per_shuffle` (one on the H200: `validation/warp_ops_probe.cu`), and
/// each instruction issued with no lane active `wavefronts_per_predicated_off` (one on the H200:
/// `validation/predicated_probe.cu`). What a launch adds beyond them is [`extra_wavefronts`].
pub fn instruction_wavefronts(l1: &L1Config, c: &L1Counters) -> u64 {
    c.data_passes
        + c.shared_load_wavefronts
        + c.shared_store_wavefronts
        + (l1.wavefronts_per_shuffle * c.shuffles as f64).round() as u64
        + (l1.wavefronts_per_predicated_off * c.predicated_off as f64).round() as u64
}

/// Whether a load's line in the L1 (`st`, before the load's sectors are marked valid) is a hit
/// whose data may still be in flight: every sector it wants is present (`missing == 0`) but the
/// SM's last miss on the line was at most `window` ticks before `tick`. Such a load waits for
/// the fill as a miss does, and is replayed like one (`in_flight_hit_wavefronts`): without
/// this, a warp that reads a line a neighbour warp just missed on counted as a plain hit, and
/// the 2-D and many-stream kernels whose warps share lines came out short (docs/model.md).
///
/// A load that misses sectors of the line starts a new window. The tick is kept in 16 bits: a
/// hit past the window marks the line filled, so that the wrap cannot bring an old miss back
/// (only a line not touched for 65536 ticks and then hit within the window of the wrap could
/// be misjudged; `window` is at most 4096).
#[inline]
pub fn hit_in_flight(st: &mut LineState, missing: u8, tick: u64, window: u32) -> bool {
    let now = tick as u16;
    if missing != 0 {
        st.missed_at = now.to_le_bytes();
        st.filled = false;
        return false;
    }
    if st.filled {
        return false;
    }
    if u32::from(now.wrapping_sub(u16::from_le_bytes(st.missed_at))) <= window {
        return true;
    }
    st.filled = true;
    false
}

/// A launch's counts that [`extra_wavefronts`] charges for.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LaunchTerms {
    /// Lines of the load instructions that miss (`load_miss_request_lines`).
    pub miss_request_lines: u64,
    /// Lines with some sectors present and some missing (`load_partial_lines`).
    pub partial_lines: u64,
    /// Lines of loads that hit while the line's fill was in flight (`load_in_flight_lines`,
    /// [`hit_in_flight`]).
    pub in_flight_lines: u64,
    /// Load instructions one block issues, on average (load requests / blocks).
    pub load_instructions_per_block: f64,
    /// Sectors the loads miss in the L1 (`load_miss_sectors`).
    pub load_miss_sectors: u64,
    /// Sectors the launch writes: `store_sectors` and `atomic_sectors`, what its stores write
    /// and its atomics update, and the sectors its shared stores' bytes would fill
    /// (`shared_store_bytes`: the tiled matrix products and tree reductions store to shared
    /// memory what they load, and replay as the copies do; a warp's sum stored by one lane
    /// counts a few bytes).
    pub written_sectors: u64,
    /// Warps launched, guarded-off ones too.
    pub warps_launched: u64,
    /// Special registers each warp reads at a wavefront each
    /// ([`crate::launch::Launch::special_register_reads`]).
    pub special_register_reads: u32,
}

impl LaunchTerms {
    /// The terms of `launch` from its L1 counters and the warps it launched (counters without
    /// hits and misses, such as `sm_stage::instruction_counts`' own, give no replays).
    pub fn of(launch: &Launch, l1: &L1Counters, warps_launched: u64) -> LaunchTerms {
        LaunchTerms {
            miss_request_lines: l1.load_miss_request_lines,
            partial_lines: l1.load_partial_lines,
            in_flight_lines: l1.load_in_flight_lines,
            load_instructions_per_block: l1.load_requests as f64
                / launch.total_blocks.max(1) as f64,
            load_miss_sectors: l1.load_miss_sectors,
            written_sectors: l1.store_sectors
                + l1.atomic_sectors
                + l1.shared_store_bytes.div_ceil(SECTOR_BYTES),
            warps_launched,
            special_register_reads: launch.special_register_reads,
        }
    }
}

/// What a launch costs the data stage beyond [`passes`], the per-instruction rule measured on
/// an idle SM:
/// - under load a load instruction that misses is run again, about
///   `missing_request_line_wavefronts` passes per line it touches (fitted across kernels,
///   docs/model.md), in full only where the launch writes at least `replay_store_share` of a
///   sector per missing load sector (its stores, atomics and shared stores:
///   [`LaunchTerms::written_sectors`]), in proportion below (the read-only streams, the naive
///   matrix product and the shuffle reductions take the bank rule's passes and nothing more for
///   their misses; copies, stencils and what stores its loads to shared memory pay), and a line
///   with some sectors present and some missing takes `partial_line_wavefronts` more (served in
///   two goes: what is there, then the fill); both times `min(1, loads per block /
///   replay_block_loads)`: blocks that put few loads in flight replay less (the H100 probe: a
///   2-line load costs 0.3 passes more in blocks of one warp, 1.1–1.3 in blocks of eight;
///   one-warp triad and scale blocks are at the bank rule), and so does a line that hits while
///   its fill is in flight ([`hit_in_flight`]), `in_flight_hit_wavefronts` each;
/// - every launched warp, guarded-off ones too, costs `wavefronts_per_special_register` per
///   special register the kernel reads with an `S2R` (measured on the H200: a kernel reading
///   threadIdx.x one per warp, x, y and z three, whatever the `blockIdx` components it reads;
///   one reading blockIdx alone none; `%laneid` one).
pub fn extra_wavefronts(l1: &L1Config, t: &LaunchTerms) -> u64 {
    let in_flight = (t.load_instructions_per_block / l1.replay_block_loads).min(1.0);
    let storing = l1.replay_store_share.map_or(1.0, |share| {
        (t.written_sectors as f64 / (share * t.load_miss_sectors.max(1) as f64)).min(1.0)
    });
    let replays = (l1.missing_request_line_wavefronts * t.miss_request_lines as f64 * storing
        + l1.partial_line_wavefronts * t.partial_lines as f64
        + l1.in_flight_hit_wavefronts * t.in_flight_lines as f64)
        * in_flight;
    let launch = l1.wavefronts_per_special_register
        * (t.warps_launched * t.special_register_reads as u64) as f64;
    (replays + launch).round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lane l of `width` lanes per row reads element (l % width) * stride + (l / width) * pitch of
    /// `bytes`, from `offset`; all 32 lanes active. Returns the addresses and distinct lines.
    fn pattern(bytes: u32, stride: u64, width: u64, pitch: u64, offset: u64) -> ([u64; 32], usize) {
        let mut a = [0u64; 32];
        for (l, x) in a.iter_mut().enumerate() {
            let l = l as u64;
            *x = (1 << 20) + offset + ((l % width) * stride + (l / width) * pitch) * bytes as u64;
        }
        let mut lines: Vec<u64> = a
            .iter()
            .flat_map(|&x| [x >> 7, (x + bytes as u64 - 1) >> 7])
            .collect();
        lines.sort_unstable();
        lines.dedup();
        (a, lines.len())
    }

    fn cost(bytes: u32, stride: u64, width: u64, pitch: u64, offset: u64) -> u64 {
        passes(
            &pattern(bytes, stride, width, pitch, offset).0,
            u32::MAX,
            bytes,
        )
    }

    // Every expected value below is the H100's measured warm-load count per instruction
    // (tests/data/h100/micro/summary.md, "L1 wavefronts per load instruction", column
    // data_wf_lgds), worked out by hand from the rule in the module comment.

    #[test]
    fn atomics_count_every_lane_on_a_word_and_the_banks_within_each_four_lines() {
        let at = |f: &dyn Fn(u64) -> u64, bytes| {
            let mut a = [0u64; 32];
            for (l, x) in a.iter_mut().enumerate() {
                *x = (1 << 20) + f(l as u64);
            }
            atomic_passes(&a, u32::MAX, bytes)
        };
        // tests/data/h100/micro/atomics: one word 32, distinct words 1, stride 8 words 8.
        assert_eq!(at(&|_| 0, 4), 32);
        assert_eq!(at(&|l| 4 * l, 4), 1);
        assert_eq!(at(&|l| 32 * l, 4), 8);
        // (7 l) mod 256 ints: 7 lines, no bank twice, 2 passes (H100 and H200).
        assert_eq!(at(&|l| 4 * (7 * l % 256), 4), 2);
        // Doubles, distinct: two groups of 16 lanes, one pass each.
        assert_eq!(at(&|l| 8 * l, 8), 2);
    }

    #[test]
    fn unit_stride_floats_take_one_pass_and_doubles_two() {
        // 32 floats: 32 consecutive words, one per bank.
        assert_eq!(cost(4, 1, 32, 0, 0), 1);
        // 32 doubles: two groups of 16 lanes, 32 words each.
        assert_eq!(cost(8, 1, 32, 0, 0), 2);
    }

    #[test]
    fn strided_floats_cost_one_pass_per_word_in_the_busiest_bank() {
        // Stride 2: words 0, 2, …, 62 → banks 0, 2, …, 30 twice each.
        assert_eq!(cost(4, 2, 32, 0, 0), 2);
        assert_eq!(cost(4, 4, 32, 0, 0), 4);
        assert_eq!(cost(4, 8, 32, 0, 0), 8);
        // Stride 32: every lane in bank 0.
        assert_eq!(cost(4, 32, 32, 0, 0), 32);
    }

    #[test]
    fn strided_doubles_count_per_half_warp() {
        // Stride 2 doubles = 4 words: per 16 lanes words 4l, 4l+1 → 8 banks … 2 per bank; × 2.
        assert_eq!(cost(8, 2, 32, 0, 0), 4);
        assert_eq!(cost(8, 4, 32, 0, 0), 8);
        assert_eq!(cost(8, 8, 32, 0, 0), 16);
        // Stride 16 and 32: each half warp piles 16 words into banks 0 and 1.
        assert_eq!(cost(8, 16, 32, 0, 0), 32);
        assert_eq!(cost(8, 32, 32, 0, 0), 32);
    }

    #[test]
    fn misaligned_rows_cost_what_aligned_ones_do() {
        for off in [4, 8, 16, 64] {
            assert_eq!(cost(4, 1, 32, 0, off), 1, "float offset {off}");
        }
        for off in [8, 16, 64] {
            assert_eq!(cost(8, 1, 32, 0, off), 2, "double offset {off}");
        }
    }

    #[test]
    fn sixteen_byte_vectors_are_served_eight_lanes_at_a_time() {
        // float4 / double2, unit stride: 4 groups of 8 lanes × 16 B = 128 B each.
        assert_eq!(cost(16, 1, 32, 0, 0), 4);
        // Stride 2 (32 B apart): per group words 8l..8l+3 → every bank twice.
        assert_eq!(cost(16, 2, 32, 0, 0), 8);
        // float2, unit and stride 2.
        assert_eq!(cost(8, 1, 32, 0, 0), 2);
        assert_eq!(cost(8, 2, 32, 0, 0), 4);
    }

    #[test]
    fn broadcasts_cost_one_pass_per_group() {
        assert_eq!(cost(4, 0, 32, 0, 0), 1);
        assert_eq!(cost(8, 0, 32, 0, 0), 2);
        assert_eq!(cost(16, 0, 32, 0, 0), 4);
    }

    #[test]
    fn two_dimensional_warps_pay_for_banks_not_lines() {
        // 8 doubles × 4 rows, rows 264 doubles apart (bank shift 16): each half warp's two rows
        // fill all 32 banks once: 2 passes, whether the rows lie in 4 lines (offset 0) or 6.
        for off in [0, 24, 32, 40] {
            assert_eq!(cost(8, 1, 8, 264, off), 2, "offset {off}");
            assert_eq!(cost(8, 1, 16, 264, off), 2, "offset {off}");
        }
        assert_eq!(pattern(8, 1, 8, 264, 24).1, 6);
        // A column of 32 doubles 264 apart: banks b, b+1 and b+16, b+17 take 8 words each per half
        // warp (the store probe's 1-wide rows cost 16 per instruction).
        assert_eq!(cost(8, 1, 1, 264, 0), 16);
        // Rows 256 doubles apart (no bank shift): one bank pair takes all 16 words of a half warp.
        assert_eq!(cost(8, 1, 1, 256, 0), 32);
    }

    #[test]
    fn banks_count_within_each_four_lines_of_a_narrow_tile() {
        // The H200's narrow tiles (tests/data/h200/wavefront_replay/, one-warp blocks, every
        // load missing; measured passes per load in the comments, the miss replays beyond).
        // 4 floats × 8 rows, rows 4098 floats apart (2 banks): rows 0–3 fill banks 0–9, the
        // busiest (2–7) twice; rows 4–7 alike 8 banks on: 2 + 2 where all 8 lines give 2 (4.9).
        assert_eq!(cost(4, 1, 4, 4098, 0), 4);
        // A column of 32 floats one bank apart: every bank once, 8 parts of 4 lines: 8 (8.9).
        assert_eq!(cost(4, 1, 1, 4097, 0), 8);
        // 2 floats × 16 rows one bank apart: each part of 4 rows holds banks 0–4, 1–3 twice: 8
        // (8.9); 2 banks apart: once each: 4 (4.9).
        assert_eq!(cost(4, 1, 2, 4097, 0), 8);
        assert_eq!(cost(4, 1, 2, 4098, 0), 4);
        // 4 floats × 8 rows one bank apart: bank 3 holds rows 0–3 of the first part: 4 + 4 (8.0).
        assert_eq!(cost(4, 1, 4, 4097, 0), 8);
        // Rows that stay in their banks pile up as before: 32 rows 4096 floats apart, 32 (32.4).
        assert_eq!(cost(4, 1, 1, 4096, 0), 32);
        // Not caught: rows 8 banks apart take about twice this (15.4, 7.8, 3.9, 1.9 measured).
        assert_eq!(cost(4, 1, 1, 4104, 0), 8);
        assert_eq!(cost(4, 1, 8, 4104, 0), 1);
        // Where the tile starts in a line now matters: 4 floats × 8 rows 130 floats apart (rows
        // 2 banks apart, each in a line of its own) take 2 + 2; started 120 bytes into a line,
        // row 0 (banks 30, 31, 0, 1) straddles two lines, and the parts hold rows 0–2 (banks
        // 0–3 twice), 3–6 (banks 6–11 twice) and 7: 2 + 2 + 1.
        let tile = |offset| pattern(4, 1, 4, 130, offset).0;
        assert_eq!(passes(&tile(0), u32::MAX, 4), 4);
        assert_eq!(passes(&tile(120), u32::MAX, 4), 5);
        assert!(!passes_ignore_word_offset(&tile(0), u32::MAX, 4));
        // A unit-stride warp or 8 doubles × 4 rows reach over at most 4 lines at any offset.
        assert!(passes_ignore_word_offset(
            &pattern(4, 1, 32, 0, 0).0,
            u32::MAX,
            4
        ));
        assert!(passes_ignore_word_offset(
            &pattern(8, 1, 8, 264, 24).0,
            u32::MAX,
            8
        ));
    }

    #[test]
    fn accesses_wider_than_sixteen_bytes_count_every_word() {
        // 8 lanes of 128 contiguous bytes each: 256 words, 8 in every bank, per group; 4 groups.
        assert_eq!(cost(128, 1, 32, 0, 0), 32);
        // 32 bytes per lane: 8 lanes × 8 words = 64 words, 2 per bank; 4 groups.
        assert_eq!(cost(32, 1, 32, 0, 0), 8);
    }

    fn l1_config() -> L1Config {
        crate::input::hw::HwConfig::load("h200").unwrap().l1
    }

    #[test]
    fn blocks_with_few_loads_in_flight_replay_in_proportion() {
        let mut l1 = l1_config();
        (l1.missing_request_line_wavefronts, l1.replay_block_loads) = (0.25, 8.0);
        (l1.partial_line_wavefronts, l1.in_flight_hit_wavefronts) = (1.0, 0.5);
        l1.replay_store_share = None;
        l1.wavefronts_per_special_register = 1.0;
        let t = LaunchTerms {
            miss_request_lines: 800,
            load_instructions_per_block: 8.0,
            ..LaunchTerms::default()
        };
        // 8 loads per block: the full 0.25 per line.
        assert_eq!(extra_wavefronts(&l1, &t), 200);
        // 2 loads per block (a one-warp triad): a quarter of it; more than 8: still the full rate.
        let few = LaunchTerms {
            load_instructions_per_block: 2.0,
            ..t
        };
        assert_eq!(extra_wavefronts(&l1, &few), 50);
        let many = LaunchTerms {
            load_instructions_per_block: 100.0,
            ..t
        };
        assert_eq!(extra_wavefronts(&l1, &many), 200);
        // Partial lines (1 each) and in-flight hits (0.5 each) are replays too, a quarter of 8
        // and of 8; the 2 special registers read by 10 warps are not scaled.
        let all = LaunchTerms {
            partial_lines: 8,
            in_flight_lines: 16,
            warps_launched: 10,
            special_register_reads: 2,
            ..few
        };
        assert_eq!(extra_wavefronts(&l1, &all), 50 + 2 + 2 + 20);
    }

    #[test]
    fn loads_that_miss_replay_only_as_far_as_the_launch_stores() {
        let mut l1 = l1_config();
        (l1.missing_request_line_wavefronts, l1.replay_block_loads) = (0.25, 8.0);
        (l1.partial_line_wavefronts, l1.in_flight_hit_wavefronts) = (1.0, 0.5);
        l1.replay_store_share = Some(0.05);
        let copy = LaunchTerms {
            miss_request_lines: 800,
            partial_lines: 8,
            load_instructions_per_block: 8.0,
            load_miss_sectors: 3200,
            written_sectors: 3200,
            ..LaunchTerms::default()
        };
        // A copy stores a sector per missing one: its misses replay in full (0.25 a line), its
        // partly present lines too.
        assert_eq!(extra_wavefronts(&l1, &copy), 200 + 8);
        // Stores of 1 % of the missing sectors (a warp's sum written by one lane): a fifth of
        // the 5 % from which the replays are whole; the partly present lines are not scaled.
        let read_only = LaunchTerms {
            written_sectors: 32,
            ..copy
        };
        assert_eq!(extra_wavefronts(&l1, &read_only), 40 + 8);
        // A launch that never stores (nor sends atomics, which count as stores) replays none
        // of its misses; with no share in the config every launch replays in full.
        let no_stores = LaunchTerms {
            written_sectors: 0,
            ..copy
        };
        assert_eq!(extra_wavefronts(&l1, &no_stores), 8);
        l1.replay_store_share = None;
        assert_eq!(extra_wavefronts(&l1, &no_stores), 200 + 8);
    }

    #[test]
    fn a_hit_within_the_window_after_a_miss_is_in_flight() {
        let mut st = LineState::default();
        // The miss at tick 100 opens the window; hits 1 and 63 ticks on are in flight.
        assert!(!hit_in_flight(&mut st, 0b0011, 100, 63));
        assert!(hit_in_flight(&mut st, 0, 101, 63));
        assert!(hit_in_flight(&mut st, 0, 163, 63));
        // 64 ticks on the fill has arrived, and stays arrived.
        assert!(!hit_in_flight(&mut st, 0, 164, 63));
        assert!(st.filled);
        assert!(!hit_in_flight(&mut st, 0, 100 + 65536, 63));
        // A later miss of other sectors opens a new window.
        assert!(!hit_in_flight(&mut st, 0b1100, 70_000, 63));
        assert!(hit_in_flight(&mut st, 0, 70_010, 63));
    }

    #[test]
    fn the_window_survives_the_wrap_of_sixteen_bits() {
        let mut st = LineState::default();
        // Missed 10 ticks before a multiple of 65536, hit 20 ticks later: 20 ticks apart.
        assert!(!hit_in_flight(&mut st, 0b0001, 3 * 65536 - 10, 63));
        assert!(hit_in_flight(&mut st, 0, 3 * 65536 + 10, 63));
        assert!(!hit_in_flight(&mut st, 0, 3 * 65536 + 54, 63));
    }

    #[test]
    fn inactive_lanes_cost_nothing() {
        let a = [0u64; 32];
        assert_eq!(passes(&a, 0, 8), 0);
        // Only the second half warp active: one group.
        let mut b = [0u64; 32];
        for (l, x) in b.iter_mut().enumerate() {
            *x = 4096 + 8 * l as u64;
        }
        assert_eq!(passes(&b, 0xffff_0000, 8), 1);
    }

    /// Lane addresses of a pattern of `tests/data/h200/shared/README.md`: lane `l` accesses
    /// element `index(l)` of `width` bytes from address 0.
    fn shared_pattern(width: u32, pattern: &str, a: u64) -> [u64; 32] {
        std::array::from_fn(|l| {
            let l = l as u64;
            let index = match pattern {
                "stride" => l * a,
                "group" => l / a,
                "mod" => l % a,
                "perm" => (l * a) % 32,
                "xor" => l ^ a,
                "pad" => (l % 8) * a + l / 8,
                "quad0" if l < 4 => l % a,
                "quad0" => 0,
                "first" if l < a => l,
                "first" => 0,
                other => panic!("unknown pattern {other}"),
            };
            index * width as u64
        })
    }

    /// Wavefronts of a full warp's shared load (`false`) or store (`true`) of a pattern.
    fn shared(store: bool, width: u32, pattern: &str, a: u64) -> u64 {
        let addrs = shared_pattern(width, pattern, a);
        shared_wavefronts(&addrs, u32::MAX, width, store).wavefronts
    }

    #[test]
    fn every_measured_shared_instruction_follows_the_bank_rule() {
        let csv = include_str!("../../tests/data/h200/shared/banks.csv");
        let mut rows = 0;
        for line in csv.lines().skip(1) {
            let f: Vec<&str> = line.split(',').collect();
            let store = f[0] == "st";
            let width: u32 = f[1].parse().unwrap();
            let arg: u64 = f[3].parse().unwrap();
            let lanes: u32 = f[4].parse().unwrap();
            let [instructions, wavefronts, conflicts] =
                [5, 6, 7].map(|i| f[i].parse::<u64>().unwrap());
            let mask = if lanes == 32 {
                u32::MAX
            } else {
                (1 << lanes) - 1
            };
            let addrs = shared_pattern(width, f[2], arg);
            let cost = shared_wavefronts(&addrs, mask, width, store);
            assert_eq!(
                (
                    cost.wavefronts * instructions,
                    cost.conflicts * instructions
                ),
                (wavefronts, conflicts),
                "{line}"
            );
            rows += 1;
        }
        assert_eq!(rows, 384);
    }

    #[test]
    fn shared_strides_cost_the_busiest_bank() {
        // 4 bytes: stride 1 or any odd stride spreads 32 words over 32 banks; stride 2 puts two
        // words in each even bank, stride 32 all 32 in bank 0.
        assert_eq!(shared(false, 4, "stride", 1), 1);
        assert_eq!(shared(false, 4, "stride", 3), 1);
        assert_eq!(shared(false, 4, "stride", 2), 2);
        assert_eq!(shared(false, 4, "stride", 32), 32);
        // Stride 33 (a padded tile's column) is odd: conflict-free.
        assert_eq!(shared(false, 4, "stride", 33), 1);
        assert_eq!(shared(true, 4, "stride", 32), 32);
        // 8 rows x 4 columns of a tile, lane l at row l % 8, column l / 8: pitch 32 puts each
        // column's 8 words in one bank (8); pitch 33 shifts rows a bank apart, so banks
        // r + c (r < 8, c < 4) hold up to 4 words (rows 3..7 meet 4 columns).
        assert_eq!(shared(false, 4, "pad", 32), 8);
        assert_eq!(shared(false, 4, "pad", 33), 4);
    }

    #[test]
    fn shared_broadcasts_share_a_word() {
        // Every lane on one word: one wavefront; four lanes per word: still one per bank.
        assert_eq!(shared(false, 4, "stride", 0), 1);
        assert_eq!(shared(false, 4, "group", 4), 1);
        assert_eq!(shared(true, 4, "stride", 0), 1);
        let c = shared_wavefronts(&shared_pattern(4, "stride", 2), u32::MAX, 4, false);
        assert_eq!(
            c,
            SharedCost {
                wavefronts: 2,
                conflicts: 1
            }
        );
    }

    #[test]
    fn wide_shared_accesses_go_in_phases_and_loads_may_pair_them() {
        // 8 bytes, unit stride: two half-warp phases of 128 bytes, no conflict.
        assert_eq!(shared(false, 8, "stride", 1), 2);
        // 16 bytes: four quarter-warp phases.
        assert_eq!(shared(false, 16, "stride", 1), 4);
        // One address: a load's phases pair (every quad reads one address), a store's never do.
        assert_eq!(shared(false, 8, "stride", 0), 1);
        assert_eq!(shared(true, 8, "stride", 0), 2);
        assert_eq!(shared(false, 16, "stride", 0), 2);
        assert_eq!(shared(true, 16, "stride", 0), 4);
        // Lanes two apart share an element (two addresses per quad): paired, one wavefront;
        // four addresses per quad keep the phases apart.
        assert_eq!(shared(false, 8, "mod", 2), 1);
        assert_eq!(shared(false, 8, "mod", 4), 2);
        // 16 bytes in an 8 x 4 tile of pitch 32 elements (128 words): each quarter's 8 lanes
        // are 8 rows of one column, 8 words in each of 4 banks: 8 per phase, 4 phases.
        assert_eq!(shared(false, 16, "pad", 32), 32);
        // An inactive half costs nothing.
        let addrs = shared_pattern(8, "stride", 1);
        assert_eq!(shared_wavefronts(&addrs, 0xffff, 8, true).wavefronts, 1);
        assert_eq!(
            shared_wavefronts(&addrs, 0, 8, false),
            SharedCost::default()
        );
    }
}
