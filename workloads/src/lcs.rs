//! `lcs`: the length of the longest common subsequence of two random strings, by the classic
//! dynamic program tiled into a wavefront (ProWS Figure 2, input n = 32768, base case 512).
//!
//! # Algorithm
//!
//! Strings `x`, `y` of length `n` over a 4-letter alphabet (seeded). The table
//! `H[r][c]` (`0 <= r, c <= n`) is the LCS length of `x[..r]` and `y[..c]`:
//! `H[0][c] = H[r][0] = 0` and
//!
//! ```text
//! H[r][c] = H[r-1][c-1] + 1                  if x[r-1] == y[c-1]
//!           max(H[r-1][c], H[r][c-1])        otherwise
//! ```
//!
//! Rows and columns `1..=n` are cut into `b × b` tiles (`n` a multiple of `b`) scheduled by
//! [`crate::wavefront`] (fj, sf, gf). Work `Θ(n²)`.
//!
//! # Storage
//!
//! At the paper's size the table has 2^30 cells, so it is never stored. A tile needs only the
//! row above it, the column to its left and the corner cell, so a finished tile keeps only its
//! boundary ([`LcsTile`]: its last row, extended one cell to the left, and its last column),
//! `O(n²/b)` cells in all (16 MiB at the paper's size). The kernel works on two row buffers
//! of `b + 1` cells.
//!
//! # Answer and check
//!
//! The answer is `H[n][n]` (the LCS length) and a hash of the table's last row and last
//! column, compared exactly with the same computed serially (row-major tile order, no runtime)
//! in [`Workload::input`](crate::Workload::input); the check also hashes every tile's boundary
//! against the serial ones (untimed). The tests check the kernel against an untiled
//! full-table DP.

use crate::Size;
use crate::wavefront::{Grid, StringTable, Strings, TableInput, TableWorkload, hash_cells};

/// The workload.
pub type Lcs = TableWorkload<LcsTable>;

/// The input: the two strings and the serial answer.
pub type LcsInput = TableInput<LcsTable>;

/// The LCS table: the kernel, the answer and the check's hash.
#[derive(Debug)]
pub struct LcsTable;

/// What a finished tile keeps: its boundary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LcsTile {
    /// `H[r1][c0-1 ..= c1]`: the tile's last row `r1`, preceded by the cell to its left.
    pub bottom: Box<[u32]>,
    /// `H[r0 ..= r1][c1]`: the tile's last column.
    pub right: Box<[u32]>,
}

/// The answer: the LCS length and a hash of the last row and column of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LcsAnswer {
    /// `H[n][n]`.
    pub length: u32,
    /// [`hash_cells`] of `H[n][0..=n]` followed by `H[0..=n][n]`.
    pub edge_hash: u64,
}

impl StringTable for LcsTable {
    const NAME: &'static str = "lcs";
    const DESCRIPTION: &'static str =
        "longest common subsequence, tiled wavefront DP over 4-letter random strings";
    const SEED: u64 = 0x1C5_0001;
    const HASHED: &'static str = "every tile's boundary";
    type Tile = LcsTile;
    type Answer = LcsAnswer;

    /// Every size keeps the paper's tile side `b = 512` (the task grain) and shrinks `n`;
    /// serial times (release, 2-core x86-64 machine, CPU time of the `serial` runtime's fj):
    /// paper about 0.69 s, small about 0.51 s, quick about 0.27 s (the paper's input is already
    /// short for our kernel, so small and quick are only somewhat smaller).
    fn dims(size: Size) -> (usize, usize) {
        match size {
            Size::Paper => (32768, 512),
            Size::Small => (28672, 512),
            Size::Quick => (20480, 512),
            Size::Test => (60, 6),
        }
    }

    /// The last row with the cell to its left, and the last column.
    fn tile_cells(b: usize) -> f64 {
        2.0 * b as f64 + 1.0
    }

    fn tile(s: &Strings, g: &Grid<LcsTile>, i: usize, j: usize) -> LcsTile {
        let b = s.b;
        // prev = H[r0-1][c0-1 ..= c1]; left = H[r0 ..= r1][c0-1].
        let mut prev: Vec<u32> = if i == 0 {
            vec![0; b + 1]
        } else {
            g.get(i - 1, j).bottom.to_vec()
        };
        let zeros;
        let left: &[u32] = if j == 0 {
            zeros = vec![0; b];
            &zeros
        } else {
            &g.get(i, j - 1).right
        };
        let mut cur = vec![0u32; b + 1];
        let mut right = vec![0u32; b];
        let xs = &s.x[i * b..(i + 1) * b];
        let ys = &s.y[j * b..(j + 1) * b];
        for ((&xr, &l), out) in xs.iter().zip(left).zip(right.iter_mut()) {
            *out = row(xr, ys, l, &prev, &mut cur);
            std::mem::swap(&mut prev, &mut cur);
        }
        LcsTile {
            bottom: prev.into_boxed_slice(),
            right: right.into_boxed_slice(),
        }
    }

    fn answer(g: &Grid<LcsTile>) -> LcsAnswer {
        answer(g)
    }

    fn hash(g: &Grid<LcsTile>) -> u64 {
        boundary_hash(g)
    }

    fn describe(answer: &LcsAnswer) -> String {
        format!("LCS length {}", answer.length)
    }
}

/// One row of a tile: `cur[0] = left`, `cur[c+1] = H` at column `c` given the row above
/// `prev` (`prev[0]` the diagonal of column 0). Returns the row's last cell.
///
/// (The branch-free form `max(H[r-1][c-1] + [x == y], H[r-1][c], H[r][c-1])`, equal for LCS,
/// measured about twice slower on x86-64.)
#[inline]
fn row(xr: u8, ys: &[u8], left: u32, prev: &[u32], cur: &mut [u32]) -> u32 {
    let b = ys.len();
    let (prev, cur) = (&prev[..=b], &mut cur[..=b]);
    cur[0] = left;
    let mut l = left;
    for c in 0..b {
        l = if xr == ys[c] {
            prev[c] + 1
        } else {
            prev[c + 1].max(l)
        };
        cur[c + 1] = l;
    }
    l
}

/// The answer read from a complete grid: `O(n)`.
pub fn answer(g: &Grid<LcsTile>) -> LcsAnswer {
    let nb = g.side();
    let last_row = std::iter::once(0)
        .chain((0..nb).flat_map(|j| g.get(nb - 1, j).bottom[1..].iter().copied()));
    let last_col =
        std::iter::once(0).chain((0..nb).flat_map(|i| g.get(i, nb - 1).right.iter().copied()));
    let length = *g.get(nb - 1, nb - 1).right.last().expect("non-empty tile");
    LcsAnswer {
        length,
        edge_hash: hash_cells(last_row.chain(last_col).map(u64::from)),
    }
}

/// The hash of every tile's boundary of a complete grid, tile by tile in row-major order.
pub fn boundary_hash(g: &Grid<LcsTile>) -> u64 {
    let nb = g.side();
    let cells = (0..nb * nb).flat_map(|t| {
        let tile = g.get(t / nb, t % nb);
        tile.bottom.iter().chain(tile.right.iter()).copied()
    });
    hash_cells(cells.map(u64::from))
}

/// The untiled full-table DP (`O(n²)` memory): the tests' reference for the kernel. Returns
/// the table, `(n+1)²` cells row-major.
pub fn full_table(x: &[u8], y: &[u8]) -> Vec<u32> {
    let (n, m) = (x.len(), y.len());
    let mut h = vec![0u32; (n + 1) * (m + 1)];
    for r in 1..=n {
        for c in 1..=m {
            h[r * (m + 1) + c] = if x[r - 1] == y[c - 1] {
                h[(r - 1) * (m + 1) + c - 1] + 1
            } else {
                h[(r - 1) * (m + 1) + c].max(h[r * (m + 1) + c - 1])
            };
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wavefront::{self, TileKernel};
    use crate::{Variant, Workload, testing};

    /// The answer of the full table.
    fn from_table(n: usize, h: &[u32]) -> LcsAnswer {
        let last_row = (0..=n).map(|c| h[n * (n + 1) + c]);
        let last_col = (0..=n).map(|r| h[r * (n + 1) + n]);
        LcsAnswer {
            length: h[(n + 1) * (n + 1) - 1],
            edge_hash: hash_cells(last_row.chain(last_col).map(u64::from)),
        }
    }

    #[test]
    fn kernel_matches_the_full_table() {
        for (n, b, seed) in [
            (1, 1, 1),
            (12, 4, 2),
            (30, 5, 3),
            (64, 8, 4),
            (64, 64, 5),
            (96, 16, 6),
        ] {
            let input = LcsInput::new(n, b, seed);
            let h = full_table(&input.strings.x, &input.strings.y);
            assert_eq!(input.expected, from_table(n, &h), "n={n} b={b}");
            // Every tile's boundary, not only the edges.
            let g = Grid::new(n / b);
            wavefront::serial(&input.kernel(), &g);
            for i in 0..n / b {
                for j in 0..n / b {
                    let t = g.get(i, j);
                    let r1 = (i + 1) * b;
                    let (c0, c1) = (j * b + 1, (j + 1) * b);
                    let bottom: Vec<u32> = (c0 - 1..=c1).map(|c| h[r1 * (n + 1) + c]).collect();
                    let right: Vec<u32> = (i * b + 1..=r1).map(|r| h[r * (n + 1) + c1]).collect();
                    assert_eq!(&*t.bottom, &bottom[..], "bottom of ({i}, {j})");
                    assert_eq!(&*t.right, &right[..], "right of ({i}, {j})");
                }
            }
        }
    }

    #[test]
    fn known_small_cases() {
        let lcs = |x: &[u8], y: &[u8]| full_table(x, y)[(x.len() + 1) * (y.len() + 1) - 1];
        assert_eq!(lcs(&[0, 1, 2, 3], &[0, 1, 2, 3]), 4);
        assert_eq!(lcs(&[0, 0, 0], &[1, 1, 1]), 0);
        assert_eq!(lcs(&[0, 1, 2, 1, 3, 0, 1], &[1, 3, 2, 0, 1, 0]), 4);
    }

    #[test]
    fn every_variant_fills_the_grid() {
        let input = Lcs::input_at(Size::Test);
        assert_eq!(input.strings.tiles(), 10);
        let serial = testing::serial();
        testing::check_every_variant::<Lcs>(&serial, &serial, &input, |what, g, _| {
            assert!(g.is_complete(), "{what}");
        });
    }

    #[test]
    fn check_rejects_wrong_answers() {
        let input = Lcs::input_at(Size::Test);
        let serial = testing::serial();
        let mut g = Lcs::prepare(&input);
        let good = Lcs::run(&serial, Variant::Fj, &input, &mut g);
        assert_eq!(
            Lcs::check(&input, &g, &good).unwrap().to_string(),
            format!(
                "LCS length {}; checked against the serial computation's answer and hash of \
                 every tile's boundary",
                good.length
            )
        );
        let h = full_table(&input.strings.x, &input.strings.y);
        assert_eq!(good.length, h[61 * 61 - 1]);
        let longer = LcsAnswer {
            length: good.length + 1,
            ..good
        };
        assert!(Lcs::check(&input, &g, &longer).is_err());
        let other_edges = LcsAnswer {
            edge_hash: good.edge_hash ^ 1,
            ..good
        };
        assert!(Lcs::check(&input, &g, &other_edges).is_err());
        // An inner tile's boundary off by one (not on the table's edges).
        let mut tiles: Vec<LcsTile> = (0..100).map(|t| g.get(t / 10, t % 10).clone()).collect();
        tiles[11].right[0] += 1;
        let corrupt = Grid::new(10);
        wavefront::serial(&Replay(tiles), &corrupt);
        assert_eq!(answer(&corrupt), good);
        assert!(Lcs::check(&input, &corrupt, &good).is_err());
        assert!(Lcs::check(&input, &Lcs::prepare(&input), &good).is_err());
    }

    /// A kernel that hands out given tiles (to build grids for the check tests).
    struct Replay(Vec<LcsTile>);

    impl TileKernel for Replay {
        type Tile = LcsTile;
        fn compute(&self, g: &Grid<LcsTile>, i: usize, j: usize) -> LcsTile {
            self.0[i * g.side() + j].clone()
        }
    }
}
