//! `bst`: the pipelined merge of two binary search trees of Blelloch and Reid-Miller
//! ("Pipelining with futures", SPAA 1997), as in ProWS Figure 2.
//!
//! # Algorithm
//!
//! `merge(t1, t2)`: if either tree is empty, the other; otherwise split `t2` around the key of
//! `t1`'s root into `l` (smaller keys) and `r` (the others), merge `t1.left` with `l` and
//! `t1.right` with `r` in parallel, and hang the two results under `t1`'s root. `split` walks
//! one path of `t2`, relinking its nodes into the two halves.
//!
//! * `fj`: split completely, then the two merges under `join`.
//! * `gf`: the pipelined version. `split` does one step and returns at once: the half that
//!   keeps the current node is that node with one child being a *future* (the rest of the
//!   split), the other half is that future itself. As in the paper's artifact, only the first
//!   [`SPLIT_FUTURES`] (5) steps down a split's path make futures; the rest of the path is
//!   split in place by the task that reaches it. The two merges start while the split is
//!   still descending and touch the futures they meet. A split future is touched once per
//!   half, by whichever task consumes that half: a merge below, or the next split or
//!   materialisation reaching the node holding it. Those are often neither the future's
//!   creator nor its descendants (the spawned left merge touches its parent's split; a split
//!   task touches the futures of the split it follows), so these are general futures. Of the
//!   two merges the left one is spawned, the right one called; each writes its result under
//!   `t1`'s root, and the scope's end waits for all of them. Because these touches come from
//!   outside the future's subtree, rayon (whose touch helps instead of suspending) can hang on
//!   `gf` with P >= 2; the test suite skips (rayon, gf).
//!
//! Both variants are parallel only in the top [`PAR_DEPTH`] (5) levels of the merge recursion,
//! as the paper's artifact ("we had to limit the parallel recursion depth (to depth 5)");
//! below, the serial [`merge_serial`] runs (for `gf` after materialising its part of `t2`:
//! writing the links the futures produced into the arena, touching them). The serial elision
//! is [`merge_serial`] from the root (= `fj` on one worker).
//!
//! # Trees and sharing
//!
//! The `s1 + s2` nodes live in one [`Arena`]: tree 1 is nodes `0..s1`, tree 2 nodes
//! `s1..s1+s2`, links are `u32` indices ([`NIL`] for none). The merge relinks nodes but never
//! moves or allocates them (the `gf` variant allocates the future cells and the nodes of the
//! pipelined spines, a few thousand). Tasks work on disjoint subtrees, but the async
//! front-end cannot hand out `&mut` parts of one arena and rejoin them (see `mm`, `sort`), so
//! links are `AtomicU32` read and written with `Relaxed` loads and stores (plain moves on
//! x86-64 and AArch64); the join, scope end, touch or await that orders two tasks orders their
//! accesses. No lock, no `unsafe`.
//!
//! # Keys and duplicates
//!
//! Keys are uniform in `0..=16384` (the artifact's `rand() % 16385`), so with 12·10⁶ nodes each
//! key occurs about 730 times. Inserting equal keys always on one side would string the ~500
//! copies of a key of tree 1 on one path (height ~500, building and merging quadratic in the
//! multiplicity), which the paper's serial time (3.3 s for 12·10⁶ nodes) rules out. So equal
//! keys are ordered by a tiebreak: a node's [`Node::key`] is `key·2^32 + tie`, where `tie` is a
//! fixed bijective mix of the node's index, so all keys are distinct and each tree is exactly
//! the random BST of its insertion sequence (height O(log n)). Trees are built by inserting
//! their keys in order; [`build`] builds that same tree in O(n log n) as the Cartesian tree of
//! (key, insertion time), and a test checks it against plain insertion.
//!
//! # Check
//!
//! The in-order key sequence of the merged tree (walked iteratively, at most `s1 + s2` nodes,
//! so a cycle or a lost node is caught) must equal the sorted keys of both inputs, computed in
//! `input`: that makes it a valid BST of exactly the input nodes.

use crate::params::check_memory;
use crate::rng::SplitMix64;
use crate::{Checked, Params, Size, Variant, Workload};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use stealbench_schedulers::{
    AsyncForkJoin, AsyncShared, AsyncWorker, ForkJoin, FutureForkJoin, Futures, Scope,
    SharedHandle, Worker,
};

/// The workload marker type.
#[derive(Debug)]
pub struct Bst;

/// The empty link.
pub const NIL: u32 = u32::MAX;

/// Keys are uniform in `0..KEYS` (`rand() % 16385`).
pub const KEYS: u64 = 16385;

/// The merge is parallel (and `gf` uses futures) in this many top levels of its recursion.
pub const PAR_DEPTH: usize = 5;

/// The steps of a split path that make a future (`gf`), as the paper's artifact: a split
/// hands out its rest as a future for its first 5 steps, then splits the rest in place.
pub const SPLIT_FUTURES: usize = 5;

/// A tree node: its key (never changes) and its two links.
#[derive(Debug)]
pub struct Node {
    /// `key·2^32 + tie` (module docs): the key is `self.key >> 32`.
    pub key: u64,
    left: AtomicU32,
    right: AtomicU32,
}

/// The nodes of both trees; links are indices into it.
#[derive(Debug, Default)]
pub struct Arena {
    nodes: Vec<Node>,
}

impl Clone for Arena {
    fn clone(&self) -> Self {
        Arena {
            nodes: self
                .nodes
                .iter()
                .map(|n| Node {
                    key: n.key,
                    left: AtomicU32::new(n.left.load(Relaxed)),
                    right: AtomicU32::new(n.right.load(Relaxed)),
                })
                .collect(),
        }
    }
}

impl Arena {
    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the arena has no node.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The key of node `i`.
    #[inline]
    pub fn key(&self, i: u32) -> u64 {
        self.nodes[i as usize].key
    }

    /// The left link of node `i`.
    #[inline]
    pub fn left(&self, i: u32) -> u32 {
        self.nodes[i as usize].left.load(Relaxed)
    }

    /// The right link of node `i`.
    #[inline]
    pub fn right(&self, i: u32) -> u32 {
        self.nodes[i as usize].right.load(Relaxed)
    }

    #[inline]
    fn set_left(&self, i: u32, v: u32) {
        self.nodes[i as usize].left.store(v, Relaxed);
    }

    #[inline]
    fn set_right(&self, i: u32, v: u32) {
        self.nodes[i as usize].right.store(v, Relaxed);
    }

    /// Appends unlinked nodes with these keys; returns the index of the first.
    fn push_keys(&mut self, keys: &[u64]) -> u32 {
        let first = self.nodes.len();
        assert!(first + keys.len() < NIL as usize, "too many nodes");
        self.nodes.extend(keys.iter().map(|&key| Node {
            key,
            left: AtomicU32::new(NIL),
            right: AtomicU32::new(NIL),
        }));
        first as u32
    }
}

/// The tiebreak of node `i`: a bijective mix of `i` (MurmurHash3's finaliser), so that keys
/// are distinct and equal keys are ordered independently of their insertion order.
fn tie(i: u32) -> u32 {
    let mut h = i;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// Builds, over the nodes `first..first+len` of `a` (inserted in index order), the BST that
/// inserting their keys one by one into an empty tree gives, and returns its root. That tree
/// is the Cartesian tree of (key, insertion time): built in one stack pass over the nodes in
/// key order. Keys must be distinct.
pub fn build(a: &Arena, first: u32, len: usize) -> u32 {
    let mut order: Vec<(u64, u32)> = (first..first + len as u32).map(|i| (a.key(i), i)).collect();
    order.sort_unstable();
    let mut spine: Vec<u32> = Vec::new();
    for &(_, i) in &order {
        let mut last = NIL;
        while let Some(&top) = spine.last() {
            if top < i {
                break;
            }
            last = top;
            spine.pop();
        }
        a.set_left(i, last);
        if let Some(&top) = spine.last() {
            a.set_right(top, i);
        }
        spine.push(i);
    }
    spine.first().copied().unwrap_or(NIL)
}

/// Builds by plain insertion, one key after the other (the reference for [`build`]).
pub fn build_by_insertion(a: &Arena, first: u32, len: usize) -> u32 {
    let mut root = NIL;
    for i in first..first + len as u32 {
        if root == NIL {
            root = i;
            continue;
        }
        let k = a.key(i);
        let mut t = root;
        loop {
            let next = if k < a.key(t) { a.left(t) } else { a.right(t) };
            if next != NIL {
                t = next;
            } else if k < a.key(t) {
                a.set_left(t, i);
                break;
            } else {
                a.set_right(t, i);
                break;
            }
        }
    }
    root
}

/// Splits the tree at `t` around `k`: returns the roots of the nodes with keys `< k` and of
/// the others, relinking the nodes of the one path walked (iteratively).
pub fn split(a: &Arena, mut t: u32, k: u64) -> (u32, u32) {
    let (mut l_root, mut r_root) = (NIL, NIL);
    // The last node put in each half: its right (left half) or left (right half) link is open.
    let (mut l_tail, mut r_tail) = (NIL, NIL);
    while t != NIL {
        if a.key(t) < k {
            if l_tail == NIL {
                l_root = t;
            } else {
                a.set_right(l_tail, t);
            }
            l_tail = t;
            t = a.right(t);
        } else {
            if r_tail == NIL {
                r_root = t;
            } else {
                a.set_left(r_tail, t);
            }
            r_tail = t;
            t = a.left(t);
        }
    }
    if l_tail != NIL {
        a.set_right(l_tail, NIL);
    }
    if r_tail != NIL {
        a.set_left(r_tail, NIL);
    }
    (l_root, r_root)
}

/// The kernel: the serial merge, the serial elision of both variants. Returns the root.
pub fn merge_serial(a: &Arena, t1: u32, t2: u32) -> u32 {
    if t1 == NIL {
        return t2;
    }
    if t2 == NIL {
        return t1;
    }
    let (l, r) = split(a, t2, a.key(t1));
    let ml = merge_serial(a, a.left(t1), l);
    let mr = merge_serial(a, a.right(t1), r);
    a.set_left(t1, ml);
    a.set_right(t1, mr);
    t1
}

/// Fork-join: split completely, then the two merges under `join`, in the top [`PAR_DEPTH`]
/// levels; [`merge_serial`] below.
pub fn fj<W: Worker>(w: &W, a: &Arena, t1: u32, t2: u32, depth: usize) -> u32 {
    if depth >= PAR_DEPTH || t1 == NIL || t2 == NIL {
        return merge_serial(a, t1, t2);
    }
    let (l, r) = split(a, t2, a.key(t1));
    let (l1, r1) = (a.left(t1), a.right(t1));
    let (ml, mr) = w.join(
        |w| fj(w, a, l1, l, depth + 1),
        |w| fj(w, a, r1, r, depth + 1),
    );
    a.set_left(t1, ml);
    a.set_right(t1, mr);
    t1
}

/// Which half of a split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    /// The keys below the split key.
    Left,
    /// The others.
    Right,
}

/// A tree of the pipelined merge (closure front-end): a finished subtree of the arena, a node
/// whose links are pipelined trees, or one half of a split still (possibly) running.
enum GTree<'s, W: Futures> {
    Plain(u32),
    Node(Arc<GNode<'s, W>>),
    Half(W::SharedFuture<'s, GHalves<'s, W>>, Side),
}

/// A node rebuilt by a pipelined split step.
struct GNode<'s, W: Futures> {
    node: u32,
    left: GTree<'s, W>,
    right: GTree<'s, W>,
}

/// The two halves a pipelined split step returns.
type GHalves<'s, W> = (GTree<'s, W>, GTree<'s, W>);

impl<'s, W: Futures> Clone for GTree<'s, W> {
    fn clone(&self) -> Self {
        match self {
            GTree::Plain(i) => GTree::Plain(*i),
            GTree::Node(g) => GTree::Node(Arc::clone(g)),
            GTree::Half(f, side) => GTree::Half(f.clone(), *side),
        }
    }
}

/// One half of a pair.
fn pick<T>(halves: &(T, T), side: Side) -> &T {
    match side {
        Side::Left => &halves.0,
        Side::Right => &halves.1,
    }
}

/// The root of a pipelined tree with its two subtrees (touching futures until the root is
/// known), or `None` for the empty tree.
#[allow(clippy::type_complexity)]
fn force<'s, W: Futures>(
    a: &Arena,
    w: &W,
    mut t: GTree<'s, W>,
) -> Option<(u32, GTree<'s, W>, GTree<'s, W>)> {
    loop {
        t = match t {
            GTree::Plain(NIL) => return None,
            GTree::Plain(i) => return Some((i, GTree::Plain(a.left(i)), GTree::Plain(a.right(i)))),
            GTree::Node(g) => return Some((g.node, g.left.clone(), g.right.clone())),
            GTree::Half(f, side) => pick(f.get(w), side).clone(),
        }
    }
}

/// One pipelined split step of the forced tree `(node, left, right)` around `k`, `level`
/// steps down the split's path: the rest of the split is a future whose two halves are handed
/// out at once; from [`SPLIT_FUTURES`] steps down, the rest is split in place.
fn split_gf<'s, W: Futures>(
    sc: &W::Scope<'s>,
    w: &W,
    a: &'s Arena,
    forced: Option<(u32, GTree<'s, W>, GTree<'s, W>)>,
    k: u64,
    level: usize,
) -> GHalves<'s, W> {
    let Some((node, left, right)) = forced else {
        return (GTree::Plain(NIL), GTree::Plain(NIL));
    };
    if level >= SPLIT_FUTURES {
        let t = materialize(a, w, GTree::Node(Arc::new(GNode { node, left, right })));
        let (l, r) = split(a, t, k);
        return (GTree::Plain(l), GTree::Plain(r));
    }
    if a.key(node) < k {
        let f = w.shared_future(sc, move |sc, w| {
            let forced = force(a, w, right);
            split_gf(sc, w, a, forced, k, level + 1)
        });
        let keep = GNode {
            node,
            left,
            right: GTree::Half(f.clone(), Side::Left),
        };
        (GTree::Node(Arc::new(keep)), GTree::Half(f, Side::Right))
    } else {
        let f = w.shared_future(sc, move |sc, w| {
            let forced = force(a, w, left);
            split_gf(sc, w, a, forced, k, level + 1)
        });
        let keep = GNode {
            node,
            left: GTree::Half(f.clone(), Side::Right),
            right,
        };
        (GTree::Half(f, Side::Left), GTree::Node(Arc::new(keep)))
    }
}

/// Writes a pipelined tree into the arena (touching its futures) and returns its root.
fn materialize<'s, W: Futures>(a: &Arena, w: &W, t: GTree<'s, W>) -> u32 {
    match t {
        GTree::Plain(i) => i,
        GTree::Node(g) => {
            let l = materialize(a, w, g.left.clone());
            let r = materialize(a, w, g.right.clone());
            a.set_left(g.node, l);
            a.set_right(g.node, r);
            g.node
        }
        GTree::Half(f, side) => materialize(a, w, pick(f.get(w), side).clone()),
    }
}

/// The pipelined merge of the plain tree `t1` with the pipelined tree `t2`; returns the root.
fn merge_gf<'s, W: Futures>(
    sc: &W::Scope<'s>,
    w: &W,
    a: &'s Arena,
    t1: u32,
    t2: GTree<'s, W>,
    depth: usize,
) -> u32 {
    if t1 == NIL {
        return materialize(a, w, t2);
    }
    if depth >= PAR_DEPTH {
        let t2 = materialize(a, w, t2);
        return merge_serial(a, t1, t2);
    }
    let forced = force(a, w, t2);
    if forced.is_none() {
        return t1;
    }
    let (l, r) = split_gf(sc, w, a, forced, a.key(t1), 0);
    let (l1, r1) = (a.left(t1), a.right(t1));
    sc.spawn(w, move |sc, w| {
        let m = merge_gf(sc, w, a, l1, l, depth + 1);
        a.set_left(t1, m);
    });
    let m = merge_gf(sc, w, a, r1, r, depth + 1);
    a.set_right(t1, m);
    t1
}

/// General futures (pipelined): the whole merge in one scope, whose end waits for every
/// spawned merge and every split future.
pub fn gf<W: Futures>(w: &W, a: &Arena, t1: u32, t2: u32) -> u32 {
    w.scope(|sc, w| merge_gf(sc, w, a, t1, GTree::Plain(t2), 0))
}

/// Fork-join on the async front-end: as [`fj`], with [`AsyncWorker::join`].
pub fn fj_async<'s, C: AsyncWorker<'s>>(
    c: C,
    a: &'s Arena,
    t1: u32,
    t2: u32,
    depth: usize,
) -> impl Future<Output = u32> + Send + 's {
    async move {
        if depth >= PAR_DEPTH || t1 == NIL || t2 == NIL {
            return merge_serial(a, t1, t2);
        }
        let (l, r) = split(a, t2, a.key(t1));
        let (l1, r1) = (a.left(t1), a.right(t1));
        let (ml, mr) = c
            .join(
                move |c| fj_async(c, a, l1, l, depth + 1),
                move |c| fj_async(c, a, r1, r, depth + 1),
            )
            .await;
        a.set_left(t1, ml);
        a.set_right(t1, mr);
        t1
    }
}

/// A pipelined tree on the async front-end (as [`GTree`]).
enum ATree<'s, C: AsyncWorker<'s>> {
    Plain(u32),
    Node(Arc<ANode<'s, C>>),
    Half(C::Shared<AHalves<'s, C>>, Side),
}

/// A node rebuilt by a pipelined split step (async front-end).
struct ANode<'s, C: AsyncWorker<'s>> {
    node: u32,
    left: ATree<'s, C>,
    right: ATree<'s, C>,
}

/// The two halves of an async pipelined split step.
type AHalves<'s, C> = (ATree<'s, C>, ATree<'s, C>);

/// A forced async pipelined tree: `None` (empty) or its root and subtrees.
type AForced<'s, C> = Option<(u32, ATree<'s, C>, ATree<'s, C>)>;

impl<'s, C: AsyncWorker<'s>> Clone for ATree<'s, C> {
    fn clone(&self) -> Self {
        match self {
            ATree::Plain(i) => ATree::Plain(*i),
            ATree::Node(g) => ATree::Node(Arc::clone(g)),
            ATree::Half(f, side) => ATree::Half(f.clone(), *side),
        }
    }
}

/// As [`force`], awaiting the futures.
async fn force_async<'s, C: AsyncWorker<'s>>(a: &'s Arena, mut t: ATree<'s, C>) -> AForced<'s, C> {
    loop {
        t = match t {
            ATree::Plain(NIL) => return None,
            ATree::Plain(i) => {
                return Some((i, ATree::Plain(a.left(i)), ATree::Plain(a.right(i))));
            }
            ATree::Node(g) => return Some((g.node, g.left.clone(), g.right.clone())),
            ATree::Half(f, side) => pick(f.get().await, side).clone(),
        }
    }
}

/// As [`split_gf`]: the rest of the split is a task created with a shared handle
/// ([`AsyncWorker::spawn_shared`]), which forces its part of the tree and does the next step;
/// from [`SPLIT_FUTURES`] steps down, the rest is split in place.
fn split_gf_async<'s, C: AsyncWorker<'s>>(
    c: C,
    a: &'s Arena,
    forced: AForced<'s, C>,
    k: u64,
    level: usize,
) -> impl Future<Output = AHalves<'s, C>> + Send + 's {
    async move {
        let Some((node, left, right)) = forced else {
            return (ATree::Plain(NIL), ATree::Plain(NIL));
        };
        if level >= SPLIT_FUTURES {
            let whole = ATree::Node(Arc::new(ANode { node, left, right }));
            let t = c.call(move |c| materialize_async(c, a, whole)).await;
            let (l, r) = split(a, t, k);
            return (ATree::Plain(l), ATree::Plain(r));
        }
        let rest = |t: ATree<'s, C>| {
            c.spawn_shared(move |c| async move {
                let forced = force_async(a, t).await;
                split_gf_async(c, a, forced, k, level + 1).await
            })
        };
        if a.key(node) < k {
            let f = rest(right).await;
            let keep = ANode {
                node,
                left,
                right: ATree::Half(f.clone(), Side::Left),
            };
            (ATree::Node(Arc::new(keep)), ATree::Half(f, Side::Right))
        } else {
            let f = rest(left).await;
            let keep = ANode {
                node,
                left: ATree::Half(f.clone(), Side::Right),
                right,
            };
            (ATree::Half(f, Side::Left), ATree::Node(Arc::new(keep)))
        }
    }
}

/// As [`materialize`], awaiting the futures.
fn materialize_async<'s, C: AsyncWorker<'s>>(
    c: C,
    a: &'s Arena,
    t: ATree<'s, C>,
) -> impl Future<Output = u32> + Send + 's {
    async move {
        match t {
            ATree::Plain(i) => i,
            ATree::Node(g) => {
                let gl = g.left.clone();
                let l = c.call(move |c| materialize_async(c, a, gl)).await;
                let gr = g.right.clone();
                let r = c.call(move |c| materialize_async(c, a, gr)).await;
                a.set_left(g.node, l);
                a.set_right(g.node, r);
                g.node
            }
            ATree::Half(f, side) => {
                let t = pick(f.get().await, side).clone();
                c.call(move |c| materialize_async(c, a, t)).await
            }
        }
    }
}

/// As [`merge_gf`]: the left merge spawned, the right one called, then the left one awaited.
fn merge_gf_async<'s, C: AsyncWorker<'s>>(
    c: C,
    a: &'s Arena,
    t1: u32,
    t2: ATree<'s, C>,
    depth: usize,
) -> impl Future<Output = u32> + Send + 's {
    async move {
        if t1 == NIL {
            return c.call(move |c| materialize_async(c, a, t2)).await;
        }
        if depth >= PAR_DEPTH {
            let t2 = c.call(move |c| materialize_async(c, a, t2)).await;
            return merge_serial(a, t1, t2);
        }
        let forced = force_async(a, t2).await;
        if forced.is_none() {
            return t1;
        }
        let (l, r) = split_gf_async(c.clone(), a, forced, a.key(t1), 0).await;
        let (l1, r1) = (a.left(t1), a.right(t1));
        let hl = c
            .spawn(move |c| merge_gf_async(c, a, l1, l, depth + 1))
            .await;
        let mr = c
            .call(move |c| merge_gf_async(c, a, r1, r, depth + 1))
            .await;
        let ml = hl.await;
        a.set_left(t1, ml);
        a.set_right(t1, mr);
        t1
    }
}

/// General futures (pipelined) on the async front-end: split steps are tasks with shared
/// handles ([`AsyncWorker::spawn_shared`]), awaited by the merges that meet them.
pub fn gf_async<'s, C: AsyncWorker<'s>>(
    c: C,
    a: &'s Arena,
    t1: u32,
    t2: u32,
) -> impl Future<Output = u32> + Send + 's {
    merge_gf_async(c, a, t1, ATree::Plain(t2), 0)
}

/// The input: both trees in one arena, and the sorted keys of all nodes (the reference).
#[derive(Debug, Clone)]
pub struct BstInput {
    /// The nodes, linked as the two input trees.
    pub arena: Arena,
    /// The root of tree 1 (nodes `0..s1`).
    pub root1: u32,
    /// The root of tree 2 (nodes `s1..s1+s2`).
    pub root2: u32,
    /// Every key, sorted: the in-order sequence the merged tree must have.
    pub sorted: Vec<u64>,
}

impl BstInput {
    /// Two random trees of `s1` and `s2` nodes (keys uniform in `0..KEYS`), from `seed`.
    pub fn random(s1: usize, s2: usize, seed: u64) -> Self {
        let mut rng = SplitMix64::new(seed);
        let keys: Vec<u64> = (0..(s1 + s2) as u32)
            .map(|i| (rng.below(KEYS) << 32) | u64::from(tie(i)))
            .collect();
        Self::from_keys(&keys[..s1], &keys[s1..])
    }

    /// The trees made by inserting `k1` and `k2` (distinct full keys) in order.
    pub fn from_keys(k1: &[u64], k2: &[u64]) -> Self {
        let mut arena = Arena::default();
        let f1 = arena.push_keys(k1);
        let f2 = arena.push_keys(k2);
        let root1 = build(&arena, f1, k1.len());
        let root2 = build(&arena, f2, k2.len());
        let mut sorted: Vec<u64> = k1.iter().chain(k2).copied().collect();
        sorted.sort_unstable();
        BstInput {
            arena,
            root1,
            root2,
            sorted,
        }
    }
}

/// The in-order keys of the tree at `root` and its height (the most nodes on a path from the
/// root, 0 for an empty tree), failing on more than `limit` nodes (a cycle).
pub fn in_order(a: &Arena, root: u32, limit: usize) -> Result<(Vec<u64>, u32), String> {
    let mut out = Vec::with_capacity(limit);
    // The nodes whose right subtree is still to walk, with their depths (the root's is 1).
    let mut stack = Vec::new();
    let (mut t, mut depth, mut height) = (root, 1, 0);
    loop {
        while t != NIL {
            if t as usize >= a.len() {
                return Err(format!("link to node {t} outside the arena of {}", a.len()));
            }
            height = height.max(depth);
            stack.push((t, depth));
            t = a.left(t);
            depth += 1;
        }
        let Some((n, d)) = stack.pop() else {
            return Ok((out, height));
        };
        if out.len() == limit {
            return Err(format!("more than {limit} nodes reachable (a cycle?)"));
        }
        out.push(a.key(n));
        (t, depth) = (a.right(n), d + 1);
    }
}

/// Checks that the tree at `root` is a BST holding exactly the keys `sorted`.
pub fn check_tree(a: &Arena, root: u32, sorted: &[u64]) -> Result<Checked, String> {
    let (keys, height) = in_order(a, root, sorted.len())?;
    if let Some(i) = (1..keys.len()).find(|&i| keys[i] < keys[i - 1]) {
        return Err(format!(
            "not a search tree: in-order key {i} ({}) is below key {} ({})",
            keys[i] >> 32,
            i - 1,
            keys[i - 1] >> 32
        ));
    }
    if keys.len() != sorted.len() {
        return Err(format!(
            "the merged tree has {} nodes, expected {}",
            keys.len(),
            sorted.len()
        ));
    }
    if let Some(i) = (0..keys.len()).find(|&i| keys[i] != sorted[i]) {
        return Err(format!(
            "in-order key {i} is {:#x}, expected {:#x}",
            keys[i], sorted[i]
        ));
    }
    Ok(Checked::new(
        format!("a search tree of {} keys, height {height}", keys.len()),
        "the sorted keys of both input trees",
    ))
}

impl Workload for Bst {
    const NAME: &'static str = "bst";
    const DESCRIPTION: &'static str =
        "pipelined merge of two random BSTs (Blelloch, Reid-Miller), parallel in the top 5 levels";
    const VARIANTS: &'static [Variant] = &[Variant::Fj, Variant::Gf];
    const ASYNC_VARIANTS: &'static [Variant] = &[Variant::Fj, Variant::Gf];

    type Input = BstInput;
    type Work = Arena;
    type Answer = u32;

    fn preset(size: Size) -> Params {
        let (s1, s2) = sizes(size);
        Params::new()
            .int("s1", s1 as u64)
            .int("s2", s2 as u64)
            .int("seed", INPUT_SEED)
    }

    fn input(params: &Params) -> Result<BstInput, String> {
        let (s1, s2) = (params.get_usize("s1")?, params.get_usize("s2")?);
        if s1 == 0 || s2 == 0 {
            return Err(format!("s1={s1} s2={s2}: both trees need a key"));
        }
        let max = NIL as usize - 1;
        if s1.checked_add(s2).is_none_or(|s| s > max) {
            return Err(format!(
                "s1={s1} s2={s2}: the trees hold at most {max} nodes together (a link is a u32)"
            ));
        }
        // Per node: the keys, the arena and a repetition's copy, the build's order, the sorted
        // keys and the check's in-order sequence.
        check_memory(&format!("s1={s1} s2={s2}"), 64.0 * (s1 as f64 + s2 as f64))?;
        Ok(BstInput::random(s1, s2, params.get_int("seed")))
    }

    fn prepare(input: &BstInput) -> Arena {
        input.arena.clone()
    }

    fn run<S: ForkJoin>(pool: &S, variant: Variant, input: &BstInput, work: &mut Arena) -> u32 {
        let (a, t1, t2) = (&*work, input.root1, input.root2);
        match variant {
            Variant::Fj => pool.run(|w| fj(w, a, t1, t2, 0)),
            v => crate::not_without_futures::<Self>(v),
        }
    }

    fn run_futures<S: FutureForkJoin>(
        pool: &S,
        variant: Variant,
        input: &BstInput,
        work: &mut Arena,
    ) -> u32 {
        let (a, t1, t2) = (&*work, input.root1, input.root2);
        match variant {
            Variant::Gf => pool.run(|w| gf(w, a, t1, t2)),
            v => Self::run(pool, v, input, work),
        }
    }

    fn run_async<S: AsyncForkJoin>(
        pool: &S,
        variant: Variant,
        input: &BstInput,
        work: &mut Arena,
    ) -> u32 {
        let (a, t1, t2) = (&*work, input.root1, input.root2);
        match variant {
            Variant::Fj => pool.run_async(|c| fj_async(c, a, t1, t2, 0)),
            Variant::Gf => pool.run_async(|c| gf_async(c, a, t1, t2)),
            v => panic!("bst has no async {v} variant"),
        }
    }

    fn kernel(input: &BstInput, work: &mut Arena) -> u32 {
        merge_serial(work, input.root1, input.root2)
    }

    fn check(input: &BstInput, work: &Arena, root: &u32) -> Result<Checked, String> {
        check_tree(work, *root, &input.sorted)
    }
}

/// The seed of the keys.
const INPUT_SEED: u64 = 0x6273_745e_ed00_0001;

/// `(s1, s2)` of a size.
fn sizes(size: Size) -> (usize, usize) {
    match size {
        Size::Paper => (8_000_000, 4_000_000),
        Size::Small => (5_000_000, 2_500_000),
        Size::Quick => (2_000_000, 1_000_000),
        Size::Test => (3_000, 1_500),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    fn links(a: &Arena) -> Vec<(u32, u32)> {
        (0..a.len() as u32)
            .map(|i| (a.left(i), a.right(i)))
            .collect()
    }

    #[test]
    fn build_equals_insertion() {
        let input = BstInput::random(500, 300, 5);
        let b = input.arena.clone();
        for i in 0..b.len() as u32 {
            b.set_left(i, NIL);
            b.set_right(i, NIL);
        }
        assert_eq!(build_by_insertion(&b, 0, 500), input.root1);
        assert_eq!(build_by_insertion(&b, 500, 300), input.root2);
        assert_eq!(links(&b), links(&input.arena));
    }

    #[test]
    fn split_and_serial_merge_match_sorting() {
        let input = BstInput::random(2000, 900, 9);
        // Inputs are search trees of their keys.
        let mut k1: Vec<u64> = input.sorted.clone();
        k1.retain(|k| (0..2000u32).any(|i| input.arena.key(i) == *k));
        check_tree(&input.arena, input.root1, &k1).unwrap();
        // Split around a median key.
        let a = input.arena.clone();
        let k = input.sorted[input.sorted.len() / 2];
        let (l, r) = split(&a, input.root1, k);
        let (lk, _) = in_order(&a, l, 3000).unwrap();
        let (rk, _) = in_order(&a, r, 3000).unwrap();
        assert!(lk.iter().all(|&x| x < k) && rk.iter().all(|&x| x >= k));
        assert_eq!([lk, rk].concat(), k1);
        // The serial merge against the sorted union.
        let a = input.arena.clone();
        let root = merge_serial(&a, input.root1, input.root2);
        assert_eq!(root, input.root1);
        check_tree(&a, root, &input.sorted).unwrap();
    }

    #[test]
    fn every_variant_builds_the_serial_tree() {
        let pool = testing::serial();
        let cases = [
            BstInput::random(3000, 1500, 2),
            BstInput::random(40, 3000, 3),
            BstInput::random(0, 100, 4),
            BstInput::random(100, 0, 5),
            BstInput::random(0, 0, 6),
            // Equal keys everywhere: ties broken by the tiebreak.
            BstInput::from_keys(
                &(0..200u32)
                    .map(|i| (7u64 << 32) | u64::from(tie(i)))
                    .collect::<Vec<_>>(),
                &(200..300u32)
                    .map(|i| (7u64 << 32) | u64::from(tie(i)))
                    .collect::<Vec<_>>(),
            ),
        ];
        for input in &cases {
            let reference = Bst::prepare(input);
            let root = merge_serial(&reference, input.root1, input.root2);
            check_tree(&reference, root, &input.sorted).unwrap();
            testing::check_every_variant::<Bst>(&pool, &pool, input, |what, a, &r| {
                assert_eq!((r, links(a)), (root, links(&reference)), "{what}");
            });
        }
    }

    #[test]
    fn check_rejects_wrong_answers() {
        let input = Bst::input_at(Size::Test);
        assert_eq!(
            Bst::preset(Size::Test).to_string(),
            format!("s1=3000 s2=1500 seed={INPUT_SEED}")
        );
        let mut a = Bst::prepare(&input);
        let root = Bst::run(&testing::serial(), Variant::Fj, &input, &mut a);
        fn height(a: &Arena, t: u32) -> u32 {
            if t == NIL {
                0
            } else {
                1 + height(a, a.left(t)).max(height(a, a.right(t)))
            }
        }
        assert_eq!(
            Bst::check(&input, &a, &root).unwrap().to_string(),
            format!(
                "a search tree of 4500 keys, height {}; checked against the sorted keys of both \
                 input trees",
                height(&a, root)
            )
        );
        // The unmerged trees.
        let fresh = Bst::prepare(&input);
        assert!(Bst::check(&input, &fresh, &input.root1).is_err());
        // A lost subtree.
        let b = a.clone();
        let n = (0..b.len() as u32).find(|&i| b.left(i) != NIL).unwrap();
        b.set_left(n, NIL);
        assert!(Bst::check(&input, &b, &root).unwrap_err().contains("nodes"));
        // Two children swapped: not a search tree.
        let b = a.clone();
        let n = (0..b.len() as u32)
            .find(|&i| b.left(i) != NIL && b.right(i) != NIL)
            .unwrap();
        let (l, r) = (b.left(n), b.right(n));
        b.set_left(n, r);
        b.set_right(n, l);
        assert!(
            Bst::check(&input, &b, &root)
                .unwrap_err()
                .contains("search tree")
        );
        // A cycle.
        let b = a.clone();
        let leaf = (0..b.len() as u32)
            .find(|&i| b.left(i) == NIL && b.right(i) == NIL)
            .unwrap();
        b.set_left(leaf, root);
        assert!(Bst::check(&input, &b, &root).is_err());
        // A link outside the arena.
        let b = a.clone();
        b.set_right(leaf, b.len() as u32);
        assert!(
            Bst::check(&input, &b, &root)
                .unwrap_err()
                .contains("outside")
        );
        // The right number of nodes but other keys (another seed's reference).
        let other = BstInput::random(3000, 1500, 99);
        assert!(
            Bst::check(&other, &a, &root)
                .unwrap_err()
                .contains("expected")
        );
    }
}
