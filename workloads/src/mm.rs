//! `mm`: recursive blocked matrix multiplication C = A·B (ProWS Figure 2, after Cilk's matmul).
//!
//! # Algorithm
//!
//! The `n × n` matrices (`n = 32·2^k`) are split into quadrants; `C += A·B` is
//!
//! ```text
//! C00 += A00·B00   C01 += A00·B01   C10 += A10·B00   C11 += A10·B01    (in parallel)
//! sync
//! C00 += A01·B10   C01 += A01·B11   C10 += A11·B10   C11 += A11·B11    (in parallel)
//! ```
//!
//! recursively, down to 32 × 32 blocks multiplied by [`kernel`] (an i-k-j loop the compiler
//! vectorises). Work is `2n³` flops, span `Θ(n)`.
//!
//! # Layout
//!
//! A matrix is a `Vec` of [`Block`]s (32 × 32, row-major inside) in Z-order (Morton order):
//! quadrant 00, 01, 10, 11, recursively, the layout of [`crate::zorder`]. Every quadrant at
//! every level is then a contiguous quarter of the block slice, so the recursion splits slices
//! and never computes an index. The conversion from and to row-major order
//! ([`zorder::from_row_major`], [`zorder::to_row_major`]) is input generation and checking,
//! never timed.
//!
//! # Why C is a slice of `Mutex<Block>`
//!
//! The async front-end lends borrows only for the whole [`AsyncForkJoin::run_async`] scope, so a
//! task that lends the quarters of its `&mut` part of C to its children can never get the
//! whole part back for the second phase (safe Rust cannot rejoin split `&mut` slices). So every
//! variant, on both front-ends, shares C as `&[Mutex<Block>]`, and the base case takes the
//! block's lock with `try_lock` around the kernel. The algorithm never lets two tasks update
//! the same block at once, so the lock is never contended; `try_lock` failing is reported as a
//! race (a panic) rather than waited for. One uncontended lock per 32 × 32 × 32 kernel (65 536
//! flops) is negligible: measured serially against a plain `&mut [Block]` version, no
//! difference beyond run-to-run noise. Every runtime runs the same memory operations.
//!
//! # Check
//!
//! Elements are small integers ([`zorder::FACTOR_VALUES`]) stored as `f64`, so every product
//! and partial sum is exact and the answer has exactly one correct value.
//! [`zorder::Factors::check_locked_product`] checks it in `O(n²)` (Freivalds).

use crate::params::check_memory;
use crate::zorder::{self, exclusive, product_phases};
use crate::{Checked, InputOptions, Params, Size, Variant, Workload, quarters};
use std::future::Future;
use std::sync::Mutex;
use stealbench_schedulers::{
    AsyncForkJoin, AsyncWorker, ForkJoin, FutureForkJoin, FutureHandle, Futures, Worker,
};

pub use crate::zorder::block_position;
/// The kernel: `c += a·b` on 32 × 32 blocks ([`zorder::mul_add`]).
pub use crate::zorder::mul_add as kernel;

/// The workload marker type.
#[derive(Debug)]
pub struct Mm;

/// The papers' matrices at paper size (`input=`): ProWS (Figure 2), Fibril (Table 1) and
/// libfork (Table I).
pub const PAPER_INPUTS: [(&str, usize); 3] = [("prows", 4096), ("fibril", 2048), ("libfork", 8192)];

/// The value of `n` that takes the side from `input` and `shrink`.
pub const FROM_INPUT: &str = "input";

/// The matrix side the parameters give (`Err`: an unknown input, or a side that is not
/// 32·2^k).
fn side(params: &Params) -> Result<usize, String> {
    params.fixed("b", B as u64)?;
    let n = match params.get_int_or("n", FROM_INPUT)? {
        None => {
            let name = params.get_text("input");
            let Some(&(_, paper_n)) = PAPER_INPUTS.iter().find(|(p, _)| *p == name) else {
                let names: Vec<_> = PAPER_INPUTS.iter().map(|(p, _)| *p).collect();
                return Err(format!("input={name}: mm knows {}", names.join(", ")));
            };
            let shrink = params.get_usize("shrink")?;
            if shrink == 0 {
                return Err("shrink=0: the paper's side is divided by it".to_string());
            }
            paper_n / shrink
        }
        Some(n) => usize::try_from(n).map_err(|_| format!("n={n}: mm needs n = 32·2^k"))?,
    };
    if n < B || n % B != 0 || !(n / B).is_power_of_two() {
        return Err(format!("n={n}: mm needs n = 32·2^k"));
    }
    Ok(n)
}

/// The side of a base-case block (the paper's base case 32 × 32).
pub const B: usize = 32;

/// A 32 × 32 block of a matrix, row-major; aligned to a cache line.
pub type Block = zorder::Block<{ B * B }>;

/// A block of the result C: tasks share C, the lock makes each block update exclusive (see the
/// module documentation).
pub type CBlock = Mutex<Block>;

/// The input: `n` (`32·2^k`) and the two factors in blocked Z-order.
pub type MmInput = zorder::Factors<{ B * B }>;

/// The base case: locks the C block (never contended, see the module documentation) and runs
/// the kernel.
fn base(c: &CBlock, a: &Block, b: &Block) {
    kernel(&mut exclusive(c, "mm"), a, b);
}

/// One product `C' += A'·B'` of the recursion: parts of C, A and B of the same size.
type Product<'a> = zorder::Product<&'a [CBlock], &'a [Block], &'a [Block]>;

/// The recursion step, written once for every variant: `None` after running the base case,
/// otherwise the two phases of four independent quadrant products.
fn step<'a>(c: &'a [CBlock], a: &'a [Block], b: &'a [Block]) -> Option<[[Product<'a>; 4]; 2]> {
    debug_assert!(c.len() == a.len() && c.len() == b.len() && c.len().is_power_of_two());
    if c.len() == 1 {
        base(&c[0], &a[0], &b[0]);
        return None;
    }
    Some(product_phases(quarters(c), quarters(a), quarters(b)))
}

/// Fork-join: per phase, the four products under nested `join`s, which return after all four
/// (Cilk's four spawns and a sync).
pub fn fj<W: Worker>(w: &W, c: &[CBlock], a: &[Block], b: &[Block]) {
    let Some(phases) = step(c, a, b) else {
        return;
    };
    for [p0, p1, p2, p3] in phases {
        w.join(
            |w| w.join(|w| fj(w, p0.0, p0.1, p0.2), |w| fj(w, p1.0, p1.1, p1.2)),
            |w| w.join(|w| fj(w, p2.0, p2.1, p2.2), |w| fj(w, p3.0, p3.1, p3.2)),
        );
    }
}

/// The serial elision of [`fj`] as a plain function, the workload's kernel: per phase, the
/// four products called one after the other, no runtime.
pub fn serial(c: &[CBlock], a: &[Block], b: &[Block]) {
    let Some(phases) = step(c, a, b) else {
        return;
    };
    for phase in phases {
        for p in phase {
            serial(p.0, p.1, p.2);
        }
    }
}

/// Structured futures: per phase, three products as futures and the fourth called directly
/// (a future touched right after its creation), then the three futures touched once each.
pub fn sf<W: Futures>(w: &W, c: &[CBlock], a: &[Block], b: &[Block]) {
    let Some(phases) = step(c, a, b) else {
        return;
    };
    w.scope(|s, w| {
        for [p0, p1, p2, p3] in phases {
            let f0 = w.future(s, move |_, w| sf(w, p0.0, p0.1, p0.2));
            let f1 = w.future(s, move |_, w| sf(w, p1.0, p1.1, p1.2));
            let f2 = w.future(s, move |_, w| sf(w, p2.0, p2.1, p2.2));
            sf(w, p3.0, p3.1, p3.2);
            f0.get(w);
            f1.get(w);
            f2.get(w);
        }
    });
}

/// Fork-join on the async front-end: per phase, nested [`AsyncWorker::join`]s over the four
/// products.
pub fn fj_async<'s, C: AsyncWorker<'s>>(
    w: C,
    c: &'s [CBlock],
    a: &'s [Block],
    b: &'s [Block],
) -> impl Future<Output = ()> + Send + 's {
    /// The join of two products, as one child of the outer join.
    fn pair<'s, C: AsyncWorker<'s>>(
        w: C,
        p: Product<'s>,
        q: Product<'s>,
    ) -> impl Future<Output = ()> + Send + 's {
        async move {
            w.join(
                move |w| fj_async(w, p.0, p.1, p.2),
                move |w| fj_async(w, q.0, q.1, q.2),
            )
            .await;
        }
    }
    async move {
        let Some(phases) = step(c, a, b) else {
            return;
        };
        for [p0, p1, p2, p3] in phases {
            w.join(move |w| pair(w, p0, p1), move |w| pair(w, p2, p3))
                .await;
        }
    }
}

/// Structured futures on the async front-end: per phase, three products spawned, the fourth
/// called, then the three handles awaited once each.
pub fn sf_async<'s, C: AsyncWorker<'s>>(
    w: C,
    c: &'s [CBlock],
    a: &'s [Block],
    b: &'s [Block],
) -> impl Future<Output = ()> + Send + 's {
    async move {
        let Some(phases) = step(c, a, b) else {
            return;
        };
        for [p0, p1, p2, p3] in phases {
            let f0 = w.spawn(move |w| sf_async(w, p0.0, p0.1, p0.2)).await;
            let f1 = w.spawn(move |w| sf_async(w, p1.0, p1.1, p1.2)).await;
            let f2 = w.spawn(move |w| sf_async(w, p2.0, p2.1, p2.2)).await;
            w.call(move |w| sf_async(w, p3.0, p3.1, p3.2)).await;
            f0.await;
            f1.await;
            f2.await;
        }
    }
}

/// The seeds of the input and of the check's vectors.
const INPUT_SEED: u64 = 0x6d6d_5eed_0000_0001;
const CHECK_SEED: u64 = 0x6d6d_c4ec_0000_0002;

impl Workload for Mm {
    const NAME: &'static str = "mm";
    const DESCRIPTION: &'static str =
        "recursive blocked matrix multiply, 8 quadrant products per level, 32x32 base case";
    const VARIANTS: &'static [Variant] = &[Variant::Fj, Variant::Sf];
    const ASYNC_VARIANTS: &'static [Variant] = &[Variant::Fj, Variant::Sf];

    type Input = MmInput;
    type Work = Vec<CBlock>;
    type Answer = ();

    /// `input` names the paper whose matrix this is ([`PAPER_INPUTS`]: ProWS's by default);
    /// `n` is a number, or `input` for that paper's n divided by the size's `shrink` (1 at
    /// paper size, 2 small, 4 quick, 64 test), so that a figure's row `mm/input=fibril` runs
    /// Fibril's matrix at paper size and shrinks it as every other input shrinks.
    fn preset(size: Size) -> Params {
        let shrink = match size {
            Size::Paper => 1,
            Size::Small => 2,
            Size::Quick => 4,
            Size::Test => 64,
        };
        Params::new()
            .text("input", PAPER_INPUTS[0].0)
            .text("n", FROM_INPUT)
            .int("shrink", shrink)
            .int("b", B as u64)
            .int("seed", INPUT_SEED)
    }

    fn input(params: &Params) -> Result<MmInput, String> {
        let n = side(params)?;
        // Three matrices of f64: A, B and a repetition's C.
        check_memory(&format!("n={n}"), 3.0 * 8.0 * n as f64 * n as f64)?;
        MmInput::random(n, params.get_int("seed"))
    }

    /// The parameters with `n` resolved: a row records the side it ran.
    fn params_with(params: &Params, _options: &InputOptions) -> Result<String, String> {
        let mut p = params.clone();
        p.set("n", &side(params)?.to_string())?;
        Ok(p.to_string())
    }

    fn prepare(input: &MmInput) -> Vec<CBlock> {
        // Writes every block, so the pages are mapped before the timed run.
        input.a.iter().map(|_| Mutex::new(Block::ZERO)).collect()
    }

    fn run<S: ForkJoin>(pool: &S, variant: Variant, input: &MmInput, c: &mut Vec<CBlock>) {
        let (a, b, c) = (&input.a[..], &input.b[..], &c[..]);
        match variant {
            Variant::Fj => pool.run(|w| fj(w, c, a, b)),
            v => crate::not_without_futures::<Self>(v),
        }
    }

    fn run_futures<S: FutureForkJoin>(
        pool: &S,
        variant: Variant,
        input: &MmInput,
        c: &mut Vec<CBlock>,
    ) {
        match variant {
            Variant::Sf => {
                let (a, b, c) = (&input.a[..], &input.b[..], &c[..]);
                pool.run(|w| sf(w, c, a, b))
            }
            v => Self::run(pool, v, input, c),
        }
    }

    fn run_async<S: AsyncForkJoin>(
        pool: &S,
        variant: Variant,
        input: &MmInput,
        c: &mut Vec<CBlock>,
    ) {
        let (a, b, c) = (&input.a[..], &input.b[..], &c[..]);
        match variant {
            Variant::Fj => pool.run_async(|w| fj_async(w, c, a, b)),
            Variant::Sf => pool.run_async(|w| sf_async(w, c, a, b)),
            v => panic!("mm has no async {v} variant"),
        }
    }

    fn kernel(input: &MmInput, c: &mut Vec<CBlock>) {
        serial(c, &input.a, &input.b);
    }

    fn check(input: &MmInput, c: &Vec<CBlock>, _answer: &()) -> Result<Checked, String> {
        input.check_locked_product(c, CHECK_SEED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{self, naive_product};
    use crate::zorder::{from_row_major, to_row_major};

    fn result(c: &[CBlock]) -> Vec<Block> {
        c.iter().map(|m| m.lock().unwrap().clone()).collect()
    }

    #[test]
    fn layout_round_trips_and_quadrants_are_contiguous() {
        let n = 128;
        let m: Vec<f64> = (0..n * n).map(|x| x as f64).collect();
        let blocks: Vec<Block> = from_row_major(n, &m);
        assert_eq!(to_row_major(n, &blocks), m);
        // The second quarter of the blocks is the top-right quadrant.
        let q = quarters(&blocks[..])[1];
        assert_eq!(q[0].0[0], (n / 2) as f64);
        assert_eq!(block_position(0b1110), (3, 2));
    }

    #[test]
    fn kernel_matches_naive() {
        let input = MmInput::random(B, 1).unwrap();
        let mut c = Block::ZERO;
        kernel(&mut c, &input.a[0], &input.b[0]);
        kernel(&mut c, &input.a[0], &input.b[0]);
        let want = naive_product(B, &input.a[0].0, &input.b[0].0);
        let twice: Vec<f64> = want.iter().map(|x| 2.0 * x).collect();
        assert_eq!(c.0.to_vec(), twice);
    }

    #[test]
    fn every_variant_matches_naive_on_serial() {
        let pool = testing::serial();
        for n in [B, 128] {
            let input = MmInput::random(n, 7).unwrap();
            let want = naive_product(n, &to_row_major(n, &input.a), &to_row_major(n, &input.b));
            testing::check_every_variant::<Mm>(&pool, &pool, &input, |what, c, _| {
                assert_eq!(to_row_major(n, &result(c)), want, "{what} n={n}");
            });
        }
    }

    #[test]
    fn test_preset() {
        assert_eq!(
            Mm::preset(Size::Test).to_string(),
            format!("input=prows n=input shrink=64 b=32 seed={INPUT_SEED}")
        );
        let resolved = |size, spec: &[(&str, &str)]| {
            let over: Vec<_> = spec.iter().map(|&(k, v)| (k.into(), v.into())).collect();
            let p = Mm::preset(size).apply(&over).unwrap();
            side(&p)
        };
        assert_eq!(resolved(Size::Paper, &[]), Ok(4096));
        assert_eq!(resolved(Size::Paper, &[("input", "fibril")]), Ok(2048));
        assert_eq!(resolved(Size::Quick, &[("input", "libfork")]), Ok(2048));
        assert_eq!(resolved(Size::Test, &[("input", "fibril")]), Ok(32));
        assert_eq!(resolved(Size::Quick, &[("n", "256")]), Ok(256));
        assert!(
            resolved(Size::Paper, &[("input", "cilk")])
                .unwrap_err()
                .contains("knows")
        );
        assert!(
            resolved(Size::Paper, &[("n", "100")])
                .unwrap_err()
                .contains("32·2^k")
        );
    }

    #[test]
    fn identity_times_b_is_b() {
        let n = 64;
        let mut id = vec![0.0; n * n];
        for i in 0..n {
            id[i * n + i] = 1.0;
        }
        let b: Vec<f64> = (0..n * n).map(|x| (x % 7) as f64).collect();
        let input = MmInput::from_row_major(n, &id, &b);
        let mut c = Mm::prepare(&input);
        Mm::run(&testing::serial(), Variant::Fj, &input, &mut c);
        assert_eq!(to_row_major(n, &result(&c)), b);
    }

    #[test]
    fn check_rejects_wrong_answers() {
        let input = Mm::input_at(Size::Test);
        let mut c = Mm::prepare(&input);
        Mm::run(&testing::serial(), Variant::Fj, &input, &mut c);
        let sum: f64 = result(&c).iter().flat_map(|blk| blk.0).sum();
        assert_eq!(
            Mm::check(&input, &c, &()).unwrap().to_string(),
            format!(
                "C = A·B of side 64, element sum {sum}; checked against A·(B·x) for two random \
                 vectors x (Freivalds)"
            )
        );
        let corrupt = |t: usize, i: usize, f: fn(f64) -> f64| {
            let c: Vec<CBlock> = result(&c).into_iter().map(Mutex::new).collect();
            let old = c[t].lock().unwrap().0[i];
            c[t].lock().unwrap().0[i] = f(old);
            Mm::check(&input, &c, &())
        };
        // One element off by one, in the first and in the last block.
        assert!(corrupt(0, 0, |x| x + 1.0).unwrap_err().contains("row 0"));
        assert!(corrupt(3, B * B - 1, |x| x - 1.0).is_err());
        // Not an integer, negative, too large, NaN.
        assert!(corrupt(1, 5, |x| x + 0.5).unwrap_err().contains("integer"));
        assert!(corrupt(2, 7, |_| -1.0).is_err());
        assert!(corrupt(2, 7, |_| 1e9).is_err());
        assert!(corrupt(2, 7, |_| f64::NAN).is_err());
        // An untouched C is wrong too.
        assert!(Mm::check(&input, &Mm::prepare(&input), &()).is_err());
        // Two elements of one row swapped.
        let c2: Vec<CBlock> = result(&c).into_iter().map(Mutex::new).collect();
        {
            let mut blk = c2[0].lock().unwrap();
            assert_ne!(blk.0[0], blk.0[1], "the seeded input makes these differ");
            blk.0.swap(0, 1);
        }
        assert!(Mm::check(&input, &c2, &()).is_err());
    }

    #[test]
    fn rejects_bad_sides() {
        let e = MmInput::random(96, 1).unwrap_err();
        assert_eq!(e, "n=96: needs n = 32·2^k");
    }
}
