//! The large replay: fib(32)'s fork-join DAG, 10.57 million nodes (unit weights), replayed at
//! P = 1024 under every scheduler, with the wall time of each replay.
//!
//! `cargo run --release -p stealbench-sim --example big_replay [-- N [fj|sf] [P] [SEED]]`
//! (default `32 fj 1024 1`). `sf` records the structured-future fib instead (fib(31): 8.7
//! million nodes, fib(32): 14.1 million). One thread: the simulator is sequential.

use std::time::Instant;
use stealbench_schedulers::record::{Recorder, Weights};
use stealbench_sim::{Model, simulate};
use stealbench_workloads::fib;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args.get(1).map_or(32, |s| s.parse().expect("N"));
    let variant = args.get(2).map_or("fj", String::as_str);
    let p: usize = args.get(3).map_or(1024, |s| s.parse().expect("P"));
    let seed: u64 = args.get(4).map_or(1, |s| s.parse().expect("SEED"));

    let t0 = Instant::now();
    let (v, dag) = match variant {
        "fj" => Recorder::record(Weights::Unit, |w| fib::fj(w, n)),
        "sf" => Recorder::record(Weights::Unit, |w| fib::sf(w, n)),
        other => panic!("variant {other}: expected fj or sf"),
    };
    assert_eq!(v, fib::expected(n));
    println!(
        "fib({n}) {variant}: {} nodes, {} futures, T1 {}, recorded in {:.2} s",
        dag.len(),
        dag.futures(),
        dag.total_work(),
        t0.elapsed().as_secs_f64()
    );
    println!("span T_inf {}", dag.span());
    for s in Model::ALL {
        let t = Instant::now();
        let r = simulate(&dag, s, p, seed);
        let wall = t.elapsed().as_secs_f64();
        println!(
            "{s} P={p} seed {seed}: replayed in {wall:.2} s ({:.0} ns per node): {}",
            wall * 1e9 / dag.len() as f64,
            r.counters()
        );
    }
}
