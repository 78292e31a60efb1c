//! What the warps' instruction streams add up to over a launch: instructions, turns of the
//! scheduler's round robin and rounds of loads, read off each warp's dynamic sequence of
//! instructions and nothing else.
//!
//! The scheduler's turnover pause (a mean turn), the time model's delay and the dispatcher's GPC
//! chance (rounds of loads per warp) are built on these. Since they depend only on the sequence
//! of instructions a warp issues, a program written with nested loops or `if`s that always hold
//! gets exactly the numbers of the same accesses unrolled, and the simple form's arithmetic
//! decoding exactly those of the general walk (docs/model.md, "Schedule").

use super::control::WarpCursor;
use super::geometry::{BlockWarps, WarpInfo};
use super::{Access, Launch, Program};
use crate::error::Result;
use crate::input::trace::AccessKind;
use rayon::prelude::*;

/// Totals over the warps with at least one instruction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamTotals {
    /// Warps that issue at least one instruction.
    pub active_warps: u64,
    /// Warp instructions.
    pub instructions: u64,
    /// Turns the warps take in the scheduler's round robin: a run of loads (up to the next
    /// other instruction, a load marked `ends_run`, or `loads_per_run` loads) or one other
    /// instruction; every instruction is a turn where warps do not issue runs of loads.
    pub turns: u64,
    /// Rounds of loads: the times a warp waits for loads it issued (a block barrier is not one:
    /// the time model charges the barriers a warp passes, [`Launch::barriers_per_thread`], at
    /// their own cost, `[timing] barrier_cycles`). A round closes at the first
    /// other instruction (a store, atomic, shuffle or shared access) after the warp has waited
    /// on its loads: after a load marked `ends_run`, where the program marks its waits (lifted
    /// from SASS, or written so), and after any load where it marks none (a store then uses
    /// what was loaded). Stores between loads the warp has not waited on do not close a round,
    /// nor do marks between loads: the time model's delay was fitted on star4 and box27 with
    /// one round each.
    pub load_rounds: u64,
    /// Lane accesses: the lanes each warp instruction issues for, summed.
    pub thread_accesses: u64,
}

impl StreamTotals {
    /// The totals of `launch`, whose warps issue runs of loads when `load_runs`
    /// ([`crate::input::hw::WarpIssue::LoadRuns`]). Programs of the simple form are summed
    /// arithmetically per warp; others are walked warp by warp ([`WarpCursor`]).
    pub fn of_launch(launch: &Launch, load_runs: bool) -> Result<StreamTotals> {
        let rules = Rules::new(launch, load_runs);
        let parts = SimpleParts::new(launch, &rules);
        // A few chunks of blocks per thread, each summed in block order and stopping at its
        // first error, so that the error reported is the first in block order; a block of the
        // simple form whose warps are those of the block before it takes that block's totals.
        let chunk = (launch.total_blocks)
            .div_ceil(4 * rayon::current_num_threads() as u64)
            .max(1);
        let sums: Vec<Result<StreamTotals>> = (0..launch.total_blocks.div_ceil(chunk))
            .into_par_iter()
            .map(|c| {
                let mut sum = StreamTotals::default();
                let mut last: Option<(Vec<WarpInfo>, StreamTotals)> = None;
                let mut blocks = BlockWarps::default();
                for b in c * chunk..((c + 1) * chunk).min(launch.total_blocks) {
                    let warps = blocks.of(launch, b)?;
                    let t = match &last {
                        Some((w, t)) if w == warps => *t,
                        _ => {
                            let t = block_totals(launch, &rules, parts.as_ref(), b, warps)?;
                            if parts.is_some() {
                                last = Some((warps.to_vec(), t));
                            }
                            t
                        }
                    };
                    sum.add(&t);
                }
                Ok(sum)
            })
            .collect();
        let mut totals = StreamTotals::default();
        for t in sums {
            totals.add(&t?);
        }
        Ok(totals)
    }

    /// Mean rounds of loads per active warp, at least one.
    pub fn rounds_per_warp(&self) -> f64 {
        if self.active_warps == 0 {
            return 1.0;
        }
        (self.load_rounds as f64 / self.active_warps as f64).max(1.0)
    }

    /// Mean instructions per turn, rounded, at least one.
    pub fn mean_turn_ticks(&self) -> u32 {
        (self.instructions as f64 / self.turns.max(1) as f64)
            .round()
            .max(1.0) as u32
    }

    fn add(&mut self, o: &StreamTotals) {
        self.active_warps += o.active_warps;
        self.instructions += o.instructions;
        self.turns += o.turns;
        self.load_rounds += o.load_rounds;
        self.thread_accesses += o.thread_accesses;
    }

    /// One warp's totals from its summaries under the two rules.
    fn of_warp(
        instructions: u64,
        thread_accesses: u64,
        turns: &Stretch,
        rounds: &RoundStretch,
        rules: &Rules,
    ) -> Self {
        StreamTotals {
            active_warps: (instructions > 0) as u64,
            instructions,
            turns: turns.total(&rules.turns),
            load_rounds: rounds.total(),
            thread_accesses,
        }
    }
}

/// How the turns' stream splits into runs: a load marked `ends_run` closes its run, and every
/// other instruction is a turn of its own.
#[derive(Debug, Clone, Copy)]
struct Rule {
    /// Loads a run may hold; a longer one counts as several.
    loads_per_run: u64,
}

impl Rule {
    /// What a run of `loads` loads costs.
    fn run(&self, loads: u64) -> u64 {
        if loads == 0 {
            0
        } else {
            (loads - 1) / self.loads_per_run + 1
        }
    }
}

/// The two rules of [`StreamTotals`]: turns and rounds of loads.
#[derive(Debug, Clone, Copy)]
struct Rules {
    turns: Rule,
    rounds: RoundRule,
}

impl Rules {
    fn new(launch: &Launch, load_runs: bool) -> Rules {
        let program = &launch.program;
        let marks_waits =
            (program.accesses.iter()).any(|a| a.kind == AccessKind::Load && a.ends_run);
        Rules {
            // Without runs of loads every instruction is a turn: runs of one load.
            turns: Rule {
                loads_per_run: if load_runs {
                    launch.loads_per_run.max(1) as u64
                } else {
                    1
                },
            },
            rounds: RoundRule {
                others_wait: !marks_waits,
            },
        }
    }
}

/// How [`RoundStretch`] closes rounds.
#[derive(Debug, Clone, Copy)]
struct RoundRule {
    /// Every other instruction after a load waits for it (a program that marks none of its
    /// waits); else only one after a load marked `ends_run` does.
    others_wait: bool,
}

/// Where a warp's current round of loads stands.
const CLOSED: usize = 0;
/// Loads issued since the last round closed, none waited on yet.
const LOADING: usize = 1;
/// Loads issued, and the warp has waited on them (a load marked `ends_run`).
const WAITED: usize = 2;

/// A stretch of a stream under the round rule, summarised so that stretches compose: for each
/// state the warp may enter it in ([`CLOSED`], [`LOADING`], [`WAITED`]), the state it leaves in
/// and the rounds it closes on the way (a transducer of three states: composing is a lookup).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RoundStretch {
    by_start: [(usize, u64); 3],
}

impl RoundStretch {
    /// No instruction.
    const EMPTY: RoundStretch = RoundStretch {
        by_start: [(CLOSED, 0), (LOADING, 0), (WAITED, 0)],
    };

    /// One instruction of kind `a` under `rule`.
    fn of(a: &Access, rule: &RoundRule) -> RoundStretch {
        let by_start = match a.kind {
            AccessKind::Load if a.ends_run => [(WAITED, 0); 3],
            AccessKind::Load => [(LOADING, 0), (LOADING, 0), (WAITED, 0)],
            // A store (or atomic, shuffle, shared access) after loads the warp waited on ends
            // their round.
            _ if rule.others_wait => [(CLOSED, 0), (CLOSED, 1), (CLOSED, 1)],
            _ => [(CLOSED, 0), (LOADING, 0), (CLOSED, 1)],
        };
        RoundStretch { by_start }
    }

    /// `self` followed by `next`.
    fn then(self, next: RoundStretch) -> RoundStretch {
        let mut by_start = self.by_start;
        for (end, rounds) in by_start.iter_mut() {
            let (after, more) = next.by_start[*end];
            *end = after;
            *rounds += more;
        }
        RoundStretch { by_start }
    }

    /// `self` repeated `times` times (by squaring).
    fn repeat(self, mut times: u64) -> RoundStretch {
        let (mut out, mut power) = (RoundStretch::EMPTY, self);
        while times > 0 {
            if times & 1 == 1 {
                out = out.then(power);
            }
            power = power.then(power);
            times >>= 1;
        }
        out
    }

    /// The rounds of a whole stream: a round still open at its end closes there.
    fn total(&self) -> u64 {
        let (end, rounds) = self.by_start[CLOSED];
        rounds + (end != CLOSED) as u64
    }

    /// A sequence of accesses.
    fn of_all<'a>(accesses: impl IntoIterator<Item = &'a Access>, rule: &RoundRule) -> Self {
        (accesses.into_iter()).fold(RoundStretch::EMPTY, |s, a| {
            s.then(RoundStretch::of(a, rule))
        })
    }
}

/// A stretch of a stream, summarised so that stretches compose (a monoid): either one open run
/// of loads throughout, or a first run (closed inside the stretch), the cost of everything
/// between it and the last run, and the last run, still open at the stretch's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stretch {
    /// Loads only, no run closed: a run of this many loads, open at both ends.
    Open(u64),
    /// At least one run closed (or another instruction met).
    Split {
        /// Loads of the first run, the load that closes it included (0: the stretch starts
        /// with another instruction).
        head: u64,
        /// Cost of the runs and other instructions after the first run and before the last.
        middle: u64,
        /// Loads of the last run, open.
        tail: u64,
    },
}

impl Stretch {
    /// One instruction of kind `a`.
    fn of(a: &Access) -> Stretch {
        match a.kind {
            AccessKind::Load if a.ends_run => Stretch::Split {
                head: 1,
                middle: 0,
                tail: 0,
            },
            AccessKind::Load => Stretch::Open(1),
            _ => Stretch::Split {
                head: 0,
                middle: 1,
                tail: 0,
            },
        }
    }

    /// `self` followed by `next`.
    fn then(self, next: Stretch, rule: &Rule) -> Stretch {
        match (self, next) {
            (Stretch::Open(a), Stretch::Open(b)) => Stretch::Open(a + b),
            (Stretch::Open(a), Stretch::Split { head, middle, tail }) => Stretch::Split {
                head: a + head,
                middle,
                tail,
            },
            (Stretch::Split { head, middle, tail }, Stretch::Open(b)) => Stretch::Split {
                head,
                middle,
                tail: tail + b,
            },
            (
                Stretch::Split { head, middle, tail },
                Stretch::Split {
                    head: h2,
                    middle: m2,
                    tail: t2,
                },
            ) => Stretch::Split {
                head,
                middle: middle + rule.run(tail + h2) + m2,
                tail: t2,
            },
        }
    }

    /// `self` repeated `times` times (by squaring: loops of up to 2^24 trips).
    fn repeat(self, mut times: u64, rule: &Rule) -> Stretch {
        let mut out = Stretch::Open(0);
        let mut power = self;
        while times > 0 {
            if times & 1 == 1 {
                out = out.then(power, rule);
            }
            power = power.then(power, rule);
            times >>= 1;
        }
        out
    }

    /// The cost of a whole stream: its open runs closed at both ends.
    fn total(&self, rule: &Rule) -> u64 {
        match *self {
            Stretch::Open(n) => rule.run(n),
            Stretch::Split { head, middle, tail } => rule.run(head) + middle + rule.run(tail),
        }
    }

    /// A sequence of accesses.
    fn of_all<'a>(accesses: impl IntoIterator<Item = &'a Access>, rule: &Rule) -> Stretch {
        (accesses.into_iter()).fold(Stretch::Open(0), |s, a| s.then(Stretch::of(a), rule))
    }
}

/// The simple form's parts (before, in and after the loop) summarised under each rule.
struct SimpleParts {
    /// Under the turns' rule: before the loop, one trip of its body, after it.
    turns: [Stretch; 3],
    /// The same under the rounds' rule.
    rounds: [RoundStretch; 3],
}

impl SimpleParts {
    fn new(launch: &Launch, rules: &Rules) -> Option<SimpleParts> {
        let p = &launch.program;
        if !p.simple {
            return None;
        }
        let body: &[Access] = p.lp.as_ref().map_or(&[], |l| &l.body);
        let (turns, rounds) = (&rules.turns, &rules.rounds);
        Some(SimpleParts {
            turns: [
                Stretch::of_all(&p.pre, turns),
                Stretch::of_all(body, turns),
                Stretch::of_all(&p.post, turns),
            ],
            rounds: [
                RoundStretch::of_all(&p.pre, rounds),
                RoundStretch::of_all(body, rounds),
                RoundStretch::of_all(&p.post, rounds),
            ],
        })
    }

    /// The turns of a warp whose loop runs `trips` times.
    fn turns(&self, trips: u64, rule: &Rule) -> Stretch {
        let [pre, body, post] = self.turns;
        pre.then(body.repeat(trips, rule), rule).then(post, rule)
    }

    /// The rounds of a warp whose loop runs `trips` times.
    fn rounds(&self, trips: u64) -> RoundStretch {
        let [pre, body, post] = self.rounds;
        pre.then(body.repeat(trips)).then(post)
    }
}

/// The totals of block `b`'s warps, `warps`.
fn block_totals(
    launch: &Launch,
    rules: &Rules,
    parts: Option<&SimpleParts>,
    b: u64,
    warps: &[WarpInfo],
) -> Result<StreamTotals> {
    let mut totals = StreamTotals::default();
    for (w, info) in warps.iter().enumerate() {
        let t = match parts {
            Some(parts) => simple_warp(&launch.program, parts, rules, info),
            None => walked_warp(launch, rules, b, w as u32, info)?,
        };
        totals.add(&t);
    }
    Ok(totals)
}

/// A warp of the simple form, from its loop trips.
fn simple_warp(
    program: &Program,
    parts: &SimpleParts,
    rules: &Rules,
    info: &WarpInfo,
) -> StreamTotals {
    if info.instructions == 0 {
        return StreamTotals::default();
    }
    let trips = info.trips as u64;
    let turns = parts.turns(trips, &rules.turns);
    let rounds = parts.rounds(trips);
    let lanes = lane_accesses(program, info);
    StreamTotals::of_warp(info.instructions, lanes, &turns, &rounds, rules)
}

/// Lane accesses a warp of the simple form issues in all: every active lane in every
/// instruction outside the loop, and in the loop's body for each of its own trips.
pub fn lane_accesses(program: &Program, info: &WarpInfo) -> u64 {
    let lanes = info.mask.count_ones() as u64;
    let outside = (program.pre.len() + program.post.len()) as u64;
    let body = program.lp.as_ref().map_or(0, |l| l.body.len() as u64);
    let lane_trips = match &info.lane_trips {
        None => lanes * info.trips as u64,
        Some(t) => (0..32)
            .filter(|&l| info.mask >> l & 1 == 1)
            .map(|l| t[l].min(info.trips) as u64)
            .sum(),
    };
    lanes * outside + body * lane_trips
}

/// A warp of any other program, walked instruction by instruction.
fn walked_warp(
    launch: &Launch,
    rules: &Rules,
    block: u64,
    warp: u32,
    info: &WarpInfo,
) -> Result<StreamTotals> {
    if info.mask == 0 {
        return Ok(StreamTotals::default());
    }
    let mut cursor = WarpCursor::new(launch, block, warp, info.mask);
    let (mut turns, mut rounds) = (Stretch::Open(0), RoundStretch::EMPTY);
    let (mut instructions, mut lanes) = (0, 0);
    while let Some(step) = cursor.next()? {
        if step.mask == 0 {
            // predicated off: issued, but no lane waits on memory
            continue;
        }
        lanes += step.mask.count_ones() as u64;
        let a = &launch.program.accesses[step.access];
        turns = turns.then(Stretch::of(a), &rules.turns);
        rounds = rounds.then(RoundStretch::of(a, &rules.rounds));
        instructions += 1;
    }
    Ok(StreamTotals::of_warp(
        instructions,
        lanes,
        &turns,
        &rounds,
        rules,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::hw::HwConfig;
    use crate::input::trace::Kernel;
    use crate::launch::LaunchRequest;

    /// One warp of 32 threads running `body` (TOML steps over arrays `a` and `b`), on the H200.
    fn one_warp(body: &str, launch_extra: &str) -> Launch {
        let text = format!(
            r#"
name = "streams"
[[arrays]]
name = "a"
element_bytes = 4
dims = ["4096"]
[launch]
block = [32, 1, 1]
grid = ["1", "1", "1"]
{launch_extra}
[thread]
let = ["t = threadIdx.x", "trips = blockDim.x / 8"]
lattice_updates = "32"
body = [{body}]
"#
        );
        let k = Kernel::parse(&text, "streams.toml").unwrap();
        Launch::new(
            &k,
            &HwConfig::load("h200").unwrap(),
            &LaunchRequest::default(),
        )
        .unwrap()
    }

    fn totals(l: &Launch, load_runs: bool) -> StreamTotals {
        StreamTotals::of_launch(l, load_runs).unwrap()
    }

    /// (instructions, turns, rounds of loads) of the one warp.
    fn counted(l: &Launch, load_runs: bool) -> (u64, u64, u64) {
        let t = totals(l, load_runs);
        assert_eq!(t.active_warps, 1);
        (t.instructions, t.turns, t.load_rounds)
    }

    const L: &str = r#"{ load = "a", index = "t" }"#;
    const MARKED: &str = r#"{ load = "a", index = "t", ends_run = true }"#;
    const S: &str = r#"{ store = "a", index = "t" }"#;

    #[test]
    fn runs_of_loads_continue_across_trips_and_end_at_other_instructions() {
        // star1-zloop's shape: 2 loads, then 6 trips of 5 loads and a store. The first trip's
        // loads join the two before the loop: runs of 7, 5, 5, 5, 5, 5, each closed by a store.
        let body = format!(
            "{L}, {L}, {{ loop = \"k\", count = \"6\", body = [{L}, {L}, {L}, {L}, {L}, {S}] }}"
        );
        let l = one_warp(&body, "");
        assert!(l.program.simple);
        assert_eq!(counted(&l, true), (38, 12, 6));
        // Instruction by instruction, every instruction is a turn; the rounds stay.
        assert_eq!(counted(&l, false), (38, 38, 6));
        // 38 instructions in 12 turns: 3.17 ticks a turn.
        assert_eq!(totals(&l, true).mean_turn_ticks(), 3);
        assert_eq!(totals(&l, true).rounds_per_warp(), 6.0);
    }

    #[test]
    fn a_load_only_loop_is_one_round_cut_into_turns_by_loads_per_run_and_marks() {
        // 10 trips of one load, then a store: one run of 10 loads, one round.
        let body = format!("{{ loop = \"k\", count = \"10\", body = [{L}] }}, {S}");
        let l = one_warp(&body, "");
        assert_eq!(counted(&l, true), (11, 2, 1));
        // At most 4 loads back to back: runs of 4, 4 and 2, still one round.
        let l = one_warp(&body, "loads_per_run = 4");
        assert_eq!(counted(&l, true), (11, 4, 1));
        // A load marked `ends_run` ends the warp's run (turns) but not the round: the time
        // model's delay was fitted on star4 and box27 with one round each.
        let body = format!("{{ loop = \"k\", count = \"3\", body = [{L}, {MARKED}] }}, {S}");
        let l = one_warp(&body, "");
        assert_eq!(counted(&l, true), (7, 4, 1));
        // No load at all: no round (the time model takes at least one).
        let l = one_warp(S, "");
        assert_eq!(counted(&l, true), (1, 1, 0));
        assert_eq!(totals(&l, true).rounds_per_warp(), 1.0);
    }

    #[test]
    fn a_round_ends_where_the_warp_waits_on_its_loads_not_at_every_store_between_them() {
        // validation/streams.cu's copy_k19_smem48 in its SASS order: 8 loads, the warp waits on
        // the first (the run's last load marked), stores what it has, issues more loads between
        // stores that wait on nothing new, waits on those, then stores the rest: two rounds.
        let seq = [
            L, L, L, L, L, L, L, MARKED, S, S, L, L, L, S, S, L, S, S, L, L, L, S, L, S, L, L,
            MARKED, S, S, S,
        ];
        assert_eq!(counted(&one_warp(&seq.join(", "), ""), true), (30, 17, 2));
        // The same accesses in a trace that marks no wait: every store waits on the loads
        // before it, so each run of loads between stores is a round of its own.
        let unmarked = seq.map(|a| if a == MARKED { L } else { a });
        assert_eq!(counted(&one_warp(&unmarked.join(", "), ""), true).2, 6);
        // A loop whose trips load, wait and store: a round a trip, under either rule.
        let body = format!("{{ loop = \"k\", count = \"3\", body = [{MARKED}, {S}] }}");
        assert_eq!(counted(&one_warp(&body, ""), true).2, 3);
        let body = format!("{{ loop = \"k\", count = \"3\", body = [{L}, {S}] }}");
        assert_eq!(counted(&one_warp(&body, ""), true).2, 3);
        // Loads after the last store, waited on or not, close a round at the stream's end.
        let body = format!("{MARKED}, {S}, {L}");
        assert_eq!(counted(&one_warp(&body, ""), true).2, 2);
    }

    #[test]
    fn barriers_are_counted_apart_from_the_rounds_of_loads() {
        // A tile's phases: a run of loads, a barrier, a store; then a loop of 3 trips with a
        // barrier each: 4 barriers, and the one round of the loads (a barrier waits for the
        // block's warps, not for the memory: the time model charges it on its own).
        let body = format!(
            "{L}, {L}, {{ sync = true }}, {S}, \
             {{ loop = \"k\", count = \"3\", body = [{{ sync = true }}, {S}] }}"
        );
        let l = one_warp(&body, "");
        assert_eq!(l.barriers_per_thread, 4);
        assert_eq!(counted(&l, true).2, 1);
        // A barrier in a loop whose count depends on the thread counts one trip.
        let body = format!("{{ loop = \"k\", count = \"t\", body = [{{ sync = true }}, {S}] }}");
        assert_eq!(one_warp(&body, "").barriers_per_thread, 1);
        // One whose count is a let of the launch's constants counts every trip (a lifted loop's
        // `trips_k`, as the tiled matrix product's k loop with its two barriers has; until
        // 2026-12-04 it counted one trip: 2 barriers of its 64 at n = 1024 in 32×32 tiles).
        let body =
            format!("{{ loop = \"k\", count = \"trips\", body = [{{ sync = true }}, {S}] }}");
        assert_eq!(one_warp(&body, "").barriers_per_thread, 4);
    }

    #[test]
    fn nested_loops_and_ifs_that_hold_count_as_the_same_accesses_unrolled() {
        let point = format!("{L}, {L}, {L}, {S}");
        let nested = format!(
            "{{ loop = \"i\", count = \"2\", body = [{{ loop = \"j\", count = \"3\", body = [\
             {{ if = \"t >= 0\", body = [{point}] }}] }}] }}, {L}"
        );
        let unrolled = [point.as_str(); 6].join(", ") + ", " + L;
        let (n, u) = (one_warp(&nested, ""), one_warp(&unrolled, ""));
        assert!(!n.program.simple && u.program.simple);
        for runs in [true, false] {
            assert_eq!(totals(&n, runs), totals(&u, runs));
        }
        // 6 points of 3 loads and a store, then a load: 25 instructions, 13 turns, 7 rounds.
        assert_eq!(counted(&u, true), (25, 13, 7));
    }

    #[test]
    fn the_simple_forms_arithmetic_gives_what_walking_its_warps_gives() {
        // Per-lane trips (a `while` that lets lanes go at their own trip), guarded edges and
        // parts before and after the loop, on shipped traces at odd shapes.
        let hw = HwConfig::load("h200").unwrap();
        for (kernel, block, set) in [
            (
                "star1-zloop",
                [32, 4, 1],
                vec![("nx", 40), ("ny", 24), ("nz", 30), ("cz", 7)],
            ),
            (
                "krotkiewski-7pt",
                [32, 2, 1],
                vec![("nx", 64), ("ny", 6), ("nz", 9)],
            ),
            (
                "tabik-st",
                [32, 4, 1],
                vec![("nx", 48), ("ny", 8), ("nz", 4)],
            ),
            ("star4", [8, 8, 4], vec![("nx", 24), ("ny", 16), ("nz", 8)]),
        ] {
            let k = crate::input::trace::load(kernel).unwrap();
            let req = LaunchRequest {
                block: Some(block),
                set: set.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
                ..Default::default()
            };
            let mut l = Launch::new(&k, &hw, &req).unwrap();
            assert!(l.program.simple, "{kernel}");
            let decoded = [totals(&l, true), totals(&l, false)];
            l.program.simple = false;
            let walked = [totals(&l, true), totals(&l, false)];
            assert_eq!(decoded, walked, "{kernel}");
            assert!(decoded[0].instructions > 0, "{kernel}");
        }
    }
}
