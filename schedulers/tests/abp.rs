//! Tests of the `abp` runtime: fork-join, scopes, futures, deep recursion, a randomized DAG
//! stress test, stack accounting and panic propagation.

use stealbench_schedulers::abp::Abp;
use stealbench_schedulers::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

fn pool(p: usize) -> Abp {
    Abp::start(&PoolConfig::with_workers(p)).unwrap()
}

fn stat(s: &Stats, name: &str) -> u64 {
    s.extra.iter().find(|(k, _)| *k == name).unwrap().1
}

/// Waits (bounded) until every worker has retired its last fiber after a run.
fn wait_stacks_free(p: &Abp) {
    let t = Instant::now();
    while p.stacks_in_use() != 0 {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "{} fiber stacks still in use after the run",
            p.stacks_in_use()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn fib_fj<W: Worker>(w: &W, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = w.join(|w| fib_fj(w, n - 1), |w| fib_fj(w, n - 2));
    a + b
}

fn fib_sf<W: Worker>(w: &W, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    w.scope(|s| {
        let x = s.future(w, move |_, w| fib_sf(w, n - 1));
        let y = fib_sf(w, n - 2);
        x.get(w) + y
    })
}

#[test]
fn fib_fj_and_sf_on_one_and_two_workers() {
    for p in [1, 2] {
        let pool = pool(p);
        assert_eq!(pool.run(|w| fib_fj(w, 22)), 17711, "fj P={p}");
        assert_eq!(pool.run(|w| fib_sf(w, 18)), 2584, "sf P={p}");
        let s = pool.stats();
        assert_eq!(stat(&s, "suspensions"), stat(&s, "resumptions"), "{s:?}");
        assert!(stat(&s, "fibers_created") >= 2584, "{s:?}");
        wait_stacks_free(&pool);
    }
}
