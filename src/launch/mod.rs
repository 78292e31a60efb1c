//! Binding a kernel trace to a GPU, a block shape and parameter values: the launch.
//!
//! Everything here happens once per simulation: parameters are fixed, expressions are compiled
//! (affine where possible) over the per-thread free variables, arrays get base addresses, and the
//! occupancy calculation gives the resident blocks per SM. [`geometry`] holds the block, thread
//! and warp geometry of a bound launch, [`code_analysis`] the "code analysis" the papers' models read
//! off it.

pub mod code_analysis;
pub mod control;
pub mod geometry;
pub mod stream;

use crate::error::{Error, Position, Result};
use crate::input::expr::{self, Affine, BinaryOp, Binding, Compiled, Expr, MAX_SLOTS};
use crate::input::hw::HwConfig;
use crate::input::trace::{AccessKind, FlopsPerUpdate, FpOps, Kernel, MAX_LOOP_DEPTH, Step};
use std::collections::BTreeMap;

/// Slot of `threadIdx.x` (y and z follow).
pub const SLOT_THREAD: usize = 0;
/// Slot of `blockIdx.x` (y and z follow).
pub const SLOT_BLOCK: usize = 3;
/// Slot of the outermost loop's variable (a loop `d` loops deep uses `SLOT_LOOP + d`).
pub const SLOT_LOOP: usize = 6;
/// Number of slots used.
pub const SLOTS: usize = SLOT_LOOP + MAX_LOOP_DEPTH;

/// Parses `AxBxC` into three positive integers.
pub fn parse_dims(option: &str, s: &str) -> Result<[i64; 3]> {
    let parts: Vec<&str> = s.split('x').collect();
    let bad = || {
        Error::new(
            option,
            format!("'{s}' is not of the form AxBxC with positive integers"),
        )
    };
    if parts.len() != 3 {
        return Err(bad());
    }
    let mut out = [0i64; 3];
    for (o, p) in out.iter_mut().zip(parts) {
        *o = p.trim().parse().map_err(|_| bad())?;
        if *o <= 0 {
            return Err(bad());
        }
    }
    Ok(out)
}

/// What `--domain` sets: the 3-D domain, or the leading `nx` (, `ny`) parameter settings of a 1-D
/// or 2-D kernel.
pub type DomainSettings = (Option<[i64; 3]>, Vec<(String, i64)>);

/// `--domain` for `kernel`: `N`, `NXxNY` or `NXxNYxNZ` sets as many of the kernel's `nx`, `ny`,
/// `nz` as it has. Three sizes become [`LaunchRequest::domain`]; one or two become leading `nx`
/// (and `ny`) parameter settings, for kernels of one or two dimensions.
pub fn domain_request(kernel: &Kernel, s: &str) -> Result<DomainSettings> {
    let bad = || {
        Error::new(
            "--domain",
            format!("'{s}' is not of the form N, NXxNY or NXxNYxNZ with positive integers"),
        )
    };
    let sizes = s
        .split('x')
        .map(|p| p.trim().parse::<i64>().ok().filter(|v| *v > 0))
        .collect::<Option<Vec<i64>>>()
        .filter(|v| (1..=3).contains(&v.len()))
        .ok_or_else(bad)?;
    let names = ["nx", "ny", "nz"];
    let has: Vec<&str> = names[..dimensionality(kernel)].to_vec();
    if sizes.len() != has.len() {
        let form = ["N", "NXxNY", "NXxNYxNZ"];
        let message = if has.is_empty() {
            format!(
                "kernel '{}' has no parameter 'nx', so no domain to set: use --set for its sizes",
                kernel.name
            )
        } else {
            format!(
                "kernel '{}' is {}-dimensional (it has {}): give --domain {}",
                kernel.name,
                has.len(),
                has.join(", "),
                form[has.len() - 1]
            )
        };
        return Err(Error::new("--domain", message));
    }
    if let [x, y, z] = sizes[..] {
        return Ok((Some([x, y, z]), Vec::new()));
    }
    Ok((
        None,
        names
            .iter()
            .zip(&sizes)
            .map(|(n, v)| (n.to_string(), *v))
            .collect(),
    ))
}

/// A kernel's dimensionality: how many of `nx`, `ny`, `nz` it has, in that order (what
/// `--domain` sets, and what the models' scopes are written for).
pub fn dimensionality(kernel: &Kernel) -> usize {
    ["nx", "ny", "nz"]
        .iter()
        .take_while(|n| kernel.params.contains_key(**n))
        .count()
}

/// What the user chose on top of the trace's defaults.
#[derive(Debug, Clone, Default)]
pub struct LaunchRequest {
    /// Block shape; the trace's default when `None`.
    pub block: Option<[u32; 3]>,
    /// Sets `nx`, `ny`, `nz`.
    pub domain: Option<[i64; 3]>,
    /// `NAME=VALUE` parameter overrides, applied after `domain`.
    pub set: Vec<(String, i64)>,
}

/// Where an array lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayLayout {
    /// Array name.
    pub name: String,
    /// Base byte address.
    pub base: u64,
    /// Number of elements.
    pub elements: u64,
    /// Element size in bytes.
    pub element_bytes: u32,
    /// Extent of each dimension, x (fastest) first; their product is `elements`.
    pub dims: Vec<i64>,
}

/// What a shuffle ([`AccessKind::Shuffle`]) addresses: nothing, an empty array at 0.
pub static NO_ARRAY: ArrayLayout = ArrayLayout {
    name: String::new(),
    base: 0,
    elements: 0,
    element_bytes: 4,
    dims: Vec::new(),
};

impl ArrayLayout {
    /// Size in bytes.
    pub fn bytes(&self) -> u64 {
        self.elements * self.element_bytes as u64
    }
}

/// A condition compiled for speed: a conjunction of affine comparisons with zero when the
/// expression has that shape (guards like `x < nx && y < ny` always do), else the general form.
#[derive(Debug, Clone)]
pub enum Predicate {
    /// All of `(d, op)` hold, where each `d` is affine and is compared with 0 by `op`.
    Conjunction(Vec<(Affine, BinaryOp)>),
    /// Anything else.
    General(Compiled),
}

impl Predicate {
    /// Whether the condition holds for the given slots.
    #[inline]
    pub fn holds(&self, slots: &[i64]) -> std::result::Result<bool, expr::EvalError> {
        match self {
            Predicate::Conjunction(terms) => {
                for (d, op) in terms {
                    if !compares_with_zero(d.eval_checked(slots)?, *op) {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            Predicate::General(c) => Ok(c.eval(slots)? != 0),
        }
    }

    /// Whether the condition may depend on a slot in `slots` ([`Compiled::reads_slots`]).
    pub fn reads_slots(&self, slots: std::ops::Range<usize>) -> bool {
        match self {
            Predicate::Conjunction(terms) => terms
                .iter()
                .any(|(d, _)| Compiled::Affine(*d).reads_slots(slots.clone())),
            Predicate::General(c) => c.reads_slots(slots),
        }
    }

    /// The condition's value when it names no thread, block or loop index (parameters and
    /// block dimensions only): the same for every thread of the launch.
    pub fn constant(&self) -> Option<bool> {
        let constant = match self {
            Predicate::Conjunction(terms) => terms.iter().all(|(d, _)| d.is_constant()),
            Predicate::General(c) => c.as_affine().is_some_and(|a| a.is_constant()),
        };
        if constant {
            self.holds(&[0; MAX_SLOTS]).ok()
        } else {
            None
        }
    }
}

/// Whether `v OP 0` holds, `op` a comparison.
#[inline]
pub(crate) fn compares_with_zero(v: i64, op: BinaryOp) -> bool {
    match op {
        BinaryOp::Lt => v < 0,
        BinaryOp::Le => v <= 0,
        BinaryOp::Gt => v > 0,
        BinaryOp::Ge => v >= 0,
        BinaryOp::Eq => v == 0,
        _ => v != 0,
    }
}

/// `e` as a comparison `a OP b`, where it is one.
fn as_comparison(e: &Expr) -> Option<(BinaryOp, &Expr, &Expr)> {
    match e {
        Expr::Binary(
            op @ (BinaryOp::Lt
            | BinaryOp::Le
            | BinaryOp::Gt
            | BinaryOp::Ge
            | BinaryOp::Eq
            | BinaryOp::Ne),
            a,
            b,
        ) => Some((*op, a, b)),
        _ => None,
    }
}

/// The conjuncts of `a && b && ...`.
fn conjuncts(e: &Expr) -> Vec<&Expr> {
    match e {
        Expr::Binary(BinaryOp::And, a, b) => {
            let mut v = conjuncts(a);
            v.extend(conjuncts(b));
            v
        }
        _ => vec![e],
    }
}

/// One compiled memory instruction.
#[derive(Debug, Clone)]
pub struct Access {
    /// Load, store or atomic.
    pub kind: AccessKind,
    /// Index into [`Launch::arrays`].
    pub array: usize,
    /// Linear element index over the slots.
    pub index: Compiled,
    /// Where `index` is not affine: the same as an affine part plus a part that reads no
    /// `threadIdx` (the same for every lane of a warp), where it splits so.
    pub lane_split: Option<(Affine, Compiled)>,
    /// Bytes per thread.
    pub bytes: u32,
    /// Loops around it (its loop variables are slots `SLOT_LOOP..SLOT_LOOP + depth`).
    pub depth: usize,
    /// A load after which the warp waits ([`crate::input::trace::AccessDecl::ends_run`]).
    pub ends_run: bool,
    /// A global load that bypasses the L1 ([`crate::input::trace::AccessDecl::bypass_l1`]).
    pub bypass_l1: bool,
    /// An atomic whose warp's lanes on one address make one update
    /// ([`crate::input::trace::AccessDecl::aggregated`]).
    pub aggregated: bool,
    /// An atomic adding floating-point values ([`crate::input::trace::AccessDecl::float`]).
    pub float: bool,
    /// A store's distance from the warp's previous memory instruction, in instructions
    /// ([`crate::input::trace::AccessDecl::instructions_before`]).
    pub instructions_before: u32,
    /// A barrier comes between this access and the one before it in the program (or, for the
    /// first access of a loop body, at the end of the body).
    pub after_barrier: bool,
    /// A per-dimension index's coordinates, x first (`index` is their linearisation); empty for
    /// a linear index.
    pub coordinates: Vec<Coordinate>,
    /// The index as written in the trace (errors quote it): the expression, or the list.
    pub index_text: String,
    /// Where the step stands in the trace.
    pub at: Position,
}

/// One coordinate of a per-dimension index and the extent of its dimension. Linearising alone
/// would let `x - 1` at x = 0 read the end of the previous row, so each coordinate is checked
/// against its own dimension.
#[derive(Debug, Clone)]
pub struct Coordinate {
    /// The expression as written in the trace (errors quote it).
    pub text: String,
    /// The coordinate over the slots.
    pub index: Compiled,
    /// Extent of the dimension: the coordinate must lie in `0..extent`.
    pub extent: i64,
    /// Proved at binding: every thread of the grid, in every loop iteration, is inside (the
    /// coordinate is affine, names no loop variable, and its extremes over the block and grid
    /// box are in range). Such a coordinate needs no check per access.
    pub always_inside: bool,
}

impl Coordinate {
    /// Whether `value` lies inside the dimension.
    #[inline]
    pub fn inside(&self, value: i64) -> bool {
        (0..self.extent).contains(&value)
    }
}

/// An index that lies outside its array, as found for one thread: what the error names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outside {
    /// Coordinate `dim` (0 = x) of a per-dimension index has `value`.
    Coordinate {
        /// The dimension, 0 for x.
        dim: usize,
        /// The coordinate's value.
        value: i64,
    },
    /// The access starts at byte `offset` of the array (negative, or too close to its end).
    Offset(i64),
}

impl Access {
    /// The error for a thread of this access whose index lies outside `array`: the trace, the
    /// step's line and column, the array, then for a coordinate its dimension, expression, value
    /// and range, else the byte offset; `thread` names the thread (and loop iterations).
    pub fn outside_error(
        &self,
        source_name: &str,
        array: &ArrayLayout,
        outside: Outside,
        thread: &str,
    ) -> Error {
        let what = match self.kind {
            AccessKind::Load => "a load",
            AccessKind::Store => "a store",
            AccessKind::Atomic => "an atomic",
            AccessKind::SharedLoad => "a shared load",
            AccessKind::SharedStore => "a shared store",
            AccessKind::Shuffle => "a shuffle",
        };
        let problem = match outside {
            Outside::Coordinate { dim, value } => {
                let c = &self.coordinates[dim];
                format!(
                    "{what} of array '{}' is outside its dimension {}: \"{}\" = {value}, not in 0..={}, for {thread}",
                    array.name,
                    dimension_name(dim),
                    c.text,
                    c.extent - 1
                )
            }
            Outside::Offset(offset) => format!(
                "{what} of array '{}' is outside it: {thread} accesses byte offset {offset} of {}",
                array.name,
                array.bytes()
            ),
        };
        // a lifted kernel's 32-bit index arithmetic that the launch's sizes did not prove idle
        let wraps = (self.index_text.contains("i32(") || self.index_text.contains("u32("))
            && self.index.as_affine().is_none();
        let why = if wraps {
            " (the index is computed in 32 bits, i32/u32, and wraps around in this launch: the kernel as written indexes outside its array)"
        } else {
            ""
        };
        Error::new(source_name, format!("{}: {problem}{why}", self.at))
    }

    /// The error for an index of this access (`text`: the expression, or one coordinate's)
    /// that cannot be evaluated for `thread`.
    pub fn index_error(
        &self,
        source_name: &str,
        array: &ArrayLayout,
        text: &str,
        thread: &str,
        e: expr::EvalError,
    ) -> Error {
        Error::new(
            source_name,
            format!(
                "{}: index \"{text}\" of array '{}' for {thread}: {e}",
                self.at, array.name
            ),
        )
    }

    /// The first coordinate of a per-dimension index outside its dimension for the thread whose
    /// slots are `slots` (coordinates proved inside at binding are skipped); an evaluation error
    /// comes with the coordinate's text.
    pub fn coordinate_outside(
        &self,
        slots: &[i64],
    ) -> std::result::Result<Option<Outside>, (&str, expr::EvalError)> {
        for (dim, c) in self.coordinates.iter().enumerate() {
            if c.always_inside {
                continue;
            }
            let value = c.index.eval(slots).map_err(|e| (c.text.as_str(), e))?;
            if !c.inside(value) {
                return Ok(Some(Outside::Coordinate { dim, value }));
            }
        }
        Ok(None)
    }
}

/// A dimension as errors name it: 1-based, with x, y, z for the first three.
pub fn dimension_name(dim: usize) -> String {
    match dim {
        0..=2 => format!("{} ({})", dim + 1, ["x", "y", "z"][dim]),
        _ => (dim + 1).to_string(),
    }
}

/// "thread (x, y, z) of block (x, y, z)", with " in loop iteration k" (or "iterations (k, l)")
/// for an access `depth` loops deep: how bind-time errors name one thread.
pub fn thread_name(thread: [i64; 3], block: [i64; 3], iterations: &[u32]) -> String {
    let loops = match iterations {
        [] => String::new(),
        [k] => format!(" in loop iteration {k}"),
        ks => format!(
            " in loop iterations ({})",
            ks.iter()
                .map(|k| k.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    format!(
        "thread ({}, {}, {}) of block ({}, {}, {}){loops}",
        thread[0], thread[1], thread[2], block[0], block[1], block[2]
    )
}

/// The per-thread loop of a program of the simple form, compiled.
#[derive(Debug, Clone)]
pub struct LoopProgram {
    /// Trip count (may depend on the thread).
    pub count: Compiled,
    /// Per-lane continuation condition.
    pub while_cond: Option<Predicate>,
    /// Accesses of one iteration.
    pub body: Vec<Access>,
    /// Where the loop stands in the trace.
    pub at: Position,
}

/// One step of the compiled program tree.
#[derive(Debug, Clone)]
pub enum Node {
    /// The access at this position of [`Program::accesses`].
    Access(usize),
    /// A loop.
    Loop(LoopNode),
    /// A conditional block.
    If(IfNode),
}

/// A compiled loop: lanes stay while `var < count` and `while_cond` has held every iteration.
#[derive(Debug, Clone)]
pub struct LoopNode {
    /// Trip count, per lane.
    pub count: Compiled,
    /// Whether the count reads no `threadIdx` (it is then the same for every lane of a warp,
    /// and worked out once per warp: nvcc's unrolled loops count from `blockIdx` and the
    /// parameters).
    pub count_lane_invariant: bool,
    /// Early exit: a lane leaves at the first iteration where this is false.
    pub while_cond: Option<Predicate>,
    /// Whether `while_cond` reads no `threadIdx` (it is then worked out once per warp and
    /// iteration, not lane by lane).
    pub while_lane_invariant: bool,
    /// Loops around this one (its variable is slot `SLOT_LOOP + depth`).
    pub depth: usize,
    /// One iteration.
    pub body: Vec<Node>,
    /// Where the loop stands in the trace.
    pub at: Position,
}

/// A compiled `if`.
#[derive(Debug, Clone)]
pub struct IfNode {
    /// Lanes for which this holds run the body.
    pub cond: Predicate,
    /// Whether `cond` reads no `threadIdx` (it is then worked out once per warp).
    pub cond_lane_invariant: bool,
    /// Where `cond` is one comparison `a OP b` that is not affine but whose `a - b` is an
    /// affine part plus a part that reads no `threadIdx`: those two parts and `OP`, so that the
    /// second is worked out once per warp (a lifted block reduction's `threadIdx.x <
    /// blockDim.x / pow(2, k + 1)`); `cond` stays the reference.
    pub cond_split: Option<(Affine, Compiled, BinaryOp)>,
    /// The steps.
    pub body: Vec<Node>,
    /// Where the `if` stands in the trace.
    pub at: Position,
    /// A warp none of whose lanes meets `cond` still issues the body, with no lane active
    /// ([`crate::input::trace::IfDecl::predicated`]).
    pub predicated: bool,
}

/// The per-thread program: the tree of loops and `if`s over the accesses, and, for the common
/// simple form (no `if`, at most one loop, not nested), the same as accesses before, inside
/// and after the loop, which the scheduler decodes arithmetically.
#[derive(Debug, Clone)]
pub struct Program {
    /// Threads for which this is false do nothing.
    pub guard: Option<Predicate>,
    /// Where the guard stands in the trace.
    pub guard_at: Position,
    /// Every access, in program text order; records refer to accesses by position here.
    pub accesses: Vec<Access>,
    /// The program as a tree.
    pub tree: Vec<Node>,
    /// Whether the program has the simple form (then `pre`, `lp` and `post` describe it; else
    /// they are empty and only `tree` does).
    pub simple: bool,
    /// Simple form: accesses before the loop (all of them when there is no loop).
    pub pre: Vec<Access>,
    /// Simple form: the loop, if any.
    pub lp: Option<LoopProgram>,
    /// Simple form: accesses after the loop.
    pub post: Vec<Access>,
}

impl Program {
    /// Instructions a warp executes when its loop runs `trips` times (simple form).
    pub fn instructions(&self, trips: u64) -> u64 {
        self.pre.len() as u64
            + self.lp.as_ref().map_or(0, |l| l.body.len() as u64 * trips)
            + self.post.len() as u64
    }

    /// All accesses in program order. Records refer to accesses by their position in this list.
    pub fn flattened(&self) -> Vec<&Access> {
        self.accesses.iter().collect()
    }

    /// The flattened access number and loop iteration of dynamic instruction `i` of a warp whose
    /// loop runs `trips` times (simple form).
    #[inline]
    pub fn decode(&self, i: u64, trips: u64) -> (usize, i64) {
        self.layout().decode(i, trips)
    }

    /// The lengths [`Program::decode`] needs, to carry where the program is not at hand.
    pub fn layout(&self) -> Layout {
        Layout {
            pre: self.pre.len() as u64,
            body: self.lp.as_ref().map_or(0, |l| l.body.len() as u64),
        }
    }
}

/// A simple-form program's shape: accesses before the loop and in its body (those after it
/// follow).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Accesses before the loop.
    pub pre: u64,
    /// Accesses in the loop's body.
    pub body: u64,
}

impl Layout {
    /// [`Program::decode`].
    #[inline]
    pub fn decode(&self, i: u64, trips: u64) -> (usize, i64) {
        let (pre, n) = (self.pre, self.body);
        if i < pre {
            return (i as usize, 0);
        }
        let i = i - pre;
        if i < n * trips {
            return ((pre + i % n) as usize, (i / n) as i64);
        }
        ((pre + n + (i - n * trips)) as usize, 0)
    }
}

/// Resident blocks per SM and what limits them.
#[derive(Debug, Clone, PartialEq)]
pub struct Occupancy {
    /// Blocks resident on one SM at a time.
    pub blocks_per_sm: u32,
    /// `warps`, `blocks`, `registers` or `shared memory`.
    pub limiter: &'static str,
    /// Warps per block.
    pub warps_per_block: u32,
    /// Resident warps per SM over the maximum.
    pub occupancy: f64,
}

/// A kernel bound to a GPU, block shape and parameters: everything the generator needs.
#[derive(Debug, Clone)]
pub struct Launch {
    /// Kernel name.
    pub kernel: String,
    /// Trace file.
    pub source_name: String,
    /// Effective parameter values.
    pub params: BTreeMap<String, i64>,
    /// Block shape.
    pub block: [u32; 3],
    /// Grid shape.
    pub grid: [u32; 3],
    /// Total blocks.
    pub total_blocks: u64,
    /// Threads per block.
    pub threads_per_block: u32,
    /// Occupancy.
    pub occupancy: Occupancy,
    /// Arrays with their addresses.
    pub arrays: Vec<ArrayLayout>,
    /// Shared arrays of each block, with their offsets in the block's shared memory (a shared
    /// access's [`Access::array`] is a position here).
    pub shared_arrays: Vec<ArrayLayout>,
    /// Lattice updates of the launch.
    pub lattice_updates: u64,
    /// The compiled per-thread program.
    pub program: Program,
    /// Special registers every warp reads with an `S2R`, each costing it one L1 data-stage
    /// wavefront (`sim::data_stage`): the `threadIdx` components the kernel names, and
    /// `%laneid` where an atomic is aggregated over the warp (the compiled code's vote needs
    /// it). `blockIdx` reads cost none.
    pub special_register_reads: u32,
    /// Registers per thread, for this block shape.
    pub registers_per_thread: u32,
    /// Shared memory per block in bytes, for this block shape.
    pub shared_bytes_per_block: u32,
    /// Most loads a warp issues back to back ([`Kernel::loads_per_run`]; `u32::MAX`: no limit).
    pub loads_per_run: u32,
    /// Bytes of the kernel's compiled code ([`Kernel::code_bytes`]; 0 when the trace does not
    /// say).
    pub code_bytes: u64,
    /// The GPU's `[l1] store_merge_window_instructions`: a store further than this from the
    /// warp's previous store (`Access::instructions_before`) does not merge with it.
    pub store_merge_window_instructions: u32,
    /// Floating-point operations per lattice update by precision (`thread.flops_per_update`
    /// evaluated; one number is double precision when an array has 8-byte elements); `None`
    /// when the trace does not say.
    pub flops_per_update: Option<FpOps>,
    /// Barriers (`{ sync = true }`) a thread passes; the time model charges each
    /// `[timing] barrier_cycles` of a warp's delay.
    pub barriers_per_thread: u64,
    /// Warp instructions each warp issues (`thread.instructions_per_warp` evaluated); `None` when
    /// the trace does not say.
    pub instructions_per_warp: Option<f64>,
}

impl Launch {
    /// The device memory the launch's arrays take: each array's bytes rounded up to the GPU's
    /// allocation granularity, as `cudaMalloc` places them.
    pub fn array_bytes(&self, hw: &HwConfig) -> u64 {
        let unit = hw.dram.allocation_granularity_bytes.max(1);
        (self.arrays.iter())
            .map(|a| a.bytes().div_ceil(unit).saturating_mul(unit))
            .fold(0u64, u64::saturating_add)
    }

    /// Whether the launch's arrays fit in the GPU's memory (`dram.capacity_gib`; a config without
    /// it fits anything): an error naming both sizes when they do not, since the kernel could not
    /// run there.
    pub fn check_memory(&self, hw: &HwConfig) -> Result<()> {
        let Some(capacity_gib) = hw.dram.capacity_gib else {
            return Ok(());
        };
        let bytes = self.array_bytes(hw);
        let gib = bytes as f64 / (1u64 << 30) as f64;
        if gib <= capacity_gib {
            return Ok(());
        }
        Err(Error::new(
            &self.source_name,
            format!(
                "the arrays take {gib:.1} GiB ({bytes} bytes in {} arrays), more than the {}'s {capacity_gib} GiB of memory (dram.capacity_gib): the kernel could not run there; --exceed-memory simulates it anyway",
                self.arrays.len(),
                hw.name
            ),
        ))
    }

    /// Whether store `a` cannot continue the warp's run of stores (a barrier comes between, or
    /// it issues more than `store_merge_window_instructions` after the warp's previous memory
    /// instruction; docs/model.md "A warp's stores in a row merge").
    pub fn store_parts_run(&self, a: &Access) -> bool {
        a.after_barrier || a.instructions_before > self.store_merge_window_instructions
    }

    /// The layout of the array access `a` reads or writes: [`Launch::shared_arrays`] for a
    /// shared access, else [`Launch::arrays`].
    pub fn array_of(&self, a: &Access) -> &ArrayLayout {
        match a.kind {
            AccessKind::Shuffle => &NO_ARRAY,
            k if k.is_shared() => &self.shared_arrays[a.array],
            _ => &self.arrays[a.array],
        }
    }

    /// The L1 capacity of this launch's SMs: what the shared-memory carve-out the driver picks for
    /// its residency leaves ([`crate::input::hw::L1Config::size_for`]).
    pub fn l1_bytes(&self, hw: &HwConfig) -> u64 {
        let per_block = hw.sm.shared_bytes_per_block(self.shared_bytes_per_block);
        let blocks = self.occupancy.blocks_per_sm;
        hw.l1.size_for(blocks, per_block as u64 * blocks as u64)
    }

    /// `nx, ny, nz` if the kernel has them.
    pub fn domain(&self) -> Option<[i64; 3]> {
        Some([
            *self.params.get("nx")?,
            *self.params.get("ny")?,
            *self.params.get("nz")?,
        ])
    }

    /// Binds `kernel` to `hw` with the user's choices: parameter values, block shape, grid,
    /// occupancy, array addresses, lattice updates and the compiled program, each checked.
    pub fn new(kernel: &Kernel, hw: &HwConfig, req: &LaunchRequest) -> Result<Launch> {
        let src = kernel.source_name.as_str();
        let params = bind_params(kernel, req)?;
        // A block the user did not choose is the trace's: errors name the trace then.
        let (block, block_source) = match req.block {
            Some(b) => (b, "--block"),
            None => (kernel.default_block, src),
        };
        let threads = threads_per_block(block, hw, block_source).map_err(|e| match req.block {
            Some(_) => e,
            None => Error::new(src, format!("{}: launch.{}", kernel.at.block, e.message)),
        })?;
        let scope = ConstScope {
            params: &params,
            block,
            src,
        };
        let grid = scope.grid(kernel)?;
        let total_blocks = grid.iter().map(|&g| g as u64).product::<u64>();
        if total_blocks >= u32::MAX as u64 {
            return Err(Error::new(
                src,
                format!("{total_blocks} blocks are more than this simulator handles (2^32)"),
            ));
        }
        let shared_arrays = scope.shared_layouts(kernel)?;
        let (registers_per_thread, shared_bytes_per_block) = scope.resources(kernel)?;
        let occupancy = occupancy(hw, threads, registers_per_thread, shared_bytes_per_block)
            .map_err(|m| Error::new(src, m))?;
        let arrays = scope.array_layouts(kernel, hw.dram.allocation_granularity_bytes)?;
        let lattice_updates = scope.lattice_updates(kernel)?;
        let flops_per_update = scope.flops_per_update(kernel, &arrays)?;
        let program = compile_program(kernel, &params, &arrays, &shared_arrays, block, grid)?;
        let launch_lets = scope.launch_constant_lets(kernel);
        let barriers_per_thread = barriers_per_thread(&kernel.body, &|name| {
            scope.get(name).or_else(|| launch_lets.get(name).copied())
        });
        let instructions_per_warp = scope.instructions_per_warp(kernel)?;

        Ok(Launch {
            kernel: kernel.name.clone(),
            source_name: src.to_string(),
            params,
            block,
            grid,
            total_blocks,
            threads_per_block: threads,
            occupancy,
            arrays,
            shared_arrays,
            lattice_updates,
            flops_per_update,
            program,
            special_register_reads: special_register_reads(kernel),
            registers_per_thread,
            shared_bytes_per_block,
            loads_per_run: kernel.loads_per_run.unwrap_or(u32::MAX),
            code_bytes: kernel.code_bytes.unwrap_or(0),
            store_merge_window_instructions: hw.l1.store_merge_window_instructions,
            barriers_per_thread,
            instructions_per_warp,
        })
    }
}

/// The barriers a thread of the launch passes: each `sync` step once, times the trip count of
/// the loops around it where that is a constant of the launch (`value` gives the parameters,
/// `blockDim` and the lets that depend on nothing else, as a lifted loop's count `trips_k`
/// does; a count that depends on the thread counts one trip), every `if` taken. The time model
/// charges each one a warp passes `[timing] barrier_cycles`.
fn barriers_per_thread(body: &[Step], value: &dyn Fn(&str) -> Option<i64>) -> u64 {
    body.iter()
        .map(|step| match step {
            Step::Sync(_) => 1,
            Step::Access(_) => 0,
            Step::If(i) => barriers_per_thread(&i.body, value),
            Step::Loop(l) => {
                let inner = barriers_per_thread(&l.body, value);
                if inner == 0 {
                    return 0;
                }
                let trips = l.count.eval_with(value);
                inner * trips.map_or(1, |t| t.max(0) as u64)
            }
        })
        .sum()
}

/// The special registers a warp of `kernel` reads at a wavefront each
/// ([`Launch::special_register_reads`]): the `threadIdx` components its thread section names (its
/// lets, guard, loops and indices), and `%laneid` where it has an aggregated atomic.
fn special_register_reads(kernel: &Kernel) -> u32 {
    fn steps<'a>(body: &'a [Step], out: &mut Vec<&'a Expr>) {
        for step in body {
            match step {
                Step::Access(a) => out.extend(a.index.iter()),
                Step::Loop(l) => {
                    out.push(&l.count);
                    out.extend(l.while_cond.iter());
                    out.extend(l.lets.iter().map(|(_, e)| e));
                    steps(&l.body, out);
                }
                Step::If(i) => {
                    out.push(&i.cond);
                    steps(&i.body, out);
                }
                Step::Sync(_) => {}
            }
        }
    }
    let mut exprs: Vec<&Expr> = kernel.lets.iter().map(|(_, e)| e).collect();
    exprs.extend(kernel.guard.iter());
    steps(&kernel.body, &mut exprs);
    let names: Vec<String> = exprs.iter().flat_map(|e| e.variables()).collect();
    let thread_index = ["threadIdx.x", "threadIdx.y", "threadIdx.z"]
        .iter()
        .filter(|c| names.iter().any(|n| n == *c))
        .count() as u32;
    thread_index + u32::from(aggregated_atomic(&kernel.body))
}

/// Whether `body` holds an atomic aggregated over the warp (whose compiled code reads `%laneid`).
fn aggregated_atomic(body: &[Step]) -> bool {
    body.iter().any(|step| match step {
        Step::Access(a) => a.aggregated,
        Step::Loop(l) => aggregated_atomic(&l.body),
        Step::If(i) => aggregated_atomic(&i.body),
        Step::Sync(_) => false,
    })
}

/// The trace's parameter values with `--domain` (nx, ny, nz) and then `--set` applied; both may
/// only change parameters the trace declares.
fn bind_params(kernel: &Kernel, req: &LaunchRequest) -> Result<BTreeMap<String, i64>> {
    let mut params = kernel.params.clone();
    if let Some(d) = req.domain {
        for (name, v) in ["nx", "ny", "nz"].iter().zip(d) {
            if !params.contains_key(*name) {
                return Err(Error::new(
                    "--domain",
                    format!("kernel '{}' has no parameter '{name}'", kernel.name),
                ));
            }
            if v <= 0 {
                return Err(Error::new(
                    "--domain",
                    format!("{name} = {v} must be positive"),
                ));
            }
            params.insert(name.to_string(), v);
        }
    }
    for (name, v) in &req.set {
        if !params.contains_key(name) {
            let known: Vec<&str> = params.keys().map(|s| s.as_str()).collect();
            return Err(Error::new(
                "--set",
                format!(
                    "kernel '{}' has no parameter '{name}' (it has: {})",
                    kernel.name,
                    known.join(", ")
                ),
            ));
        }
        params.insert(name.clone(), *v);
    }
    Ok(params)
}

/// The threads of a `block`, checked against CUDA's and `hw`'s block limits
/// ([`geometry::check_block`]); errors name `source`, where the block came from.
fn threads_per_block(block: [u32; 3], hw: &HwConfig, source: &str) -> Result<u32> {
    let max = hw.sm.max_threads_per_block;
    match geometry::check_block(block.map(i64::from), max as u64) {
        Ok(b) => Ok(b.iter().product()),
        Err(geometry::BlockLimit::NotPositive(_)) => Err(Error::new(
            source,
            format!("block {:?} has a zero dimension", block),
        )),
        Err(_) => {
            let threads = block.iter().map(|&b| b as u64).product::<u64>();
            Err(Error::new(
                source,
                format!(
                    "block {}x{}x{} has {threads} threads; {} allows at most {max} per block (and z ≤ {})",
                    block[0],
                    block[1],
                    block[2],
                    hw.name,
                    geometry::MAX_BLOCK_Z
                ),
            ))
        }
    }
}

/// What launch-time expressions (grid, array dimensions, lattice updates) may use: the bound
/// parameters and `blockDim.*`.
pub struct ConstScope<'a> {
    /// Parameter values.
    pub params: &'a BTreeMap<String, i64>,
    /// Block shape.
    pub block: [u32; 3],
    /// The trace, named in errors.
    pub src: &'a str,
}

impl ConstScope<'_> {
    /// The value of `name`: a parameter, else a block dimension.
    fn get(&self, name: &str) -> Option<i64> {
        if let Some(v) = self.params.get(name) {
            return Some(*v);
        }
        match name {
            "blockDim.x" => Some(self.block[0] as i64),
            "blockDim.y" => Some(self.block[1] as i64),
            "blockDim.z" => Some(self.block[2] as i64),
            _ => None,
        }
    }

    /// The thread section's lets whose value is a constant of the launch (they name only
    /// parameters, `blockDim` and such lets before them), by name.
    fn launch_constant_lets(&self, kernel: &Kernel) -> BTreeMap<String, i64> {
        let mut known = BTreeMap::new();
        for (name, e) in &kernel.lets {
            let value = e.eval_with(&|n: &str| self.get(n).or_else(|| known.get(n).copied()));
            if let Ok(v) = value {
                known.insert(name.clone(), v);
            }
        }
        known
    }

    /// Evaluates `e`, which stands at `at`; an error names the place, `what` and the
    /// expression.
    fn eval(&self, e: &Expr, at: Position, what: &str) -> Result<i64> {
        e.eval_with(&|name: &str| self.get(name))
            .map_err(|err| Error::new(self.src, format!("{at}: {what} \"{e}\": {err}")))
    }

    /// The grid, each dimension within CUDA's limits.
    fn grid(&self, kernel: &Kernel) -> Result<[u32; 3]> {
        let mut grid = [0u32; 3];
        let grid_limits = [i32::MAX as i64, 65535, 65535];
        for d in 0..3 {
            let at = kernel.at.grid[d];
            let g = self.eval(&kernel.grid[d], at, "launch.grid")?;
            if g <= 0 || g > grid_limits[d] {
                let inputs: Vec<String> = kernel.grid[d]
                    .variables()
                    .iter()
                    .filter_map(|v| self.get(v).map(|x| format!("{v} = {x}")))
                    .collect();
                return Err(Error::new(
                    self.src,
                    format!(
                        "{at}: launch.grid {} \"{}\" = {g} is not in 1..={} (with {})",
                        ["x", "y", "z"][d],
                        kernel.grid[d],
                        grid_limits[d],
                        inputs.join(", ")
                    ),
                ));
            }
            grid[d] = g as u32;
        }
        Ok(grid)
    }

    /// The arrays' sizes and base addresses. Arrays are separate allocations placed one after
    /// another on `granularity` boundaries, as cudaMalloc does for large buffers; together they
    /// must stay within what the simulated caches address.
    fn array_layouts(&self, kernel: &Kernel, granularity: u64) -> Result<Vec<ArrayLayout>> {
        let src = self.src;
        let mut next = granularity;
        let mut arrays = Vec::new();
        for (a, places) in kernel.arrays.iter().zip(&kernel.at.dims) {
            let mut elements: u64 = 1;
            let mut dims = Vec::with_capacity(a.dims.len());
            for (d, &at) in a.dims.iter().zip(places) {
                let v = self.eval(d, at, &format!("array '{}' dimension", a.name))?;
                if v <= 0 {
                    return Err(Error::new(
                        src,
                        format!(
                            "{at}: array '{}' has a dimension \"{d}\" = {v}, not positive",
                            a.name
                        ),
                    ));
                }
                dims.push(v);
                elements = elements
                    .checked_mul(v as u64)
                    .filter(|&n| n < (1u64 << 40))
                    .ok_or_else(|| Error::new(src, format!("array '{}' is too large", a.name)))?;
            }
            let align = a.align_bytes.max(granularity);
            let base = next.div_ceil(align) * align;
            let bytes = elements * a.element_bytes as u64;
            next = base + bytes;
            arrays.push(ArrayLayout {
                name: a.name.clone(),
                base,
                elements,
                element_bytes: a.element_bytes,
                dims,
            });
        }
        if next >> crate::metrics::LINE_SHIFT > crate::metrics::MAX_LINE {
            return Err(Error::new(
                src,
                "the arrays together exceed 2^39 bytes, more than this simulator addresses",
            ));
        }
        Ok(arrays)
    }

    /// The `[[shared]]` arrays' sizes and their offsets in a block's shared memory: one after
    /// another, each on its alignment, from 0 (only offsets modulo 128 bytes matter: the banks).
    fn shared_layouts(&self, kernel: &Kernel) -> Result<Vec<ArrayLayout>> {
        let mut next = 0u64;
        let mut out = Vec::new();
        for (a, places) in kernel.shared.iter().zip(&kernel.at.shared_dims) {
            let mut elements: u64 = 1;
            let mut dims = Vec::with_capacity(a.dims.len());
            for (d, &at) in a.dims.iter().zip(places) {
                let v = self.eval(d, at, &format!("shared array '{}' dimension", a.name))?;
                if v <= 0 {
                    return Err(Error::new(
                        self.src,
                        format!(
                            "{at}: shared array '{}' has a dimension \"{d}\" = {v}, not positive",
                            a.name
                        ),
                    ));
                }
                dims.push(v);
                elements = elements
                    .checked_mul(v as u64)
                    .filter(|&n| {
                        n.checked_mul(a.element_bytes as u64)
                            .is_some_and(|b| b <= u32::MAX as u64)
                    })
                    .ok_or_else(|| {
                        Error::new(self.src, format!("shared array '{}' is too large", a.name))
                    })?;
            }
            let base = next.div_ceil(a.align_bytes) * a.align_bytes;
            next = base + elements * a.element_bytes as u64;
            out.push(ArrayLayout {
                name: a.name.clone(),
                base,
                elements,
                element_bytes: a.element_bytes,
                dims,
            });
        }
        Ok(out)
    }

    /// Registers per thread and shared bytes per block: the trace's expressions for this block.
    pub fn resources(&self, kernel: &Kernel) -> Result<(u32, u32)> {
        let at = kernel.at.registers_per_thread;
        let registers = self.eval(
            &kernel.registers_per_thread,
            at,
            "launch.registers_per_thread",
        )?;
        if !(1..=i64::from(u32::MAX)).contains(&registers) {
            return Err(Error::new(
                self.src,
                format!(
                    "{at}: launch.registers_per_thread \"{}\" = {registers} is not a positive integer",
                    kernel.registers_per_thread
                ),
            ));
        }
        let at = kernel.at.shared_bytes_per_block;
        let shared = self.eval(
            &kernel.shared_bytes_per_block,
            at,
            "launch.shared_bytes_per_block",
        )?;
        if !(0..=i64::from(u32::MAX)).contains(&shared) {
            return Err(Error::new(
                self.src,
                format!(
                    "{at}: launch.shared_bytes_per_block \"{}\" = {shared} is negative or too large",
                    kernel.shared_bytes_per_block
                ),
            ));
        }
        Ok((registers as u32, shared as u32))
    }

    /// `thread.flops_per_update` by precision, each count non-negative.
    fn flops_per_update(&self, kernel: &Kernel, arrays: &[ArrayLayout]) -> Result<Option<FpOps>> {
        let at = kernel.at.flops_per_update;
        Ok(match &kernel.flops_per_update {
            None => None,
            Some(FlopsPerUpdate::Unsplit(n)) if arrays.iter().any(|a| a.element_bytes == 8) => {
                Some(FpOps {
                    fp32: 0.0,
                    fp64: *n,
                })
            }
            Some(FlopsPerUpdate::Unsplit(n)) => Some(FpOps {
                fp32: *n,
                fp64: 0.0,
            }),
            Some(FlopsPerUpdate::Split { fp32, fp64 }) => {
                let count = |e: &Expr, key: &str| -> Result<f64> {
                    let what = format!("thread.flops_per_update.{key}");
                    match self.eval(e, at, &what)? {
                        n if n < 0 => Err(Error::new(
                            self.src,
                            format!("{at}: {what} = {n} must not be negative"),
                        )),
                        n => Ok(n as f64),
                    }
                };
                Some(FpOps {
                    fp32: count(fp32, "fp32")?,
                    fp64: count(fp64, "fp64")?,
                })
            }
        })
    }

    /// `thread.instructions_per_warp` evaluated, not negative.
    fn instructions_per_warp(&self, kernel: &Kernel) -> Result<Option<f64>> {
        let Some(e) = &kernel.instructions_per_warp else {
            return Ok(None);
        };
        let at = kernel.at.instructions_per_warp;
        match self.eval(e, at, "thread.instructions_per_warp")? {
            n if n < 0 => Err(Error::new(
                self.src,
                format!("{at}: thread.instructions_per_warp = {n} must not be negative"),
            )),
            n => Ok(Some(n as f64)),
        }
    }

    /// The launch's lattice updates, positive.
    fn lattice_updates(&self, kernel: &Kernel) -> Result<u64> {
        let at = kernel.at.lattice_updates;
        let lattice_updates = self.eval(&kernel.lattice_updates, at, "thread.lattice_updates")?;
        if lattice_updates <= 0 {
            return Err(Error::new(
                self.src,
                format!("{at}: thread.lattice_updates = {lattice_updates} must be positive"),
            ));
        }
        Ok(lattice_updates as u64)
    }
}

/// Resident blocks per SM (the CUDA occupancy calculation, see hardware-notes).
pub fn occupancy(
    hw: &HwConfig,
    threads: u32,
    regs: u32,
    smem: u32,
) -> std::result::Result<Occupancy, String> {
    let s = &hw.sm;
    let warps_per_block = threads.div_ceil(s.warp_size);
    if regs > s.max_registers_per_thread {
        return Err(format!(
            "{regs} registers per thread exceed the limit of {}",
            s.max_registers_per_thread
        ));
    }
    let mut limits: Vec<(u32, &'static str)> = vec![
        (s.max_blocks, "blocks"),
        (
            (s.max_warps / warps_per_block).min(s.max_threads / threads),
            "warps",
        ),
    ];
    let regs_per_warp =
        (regs * s.warp_size).div_ceil(s.register_alloc_unit) * s.register_alloc_unit;
    let gran = s.warp_alloc_granularity;
    if let Some(per_quarter) = (s.registers / gran).checked_div(regs_per_warp) {
        limits.push((per_quarter * gran / warps_per_block, "registers"));
    }
    let smem_per_block = s.shared_bytes_per_block(smem);
    if let Some(blocks) = s.shared_memory_bytes.checked_div(smem_per_block) {
        limits.push((blocks, "shared memory"));
    }
    let (blocks, limiter) = limits
        .iter()
        .copied()
        .min_by_key(|(b, _)| *b)
        .expect("limits is not empty");
    if blocks == 0 {
        return Err(format!(
            "a block of {threads} threads with {regs} registers per thread and {smem} B shared memory does not fit on one SM of {} (limited by {limiter})",
            hw.name
        ));
    }
    Ok(Occupancy {
        blocks_per_sm: blocks,
        limiter,
        warps_per_block,
        occupancy: (blocks * warps_per_block) as f64 / s.max_warps as f64,
    })
}

/// What `name` stands for in a trace's expression: a parameter, loop variable, `let`, or a
/// thread, block or launch size.
fn resolve_name<'e>(
    name: &str,
    params: &BTreeMap<String, i64>,
    lets: &'e [(String, Expr)],
    loop_vars: &[String],
    block: [u32; 3],
    grid: [u32; 3],
) -> Option<Binding<'e>> {
    if let Some(v) = params.get(name) {
        return Some(Binding::Const(*v));
    }
    if let Some(d) = loop_vars.iter().position(|v| v == name) {
        return Some(Binding::Slot(SLOT_LOOP + d));
    }
    if let Some((_, e)) = lets.iter().rev().find(|(n, _)| n == name) {
        return Some(Binding::Inline(e));
    }
    Some(match name {
        "threadIdx.x" => Binding::Slot(SLOT_THREAD),
        "threadIdx.y" => Binding::Slot(SLOT_THREAD + 1),
        "threadIdx.z" => Binding::Slot(SLOT_THREAD + 2),
        "blockIdx.x" => Binding::Slot(SLOT_BLOCK),
        "blockIdx.y" => Binding::Slot(SLOT_BLOCK + 1),
        "blockIdx.z" => Binding::Slot(SLOT_BLOCK + 2),
        "blockDim.x" => Binding::Const(block[0] as i64),
        "blockDim.y" => Binding::Const(block[1] as i64),
        "blockDim.z" => Binding::Const(block[2] as i64),
        "gridDim.x" => Binding::Const(grid[0] as i64),
        "gridDim.y" => Binding::Const(grid[1] as i64),
        "gridDim.z" => Binding::Const(grid[2] as i64),
        _ => return None,
    })
}

fn compile_program(
    kernel: &Kernel,
    params: &BTreeMap<String, i64>,
    arrays: &[ArrayLayout],
    shared: &[ArrayLayout],
    block: [u32; 3],
    grid: [u32; 3],
) -> Result<Program> {
    let src = kernel.source_name.as_str();
    let mut lets: Vec<(String, Expr)> = kernel.lets.clone();
    // Each thread and block index lies in its launch range, and a loop variable below its
    // count's largest value (where the count is affine; else unbounded): what drops the
    // `i32(…)`/`u32(…)` wraps of a lifted kernel whose 32-bit index arithmetic cannot wrap in
    // this launch, keeping its indices affine. `StepCompiler::steps` pushes the loops' bounds.
    let mut launch_bounds = vec![(0i64, 0i64); SLOT_LOOP];
    for d in 0..3 {
        launch_bounds[SLOT_THREAD + d] = (0, i64::from(block[d]) - 1);
        launch_bounds[SLOT_BLOCK + d] = (0, i64::from(grid[d]) - 1);
    }
    let slot_bounds = std::cell::RefCell::new(launch_bounds);

    let compile_with =
        |e: &Expr, lets: &[(String, Expr)], loop_vars: &[String], what: &str| -> Result<Compiled> {
            let resolve = |name: &str| resolve_name(name, params, lets, loop_vars, block, grid);
            expr::compile_bounded(e, &resolve, &slot_bounds.borrow())
                .map_err(|err| Error::new(src, format!("{what} \"{e}\": {err}")))
        };
    let split_with = |e: &Expr, lets: &[(String, Expr)], loop_vars: &[String]| {
        let resolve = |name: &str| resolve_name(name, params, lets, loop_vars, block, grid);
        let lanes = SLOT_THREAD..SLOT_THREAD + 3;
        expr::compile_split(e, &resolve, &slot_bounds.borrow(), lanes)
            .ok()
            .flatten()
    };

    let predicate = |e: &Expr,
                     lets: &[(String, Expr)],
                     loop_vars: &[String],
                     what: &str|
     -> Result<Predicate> {
        let general = compile_with(e, lets, loop_vars, what)?;
        let mut terms = Vec::new();
        for c in conjuncts(e) {
            let Some((op, a, b)) = as_comparison(c) else {
                return Ok(Predicate::General(general));
            };
            let diff = Expr::Binary(BinaryOp::Sub, Box::new(a.clone()), Box::new(b.clone()));
            match compile_with(&diff, lets, loop_vars, what)?.as_affine() {
                Some(d) => terms.push((*d, op)),
                None => return Ok(Predicate::General(general)),
            }
        }
        Ok(Predicate::Conjunction(terms))
    };
    let guard = match &kernel.guard {
        Some(g) => Some(predicate(
            g,
            &lets,
            &[],
            &format!("{}: thread.guard", kernel.at.guard),
        )?),
        None => None,
    };
    let mut accesses = Vec::new();
    let compiler = StepCompiler {
        slot_bounds: &slot_bounds,
        src,
        arrays,
        shared,
        block,
        grid,
        compile_with: &compile_with,
        split_with: &split_with,
        predicate: &predicate,
        barrier_pending: std::cell::Cell::new(false),
    };
    let tree = compiler.steps(&kernel.body, &mut lets, &mut Vec::new(), &mut accesses)?;
    // The simple form: accesses, then at most one loop of accesses, then accesses.
    let loops: Vec<&LoopNode> = tree
        .iter()
        .filter_map(|n| match n {
            Node::Loop(l) => Some(l),
            _ => None,
        })
        .collect();
    let simple = !tree.iter().any(|n| matches!(n, Node::If(_)))
        && loops.len() <= 1
        && loops
            .iter()
            .all(|l| l.body.iter().all(|n| matches!(n, Node::Access(_))));
    let (mut pre, mut lp, mut post) = (Vec::new(), None, Vec::new());
    if simple {
        for n in &tree {
            match n {
                Node::Access(i) if lp.is_none() => pre.push(accesses[*i].clone()),
                Node::Access(i) => post.push(accesses[*i].clone()),
                Node::Loop(l) => {
                    let body = l
                        .body
                        .iter()
                        .map(|n| match n {
                            Node::Access(i) => accesses[*i].clone(),
                            _ => unreachable!("the simple form's loop holds only accesses"),
                        })
                        .collect();
                    lp = Some(LoopProgram {
                        count: l.count.clone(),
                        while_cond: l.while_cond.clone(),
                        body,
                        at: l.at,
                    });
                }
                Node::If(_) => unreachable!("the simple form has no if"),
            }
        }
    }
    Ok(Program {
        guard,
        guard_at: kernel.at.guard,
        accesses,
        tree,
        simple,
        pre,
        lp,
        post,
    })
}

/// [`expr::compile_split`] of an index with the trace's names, its lets and loop variables.
type SplitFn<'a> = dyn Fn(&Expr, &[(String, Expr)], &[String]) -> Option<(Affine, Compiled)> + 'a;
type CompileFn<'a> = dyn Fn(&Expr, &[(String, Expr)], &[String], &str) -> Result<Compiled> + 'a;
type PredicateFn<'a> = dyn Fn(&Expr, &[(String, Expr)], &[String], &str) -> Result<Predicate> + 'a;

/// What compiling a program's steps reads throughout: the arrays, the launch's shape (which
/// proves per-dimension coordinates inside), and how expressions and conditions compile.
struct StepCompiler<'a> {
    /// Each slot's least and greatest value where known (thread, block, enclosing loops).
    slot_bounds: &'a std::cell::RefCell<Vec<(i64, i64)>>,
    src: &'a str,
    arrays: &'a [ArrayLayout],
    shared: &'a [ArrayLayout],
    block: [u32; 3],
    grid: [u32; 3],
    compile_with: &'a CompileFn<'a>,
    split_with: &'a SplitFn<'a>,
    predicate: &'a PredicateFn<'a>,
    /// A barrier has come since the last access compiled (the next one is `after_barrier`).
    barrier_pending: std::cell::Cell<bool>,
}

impl StepCompiler<'_> {
    /// Compiles the steps of one body; `loop_vars` are the enclosing loops' variables, outermost
    /// first, and the accesses found are appended to `accesses` in text order.
    fn steps(
        &self,
        steps: &[Step],
        lets: &mut Vec<(String, Expr)>,
        loop_vars: &mut Vec<String>,
        accesses: &mut Vec<Access>,
    ) -> Result<Vec<Node>> {
        let (compile_with, predicate) = (self.compile_with, self.predicate);
        let mut nodes = Vec::new();
        for step in steps {
            match step {
                Step::Access(a) => {
                    let mut acc = self.access(a, lets, loop_vars)?;
                    acc.after_barrier = self.barrier_pending.replace(false);
                    nodes.push(Node::Access(accesses.len()));
                    accesses.push(acc);
                }
                // The barrier costs nothing modelled: the warps of a block issue in turns
                // already, and the time model charges no wait (docs/trace-format.md). It only
                // keeps the stores on either side of it apart (`Access::after_barrier`).
                Step::Sync(_) => self.barrier_pending.set(true),
                Step::Loop(l) => {
                    let count =
                        compile_with(&l.count, lets, loop_vars, &format!("{}: loop count", l.at))?;
                    if let Some(c) = count.as_affine()
                        && c.coef.iter().all(|&x| x == 0)
                        && c.c0 < 0
                    {
                        return Err(Error::new(
                            self.src,
                            format!(
                                "{}: loop '{}' has a negative count \"{}\" = {}",
                                l.at, l.var, l.count, c.c0
                            ),
                        ));
                    }
                    let depth = loop_vars.len();
                    // the loop variable runs below the count's largest value over the launch
                    let top = count.as_affine().and_then(|c| {
                        let bounds = self.slot_bounds.borrow();
                        let mut hi = i128::from(c.c0);
                        for (slot, &coef) in c.coef.iter().enumerate().filter(|(_, c)| **c != 0) {
                            let (lo, up) = bounds.get(slot).copied()?;
                            hi += (i128::from(coef) * i128::from(lo))
                                .max(i128::from(coef) * i128::from(up));
                        }
                        i64::try_from(hi - 1).ok()
                    });
                    let mut bounds = self.slot_bounds.borrow_mut();
                    bounds.truncate(SLOT_LOOP + depth);
                    if let Some(top) = top.filter(|_| bounds.len() == SLOT_LOOP + depth) {
                        bounds.push((0, top.max(0)));
                    }
                    drop(bounds);
                    loop_vars.push(l.var.clone());
                    let while_cond = match &l.while_cond {
                        Some(w) => Some(predicate(
                            w,
                            lets,
                            loop_vars,
                            &format!("{}: loop while", l.at),
                        )?),
                        None => None,
                    };
                    let saved = lets.len();
                    lets.extend(l.lets.iter().cloned());
                    let first = accesses.len();
                    let body = self.steps(&l.body, lets, loop_vars, accesses)?;
                    // a barrier after the body's last access comes before its first one in
                    // every iteration after the first; the first iteration's first access is
                    // marked too (so a store there never continues a store before the loop: one
                    // merge a loop at most is lost)
                    if self.barrier_pending.get()
                        && let Some(a) = accesses.get_mut(first)
                    {
                        a.after_barrier = true;
                    }
                    lets.truncate(saved);
                    loop_vars.pop();
                    self.slot_bounds.borrow_mut().truncate(SLOT_LOOP + depth);
                    let lanes = SLOT_THREAD..SLOT_THREAD + 3;
                    nodes.push(Node::Loop(LoopNode {
                        count_lane_invariant: !count.reads_slots(lanes.clone()),
                        while_lane_invariant: !while_cond
                            .as_ref()
                            .is_some_and(|w| w.reads_slots(lanes)),
                        count,
                        while_cond,
                        depth,
                        body,
                        at: l.at,
                    }));
                }
                Step::If(i) => {
                    let what = format!("{}: if condition", i.at);
                    let cond = predicate(&i.cond, lets, loop_vars, &what)?;
                    // An `if` on the parameters alone (a trace's variants, e.g. a body per
                    // folding factor) is decided here: the branch not taken compiles to nothing,
                    // and a program that is simple but for it keeps the simple form.
                    match cond.constant() {
                        Some(true) => nodes.extend(self.steps(&i.body, lets, loop_vars, accesses)?),
                        Some(false) => {}
                        None => {
                            let body = self.steps(&i.body, lets, loop_vars, accesses)?;
                            let cond_split = match (&cond, conjuncts(&i.cond).as_slice()) {
                                (Predicate::General(_), [c]) => {
                                    as_comparison(c).and_then(|(op, a, b)| {
                                        let diff = Expr::Binary(
                                            BinaryOp::Sub,
                                            Box::new(a.clone()),
                                            Box::new(b.clone()),
                                        );
                                        (self.split_with)(&diff, lets, loop_vars)
                                            .map(|(affine, rest)| (affine, rest, op))
                                    })
                                }
                                _ => None,
                            };
                            nodes.push(Node::If(IfNode {
                                cond_lane_invariant: !cond
                                    .reads_slots(SLOT_THREAD..SLOT_THREAD + 3),
                                cond_split,
                                cond,
                                body,
                                at: i.at,
                                predicated: i.predicated,
                            }));
                        }
                    }
                }
            }
        }
        Ok(nodes)
    }
}

impl StepCompiler<'_> {
    /// Compiles one access: its linear index and, for a per-dimension index, each coordinate
    /// with its dimension's extent (linearised x fastest: i0 + d0 * (i1 + d1 * (i2 + ...))).
    fn access(
        &self,
        a: &crate::input::trace::AccessDecl,
        lets: &[(String, Expr)],
        loop_vars: &[String],
    ) -> Result<Access> {
        if a.kind == AccessKind::Shuffle {
            // no address: its index is a constant the simulation never evaluates
            return Ok(Access {
                kind: a.kind,
                array: 0,
                index: Compiled::Affine(Affine::constant(0)),
                lane_split: None,
                bytes: a.bytes,
                depth: loop_vars.len(),
                ends_run: false,
                bypass_l1: false,
                aggregated: false,
                float: false,
                instructions_before: 0,
                after_barrier: false,
                coordinates: Vec::new(),
                index_text: String::new(),
                at: a.at,
            });
        }
        let array = if a.kind.is_shared() {
            &self.shared[a.array]
        } else {
            &self.arrays[a.array]
        };
        let what = format!(
            "{}: index of {} '{}'",
            a.at,
            match a.kind {
                AccessKind::Load => "load from",
                AccessKind::Store => "store to",
                AccessKind::Atomic => "atomic on",
                AccessKind::SharedLoad => "shared load from",
                AccessKind::SharedStore => "shared store to",
                AccessKind::Shuffle => unreachable!("a shuffle has no index"),
            },
            array.name
        );
        let (index_expr, coordinates) = if a.index.len() == 1 {
            (a.index[0].clone(), Vec::new())
        } else {
            let mut text = format!("({})", a.index[a.index.len() - 1]);
            for d in (0..a.index.len() - 1).rev() {
                text = format!("({}) + {} * ({text})", a.index[d], array.dims[d]);
            }
            let linear = expr::parse(&text)
                .map_err(|e| Error::new(self.src, format!("internal: linearised index: {e}")))?;
            let coordinates = a
                .index
                .iter()
                .zip(&a.index_text)
                .zip(&array.dims)
                .map(|((e, text), &extent)| {
                    let index = (self.compile_with)(e, lets, loop_vars, &what)?;
                    let always_inside = self.proved_inside(&index, extent);
                    Ok(Coordinate {
                        text: text.clone(),
                        index,
                        extent,
                        always_inside,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            (linear, coordinates)
        };
        let index = (self.compile_with)(&index_expr, lets, loop_vars, &what)?;
        let lane_split = match index {
            Compiled::General(_) => (self.split_with)(&index_expr, lets, loop_vars),
            Compiled::Affine(_) => None,
        };
        Ok(Access {
            kind: a.kind,
            array: a.array,
            index,
            lane_split,
            bytes: a.bytes,
            depth: loop_vars.len(),
            ends_run: a.ends_run,
            bypass_l1: a.bypass_l1,
            aggregated: a.aggregated,
            float: a.float,
            instructions_before: a.instructions_before,
            after_barrier: false,
            coordinates,
            index_text: match &a.index_text[..] {
                [one] => one.clone(),
                list => format!("[\"{}\"]", list.join("\", \"")),
            },
            at: a.at,
        })
    }

    /// Whether `index` lies in `0..extent` for every thread of the launch: it is affine, names no
    /// loop variable, and its least and greatest values over the block and grid are in range.
    fn proved_inside(&self, index: &Compiled, extent: i64) -> bool {
        let Some(f) = index.as_affine() else {
            return false;
        };
        if f.coef[SLOT_LOOP..].iter().any(|&c| c != 0) {
            return false;
        }
        let (mut lo, mut hi) = (i128::from(f.c0), i128::from(f.c0));
        for d in 0..3 {
            for (slot, top) in [
                (SLOT_THREAD + d, self.block[d] as i128 - 1),
                (SLOT_BLOCK + d, self.grid[d] as i128 - 1),
            ] {
                let span = i128::from(f.coef[slot]) * top;
                lo += span.min(0);
                hi += span.max(0);
            }
        }
        lo >= 0 && hi < i128::from(extent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h200() -> HwConfig {
        HwConfig::load("h200").unwrap()
    }

    /// A 2-D kernel: nx and ny, no nz.
    fn jacobi2d() -> Kernel {
        Kernel::parse(&jacobi2d_text(), "jacobi2d.toml").unwrap()
    }

    fn jacobi2d_text() -> String {
        let text = r#"
name = "jacobi2d"
[params]
nx = 64
ny = 32
[[arrays]]
name = "a"
element_bytes = 4
dims = ["nx + 2", "ny + 2"]
[launch]
block = [32, 8, 1]
grid = ["cdiv(nx, blockDim.x)", "cdiv(ny, blockDim.y)", "1"]
[thread]
let = ["x = blockIdx.x * blockDim.x + threadIdx.x + 1", "y = blockIdx.y * blockDim.y + threadIdx.y + 1"]
guard = "x <= nx && y <= ny"
lattice_updates = "nx * ny"
body = [{ load = "a", index = ["x", "y"] }]
"#;
        text.to_string()
    }

    #[test]
    fn a_domain_sets_as_many_sizes_as_the_kernel_has() {
        let star1 = crate::input::trace::load("star1").unwrap();
        let (d, sets) = domain_request(&star1, "64x32x16").unwrap();
        assert_eq!(d, Some([64, 32, 16]));
        assert!(sets.is_empty());
        let k = jacobi2d();
        let (d, sets) = domain_request(&k, "128x96").unwrap();
        assert_eq!(d, None);
        assert_eq!(sets, vec![("nx".to_string(), 128), ("ny".to_string(), 96)]);
        // Bound: the grid follows the sizes, and a later --set still wins.
        let req = LaunchRequest {
            block: None,
            domain: d,
            set: [sets, vec![("ny".to_string(), 16)]].concat(),
        };
        let l = Launch::new(&k, &h200(), &req).unwrap();
        assert_eq!(l.grid, [4, 2, 1]);
        assert_eq!(l.lattice_updates, 128 * 16);
    }

    #[test]
    fn a_domain_of_the_wrong_dimensionality_says_what_to_give() {
        let k = jacobi2d();
        let e = domain_request(&k, "64x64x64").unwrap_err();
        assert_eq!(e.source_name, "--domain");
        assert!(
            e.message
                .contains("2-dimensional (it has nx, ny): give --domain NXxNY"),
            "{}",
            e.message
        );
        let star1 = crate::input::trace::load("star1").unwrap();
        let e = domain_request(&star1, "64").unwrap_err();
        assert!(
            e.message.contains("give --domain NXxNYxNZ"),
            "{}",
            e.message
        );
        for bad in ["", "0x4", "4x4x4x4", "axb", "-3"] {
            let e = domain_request(&star1, bad).unwrap_err();
            assert!(
                e.message.contains("is not of the form"),
                "{bad}: {}",
                e.message
            );
        }
    }

    #[test]
    fn an_if_on_parameters_alone_is_decided_at_binding_and_keeps_the_simple_form() {
        let text = |fold: i64| {
            format!(
                r#"
name = "variants"
[params]
n = 256
fold = {fold}
[[arrays]]
name = "a"
element_bytes = 8
dims = ["n + 8"]
[launch]
block = [32, 1, 1]
grid = ["cdiv(n, blockDim.x)", "1", "1"]
[thread]
let = ["x = blockIdx.x * blockDim.x + threadIdx.x"]
lattice_updates = "n"
body = [
  {{ if = "fold == 1", body = [{{ load = "a", index = "x" }}, {{ load = "a", index = "x + 1" }}] }},
  {{ if = "fold != 1", body = [{{ load = "a", index = "x + 2" }}] }},
  {{ store = "a", index = "x" }},
]
"#
            )
        };
        for (fold, loads) in [(1, 2), (2, 1)] {
            let k = Kernel::parse(&text(fold), "variants.toml").unwrap();
            let l = Launch::new(&k, &h200(), &LaunchRequest::default()).unwrap();
            assert!(l.program.simple, "fold {fold}");
            assert_eq!(l.program.accesses.len(), loads + 1, "fold {fold}");
            let load_count = l
                .program
                .accesses
                .iter()
                .filter(|a| a.kind == AccessKind::Load);
            assert_eq!(load_count.count(), loads, "fold {fold}");
        }
        // A condition on the thread stays an `if` of the program; the other is still decided.
        let k = Kernel::parse(&text(1).replace("fold == 1", "x < 100"), "v.toml").unwrap();
        let l = Launch::new(&k, &h200(), &LaunchRequest::default()).unwrap();
        assert!(!l.program.simple);
        assert_eq!(l.program.accesses.len(), 3);
    }

    #[test]
    fn coordinates_inside_the_launch_box_are_proved_at_binding() {
        let k = crate::input::trace::load("jacobi2d").unwrap();
        let proved = |set: Vec<(String, i64)>| -> Vec<Vec<bool>> {
            let req = LaunchRequest {
                set,
                ..Default::default()
            };
            let l = Launch::new(&k, &h200(), &req).unwrap();
            (l.program.accesses.iter())
                .map(|a| a.coordinates.iter().map(|c| c.always_inside).collect())
                .collect()
        };
        // nx = ny = 4096, multiples of the 32 × 8 block: x and y run over 1..=4096, and x ± 1,
        // y ± 1 over 0..=4097, inside 4098.
        assert!(proved(Vec::new()).iter().flatten().all(|&p| p));
        // nx = 100: the grid reaches x = 128 (beyond 101), threads the guard keeps out, which
        // only the check per access sees; y is still proved.
        for a in proved(vec![("nx".into(), 100)]) {
            assert_eq!(a, vec![false, true]);
        }
    }

    #[test]
    fn evaluation_errors_name_the_step() {
        let text = jacobi2d_text().replace(
            r#"body = [{ load = "a", index = ["x", "y"] }]"#,
            "body = [\n  { loop = \"k\", count = \"8 / (x - 3)\", body = [{ load = \"a\", index = [\"x\", \"y\"] }] },\n]",
        );
        let k = Kernel::parse(&text, "jacobi2d.toml").unwrap();
        let l = Launch::new(&k, &h200(), &LaunchRequest::default()).unwrap();
        let e = geometry::block_warps(&l, 0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "jacobi2d.toml: line 18, column 3: loop count for thread (2, 0, 0) of block (0, 0, 0): division or modulo by zero"
        );
    }

    #[test]
    fn occupancy_matches_the_measured_launches() {
        // dev_set.csv: 1024-thread blocks of star1 (22 regs) run 2 per SM, 256-thread blocks 8.
        let hw = h200();
        assert_eq!(occupancy(&hw, 1024, 22, 0).unwrap().blocks_per_sm, 2);
        assert_eq!(occupancy(&hw, 256, 32, 0).unwrap().blocks_per_sm, 8);
        // 64 threads: 32-block limit.
        let o = occupancy(&hw, 64, 32, 0).unwrap();
        assert_eq!((o.blocks_per_sm, o.limiter), (32, "blocks"));
        // 128 registers per thread: 4 quarters × ⌊16384 / 4096⌋ = 16 warps → 2 blocks of 256.
        let o = occupancy(&hw, 256, 128, 0).unwrap();
        assert_eq!((o.blocks_per_sm, o.limiter), (2, "registers"));
        // 100 KB of shared memory per block: ⌊233472 / (102400 + 1024)⌋ = 2.
        let o = occupancy(&hw, 128, 32, 102_400).unwrap();
        assert_eq!((o.blocks_per_sm, o.limiter), (2, "shared memory"));
        assert!(occupancy(&hw, 1024, 255, 0).is_err());
    }

    #[test]
    fn star1_binds_to_affine_indices() {
        let k = Kernel::load(std::path::Path::new("traces/star1.toml")).unwrap();
        let l = Launch::new(
            &k,
            &h200(),
            &LaunchRequest {
                block: Some([32, 8, 4]),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(l.grid, [8, 32, 64]);
        assert_eq!(l.total_blocks, 16384);
        assert_eq!(l.program.pre.len(), 8);
        let c = l.program.pre[0].index.as_affine().expect("affine");
        // c = (z+4)*plane + (y+4)*pitch + (x+4), pitch 264, plane 264*264.
        let (pitch, plane) = (264, 264 * 264);
        assert_eq!(c.c0, 4 * plane + 4 * pitch + 4);
        assert_eq!(&c.coef[..6], &[1, pitch, plane, 32, 8 * pitch, 4 * plane]);
        assert_eq!(l.arrays[0].base % (2 << 20), 0);
        assert!(l.arrays[1].base >= l.arrays[0].base + l.arrays[0].bytes());
        assert_eq!(l.lattice_updates, 256 * 256 * 256);
    }

    #[test]
    fn bad_requests_are_errors() {
        let k = Kernel::load(std::path::Path::new("traces/star1.toml")).unwrap();
        let hw = h200();
        let e = Launch::new(
            &k,
            &hw,
            &LaunchRequest {
                block: Some([64, 32, 1]),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(e.message.contains("2048 threads"), "{e}");
        let e = Launch::new(
            &k,
            &hw,
            &LaunchRequest {
                set: vec![("bogus".into(), 1)],
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(e.message.contains("no parameter 'bogus'"), "{e}");
        let e = Launch::new(
            &k,
            &hw,
            &LaunchRequest {
                domain: Some([0, 4, 4]),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(e.message.contains("positive"), "{e}");
    }
}
