//! `nqueens`: count the ways to place `n` non-attacking queens on an `n × n` board, by the
//! backtracking search of Cilk-5's `nqueens` example (Fibril Table 1 and libfork Table I:
//! `n = 14`, 365,596 solutions).
//!
//! # Algorithm
//!
//! A [`Board`] holds the columns of the queens of its first rows. The search of a board tries
//! every column of the next row; a column is kept if the new queen attacks none of the board's
//! queens (Cilk's `ok`: no shared column, no shared diagonal), and each kept column becomes a
//! child, searched on its own copy of the board (Cilk-5 copies the board for each child, so
//! the children share nothing). A full board is one solution. The answer is the sum over the
//! children.
//!
//! Cilk-5 spawns the kept children in a loop and syncs once. Our front-ends fork two ways, so
//! the parallel variants split the set of kept columns (a bit mask, [`Board::free_columns`])
//! in halves, recursively, under `join`: `k` kept children cost `k - 1` joins, Cilk's `k`
//! spawns less one, and a thief takes half of the remaining children, not Cilk's "rest of the
//! loop". A board with exactly one kept column is descended into within the same task.
//!
//! `cutoff` (a parameter, 0 in every preset, as in Cilk-5 and libfork) lets boards with at
//! most `cutoff` rows left be searched serially ([`serial`]), to coarsen the tasks.
//!
//! # Work per task
//!
//! A board tests each of the `n` columns against its queens (`O(n·d)` comparisons). At
//! `n = 14` the serial search visits 2.7·10^7 boards in 3.2 s (about 120 ns a board) and the
//! parallel ones make 1.0·10^7 joins: about 320 ns of work a join, far above a closure
//! runtime's join (about 6 ns) or a libfork fork (about 20 ns). T_1/T_s measured (CPU time,
//! P = 1): 1.03 on `abp`, 1.02 on `fibril`, 1.08 on `libfork`.
//!
//! # Check
//!
//! The count must equal the known number of solutions ([`SOLUTIONS`], OEIS A000170, the
//! table Fibril's test checks against), known for every `n` the workload accepts.

use crate::{Params, Size, Variant, Workload};
use std::future::Future;
use stealbench_schedulers::{AsyncForkJoin, AsyncWorker, ForkJoin, Worker};

/// The workload marker type.
#[derive(Debug)]
pub struct Nqueens;

/// The largest board side accepted (the known counts go this far).
pub const MAX_N: usize = 16;

/// The number of solutions for `n = 1..=16` (OEIS A000170; Fibril's `verify` table).
pub const SOLUTIONS: [u64; MAX_N] = [
    1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365_596, 2_279_184, 14_772_512,
];

/// A partly filled board: the columns of the queens of rows `0..rows`. Small and `Copy`:
/// every child gets its own copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Board {
    /// The side of the board.
    n: u8,
    /// The number of rows holding a queen.
    rows: u8,
    /// `cols[r]`: the column of the queen of row `r < rows`.
    cols: [u8; MAX_N],
}

impl Board {
    /// The empty board of side `n`.
    ///
    /// # Panics
    /// If `n` is not in `1..=MAX_N`.
    pub fn empty(n: usize) -> Self {
        assert!(
            (1..=MAX_N).contains(&n),
            "nqueens needs 1 <= n <= {MAX_N}, not {n}"
        );
        Board {
            n: n as u8,
            rows: 0,
            cols: [0; MAX_N],
        }
    }

    /// The number of rows still empty.
    #[inline]
    pub fn rows_left(&self) -> usize {
        usize::from(self.n - self.rows)
    }

    /// Can a queen go to column `col` of the next row? Cilk's `ok`: no queen of the board in
    /// the same column or on the same diagonal.
    #[inline]
    pub fn allows(&self, col: u8) -> bool {
        let d = i32::from(self.rows);
        self.cols[..usize::from(self.rows)]
            .iter()
            .zip(0..)
            .all(|(&c, j)| {
                let diff = i32::from(c) - i32::from(col);
                let dist = d - j;
                diff != 0 && diff != dist && diff != -dist
            })
    }

    /// A copy of the board with a queen in column `col` of the next row.
    #[inline]
    pub fn with(&self, col: u8) -> Board {
        let mut b = *self;
        b.cols[usize::from(b.rows)] = col;
        b.rows += 1;
        b
    }

    /// The columns of the next row a queen may go to ([`Board::allows`]), bit `c` for column
    /// `c`. Zero for a full board.
    #[inline]
    pub fn free_columns(&self) -> u32 {
        if self.rows == self.n {
            return 0;
        }
        (0..self.n)
            .filter(|&c| self.allows(c))
            .fold(0, |m, c| m | 1 << c)
    }
}

/// The kernel: the number of ways to complete `board`, by the plain recursion (Cilk-5's
/// `nqueens` without its spawns).
pub fn serial(board: &Board) -> u64 {
    if board.rows_left() == 0 {
        return 1;
    }
    let mut count = 0;
    for col in 0..board.n {
        if board.allows(col) {
            count += serial(&board.with(col));
        }
    }
    count
}

/// The known number of solutions of side `n` (`1..=MAX_N`).
pub fn expected(n: usize) -> u64 {
    SOLUTIONS[n - 1]
}

/// The two halves of a mask of at least two bits: its lowest `count/2` bits, and the others.
#[inline]
fn halves(mask: u32) -> (u32, u32) {
    let mut low = 0;
    let mut high = mask;
    for _ in 0..mask.count_ones() / 2 {
        let bit = high & high.wrapping_neg();
        low |= bit;
        high ^= bit;
    }
    (low, high)
}

/// One step of the parallel search, written once for both front-ends: the children of
/// `board` in the columns of `mask`, descended through while there is exactly one.
enum Step {
    /// The count is known (no child left, or a board at the cutoff searched serially).
    Done(u64),
    /// At least two children of this board: fork the two halves of the mask.
    Fork(Board, u32, u32),
}

/// Descends from `board` through its columns in `mask` while only one is left; stops at two
/// or more (to fork), at none (no solution), or at a board with at most `cutoff` rows left
/// (searched serially; a full board counts 1).
#[inline]
fn step(mut board: Board, mut mask: u32, cutoff: usize) -> Step {
    loop {
        if mask.count_ones() >= 2 {
            let (low, high) = halves(mask);
            return Step::Fork(board, low, high);
        }
        if mask == 0 {
            return Step::Done(0);
        }
        board = board.with(mask.trailing_zeros() as u8);
        if board.rows_left() <= cutoff {
            return Step::Done(serial(&board));
        }
        mask = board.free_columns();
    }
}

/// Fork-join: the number of ways to complete `board` with a queen in one of the columns of
/// `mask` in its next row; the two halves of `mask` under a `join`.
pub fn fj_children<W: Worker>(w: &W, board: Board, mask: u32, cutoff: usize) -> u64 {
    match step(board, mask, cutoff) {
        Step::Done(count) => count,
        Step::Fork(board, low, high) => {
            let (a, b) = w.join(
                |w| fj_children(w, board, low, cutoff),
                |w| fj_children(w, board, high, cutoff),
            );
            a + b
        }
    }
}

/// Fork-join: the number of solutions of side `n` (the children of the empty board).
pub fn fj<W: Worker>(w: &W, n: usize, cutoff: usize) -> u64 {
    let board = Board::empty(n);
    if board.rows_left() <= cutoff {
        return serial(&board);
    }
    fj_children(w, board, board.free_columns(), cutoff)
}

/// Fork-join on the async front-end: as [`fj_children`], the halves under
/// [`AsyncWorker::join`].
pub fn fj_children_async<'s, C: AsyncWorker<'s>>(
    c: C,
    board: Board,
    mask: u32,
    cutoff: usize,
) -> impl Future<Output = u64> + Send + 's {
    async move {
        match step(board, mask, cutoff) {
            Step::Done(count) => count,
            Step::Fork(board, low, high) => {
                let (a, b) = c
                    .join(
                        move |c| fj_children_async(c, board, low, cutoff),
                        move |c| fj_children_async(c, board, high, cutoff),
                    )
                    .await;
                a + b
            }
        }
    }
}

/// Fork-join on the async front-end: the number of solutions of side `n`.
pub fn fj_async<'s, C: AsyncWorker<'s>>(
    c: C,
    n: usize,
    cutoff: usize,
) -> impl Future<Output = u64> + Send + 's {
    async move {
        let board = Board::empty(n);
        if board.rows_left() <= cutoff {
            return serial(&board);
        }
        c.call(move |c| fj_children_async(c, board, board.free_columns(), cutoff))
            .await
    }
}

/// Checks a count against the known number of solutions of side `n`.
pub fn check_count(n: usize, count: u64) -> Result<(), String> {
    let want = expected(n);
    if count == want {
        Ok(())
    } else {
        Err(format!("nqueens({n}) = {count}, expected {want}"))
    }
}

/// The input: the board side and the cutoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NqueensInput {
    /// The side of the board, `1..=MAX_N`.
    pub n: usize,
    /// Boards with at most this many rows left are searched serially (0: none).
    pub cutoff: usize,
}

impl Workload for Nqueens {
    const NAME: &'static str = "nqueens";
    const DESCRIPTION: &'static str =
        "Cilk-5 n-queens: count the placements, a board copied per child (spawn overhead)";
    const VARIANTS: &'static [Variant] = &[Variant::Fj];
    const ASYNC_VARIANTS: &'static [Variant] = &[Variant::Fj];

    type Input = NqueensInput;
    type Work = ();
    type Answer = u64;

    fn preset(size: Size) -> Params {
        let n = match size {
            Size::Paper => 14,
            // 1/5.6 and 1/30 of the paper's work.
            Size::Small => 13,
            Size::Quick => 12,
            Size::Test => 8,
        };
        Params::new().int("n", n).int("cutoff", 0)
    }

    fn input(params: &Params) -> Result<NqueensInput, String> {
        let n = params.get_usize("n")?;
        if !(1..=MAX_N).contains(&n) {
            return Err(format!("n={n}: the known counts go from n=1 to n={MAX_N}"));
        }
        Ok(NqueensInput {
            n,
            cutoff: params.get_usize("cutoff")?,
        })
    }

    fn prepare(_input: &NqueensInput) {}

    fn run<S: ForkJoin>(pool: &S, variant: Variant, input: &NqueensInput, _work: &mut ()) -> u64 {
        // Hidden from the optimiser: the count is a pure function of the input, which the
        // compiler could otherwise compute once for the warm-up and every timed repetition.
        let NqueensInput { n, cutoff } = std::hint::black_box(*input);
        match variant {
            Variant::Fj => pool.run(|w| fj(w, n, cutoff)),
            v => panic!("nqueens has no {v} variant"),
        }
    }

    fn run_async<S: AsyncForkJoin>(
        pool: &S,
        variant: Variant,
        input: &NqueensInput,
        _work: &mut (),
    ) -> u64 {
        // Hidden from the optimiser: the count is a pure function of the input, which the
        // compiler could otherwise compute once for the warm-up and every timed repetition.
        let NqueensInput { n, cutoff } = std::hint::black_box(*input);
        match variant {
            Variant::Fj => pool.run_async(|c| fj_async(c, n, cutoff)),
            v => panic!("nqueens has no async {v} variant"),
        }
    }

    fn check(input: &NqueensInput, _work: &(), answer: &u64) -> Result<(), String> {
        check_count(input.n, *answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    #[test]
    fn kernel_matches_known_values() {
        for n in 1..=9 {
            assert_eq!(serial(&Board::empty(n)), expected(n), "n={n}");
        }
        assert_eq!(expected(14), 365_596);
    }

    #[test]
    fn board_rules() {
        let b = Board::empty(4).with(1);
        assert!(!b.allows(0) && !b.allows(1) && !b.allows(2) && b.allows(3));
        assert_eq!(b.free_columns(), 0b1000);
        let full = b.with(3).with(0).with(2);
        assert_eq!((full.rows_left(), full.free_columns()), (0, 0));
        assert_eq!(halves(0b1011_0110), (0b0000_0110, 0b1011_0000));
        assert_eq!(halves(0b111), (0b001, 0b110));
    }

    #[test]
    fn variants_on_serial_and_two_workers() {
        let pools = testing::Pools::start();
        for (n, cutoff) in [(1, 0), (3, 0), (8, 0), (8, 3), (8, 8), (8, 20)] {
            // The check is the known count of n.
            let input = NqueensInput { n, cutoff };
            pools.check_every_variant::<Nqueens>(&input, |_, _, _| {});
        }
    }

    #[test]
    fn presets_and_workload_runs() {
        assert_eq!(Nqueens::preset(Size::Paper).to_string(), "n=14 cutoff=0");
        let input = Nqueens::input_at(Size::Test);
        let pool = testing::serial();
        testing::check_every_variant::<Nqueens>(&pool, &pool, &input, |what, _, &a| {
            assert!(Nqueens::check(&input, &(), &(a + 1)).is_err(), "{what}");
        });
        let mut p = Nqueens::preset(Size::Test);
        p.set("n", "17").unwrap();
        assert!(Nqueens::input(&p).unwrap_err().starts_with("n=17"));
        p.set("n", "0").unwrap();
        assert!(Nqueens::input(&p).is_err());
    }

    #[test]
    fn check_rejects_wrong_counts() {
        assert!(check_count(8, 92).is_ok());
        assert!(check_count(8, 91).is_err());
        assert!(check_count(14, 365_597).is_err());
    }
}
