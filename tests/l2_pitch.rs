//! The L2's set function against stencils whose planes lie at different pitches: star4 (doubles,
//! 128×4×2 blocks) at 512, 520 and 496 points in x, 512×256 in y and z, measured on an H100
//! (`validation/launches-pitch.txt`, data `tests/data/h100/pitch/`). The GPU reads 10.62, 11.10 and
//! 10.38 B of DRAM per lattice update: no pitch crowds the planes into part of the sets. The
//! multiplier that ordered `balanced` runs until 2026-11-25 did at 512 (planes 16,900 lines
//! apart): +15.1% DRAM reads there, −1.3% and −1.4% at the other two (`src/sim/cache.rs`,
//! `permute`).

use gputraffic::analysis::measured;
use gputraffic::analysis::validate;
use gputraffic::metrics;
use std::path::Path;

#[test]
fn the_l2_keeps_a_stencils_z_reuse_at_every_plane_pitch_as_the_h100_does() {
    let (launches, notes) = measured::load(
        Path::new("tests/data/h100/pitch/ncu.csv"),
        Some(Path::new("tests/data/h100/pitch/manifest.toml")),
    )
    .unwrap();
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(launches.len(), 18);
    let launches: Vec<_> = launches
        .into_iter()
        .filter(|l| l.request.block == Some([128, 4, 2]))
        .collect();
    assert_eq!(launches.len(), 3);
    let v = validate::validate(launches, "h100-sxm", "pitch", None, &|_, _| {}).unwrap();
    for r in &v.rows {
        for (m, bound) in [(metrics::DRAM_READ, 0.05), (metrics::L2_READ_MISS, 0.05)] {
            let p = r.pairs.iter().find(|(n, _)| *n == m).unwrap().1;
            let err = p.rel_err().unwrap();
            // Simulated: DRAM reads +2.9%, +0.5%, +1.0%; near-partition misses +2.4%, −0.3%,
            // +1.5%.
            assert!(
                err.abs() < bound,
                "{} {m}: {} simulated, {} measured ({:+.1}%)",
                r.launch.label(),
                p.simulated,
                p.measured,
                100.0 * err
            );
        }
    }
}
