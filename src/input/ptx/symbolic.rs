//! The values the lifter tracks per PTX register: integers as polynomials over named atoms
//! (threadIdx, parameters, opaque sub-expressions such as `min(a, b)`), and predicates as
//! boolean formulas over comparisons, kept in disjunctive normal form so that the conditions
//! of a branch and of its merge point simplify back to the guard.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write;

thread_local! {
    /// The polynomial inside each wrap atom (`i32(…)`, `u32(…)`) made by [`Poly::wrapped`] on this
    /// thread, by the atom's text: what substitution and [`Poly::exact`] see through. A lift
    /// runs on one thread and clears it first ([`forget_wraps`]).
    static WRAPS: RefCell<HashMap<String, (Poly, bool)>> = RefCell::new(HashMap::new());
}

thread_local! {
    /// The parts of each power atom made by [`Poly::quotient_by_power`] and [`Poly::power`] on
    /// this thread, by the atom's text, as [`WRAPS`] holds the wraps': what substitution sees
    /// through, and what a loop whose variable halves or doubles is recognised by.
    static POWERS: RefCell<HashMap<String, PowerAtom>> = RefCell::new(HashMap::new());
}

/// An atom in which a loop's iteration is an exponent: the value of a variable that halves
/// (`s >>= 1`) or doubles (`d *= 2`) in each iteration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PowerAtom {
    /// `(dividend / pow(base, exponent))`, floor division: a variable that halves; `None`:
    /// `pow(base, exponent)`, a factor of a variable that doubles.
    pub dividend: Option<Poly>,
    /// The base, at least 2.
    pub base: i64,
    /// The exponent (the loop's iteration, plus the divisions or multiplications since).
    pub exponent: Poly,
}

/// Forgets the wrap and power atoms made so far on this thread (a lift starts with none).
pub fn forget_wraps() {
    WRAPS.with(|w| w.borrow_mut().clear());
    POWERS.with(|w| w.borrow_mut().clear());
}

/// The parts of a power atom, if `atom` is one.
pub fn power_of(atom: &str) -> Option<PowerAtom> {
    if !(atom.starts_with("pow(") || atom.starts_with('(')) {
        return None;
    }
    POWERS.with(|w| w.borrow().get(atom).cloned())
}

/// The polynomial an atom wraps around to 32 bits and whether signed, if it is a wrap atom.
fn wrap_of(atom: &str) -> Option<(Poly, bool)> {
    if !(atom.starts_with("i32(") || atom.starts_with("u32(")) {
        return None;
    }
    WRAPS.with(|w| w.borrow().get(atom).cloned())
}

/// A product of atoms (sorted, with repeats): `["blockDim.x", "blockIdx.x"]`. An atom is a
/// trace-language name or a parenthesised opaque expression.
pub type Monomial = Vec<String>;

/// An integer polynomial with 64-bit coefficients: the lifter's normal form of an index
/// expression, so that equal expressions compare equal and constant offsets fold.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Poly {
    /// Coefficient of each monomial (none zero); the empty monomial is the constant term.
    pub terms: BTreeMap<Monomial, i64>,
}

impl Poly {
    /// The constant `c`.
    pub fn constant(c: i64) -> Poly {
        let mut p = Poly::default();
        if c != 0 {
            p.terms.insert(Vec::new(), c);
        }
        p
    }

    /// The atom `name` (a name of the trace language or an opaque expression).
    pub fn atom(name: impl Into<String>) -> Poly {
        let mut p = Poly::default();
        p.terms.insert(vec![name.into()], 1);
        p
    }

    /// `self` wrapped around to 32 bits as the GPU's 32-bit integer arithmetic leaves it: the
    /// atom `i32(…)` (`signed`) or `u32(…)`, of the trace language's functions. A constant is
    /// wrapped at once.
    pub fn wrapped(&self, signed: bool) -> Poly {
        if let Some(c) = self.as_constant() {
            return Poly::constant(if signed {
                i64::from(c as i32)
            } else {
                i64::from(c as u32)
            });
        }
        let name = format!("{}({})", if signed { "i32" } else { "u32" }, self.to_expr());
        WRAPS.with(|w| {
            w.borrow_mut()
                .entry(name.clone())
                .or_insert_with(|| (self.clone(), signed));
        });
        Poly::atom(name)
    }

    /// `dividend / base^exponent` (floor division), as one atom (`base` at least 2; written
    /// `(dividend / base)` for the exponent 1); a constant where all three are.
    pub fn quotient_by_power(dividend: &Poly, base: i64, exponent: &Poly) -> Poly {
        Poly::power_atom(PowerAtom {
            dividend: Some(dividend.clone()),
            base,
            exponent: exponent.clone(),
        })
    }

    /// `base^exponent` as one atom (`base` at least 2); a constant where `exponent` is one.
    pub fn power(base: i64, exponent: &Poly) -> Poly {
        Poly::power_atom(PowerAtom {
            dividend: None,
            base,
            exponent: exponent.clone(),
        })
    }

    fn power_atom(mut parts: PowerAtom) -> Poly {
        // a variable that halves divided again by its base: one power further on (kept apart
        // where both powers are constants, as `((x / 2) / 2)` has always been written)
        if let Some(d) = &parts.dividend
            && let Some((atom, 1)) = d.as_scaled_atom()
            && let Some(inner) = power_of(atom)
            && let Some(inner_dividend) = &inner.dividend
            && inner.base == parts.base
            && (inner.exponent.as_constant().is_none() || parts.exponent.as_constant().is_none())
            && let Some(exponent) = inner.exponent.add(&parts.exponent)
        {
            parts = PowerAtom {
                dividend: Some(inner_dividend.clone()),
                base: parts.base,
                exponent,
            };
        }
        if let Some(e) = parts.exponent.as_constant()
            && let Ok(e) = u32::try_from(e)
            && let Some(power) = parts.base.checked_pow(e)
        {
            match &parts.dividend {
                None => return Poly::constant(power),
                Some(d) => {
                    if let Some(d) = d.as_constant() {
                        return Poly::constant(d.div_euclid(power));
                    }
                    if power == 1 {
                        return d.clone();
                    }
                }
            }
        }
        let name = match &parts.dividend {
            // a plain division by a constant, as the lifter has always written it
            Some(d) if parts.exponent == Poly::constant(1) => {
                format!("({} / {})", d.to_operand(), parts.base)
            }
            Some(d) => format!(
                "({} / pow({}, {}))",
                d.to_operand(),
                parts.base,
                parts.exponent.to_expr()
            ),
            None => format!("pow({}, {})", parts.base, parts.exponent.to_expr()),
        };
        POWERS.with(|w| {
            w.borrow_mut().entry(name.clone()).or_insert(parts);
        });
        Poly::atom(name)
    }

    /// `self` with every wrap atom replaced by what it wraps: the value where no 32-bit part
    /// wraps around (the arrays' extents are inferred from it).
    pub fn exact(&self) -> Poly {
        let mut out = self.clone();
        for atom in self.atoms() {
            if let Some((inner, _)) = wrap_of(atom)
                && let Some(p) = out.substitute(atom, &inner.exact())
            {
                out = p;
            }
        }
        out
    }

    /// The constant value, when the polynomial is one.
    pub fn as_constant(&self) -> Option<i64> {
        match self.terms.len() {
            0 => Some(0),
            1 => self.terms.get(&Vec::new()).copied(),
            _ => None,
        }
    }

    /// `self + other`, `None` on overflow.
    pub fn add(&self, other: &Poly) -> Option<Poly> {
        let mut out = self.clone();
        for (m, c) in &other.terms {
            let sum = out.terms.get(m).copied().unwrap_or(0).checked_add(*c)?;
            if sum == 0 {
                out.terms.remove(m);
            } else {
                out.terms.insert(m.clone(), sum);
            }
        }
        Some(out)
    }

    /// `self * k`, `None` on overflow.
    pub fn scale(&self, k: i64) -> Option<Poly> {
        if k == 0 {
            return Some(Poly::default());
        }
        let mut out = Poly::default();
        for (m, c) in &self.terms {
            out.terms.insert(m.clone(), c.checked_mul(k)?);
        }
        Some(out)
    }

    /// `self - other`, `None` on overflow.
    pub fn sub(&self, other: &Poly) -> Option<Poly> {
        self.add(&other.scale(-1)?)
    }

    /// `self * other`, `None` on overflow, past 64 terms or past degree 8 (index arithmetic
    /// never gets there).
    pub fn mul(&self, other: &Poly) -> Option<Poly> {
        let mut out = Poly::default();
        for (ma, ca) in &self.terms {
            for (mb, cb) in &other.terms {
                if ma.len() + mb.len() > 8 {
                    return None;
                }
                let mut m: Monomial = ma.iter().chain(mb).cloned().collect();
                m.sort();
                let term = Poly {
                    terms: BTreeMap::from([(m, ca.checked_mul(*cb)?)]),
                };
                out = out.add(&term)?;
            }
        }
        (out.terms.len() <= 64).then_some(out)
    }

    /// `self / k` when every coefficient is a multiple of `k`.
    pub fn exact_div(&self, k: i64) -> Option<Poly> {
        if k == 0 || self.terms.values().any(|c| c % k != 0) {
            return None;
        }
        let mut out = Poly::default();
        for (m, c) in &self.terms {
            out.terms.insert(m.clone(), c / k);
        }
        Some(out)
    }

    /// Whether `atom` is one of the polynomial's atoms, or of the polynomials inside its wrap
    /// and power atoms.
    pub fn mentions(&self, atom: &str) -> bool {
        self.atoms().iter().any(|a| {
            *a == atom
                || wrap_of(a).is_some_and(|(inner, _)| inner.mentions(atom))
                || power_of(a).is_some_and(|p| {
                    p.exponent.mentions(atom) || p.dividend.is_some_and(|d| d.mentions(atom))
                })
        })
    }

    /// The atom and its coefficient where the polynomial is one atom times a constant.
    pub fn as_scaled_atom(&self) -> Option<(&str, i64)> {
        let (m, &c) = self.terms.iter().next().filter(|_| self.terms.len() == 1)?;
        match m.as_slice() {
            [atom] => Some((atom.as_str(), c)),
            _ => None,
        }
    }

    /// Every atom the polynomial names.
    pub fn atoms(&self) -> BTreeSet<&str> {
        self.terms.keys().flatten().map(String::as_str).collect()
    }

    /// The coefficient of the monomial that is exactly `atom`.
    pub fn linear_coefficient(&self, atom: &str) -> i64 {
        self.terms
            .get(&vec![atom.to_string()])
            .copied()
            .unwrap_or(0)
    }

    /// `self` with every occurrence of `atom` replaced by `by`, inside wrap atoms too.
    pub fn substitute(&self, atom: &str, by: &Poly) -> Option<Poly> {
        let mut out = Poly::default();
        for (m, c) in &self.terms {
            let mut term = Poly::constant(*c);
            for a in m {
                let factor = if a == atom {
                    by.clone()
                } else if let Some((inner, signed)) = wrap_of(a)
                    && inner.mentions(atom)
                {
                    inner.substitute(atom, by)?.wrapped(signed)
                } else if let Some(p) = power_of(a)
                    && Poly::atom(a.clone()).mentions(atom)
                {
                    let dividend = match &p.dividend {
                        Some(d) => Some(d.substitute(atom, by)?),
                        None => None,
                    };
                    Poly::power_atom(PowerAtom {
                        dividend,
                        base: p.base,
                        exponent: p.exponent.substitute(atom, by)?,
                    })
                } else {
                    Poly::atom(a.clone())
                };
                term = term.mul(&factor)?;
            }
            out = out.add(&term)?;
        }
        Some(out)
    }

    /// The polynomial as a trace expression, terms in a stable order (higher degree first).
    pub fn to_expr(&self) -> String {
        if self.terms.is_empty() {
            return "0".into();
        }
        let mut terms: Vec<(&Monomial, &i64)> = self.terms.iter().collect();
        terms.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(b.0)));
        let mut s = String::new();
        for (i, &(m, &c)) in terms.iter().enumerate() {
            let magnitude = c.unsigned_abs();
            if i == 0 {
                if c < 0 {
                    s.push('-');
                }
            } else {
                s.push_str(if c < 0 { " - " } else { " + " });
            }
            if m.is_empty() {
                let _ = write!(s, "{magnitude}");
                continue;
            }
            if magnitude != 1 {
                let _ = write!(s, "{magnitude} * ");
            }
            s.push_str(&m.join(" * "));
        }
        s
    }

    /// [`Poly::to_expr`] in parentheses unless it is one atom or constant.
    pub fn to_operand(&self) -> String {
        let e = self.to_expr();
        let simple = self.terms.len() <= 1
            && self
                .terms
                .iter()
                .all(|(m, c)| (m.len() == 1 && *c == 1) || m.is_empty() && *c >= 0);
        if simple { e } else { format!("({e})") }
    }
}

/// A comparison `lhs OP 0`, the atoms of predicate formulas.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Comparison {
    /// The left side minus the right side of the PTX comparison.
    pub lhs: Poly,
    /// The operator, as the trace language writes it: `<`, `<=`, `>`, `>=`, `==`, `!=`.
    pub op: &'static str,
}

impl Comparison {
    /// The comparison that holds exactly when this one does not.
    pub fn negated(&self) -> Comparison {
        let op = match self.op {
            "<" => ">=",
            "<=" => ">",
            ">" => "<=",
            ">=" => "<",
            "==" => "!=",
            _ => "==",
        };
        Comparison {
            lhs: self.lhs.clone(),
            op,
        }
    }

    /// The comparison as a trace expression, `a < b` with the negative terms moved right.
    pub fn to_expr(&self) -> String {
        let mut left = Poly::default();
        let mut right = Poly::default();
        for (m, &c) in &self.lhs.terms {
            let side = if c < 0 { &mut right } else { &mut left };
            side.terms.insert(m.clone(), c.saturating_abs());
        }
        format!("{} {} {}", left.to_expr(), self.op, right.to_expr())
    }
}

/// A predicate in disjunctive normal form: true when any conjunction holds; a conjunction is a
/// set of comparisons. No terms is false; one empty term is true.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Dnf {
    /// The conjunctions.
    pub terms: BTreeSet<BTreeSet<Comparison>>,
}

/// Most conjunctions a predicate may grow to before the lifter gives up on it.
const MAX_TERMS: usize = 64;

impl Dnf {
    /// Always true.
    pub fn top() -> Dnf {
        Dnf {
            terms: BTreeSet::from([BTreeSet::new()]),
        }
    }

    /// Always false.
    pub fn bottom() -> Dnf {
        Dnf {
            terms: BTreeSet::new(),
        }
    }

    /// One comparison.
    pub fn comparison(c: Comparison) -> Dnf {
        if let Some(v) = c.lhs.as_constant() {
            let holds = match c.op {
                "<" => v < 0,
                "<=" => v <= 0,
                ">" => v > 0,
                ">=" => v >= 0,
                "==" => v == 0,
                _ => v != 0,
            };
            return if holds { Dnf::top() } else { Dnf::bottom() };
        }
        Dnf {
            terms: BTreeSet::from([BTreeSet::from([c])]),
        }
    }

    /// Whether this is always true.
    pub fn is_top(&self) -> bool {
        self.terms.contains(&BTreeSet::new())
    }

    /// `self || other`, simplified; `None` past `MAX_TERMS` conjunctions.
    pub fn or(&self, other: &Dnf) -> Option<Dnf> {
        let mut terms = self.terms.clone();
        terms.extend(other.terms.iter().cloned());
        Dnf { terms }.simplified()
    }

    /// `self && other`, simplified.
    pub fn and(&self, other: &Dnf) -> Option<Dnf> {
        let mut terms = BTreeSet::new();
        for a in &self.terms {
            for b in &other.terms {
                let t: BTreeSet<Comparison> = a.union(b).cloned().collect();
                if !t.iter().any(|c| t.contains(&c.negated())) {
                    terms.insert(t);
                }
            }
        }
        Dnf { terms }.simplified()
    }

    /// `!self`, simplified.
    pub fn not(&self) -> Option<Dnf> {
        let mut out = Dnf::top();
        for t in &self.terms {
            let mut negated = Dnf::bottom();
            for c in t {
                negated = negated.or(&Dnf::comparison(c.negated()))?;
            }
            out = out.and(&negated)?;
        }
        Some(out)
    }

    /// Absorption (`a || a && b` is `a`) and resolution of complementary comparisons
    /// (`a && b || a && !b` is `a`), repeated until nothing changes.
    fn simplified(mut self) -> Option<Dnf> {
        loop {
            if self.terms.len() > MAX_TERMS {
                return None;
            }
            let terms: Vec<BTreeSet<Comparison>> = self.terms.iter().cloned().collect();
            let mut changed = false;
            'search: for (i, a) in terms.iter().enumerate() {
                for (j, b) in terms.iter().enumerate() {
                    if i == j {
                        continue;
                    }
                    if a.is_subset(b) {
                        self.terms.remove(b);
                        changed = true;
                        break 'search;
                    }
                    if a.len() == b.len() {
                        let only_a: Vec<&Comparison> = a.difference(b).collect();
                        let only_b: Vec<&Comparison> = b.difference(a).collect();
                        if only_a.len() == 1
                            && only_b.len() == 1
                            && only_a[0].negated() == *only_b[0]
                        {
                            let mut merged = a.clone();
                            merged.remove(only_a[0]);
                            self.terms.remove(a);
                            self.terms.remove(b);
                            self.terms.insert(merged);
                            changed = true;
                            break 'search;
                        }
                    }
                }
            }
            if !changed {
                if self.terms.len() > 1 && self.is_tautology() {
                    return Some(Dnf::top());
                }
                return Some(self);
            }
        }
    }

    /// Whether the conjunctions cover every case of their comparisons, each comparison taken
    /// as a free truth value (so true whatever the values): the paths nvcc's branches split a
    /// block into, joined again after them (e.g. the barrier after an `if` that chains four
    /// edge tests). Pairwise resolution ([`Dnf::simplified`]) misses such covers when they need
    /// a consensus step. Decided by splitting on one comparison at a time; a cover is never
    /// claimed where it does not hold (the comparisons' arithmetic is not used, only `c` and
    /// `!c`).
    fn is_tautology(&self) -> bool {
        // Each comparison and its negation as one variable: (variable, whether it must hold).
        let mut variables: Vec<Comparison> = Vec::new();
        let terms: Vec<Vec<(usize, bool)>> = self
            .terms
            .iter()
            .map(|t| {
                t.iter()
                    .map(|c| {
                        let n = c.negated();
                        let (canonical, holds) = if *c <= n { (c, true) } else { (&n, false) };
                        let v = match variables.iter().position(|x| x == canonical) {
                            Some(v) => v,
                            None => {
                                variables.push(canonical.clone());
                                variables.len() - 1
                            }
                        };
                        (v, holds)
                    })
                    .collect()
            })
            .collect();
        // Past this many splits, give up (it is only a simplification; keeps it fast on any
        // input: the fuzzer's PTX too).
        let mut budget = 4096;
        covers_everything(&terms, &mut budget) == Some(true)
    }

    /// `self` with every occurrence of `atom` in its comparisons replaced by `by`; `None`
    /// on overflow or past `MAX_TERMS` conjunctions.
    pub fn substitute(&self, atom: &str, by: &Poly) -> Option<Dnf> {
        let mut out = Dnf::bottom();
        for t in &self.terms {
            let mut term = Dnf::top();
            for c in t {
                let lhs = c.lhs.substitute(atom, by)?;
                term = term.and(&Dnf::comparison(Comparison { lhs, op: c.op }))?;
            }
            out = out.or(&term)?;
        }
        Some(out)
    }

    /// The comparisons every conjunction holds (what all of them share).
    pub fn common(&self) -> BTreeSet<Comparison> {
        let mut it = self.terms.iter();
        let Some(first) = it.next() else {
            return BTreeSet::new();
        };
        it.fold(first.clone(), |acc, t| {
            acc.intersection(t).cloned().collect()
        })
    }

    /// `self` without the comparisons in `known` (which hold wherever `self` is asked).
    pub fn without(&self, known: &BTreeSet<Comparison>) -> Option<Dnf> {
        Dnf {
            terms: self
                .terms
                .iter()
                .map(|t| t.difference(known).cloned().collect())
                .collect(),
        }
        .simplified()
    }

    /// The predicate as a trace condition (`a < b && c < d || …`); `None` when always true.
    pub fn to_expr(&self) -> String {
        if self.terms.is_empty() {
            return "0 != 0".into();
        }
        let conjunctions: Vec<String> = self
            .terms
            .iter()
            .map(|t| {
                let parts: Vec<String> = t.iter().map(Comparison::to_expr).collect();
                if parts.is_empty() {
                    "0 == 0".into()
                } else {
                    parts.join(" && ")
                }
            })
            .collect();
        if conjunctions.len() == 1 {
            conjunctions[0].clone()
        } else {
            conjunctions
                .iter()
                .map(|c| {
                    if c.contains("&&") {
                        format!("({c})")
                    } else {
                        c.clone()
                    }
                })
                .collect::<Vec<_>>()
                .join(" || ")
        }
    }
}

/// Whether some conjunction of `terms` (literals: variable, required value) holds for every
/// assignment of the variables: Shannon expansion on the first variable of the first term.
/// `None` once `budget` splits are spent.
fn covers_everything(terms: &[Vec<(usize, bool)>], budget: &mut u32) -> Option<bool> {
    if terms.iter().any(|t| t.is_empty()) {
        return Some(true);
    }
    let Some(&(v, _)) = terms.first().and_then(|t| t.first()) else {
        return Some(false);
    };
    *budget = budget.checked_sub(1)?;
    for value in [true, false] {
        // The terms that survive `v = value`, without their literal of `v`.
        let rest: Vec<Vec<(usize, bool)>> = terms
            .iter()
            .filter(|t| t.iter().all(|&(u, h)| u != v || h == value))
            .map(|t| t.iter().copied().filter(|&(u, _)| u != v).collect())
            .collect();
        if !covers_everything(&rest, budget)? {
            return Some(false);
        }
    }
    Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lt(a: &str, b: &str) -> Comparison {
        Comparison {
            lhs: Poly::atom(a).sub(&Poly::atom(b)).unwrap(),
            op: "<",
        }
    }

    #[test]
    fn wrap_atoms_print_in_the_trace_language_and_substitution_sees_inside_them() {
        forget_wraps();
        let p = Poly::atom("k")
            .scale(4)
            .unwrap()
            .add(&Poly::atom("x"))
            .unwrap();
        let w = p.wrapped(true);
        assert_eq!(w.to_expr(), "i32(4 * k + x)");
        // the loop variable at its last value, inside the wrap
        let last = Poly::atom("n").sub(&Poly::constant(1)).unwrap();
        let at_last = w.substitute("k", &last).unwrap();
        assert_eq!(at_last.to_expr(), "i32(4 * n + x - 4)");
        assert!(at_last.mentions("n") && !at_last.mentions("k"));
        // the exact value, for extents: the wraps taken away
        assert_eq!(w.scale(2).unwrap().exact().to_expr(), "8 * k + 2 * x");
        assert_eq!(p.wrapped(false).to_expr(), "u32(4 * k + x)");
        // constants wrap at once
        assert_eq!(
            Poly::constant(1 << 31).wrapped(true).as_constant(),
            Some(-(1 << 31))
        );
        assert_eq!(
            Poly::constant(-1).wrapped(false).as_constant(),
            Some(4_294_967_295)
        );
    }

    #[test]
    fn polynomials_fold_constants_and_print_in_a_stable_order() {
        let x = Poly::atom("x");
        let p = x
            .add(&Poly::constant(4))
            .unwrap()
            .mul(&Poly::atom("pitch"))
            .unwrap();
        assert_eq!(p.to_expr(), "pitch * x + 4 * pitch");
        let bytes = p.scale(8).unwrap().add(&Poly::constant(-8)).unwrap();
        assert_eq!(
            bytes.exact_div(8).unwrap().to_expr(),
            "pitch * x + 4 * pitch - 1"
        );
        assert_eq!(bytes.add(&Poly::constant(4)).unwrap().exact_div(8), None);
        assert_eq!(x.sub(&x).unwrap().as_constant(), Some(0));
        assert_eq!(
            p.substitute("x", &Poly::constant(2)).unwrap().to_expr(),
            "6 * pitch"
        );
    }

    #[test]
    fn substituting_into_a_predicate_decides_the_comparisons_that_become_constant() {
        // k < n || k > 2 with k = 3: the second holds whatever n is
        let p = Dnf::comparison(lt("k", "n"))
            .or(&Dnf::comparison(Comparison {
                lhs: Poly::atom("k").sub(&Poly::constant(2)).unwrap(),
                op: ">",
            }))
            .unwrap();
        assert_eq!(p.substitute("k", &Poly::constant(3)).unwrap(), Dnf::top());
        // with k = 1 only 1 < n is left
        assert_eq!(
            p.substitute("k", &Poly::constant(1)).unwrap().to_expr(),
            "1 < n"
        );
        // with k = m - 1: m - 1 < n, or m > 3
        assert_eq!(
            p.substitute("k", &Poly::atom("m").sub(&Poly::constant(1)).unwrap())
                .unwrap()
                .to_expr(),
            "m > 3 || m < n + 1"
        );
    }

    #[test]
    fn paths_that_cover_every_case_join_to_always_true() {
        // jacobi2d_shared (tests/data/ptx/shared_stencil.cu): its four edge tests split the
        // block into the paths that reach the barrier after them, nine conjunctions of
        // a = (threadIdx.x + 1 == blockDim.x), b = (threadIdx.y + 1 == blockDim.y),
        // c = (x + 1 == nx), d = (y + 1 == ny); pairwise resolution leaves them as they are
        let eq = |a: &str, b: &str| Comparison {
            lhs: Poly::atom(a).sub(&Poly::atom(b)).unwrap(),
            op: "==",
        };
        let atoms = [
            eq("tx1", "bdx"),
            eq("ty1", "bdy"),
            eq("x1", "nx"),
            eq("y1", "ny"),
        ];
        // each path as the values of a, b, c, d it requires (None: not tested)
        let paths: [[Option<bool>; 4]; 9] = [
            [Some(false), Some(false), Some(false), Some(false)],
            [Some(false), Some(true), Some(false), None],
            [Some(false), None, Some(false), Some(true)],
            [Some(true), Some(false), None, Some(false)],
            [Some(true), Some(true), None, None],
            [Some(true), None, None, Some(true)],
            [None, Some(false), Some(true), Some(false)],
            [None, Some(true), Some(true), None],
            [None, None, Some(true), Some(true)],
        ];
        let term = |p: &[Option<bool>; 4]| -> BTreeSet<Comparison> {
            (p.iter().zip(&atoms))
                .filter_map(|(v, c)| v.map(|v| if v { c.clone() } else { c.negated() }))
                .collect()
        };
        let join = |paths: &[[Option<bool>; 4]]| {
            paths.iter().fold(Dnf::bottom(), |acc, p| {
                acc.or(&Dnf {
                    terms: BTreeSet::from([term(p)]),
                })
                .unwrap()
            })
        };
        assert_eq!(join(&paths), Dnf::top());
        // without the last path, a = b = 0, c = d = 1 is not covered: the join stays a condition
        let partial = join(&paths[..8]);
        assert!(!partial.is_top());
        assert_eq!(partial.terms.len(), 8);
        // comparisons are only taken as truth values: x < n || x > n is not claimed always true
        let lt_or_gt = Dnf::comparison(lt("x", "n"))
            .or(&Dnf::comparison(Comparison {
                lhs: Poly::atom("x").sub(&Poly::atom("n")).unwrap(),
                op: ">",
            }))
            .unwrap();
        assert!(!lt_or_gt.is_top());
    }

    #[test]
    fn a_branch_and_its_merge_simplify_back_to_the_guard() {
        let guard = Dnf::comparison(lt("x", "nx"));
        let inner = Dnf::comparison(lt("y", "ny"));
        let taken = guard.and(&inner).unwrap();
        let skipped = guard.and(&inner.not().unwrap()).unwrap();
        assert_eq!(taken.or(&skipped).unwrap(), guard);
        assert_eq!(taken.to_expr(), "x < nx && y < ny");
        // De Morgan: the exit condition of `x >= nx || y >= ny` negated is the guard
        let exit = Dnf::comparison(lt("x", "nx").negated())
            .or(&Dnf::comparison(lt("y", "ny").negated()))
            .unwrap();
        assert_eq!(exit.not().unwrap(), taken);
        assert_eq!(
            Dnf::comparison(Comparison {
                lhs: Poly::constant(-1),
                op: "<"
            }),
            Dnf::top()
        );
    }
}
