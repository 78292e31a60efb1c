//! The checked integer arithmetic every evaluator shares (the reference interpreter, the
//! compiled programs of [`super::lower`]): floor division and modulo, `cdiv`, `pow`, `ilog`, and the strict
//! binary operations ([`Arith`]) that lowering emits. Overflow and division by zero are
//! [`EvalError`]s, never wrapping or panics.
//!
//! [`Arith`] is not [`super::BinaryOp`]: the parser's operators include the short-circuit `&&` and
//! `||` (lowered to jumps, never applied to two evaluated operands), and `min`, `max`, `cdiv`, `pow`
//! and `ilog`
//! are functions in the source but strict operations here.

use super::EvalError;

#[inline]
pub(super) fn neg(a: i64) -> Result<i64, EvalError> {
    a.checked_neg().ok_or(EvalError::Overflow)
}

#[inline]
pub(super) fn abs(a: i64) -> Result<i64, EvalError> {
    a.checked_abs().ok_or(EvalError::Overflow)
}

/// `a` wrapped around to 32 bits as the GPU's 32-bit integer arithmetic leaves it: two's
/// complement (`signed`, into `-2^31..2^31`) or modulo 2^32 (into `0..2^32`).
#[inline]
pub(super) fn wrap32(a: i64, signed: bool) -> i64 {
    if signed {
        i64::from(a as i32)
    } else {
        i64::from(a as u32)
    }
}

/// Floor division.
#[inline]
fn floor_div(a: i64, b: i64) -> Result<i64, EvalError> {
    if b == 0 {
        return Err(EvalError::DivisionByZero);
    }
    let q = a.checked_div(b).ok_or(EvalError::Overflow)?;
    let r = a.wrapping_rem(b);
    if r != 0 && ((r < 0) != (b < 0)) {
        Ok(q - 1)
    } else {
        Ok(q)
    }
}

/// Floor modulo: the result has the sign of the divisor.
#[inline]
fn floor_mod(a: i64, b: i64) -> Result<i64, EvalError> {
    if b == 0 {
        return Err(EvalError::DivisionByZero);
    }
    let r = a.wrapping_rem(b);
    if r != 0 && ((r < 0) != (b < 0)) {
        Ok(r + b)
    } else {
        Ok(r)
    }
}

/// Ceiling division with a positive divisor.
#[inline]
pub(super) fn cdiv(a: i64, b: i64) -> Result<i64, EvalError> {
    if b <= 0 {
        return Err(EvalError::CdivNonPositive);
    }
    let q = a / b;
    if a % b > 0 { Ok(q + 1) } else { Ok(q) }
}

/// `a` to the power `b`, `b` not negative.
#[inline]
pub(super) fn pow(a: i64, b: i64) -> Result<i64, EvalError> {
    let b = u32::try_from(b).map_err(|_| {
        if b < 0 {
            EvalError::PowNegativeExponent
        } else {
            EvalError::Overflow
        }
    })?;
    a.checked_pow(b).ok_or(EvalError::Overflow)
}

/// The largest `e` with `b^e <= x` for `x >= 1`, and -1 for `x < 1` (so `ilog(b, x) + 1` counts
/// the powers 1, b, b², … up to `x`: the trips of a loop whose variable halves or doubles);
/// `b` at least 2.
#[inline]
pub(super) fn ilog(b: i64, x: i64) -> Result<i64, EvalError> {
    if b < 2 {
        return Err(EvalError::IlogBase);
    }
    Ok(if x < 1 { -1 } else { i64::from(x.ilog(b)) })
}

/// Strict (both operands always evaluated) binary operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Arith {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Min,
    Max,
    Cdiv,
    Pow,
    Ilog,
}

impl Arith {
    #[inline]
    pub(super) fn apply(self, a: i64, b: i64) -> Result<i64, EvalError> {
        match self {
            Arith::Add => a.checked_add(b).ok_or(EvalError::Overflow),
            Arith::Sub => a.checked_sub(b).ok_or(EvalError::Overflow),
            Arith::Mul => a.checked_mul(b).ok_or(EvalError::Overflow),
            Arith::Div => floor_div(a, b),
            Arith::Rem => floor_mod(a, b),
            Arith::Eq => Ok(i64::from(a == b)),
            Arith::Ne => Ok(i64::from(a != b)),
            Arith::Lt => Ok(i64::from(a < b)),
            Arith::Le => Ok(i64::from(a <= b)),
            Arith::Gt => Ok(i64::from(a > b)),
            Arith::Ge => Ok(i64::from(a >= b)),
            Arith::Min => Ok(a.min(b)),
            Arith::Max => Ok(a.max(b)),
            Arith::Cdiv => cdiv(a, b),
            Arith::Pow => pow(a, b),
            Arith::Ilog => ilog(a, b),
        }
    }

    /// Never fails, whatever the operands.
    pub(super) fn is_infallible(self) -> bool {
        matches!(
            self,
            Arith::Eq
                | Arith::Ne
                | Arith::Lt
                | Arith::Le
                | Arith::Gt
                | Arith::Ge
                | Arith::Min
                | Arith::Max
        )
    }

    /// Always yields 0 or 1.
    pub(super) fn is_boolean(self) -> bool {
        matches!(
            self,
            Arith::Eq | Arith::Ne | Arith::Lt | Arith::Le | Arith::Gt | Arith::Ge
        )
    }
}
