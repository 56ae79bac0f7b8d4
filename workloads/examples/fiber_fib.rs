//! Overhead and speedup of the fiber runtimes (`abp`, `prows`) on fib: T_1/T_s for `fj` and
//! `sf` on the default pool, and for `sf` on a `futures=nostack` pool (`FutureStack::Current`:
//! no stack of its own per future, the ProWS paper's "-stack" row), the cost of one future
//! over a join, and the P=2 speedup.
//!
//! `cargo run --release -p stealbench-workloads --example fiber_fib [n] [reps] [fj|sf] [P] [stack|nostack]`
//! (the defaults are n = 35, reps = 5; the last three, if given, keep only the rows of that
//! variant, that P, that `futures` setting; every figure is the best of `reps` runs, and every
//! answer is checked). T_s is `workloads::fib::serial`, the variants are the workload's own
//! `fj` and `sf`: the code the harness runs. A row is named as the harness names its arm and
//! variant: `abp sf`, `abp/futures=nostack sf`.

mod common;

use common::best;
use std::hint::black_box;
use stealbench_schedulers::abp::Abp;
use stealbench_schedulers::prows::Prows;
use stealbench_schedulers::{FutureForkJoin, FutureStack, PoolConfig};
use stealbench_workloads::fib::{expected, fj, serial, sf};

/// The rows of each runtime: the variant, and where its futures run.
const ROWS: [(&str, FutureStack); 3] = [
    ("fj", FutureStack::New),
    ("sf", FutureStack::New),
    ("sf", FutureStack::Current),
];

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().map_or(35, |a| a.parse().expect("n"));
    let reps: usize = args.next().map_or(5, |a| a.parse().expect("reps"));
    let only_variant = args.next();
    let only_p: Option<usize> = args.next().map(|a| a.parse().expect("P"));
    let only_futures: Option<FutureStack> = args
        .next()
        .map(|a| a.parse().unwrap_or_else(|e| panic!("{e}")));
    let want = expected(n);
    let ts = best(reps, want, || serial(black_box(n)));
    println!("fib({n}) T_s = {ts:.4} s (workloads::fib::serial)");
    let only = (only_variant.as_deref(), only_p, only_futures);
    measure::<Abp>(n, reps, want, ts, only);
    measure::<Prows>(n, reps, want, ts, only);
}

fn measure<S: FutureForkJoin>(
    n: u64,
    reps: usize,
    want: u64,
    ts: f64,
    (only_variant, only_p, only_futures): (Option<&str>, Option<usize>, Option<FutureStack>),
) {
    let mut fj_t1 = f64::NAN;
    for (variant, futures) in ROWS {
        if only_variant.is_some_and(|v| v != variant) || only_futures.is_some_and(|f| f != futures)
        {
            continue;
        }
        // The arm as the harness spells it: the runtime, and its setting where not the default.
        let arm = if futures == FutureStack::default() {
            S::NAME.to_string()
        } else {
            format!("{}/futures={futures}", S::NAME)
        };
        let mut t1 = f64::NAN;
        for p in [1, 2] {
            if only_p.is_some_and(|q| q != p) {
                continue;
            }
            let config = PoolConfig {
                futures,
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
                        "{arm} {variant}/fj at P=1 = {:.2}; one future costs {:.1} ns more than a join",
                        t / fj_t1,
                        (t - fj_t1) / forks as f64 * 1e9
                    );
                }
            }
            println!(
                "{arm} {variant} P={p}: {t:.4} s  T_{p}/T_s = {:.2}  T_1/T_{p} = {:.2}  stats of {reps} runs {:?}",
                t / ts,
                t1 / t,
                pool.stats().named()
            );
        }
    }
}
