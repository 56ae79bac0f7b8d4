//! Square matrices stored as square blocks in Z-order: the layout of `mm`, `smm`, `lu` and
//! `rectmul`, and what they share (the block type, conversions, the block kernel, the quadrant
//! products; the factors of a product, [`Factors`], and their check by Freivalds' algorithm).
//!
//! # Layout
//!
//! A matrix of side `n` is a `Vec` of [`Block`]s of side `S` (row-major inside, aligned to a
//! cache line), `n/S` a power of two, in Z-order (Morton order): quadrant 00, 01, 10, 11,
//! recursively. Every quadrant at every level is then a contiguous quarter of the block slice,
//! so a recursion splits slices and never computes an index, and so is every top or bottom
//! half. The conversion from and to row-major order ([`from_row_major`], [`to_row_major`]) is
//! input generation and checking, never timed.
//!
//! A [`Block`] is parameterised by its number of elements `L = S²` rather than by its side:
//! stable Rust cannot write the array type `[f64; S * S]` of a generic side. [`Block::SIDE`]
//! is `√L`, checked when the block type is used.

use crate::Checked;
use crate::rng::SplitMix64;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, TryLockError};

/// A square block of `L = S²` elements (side `S`), row-major; aligned to a cache line.
#[derive(Debug, Clone, PartialEq)]
#[repr(C, align(64))]
pub struct Block<const L: usize>(pub [f64; L]);

impl<const L: usize> Block<L> {
    /// The side `S` of the block: `√L` (a compile-time error if `L` is not a square).
    pub const SIDE: usize = {
        let s = L.isqrt();
        assert!(s > 0 && s * s == L, "a block has S² elements");
        s
    };

    /// The all-zero block.
    pub const ZERO: Self = Block([0.0; L]);

    /// The rows of the block, top to bottom.
    pub fn rows(&self) -> std::slice::ChunksExact<'_, f64> {
        self.0.chunks_exact(Self::SIDE)
    }

    /// The rows of the block, mutable.
    pub fn rows_mut(&mut self) -> std::slice::ChunksExactMut<'_, f64> {
        self.0.chunks_exact_mut(Self::SIDE)
    }
}

/// The number of `S × S` blocks of an `n × n` matrix (`S = Block::<L>::SIDE`), or `None` if
/// `n` is not `S·2^k`.
pub fn block_count<const L: usize>(n: usize) -> Option<usize> {
    let s = Block::<L>::SIDE;
    (n >= s && n.is_multiple_of(s) && (n / s).is_power_of_two()).then(|| (n / s) * (n / s))
}

/// The (block row, block column) of the `t`-th block in Z-order: the bits of `t` alternate
/// row and column bits, the row bit above the column bit.
pub fn block_position(t: usize) -> (usize, usize) {
    fn even_bits(mut x: usize) -> usize {
        let (mut r, mut i) = (0, 0);
        while x != 0 {
            r |= (x & 1) << i;
            x >>= 2;
            i += 1;
        }
        r
    }
    (even_bits(t >> 1), even_bits(t))
}

/// `count` blocks of entries drawn uniformly from `0..values` (as `f64`), block after block,
/// row-major inside a block.
pub fn random_blocks<const L: usize>(
    count: usize,
    rng: &mut SplitMix64,
    values: u64,
) -> Vec<Block<L>> {
    (0..count)
        .map(|_| {
            let mut blk = Block::ZERO;
            for x in blk.0.iter_mut() {
                *x = rng.below(values) as f64;
            }
            blk
        })
        .collect()
}

/// Converts a row-major `n × n` matrix to blocked Z-order.
///
/// # Panics
/// If `n` is not `S·2^k` or `m.len() != n²`.
pub fn from_row_major<const L: usize>(n: usize, m: &[f64]) -> Vec<Block<L>> {
    let s = Block::<L>::SIDE;
    let count = block_count::<L>(n).expect("the side is S·2^k");
    assert_eq!(m.len(), n * n, "matrix of side {n} must have n² elements");
    (0..count)
        .map(|t| {
            let (bi, bj) = block_position(t);
            let mut blk = Block::ZERO;
            for (r, row) in blk.rows_mut().enumerate() {
                let start = (bi * s + r) * n + bj * s;
                row.copy_from_slice(&m[start..start + s]);
            }
            blk
        })
        .collect()
}

/// Converts a matrix in blocked Z-order to row-major.
///
/// # Panics
/// If `n` is not `S·2^k` or `blocks.len()` is not `(n/S)²`.
pub fn to_row_major<const L: usize>(n: usize, blocks: &[Block<L>]) -> Vec<f64> {
    let s = Block::<L>::SIDE;
    let count = block_count::<L>(n).expect("the side is S·2^k");
    assert_eq!(blocks.len(), count, "wrong number of blocks");
    let mut m = vec![0.0; n * n];
    for (t, blk) in blocks.iter().enumerate() {
        let (bi, bj) = block_position(t);
        for (r, row) in blk.rows().enumerate() {
            let start = (bi * s + r) * n + bj * s;
            m[start..start + s].copy_from_slice(row);
        }
    }
    m
}

/// The block kernel: `c += a·b`, i-k-j order (a row of `c` accumulates `a[i][k]` times row
/// `k` of `b`). Slice iterators, no indexing: no bounds checks in the loops, and the inner
/// loop is vectorised.
#[inline]
pub fn mul_add<const L: usize>(c: &mut Block<L>, a: &Block<L>, b: &Block<L>) {
    for (c_row, a_row) in c.rows_mut().zip(a.rows()) {
        for (&a_ik, b_row) in a_row.iter().zip(b.rows()) {
            for (c_ij, &b_kj) in c_row.iter_mut().zip(b_row) {
                *c_ij += a_ik * b_kj;
            }
        }
    }
}

/// The four quarters of a mutable slice (the Z-order quadrants): lengths `len/4` three
/// times, then the remainder.
pub fn quarters_mut<T>(x: &mut [T]) -> [&mut [T]; 4] {
    let q = x.len() / 4;
    let (x0, rest) = x.split_at_mut(q);
    let (x1, rest) = rest.split_at_mut(q);
    let (x2, x3) = rest.split_at_mut(q);
    [x0, x1, x2, x3]
}

/// One product `C' ± A'·B'` of a quadrant recursion: parts of C, A and B of the same size.
pub type Product<C, A, B> = (C, A, B);

/// The eight quadrant products of `C ± A·B` in the two phases of Cilk's recursive multiply
/// (`matmul`, and `schur` of `lu`), from the quadrants of C, A and B: each phase is four
/// independent products (no two write the same quadrant of C), the second runs after the
/// first.
///
/// ```text
/// C00 ± A00·B00   C01 ± A00·B01   C10 ± A10·B00   C11 ± A10·B01
/// C00 ± A01·B10   C01 ± A01·B11   C10 ± A11·B10   C11 ± A11·B11
/// ```
pub fn product_phases<C: Copy, A: Copy, B: Copy>(
    [c00, c01, c10, c11]: [C; 4],
    [a00, a01, a10, a11]: [A; 4],
    [b00, b01, b10, b11]: [B; 4],
) -> [[Product<C, A, B>; 4]; 2] {
    [
        [
            (c00, a00, b00),
            (c01, a00, b01),
            (c10, a10, b00),
            (c11, a10, b01),
        ],
        [
            (c00, a01, b10),
            (c01, a01, b11),
            (c10, a11, b10),
            (c11, a11, b11),
        ],
    ]
}

/// Takes the lock of a block that the algorithm never lets two tasks use at once: a lock that
/// is held is reported as a race (a panic) rather than waited for. `who` names the workload.
pub fn exclusive<'a, T>(m: &'a Mutex<T>, who: &str) -> MutexGuard<'a, T> {
    match m.try_lock() {
        Ok(guard) => guard,
        Err(TryLockError::WouldBlock) => {
            panic!("{who}: two tasks used the same block at once (a race)")
        }
        Err(TryLockError::Poisoned(_)) => {
            panic!("{who}: a task panicked while updating this block")
        }
    }
}

/// A contiguous part of a Z-order matrix that tasks on the async front-end can share: a part
/// of a matrix borrowed for the whole [`run_async`] scope, or a part of a matrix that a task
/// allocated, shared by reference count (a task spawned there may only borrow what outlives the
/// whole scope). Cloning it copies a reference or counts one more owner; nothing is copied.
///
/// [`run_async`]: stealbench_schedulers::AsyncForkJoin::run_async
#[derive(Debug)]
pub enum Part<'s, T> {
    /// Blocks borrowed for the scope.
    Borrowed(&'s [T]),
    /// `len` blocks from `start` of a matrix allocated during the computation.
    Counted {
        /// The whole matrix.
        all: Arc<Vec<T>>,
        /// The first block.
        start: usize,
        /// The number of blocks.
        len: usize,
    },
}

impl<T> Clone for Part<'_, T> {
    fn clone(&self) -> Self {
        match self {
            Part::Borrowed(x) => Part::Borrowed(x),
            Part::Counted { all, start, len } => Part::Counted {
                all: Arc::clone(all),
                start: *start,
                len: *len,
            },
        }
    }
}

impl<'s, T> Part<'s, T> {
    /// A whole newly allocated matrix as a part.
    pub fn counted(all: Vec<T>) -> Self {
        let len = all.len();
        Part::Counted {
            all: Arc::new(all),
            start: 0,
            len,
        }
    }

    /// The blocks of the part.
    pub fn blocks(&self) -> &[T] {
        match self {
            Part::Borrowed(x) => x,
            Part::Counted { all, start, len } => &all[*start..*start + *len],
        }
    }

    /// The number of blocks.
    pub fn len(&self) -> usize {
        match self {
            Part::Borrowed(x) => x.len(),
            Part::Counted { len, .. } => *len,
        }
    }

    /// Whether the part has no block.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `k` equal consecutive pieces of the part (`k` dividing its length).
    fn pieces<const K: usize>(&self) -> [Self; K] {
        debug_assert_eq!(self.len() % K, 0);
        let q = self.len() / K;
        match self {
            Part::Borrowed(x) => std::array::from_fn(|i| Part::Borrowed(&x[i * q..(i + 1) * q])),
            Part::Counted { all, start, .. } => std::array::from_fn(|i| Part::Counted {
                all: Arc::clone(all),
                start: start + i * q,
                len: q,
            }),
        }
    }

    /// The four quadrants (Z-order quarters).
    pub fn quarters(&self) -> [Self; 4] {
        self.pieces()
    }

    /// The first and the second half (the top and the bottom half of a square part).
    pub fn halves(&self) -> [Self; 2] {
        self.pieces()
    }
}

/// `y += M·x` over block `t` (`side × side`, row-major) of a matrix in blocked Z-order, in
/// wrapping `u64` arithmetic, after checking that every element is an integer in `0..=max`.
fn block_mat_vec(
    name: &str,
    t: usize,
    side: usize,
    blk: &[f64],
    max: u64,
    x: &[u64],
    y: &mut [u64],
) -> Result<(), String> {
    let (bi, bj) = block_position(t);
    let xs = &x[bj * side..(bj + 1) * side];
    let ys = &mut y[bi * side..(bi + 1) * side];
    for (r, (row, y_r)) in blk.chunks_exact(side).zip(ys).enumerate() {
        let mut acc = 0u64;
        for (col, (&v, &x_c)) in row.iter().zip(xs).enumerate() {
            // `as` saturates and maps NaN to 0, so the round trip fails for NaN, for values
            // out of range and for non-integers.
            let u = v as u64;
            if u > max || u as f64 != v {
                return Err(format!(
                    "{name}[{}][{}] = {v} is not an integer in 0..={max}",
                    bi * side + r,
                    bj * side + col
                ));
            }
            acc = acc.wrapping_add(u.wrapping_mul(x_c));
        }
        *y_r = y_r.wrapping_add(acc);
    }
    Ok(())
}

/// Checks `C = A·B` by Freivalds' algorithm in `O(n²)` for `n × n` matrices stored as
/// `side × side` blocks (row-major slices) in Z-order, with entries of A and B integers in
/// `0..=max_ab`: for two random vectors `x` drawn from `seed`, compares `A·(B·x)` with `C·x`
/// exactly, in wrapping 64-bit integer arithmetic, after checking that every element of C is
/// an integer in its possible range `0..=max_ab²·n`. The check of [`Factors`]; `Ok` gives the
/// sum of C's elements.
///
/// Strength: if `C ≠ A·B`, the difference `D = C − A·B` has a nonzero entry `d` with
/// `|d| ≤ max_ab²·n`; for a uniformly random `x`, `(D·x)` vanishes modulo `2^64` in that row
/// with probability at most `2^v / 2^64` where `2^v ≤ |d|` is the power of two dividing `d`, so
/// at most `49n / 2^64` for entries below 8 (below `2^-46` for `n = 4096`) per vector, squared
/// for two independent vectors. The vectors are seeded, so the check is deterministic; the
/// bound holds for any error that does not depend on the seed.
pub fn freivalds_blocks(
    n: usize,
    side: usize,
    seed: u64,
    max_ab: u64,
    [a, b, c]: [&[&[f64]]; 3],
) -> Result<Checked, String> {
    let blocks = (n / side) * (n / side);
    if a.len() != blocks || b.len() != blocks || c.len() != blocks {
        return Err(format!(
            "expected {blocks} blocks per matrix, got A {}, B {}, C {}",
            a.len(),
            b.len(),
            c.len()
        ));
    }
    let max_c = max_ab * max_ab * n as u64;
    let mut rng = SplitMix64::new(seed);
    for round in 0..2 {
        let x: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
        let mut bx = vec![0u64; n];
        for (t, blk) in b.iter().enumerate() {
            block_mat_vec("B", t, side, blk, max_ab, &x, &mut bx)?;
        }
        let mut abx = vec![0u64; n];
        for (t, blk) in a.iter().enumerate() {
            block_mat_vec("A", t, side, blk, max_ab, &bx, &mut abx)?;
        }
        let mut cx = vec![0u64; n];
        for (t, blk) in c.iter().enumerate() {
            block_mat_vec("C", t, side, blk, max_c, &x, &mut cx)?;
        }
        if let Some(r) = (0..n).find(|&r| abx[r] != cx[r]) {
            return Err(format!(
                "row {r} of C is wrong: (C·x)[{r}] = {} but (A·(B·x))[{r}] = {} \
                 (Freivalds, vector {round})",
                cx[r], abx[r]
            ));
        }
    }
    // Every element is an integer of at most max_ab²·n (checked above): the sum, at most
    // max_ab²·n³, fits 64 bits for every side a workload allows.
    let sum: u64 = c.iter().flat_map(|blk| blk.iter()).map(|&v| v as u64).sum();
    Ok(Checked::new(
        format!("C = A·B of side {n}, element sum {sum}"),
        "A·(B·x) for two random vectors x (Freivalds)",
    ))
}

/// The entries of [`Factors`]: integers uniform in `0..FACTOR_VALUES`, stored as `f64`, so
/// that every product and partial sum of `A·B` is exact and the product has exactly one
/// correct value.
pub const FACTOR_VALUES: u64 = 8;

/// The factors `A` and `B` of a product `C = A·B`, `n × n` each, in blocked Z-order (blocks of
/// side `S = √L`), with entries integers in `0..FACTOR_VALUES`: the input of `mm`, `smm` and
/// `rectmul`.
#[derive(Debug, Clone)]
pub struct Factors<const L: usize> {
    /// The matrix side, `S·2^k`.
    pub n: usize,
    /// A, `(n/S)²` blocks in Z-order.
    pub a: Vec<Block<L>>,
    /// B, `(n/S)²` blocks in Z-order.
    pub b: Vec<Block<L>>,
}

impl<const L: usize> Factors<L> {
    /// Random A and B of side `n` (entries uniform in `0..FACTOR_VALUES`), drawn from `seed`;
    /// `Err` if `n` is not `S·2^k`.
    pub fn random(n: usize, seed: u64) -> Result<Self, String> {
        let s = Block::<L>::SIDE;
        let blocks = block_count::<L>(n).ok_or_else(|| format!("n={n}: needs n = {s}·2^k"))?;
        let mut rng = SplitMix64::new(seed);
        let a = random_blocks(blocks, &mut rng, FACTOR_VALUES);
        let b = random_blocks(blocks, &mut rng, FACTOR_VALUES);
        Ok(Factors { n, a, b })
    }

    /// The factors of given row-major matrices.
    ///
    /// # Panics
    /// If `n` is not `S·2^k` or a slice is not `n²` long.
    pub fn from_row_major(n: usize, a: &[f64], b: &[f64]) -> Self {
        Factors {
            n,
            a: from_row_major(n, a),
            b: from_row_major(n, b),
        }
    }

    /// Checks that `c`, the blocks of C in Z-order, is `A·B` ([`freivalds_blocks`], whose doc
    /// states its strength), the vectors drawn from `seed`.
    pub fn check_product(&self, c: &[&Block<L>], seed: u64) -> Result<Checked, String> {
        let c: Vec<&[f64]> = c.iter().map(|blk| &blk.0[..]).collect();
        let (a, b) = (element_slices(&self.a), element_slices(&self.b));
        freivalds_blocks(
            self.n,
            Block::<L>::SIDE,
            seed,
            FACTOR_VALUES - 1,
            [&a, &b, &c],
        )
    }

    /// [`Factors::check_product`] of a C whose blocks the tasks share behind locks.
    pub fn check_locked_product(
        &self,
        c: &[Mutex<Block<L>>],
        seed: u64,
    ) -> Result<Checked, String> {
        let guards: Vec<_> = c
            .iter()
            .map(|m| m.lock().unwrap_or_else(PoisonError::into_inner))
            .collect();
        let blocks: Vec<&Block<L>> = guards.iter().map(|g| &**g).collect();
        self.check_product(&blocks, seed)
    }
}

/// The element slices of blocks, for [`freivalds_blocks`].
fn element_slices<const L: usize>(m: &[Block<L>]) -> Vec<&[f64]> {
    m.iter().map(|blk| &blk.0[..]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quarters;

    type B4 = Block<16>;

    #[test]
    fn layout_round_trips_and_quadrants_are_contiguous() {
        let n = 16;
        let m: Vec<f64> = (0..n * n).map(|x| x as f64).collect();
        let blocks: Vec<B4> = from_row_major(n, &m);
        assert_eq!(B4::SIDE, 4);
        assert_eq!(blocks.len(), 16);
        assert_eq!(to_row_major(n, &blocks), m);
        // The second quarter is the top-right quadrant; the third the bottom-left.
        assert_eq!(quarters(&blocks[..])[1][0].0[0], (n / 2) as f64);
        assert_eq!(quarters(&blocks[..])[2][0].0[0], (n / 2 * n) as f64);
        assert_eq!(block_position(0b1110), (3, 2));
        assert_eq!(block_count::<16>(12), None);
        assert_eq!(block_count::<16>(2), None);
        assert_eq!(block_count::<16>(32), Some(64));
    }

    #[test]
    fn mul_add_matches_naive() {
        let mut rng = SplitMix64::new(5);
        let [a, b]: [B4; 2] = random_blocks(2, &mut rng, 8).try_into().unwrap();
        let mut c = B4::ZERO;
        mul_add(&mut c, &a, &b);
        for i in 0..4 {
            for j in 0..4 {
                let want: f64 = (0..4).map(|k| a.0[i * 4 + k] * b.0[k * 4 + j]).sum();
                assert_eq!(c.0[i * 4 + j], want);
            }
        }
    }

    #[test]
    fn parts_split_like_slices() {
        let v: Vec<u32> = (0..16).collect();
        for p in [Part::Borrowed(&v[..]), Part::counted(v.clone())] {
            let [q0, q1, q2, q3] = p.quarters();
            assert_eq!(q1.blocks(), &v[4..8]);
            assert_eq!(q3.quarters()[2].blocks(), &[14]);
            let [h0, h1] = q2.halves();
            assert_eq!((h0.blocks(), h1.blocks()), (&v[8..10], &v[10..12]));
            assert_eq!((q0.len(), p.len(), p.is_empty()), (4, 16, false));
        }
    }

    #[test]
    #[should_panic(expected = "a race")]
    fn exclusive_reports_a_held_lock() {
        let m = Mutex::new(B4::ZERO);
        let _held = exclusive(&m, "test");
        let _second = exclusive(&m, "test");
    }
}
