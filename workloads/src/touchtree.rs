//! `touchtree`: the producer and consumer of a tree of futures of Spoonhower et al.
//! (SPAA'09), Figure 5(b), built as a program: t futures, t touches.
//!
//! # The program
//!
//! ```text
//! produce(i) = spin(spin_us);                          the producer's delay at a node
//!              node(i, future(produce(2i + 1)),        every node, inner or leaf, is the
//!                      future(produce(2i + 2)))        value of a future (heap order, i < t)
//! consume(n) = i + consume(touch(left n)) + consume(touch(right n))
//! main       = consume(touch(future(produce(0))))
//! ```
//!
//! The producer makes the tree top-down, each node after a delay; the consumer walks it in the
//! same order, touching each node's future: t futures and t touches, span Θ(log t) plus the
//! delays. On two workers the consumer, stolen once at the start, runs ahead of the producer
//! and suspends on a touch again and again. How many steals the schedulers take to keep both
//! workers busy differs: the paper's construction adds "diamonds" that keep the parsimonious
//! thief busy from its own deque so that one steal suffices; this program has none, so the
//! figure reports the steals beside the deviations, and what it compares is how the
//! deviations grow with t and how they relate to the steals under `abp` and `prows`.
//!
//! The handles travel inside other futures' values and are touched by a task that did not
//! create them: general futures (`gf`).
//!
//! # Check
//!
//! The answer is the sum of the node indices, `t(t − 1)/2`.

use crate::touchchain::spin;
use crate::{Params, Size, Variant, Workload};
use std::time::Duration;
use stealbench_schedulers::{AsyncForkJoin, ForkJoin, Scope, SharedHandle, Worker};

/// The workload marker type.
#[derive(Debug)]
pub struct Touchtree;

/// The input: the number of nodes (futures) and the producer's delay per node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeInput {
    /// Nodes of the tree, each the value of a future.
    pub t: usize,
    /// The producer's delay at each node.
    pub spin: Duration,
}

/// A node of the tree: its index and its children's futures.
pub struct Node<'s, S: Scope<'s> + 's> {
    index: usize,
    left: Option<S::SharedFuture<Node<'s, S>>>,
    right: Option<S::SharedFuture<Node<'s, S>>>,
}

/// The producer: node `i` after the delay, its children as futures.
fn produce<'s, S: Scope<'s> + 's>(s: &S, w: &S::Worker, i: usize, input: TreeInput) -> Node<'s, S> {
    spin(input.spin);
    let child =
        |c: usize| (c < input.t).then(|| s.shared_future(w, move |s, w| produce(s, w, c, input)));
    let left = child(2 * i + 1);
    let right = child(2 * i + 2);
    Node {
        index: i,
        left,
        right,
    }
}

/// The consumer: touches every future of the tree in the producer's order.
fn consume<'s, S: Scope<'s> + 's>(w: &S::Worker, n: &Node<'s, S>) -> u64 {
    let mut sum = n.index as u64;
    for f in [&n.left, &n.right].into_iter().flatten() {
        sum += consume::<S>(w, f.get(w));
    }
    sum
}

/// The kernel and its one variant (`gf`).
pub fn gf<W: Worker>(w: &W, input: TreeInput) -> u64 {
    w.scope(|s| {
        let root = s.shared_future(w, move |s, w| produce(s, w, 0, input));
        consume(w, root.get(w))
    })
}

impl Workload for Touchtree {
    const NAME: &'static str = "touchtree";
    const DESCRIPTION: &'static str =
        "Spoonhower et al. Figure 5(b): a tree of t futures produced and consumed in parallel";
    const VARIANTS: &'static [Variant] = &[Variant::Gf];
    const ASYNC_VARIANTS: &'static [Variant] = &[];

    type Input = TreeInput;
    type Work = ();
    type Answer = u64;

    fn preset(size: Size) -> Params {
        let t = match size {
            Size::Paper | Size::Small => 4095,
            Size::Quick => 1023,
            Size::Test => 31,
        };
        Params::new().int("t", t).int("spin_us", 20)
    }

    fn input(params: &Params) -> Result<TreeInput, String> {
        let t = params.get_usize("t")?;
        if !(1..=MAX_T).contains(&t) {
            return Err(format!("t={t}: the tree has 1 to {MAX_T} nodes"));
        }
        Ok(TreeInput {
            t,
            spin: Duration::from_micros(params.get_int("spin_us")),
        })
    }

    fn prepare(_input: &TreeInput) {}

    fn run<S: ForkJoin>(pool: &S, variant: Variant, input: &TreeInput, _work: &mut ()) -> u64 {
        match variant {
            Variant::Gf => pool.run(|w| gf(w, *input)),
            v => panic!("touchtree has no {v} variant"),
        }
    }

    fn run_async<S: AsyncForkJoin>(_: &S, v: Variant, _: &TreeInput, _: &mut ()) -> u64 {
        panic!("touchtree has no async {v} variant")
    }

    fn check(input: &TreeInput, _work: &(), answer: &u64) -> Result<(), String> {
        let t = input.t as u64;
        let want = t * (t - 1) / 2;
        if *answer == want {
            Ok(())
        } else {
            Err(format!("touchtree(t={t}) = {answer}, expected {want}"))
        }
    }
}

/// The largest tree: 2^20 futures.
pub const MAX_T: usize = 1 << 20;

#[cfg(test)]
mod tests {
    use super::*;
    use stealbench_schedulers::abp::Abp;
    use stealbench_schedulers::prows::Prows;
    use stealbench_schedulers::{PoolConfig, Scheduler, serial::Serial};

    #[test]
    fn every_runtime_sums_the_tree() {
        let i = Touchtree::input_at(Size::Test);
        let serial = Serial::start(&PoolConfig::with_workers(1)).unwrap();
        let a = Touchtree::run(&serial, Variant::Gf, &i, &mut ());
        assert_eq!(a, 31 * 30 / 2);
        Touchtree::check(&i, &(), &a).unwrap();
        assert!(Touchtree::check(&i, &(), &(a + 1)).is_err());
        for t in [1, 2, 6, 31] {
            let i = TreeInput {
                t,
                spin: Duration::from_micros(50),
            };
            let abp = Abp::start(&PoolConfig::with_workers(2)).unwrap();
            let prows = Prows::start(&PoolConfig::with_workers(2)).unwrap();
            for a in [
                Touchtree::run(&abp, Variant::Gf, &i, &mut ()),
                Touchtree::run(&prows, Variant::Gf, &i, &mut ()),
            ] {
                Touchtree::check(&i, &(), &a).unwrap();
            }
        }
        let zero = Touchtree::preset(Size::Test)
            .apply(&[("t".into(), "0".into())])
            .unwrap();
        assert!(Touchtree::input(&zero).is_err());
    }
}
