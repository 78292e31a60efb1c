//! Su et al. 2015, "An analytical GPU performance model for 3D stencil computations from the
//! angle of data traffic": the three traffic volumes V_SMX (registers ↔ on-SMX storage), V_L2
//! (on-SMX storage ↔ L2) and V_GM (L2 ↔ global memory), formulas (3)–(17), the time bound (2)
//! and the imbalance-adjusted time (18).
//!
//! The paper's units: values (`sizeof(type)` bytes each) per thread, per thread block and per
//! group of simultaneously active blocks. Its "code analysis" inputs (aligned and misaligned
//! loads, stores per thread, halo width) come from [`crate::launch::code_analysis`]; each can be overridden
//! with `--set`. Formula (6) is the one-point-per-thread case of (16) (chunk_z = 1), so one
//! function covers both; for z-blocked kernels formula (17) replaces (8) when the active blocks'
//! net data no longer fits the on-SMX storage, as Sect. 3.5 prescribes.

use super::{Domain, ModelInfo, ModelInput, ParamSpec, Prediction, Quantity};
use crate::error::{Error, Result};
use crate::launch::code_analysis::{self, CodeAnalysis};

/// The model as the command line knows it.
pub const MODEL: ModelInfo = ModelInfo {
    name: "su2015",
    summary: "Su et al. 2015: V_SMX, V_L2, V_GM of 3D stencils (formulas 2-18), delta/epsilon/eta miss ratios",
    scope: crate::models::Scope {
        applies_to: "3-D stencils, one point per thread or a z loop (Su et al. Sect. 2-3)",
        dims: &[3],
        any_control_flow: false,
        atomics: false,
    },
    params: PARAMS,
    quantities: QUANTITIES,
    predict,
};

/// The prediction's fields explained, in the order `predict` prints them.
const QUANTITIES: &[Quantity] = &[
    Quantity::new(
        "threads",
        "threads",
        "threads",
        Some(Domain::COUNT),
        "threads launched (T)",
    ),
    Quantity::new(
        "thread_blocks",
        "thread blocks",
        "blocks",
        Some(Domain::COUNT),
        "blocks launched (B)",
    ),
    Quantity::new(
        "occupancy",
        "occupancy",
        "1",
        Some(Domain::RATE_CEILING),
        "resident warps over the SM's maximum (the paper's occupancy)",
    ),
    Quantity::new(
        "blocks_per_smx",
        "blocks per SMX",
        "blocks",
        Some(Domain::COUNT_OR_ZERO),
        "blocks one SMX holds at once",
    ),
    Quantity::new(
        "blocks_per_group",
        "blocks per group",
        "blocks",
        Some(Domain::COUNT_OR_ZERO),
        "blocks active at once on the whole GPU, (10): blocks per SMX × SMXs",
    ),
    Quantity::new(
        "aligned_loads_t",
        "aligned loads per thread",
        "loads",
        Some(Domain::NON_NEGATIVE),
        "loads per thread aligned to a 128 B line (code analysis)",
    ),
    Quantity::new(
        "misaligned_loads_t",
        "misaligned loads per thread",
        "loads",
        Some(Domain::NON_NEGATIVE),
        "loads per thread not aligned to a 128 B line (code analysis)",
    ),
    Quantity::new(
        "n_ld_smx_t",
        "SMX loads per thread",
        "values",
        Some(Domain::NON_NEGATIVE),
        "(4): aligned + 2 × misaligned loads, values a thread loads from on-SMX storage",
    ),
    Quantity::new(
        "n_st_smx_t",
        "stores per thread",
        "values",
        Some(Domain::NON_NEGATIVE),
        "values a thread stores",
    ),
    Quantity::new(
        "value_bytes",
        "value size",
        "B",
        Some(Domain::POSITIVE),
        "bytes per value (sizeof the element type)",
    ),
    Quantity::new(
        "chunk_z",
        "z chunk",
        "points",
        Some(Domain::COUNT),
        "points a thread updates along z (1: one point per thread)",
    ),
    Quantity::new(
        "halo_width",
        "halo width",
        "values",
        Some(Domain::NON_NEGATIVE),
        "2 × the stencil radius, the halo a block needs in y and z",
    ),
    Quantity::new(
        "n_ld_net_l2_b",
        "net L2 loads per block",
        "values",
        Some(Domain::NON_NEGATIVE),
        "(6)/(16): a block's data with whole SMX lines of halo, loaded from L2 at no miss",
    ),
    Quantity::new(
        "smx_miss_formula",
        "SMX miss formula",
        "",
        None,
        "which formula gives the SMX miss ratio: (8), or (17) when the active blocks' net data exceeds the on-SMX storage",
    ),
    Quantity::new(
        "smx_miss_ratio_per_delta",
        "SMX miss ratio per δ",
        "1",
        Some(Domain::NON_NEGATIVE),
        "the miss ratio divided by δ (the capacity term of (8), or (17)'s terms at δ = 1)",
    ),
    Quantity::new(
        "smx_miss_ratio",
        "SMX miss ratio",
        "1",
        Some(Domain::NON_NEGATIVE),
        "(8)/(17): extra L2 loads over the net volume, δ × capacity term (+ η × scheduling term)",
    ),
    Quantity::new(
        "smx_capacity_term",
        "SMX capacity term",
        "1",
        Some(Domain::NON_NEGATIVE),
        "the factor of δ: active blocks' net data over the on-SMX storage (0 when it fits, (8))",
    ),
    Quantity::new(
        "smx_scheduling_term",
        "SMX scheduling term",
        "1",
        Some(Domain::NON_NEGATIVE),
        "the factor of η in (17): warps interleaving on one SMX; 0 under (8)",
    ),
    Quantity::new(
        "n_ld_l2_b",
        "L2 loads per block",
        "values",
        Some(Domain::NON_NEGATIVE),
        "(7): net L2 loads × (1 + SMX miss ratio)",
    ),
    Quantity::new(
        "n_st_l2_b",
        "L2 stores per block",
        "values",
        Some(Domain::NON_NEGATIVE),
        "values a block stores into L2",
    ),
    Quantity::new(
        "groups",
        "groups",
        "groups",
        Some(Domain::COUNT_OR_ZERO),
        "waves of simultaneously active blocks, thread blocks / blocks per group",
    ),
    Quantity::new(
        "width_y",
        "group width in y",
        "points",
        Some(Domain::NON_NEGATIVE),
        "(13): the y extent a group of blocks covers, halo included",
    ),
    Quantity::new(
        "height_z",
        "group height in z",
        "points",
        Some(Domain::NON_NEGATIVE),
        "(14): the z extent a group covers, halo included",
    ),
    Quantity::new(
        "n_ld_net_gm_g",
        "net DRAM loads per group",
        "values",
        Some(Domain::NON_NEGATIVE),
        "(12): a group's data with halo in whole L2 lines, loaded from DRAM at no miss",
    ),
    Quantity::new(
        "l2_miss_ratio_per_epsilon",
        "L2 miss ratio per ε",
        "1",
        Some(Domain::NON_NEGATIVE),
        "the factor of ε in (15): a group's net data over the L2 size",
    ),
    Quantity::new(
        "l2_miss_ratio",
        "L2 miss ratio",
        "1",
        Some(Domain::NON_NEGATIVE),
        "(15): extra DRAM loads over the net volume, ε × capacity term",
    ),
    Quantity::new(
        "n_ld_gm_g",
        "DRAM loads per group",
        "values",
        Some(Domain::NON_NEGATIVE),
        "(11): net DRAM loads × (1 + L2 miss ratio)",
    ),
    Quantity::new(
        "n_st_gm_g",
        "DRAM stores per group",
        "values",
        Some(Domain::NON_NEGATIVE),
        "values a group stores to DRAM",
    ),
    Quantity::new(
        "v_smx_bytes",
        "V_SMX",
        "B",
        Some(Domain::NON_NEGATIVE),
        "(3): register ↔ on-SMX storage volume, threads × (loads + stores) × value size",
    ),
    Quantity::new(
        "v_l2_bytes",
        "V_L2",
        "B",
        Some(Domain::NON_NEGATIVE),
        "(5): on-SMX storage ↔ L2 volume, blocks × (loads + stores) × value size",
    ),
    Quantity::new(
        "v_gm_bytes",
        "V_GM",
        "B",
        Some(Domain::NON_NEGATIVE),
        "(9): L2 ↔ global memory volume, groups × (loads + stores) × value size",
    ),
    Quantity::new(
        "time_smx_s",
        "SMX time",
        "s",
        Some(Domain::NON_NEGATIVE),
        "V_SMX at the on-SMX bandwidth (empty without one in the GPU config)",
    ),
    Quantity::new(
        "time_l2_s",
        "L2 time",
        "s",
        Some(Domain::NON_NEGATIVE),
        "V_L2 at the L2 bandwidth",
    ),
    Quantity::new(
        "time_gm_s",
        "global-memory time",
        "s",
        Some(Domain::NON_NEGATIVE),
        "V_GM at the DRAM bandwidth",
    ),
    Quantity::new(
        "time_s",
        "bound time",
        "s",
        Some(Domain::NON_NEGATIVE),
        "(2): the largest of the three level times",
    ),
    Quantity::new(
        "limiter",
        "limiter",
        "",
        None,
        "the level whose time is the bound: smx, l2 or gm",
    ),
    Quantity::new(
        "occupancy_efficiency",
        "occupancy efficiency",
        "1",
        Some(Domain::RATE_CEILING),
        "the launch's occupancy over the best occupancy of the kernel, (18)",
    ),
    Quantity::new(
        "time_adjusted_s",
        "adjusted time",
        "s",
        Some(Domain::NON_NEGATIVE),
        "(18): bound × (1 + 1/groups) / occupancy efficiency",
    ),
    Quantity::new(
        "delta",
        "δ",
        "1",
        Some(Domain::UNIT),
        "on-SMX capacity miss constant (--set delta)",
    ),
    Quantity::new(
        "epsilon",
        "ε",
        "1",
        Some(Domain::UNIT),
        "L2 capacity miss constant (--set epsilon)",
    ),
    Quantity::new(
        "eta",
        "η",
        "1",
        Some(Domain::UNIT),
        "warp-scheduling miss constant (--set eta)",
    ),
];

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "delta",
        default: Some(0.01),
        doc: "on-SMX capacity miss constant δ of (8)/(17); 0.01 in Table 2 and Sect. 4",
        domain: Domain::UNIT,
    },
    ParamSpec {
        name: "epsilon",
        default: Some(0.01),
        doc: "L2 capacity miss constant ε of (15); 0.01 in Table 2 and Sect. 4",
        domain: Domain::UNIT,
    },
    ParamSpec {
        name: "eta",
        default: Some(0.01),
        doc: "warp-scheduling miss constant η of (17); the paper gives no value, 0.01 like δ and ε",
        domain: Domain::UNIT,
    },
    ParamSpec {
        name: "smx_line_bytes",
        default: Some(256.0),
        doc: "'SMX line size' of (6)/(16): Table 2 row 16 evaluates it as 256/8 values per halo row",
        domain: Domain::POSITIVE,
    },
    ParamSpec {
        name: "l2_line_bytes",
        default: None,
        doc: "'L2 cache line size' of (12) (Table 2 row 5: 32 B); default the config's L2 sector",
        domain: Domain::POSITIVE,
    },
    ParamSpec {
        name: "smx_storage_bytes",
        default: None,
        doc: "on-SMX storage size of (8) (48 KB RODC on the K20); default the config's read-only cache, else its L1",
        domain: Domain::POSITIVE,
    },
    ParamSpec {
        name: "aligned_loads",
        default: None,
        doc: "#aligned loads_T of (4); default from code analysis of the trace",
        domain: Domain::COUNT_OR_ZERO,
    },
    ParamSpec {
        name: "misaligned_loads",
        default: None,
        doc: "#misaligned loads_T of (4); default from code analysis of the trace",
        domain: Domain::COUNT_OR_ZERO,
    },
    ParamSpec {
        name: "stores",
        default: None,
        doc: "n^st_SMX,T, values stored per thread; default from code analysis (also chunk_z)",
        domain: Domain::COUNT,
    },
    ParamSpec {
        name: "halo_width",
        default: None,
        doc: "halo_width of (6), (13), (14) (2 for the paper's stencils); default 2 × stencil radius",
        domain: Domain::NON_NEGATIVE,
    },
    ParamSpec {
        name: "occupancy",
        default: None,
        doc: "occupancy of (8)/(17); default the CUDA occupancy of the launch",
        domain: Domain::RATE_CEILING,
    },
];

/// The numbers the model needs, as plain values (the paper's Table 2, rows 1–15).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SuInputs {
    /// Computational points N_x, N_y, N_z.
    pub n: [u64; 3],
    /// Block dimensions B_x, B_y, B_z.
    pub block: [u64; 3],
    /// Points per thread in z (1 for the baseline).
    pub chunk_z: u64,
    /// Total threads (#threads of (3)).
    pub threads: u64,
    /// Total thread blocks (#thread blocks of (5), (10)).
    pub thread_blocks: u64,
    /// Resident blocks per SMX (#thread blocks per SMX).
    pub blocks_per_smx: u64,
    /// SMX count.
    pub smxs: u64,
    /// Occupancy (resident warps over the maximum).
    pub occupancy: f64,
    /// The largest occupancy any block size reaches for this kernel (for (18)).
    pub max_occupancy: f64,
    /// Maximum resident threads per SMX.
    pub max_threads_per_smx: u64,
    /// Streaming processors (FP32 cores) per SMX, for (17).
    pub cores_per_smx: u64,
    /// Threads per warp.
    pub warp_size: u64,
    /// On-SMX storage size (bytes).
    pub smx_storage_bytes: f64,
    /// SMX line size (bytes) of (6)/(16).
    pub smx_line_bytes: f64,
    /// L2 cache line size (bytes) of (12).
    pub l2_line_bytes: f64,
    /// L2 cache size (bytes) of (15).
    pub l2_bytes: f64,
    /// sizeof(type) (bytes).
    pub value_bytes: f64,
    /// #aligned loads_T.
    pub aligned_loads: f64,
    /// #misaligned loads_T.
    pub misaligned_loads: f64,
    /// n^st_SMX,T.
    pub stores_per_thread: f64,
    /// halo_width.
    pub halo_width: f64,
    /// δ.
    pub delta: f64,
    /// ε.
    pub epsilon: f64,
    /// η.
    pub eta: f64,
    /// Realistic bandwidths BW_SMX, BW_L2, BW_GM (bytes per second); an unknown one (`NaN`)
    /// leaves its term out of (2).
    pub bandwidth: [f64; 3],
}

impl SuInputs {
    /// The paper's own inputs, Table 2 rows 1–15: 7PT-1 on the K20 at 256³, 32×4×1 blocks,
    /// δ = ε = 0.01 (η, unpublished, 0.01 as well) and the bandwidths of Table 1.
    pub fn table_2() -> SuInputs {
        SuInputs {
            n: [256, 256, 256],
            block: [32, 4, 1],
            chunk_z: 1,
            threads: 16_777_216,
            thread_blocks: 131_072,
            blocks_per_smx: 16,
            smxs: 13,
            occupancy: 1.0,
            max_occupancy: 1.0,
            max_threads_per_smx: 2048,
            cores_per_smx: 192,
            warp_size: 32,
            smx_storage_bytes: 48.0 * 1024.0,
            smx_line_bytes: 256.0,
            l2_line_bytes: 32.0,
            l2_bytes: 1.25 * 1024.0 * 1024.0,
            value_bytes: 8.0,
            aligned_loads: 5.0,
            misaligned_loads: 2.0,
            stores_per_thread: 1.0,
            halo_width: 2.0,
            delta: 0.01,
            epsilon: 0.01,
            eta: 0.01,
            bandwidth: [1215.35e9, 367.87e9, 160.88e9],
        }
    }
}

/// The model's quantities (Table 2, rows 14–29, plus the time of (2) and (18)).
#[derive(Debug, Clone, PartialEq)]
pub struct SuOutputs {
    /// n^ld_SMX,T, (4).
    pub n_ld_smx_t: f64,
    /// n^ld,net_L2,B, (6)/(16).
    pub n_ld_net_l2_b: f64,
    /// SMX miss ratio divided by its constant: (8) without δ; for (17), its total over δ.
    pub smx_miss_ratio_per_delta: f64,
    /// SMX miss ratio, (8) or (17): `δ · smx_capacity_term + η · smx_scheduling_term`.
    pub smx_miss_ratio: f64,
    /// The factor of δ in the SMX miss ratio: (8) without δ, or the first term of (17).
    pub smx_capacity_term: f64,
    /// The factor of η in (17), log2(chunk_z · warps per block / (cores / warp size)); 0 under (8).
    pub smx_scheduling_term: f64,
    /// Whether (17) applied (the active blocks' net data exceeds the on-SMX storage).
    pub uses_formula_17: bool,
    /// n^ld_L2,B, (7).
    pub n_ld_l2_b: f64,
    /// n^st_L2,B.
    pub n_st_l2_b: f64,
    /// Thread blocks per group (row 11).
    pub blocks_per_group: u64,
    /// #groups, (10).
    pub groups: u64,
    /// width_y, (13).
    pub width_y: f64,
    /// height_z, (14).
    pub height_z: f64,
    /// n^ld,net_GM,G, (12).
    pub n_ld_net_gm_g: f64,
    /// L2 miss ratio over ε, (15).
    pub l2_miss_ratio_per_epsilon: f64,
    /// L2 miss ratio, (15).
    pub l2_miss_ratio: f64,
    /// n^ld_GM,G, (11).
    pub n_ld_gm_g: f64,
    /// n^st_GM,G (row 26).
    pub n_st_gm_g: f64,
    /// V_SMX in bytes, (3).
    pub v_smx_bytes: f64,
    /// V_L2 in bytes, (5).
    pub v_l2_bytes: f64,
    /// V_GM in bytes, (9).
    pub v_gm_bytes: f64,
    /// V_SMX / BW_SMX, V_L2 / BW_L2, V_GM / BW_GM (seconds).
    pub times_s: [f64; 3],
    /// Time of (2): the largest of the three.
    pub time_s: f64,
    /// Occupancy over the kernel's maximal occupancy.
    pub occupancy_efficiency: f64,
    /// Time of (18).
    pub time_adjusted_s: f64,
}

/// Evaluates formulas (2)–(18).
pub fn evaluate(i: &SuInputs) -> SuOutputs {
    let [nx, ny, nz] = i.n.map(|v| v as f64);
    let [bx, by, bz] = i.block.map(|v| v as f64);
    let cz = i.chunk_z as f64;
    let threads_per_block = bx * by * bz;
    let halo = i.halo_width;
    let _ = nz;

    // (4)
    let n_ld_smx_t = i.aligned_loads + 2.0 * i.misaligned_loads;
    // (16); with chunk_z = 1 it is (6).
    let n_ld_net_l2_b = bx * by * bz * cz
        + (bx * bz * cz + bx * by) * halo
        + (i.smx_line_bytes / i.value_bytes * by * bz * cz) * 2.0;
    // (8)
    let base_ratio = i.occupancy * i.max_threads_per_smx as f64 * n_ld_net_l2_b
        / (threads_per_block * (i.smx_storage_bytes / i.value_bytes));
    // Sect. 3.5: for z-blocked kernels, (17) replaces (8) once chunk_z is so large that the
    // active blocks' net data exceeds the storage. Baseline kernels keep (8) regardless: Table 2
    // itself has 16 × 704 × 8 B > 48 KB and uses (8).
    let uses_formula_17 = i.chunk_z > 1
        && i.blocks_per_smx as f64 * n_ld_net_l2_b * i.value_bytes > i.smx_storage_bytes;
    let (smx_capacity_term, smx_scheduling_term) = if uses_formula_17 {
        let warps_per_block = (threads_per_block / i.warp_size as f64).ceil();
        let sched = (cz * warps_per_block / (i.cores_per_smx as f64 / i.warp_size as f64)).log2();
        (base_ratio * (1.0 + halo) / (cz + halo), sched)
    } else {
        (base_ratio, 0.0)
    };
    let smx_miss_ratio = smx_capacity_term * i.delta + smx_scheduling_term * i.eta;
    let smx_miss_ratio_per_delta = smx_capacity_term + smx_scheduling_term * i.eta / i.delta;
    // (7) and row 19
    let n_ld_l2_b = n_ld_net_l2_b * (1.0 + smx_miss_ratio);
    let n_st_l2_b = threads_per_block * i.stores_per_thread;
    // rows 10, 11 and (10)
    let blocks_per_group = i.blocks_per_smx * i.smxs;
    let groups = i.thread_blocks.div_ceil(blocks_per_group.max(1));
    let bpg = blocks_per_group as f64;
    // (13), (14); a block spans B_z × chunk_z planes (Sect. 3.5).
    let width_y = by * (bpg * bx / nx).ceil() + halo;
    let height_z = bz * cz * (bpg / ((nx * ny) / (bx * by))).ceil() + halo;
    // (12)
    let n_ld_net_gm_g = (nx + i.l2_line_bytes / i.value_bytes * 2.0) * width_y * height_z;
    // (15), (11), row 26
    let l2_miss_ratio_per_epsilon = n_ld_net_gm_g * i.value_bytes / i.l2_bytes;
    let l2_miss_ratio = l2_miss_ratio_per_epsilon * i.epsilon;
    let n_ld_gm_g = n_ld_net_gm_g * (1.0 + l2_miss_ratio);
    let n_st_gm_g = bpg * n_st_l2_b;
    // (3), (5), (9)
    let v_smx_bytes = i.threads as f64 * (n_ld_smx_t + i.stores_per_thread) * i.value_bytes;
    let v_l2_bytes = i.thread_blocks as f64 * (n_ld_l2_b + n_st_l2_b) * i.value_bytes;
    let v_gm_bytes = groups as f64 * (n_ld_gm_g + n_st_gm_g) * i.value_bytes;
    // (2)
    let times_s = [
        v_smx_bytes / i.bandwidth[0],
        v_l2_bytes / i.bandwidth[1],
        v_gm_bytes / i.bandwidth[2],
    ];
    // f64::max skips NaN: a level without a known bandwidth does not bound the time.
    let time_s = times_s.iter().copied().fold(0.0, f64::max);
    // (18)
    let occupancy_efficiency = i.occupancy / i.max_occupancy;
    let time_adjusted_s = time_s * (1.0 + 1.0 / groups as f64) / occupancy_efficiency;

    SuOutputs {
        n_ld_smx_t,
        n_ld_net_l2_b,
        smx_miss_ratio_per_delta,
        smx_miss_ratio,
        smx_capacity_term,
        smx_scheduling_term,
        uses_formula_17,
        n_ld_l2_b,
        n_st_l2_b,
        blocks_per_group,
        groups,
        width_y,
        height_z,
        n_ld_net_gm_g,
        l2_miss_ratio_per_epsilon,
        l2_miss_ratio,
        n_ld_gm_g,
        n_st_gm_g,
        v_smx_bytes,
        v_l2_bytes,
        v_gm_bytes,
        times_s,
        time_s,
        occupancy_efficiency,
        time_adjusted_s,
    }
}

/// Derives [`SuInputs`] from the launch, the hardware config, code analysis and `--set`.
pub fn inputs(input: &ModelInput) -> Result<(SuInputs, CodeAnalysis)> {
    let launch = input.launch;
    let hw = input.hw;
    let src = launch.source_name.as_str();
    let p = |name: &str, derived: f64| input.param_or(PARAMS, name, derived);
    let n = launch.domain().ok_or_else(|| {
        Error::new(
            src,
            "su2015 needs the domain parameters nx, ny, nz in the trace",
        )
    })?;
    let smx_line_bytes = p("smx_line_bytes", 0.0);
    let code = code_analysis::analyze(launch, hw.l1.line_bytes)?;
    let stores = p("stores", code.stores as f64);
    if stores < 1.0 {
        return Err(Error::new(src, "su2015: the kernel stores nothing"));
    }
    let points = launch.lattice_updates as f64;
    let cores = hw.sm.cores.ok_or_else(|| {
        Error::new(
            format!("hw-configs/{}.toml", hw.name),
            "su2015 needs sm.cores (streaming processors per SM) for formula (17)",
        )
    })?;
    let bw = |v: Option<f64>| v.map_or(f64::NAN, |g| g * 1e9);
    let inputs = SuInputs {
        n: n.map(|v| v as u64),
        block: launch.block.map(|v| v as u64),
        chunk_z: stores as u64,
        threads: (points / stores).round() as u64,
        thread_blocks: launch.total_blocks,
        blocks_per_smx: launch.occupancy.blocks_per_sm as u64,
        smxs: hw.sm.count as u64,
        occupancy: p("occupancy", launch.occupancy.occupancy),
        max_occupancy: crate::timing::max_occupancy(hw, input.kernel, launch),
        max_threads_per_smx: hw.sm.max_threads as u64,
        cores_per_smx: cores as u64,
        warp_size: hw.sm.warp_size as u64,
        smx_storage_bytes: p(
            "smx_storage_bytes",
            hw.l1.read_only_cache_bytes.unwrap_or(launch.l1_bytes(hw)) as f64,
        ),
        smx_line_bytes,
        l2_line_bytes: p("l2_line_bytes", hw.l2.sector_bytes as f64),
        l2_bytes: hw.l2.size_bytes as f64,
        value_bytes: code.element_bytes as f64,
        aligned_loads: p("aligned_loads", code.aligned_loads as f64),
        misaligned_loads: p("misaligned_loads", code.misaligned_loads as f64),
        stores_per_thread: stores,
        halo_width: p("halo_width", code.halo_width as f64),
        delta: p("delta", 0.0),
        epsilon: p("epsilon", 0.0),
        eta: p("eta", 0.0),
        bandwidth: [
            bw(hw.bandwidth.l1_gbs),
            bw(hw.bandwidth.l2_gbs),
            bw(Some(hw.bandwidth.dram_gbs.unwrap_or(hw.dram.bandwidth_gbs))),
        ],
    };
    Ok((inputs, code))
}

fn predict(input: &ModelInput) -> Result<Prediction> {
    let (i, _) = inputs(input)?;
    let o = evaluate(&i);
    let mut p = Prediction::new("su2015");
    p.field("threads", i.threads)
        .field("thread_blocks", i.thread_blocks)
        .field("occupancy", i.occupancy)
        .field("blocks_per_smx", i.blocks_per_smx)
        .field("blocks_per_group", o.blocks_per_group)
        .field("aligned_loads_t", i.aligned_loads)
        .field("misaligned_loads_t", i.misaligned_loads)
        .field("n_ld_smx_t", o.n_ld_smx_t)
        .field("n_st_smx_t", i.stores_per_thread)
        .field("value_bytes", i.value_bytes)
        .field("chunk_z", i.chunk_z)
        .field("halo_width", i.halo_width)
        .field("n_ld_net_l2_b", o.n_ld_net_l2_b)
        .field(
            "smx_miss_formula",
            if o.uses_formula_17 { "17" } else { "8" },
        )
        .field("smx_miss_ratio_per_delta", o.smx_miss_ratio_per_delta)
        .field("smx_miss_ratio", o.smx_miss_ratio)
        .field("smx_capacity_term", o.smx_capacity_term)
        .field("smx_scheduling_term", o.smx_scheduling_term)
        .field("n_ld_l2_b", o.n_ld_l2_b)
        .field("n_st_l2_b", o.n_st_l2_b)
        .field("groups", o.groups)
        .field("width_y", o.width_y)
        .field("height_z", o.height_z)
        .field("n_ld_net_gm_g", o.n_ld_net_gm_g)
        .field("l2_miss_ratio_per_epsilon", o.l2_miss_ratio_per_epsilon)
        .field("l2_miss_ratio", o.l2_miss_ratio)
        .field("n_ld_gm_g", o.n_ld_gm_g)
        .field("n_st_gm_g", o.n_st_gm_g)
        .field("v_smx_bytes", o.v_smx_bytes)
        .field("v_l2_bytes", o.v_l2_bytes)
        .field("v_gm_bytes", o.v_gm_bytes)
        // NaN (no bandwidth in the config) becomes JSON null.
        .field("time_smx_s", o.times_s[0])
        .field("time_l2_s", o.times_s[1])
        .field("time_gm_s", o.times_s[2])
        .field("time_s", o.time_s)
        .field(
            "limiter",
            ["smx", "l2", "gm"][(0..3).find(|&k| o.times_s[k] == o.time_s).unwrap_or(2)],
        )
        .field("occupancy_efficiency", o.occupancy_efficiency)
        .field("time_adjusted_s", o.time_adjusted_s)
        .field("delta", i.delta)
        .field("epsilon", i.epsilon)
        .field("eta", i.eta);
    // V_SMX, V_L2 and V_GM split into their load and store parts, the levels the simulator counts.
    let vb = i.value_bytes;
    p.volumes.l1_load_bytes = Some(i.threads as f64 * o.n_ld_smx_t * vb);
    p.volumes.l2_load_bytes = Some(i.thread_blocks as f64 * o.n_ld_l2_b * vb);
    p.volumes.l2_store_bytes = Some(i.thread_blocks as f64 * o.n_st_l2_b * vb);
    p.volumes.dram_load_bytes = Some(o.groups as f64 * o.n_ld_gm_g * vb);
    p.volumes.dram_store_bytes = Some(o.groups as f64 * o.n_st_gm_g * vb);
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_rows_of_table_2() {
        let o = evaluate(&SuInputs::table_2());
        assert_eq!(o.n_ld_smx_t, 9.0);
        assert_eq!(o.n_ld_net_l2_b, 704.0);
        assert_eq!(format!("{:.2}", o.smx_miss_ratio_per_delta), "1.83");
        assert_eq!(o.n_st_l2_b, 128.0);
        assert_eq!((o.blocks_per_group, o.groups), (208, 631));
        assert_eq!((o.width_y, o.height_z), (106.0, 3.0));
        assert_eq!(o.n_ld_net_gm_g, 83_952.0);
        assert_eq!(format!("{:.3}", o.l2_miss_ratio_per_epsilon), "0.512");
        assert_eq!(o.n_st_gm_g, 26_624.0);
        assert!(!o.uses_formula_17);
    }

    #[test]
    fn chunk_z_one_makes_16_equal_6() {
        // (16) at chunk_z = 1 is (6): the baseline numbers do not move.
        let mut i = SuInputs::table_2();
        i.block = [64, 2, 2];
        let a = evaluate(&i);
        // (6) by hand: 256 + (64*2 + 64*2)*2 + (32*2*2)*2 = 256 + 512 + 256.
        assert_eq!(a.n_ld_net_l2_b, 1024.0);
    }

    #[test]
    fn formula_17_takes_over_when_the_active_blocks_overflow_the_storage() {
        let mut i = SuInputs::table_2();
        i.chunk_z = 16;
        i.stores_per_thread = 16.0;
        i.threads /= 16;
        i.thread_blocks /= 16;
        let o = evaluate(&i);
        // (16): 128*16 + (32*16 + 128)*2 + 32*4*16*2 = 2048 + 1280 + 4096.
        assert_eq!(o.n_ld_net_l2_b, 7424.0);
        // 16 blocks × 7424 values × 8 B = 950,272 B > 48 KB.
        assert!(o.uses_formula_17);
        let base = 2048.0 * 7424.0 / (128.0 * 6144.0);
        let sched = (16.0f64 * 4.0 / 6.0).log2();
        let expected = base * 3.0 / 18.0 * 0.01 + sched * 0.01;
        assert!((o.smx_miss_ratio - expected).abs() < 1e-12);
    }

    #[test]
    fn adjusted_time_follows_18() {
        let mut i = SuInputs::table_2();
        i.occupancy = 0.75;
        i.max_occupancy = 0.875;
        let o = evaluate(&i);
        let expected = o.time_s * (1.0 + 1.0 / o.groups as f64) / (0.75 / 0.875);
        assert!((o.time_adjusted_s - expected).abs() < 1e-15);
        // Formula (2) picks the global-memory time for 7PT-1 (Sect. 4.2).
        assert_eq!(o.time_s, o.times_s[2]);
    }
}
