//! Tabik et al. 2015 (shared/papers/tabik2015-demystifying-16x16-thread-block.txt) against its
//! published numbers: every cell of Figure 5 (global-memory transactions) and Figure 7
//! (shared-memory transactions) for GX on a 256³ image on the GTX TITAN, through the pure
//! functions and through `predict` on traces/tabik-gx.toml; the configuration space of Table III /
//! Figures 5 and 7; Figure 9's minimum of active blocks; Table IV's fastest shapes lying in the
//! predicted optimal set.

use gputraffic::Bound;
use gputraffic::launch::LaunchRequest;
use gputraffic::models::Prediction;
use gputraffic::models::tabik2015::{self, ConflictFactors};
use serde_json::Value;
use std::collections::BTreeMap;

/// Column heads (Blk.x) and row heads (Blk.y) of Figures 5 and 7.
const SIDES: [u64; 10] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];

/// Figure 5: global-memory transactions of GX, 256³, GTX TITAN; rows Blk.y, columns Blk.x;
/// `None` for the cells marked X or left blank (invalid shapes). The extracted text drops one X in
/// several rows; the cells are placed by the valid range of each row (Blk.x·Blk.y ≥ 32 and
/// ≤ 1024, Blk.x ≥ 2, both ≤ 256). Row Blk.y = 1: its first number belongs to Blk.x = 32
/// (formula (3): 1,572,864), as the issue notes.
const FIGURE_5: [[Option<u64>; 10]; 10] = {
    const X: Option<u64> = None;
    const fn n(v: u64) -> Option<u64> {
        Some(v)
    }
    [
        [
            X,
            X,
            X,
            X,
            X,
            n(1572864),
            n(1310720),
            n(1179648),
            n(1114112),
            X,
        ],
        [
            X,
            X,
            X,
            X,
            n(3145728),
            n(1572864),
            n(1310720),
            n(1179648),
            n(1114112),
            X,
        ],
        [
            X,
            X,
            X,
            n(6291456),
            n(3145728),
            n(1572864),
            n(1310720),
            n(1179648),
            n(1114112),
            X,
        ],
        [
            X,
            X,
            n(12582912),
            n(6291456),
            n(3145728),
            n(1572864),
            n(1310720),
            n(1179648),
            X,
            X,
        ],
        [
            X,
            n(25165824),
            n(12582912),
            n(6291456),
            n(3145728),
            n(1572864),
            n(1310720),
            X,
            X,
            X,
        ],
        [
            X,
            n(25165824),
            n(12582912),
            n(6291456),
            n(3145728),
            n(1572864),
            X,
            X,
            X,
            X,
        ],
        [
            X,
            n(25165824),
            n(12582912),
            n(6291456),
            n(3145728),
            X,
            X,
            X,
            X,
            X,
        ],
        [X, n(25165824), n(12582912), n(6291456), X, X, X, X, X, X],
        [X, n(25165824), n(12582912), X, X, X, X, X, X, X],
        [X, X, X, X, X, X, X, X, X, X],
    ]
};

/// Figure 7: shared-memory transactions of GX, 256³, GTX TITAN, laid out as [`FIGURE_5`] (the
/// extracted text drops one X in rows Blk.y = 1, 2 and 4 too: row 2's first number is Blk.x = 16).
const FIGURE_7: [[Option<u64>; 10]; 10] = {
    const X: Option<u64> = None;
    const fn n(v: u64) -> Option<u64> {
        Some(v)
    }
    [
        [
            X,
            X,
            X,
            X,
            X,
            n(2621440),
            n(2359296),
            n(2228224),
            n(2162688),
            X,
        ],
        [
            X,
            X,
            X,
            X,
            n(4718592),
            n(2621440),
            n(2359296),
            n(2228224),
            n(2162688),
            X,
        ],
        [
            X,
            X,
            X,
            n(4718592),
            n(4718592),
            n(2621440),
            n(2359296),
            n(2228224),
            n(2162688),
            X,
        ],
        [
            X,
            X,
            n(4718592),
            n(4718592),
            n(4718592),
            n(2621440),
            n(2359296),
            n(2228224),
            X,
            X,
        ],
        [
            X,
            n(5242880),
            n(4718592),
            n(4718592),
            n(4718592),
            n(2621440),
            n(2359296),
            X,
            X,
            X,
        ],
        [
            X,
            n(5242880),
            n(4718592),
            n(4718592),
            n(4718592),
            n(2621440),
            X,
            X,
            X,
            X,
        ],
        [
            X,
            n(5242880),
            n(4718592),
            n(4718592),
            n(4718592),
            X,
            X,
            X,
            X,
            X,
        ],
        [X, n(5242880), n(4718592), n(4718592), X, X, X, X, X, X],
        [X, n(5242880), n(4718592), X, X, X, X, X, X, X],
        [X, X, X, X, X, X, X, X, X, X],
    ]
};

/// The model's prediction for a shipped trace on a shipped GPU with block `bx` × `by` × 1.
fn predict(kernel: &str, hw: &str, bx: u32, by: u32) -> Prediction {
    let req = LaunchRequest {
        block: Some([bx, by, 1]),
        domain: None,
        set: Vec::new(),
    };
    let kernel = gputraffic::input::trace::load(kernel).expect("shipped trace");
    Bound::new(kernel, hw, &req)
        .expect("launch")
        .predict(&tabik2015::MODEL, &BTreeMap::new(), None)
        .expect("prediction")
        .0
}

fn field_u64(p: &Prediction, name: &str) -> u64 {
    p.fields
        .get(name)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("field {name} missing or not an integer"))
}

fn field_bool(p: &Prediction, name: &str) -> bool {
    p.fields
        .get(name)
        .and_then(Value::as_bool)
        .unwrap_or_else(|| panic!("field {name} missing or not a bool"))
}

/// GX's tiling of the 256³ grid in `bx` × `by` blocks (H.x = 2, warp 32).
fn gx_tiling(bx: u64, by: u64) -> tabik2015::Tiling {
    tabik2015::Tiling {
        nx: 256,
        ny: 256,
        nz: 256,
        bx,
        by,
        hx: 2,
        hy: 0,
        warp: 32,
    }
}

/// The GX stencil of the figures as plain numbers (Table I limits, Table II tile, Algorithm 3).
fn gx() -> tabik2015::Stencil {
    tabik2015::Stencil {
        n: [256, 256, 256],
        hx: 2,
        hy: 0,
        halo_sides: 1,
        shared_reads: 3,
        element_bytes: 4,
        registers_per_thread: 32,
        banks: 32,
        sm: tabik2015::SmLimits {
            registers: 65536,
            shared_bytes: 49152,
            blocks: 16,
            threads: 2048,
            warps: 64,
            threads_per_block: 1024,
            warp_size: 32,
        },
    }
}

#[test]
fn figure_5_global_transactions_every_cell() {
    let mut cells = 0;
    for (r, &by) in SIDES.iter().enumerate() {
        for (c, &bx) in SIDES.iter().enumerate() {
            let Some(published) = FIGURE_5[r][c] else {
                continue;
            };
            cells += 1;
            // Formula (3) as printed.
            let eq3 = tabik2015::eq3_global_transactions_gx(256, 256, 256, bx, by, 2, 32).unwrap();
            assert_eq!(eq3, published, "formula (3), Blk {bx}x{by}");
            // The model on the GX trace and the GTX TITAN config.
            let p = predict("tabik-gx", "gtx-titan", bx as u32, by as u32);
            assert_eq!(
                field_u64(&p, "global_transactions"),
                published,
                "predict, Blk {bx}x{by}"
            );
            assert_eq!(
                field_u64(&p, "global_load_transactions")
                    + field_u64(&p, "global_store_transactions"),
                published
            );
        }
    }
    assert_eq!(cells, 41, "Figure 5 has 41 valid cells");
}

#[test]
fn figure_7_shared_transactions_every_cell() {
    let s = gx();
    let mut cells = 0;
    for (r, &by) in SIDES.iter().enumerate() {
        for (c, &bx) in SIDES.iter().enumerate() {
            let Some(published) = FIGURE_7[r][c] else {
                continue;
            };
            cells += 1;
            // Pure functions: bank-conflict factors from the tile accesses, eqs. (4), (5), (8).
            let f = tabik2015::computed_conflict_factors(bx, by, 2, 1, 32, 32).unwrap();
            let t = tabik2015::shared_transactions(&gx_tiling(bx, by), 3, f).unwrap();
            assert_eq!(t.total(), published, "eqs. (4)-(9), Blk {bx}x{by}");
            assert_eq!(s.evaluate(bx, by).unwrap().shared.total(), published);
            // The model on the GX trace and the GTX TITAN config.
            let p = predict("tabik-gx", "gtx-titan", bx as u32, by as u32);
            assert_eq!(
                field_u64(&p, "shared_transactions"),
                published,
                "predict, Blk {bx}x{by}"
            );
        }
    }
    assert_eq!(cells, 41, "Figure 7 has 41 valid cells");
}

#[test]
fn printed_equations_5_to_9_match_figure_7_from_a_warp_up_only() {
    for (r, &by) in SIDES.iter().enumerate() {
        for (c, &bx) in SIDES.iter().enumerate() {
            let Some(published) = FIGURE_7[r][c] else {
                continue;
            };
            let f = tabik2015::published_conflict_factors(bx, 32);
            let t = tabik2015::eq4_shared_transactions(&gx_tiling(bx, by), 3, f).unwrap();
            if bx >= 32 {
                assert_eq!(t.total(), published, "Blk {bx}x{by}");
            } else {
                // Per tile row with factors 2, 2, 2: (2 + 2) stores + 3 x (1 + 2) loads per row
                // of the 256³ / Blk.x rows, far above Figure 7's per-warp count.
                assert_eq!(t.total(), 13 * 256 * 256 * 256 / bx, "Blk {bx}x{by}");
                assert_ne!(t.total(), published);
            }
        }
    }
    // Figure 6's factors, which the per-warp count uses: data 2, halo 1 (2 at Blk.x = 2), reads 2.
    let f = |bx, by| tabik2015::computed_conflict_factors(bx, by, 2, 1, 32, 32).unwrap();
    let fig6 = |d, h, l| ConflictFactors {
        data_stores: d,
        halo_stores: h,
        halo_loads: l,
    };
    assert_eq!(f(16, 2), fig6(2, 1, 1));
    assert_eq!(f(4, 8), fig6(2, 1, 1));
    assert_eq!(f(2, 16), fig6(2, 2, 1));
    assert_eq!(f(32, 1), fig6(1, 1, 0));
}

#[test]
fn configuration_space_is_that_of_figures_5_and_7() {
    let s = gx();
    for (r, &by) in SIDES.iter().enumerate() {
        for (c, &bx) in SIDES.iter().enumerate() {
            if bx * by > 1024 {
                continue;
            }
            let valid = s.invalid_reason(bx, by).is_none();
            assert_eq!(valid, FIGURE_5[r][c].is_some(), "Blk {bx}x{by}");
            let p = predict("tabik-gx", "gtx-titan", bx as u32, by as u32);
            assert_eq!(field_bool(&p, "valid_configuration"), valid);
        }
    }
}

#[test]
fn figure_9_min_active_blocks_and_table_iv_best_shapes_in_the_optimal_set() {
    let space = gx().space().unwrap();
    let valid: Vec<_> = space.iter().filter(|e| e.invalid.is_none()).collect();
    assert_eq!(valid.len(), 41);
    // Figure 9: "the smallest number of active thread-blocks per SM, which is 2 for the GX stencil".
    assert_eq!(valid.iter().map(|e| e.active_blocks).min(), Some(2));
    // Table IV (GX, 256³, GTX TITAN): the fastest shapes (128,1), (256,1), (64,2) (Sect. 5) are
    // in the predicted set, and the set is "around 25%" of the valid space (abstract, Sect. 6).
    let groups = tabik2015::optimal_set(&space, true);
    let optimal: Vec<(u64, u64)> = groups
        .iter()
        .filter(|(_, g)| g.optimal())
        .map(|(e, _)| (e.bx, e.by))
        .collect();
    for best in [(128, 1), (256, 1), (64, 2)] {
        assert!(optimal.contains(&best), "{best:?} not in {optimal:?}");
        let p = predict("tabik-gx", "gtx-titan", best.0 as u32, best.1 as u32);
        assert!(field_bool(&p, "in_optimal_set"));
    }
    let share = optimal.len() as f64 / valid.len() as f64;
    assert!((0.2..=0.3).contains(&share), "{optimal:?}");
    // The title's 16x16: 4x more global transactions than Blk.x >= 32 (Figure 5), not optimal.
    assert!(
        !optimal.contains(&(16, 16)),
        "the 16x16 block is not optimal for GX"
    );
}

#[test]
fn volumes_are_transactions_times_128_bytes() {
    let p = predict("tabik-gx", "gtx-titan", 32, 4);
    let loads = field_u64(&p, "global_load_transactions") as f64;
    let stores = field_u64(&p, "global_store_transactions") as f64;
    assert_eq!(p.volumes.l2_load_bytes, Some(loads * 128.0));
    assert_eq!(p.volumes.l2_store_bytes, Some(stores * 128.0));
    assert_eq!(p.volumes.dram_load_bytes, None);
    // Blk 32x4: 1 + 1 loads and 1 store per row, 4 rows, 8 x 64 x 256 blocks and planes.
    assert_eq!(stores, (4 * 8 * 64 * 256) as f64);
    assert_eq!(loads, (8 * 8 * 64 * 256) as f64);
}

#[test]
fn every_tabik_trace_predicts() {
    for (k, bx, by) in [
        ("tabik-gy", 32, 4),
        ("tabik-gz", 32, 4),
        ("tabik-st", 32, 4),
        ("tabik-5fdd", 32, 8),
        ("tabik-7fdd", 32, 8),
    ] {
        let p = predict(k, "gtx-titan", bx, by);
        for name in [
            "global_transactions",
            "shared_transactions",
            "active_blocks_per_sm",
            "occupancy",
            "in_optimal_set",
        ] {
            assert!(p.fields.contains_key(name), "{k}: {name}");
        }
    }
    // ST stores six tensor elements per point (Sect. 3): six times the store term of eq. (2).
    let st = predict("tabik-st", "gtx-titan", 32, 4);
    assert_eq!(
        field_u64(&st, "global_store_transactions"),
        6 * 4 * 8 * 64 * 256
    );
    // GZ has no shared tile (Table II).
    assert_eq!(
        field_u64(
            &predict("tabik-gz", "gtx-titan", 32, 4),
            "shared_transactions"
        ),
        0
    );
}

/// The predicted optimal set of `kernel` on the GTX TITAN at 256³, from `predict`.
fn optimal_set_of(kernel: &str, bx: u32, by: u32) -> Vec<String> {
    let p = predict(kernel, "gtx-titan", bx, by);
    p.fields["optimal_set"]
        .as_array()
        .expect("optimal_set is a list")
        .iter()
        .map(|v| v.as_str().expect("shape names").to_string())
        .collect()
}

#[test]
fn starred_fastest_shapes_of_tables_viii_to_x_are_in_the_optimal_set() {
    // Table VIII (GZ): the starred cells (rows Blk.y, valid cells from the first X-free column).
    // GZ has no synchronization, so the efficiency aspect does not prune (Sect. 5).
    let gz = optimal_set_of("tabik-gz", 32, 4);
    for s in [
        "128x1", "256x1", "64x2", "256x2", "32x4", "64x4", "128x4", "32x8", "64x8", "128x8",
        "32x16", "64x16", "32x32",
    ] {
        assert!(gz.contains(&s.to_string()), "GZ {s} not in {gz:?}");
    }
    // Table IX (ST, rows are Blk.y despite the "Blk.x \\ Blk.y" head): 128x2, 256x2, 128x4, 64x8.
    let st = optimal_set_of("tabik-st", 32, 4);
    for s in ["128x2", "256x2", "128x4", "64x8"] {
        assert!(st.contains(&s.to_string()), "ST {s} not in {st:?}");
    }
    // Table X (5-FDD) stars nothing; its fastest cell is 32x8 (2.40 ms).
    let fdd5 = optimal_set_of("tabik-5fdd", 32, 8);
    assert!(fdd5.contains(&"32x8".to_string()), "{fdd5:?}");
}
