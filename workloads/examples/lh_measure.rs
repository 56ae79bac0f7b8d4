//! Latency hiding against classic fork-join, measured: `mapreduce-fib` at the quick size on 2 workers of `prows` and of `abp`, classic (`fj`)
//! against latency-hiding (`sf`), alternated run by run on the same pool so that the drift of
//! a shared machine falls on both alike: at L = 50 ms the ratio classic / latency-hiding (the
//! bar: at least 5), at L = 0 the ratio latency-hiding / classic (the bar: at most 1.05), each
//! from the medians and from the minima of the runs, printed to stdout. Every answer is
//! checked.
//!
//! `cargo run --release -p stealbench-workloads --example lh_measure` (seconds of runs; on an
//! otherwise idle machine).

mod common;

use common::{median, timed};
use stealbench_schedulers::abp::Abp;
use stealbench_schedulers::prows::Prows;
use stealbench_schedulers::{ForkJoin, PoolConfig};
use stealbench_workloads::mapreduce_fib::MapReduceFib;
use stealbench_workloads::{Size, Variant, Workload};

/// Alternates `fj` and `sf` `rounds` times at `latency_ms`; returns the medians and minima of
/// (fj, sf) in seconds.
fn pair<S: ForkJoin>(pool: &S, latency_ms: u64, rounds: usize) -> ((f64, f64), (f64, f64)) {
    let params = MapReduceFib::preset(Size::Quick)
        .apply(&[("latency_ms".into(), latency_ms.to_string())])
        .unwrap();
    let x = MapReduceFib::input(&params).unwrap();
    let mut t = [Vec::new(), Vec::new()];
    for round in 0..=rounds {
        for (i, v) in [Variant::Fj, Variant::Sf].into_iter().enumerate() {
            let (a, s) = timed(|| MapReduceFib::run(pool, v, &x, &mut ()));
            MapReduceFib::check(&x, &(), &a).unwrap();
            if round > 0 {
                t[i].push(s); // round 0 is the warm-up
            }
        }
    }
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let mins = (min(&t[0]), min(&t[1]));
    let [mut fj, mut sf] = t;
    ((median(&mut fj), median(&mut sf)), mins)
}

fn measure<S: ForkJoin>() {
    let pool = S::start(&PoolConfig::with_workers(2)).unwrap();
    let ((fj, sf), (fj_min, sf_min)) = pair(&pool, 50, 5);
    println!(
        "{} P=2 L=50 ms: classic {fj:.4} s, latency-hiding {sf:.4} s (medians of 5): {:.1}x; minima {fj_min:.4} / {sf_min:.4}: {:.1}x",
        S::NAME,
        fj / sf,
        fj_min / sf_min
    );
    let ((fj, sf), (fj_min, sf_min)) = pair(&pool, 0, 30);
    println!(
        "{} P=2 L=0 ms: classic {fj:.4} s, latency-hiding {sf:.4} s (medians of 30): {:+.1}%; minima {fj_min:.4} / {sf_min:.4}: {:+.1}%",
        S::NAME,
        (sf / fj - 1.0) * 100.0,
        (sf_min / fj_min - 1.0) * 100.0
    );
}

fn main() {
    measure::<Prows>();
    measure::<Abp>();
}
