//! `touchtree`: a tree of futures produced and consumed behind one gate future, built as a
//! program for Spoonhower et al. (SPAA'09), Figure 5(b): one steal and t touches, Ω(t)
//! deviations under a parsimonious work stealer.
//!
//! # The program
//!
//! ```text
//! main       = g = future(spin(gate_min_us);                 the gate: p runs it (work-first)
//!                         parallel for 0..t: spin(gate_ns))
//!              consume(touch(produce(0)))                    q steals this continuation
//! produce(i) = (l, r) = join(produce(2i + 1), produce(2i + 2))   children first (each if < t)
//!              future(touch(g); spin(spin_us); node(i, l, r))
//! consume(n) = i + join(consume(touch(left n)), consume(touch(right n)))
//! ```
//!
//! Every node, inner or leaf, is the value of a future that holds its children's futures; the
//! consumer walks the tree in heap order, touching each. Counted in futures created by the
//! program: t + 1 (the nodes and the gate) and 2t touches (each node's task touches the gate,
//! the consumer touches each node).
//!
//! # What two workers do with it
//!
//! On two workers p runs the gate's task, because future creation is work-first. q steals
//! the main task's continuation: the paper's one steal, and a deviation (q's first node
//! follows the gate's last in the one-worker order). While the gate runs, q creates the t
//! futures.
//!
//! * **q suspends t times.** Each node's task touches the unfinished gate and suspends. q then
//!   goes on from its own deque with the creator's continuation, a deviation.
//! * **q goes idle.** Last, the consumer touches the root and suspends. q's deque is empty,
//!   and under a budget of one steal (`steals=1`) it stays idle.
//! * **p picks the work up.** When the gate is put, ABP (Spoonhower et al.'s Figure 2)
//!   pushes every task that waits on it onto p's deque, each a resume deviation when it runs.
//!   A future's waiters are kept newest first (`Signal`), so p pops them oldest first: in
//!   creation order, the root's task last. The consumer, resumed on p by the root's put,
//!   then finds every node made.
//!
//! One steal, t + 1 suspensions and 1 + t + (t + 1) = 2(t + 1) deviations
//! (`sim/tests/touchtree.rs` and the runtime test below assert them). Unforced, q steals from
//! p when idle (the gate's loop, resumed tasks, the consumer's joins): about t/2 steals and 3t
//! deviations at t = 4095.
//!
//! ProWS instead suspends q's whole deque at the first failed touch, with the creator's
//! continuations in it. Forced to one steal, p puts the gate with its own deque empty, makes
//! the resumed deque its active one and runs it in serial order: 1 suspension and 2
//! deviations whatever t. Unforced, the idle worker steals from the gate's loop and from the
//! suspended deques (q suspends more than once), and each steal costs 1.1 to 1.3 deviations.
//!
//! # How it stands to the paper's graph
//!
//! The paper draws Figure 5(b) (the drawing is not in our text) as a producer and a consumer
//! of the tree that p and q alternate between, kept alternating by "diamonds", small
//! sub-graphs of delay. This program meets the claim (one steal, t touches, Ω(t) deviations,
//! span Θ(log t)) by another route:
//!
//! * **The deviations come from the gate.** Its t touches by the node tasks suspend; the
//!   consumer's t touches suspend once. A flat loop of t tasks touching the gate would give
//!   the same count: the tree gives the touches their producer-consumer shape, not the count.
//! * **No alternation.** q does all the suspending, p all the resuming, and under the forced
//!   schedule the consumer runs after every node is put.
//! * **The gate is not small.** Its work is t · `gate_ns`, which p does alone while q creates
//!   the nodes; it is a parallel loop (`parfor`), so its span stays Θ(log t) plus the
//!   `gate_min_us` floor (the time q takes to wake and steal). With the joins of `produce`
//!   and `consume`, the DAG's span is Θ(log t).
//! * **The one steal is forced** (`steals=1`); unforced, ABP steals about t/2 times.
//!
//! Why a gate: futures are work-first here as in the paper's `ws`, so in this pair of
//! functions without it, a worker runs a node's task before the continuation that creates the
//! next one, and (touching nothing) puts each node only after its whole subtree. The consumer,
//! which learns a node's children only from that put, then suspends below the root only where
//! a steal moved a creation continuation: one steal per suspension. Node tasks must suspend
//! to be put out of that order, which needs an unfinished future older than the producer.
//! On one worker the gate is put before any node is created, nothing suspends and nothing
//! deviates.
//!
//! The handles travel inside other futures' values and are touched by a task that did not
//! create them: general futures (`gf`).
//!
//! # Check
//!
//! The answer is the sum of the node indices, `t(t − 1)/2`.

use crate::touchchain::spin;
use crate::{Checked, Params, Size, Variant, Workload};
use std::time::Duration;
use stealbench_schedulers::{AsyncForkJoin, ForkJoin, FutureForkJoin, Futures, SharedHandle};

/// The workload marker type.
#[derive(Debug)]
pub struct Touchtree;

/// The input: the number of nodes (futures), the producer's delay per node, and the gate's
/// delay per node and floor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeInput {
    /// Nodes of the tree, each the value of a future.
    pub t: usize,
    /// The producer's delay at each node.
    pub spin: Duration,
    /// The gate's parallel loop spins this `t` times: work enough for the other worker to
    /// create every node meanwhile.
    pub gate_per_node: Duration,
    /// The gate first spins this: time for the other worker to wake and steal.
    pub gate_min: Duration,
}

/// A node of the tree: its index and its children's futures.
pub struct Node<'s, W: Futures> {
    index: usize,
    left: Option<W::SharedFuture<'s, Node<'s, W>>>,
    right: Option<W::SharedFuture<'s, Node<'s, W>>>,
}

/// How a strand waits: [`spin`] on the runtimes; a recording adds the delay as weight instead
/// (`RecordWorker::work` of the microseconds, so a unit-weight DAG has the program's shape).
pub type Delay<W> = fn(&W, Duration);

/// The producer: node `i`'s children first, then node `i` as a future whose task waits for the
/// gate `g`, spins and holds the children.
fn produce<'s, W: Futures>(
    s: &W::Scope<'s>,
    w: &W,
    i: usize,
    g: &W::SharedFuture<'s, ()>,
    input: TreeInput,
    delay: Delay<W>,
) -> W::SharedFuture<'s, Node<'s, W>> {
    let child = |w: &W, c: usize| (c < input.t).then(|| produce(s, w, c, g, input, delay));
    let (left, right) = w.join(|w| child(w, 2 * i + 1), |w| child(w, 2 * i + 2));
    let g = g.clone();
    w.shared_future(s, move |_, w| {
        g.get(w);
        delay(w, input.spin);
        Node {
            index: i,
            left,
            right,
        }
    })
}

/// The consumer: touches every future of the tree in heap order.
fn consume<'s, W: Futures>(w: &W, n: &Node<'s, W>) -> u64 {
    let side = |w: &W, f: &Option<W::SharedFuture<'s, Node<'s, W>>>| {
        f.as_ref().map_or(0, |f| consume::<W>(w, f.get(w)))
    };
    let (l, r) = w.join(|w| side(w, &n.left), |w| side(w, &n.right));
    n.index as u64 + l + r
}

/// The `gf` variant with the delays made by `delay` (see [`Delay`]).
pub fn gf_with<W: Futures>(w: &W, input: TreeInput, delay: Delay<W>) -> u64 {
    w.scope(|s, w| {
        let g = w.shared_future(s, move |_, w| {
            delay(w, input.gate_min);
            crate::parfor::fj(w, 0..input.t, &|w, _| delay(w, input.gate_per_node));
        });
        let root = produce(s, w, 0, &g, input, delay);
        consume(w, root.get(w))
    })
}

/// The one variant (`gf`): the producer spins.
pub fn gf<W: Futures>(w: &W, input: TreeInput) -> u64 {
    gf_with(w, input, |_, d| spin(d))
}

/// The kernel: the serial elision of [`gf`] (every future a call, every join two calls), no
/// runtime. The gate spins first; then each node, its children first, spins and adds its index
/// to theirs: the producer's and the consumer's walks fused, as the elision holds every
/// node's value when it is made.
pub fn serial(input: TreeInput) -> u64 {
    fn node(i: usize, input: &TreeInput) -> u64 {
        let child = |c: usize| if c < input.t { node(c, input) } else { 0 };
        let (l, r) = (child(2 * i + 1), child(2 * i + 2));
        spin(input.spin);
        i as u64 + l + r
    }
    spin(input.gate_min);
    for _ in 0..input.t {
        spin(input.gate_per_node);
    }
    node(0, &input)
}

impl Workload for Touchtree {
    const NAME: &'static str = "touchtree";
    const DESCRIPTION: &'static str =
        "Spoonhower et al. Figure 5(b): a tree of t futures behind a gate, produced and consumed";
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
        Params::new()
            .int("t", t)
            .int("spin_us", 20)
            .int("gate_ns", 20_000)
            .int("gate_min_us", 10_000)
    }

    fn input(params: &Params) -> Result<TreeInput, String> {
        let t = params.get_usize("t")?;
        if !(1..=MAX_T).contains(&t) {
            return Err(format!("t={t}: the tree has 1 to {MAX_T} nodes"));
        }
        Ok(TreeInput {
            t,
            spin: Duration::from_micros(params.get_int("spin_us")),
            gate_per_node: Duration::from_nanos(params.get_int("gate_ns")),
            gate_min: Duration::from_micros(params.get_int("gate_min_us")),
        })
    }

    fn prepare(_input: &TreeInput) {}

    fn run<S: ForkJoin>(_pool: &S, variant: Variant, _input: &TreeInput, _work: &mut ()) -> u64 {
        crate::not_without_futures::<Self>(variant)
    }

    fn run_futures<S: FutureForkJoin>(
        pool: &S,
        variant: Variant,
        input: &TreeInput,
        _work: &mut (),
    ) -> u64 {
        match variant {
            Variant::Gf => pool.run(|w| gf(w, *input)),
            v => panic!("touchtree has no {v} variant"),
        }
    }

    fn run_async<S: AsyncForkJoin>(_: &S, v: Variant, _: &TreeInput, _: &mut ()) -> u64 {
        panic!("touchtree has no async {v} variant")
    }

    fn kernel(input: &TreeInput, _work: &mut ()) -> u64 {
        serial(*input)
    }

    fn check(input: &TreeInput, _work: &(), answer: &u64) -> Result<Checked, String> {
        let t = input.t as u64;
        let want = t * (t - 1) / 2;
        if *answer == want {
            Ok(Checked::new(
                format!("sum {answer} of the {t} nodes' indices"),
                "t·(t-1)/2",
            ))
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
    use stealbench_schedulers::{PoolConfig, Scheduler};

    #[test]
    fn every_runtime_sums_the_tree() {
        let i = Touchtree::input_at(Size::Test);
        let serial = crate::testing::serial();
        let a = Touchtree::run_futures(&serial, Variant::Gf, &i, &mut ());
        assert_eq!(a, 31 * 30 / 2);
        assert_eq!(
            Touchtree::check(&i, &(), &a).unwrap().to_string(),
            "sum 465 of the 31 nodes' indices; checked against t·(t-1)/2"
        );
        assert!(Touchtree::check(&i, &(), &(a + 1)).is_err());
        for t in [1, 2, 6, 31] {
            let i = TreeInput {
                t,
                spin: Duration::from_micros(50),
                gate_per_node: Duration::from_micros(5),
                gate_min: Duration::from_millis(1),
            };
            let abp = Abp::start(&PoolConfig::with_workers(2)).unwrap();
            let prows = Prows::start(&PoolConfig::with_workers(2)).unwrap();
            for a in [
                Touchtree::run_futures(&abp, Variant::Gf, &i, &mut ()),
                Touchtree::run_futures(&prows, Variant::Gf, &i, &mut ()),
            ] {
                Touchtree::check(&i, &(), &a).unwrap();
            }
        }
        let zero = Touchtree::preset(Size::Test)
            .apply(&[("t".into(), "0".into())])
            .unwrap();
        assert!(Touchtree::input(&zero).is_err());
    }

    /// On the runtimes, forced to one steal: `abp` suspends every node's task and the consumer
    /// and deviates 2(t + 1) times; `prows` suspends one deque and deviates twice. The schedule
    /// needs q to steal and create every node within the gate; a run where the machine denied
    /// it that (no steal, or fewer suspensions) is retried, up to five times.
    #[test]
    fn one_forced_steal_deviates_2t_plus_2_times_on_abp_and_twice_on_prows() {
        /// (steals, `suspensions` (parked tasks, abp) + `deque_suspensions` (prows),
        /// deviations) of one run.
        fn counted<S: FutureForkJoin>(t: usize) -> (u64, u64, u64) {
            let pool = S::start(&PoolConfig {
                steals: Some(1),
                ..PoolConfig::with_workers(2)
            })
            .unwrap();
            let input = TreeInput {
                t,
                spin: Duration::from_micros(5),
                gate_per_node: Duration::from_micros(20),
                gate_min: Duration::from_millis(50),
            };
            let answer = Touchtree::run_futures(&pool, Variant::Gf, &input, &mut ());
            Touchtree::check(&input, &(), &answer).unwrap();
            let s = pool.stats();
            let extra = |n| s.extra(n).unwrap_or(0);
            let suspended = extra("suspensions") + extra("deque_suspensions");
            (s.steals.unwrap(), suspended, extra("deviations"))
        }
        fn first_of_five(f: impl Fn() -> (u64, u64, u64), want: (u64, u64, u64)) {
            let misses: Vec<_> = (0..5).map(|_| f()).take_while(|c| *c != want).collect();
            assert!(misses.len() < 5, "{misses:?}, expected {want:?}");
        }
        let t = 63;
        first_of_five(|| counted::<Abp>(t), (1, t as u64 + 1, 2 * (t as u64 + 1)));
        first_of_five(|| counted::<Prows>(t), (1, 1, 2));
    }
}
