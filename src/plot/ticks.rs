//! Axis ticks a reader can read: round values (1-2-5 steps, whole powers on log axes), as many
//! as the axis has room for and never more than [`MAX_TICKS`], labels in one number style per
//! axis with just the digits that tell them apart, and never two labels overlapping.
//!
//! [`choose`] tries tick sets from dense to sparse and takes the first whose labels, measured in
//! the bundled font ([`text_width`]), keep a gap of [`MIN_GAP_EM`] (side by side on a horizontal
//! axis) or a spacing of [`MIN_SPACING_EM`] (stacked on a vertical axis). The number styles:
//! - plain (`0.25`, `4096`), every label with the decimals of the step, when the largest value
//!   lies in 0.001..100000;
//! - otherwise `m×10ⁿ` with one exponent for the whole axis (`4.34×10⁶`, `4.36×10⁶`), 0 as `0`;
//! - on a log axis spanning several powers: whole powers `10ⁿ` / `2ⁿ`, or `1`, `2`, `5` times
//!   powers of ten written `m×10ⁿ` (or plain, when every value is in the plain range).
//!
//! Never a mix of `e` notation and powers: there is no `e` notation on an axis.

use ab_glyph::{Font, FontRef, ScaleFont};
use std::sync::OnceLock;

/// The bundled font (DejaVu Sans, licence in assets/fonts/LICENSE-DejaVu.txt): plots must render
/// on machines without system fonts.
pub(super) static FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

/// How an axis maps data to position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Position proportional to the value.
    Linear,
    /// Position proportional to log2 of the value; ticks read 2ⁿ.
    Log2,
    /// Position proportional to log10 of the value; ticks read 10ⁿ.
    Log10,
}

impl Scale {
    /// The value's position on the axis; `None` where the scale cannot show it (≤ 0 on a log axis).
    pub fn to_axis(self, v: f64) -> Option<f64> {
        let p = match self {
            Scale::Linear => v,
            Scale::Log2 if v > 0.0 => v.log2(),
            Scale::Log10 if v > 0.0 => v.log10(),
            _ => return None,
        };
        p.is_finite().then_some(p)
    }
}

/// The most ticks an axis gets, however long it is.
pub const MAX_TICKS: usize = 8;
/// The least free space between two labels side by side, in font sizes (em).
pub const MIN_GAP_EM: f64 = 1.5;
/// The least distance between the centres of two labels stacked on a vertical axis, in em.
pub const MIN_SPACING_EM: f64 = 2.2;

/// The direction in which an axis runs (its labels sit side by side on a horizontal one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Orientation {
    /// An x axis.
    Horizontal,
    /// A y axis.
    Vertical,
}

/// One tick: where it is on the axis (its position, log of the value on a log axis) and what it
/// says.
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    /// Axis position (the value on a linear axis, its logarithm on a log axis).
    pub position: f64,
    /// The label.
    pub label: String,
}

/// An axis to put ticks on: its scale, the shown range of positions, its length in pixels and
/// the labels' font size in pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AxisRoom {
    /// Linear or logarithmic.
    pub scale: Scale,
    /// Lowest shown position (log of the value on a log axis).
    pub lo: f64,
    /// Highest shown position.
    pub hi: f64,
    /// Length of the axis in pixels.
    pub length: f64,
    /// Font size of the labels in pixels.
    pub font: f64,
    /// Which way the axis runs.
    pub orientation: Orientation,
}

/// The width in pixels of `text` set in the bundled font at `size` pixels (advances and
/// kerning, as the PNG backend lays it out).
pub fn text_width(text: &str, size: f64) -> f64 {
    static PARSED: OnceLock<Option<FontRef<'static>>> = OnceLock::new();
    let Some(font) = PARSED.get_or_init(|| FontRef::try_from_slice(FONT).ok()) else {
        // Unreachable with the bundled font; a generous estimate keeps labels apart anyway.
        return 0.7 * size * text.chars().count() as f64;
    };
    let scaled = font.as_scaled(size as f32);
    let mut width = 0f32;
    let mut previous = None;
    for c in text.chars() {
        let id = scaled.glyph_id(c);
        if let Some(p) = previous {
            width += scaled.kern(p, id);
        }
        width += scaled.h_advance(id);
        previous = Some(id);
    }
    width as f64
}

impl AxisRoom {
    /// Pixel offset of position `p` from the axis start.
    fn pixel(&self, p: f64) -> f64 {
        (p - self.lo) / (self.hi - self.lo) * self.length
    }

    /// The pixel interval each label covers along the axis.
    pub fn extents(&self, ticks: &[Tick]) -> Vec<(f64, f64)> {
        ticks
            .iter()
            .map(|t| {
                let centre = self.pixel(t.position);
                let half = match self.orientation {
                    Orientation::Horizontal => text_width(&t.label, self.font) / 2.0,
                    Orientation::Vertical => self.font / 2.0,
                };
                (centre - half, centre + half)
            })
            .collect()
    }

    /// Whether the labels keep their distance (see the module doc).
    pub fn fits(&self, ticks: &[Tick]) -> bool {
        if ticks.len() > MAX_TICKS {
            return false;
        }
        let extents = self.extents(ticks);
        extents.windows(2).all(|w| match self.orientation {
            Orientation::Horizontal => w[1].0 - w[0].1 >= MIN_GAP_EM * self.font,
            Orientation::Vertical => {
                (w[1].0 + w[1].1) / 2.0 - (w[0].0 + w[0].1) / 2.0 >= MIN_SPACING_EM * self.font
            }
        })
    }
}

/// The ticks of `axis`: the densest candidate set that fits (see the module doc); when none
/// with two ticks fits, one tick in the middle of the range, and none for an empty range.
pub fn choose(axis: &AxisRoom) -> Vec<Tick> {
    let (lo, hi) = (axis.lo, axis.hi);
    if !(lo.is_finite() && hi.is_finite() && hi > lo && axis.length > 0.0) {
        return Vec::new();
    }
    let mut fallback: Option<Vec<Tick>> = None;
    for candidate in candidates(axis.scale, lo, hi) {
        if candidate.is_empty() {
            continue;
        }
        if axis.fits(&candidate) {
            if candidate.len() >= 2 || fallback.is_none() {
                return candidate;
            }
            // A lone tick: remember it, a later candidate may still give two.
            fallback = fallback.or(Some(candidate));
            continue;
        }
        if fallback.is_none() && candidate.len() <= 3 {
            // The middle tick of a set that does not fit: one label never overlaps.
            fallback = Some(vec![candidate[candidate.len() / 2].clone()]);
        }
    }
    fallback.unwrap_or_default()
}

/// The tick sets worth trying on a range of positions, densest first.
fn candidates(scale: Scale, lo: f64, hi: f64) -> Vec<Vec<Tick>> {
    match scale {
        Scale::Linear => linear_candidates(lo, hi, Some),
        Scale::Log2 | Scale::Log10 => {
            let base: f64 = if scale == Scale::Log2 { 2.0 } else { 10.0 };
            let whole = hi.floor() - lo.ceil() + 1.0;
            let mut sets = Vec::new();
            // 1, 2 and 5 times powers of ten read best on a log axis when there are three of
            // them; with fewer (under about half a decade) round values as on a linear axis.
            let one_two_five = if scale == Scale::Log10 && hi - lo <= 4.0 {
                one_two_five(lo, hi)
            } else {
                Vec::new()
            };
            let linear = || linear_candidates(base.powf(lo), base.powf(hi), |v| scale.to_axis(v));
            if whole < 2.0 {
                // Under two whole powers.
                if one_two_five.len() >= 3 {
                    sets.push(one_two_five);
                    sets.extend(linear());
                } else {
                    sets.extend(linear());
                    sets.push(one_two_five);
                }
                return sets;
            }
            sets.push(one_two_five);
            let steps = [1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 100];
            for step in steps {
                let step = step as f64;
                let first = (lo / step).ceil() as i64;
                let last = (hi / step).floor() as i64;
                let sign = if scale == Scale::Log2 { "2" } else { "10" };
                sets.push(
                    (first..=last)
                        .map(|k| {
                            let p = k as f64 * step;
                            Tick {
                                position: p,
                                label: format!("{sign}{}", superscript(p as i64)),
                            }
                        })
                        .collect(),
                );
                if last - first < 1 {
                    break;
                }
            }
            sets
        }
    }
}

/// Ticks at 1, 2 and 5 times whole powers of ten between positions `lo` and `hi` (log10).
fn one_two_five(lo: f64, hi: f64) -> Vec<Tick> {
    let mut values = Vec::new();
    for k in (lo.floor() as i64 - 1)..=(hi.ceil() as i64) {
        for m in [1.0, 2.0, 5.0] {
            let v = m * 10f64.powi(k as i32);
            let p = v.log10();
            if p >= lo - 1e-12 && p <= hi + 1e-12 {
                values.push((p, m, k));
            }
        }
    }
    let plain = values
        .iter()
        .all(|&(_, m, k)| (1e-3..1e5).contains(&(m * 10f64.powi(k as i32))));
    values
        .into_iter()
        .map(|(p, m, k)| Tick {
            position: p,
            label: if plain {
                let decimals = (-k).max(0) as usize;
                format!("{:.decimals$}", m * 10f64.powi(k as i32))
            } else {
                format!("{m}×10{}", superscript(k))
            },
        })
        .collect()
}

/// Tick sets at 1-2-5 steps of the value between `lo` and `hi` (values), densest first, from the
/// step that gives at most [`MAX_TICKS`] ticks until one tick is left; `position` maps a value to
/// its axis position (`None` drops it).
fn linear_candidates(lo: f64, hi: f64, position: impl Fn(f64) -> Option<f64>) -> Vec<Vec<Tick>> {
    let span = hi - lo;
    if !(span > 0.0 && span.is_finite()) {
        return Vec::new();
    }
    let mut sets = Vec::new();
    let mut exponent = (span / MAX_TICKS as f64).log10().floor() as i32;
    'steps: loop {
        for m in [1i64, 2, 5] {
            let step = m as f64 * 10f64.powi(exponent);
            let first = (lo / step - 1e-9).ceil() as i64;
            let last = (hi / step + 1e-9).floor() as i64;
            let count = last - first + 1;
            if count > MAX_TICKS as i64 {
                continue;
            }
            let values: Vec<f64> = (first..=last)
                .map(|k| {
                    // Exact multiples: k·m·10^e computed from integers where it can be.
                    if exponent >= 0 {
                        (k * m) as f64 * 10f64.powi(exponent)
                    } else {
                        (k * m) as f64 / 10f64.powi(-exponent)
                    }
                })
                .collect();
            let labels = linear_labels(&values, exponent);
            sets.push(
                values
                    .iter()
                    .zip(labels)
                    .filter_map(|(&v, label)| {
                        Some(Tick {
                            position: position(v)?,
                            label,
                        })
                    })
                    .collect(),
            );
            if count <= 1 {
                break 'steps;
            }
        }
        exponent += 1;
        if exponent > 400 {
            break;
        }
    }
    sets
}

/// Labels of values that are multiples of a step m·10^`step_exponent` (m = 1, 2, 5): plain with
/// the step's decimals when the largest |value| is in 0.001..100000, else `m×10ⁿ` with the
/// exponent of the largest |value| and the decimals the step needs; zero is `0`. Negative values
/// carry a true minus sign.
pub fn linear_labels(values: &[f64], step_exponent: i32) -> Vec<String> {
    let largest = values.iter().fold(0f64, |m, v| m.max(v.abs()));
    if largest == 0.0 {
        return values.iter().map(|_| "0".to_string()).collect();
    }
    let e = largest.log10().floor() as i32;
    // log10 may land just below a whole power (log10(1000) = 2.9999…).
    let e = if 10f64.powi(e + 1) <= largest * (1.0 + 1e-12) {
        e + 1
    } else {
        e
    };
    let plain = (-3..=4).contains(&e);
    values
        .iter()
        .map(|&v| {
            if plain {
                let decimals = (-step_exponent).max(0) as usize;
                minus(&format!("{v:.decimals$}"))
            } else if v == 0.0 {
                "0".to_string()
            } else {
                let decimals = (e - step_exponent).max(0) as usize;
                let mantissa = v / 10f64.powi(e);
                format!(
                    "{}×10{}",
                    minus(&format!("{mantissa:.decimals$}")),
                    superscript(e as i64)
                )
            }
        })
        .collect()
}

/// `s` with a leading ASCII hyphen as a true minus sign, and "−0" (a rounded tiny negative) as 0.
fn minus(s: &str) -> String {
    match s.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        Some(rest) => format!("−{rest}"),
        None => s.to_string(),
    }
}

/// `n` in superscript digits (`⁻¹²`).
pub fn superscript(n: i64) -> String {
    n.to_string()
        .chars()
        .map(|c| match c {
            '-' => '⁻',
            '0' => '⁰',
            '1' => '¹',
            '2' => '²',
            '3' => '³',
            '4' => '⁴',
            '5' => '⁵',
            '6' => '⁶',
            '7' => '⁷',
            '8' => '⁸',
            _ => '⁹',
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(scale: Scale, lo: f64, hi: f64, length: f64, orientation: Orientation) -> AxisRoom {
        AxisRoom {
            scale,
            lo,
            hi,
            length,
            font: 16.0,
            orientation,
        }
    }

    fn labels(ticks: &[Tick]) -> Vec<&str> {
        ticks.iter().map(|t| t.label.as_str()).collect()
    }

    /// Every property the module promises, for one axis.
    fn check(a: &AxisRoom) {
        let ticks = choose(a);
        let what = format!("{a:?}: {:?}", labels(&ticks));
        assert!(!ticks.is_empty(), "no tick: {what}");
        assert!(ticks.len() <= MAX_TICKS, "{what}");
        // Inside the range, increasing, distinct labels.
        let eps = 1e-9 * (a.hi - a.lo);
        assert!(
            ticks
                .iter()
                .all(|t| t.position >= a.lo - eps && t.position <= a.hi + eps),
            "{what}"
        );
        assert!(
            ticks.windows(2).all(|w| w[0].position < w[1].position),
            "{what}"
        );
        let mut distinct = labels(&ticks);
        distinct.dedup();
        assert_eq!(distinct.len(), ticks.len(), "{what}");
        // Labels never overlap, and keep their gap.
        let extents = a.extents(&ticks);
        for w in extents.windows(2) {
            match a.orientation {
                Orientation::Horizontal => {
                    assert!(w[1].0 - w[0].1 >= a.font * MIN_GAP_EM - 1e-9, "{what}")
                }
                Orientation::Vertical => assert!(w[1].0 >= w[0].1, "{what}"),
            }
        }
        // One number style: no e notation; either every label written with powers (×10ⁿ or a
        // bare power) or none.
        assert!(ticks.iter().all(|t| !t.label.contains('e')), "{what}");
        // (0 is 0 in every style.)
        let powered = |t: &Tick| t.label.chars().any(|c| "⁰¹²³⁴⁵⁶⁷⁸⁹⁻".contains(c));
        let n = ticks.iter().filter(|t| powered(t)).count();
        let zeros = ticks.iter().filter(|t| t.label == "0").count();
        assert!(n == 0 || n + zeros == ticks.len(), "mixed styles: {what}");
        // Linear-style labels share their number of decimals.
        if n == 0 || ticks.iter().all(|t| t.label.contains("×10")) {
            let decimals = |t: &Tick| {
                let mantissa = t.label.split('×').next().unwrap_or("");
                mantissa.split_once('.').map_or(0, |(_, d)| d.len())
            };
            let nonzero: Vec<usize> = ticks
                .iter()
                .filter(|t| t.label != "0")
                .map(decimals)
                .collect();
            if a.scale == Scale::Linear {
                assert!(nonzero.windows(2).all(|w| w[0] == w[1]), "{what}");
            }
        }
    }

    #[test]
    fn the_issue_range_gives_distinct_labels_of_one_style() {
        // 4.34e6..4.38e6: the validation panel that printed "4.34e64.36e64.38e6".
        for length in [120.0, 250.0, 600.0] {
            let a = axis(
                Scale::Linear,
                4.34e6,
                4.38e6,
                length,
                Orientation::Horizontal,
            );
            check(&a);
            let t = choose(&a);
            assert!(t.iter().all(|t| t.label.ends_with("×10⁶")), "{t:?}");
        }
        let wide = choose(&axis(
            Scale::Linear,
            4.34e6,
            4.38e6,
            900.0,
            Orientation::Horizontal,
        ));
        assert_eq!(
            labels(&wide),
            ["4.34×10⁶", "4.35×10⁶", "4.36×10⁶", "4.37×10⁶", "4.38×10⁶"]
        );
        // The same on a log axis (a validation panel).
        let (lo, hi) = (4.34e6f64.log10(), 4.38e6f64.log10());
        let log = choose(&axis(Scale::Log10, lo, hi, 900.0, Orientation::Horizontal));
        assert_eq!(
            labels(&log),
            ["4.34×10⁶", "4.35×10⁶", "4.36×10⁶", "4.37×10⁶", "4.38×10⁶"]
        );
    }

    #[test]
    fn round_steps_and_plain_labels() {
        let t = choose(&axis(Scale::Linear, 0.0, 1.0, 600.0, Orientation::Vertical));
        assert_eq!(labels(&t), ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]);
        // A short axis gets fewer ticks.
        let t = choose(&axis(Scale::Linear, 0.0, 1.0, 150.0, Orientation::Vertical));
        assert_eq!(labels(&t), ["0.0", "0.5", "1.0"]);
        let t = choose(&axis(
            Scale::Linear,
            -35.0,
            72.0,
            700.0,
            Orientation::Horizontal,
        ));
        assert_eq!(labels(&t), ["−20", "0", "20", "40", "60"]);
        let t = choose(&axis(
            Scale::Linear,
            0.0,
            2.5e-5,
            700.0,
            Orientation::Horizontal,
        ));
        assert_eq!(labels(&t)[..3], ["0", "0.5×10⁻⁵", "1.0×10⁻⁵"]);
    }

    #[test]
    fn log_axes_read_as_powers() {
        let t = choose(&axis(
            Scale::Log2,
            13.7,
            20.3,
            700.0,
            Orientation::Horizontal,
        ));
        assert_eq!(
            labels(&t),
            ["2¹⁴", "2¹⁵", "2¹⁶", "2¹⁷", "2¹⁸", "2¹⁹", "2²⁰"]
        );
        let t = choose(&axis(
            Scale::Log2,
            13.7,
            20.3,
            250.0,
            Orientation::Horizontal,
        ));
        assert_eq!(labels(&t), ["2¹⁴", "2¹⁶", "2¹⁸", "2²⁰"]);
        let t = choose(&axis(
            Scale::Log10,
            -0.5,
            25.0,
            700.0,
            Orientation::Vertical,
        ));
        assert_eq!(labels(&t)[..3], ["10⁰", "10⁴", "10⁸"]);
        // Two to four decades: 1, 2, 5 times powers of ten.
        let t = choose(&axis(
            Scale::Log10,
            6.9,
            9.1,
            700.0,
            Orientation::Horizontal,
        ));
        assert_eq!(
            labels(&t),
            [
                "1×10⁷", "2×10⁷", "5×10⁷", "1×10⁸", "2×10⁸", "5×10⁸", "1×10⁹"
            ]
        );
        let t = choose(&axis(
            Scale::Log10,
            -0.5,
            1.9,
            700.0,
            Orientation::Horizontal,
        ));
        assert_eq!(labels(&t), ["0.5", "1", "2", "5", "10", "20", "50"]);
        // About a decade: 1, 2, 5 times powers, not round values crowding the top.
        let (lo, hi) = (2.0e7f64.log10(), 2.6e8f64.log10());
        let t = choose(&axis(Scale::Log10, lo, hi, 300.0, Orientation::Vertical));
        assert_eq!(labels(&t), ["2×10⁷", "5×10⁷", "1×10⁸", "2×10⁸"]);
        // Under one decade: round values.
        let t = choose(&axis(Scale::Log10, 8.2, 8.43, 700.0, Orientation::Vertical));
        assert_eq!(labels(&t)[0], "1.6×10⁸");
    }

    #[test]
    fn labels_never_overlap_at_column_and_page_widths() {
        // Axis lengths of a 500 px (column) and a 1024 px picture, a panel of a grid, and the
        // vertical axes; fonts as drawn at those sizes.
        let spans: Vec<(f64, f64)> = vec![
            (0.0, 1.0),
            (0.93, 1.0),
            (4.34e6, 4.38e6),
            (0.0, 7.3e7),
            (-3.2e-4, 5.1e-4),
            (99990.0, 100010.0),
            (123.0, 123.4),
            (0.0, 2.0e12),
            (1.0e-9, 3.0e-9),
            (-1.0, 1.0),
            (0.18, 2.76),
            (0.0, 72.6),
        ];
        for (length, font) in [(120.0, 9.0), (300.0, 11.0), (400.0, 11.2), (820.0, 16.0)] {
            for orientation in [Orientation::Horizontal, Orientation::Vertical] {
                for &(lo, hi) in &spans {
                    let mut a = axis(Scale::Linear, lo, hi, length, orientation);
                    a.font = font;
                    check(&a);
                    if lo > 0.0 {
                        for scale in [Scale::Log10, Scale::Log2] {
                            let mut l = a;
                            l.scale = scale;
                            l.lo = scale.to_axis(lo).unwrap();
                            l.hi = scale.to_axis(hi).unwrap();
                            check(&l);
                        }
                    }
                }
                for (lo, hi) in [
                    (-0.5, 25.0),
                    (6.9, 9.1),
                    (7.6, 8.2),
                    (-9.3, -2.0),
                    (1.0, 3.5),
                ] {
                    let mut a = axis(Scale::Log10, lo, hi, length, orientation);
                    a.font = font;
                    check(&a);
                }
                for (lo, hi) in [(11.5, 24.5), (13.7, 20.3), (3.0, 4.5)] {
                    let mut a = axis(Scale::Log2, lo, hi, length, orientation);
                    a.font = font;
                    check(&a);
                }
            }
        }
    }

    #[test]
    fn widths_come_from_the_font() {
        assert!(text_width("", 16.0) == 0.0);
        let one = text_width("1", 16.0);
        assert!(one > 6.0 && one < 12.0, "{one}");
        assert!((text_width("11", 16.0) - 2.0 * one).abs() < 0.5);
        assert!(text_width("4.34×10⁶", 16.0) > text_width("4.34", 16.0));
    }
}
