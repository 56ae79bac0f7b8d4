//! `smm`: Strassen matrix multiplication C = A·B (ProWS Figure 2, after Cilk's `strassen`).
//!
//! # Algorithm
//!
//! Winograd's form of Strassen's algorithm, as Cilk's `OptimizedStrassenMultiply`: with the
//! quadrants `A11 A12 / A21 A22` (and likewise for B), a call of side `m > 64` computes the
//! eight sums
//!
//! ```text
//! S1 = A21 + A22   S2 = S1 − A11   S3 = A11 − A21   S4 = A12 − S2
//! S5 = B12 − B11   S6 = B22 − S5   S7 = B22 − B12   S8 = S6 − B21
//! ```
//!
//! then the seven products, in parallel,
//!
//! ```text
//! M1 = A11·B11  M2 = A12·B21  M3 = S1·S5  M4 = S2·S6  M5 = S3·S7  M6 = S4·B22  M7 = A22·S8
//! ```
//!
//! and finally `C11 = M1 + M2`, `C12 = M1 + M4 + M3 + M6`, `C21 = M1 + M4 + M5 − M7`,
//! `C22 = M1 + M4 + M5 + M3` (one fused pass). A side of at most 64 ([`CUTOFF`]) is multiplied
//! by a serial divide-and-conquer multiply ([`dc`]: eight quadrant products in two phases,
//! `C += A·B`) down to 16 × 16 blocks multiplied by [`kernel`], as Cilk's
//! `MultiplyByDivideAndConquer` and `FastAdditiveNaiveMatrixMultiply`. The sums and the
//! products of every level are allocated by the call that needs them, inside the timed region,
//! as the paper's code allocates them per level.
//!
//! Variants differ only in how the seven products run: `fj` spawns six in a scope and calls the
//! seventh (the scope's end is the sync); `sf` makes six of them futures, computes the seventh
//! itself, and the final additions touch the six futures. Each product *returns* its matrix
//! (an owned `Vec`), so no two tasks ever write the same memory.
//!
//! # Layout
//!
//! As in `mm` ([`crate::zorder`]): a matrix is a `Vec` of 16 × 16 [`Block`]s in Z-order, so every
//! quadrant at every level is a contiguous quarter of the block slice. The side is `n = 64·2^k`.
//!
//! # Sharing on the async front-end
//!
//! A task spawned on the async front-end may only borrow what outlives the whole
//! [`AsyncForkJoin::run_async`] scope: the input matrices, not the sums a parent allocated. So
//! there an operand is an [`Operand`] ([`Part`]): a borrowed part of the input or a part of a sum
//! shared through an `Arc` (a reference count per operand, nothing copied). The closure
//! front-end borrows the sums directly (its scopes wait for their tasks).
//!
//! # Exactness and check
//!
//! Entries of A and B are integers in `0..8` stored as `f64`. Every value the algorithm
//! computes is an integer: a call of depth `d` (side `n/2^d`) gets operands of absolute value
//! at most `7·4^d` (each level's sums have at most four terms: `S4 = A12 − A21 − A22 + A11`),
//! so a product made at depth `d + 1` is at most `(n/2^(d+1))·(7·4^(d+1))² = 49·n·8^(d+1)`, and
//! the final additions (at most four products) and the partial sums of [`dc`] stay below four
//! times the deepest product: `4·49·n·(n/64)³ = 196·n⁴/2^18`. For `n = 4096` that is below
//! `2^38`; up to `n = 2^15` ([`MAX_SIDE`]) below `2^53`, so every `f64` operation is exact and
//! C has exactly one correct value, checked by Freivalds' algorithm
//! ([`zorder::Factors::check_product`]).

use crate::params::check_memory;
use crate::zorder::{self, Part, quarters_mut};
use crate::{Checked, Params, Size, Variant, Workload, quarters};
use std::future::Future;
use stealbench_schedulers::{
    AsyncForkJoin, AsyncWorker, ForkJoin, FutureForkJoin, FutureHandle, Futures, Scope, Worker,
};

/// The kernel: `c += a·b` on 16 × 16 blocks ([`zorder::mul_add`]).
pub use crate::zorder::mul_add as kernel;

/// The workload marker type.
#[derive(Debug)]
pub struct Smm;

/// The side of a base-case block (Cilk's `SizeAtWhichNaiveAlgorithmIsMoreEfficient`).
pub const B: usize = 16;

/// Sides up to this are multiplied by [`dc`] instead of another Strassen level (Cilk's
/// `SizeAtWhichDivideAndConquerIsMoreEfficient`).
pub const CUTOFF: usize = 64;

/// The largest side for which every intermediate value is exact (see the module docs).
pub const MAX_SIDE: usize = 1 << 15;

/// Blocks of a `CUTOFF × CUTOFF` matrix.
const CUTOFF_BLOCKS: usize = (CUTOFF / B) * (CUTOFF / B);

/// A 16 × 16 block of a matrix, row-major; aligned to a cache line.
pub type Block = zorder::Block<{ B * B }>;

/// The input: `n` (`64·2^k`, at most [`MAX_SIDE`]) and the two factors in blocked Z-order.
pub type SmmInput = zorder::Factors<{ B * B }>;

/// The serial divide-and-conquer multiply `c += a·b` below the cutoff: the eight quadrant
/// products in two phases, down to one block.
pub fn dc(c: &mut [Block], a: &[Block], b: &[Block]) {
    debug_assert!(c.len() == a.len() && c.len() == b.len() && c.len().is_power_of_two());
    if c.len() == 1 {
        kernel(&mut c[0], &a[0], &b[0]);
        return;
    }
    let [c00, c01, c10, c11] = quarters_mut(c);
    let [a00, a01, a10, a11] = quarters(a);
    let [b00, b01, b10, b11] = quarters(b);
    dc(c00, a00, b00);
    dc(c01, a00, b01);
    dc(c10, a10, b00);
    dc(c11, a10, b01);
    dc(c00, a01, b10);
    dc(c01, a01, b11);
    dc(c10, a11, b10);
    dc(c11, a11, b11);
}

/// A product at or below the cutoff: a fresh zero matrix, then [`dc`].
fn leaf(a: &[Block], b: &[Block]) -> Vec<Block> {
    let mut c = vec![Block::ZERO; a.len()];
    dc(&mut c, a, b);
    c
}

/// The eight sums `S1..S8` of Winograd's form (module docs), in one pass over the blocks.
fn sums(a: &[Block], b: &[Block]) -> [Vec<Block>; 8] {
    let [a11, a12, a21, a22] = quarters(a);
    let [b11, b12, b21, b22] = quarters(b);
    let q = a11.len();
    let mut s: [Vec<Block>; 8] = std::array::from_fn(|_| vec![Block::ZERO; q]);
    let [s1, s2, s3, s4, s5, s6, s7, s8] = &mut s;
    for t in 0..q {
        let (a11, a12, a21, a22) = (&a11[t].0, &a12[t].0, &a21[t].0, &a22[t].0);
        let (b11, b12, b21, b22) = (&b11[t].0, &b12[t].0, &b21[t].0, &b22[t].0);
        let (s1, s2, s3, s4) = (&mut s1[t].0, &mut s2[t].0, &mut s3[t].0, &mut s4[t].0);
        let (s5, s6, s7, s8) = (&mut s5[t].0, &mut s6[t].0, &mut s7[t].0, &mut s8[t].0);
        for e in 0..B * B {
            let x1 = a21[e] + a22[e];
            let x2 = x1 - a11[e];
            s1[e] = x1;
            s2[e] = x2;
            s3[e] = a11[e] - a21[e];
            s4[e] = a12[e] - x2;
            let y5 = b12[e] - b11[e];
            let y6 = b22[e] - y5;
            s5[e] = y5;
            s6[e] = y6;
            s7[e] = b22[e] - b12[e];
            s8[e] = y6 - b21[e];
        }
    }
    s
}

/// The operands of the seven products, from the quadrants of A and B and the eight sums:
/// `M1 = A11·B11, M2 = A12·B21, M3 = S1·S5, M4 = S2·S6, M5 = S3·S7, M6 = S4·B22, M7 = A22·S8`.
/// Generic so that both front-ends share the table (slices, or [`Operand`]s).
fn products<T: Clone>(a: [T; 4], b: [T; 4], s: [T; 8]) -> [(T, T); 7] {
    let [a11, a12, _, a22] = a;
    let [b11, _, b21, b22] = b;
    let [s1, s2, s3, s4, s5, s6, s7, s8] = s;
    [
        (a11, b11),
        (a12, b21),
        (s1, s5),
        (s2, s6),
        (s3, s7),
        (s4, b22),
        (a22, s8),
    ]
}

/// The final additions: C from the seven products, in one pass.
fn combine(m: [&[Block]; 7]) -> Vec<Block> {
    let q = m[0].len();
    let mut c = vec![Block::ZERO; 4 * q];
    let [c11, c12, c21, c22] = quarters_mut(&mut c);
    for t in 0..q {
        let [m1, m2, m3, m4, m5, m6, m7] = m.map(|x| &x[t].0);
        let (c11, c12, c21, c22) = (&mut c11[t].0, &mut c12[t].0, &mut c21[t].0, &mut c22[t].0);
        for e in 0..B * B {
            let t1 = m1[e] + m4[e];
            let t2 = t1 + m5[e];
            c11[e] = m1[e] + m2[e];
            c12[e] = t1 + m3[e] + m6[e];
            c21[e] = t2 - m7[e];
            c22[e] = t2 + m3[e];
        }
    }
    c
}

/// The serial elision: Strassen with the seven products one after the other.
pub fn serial(a: &[Block], b: &[Block]) -> Vec<Block> {
    if a.len() <= CUTOFF_BLOCKS {
        return leaf(a, b);
    }
    let s = sums(a, b);
    let ps = products(quarters(a), quarters(b), s.each_ref().map(|v| &v[..]));
    let m = ps.map(|(x, y)| serial(x, y));
    combine(m.each_ref().map(|v| &v[..]))
}

/// Fork-join: six products spawned in a scope, the seventh called; the scope's end is the
/// sync; then the final additions.
pub fn fj<W: Worker>(w: &W, a: &[Block], b: &[Block]) -> Vec<Block> {
    if a.len() <= CUTOFF_BLOCKS {
        return leaf(a, b);
    }
    let s = sums(a, b);
    let [p1, p2, p3, p4, p5, p6, p7] =
        products(quarters(a), quarters(b), s.each_ref().map(|v| &v[..]));
    let mut m: [Vec<Block>; 7] = Default::default();
    {
        let [m1, m2, m3, m4, m5, m6, m7] = &mut m;
        w.scope(|sc, w| {
            sc.spawn(w, move |_, w| *m1 = fj(w, p1.0, p1.1));
            sc.spawn(w, move |_, w| *m2 = fj(w, p2.0, p2.1));
            sc.spawn(w, move |_, w| *m3 = fj(w, p3.0, p3.1));
            sc.spawn(w, move |_, w| *m4 = fj(w, p4.0, p4.1));
            sc.spawn(w, move |_, w| *m5 = fj(w, p5.0, p5.1));
            sc.spawn(w, move |_, w| *m6 = fj(w, p6.0, p6.1));
            *m7 = fj(w, p7.0, p7.1);
        });
    }
    combine(m.each_ref().map(|v| &v[..]))
}

/// Structured futures: six products are futures, the seventh is computed in place, and the
/// final additions touch the six futures (each once).
pub fn sf<W: Futures>(w: &W, a: &[Block], b: &[Block]) -> Vec<Block> {
    if a.len() <= CUTOFF_BLOCKS {
        return leaf(a, b);
    }
    let s = sums(a, b);
    let [p1, p2, p3, p4, p5, p6, p7] =
        products(quarters(a), quarters(b), s.each_ref().map(|v| &v[..]));
    w.scope(|sc, w| {
        let f1 = w.future(sc, move |_, w| sf(w, p1.0, p1.1));
        let f2 = w.future(sc, move |_, w| sf(w, p2.0, p2.1));
        let f3 = w.future(sc, move |_, w| sf(w, p3.0, p3.1));
        let f4 = w.future(sc, move |_, w| sf(w, p4.0, p4.1));
        let f5 = w.future(sc, move |_, w| sf(w, p5.0, p5.1));
        let f6 = w.future(sc, move |_, w| sf(w, p6.0, p6.1));
        let m7 = sf(w, p7.0, p7.1);
        let m = [
            f1.get(w),
            f2.get(w),
            f3.get(w),
            f4.get(w),
            f5.get(w),
            f6.get(w),
            m7,
        ];
        combine(m.each_ref().map(|v| &v[..]))
    })
}

/// An operand on the async front-end: a part of an input matrix (borrowed for the whole
/// `run_async` scope) or a part of a sum a parent task allocated (shared by reference count).
pub type Operand<'s> = Part<'s, Block>;

/// The operands of the seven products of one async level, or `Err(product)` at the cutoff.
#[allow(clippy::type_complexity)]
fn async_step<'s>(
    a: &Operand<'s>,
    b: &Operand<'s>,
) -> Result<[(Operand<'s>, Operand<'s>); 7], Vec<Block>> {
    let (x, y) = (a.blocks(), b.blocks());
    if x.len() <= CUTOFF_BLOCKS {
        return Err(leaf(x, y));
    }
    let s = sums(x, y).map(Part::counted);
    Ok(products(a.quarters(), b.quarters(), s))
}

/// The fork-join of two children as one future, so it can be a child of another join.
fn pair<'s, C, A, B, FA, FB>(
    c: C,
    x: A,
    y: B,
) -> impl Future<Output = (FA::Output, FB::Output)> + Send + 's
where
    C: AsyncWorker<'s>,
    A: FnOnce(C) -> FA + Send + 's,
    B: FnOnce(C) -> FB + Send + 's,
    FA: Future + Send + 's,
    FB: Future + Send + 's,
    FA::Output: Send + 's,
    FB::Output: Send + 's,
{
    async move { c.join(x, y).await }
}

/// Fork-join on the async front-end: the seven products under nested [`AsyncWorker::join`]s,
/// which return after all seven; then the final additions.
pub fn fj_async<'s, C: AsyncWorker<'s>>(
    c: C,
    a: Operand<'s>,
    b: Operand<'s>,
) -> impl Future<Output = Vec<Block>> + Send + 's {
    async move {
        let [p1, p2, p3, p4, p5, p6, p7] = match async_step(&a, &b) {
            Ok(p) => p,
            Err(c) => return c,
        };
        let f = |p: (Operand<'s>, Operand<'s>)| move |c: C| fj_async(c, p.0, p.1);
        let (((m1, m2), (m3, m4)), ((m5, m6), m7)) = pair(
            c,
            move |c| {
                pair(
                    c,
                    move |c| pair(c, f(p1), f(p2)),
                    move |c| pair(c, f(p3), f(p4)),
                )
            },
            move |c| pair(c, move |c| pair(c, f(p5), f(p6)), f(p7)),
        )
        .await;
        combine([&m1, &m2, &m3, &m4, &m5, &m6, &m7].map(|v| &v[..]))
    }
}

/// Structured futures on the async front-end: six products spawned, the seventh called, then
/// the six handles awaited (once each) by the final additions.
pub fn sf_async<'s, C: AsyncWorker<'s>>(
    c: C,
    a: Operand<'s>,
    b: Operand<'s>,
) -> impl Future<Output = Vec<Block>> + Send + 's {
    async move {
        let [p1, p2, p3, p4, p5, p6, p7] = match async_step(&a, &b) {
            Ok(p) => p,
            Err(c) => return c,
        };
        let f1 = c.spawn(move |c| sf_async(c, p1.0, p1.1)).await;
        let f2 = c.spawn(move |c| sf_async(c, p2.0, p2.1)).await;
        let f3 = c.spawn(move |c| sf_async(c, p3.0, p3.1)).await;
        let f4 = c.spawn(move |c| sf_async(c, p4.0, p4.1)).await;
        let f5 = c.spawn(move |c| sf_async(c, p5.0, p5.1)).await;
        let f6 = c.spawn(move |c| sf_async(c, p6.0, p6.1)).await;
        let m7 = c.call(move |c| sf_async(c, p7.0, p7.1)).await;
        let m = [
            f1.await,
            f2.await,
            f3.await,
            f4.await,
            f5.await,
            f6.await,
            m7,
        ];
        combine(m.each_ref().map(|v| &v[..]))
    }
}

/// The seeds of the input and of the check's vectors.
const INPUT_SEED: u64 = 0x736d_6d5e_ed00_0001;
const CHECK_SEED: u64 = 0x736d_6dc4_ec00_0002;

impl Workload for Smm {
    const NAME: &'static str = "smm";
    const DESCRIPTION: &'static str =
        "Strassen multiply (Winograd form), 7 products per level, D&C below 64, 16x16 base case";
    const VARIANTS: &'static [Variant] = &[Variant::Fj, Variant::Sf];
    const ASYNC_VARIANTS: &'static [Variant] = &[Variant::Fj, Variant::Sf];

    type Input = SmmInput;
    type Work = ();
    type Answer = Vec<Block>;

    fn preset(size: Size) -> Params {
        let n = match size {
            Size::Paper => 4096,
            Size::Small => 2048,
            Size::Quick => 1024,
            Size::Test => 256,
        };
        Params::new()
            .int("n", n)
            .int("cutoff", CUTOFF as u64)
            .int("b", B as u64)
            .int("seed", INPUT_SEED)
    }

    fn input(params: &Params) -> Result<SmmInput, String> {
        params.fixed("cutoff", CUTOFF as u64)?;
        params.fixed("b", B as u64)?;
        let n = params.get_usize("n")?;
        if !(CUTOFF..=MAX_SIDE).contains(&n) || n % CUTOFF != 0 || !(n / CUTOFF).is_power_of_two() {
            return Err(format!("n={n}: smm needs n = 64·2^k <= {MAX_SIDE}"));
        }
        // Matrices of f64: A, B, the product and Strassen's sums and products, about n² a
        // level (measured: 8.3 matrices in all at n = 2048, run serially).
        check_memory(&format!("n={n}"), 10.0 * 8.0 * n as f64 * n as f64)?;
        SmmInput::random(n, params.get_int("seed"))
    }

    fn prepare(_input: &SmmInput) {}

    fn run<S: ForkJoin>(
        pool: &S,
        variant: Variant,
        input: &SmmInput,
        _work: &mut (),
    ) -> Vec<Block> {
        let (a, b) = (&input.a[..], &input.b[..]);
        match variant {
            Variant::Fj => pool.run(|w| fj(w, a, b)),
            v => crate::not_without_futures::<Self>(v),
        }
    }

    fn run_futures<S: FutureForkJoin>(
        pool: &S,
        variant: Variant,
        input: &SmmInput,
        work: &mut (),
    ) -> Vec<Block> {
        let (a, b) = (&input.a[..], &input.b[..]);
        match variant {
            Variant::Sf => pool.run(|w| sf(w, a, b)),
            v => Self::run(pool, v, input, work),
        }
    }

    fn run_async<S: AsyncForkJoin>(
        pool: &S,
        variant: Variant,
        input: &SmmInput,
        _work: &mut (),
    ) -> Vec<Block> {
        let (a, b) = (Part::Borrowed(&input.a[..]), Part::Borrowed(&input.b[..]));
        match variant {
            Variant::Fj => pool.run_async(|c| fj_async(c, a, b)),
            Variant::Sf => pool.run_async(|c| sf_async(c, a, b)),
            v => panic!("smm has no async {v} variant"),
        }
    }

    fn kernel(input: &SmmInput, _work: &mut ()) -> Vec<Block> {
        serial(&input.a, &input.b)
    }

    fn check(input: &SmmInput, _work: &(), c: &Vec<Block>) -> Result<Checked, String> {
        input.check_product(&c.iter().collect::<Vec<_>>(), CHECK_SEED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{self, naive_product};
    use crate::zorder::to_row_major;

    #[test]
    fn kernel_and_dc_match_naive() {
        let input = SmmInput::random(64, 3).unwrap();
        let want = naive_product(64, &to_row_major(64, &input.a), &to_row_major(64, &input.b));
        assert_eq!(to_row_major(64, &leaf(&input.a, &input.b)), want);
        let mut c = Block::ZERO;
        kernel(&mut c, &input.a[0], &input.b[0]);
        let a0: Vec<f64> = input.a[0].0.to_vec();
        let b0: Vec<f64> = input.b[0].0.to_vec();
        // A 16 × 16 product through the 64 × 64 naive product of zero-padded matrices.
        let pad = |m: &[f64]| {
            let mut p = vec![0.0; 64 * 64];
            for r in 0..B {
                p[r * 64..r * 64 + B].copy_from_slice(&m[r * B..(r + 1) * B]);
            }
            p
        };
        let full = naive_product(64, &pad(&a0), &pad(&b0));
        for r in 0..B {
            assert_eq!(&c.0[r * B..(r + 1) * B], &full[r * 64..r * 64 + B]);
        }
    }

    #[test]
    fn every_variant_matches_naive_on_serial() {
        let pool = testing::serial();
        // 64: the leaf only; 128, 256: one and two Strassen levels.
        for n in [64, 128, 256] {
            let input = SmmInput::random(n, 11).unwrap();
            let want = naive_product(n, &to_row_major(n, &input.a), &to_row_major(n, &input.b));
            assert_eq!(
                to_row_major(n, &serial(&input.a, &input.b)),
                want,
                "serial n={n}"
            );
            testing::check_every_variant::<Smm>(&pool, &pool, &input, |what, _, c| {
                assert_eq!(to_row_major(n, c), want, "{what} n={n}");
            });
        }
    }

    #[test]
    fn extreme_entries_stay_exact() {
        // All entries 7 (the largest): every C entry is 49n; the sums reach their bounds.
        let n = 512;
        let sevens = vec![7.0; n * n];
        let input = SmmInput::from_row_major(n, &sevens, &sevens);
        let c = serial(&input.a, &input.b);
        assert!(to_row_major(n, &c).iter().all(|&x| x == 49.0 * n as f64));
        assert_eq!(
            Smm::check(&input, &(), &c).unwrap().answer,
            format!("C = A·B of side 512, element sum {}", 49 * 512u64.pow(3))
        );
    }

    #[test]
    fn test_preset() {
        assert_eq!(
            Smm::preset(Size::Test).to_string(),
            format!("n=256 cutoff=64 b=16 seed={INPUT_SEED}")
        );
    }

    #[test]
    fn check_rejects_wrong_answers() {
        let input = Smm::input_at(Size::Test);
        let c = Smm::run(&testing::serial(), Variant::Fj, &input, &mut ());
        Smm::check(&input, &(), &c).unwrap();
        let corrupt = |t: usize, i: usize, f: fn(f64) -> f64| {
            let mut c = c.clone();
            c[t].0[i] = f(c[t].0[i]);
            Smm::check(&input, &(), &c)
        };
        assert!(corrupt(0, 0, |x| x + 1.0).unwrap_err().contains("row 0"));
        assert!(corrupt(255, B * B - 1, |x| x - 1.0).is_err());
        assert!(corrupt(1, 5, |x| x + 0.5).unwrap_err().contains("integer"));
        assert!(corrupt(2, 7, |_| -1.0).is_err());
        assert!(corrupt(2, 7, |_| 1e9).is_err());
        assert!(corrupt(2, 7, |_| f64::NAN).is_err());
        assert!(Smm::check(&input, &(), &vec![Block::ZERO; c.len()]).is_err());
        assert!(Smm::check(&input, &(), &c[1..].to_vec()).is_err());
        let mut swapped = c.clone();
        assert_ne!(
            swapped[0].0[0], swapped[0].0[1],
            "the seeded input makes these differ"
        );
        swapped[0].0.swap(0, 1);
        assert!(Smm::check(&input, &(), &swapped).is_err());
    }

    #[test]
    fn rejects_bad_sides() {
        let n = |n: &str| {
            Smm::preset(Size::Test)
                .apply(&[("n".into(), n.into())])
                .unwrap()
        };
        for bad in ["96", "32", "65536"] {
            assert!(Smm::input(&n(bad)).unwrap_err().contains("64·2^k"), "{bad}");
        }
    }
}
