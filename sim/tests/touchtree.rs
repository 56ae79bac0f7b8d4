//! `touchtree` (Spoonhower et al.'s Figure 5(b) as a program) recorded with unit weights, its
//! producer's delay as weight: what one steal does on two workers under work-first futures.

use std::time::Duration;
use stealbench_schedulers::record::{Dag, RecordWorker, Recorder, Weights};
use stealbench_sim::{Placement, Scheduler, SimConfig, simulate_with};
use stealbench_workloads::touchtree::{TreeInput, gf_with};

/// The producer's delay per node, in units (`spin_us` read as units).
const SPIN: u64 = 20;

/// Records the tree of `t` futures; its answer is checked.
fn record(t: usize) -> Dag {
    let input = TreeInput {
        t,
        spin: Duration::from_micros(SPIN),
    };
    let delay = |w: &RecordWorker, d: Duration| w.work(u32::try_from(d.as_micros()).unwrap());
    let (sum, dag) = Recorder::record(Weights::Unit, |w| gf_with(w, input, delay));
    assert_eq!(sum, (t * (t - 1) / 2) as u64);
    dag.validate().unwrap();
    dag
}

/// On two workers under ABP (steal cost 1) q steals the consumer, touches the root and
/// suspends; its deque empty, it steals the root task's continuation and makes the right
/// subtree while p makes the left. Below the root the consumer finds every node made: 2
/// steals, 1 suspension and 3 deviations for every t from 15 to 1023, not Ω(t) deviations.
/// ProWS takes about as few.
#[test]
fn two_steals_and_one_suspension_at_every_size() {
    for t in [15, 63, 255, 1023] {
        let dag = record(t);
        assert_eq!((dag.futures(), dag.touches()), (t, t));
        for seed in 0..4 {
            let mut c = SimConfig::new(Scheduler::Abp, 2, seed);
            c.steal_cost = Some(1);
            let r = simulate_with(&dag, &c);
            assert_eq!(
                (r.steals, r.suspensions, r.deviations),
                (2, 1, 3),
                "abp t={t} seed {seed}"
            );
            for placement in [Placement::Paper, Placement::Artifact] {
                c.scheduler = Scheduler::Prows { placement };
                let r = simulate_with(&dag, &c);
                assert!(
                    r.steals <= 3 && r.suspensions == 1 && r.deviations <= 4,
                    "{} t={t} seed {seed}: {}",
                    c.scheduler,
                    r.counters()
                );
            }
        }
    }
}

/// Whatever the steal cost (1 to 300 units, against a 20-unit node), every suspension is paid
/// for by a steal and the deviations are those of the steals and suspensions (one each: the
/// thief's first node, the toucher's next node or the resumed join), under every scheduler:
/// the deviations cannot outgrow the steals on this program.
#[test]
fn every_suspension_costs_a_steal() {
    for t in [15, 63, 255, 1023] {
        let dag = record(t);
        for cost in [1, 3, 10, 30, 100, 300] {
            for s in Scheduler::ALL {
                for seed in 0..3 {
                    let mut c = SimConfig::new(s, 2, seed);
                    c.steal_cost = Some(cost);
                    let r = simulate_with(&dag, &c);
                    assert!(
                        r.suspensions <= r.steals && r.deviations <= r.steals + r.suspensions,
                        "{s} t={t} cost {cost} seed {seed}: {}",
                        r.counters()
                    );
                }
            }
        }
    }
}
