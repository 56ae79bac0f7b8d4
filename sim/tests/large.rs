//! The large replay (ignored by default: it records 10.57 million nodes and is meant for a
//! release build): `cargo test --release -p stealbench-sim --test large -- --ignored`.
//! `cargo run --release -p stealbench-sim --example big_replay` prints the same with the
//! counts.

use std::time::{Duration, Instant};
use stealbench_schedulers::record::{Recorder, Weights};
use stealbench_sim::{Model, simulate};
use stealbench_workloads::fib;

/// fib(32)'s fork-join DAG (1 + 3 · (F(33) - 1) = 10,573,732 nodes) replays at P = 1024 in
/// under a minute under every scheduler, on one core.
#[test]
#[ignore = "10 million nodes: run it in release with --ignored"]
fn ten_million_nodes_replay_at_p1024_in_under_a_minute() {
    let (v, dag) = Recorder::record(Weights::Unit, |w| fib::fj(w, 32));
    assert_eq!(v, fib::expected(32));
    assert_eq!(dag.len(), 10_573_732);
    for s in Model::ALL {
        let t = Instant::now();
        let r = simulate(&dag, s, 1024, 1);
        let wall = t.elapsed();
        eprintln!("{s}: {wall:?}: {}", r.counters());
        assert!(wall < Duration::from_secs(60), "{s} took {wall:?}");
        assert!(r.time >= dag.total_work() / 1024 && r.deviations <= 2 * r.steals);
    }
}
