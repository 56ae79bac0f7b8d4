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
//! The producer creates the tree's futures top-down, each node after a delay; the consumer
//! walks it in the same order, touching each node's future: t futures and t touches. The span
//! is the producer's Θ(log t) delays down a path plus the consumer's walk, a chain of t
//! touches.
//!
//! # What two workers do with it
//!
//! On two workers p runs the root future's task (future creation is work-first) and q steals
//! the creator's continuation, the consumer: the steal of the paper's construction. The
//! consumer touches the root long before p puts it and suspends. What follows is fixed by two
//! rules of the parsimonious scheduler (Spoonhower et al.'s Figure 2, `abp`), which `prows`
//! shares:
//!
//! * **Work-first future creation.** Creating a future runs its task and pushes the creator's
//!   continuation. Node `i`'s task runs its left child's task, and that child's whole subtree,
//!   before the continuation that creates the right child and puts node `i`. The producer
//!   touches nothing, so it never suspends: a worker makes a subtree in the one-worker order
//!   and puts every node *after* the whole subtree below it, the root last.
//! * **Parsimony.** A continuation changes workers only by a steal (a resumed touch carries
//!   only the toucher's code).
//!
//! The consumer learns a node's children only from the node's value, so it touches a node only
//! after its parent's put. Below the root that touch suspends only if the node's task was still
//! running at the parent's put, which needs the parent's continuation to have run on the other
//! worker: a steal. So every suspension but the root's costs a steal, and since the walk has no
//! joins and q's deque holds nothing of the consumer's, each steal and each suspension costs
//! one deviation: the simulator never counts more than `steals + suspensions` deviations here,
//! whatever the steal cost (`sim/tests/touchtree.rs`). With unit weights q takes 2 steals (the
//! consumer, then, its deque empty after the root's touch, the root task's continuation: the
//! right subtree), the consumer suspends once and then finds every node made: 3 deviations for
//! every t. On the runtimes the idle worker takes a producer continuation more often (about 10
//! steals for t = 1023 to 4095, about 2 deviations each).
//!
//! So Figure 5(b)'s "one steal and t touches, Ω(t) deviations" is out of reach of this pair of
//! functions under work-first futures, and the paper's "diamonds" (small sub-graphs that keep
//! p and q alternating between suspending and resuming) cannot bring it back: a delay or a
//! fork-join on either side moves no producer continuation, and a fork on the consumer's side
//! only leaves a branch for the idle worker to steal (a steal per node). Alternation needs
//! nodes put before their subtrees: either steals, or producer tasks that suspend, which need
//! an unfinished future to touch, and p's first task holds none (it is older than anything q
//! makes). Running the continuation first instead (help-first) would put the nodes early, but
//! the one-worker order runs the task first, so that schedule deviates at every future even on
//! one worker.
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

/// How a strand waits: [`spin`] on the runtimes; a recording adds the delay as weight instead
/// (`RecordWorker::work` of the microseconds, so a unit-weight DAG has the program's shape).
pub type Delay<W> = fn(&W, Duration);

/// The producer: node `i` after the delay, its children as futures.
fn produce<'s, W: Worker>(
    s: &W::Scope<'s>,
    w: &W,
    i: usize,
    input: TreeInput,
    delay: Delay<W>,
) -> Node<'s, W::Scope<'s>> {
    delay(w, input.spin);
    let child = |c: usize| {
        (c < input.t).then(|| s.shared_future(w, move |s, w| produce(s, w, c, input, delay)))
    };
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

/// The kernel with the producer's delay made by `delay` (see [`Delay`]).
pub fn gf_with<W: Worker>(w: &W, input: TreeInput, delay: Delay<W>) -> u64 {
    w.scope(|s| {
        let root = s.shared_future(w, move |s, w| produce(s, w, 0, input, delay));
        consume(w, root.get(w))
    })
}

/// The kernel and its one variant (`gf`): the producer spins.
pub fn gf<W: Worker>(w: &W, input: TreeInput) -> u64 {
    gf_with(w, input, |_, d| spin(d))
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
