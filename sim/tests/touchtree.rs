//! `touchtree` (Spoonhower et al.'s Figure 5(b) as a program) recorded with unit weights, its
//! delays as weights (1 µs = 1 unit): one steal and t touches give Θ(t) deviations under ABP
//! on a DAG of span Θ(log t), and ProWS deviates at most twice per steal.

use std::time::Duration;
use stealbench_schedulers::record::{Dag, RecordWorker, Recorder, Weights};
use stealbench_sim::{Model, SimConfig, simulate_with};
use stealbench_workloads::touchtree::{TreeInput, gf_with};

/// The producer's delay per node, and the gate's per node, in units (microseconds read as
/// units): the gate outlasts the creation of every node.
const SPIN: u64 = 20;

/// Records the tree of `t` futures; its answer is checked.
fn record(t: usize) -> Dag {
    let input = TreeInput {
        t,
        spin: Duration::from_micros(SPIN),
        gate_per_node: Duration::from_micros(SPIN),
        gate_min: Duration::ZERO,
    };
    let delay = |w: &RecordWorker, d: Duration| w.work(u32::try_from(d.as_micros()).unwrap());
    let (sum, dag) = Recorder::record(Weights::Unit, |w| gf_with(w, input, delay));
    assert_eq!(sum, (t * (t - 1) / 2) as u64);
    dag.validate().unwrap();
    dag
}

/// The program's one steal, forced (`steals: Some(1)`), on two workers with a steal
/// cost of one unit.
fn forced(s: Model, seed: u64) -> SimConfig {
    let mut c = SimConfig::new(s, 2, seed);
    c.steal_cost = Some(1);
    c.steals = Some(1);
    c
}

/// ProWS with the paper's and the artifact's placement: every scheduler but ABP.
const PROWS: [Model; 2] = [Model::ALL[1], Model::ALL[2]];

/// The DAG's span is Θ(log t), its one-worker schedule deviates nowhere, and under one steal
/// ABP deviates exactly 2(t + 1) times for every t: the steal, then t suspensions of node
/// tasks on the gate (each followed by a deviation on q), and t + 1 resumes on p (the node
/// tasks and the consumer, suspended at the root). ProWS suspends q's deque once, with the
/// creator's continuations in it, and p takes it back whole after the put and runs it in
/// serial order: 2 deviations whatever t.
#[test]
fn one_steal_and_t_touches_deviate_2t_plus_2_times_under_abp_and_twice_under_prows() {
    for t in [15, 63, 255, 1023] {
        let dag = record(t);
        assert_eq!((dag.futures(), dag.touches()), (t + 1, 2 * t));
        // Θ(log t) span (a gate spinning 20t in one strand would break the bound at t = 15).
        let levels = u64::from((t + 1).ilog2());
        assert!(
            dag.span() <= 10 * levels + 3 * SPIN,
            "t={t}: span {}",
            dag.span()
        );
        let one = simulate_with(&dag, &SimConfig::new(Model::Abp, 1, 0));
        assert_eq!((one.steals, one.deviations), (0, 0));
        for seed in 0..4 {
            let r = simulate_with(&dag, &forced(Model::Abp, seed));
            let t1 = t as u64 + 1;
            assert_eq!(
                (r.steals, r.suspensions, r.deviations),
                (1, t1, 2 * t1),
                "abp t={t} seed {seed}"
            );
            for s in PROWS {
                let r = simulate_with(&dag, &forced(s, seed));
                assert_eq!(
                    (r.steals, r.suspensions, r.deviations),
                    (1, 1, 2),
                    "{s} t={t} seed {seed}"
                );
            }
        }
    }
}

/// Unforced, with every steal cost from 1 to 300 units (each below the gate's 20t of work):
/// ABP deviates at least 2t times whatever it steals, and more than three times per steal,
/// while ProWS deviates at most twice per steal (and steals little here: the idle worker
/// helps with the gate's loop, which then ends before most node tasks are created).
#[test]
fn unforced_abp_deviates_3_times_per_steal_and_prows_at_most_twice() {
    for t in [63, 255, 1023] {
        let dag = record(t);
        for cost in [1, 3, 10, 30, 100, 300] {
            for seed in 0..3 {
                let mut c = SimConfig::new(Model::Abp, 2, seed);
                c.steal_cost = Some(cost);
                let r = simulate_with(&dag, &c);
                assert!(
                    r.deviations >= 2 * t as u64 && r.deviations > 3 * r.steals,
                    "abp t={t} cost {cost} seed {seed}: {}",
                    r.counters()
                );
                for s in PROWS {
                    c.model = s;
                    let r = simulate_with(&dag, &c);
                    assert!(
                        r.deviations <= 2 * r.steals,
                        "{s} t={t} cost {cost} seed {seed}: {}",
                        r.counters()
                    );
                }
            }
        }
    }
}
