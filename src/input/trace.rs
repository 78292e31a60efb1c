//! Kernel traces: what a code generator knows about a kernel, read from `traces/*.toml`.
//!
//! A trace names integer parameters, arrays, the thread → point mapping (`let` definitions of
//! threadIdx / blockIdx / blockDim / gridDim), a guard, the launch grid, and the accesses in program
//! order, inside per-thread loops (nested up to [`MAX_LOOP_DEPTH`] deep) and `if` steps as the
//! kernel needs. Expressions are parsed here (errors name the file, line and column); binding
//! them to a block shape and a GPU happens in [`crate::launch`].

use crate::error::{Error, Position, Result};
use crate::input::expr::{self, Expr};
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

/// A parsed kernel description.
#[derive(Debug, Clone)]
pub struct Kernel {
    /// Kernel name.
    pub name: String,
    /// Free-text description.
    pub description: String,
    /// File the kernel was read from (for error messages).
    pub source_name: String,
    /// Parameters and their default values.
    pub params: BTreeMap<String, i64>,
    /// Arrays, in allocation order.
    pub arrays: Vec<ArrayDecl>,
    /// Shared-memory arrays of each block (`[[shared]]`), in declaration order.
    pub shared: Vec<ArrayDecl>,
    /// Default block shape.
    pub default_block: [u32; 3],
    /// Grid size per dimension (may use parameters and `blockDim.*`).
    pub grid: [Expr; 3],
    /// Registers per thread (occupancy); may use parameters and `blockDim.*`.
    pub registers_per_thread: Expr,
    /// Shared memory per block in bytes (occupancy); may use parameters and `blockDim.*`.
    pub shared_bytes_per_block: Expr,
    /// Loads a warp issues back to back before an instruction waits on one of them (read off the
    /// compiled SASS); `None`: every run of consecutive loads in the body goes at once.
    pub loads_per_run: Option<u32>,
    /// Bytes of the compiled code (`launch.code_bytes`; the lift reads it off the SASS), which a
    /// launch fetches from DRAM once ([`crate::input::hw::DramConfig::launch_read_sectors`]);
    /// `None` when the trace does not say: then only the launch's fixed reads are counted.
    pub code_bytes: Option<u64>,
    /// Derived names, in definition order.
    pub lets: Vec<(String, Expr)>,
    /// Threads for which this is false do nothing.
    pub guard: Option<Expr>,
    /// Lattice updates the whole launch performs (for bytes per lattice update).
    pub lattice_updates: Expr,
    /// Floating-point operations per lattice update (for the time model's compute limiter);
    /// `None` when the trace does not say.
    pub flops_per_update: Option<FlopsPerUpdate>,
    /// Warp instructions each warp issues, all of them (the SASS instructions a thread runs,
    /// loops times their trips; may use the parameters and `blockDim`), for the time model's
    /// issue limiter; `None` when the trace does not say.
    pub instructions_per_warp: Option<Expr>,
    /// The accesses, in program order.
    pub body: Vec<Step>,
    /// Where the parts evaluated at binding stand in the file (the steps carry their own).
    pub at: Positions,
}

/// `thread.flops_per_update`: floating-point operations per lattice update (an FMA is two).
#[derive(Debug, Clone, PartialEq)]
pub enum FlopsPerUpdate {
    /// One number (`flops_per_update = 8`): double precision when an array of the launch has
    /// 8-byte elements, else single precision.
    Unsplit(f64),
    /// Per precision (`flops_per_update = { fp32 = 6, fp64 = "2 * m" }`), as the lifter
    /// counts them: integers or expressions of the parameters, evaluated when bound.
    Split {
        /// Single-precision operations.
        fp32: Expr,
        /// Double-precision operations.
        fp64: Expr,
    },
}

/// Floating-point operations by precision.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FpOps {
    /// Single-precision operations.
    pub fp32: f64,
    /// Double-precision operations.
    pub fp64: f64,
}

impl FpOps {
    /// Both counts times `k`.
    pub fn scaled(self, k: f64) -> FpOps {
        FpOps {
            fp32: self.fp32 * k,
            fp64: self.fp64 * k,
        }
    }
}

/// Where the expressions of a kernel evaluated when it is bound stand in its file, so that
/// bind-time errors name the line and column. A key the trace leaves out (a default) keeps
/// `Position::default()`; its default value never fails.
#[derive(Debug, Clone, Default)]
pub struct Positions {
    /// `launch.block`.
    pub block: Position,
    /// Each of `launch.grid`.
    pub grid: [Position; 3],
    /// `launch.registers_per_thread`.
    pub registers_per_thread: Position,
    /// `launch.shared_bytes_per_block`.
    pub shared_bytes_per_block: Position,
    /// `thread.guard`.
    pub guard: Position,
    /// `thread.lattice_updates`.
    pub lattice_updates: Position,
    /// `thread.flops_per_update`.
    pub flops_per_update: Position,
    /// `thread.instructions_per_warp`.
    pub instructions_per_warp: Position,
    /// Per array, each of its `dims`.
    pub dims: Vec<Vec<Position>>,
    /// Per shared array, each of its `dims`.
    pub shared_dims: Vec<Vec<Position>>,
}

/// An array the kernel reads or writes.
#[derive(Debug, Clone)]
pub struct ArrayDecl {
    /// Array name.
    pub name: String,
    /// Element size in bytes.
    pub element_bytes: u32,
    /// Extent of each dimension, x fastest.
    pub dims: Vec<Expr>,
    /// Alignment of the base address in bytes.
    pub align_bytes: u64,
}

/// Load, store or atomic of global memory, or load or store of shared memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessKind {
    /// A global load.
    Load,
    /// A global store.
    Store,
    /// A global atomic read-modify-write whose result the thread does not use (CUDA's
    /// `atomicAdd` and friends compile to `RED`): performed at the L2, never cached in L1.
    Atomic,
    /// A shared-memory load (`LDS`): L1 data-pipe wavefronts by the bank rule, nothing beyond.
    SharedLoad,
    /// A shared-memory store (`STS`).
    SharedStore,
    /// A warp shuffle (`SHFL`, CUDA's `__shfl_*_sync` of 4 bytes; a double's is two): it moves
    /// registers between the lanes and no memory, but takes one L1 data-pipe wavefront per warp
    /// instruction (measured: `validation/warp_ops_probe.cu`). It has no array and no index.
    Shuffle,
}

impl AccessKind {
    /// Whether the access is to shared memory (its array is one of [`Kernel::shared`]); it
    /// never reaches the L1's tags, the L2 or DRAM.
    pub fn is_shared(self) -> bool {
        matches!(self, AccessKind::SharedLoad | AccessKind::SharedStore)
    }

    /// Whether the access reaches global memory through the L1's tags (a load, store or
    /// atomic): not a shared access nor a shuffle.
    pub fn is_global(self) -> bool {
        matches!(
            self,
            AccessKind::Load | AccessKind::Store | AccessKind::Atomic
        )
    }
}

/// Most memory instructions in a program's text (records number them in 16 bits).
pub const MAX_ACCESSES: usize = 65535;

/// Memory instructions in `steps` (loops counted once).
fn count_accesses(steps: &[Step]) -> usize {
    steps
        .iter()
        .map(|s| match s {
            Step::Access(_) => 1,
            Step::Loop(l) => count_accesses(&l.body),
            Step::If(i) => count_accesses(&i.body),
            Step::Sync(_) => 0,
        })
        .sum()
}

/// Most loops one access may sit in (each loop variable takes one expression slot).
pub const MAX_LOOP_DEPTH: usize = 4;
/// Most loops and `if`s one step may sit in, together.
pub const MAX_NESTING: usize = 8;

/// One step of the per-thread program.
impl Kernel {
    /// Points the positions of a kernel parsed from `toml`, the trace a kernel was lifted to,
    /// at what its file names: each step whose line in `toml` ends with `# PTX line N` at PTX
    /// line N, every other position at its place in the printed trace.
    pub fn point_into_ptx(&mut self, toml: &str) {
        let ptx_lines: BTreeMap<usize, usize> = toml
            .lines()
            .enumerate()
            .filter_map(|(i, l)| {
                let n = l.rsplit_once("# PTX line ")?.1.trim().parse().ok()?;
                Some((i + 1, n))
            })
            .collect();
        let point = |at: &mut Position| match ptx_lines.get(&at.line) {
            Some(&n) => *at = Position::line(n),
            None => at.in_lifted_trace = true,
        };
        fn steps(body: &mut [Step], point: &dyn Fn(&mut Position)) {
            for step in body {
                match step {
                    Step::Access(a) => point(&mut a.at),
                    Step::Loop(l) => {
                        point(&mut l.at);
                        steps(&mut l.body, point);
                    }
                    Step::If(i) => {
                        point(&mut i.at);
                        steps(&mut i.body, point);
                    }
                    Step::Sync(at) => point(at),
                }
            }
        }
        steps(&mut self.body, &point);
        let at = &mut self.at;
        for p in [
            &mut at.block,
            &mut at.registers_per_thread,
            &mut at.shared_bytes_per_block,
            &mut at.guard,
            &mut at.lattice_updates,
            &mut at.flops_per_update,
        ]
        .into_iter()
        .chain(&mut at.grid)
        .chain(at.dims.iter_mut().flatten())
        .chain(at.shared_dims.iter_mut().flatten())
        {
            point(p);
        }
    }
}

#[derive(Debug, Clone)]
pub enum Step {
    /// One memory instruction.
    Access(AccessDecl),
    /// A per-thread loop.
    Loop(LoopDecl),
    /// Steps only the threads meeting a condition perform.
    If(IfDecl),
    /// `{ sync = true }`: `__syncthreads()`, the block's barrier. Where it stands is kept (the
    /// lifter writes it, a reader sees the phases), but it costs nothing in the simulation.
    Sync(Position),
}

/// `{ if = "COND", body = [...] }`: threads for which COND is false skip the body; a warp none
/// of whose threads meet it issues nothing of it, unless the `if` is `predicated`.
#[derive(Debug, Clone)]
pub struct IfDecl {
    /// The condition (a comparison or a logical combination of comparisons).
    pub cond: Expr,
    /// Where the step stands in the trace (bind-time errors name it).
    pub at: Position,
    /// The steps performed by the threads meeting it.
    pub body: Vec<Step>,
    /// `predicated = true`: the compiled code predicates the body's instructions (`@P LDG`)
    /// instead of branching around them, so a warp none of whose lanes meets the condition
    /// still issues each of them, with no lane active. Such an issue moves no data but takes
    /// one data-pipe wavefront (measured, `validation/predicated_probe.cu`). The body then
    /// holds only loads, stores and atomics.
    pub predicated: bool,
}

/// One global memory instruction.
#[derive(Debug, Clone)]
pub struct AccessDecl {
    /// Load or store.
    pub kind: AccessKind,
    /// Index into the kernel's arrays ([`Kernel::shared`] for a shared access).
    pub array: usize,
    /// Element index: one linear expression, or one per dimension (x fastest).
    pub index: Vec<Expr>,
    /// `index` as written in the trace, for errors.
    pub index_text: Vec<String>,
    /// Bytes accessed (defaults to the element size).
    pub bytes: u32,
    /// A load after which the warp waits: its next instruction uses a value loaded so far, so
    /// the run of loads it issues back to back ends here (read off the SASS).
    pub ends_run: bool,
    /// A global load that never hits in, nor allocates, the L1: every sector goes to the L2
    /// (PTX `ld.global.cg`, `.lu`, `.cv`, volatile and GPU- or system-scope loads; measured on
    /// the H200: `validation/load_cache_ops.cu`).
    pub bypass_l1: bool,
    /// An atomic whose warp's active lanes on one address make one update, by the first of
    /// them (what ptxas compiles a warp-uniform address and operand to: `VOTEU.ANY`, `POPC`,
    /// one `RED`; measured on the H100, tests/data/h100/micro/atomics `red_same`).
    pub aggregated: bool,
    /// An atomic that adds floating-point values (`red.add.f32`, `.f64`): updates of one word
    /// wait for the previous one's add (`[atomics] float_update_ns`).
    pub float: bool,
    /// For a global store: the instructions the warp issues between its previous memory
    /// instruction (or barrier) and this store, read off the SASS. A store further than
    /// `[l1] store_merge_window_instructions` from the warp's previous store does not merge with
    /// it on the way to the L2 (docs/model.md, "A warp's stores in a row merge"). 0 when not given.
    pub instructions_before: u32,
    /// Where the step stands in the trace (bind-time errors name it).
    pub at: Position,
}

/// A per-thread loop `for (var = 0; var < count; var++) { if (!while) break; ... }`: the
/// optional `while` is an early exit, a thread leaves the loop for good at its first false value.
#[derive(Debug, Clone)]
pub struct LoopDecl {
    /// Loop variable name.
    pub var: String,
    /// Trip count.
    pub count: Expr,
    /// Optional extra continuation condition, evaluated per lane each iteration.
    pub while_cond: Option<Expr>,
    /// Names defined inside the loop (may use the loop variable).
    pub lets: Vec<(String, Expr)>,
    /// The accesses of one iteration.
    pub body: Vec<Step>,
    /// Where the step stands in the trace (bind-time errors name it).
    pub at: Position,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKernel {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    params: BTreeMap<String, Spanned<i64>>,
    #[serde(default)]
    arrays: Vec<RawArray>,
    #[serde(default)]
    shared: Vec<RawArray>,
    launch: RawLaunch,
    thread: RawThread,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawArray {
    name: Spanned<String>,
    element_bytes: Spanned<i64>,
    dims: Vec<Spanned<String>>,
    #[serde(default)]
    align_bytes: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLaunch {
    block: Spanned<Vec<i64>>,
    grid: Spanned<Vec<Spanned<String>>>,
    #[serde(default)]
    registers_per_thread: Option<Spanned<toml::Value>>,
    #[serde(default)]
    shared_bytes_per_block: Option<Spanned<toml::Value>>,
    #[serde(default)]
    loads_per_run: Option<Spanned<i64>>,
    #[serde(default)]
    code_bytes: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawThread {
    #[serde(default, rename = "let")]
    lets: Vec<Spanned<String>>,
    #[serde(default)]
    guard: Option<Spanned<String>>,
    lattice_updates: Spanned<String>,
    #[serde(default)]
    flops_per_update: Option<Spanned<toml::Value>>,
    #[serde(default)]
    instructions_per_warp: Option<Spanned<toml::Value>>,
    body: Vec<Spanned<RawStep>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    load: Option<Spanned<String>>,
    store: Option<Spanned<String>>,
    atomic: Option<Spanned<String>>,
    #[serde(rename = "if")]
    if_cond: Option<Spanned<String>>,
    index: Option<Spanned<toml::Value>>,
    bytes: Option<Spanned<i64>>,
    ends_run: Option<Spanned<bool>>,
    bypass_l1: Option<Spanned<bool>>,
    aggregated: Option<Spanned<bool>>,
    float: Option<Spanned<bool>>,
    instructions_before: Option<Spanned<i64>>,
    #[serde(rename = "loop")]
    loop_var: Option<Spanned<String>>,
    count: Option<Spanned<String>>,
    #[serde(rename = "while")]
    while_cond: Option<Spanned<String>>,
    #[serde(rename = "let")]
    lets: Option<Vec<Spanned<String>>>,
    body: Option<Vec<Spanned<RawStep>>>,
    sync: Option<Spanned<bool>>,
    shuffles: Option<Spanned<i64>>,
    predicated: Option<Spanned<bool>>,
}

impl RawStep {
    /// Whether the entry has a key only an access takes (`index`, `bytes`, `ends_run`,
    /// `bypass_l1`, `aggregated`, `float`, `instructions_before`).
    fn has_access_keys(&self) -> bool {
        self.index.is_some()
            || self.bytes.is_some()
            || self.ends_run.is_some()
            || self.bypass_l1.is_some()
            || self.aggregated.is_some()
            || self.float.is_some()
            || self.instructions_before.is_some()
    }

    /// Whether the entry has a key only a loop takes (`count`, `while`, `let`).
    fn has_loop_keys(&self) -> bool {
        self.count.is_some() || self.while_cond.is_some() || self.lets.is_some()
    }
}

/// Reserved names the thread mapping may use.
pub const BUILTINS: [&str; 12] = [
    "threadIdx.x",
    "threadIdx.y",
    "threadIdx.z",
    "blockIdx.x",
    "blockIdx.y",
    "blockIdx.z",
    "blockDim.x",
    "blockDim.y",
    "blockDim.z",
    "gridDim.x",
    "gridDim.y",
    "gridDim.z",
];

struct Ctx<'a> {
    text: &'a str,
    source: &'a str,
}

impl Ctx<'_> {
    fn err_at(&self, offset: usize, message: impl std::fmt::Display) -> Error {
        Error::new(self.source, format!("{}: {message}", self.position(offset)))
    }

    fn position(&self, offset: usize) -> Position {
        Position::of(self.text, offset)
    }

    /// Parses an expression held in a TOML string; errors point into the file.
    fn expr(&self, s: &Spanned<String>) -> Result<Expr> {
        expr::parse(s.get_ref()).map_err(|e| {
            // The span covers the quotes; the expression starts one byte later for basic strings.
            let start = s.span().start + quote_len(&self.text[s.span().start..]);
            self.err_at(
                start + e.pos,
                format!("in expression \"{}\": {}", s.get_ref(), e.message),
            )
        })
    }

    /// Parses `name = expression`.
    fn definition(&self, s: &Spanned<String>) -> Result<(String, Expr)> {
        let text = s.get_ref();
        let start = s.span().start + quote_len(&self.text[s.span().start..]);
        let Some(eq) = text.find('=') else {
            return Err(self.err_at(
                start,
                format!("expected 'name = expression' but found \"{text}\""),
            ));
        };
        let name = text[..eq].trim();
        if !is_identifier(name) {
            return Err(self.err_at(start, format!("'{name}' is not a valid name in \"{text}\"")));
        }
        let body = &text[eq + 1..];
        let e = expr::parse(body).map_err(|e| {
            self.err_at(
                start + eq + 1 + e.pos,
                format!("in definition \"{text}\": {}", e.message),
            )
        })?;
        Ok((name.to_string(), e))
    }

    fn positive(&self, v: &Spanned<i64>, what: &str) -> Result<u32> {
        let x = *v.get_ref();
        if x <= 0 || x > u32::MAX as i64 {
            return Err(self.err_at(
                v.span().start,
                format!("{what} must be a positive integer, got {x}"),
            ));
        }
        Ok(x as u32)
    }
}

fn quote_len(s: &str) -> usize {
    if s.starts_with("\"\"\"") || s.starts_with("'''") {
        3
    } else if s.starts_with('"') || s.starts_with('\'') {
        1
    } else {
        0
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Kernel {
    /// Reads a kernel description from a file.
    pub fn load(path: &std::path::Path) -> Result<Kernel> {
        let text = crate::error::read_file(path)?;
        Kernel::parse(&text, &path.display().to_string())
    }

    /// Parses a kernel description; `source_name` names it in errors. The parts are read in
    /// file order (parameters, arrays, launch, thread mapping, lattice updates, body), so the
    /// first problem is the error.
    pub fn parse(text: &str, source_name: &str) -> Result<Kernel> {
        let raw: RawKernel = crate::error::from_toml(text, source_name)?;
        let cx = Ctx {
            text,
            source: source_name,
        };
        let mut names: Vec<String> = BUILTINS.iter().map(|s| s.to_string()).collect();
        let params = parse_params(&cx, &raw.params, &mut names)?;
        let arrays = parse_arrays(&cx, &raw.arrays, 256, &[])?;
        let shared = parse_arrays(&cx, &raw.shared, SHARED_ALIGN_BYTES, &arrays)?;
        let mut launch = parse_launch(&cx, &raw.launch)?;
        if raw.launch.shared_bytes_per_block.is_none() && !shared.is_empty() {
            launch.shared_bytes_per_block = shared_bytes_expr(&shared)
                .map_err(|e| Error::new(source_name, format!("internal: shared size: {e}")))?;
        }
        let t = &raw.thread;
        let ThreadMapping { lets, guard } = parse_thread_mapping(&cx, t, &mut names)?;
        let lattice_updates = cx.expr(&t.lattice_updates)?;
        let param_names: Vec<String> = params.keys().cloned().collect();
        check_names(
            &cx,
            t.lattice_updates.span().start,
            &lattice_updates,
            &param_names,
        )?;
        // The shared arrays first: their dims make shared_bytes_per_block when it is not given.
        check_shared_names(&cx, &shared, &param_names)?;
        check_launch_names(&cx, &arrays, &launch, &raw.launch, &param_names)?;
        let flops_per_update = match &t.flops_per_update {
            Some(f) => {
                let flops = parse_flops(f.get_ref()).map_err(|m| cx.err_at(f.span().start, m))?;
                if let FlopsPerUpdate::Split { fp32, fp64 } = &flops {
                    // the parameters and the block's size (a block reduction's adds)
                    let mut names = param_names.clone();
                    names.extend(["blockDim.x", "blockDim.y", "blockDim.z"].map(String::from));
                    for e in [fp32, fp64] {
                        check_names(&cx, f.span().start, e, &names)?;
                    }
                }
                Some(flops)
            }
            None => None,
        };
        let instructions_per_warp = match &t.instructions_per_warp {
            Some(v) => {
                let e =
                    parse_instructions(v.get_ref()).map_err(|m| cx.err_at(v.span().start, m))?;
                let mut names = param_names.clone();
                names.extend(["blockDim.x", "blockDim.y", "blockDim.z"].map(String::from));
                check_names(&cx, v.span().start, &e, &names)?;
                Some(e)
            }
            None => None,
        };
        let declared = Declared {
            arrays: &arrays,
            shared: &shared,
        };
        let body = parse_steps(&cx, &t.body, &declared, &mut names, Depth::default())?;
        if body.is_empty() {
            return Err(Error::new(source_name, "thread.body has no accesses"));
        }
        let accesses = count_accesses(&body);
        if accesses > MAX_ACCESSES {
            return Err(Error::new(
                source_name,
                format!(
                    "thread.body has {accesses} accesses; at most {MAX_ACCESSES} are supported"
                ),
            ));
        }
        let at = positions(&cx, &raw);
        Ok(Kernel {
            name: raw.name,
            description: raw.description,
            source_name: source_name.to_string(),
            params,
            arrays,
            shared,
            default_block: launch.default_block,
            grid: launch.grid,
            registers_per_thread: launch.registers_per_thread,
            shared_bytes_per_block: launch.shared_bytes_per_block,
            loads_per_run: launch.loads_per_run,
            code_bytes: launch.code_bytes,
            lets,
            guard,
            lattice_updates,
            flops_per_update,
            instructions_per_warp,
            body,
            at,
        })
    }

    /// Number of memory instructions in the program text (loops counted once).
    pub fn static_access_count(&self) -> usize {
        count_accesses(&self.body)
    }
}

/// Where the parts of `raw` evaluated at binding stand (an expression string: its opening quote).
fn positions(cx: &Ctx, raw: &RawKernel) -> Positions {
    let at = |s: Option<std::ops::Range<usize>>| {
        s.map_or_else(Position::default, |s| cx.position(s.start))
    };
    let (l, t) = (&raw.launch, &raw.thread);
    let grid = l.grid.get_ref();
    Positions {
        block: at(Some(l.block.span())),
        grid: std::array::from_fn(|d| at(grid.get(d).map(|g| g.span()))),
        registers_per_thread: at(l.registers_per_thread.as_ref().map(|v| v.span())),
        shared_bytes_per_block: at(l.shared_bytes_per_block.as_ref().map(|v| v.span())),
        guard: at(t.guard.as_ref().map(|g| g.span())),
        lattice_updates: at(Some(t.lattice_updates.span())),
        flops_per_update: at(t.flops_per_update.as_ref().map(|f| f.span())),
        instructions_per_warp: at(t.instructions_per_warp.as_ref().map(|v| v.span())),
        dims: (raw.arrays.iter())
            .map(|a| a.dims.iter().map(|d| at(Some(d.span()))).collect())
            .collect(),
        shared_dims: (raw.shared.iter())
            .map(|a| a.dims.iter().map(|d| at(Some(d.span()))).collect())
            .collect(),
    }
}

/// The parameters with their default values; their names join `names`.
fn parse_params(
    cx: &Ctx,
    raw: &BTreeMap<String, Spanned<i64>>,
    names: &mut Vec<String>,
) -> Result<BTreeMap<String, i64>> {
    let mut params = BTreeMap::new();
    for (name, value) in raw {
        if !is_identifier(name) {
            return Err(cx.err_at(
                value.span().start,
                format!("parameter name '{name}' is not a valid name"),
            ));
        }
        params.insert(name.clone(), *value.get_ref());
        names.push(name.clone());
    }
    Ok(params)
}

/// Default alignment of a shared array's start within the block's shared memory (what nvcc
/// gives a `__shared__` array of 16-byte vectors; smaller elements only ever start on their
/// own size, which a multiple of 16 is).
pub const SHARED_ALIGN_BYTES: u64 = 16;

/// The array declarations: distinct names (also from `others`, the global arrays when these are
/// the shared ones), positive element sizes, at least one dimension, power-of-two alignments
/// (`default_align` bytes by default).
fn parse_arrays(
    cx: &Ctx,
    raw: &[RawArray],
    default_align: u64,
    others: &[ArrayDecl],
) -> Result<Vec<ArrayDecl>> {
    let mut arrays: Vec<ArrayDecl> = Vec::new();
    for a in raw {
        let name = a.name.get_ref().clone();
        if arrays.iter().chain(others).any(|b| b.name == name) {
            return Err(cx.err_at(
                a.name.span().start,
                format!("array '{name}' is declared twice"),
            ));
        }
        let element_bytes = cx.positive(&a.element_bytes, "element_bytes")?;
        if a.dims.is_empty() {
            return Err(cx.err_at(a.name.span().start, format!("array '{name}' has no dims")));
        }
        let dims = a
            .dims
            .iter()
            .map(|d| cx.expr(d))
            .collect::<Result<Vec<_>>>()?;
        let align_bytes = match &a.align_bytes {
            Some(v) => {
                let x = cx.positive(v, "align_bytes")? as u64;
                if !x.is_power_of_two() {
                    return Err(cx.err_at(v.span().start, "align_bytes must be a power of two"));
                }
                x
            }
            None => default_align,
        };
        arrays.push(ArrayDecl {
            name,
            element_bytes,
            dims,
            align_bytes,
        });
    }
    Ok(arrays)
}

/// The `[launch]` table, read.
struct ParsedLaunch {
    default_block: [u32; 3],
    grid: [Expr; 3],
    registers_per_thread: Expr,
    shared_bytes_per_block: Expr,
    loads_per_run: Option<u32>,
    code_bytes: Option<u64>,
}

/// The `[launch]` table: the default block, the grid expressions, registers per thread (32 by
/// default) and shared memory per block (0 by default), each a number or an expression (their
/// names are checked later, in [`check_launch_names`]; their values where a block is bound), and
/// the loads per run (a positive integer, optional) and the code's bytes (optional).
fn parse_launch(cx: &Ctx, l: &RawLaunch) -> Result<ParsedLaunch> {
    if l.block.get_ref().len() != 3 {
        return Err(cx.err_at(
            l.block.span().start,
            "launch.block must list 3 sizes [x, y, z]",
        ));
    }
    // Only whole positive sizes here: the block limits (CUDA's and the GPU's) are checked where
    // a block is bound to a GPU, in `Launch::new`.
    let mut default_block = [0u32; 3];
    for (i, &v) in l.block.get_ref().iter().enumerate() {
        if v <= 0 || v > u32::MAX as i64 {
            return Err(cx.err_at(
                l.block.span().start,
                format!("launch.block[{i}] = {v} is not a positive integer"),
            ));
        }
        default_block[i] = v as u32;
    }
    if l.grid.get_ref().len() != 3 {
        return Err(cx.err_at(
            l.grid.span().start,
            "launch.grid must list 3 expressions [x, y, z]",
        ));
    }
    let g: Vec<Expr> = l
        .grid
        .get_ref()
        .iter()
        .map(|e| cx.expr(e))
        .collect::<Result<_>>()?;
    let grid = [g[0].clone(), g[1].clone(), g[2].clone()];
    let registers_per_thread = launch_quantity(
        cx,
        l.registers_per_thread.as_ref(),
        "registers_per_thread",
        32,
    )?;
    let shared_bytes_per_block = launch_quantity(
        cx,
        l.shared_bytes_per_block.as_ref(),
        "shared_bytes_per_block",
        0,
    )?;
    let loads_per_run =
        launch_integer::<u32>(cx, l.loads_per_run.as_ref(), "loads_per_run", 1, "positive")?;
    let code_bytes =
        launch_integer::<u64>(cx, l.code_bytes.as_ref(), "code_bytes", 0, "non-negative")?;
    Ok(ParsedLaunch {
        default_block,
        grid,
        registers_per_thread,
        shared_bytes_per_block,
        loads_per_run,
        code_bytes,
    })
}

/// An optional whole number of `[launch]`, at least `least`, or the line that refuses it (`what`
/// the key, `kind` what it must be: "positive", "non-negative").
fn launch_integer<T: TryFrom<i64>>(
    cx: &Ctx,
    v: Option<&Spanned<i64>>,
    what: &str,
    least: i64,
    kind: &str,
) -> Result<Option<T>> {
    let Some(v) = v else {
        return Ok(None);
    };
    let n = *v.get_ref();
    match T::try_from(n) {
        Ok(t) if n >= least => Ok(Some(t)),
        _ => Err(cx.err_at(
            v.span().start,
            format!("launch.{what} = {n} is not a {kind} integer"),
        )),
    }
}

/// A per-block resource of `[launch]`: a non-negative integer or an expression string
/// (`default` when absent).
fn launch_quantity(
    cx: &Ctx,
    v: Option<&Spanned<toml::Value>>,
    what: &str,
    default: i64,
) -> Result<Expr> {
    let Some(v) = v else {
        return Ok(Expr::Num(default));
    };
    match v.get_ref() {
        toml::Value::Integer(x) if *x >= 0 => Ok(Expr::Num(*x)),
        toml::Value::Integer(x) => Err(cx.err_at(
            v.span().start,
            format!("launch.{what} must not be negative, got {x}"),
        )),
        toml::Value::String(text) => cx.expr(&Spanned::new(v.span(), text.clone())),
        other => Err(cx.err_at(
            v.span().start,
            format!(
                "launch.{what} must be an integer or an expression string, not a {}",
                other.type_str()
            ),
        )),
    }
}

/// The thread → point mapping of `[thread]`, read.
struct ThreadMapping {
    lets: Vec<(String, Expr)>,
    guard: Option<Expr>,
}

/// The thread → point mapping: the `let` definitions in order (each a new name, using only
/// names defined before it; they join `names`) and the guard.
fn parse_thread_mapping(cx: &Ctx, t: &RawThread, names: &mut Vec<String>) -> Result<ThreadMapping> {
    let mut lets = Vec::new();
    for d in &t.lets {
        let (name, e) = cx.definition(d)?;
        if names.contains(&name) {
            return Err(cx.err_at(d.span().start, format!("'{name}' is already defined")));
        }
        check_names(cx, d.span().start, &e, names)?;
        names.push(name.clone());
        lets.push((name, e));
    }
    let guard = match &t.guard {
        Some(g) => {
            let e = cx.expr(g)?;
            check_names(cx, g.span().start, &e, names)?;
            Some(e)
        }
        None => None,
    };
    Ok(ThreadMapping { lets, guard })
}

/// Array dimensions may use only parameters; the grid, registers and shared memory also
/// `blockDim.*`.
fn check_launch_names(
    cx: &Ctx,
    arrays: &[ArrayDecl],
    launch: &ParsedLaunch,
    raw: &RawLaunch,
    param_names: &[String],
) -> Result<()> {
    for a in arrays {
        for d in &a.dims {
            check_names(cx, 0, d, param_names).map_err(|e| {
                Error::new(
                    cx.source,
                    format!("array '{}': {}", a.name, strip_location(&e.message)),
                )
            })?;
        }
    }
    let mut grid_names = param_names.to_vec();
    grid_names.extend(["blockDim.x", "blockDim.y", "blockDim.z"].map(String::from));
    for (e, s) in launch.grid.iter().zip(raw.grid.get_ref()) {
        check_names(cx, s.span().start, e, &grid_names)?;
    }
    for (e, s) in [
        (&launch.registers_per_thread, &raw.registers_per_thread),
        (&launch.shared_bytes_per_block, &raw.shared_bytes_per_block),
    ] {
        check_names(cx, s.as_ref().map_or(0, |s| s.span().start), e, &grid_names)?;
    }
    Ok(())
}

/// Shared arrays' dimensions may use parameters and `blockDim.*` (a tile that grows with the
/// block).
fn check_shared_names(cx: &Ctx, shared: &[ArrayDecl], param_names: &[String]) -> Result<()> {
    let mut known = param_names.to_vec();
    known.extend(["blockDim.x", "blockDim.y", "blockDim.z"].map(String::from));
    for a in shared {
        for d in &a.dims {
            check_names(cx, 0, d, &known).map_err(|e| {
                Error::new(
                    cx.source,
                    format!("shared array '{}': {}", a.name, strip_location(&e.message)),
                )
            })?;
        }
    }
    Ok(())
}

/// The shared memory the `[[shared]]` arrays take per block, as laid out one after another
/// (each starting on its alignment): `shared_bytes_per_block` when the trace does not give it.
fn shared_bytes_expr(shared: &[ArrayDecl]) -> std::result::Result<Expr, expr::ParseError> {
    let terms: Vec<String> = shared
        .iter()
        .map(|a| {
            let dims: Vec<String> = a.dims.iter().map(|d| format!("({d})")).collect();
            format!(
                "cdiv({} * {}, {align}) * {align}",
                a.element_bytes,
                dims.join(" * "),
                align = a.align_bytes
            )
        })
        .collect();
    expr::parse(&terms.join(" + "))
}

fn strip_location(m: &str) -> &str {
    m.split_once(": ").map_or(m, |(_, rest)| rest)
}

fn check_names(cx: &Ctx, offset: usize, e: &Expr, known: &[String]) -> Result<()> {
    for v in e.variables() {
        if !known.contains(&v) {
            return Err(cx.err_at(offset, format!("unknown variable '{v}' in \"{e}\"")));
        }
    }
    Ok(())
}

/// How deep a step sits: loops around it, and loops and `if`s together.
#[derive(Debug, Clone, Copy, Default)]
struct Depth {
    loops: usize,
    nesting: usize,
}

/// The arrays accesses may name: global (`[[arrays]]`) and shared (`[[shared]]`).
#[derive(Clone, Copy)]
struct Declared<'a> {
    arrays: &'a [ArrayDecl],
    shared: &'a [ArrayDecl],
}

/// The body entries at `depth`, each an access, a loop, an `if` or a `sync`; loop variables and
/// loop `let`s are visible (in `names`) only inside their loop.
fn parse_steps(
    cx: &Ctx,
    raw: &[Spanned<RawStep>],
    arrays: &Declared,
    names: &mut Vec<String>,
    depth: Depth,
) -> Result<Vec<Step>> {
    let mut out = Vec::new();
    for s in raw {
        let at = s.span().start;
        let r = s.get_ref();
        let heads = [
            r.load.is_some(),
            r.store.is_some(),
            r.atomic.is_some(),
            r.loop_var.is_some(),
            r.if_cond.is_some(),
            r.sync.is_some(),
            r.shuffles.is_some(),
        ];
        if heads.iter().filter(|h| **h).count() != 1 {
            return Err(cx.err_at(
                at,
                "each body entry is exactly one of: load = \"array\", store = \"array\", atomic = \"array\", loop = \"var\", if = \"condition\", sync = true, shuffles = N",
            ));
        }
        if let (Some(p), None) = (&r.predicated, &r.if_cond) {
            return Err(cx.err_at(
                p.span().start,
                "predicated marks an if (its body's instructions issued by every warp that reaches it)",
            ));
        }
        if let Some(sync) = &r.sync {
            out.push(Step::Sync(parse_sync(cx, at, r, sync)?));
        } else if let Some(n) = &r.shuffles {
            let shuffle = parse_shuffles(cx, at, r, n)?;
            out.extend((0..n.get_ref().to_owned()).map(|_| Step::Access(shuffle.clone())));
        } else if let Some(a) = r.load.as_ref().or(r.store.as_ref()).or(r.atomic.as_ref()) {
            out.push(Step::Access(parse_access(cx, at, r, a, arrays, names)?));
        } else if let Some(var) = &r.loop_var {
            out.push(Step::Loop(parse_loop(
                cx, at, r, var, arrays, names, depth,
            )?));
        } else if let Some(cond) = &r.if_cond {
            out.push(Step::If(parse_if(cx, at, r, cond, arrays, names, depth)?));
        }
    }
    Ok(out)
}

/// A `{ sync = true }` entry at `at` (`__syncthreads()`): it takes nothing else, and only `true`.
fn parse_sync(cx: &Ctx, at: usize, r: &RawStep, sync: &Spanned<bool>) -> Result<Position> {
    if r.has_access_keys() || r.has_loop_keys() || r.body.is_some() {
        return Err(cx.err_at(at, "a sync step takes only sync = true"));
    }
    if !*sync.get_ref() {
        return Err(cx.err_at(
            sync.span().start,
            "sync = false is not a step: leave it out",
        ));
    }
    Ok(cx.position(at))
}

/// Most shuffles one `shuffles = N` step may hold.
pub const MAX_SHUFFLES_PER_STEP: i64 = 1024;

/// A `{ shuffles = N }` entry at `at`: N warp shuffles (`SHFL`) in a row, each one access of
/// kind [`AccessKind::Shuffle`]; it takes nothing else.
fn parse_shuffles(cx: &Ctx, at: usize, r: &RawStep, n: &Spanned<i64>) -> Result<AccessDecl> {
    if r.has_access_keys() || r.has_loop_keys() || r.body.is_some() {
        return Err(cx.err_at(at, "a shuffles step takes only shuffles = N"));
    }
    if !(1..=MAX_SHUFFLES_PER_STEP).contains(n.get_ref()) {
        return Err(cx.err_at(
            n.span().start,
            format!(
                "shuffles = {} must be a count from 1 to {MAX_SHUFFLES_PER_STEP}",
                n.get_ref()
            ),
        ));
    }
    Ok(AccessDecl {
        kind: AccessKind::Shuffle,
        array: 0,
        index: Vec::new(),
        index_text: Vec::new(),
        bytes: 4,
        ends_run: false,
        bypass_l1: false,
        aggregated: false,
        float: false,
        instructions_before: 0,
        at: cx.position(at),
    })
}

/// One access entry at `at`, of the array named `a` (global, or shared when `[[shared]]` declares
/// it): its kind, index expressions (using only `names`) and bytes per thread (the element size
/// by default, at most 128; 4, 8 or 16 for a shared one, or the element size when smaller).
fn parse_access(
    cx: &Ctx,
    at: usize,
    r: &RawStep,
    a: &Spanned<String>,
    declared: &Declared,
    names: &[String],
) -> Result<AccessDecl> {
    if r.has_loop_keys() || r.body.is_some() {
        return Err(cx.err_at(
            at,
            "an access takes only load/store/atomic, index, bytes, ends_run, bypass_l1, aggregated, float and instructions_before",
        ));
    }
    let shared_index = declared.shared.iter().position(|x| &x.name == a.get_ref());
    let kind = match (r.load.is_some(), r.store.is_some(), shared_index.is_some()) {
        (true, _, false) => AccessKind::Load,
        (_, true, false) => AccessKind::Store,
        (true, _, true) => AccessKind::SharedLoad,
        (_, true, true) => AccessKind::SharedStore,
        (false, false, false) => AccessKind::Atomic,
        (false, false, true) => {
            return Err(cx.err_at(
                a.span().start,
                format!(
                    "an atomic on shared array '{}' is not modelled (only global atomics are)",
                    a.get_ref()
                ),
            ));
        }
    };
    let arrays = if kind.is_shared() {
        declared.shared
    } else {
        declared.arrays
    };
    let found = shared_index.or_else(|| arrays.iter().position(|x| &x.name == a.get_ref()));
    let Some(array) = found else {
        let known = (declared.arrays.iter())
            .chain(declared.shared)
            .map(|x| x.name.as_str());
        return Err(cx.err_at(
            a.span().start,
            format!(
                "unknown array '{}'{}",
                a.get_ref(),
                super::did_you_mean(a.get_ref(), known)
            ),
        ));
    };
    let Some(raw_index) = &r.index else {
        return Err(cx.err_at(at, "an access needs an index"));
    };
    let index = parse_index(cx, raw_index, a.get_ref(), &arrays[array])?;
    for (e, off, _) in &index {
        check_names(cx, *off, e, names)?;
    }
    let bytes = match &r.bytes {
        Some(b) => cx.positive(b, "bytes")?,
        None => arrays[array].element_bytes,
    };
    if bytes > 128 {
        return Err(cx.err_at(
            at,
            format!("an access of {bytes} bytes per thread is more than 128"),
        ));
    }
    if kind.is_shared() && !matches!(bytes, 1 | 2 | 4 | 8 | 16) {
        return Err(cx.err_at(
            at,
            format!("a shared access moves 1, 2, 4, 8 or 16 bytes per thread, not {bytes}"),
        ));
    }
    if kind == AccessKind::Atomic && ![4, 8].contains(&bytes) {
        return Err(cx.err_at(
            at,
            format!("an atomic works on 4 or 8 bytes per thread, not {bytes}"),
        ));
    }
    let ends_run = match &r.ends_run {
        Some(e) if kind != AccessKind::Load => {
            return Err(cx.err_at(
                e.span().start,
                "ends_run marks a load of global memory (a store, an atomic or a shared access always ends a run)",
            ));
        }
        Some(e) => *e.get_ref(),
        None => false,
    };
    let bypass_l1 = match &r.bypass_l1 {
        Some(b) if kind != AccessKind::Load => {
            return Err(cx.err_at(
                b.span().start,
                "bypass_l1 marks a load of global memory (stores, atomics and shared accesses never look the L1 up)",
            ));
        }
        Some(b) => *b.get_ref(),
        None => false,
    };
    let aggregated = match &r.aggregated {
        Some(b) if kind != AccessKind::Atomic => {
            return Err(cx.err_at(
                b.span().start,
                "aggregated marks an atomic (the warp's lanes on one address make one update)",
            ));
        }
        Some(b) => *b.get_ref(),
        None => false,
    };
    let float = match &r.float {
        Some(b) if kind != AccessKind::Atomic => {
            return Err(cx.err_at(
                b.span().start,
                "float marks an atomic that adds floating-point values",
            ));
        }
        Some(b) => *b.get_ref(),
        None => false,
    };
    let instructions_before = match &r.instructions_before {
        Some(n) if kind != AccessKind::Store => {
            return Err(cx.err_at(
                n.span().start,
                "instructions_before marks a store of global memory (how far it issues after the warp's previous memory instruction)",
            ));
        }
        Some(n) => u32::try_from(*n.get_ref()).map_err(|_| {
            cx.err_at(
                n.span().start,
                format!(
                    "instructions_before = {} must be a count of instructions (0 or more)",
                    n.get_ref()
                ),
            )
        })?,
        None => 0,
    };
    Ok(AccessDecl {
        kind,
        array,
        index_text: index.iter().map(|(_, _, text)| text.clone()).collect(),
        index: index.into_iter().map(|(e, _, _)| e).collect(),
        bytes,
        ends_run,
        bypass_l1,
        aggregated,
        float,
        instructions_before,
        at: cx.position(at),
    })
}

/// An access's index into `array` (named `name` in the file): one expression string, or a list
/// of one per dimension; each with its offset in the file and its text.
fn parse_index(
    cx: &Ctx,
    raw_index: &Spanned<toml::Value>,
    name: &str,
    array: &ArrayDecl,
) -> Result<Vec<(Expr, usize, String)>> {
    let index_at = raw_index.span().start;
    let as_expr = |v: &toml::Value| -> Result<(Expr, usize, String)> {
        match v {
            toml::Value::String(text) => Ok((
                cx.expr(&Spanned::new(
                    index_at..index_at + text.len() + 2,
                    text.clone(),
                ))?,
                index_at,
                text.clone(),
            )),
            _ => Err(cx.err_at(
                index_at,
                "an index is an expression string or a list of them",
            )),
        }
    };
    match raw_index.get_ref() {
        toml::Value::Array(list) => {
            if list.len() != array.dims.len() {
                return Err(cx.err_at(
                    index_at,
                    format!(
                        "array '{name}' has {} dims but the index lists {}",
                        array.dims.len(),
                        list.len()
                    ),
                ));
            }
            list.iter().map(as_expr).collect::<Result<_>>()
        }
        v => Ok(vec![as_expr(v)?]),
    }
}

/// One loop entry at `at` with loop variable `var`, at most [`MAX_LOOP_DEPTH`] loops deep: its
/// count, optional `while` condition, `let`s and body, each using only the names visible at its
/// place.
#[allow(clippy::too_many_arguments)]
fn parse_loop(
    cx: &Ctx,
    at: usize,
    r: &RawStep,
    var: &Spanned<String>,
    arrays: &Declared,
    names: &mut Vec<String>,
    depth: Depth,
) -> Result<LoopDecl> {
    if depth.loops >= MAX_LOOP_DEPTH {
        return Err(cx.err_at(at, format!("loops nest at most {MAX_LOOP_DEPTH} deep")));
    }
    if depth.nesting >= MAX_NESTING {
        return Err(cx.err_at(at, format!("loops and ifs nest at most {MAX_NESTING} deep")));
    }
    if r.has_access_keys() {
        return Err(cx.err_at(at, "a loop takes loop, count, while, let and body"));
    }
    let name = var.get_ref().clone();
    if !is_identifier(&name) || names.contains(&name) {
        return Err(cx.err_at(
            var.span().start,
            format!("loop variable '{name}' is not a new name"),
        ));
    }
    let Some(count_s) = &r.count else {
        return Err(cx.err_at(at, "a loop needs a count"));
    };
    let count = cx.expr(count_s)?;
    check_names(cx, count_s.span().start, &count, names)?;
    if let Ok(n) = count.eval_with(&|_: &str| None)
        && n < 0
    {
        return Err(cx.err_at(
            count_s.span().start,
            format!("a loop count of {n} is negative"),
        ));
    }
    let saved = names.len();
    names.push(name.clone());
    let while_cond = match &r.while_cond {
        Some(w) => {
            let e = cx.expr(w)?;
            check_names(cx, w.span().start, &e, names)?;
            Some(e)
        }
        None => None,
    };
    let mut lets = Vec::new();
    for d in r.lets.iter().flatten() {
        let (n, e) = cx.definition(d)?;
        if names.contains(&n) {
            return Err(cx.err_at(d.span().start, format!("'{n}' is already defined")));
        }
        check_names(cx, d.span().start, &e, names)?;
        names.push(n.clone());
        lets.push((n, e));
    }
    let Some(body_raw) = &r.body else {
        return Err(cx.err_at(at, "a loop needs a body"));
    };
    let inner = Depth {
        loops: depth.loops + 1,
        nesting: depth.nesting + 1,
    };
    let body = parse_steps(cx, body_raw, arrays, names, inner)?;
    names.truncate(saved);
    if body.is_empty() {
        return Err(cx.err_at(at, "a loop body needs at least one access"));
    }
    Ok(LoopDecl {
        var: name,
        count,
        while_cond,
        lets,
        body,
        at: cx.position(at),
    })
}

/// One `if` entry at `at`: a condition (a comparison, `&&`, `||` or `!`: an arithmetic value
/// there is almost always a mistake) and a body of steps.
#[allow(clippy::too_many_arguments)]
fn parse_if(
    cx: &Ctx,
    at: usize,
    r: &RawStep,
    cond_s: &Spanned<String>,
    arrays: &Declared,
    names: &mut Vec<String>,
    depth: Depth,
) -> Result<IfDecl> {
    if depth.nesting >= MAX_NESTING {
        return Err(cx.err_at(at, format!("loops and ifs nest at most {MAX_NESTING} deep")));
    }
    if r.has_access_keys() || r.has_loop_keys() {
        return Err(cx.err_at(at, "an if takes only if, body and predicated"));
    }
    let cond = cx.expr(cond_s)?;
    check_names(cx, cond_s.span().start, &cond, names)?;
    if !is_condition(&cond) {
        return Err(cx.err_at(
            cond_s.span().start,
            format!(
                "if = \"{}\" is not a condition: write a comparison such as \"{} != 0\"",
                cond_s.get_ref(),
                cond_s.get_ref()
            ),
        ));
    }
    let Some(body_raw) = &r.body else {
        return Err(cx.err_at(at, "an if needs a body"));
    };
    let inner = Depth {
        loops: depth.loops,
        nesting: depth.nesting + 1,
    };
    let saved = names.len();
    let body = parse_steps(cx, body_raw, arrays, names, inner)?;
    names.truncate(saved);
    if body.is_empty() {
        return Err(cx.err_at(at, "an if body needs at least one access"));
    }
    let predicated = r.predicated.as_ref().is_some_and(|p| *p.get_ref());
    if predicated {
        // What the predicate-off issue costs is measured for loads and stores, global and
        // shared (and taken for atomics); a loop, a barrier or a shuffle is branched around.
        let plain = |s: &RawStep| {
            s.loop_var.is_none() && s.if_cond.is_none() && s.sync.is_none() && s.shuffles.is_none()
        };
        if let Some(s) = body_raw.iter().find(|s| !plain(s.get_ref())) {
            return Err(cx.err_at(
                s.span().start,
                "a predicated if's body holds only loads, stores and atomics (no loop, if, sync or shuffles)",
            ));
        }
    }
    Ok(IfDecl {
        cond,
        body,
        at: cx.position(at),
        predicated,
    })
}

/// Whether `e` yields a truth value: a comparison, a logical operator, or a conditional whose
/// branches do.
fn is_condition(e: &Expr) -> bool {
    use crate::input::expr::{BinaryOp as B, UnaryOp};
    match e {
        Expr::Binary(op, _, _) => matches!(
            op,
            B::Eq | B::Ne | B::Lt | B::Le | B::Gt | B::Ge | B::And | B::Or
        ),
        Expr::Unary(UnaryOp::Not, _) => true,
        Expr::Cond(_, a, b) => is_condition(a) && is_condition(b),
        _ => false,
    }
}

/// " (the shipped trace of that name is --kernel NAME)" when the file name of a missing `path`
/// is a shipped trace's, so a user who meant the shipped one learns how to ask for it.
fn shipped_namesake(path: &str) -> String {
    let stem = std::path::Path::new(path)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    match SHIPPED.iter().find(|(n, _)| *n == stem) {
        Some((n, _)) => format!(" (the shipped trace of that name is --kernel {n})"),
        None => String::new(),
    }
}

/// The traces shipped in `traces/`, embedded so an installed binary finds them by name.
pub const SHIPPED: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/shipped_traces.rs"));
/// Loads a kernel by path, by the name of a shipped trace (`star1` → `traces/star1.toml`), or
/// from standard input when `name_or_path` is `-` (a code generator's pipe). A `.ptx` or `.cu`
/// path is lifted by [`crate::input::kernel_source::load`], not here. A value that looks like a
/// path ([`super::looks_like_path`]: a folder or an extension) is only ever read as a file, never
/// replaced by the shipped trace of the same name.
pub fn load(name_or_path: &str) -> Result<Kernel> {
    if name_or_path == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .map_err(|e| crate::Error::new("<stdin>", format!("cannot read the trace: {e}")))?;
        return Kernel::parse(&text, "<stdin>");
    }
    let path = std::path::Path::new(name_or_path);
    if super::looks_like_path(name_or_path) {
        if !path.exists() {
            return Err(crate::Error::in_file(
                path,
                format!("no such file{}", shipped_namesake(name_or_path)),
            ));
        }
        return Kernel::load(path);
    }
    if path.is_file() {
        return Kernel::load(path);
    }
    let stem = name_or_path;
    if let Some((_, text)) = SHIPPED
        .iter()
        .find(|(n, _)| *n == stem || n.replace('-', "_") == stem.replace('-', "_"))
    {
        return Kernel::parse(text, &format!("traces/{stem}.toml"));
    }
    let names: Vec<&str> = SHIPPED.iter().map(|(n, _)| *n).collect();
    Err(crate::Error::new(
        "--kernel",
        format!(
            "'{name_or_path}' is neither a file nor a shipped trace{} ({})",
            super::did_you_mean(stem, names.iter().copied()),
            names.join(", ")
        ),
    ))
}

/// `thread.instructions_per_warp`: a non-negative integer, or an expression of the parameters and
/// `blockDim` as a string.
fn parse_instructions(v: &toml::Value) -> std::result::Result<Expr, String> {
    match v {
        toml::Value::Integer(i) if *i >= 0 => Ok(Expr::Num(*i)),
        toml::Value::String(text) => expr::parse(text)
            .map_err(|e| format!("thread.instructions_per_warp \"{text}\": {}", e.message)),
        other => Err(format!(
            "thread.instructions_per_warp must be a non-negative integer or an expression of the parameters, got {other}"
        )),
    }
}

/// `thread.flops_per_update`: a non-negative number, or a table of `fp32` and `fp64` counts
/// (integers, or expressions of the parameters as strings).
fn parse_flops(v: &toml::Value) -> std::result::Result<FlopsPerUpdate, String> {
    match v {
        toml::Value::Integer(i) if *i >= 0 => Ok(FlopsPerUpdate::Unsplit(*i as f64)),
        toml::Value::Float(f) if f.is_finite() && *f >= 0.0 => Ok(FlopsPerUpdate::Unsplit(*f)),
        toml::Value::Table(t) => {
            let count = |key: &str| match t.get(key) {
                None => Ok(Expr::Num(0)),
                Some(toml::Value::Integer(i)) if *i >= 0 => Ok(Expr::Num(*i)),
                Some(toml::Value::String(text)) => expr::parse(text).map_err(|e| {
                    format!("thread.flops_per_update.{key} \"{text}\": {}", e.message)
                }),
                Some(other) => Err(format!(
                    "thread.flops_per_update.{key} must be a non-negative integer or an expression of the parameters, got {other}"
                )),
            };
            if let Some(k) = t.keys().find(|k| !matches!(k.as_str(), "fp32" | "fp64")) {
                return Err(format!(
                    "thread.flops_per_update has no key '{k}' (it takes fp32 and fp64)"
                ));
            }
            Ok(FlopsPerUpdate::Split {
                fp32: count("fp32")?,
                fp64: count("fp64")?,
            })
        }
        other => Err(format!(
            "thread.flops_per_update must be a non-negative number or a table {{ fp32 = N, fp64 = N }}, got {other}"
        )),
    }
}
