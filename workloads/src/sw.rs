//! `sw`: Smith-Waterman local alignment of two random strings with a gap penalty that depends
//! on the gap's length, every cell scanning its whole row and column (ProWS Figure 2, input
//! n = 2048, base case 32; `O(n)` per cell, `Θ(n³)` work, as in the authors' artifact).
//!
//! # Algorithm
//!
//! Strings `x`, `y` of length `n` over a 4-letter alphabet (seeded). The table `H[r][c]`
//! (`0 <= r, c <= n`) has `H[0][c] = H[r][0] = 0` and
//!
//! ```text
//! H[r][c] = max( 0,
//!                H[r-1][c-1] + s(x[r-1], y[c-1]),
//!                max_{1 <= k < r} H[k][c] - w(r - k),      (a gap in y: the whole column)
//!                max_{1 <= k < c} H[r][k] - w(c - k) )     (a gap in x: the whole row)
//! ```
//!
//! with the substitution score `s(a, b)` = [`MATCH`] (+2) for equal letters and [`MISMATCH`]
//! (-1) otherwise, and the affine gap penalty `w(len)` = [`GAP_OPEN`] + [`GAP_EXTEND`]`·len`
//! = `2 + len`. (The artifact scores +1 / 0 with `w(len) = len`; we use a standard affine
//! scoring with a mismatch penalty, so that alignments restart and the best score is not
//! simply a common subsequence's.)
//! The answer is the best local alignment score, `max H`.
//!
//! As in the artifact, every cell scans its whole column above and row to its left: the
//! `Θ(n³)` algorithm the paper times, not Gotoh's `Θ(n²)` one, which an affine `w` would
//! allow. The kernel orders that same work for the machine: for one row of a tile, it walks
//! every row above once, taking the column maxima of all `b` cells of the tile row at once
//! (contiguous, vectorised); it copies the row's cells of the tiles to the left into one buffer
//! (`O(n)` per tile row, `1/b` of the scanning) and scans that buffer, extended by the cells
//! computed so far, for each cell (contiguous, vectorised).
//!
//! Rows and columns `1..=n` are cut into `b × b` tiles (`n` a multiple of `b`) scheduled by
//! [`crate::wavefront`] (fj, sf, gf).
//!
//! # Storage
//!
//! A cell reads its whole row and column, so the whole table is kept: each finished tile owns
//! its `b²` cells ([`SwTile`]), published once through the [`Grid`]; `4n²` bytes (16 MiB at
//! the paper's size). A tile reads the tiles to its left in its tile row and above it in its
//! tile column, all finished before it starts (the wavefront dependency rule).
//!
//! # Answer and check
//!
//! The answer is the best score and a hash of the table's last row, computed in the run; the
//! check compares them exactly with the serial computation (row-major tile order, no runtime)
//! done in [`Workload::input`](crate::Workload::input), and also hashes every cell of the run's
//! table against the serial table's hash. The tests check the kernel against an untiled
//! full-table DP.

use crate::Size;
use crate::wavefront::{Grid, StringTable, Strings, TableInput, TableWorkload, hash_cells};

/// The workload.
pub type Sw = TableWorkload<SwTable>;

/// The input: the two strings and the serial answer.
pub type SwInput = TableInput<SwTable>;

/// The Smith-Waterman table: the kernel, the answer and the check's hash.
#[derive(Debug)]
pub struct SwTable;

/// Score of a pair of equal letters.
pub const MATCH: i32 = 2;
/// Score of a pair of different letters.
pub const MISMATCH: i32 = -1;
/// Gap opening penalty: a gap of length `len` costs `GAP_OPEN + GAP_EXTEND·len`.
pub const GAP_OPEN: i32 = 2;
/// Gap extension penalty per letter.
pub const GAP_EXTEND: i32 = 1;

/// The gap penalty `w(len)`.
#[inline(always)]
pub fn gap(len: i32) -> i32 {
    GAP_OPEN + GAP_EXTEND * len
}

/// The substitution score `s(a, b)`.
#[inline(always)]
pub fn score(a: u8, b: u8) -> i32 {
    if a == b { MATCH } else { MISMATCH }
}

/// What a finished tile keeps: all its cells, and their maximum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwTile {
    /// `b × b` cells, row-major.
    pub cells: Box<[i32]>,
    /// The maximum cell.
    pub best: i32,
}

/// The answer: the best local alignment score and a hash of the table's last row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwAnswer {
    /// `max H`.
    pub best: i32,
    /// [`hash_cells`] of `H[n][1..=n]`.
    pub last_row_hash: u64,
}

impl StringTable for SwTable {
    const NAME: &'static str = "sw";
    const DESCRIPTION: &'static str =
        "Smith-Waterman, O(n) per cell (whole row and column), tiled wavefront DP";
    const SEED: u64 = 0x5_3301;
    const HASHED: &'static str = "every cell";
    type Tile = SwTile;
    type Answer = SwAnswer;

    /// Every size keeps the paper's tile side `b = 32` (the task grain) and shrinks `n` (work
    /// `∝ n³`); serial times (release, 2-core x86-64 machine, CPU time of the `serial`
    /// runtime's fj): paper about 1.85 s, small about 1.3 s, quick about 0.23 s.
    fn dims(size: Size) -> (usize, usize) {
        match size {
            Size::Paper => (2048, 32),
            Size::Small => (1792, 32),
            Size::Quick => (1024, 32),
            Size::Test => (40, 4),
        }
    }

    /// Every cell.
    fn tile_cells(b: usize) -> f64 {
        b as f64 * b as f64
    }

    fn tile(s: &Strings, g: &Grid<SwTile>, i: usize, j: usize) -> SwTile {
        let b = s.b;
        // The tiles above in this tile column and to the left in this tile row.
        let above: Vec<&[i32]> = (0..i).map(|t| &*g.get(t, j).cells).collect();
        let lefts: Vec<&[i32]> = (0..j).map(|t| &*g.get(i, t).cells).collect();
        // top = H[r0-1][c0-1 ..= c1]; left = H[r0 ..= r1][c0-1] (row and column 0 are zero).
        let mut top = vec![0i32; b + 1];
        if i > 0 && j > 0 {
            top[0] = g.get(i - 1, j - 1).cells[b * b - 1];
        }
        if let Some(u) = above.last() {
            top[1..].copy_from_slice(&u[(b - 1) * b..]);
        }
        let left: Vec<i32> = match lefts.last() {
            Some(l) => (0..b).map(|r| l[r * b + b - 1]).collect(),
            None => vec![0; b],
        };
        let xs = &s.x[i * b..(i + 1) * b];
        let ys = &s.y[j * b..(j + 1) * b];
        let mut t = vec![0i32; b * b];
        let mut colmax = vec![0i32; b];
        let mut row: Vec<i32> = Vec::with_capacity((j + 1) * b);
        let mut best = 0;
        for r in 0..b {
            let row_g = (i * b + r + 1) as i32; // the global row of tile row r
            // Column part of every cell of this row: H[k][c] - w(row_g - k) over all k < row_g.
            colmax.fill(0);
            let rows_above = above
                .iter()
                .flat_map(|u| u.chunks_exact(b))
                .chain(t[..r * b].chunks_exact(b));
            for (k, hk) in rows_above.enumerate() {
                let pen = gap(row_g - (k as i32 + 1));
                for (m, &h) in colmax.iter_mut().zip(hk) {
                    *m = (*m).max(h - pen);
                }
            }
            // row = H[row_g][1 ..= col_g - 1] for the cell at global column col_g: the tile
            // row's cells in the tiles to the left, copied once, then this row's as computed.
            row.clear();
            for lt in &lefts {
                row.extend_from_slice(&lt[r * b..(r + 1) * b]);
            }
            for c in 0..b {
                let diag = match (r, c) {
                    (0, _) => top[c],
                    (_, 0) => left[r - 1],
                    _ => t[(r - 1) * b + c - 1],
                };
                let v = (diag + score(xs[r], ys[c]))
                    .max(colmax[c])
                    .max(row_scan(&row))
                    .max(0);
                row.push(v);
                best = best.max(v);
            }
            t[r * b..(r + 1) * b].copy_from_slice(&row[j * b..]);
        }
        SwTile {
            cells: t.into_boxed_slice(),
            best,
        }
    }

    fn answer(g: &Grid<SwTile>) -> SwAnswer {
        answer(g)
    }

    fn hash(g: &Grid<SwTile>) -> u64 {
        table_hash(g)
    }

    fn describe(answer: &SwAnswer) -> String {
        format!("best local alignment score {}", answer.best)
    }
}

/// The row part of a cell: `max_k h[k] - w(len - k)` over a row `h` of the cells to its left
/// (`h[k]` is `len - k` columns away, `len = h.len()`); below every cell if `h` is empty.
#[inline(always)]
fn row_scan(h: &[i32]) -> i32 {
    let len = h.len() as i32;
    let mut m = i32::MIN / 2;
    for (k, &v) in h.iter().enumerate() {
        m = m.max(v - gap(len - k as i32));
    }
    m
}

/// The answer read from a complete grid: the best tile maximum and the last row's hash.
pub fn answer(g: &Grid<SwTile>) -> SwAnswer {
    let nb = g.side();
    let best = (0..nb * nb)
        .map(|t| g.get(t / nb, t % nb).best)
        .max()
        .expect("non-empty grid");
    let last_row = (0..nb).flat_map(|j| {
        let cells = &g.get(nb - 1, j).cells;
        let b = cells.len().isqrt();
        cells[(b - 1) * b..].iter().copied()
    });
    SwAnswer {
        best,
        last_row_hash: hash_cells(last_row.map(|v| v as u32 as u64)),
    }
}

/// The hash of every cell of a complete grid, in row-major order of the table.
pub fn table_hash(g: &Grid<SwTile>) -> u64 {
    let nb = g.side();
    let b = g.get(0, 0).cells.len().isqrt();
    let cells = (0..nb * b).flat_map(|r| {
        (0..nb).flat_map(move |j| {
            let (i, rr) = (r / b, r % b);
            g.get(i, j).cells[rr * b..(rr + 1) * b].iter().copied()
        })
    });
    hash_cells(cells.map(|v| v as u32 as u64))
}

/// The untiled full-table DP straight from the definition (`O(n³)`, `O(n²)` memory): the
/// tests' reference for the kernel. Returns the table, `(n+1)²` cells row-major.
pub fn full_table(x: &[u8], y: &[u8]) -> Vec<i32> {
    let (n, m) = (x.len(), y.len());
    let w = m + 1;
    let mut h = vec![0i32; (n + 1) * w];
    for r in 1..=n {
        for c in 1..=m {
            let mut v = 0.max(h[(r - 1) * w + c - 1] + score(x[r - 1], y[c - 1]));
            for k in 1..r {
                v = v.max(h[k * w + c] - gap((r - k) as i32));
            }
            for k in 1..c {
                v = v.max(h[r * w + k] - gap((c - k) as i32));
            }
            h[r * w + c] = v;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wavefront::{self, TileKernel};
    use crate::{Variant, Workload, testing};

    #[test]
    fn kernel_matches_the_full_table() {
        for (n, b, seed) in [(1, 1, 1), (12, 4, 2), (30, 5, 3), (48, 8, 4), (32, 32, 5)] {
            let input = SwInput::new(n, b, seed);
            let h = full_table(&input.strings.x, &input.strings.y);
            let g = Grid::new(n / b);
            wavefront::serial(&input.kernel(), &g);
            for r in 1..=n {
                for c in 1..=n {
                    let (i, j) = ((r - 1) / b, (c - 1) / b);
                    let cell = g.get(i, j).cells[((r - 1) % b) * b + (c - 1) % b];
                    assert_eq!(cell, h[r * (n + 1) + c], "n={n} b={b} H[{r}][{c}]");
                }
            }
            let best = *h.iter().max().unwrap();
            assert_eq!(input.expected.best, best, "n={n} b={b}");
            let last_row = h[n * (n + 1) + 1..].iter().map(|&v| v as u32 as u64);
            assert_eq!(input.expected.last_row_hash, hash_cells(last_row));
        }
    }

    #[test]
    fn known_small_cases() {
        let best = |x: &[u8], y: &[u8]| *full_table(x, y).iter().max().unwrap();
        assert_eq!(best(&[0, 1, 2, 3], &[0, 1, 2, 3]), 4 * MATCH);
        assert_eq!(best(&[0, 0, 0], &[1, 1, 1]), 0);
        // 0 1 2 3 0 1 2 against 0 1 2 0 1 2: six matches around a gap of one in y.
        assert_eq!(
            best(&[0, 1, 2, 3, 0, 1, 2], &[0, 1, 2, 0, 1, 2]),
            6 * MATCH - gap(1)
        );
        // A gap reaching across a whole row: 0 1 1 1 1 1 2 against 0 2: 2+2-w(5)<0, so 2.
        assert_eq!(best(&[0, 1, 1, 1, 1, 1, 2], &[0, 2]), MATCH);
    }

    #[test]
    fn check_rejects_wrong_answers() {
        let input = Sw::input_at(Size::Test);
        // The grid below is 10 tiles a side.
        assert_eq!(input.strings.tiles(), 10);
        assert!(input.expected.best > 0);
        let serial = testing::serial();
        let mut g = Sw::prepare(&input);
        let good = Sw::run(&serial, Variant::Fj, &input, &mut g);
        assert_eq!(
            Sw::check(&input, &g, &good).unwrap().to_string(),
            format!(
                "best local alignment score {}; checked against the serial computation's answer \
                 and hash of every cell",
                *full_table(&input.strings.x, &input.strings.y)
                    .iter()
                    .max()
                    .unwrap()
            )
        );
        let better = SwAnswer {
            best: good.best + 1,
            ..good
        };
        assert!(Sw::check(&input, &g, &better).is_err());
        let other_row = SwAnswer {
            last_row_hash: good.last_row_hash ^ 1,
            ..good
        };
        assert!(Sw::check(&input, &g, &other_row).is_err());
        // A table that differs in one inner cell (not on the last row, not the maximum).
        let mut tiles: Vec<SwTile> = (0..100).map(|t| g.get(t / 10, t % 10).clone()).collect();
        assert!(tiles[0].cells[0] < good.best);
        tiles[0].cells[0] -= 1;
        let corrupt = Grid::new(10);
        wavefront::serial(&Replay(tiles), &corrupt);
        assert!(Sw::check(&input, &corrupt, &good).is_err());
        assert!(Sw::check(&input, &Sw::prepare(&input), &good).is_err());
    }

    /// A kernel that hands out given tiles (to build grids for the check tests).
    struct Replay(Vec<SwTile>);

    impl TileKernel for Replay {
        type Tile = SwTile;
        fn compute(&self, g: &Grid<SwTile>, i: usize, j: usize) -> SwTile {
            self.0[i * g.side() + j].clone()
        }
    }
}
