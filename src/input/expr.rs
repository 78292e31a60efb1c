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
//!   arguments), `cdiv(a, b)` (ceiling division, `b` must be positive) and
//!   `abs(a)`.
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

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// Number of free-variable slots supported by the affine form.
pub const MAX_SLOTS: usize = 8;

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

/// Number of stack entries a [`GeneralProgram`] evaluates in without
/// allocating; deeper programs fall back to a heap-allocated stack.
const INLINE_STACK: usize = 16;

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
}

impl Func {
    /// The function's name as written in source.
    pub fn name(self) -> &'static str {
        match self {
            Func::Min => "min",
            Func::Max => "max",
            Func::Cdiv => "cdiv",
            Func::Abs => "abs",
        }
    }

    /// Looks a function up by its source name.
    pub fn from_name(name: &str) -> Option<Func> {
        match name {
            "min" => Some(Func::Min),
            "max" => Some(Func::Max),
            "cdiv" => Some(Func::Cdiv),
            "abs" => Some(Func::Abs),
            _ => None,
        }
    }

    /// Whether `n` arguments are accepted.
    pub fn accepts(self, n: usize) -> bool {
        match self {
            Func::Min | Func::Max => n >= 2,
            Func::Cdiv => n == 2,
            Func::Abs => n == 1,
        }
    }

    fn arity_text(self) -> &'static str {
        match self {
            Func::Min | Func::Max => "at least 2 arguments",
            Func::Cdiv => "exactly 2 arguments",
            Func::Abs => "exactly 1 argument",
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

/// Parses an expression string.
pub fn parse(src: &str) -> Result<Expr, ParseError> {
    let toks = lex(src)?;
    let mut p = Parser {
        src,
        toks,
        i: 0,
        nest: 0,
    };
    let (e, _) = p.ternary()?;
    let t = p.peek();
    if t.kind != Tok::End {
        return Err(p.err_at(
            t,
            format!(
                "expected an operator or end of expression but found {}",
                p.describe(t)
            ),
        ));
    }
    Ok(e)
}

impl FromStr for Expr {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse(s)
    }
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
                    Func::Cdiv => {
                        let x = args[0].eval_with(lookup)?;
                        let y = args[1].eval_with(lookup)?;
                        cdiv(x, y)
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

// ---------------------------------------------------------------------------
// Checked arithmetic shared by every evaluator
// ---------------------------------------------------------------------------

#[inline]
fn neg(a: i64) -> Result<i64, EvalError> {
    a.checked_neg().ok_or(EvalError::Overflow)
}

#[inline]
fn abs(a: i64) -> Result<i64, EvalError> {
    a.checked_abs().ok_or(EvalError::Overflow)
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
fn cdiv(a: i64, b: i64) -> Result<i64, EvalError> {
    if b <= 0 {
        return Err(EvalError::CdivNonPositive);
    }
    let q = a / b;
    if a % b > 0 { Ok(q + 1) } else { Ok(q) }
}

/// Strict (both operands always evaluated) binary operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arith {
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
}

impl Arith {
    #[inline]
    fn apply(self, a: i64, b: i64) -> Result<i64, EvalError> {
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
        }
    }

    /// Never fails, whatever the operands.
    fn is_infallible(self) -> bool {
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
    fn is_boolean(self) -> bool {
        matches!(
            self,
            Arith::Eq | Arith::Ne | Arith::Lt | Arith::Le | Arith::Gt | Arith::Ge
        )
    }
}

// ---------------------------------------------------------------------------
// Lexer
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    /// Literal magnitude, at most 2^63 (only valid when negated).
    Num(u64),
    Ident,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Bang,
    Question,
    Colon,
    LParen,
    RParen,
    Comma,
    AndAnd,
    OrOr,
    EqEq,
    NotEq,
    Lt,
    Le,
    Gt,
    Ge,
    End,
}

#[derive(Debug, Clone, Copy)]
struct Token {
    kind: Tok,
    pos: usize,
    end: usize,
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_ident_continue(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn lex(src: &str) -> Result<Vec<Token>, ParseError> {
    const LIMIT: u64 = 1 << 63;
    let bytes = src.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        if c.is_ascii() && c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if !c.is_ascii() {
            let ch = src[i..].chars().next().unwrap_or('?');
            if ch.is_whitespace() {
                i += ch.len_utf8();
                continue;
            }
            return Err(ParseError::at(
                src,
                i,
                format!("unexpected character '{ch}'"),
            ));
        }
        let two = |a: u8, b: u8| c == a && bytes.get(i + 1) == Some(&b);
        let kind = if c.is_ascii_digit() {
            while i < bytes.len() && is_ident_continue(bytes[i]) {
                i += 1;
            }
            let text = &src[start..i];
            let well_formed = text.bytes().all(|b| b.is_ascii_digit() || b == b'_')
                && !text.ends_with('_')
                && !text.contains("__");
            if !well_formed {
                return Err(ParseError::at(
                    src,
                    start,
                    format!("invalid integer literal '{text}'"),
                ));
            }
            let digits: String = text.chars().filter(|&ch| ch != '_').collect();
            match digits.parse::<u64>() {
                Ok(v) if v <= LIMIT => Tok::Num(v),
                _ => {
                    return Err(ParseError::at(
                        src,
                        start,
                        format!("integer literal '{text}' does not fit in a 64-bit signed integer"),
                    ));
                }
            }
        } else if is_ident_start(c) {
            i += 1;
            while i < bytes.len() && is_ident_continue(bytes[i]) {
                i += 1;
            }
            if i + 1 < bytes.len() && bytes[i] == b'.' && is_ident_start(bytes[i + 1]) {
                i += 2;
                while i < bytes.len() && is_ident_continue(bytes[i]) {
                    i += 1;
                }
            }
            Tok::Ident
        } else {
            let (kind, len) = if two(b'&', b'&') {
                (Tok::AndAnd, 2)
            } else if two(b'|', b'|') {
                (Tok::OrOr, 2)
            } else if two(b'=', b'=') {
                (Tok::EqEq, 2)
            } else if two(b'!', b'=') {
                (Tok::NotEq, 2)
            } else if two(b'<', b'=') {
                (Tok::Le, 2)
            } else if two(b'>', b'=') {
                (Tok::Ge, 2)
            } else {
                let k = match c {
                    b'+' => Tok::Plus,
                    b'-' => Tok::Minus,
                    b'*' => Tok::Star,
                    b'/' => Tok::Slash,
                    b'%' => Tok::Percent,
                    b'!' => Tok::Bang,
                    b'?' => Tok::Question,
                    b':' => Tok::Colon,
                    b'(' => Tok::LParen,
                    b')' => Tok::RParen,
                    b',' => Tok::Comma,
                    b'<' => Tok::Lt,
                    b'>' => Tok::Gt,
                    _ => {
                        let hint = match c {
                            b'=' => "; did you mean '=='?",
                            b'&' => "; did you mean '&&'?",
                            b'|' => "; did you mean '||'?",
                            _ => "",
                        };
                        return Err(ParseError::at(
                            src,
                            i,
                            format!("unexpected character '{}'{hint}", c as char),
                        ));
                    }
                };
                (k, 1)
            };
            i += len;
            kind
        };
        toks.push(Token {
            kind,
            pos: start,
            end: i,
        });
    }
    toks.push(Token {
        kind: Tok::End,
        pos: src.len(),
        end: src.len(),
    });
    Ok(toks)
}

// ---------------------------------------------------------------------------
// Parser
// ---------------------------------------------------------------------------

struct Parser<'s> {
    src: &'s str,
    toks: Vec<Token>,
    i: usize,
    /// Current recursion nesting (parentheses, call arguments, conditional
    /// branches).
    nest: usize,
}

/// A parsed subtree with its depth.
type Parsed = (Expr, usize);

/// Binding power of comparison operators (they are non-associative).
const CMP_PREC: u8 = 3;

fn binary_op(kind: Tok) -> Option<(BinaryOp, u8)> {
    Some(match kind {
        Tok::OrOr => (BinaryOp::Or, 1),
        Tok::AndAnd => (BinaryOp::And, 2),
        Tok::EqEq => (BinaryOp::Eq, CMP_PREC),
        Tok::NotEq => (BinaryOp::Ne, CMP_PREC),
        Tok::Lt => (BinaryOp::Lt, CMP_PREC),
        Tok::Le => (BinaryOp::Le, CMP_PREC),
        Tok::Gt => (BinaryOp::Gt, CMP_PREC),
        Tok::Ge => (BinaryOp::Ge, CMP_PREC),
        Tok::Plus => (BinaryOp::Add, 4),
        Tok::Minus => (BinaryOp::Sub, 4),
        Tok::Star => (BinaryOp::Mul, 5),
        Tok::Slash => (BinaryOp::Div, 5),
        Tok::Percent => (BinaryOp::Rem, 5),
        _ => return None,
    })
}

impl<'s> Parser<'s> {
    fn peek(&self) -> Token {
        self.toks[self.i]
    }

    fn bump(&mut self) -> Token {
        let t = self.toks[self.i];
        if t.kind != Tok::End {
            self.i += 1;
        }
        t
    }

    fn text(&self, t: Token) -> &'s str {
        &self.src[t.pos..t.end]
    }

    fn describe(&self, t: Token) -> String {
        if t.kind == Tok::End {
            "end of expression".to_string()
        } else {
            format!("'{}'", self.text(t))
        }
    }

    #[cold]
    #[inline(never)]
    fn err_at(&self, t: Token, message: String) -> ParseError {
        ParseError::at(self.src, t.pos, message)
    }

    /// "expected WHAT but found TOKEN" at `t`.
    #[cold]
    #[inline(never)]
    fn expected(&self, what: &str, t: Token) -> ParseError {
        self.err_at(t, format!("expected {what} but found {}", self.describe(t)))
    }

    fn expect(&mut self, kind: Tok, what: &str) -> Result<Token, ParseError> {
        let t = self.peek();
        if t.kind == kind {
            Ok(self.bump())
        } else {
            Err(self.expected(what, t))
        }
    }

    #[cold]
    #[inline(never)]
    fn too_deep(&self, t: Token, limit: usize) -> ParseError {
        self.err_at(
            t,
            format!("expression is nested too deeply (more than {limit} levels)"),
        )
    }

    fn enter(&mut self, t: Token) -> Result<(), ParseError> {
        self.nest += 1;
        if self.nest > MAX_PARSE_NESTING {
            Err(self.too_deep(t, MAX_PARSE_NESTING))
        } else {
            Ok(())
        }
    }

    fn leave(&mut self) {
        self.nest -= 1;
    }

    /// Builds a node of depth `1 + child_depth`, checking the limit.
    fn node(&self, t: Token, e: Expr, child_depth: usize) -> Result<Parsed, ParseError> {
        let d = child_depth + 1;
        if d > MAX_PARSE_DEPTH {
            Err(self.too_deep(t, MAX_PARSE_DEPTH))
        } else {
            Ok((e, d))
        }
    }

    /// A full expression, including `?:`.
    fn ternary(&mut self) -> Result<Parsed, ParseError> {
        let cond = self.binary(0)?;
        let q = self.peek();
        if q.kind != Tok::Question {
            return Ok(cond);
        }
        self.bump();
        self.enter(q)?;
        let a = self.ternary()?;
        self.expect(Tok::Colon, "':' of the conditional expression")?;
        let b = self.ternary()?;
        self.leave();
        let d = cond.1.max(a.1).max(b.1);
        self.node(
            q,
            Expr::Cond(Box::new(cond.0), Box::new(a.0), Box::new(b.0)),
            d,
        )
    }

    /// Binary operators binding at least as tightly as `min_prec`
    /// (precedence climbing; all binary operators are left associative
    /// except comparisons, which do not chain).
    fn binary(&mut self, min_prec: u8) -> Result<Parsed, ParseError> {
        let mut lhs = self.unary()?;
        loop {
            let t = self.peek();
            let Some((op, prec)) = binary_op(t.kind) else {
                return Ok(lhs);
            };
            if prec < min_prec {
                return Ok(lhs);
            }
            self.bump();
            let rhs = self.binary(prec + 1)?;
            if prec == CMP_PREC {
                let next = self.peek();
                if matches!(binary_op(next.kind), Some((_, CMP_PREC))) {
                    return Err(self.err_at(
                        next,
                        format!(
                            "comparison operators cannot be chained: found {} after a comparison; add parentheses",
                            self.describe(next)
                        ),
                    ));
                }
            }
            let d = lhs.1.max(rhs.1);
            lhs = self.node(t, Expr::Binary(op, Box::new(lhs.0), Box::new(rhs.0)), d)?;
        }
    }

    /// Prefix operators, parsed iteratively so that long chains cannot
    /// exhaust the stack.
    fn unary(&mut self) -> Result<Parsed, ParseError> {
        let mut prefix = Vec::new();
        let mut e = loop {
            let t = self.peek();
            match t.kind {
                Tok::Minus => {
                    self.bump();
                    if let Tok::Num(v) = self.peek().kind {
                        // Negative literal; 2^63 is allowed here.
                        self.bump();
                        break (Expr::Num(0i64.wrapping_sub_unsigned(v)), 1);
                    }
                    prefix.push((t, UnaryOp::Neg));
                }
                Tok::Bang => {
                    self.bump();
                    prefix.push((t, UnaryOp::Not));
                }
                _ => break self.primary()?,
            }
        };
        for (t, op) in prefix.into_iter().rev() {
            e = self.node(t, Expr::Unary(op, Box::new(e.0)), e.1)?;
        }
        Ok(e)
    }

    fn primary(&mut self) -> Result<Parsed, ParseError> {
        let t = self.peek();
        match t.kind {
            Tok::Num(v) => {
                self.bump();
                match i64::try_from(v) {
                    Ok(n) => Ok((Expr::Num(n), 1)),
                    Err(_) => Err(self.err_at(
                        t,
                        format!(
                            "integer literal '{}' does not fit in a 64-bit signed integer",
                            self.text(t)
                        ),
                    )),
                }
            }
            Tok::Ident => {
                self.bump();
                if self.peek().kind == Tok::LParen {
                    self.call(t)
                } else {
                    Ok((Expr::Var(self.text(t).to_string()), 1))
                }
            }
            Tok::LParen => {
                self.bump();
                self.enter(t)?;
                let e = self.ternary()?;
                self.expect(Tok::RParen, "')'")?;
                self.leave();
                Ok(e)
            }
            _ => Err(self.expected("an expression", t)),
        }
    }

    /// A call of the function named by `t`; the next token is `(`.
    fn call(&mut self, t: Token) -> Result<Parsed, ParseError> {
        let name = self.text(t);
        let Some(func) = Func::from_name(name) else {
            return Err(self.err_at(t, format!("unknown function '{name}'")));
        };
        self.bump();
        self.enter(t)?;
        let mut args = Vec::new();
        let mut depth = 0;
        loop {
            let a = self.ternary()?;
            depth = depth.max(a.1);
            args.push(a.0);
            let sep = self.bump();
            match sep.kind {
                Tok::Comma => {}
                Tok::RParen => break,
                _ => {
                    return Err(
                        self.expected(&format!("',' or ')' in the arguments of '{name}'"), sep)
                    );
                }
            }
        }
        self.leave();
        if !func.accepts(args.len()) {
            return Err(self.err_at(
                t,
                format!(
                    "function '{name}' expects {} but got {}",
                    func.arity_text(),
                    args.len()
                ),
            ));
        }
        self.node(t, Expr::Call(func, args), depth)
    }
}

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
            Node::Not(a) => a.is_infallible(),
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
            Func::Min => it.fold(first, |acc, n| Node::bin(Arith::Min, acc, n)),
            Func::Max => it.fold(first, |acc, n| Node::bin(Arith::Max, acc, n)),
        })
    }
}

/// One instruction of a [`GeneralProgram`].
#[derive(Debug, Clone, PartialEq)]
enum Op {
    Const(i64),
    Slot(u32),
    Neg,
    Not,
    Abs,
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
    ops: Vec<Op>,
    errors: Vec<EvalError>,
    max_stack: usize,
    /// Fast path for guards: the expression is a `&&` chain of comparisons
    /// of a slot with a constant, i.e. 1 iff every term's slot lies in its
    /// range (checked in source order).
    guard: Option<Guard>,
}

/// A conjunction of slot range checks `lo <= slot <= hi`.
#[derive(Debug, Clone, PartialEq)]
struct Guard {
    terms: Vec<RangeTerm>,
    /// One more than the largest slot index read.
    slots_needed: usize,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct RangeTerm {
    slot: usize,
    lo: i64,
    hi: i64,
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

/// A compiled expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Compiled {
    /// Affine in the slots (including constants).
    Affine(Affine),
    /// Anything else.
    General(GeneralProgram),
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
    let mut lw = Lowerer { resolve, nodes: 0 };
    let node = lw.lower(expr, 0, 0)?;
    if let Node::Fail(e) = node {
        return Err(e);
    }
    Ok(match node.affine() {
        Some(a) => Compiled::Affine(a),
        None => Compiled::General(GeneralProgram::new(&node)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Evaluates a constant expression with `eval_with`.
    fn ev(src: &str) -> Result<i64, EvalError> {
        parse(src).unwrap().eval_with(&|_| None)
    }

    /// Compiles a constant expression and returns its folded value.
    fn folded(src: &str) -> Result<i64, EvalError> {
        let c = compile(&parse(src).unwrap(), &|_| None)?;
        Ok(c.as_constant().expect("constant expression must fold"))
    }

    /// Both evaluators agree on a constant expression; returns the value.
    fn both(src: &str) -> Result<i64, EvalError> {
        let a = ev(src);
        assert_eq!(a, folded(src), "eval_with and compile disagree on {src}");
        a
    }

    fn perr(src: &str) -> ParseError {
        parse(src).expect_err("expected a parse error")
    }

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
    fn literals() {
        assert_eq!(both("1_000 * 2"), Ok(2000));
        assert_eq!(both("9223372036854775807"), Ok(i64::MAX));
        assert_eq!(both("-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(parse("-5"), Ok(Expr::Num(-5)));
        assert!(perr("9223372036854775808").message.contains("does not fit"));
        assert!(
            perr("99999999999999999999999")
                .message
                .contains("does not fit")
        );
        assert!(
            perr("1__0")
                .message
                .contains("invalid integer literal '1__0'")
        );
        assert!(perr("10_").message.contains("invalid integer literal"));
        assert!(
            perr("12ab")
                .message
                .contains("invalid integer literal '12ab'")
        );
    }

    #[test]
    fn identifiers() {
        let e = parse("threadIdx.x + blockDim.y * _n2 - nx").unwrap();
        assert_eq!(
            e.variables(),
            vec!["threadIdx.x", "blockDim.y", "_n2", "nx"]
        );
        let lookup = |n: &str| match n {
            "threadIdx.x" => Some(3),
            "blockDim.y" => Some(4),
            "_n2" => Some(5),
            "nx" => Some(1),
            _ => None,
        };
        assert_eq!(e.eval_with(&lookup), Ok(22));
        // Duplicates appear once, in first-appearance order, across all operand kinds.
        let e = parse("c ? min(b, a.x) : b + c + d").unwrap();
        assert_eq!(e.variables(), vec!["c", "b", "a.x", "d"]);
        assert_eq!(
            parse("q").unwrap().eval_with(&lookup),
            Err(EvalError::UnknownVariable("q".into()))
        );
        // A variable may share a name with a function when not called.
        assert_eq!(parse("min").unwrap(), Expr::Var("min".into()));
        // Only one dot.
        assert_eq!(perr("a.b.c").message, "unexpected character '.'");
        assert_eq!(perr("a.b.c").pos, 3);
    }

    #[test]
    fn parse_errors() {
        let e = perr("1 +");
        assert_eq!((e.pos, e.line, e.column), (3, 1, 4));
        assert_eq!(
            e.message,
            "expected an expression but found end of expression"
        );
        assert_eq!(
            e.to_string(),
            "line 1, column 4: expected an expression but found end of expression"
        );

        let e = perr("(1");
        assert_eq!(e.message, "expected ')' but found end of expression");
        assert_eq!((e.pos, e.column), (2, 3));

        let e = perr("foo(1)");
        assert_eq!(e.message, "unknown function 'foo'");
        assert_eq!((e.pos, e.column), (0, 1));

        let e = perr("2 * * 3");
        assert_eq!(e.message, "expected an expression but found '*'");
        assert_eq!(e.column, 5);

        assert_eq!(
            perr("").message,
            "expected an expression but found end of expression"
        );
        assert_eq!(
            perr("1 2").message,
            "expected an operator or end of expression but found '2'"
        );
        assert_eq!(
            perr("a ? b").message,
            "expected ':' of the conditional expression but found end of expression"
        );
        assert!(perr("a < b < c").message.contains("cannot be chained"));
        assert_eq!(
            perr("a = b").message,
            "unexpected character '='; did you mean '=='?"
        );
        assert_eq!(
            perr("a & b").message,
            "unexpected character '&'; did you mean '&&'?"
        );
        assert_eq!(perr("a # b").message, "unexpected character '#'");
        assert_eq!(
            perr("min(1)").message,
            "function 'min' expects at least 2 arguments but got 1"
        );
        assert_eq!(
            perr("cdiv(1, 2, 3)").message,
            "function 'cdiv' expects exactly 2 arguments but got 3"
        );
        assert_eq!(
            perr("abs()").message,
            "expected an expression but found ')'"
        );
        assert_eq!(
            perr("max(1 2)").message,
            "expected ',' or ')' in the arguments of 'max' but found '2'"
        );
        assert_eq!(
            perr("1)").message,
            "expected an operator or end of expression but found ')'"
        );
    }

    #[test]
    fn multi_line_positions() {
        let src = "a +\n  b *\n  * c";
        let e = perr(src);
        assert_eq!(e.message, "expected an expression but found '*'");
        assert_eq!((e.pos, e.line, e.column), (12, 3, 3));
        assert_eq!(
            e.to_string(),
            "line 3, column 3: expected an expression but found '*'"
        );

        // Columns count characters, not bytes.
        let e = perr("x\n  é");
        assert_eq!((e.pos, e.line, e.column), (4, 2, 3));
        assert_eq!(e.message, "unexpected character 'é'");

        let e = perr("(x +\n y");
        assert_eq!((e.pos, e.line, e.column), (7, 2, 3));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
        assert!(perr(&deep).message.contains("nested too deeply"));
        let chain = vec!["1"; 10_000].join(" + ");
        assert!(perr(&chain).message.contains("nested too deeply"));
        let negs = format!("{}x", "-".repeat(10_000));
        assert!(perr(&negs).message.contains("nested too deeply"));
        let conds = format!("{}0", "1 ? 0 : ".repeat(10_000));
        assert!(perr(&conds).message.contains("nested too deeply"));
        let calls = format!("{}1{}", "abs(".repeat(10_000), ")".repeat(10_000));
        assert!(perr(&calls).message.contains("nested too deeply"));

        let n = MAX_PARSE_NESTING;
        let ok = format!("{}1{}", "(".repeat(n), ")".repeat(n));
        assert_eq!(both(&ok), Ok(1));
        let bad = format!("{}1{}", "(".repeat(n + 1), ")".repeat(n + 1));
        assert!(
            perr(&bad)
                .message
                .contains(&format!("more than {n} levels"))
        );
        // 64 terms: 63 additions, tree depth 64.
        let ok = vec!["1"; MAX_PARSE_DEPTH].join(" + ");
        assert_eq!(both(&ok), Ok(64));
        let too_deep = vec!["1"; MAX_PARSE_DEPTH + 1].join(" + ");
        assert!(perr(&too_deep).message.contains("more than 64 levels"));
    }

    #[test]
    fn display_of_maximal_trees_reparses() {
        let d = MAX_PARSE_DEPTH;
        let mut shapes = Vec::new();
        // Right-nested conditionals: two nesting levels per tree level.
        let mut e = Expr::Num(5);
        for _ in 1..d {
            e = Expr::Cond(
                Box::new(Expr::Var("c".into())),
                Box::new(Expr::Num(-1)),
                Box::new(e),
            );
        }
        shapes.push(e);
        // Negations of a non-negative literal print as "(-(5))".
        let mut e = Expr::Num(5);
        for _ in 1..d {
            e = Expr::Unary(UnaryOp::Neg, Box::new(e));
        }
        shapes.push(e);
        // Right-nested calls and products.
        let mut e = Expr::Num(-3);
        for i in 1..d {
            e = if i % 2 == 0 {
                Expr::Call(Func::Max, vec![Expr::Num(1), e])
            } else {
                Expr::Binary(BinaryOp::Mul, Box::new(Expr::Var("x".into())), Box::new(e))
            };
        }
        shapes.push(e);
        for e in shapes {
            let shown = e.to_string();
            assert_eq!(parse(&shown), Ok(e.clone()));
            let deeper = Expr::Unary(UnaryOp::Not, Box::new(e));
            assert!(
                perr(&deeper.to_string())
                    .message
                    .contains("nested too deeply")
            );
        }
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
    fn display_round_trips() {
        for src in [
            "(z + P) * plane + (y + P) * pitch + (x + P)",
            "x < nx && y < ny || !z",
            "min(cz, nz - z0)",
            "cdiv(nx, blockDim.x)",
            "-5 - -x + -(3) * -(-2)",
            "a ? b ? 1 : 2 : c ? 3 : -9223372036854775808",
            "max(1, 2, abs(-x)) % (y / 2)",
            "!!(a == b) != (c >= d)",
        ] {
            let e = parse(src).unwrap();
            let shown = e.to_string();
            assert_eq!(parse(&shown).unwrap(), e, "{src} -> {shown}");
        }
        assert_eq!(parse("1 + 2 * x").unwrap().to_string(), "(1 + (2 * x))");
        assert_eq!(parse("-5").unwrap().to_string(), "(-5)");
        assert_eq!(parse("-(5)").unwrap().to_string(), "(-(5))");
        assert_eq!(parse("!x").unwrap().to_string(), "(!x)");
        assert_eq!(parse("a?b:c").unwrap().to_string(), "(a ? b : c)");
        assert_eq!(parse("min(a,b+1)").unwrap().to_string(), "min(a, (b + 1))");
        assert_eq!("a+1".parse::<Expr>().unwrap(), parse("a + 1").unwrap());
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
            coef: [1, 136, 9792, 32, 4 * 136, 2 * 9792, 0, 0],
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
            "big" => Some(Binding::Slot(8)),
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
                slot: 8
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
            coef: [1, -2, 3, 0, 0, 0, 0, 0],
        };
        assert_eq!(a.eval(&[1, 2, 3]), 16);
        assert_eq!(a.eval(&[1, 2]), 7); // missing slots count as zero
        assert!(!a.is_constant());
        assert!(Affine::constant(4).is_constant());
        assert_eq!(Affine::constant(i64::MAX).eval_checked(&[]), Ok(i64::MAX));
        let s = Affine {
            c0: i64::MAX,
            coef: [1, -1, 0, 0, 0, 0, 0, 0],
        };
        // Intermediate sums may leave the i64 range; only the result is checked.
        assert_eq!(s.eval_checked(&[1, 1]), Ok(i64::MAX));
        assert_eq!(s.eval_checked(&[2, 1]), Err(EvalError::Overflow));
    }

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
            "variable 'q' is bound to slot 9, but only 8 slots are supported"
        );
    }

    // ---------------------------------------------------------------- proptest

    const NAMES: [&str; 4] = ["s0", "s1", "blk.x", "t.y"];

    fn arb_expr() -> impl Strategy<Value = Expr> {
        let leaf = prop_oneof![
            4 => (-6i64..=6).prop_map(Expr::Num),
            4 => (0..NAMES.len()).prop_map(|i| Expr::Var(NAMES[i].to_string())),
            1 => Just(Expr::Var("k".into())),
            1 => Just(Expr::Var("c".into())),
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
                1 => inner.clone().prop_map(|a| Expr::Call(Func::Abs, vec![a])),
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

        #[test]
        fn parse_never_panics(s in "[-+*/%!?:(),<>=&| 0-9a-z_.\n]{0,40}") {
            let _ = parse(&s);
        }
    }
}
