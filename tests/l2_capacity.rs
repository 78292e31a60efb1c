//! The shipped H100 and H200 L2 configs against the L2 capacity sweep measured on both GPUs
//! (`validation/l2_capacity.cu`, `tests/data/{h100,h200}/micro/l2_capacity.csv`): one wave of
//! 1024-thread blocks reads an array four times with a grid stride, block b re-reading in pass p
//! the column of block b + p·rot, so the L2 alone serves re-reads. `traces/l2-sweep.toml` is the
//! same kernel. Each launch is simulated with the block-to-SM placement the GPU used
//! (`l2_capacity_blocks.csv`, the same in all 75 launches), since who re-reads a line, an SM of
//! the same L2 partition or of the other, is what this benchmark varies.

use gputraffic::Bound;
use gputraffic::input::hw::HwConfig;
use gputraffic::input::table::Table;
use gputraffic::launch::LaunchRequest;
use gputraffic::sim::SimOptions;
use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

const FABRIC: &str = "lts__t_sectors_srcunit_ltcfabric.sum";
const L2_READS: &str = "lts__t_sectors_srcunit_tex_op_read.sum";
const NEAR_MISSES: &str = "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum";
const DRAM_READS: &str = "dram__sectors_read.sum";

/// The words per thread and pass simulated: 28.9 MiB (m = 14) to 66 MiB (m = 32) on 264 blocks.
const FOOTPRINTS: [i64; 9] = [10, 14, 16, 20, 22, 24, 26, 28, 32];
const ROTATIONS: [i64; 3] = [1, 8, 66];

/// One launch, measured and simulated: the shares that matter here.
#[derive(Debug, Clone, Copy)]
struct Shares {
    /// DRAM sectors read beyond the first pass, per sector re-read: the L2 misses of passes 1-3.
    reread_misses: f64,
    /// Near-partition lookup misses per L2 read (pass 0 alone makes it at least 1/4).
    near_misses: f64,
    /// Fabric sectors per L2 read.
    fabric: f64,
}

fn shares(sectors_per_pass: f64, passes: f64, get: impl Fn(&str) -> f64) -> Shares {
    Shares {
        reread_misses: (get(DRAM_READS) - sectors_per_pass) / ((passes - 1.0) * sectors_per_pass),
        near_misses: get(NEAR_MISSES) / get(L2_READS),
        fabric: get(FABRIC) / get(L2_READS),
    }
}

/// Per GPU: (rot, m) -> (measured, simulated).
type Sweep = HashMap<(i64, i64), (Shares, Shares)>;

fn sweep(gpu: &str, config: &str) -> Sweep {
    let load =
        |file: &str| Table::load(Path::new(&format!("tests/data/{gpu}/micro/{file}"))).unwrap();
    let runs = load("l2_capacity.csv");

    // The first-wave order the GPU used: each SM where its first block went.
    let mut order: Vec<u32> = Vec::new();
    for sm in load("l2_capacity_blocks.csv").numbers("sm").unwrap() {
        let sm = sm.unwrap() as u32;
        if !order.contains(&sm) {
            order.push(sm);
        }
    }
    let mut hw = HwConfig::load(config).unwrap();
    assert_eq!(
        order.len(),
        hw.sm.count as usize,
        "{gpu}: every SM got a block"
    );
    hw.schedule.dispatch_order = Some(order);

    let kernel = gputraffic::input::trace::load("traces/l2-sweep.toml").unwrap();
    let mut out = Sweep::new();
    for row in &runs.rows {
        let cell = |name: &str| -> f64 { row[runs.column(name).unwrap()].parse().unwrap() };
        let (rot, m) = (cell("rot") as i64, cell("m") as i64);
        if !ROTATIONS.contains(&rot) || !FOOTPRINTS.contains(&m) {
            continue;
        }
        let (blocks, passes, per_pass) = (
            cell("blocks") as i64,
            cell("passes"),
            cell("sectors_per_pass"),
        );
        let req = LaunchRequest {
            block: None,
            domain: None,
            set: vec![
                ("m".into(), m),
                ("rot".into(), rot),
                ("blocks".into(), blocks),
                ("passes".into(), passes as i64),
            ],
        };
        let bound = Bound::with_hw(kernel.clone(), hw.clone(), &req).unwrap();
        let report = bound.simulate(&SimOptions::default(), None).unwrap();
        let measured = shares(per_pass, passes, cell);
        let simulated = shares(per_pass, passes, |name| report.metric(name).unwrap() as f64);
        out.insert((rot, m), (measured, simulated));
    }
    out
}

fn h200() -> &'static Sweep {
    static S: OnceLock<Sweep> = OnceLock::new();
    S.get_or_init(|| sweep("h200", "h200"))
}

fn h100() -> &'static Sweep {
    static S: OnceLock<Sweep> = OnceLock::new();
    S.get_or_init(|| sweep("h100", "h100-sxm"))
}

fn both() -> [(&'static str, &'static Sweep); 2] {
    [("h200", h200()), ("h100", h100())]
}

#[test]
fn the_measured_partition_map_gives_the_measured_share_of_fabric_traffic() {
    // Below capacity every re-read hits: the near-partition misses and fabric crossings come
    // from pass 0 and from lines re-read by an SM of the other partition, so they measure which
    // SMs share a partition. The map SMs 0-63 / 64-131 (the guess before) gives 0.177 and 0.263
    // on the H200 for rot 1 and 8, measured 0.156 and 0.227. rot 66 is left out: it pairs blocks
    // of the wave's two rounds, and the GPU's second round starts at another place of its dispatch
    // cycle than the first, which the scheduler's one dispatch order does not follow. The
    // closest call is the H100's rot 8 at 28.9 MiB, 0.215 simulated against 0.237 (0.217 with
    // tree-PLRU sets, before the measured LRU): 28.9 MiB is near where its reuse starts to fade.
    for (gpu, s) in both() {
        for rot in [1, 8] {
            for m in [10, 14] {
                let (meas, sim) = s[&(rot, m)];
                assert!(
                    (sim.fabric - meas.fabric).abs() <= 0.025,
                    "{gpu} rot {rot} m {m}: fabric share {:.3} simulated, {:.3} measured",
                    sim.fabric,
                    meas.fabric
                );
                assert!(
                    (sim.near_misses - meas.near_misses).abs() <= 0.035,
                    "{gpu} rot {rot} m {m}: near misses {:.3} simulated, {:.3} measured",
                    sim.near_misses,
                    meas.near_misses
                );
            }
        }
    }
}

#[test]
fn reuse_is_kept_well_below_capacity_and_lost_well_above() {
    for (gpu, s) in both() {
        for rot in ROTATIONS {
            let (meas, sim) = s[&(rot, 10)];
            assert!(
                meas.reread_misses <= 0.01 && sim.reread_misses <= 0.01,
                "{gpu} rot {rot} 20.6 MiB: re-read misses {:.3} simulated, {:.3} measured",
                sim.reread_misses,
                meas.reread_misses
            );
            // The H100 keeps a little even here (0.94-0.99 misses measured up to 165 MiB, not
            // monotone), as if some lines were protected from eviction; the configs' LRU keeps
            // nothing.
            let (meas, sim) = s[&(rot, 32)];
            assert!(
                sim.reread_misses >= 0.97 && (sim.reread_misses - meas.reread_misses).abs() <= 0.06,
                "{gpu} rot {rot} 66 MiB: re-read misses {:.3} simulated, {:.3} measured",
                sim.reread_misses,
                meas.reread_misses
            );
        }
    }
}

#[test]
fn the_capacity_edge_is_within_0_15_on_average() {
    // 33-58 MiB, where the GPUs go from keeping all reuse to keeping none. With the measured
    // LRU sets the H200 follows within 0.04 on average (0.82 against 0.71 misses at 49.5 MiB for
    // rot 1; tree-PLRU: 0.34, a mean gap of 0.12), while the H100, whose reuse fades over a
    // wider range than LRU's, is 0.12 off (0.89 against 0.46 at 41.2 MiB; tree-PLRU 0.05):
    // docs/model.md, "L2". This bounds the gap as it stands, with some room for the schedule's
    // draws.
    for (gpu, s) in both() {
        let edge: Vec<f64> = ROTATIONS
            .iter()
            .flat_map(|&rot| [16, 20, 22, 24, 26, 28].map(|m| (rot, m)))
            .map(|key| s[&key].1.reread_misses - s[&key].0.reread_misses)
            .collect();
        let mean_abs = edge.iter().map(|d| d.abs()).sum::<f64>() / edge.len() as f64;
        assert!(
            mean_abs <= 0.15,
            "{gpu}: mean |simulated - measured| re-read misses {mean_abs:.3} over the edge ({edge:.2?})"
        );
    }
}
