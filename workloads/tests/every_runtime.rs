//! Every workload variant on every runtime of the registry that this build has, on every
//! front-end it supports, at `Size::Test`, with its answer checked: the same code paths the
//! harness times, on small inputs. A runtime without futures runs the `fj` variants only; the
//! registered arms that change how tasks run (busy libfork, prows's artifact placement, Fibril
//! w/o unmap, futures without a stack) run too.

use stealbench_schedulers::abp::Abp;
use stealbench_schedulers::fibril::Fibril;
use stealbench_schedulers::libfork::LibforkPool;
use stealbench_schedulers::prows::Prows;
use stealbench_schedulers::registry::RUNTIMES;
use stealbench_schedulers::{
    AsyncForkJoin, ForkJoin, FutureForkJoin, FutureStack, IdlePolicy, Placement, PoolConfig,
    Scheduler, Unmap, with_async_runtime, with_closure_runtime, with_future_runtime,
};
use stealbench_workloads::{Size, Variant, Workload, all, with_workload};

/// Runs `W`'s variants that `run_with` runs on `pool` (those `keep` keeps) twice each (so
/// state left behind by one run cannot hide in the next), checking each answer; returns the
/// number of runs.
fn runs<S: Scheduler, W: Workload>(
    pool: &S,
    variants: &[Variant],
    keep: impl Fn(Variant) -> bool,
    run_with: impl Fn(&S, Variant, &W::Input, &mut W::Work) -> W::Answer,
    front: &str,
) -> usize {
    let input = W::input_at(Size::Test);
    let mut n = 0;
    for &v in variants.iter().filter(|&&v| keep(v)) {
        for _ in 0..2 {
            let mut work = W::prepare(&input);
            let answer = run_with(pool, v, &input, &mut work);
            W::check(&input, &work, &answer)
                .unwrap_or_else(|e| panic!("{} {front} {v} on {}: {e}", W::NAME, S::NAME));
            n += 1;
        }
    }
    n
}

/// Every closure-front-end variant of `W` on a pool with futures (its `gf` variants where the
/// runtime runs general futures).
fn future_runs<S: FutureForkJoin, W: Workload>(pool: &S) -> usize {
    let gf = S::CAPABILITIES.general_futures;
    runs::<S, W>(
        pool,
        W::VARIANTS,
        |v| gf || v != Variant::Gf,
        W::run_futures,
        "closure",
    )
}

/// The fork-join variants of `W` on a closure-front-end pool without futures.
fn fork_join_runs<S: ForkJoin, W: Workload>(pool: &S) -> usize {
    runs::<S, W>(pool, W::VARIANTS, |v| !v.uses_futures(), W::run, "closure")
}

/// The async-front-end variants of `W` (only `fj` where the runtime has no futures).
fn async_runs<S: AsyncForkJoin, W: Workload>(pool: &S) -> usize {
    let futures = S::CAPABILITIES.futures;
    runs::<S, W>(
        pool,
        W::ASYNC_VARIANTS,
        |v| futures || !v.uses_futures(),
        W::run_async,
        "async",
    )
}

/// Every workload's closure-front-end variants on `pool`.
fn closure_front_end<S: FutureForkJoin>(pool: &S) -> usize {
    all()
        .iter()
        .map(|info| with_workload!(info.name, W => future_runs::<S, W>(pool)).expect("listed"))
        .sum()
}

/// Every workload's fork-join variants on `pool`, a closure runtime without futures.
fn fork_join_front_end<S: ForkJoin>(pool: &S) -> usize {
    all()
        .iter()
        .map(|info| with_workload!(info.name, W => fork_join_runs::<S, W>(pool)).expect("listed"))
        .sum()
}

/// Every workload's async-front-end variants on `pool`.
fn async_front_end<S: AsyncForkJoin>(pool: &S) -> usize {
    all()
        .iter()
        .map(|info| with_workload!(info.name, W => async_runs::<S, W>(pool)).expect("listed"))
        .sum()
}

/// The number of runs of `variants` that `keep` keeps, over every workload (two each).
fn expected(
    variants: impl Fn(&stealbench_workloads::WorkloadInfo) -> Vec<Variant>,
    keep: impl Fn(Variant) -> bool,
) -> usize {
    all()
        .iter()
        .map(|i| 2 * variants(i).into_iter().filter(|&v| keep(v)).count())
        .sum()
}

/// Every runtime of the registry that this build has, on each of its front-ends, at P = 1 and
/// (where it runs worker threads) P = 2, with its default configuration.
#[test]
fn every_registered_runtime() {
    let mut tested = Vec::new();
    for r in RUNTIMES.iter().filter(|r| r.built()) {
        let caps = r.capabilities.expect("built");
        let workers: &[usize] = if caps.threads { &[1, 2] } else { &[1] };
        for &p in workers {
            let config = PoolConfig::with_workers(p);
            let start = |what: &str| format!("{} P={p} {what}", r.name);
            let closure_variants = |i: &stealbench_workloads::WorkloadInfo| i.variants.to_vec();
            let async_variants = |i: &stealbench_workloads::WorkloadInfo| i.async_variants.to_vec();
            let ran = with_future_runtime!(r.name, S => {
                let pool = S::start(&config).unwrap();
                let want = expected(closure_variants, |v| caps.general_futures || v != Variant::Gf);
                assert_eq!(closure_front_end(&pool), want, "{}", start("closure"));
            })
            .or_else(|| {
                with_closure_runtime!(r.name, S => {
                    let pool = S::start(&config).unwrap();
                    let want = expected(closure_variants, |v| !v.uses_futures());
                    assert!(want > 0);
                    assert_eq!(fork_join_front_end(&pool), want, "{}", start("closure"));
                })
            });
            let ran_async = with_async_runtime!(r.name, S => {
                let pool = S::start(&config).unwrap();
                let want = expected(async_variants, |v| caps.futures || !v.uses_futures());
                assert_eq!(async_front_end(&pool), want, "{}", start("async"));
            });
            assert!(ran.is_some() || ran_async.is_some(), "{}", r.name);
        }
        tested.push(r.name);
    }
    let mut built = vec![
        "serial", "rayon", "chili", "tokio", "abp", "prows", "fibril", "libfork",
    ];
    built.extend(cfg!(feature = "tbb").then_some("tbb"));
    built.extend(cfg!(feature = "openmp").then_some("openmp"));
    for name in built {
        assert!(tested.contains(&name), "{name} is registered and built");
    }
}

/// Every closure-front-end variant on `S` started with `config` at each P of `workers`.
fn closure_runtime_with<S: FutureForkJoin>(workers: &[usize], config: &PoolConfig) {
    for &p in workers {
        let config = PoolConfig {
            workers: p,
            ..config.clone()
        };
        let pool = S::start(&config).unwrap();
        let gf = S::CAPABILITIES.general_futures;
        let want = expected(|i| i.variants.to_vec(), |v| gf || v != Variant::Gf);
        assert_eq!(closure_front_end(&pool), want, "{} {config:?}", S::NAME);
    }
}

/// The registered arms besides the defaults that change how tasks run: the busy libfork pool
/// at P = 2 (fj only: libfork has no futures).
#[test]
fn libfork_busy() {
    let config = PoolConfig {
        idle: IdlePolicy::Busy,
        ..PoolConfig::with_workers(2)
    };
    let pool = LibforkPool::start(&config).unwrap();
    let want = expected(|i| i.async_variants.to_vec(), |v| !v.uses_futures());
    assert_eq!(async_front_end(&pool), want);
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

/// Fibril w/o unmap (`fibril/unmap=off`).
#[test]
fn fibril_without_unmap() {
    let keep = PoolConfig {
        unmap: Unmap::Off,
        ..PoolConfig::with_workers(1)
    };
    closure_runtime_with::<Fibril>(&[2], &keep);
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
