//! `gputraffic plot` as a user meets it: every kind rendered from small sweep fixtures
//! (tests/data/plot/) to SVG and checked for its content (title, axis labels, one marker per row,
//! curves, legend, cell values), PNG output of the requested size, byte-identical reruns, and
//! one clear message with exit code 2 and no output file for every kind of bad input.

mod common;
use common::{gputraffic, rejects, scratch};

use std::path::Path;

const STAR4: &str = "tests/data/plot/star4.csv";
const LAYERS: &str = "tests/data/plot/layers.csv";
const FIT: &str = "tests/data/plot/fit.json";

/// Runs `plot` with `args` and `--out <dir>/<file>`; returns the file's bytes and stderr.
fn plot(dir: &Path, file: &str, args: &[&str]) -> (Vec<u8>, String) {
    let out = dir.join(file);
    let mut all: Vec<&str> = vec!["plot"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", out.to_str().unwrap()]);
    let (code, stdout, stderr) = gputraffic(&all);
    assert_eq!(code, 0, "{all:?}: {stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    (std::fs::read(&out).unwrap(), stderr)
}

fn svg(dir: &Path, args: &[&str]) -> String {
    String::from_utf8(plot(dir, "plot.svg", args).0).unwrap()
}

/// The elements `<tag .../>` or `<tag ...>` of an SVG, as their attribute text.
fn elements<'a>(svg: &'a str, tag: &str) -> Vec<&'a str> {
    let open = format!("<{tag} ");
    svg.match_indices(&open)
        .map(|(i, _)| {
            let rest = &svg[i + open.len()..];
            &rest[..rest.find('>').unwrap()]
        })
        .collect()
}

fn attribute<'a>(element: &'a str, name: &str) -> &'a str {
    let key = format!(" {name}=\"");
    let start = format!(" {element}")
        .find(&key)
        .map(|i| i + key.len() - 1)
        .unwrap_or_else(|| panic!("no {name} in {element}"));
    let rest = &element[start..];
    &rest[..rest.find('"').unwrap()]
}

/// The text of every `<text>` element.
fn texts(svg: &str) -> Vec<String> {
    svg.match_indices("<text ")
        .map(|(i, _)| {
            let rest = &svg[i..];
            let start = rest.find('>').unwrap() + 1;
            let end = rest.find("</text>").unwrap();
            rest[start..end]
                .trim()
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&amp;", "&")
        })
        .collect()
}

/// Filled circles: the data markers (the legend uses squares, and each marker's ring is an
/// unfilled circle).
fn markers(svg: &str) -> Vec<&str> {
    elements(svg, "circle")
        .into_iter()
        .filter(|c| attribute(c, "fill") != "none")
        .collect()
}

/// The points of every polyline.
fn polylines(svg: &str) -> Vec<(String, Vec<(i32, i32)>)> {
    elements(svg, "polyline")
        .into_iter()
        .map(|p| {
            let points = attribute(p, "points")
                .split_whitespace()
                .map(|xy| {
                    let (x, y) = xy.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect();
            (attribute(p, "stroke").to_string(), points)
        })
        .collect()
}

/// The cells of a fixture column, by reading the CSV the same way as the binary.
fn column(file: &str, name: &str) -> Vec<Option<f64>> {
    gputraffic::input::table::Table::load(Path::new(file))
        .unwrap()
        .numbers(name)
        .unwrap()
}

fn shapes(file: &str) -> Vec<String> {
    gputraffic::input::table::Table::load(Path::new(file))
        .unwrap()
        .block_shapes()
        .unwrap()
        .into_iter()
        .map(gputraffic::plot::shape_name)
        .collect()
}

fn has_text(texts: &[String], wanted: &str) -> bool {
    texts.iter().any(|t| t.contains(wanted))
}

#[test]
fn hit_rate_has_one_marker_per_row_with_data_the_shapes_and_the_fitted_curve() {
    let dir = scratch("hit-rate");
    let rates = column(STAR4, "l2_redundant_hit_rate");
    let with_data = rates.iter().filter(|r| r.is_some()).count();
    assert!(
        with_data < rates.len(),
        "the fixture should have a row without a rate"
    );

    let (bytes, stderr) = plot(
        &dir,
        "hit.svg",
        &["hit-rate", "--input", STAR4, "--fit", FIT],
    );
    let s = String::from_utf8(bytes).unwrap();
    let t = texts(&s);
    assert!(
        has_text(&t, "L2 redundant hit rate vs L2 oversubscription O"),
        "{t:?}"
    );
    // Labels from the quantity table, not column names.
    assert!(
        t.iter().any(|x| x == "L2 oversubscription O"),
        "x axis label: {t:?}"
    );
    assert!(
        t.iter().any(|x| x == "L2 redundant hit rate"),
        "y axis label: {t:?}"
    );
    assert_eq!(markers(&s).len(), with_data);
    // The legend names every block shape that has a point, and no other.
    for (shape, rate) in shapes(STAR4).iter().zip(&rates) {
        assert_eq!(t.contains(shape), rate.is_some(), "{shape}: {t:?}");
    }
    // The skipped row is reported.
    assert!(stderr.contains("skipped 1 of 8 rows"), "{stderr}");
    // Few shapes: the Okabe–Ito palette, one colour per shape (7 shapes with a point).
    let mut fills: Vec<&str> = markers(&s).iter().map(|m| attribute(m, "fill")).collect();
    assert!(
        fills.contains(&"#0072B2") && fills.contains(&"#E69F00"),
        "{fills:?}"
    );
    fills.sort_unstable();
    fills.dedup();
    assert_eq!(fills.len(), with_data.min(7), "{fills:?}");
    assert!(!has_text(&t, "red = log2 x / 8"));
    // --colours ernst: Ernst et al.'s colour, 128x1x1 is red 7/8 (223), no green or blue, and
    // the legend explains the code.
    let ernst = svg(&dir, &["hit-rate", "--input", STAR4, "--colours", "ernst"]);
    assert!(
        markers(&ernst)
            .iter()
            .any(|m| attribute(m, "fill") == "#DF0000")
    );
    assert!(has_text(&texts(&ernst), "red = log2 x / 8"));
    // The fitted curve: a long polyline, absent without --fit, and the parameters in the legend.
    let long = |s: &str| polylines(s).iter().filter(|(_, p)| p.len() > 100).count();
    assert_eq!(long(&s), 1);
    assert!(has_text(&t, "Gompertz fit") && has_text(&t, "a = 0.95") && has_text(&t, "R² = 0.991"));
    let without = svg(&dir, &["hit-rate", "--input", STAR4]);
    assert_eq!(long(&without), 0);
    assert!(!has_text(&texts(&without), "Gompertz"));
    // The rate axis runs from 0 to 1, its labels with one decimal each.
    assert!(
        t.iter().any(|x| x == "0.0") && t.iter().any(|x| x == "1.0"),
        "{t:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn scatter_draws_every_point_and_the_diagonal() {
    let dir = scratch("scatter");
    for log in [false, true] {
        let mut args = vec![
            "scatter",
            "--input",
            STAR4,
            "--x",
            "l2_v_down_bytes",
            "--y",
            "ernst2023_dram_load_bytes",
            "--title",
            "predicted vs simulated",
        ];
        if log {
            args.push("--log");
        }
        let s = svg(&dir, &args);
        let t = texts(&s);
        assert!(t.iter().any(|x| x == "predicted vs simulated"), "{t:?}");
        assert!(t.iter().any(|x| x == "L2 V_down [B]"), "{t:?}");
        assert!(
            t.iter().any(|x| x == "ernst2023 DRAM load volume [B]"),
            "{t:?}"
        );
        assert_eq!(markers(&s).len(), 8);
        for shape in shapes(STAR4) {
            assert!(t.contains(&shape), "{shape}: {t:?}");
        }
        assert!(t.iter().any(|x| x == "y = x"));
        // The diagonal: a two-point coloured line from bottom left to top right (SVG's y grows
        // downwards), at 45° because both axes have the same range and the plot is square in
        // data units only if the pixels are: check the direction only.
        let diagonal: Vec<_> = polylines(&s)
            .into_iter()
            .filter(|(stroke, p)| stroke != "#000000" && p.len() == 2)
            .collect();
        assert_eq!(diagonal.len(), 1, "log = {log}");
        let p = &diagonal[0].1;
        assert!(p[1].0 > p[0].0 && p[1].1 < p[0].1, "{p:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn layer_condition_draws_one_line_with_markers_per_block_shape() {
    let dir = scratch("layer-condition");
    let s = svg(&dir, &["layer-condition", "--input", LAYERS]);
    let t = texts(&s);
    assert!(
        has_text(&t, "DRAM reads per update vs XY plane size"),
        "{t:?}"
    );
    assert!(has_text(&t, "XY plane size"));
    assert!(
        t.iter().any(|x| x == "DRAM reads per update [B/LUP]"),
        "{t:?}"
    );
    // Each line its own marker shape, so lines drawn over each other stay visible: the first
    // shape's four points are circles, the second's four squares (plus one in the legend).
    assert_eq!(markers(&s).len(), 4);
    let squares = elements(&s, "polygon")
        .into_iter()
        .filter(|p| attribute(p, "fill") == "#E69F00")
        .count();
    assert_eq!(squares, 5);
    assert!(t.contains(&"32x8x1".to_string()) && t.contains(&"64x4x1".to_string()));
    // Powers of two on the x axis: 128² = 2¹⁴ up to 1024² = 2²⁰.
    assert!(
        t.contains(&"2¹⁴".to_string()) && t.contains(&"2²⁰".to_string()),
        "{t:?}"
    );
    // One coloured line per shape with one vertex per plane size, left to right.
    let lines: Vec<_> = polylines(&s)
        .into_iter()
        .filter(|(stroke, _)| stroke != "#000000")
        .collect();
    assert_eq!(lines.len(), 2);
    for (_, p) in lines {
        assert_eq!(p.len(), 4);
        assert!(p.windows(2).all(|w| w[0].0 < w[1].0), "{p:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn block_table_prints_every_value_in_its_cell() {
    let dir = scratch("block-table");
    let metric = "dram__sectors_read.sum_bytes_per_lup";
    let s = svg(&dir, &["block-table", "--input", STAR4, "--metric", metric]);
    let t = texts(&s);
    assert!(
        has_text(&t, "DRAM reads per update per block shape"),
        "{t:?}"
    );
    assert!(has_text(&t, "block_x") && has_text(&t, "block_y"));
    for v in column(STAR4, metric).into_iter().flatten() {
        let shown = gputraffic::plot::figure::format_number(v);
        assert!(t.contains(&shown), "{shown}: {t:?}");
    }
    // Block sizes on both axes, powers of two: 32, 64, 128 and 1, 2, 4, 8.
    for tick in ["32", "64", "128", "1", "2", "4", "8"] {
        assert!(t.iter().any(|x| x == tick), "{tick}: {t:?}");
    }
    // Several domains per cell: pick one with --where; the title says which.
    let s = svg(
        &dir,
        &[
            "block-table",
            "--input",
            LAYERS,
            "--metric",
            metric,
            "--where",
            "param_nx=1024",
        ],
    );
    let t = texts(&s);
    assert!(has_text(&t, "(param_nx=1024)"));
    let values = column(LAYERS, metric);
    let nx = column(LAYERS, "param_nx");
    for (v, n) in values.iter().zip(&nx) {
        let shown = gputraffic::plot::figure::format_number(v.unwrap());
        assert_eq!(t.contains(&shown), *n == Some(1024.0), "{shown}: {t:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn composition_stacks_compulsory_and_capacity_per_shape() {
    let dir = scratch("composition");
    let s = svg(&dir, &["composition", "--input", STAR4, "--level", "l2"]);
    let t = texts(&s);
    assert!(has_text(&t, "L2 volume composition per block shape"));
    assert!(t.iter().any(|x| x == "L2 → DRAM volume [B/LUP]"), "{t:?}");
    assert!(t.iter().any(|x| x == "compulsory") && t.iter().any(|x| x == "capacity"));
    let names = shapes(STAR4);
    // The shapes along the x axis in file order.
    let order: Vec<usize> = names
        .iter()
        .map(|n| t.iter().position(|x| x == n).unwrap())
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    // One compulsory and one capacity box per shape (same fill), plus one legend swatch each.
    let rects = elements(&s, "rect");
    let fills = |colour: &str| {
        rects
            .iter()
            .filter(|r| attribute(r, "fill") == colour)
            .count()
    };
    assert_eq!(fills("#0072B2"), names.len() + 1);
    assert_eq!(fills("#E69F00"), names.len() + 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn png_has_the_signature_and_the_requested_size_for_every_kind() {
    let dir = scratch("png");
    let metric = "dram__sectors_read.sum_bytes_per_lup";
    let runs: [&[&str]; 5] = [
        &["hit-rate", "--input", STAR4, "--fit", FIT],
        &[
            "scatter",
            "--input",
            STAR4,
            "--x",
            "l2_v_down_bytes",
            "--y",
            "ernst2023_dram_load_bytes",
        ],
        &["layer-condition", "--input", LAYERS],
        &["block-table", "--input", STAR4, "--metric", metric],
        &["composition", "--input", STAR4],
    ];
    for (args, (w, h)) in
        runs.iter()
            .zip([(640, 480), (1024, 768), (800, 800), (1600, 900), (300, 200)])
    {
        let size = format!("{w}x{h}");
        let mut all = args.to_vec();
        all.extend_from_slice(&["--size", &size]);
        let (png, _) = plot(&dir, "plot.png", &all);
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{args:?}");
        assert_eq!(&png[12..16], b"IHDR");
        let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
        let height = u32::from_be_bytes(png[20..24].try_into().unwrap());
        assert_eq!((width, height), (w, h), "{args:?}");
    }
    // The default size.
    let (png, _) = plot(&dir, "default.PNG", &["composition", "--input", STAR4]);
    assert_eq!(u32::from_be_bytes(png[16..20].try_into().unwrap()), 1024);
    assert_eq!(u32::from_be_bytes(png[20..24].try_into().unwrap()), 768);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_same_input_gives_the_same_bytes() {
    let dir = scratch("deterministic");
    for file in ["a.svg", "a.png"] {
        let args = ["hit-rate", "--input", STAR4, "--fit", FIT];
        let (first, _) = plot(&dir, file, &args);
        let (second, _) = plot(&dir, file, &args);
        assert!(first == second, "{file} differs between runs");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bad input: exit 2, one stderr line containing every `expected` piece, no output file (nor a
/// temporary one) left in the directory.
fn rejects_plot(name: &str, args: &[&str], out_file: &str, expected: &[&str]) {
    let dir = scratch(name);
    let out = dir.join(out_file);
    let mut all = vec!["plot"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", out.to_str().unwrap()]);
    let mut with_prefix = vec!["error: "];
    with_prefix.extend_from_slice(expected);
    rejects(&all, &with_prefix);
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert!(left.is_empty(), "{all:?} left {left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_names_the_file_and_writes_nothing() {
    // A fit of other columns is refused, not drawn over the wrong data.
    let dir = scratch("other-fit");
    let other = dir.join("l1-fit.json");
    std::fs::write(
        &other,
        r#"{"model":"gompertz","x":"l1_oversubscription","y":"l1_redundant_hit_rate","a":1,"b":-0.1,"c":1}"#,
    )
    .unwrap();
    rejects_plot(
        "other-fit-out",
        &[
            "hit-rate",
            "--input",
            STAR4,
            "--fit",
            other.to_str().unwrap(),
        ],
        "hit.png",
        &[
            "l1-fit.json",
            "x = 'l1_oversubscription'",
            "l2_oversubscription",
        ],
    );
    rejects_plot(
        "missing-column",
        &[
            "scatter",
            "--input",
            STAR4,
            "--x",
            "no_such_column",
            "--y",
            "l2_v_down_bytes",
        ],
        "p.svg",
        &[STAR4, "no column 'no_such_column'"],
    );
    rejects_plot(
        "text-output",
        &["composition", "--input", STAR4],
        "p.txt",
        &["p.txt", ".png or .svg"],
    );
    rejects_plot(
        "ambiguous-cell",
        &[
            "block-table",
            "--input",
            LAYERS,
            "--metric",
            "dram__sectors_read.sum_bytes_per_lup",
        ],
        "p.png",
        &[LAYERS, "block_x=32, block_y=8", "--where param_nx="],
    );
    rejects_plot(
        "composition-without-volumes",
        &["composition", "--input", LAYERS],
        "p.svg",
        &[LAYERS, "no column 'l2_v_comp_bytes'"],
    );
    rejects_plot(
        "empty-input",
        &["hit-rate", "--input", "tests/data/plot/header-only.csv"],
        "p.svg",
        &["tests/data/plot/header-only.csv", "no data rows"],
    );
    rejects_plot(
        "no-row-matches",
        &["layer-condition", "--input", LAYERS, "--where", "block_z=3"],
        "p.svg",
        &[LAYERS, "no row has block_z=3"],
    );
    rejects_plot(
        "missing-input",
        &["hit-rate", "--input", "tests/data/plot/nonexistent.csv"],
        "p.svg",
        &["tests/data/plot/nonexistent.csv", "cannot read"],
    );
    rejects_plot(
        "option-of-another-kind",
        &[
            "scatter", "--input", STAR4, "--x", "a", "--y", "b", "--fit", FIT,
        ],
        "p.svg",
        &["--fit", "not an option of 'plot scatter'"],
    );
    rejects_plot(
        "bad-size",
        &["composition", "--input", STAR4, "--size", "10x10"],
        "p.png",
        &["--size", "10x10"],
    );
    rejects_plot(
        "bad-fit",
        &["hit-rate", "--input", STAR4, "--fit", STAR4],
        "p.svg",
        &[STAR4, "JSON"],
    );
}

#[test]
fn axis_labels_can_be_given_for_every_kind() {
    let dir = scratch("axis-labels");
    let metric = "dram__sectors_read.sum_bytes_per_lup";
    let runs: [(&[&str], &str, &str); 6] = [
        (
            &["hit-rate", "--input", STAR4],
            "L2 oversubscription O",
            "L2 redundant hit rate",
        ),
        (
            &[
                "scatter",
                "--input",
                STAR4,
                "--x",
                "l2_v_down_bytes",
                "--y",
                "ernst2023_dram_load_bytes",
            ],
            "L2 V_down [B]",
            "ernst2023 DRAM load volume [B]",
        ),
        (
            &["layer-condition", "--input", LAYERS],
            "XY plane size nx·ny [points]",
            "DRAM reads per update [B/LUP]",
        ),
        (
            &["block-table", "--input", STAR4, "--metric", metric],
            "Blk.x = block_x [threads]",
            "Blk.y = block_y [threads]",
        ),
        (
            &["composition", "--input", STAR4],
            "block shape x×y×z",
            "L2 → DRAM volume [B/LUP]",
        ),
        (
            &["validation", "--input", VALIDATION],
            "measured [sectors]",
            "simulated [sectors]",
        ),
    ];
    for (args, default_x, default_y) in runs {
        let before = texts(&svg(&dir, args));
        assert!(
            before.iter().any(|t| t == default_x),
            "{args:?}: {before:?}"
        );
        assert!(
            before.iter().any(|t| t == default_y),
            "{args:?}: {before:?}"
        );
        let mut with = args.to_vec();
        with.extend([
            "--x-label",
            "Oversubscription O",
            "--y-label",
            "Hit rate R (%)",
        ]);
        let after = texts(&svg(&dir, &with));
        assert!(
            after.iter().any(|t| t == "Oversubscription O"),
            "{args:?}: {after:?}"
        );
        assert!(
            after.iter().any(|t| t == "Hit rate R (%)"),
            "{args:?}: {after:?}"
        );
        assert!(
            !after.iter().any(|t| t == default_x || t == default_y),
            "{args:?}"
        );
        // The default caption is made of the axis descriptions: it follows the given ones.
        if args[0] == "hit-rate" {
            assert!(
                has_text(&after, "Hit rate R (%) vs Oversubscription O"),
                "{after:?}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn scatter_refuses_columns_of_two_units() {
    // B/LUP against B: the diagonal y = x would compare nothing.
    rejects_plot(
        "scatter-units",
        &[
            "scatter",
            "--input",
            STAR4,
            "--x",
            "dram__sectors_read.sum_bytes_per_lup",
            "--y",
            "ernst2023_dram_load_bytes",
        ],
        "p.svg",
        &[
            "'dram__sectors_read.sum_bytes_per_lup' is in B/LUP",
            "'ernst2023_dram_load_bytes' in B",
        ],
    );
}

#[test]
fn colours_option_is_checked() {
    rejects_plot(
        "colours-of-composition",
        &["composition", "--input", STAR4, "--colours", "ernst"],
        "p.svg",
        &["--colours", "not an option of 'plot composition'"],
    );
    let dir = scratch("colours-bad");
    let out = dir.join("p.svg");
    let (code, _, stderr) = gputraffic(&[
        "plot",
        "hit-rate",
        "--input",
        STAR4,
        "--colours",
        "rainbow",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("rainbow") && stderr.contains("categorical"),
        "{stderr}"
    );
    assert!(!out.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tick_labels_have_one_style_and_no_e_notation() {
    // The validation fixture's panels span under one decade to several: at the default size
    // and at column width no tick label uses e notation, and every label is different within a
    // panel's axis (checked via the texts: no label repeats more often than there are panels).
    let dir = scratch("ticks");
    for size in ["1024x768", "500x375"] {
        let t = texts(&svg(
            &dir,
            &["validation", "--input", VALIDATION, "--size", size],
        ));
        let numeric: Vec<&String> = t
            .iter()
            .filter(|x| x.starts_with(|c: char| c.is_ascii_digit()) && !x.contains('='))
            .collect();
        assert!(!numeric.is_empty());
        assert!(
            numeric
                .iter()
                .all(|x| !x.contains('e') && (x.contains("×10") || !x.contains('⁰'))),
            "{numeric:?}"
        );
    }
    // Panels too small to read are drawn, with a note saying what to do.
    let (_, stderr) = plot(
        &dir,
        "small.svg",
        &["validation", "--input", VALIDATION, "--size", "400x300"],
    );
    assert!(
        stderr.contains("3 panels in 400x300 pixels") && stderr.contains("--metric"),
        "{stderr}"
    );
    let (_, stderr) = plot(&dir, "fine.svg", &["validation", "--input", VALIDATION]);
    assert!(!stderr.contains("too small"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- validation: simulated vs measured per metric, from `gputraffic validate --format json` ----

const VALIDATION: &str = "tests/data/plot/validation.json";

/// (metric, kernel, measured, simulated) of every row and metric of the fixture, read with
/// serde_json rather than the binary's parser.
fn validation_points() -> Vec<(String, String, f64, f64)> {
    let text = std::fs::read_to_string(VALIDATION).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut points = Vec::new();
    for row in v["rows"].as_array().unwrap() {
        let kernel = row["kernel"].as_str().unwrap();
        for (metric, m) in row["metrics"].as_object().unwrap() {
            points.push((
                metric.clone(),
                kernel.to_string(),
                m["measured"].as_f64().unwrap(),
                m["simulated"].as_f64().unwrap(),
            ));
        }
    }
    points
}

/// The diagonals y = x: two-point lines in the diagonal's grey (the ±10 % guides are lighter).
fn diagonals(svg: &str) -> Vec<Vec<(i32, i32)>> {
    polylines(svg)
        .into_iter()
        .filter(|(stroke, p)| stroke == "#6E6E6E" && p.len() == 2)
        .map(|(_, p)| p)
        .collect()
}

/// How many markers have each fill colour, as sorted counts.
fn fill_counts(svg: &str) -> Vec<usize> {
    let mut counts = std::collections::BTreeMap::new();
    for m in markers(svg) {
        *counts.entry(attribute(m, "fill").to_string()).or_insert(0) += 1;
    }
    let mut v: Vec<usize> = counts.into_values().collect();
    v.sort_unstable();
    v
}

#[test]
fn validation_draws_a_panel_per_metric_with_every_point_the_diagonal_and_the_kernels() {
    let dir = scratch("validation");
    let points = validation_points();
    let positive: Vec<_> = points
        .iter()
        .filter(|(_, _, m, s)| *m > 0.0 && *s > 0.0)
        .collect();
    assert_eq!(
        points.len() - positive.len(),
        1,
        "the fixture should have one point a log axis cannot show"
    );
    let mut metrics: Vec<&str> = points.iter().map(|p| p.0.as_str()).collect();
    metrics.sort_unstable();
    metrics.dedup();
    assert_eq!(metrics.len(), 3);

    let (bytes, stderr) = plot(&dir, "v.svg", &["validation", "--input", VALIDATION]);
    let s = String::from_utf8(bytes).unwrap();
    let t = texts(&s);
    // One marker per row and metric with both values > 0; the other one is reported.
    assert_eq!(markers(&s).len(), positive.len());
    assert!(
        stderr.contains("lts__t_sectors_srcunit_tex_op_read.sum: left out 1 of 5 point(s)"),
        "{stderr}"
    );
    // One panel per metric: its heading, in sorted order, and its diagonal running up to the
    // right (SVG's y grows downwards).
    let headings: Vec<usize> = metrics
        .iter()
        .map(|m| {
            t.iter()
                .position(|x| x == m)
                .unwrap_or_else(|| panic!("{m}: {t:?}"))
        })
        .collect();
    assert!(headings.windows(2).all(|w| w[0] < w[1]), "{headings:?}");
    let d = diagonals(&s);
    assert_eq!(d.len(), metrics.len());
    assert!(
        d.iter().all(|p| p[1].0 > p[0].0 && p[1].1 < p[0].1),
        "{d:?}"
    );
    // The ±10 % guides are drawn (dashed: many short pieces).
    let guides = polylines(&s)
        .into_iter()
        .filter(|(stroke, _)| stroke == "#A0A0A0")
        .count();
    assert!(guides > 2 * metrics.len(), "{guides}");
    // n and the median |rel err| of the points drawn, by hand from the fixture:
    // DRAM |errors| 0, 0.00004, 0.01, 0.35, 0.397 → 1 %; L2 (copy left out) 0.02, 0.02, 0.03,
    // 0.1176 → 2.5 %; time 0.1, 0.1 → 10 %.
    for heading in [
        "n = 5, median |rel err| = 1 %",
        "n = 4, median |rel err| = 2.5 %",
        "n = 2, median |rel err| = 10 %",
    ] {
        assert!(t.iter().any(|x| x == heading), "{heading}: {t:?}");
    }
    // The legend names the kernels and the guides; markers are coloured by kernel.
    for entry in ["kernel", "copy", "star1", "star4", "y = x", "±10 %"] {
        assert!(t.iter().any(|x| x == entry), "{entry}: {t:?}");
    }
    let mut per_kernel: Vec<usize> = ["copy", "star1", "star4"]
        .iter()
        .map(|k| positive.iter().filter(|p| p.1 == *k).count())
        .collect();
    per_kernel.sort_unstable();
    assert_eq!(fill_counts(&s), per_kernel);
    assert!(has_text(&t, "h200: simulated vs measured"), "{t:?}");
    assert!(
        t.iter().any(|x| x == "measured [sectors]") && t.iter().any(|x| x == "simulated [sectors]"),
        "{t:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn validation_metric_and_where_choose_panels_and_points() {
    let dir = scratch("validation-select");
    let points = validation_points();
    let dram = "dram__sectors_read.sum";
    let l2 = "lts__t_sectors_srcunit_tex_op_read.sum";
    let time = "gpu__time_duration.sum";

    let s = svg(
        &dir,
        &["validation", "--input", VALIDATION, "--metric", dram],
    );
    let t = texts(&s);
    assert_eq!(diagonals(&s).len(), 1);
    assert_eq!(
        markers(&s).len(),
        points.iter().filter(|p| p.0 == dram).count()
    );
    assert!(t.iter().any(|x| x == dram));
    assert!(!t.iter().any(|x| x == l2 || x == time), "{t:?}");

    // Several --metric: their panels in the order given.
    let s = svg(
        &dir,
        &[
            "validation",
            "--input",
            VALIDATION,
            "--metric",
            l2,
            "--metric",
            dram,
        ],
    );
    let t = texts(&s);
    assert_eq!(diagonals(&s).len(), 2);
    let at = |m: &str| t.iter().position(|x| x == m).unwrap();
    assert!(at(l2) < at(dram), "{t:?}");
    assert!(!t.iter().any(|x| x == time));

    // --where keeps one kernel: only its points, one colour, named in the title.
    let s = svg(
        &dir,
        &[
            "validation",
            "--input",
            VALIDATION,
            "--where",
            "kernel=star4",
            "--title",
            "dev set",
        ],
    );
    let t = texts(&s);
    let star4 = points
        .iter()
        .filter(|p| p.1 == "star4" && p.2 > 0.0 && p.3 > 0.0)
        .count();
    assert_eq!(markers(&s).len(), star4);
    assert_eq!(fill_counts(&s), [star4]);
    assert!(t.iter().any(|x| x == "star4") && !t.iter().any(|x| x == "star1"));
    assert!(t.iter().any(|x| x == "dev set"), "--title: {t:?}");
    let s = svg(
        &dir,
        &[
            "validation",
            "--input",
            VALIDATION,
            "--where",
            "kernel=star4",
        ],
    );
    assert!(
        has_text(
            &texts(&s),
            "star4 on h200: simulated vs measured (kernel=star4)"
        ),
        "{:?}",
        texts(&s)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn validation_png_has_the_requested_size_and_reruns_are_identical() {
    let dir = scratch("validation-png");
    let args = ["validation", "--input", VALIDATION, "--size", "1200x900"];
    let (png, _) = plot(&dir, "v.png", &args);
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(u32::from_be_bytes(png[16..20].try_into().unwrap()), 1200);
    assert_eq!(u32::from_be_bytes(png[20..24].try_into().unwrap()), 900);
    assert!(
        plot(&dir, "v.png", &args).0 == png,
        "PNG differs between runs"
    );
    let first = plot(&dir, "v.svg", &args).0;
    assert!(
        plot(&dir, "v.svg", &args).0 == first,
        "SVG differs between runs"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn validation_bad_input_names_the_file_and_writes_nothing() {
    let dir = scratch("validation-inputs");
    let file = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let broken = file("broken.json", r#"{"rows": [ {"kernel": "#);
    let no_metrics = file("no-metrics.json", r#"{"rows": [{"kernel": "star1"}]}"#);
    let no_simulated = file(
        "no-simulated.json",
        r#"{"rows": [{"kernel": "star1", "metrics": {"m": {"measured": 1}}}]}"#,
    );
    let no_rows = file("no-rows.json", r#"{"hw": "h200", "rows": []}"#);
    let summary_only = file("summary.json", r#"{"hw": "h200", "metrics": {}}"#);
    let cases: [(&str, Vec<&str>, Vec<&str>); 9] = [
        ("broken", vec!["--input", &broken], vec![&broken, "JSON"]),
        (
            "no-metrics",
            vec!["--input", &no_metrics],
            vec![&no_metrics, "rows[0]: no key 'metrics'"],
        ),
        (
            "no-simulated",
            vec!["--input", &no_simulated],
            vec![&no_simulated, "no key 'metrics.m.simulated'"],
        ),
        (
            "no-rows",
            vec!["--input", &no_rows],
            vec![&no_rows, "no rows"],
        ),
        (
            "summary-only",
            vec!["--input", &summary_only],
            vec![&summary_only, "no key 'rows'"],
        ),
        (
            "sweep-csv",
            vec!["--input", STAR4],
            vec![STAR4, "JSON", "gputraffic validate"],
        ),
        (
            "unknown-metric",
            vec!["--input", VALIDATION, "--metric", "nope.sum"],
            vec![VALIDATION, "no metric 'nope.sum'", "dram__sectors_read.sum"],
        ),
        (
            "no-kernel-left",
            vec!["--input", VALIDATION, "--where", "kernel=box27"],
            vec![VALIDATION, "no row has kernel=box27"],
        ),
        (
            "log-option",
            vec!["--input", VALIDATION, "--log"],
            vec!["--log", "not an option of 'plot validation'"],
        ),
    ];
    for (name, args, expected) in cases {
        let mut all = vec!["validation"];
        all.extend(args);
        rejects_plot(&format!("validation-{name}"), &all, "v.svg", &expected);
    }
    // block-table shows one metric: a second --metric is refused, not ignored.
    rejects_plot(
        "block-table-two-metrics",
        &[
            "block-table",
            "--input",
            STAR4,
            "--metric",
            "a",
            "--metric",
            "b",
        ],
        "p.svg",
        &["--metric", "not several"],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_fit_table_is_not_written_where_plot_fit_would_read_json() {
    let dir = scratch("fit-table-json");
    let out = dir.join("f.json");
    rejects(
        &[
            "fit",
            "--model",
            "gompertz",
            "--input",
            STAR4,
            "--x",
            "l2_oversubscription",
            "--y",
            "l2_redundant_hit_rate",
            "--format",
            "table",
            "--out",
            out.to_str().unwrap(),
        ],
        &["f.json", "--format table", "plot --fit", "cannot read"],
    );
    assert!(!out.exists());
    // The default (JSON) in the same file is what plot --fit reads.
    let (code, _, stderr) = gputraffic(&[
        "fit",
        "--model",
        "gompertz",
        "--input",
        STAR4,
        "--x",
        "l2_oversubscription",
        "--y",
        "l2_redundant_hit_rate",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let png = dir.join("h.svg");
    let (code, _, stderr) = gputraffic(&[
        "plot",
        "hit-rate",
        "--input",
        STAR4,
        "--fit",
        out.to_str().unwrap(),
        "--out",
        png.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
