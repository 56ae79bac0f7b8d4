//! One worker replays the serial order: every workload variant, recorded, then simulated at
//! P = 1 under every scheduler, runs node 0, 1, 2, ... on worker 0 with no gap, no steal, no
//! suspension and no deviation, in exactly the total work.

mod common;

use stealbench_sim::{Model, SimConfig, simulate_with};

#[test]
fn one_worker_runs_the_serial_order_in_the_total_work() {
    let dags = common::every_variant();
    assert!(dags.len() >= 20, "{} variants recorded", dags.len());
    for (name, _, dag) in &dags {
        for s in Model::ALL {
            let mut cfg = SimConfig::new(s, 1, 3);
            cfg.trace = true;
            let r = simulate_with(dag, &cfg);
            let trace = r.trace.as_ref().expect("traced");
            assert_eq!(trace.len(), dag.len(), "{name} on {s}");
            let mut t = 0;
            for (i, step) in trace.iter().enumerate() {
                assert_eq!(
                    (step.worker, step.node, step.start),
                    (0, i as u32, t),
                    "{name} on {s}"
                );
                t += u64::from(dag.node(step.node).work());
            }
            assert_eq!(r.time, dag.total_work(), "{name} on {s}");
            assert_eq!(
                (
                    r.deviations,
                    r.steals,
                    r.steal_attempts,
                    r.suspensions,
                    r.max_deques
                ),
                (0, 0, 0, 0, 1),
                "{name} on {s}"
            );
        }
    }
}
