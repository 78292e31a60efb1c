//! The Gompertz curve y = a·exp(b·exp(c·(x − o0))), the "sigmoid" Ernst et al. 2023 fit to their
//! hit rates (Sect. 4.5). One type for everyone who handles it: [`super::ernst2023`] evaluates
//! it as a rate, `gputraffic fit` ([`crate::analysis::fit`]) fits a, b and c with its
//! [`Gompertz::value_and_gradient`], and `gputraffic plot` ([`crate::plot`]) draws it.

/// The curve y = a·exp(b·exp(c·(x − o0))). With `o0 = 0` it is the paper's form (and the one
/// `fit` fits); the authors' y-layer fit shifts x by 0.2.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gompertz {
    /// Amplitude (the limit of y where b·exp(c·(x − o0)) → 0).
    pub a: f64,
    /// Inner factor.
    pub b: f64,
    /// Rate in x.
    pub c: f64,
    /// Shift of x.
    pub o0: f64,
}

/// Bound on the inner exponent c·(x − o0) in [`Gompertz::eval`]: exp(±700) is finite.
const INNER_EXPONENT_LIMIT: f64 = 700.0;

impl Gompertz {
    /// The unshifted curve y = a·exp(b·exp(c·x)).
    pub fn new(a: f64, b: f64, c: f64) -> Gompertz {
        Gompertz { a, b, c, o0: 0.0 }
    }

    /// The unshifted curve with `p` = [a, b, c].
    pub fn from_params(p: [f64; 3]) -> Gompertz {
        Gompertz::new(p[0], p[1], p[2])
    }

    /// [a, b, c].
    pub fn params(&self) -> [f64; 3] {
        [self.a, self.b, self.c]
    }

    /// The curve at `x`, the inner exponent clamped to ±700 so that a large x gives 0 or ∞
    /// outside, never NaN from ∞ · 0 inside. Not clamped otherwise: the curve may be of any
    /// quantity, not only a rate.
    pub fn eval(&self, x: f64) -> f64 {
        let inner = (self.c * (x - self.o0))
            .clamp(-INNER_EXPONENT_LIMIT, INNER_EXPONENT_LIMIT)
            .exp();
        self.a * (self.b * inner).exp()
    }

    /// The curve at `x` as a rate, clamped to [0, 1]; `None` if it is not a number (e.g. a = 0
    /// with an infinite exponential).
    pub fn rate(&self, x: f64) -> Option<f64> {
        let r = self.eval(x);
        (!r.is_nan()).then(|| r.clamp(0.0, 1.0))
    }

    /// The curve at `x` without any clamping, as the fit minimises it: overflow gives ±∞ or
    /// NaN, which the fit treats as a step that does not reduce the error.
    pub fn eval_unclamped(&self, x: f64) -> f64 {
        self.a * (self.b * (self.c * (x - self.o0)).exp()).exp()
    }

    /// The curve at `x` (unclamped) and its analytic gradient in (a, b, c):
    /// ∂f/∂a = g, ∂f/∂b = a·g·E, ∂f/∂c = a·g·b·E·t with t = x − o0, E = exp(c·t), g = exp(b·E).
    pub fn value_and_gradient(&self, x: f64) -> (f64, [f64; 3]) {
        let t = x - self.o0;
        let e = (self.c * t).exp();
        let g = (self.b * e).exp();
        let f = self.a * g;
        // g·E as one exponential: where E overflows and g underflows to 0 the product is 0, not
        // the NaN of 0·∞.
        let ge = (self.b * e + self.c * t).exp();
        let ge = if g == 0.0 { 0.0 } else { ge };
        (f, [g, self.a * ge, self.a * self.b * ge * t])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamped_unclamped_and_rate() {
        let z = Gompertz::new(1.0, -0.0036, 3.97);
        assert_eq!(z.eval(0.0), (-0.0036f64).exp());
        assert_eq!(z.rate(1e9), Some(0.0));
        // b = 0: clamped 0·exp(700) = 0, unclamped 0·∞ = NaN.
        let flat = Gompertz::new(0.5, 0.0, 1.0);
        assert_eq!(flat.eval(1e6), 0.5);
        assert!(flat.eval_unclamped(1e6).is_nan());
        assert_eq!(Gompertz::new(0.0, 1.0, 1.0).rate(1e6), None);
        assert_eq!(Gompertz::new(2.0, -0.0036, 3.97).rate(0.0), Some(1.0));
        let shifted = Gompertz { o0: 0.2, ..z };
        assert_eq!(shifted.eval(0.2), z.eval(0.0));
    }

    #[test]
    fn gradient_matches_differences() {
        let p = Gompertz::new(0.9, -0.5, 1.1);
        let (f, j) = p.value_and_gradient(0.7);
        assert_eq!(f, p.eval_unclamped(0.7));
        let h = 1e-6;
        for k in 0..3 {
            let mut q = p.params();
            q[k] += h;
            let d = (Gompertz::from_params(q).eval_unclamped(0.7) - f) / h;
            assert!((d - j[k]).abs() < 1e-5, "{k}: {d} vs {}", j[k]);
        }
    }
}
