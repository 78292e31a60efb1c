//! Integer expressions used in kernel descriptions.
//!
//! Kernel description files contain integer expressions written as strings,
//! such as `"(z + P) * plane + (y + P) * pitch + (x + P)"`,
//! `"x < nx && y < ny"` or `"cdiv(nx, blockDim.x)"`. This module
//!
//! * parses them into an [`Expr`] tree ([`parse`]), reporting [`ParseError`]s
//!   with byte offset, line and column;
//! * evaluates a tree directly against a name lookup ([`Expr::eval_with`]),
//!   which is slow but simple and serves as the reference semantics;
//! * compiles a tree ([`compile`]) after resolving every name to a constant,
//!   a free-variable slot or another expression to inline, folding constants,
//!   into either an [`Affine`] form (`c0 + Σ coef[i] * slot[i]`, the fast
//!   path) or a [`GeneralProgram`] (a flat postfix program over a small
//!   fixed-size stack, used for guards such as `x < nx && y < ny`).
//!
//! This file holds the public types; the tokenizer and parser are in `parse.rs`, compilation
//! (folding, the affine form, the bytecode) in `lower.rs`, and every evaluator, the hot path, in
//! `eval.rs`.
//!
//! # Language
//!
//! * 64-bit signed decimal literals, with optional `_` separators between
//!   digits (`1_000`). A `-` directly applied to a literal forms a negative
//!   literal, so `-9223372036854775808` is accepted.
//! * Identifiers `[A-Za-z_][A-Za-z0-9_]*`, optionally followed by one `.` and
//!   a second such part (`threadIdx.x`).
//! * Operators, lowest to highest precedence: `?:` (right associative),
//!   `||`, `&&`, comparisons `== != < <= > >=`, `+ -`, `* / %`, unary `- !`.
//!   Comparisons are **non-associative**: `a < b < c` is a parse error; write
//!   `(a < b) < c` if that is really meant.
//! * `/` is floor division and `%` the matching modulo, whose result has the
//!   sign of the divisor (`-7 / 2 == -4`, `-7 % 2 == 1`, `7 % -2 == -1`).
//! * Comparisons, `&&`, `||` and `!` yield 0 or 1; any nonzero value is true.
//!   `&&`, `||` and `?:` evaluate only the operands they need.
//! * Functions: `min(a, b, ...)` and `max(a, b, ...)` (two or more
//!   arguments), `cdiv(a, b)` (ceiling division, `b` must be positive),
//!   `abs(a)`, `pow(a, b)` (`b` not negative), `ilog(b, x)` (the largest `e` with
//!   `b^e <= x`, -1 for `x < 1`; `b` at least 2), and `i32(a)` / `u32(a)`: `a` wrapped around to 32 bits as
//!   the GPU's 32-bit integer arithmetic does (two's complement, into
//!   `-2^31..2^31` or `0..2^32`), what the PTX lifter writes around index
//!   parts the kernel computes in 32 bits. [`compile_bounded`] drops a wrap
//!   whose operand provably fits.
//! * Arithmetic is checked: overflow, division or modulo by zero and `cdiv`
//!   by a non-positive number are reported as [`EvalError`]s.
//!
//! Evaluation is strictly left to right, so the *first* error encountered is
//! the one reported; compiled general programs reproduce exactly the value or
//! error of [`Expr::eval_with`]. The affine form is evaluated exactly (in
//! 128-bit arithmetic) and reports [`EvalError::Overflow`] only when the final
//! value does not fit in an `i64`; it may therefore succeed where the
//! original expression would overflow in an intermediate step that cancels
//! out (e.g. `(x + 9223372036854775807) - x`).

mod arith;
mod eval;
mod lower;
mod parse;

pub use lower::{
    Affine, Binding, Compiled, GeneralProgram, compile, compile_bounded, compile_split,
};
pub use parse::parse;

use arith::Arith;
use std::fmt;
use thiserror::Error;

/// Number of free-variable slots supported by the affine form.
pub const MAX_SLOTS: usize = 10;

/// Maximum depth of a tree produced by [`parse`] (a literal has depth 1; a
/// chain of `n` additions has depth `n + 1`).
pub const MAX_PARSE_DEPTH: usize = 64;

/// Maximum syntactic nesting accepted by [`parse`]: parentheses, function
/// calls and conditional branches nested inside each other. It is large
/// enough that the [`Display`](fmt::Display) form of any tree [`parse`]
/// accepts parses again.
pub const MAX_PARSE_NESTING: usize = 2 * MAX_PARSE_DEPTH + 2;

/// Maximum depth of nested [`Binding::Inline`] substitutions in [`compile`].
pub const MAX_INLINE_DEPTH: usize = 64;

/// Maximum depth of the expression tree after inlining in [`compile`].
pub const MAX_COMPILE_DEPTH: usize = 256;

/// Maximum number of tree nodes after inlining in [`compile`].
pub const MAX_COMPILE_NODES: usize = 1 << 16;

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/// A syntax error in an expression string.
///
/// Positions refer to the expression string itself; the caller adds file
/// context.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("line {line}, column {column}: {message}")]
pub struct ParseError {
    /// Byte offset of the offending token in the expression string.
    pub pos: usize,
    /// 1-based line number within the expression string.
    pub line: usize,
    /// 1-based column (counted in characters) within that line.
    pub column: usize,
    /// What was expected and what was found.
    pub message: String,
}

impl ParseError {
    /// Builds an error at byte offset `pos` of `src`, computing line and column.
    pub fn at(src: &str, pos: usize, message: impl Into<String>) -> Self {
        let pos = pos.min(src.len());
        let before = &src[..pos];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        ParseError {
            pos,
            line,
            column,
            message: message.into(),
        }
    }
}

/// An error while evaluating or compiling an expression.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EvalError {
    /// Division or modulo by zero.
    #[error("division or modulo by zero")]
    DivisionByZero,
    /// A result or intermediate value does not fit in a 64-bit signed integer.
    #[error("arithmetic overflow (value does not fit in a 64-bit signed integer)")]
    Overflow,
    /// A name that the lookup or resolver does not know.
    #[error("unknown variable '{0}'")]
    UnknownVariable(String),
    /// `cdiv(a, b)` with `b <= 0`.
    #[error("cdiv requires a positive divisor")]
    CdivNonPositive,
    /// `pow(a, b)` with `b < 0`.
    #[error("pow requires an exponent of 0 or more")]
    PowNegativeExponent,
    /// `ilog(b, x)` with `b < 2`.
    #[error("ilog requires a base of 2 or more")]
    IlogBase,
    /// A name was bound to a slot index that is not below [`MAX_SLOTS`].
    #[error("variable '{name}' is bound to slot {slot}, but only {max} slots are supported", max = MAX_SLOTS)]
    SlotOutOfRange {
        /// The variable name.
        name: String,
        /// The requested slot index.
        slot: usize,
    },
    /// A compiled expression reads a slot that the caller did not provide.
    #[error("slot {slot} is used but only {provided} slot values were given")]
    MissingSlot {
        /// The slot index read.
        slot: usize,
        /// Length of the slot slice passed to the evaluator.
        provided: usize,
    },
    /// Inline substitutions nested deeper than [`MAX_INLINE_DEPTH`].
    #[error("inlining '{0}' exceeds the maximum depth of {max} (is the definition cyclic?)", max = MAX_INLINE_DEPTH)]
    InlineTooDeep(String),
    /// The expression after inlining is deeper than [`MAX_COMPILE_DEPTH`] or
    /// larger than [`MAX_COMPILE_NODES`].
    #[error("expression is too large or too deeply nested after inlining")]
    TooComplex,
    /// A function call with the wrong number of arguments (only possible for
    /// trees built by hand; [`parse`] rejects these).
    #[error("function '{func}' expects {expected} but got {found}")]
    WrongArity {
        /// The function name.
        func: &'static str,
        /// Description of the accepted argument count.
        expected: &'static str,
        /// Number of arguments given.
        found: usize,
    },
}

// ---------------------------------------------------------------------------
// AST
// ---------------------------------------------------------------------------

/// A unary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// Arithmetic negation `-a`.
    Neg,
    /// Logical not `!a` (1 if `a == 0`, else 0).
    Not,
}

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// Floor division `a / b`.
    Div,
    /// Floor modulo `a % b` (sign of the divisor).
    Rem,
    /// `a == b`.
    Eq,
    /// `a != b`.
    Ne,
    /// `a < b`.
    Lt,
    /// `a <= b`.
    Le,
    /// `a > b`.
    Gt,
    /// `a >= b`.
    Ge,
    /// Short-circuit logical and `a && b`.
    And,
    /// Short-circuit logical or `a || b`.
    Or,
}

impl BinaryOp {
    /// The operator as written in source.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::And => "&&",
            BinaryOp::Or => "||",
        }
    }

    /// The strict arithmetic operation, or `None` for `&&` / `||`.
    fn arith(self) -> Option<Arith> {
        Some(match self {
            BinaryOp::Add => Arith::Add,
            BinaryOp::Sub => Arith::Sub,
            BinaryOp::Mul => Arith::Mul,
            BinaryOp::Div => Arith::Div,
            BinaryOp::Rem => Arith::Rem,
            BinaryOp::Eq => Arith::Eq,
            BinaryOp::Ne => Arith::Ne,
            BinaryOp::Lt => Arith::Lt,
            BinaryOp::Le => Arith::Le,
            BinaryOp::Gt => Arith::Gt,
            BinaryOp::Ge => Arith::Ge,
            BinaryOp::And | BinaryOp::Or => return None,
        })
    }
}

/// A built-in function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Func {
    /// `min(a, b, ...)`, two or more arguments.
    Min,
    /// `max(a, b, ...)`, two or more arguments.
    Max,
    /// `cdiv(a, b)`: ceiling of `a / b`; `b` must be positive.
    Cdiv,
    /// `abs(a)`.
    Abs,
    /// `pow(a, b)`: `a` to the power `b`; `b` must not be negative.
    Pow,
    /// `ilog(b, x)`: the largest `e` with `b^e <= x` for `x >= 1`, -1 for `x < 1`; `b` at
    /// least 2. The trips of a loop whose variable halves (`s >>= 1`) or doubles.
    Ilog,
    /// `i32(a)`: `a` wrapped around to a signed 32-bit value (two's complement).
    I32,
    /// `u32(a)`: `a` wrapped around to an unsigned 32-bit value (`a` modulo 2^32).
    U32,
}

impl Func {
    /// The function's name as written in source.
    pub fn name(self) -> &'static str {
        match self {
            Func::Min => "min",
            Func::Max => "max",
            Func::Cdiv => "cdiv",
            Func::Abs => "abs",
            Func::Pow => "pow",
            Func::Ilog => "ilog",
            Func::I32 => "i32",
            Func::U32 => "u32",
        }
    }

    /// Looks a function up by its source name.
    pub fn from_name(name: &str) -> Option<Func> {
        match name {
            "min" => Some(Func::Min),
            "max" => Some(Func::Max),
            "cdiv" => Some(Func::Cdiv),
            "abs" => Some(Func::Abs),
            "pow" => Some(Func::Pow),
            "ilog" => Some(Func::Ilog),
            "i32" => Some(Func::I32),
            "u32" => Some(Func::U32),
            _ => None,
        }
    }

    /// Whether `n` arguments are accepted.
    pub fn accepts(self, n: usize) -> bool {
        match self {
            Func::Min | Func::Max => n >= 2,
            Func::Cdiv | Func::Pow | Func::Ilog => n == 2,
            Func::Abs | Func::I32 | Func::U32 => n == 1,
        }
    }

    fn arity_text(self) -> &'static str {
        match self {
            Func::Min | Func::Max => "at least 2 arguments",
            Func::Cdiv | Func::Pow | Func::Ilog => "exactly 2 arguments",
            Func::Abs | Func::I32 | Func::U32 => "exactly 1 argument",
        }
    }

    fn check_arity(self, n: usize) -> Result<(), EvalError> {
        if self.accepts(n) {
            Ok(())
        } else {
            Err(EvalError::WrongArity {
                func: self.name(),
                expected: self.arity_text(),
                found: n,
            })
        }
    }
}

/// A parsed integer expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    /// An integer literal.
    Num(i64),
    /// A variable reference, e.g. `nx` or `threadIdx.x`.
    Var(String),
    /// A unary operation.
    Unary(UnaryOp, Box<Expr>),
    /// A binary operation.
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `cond ? then : else`.
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// A built-in function call.
    Call(Func, Vec<Expr>),
}

impl Expr {
    /// Names of all variables referenced (for dependency analysis /
    /// unknown-name errors), in first-appearance order, no duplicates.
    pub fn variables(&self) -> Vec<String> {
        fn walk(e: &Expr, out: &mut Vec<String>) {
            match e {
                Expr::Num(_) => {}
                Expr::Var(n) => {
                    if !out.iter().any(|o| o == n) {
                        out.push(n.clone());
                    }
                }
                Expr::Unary(_, a) => walk(a, out),
                Expr::Binary(_, a, b) => {
                    walk(a, out);
                    walk(b, out);
                }
                Expr::Cond(c, a, b) => {
                    walk(c, out);
                    walk(a, out);
                    walk(b, out);
                }
                Expr::Call(_, args) => args.iter().for_each(|a| walk(a, out)),
            }
        }
        let mut out = Vec::new();
        walk(self, &mut out);
        out
    }
}

/// Prints a re-parseable, fully parenthesised form: every binary operation
/// and conditional is wrapped in parentheses, negative literals print as
/// `(-5)` and unary operators as `(-x)` / `(!(a < b))`. Parsing the output
/// yields an equal tree, provided variable names are valid identifiers and
/// calls have valid argument counts.
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Num(n) if *n < 0 => write!(f, "({n})"),
            Expr::Num(n) => write!(f, "{n}"),
            Expr::Var(name) => f.write_str(name),
            Expr::Unary(op, a) => {
                let sym = match op {
                    UnaryOp::Neg => "-",
                    UnaryOp::Not => "!",
                };
                // A non-negative literal operand must be parenthesised so that
                // `-` is not read as part of a negative literal.
                if matches!(**a, Expr::Num(n) if n >= 0) {
                    write!(f, "({sym}({a}))")
                } else {
                    write!(f, "({sym}{a})")
                }
            }
            Expr::Binary(op, a, b) => write!(f, "({a} {} {b})", op.symbol()),
            Expr::Cond(c, a, b) => write!(f, "({c} ? {a} : {b})"),
            Expr::Call(func, args) => {
                write!(f, "{}(", func.name())?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{a}")?;
                }
                f.write_str(")")
            }
        }
    }
}

#[cfg(test)]
mod test_support {
    //! Helpers the tests of every part share.

    use super::*;

    /// Evaluates a constant expression with `eval_with`.
    pub(super) fn ev(src: &str) -> Result<i64, EvalError> {
        parse(src).unwrap().eval_with(&|_| None)
    }

    /// Compiles a constant expression and returns its folded value.
    pub(super) fn folded(src: &str) -> Result<i64, EvalError> {
        let c = compile(&parse(src).unwrap(), &|_| None)?;
        Ok(c.as_constant().expect("constant expression must fold"))
    }

    /// Both evaluators agree on a constant expression; returns the value.
    pub(super) fn both(src: &str) -> Result<i64, EvalError> {
        let a = ev(src);
        assert_eq!(a, folded(src), "eval_with and compile disagree on {src}");
        a
    }

    pub(super) fn perr(src: &str) -> ParseError {
        parse(src).expect_err("expected a parse error")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages() {
        assert_eq!(
            EvalError::DivisionByZero.to_string(),
            "division or modulo by zero"
        );
        assert_eq!(
            EvalError::UnknownVariable("nx".into()).to_string(),
            "unknown variable 'nx'"
        );
        assert_eq!(
            EvalError::CdivNonPositive.to_string(),
            "cdiv requires a positive divisor"
        );
        assert_eq!(
            EvalError::SlotOutOfRange {
                name: "q".into(),
                slot: 9
            }
            .to_string(),
            "variable 'q' is bound to slot 9, but only 10 slots are supported"
        );
    }
}
