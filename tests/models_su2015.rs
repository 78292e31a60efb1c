//! Su et al. 2015, Table 2 (7PT-1 baseline on a K20, 256³, 32×4×1, δ = ε = 0.01), rows 1–29,
//! through the command the issue gives, plus the z-blocked extension and `simulate --compare`.

mod common;
use common::gputraffic;

use serde_json::Value;

fn predict_json(extra: &[&str]) -> Value {
    let mut args = vec![
        "predict",
        "--model",
        "su2015",
        "--kernel",
        "traces/su-7pt-1.toml",
        "--hw",
        "k20",
        "--block",
        "32x4x1",
        "--domain",
        "256x256x256",
        "--set",
        "delta=0.01",
        "--set",
        "epsilon=0.01",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let (code, out, err) = gputraffic(&args);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64()
        .unwrap_or_else(|| panic!("field {k} missing in {v}"))
}

const MIB: f64 = 1024.0 * 1024.0;

#[test]
fn table_2_rows_1_to_29() {
    let v = predict_json(&[]);
    // Rows 6-11: launch geometry.
    assert_eq!(f(&v, "threads"), 16_777_216.0);
    assert_eq!(f(&v, "thread_blocks"), 131_072.0);
    assert_eq!(f(&v, "occupancy"), 1.0);
    assert_eq!(f(&v, "blocks_per_smx"), 16.0);
    assert_eq!(f(&v, "blocks_per_group"), 208.0);
    // Rows 12-15: code analysis of the trace.
    assert_eq!(f(&v, "aligned_loads_t"), 5.0);
    assert_eq!(f(&v, "misaligned_loads_t"), 2.0);
    assert_eq!(f(&v, "n_ld_smx_t"), 9.0);
    assert_eq!(f(&v, "n_st_smx_t"), 1.0);
    // Rows 16-19.
    assert_eq!(f(&v, "n_ld_net_l2_b"), 704.0);
    assert_eq!(format!("{:.2}", f(&v, "smx_miss_ratio") / 0.01), "1.83");
    assert_eq!(f(&v, "n_st_l2_b"), 128.0);
    // Rows 20-26.
    assert_eq!(f(&v, "groups"), 631.0);
    assert_eq!(f(&v, "width_y"), 106.0);
    assert_eq!(f(&v, "height_z"), 3.0);
    assert_eq!(f(&v, "n_ld_net_gm_g"), 83_952.0);
    assert_eq!(format!("{:.3}", f(&v, "l2_miss_ratio") / 0.01), "0.512");
    assert_eq!(f(&v, "n_st_gm_g"), 26_624.0);
    // Rows 27-29, in the paper's units (powers of 1024) and rounding.
    assert_eq!(
        format!("{:.2}", f(&v, "v_smx_bytes") / (1024.0 * MIB)),
        "1.25"
    );
    assert_eq!((f(&v, "v_l2_bytes") / MIB).floor(), 844.0);
    assert_eq!((f(&v, "v_gm_bytes") / MIB).floor(), 534.0);
    // Row 28 with the table's rounded 1.83δ: 131,072 × (704 × 1.0183 + 128) × 8 B.
    let row28 = 131_072.0 * (704.0 * (1.0 + 1.83 * 0.01) + 128.0) * 8.0;
    assert!((f(&v, "v_l2_bytes") - row28).abs() / row28 < 1e-4);
    // Formula (2) with Table 1's measured bandwidths: V_GM / BW_GM bounds 7PT-1 (Sect. 4.2).
    assert_eq!(v["limiter"], "gm");
    assert!((f(&v, "time_s") - f(&v, "v_gm_bytes") / 160.88e9).abs() < 1e-12);
}

#[test]
fn code_analysis_inputs_can_be_overridden() {
    // Treating all seven loads as aligned gives n_ld_SMX,T = 7 and scales V_SMX by (7+1)/(9+1).
    let base = predict_json(&[]);
    let v = predict_json(&["--set", "misaligned_loads=0", "--set", "aligned_loads=7"]);
    assert_eq!(f(&v, "n_ld_smx_t"), 7.0);
    assert_eq!(f(&v, "v_smx_bytes"), f(&base, "v_smx_bytes") * 0.8);
}

#[test]
fn z_blocking_follows_section_3_5() {
    let (code, out, err) = gputraffic(&[
        "predict",
        "--model",
        "su2015",
        "--kernel",
        "su-7pt-1-zblock",
        "--hw",
        "k20",
        "--block",
        "32x4x1",
        "--set",
        "chunk_z=4",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    // #aligned = 3·4 + 2, #misaligned = 2·4 per thread: n_ld = 14 + 16 = 30.
    assert_eq!(f(&v, "n_ld_smx_t"), 30.0);
    assert_eq!(f(&v, "chunk_z"), 4.0);
    // (16): 128·4 + (32·4 + 128)·2 + 32·4·4·2 = 512 + 512 + 1024.
    assert_eq!(f(&v, "n_ld_net_l2_b"), 2048.0);
    // 16 blocks × 2048 × 8 B > 48 KB: formula (17) applies.
    assert_eq!(v["smx_miss_formula"], "17");
    assert_eq!(f(&v, "threads"), 256.0 * 256.0 * 64.0);
}

#[test]
fn unknown_model_constants_and_models_are_rejected() {
    let (code, out, err) = gputraffic(&[
        "predict", "--model", "su2015", "--kernel", "su-7pt-1", "--hw", "k20", "--set", "gamma=1",
    ]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(err.contains("'gamma'") && err.contains("delta"), "{err}");
    let (code, _, err) = gputraffic(&["predict", "--model", "su2016", "--kernel", "su-7pt-1"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown model 'su2016'"), "{err}");
    let (code, _, err) = gputraffic(&[
        "predict", "--model", "su2015", "--kernel", "su-7pt-1", "--hw", "k20", "--set", "delta=x",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("not a number"), "{err}");
}

#[test]
fn compare_puts_model_and_simulation_side_by_side() {
    let (code, out, err) = gputraffic(&[
        "simulate",
        "--kernel",
        "su-7pt-1",
        "--hw",
        "k20",
        "--domain",
        "64x64x64",
        "--compare",
        "su2015",
        "--set",
        "delta=0.02",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let c = &v["compare"];
    assert_eq!(c["model"], "su2015");
    assert_eq!(c["prediction"]["delta"], 0.02);
    let rows = c["volumes"].as_array().unwrap();
    assert_eq!(rows.len(), 5);
    for r in rows {
        let metric = r["metric"].as_str().unwrap();
        let sim = v["metrics"][metric].as_f64().unwrap() * 32.0;
        assert_eq!(r["simulated_bytes"].as_f64().unwrap(), sim);
        let pred = r["predicted_bytes"].as_f64().unwrap();
        let d = r["rel_diff"].as_f64().unwrap();
        assert!((d - (pred - sim) / sim).abs() < 1e-12);
    }
    // Stores: one value per point either way, so the model and the simulator agree exactly.
    let st = rows
        .iter()
        .find(|r| r["quantity"] == "l2_store_bytes")
        .unwrap();
    assert_eq!(st["rel_diff"].as_f64().unwrap(), 0.0);
    assert!(v["time"]["predicted_s"].as_f64().unwrap() > 0.0);
}
