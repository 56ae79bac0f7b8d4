//! Overhead and speedup of the fiber runtimes (`abp`, `prows`) on fib: T_1/T_s for `fj`, `sf`
//! and `sf-nostack` (sf on a pool with `FutureStack::Current`), the cost of one future over a
//! join, and the P=2 speedup.
//!
//! `cargo run --release -p stealbench-workloads --example fiber_fib [n] [reps] [fj|sf|sf-nostack] [P]`
//! (the defaults are n = 35, reps = 5; every figure is the best of `reps` runs, and every
//! answer is checked). T_s is `workloads::fib::serial`, the variants are the workload's own
//! `fj` and `sf`: the code the harness runs.

mod common;

use common::best;
use std::hint::black_box;
use stealbench_schedulers::abp::Abp;
use stealbench_schedulers::prows::Prows;
use stealbench_schedulers::{ForkJoin, FutureStack, PoolConfig};
use stealbench_workloads::fib::{expected, fj, serial, sf};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().map_or(35, |a| a.parse().expect("n"));
    let reps: usize = args.next().map_or(5, |a| a.parse().expect("reps"));
    let only_variant = args.next();
    let only_p: Option<usize> = args.next().map(|a| a.parse().expect("P"));
    let want = expected(n);
    let ts = best(reps, want, || serial(black_box(n)));
    println!("fib({n}) T_s = {ts:.4} s (workloads::fib::serial)");
    measure::<Abp>(n, reps, want, ts, only_variant.as_deref(), only_p);
    measure::<Prows>(n, reps, want, ts, only_variant.as_deref(), only_p);
}

fn measure<S: ForkJoin>(
    n: u64,
    reps: usize,
    want: u64,
    ts: f64,
    only_variant: Option<&str>,
    only_p: Option<usize>,
) {
    let mut fj_t1 = f64::NAN;
    for variant in ["fj", "sf", "sf-nostack"] {
        if only_variant.is_some_and(|v| v != variant) {
            continue;
        }
        let mut t1 = f64::NAN;
        for p in [1, 2] {
            if only_p.is_some_and(|q| q != p) {
                continue;
            }
            let config = PoolConfig {
                future_stack: if variant == "sf-nostack" {
                    FutureStack::Current
                } else {
                    FutureStack::New
                },
                ..PoolConfig::with_workers(p)
            };
            let pool = S::start(&config).expect("pool");
            let t = best(reps, want, || match variant {
                "fj" => pool.run(|w| fj(w, black_box(n))),
                _ => pool.run(|w| sf(w, black_box(n))),
            });
            if p == 1 {
                t1 = t;
                if variant == "fj" {
                    fj_t1 = t;
                } else if fj_t1.is_finite() {
                    // fib(n) makes fib(n+1) - 1 joins or futures.
                    let forks = expected(n + 1) - 1;
                    println!(
                        "{} {variant}/fj at P=1 = {:.2}; one future costs {:.1} ns more than a join",
                        S::NAME,
                        t / fj_t1,
                        (t - fj_t1) / forks as f64 * 1e9
                    );
                }
            }
            println!(
                "{} {variant} P={p}: {t:.4} s  T_{p}/T_s = {:.2}  T_1/T_{p} = {:.2}  stats of {reps} runs {:?}",
                S::NAME,
                t / ts,
                t1 / t,
                pool.stats().named()
            );
        }
    }
}
