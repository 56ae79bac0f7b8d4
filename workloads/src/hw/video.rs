//! The input video of `hw`: a deterministic, seeded synthetic ultrasound-like sequence (two
//! bright rings on speckle that beat and drift), its initial sample points, and the true
//! motion of every point (to show the tracking is meaningful).
//!
//! # Model
//!
//! A frame is the image of a fixed *tissue* seen through a moving map. A tissue point `m`
//! appears at frame `t` at
//!
//! ```text
//! x(t) = c + d(t) + s(t)·(m − c),   s(t) = 1 + A·sin(2πt/P),
//! d(t) = (D_r·sin(2πt/Q), D_c·(1 − cos(2πt/Q)))
//! ```
//!
//! (`c` the heart's centre: the rings expand and contract with period `P` and the whole heart
//! drifts with period `Q`; `x(0) = m`). The tissue's brightness at `m` is
//!
//! ```text
//! v(m) = 0.15 + 0.25·τ(m) + 0.6·ring(|m − c|)·(0.4 + 0.6·τ(m)),
//! ring(ρ) = exp(−((ρ − R_endo)/w)²) + exp(−((ρ − R_epi)/w)²)
//! ```
//!
//! where `τ` is a speckle texture in `[0, 1)`: bilinear interpolation of seeded random values
//! on a lattice of spacing `L` tissue pixels. Because the speckle moves with the tissue, a
//! template has a unique best match in two dimensions (a bare ring would only fix the radial
//! position). Each pixel `x` of frame `t` takes `v` at `m = c + (x − c − d(t))/s(t)`, plus
//! fresh per-frame noise uniform in `±noise/2`, clamped to `[0, 1]` and quantised to 8 bits
//! (`round(255·v)/255`): the values an 8-bit grayscale AVI gives through
//! [`avi`](super::avi) (`byte / 255`; Rodinia's `get_frame` keeps the bytes `0..=255`
//! unscaled, which the tracking is invariant to).
//!
//! The parameters are chosen so that every point moves at most about 2 pixels per frame
//! (the tracker accepts −5..+4 per frame with `maxMove = 10`) and at most about 13 pixels
//! from its position at the last template update (the search window allows ±15). The
//! endocardium ring (radius `R_endo`) and the epicardium ring (`R_epi`) are farther apart than
//! a template's half size, so a template sees one ring.
//!
//! # Sample points
//!
//! `endo` points at equal angles on the endocardium ring of frame 0 and `epi` points on the
//! epicardium ring (angle `2πk/n`, starting at a quarter step), rounded to whole pixels. Their
//! true positions at frame `t` are `x(t)` of that (rounded) frame-0 position.

use crate::rng::SplitMix64;
use std::f64::consts::TAU;

/// A point of a frame: (row, column), 0-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pos {
    /// The row (0 = top).
    pub row: i32,
    /// The column (0 = left).
    pub col: i32,
}

/// The parameters of a synthetic video.
#[derive(Debug, Clone, PartialEq)]
pub struct VideoSpec {
    /// Frame height in pixels.
    pub rows: usize,
    /// Frame width in pixels.
    pub cols: usize,
    /// The number of frames.
    pub frames: usize,
    /// The seed of the speckle texture and of the per-frame noise.
    pub seed: u64,
    /// The heart's centre (row, column) at frame 0.
    pub center: (f64, f64),
    /// Radius of the endocardium ring (inner), pixels.
    pub r_endo: f64,
    /// Radius of the epicardium ring (outer), pixels.
    pub r_epi: f64,
    /// Ring half-width `w`, pixels.
    pub ring_width: f64,
    /// Relative amplitude `A` of the beat (expansion and contraction).
    pub beat_amplitude: f64,
    /// Beat period `P` in frames.
    pub beat_period: f64,
    /// Drift amplitudes (`D_r`, `D_c`) in pixels.
    pub drift: (f64, f64),
    /// Drift period `Q` in frames.
    pub drift_period: f64,
    /// Speckle lattice spacing `L`, tissue pixels.
    pub speckle: f64,
    /// Peak-to-peak amplitude of the per-frame noise.
    pub noise: f64,
    /// Sample points on the endocardium ring.
    pub endo_points: usize,
    /// Sample points on the epicardium ring.
    pub epi_points: usize,
}

impl VideoSpec {
    /// Rodinia heartwall's geometry: `frames` frames of 609 × 590 (the paper's input list;
    /// read here as width × height: 590 rows of 609 columns), 20 endocardium and 31
    /// epicardium points, rings of radius 100 and 160.
    pub fn paper(frames: usize) -> Self {
        VideoSpec {
            rows: 590,
            cols: 609,
            frames,
            seed: 0x4857_5eed_0000_0001,
            center: (295.0, 304.0),
            r_endo: 100.0,
            r_epi: 160.0,
            ring_width: 6.0,
            beat_amplitude: 0.03,
            beat_period: 20.0,
            drift: (3.0, 2.0),
            drift_period: 52.0,
            speckle: 4.0,
            noise: 0.08,
            endo_points: 20,
            epi_points: 31,
        }
    }

    /// A tiny video for tests (150 × 160, rings of radius 25 and 48, 8 + 12 points), to be
    /// tracked with [`Geometry::TEST`](super::Geometry::TEST).
    pub fn test(frames: usize) -> Self {
        VideoSpec {
            rows: 150,
            cols: 160,
            frames,
            seed: 0x4857_5eed_0000_0002,
            center: (75.0, 80.0),
            r_endo: 25.0,
            r_epi: 48.0,
            ring_width: 3.0,
            beat_amplitude: 0.03,
            beat_period: 20.0,
            drift: (1.0, 1.0),
            drift_period: 52.0,
            speckle: 2.0,
            noise: 0.08,
            endo_points: 8,
            epi_points: 12,
        }
    }

    /// The map of frame `t`: (scale `s(t)`, drift `d(t)`).
    fn motion(&self, t: usize) -> (f64, (f64, f64)) {
        let t = t as f64;
        let s = 1.0 + self.beat_amplitude * (TAU * t / self.beat_period).sin();
        let a = TAU * t / self.drift_period;
        (s, (self.drift.0 * a.sin(), self.drift.1 * (1.0 - a.cos())))
    }

    /// The initial sample points: the endocardium points, then the epicardium points.
    pub fn initial_points(&self) -> Vec<Pos> {
        let ring = |r: f64, n: usize| {
            (0..n).map(move |k| {
                let a = TAU * (k as f64 + 0.25) / n as f64;
                Pos {
                    row: (self.center.0 + r * a.cos()).round() as i32,
                    col: (self.center.1 + r * a.sin()).round() as i32,
                }
            })
        };
        ring(self.r_endo, self.endo_points)
            .chain(ring(self.r_epi, self.epi_points))
            .collect()
    }

    /// Where the tissue at frame-0 position `p` is at frame `t` (not rounded).
    pub fn true_position(&self, p: Pos, t: usize) -> (f64, f64) {
        let (s, d) = self.motion(t);
        let (c0, c1) = self.center;
        (
            c0 + d.0 + s * (f64::from(p.row) - c0),
            c1 + d.1 + s * (f64::from(p.col) - c1),
        )
    }

    /// The speckle texture `τ` at tissue position (`y`, `x`), in `[0, 1)`.
    fn speckle_at(&self, y: f64, x: f64) -> f64 {
        let (gy, gx) = (y / self.speckle, x / self.speckle);
        let (fy, fx) = (gy.floor(), gx.floor());
        let (ty, tx) = (gy - fy, gx - fx);
        let (iy, ix) = (fy as i64, fx as i64);
        let v = |dy: i64, dx: i64| lattice(self.seed, iy + dy, ix + dx);
        let top = v(0, 0) * (1.0 - tx) + v(0, 1) * tx;
        let bottom = v(1, 0) * (1.0 - tx) + v(1, 1) * tx;
        top * (1.0 - ty) + bottom * ty
    }

    /// Renders frame `t` into `out` (`rows · cols` values, row-major).
    fn render(&self, t: usize, out: &mut [f32]) {
        let (s, d) = self.motion(t);
        let (c0, c1) = self.center;
        let mut noise =
            SplitMix64::new(self.seed ^ (t as u64 + 1).wrapping_mul(0xA24B_AED4_963E_E407));
        for (r, row) in out.chunks_exact_mut(self.cols).enumerate() {
            let my = c0 + (r as f64 - c0 - d.0) / s;
            for (c, px) in row.iter_mut().enumerate() {
                let mx = c1 + (c as f64 - c1 - d.1) / s;
                let rho = (my - c0).hypot(mx - c1);
                let ring = (-((rho - self.r_endo) / self.ring_width).powi(2)).exp()
                    + (-((rho - self.r_epi) / self.ring_width).powi(2)).exp();
                let tau = self.speckle_at(my, mx);
                let u = (noise.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                let v = 0.15 + 0.25 * tau + 0.6 * ring * (0.4 + 0.6 * tau) + self.noise * (u - 0.5);
                *px = ((v.clamp(0.0, 1.0) * 255.0).round() / 255.0) as f32;
            }
        }
    }

    /// Generates the video. Frames are independent, so they are rendered on all available
    /// cores (plain threads; input generation is never timed); the result does not depend on
    /// the number of threads.
    pub fn generate(&self) -> Video {
        let n = self.rows * self.cols;
        let mut pixels = vec![0f32; n * self.frames];
        let threads = std::thread::available_parallelism().map_or(1, |p| p.get());
        let per = self.frames.div_ceil(threads).max(1);
        std::thread::scope(|sc| {
            for (k, chunk) in pixels.chunks_mut((n * per).max(1)).enumerate() {
                sc.spawn(move || {
                    for (i, frame) in chunk.chunks_exact_mut(n.max(1)).enumerate() {
                        self.render(k * per + i, frame);
                    }
                });
            }
        });
        Video {
            rows: self.rows,
            cols: self.cols,
            frames: self.frames,
            pixels,
        }
    }
}

/// The seeded random value in `[0, 1)` of lattice node (`iy`, `ix`).
fn lattice(seed: u64, iy: i64, ix: i64) -> f64 {
    let key = seed
        ^ (iy as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (ix as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    (SplitMix64::new(key).next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// A grayscale video: `frames` frames of `rows × cols` pixels in `[0, 1]`, row-major, frame
/// after frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Video {
    /// Frame height.
    pub rows: usize,
    /// Frame width.
    pub cols: usize,
    /// The number of frames.
    pub frames: usize,
    /// All pixels.
    pub pixels: Vec<f32>,
}

impl Video {
    /// The pixels of frame `t`.
    pub fn frame(&self, t: usize) -> &[f32] {
        let n = self.rows * self.cols;
        &self.pixels[t * n..(t + 1) * n]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_is_deterministic_and_in_range() {
        let spec = VideoSpec::test(3);
        let a = spec.generate();
        assert_eq!(a, spec.generate());
        assert_eq!(a.pixels.len(), 3 * 150 * 160);
        assert!(a.pixels.iter().all(|&v| (0.0..=1.0).contains(&v)));
        // Frames differ (motion and noise), and the rings are brighter than the background.
        assert_ne!(a.frame(0), a.frame(1));
        let at = |p: Pos| a.frame(0)[p.row as usize * 160 + p.col as usize];
        let on_rings: f32 = spec.initial_points().into_iter().map(at).sum::<f32>() / 20.0;
        let c = Pos { row: 75, col: 80 };
        let off = (at(c) + at(Pos { row: 75, col: 117 }) + at(Pos { row: 10, col: 10 })) / 3.0;
        assert!(on_rings > off + 0.2, "rings {on_rings}, background {off}");
    }

    #[test]
    fn points_lie_on_the_rings_and_move_slowly() {
        let spec = VideoSpec::paper(104);
        let pts = spec.initial_points();
        assert_eq!(pts.len(), 51);
        for (i, p) in pts.iter().enumerate() {
            let r = if i < 20 { 100.0 } else { 160.0 };
            let rho = (f64::from(p.row) - 295.0).hypot(f64::from(p.col) - 304.0);
            assert!((rho - r).abs() < 1.0, "point {i} at radius {rho}");
            for t in 1..104 {
                let (a, b) = (spec.true_position(*p, t - 1), spec.true_position(*p, t));
                assert!(
                    (a.0 - b.0).abs() < 2.0 && (a.1 - b.1).abs() < 2.0,
                    "{i} {t}"
                );
            }
        }
    }
}
