//! `fft`: recursive radix-2 fast Fourier transform of `n` complex points (Fibril's `fft`,
//! after Cilk-5's `fft.cilk`).
//!
//! # Algorithm
//!
//! The forward transform `X[k] = Σ_t x[t]·W^(kt)`, `W = e^(−2πi/n)`, `n` a power of two, by
//! Cooley–Tukey decimation in time, out of place: the transform of size `m` of the points
//! `x[off], x[off + s], x[off + 2s], …` (`s = n/m`) writes the transform of the even points
//! to the first half of its output and that of the odd points to the second half (the two
//! sub-transforms, in parallel), then combines them with `m/2` butterflies
//! `(a, b) ↦ (a + w·b, a − w·b)`, `w = W_m^k` (a parallel loop over ranges of `k`). The
//! butterflies are [`butterflies`]; the input is only read.
//!
//! A serial sub-transform ([`transform`], also the whole serial elision through [`serial`])
//! first gathers its `m` points in bit-reversed order into its output, which is where the
//! recursion's leaves would read them, then runs the same recursion in place ([`combine`]).
//! The gather reads the input at stride `n/m`: at the paper's size every load of a leaf misses
//! the cache and the TLB, and each cache line of the input is read by four leaves far apart
//! in time. Those loads are independent, so they overlap; they are the largest part of a
//! leaf's time (about half of the serial run for `n = 2^23`). Cilk-5 avoids strided reads by
//! copying (unshuffling) each level's points into place before recursing, a streaming pass
//! per level instead.
//!
//! The cutoff `b` (a power of two, the parameter `b`) is the grain of both kinds of
//! parallelism: a sub-transform of `b` points is one serial task, and the butterfly loop of a
//! larger transform is split down to ranges of `b` butterflies. Work is `5n·log2 n` flops
//! (plus a complex product per twiddle, below), span `Θ(log² n)` above the cutoff.
//!
//! Cilk-5's code is the same recursion with radix 2 to 32 (its `factor` picks 16 and 8 for
//! `2^26`), an explicit unshuffle pass per level and a table of `n` twiddles computed in
//! parallel inside the timed region. Here the twiddle `W_n^t` (every `W_m^k` is one of them,
//! `t = k·n/m`) is the product of two entries of [`Twiddles`], two tables of about `√n`
//! entries each computed with the input (untimed; they take microseconds, where Cilk's
//! `n/2` sines and cosines are part of its timed work).
//!
//! # Layout
//!
//! The output is `n/b` chunks of `b` points ([`Chunk`]); a sub-transform of `m ≥ b` points
//! owns `m/b` consecutive chunks, so the recursion splits slices of chunks and a serial task
//! works on one chunk (a transform) or on two (a range of butterflies: chunk `j` of the first
//! half with chunk `j` of the second).
//!
//! # Why a chunk is a `Mutex`
//!
//! As in `mm`: the async front-end lends borrows only for the whole
//! [`AsyncForkJoin::run_async`] scope, so a task that lends the halves of its `&mut` output to
//! its two sub-transforms could never get the whole back for its butterflies (safe Rust cannot
//! rejoin split `&mut` slices). So every variant shares the output as `&[Chunk]` and a serial
//! task takes its chunks' locks with `try_lock`; the algorithm never lets two tasks use the
//! same chunk at once, so a lock is never contended, and a failed `try_lock` is reported as a
//! race (a panic). One uncontended lock per `b` points (`b = 4096` by default) is negligible.
//!
//! # Check
//!
//! Untimed, by [`check_transform`]: every output value is finite; a few bins (0, 1, `n/2`,
//! `n − 1` and four seeded ones) agree with a direct `O(n)` evaluation of their sum
//! ([`dft_bin`]) within [`BIN_TOLERANCE`]`·‖X‖₂` (`‖X‖₂ = √n·‖x‖₂`, the scale of the FFT's
//! error bound `‖X̂ − X‖₂ = O(ε·log n·‖X‖₂)`); and the inverse transform of the output
//! (the same serial kernel on the conjugated output, conjugated and divided by `n`) reproduces
//! the input within a relative `L2` error of [`ROUND_TRIP_TOLERANCE`]. The round trip sees
//! any change of the output (a wrong value `ε` off moves the round trip by `ε/‖X‖₂`), the bins
//! see a consistent error of the kernel that its own inverse would undo. Input points are
//! uniform in `[0, 1)²`, as Cilk's `drand48` input.

use crate::params::check_memory;
use crate::rng::SplitMix64;
use crate::{Checked, Params, Size, Variant, Workload, parfor};
use std::future::Future;
use std::ops::{Add, Mul, Sub};
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};
use stealbench_schedulers::{AsyncForkJoin, AsyncWorker, ForkJoin, Worker};

/// The workload marker type.
#[derive(Debug)]
pub struct Fft;

/// A complex number.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Complex {
    /// Real part.
    pub re: f64,
    /// Imaginary part.
    pub im: f64,
}

impl Complex {
    /// `re + i·im`.
    pub const fn new(re: f64, im: f64) -> Self {
        Complex { re, im }
    }

    /// The complex conjugate.
    pub fn conj(self) -> Self {
        Complex::new(self.re, -self.im)
    }

    /// `|z|²`.
    pub fn norm_sqr(self) -> f64 {
        self.re * self.re + self.im * self.im
    }

    /// `z·s` for a real `s`.
    pub fn scale(self, s: f64) -> Self {
        Complex::new(self.re * s, self.im * s)
    }

    /// `e^(−2πi·t/n)`, the twiddle `W_n^t`, from one sine and cosine.
    pub fn root(t: u64, n: u64) -> Self {
        let (s, c) = (-2.0 * std::f64::consts::PI * (t % n) as f64 / n as f64).sin_cos();
        Complex::new(c, s)
    }
}

impl Add for Complex {
    type Output = Complex;
    #[inline]
    fn add(self, o: Complex) -> Complex {
        Complex::new(self.re + o.re, self.im + o.im)
    }
}

impl Sub for Complex {
    type Output = Complex;
    #[inline]
    fn sub(self, o: Complex) -> Complex {
        Complex::new(self.re - o.re, self.im - o.im)
    }
}

impl Mul for Complex {
    type Output = Complex;
    #[inline]
    fn mul(self, o: Complex) -> Complex {
        Complex::new(
            self.re * o.re - self.im * o.im,
            self.re * o.im + self.im * o.re,
        )
    }
}

/// The twiddles `W_n^t = e^(−2πi·t/n)`, `0 ≤ t < n/2`, of a transform of `n` points, as the
/// product `high[t >> shift]·low[t & mask]` of two tables of about `√(n/2)` entries (each
/// entry from its own sine and cosine; the product adds about one rounding error).
#[derive(Debug, Clone)]
pub struct Twiddles {
    n: usize,
    shift: u32,
    high: Vec<Complex>,
    low: Vec<Complex>,
}

impl Twiddles {
    /// The twiddles of a transform of `n` points (a power of two).
    ///
    /// # Panics
    /// If `n` is not a power of two.
    pub fn new(n: usize) -> Self {
        assert!(n.is_power_of_two(), "fft needs a power of two, not {n}");
        let half = (n / 2).max(1);
        let shift = half.trailing_zeros().div_ceil(2);
        let low = (0..1u64 << shift)
            .map(|t| Complex::root(t, n as u64))
            .collect();
        let high = (0..half.div_ceil(1 << shift) as u64)
            .map(|i| Complex::root(i << shift, n as u64))
            .collect();
        Twiddles {
            n,
            shift,
            high,
            low,
        }
    }

    /// The transform size `n`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// `W_n^t` for `t < n/2`.
    #[inline]
    pub fn get(&self, t: usize) -> Complex {
        self.high[t >> self.shift] * self.low[t & ((1 << self.shift) - 1)]
    }
}

/// `m` butterflies of a transform of `2m` points: `(lo[k], hi[k]) ↦ (lo[k] + w·hi[k],
/// lo[k] − w·hi[k])` with `w = W_n^((k0 + k)·step)`, where `step = n/2m` (so `w = W_2m^(k0+k)`).
/// Where `step` is a multiple of the low table's length (the transforms of at most about
/// `√(2n)` points), every twiddle is an entry of the high table (times exactly 1, skipped).
#[inline]
pub fn butterflies(lo: &mut [Complex], hi: &mut [Complex], k0: usize, step: usize, tw: &Twiddles) {
    let mask = (1 << tw.shift) - 1;
    if step & mask == 0 {
        let s = step >> tw.shift;
        let high = &tw.high[..];
        for (k, (a, b)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
            let wb = *b * high[(k0 + k) * s];
            (*a, *b) = (*a + wb, *a - wb);
        }
    } else {
        for (k, (a, b)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
            let wb = *b * tw.get((k0 + k) * step);
            (*a, *b) = (*a + wb, *a - wb);
        }
    }
}

/// The kernel, the serial transform: `out` gets the transform of the `m = out.len()` points
/// `x[off], x[off + stride], …`, where `m·stride` is the size `n` of `tw`. The points are first
/// gathered in bit-reversed order (independent loads, which at a large stride all miss the
/// cache and overlap), then combined in place by [`combine`].
pub fn transform(x: &[Complex], off: usize, stride: usize, out: &mut [Complex], tw: &Twiddles) {
    let bits = out.len().trailing_zeros();
    if bits == 0 {
        out.fill(x[off]);
    } else {
        for (j, y) in out.iter_mut().enumerate() {
            *y = x[off + (j.reverse_bits() >> (usize::BITS - bits)) * stride];
        }
    }
    combine(out, stride, tw);
}

/// The in-place recursion: `out` holds `m` points in bit-reversed order, `m·stride = n`; it
/// gets their transform (the transforms of its halves, then the butterflies).
pub fn combine(out: &mut [Complex], stride: usize, tw: &Twiddles) {
    match out {
        [] | [_] => {}
        [y0, y1] => (*y0, *y1) = (*y0 + *y1, *y0 - *y1),
        [y0, y1, y2, y3] => {
            // The points x0, x2, x1, x3: two transforms of 2 points, then the butterflies with
            // W_4^0 = 1 and W_4^1 = −i.
            let (a, c, b, d) = (*y0, *y1, *y2, *y3);
            let (e0, e1, o0, o1) = (a + c, a - c, b + d, b - d);
            let o1 = Complex::new(o1.im, -o1.re);
            (*y0, *y1, *y2, *y3) = (e0 + o0, e1 + o1, e0 - o0, e1 - o1);
        }
        _ => {
            let (lo, hi) = out.split_at_mut(out.len() / 2);
            combine(lo, 2 * stride, tw);
            combine(hi, 2 * stride, tw);
            butterflies(lo, hi, 0, stride, tw);
        }
    }
}

/// The serial transform of a whole input (the serial elision of every variant).
pub fn serial(x: &[Complex], tw: &Twiddles) -> Vec<Complex> {
    assert_eq!(x.len(), tw.n(), "input and twiddles of different sizes");
    let mut out = vec![Complex::default(); x.len()];
    transform(x, 0, 1, &mut out, tw);
    out
}

/// `b` consecutive points of the output, locked by the one task that uses them (see the module
/// documentation).
pub type Chunk = Mutex<Vec<Complex>>;

/// Takes a chunk's lock, which the algorithm never contends.
fn lock(c: &Chunk) -> MutexGuard<'_, Vec<Complex>> {
    match c.try_lock() {
        Ok(g) => g,
        Err(TryLockError::WouldBlock) => {
            panic!("fft: two tasks used the same chunk of the output at once (a race)")
        }
        Err(TryLockError::Poisoned(_)) => panic!("fft: a task panicked while writing this chunk"),
    }
}

/// One sub-transform of the recursion: the points `x[off + j·stride]` into `out`.
#[derive(Debug, Clone, Copy)]
struct Part<'a> {
    off: usize,
    stride: usize,
    out: &'a [Chunk],
}

/// The butterflies of a transform: chunk `j` of `lo` with chunk `j` of `hi`, for every `j`,
/// of a transform of `n/step` points.
#[derive(Debug, Clone, Copy)]
struct Butterflies<'a> {
    lo: &'a [Chunk],
    hi: &'a [Chunk],
    step: usize,
}

impl Butterflies<'_> {
    /// The number of chunk pairs, the range of the butterfly loop.
    fn pairs(&self) -> usize {
        self.lo.len()
    }

    /// The butterflies of chunk pair `j`, serially (the loop's body).
    fn pair(&self, tw: &Twiddles, j: usize) {
        let (mut lo, mut hi) = (lock(&self.lo[j]), lock(&self.hi[j]));
        let k0 = j * lo.len();
        butterflies(&mut lo, &mut hi, k0, self.step, tw);
    }
}

/// The recursion step of a transform, written once for every variant: `None` after running a
/// one-chunk transform serially, otherwise its two sub-transforms and its butterflies.
fn transform_step<'a>(
    x: &[Complex],
    tw: &Twiddles,
    p: Part<'a>,
) -> Option<(Part<'a>, Part<'a>, Butterflies<'a>)> {
    if let [chunk] = p.out {
        transform(x, p.off, p.stride, &mut lock(chunk), tw);
        return None;
    }
    let (lo, hi) = p.out.split_at(p.out.len() / 2);
    let stride = 2 * p.stride;
    Some((
        Part {
            off: p.off,
            stride,
            out: lo,
        },
        Part {
            off: p.off + p.stride,
            stride,
            out: hi,
        },
        Butterflies {
            lo,
            hi,
            step: p.stride,
        },
    ))
}

/// Fork-join: the two sub-transforms under a `join`, then the butterflies as a parallel loop
/// (ranges halved under `join`s down to one chunk pair).
pub fn fj<W: Worker>(w: &W, x: &[Complex], tw: &Twiddles, out: &[Chunk]) {
    fj_part(
        w,
        x,
        tw,
        Part {
            off: 0,
            stride: 1,
            out,
        },
    );
}

fn fj_part<W: Worker>(w: &W, x: &[Complex], tw: &Twiddles, p: Part<'_>) {
    let Some((even, odd, bf)) = transform_step(x, tw, p) else {
        return;
    };
    w.join(|w| fj_part(w, x, tw, even), |w| fj_part(w, x, tw, odd));
    parfor::fj(w, 0..bf.pairs(), &|_, j| bf.pair(tw, j));
}

/// The kernel on the chunks every variant writes: the serial elision of [`fj`] as a plain
/// function (the sub-transforms one after the other, the butterflies a loop), no runtime.
pub fn serial_chunks(x: &[Complex], tw: &Twiddles, out: &[Chunk]) {
    serial_part(
        x,
        tw,
        Part {
            off: 0,
            stride: 1,
            out,
        },
    );
}

fn serial_part(x: &[Complex], tw: &Twiddles, p: Part<'_>) {
    let Some((even, odd, bf)) = transform_step(x, tw, p) else {
        return;
    };
    serial_part(x, tw, even);
    serial_part(x, tw, odd);
    for j in 0..bf.pairs() {
        bf.pair(tw, j);
    }
}

/// Fork-join on the async front-end: as [`fj`], with [`AsyncWorker::join`] for both kinds of
/// parallelism, the butterfly loop after the sub-transforms' join.
pub fn fj_async<'s, C: AsyncWorker<'s>>(
    c: C,
    x: &'s [Complex],
    tw: &'s Twiddles,
    out: &'s [Chunk],
) -> impl Future<Output = ()> + Send + 's {
    async_part(
        c,
        x,
        tw,
        Part {
            off: 0,
            stride: 1,
            out,
        },
    )
}

fn async_part<'s, C: AsyncWorker<'s>>(
    c: C,
    x: &'s [Complex],
    tw: &'s Twiddles,
    p: Part<'s>,
) -> impl Future<Output = ()> + Send + 's {
    async move {
        let Some((even, odd, bf)) = transform_step(x, tw, p) else {
            return;
        };
        c.join(
            move |c| async_part(c, x, tw, even),
            move |c| async_part(c, x, tw, odd),
        )
        .await;
        parfor::fj_async(c, 0..bf.pairs(), move |_, j| async move { bf.pair(tw, j) }).await;
    }
}

/// The bins' tolerance: `|X̂[k] − X[k]| ≤ BIN_TOLERANCE·‖X‖₂` for the checked bins, with
/// `‖X‖₂ = √n·‖x‖₂`. Measured (the FFT against [`dft_bin`], the worst of six bins): at most
/// `2.2·10^-15` for `n` from `2^10` to `2^23`; the error grows like `ε·log2 n`. A kernel error
/// that its own inverse undoes (a wrong twiddle, a permuted output) is of the order of 1.
pub const BIN_TOLERANCE: f64 = 1e-11;

/// The round trip's tolerance: `‖ifft(X̂) − x‖₂ ≤ ROUND_TRIP_TOLERANCE·‖x‖₂`. Measured:
/// `4.7·10^-16` for `n = 2^23`, `2.9·10^-16` for `n = 2^10` (two transforms' rounding errors).
pub const ROUND_TRIP_TOLERANCE: f64 = 1e-12;

/// The bin `k` of the transform of `x`, by its direct sum, in blocks of 256 terms: each
/// block's first twiddle from its own sine and cosine, the next ones by multiplying by
/// `W^k` (at most 255 products, about `10^-13` relative error), the blocks' sums added at
/// the end. `O(n)`, independent of the FFT's code and tables.
pub fn dft_bin(x: &[Complex], k: usize) -> Complex {
    const BLOCK: usize = 256;
    let n = x.len();
    let mask = n as u64 - 1;
    let step = Complex::root(k as u64 & mask, n as u64);
    let mut total = Complex::default();
    for (blk, xs) in x.chunks(BLOCK).enumerate() {
        let t0 = (blk * BLOCK) as u64;
        let mut w = Complex::root(t0.wrapping_mul(k as u64) & mask, n as u64);
        let mut sum = Complex::default();
        for &xt in xs {
            sum = sum + xt * w;
            w = w * step;
        }
        total = total + sum;
    }
    total
}

/// The `L2` norm of a vector of complex numbers.
fn norm(x: &[Complex]) -> f64 {
    x.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt()
}

/// Checks that `out` is the transform of `x` (see the module documentation): finite values,
/// eight bins against [`dft_bin`], the round trip through the inverse transform. Takes the
/// output by value: the inverse transform conjugates it in place (one copy less of `n` points).
pub fn check_transform(
    x: &[Complex],
    mut out: Vec<Complex>,
    tw: &Twiddles,
) -> Result<Checked, String> {
    let n = x.len();
    if out.len() != n || tw.n() != n {
        return Err(format!(
            "output of {} points for an input of {n} (twiddles of {})",
            out.len(),
            tw.n()
        ));
    }
    if let Some(k) = out
        .iter()
        .position(|z| !z.re.is_finite() || !z.im.is_finite())
    {
        return Err(format!("X[{k}] = {:?} is not finite", out[k]));
    }
    let scale = norm(x);
    let spectrum = scale * (n as f64).sqrt();
    let mut rng = SplitMix64::new(CHECK_SEED);
    let mut bins = vec![0, 1, n / 2, n - 1];
    bins.extend((0..4).map(|_| rng.index(n)));
    let mut largest_bin_err = 0.0f64;
    for &k in &bins {
        let want = dft_bin(x, k);
        let err = (out[k] - want).norm_sqr().sqrt();
        largest_bin_err = largest_bin_err.max(err);
        if err > BIN_TOLERANCE * spectrum {
            return Err(format!(
                "X[{k}] = {:?} but its direct sum is {want:?}: error {err:.3e} > \
                 {BIN_TOLERANCE:e}·‖X‖₂ = {:.3e}",
                out[k],
                BIN_TOLERANCE * spectrum
            ));
        }
    }
    // ifft(X) = conj(fft(conj(X)))/n.
    out.iter_mut().for_each(|z| *z = z.conj());
    let back = serial(&out, tw);
    let inv_n = 1.0 / n as f64;
    let err = x
        .iter()
        .zip(&back)
        .map(|(&a, &b)| (b.conj().scale(inv_n) - a).norm_sqr())
        .sum::<f64>()
        .sqrt();
    if err > ROUND_TRIP_TOLERANCE * scale {
        return Err(format!(
            "the inverse transform of the output differs from the input: ‖ifft(X) − x‖₂ = \
             {err:.3e} > {ROUND_TRIP_TOLERANCE:e}·‖x‖₂ = {:.3e}",
            ROUND_TRIP_TOLERANCE * scale
        ));
    }
    Ok(Checked::new(
        format!(
            "{n} points: error of {} bins against their direct sums {:.3e}·‖X‖₂ at most, \
             round trip ‖ifft(X) − x‖₂ = {:.3e}·‖x‖₂",
            bins.len(),
            largest_bin_err / spectrum,
            err / scale
        ),
        format!("the bounds {BIN_TOLERANCE:e} and {ROUND_TRIP_TOLERANCE:e}"),
    ))
}

/// The seeds of the input and of the check's bins.
const INPUT_SEED: u64 = 0xff7_5eed_0000_0001;
const CHECK_SEED: u64 = 0xff7_c4ec_0000_0002;

/// The default cutoff (points of a serial task).
pub const DEFAULT_CUTOFF: usize = 4096;

/// The input: points, twiddles and the cutoff.
#[derive(Debug, Clone)]
pub struct FftInput {
    /// The cutoff `b`.
    pub b: usize,
    /// The `n` input points.
    pub x: Vec<Complex>,
    /// The twiddles of `n`.
    pub tw: Twiddles,
}

impl FftInput {
    /// The input of `n` points uniform in `[0, 1)²` from `seed`, with cutoff `b`. `Err` if `n`
    /// or `b` is unusable.
    pub fn new(n: usize, b: usize, seed: u64) -> Result<Self, String> {
        if !n.is_power_of_two() || n < 2 {
            return Err(format!("n={n}: must be a power of two of at least 2"));
        }
        if !b.is_power_of_two() || b > n {
            return Err(format!("b={b}: must be a power of two of at most n = {n}"));
        }
        let mut rng = SplitMix64::new(seed);
        let mut unit = || (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        let x = (0..n).map(|_| Complex::new(unit(), unit())).collect();
        Ok(FftInput {
            b,
            x,
            tw: Twiddles::new(n),
        })
    }
}

/// Fresh output chunks: `n/b` chunks of `b` zeros (written, so their pages are mapped).
pub fn chunks(n: usize, b: usize) -> Vec<Chunk> {
    (0..n / b)
        .map(|_| Mutex::new(vec![Complex::default(); b]))
        .collect()
}

/// The output chunks as one vector.
pub fn gather(out: &[Chunk]) -> Vec<Complex> {
    out.iter()
        .flat_map(|c| c.lock().unwrap_or_else(PoisonError::into_inner).clone())
        .collect()
}

impl Workload for Fft {
    const NAME: &'static str = "fft";
    const DESCRIPTION: &'static str =
        "recursive radix-2 FFT, fork-join over sub-transforms and butterfly ranges (Cilk-5 fft)";
    const VARIANTS: &'static [Variant] = &[Variant::Fj];
    const ASYNC_VARIANTS: &'static [Variant] = &[Variant::Fj];

    type Input = FftInput;
    type Work = Vec<Chunk>;
    type Answer = ();

    fn preset(size: Size) -> Params {
        let (n, b) = match size {
            Size::Paper => (1 << 26, DEFAULT_CUTOFF),
            Size::Small => (1 << 23, DEFAULT_CUTOFF),
            Size::Quick => (1 << 22, DEFAULT_CUTOFF),
            Size::Test => (1 << 10, 64),
        };
        Params::new()
            .int("n", n)
            .int("b", b as u64)
            .int("seed", INPUT_SEED)
    }

    fn input(params: &Params) -> Result<FftInput, String> {
        let (n, b) = (params.get_usize("n")?, params.get_usize("b")?);
        // Points of 16 bytes: the input, a repetition's output, and the check's gathered copy
        // and sums (measured: 4.7 times the input at n = 2^22).
        check_memory(&format!("n={n}"), 5.0 * 16.0 * n as f64)?;
        FftInput::new(n, b, params.get_int("seed"))
    }

    fn prepare(input: &FftInput) -> Vec<Chunk> {
        chunks(input.x.len(), input.b)
    }

    fn run<S: ForkJoin>(pool: &S, variant: Variant, input: &FftInput, out: &mut Vec<Chunk>) {
        let (x, tw, out) = (&input.x[..], &input.tw, &out[..]);
        match variant {
            Variant::Fj => pool.run(|w| fj(w, x, tw, out)),
            v => panic!("fft has no {v} variant"),
        }
    }

    fn run_async<S: AsyncForkJoin>(
        pool: &S,
        variant: Variant,
        input: &FftInput,
        out: &mut Vec<Chunk>,
    ) {
        let (x, tw, out) = (&input.x[..], &input.tw, &out[..]);
        match variant {
            Variant::Fj => pool.run_async(|c| fj_async(c, x, tw, out)),
            v => panic!("fft has no async {v} variant"),
        }
    }

    fn kernel(input: &FftInput, out: &mut Vec<Chunk>) {
        serial_chunks(&input.x, &input.tw, out);
    }

    fn check(input: &FftInput, out: &Vec<Chunk>, _answer: &()) -> Result<Checked, String> {
        check_transform(&input.x, gather(out), &input.tw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    /// The `O(n²)` transform, every twiddle from its own sine and cosine.
    fn naive(x: &[Complex]) -> Vec<Complex> {
        let n = x.len() as u64;
        (0..n)
            .map(|k| {
                x.iter()
                    .enumerate()
                    .map(|(t, &xt)| xt * Complex::root(k * t as u64, n))
                    .fold(Complex::default(), |a, b| a + b)
            })
            .collect()
    }

    fn max_err(a: &[Complex], b: &[Complex]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(&p, &q)| (p - q).norm_sqr().sqrt())
            .fold(0.0, f64::max)
    }

    /// A parallel result against the serial kernel's: the same operations in the same order
    /// per point, so bitwise equal, except that chunks of fewer than 4 points miss the 4-point
    /// base case (its exact `−i` for `W_4^1`), a rounding difference.
    fn same(got: &[Complex], want: &[Complex], b: usize, what: &str) {
        if b >= 4 {
            if let Some(k) = (0..want.len()).find(|&k| got[k] != want[k]) {
                panic!("{what}: X[{k}] = {:?}, serially {:?}", got[k], want[k]);
            }
        } else {
            assert!(max_err(got, want) < 1e-12 * want.len() as f64, "{what}");
        }
    }

    fn input(n: usize, b: usize) -> FftInput {
        FftInput::new(n, b, 5).unwrap()
    }

    #[test]
    fn twiddles_are_the_roots_of_unity() {
        for n in [2, 4, 8, 1 << 10, 1 << 15] {
            let tw = Twiddles::new(n);
            for t in (0..n / 2).step_by((n / 64).max(1)) {
                let want = Complex::root(t as u64, n as u64);
                assert!((tw.get(t) - want).norm_sqr().sqrt() < 1e-15, "n={n} t={t}");
            }
        }
        assert!((Twiddles::new(8).get(2) - Complex::new(0.0, -1.0)).norm_sqr() < 1e-30);
    }

    #[test]
    fn kernel_matches_naive_and_known_values() {
        for n in [2, 4, 8, 16, 128, 256] {
            let inp = input(n, n);
            let got = serial(&inp.x, &inp.tw);
            assert!(max_err(&got, &naive(&inp.x)) < 1e-12 * n as f64, "n={n}");
        }
        // A unit impulse transforms to all ones, all ones to n at bin 0.
        let n = 64;
        let tw = Twiddles::new(n);
        let mut delta = vec![Complex::default(); n];
        delta[0] = Complex::new(1.0, 0.0);
        assert!(
            serial(&delta, &tw)
                .iter()
                .all(|&z| z == Complex::new(1.0, 0.0))
        );
        let ones = vec![Complex::new(1.0, 0.0); n];
        let y = serial(&ones, &tw);
        assert_eq!(y[0], Complex::new(n as f64, 0.0));
        assert!(y[1..].iter().all(|z| z.norm_sqr() < 1e-24));
        // e^(2πi·3t/n) transforms to n at bin 3.
        let wave: Vec<Complex> = (0..n)
            .map(|t| Complex::root(3 * t as u64, n as u64).conj())
            .collect();
        let y = serial(&wave, &tw);
        for (k, z) in y.iter().enumerate() {
            let want = if k == 3 { n as f64 } else { 0.0 };
            assert!(
                (z.re - want).abs() < 1e-12 && z.im.abs() < 1e-12,
                "bin {k}: {z:?}"
            );
        }
        assert!((dft_bin(&wave, 3).re - n as f64).abs() < 1e-12);
    }

    #[test]
    fn every_variant_checks_and_equals_the_serial_kernel() {
        let pools = testing::Pools::start();
        for (n, b) in [(1 << 10, 64), (256, 1), (64, 64), (2, 1)] {
            let inp = input(n, b);
            let want = serial(&inp.x, &inp.tw);
            let equal = |what: &str, out: &Vec<Chunk>, _: &()| {
                same(&gather(out), &want, b, &format!("{what} n={n} b={b}"));
            };
            for _ in 0..3 {
                pools.check_every_variant::<Fft>(&inp, equal);
            }
        }
    }

    #[test]
    fn parameters_are_validated() {
        let p = |kv: &[(&str, &str)]| {
            let o: Vec<(String, String)> = kv
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            Fft::input(&Fft::preset(Size::Test).apply(&o).unwrap()).map(|i| (i.x.len(), i.b))
        };
        assert_eq!(
            Fft::preset(Size::Test).to_string(),
            format!("n=1024 b=64 seed={INPUT_SEED}")
        );
        assert_eq!(p(&[("n", "2^12"), ("b", "4096")]), Ok((4096, 4096)));
        assert!(p(&[("n", "12")]).unwrap_err().starts_with("n=12:"));
        assert!(p(&[("n", "1")]).unwrap_err().starts_with("n=1:"));
        assert!(p(&[("b", "2048")]).unwrap_err().starts_with("b=2048:"));
        assert!(p(&[("b", "3")]).unwrap_err().starts_with("b=3:"));
        assert!(p(&[("b", "0")]).is_err());
    }

    #[test]
    fn check_rejects_wrong_answers() {
        let inp = Fft::input_at(Size::Test);
        let n = inp.x.len();
        let good = serial(&inp.x, &inp.tw);
        let checked = check_transform(&inp.x, good.clone(), &inp.tw).unwrap();
        assert!(
            checked
                .answer
                .starts_with("1024 points: error of 8 bins against their direct sums "),
            "{checked}"
        );
        assert_eq!(
            checked.against,
            format!("the bounds {BIN_TOLERANCE:e} and {ROUND_TRIP_TOLERANCE:e}")
        );
        let corrupt = |f: &dyn Fn(&mut Vec<Complex>)| {
            let mut y = good.clone();
            f(&mut y);
            check_transform(&inp.x, y, &inp.tw)
        };
        // One value off by a little, in a bin the check evaluates and in one it does not.
        let tiny = 1e-9 * norm(&inp.x);
        assert!(corrupt(&|y| y[1].re += tiny).unwrap_err().contains("X[1]"));
        assert!(
            corrupt(&|y| y[7].im -= tiny)
                .unwrap_err()
                .contains("inverse")
        );
        // Two values swapped, a chunk left zero, a NaN, the conjugate transform.
        assert!(corrupt(&|y| y.swap(5, 9)).is_err());
        assert!(corrupt(&|y| y[64..128].fill(Complex::default())).is_err());
        assert!(
            corrupt(&|y| y[3].re = f64::NAN)
                .unwrap_err()
                .contains("finite")
        );
        let conj_x: Vec<Complex> = inp.x.iter().map(|z| z.conj()).collect();
        let inverse: Vec<Complex> = serial(&conj_x, &inp.tw).iter().map(|z| z.conj()).collect();
        assert!(check_transform(&inp.x, inverse, &inp.tw).is_err());
        // An untouched output, and a wrong length.
        assert!(Fft::check(&inp, &Fft::prepare(&inp), &()).is_err());
        assert!(check_transform(&inp.x, good[..n / 2].to_vec(), &inp.tw).is_err());
    }
}
