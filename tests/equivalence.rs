//! One program, one answer: a kernel written with nested loops and `if`s that always hold, and
//! the same accesses unrolled by hand in the same order, give every counter of the report equal
//! (metrics, hit rates, ticks, time), whichever way the scheduler reads the program (the simple
//! form's arithmetic or the general walk). Issue 50, item 7: star7-coarse-yz nested and unrolled
//! had read 0.07% more L2 sectors and missed 0.2% fewer, as the time model behind the L2's
//! windows counted rounds of loads off the program's form.

use gputraffic::Bound;
use gputraffic::input::hw::WarpIssue;
use gputraffic::input::trace::Kernel;
use gputraffic::launch::LaunchRequest;
use gputraffic::sim::SimOptions;
use proptest::prelude::*;
use serde_json::Value;

/// The JSON report of `text` on `hw` (its default launch, with `set`), without the kernel's name.
fn report(text: &str, name: &str, hw: &str, set: &[(&str, i64)], issue: WarpIssue) -> Value {
    let k = Kernel::parse(text, name).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let req = LaunchRequest {
        set: set.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        ..Default::default()
    };
    let mut b = Bound::new(k, hw, &req).unwrap();
    b.hw.schedule.warp_issue = issue;
    let r = b.simulate(&SimOptions::default(), None).unwrap();
    let mut json = r.to_json();
    json.as_object_mut().unwrap().remove("kernel");
    json
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// The issue's case: the shipped star7-coarse-yz (two nested loops), the same with an `if` that
/// always holds around the loop body, and its 32 accesses unrolled by hand in the same order, on
/// the H200's default launch (256³, 32×4×2).
#[test]
fn star7_coarse_yz_nested_with_an_if_and_unrolled_give_one_report() {
    let files = [
        "traces/star7-coarse-yz.toml",
        "tests/data/equivalence/star7-coarse-yz-if.toml",
        "tests/data/equivalence/star7-coarse-yz-unrolled.toml",
    ];
    let texts: Vec<String> = files.iter().map(|f| read(f)).collect();
    // The copies are what they say: the if and 32 accesses in place of the loops.
    assert!(texts[1].contains("{ if = \"jy < 2\""));
    assert_eq!(texts[2].matches("load = \"in\"").count(), 28);
    assert_eq!(texts[2].matches("store = \"out\"").count(), 4);
    assert!(!texts[2].contains("loop ="));
    let reports: Vec<Value> = (texts.iter().zip(files))
        .map(|(t, f)| report(t, f, "h200", &[], WarpIssue::LoadRuns))
        .collect();
    // 256³ points, 4 a thread, 8 accesses each; the L2 windows' corrections are on.
    let sim = &reports[0]["simulation"];
    assert_eq!(sim["thread_accesses"], 8 * 256 * 256 * 256);
    assert_eq!(sim["warp_instructions"], 32 * 256 * 256 * 256 / 4 / 32);
    assert!(reports[0]["time"]["predicted_s"].as_f64().unwrap() > 0.0);
    assert_eq!(reports[0], reports[1], "nested against nested with an if");
    assert_eq!(reports[0], reports[2], "nested against unrolled");
}

/// One access of a generated program: `x + pitch * y + plane * z` plus `offset` plus, per loop
/// around it (outermost first), its variable times `coef` times a unit (1, `pitch` or `plane`).
#[derive(Debug, Clone)]
struct Access {
    store: bool,
    array: usize,
    offset: i64,
    per_loop: [(i64, usize); 4],
    ends_run: bool,
}

/// A step of a generated program.
#[derive(Debug, Clone)]
enum Step {
    Access(Access),
    /// A loop of a constant count.
    Loop(i64, Vec<Step>),
    /// An `if` that holds for every thread the guard lets in, of the kind `cond` (see
    /// [`always_true`]).
    If(usize, Vec<Step>),
}

const UNITS: [&str; 3] = ["1", "pitch", "plane"];
const ARRAYS: [&str; 2] = ["a", "b"];

/// An always-true condition of kind `kind` inside loops whose counts are `counts`: on the
/// thread, on the innermost loop's variable, or on the parameters alone (decided at binding).
fn always_true(kind: usize, counts: &[i64]) -> String {
    match (kind, counts.len()) {
        (0, _) => "x >= 0 && z < nz".into(),
        (1, _) => "threadIdx.x < blockDim.x".into(),
        (2, d) if d > 0 => format!("k{} < {}", d - 1, counts[d - 1]),
        _ => "nx > 0".into(),
    }
}

fn access_text(a: &Access, index: &str) -> String {
    let kind = if a.store { "store" } else { "load" };
    let mark = if a.ends_run && !a.store {
        ", ends_run = true"
    } else {
        ""
    };
    format!(
        "{{ {kind} = \"{}\", index = \"{index}\"{mark} }}",
        ARRAYS[a.array]
    )
}

/// The program as written: loops over `k0`, `k1`, … and `if`s.
fn nested(steps: &[Step], counts: &mut Vec<i64>, out: &mut Vec<String>) {
    for s in steps {
        match s {
            Step::Access(a) => {
                let mut index = format!("x + pitch * y + plane * z + {}", a.offset);
                for (d, (coef, unit)) in a.per_loop.iter().take(counts.len()).enumerate() {
                    index += &format!(" + {coef} * {} * k{d}", UNITS[*unit]);
                }
                out.push(access_text(a, &index));
            }
            Step::Loop(n, body) => {
                let d = counts.len();
                counts.push(*n);
                let mut inner = Vec::new();
                nested(body, counts, &mut inner);
                counts.pop();
                out.push(format!(
                    "{{ loop = \"k{d}\", count = \"{n}\", body = [{}] }}",
                    inner.join(", ")
                ));
            }
            Step::If(kind, body) => {
                let mut inner = Vec::new();
                nested(body, counts, &mut inner);
                out.push(format!(
                    "{{ if = \"{}\", body = [{}] }}",
                    always_true(*kind, counts),
                    inner.join(", ")
                ));
            }
        }
    }
}

/// The same accesses in the same order, unrolled: each loop's trips one after the other with
/// its variable's value, each `if`'s body in its place.
fn unrolled(steps: &[Step], values: &mut Vec<i64>, out: &mut Vec<String>) {
    for s in steps {
        match s {
            Step::Access(a) => {
                let mut by_unit = [a.offset, 0, 0];
                for ((coef, unit), k) in a.per_loop.iter().zip(values.iter()) {
                    by_unit[*unit] += coef * k;
                }
                let index = format!(
                    "x + pitch * y + plane * z + {} + {} * pitch + {} * plane",
                    by_unit[0], by_unit[1], by_unit[2]
                );
                out.push(access_text(a, &index));
            }
            Step::Loop(n, body) => {
                for k in 0..*n {
                    values.push(k);
                    unrolled(body, values, out);
                    values.pop();
                }
            }
            Step::If(_, body) => unrolled(body, values, out),
        }
    }
}

/// A 3-D kernel over `nx × ny × nz` points with `body`, arrays padded so that every offset stays
/// inside, warps issuing at most `loads_per_run` loads back to back (0: no limit).
fn kernel_text(body: &[String], block: [u32; 3], element_bytes: u32, loads_per_run: u32) -> String {
    let limit = if loads_per_run > 0 {
        format!("loads_per_run = {loads_per_run}\n")
    } else {
        String::new()
    };
    let arrays: String = (ARRAYS.iter())
        .map(|a| {
            format!("[[arrays]]\nname = \"{a}\"\nelement_bytes = {element_bytes}\ndims = [\"(nx + 24) * (ny + 24) * (nz + 24)\"]\n")
        })
        .collect();
    format!(
        r#"name = "equivalent"
[params]
nx = 48
ny = 6
nz = 3
{arrays}
[launch]
block = [{}, {}, {}]
grid = ["cdiv(nx, blockDim.x)", "cdiv(ny, blockDim.y)", "cdiv(nz, blockDim.z)"]
{limit}
[thread]
let = [
  "x = blockIdx.x * blockDim.x + threadIdx.x",
  "y = blockIdx.y * blockDim.y + threadIdx.y",
  "z = blockIdx.z * blockDim.z + threadIdx.z",
  "pitch = nx + 24",
  "plane = pitch * (ny + 24)",
]
guard = "x < nx && y < ny && z < nz"
lattice_updates = "nx * ny * nz"
body = [
  {}
]
"#,
        block[0],
        block[1],
        block[2],
        body.join(",\n  ")
    )
}

fn access() -> impl Strategy<Value = Step> {
    (
        any::<bool>(),
        0..2usize,
        0..4i64,
        prop::array::uniform4((0..3i64, 0..3usize)),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(store, array, offset, per_loop, ends_run)| {
            Step::Access(Access {
                store,
                array,
                offset,
                per_loop,
                ends_run,
            })
        })
}

/// Programs of up to 3 nested levels of loops (1–3 trips) and `if`s, 1–4 steps a body.
fn program() -> impl Strategy<Value = Vec<Step>> {
    let step = access().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            (1..4i64, prop::collection::vec(inner.clone(), 1..4))
                .prop_map(|(n, body)| Step::Loop(n, body)),
            (0..4usize, prop::collection::vec(inner, 1..4)).prop_map(|(k, body)| Step::If(k, body)),
        ]
    });
    prop::collection::vec(step, 1..4)
}

/// A launch: block shape, domain, element size, `loads_per_run`, warp issue.
fn launch() -> impl Strategy<Value = ([u32; 3], [i64; 3], u32, u32, bool)> {
    (
        prop::sample::select(vec![
            [32, 2, 1],
            [16, 4, 1],
            [8, 4, 2],
            [64, 1, 1],
            [32, 1, 4],
        ]),
        (8..80i64, 1..9i64, 1..4i64),
        prop::sample::select(vec![4u32, 8]),
        prop::sample::select(vec![0u32, 1, 3]),
        prop::bool::weighted(0.25),
    )
        .prop_map(|(block, (nx, ny, nz), bytes, lpr, rr)| (block, [nx, ny, nz], bytes, lpr, rr))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random small kernels written with nested loops and `if`s that always hold, against the
    /// same accesses unrolled: every counter of the report equal, on the H200 config (its L2
    /// windows, turnover and GPC chance on), with warps issuing runs of loads or one
    /// instruction at a time.
    #[test]
    fn loops_and_ifs_that_always_hold_count_as_their_unrolled_accesses(
        steps in program(),
        (block, n, bytes, loads_per_run, round_robin) in launch(),
    ) {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        nested(&steps, &mut Vec::new(), &mut a);
        unrolled(&steps, &mut Vec::new(), &mut b);
        let written = kernel_text(&a, block, bytes, loads_per_run);
        let flat = kernel_text(&b, block, bytes, loads_per_run);
        prop_assert!(!flat.contains("loop = ") && !flat.contains("if = "));
        let set = [("nx", n[0]), ("ny", n[1]), ("nz", n[2])];
        let issue = if round_robin { WarpIssue::RoundRobin } else { WarpIssue::LoadRuns };
        let r1 = report(&written, "written.toml", "h200", &set, issue);
        let r2 = report(&flat, "unrolled.toml", "h200", &set, issue);
        // Every thread in the guard issues every access.
        let points = (n[0] * n[1] * n[2]) as u64;
        let accesses = b.len() as u64;
        prop_assert_eq!(r2["simulation"]["thread_accesses"].as_u64(), Some(points * accesses));
        prop_assert_eq!(&r1, &r2, "written:\n{}\nunrolled:\n{}", written, flat);
    }
}
