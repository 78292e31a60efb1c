//! Symbolic evaluation of one PTX entry into a kernel trace: every register's integer value as
//! a polynomial over threadIdx / blockIdx / blockDim / gridDim and the parameters, every
//! predicate as a formula over comparisons, the forward control flow as the condition under
//! which each block runs, straight-line counted loops by their induction variables and trip
//! count, and every global access with its address and condition. The result
//! is written as trace TOML (one path: what `lift` prints is what `simulate` reads).

use super::LiftOptions;
use super::parse::{Entry, Instruction, StatementKind};
use super::symbolic::{Comparison, Dnf, Poly};
use crate::error::{Error, Result};
use std::collections::{BTreeMap, BTreeSet, HashMap};
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

/// One global memory instruction found in the entry.
#[derive(Debug, Clone)]
struct FoundAccess {
    line: usize,
    kind: &'static str,
    address: Poly,
    scalar_bytes: u32,
    lanes: u32,
    condition: Dnf,
    /// The loop (index into `Lifter::loops`) the access is in.
    in_loop: Option<usize>,
}

/// A counted loop found in the entry.
#[derive(Debug, Clone)]
struct FoundLoop {
    /// The loop variable's name (`k`, `k1`, …).
    var: String,
    /// The trip count, a trace expression.
    count: String,
    /// The largest value of the loop variable, an atom of the parameters (for extents).
    last: String,
}

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
    flops: u64,
    /// The counted loops, in program order.
    loops: Vec<FoundLoop>,
    /// The loop whose body is being evaluated.
    current_loop: Option<usize>,
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
        let body = &self.entry.body;
        let labels: HashMap<&str, usize> = body
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match &s.kind {
                StatementKind::Label(l) => Some((l.as_str(), i)),
                _ => None,
            })
            .collect();
        let mut state = State {
            regs: HashMap::new(),
            reached: Dnf::top(),
        };
        // paths still to join at each label: (condition, registers)
        let mut pending: HashMap<usize, Vec<State>> = HashMap::new();
        // loop headers: the label a later `bra` jumps back to, and that branch
        let mut back_edges: HashMap<usize, usize> = HashMap::new();
        for (at, st) in body.iter().enumerate() {
            if let StatementKind::Instruction(ins) = &st.kind
                && ins.opcode[0] == "bra"
                && let Some(&to) = ins.operands.first().and_then(|t| labels.get(t.as_str()))
                && to <= at
                && back_edges.insert(to, at).is_some()
            {
                return Err(self.err(st.line, "a loop with several back edges is not lifted yet"));
            }
        }
        let mut next = 0;
        while next < body.len() {
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
                    if let Some(&back) = back_edges.get(&at) {
                        if !state.reached.terms.is_empty() {
                            self.counted_loop(&mut state, at, back)?;
                        }
                        next = back + 1; // on after the back edge: the loop's exit
                    }
                }
                StatementKind::Instruction(ins) => {
                    if state.reached.terms.is_empty() {
                        continue; // unreachable code (after a `ret` or an unconditional `bra`)
                    }
                    if ins.opcode[0] == "bra" {
                        let target = ins
                            .operands
                            .first()
                            .ok_or_else(|| self.err(line, "`bra` without a target"))?;
                        let &to = labels
                            .get(target.as_str())
                            .ok_or_else(|| self.err(line, format!("unknown label '{target}'")))?;
                        if to <= at {
                            return Err(self.err(
                                line,
                                format!(
                                    "a loop (backward branch to {target}) is not lifted yet: write this kernel's trace by hand (docs/trace-format.md, `loop`)"
                                ),
                            ));
                        }
                        let taken = self.predicate_of(&state, ins, line)?;
                        let mut branch = state.clone();
                        branch.reached = state.reached.and(&taken).ok_or_else(|| {
                            self.err(line, "the branch condition grows too large")
                        })?;
                        state.reached = state
                            .reached
                            .and(&taken.not().ok_or_else(|| {
                                self.err(line, "the branch condition grows too large")
                            })?)
                            .ok_or_else(|| {
                                self.err(line, "the branch condition grows too large")
                            })?;
                        pending.entry(to).or_default().push(branch);
                        continue;
                    }
                    if matches!(ins.opcode[0].as_str(), "ret" | "exit") {
                        let taken = self.predicate_of(&state, ins, line)?;
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
        Ok(())
    }

    /// A counted loop from the header label at `header` to its back edge at `back`: a body of
    /// straight-line code whose registers either step by a loop-invariant amount per iteration
    /// (induction variables, `start + k * step`) or are recomputed, and a back edge whose
    /// condition is a comparison affine in the iteration `k`, from which the trip count follows.
    /// The body's accesses are recorded inside the loop; `state` becomes the loop's exit.
    fn counted_loop(&mut self, state: &mut State, header: usize, back: usize) -> Result<()> {
        let body = &self.entry.body;
        let header_line = body[header].line;
        let mut instructions = Vec::new();
        for st in &body[header + 1..back] {
            match &st.kind {
                StatementKind::Instruction(ins)
                    if matches!(ins.opcode[0].as_str(), "bra" | "ret" | "exit") =>
                {
                    return Err(self.err(
                        st.line,
                        format!("a branch inside the loop at line {header_line} is not lifted yet (only straight-line loop bodies are)"),
                    ));
                }
                StatementKind::Instruction(ins) => instructions.push((st.line, ins)),
                StatementKind::Label(_) => {
                    return Err(self.err(
                        st.line,
                        format!("a label inside the loop at line {header_line} is not lifted yet (only straight-line loop bodies are)"),
                    ));
                }
                StatementKind::Directive(_) => {}
            }
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
        // the registers the body writes
        let mut written: BTreeSet<String> = BTreeSet::new();
        for (_, ins) in &instructions {
            if matches!(ins.opcode[0].as_str(), "st" | "red") {
                continue;
            }
            if let Some(d) = ins.operands.first() {
                for r in d.trim_matches(['{', '}']).split(['|', ',']) {
                    written.insert(r.trim().to_string());
                }
            }
        }
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
        let (kept_accesses, kept_flops, kept_warnings) =
            (self.accesses.len(), self.flops, self.warnings.len());
        for (line, ins) in &instructions {
            self.instruction(&mut probe, ins, *line)?;
        }
        self.accesses.truncate(kept_accesses);
        self.flops = kept_flops;
        self.warnings.truncate(kept_warnings);
        let var = if self.loops.is_empty() {
            "k".to_string()
        } else {
            format!("k{}", self.loops.len())
        };
        let k = Poly::atom(var.clone());
        let mut iteration = state.clone();
        for r in &written {
            let why = || {
                Val::Unknown(format!(
                    "{r} changes from one iteration to the next of the loop at line {header_line} in a way the lifter does not follow"
                ))
            };
            let value = match (state.regs.get(r), probe.regs.get(r)) {
                (Some(Val::Int(start)), Some(Val::Int(end))) => {
                    let step = end.sub(&Poly::atom(placeholder(r)));
                    match step {
                        Some(step) if !step.atoms().iter().any(|a| a.contains('\u{27e8}')) => {
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
        // pass 2: the body at iteration k, its accesses recorded in the loop
        let id = self.loops.len();
        self.current_loop = Some(id);
        for (line, ins) in &instructions {
            self.instruction(&mut iteration, ins, *line)?;
        }
        self.current_loop = None;
        let again = self
            .predicate_of(&iteration, back_edge, back_line)
            .map_err(|e| {
                self.err(
                    back_line,
                    format!("the loop's trip count cannot be lifted: {}", e.message),
                )
            })?;
        let comparisons: Vec<&Comparison> = again.terms.iter().flatten().collect();
        let unsupported = || {
            self.err(
                back_line,
                format!("the loop's exit condition ({}) is not one comparison affine in the iteration; its trip count cannot be lifted", again.to_expr()),
            )
        };
        let [c] = comparisons.as_slice() else {
            return Err(unsupported());
        };
        if again.terms.len() != 1 {
            return Err(unsupported());
        }
        let a = c.lhs.linear_coefficient(&var);
        let rest = c
            .lhs
            .sub(&k.scale(a).unwrap_or_default())
            .ok_or_else(unsupported)?;
        if a == 0 || rest.atoms().contains(var.as_str()) {
            return Err(unsupported());
        }
        // the first iteration k >= 0 whose test fails is the last one run
        let neg = rest.scale(-1).ok_or_else(unsupported)?;
        let plus_one = |p: &Poly| p.add(&Poly::constant(1)).map(|q| q.to_expr());
        let last = match (a, c.op) {
            (1, "<") => Some(neg.to_expr()),
            (1, "<=") => plus_one(&neg),
            (-1, ">") => Some(rest.to_expr()),
            (-1, ">=") => plus_one(&rest),
            (1, "!=") => Some(neg.to_expr()),
            (-1, "!=") => Some(rest.to_expr()),
            (a, "<") if a > 0 => Some(format!("cdiv({}, {a})", neg.to_expr())),
            (a, "<=") if a > 0 => Some(format!("({}) / {a} + 1", neg.to_expr())),
            (a, ">") if a < 0 => Some(format!("cdiv({}, {})", rest.to_expr(), -a)),
            (a, ">=") if a < 0 => Some(format!("({}) / {} + 1", rest.to_expr(), -a)),
            _ => None,
        }
        .ok_or_else(unsupported)?;
        let last = match last.parse::<i64>() {
            Ok(n) => n.max(0).to_string(),
            Err(_) => format!("max(0, {last})"),
        };
        let count = match last.parse::<i64>() {
            Ok(n) => (n + 1).to_string(),
            Err(_) => format!("{last} + 1"),
        };
        self.loops.push(FoundLoop { var, count, last });
        // after the loop, what the body changed is not followed
        for r in &written {
            state.regs.insert(
                r.clone(),
                Val::Unknown(format!("{r} is used after the loop at line {header_line}")),
            );
        }
        Ok(())
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
            joined.reached = joined
                .reached
                .or(&other.reached)
                .ok_or_else(|| self.err(line, "the control flow's conditions grow too large"))?;
            for (reg, v) in &other.regs {
                match joined.regs.get(reg) {
                    None => {
                        joined.regs.insert(reg.clone(), v.clone());
                    }
                    Some(mine) if mine != v => {
                        joined.regs.insert(
                            reg.clone(),
                            Val::Unknown(format!(
                                "{reg} takes different values on the paths that meet at {label} (line {line})"
                            )),
                        );
                    }
                    Some(_) => {}
                }
            }
        }
        Ok(joined)
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
                return self.global_access(state, ins, line);
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
            "ld" | "st" | "atom" | "red" if has("shared") => {
                self.warnings.push(format!(
                    "{}: line {line}: a shared-memory access is not lifted (write it into the trace as a [[shared]] access)",
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
                self.flops += if matches!(op, "fma" | "mad") { 2 } else { 1 };
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
            && let Some((m, 1)) = p
                .terms
                .iter()
                .next()
                .filter(|_| p.terms.len() == 1)
                .map(|(m, c)| (m, *c))
            && m.len() == 1
        {
            self.pointers.insert(m[0].clone());
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
                        return Ok(Val::Pred(self.pred(state, src(1), line)?));
                    }
                    self.operand(state, src(1), line)
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
                    let mut p = int(1)?.mul(&int(2)?).ok_or_else(overflow)?;
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
                    Val::Int(a.exact_div(1 << k).unwrap_or_else(|| {
                        Poly::atom(format!("({} / {})", a.to_operand(), 1i64 << k))
                    }))
                }
                "div" | "rem" => {
                    let (a, b) = (int(1)?, int(2)?);
                    let sym = if op == "div" { "/" } else { "%" };
                    match (op, b.as_constant()) {
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
                    // a mask of low bits is a floor modulo (for negative values too)
                    let (a, b) = (int(1)?, int(2)?);
                    match b.as_constant().or(a.as_constant()) {
                        Some(m) if m > 0 && (m + 1) & m == 0 => {
                            let x = if b.as_constant().is_some() { a } else { b };
                            Val::Int(Poly::atom(format!("({} % {})", x.to_operand(), m + 1)))
                        }
                        _ => {
                            return Err(format!(
                                "`and` with a value that is not a low-bit mask (line {line}) is not lifted"
                            ));
                        }
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
    fn global_access(&mut self, state: &mut State, ins: &Instruction, line: usize) -> Result<()> {
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
        self.accesses.push(FoundAccess {
            line,
            kind,
            address,
            scalar_bytes,
            lanes,
            condition,
            in_loop: self.current_loop,
        });
        if op != "st" && op != "red" {
            let v = Val::Unknown(format!("it depends on the value loaded at line {line}"));
            let dest = ins.operands[0].clone();
            self.set(state, ins, &dest, v, line)?;
        }
        Ok(())
    }
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

/// A trace-language name for parameter `i` (`p0`, …) unless the source gave one.
fn param_name(i: usize, given: Option<&String>) -> String {
    given.cloned().unwrap_or_else(|| format!("p{i}"))
}

/// Lifts `entry` (of the file `source`) into trace TOML named `kernel_name`.
pub fn lift_entry(
    entry: &Entry,
    source: &str,
    kernel_name: &str,
    options: &LiftOptions,
) -> Result<LiftedText> {
    let names: Vec<String> = (0..entry.params.len())
        .map(|i| param_name(i, options.param_names.get(i)))
        .collect();
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
        flops: 0,
        loops: Vec::new(),
        current_loop: None,
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
    struct Resolved {
        line: usize,
        kind: &'static str,
        array: String,
        index: Poly,
        bytes: u32,
        condition: Dnf,
        in_loop: Option<usize>,
    }
    let mut element_bytes: BTreeMap<String, u32> = BTreeMap::new();
    for a in &lifter.accesses {
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
        let base = pointer_params
            .iter()
            .find(|p| a.address.linear_coefficient(p) == 1)
            .cloned()
            .unwrap_or_default();
        let offset = a.address.sub(&Poly::atom(base.clone())).unwrap_or_default();
        let e = element_bytes[&base];
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
            in_loop: a.in_loop,
        });
    }
    // The guard: the comparisons every access is under.
    let mut guard: Option<BTreeSet<Comparison>> = None;
    for r in &resolved {
        let common = r.condition.common();
        guard = Some(match guard {
            None => common,
            Some(g) => g.intersection(&common).cloned().collect(),
        });
    }
    let guard = guard.unwrap_or_default();
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
        let mut highest: Vec<Poly> = Vec::new();
        for r in resolved.iter().filter(|r| &r.array == array) {
            let mut top = r.index.clone();
            let mut ok = true;
            // a loop variable at its last value (indices grow with it)
            if let Some(l) = r.in_loop.map(|i| &lifter.loops[i]) {
                ok &= top.terms.iter().all(|(m, c)| !m.contains(&l.var) || *c > 0);
                let last = l
                    .last
                    .parse::<i64>()
                    .map_or_else(|_| Poly::atom(l.last.clone()), Poly::constant);
                top = top.substitute(&l.var, &last).unwrap_or_default();
            }
            for (d, g) in index_names.iter().enumerate() {
                if !top.atoms().contains(g.as_str()) {
                    continue;
                }
                ok &= top.terms.iter().all(|(m, c)| !m.contains(g) || *c > 0);
                match &bounds[d] {
                    Some(b) => {
                        top = top
                            .substitute(g, &b.sub(&Poly::constant(1)).unwrap_or_default())
                            .unwrap_or_default();
                    }
                    None => ok = false,
                }
            }
            let width = i64::from(r.bytes / element_bytes[array]).max(1);
            top = top.add(&Poly::constant(width)).unwrap_or_default();
            if !ok || !is_param_only(&top) {
                return Err(Error::new(
                    source,
                    format!(
                        "line {}: the extent of array '{array}' cannot be inferred from index {}; pass --extent {array}=EXPR (elements)",
                        r.line,
                        r.index.to_expr()
                    ),
                ));
            }
            highest.push(top);
        }
        highest.sort();
        highest.dedup();
        // drop a bound another one dominates (their difference has no negative coefficient)
        let kept: Vec<&Poly> = highest
            .iter()
            .filter(|p| {
                !highest
                    .iter()
                    .any(|q| q != *p && q.sub(p).is_some_and(|d| d.terms.values().all(|c| *c >= 0)))
            })
            .collect();
        let extent = kept.iter().skip(1).fold(kept[0].to_expr(), |acc, p| {
            format!("max({acc}, {})", p.to_expr())
        });
        arrays.push((array.clone(), *bytes, extent));
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
            "{source}: parameters {} have no value and default to 0: set them with --set NAME=VALUE",
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
    if let Some(s) = options.shared_bytes {
        let _ = writeln!(t, "shared_bytes_per_block = {s}");
    }
    let _ = writeln!(t, "\n[thread]");
    let lets: Vec<String> = DIMS
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
    if !lets.is_empty() {
        let _ = writeln!(t, "let = [{}]", lets.join(", "));
    }
    if !guard.is_empty() {
        let g: Vec<String> = guard.iter().map(Comparison::to_expr).collect();
        let _ = writeln!(t, "guard = {}", toml_string(&g.join(" && ")));
    }
    let _ = writeln!(t, "lattice_updates = {}", toml_string(&lattice_updates));
    if options.updates.is_none() && lifter.loops.is_empty() {
        let _ = writeln!(t, "# floating-point operations in the PTX (an FMA is two)");
        let _ = writeln!(t, "flops_per_update = {}", lifter.flops);
    }
    let _ = writeln!(t, "body = [");
    let mut i = 0;
    while i < resolved.len() {
        // a loop's accesses together, inside its step
        let in_loop = resolved[i].in_loop;
        let mut end = i + 1;
        while end < resolved.len() && resolved[end].in_loop == in_loop {
            end += 1;
        }
        let outer = if let Some(l) = in_loop.map(|id| &lifter.loops[id]) {
            let _ = writeln!(
                t,
                "  {{ loop = {}, count = {}, body = [",
                toml_string(&l.var),
                toml_string(&l.count)
            );
            "  "
        } else {
            ""
        };
        while i < end {
            let residual = resolved[i].condition.without(&guard).ok_or_else(|| {
                Error::new(
                    source,
                    format!(
                        "line {}: the access's condition grows too large",
                        resolved[i].line
                    ),
                )
            })?;
            let mut j = i + 1;
            while j < end && resolved[j].condition.without(&guard).as_ref() == Some(&residual) {
                j += 1;
            }
            let indent = if residual.is_top() {
                format!("{outer}  ")
            } else {
                let _ = writeln!(
                    t,
                    "{outer}  {{ if = {}, body = [",
                    toml_string(&residual.to_expr())
                );
                format!("{outer}    ")
            };
            for r in &resolved[i..j] {
                let mut access = format!(
                    "{{ {} = {}, index = {}",
                    r.kind,
                    toml_string(&r.array),
                    toml_string(&r.index.to_expr())
                );
                if r.bytes != element_bytes[&r.array] {
                    let _ = write!(access, ", bytes = {}", r.bytes);
                }
                let _ = writeln!(t, "{indent}{access} }},  # PTX line {}", r.line);
            }
            if !residual.is_top() {
                let _ = writeln!(t, "{outer}  ] }},");
            }
            i = j;
        }
        if in_loop.is_some() {
            let _ = writeln!(t, "  ] }},");
        }
    }
    let _ = writeln!(t, "]");
    Ok(LiftedText { toml: t, warnings })
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
