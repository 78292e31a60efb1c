//! A per-dimension index list (`index = ["i", "j", "k"]`) means exactly the x-fastest linear
//! index `i + D0*(j + D1*k)`: random kernels of 1–4 dimensions over padded arrays, written both
//! ways, give identical counts. And each coordinate stays within its own dimension: one beyond
//! the pad is an error naming the step's line and column, the array, the dimension, the value
//! and a thread, though linearised it would land inside the array (in the previous row).

use gputraffic::Bound;
use gputraffic::input::trace::Kernel;
use gputraffic::launch::LaunchRequest;
use gputraffic::sim::SimOptions;
use proptest::prelude::*;

/// One kernel: a thread per interior point of a `sizes` grid inside arrays padded by `pads`,
/// loading the point and its neighbours at `offsets` and storing the point; the index written as
/// a list or as the linearised expression.
fn kernel_text(sizes: &[i64], pads: &[i64], offsets: &[Vec<i64>], as_list: bool) -> String {
    let d = sizes.len();
    let dims: Vec<String> = (0..d).map(|k| format!("\"n{k} + 2*p{k}\"")).collect();
    let mut params = String::new();
    for k in 0..d {
        params += &format!("n{k} = {}\np{k} = {}\n", sizes[k], pads[k]);
    }
    let total: String = (0..d)
        .map(|k| format!("n{k}"))
        .collect::<Vec<_>>()
        .join(" * ");
    // Coordinates of thread t, dimension 0 fastest: i_k = (t / (n0*...*n_{k-1})) % n_k + p_k.
    let mut lets = vec!["t = blockIdx.x * blockDim.x + threadIdx.x".to_string()];
    for k in 0..d {
        let stride: String = (0..k).map(|j| format!(" / n{j}")).collect();
        lets.push(format!("i{k} = (t{stride}) % n{k} + p{k}"));
    }
    let index = |off: &[i64]| -> String {
        let coord = |k: usize| format!("i{k} + ({})", off[k]);
        if as_list {
            let parts: Vec<String> = (0..d).map(|k| format!("\"{}\"", coord(k))).collect();
            format!("[{}]", parts.join(", "))
        } else {
            let mut text = format!("({})", coord(d - 1));
            for k in (0..d - 1).rev() {
                text = format!("({}) + (n{k} + 2*p{k}) * ({text})", coord(k));
            }
            format!("\"{text}\"")
        }
    };
    let mut body = String::new();
    for off in offsets {
        body += &format!("  {{ load = \"a\", index = {} }},\n", index(off));
    }
    body += &format!("  {{ store = \"b\", index = {} }},\n", index(&vec![0; d]));
    let lets: Vec<String> = lets.iter().map(|l| format!("  \"{l}\",")).collect();
    format!(
        "name = \"list-index\"\n\n[params]\n{params}\n\
         [[arrays]]\nname = \"a\"\nelement_bytes = 8\ndims = [{dims}]\n\n\
         [[arrays]]\nname = \"b\"\nelement_bytes = 8\ndims = [{dims}]\n\n\
         [launch]\nblock = [64, 1, 1]\ngrid = [\"cdiv({total}, blockDim.x)\", \"1\", \"1\"]\n\n\
         [thread]\nlet = [\n{lets}\n]\nguard = \"t < {total}\"\nlattice_updates = \"{total}\"\n\
         body = [\n{body}]\n",
        dims = dims.join(", "),
        lets = lets.join("\n"),
    )
}

fn simulated(text: &str, opts: &SimOptions) -> gputraffic::Result<gputraffic::sim::Counts> {
    let kernel = Kernel::parse(text, "list-index.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
    let bound = Bound::new(kernel, "h200", &LaunchRequest::default())?;
    gputraffic::sim::simulate(&bound.launch, &bound.hw, opts)
}

fn counts(text: &str) -> gputraffic::sim::Counts {
    simulated(text, &SimOptions::default()).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// The error simulating `text` gives, the same whether warps are coalesced from the launch's
/// line patterns or lane by lane.
fn error(text: &str) -> String {
    let e = simulated(text, &SimOptions::default())
        .expect_err(text)
        .to_string();
    let lane_by_lane = SimOptions {
        lane_by_lane: true,
        ..SimOptions::default()
    };
    assert_eq!(
        simulated(text, &lane_by_lane).expect_err(text).to_string(),
        e
    );
    e
}

/// "line L, column C" of the step of `text` holding the first `marker`: where the `{` at or
/// before it is.
fn step_position(text: &str, marker: &str) -> String {
    let (n, line) = (text.lines().enumerate())
        .find(|(_, l)| l.contains(marker))
        .unwrap_or_else(|| panic!("no '{marker}' in\n{text}"));
    let column = line[..=line.find(marker).unwrap()].rfind('{').unwrap() + 1;
    format!("line {}, column {column}", n + 1)
}

/// Sizes, pads and neighbour offsets (within the pads) of a kernel of 1–4 dimensions.
fn case() -> impl Strategy<Value = (Vec<i64>, Vec<i64>, Vec<Vec<i64>>)> {
    (1usize..=4).prop_flat_map(|d| {
        let sizes = prop::collection::vec(2i64..=12, d);
        let pads = prop::collection::vec(0i64..=3, d);
        (sizes, pads).prop_flat_map(move |(sizes, pads)| {
            let offset = pads.iter().map(|&p| -p..=p).collect::<Vec<_>>();
            let offsets = prop::collection::vec(offset, 1..=4);
            (Just(sizes), Just(pads.clone()), offsets)
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn a_list_index_counts_as_its_linear_index((sizes, pads, offsets) in case()) {
        let list = counts(&kernel_text(&sizes, &pads, &offsets, true));
        let linear = counts(&kernel_text(&sizes, &pads, &offsets, false));
        prop_assert_eq!(list, linear);
    }

    /// One neighbour a point beyond the pad in one dimension (below or above): the list form is
    /// an error naming that dimension and the first value outside it (-1 below, the extent
    /// above), whether or not the linearised index stays inside the array; the linear form of
    /// the same kernel fails only where the linear index leaves the array.
    #[test]
    fn a_coordinate_beyond_the_pad_is_an_error_naming_its_dimension(
        (sizes, pads, offsets) in case().prop_filter("two or more dimensions", |c| c.0.len() >= 2),
        dim_pick in 0usize..4,
        above in any::<bool>(),
    ) {
        let dim = dim_pick % sizes.len();
        let mut beyond = vec![0; sizes.len()];
        beyond[dim] = if above { pads[dim] + 1 } else { -pads[dim] - 1 };
        let mut offsets = offsets;
        offsets.push(beyond.clone());
        let text = kernel_text(&sizes, &pads, &offsets, true);
        let e = error(&text);
        let extent = sizes[dim] + 2 * pads[dim];
        let value = if above { extent } else { -1 };
        let names = ["1 (x)", "2 (y)", "3 (z)", "4"];
        let coordinate = format!("i{dim} + ({})", beyond[dim]);
        let expected = format!(
            "list-index.toml: {}: a load of array 'a' is outside its dimension {}: \"{coordinate}\" = {value}, not in 0..={}, for thread (",
            step_position(&text, &coordinate),
            names[dim],
            extent - 1
        );
        prop_assert!(e.starts_with(&expected), "{e}\nexpected {expected}");
    }
}

/// A one-warp kernel over arrays `a` (8 × 4 doubles) and `h` (8 × 3 ints), a thread per point
/// of 8 × 4 (x = threadIdx.x, y = threadIdx.y), running `body`.
fn small_kernel(body: &str) -> String {
    format!(
        "name = \"small\"\n\n[[arrays]]\nname = \"a\"\nelement_bytes = 8\ndims = [\"8\", \"4\"]\n\n\
         [[arrays]]\nname = \"h\"\nelement_bytes = 4\ndims = [\"8\", \"3\"]\n\n\
         [launch]\nblock = [8, 4, 1]\ngrid = [\"1\", \"1\", \"1\"]\n\n\
         [thread]\nlet = [\"x = threadIdx.x\", \"y = threadIdx.y\"]\nlattice_updates = \"32\"\n\
         body = [\n{body}\n]\n"
    )
}

/// Loads, stores and atomics, straight, in loops and in `if`s, are checked per dimension; the
/// thread named is the first active lane outside, with its loop iteration.
#[test]
fn every_kind_of_access_is_checked_per_dimension_where_it_stands() {
    let cases = [
        // Inside an if: only thread (0, 2) runs it, and x - 1 = -1 there.
        (
            r#"  { if = "x == 0 && y == 2", body = [{ load = "a", index = ["x - 1", "y"] }] },"#,
            r#"{ load"#,
            r#"a load of array 'a' is outside its dimension 1 (x): "x - 1" = -1, not in 0..=7, for thread (0, 2, 0) of block (0, 0, 0)"#,
        ),
        // In a loop: y + k first leaves 0..=3 at k = 1, for the row y = 3 (lanes 24..31).
        (
            r#"  { loop = "k", count = "3", body = [{ store = "a", index = ["x", "y + k"] }] },"#,
            r#"{ store"#,
            r#"a store of array 'a' is outside its dimension 2 (y): "y + k" = 4, not in 0..=3, for thread (0, 3, 0) of block (0, 0, 0) in loop iteration 1"#,
        ),
        // An atomic on the 8 × 3 array: the row y = 3 is beyond it.
        (
            r#"  { atomic = "h", index = ["x", "y"] },"#,
            r#"{ atomic"#,
            r#"an atomic of array 'h' is outside its dimension 2 (y): "y" = 3, not in 0..=2, for thread (0, 3, 0) of block (0, 0, 0)"#,
        ),
        // Not affine (the per-lane interpreter): x * x - 1 = -1 at x = 0.
        (
            r#"  { load = "a", index = ["x * x - 1", "y"] },"#,
            r#"{ load"#,
            r#"a load of array 'a' is outside its dimension 1 (x): "x * x - 1" = -1, not in 0..=7, for thread (0, 0, 0) of block (0, 0, 0)"#,
        ),
        // A thread coefficient of 2^62: the lanes' parts overflow at x = 2, so each lane is
        // evaluated exactly; x = 1 is the first lane outside.
        (
            r#"  { load = "a", index = ["x * 4611686018427387904", "y"] },"#,
            r#"{ load"#,
            r#"a load of array 'a' is outside its dimension 1 (x): "x * 4611686018427387904" = 4611686018427387904, not in 0..=7, for thread (1, 0, 0) of block (0, 0, 0)"#,
        ),
        // Nested: an if in a loop in a loop; iteration (1, 2) of thread (7, 1) only.
        (
            r#"  { loop = "i", count = "2", body = [{ loop = "j", count = "3", body = [
    { if = "x == 7 && y == 1 && i == 1", body = [{ load = "a", index = ["x + j - 1", "y"] }] },
  ] }] },"#,
            r#"{ load"#,
            r#"a load of array 'a' is outside its dimension 1 (x): "x + j - 1" = 8, not in 0..=7, for thread (7, 1, 0) of block (0, 0, 0) in loop iterations (1, 2)"#,
        ),
    ];
    for (body, marker, problem) in cases {
        let text = small_kernel(body);
        let expected = format!(
            "list-index.toml: {}: {problem}",
            step_position(&text, marker)
        );
        assert_eq!(error(&text), expected, "{body}");
    }
}

/// No false alarms: coordinates that reach exactly 0 and the extent - 1, and threads beyond the
/// array that the guard, an `if` or a loop's count keeps out, are accepted, and count as the
/// same kernel written with linear indices.
#[test]
fn coordinates_at_the_edges_and_masked_threads_are_accepted() {
    let list = small_kernel(
        r#"  { load = "a", index = ["7 - x", "3 - y"] },
  { if = "y < 3", body = [{ atomic = "h", index = ["x", "y"] }] },
  { loop = "k", count = "4 - y", body = [{ store = "a", index = ["x", "y + k"] }] },"#,
    );
    let linear = small_kernel(
        r#"  { load = "a", index = "(7 - x) + 8 * (3 - y)" },
  { if = "y < 3", body = [{ atomic = "h", index = "x + 8 * y" }] },
  { loop = "k", count = "4 - y", body = [{ store = "a", index = "x + 8 * (y + k)" }] },"#,
    );
    let c = counts(&list);
    assert_eq!(c, counts(&linear));
    // 32 lanes load 8 × 4 doubles: 256 B = 8 sectors; 24 lanes of atomics.
    assert_eq!(c.l1.load_sectors, 8);
    assert_eq!(c.l1.atomic_requests, 1);
}

/// The case of the bug report: a 64³ copy written with a 3-D list reads the whole array from
/// DRAM exactly once, 64³ doubles = 2 MiB = 65,536 sectors (the bug read 2 % of that).
#[test]
fn a_3d_list_index_reads_the_whole_array_once() {
    let text = kernel_text(&[64, 64, 64], &[0, 0, 0], &[vec![0, 0, 0]], true);
    let c = counts(&text);
    // and the launch's own 76 on the h200 (the trace gives no code)
    assert_eq!(c.dram.read_sectors, 64 * 64 * 64 * 8 / 32 + 76);
    assert_eq!(
        c,
        counts(&kernel_text(
            &[64, 64, 64],
            &[0, 0, 0],
            &[vec![0, 0, 0]],
            false
        ))
    );
}
