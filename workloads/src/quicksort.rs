//! `quicksort`: the parallel quicksort of Fibril's benchmarks (Fibril Table 1: `n = 10^8`
//! random integers).
//!
//! # Algorithm
//!
//! [`partition`] is Fibril's serial Hoare partition around the middle element: two indices
//! move towards each other, skipping elements below (from the left) and above (from the
//! right) the pivot and swapping the pairs that stop both. It leaves the elements up to the
//! right index at most the pivot and those from the left index on at least the pivot (with
//! possibly one element equal to the pivot between them), and both parts shorter than the
//! range. The two parts are then sorted in parallel: the left part forked, the right part
//! called (Fibril's fork and call), as `join(left, right)`.
//!
//! Ranges shorter than `cutoff` elements (a parameter) are sorted serially by the same
//! recursion ([`serial`]). Fibril forks down to ranges of two elements (`cutoff = 2`), and so
//! does every preset: the partition of a range of `m` elements is `m` comparisons, so only
//! the ranges near the leaves do less work than a fork, and the overhead stays small (T_1/T_s
//! per runtime: `paper-figures/measurements.md`).
//!
//! Keys are `u32`, as Fibril's `int`s from `rand()`: here from [`SplitMix64`] with a seed (a
//! parameter), the upper 32 bits of each draw.
//!
//! # Check
//!
//! The output must be sorted and have the input's [`Fingerprint`] (the multiset fingerprint
//! of `sort`, checked by [`check_sorted`], `sort`'s check), so it is the sorted input.

use crate::params::check_memory;
use crate::rng::SplitMix64;
use crate::sort::{Fingerprint, check_sorted};
use crate::{Checked, Params, Size, Variant, Workload};
use std::future::Future;
use stealbench_schedulers::{AsyncForkJoin, AsyncWorker, ForkJoin, Worker};

/// The workload marker type.
#[derive(Debug)]
pub struct Quicksort;

/// The seed of the input.
const INPUT_SEED: u64 = 0x5153_5eed_0000_0001;

/// Fibril's cutoff: every range of two or more elements is partitioned and forked.
pub const CUTOFF: usize = 2;

/// Fibril's partition of `a` (`a.len() >= 2`) around its middle element. Returns `(r, l)`,
/// `r <= l <= r + 1`: `a[..r]` is at most the pivot, `a[l..]` at least the pivot, `a[r..l]`
/// (at most one element) equal to it. At least one swap happens (both scans stop at the
/// pivot itself, if not before), so both `r` and `a.len() - l` are below `a.len()`.
#[inline]
pub fn partition(a: &mut [u32]) -> (usize, usize) {
    debug_assert!(a.len() >= 2);
    let pivot = a[a.len() / 2];
    // `r` is one past Fibril's `right`, so it never goes below zero. Fibril's loop takes one
    // of three branches per step (`a[l] < pivot`: advance `l`; else `a[r-1] > pivot`: retreat
    // `r`; else swap); these two inner loops take the same steps in the same order, with
    // branches a processor predicts better.
    let (mut l, mut r) = (0, a.len());
    loop {
        while l < r && a[l] < pivot {
            l += 1;
        }
        while l < r && a[r - 1] > pivot {
            r -= 1;
        }
        if l >= r {
            break;
        }
        a.swap(l, r - 1);
        l += 1;
        r -= 1;
    }
    (r, l)
}

/// The two parts of `a` left by [`partition`]: `a[..r]` and `a[l..]`.
#[inline]
fn parts(a: &mut [u32]) -> (&mut [u32], &mut [u32]) {
    let (r, l) = partition(a);
    let (lo, hi) = a.split_at_mut(l);
    (&mut lo[..r], hi)
}

/// The kernel: Fibril's quicksort without its fork.
pub fn serial(a: &mut [u32]) {
    if a.len() < 2 {
        return;
    }
    let (lo, hi) = parts(a);
    serial(lo);
    serial(hi);
}

/// Fork-join: the left part forked, the right part called; ranges shorter than `cutoff`
/// sorted serially.
pub fn fj<W: Worker>(w: &W, a: &mut [u32], cutoff: usize) {
    if a.len() < cutoff.max(2) {
        serial(a);
        return;
    }
    let (lo, hi) = parts(a);
    w.join(|w| fj(w, lo, cutoff), |w| fj(w, hi, cutoff));
}

/// Fork-join on the async front-end: as [`fj`], under [`AsyncWorker::join`].
pub fn fj_async<'s, C: AsyncWorker<'s>>(
    c: C,
    a: &'s mut [u32],
    cutoff: usize,
) -> impl Future<Output = ()> + Send + 's {
    async move {
        if a.len() < cutoff.max(2) {
            serial(a);
            return;
        }
        let (lo, hi) = parts(a);
        c.join(
            move |c| fj_async(c, lo, cutoff),
            move |c| fj_async(c, hi, cutoff),
        )
        .await;
    }
}

/// The input: the keys, their fingerprint and the cutoff.
#[derive(Debug, Clone)]
pub struct QuicksortInput {
    /// The keys, in input order.
    pub data: Vec<u32>,
    /// The fingerprint of `data`.
    pub fingerprint: Fingerprint,
    /// Ranges shorter than this are sorted serially.
    pub cutoff: usize,
}

impl QuicksortInput {
    /// The input of given keys, with Fibril's cutoff.
    pub fn new(data: Vec<u32>) -> Self {
        let fingerprint = Fingerprint::of(data.iter().map(|&x| u64::from(x)));
        QuicksortInput {
            data,
            fingerprint,
            cutoff: CUTOFF,
        }
    }

    /// `n` random keys from `seed` (the upper 32 bits of each SplitMix64 draw).
    pub fn random(n: usize, seed: u64) -> Self {
        let mut rng = SplitMix64::new(seed);
        QuicksortInput::new((0..n).map(|_| (rng.next_u64() >> 32) as u32).collect())
    }
}

impl Workload for Quicksort {
    const NAME: &'static str = "quicksort";
    const DESCRIPTION: &'static str =
        "Fibril's parallel quicksort: serial partition, the two parts in parallel, u32 keys";
    const VARIANTS: &'static [Variant] = &[Variant::Fj];
    const ASYNC_VARIANTS: &'static [Variant] = &[Variant::Fj];

    type Input = QuicksortInput;
    /// A fresh copy of the keys, sorted in place.
    type Work = Vec<u32>;
    type Answer = ();

    fn preset(size: Size) -> Params {
        let n: u64 = match size {
            Size::Paper => 100_000_000,
            Size::Small => 10_000_000,
            Size::Quick => 3_000_000,
            Size::Test => 10_000,
        };
        Params::new()
            .int("n", n)
            .int("seed", INPUT_SEED)
            .int("cutoff", CUTOFF as u64)
    }

    fn input(params: &Params) -> Result<QuicksortInput, String> {
        let n = match params.get_usize("n")? {
            0 => return Err("n=0: nothing to sort".into()),
            n => n,
        };
        // The input and a repetition's copy.
        check_memory(&format!("n={n}"), 2.0 * 4.0 * n as f64)?;
        let mut input = QuicksortInput::random(n, params.get_int("seed"));
        input.cutoff = params.get_usize("cutoff")?;
        Ok(input)
    }

    fn prepare(input: &QuicksortInput) -> Vec<u32> {
        input.data.clone()
    }

    fn run<S: ForkJoin>(pool: &S, variant: Variant, input: &QuicksortInput, work: &mut Vec<u32>) {
        let (a, cutoff) = (&mut work[..], input.cutoff);
        match variant {
            Variant::Fj => pool.run(|w| fj(w, a, cutoff)),
            v => panic!("quicksort has no {v} variant"),
        }
    }

    fn run_async<S: AsyncForkJoin>(
        pool: &S,
        variant: Variant,
        input: &QuicksortInput,
        work: &mut Vec<u32>,
    ) {
        let (a, cutoff) = (&mut work[..], input.cutoff);
        match variant {
            Variant::Fj => pool.run_async(|c| fj_async(c, a, cutoff)),
            v => panic!("quicksort has no async {v} variant"),
        }
    }

    fn kernel(_input: &QuicksortInput, work: &mut Vec<u32>) {
        serial(work);
    }

    fn check(input: &QuicksortInput, work: &Vec<u32>, _answer: &()) -> Result<Checked, String> {
        check_sorted(work.iter().map(|&x| u64::from(x)), &input.fingerprint)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    #[test]
    fn partition_splits_around_the_pivot() {
        let mut rng = SplitMix64::new(3);
        for len in 2..200 {
            for modulus in [1, 2, 5, u64::MAX] {
                let mut a: Vec<u32> = (0..len)
                    .map(|_| (rng.next_u64() % modulus) as u32)
                    .collect();
                let pivot = a[a.len() / 2];
                let (r, l) = partition(&mut a);
                assert!(
                    r <= l && l - r <= 1 && r < a.len() && l > 0,
                    "len {len}: {r} {l}"
                );
                assert!(a[..r].iter().all(|&x| x <= pivot));
                assert!(a[l..].iter().all(|&x| x >= pivot));
                assert!(a[r..l].iter().all(|&x| x == pivot));
            }
        }
    }

    #[test]
    fn kernel_matches_std_sort() {
        let mut rng = SplitMix64::new(4);
        let inputs: Vec<Vec<u32>> = vec![
            vec![],
            vec![7],
            vec![2, 1],
            (0..1000).collect(),
            (0..1000).rev().collect(),
            vec![5; 1000],
            (0..1000).map(|x| x % 3).collect(),
            (0..5000).map(|_| rng.next_u64() as u32).collect(),
        ];
        for mut a in inputs {
            let mut want = a.clone();
            want.sort_unstable();
            serial(&mut a);
            assert_eq!(a, want);
        }
    }

    #[test]
    fn variants_on_serial_and_two_workers() {
        let pools = testing::Pools::start();
        let input = QuicksortInput::random(20_000, 5);
        for cutoff in [0, 2, 100, 1 << 20] {
            // The check: sorted, and a permutation of the input.
            let input = QuicksortInput {
                cutoff,
                ..input.clone()
            };
            pools.check_every_variant::<Quicksort>(&input, |_, _, _| {});
        }
    }

    #[test]
    fn presets_and_workload_runs() {
        assert_eq!(
            Quicksort::preset(Size::Paper).to_string(),
            format!("n=100000000 seed={INPUT_SEED} cutoff=2")
        );
        let input = Quicksort::input_at(Size::Test);
        // The untouched copy is rejected.
        assert!(Quicksort::check(&input, &Quicksort::prepare(&input), &()).is_err());
        let mut p = Quicksort::preset(Size::Test);
        p.set("n", "0").unwrap();
        assert!(Quicksort::input(&p).unwrap_err().starts_with("n=0"));
    }

    #[test]
    fn check_rejects_wrong_answers() {
        let input = QuicksortInput::random(1000, 6);
        let mut sorted = input.data.clone();
        serial(&mut sorted);
        let check = |v: &[u32]| Quicksort::check(&input, &v.to_vec(), &());
        assert_eq!(
            check(&sorted).unwrap().answer,
            format!(
                "1000 keys in ascending order, from {} to {}",
                sorted[0], sorted[999]
            )
        );
        assert!(check(&input.data).unwrap_err().contains("not sorted"));
        let mut v = sorted.clone();
        v[500] = v[499];
        assert!(check(&v).unwrap_err().contains("permutation"));
        assert!(check(&sorted[1..]).is_err());
    }
}
