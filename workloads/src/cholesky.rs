//! `cholesky`: sparse Cholesky factorisation `A = L·Lᵀ` of a matrix stored as a quad tree
//! (Fibril's `cholesky`, after Cilk-5's `cholesky.cilk` by Keith Randall and Aske Plaat).
//!
//! # Algorithm
//!
//! A matrix of side `N = b·2^levels` is a quad tree: an internal node has four quadrants
//! (00, 01, 10, 11), a leaf is a dense `b × b` block, and an absent quadrant is zero. Only the
//! lower triangle of the symmetric `A` is stored (upper quadrants are absent, diagonal blocks
//! have zeros above their diagonal). Three recursive operations, as Cilk-5's:
//!
//! * `factor(A)`: `L00 = factor(A00)`; if `A10` is absent, `factor(A00) ∥ factor(A11)`;
//!   otherwise, in sequence, `L10 = solve(A10, L00)`, `A11 −= L10·L10ᵀ` (lower triangle
//!   only), `L11 = factor(A11)`.
//! * `solve(A, L)`, `A ← A·L⁻ᵀ` for a lower-triangular `L`: `solve(A00, L00) ∥ solve(A10, L00)`;
//!   then `A01 −= A00·L10ᵀ ∥ A11 −= A10·L10ᵀ`; then `solve(A01, L11) ∥ solve(A11, L11)`.
//! * `update(R, A, C)`, `R −= A·Cᵀ`: the eight quadrant products in two phases of four in
//!   parallel (`R00 −= A00·C00ᵀ, R01 −= A00·C10ᵀ, R10 −= A10·C00ᵀ, R11 −= A10·C10ᵀ`, then the
//!   same with `A01, A11` and `C01, C11`), a product skipped where an operand quadrant is
//!   absent; on a diagonal block (`lower`) `R01` is skipped and the diagonal quadrants stay
//!   `lower`.
//!
//! At the leaves, dense kernels ([`factor_block`], [`solve_block`], [`update_block`]) with
//! Cilk-5's loops. The parallelism is fork-join: a phase's two to four tasks under nested
//! `join`s. The recursion is written once as [`plan`]: a task's phases, each a group of tasks
//! that may run in parallel.
//!
//! # Input
//!
//! As Cilk-5's `init`: an `n × n` matrix with `nonzeros` entries in its lower triangle, the
//! `n` diagonal ones and `nonzeros − n` off-diagonal ones at distinct uniformly random
//! positions below the diagonal, each `0.1`; the side is padded to the next power of two times
//! `b` with the identity. Cilk-5 sets every diagonal entry to `1.0`, which makes the matrix
//! positive definite only by luck of the random pattern (row sums of the off-diagonal entries
//! average `1.8` for the paper's input); here a diagonal entry is `1 + 0.1·(off-diagonal
//! entries in its row and column)`, so the matrix is strictly diagonally dominant, hence
//! positive definite with eigenvalues at least 1, for every parameter choice. The values do not
//! change the work, which only depends on where blocks are nonzero.
//!
//! # Fill and layout
//!
//! Cilk-5 allocates the blocks that fill in (zero in `A`, nonzero in `L`) when an update first
//! reaches them, inside the timed region. Here the input generation runs the recursion once
//! symbolically (the same tests for absent quadrants, no arithmetic) and allocates every block
//! of `L` up front, so the tree's shape is fixed and the timed factorisation only updates
//! values. Every test for an absent quadrant sees the same answer as in Cilk-5: an operand is
//! always a finished block of `L`, whose pattern no later step changes. The tree is an arena
//! ([`Tree`]): internal nodes as four child indices, leaves as indices of `b × b` blocks, both
//! numbered in depth-first (Z-) order, so a quadrant's blocks are near each other in memory
//! (Cilk-5's `copy_matrix` lays the input out the same way; its fill blocks are allocated where
//! the allocator puts them).
//!
//! # Why the blocks are atomics
//!
//! As in `sort`: the async front-end lends borrows only for the whole
//! [`AsyncForkJoin::run_async`] scope, so the tasks share the blocks as `&[Line]` (cache
//! lines of eight `AtomicU64`s, the bits of the `f64`s), read and written with `Relaxed` loads
//! and stores (plain moves), the join or await ordering two tasks' accesses. A leaf kernel
//! loads its blocks into local arrays, computes, and stores its result block back. A block is
//! whole lines (`b²` is a multiple of 8), so two tasks writing neighbouring blocks never share
//! a line. The block side `b` is one of [`BLOCK_SIDES`] (Cilk-5's is 4), a constant of each
//! kernel.
//!
//! # Check
//!
//! Untimed, by Freivalds' idea ([`check_factor`]): every value of `L` is finite and, for two
//! seeded random vectors `x` with entries in `[−1, 1)`, `‖L·(Lᵀ·x) − A·x‖₂ ≤
//! `[`TOLERANCE`]`·‖A·x‖₂`, in `O(blocks·b²)`. Every stored value of `L` enters, the upper
//! triangles of its diagonal blocks too (which must stay zero).

use crate::params::check_memory;
use crate::rng::SplitMix64;
use crate::{Checked, Params, Size, Variant, Workload, parfor};
use std::collections::HashSet;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use stealbench_schedulers::{AsyncForkJoin, AsyncWorker, ForkJoin, Worker};

/// The workload marker type.
#[derive(Debug)]
pub struct Cholesky;

/// An absent quadrant.
pub const NIL: u32 = u32::MAX;

/// The block sides a kernel is compiled for.
pub const BLOCK_SIDES: [usize; 4] = [4, 8, 16, 32];

/// The value of every off-diagonal entry of the input (Cilk-5's).
pub const OFF_DIAGONAL: f64 = 0.1;

/// The shape of a quad-tree matrix: which blocks exist and where.
#[derive(Debug, Clone)]
pub struct Tree {
    /// The block side `b`.
    pub b: usize,
    /// Levels of internal nodes: the root is at level `levels`, the leaves at level 0.
    pub levels: u32,
    /// The root: a node index (or a leaf index when `levels == 0`).
    pub root: u32,
    /// The internal nodes' quadrants 00, 01, 10, 11: node indices one level down, leaf
    /// indices at level 1, [`NIL`] for an absent quadrant.
    pub nodes: Vec<[u32; 4]>,
    /// The (block row, block column) of every leaf.
    pub leaf_pos: Vec<(u32, u32)>,
}

impl Tree {
    /// The side `N` of the (padded) matrix.
    pub fn side(&self) -> usize {
        self.b << self.levels
    }

    /// The number of leaf blocks.
    pub fn leaves(&self) -> usize {
        self.leaf_pos.len()
    }
}

/// A `B × B` block, row-major.
pub type Blk<const B: usize> = [[f64; B]; B];

/// Factors a diagonal block in place: its lower triangle becomes `L` with `L·Lᵀ` equal to the
/// block's lower triangle (Cilk-5's `block_cholesky`; a negative pivot gives NaN).
pub fn factor_block<const B: usize>(a: &mut Blk<B>) {
    for k in 0..B {
        let x = a[k][k].sqrt();
        for row in &mut a[k..] {
            row[k] /= x;
        }
        for j in k + 1..B {
            let ajk = a[j][k];
            for row in &mut a[j..] {
                row[j] -= row[k] * ajk;
            }
        }
    }
}

/// `a ← a·l⁻ᵀ` for a lower-triangular `l` (Cilk-5's `block_backsub`).
pub fn solve_block<const B: usize>(a: &mut Blk<B>, l: &Blk<B>) {
    for i in 0..B {
        for row in a.iter_mut() {
            let mut s = row[i];
            for k in 0..i {
                s -= l[i][k] * row[k];
            }
            row[i] = s / l[i][i];
        }
    }
}

/// `r −= a·cᵀ`, only on and below the diagonal when `lower` (Cilk-5's `block_schur_full`
/// and `block_schur_half`).
pub fn update_block<const B: usize>(r: &mut Blk<B>, a: &Blk<B>, c: &Blk<B>, lower: bool) {
    for (i, (r_row, a_row)) in r.iter_mut().zip(a).enumerate() {
        let cols = if lower { i + 1 } else { B };
        for (r_ij, c_row) in r_row[..cols].iter_mut().zip(c) {
            let mut s = *r_ij;
            for (&a_ik, &c_jk) in a_row.iter().zip(c_row) {
                s -= a_ik * c_jk;
            }
            *r_ij = s;
        }
    }
}

/// Eight values (`f64` bits) on one cache line.
#[derive(Debug, Default)]
#[repr(C, align(64))]
pub struct Line(pub [AtomicU64; 8]);

/// Values per [`Line`].
const PER_LINE: usize = 8;

/// The values of `lines`, in order.
fn flat(lines: &[Line]) -> impl Iterator<Item = &AtomicU64> {
    lines.iter().flat_map(|l| &l.0)
}

/// A factorisation in progress: the tree and the values of its blocks (leaf `i` is values
/// `i·b²..(i+1)·b²`, row-major, as `f64` bits, `b²/8` whole lines).
#[derive(Debug, Clone, Copy)]
pub struct Matrix<'a> {
    /// The shape.
    pub tree: &'a Tree,
    /// The values.
    pub blocks: &'a [Line],
}

impl Matrix<'_> {
    fn lines<const B: usize>(&self, leaf: u32) -> &[Line] {
        let per_block = B * B / PER_LINE;
        &self.blocks[leaf as usize * per_block..][..per_block]
    }

    fn load<const B: usize>(&self, leaf: u32) -> Blk<B> {
        let mut blk = [[0.0; B]; B];
        for (i, line) in self.lines::<B>(leaf).iter().enumerate() {
            for (k, a) in line.0.iter().enumerate() {
                let at = i * PER_LINE + k;
                blk[at / B][at % B] = f64::from_bits(a.load(Relaxed));
            }
        }
        blk
    }

    fn store<const B: usize>(&self, leaf: u32, blk: &Blk<B>) {
        for (i, line) in self.lines::<B>(leaf).iter().enumerate() {
            for (k, a) in line.0.iter().enumerate() {
                let at = i * PER_LINE + k;
                a.store(blk[at / B][at % B].to_bits(), Relaxed);
            }
        }
    }

    /// Runs a leaf operation with the kernels of side `B`. Not inlined: [`plan`]'s frame would
    /// otherwise hold the blocks of every side (27 KiB, probed page by page on every call).
    #[inline(never)]
    fn leaf_op<const B: usize>(&self, op: Op) {
        match op {
            Op::Factor(a) => {
                let mut blk = self.load::<B>(a);
                factor_block(&mut blk);
                self.store(a, &blk);
            }
            Op::Solve { a, l } => {
                let mut blk = self.load::<B>(a);
                solve_block(&mut blk, &self.load::<B>(l));
                self.store(a, &blk);
            }
            Op::Update { lower, r, a, c } => {
                let mut blk = self.load::<B>(r);
                update_block(&mut blk, &self.load::<B>(a), &self.load::<B>(c), lower);
                self.store(r, &blk);
            }
        }
    }
}

/// One operation of the recursion on nodes of one level (leaf indices at level 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Factor the diagonal block `a` in place.
    Factor(u32),
    /// `a ← a·l⁻ᵀ`.
    Solve {
        /// The block solved in place.
        a: u32,
        /// The lower-triangular factor.
        l: u32,
    },
    /// `r −= a·cᵀ` (lower triangle only when `lower`).
    Update {
        /// A diagonal block: only its lower triangle is updated.
        lower: bool,
        /// The block updated.
        r: u32,
        /// The left factor.
        a: u32,
        /// The right factor, transposed.
        c: u32,
    },
}

/// An operation on nodes of level `level`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Task {
    /// The nodes' level (0: leaves).
    pub level: u32,
    /// The operation.
    pub op: Op,
}

/// A task's phases, in order: up to four groups of up to four operations on the nodes of
/// one level; the operations of a phase may run in parallel.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// The level of every operation.
    pub level: u32,
    ops: [Op; 8],
    len: u8,
    /// Where each phase ends in `ops`.
    ends: [u8; 4],
    phases: u8,
}

impl Plan {
    fn new(level: u32) -> Self {
        Plan {
            level,
            ops: [Op::Factor(NIL); 8],
            len: 0,
            ends: [0; 4],
            phases: 0,
        }
    }

    /// Adds a phase of the given operations (`None`s skipped, nothing added if all are).
    fn phase(&mut self, ops: impl IntoIterator<Item = Option<Op>>) {
        let start = self.len;
        for op in ops.into_iter().flatten() {
            self.ops[usize::from(self.len)] = op;
            self.len += 1;
        }
        if self.len > start {
            self.ends[usize::from(self.phases)] = self.len;
            self.phases += 1;
        }
    }

    /// The phases, each as the range of its operations ([`Plan::task`]).
    pub fn phases(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        let ends = &self.ends[..usize::from(self.phases)];
        ends.iter().scan(0, |start, &end| {
            let r = *start..usize::from(end);
            *start = usize::from(end);
            Some(r)
        })
    }

    /// Operation `i` as a task.
    pub fn task(&self, i: usize) -> Task {
        Task {
            level: self.level,
            op: self.ops[i],
        }
    }

    /// Operations `range` as tasks.
    pub fn tasks(&self, range: std::ops::Range<usize>) -> impl Iterator<Item = Task> + '_ {
        range.map(|i| self.task(i))
    }
}

/// Whether both nodes exist.
fn both(a: u32, b: u32) -> bool {
    a != NIL && b != NIL
}

/// The recursion step, written once for every variant: runs a leaf task and returns `None`,
/// or returns the phases of an internal task (see the module documentation). Every block a
/// leaf task writes exists (the input generation allocated it); an update whose target is
/// absent reaches no block (as in Cilk-5, its tasks still run and find no pair of operands).
pub fn plan(m: Matrix<'_>, t: Task) -> Option<Plan> {
    if t.level == 0 {
        match m.tree.b {
            4 => m.leaf_op::<4>(t.op),
            8 => m.leaf_op::<8>(t.op),
            16 => m.leaf_op::<16>(t.op),
            32 => m.leaf_op::<32>(t.op),
            b => panic!("cholesky has no kernel for blocks of side {b}"),
        }
        return None;
    }
    // An update whose operands exist may still reach no block (no pair of their quadrants
    // exists all the way down); its target is then absent, and so are its quadrants.
    let q = |node: u32| {
        if node == NIL {
            [NIL; 4]
        } else {
            m.tree.nodes[node as usize]
        }
    };
    let mut plan = Plan::new(t.level - 1);
    match t.op {
        Op::Factor(a) => {
            let [a00, _, a10, a11] = q(a);
            if a10 == NIL {
                plan.phase([Some(Op::Factor(a00)), Some(Op::Factor(a11))]);
            } else {
                plan.phase([Some(Op::Factor(a00))]);
                plan.phase([Some(Op::Solve { a: a10, l: a00 })]);
                let (lower, r, a, c) = (true, a11, a10, a10);
                plan.phase([Some(Op::Update { lower, r, a, c })]);
                plan.phase([Some(Op::Factor(a11))]);
            }
        }
        Op::Solve { a, l } => {
            let [a00, a01, a10, a11] = q(a);
            let [l00, _, l10, l11] = q(l);
            let solve = |a: u32, l: u32| (a != NIL).then_some(Op::Solve { a, l });
            let update = |r: u32, a: u32, c: u32| {
                both(a, c).then_some(Op::Update {
                    lower: false,
                    r,
                    a,
                    c,
                })
            };
            plan.phase([solve(a00, l00), solve(a10, l00)]);
            plan.phase([update(a01, a00, l10), update(a11, a10, l10)]);
            plan.phase([solve(a01, l11), solve(a11, l11)]);
        }
        Op::Update { lower, r, a, c } => {
            let [r00, r01, r10, r11] = q(r);
            let [a00, a01, a10, a11] = q(a);
            let [c00, c01, c10, c11] = q(c);
            let update = |lower: bool, r: u32, a: u32, c: u32| {
                both(a, c).then_some(Op::Update { lower, r, a, c })
            };
            plan.phase([
                update(lower, r00, a00, c00),
                update(false, r01, a00, c10).filter(|_| !lower),
                update(false, r10, a10, c00),
                update(lower, r11, a10, c10),
            ]);
            plan.phase([
                update(lower, r00, a01, c01),
                update(false, r01, a01, c11).filter(|_| !lower),
                update(false, r10, a11, c01),
                update(lower, r11, a11, c11),
            ]);
        }
    }
    Some(plan)
}

/// The factorisation of the whole matrix.
pub fn root_task(tree: &Tree) -> Task {
    Task {
        level: tree.levels,
        op: Op::Factor(tree.root),
    }
}

/// The serial elision: every phase's tasks one after the other.
pub fn serial(m: Matrix<'_>, t: Task) {
    if let Some(plan) = plan(m, t) {
        for phase in plan.phases() {
            for t in plan.tasks(phase) {
                serial(m, t);
            }
        }
    }
}

/// Fork-join: a phase's tasks under nested `join`s (halves of the phase), a phase of one task
/// called directly.
pub fn fj<W: Worker>(w: &W, m: Matrix<'_>, t: Task) {
    if let Some(plan) = plan(m, t) {
        for phase in plan.phases() {
            parfor::fj(w, phase, &|w, i| fj(w, m, plan.task(i)));
        }
    }
}

/// Fork-join on the async front-end: as [`fj`], with [`AsyncWorker::join`] over the halves
/// of a phase and [`AsyncWorker::call`] for a phase of one task.
pub fn fj_async<'s, C: AsyncWorker<'s>>(
    c: C,
    m: Matrix<'s>,
    t: Task,
) -> impl Future<Output = ()> + Send + 's {
    async move {
        if let Some(plan) = plan(m, t) {
            for phase in plan.phases() {
                parfor::fj_async(c.clone(), phase, move |c, i| fj_async(c, m, plan.task(i))).await;
            }
        }
    }
}

/// Builds a tree: a mutable arena of nodes and zero-initialised leaves.
struct Builder {
    b: usize,
    levels: u32,
    nodes: Vec<[u32; 4]>,
    leaves: u32,
}

impl Builder {
    fn new_leaf(&mut self) -> u32 {
        self.leaves += 1;
        self.leaves - 1
    }

    fn new_node(&mut self, children: [u32; 4]) -> u32 {
        self.nodes.push(children);
        self.nodes.len() as u32 - 1
    }

    /// The leaf holding element `(r, c)` under `node` (of `level`), created if absent, with
    /// `(r, c)` inside that leaf; returns the (possibly new) node.
    fn insert(
        &mut self,
        node: u32,
        level: u32,
        r: usize,
        c: usize,
        leaf: &mut (u32, usize),
    ) -> u32 {
        if level == 0 {
            let node = if node == NIL { self.new_leaf() } else { node };
            *leaf = (node, r * self.b + c);
            return node;
        }
        let node = if node == NIL {
            self.new_node([NIL; 4])
        } else {
            node
        };
        let half = self.b << (level - 1);
        let q = 2 * usize::from(r >= half) + usize::from(c >= half);
        let child = self.nodes[node as usize][q];
        let child = self.insert(child, level - 1, r % half, c % half, leaf);
        self.nodes[node as usize][q] = child;
        node
    }

    /// The symbolic `factor`: allocates every block the numeric one updates.
    fn factor(&mut self, level: u32, a: u32) {
        if level == 0 {
            return;
        }
        let [a00, _, a10, a11] = self.nodes[a as usize];
        self.factor(level - 1, a00);
        if a10 != NIL {
            self.solve(level - 1, a10, a00);
            let a11 = self.update(level - 1, true, a11, a10, a10);
            self.nodes[a as usize][3] = a11;
        }
        self.factor(level - 1, self.nodes[a as usize][3]);
    }

    /// The symbolic `solve`.
    fn solve(&mut self, level: u32, a: u32, l: u32) {
        if level == 0 {
            return;
        }
        let [l00, _, l10, l11] = self.nodes[l as usize];
        let [a00, _, a10, _] = self.nodes[a as usize];
        for (x, l) in [(a00, l00), (a10, l00)] {
            if x != NIL {
                self.solve(level - 1, x, l);
            }
        }
        for (q, x) in [(1, a00), (3, a10)] {
            if both(x, l10) {
                let r = self.nodes[a as usize][q];
                self.nodes[a as usize][q] = self.update(level - 1, false, r, x, l10);
            }
        }
        let [_, a01, _, a11] = self.nodes[a as usize];
        for x in [a01, a11] {
            if x != NIL {
                self.solve(level - 1, x, l11);
            }
        }
    }

    /// The symbolic `update` of `r` (absent: [`NIL`]); returns `r`, allocated if a product
    /// reaches it.
    fn update(&mut self, level: u32, lower: bool, r: u32, a: u32, c: u32) -> u32 {
        if level == 0 {
            return if r == NIL { self.new_leaf() } else { r };
        }
        let mut rq = if r == NIL {
            [NIL; 4]
        } else {
            self.nodes[r as usize]
        };
        let [a00, a01, a10, a11] = self.nodes[a as usize];
        let [c00, c01, c10, c11] = self.nodes[c as usize];
        for [a0, a1, c0, c1] in [[a00, a10, c00, c10], [a01, a11, c01, c11]] {
            for (q, lw, x, y) in [
                (0, lower, a0, c0),
                (1, false, a0, c1),
                (2, false, a1, c0),
                (3, lower, a1, c1),
            ] {
                if both(x, y) && !(lower && q == 1) {
                    rq[q] = self.update(level - 1, lw, rq[q], x, y);
                }
            }
        }
        if r != NIL {
            self.nodes[r as usize] = rq;
            r
        } else if rq != [NIL; 4] {
            self.new_node(rq)
        } else {
            NIL
        }
    }

    /// The finished tree, its nodes and leaves renumbered in the order of a depth-first walk
    /// from `root` (quadrants 00, 01, 10, 11: Z-order), so that the blocks of a quadrant are
    /// near each other in memory (as Cilk-5's `copy_matrix` lays out the input), and the new
    /// index of every old leaf.
    fn finish(self, root: u32) -> (Tree, Vec<u32>) {
        struct Walk<'a> {
            old: &'a [[u32; 4]],
            nodes: Vec<[u32; 4]>,
            leaf_pos: Vec<(u32, u32)>,
            leaf_map: Vec<u32>,
        }
        impl Walk<'_> {
            /// Renumbers `node` of `level` at block position `(r, c)`; returns its new index.
            fn visit(&mut self, node: u32, level: u32, (r, c): (u32, u32)) -> u32 {
                if node == NIL {
                    return NIL;
                }
                if level == 0 {
                    let new = self.leaf_pos.len() as u32;
                    self.leaf_pos.push((r, c));
                    self.leaf_map[node as usize] = new;
                    return new;
                }
                let new = self.nodes.len();
                self.nodes.push([NIL; 4]);
                let half = 1 << (level - 1);
                let children = self.old[node as usize];
                for (q, child) in children.into_iter().enumerate() {
                    let (dr, dc) = ((q as u32 >> 1) * half, (q as u32 & 1) * half);
                    self.nodes[new][q] = self.visit(child, level - 1, (r + dr, c + dc));
                }
                new as u32
            }
        }
        let mut walk = Walk {
            old: &self.nodes,
            nodes: Vec::with_capacity(self.nodes.len()),
            leaf_pos: Vec::with_capacity(self.leaves as usize),
            leaf_map: vec![NIL; self.leaves as usize],
        };
        let root = walk.visit(root, self.levels, (0, 0));
        let tree = Tree {
            b: self.b,
            levels: self.levels,
            root,
            nodes: walk.nodes,
            leaf_pos: walk.leaf_pos,
        };
        (tree, walk.leaf_map)
    }
}

/// The parameters of an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CholeskyParams {
    /// The matrix side (the paper: 4000).
    pub n: usize,
    /// Nonzeros of the lower triangle, the diagonal included (the paper: 40000).
    pub nonzeros: usize,
    /// The leaf block side, one of [`BLOCK_SIDES`] (Cilk-5: 4).
    pub b: usize,
    /// The seed of the nonzeros' positions.
    pub seed: u64,
}

/// The seeds of the input and of the check's vectors.
const INPUT_SEED: u64 = 0xc401_5eed_0000_0001;
const CHECK_SEED: u64 = 0xc401_c4ec_0000_0002;

impl CholeskyParams {
    /// The parameters of a size preset.
    pub fn preset(size: Size) -> Params {
        let (n, nonzeros) = match size {
            Size::Paper => (4000, 40_000),
            Size::Small => (2000, 20_000),
            Size::Quick => (1400, 14_000),
            Size::Test => (100, 400),
        };
        Params::new()
            .int("n", n)
            .int("nonzeros", nonzeros)
            .int("b", 4)
            .int("seed", INPUT_SEED)
    }

    /// The parameters as read from `p`; `Err` if a value does not fit this machine.
    pub fn read(p: &Params) -> Result<Self, String> {
        Ok(CholeskyParams {
            n: p.get_usize("n")?,
            nonzeros: p.get_usize("nonzeros")?,
            b: p.get_usize("b")?,
            seed: p.get_int("seed"),
        })
    }
}

/// The largest side `n`.
pub const MAX_SIDE: usize = 1 << 16;

/// The input: the tree of `L` (every block the factorisation writes) and the values of `A` in
/// it (zero in the blocks that fill in).
#[derive(Debug, Clone)]
pub struct CholeskyInput {
    /// The parameters.
    pub params: CholeskyParams,
    /// The shape of `L`.
    pub tree: Tree,
    /// `A`'s lower triangle, `b²` values per leaf of `tree`.
    pub a: Vec<f64>,
}

impl CholeskyInput {
    /// The input of `p` (see the module documentation); `Err` if a parameter is unusable.
    pub fn new(p: CholeskyParams) -> Result<Self, String> {
        let CholeskyParams { n, nonzeros, b, .. } = p;
        if !BLOCK_SIDES.contains(&b) {
            return Err(format!("b={b}: must be one of {BLOCK_SIDES:?}"));
        }
        if n == 0 || n > MAX_SIDE {
            return Err(format!("n={n}: must be between 1 and {MAX_SIDE}"));
        }
        let max = n + n * (n - 1) / 4;
        if nonzeros < n || nonzeros > max {
            return Err(format!(
                "nonzeros={nonzeros}: must be between n = {n} (the diagonal) and \
                 n + n(n−1)/4 = {max} (half the positions below the diagonal)"
            ));
        }
        // Per entry: its position and value twice (sampled, then with the diagonal), its place
        // in the tree, and the set of positions seen.
        check_memory(
            &format!("n={n} nonzeros={nonzeros}"),
            100.0 * nonzeros as f64,
        )?;
        // The off-diagonal positions, distinct, below the diagonal.
        let mut rng = SplitMix64::new(p.seed);
        let mut seen = HashSet::with_capacity(nonzeros - n);
        let mut entries = Vec::with_capacity(nonzeros - n);
        let mut degree = vec![0u32; n];
        while entries.len() < nonzeros - n {
            let (r, c) = (rng.index(n), rng.index(n));
            if r > c && seen.insert((r, c)) {
                entries.push((r, c, OFF_DIAGONAL));
                degree[r] += 1;
                degree[c] += 1;
            }
        }
        let levels = n.div_ceil(b).next_power_of_two().trailing_zeros();
        let side = b << levels;
        let diagonal = (0..side).map(|i| {
            let d = degree.get(i).map_or(0.0, |&d| OFF_DIAGONAL * f64::from(d));
            (i, i, 1.0 + d)
        });
        let all: Vec<(usize, usize, f64)> = diagonal.chain(entries).collect();
        let mut builder = Builder {
            b,
            levels,
            nodes: Vec::new(),
            leaves: 0,
        };
        let mut root = NIL;
        let mut placed = Vec::with_capacity(all.len());
        for &(r, c, v) in &all {
            let mut at = (NIL, 0);
            root = builder.insert(root, levels, r, c, &mut at);
            placed.push((at, v));
        }
        builder.factor(levels, root);
        let (tree, leaf_map) = builder.finish(root);
        // The values of L's blocks, fill-in included: A's and a repetition's copy. (The tree
        // itself, built above, is a fraction of them.)
        check_memory(
            &format!("n={n} nonzeros={nonzeros} b={b}"),
            2.0 * 8.0 * (tree.leaves() * b * b) as f64,
        )?;
        let mut a = vec![0.0; tree.leaves() * b * b];
        for ((leaf, i), v) in placed {
            a[leaf_map[leaf as usize] as usize * b * b + i] = v;
        }
        Ok(CholeskyInput { params: p, tree, a })
    }

    /// Fresh values for a factorisation: a copy of `A`.
    pub fn fresh(&self) -> Vec<Line> {
        self.a
            .chunks_exact(PER_LINE)
            .map(|v| Line(std::array::from_fn(|i| AtomicU64::new(v[i].to_bits()))))
            .collect()
    }
}

/// The check's tolerance: `‖L·Lᵀ·x − A·x‖₂ ≤ TOLERANCE·‖A·x‖₂`. The rounding error of the
/// factorisation grows like `ε·N` at worst (dot products of up to `N` terms); measured
/// `3.3·10^-15` for the paper's input, `1.7·10^-15` for `n = 1000` (4 × 4 and 32 × 32 blocks).
pub const TOLERANCE: f64 = 1e-12;

/// `y += M·x` (or `Mᵀ·x` when `transpose`) for the block of `values` at `(bi, bj)`.
fn block_mul(
    values: &[f64],
    b: usize,
    (bi, bj): (u32, u32),
    x: &[f64],
    y: &mut [f64],
    transpose: bool,
) {
    let (rows, cols) = (bi as usize * b, bj as usize * b);
    for (i, row) in values.chunks_exact(b).enumerate() {
        for (j, &v) in row.iter().enumerate() {
            if transpose {
                y[cols + j] += v * x[rows + i];
            } else {
                y[rows + i] += v * x[cols + j];
            }
        }
    }
}

/// Checks that `l` (the blocks of `input.tree` after the factorisation) is the Cholesky factor
/// of the input (see the module documentation).
pub fn check_factor(input: &CholeskyInput, l: &[f64]) -> Result<Checked, String> {
    let tree = &input.tree;
    let (b, side) = (tree.b, tree.side());
    if l.len() != input.a.len() {
        return Err(format!("{} values for {} blocks", l.len(), tree.leaves()));
    }
    if let Some(i) = l.iter().position(|v| !v.is_finite()) {
        let (bi, bj) = tree.leaf_pos[i / (b * b)];
        let (r, c) = (bi as usize * b + i % (b * b) / b, bj as usize * b + i % b);
        return Err(format!("L[{r}][{c}] = {} is not finite", l[i]));
    }
    let mut rng = SplitMix64::new(CHECK_SEED);
    // The largest relative residual of the two vectors.
    let mut residual = 0.0f64;
    for round in 0..2 {
        let x: Vec<f64> = (0..side)
            .map(|_| (rng.next_u64() >> 11) as f64 * (2.0 / (1u64 << 53) as f64) - 1.0)
            .collect();
        // A·x from A's lower triangle: each stored entry below the diagonal twice.
        let mut ax = vec![0.0; side];
        let mut ltx = vec![0.0; side];
        for (t, &pos) in tree.leaf_pos.iter().enumerate() {
            let blk = &input.a[t * b * b..(t + 1) * b * b];
            if pos.0 == pos.1 {
                let (lower, strict): (Vec<f64>, Vec<f64>) = (0..b * b)
                    .map(|k| {
                        let (i, j) = (k / b, k % b);
                        let v = blk[k];
                        (if j <= i { v } else { 0.0 }, if j < i { v } else { 0.0 })
                    })
                    .unzip();
                block_mul(&lower, b, pos, &x, &mut ax, false);
                block_mul(&strict, b, pos, &x, &mut ax, true);
            } else {
                block_mul(blk, b, pos, &x, &mut ax, false);
                block_mul(blk, b, pos, &x, &mut ax, true);
            }
            block_mul(&l[t * b * b..(t + 1) * b * b], b, pos, &x, &mut ltx, true);
        }
        let mut lltx = vec![0.0; side];
        for (t, &pos) in tree.leaf_pos.iter().enumerate() {
            block_mul(
                &l[t * b * b..(t + 1) * b * b],
                b,
                pos,
                &ltx,
                &mut lltx,
                false,
            );
        }
        let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
        let diff: Vec<f64> = lltx.iter().zip(&ax).map(|(p, q)| p - q).collect();
        let (err, scale) = (norm(&diff), norm(&ax));
        if err.is_nan() || err > TOLERANCE * scale {
            let worst = (0..side)
                .max_by(|&i, &j| diff[i].abs().total_cmp(&diff[j].abs()))
                .unwrap_or(0);
            return Err(format!(
                "L·Lᵀ differs from A: ‖L·Lᵀ·x − A·x‖₂ = {err:.3e} > {TOLERANCE:e}·‖A·x‖₂ = \
                 {:.3e} (vector {round}; worst in row {worst})",
                TOLERANCE * scale
            ));
        }
        residual = residual.max(err / scale);
    }
    Ok(Checked::new(
        format!("relative residual ‖L·Lᵀ·x − A·x‖₂ / ‖A·x‖₂ = {residual:.3e}"),
        format!("the bound {TOLERANCE:e}"),
    ))
}

/// The values of a factorisation's blocks.
pub fn values(blocks: &[Line]) -> Vec<f64> {
    flat(blocks)
        .map(|a| f64::from_bits(a.load(Relaxed)))
        .collect()
}

impl Workload for Cholesky {
    const NAME: &'static str = "cholesky";
    const DESCRIPTION: &'static str =
        "sparse Cholesky factorisation on a quad tree of dense blocks (Cilk-5 cholesky)";
    const VARIANTS: &'static [Variant] = &[Variant::Fj];
    const ASYNC_VARIANTS: &'static [Variant] = &[Variant::Fj];

    type Input = CholeskyInput;
    type Work = Vec<Line>;
    type Answer = ();

    fn preset(size: Size) -> Params {
        CholeskyParams::preset(size)
    }

    fn input(params: &Params) -> Result<CholeskyInput, String> {
        CholeskyInput::new(CholeskyParams::read(params)?)
    }

    fn prepare(input: &CholeskyInput) -> Vec<Line> {
        input.fresh()
    }

    fn run<S: ForkJoin>(pool: &S, variant: Variant, input: &CholeskyInput, work: &mut Vec<Line>) {
        let m = Matrix {
            tree: &input.tree,
            blocks: work,
        };
        let root = root_task(&input.tree);
        match variant {
            Variant::Fj => pool.run(|w| fj(w, m, root)),
            v => panic!("cholesky has no {v} variant"),
        }
    }

    fn run_async<S: AsyncForkJoin>(
        pool: &S,
        variant: Variant,
        input: &CholeskyInput,
        work: &mut Vec<Line>,
    ) {
        let m = Matrix {
            tree: &input.tree,
            blocks: work,
        };
        let root = root_task(&input.tree);
        match variant {
            Variant::Fj => pool.run_async(|c| fj_async(c, m, root)),
            v => panic!("cholesky has no async {v} variant"),
        }
    }

    fn kernel(input: &CholeskyInput, work: &mut Vec<Line>) {
        let m = Matrix {
            tree: &input.tree,
            blocks: work,
        };
        serial(m, root_task(&input.tree));
    }

    fn check(input: &CholeskyInput, work: &Vec<Line>, _answer: &()) -> Result<Checked, String> {
        check_factor(input, &values(work))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    fn input(n: usize, nonzeros: usize, b: usize) -> CholeskyInput {
        CholeskyInput::new(CholeskyParams {
            n,
            nonzeros,
            b,
            seed: 3,
        })
        .unwrap()
    }

    /// The dense matrix of a factorisation's blocks (or of `A`'s lower triangle).
    fn dense(input: &CholeskyInput, values: &[f64]) -> Vec<Vec<f64>> {
        let (b, side) = (input.tree.b, input.tree.side());
        let mut m = vec![vec![0.0; side]; side];
        for (t, &(bi, bj)) in input.tree.leaf_pos.iter().enumerate() {
            for k in 0..b * b {
                m[bi as usize * b + k / b][bj as usize * b + k % b] = values[t * b * b + k];
            }
        }
        m
    }

    /// The dense Cholesky factor of the symmetric matrix whose lower triangle is `a`.
    fn dense_cholesky(a: &[Vec<f64>]) -> Vec<Vec<f64>> {
        let n = a.len();
        let mut l = vec![vec![0.0; n]; n];
        for j in 0..n {
            let d = a[j][j] - (0..j).map(|k| l[j][k] * l[j][k]).sum::<f64>();
            l[j][j] = d.sqrt();
            for i in j + 1..n {
                let s = a[i][j] - (0..j).map(|k| l[i][k] * l[j][k]).sum::<f64>();
                l[i][j] = s / l[j][j];
            }
        }
        l
    }

    /// The factor's values by the serial elision.
    fn serial_factor(inp: &CholeskyInput) -> Vec<f64> {
        let work = inp.fresh();
        serial(
            Matrix {
                tree: &inp.tree,
                blocks: &work,
            },
            root_task(&inp.tree),
        );
        values(&work)
    }

    #[test]
    fn block_kernels_match_dense_algebra() {
        // A 4 × 4 SPD block: factor, then L·Lᵀ gives it back.
        let a: Blk<4> = [
            [4.0, 0.0, 0.0, 0.0],
            [2.0, 5.0, 0.0, 0.0],
            [0.4, 1.0, 6.0, 0.0],
            [0.2, 0.3, 0.5, 7.0],
        ];
        let mut l = a;
        factor_block(&mut l);
        for i in 0..4 {
            for j in 0..=i {
                let s: f64 = (0..4).map(|k| l[i][k] * l[j][k]).sum();
                assert!((s - a[i][j]).abs() < 1e-14, "({i},{j})");
            }
            assert!(l[i][i + 1..].iter().all(|&x| x == 0.0));
        }
        assert_eq!(l[0][0], 2.0);
        // solve: x·Lᵀ = m.
        let m: Blk<4> = [[1.0, 2.0, 3.0, 4.0]; 4];
        let mut x = m;
        solve_block(&mut x, &l);
        for i in 0..4 {
            for j in 0..4 {
                let s: f64 = (0..4).map(|k| x[i][k] * l[j][k]).sum();
                assert!((s - m[i][j]).abs() < 1e-13);
            }
        }
        // update: r −= a·cᵀ, all or the lower triangle.
        let mut r = [[10.0; 4]; 4];
        update_block(&mut r, &a, &m, false);
        assert_eq!(r[1][2], 10.0 - (2.0 * 1.0 + 5.0 * 2.0));
        let mut r2 = [[10.0; 4]; 4];
        update_block(&mut r2, &a, &m, true);
        assert_eq!(r2[1][2], 10.0);
        assert_eq!(r2[2][1], r[2][1]);
    }

    #[test]
    fn input_follows_cilk() {
        let inp = input(100, 400, 4);
        let a = dense(&inp, &inp.a);
        assert_eq!(inp.tree.side(), 128);
        let below: usize = (0..128)
            .map(|i| (0..i).filter(|&j| a[i][j] != 0.0).count())
            .sum();
        assert_eq!(below, 300);
        for (i, row) in a.iter().enumerate() {
            // Row i of the symmetric matrix: a[i][j] left of the diagonal, a[j][i] right of it.
            let off: f64 =
                row[..i].iter().sum::<f64>() + a[i + 1..].iter().map(|r| r[i]).sum::<f64>();
            assert!(
                row[i] > off && (row[i] - 1.0 - off).abs() < 1e-12,
                "row {i}"
            );
            assert!(row[i + 1..].iter().all(|&x| x == 0.0));
        }
        // Padding: the identity.
        assert!((100..128).all(|i| a[i][i] == 1.0));
    }

    #[test]
    fn parameters_are_validated() {
        let p = |kv: &[(&str, &str)]| {
            let o: Vec<(String, String)> = kv
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            Cholesky::input(&Cholesky::preset(Size::Test).apply(&o).unwrap())
                .map(|i| (i.tree.side(), i.tree.b))
        };
        assert_eq!(
            Cholesky::preset(Size::Paper).to_string(),
            format!("n=4000 nonzeros=40000 b=4 seed={INPUT_SEED}")
        );
        assert_eq!(p(&[("b", "16")]), Ok((128, 16)));
        assert_eq!(p(&[("n", "1"), ("nonzeros", "1")]), Ok((4, 4)));
        assert!(p(&[("b", "5")]).unwrap_err().starts_with("b=5:"));
        assert!(p(&[("n", "0")]).unwrap_err().starts_with("n=0:"));
        assert!(p(&[("n", "2^17")]).unwrap_err().starts_with("n=131072:"));
        assert!(
            p(&[("nonzeros", "99")])
                .unwrap_err()
                .starts_with("nonzeros=99:")
        );
        assert!(p(&[("nonzeros", "2576")]).is_err());
        assert!(p(&[("nonzeros", "2575")]).is_ok());
    }

    #[test]
    fn serial_kernel_matches_dense_cholesky() {
        for (n, nz, b) in [
            (100, 400, 4),
            (64, 300, 8),
            (40, 40, 4),
            (3, 3, 4),
            (90, 600, 16),
        ] {
            let inp = input(n, nz, b);
            let l = serial_factor(&inp);
            let got = dense(&inp, &l);
            let want = dense_cholesky(&dense(&inp, &inp.a));
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                for j in 0..g.len() {
                    assert!(
                        (g[j] - w[j]).abs() < 1e-13,
                        "n={n} b={b} L[{i}][{j}] = {} not {}",
                        g[j],
                        w[j]
                    );
                }
            }
            check_factor(&inp, &l).unwrap();
        }
    }

    /// The serial elision, counting the updates whose target is absent.
    fn absent_targets(m: Matrix<'_>, t: Task) -> usize {
        let here = usize::from(matches!(t.op, Op::Update { r: NIL, .. }));
        let below = plan(m, t).map_or(0, |plan| {
            let tasks: Vec<Task> = plan.phases().flat_map(|p| plan.tasks(p)).collect();
            tasks.into_iter().map(|t| absent_targets(m, t)).sum()
        });
        here + below
    }

    #[test]
    fn updates_may_reach_no_block() {
        // A sparse input has updates whose operands exist but no pair of their quadrants
        // does; the factorisation still matches the dense one (the test above).
        let inp = input(128, 160, 4);
        let work = inp.fresh();
        let m = Matrix {
            tree: &inp.tree,
            blocks: &work,
        };
        assert!(absent_targets(m, root_task(&inp.tree)) > 0);
        check_factor(&inp, &values(&work)).unwrap();
    }

    #[test]
    fn every_variant_checks_and_equals_the_serial_kernel() {
        let pools = testing::Pools::start();
        for inp in [Cholesky::input_at(Size::Test), input(128, 160, 4)] {
            let want = serial_factor(&inp);
            // Each value is computed by the same operations in the same order.
            let equal =
                |what: &str, work: &Vec<Line>, _: &()| assert_eq!(values(work), want, "{what}");
            for _ in 0..3 {
                pools.check_every_variant::<Cholesky>(&inp, equal);
            }
        }
    }

    #[test]
    fn check_rejects_wrong_answers() {
        let inp = Cholesky::input_at(Size::Test);
        let good = serial_factor(&inp);
        let checked = check_factor(&inp, &good).unwrap();
        let residual: f64 = checked
            .answer
            .strip_prefix("relative residual ‖L·Lᵀ·x − A·x‖₂ / ‖A·x‖₂ = ")
            .and_then(|r| r.parse().ok())
            .unwrap_or_else(|| panic!("{checked}"));
        assert!(residual < TOLERANCE, "{checked}");
        assert_eq!(checked.against, format!("the bound {TOLERANCE:e}"));
        let b2 = inp.tree.b * inp.tree.b;
        let corrupt = |f: &dyn Fn(&mut Vec<f64>)| {
            let mut l = good.clone();
            f(&mut l);
            check_factor(&inp, &l)
        };
        // One value off by a little, in the first and the last block.
        assert!(corrupt(&|l| l[0] += 1e-9).is_err());
        assert!(corrupt(&|l| *l.last_mut().unwrap() -= 1e-9).is_err());
        // The upper triangle of the root's first diagonal block written.
        assert!(corrupt(&|l| l[1] = 0.5).is_err());
        // A NaN, an unfactored matrix, a block left as in A.
        assert!(
            corrupt(&|l| l[5] = f64::NAN)
                .unwrap_err()
                .contains("finite")
        );
        assert!(check_factor(&inp, &inp.a).is_err());
        let t = inp.tree.leaf_pos.iter().position(|&(r, c)| r > c).unwrap();
        assert!(
            corrupt(&|l| l[t * b2..(t + 1) * b2].copy_from_slice(&inp.a[t * b2..(t + 1) * b2]))
                .is_err()
        );
        assert!(check_factor(&inp, &good[1..]).is_err());
    }
}
