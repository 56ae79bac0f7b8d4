//! Every workload variant on every runtime and front-end it supports, at `Size::Test`, with its
//! answer checked: the same code paths the harness times, on small inputs.

use stealbench_schedulers::rayon::RayonPool;
use stealbench_schedulers::serial::Serial;
use stealbench_schedulers::tokio::TokioPool;
use stealbench_schedulers::{AsyncForkJoin, ForkJoin, PoolConfig, Scheduler};
use stealbench_workloads::{Size, Variant, Workload, all, with_workload};

/// Whether `runtime` runs closure-front-end variant `v`. rayon cannot run general futures whose
/// tasks touch futures created outside their own subtree (`bst` gf: a merge touches its
/// parent's split, and split tasks touch earlier splits): its touch helps instead of
/// suspending and can bury the awaited task under the toucher, a hang that depends on the
/// schedule (see the rayon module docs). The harness marks (rayon, gf) unsupported.
fn supported(runtime: &str, v: Variant) -> bool {
    !(runtime == "rayon" && v == Variant::Gf)
}

/// Runs every closure-front-end variant of every workload on `pool`, twice (so state left
/// behind by one run cannot hide in the next), checking each answer.
#[allow(clippy::let_unit_value)] // `Work` or `Answer` is `()` for some workloads.
fn closure_front_end<S: ForkJoin>(pool: &S) -> usize {
    let mut runs = 0;
    for info in all() {
        runs += with_workload!(info.name, W => {
            let input = W::input(Size::Test);
            let mut n = 0;
            for &v in W::VARIANTS.iter().filter(|&&v| supported(S::NAME, v)) {
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
#[allow(clippy::let_unit_value)] // `Work` or `Answer` is `()` for some workloads.
fn async_front_end<S: AsyncForkJoin>(pool: &S) -> usize {
    let mut runs = 0;
    for info in all() {
        runs += with_workload!(info.name, W => {
            let input = W::input(Size::Test);
            let mut n = 0;
            for &v in W::ASYNC_VARIANTS {
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

fn variants(runtime: &str) -> (usize, usize) {
    all().iter().fold((0, 0), |(s, a), i| {
        let closure = i
            .variants
            .iter()
            .filter(|&&v| supported(runtime, v))
            .count();
        (s + 2 * closure, a + 2 * i.async_variants.len())
    })
}

#[test]
fn serial_both_front_ends() {
    let pool = Serial::start(&PoolConfig::with_workers(1)).unwrap();
    let (s, a) = variants("serial");
    assert_eq!(closure_front_end(&pool), s);
    assert_eq!(async_front_end(&pool), a);
}

#[test]
fn rayon_one_and_two_workers() {
    for p in [1, 2] {
        let pool = RayonPool::start(&PoolConfig::with_workers(p)).unwrap();
        assert_eq!(closure_front_end(&pool), variants("rayon").0);
    }
}

#[test]
fn tokio_one_and_two_workers() {
    for p in [1, 2] {
        let pool = TokioPool::start(&PoolConfig::with_workers(p)).unwrap();
        assert_eq!(async_front_end(&pool), variants("tokio").1);
    }
}
