//! Every workload variant on every runtime and front-end it supports, at `Size::Test`, with its
//! answer checked: the same code paths the harness times, on small inputs.

use stealbench_schedulers::rayon::RayonPool;
use stealbench_schedulers::serial::Serial;
use stealbench_schedulers::tokio::TokioPool;
use stealbench_schedulers::{AsyncForkJoin, ForkJoin, PoolConfig, Scheduler};
use stealbench_workloads::{Size, Variant, Workload, all, with_workload};

/// (runtime, workload, variant) triples not run here. rayon helps instead of suspending, so a
/// future whose task waits for a future created by a sibling can deadlock with P >= 2 (see
/// `schedulers/src/rayon/mod.rs`): `ferret` `gf` chains each query's future to the previous one.
const UNSUPPORTED: &[(&str, &str, Variant)] = &[("rayon", "ferret", Variant::Gf)];

fn supported(runtime: &str, workload: &str, v: Variant) -> bool {
    !UNSUPPORTED.contains(&(runtime, workload, v))
}

/// Runs every closure-front-end variant of every workload on `pool`, twice (so state left
/// behind by one run cannot hide in the next), checking each answer.
// `with_workload!` makes `W` concrete, and some workloads' `Work` or `Answer` is `()`.
#[allow(clippy::let_unit_value)]
fn closure_front_end<S: ForkJoin>(pool: &S) -> usize {
    let mut runs = 0;
    for info in all() {
        runs += with_workload!(info.name, W => {
            let input = W::input(Size::Test);
            let mut n = 0;
            for &v in W::VARIANTS.iter().filter(|&&v| supported(S::NAME, W::NAME, v)) {
                for _ in 0..2 {
                    let mut work = W::prepare(&input);
                    let answer = W::run(pool, v, &input, &mut work);
                    W::check(&input, &work, &answer)
                        .unwrap_or_else(|e| panic!("{} {} on {}: {e}", W::NAME, v, S::NAME));
                    n += 1;
                }
            }
            n
        })
        .expect("listed workload");
    }
    runs
}

/// The same on the async front-end.
// `with_workload!` makes `W` concrete, and some workloads' `Work` or `Answer` is `()`.
#[allow(clippy::let_unit_value)]
fn async_front_end<S: AsyncForkJoin>(pool: &S) -> usize {
    let mut runs = 0;
    for info in all() {
        runs += with_workload!(info.name, W => {
            let input = W::input(Size::Test);
            let mut n = 0;
            for &v in W::ASYNC_VARIANTS.iter().filter(|&&v| supported(S::NAME, W::NAME, v)) {
                for _ in 0..2 {
                    let mut work = W::prepare(&input);
                    let answer = W::run_async(pool, v, &input, &mut work);
                    W::check(&input, &work, &answer)
                        .unwrap_or_else(|e| panic!("{} async {} on {}: {e}", W::NAME, v, S::NAME));
                    n += 1;
                }
            }
            n
        })
        .expect("listed workload");
    }
    runs
}

/// Twice the number of (closure, async) variants `runtime` runs.
fn variants(runtime: &str) -> (usize, usize) {
    let count = |i: &stealbench_workloads::WorkloadInfo, vs: &[Variant]| {
        vs.iter()
            .filter(|&&v| supported(runtime, i.name, v))
            .count()
    };
    all().iter().fold((0, 0), |(s, a), i| {
        (
            s + 2 * count(i, i.variants),
            a + 2 * count(i, i.async_variants),
        )
    })
}

#[test]
fn serial_both_front_ends() {
    let pool = Serial::start(&PoolConfig::with_workers(1)).unwrap();
    let (s, a) = variants(Serial::NAME);
    assert_eq!(closure_front_end(&pool), s);
    assert_eq!(async_front_end(&pool), a);
}

#[test]
fn rayon_one_and_two_workers() {
    for p in [1, 2] {
        let pool = RayonPool::start(&PoolConfig::with_workers(p)).unwrap();
        assert_eq!(closure_front_end(&pool), variants(RayonPool::NAME).0);
    }
}

#[test]
fn tokio_one_and_two_workers() {
    for p in [1, 2] {
        let pool = TokioPool::start(&PoolConfig::with_workers(p)).unwrap();
        assert_eq!(async_front_end(&pool), variants(TokioPool::NAME).1);
    }
}
