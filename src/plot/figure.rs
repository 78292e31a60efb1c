//! Backend-independent figures and their drawing with plotters.
//!
//! A [`Figure`] is plain data (axes, series, cells, bars) built from a table by the plot kinds in
//! the parent module; [`encode`] draws it on a PNG or SVG backend. Keeping the data apart from the
//! drawing lets new plot kinds (e.g. measured vs simulated validation) reuse the same drawing code
//! and lets tests check the data without looking at pixels.

use super::bitmap::CrispText;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::fmt::Display;
use std::sync::OnceLock;

/// The bundled font (DejaVu Sans, licence in assets/fonts/LICENSE-DejaVu.txt): plots must render
/// on machines without system fonts.
pub(super) static FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

/// The family name every text in a figure asks for; it resolves to [`FONT`].
const FAMILY: &str = "sans-serif";

/// An sRGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    fn plotters(self) -> RGBColor {
        RGBColor(self.0, self.1, self.2)
    }

    /// Perceived brightness in 0..1 (Rec. 601 weights), to pick black or white text on it.
    fn brightness(self) -> f64 {
        (0.299 * self.0 as f64 + 0.587 * self.1 as f64 + 0.114 * self.2 as f64) / 255.0
    }
}

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

    /// The tick label at axis position `p`.
    fn tick(self, p: f64) -> String {
        let power = |base: &str, base_value: f64| {
            if (p - p.round()).abs() < 1e-9 {
                format!("{base}{}", superscript(p.round() as i64))
            } else {
                format_number(base_value.powf(p))
            }
        };
        match self {
            Scale::Linear => format_number(p),
            Scale::Log2 => power("2", 2.0),
            Scale::Log10 => power("10", 10.0),
        }
    }
}

/// One axis of an x–y figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// The description under (x) or beside (y) the axis, with the unit.
    pub label: String,
    /// Linear or logarithmic.
    pub scale: Scale,
    /// The shown range, in data units (positive on a log axis).
    pub range: (f64, f64),
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeriesStyle {
    /// A filled circle per point.
    Markers,
    /// A line through the points in order.
    Line,
    /// Both.
    LineAndMarkers,
    /// A thin dashed line through the points in order (a guide such as ±10 %, not data).
    Dashed,
}

/// A named set of points drawn in one colour.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The legend entry.
    pub label: String,
    /// Marker and line colour.
    pub colour: Rgb,
    /// The points, in data units.
    pub points: Vec<(f64, f64)>,
    /// Markers, line or both.
    pub style: SeriesStyle,
    /// Extra legend lines under the entry (e.g. the fitted parameters).
    pub details: Vec<String>,
}

/// A scatter / line plot.
#[derive(Debug, Clone, PartialEq)]
pub struct XyFigure {
    /// The caption above the plot.
    pub title: String,
    /// The horizontal axis.
    pub x: Axis,
    /// The vertical axis.
    pub y: Axis,
    /// Drawn in order; every series gets a legend entry.
    pub series: Vec<Series>,
    /// Heading of the legend (e.g. "block x×y×z").
    pub legend_title: String,
    /// Lines under the legend (e.g. how colours encode block shapes).
    pub legend_notes: Vec<String>,
}

/// A table of values on a grid of categories, coloured by value, each cell labelled.
#[derive(Debug, Clone, PartialEq)]
pub struct HeatMap {
    /// The caption above the plot.
    pub title: String,
    /// Description of the columns.
    pub x_label: String,
    /// Description of the rows.
    pub y_label: String,
    /// Column categories, left to right.
    pub xs: Vec<String>,
    /// Row categories, bottom to top.
    pub ys: Vec<String>,
    /// `values[row][column]`; `None` leaves the cell empty.
    pub values: Vec<Vec<Option<f64>>>,
    /// Heading of the colour key (the metric and its unit).
    pub value_label: String,
}

/// One layer of stacked bars.
#[derive(Debug, Clone, PartialEq)]
pub struct BarLayer {
    /// The legend entry.
    pub label: String,
    /// The fill colour.
    pub colour: Rgb,
    /// One height per category (≥ 0).
    pub values: Vec<f64>,
}

/// Stacked bars, one bar per category, layers stacked bottom to top in order.
#[derive(Debug, Clone, PartialEq)]
pub struct StackedBars {
    /// The caption above the plot.
    pub title: String,
    /// Description of the categories.
    pub x_label: String,
    /// Description of the heights, with the unit.
    pub y_label: String,
    /// Category names, left to right.
    pub categories: Vec<String>,
    /// Bottom layer first.
    pub layers: Vec<BarLayer>,
}

/// Several x–y panels in a grid under one caption, with one legend for all of them (e.g.
/// measured vs simulated, one panel per metric).
#[derive(Debug, Clone, PartialEq)]
pub struct PanelGrid {
    /// The caption above the grid.
    pub title: String,
    /// Panels per row (the last row may be shorter).
    pub columns: usize,
    /// Left to right, top to bottom. Each panel's `title` is its heading (one line per `\n`);
    /// its `legend_title` and `legend_notes` are not drawn.
    pub panels: Vec<XyFigure>,
    /// Heading of the shared legend, which lists every series label of the panels once, in
    /// order of first appearance.
    pub legend_title: String,
    /// Lines under the legend.
    pub legend_notes: Vec<String>,
}

/// Anything `gputraffic plot` draws.
#[derive(Debug, Clone, PartialEq)]
pub enum Figure {
    /// Scatter and line plots.
    Xy(XyFigure),
    /// Block-shape tables.
    Heat(HeatMap),
    /// Volume composition.
    Bars(StackedBars),
    /// Several scatter plots side by side.
    Grid(PanelGrid),
}

/// The file formats a figure is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Portable Network Graphics (RGB bitmap).
    Png,
    /// Scalable Vector Graphics.
    Svg,
}

/// Draws `figure` in `format` at `size` (width, height in pixels) and returns the file's bytes.
/// The error is plotters' or the PNG encoder's message.
pub fn encode(figure: &Figure, format: Format, size: (u32, u32)) -> Result<Vec<u8>, String> {
    register_font()?;
    match format {
        Format::Svg => {
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
                draw(figure, &root)?;
                root.present().map_err(fail)?;
            }
            Ok(svg.into_bytes())
        }
        Format::Png => {
            let (w, h) = (size.0 as usize, size.1 as usize);
            let mut pixels = vec![255u8; w * h * 3];
            {
                let root = CrispText::new(BitMapBackend::with_buffer(&mut pixels, size), FONT)
                    .map_err(fail)?
                    .into_drawing_area();
                draw(figure, &root)?;
                root.present().map_err(fail)?;
            }
            let mut png = Vec::new();
            let mut encoder = png::Encoder::new(&mut png, size.0, size.1);
            encoder.set_color(png::ColorType::Rgb);
            encoder.set_depth(png::BitDepth::Eight);
            let mut writer = encoder.write_header().map_err(fail)?;
            writer.write_image_data(&pixels).map_err(fail)?;
            writer.finish().map_err(fail)?;
            Ok(png)
        }
    }
}

fn register_font() -> Result<(), String> {
    // plotters keeps fonts in a global table: register once per process.
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED
        .get_or_init(|| plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok());
    if ok {
        Ok(())
    } else {
        Err("the bundled font cannot be read".to_string())
    }
}

fn fail(e: impl Display) -> String {
    e.to_string()
}

type Area<'a, DB> = DrawingArea<DB, Shift>;

/// Font sizes and spacings grow with the picture so a large PNG stays readable.
#[derive(Clone, Copy)]
struct Metrics {
    scale: f64,
}

impl Metrics {
    fn new(size: (u32, u32)) -> Metrics {
        let scale = (size.0 as f64 / 1024.0).min(size.1 as f64 / 768.0).max(0.4);
        Metrics { scale }
    }
    fn px(self, v: f64) -> i32 {
        (v * self.scale).round().max(1.0) as i32
    }
    fn font(self, v: f64) -> TextStyle<'static> {
        TextStyle::from((FAMILY, v * self.scale).into_font())
    }
}

fn draw<DB: DrawingBackend>(figure: &Figure, root: &Area<DB>) -> Result<(), String> {
    root.fill(&WHITE).map_err(fail)?;
    let m = Metrics::new(root.dim_in_pixel());
    let title = match figure {
        Figure::Xy(f) => &f.title,
        Figure::Heat(f) => &f.title,
        Figure::Bars(f) => &f.title,
        Figure::Grid(f) => &f.title,
    };
    // A long title (metric names, --where conditions) shrinks to fit the width.
    let width = root.dim_in_pixel().0 as f64;
    let title_size = (26.0 * m.scale)
        .min(size_to_fit(width, title.chars().count()))
        .max(8.0);
    let body = root
        .margin(m.px(8.0), 0, 0, 0)
        .titled(title, TextStyle::from((FAMILY, title_size).into_font()))
        .map_err(fail)?;
    let (w, _) = body.dim_in_pixel();
    // The legend / colour key gets its own column on the right so it never hides data.
    let legend_width = (w as f64 * 0.2).clamp(120.0, 360.0) as u32;
    let (plot, legend) = body.split_horizontally(w.saturating_sub(legend_width));
    match figure {
        Figure::Xy(f) => draw_xy(f, &plot, &legend, m),
        Figure::Heat(f) => draw_heat(f, &plot, &legend, m),
        Figure::Bars(f) => draw_bars(f, &plot, &legend, m),
        Figure::Grid(f) => draw_grid(f, &plot, &legend, m),
    }
}

/// Average letter width of DejaVu Sans, as a fraction of the font size.
const LETTER_WIDTH: f64 = 0.6;
/// Share of the available width a line of text may fill.
const LINE_FILL: f64 = 0.95;

/// The largest font size at which `letters` letters fit in `width` pixels.
fn size_to_fit(width: f64, letters: usize) -> f64 {
    LINE_FILL * width / (LETTER_WIDTH * letters.max(1) as f64)
}

/// The axis position range of `axis` (log of the data range on a log axis).
fn axis_span(axis: &Axis) -> Result<(f64, f64), String> {
    let lo = axis.scale.to_axis(axis.range.0);
    let hi = axis.scale.to_axis(axis.range.1);
    match (lo, hi) {
        (Some(lo), Some(hi)) if lo < hi => Ok((lo, hi)),
        _ => Err(format!(
            "axis '{}' has no valid range ({} to {})",
            axis.label, axis.range.0, axis.range.1
        )),
    }
}

fn draw_xy<DB: DrawingBackend>(
    f: &XyFigure,
    plot: &Area<DB>,
    legend: &Area<DB>,
    m: Metrics,
) -> Result<(), String> {
    draw_xy_chart(f, plot, m)?;
    let entries: Vec<LegendEntry> = f.series.iter().map(legend_entry).collect();
    draw_legend(legend, m, &f.legend_title, &entries, &f.legend_notes)
}

/// The legend entry of a series: a box for markers, a bar for lines.
fn legend_entry(s: &Series) -> LegendEntry {
    LegendEntry {
        label: s.label.clone(),
        colour: s.colour,
        swatch: match s.style {
            SeriesStyle::Line => Swatch::Line,
            SeriesStyle::Dashed => Swatch::Dashed,
            _ => Swatch::Box,
        },
        details: s.details.clone(),
    }
}

/// The axes, grid and series of `f` on `plot` (no legend, no title).
fn draw_xy_chart<DB: DrawingBackend>(
    f: &XyFigure,
    plot: &Area<DB>,
    m: Metrics,
) -> Result<(), String> {
    let (x0, x1) = axis_span(&f.x)?;
    let (y0, y1) = axis_span(&f.y)?;
    let mut chart = ChartBuilder::on(plot)
        .margin(m.px(12.0))
        .x_label_area_size(m.px(62.0))
        .y_label_area_size(m.px(86.0))
        .build_cartesian_2d(
            Ticked::new(x0, x1, ticks(f.x.scale, x0, x1)),
            Ticked::new(y0, y1, ticks(f.y.scale, y0, y1)),
        )
        .map_err(fail)?;
    let (xs, ys) = (f.x.scale, f.y.scale);
    let x_fmt = move |p: &f64| xs.tick(*p);
    let y_fmt = move |p: &f64| ys.tick(*p);
    chart
        .configure_mesh()
        .x_desc(f.x.label.as_str())
        .y_desc(f.y.label.as_str())
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style(m.font(16.0))
        .axis_desc_style(m.font(19.0))
        .bold_line_style(RGBColor(215, 215, 215))
        .light_line_style(RGBColor(242, 242, 242))
        .draw()
        .map_err(fail)?;

    let radius = m.px(5.0) as u32;
    let outline = RGBColor(60, 60, 60);
    for s in &f.series {
        let colour = s.colour.plotters();
        let points: Vec<Option<(f64, f64)>> = s
            .points
            .iter()
            .map(|&(x, y)| Some((xs.to_axis(x)?, ys.to_axis(y)?)))
            .collect();
        if matches!(
            s.style,
            SeriesStyle::Line | SeriesStyle::LineAndMarkers | SeriesStyle::Dashed
        ) {
            // A curve leaving the shown range (a fit overshooting 0..1) is cut there, not
            // flattened onto the frame.
            let inside = |p: &Option<(f64, f64)>| {
                p.is_some_and(|(x, y)| (x0..=x1).contains(&x) && (y0..=y1).contains(&y))
            };
            let mut run = Vec::new();
            for p in points.iter().chain(std::iter::once(&None)) {
                if inside(p) {
                    run.push(p.unwrap_or_default());
                } else if !run.is_empty() && s.style == SeriesStyle::Dashed {
                    chart
                        .draw_series(DashedLineSeries::new(
                            std::mem::take(&mut run),
                            m.px(6.0),
                            m.px(6.0),
                            colour.stroke_width(m.px(1.0) as u32),
                        ))
                        .map_err(fail)?;
                } else if !run.is_empty() {
                    let width = m.px(2.5) as u32;
                    chart
                        .draw_series(LineSeries::new(
                            std::mem::take(&mut run),
                            colour.stroke_width(width),
                        ))
                        .map_err(fail)?;
                }
            }
        }
        if matches!(s.style, SeriesStyle::Markers | SeriesStyle::LineAndMarkers) {
            // Every point gets a filled circle and a thin dark ring, so that white (large
            // blocks) and pale markers stay visible on the white background.
            let shown = points
                .iter()
                .flatten()
                .filter(|&&(x, y)| (x0..=x1).contains(&x) && (y0..=y1).contains(&y));
            chart
                .draw_series(shown.map(|&p| {
                    EmptyElement::at(p)
                        + Circle::new((0, 0), radius, colour.filled())
                        + Circle::new((0, 0), radius, outline.stroke_width(1))
                }))
                .map_err(fail)?;
        }
    }
    Ok(())
}

/// The panels of `f` in a grid on `plot`, each under its heading, and one legend for all.
fn draw_grid<DB: DrawingBackend>(
    f: &PanelGrid,
    plot: &Area<DB>,
    legend: &Area<DB>,
    m: Metrics,
) -> Result<(), String> {
    let n = f.panels.len();
    let columns = f.columns.clamp(1, n.max(1));
    let rows = n.div_ceil(columns).max(1);
    let areas = plot.split_evenly((rows, columns));
    for (panel, area) in f.panels.iter().zip(&areas) {
        let (w, h) = area.dim_in_pixel();
        // Text scaled to the whole picture would crowd a small panel, text scaled to the panel
        // alone would be unreadable: take the panel's scale, enlarged, but never above the
        // picture's.
        let pm = Metrics {
            scale: (Metrics::new((w, h)).scale * 1.8).min(m.scale),
        };
        // A long heading (metric names) first shrinks to the panel's width, as draw does the
        // title, down to a readable size; below that it breaks at '_' / '.' into more lines.
        let longest = panel.title.lines().map(|l| l.chars().count()).max();
        // `wrap` breaks a line when it reaches the width, so a line that just fits needs one more.
        let fits = |size: f64| {
            (LINE_FILL * w as f64 / (LETTER_WIDTH * size) + 1e-6)
                .floor()
                .max(8.0) as usize
                + 1
        };
        let size = (15.0 * pm.scale)
            .min(size_to_fit(w as f64, longest.unwrap_or(1)))
            .max(11.0 * pm.scale)
            .max(7.0);
        let lines: Vec<String> = panel
            .title
            .lines()
            .flat_map(|l| wrap(l, fits(size)))
            .collect();
        let line_height = (size * 1.25).round() as i32;
        let top = pm.px(6.0);
        for (i, line) in lines.iter().enumerate() {
            let style =
                TextStyle::from((FAMILY, size).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
            area.draw(&Text::new(
                line.to_string(),
                (w as i32 / 2, top + i as i32 * line_height),
                style,
            ))
            .map_err(fail)?;
        }
        let heading = top + lines.len() as i32 * line_height;
        draw_xy_chart(panel, &area.margin(heading, 0, 0, 0), pm)?;
    }
    let mut entries: Vec<LegendEntry> = Vec::new();
    for s in f.panels.iter().flat_map(|p| &p.series) {
        if !entries.iter().any(|e| e.label == s.label) {
            entries.push(legend_entry(s));
        }
    }
    draw_legend(legend, m, &f.legend_title, &entries, &f.legend_notes)
}

/// A linear coordinate with the tick positions given (plotters' own choice cannot put whole
/// powers on a log axis or ticks at category centres); no minor grid lines.
struct Ticked {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

impl Ticked {
    fn new(lo: f64, hi: f64, ticks: Vec<f64>) -> Ticked {
        Ticked { lo, hi, ticks }
    }
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let t = (value - self.lo) / (self.hi - self.lo);
        limit.0 + (t * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// Tick positions on an axis spanning positions `lo..hi`: 1-2-5 steps on a linear axis; whole
/// powers on a log axis spanning at least two of them, else 1-2-5 steps of the values.
fn ticks(scale: Scale, lo: f64, hi: f64) -> Vec<f64> {
    let powers = hi.floor() - lo.ceil();
    match scale {
        Scale::Linear => linear_ticks(lo, hi, 8),
        Scale::Log2 | Scale::Log10 if powers >= 1.0 => {
            let step = (powers / 10.0).ceil().max(1.0);
            let first = (lo / step).ceil() * step;
            (0..)
                .map(|k| first + k as f64 * step)
                .take_while(|&p| p <= hi + 1e-9)
                .collect()
        }
        Scale::Log2 | Scale::Log10 => {
            let base: f64 = if scale == Scale::Log2 { 2.0 } else { 10.0 };
            linear_ticks(base.powf(lo), base.powf(hi), 5)
                .into_iter()
                .filter_map(|v| scale.to_axis(v))
                .collect()
        }
    }
}

/// Multiples of a 1, 2, 2.5 or 5 × 10ᵏ step inside `lo..=hi`, about `target` of them.
fn linear_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    if !lo.is_finite() || !hi.is_finite() || hi <= lo {
        return Vec::new();
    }
    let raw = (hi - lo) / target as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * magnitude);
    let first = (lo / step).ceil();
    let last = (hi / step).floor();
    // Multiply from integers (not repeated addition) so labels are not off by rounding.
    (first as i64..=last as i64)
        .map(|k| k as f64 * step)
        .collect()
}

#[derive(Clone, Copy, PartialEq)]
enum Swatch {
    Box,
    Line,
    Dashed,
}

struct LegendEntry {
    label: String,
    colour: Rgb,
    swatch: Swatch,
    details: Vec<String>,
}

/// Draws the legend column: a heading, one coloured swatch and label per entry (with detail
/// lines), then notes. Entries that do not fit are summarised as "… and N more".
fn draw_legend<DB: DrawingBackend>(
    area: &Area<DB>,
    m: Metrics,
    heading: &str,
    entries: &[LegendEntry],
    notes: &[String],
) -> Result<(), String> {
    let (_, height) = area.dim_in_pixel();
    let line = m.px(22.0);
    let small = m.px(18.0);
    let x = m.px(6.0);
    let mut y = m.px(20.0);
    let text = |s: &str, at: (i32, i32), size: f64| -> Result<(), String> {
        area.draw(&Text::new(s.to_string(), at, m.font(size)))
            .map_err(fail)
    };
    if !heading.is_empty() {
        text(heading, (x, y), 17.0)?;
        y += line + m.px(4.0);
    }
    let notes_height = notes.len() as i32 * small + if notes.is_empty() { 0 } else { line };
    let budget = height as i32 - notes_height - m.px(10.0);
    for (i, e) in entries.iter().enumerate() {
        let needed = line + e.details.len() as i32 * small;
        // Keep one line free for the "more" remark unless this is the last entry.
        let reserve = if i + 1 < entries.len() { line } else { 0 };
        if y + needed + reserve > budget {
            text(&format!("… and {} more", entries.len() - i), (x, y), 15.0)?;
            y += line;
            break;
        }
        let box_size = m.px(14.0);
        let colour = e.colour.plotters();
        match e.swatch {
            Swatch::Box => {
                area.draw(&Rectangle::new(
                    [(x, y), (x + box_size, y + box_size)],
                    colour.filled(),
                ))
                .map_err(fail)?;
                area.draw(&Rectangle::new(
                    [(x, y), (x + box_size, y + box_size)],
                    RGBColor(60, 60, 60).stroke_width(1),
                ))
                .map_err(fail)?;
            }
            Swatch::Line => {
                // A thin filled bar, not a path: the legend must not add curves to the plot.
                let mid = y + box_size / 2;
                area.draw(&Rectangle::new(
                    [
                        (x - m.px(2.0), mid - m.px(1.5)),
                        (x + box_size + m.px(2.0), mid + m.px(1.5)),
                    ],
                    colour.filled(),
                ))
                .map_err(fail)?;
            }
            Swatch::Dashed => {
                // Two short bars, read as a dashed line.
                let mid = y + box_size / 2;
                let dash = (box_size + m.px(4.0)) * 2 / 5;
                for start in [x - m.px(2.0), x + box_size + m.px(2.0) - dash] {
                    area.draw(&Rectangle::new(
                        [(start, mid - m.px(1.0)), (start + dash, mid + m.px(1.0))],
                        colour.filled(),
                    ))
                    .map_err(fail)?;
                }
            }
        }
        text(&e.label, (x + box_size + m.px(8.0), y - m.px(1.0)), 16.0)?;
        y += line;
        for d in &e.details {
            text(d, (x + box_size + m.px(8.0), y - m.px(2.0)), 14.0)?;
            y += small;
        }
    }
    if !notes.is_empty() {
        y += line / 2;
        for n in notes {
            text(n, (x, y), 14.0)?;
            y += small;
        }
    }
    Ok(())
}

/// Colour for the fraction `t` (0..1) of the value range: a viridis-like dark-blue → green →
/// yellow scale, readable in grey print too.
fn value_colour(t: f64) -> Rgb {
    const STOPS: [(u8, u8, u8); 6] = [
        (68, 1, 84),
        (65, 68, 135),
        (42, 120, 142),
        (34, 168, 132),
        (122, 209, 81),
        (253, 231, 37),
    ];
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let pos = t * (STOPS.len() - 1) as f64;
    let i = (pos.floor() as usize).min(STOPS.len() - 2);
    let f = pos - i as f64;
    let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * f).round() as u8;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    Rgb(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// The positions 0..n of n categories.
fn positions(n: usize) -> Vec<f64> {
    (0..n).map(|i| i as f64).collect()
}

/// Tick labels for categories placed at integer positions 0..n; nothing elsewhere.
fn category_tick(names: &[String], p: f64) -> String {
    let i = p.round();
    if (p - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < names.len() {
        names[i as usize].clone()
    } else {
        String::new()
    }
}

fn draw_heat<DB: DrawingBackend>(
    f: &HeatMap,
    plot: &Area<DB>,
    legend: &Area<DB>,
    m: Metrics,
) -> Result<(), String> {
    let (nx, ny) = (f.xs.len(), f.ys.len());
    let values: Vec<f64> = f.values.iter().flatten().flatten().copied().collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let fraction = |v: f64| if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
    let mut chart = ChartBuilder::on(plot)
        .margin(m.px(12.0))
        .x_label_area_size(m.px(62.0))
        .y_label_area_size(m.px(86.0))
        .build_cartesian_2d(
            Ticked::new(-0.5, nx as f64 - 0.5, positions(nx)),
            Ticked::new(-0.5, ny as f64 - 0.5, positions(ny)),
        )
        .map_err(fail)?;
    let x_fmt = |p: &f64| category_tick(&f.xs, *p);
    let y_fmt = |p: &f64| category_tick(&f.ys, *p);
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc(f.x_label.as_str())
        .y_desc(f.y_label.as_str())
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style(m.font(16.0))
        .axis_desc_style(m.font(19.0))
        .draw()
        .map_err(fail)?;
    // Cell text shrinks with the cell so a wide table stays legible.
    let (pw, ph) = chart.plotting_area().dim_in_pixel();
    let cell_w = pw as f64 / nx.max(1) as f64;
    let cell_h = ph as f64 / ny.max(1) as f64;
    let text_size = (cell_w / 4.5)
        .min(cell_h / 2.2)
        .min(20.0 * m.scale)
        .max(8.0);
    for (j, row) in f.values.iter().enumerate() {
        for (i, v) in row.iter().enumerate() {
            let (cx, cy) = (i as f64, j as f64);
            let corners = [(cx - 0.5, cy - 0.5), (cx + 0.5, cy + 0.5)];
            let Some(v) = v else {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        corners,
                        RGBColor(245, 245, 245).filled(),
                    )))
                    .map_err(fail)?;
                continue;
            };
            let fill = value_colour(fraction(*v));
            let ink = if fill.brightness() > 0.55 {
                BLACK
            } else {
                WHITE
            };
            chart
                .draw_series([
                    Rectangle::new(corners, fill.plotters().filled()),
                    Rectangle::new(corners, WHITE.stroke_width(1)),
                ])
                .map_err(fail)?;
            let style = (FAMILY, text_size)
                .into_font()
                .color(&ink)
                .pos(Pos::new(HPos::Center, VPos::Center));
            chart
                .draw_series(std::iter::once(Text::new(
                    format_number(*v),
                    (cx, cy),
                    style,
                )))
                .map_err(fail)?;
        }
    }
    draw_colour_key(legend, m, &f.value_label, lo, hi)
}

/// A vertical colour bar from `lo` (bottom) to `hi` (top) with labelled ends and middle.
fn draw_colour_key<DB: DrawingBackend>(
    area: &Area<DB>,
    m: Metrics,
    heading: &str,
    lo: f64,
    hi: f64,
) -> Result<(), String> {
    let (_, height) = area.dim_in_pixel();
    let x = m.px(10.0);
    let top = m.px(70.0);
    let bottom = (height as i32 - m.px(80.0)).max(top + 20);
    let width = m.px(24.0);
    // The heading may be long (a metric name): break it at '_' / '.' to fit the column.
    let mut y = m.px(14.0);
    for part in wrap(heading, 22) {
        area.draw(&Text::new(part, (m.px(4.0), y), m.font(14.0)))
            .map_err(fail)?;
        y += m.px(17.0);
    }
    let steps = 64;
    for s in 0..steps {
        let t0 = s as f64 / steps as f64;
        let y_hi = bottom - ((bottom - top) as f64 * (t0 + 1.0 / steps as f64)).round() as i32;
        let y_lo = bottom - ((bottom - top) as f64 * t0).round() as i32;
        area.draw(&Rectangle::new(
            [(x, y_hi), (x + width, y_lo)],
            value_colour(t0 + 0.5 / steps as f64).plotters().filled(),
        ))
        .map_err(fail)?;
    }
    let label = |v: f64, y: i32| {
        area.draw(&Text::new(
            format_number(v),
            (x + width + m.px(6.0), y),
            m.font(15.0).pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(fail)
    };
    label(hi, top)?;
    if hi > lo {
        label((lo + hi) / 2.0, (top + bottom) / 2)?;
        label(lo, bottom)?;
    }
    Ok(())
}

/// Splits `s` into lines of at most about `width` characters, breaking after '_', '.', ' ' or
/// '/' where possible.
fn wrap(s: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current = String::new();
    let mut last_break = None;
    for c in s.chars() {
        current.push(c);
        if matches!(c, '_' | '.' | ' ' | '/') {
            last_break = Some(current.len());
        }
        if current.chars().count() >= width {
            let cut = last_break.unwrap_or(current.len());
            let rest = current.split_off(cut);
            lines.push(current.trim_end().to_string());
            current = rest;
            last_break = None;
        }
    }
    if !current.is_empty() {
        lines.push(current);
    }
    lines
}

fn draw_bars<DB: DrawingBackend>(
    f: &StackedBars,
    plot: &Area<DB>,
    legend: &Area<DB>,
    m: Metrics,
) -> Result<(), String> {
    let n = f.categories.len();
    let totals: Vec<f64> = (0..n)
        .map(|i| f.layers.iter().map(|l| l.values[i]).sum())
        .collect();
    let top = totals.iter().copied().fold(0.0, f64::max);
    let top = if top > 0.0 { top * 1.08 } else { 1.0 };
    // Many or long category names are turned upright so they do not overlap.
    let longest = f
        .categories
        .iter()
        .map(|c| c.chars().count())
        .max()
        .unwrap_or(0);
    let upright = n > 8 || (n > 4 && longest > 9);
    let x_area = if upright {
        m.px(40.0 + 10.0 * longest as f64)
    } else {
        m.px(62.0)
    };
    let mut chart = ChartBuilder::on(plot)
        .margin(m.px(12.0))
        .x_label_area_size(x_area)
        .y_label_area_size(m.px(86.0))
        .build_cartesian_2d(
            Ticked::new(-0.5, n as f64 - 0.5, positions(n)),
            Ticked::new(0.0, top, linear_ticks(0.0, top, 8)),
        )
        .map_err(fail)?;
    // plotters centres every x label on its tick, which puts turned labels across the axis:
    // turned labels are drawn below, not by the mesh.
    let x_fmt = |p: &f64| {
        if upright {
            String::new()
        } else {
            category_tick(&f.categories, *p)
        }
    };
    let y_fmt = |p: &f64| format_number(*p);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc(f.x_label.as_str())
        .y_desc(f.y_label.as_str())
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style(m.font(16.0))
        .axis_desc_style(m.font(19.0))
        .bold_line_style(RGBColor(215, 215, 215))
        .light_line_style(RGBColor(242, 242, 242))
        .draw()
        .map_err(fail)?;
    if upright {
        // Shrink the labels when the bars are narrower than a line of text.
        let (width, _) = chart.plotting_area().dim_in_pixel();
        let spacing = width as f64 / n.max(1) as f64;
        let size = (15.0 * m.scale).min(spacing * 0.95).max(6.0);
        let style = TextStyle::from((FAMILY, size).into_font())
            .transform(FontTransform::Rotate270)
            .pos(Pos::new(HPos::Right, VPos::Center));
        chart
            .draw_series(f.categories.iter().enumerate().map(|(i, name)| {
                EmptyElement::at((i as f64, 0.0))
                    + Text::new(name.clone(), (0, m.px(8.0)), style.clone())
            }))
            .map_err(fail)?;
    }
    let half = 0.35;
    for (i, _) in f.categories.iter().enumerate() {
        let mut base = 0.0;
        for layer in &f.layers {
            let v = layer.values[i];
            if v > 0.0 {
                let corners = [(i as f64 - half, base), (i as f64 + half, base + v)];
                chart
                    .draw_series([
                        Rectangle::new(corners, layer.colour.plotters().filled()),
                        Rectangle::new(corners, RGBColor(60, 60, 60).stroke_width(1)),
                    ])
                    .map_err(fail)?;
            }
            base += v;
        }
    }
    // Legend top to bottom in the order the layers appear in the stack (top layer first).
    let entries: Vec<LegendEntry> = f
        .layers
        .iter()
        .rev()
        .map(|l| LegendEntry {
            label: l.label.clone(),
            colour: l.colour,
            swatch: Swatch::Box,
            details: Vec::new(),
        })
        .collect();
    draw_legend(legend, m, "", &entries, &[])
}

/// A number for a label: at most four significant digits, trailing zeros dropped, scientific
/// notation outside 0.001..100000; magnitudes below 1e-12 print as 0.
pub fn format_number(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let a = v.abs();
    if a < 1e-12 {
        return "0".to_string();
    }
    if !(1e-3..1e5).contains(&a) {
        let s = format!("{v:.2e}");
        let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
        return format!("{}e{exponent}", trim_zeros(mantissa));
    }
    let decimals = (3 - a.log10().floor() as i32).clamp(0, 6) as usize;
    trim_zeros(&format!("{v:.decimals$}"))
}

fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

fn superscript(n: i64) -> String {
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

    #[test]
    fn numbers_are_short_and_exact_enough() {
        assert_eq!(format_number(0.25), "0.25");
        assert_eq!(format_number(1.0 / 3.0), "0.3333");
        assert_eq!(format_number(12.5), "12.5");
        assert_eq!(format_number(4096.0), "4096");
        assert_eq!(format_number(1.5e6), "1.5e6");
        assert_eq!(format_number(-0.0), "0");
        assert_eq!(format_number(2.5e-5), "2.5e-5");
    }

    #[test]
    fn log_ticks_read_as_powers() {
        assert_eq!(Scale::Log2.tick(16.0), "2¹⁶");
        assert_eq!(Scale::Log10.tick(-3.0), "10⁻³");
        assert_eq!(Scale::Log10.tick(0.5), "3.162");
        assert_eq!(Scale::Log2.to_axis(0.0), None);
    }

    #[test]
    fn ticks_are_round_numbers_inside_the_range() {
        let labels = |t: Vec<f64>| t.into_iter().map(format_number).collect::<Vec<_>>();
        assert_eq!(
            labels(linear_ticks(0.0, 1.0, 8)),
            ["0", "0.2", "0.4", "0.6", "0.8", "1"]
        );
        assert_eq!(
            labels(linear_ticks(0.63, 2.47, 8)),
            ["0.75", "1", "1.25", "1.5", "1.75", "2", "2.25"]
        );
        // Whole powers when the log range spans several.
        assert_eq!(
            ticks(Scale::Log2, 13.7, 20.3),
            [14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0]
        );
        assert_eq!(
            ticks(Scale::Log10, -0.5, 25.0),
            [0.0, 3.0, 6.0, 9.0, 12.0, 15.0, 18.0, 21.0, 24.0]
        );
        // Round values when it spans less than two.
        let narrow = ticks(Scale::Log10, 8.2, 8.43);
        let values: Vec<String> = narrow.iter().map(|&p| Scale::Log10.tick(p)).collect();
        assert_eq!(values, ["1.75e8", "2e8", "2.25e8", "2.5e8"]);
    }

    #[test]
    fn colour_scale_runs_dark_to_bright() {
        assert!(value_colour(0.0).brightness() < 0.3);
        assert!(value_colour(1.0).brightness() > 0.7);
        assert_eq!(value_colour(f64::NAN), value_colour(0.0));
    }

    #[test]
    fn wrap_breaks_long_metric_names() {
        let lines = wrap("dram__sectors_read.sum_bytes_per_lup", 22);
        assert!(lines.len() > 1 && lines.iter().all(|l| l.chars().count() <= 22));
        assert_eq!(lines.concat(), "dram__sectors_read.sum_bytes_per_lup");
    }
}
