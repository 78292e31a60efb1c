//! Evaluation, the hot path: the reference interpreter [`Expr::eval_with`] and the evaluation of
//! compiled forms ([`Affine`],
//! [`GeneralProgram`] on its small stack, [`Compiled`]).

use super::arith::{abs, cdiv, ilog, neg, pow, wrap32};
use super::lower::{Guard, Op};
use super::{Affine, BinaryOp, Compiled, EvalError, Expr, Func, GeneralProgram, UnaryOp};

/// Number of stack entries a [`GeneralProgram`] evaluates in without
/// allocating; deeper programs fall back to a heap-allocated stack.
const INLINE_STACK: usize = 16;

impl Expr {
    /// Evaluate with a name lookup (slow, for tests and one-off constant
    /// evaluation). Evaluation is left to right and short-circuits `&&`,
    /// `||` and `?:`; a name the lookup does not know is
    /// [`EvalError::UnknownVariable`].
    pub fn eval_with(&self, lookup: &dyn Fn(&str) -> Option<i64>) -> Result<i64, EvalError> {
        match self {
            Expr::Num(n) => Ok(*n),
            Expr::Var(name) => lookup(name).ok_or_else(|| EvalError::UnknownVariable(name.clone())),
            Expr::Unary(UnaryOp::Neg, a) => neg(a.eval_with(lookup)?),
            Expr::Unary(UnaryOp::Not, a) => Ok(i64::from(a.eval_with(lookup)? == 0)),
            Expr::Binary(BinaryOp::And, a, b) => {
                if a.eval_with(lookup)? == 0 {
                    Ok(0)
                } else {
                    Ok(i64::from(b.eval_with(lookup)? != 0))
                }
            }
            Expr::Binary(BinaryOp::Or, a, b) => {
                if a.eval_with(lookup)? != 0 {
                    Ok(1)
                } else {
                    Ok(i64::from(b.eval_with(lookup)? != 0))
                }
            }
            Expr::Binary(op, a, b) => {
                let x = a.eval_with(lookup)?;
                let y = b.eval_with(lookup)?;
                match op.arith() {
                    Some(ar) => ar.apply(x, y),
                    None => unreachable!("&& and || are handled above"),
                }
            }
            Expr::Cond(c, a, b) => {
                if c.eval_with(lookup)? != 0 {
                    a.eval_with(lookup)
                } else {
                    b.eval_with(lookup)
                }
            }
            Expr::Call(f, args) => {
                f.check_arity(args.len())?;
                match f {
                    Func::Abs => abs(args[0].eval_with(lookup)?),
                    Func::I32 | Func::U32 => {
                        Ok(wrap32(args[0].eval_with(lookup)?, *f == Func::I32))
                    }
                    Func::Cdiv | Func::Pow | Func::Ilog => {
                        let x = args[0].eval_with(lookup)?;
                        let y = args[1].eval_with(lookup)?;
                        match f {
                            Func::Cdiv => cdiv(x, y),
                            Func::Pow => pow(x, y),
                            _ => ilog(x, y),
                        }
                    }
                    Func::Min | Func::Max => {
                        let mut acc = args[0].eval_with(lookup)?;
                        for a in &args[1..] {
                            let v = a.eval_with(lookup)?;
                            acc = if *f == Func::Min {
                                acc.min(v)
                            } else {
                                acc.max(v)
                            };
                        }
                        Ok(acc)
                    }
                }
            }
        }
    }
}

impl Affine {
    /// Evaluates without overflow checks (wrapping arithmetic; the caller
    /// guarantees that the ranges involved cannot overflow). Slots beyond
    /// `slots.len()` are treated as zero.
    #[inline]
    pub fn eval(&self, slots: &[i64]) -> i64 {
        let mut acc = self.c0;
        for (&c, &s) in self.coef.iter().zip(slots) {
            acc = acc.wrapping_add(c.wrapping_mul(s));
        }
        acc
    }

    /// Evaluates exactly: returns [`EvalError::Overflow`] only if the final
    /// value does not fit in an `i64`, and [`EvalError::MissingSlot`] if a
    /// slot with a nonzero coefficient is not in `slots`.
    #[inline]
    pub fn eval_checked(&self, slots: &[i64]) -> Result<i64, EvalError> {
        let mut acc = i128::from(self.c0);
        for (i, &c) in self.coef.iter().enumerate() {
            if c != 0 {
                let s = *slots.get(i).ok_or(EvalError::MissingSlot {
                    slot: i,
                    provided: slots.len(),
                })?;
                acc += i128::from(c) * i128::from(s);
            }
        }
        i64::try_from(acc).map_err(|_| EvalError::Overflow)
    }
}

impl Guard {
    #[inline]
    fn eval(&self, slots: &[i64]) -> i64 {
        for t in &self.terms {
            let v = slots[t.slot];
            if v < t.lo || v > t.hi {
                return 0;
            }
        }
        1
    }
}

#[inline]
fn load(slots: &[i64], i: u32) -> Result<i64, EvalError> {
    match slots.get(i as usize) {
        Some(&v) => Ok(v),
        None => Err(missing_slot(i, slots.len())),
    }
}

#[cold]
#[inline(never)]
fn missing_slot(slot: u32, provided: usize) -> EvalError {
    EvalError::MissingSlot {
        slot: slot as usize,
        provided,
    }
}

impl GeneralProgram {
    /// Evaluates the program with checked arithmetic.
    #[inline]
    pub fn eval(&self, slots: &[i64]) -> Result<i64, EvalError> {
        if let Some(g) = &self.guard {
            // Without missing slots a guard cannot fail, so evaluation order
            // is unobservable.
            if slots.len() >= g.slots_needed {
                return Ok(g.eval(slots));
            }
        }
        self.eval_ops(slots)
    }

    /// Evaluates the postfix program itself (no guard fast path).
    fn eval_ops(&self, slots: &[i64]) -> Result<i64, EvalError> {
        if self.max_stack <= INLINE_STACK {
            let mut stack = [0i64; INLINE_STACK];
            self.run(&mut stack, slots)
        } else {
            let mut stack = vec![0i64; self.max_stack];
            self.run(&mut stack, slots)
        }
    }

    #[inline]
    fn run(&self, stack: &mut [i64], slots: &[i64]) -> Result<i64, EvalError> {
        let ops = &self.ops[..];
        let mut sp = 0usize;
        let mut pc = 0usize;
        while let Some(op) = ops.get(pc) {
            pc += 1;
            match op {
                Op::Const(c) => {
                    stack[sp] = *c;
                    sp += 1;
                }
                Op::Slot(i) => {
                    stack[sp] = load(slots, *i)?;
                    sp += 1;
                }
                Op::SlotBinK(i, ar, k) => {
                    stack[sp] = ar.apply(load(slots, *i)?, *k)?;
                    sp += 1;
                }
                Op::BinK(ar, k) => stack[sp - 1] = ar.apply(stack[sp - 1], *k)?,
                Op::Bin(ar) => {
                    sp -= 1;
                    stack[sp - 1] = ar.apply(stack[sp - 1], stack[sp])?;
                }
                Op::Neg => stack[sp - 1] = neg(stack[sp - 1])?,
                Op::Not => stack[sp - 1] = i64::from(stack[sp - 1] == 0),
                Op::Abs => stack[sp - 1] = abs(stack[sp - 1])?,
                Op::Wrap32(signed) => stack[sp - 1] = wrap32(stack[sp - 1], *signed),
                Op::Bool => stack[sp - 1] = i64::from(stack[sp - 1] != 0),
                Op::Jz(t) => {
                    sp -= 1;
                    if stack[sp] == 0 {
                        pc = *t as usize;
                    }
                }
                Op::Jnz(t) => {
                    sp -= 1;
                    if stack[sp] != 0 {
                        pc = *t as usize;
                    }
                }
                Op::Jump(t) => pc = *t as usize,
                Op::Fail(i) => return Err(self.errors[*i as usize].clone()),
            }
        }
        Ok(stack[sp - 1])
    }
}

impl Compiled {
    /// Evaluates with checked arithmetic. See the module documentation for
    /// the one way the affine form can differ from [`Expr::eval_with`].
    #[inline]
    pub fn eval(&self, slots: &[i64]) -> Result<i64, EvalError> {
        match self {
            Compiled::Affine(a) => a.eval_checked(slots),
            Compiled::General(p) => p.eval(slots),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{both, ev};
    use super::super::{Binding, compile, parse};
    use super::*;

    #[test]
    fn precedence_and_associativity() {
        assert_eq!(both("1 + 2 * 3"), Ok(7));
        assert_eq!(both("(1+2)*3"), Ok(9));
        assert_eq!(both("2 - 3 - 4"), Ok(-5));
        assert_eq!(both("100 / 10 / 5"), Ok(2));
        assert_eq!(both("1 < 2 && 3 > 4"), Ok(0));
        assert_eq!(both("1 < 2 || 3 > 4"), Ok(1));
        assert_eq!(both("0 || 0 && 1"), Ok(0));
        assert_eq!(both("1 || 0 && 0"), Ok(1));
        assert_eq!(both("1 + 1 == 2"), Ok(1));
        assert_eq!(both("-2 * -3"), Ok(6));
        assert_eq!(both("- (2 + 3) * 2"), Ok(-10));
        assert_eq!(both("!0"), Ok(1));
        assert_eq!(both("!7"), Ok(0));
        assert_eq!(both("!!7"), Ok(1));
        assert_eq!(both("!0 + 1"), Ok(2));
        assert_eq!(both("1 ? 2 : 3"), Ok(2));
        assert_eq!(both("0 ? 2 : 3"), Ok(3));
        assert_eq!(both("0 ? 1 : 0 ? 2 : 3"), Ok(3));
        assert_eq!(both("1 ? 0 ? 5 : 6 : 7"), Ok(6));
        assert_eq!(both("1 + 1 ? 10 : 20"), Ok(10));
        assert_eq!(both(" \t( 4\n)\r\n* 2 "), Ok(8));
    }

    #[test]
    fn floor_division_and_modulo() {
        assert_eq!(both("-7/2"), Ok(-4));
        assert_eq!(both("-7 % 2"), Ok(1));
        assert_eq!(both("7 % -2"), Ok(-1));
        assert_eq!(both("7 / -2"), Ok(-4));
        assert_eq!(both("-7 / -2"), Ok(3));
        assert_eq!(both("-7 % -2"), Ok(-1));
        assert_eq!(both("7 / 2"), Ok(3));
        assert_eq!(both("-8 / 2"), Ok(-4));
        assert_eq!(both("-8 % 2"), Ok(0));
        assert_eq!(both("-9223372036854775808 % -1"), Ok(0));
        assert_eq!(both("-9223372036854775808 / -1"), Err(EvalError::Overflow));
        assert_eq!(both("5 % 0"), Err(EvalError::DivisionByZero));
    }

    #[test]
    fn functions() {
        assert_eq!(both("min(3, -1, 2)"), Ok(-1));
        assert_eq!(both("max(3, -1, 2)"), Ok(3));
        assert_eq!(both("min(4, 9)"), Ok(4));
        // 32-bit wrap-around, as the GPU's 32-bit integer instructions leave a value
        assert_eq!(both("i32(2147483647)"), Ok(2_147_483_647));
        assert_eq!(both("i32(2147483647 + 1)"), Ok(-2_147_483_648));
        assert_eq!(both("i32(-2147483649)"), Ok(2_147_483_647));
        assert_eq!(both("i32(3 * 1073741824)"), Ok(-1_073_741_824));
        assert_eq!(both("u32(-1)"), Ok(4_294_967_295));
        assert_eq!(both("u32(4294967296 + 5)"), Ok(5));
        assert_eq!(both("u32(4294967295)"), Ok(4_294_967_295));
        // powers and integer logarithms, for loops whose variable halves or doubles
        assert_eq!(both("pow(2, 10)"), Ok(1024));
        assert_eq!(both("pow(-3, 3)"), Ok(-27));
        assert_eq!(both("pow(7, 0)"), Ok(1));
        assert_eq!(both("pow(2, 63)"), Err(EvalError::Overflow));
        assert_eq!(both("pow(2, -1)"), Err(EvalError::PowNegativeExponent));
        assert_eq!(both("ilog(2, 1)"), Ok(0));
        assert_eq!(both("ilog(2, 1023)"), Ok(9));
        assert_eq!(both("ilog(2, 1024)"), Ok(10));
        assert_eq!(both("ilog(3, 80)"), Ok(3));
        assert_eq!(both("ilog(2, 0)"), Ok(-1));
        assert_eq!(both("ilog(2, -5)"), Ok(-1));
        assert_eq!(both("ilog(1, 5)"), Err(EvalError::IlogBase));
        assert_eq!(both("cdiv(10, 4)"), Ok(3));
        assert_eq!(both("cdiv(8, 4)"), Ok(2));
        assert_eq!(both("cdiv(-1, 4)"), Ok(0));
        assert_eq!(both("cdiv(-5, 4)"), Ok(-1));
        assert_eq!(both("cdiv(0, 4)"), Ok(0));
        assert_eq!(
            both("cdiv(9223372036854775807, 2)"),
            Ok(4611686018427387904)
        );
        assert_eq!(both("cdiv(1, 0)"), Err(EvalError::CdivNonPositive));
        assert_eq!(both("cdiv(1, -3)"), Err(EvalError::CdivNonPositive));
        assert_eq!(both("abs(-5)"), Ok(5));
        assert_eq!(both("abs(5)"), Ok(5));
        assert_eq!(both("abs(-9223372036854775808)"), Err(EvalError::Overflow));
        assert_eq!(both("min(1, 2) + max(1, 2) * abs(-3)"), Ok(7));
    }

    #[test]
    fn overflow_and_division_by_zero() {
        assert_eq!(ev("9223372036854775807 + 1"), Err(EvalError::Overflow));
        let e = parse("9223372036854775807 + 1").unwrap();
        assert_eq!(compile(&e, &|_| None), Err(EvalError::Overflow));
        assert_eq!(both("-9223372036854775808 - 1"), Err(EvalError::Overflow));
        assert_eq!(both("4611686018427387904 * 2"), Err(EvalError::Overflow));
        assert_eq!(both("-(-9223372036854775808)"), Err(EvalError::Overflow));

        assert_eq!(ev("1 / 0"), Err(EvalError::DivisionByZero));
        assert_eq!(
            compile(&parse("1 / 0").unwrap(), &|_| None),
            Err(EvalError::DivisionByZero)
        );
        // First error in evaluation order wins.
        assert_eq!(
            both("(1 / 0) + (9223372036854775807 + 1)"),
            Err(EvalError::DivisionByZero)
        );
        assert_eq!(
            both("(9223372036854775807 + 1) + (1 / 0)"),
            Err(EvalError::Overflow)
        );
    }

    #[test]
    fn short_circuit() {
        assert_eq!(both("0 && 1/0"), Ok(0));
        assert_eq!(both("1 || 1/0"), Ok(1));
        assert_eq!(both("1 ? 5 : 1/0"), Ok(5));
        assert_eq!(both("0 ? 1/0 : 6"), Ok(6));
        assert_eq!(both("1 && 1/0"), Err(EvalError::DivisionByZero));
        assert_eq!(both("2 && 3"), Ok(1));
        assert_eq!(both("0 || -4"), Ok(1));

        // With a runtime condition the error is deferred to evaluation.
        let slot_x = |n: &str| (n == "x").then_some(Binding::Slot(0));
        let c = compile(&parse("x && 1/0").unwrap(), &slot_x).unwrap();
        assert!(c.as_affine().is_none());
        assert_eq!(c.eval(&[0]), Ok(0));
        assert_eq!(c.eval(&[3]), Err(EvalError::DivisionByZero));
        let c = compile(&parse("x ? 7 : cdiv(x, 0)").unwrap(), &slot_x).unwrap();
        assert_eq!(c.eval(&[1]), Ok(7));
        assert_eq!(c.eval(&[0]), Err(EvalError::CdivNonPositive));
        // An expression that always fails is a compile-time error.
        assert_eq!(
            compile(&parse("x + 1 / 0").unwrap(), &slot_x),
            Err(EvalError::DivisionByZero)
        );
        assert_eq!(
            compile(&parse("x / 0").unwrap(), &slot_x),
            Err(EvalError::DivisionByZero)
        );
        assert_eq!(
            compile(&parse("(x < 3) + cdiv(x, -1)").unwrap(), &slot_x),
            Err(EvalError::CdivNonPositive)
        );
    }

    #[test]
    fn wrong_arity_in_hand_built_trees() {
        let e = Expr::Call(Func::Cdiv, vec![Expr::Num(1)]);
        let err = EvalError::WrongArity {
            func: "cdiv",
            expected: "exactly 2 arguments",
            found: 1,
        };
        assert_eq!(e.eval_with(&|_| None), Err(err.clone()));
        assert_eq!(compile(&e, &|_| None), Err(err));
    }

    #[test]
    fn deep_general_program_uses_heap_stack() {
        // Right-nested products need a deep evaluation stack.
        let src = format!("{}x{}", "x * (".repeat(60), ")".repeat(60));
        let e = parse(&src).unwrap();
        let c = compile(&e, &|n| (n == "x").then_some(Binding::Slot(0))).unwrap();
        assert!(matches!(c, Compiled::General(_)));
        assert_eq!(c.eval(&[1]), Ok(1));
        assert_eq!(c.eval(&[-1]), Ok(-1));
        assert_eq!(c.eval(&[2]), Ok(1 << 61));
        assert_eq!(c.eval(&[3]), Err(EvalError::Overflow));
        assert_eq!(e.eval_with(&|_| Some(3)), Err(EvalError::Overflow));
        let Compiled::General(p) = &c else {
            unreachable!()
        };
        assert!(p.max_stack > INLINE_STACK);
    }

    #[test]
    fn guard_fast_path_matches_interpreter() {
        let resolve = |n: &str| match n {
            "x" => Some(Binding::Slot(0)),
            "y" => Some(Binding::Slot(2)),
            "n" => Some(Binding::Const(3)),
            "max" => Some(Binding::Const(i64::MAX)),
            "min" => Some(Binding::Const(i64::MIN)),
            _ => None,
        };
        let cases = [
            ("x < n && y < n", true),
            ("x >= 1 && x < n - 1 && 0 <= y && 2 > y", true),
            ("x == 2 && y <= -1", true),
            ("x > -2", true),
            ("x < max && x > min && y >= min && y <= max", true),
            ("x < min", false), // k - 1 would overflow: interpreter only
            ("x > max", false),
            ("x != 2 && y < n", false),
            ("x < y && y < n", false),
            ("x < n || y < n", false),
        ];
        for (src, fast) in cases {
            let c = compile(&parse(src).unwrap(), &resolve).unwrap();
            let Compiled::General(p) = &c else {
                panic!("{src} should be general");
            };
            assert_eq!(p.guard.is_some(), fast, "{src}");
            for x in -4..=4 {
                for y in -4..=4 {
                    let slots = [x, 99, y];
                    let reference = parse(src).unwrap().eval_with(&|n: &str| match n {
                        "x" => Some(x),
                        "y" => Some(y),
                        other => match resolve(other) {
                            Some(Binding::Const(k)) => Some(k),
                            _ => None,
                        },
                    });
                    assert_eq!(p.eval(&slots), reference, "{src} at {slots:?}");
                    assert_eq!(p.eval_ops(&slots), reference, "{src} at {slots:?}");
                    // Missing slots fall back to exact interpreter semantics.
                    assert_eq!(p.eval(&slots[..1]), p.eval_ops(&slots[..1]), "{src}");
                }
            }
        }
        let g = compile(&parse("x < n && y < n").unwrap(), &resolve).unwrap();
        assert_eq!(g.eval(&[5]), Ok(0));
        assert_eq!(
            g.eval(&[1]),
            Err(EvalError::MissingSlot {
                slot: 2,
                provided: 1
            })
        );
    }

    #[test]
    fn affine_unchecked_eval() {
        let a = Affine {
            c0: 10,
            coef: [1, -2, 3, 0, 0, 0, 0, 0, 0, 0],
        };
        assert_eq!(a.eval(&[1, 2, 3]), 16);
        assert_eq!(a.eval(&[1, 2]), 7); // missing slots count as zero
        assert!(!a.is_constant());
        assert!(Affine::constant(4).is_constant());
        assert_eq!(Affine::constant(i64::MAX).eval_checked(&[]), Ok(i64::MAX));
        let s = Affine {
            c0: i64::MAX,
            coef: [1, -1, 0, 0, 0, 0, 0, 0, 0, 0],
        };
        // Intermediate sums may leave the i64 range; only the result is checked.
        assert_eq!(s.eval_checked(&[1, 1]), Ok(i64::MAX));
        assert_eq!(s.eval_checked(&[2, 1]), Err(EvalError::Overflow));
    }
}
