//! The placement2p5d model against what the 2.5D data-placement paper publishes
//! (shared/papers/data-placement-2p5d-blocking-3d-stencils.txt): the tuned optimal blocks of
//! Table I (GTX 780) must lie in the space the heuristic keeps, the trend of Sect. V, and the
//! flop-to-byte ratio of Sect. I.

use gputraffic::Bound;
use gputraffic::input::hw::HwConfig;
use gputraffic::launch::LaunchRequest;
use gputraffic::models::placement2p5d::{candidates, flops_per_byte, rank};
use gputraffic::models::{self, Prediction};
use std::collections::BTreeMap;

fn predict(kernel: &str, hw: &str, block: [u32; 3], n: i64) -> gputraffic::Result<Prediction> {
    let req = LaunchRequest {
        block: Some(block),
        domain: Some([n, n, n]),
        set: vec![],
    };
    let bound = Bound::new(gputraffic::input::trace::load(kernel)?, hw, &req)?;
    let model = models::find("placement2p5d")?;
    bound.predict(model, &BTreeMap::new(), None).map(|(p, _)| p)
}

/// Grid size n (an n^3 grid) and the tuned optimal block bx x by.
type Optimum = (i64, [u32; 2]);

/// Table I: optimal thread block configurations on GTX 780, per data placement and grid size.
const TABLE_I: &[(&str, [Optimum; 3])] = &[
    (
        "placement-baseline",
        [(128, [64, 2]), (256, [128, 1]), (512, [256, 4])],
    ),
    (
        "placement-shared",
        [(128, [128, 1]), (256, [128, 1]), (512, [256, 1])],
    ),
    (
        "placement-hybrid",
        [(128, [128, 4]), (256, [128, 2]), (512, [256, 1])],
    ),
    (
        "placement-register",
        [(128, [64, 2]), (256, [128, 1]), (512, [256, 1])],
    ),
];

#[test]
fn every_table_i_optimum_is_a_candidate_of_the_heuristic() {
    // "The optimal shape of blocking configurations for the 3D 7-point stencil is long and flat
    // as shown in Table I, and it meets the heuristic": the tuned optimum lies in the pruned space.
    let hw = HwConfig::load("gtx-780").unwrap();
    for (kernel, row) in TABLE_I {
        for (n, [bx, by]) in row {
            let p = predict(kernel, "gtx-780", [*bx, *by, 1], *n).unwrap();
            assert_eq!(p.fields["in_candidates"], true, "{kernel} {n}^3 {bx}x{by}");
            let c =
                candidates(*n as u64, *n as u64, 32, hw.sm.max_threads_per_block as u64).unwrap();
            assert!(c.contains(&(*bx as u64, *by as u64)));
            // Rank reported = rank among the candidates.
            assert_eq!(
                p.fields["rank"].as_u64().unwrap(),
                rank((*bx as u64, *by as u64), &c)
            );
            assert_eq!(p.fields["candidates"].as_u64().unwrap(), c.len() as u64);
        }
    }
}

#[test]
fn the_256_cube_examples_of_sect_iv_a() {
    // "a stencil grid of 256 x 256 x 256 points, the baseline version 128 delivers the best
    // performance on GTX 780, while the optimal configuration of the shared memory + register
    // version is 128 x 2": both are long and flat candidates, and 128 x 1 ranks above 128 x 2.
    let base = predict("placement-baseline", "gtx-780", [128, 1, 1], 256).unwrap();
    let hybrid = predict("placement-hybrid", "gtx-780", [128, 2, 1], 256).unwrap();
    assert_eq!(base.fields["in_candidates"], true);
    assert_eq!(hybrid.fields["in_candidates"], true);
    assert!(base.fields["rank"].as_u64() < hybrid.fields["rank"].as_u64());
    // (bx + 2) x (by + 2) values per plane (Sect. IV-A).
    assert_eq!(base.fields["loaded_values_per_plane"], 130 * 3);
    assert_eq!(hybrid.fields["loaded_values_per_plane"], 130 * 4);
}

#[test]
fn with_fixed_block_x_a_smaller_block_y_ranks_better() {
    // Sect. V: "with the fixed block.x, the performance increases when block.y decreases".
    for n in [128u64, 256, 512] {
        let c = candidates(n, n, 32, 1024).unwrap();
        for (_, row) in TABLE_I {
            for (_, [bx, by]) in row {
                let (bx, by) = (*bx as u64, *by as u64);
                if by > 1 && bx <= n {
                    assert!(rank((bx, by / 2), &c) < rank((bx, by), &c), "{bx}x{by}");
                }
            }
        }
    }
}

#[test]
fn flop_to_byte_ratio_of_sect_i() {
    // "The ratio between flops and data access is 7/(8 * 8) = 0.11".
    assert_eq!(
        (flops_per_byte(7.0, 8.0, 8.0) * 100.0).round() / 100.0,
        0.11
    );
}

#[test]
fn volumes_and_errors() {
    // 256^3 with 128 x 1 on GTX 780: 2 x 256 blocks, 256 planes, 390 floats each.
    let p = predict("placement-hybrid", "gtx-780", [128, 1, 1], 256).unwrap();
    assert_eq!(p.volumes.l2_load_bytes, Some(512.0 * 256.0 * 390.0 * 4.0));
    assert_eq!(p.volumes.dram_load_bytes, None);
    // 3D blocks are not 2.5D blocking.
    assert!(predict("placement-baseline", "gtx-780", [32, 4, 2], 64).is_err());
}
