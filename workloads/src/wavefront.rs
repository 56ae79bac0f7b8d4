//! The tiled wavefront driver shared by `lcs` and `sw`: the fj, sf and gf schedules over a
//! square grid of tiles, on both front-ends, generic over the tile kernel ([`TileKernel`]).
//! Also the rest of what the two workloads share: a dynamic program over the table of two
//! random strings ([`StringTable`]: each workload's own tile kernel, answer and check hash) is a
//! workload ([`TableWorkload`]) whose input ([`TableInput`]) is the strings ([`Strings`], over a
//! 4-letter alphabet) and the serial computation's answer, and whose check compares a run's
//! answer and [`hash_cells`] of its table with the serial ones.
//!
//! # The grid
//!
//! A dynamic-programming table is cut into `nb × nb` tiles; tile `(i, j)` (row `i`, column
//! `j`) may be computed once every tile `(i', j')` with `i' <= i`, `j' <= j` (other than itself)
//! is done: it depends directly on its left `(i, j-1)` and upper `(i-1, j)` neighbours, and
//! through them on the whole upper-left rectangle. Each tile's task computes an owned value
//! (whatever the kernel keeps of the tile: its boundary for `lcs`, all its cells for `sw`) and
//! publishes it in its [`Grid`] slot, a [`OnceLock`]; later tiles read the slots they need. No
//! tile is ever written by two tasks, and the `OnceLock` orders the write before every read,
//! so the table is shared without `unsafe` and without locks. Reading a slot that is still
//! empty is a scheduling bug and panics (every schedule below makes it impossible).
//!
//! # The schedules (the ProWS artifact's, Figure 2's `lcs`/`sw` rows)
//!
//! * **fj** ([`fj`], [`fj_async`]): anti-diagonal wavefronts `d = i + j = 0, 1, …, 2nb-2` in
//!   order; the tiles of a wavefront are spawned by recursive halving (`join`), and the join
//!   of the whole wavefront is the barrier before the next one. Span
//!   `O(nb · (tile + lg nb))`.
//! * **sf** ([`sf`], [`sf_async`]): one parent walks the tiles in wavefront order (within a
//!   wavefront, column `j` ascending, so row `i` descending). Before creating tile `(i, j)`'s
//!   future it touches the future of the tile above, `(i-1, j)`, and, on the last row only, the
//!   one to the left, `(i, j-1)`. Elsewhere the left neighbour `(i, j-1)` is the upper
//!   neighbour of `(i+1, j-1)`, which comes just before in the same wavefront and was touched
//!   there. So every future is touched exactly once, by the parent, after its creation: the
//!   last tile's by the parent at the end. Span `O(nb · tile)` plus the parent's walk.
//! * **gf** ([`gf`], [`gf_async`]): every tile is a multi-touch future whose task touches its
//!   left and upper neighbours itself, then computes. The futures are created by a recursive
//!   spawn tree over the grid's quadrants: create the top-left quadrant, then the top-right
//!   and bottom-left quadrants in parallel (`join`), then the bottom-right one. A tile's
//!   neighbours are in its own quadrant or in one the tree finished creating before, so a
//!   tile's creation always follows its neighbours' creation, in the serial order and in
//!   every parallel execution; each creation reads the neighbours' handles from a slot array
//!   (`OnceLock`s) and moves clones of them into the tile's task. Creation never waits for a
//!   tile to finish, so tiles run as soon as their neighbours are done. The last tile's future
//!   is touched by the root at the end. Span `O(nb · tile)` plus `O(nb^lg 3)` creations.
//!   (The artifact creates the futures with a `cilk_for` over the tiles in row-major order,
//!   where a tile's task may run before a neighbour's future exists; its futures are
//!   preallocated objects. Our handles exist only once created, hence the quadrant tree.)
//!
//! On the `rayon` runtime the gf schedule can deadlock with two or more workers: a tile's task
//! touches futures created by other branches of the spawn tree, and rayon runs other work on
//! top of a waiting task (see `stealbench_schedulers::rayon`). fj and sf are safe there: fj
//! has no futures, and in sf only the parent touches, and only futures it created itself,
//! whose tasks never wait. `tests/every_runtime.rs` skips (rayon, gf); the harness must too.

use crate::params::check_memory;
use crate::rng::SplitMix64;
use crate::{Checked, Params, Size, Variant, Workload, parfor};
use std::fmt::Debug;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};
use stealbench_schedulers::{
    AsyncForkJoin, AsyncShared, AsyncWorker, ForkJoin, FutureForkJoin, FutureHandle, Futures,
    SharedHandle, Worker,
};

/// A tile computation: the kernel of a wavefront workload.
pub trait TileKernel: Sync {
    /// What a finished tile keeps for the tiles after it (its boundary, or its cells).
    type Tile: Send + Sync;

    /// Computes tile `(i, j)`. Every tile `(i', j') != (i, j)` with `i' <= i` and `j' <= j`
    /// is in `grid` already; the kernel reads the ones it needs with [`Grid::get`].
    fn compute(&self, grid: &Grid<Self::Tile>, i: usize, j: usize) -> Self::Tile;
}

/// The `nb × nb` tiles of a table, each published once by the task that computed it.
#[derive(Debug)]
pub struct Grid<T> {
    nb: usize,
    slots: Vec<OnceLock<T>>,
}

impl<T> Grid<T> {
    /// An empty grid of `nb × nb` tiles (`nb >= 1`).
    pub fn new(nb: usize) -> Self {
        assert!(nb >= 1, "a grid needs at least one tile");
        Grid {
            nb,
            slots: (0..nb * nb).map(|_| OnceLock::new()).collect(),
        }
    }

    /// Tiles per side.
    pub fn side(&self) -> usize {
        self.nb
    }

    /// Tile `(i, j)`. Panics if it has not been computed (a dependency the schedule broke).
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> &T {
        self.slots[i * self.nb + j]
            .get()
            .unwrap_or_else(|| panic!("tile ({i}, {j}) read before it was computed"))
    }

    /// Is every tile computed?
    pub fn is_complete(&self) -> bool {
        self.slots.iter().all(|s| s.get().is_some())
    }

    /// Publishes tile `(i, j)`. Panics if it was already published.
    fn put(&self, i: usize, j: usize, tile: T) {
        if self.slots[i * self.nb + j].set(tile).is_err() {
            panic!("tile ({i}, {j}) computed twice");
        }
    }
}

/// Computes tile `(i, j)` and publishes it.
#[inline]
fn run_tile<K: TileKernel>(k: &K, g: &Grid<K::Tile>, i: usize, j: usize) {
    g.put(i, j, k.compute(g, i, j));
}

/// The rows `lo..hi` of the tiles on anti-diagonal `d` of an `nb × nb` grid.
fn wave_rows(nb: usize, d: usize) -> (usize, usize) {
    (d.saturating_sub(nb - 1), d.min(nb - 1) + 1)
}

/// Serial row-major order, no runtime: the reference answer of `input()`.
pub fn serial<K: TileKernel>(k: &K, g: &Grid<K::Tile>) {
    let nb = g.side();
    for i in 0..nb {
        for j in 0..nb {
            run_tile(k, g, i, j);
        }
    }
}

/// The kernel: the serial elision of [`fj`] as a plain function (ProWS's serial elision of
/// its fork-join version): wavefront after wavefront, the tiles of each in row order, no
/// runtime.
pub fn serial_waves<K: TileKernel>(k: &K, g: &Grid<K::Tile>) {
    let nb = g.side();
    for d in 0..2 * nb - 1 {
        let (lo, hi) = wave_rows(nb, d);
        for i in lo..hi {
            run_tile(k, g, i, d - i);
        }
    }
}

/// Runs `variant` (fj, sf or gf) of the tiled wavefront over `g` on `pool`: the timed part of
/// every wavefront workload. `name` is the workload's, for the panic on another variant.
pub fn run_variant<S: FutureForkJoin, K: TileKernel>(
    pool: &S,
    name: &str,
    variant: Variant,
    k: &K,
    g: &Grid<K::Tile>,
) {
    match variant {
        Variant::Fj => pool.run(|w| fj(w, k, g)),
        Variant::Sf => pool.run(|w| sf(w, k, g)),
        Variant::Gf => pool.run(|w| gf(w, k, g)),
        v => panic!("{name} has no {v} variant"),
    }
}

/// [`run_variant`] on the async front-end.
pub fn run_variant_async<S: AsyncForkJoin, K: TileKernel>(
    pool: &S,
    name: &str,
    variant: Variant,
    k: &K,
    g: &Grid<K::Tile>,
) {
    match variant {
        Variant::Fj => pool.run_async(|c| fj_async(c, k, g)),
        Variant::Sf => pool.run_async(|c| sf_async(c, k, g)),
        Variant::Gf => pool.run_async(|c| gf_async(c, k, g)),
        v => panic!("{name} has no async {v} variant"),
    }
}

/// Fork-join: wavefront after wavefront, the tiles of each by recursive halving.
pub fn fj<W: Worker, K: TileKernel>(w: &W, k: &K, g: &Grid<K::Tile>) {
    let nb = g.side();
    for d in 0..2 * nb - 1 {
        let (lo, hi) = wave_rows(nb, d);
        parfor::fj(w, lo..hi, &|_, i| run_tile(k, g, i, d - i));
    }
}

/// Visits the tiles in the sf parent's order, calling `visit(i, j, touches)` where `touches`
/// lists the tiles whose futures the parent touches before creating `(i, j)`'s.
fn sf_order(nb: usize, mut visit: impl FnMut(usize, usize, [Option<usize>; 2])) {
    for d in 0..2 * nb - 1 {
        let (lo, hi) = wave_rows(nb, d);
        // Column ascending = row descending: (i+1, j-1) comes before (i, j).
        for i in (lo..hi).rev() {
            let j = d - i;
            let left = (i == nb - 1 && j > 0).then(|| i * nb + j - 1);
            let up = (i > 0).then(|| (i - 1) * nb + j);
            visit(i, j, [left, up]);
        }
    }
}

/// Structured futures: the parent walks the wavefronts, touching each future exactly once.
pub fn sf<W: Futures, K: TileKernel>(w: &W, k: &K, g: &Grid<K::Tile>) {
    w.scope(|s, w| sf_walk(s, w, k, g));
}

/// The parent of [`sf`] inside its scope.
fn sf_walk<'s, W: Futures, K: TileKernel>(s: &W::Scope<'s>, w: &W, k: &'s K, g: &'s Grid<K::Tile>) {
    let nb = g.side();
    let mut futures: Vec<Option<W::Future<'s, ()>>> = (0..nb * nb).map(|_| None).collect();
    sf_order(nb, |i, j, touches| {
        for t in touches.into_iter().flatten() {
            let f = futures[t].take();
            f.expect("each future is touched once").get(w);
        }
        futures[i * nb + j] = Some(w.future(s, move |_, _| run_tile(k, g, i, j)));
    });
    let last = futures[nb * nb - 1].take();
    last.expect("the last tile's future").get(w);
    debug_assert!(futures.iter().all(Option::is_none));
}

/// General futures: a quadrant spawn tree creates every tile's future; each tile touches its
/// left and upper neighbours itself.
pub fn gf<W: Futures, K: TileKernel>(w: &W, k: &K, g: &Grid<K::Tile>) {
    let nb = g.side();
    w.scope(|s, w| {
        let slots: Vec<OnceLock<_>> = (0..nb * nb).map(|_| OnceLock::new()).collect();
        gf_tree(s, w, k, g, &slots, (0, nb), (0, nb));
        slots[nb * nb - 1].get().expect("last tile created").get(w);
    });
}

/// Splits `lo..hi` into a first half (the larger) and a second (maybe empty).
fn halves((lo, hi): (usize, usize)) -> [(usize, usize); 2] {
    let mid = lo + (hi - lo).div_ceil(2);
    [(lo, mid), (mid, hi)]
}

/// Creates the futures of the tiles in `rows × cols`, whose left and upper neighbours outside
/// it have been created.
#[allow(clippy::type_complexity)]
fn gf_tree<'s, W: Futures, K: TileKernel>(
    s: &W::Scope<'s>,
    w: &W,
    k: &'s K,
    g: &'s Grid<K::Tile>,
    slots: &[OnceLock<W::SharedFuture<'s, ()>>],
    rows: (usize, usize),
    cols: (usize, usize),
) {
    if rows.0 == rows.1 || cols.0 == cols.1 {
        return;
    }
    if rows.1 - rows.0 == 1 && cols.1 - cols.0 == 1 {
        let (i, j, nb) = (rows.0, cols.0, g.side());
        let neighbour = |t: usize| slots[t].get().expect("neighbour created first").clone();
        let left = (j > 0).then(|| neighbour(i * nb + j - 1));
        let up = (i > 0).then(|| neighbour((i - 1) * nb + j));
        let f = w.shared_future(s, move |_, w| {
            for n in [left, up].iter().flatten() {
                n.get(w);
            }
            run_tile(k, g, i, j);
        });
        if slots[i * nb + j].set(f).is_err() {
            panic!("tile ({i}, {j}) created twice");
        }
        return;
    }
    let [r0, r1] = halves(rows);
    let [c0, c1] = halves(cols);
    gf_tree(s, w, k, g, slots, r0, c0);
    w.join(
        |w| gf_tree(s, w, k, g, slots, r0, c1),
        |w| gf_tree(s, w, k, g, slots, r1, c0),
    );
    gf_tree(s, w, k, g, slots, r1, c1);
}

/// Fork-join on the async front-end: wavefront after wavefront, each by recursive halving
/// ([`AsyncWorker::join`]).
pub fn fj_async<'s, C: AsyncWorker<'s>, K: TileKernel>(
    c: C,
    k: &'s K,
    g: &'s Grid<K::Tile>,
) -> impl Future<Output = ()> + Send + 's {
    async move {
        let nb = g.side();
        for d in 0..2 * nb - 1 {
            let (lo, hi) = wave_rows(nb, d);
            let tile = move |_, i| async move { run_tile(k, g, i, d - i) };
            parfor::fj_async(c.clone(), lo..hi, tile).await;
        }
    }
}

/// Structured futures on the async front-end: the sf walk, each tile a spawned task awaited
/// exactly once by the parent.
pub fn sf_async<'s, C: AsyncWorker<'s>, K: TileKernel>(
    c: C,
    k: &'s K,
    g: &'s Grid<K::Tile>,
) -> impl Future<Output = ()> + Send + 's {
    async move {
        let nb = g.side();
        let mut order = Vec::with_capacity(nb * nb);
        sf_order(nb, |i, j, touches| order.push((i, j, touches)));
        let mut handles: Vec<Option<C::Handle<()>>> = (0..nb * nb).map(|_| None).collect();
        for (i, j, touches) in order {
            for t in touches.into_iter().flatten() {
                handles[t]
                    .take()
                    .expect("each future is touched once")
                    .await;
            }
            let h = c.spawn(move |_| async move { run_tile(k, g, i, j) }).await;
            handles[i * nb + j] = Some(h);
        }
        let last = handles[nb * nb - 1].take();
        last.expect("the last tile's future").await;
    }
}

/// General futures on the async front-end: the quadrant spawn tree of [`gf`] with
/// [`AsyncWorker::spawn_shared`] tiles, each awaiting its left and upper neighbours.
pub fn gf_async<'s, C: AsyncWorker<'s>, K: TileKernel>(
    c: C,
    k: &'s K,
    g: &'s Grid<K::Tile>,
) -> impl Future<Output = ()> + Send + 's {
    async move {
        let nb = g.side();
        let slots: Arc<[OnceLock<C::Shared<()>>]> = (0..nb * nb).map(|_| OnceLock::new()).collect();
        let tree = Arc::clone(&slots);
        c.call(move |c| gf_tree_async(c, k, g, tree, (0, nb), (0, nb)))
            .await;
        let last = slots[nb * nb - 1].get().expect("last tile created").clone();
        last.get().await;
    }
}

/// The async quadrant spawn tree over `rows × cols`.
#[allow(clippy::type_complexity)]
fn gf_tree_async<'s, C: AsyncWorker<'s>, K: TileKernel>(
    c: C,
    k: &'s K,
    g: &'s Grid<K::Tile>,
    slots: Arc<[OnceLock<C::Shared<()>>]>,
    rows: (usize, usize),
    cols: (usize, usize),
) -> impl Future<Output = ()> + Send + 's {
    async move {
        if rows.0 == rows.1 || cols.0 == cols.1 {
            return;
        }
        if rows.1 - rows.0 == 1 && cols.1 - cols.0 == 1 {
            let (i, j, nb) = (rows.0, cols.0, g.side());
            let neighbour = |t: usize| slots[t].get().expect("neighbour created first").clone();
            let left = (j > 0).then(|| neighbour(i * nb + j - 1));
            let up = (i > 0).then(|| neighbour((i - 1) * nb + j));
            let f = c
                .spawn_shared(move |_| async move {
                    for n in [left, up].iter().flatten() {
                        n.get().await;
                    }
                    run_tile(k, g, i, j);
                })
                .await;
            if slots[i * nb + j].set(f).is_err() {
                panic!("tile ({i}, {j}) created twice");
            }
            return;
        }
        let [r0, r1] = halves(rows);
        let [c0, c1] = halves(cols);
        let s = Arc::clone(&slots);
        c.call(move |c| gf_tree_async(c, k, g, s, r0, c0)).await;
        let (s1, s2) = (Arc::clone(&slots), Arc::clone(&slots));
        c.join(
            move |c| gf_tree_async(c, k, g, s1, r0, c1),
            move |c| gf_tree_async(c, k, g, s2, r1, c0),
        )
        .await;
        c.call(move |c| gf_tree_async(c, k, g, slots, r1, c1)).await;
    }
}

/// Letters of the strings' alphabet.
pub const ALPHABET: u64 = 4;

/// A random string of `n` letters in `0..ALPHABET`.
pub fn random_string(rng: &mut SplitMix64, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.below(ALPHABET) as u8).collect()
}

/// A 64-bit hash of a sequence of cells (SplitMix64's finaliser over a running state).
pub fn hash_cells(cells: impl IntoIterator<Item = u64>) -> u64 {
    let mut h = 0x6A09_E667_F3BC_C909u64;
    for c in cells {
        let mut z = (h ^ c).wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        h = z ^ (z >> 31);
    }
    h
}

/// A dynamic program over the `(n+1) × (n+1)` table of two strings, computed in `b × b` tiles
/// by the wavefront: what a workload of [`TableWorkload`] has of its own.
pub trait StringTable: 'static {
    /// As [`Workload::NAME`].
    const NAME: &'static str;
    /// As [`Workload::DESCRIPTION`].
    const DESCRIPTION: &'static str;
    /// The seed of the presets' strings.
    const SEED: u64;
    /// What [`StringTable::hash`] covers, for messages (`every cell`).
    const HASHED: &'static str;
    /// What a finished tile keeps for the tiles after it.
    type Tile: Send + Sync;
    /// The answer, read from a complete grid.
    type Answer: Copy + Eq + Debug + Send + Sync;

    /// `(n, b)` of a size preset.
    fn dims(size: Size) -> (usize, usize);
    /// The cells (4 bytes each) that a finished tile of side `b` keeps on the heap: with the
    /// tile count, the memory of a grid. A real number, so that no product overflows.
    fn tile_cells(b: usize) -> f64;
    /// Computes tile `(i, j)` of the table of `strings` ([`TileKernel::compute`]).
    fn tile(strings: &Strings, grid: &Grid<Self::Tile>, i: usize, j: usize) -> Self::Tile;
    /// The answer read from a complete grid: the last step of the timed run.
    fn answer(grid: &Grid<Self::Tile>) -> Self::Answer;
    /// The hash of a complete grid (of [`StringTable::HASHED`]) that the check compares with
    /// the serial computation's.
    fn hash(grid: &Grid<Self::Tile>) -> u64;
    /// The answer in words (`LCS length 9876`).
    fn describe(answer: &Self::Answer) -> String;
}

/// Two random strings of length `n` tiled by `b` (`b` divides `n`).
#[derive(Debug, Clone)]
pub struct Strings {
    /// String length.
    pub n: usize,
    /// Tile side (divides `n`).
    pub b: usize,
    /// The first string (row letters), values in `0..ALPHABET`.
    pub x: Vec<u8>,
    /// The second string (column letters).
    pub y: Vec<u8>,
}

impl Strings {
    /// Seeded strings of length `n` tiled by `b`.
    ///
    /// # Panics
    /// Unless `b ≥ 1` divides `n`.
    pub fn random(n: usize, b: usize, seed: u64) -> Self {
        assert!(
            b >= 1 && n >= b && n.is_multiple_of(b),
            "n={n} must be a multiple of b={b}"
        );
        let mut rng = SplitMix64::new(seed);
        let x = random_string(&mut rng, n);
        let y = random_string(&mut rng, n);
        Strings { n, b, x, y }
    }

    /// Tiles per side.
    pub fn tiles(&self) -> usize {
        self.n / self.b
    }
}

/// The tile kernel of table `T` over borrowed strings.
#[derive(Debug)]
pub struct Kernel<'a, T> {
    strings: &'a Strings,
    table: PhantomData<fn() -> T>,
}

impl<T: StringTable> TileKernel for Kernel<'_, T> {
    type Tile = T::Tile;

    fn compute(&self, grid: &Grid<T::Tile>, i: usize, j: usize) -> T::Tile {
        T::tile(self.strings, grid, i, j)
    }
}

/// The input of table `T`: the strings, and the serial computation's answer and hash.
#[derive(Debug)]
pub struct TableInput<T: StringTable> {
    /// The strings.
    pub strings: Strings,
    /// The answer of the serial computation.
    pub expected: T::Answer,
    /// [`StringTable::hash`] of the serial computation's grid.
    pub expected_hash: u64,
}

impl<T: StringTable> TableInput<T> {
    /// Seeded strings of length `n` tiled by `b`, with the serial answer (row-major tile
    /// order, no runtime).
    ///
    /// # Panics
    /// Unless `b ≥ 1` divides `n`.
    pub fn new(n: usize, b: usize, seed: u64) -> Self {
        let strings = Strings::random(n, b, seed);
        let g = Grid::new(strings.tiles());
        serial(&Kernel::<T>::over(&strings), &g);
        TableInput {
            expected: T::answer(&g),
            expected_hash: T::hash(&g),
            strings,
        }
    }

    /// The tile kernel over this input.
    pub fn kernel(&self) -> Kernel<'_, T> {
        Kernel::over(&self.strings)
    }
}

impl<'a, T> Kernel<'a, T> {
    /// The kernel over `strings`.
    fn over(strings: &'a Strings) -> Self {
        Kernel {
            strings,
            table: PhantomData,
        }
    }
}

/// The workload of table `T`: the fj, sf and gf wavefronts on both front-ends; the check
/// compares the answer and [`StringTable::hash`] with the serial computation's.
#[derive(Debug)]
pub struct TableWorkload<T>(PhantomData<fn() -> T>);

impl<T: StringTable> Workload for TableWorkload<T> {
    const NAME: &'static str = T::NAME;
    const DESCRIPTION: &'static str = T::DESCRIPTION;
    const VARIANTS: &'static [Variant] = &[Variant::Fj, Variant::Sf, Variant::Gf];
    const ASYNC_VARIANTS: &'static [Variant] = &[Variant::Fj, Variant::Sf, Variant::Gf];

    type Input = TableInput<T>;
    type Work = Grid<T::Tile>;
    type Answer = T::Answer;

    fn preset(size: Size) -> Params {
        let (n, b) = T::dims(size);
        Params::new()
            .int("n", n as u64)
            .int("b", b as u64)
            .int("seed", T::SEED)
    }

    fn input(params: &Params) -> Result<TableInput<T>, String> {
        let (n, b) = tiling(params)?;
        // The strings, and one grid at a time: the serial computation's, then a repetition's.
        let tiles = (n / b) as f64;
        let tile = size_of::<OnceLock<T::Tile>>() as f64 + 4.0 * T::tile_cells(b);
        check_memory(
            &format!("n={n} b={b}"),
            2.0 * n as f64 + tiles * tiles * tile,
        )?;
        Ok(TableInput::new(n, b, params.get_int("seed")))
    }

    fn prepare(input: &TableInput<T>) -> Grid<T::Tile> {
        Grid::new(input.strings.tiles())
    }

    fn run<S: ForkJoin>(
        pool: &S,
        variant: Variant,
        input: &TableInput<T>,
        g: &mut Grid<T::Tile>,
    ) -> T::Answer {
        match variant {
            Variant::Fj => pool.run(|w| fj(w, &input.kernel(), g)),
            v => crate::not_without_futures::<Self>(v),
        }
        T::answer(g)
    }

    fn run_futures<S: FutureForkJoin>(
        pool: &S,
        variant: Variant,
        input: &TableInput<T>,
        g: &mut Grid<T::Tile>,
    ) -> T::Answer {
        run_variant(pool, T::NAME, variant, &input.kernel(), g);
        T::answer(g)
    }

    fn run_async<S: AsyncForkJoin>(
        pool: &S,
        variant: Variant,
        input: &TableInput<T>,
        g: &mut Grid<T::Tile>,
    ) -> T::Answer {
        run_variant_async(pool, T::NAME, variant, &input.kernel(), g);
        T::answer(g)
    }

    fn kernel(input: &TableInput<T>, g: &mut Grid<T::Tile>) -> T::Answer {
        serial_waves(&input.kernel(), g);
        T::answer(g)
    }

    fn check(
        input: &TableInput<T>,
        g: &Grid<T::Tile>,
        answer: &T::Answer,
    ) -> Result<Checked, String> {
        let Strings { n, b, .. } = input.strings;
        if *answer != input.expected {
            return Err(format!(
                "{} n={n} b={b}: {answer:?}, expected {:?}",
                T::NAME,
                input.expected
            ));
        }
        if !g.is_complete() || T::hash(g) != input.expected_hash {
            return Err(format!(
                "{} n={n} b={b}: the hash of {} differs from the serial computation's",
                T::NAME,
                T::HASHED
            ));
        }
        Ok(Checked::new(
            T::describe(answer),
            format!("the serial computation's answer and hash of {}", T::HASHED),
        ))
    }
}

/// `(n, b)` of a table's parameters; `Err` unless `b ≥ 1` divides `n`.
fn tiling(params: &Params) -> Result<(usize, usize), String> {
    let (n, b) = (params.get_usize("n")?, params.get_usize("b")?);
    if b >= 1 && n >= b && n % b == 0 {
        Ok((n, b))
    } else {
        Err(format!(
            "n={n} b={b}: n must be a positive multiple of the tile side b"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stealbench_schedulers::rayon::RayonPool;
    use stealbench_schedulers::serial::Serial;
    use stealbench_schedulers::tokio::TokioPool;
    use stealbench_schedulers::{AsyncForkJoin, ForkJoin, PoolConfig, Scheduler};

    /// A kernel that checks the dependency rule itself: tile `(i, j)` is the number of
    /// monotone lattice paths from the corner, `C(i + j, i)`, computed from its neighbours
    /// (which must be there: [`Grid::get`] panics otherwise), and it records that its whole
    /// upper-left rectangle was done.
    struct Paths;

    impl TileKernel for Paths {
        type Tile = u64;
        fn compute(&self, g: &Grid<u64>, i: usize, j: usize) -> u64 {
            for i2 in 0..=i {
                for j2 in 0..=j {
                    if (i2, j2) != (i, j) {
                        g.get(i2, j2);
                    }
                }
            }
            match (i, j) {
                (0, _) | (_, 0) => 1,
                _ => g.get(i - 1, j) + g.get(i, j - 1),
            }
        }
    }

    fn binomial(n: u64, k: u64) -> u64 {
        (0..k).fold(1, |acc, t| acc * (n - t) / (t + 1))
    }

    fn assert_paths(g: &Grid<u64>) {
        let nb = g.side();
        assert!(g.is_complete());
        for i in 0..nb {
            for j in 0..nb {
                assert_eq!(
                    *g.get(i, j),
                    binomial((i + j) as u64, i as u64),
                    "({i}, {j})"
                );
            }
        }
    }

    #[test]
    fn sf_touches_every_future_once_after_its_creation() {
        for nb in 1..8 {
            let mut created = vec![false; nb * nb];
            let mut touched = vec![0; nb * nb];
            sf_order(nb, |i, j, touches| {
                for t in touches.into_iter().flatten() {
                    assert!(created[t]);
                    touched[t] += 1;
                }
                // Both neighbours are created and touched (left maybe for (i+1, j-1)).
                if j > 0 {
                    assert_eq!(touched[i * nb + j - 1], 1, "left of ({i}, {j})");
                }
                if i > 0 {
                    assert_eq!(touched[(i - 1) * nb + j], 1, "up of ({i}, {j})");
                }
                created[i * nb + j] = true;
            });
            touched[nb * nb - 1] += 1;
            assert!(touched.iter().all(|&t| t == 1), "nb={nb}");
        }
    }

    #[test]
    fn every_schedule_respects_the_dependencies() {
        let serial = crate::testing::serial();
        let rayon = RayonPool::start(&PoolConfig::with_workers(2)).unwrap();
        let tokio = TokioPool::start(&PoolConfig::with_workers(2)).unwrap();
        for nb in [1, 2, 3, 7, 8] {
            let g = Grid::new(nb);
            super::serial(&Paths, &g);
            assert_paths(&g);
            type Sched = fn(&Serial, &Grid<u64>);
            let on_serial: [Sched; 3] = [
                |p, g| p.run(|w| fj(w, &Paths, g)),
                |p, g| p.run(|w| sf(w, &Paths, g)),
                |p, g| p.run(|w| gf(w, &Paths, g)),
            ];
            for f in on_serial {
                let g = Grid::new(nb);
                f(&serial, &g);
                assert_paths(&g);
            }
            for gfv in [false, true] {
                let g = Grid::new(nb);
                if gfv {
                    serial.run_async(|c| gf_async(c, &Paths, &g));
                } else {
                    serial.run_async(|c| fj_async(c, &Paths, &g));
                }
                assert_paths(&g);
            }
            let g = Grid::new(nb);
            rayon.run(|w| fj(w, &Paths, &g));
            assert_paths(&g);
            let g = Grid::new(nb);
            rayon.run(|w| sf(w, &Paths, &g));
            assert_paths(&g);
            let g = Grid::new(nb);
            tokio.run_async(|c| fj_async(c, &Paths, &g));
            assert_paths(&g);
            let g = Grid::new(nb);
            tokio.run_async(|c| sf_async(c, &Paths, &g));
            assert_paths(&g);
            let g = Grid::new(nb);
            tokio.run_async(|c| gf_async(c, &Paths, &g));
            assert_paths(&g);
            let g = Grid::new(nb);
            serial.run_async(|c| sf_async(c, &Paths, &g));
            assert_paths(&g);
        }
    }

    #[test]
    #[should_panic(expected = "read before it was computed")]
    fn reading_a_missing_tile_panics() {
        let g: Grid<u64> = Grid::new(2);
        Paths.compute(&g, 1, 1);
    }
}
