//! The tracking kernel of `hw`: the per-point state, the numeric kernels, and the ten steps
//! `s1`..`s10` of one point in one frame (after the Cilk-F artifact's `compute_step1..10`).
//!
//! Every step reads and writes the point's buffers through `RwLock`s taken with `try_read` /
//! `try_write`: the dependency DAG orders every write of a buffer against every other access
//! to it, so a lock is never contended, and a failed `try_*` is reported as a violated
//! dependency (a panic) instead of being waited for. See the parent module for what each step
//! computes and why the DAG holds.

use super::video::Pos;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Every `TEMPLATE_UPDATE`-th frame the point's reference position and template are updated
/// (Rodinia: `frame_no % 10 == 0`).
pub const TEMPLATE_UPDATE: usize = 10;

/// The tracker's parameters (Rodinia's `tSize`, `sSize`, `maxMove`, `alpha`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Geometry {
    /// Template half size: the template is `(2·t_size + 1)²` pixels.
    pub t_size: usize,
    /// Search window half size: the window is `(2·s_size + 1)²` pixels. At least `t_size`.
    pub s_size: usize,
    /// Side of the box of allowed moves per frame (the mask convolution's kernel), at least 1.
    pub max_move: usize,
    /// Template update weight: `T ← alpha·T + (1 − alpha)·patch`.
    pub alpha: f32,
}

impl Geometry {
    /// Rodinia heartwall's parameters (`prows_fig2_inputs.csv`): 51 × 51 template, 81 × 81
    /// window, `maxMove = 10`, `alpha = 0.87`.
    pub const PAPER: Geometry = Geometry {
        t_size: 25,
        s_size: 40,
        max_move: 10,
        alpha: 0.87,
    };

    /// A small geometry for tests: 11 × 11 template, 21 × 21 window, `maxMove = 6`.
    pub const TEST: Geometry = Geometry {
        t_size: 5,
        s_size: 10,
        max_move: 6,
        alpha: 0.87,
    };

    /// Template side `tn = 2·t_size + 1`.
    pub fn tn(&self) -> usize {
        2 * self.t_size + 1
    }

    /// Window side `sn = 2·s_size + 1`.
    pub fn sn(&self) -> usize {
        2 * self.s_size + 1
    }

    /// Side of the full correlation `cn = tn + sn − 1`.
    pub fn cn(&self) -> usize {
        self.tn() + self.sn() - 1
    }

    /// Side of the zero-padded window `pn = sn + 2·tn`.
    pub fn pn(&self) -> usize {
        self.sn() + 2 * self.tn()
    }

    /// The correlation index of zero displacement, `s_size + t_size`.
    pub fn center(&self) -> usize {
        self.s_size + self.t_size
    }

    /// The mask convolution's offset, `ceil((max_move − 1)/2)`: a move from the previous
    /// position is accepted in `−offset ..= max_move − 1 − offset` (−5..=4 for 10).
    pub fn mask_offset(&self) -> usize {
        self.max_move / 2
    }
}

/// The template's statistics of step 3.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TemplateStats {
    /// The sum of the template's pixels.
    pub sum: f32,
    /// `sqrt(N − 1)·σ`, `N` pixels, `σ` their standard deviation (Rodinia's `denomT`).
    pub denom: f32,
}

/// Where a point is: its reference position (the centre of the search window and of the last
/// template update) and its position in the latest frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// Rodinia's `d_Row`/`d_Col`: updated every [`TEMPLATE_UPDATE`] frames.
    pub reference: Pos,
    /// The position tracked in the latest frame processed.
    pub current: Pos,
}

/// One sample point's state: its template, position, track, and the buffers of its steps.
#[derive(Debug)]
pub struct PointState {
    initial: Pos,
    place: RwLock<Place>,
    track: RwLock<Vec<Pos>>,
    tmpl: RwLock<Vec<f32>>,
    tmpl_rot: RwLock<Vec<f32>>,
    tmpl_sqr: RwLock<Vec<f32>>,
    stats: RwLock<TemplateStats>,
    win: RwLock<Vec<f32>>,
    win_sqr: RwLock<Vec<f32>>,
    conv: RwLock<Vec<f32>>,
    pad: RwLock<Vec<f32>>,
    sub: RwLock<Vec<f32>>,
    ls_sqr: RwLock<Vec<f32>>,
    mask: RwLock<Vec<f32>>,
    mask_h: RwLock<Vec<f32>>,
    boxes: RwLock<Vec<f32>>,
    patch: RwLock<Vec<f32>>,
}

impl PointState {
    /// A point starting at `initial`, with buffers for geometry `g`, its track reserved for
    /// `frames` frames (allocation happens here, not in the timed steps).
    pub fn new(initial: Pos, g: &Geometry, frames: usize) -> Self {
        let (tn, sn, cn, pn) = (g.tn(), g.sn(), g.cn(), g.pn());
        let buf = |n: usize| RwLock::new(vec![0f32; n]);
        PointState {
            initial,
            place: RwLock::new(Place {
                reference: initial,
                current: initial,
            }),
            track: RwLock::new(Vec::with_capacity(frames)),
            tmpl: buf(tn * tn),
            tmpl_rot: buf(tn * tn),
            tmpl_sqr: buf(tn * tn),
            stats: RwLock::new(TemplateStats::default()),
            win: buf(sn * sn),
            win_sqr: buf(sn * sn),
            conv: buf(cn * cn),
            pad: buf(pn * pn),
            sub: buf(cn * pn),
            ls_sqr: buf(cn * cn),
            mask: buf(cn * cn),
            mask_h: buf(cn * cn),
            boxes: buf(cn * cn),
            patch: buf(tn * tn),
        }
    }

    /// The bytes [`PointState::new`] allocates for one point with geometry `g` and `frames`
    /// frames: its buffers (an `f32` a pixel) and its track (a [`Pos`] a frame). In `f64`, so
    /// that no count of points times this can overflow.
    pub fn bytes(g: &Geometry, frames: usize) -> f64 {
        let (tn, sn, cn, pn) = (g.tn(), g.sn(), g.cn(), g.pn());
        let floats = 4 * tn * tn + 2 * sn * sn + 5 * cn * cn + pn * pn + cn * pn;
        (4 * floats) as f64 + (frames * std::mem::size_of::<Pos>()) as f64
    }

    /// The positions tracked so far, one per frame processed.
    pub fn track(&self) -> Vec<Pos> {
        rd(&self.track, "track").clone()
    }

    /// The current template (`tn × tn`, row-major).
    pub fn template(&self) -> Vec<f32> {
        rd(&self.tmpl, "template").clone()
    }

    /// The correlation buffer (`cn × cn`, row-major): after step 8 the normalised
    /// cross-correlation of the latest frame.
    pub fn correlation(&self) -> Vec<f32> {
        rd(&self.conv, "correlation").clone()
    }
}

/// A frame being processed: its number, pixels and the tracker's geometry.
#[derive(Debug, Clone, Copy)]
pub struct Frame<'a> {
    /// The frame number (0 = the frame the templates are taken from).
    pub no: usize,
    /// `rows · cols` pixels, row-major.
    pub pixels: &'a [f32],
    /// Frame height.
    pub rows: usize,
    /// Frame width.
    pub cols: usize,
    /// The tracker's parameters.
    pub geo: Geometry,
}

/// Read access to a buffer the DAG says nobody writes now.
fn rd<'a, T>(l: &'a RwLock<T>, what: &str) -> RwLockReadGuard<'a, T> {
    l.try_read().unwrap_or_else(|e| {
        panic!("hw: `{what}` is being written by an unordered step (dependency DAG violated): {e}")
    })
}

/// Write access to a buffer the DAG says nobody else accesses now.
fn wr<'a, T>(l: &'a RwLock<T>, what: &str) -> RwLockWriteGuard<'a, T> {
    l.try_write().unwrap_or_else(|e| {
        panic!("hw: `{what}` is accessed by an unordered step (dependency DAG violated): {e}")
    })
}

/// `i` clamped to `0..n`.
#[inline]
fn clamp_to(i: i64, n: usize) -> usize {
    i.clamp(0, n as i64 - 1) as usize
}

/// The `n × n` patch of `pixels` (`rows × cols`) whose top-left corner is `top_left`,
/// coordinates clamped to the frame (border pixels repeated), into `out`; `out_sqr`, if given,
/// receives the squares.
pub fn extract_patch(
    pixels: &[f32],
    rows: usize,
    cols: usize,
    top_left: (i64, i64),
    n: usize,
    out: &mut [f32],
    mut out_sqr: Option<&mut [f32]>,
) {
    for r in 0..n {
        let fr = clamp_to(top_left.0 + r as i64, rows);
        let src = &pixels[fr * cols..(fr + 1) * cols];
        let dst = &mut out[r * n..(r + 1) * n];
        for (c, d) in dst.iter_mut().enumerate() {
            *d = src[clamp_to(top_left.1 + c as i64, cols)];
        }
        if let Some(sq) = out_sqr.as_deref_mut() {
            for (s, &d) in sq[r * n..(r + 1) * n].iter_mut().zip(&*dst) {
                *s = d * d;
            }
        }
    }
}

/// The template rotated by 180° (row-major reversal) into `rot`, its squares into `sqr`.
pub fn rotate_and_square(t: &[f32], rot: &mut [f32], sqr: &mut [f32]) {
    for (r, &x) in rot.iter_mut().zip(t.iter().rev()) {
        *r = x;
    }
    for (s, &x) in sqr.iter_mut().zip(t) {
        *s = x * x;
    }
}

/// Step 3's statistics of a template `t` and its squares `sqr`: sums in index order, then
/// `mean = sum/N`, `var = max(0, sum_sqr/N − mean²)`, `denom = sqrt(N − 1)·sqrt(var)`.
pub fn template_stats(t: &[f32], sqr: &[f32]) -> TemplateStats {
    let n = t.len() as f32;
    let sum: f32 = t.iter().fold(0.0, |a, &x| a + x);
    let sum_sqr: f32 = sqr.iter().fold(0.0, |a, &x| a + x);
    let mean = sum / n;
    let var = (sum_sqr / n - mean * mean).max(0.0);
    TemplateStats {
        sum,
        denom: (n - 1.0).sqrt() * var.sqrt(),
    }
}

/// The full 2-D convolution of the `sn × sn` window `win` with the `tn × tn` rotated template
/// `rot` into the `cn × cn` output (`cn = sn + tn − 1`):
/// `out[i][j] = Σ_a Σ_b rot[a][b]·win[i−a][j−b]` over the valid terms, summed with `a`
/// increasing, then `b` increasing. As `rot` is the template rotated, `out[i][j]` is the
/// cross-correlation of the template with the window at top-left offset
/// `(i − tn + 1, j − tn + 1)`. The inner loop runs over `j` (an axpy the compiler vectorises);
/// each output's terms are still added in the stated order.
pub fn convolve_full(win: &[f32], sn: usize, rot: &[f32], tn: usize, out: &mut [f32]) {
    let cn = sn + tn - 1;
    assert!(win.len() == sn * sn && rot.len() == tn * tn && out.len() == cn * cn);
    for (i, orow) in out.chunks_exact_mut(cn).enumerate() {
        orow.fill(0.0);
        let lo = i.saturating_sub(sn - 1);
        let hi = i.min(tn - 1);
        for a in lo..=hi {
            let wrow = &win[(i - a) * sn..(i - a + 1) * sn];
            let trow = &rot[a * tn..(a + 1) * tn];
            for (b, &coef) in trow.iter().enumerate() {
                for (o, &x) in orow[b..b + sn].iter_mut().zip(wrow) {
                    *o += coef * x;
                }
            }
        }
    }
}

/// Pads the `sn × sn` array `src` with `tn` zeros on every side into the `pn × pn` array
/// `pad` (`pn = sn + 2·tn`) and replaces each column by its cumulative sum from the top.
pub fn pad_cumsum_vertical(src: &[f32], sn: usize, tn: usize, pad: &mut [f32]) {
    let pn = sn + 2 * tn;
    assert!(src.len() == sn * sn && pad.len() == pn * pn);
    pad.fill(0.0);
    for (r, srow) in src.chunks_exact(sn).enumerate() {
        pad[(r + tn) * pn + tn..(r + tn) * pn + tn + sn].copy_from_slice(srow);
    }
    for r in 1..pn {
        let (above, below) = pad.split_at_mut(r * pn);
        let prev = &above[(r - 1) * pn..];
        for (x, &p) in below[..pn].iter_mut().zip(prev) {
            *x += p;
        }
    }
}

/// From the column cumulative sums `pad` (`pn × pn`), the sums over `tn` consecutive rows:
/// `sub[i][j] = pad[i + tn][j] − pad[i][j]` for `i < cn = pn − tn − 1` (`sub` is `cn × pn`).
pub fn row_window_diff(pad: &[f32], pn: usize, tn: usize, sub: &mut [f32]) {
    let cn = pn - tn - 1;
    assert!(pad.len() == pn * pn && sub.len() == cn * pn);
    for (i, srow) in sub.chunks_exact_mut(pn).enumerate() {
        let hi = &pad[(i + tn) * pn..(i + tn + 1) * pn];
        let lo = &pad[i * pn..(i + 1) * pn];
        for ((s, &h), &l) in srow.iter_mut().zip(hi).zip(lo) {
            *s = h - l;
        }
    }
}

/// Replaces each row of `a` (rows of `cols`) by its cumulative sum from the left.
pub fn cumsum_rows(a: &mut [f32], cols: usize) {
    for row in a.chunks_exact_mut(cols) {
        let mut s = 0.0f32;
        for x in row {
            s += *x;
            *x = s;
        }
    }
}

/// Calls `f(index, local_sum)` for every element of the `cn × cn` local sums obtained from the
/// row cumulative sums `sub` (`cn × pn`): `local[i][j] = sub[i][j + tn] − sub[i][j]`.
#[inline]
fn for_each_local_sum(sub: &[f32], pn: usize, tn: usize, mut f: impl FnMut(usize, f32)) {
    let cn = pn - tn - 1;
    for (i, srow) in sub.chunks_exact(pn).enumerate() {
        for (j, (&h, &l)) in srow[tn..tn + cn].iter().zip(&srow[..cn]).enumerate() {
            f(i * cn + j, h - l);
        }
    }
}

/// The local sums of an `sn × sn` array over every `tn × tn` window position of the full
/// correlation (`cn × cn`, windows partly outside count zeros), by the steps' own pipeline
/// (pad, column cumulative sums, row differences, row cumulative sums, column differences).
/// Used by the tests against a direct summation.
pub fn local_sums(src: &[f32], sn: usize, tn: usize) -> Vec<f32> {
    let (pn, cn) = (sn + 2 * tn, sn + tn - 1);
    let mut pad = vec![0f32; pn * pn];
    let mut sub = vec![0f32; cn * pn];
    let mut out = vec![0f32; cn * cn];
    pad_cumsum_vertical(src, sn, tn, &mut pad);
    row_window_diff(&pad, pn, tn, &mut sub);
    cumsum_rows(&mut sub, pn);
    for_each_local_sum(&sub, pn, tn, |k, v| out[k] = v);
    out
}

/// The box sums of the mask convolution: `out[i][j] = Σ mask[p][q]` over
/// `p ∈ [i + off + 1 − m, i + off]`, `q ∈ [j + off + 1 − m, j + off]` inside the `cn × cn`
/// array (`m = max_move`, `off = m/2`), computed by rows into `tmp` then by columns. The
/// mask holds 0 and 1, so every sum is a small integer, exact in `f32` in any order.
pub fn mask_box(mask: &[f32], cn: usize, m: usize, tmp: &mut [f32], out: &mut [f32]) {
    let off = m / 2;
    let range = |i: usize| {
        let lo = (i + off + 1).saturating_sub(m);
        let hi = (i + off).min(cn - 1);
        lo..=hi
    };
    for (mrow, trow) in mask.chunks_exact(cn).zip(tmp.chunks_exact_mut(cn)) {
        for (j, t) in trow.iter_mut().enumerate() {
            *t = mrow[range(j)].iter().sum();
        }
    }
    for (i, orow) in out.chunks_exact_mut(cn).enumerate() {
        orow.fill(0.0);
        for p in range(i) {
            for (o, &t) in orow.iter_mut().zip(&tmp[p * cn..(p + 1) * cn]) {
                *o += t;
            }
        }
    }
}

/// The position of the largest strictly positive `corr[i][j]·boxes[i][j]` (`cn × cn`),
/// scanning column by column (Rodinia's column-major order; the first maximum wins), or
/// `None` if no product is positive.
pub fn argmax_positive(corr: &[f32], boxes: &[f32], cn: usize) -> Option<(usize, usize)> {
    let mut best = 0.0f32;
    let mut at = None;
    for j in 0..cn {
        for i in 0..cn {
            let v = corr[i * cn + j] * boxes[i * cn + j];
            if v > best {
                best = v;
                at = Some((i, j));
            }
        }
    }
    at
}

/// Frame 0 (Rodinia's `compute_startup`): the point is at its initial position, which is its
/// reference, and its template is the `tn × tn` patch of frame 0 centred on it.
pub fn startup(f: &Frame<'_>, p: &PointState) {
    let t = f.geo.t_size as i64;
    let at = p.initial;
    *wr(&p.place, "place") = Place {
        reference: at,
        current: at,
    };
    let mut track = wr(&p.track, "track");
    track.clear();
    track.push(at);
    let mut tmpl = wr(&p.tmpl, "template");
    let corner = (i64::from(at.row) - t, i64::from(at.col) - t);
    extract_patch(
        f.pixels,
        f.rows,
        f.cols,
        corner,
        f.geo.tn(),
        &mut tmpl,
        None,
    );
}

/// Step 1: the `sn × sn` search window centred on the reference position, and its squares.
pub fn s1(f: &Frame<'_>, p: &PointState) {
    let s = f.geo.s_size as i64;
    let at = rd(&p.place, "place").reference;
    let (mut win, mut win_sqr) = (wr(&p.win, "window"), wr(&p.win_sqr, "window²"));
    let corner = (i64::from(at.row) - s, i64::from(at.col) - s);
    let n = f.geo.sn();
    extract_patch(
        f.pixels,
        f.rows,
        f.cols,
        corner,
        n,
        &mut win,
        Some(&mut win_sqr),
    );
}

/// Step 2: the template rotated by 180° and the template squared.
pub fn s2(_f: &Frame<'_>, p: &PointState) {
    let t = rd(&p.tmpl, "template");
    let (mut rot, mut sqr) = (
        wr(&p.tmpl_rot, "rotated template"),
        wr(&p.tmpl_sqr, "template²"),
    );
    rotate_and_square(&t, &mut rot, &mut sqr);
}

/// Step 3: the template's sum and `denomT` (from the template and step 2's squares).
pub fn s3(_f: &Frame<'_>, p: &PointState) {
    let t = rd(&p.tmpl, "template");
    let sqr = rd(&p.tmpl_sqr, "template²");
    *wr(&p.stats, "template statistics") = template_stats(&t, &sqr);
}

/// Step 4: the full convolution of the window (step 1) with the rotated template (step 2).
pub fn s4(f: &Frame<'_>, p: &PointState) {
    let win = rd(&p.win, "window");
    let rot = rd(&p.tmpl_rot, "rotated template");
    let mut conv = wr(&p.conv, "correlation");
    convolve_full(&win, f.geo.sn(), &rot, f.geo.tn(), &mut conv);
}

/// Step 5: local sum 1, first half: pad the window (step 1), cumulative sums down the
/// columns, differences of rows `tn` apart (into the shared `sub` buffer).
pub fn s5(f: &Frame<'_>, p: &PointState) {
    let (sn, tn, pn) = (f.geo.sn(), f.geo.tn(), f.geo.pn());
    let win = rd(&p.win, "window");
    let mut pad = wr(&p.pad, "padded window");
    let mut sub = wr(&p.sub, "row sums");
    pad_cumsum_vertical(&win, sn, tn, &mut pad);
    row_window_diff(&pad, pn, tn, &mut sub);
}

/// Step 6: local sum 1, second half: cumulative sums along the rows of `sub` (step 5),
/// differences of columns `tn` apart = the local sums `L`; stores `L²` and turns the
/// convolution (step 4) into the numerator `conv − L·sum(T)/N` (step 3's sum).
pub fn s6(f: &Frame<'_>, p: &PointState) {
    let (tn, pn) = (f.geo.tn(), f.geo.pn());
    let n = (tn * tn) as f32;
    let sum = rd(&p.stats, "template statistics").sum;
    let mut sub = wr(&p.sub, "row sums");
    let mut ls_sqr = wr(&p.ls_sqr, "local sums²");
    let mut conv = wr(&p.conv, "correlation");
    cumsum_rows(&mut sub, pn);
    for_each_local_sum(&sub, pn, tn, |k, l| {
        ls_sqr[k] = l * l;
        conv[k] -= l * sum / n;
    });
}

/// Step 7: local sum 2, first half: pad the squared window (step 1) into the padded buffer
/// step 5 used, cumulative sums down the columns.
pub fn s7(f: &Frame<'_>, p: &PointState) {
    let win_sqr = rd(&p.win_sqr, "window²");
    let mut pad = wr(&p.pad, "padded window");
    pad_cumsum_vertical(&win_sqr, f.geo.sn(), f.geo.tn(), &mut pad);
}

/// Step 8: local sum 2, rest: row differences of step 7's sums into `sub` (which step 6
/// used), cumulative sums along the rows, column differences = the local sums of squares
/// `L2`; then the correlation `numerator / (denomT·sqrt(max(0, L2 − L²/N)))` in place.
pub fn s8(f: &Frame<'_>, p: &PointState) {
    let (tn, pn) = (f.geo.tn(), f.geo.pn());
    let n = (tn * tn) as f32;
    let denom = rd(&p.stats, "template statistics").denom;
    let pad = rd(&p.pad, "padded window");
    let ls_sqr = rd(&p.ls_sqr, "local sums²");
    let mut sub = wr(&p.sub, "row sums");
    let mut conv = wr(&p.conv, "correlation");
    row_window_diff(&pad, pn, tn, &mut sub);
    cumsum_rows(&mut sub, pn);
    for_each_local_sum(&sub, pn, tn, |k, l2| {
        let d = (l2 - ls_sqr[k] / n).max(0.0).sqrt();
        conv[k] /= denom * d;
    });
}

/// Step 9: the template mask: zeros with a one at the previous frame's position relative to
/// the reference (the centre index is zero displacement), clamped to the array.
pub fn s9(f: &Frame<'_>, p: &PointState) {
    let cn = f.geo.cn();
    let c = f.geo.center() as i64;
    let pl = *rd(&p.place, "place");
    let i = clamp_to(c + i64::from(pl.current.row - pl.reference.row), cn);
    let j = clamp_to(c + i64::from(pl.current.col - pl.reference.col), cn);
    let mut mask = wr(&p.mask, "mask");
    mask.fill(0.0);
    mask[i * cn + j] = 1.0;
}

/// Step 10: the mask convolution (step 9) times the correlation (step 8), its positive
/// maximum = the new position (if there is none the point stays put); every
/// [`TEMPLATE_UPDATE`]-th frame the reference moves there and the template becomes
/// `alpha·T + (1 − alpha)·(patch of this frame centred on the new position)`.
pub fn s10(f: &Frame<'_>, p: &PointState) {
    let g = f.geo;
    let cn = g.cn();
    let mask = rd(&p.mask, "mask");
    let conv = rd(&p.conv, "correlation");
    let mut tmp = wr(&p.mask_h, "mask row sums");
    let mut boxes = wr(&p.boxes, "mask box sums");
    mask_box(&mask, cn, g.max_move, &mut tmp, &mut boxes);
    let mut place = wr(&p.place, "place");
    let new = match argmax_positive(&conv, &boxes, cn) {
        Some((i, j)) => Pos {
            row: place.reference.row + i as i32 - g.center() as i32,
            col: place.reference.col + j as i32 - g.center() as i32,
        },
        None => place.current,
    };
    place.current = new;
    wr(&p.track, "track").push(new);
    if f.no.is_multiple_of(TEMPLATE_UPDATE) {
        place.reference = new;
        let t = g.t_size as i64;
        let corner = (i64::from(new.row) - t, i64::from(new.col) - t);
        let tn = g.tn();
        let mut tmpl = wr(&p.tmpl, "template");
        let mut patch = wr(&p.patch, "template patch");
        extract_patch(f.pixels, f.rows, f.cols, corner, tn, &mut patch, None);
        let a = g.alpha;
        for (x, &v) in tmpl.iter_mut().zip(patch.iter()) {
            *x = a * *x + (1.0 - a) * v;
        }
    }
}
