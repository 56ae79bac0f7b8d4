//! Recording the workloads for the simulator's tests.

#![allow(dead_code)]

use stealbench_schedulers::record::{Dag, Recorder, Weights};
use stealbench_workloads::{Size, Variant, Workload, all, with_workload};

/// Records `W`'s variant `v` at `size` (its answer checked).
pub fn record<W: Workload>(size: Size, v: Variant, weights: Weights) -> Dag {
    let input = W::input_at(size);
    let mut work = W::prepare(&input);
    let rec = Recorder::new(weights);
    let answer = W::run_futures(&rec, v, &input, &mut work);
    W::check(&input, &work, &answer).unwrap_or_else(|e| panic!("{} {v} recorded: {e}", W::NAME));
    let dag = rec.take_dag();
    dag.validate()
        .unwrap_or_else(|e| panic!("{} {v}: invalid DAG: {e}", W::NAME));
    dag
}

/// Every closure-front-end variant of every workload at `Size::Test` with unit weights, as
/// (`workload variant`, variant, DAG), recorded in the eager order (`futures=stack`, the only
/// one the recorder accepts).
pub fn every_variant() -> Vec<(String, Variant, Dag)> {
    let mut out = Vec::new();
    for info in all() {
        for &v in info.variants {
            let dag = with_workload!(info.name, W => record::<W>(Size::Test, v, Weights::Unit))
                .expect("a listed workload");
            out.push((format!("{} {v}", info.name), v, dag));
        }
    }
    out
}
