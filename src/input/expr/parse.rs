//! The tokenizer and the recursive-descent parser from expression strings to the [`Expr`] tree,
//! with positions in errors and limits on nesting.

use super::{BinaryOp, Expr, Func, MAX_PARSE_DEPTH, MAX_PARSE_NESTING, ParseError, UnaryOp};
use std::str::FromStr;

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

#[cfg(test)]
mod tests {
    use super::super::EvalError;
    use super::super::test_support::{both, perr};
    use super::*;
    use proptest::prelude::*;

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
            perr("i32(a, b)").message,
            "function 'i32' expects exactly 1 argument but got 2"
        );
        assert_eq!(
            perr("u32(1, 2, 3)").message,
            "function 'u32' expects exactly 1 argument but got 3"
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

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn parse_never_panics(s in "[-+*/%!?:(),<>=&| 0-9a-z_.\n]{0,40}") {
            let _ = parse(&s);
        }
    }
}
