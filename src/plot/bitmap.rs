//! PNG text and lines done right: a wrapper of plotters' bitmap backend that rasterises text,
//! paths and circles itself, anti-aliased.

use ab_glyph::{Font, FontRef, InvalidFont, ScaleFont, point};
use plotters::backend::BitMapBackend;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};

/// The bitmap backend with its own text drawing: plotters 0.3.7's ab_glyph path places each glyph
/// without its left side bearing, which spaces letters unevenly ("12 8x1x1"). Paths (curves,
/// diagonals, dashes) and circles (markers) are drawn anti-aliased ([`path_coverage`],
/// [`circle_coverage`]): plotters fills a thick path as one polygon of integer corners, which
/// makes a densely sampled curve jagged. Everything else is passed through.
pub(super) struct CrispText<'a> {
    inner: BitMapBackend<'a>,
    font: FontRef<'static>,
}

impl<'a> CrispText<'a> {
    /// Wraps `inner`; text is drawn in the font `font` (TrueType / OpenType bytes).
    pub(super) fn new(
        inner: BitMapBackend<'a>,
        font: &'static [u8],
    ) -> Result<CrispText<'a>, InvalidFont> {
        let font = FontRef::try_from_slice(font)?;
        Ok(CrispText { inner, font })
    }
}

type Drawn<E> = Result<(), DrawingErrorKind<E>>;

/// Pixels and how much of each a shape covers (0..1], in row-major order.
type Coverage = Vec<(BackendCoord, f64)>;

/// Vertices closer than this many pixels to the last one kept are dropped from a path: a curve
/// sampled every pixel or two, its vertices rounded to whole pixels, would otherwise wobble.
const MIN_SEGMENT: f64 = 4.0;

/// The largest bounding box, in pixels, of a path drawn anti-aliased (its coverage grid takes
/// 4 bytes a pixel: 100 MB at most).
const MAX_GRID: f64 = 2.5e7;

/// The pixels a polyline through `points` (pixel centres) of `width` pixels covers, each
/// pixel's coverage being the largest over the segments (so joints are not painted twice):
/// 1 within half the width of the line, falling linearly to 0 one pixel further out. `None`
/// when the path's bounding box holds more than [`MAX_GRID`] pixels.
pub(super) fn path_coverage(points: &[BackendCoord], width: f64) -> Option<Coverage> {
    let mut kept: Vec<(f64, f64)> = Vec::new();
    for (i, &(x, y)) in points.iter().enumerate() {
        let p = (x as f64, y as f64);
        let last = i + 1 == points.len();
        match kept.last() {
            Some(&q) if !last && (p.0 - q.0).hypot(p.1 - q.1) < MIN_SEGMENT => {}
            Some(&q) if p == q => {}
            _ => kept.push(p),
        }
    }
    if kept.len() == 1 {
        kept.push(kept[0]);
    }
    let half = width / 2.0;
    let reach = half + 1.0;
    let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    for &(x, y) in &kept {
        x0 = x0.min(x - reach);
        y0 = y0.min(y - reach);
        x1 = x1.max(x + reach);
        y1 = y1.max(y + reach);
    }
    if kept.is_empty() {
        return Some(Vec::new());
    }
    if (x1 - x0) * (y1 - y0) > MAX_GRID {
        return None;
    }
    let (bx, by) = (x0.floor() as i32, y0.floor() as i32);
    let w = (x1.ceil() as i32 - bx + 1) as usize;
    let h = (y1.ceil() as i32 - by + 1) as usize;
    let mut grid = vec![0f32; w * h];
    for s in kept.windows(2) {
        let (a, b) = (s[0], s[1]);
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let length2 = dx * dx + dy * dy;
        let lo_x = (a.0.min(b.0) - reach).floor() as i32;
        let hi_x = (a.0.max(b.0) + reach).ceil() as i32;
        let lo_y = (a.1.min(b.1) - reach).floor() as i32;
        let hi_y = (a.1.max(b.1) + reach).ceil() as i32;
        for py in lo_y..=hi_y {
            for px in lo_x..=hi_x {
                let (qx, qy) = (px as f64, py as f64);
                let t = if length2 > 0.0 {
                    (((qx - a.0) * dx + (qy - a.1) * dy) / length2).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                let d = (qx - a.0 - t * dx).hypot(qy - a.1 - t * dy);
                let c = (half + 0.5 - d).clamp(0.0, 1.0) as f32;
                if c > 0.0 {
                    let cell = &mut grid[(py - by) as usize * w + (px - bx) as usize];
                    *cell = cell.max(c);
                }
            }
        }
    }
    Some(
        grid.iter()
            .enumerate()
            .filter(|(_, c)| **c > 0.0)
            .map(|(i, c)| (((i % w) as i32 + bx, (i / w) as i32 + by), *c as f64))
            .collect(),
    )
}

/// The pixels a circle around `center` of `radius` covers: the disc when `fill`, else a ring of
/// `width` pixels along the radius; edges anti-aliased over one pixel.
pub(super) fn circle_coverage(
    center: BackendCoord,
    radius: f64,
    fill: bool,
    width: f64,
) -> Coverage {
    let r = (radius + width / 2.0 + 1.0).ceil() as i32;
    let mut out = Vec::new();
    for dy in -r..=r {
        for dx in -r..=r {
            let d = (dx as f64).hypot(dy as f64);
            let c = if fill {
                radius + 0.5 - d
            } else {
                width / 2.0 + 0.5 - (d - radius).abs()
            }
            .clamp(0.0, 1.0);
            if c > 0.0 {
                out.push(((center.0 + dx, center.1 + dy), c));
            }
        }
    }
    out
}

impl<'a> CrispText<'a> {
    /// Paints `coverage` in `color`, each pixel with the colour's alpha times its coverage.
    fn paint(
        &mut self,
        coverage: &Coverage,
        color: BackendColor,
    ) -> Drawn<<BitMapBackend<'a> as DrawingBackend>::ErrorType> {
        if color.alpha == 0.0 {
            return Ok(());
        }
        for &(p, c) in coverage {
            let ink = BackendColor {
                alpha: color.alpha * c,
                rgb: color.rgb,
            };
            self.inner.draw_pixel(p, ink)?;
        }
        Ok(())
    }
}

impl<'a> DrawingBackend for CrispText<'a> {
    type ErrorType = <BitMapBackend<'a> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }
    fn ensure_prepared(&mut self) -> Drawn<Self::ErrorType> {
        self.inner.ensure_prepared()
    }
    fn present(&mut self) -> Drawn<Self::ErrorType> {
        self.inner.present()
    }
    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Drawn<Self::ErrorType> {
        self.inner.draw_pixel(point, color)
    }
    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Drawn<Self::ErrorType> {
        self.inner.draw_line(from, to, style)
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Drawn<Self::ErrorType> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Drawn<Self::ErrorType> {
        let points: Vec<BackendCoord> = path.into_iter().collect();
        match path_coverage(&points, style.stroke_width().max(1) as f64) {
            Some(coverage) => self.paint(&coverage, style.color()),
            // A path spanning a huge picture: plotters' own drawing, without a coverage grid.
            None => self.inner.draw_path(points, style),
        }
    }
    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Drawn<Self::ErrorType> {
        let width = style.stroke_width().max(1) as f64;
        let coverage = circle_coverage(center, radius as f64, fill, width);
        self.paint(&coverage, style.color())
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Drawn<Self::ErrorType> {
        self.inner.fill_polygon(vert, style)
    }
    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Drawn<Self::ErrorType> {
        self.inner.blit_bitmap(pos, size, src)
    }

    fn draw_text<T: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &T,
        pos: BackendCoord,
    ) -> Drawn<Self::ErrorType> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let font = self.font.as_scaled(style.size() as f32);
        // Lay the glyphs on a baseline at the ascent, so the line's box starts at y = 0 and is
        // as wide as plotters' own estimate (same advances and kerning), which placed it.
        let mut glyphs = Vec::new();
        let mut pen = 0f32;
        let mut previous = None;
        for c in text.chars() {
            let id = font.glyph_id(c);
            if let Some(p) = previous {
                pen += font.kern(p, id);
            }
            glyphs.push(id.with_scale_and_position(font.scale(), point(pen, font.ascent())));
            pen += font.h_advance(id);
            previous = Some(id);
        }
        let width = pen.round() as i32;
        let height = (style.size() / 1.24) as i32;
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let transform = style.transform();
        let inner = &mut self.inner;
        let mut result = Ok(());
        for glyph in glyphs {
            let Some(outline) = font.outline_glyph(glyph) else {
                continue;
            };
            let bounds = outline.px_bounds();
            outline.draw(|x, y, coverage| {
                if result.is_err() || coverage <= 0.0 {
                    return;
                }
                let local_x = bounds.min.x as i32 + x as i32 + dx;
                let local_y = bounds.min.y as i32 + y as i32 + dy;
                let (tx, ty) = transform.transform(local_x, local_y);
                let ink = BackendColor {
                    alpha: color.alpha * coverage.min(1.0) as f64,
                    rgb: color.rgb,
                };
                result = inner.draw_pixel((pos.0 + tx, pos.1 + ty), ink);
            });
            std::mem::replace(&mut result, Ok(()))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_anti_aliased_and_joints_painted_once() {
        // A horizontal 3 px line: full coverage within 1.5 px of the axis, none beyond 2 px.
        let c = path_coverage(&[(0, 10), (20, 10)], 3.0).unwrap();
        let at = |p: (i32, i32)| c.iter().find(|(q, _)| *q == p).map(|(_, v)| *v);
        assert_eq!(at((10, 10)), Some(1.0));
        assert_eq!(at((10, 11)), Some(1.0));
        assert_eq!(at((10, 12)), None);
        // A diagonal has pixels of partial coverage (smooth edges).
        let d = path_coverage(&[(0, 0), (40, 30)], 2.0).unwrap();
        assert!(d.iter().any(|(_, v)| *v > 0.05 && *v < 0.95));
        // Every pixel once, even where segments meet.
        let bent = path_coverage(&[(0, 0), (10, 0), (10, 10)], 3.0).unwrap();
        let mut pixels: Vec<_> = bent.iter().map(|(p, _)| *p).collect();
        let n = pixels.len();
        pixels.sort_unstable();
        pixels.dedup();
        assert_eq!(pixels.len(), n);
        // A path across a 10000-pixel picture is left to plotters.
        assert!(path_coverage(&[(0, 0), (9999, 9999)], 2.0).is_none());
    }

    #[test]
    fn circles_have_soft_rims() {
        let disc = circle_coverage((0, 0), 5.0, true, 1.0);
        let at = |p: (i32, i32)| disc.iter().find(|(q, _)| *q == p).map(|(_, v)| *v);
        assert_eq!(at((0, 0)), Some(1.0));
        assert_eq!(at((5, 0)), Some(0.5));
        assert_eq!(at((7, 0)), None);
        let ring = circle_coverage((0, 0), 5.0, false, 1.0);
        assert!(!ring.iter().any(|(q, _)| *q == (0, 0)));
    }
}
