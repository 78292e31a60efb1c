//! Backend-independent figures and their drawing with plotters.
//!
//! A [`Figure`] is plain data (axes, series, cells, bars) built from a table by the plot kinds in
//! the parent module; [`encode`] draws it on a PNG or SVG backend. Keeping the data apart from the
//! drawing lets new plot kinds (e.g. measured vs simulated validation) reuse the same drawing code
//! and lets tests check the data without looking at pixels.

use super::bitmap::CrispText;
pub use super::ticks::Scale;
use super::ticks::{self, AxisRoom, FONT, Orientation, Tick};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::fmt::Display;
use std::sync::OnceLock;

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

/// The shape of a series' markers: colours alone name at most a palette's worth of categories,
/// colour and shape together many more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Marker {
    /// A filled circle.
    Circle,
    /// A filled square.
    Square,
    /// A triangle pointing up.
    TriangleUp,
    /// A square standing on a corner.
    Diamond,
    /// A triangle pointing down.
    TriangleDown,
    /// A triangle pointing left.
    TriangleLeft,
    /// A triangle pointing right.
    TriangleRight,
    /// A regular pentagon.
    Pentagon,
}

impl Marker {
    /// Every marker, in the order categories get them.
    pub const ALL: [Marker; 8] = [
        Marker::Circle,
        Marker::Square,
        Marker::TriangleUp,
        Marker::Diamond,
        Marker::TriangleDown,
        Marker::TriangleLeft,
        Marker::TriangleRight,
        Marker::Pentagon,
    ];

    /// The corners of the marker around (0, 0) in pixels for a circle radius `r` (`None` for
    /// the circle itself). Every shape covers about the circle's area, so no category looks
    /// bigger than another.
    fn corners(self, r: f64) -> Option<Vec<(i32, i32)>> {
        let polygon = |n: usize, radius: f64, start_degrees: f64| {
            (0..n)
                .map(|k| {
                    let a = (start_degrees + 360.0 * k as f64 / n as f64).to_radians();
                    (
                        (radius * a.cos()).round() as i32,
                        (-radius * a.sin()).round() as i32,
                    )
                })
                .collect()
        };
        Some(match self {
            Marker::Circle => return None,
            // Area πr²: a square of side r·√π, a triangle of circumradius 1.56 r, …
            Marker::Square => polygon(4, 1.25 * r, 45.0),
            Marker::Diamond => polygon(4, 1.3 * r, 90.0),
            Marker::TriangleUp => polygon(3, 1.5 * r, 90.0),
            Marker::TriangleDown => polygon(3, 1.5 * r, 270.0),
            Marker::TriangleLeft => polygon(3, 1.5 * r, 180.0),
            Marker::TriangleRight => polygon(3, 1.5 * r, 0.0),
            Marker::Pentagon => polygon(5, 1.15 * r, 90.0),
        })
    }
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
    /// The shape of the markers (when drawn).
    pub marker: Marker,
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
    /// The scale of a picture of `size`: linear in the size from the default 1024×768 up, and
    /// shrinking only with the square root below it, since a small picture (a figure at column
    /// width) is shown larger than its pixels and its text must stay readable.
    fn new(size: (u32, u32)) -> Metrics {
        let linear = (size.0 as f64 / 1024.0).min(size.1 as f64 / 768.0);
        let scale = if linear >= 1.0 {
            linear
        } else {
            linear.max(0.2).sqrt()
        };
        Metrics { scale }
    }
    fn px(self, v: f64) -> i32 {
        (v * self.scale).round().max(1.0) as i32
    }
    fn font(self, v: f64) -> TextStyle<'static> {
        TextStyle::from((FAMILY, v * self.scale).into_font())
    }
}

/// The width in pixels the legend column of `figure` needs at metrics `m`: its widest line of
/// text (heading 17, entries 16 after a swatch, details and notes 14, as `draw_legend` sets them;
/// for a heat map the colour key's heading and labels), plus margins.
fn legend_width(figure: &Figure, m: Metrics) -> f64 {
    // (text, font size, indent) before scaling.
    let mut lines: Vec<(String, f64, f64)> = Vec::new();
    let mut legend = |heading: &str, entries: Vec<(&str, &[String])>, notes: &[String]| {
        lines.push((heading.to_string(), 17.0, 6.0));
        for (label, details) in entries {
            lines.push((label.to_string(), 16.0, 28.0));
            lines.extend(details.iter().map(|d| (d.clone(), 14.0, 28.0)));
        }
        lines.extend(notes.iter().map(|n| (n.clone(), 14.0, 6.0)));
    };
    match figure {
        Figure::Xy(f) => legend(
            &f.legend_title,
            f.series
                .iter()
                .map(|s| (s.label.as_str(), s.details.as_slice()))
                .collect(),
            &f.legend_notes,
        ),
        Figure::Grid(f) => {
            let mut seen: Vec<&str> = Vec::new();
            for s in f.panels.iter().flat_map(|p| &p.series) {
                if !seen.contains(&s.label.as_str()) {
                    seen.push(&s.label);
                }
            }
            legend(
                &f.legend_title,
                seen.into_iter().map(|l| (l, &[][..])).collect(),
                &f.legend_notes,
            )
        }
        Figure::Bars(f) => legend(
            "",
            f.layers
                .iter()
                .map(|l| (l.label.as_str(), &[][..]))
                .collect(),
            &[],
        ),
        Figure::Heat(f) => {
            let values = f.values.iter().flatten().flatten();
            let lo = values.clone().copied().fold(f64::INFINITY, f64::min);
            let hi = values.copied().fold(f64::NEG_INFINITY, f64::max);
            for part in wrap(&f.value_label, 22) {
                lines.push((part, 14.0, 4.0));
            }
            let labels: Vec<String> = if hi > lo {
                colour_key_ticks(lo, hi, 400.0, m)
                    .into_iter()
                    .map(|t| t.label)
                    .collect()
            } else {
                vec![format_number(hi)]
            };
            for l in labels {
                lines.push((l, 15.0, 41.0));
            }
        }
    }
    lines
        .iter()
        .map(|(t, size, indent)| (indent + 16.0) * m.scale + ticks::text_width(t, size * m.scale))
        .fold(0.0, f64::max)
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
        .min(LINE_FILL * width / ticks::text_width(title, 1.0).max(1e-9))
        .max(8.0);
    let body = root
        .margin(m.px(8.0), 0, 0, 0)
        .titled(title, TextStyle::from((FAMILY, title_size).into_font()))
        .map_err(fail)?;
    let (w, _) = body.dim_in_pixel();
    // The legend / colour key gets its own column on the right so it never hides data: as wide
    // as its text, at most two fifths of the picture; text wider than that shrinks.
    let needed = legend_width(figure, m);
    let most = 0.4 * w as f64;
    let lm = Metrics {
        scale: m.scale * (most / needed).min(1.0),
    };
    let legend_width = needed.min(most).max(60.0 * m.scale).ceil() as u32;
    let (plot, legend) = body.split_horizontally(w.saturating_sub(legend_width));
    match figure {
        Figure::Xy(f) => draw_xy(f, &plot, &legend, m, lm),
        Figure::Heat(f) => draw_heat(f, &plot, &legend, m, lm),
        Figure::Bars(f) => draw_bars(f, &plot, &legend, m, lm),
        Figure::Grid(f) => draw_grid(f, &plot, &legend, m, lm),
    }
}

/// Share of the available width a line of text may fill.
const LINE_FILL: f64 = 0.95;

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
    lm: Metrics,
) -> Result<(), String> {
    draw_xy_chart(f, plot, m)?;
    let entries: Vec<LegendEntry> = f.series.iter().map(legend_entry).collect();
    draw_legend(legend, lm, &f.legend_title, &entries, &f.legend_notes)
}

/// The legend entry of a series: a box for markers, a bar for lines.
fn legend_entry(s: &Series) -> LegendEntry {
    LegendEntry {
        label: s.label.clone(),
        colour: s.colour,
        swatch: match s.style {
            SeriesStyle::Line => Swatch::Line,
            SeriesStyle::Dashed => Swatch::Dashed,
            SeriesStyle::Markers => Swatch::Marker(s.marker),
            SeriesStyle::LineAndMarkers => Swatch::LineAndMarker(s.marker),
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
    let room = |scale: Scale, lo: f64, hi: f64, orientation: Orientation| {
        move |length: f64| {
            ticks::choose(&AxisRoom {
                scale,
                lo,
                hi,
                length,
                font: TICK_FONT * m.scale,
                orientation,
            })
        }
    };
    let layout = AxesLayout::new(
        plot.dim_in_pixel(),
        m,
        m.px(X_AREA),
        room(f.x.scale, x0, x1, Orientation::Horizontal),
        room(f.y.scale, y0, y1, Orientation::Vertical),
    );
    let mut chart = layout
        .builder(plot, m)
        .build_cartesian_2d(
            Ticked::new(x0, x1, layout.x_ticks.clone()),
            Ticked::new(y0, y1, layout.y_ticks.clone()),
        )
        .map_err(fail)?;
    let (xs, ys) = (f.x.scale, f.y.scale);
    let x_fmt = |p: &f64| label_at(&layout.x_ticks, *p);
    let y_fmt = |p: &f64| label_at(&layout.y_ticks, *p);
    chart
        .configure_mesh()
        .x_desc(f.x.label.as_str())
        .y_desc(f.y.label.as_str())
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .set_all_tick_mark_size(m.px(TICK_MARK))
        .label_style(m.font(TICK_FONT))
        .axis_desc_style(m.font(DESC_FONT))
        .bold_line_style(RGBColor(215, 215, 215))
        .light_line_style(RGBColor(242, 242, 242))
        .draw()
        .map_err(fail)?;

    let radius = m.px(MARKER_RADIUS);
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
            // A curve leaving the shown range (a fit overshooting 0..1) is cut where it crosses
            // the frame, not flattened onto it.
            for run in clip_runs(&points, (x0, x1), (y0, y1)) {
                if s.style == SeriesStyle::Dashed {
                    chart
                        .draw_series(DashedLineSeries::new(
                            run,
                            m.px(6.0),
                            m.px(6.0),
                            colour.stroke_width(m.px(1.0) as u32),
                        ))
                        .map_err(fail)?;
                } else {
                    let width = m.px(2.5) as u32;
                    chart
                        .draw_series(LineSeries::new(run, colour.stroke_width(width)))
                        .map_err(fail)?;
                }
            }
        }
        if matches!(s.style, SeriesStyle::Markers | SeriesStyle::LineAndMarkers) {
            let shown: Vec<(f64, f64)> = points
                .iter()
                .flatten()
                .filter(|&&(x, y)| (x0..=x1).contains(&x) && (y0..=y1).contains(&y))
                .copied()
                .collect();
            for p in shown {
                draw_marker(chart.plotting_area(), p, s.marker, radius, s.colour, false)?;
            }
        }
    }
    Ok(())
}

/// Radius of a data marker, before scaling.
const MARKER_RADIUS: f64 = 5.0;
/// The ring around every marker, so that white (large blocks) and pale markers stay visible on
/// the white background.
const OUTLINE: RGBColor = RGBColor(60, 60, 60);

/// Draws a marker of shape `marker` and colour `colour` with its dark outline on `area` at `at`
/// (chart or pixel coordinates), `radius` pixels being the circle's radius. Shapes other than
/// the circle, and the circle too when `circle_as_polygon` (the legend's, which must not count
/// as a data point), are a dark polygon under a coloured one: no stroked path is drawn.
fn draw_marker<DB: DrawingBackend, CT: CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    at: CT::From,
    marker: Marker,
    radius: i32,
    colour: Rgb,
    circle_as_polygon: bool,
) -> Result<(), String> {
    let fill = colour.plotters().filled();
    let r = radius as f64;
    let shape = |r: f64| match (marker.corners(r), circle_as_polygon) {
        (Some(c), _) => Some(c),
        (None, true) => Some(circle_corners(r)),
        (None, false) => None,
    };
    match (shape(r), shape(r + 1.0)) {
        (Some(inner), Some(outer)) => area
            .draw(
                &(EmptyElement::at(at)
                    + Polygon::new(outer, OUTLINE.filled())
                    + Polygon::new(inner, fill)),
            )
            .map_err(fail),
        _ => area
            .draw(
                &(EmptyElement::at(at)
                    + Circle::new((0, 0), radius, fill)
                    + Circle::new((0, 0), radius, OUTLINE.stroke_width(1))),
            )
            .map_err(fail),
    }
}

/// A circle of radius `r` around (0, 0) as a polygon of 20 corners.
fn circle_corners(r: f64) -> Vec<(i32, i32)> {
    (0..20)
        .map(|k| {
            let a = (k as f64 * 18.0).to_radians();
            ((r * a.cos()).round() as i32, (r * a.sin()).round() as i32)
        })
        .collect()
}

/// The runs of consecutive points inside the box `xs` × `ys`, each ended (or begun) where the
/// line crosses the box's edge; `None` (a point a log axis cannot show) breaks a run.
fn clip_runs(
    points: &[Option<(f64, f64)>],
    xs: (f64, f64),
    ys: (f64, f64),
) -> Vec<Vec<(f64, f64)>> {
    let inside = |(x, y): (f64, f64)| x >= xs.0 && x <= xs.1 && y >= ys.0 && y <= ys.1;
    // The part of the segment a→b inside the box, as parameters t0 ≤ t1 in 0..1 (Liang–Barsky).
    let clip = |a: (f64, f64), b: (f64, f64)| -> Option<(f64, f64)> {
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        for (p, q) in [
            (-dx, a.0 - xs.0),
            (dx, xs.1 - a.0),
            (-dy, a.1 - ys.0),
            (dy, ys.1 - a.1),
        ] {
            if p == 0.0 {
                if q < 0.0 {
                    return None;
                }
            } else {
                let t = q / p;
                if p < 0.0 {
                    t0 = t0.max(t);
                } else {
                    t1 = t1.min(t);
                }
            }
        }
        (t0 <= t1).then_some((t0, t1))
    };
    let at = |a: (f64, f64), b: (f64, f64), t: f64| (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
    let mut runs = Vec::new();
    let mut run: Vec<(f64, f64)> = Vec::new();
    let mut previous: Option<(f64, f64)> = None;
    for p in points {
        match (previous, *p) {
            (Some(a), Some(b)) => {
                if let Some((t0, t1)) = clip(a, b) {
                    let start = at(a, b, t0);
                    if run.is_empty() {
                        run.push(start);
                    }
                    run.push(at(a, b, t1));
                    if t1 < 1.0 {
                        runs.push(std::mem::take(&mut run));
                    }
                } else if !run.is_empty() {
                    runs.push(std::mem::take(&mut run));
                }
            }
            (None, Some(b)) if inside(b) => run = vec![b],
            _ => {
                if run.len() > 1 {
                    runs.push(std::mem::take(&mut run));
                }
                run.clear();
            }
        }
        previous = *p;
    }
    if run.len() > 1 {
        runs.push(run);
    }
    runs.retain(|r| r.len() > 1);
    runs
}

/// How a panel of a grid sets its text: the panel's [`Metrics`] (its tick labels are
/// `TICK_FONT · scale`), and its heading broken into lines that fit the panel's width, each with
/// its font size: the first line (the metric) larger than the tick labels, the others as large.
struct PanelText {
    metrics: Metrics,
    lines: Vec<(String, f64)>,
}

/// Smallest tick label font in a panel, in pixels: below this, digits blur.
const MIN_PANEL_TICK_FONT: f64 = 9.0;
/// The first heading line (the metric name) is this much larger than the tick labels.
const PANEL_HEADING: f64 = 1.2;

impl PanelText {
    /// The text of a panel of `panel` pixels in a grid on `plot` pixels, in a picture of
    /// metrics `m`: text scaled to the whole picture would crowd a small panel, text scaled to the
    /// panel alone would be unreadable; the panel's share of the grid shrinks it, to no less than
    /// three quarters of the picture's (and [`MIN_PANEL_TICK_FONT`]).
    fn new(title: &str, panel: (u32, u32), plot: (u32, u32), m: Metrics) -> PanelText {
        let share = (panel.0 as f64 * panel.1 as f64) / (plot.0 as f64 * plot.1 as f64).max(1.0);
        let scale =
            (m.scale * (1.6 * share.sqrt()).clamp(0.75, 1.0)).max(MIN_PANEL_TICK_FONT / TICK_FONT);
        let metrics = Metrics { scale };
        let tick = TICK_FONT * scale;
        let width = LINE_FILL * panel.0 as f64;
        let mut lines = Vec::new();
        for (i, line) in title.lines().enumerate() {
            let size = if i == 0 { PANEL_HEADING * tick } else { tick };
            for part in wrap_to_width(line, width, size) {
                // A piece without a break that is still too wide shrinks, as little as needed.
                let fitted = size.min(size * width / ticks::text_width(&part, size).max(1.0));
                lines.push((part, fitted));
            }
        }
        PanelText { metrics, lines }
    }
}

/// `s` broken into lines no wider than `width` pixels at font `size`, after '_', '.', ' ' or
/// '/' where possible; a piece without such a break stays whole.
fn wrap_to_width(s: &str, width: f64, size: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut piece = String::new();
    let flush_piece = |current: &mut String, piece: &mut String, lines: &mut Vec<String>| {
        let joined = format!("{current}{piece}");
        if !current.is_empty() && ticks::text_width(joined.trim_end(), size) > width {
            lines.push(current.trim_end().to_string());
            *current = std::mem::take(piece);
        } else {
            *current = joined;
            piece.clear();
        }
    };
    for c in s.chars() {
        piece.push(c);
        if matches!(c, '_' | '.' | ' ' | '/') {
            flush_piece(&mut current, &mut piece, &mut lines);
        }
    }
    flush_piece(&mut current, &mut piece, &mut lines);
    if !current.trim_end().is_empty() {
        lines.push(current.trim_end().to_string());
    }
    lines
}

/// The panels of `f` in a grid on `plot`, each under its heading, and one legend for all.
fn draw_grid<DB: DrawingBackend>(
    f: &PanelGrid,
    plot: &Area<DB>,
    legend: &Area<DB>,
    m: Metrics,
    lm: Metrics,
) -> Result<(), String> {
    let n = f.panels.len();
    let columns = f.columns.clamp(1, n.max(1));
    let rows = n.div_ceil(columns).max(1);
    let areas = plot.split_evenly((rows, columns));
    for (panel, area) in f.panels.iter().zip(&areas) {
        let (w, _) = area.dim_in_pixel();
        let text = PanelText::new(&panel.title, area.dim_in_pixel(), plot.dim_in_pixel(), m);
        let top = text.metrics.px(6.0);
        let mut y = top;
        for (line, size) in &text.lines {
            let style =
                TextStyle::from((FAMILY, *size).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
            area.draw(&Text::new(line.to_string(), (w as i32 / 2, y), style))
                .map_err(fail)?;
            y += (size * 1.25).round() as i32;
        }
        draw_xy_chart(panel, &area.margin(y + top, 0, 0, 0), text.metrics)?;
    }
    let mut entries: Vec<LegendEntry> = Vec::new();
    for s in f.panels.iter().flat_map(|p| &p.series) {
        if !entries.iter().any(|e| e.label == s.label) {
            entries.push(legend_entry(s));
        }
    }
    draw_legend(legend, lm, &f.legend_title, &entries, &f.legend_notes)
}

/// Font size of tick labels, before [`Metrics`] scaling.
const TICK_FONT: f64 = 16.0;
/// Font size of axis descriptions, before scaling.
const DESC_FONT: f64 = 19.0;
/// Length of a tick mark, before scaling.
const TICK_MARK: f64 = 5.0;
/// Height of the x label area (tick labels and the description), before scaling.
const X_AREA: f64 = 62.0;
/// Margin around a chart, before scaling.
const CHART_MARGIN: f64 = 12.0;

/// Where a chart's axes go: the label areas sized to what they hold, and the ticks chosen for
/// the axis lengths that leaves.
struct AxesLayout {
    x_area: i32,
    y_area: i32,
    x_ticks: Vec<Tick>,
    y_ticks: Vec<Tick>,
}

impl AxesLayout {
    /// The layout of a chart on an area of `dim` pixels with an x label area `x_area` high:
    /// `y_ticks` chooses the y ticks for the y axis length, whose widest label sizes the y label
    /// area; `x_ticks` then chooses the x ticks for the x axis length that is left.
    fn new(
        dim: (u32, u32),
        m: Metrics,
        x_area: i32,
        x_ticks: impl Fn(f64) -> Vec<Tick>,
        y_ticks: impl Fn(f64) -> Vec<Tick>,
    ) -> AxesLayout {
        let margin = m.px(CHART_MARGIN);
        let y_length = (dim.1 as i32 - 2 * margin - x_area).max(1) as f64;
        let y_ticks = y_ticks(y_length);
        let widest = y_ticks
            .iter()
            .map(|t| ticks::text_width(&t.label, TICK_FONT * m.scale))
            .fold(0.0, f64::max);
        // Description (rotated, one line), a gap, the labels, twice the tick mark (plotters'
        // distance from the axis), rounded up.
        let y_area =
            (DESC_FONT * m.scale * 1.4 + widest + (2.0 * TICK_MARK + 8.0) * m.scale).ceil() as i32;
        let x_length = (dim.0 as i32 - 2 * margin - y_area).max(1) as f64;
        AxesLayout {
            x_area,
            y_area,
            x_ticks: x_ticks(x_length),
            y_ticks,
        }
    }

    /// A chart builder on `area` with this layout's label areas.
    fn builder<'a, 'b, DB: DrawingBackend>(
        &self,
        area: &'a Area<'b, DB>,
        m: Metrics,
    ) -> ChartBuilder<'a, 'b, DB> {
        let mut builder = ChartBuilder::on(area);
        builder
            .margin(m.px(CHART_MARGIN))
            .x_label_area_size(self.x_area)
            .y_label_area_size(self.y_area);
        builder
    }
}

/// The label of the tick at position `p` (plotters asks with the positions it was given).
fn label_at(ticks: &[Tick], p: f64) -> String {
    ticks
        .iter()
        .find(|t| (t.position - p).abs() <= 1e-9 * (1.0 + p.abs()))
        .map(|t| t.label.clone())
        .unwrap_or_default()
}

/// Ticks for `names` placed at 0, 1, …: every name when they fit side by side (or stacked),
/// else every second, third, … name, so that no two labels overlap.
fn category_ticks(names: &[String], length: f64, font: f64, orientation: Orientation) -> Vec<Tick> {
    let room = AxisRoom {
        scale: Scale::Linear,
        lo: -0.5,
        hi: names.len() as f64 - 0.5,
        length,
        font,
        orientation,
    };
    let all = |every: usize| -> Vec<Tick> {
        names
            .iter()
            .enumerate()
            .filter(|(i, _)| i % every == 0)
            .map(|(i, n)| Tick {
                position: i as f64,
                label: n.clone(),
            })
            .collect()
    };
    let fits = |t: &[Tick]| {
        let extents = room.extents(t);
        extents.windows(2).all(|w| match orientation {
            Orientation::Horizontal => w[1].0 - w[0].1 >= 0.5 * font,
            Orientation::Vertical => w[1].0 - w[0].1 >= 0.1 * font,
        })
    };
    (1..=names.len().max(1))
        .map(all)
        .find(|t| fits(t))
        .unwrap_or_default()
}

/// A linear coordinate with the tick positions given (plotters' own choice cannot put whole
/// powers on a log axis or ticks at category centres); no minor grid lines.
struct Ticked {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

impl Ticked {
    fn new(lo: f64, hi: f64, ticks: Vec<Tick>) -> Ticked {
        Ticked {
            lo,
            hi,
            ticks: ticks.into_iter().map(|t| t.position).collect(),
        }
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

#[derive(Clone, Copy, PartialEq)]
enum Swatch {
    Box,
    Line,
    Dashed,
    Marker(Marker),
    LineAndMarker(Marker),
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
            Swatch::Marker(marker) | Swatch::LineAndMarker(marker) => {
                let mid = (x + box_size / 2, y + box_size / 2);
                if matches!(e.swatch, Swatch::LineAndMarker(_)) {
                    area.draw(&Rectangle::new(
                        [
                            (x - m.px(4.0), mid.1 - m.px(1.0)),
                            (x + box_size + m.px(4.0), mid.1 + m.px(1.0)),
                        ],
                        colour.filled(),
                    ))
                    .map_err(fail)?;
                }
                draw_marker(area, mid, marker, m.px(MARKER_RADIUS), e.colour, true)?;
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

fn draw_heat<DB: DrawingBackend>(
    f: &HeatMap,
    plot: &Area<DB>,
    legend: &Area<DB>,
    m: Metrics,
    lm: Metrics,
) -> Result<(), String> {
    let (nx, ny) = (f.xs.len(), f.ys.len());
    let values: Vec<f64> = f.values.iter().flatten().flatten().copied().collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let fraction = |v: f64| if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
    let font = TICK_FONT * m.scale;
    let layout = AxesLayout::new(
        plot.dim_in_pixel(),
        m,
        m.px(X_AREA),
        |length| category_ticks(&f.xs, length, font, Orientation::Horizontal),
        |length| category_ticks(&f.ys, length, font, Orientation::Vertical),
    );
    let mut chart = layout
        .builder(plot, m)
        .build_cartesian_2d(
            Ticked::new(-0.5, nx as f64 - 0.5, layout.x_ticks.clone()),
            Ticked::new(-0.5, ny as f64 - 0.5, layout.y_ticks.clone()),
        )
        .map_err(fail)?;
    let x_fmt = |p: &f64| label_at(&layout.x_ticks, *p);
    let y_fmt = |p: &f64| label_at(&layout.y_ticks, *p);
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc(f.x_label.as_str())
        .y_desc(f.y_label.as_str())
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .set_all_tick_mark_size(m.px(TICK_MARK))
        .label_style(m.font(TICK_FONT))
        .axis_desc_style(m.font(DESC_FONT))
        .draw()
        .map_err(fail)?;
    // Cell text shrinks with the cell so a wide table stays legible.
    let (pw, ph) = chart.plotting_area().dim_in_pixel();
    let cell_w = pw as f64 / nx.max(1) as f64;
    let cell_h = ph as f64 / ny.max(1) as f64;
    // The widest value fits its cell with a margin.
    let widest = values
        .iter()
        .map(|v| ticks::text_width(&format_number(*v), 1.0))
        .fold(0.0, f64::max);
    let text_size = (0.88 * cell_w / widest.max(1e-9))
        .min(cell_h / 2.2)
        .min(20.0 * m.scale)
        .max(6.0);
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
    draw_colour_key(legend, lm, &f.value_label, lo, hi)
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
    let width = m.px(24.0);
    // The heading may be long (a metric name): break it at '_' / '.' to fit the column.
    let mut y = m.px(14.0);
    for part in wrap(heading, 22) {
        area.draw(&Text::new(part, (m.px(4.0), y), m.font(14.0)))
            .map_err(fail)?;
        y += m.px(17.0);
    }
    let top = y + m.px(16.0);
    let bottom = (height as i32 - m.px(80.0)).max(top + 20);
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
    let label = |text: String, y: i32| -> Result<(), String> {
        area.draw(&Rectangle::new(
            [(x + width, y), (x + width + m.px(4.0), y + 1)],
            BLACK.filled(),
        ))
        .map_err(fail)?;
        area.draw(&Text::new(
            text,
            (x + width + m.px(7.0), y),
            m.font(15.0).pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(fail)
    };
    if hi > lo {
        // Round values along the bar, as on an axis.
        let key_ticks = colour_key_ticks(lo, hi, (bottom - top) as f64, m);
        for t in key_ticks {
            let y = bottom - ((t.position - lo) / (hi - lo) * (bottom - top) as f64).round() as i32;
            label(t.label, y)?;
        }
    } else {
        label(format_number(hi), (top + bottom) / 2)?;
    }
    Ok(())
}

/// The ticks of a colour key from `lo` to `hi`, `length` pixels tall.
fn colour_key_ticks(lo: f64, hi: f64, length: f64, m: Metrics) -> Vec<Tick> {
    ticks::choose(&AxisRoom {
        scale: Scale::Linear,
        lo,
        hi,
        length,
        font: 15.0 * m.scale,
        orientation: Orientation::Vertical,
    })
}

/// Splits `s` into lines of at most about `width` characters, breaking after '_', '.' or ' '
/// where possible (not inside a unit such as `[B/LUP]`).
fn wrap(s: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current = String::new();
    let mut last_break = None;
    for c in s.chars() {
        current.push(c);
        if matches!(c, '_' | '.' | ' ') {
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
    lm: Metrics,
) -> Result<(), String> {
    let n = f.categories.len();
    let totals: Vec<f64> = (0..n)
        .map(|i| f.layers.iter().map(|l| l.values[i]).sum())
        .collect();
    let top = totals.iter().copied().fold(0.0, f64::max);
    let top = if top > 0.0 { top * 1.08 } else { 1.0 };
    // Category names that do not fit side by side are turned upright.
    let font = TICK_FONT * m.scale;
    let (w, _) = plot.dim_in_pixel();
    let rough_length = w as f64 - (2.0 * CHART_MARGIN + 86.0) * m.scale;
    let side_by_side = AxisRoom {
        scale: Scale::Linear,
        lo: -0.5,
        hi: n as f64 - 0.5,
        length: rough_length,
        font,
        orientation: Orientation::Horizontal,
    };
    let all: Vec<Tick> = f
        .categories
        .iter()
        .enumerate()
        .map(|(i, c)| Tick {
            position: i as f64,
            label: c.clone(),
        })
        .collect();
    let upright = n > 1 && !side_by_side.fits(&all);
    let longest = f
        .categories
        .iter()
        .map(|c| ticks::text_width(c, font))
        .fold(0.0, f64::max);
    // Upright labels shrink when the bars are narrower than a line of text.
    let upright_size = font.min(0.95 * rough_length / n.max(1) as f64).max(6.0);
    let x_area = if upright {
        (longest * upright_size / font + (DESC_FONT * 1.4 + 24.0) * m.scale).ceil() as i32
    } else {
        m.px(X_AREA)
    };
    let layout = AxesLayout::new(
        plot.dim_in_pixel(),
        m,
        x_area,
        |_| all.clone(),
        |length| {
            ticks::choose(&AxisRoom {
                scale: Scale::Linear,
                lo: 0.0,
                hi: top,
                length,
                font,
                orientation: Orientation::Vertical,
            })
        },
    );
    let mut chart = layout
        .builder(plot, m)
        .build_cartesian_2d(
            Ticked::new(-0.5, n as f64 - 0.5, layout.x_ticks.clone()),
            Ticked::new(0.0, top, layout.y_ticks.clone()),
        )
        .map_err(fail)?;
    // plotters centres every x label on its tick, which puts turned labels across the axis:
    // turned labels are drawn below, not by the mesh.
    let x_fmt = |p: &f64| {
        if upright {
            String::new()
        } else {
            label_at(&layout.x_ticks, *p)
        }
    };
    let y_fmt = |p: &f64| label_at(&layout.y_ticks, *p);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc(f.x_label.as_str())
        .y_desc(f.y_label.as_str())
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .set_all_tick_mark_size(m.px(TICK_MARK))
        .label_style(m.font(TICK_FONT))
        .axis_desc_style(m.font(DESC_FONT))
        .bold_line_style(RGBColor(215, 215, 215))
        .light_line_style(RGBColor(242, 242, 242))
        .draw()
        .map_err(fail)?;
    if upright {
        let style = TextStyle::from((FAMILY, upright_size).into_font())
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
    draw_legend(legend, lm, "", &entries, &[])
}

/// A number for a label: at most four significant digits, trailing zeros dropped, `m×10ⁿ`
/// outside 0.001..100000 (the style of the axes, never `e`), a true minus sign; magnitudes below
/// 1e-12 print as 0.
pub fn format_number(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let a = v.abs();
    if a < 1e-12 {
        return "0".to_string();
    }
    let text = if !(1e-3..1e5).contains(&a) {
        let s = format!("{v:.2e}");
        let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
        let exponent: i64 = exponent.parse().unwrap_or(0);
        format!(
            "{}×10{}",
            trim_zeros(mantissa),
            ticks::superscript(exponent)
        )
    } else {
        let decimals = (3 - a.log10().floor() as i32).clamp(0, 6) as usize;
        trim_zeros(&format!("{v:.decimals$}"))
    };
    match text.strip_prefix('-') {
        Some(rest) => format!("−{rest}"),
        None => text,
    }
}

fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
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
        assert_eq!(format_number(1.5e6), "1.5×10⁶");
        assert_eq!(format_number(-0.0), "0");
        assert_eq!(format_number(2.5e-5), "2.5×10⁻⁵");
        assert_eq!(format_number(-0.0221), "−0.0221");
    }

    #[test]
    fn small_pictures_keep_readable_text() {
        assert_eq!(Metrics::new((1024, 768)).scale, 1.0);
        assert_eq!(Metrics::new((2048, 1536)).scale, 2.0);
        // A column-width picture is about half the default size; its text shrinks only to 70 %.
        let column = Metrics::new((500, 375)).scale;
        assert!(
            (column - (500.0f64 / 1024.0).sqrt()).abs() < 1e-12,
            "{column}"
        );
        assert!(TICK_FONT * column >= 11.0);
    }

    #[test]
    fn panel_headings_are_larger_than_tick_labels_and_fit() {
        let title = "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum\nn = 77, median |rel err| = 7.362 %";
        // (picture, grid columns × rows) as `plot validation` draws them: the default size with
        // 12 and 4 panels, a wide two-panel figure, a column-width picture with 2 panels.
        for (size, (cols, rows)) in [
            ((1024, 768), (4, 3)),
            ((1024, 768), (2, 2)),
            ((1400, 650), (2, 1)),
            ((500, 375), (2, 1)),
        ] {
            let m = Metrics::new(size);
            let plot = (size.0 * 4 / 5, size.1 - 40);
            let panel = (plot.0 / cols, plot.1 / rows);
            let text = PanelText::new(title, panel, plot, m);
            let tick = TICK_FONT * text.metrics.scale;
            assert!(tick >= MIN_PANEL_TICK_FONT, "{size:?}: tick font {tick}");
            let (first, size0) = &text.lines[0];
            assert!(
                *size0 >= 1.1 * tick,
                "{size:?}: heading {size0} vs ticks {tick}"
            );
            assert!(first.starts_with("lts__"), "{:?}", text.lines);
            for (line, size) in &text.lines {
                assert!(*size >= tick * 0.99, "{size:?}: {line} at {size}");
                assert!(
                    ticks::text_width(line, *size) <= LINE_FILL * panel.0 as f64 + 0.5,
                    "{line} is wider than the panel"
                );
            }
            assert_eq!(
                text.lines
                    .iter()
                    .map(|l| l.0.as_str())
                    .collect::<String>()
                    .replace(' ', ""),
                title.replace(['\n', ' '], "")
            );
        }
    }

    #[test]
    fn clipped_curves_end_on_the_frame() {
        let runs = clip_runs(
            &[
                Some((0.0, 0.5)),
                Some((1.0, 1.5)),
                Some((2.0, 0.5)),
                None,
                Some((3.0, 0.2)),
            ],
            (0.0, 3.0),
            (0.0, 1.0),
        );
        assert_eq!(
            runs,
            [vec![(0.0, 0.5), (0.5, 1.0)], vec![(1.5, 1.0), (2.0, 0.5)]]
        );
    }

    #[test]
    fn category_labels_thin_out_instead_of_overlapping() {
        let names: Vec<String> = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
            .iter()
            .map(|v| v.to_string())
            .collect();
        let all = category_ticks(&names, 900.0, 16.0, Orientation::Horizontal);
        assert_eq!(all.len(), 11);
        let some = category_ticks(&names, 200.0, 11.0, Orientation::Horizontal);
        assert!(some.len() < 11 && some.len() >= 3, "{some:?}");
        assert_eq!(some[0].label, "1");
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
