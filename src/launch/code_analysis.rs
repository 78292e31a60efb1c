//! The "code analysis" the papers do by hand, read off a bound launch: loads and stores per
//! thread, which loads are aligned to a cache line, each access's stencil offset (dx, dy, dz)
//! from the thread's own point, and the halo width.
//!
//! Everything is evaluated for one representative thread: `threadIdx = (0, 0, 0)` (the first
//! lane of a warp row, the one whose alignment matters) in the block at the middle of the grid
//! (an interior block, away from guarded edges), loop iteration 0. The thread's own point is the
//! first store of the same program section (for accesses before a loop, the first store of the
//! loop's first iteration). Offsets are decomposed with the index strides of that store: the
//! change of its index when `threadIdx.x`, `threadIdx.y` and the z coordinate (`threadIdx.z`, or
//! the loop variable for z-marching kernels) advance by one.

use crate::error::{Error, Result};
use crate::input::trace::AccessKind;
use crate::input::trace::MAX_LOOP_DEPTH;
use crate::launch::control::WarpCursor;
use crate::launch::{Access, Launch, SLOT_BLOCK, SLOT_LOOP, SLOT_THREAD, SLOTS, geometry};

/// One memory instruction of the representative thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessInfo {
    /// Load or store.
    pub kind: AccessKind,
    /// Array name.
    pub array: String,
    /// Offset from the thread's own point, in grid points (x, y, z).
    pub offset: [i64; 3],
    /// Whether the access of a warp row starts on a cache-line boundary.
    pub aligned: bool,
    /// How many times the thread executes it (loop trips for loop bodies).
    pub count: u64,
}

/// What the papers call code analysis, for one kernel launch.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeAnalysis {
    /// Every static access, in program order.
    pub accesses: Vec<AccessInfo>,
    /// Loads per thread whose warp row starts on a line boundary (Su et al.'s #aligned loads_T).
    pub aligned_loads: u64,
    /// Loads per thread that do not (#misaligned loads_T).
    pub misaligned_loads: u64,
    /// Stores per thread (n^st_SMX,T): the points each thread updates.
    pub stores: u64,
    /// Largest |offset| of any load in any direction: the stencil radius.
    pub radius: i64,
    /// Halo points per direction over both sides, 2 × radius (Su et al.'s halo_width).
    pub halo_width: i64,
    /// Element size of the stored array (sizeof(type)).
    pub element_bytes: u32,
    /// Index strides of the thread's own point in x, y and z (elements).
    pub strides: [i64; 3],
}

/// One static access as the representative thread runs it.
struct Run<'a> {
    access: &'a Access,
    /// The loop variables where it is evaluated (its first execution).
    iterations: [u32; MAX_LOOP_DEPTH],
    /// How often the thread runs it.
    count: u64,
}

/// The representative thread's accesses in program order. The simple form: loop iteration 0 and
/// the loop's count for loop bodies (as the papers count, whatever the loop's `while` says). Any
/// other program: walked for that thread alone; an access it never runs counts 0, evaluated
/// with its loop variables at 0.
fn representative_runs<'a>(launch: &'a Launch, slots: &[i64; SLOTS]) -> Result<Vec<Run<'a>>> {
    let program = &launch.program;
    let src = launch.source_name.as_str();
    if program.simple {
        let trips = match &program.lp {
            Some(lp) => lp
                .count
                .eval(slots)
                .map_err(|e| Error::new(src, format!("{}: code analysis: {e}", lp.at)))?
                .max(0) as u64,
            None => 0,
        };
        return Ok(program
            .accesses
            .iter()
            .map(|a| Run {
                access: a,
                iterations: [0; MAX_LOOP_DEPTH],
                count: if a.depth > 0 { trips } else { 1 },
            })
            .collect());
    }
    let block_id = geometry::block_id(
        [
            slots[SLOT_BLOCK] as u64,
            slots[SLOT_BLOCK + 1] as u64,
            slots[SLOT_BLOCK + 2] as u64,
        ],
        launch.grid,
    );
    let mut runs: Vec<Run> = program
        .accesses
        .iter()
        .map(|a| Run {
            access: a,
            iterations: [0; MAX_LOOP_DEPTH],
            count: 0,
        })
        .collect();
    let mut cursor = WarpCursor::new(launch, block_id, 0, 1);
    while let Some(step) = cursor.next()? {
        if step.mask == 0 {
            // predicated off for the representative thread: it accesses nothing
            continue;
        }
        let r = &mut runs[step.access];
        if r.count == 0 {
            r.iterations = step.iterations;
        }
        r.count += 1;
    }
    Ok(runs)
}

/// Analyses `launch` with cache lines of `line_bytes`.
pub fn analyze(launch: &Launch, line_bytes: u32) -> Result<CodeAnalysis> {
    let src = launch.source_name.as_str();

    let mut slots = [0i64; SLOTS];
    for d in 0..3 {
        slots[SLOT_BLOCK + d] = (launch.grid[d] / 2) as i64;
    }

    let runs = representative_runs(launch, &slots)?;
    let first_store = |in_loop: bool| {
        runs.iter()
            .find(|r| r.access.kind == AccessKind::Store && (r.access.depth > 0) == in_loop)
    };
    let own = first_store(true)
        .or_else(|| first_store(false))
        .ok_or_else(|| Error::new(src, "code analysis: the kernel stores nothing"))?;
    let own_loop_slot = own.access.depth.checked_sub(1).map(|d| SLOT_LOOP + d);
    let with_loops = |iterations: &[u32; MAX_LOOP_DEPTH]| {
        let mut s = slots;
        for (d, &k) in iterations.iter().enumerate() {
            s[SLOT_LOOP + d] = k as i64;
        }
        s
    };
    let own_slots = with_loops(&own.iterations);
    let at = |a: &Access, s: &[i64]| {
        (a.index.eval(s)).map_err(|e| Error::new(src, format!("{}: code analysis: {e}", a.at)))
    };
    let centre = at(own.access, &own_slots)?;
    let step = |slot: usize, by: i64| -> Result<i64> {
        let mut s = own_slots;
        s[slot] += by;
        Ok(at(own.access, &s)? - centre)
    };
    // A unit step along an axis: the thread index where the block has extent there, else the
    // next block divided by the block extent (blockDim 1 along that axis).
    let axis_stride = |d: usize| -> Result<i64> {
        if launch.block[d] > 1 {
            step(SLOT_THREAD + d, 1)
        } else {
            step(SLOT_BLOCK + d, 1)
        }
    };
    let sx = axis_stride(0)?;
    let sy = axis_stride(1)?;
    let sz = match own_loop_slot {
        Some(slot) if step(slot, 1)? != 0 => step(slot, 1)?,
        _ => axis_stride(2)?,
    };
    if sx == 0 {
        return Err(Error::new(
            src,
            "code analysis: the stored index does not move with x",
        ));
    }

    let decompose = |delta: i64| -> [i64; 3] {
        let round_div = |a: i64, b: i64| {
            if b == 0 {
                0
            } else {
                (a as f64 / b as f64).round() as i64
            }
        };
        let dz = if sz.abs() > sy.abs() {
            round_div(delta, sz)
        } else {
            0
        };
        let r = delta - dz * sz;
        let dy = if sy.abs() > sx.abs() {
            round_div(r, sy)
        } else {
            0
        };
        let dx = round_div(r - dy * sy, sx);
        [dx, dy, dz]
    };

    let element_bytes = launch
        .arrays
        .get(own.access.array)
        .map(|a| a.element_bytes)
        .unwrap_or(8);
    let mut accesses = Vec::new();
    for r in runs.iter().filter(|r| r.access.kind.is_global()) {
        let a = r.access;
        let idx = at(a, &with_loops(&r.iterations))?;
        let layout = &launch.arrays[a.array];
        let address = layout.base as i64 + idx * layout.element_bytes as i64;
        accesses.push(AccessInfo {
            kind: a.kind,
            array: layout.name.clone(),
            offset: decompose(idx - centre),
            aligned: address.rem_euclid(line_bytes as i64) == 0,
            count: r.count,
        });
    }

    let loads = || accesses.iter().filter(|a| a.kind == AccessKind::Load);
    let aligned_loads = loads().filter(|a| a.aligned).map(|a| a.count).sum();
    let misaligned_loads = loads().filter(|a| !a.aligned).map(|a| a.count).sum();
    let stores = accesses
        .iter()
        .filter(|a| a.kind == AccessKind::Store)
        .map(|a| a.count)
        .sum();
    let radius = loads()
        .flat_map(|a| a.offset.map(i64::abs))
        .max()
        .unwrap_or(0);
    Ok(CodeAnalysis {
        accesses,
        aligned_loads,
        misaligned_loads,
        stores,
        radius,
        halo_width: 2 * radius,
        element_bytes,
        strides: [sx, sy, sz],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::hw::HwConfig;
    use crate::launch::LaunchRequest;

    fn analysis(kernel: &str, set: &[(&str, i64)]) -> CodeAnalysis {
        let k = crate::input::trace::load(kernel).unwrap();
        let hw = HwConfig::load("k20").unwrap();
        let req = LaunchRequest {
            set: set.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
            ..Default::default()
        };
        let l = Launch::new(&k, &hw, &req).unwrap();
        analyze(&l, 128).unwrap()
    }

    #[test]
    fn su_7pt_baseline_has_five_aligned_and_two_misaligned_loads() {
        // Su et al. Sect. 3.1: u[i,j,k], u[i,j±1,k], u[i,j,k±1] aligned; u[i±1,j,k] not.
        let a = analysis("su-7pt-1", &[]);
        assert_eq!((a.aligned_loads, a.misaligned_loads, a.stores), (5, 2, 1));
        assert_eq!((a.radius, a.halo_width), (1, 2));
        let offsets: Vec<[i64; 3]> = a.accesses.iter().map(|x| x.offset).collect();
        assert_eq!(
            offsets,
            vec![
                [0, 0, 0],
                [-1, 0, 0],
                [1, 0, 0],
                [0, -1, 0],
                [0, 1, 0],
                [0, 0, -1],
                [0, 0, 1],
                [0, 0, 0]
            ]
        );
        // pitch = 16 * cdiv(258, 16) = 272; plane = 272 * 258.
        assert_eq!(a.strides, [1, 272, 272 * 258]);
    }

    #[test]
    fn su_7pt_zblock_counts_follow_section_3_5() {
        // Sect. 3.5: #aligned = 3 chunk_z + 2, #misaligned = 2 chunk_z.
        for cz in [1, 4, 16] {
            let a = analysis("su-7pt-1-zblock", &[("chunk_z", cz)]);
            assert_eq!(a.aligned_loads, 3 * cz as u64 + 2, "chunk_z {cz}");
            assert_eq!(a.misaligned_loads, 2 * cz as u64, "chunk_z {cz}");
            assert_eq!(a.stores, cz as u64);
            assert_eq!(a.halo_width, 2);
        }
    }

    #[test]
    fn star4_has_radius_four() {
        let a = analysis("star4", &[]);
        assert_eq!(a.radius, 4);
        assert_eq!(a.aligned_loads + a.misaligned_loads, 25);
        assert_eq!(a.stores, 1);
        // x offsets ±1..±4 are the misaligned ones (the centre is 4 points into a padded row).
        assert!(a.accesses.iter().any(|x| x.offset == [0, 0, -4]));
        assert!(a.accesses.iter().any(|x| x.offset == [3, 0, 0]));
    }
}
