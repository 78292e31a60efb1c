//! Compilation: names resolved to constants, slots or inlined expressions, constants folded,
//! then either the [`Affine`] form or a [`GeneralProgram`], a flat postfix bytecode.

use super::arith::{Arith, abs, neg, wrap32};
use super::{
    BinaryOp, EvalError, Expr, Func, MAX_COMPILE_DEPTH, MAX_COMPILE_NODES, MAX_INLINE_DEPTH,
    MAX_SLOTS, UnaryOp,
};

// ---------------------------------------------------------------------------
// Affine form
// ---------------------------------------------------------------------------

/// Affine form: `value = c0 + sum_i coef[i] * slot[i]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Affine {
    /// Constant term.
    pub c0: i64,
    /// Coefficient of each slot.
    pub coef: [i64; MAX_SLOTS],
}

impl Affine {
    /// The constant `c0`.
    pub fn constant(c0: i64) -> Self {
        Affine {
            c0,
            coef: [0; MAX_SLOTS],
        }
    }

    /// The value of slot `slot` (coefficient 1). Panics if `slot >= MAX_SLOTS`.
    pub fn slot(slot: usize) -> Self {
        let mut a = Affine::constant(0);
        a.coef[slot] = 1;
        a
    }

    /// Whether every slot coefficient is zero.
    #[inline]
    pub fn is_constant(&self) -> bool {
        self.coef.iter().all(|&c| c == 0)
    }

    fn zip_with(&self, other: &Affine, f: impl Fn(i64, i64) -> Option<i64>) -> Option<Affine> {
        let mut out = Affine::constant(f(self.c0, other.c0)?);
        for i in 0..MAX_SLOTS {
            out.coef[i] = f(self.coef[i], other.coef[i])?;
        }
        Some(out)
    }

    fn checked_scale(&self, k: i64) -> Option<Affine> {
        self.zip_with(&Affine::constant(0), |a, _| a.checked_mul(k))
    }
}

// ---------------------------------------------------------------------------
// Compilation
// ---------------------------------------------------------------------------

/// What a name means when compiling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Binding<'a> {
    /// A known constant.
    Const(i64),
    /// A free variable read from slot `i` (must be below [`MAX_SLOTS`]).
    Slot(usize),
    /// Another expression, substituted in place of the name.
    Inline(&'a Expr),
}

/// Resolved, folded tree used during compilation.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    Const(i64),
    Slot(usize),
    /// Evaluating this node always raises the error.
    Fail(EvalError),
    Neg(Box<Node>),
    Not(Box<Node>),
    Abs(Box<Node>),
    Bin(Arith, Box<Node>, Box<Node>),
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Cond(Box<Node>, Box<Node>, Box<Node>),
    /// `i32(a)` (signed) or `u32(a)`: wrap around to 32 bits.
    Wrap(bool, Box<Node>),
}

impl Node {
    fn from_result(r: Result<i64, EvalError>) -> Node {
        match r {
            Ok(v) => Node::Const(v),
            Err(e) => Node::Fail(e),
        }
    }

    /// Evaluating this node can never produce an error (given enough slots).
    fn is_infallible(&self) -> bool {
        match self {
            Node::Const(_) | Node::Slot(_) => true,
            Node::Fail(_) | Node::Neg(_) | Node::Abs(_) => false,
            Node::Not(a) | Node::Wrap(_, a) => a.is_infallible(),
            Node::Bin(op, a, b) => op.is_infallible() && a.is_infallible() && b.is_infallible(),
            Node::And(a, b) | Node::Or(a, b) => a.is_infallible() && b.is_infallible(),
            Node::Cond(c, a, b) => c.is_infallible() && a.is_infallible() && b.is_infallible(),
        }
    }

    /// Always yields 0 or 1.
    fn is_boolean(&self) -> bool {
        match self {
            Node::Const(c) => *c == 0 || *c == 1,
            Node::Not(_) | Node::And(..) | Node::Or(..) => true,
            Node::Bin(op, ..) => op.is_boolean(),
            _ => false,
        }
    }

    fn unary(kind: UnaryOp, a: Node) -> Node {
        match (kind, a) {
            (_, f @ Node::Fail(_)) => f,
            (UnaryOp::Neg, Node::Const(v)) => Node::from_result(neg(v)),
            (UnaryOp::Not, Node::Const(v)) => Node::Const(i64::from(v == 0)),
            (UnaryOp::Neg, a) => Node::Neg(Box::new(a)),
            (UnaryOp::Not, a) => Node::Not(Box::new(a)),
        }
    }

    /// `i32(a)` / `u32(a)`, dropped where `a` provably lies in the target range over the
    /// slots' `bounds` (so the common case stays affine and costs nothing).
    fn wrap(signed: bool, a: Node, bounds: &[(i64, i64)]) -> Node {
        let (lo, hi) = if signed {
            (i128::from(i32::MIN), i128::from(i32::MAX))
        } else {
            (0, i128::from(u32::MAX))
        };
        match a {
            f @ Node::Fail(_) => f,
            Node::Const(v) => Node::Const(wrap32(v, signed)),
            a => match a.interval(bounds) {
                Some((l, h)) if l >= lo && h <= hi => a,
                _ => Node::Wrap(signed, Box::new(a)),
            },
        }
    }

    /// The least and greatest values this node can take when every slot `i` lies in
    /// `bounds[i]` (a slot past `bounds` is unbounded), conservatively; `None` where unknown.
    fn interval(&self, bounds: &[(i64, i64)]) -> Option<(i128, i128)> {
        let corners = |a: (i128, i128), b: (i128, i128), f: fn(i128, i128) -> Option<i128>| {
            let v = [f(a.0, b.0)?, f(a.0, b.1)?, f(a.1, b.0)?, f(a.1, b.1)?];
            Some((*v.iter().min()?, *v.iter().max()?))
        };
        // far beyond any i64, so that no product of two of them overflows i128
        let limit = 1i128 << 62;
        let r = match self {
            Node::Const(c) => (i128::from(*c), i128::from(*c)),
            Node::Slot(i) => {
                let (l, h) = bounds.get(*i)?;
                (i128::from(*l), i128::from(*h))
            }
            Node::Fail(_) => return None,
            Node::Neg(a) => {
                let (l, h) = a.interval(bounds)?;
                (-h, -l)
            }
            Node::Abs(a) => {
                let (l, h) = a.interval(bounds)?;
                if l >= 0 {
                    (l, h)
                } else if h <= 0 {
                    (-h, -l)
                } else {
                    (0, h.max(-l))
                }
            }
            Node::Not(_) | Node::And(..) | Node::Or(..) => (0, 1),
            Node::Bin(op, ..) if op.is_boolean() => (0, 1),
            Node::Bin(op, a, b) => {
                let (x, y) = (a.interval(bounds)?, b.interval(bounds)?);
                match op {
                    Arith::Add => (x.0 + y.0, x.1 + y.1),
                    Arith::Sub => (x.0 - y.1, x.1 - y.0),
                    Arith::Mul => corners(x, y, |p, q| Some(p * q))?,
                    Arith::Min => (x.0.min(y.0), x.1.min(y.1)),
                    Arith::Max => (x.0.max(y.0), x.1.max(y.1)),
                    // floor division and cdiv are monotonic in the dividend and, for a divisor of
                    // one sign, in the divisor
                    // (one wider: cdiv is at most one above)
                    Arith::Div | Arith::Cdiv if y.0 > 0 || y.1 < 0 => {
                        let (l, h) =
                            corners(x, y, |p, q| Some(p.div_euclid(q.abs()) * q.signum()))?;
                        (l - 1, h + 1)
                    }
                    Arith::Rem if y.0 > 0 => (0, y.1 - 1),
                    Arith::Rem if y.1 < 0 => (y.0 + 1, 0),
                    _ => return None,
                }
            }
            Node::Cond(_, a, b) => {
                let (x, y) = (a.interval(bounds)?, b.interval(bounds)?);
                (x.0.min(y.0), x.1.max(y.1))
            }
            Node::Wrap(true, _) => (i128::from(i32::MIN), i128::from(i32::MAX)),
            Node::Wrap(false, _) => (0, i128::from(u32::MAX)),
        };
        (r.0 > -limit && r.1 < limit).then_some(r)
    }

    fn abs(a: Node) -> Node {
        match a {
            f @ Node::Fail(_) => f,
            Node::Const(v) => Node::from_result(abs(v)),
            a => Node::Abs(Box::new(a)),
        }
    }

    /// Folds a strict binary operation, keeping exact evaluation-order
    /// semantics: an always-failing operand is only hoisted when everything
    /// evaluated before it cannot fail.
    fn bin(op: Arith, a: Node, b: Node) -> Node {
        match (a, b) {
            (f @ Node::Fail(_), _) => f,
            (a, f @ Node::Fail(_)) if a.is_infallible() => f,
            (Node::Const(x), Node::Const(y)) => Node::from_result(op.apply(x, y)),
            (a, Node::Const(0)) if matches!(op, Arith::Div | Arith::Rem) && a.is_infallible() => {
                Node::Fail(EvalError::DivisionByZero)
            }
            (a, Node::Const(y)) if op == Arith::Cdiv && y <= 0 && a.is_infallible() => {
                Node::Fail(EvalError::CdivNonPositive)
            }
            (a, b) => Node::Bin(op, Box::new(a), Box::new(b)),
        }
    }

    fn and(a: Node, b: Node) -> Node {
        match a {
            Node::Fail(_) => a,
            Node::Const(0) => Node::Const(0),
            Node::Const(_) => Node::bin(Arith::Ne, b, Node::Const(0)),
            a => Node::And(Box::new(a), Box::new(b)),
        }
    }

    fn or(a: Node, b: Node) -> Node {
        match a {
            Node::Fail(_) => a,
            Node::Const(0) => Node::bin(Arith::Ne, b, Node::Const(0)),
            Node::Const(_) => Node::Const(1),
            a => Node::Or(Box::new(a), Box::new(b)),
        }
    }

    fn cond(c: Node, a: Node, b: Node) -> Node {
        match c {
            Node::Fail(_) => c,
            Node::Const(0) => b,
            Node::Const(_) => a,
            c => Node::Cond(Box::new(c), Box::new(a), Box::new(b)),
        }
    }

    /// The affine form of this node, if it is affine in the slots.
    fn affine(&self) -> Option<Affine> {
        match self {
            Node::Const(c) => Some(Affine::constant(*c)),
            Node::Slot(i) => Some(Affine::slot(*i)),
            Node::Fail(_) => None,
            Node::Neg(_) | Node::Bin(Arith::Add | Arith::Sub | Arith::Mul, ..) => {
                self.affine_linear()
            }
            Node::Cond(c, a, b) => {
                if c.affine_constant()? != 0 {
                    a.affine()
                } else {
                    b.affine()
                }
            }
            _ => self.fold_affine_constants().map(Affine::constant),
        }
    }

    /// Whether evaluating this node may read a slot of `slots`.
    fn reads_any(&self, slots: &std::ops::Range<usize>) -> bool {
        match self {
            Node::Const(_) | Node::Fail(_) => false,
            Node::Slot(i) => slots.contains(i),
            Node::Neg(a) | Node::Not(a) | Node::Abs(a) | Node::Wrap(_, a) => a.reads_any(slots),
            Node::Bin(_, a, b) | Node::And(a, b) | Node::Or(a, b) => {
                a.reads_any(slots) || b.reads_any(slots)
            }
            Node::Cond(c, a, b) => c.reads_any(slots) || a.reads_any(slots) || b.reads_any(slots),
        }
    }

    /// This node as an affine part plus a rest that reads no slot of `lanes`: the terms of its
    /// sums and differences (scaled by constants) that read `lanes` must be affine, the others
    /// may be anything. `None` where a term that reads `lanes` is not affine.
    fn split_lanes(&self, lanes: &std::ops::Range<usize>) -> Option<(Affine, Node)> {
        if let Some(a) = self.affine() {
            return Some((a, Node::Const(0)));
        }
        if !self.reads_any(lanes) {
            return Some((Affine::constant(0), self.clone()));
        }
        let pair = |a: &Node, b: &Node| Some((a.split_lanes(lanes)?, b.split_lanes(lanes)?));
        match self {
            Node::Neg(a) => {
                let (f, r) = a.split_lanes(lanes)?;
                Some((f.checked_scale(-1)?, Node::Neg(Box::new(r))))
            }
            Node::Bin(op @ (Arith::Add | Arith::Sub), a, b) => {
                let ((fa, ra), (fb, rb)) = pair(a, b)?;
                let f = match op {
                    Arith::Add => fa.zip_with(&fb, i64::checked_add)?,
                    _ => fa.zip_with(&fb, i64::checked_sub)?,
                };
                Some((f, Node::Bin(*op, Box::new(ra), Box::new(rb))))
            }
            Node::Bin(Arith::Mul, a, b) => {
                let (x, k) = match (a.affine_constant(), b.affine_constant()) {
                    (_, Some(k)) => (a, k),
                    (Some(k), _) => (b, k),
                    _ => return None,
                };
                let (f, r) = x.split_lanes(lanes)?;
                let scaled = Node::Bin(Arith::Mul, Box::new(r), Box::new(Node::Const(k)));
                Some((f.checked_scale(k)?, scaled))
            }
            _ => None,
        }
    }

    /// The value, if the affine form of this node is a constant.
    fn affine_constant(&self) -> Option<i64> {
        self.affine().filter(Affine::is_constant).map(|a| a.c0)
    }

    /// `-a`, `a + b`, `a - b`, `a * b` (one side constant).
    fn affine_linear(&self) -> Option<Affine> {
        match self {
            Node::Neg(a) => a.affine()?.checked_scale(-1),
            Node::Bin(Arith::Add, a, b) => a.affine()?.zip_with(&b.affine()?, i64::checked_add),
            Node::Bin(Arith::Sub, a, b) => a.affine()?.zip_with(&b.affine()?, i64::checked_sub),
            Node::Bin(Arith::Mul, a, b) => {
                let (x, y) = (a.affine()?, b.affine()?);
                if y.is_constant() {
                    x.checked_scale(y.c0)
                } else if x.is_constant() {
                    y.checked_scale(x.c0)
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// Any other operation whose (evaluated) operands are all affine constants.
    fn fold_affine_constants(&self) -> Option<i64> {
        match self {
            Node::Bin(op, a, b) => {
                let x = a.affine_constant()?;
                op.apply(x, b.affine_constant()?).ok()
            }
            Node::Not(a) => Some(i64::from(a.affine_constant()? == 0)),
            Node::Abs(a) => abs(a.affine_constant()?).ok(),
            Node::And(a, b) => {
                if a.affine_constant()? == 0 {
                    Some(0)
                } else {
                    Some(i64::from(b.affine_constant()? != 0))
                }
            }
            Node::Or(a, b) => {
                if a.affine_constant()? != 0 {
                    Some(1)
                } else {
                    Some(i64::from(b.affine_constant()? != 0))
                }
            }
            _ => None,
        }
    }
}

struct Lowerer<'r, 'a> {
    resolve: &'r dyn Fn(&str) -> Option<Binding<'a>>,
    /// The least and greatest value of each slot, where known (for dropping wraps).
    bounds: &'r [(i64, i64)],
    nodes: usize,
}

impl<'a> Lowerer<'_, 'a> {
    // The recursion is split into small functions to keep (debug-build)
    // stack frames small.
    fn lower(&mut self, e: &Expr, depth: usize, inline: usize) -> Result<Node, EvalError> {
        self.nodes += 1;
        if depth > MAX_COMPILE_DEPTH || self.nodes > MAX_COMPILE_NODES {
            return Err(EvalError::TooComplex);
        }
        let d = depth + 1;
        match e {
            Expr::Num(n) => Ok(Node::Const(*n)),
            Expr::Var(name) => self.lower_var(name, d, inline),
            Expr::Unary(op, a) => Ok(Node::unary(*op, self.lower(a, d, inline)?)),
            Expr::Binary(op, a, b) => self.lower_binary(*op, a, b, d, inline),
            Expr::Cond(c, a, b) => self.lower_cond(c, a, b, d, inline),
            Expr::Call(f, args) => self.lower_call(*f, args, d, inline),
        }
    }

    fn lower_var(&mut self, name: &str, d: usize, inline: usize) -> Result<Node, EvalError> {
        match (self.resolve)(name) {
            None => Err(EvalError::UnknownVariable(name.to_string())),
            Some(Binding::Const(c)) => Ok(Node::Const(c)),
            Some(Binding::Slot(i)) if i < MAX_SLOTS => Ok(Node::Slot(i)),
            Some(Binding::Slot(slot)) => Err(EvalError::SlotOutOfRange {
                name: name.to_string(),
                slot,
            }),
            Some(Binding::Inline(sub)) => {
                if inline >= MAX_INLINE_DEPTH {
                    return Err(EvalError::InlineTooDeep(name.to_string()));
                }
                self.lower(sub, d, inline + 1)
            }
        }
    }

    fn lower_binary(
        &mut self,
        op: BinaryOp,
        a: &Expr,
        b: &Expr,
        d: usize,
        inline: usize,
    ) -> Result<Node, EvalError> {
        let x = self.lower(a, d, inline)?;
        let y = self.lower(b, d, inline)?;
        Ok(match op {
            BinaryOp::And => Node::and(x, y),
            BinaryOp::Or => Node::or(x, y),
            _ => match op.arith() {
                Some(ar) => Node::bin(ar, x, y),
                None => unreachable!("&& and || are handled above"),
            },
        })
    }

    fn lower_cond(
        &mut self,
        c: &Expr,
        a: &Expr,
        b: &Expr,
        d: usize,
        inline: usize,
    ) -> Result<Node, EvalError> {
        let c = self.lower(c, d, inline)?;
        let a = self.lower(a, d, inline)?;
        let b = self.lower(b, d, inline)?;
        Ok(Node::cond(c, a, b))
    }

    fn lower_call(
        &mut self,
        f: Func,
        args: &[Expr],
        d: usize,
        inline: usize,
    ) -> Result<Node, EvalError> {
        f.check_arity(args.len())?;
        let mut lowered = Vec::with_capacity(args.len());
        for a in args {
            lowered.push(self.lower(a, d, inline)?);
        }
        let mut it = lowered.into_iter();
        let first = it.next().unwrap_or(Node::Const(0));
        Ok(match f {
            Func::Abs => Node::abs(first),
            Func::Cdiv => Node::bin(Arith::Cdiv, first, it.next().unwrap_or(Node::Const(0))),
            Func::Pow => Node::bin(Arith::Pow, first, it.next().unwrap_or(Node::Const(0))),
            Func::Ilog => Node::bin(Arith::Ilog, first, it.next().unwrap_or(Node::Const(0))),
            Func::Min => it.fold(first, |acc, n| Node::bin(Arith::Min, acc, n)),
            Func::Max => it.fold(first, |acc, n| Node::bin(Arith::Max, acc, n)),
            Func::I32 | Func::U32 => Node::wrap(f == Func::I32, first, self.bounds),
        })
    }
}

/// One instruction of a [`GeneralProgram`].
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Op {
    Const(i64),
    Slot(u32),
    Neg,
    Not,
    Abs,
    /// Wrap the top of the stack around to 32 bits, signed or not.
    Wrap32(bool),
    /// Normalise the top of the stack to 0 or 1.
    Bool,
    Bin(Arith),
    /// Apply to the top of the stack and a constant right operand.
    BinK(Arith, i64),
    /// Push `slot OP k`.
    SlotBinK(u32, Arith, i64),
    /// Pop; jump if zero.
    Jz(u32),
    /// Pop; jump if nonzero.
    Jnz(u32),
    Jump(u32),
    /// Fail with `errors[i]`.
    Fail(u32),
}

/// A compiled non-affine expression: a flat postfix program evaluated on a
/// small fixed-size stack, without allocation for all but very deep
/// expressions.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneralProgram {
    pub(super) ops: Vec<Op>,
    pub(super) errors: Vec<EvalError>,
    pub(super) max_stack: usize,
    /// Fast path for guards: the expression is a `&&` chain of comparisons
    /// of a slot with a constant, i.e. 1 iff every term's slot lies in its
    /// range (checked in source order).
    pub(super) guard: Option<Guard>,
}

/// A conjunction of slot range checks `lo <= slot <= hi`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Guard {
    pub(super) terms: Vec<RangeTerm>,
    /// One more than the largest slot index read.
    pub(super) slots_needed: usize,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct RangeTerm {
    pub(super) slot: usize,
    pub(super) lo: i64,
    pub(super) hi: i64,
}

impl Guard {
    /// Recognises `&&` chains of `slot CMP k` / `k CMP slot` (not `!=`).
    fn from_node(node: &Node) -> Option<Guard> {
        fn collect(n: &Node, out: &mut Vec<RangeTerm>) -> Option<()> {
            match n {
                Node::And(a, b) => {
                    collect(a, out)?;
                    collect(b, out)
                }
                Node::Bin(op, a, b) => {
                    let (slot, op, k) = match (&**a, &**b) {
                        (Node::Slot(i), Node::Const(k)) => (*i, *op, *k),
                        // Mirror `k CMP slot` into `slot CMP' k`.
                        (Node::Const(k), Node::Slot(i)) => {
                            let mirrored = match op {
                                Arith::Lt => Arith::Gt,
                                Arith::Le => Arith::Ge,
                                Arith::Gt => Arith::Lt,
                                Arith::Ge => Arith::Le,
                                other => *other,
                            };
                            (*i, mirrored, *k)
                        }
                        _ => return None,
                    };
                    let (lo, hi) = match op {
                        Arith::Lt => (i64::MIN, k.checked_sub(1)?),
                        Arith::Le => (i64::MIN, k),
                        Arith::Gt => (k.checked_add(1)?, i64::MAX),
                        Arith::Ge => (k, i64::MAX),
                        Arith::Eq => (k, k),
                        _ => return None,
                    };
                    out.push(RangeTerm { slot, lo, hi });
                    Some(())
                }
                _ => None,
            }
        }
        let mut terms = Vec::new();
        collect(node, &mut terms)?;
        let slots_needed = terms.iter().map(|t| t.slot + 1).max()?;
        Some(Guard {
            terms,
            slots_needed,
        })
    }
}

struct Emitter {
    ops: Vec<Op>,
    errors: Vec<EvalError>,
    cur: usize,
    max: usize,
}

impl Emitter {
    fn push(&mut self, op: Op, pushes: bool) {
        self.ops.push(op);
        if pushes {
            self.cur += 1;
            self.max = self.max.max(self.cur);
        }
    }

    fn pop(&mut self, op: Op) {
        self.ops.push(op);
        self.cur -= 1;
    }

    fn here(&self) -> u32 {
        // Programs are bounded by MAX_COMPILE_NODES, far below u32::MAX.
        u32::try_from(self.ops.len()).unwrap_or(u32::MAX)
    }

    fn patch(&mut self, at: u32) {
        let target = self.here();
        match &mut self.ops[at as usize] {
            Op::Jz(t) | Op::Jnz(t) | Op::Jump(t) => *t = target,
            _ => unreachable!("patching a non-jump instruction"),
        }
    }

    fn emit(&mut self, n: &Node) {
        match n {
            Node::Const(c) => self.push(Op::Const(*c), true),
            Node::Slot(i) => self.push(Op::Slot(slot_u32(*i)), true),
            Node::Fail(e) => {
                let i = u32::try_from(self.errors.len()).unwrap_or(u32::MAX);
                self.errors.push(e.clone());
                self.push(Op::Fail(i), true);
            }
            Node::Neg(a) => {
                self.emit(a);
                self.push(Op::Neg, false);
            }
            Node::Not(a) => {
                self.emit(a);
                self.push(Op::Not, false);
            }
            Node::Abs(a) => {
                self.emit(a);
                self.push(Op::Abs, false);
            }
            Node::Wrap(signed, a) => {
                self.emit(a);
                self.push(Op::Wrap32(*signed), false);
            }
            Node::Bin(op, a, b) => match (&**a, &**b) {
                (Node::Slot(i), Node::Const(k)) => {
                    self.push(Op::SlotBinK(slot_u32(*i), *op, *k), true);
                }
                (_, Node::Const(k)) => {
                    self.emit(a);
                    self.push(Op::BinK(*op, *k), false);
                }
                _ => {
                    self.emit(a);
                    self.emit(b);
                    self.pop(Op::Bin(*op));
                }
            },
            Node::And(..) => self.emit_logic(n, true),
            Node::Or(..) => self.emit_logic(n, false),
            Node::Cond(c, a, b) => self.emit_cond(c, a, b),
        }
    }

    /// A chain of `&&` (`is_and`) or `||`, flattened so that every operand
    /// jumps straight to the shared short-circuit result.
    fn emit_logic(&mut self, n: &Node, is_and: bool) {
        fn collect<'n>(n: &'n Node, is_and: bool, out: &mut Vec<&'n Node>) {
            match (n, is_and) {
                (Node::And(a, b), true) | (Node::Or(a, b), false) => {
                    collect(a, is_and, out);
                    collect(b, is_and, out);
                }
                _ => out.push(n),
            }
        }
        let mut operands = Vec::new();
        collect(n, is_and, &mut operands);
        let (last, init) = operands.split_last().expect("a logic node has operands");
        let mut short = Vec::with_capacity(init.len());
        for x in init {
            self.emit(x);
            short.push(self.here());
            self.pop(if is_and { Op::Jz(0) } else { Op::Jnz(0) });
        }
        self.emit(last);
        if !last.is_boolean() {
            self.push(Op::Bool, false);
        }
        let end = self.here();
        self.push(Op::Jump(0), false);
        self.cur -= 1;
        for j in short {
            self.patch(j);
        }
        self.push(Op::Const(i64::from(!is_and)), true);
        self.patch(end);
    }

    fn emit_cond(&mut self, c: &Node, a: &Node, b: &Node) {
        self.emit(c);
        let j = self.here();
        self.pop(Op::Jz(0));
        self.emit(a);
        let end = self.here();
        self.push(Op::Jump(0), false);
        self.cur -= 1;
        self.patch(j);
        self.emit(b);
        self.patch(end);
    }
}

/// Slot indices are checked against [`MAX_SLOTS`] during lowering.
fn slot_u32(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

impl GeneralProgram {
    fn new(node: &Node) -> Self {
        let mut em = Emitter {
            ops: Vec::new(),
            errors: Vec::new(),
            cur: 0,
            max: 0,
        };
        em.emit(node);
        debug_assert_eq!(em.cur, 1);
        GeneralProgram {
            ops: em.ops,
            errors: em.errors,
            max_stack: em.max,
            guard: Guard::from_node(node),
        }
    }

    /// Number of instructions in the program.
    pub fn instruction_count(&self) -> usize {
        self.ops.len()
    }
}

/// A compiled expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Compiled {
    /// Affine in the slots (including constants).
    Affine(Affine),
    /// Anything else.
    General(GeneralProgram),
}

impl Compiled {
    /// The affine form, if the expression compiled to one.
    pub fn as_affine(&self) -> Option<&Affine> {
        match self {
            Compiled::Affine(a) => Some(a),
            Compiled::General(_) => None,
        }
    }

    /// The value, if the expression compiled to a constant.
    pub fn as_constant(&self) -> Option<i64> {
        self.as_affine().filter(|a| a.is_constant()).map(|a| a.c0)
    }

    /// Whether the value may depend on a slot in `slots`: false when no slot there is read,
    /// so the value is the same whatever they hold (e.g. the same for every lane of a warp).
    pub fn reads_slots(&self, slots: std::ops::Range<usize>) -> bool {
        match self {
            Compiled::Affine(a) => a.coef[slots.start.min(MAX_SLOTS)..slots.end.min(MAX_SLOTS)]
                .iter()
                .any(|&c| c != 0),
            Compiled::General(g) => g.ops.iter().any(|op| match op {
                Op::Slot(i) | Op::SlotBinK(i, ..) => slots.contains(&(*i as usize)),
                _ => false,
            }),
        }
    }
}

/// Compile `expr`, resolving every name through `resolve` (`None` =>
/// [`EvalError::UnknownVariable`] naming it; names in branches that are
/// never taken are resolved too).
///
/// [`Binding::Inline`] bindings are substituted recursively, at most
/// [`MAX_INLINE_DEPTH`] deep ([`EvalError::InlineTooDeep`]). Constants are
/// folded; a subexpression that would fail whenever it is evaluated (such as
/// `1 / 0`) is a compile-time error when the whole expression would always
/// fail, and otherwise fails at evaluation time exactly when
/// [`Expr::eval_with`] would (so `0 && 1/0` compiles to the constant 0).
///
/// The result is [`Compiled::Affine`] whenever the expression is affine in
/// the slots after folding: sums and differences of affine parts, products
/// where one side is constant, negation, and any other operation whose
/// operands are all constant. Everything else is [`Compiled::General`].
pub fn compile<'a>(
    expr: &Expr,
    resolve: &dyn Fn(&str) -> Option<Binding<'a>>,
) -> Result<Compiled, EvalError> {
    compile_bounded(expr, resolve, &[])
}

/// [`compile`], knowing that slot `i` lies in `bounds[i]` (least, greatest; slots past the end
/// are unbounded): an `i32(a)` or `u32(a)` whose operand provably fits in the target range
/// over those bounds is `a` itself, so an index that does not wrap in a launch stays affine.
pub fn compile_bounded<'a>(
    expr: &Expr,
    resolve: &dyn Fn(&str) -> Option<Binding<'a>>,
    bounds: &[(i64, i64)],
) -> Result<Compiled, EvalError> {
    let node = lowered(expr, resolve, bounds)?;
    if let Node::Fail(e) = node {
        return Err(e);
    }
    Ok(Compiled::of(&node))
}

/// `expr` lowered to a tree, its names resolved and its constants folded.
fn lowered<'a>(
    expr: &Expr,
    resolve: &dyn Fn(&str) -> Option<Binding<'a>>,
    bounds: &[(i64, i64)],
) -> Result<Node, EvalError> {
    let mut lw = Lowerer {
        resolve,
        bounds,
        nodes: 0,
    };
    lw.lower(expr, 0, 0)
}

impl Compiled {
    /// The affine form of `node` where it has one, else its program.
    fn of(node: &Node) -> Compiled {
        match node.affine() {
            Some(a) => Compiled::Affine(a),
            None => Compiled::General(GeneralProgram::new(node)),
        }
    }
}

/// [`compile_bounded`] of an expression that is not affine, split into an affine part and a
/// rest that reads no slot of `lanes` (their sum is the expression): where the lanes of a warp
/// differ only in `lanes`, the rest is worked out once per warp and the lanes follow from the
/// affine part. `None` where the expression is affine (no split needed) or no such split
/// exists. The sum may overflow where the expression would not (or fail where it would not:
/// `x - x * 0`-like parts fold alike), so a caller checks the addresses it makes of it.
pub fn compile_split<'a>(
    expr: &Expr,
    resolve: &dyn Fn(&str) -> Option<Binding<'a>>,
    bounds: &[(i64, i64)],
    lanes: std::ops::Range<usize>,
) -> Result<Option<(Affine, Compiled)>, EvalError> {
    let node = lowered(expr, resolve, bounds)?;
    if matches!(node, Node::Fail(_)) || node.affine().is_some() {
        return Ok(None);
    }
    Ok(node
        .split_lanes(&lanes)
        .map(|(affine, rest)| (affine, Compiled::of(&rest))))
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn compile_split_parts_an_index_into_its_lanes_affine_part_and_a_rest_without_lanes() {
        // slots 0..3 stand for threadIdx, 3 for blockIdx.z, 6 for a loop variable
        let resolve = |n: &str| match n {
            "x" => Some(Binding::Slot(0)),
            "bz" => Some(Binding::Slot(3)),
            "k" => Some(Binding::Slot(6)),
            _ => None,
        };
        let split = |s: &str| compile_split(&parse(s).unwrap(), &resolve, &[], 0..3).unwrap();
        // a lifted remainder loop's index: the main loop's trips are not affine in bz
        let text = "x + 3 * k - 2 + 4 * (bz % 4 == 0 ? bz / 2 : 1) * 5";
        let (f, rest) = split(text).unwrap();
        assert_eq!((f.c0, f.coef[0], f.coef[3], f.coef[6]), (-2, 1, 0, 3));
        assert!(!rest.reads_slots(0..3));
        let whole = compile(&parse(text).unwrap(), &resolve).unwrap();
        for bz in 0..9 {
            for (x, k) in [(0, 0), (5, 1), (31, 7)] {
                let slots = [x, 0, 0, bz, 0, 0, k];
                let parts = f.eval(&slots) + rest.eval(&slots).unwrap();
                assert_eq!(parts, whole.eval(&slots).unwrap(), "bz {bz}, x {x}, k {k}");
                let expected = x + 3 * k - 2 + 20 * if bz % 4 == 0 { bz / 2 } else { 1 };
                assert_eq!(parts, expected);
            }
        }
        // affine already: nothing to split; a term on the lanes that is not affine: no split
        assert!(split("x + 2 * bz").is_none());
        assert!(split("x * x + bz % 3").is_none());
        assert!(split("x % 4 + bz % 3").is_none());
        assert!(split("bz % 4 == 0 ? x : 0").is_none());
    }

    #[test]
    fn reads_slots_tells_which_slots_a_value_may_depend_on() {
        // slots 0..3 stand for threadIdx, 3 for blockIdx.z
        let resolve = |n: &str| match n {
            "t" => Some(Binding::Slot(0)),
            "u" => Some(Binding::Slot(2)),
            "b" => Some(Binding::Slot(3)),
            _ => None,
        };
        let c = |s: &str| compile(&parse(s).unwrap(), &resolve).unwrap();
        let thread = 0..3;
        // affine: by its coefficients
        assert!(c("2 * u + b").reads_slots(thread.clone()));
        assert!(!c("7 * b + 1").reads_slots(thread.clone()));
        // a slot that cancels out is not read
        assert!(!c("t - t + b").reads_slots(thread.clone()));
        // general: the trip count of an unrolled remainder loop, min of the block's slot
        let rem = c("-max(b * 16 - 40, -16) % 4");
        assert!(rem.as_affine().is_none());
        assert!(!rem.reads_slots(thread.clone()));
        assert!(rem.reads_slots(3..4));
        assert!(c("min(t, b)").reads_slots(thread.clone()));
        // a slot compared with a constant (compiled to one instruction)
        assert!(c("u < 3 ? b : 2 * b").reads_slots(thread.clone()));
        assert!(!c("b < 3 ? b : 2 * b").reads_slots(thread));
    }

    #[test]
    fn a_wrap_is_dropped_where_the_bounds_prove_that_its_operand_fits() {
        let e = parse("i32(1024 * b + t + 4) * 8").unwrap();
        let resolve = |n: &str| match n {
            "t" => Some(Binding::Slot(0)),
            "b" => Some(Binding::Slot(1)),
            _ => None,
        };
        // t < 1024, b < 2^20: at most 2^30 + 1027, inside i32: the plain affine index
        let fits = compile_bounded(&e, &resolve, &[(0, 1023), (0, (1 << 20) - 1)]).unwrap();
        let a = fits.as_affine().expect("the wrap is dropped");
        assert_eq!((a.c0, a.coef[0], a.coef[1]), (32, 8, 8192));
        // b up to 2^21 - 1: 1024 * b + t + 4 reaches 2^31 + 3, so the wrap stays and works
        let wraps = compile_bounded(&e, &resolve, &[(0, 1023), (0, (1 << 21) - 1)]).unwrap();
        assert!(wraps.as_affine().is_none());
        assert_eq!(
            wraps.eval(&[1023, (1 << 21) - 1]),
            Ok(8 * (3 - (1i64 << 31)))
        );
        assert_eq!(wraps.eval(&[3, 5]), Ok(8 * (5 * 1024 + 7)));
        // unsigned: a negative operand never fits
        let u = parse("u32(t - 1)").unwrap();
        let c = compile_bounded(&u, &resolve, &[(0, 1023), (0, 0)]).unwrap();
        assert_eq!(c.eval(&[0, 0]), Ok(4_294_967_295));
        assert_eq!(c.eval(&[5, 0]), Ok(4));
        assert!(
            compile_bounded(&u, &resolve, &[(1, 1023), (0, 0)])
                .unwrap()
                .as_affine()
                .is_some()
        );
        // no bounds (plain compile): only constants fold
        assert_eq!(
            compile(&parse("i32(2147483648)").unwrap(), &resolve)
                .unwrap()
                .as_constant(),
            Some(-2_147_483_648)
        );
        assert!(
            compile(&parse("i32(t)").unwrap(), &resolve)
                .unwrap()
                .as_affine()
                .is_none()
        );
    }

    #[test]
    fn compile_depth_limit() {
        // d(k+1) = d(k) + 1 with d0 a slot: each level adds two tree levels.
        let defs: Vec<Expr> = (0..300)
            .map(|k| parse(&format!("d{k} + 1")).unwrap())
            .collect();
        let names: Vec<String> = (1..=300).map(|k| format!("d{k}")).collect();
        let resolve = |n: &str| {
            if n == "d0" {
                return Some(Binding::Slot(0));
            }
            names
                .iter()
                .position(|m| m == n)
                .map(|i| Binding::Inline(&defs[i]))
        };
        // Inline depth is limited first.
        assert_eq!(
            compile(&parse("d65").unwrap(), &resolve),
            Err(EvalError::InlineTooDeep("d1".into()))
        );
        let c = compile(&parse("d64").unwrap(), &resolve).unwrap();
        assert_eq!(c.eval(&[1]), Ok(65));
        // Tree depth: an inlined definition that is itself deep.
        let deep = parse(&vec!["x"; 64].join(" - ")).unwrap();
        let mut chain = vec![deep];
        for k in 0..8 {
            let prev = format!("e{k}");
            chain.push(parse(&format!("{}{prev}", "-".repeat(50))).unwrap());
        }
        let resolve = |n: &str| match n {
            "x" => Some(Binding::Slot(0)),
            _ => n
                .strip_prefix('e')?
                .parse::<usize>()
                .ok()
                .map(|i| Binding::Inline(&chain[i])),
        };
        let ok = compile(&parse("e3").unwrap(), &resolve).unwrap();
        assert_eq!(ok.eval(&[2]), Ok(-2 * 62)); // e0 = -62x, e(k+1) = e(k)
        assert_eq!(
            compile(&parse("e8").unwrap(), &resolve),
            Err(EvalError::TooComplex)
        );
    }

    /// Resolver for the stencil-address example.
    fn stencil_resolver<'a>(
        x: &'a Expr,
        y: &'a Expr,
        z: &'a Expr,
    ) -> impl Fn(&str) -> Option<Binding<'a>> {
        move |n| {
            Some(match n {
                "plane" => Binding::Const(9792),
                "pitch" => Binding::Const(136),
                "blockDim.x" => Binding::Const(32),
                "blockDim.y" => Binding::Const(4),
                "blockDim.z" => Binding::Const(2),
                "threadIdx.x" => Binding::Slot(0),
                "threadIdx.y" => Binding::Slot(1),
                "threadIdx.z" => Binding::Slot(2),
                "blockIdx.x" => Binding::Slot(3),
                "blockIdx.y" => Binding::Slot(4),
                "blockIdx.z" => Binding::Slot(5),
                "x" => Binding::Inline(x),
                "y" => Binding::Inline(y),
                "z" => Binding::Inline(z),
                _ => return None,
            })
        }
    }

    #[test]
    fn compile_stencil_address_to_affine() {
        let x = parse("blockIdx.x * blockDim.x + threadIdx.x").unwrap();
        let y = parse("blockIdx.y * blockDim.y + threadIdx.y").unwrap();
        let z = parse("blockIdx.z * blockDim.z + threadIdx.z").unwrap();
        let resolve = stencil_resolver(&x, &y, &z);
        let e = parse("(z + 4) * plane + (y + 4) * pitch + (x + 4)").unwrap();
        let c = compile(&e, &resolve).unwrap();
        // (2bz + tz + 4) * 9792 + (4by + ty + 4) * 136 + (32bx + tx + 4)
        let expected = Affine {
            c0: 4 * 9792 + 4 * 136 + 4,
            coef: [1, 136, 9792, 32, 4 * 136, 2 * 9792, 0, 0, 0, 0],
        };
        assert_eq!(c.as_affine(), Some(&expected));
        assert_eq!(expected.c0, 39716);
        assert_eq!(c.as_constant(), None);
        // tx=5, ty=2, tz=1, bx=3, by=7, bz=11:
        // x = 101, y = 30, z = 23 -> 27*9792 + 34*136 + 105 = 264384 + 4624 + 105
        let slots = [5, 2, 1, 3, 7, 11];
        assert_eq!(expected.eval(&slots), 269_113);
        assert_eq!(c.eval(&slots), Ok(269_113));
        assert_eq!(
            c.eval(&slots[..4]),
            Err(EvalError::MissingSlot {
                slot: 4,
                provided: 4
            })
        );
    }

    #[test]
    fn compile_classification() {
        let resolve = |n: &str| match n {
            "x" => Some(Binding::Slot(0)),
            "y" => Some(Binding::Slot(1)),
            "nx" => Some(Binding::Const(100)),
            "ny" => Some(Binding::Const(50)),
            "big" => Some(Binding::Slot(MAX_SLOTS)),
            _ => None,
        };
        let comp = |s: &str| compile(&parse(s).unwrap(), &resolve);

        let c = comp("x % 2").unwrap();
        assert!(matches!(c, Compiled::General(_)));
        assert_eq!(c.eval(&[-3]), Ok(1));
        let c = comp("min(x, 3)").unwrap();
        assert!(matches!(c, Compiled::General(_)));
        assert_eq!((c.eval(&[1]), c.eval(&[9])), (Ok(1), Ok(3)));
        assert_eq!(comp("nx / 2").unwrap().as_constant(), Some(50));
        assert_eq!(
            comp("cdiv(nx, 3) + min(nx, ny) * (nx > ny)")
                .unwrap()
                .as_constant(),
            Some(84)
        );
        assert!(matches!(comp("x * y"), Ok(Compiled::General(_))));
        assert!(matches!(comp("x / 2"), Ok(Compiled::General(_))));

        let c = comp("3 * (x - 2 * y) - -x + nx / 3 * y").unwrap();
        let mut coef = [0; MAX_SLOTS];
        coef[0] = 4;
        coef[1] = 27;
        assert_eq!(c.as_affine(), Some(&Affine { c0: 0, coef }));
        // Slots that cancel out make the product constant.
        assert_eq!(
            comp("(x - x + 5) * y")
                .unwrap()
                .as_affine()
                .map(|a| a.coef[1]),
            Some(5)
        );
        assert_eq!(
            comp("(x - x) / 0 + 1").unwrap().eval(&[4]),
            Err(EvalError::DivisionByZero)
        );

        // Guard: x < nx && y < ny
        let g = comp("x < nx && y < ny").unwrap();
        assert!(g.as_affine().is_none());
        assert_eq!(g.eval(&[5, 5]), Ok(1));
        assert_eq!(g.eval(&[100, 5]), Ok(0));
        assert_eq!(g.eval(&[5, 50]), Ok(0));
        assert_eq!(g.eval(&[100]), Ok(0)); // short circuit: slot 1 is never read
        assert_eq!(
            g.eval(&[5]),
            Err(EvalError::MissingSlot {
                slot: 1,
                provided: 1
            })
        );

        assert_eq!(comp("q + 1"), Err(EvalError::UnknownVariable("q".into())));
        // Names in dead branches are still resolved.
        assert_eq!(
            comp("0 ? q : 1"),
            Err(EvalError::UnknownVariable("q".into()))
        );
        assert_eq!(
            comp("big"),
            Err(EvalError::SlotOutOfRange {
                name: "big".into(),
                slot: MAX_SLOTS
            })
        );
    }

    #[test]
    fn inline_limits() {
        let a = parse("b + 1").unwrap();
        let b = parse("a * 2").unwrap();
        let cyclic = |n: &str| match n {
            "a" => Some(Binding::Inline(&a)),
            "b" => Some(Binding::Inline(&b)),
            _ => None,
        };
        assert!(matches!(
            compile(&parse("a").unwrap(), &cyclic),
            Err(EvalError::InlineTooDeep(_))
        ));

        // v0 = s, v(k+1) = v(k) + v(k): exponential after inlining.
        let defs: Vec<Expr> = (0..40)
            .map(|k| parse(&format!("v{k} + v{k}")).unwrap())
            .collect();
        let names: Vec<String> = (0..40).map(|k| format!("v{}", k + 1)).collect();
        let resolve = |n: &str| {
            if n == "v0" {
                return Some(Binding::Slot(0));
            }
            names
                .iter()
                .position(|m| m == n)
                .map(|i| Binding::Inline(&defs[i]))
        };
        assert_eq!(
            compile(&parse("v40").unwrap(), &resolve),
            Err(EvalError::TooComplex)
        );
        let c = compile(&parse("v10").unwrap(), &resolve).unwrap();
        assert_eq!(c.eval(&[3]), Ok(3 * 1024));
    }

    // ---------------------------------------------------------------- proptest

    const NAMES: [&str; 4] = ["s0", "s1", "blk.x", "t.y"];

    fn arb_expr() -> impl Strategy<Value = Expr> {
        let leaf = prop_oneof![
            4 => (-6i64..=6).prop_map(Expr::Num),
            4 => (0..NAMES.len()).prop_map(|i| Expr::Var(NAMES[i].to_string())),
            1 => Just(Expr::Var("k".into())),
            1 => Just(Expr::Var("c".into())),
            // near the 32-bit limits, so that the wraps below change values
            1 => prop::sample::select(vec![1i64 << 31, (1 << 31) - 1, -(1 << 31), 1 << 32])
                .prop_map(Expr::Num),
        ];
        let bin_ops = prop::sample::select(vec![
            BinaryOp::Add,
            BinaryOp::Sub,
            BinaryOp::Mul,
            BinaryOp::Div,
            BinaryOp::Rem,
            BinaryOp::Eq,
            BinaryOp::Ne,
            BinaryOp::Lt,
            BinaryOp::Le,
            BinaryOp::Gt,
            BinaryOp::Ge,
            BinaryOp::And,
            BinaryOp::Or,
        ]);
        leaf.prop_recursive(6, 48, 3, move |inner| {
            prop_oneof![
                1 => (prop::sample::select(vec![UnaryOp::Neg, UnaryOp::Not]), inner.clone())
                    .prop_map(|(op, a)| Expr::Unary(op, Box::new(a))),
                4 => (bin_ops.clone(), inner.clone(), inner.clone())
                    .prop_map(|(op, a, b)| Expr::Binary(op, Box::new(a), Box::new(b))),
                1 => (inner.clone(), inner.clone(), inner.clone())
                    .prop_map(|(c, a, b)| Expr::Cond(Box::new(c), Box::new(a), Box::new(b))),
                1 => (any::<bool>(), prop::collection::vec(inner.clone(), 2..4))
                    .prop_map(|(m, v)| Expr::Call(if m { Func::Min } else { Func::Max }, v)),
                1 => (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| Expr::Call(Func::Cdiv, vec![a, b])),
                1 => (any::<bool>(), inner.clone(), inner.clone())
                    .prop_map(|(p, a, b)| Expr::Call(if p { Func::Pow } else { Func::Ilog }, vec![a, b])),
                1 => inner.clone().prop_map(|a| Expr::Call(Func::Abs, vec![a])),
                1 => (any::<bool>(), inner.clone())
                    .prop_map(|(s, a)| Expr::Call(if s { Func::I32 } else { Func::U32 }, vec![a])),
            ]
        })
    }

    fn arb_affine_expr() -> impl Strategy<Value = Expr> {
        let leaf = prop_oneof![
            (-9i64..=9).prop_map(Expr::Num),
            (0..NAMES.len()).prop_map(|i| Expr::Var(NAMES[i].to_string())),
        ];
        leaf.prop_recursive(6, 64, 2, |inner| {
            prop_oneof![
                (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::Binary(
                    BinaryOp::Add,
                    Box::new(a),
                    Box::new(b)
                )),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::Binary(
                    BinaryOp::Sub,
                    Box::new(a),
                    Box::new(b)
                )),
                (inner.clone(), -9i64..=9, any::<bool>()).prop_map(|(a, k, left)| {
                    let k = Box::new(Expr::Num(k));
                    let a = Box::new(a);
                    if left {
                        Expr::Binary(BinaryOp::Mul, k, a)
                    } else {
                        Expr::Binary(BinaryOp::Mul, a, k)
                    }
                }),
                inner
                    .clone()
                    .prop_map(|a| Expr::Unary(UnaryOp::Neg, Box::new(a))),
            ]
        })
    }

    fn inline_k() -> Expr {
        parse("s0 * 3 - t.y").unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn compiled_matches_reference(
            e in arb_expr(),
            slot_sets in prop::collection::vec(prop::array::uniform4(-10i64..=10), 1..6),
        ) {
            let shown = e.to_string();
            prop_assert_eq!(parse(&shown), Ok(e.clone()), "display: {}", shown);

            let k = inline_k();
            let resolve = |n: &str| match n {
                "k" => Some(Binding::Inline(&k)),
                "c" => Some(Binding::Const(7)),
                _ => NAMES.iter().position(|m| *m == n).map(Binding::Slot),
            };
            let compiled = compile(&e, &resolve);
            for slots in &slot_sets {
                let base = |n: &str| NAMES.iter().position(|m| *m == n).map(|i| slots[i]);
                let lookup = |n: &str| match n {
                    "k" => k.eval_with(&base).ok(),
                    "c" => Some(7),
                    _ => base(n),
                };
                let expected = e.eval_with(&lookup);
                match &compiled {
                    // A compile-time error means every evaluation fails the same way.
                    Err(err) => prop_assert_eq!(&expected, &Err(err.clone()), "{}", shown),
                    Ok(c) => {
                        let got = c.eval(slots);
                        let affine_hides_overflow = c.as_affine().is_some()
                            && expected == Err(EvalError::Overflow);
                        if !affine_hides_overflow {
                            prop_assert_eq!(&got, &expected, "{} with {:?}: {:?}", shown, slots, c);
                        }
                    }
                }
            }
        }

        #[test]
        fn wraps_dropped_by_bounds_keep_the_value(
            e in arb_expr(),
            slot_sets in prop::collection::vec(prop::array::uniform4(-10i64..=10), 1..6),
        ) {
            // every slot in -10..=10: a wrap dropped because its operand fits must not change
            // the value (or the error) of any evaluation
            let resolve = |n: &str| match n {
                "c" => Some(Binding::Const(7)),
                "k" => Some(Binding::Const(-3)),
                _ => NAMES.iter().position(|m| *m == n).map(Binding::Slot),
            };
            let bounded = compile_bounded(&e, &resolve, &[(-10, 10); 4]);
            for slots in &slot_sets {
                let lookup = |n: &str| match n {
                    "c" => Some(7),
                    "k" => Some(-3),
                    _ => NAMES.iter().position(|m| *m == n).map(|i| slots[i]),
                };
                let expected = e.eval_with(&lookup);
                match &bounded {
                    Err(err) => prop_assert_eq!(&expected, &Err(err.clone())),
                    Ok(c) => {
                        let got = c.eval(slots);
                        if !(c.as_affine().is_some() && expected == Err(EvalError::Overflow)) {
                            prop_assert_eq!(&got, &expected, "{} with {:?}", e, slots);
                        }
                    }
                }
            }
        }

        #[test]
        fn affine_trees_compile_to_affine(
            e in arb_affine_expr(),
            slots in prop::array::uniform4(-100i64..=100),
        ) {
            let shown = e.to_string();
            prop_assert_eq!(parse(&shown), Ok(e.clone()));
            let resolve = |n: &str| NAMES.iter().position(|m| *m == n).map(Binding::Slot);
            let c = compile(&e, &resolve).unwrap();
            let a = *c.as_affine().expect("affine tree must compile to Affine");
            let lookup = |n: &str| NAMES.iter().position(|m| *m == n).map(|i| slots[i]);
            let expected = e.eval_with(&lookup).unwrap();
            prop_assert_eq!(a.eval(&slots), expected);
            prop_assert_eq!(c.eval(&slots), Ok(expected));
        }

    }
}
