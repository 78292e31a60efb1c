//! `gputraffic sweep`: the same file on 1 and 2 threads, after a kill and `--resume`, after a torn
//! last line; derived cache quantities checked by hand; bad input.

mod common;
use common::{gputraffic, scratch};
use gputraffic::input::table::Table;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// 16 small configurations: 4 block shapes × 4 domains of star1.
const SMALL: &[&str] = &[
    "sweep",
    "--kernel",
    "star1",
    "--hw",
    "h200",
    "--blocks",
    "32x4x1,64x2x1,16x8x1,8x16x1",
    "--domains",
    "64x64x32,128x32x32,32x128x32,64x64x64",
    "--models",
    "su2015,ernst2023",
];

fn sweep_to(out: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut args: Vec<&str> = SMALL.to_vec();
    let o = out.to_str().unwrap();
    args.extend(["--out", o]);
    args.extend(extra);
    gputraffic(&args)
}

fn data_rows(text: &str) -> usize {
    text.lines().count().saturating_sub(1)
}

#[test]
fn one_and_two_threads_give_identical_files() {
    let dir = scratch("sweep-threads");
    for ext in ["csv", "jsonl"] {
        let one = dir.join(format!("one.{ext}"));
        let two = dir.join(format!("two.{ext}"));
        let (c1, o1, e1) = sweep_to(&one, &["--threads", "1"]);
        assert_eq!(c1, 0, "{e1}");
        assert!(o1.is_empty());
        let (c2, _, e2) = sweep_to(&two, &["--threads", "2"]);
        assert_eq!(c2, 0, "{e2}");
        let a = std::fs::read_to_string(&one).unwrap();
        let b = std::fs::read_to_string(&two).unwrap();
        assert_eq!(a, b, "{ext}");
        let t = Table::load(&one).unwrap();
        assert_eq!(t.rows.len(), 16);
        // In configuration order, the block varying fastest.
        let configs = t.numbers("config").unwrap();
        assert!(
            configs
                .iter()
                .enumerate()
                .all(|(i, c)| *c == Some(i as f64))
        );
        assert_eq!(
            t.text("param_nx").unwrap()[..5],
            ["64", "64", "64", "64", "128"]
        );
        assert_eq!(t.block_shapes().unwrap()[1], [64, 2, 1]);
    }
}

#[test]
fn killed_sweep_resumes_to_the_same_file() {
    let dir = scratch("sweep-kill");
    let whole = dir.join("whole.csv");
    let (code, _, err) = sweep_to(&whole, &[]);
    assert_eq!(code, 0, "{err}");
    let expected = std::fs::read_to_string(&whole).unwrap();
    assert_eq!(data_rows(&expected), 16);

    // Kill a real run once two rows are on disk.
    let cut = dir.join("cut.csv");
    let mut args: Vec<&str> = SMALL.to_vec();
    args.extend(["--out", cut.to_str().unwrap(), "--threads", "2"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_gputraffic"))
        .args(&args)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        let rows = std::fs::read_to_string(&cut).map_or(0, |t| data_rows(&t));
        if rows >= 2 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no rows appeared"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let partial = std::fs::read_to_string(&cut).unwrap();
    assert!(
        data_rows(&partial) < 16,
        "the sweep finished before it could be killed"
    );
    assert_ne!(partial, expected);

    let (code, _, err) = sweep_to(&cut, &["--resume"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("kept from before"), "{err}");
    assert_eq!(std::fs::read_to_string(&cut).unwrap(), expected);
}

#[test]
fn torn_last_line_and_rows_out_of_order_resume_to_the_same_file() {
    let dir = scratch("sweep-torn");
    let whole = dir.join("whole.csv");
    assert_eq!(sweep_to(&whole, &[]).0, 0);
    let expected = std::fs::read_to_string(&whole).unwrap();
    let lines: Vec<&str> = expected.lines().collect();
    // Rows finish in any order; the last one was cut mid-write.
    let torn = format!(
        "{}\n{}\n{}\n{}\n{}",
        lines[0],
        lines[6],
        lines[2],
        lines[11],
        &lines[4][..lines[4].len() / 2]
    );
    let path = dir.join("torn.csv");
    std::fs::write(&path, torn).unwrap();
    let (code, _, err) = sweep_to(&path, &["--resume"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("16 configurations (3 kept from before, 13 simulated)"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
}

#[test]
fn resume_refuses_another_sweeps_file_and_out_is_never_silently_replaced() {
    let dir = scratch("sweep-other");
    let path = dir.join("s.csv");
    assert_eq!(sweep_to(&path, &[]).0, 0);
    let before = std::fs::read_to_string(&path).unwrap();
    // Without --resume or --force the file stays.
    let (code, out, err) = sweep_to(&path, &[]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("s.csv") && err.contains("--resume"), "{err}");
    // Another domain list: the rows are not this sweep's.
    let o = path.to_str().unwrap();
    let (code, _, err) = gputraffic(&[
        "sweep",
        "--kernel",
        "star1",
        "--blocks",
        "32x4x1,64x2x1,16x8x1,8x16x1",
        "--domains",
        "64x64x16,128x32x32,32x128x32,64x64x64",
        "--models",
        "su2015,ernst2023",
        "--out",
        o,
        "--resume",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("different sweep"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
}

#[test]
fn derived_volumes_of_an_aligned_copy_by_hand() {
    // copy without padding (P = 0), 32 x 1 x 1 blocks: every warp loads 256 aligned bytes (2 lines,
    // 8 sectors) and stores 256. nx = 256 gives 8 blocks per row; ny = 528 makes an xy layer of
    // blocks exactly one wave (132 SMs × 32 resident blocks = 4224).
    let dir = scratch("sweep-copy");
    let path = dir.join("copy.csv");
    let o = path.to_str().unwrap();
    let (code, _, err) = gputraffic(&[
        "sweep",
        "--kernel",
        "copy",
        "--hw",
        "h200",
        "--blocks",
        "32x1x1",
        "--domains",
        "256x528x8",
        "--set",
        "P=0",
        "--l2-scale",
        "1,0.5",
        "--models",
        "none",
        "--out",
        o,
    ]);
    assert_eq!(code, 0, "{err}");
    let t = Table::load(&path).unwrap();
    assert_eq!(t.rows.len(), 2);
    let col = |n: &str| t.numbers(n).unwrap();
    let blocks = 8.0 * 528.0 * 8.0;
    assert_eq!(col("blocks_per_sm")[0], Some(32.0));
    // L1: no reuse at all. V_comp = V_up = 8 sectors per block; V_red = 0 leaves R_hit undefined.
    assert_eq!(col("l1_v_up_bytes")[0], Some(blocks * 256.0));
    assert_eq!(col("l1_v_comp_bytes")[0], Some(blocks * 256.0));
    assert_eq!(col("l1_v_red_bytes")[0], Some(0.0));
    assert_eq!(col("l1_redundant_hit_rate")[0], None);
    // V_alloc(L1) = 32 resident blocks × 2 lines × 128 B.
    assert_eq!(col("l1_v_alloc_bytes")[0], Some(8192.0));
    let l1_cache = col("l1_v_cache_bytes")[0].unwrap();
    assert_eq!(col("l1_oversubscription")[0], Some(8192.0 / l1_cache));
    // V_alloc(L2) = 4224 blocks × (2 load + 2 store lines) × 128 B.
    assert_eq!(col("l2_v_alloc_bytes")[0], Some(4224.0 * 4.0 * 128.0));
    // V_cache(L2) = one of the two partitions; halved by --l2-scale 0.5.
    let l2_cache = col("l2_v_cache_bytes");
    assert_eq!(l2_cache[0].unwrap(), 2.0 * l2_cache[1].unwrap());
    assert_eq!(col("l2_scale"), [Some(1.0), Some(0.5)]);
    assert_eq!(
        col("l2_oversubscription")[1],
        Some(4224.0 * 512.0 / l2_cache[1].unwrap())
    );
    // L2: V_up = the L1 misses, V_comp = everything once, V_down = DRAM reads.
    assert_eq!(col("l2_v_up_bytes")[0], Some(blocks * 256.0));
    assert_eq!(col("l2_v_comp_bytes")[0], Some(blocks * 256.0));
    assert_eq!(
        col("l2_v_down_bytes")[0],
        col("dram__sectors_read.sum")[0].map(|s| s * 32.0)
    );
}

#[test]
fn su_ratios_solve_formulas_7_and_11_for_the_simulated_volumes() {
    // Su et al.'s own kernel and GPU: the row's ratios must reproduce the simulated L2 and DRAM
    // loads through formulas (7) and (11) with the model's own n_ld_net and group counts.
    let dir = scratch("sweep-su");
    let path = dir.join("su.csv");
    let o = path.to_str().unwrap();
    let (code, _, err) = gputraffic(&[
        "sweep",
        "--kernel",
        "su-7pt-1",
        "--hw",
        "k20-rodc",
        "--blocks",
        "32x4x1,64x4x1",
        "--domains",
        "128x128x64",
        "--models",
        "none",
        "--out",
        o,
    ]);
    assert_eq!(code, 0, "{err}");
    let t = Table::load(&path).unwrap();
    for (i, block) in ["32x4x1", "64x4x1"].iter().enumerate() {
        let (code, out, err) = gputraffic(&[
            "predict",
            "--model",
            "su2015",
            "--kernel",
            "su-7pt-1",
            "--hw",
            "k20-rodc",
            "--block",
            block,
            "--domain",
            "128x128x64",
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{err}");
        let p: serde_json::Value = serde_json::from_str(&out).unwrap();
        let f = |k: &str| p[k].as_f64().unwrap();
        let cell = |n: &str| t.numbers(n).unwrap()[i].unwrap();
        let l2_loads = cell("lts__t_sectors_srcunit_tex_op_read.sum") * 32.0 / f("value_bytes");
        let smx = l2_loads / f("thread_blocks") / f("n_ld_net_l2_b") - 1.0;
        assert!((cell("su_smx_miss_ratio") - smx).abs() < 1e-12);
        let dram = cell("dram__sectors_read.sum") * 32.0 / f("value_bytes");
        let l2 = dram / f("groups") / f("n_ld_net_gm_g") - 1.0;
        assert!((cell("su_l2_miss_ratio") - l2).abs() < 1e-12);
        assert_eq!(cell("su_smx_capacity_term"), f("smx_capacity_term"));
        assert_eq!(cell("su_l2_capacity_term"), f("l2_miss_ratio_per_epsilon"));
        assert_eq!(cell("su_smx_scheduling_term"), 0.0);
    }
}

#[test]
fn bad_sweep_input_exits_2_with_one_line() {
    let dir = scratch("sweep-bad");
    let o = dir.join("x.csv");
    let o = o.to_str().unwrap();
    for (args, expected) in [
        (vec!["--blocks", "all-100"], "power of two"),
        (vec!["--blocks", "32x8"], "AxBxC"),
        (
            vec![
                "--blocks",
                "32x4x1",
                "--domains",
                "square-xy:total=100:from=16:to=8",
            ],
            "larger",
        ),
        (vec!["--blocks", "32x4x1", "--set", "nope=1,2"], "nope"),
        (vec!["--blocks", "32x4x1", "--l2-scale", "0"], "positive"),
        (
            vec!["--blocks", "32x4x1", "--hw", "h200,nosuchgpu"],
            "nosuchgpu",
        ),
        (
            vec!["--blocks", "32x4x1", "--models", "nosuchmodel"],
            "nosuchmodel",
        ),
    ] {
        let mut a = vec!["sweep", "--kernel", "star1", "--out", o];
        a.extend(args);
        let (code, out, err) = gputraffic(&a);
        assert_eq!((code, out.as_str()), (2, ""), "{a:?}: {err}");
        assert!(err.contains(expected), "{a:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!Path::new(o).exists(), "{a:?} left a file");
    }
}

/// `--domains` takes as many sizes as the kernel has of nx, ny, nz: a 2-D sweep of jacobi2d.
#[test]
fn a_two_dimensional_kernel_sweeps_two_dimensional_domains() {
    let dir = scratch("sweep-2d");
    let out = dir.join("j.csv");
    let (code, _, stderr) = gputraffic(&[
        "sweep",
        "--kernel",
        "jacobi2d",
        "--hw",
        "h100-sxm",
        "--blocks",
        "32x8x1,16x16x1",
        "--domains",
        "64x32,128x64",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let t = Table::load(&out).unwrap();
    assert_eq!(t.rows.len(), 4);
    let nx: Vec<&str> = t.text("param_nx").unwrap();
    let ny: Vec<&str> = t.text("param_ny").unwrap();
    assert_eq!(nx, vec!["64", "64", "128", "128"]);
    assert_eq!(ny, vec!["32", "32", "64", "64"]);
    // A 3-D size for a 2-D kernel says which form it takes.
    common::rejects(
        &[
            "sweep",
            "--kernel",
            "jacobi2d",
            "--hw",
            "h100-sxm",
            "--blocks",
            "32x8x1",
            "--domains",
            "64x32x8",
            "--out",
            dir.join("j3.csv").to_str().unwrap(),
        ],
        &[
            "--domains",
            "2-dimensional (it has nx, ny): give --domain NXxNY",
        ],
    );
}
