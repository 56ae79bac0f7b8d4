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
//! Cilk-5 and Fibril spawn the kept children in a loop and sync once, and so do the parallel
//! variants: on the closure front-end each kept column is a `spawn` in a scope, its count
//! written to a cell of its own ([`fj_board`]); on the async front-end the columns are forked
//! in a loop by [`AsyncWorker::fork_reduce`], libfork's `nqueens`, the last one called
//! ([`fj_board_async`]). `k` kept children are `k` tasks, and a thief takes the rest of the loop.
//!
//! `cutoff` (a parameter, 0 in every preset, as in Cilk-5 and libfork) lets boards with at
//! most `cutoff` rows left be searched serially ([`serial`]), to coarsen the tasks.
//!
//! # Work per task
//!
//! A board tests each of the `n` columns against its queens (`O(n·d)` comparisons), and every
//! board but the empty one is a task (2.7·10^7 at `n = 14`): little work a task, so with
//! `cutoff = 0` the workload weighs a runtime's cost of a task as much as the search. On
//! `libfork` that cost is a frame and a poll of the parent's loop for each board, which the
//! serial elision runs as a plain loop. Times per runtime: `paper-figures/measurements.md`.
//!
//! # Check
//!
//! The count must equal the known number of solutions ([`SOLUTIONS`], OEIS A000170, the
//! table Fibril's test checks against), known for every `n` the workload accepts.

use crate::{Checked, Params, Size, Variant, Workload};
use std::future::Future;
use stealbench_schedulers::{AsyncForkJoin, AsyncWorker, ForkJoin, Scope, Worker};

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

/// Fork-join, as Cilk-5's and Fibril's `nqueens`: every kept column of the next row is a child
/// spawned in the loop (its count written to its own cell of `counts`), then one sync, in a
/// scope of the closure front-end. A board with at most `cutoff` rows left (a full board
/// included) is searched serially.
pub fn fj_board<W: Worker>(w: &W, board: Board, cutoff: usize) -> u64 {
    if board.rows_left() <= cutoff {
        return serial(&board);
    }
    let mut counts = [0u64; MAX_N];
    w.scope(|s, w| {
        for (col, count) in (0..board.n).zip(counts.iter_mut()) {
            if board.allows(col) {
                s.spawn(w, move |_, w| *count = fj_board(w, board.with(col), cutoff));
            }
        }
    });
    counts.iter().sum()
}

/// Fork-join: the number of solutions of side `n` (the search of the empty board).
pub fn fj<W: Worker>(w: &W, n: usize, cutoff: usize) -> u64 {
    fj_board(w, Board::empty(n), cutoff)
}

/// Fork-join on the async front-end, as libfork's `nqueens`: every kept column is a child
/// forked in the loop ([`AsyncWorker::fork_reduce`]; the last is called), then one join.
pub fn fj_board_async<'s, C: AsyncWorker<'s>>(
    c: C,
    board: Board,
    cutoff: usize,
) -> impl Future<Output = u64> + Send + 's {
    async move {
        if board.rows_left() <= cutoff {
            return serial(&board);
        }
        c.fork_reduce(
            (0..board.n).filter(move |&col| board.allows(col)),
            move |c, col| fj_board_async(c, board.with(col), cutoff),
            0,
            |a, b| a + b,
        )
        .await
    }
}

/// Fork-join on the async front-end: the number of solutions of side `n`.
pub fn fj_async<'s, C: AsyncWorker<'s>>(
    c: C,
    n: usize,
    cutoff: usize,
) -> impl Future<Output = u64> + Send + 's {
    fj_board_async(c, Board::empty(n), cutoff)
}

/// Checks a count against the known number of solutions of side `n`.
pub fn check_count(n: usize, count: u64) -> Result<Checked, String> {
    let want = expected(n);
    if count == want {
        Ok(Checked::new(
            format!("{count} solutions of {n} queens"),
            format!("the known count for n={n} (OEIS A000170)"),
        ))
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

    fn kernel(input: &NqueensInput, _work: &mut ()) -> u64 {
        // Hidden from the optimiser, as in `run`.
        let n = std::hint::black_box(input.n);
        serial(&Board::empty(n))
    }

    fn check(input: &NqueensInput, _work: &(), answer: &u64) -> Result<Checked, String> {
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
        let full = b.with(3).with(0).with(2);
        assert_eq!(full.rows_left(), 0);
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
        assert_eq!(
            check_count(8, 92).unwrap().to_string(),
            "92 solutions of 8 queens; checked against the known count for n=8 (OEIS A000170)"
        );
        assert!(check_count(8, 91).is_err());
        assert!(check_count(14, 365_597).is_err());
    }
}
