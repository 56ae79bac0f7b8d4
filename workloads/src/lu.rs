//! `lu`: LU decomposition without pivoting (Cilk-5's `lu.cilk` by Robert Blumofe, one of the
//! Cilk-5 examples that Fibril's paper runs: `n = 4096`).
//!
//! # Algorithm
//!
//! `A = L·U` in place (L unit lower triangular below the diagonal, U upper triangular on and
//! above it), recursively on quadrants, down to 16 × 16 blocks (Cilk's `BLOCK_SIZE`):
//!
//! ```text
//! lu(M):           lu(M00);
//!                  spawn lower_solve(M01, M00);  upper_solve(M10, M00);  sync
//!                  schur(M11, M10, M01);  lu(M11)
//! lower_solve(M, L)  (solves L·X = M, L unit lower):  the two column halves in parallel,
//!                  each  lower_solve(M0j, L00);  schur(M1j, L10, M0j);  lower_solve(M1j, L11)
//! upper_solve(M, U)  (solves X·U = M):  the two row halves in parallel,
//!                  each  upper_solve(Mi0, U00);  schur(Mi1, Mi0, U01);  upper_solve(Mi1, U11)
//! schur(M, V, W)   (M −= V·W):  `mm`'s recursion, eight quadrant products in two phases
//! ```
//!
//! The base cases ([`block_lu`], [`block_lower_solve`], [`block_upper_solve`],
//! [`block_schur`]) are Cilk's, on one block. The recursion is written once, as a table of
//! stages ([`expand`]: the calls of a stage run in parallel, the stages one after the other),
//! and each front-end runs the table. Work `(2/3)·n³` flops, span `Θ(m·log² m)` block
//! operations for `m = n/16` blocks a side.
//!
//! # Layout and sharing
//!
//! The matrix is in blocked Z-order ([`crate::zorder`]), so every quadrant is a contiguous
//! quarter of the block slice (Cilk's block-row-major quadrants are strided; the recursion and
//! the blocks are the same). Every block of the matrix is updated (by `schur`, one task at a
//! time) until its own `lu` or triangular solve makes it *final*; from then on it is only
//! read, by many tasks at once. So a block is an [`LuBlock`]: its changing value behind a
//! `Mutex`, taken with `try_lock` (the algorithm never lets two tasks update a block at once:
//! a held lock is a race, a panic), and its final value in a `OnceLock`, written once and read
//! by every later task without a lock and without writing shared memory. (The async front-end
//! lends a task only what outlives the whole [`AsyncForkJoin::run_async`] scope, so parts of
//! the matrix that change from written to read cannot be lent as `&mut` and then `&`; the same
//! shared blocks serve both front-ends, so every runtime runs the same memory operations.) A
//! block read before it is final, updated after, or finished twice is reported as a race.
//!
//! # Input and check
//!
//! Entries uniform in `[0, 1)` (Cilk's `rand()/RAND_MAX`), then `n` added to each diagonal
//! entry, which makes the matrix strictly diagonally dominant by rows, so LU without pivoting
//! exists and is backward stable. (Cilk multiplies the diagonal by 10, which is not dominant
//! for any of its sizes; it checks only at its default `n = 256`.) The check computes, in
//! `O(n²)`, for two random vectors `x` (entries in `[−1, 1)`), the relative residual
//! `‖L·(U·x) − A·x‖∞ / (‖A‖∞·‖x‖∞) <= ‖L·U − A‖∞ / ‖A‖∞` (Freivalds' idea in floating point),
//! and requires it at most [`tolerance`] `= n·ε` (`ε = 2^−52`; backward error analysis bounds
//! it by about `n·ε·‖|L|·|U|‖/‖A‖`, and `|L|·|U|` stays of the order of `A` for a dominant
//! matrix). At `n = 4096` the factors computed here have `6.7·10⁻¹⁵` (the tolerance is
//! `9.1·10⁻¹³`); one element of U off by 1 gives `1.2·10⁻⁴`.

use crate::params::check_memory;
use crate::rng::SplitMix64;
use crate::zorder::{self, exclusive, product_phases};
use crate::{Checked, Params, Size, Variant, Workload, quarters};
use std::future::Future;
use std::sync::{Mutex, OnceLock, PoisonError};
use stealbench_schedulers::{AsyncForkJoin, AsyncWorker, ForkJoin, Worker};

/// The workload marker type.
#[derive(Debug)]
pub struct Lu;

/// The side of a block (Cilk's `BLOCK_SIZE`).
pub const B: usize = 16;

/// A 16 × 16 block, row-major.
pub type Block = zorder::Block<{ B * B }>;

/// The number of blocks of an `n × n` matrix, or `Err` if `n` is not `16·2^k`.
pub fn block_count(n: usize) -> Result<usize, String> {
    zorder::block_count::<{ B * B }>(n).ok_or_else(|| format!("lu needs n = 16·2^k, not {n}"))
}

/// `y −= a·x` elementwise (Cilk's `elem_daxmy`).
#[inline]
fn axmy(a: f64, x: &[f64], y: &mut [f64]) {
    for (y, &x) in y.iter_mut().zip(x) {
        *y -= a * x;
    }
}

/// Factors a block in place: `b = L·U` (Cilk's `block_lu`).
pub fn block_lu(b: &mut Block) {
    for k in 0..B {
        let (top, below) = b.0.split_at_mut((k + 1) * B);
        let row_k = &top[k * B..];
        for row_i in below.chunks_exact_mut(B) {
            row_i[k] /= row_k[k];
            let (head, tail) = row_i.split_at_mut(k + 1);
            axmy(head[k], &row_k[k + 1..], tail);
        }
    }
}

/// Forward substitution: `b ← X` with `L·X = b`, `L` the unit lower triangle of `l` (Cilk's
/// `block_lower_solve`).
pub fn block_lower_solve(b: &mut Block, l: &Block) {
    for (i, l_row) in l.rows().enumerate().skip(1) {
        let (above, rest) = b.0.split_at_mut(i * B);
        let row_i = &mut rest[..B];
        for (&l_ik, row_k) in l_row.iter().zip(above.chunks_exact(B)) {
            axmy(l_ik, row_k, row_i);
        }
    }
}

/// Substitution from the right: `b ← X` with `X·U = b`, `U` the upper triangle of `u`
/// (Cilk's `block_upper_solve`).
pub fn block_upper_solve(b: &mut Block, u: &Block) {
    for row in b.rows_mut() {
        for (k, u_row) in u.rows().enumerate() {
            row[k] /= u_row[k];
            let (head, tail) = row.split_at_mut(k + 1);
            axmy(head[k], &u_row[k + 1..], tail);
        }
    }
}

/// The Schur complement update `b −= v·w` (Cilk's `block_schur`).
pub fn block_schur(b: &mut Block, v: &Block, w: &Block) {
    for (b_row, v_row) in b.rows_mut().zip(v.rows()) {
        for (&v_ik, w_row) in v_row.iter().zip(w.rows()) {
            axmy(v_ik, w_row, b_row);
        }
    }
}

/// A block of the matrix being factored: its value while updates may change it, and its final
/// value once its own factorisation or triangular solve has run (see the module docs).
#[derive(Debug)]
pub struct LuBlock {
    live: Mutex<Block>,
    done: OnceLock<Block>,
}

impl LuBlock {
    /// A block that is not final yet, of value `b`.
    pub fn new(b: Block) -> Self {
        LuBlock {
            live: Mutex::new(b),
            done: OnceLock::new(),
        }
    }

    /// Updates the block, which no other task may use now and which must not be final.
    fn update(&self, f: impl FnOnce(&mut Block)) {
        let mut b = exclusive(&self.live, "lu");
        assert!(self.done.get().is_none(), "lu: a final block was updated");
        f(&mut b);
    }

    /// Runs the last update of the block and makes its value final.
    fn finish(&self, f: impl FnOnce(&mut Block)) {
        let mut b = exclusive(&self.live, "lu");
        f(&mut b);
        if self.done.set(b.clone()).is_err() {
            panic!("lu: a block was finished twice");
        }
    }

    /// The final value (a block read before it is final is a race).
    fn get(&self) -> &Block {
        self.done
            .get()
            .expect("lu: a block was read before it was final (a race)")
    }

    /// The final value, if the block is final.
    pub fn result(&self) -> Option<&Block> {
        self.done.get()
    }
}

/// A part of the matrix: a square of blocks in Z-order.
type Blocks<'a> = &'a [LuBlock];

/// One recursive call of the algorithm.
#[derive(Debug, Clone, Copy)]
pub enum Call<'a> {
    /// `lu(M)`.
    Factor(Blocks<'a>),
    /// `lower_solve(M, L)`.
    Lower(Blocks<'a>, Blocks<'a>),
    /// `upper_solve(M, U)`.
    Upper(Blocks<'a>, Blocks<'a>),
    /// `schur(M, V, W)`.
    Schur(Blocks<'a>, Blocks<'a>, Blocks<'a>),
    /// One column half of `lower_solve` (Cilk's `aux_lower_solve`): `Ma` above `Mb`, and L.
    LowerHalf(Blocks<'a>, Blocks<'a>, Blocks<'a>),
    /// One row half of `upper_solve` (Cilk's `aux_upper_solve`): `Ma` left of `Mb`, and U.
    UpperHalf(Blocks<'a>, Blocks<'a>, Blocks<'a>),
}

/// A stage of a call: its calls run in parallel.
#[derive(Debug, Clone, Copy)]
pub enum Stage<'a> {
    /// Nothing (a call of fewer than four stages).
    Skip,
    /// One call, not spawned.
    One(Call<'a>),
    /// Two calls in parallel.
    Two([Call<'a>; 2]),
    /// Four calls in parallel.
    Four([Call<'a>; 4]),
}

/// The recursion, written once: runs the base case of a call on one block and returns `None`,
/// or returns the call's stages, to run one after the other.
pub fn expand(call: Call<'_>) -> Option<[Stage<'_>; 4]> {
    use Call::*;
    use Stage::*;
    match call {
        Factor([m]) => m.finish(block_lu),
        Lower([m], [l]) => m.finish(|b| block_lower_solve(b, l.get())),
        Upper([m], [u]) => m.finish(|b| block_upper_solve(b, u.get())),
        Schur([m], [v], [w]) => m.update(|b| block_schur(b, v.get(), w.get())),
        Factor(m) => {
            let [m00, m01, m10, m11] = quarters(m);
            return Some([
                One(Factor(m00)),
                Two([Lower(m01, m00), Upper(m10, m00)]),
                One(Schur(m11, m10, m01)),
                One(Factor(m11)),
            ]);
        }
        Lower(m, l) => {
            let [m00, m01, m10, m11] = quarters(m);
            return Some([
                Two([LowerHalf(m00, m10, l), LowerHalf(m01, m11, l)]),
                Skip,
                Skip,
                Skip,
            ]);
        }
        Upper(m, u) => {
            let [m00, m01, m10, m11] = quarters(m);
            return Some([
                Two([UpperHalf(m00, m01, u), UpperHalf(m10, m11, u)]),
                Skip,
                Skip,
                Skip,
            ]);
        }
        Schur(m, v, w) => {
            let [p, q] = product_phases(quarters(m), quarters(v), quarters(w));
            let schur = |(m, v, w)| Schur(m, v, w);
            return Some([Four(p.map(schur)), Four(q.map(schur)), Skip, Skip]);
        }
        LowerHalf(ma, mb, l) => {
            let [l00, _, l10, l11] = quarters(l);
            return Some([
                One(Lower(ma, l00)),
                One(Schur(mb, l10, ma)),
                One(Lower(mb, l11)),
                Skip,
            ]);
        }
        UpperHalf(ma, mb, u) => {
            let [u00, u01, _, u11] = quarters(u);
            return Some([
                One(Upper(ma, u00)),
                One(Schur(mb, ma, u01)),
                One(Upper(mb, u11)),
                Skip,
            ]);
        }
    }
    None
}

/// Fork-join: the stages of a call one after the other; the calls of a stage under nested
/// `join`s (Cilk's spawns and sync), a single call called.
pub fn fj<W: Worker>(w: &W, call: Call<'_>) {
    let Some(stages) = expand(call) else {
        return;
    };
    for stage in stages {
        match stage {
            Stage::Skip => {}
            Stage::One(a) => fj(w, a),
            Stage::Two([a, b]) => {
                w.join(|w| fj(w, a), |w| fj(w, b));
            }
            Stage::Four([a, b, c, d]) => {
                w.join(
                    |w| w.join(|w| fj(w, a), |w| fj(w, b)),
                    |w| w.join(|w| fj(w, c), |w| fj(w, d)),
                );
            }
        }
    }
}

/// The kernel: the serial elision of [`fj`] as a plain function, every call of a stage in
/// order, no runtime.
pub fn serial(call: Call<'_>) {
    let Some(stages) = expand(call) else {
        return;
    };
    for stage in stages {
        match stage {
            Stage::Skip => {}
            Stage::One(a) => serial(a),
            Stage::Two(calls) => calls.into_iter().for_each(serial),
            Stage::Four(calls) => calls.into_iter().for_each(serial),
        }
    }
}

/// Fork-join on the async front-end: as [`fj`], with [`AsyncWorker::join`] and
/// [`AsyncWorker::call`].
pub fn fj_async<'s, C: AsyncWorker<'s>>(
    c: C,
    call: Call<'s>,
) -> impl Future<Output = ()> + Send + 's {
    /// The join of two calls, as one child of the outer join.
    fn pair<'s, C: AsyncWorker<'s>>(
        c: C,
        a: Call<'s>,
        b: Call<'s>,
    ) -> impl Future<Output = ()> + Send + 's {
        async move {
            c.join(move |c| fj_async(c, a), move |c| fj_async(c, b))
                .await;
        }
    }
    async move {
        let Some(stages) = expand(call) else {
            return;
        };
        for stage in stages {
            match stage {
                Stage::Skip => {}
                Stage::One(a) => c.call(move |c| fj_async(c, a)).await,
                Stage::Two([a, b]) => {
                    c.join(move |c| fj_async(c, a), move |c| fj_async(c, b))
                        .await;
                }
                Stage::Four([a, b, d, e]) => {
                    c.join(move |c| pair(c, a, b), move |c| pair(c, d, e)).await;
                }
            }
        }
    }
}

/// The input: `n` and the matrix A in blocked Z-order.
#[derive(Debug, Clone)]
pub struct LuInput {
    /// The matrix side, `16·2^k`.
    pub n: usize,
    /// A, `(n/16)²` blocks in Z-order.
    pub a: Vec<Block>,
}

impl LuInput {
    /// A random strictly diagonally dominant A of side `n` (module docs), from `seed`; `Err`
    /// if `n` is not `16·2^k`.
    pub fn random(n: usize, seed: u64) -> Result<Self, String> {
        let blocks = block_count(n)?;
        let mut rng = SplitMix64::new(seed);
        let a = (0..blocks)
            .map(|t| {
                let mut blk = Block::ZERO;
                for x in blk.0.iter_mut() {
                    *x = unit(&mut rng);
                }
                let (bi, bj) = zorder::block_position(t);
                if bi == bj {
                    for k in 0..B {
                        blk.0[k * B + k] += n as f64;
                    }
                }
                blk
            })
            .collect();
        Ok(LuInput { n, a })
    }

    /// The input of a given row-major matrix; `Err` if `n` is not `16·2^k`.
    pub fn from_row_major(n: usize, a: &[f64]) -> Result<Self, String> {
        block_count(n)?;
        Ok(LuInput {
            n,
            a: zorder::from_row_major(n, a),
        })
    }
}

/// A uniform draw from `[0, 1)`: the top 53 bits of the generator.
fn unit(rng: &mut SplitMix64) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// The seeds of the input and of the check's vectors.
const INPUT_SEED: u64 = 0x6c75_5eed_0000_0001;
const CHECK_SEED: u64 = 0x6c75_c4ec_0000_0002;

/// Which part of a block a product uses.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Triangle {
    /// Every element (A).
    Full,
    /// On and above the diagonal (U).
    Upper,
    /// Below the diagonal, with ones on it (L).
    UnitLower,
}

/// `y = M·x` for the part `tri` of an `n × n` matrix in blocked Z-order.
fn mat_vec(n: usize, m: &[&Block], tri: Triangle, x: &[f64]) -> Vec<f64> {
    let mut y = vec![0.0; n];
    for (t, blk) in m.iter().enumerate() {
        let (bi, bj) = zorder::block_position(t);
        let keep = |r: usize, c: usize| match tri {
            Triangle::Full => true,
            Triangle::Upper => bi < bj || (bi == bj && r <= c),
            Triangle::UnitLower => bi > bj || (bi == bj && r > c),
        };
        for (r, row) in blk.rows().enumerate() {
            let mut acc = 0.0;
            for (c, (&v, &x_c)) in row.iter().zip(&x[bj * B..(bj + 1) * B]).enumerate() {
                if keep(r, c) {
                    acc += v * x_c;
                }
            }
            y[bi * B + r] += acc;
        }
    }
    if tri == Triangle::UnitLower {
        for (y, &x) in y.iter_mut().zip(x) {
            *y += x;
        }
    }
    y
}

/// The largest relative residual bound allowed: `n·ε`.
pub fn tolerance(n: usize) -> f64 {
    n as f64 * f64::EPSILON
}

/// The relative residual `‖L·(U·x) − A·x‖∞ / (‖A‖∞·‖x‖∞)`, largest over two random vectors, of
/// factors `lu` (L below the diagonal, U on and above it) of `a`, both in blocked Z-order.
/// The largest absolute value, NaN if there is a NaN.
fn max_abs(v: impl IntoIterator<Item = f64>) -> f64 {
    v.into_iter().fold(0.0, |m: f64, x| {
        if x.is_nan() || x.abs() > m {
            x.abs()
        } else {
            m
        }
    })
}

/// The relative residual `‖L·(U·x) − A·x‖∞ / (‖A‖∞·‖x‖∞)`, largest over two random vectors, of
/// factors `lu` (L below the diagonal, U on and above it) of `a`, both in blocked Z-order.
/// NaN if a factor has a NaN.
pub fn residual(n: usize, a: &[Block], lu: &[&Block]) -> f64 {
    let mut row_sums = vec![0.0; n];
    for (t, blk) in a.iter().enumerate() {
        let (bi, _) = zorder::block_position(t);
        for (r, row) in blk.rows().enumerate() {
            row_sums[bi * B + r] += row.iter().map(|v| v.abs()).sum::<f64>();
        }
    }
    let norm_a = max_abs(row_sums);
    let a: Vec<&Block> = a.iter().collect();
    let mut rng = SplitMix64::new(CHECK_SEED);
    let mut worst = 0.0f64;
    for _ in 0..2 {
        let x: Vec<f64> = (0..n).map(|_| 2.0 * unit(&mut rng) - 1.0).collect();
        let lux = mat_vec(
            n,
            lu,
            Triangle::UnitLower,
            &mat_vec(n, lu, Triangle::Upper, &x),
        );
        let ax = mat_vec(n, &a, Triangle::Full, &x);
        let diff = max_abs(lux.iter().zip(&ax).map(|(p, q)| p - q));
        let r = diff / (norm_a * max_abs(x));
        worst = if r.is_nan() { r } else { worst.max(r) };
    }
    worst
}

/// Checks that every block is final and that the factors' relative residual is at most
/// [`tolerance`] (a NaN residual fails).
pub fn check_factors(input: &LuInput, blocks: &[LuBlock]) -> Result<Checked, String> {
    if blocks.len() != input.a.len() {
        return Err(format!(
            "expected {} blocks, got {}",
            input.a.len(),
            blocks.len()
        ));
    }
    let lu = blocks
        .iter()
        .enumerate()
        .map(|(t, b)| {
            b.result().ok_or_else(|| {
                let (bi, bj) = zorder::block_position(t);
                format!("block ({bi}, {bj}) was never finished")
            })
        })
        .collect::<Result<Vec<&Block>, String>>()?;
    let r = residual(input.n, &input.a, &lu);
    let tol = tolerance(input.n);
    if r <= tol {
        Ok(Checked::new(
            format!("relative residual ‖L·U·x − A·x‖ / (‖A‖·‖x‖) = {r:.3e}"),
            format!("the bound n·ε = {tol:.3e}"),
        ))
    } else {
        Err(format!(
            "relative residual ‖L·U·x − A·x‖ / (‖A‖·‖x‖) = {r:e} > {tol:e}"
        ))
    }
}

impl Workload for Lu {
    const NAME: &'static str = "lu";
    const DESCRIPTION: &'static str =
        "LU decomposition without pivoting (Cilk-5 lu), recursive on quadrants, 16x16 blocks";
    const VARIANTS: &'static [Variant] = &[Variant::Fj];
    const ASYNC_VARIANTS: &'static [Variant] = &[Variant::Fj];

    type Input = LuInput;
    type Work = Vec<LuBlock>;
    type Answer = ();

    fn preset(size: Size) -> Params {
        let n = match size {
            Size::Paper => 4096,
            Size::Small => 2048,
            // n = 1024 takes 35 ms serially here, a sixty-fourth of the paper's run.
            Size::Quick => 2048,
            Size::Test => 128,
        };
        Params::new()
            .int("n", n)
            .int("b", B as u64)
            .int("seed", INPUT_SEED)
    }

    fn input(params: &Params) -> Result<LuInput, String> {
        params.fixed("b", B as u64)?;
        let n = params.get_usize("n")?;
        // Three matrices of f64: A, and a repetition's blocks (each its changing and its final
        // value).
        check_memory(&format!("n={n}"), 3.0 * 8.0 * n as f64 * n as f64)?;
        LuInput::random(n, params.get_int("seed"))
    }

    /// A copy of A, every block not final.
    fn prepare(input: &LuInput) -> Vec<LuBlock> {
        input.a.iter().cloned().map(LuBlock::new).collect()
    }

    fn run<S: ForkJoin>(pool: &S, variant: Variant, _input: &LuInput, m: &mut Vec<LuBlock>) {
        let m = &m[..];
        match variant {
            Variant::Fj => pool.run(|w| fj(w, Call::Factor(m))),
            v => panic!("lu has no {v} variant"),
        }
    }

    fn run_async<S: AsyncForkJoin>(
        pool: &S,
        variant: Variant,
        _input: &LuInput,
        m: &mut Vec<LuBlock>,
    ) {
        let m = &m[..];
        match variant {
            Variant::Fj => pool.run_async(|c| fj_async(c, Call::Factor(m))),
            v => panic!("lu has no async {v} variant"),
        }
    }

    fn kernel(_input: &LuInput, m: &mut Vec<LuBlock>) {
        serial(Call::Factor(&m[..]));
    }

    fn check(input: &LuInput, m: &Vec<LuBlock>, _answer: &()) -> Result<Checked, String> {
        check_factors(input, m)
    }
}

/// The value of every block (final or not), for tests and inspection.
pub fn values(blocks: &[LuBlock]) -> Vec<Block> {
    blocks
        .iter()
        .map(|b| match b.result() {
            Some(v) => v.clone(),
            None => b
                .live
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    /// Right-looking LU without pivoting on a row-major matrix.
    fn naive(n: usize, a: &[f64]) -> Vec<f64> {
        let mut m = a.to_vec();
        for k in 0..n {
            for i in k + 1..n {
                m[i * n + k] /= m[k * n + k];
                let l = m[i * n + k];
                for j in k + 1..n {
                    m[i * n + j] -= l * m[k * n + j];
                }
            }
        }
        m
    }

    fn factor<S: ForkJoin>(pool: &S, input: &LuInput) -> Vec<LuBlock> {
        let mut m = Lu::prepare(input);
        Lu::run(pool, Variant::Fj, input, &mut m);
        m
    }

    #[test]
    fn kernels_match_the_naive_factorisation() {
        // One block: block_lu is Doolittle's elimination.
        let input = LuInput::random(B, 3).unwrap();
        let mut b = input.a[0].clone();
        block_lu(&mut b);
        assert_eq!(b.0.to_vec(), naive(B, &input.a[0].0));
        // The recursion performs each element's operations in the naive order: bit for bit.
        let pool = testing::serial();
        for n in [32, 64] {
            let input = LuInput::random(n, 5).unwrap();
            let want = naive(n, &zorder::to_row_major(n, &input.a));
            let got = zorder::to_row_major(n, &values(&factor(&pool, &input)));
            assert_eq!(got, want, "n={n}");
        }
    }

    #[test]
    fn recovers_known_integer_factors() {
        // A = L·U with small integer factors (U's diagonal 4): every value the algorithm
        // computes is an integer or an integer multiple of 4 divided by 4, so exact.
        let n = 32;
        fn l(i: usize, j: usize) -> f64 {
            match i.cmp(&j) {
                std::cmp::Ordering::Equal => 1.0,
                std::cmp::Ordering::Greater => ((i + 2 * j) % 3) as f64,
                std::cmp::Ordering::Less => 0.0,
            }
        }
        fn u(i: usize, j: usize) -> f64 {
            match i.cmp(&j) {
                std::cmp::Ordering::Equal => 4.0,
                std::cmp::Ordering::Less => ((3 * i + j) % 4) as f64 - 1.0,
                std::cmp::Ordering::Greater => 0.0,
            }
        }
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                a[i * n + j] = (0..n).map(|k| l(i, k) * u(k, j)).sum();
            }
        }
        let input = LuInput::from_row_major(n, &a).unwrap();
        let pool = testing::serial();
        let got = zorder::to_row_major(n, &values(&factor(&pool, &input)));
        for i in 0..n {
            for j in 0..n {
                let want = if i > j { l(i, j) } else { u(i, j) };
                assert_eq!(got[i * n + j], want, "({i}, {j})");
            }
        }
    }

    /// Every variant, on the serial elision and on two workers (three times: the schedules
    /// differ), gives the serial kernel's factors.
    #[test]
    fn every_variant_checks() {
        let input = Lu::input_at(Size::Test);
        assert_eq!(
            Lu::preset(Size::Test).to_string(),
            format!("n=128 b=16 seed={INPUT_SEED}")
        );
        let want = values(&factor(&testing::serial(), &input));
        let pools = testing::Pools::start();
        for _ in 0..3 {
            pools.check_every_variant::<Lu>(&input, |what, m, _| {
                assert_eq!(values(m), want, "{what}");
            });
        }
    }

    #[test]
    fn check_rejects_wrong_answers() {
        let input = Lu::input_at(Size::Test);
        let pool = testing::serial();
        let good = values(&factor(&pool, &input));
        let finished = |v: Vec<Block>| -> Vec<LuBlock> {
            v.into_iter()
                .map(|b| {
                    let x = LuBlock::new(Block::ZERO);
                    x.finish(|z| *z = b);
                    x
                })
                .collect()
        };
        let checked = Lu::check(&input, &finished(good.clone()), &()).unwrap();
        let r = residual(input.n, &input.a, &good.iter().collect::<Vec<_>>());
        assert_eq!(
            checked.to_string(),
            format!(
                "relative residual ‖L·U·x − A·x‖ / (‖A‖·‖x‖) = {r:.3e}; checked against the \
                 bound n·ε = {:.3e}",
                tolerance(input.n)
            )
        );
        assert!(r < tolerance(input.n) / 4.0, "residual {r:e}");
        let corrupt = |t: usize, i: usize, f: &dyn Fn(f64) -> f64| {
            let mut v = good.clone();
            v[t].0[i] = f(v[t].0[i]);
            Lu::check(&input, &finished(v), &())
        };
        // One element of L, of U and on U's diagonal, off in its 9th significant digit.
        let last = good.len() - 1;
        assert!(corrupt(2, 5, &|x| x * (1.0 + 1e-9)).is_err());
        assert!(corrupt(1, 200, &|x| x * (1.0 + 1e-9)).is_err());
        assert!(corrupt(last, B * B - 1, &|x| x * (1.0 + 1e-9)).is_err());
        assert!(corrupt(0, 17, &|_| f64::NAN).is_err());
        // The unfactored matrix, a block never finished, a wrong block count.
        assert!(Lu::check(&input, &finished(input.a.clone()), &()).is_err());
        let err = Lu::check(&input, &Lu::prepare(&input), &()).unwrap_err();
        assert!(err.contains("never finished"), "{err}");
        assert!(Lu::check(&input, &finished(good[1..].to_vec()), &()).is_err());
    }

    #[test]
    #[should_panic(expected = "before it was final")]
    fn reading_a_block_too_early_is_a_race() {
        let m = [LuBlock::new(Block::ZERO)];
        let v = [LuBlock::new(Block::ZERO)];
        expand(Call::Schur(&m, &v, &v));
    }

    #[test]
    fn rejects_bad_sides() {
        assert!(LuInput::random(96, 1).unwrap_err().contains("16·2^k"));
        assert!(LuInput::random(8, 1).is_err());
        let mut p = Lu::preset(Size::Test);
        p.set("b", "32").unwrap();
        assert!(Lu::input(&p).unwrap_err().contains("fixed at 16"));
    }
}
