//! `hqsort`: Halstead's quicksort (Multilisp, 1985, his Figure 1), the application of
//! futures whose deviations Spoonhower et al. measure (SPAA'09, Section 5 and Figure 6).
//!
//! # Algorithm
//!
//! Lists are streams: a list is empty, a cell whose tail is a list, or the value of a future
//! ([`List`]). Halstead's two functions, written here as he wrote them:
//!
//! ```text
//! qs(l, rest)        = if l = nil then rest
//!                      else let parts = partition(car l, cdr l)
//!                           in qs(left parts, future(cons(car l, qs(right parts, rest))))
//! partition(e, l)    = if l = nil then (nil, nil)
//!                      else let cdrparts = future(partition(e, cdr l))
//!                           in if e > car l
//!                              then (cons(car l, future(left cdrparts)), future(right cdrparts))
//!                              else (future(left cdrparts), cons(car l, future(right cdrparts)))
//! ```
//!
//! `partition` streams: it returns its first cell at once, with the rest of both halves as
//! futures of the partition of the tail, so the recursive calls of `qs` start on the first
//! elements while the partition goes on. `qs` passes the sorted right half, consed onto `rest`,
//! as a future argument of the call on the left half: the results are never concatenated.
//! Span O(n), work O(n log n), O(n log n) futures, each touched at least once (every future of
//! a half is touched by whoever walks that half; the result is walked to the end to check it).
//!
//! The futures are general (multi-touch, touched from tasks that are not their creator's
//! descendants): the `gf` variant, the only one. Serially (one worker) every future runs at its
//! creation, so the serial elision is this same code on the `serial` runtime, the recursion of
//! `partition` as deep as the list is long: the sizes stay within what a thread's 8 MiB stack
//! and a fiber's 16 MiB hold (`sizes`).
//!
//! # Check
//!
//! The walk of the result (touching every future on it) must give the input sorted
//! (`sort_unstable`, computed in `input`, outside the timed region).

use crate::rng::SplitMix64;
use crate::{Checked, Params, Size, Variant, Workload};
use std::rc::Rc;
use std::sync::Arc;
use stealbench_schedulers::{AsyncForkJoin, ForkJoin, FutureForkJoin, Futures, SharedHandle};

/// The workload marker type.
#[derive(Debug)]
pub struct Hqsort;

/// A stream of keys: empty, a cell, the value of a future (Multilisp's futures are
/// transparent; here the touch is `force`), or the input's keys read in place.
pub enum List<'s, W: Futures> {
    /// The empty list.
    Nil,
    /// A key and the rest of the list.
    Cons(u32, Arc<List<'s, W>>),
    /// The list a future computes.
    Later(W::SharedFuture<'s, List<'s, W>>),
    /// Halstead's input list, a list without futures: these keys in order. Read where they
    /// lie, so the timed run builds no input.
    Keys(&'s [u32]),
}

impl<'s, W: Futures> Clone for List<'s, W> {
    fn clone(&self) -> Self {
        match self {
            List::Nil => List::Nil,
            List::Cons(x, t) => List::Cons(*x, Arc::clone(t)),
            List::Later(f) => List::Later(f.clone()),
            List::Keys(k) => List::Keys(k),
        }
    }
}

/// The two halves of a partition: the keys below the pivot, and the others.
pub struct Parts<'s, W: Futures> {
    left: List<'s, W>,
    right: List<'s, W>,
}

/// The list `l` stands for: touches the futures in front of it until a cell, the keys or the
/// end.
fn force<'a, 's, W: Futures>(w: &W, mut l: &'a List<'s, W>) -> &'a List<'s, W> {
    while let List::Later(f) = l {
        l = f.get(w);
    }
    l
}

/// `car` and `cdr` of `l` after forcing it, or `None` for the empty list.
fn first<'s, W: Futures>(w: &W, l: &List<'s, W>) -> Option<(u32, List<'s, W>)> {
    match force(w, l) {
        List::Nil | List::Keys([]) => None,
        List::Cons(x, tail) => Some((*x, List::clone(tail))),
        List::Keys([x, rest @ ..]) => Some((*x, List::Keys(rest))),
        List::Later(_) => unreachable!("force stops at a cell, the keys or the end"),
    }
}

/// Halstead's `partition(e, l)`.
fn partition<'s, W: Futures>(sc: &W::Scope<'s>, w: &W, e: u32, l: List<'s, W>) -> Parts<'s, W> {
    let Some((x, tail)) = first(w, &l) else {
        return Parts {
            left: List::Nil,
            right: List::Nil,
        };
    };
    let cdrparts = w.shared_future(sc, move |sc, w| partition(sc, w, e, tail));
    let for_right = cdrparts.clone();
    let left = List::Later(w.shared_future(sc, move |_, w| cdrparts.get(w).left.clone()));
    let right = List::Later(w.shared_future(sc, move |_, w| for_right.get(w).right.clone()));
    if e > x {
        Parts {
            left: List::Cons(x, Arc::new(left)),
            right,
        }
    } else {
        Parts {
            left,
            right: List::Cons(x, Arc::new(right)),
        }
    }
}

/// Halstead's `qs(l, rest)`: `l` sorted, followed by `rest`.
fn qs<'s, W: Futures>(sc: &W::Scope<'s>, w: &W, l: List<'s, W>, rest: List<'s, W>) -> List<'s, W> {
    let Some((x, tail)) = first(w, &l) else {
        return rest;
    };
    let Parts { left, right } = partition(sc, w, x, tail);
    let sorted_right = w.shared_future(sc, move |sc, w| {
        List::Cons(x, Arc::new(qs(sc, w, right, rest)))
    });
    qs(sc, w, left, List::Later(sorted_right))
}

/// Walks `l` to its end, touching every future on the way, and collects its keys.
fn walk<'s, W: Futures>(w: &W, l: &List<'s, W>, out: &mut Vec<u32>) {
    let mut cur = l.clone();
    while let Some((x, tail)) = first(w, &cur) {
        out.push(x);
        cur = tail;
    }
}

/// The general-futures variant: sorts `keys` into `out`.
pub fn gf<W: Futures>(w: &W, keys: &[u32], out: &mut Vec<u32>) {
    out.clear();
    w.scope(|sc, w| {
        let sorted = qs(sc, w, List::Keys(keys), List::Nil);
        walk(w, &sorted, out);
    });
}

/// A list of the serial elision ([`serial`]): no futures, so a cell's tail is the list itself;
/// Halstead's input is read in place as in [`List::Keys`].
#[derive(Clone)]
enum Plain<'a> {
    /// The empty list.
    Nil,
    /// A key and the rest of the list.
    Cons(u32, Rc<Plain<'a>>),
    /// The input's keys, in order.
    Keys(&'a [u32]),
}

/// `car` and `cdr` of `l`, or `None` for the empty list.
fn plain_first<'a>(l: &Plain<'a>) -> Option<(u32, Plain<'a>)> {
    match l {
        Plain::Nil | Plain::Keys([]) => None,
        Plain::Cons(x, tail) => Some((*x, Plain::clone(tail))),
        Plain::Keys([x, rest @ ..]) => Some((*x, Plain::Keys(rest))),
    }
}

/// Halstead's `partition(e, l)`, every future a call.
fn plain_partition<'a>(e: u32, l: Plain<'a>) -> (Plain<'a>, Plain<'a>) {
    let Some((x, tail)) = plain_first(&l) else {
        return (Plain::Nil, Plain::Nil);
    };
    let (left, right) = plain_partition(e, tail);
    if e > x {
        (Plain::Cons(x, Rc::new(left)), right)
    } else {
        (left, Plain::Cons(x, Rc::new(right)))
    }
}

/// Halstead's `qs(l, rest)`, every future a call.
fn plain_qs<'a>(l: Plain<'a>, rest: Plain<'a>) -> Plain<'a> {
    let Some((x, tail)) = plain_first(&l) else {
        return rest;
    };
    let (left, right) = plain_partition(x, tail);
    let sorted_right = Plain::Cons(x, Rc::new(plain_qs(right, rest)));
    plain_qs(left, sorted_right)
}

/// The kernel: the serial elision of [`gf`] (every future replaced by a call, so a future's
/// list is its value), sorting `keys` into `out`.
pub fn serial(keys: &[u32], out: &mut Vec<u32>) {
    out.clear();
    let mut cur = plain_qs(Plain::Keys(keys), Plain::Nil);
    while let Some((x, tail)) = plain_first(&cur) {
        out.push(x);
        cur = tail;
    }
}

/// The input: `n` keys, and the same sorted.
#[derive(Debug, Clone)]
pub struct HqsortInput {
    /// The keys, in input order.
    pub keys: Vec<u32>,
    /// The keys sorted (the check's reference).
    pub sorted: Vec<u32>,
}

/// The seed of the keys.
const INPUT_SEED: u64 = 0x6871_736f_7274_0001;

/// The number of keys of a size. The recursion of `partition` is as deep as the list is long
/// on a serial run (the serial elision, on a thread's stack): these stay within 8 MiB.
fn sizes(size: Size) -> usize {
    match size {
        Size::Paper => 20_000,
        Size::Small => 10_000,
        Size::Quick => 5_000,
        Size::Test => 300,
    }
}

impl HqsortInput {
    /// `n` uniformly random keys below 2^31 (seeded).
    pub fn random(n: usize, seed: u64) -> Self {
        let mut rng = SplitMix64::new(seed);
        let keys: Vec<u32> = (0..n).map(|_| (rng.next_u64() >> 33) as u32).collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        HqsortInput { keys, sorted }
    }
}

impl Workload for Hqsort {
    const NAME: &'static str = "hqsort";
    const DESCRIPTION: &'static str =
        "Halstead's quicksort: streamed partitions and the right half as a future (gf)";
    const VARIANTS: &'static [Variant] = &[Variant::Gf];
    const ASYNC_VARIANTS: &'static [Variant] = &[];

    type Input = HqsortInput;
    type Work = Vec<u32>;
    type Answer = ();

    fn preset(size: Size) -> Params {
        Params::new()
            .int("n", sizes(size) as u64)
            .int("seed", INPUT_SEED)
    }

    fn input(params: &Params) -> Result<HqsortInput, String> {
        let paper = sizes(Size::Paper);
        match params.get_usize("n")? {
            n @ 1.. if n <= paper => Ok(HqsortInput::random(n, params.get_int("seed"))),
            n => Err(format!(
                "n={n}: hqsort takes 1 to {paper} keys (its serial recursion is as deep as the list is long)"
            )),
        }
    }

    fn prepare(input: &HqsortInput) -> Vec<u32> {
        Vec::with_capacity(input.keys.len())
    }

    fn run<S: ForkJoin>(_pool: &S, variant: Variant, _input: &HqsortInput, _work: &mut Vec<u32>) {
        crate::not_without_futures::<Self>(variant)
    }

    fn run_futures<S: FutureForkJoin>(
        pool: &S,
        variant: Variant,
        input: &HqsortInput,
        work: &mut Vec<u32>,
    ) {
        match variant {
            Variant::Gf => pool.run(|w| gf(w, &input.keys, work)),
            v => panic!("hqsort has no {v} variant"),
        }
    }

    fn run_async<S: AsyncForkJoin>(_: &S, variant: Variant, _: &HqsortInput, _: &mut Vec<u32>) {
        panic!("hqsort has no async {variant} variant")
    }

    fn kernel(input: &HqsortInput, work: &mut Vec<u32>) {
        serial(&input.keys, work);
    }

    fn check(input: &HqsortInput, work: &Vec<u32>, _: &()) -> Result<Checked, String> {
        if work.len() != input.sorted.len() {
            return Err(format!(
                "the result has {} keys, the input {}",
                work.len(),
                input.sorted.len()
            ));
        }
        match work.iter().zip(&input.sorted).position(|(a, b)| a != b) {
            None => Ok(Checked::new(
                format!(
                    "{} keys in ascending order, from {} to {}",
                    work.len(),
                    work.first().copied().unwrap_or(0),
                    work.last().copied().unwrap_or(0)
                ),
                "the input sorted serially (sort_unstable)",
            )),
            Some(i) => Err(format!(
                "key {i} of the result is {}, the sorted input has {}",
                work[i], input.sorted[i]
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    #[test]
    fn sorts_on_the_serial_elision() {
        let pool = testing::serial();
        for (n, seed) in [(0, 1), (1, 2), (2, 3), (57, 4), (300, 5)] {
            let input = HqsortInput::random(n, seed);
            testing::check_every_variant::<Hqsort>(&pool, &pool, &input, |_, _, _| {});
        }
        // Duplicates and a sorted input (the deepest recursion of qs).
        let mut out = Vec::new();
        let keys = [5, 3, 5, 1, 3, 3, 0, 5];
        pool.run(|w| gf(w, &keys, &mut out));
        assert_eq!(out, [0, 1, 3, 3, 3, 5, 5, 5]);
        let keys: Vec<u32> = (0..200).collect();
        pool.run(|w| gf(w, &keys, &mut out));
        assert_eq!(out, keys);
    }

    #[test]
    fn a_wrong_result_fails_the_check() {
        let input = HqsortInput::random(50, 9);
        let checked = Hqsort::check(&input, &input.sorted, &()).unwrap();
        assert_eq!(
            checked.answer,
            format!(
                "50 keys in ascending order, from {} to {}",
                input.sorted[0], input.sorted[49]
            )
        );
        let mut out = input.sorted.clone();
        out[3] = out[3].wrapping_add(1);
        assert!(Hqsort::check(&input, &out, &()).is_err());
        assert!(Hqsort::check(&input, &input.sorted[1..].to_vec(), &()).is_err());
    }
}
