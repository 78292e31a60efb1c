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
use crate::launch::{Access, Launch, SLOT_BLOCK, SLOT_LOOP, SLOT_THREAD, SLOTS};

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

/// Analyses `launch` with cache lines of `line_bytes`.
pub fn analyze(launch: &Launch, line_bytes: u32) -> Result<CodeAnalysis> {
    let src = launch.source_name.as_str();
    let eval_err =
        |e: crate::input::expr::EvalError| Error::new(src, format!("code analysis: {e}"));
    let program = &launch.program;
    let mut slots = [0i64; SLOTS];
    for d in 0..3 {
        slots[SLOT_BLOCK + d] = (launch.grid[d] / 2) as i64;
    }

    let trips = match &program.lp {
        Some(lp) => lp.count.eval(&slots).map_err(eval_err)?.max(0) as u64,
        None => 0,
    };
    let loop_body = program
        .lp
        .as_ref()
        .map(|l| l.body.as_slice())
        .unwrap_or(&[]);
    let first_store = |accesses: &[Access]| {
        accesses
            .iter()
            .find(|a| a.kind == AccessKind::Store)
            .cloned()
    };
    let own = first_store(loop_body)
        .or_else(|| first_store(&program.pre))
        .or_else(|| first_store(&program.post))
        .ok_or_else(|| Error::new(src, "code analysis: the kernel stores nothing"))?;
    let own_in_loop = first_store(loop_body).is_some();

    let at = |a: &Access, s: &[i64]| a.index.eval(s).map_err(eval_err);
    let centre = at(&own, &slots)?;
    let step = |slot: usize, by: i64| -> Result<i64> {
        let mut s = slots;
        s[slot] += by;
        Ok(at(&own, &s)? - centre)
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
    let sz = if own_in_loop && step(SLOT_LOOP, 1)? != 0 {
        step(SLOT_LOOP, 1)?
    } else {
        axis_stride(2)?
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
        .get(own.array)
        .map(|a| a.element_bytes)
        .unwrap_or(8);
    let mut accesses = Vec::new();
    let sections: [(&[Access], u64); 3] =
        [(&program.pre, 1), (loop_body, trips), (&program.post, 1)];
    for (section, count) in sections {
        for a in section {
            let idx = at(a, &slots)?;
            let layout = &launch.arrays[a.array];
            let address = layout.base as i64 + idx * layout.element_bytes as i64;
            accesses.push(AccessInfo {
                kind: a.kind,
                array: layout.name.clone(),
                offset: decompose(idx - centre),
                aligned: address.rem_euclid(line_bytes as i64) == 0,
                count,
            });
        }
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
