//! A per-dimension index list (`index = ["i", "j", "k"]`) means exactly the x-fastest linear
//! index `i + D0*(j + D1*k)`: random kernels of 1–4 dimensions over padded arrays, written both
//! ways, give identical counts.

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

fn counts(text: &str) -> gputraffic::sim::Counts {
    let kernel = Kernel::parse(text, "list-index.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
    let bound = Bound::new(kernel, "h200", &LaunchRequest::default()).unwrap();
    gputraffic::sim::simulate(&bound.launch, &bound.hw, &SimOptions::default()).unwrap()
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
}

/// The case of the bug report: a 64³ copy written with a 3-D list reads the whole array from
/// DRAM exactly once, 64³ doubles = 2 MiB = 65,536 sectors (the bug read 2 % of that).
#[test]
fn a_3d_list_index_reads_the_whole_array_once() {
    let text = kernel_text(&[64, 64, 64], &[0, 0, 0], &[vec![0, 0, 0]], true);
    let c = counts(&text);
    assert_eq!(c.dram.read_sectors, 64 * 64 * 64 * 8 / 32);
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
