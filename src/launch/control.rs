//! The control flow of one warp: which access it issues next, in which loop iterations, with
//! which lanes. SIMT semantics: a warp runs a loop while any of its lanes is still in it (lanes
//! that are done wait, masked off); an `if` runs its body with the lanes meeting the condition,
//! and not at all when none does, unless it is predicated: then a warp issues its body with no
//! lane active ([`WarpStep::mask`] 0), as the compiled code's `@P` instructions are. Loop
//! variables are the same for every lane of a warp.
//!
//! Programs of the simple form (no `if`, at most one loop) are decoded arithmetically by the
//! scheduler from [`super::geometry::WarpInfo`]; this cursor walks any program, and gives the same
//! sequence on the simple form (tested).

use super::geometry::{MAX_TRIPS, block_coords, thread_coords};
use super::{Launch, LoopNode, Node, SLOT_BLOCK, SLOT_LOOP, SLOT_THREAD, SLOTS};
use crate::error::{Error, Position, Result};
use crate::input::expr::{Affine, BinaryOp, Compiled};
use crate::input::hw::WARP_SIZE;
use crate::input::trace::{MAX_LOOP_DEPTH, MAX_NESTING};

/// Frames a cursor holds: the program's body and one per loop or `if` around the instruction.
const MAX_FRAMES: usize = MAX_NESTING + 1;

/// Most instructions one warp may issue before the launch is rejected.
pub const MAX_WARP_INSTRUCTIONS: u64 = 1 << 32;

/// One warp instruction: the access, the loop variables and the lanes taking part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WarpStep {
    /// Position in [`super::Program::accesses`].
    pub access: usize,
    /// Loop variables, outermost first (0 beyond the access's depth).
    pub iterations: [u32; MAX_LOOP_DEPTH],
    /// Active lanes; none for an instruction of a predicated `if` none of whose lanes meets
    /// the condition.
    pub mask: u32,
}

/// A loop being run: its node and variable (each lane's trip count is in
/// [`WarpCursor::counts`], at the loop's depth: kept out of the frame so that moving on an
/// iteration moves a few bytes, not the counts).
#[derive(Debug, Clone, Copy)]
struct LoopState<'a> {
    node: &'a LoopNode,
    k: u32,
}

#[derive(Debug, Clone, Copy)]
struct Frame<'a> {
    body: &'a [Node],
    pos: usize,
    mask: u32,
    lp: Option<LoopState<'a>>,
}

/// Walks the program of one warp, instruction by instruction.
// The fields read on every instruction first, in one cache line: the scheduler keeps thousands
// of cursors and visits each in turn.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct WarpCursor<'a> {
    /// The instruction [`WarpCursor::advance`] moved to. Its `iterations` are also the loop
    /// variables as the walk goes (they only change between instructions).
    pub step: WarpStep,
    /// Frames in use in `frames`, innermost last.
    depth: usize,
    issued: u64,
    /// Inline rather than on the heap: the innermost frame is read on every instruction.
    frames: [Frame<'a>; MAX_FRAMES],
    launch: &'a Launch,
    warp: u32,
    slots: [i64; SLOTS],
    /// Each lane's trip count of the loop being run at each depth (only the first lane's
    /// where the count is the same for every lane); a count is at most [`MAX_TRIPS`], and a
    /// negative one is stored as -1.
    counts: [[i32; WARP_SIZE]; MAX_LOOP_DEPTH],
}

impl<'a> WarpCursor<'a> {
    /// A cursor at the start of warp `warp` of block `block_id`, running the lanes in `mask`
    /// (those that passed the guard).
    pub fn new(launch: &'a Launch, block_id: u64, warp: u32, mask: u32) -> WarpCursor<'a> {
        let mut cursor = WarpCursor {
            step: WarpStep {
                access: 0,
                iterations: [0; MAX_LOOP_DEPTH],
                mask: 0,
            },
            depth: 0,
            issued: 0,
            frames: [Frame {
                body: &[],
                pos: 0,
                mask: 0,
                lp: None,
            }; MAX_FRAMES],
            launch,
            warp,
            slots: [0; SLOTS],
            counts: [[0; WARP_SIZE]; MAX_LOOP_DEPTH],
        };
        cursor.restart(block_id, warp, mask);
        cursor
    }

    /// Puts this cursor at the start of warp `warp` of block `block_id` of the same launch,
    /// as [`WarpCursor::new`] would, keeping its allocation (the scheduler reuses the cursors
    /// of warps that finished).
    pub fn restart(&mut self, block_id: u64, warp: u32, mask: u32) {
        self.warp = warp;
        self.slots = [0; SLOTS];
        self.slots[SLOT_BLOCK..SLOT_BLOCK + 3]
            .copy_from_slice(&block_coords(block_id, self.launch.grid));
        self.issued = 0;
        self.step = WarpStep {
            access: 0,
            iterations: [0; MAX_LOOP_DEPTH],
            mask: 0,
        };
        self.depth = 0;
        if mask != 0 {
            let launch: &'a Launch = self.launch;
            self.frames[0] = Frame {
                body: &launch.program.tree,
                pos: 0,
                mask,
                lp: None,
            };
            self.depth = 1;
        }
    }

    /// The next instruction, or `None` when the warp is done.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<WarpStep>> {
        Ok(self.advance()?.then_some(self.step))
    }

    /// Moves to the next instruction, which `step` then holds; false when the warp is done.
    /// [`WarpCursor::next`] without the step passed back: the scheduler reads it in place.
    pub fn advance(&mut self) -> Result<bool> {
        loop {
            if self.depth == 0 {
                return Ok(false);
            }
            let top = &mut self.frames[self.depth - 1];
            if top.pos < top.body.len() {
                let body: &'a [Node] = top.body;
                let node = &body[top.pos];
                top.pos += 1;
                let mask = top.mask;
                match node {
                    Node::Access(a) => {
                        self.issued += 1;
                        if self.issued > MAX_WARP_INSTRUCTIONS {
                            let at = self.launch.program.accesses[*a].at;
                            return Err(self.error(
                                mask,
                                &format!("{at}: the warp issues more than 2^32 instructions"),
                            ));
                        }
                        self.step.access = *a;
                        self.step.mask = mask;
                        return Ok(true);
                    }
                    Node::If(i) => {
                        let taken = match &i.cond_split {
                            Some(split) if !i.cond_lane_invariant => {
                                self.lanes_where_split(mask, split, i)?
                            }
                            _ => self.lanes_where(
                                mask,
                                i.cond_lane_invariant,
                                i.at,
                                "if condition",
                                |slots| i.cond.holds(slots),
                            )?,
                        };
                        // A predicated body is issued whatever the lanes: with none, each
                        // instruction of it goes with an empty mask.
                        if taken != 0 || i.predicated {
                            self.push_frame(
                                Frame {
                                    body: &i.body,
                                    pos: 0,
                                    mask: taken,
                                    lp: None,
                                },
                                i.at,
                            )?;
                        }
                    }
                    Node::Loop(l) => self.enter_loop(l, mask)?,
                }
            } else {
                let Some(mut st) = top.lp.take() else {
                    self.depth -= 1;
                    continue;
                };
                let mask = top.mask;
                st.k += 1;
                let alive = self.loop_lanes(&st, mask)?;
                let top = &mut self.frames[self.depth - 1];
                if alive == 0 {
                    self.step.iterations[st.node.depth] = 0;
                    self.depth -= 1;
                } else {
                    top.mask = alive;
                    top.pos = 0;
                    self.step.iterations[st.node.depth] = st.k;
                    top.lp = Some(st);
                }
            }
        }
    }

    /// Starts loop `l` for the lanes in `mask`: each lane's count, then the first iteration.
    fn enter_loop(&mut self, l: &'a LoopNode, mask: u32) -> Result<()> {
        self.sync_loop_slots();
        let mut m = mask;
        while m != 0 {
            let lane = m.trailing_zeros();
            m &= m - 1;
            self.lane_slots(lane);
            let c = l
                .count
                .eval(&self.slots)
                .map_err(|e| self.lane_error(lane, l.at, "loop count", e))?;
            if c > MAX_TRIPS {
                return Err(self.lane_error(
                    lane,
                    l.at,
                    "loop count above 2^24",
                    crate::input::expr::EvalError::Overflow,
                ));
            }
            // at most MAX_TRIPS; below zero, no trips at all
            let c = c.max(-1) as i32;
            if l.count_lane_invariant {
                // Every lane counts as the first: the same value, or the same error, which
                // the lane-by-lane walk also meets first.
                self.counts[l.depth][0] = c;
                break;
            }
            self.counts[l.depth][lane as usize] = c;
        }
        let st = LoopState { node: l, k: 0 };
        let alive = self.loop_lanes(&st, mask)?;
        self.step.iterations[l.depth] = 0;
        if alive != 0 {
            self.push_frame(
                Frame {
                    body: &l.body,
                    pos: 0,
                    mask: alive,
                    lp: Some(st),
                },
                l.at,
            )?;
        }
        Ok(())
    }

    /// Enters `frame`, the body of the loop or `if` at `at`.
    fn push_frame(&mut self, frame: Frame<'a>, at: Position) -> Result<()> {
        if self.depth == MAX_FRAMES {
            // Traces are refused nesting this deep when read; a program built otherwise is too.
            return Err(self.error(
                frame.mask,
                &format!("{at}: loops and ifs nest more than {MAX_NESTING} deep"),
            ));
        }
        self.frames[self.depth] = frame;
        self.depth += 1;
        Ok(())
    }

    /// Lanes of `mask` that run iteration `st.k`: below their count, and meeting `while`.
    fn loop_lanes(&mut self, st: &LoopState<'a>, mask: u32) -> Result<u32> {
        let k = st.k as i64;
        let counts = &self.counts[st.node.depth];
        let mut m = mask;
        let mut alive = 0u32;
        if st.node.count_lane_invariant {
            // One count for the warp: every lane of `mask` stays, or none does.
            m = 0;
            if k < i64::from(counts[0]) {
                alive = mask;
            }
        }
        while m != 0 {
            let lane = m.trailing_zeros();
            m &= m - 1;
            if k < i64::from(counts[lane as usize]) {
                alive |= 1 << lane;
            }
        }
        let Some(w) = &st.node.while_cond else {
            return Ok(alive);
        };
        self.step.iterations[st.node.depth] = st.k;
        let invariant = st.node.while_lane_invariant;
        self.lanes_where(alive, invariant, st.node.at, "loop condition", |slots| {
            w.holds(slots)
        })
    }

    /// Lanes of `mask` for which `test` holds; where `lane_invariant` (the test reads no
    /// `threadIdx`), worked out for the first lane only and taken for all.
    fn lanes_where(
        &mut self,
        mask: u32,
        lane_invariant: bool,
        at: Position,
        what: &str,
        test: impl Fn(&[i64]) -> std::result::Result<bool, crate::input::expr::EvalError>,
    ) -> Result<u32> {
        self.sync_loop_slots();
        let mut m = mask;
        let mut out = 0u32;
        while m != 0 {
            let lane = m.trailing_zeros();
            m &= m - 1;
            self.lane_slots(lane);
            let holds = test(&self.slots).map_err(|e| self.lane_error(lane, at, what, e))?;
            if lane_invariant {
                // Every lane has the first's value, or its error, which the lane-by-lane
                // walk also meets first.
                return Ok(if holds { mask } else { 0 });
            }
            if holds {
                out |= 1 << lane;
            }
        }
        Ok(out)
    }

    /// The lanes of `mask` for which `i`'s condition holds, by its split
    /// ([`super::IfNode::cond_split`]): the part without `threadIdx` worked out once, each lane
    /// its affine part. The first lane is checked against the whole condition, and any lane
    /// whose sum overflows takes the whole condition: where they would differ (an overflow
    /// inside one side that the split's sum avoids), the lane-by-lane walk decides, as before.
    fn lanes_where_split(
        &mut self,
        mask: u32,
        (affine, rest, op): &(Affine, Compiled, BinaryOp),
        i: &super::IfNode,
    ) -> Result<u32> {
        let whole = |c: &mut Self, m: u32| {
            c.lanes_where(m, false, i.at, "if condition", |slots| i.cond.holds(slots))
        };
        if mask == 0 {
            return Ok(0);
        }
        self.sync_loop_slots();
        let first = mask.trailing_zeros();
        self.lane_slots(first);
        let (Ok(rest), Ok(first_holds)) = (rest.eval(&self.slots), i.cond.holds(&self.slots))
        else {
            return whole(self, mask);
        };
        let mut out = 0u32;
        let mut m = mask;
        while m != 0 {
            let lane = m.trailing_zeros();
            m &= m - 1;
            self.lane_slots(lane);
            let holds = match affine
                .eval_checked(&self.slots)
                .ok()
                .and_then(|a| a.checked_add(rest))
            {
                Some(v) => super::compares_with_zero(v, *op),
                None => return whole(self, mask),
            };
            if lane == first && holds != first_holds {
                return whole(self, mask);
            }
            if holds {
                out |= 1 << lane;
            }
        }
        Ok(out)
    }

    /// Copies the loop variables into the expression slots.
    fn sync_loop_slots(&mut self) {
        for (d, &k) in self.step.iterations.iter().enumerate() {
            self.slots[SLOT_LOOP + d] = k as i64;
        }
    }

    fn lane_slots(&mut self, lane: u32) {
        let t = thread_coords(self.warp * 32 + lane, self.launch.block);
        self.slots[SLOT_THREAD..SLOT_THREAD + 3].copy_from_slice(&t);
    }

    /// The error of evaluating `what`, of the step at `at`, for lane `lane`.
    fn lane_error(
        &self,
        lane: u32,
        at: Position,
        what: &str,
        e: crate::input::expr::EvalError,
    ) -> Error {
        let t = thread_coords(self.warp * 32 + lane, self.launch.block);
        let b = &self.slots[SLOT_BLOCK..SLOT_BLOCK + 3];
        Error::new(
            &self.launch.source_name,
            format!(
                "{at}: {what} for thread ({}, {}, {}) of block ({}, {}, {}): {e}",
                t[0], t[1], t[2], b[0], b[1], b[2]
            ),
        )
    }

    fn error(&self, mask: u32, what: &str) -> Error {
        let lane = mask.trailing_zeros().min(31);
        let t = thread_coords(self.warp * 32 + lane, self.launch.block);
        let b = &self.slots[SLOT_BLOCK..SLOT_BLOCK + 3];
        Error::new(
            &self.launch.source_name,
            format!(
                "{what} (thread ({}, {}, {}) of block ({}, {}, {}))",
                t[0], t[1], t[2], b[0], b[1], b[2]
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::hw::HwConfig;
    use crate::input::trace::Kernel;
    use crate::launch::LaunchRequest;
    use crate::launch::geometry::block_warps;

    fn bind(text: &str, block: [u32; 3]) -> Launch {
        let k = Kernel::parse(text, "test.toml").unwrap();
        let req = LaunchRequest {
            block: Some(block),
            ..Default::default()
        };
        Launch::new(&k, &HwConfig::load("h200").unwrap(), &req).unwrap()
    }

    fn walk(l: &Launch, block: u64, warp: u32) -> Vec<WarpStep> {
        let mask = block_warps(l, block).unwrap()[warp as usize].mask;
        let mut c = WarpCursor::new(l, block, warp, mask);
        let mut out = Vec::new();
        while let Some(s) = c.next().unwrap() {
            out.push(s);
        }
        out
    }

    #[test]
    fn the_cursor_walks_simple_programs_as_the_scheduler_decodes_them() {
        for (name, block) in [
            ("star1-zloop", [32, 4, 1]),
            ("tabik-gx", [32, 4, 1]),
            ("su-7pt-1-zblock", [32, 4, 1]),
            ("ernst-25pt-r4", [32, 4, 1]),
            ("ernst-13pt-r2", [32, 4, 1]),
            ("star1", [7, 3, 3]),
        ] {
            let k = crate::input::trace::load(name).unwrap();
            let req = LaunchRequest {
                block: Some(block),
                ..Default::default()
            };
            let l = Launch::new(&k, &HwConfig::load("h200").unwrap(), &req).unwrap();
            assert!(l.program.simple, "{name}");
            let p = &l.program;
            let pre = p.pre.len() as u64;
            let body = p.lp.as_ref().map_or(0, |l| l.body.len() as u64);
            for b in [0, l.total_blocks / 2, l.total_blocks - 1] {
                for (w, info) in block_warps(&l, b).unwrap().iter().enumerate() {
                    let decoded: Vec<WarpStep> = (0..info.instructions)
                        .map(|i| {
                            let (access, it) = p.decode(i, info.trips as u64);
                            let in_loop = i >= pre && i < pre + body * info.trips as u64;
                            let mut iterations = [0; MAX_LOOP_DEPTH];
                            iterations[0] = it as u32;
                            WarpStep {
                                access,
                                iterations,
                                mask: if in_loop {
                                    info.loop_mask(it as u32)
                                } else {
                                    info.mask
                                },
                            }
                        })
                        .collect();
                    assert_eq!(walk(&l, b, w as u32), decoded, "{name} block {b} warp {w}");
                }
            }
        }
    }

    const NESTED: &str = r#"
name = "nested"
[[arrays]]
name = "a"
element_bytes = 4
dims = ["4096"]
[launch]
block = [32, 1, 1]
grid = ["1", "1", "1"]
[thread]
let = ["t = threadIdx.x"]
lattice_updates = "32"
body = [
  { loop = "i", count = "3", body = [
    { load = "a", index = "i" },
    { loop = "j", count = "i + t % 2", body = [
      { if = "t < 16 || j == 0", body = [{ store = "a", index = "64 * i + j" }] },
    ] },
  ] },
  { load = "a", index = "t" },
]
"#;

    #[test]
    fn nested_loops_run_while_any_lane_is_in_them_and_ifs_mask_lanes() {
        let l = bind(NESTED, [32, 1, 1]);
        assert!(!l.program.simple);
        let steps = walk(&l, 0, 0);
        let odd = 0xAAAA_AAAAu32;
        let low = 0x0000_FFFFu32;
        let s = |access: usize, i: u32, j: u32, mask: u32| WarpStep {
            access,
            iterations: [i, j, 0, 0],
            mask,
        };
        // Access 0: the load of each i; access 1: the store; access 2: the final load.
        // i = 0: odd lanes run j = 0. i = 1: all run j = 0, odd lanes j = 1 (only the low
        // half of them passes the if). i = 2: all run j = 0 and 1, odd lanes j = 2.
        let expected = vec![
            s(0, 0, 0, u32::MAX),
            s(1, 0, 0, odd),
            s(0, 1, 0, u32::MAX),
            s(1, 1, 0, u32::MAX),
            s(1, 1, 1, odd & low),
            s(0, 2, 0, u32::MAX),
            s(1, 2, 0, u32::MAX),
            s(1, 2, 1, low),
            s(1, 2, 2, odd & low),
            s(2, 0, 0, u32::MAX),
        ];
        assert_eq!(steps, expected);
    }

    /// An `if` whose comparison splits into a lane part and a part the same for the warp
    /// (`IfNode::cond_split`, worked out once per warp) masks the lanes the whole condition
    /// does: a halving stride (`tid < s`, s = blockDim.x / 2^(k + 1)) and a block-dependent
    /// bound, checked against the conditions worked out here.
    #[test]
    fn a_condition_split_per_warp_masks_the_lanes_the_whole_condition_does() {
        let text = r#"
name = "split"
[[arrays]]
name = "a"
element_bytes = 4
dims = ["65536"]
[launch]
block = [256, 1, 1]
grid = ["5", "1", "1"]
[thread]
lattice_updates = "1"
body = [
  { loop = "k", count = "8", body = [
    { if = "threadIdx.x < blockDim.x / pow(2, k + 1)", predicated = true, body = [
      { load = "a", index = "threadIdx.x" },
    ] },
  ] },
  { if = "threadIdx.x + blockIdx.x % 3 < 40", body = [{ store = "a", index = "threadIdx.x" }] },
]
"#;
        let l = bind(text, [256, 1, 1]);
        let ifs: Vec<&super::super::IfNode> = ifs_in(&l.program.tree);
        assert_eq!(ifs.len(), 2);
        assert!(ifs.iter().all(|i| i.cond_split.is_some()));
        let lanes = |w: u32, holds: &dyn Fn(u32) -> bool| {
            (0..32u32)
                .filter(|&t| holds(w * 32 + t))
                .fold(0u32, |m, t| m | 1 << t)
        };
        for b in 0..5u64 {
            for w in 0..8u32 {
                let steps = walk(&l, b, w);
                // each trip's load, issued by every warp (predicated), then the store where a
                // lane is below the bound
                let expected_loads: Vec<u32> = (0..8u32)
                    .map(|k| lanes(w, &|t| t < 256 >> (k + 1)))
                    .collect();
                let loads: Vec<u32> = (steps.iter().filter(|s| s.access == 0))
                    .map(|s| s.mask)
                    .collect();
                assert_eq!(loads, expected_loads, "block {b} warp {w}");
                let store = lanes(w, &|t| t + (b as u32 % 3) < 40);
                let stores: Vec<u32> = (steps.iter().filter(|s| s.access == 1))
                    .map(|s| s.mask)
                    .collect();
                assert_eq!(stores, if store == 0 { vec![] } else { vec![store] });
            }
        }
    }

    fn ifs_in(nodes: &[Node]) -> Vec<&super::super::IfNode> {
        let mut out = Vec::new();
        for n in nodes {
            match n {
                Node::If(i) => {
                    out.push(i);
                    out.extend(ifs_in(&i.body));
                }
                Node::Loop(l) => out.extend(ifs_in(&l.body)),
                Node::Access(_) => {}
            }
        }
        out
    }

    #[test]
    fn a_warp_none_of_whose_lanes_take_an_if_issues_nothing_of_it() {
        let text = NESTED.replace("t < 16 || j == 0", "t > 100");
        let l = bind(&text, [32, 1, 1]);
        let steps = walk(&l, 0, 0);
        assert!(steps.iter().all(|s| s.access != 1));
        assert_eq!(steps.len(), 4);
    }

    #[test]
    fn runaway_counts_are_errors_naming_the_thread() {
        let text = NESTED.replace("count = \"3\"", "count = \"t * 100000000\"");
        let l = bind(&text, [32, 1, 1]);
        let mask = block_warps(&l, 0).unwrap()[0].mask;
        let mut c = WarpCursor::new(&l, 0, 0, mask);
        let e = loop {
            match c.next() {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("a count above 2^24 must be refused"),
                Err(e) => break e,
            }
        };
        assert_eq!(e.source_name, "test.toml");
        assert!(e.message.contains("loop count above 2^24"), "{}", e.message);
        assert!(e.message.contains("thread (1, 0, 0)"), "{}", e.message);
    }
}
