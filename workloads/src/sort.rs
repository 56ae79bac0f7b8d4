//! `sort`: cilksort, the 4-way parallel mergesort of Cilk's benchmarks (ProWS Figure 2).
//!
//! # Algorithm
//!
//! `cilksort(A, tmp)` of `n` elements:
//!
//! 1. below [`QUICKSIZE`] elements, a serial [`quicksort`] (median-of-3 Hoare partitioning,
//!    [`insertion_sort`] at most [`INSERTIONSIZE`] elements), as Cilk's `seqquick`;
//! 2. otherwise sort the four quarters of `A` recursively, in parallel (each with its quarter of
//!    `tmp` as scratch);
//! 3. merge quarters 1+2 into the first half of `tmp` and quarters 3+4 into its second half,
//!    in parallel;
//! 4. merge the two halves of `tmp` back into `A`.
//!
//! Merges are cilkmerge: take the middle element of the longer run, binary-search its place in
//! the shorter one, store it at its final position, and merge the two lower parts and the two
//! upper parts in parallel; a serial [`seq_merge`] once the shorter run has at most
//! [`MERGESIZE`] elements (Cilk's test, which looks at the shorter run only).
//!
//! # Why the arrays are `[AtomicU64]`
//!
//! The async front-end lends borrows only for the whole [`AsyncForkJoin::run_async`] scope, so
//! a task that lends the quarters of its `&mut` part of the array to its children can never get
//! the whole part back as the destination of step 4 (safe Rust cannot rejoin split `&mut`
//! slices). So every variant, on both front-ends, shares the array and the buffer as
//! `&[AtomicU64]` and reads and writes them with `Relaxed` loads and stores. Those compile to
//! plain moves on x86-64 and AArch64, and the join, future or await that orders two tasks
//! orders their accesses. A leaf copies its (fewer than [`QUICKSIZE`]) elements into a stack
//! buffer of 8 KiB, sorts them with the plain-`u64` [`quicksort`] and copies them back.
//! Measured serially against a plain `&mut [u64]` version of the same algorithm (3·10^6 and
//! 10^7 elements): no difference beyond run-to-run noise (about 1%). Every runtime runs the
//! same memory operations.
//!
//! # Check
//!
//! The output must be sorted and have the input's [`Fingerprint`] (an order-independent hash
//! of the multiset of elements), so it is the sorted input.

use crate::params::check_memory;
use crate::rng::SplitMix64;
use crate::{Checked, Params, Size, Variant, Workload, quarters};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use stealbench_schedulers::{
    AsyncForkJoin, AsyncWorker, ForkJoin, FutureForkJoin, FutureHandle, Futures, Worker,
};

/// The workload marker type.
#[derive(Debug)]
pub struct Sort;

/// Below this many elements cilksort sorts serially (Cilk's `QUICKSIZE`).
pub const QUICKSIZE: usize = 1024;
/// Merges run serially once the shorter run has at most this many elements (`MERGESIZE`).
pub const MERGESIZE: usize = 1024;
/// Quicksort hands ranges of at most this many elements to insertion sort (`INSERTIONSIZE`).
pub const INSERTIONSIZE: usize = 20;

/// The median of three values.
#[inline]
fn med3(a: u64, b: u64, c: u64) -> u64 {
    if a < b {
        if b < c {
            b
        } else if a < c {
            c
        } else {
            a
        }
    } else if b > c {
        b
    } else if a > c {
        c
    } else {
        a
    }
}

/// Hoare partition around the median of the first, middle and last elements (Cilk's
/// `seqpart`). Returns `p < a.len() - 1` with `a[..=p] <= pivot <= a[p+1..]`.
/// Needs `a.len() >= 2`.
fn partition(a: &mut [u64]) -> usize {
    let hi = a.len() - 1;
    let pivot = med3(a[0], a[hi], a[hi / 2]);
    let (mut l, mut h) = (0, hi);
    loop {
        // The pivot value is in `a`, and after the first swap the swapped elements stop both
        // scans, so neither index leaves `0..=hi`.
        while a[h] > pivot {
            h -= 1;
        }
        while a[l] < pivot {
            l += 1;
        }
        if l >= h {
            break;
        }
        a.swap(l, h);
        l += 1;
        h -= 1;
    }
    // `h == hi` only if nothing was swapped and every other element is below the pivot:
    // `a[hi]` is then the maximum, and splitting before it guarantees progress.
    if h < hi { h } else { h - 1 }
}

/// Insertion sort (Cilk's `insertion_sort`).
pub fn insertion_sort(a: &mut [u64]) {
    for i in 1..a.len() {
        let x = a[i];
        let mut j = i;
        while j > 0 && a[j - 1] > x {
            a[j] = a[j - 1];
            j -= 1;
        }
        a[j] = x;
    }
}

/// The serial sort of the leaves: Cilk's `seqquick` (partition, then insertion sort at most
/// [`INSERTIONSIZE`] elements). Unlike Cilk it recurses into the smaller part and loops on the
/// larger, which performs the same comparisons but bounds the recursion depth by `log2 n`.
pub fn quicksort(mut a: &mut [u64]) {
    while a.len() > INSERTIONSIZE {
        let p = partition(a);
        let (lo, hi) = std::mem::take(&mut a).split_at_mut(p + 1);
        if lo.len() <= hi.len() {
            quicksort(lo);
            a = hi;
        } else {
            quicksort(hi);
            a = lo;
        }
    }
    insertion_sort(a);
}

/// A leaf of cilksort: copies the elements to a stack buffer, [`quicksort`]s them and copies
/// them back. Needs `a.len() < QUICKSIZE`.
fn sort_leaf(a: &[AtomicU64]) {
    let mut buf = [0u64; QUICKSIZE];
    let buf = &mut buf[..a.len()];
    for (x, cell) in buf.iter_mut().zip(a) {
        *x = cell.load(Relaxed);
    }
    quicksort(buf);
    for (&x, cell) in buf.iter().zip(a) {
        cell.store(x, Relaxed);
    }
}

/// The serial merge of the sorted runs `a` and `b` into `dest` (`dest.len() == a.len() +
/// b.len()`), branch-free in its main loop; equal elements are taken from `a` first.
pub fn seq_merge(a: &[AtomicU64], b: &[AtomicU64], dest: &[AtomicU64]) {
    assert_eq!(
        a.len() + b.len(),
        dest.len(),
        "merge into a wrong-sized range"
    );
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i].load(Relaxed), b[j].load(Relaxed));
        let take_a = x <= y;
        dest[i + j].store(if take_a { x } else { y }, Relaxed);
        i += usize::from(take_a);
        j += usize::from(!take_a);
    }
    for (d, s) in dest[i + j..].iter().zip(a[i..].iter().chain(&b[j..])) {
        d.store(s.load(Relaxed), Relaxed);
    }
}

/// One merge `dest ← a ∪ b` of the recursion: two sorted runs and the destination.
type Merge<'a> = (&'a [AtomicU64], &'a [AtomicU64], &'a [AtomicU64]);

/// The step of cilkmerge, written once for every variant: `None` after merging serially,
/// otherwise the split element stored at its final place and the two independent halves.
fn merge_step<'a>(
    a: &'a [AtomicU64],
    b: &'a [AtomicU64],
    dest: &'a [AtomicU64],
) -> Option<[Merge<'a>; 2]> {
    let (a, b) = if a.len() < b.len() { (b, a) } else { (a, b) };
    if b.len() <= MERGESIZE {
        seq_merge(a, b, dest);
        return None;
    }
    let m1 = a.len() / 2;
    let v = a[m1].load(Relaxed);
    // Cilk's `binsplit`: the elements of `b` that are <= v go below it.
    let m2 = b.partition_point(|x| x.load(Relaxed) <= v);
    dest[m1 + m2].store(v, Relaxed);
    Some([
        (&a[..m1], &b[..m2], &dest[..m1 + m2]),
        (&a[m1 + 1..], &b[m2..], &dest[m1 + m2 + 1..]),
    ])
}

/// The quarters of one cilksort step, and the three merges that follow their sorts.
struct SortStep<'a> {
    /// The quarters to sort, each with its quarter of the buffer.
    sorts: [(&'a [AtomicU64], &'a [AtomicU64]); 4],
    /// Quarters 1+2 and 3+4 into the two halves of the buffer (in parallel).
    pair_merges: [Merge<'a>; 2],
    /// The two halves of the buffer back into the array.
    final_merge: Merge<'a>,
}

/// The step of cilksort, written once for every variant: `None` after sorting a leaf,
/// otherwise the quarters and the merges.
fn sort_step<'a>(a: &'a [AtomicU64], tmp: &'a [AtomicU64]) -> Option<SortStep<'a>> {
    debug_assert_eq!(a.len(), tmp.len());
    if a.len() < QUICKSIZE {
        sort_leaf(a);
        return None;
    }
    let [a0, a1, a2, a3] = quarters(a);
    let [t0, t1, t2, t3] = quarters(tmp);
    let (t01, t23) = tmp.split_at(a0.len() + a1.len());
    Some(SortStep {
        sorts: [(a0, t0), (a1, t1), (a2, t2), (a3, t3)],
        pair_merges: [(a0, a1, t01), (a2, a3, t23)],
        final_merge: (t01, t23, a),
    })
}

/// Fork-join cilksort: the four sorts under nested `join`s, then the two merges under a
/// `join`, then the last merge (Cilk's spawns and syncs).
pub fn fj<W: Worker>(w: &W, a: &[AtomicU64], tmp: &[AtomicU64]) {
    let Some(st) = sort_step(a, tmp) else {
        return;
    };
    let [s0, s1, s2, s3] = st.sorts;
    w.join(
        |w| w.join(|w| fj(w, s0.0, s0.1), |w| fj(w, s1.0, s1.1)),
        |w| w.join(|w| fj(w, s2.0, s2.1), |w| fj(w, s3.0, s3.1)),
    );
    let [m0, m1] = st.pair_merges;
    w.join(
        |w| merge_fj(w, m0.0, m0.1, m0.2),
        |w| merge_fj(w, m1.0, m1.1, m1.2),
    );
    let m = st.final_merge;
    merge_fj(w, m.0, m.1, m.2);
}

/// Fork-join cilkmerge: the two halves under a `join`.
pub fn merge_fj<W: Worker>(w: &W, a: &[AtomicU64], b: &[AtomicU64], dest: &[AtomicU64]) {
    if let Some([l, r]) = merge_step(a, b, dest) {
        w.join(
            |w| merge_fj(w, l.0, l.1, l.2),
            |w| merge_fj(w, r.0, r.1, r.2),
        );
    }
}

/// The kernel: the serial elision of [`fj`] as a plain function (cilksort with every spawn
/// a call), no runtime.
pub fn serial(a: &[AtomicU64], tmp: &[AtomicU64]) {
    let Some(st) = sort_step(a, tmp) else {
        return;
    };
    for (a, tmp) in st.sorts {
        serial(a, tmp);
    }
    for m in st.pair_merges {
        merge_serial(m.0, m.1, m.2);
    }
    let m = st.final_merge;
    merge_serial(m.0, m.1, m.2);
}

/// The serial elision of [`merge_fj`] (cilkmerge with every spawn a call).
pub fn merge_serial(a: &[AtomicU64], b: &[AtomicU64], dest: &[AtomicU64]) {
    if let Some([l, r]) = merge_step(a, b, dest) {
        merge_serial(l.0, l.1, l.2);
        merge_serial(r.0, r.1, r.2);
    }
}

/// Structured-futures cilksort: three sorts as futures and the fourth called directly, the
/// futures touched once each; then one merge as a future, the other called, the future
/// touched; then the last merge (Cilk-F's conversion of spawn to fut-create, sync to get).
pub fn sf<W: Futures>(w: &W, a: &[AtomicU64], tmp: &[AtomicU64]) {
    let Some(st) = sort_step(a, tmp) else {
        return;
    };
    let [s0, s1, s2, s3] = st.sorts;
    let [m0, m1] = st.pair_merges;
    w.scope(|s, w| {
        let f0 = w.future(s, move |_, w| sf(w, s0.0, s0.1));
        let f1 = w.future(s, move |_, w| sf(w, s1.0, s1.1));
        let f2 = w.future(s, move |_, w| sf(w, s2.0, s2.1));
        sf(w, s3.0, s3.1);
        f0.get(w);
        f1.get(w);
        f2.get(w);
        let g = w.future(s, move |_, w| merge_sf(w, m0.0, m0.1, m0.2));
        merge_sf(w, m1.0, m1.1, m1.2);
        g.get(w);
    });
    let m = st.final_merge;
    merge_sf(w, m.0, m.1, m.2);
}

/// Structured-futures cilkmerge: the lower half as a future, the upper half called, then the
/// future touched.
pub fn merge_sf<W: Futures>(w: &W, a: &[AtomicU64], b: &[AtomicU64], dest: &[AtomicU64]) {
    if let Some([l, r]) = merge_step(a, b, dest) {
        w.scope(|s, w| {
            let f = w.future(s, move |_, w| merge_sf(w, l.0, l.1, l.2));
            merge_sf(w, r.0, r.1, r.2);
            f.get(w);
        });
    }
}

/// Fork-join cilksort on the async front-end: nested [`AsyncWorker::join`]s over the four
/// sorts, a `join` over the two merges, then the last merge (a call).
pub fn fj_async<'s, C: AsyncWorker<'s>>(
    c: C,
    a: &'s [AtomicU64],
    tmp: &'s [AtomicU64],
) -> impl Future<Output = ()> + Send + 's {
    type Part<'s> = (&'s [AtomicU64], &'s [AtomicU64]);
    /// The join of two sorts, as one child of the outer join.
    fn pair<'s, C: AsyncWorker<'s>>(
        c: C,
        x: Part<'s>,
        y: Part<'s>,
    ) -> impl Future<Output = ()> + Send + 's {
        async move {
            c.join(
                move |c| fj_async(c, x.0, x.1),
                move |c| fj_async(c, y.0, y.1),
            )
            .await;
        }
    }
    async move {
        let Some(st) = sort_step(a, tmp) else {
            return;
        };
        let [s0, s1, s2, s3] = st.sorts;
        c.join(move |c| pair(c, s0, s1), move |c| pair(c, s2, s3))
            .await;
        let [m0, m1] = st.pair_merges;
        c.join(
            move |c| merge_fj_async(c, m0.0, m0.1, m0.2),
            move |c| merge_fj_async(c, m1.0, m1.1, m1.2),
        )
        .await;
        let m = st.final_merge;
        c.call(move |c| merge_fj_async(c, m.0, m.1, m.2)).await;
    }
}

/// Fork-join cilkmerge on the async front-end: the two halves under an [`AsyncWorker::join`].
pub fn merge_fj_async<'s, C: AsyncWorker<'s>>(
    c: C,
    a: &'s [AtomicU64],
    b: &'s [AtomicU64],
    dest: &'s [AtomicU64],
) -> impl Future<Output = ()> + Send + 's {
    async move {
        if let Some([l, r]) = merge_step(a, b, dest) {
            c.join(
                move |c| merge_fj_async(c, l.0, l.1, l.2),
                move |c| merge_fj_async(c, r.0, r.1, r.2),
            )
            .await;
        }
    }
}

/// Structured-futures cilksort on the async front-end: three sorts spawned, the fourth
/// called, the handles awaited once each; the same for the two merges; then the last merge.
pub fn sf_async<'s, C: AsyncWorker<'s>>(
    c: C,
    a: &'s [AtomicU64],
    tmp: &'s [AtomicU64],
) -> impl Future<Output = ()> + Send + 's {
    async move {
        let Some(st) = sort_step(a, tmp) else {
            return;
        };
        let [s0, s1, s2, s3] = st.sorts;
        let f0 = c.spawn(move |c| sf_async(c, s0.0, s0.1)).await;
        let f1 = c.spawn(move |c| sf_async(c, s1.0, s1.1)).await;
        let f2 = c.spawn(move |c| sf_async(c, s2.0, s2.1)).await;
        c.call(move |c| sf_async(c, s3.0, s3.1)).await;
        f0.await;
        f1.await;
        f2.await;
        let [m0, m1] = st.pair_merges;
        let g = c.spawn(move |c| merge_sf_async(c, m0.0, m0.1, m0.2)).await;
        c.call(move |c| merge_sf_async(c, m1.0, m1.1, m1.2)).await;
        g.await;
        let m = st.final_merge;
        c.call(move |c| merge_sf_async(c, m.0, m.1, m.2)).await;
    }
}

/// Structured-futures cilkmerge on the async front-end: the lower half spawned, the upper
/// half called, then the handle awaited.
pub fn merge_sf_async<'s, C: AsyncWorker<'s>>(
    c: C,
    a: &'s [AtomicU64],
    b: &'s [AtomicU64],
    dest: &'s [AtomicU64],
) -> impl Future<Output = ()> + Send + 's {
    async move {
        if let Some([l, r]) = merge_step(a, b, dest) {
            let f = c.spawn(move |c| merge_sf_async(c, l.0, l.1, l.2)).await;
            c.call(move |c| merge_sf_async(c, r.0, r.1, r.2)).await;
            f.await;
        }
    }
}

/// An order-independent fingerprint of a multiset of `u64`: its size, and the wrapping sum and
/// the xor of a 64-bit mix of each element.
///
/// Strength: the mix is a bijection of `u64` (SplitMix64's finaliser), so replacing any one
/// element by a different value always changes the sum, and a lost or duplicated element
/// changes it unless the mixes of the two values involved coincide, which they never do. Any
/// other difference between two multisets of the same size passes only if both the wrapping
/// sum and the xor of the mixed values agree; the mix scrambles every input bit into every
/// output bit, so for errors that are not constructed against this particular function (lost,
/// duplicated or stale elements, a merge reading the wrong run) that is a coincidence of about
/// one in `2^64`. Together with a sortedness test it shows that the output is the sorted input.
/// It costs one pass, and the input's fingerprint is computed once, with the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint {
    /// The number of elements.
    pub len: u64,
    /// The wrapping sum of the mixed elements.
    pub sum: u64,
    /// The xor of the mixed elements.
    pub xor: u64,
}

impl Fingerprint {
    /// The fingerprint of `values`.
    pub fn of(values: impl IntoIterator<Item = u64>) -> Self {
        let mut f = Fingerprint {
            len: 0,
            sum: 0,
            xor: 0,
        };
        for x in values {
            let h = mix(x);
            f.len += 1;
            f.sum = f.sum.wrapping_add(h);
            f.xor ^= h;
        }
        f
    }
}

/// A bijective 64-bit mix: SplitMix64's output function of `x` plus its increment.
#[inline]
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The input: the values to sort and their fingerprint.
#[derive(Debug, Clone)]
pub struct SortInput {
    /// The values, in input order.
    pub data: Vec<u64>,
    /// `Fingerprint::of(data)`.
    pub fingerprint: Fingerprint,
}

impl SortInput {
    /// The input of given values.
    pub fn new(data: Vec<u64>) -> Self {
        let fingerprint = Fingerprint::of(data.iter().copied());
        SortInput { data, fingerprint }
    }

    /// `n` random 64-bit values from `seed`.
    pub fn random(n: usize, seed: u64) -> Self {
        let mut rng = SplitMix64::new(seed);
        SortInput::new((0..n).map(|_| rng.next_u64()).collect())
    }
}

/// Per-repetition state: a fresh copy of the input, sorted in place, and the scratch buffer.
#[derive(Debug)]
pub struct SortWork {
    /// The array to sort; the answer when the run returns.
    pub data: Vec<AtomicU64>,
    /// The temporary buffer, as long as `data`.
    pub tmp: Vec<AtomicU64>,
}

impl SortWork {
    /// A copy of `input` and a buffer; every page of both is written here, before the run.
    pub fn new(input: &SortInput) -> Self {
        SortWork {
            data: input.data.iter().map(|&x| AtomicU64::new(x)).collect(),
            tmp: input.data.iter().map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

/// Checks that `output` (the keys in the output's order) is sorted and has the fingerprint
/// `want`: the check of `sort` and `quicksort`.
pub fn check_sorted(
    output: impl Iterator<Item = u64> + Clone,
    want: &Fingerprint,
) -> Result<Checked, String> {
    let mut prev = 0u64;
    for (i, x) in output.clone().enumerate() {
        if i > 0 && x < prev {
            return Err(format!(
                "not sorted: element {} = {prev} > element {i} = {x}",
                i - 1
            ));
        }
        prev = x;
    }
    let got = Fingerprint::of(output.clone());
    if got != *want {
        return Err(format!(
            "sorted, but not a permutation of the input: fingerprint {got:?}, \
             input's {want:?}"
        ));
    }
    let first = output.clone().next().unwrap_or(0);
    Ok(Checked::new(
        format!(
            "{} keys in ascending order, from {first} to {prev}",
            got.len
        ),
        "the input's keys (their count, and the sum and xor of their hashes)",
    ))
}

/// The seed of the input.
const INPUT_SEED: u64 = 0x5047_5eed_0000_0003;

/// The number of elements of a size.
fn length(size: Size) -> usize {
    match size {
        Size::Paper => 100_000_000,
        Size::Small => 10_000_000,
        Size::Quick => 3_000_000,
        Size::Test => 10_000,
    }
}

impl Workload for Sort {
    const NAME: &'static str = "sort";
    const DESCRIPTION: &'static str =
        "cilksort: 4-way mergesort with parallel divide-and-conquer merges, u64 keys";
    const VARIANTS: &'static [Variant] = &[Variant::Fj, Variant::Sf];
    const ASYNC_VARIANTS: &'static [Variant] = &[Variant::Fj, Variant::Sf];

    type Input = SortInput;
    type Work = SortWork;
    type Answer = ();

    fn preset(size: Size) -> Params {
        Params::new()
            .int("n", length(size) as u64)
            .int("seed", INPUT_SEED)
    }

    fn input(params: &Params) -> Result<SortInput, String> {
        match params.get_usize("n")? {
            0 => Err("n=0: nothing to sort".into()),
            n => {
                // The input, and a repetition's copy and scratch buffer.
                check_memory(&format!("n={n}"), 3.0 * 8.0 * n as f64)?;
                Ok(SortInput::random(n, params.get_int("seed")))
            }
        }
    }

    fn prepare(input: &SortInput) -> SortWork {
        SortWork::new(input)
    }

    fn run<S: ForkJoin>(pool: &S, variant: Variant, _input: &SortInput, work: &mut SortWork) {
        let (a, tmp) = (&work.data[..], &work.tmp[..]);
        match variant {
            Variant::Fj => pool.run(|w| fj(w, a, tmp)),
            v => crate::not_without_futures::<Self>(v),
        }
    }

    fn run_futures<S: FutureForkJoin>(
        pool: &S,
        variant: Variant,
        input: &SortInput,
        work: &mut SortWork,
    ) {
        let (a, tmp) = (&work.data[..], &work.tmp[..]);
        match variant {
            Variant::Sf => pool.run(|w| sf(w, a, tmp)),
            v => Self::run(pool, v, input, work),
        }
    }

    fn run_async<S: AsyncForkJoin>(
        pool: &S,
        variant: Variant,
        _input: &SortInput,
        work: &mut SortWork,
    ) {
        let (a, tmp) = (&work.data[..], &work.tmp[..]);
        match variant {
            Variant::Fj => pool.run_async(|c| fj_async(c, a, tmp)),
            Variant::Sf => pool.run_async(|c| sf_async(c, a, tmp)),
            v => panic!("sort has no async {v} variant"),
        }
    }

    fn kernel(_input: &SortInput, work: &mut SortWork) {
        serial(&work.data, &work.tmp);
    }

    fn check(input: &SortInput, work: &SortWork, _answer: &()) -> Result<Checked, String> {
        check_sorted(
            work.data.iter().map(|x| x.load(Relaxed)),
            &input.fingerprint,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    fn values(cells: &[AtomicU64]) -> Vec<u64> {
        cells.iter().map(|x| x.load(Relaxed)).collect()
    }

    fn cells(v: &[u64]) -> Vec<AtomicU64> {
        v.iter().map(|&x| AtomicU64::new(x)).collect()
    }

    /// Runs every variant on both front-ends of the serial runtime and checks each against
    /// the standard library's sort.
    fn all_variants_sort(data: Vec<u64>) {
        let pool = testing::serial();
        let input = SortInput::new(data);
        let mut want = input.data.clone();
        want.sort_unstable();
        testing::check_every_variant::<Sort>(&pool, &pool, &input, |what, work, _| {
            assert_eq!(values(&work.data), want, "{what} n={}", want.len());
        });
    }

    #[test]
    fn quicksort_matches_std_sort() {
        let mut rng = SplitMix64::new(11);
        for len in (0..100).chain([255, 256, 1000, 1023, 5000]) {
            for modulus in [2, 10, u64::MAX] {
                let mut v: Vec<u64> = (0..len).map(|_| rng.next_u64() % modulus).collect();
                let mut want = v.clone();
                want.sort_unstable();
                quicksort(&mut v);
                assert_eq!(v, want, "len {len} values mod {modulus}");
            }
        }
        for mut v in [
            (0..1000).collect::<Vec<u64>>(),
            (0..1000).rev().collect(),
            vec![7; 1000],
            (0..1000).map(|x| x % 2).collect(),
            (0..500).chain((0..500).rev()).collect(),
        ] {
            let mut want = v.clone();
            want.sort_unstable();
            quicksort(&mut v);
            assert_eq!(v, want);
        }
    }

    #[test]
    fn seq_merge_and_parallel_merge_match_std_sort() {
        let mut rng = SplitMix64::new(12);
        for (la, lb) in [
            (0, 0),
            (0, 5),
            (5, 0),
            (3, 4),
            (3000, 1),
            (2500, 2600),
            (5000, 700),
        ] {
            for modulus in [3, u64::MAX] {
                let mut a: Vec<u64> = (0..la).map(|_| rng.next_u64() % modulus).collect();
                let mut b: Vec<u64> = (0..lb).map(|_| rng.next_u64() % modulus).collect();
                a.sort_unstable();
                b.sort_unstable();
                let mut want = [a.clone(), b.clone()].concat();
                want.sort_unstable();
                let dest = cells(&vec![0; la + lb]);
                seq_merge(&cells(&a), &cells(&b), &dest);
                assert_eq!(values(&dest), want);
                let dest = cells(&vec![0; la + lb]);
                testing::serial().run(|w| merge_fj(w, &cells(&a), &cells(&b), &dest));
                assert_eq!(values(&dest), want);
            }
        }
    }

    #[test]
    fn test_preset() {
        assert_eq!(
            Sort::preset(Size::Test).to_string(),
            format!("n=10000 seed={INPUT_SEED}")
        );
    }

    #[test]
    fn edge_cases_on_every_variant() {
        all_variants_sort(vec![]);
        all_variants_sort(vec![42]);
        all_variants_sort(vec![2, 1]);
        all_variants_sort(vec![3, 1, 2]);
        let n = 20_000;
        all_variants_sort((0..n).collect());
        all_variants_sort((0..n).rev().collect());
        all_variants_sort(vec![5; n as usize]);
        all_variants_sort((0..n).map(|x| x % 3).collect());
        all_variants_sort((0..n).map(|x| u64::MAX - x % 1000).collect());
        // Not a multiple of 4: the last quarter takes the remainder.
        let mut rng = SplitMix64::new(13);
        all_variants_sort((0..QUICKSIZE * 4 + 3).map(|_| rng.next_u64()).collect());
    }

    #[test]
    fn check_rejects_wrong_answers() {
        let input = SortInput::random(5000, 14);
        let mut work = Sort::prepare(&input);
        Sort::run(&testing::serial(), Variant::Fj, &input, &mut work);
        let sorted = values(&work.data);
        assert_eq!(
            Sort::check(&input, &work, &()).unwrap().answer,
            format!(
                "5000 keys in ascending order, from {} to {}",
                sorted[0], sorted[4999]
            )
        );
        let verdict = |v: &[u64]| {
            let w = SortWork {
                data: cells(v),
                tmp: cells(v),
            };
            Sort::check(&input, &w, &())
        };
        // The unsorted input.
        assert!(verdict(&input.data).unwrap_err().contains("not sorted"));
        // Two elements swapped.
        let mut v = sorted.clone();
        v.swap(100, 101);
        assert!(verdict(&v).unwrap_err().contains("not sorted"));
        // One element changed, still sorted.
        let mut v = sorted.clone();
        v[100] = v[99];
        assert!(verdict(&v).unwrap_err().contains("permutation"));
        let mut v = sorted.clone();
        v[4999] += 1;
        assert!(verdict(&v).unwrap_err().contains("permutation"));
        // One element lost (array one shorter) or one duplicated at the end.
        assert!(verdict(&sorted[..4999]).is_err());
        let mut v = sorted.clone();
        v.push(*v.last().unwrap());
        assert!(verdict(&v).is_err());
        // An untouched work (the input order) is rejected too.
        assert!(Sort::check(&input, &Sort::prepare(&input), &()).is_err());
    }

    #[test]
    fn fingerprint_ignores_order_only() {
        let a = Fingerprint::of([1, 2, 3, 3]);
        assert_eq!(a, Fingerprint::of([3, 1, 3, 2]));
        assert_ne!(a, Fingerprint::of([1, 2, 3]));
        assert_ne!(a, Fingerprint::of([1, 2, 2, 3]));
        assert_ne!(a, Fingerprint::of([0, 2, 3, 4]));
        assert_ne!(Fingerprint::of([0]), Fingerprint::of([]));
    }
}
