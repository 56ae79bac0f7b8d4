//! Every workload variant on every runtime and front-end it supports, at `Size::Test`, with its
//! answer checked: the same code paths the harness times, on small inputs.

use stealbench_schedulers::abp::Abp;
use stealbench_schedulers::libfork::LibforkPool;
use stealbench_schedulers::prows::Prows;
use stealbench_schedulers::rayon::RayonPool;
use stealbench_schedulers::serial::Serial;
use stealbench_schedulers::tokio::TokioPool;
use stealbench_schedulers::{
    AsyncForkJoin, ForkJoin, FutureStack, IdlePolicy, Placement, PoolConfig, Scheduler,
};
use stealbench_workloads::{Size, Variant, Workload, all, with_workload};

/// Runs every closure-front-end variant of `W` on `pool`, twice (so state left behind by one
/// run cannot hide in the next), checking each answer; returns the number of runs.
fn closure_runs<S: ForkJoin, W: Workload>(pool: &S) -> usize {
    let input = W::input_at(Size::Test);
    let mut n = 0;
    for &v in W::VARIANTS {
        if v == Variant::Gf && !S::CAPABILITIES.general_futures {
            continue; // the runtime says it cannot run general futures (rayon)
        }
        for _ in 0..2 {
            let mut work = W::prepare(&input);
            let answer = W::run(pool, v, &input, &mut work);
            W::check(&input, &work, &answer)
                .unwrap_or_else(|e| panic!("{} {} on {}: {e}", W::NAME, v, S::NAME));
            n += 1;
        }
    }
    n
}

/// The same on the async front-end.
fn async_runs<S: AsyncForkJoin, W: Workload>(pool: &S) -> usize {
    let input = W::input_at(Size::Test);
    let mut n = 0;
    for &v in W::ASYNC_VARIANTS {
        if v != Variant::Fj && !S::CAPABILITIES.futures {
            continue; // a fork-join runtime without futures (libfork)
        }
        for _ in 0..2 {
            let mut work = W::prepare(&input);
            let answer = W::run_async(pool, v, &input, &mut work);
            W::check(&input, &work, &answer)
                .unwrap_or_else(|e| panic!("{} async {} on {}: {e}", W::NAME, v, S::NAME));
            n += 1;
        }
    }
    n
}

/// Every workload's closure-front-end variants on `pool`.
fn closure_front_end<S: ForkJoin>(pool: &S) -> usize {
    all()
        .iter()
        .map(|info| with_workload!(info.name, W => closure_runs::<S, W>(pool)).expect("listed"))
        .sum()
}

/// Every workload's async-front-end variants on `pool`.
fn async_front_end<S: AsyncForkJoin>(pool: &S) -> usize {
    all()
        .iter()
        .map(|info| with_workload!(info.name, W => async_runs::<S, W>(pool)).expect("listed"))
        .sum()
}

/// The number of runs `closure_front_end` and `async_front_end` make; `with_gf` counts the
/// closure front-end's `gf` variants too.
fn variants(with_gf: bool) -> (usize, usize) {
    all().iter().fold((0, 0), |(s, a), i| {
        let closure = i
            .variants
            .iter()
            .filter(|&&v| with_gf || v != Variant::Gf)
            .count();
        (s + 2 * closure, a + 2 * i.async_variants.len())
    })
}

#[test]
fn serial_both_front_ends() {
    let pool = Serial::start(&PoolConfig::with_workers(1)).unwrap();
    let (s, a) = variants(true);
    assert_eq!(closure_front_end(&pool), s);
    assert_eq!(async_front_end(&pool), a);
}

/// Every workload's closure-front-end variants on `S` started at each P of `workers` (its `gf`
/// variants where the runtime runs general futures).
fn closure_runtime<S: ForkJoin>(workers: &[usize]) {
    closure_runtime_with::<S>(workers, &PoolConfig::with_workers(1));
}

/// As `closure_runtime`, on pools started with `config` but for its worker count.
fn closure_runtime_with<S: ForkJoin>(workers: &[usize], config: &PoolConfig) {
    for &p in workers {
        let config = PoolConfig {
            workers: p,
            ..config.clone()
        };
        let pool = S::start(&config).unwrap();
        let want = variants(S::CAPABILITIES.general_futures).0;
        assert_eq!(closure_front_end(&pool), want, "{} {config:?}", S::NAME);
    }
}

#[test]
fn rayon_one_and_two_workers() {
    closure_runtime::<RayonPool>(&[1, 2]);
}

#[test]
fn tokio_one_and_two_workers() {
    for p in [1, 2] {
        let pool = TokioPool::start(&PoolConfig::with_workers(p)).unwrap();
        assert_eq!(async_front_end(&pool), variants(true).1);
    }
}

/// The async front-end's `fj` variants only (libfork has no futures), on the lazy pool at
/// P = 1 and 2 and the busy pool at P = 2.
#[test]
fn libfork_lazy_and_busy() {
    let fj = 2 * all()
        .iter()
        .filter(|i| i.async_variants.contains(&Variant::Fj))
        .count();
    assert!(fj > 0);
    for (p, idle) in [
        (1, IdlePolicy::Lazy),
        (2, IdlePolicy::Lazy),
        (2, IdlePolicy::Busy),
    ] {
        let config = PoolConfig {
            idle,
            ..PoolConfig::with_workers(p)
        };
        let pool = LibforkPool::start(&config).unwrap();
        assert_eq!(async_front_end(&pool), fj, "P={p} {idle}");
    }
}

#[test]
fn abp_one_and_two_workers() {
    closure_runtime::<Abp>(&[1, 2]);
}

#[test]
fn prows_one_and_two_workers() {
    closure_runtime::<Prows>(&[1, 2]);
}

/// Two workers only: at P = 1 the artifact placement has one worker to choose from.
#[test]
fn prows_artifact_two_workers() {
    let artifact = PoolConfig {
        placement: Placement::Artifact,
        ..PoolConfig::with_workers(1)
    };
    closure_runtime_with::<Prows>(&[2], &artifact);
}

/// Futures without a stack of their own (`X/futures=nostack`, fib's `sf` there being the ProWS
/// paper's "-stack" row): every variant, on the fiber runtimes that offer the choice.
#[test]
fn fiber_runtimes_futures_nostack() {
    let nostack = PoolConfig {
        futures: FutureStack::Current,
        ..PoolConfig::with_workers(1)
    };
    closure_runtime_with::<Abp>(&[1, 2], &nostack);
    closure_runtime_with::<Prows>(&[1, 2], &nostack);
}
