//! `knapsack`: the 0-1 knapsack problem by branch and bound, Cilk-5's `knapsack` example
//! (Matteo Frigo's) as Fibril benchmarks it (Fibril Table 1: 32 items, capacity 900,
//! optimum 733).
//!
//! # Algorithm
//!
//! The items are sorted by decreasing value per weight (untimed, with the input). The search
//! of `(items, c, v)` (the items left, the capacity left, the value so far):
//!
//! - `c < 0`: infeasible (`NONE`, Cilk's `INT_MIN`);
//! - no item left or `c == 0`: the value `v`;
//! - if the bound `v + c·value/weight` of the first item left (integer division, as in Cilk)
//!   is below the best value found so far, the branch is pruned (`NONE`);
//! - otherwise the best of the search without the first item and the search with it; the
//!   best value so far is raised to it.
//!
//! The parallel variants fork "without" and call "with" (Cilk's spawn and call), as
//! `join(without, with)`. Subproblems with at most `cutoff` items left (a parameter, 0 in every
//! preset, as in Cilk-5 and Fibril) are searched serially ([`serial`]).
//!
//! # The shared best value
//!
//! Cilk shares the best value so far as a plain `int` and updates it with a racy
//! read-compare-write ("the program is still correct"). Here it is an [`AtomicI64`] read with
//! `Relaxed` loads and raised with `fetch_max` (after a `Relaxed` load shows it is lower, so
//! the common case costs no atomic read-modify-write, as Cilk's). The answer is the optimum
//! whatever the order of the updates: the bound is an upper bound of its branch (the items
//! are sorted by ratio, and a branch's best value is an integer no greater than
//! `v + c·ratio`), and the best value so far is always a feasible value, so the optimal branch
//! is never pruned. How much is pruned, and so the work, depends on the order in which tasks
//! find good values: in parallel it varies from run to run.
//!
//! # Work per task
//!
//! A node is a comparison, a division and a load of the shared best value: less work than a
//! join or a fork costs, with 3.5·10^7 joins on the paper's input. Like `fib`, this workload
//! measures the fork overhead unless `cutoff` is raised (the times per join and T_1/T_s per
//! runtime: `paper-figures/measurements.md`).
//!
//! # Check
//!
//! The answer must equal the optimum computed by dynamic programming over the capacities
//! ([`optimum`], `O(items·capacity)`, untimed, with the input); for the paper's input that is
//! 733, Fibril's expected value.

use crate::{Checked, Params, Size, Variant, Workload};
use std::future::Future;
use std::sync::atomic::{AtomicI64, Ordering::Relaxed};
use stealbench_schedulers::{AsyncForkJoin, AsyncWorker, ForkJoin, Worker};

/// The workload marker type.
#[derive(Debug)]
pub struct Knapsack;

/// An item: its value and its weight (`weight > 0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item {
    /// Value.
    pub value: i64,
    /// Weight, positive.
    pub weight: i64,
}

/// The 32 items `(value, weight)` of Fibril's knapsack benchmark, in its order (before the
/// sort by ratio): `test/knapsack.c` of github.com/chaoran/fibril, whose
/// capacity is 900 and expected optimum 733.
pub const ITEMS: [(i64, i64); 32] = [
    (15, 23),
    (22, 12),
    (17, 42),
    (1, 13),
    (32, 21),
    (65, 43),
    (23, 56),
    (4, 7),
    (4, 8),
    (32, 42),
    (51, 32),
    (22, 12),
    (17, 24),
    (12, 13),
    (23, 21),
    (56, 47),
    (23, 65),
    (6, 7),
    (4, 7),
    (32, 42),
    (22, 42),
    (59, 32),
    (23, 12),
    (12, 24),
    (12, 13),
    (23, 21),
    (39, 48),
    (22, 65),
    (6, 7),
    (4, 7),
    (33, 42),
    (18, 53),
];

/// Fibril's capacity for [`ITEMS`].
pub const CAPACITY: i64 = 900;

/// The optimum of [`ITEMS`] at [`CAPACITY`] (Fibril's `verify`).
pub const OPTIMUM: i64 = 733;

/// No feasible solution (Cilk's `INT_MIN`); also the best value before any is found.
pub const NONE: i64 = i64::MIN;

/// The first `n` items of [`ITEMS`] sorted by decreasing value per weight, the order the
/// search needs. The sort is stable and compares ratios exactly (cross products); Cilk's
/// `qsort` leaves the order of equal ratios unspecified, which changes the work, never the
/// answer.
///
/// # Panics
/// If `n > ITEMS.len()`.
pub fn sorted_items(n: usize) -> Vec<Item> {
    let mut items: Vec<Item> = ITEMS[..n]
        .iter()
        .map(|&(value, weight)| Item { value, weight })
        .collect();
    items.sort_by(|a, b| (b.value * a.weight).cmp(&(a.value * b.weight)));
    items
}

/// One node of the search, written once: `Ok(value)` at a leaf or a pruned branch, otherwise
/// the first item and the items after it.
#[inline]
fn step<'a>(
    items: &'a [Item],
    c: i64,
    v: i64,
    best: &AtomicI64,
) -> Result<i64, (Item, &'a [Item])> {
    if c < 0 {
        return Ok(NONE);
    }
    let Some((&e, rest)) = items.split_first() else {
        return Ok(v);
    };
    if c == 0 {
        return Ok(v);
    }
    let bound = v + c * e.value / e.weight;
    if bound < best.load(Relaxed) {
        return Ok(NONE);
    }
    Err((e, rest))
}

/// Raises the best value so far to `x` (a `Relaxed` load first: the `fetch_max` only when
/// `x` is higher) and returns `x`.
#[inline]
fn record(best: &AtomicI64, x: i64) -> i64 {
    if x > best.load(Relaxed) {
        best.fetch_max(x, Relaxed);
    }
    x
}

/// The kernel: the best value of `items` (sorted by ratio) in capacity `c` with value `v`
/// so far, or [`NONE`]; the serial branch and bound (Cilk's `knapsack` without its spawn).
pub fn serial(items: &[Item], c: i64, v: i64, best: &AtomicI64) -> i64 {
    match step(items, c, v, best) {
        Ok(x) => x,
        Err((e, rest)) => {
            let without = serial(rest, c, v, best);
            let with = serial(rest, c - e.weight, v + e.value, best);
            record(best, without.max(with))
        }
    }
}

/// Fork-join: "without" forked, "with" called; at most `cutoff` items left, serial.
pub fn fj<W: Worker>(
    w: &W,
    items: &[Item],
    c: i64,
    v: i64,
    best: &AtomicI64,
    cutoff: usize,
) -> i64 {
    if items.len() <= cutoff {
        return serial(items, c, v, best);
    }
    match step(items, c, v, best) {
        Ok(x) => x,
        Err((e, rest)) => {
            let (without, with) = w.join(
                |w| fj(w, rest, c, v, best, cutoff),
                |w| fj(w, rest, c - e.weight, v + e.value, best, cutoff),
            );
            record(best, without.max(with))
        }
    }
}

/// Fork-join on the async front-end: as [`fj`], under [`AsyncWorker::join`].
pub fn fj_async<'s, C: AsyncWorker<'s>>(
    c: C,
    items: &'s [Item],
    cap: i64,
    v: i64,
    best: &'s AtomicI64,
    cutoff: usize,
) -> impl Future<Output = i64> + Send + 's {
    async move {
        if items.len() <= cutoff {
            return serial(items, cap, v, best);
        }
        match step(items, cap, v, best) {
            Ok(x) => x,
            Err((e, rest)) => {
                let (without, with) = c
                    .join(
                        move |c| fj_async(c, rest, cap, v, best, cutoff),
                        move |c| fj_async(c, rest, cap - e.weight, v + e.value, best, cutoff),
                    )
                    .await;
                record(best, without.max(with))
            }
        }
    }
}

/// The optimum of `items` in `capacity`, by dynamic programming over the capacities
/// (`O(items·capacity)`, the capacity first lowered to the items' total weight): the reference
/// of the check.
pub fn optimum(items: &[Item], capacity: usize) -> i64 {
    let total: i64 = items.iter().map(|e| e.weight).sum();
    let capacity = capacity.min(usize::try_from(total).expect("positive weights"));
    let mut best = vec![0i64; capacity + 1];
    for e in items {
        let w = usize::try_from(e.weight).expect("positive weight");
        for c in (w..=capacity).rev() {
            best[c] = best[c].max(best[c - w] + e.value);
        }
    }
    best[capacity]
}

/// Checks an answer against the optimum.
pub fn check_value(optimum: i64, answer: i64) -> Result<Checked, String> {
    if answer == optimum {
        Ok(Checked::new(
            format!("best value {answer}"),
            "the optimum by dynamic programming over the capacities",
        ))
    } else {
        Err(format!(
            "best value {answer}, expected the optimum {optimum}"
        ))
    }
}

/// The input: the items sorted by ratio, the capacity, the cutoff and the optimum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnapsackInput {
    /// The first `n` items of [`ITEMS`], sorted by decreasing value per weight.
    pub items: Vec<Item>,
    /// The knapsack's capacity.
    pub capacity: i64,
    /// Subproblems with at most this many items left are searched serially (0: none).
    pub cutoff: usize,
    /// The optimum, by [`optimum`].
    pub optimum: i64,
}

impl Workload for Knapsack {
    const NAME: &'static str = "knapsack";
    const DESCRIPTION: &'static str =
        "Cilk-5 0-1 knapsack by branch and bound, a shared best value (spawn overhead)";
    const VARIANTS: &'static [Variant] = &[Variant::Fj];
    const ASYNC_VARIANTS: &'static [Variant] = &[Variant::Fj];

    type Input = KnapsackInput;
    /// The best value found so far, shared by the tasks (fresh per repetition).
    type Work = AtomicI64;
    type Answer = i64;

    fn preset(size: Size) -> Params {
        // The paper's input takes about 0.14 s serially, so `quick` is the paper's input; the
        // work falls steeply with the capacity (730: 3.7·10^6 joins, a tenth of 3.5·10^7).
        let capacity = match size {
            Size::Paper | Size::Quick => CAPACITY as u64,
            Size::Small => 730,
            Size::Test => 400,
        };
        Params::new()
            .int("n", ITEMS.len() as u64)
            .int("capacity", capacity)
            .int("cutoff", 0)
    }

    fn input(params: &Params) -> Result<KnapsackInput, String> {
        let n = params.get_usize("n")?;
        if n > ITEMS.len() {
            return Err(format!("n={n}: Fibril's table has {} items", ITEMS.len()));
        }
        let capacity = params.get_int("capacity");
        let capacity = i64::try_from(capacity)
            .ok()
            .filter(|&c| c < 1 << 40)
            .ok_or_else(|| format!("capacity={capacity}: must be below 2^40"))?;
        let items = sorted_items(n);
        let optimum = optimum(&items, capacity as usize);
        Ok(KnapsackInput {
            items,
            capacity,
            cutoff: params.get_usize("cutoff")?,
            optimum,
        })
    }

    fn prepare(_input: &KnapsackInput) -> AtomicI64 {
        AtomicI64::new(NONE)
    }

    fn run<S: ForkJoin>(
        pool: &S,
        variant: Variant,
        input: &KnapsackInput,
        best: &mut AtomicI64,
    ) -> i64 {
        let (items, c, cutoff, best) = (&input.items[..], input.capacity, input.cutoff, &*best);
        match variant {
            Variant::Fj => pool.run(|w| fj(w, items, c, 0, best, cutoff)),
            v => panic!("knapsack has no {v} variant"),
        }
    }

    fn run_async<S: AsyncForkJoin>(
        pool: &S,
        variant: Variant,
        input: &KnapsackInput,
        best: &mut AtomicI64,
    ) -> i64 {
        let (items, c, cutoff, best) = (&input.items[..], input.capacity, input.cutoff, &*best);
        match variant {
            Variant::Fj => pool.run_async(|cx| fj_async(cx, items, c, 0, best, cutoff)),
            v => panic!("knapsack has no async {v} variant"),
        }
    }

    fn kernel(input: &KnapsackInput, best: &mut AtomicI64) -> i64 {
        serial(&input.items, input.capacity, 0, best)
    }

    fn check(input: &KnapsackInput, _best: &AtomicI64, answer: &i64) -> Result<Checked, String> {
        check_value(input.optimum, *answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    /// The best value by the kernel, with a fresh shared best.
    fn search(items: &[Item], capacity: i64) -> i64 {
        serial(items, capacity, 0, &AtomicI64::new(NONE))
    }

    #[test]
    fn optimum_of_the_paper_input_is_fibrils() {
        assert_eq!(optimum(&sorted_items(32), CAPACITY as usize), OPTIMUM);
    }

    #[test]
    fn kernel_matches_dynamic_programming() {
        for (n, capacity) in [
            (0, 10),
            (1, 0),
            (1, 22),
            (1, 23),
            (5, 50),
            (12, 200),
            (18, 300),
        ] {
            let items = sorted_items(n);
            assert_eq!(
                search(&items, capacity),
                optimum(&items, capacity as usize),
                "n={n} capacity={capacity}"
            );
        }
        assert_eq!(search(&sorted_items(3), -1), NONE);
    }

    #[test]
    fn items_are_sorted_by_ratio() {
        let items = sorted_items(32);
        assert_eq!(items.len(), 32);
        assert!(
            items
                .windows(2)
                .all(|p| p[0].value * p[1].weight >= p[1].value * p[0].weight)
        );
        assert_eq!(
            items[0],
            Item {
                value: 23,
                weight: 12
            }
        );
    }

    #[test]
    fn variants_on_serial_and_two_workers() {
        let pools = testing::Pools::start();
        let items = sorted_items(20);
        let capacity = 400;
        let optimum = optimum(&items, capacity as usize);
        for cutoff in [0, 6, 40] {
            // The check is the optimum by dynamic programming.
            let input = KnapsackInput {
                items: items.clone(),
                capacity,
                cutoff,
                optimum,
            };
            pools.check_every_variant::<Knapsack>(&input, |_, _, _| {});
        }
    }

    #[test]
    fn presets_and_workload_runs() {
        assert_eq!(
            Knapsack::preset(Size::Paper).to_string(),
            "n=32 capacity=900 cutoff=0"
        );
        assert_eq!(Knapsack::input_at(Size::Paper).optimum, OPTIMUM);
        let input = Knapsack::input_at(Size::Test);
        let pool = testing::serial();
        testing::check_every_variant::<Knapsack>(&pool, &pool, &input, |what, best, &a| {
            assert!(Knapsack::check(&input, best, &(a - 1)).is_err(), "{what}");
        });
        let mut p = Knapsack::preset(Size::Test);
        p.set("n", "33").unwrap();
        assert!(Knapsack::input(&p).unwrap_err().starts_with("n=33"));
        // A capacity beyond the total weight: every item fits.
        p.set("n", "10").unwrap();
        p.set("capacity", "10^9").unwrap();
        let input = Knapsack::input(&p).unwrap();
        assert_eq!(input.optimum, ITEMS[..10].iter().map(|e| e.0).sum::<i64>());
    }

    #[test]
    fn check_rejects_wrong_answers() {
        assert_eq!(
            check_value(OPTIMUM, 733).unwrap().to_string(),
            "best value 733; checked against the optimum by dynamic programming over the capacities"
        );
        assert!(check_value(OPTIMUM, 732).is_err());
        assert!(check_value(OPTIMUM, NONE).is_err());
    }
}
