//! The ernst2023 estimator against the numbers Ernst et al. 2023 print and against small cases
//! counted by hand.

use gputraffic::Bound;
use gputraffic::input::trace::Kernel;
use gputraffic::launch::LaunchRequest;
use gputraffic::models::Prediction;
use gputraffic::models::ernst2023::{self, half_warp_wavefronts};
use std::collections::BTreeMap;

fn run(
    trace: &str,
    hw: &str,
    block: [u32; 3],
    domain: Option<[i64; 3]>,
    set: &[(&str, i64)],
    params: &[(&str, f64)],
) -> gputraffic::error::Result<Prediction> {
    let req = LaunchRequest {
        block: Some(block),
        domain,
        set: set.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
    };
    let bound = Bound::new(Kernel::load(std::path::Path::new(trace)).unwrap(), hw, &req).unwrap();
    let params: BTreeMap<String, f64> = params.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    bound
        .predict(&ernst2023::MODEL, &params, None)
        .map(|(p, _)| p)
}

fn f(p: &Prediction, name: &str) -> f64 {
    p.fields[name]
        .as_f64()
        .unwrap_or_else(|| panic!("no field {name}"))
}

/// Sect. 4.2: "double a = A[threadIdx.x]; double b = B[threadIdx.x*2]; double d =
/// D[threadIdx.x*16];" take 1, 2 and 16 cycles per half warp.
#[test]
fn paper_bank_conflict_examples() {
    let lanes = |stride: u64| -> Vec<u64> { (0..16).map(|t| 1 << 20 | (8 * stride * t)).collect() };
    assert_eq!(half_warp_wavefronts(&lanes(1), 8), 1);
    assert_eq!(half_warp_wavefronts(&lanes(2), 8), 2);
    assert_eq!(half_warp_wavefronts(&lanes(16), 8), 16);
}

/// Sect. 5.4: "For 16 threads or higher, each half-warp of 16 threads loads a single contiguous
/// block without any bank conflicts, that can be processed in a single wavefront", and thread
/// folding lowers the L1 time per update. The 25-point stencil: 25 loads + 1 store, 2 half warps
/// each = 52 cycles per warp-wide update; 2z folding: (8 + 2*17 loads + 2 stores) * 2 / 2 = 44.
#[test]
fn l1_cycles_of_the_25pt_stencil() {
    let t = "traces/ernst-25pt-r4.toml";
    let d = Some([64, 32, 32]);
    for block in [[16, 4, 16], [32, 8, 4], [64, 4, 4], [256, 4, 1]] {
        let p = run(t, "a100-40gb", block, d, &[], &[]).unwrap();
        assert_eq!(f(&p, "l1_cycles_per_warp"), 52.0, "{block:?}");
    }
    let p = run(t, "a100-40gb", [64, 4, 4], d, &[("fold_z", 2)], &[]).unwrap();
    assert_eq!(f(&p, "l1_cycles_per_warp"), 44.0);
    // 8 wide: a half warp reads two rows of 8. With a pitch of 72 doubles (576 B) they pair
    // (72 mod 16 = 8: disjoint banks); with 264 doubles (2112 B) they are "far": 2 wavefronts.
    let p = run(t, "a100-40gb", [8, 8, 16], d, &[], &[]).unwrap();
    assert_eq!(f(&p, "l1_cycles_per_warp"), 52.0);
    let p = run(t, "a100-40gb", [8, 8, 16], Some([256, 32, 32]), &[], &[]).unwrap();
    assert_eq!(f(&p, "l1_cycles_per_warp"), 104.0);
}

/// A 32x1x1 block of star1 (doubles, range 1, rows start on 32 B sectors, the interior 32 B into
/// the row): the centre row with its +-1 neighbours touches sectors 0..9 (10), the four rows at
/// +-pitch and +-plane 8 each: 42 unique sectors for 32 updates. Per instruction: 8 + 9 + 9 + 4*8
/// = 58 sectors. Every half warp reads 16 consecutive doubles: 8 instructions * 2 = 16 cycles.
/// The 32x2x2 domain is 4 blocks, all in one wave: its footprint is 4 centre rows * 10 + 8 halo
/// rows * 8 = 104 sectors = 26 B per update; stores 4 rows * 8 sectors = 8 B per update.
#[test]
fn star1_block_and_wave_by_hand() {
    let p = run(
        "traces/star1.toml",
        "a100-40gb",
        [32, 1, 1],
        Some([32, 2, 2]),
        &[],
        &[],
    )
    .unwrap();
    assert_eq!(f(&p, "block_unique_load_sectors"), 42.0);
    assert_eq!(f(&p, "l2_load_compulsory_bytes_per_lup"), 42.0);
    assert_eq!(f(&p, "l1_load_bytes_per_lup"), 58.0);
    assert_eq!(f(&p, "l1_cycles_per_warp"), 16.0);
    assert_eq!(f(&p, "l2_store_bytes_per_lup"), 8.0);
    assert_eq!(f(&p, "wave_load_bytes"), 104.0 * 32.0);
    assert_eq!(f(&p, "dram_load_bytes_per_lup"), 26.0);
    assert_eq!(f(&p, "dram_store_bytes_per_lup"), 8.0);
    // Eq. (5) on top of the compulsory volume, with the fit at the block's L1 oversubscription:
    // 32 resident blocks of 14 lines of 128 B over 192 KiB.
    assert_eq!(f(&p, "block_unique_load_lines"), 14.0);
    let o = 32.0 * 14.0 * 128.0 / 196608.0;
    assert_eq!(f(&p, "l1_oversubscription"), o);
    let miss = 0.73 * (-4.6 * (-0.34f64 * o).exp()).exp();
    assert!((f(&p, "l2_load_bytes_per_lup") - (42.0 + miss * 16.0)).abs() < 1e-12);
    // Totals are per update times the launch's updates.
    assert_eq!(p.volumes.dram_load_bytes, Some(26.0 * 128.0));
    assert_eq!(p.volumes.l1_load_bytes, Some(58.0 * 128.0));
}

/// star1 32x32x1000 with 32x32x1 blocks (22 registers: 2 per SM, 216 per wave on the A100): the
/// wave is blocks z = 500..715, the z set the single block at z = 499. Counted by hand (rows of
/// 32 doubles are 8 sectors, 10 with the x neighbours; a plane has 32 rows):
/// - wave loads: plane 499 (256, the -plane rows), planes 500..715 (216 * (32*10 + 2*8) = 336
///   each), plane 716 (256): 73088 sectors;
/// - z set: in planes 498 (256), 499 (336), 500 (256), out plane 499 (256): 1104 sectors;
/// - shared: plane 499's 256 and plane 500's 256 rows of 8: 512 sectors.
#[test]
fn z_layer_set_by_hand() {
    let p = run(
        "traces/star1.toml",
        "a100-40gb",
        [32, 32, 1],
        Some([32, 32, 1000]),
        &[],
        &[],
    )
    .unwrap();
    assert_eq!(f(&p, "wave_blocks"), 216.0);
    assert_eq!(f(&p, "wave_lups"), 216.0 * 1024.0);
    assert_eq!(f(&p, "wave_load_bytes"), 73088.0 * 32.0);
    assert_eq!(f(&p, "wave_old_z_bytes"), 1104.0 * 32.0);
    assert_eq!(f(&p, "wave_overlap_z_bytes"), 512.0 * 32.0);
    assert_eq!(f(&p, "wave_overlap_y_bytes"), 0.0);
    let o = 1104.0 * 32.0 / (20.0 * 1048576.0);
    let r_z = (-0.0036 * (3.97f64 * o).exp()).exp();
    assert_eq!(f(&p, "r_hit_z"), r_z);
    let lups = 216.0 * 1024.0;
    let expect = (73088.0 - r_z * 512.0) * 32.0 / lups;
    assert!((f(&p, "dram_load_bytes_per_lup") - expect).abs() < 1e-12);
}

/// Sect. 5.3: "The D3Q15 stencil LBM part of the kernel transfers a data volume of 2*15*8B =
/// 240B/Lup read and write"; with the phase-field store, 15*8 + 8 = 128 B/LUP are stored, and
/// the aligned stores (pull scheme) need no read-for-ownership. Sect. 5.6: the DRAM load volume of
/// most shapes clusters "at around 150B/Lup, of which 120B/Lup are due to the D3Q15 LBM kernel".
#[test]
fn lbm_store_and_load_volumes() {
    let p = run(
        "traces/ernst-lbm-d3q15.toml",
        "a100-40gb",
        [32, 4, 4],
        Some([128, 64, 64]),
        &[],
        &[],
    )
    .unwrap();
    assert_eq!(f(&p, "l2_store_bytes_per_lup"), 128.0);
    assert_eq!(f(&p, "dram_store_bytes_per_lup"), 128.0);
    let dram = f(&p, "dram_load_bytes_per_lup");
    assert!((150.0..165.0).contains(&dram), "{dram}");
}

#[test]
fn bad_parameters_are_errors() {
    let t = "traces/star1.toml";
    let d = Some([32, 2, 2]);
    let e = run(t, "a100-40gb", [32, 1, 1], d, &[], &[("l2_bytes", 0.0)]).unwrap_err();
    assert!(e.message.contains("l2_bytes"), "{e}");
    let e = run(
        t,
        "a100-40gb",
        [32, 1, 1],
        d,
        &[],
        &[("lups_per_thread", -1.0)],
    )
    .unwrap_err();
    assert!(e.message.contains("lups_per_thread"), "{e}");
    let e = run(t, "a100-40gb", [32, 1, 1], d, &[], &[("st_a", f64::NAN)]).unwrap_err();
    assert!(e.message.contains("st_a"), "{e}");
    // lups_per_thread scales the per-update numbers.
    let p = run(
        t,
        "a100-40gb",
        [32, 1, 1],
        d,
        &[],
        &[("lups_per_thread", 2.0)],
    )
    .unwrap();
    assert_eq!(f(&p, "dram_load_bytes_per_lup"), 13.0);
}
