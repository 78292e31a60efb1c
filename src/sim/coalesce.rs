//! The coalescer: one warp instruction's lane addresses → the 128-byte lines and 32-byte sectors
//! it touches (what `l1tex__t_sectors_*` count), with byte masks for stores.

use crate::input::hw::WARP_SIZE;
use crate::metrics::{LINE_SHIFT, SECTOR_SHIFT};

/// One line touched by a warp instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineRequest {
    /// Line address (byte address >> 7).
    pub line: u64,
    /// Sectors touched (bit i = bytes 32i..32i+31).
    pub sectors: u8,
    /// Bytes touched (bit i = byte i of the line); only filled for stores.
    pub bytes: u128,
}

impl LineRequest {
    /// Sectors whose 32 bytes are all written by this request.
    #[inline]
    pub fn full_sectors(&self) -> u8 {
        full_sectors(self.bytes)
    }
}

/// Sectors of a byte mask whose 32 bytes are all set.
#[inline]
pub fn full_sectors(bytes: u128) -> u8 {
    let mut full = 0u8;
    for s in 0..4 {
        if (bytes >> (32 * s)) as u32 == u32::MAX {
            full |= 1 << s;
        }
    }
    full
}

/// Mask of bytes `lo..hi` (0 ≤ lo < hi ≤ 128) of a line.
#[inline]
fn byte_range(lo: u32, hi: u32) -> u128 {
    let width = hi - lo;
    let ones = if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    };
    ones << lo
}

/// Sectors covering bytes `lo..hi` of a line.
#[inline]
fn sector_range(lo: u32, hi: u32) -> u8 {
    let first = lo >> SECTOR_SHIFT;
    let last = (hi - 1) >> SECTOR_SHIFT;
    ((1u16 << (last + 1)) - (1u16 << first)) as u8
}

/// Reusable buffer for coalescing warp instructions.
#[derive(Debug, Default, Clone)]
pub struct Coalescer {
    /// The lines of the last coalesced instruction, in order of first touch.
    pub lines: Vec<LineRequest>,
}

impl Coalescer {
    /// Coalesces the active lanes of one warp instruction; each lane accesses `size` bytes at
    /// `addrs[lane]`. Byte masks are filled when `with_bytes` is set.
    #[inline]
    pub fn coalesce(&mut self, addrs: &[u64; WARP_SIZE], mask: u32, size: u32, with_bytes: bool) {
        self.lines.clear();
        let mut m = mask;
        while m != 0 {
            let lane = m.trailing_zeros() as usize;
            m &= m - 1;
            let start = addrs[lane];
            let end = start + size as u64; // exclusive
            let mut line = start >> LINE_SHIFT;
            let last_line = (end - 1) >> LINE_SHIFT;
            loop {
                let line_base = line << LINE_SHIFT;
                let lo = start.max(line_base) - line_base;
                let hi = end.min(line_base + 128) - line_base;
                let sectors = sector_range(lo as u32, hi as u32);
                let bytes = if with_bytes {
                    byte_range(lo as u32, hi as u32)
                } else {
                    0
                };
                self.add(line, sectors, bytes);
                if line == last_line {
                    break;
                }
                line += 1;
            }
        }
    }

    /// Like [`Coalescer::coalesce`], for the common case where every lane's access lies within one
    /// sector (`size` a power of two ≤ 32 and every address a multiple of it).
    #[inline]
    pub fn coalesce_aligned(
        &mut self,
        addrs: &[u64; WARP_SIZE],
        mask: u32,
        size: u32,
        with_bytes: bool,
    ) {
        debug_assert!(size.is_power_of_two() && size <= 32);
        self.lines.clear();
        let size_mask = if size >= 128 {
            u128::MAX
        } else {
            (1u128 << size) - 1
        };
        let mut cur = LineRequest {
            line: u64::MAX,
            sectors: 0,
            bytes: 0,
        };
        let mut m = mask;
        while m != 0 {
            let lane = m.trailing_zeros() as usize;
            m &= m - 1;
            let a = addrs[lane];
            debug_assert_eq!(a % size as u64, 0);
            let line = a >> LINE_SHIFT;
            if line != cur.line {
                if cur.line != u64::MAX {
                    self.add(cur.line, cur.sectors, cur.bytes);
                }
                cur = LineRequest {
                    line,
                    sectors: 0,
                    bytes: 0,
                };
            }
            cur.sectors |= 1 << ((a >> SECTOR_SHIFT) & 3);
            if with_bytes {
                cur.bytes |= size_mask << (a & 127);
            }
        }
        if cur.line != u64::MAX {
            self.add(cur.line, cur.sectors, cur.bytes);
        }
    }

    #[inline]
    fn add(&mut self, line: u64, sectors: u8, bytes: u128) {
        // Lanes usually walk through lines in order: try the newest entry first.
        if let Some(last) = self.lines.last_mut()
            && last.line == line
        {
            last.sectors |= sectors;
            last.bytes |= bytes;
            return;
        }
        if let Some(e) = self.lines.iter_mut().find(|e| e.line == line) {
            e.sectors |= sectors;
            e.bytes |= bytes;
            return;
        }
        self.lines.push(LineRequest {
            line,
            sectors,
            bytes,
        });
    }

    /// The L2 requests of one atomic warp instruction, by the rule measured on the H100
    /// (`validation/atomics_probe.cu`, tests/data/h100/micro/atomics/): lanes on the same address
    /// are not merged, so a line whose busiest address is hit by `r` lanes takes `r` requests,
    /// request `j` carrying the sectors of the addresses hit by more than `j` lanes (32 lanes on
    /// one word: 32 one-sector requests; 32 distinct words of one line: one request). Atomics
    /// are naturally aligned, so each lane's access lies in one sector.
    pub fn atomic(&mut self, addrs: &[u64; 32], mask: u32, size: u32) {
        self.lines.clear();
        let mut lanes = [0u64; WARP_SIZE];
        let mut n = 0;
        let mut m = mask;
        while m != 0 {
            let lane = m.trailing_zeros() as usize;
            m &= m - 1;
            lanes[n] = addrs[lane] / size as u64 * size as u64;
            n += 1;
        }
        let lanes = &mut lanes[..n];
        lanes.sort_unstable();
        // (address, lanes on it), sorted by address, so each line's addresses are adjacent.
        let mut counts: Vec<(u64, u32)> = Vec::with_capacity(n);
        for &a in lanes.iter() {
            match counts.last_mut() {
                Some((b, c)) if *b == a => *c += 1,
                _ => counts.push((a, 1)),
            }
        }
        let mut i = 0;
        while i < counts.len() {
            let line = counts[i].0 >> LINE_SHIFT;
            let end = i + counts[i..]
                .iter()
                .take_while(|(a, _)| a >> LINE_SHIFT == line)
                .count();
            let rounds = counts[i..end].iter().map(|(_, c)| *c).max().unwrap_or(0);
            for round in 0..rounds {
                let sectors = counts[i..end]
                    .iter()
                    .filter(|(_, c)| *c > round)
                    .fold(0u8, |s, (a, _)| s | 1 << ((a >> SECTOR_SHIFT) & 3));
                self.lines.push(LineRequest {
                    line,
                    sectors,
                    bytes: 0,
                });
            }
            i = end;
        }
    }

    /// Sectors touched by the last instruction.
    pub fn sector_count(&self) -> u32 {
        self.lines.iter().map(|l| l.sectors.count_ones()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warp(f: impl Fn(u64) -> u64) -> [u64; WARP_SIZE] {
        std::array::from_fn(|l| f(l as u64))
    }

    #[test]
    fn thirty_two_consecutive_doubles_are_eight_sectors_in_two_lines() {
        let mut c = Coalescer::default();
        c.coalesce(&warp(|l| 4096 + 8 * l), u32::MAX, 8, true);
        assert_eq!(c.lines.len(), 2);
        assert_eq!(c.sector_count(), 8);
        assert_eq!(
            c.lines[0],
            LineRequest {
                line: 32,
                sectors: 0b1111,
                bytes: u128::MAX
            }
        );
        assert_eq!(c.lines[1].full_sectors(), 0b1111);
    }

    #[test]
    fn stride_two_doubles_touch_sixteen_sectors_none_full() {
        let mut c = Coalescer::default();
        c.coalesce(&warp(|l| 16 * l), u32::MAX, 8, true);
        // 512 bytes: 4 lines, 16 sectors, each sector half written.
        assert_eq!(c.lines.len(), 4);
        assert_eq!(c.sector_count(), 16);
        assert!(c.lines.iter().all(|l| l.full_sectors() == 0));
        assert_eq!(c.lines[0].bytes & 0xFFFF, 0x00FF);
    }

    #[test]
    fn a_misaligned_warp_touches_nine_sectors_in_three_lines() {
        // Offset by one double: bytes 8..264 → sectors 0..8 (9 sectors), lines 0, 1, 2.
        let mut c = Coalescer::default();
        c.coalesce(&warp(|l| 8 + 8 * l), u32::MAX, 8, true);
        assert_eq!(c.lines.len(), 3);
        assert_eq!(c.sector_count(), 9);
        assert_eq!(c.lines[0].sectors, 0b1111);
        assert_eq!(c.lines[0].full_sectors(), 0b1110);
        assert_eq!(c.lines[2].sectors, 0b0001);
        assert_eq!(c.lines[2].full_sectors(), 0);
    }

    #[test]
    fn the_aligned_fast_path_agrees_with_the_general_one() {
        let patterns: [fn(u64) -> u64; 5] = [
            |l| 4096 + 8 * l,
            |l| 16 * l,
            |l| 8 + 8 * l,
            |l| (l % 8) * 8 + (l / 8) * 2112, // 8-wide block rows of a 264-double pitch
            |l| (31 - l) * 4 + 1024,          // descending 4-byte accesses
        ];
        for f in patterns {
            for mask in [u32::MAX, 0x00FF_00F0, 1, 0] {
                for store in [false, true] {
                    let size = if f(1) == f(0) + 4 || f(0) > f(1) {
                        4
                    } else {
                        8
                    };
                    let mut a = Coalescer::default();
                    let mut b = Coalescer::default();
                    a.coalesce(&warp(f), mask, size, store);
                    b.coalesce_aligned(&warp(f), mask, size, store);
                    assert_eq!(a.lines, b.lines);
                }
            }
        }
    }

    /// One atomic warp instruction on 4-byte words at `f(lane)`: (L2 requests, sectors).
    fn atomic(f: impl Fn(u64) -> u64, mask: u32, size: u32) -> (usize, u32) {
        let mut c = Coalescer::default();
        c.atomic(&warp(f), mask, size);
        (c.lines.len(), c.sector_count())
    }

    #[test]
    fn atomics_take_one_request_per_line_and_per_lane_on_a_shared_address() {
        // The H100's counts per warp instruction (tests/data/h100/micro/atomics/summary.md):
        // requests and sectors of lts__t_*_srcunit_tex_op_red.
        let base = 1 << 20;
        assert_eq!(atomic(|l| base + 4 * l, u32::MAX, 4), (1, 4)); // red_distinct
        assert_eq!(atomic(|_| base, u32::MAX, 4), (32, 32)); // red_warp_same
        assert_eq!(atomic(|l| base + 8 * l, u32::MAX, 4), (2, 8)); // red_stride2
        assert_eq!(atomic(|l| base + 32 * l, u32::MAX, 4), (8, 32)); // red_stride8
        assert_eq!(atomic(|l| base + 128 * l, u32::MAX, 4), (32, 32)); // red_stride32
        assert_eq!(atomic(|l| base + 4 * (7 * l % 256), u32::MAX, 4), (7, 28)); // red_bins7
        assert_eq!(atomic(|l| base + 4 * l, 0x5555_5555, 4), (1, 4)); // red_half
        assert_eq!(atomic(|l| base + 8 * l, u32::MAX, 8), (2, 8)); // red_f64_distinct
        assert_eq!(atomic(|l| base + 4 * l, 0, 4), (0, 0));
        // Two lanes per word: two rounds of the same four sectors.
        assert_eq!(atomic(|l| base + 4 * (l / 2), u32::MAX, 4), (2, 4));
        // Lane 0 alone on its word, the rest on another sector's word: round two lacks it.
        let mut c = Coalescer::default();
        c.atomic(&warp(|l| if l == 0 { base } else { base + 64 }), 0b111, 4);
        let s: Vec<u8> = c.lines.iter().map(|r| r.sectors).collect();
        assert_eq!(s, vec![0b0101, 0b0100]);
    }

    #[test]
    fn inactive_lanes_and_accesses_straddling_lines() {
        let mut c = Coalescer::default();
        c.coalesce(&warp(|l| 8 * l), 0, 8, false);
        assert!(c.lines.is_empty());
        // One lane, 16 bytes at 120: bytes 120..128 of line 0 and 0..8 of line 1.
        c.coalesce(&warp(|_| 120), 1, 16, true);
        assert_eq!(c.lines.len(), 2);
        assert_eq!(c.lines[0].sectors, 0b1000);
        assert_eq!(c.lines[1].sectors, 0b0001);
        assert_eq!(c.lines[1].bytes, 0xFF);
        // All lanes on the same double: one sector.
        c.coalesce(&warp(|_| 64), u32::MAX, 8, false);
        assert_eq!((c.lines.len(), c.sector_count()), (1, 1));
    }
}
