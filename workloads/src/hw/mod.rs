//! `hw`: Rodinia heartwall's tracking computation, as adapted by the ProWS (Cilk-F) artifact
//! (ProWS Figure 2): 51 sample points on the inner and outer walls of a mouse heart followed
//! through an ultrasound video by template matching with normalised cross-correlation.
//!
//! # Algorithm
//!
//! Every point has a reference position `ref` (Rodinia's `d_Row`/`d_Col`), its position in
//! the previous frame `prev`, and a `tn × tn` template `T` (`tn = 2·tSize + 1 = 51`). Frame 0
//! sets `ref = prev =` the initial position and `T =` the frame's patch centred there
//! ([`steps::startup`]). Every later frame runs, for every point independently, the ten steps
//! of the artifact's `compute_step1..10` (`sn = 2·sSize + 1 = 81` the search window,
//! `cn = sn + tn − 1 = 131` the full correlation, `pn = sn + 2·tn = 183` the padded window,
//! `N = tn²`):
//!
//! | step | reads | computes (writes) |
//! |------|-------|-------------------|
//! | s1 | frame, `ref` | the `sn × sn` window `W` centred on `ref`, and `W²` |
//! | s2 | `T` | `T` rotated by 180° (`Trot`) and `T²` |
//! | s3 | `T`, `T²` (s2) | `sum(T)`, `denomT = sqrt(N−1)·σ(T)` |
//! | s4 | `W` (s1), `Trot` (s2) | `C =` full 2-D convolution of `W` with `Trot` (`cn × cn`; the cross-correlation of `T` at every offset) |
//! | s5 | `W` (s1) | local sum 1, first half: `W` zero-padded by `tn` into `pad`, cumulative sums down its columns, differences of rows `tn` apart into `sub` (`cn × pn`) |
//! | s6 | `sub` (s5), `C` (s4), `sum(T)` (s3) | cumulative sums along the rows of `sub`, differences of columns `tn` apart: the window sums `L` (`cn × cn`); stores `L²`, and `C ← C − L·sum(T)/N` (the numerator) |
//! | s7 | `W²` (s1) | local sum 2, first half: `W²` padded into the same `pad` buffer, cumulative sums down the columns |
//! | s8 | `pad` (s7), `L²` (s6), `C` (s6), `denomT` (s3) | row differences into the same `sub` buffer, row cumulative sums, column differences: `L2`; `C ← C / (denomT·sqrt(max(0, L2 − L²/N)))`, the normalised cross-correlation |
//! | s9 | `prev`, `ref` | the `cn × cn` mask: zeros and a one at `prev − ref` (relative to the zero-displacement index `sSize + tSize`) |
//! | s10 | mask (s9), `C` (s8) | the mask convolved with a `maxMove × maxMove` box (so only moves of −5..=+4 from `prev` count), times `C`; the largest positive product is the new position `prev` (`ref +` its displacement); every 10th frame `ref ←` it and `T ← α·T + (1 − α)·patch` |
//!
//! # Why the dependency DAG holds
//!
//! The artifact's DAG is s3 after s2; s4 after s1, s2; s5 after s1; s6 after s3, s4, s5; s7
//! after s5; s8 after s6, s7; s10 after s8, s9 (s1, s2, s9 have none). Each edge is a data
//! dependence of the table above: s3 sums s2's `T²`; s4 convolves s1's `W` with s2's `Trot`;
//! s5 pads s1's `W`; s6 reads s3's `sum(T)`, s4's `C` and s5's `sub`; s8 reads s7's `pad`,
//! s6's `L²` and numerator; s10 reads s8's correlation and s9's mask. Two edges are
//! anti-dependences, because (as in the artifact) steps reuse buffers: s7 overwrites the `pad`
//! buffer s5 reads (s7 after s5), and s8 overwrites the `sub` buffer s6 reads and updates (s8
//! after s6). The template update of s10 writes `T` and `ref`, which s1, s2, s3 and s9 read:
//! all of them precede s10 in the DAG (s1, s2, s3 through s8, s9 directly). Frames are
//! processed in order, with a barrier between frames: frame `f + 1`'s s1/s9 read the `ref`
//! and `prev` that frame `f`'s s10 wrote. Every buffer is behind an `RwLock` taken with
//! `try_read`/`try_write`: a step running concurrently with an unordered access to one of its
//! buffers panics, so a run that passes its check also never raced (see [`steps`]).
//!
//! # Variants
//!
//! In every variant the points of a frame are processed in parallel by a spawn tree
//! (recursive halving with `join`, the artifact's `cilk_for`), frame after frame. Frame 0
//! (template extraction) is part of the timed run, as in the artifact's timed loop.
//!
//! * `fj`: a point's steps as fork-join stages that respect the DAG: `{s1, s2, s9}`, then
//!   `{s3, s4, s5}`, then `{s6, s7}`, then `s8`, then `s10`.
//! * `sf`: the steps as structured futures, each touched once by the point's task, in the
//!   artifact's `STRUCTURED_FUTURES` order: create s1, s2, s9; get s2; create s3; get s1;
//!   create s4, s5; get s5; create s7; get s3, s4; create s6; get s7, s6; create s8; get s9,
//!   s8; create s10; get s10.
//! * `gf`: the steps as general (multi-touch) futures, created in a topological order; every
//!   step's task touches the futures of all its predecessors itself (s1 is touched by s4 and
//!   s5, s2 by s3 and s4, s5 by s6 and s7, ...), the point's task touches s10 (the artifact's
//!   `NONBLOCKING_FUTURES`). The futures of s3 to s8 wait for their predecessors and are
//!   touched by sibling step tasks, not by their creator's subtree: the shape that can
//!   deadlock on rayon's helping touch with P >= 2 (see `schedulers/src/rayon/mod.rs`), so
//!   rayon does not run `gf`.
//!
//! The async front-end has the same three: [`AsyncWorker::join`] for `fj`,
//! [`AsyncWorker::spawn`] and awaits of the handles for `sf`, [`AsyncWorker::spawn_shared`]
//! and [`AsyncShared::get`] for `gf`.
//!
//! # Floating point and the check
//!
//! All arithmetic is `f32` (Rodinia's `fp`). Every variant calls the same step functions on
//! the same data, each step computes its values in one fixed order whatever runs it, and no
//! value is combined across tasks, so correlations, templates and positions are bit-identical
//! in every variant and on every runtime. The check compares, exactly, every frame's 51
//! tracked positions (integers) and the final templates (bit patterns) with the serial
//! version computed once by [`HwInput::new`] (untimed).
//!
//! # Input
//!
//! By default a synthetic video ([`video`]): 104 frames of 609 × 590 (width × height) of two
//! beating, drifting rings on moving speckle, seeded, with points initialised on the rings of
//! frame 0 (20 on the inner ring, the endocardium, 31 on the outer, the epicardium).
//!
//! A real video can be given instead ([`InputOptions::hw_video`], the harness's
//! `--hw-video PATH`), such as Rodinia's `test.avi`: an uncompressed AVI read by [`avi`]
//! (8-bit gray or palette, 24-bit colour converted to gray, any frame size). Then:
//!
//! * Frames: the first `min(frames in the file, the size's frames)` frames (all 104 of
//!   `test.avi` at `paper`, 12 at `small` and `test`, 4 at `quick`), as Rodinia's
//!   `frames_processed` argument takes a prefix. The size still sets the tracker's geometry
//!   (`test`: [`Geometry::TEST`], others [`Geometry::PAPER`]).
//! * Initial points: from a points file if one is given ([`InputOptions::hw_points`],
//!   `--hw-points PATH`: one `row col` per line, 0-based, row 0 at the top; see
//!   [`parse_points`]); otherwise [`points_for`]: for a 609 × 590 video, Rodinia's 51 points
//!   ([`RODINIA_POINTS`], the values hard-coded in Rodinia's and the artifact's `main`, which
//!   are 1-based in the flipped, top-down frame, converted to 0-based), else the synthetic
//!   layout (20 + 31 points on two rings around the frame's centre) scaled to the frame.
//! * Memory: the file and its decoded frames are bounded by the rule of every size parameter
//!   (3/4 of the machine's physical memory, [`check_memory`]), checked by [`avi`] before the
//!   frames are allocated: a short file of zero-length chunks (each repeating the previous
//!   frame) cannot make it allocate more than that.
//! * Memory of the points: the frames with, per point, two sets of its state (the serial
//!   reference's and one repetition's, [`PointState::bytes`]) and its answer must fit in the
//!   same limit ([`check_points_memory`]), checked when the points file is read, before any
//!   state is allocated.
//! * The serial reference is computed on those frames and points (untimed, in
//!   [`Workload::input_with`]), so every run is still checked against it.
//! * The parameters ([`Workload::params_with`]) name the file, its FNV-1a 64-bit
//!   fingerprint, its format, the frames used and where the points came from, so a result
//!   says which input it measured.
//!
//! Pixels are gray levels `b / 255` for both sources (Rodinia keeps `0..=255`; the tracking is
//! invariant under that scale, see [`avi`]).
//!
//! # Differences from Rodinia/the artifact
//!
//! Row-major 0-based storage instead of column-major 1-based; cumulative sums in `f32` (the
//! artifact accumulates them in an `int`, truncating); window and patch coordinates clamped to
//! the frame (the artifact reads out of bounds near edges); the template variance clamped at
//! 0; if no masked correlation is positive the point stays put (the artifact jumps to index 0).
//! Like the artifact, `denomT` is the population deviation times `sqrt(N − 1)`, so the
//! correlation is the textbook normalised cross-correlation times `sqrt(N/(N − 1))`.

pub mod avi;
pub mod steps;
pub mod video;

use crate::params::{check_memory, check_memory_within, memory_limit};
use crate::{Checked, InputOptions, Params, Size, Variant, Workload};
pub use avi::AviInfo;
use std::future::Future;
use std::path::{Path, PathBuf};
use stealbench_schedulers::{
    AsyncForkJoin, AsyncShared, AsyncWorker, ForkJoin, FutureForkJoin, FutureHandle, Futures,
    SharedHandle, Worker,
};
pub use steps::{Frame, Geometry, PointState, TEMPLATE_UPDATE};
pub use video::{Pos, Video, VideoSpec};

/// The workload marker type.
#[derive(Debug)]
pub struct Hw;

/// One of the ten steps of a point in a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Step {
    /// [`steps::s1`]
    S1,
    /// [`steps::s2`]
    S2,
    /// [`steps::s3`]
    S3,
    /// [`steps::s4`]
    S4,
    /// [`steps::s5`]
    S5,
    /// [`steps::s6`]
    S6,
    /// [`steps::s7`]
    S7,
    /// [`steps::s8`]
    S8,
    /// [`steps::s9`]
    S9,
    /// [`steps::s10`]
    S10,
}

impl Step {
    /// The steps in the serial order.
    pub const ALL: [Step; 10] = [
        Step::S1,
        Step::S2,
        Step::S3,
        Step::S4,
        Step::S5,
        Step::S6,
        Step::S7,
        Step::S8,
        Step::S9,
        Step::S10,
    ];

    /// The steps this one must follow (the artifact's DAG).
    pub fn deps(self) -> &'static [Step] {
        use Step::*;
        match self {
            S1 | S2 | S9 => &[],
            S3 => &[S2],
            S4 => &[S1, S2],
            S5 => &[S1],
            S6 => &[S3, S4, S5],
            S7 => &[S5],
            S8 => &[S6, S7],
            S10 => &[S8, S9],
        }
    }

    /// Runs the step for point `p` of frame `f`.
    pub fn run(self, f: &Frame<'_>, p: &PointState) {
        match self {
            Step::S1 => steps::s1(f, p),
            Step::S2 => steps::s2(f, p),
            Step::S3 => steps::s3(f, p),
            Step::S4 => steps::s4(f, p),
            Step::S5 => steps::s5(f, p),
            Step::S6 => steps::s6(f, p),
            Step::S7 => steps::s7(f, p),
            Step::S8 => steps::s8(f, p),
            Step::S9 => steps::s9(f, p),
            Step::S10 => steps::s10(f, p),
        }
    }
}

/// What a frame does to each point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Frame 0: [`steps::startup`].
    Startup,
    /// The ten steps as fork-join stages.
    Fj,
    /// The ten steps as structured futures.
    Sf,
    /// The ten steps as general futures.
    Gf,
}

/// What the closure front-end does to one point of a frame: [`steps::startup`] or a variant's
/// ten steps ([`point_fj`], [`point_sf`], [`point_gf`]).
type PointFn<W> = fn(&W, &Frame<'_>, &PointState);

/// The points of a frame in parallel: recursive halving with `join`, `point` on each.
fn points<W: Worker>(w: &W, f: &Frame<'_>, states: &[PointState], point: PointFn<W>) {
    match states {
        [] => {}
        [p] => point(w, f, p),
        _ => {
            let (a, b) = states.split_at(states.len() / 2);
            w.join(|w| points(w, f, a, point), |w| points(w, f, b, point));
        }
    }
}

/// Every frame on `pool`: the startup on frame 0, then `point` on each point of the others.
fn frames<S: ForkJoin>(pool: &S, input: &HwInput, work: &HwWork, point: PointFn<S::Worker>) {
    let states = &work.states[..];
    pool.run(|w| {
        for t in 0..input.video.frames {
            let step: PointFn<S::Worker> = if t == 0 {
                |_, f, p| steps::startup(f, p)
            } else {
                point
            };
            points(w, &input.frame(t), states, step);
        }
    });
}

/// Fork-join: `{s1, s2, s9}`, `{s3, s4, s5}`, `{s6, s7}`, `s8`, `s10`.
pub fn point_fj<W: Worker>(w: &W, f: &Frame<'_>, p: &PointState) {
    w.join(
        |_| steps::s1(f, p),
        |w| w.join(|_| steps::s2(f, p), |_| steps::s9(f, p)),
    );
    w.join(
        |w| w.join(|_| steps::s3(f, p), |_| steps::s4(f, p)),
        |_| steps::s5(f, p),
    );
    w.join(|_| steps::s6(f, p), |_| steps::s7(f, p));
    steps::s8(f, p);
    steps::s10(f, p);
}

/// Structured futures, each touched once by this task, in the artifact's order.
pub fn point_sf<W: Futures>(w: &W, f: &Frame<'_>, p: &PointState) {
    w.scope(|s, w| {
        let fut = |k: Step| w.future(s, move |_, _| k.run(f, p));
        let f1 = fut(Step::S1);
        let f2 = fut(Step::S2);
        let f9 = fut(Step::S9);
        f2.get(w);
        let f3 = fut(Step::S3);
        f1.get(w);
        let f4 = fut(Step::S4);
        let f5 = fut(Step::S5);
        f5.get(w);
        let f7 = fut(Step::S7);
        f3.get(w);
        f4.get(w);
        let f6 = fut(Step::S6);
        f7.get(w);
        f6.get(w);
        let f8 = fut(Step::S8);
        f9.get(w);
        f8.get(w);
        fut(Step::S10).get(w);
    });
}

/// A general future running step `k` after touching every future of `deps`.
fn gf_step<'s, W: Futures>(
    s: &W::Scope<'s>,
    w: &W,
    deps: Vec<W::SharedFuture<'s, ()>>,
    k: Step,
    f: Frame<'s>,
    p: &'s PointState,
) -> W::SharedFuture<'s, ()> {
    w.shared_future(s, move |_, w| {
        for d in &deps {
            d.get(w);
        }
        k.run(&f, p);
    })
}

/// General futures: every step's task touches its predecessors' futures.
pub fn point_gf<W: Futures>(w: &W, f: &Frame<'_>, p: &PointState) {
    let f = *f;
    w.scope(|s, w| {
        let f1 = gf_step(s, w, vec![], Step::S1, f, p);
        let f2 = gf_step(s, w, vec![], Step::S2, f, p);
        let f9 = gf_step(s, w, vec![], Step::S9, f, p);
        let f3 = gf_step(s, w, vec![f2.clone()], Step::S3, f, p);
        let f4 = gf_step(s, w, vec![f1.clone(), f2], Step::S4, f, p);
        let f5 = gf_step(s, w, vec![f1], Step::S5, f, p);
        let f6 = gf_step(s, w, vec![f3, f4, f5.clone()], Step::S6, f, p);
        let f7 = gf_step(s, w, vec![f5], Step::S7, f, p);
        let f8 = gf_step(s, w, vec![f6, f7], Step::S8, f, p);
        let f10 = gf_step(s, w, vec![f8, f9], Step::S10, f, p);
        f10.get(w);
    });
}

/// Step `k` of point `p` as a future of the async front-end.
async fn step_fut<'s>(k: Step, f: Frame<'s>, p: &'s PointState) {
    k.run(&f, p)
}

/// The points of a frame in parallel on the async front-end: recursive halving with
/// [`AsyncWorker::join`].
fn points_async<'s, C: AsyncWorker<'s>>(
    c: C,
    f: Frame<'s>,
    states: &'s [PointState],
    mode: Mode,
) -> impl Future<Output = ()> + Send + 's {
    async move {
        match states {
            [] => {}
            [p] => match mode {
                Mode::Startup => steps::startup(&f, p),
                Mode::Fj => point_fj_async(c, f, p).await,
                Mode::Sf => point_sf_async(c, f, p).await,
                Mode::Gf => point_gf_async(c, f, p).await,
            },
            _ => {
                let (a, b) = states.split_at(states.len() / 2);
                c.join(
                    move |c| points_async(c, f, a, mode),
                    move |c| points_async(c, f, b, mode),
                )
                .await;
            }
        }
    }
}

/// Fork-join on the async front-end: the stages of [`point_fj`], with the same
/// [`AsyncWorker::join`]s (`{s1, s2, s9}`, `{s3, s4, s5}`, `{s6, s7}`), then `s8` and `s10`.
pub async fn point_fj_async<'s, C: AsyncWorker<'s>>(c: C, f: Frame<'s>, p: &'s PointState) {
    let step = move |k: Step| move |_: C| step_fut(k, f, p);
    c.join(step(Step::S1), move |c| async move {
        c.join(step(Step::S2), step(Step::S9)).await
    })
    .await;
    c.join(
        move |c| async move { c.join(step(Step::S3), step(Step::S4)).await },
        step(Step::S5),
    )
    .await;
    c.join(step(Step::S6), step(Step::S7)).await;
    steps::s8(&f, p);
    steps::s10(&f, p);
}

/// Structured futures on the async front-end: spawned tasks awaited once each, in the order
/// of [`point_sf`].
pub async fn point_sf_async<'s, C: AsyncWorker<'s>>(c: C, f: Frame<'s>, p: &'s PointState) {
    let fut = |k: Step| c.spawn(move |_| step_fut(k, f, p));
    let f1 = fut(Step::S1).await;
    let f2 = fut(Step::S2).await;
    let f9 = fut(Step::S9).await;
    f2.await;
    let f3 = fut(Step::S3).await;
    f1.await;
    let f4 = fut(Step::S4).await;
    let f5 = fut(Step::S5).await;
    f5.await;
    let f7 = fut(Step::S7).await;
    f3.await;
    f4.await;
    let f6 = fut(Step::S6).await;
    f7.await;
    f6.await;
    let f8 = fut(Step::S8).await;
    f9.await;
    f8.await;
    fut(Step::S10).await.await;
}

/// General futures on the async front-end: [`AsyncWorker::spawn_shared`] tasks that await
/// their predecessors' handles, as in [`point_gf`].
pub async fn point_gf_async<'s, C: AsyncWorker<'s>>(c: C, f: Frame<'s>, p: &'s PointState) {
    let fut = |deps: Vec<C::Shared<()>>, k: Step| {
        c.spawn_shared(move |_| async move {
            for d in &deps {
                d.get().await;
            }
            k.run(&f, p);
        })
    };
    let f1 = fut(vec![], Step::S1).await;
    let f2 = fut(vec![], Step::S2).await;
    let f9 = fut(vec![], Step::S9).await;
    let f3 = fut(vec![f2.clone()], Step::S3).await;
    let f4 = fut(vec![f1.clone(), f2], Step::S4).await;
    let f5 = fut(vec![f1], Step::S5).await;
    let f6 = fut(vec![f3, f4, f5.clone()], Step::S6).await;
    let f7 = fut(vec![f5], Step::S7).await;
    let f8 = fut(vec![f6, f7], Step::S8).await;
    fut(vec![f8, f9], Step::S10).await.get().await;
}

/// The serial version: frame after frame, point after point, the steps in `order` (a
/// topological order of the DAG; [`Step::ALL`] is the artifact's serial code).
pub fn track_serial(input: &HwInput, states: &[PointState], order: &[Step]) {
    for t in 0..input.video.frames {
        let f = input.frame(t);
        for p in states {
            if t == 0 {
                steps::startup(&f, p);
            } else {
                for k in order {
                    k.run(&f, p);
                }
            }
        }
    }
}

/// The serial answer: every point's track (`tracks[point][frame]`) and final template.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// The position of every point in every frame.
    pub tracks: Vec<Vec<Pos>>,
    /// Every point's template after the last frame.
    pub templates: Vec<Vec<f32>>,
}

impl Reference {
    /// The answer held by `states` after a run.
    pub fn of(states: &[PointState]) -> Self {
        Reference {
            tracks: states.iter().map(PointState::track).collect(),
            templates: states.iter().map(PointState::template).collect(),
        }
    }
}

/// Where the initial points of a real video came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PointsOrigin {
    /// A points file ([`InputOptions::hw_points`]).
    File(PathBuf),
    /// Rodinia's 51 points ([`RODINIA_POINTS`]), for a 609 × 590 video.
    Rodinia,
    /// The synthetic video's ring layout scaled to the frame ([`points_for`]).
    Rings,
}

impl std::fmt::Display for PointsOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PointsOrigin::File(p) => write!(f, "from {}", p.display()),
            PointsOrigin::Rodinia => f.write_str("Rodinia's initial points"),
            PointsOrigin::Rings => f.write_str("on two rings around the frame's centre"),
        }
    }
}

/// A real video: the file, its fingerprint, its headers and where the points came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AviSource {
    /// The file, as given.
    pub path: PathBuf,
    /// FNV-1a 64-bit hash of the whole file.
    pub fingerprint: u64,
    /// What its headers say.
    pub info: AviInfo,
    /// Where the initial points came from.
    pub points: PointsOrigin,
}

/// Where the frames of an input came from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// The synthetic video of this spec.
    Synthetic(VideoSpec),
    /// A real AVI file.
    Avi(AviSource),
}

/// The input: the video, the tracker's parameters, the initial points and the serial answer.
#[derive(Debug, Clone)]
pub struct HwInput {
    /// Where the frames came from.
    pub source: Source,
    /// The frames.
    pub video: Video,
    /// The tracker's parameters.
    pub geometry: Geometry,
    /// The sample points in frame 0 (endocardium, then epicardium).
    pub initial: Vec<Pos>,
    /// The serial version's answer.
    pub reference: Reference,
}

impl HwInput {
    /// Generates the video of `spec` and computes the serial answer with geometry `g`.
    pub fn new(spec: VideoSpec, geometry: Geometry) -> Self {
        let video = spec.generate();
        let initial = spec.initial_points();
        HwInput::from_frames(Source::Synthetic(spec), video, initial, geometry)
    }

    /// Tracks `initial` through `video` serially with geometry `g` (the reference answer).
    /// Panics on an empty video or no points (the readers never produce them).
    pub fn from_frames(
        source: Source,
        video: Video,
        initial: Vec<Pos>,
        geometry: Geometry,
    ) -> Self {
        assert!(geometry.s_size >= geometry.t_size && geometry.max_move >= 1);
        assert!(video.frames >= 1 && video.rows >= 1 && video.cols >= 1 && !initial.is_empty());
        let mut input = HwInput {
            source,
            video,
            geometry,
            initial,
            reference: Reference {
                tracks: vec![],
                templates: vec![],
            },
        };
        let states = input.states();
        track_serial(&input, &states, &Step::ALL);
        input.reference = Reference::of(&states);
        input
    }

    /// Frame `t`.
    pub fn frame(&self, t: usize) -> Frame<'_> {
        Frame {
            no: t,
            pixels: self.video.frame(t),
            rows: self.video.rows,
            cols: self.video.cols,
            geo: self.geometry,
        }
    }

    /// Fresh point states for a run.
    pub fn states(&self) -> Vec<PointState> {
        let g = &self.geometry;
        (self.initial.iter())
            .map(|&p| PointState::new(p, g, self.video.frames))
            .collect()
    }
}

/// Per-repetition state: the points' states.
#[derive(Debug)]
pub struct HwWork {
    /// One per sample point.
    pub states: Vec<PointState>,
}

/// Compares a run's answer with the serial one: tracks exactly, templates bit for bit.
pub fn check_answer(want: &Reference, got: &Reference) -> Result<Checked, String> {
    if got.tracks.len() != want.tracks.len() {
        return Err(format!(
            "{} points tracked, expected {}",
            got.tracks.len(),
            want.tracks.len()
        ));
    }
    for (i, (g, w)) in got.tracks.iter().zip(&want.tracks).enumerate() {
        if g.len() != w.len() {
            return Err(format!(
                "point {i}: {} frames tracked, expected {}",
                g.len(),
                w.len()
            ));
        }
        if let Some(t) = (0..g.len()).find(|&t| g[t] != w[t]) {
            return Err(format!(
                "point {i}, frame {t}: at {:?}, the serial version has {:?}",
                g[t], w[t]
            ));
        }
    }
    for (i, (g, w)) in got.templates.iter().zip(&want.templates).enumerate() {
        let same = g.len() == w.len() && g.iter().zip(w).all(|(a, b)| a.to_bits() == b.to_bits());
        if !same {
            return Err(format!(
                "point {i}: final template differs from the serial version's"
            ));
        }
    }
    let frames = got.tracks.first().map_or(0, Vec::len);
    let last = match got.tracks.first().and_then(|t| t.last()) {
        Some(p) => format!(", point 0 last at row {}, column {}", p.row, p.col),
        None => String::new(),
    };
    Ok(Checked::new(
        format!(
            "{} points tracked through {frames} frames{last}",
            got.tracks.len()
        ),
        "the serial version's tracks, and its final templates bit for bit",
    ))
}

/// The parameters of a size: `frames` of the video and the `scale` of the synthetic video and
/// tracker geometry (`paper`: Rodinia's 609×590 frames and templates; `test`: a small frame
/// and small templates, for the test suite).
fn preset_of(size: Size) -> Params {
    let (frames, scale) = match size {
        Size::Paper => (104, "paper"),
        Size::Small => (12, "paper"),
        Size::Quick => (4, "paper"),
        Size::Test => (12, "test"),
    };
    Params::new().int("frames", frames).text("scale", scale)
}

/// The frame count, synthetic video and tracker geometry of parameters.
fn setup(params: &Params) -> Result<(usize, VideoSpec, Geometry), String> {
    let frames = match params.get_usize("frames")? {
        0 => return Err("frames=0: hw tracks through at least one frame".into()),
        f => f,
    };
    match params.get_text("scale") {
        "paper" => Ok((frames, VideoSpec::paper(frames), Geometry::PAPER)),
        "test" => Ok((frames, VideoSpec::test(frames), Geometry::TEST)),
        s => Err(format!("scale={s}: expected paper or test")),
    }
}

/// Rodinia heartwall's 51 initial points (20 endocardium, then 31 epicardium) as (row, col),
/// 0-based in the top-down frame: the values hard-coded in Rodinia's (and the Cilk-F
/// artifact's) `main`, which index the frame 1-based (a template is centred on row
/// `d_Row − 1` of the flipped frame), minus one.
pub const RODINIA_POINTS: [(i32, i32); 51] = [
    (368, 407),
    (399, 405),
    (428, 396),
    (451, 382),
    (475, 353),
    (485, 321),
    (478, 293),
    (457, 269),
    (432, 249),
    (403, 236),
    (373, 234),
    (345, 240),
    (317, 253),
    (293, 272),
    (276, 299),
    (268, 327),
    (274, 355),
    (286, 382),
    (310, 400),
    (338, 410),
    (389, 456),
    (418, 453),
    (447, 445),
    (473, 430),
    (500, 410),
    (518, 387),
    (534, 360),
    (541, 330),
    (542, 300),
    (537, 272),
    (527, 242),
    (510, 217),
    (490, 195),
    (465, 177),
    (437, 165),
    (405, 156),
    (375, 154),
    (346, 164),
    (317, 176),
    (290, 196),
    (274, 217),
    (258, 247),
    (255, 275),
    (251, 303),
    (251, 332),
    (256, 360),
    (265, 390),
    (282, 414),
    (304, 433),
    (330, 447),
    (359, 454),
];

/// The initial points of a real `rows × cols` video without a points file: Rodinia's
/// ([`RODINIA_POINTS`]) for Rodinia's 609 × 590 (width × height) video, otherwise the
/// synthetic layout (20 + 31 points on rings of radius `100·s` and `160·s` around the
/// frame's centre, `s = min(rows, cols) / 590`, as [`VideoSpec::initial_points`]).
pub fn points_for(rows: usize, cols: usize) -> (Vec<Pos>, PointsOrigin) {
    if (rows, cols) == (590, 609) {
        let pts = RODINIA_POINTS.iter().map(|&(row, col)| Pos { row, col });
        return (pts.collect(), PointsOrigin::Rodinia);
    }
    let s = rows.min(cols) as f64 / 590.0;
    let spec = VideoSpec {
        rows,
        cols,
        center: (rows as f64 / 2.0, cols as f64 / 2.0),
        r_endo: 100.0 * s,
        r_epi: 160.0 * s,
        ..VideoSpec::paper(1)
    };
    (spec.initial_points(), PointsOrigin::Rings)
}

/// `points` as a `--hw-points` file holds them, one `row col` line each: what
/// [`parse_points`] reads.
pub fn points_text(points: &[Pos]) -> String {
    points
        .iter()
        .map(|p| format!("{} {}\n", p.row, p.col))
        .collect()
}

/// Parses a points file: one `row col` pair per line (0-based, row 0 at the top; separated by
/// spaces, tabs or a comma), `#` starts a comment, blank lines are skipped. Every point must
/// lie in the `rows × cols` frame, and there must be at least one.
pub fn parse_points(text: &str, rows: usize, cols: usize) -> Result<Vec<Pos>, String> {
    let mut pts = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").replace(',', " ");
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.is_empty() {
            continue;
        }
        let bad = || {
            format!(
                "line {}: expected 'row col' (two integers), found '{}'",
                i + 1,
                line.trim()
            )
        };
        let [r, c] = fields[..] else {
            return Err(bad());
        };
        let (row, col): (i32, i32) = (r.parse().map_err(|_| bad())?, c.parse().map_err(|_| bad())?);
        if row < 0 || col < 0 || row as usize >= rows || col as usize >= cols {
            return Err(format!(
                "line {}: point (row {row}, col {col}) is outside the frame ({rows} rows of {cols} pixels)",
                i + 1
            ));
        }
        pts.push(Pos { row, col });
    }
    if pts.is_empty() {
        return Err("no points (one 'row col' pair per line)".to_string());
    }
    Ok(pts)
}

/// The 64-bit FNV-1a hash of `bytes` (a fingerprint of an input file).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// `Err` (one line, [`check_memory`]'s) when tracking `points` points through `video` with
/// geometry `g` needs more than the memory limit: the frames, and per point two sets of its
/// state (the serial reference's and one repetition's) and its answer (a track and a
/// template).
pub fn check_points_memory(video: &Video, points: usize, g: &Geometry) -> Result<(), String> {
    check_points_memory_within(video, points, g, memory_limit())
}

/// [`check_points_memory`] against `limit`.
fn check_points_memory_within(
    video: &Video,
    points: usize,
    g: &Geometry,
    limit: u64,
) -> Result<(), String> {
    let frames = 4.0 * video.frames as f64 * (video.rows * video.cols) as f64;
    let answer = (video.frames * std::mem::size_of::<Pos>() + 4 * g.tn() * g.tn()) as f64;
    let per_point = 2.0 * PointState::bytes(g, video.frames) + answer;
    check_memory_within(
        &format!(
            "{points} points over {} frames of {} x {} pixels",
            video.frames, video.cols, video.rows
        ),
        frames + points as f64 * per_point,
        limit,
    )
}

/// Reads the real video of `options` (at most `frames` frames) and its initial points, checked
/// against the memory limit for geometry `g` ([`check_points_memory`]); `Ok(None)` when no
/// video is given.
pub fn load_real(
    options: &InputOptions,
    frames: usize,
    g: &Geometry,
) -> Result<Option<(Video, AviSource, Vec<Pos>)>, String> {
    load_real_within(options, frames, g, memory_limit())
}

/// [`load_real`], its points checked against `limit` ([`check_points_memory`]).
fn load_real_within(
    options: &InputOptions,
    frames: usize,
    g: &Geometry,
    limit: u64,
) -> Result<Option<(Video, AviSource, Vec<Pos>)>, String> {
    let Some(path) = &options.hw_video else {
        return match &options.hw_points {
            Some(p) => Err(format!(
                "a points file ({}) is only read with a video (hw_video)",
                p.display()
            )),
            None => Ok(None),
        };
    };
    let bytes = avi::read_file(path)?;
    let a = avi::decode(&bytes, Some(frames)).map_err(|e| format!("{}: {e}", path.display()))?;
    let (rows, cols) = (a.video.rows, a.video.cols);
    let (initial, points) = match &options.hw_points {
        Some(p) => (read_points(p, rows, cols)?, PointsOrigin::File(p.clone())),
        None => points_for(rows, cols),
    };
    check_points_memory_within(&a.video, initial.len(), g, limit)?;
    let source = AviSource {
        path: path.clone(),
        fingerprint: fnv1a64(&bytes),
        info: a.info,
        points,
    };
    Ok(Some((a.video, source, initial)))
}

/// Reads and parses a points file for a `rows × cols` video; errors name the file.
fn read_points(path: &Path, rows: usize, cols: usize) -> Result<Vec<Pos>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read points file {}: {e}", path.display()))?;
    parse_points(&text, rows, cols).map_err(|e| format!("points file {}: {e}", path.display()))
}

/// The tracker's parameters as `params` lists them.
fn geometry_params(g: &Geometry) -> String {
    format!(
        "tSize={} sSize={} maxMove={} alpha={}",
        g.t_size, g.s_size, g.max_move, g.alpha
    )
}

impl Workload for Hw {
    const NAME: &'static str = "hw";
    const DESCRIPTION: &'static str = "heartwall: 51 points tracked through a video by normalised cross-correlation, 10-step DAG per point";
    const VARIANTS: &'static [Variant] = &[Variant::Fj, Variant::Sf, Variant::Gf];
    const ASYNC_VARIANTS: &'static [Variant] = &[Variant::Fj, Variant::Sf, Variant::Gf];

    type Input = HwInput;
    type Work = HwWork;
    type Answer = ();

    fn preset(size: Size) -> Params {
        preset_of(size)
    }

    fn input(params: &Params) -> Result<HwInput, String> {
        let (frames, v, g) = setup(params)?;
        // The synthetic video's pixels, an f32 each (a real video's frames are checked by the
        // reader, `avi::decode`, before it allocates them).
        check_memory(
            &format!("frames={frames}"),
            4.0 * frames as f64 * (v.rows * v.cols) as f64,
        )?;
        Ok(HwInput::new(v, g))
    }

    fn params_with(params: &Params, options: &InputOptions) -> Result<String, String> {
        let (frames, v, g) = setup(params)?;
        let Some((video, src, initial)) = load_real(options, frames, &g)? else {
            return Ok(format!(
                "{params}: {}x{}, {} points ({} endo + {} epi), {}",
                v.cols,
                v.rows,
                v.endo_points + v.epi_points,
                v.endo_points,
                v.epi_points,
                geometry_params(&g)
            ));
        };
        let i = &src.info;
        Ok(format!(
            "video {} (fnv1a64 {:016x}, {}x{} {}-bit {}, {} frames in the file), {} frames processed, {} points ({}), {}",
            src.path.display(),
            src.fingerprint,
            i.width,
            i.height,
            i.bit_count,
            i.format,
            i.frames_in_file,
            video.frames,
            initial.len(),
            src.points,
            geometry_params(&g)
        ))
    }

    fn input_with(params: &Params, options: &InputOptions) -> Result<HwInput, String> {
        let (frames, _, g) = setup(params)?;
        match load_real(options, frames, &g)? {
            None => Self::input(params),
            Some((video, src, initial)) => {
                Ok(HwInput::from_frames(Source::Avi(src), video, initial, g))
            }
        }
    }

    fn prepare(input: &HwInput) -> HwWork {
        HwWork {
            states: input.states(),
        }
    }

    fn run<S: ForkJoin>(pool: &S, variant: Variant, input: &HwInput, work: &mut HwWork) {
        match variant {
            Variant::Fj => frames(pool, input, work, point_fj),
            v => crate::not_without_futures::<Self>(v),
        }
    }

    fn run_futures<S: FutureForkJoin>(
        pool: &S,
        variant: Variant,
        input: &HwInput,
        work: &mut HwWork,
    ) {
        match variant {
            Variant::Sf => frames(pool, input, work, point_sf),
            Variant::Gf => frames(pool, input, work, point_gf),
            v => Self::run(pool, v, input, work),
        }
    }

    fn run_async<S: AsyncForkJoin>(pool: &S, variant: Variant, input: &HwInput, work: &mut HwWork) {
        let mode = match variant {
            Variant::Fj => Mode::Fj,
            Variant::Sf => Mode::Sf,
            Variant::Gf => Mode::Gf,
            v => panic!("hw has no async {v} variant"),
        };
        let states = &work.states[..];
        pool.run_async(|c| async move {
            for t in 0..input.video.frames {
                let m = if t == 0 { Mode::Startup } else { mode };
                let f = input.frame(t);
                c.call(move |c| points_async(c, f, states, m)).await;
            }
        });
    }

    fn kernel(input: &HwInput, work: &mut HwWork) {
        track_serial(input, &work.states, &Step::ALL);
    }

    fn check(input: &HwInput, work: &HwWork, _answer: &()) -> Result<Checked, String> {
        check_answer(&input.reference, &Reference::of(&work.states))
    }
}

#[cfg(test)]
mod tests;
