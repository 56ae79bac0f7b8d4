//! `rectmul`: recursive matrix multiplication `C = A·B` that splits the largest of the three
//! dimensions (Cilk-5's `rectmul.cilk` by Harald Prokop, one of the Cilk-5 examples that
//! Fibril's paper runs: `n = 4096`).
//!
//! # Algorithm
//!
//! A product `C += A·B` with A of `x × y` blocks, B of `y × z` and C of `x × z` (16 × 16 blocks,
//! Cilk's `BLOCK_EDGE`) splits one dimension in two, as Cilk's `multiply_matrix`:
//!
//! - `x` if it is the largest (ties included): the top and bottom halves of A and C, two
//!   independent products, in parallel;
//! - else `y` if it is strictly the largest: `C += A0·B0` and `T = A1·B1` in parallel, with
//!   `T` a fresh temporary of C's shape, then `C += T` by a parallel addition (Cilk's
//!   `add_matrix`: the larger dimension halved, down to single blocks);
//! - else `z`: the left and right halves of B and C, in parallel;
//!
//! down to one block times one block ([`zorder::mul_add`]). So unlike `mm`, whose two phases
//! of four products follow each other, the inner dimension is summed by products running in
//! parallel into temporaries (allocated inside the timed region, as Cilk allocates them).
//! Work `2n³` flops for the products plus `n³/16` for adding the temporaries (a temporary of
//! `x·z` blocks at every inner split: `(m − 1)·m²` blocks in all for `m = n/16` blocks a
//! side); span `Θ(log² m)` block operations.
//!
//! Cilk's code multiplies any `x`, `y`, `z`; the benchmark's input is square (`x = y = z =
//! n/16`). From a square of `2^k` blocks the three dimensions stay powers of two within a
//! factor of two of each other (the largest is the one halved), so every part of A, B or C
//! met in the recursion is a square or two squares side by side or stacked ([`View`]); such
//! a recursion handles square inputs of side `16·2^k`, which is what it accepts. On a square,
//! the rule splits `x`, then `z`, then `y`.
//!
//! # Layout and sharing
//!
//! Matrices are in blocked Z-order ([`crate::zorder`]): a square part is a contiguous slice of
//! blocks, its halves and quarters are contiguous or pairs of contiguous squares. Cilk stores
//! row-major blocks with a row stride; the recursion and the blocks are the same. As in `mm`,
//! C is shared as `Mutex` blocks, each taken with `try_lock` around the kernel (never
//! contended: a held lock is a race, a panic), since the async front-end lends a task only what
//! outlives the whole [`AsyncForkJoin::run_async`] scope. For the same reason the temporaries
//! are shared by reference count ([`zorder::Part`]); the closure front-end uses the same
//! representation, so every runtime runs the same memory operations. Cilk leaves a
//! temporary uninitialised and lets its first product assign rather than add; here it is zeroed
//! when allocated and every product adds.
//!
//! # Check
//!
//! Entries of A and B are integers in `0..8` (Cilk's are all ones) stored as `f64`: every value
//! is an exact integer, and C has exactly one correct value, checked by Freivalds' algorithm as
//! in `mm` ([`zorder::Factors::check_locked_product`]).

use crate::params::check_memory;
use crate::zorder::{self, Part, exclusive};
use crate::{Checked, Params, Size, Variant, Workload, quarters};
use std::future::Future;
use std::sync::Mutex;
use stealbench_schedulers::{AsyncForkJoin, AsyncWorker, ForkJoin, Worker};

/// The workload marker type.
#[derive(Debug)]
pub struct Rectmul;

/// The side of a block (Cilk's `BLOCK_EDGE`).
pub const B: usize = 16;

/// A 16 × 16 block, row-major.
pub type Block = zorder::Block<{ B * B }>;

/// A block of C or of a temporary: tasks share it, the lock makes each update exclusive.
pub type CBlock = Mutex<Block>;

/// A square part of C or of a temporary.
pub type Target<'s> = Part<'s, CBlock>;

/// A square of blocks in Z-order that the recursion can quarter.
pub trait Quadrants: Clone {
    /// The number of blocks.
    fn blocks(&self) -> usize;
    /// The four quadrants.
    fn quadrants(&self) -> [Self; 4];
}

impl<T> Quadrants for &[T] {
    fn blocks(&self) -> usize {
        self.len()
    }
    fn quadrants(&self) -> [Self; 4] {
        quarters(self)
    }
}

impl<T> Quadrants for Part<'_, T> {
    fn blocks(&self) -> usize {
        self.len()
    }
    fn quadrants(&self) -> [Self; 4] {
        self.quarters()
    }
}

/// A part of a matrix met in the recursion: one square, or two squares side by side (`Wide`,
/// left then right) or stacked (`Tall`, top then bottom).
#[derive(Debug, Clone)]
pub enum View<S> {
    /// One square.
    Square(S),
    /// Two squares side by side: rows `h`, columns `2h`.
    Wide([S; 2]),
    /// Two squares stacked: rows `2h`, columns `h`.
    Tall([S; 2]),
}

impl<S: Quadrants> View<S> {
    /// The side of its squares, in blocks.
    fn side(&self) -> usize {
        match self {
            View::Square(s) | View::Wide([s, _]) | View::Tall([s, _]) => s.blocks().isqrt(),
        }
    }

    /// Rows and columns, in blocks.
    pub fn dims(&self) -> (usize, usize) {
        let h = self.side();
        match self {
            View::Square(_) => (h, h),
            View::Wide(_) => (h, 2 * h),
            View::Tall(_) => (2 * h, h),
        }
    }

    /// The top and bottom halves. A square gives two wide halves (quadrants 00 01 and 10 11),
    /// a tall part its two squares.
    ///
    /// # Panics
    /// On a wide part (the recursion never halves the shorter side).
    fn split_rows(self) -> [Self; 2] {
        match self {
            View::Square(s) => {
                let [q00, q01, q10, q11] = s.quadrants();
                [View::Wide([q00, q01]), View::Wide([q10, q11])]
            }
            View::Tall([top, bottom]) => [View::Square(top), View::Square(bottom)],
            View::Wide(_) => unreachable!("rectmul halves the rows of a wide part"),
        }
    }

    /// The left and right halves. A square gives two tall halves (quadrants 00 10 and 01 11),
    /// a wide part its two squares.
    ///
    /// # Panics
    /// On a tall part (the recursion never halves the shorter side).
    fn split_cols(self) -> [Self; 2] {
        match self {
            View::Square(s) => {
                let [q00, q01, q10, q11] = s.quadrants();
                [View::Tall([q00, q10]), View::Tall([q01, q11])]
            }
            View::Wide([left, right]) => [View::Square(left), View::Square(right)],
            View::Tall(_) => unreachable!("rectmul halves the columns of a tall part"),
        }
    }

    /// The single block of a 1 × 1 part.
    fn single(&self) -> Option<S> {
        match self {
            View::Square(s) if s.blocks() == 1 => Some(s.clone()),
            _ => None,
        }
    }
}

/// A zeroed temporary of the shape of `c`.
fn temporary<'s>(c: &View<Target<'s>>) -> View<Target<'s>> {
    let (rows, cols) = c.dims();
    let all = Part::counted((0..rows * cols).map(|_| Mutex::new(Block::ZERO)).collect());
    match c {
        View::Square(_) => View::Square(all),
        View::Wide(_) => View::Wide(all.halves()),
        View::Tall(_) => View::Tall(all.halves()),
    }
}

/// One product `C += A·B` of the recursion.
pub type Product<'s> = (View<Target<'s>>, View<&'s [Block]>, View<&'s [Block]>);

/// What a product does after its base case check.
pub enum Step<'s> {
    /// It was one block times one block, and is done.
    Done,
    /// `x` or `z` halved: two independent products.
    Split([Product<'s>; 2]),
    /// `y` halved: `into_c` (`C += A0·B0`) and `into_t` (`T += A1·B1`, `T` zero) in parallel,
    /// then `C += T`.
    Inner {
        /// The product into C.
        into_c: Product<'s>,
        /// The product into the temporary.
        into_t: Product<'s>,
        /// C and the temporary, for the addition.
        sum: (View<Target<'s>>, View<Target<'s>>),
    },
}

/// The recursion step, written once (Cilk's `multiply_matrix`): runs the base case of one
/// block, or splits the largest dimension (module docs).
pub fn step<'s>(c: View<Target<'s>>, a: View<&'s [Block]>, b: View<&'s [Block]>) -> Step<'s> {
    let ((x, y), (_, z)) = (a.dims(), b.dims());
    if let (Some(c), Some(a), Some(b)) = (c.single(), a.single(), b.single()) {
        zorder::mul_add(&mut exclusive(&c.blocks()[0], "rectmul"), &a[0], &b[0]);
        return Step::Done;
    }
    if x >= y && x >= z {
        let ([c0, c1], [a0, a1]) = (c.split_rows(), a.split_rows());
        Step::Split([(c0, a0, b.clone()), (c1, a1, b)])
    } else if y > x && y > z {
        let ([a0, a1], [b0, b1]) = (a.split_cols(), b.split_rows());
        let t = temporary(&c);
        Step::Inner {
            into_c: (c.clone(), a0, b0),
            into_t: (t.clone(), a1, b1),
            sum: (c, t),
        }
    } else {
        let ([c0, c1], [b0, b1]) = (c.split_cols(), b.split_cols());
        Step::Split([(c0, a.clone(), b0), (c1, a, b1)])
    }
}

/// The addition step (Cilk's `add_matrix`): `c += t` on one block, or the halves of the larger
/// dimension (columns on a tie).
fn add_step<'s>(c: View<Target<'s>>, t: View<Target<'s>>) -> Option<[[View<Target<'s>>; 2]; 2]> {
    if let (Some(c), Some(t)) = (c.single(), t.single()) {
        let mut c = exclusive(&c.blocks()[0], "rectmul");
        let t = exclusive(&t.blocks()[0], "rectmul");
        for (c, t) in c.0.iter_mut().zip(&t.0) {
            *c += t;
        }
        return None;
    }
    let (rows, cols) = c.dims();
    let ([c0, c1], [t0, t1]) = if rows > cols {
        (c.split_rows(), t.split_rows())
    } else {
        (c.split_cols(), t.split_cols())
    };
    Some([[c0, t0], [c1, t1]])
}

/// Fork-join: the two products of a split under `join`; for the inner dimension, the two
/// products under `join`, then the addition.
pub fn fj<'s, W: Worker>(w: &W, (c, a, b): Product<'s>) {
    match step(c, a, b) {
        Step::Done => {}
        Step::Split([p, q]) => {
            w.join(|w| fj(w, p), |w| fj(w, q));
        }
        Step::Inner {
            into_c,
            into_t,
            sum: (c, t),
        } => {
            // Cilk forks the product into C and calls the one into the temporary.
            w.join(|w| fj(w, into_c), |w| fj(w, into_t));
            add_fj(w, c, t);
        }
    }
}

/// Fork-join addition `c += t`: halves under `join`, down to single blocks.
pub fn add_fj<W: Worker>(w: &W, c: View<Target<'_>>, t: View<Target<'_>>) {
    if let Some([[c0, t0], [c1, t1]]) = add_step(c, t) {
        w.join(|w| add_fj(w, c0, t0), |w| add_fj(w, c1, t1));
    }
}

/// The kernel: the serial elision of [`fj`] as a plain function (the products of a step one
/// after the other, then the addition), no runtime.
pub fn serial((c, a, b): Product<'_>) {
    match step(c, a, b) {
        Step::Done => {}
        Step::Split([p, q]) => {
            serial(p);
            serial(q);
        }
        Step::Inner {
            into_c,
            into_t,
            sum: (c, t),
        } => {
            serial(into_c);
            serial(into_t);
            add_serial(c, t);
        }
    }
}

/// The serial elision of [`add_fj`].
fn add_serial(c: View<Target<'_>>, t: View<Target<'_>>) {
    if let Some([[c0, t0], [c1, t1]]) = add_step(c, t) {
        add_serial(c0, t0);
        add_serial(c1, t1);
    }
}

/// Fork-join on the async front-end: as [`fj`], with [`AsyncWorker::join`].
pub fn fj_async<'s, C: AsyncWorker<'s>>(
    w: C,
    (c, a, b): Product<'s>,
) -> impl Future<Output = ()> + Send + 's {
    async move {
        match step(c, a, b) {
            Step::Done => {}
            Step::Split([p, q]) => {
                w.join(move |w| fj_async(w, p), move |w| fj_async(w, q))
                    .await;
            }
            Step::Inner {
                into_c,
                into_t,
                sum: (c, t),
            } => {
                w.join(move |w| fj_async(w, into_c), move |w| fj_async(w, into_t))
                    .await;
                w.call(move |w| add_async(w, c, t)).await;
            }
        }
    }
}

/// Fork-join addition on the async front-end.
pub fn add_async<'s, C: AsyncWorker<'s>>(
    w: C,
    c: View<Target<'s>>,
    t: View<Target<'s>>,
) -> impl Future<Output = ()> + Send + 's {
    async move {
        if let Some([[c0, t0], [c1, t1]]) = add_step(c, t) {
            w.join(move |w| add_async(w, c0, t0), move |w| add_async(w, c1, t1))
                .await;
        }
    }
}

/// The input: `n` (`16·2^k`) and the two factors in blocked Z-order.
pub type RectmulInput = zorder::Factors<{ B * B }>;

/// The seeds of the input and of the check's vectors.
const INPUT_SEED: u64 = 0x7265_5eed_0000_0001;
const CHECK_SEED: u64 = 0x7265_c4ec_0000_0002;

/// The whole product of the input into `c`.
fn root<'s>(input: &'s RectmulInput, c: &'s [CBlock]) -> Product<'s> {
    (
        View::Square(Part::Borrowed(c)),
        View::Square(&input.a[..]),
        View::Square(&input.b[..]),
    )
}

impl Workload for Rectmul {
    const NAME: &'static str = "rectmul";
    const DESCRIPTION: &'static str =
        "recursive multiply splitting the largest dimension (Cilk-5 rectmul), 16x16 blocks";
    const VARIANTS: &'static [Variant] = &[Variant::Fj];
    const ASYNC_VARIANTS: &'static [Variant] = &[Variant::Fj];

    type Input = RectmulInput;
    type Work = Vec<CBlock>;
    type Answer = ();

    fn preset(size: Size) -> Params {
        let n = match size {
            Size::Paper => 4096,
            Size::Small => 2048,
            Size::Quick => 1024,
            Size::Test => 128,
        };
        Params::new()
            .int("n", n)
            .int("b", B as u64)
            .int("seed", INPUT_SEED)
    }

    fn input(params: &Params) -> Result<RectmulInput, String> {
        params.fixed("b", B as u64)?;
        let n = params.get_usize("n")?;
        // Three matrices of f64: A, B and a repetition's C.
        check_memory(&format!("n={n}"), 3.0 * 8.0 * n as f64 * n as f64)?;
        RectmulInput::random(n, params.get_int("seed"))
    }

    /// A zero C (every block written, so its pages are mapped before the timed run).
    fn prepare(input: &RectmulInput) -> Vec<CBlock> {
        (0..input.a.len())
            .map(|_| Mutex::new(Block::ZERO))
            .collect()
    }

    fn run<S: ForkJoin>(pool: &S, variant: Variant, input: &RectmulInput, c: &mut Vec<CBlock>) {
        let c = &c[..];
        match variant {
            Variant::Fj => pool.run(|w| fj(w, root(input, c))),
            v => panic!("rectmul has no {v} variant"),
        }
    }

    fn run_async<S: AsyncForkJoin>(
        pool: &S,
        variant: Variant,
        input: &RectmulInput,
        c: &mut Vec<CBlock>,
    ) {
        let c = &c[..];
        match variant {
            Variant::Fj => pool.run_async(|w| fj_async(w, root(input, c))),
            v => panic!("rectmul has no async {v} variant"),
        }
    }

    fn kernel(input: &RectmulInput, c: &mut Vec<CBlock>) {
        serial(root(input, c));
    }

    fn check(input: &RectmulInput, c: &Vec<CBlock>, _answer: &()) -> Result<Checked, String> {
        input.check_locked_product(c, CHECK_SEED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{self, naive_product};

    fn result(c: &[CBlock]) -> Vec<Block> {
        c.iter().map(|m| m.lock().unwrap().clone()).collect()
    }

    fn multiply<S: ForkJoin>(pool: &S, input: &RectmulInput) -> Vec<CBlock> {
        let mut c = Rectmul::prepare(input);
        Rectmul::run(pool, Variant::Fj, input, &mut c);
        c
    }

    #[test]
    fn views_split_as_the_matrix() {
        let v: Vec<u32> = (0..16).collect();
        let sq = View::Square(&v[..]);
        assert_eq!(sq.dims(), (4, 4));
        let [top, bottom] = sq.clone().split_rows();
        assert_eq!(top.dims(), (2, 4));
        let View::Wide([l, r]) = bottom.clone() else {
            panic!("the bottom half is wide")
        };
        assert_eq!((l, r), (&v[8..12], &v[12..16]));
        let [left, _] = sq.split_cols();
        assert_eq!(left.dims(), (4, 2));
        let View::Tall([t, b]) = left.clone() else {
            panic!("the left half is tall")
        };
        assert_eq!((t, b), (&v[0..4], &v[8..12]));
        let [sq0, _] = left.split_rows();
        assert!(matches!(sq0, View::Square(s) if s == &v[0..4]));
        assert!(matches!(bottom.split_cols()[1], View::Square(s) if s == &v[12..16]));
    }

    #[test]
    fn kernel_and_recursion_match_naive() {
        let pool = testing::serial();
        // One block; then two and three levels of the x, z, y cycle.
        for n in [16, 32, 64] {
            let input = RectmulInput::random(n, 9).unwrap();
            let (a, b) = (
                zorder::to_row_major(n, &input.a),
                zorder::to_row_major(n, &input.b),
            );
            let c = multiply(&pool, &input);
            assert_eq!(
                zorder::to_row_major(n, &result(&c)),
                naive_product(n, &a, &b),
                "n={n}"
            );
        }
    }

    #[test]
    fn every_variant_checks_on_serial() {
        let pool = testing::serial();
        let input = Rectmul::input_at(Size::Test);
        assert_eq!(
            Rectmul::preset(Size::Test).to_string(),
            format!("n=128 b=16 seed={INPUT_SEED}")
        );
        let want = result(&multiply(&pool, &input));
        testing::check_every_variant::<Rectmul>(&pool, &pool, &input, |what, c, _| {
            assert_eq!(result(c), want, "{what}");
        });
    }

    #[test]
    fn check_rejects_wrong_answers() {
        let input = Rectmul::input_at(Size::Test);
        let pool = testing::serial();
        let good = result(&multiply(&pool, &input));
        let shared = |v: Vec<Block>| -> Vec<CBlock> { v.into_iter().map(Mutex::new).collect() };
        let sum: f64 = good.iter().flat_map(|blk| blk.0).sum();
        assert_eq!(
            Rectmul::check(&input, &shared(good.clone()), &())
                .unwrap()
                .answer,
            format!("C = A·B of side {}, element sum {sum}", input.n)
        );
        let corrupt = |t: usize, i: usize, f: fn(f64) -> f64| {
            let mut v = good.clone();
            v[t].0[i] = f(v[t].0[i]);
            Rectmul::check(&input, &shared(v), &())
        };
        assert!(corrupt(0, 0, |x| x + 1.0).unwrap_err().contains("row 0"));
        assert!(corrupt(good.len() - 1, B * B - 1, |x| x - 1.0).is_err());
        assert!(corrupt(1, 5, |x| x + 0.5).unwrap_err().contains("integer"));
        assert!(corrupt(2, 7, |_| f64::NAN).is_err());
        // The second half of the inner dimension left out (as a lost top-level temporary).
        let half = RectmulInput {
            b: input
                .b
                .iter()
                .enumerate()
                .map(|(t, blk)| {
                    let (bi, _) = zorder::block_position(t);
                    if bi < input.n / B / 2 {
                        blk.clone()
                    } else {
                        Block::ZERO
                    }
                })
                .collect(),
            ..input.clone()
        };
        let partial = result(&multiply(&pool, &half));
        assert!(Rectmul::check(&input, &shared(partial), &()).is_err());
        // An untouched C.
        assert!(Rectmul::check(&input, &Rectmul::prepare(&input), &()).is_err());
    }

    #[test]
    fn rejects_bad_sides() {
        assert!(RectmulInput::random(96, 1).unwrap_err().contains("16·2^k"));
        assert!(RectmulInput::random(0, 1).is_err());
        let mut p = Rectmul::preset(Size::Test);
        p.set("n", "100").unwrap();
        assert!(Rectmul::input(&p).unwrap_err().contains("n = 16·2^k"));
    }
}
