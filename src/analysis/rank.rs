//! `gputraffic rank`: simulate every block shape of a set for one kernel, domain and GPU, and
//! order them by predicted duration, fastest first — the question a code generator asks.
//!
//! By default a race ([`RankMode::Screen`]): every shape gets a lower bound of its time with no
//! cache simulated ([`time_bound`]); the shapes are screened cheaply (a sampled simulation of
//! the waves right after the L2 has turned over, [`SampleOptions::screening`]) in rounds, in the
//! order of their bounds, until the rest are bounded above the leader, each round's shapes
//! pre-screened first (four waves with an L2 that never evicts, a lower estimate of the time:
//! [`time_bound::pre_screen`]) and not screened where that lies above the leader; a screened time is given
//! an interval of ± [`SCREEN_MARGIN`] (the screen's error measured on the H200 dev set and the
//! H100 data, docs/performance.md), and only the shapes whose interval reaches below the
//! leader's upper end (by more than [`PICK_TOLERANCE`]) are simulated exactly and ranked by their
//! exact figures, unless the leader is alone: the best screened first, whose exact time may put
//! the others out. The others keep their screened estimates, after them, and the bounded and
//! pre-screened ones their bounds and pre-screens, last. Launches too short to screen are simulated exactly at once. A screen
//! takes the L1 counts that its shape's bound worked out instead of counting them again.

use crate::Bound;
use crate::analysis::{side_by_side, time_bound};
use crate::error::Result;
use crate::input::hw::HwConfig;
use crate::input::trace::Kernel;
use crate::launch::LaunchRequest;
use crate::metrics;
use crate::report::Report;
use crate::sim::SimOptions;
use crate::sim::counters::L1Counters;
use crate::sim::sample::SampleOptions;
use crate::timing::{self, Clock};
use rayon::prelude::*;
use serde::Serialize;

/// The screen's error bound: a screened predicted time is taken to lie within a factor of
/// 1 + `SCREEN_MARGIN` of the exact one either way. Chosen from the largest error measured over
/// the H200 dev set and the H100 data (docs/performance.md, "rank: screen, then confirm").
pub const SCREEN_MARGIN: f64 = 0.01;

/// The pre-screen's error bound above the exact time: a pre-screened time
/// ([`time_bound::pre_screen`]), a lower estimate, is taken to lie at most a factor of
/// 1 + `PRE_SCREEN_MARGIN` above the exact one. Its largest error above the exact time measured
/// over the launches of the H200 and H100 reports was +0.91% (a histogram's atomics, the only one
/// above +0.03%; docs/performance.md), about two thirds of this, as the screen's is of
/// [`SCREEN_MARGIN`].
pub const PRE_SCREEN_MARGIN: f64 = 0.015;

/// How far (a fraction of its predicted time) the first shape of a race may lie from
/// `--exact`'s first, the allowance: a shape whose time may be at most this much below
/// the leader's is not simulated exactly. Where every screen is within [`SCREEN_MARGIN`] of its
/// exact time, the first shape's exact time is within this of the fastest's: a shape `B` left
/// out has `lo(B) · (1 + PICK_TOLERANCE) > hi(L)` for the leader `L`, so
/// `exact(L) ≤ hi(L) < lo(B) · (1 + PICK_TOLERANCE) ≤ exact(B) · (1 + PICK_TOLERANCE)`, and the
/// first shape is `L` or one confirmed faster than it.
pub const PICK_TOLERANCE: f64 = 0.01;

/// How `rank` simulates the shapes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RankMode {
    /// Screen every shape, then simulate exactly those that may be the fastest (the default).
    Screen,
    /// Simulate every shape exactly (`rank --exact`).
    Exact,
    /// Simulate every shape sampled with these options and rank by the estimates, confirming
    /// none (`rank --sample`).
    Sampled(SampleOptions),
}

/// How a shape's figures were obtained: `exact`, `screened` or `sampled`.
pub const EXACT: &str = "exact";
/// See [`EXACT`].
pub const SCREENED: &str = "screened";
/// See [`EXACT`].
pub const SAMPLED: &str = "sampled";
/// See [`EXACT`]: not simulated, dropped by a lower bound of its time above the leader's upper
/// end ([`time_bound`]); its figures are the time model's at the bound's counts.
pub const BOUNDED: &str = "bounded";
/// See [`EXACT`]: not screened, dropped by its pre-screen ([`time_bound::pre_screen`], a lower
/// estimate of its time) above the leader's upper end; its figures are the pre-screen's.
pub const PRESCREENED: &str = "prescreened";

/// The model's measured error on time: a shape whose predicted time lies within a factor of
/// 1 + `TIE_MARGIN` of the best one's is a tie, since the measurements would not tell them apart.
/// The median |time error| against Nsight Compute is 4.4 % on the H200 dev set and 4.8 % on the
/// H100 set (docs/model.md, "Time"; docs/validation.md), rounded up.
pub const TIE_MARGIN: f64 = 0.05;

/// One block shape's simulation, as `rank` lists it. Its predicted time is the sum of
/// `bandwidth_bound_s`, `latency_s`, `block_turnover_s` and `launch_overhead_s`
/// ([`TimeEstimate::terms`](crate::timing::TimeEstimate::terms)).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankedShape {
    /// Place in the ranking, 1 for the first.
    pub rank: usize,
    /// Block shape.
    pub block: [u32; 3],
    /// How its figures were obtained: [`EXACT`] (confirmed), [`SCREENED`] or [`SAMPLED`].
    pub simulated: &'static str,
    /// Predicted kernel duration (seconds).
    pub predicted_s: f64,
    /// Lower end of the predicted duration's interval (`predicted_s` when exact): a screened
    /// shape's over 1 + [`SCREEN_MARGIN`], a sampled shape's at the lower ends of its traffic's
    /// 95% intervals.
    pub predicted_lo_s: f64,
    /// Upper end of the interval.
    pub predicted_hi_s: f64,
    /// Predicted time over the first shape's (1 for the first).
    pub relative: f64,
    /// Whether a shape after the first is predicted within [`TIE_MARGIN`] of it: a tie. Never
    /// for a shape dropped by its bound or pre-screen, whose time is only a lower end.
    pub tie: bool,
    /// What sets the pace (`dram`, `l2`, `l1`, `fp`, `issue`, `launch`, `atomic` or `latency`).
    pub limiter: &'static str,
    /// The bandwidth bound: the largest limiter's time at full bandwidth (seconds).
    pub bandwidth_bound_s: f64,
    /// The limiter whose time that is.
    pub bound_by: Option<&'static str>,
    /// Memory latency the resident warps do not hide: the queueing model's time beyond the
    /// bound (seconds).
    pub latency_s: f64,
    /// Time lost to blocks turning over in their slots (seconds).
    pub block_turnover_s: f64,
    /// The launch's fixed cost (seconds).
    pub launch_overhead_s: f64,
    /// Lattice updates per second.
    pub lups_per_s: f64,
    /// DRAM bytes (read + written) per lattice update.
    pub dram_bytes_per_lup: f64,
    /// Bytes between L1 and L2 (read + written) per lattice update.
    pub l2_bytes_per_lup: f64,
    /// Bytes between registers and L1 (loaded + stored sectors) per lattice update.
    pub l1_bytes_per_lup: f64,
    /// L1 data-pipe wavefronts per lattice update (`l1tex__data_pipe_lsu_wavefronts.sum`),
    /// what the L1 limiter counts on GPUs without a measured L1 bandwidth.
    pub l1_wavefronts_per_lup: f64,
    /// Resident blocks per SM.
    pub blocks_per_sm: u32,
    /// Resident warps over the maximum.
    pub occupancy: f64,
}

impl RankedShape {
    /// Whether the race dropped it unscreened, by its bound or its pre-screen: its time is then
    /// only a lower end.
    pub fn dropped(&self) -> bool {
        [BOUNDED, PRESCREENED].contains(&self.simulated)
    }

    fn from_report(
        block: [u32; 3],
        r: &Report,
        simulated: &'static str,
        interval: (f64, f64),
    ) -> RankedShape {
        let bytes_per_lup = r.bytes_per_lup();
        let per_lup = |names: &[&str]| {
            bytes_per_lup
                .iter()
                .filter(|(n, _)| names.contains(n))
                .map(|(_, v)| v)
                .sum::<f64>()
        };
        let t = r.time.as_ref().expect("simulate adds the time model");
        RankedShape {
            rank: 0,
            block,
            simulated,
            predicted_s: t.predicted_s,
            predicted_lo_s: interval.0,
            predicted_hi_s: interval.1,
            relative: 1.0,
            tie: false,
            limiter: t.limiter,
            bandwidth_bound_s: t.bandwidth_bound_s,
            bound_by: t.bound_by(),
            latency_s: t.latency_s,
            block_turnover_s: t.block_turnover_s,
            launch_overhead_s: t.launch_overhead_s,
            lups_per_s: t.lups_per_s,
            dram_bytes_per_lup: per_lup(&[metrics::DRAM_READ, metrics::DRAM_WRITE]),
            l2_bytes_per_lup: per_lup(&[metrics::L2_READ, metrics::L2_WRITE]),
            l1_bytes_per_lup: per_lup(&[metrics::L1_LD_SECTORS, metrics::L1_ST_SECTORS]),
            l1_wavefronts_per_lup: r.counts.l1.wavefronts as f64 / r.lattice_updates as f64,
            blocks_per_sm: r.launch.blocks_per_sm,
            occupancy: r.launch.occupancy,
        }
    }
}

/// What a ranking is of: the kernel, GPU, domain and clock its shapes share, and how they were
/// simulated.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankContext {
    /// Kernel name.
    pub kernel: String,
    /// GPU name.
    pub hw: String,
    /// `nx, ny, nz`, if the kernel has them.
    pub domain: Option<[i64; 3]>,
    /// The time model's clock (GHz).
    pub clock_ghz: f64,
    /// Which clock that is (`base`, `boost`, `only`, `given`: [`Clock`]).
    #[serde(serialize_with = "clock_name")]
    pub clock: Clock,
    /// How the shapes were simulated: `screen` (the race), `exact` or `sampled`.
    pub mode: &'static str,
    /// What the L1 limiter counts on this GPU: `wavefronts` (one per SM per cycle) or `bytes`
    /// (over the config's measured `l1_gbs`).
    pub l1_limiter_counts: &'static str,
    /// [`TIE_MARGIN`].
    pub tie_margin: f64,
}

fn clock_name<S: serde::Serializer>(c: &Clock, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(c.name())
}

/// A ranking: the shapes fastest first, and the shapes of named sets that cannot launch.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranking {
    /// The kernel, GPU, domain and clock.
    pub context: RankContext,
    /// The shapes: those simulated exactly first, by their exact predicted time, then the
    /// screened ones by their estimates (ties in the order given).
    pub shapes: Vec<RankedShape>,
    /// Shapes from a named set (`all-N`, `ernst-1024`, …) left out, each with the reason.
    pub skipped: Vec<String>,
    /// With sampling (`--sample`): the shapes too short to sample, simulated exactly, each as
    /// `AxBxC: why` (in the order given).
    pub not_sampled: Vec<String>,
    /// Shapes screened ([`RankMode::Screen`]; the others were too short to screen).
    pub screened: usize,
    /// Of those, the shapes then simulated exactly.
    pub confirmed: usize,
    /// Shapes left unsimulated, their lower bounds above the leader's upper end ([`BOUNDED`]).
    pub bounded: usize,
    /// Shapes left unscreened, their pre-screens above the leader's upper end
    /// ([`PRESCREENED`]).
    pub prescreened: usize,
    /// Whether the shapes were raced ([`RankMode::Screen`]).
    pub raced: bool,
    /// Every screened shape's screened predicted time (seconds), confirmed or not, in the order
    /// given: what the screen's error is measured on (`benches/rank_agreement.sh`).
    pub screens: Vec<([u32; 3], f64)>,
}

impl Ranking {
    /// The one-line note on how the shapes were simulated: for a race that screened shapes, how
    /// many were confirmed exactly; with `--sample`, how many were too short to sample. `None`
    /// otherwise.
    pub fn note(&self) -> Option<String> {
        let n = self.shapes.len();
        if let Some(first) = self.not_sampled.first() {
            return Some(format!(
                "--sample: {} of {n} shapes simulated exactly, too short to sample (the first, {first})",
                self.not_sampled.len()
            ));
        }
        // Nothing screened (not raced, or every launch too short): every shape is exact, as
        // with --exact, and there is nothing to say.
        if !self.raced || self.screened + self.bounded + self.prescreened == 0 {
            return None;
        }
        let exact = self.shapes.iter().filter(|s| s.simulated == EXACT).count();
        let short = match exact - self.confirmed {
            0 => String::new(),
            k => format!(", {k} too short to screen"),
        };
        let by_screen = n - exact - self.bounded - self.prescreened;
        let dropped = [
            (self.bounded, "lower bounds of their times"),
            (
                self.prescreened,
                "pre-screens (lower estimates of their times)",
            ),
        ]
        .iter()
        .filter(|(k, _)| *k > 0)
        .map(|(k, by)| format!("{k} by {by}"))
        .collect::<Vec<_>>();
        let bounded = match dropped.len() {
            0 => String::new(),
            _ => format!(", {}, above the leader's", dropped.join(", ")),
        };
        Some(format!(
            "{exact} of {n} shapes simulated exactly ({} of {} screened shapes confirmed{short}); the other {by_screen} ranked by their screened estimates, within ±{:.0}%{bounded} (--exact simulates every shape exactly)",
            self.confirmed,
            self.screened,
            SCREEN_MARGIN * 100.0
        ))
    }
}

/// Simulates `kernel` on `hw` with each of `blocks` (the rest of the launch from `base`), in
/// parallel, as `mode` says (each with `opts`, whose own sampling is ignored), the time model
/// at `clock_ghz` (the base clock when `None`), and ranks them. `blocks` pairs
/// each shape with whether it came from a named set (as [`crate::launch::geometry::expand_blocks`] gives
/// them): such a shape that cannot launch is skipped, any other is an error, reported before
/// anything is simulated. `progress(done, total)` is called after each simulation (screens
/// and confirmations together; the total is every shape until the race's rounds end, then the
/// shapes screened and those to confirm).
#[allow(clippy::too_many_arguments)]
pub fn rank(
    kernel: &Kernel,
    hw: &HwConfig,
    blocks: &[([u32; 3], bool)],
    base: &LaunchRequest,
    clock_ghz: Option<f64>,
    mode: RankMode,
    opts: &SimOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Ranking> {
    let mut bound = Vec::new();
    let mut skipped = Vec::new();
    for &(b, named) in blocks {
        let req = LaunchRequest {
            block: Some(b),
            ..base.clone()
        };
        match Bound::with_hw(kernel.clone(), hw.clone(), &req) {
            Ok(x) => bound.push((b, x)),
            Err(e) if named => skipped.push(format!("{}x{}x{}: {}", b[0], b[1], b[2], e.message)),
            Err(e) => return Err(e),
        }
    }
    if bound.is_empty() {
        return Err(crate::Error::new(
            "--blocks",
            format!(
                "no block shape can launch ({})",
                skipped.first().map_or("", String::as_str)
            ),
        ));
    }
    // One shape is the fastest without a race: simulate it exactly.
    let mode = match mode {
        RankMode::Screen if bound.len() == 1 => RankMode::Exact,
        m => m,
    };
    let first_pass = match mode {
        RankMode::Screen => Some(SampleOptions::screening()),
        RankMode::Exact => None,
        RankMode::Sampled(s) => Some(s),
    };
    let done = std::sync::atomic::AtomicUsize::new(0);
    let total = std::sync::atomic::AtomicUsize::new(bound.len());
    let tick = || {
        let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        progress(n, total.load(std::sync::atomic::Ordering::Relaxed));
    };
    progress(0, bound.len());
    // `exact_l1`: the L1 counts the addresses decide, where a lower bound worked them out.
    let run = |b: &Bound, sample: Option<SampleOptions>, exact_l1: Option<L1Counters>| {
        let opts = SimOptions { sample, ..*opts };
        let r = b.simulate_given(&opts, clock_ghz, exact_l1, &|_, _| {});
        tick();
        r
    };
    // The bound works out the L1 counts the addresses decide as a screen with these options
    // would (`time_bound::lower_bound`, with the blocks' footprints where the compulsory volume
    // is tracked): the screen takes them from it.
    let shares_bound_counts = !opts.lane_by_lane;
    let bound_l1 =
        |lower: Option<&Report>| lower.filter(|_| shares_bound_counts).map(|r| r.counts.l1);
    // The first pass: every shape simulated as the mode says, except in a race the shapes
    // whose lower bound or pre-screen already lies above the leader's upper end.
    let first_reports: Vec<(Report, FirstPass)> = match mode {
        RankMode::Screen => screen_in_rounds(
            &bound,
            clock_ghz,
            opts.compulsory,
            &|b, lower| run(b, first_pass, bound_l1(lower)),
            &|b, lower| time_bound::pre_screen(b, opts, clock_ghz, bound_l1(lower)),
        )?,
        _ => side_by_side::map(&bound, |(_, b)| {
            run(b, first_pass, None).map(|r| (r, FirstPass::Simulated))
        })?,
    };
    let mut not_sampled = Vec::new();
    let mut shapes = Vec::with_capacity(bound.len());
    let mut screened = Vec::new();
    let mut bounded = Vec::new();
    let mut prescreened = Vec::new();
    for (i, ((block, b), (r, pass))) in bound.iter().zip(&first_reports).enumerate() {
        let name = format!("{}x{}x{}", block[0], block[1], block[2]);
        let t = r
            .time
            .as_ref()
            .expect("simulate adds the time model")
            .predicted_s;
        // A shape dropped by its bound: the time model at the bound's counts, its interval from
        // the bound up (an infinite upper end, `null` in JSON); by its pre-screen: the
        // pre-screen's figures, its interval from their lower end up.
        match pass {
            FirstPass::Bounded => {
                bounded.push(i);
                shapes.push(RankedShape::from_report(
                    *block,
                    r,
                    BOUNDED,
                    (t, f64::INFINITY),
                ));
                continue;
            }
            FirstPass::Prescreened => {
                prescreened.push(i);
                shapes.push(RankedShape::from_report(
                    *block,
                    r,
                    PRESCREENED,
                    (pre_screen_low(t), f64::INFINITY),
                ));
                continue;
            }
            FirstPass::Simulated => {}
        }
        let shape = match (mode, &r.sample) {
            (_, None) => {
                if let (RankMode::Sampled(_), Some(why)) = (mode, &r.sample_fallback) {
                    not_sampled.push(format!("{name}: {why}"));
                }
                RankedShape::from_report(*block, r, EXACT, (t, t))
            }
            (RankMode::Screen, Some(_)) => {
                screened.push(i);
                RankedShape::from_report(*block, r, SCREENED, screen_interval(t))
            }
            (_, Some(s)) => {
                let at = |c: &crate::sim::counters::Counts| {
                    let inputs = timing::inputs_from_counts(c, &b.launch);
                    timing::estimate(&b.hw, &b.kernel, &b.launch, &inputs, clock_ghz).predicted_s
                };
                let (lo, hi) = (at(&s.lo), at(&s.hi));
                let interval = (lo.min(hi).min(t), lo.max(hi).max(t));
                RankedShape::from_report(*block, r, SAMPLED, interval)
            }
        };
        shapes.push(shape);
    }
    // The race: a shape is out when the lower end of its interval, made `PICK_TOLERANCE`
    // larger, lies above the leader's upper end (the least upper end of any shape, exact ones at
    // their exact time); the screened shapes still in are simulated exactly (the best screened
    // first, which may put the others out), unless the leader is alone in: then it is the first
    // shape whatever its exact time, and stays screened. Decided from the screens and the
    // exact runs, in a fixed order, so that the same shapes are confirmed on any thread count.
    let leader = shapes
        .iter()
        .map(|s| s.predicted_hi_s)
        .fold(f64::INFINITY, f64::min);
    let still_in = |s: &RankedShape| s.predicted_lo_s * (1.0 + PICK_TOLERANCE) <= leader;
    let mut in_race: Vec<bool> = shapes
        .iter()
        .map(|s| mode == RankMode::Screen && !s.dropped() && still_in(s))
        .collect();
    let alone = in_race.iter().filter(|&&b| b).count() == 1;
    // The contenders, by their screened estimates (ties in the order given).
    let mut contenders: Vec<usize> = screened
        .iter()
        .copied()
        .filter(|&i| !alone && still_in(&shapes[i]))
        .collect();
    contenders.sort_by(|&a, &b| {
        (shapes[a].predicted_s.total_cmp(&shapes[b].predicted_s)).then(a.cmp(&b))
    });
    let screens = screened
        .iter()
        .map(|&i| (shapes[i].block, shapes[i].predicted_s))
        .collect();
    let set_total = |contenders: usize| {
        total.store(
            bound.len() - bounded.len() - prescreened.len() + contenders,
            std::sync::atomic::Ordering::Relaxed,
        )
    };
    set_total(contenders.len());
    let confirm = |i: usize| -> Result<RankedShape> {
        let (block, b) = &bound[i];
        let r = run(b, None, None)?;
        let t = r
            .time
            .as_ref()
            .expect("simulate adds the time model")
            .predicted_s;
        Ok(RankedShape::from_report(*block, &r, EXACT, (t, t)))
    };
    let confirmed = confirm_contenders(
        &mut shapes,
        &mut in_race,
        &contenders,
        leader,
        &confirm,
        &set_total,
    )?;
    // In a race, the shapes still in it first (those confirmed, or the leader alone), by their
    // times; then the others simulated or screened, by their times or estimates; then those
    // dropped by their bounds or pre-screens, by those. Otherwise every shape by its time.
    let mut grouped: Vec<(u8, RankedShape)> = shapes
        .into_iter()
        .zip(&in_race)
        .map(|(s, &won)| {
            let group = if mode != RankMode::Screen || won {
                0
            } else if s.dropped() {
                2
            } else {
                1
            };
            (group, s)
        })
        .collect();
    grouped.sort_by(|(g, a), (h, b)| g.cmp(h).then(a.predicted_s.total_cmp(&b.predicted_s)));
    let mut shapes: Vec<RankedShape> = grouped.into_iter().map(|(_, s)| s).collect();
    number(&mut shapes);
    let (_, first) = &bound[0];
    let time = first_time(first_reports.iter().map(|(r, _)| r));
    let context = RankContext {
        kernel: first.launch.kernel.clone(),
        hw: hw.name.clone(),
        domain: first.launch.domain(),
        clock_ghz: time.clock_ghz,
        clock: time.clock,
        mode: match mode {
            RankMode::Screen => "screen",
            RankMode::Exact => "exact",
            RankMode::Sampled(_) => "sampled",
        },
        l1_limiter_counts: if hw.bandwidth.l1_gbs.is_some() {
            "bytes"
        } else {
            "wavefronts"
        },
        tie_margin: TIE_MARGIN,
    };
    Ok(Ranking {
        context,
        shapes,
        skipped,
        not_sampled,
        screened: screened.len(),
        confirmed: confirmed.len(),
        bounded: bounded.len(),
        prescreened: prescreened.len(),
        raced: mode == RankMode::Screen,
        screens,
    })
}

/// Numbers `shapes` (in ranking order): each one's rank, its time relative to the first's, and
/// whether it ties with the first (within [`TIE_MARGIN`], and not dropped by a lower end).
fn number(shapes: &mut [RankedShape]) {
    let fastest = shapes.first().map_or(1.0, |s| s.predicted_s);
    for (i, s) in shapes.iter_mut().enumerate() {
        s.rank = i + 1;
        s.relative = s.predicted_s / fastest;
        s.tie = i > 0 && s.relative <= 1.0 + TIE_MARGIN && !s.dropped();
    }
}

/// Simulates exactly (`confirm(i)`) the race's contenders, `contenders` (indices into `shapes`,
/// best screened first): the best alone first, whose exact time, or the leader's upper end
/// `leader` where lower, is then an upper end of the first shape's exact time; the others whose
/// lower end, made [`PICK_TOLERANCE`] larger, lies above it are out (their `in_race` cleared)
/// without an exact run, as the argument of [`PICK_TOLERANCE`] allows with that upper end; those
/// still in, side by side. `confirming(n)` is told how many exact runs there are once known.
/// Returns the indices confirmed, in the order they ran.
fn confirm_contenders(
    shapes: &mut [RankedShape],
    in_race: &mut [bool],
    contenders: &[usize],
    leader: f64,
    confirm: &(dyn Fn(usize) -> Result<RankedShape> + Sync),
    confirming: &dyn Fn(usize),
) -> Result<Vec<usize>> {
    let Some((&best, rest)) = contenders.split_first() else {
        return Ok(Vec::new());
    };
    shapes[best] = confirm(best)?;
    let leader = leader.min(shapes[best].predicted_s);
    let (rest, out): (Vec<usize>, Vec<usize>) =
        (rest.iter()).partition(|&&i| shapes[i].predicted_lo_s * (1.0 + PICK_TOLERANCE) <= leader);
    for i in out {
        in_race[i] = false;
    }
    confirming(1 + rest.len());
    let exact: Vec<RankedShape> = side_by_side::map(&rest, |&i| confirm(i))?;
    let mut confirmed = vec![best];
    for (i, s) in rest.into_iter().zip(exact) {
        shapes[i] = s;
        confirmed.push(i);
    }
    Ok(confirmed)
}

/// The time estimate of the first report (every shape's is at the same clock).
fn first_time<'a>(mut reports: impl Iterator<Item = &'a Report>) -> &'a timing::TimeEstimate {
    reports
        .next()
        .and_then(|r| r.time.as_ref())
        .expect("a shape is simulated, with the time model")
}

/// The lower end of a pre-screened time's interval: [`PRE_SCREEN_MARGIN`] below it.
fn pre_screen_low(t: f64) -> f64 {
    t / (1.0 + PRE_SCREEN_MARGIN)
}

/// A screened time's interval: within a factor of 1 + [`SCREEN_MARGIN`] either way.
fn screen_interval(t: f64) -> (f64, f64) {
    (t / (1.0 + SCREEN_MARGIN), t * (1.0 + SCREEN_MARGIN))
}

/// Shapes screened per round of a race (in the order of their lower bounds): a constant, so
/// that the rounds, and what they drop, are the same on any thread count.
pub const SCREEN_ROUND: usize = 8;

/// A shape's pre-screen given its bound's report ([`time_bound::pre_screen`]; `None` where the
/// launch is too short to screen).
type PreScreen<'a> = dyn Fn(&Bound, Option<&Report>) -> Result<Option<Report>> + Sync + 'a;

/// How a race's first pass left a shape.
#[derive(Debug, Clone, Copy, PartialEq)]
enum FirstPass {
    /// Screened (or simulated exactly, too short to screen); every shape in the other modes.
    Simulated,
    /// Dropped by its lower bound.
    Bounded,
    /// Dropped by its pre-screen.
    Prescreened,
}

/// The first pass of a race: `screen(b, its bound's report)` (a screen, or an exact simulation
/// where the launch is too short to screen) of the shapes in rounds, in the order of their lower bounds
/// ([`time_bound::lower_bound`]; shapes without one first), [`SCREEN_ROUND`] shapes a round,
/// until the next shape's bound lies above the leader's upper end so far: that shape and all
/// after it cannot be the fastest and are left unsimulated (with one round's shapes or fewer,
/// no bounds are worked out: every shape is a candidate). A round's shapes are pre-screened
/// first (`pre_screen(b, its bound's report)`, [`time_bound::pre_screen`]; `None` where the
/// launch is too short to screen), and taken in the order of their pre-screens: without a
/// leader yet, the first is screened alone to make one; then a shape whose pre-screened time,
/// less [`PRE_SCREEN_MARGIN`] and made [`PICK_TOLERANCE`] larger, lies above the leader's upper
/// end is not screened, and the others are
/// screened side by side. Each shape's report: its screen's, its pre-screen's or its bound's,
/// and which. `footprints`: the bounds count the blocks' distinct load sectors and lines too,
/// as a simulation tracking the compulsory volume does.
fn screen_in_rounds(
    bound: &[([u32; 3], Bound)],
    clock_ghz: Option<f64>,
    footprints: bool,
    screen: &(dyn Fn(&Bound, Option<&Report>) -> Result<Report> + Sync),
    pre_screen: &PreScreen<'_>,
) -> Result<Vec<(Report, FirstPass)>> {
    // Shapes that fit in one round are all screened whatever their bounds: none worked out.
    let mut lower: Vec<Option<Report>> = if bound.len() <= SCREEN_ROUND {
        vec![None; bound.len()]
    } else {
        bound
            .par_iter()
            .with_max_len(1)
            .map(|(_, b)| {
                time_bound::lower_bound(&b.kernel, &b.hw, &b.launch, clock_ghz, footprints)
            })
            .collect::<Result<_>>()?
    };
    let bounds: Vec<f64> = (lower.iter())
        .map(|r| {
            r.as_ref()
                .and_then(|r| r.time.as_ref())
                .map_or(0.0, |t| t.predicted_s)
        })
        .collect();
    let mut order: Vec<usize> = (0..bound.len()).collect();
    order.sort_by(|&a, &b| bounds[a].total_cmp(&bounds[b]).then(a.cmp(&b)));
    let mut reports: Vec<Option<(Report, FirstPass)>> = vec![None; bound.len()];
    let mut leader = f64::INFINITY;
    let mut next = 0;
    let still_in = |i: usize, leader: f64| bounds[i] * (1.0 + PICK_TOLERANCE) <= leader;
    let predicted = |r: &Report| {
        r.time
            .as_ref()
            .expect("simulate adds the time model")
            .predicted_s
    };
    // A screen's upper end (an exact run's time where too short to screen).
    let screen_hi = |r: &Report| {
        let t = predicted(r);
        if r.sample.is_some() {
            screen_interval(t).1
        } else {
            t
        }
    };
    while next < order.len() && still_in(order[next], leader) {
        let round: Vec<usize> = order[next..]
            .iter()
            .copied()
            .take(SCREEN_ROUND)
            .take_while(|&i| still_in(i, leader))
            .collect();
        next += round.len();
        // The round's pre-screens first: those above the leader are not screened. Without a
        // leader yet, the best pre-screened shape is screened alone first to make one.
        let pre: Vec<Option<Report>> = round
            .par_iter()
            .with_max_len(1)
            .map(|&i| pre_screen(&bound[i].1, lower[i].as_ref()))
            .collect::<Result<_>>()?;
        let pre_low = |p: &Option<Report>| p.as_ref().map(|p| pre_screen_low(predicted(p)));
        let mut round: Vec<(usize, Option<Report>)> = round.into_iter().zip(pre).collect();
        // By pre-screen (those too short to screen, run exactly, first), ties in the order of
        // the bounds.
        round.sort_by(|(a, p), (b, q)| {
            (pre_low(p).unwrap_or(0.0))
                .total_cmp(&pre_low(q).unwrap_or(0.0))
                .then(bounds[*a].total_cmp(&bounds[*b]))
                .then(a.cmp(b))
        });
        if !leader.is_finite()
            && let Some((i, _)) = round.first()
        {
            let r = screen(&bound[*i].1, lower[*i].as_ref())?;
            leader = screen_hi(&r);
            reports[*i] = Some((r, FirstPass::Simulated));
            round.remove(0);
        }
        let mut to_screen = Vec::with_capacity(round.len());
        for (i, p) in round {
            match p {
                Some(p) if pre_screen_low(predicted(&p)) * (1.0 + PICK_TOLERANCE) > leader => {
                    reports[i] = Some((p, FirstPass::Prescreened));
                }
                _ => to_screen.push(i),
            }
        }
        let screened: Vec<Report> = to_screen
            .par_iter()
            .with_max_len(1)
            .map(|&i| screen(&bound[i].1, lower[i].as_ref()))
            .collect::<Result<_>>()?;
        for (i, r) in to_screen.into_iter().zip(screened) {
            leader = leader.min(screen_hi(&r));
            reports[i] = Some((r, FirstPass::Simulated));
        }
    }
    Ok(reports
        .into_iter()
        .zip(&mut lower)
        .map(|(r, l)| match r {
            Some(r) => r,
            None => (
                l.take().expect("a shape left out has a bound"),
                FirstPass::Bounded,
            ),
        })
        .collect())
}

/// `AxBxC`.
fn block_name(b: [u32; 3]) -> String {
    format!("{}x{}x{}", b[0], b[1], b[2])
}

/// The mark of a tie in the table.
const TIE_MARK: &str = "~";

impl Ranking {
    /// The header line of the table: kernel, GPU, domain, clock and the number of shapes.
    pub fn header(&self) -> String {
        let c = &self.context;
        let domain = c.domain.map_or(String::new(), |d| {
            format!(", domain {}x{}x{}", d[0], d[1], d[2])
        });
        let clock = format!("clock {:.2} GHz ({})", c.clock_ghz, c.clock.describe());
        format!(
            "kernel {} on {}{domain}, {clock}; {} shapes, fastest first",
            c.kernel,
            c.hw,
            self.shapes.len()
        )
    }

    /// The ranking as aligned text: the header line, one shape per line, and the legend.
    /// `simulated` says how each shape's figures were obtained, `interval us` gives a screened
    /// or sampled time's interval; the predicted time is the sum of the four columns after the
    /// limiter. The L1 column is what the L1 limiter counts on this GPU: wavefronts, or bytes
    /// where the config has a measured L1 bandwidth.
    pub fn to_table(&self) -> String {
        let by_bytes = self.context.l1_limiter_counts == "bytes";
        let l1_header = if by_bytes { "L1 B/LUP" } else { "L1 wf/LUP" };
        // The interval column only where some shape has an interval.
        let with_intervals = self.shapes.iter().any(|r| r.simulated != EXACT);
        let interval_of = |text: &str| {
            if with_intervals {
                format!(" {text:>19}")
            } else {
                String::new()
            }
        };
        let mut s = self.header() + "\n";
        s += &format!(
            "{:>4}  {:<14} {:<9} {:>12}{} {:>8} {:<7} {:>9} {:>10} {:>11} {:>11} {:>10} {:>10} {:>10} {:>6} {:>6}\n",
            "rank",
            "block",
            "simulated",
            "predicted us",
            interval_of("interval us"),
            "x best ",
            "limiter",
            "bound us",
            "latency us",
            "turnover us",
            "overhead us",
            "DRAM B/LUP",
            "L2 B/LUP",
            l1_header,
            "blk/SM",
            "occup."
        );
        for r in &self.shapes {
            let interval = if r.simulated == EXACT {
                String::new()
            } else if r.predicted_hi_s.is_infinite() {
                format!("≥ {:.3}", r.predicted_lo_s * 1e6)
            } else {
                format!(
                    "{:.3}–{:.3}",
                    r.predicted_lo_s * 1e6,
                    r.predicted_hi_s * 1e6
                )
            };
            let relative = format!("{:.3}{}", r.relative, if r.tie { TIE_MARK } else { " " });
            let l1 = if by_bytes {
                r.l1_bytes_per_lup
            } else {
                r.l1_wavefronts_per_lup
            };
            s += &format!(
                "{:>4}  {:<14} {:<9} {:>12.3}{} {:>8} {:<7} {:>9.3} {:>10.3} {:>11.3} {:>11.3} {:>10.2} {:>10.2} {:>10.3} {:>6} {:>6.2}\n",
                r.rank,
                block_name(r.block),
                r.simulated,
                r.predicted_s * 1e6,
                interval_of(&interval),
                relative,
                r.limiter,
                r.bandwidth_bound_s * 1e6,
                r.latency_s * 1e6,
                r.block_turnover_s * 1e6,
                r.launch_overhead_s * 1e6,
                r.dram_bytes_per_lup,
                r.l2_bytes_per_lup,
                l1,
                r.blocks_per_sm,
                r.occupancy
            );
        }
        s += "predicted = bound (the slowest level at full bandwidth) + latency (not hidden by the resident warps) + turnover (blocks taking over slots) + overhead (the launch's)\n";
        if self.shapes.iter().any(|r| r.tie) {
            s += &format!(
                "{TIE_MARK} a tie: within {:.0}% of the best, the time model's median error against Nsight Compute (docs/validation.md)\n",
                TIE_MARGIN * 100.0
            );
        }
        s
    }

    /// The ranking as CSV: a header and one row per shape, in ranking order; the clock in every
    /// row.
    pub fn to_csv(&self) -> String {
        let mut s = String::from(
            "rank,block_x,block_y,block_z,simulated,predicted_s,predicted_lo_s,predicted_hi_s,relative,tie,limiter,bandwidth_bound_s,bound_by,latency_s,block_turnover_s,launch_overhead_s,lups_per_s,dram_bytes_per_lup,l2_bytes_per_lup,l1_bytes_per_lup,l1_wavefronts_per_lup,blocks_per_sm,occupancy,clock_ghz,clock\n",
        );
        for r in &self.shapes {
            s += &format!(
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                r.rank,
                r.block[0],
                r.block[1],
                r.block[2],
                r.simulated,
                r.predicted_s,
                r.predicted_lo_s,
                r.predicted_hi_s,
                r.relative,
                r.tie,
                r.limiter,
                r.bandwidth_bound_s,
                r.bound_by.unwrap_or(""),
                r.latency_s,
                r.block_turnover_s,
                r.launch_overhead_s,
                r.lups_per_s,
                r.dram_bytes_per_lup,
                r.l2_bytes_per_lup,
                r.l1_bytes_per_lup,
                r.l1_wavefronts_per_lup,
                r.blocks_per_sm,
                r.occupancy,
                self.context.clock_ghz,
                self.context.clock.name()
            );
        }
        s
    }

    /// The ranking as one JSON object: the context's fields ([`RankContext`]), then `shapes`
    /// (fastest first, each with its `rank`) and `skipped`.
    pub fn to_json(&self) -> serde_json::Value {
        #[derive(Serialize)]
        struct RankingJson<'a> {
            #[serde(flatten)]
            context: &'a RankContext,
            shapes: &'a [RankedShape],
            skipped: &'a [String],
        }
        serde_json::to_value(RankingJson {
            context: &self.context,
            shapes: &self.shapes,
            skipped: &self.skipped,
        })
        .expect("JSON of plain values")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ranking of shapes predicted at `micros` µs (in that order), each the sum of its terms.
    fn ranking(micros: &[f64]) -> Ranking {
        let mut shapes: Vec<RankedShape> = micros
            .iter()
            .enumerate()
            .map(|(i, &us)| RankedShape {
                rank: 0,
                block: [32, 1 << i, 1],
                simulated: EXACT,
                predicted_s: us * 1e-6,
                predicted_lo_s: us * 1e-6,
                predicted_hi_s: us * 1e-6,
                relative: 0.0,
                tie: false,
                limiter: "l1",
                bandwidth_bound_s: (us - 3.0) * 1e-6,
                bound_by: Some("l1"),
                latency_s: 1e-6,
                block_turnover_s: 0.5e-6,
                launch_overhead_s: 1.5e-6,
                lups_per_s: 1e9,
                dram_bytes_per_lup: 16.0,
                l2_bytes_per_lup: 40.0,
                l1_bytes_per_lup: 64.0,
                l1_wavefronts_per_lup: 2.5,
                blocks_per_sm: 8,
                occupancy: 1.0,
            })
            .collect();
        number(&mut shapes);
        Ranking {
            context: RankContext {
                kernel: "star1".into(),
                hw: "h200".into(),
                domain: Some([64, 64, 32]),
                clock_ghz: 1.5,
                clock: Clock::Base,
                mode: "exact",
                l1_limiter_counts: "wavefronts",
                tie_margin: TIE_MARGIN,
            },
            shapes,
            skipped: vec![],
            not_sampled: vec![],
            screened: 0,
            confirmed: 0,
            bounded: 0,
            prescreened: 0,
            raced: false,
            screens: vec![],
        }
    }

    /// The best screened contender is confirmed alone first; its exact time (where below the
    /// leader's upper end) puts out the contenders whose lower end, made `PICK_TOLERANCE`
    /// larger, lies above it, and only the others run exactly.
    #[test]
    fn the_best_contenders_exact_time_puts_out_the_others_above_it() {
        // Screens at 100, 100.5 and 100.9 µs (the third listed first); the leader's upper end is
        // 101 µs (100 · 1.01), so all three are contenders (t / 1.01 · 1.01 = t ≤ 101).
        let screens = [100.9, 100.0, 100.5];
        let mut base = ranking(&screens).shapes;
        base.sort_by_key(|s| s.block[1]);
        for (s, us) in base.iter_mut().zip(screens) {
            s.simulated = SCREENED;
            s.predicted_s = us * 1e-6;
            (s.predicted_lo_s, s.predicted_hi_s) = screen_interval(s.predicted_s);
        }
        let leader = 100.0e-6 * (1.0 + SCREEN_MARGIN);
        // Each case: the best's exact time (µs), the shapes run exactly (in order) and the
        // contenders left in the race.
        for (exact_best, ran, left_in) in [
            // Below both others: both out, only the best runs.
            (99.0, vec![1], [false, true, false]),
            // Between: the 100.9 screen out, the 100.5 one may still be faster by more than
            // the tolerance allows.
            (100.6, vec![1, 2], [false, true, true]),
            // Above both: both run.
            (100.95, vec![1, 2, 0], [true, true, true]),
            // Above the leader's upper end (a screen beyond its margin): that end stays the
            // bound, and both others run.
            (102.0, vec![1, 2, 0], [true, true, true]),
        ] {
            let mut shapes = base.clone();
            let mut in_race = [true; 3];
            let calls = std::sync::Mutex::new(Vec::new());
            let confirm = |i: usize| {
                calls.lock().unwrap().push(i);
                let us = if i == 1 { exact_best } else { screens[i] + 0.2 };
                let mut s = base[i].clone();
                s.simulated = EXACT;
                s.predicted_s = us * 1e-6;
                (s.predicted_lo_s, s.predicted_hi_s) = (s.predicted_s, s.predicted_s);
                Ok(s)
            };
            let runs = std::sync::Mutex::new(0);
            let confirmed = confirm_contenders(
                &mut shapes,
                &mut in_race,
                &[1, 2, 0],
                leader,
                &confirm,
                &|n| *runs.lock().unwrap() = n,
            )
            .unwrap();
            let mut called = calls.into_inner().unwrap();
            assert_eq!(called[0], 1, "{exact_best}: the best first");
            called[1..].sort();
            let mut expected = ran.clone();
            expected[1..].sort();
            assert_eq!(called, expected, "{exact_best}");
            assert_eq!(confirmed.len(), ran.len(), "{exact_best}");
            assert_eq!(*runs.lock().unwrap(), ran.len(), "{exact_best}");
            assert_eq!(in_race, left_in, "{exact_best}");
            for (i, s) in shapes.iter().enumerate() {
                let kind = if ran.contains(&i) { EXACT } else { SCREENED };
                assert_eq!(s.simulated, kind, "{exact_best}: shape {i}");
            }
        }
        // No contenders, nothing run.
        let mut shapes = base.clone();
        let none = confirm_contenders(
            &mut shapes,
            &mut [true; 3],
            &[],
            1.0,
            &|_| unreachable!(),
            &|_| {},
        );
        assert!(none.unwrap().is_empty());
    }

    #[test]
    fn the_tie_mark_is_on_exactly_the_shapes_within_the_margin_of_the_first() {
        // 100 µs first; 104.9 and 105 within 5%; 105.2 and 130 beyond.
        let r = ranking(&[100.0, 104.9, 105.0, 105.2, 130.0]);
        let ties: Vec<bool> = r.shapes.iter().map(|s| s.tie).collect();
        assert_eq!(ties, [false, true, true, false, false]);
        assert_eq!(
            r.shapes.iter().map(|s| s.rank).collect::<Vec<_>>(),
            [1, 2, 3, 4, 5]
        );
        let table = r.to_table();
        let rows: Vec<&str> = table.lines().skip(2).take(5).collect();
        for (row, tie) in rows.iter().zip(&ties) {
            // The mark follows the `x best` figure, and nothing else in a row has it.
            assert_eq!(row.contains(TIE_MARK), *tie, "{row}");
        }
        assert!(rows[1].contains("1.049~"), "{}", rows[1]);
        assert!(table.contains("~ a tie: within 5% of the best"), "{table}");
        // No tie, no legend.
        assert!(!ranking(&[100.0, 110.0]).to_table().contains("a tie"));
    }

    #[test]
    fn a_shape_dropped_by_its_bound_or_pre_screen_is_never_a_tie() {
        // Their times are lower ends: 101 µs says only that the shape takes at least that long.
        let mut r = ranking(&[100.0, 101.0, 102.0, 103.0]);
        r.shapes[2].simulated = BOUNDED;
        r.shapes[3].simulated = PRESCREENED;
        number(&mut r.shapes);
        let ties: Vec<bool> = r.shapes.iter().map(|s| s.tie).collect();
        assert_eq!(ties, [false, true, false, false]);
    }

    #[test]
    fn the_table_names_its_context_and_shows_what_the_l1_limiter_counts() {
        let mut r = ranking(&[100.0, 120.0]);
        let table = r.to_table();
        let first = table.lines().next().unwrap();
        assert_eq!(
            first,
            "kernel star1 on h200, domain 64x64x32, clock 1.50 GHz (base, the clock Nsight Compute locks; --clock boost for the boost clock); 2 shapes, fastest first"
        );
        assert!(table.lines().nth(1).unwrap().contains("L1 wf/LUP"));
        // The row: 97 µs bound + 1 latency + 0.5 turnover + 1.5 overhead = 100, 2.5 wavefronts.
        let row = table.lines().nth(2).unwrap();
        for part in ["100.000", "97.000", "1.000", "0.500", "1.500", "2.500"] {
            assert!(row.contains(part), "{part} in {row}");
        }
        r.context.l1_limiter_counts = "bytes";
        let table = r.to_table();
        assert!(table.lines().nth(1).unwrap().contains("L1 B/LUP"));
        assert!(table.lines().nth(2).unwrap().contains("64.000"));
    }

    #[test]
    fn json_and_csv_carry_the_context_and_each_shape_its_rank() {
        let r = ranking(&[100.0, 103.0]);
        let v = r.to_json();
        assert_eq!(v["kernel"], "star1");
        assert_eq!(v["hw"], "h200");
        assert_eq!(v["domain"], serde_json::json!([64, 64, 32]));
        assert_eq!(
            (v["clock_ghz"].as_f64(), v["clock"].as_str()),
            (Some(1.5), Some("base"))
        );
        assert_eq!(v["mode"], "exact");
        assert_eq!(v["tie_margin"], TIE_MARGIN);
        assert_eq!(v["shapes"][1]["rank"], 2);
        assert_eq!(v["shapes"][1]["tie"], true);
        assert_eq!(v["shapes"][1]["bound_by"], "l1");
        let csv = r.to_csv();
        let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let row: Vec<&str> = csv.lines().nth(2).unwrap().split(',').collect();
        assert_eq!(header.len(), row.len());
        let col = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
        assert_eq!(
            (col("rank"), col("tie"), col("clock_ghz"), col("clock")),
            ("2", "true", "1.5", "base")
        );
        assert_eq!(col("latency_s"), "0.000001");
    }
}
