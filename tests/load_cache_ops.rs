//! Global loads by their cache operator on the H200 (`validation/load_cache_ops.cu`, counters in
//! tests/data/h200/load_cache_ops/): plain, `__ldg` (`.nc`), `.ca` and `.cs` loads look the L1
//! up and hit where it holds their sectors; `.cg`, `.lu`, `.cv` and volatile loads never do
//! (every sector a lookup miss, sent to the L2), which a trace says with `bypass_l1 = true` and
//! the lifter reads off the PTX. Each launch reads `a[i]` and `a[i + 1]` of floats.

use gputraffic::Bound;
use gputraffic::analysis::measured;
use gputraffic::input::trace::Kernel;
use gputraffic::launch::LaunchRequest;
use gputraffic::metrics;
use gputraffic::sim::SimOptions;
use std::path::Path;

mod common;

const PAIR: &str = r#"
name = "pair"
params = { n = 16777216 }
[[arrays]]
name = "a"
element_bytes = 4
dims = ["n + 64"]
[[arrays]]
name = "b"
element_bytes = 4
dims = ["n"]
[launch]
block = [256, 1, 1]
grid = ["cdiv(n, blockDim.x)", "1", "1"]
[thread]
let = ["i = blockIdx.x * blockDim.x + threadIdx.x"]
guard = "i < n"
lattice_updates = "n"
body = [
  { load = "a", index = "i" },
  { load = "a", index = "i + 1", ends_run = true },
  { store = "b", index = "i" },
]
"#;

#[test]
fn loads_of_gpu_or_system_scope_never_hit_in_the_l1_and_the_others_do() {
    let dir = "tests/data/h200/load_cache_ops";
    let m = measured::ncu_counters(Path::new(&format!("{dir}/ncu.csv"))).unwrap();
    let lines = common::launch_lines(&format!("{dir}/launches.txt"));
    assert_eq!(lines.len(), m.len());
    let mut checked = 0;
    for (line, measured) in lines.iter().zip(&m) {
        let bypass = match line[0].as_str() {
            "plain" | "weak" | "ldg" | "ca" | "cs" => false,
            "cg" | "lu" | "cv" | "volatile" => true,
            // the two-load kernels that wait between their loads: not this trace
            _ => continue,
        };
        let text = if bypass {
            PAIR.replace(
                "{ load = \"a\", index = \"i\" }",
                "{ load = \"a\", index = \"i\", bypass_l1 = true }",
            )
            .replace("ends_run = true }", "ends_run = true, bypass_l1 = true }")
        } else {
            PAIR.to_string()
        };
        let kernel = Kernel::parse(&text, "pair.toml").unwrap();
        let block: u32 = line[2].parse().unwrap();
        let req = LaunchRequest {
            block: Some([block, 1, 1]),
            set: [("n".to_string(), line[1].parse().unwrap())].into(),
            ..Default::default()
        };
        let b = Bound::new(kernel, "h200", &req).unwrap();
        let c = gputraffic::sim::simulate(&b.launch, &b.hw, &SimOptions::default()).unwrap();
        let sectors = measured[metrics::L1_LD_SECTORS];
        let misses = measured[metrics::L1_LD_MISS];
        assert_eq!(c.l1.load_sectors as f64, sectors, "{line:?}");
        if bypass {
            // every sector a lookup miss, on the GPU and here
            assert_eq!(misses, sectors, "{line:?}");
            assert_eq!(c.l1.load_miss_sectors, c.l1.load_sectors, "{line:?}");
        } else {
            // about half hit on the GPU (2.56 of 4.72 M sectors), and here within 3 %
            assert!(misses < 0.5 * sectors, "{line:?}");
            let got = c.l1.load_miss_sectors as f64;
            assert!(
                (got / misses - 1.0).abs() < 0.03,
                "{line:?}: {got} against {misses}"
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 11);
}

#[test]
fn bypass_l1_marks_a_global_load_and_nothing_else() {
    let err = |from: &str, to: &str| {
        Kernel::parse(&PAIR.replacen(from, to, 1), "pair.toml")
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err(
            "{ store = \"b\", index = \"i\" }",
            "{ store = \"b\", index = \"i\", bypass_l1 = true }"
        ),
        "pair.toml: line 22, column 43: bypass_l1 marks a load of global memory (stores, atomics and shared accesses never look the L1 up)"
    );
    assert!(
        err(
            "{ load = \"a\", index = \"i\" }",
            "{ shuffles = 1, bypass_l1 = true }"
        )
        .contains("a shuffles step takes only shuffles = N")
    );
    // a loop does not take it either (it was accepted and ignored before)
    assert!(
        err(
            "{ store = \"b\", index = \"i\" }",
            "{ loop = \"k\", count = \"2\", bypass_l1 = true, body = [{ store = \"b\", index = \"i\" }] }"
        )
        .contains("a loop takes loop, count, while, let and body")
    );
}
