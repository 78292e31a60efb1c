//! The krotkiewski2013 model against the numbers Krotkiewski & Dabrowski 2013 publish
//! (shared/papers/krotkiewski2013-efficient-3d-stencils-cuda.txt), and its volumes against the
//! simulator where the paper's assumptions hold exactly.

use gputraffic::Bound;
use gputraffic::launch::LaunchRequest;
use gputraffic::models::krotkiewski2013::{
    bpp, bpp_effective, bpp_optimal, bpp_read, m_condition, read_instructions, tile_values,
    x_halo_values_per_side,
};
use gputraffic::models::{self, Prediction};
use gputraffic::sim::SimOptions;
use std::collections::BTreeMap;

fn launch(kernel: &str, hw: &str, block: [u32; 3], domain: [i64; 3]) -> Bound {
    let req = LaunchRequest {
        block: Some(block),
        domain: Some(domain),
        set: vec![],
    };
    Bound::new(gputraffic::input::trace::load(kernel).unwrap(), hw, &req).unwrap()
}

fn predict_with(
    kernel: &str,
    block: [u32; 3],
    set: &[(&str, f64)],
) -> gputraffic::Result<Prediction> {
    let bound = launch(kernel, "tesla-c2050", block, [256, 252, 256]);
    let params: BTreeMap<String, f64> = set.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    let model = models::find("krotkiewski2013")?;
    bound.predict(model, &params, None).map(|(p, _)| p)
}

fn f(p: &Prediction, name: &str) -> f64 {
    p.fields[name]
        .as_f64()
        .unwrap_or_else(|| panic!("{name} missing"))
}

/// Rounds to `d` decimals, as the paper prints.
fn round(x: f64, d: i32) -> f64 {
    let s = 10f64.powi(d);
    (x * s).round() / s
}

#[test]
fn the_32x6_single_precision_tile_gives_bpp_12_optimal_8() {
    // Eq. (9): BpP = 8 (read) + 4 (write) = 12; eq. (5): BpP_optimal = 4 + 4 = 8.
    let t = tile_values(32, 6, 4, 32, 1).unwrap();
    assert_eq!(bpp(t, 4), 12.0);
    assert_eq!(bpp_read(t, 4), 8.0);
    assert_eq!(bpp_optimal(4), 8.0);
    // The same through the model on the paper's kernels and block.
    for kernel in [
        "krotkiewski-copycube-halo",
        "krotkiewski-7pt",
        "krotkiewski-27pt",
    ] {
        let p = predict_with(kernel, [32, 6, 1], &[]).unwrap();
        assert_eq!(f(&p, "bpp"), 12.0, "{kernel}");
        assert_eq!(f(&p, "bpp_optimal"), 8.0, "{kernel}");
        // "This is a 50% overhead compared to the optimal scenario (5)."
        assert_eq!(f(&p, "halo_overhead"), 0.5, "{kernel}");
    }
}

#[test]
fn the_32x6_tile_has_as_many_halo_values_as_interior_values_m_1() {
    // "the number of data values in the halos is equal to the number of values in the block
    // interior" (Sect. 5.1); "we use M=1 and a thread block size of 32 x 6" (eq. 8).
    let t = tile_values(32, 6, 4, 32, 1).unwrap();
    assert_eq!((t.interior, t.halo), (192, 192));
    assert_eq!(m_condition(t), Some(1));
    // "reading of the data with the halos is performed using two coalesced memory read
    // instructions" (M + 1 = 2), remapped onto 48 x 4: 48 = 32 + 2 x 8 ("16 values are read as the
    // X dimension halos (a 32 byte transaction, or 8 single precision values on each side)").
    assert_eq!(read_instructions(t, 192).unwrap(), 2);
    assert_eq!(x_halo_values_per_side(4, 32).unwrap(), 8);
    let p = predict_with("krotkiewski-copycube-halo", [32, 6, 1], &[]).unwrap();
    assert_eq!(p.fields["interior_values"], 192);
    assert_eq!(p.fields["halo_values"], 192);
    assert_eq!(p.fields["m_condition_holds"], true);
    assert_eq!(p.fields["m"], 1);
    assert_eq!(p.fields["read_instructions"], 2);
    assert_eq!(p.fields["remap_width"], 48);
    // 8 rows = two instructions of 4 rows of 48 (Fig. 3: "two thread blocks of size 48 x 4").
    assert_eq!(p.fields["remap_rows"], 8);
}

#[test]
fn copycube_has_the_optimal_footprint_8() {
    // Sect. 6: "a zero-overhead memory copy routine ... with a memory footprint BpP = 8".
    let p = predict_with("krotkiewski-copycube", [32, 6, 1], &[]).unwrap();
    assert_eq!(f(&p, "bpp"), 8.0);
    assert_eq!(f(&p, "bpp_optimal"), 8.0);
    assert_eq!(p.fields["halo_values"], 0);
    assert_eq!(p.fields["m_condition_holds"], false);
}

#[test]
fn effective_footprints_of_sect_6_2() {
    // "On Tesla C2050, BpP_eff = 13.3/12.4 * 8 ≈ 8.6 bytes per point, which is roughly 8% more
    // than in a theoretically optimal implementation" (Tables 2 and 3, texture fetches).
    let c2050 = bpp_effective(13.3, 12.4, 8.0).unwrap();
    assert_eq!(round(c2050, 1), 8.6);
    // 8.6 / 8 = 1.075: 7.5% rounds up to 8% (rounded at 1e-9 first: 8.6 is not exact in binary).
    assert_eq!(
        round(
            round((round(c2050, 1) / bpp_optimal(4) - 1.0) * 100.0, 9),
            0
        ),
        8.0
    );
    // "The average effective memory footprint on Tesla C1060 is BpP_eff ≈ 9.9, around 24% more
    // than optimal" (copycube 9.2, copycube_halo with textures 7.4 Gpts/s).
    let c1060 = bpp_effective(9.2, 7.4, 8.0).unwrap();
    assert_eq!(round(c1060, 1), 9.9);
    assert_eq!(
        round(
            round((round(c1060, 1) / bpp_optimal(4) - 1.0) * 100.0, 9),
            0
        ),
        24.0
    );
}

#[test]
fn double_precision_halves_the_x_halo_in_values() {
    // Eq. (6) with size(FP) = 8: 32/8 = 4 X-halo values per row and side.
    let p = predict_with("krotkiewski-7pt", [32, 6, 1], &[("element_bytes", 8.0)]).unwrap();
    assert_eq!(p.fields["halo_values"], 2 * 32 + 2 * 8 * 4);
    assert_eq!(f(&p, "bpp_optimal"), 16.0);
    assert_eq!(f(&p, "bpp"), 8.0 * (192.0 + 128.0) / 192.0 + 8.0);
}

#[test]
fn bad_settings_are_errors_not_panics() {
    assert!(predict_with("krotkiewski-7pt", [32, 6, 1], &[("halo", 2.0)]).is_err());
    assert!(predict_with("krotkiewski-7pt", [32, 6, 1], &[("BX", 0.0)]).is_err());
    assert!(predict_with("krotkiewski-7pt", [32, 6, 1], &[("element_bytes", 3.0)]).is_err());
    assert!(predict_with("krotkiewski-7pt", [32, 6, 1], &[("transaction_bytes", 1.5)]).is_err());
    assert!(predict_with("krotkiewski-7pt", [32, 2, 2], &[]).is_err());
    assert!(predict_with("krotkiewski-7pt", [32, 2, 2], &[("BY", 4.0)]).is_ok());
}

#[test]
fn requested_load_volume_is_eq_7_exactly_in_the_simulator() {
    // On a GPU whose L1 does not cache global loads (K20), the requested load sectors and the
    // L2 reads are the eq. (7) values per tile and plane: the 48-wide remapped rows are 32 B
    // aligned and span whole sectors. Small domain (multiples of the block, as in the paper).
    for kernel in ["krotkiewski-copycube-halo", "krotkiewski-copycube"] {
        let bound = launch(kernel, "k20", [32, 6, 1], [64, 60, 8]);
        let report = bound.simulate(&SimOptions::default(), None).unwrap();
        let model = models::find("krotkiewski2013").unwrap();
        let (p, _) = bound.predict(model, &BTreeMap::new(), None).unwrap();
        let l1 = report
            .metric("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
            .unwrap() as f64
            * 32.0;
        let l2 = report
            .metric("lts__t_sectors_srcunit_tex_op_read.sum")
            .unwrap() as f64
            * 32.0;
        let st = report
            .metric("lts__t_sectors_srcunit_tex_op_write.sum")
            .unwrap() as f64
            * 32.0;
        assert_eq!(Some(l1), p.volumes.l1_load_bytes, "{kernel}");
        assert_eq!(Some(l2), p.volumes.l2_load_bytes, "{kernel}");
        assert_eq!(Some(st), p.volumes.l2_store_bytes, "{kernel}");
    }
}
