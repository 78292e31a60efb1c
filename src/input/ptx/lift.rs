//! Symbolic evaluation of one PTX entry into a kernel trace: every register's integer value as
//! a polynomial over threadIdx / blockIdx / blockDim / gridDim and the parameters, every
//! predicate as a formula over comparisons, the forward control flow as the condition under
//! which each block runs, counted loops (nested, with branches inside, and nvcc's unrolled
//! main loop and remainder loop) by their induction variables and trip counts, and every global
//! access with its address, its condition and the loops it is in. A loop's trip count stands
//! for it in what follows as an atom that is 0 where the loop is skipped, so that the path that
//! skips a loop and the path through it meet with one value. The result is written as trace
//! TOML (one path: what `lift` prints is what `simulate` reads).

use super::LiftOptions;
use super::parse::{Entry, Instruction, StatementKind};
use super::symbolic::{Comparison, Dnf, Monomial, Poly, power_of};
use crate::error::{Error, Result};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt::Write;

/// What a register holds.
#[derive(Debug, Clone, PartialEq)]
enum Val {
    /// An integer (or address) as a polynomial.
    Int(Poly),
    /// A predicate.
    Pred(Dnf),
    /// Something the lifter does not follow (a loaded value, a float, …), with why.
    Unknown(String),
}

/// One memory instruction found in the entry (global, or shared), or a barrier (`sync`).
#[derive(Debug, Clone)]
struct FoundAccess {
    line: usize,
    kind: &'static str,
    /// The shared array (its trace name) a shared access addresses; `None` for global ones.
    shared: Option<String>,
    address: Poly,
    scalar_bytes: u32,
    lanes: u32,
    condition: Dnf,
    /// The loops (indices into `Lifter::loops`) the access is in, outermost first.
    loops: Vec<usize>,
    /// A global load that bypasses the L1 (`.cg`, `.lu`, `.cv`, volatile, GPU or system scope).
    bypass_l1: bool,
    /// An atomic adding floating-point values (`.f32`, `.f64`, `.f16`, `.bf16`).
    float: bool,
}

impl FoundAccess {
    /// A barrier (`sync`) or a warp shuffle (`shuffle`): a step the trace keeps in its place,
    /// with no array or address.
    fn is_step_without_address(&self) -> bool {
        self.kind == "sync" || self.kind == "shuffle"
    }
}

/// A counted loop found in the entry.
#[derive(Debug, Clone)]
struct FoundLoop {
    /// The loop variable's name (`k`, `k1`, …).
    var: String,
    /// The trip count, a trace expression.
    count: String,
    /// The trip count as a polynomial, where it is one (`4`, `nz`, a remainder `n % 4`).
    count_poly: Option<Poly>,
    /// The largest value of the loop variable, an atom of the parameters (for extents).
    last: String,
    /// The condition under which the loop is entered (its header reached).
    entry: Dnf,
    /// The loops it is in, outermost first.
    outer: Vec<usize>,
    /// The PTX line of its header.
    line: usize,
    /// The atom that stands for the loop's trips in what follows the loop (`⟪n0⟫`): its
    /// count where the loop is entered, 0 where it is skipped; written out when the guard
    /// is known.
    trips: String,
    /// `(s, t)` where the loop goes on while `s * k + t < 0` at its back edge, `s` the stride
    /// of a grid-stride loop (a product of `blockDim` and `gridDim`): an index `s * k + q`
    /// stays below `s + q - t` after the first iteration, whatever the launch's grid (the
    /// arrays' extents are inferred from it).
    below: Option<(Poly, Poly)>,
}

/// A floating-point instruction of the entry: its operations (an FMA is two), its precision
/// and the loops it is in (indices into `Lifter::loops`), whose trips multiply it.
#[derive(Debug, Clone)]
struct FlopSite {
    ops: u64,
    double: bool,
    loops: Vec<usize>,
    /// Its PTX line.
    line: usize,
    /// An add, multiply or FMA: one SASS instruction a copy (so its SASS counts the copies
    /// ptxas made of the loop around it).
    one_instruction: bool,
}

/// How the atoms of opaque branch conditions begin (`⟨?0⟩`).
const OPAQUE: &str = "\u{27e8}?";

/// Prefix of the atom that stands for a shared symbol's address (`⟨&tile⟩`); an access subtracts
/// it, so it never reaches the trace.
const SHARED_SYMBOL: &str = "\u{27e8}&";

/// Deepest nesting of loops lifted (the trace language's limit).
const MAX_LOOP_DEPTH: usize = 4;

/// The registers and the condition under which the current point is reached.
#[derive(Debug, Clone)]
struct State {
    regs: HashMap<String, Val>,
    reached: Dnf,
}

/// The lifted kernel as trace TOML, with warnings for stderr.
#[derive(Debug, Clone)]
pub struct LiftedText {
    /// The trace, in the trace language.
    pub toml: String,
    /// What the user should know (assumed registers, parameters left at 0, …).
    pub warnings: Vec<String>,
}

/// Names of the thread-index dimensions.
const DIMS: [&str; 3] = ["x", "y", "z"];

/// The trips of `loops` that multiply an instruction inside them (`loop_trips`: each loop's
/// trips, as `trips` rewrites them, and its header line): the constant ones multiplied into one
/// number, the others kept as factors, sorted, where every variable they name is `allowed`.
/// `Err` with the header line of a loop whose trips are neither.
fn trip_factors(
    loops: &[usize],
    loop_trips: &[(String, usize)],
    trips: impl Fn(&str) -> String,
    allowed: impl Fn(&str) -> bool,
) -> std::result::Result<(i64, Vec<String>), usize> {
    let mut times = 1i64;
    let mut factors = Vec::new();
    for &l in loops {
        let (text, line) = (trips(&loop_trips[l].0), loop_trips[l].1);
        let parsed = crate::input::expr::parse(&text).map_err(|_| line)?;
        if let crate::input::expr::Expr::Num(n) = parsed {
            times = times.saturating_mul(n.max(0));
        } else if parsed.variables().iter().all(|v| allowed(v)) {
            factors.push(text);
        } else {
            return Err(line);
        }
    }
    factors.sort_unstable();
    Ok((times, factors))
}

/// A sum of terms `count × factors…` as the trace writes a count: a number, or an expression
/// string (a count of 1 left out before its factors; "0" without terms).
fn sum_of_terms(terms: &BTreeMap<Vec<String>, i64>) -> String {
    let parts: Vec<String> = (terms.iter().filter(|(_, n)| **n != 0))
        .map(|(factors, n)| {
            let factors: Vec<String> = factors.iter().map(|f| format!("({f})")).collect();
            if *n == 1 && !factors.is_empty() {
                factors.join(" * ")
            } else {
                std::iter::once(n.to_string())
                    .chain(factors)
                    .collect::<Vec<_>>()
                    .join(" * ")
            }
        })
        .collect();
    match parts.as_slice() {
        [] => "0".to_string(),
        [one] if one.parse::<i64>().is_ok() => one.clone(),
        _ => toml_string(&parts.join(" + ")),
    }
}

/// A thread's floating-point operations, single and double precision, each a number or an
/// expression of the parameters: each instruction's operations times the trips of the loops
/// around it (`loop_trips`: each loop's trips where its header is reached, 0 where it is
/// skipped, and its header line). `Err` with the header line of a loop around a
/// floating-point instruction whose trips are not a constant of the launch (they depend on the
/// thread, the block or an outer loop).
fn flops_per_thread(
    sites: &[FlopSite],
    loop_trips: &[(String, usize)],
    params: &HashMap<String, String>,
) -> std::result::Result<[String; 2], usize> {
    // operations by precision and by the trip counts that multiply them
    let mut terms: [BTreeMap<Vec<String>, i64>; 2] = Default::default();
    for site in sites {
        let (times, factors) = trip_factors(&site.loops, loop_trips, str::to_string, |v| {
            params.values().any(|p| p == v) || v.starts_with("blockDim.")
        })?;
        *terms[site.double as usize].entry(factors).or_default() +=
            (site.ops as i64).saturating_mul(times);
    }
    Ok(terms.map(|t| sum_of_terms(&t)))
}

/// The warp instructions a warp issues, as a number or an expression of the parameters and
/// `blockDim`: each reachable PTX line's SASS instructions (`by_line`) times the trips of the
/// loops around it (`loop_trips`), evaluated for the block and thread at the grid's origin (the
/// trips of a z-marching loop that the last blocks cut short are those of a whole block). A
/// loop that ptxas unrolled further has each of its lines in as many copies as its memory
/// instructions (`memory`, the SASS's, by PTX line) are, or, in a loop without memory
/// instructions, as its floating-point adds, multiplies and FMAs are (one SASS instruction a
/// copy): its lines count once per copy. SASS under no reachable line (the loop's back edge,
/// the padding) counts once. `Err` with the header line of a loop whose trips are not a
/// constant of the launch there.
fn instructions_per_warp(
    lifter: &Lifter,
    by_line: &HashMap<usize, u32>,
    memory: &[super::sass::Issued],
    loop_trips: &[(String, usize)],
) -> std::result::Result<String, usize> {
    // the SASS memory instructions of each PTX line: the copies ptxas made of it
    let mut copies_of_line: HashMap<usize, u32> = HashMap::new();
    for m in memory {
        *copies_of_line.entry(m.line).or_default() += 1;
    }
    let copies: Vec<f64> = (0..lifter.loops.len())
        .map(|l| {
            let mut n: Vec<u32> = (lifter.accesses.iter())
                .filter(|a| a.loops.last() == Some(&l))
                .filter_map(|a| copies_of_line.get(&a.line).copied())
                .collect();
            if n.is_empty() {
                // a loop of arithmetic alone (validation/store_merge.cu's pair_alu: ptxas made 7
                // copies of nvcc's 4 FMAs, 16 + 8 + 4; counting every copy put its issue time at
                // 8 to 9 times the H100's)
                n = (lifter.flops.iter())
                    .filter(|f| f.one_instruction && f.loops.last() == Some(&l))
                    .filter_map(|f| by_line.get(&f.line).copied().filter(|&c| c > 0))
                    .collect();
            }
            n.sort_unstable();
            n.get(n.len() / 2).copied().unwrap_or(1).max(1) as f64
        })
        .collect();
    let allowed =
        |v: &str| lifter.param_names.values().any(|p| p == v) || v.starts_with("blockDim.");
    let origin = |trips: &str| -> String {
        let mut out = String::new();
        let mut word = String::new();
        let flush = |word: &mut String, out: &mut String| {
            let at_origin = word.starts_with("blockIdx.")
                || word.starts_with("threadIdx.")
                || lifter.index_names.contains(word);
            out.push_str(if at_origin { "0" } else { word });
            word.clear();
        };
        for c in trips.chars() {
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                word.push(c);
            } else {
                flush(&mut word, &mut out);
                out.push(c);
            }
        }
        flush(&mut word, &mut out);
        out
    };
    // instructions by the trip counts that multiply them
    let mut terms: BTreeMap<Vec<String>, f64> = BTreeMap::new();
    let mut counted: BTreeSet<usize> = BTreeSet::new();
    for (line, loops) in &lifter.lines {
        let Some(&n) = by_line.get(line) else {
            continue;
        };
        if !counted.insert(*line) {
            continue;
        }
        let (times, factors) = trip_factors(loops, loop_trips, origin, allowed)?;
        let per_copy = n as f64 / loops.last().map_or(1.0, |&l| copies[l]);
        *terms.entry(factors).or_default() += per_copy * times as f64;
    }
    let elsewhere: u32 = (by_line.iter())
        .filter(|(line, _)| !counted.contains(line))
        .map(|(_, n)| n)
        .sum();
    *terms.entry(Vec::new()).or_default() += elsewhere as f64;
    let whole = terms.into_iter().map(|(f, n)| (f, n.round() as i64));
    Ok(sum_of_terms(&whole.collect()))
}

/// The floating-point operations per update, single and double precision, where each update
/// is one store to each array the kernel stores to: every product of thread-dependent trip
/// counts (the loops around an instruction, constant trips multiplied in) must carry the same
/// operations per store, so that the ratio holds whatever the trips (`star1_zloop`: 8 per
/// point in its main loop of four points per trip and in its remainder loop alike). `stores`
/// holds each global store's array and loops. `None` where the ratio is not one integer, or
/// the arrays are stored to unequally.
fn flops_per_store(
    sites: &[FlopSite],
    stores: &[(&str, &[usize])],
    loop_trips: &[(String, usize)],
) -> Option<[i64; 2]> {
    type Terms = BTreeMap<Vec<String>, i64>;
    // constant trips multiply, the others name the term
    let term = |loops: &[usize]| {
        let mut times = 1i64;
        let mut factors = Vec::new();
        for &l in loops {
            match loop_trips[l].0.parse::<i64>() {
                Ok(n) => times = times.saturating_mul(n.max(0)),
                Err(_) => factors.push(loop_trips[l].0.clone()),
            }
        }
        factors.sort();
        (times, factors)
    };
    let mut flops: [Terms; 2] = Default::default();
    for site in sites {
        let (times, factors) = term(&site.loops);
        *flops[site.double as usize].entry(factors).or_default() +=
            (site.ops as i64).saturating_mul(times);
    }
    let mut per_array: BTreeMap<&str, Terms> = BTreeMap::new();
    for (array, loops) in stores {
        let (times, factors) = term(loops);
        *per_array
            .entry(array)
            .or_default()
            .entry(factors)
            .or_default() += times;
    }
    for t in flops.iter_mut().chain(per_array.values_mut()) {
        t.retain(|_, n| *n != 0);
    }
    let mut arrays = per_array.values();
    let updates = arrays.next()?;
    if updates.is_empty() || arrays.any(|t| t != updates) {
        return None;
    }
    let mut out = [0i64; 2];
    for (p, ops) in flops.iter().enumerate() {
        let (factors, n) = updates.iter().next()?;
        let per = ops.get(factors).copied().unwrap_or(0);
        if per % n != 0 {
            return None;
        }
        let ratio = per / n;
        let keys: BTreeSet<&Vec<String>> = ops.keys().chain(updates.keys()).collect();
        if keys.into_iter().any(|k| {
            ops.get(k).copied().unwrap_or(0)
                != ratio.saturating_mul(updates.get(k).copied().unwrap_or(0))
        }) {
            return None;
        }
        out[p] = ratio;
    }
    Some(out)
}

/// `a / k` (floor division, `k` at least 2): exact where every coefficient divides; a variable
/// that halves divided by a power of its base is the same variable that many powers on
/// (`(S / pow(2, k)) / 4` is `(S / pow(2, k + 2))`; by the base itself, [`Poly::quotient_by_power`]
/// sees to it); else the atom `(a / k)`, whose dividend substitution sees through (a loop
/// variable inside it takes its value at another iteration).
fn divided(a: &Poly, k: i64) -> Poly {
    if let Some(q) = a.exact_div(k) {
        return q;
    }
    if let Some((atom, 1)) = a.as_scaled_atom()
        && let Some(p) = power_of(atom)
        && let Some(dividend) = &p.dividend
        && p.exponent.as_constant().is_none()
        && let Some(j) = (1..63u32).find(|&j| p.base.checked_pow(j) == Some(k))
        && let Some(exponent) = p.exponent.add(&Poly::constant(i64::from(j)))
    {
        return Poly::quotient_by_power(dividend, p.base, &exponent);
    }
    Poly::quotient_by_power(a, k, &Poly::constant(1))
}

/// How a register changes from one iteration of a loop to the next, from its value after
/// the body with the placeholder `start` for its value before: `(start / d)` halves it
/// (`d` at least 2, an unsigned or arithmetic shift right or a division by a constant),
/// `m * start` multiplies it (`m` at least 2: `d <<= 1`, `d *= 2`). `None` otherwise (a
/// step of its own, or a change not followed).
fn geometric_step(end: &Poly, start: &str) -> Option<Geometric> {
    let (atom, c) = end.as_scaled_atom()?;
    if atom == start {
        return (c >= 2).then_some(Geometric::Times(c));
    }
    // `(start / d)`, as `divided` registers it
    let p = power_of(atom)?;
    (c == 1 && p.dividend? == Poly::atom(start) && p.exponent == Poly::constant(1))
        .then_some(Geometric::Divided(p.base))
}

/// Whether `atom`'s text names `var` as a word (an opaque atom such as `min(k, n)` that
/// substitution cannot see into).
fn names_var(atom: &str, var: &str) -> bool {
    atom.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .any(|w| w == var)
}

/// The trips of a loop that goes on while `c` holds at its back edge, `c` a comparison of a
/// variable that halves or doubles (a power atom whose exponent is the iteration `var` plus a
/// constant `e`) against a bound that does not change: `s > t` (or `s != 0`, `s >= t`) for
/// `s = S / b^(var + e)`, `A * b^(var + e) < n` (or `<=`) for one that doubles, `A` positive.
/// Either goes on while `b^(var + e) <= X` for an `X` that does not change (`S / (t + 1)`,
/// `(n - 1) / A`), so the loop runs `max(0, ilog(b, X) - e + 1) + 1` trips: the tutorial
/// block reduction's `for (s = blockDim.x / 2; s > 0; s >>= 1)`, whose `s` is
/// `blockDim.x / pow(2, k + 1)`, runs `max(0, ilog(2, blockDim.x) - 1) + 1`. `None` where `c`
/// is not of that form.
#[allow(clippy::type_complexity)]
fn geometric_trips(
    c: &Comparison,
    var: &str,
) -> Option<(String, Option<Poly>, String, Option<(Poly, Poly)>)> {
    let k = Poly::atom(var);
    let free_of_var = |p: &Poly| !p.mentions(var) && !p.atoms().iter().any(|a| names_var(a, var));
    // the one term with a power of the iteration
    let mut found = None;
    for (m, &coefficient) in &c.lhs.terms {
        let powers: Vec<usize> = (0..m.len())
            .filter(|&i| power_of(&m[i]).is_some_and(|p| p.exponent.mentions(var)))
            .collect();
        match (powers.as_slice(), &found) {
            ([], _) => {}
            ([i], None) => found = Some((m.clone(), coefficient, *i)),
            _ => return None,
        }
    }
    let (m, coefficient, at) = found?;
    let power = power_of(&m[at])?;
    let e = power.exponent.sub(&k)?.as_constant().filter(|e| *e >= 0)?;
    let mut factor = Poly {
        terms: BTreeMap::from([(
            m.iter()
                .enumerate()
                .filter(|&(i, _)| i != at)
                .map(|(_, a)| a.clone())
                .collect::<Monomial>(),
            coefficient,
        )]),
    };
    let mut rest = c.lhs.sub(&Poly {
        terms: BTreeMap::from([(m.clone(), coefficient)]),
    })?;
    if !free_of_var(&rest) || !free_of_var(&factor) {
        return None;
    }
    let mut op = c.op;
    // a positive factor: negate a negative one, and the comparison with it
    let launch_only = factor
        .atoms()
        .iter()
        .all(|x| x.starts_with("blockDim.") || x.starts_with("gridDim."));
    if !launch_only {
        return None;
    }
    if coefficient < 0 {
        factor = factor.scale(-1)?;
        rest = rest.scale(-1)?;
        op = match op {
            "<" => ">",
            "<=" => ">=",
            ">" => "<",
            ">=" => "<=",
            o => o,
        };
    }
    // go on while factor * power OP bound
    let bound = rest.scale(-1)?;
    let limit = match (&power.dividend, op) {
        (Some(dividend), _) if free_of_var(dividend) && factor == Poly::constant(1) => {
            // s > t, s >= t + 1, s != 0 (s never below 0): b^(var + e) <= S / (t + 1)
            let t = match (op, bound.as_constant()?) {
                ("!=", 0) => 0,
                (">", t) if t >= 0 => t,
                (">=", t) if t >= 1 => t - 1,
                _ => return None,
            };
            if t == 0 {
                dividend.to_expr()
            } else {
                format!("{} / {}", dividend.to_operand(), t + 1)
            }
        }
        (None, "<" | "<=") => {
            let most = if op == "<" {
                bound.sub(&Poly::constant(1))?
            } else {
                bound
            };
            if factor == Poly::constant(1) {
                most.to_expr()
            } else {
                format!("{} / {}", most.to_operand(), factor.to_operand())
            }
        }
        _ => return None,
    };
    let beyond = match 1 - e {
        0 => String::new(),
        d if d > 0 => format!(" + {d}"),
        d => format!(" - {}", -d),
    };
    let last = format!("max(0, ilog({}, {limit}){beyond})", power.base);
    Some((format!("{last} + 1"), None, last, None))
}

/// A register that a loop's every iteration divides or multiplies by a constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Geometric {
    /// Divided (floor) by this, at least 2.
    Divided(i64),
    /// Multiplied by this, at least 2.
    Times(i64),
}

/// Whether `m` is a mask of the lowest bits, 2^k - 1 (k >= 1).
fn is_low_bit_mask(m: i64) -> bool {
    m > 0 && (m + 1) & m == 0
}

/// The 2^k that `and` with `m` rounds down to a multiple of, where `m` keeps every bit of the
/// type `ty` (`b32`, `s64`, ...) but the lowest k (k ≥ 1): -8 or 0xfffffff8 as a b32 give 8.
fn high_bit_mask_clears(m: i64, ty: &str) -> Option<i64> {
    let bits: u32 = ty.get(1..)?.parse().ok()?;
    let signed = match bits {
        32 if (1i64 << 31..1i64 << 32).contains(&m) => m - (1i64 << 32),
        32 | 64 => m,
        _ => return None,
    };
    let cleared = !signed;
    (signed < 0 && is_low_bit_mask(cleared) && cleared < (1i64 << (bits - 2))).then(|| cleared + 1)
}

/// Bytes of one element of a PTX type suffix (`f64` → 8).
fn type_bytes(t: &str) -> Option<u32> {
    let bits: u32 = t.get(1..)?.parse().ok()?;
    (matches!(t.as_bytes()[0], b'f' | b'u' | b's' | b'b') && bits.is_multiple_of(8) && bits > 0)
        .then_some(bits / 8)
}

struct Lifter<'a> {
    source: &'a str,
    entry: &'a Entry,
    /// Trace name of each parameter, by its PTX name.
    param_names: HashMap<String, String>,
    /// Parameters a `cvta.to.global` turned into global addresses (array bases).
    pointers: BTreeSet<String>,
    /// Names of the global thread indices (`x`, or `gx` where a parameter is called `x`).
    index_names: [String; 3],
    accesses: Vec<FoundAccess>,
    warnings: Vec<String>,
    /// The floating-point instructions, each with its operations and the loops it is in.
    flops: Vec<FlopSite>,
    /// Every reachable instruction: its PTX line and the loops it is in (for the instructions a
    /// warp issues, with the SASS each line compiles to).
    lines: Vec<(usize, Vec<usize>)>,
    /// The counted loops, in program order.
    loops: Vec<FoundLoop>,
    /// The loops whose bodies are being evaluated, outermost first.
    loop_stack: Vec<usize>,
    /// Index of each label in the body.
    labels: HashMap<&'a str, usize>,
    /// Loop headers: the index of each header label and of its back edge.
    back_edges: HashMap<usize, usize>,
    /// Branch conditions the lifter cannot follow: a key (register and reason) and the reason.
    opaque: Vec<(String, String)>,
    /// Shared arrays the accesses use, by trace name: the PTX symbol and its declared bytes
    /// (`None` for `extern` dynamic shared memory).
    shared_arrays: BTreeMap<String, (String, Option<u64>)>,
}

impl<'a> Lifter<'a> {
    fn err(&self, line: usize, msg: impl std::fmt::Display) -> Error {
        Error::new(self.source, format!("line {line}: {msg}"))
    }

    /// `blockIdx.d * blockDim.d * m + threadIdx.d * m` rewritten as `x * m` (the global index),
    /// wherever both terms are there with the same coefficient.
    fn fold(&self, p: Poly) -> Poly {
        let mut p = p;
        for (d, dim) in DIMS.iter().enumerate() {
            let (bi, bd, ti) = (
                format!("blockIdx.{dim}"),
                format!("blockDim.{dim}"),
                format!("threadIdx.{dim}"),
            );
            let candidates: Vec<(Vec<String>, i64)> = p
                .terms
                .iter()
                .filter(|(m, _)| m.contains(&bi) && m.contains(&bd))
                .map(|(m, c)| (m.clone(), *c))
                .collect();
            for (m, c) in candidates {
                let mut rest = m.clone();
                rest.remove(rest.iter().position(|a| *a == bi).unwrap_or(0));
                rest.remove(rest.iter().position(|a| *a == bd).unwrap_or(0));
                let mut with_thread = rest.clone();
                with_thread.push(ti.clone());
                with_thread.sort();
                if p.terms.get(&with_thread) != Some(&c) {
                    continue;
                }
                p.terms.remove(&m);
                p.terms.remove(&with_thread);
                let mut folded = rest;
                folded.push(self.index_names[d].clone());
                folded.sort();
                let term = Poly {
                    terms: BTreeMap::from([(folded, c)]),
                };
                if let Some(sum) = p.add(&term) {
                    p = sum;
                }
            }
        }
        p
    }

    /// `p`, a value a 32-bit register holds, as the register holds it: `i32(p)` (`signed`) or
    /// `u32(p)` where `p` may leave the 32-bit range, so that an index computed in 32 bits and
    /// widened wraps around as on the GPU. Where `p` provably stays in range, `p` itself: a
    /// constant, one atom (a register's value: a parameter, a special register, a loop
    /// counter, the global index `x`), or a polynomial whose bounds over the launch limits
    /// (threadIdx < 1024, blockDim <= 1024, blockIdx.y, .z < 65535, the global `y` and `z`
    /// below 65535 * 1024, `x` below 2^31) are in range. Binding drops the wraps that the
    /// launch's own sizes prove idle.
    fn as_32_bits(&self, p: Poly, signed: bool) -> Poly {
        let (lo, hi) = if signed {
            (i128::from(i32::MIN), i128::from(i32::MAX))
        } else {
            (0, i128::from(u32::MAX))
        };
        let single_atom =
            p.terms.len() == 1 && p.terms.iter().all(|(m, c)| m.len() == 1 && *c == 1);
        if single_atom {
            return p;
        }
        let atom_bounds = |a: &str| -> Option<(i128, i128)> {
            let wide = 65534 * 1024 + 1023;
            Some(match a {
                _ if a.starts_with("threadIdx.") => (0, 1023),
                _ if a.starts_with("blockDim.") => (1, 1024),
                "blockIdx.x" => (0, i128::from(i32::MAX) - 1),
                "gridDim.x" => (1, i128::from(i32::MAX)),
                _ if a.starts_with("blockIdx.") => (0, 65534),
                _ if a.starts_with("gridDim.") => (1, 65535),
                _ if a == self.index_names[0] => (0, i128::from(i32::MAX)),
                _ if a == self.index_names[1] || a == self.index_names[2] => (0, wide),
                _ => return None,
            })
        };
        let mut range = Some((0i128, 0i128));
        for (m, &c) in &p.terms {
            let mut term = Some((i128::from(c), i128::from(c)));
            for a in m {
                term = term.zip(atom_bounds(a)).map(|((l, h), (al, ah))| {
                    let v = [l * al, l * ah, h * al, h * ah];
                    (*v.iter().min().unwrap_or(&0), *v.iter().max().unwrap_or(&0))
                });
            }
            range = range
                .zip(term)
                .map(|((l, h), (tl, th))| (l + tl, h + th))
                .filter(|(l, h)| l.abs() < 1 << 100 && h.abs() < 1 << 100);
        }
        match range {
            Some((l, h)) if l >= lo && h <= hi => p,
            _ => p.wrapped(signed),
        }
    }

    /// The value of an operand.
    fn operand(&self, state: &State, op: &str, line: usize) -> Val {
        let op = op.trim();
        if let Some(special) = op.strip_prefix('%') {
            let mapped = [
                ("tid.", "threadIdx."),
                ("ntid.", "blockDim."),
                ("ctaid.", "blockIdx."),
                ("nctaid.", "gridDim."),
            ]
            .iter()
            .find_map(|(p, t)| special.strip_prefix(p).map(|d| (t, d)));
            if let Some((t, d)) = mapped
                && DIMS.contains(&d)
            {
                return Val::Int(Poly::atom(format!("{t}{d}")));
            }
            if let Some(v) = state.regs.get(op) {
                return v.clone();
            }
            if special.contains('.')
                || !state.regs.contains_key(op) && !special.starts_with(['r', 'p', 'f'])
            {
                return Val::Unknown(format!(
                    "the special register {op} (line {line}) is not lifted"
                ));
            }
            return Val::Unknown(format!(
                "register {op} is read before it is set (line {line})"
            ));
        }
        if let Some(v) = parse_int(op) {
            return Val::Int(Poly::constant(v));
        }
        if let Some(name) = self.param_names.get(op) {
            return Val::Int(Poly::atom(name.clone()));
        }
        // a symbol's address (`mov.u32 %r1, tile;`): a shared array if a shared access uses it
        if op.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '$')
            && op
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        {
            return Val::Int(Poly::atom(format!("{SHARED_SYMBOL}{op}\u{27e9}")));
        }
        Val::Unknown(format!("the operand '{op}' (line {line}) is not lifted"))
    }

    fn int(&self, state: &State, op: &str, line: usize) -> std::result::Result<Poly, String> {
        match self.operand(state, op, line) {
            Val::Int(p) => Ok(p),
            Val::Unknown(why) => Err(why),
            Val::Pred(_) => Err(format!("a predicate is used as an integer (line {line})")),
        }
    }

    fn pred(&self, state: &State, op: &str, line: usize) -> std::result::Result<Dnf, String> {
        let (negated, name) = match op.strip_prefix('!') {
            Some(n) => (true, n),
            None => (false, op),
        };
        let p = match self.operand(state, name, line) {
            Val::Pred(p) => p,
            Val::Unknown(why) => return Err(why),
            Val::Int(_) => return Err(format!("an integer is used as a predicate (line {line})")),
        };
        if negated {
            p.not()
                .ok_or_else(|| format!("the predicate at line {line} grows too large"))
        } else {
            Ok(p)
        }
    }

    /// An address operand `[%rd1+32]` as a polynomial of bytes.
    fn address(&self, state: &State, op: &str, line: usize) -> std::result::Result<Poly, String> {
        let inner = op
            .strip_prefix('[')
            .and_then(|s| s.strip_suffix(']'))
            .ok_or_else(|| format!("malformed address '{op}' (line {line})"))?
            .trim();
        let split = inner
            .get(1..)
            .and_then(|rest| rest.find(['+', '-']))
            .map(|i| i + 1);
        let (base, offset) = match split {
            Some(i) => (&inner[..i], inner[i..].replace("+-", "-").replace('+', "")),
            None => (inner, String::new()),
        };
        let base = match self.operand(state, base.trim(), line) {
            Val::Int(p) => p,
            Val::Unknown(why) => return Err(why),
            Val::Pred(_) => return Err(format!("malformed address '{op}' (line {line})")),
        };
        let offset = if offset.is_empty() {
            0
        } else {
            parse_int(offset.trim())
                .ok_or_else(|| format!("malformed address '{op}' (line {line})"))?
        };
        base.add(&Poly::constant(offset))
            .ok_or_else(|| format!("the address at line {line} overflows"))
    }

    /// Runs the entry's statements, filling `accesses`.
    fn run(&mut self) -> Result<()> {
        let entry = self.entry;
        for (i, s) in entry.body.iter().enumerate() {
            if let StatementKind::Label(l) = &s.kind {
                self.labels.insert(l.as_str(), i);
            }
        }
        // loop headers: the label a later `bra` jumps back to, and that branch
        for (at, st) in entry.body.iter().enumerate() {
            if let StatementKind::Instruction(ins) = &st.kind
                && ins.opcode[0] == "bra"
                && let Some(&to) = ins
                    .operands
                    .first()
                    .and_then(|t| self.labels.get(t.as_str()))
                && to <= at
                && self.back_edges.insert(to, at).is_some()
            {
                return Err(self.err(st.line, "a loop with several back edges is not lifted yet"));
            }
        }
        let state = State {
            regs: HashMap::new(),
            reached: Dnf::top(),
        };
        self.region(state, 0, entry.body.len(), None)?;
        Ok(())
    }

    /// Evaluates the statements `from..to` (the whole body, or one loop's body) from `state`:
    /// forward branches join at their labels, loops inside are lifted by
    /// [`Lifter::counted_loop`]. Inside a loop (`inside`: its header's line) a branch or exit
    /// that leaves the body is refused. Returns the state at `to`.
    fn region(
        &mut self,
        mut state: State,
        from: usize,
        to: usize,
        inside: Option<usize>,
    ) -> Result<State> {
        let body = &self.entry.body;
        // paths still to join at each label
        let mut pending: HashMap<usize, Vec<State>> = HashMap::new();
        let mut next = from;
        while next < to {
            let at = next;
            next += 1;
            let statement = &body[at];
            let line = statement.line;
            match &statement.kind {
                StatementKind::Directive(d) => {
                    if d.starts_with(".local") {
                        self.warnings.push(format!(
                            "{}: line {line}: local memory is declared; its traffic is not modelled",
                            self.source
                        ));
                    }
                }
                StatementKind::Label(label) => {
                    let incoming = pending.remove(&at).unwrap_or_default();
                    state = self.join(state, incoming, label, line)?;
                    if let Some(&back) = self.back_edges.get(&at) {
                        if back >= to {
                            return Err(self.err(
                                body[back].line,
                                "loops that overlap without nesting (irreducible control flow) are not lifted",
                            ));
                        }
                        if !state.reached.terms.is_empty() {
                            self.counted_loop(&mut state, at, back)?;
                        }
                        if let Some(&into) = pending.keys().find(|&&k| k > at && k <= back) {
                            return Err(self.err(
                                body[into].line,
                                format!("a branch into the loop at line {line} from outside it (irreducible control flow) is not lifted"),
                            ));
                        }
                        next = back + 1; // on after the back edge: the loop's exit
                    }
                }
                StatementKind::Instruction(ins) => {
                    if state.reached.terms.is_empty() {
                        continue; // unreachable code (after a `ret` or an unconditional `bra`)
                    }
                    self.lines.push((line, self.loop_stack.clone()));
                    if ins.opcode[0] == "bra" {
                        let target = ins
                            .operands
                            .first()
                            .ok_or_else(|| self.err(line, "`bra` without a target"))?;
                        let &target_at = self
                            .labels
                            .get(target.as_str())
                            .ok_or_else(|| self.err(line, format!("unknown label '{target}'")))?;
                        if target_at <= at {
                            return Err(self.err(
                                line,
                                format!(
                                    "a second branch back to {target} (a `continue`, or a loop the lifter does not recognise) is not lifted"
                                ),
                            ));
                        }
                        if target_at >= to {
                            // (an exit tested just before the back edge became the back edge's
                            // own test: `exits_as_back_edges`)
                            let header = inside.unwrap_or(line);
                            let why = match self.predicate_of(&state, ins, line) {
                                Err(e) => e
                                    .message
                                    .strip_prefix(&format!("line {line}: "))
                                    .unwrap_or(&e.message)
                                    .replace("the branch or exit condition cannot be lifted: ", "its condition cannot be lifted: "),
                                Ok(_) => "it leaves in the middle of the body, so the last iteration is cut short (an exit tested just before the back edge is lifted)".into(),
                            };
                            return Err(self.err(
                                line,
                                format!("a branch out of the loop at line {header} (an early exit or `break`) is not lifted: {why}"),
                            ));
                        }
                        let taken = self.branch_condition(&state, ins, line);
                        let too_large = || self.err(line, "the branch condition grows too large");
                        let mut branch = state.clone();
                        branch.reached = state.reached.and(&taken).ok_or_else(too_large)?;
                        state.reached = state
                            .reached
                            .and(&taken.not().ok_or_else(too_large)?)
                            .ok_or_else(too_large)?;
                        pending.entry(target_at).or_default().push(branch);
                        continue;
                    }
                    if matches!(ins.opcode[0].as_str(), "ret" | "exit") {
                        if let Some(header) = inside {
                            return Err(self.err(
                                line,
                                format!(
                                    "a return inside the loop at line {header} is not lifted yet"
                                ),
                            ));
                        }
                        let taken = self.branch_condition(&state, ins, line);
                        let stays = taken
                            .not()
                            .and_then(|n| state.reached.and(&n))
                            .ok_or_else(|| self.err(line, "the exit condition grows too large"))?;
                        state.reached = stays;
                        continue;
                    }
                    self.instruction(&mut state, ins, line)?;
                }
            }
        }
        Ok(state)
    }

    /// A counted loop from the header label at `header` to its back edge at `back`: a body
    /// (forward branches and nested loops allowed) whose registers either step by a
    /// loop-invariant amount per iteration (induction variables, `start + k * step`) or are
    /// recomputed, and a back edge whose condition is a comparison affine in the iteration `k`,
    /// from which the trip count follows. The body's accesses are recorded inside the loop;
    /// `state` becomes the loop's exit, where what the body computed is its value in the last
    /// iteration, written with the loop's trip-count atom (0 where the loop is skipped, so
    /// the path that skips it joins the one through it).
    fn counted_loop(&mut self, state: &mut State, header: usize, back: usize) -> Result<()> {
        let body = &self.entry.body;
        let header_line = body[header].line;
        if self.loop_stack.len() >= MAX_LOOP_DEPTH {
            return Err(self.err(
                header_line,
                format!("loops nested more than {MAX_LOOP_DEPTH} deep are not lifted (the trace language's limit)"),
            ));
        }
        let back_line = body[back].line;
        let StatementKind::Instruction(back_edge) = &body[back].kind else {
            return Err(self.err(back_line, "malformed loop"));
        };
        if back_edge.predicate.is_none() {
            return Err(self.err(
                back_line,
                "a loop without an exit condition cannot be lifted",
            ));
        }
        // the registers the body writes (nested loops and branches included)
        let mut written: BTreeSet<String> = BTreeSet::new();
        for st in &body[header + 1..back] {
            let StatementKind::Instruction(ins) = &st.kind else {
                continue;
            };
            if matches!(
                ins.opcode[0].as_str(),
                "st" | "red" | "bra" | "ret" | "exit" | "bar" | "membar" | "fence"
            ) {
                continue;
            }
            if let Some(d) = ins.operands.first() {
                for r in d.trim_matches(['{', '}']).split(['|', ',']) {
                    written.insert(r.trim().to_string());
                }
            }
        }
        let id = self.loops.len();
        let mut var = if id == 0 {
            "k".to_string()
        } else {
            format!("k{id}")
        };
        // not a parameter's or index's name (a kernel may have a parameter `k`)
        while self.param_names.values().any(|n| *n == var)
            || self.index_names.contains(&var)
            || self
                .param_names
                .values()
                .any(|n| *n == format!("trips_{var}"))
        {
            var.push('_');
        }
        let reserved = FoundLoop {
            var: var.clone(),
            count: String::new(),
            count_poly: None,
            last: String::new(),
            entry: state.reached.clone(),
            outer: self.loop_stack.clone(),
            line: header_line,
            trips: format!("\u{27ea}n{id}\u{27eb}"),
            below: None,
        };
        // pass 1: each written integer as a placeholder, to see how an iteration changes it
        let placeholder = |r: &str| format!("\u{27e8}{r}\u{27e9}");
        let mut probe = state.clone();
        for r in &written {
            if let Some(Val::Int(_)) = state.regs.get(r) {
                probe
                    .regs
                    .insert(r.clone(), Val::Int(Poly::atom(placeholder(r))));
            }
        }
        let kept = (
            self.accesses.len(),
            self.flops.len(),
            self.warnings.len(),
            self.loops.len(),
            self.lines.len(),
        );
        self.loops.push(reserved.clone());
        self.loop_stack.push(id);
        let probed = self.region(probe, header + 1, back, Some(header_line));
        self.loop_stack.pop();
        let probed = probed?;
        self.accesses.truncate(kept.0);
        self.flops.truncate(kept.1);
        self.lines.truncate(kept.4);
        self.warnings.truncate(kept.2);
        self.loops.truncate(kept.3);
        // the trip counts of this loop and the loops inside it: a step must not use them
        let inner_trips = |a: &str| {
            a.strip_prefix("\u{27ea}n")
                .and_then(|s| s.strip_suffix('\u{27eb}'))
                .and_then(|n| n.parse::<usize>().ok())
                .is_some_and(|n| n >= id)
        };
        let k = Poly::atom(var.clone());
        let mut iteration = state.clone();
        for r in &written {
            let why = || {
                Val::Unknown(format!(
                    "{r} changes from one iteration to the next of the loop at line {header_line} in a way the lifter does not follow"
                ))
            };
            let value = match (state.regs.get(r), probed.regs.get(r)) {
                // a variable that halves or doubles: its start times a power of the iteration
                (Some(Val::Int(start)), Some(Val::Int(end)))
                    if let Some(g) = geometric_step(end, &placeholder(r)) =>
                {
                    match g {
                        Geometric::Divided(d) => Val::Int(Poly::quotient_by_power(start, d, &k)),
                        Geometric::Times(m) => match start.mul(&Poly::power(m, &k)) {
                            Some(v) => Val::Int(v),
                            None => why(),
                        },
                    }
                }
                (Some(Val::Int(start)), Some(Val::Int(end))) => {
                    let step = end.sub(&Poly::atom(placeholder(r)));
                    match step {
                        Some(step)
                            if !step
                                .atoms()
                                .iter()
                                .any(|a| a.contains('\u{27e8}') || inner_trips(a)) =>
                        {
                            match k.mul(&step).and_then(|ks| start.add(&ks)) {
                                Some(v) => Val::Int(self.fold(v)),
                                None => why(),
                            }
                        }
                        _ => why(),
                    }
                }
                _ => why(),
            };
            iteration.regs.insert(r.clone(), value);
        }
        // A register the body sets, for the next iteration, from others that step (nvcc's
        // address of `in[x + s]` for the next `s >>= 1`, worked out at the end of the body):
        // at iteration k it holds what the body computed in iteration k - 1, which must also
        // be its value before the loop, for k = 0.
        let previous = k.sub(&Poly::constant(1)).unwrap_or_default();
        for r in &written {
            let (Some(Val::Int(start)), Some(Val::Int(end)), Some(Val::Unknown(_))) =
                (state.regs.get(r), probed.regs.get(r), iteration.regs.get(r))
            else {
                continue;
            };
            let mut before = Some(end.clone());
            for other in &written {
                let holder = placeholder(other);
                if !before.as_ref().is_some_and(|b| b.mentions(&holder)) {
                    continue;
                }
                before = match iteration.regs.get(other) {
                    Some(Val::Int(v))
                        if other != r && !v.atoms().iter().any(|a| a.contains('\u{27e8}')) =>
                    {
                        v.substitute(&var, &previous)
                            .and_then(|at| before?.substitute(&holder, &at))
                    }
                    _ => None,
                };
            }
            if let Some(value) = before
                && !value
                    .atoms()
                    .iter()
                    .any(|a| a.contains('\u{27e8}') || inner_trips(a))
                && value
                    .substitute(&var, &Poly::default())
                    .map(|v| self.fold(v.exact()))
                    == Some(self.fold(start.exact()))
            {
                iteration.regs.insert(r.clone(), Val::Int(self.fold(value)));
            }
        }
        // pass 2: the body at iteration k, its accesses recorded in the loop
        self.loops.push(reserved.clone());
        self.loop_stack.push(id);
        let after = self.region(iteration, header + 1, back, Some(header_line));
        self.loop_stack.pop();
        let after = after?;
        let again = self
            .predicate_of(&after, back_edge, back_line)
            .map_err(|e| {
                self.err(
                    back_line,
                    format!("the loop's trip count cannot be lifted: {}", e.message),
                )
            })?;
        let unsupported = || {
            self.err(
                back_line,
                format!("the loop's exit condition ({}) is not comparisons affine in the iteration that must all hold to go on; its trip count cannot be lifted", again.to_expr()),
            )
        };
        // go on while every comparison holds (a `break` nvcc tests before the back edge adds
        // one): the trips are the fewest any one of them allows
        let (Some(term), 1) = (again.terms.first(), again.terms.len()) else {
            return Err(unsupported());
        };
        let mut counts = Vec::new();
        let mut below = None;
        for c in term {
            let (count, count_poly, last, bound) =
                self.trips_while(c, &var).ok_or_else(unsupported)?;
            counts.push((count, count_poly, last));
            below = bound.filter(|_| term.len() == 1);
        }
        let mut reserved = reserved;
        reserved.below = below;
        let (count, count_poly, last) = match counts.as_slice() {
            [one] => one.clone(),
            many => {
                let all = |f: fn(&(String, Option<Poly>, String)) -> &String| {
                    many.iter().map(f).cloned().collect::<Vec<_>>().join(", ")
                };
                (
                    format!("min({})", all(|c| &c.0)),
                    None,
                    format!("min({})", all(|c| &c.2)),
                )
            }
        };
        self.finish_loop(state, reserved, &after, &written, count, count_poly, last)
    }

    /// The trips of a loop that goes on while `c` holds at its back edge, `c` affine in the
    /// iteration `var`: the count, as a polynomial where it is one, the last iteration, and for
    /// a grid-stride loop tested with `<` the stride and the rest of the test
    /// ([`FoundLoop::below`]).
    #[allow(clippy::type_complexity)]
    fn trips_while(
        &self,
        c: &Comparison,
        var: &str,
    ) -> Option<(String, Option<Poly>, String, Option<(Poly, Poly)>)> {
        if let Some(trips) = geometric_trips(c, var) {
            return Some(trips);
        }
        // lhs = a * k + rest, a a constant or a positive product of blockDim and gridDim (the
        // stride of a grid-stride loop)
        let mut slope = Poly::default();
        let mut rest = Poly::default();
        for (m, &coefficient) in &c.lhs.terms {
            let uses = m.iter().filter(|x| **x == var).count();
            let term_without = |m: &Monomial| Poly {
                terms: BTreeMap::from([(m.clone(), coefficient)]),
            };
            match uses {
                0 => rest = rest.add(&term_without(m))?,
                1 => {
                    let mut others = m.clone();
                    others.retain(|x| *x != var);
                    slope = slope.add(&term_without(&others))?;
                }
                _ => return None,
            }
        }
        if rest.atoms().iter().any(|x| names_var(x, var))
            || slope.atoms().iter().any(|x| names_var(x, var))
        {
            return None;
        }
        let a = match slope.as_constant() {
            Some(0) => return None,
            Some(a) => a,
            None => {
                let launch_only = slope
                    .atoms()
                    .iter()
                    .all(|x| x.starts_with("blockDim.") || x.starts_with("gridDim."));
                let sign = if slope.terms.values().all(|c| *c > 0) {
                    1
                } else if slope.terms.values().all(|c| *c < 0) {
                    -1
                } else {
                    0
                };
                if !launch_only || sign == 0 {
                    return None;
                }
                // a positive stride s (the slope or its negation)
                let (s, lhs_rest, op) = if sign > 0 {
                    (slope.clone(), rest.clone(), c.op)
                } else {
                    (
                        slope.scale(-1)?,
                        rest.scale(-1)?,
                        match c.op {
                            "<" => ">",
                            "<=" => ">=",
                            ">" => "<",
                            ">=" => "<=",
                            o => o,
                        },
                    )
                };
                // s * k + r OP 0 with s > 0
                let neg = lhs_rest.scale(-1)?;
                let last = match op {
                    "<" => format!("cdiv({}, {})", neg.to_expr(), s.to_expr()),
                    "<=" => format!("{} / {} + 1", neg.to_operand(), s.to_operand()),
                    "!=" => format!("{} / {}", neg.to_operand(), s.to_operand()),
                    _ => return None,
                };
                let (count, last) = if op == "!=" {
                    (format!("{last} + 1"), last)
                } else {
                    (format!("max(0, {last}) + 1"), format!("max(0, {last})"))
                };
                let below = (op == "<").then(|| (s.clone(), lhs_rest.clone()));
                return Some((count, None, last, below));
            }
        };
        let (count, count_poly, last) = if c.op == "!=" {
            // `a * k + rest != 0` first fails at k = -rest / a (a loop that ends meets it
            // exactly: nvcc's counters that step by the unroll factor down to 0)
            let (num, den) = if a < 0 {
                (rest.sub(&Poly::constant(a)), -a)
            } else {
                (Poly::constant(a).sub(&rest), a)
            };
            let num = num?;
            match num.exact_div(den) {
                Some(p) => {
                    let last = p.sub(&Poly::constant(1))?;
                    (p.to_expr(), Some(p), last.to_expr())
                }
                None => {
                    let count = format!("{} / {den}", num.to_operand());
                    let last = format!("{count} - 1");
                    (count, None, last)
                }
            }
        } else {
            // the first iteration k >= 0 whose test fails is the last one run
            let neg = rest.scale(-1)?;
            let plus_one = |p: &Poly| p.add(&Poly::constant(1)).map(|q| q.to_expr());
            let last = match (a, c.op) {
                (1, "<") => Some(neg.to_expr()),
                (1, "<=") => plus_one(&neg),
                (-1, ">") => Some(rest.to_expr()),
                (-1, ">=") => plus_one(&rest),
                (a, "<") if a > 0 => Some(format!("cdiv({}, {a})", neg.to_expr())),
                (a, "<=") if a > 0 => Some(format!("({}) / {a} + 1", neg.to_expr())),
                (a, ">") if a < 0 => Some(format!("cdiv({}, {})", rest.to_expr(), -a)),
                (a, ">=") if a < 0 => Some(format!("({}) / {} + 1", rest.to_expr(), -a)),
                _ => None,
            }?;
            match last.parse::<i64>() {
                Ok(n) => {
                    let n = n.max(0);
                    (
                        (n + 1).to_string(),
                        Some(Poly::constant(n + 1)),
                        n.to_string(),
                    )
                }
                Err(_) => (
                    format!("max(0, {last}) + 1"),
                    None,
                    format!("max(0, {last})"),
                ),
            }
        };
        Some((count, count_poly, last, None))
    }

    /// Records the loop lifted by [`Lifter::counted_loop`] with its trip count, and sets `state`
    /// to the loop's exit: what the body computed, in its last iteration k = trips - 1.
    #[allow(clippy::too_many_arguments)]
    fn finish_loop(
        &mut self,
        state: &mut State,
        reserved: FoundLoop,
        after: &State,
        written: &BTreeSet<String>,
        count: String,
        count_poly: Option<Poly>,
        last: String,
    ) -> Result<()> {
        let id = self
            .loops
            .iter()
            .position(|l| l.trips == reserved.trips)
            .unwrap_or(self.loops.len() - 1);
        let (var, header_line) = (reserved.var.clone(), reserved.line);
        let trips = reserved.trips.clone();
        self.loops[id] = FoundLoop {
            count,
            count_poly,
            last,
            ..reserved
        };
        let last_k = Poly::atom(trips)
            .sub(&Poly::constant(1))
            .unwrap_or_default();
        for r in written {
            let exit = match after.regs.get(r) {
                Some(Val::Int(p)) => p.substitute(&var, &last_k).map(|p| Val::Int(self.fold(p))),
                Some(Val::Pred(d)) => d.substitute(&var, &last_k).map(Val::Pred),
                _ => None,
            };
            state.regs.insert(
                r.clone(),
                exit.unwrap_or_else(|| {
                    Val::Unknown(format!(
                        "{r} is used after the loop at line {header_line} in a way the lifter does not follow"
                    ))
                }),
            );
        }
        Ok(())
    }

    /// The condition of a branch or exit; one the lifter cannot follow (a loaded value, a
    /// 64-bit division's fast-path test) becomes an opaque comparison, harmless where both
    /// paths meet again with the same values and refused where an access or a loop depends
    /// on it.
    fn branch_condition(&mut self, state: &State, ins: &Instruction, line: usize) -> Dnf {
        match self.predicate_of(state, ins, line) {
            Ok(d) => d,
            Err(e) => {
                let (reg, negated) = ins.predicate.clone().unwrap_or_default();
                let why = e
                    .message
                    .strip_prefix(&format!("line {line}: "))
                    .unwrap_or(&e.message)
                    .replace("the branch or exit condition cannot be lifted: ", "");
                let why =
                    format!("the condition of the branch at line {line} cannot be lifted: {why}");
                let key = format!("{reg} {why}");
                let id = match self.opaque.iter().position(|(k, _)| *k == key) {
                    Some(i) => i,
                    None => {
                        self.opaque.push((key, why));
                        self.opaque.len() - 1
                    }
                };
                let c = Comparison {
                    lhs: Poly::atom(format!("{OPAQUE}{id}\u{27e9}")),
                    op: "!=",
                };
                Dnf::comparison(if negated { c.negated() } else { c })
            }
        }
    }

    /// The condition under which a (possibly predicated) instruction acts.
    fn predicate_of(&self, state: &State, ins: &Instruction, line: usize) -> Result<Dnf> {
        match &ins.predicate {
            None => Ok(Dnf::top()),
            Some((p, negated)) => {
                let name = if *negated { format!("!{p}") } else { p.clone() };
                self.pred(state, &name, line).map_err(|why| {
                    self.err(
                        line,
                        format!("the branch or exit condition cannot be lifted: {why}"),
                    )
                })
            }
        }
    }

    /// The state at a label: the fall-through path joined with the branches to it.
    fn join(
        &self,
        current: State,
        incoming: Vec<State>,
        label: &str,
        line: usize,
    ) -> Result<State> {
        let mut paths: Vec<State> = Vec::new();
        if !current.reached.terms.is_empty() {
            paths.push(current);
        }
        paths.extend(incoming.into_iter().filter(|s| !s.reached.terms.is_empty()));
        let Some(first) = paths.first() else {
            return Ok(State {
                regs: HashMap::new(),
                reached: Dnf::bottom(),
            });
        };
        let mut joined = first.clone();
        for other in &paths[1..] {
            for (reg, v) in &other.regs {
                match joined.regs.get(reg) {
                    None => {
                        joined.regs.insert(reg.clone(), v.clone());
                    }
                    Some(mine) if mine != v => {
                        let unified = self
                            .unify(mine, &joined.reached, v, &other.reached)
                            .unwrap_or_else(|| {
                                Val::Unknown(format!(
                                    "{reg} takes different values on the paths that meet at {label} (line {line})"
                                ))
                            });
                        joined.regs.insert(reg.clone(), unified);
                    }
                    Some(_) => {}
                }
            }
            joined.reached = joined
                .reached
                .or(&other.reached)
                .ok_or_else(|| self.err(line, "the control flow's conditions grow too large"))?;
        }
        Ok(joined)
    }

    /// The value of a register on two paths that meet, where one path went through loops the
    /// other skipped: `start + step * ⟪n⟫` after the loop and `start` where it was skipped are
    /// one value, since the trip atom is 0 where the loop is not entered (the path that skipped
    /// it, whose condition contradicts the loop's entry).
    fn unify(&self, a: &Val, a_reached: &Dnf, b: &Val, b_reached: &Dnf) -> Option<Val> {
        let (Val::Int(pa), Val::Int(pb)) = (a, b) else {
            return None;
        };
        for (x, y, y_reached) in [(pa, pb, b_reached), (pb, pa, a_reached)] {
            let mut zeroed = x.clone();
            // the trip counts in `x` (inside its wrap and power atoms too) that `y` lacks
            for l in &self.loops {
                if !x.mentions(&l.trips) || y.mentions(&l.trips) {
                    continue;
                }
                // the other path must skip the loop
                if !y_reached.and(&l.entry)?.terms.is_empty() {
                    continue;
                }
                zeroed = zeroed.substitute(&l.trips, &Poly::default())?;
            }
            // a wrap the loop's path keeps and the other's value, provably in range, lacks
            // (`u32(s + x)` after a loop that halves `s`, `s + x` before it) is the same value
            if (zeroed == *y || zeroed.exact() == y.exact()) && zeroed != *x {
                return Some(Val::Int(x.clone()));
            }
        }
        None
    }

    /// One instruction other than a branch or exit.
    fn instruction(&mut self, state: &mut State, ins: &Instruction, line: usize) -> Result<()> {
        let op = ins.opcode[0].as_str();
        let modifiers = &ins.opcode[1..];
        let has = |m: &str| modifiers.iter().any(|x| x == m);
        let ty = modifiers.last().map_or("", String::as_str);
        let is_float = ty.starts_with('f');
        let dest = ins.operands.first().cloned().unwrap_or_default();
        match op {
            "call" => return Err(self.err(line, "a call that is not inlined cannot be lifted")),
            "ld" | "st" | "atom" | "red"
                if has("global")
                    || (!has("shared") && !has("local") && !has("param") && !has("const")) =>
            {
                return self.memory_access(state, ins, line, false);
            }
            "ld" if has("param") => {
                let addr = ins
                    .operands
                    .get(1)
                    .map(|a| a.trim_matches(['[', ']']).trim())
                    .unwrap_or("");
                let v = match self.param_names.get(addr) {
                    Some(name) => Val::Int(Poly::atom(name.clone())),
                    None => {
                        Val::Unknown(format!("the parameter read at line {line} is not lifted"))
                    }
                };
                return self.set(state, ins, &dest, v, line);
            }
            // Instructions that move memory the trace language cannot say: lifting on without
            // them would leave their traffic out silently.
            "cp" if has("shared") || has("global") || has("bulk") => {
                return Err(self.err(
                    line,
                    "an asynchronous copy between global and shared memory (`cp.async`, LDGSTS or a bulk/TMA copy) is not lifted: the trace language has none (write it as a global load and a shared store)",
                ));
            }
            "ldmatrix" | "stmatrix" | "tex" | "tld4" | "suld" | "sust" | "sured" => {
                return Err(self.err(
                    line,
                    format!("`{op}` (a matrix, texture or surface access) is not lifted: the trace language has none"),
                ));
            }
            "prefetch" | "prefetchu" | "discard" | "applypriority" | "mbarrier" => {
                self.warnings.push(format!(
                    "{}: line {line}: `{}` is not modelled (the trace language has no such step): what it does to the caches is left out",
                    self.source,
                    ins.opcode.join(".")
                ));
                if op == "mbarrier" && !dest.starts_with('[') {
                    let v =
                        Val::Unknown(format!("the mbarrier result at line {line} is not lifted"));
                    return self.set(state, ins, &dest, v, line);
                }
                return Ok(());
            }
            "ld" | "st" | "atom" | "red" if has("local") => {
                self.warnings.push(format!(
                    "{}: line {line}: a local-memory access (a spill?); its traffic is not modelled",
                    self.source
                ));
                if op != "st" {
                    let v = Val::Unknown(format!(
                        "the local-memory load at line {line} is not lifted"
                    ));
                    return self.set(state, ins, &dest, v, line);
                }
                return Ok(());
            }
            "ld" | "st" if has("shared") && !has("cluster") => {
                return self.memory_access(state, ins, line, true);
            }
            "shfl" => {
                // A warp shuffle moves registers between lanes, no memory, but takes a data-pipe
                // wavefront: a step of its own (`{ shuffles = 1 }`), the value it gives unknown.
                let condition = state
                    .reached
                    .and(&self.predicate_of(state, ins, line)?)
                    .ok_or_else(|| self.err(line, "the shuffle's condition grows too large"))?;
                self.accesses.push(FoundAccess {
                    line,
                    kind: "shuffle",
                    shared: None,
                    address: Poly::default(),
                    scalar_bytes: 0,
                    lanes: 0,
                    condition,
                    loops: self.loop_stack.clone(),
                    bypass_l1: false,
                    float: false,
                });
                let v = Val::Unknown(format!(
                    "a value exchanged between lanes by a shuffle (line {line}) is not lifted"
                ));
                // `shfl.sync.bfly.b32 %r1|%p1, ...`: the value and whether its lane was valid
                for r in dest.split('|') {
                    self.assign(state, ins, r.trim(), v.clone(), line);
                }
                return Ok(());
            }
            "bar" | "barrier"
                if modifiers.is_empty()
                    || modifiers.iter().all(|m| m == "sync" || m == "aligned") =>
            {
                self.accesses.push(FoundAccess {
                    line,
                    kind: "sync",
                    shared: None,
                    address: Poly::default(),
                    scalar_bytes: 0,
                    lanes: 0,
                    condition: state.reached.clone(),
                    loops: self.loop_stack.clone(),
                    bypass_l1: false,
                    float: false,
                });
                return Ok(());
            }
            "ld" | "st" | "atom" | "red" if has("shared") => {
                self.warnings.push(format!(
                    "{}: line {line}: a shared-memory atomic is not lifted (the trace language has none); its traffic is not modelled",
                    self.source
                ));
                if op != "st" && op != "red" {
                    let v = Val::Unknown(format!(
                        "the value loaded from shared memory at line {line} is not lifted"
                    ));
                    return self.set(state, ins, &dest, v, line);
                }
                return Ok(());
            }
            _ => {}
        }
        if is_float
            && matches!(
                op,
                "add"
                    | "sub"
                    | "mul"
                    | "fma"
                    | "mad"
                    | "neg"
                    | "min"
                    | "max"
                    | "div"
                    | "sqrt"
                    | "rcp"
            )
        {
            if ty == "f32" || ty == "f64" {
                self.flops.push(FlopSite {
                    ops: if matches!(op, "fma" | "mad") { 2 } else { 1 },
                    double: ty == "f64",
                    loops: self.loop_stack.clone(),
                    line,
                    one_instruction: matches!(op, "add" | "sub" | "mul" | "fma" | "mad"),
                });
            }
            let v = Val::Unknown(format!(
                "a floating-point value (line {line}) is used in an address or condition"
            ));
            return self.set(state, ins, &dest, v, line);
        }
        if op == "setp" {
            self.setp(state, ins, line);
            return Ok(());
        }
        if op == "cvta"
            && has("to")
            && let Ok(p) = self.int(
                state,
                ins.operands.get(1).map(String::as_str).unwrap_or(""),
                line,
            )
            && let Some((atom, 1)) = p.as_scaled_atom()
        {
            self.pointers.insert(atom.to_string());
        }
        let src = |i: usize| ins.operands.get(i).map(String::as_str).unwrap_or("");
        let value: std::result::Result<Val, String> = (|| {
            let int = |i: usize| self.int(state, src(i), line);
            let overflow = || format!("the arithmetic at line {line} overflows 64 bits");
            Ok(match op {
                "mov" | "cvta" | "cvt" => {
                    if op == "cvt"
                        && (modifiers.iter().any(|m| m.starts_with('f'))
                            || modifiers
                                .iter()
                                .any(|m| m.starts_with("rn") || m.starts_with("rz")))
                    {
                        return Ok(Val::Unknown(format!(
                            "a conversion to or from floating point (line {line}) is not lifted"
                        )));
                    }
                    if ty == "pred" {
                        // `mov.pred %p, 0` (or 1): a constant predicate
                        return Ok(Val::Pred(match parse_int(src(1)) {
                            Some(0) => Dnf::bottom(),
                            Some(_) => Dnf::top(),
                            None => self.pred(state, src(1), line)?,
                        }));
                    }
                    let v = self.operand(state, src(1), line);
                    // a 32-bit integer widened to 64 bits: as it was, wrapped around
                    match (v, modifiers.first().map(String::as_str), ty) {
                        (Val::Int(p), Some("s64" | "u64" | "b64"), "s32" | "u32")
                            if op == "cvt" =>
                        {
                            Val::Int(self.as_32_bits(p, ty == "s32"))
                        }
                        (v, ..) => v,
                    }
                }
                "add" | "sub" => {
                    if has("cc") || has("hi") {
                        return Err(format!(
                            "`{}` (line {line}) is not lifted",
                            ins.opcode.join(".")
                        ));
                    }
                    let (a, b) = (int(1)?, int(2)?);
                    Val::Int(if op == "add" { a.add(&b) } else { a.sub(&b) }.ok_or_else(overflow)?)
                }
                "mul" | "mad" => {
                    if has("hi") {
                        return Err(format!(
                            "`{}` (line {line}) (the high half) is not lifted",
                            ins.opcode.join(".")
                        ));
                    }
                    let (mut a, mut b) = (int(1)?, int(2)?);
                    if has("wide") && (ty == "s32" || ty == "u32") {
                        // the two 32-bit operands as they are, wrapped around; their product in 64
                        a = self.as_32_bits(a, ty == "s32");
                        b = self.as_32_bits(b, ty == "s32");
                    }
                    let mut p = a.mul(&b).ok_or_else(overflow)?;
                    if op == "mad" {
                        p = p.add(&int(3)?).ok_or_else(overflow)?;
                    }
                    Val::Int(p)
                }
                "neg" => Val::Int(int(1)?.scale(-1).ok_or_else(overflow)?),
                "shl" => {
                    let k = int(2)?
                        .as_constant()
                        .filter(|k| (0..63).contains(k))
                        .ok_or_else(|| {
                            format!("a shift by a variable amount (line {line}) is not lifted")
                        })?;
                    Val::Int(int(1)?.scale(1 << k).ok_or_else(overflow)?)
                }
                "shr" => {
                    let k = int(2)?
                        .as_constant()
                        .filter(|k| (0..63).contains(k))
                        .ok_or_else(|| {
                            format!("a shift by a variable amount (line {line}) is not lifted")
                        })?;
                    let a = int(1)?;
                    // an arithmetic shift is a floor division, as the trace language divides
                    Val::Int(divided(&a, 1 << k))
                }
                "div" | "rem" => {
                    let (a, b) = (int(1)?, int(2)?);
                    let sym = if op == "div" { "/" } else { "%" };
                    match (op, b.as_constant()) {
                        ("div", Some(k)) if k >= 2 => Val::Int(divided(&a, k)),
                        ("div", Some(k)) if a.exact_div(k).is_some() => {
                            Val::Int(a.exact_div(k).unwrap_or_default())
                        }
                        _ => Val::Int(Poly::atom(format!(
                            "({} {sym} {})",
                            a.to_operand(),
                            b.to_operand()
                        ))),
                    }
                }
                "min" | "max" => {
                    let (a, b) = (int(1)?, int(2)?);
                    Val::Int(Poly::atom(format!(
                        "{op}({}, {})",
                        a.to_expr(),
                        b.to_expr()
                    )))
                }
                "and" | "or" | "xor" | "not" if ty == "pred" => {
                    let a = self.pred(state, src(1), line)?;
                    let too_large = || format!("the predicate at line {line} grows too large");
                    Val::Pred(match op {
                        "and" => a
                            .and(&self.pred(state, src(2), line)?)
                            .ok_or_else(too_large)?,
                        "or" => a
                            .or(&self.pred(state, src(2), line)?)
                            .ok_or_else(too_large)?,
                        "not" => a.not().ok_or_else(too_large)?,
                        _ => {
                            let b = self.pred(state, src(2), line)?;
                            let one = a
                                .and(&b.not().ok_or_else(too_large)?)
                                .ok_or_else(too_large)?;
                            let other = b
                                .and(&a.not().ok_or_else(too_large)?)
                                .ok_or_else(too_large)?;
                            one.or(&other).ok_or_else(too_large)?
                        }
                    })
                }
                "and" => {
                    // A mask of low bits is a floor modulo (for negative values too); a run of
                    // bits above the lowest, (2^k - 1) << s, is that modulo of the value shifted
                    // right, shifted back: nvcc's byte offset of a warp's slot in shared memory,
                    // (threadIdx.x >> 3) & 0x1ffffffc for warps[threadIdx.x / 32].
                    let (a, b) = (int(1)?, int(2)?);
                    match b.as_constant().or(a.as_constant()) {
                        Some(m) if m > 0 && is_low_bit_mask(m >> m.trailing_zeros()) => {
                            let x = if b.as_constant().is_some() { a } else { b };
                            let shift = m.trailing_zeros();
                            let low = m >> shift;
                            let shifted = x.exact_div(1 << shift).unwrap_or_else(|| {
                                Poly::atom(format!("({} / {})", x.to_operand(), 1i64 << shift))
                            });
                            let kept =
                                Poly::atom(format!("({} % {})", shifted.to_operand(), low + 1));
                            Val::Int(kept.scale(1 << shift).ok_or_else(|| {
                                format!("the mask at line {line} overflows the index")
                            })?)
                        }
                        // A mask of all bits but the lowest k rounds down to a multiple of
                        // 2^k: x - (x mod 2^k), the floor modulo again. nvcc's signed i / 4 * 8
                        // and i % 4 clear the low bits with -4 and -8.
                        m => match m.and_then(|m| high_bit_mask_clears(m, ty)) {
                            Some(modulus) => {
                                let x = if b.as_constant().is_some() { a } else { b };
                                let low = Poly::atom(format!("({} % {modulus})", x.to_operand()));
                                Val::Int(x.sub(&low).ok_or_else(overflow)?)
                            }
                            None => {
                                return Err(format!(
                                    "`and` with a value that is neither a run of bits nor all but the low bits (line {line}) is not lifted"
                                ));
                            }
                        },
                    }
                }
                "or" => {
                    let (a, b) = (int(1)?, int(2)?);
                    if a.as_constant() == Some(0) {
                        Val::Int(b)
                    } else if b.as_constant() == Some(0) {
                        Val::Int(a)
                    } else {
                        return Err(format!("`or` of two values (line {line}) is not lifted"));
                    }
                }
                "abs" => Val::Int(Poly::atom(format!("abs({})", int(1)?.to_expr()))),
                // two's complement: !a = -a - 1
                "not" => Val::Int(
                    int(1)?
                        .scale(-1)
                        .and_then(|p| p.add(&Poly::constant(-1)))
                        .ok_or_else(overflow)?,
                ),
                "selp" => {
                    let (a, b) = (int(1)?, int(2)?);
                    let p = self.pred(state, src(3), line)?;
                    if p.is_top() || a == b {
                        Val::Int(a)
                    } else if p.terms.is_empty() {
                        Val::Int(b)
                    } else {
                        Val::Int(Poly::atom(format!(
                            "({} ? {} : {})",
                            p.to_expr(),
                            a.to_expr(),
                            b.to_expr()
                        )))
                    }
                }
                _ => {
                    return Err(format!(
                        "`{}` (line {line}) is not lifted",
                        ins.opcode.join(".")
                    ));
                }
            })
        })();
        let value = match value {
            Ok(v) => v,
            Err(why) => Val::Unknown(why),
        };
        let value = match value {
            Val::Int(p) => Val::Int(self.fold(p)),
            v => v,
        };
        self.set(state, ins, &dest, value, line)
    }

    /// `setp.CMP.TYPE p[|q], a, b[, c]`.
    fn setp(&self, state: &mut State, ins: &Instruction, line: usize) {
        let cmp = ins.opcode.get(1).map(String::as_str).unwrap_or("");
        let combine = ins
            .opcode
            .get(2)
            .filter(|m| matches!(m.as_str(), "and" | "or" | "xor"));
        let is_float = ins.opcode.last().is_some_and(|t| t.starts_with('f'));
        let dests: Vec<&str> = ins
            .operands
            .first()
            .map_or(Vec::new(), |d| d.split('|').map(str::trim).collect());
        let value = (|| {
            if is_float {
                return Err(format!(
                    "a floating-point comparison (line {line}) is not lifted"
                ));
            }
            let a = self.int(
                state,
                ins.operands.get(1).map(String::as_str).unwrap_or(""),
                line,
            )?;
            let b = self.int(
                state,
                ins.operands.get(2).map(String::as_str).unwrap_or(""),
                line,
            )?;
            let op = match cmp {
                "eq" => "==",
                "ne" => "!=",
                "lt" | "lo" => "<",
                "le" | "ls" => "<=",
                "gt" | "hi" => ">",
                "ge" | "hs" => ">=",
                _ => {
                    return Err(format!(
                        "the comparison `{cmp}` (line {line}) is not lifted"
                    ));
                }
            };
            let lhs = self.fold(
                a.sub(&b)
                    .ok_or_else(|| format!("the comparison at line {line} overflows"))?,
            );
            let mut p = Dnf::comparison(Comparison { lhs, op });
            if let Some(c) = combine {
                let other = self.pred(
                    state,
                    ins.operands.get(3).map(String::as_str).unwrap_or(""),
                    line,
                )?;
                let too_large = || format!("the predicate at line {line} grows too large");
                p = match c.as_str() {
                    "and" => p.and(&other).ok_or_else(too_large)?,
                    "or" => p.or(&other).ok_or_else(too_large)?,
                    _ => return Err(format!("`setp` with `.xor` (line {line}) is not lifted")),
                };
            }
            Ok(p)
        })();
        let (first, second) = match value {
            Ok(p) => {
                let n = p.not().map_or_else(
                    || Val::Unknown(format!("the predicate at line {line} grows too large")),
                    Val::Pred,
                );
                (Val::Pred(p), n)
            }
            Err(why) => (Val::Unknown(why.clone()), Val::Unknown(why)),
        };
        if let Some(d) = dests.first() {
            self.assign(state, ins, d, first, line);
        }
        if let Some(d) = dests.get(1) {
            self.assign(state, ins, d, second, line);
        }
    }

    fn set(
        &self,
        state: &mut State,
        ins: &Instruction,
        dest: &str,
        v: Val,
        line: usize,
    ) -> Result<()> {
        if dest.starts_with('{') {
            // a vector destination: every register in it gets the (unknown) value
            for r in dest.trim_matches(['{', '}']).split(',') {
                self.assign(state, ins, r.trim(), v.clone(), line);
            }
        } else {
            self.assign(state, ins, dest, v, line);
        }
        Ok(())
    }

    /// Writes a register; a predicated write keeps the old value only where it equals the new.
    fn assign(&self, state: &mut State, ins: &Instruction, reg: &str, v: Val, line: usize) {
        let v = match (&ins.predicate, state.regs.get(reg)) {
            (None, _) => v,
            (Some(_), Some(old)) if *old == v => v,
            (Some((p, _)), _) => {
                Val::Unknown(format!("{reg} is set only where {p} holds (line {line})"))
            }
        };
        state.regs.insert(reg.to_string(), v);
    }

    /// A global load, store, reduction or atomic.
    /// A global or shared load, store, reduction or atomic.
    fn memory_access(
        &mut self,
        state: &mut State,
        ins: &Instruction,
        line: usize,
        shared: bool,
    ) -> Result<()> {
        let op = ins.opcode[0].as_str();
        let ty = ins.opcode.last().map_or("", String::as_str);
        let lanes: u32 = if ins.opcode.iter().any(|m| m == "v2") {
            2
        } else if ins.opcode.iter().any(|m| m == "v4") {
            4
        } else if ins.opcode.iter().any(|m| m == "v8") {
            8
        } else {
            1
        };
        let scalar_bytes = type_bytes(ty).ok_or_else(|| {
            self.err(
                line,
                format!(
                    "`{}` has no element type the lifter knows",
                    ins.opcode.join(".")
                ),
            )
        })?;
        let addr_index = if op == "st" || op == "red" { 0 } else { 1 };
        let addr_op = ins.operands.get(addr_index).ok_or_else(|| {
            self.err(
                line,
                format!("`{}` without an address", ins.opcode.join(".")),
            )
        })?;
        let kind = match op {
            "ld" => "load",
            "st" => "store",
            _ => "atomic",
        };
        let address = self.address(state, addr_op, line).map_err(|why| {
            self.err(
                line,
                format!("the address of this {kind} cannot be lifted: {why}"),
            )
        })?;
        let condition = state
            .reached
            .and(&self.predicate_of(state, ins, line)?)
            .ok_or_else(|| self.err(line, "the access's condition grows too large"))?;
        // Loads that never hit in the L1 on the H200 (validation/load_cache_ops.cu): `.cg`
        // and `.lu`, `.cv` and volatile ones, and those of GPU or system scope (the same SASS).
        let has = |m: &str| ins.opcode.iter().any(|x| x == m);
        let bypass_l1 = op == "ld"
            && !shared
            && (has("cg")
                || has("lu")
                || has("cv")
                || has("volatile")
                || ((has("relaxed") || has("acquire")) && (has("gpu") || has("sys"))));
        let float = (op == "atom" || op == "red")
            && ["f32", "f64", "f16", "f16x2", "bf16", "bf16x2"]
                .iter()
                .any(|t| has(t));
        // a shared access's array is found once the loops' registers are known (lift_entry)
        let shared = shared.then(String::new);
        self.accesses.push(FoundAccess {
            line,
            kind,
            shared,
            address,
            scalar_bytes,
            lanes,
            condition,
            loops: self.loop_stack.clone(),
            bypass_l1,
            float,
        });
        if op != "st" && op != "red" {
            let v = Val::Unknown(format!("it depends on the value loaded at line {line}"));
            let dest = ins.operands[0].clone();
            self.set(state, ins, &dest, v, line)?;
        }
        Ok(())
    }
}

impl Lifter<'_> {
    /// The shared array a shared address is based on (named for the trace: `tile` for
    /// `_ZZ15transpose_tiledPKfPfiiE4tile`) and the byte offset into it.
    fn shared_base(&mut self, address: &Poly) -> Option<(String, Poly)> {
        let symbols: Vec<String> = address
            .atoms()
            .into_iter()
            .filter(|a| a.starts_with(SHARED_SYMBOL))
            .map(str::to_string)
            .collect();
        let [atom] = symbols.as_slice() else {
            return None;
        };
        if address.linear_coefficient(atom) != 1 {
            return None;
        }
        let offset = address.sub(&Poly::atom(atom.clone()))?;
        if offset.atoms().iter().any(|a| a.starts_with(SHARED_SYMBOL)) {
            return None;
        }
        let symbol = atom
            .strip_prefix(SHARED_SYMBOL)?
            .strip_suffix('\u{27e9}')?
            .to_string();
        if let Some((name, _)) = self.shared_arrays.iter().find(|(_, (s, _))| *s == symbol) {
            return Some((name.clone(), offset));
        }
        let in_entry = self.entry.body.iter().filter_map(|st| match &st.kind {
            StatementKind::Directive(d) if d.contains(".shared") => Some(d),
            _ => None,
        });
        let declared = in_entry
            .chain(&self.entry.module_shared)
            .find_map(|d| shared_declaration(d).filter(|(n, _)| *n == symbol))
            .map(|(_, bytes)| bytes);
        let mut name = shared_name(&symbol);
        while self.param_names.values().any(|p| *p == name)
            || self.shared_arrays.contains_key(&name)
            || self.index_names.contains(&name)
        {
            name.push_str("_shared");
        }
        self.shared_arrays.insert(name.clone(), (symbol, declared));
        Some((name, offset))
    }
}

/// The symbol and bytes of a static shared declaration (`.shared .align 4 .b8 tile[4224]`).
fn shared_declaration(d: &str) -> Option<(String, u64)> {
    let last = d.split_whitespace().last()?.trim_end_matches(';');
    let (name, rest) = last.split_once('[')?;
    let count: u64 = rest.strip_suffix(']')?.parse().ok()?;
    let unit = d
        .split_whitespace()
        .find_map(|t| {
            t.strip_prefix(".b")
                .or_else(|| t.strip_prefix(".u"))
                .or_else(|| t.strip_prefix(".f"))
        })
        .and_then(|bits| bits.parse::<u64>().ok())
        .map_or(1, |bits| bits / 8);
    Some((name.to_string(), count * unit.max(1)))
}

/// A trace name for a shared symbol: the variable's own name out of a mangled local static
/// (`_ZZ15transpose_tiledPKfPfiiE4tile` → `tile`), else the symbol.
fn shared_name(symbol: &str) -> String {
    if symbol.starts_with("_ZZ")
        && let Some(at) = symbol.rfind('E')
    {
        let tail = &symbol[at + 1..];
        let digits: String = tail.chars().take_while(char::is_ascii_digit).collect();
        if let Ok(n) = digits.parse::<usize>()
            && let Some(name) = tail.get(digits.len()..digits.len() + n)
            && !name.is_empty()
        {
            return name.to_string();
        }
    }
    symbol
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// A PTX integer literal (`4`, `-8`, `0x1F`, `0x1FU`); float literals are `None`.
fn parse_int(s: &str) -> Option<i64> {
    let s = s.trim().trim_end_matches(['U', 'u']);
    let (negative, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s),
    };
    let v = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        i64::from_str_radix(hex, 16).ok()?
    } else if digits.chars().all(|c| c.is_ascii_digit()) && !digits.is_empty() {
        digits.parse().ok()?
    } else {
        return None;
    };
    Some(if negative { -v } else { v })
}

/// An access resolved to its array and element index.
struct Resolved {
    line: usize,
    kind: &'static str,
    array: String,
    index: Poly,
    bytes: u32,
    condition: Dnf,
    loops: Vec<usize>,
    /// The compiled code waits after this load.
    ends_run: bool,
    /// A global load that bypasses the L1.
    bypass_l1: bool,
    /// An atomic the compiled code aggregates over the warp (one lane's update per address).
    aggregated: bool,
    /// An atomic adding floating-point values.
    float: bool,
    /// The compiled code predicates this access (`@P LDG`) rather than branching around it: a
    /// warp issues it even with no lane meeting its condition.
    predicated: bool,
    /// For a global store: the SASS instructions between the previous memory instruction or
    /// barrier and this store (0 without the SASS).
    instructions_before: u32,
}

/// A trace-language name for parameter `i` (`p0`, …) unless the source gave one.
fn param_name(i: usize, given: Option<&String>) -> String {
    given.cloned().unwrap_or_else(|| format!("p{i}"))
}

/// `entry` with each loop exit nvcc tests just before an unconditional back edge
/// (`@%p bra OUT; bra HEADER; OUT:`, the shape of a `break` or a second loop condition) turned
/// into the conditional back edge it amounts to (`@!%p bra HEADER; OUT:`): the same control
/// flow, with one exit test that gives the trip count.
fn exits_as_back_edges(entry: &Entry) -> Entry {
    let target = |st: &super::parse::Statement| match &st.kind {
        StatementKind::Instruction(ins) if ins.opcode[0] == "bra" => ins
            .operands
            .first()
            .cloned()
            .map(|t| (t, ins.predicate.clone())),
        _ => None,
    };
    let label_at = |name: &str| {
        entry
            .body
            .iter()
            .position(|st| matches!(&st.kind, StatementKind::Label(l) if l == name))
    };
    let is_code = |st: &super::parse::Statement| !matches!(st.kind, StatementKind::Directive(_));
    let mut out = entry.clone();
    let mut drop = BTreeSet::new();
    for (i, st) in entry.body.iter().enumerate() {
        let Some((exit, Some((p, negated)))) = target(st) else {
            continue;
        };
        let Some(j) = (i + 1..entry.body.len()).find(|&j| is_code(&entry.body[j])) else {
            continue;
        };
        let Some((header, None)) = target(&entry.body[j]) else {
            continue;
        };
        let after = (j + 1..entry.body.len()).find(|&k| is_code(&entry.body[k]));
        let backward = label_at(&header).is_some_and(|h| h < i);
        if backward && after.is_some() && after == label_at(&exit) {
            if let StatementKind::Instruction(ins) = &mut out.body[i].kind {
                ins.predicate = Some((p, !negated));
                ins.operands[0] = header;
            }
            drop.insert(j);
        }
    }
    let mut i = 0;
    out.body.retain(|_| {
        i += 1;
        !drop.contains(&(i - 1))
    });
    out
}

/// Lifts `entry` (of the file `source`) into trace TOML named `kernel_name`.
pub fn lift_entry(
    entry: &Entry,
    source: &str,
    kernel_name: &str,
    options: &LiftOptions,
) -> Result<LiftedText> {
    let rewritten = exits_as_back_edges(entry);
    let entry = &rewritten;
    let names: Vec<String> = (0..entry.params.len())
        .map(|i| param_name(i, options.param_names.get(i)))
        .collect();
    super::symbolic::forget_wraps();
    let index_names = DIMS.map(|d| {
        if names.iter().any(|n| n == d) {
            format!("g{d}")
        } else {
            d.to_string()
        }
    });
    let mut lifter = Lifter {
        source,
        entry,
        param_names: entry
            .params
            .iter()
            .map(|(p, _)| p.clone())
            .zip(names.iter().cloned())
            .collect(),
        pointers: BTreeSet::new(),
        index_names: index_names.clone(),
        accesses: Vec::new(),
        warnings: Vec::new(),
        flops: Vec::new(),
        lines: Vec::new(),
        loops: Vec::new(),
        loop_stack: Vec::new(),
        labels: HashMap::new(),
        back_edges: HashMap::new(),
        opaque: Vec::new(),
        shared_arrays: BTreeMap::new(),
    };
    lifter.run()?;
    if lifter.accesses.is_empty() {
        return Err(Error::new(
            source,
            format!(
                "line {}: {kernel_name} makes no global memory access to simulate",
                entry.line
            ),
        ));
    }
    // Arrays: the pointer parameter each address is based on.
    let pointer_params: BTreeSet<String> = if lifter.pointers.is_empty() {
        entry
            .params
            .iter()
            .zip(&names)
            .filter(|((_, t), _)| t == "u64" || t == "b64" || t == "s64")
            .map(|(_, n)| n.clone())
            .collect()
    } else {
        lifter.pointers.clone()
    };
    let mut element_bytes: BTreeMap<String, u32> = BTreeMap::new();
    // shared accesses: the shared array each is based on, and the byte offset into it
    for i in 0..lifter.accesses.len() {
        if lifter.accesses[i].shared.is_none() {
            continue;
        }
        let address = lifter.accesses[i].address.clone();
        let (array, offset) = lifter.shared_base(&address).ok_or_else(|| {
            let a = &lifter.accesses[i];
            Error::new(
                source,
                format!(
                    "line {}: the address of this shared {} is not one shared array plus an offset: {}",
                    a.line,
                    a.kind,
                    address.to_expr()
                ),
            )
        })?;
        lifter.accesses[i].shared = Some(array);
        lifter.accesses[i].address = offset;
    }
    // shared arrays: element size from their narrowest access, as for global ones
    let mut shared_bytes: BTreeMap<String, u32> = BTreeMap::new();
    for a in &lifter.accesses {
        if let Some(array) = &a.shared {
            let e = shared_bytes.entry(array.clone()).or_insert(a.scalar_bytes);
            *e = (*e).min(a.scalar_bytes);
        }
    }
    for a in lifter
        .accesses
        .iter()
        .filter(|a| a.shared.is_none() && !a.is_step_without_address())
    {
        let bases: Vec<&String> = pointer_params
            .iter()
            .filter(|p| a.address.linear_coefficient(p) == 1)
            .collect();
        let err = |why: &str| {
            Error::new(
                source,
                format!("line {}: the address of this {} {why}", a.line, a.kind),
            )
        };
        let [base] = bases.as_slice() else {
            return Err(err(
                "is not one pointer parameter plus an offset (an address loaded from memory, or pointer arithmetic across arrays?)",
            ));
        };
        let offset = a
            .address
            .sub(&Poly::atom((*base).clone()))
            .unwrap_or_default();
        if offset.atoms().iter().any(|x| pointer_params.contains(*x)) {
            return Err(err("mixes several pointer parameters"));
        }
        let e = element_bytes
            .entry((*base).clone())
            .or_insert(a.scalar_bytes);
        *e = (*e).min(a.scalar_bytes);
    }
    let mut resolved = Vec::new();
    for a in &lifter.accesses {
        if a.is_step_without_address() {
            resolved.push(Resolved {
                line: a.line,
                kind: a.kind,
                array: String::new(),
                index: Poly::default(),
                bytes: 0,
                condition: a.condition.clone(),
                loops: a.loops.clone(),
                ends_run: false,
                bypass_l1: false,
                aggregated: false,
                float: false,
                predicated: false,
                instructions_before: 0,
            });
            continue;
        }
        let (base, offset, e) = match &a.shared {
            Some(array) => (array.clone(), a.address.clone(), shared_bytes[array]),
            None => {
                let base = pointer_params
                    .iter()
                    .find(|p| a.address.linear_coefficient(p) == 1)
                    .cloned()
                    .unwrap_or_default();
                let offset = a.address.sub(&Poly::atom(base.clone())).unwrap_or_default();
                let e = element_bytes[&base];
                (base, offset, e)
            }
        };
        let index = offset.exact_div(i64::from(e)).ok_or_else(|| {
            Error::new(
                source,
                format!(
                    "line {}: the byte offset {} of this {} into '{base}' is not a multiple of its element size, {e} bytes",
                    a.line,
                    offset.to_expr(),
                    a.kind
                ),
            )
        })?;
        resolved.push(Resolved {
            line: a.line,
            kind: a.kind,
            array: base,
            index,
            bytes: a.scalar_bytes * a.lanes,
            condition: a.condition.clone(),
            loops: a.loops.clone(),
            ends_run: false,
            bypass_l1: a.bypass_l1,
            aggregated: false,
            float: a.float,
            predicated: false,
            instructions_before: 0,
        });
    }
    // The compiled code's issue order and runs, where the SASS issues the PTX's accesses (ptxas
    // may merge some or make new ones: then PTX order, with a warning). Accesses move only
    // within their stretch of straight-line code or loop body.
    let mut order_warning = None;
    let mut dropped_warning = None;
    let mut copied_loop_run = None;
    if let Some(order) = options
        .issue_order
        .as_ref()
        .and_then(|o| o.get(&entry.name))
    {
        resolved = merge_vectorized_shared_loads(resolved, order, &shared_bytes);
        let dropped;
        (resolved, dropped) =
            drop_global_loads_not_compiled(resolved, order, &shared_bytes, &element_bytes);
        if !dropped.is_empty() && resolved.iter().all(|r| r.kind == "sync") {
            return Err(Error::new(
                source,
                format!(
                    "the compiled code of {kernel_name} issues no memory instruction (ptxas drops the PTX's {} global load(s), whose values go unused): nothing to simulate",
                    dropped.len()
                ),
            ));
        }
        if !dropped.is_empty() {
            dropped_warning = Some(format!(
                "{source}: the compiled code of {kernel_name} issues no instruction for {} global load(s) of the PTX (of {}): their values go unused, or another load of the same address serves them; simulated as compiled, without them",
                dropped.len(),
                dropped
                    .iter()
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let lines: Vec<usize> = resolved.iter().map(|r| r.line).collect();
        match issue_positions(&lines, order) {
            Some(position) => {
                copied_loop_run = copied_loop_run_length(&resolved, order, &position);
                let stretches = loop_stretches(&resolved);
                let mut keyed: Vec<(usize, Resolved)> =
                    position.into_iter().zip(resolved).collect();
                for stretch in stretches {
                    keyed[stretch].sort_by_key(|(p, _)| *p);
                }
                resolved = keyed
                    .into_iter()
                    .map(|(p, mut r)| {
                        r.ends_run = order[p].load && order[p].ends_run;
                        r.aggregated = r.kind == "atomic" && order[p].aggregated;
                        // an aggregated atomic's guard is its leader lane, not a condition
                        r.predicated = order[p].predicated && !r.aggregated;
                        if r.kind == "store" && !shared_bytes.contains_key(&r.array) {
                            r.instructions_before = order[p].instructions_before;
                        }
                        r
                    })
                    .collect();
            }
            None => {
                order_warning = Some(format!(
                    "{source}: the compiled code of {kernel_name} does not issue the accesses of the PTX one for one: its accesses go in PTX order with unbounded runs"
                ));
            }
        }
    }
    // The guard: the comparisons every access is under.
    let mut guard: Option<BTreeSet<Comparison>> = None;
    // a barrier is not an access: every thread reaches it, and a trace's guard keeps threads
    // out of nothing but accesses (a `sync` costs nothing in the simulation)
    for r in resolved.iter().filter(|r| r.kind != "sync") {
        let common = r.condition.common();
        guard = Some(match guard {
            None => common,
            Some(g) => g.intersection(&common).cloned().collect(),
        });
    }
    // not the comparisons of loop variables or trip counts: the guard is tested before any loop
    let loop_vars: BTreeSet<&str> = lifter.loops.iter().map(|l| l.var.as_str()).collect();
    let names_loop = |c: &Comparison| {
        c.lhs.atoms().iter().any(|a| {
            a.contains('\u{27ea}')
                || a.starts_with(OPAQUE)
                || a.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                    .any(|w| loop_vars.contains(w))
        })
    };
    let guard: BTreeSet<Comparison> = guard
        .unwrap_or_default()
        .into_iter()
        .filter(|c| !names_loop(c))
        .collect();
    // Each loop's trips where it stands in later indices (its count where the loop is
    // entered, 0 where skipped), with what is known around it: the guard and the entry
    // conditions of the loops it is in.
    let too_large = |line: usize| {
        Error::new(
            source,
            format!("line {line}: the loop's entry condition grows too large"),
        )
    };
    let mut trips = Vec::new();
    let mut trip_lets = Vec::new();
    // the count each loop step is written with (its trips, unparenthesised)
    let mut loop_counts = Vec::new();
    // each loop's trips where its header is reached, 0 where it is skipped (for the flops)
    let mut loop_trips = Vec::new();
    for l in &lifter.loops {
        let mut known = guard.clone();
        for &o in &l.outer {
            known.extend(lifter.loops[o].entry.common());
        }
        let residual = l.entry.without(&known).ok_or_else(|| too_large(l.line))?;
        let counts_itself = match (residual.terms.iter().next(), &l.count_poly) {
            // entered where the count is not 0: the count is 0 where it is skipped
            (Some(t), Some(p)) if residual.terms.len() == 1 && t.len() == 1 => {
                t.iter().next().is_some_and(|c| c.op == "!=" && c.lhs == *p)
            }
            _ => false,
        };
        let selected = !(residual.is_top() || counts_itself);
        let e = if selected {
            format!("({} ? {} : 0)", residual.to_expr(), l.count)
        } else {
            l.count.clone()
        };
        loop_trips.push((e.clone(), l.line));
        let plain = e.parse::<i64>().is_ok()
            || e.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
        // a top-level loop's trips that depend on its entry get a name, a thread `let`
        let (atom, count) = if plain {
            (e.clone(), e)
        } else if l.outer.is_empty() && selected {
            let name = format!("trips_{}", l.var);
            trip_lets.push(toml_string(&format!("{name} = {e}")));
            (name.clone(), name)
        } else {
            (format!("({e})"), e)
        };
        trips.push(atom);
        loop_counts.push(count);
    }
    // the trip atoms written out, the later loops' first (theirs may name earlier ones)
    let spell = |text: &str| {
        let mut text = text.to_string();
        for (l, e) in lifter.loops.iter().zip(&trips).rev() {
            text = text.replace(&l.trips, e);
        }
        text
    };
    // an access or a loop under a condition the lifter could not follow is refused
    let opaque_in = |d: &Dnf| -> Option<String> {
        d.terms.iter().flatten().find_map(|c| {
            c.lhs.atoms().iter().find_map(|a| {
                let id: usize = a
                    .strip_prefix(OPAQUE)?
                    .strip_suffix('\u{27e9}')?
                    .parse()
                    .ok()?;
                lifter.opaque.get(id).map(|(_, why)| why.clone())
            })
        })
    };
    for r in &resolved {
        if let Some(why) = opaque_in(&r.condition) {
            return Err(Error::new(
                source,
                format!(
                    "line {}: whether this {} runs cannot be lifted: {why}",
                    r.line, r.kind
                ),
            ));
        }
    }
    for l in &lifter.loops {
        if let Some(why) = opaque_in(&l.entry) {
            return Err(Error::new(
                source,
                format!(
                    "line {}: whether this loop runs cannot be lifted: {why}",
                    l.line
                ),
            ));
        }
    }
    let scalars: Vec<&String> = names
        .iter()
        .filter(|n| !pointer_params.contains(*n))
        .collect();
    // Bounds of the global indices from the guard, x < B: from `s * x + R` compared with 0,
    // with R of the parameters only; |s| > 1 (`2 * y < ny`) gives a bound `cdiv(-R, s)`, an
    // atom of the parameters only (`derived`).
    let mut derived: BTreeSet<String> = BTreeSet::new();
    let mut bounds: [Option<Poly>; 3] = [None, None, None];
    for c in &guard {
        for (d, g) in index_names.iter().enumerate() {
            let s = c.lhs.linear_coefficient(g);
            let is_param_only = |p: &Poly| p.atoms().iter().all(|a| scalars.iter().any(|s| s == a));
            if s == 0 || bounds[d].is_some() {
                continue;
            }
            let rest = c
                .lhs
                .sub(&Poly::atom(g.clone()).scale(s).unwrap_or_default())
                .unwrap_or_default();
            if !is_param_only(&rest) {
                continue;
            }
            // s * x < L (strict) or s * x <= L, with s > 0 after moving terms
            let (strict, limit, s) = match (s > 0, c.op) {
                (true, "<") => (true, rest.scale(-1), s),
                (true, "<=") => (false, rest.scale(-1), s),
                (false, ">") => (true, Some(rest), -s),
                (false, ">=") => (false, Some(rest), -s),
                _ => continue,
            };
            let Some(limit) = limit else { continue };
            bounds[d] = if s == 1 {
                if strict {
                    Some(limit)
                } else {
                    limit.add(&Poly::constant(1))
                }
            } else {
                let atom = if strict {
                    format!("cdiv({}, {s})", limit.to_expr())
                } else {
                    format!("(({}) / {s})", limit.to_expr())
                };
                derived.insert(atom.clone());
                let b = Poly::atom(atom);
                if strict {
                    Some(b)
                } else {
                    b.add(&Poly::constant(1))
                }
            };
        }
    }
    for l in &lifter.loops {
        derived.insert(l.last.clone());
    }
    let is_param_only = |p: &Poly| {
        p.atoms()
            .iter()
            .all(|a| scalars.iter().any(|s| s == a) || derived.contains(*a))
    };
    // Which dimensions the kernel's indices and conditions use.
    let mut used_atoms: BTreeSet<String> = BTreeSet::new();
    for r in &resolved {
        used_atoms.extend(r.index.atoms().iter().map(|a| a.to_string()));
        for t in &r.condition.terms {
            for c in t {
                used_atoms.extend(c.lhs.atoms().iter().map(|a| a.to_string()));
            }
        }
    }
    // an atom names `needle` as a whole word (`z`, not the `z` of `nz`)
    let mentions = |needle: &str| {
        used_atoms.iter().any(|a| {
            a.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                .any(|w| w == needle)
        })
    };
    let mut grid = Vec::new();
    for (d, dim) in DIMS.iter().enumerate() {
        if let Some(g) = options.grid.as_ref() {
            grid.push(g[d].clone());
            continue;
        }
        let uses_block = mentions(&index_names[d]) || mentions(&format!("blockIdx.{dim}"));
        grid.push(match (&bounds[d], uses_block) {
            (Some(b), true) if mentions(&index_names[d]) && !mentions(&format!("blockIdx.{dim}")) => {
                format!("cdiv({}, blockDim.{dim})", b.to_expr())
            }
            (_, false) => "1".into(),
            _ => {
                return Err(Error::new(
                    source,
                    format!(
                        "line {}: the grid's {dim} extent cannot be inferred (no guard bounds the global {dim} index by the parameters); pass --grid X,Y,Z",
                        entry.line
                    ),
                ));
            }
        });
    }
    let lattice_updates = match &options.updates {
        Some(u) => u.clone(),
        None => {
            let mut factors = Vec::new();
            for (d, dim) in DIMS.iter().enumerate() {
                let used = mentions(&index_names[d]) || mentions(&format!("blockIdx.{dim}"));
                match (&bounds[d], used) {
                    (_, false) => {}
                    (Some(b), true) if options.grid.is_none() => factors.push(b.to_operand()),
                    _ => {
                        return Err(Error::new(
                            source,
                            format!(
                                "line {}: the lattice updates cannot be inferred from the guard; pass --updates EXPR",
                                entry.line
                            ),
                        ));
                    }
                }
            }
            if factors.is_empty() {
                "1".into()
            } else {
                factors.join(" * ")
            }
        }
    };
    // Array extents: given, or the largest index any thread passing the guard reads + 1.
    let mut arrays = Vec::new();
    for (array, bytes) in &element_bytes {
        if let Some((_, given)) = options.extents.iter().find(|(n, _)| n == array) {
            arrays.push((array.clone(), *bytes, given.clone()));
            continue;
        }
        if !resolved.iter().any(|r| &r.array == array) {
            // every access to it compiled away (drop_global_loads_not_compiled)
            continue;
        }
        let mut highest: Vec<Poly> = Vec::new();
        for r in resolved.iter().filter(|r| &r.array == array) {
            // the largest index over the guarded threads: the loops' last iterations, or where
            // a grid-stride loop's test bounds the index, its first iteration and that bound
            let exact = r.index.exact();
            let tops: Vec<(Poly, bool)> = match below_its_test(&exact, &r.loops, &lifter.loops) {
                Some(tops) => tops,
                None => vec![at_last_iteration(&exact, &r.loops, &lifter.loops)],
            };
            let width = i64::from(r.bytes / element_bytes[array]).max(1);
            let mut ok = true;
            let mut candidates = Vec::new();
            for (mut top, top_ok) in tops {
                ok &= top_ok;
                for (d, g) in index_names.iter().enumerate() {
                    if !top.atoms().contains(g.as_str()) {
                        continue;
                    }
                    match &bounds[d] {
                        Some(b) => {
                            let last = b.sub(&Poly::constant(1)).unwrap_or_default();
                            ok &= at_largest(&mut top, g, &last);
                        }
                        None => ok = false,
                    }
                }
                top = top.add(&Poly::constant(width)).unwrap_or_default();
                ok &= is_param_only(&top);
                candidates.push(top);
            }
            if !ok {
                return Err(Error::new(
                    source,
                    format!(
                        "line {}: the extent of array '{array}' cannot be inferred from index {}; pass --extent {array}=EXPR (elements)",
                        r.line,
                        spell(&r.index.to_expr())
                    ),
                ));
            }
            highest.extend(candidates);
        }
        arrays.push((array.clone(), *bytes, largest(highest)));
    }
    // Emit the trace.
    let mut t = String::new();
    let _ = writeln!(
        t,
        "# Lifted by gputraffic from {source}, entry {}.",
        entry.name
    );
    let _ = writeln!(t, "name = {}", toml_string(kernel_name));
    let _ = writeln!(
        t,
        "description = {}",
        toml_string(&format!("lifted from {source}"))
    );
    let _ = writeln!(t, "\n[params]");
    let mut warnings = lifter.warnings.clone();
    warnings.extend(dropped_warning);
    warnings.extend(order_warning);
    let mut unset = Vec::new();
    for s in &scalars {
        let v = options
            .defaults
            .iter()
            .find(|(n, _)| n == *s)
            .map(|(_, v)| *v);
        if v.is_none() && !matches!(s.as_str(), "nx" | "ny" | "nz") {
            unset.push(s.to_string());
        }
        let _ = writeln!(
            t,
            "{s} = {}",
            v.unwrap_or(if matches!(s.as_str(), "nx" | "ny" | "nz") {
                256
            } else {
                0
            })
        );
    }
    if !unset.is_empty() {
        warnings.push(format!(
            "{source}: parameters {} have no value and default to 0: set them with --set NAME=VALUE (params={{\"NAME\": VALUE}} in Python)",
            unset.join(", ")
        ));
    }
    for (name, bytes, extent) in &arrays {
        let _ = writeln!(
            t,
            "\n[[arrays]]\nname = {}\nelement_bytes = {bytes}\ndims = [{}]",
            toml_string(name),
            toml_string(extent)
        );
    }
    // Shared arrays: their declared size, given, or the largest index a thread of the block
    // reaches + 1 (threadIdx at blockDim - 1, loop variables at their last value).
    for (name, bytes) in &shared_bytes {
        let (symbol, declared) = &lifter.shared_arrays[name];
        let extent = if let Some((_, given)) = options.extents.iter().find(|(n, _)| n == name) {
            given.clone()
        } else if let Some(total) = declared {
            (total / u64::from(*bytes)).to_string()
        } else {
            let mut highest: Vec<Poly> = Vec::new();
            for r in resolved.iter().filter(|r| &r.array == name) {
                let (mut top, mut ok) =
                    at_last_iteration(&r.index.exact(), &r.loops, &lifter.loops);
                for dim in DIMS {
                    let last = Poly::atom(format!("blockDim.{dim}"))
                        .sub(&Poly::constant(1))
                        .unwrap_or_default();
                    ok &= at_largest(&mut top, &format!("threadIdx.{dim}"), &last);
                }
                let width = i64::from(r.bytes / bytes).max(1);
                top = top.add(&Poly::constant(width)).unwrap_or_default();
                let allowed =
                    |a: &str| a.starts_with("blockDim.") || scalars.iter().any(|s| *s == a);
                if !ok || !top.atoms().iter().all(|a| allowed(a)) {
                    return Err(Error::new(
                        source,
                        format!(
                            "line {}: the size of the dynamic shared array '{name}' ({symbol}) cannot be inferred from index {}; pass --extent {name}=EXPR (elements)",
                            r.line,
                            spell(&r.index.to_expr())
                        ),
                    ));
                }
                highest.push(top);
            }
            largest(highest)
        };
        let _ = writeln!(
            t,
            "\n[[shared]]\nname = {}\nelement_bytes = {bytes}\ndims = [{}]",
            toml_string(name),
            toml_string(&extent)
        );
    }
    let dims_used = (0..3).rev().find(|&d| grid[d] != "1").map_or(1, |d| d + 1);
    let block = options.block.unwrap_or(match dims_used {
        1 => [256, 1, 1],
        2 => [32, 8, 1],
        _ => [32, 8, 4],
    });
    let _ = writeln!(
        t,
        "\n[launch]\nblock = [{}, {}, {}]",
        block[0], block[1], block[2]
    );
    let _ = writeln!(
        t,
        "grid = [{}]",
        grid.iter()
            .map(|g| toml_string(g))
            .collect::<Vec<_>>()
            .join(", ")
    );
    match options.registers {
        Some(r) => {
            let _ = writeln!(t, "registers_per_thread = {r}");
        }
        None => warnings.push(format!(
            "{source}: registers per thread unknown (no ptxas at hand): 32 assumed; pass --registers N"
        )),
    }
    // the runs of a loop ptxas unrolled further, where no first copy of its loads ends one
    if let Some(run) = copied_loop_run {
        let _ = writeln!(
            t,
            "# loads a warp issues back to back in the loop ptxas unrolled further (its SASS: loads over waits)"
        );
        let _ = writeln!(t, "loads_per_run = {run}");
    }
    // the code a launch fetches before it runs, as the SASS has it
    if let Some(bytes) = (options.issue_order.as_ref()).and_then(|o| o.code_bytes.get(&entry.name))
    {
        let _ = writeln!(t, "code_bytes = {bytes}");
    }
    // with its shared arrays lifted, the trace lays them out itself (ptxas's count leaves out
    // dynamic shared memory)
    if let Some(s) = options.shared_bytes
        && shared_bytes.is_empty()
    {
        let _ = writeln!(t, "shared_bytes_per_block = {s}");
    }
    let _ = writeln!(t, "\n[thread]");
    let mut lets: Vec<String> = DIMS
        .iter()
        .enumerate()
        .filter(|(d, _)| mentions(&index_names[*d]))
        .map(|(d, dim)| {
            toml_string(&format!(
                "{} = blockIdx.{dim} * blockDim.{dim} + threadIdx.{dim}",
                index_names[d]
            ))
        })
        .collect();
    lets.extend(trip_lets);
    if !lets.is_empty() {
        let _ = writeln!(t, "let = [{}]", lets.join(", "));
    }
    if !guard.is_empty() {
        let g: Vec<String> = guard.iter().map(Comparison::to_expr).collect();
        let _ = writeln!(t, "guard = {}", toml_string(&g.join(" && ")));
    }
    let _ = writeln!(t, "lattice_updates = {}", toml_string(&lattice_updates));
    let stores: Vec<(&str, &[usize])> = resolved
        .iter()
        .filter(|r| r.kind == "store" && !shared_bytes.contains_key(&r.array))
        .map(|r| (r.array.as_str(), r.loops.as_slice()))
        .collect();
    // per thread is per update unless the updates are given or a loop's trips depend on the
    // thread; then per store, where each store is an update (and the ratio exact)
    let per_thread = flops_per_thread(&lifter.flops, &loop_trips, &lifter.param_names);
    let per_store = flops_per_store(&lifter.flops, &stores, &loop_trips)
        .filter(|_| options.updates.is_some() || per_thread.is_err());
    match (per_thread, per_store) {
        (_, Some([single, double])) => {
            let _ = writeln!(
                t,
                "# floating-point operations per store of an updated point in the PTX (an FMA is two), the same in every loop"
            );
            let _ = writeln!(
                t,
                "flops_per_update = {{ fp32 = {single}, fp64 = {double} }}"
            );
        }
        (Ok(_), None) if options.updates.is_some() => warnings.push(format!(
            "{source}: the floating-point operations are not written with --updates (they are counted per thread, and are not the same per store): the time model leaves its fp limiter out; give thread.flops_per_update in the trace"
        )),
        (Ok([single, double]), None) => {
            let _ = writeln!(
                t,
                "# floating-point operations per thread in the PTX (an FMA is two), loops times their trips"
            );
            let _ = writeln!(
                t,
                "flops_per_update = {{ fp32 = {single}, fp64 = {double} }}"
            );
        }
        (Err(line), None) => warnings.push(format!(
            "{source}: line {line}: the trip count of this loop is not a constant of the launch (it depends on the thread, the block or an outer loop), and the operations are not the same per store, so the floating-point operations in it are not counted: the time model leaves its fp limiter out; give thread.flops_per_update in the trace"
        )),
    }
    if let Some(order) = options.issue_order.as_ref()
        && let Some(by_line) = order.instructions_by_line.get(&entry.name)
    {
        let memory = order.get(&entry.name).map_or(&[][..], Vec::as_slice);
        match instructions_per_warp(&lifter, by_line, memory, &loop_trips) {
            Ok(n) => {
                let _ = writeln!(
                    t,
                    "# warp instructions a warp issues: the SASS of each PTX line, loops times their trips (a block at the grid's origin)"
                );
                let _ = writeln!(t, "instructions_per_warp = {n}");
            }
            Err(line) => warnings.push(format!(
                "{source}: line {line}: the trip count of this loop is not a constant of the launch even at the grid's origin, so the instructions a warp issues are not counted: the time model leaves its issue limiter out; give thread.instructions_per_warp in the trace"
            )),
        }
    }
    let _ = writeln!(t, "body = [");
    let all: Vec<&Resolved> = resolved.iter().collect();
    let mut every_element = element_bytes.clone();
    every_element.extend(shared_bytes.iter().map(|(n, b)| (n.clone(), *b)));
    emit_steps(
        &mut t,
        &all,
        0,
        "  ",
        &guard,
        &lifter.loops,
        &loop_counts,
        &every_element,
    )
    .map_err(|line| {
        Error::new(
            source,
            format!("line {line}: the access's condition grows too large"),
        )
    })?;
    let _ = writeln!(t, "]");
    Ok(LiftedText {
        toml: spell(&t),
        warnings,
    })
}

/// Writes the steps of `items` (accesses in program order) at loop depth `depth`: each run
/// of accesses in the same loop as that loop's step (recursively), the others as accesses,
/// under an `if` of what their condition holds beyond `known`. Errs with the PTX line of an
/// access whose condition grows too large.
#[allow(clippy::too_many_arguments)]
fn emit_steps(
    t: &mut String,
    items: &[&Resolved],
    depth: usize,
    indent: &str,
    known: &BTreeSet<Comparison>,
    loops: &[FoundLoop],
    counts: &[String],
    element_bytes: &BTreeMap<String, u32>,
) -> std::result::Result<(), usize> {
    let mut i = 0;
    while i < items.len() {
        if let Some(&id) = items[i].loops.get(depth) {
            let mut end = i + 1;
            while end < items.len() && items[end].loops.get(depth) == Some(&id) {
                end += 1;
            }
            let l = &loops[id];
            let _ = writeln!(
                t,
                "{indent}{{ loop = {}, count = {}, body = [  # PTX line {}",
                toml_string(&l.var),
                toml_string(&counts[id]),
                l.line
            );
            let mut inner = known.clone();
            inner.extend(l.entry.common());
            emit_steps(
                t,
                &items[i..end],
                depth + 1,
                &format!("{indent}  "),
                &inner,
                loops,
                counts,
                element_bytes,
            )?;
            let _ = writeln!(t, "{indent}] }},");
            i = end;
            continue;
        }
        let residual = items[i].condition.without(known).ok_or(items[i].line)?;
        // An `if` is predicated where the compiled code predicates each of its accesses: the
        // accesses under one condition are cut where that changes.
        let plain = |r: &Resolved| matches!(r.kind, "load" | "store" | "atomic");
        let predicated = |r: &Resolved| plain(r) && r.predicated;
        let first_predicated = predicated(items[i]);
        let mut j = i + 1;
        while j < items.len()
            && items[j].loops.len() == depth
            && items[j].condition.without(known).as_ref() == Some(&residual)
            && (residual.is_top() || predicated(items[j]) == first_predicated)
        {
            j += 1;
        }
        let inner_indent = if residual.is_top() {
            indent.to_string()
        } else {
            let _ = writeln!(
                t,
                "{indent}{{ if = {}{}, body = [",
                toml_string(&residual.to_expr()),
                if first_predicated {
                    ", predicated = true"
                } else {
                    ""
                }
            );
            format!("{indent}  ")
        };
        for r in &items[i..j] {
            if r.kind == "sync" {
                let _ = writeln!(t, "{inner_indent}{{ sync = true }},  # PTX line {}", r.line);
                continue;
            }
            if r.kind == "shuffle" {
                let _ = writeln!(
                    t,
                    "{inner_indent}{{ shuffles = 1 }},  # PTX line {}",
                    r.line
                );
                continue;
            }
            let mut access = format!(
                "{{ {} = {}, index = {}",
                r.kind,
                toml_string(&r.array),
                toml_string(&r.index.to_expr())
            );
            if r.bytes != element_bytes[&r.array] {
                let _ = write!(access, ", bytes = {}", r.bytes);
            }
            if r.ends_run {
                access.push_str(", ends_run = true");
            }
            if r.bypass_l1 {
                access.push_str(", bypass_l1 = true");
            }
            if r.aggregated {
                access.push_str(", aggregated = true");
            }
            if r.float {
                access.push_str(", float = true");
            }
            if r.instructions_before > 0 {
                let _ = write!(access, ", instructions_before = {}", r.instructions_before);
            }
            let _ = writeln!(t, "{inner_indent}{access} }},  # PTX line {}", r.line);
        }
        if !residual.is_top() {
            let _ = writeln!(t, "{indent}] }},");
        }
        i = j;
    }
    Ok(())
}

/// `index` with the variables of `loops` (indices into `all`, outermost first) at their last
/// values, and whether it grows with each of them (else its largest value is not there).
fn at_last_iteration(index: &Poly, loops: &[usize], all: &[FoundLoop]) -> (Poly, bool) {
    let mut top = index.clone();
    let mut ok = true;
    for l in loops.iter().rev().map(|&i| &all[i]) {
        let last = l
            .last
            .parse::<i64>()
            .map_or_else(|_| Poly::atom(l.last.clone()), Poly::constant);
        ok &= at_largest(&mut top, &l.var, &last);
    }
    (top, ok)
}

/// Where the innermost loop around an access is a grid-stride loop whose test bounds it
/// ([`FoundLoop::below`]: it goes on while `s * k + t < 0`) and the index is `s * k + q`: the
/// index at the first iteration, `q`, and its bound after it, `s + q - t - 1` (the back edge
/// before iteration `k` passed `s * (k - 1) + t < 0`), each at the outer loops' last
/// iterations, with whether each grows with them. `None` for any other access.
fn below_its_test(index: &Poly, loops: &[usize], all: &[FoundLoop]) -> Option<Vec<(Poly, bool)>> {
    let (&inner, outer) = loops.split_last()?;
    let l = &all[inner];
    let (s, t) = l.below.as_ref()?;
    let q = index.substitute(&l.var, &Poly::constant(0))?;
    // the index is exactly s * k + q
    if index.sub(&q)? != Poly::atom(l.var.clone()).mul(s)? {
        return None;
    }
    let after_first = s.add(&q)?.sub(t)?.sub(&Poly::constant(1))?;
    Some(vec![
        at_last_iteration(&q, outer, all),
        at_last_iteration(&after_first, outer, all),
    ])
}

/// Puts `last`, the largest value of `atom`, into `top`; whether `top` grows with `atom` (every
/// term holding it has a positive coefficient), so that this is where `top` is largest.
fn at_largest(top: &mut Poly, atom: &str, last: &Poly) -> bool {
    let grows = top
        .terms
        .iter()
        .all(|(m, c)| !m.iter().any(|a| a == atom) || *c > 0);
    *top = top.substitute(atom, last).unwrap_or_default();
    grows
}

/// The largest of several bounds as a trace expression: a bound another one dominates (their
/// difference has no negative coefficient) dropped, the rest joined by `max(…)`.
fn largest(mut highest: Vec<Poly>) -> String {
    highest.sort();
    highest.dedup();
    let kept: Vec<&Poly> = highest
        .iter()
        .filter(|p| {
            !highest
                .iter()
                .any(|q| q != *p && q.sub(p).is_some_and(|d| d.terms.values().all(|c| *c >= 0)))
        })
        .collect();
    kept.iter().skip(1).fold(kept[0].to_expr(), |acc, p| {
        format!("max({acc}, {})", p.to_expr())
    })
}

/// Where each access (by PTX line) stands in the compiled code's issue order, when the two
/// cover the same accesses: every PTX access issued, and nothing issued that the PTX does not
/// access. Where ptxas copies an access (unrolling a loop further), its first copy's place
/// stands for all: the order within one iteration of the PTX's body.
fn issue_positions(lines: &[usize], order: &[super::sass::Issued]) -> Option<Vec<usize>> {
    let mut at: HashMap<usize, usize> = HashMap::new();
    for (p, issued) in order.iter().enumerate() {
        at.entry(issued.line).or_insert(p);
    }
    let positions: Option<Vec<usize>> = lines.iter().map(|l| at.get(l).copied()).collect();
    let positions = positions?;
    let distinct: BTreeSet<usize> = positions.iter().copied().collect();
    (distinct.len() == lines.len() && at.len() == lines.len()).then_some(positions)
}

/// `resolved` without the global loads for which the compiled code issues no instruction, and
/// those loads' arrays, in PTX order (one name per load). ptxas drops a load whose value goes
/// unused (a sum an empty `asm` takes, a result stored only by the lanes it keeps) and one of an
/// address another load of the same instruction stream already loads; the GPU issues neither,
/// so neither is simulated (`validation/replay_stores.cu`'s `rK_none` and `rK_indep1`: the PTX's
/// K loads a thread, none in the SASS, none counted by the H100). A load that a wider issued load
/// of the same array, loop and condition covers (ptxas vectorizing `a[i]`, `a[i + 1]` into one
/// `LDG.64`) is kept: its bytes are loaded, by the wider instruction.
fn drop_global_loads_not_compiled(
    resolved: Vec<Resolved>,
    order: &[super::sass::Issued],
    shared_bytes: &BTreeMap<String, u32>,
    element_bytes: &BTreeMap<String, u32>,
) -> (Vec<Resolved>, Vec<String>) {
    let issued: HashSet<usize> = order.iter().map(|o| o.line).collect();
    let width = widest_by_line(order, |o| o.load);
    let global_load = |r: &Resolved| r.kind == "load" && !shared_bytes.contains_key(&r.array);
    let covered = |r: &Resolved| {
        let element = element_bytes.get(&r.array).copied().unwrap_or(1);
        resolved.iter().any(|q| {
            let w = width.get(&q.line).copied().unwrap_or(0);
            global_load(q) && issued.contains(&q.line) && w > r.bytes && covers(q, r, w, element)
        })
    };
    let not_compiled: Vec<bool> = resolved
        .iter()
        .map(|r| global_load(r) && !issued.contains(&r.line) && !covered(r))
        .collect();
    let mut dropped = Vec::new();
    let mut kept = Vec::with_capacity(resolved.len());
    for (r, gone) in resolved.into_iter().zip(not_compiled) {
        if gone {
            dropped.push(r.array);
        } else {
            kept.push(r);
        }
    }
    (kept, dropped)
}

/// The widest access of `bytes` each PTX line compiles to, over the issued instructions `which`
/// selects.
fn widest_by_line(
    order: &[super::sass::Issued],
    which: impl Fn(&super::sass::Issued) -> bool,
) -> HashMap<usize, u32> {
    let mut width: HashMap<usize, u32> = HashMap::new();
    for o in order.iter().filter(|o| which(o)) {
        let w = width.entry(o.line).or_default();
        *w = (*w).max(u32::from(o.bytes));
    }
    width
}

/// Whether a load `q` compiled `width` bytes wide covers `r`: the same array, loops and
/// condition, `r` a whole number of `element`-byte elements past `q`'s start and its bytes
/// within `q`'s (ptxas merging `a[i]`, `a[i + 1]` into one wider load tagged with `a[i]`'s line).
fn covers(q: &Resolved, r: &Resolved, width: u32, element: u32) -> bool {
    let offset = r.index.sub(&q.index).and_then(|d| d.as_constant());
    q.array == r.array
        && q.loops == r.loops
        && q.condition == r.condition
        && offset.is_some_and(|d| {
            d > 0 && d * i64::from(element) + i64::from(r.bytes) <= i64::from(width)
        })
}

/// `resolved` with the shared loads ptxas merged into a wider one folded into it: a shared
/// load the SASS does not issue, a few words past one of the same array, loop and condition
/// whose `LDS.64` or `LDS.128` (tagged with that load's line) covers it, is dropped and the wider
/// load takes the SASS's width (the tiled matrix product's `as[ty][k]` … `as[ty][k + 3]`, four
/// broadcast words a lane, are one `LDS.128`: 2 wavefronts by the bank rule where four loads
/// take 4). Shared accesses only: their wavefronts follow the width, and nothing else sees
/// them.
fn merge_vectorized_shared_loads(
    mut resolved: Vec<Resolved>,
    order: &[super::sass::Issued],
    shared_bytes: &BTreeMap<String, u32>,
) -> Vec<Resolved> {
    let width = widest_by_line(order, |o| !o.load && o.bytes > 0);
    let issued: HashSet<usize> = order.iter().map(|o| o.line).collect();
    let shared_load = |r: &Resolved| r.kind == "load" && shared_bytes.contains_key(&r.array);
    let mut merged = vec![false; resolved.len()];
    for i in 0..resolved.len() {
        if !shared_load(&resolved[i]) || issued.contains(&resolved[i].line) {
            continue;
        }
        let r = &resolved[i];
        let element = shared_bytes[&r.array];
        let covering = (0..resolved.len()).find(|&j| {
            let q = &resolved[j];
            let w = width.get(&q.line).copied().unwrap_or(0);
            !merged[j] && shared_load(q) && w > element && covers(q, r, w, element)
        });
        if let Some(j) = covering {
            merged[i] = true;
            resolved[j].bytes = width[&resolved[j].line];
        }
    }
    let mut keep = merged.iter().map(|m| !m);
    resolved.retain(|_| keep.next().unwrap());
    resolved
}

/// The stretches of `resolved` (in program order) whose accesses sit in the same loops: straight-line
/// code or one loop body, within which the SASS may reorder accesses.
fn loop_stretches(resolved: &[Resolved]) -> Vec<std::ops::Range<usize>> {
    let mut stretches = Vec::new();
    let mut start = 0;
    while start < resolved.len() {
        let loops = &resolved[start].loops;
        let end = (start..resolved.len())
            .find(|&i| resolved[i].loops != *loops)
            .unwrap_or(resolved.len());
        stretches.push(start..end);
        start = end;
    }
    stretches
}

/// The loads a warp issues back to back in a loop that ptxas unrolled further, where the
/// accesses' first copies, which give the lifted loop its order and marks, mark no wait in it
/// and no store or shared access in its body ends a run at each trip:
/// the loop's loads in the SASS (every copy) over the waits among them, rounded up, the least
/// over such loops. Without it the lifted loop's loads would go as one run across all its trips
/// (a naive matrix product's 2n loads a thread), which no warp can issue: its registers run out
/// and the compiled loop waits (ptxas 13 unrolls the naive product's k loop by 16, 32 loads in two
/// runs). `None` where every loop marks its waits or none waits in the SASS either.
/// `position`: each access's place in `order`, as [`issue_positions`] gives it.
fn copied_loop_run_length(
    resolved: &[Resolved],
    order: &[super::sass::Issued],
    position: &[usize],
) -> Option<u32> {
    let mut least: Option<u32> = None;
    for stretch in loop_stretches(resolved) {
        if resolved[stretch.start].loops.is_empty() {
            continue;
        }
        let load_lines: HashSet<usize> = (stretch.clone())
            .filter(|&i| order[position[i]].load)
            .map(|i| resolved[i].line)
            .collect();
        // a store or shared access in the body already ends a run each trip
        let bounded = stretch.clone().any(|i| !order[position[i]].load);
        let marked = stretch.clone().any(|i| order[position[i]].ends_run);
        if load_lines.is_empty() || bounded || marked {
            continue;
        }
        let copies = order
            .iter()
            .filter(|o| o.load && load_lines.contains(&o.line));
        let (loads, waits) = copies.fold((0u32, 0u32), |(l, w), o| (l + 1, w + o.ends_run as u32));
        if waits > 0 {
            let run = loads.div_ceil(waits);
            least = Some(least.map_or(run, |r: u32| r.min(run)));
        }
    }
    least
}

/// `s` as a TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
