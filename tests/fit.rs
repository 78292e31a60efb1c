//! `gputraffic fit`: fits on data generated from known constants plus deterministic noise recover
//! the constants, within a few standard errors of the estimate computed from the noise level and
//! the design; every kind of bad data is one error line naming the file, with exit code 2.

mod common;
use common::{gputraffic, rejects, scratch};

use gputraffic::analysis::fit::{FitFormat, Fitted, Request, solve2, solve3};
use gputraffic::input::table::Table;
use gputraffic::models::su2015::{SuInputs, evaluate};

/// xorshift64*: deterministic noise without a dependency.
struct Noise(u64);

impl Noise {
    /// Uniform in [−1, 1).
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let bits = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11;
        bits as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

/// Standard deviation of the uniform noise amplitude·U(−1, 1).
fn uniform_sigma(amplitude: f64) -> f64 {
    amplitude / 3f64.sqrt()
}

/// Tolerance in standard errors: the noise is fixed, so a pass is not luck, and 6 leaves room
/// for the linearised covariance being approximate while still failing a fit that is off.
const STANDARD_ERRORS: f64 = 6.0;

fn gompertz(p: [f64; 3], x: f64) -> f64 {
    p[0] * (p[1] * (p[2] * x).exp()).exp()
}

/// The Jacobian rows ∂f/∂(a, b, c) at every x, and (JᵀJ)⁻¹: times σ², the usual linearised
/// covariance of least squares estimates under noise of standard deviation σ.
fn gompertz_design(p: [f64; 3], x: &[f64]) -> (Vec<[f64; 3]>, [[f64; 3]; 3]) {
    let rows: Vec<[f64; 3]> = x
        .iter()
        .map(|&xi| {
            let e = (p[2] * xi).exp();
            let g = (p[1] * e).exp();
            [g, p[0] * g * e, p[0] * g * p[1] * e * xi]
        })
        .collect();
    let mut jtj = [[0.0; 3]; 3];
    for j in &rows {
        for k in 0..3 {
            for l in 0..3 {
                jtj[k][l] += j[k] * j[l];
            }
        }
    }
    let columns: [[f64; 3]; 3] = std::array::from_fn(|k| {
        let mut unit = [0.0; 3];
        unit[k] = 1.0;
        solve3(jtj, unit).expect("JᵀJ invertible")
    });
    // The inverse is symmetric, so its columns are its rows.
    (rows, columns)
}

/// CSV text of a sweep-like table with the x and y columns under their sweep names.
fn gompertz_csv(x: &[f64], y: &[f64]) -> String {
    let mut s = String::from("config,l2_oversubscription,l2_redundant_hit_rate\n");
    for (i, (a, b)) in x.iter().zip(y).enumerate() {
        s += &format!("{i},{a},{b}\n");
    }
    s
}

fn fit_gompertz_csv(csv: &str) -> gputraffic::analysis::fit::GompertzFit {
    let table = Table::parse_csv(csv, "gen.csv").unwrap();
    let request = Request::new(
        "gompertz",
        Some("l2_oversubscription"),
        Some("l2_redundant_hit_rate"),
    )
    .unwrap();
    match request.fit(&table).unwrap() {
        Fitted::Gompertz(f) => f,
        other => panic!("{other:?}"),
    }
}

/// Generates the curve `p` on `x` with uniform noise of `amplitude`, fits it, and checks the
/// parameters against `STANDARD_ERRORS` standard errors (or 1e-6 without noise).
fn recovers_gompertz(p: [f64; 3], x: &[f64], amplitude: f64, seed: u64) {
    let mut noise = Noise(seed);
    let y: Vec<f64> = x
        .iter()
        .map(|&v| gompertz(p, v) + amplitude * noise.next())
        .collect();
    let f = fit_gompertz_csv(&gompertz_csv(x, &y));
    assert_eq!((f.n, f.skipped), (x.len(), 0));
    let sigma = uniform_sigma(amplitude);
    let (jacobian, inverse) = gompertz_design(p, x);
    for (k, (got, name)) in [(f.curve.a, "a"), (f.curve.b, "b"), (f.curve.c, "c")]
        .into_iter()
        .enumerate()
    {
        let tol = if amplitude == 0.0 {
            1e-6
        } else {
            STANDARD_ERRORS * sigma * inverse[k][k].sqrt()
        };
        assert!(
            (got - p[k]).abs() <= tol,
            "{name} = {got}, expected {} ± {tol} ({f:?})",
            p[k]
        );
    }
    // The parameters are strongly correlated, so their bounds are wide; the curve itself is
    // pinned down much better: at every x within the standard errors of its prediction,
    // σ·sqrt(Jᵢ (JᵀJ)⁻¹ Jᵢᵀ). Where the curve is flat (a hit rate of 1e-9 at the largest x)
    // that first-order error vanishes and second-order terms are left: a floor of σ/1000.
    for (&xi, j) in x.iter().zip(&jacobian) {
        let leverage: f64 = (0..3)
            .map(|k| (0..3).map(|l| j[k] * inverse[k][l] * j[l]).sum::<f64>())
            .sum();
        let tol = STANDARD_ERRORS * sigma * leverage.sqrt() + 1e-3 * sigma + 1e-9;
        let dev = (f.curve.eval_unclamped(xi) - gompertz(p, xi)).abs();
        assert!(dev <= tol, "curve off by {dev} > {tol} at x = {xi} ({f:?})");
    }
    if amplitude == 0.0 {
        assert!(f.rmse < 1e-9 && (f.r2 - 1.0).abs() < 1e-12, "{f:?}");
    } else {
        // The residuals are the noise, less the 3 fitted degrees of freedom.
        assert!(
            f.rmse > 0.7 * sigma && f.rmse < 1.3 * sigma,
            "rmse {} vs σ {sigma}",
            f.rmse
        );
    }
}

fn grid(from: f64, to: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| from + (to - from) * i as f64 / (n - 1) as f64)
        .collect()
}

#[test]
fn gompertz_recovers_a_falling_hit_rate() {
    // Ernst et al.'s shape: near a at small oversubscription, falling to 0.
    let p = [0.98, -0.3, 1.5];
    let x = grid(0.0, 3.0, 61);
    recovers_gompertz(p, &x, 0.0, 1);
    recovers_gompertz(p, &x, 0.01, 0x9e37_79b9_7f4a_7c15);
    recovers_gompertz(p, &x, 0.03, 42);
}

#[test]
fn gompertz_recovers_a_rising_miss_fraction() {
    // b < 0, c < 0: from a·e^b at x = 0 rising towards a.
    let p = [0.6, -2.5, -1.2];
    let x = grid(0.0, 4.0, 41);
    recovers_gompertz(p, &x, 0.0, 1);
    recovers_gompertz(p, &x, 0.005, 7);
    recovers_gompertz(p, &x, 0.02, 12345);
}

#[test]
fn gompertz_recovers_negative_amplitudes_and_b_above_zero() {
    // Signs are free: a mirrored curve, and one approaching a from above (b > 0).
    let x = grid(0.0, 3.0, 41);
    recovers_gompertz([-0.8, -0.4, 1.2], &x, 0.0, 1);
    recovers_gompertz([-0.8, -0.4, 1.2], &x, 0.01, 3);
    recovers_gompertz([0.3, 1.2, -0.9], &x, 0.0, 1);
    recovers_gompertz([0.3, 1.2, -0.9], &x, 0.01, 5);
}

#[test]
fn gompertz_skips_rows_with_an_empty_cell() {
    let p = [0.98, -0.3, 1.5];
    let x = grid(0.0, 3.0, 31);
    let y: Vec<f64> = x.iter().map(|&v| gompertz(p, v)).collect();
    let mut csv = gompertz_csv(&x, &y);
    csv += "31,,0.5\n32,1.0,\n33,,\n";
    let f = fit_gompertz_csv(&csv);
    assert_eq!((f.n, f.skipped), (31, 3));
    assert!(
        (f.curve.a - 0.98).abs() < 1e-6 && (f.curve.c - 1.5).abs() < 1e-6,
        "{f:?}"
    );
    let json = Fitted::Gompertz(f).to_json();
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(
        keys,
        [
            "model", "x", "y", "a", "b", "c", "r2", "rmse", "n", "skipped"
        ]
    );
    assert_eq!(json["model"], "gompertz");
    assert_eq!(json["x"], "l2_oversubscription");
}

// ---- su2015 ----------------------------------------------------------------------------------

/// Table 2 of Su et al. (the K20, 7PT-1, 256³) with `block` and `chunk_z` changed, so the
/// capacity and scheduling terms come from the model itself.
fn su_inputs(block: [u64; 3], chunk_z: u64) -> SuInputs {
    let threads_per_block = block.iter().product::<u64>();
    SuInputs {
        block,
        chunk_z,
        threads: 16_777_216 / chunk_z,
        thread_blocks: 16_777_216 / chunk_z / threads_per_block,
        blocks_per_smx: (2048 / threads_per_block).min(16),
        stores_per_thread: chunk_z as f64,
        delta: 0.0,
        epsilon: 0.0,
        eta: 0.0,
        ..SuInputs::table_2()
    }
}

/// One generated row: (SMX ratio, capacity, scheduling, L2 ratio, L2 capacity).
type SuRow = (f64, f64, f64, f64, f64);

/// Rows for every block shape and chunk_z given, ratios = the model's with the constants plus
/// uniform noise of `amplitude`.
fn su_rows(chunks: &[u64], constants: [f64; 3], amplitude: f64, seed: u64) -> Vec<SuRow> {
    let [delta, epsilon, eta] = constants;
    let blocks = [
        [32, 4, 1],
        [64, 2, 1],
        [16, 8, 1],
        [128, 1, 1],
        [32, 8, 1],
        [64, 4, 1],
        [32, 2, 2],
        [256, 1, 1],
        [16, 16, 1],
        [32, 16, 1],
    ];
    let mut noise = Noise(seed);
    let mut rows = Vec::new();
    for &cz in chunks {
        for b in blocks {
            let o = evaluate(&su_inputs(b, cz));
            let c = o.smx_capacity_term;
            let s = o.smx_scheduling_term;
            let c2 = o.l2_miss_ratio_per_epsilon;
            rows.push((
                delta * c + eta * s + amplitude * noise.next(),
                c,
                s,
                epsilon * c2 + amplitude * noise.next(),
                c2,
            ));
        }
    }
    rows
}

fn su_csv(rows: &[SuRow]) -> String {
    let mut s = String::from(
        "config,su_smx_miss_ratio,su_smx_capacity_term,su_smx_scheduling_term,su_l2_miss_ratio,su_l2_capacity_term\n",
    );
    for (i, r) in rows.iter().enumerate() {
        s += &format!("{i},{},{},{},{},{}\n", r.0, r.1, r.2, r.3, r.4);
    }
    s
}

fn fit_su(csv: &str) -> gputraffic::analysis::fit::Su2015Fit {
    let table = Table::parse_csv(csv, "su.csv").unwrap();
    match Request::new("su2015", None, None)
        .unwrap()
        .fit(&table)
        .unwrap()
    {
        Fitted::Su2015(f) => f,
        other => panic!("{other:?}"),
    }
}

fn sum(rows: &[SuRow], f: impl Fn(&SuRow) -> f64) -> f64 {
    rows.iter().map(f).sum()
}

#[test]
fn su2015_recovers_delta_epsilon_eta() {
    let truth = [0.012, 0.008, 0.004];
    // chunk_z 1 is formula (8); 16 and 64 overflow the 48 KB storage: formula (17).
    let chunks = [1, 16, 64];
    let exact = fit_su(&su_csv(&su_rows(&chunks, truth, 0.0, 1)));
    assert!((exact.delta - truth[0]).abs() < 1e-14, "{exact:?}");
    assert!((exact.epsilon - truth[1]).abs() < 1e-14, "{exact:?}");
    assert!((exact.eta.unwrap() - truth[2]).abs() < 1e-14, "{exact:?}");
    assert!((exact.r2 - 1.0).abs() < 1e-12);

    let amplitude = 0.002;
    let rows = su_rows(&chunks, truth, amplitude, 99);
    let f = fit_su(&su_csv(&rows));
    let (f8, f17): (Vec<SuRow>, Vec<SuRow>) = rows.iter().partition(|r| r.2 == 0.0);
    assert!(!f8.is_empty() && !f17.is_empty());
    assert_eq!(
        (f.n_delta, f.n_eta, f.n_epsilon),
        (f8.len(), f17.len(), rows.len())
    );
    // Standard errors of the through-origin estimates; η's includes the error δ passes on.
    let sigma = uniform_sigma(amplitude);
    let var_delta = sigma * sigma / sum(&f8, |r| r.1 * r.1);
    let var_epsilon = sigma * sigma / sum(&rows, |r| r.4 * r.4);
    let ss = sum(&f17, |r| r.2 * r.2);
    let var_eta = sigma * sigma / ss + (sum(&f17, |r| r.1 * r.2) / ss).powi(2) * var_delta;
    for (got, want, var, name) in [
        (f.delta, truth[0], var_delta, "delta"),
        (f.epsilon, truth[1], var_epsilon, "epsilon"),
        (f.eta.unwrap(), truth[2], var_eta, "eta"),
    ] {
        let tol = STANDARD_ERRORS * var.sqrt();
        assert!(
            (got - want).abs() <= tol,
            "{name} = {got}, expected {want} ± {tol}"
        );
    }
    assert!(f.r2 > 0.5 && f.r2 < 1.0, "{f:?}");
    assert!(f.r2_delta.is_some() && f.r2_eta.is_some() && f.r2_epsilon.is_some());
}

#[test]
fn su2015_fits_delta_and_eta_together_without_formula_8_rows() {
    let truth = [0.012, 0.008, 0.004];
    let chunks = [16, 32, 64];
    let exact = fit_su(&su_csv(&su_rows(&chunks, truth, 0.0, 1)));
    assert_eq!(exact.n_delta, 0);
    assert!((exact.delta - truth[0]).abs() < 1e-12, "{exact:?}");
    assert!((exact.eta.unwrap() - truth[2]).abs() < 1e-12, "{exact:?}");
    assert_eq!(exact.r2_delta, None);

    let amplitude = 0.001;
    let rows = su_rows(&chunks, truth, amplitude, 2024);
    assert!(rows.iter().all(|r| r.2 != 0.0), "every row is formula 17");
    let f = fit_su(&su_csv(&rows));
    // σ²(XᵀX)⁻¹ of the two-column design (capacity, scheduling).
    let m = [
        [sum(&rows, |r| r.1 * r.1), sum(&rows, |r| r.1 * r.2)],
        [sum(&rows, |r| r.2 * r.1), sum(&rows, |r| r.2 * r.2)],
    ];
    let sigma = uniform_sigma(amplitude);
    let var_delta = sigma * sigma * solve2(m, [1.0, 0.0]).unwrap()[0];
    let var_eta = sigma * sigma * solve2(m, [0.0, 1.0]).unwrap()[1];
    let tol_delta = STANDARD_ERRORS * var_delta.sqrt();
    let tol_eta = STANDARD_ERRORS * var_eta.sqrt();
    assert!(
        (f.delta - truth[0]).abs() <= tol_delta,
        "{f:?} ± {tol_delta}"
    );
    assert!(
        (f.eta.unwrap() - truth[2]).abs() <= tol_eta,
        "{f:?} ± {tol_eta}"
    );
}

#[test]
fn su2015_without_formula_17_rows_has_no_eta() {
    let rows = su_rows(&[1], [0.01, 0.01, 0.01], 0.001, 5);
    let mut csv = su_csv(&rows);
    // A row with L2 data only, and one with nothing: only the second is skipped.
    csv += "90,,,,0.01,1.0\n91,,,,,\n";
    let f = fit_su(&csv);
    assert_eq!(f.eta, None);
    assert_eq!((f.n_eta, f.n_epsilon, f.skipped), (0, rows.len() + 1, 1));
    let json = Fitted::Su2015(f).to_json();
    assert!(json["eta"].is_null() && json["r2_eta"].is_null());
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(
        keys,
        [
            "model",
            "delta",
            "epsilon",
            "eta",
            "r2",
            "r2_delta",
            "r2_epsilon",
            "r2_eta",
            "n_delta",
            "n_epsilon",
            "n_eta",
            "skipped"
        ]
    );
}

// ---- command line ----------------------------------------------------------------------------

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn gompertz_args<'a>(input: &'a str, x: &'a str, y: &'a str) -> Vec<&'a str> {
    vec![
        "fit", "--model", "gompertz", "--input", input, "--x", x, "--y", y,
    ]
}

#[test]
fn cli_writes_json_table_and_out_file() {
    let dir = scratch("ok");
    let x = grid(0.0, 3.0, 31);
    let y: Vec<f64> = x.iter().map(|&v| gompertz([0.98, -0.3, 1.5], v)).collect();
    let input = write(&dir, "star4.csv", &gompertz_csv(&x, &y));
    let args = gompertz_args(&input, "l2_oversubscription", "l2_redundant_hit_rate");

    let (code, stdout, stderr) = gputraffic(&args);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["model"], "gompertz");
    assert!((json["a"].as_f64().unwrap() - 0.98).abs() < 1e-6, "{json}");
    assert_eq!(json["n"], 31);

    let mut table_args = args.clone();
    table_args.extend(["--format", "table"]);
    let (code, stdout, _) = gputraffic(&table_args);
    assert_eq!(code, 0);
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("a ") && l.ends_with("0.980000")),
        "{stdout}"
    );
    assert!(stdout.contains("model    gompertz"), "{stdout}");

    let out = dir.join("fit.json").display().to_string();
    let mut out_args = args.clone();
    out_args.extend(["--out", out.as_str()]);
    let (code, stdout, _) = gputraffic(&out_args);
    assert_eq!((code, stdout.as_str()), (0, ""));
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(written, json);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cli_su2015_runs_on_a_table() {
    let dir = scratch("su");
    let input = write(
        &dir,
        "su.csv",
        &su_csv(&su_rows(&[1, 16], [0.01, 0.02, 0.003], 0.0, 1)),
    );
    let (code, stdout, stderr) = gputraffic(&["fit", "--model", "su2015", "--input", &input]);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(
        (json["epsilon"].as_f64().unwrap() - 0.02).abs() < 1e-12,
        "{json}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cli_bad_data_is_one_error_naming_the_file() {
    let dir = scratch("bad");
    let header = "config,l2_oversubscription,l2_redundant_hit_rate\n";
    let (ox, hy) = ("l2_oversubscription", "l2_redundant_hit_rate");

    // Fewer points than parameters (the empty cells leave 2 of 4 rows).
    let few = write(
        &dir,
        "few.csv",
        &format!("{header}0,0.5,0.9\n1,1.0,0.7\n2,,0.5\n3,2.0,\n"),
    );
    rejects(
        &gompertz_args(&few, ox, hy),
        &[&few, "3 parameters", "only 2 rows", "2 skipped"],
    );

    // NaN and infinity: named by row and column.
    let nan = write(
        &dir,
        "nan.csv",
        &format!("{header}0,0.5,0.9\n1,1.0,NaN\n2,1.5,0.5\n3,2.0,0.3\n"),
    );
    rejects(
        &gompertz_args(&nan, ox, hy),
        &[&nan, "row 2", "'l2_redundant_hit_rate'", "NaN"],
    );
    let inf = write(
        &dir,
        "inf.csv",
        &format!("{header}0,0.5,0.9\n1,inf,0.8\n2,1.5,0.5\n3,2.0,0.3\n"),
    );
    rejects(
        &gompertz_args(&inf, ox, hy),
        &[&inf, "row 2", "'l2_oversubscription'"],
    );

    // No variation in x, and none in y.
    let flat_x = write(
        &dir,
        "flat_x.csv",
        &format!("{header}0,1,0.9\n1,1,0.8\n2,1,0.5\n"),
    );
    rejects(
        &gompertz_args(&flat_x, ox, hy),
        &[&flat_x, "no variation", "'l2_oversubscription'"],
    );
    let flat_y = write(
        &dir,
        "flat_y.csv",
        &format!("{header}0,1,0.5\n1,2,0.5\n2,3,0.5\n"),
    );
    rejects(
        &gompertz_args(&flat_y, ox, hy),
        &[&flat_y, "no variation", "'l2_redundant_hit_rate'"],
    );

    // No convergence: exponential data are only the limit b → ∞, c → 0 of the family (see the
    // unit test exponential_data_has_no_finite_gompertz_minimum), so no finite fit exists.
    let x = grid(0.0, 3.0, 31);
    let y: Vec<f64> = x.iter().map(|&v| (0.5 * v).exp()).collect();
    let exp = write(&dir, "exp.csv", &gompertz_csv(&x, &y));
    let out = dir.join("never.json").display().to_string();
    let mut args = gompertz_args(&exp, ox, hy);
    args.extend(["--out", out.as_str()]);
    rejects(&args, &[&exp, "did not converge"]);
    assert!(
        !std::path::Path::new(&out).exists(),
        "--out written on failure"
    );

    // A column that is not there.
    rejects(
        &gompertz_args(&few, "l2_oversub", hy),
        &[&few, "no column 'l2_oversub'"],
    );

    // su2015: no L2 rows; a NaN; no variation in the capacity term.
    let su_header = "config,su_smx_miss_ratio,su_smx_capacity_term,su_smx_scheduling_term,su_l2_miss_ratio,su_l2_capacity_term\n";
    let su = |name: &str, rows: &str| write(&dir, name, &format!("{su_header}{rows}"));
    let no_l2 = su("no_l2.csv", "0,0.02,2,0,,\n1,0.03,3,0,,\n");
    rejects(
        &["fit", "--model", "su2015", "--input", &no_l2],
        &[&no_l2, "epsilon", "found 0"],
    );
    let no_smx = su("no_smx.csv", "0,,,,0.01,1\n");
    rejects(
        &["fit", "--model", "su2015", "--input", &no_smx],
        &[&no_smx, "delta"],
    );
    let su_nan = su("su_nan.csv", "0,0.02,2,0,0.01,1\n1,0.03,nan,0,0.02,2\n");
    rejects(
        &["fit", "--model", "su2015", "--input", &su_nan],
        &[&su_nan, "row 2", "'su_smx_capacity_term'"],
    );
    let zero_cap = su("zero_cap.csv", "0,0.02,0,0,0.01,1\n1,0.03,0,0,0.02,2\n");
    rejects(
        &["fit", "--model", "su2015", "--input", &zero_cap],
        &[&zero_cap, "no variation", "delta"],
    );
    let const_ratio = su("const.csv", "0,0.02,1,0,0.01,1\n1,0.02,2,0,0.01,2\n");
    rejects(
        &["fit", "--model", "su2015", "--input", &const_ratio],
        &[&const_ratio, "no variation", "r2"],
    );
    // Formula-17 rows only, with capacity proportional to scheduling: δ and η inseparable.
    let collinear = su("collinear.csv", "0,0.02,1,2,0.01,1\n1,0.04,2,4,0.02,2\n");
    rejects(
        &["fit", "--model", "su2015", "--input", &collinear],
        &[&collinear, "proportional"],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cli_bad_options() {
    let dir = scratch("opts");
    let input = write(&dir, "t.csv", "config,x,y\n0,1,2\n");
    rejects(
        &["fit", "--model", "weibull", "--input", &input],
        &["--model", "unknown model 'weibull'", "gompertz, su2015"],
    );
    rejects(
        &["fit", "--model", "gompertz", "--input", &input, "--y", "y"],
        &["--x"],
    );
    rejects(
        &["fit", "--model", "gompertz", "--input", &input, "--x", "x"],
        &["--y"],
    );
    rejects(
        &["fit", "--model", "su2015", "--input", &input, "--x", "x"],
        &["--x", "su_smx_miss_ratio"],
    );
    let missing = dir.join("missing.csv").display().to_string();
    rejects(
        &[
            "fit", "--model", "gompertz", "--input", &missing, "--x", "x", "--y", "y",
        ],
        &[&missing, "cannot read"],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn render_formats() {
    let x = grid(0.0, 3.0, 11);
    let y: Vec<f64> = x.iter().map(|&v| gompertz([0.9, -0.5, 1.0], v)).collect();
    let fitted = Fitted::Gompertz(fit_gompertz_csv(&gompertz_csv(&x, &y)));
    let json = fitted.render(FitFormat::Json);
    assert!(
        json.ends_with("}\n") && json.contains("\n  \"a\": "),
        "{json}"
    );
    let table = fitted.render(FitFormat::Table);
    // One line per field, values aligned in one column.
    assert_eq!(table.lines().count(), 10);
    let columns: Vec<usize> = table.lines().map(|l| l.find("  ").unwrap()).collect();
    let starts: Vec<usize> = table
        .lines()
        .map(|l| l.len() - l.split_whitespace().last().unwrap().len())
        .collect();
    assert!(starts.iter().all(|&s| s == starts[0]), "{table}");
    assert!(columns.iter().all(|&c| c <= starts[0]));
}

// ---- bounds ----------------------------------------------------------------------------------

fn bounded(request: &Request, table: &Table, bounds: &[&str]) -> Fitted {
    let texts: Vec<String> = bounds.iter().map(|b| b.to_string()).collect();
    let bounds = gputraffic::analysis::fit::Bounds::parse(&texts, request).unwrap();
    request.fit_bounded(table, &bounds).unwrap()
}

fn gompertz_of(f: Fitted) -> gputraffic::analysis::fit::GompertzFit {
    match f {
        Fitted::Gompertz(g) => g,
        other => panic!("{other:?}"),
    }
}

#[test]
fn bound_keeps_the_hit_rate_ceiling_at_most_one() {
    use gputraffic::analysis::fit::Side;
    // The shipped star4 sweep: its L2 hit rates fit best with a ceiling a > 1 (1.09 on the data
    // of 2026-11-25, 1.03 on that of 2026-11-24; docs/fitting.md).
    let table = Table::load(std::path::Path::new("docs/data/star4-h200.csv")).unwrap();
    let recorded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("docs/data/star4-h200-l2-fit.json").unwrap())
            .unwrap();
    let recorded_a = recorded["a"].as_f64().unwrap();
    assert!(recorded_a > 1.0, "{recorded_a}");
    let request = Request::new(
        "gompertz",
        Some("l2_oversubscription"),
        Some("l2_redundant_hit_rate"),
    )
    .unwrap();
    let free = gompertz_of(request.fit(&table).unwrap());
    // Unchanged by the bounds machinery: the value docs/data/star4-h200-l2-fit.json records.
    assert!((free.curve.a - recorded_a).abs() < 1e-9, "{free:?}");
    assert_eq!(free.bounded, None);
    let capped = gompertz_of(bounded(&request, &table, &["a=0..1"]));
    assert_eq!(capped.curve.a, 1.0, "{capped:?}");
    assert!(
        capped.rmse >= free.rmse && capped.r2 <= free.r2,
        "{capped:?}"
    );
    // Still a fit: r2 close to the free one's, every curve value a rate.
    assert!(capped.r2 > free.r2 - 0.05, "{capped:?}");
    let report = capped.bounded.as_ref().unwrap();
    assert_eq!(report.at_bound, [("a".to_string(), Side::Upper)]);
    // A bound the fit does not reach changes nothing.
    let loose = gompertz_of(bounded(&request, &table, &["a=0..2", "c=-5.."]));
    assert_eq!(loose.curve, free.curve);
    assert!(loose.bounded.unwrap().at_bound.is_empty());

    // Synthetic: y = 1.12·exp(−0.1·exp(0.6·x)) with noise, the same shape.
    let x = grid(0.2, 2.8, 60);
    let mut noise = Noise(7);
    let y: Vec<f64> = x
        .iter()
        .map(|&v| gompertz([1.12, -0.1, 0.6], v) + 0.01 * noise.next())
        .collect();
    let table = Table::parse_csv(&gompertz_csv(&x, &y), "gen.csv").unwrap();
    let free = gompertz_of(request.fit(&table).unwrap());
    assert!(free.curve.a > 1.05, "{free:?}");
    for bounds in [&["a=..1"][..], &["a=0..1", "b=-1..0"][..]] {
        let capped = gompertz_of(bounded(&request, &table, bounds));
        assert!(
            capped.curve.a <= 1.0 && capped.rmse >= free.rmse,
            "{capped:?}"
        );
        assert!(
            capped.curve.b >= -1.0 && capped.curve.b <= 0.0,
            "{capped:?}"
        );
    }
    // A bound on c alone.
    let slow = gompertz_of(bounded(&request, &table, &["c=..0.3"]));
    assert_eq!(slow.curve.c, 0.3, "{slow:?}");
    assert_eq!(
        slow.bounded.unwrap().at_bound,
        [("c".to_string(), Side::Upper)]
    );
}

#[test]
fn su2015_bounds_clamp_each_constant() {
    use gputraffic::analysis::fit::Side;
    let truth = [0.012, 0.008, 0.004];
    let table = Table::parse_csv(&su_csv(&su_rows(&[1, 16, 64], truth, 0.0, 1)), "su.csv").unwrap();
    let request = Request::new("su2015", None, None).unwrap();
    let Fitted::Su2015(f) = bounded(&request, &table, &["delta=..0.01", "epsilon=0.009.."]) else {
        panic!()
    };
    assert_eq!((f.delta, f.epsilon), (0.01, 0.009), "{f:?}");
    // η is fitted with δ on its bound, so it takes up part of the difference.
    assert!(f.eta.unwrap() > truth[2], "{f:?}");
    let report = f.bounded.unwrap();
    assert_eq!(
        report.at_bound,
        [
            ("delta".to_string(), Side::Upper),
            ("epsilon".to_string(), Side::Lower)
        ]
    );
    // Without formula-8 rows δ and η come together: the box minimum.
    let table = Table::parse_csv(&su_csv(&su_rows(&[16, 64], truth, 0.0, 1)), "su.csv").unwrap();
    let Fitted::Su2015(free) = request.fit(&table).unwrap() else {
        panic!()
    };
    let Fitted::Su2015(joint) = bounded(&request, &table, &["eta=0..0.002"]) else {
        panic!()
    };
    assert_eq!(joint.eta, Some(0.002), "{joint:?}");
    assert!(
        joint.delta != free.delta && joint.r2 <= free.r2,
        "{joint:?}"
    );
}

#[test]
fn cli_bounds_are_reported_and_bad_ones_rejected() {
    let dir = scratch("bounds");
    let x = grid(0.2, 2.8, 40);
    let y: Vec<f64> = x.iter().map(|&v| gompertz([1.12, -0.1, 0.6], v)).collect();
    let input = write(&dir, "h.csv", &gompertz_csv(&x, &y));
    let mut args = gompertz_args(&input, "l2_oversubscription", "l2_redundant_hit_rate");
    let (code, stdout, stderr) = gputraffic(&args);
    assert_eq!(code, 0, "{stderr}");
    let free: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(free.get("bounds").is_none() && free.get("at_bound").is_none());
    args.extend(["--bound", "a=..1"]);
    let (code, stdout, stderr) = gputraffic(&args);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["a"], 1.0);
    assert_eq!(json["bounds"], serde_json::json!({"a": [null, 1.0]}));
    assert_eq!(json["at_bound"], serde_json::json!({"a": "upper"}));
    let mut table = args.clone();
    table.extend(["--format", "table"]);
    let (_, stdout, _) = gputraffic(&table);
    assert!(stdout.contains("bounds    a ..1.00000"), "{stdout}");
    assert!(stdout.contains("at_bound  a upper"), "{stdout}");

    let base = gompertz_args(&input, "l2_oversubscription", "l2_redundant_hit_rate");
    for (bound, expected) in [
        (
            "d=0..1",
            "'d' is not a constant of gompertz (it fits a, b, c)",
        ),
        ("a=1..0", "lower bound 1 is above the upper bound 0"),
        ("a=0..x", "'x' is not a number"),
        ("a=0..inf", "not a finite number"),
        ("a<1", "not NAME=LO..HI"),
    ] {
        let mut bad = base.clone();
        bad.extend(["--bound", bound]);
        rejects(&bad, &["--bound", expected]);
    }
    let mut twice = base.clone();
    twice.extend(["--bound", "a=0..1", "--bound", "a=..2"]);
    rejects(&twice, &["--bound", "'a' is bounded twice"]);
    rejects(
        &[
            "fit", "--model", "su2015", "--input", &input, "--bound", "a=0..1",
        ],
        &["--bound", "delta, epsilon, eta"],
    );
    let _ = std::fs::remove_dir_all(&dir);
}
