//! PNG text done right: a wrapper of plotters' bitmap backend that rasterises text itself.

use ab_glyph::{Font, FontRef, InvalidFont, ScaleFont, point};
use plotters::backend::BitMapBackend;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};

/// The bitmap backend with its own text drawing: plotters 0.3.7's ab_glyph path places each glyph
/// without its left side bearing, which spaces letters unevenly ("12 8x1x1"). Everything else is
/// passed through.
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
        self.inner.draw_path(path, style)
    }
    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Drawn<Self::ErrorType> {
        self.inner.draw_circle(center, radius, style, fill)
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
