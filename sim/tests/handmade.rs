//! Small DAGs whose schedules are worked out by hand (the expected values in each test's
//! comment), and the simulator's determinism.

use stealbench_schedulers::record::{RecordWorker, Recorder, Weights};
use stealbench_schedulers::{FutureHandle, Futures, Worker};
use stealbench_sim::{Model, Placement, SimConfig, Step, simulate, simulate_with};

const PROWS: Model = Model::Prows {
    placement: Placement::Paper,
};
const ARTIFACT: Model = Model::Prows {
    placement: Placement::Artifact,
};

fn traced(s: Model, p: usize, seed: u64) -> SimConfig {
    let mut c = SimConfig::new(s, p, seed);
    c.trace = true;
    c.steal_cost = Some(1);
    c
}

/// `join(a, b)` with a heavier first branch, P = 2, ABP (the thief's only victim is worker 0).
///
/// Nodes: 0 the fork (weight 1), 1 branch a (11), 2 branch b (6), 3 the sync (1). At t = 1
/// worker 0 finishes the fork, pushes b and runs a; worker 1's first attempt ends at t = 1
/// and steals b (a deviation: 1 ran elsewhere). b ends at 7; worker 1 then fails attempts at
/// 8..12. a ends at 12 on worker 0, which runs the sync (a deviation: b ran elsewhere) until
/// 13. So: time 13, 1 steal of 6 attempts, 2 deviations.
#[test]
fn a_stolen_join_branch_costs_two_deviations() {
    let (_, dag) = Recorder::record(Weights::Unit, |w| {
        w.join(|w| w.work(10), |w| w.work(5));
    });
    assert_eq!(dag.len(), 4);
    for seed in 0..8 {
        let r = simulate_with(&dag, &traced(Model::Abp, 2, seed));
        assert_eq!(
            (r.time, r.steals, r.steal_attempts, r.deviations),
            (13, 1, 6, 2)
        );
        let step = |worker, node, start| Step {
            worker,
            node,
            start,
        };
        assert_eq!(
            r.trace.unwrap(),
            [step(0, 0, 0), step(0, 1, 1), step(1, 2, 1), step(0, 3, 12)]
        );
    }
}

/// A future whose continuation is stolen and touches it too early.
///
/// Nodes: 0 creates the future (1), 1 the future task, which puts (21), 2 the continuation,
/// which touches (1), 3 the future-join (1), 4 the scope's sync (1). Worker 0 runs the future
/// task over [1, 22); worker 1 steals the continuation (a deviation) and touches at 2 or 3,
/// before the put: a suspension. At 22 the put enables the join, which worker 0 runs (a
/// deviation: its serial predecessor 2 ran elsewhere), then the sync; time 24.
///
/// ABP: worker 1 steals at t = 1 and then fails every attempt until the end (1 + 21). ProWS
/// (either placement): worker 1's deque suspends empty (in no stealable set); the put makes it
/// resumable (into a stealable set: 1 stealable at most) and, worker 0's deque being empty,
/// worker 0's active deque (a resumption); 2 deques at most.
#[test]
fn an_early_touch_suspends_and_the_put_resumes() {
    let (_, dag) = Recorder::record(Weights::Unit, |w| {
        w.scope(|s, w| {
            let f = w.future(s, |_, w| w.work(20));
            f.get(w);
        })
    });
    assert_eq!(dag.len(), 5);
    let abp = simulate_with(&dag, &traced(Model::Abp, 2, 1));
    assert_eq!(
        (
            abp.time,
            abp.steals,
            abp.steal_attempts,
            abp.deviations,
            abp.suspensions
        ),
        (24, 1, 22, 2, 1)
    );
    for s in [PROWS, ARTIFACT] {
        for seed in 0..16 {
            let r = simulate_with(&dag, &traced(s, 2, seed));
            assert_eq!(
                (r.time, r.steals, r.deviations, r.suspensions),
                (24, 1, 2, 1),
                "{s} seed {seed}"
            );
            assert_eq!(
                (
                    r.resumptions,
                    r.deques_resumable,
                    r.muggings,
                    r.max_deques,
                    r.max_stealable
                ),
                (1, 1, 0, 2, 1),
                "{s} seed {seed}"
            );
            let order: Vec<(u32, u32)> = r
                .trace
                .unwrap()
                .iter()
                .map(|s| (s.worker, s.node))
                .collect();
            assert_eq!(order, [(0, 0), (0, 1), (1, 2), (0, 3), (0, 4)]);
        }
    }
}

/// ABP and ProWS part ways when a touch suspends with work below it on the deque: ABP's
/// toucher keeps its deque and pops the next node, ProWS suspends the whole deque and the
/// worker steals.
///
/// The root creates a long future (weight 31), then joins a branch that touches the future
/// and a second branch (weight 5). One worker: serial. Two workers: worker 1 steals the root's
/// continuation at t = 1, forks (pushing the second branch), and touches at t = 3: under ABP it
/// pops the second branch itself; under ProWS its deque (holding the second branch) is
/// suspended into a stealable set, from which a thief takes the second branch.
#[test]
fn a_touch_with_work_below_suspends_the_whole_deque_under_prows_only() {
    let (_, dag) = Recorder::record(Weights::Unit, |w| {
        w.scope(|s, w| {
            let f = w.future(s, |_, w| w.work(30));
            w.join(|w| f.get(w), |w| w.work(4));
        })
    });
    let abp = simulate_with(&dag, &traced(Model::Abp, 2, 0));
    assert_eq!((abp.suspensions, abp.steals, abp.max_deques), (1, 1, 2));
    for seed in 0..16 {
        let r = simulate_with(&dag, &traced(PROWS, 2, seed));
        assert_eq!(r.suspensions, 1, "seed {seed}");
        assert_eq!(r.max_stealable, 1, "seed {seed}");
        assert!(
            r.steals >= 2,
            "seed {seed}: the suspended deque's branch is stolen"
        );
    }
}

#[test]
fn the_same_seed_gives_the_same_run_and_seeds_differ() {
    let (_, dag) = Recorder::record(Weights::Unit, |w| stealbench_workloads::fib::sf(w, 14));
    for s in Model::ALL {
        let a = simulate(&dag, s, 8, 42);
        assert_eq!(a, simulate(&dag, s, 8, 42), "{s}");
        let others: Vec<_> = (0..4).map(|seed| simulate(&dag, s, 8, seed)).collect();
        assert!(
            others
                .iter()
                .any(|r| (r.time, r.steals) != (a.time, a.steals)),
            "{s}"
        );
    }
}

#[test]
fn an_empty_recording_takes_no_time() {
    let dag = Recorder::new(Weights::Unit).take_dag();
    let r = simulate(&dag, Model::Abp, 4, 0);
    assert_eq!((r.time, r.nodes, r.steals), (0, 0, 0));
}

/// Spoonhower et al.'s Figure 5(a) under the forced schedule of one steal
/// (`SimConfig::steals`): a future of weight 10·d + 1 and, in the creator's
/// continuation, `d` nested joins whose innermost first branch touches it (each second branch
/// of weight 1). Worker 1 steals the continuation (the one steal), goes down the joins and
/// touches long before the put.
///
/// * ABP: the touch suspends; worker 1 pops the d second branches, each a deviation; after
///   the put worker 0 runs the touch's continuation and every join's sync, each a deviation:
///   2 + 2d with the steal's own, for every seed.
/// * ProWS (both placements): the deque suspends with the d branches in it; held, worker 1
///   takes none; the put makes it worker 0's active deque, which takes them back in serial
///   order: 2 deviations, whatever d.
/// * Unforced, ProWS's idle worker 1 steals the branches from the suspended deque instead:
///   more steals, and deviations that grow with d.
#[test]
fn figure_5a_under_one_steal_deviates_2_plus_2d_times_under_abp_and_twice_under_prows() {
    fn chain<H: FutureHandle<(), Worker = RecordWorker>>(w: &RecordWorker, i: u32, x: H) {
        if i == 0 {
            return x.get(w);
        }
        w.join(move |w| chain(w, i - 1, x), |w| w.work(0));
    }
    for d in [4u32, 16, 64] {
        let (_, dag) = Recorder::record(Weights::Unit, |w| {
            w.scope(|s, w| {
                let x = w.future(s, move |_, w| w.work(10 * d));
                chain(w, d, x);
            })
        });
        for seed in 0..4 {
            let forced = |s| SimConfig {
                steals: Some(1),
                ..traced(s, 2, seed)
            };
            let abp = simulate_with(&dag, &forced(Model::Abp));
            let want = 2 + 2 * u64::from(d);
            assert_eq!((abp.steals, abp.deviations), (1, want), "abp d={d}");
            for s in [PROWS, ARTIFACT] {
                let r = simulate_with(&dag, &forced(s));
                assert_eq!((r.steals, r.deviations), (1, 2), "{s} d={d} seed {seed}");
                let free = simulate_with(&dag, &traced(s, 2, seed));
                assert!(
                    free.steals > 1 && free.deviations > u64::from(d),
                    "{s} d={d} unforced: {free:?}"
                );
            }
        }
    }
}
