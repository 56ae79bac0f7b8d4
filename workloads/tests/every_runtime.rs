//! Every workload variant on every runtime of the registry that this build has, on every
//! front-end it supports, at `Size::Test`, with its answer checked: the same code paths the
//! harness times, on small inputs. A runtime without futures runs the `fj` variants only; the
//! settings that change how tasks run, in every runtime whose capabilities admit them
//! (`schedulers/tests/common/settings.rs`: busy idle workers, the artifact's placement, Fibril
//! w/o unmap, futures without a stack of their own, NUMA-weighted victims), run too.

#[path = "../../schedulers/tests/common/settings.rs"]
mod settings;

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use stealbench_schedulers::registry::RUNTIMES;
use stealbench_schedulers::{
    AsyncForkJoin, ForkJoin, FutureForkJoin, PoolConfig, Scheduler, with_async_runtime,
    with_closure_runtime, with_future_runtime,
};
use stealbench_workloads::{Size, Variant, Workload, all, with_workload};

thread_local! {
    /// The test inputs made so far on this thread (one test), by workload.
    static INPUTS: RefCell<HashMap<&'static str, Rc<dyn Any>>> = RefCell::new(HashMap::new());
}

/// `W`'s input at `Size::Test`, made once per test and shared by every runtime and setting
/// it runs on: making it is serial work, as long as a run for some workloads (ferret ranks
/// every query to know the answer), and the input is only read.
fn input<W: Workload>() -> Rc<W::Input>
where
    W::Input: 'static,
{
    INPUTS.with(|inputs| {
        let any = Rc::clone(
            inputs
                .borrow_mut()
                .entry(W::NAME)
                .or_insert_with(|| Rc::new(W::input_at(Size::Test))),
        );
        any.downcast::<W::Input>()
            .expect("one input type per workload name")
    })
}

/// Runs `W`'s variants that `run_with` runs on `pool` (those `keep` keeps) twice each (so
/// state left behind by one run cannot hide in the next), checking each answer; returns the
/// number of runs.
fn runs<S: Scheduler, W: Workload>(
    pool: &S,
    variants: &[Variant],
    keep: impl Fn(Variant) -> bool,
    run_with: impl Fn(&S, Variant, &W::Input, &mut W::Work) -> W::Answer,
    front: &str,
) -> usize
where
    W::Input: 'static,
{
    let input = &*input::<W>();
    let mut n = 0;
    for &v in variants.iter().filter(|&&v| keep(v)) {
        for _ in 0..2 {
            let mut work = W::prepare(input);
            let answer = run_with(pool, v, input, &mut work);
            W::check(input, &work, &answer)
                .unwrap_or_else(|e| panic!("{} {front} {v} on {}: {e}", W::NAME, S::NAME));
            n += 1;
        }
    }
    n
}

/// Every closure-front-end variant of `W` on a pool with futures (its `gf` variants where the
/// runtime runs general futures).
fn future_runs<S: FutureForkJoin, W: Workload>(pool: &S) -> usize
where
    W::Input: 'static,
{
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
fn fork_join_runs<S: ForkJoin, W: Workload>(pool: &S) -> usize
where
    W::Input: 'static,
{
    runs::<S, W>(pool, W::VARIANTS, |v| !v.uses_futures(), W::run, "closure")
}

/// The async-front-end variants of `W` (only `fj` where the runtime has no futures).
fn async_runs<S: AsyncForkJoin, W: Workload>(pool: &S) -> usize
where
    W::Input: 'static,
{
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

/// Every front-end of every runtime of the registry that this build has, in each of its
/// configurations ([`settings::configs`]) that `keep` keeps; returns the runtimes run.
fn every_runtime_in(keep: impl Fn(&PoolConfig) -> bool) -> Vec<&'static str> {
    let mut tested = Vec::new();
    for r in RUNTIMES.iter().filter(|r| r.built()) {
        let caps = r.capabilities.expect("built");
        let configs = with_closure_runtime!(r.name, S => settings::configs::<S>(PoolConfig::with_workers))
            .or_else(|| with_async_runtime!(r.name, S => settings::configs::<S>(PoolConfig::with_workers)))
            .expect("a built runtime has a front-end");
        for config in configs.into_iter().filter(&keep) {
            let start = |what: &str| format!("{} {config:?} {what}", r.name);
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
            if !tested.contains(&r.name) {
                tested.push(r.name);
            }
        }
    }
    tested
}

/// Whether this build of the workloads has the cargo feature `feature` of the registry
/// (`None`: every build).
fn feature_on(feature: Option<&str>) -> bool {
    match feature {
        None => true,
        Some("tbb") => cfg!(feature = "tbb"),
        Some("openmp") => cfg!(feature = "openmp"),
        Some(f) => panic!("the registry's feature `{f}` is not forwarded by workloads/Cargo.toml"),
    }
}

/// Every runtime of the registry, on each of its front-ends, at P = 1 and (where it runs
/// worker threads) P = 2, with its default configuration; every runtime whose feature this
/// build has is run.
#[test]
fn every_registered_runtime() {
    let tested = every_runtime_in(|c| *c == PoolConfig::with_workers(c.workers));
    for r in RUNTIMES {
        assert_eq!(
            tested.contains(&r.name),
            feature_on(r.feature),
            "{}",
            r.name
        );
    }
}

/// Every runtime in each setting besides its defaults that changes how tasks run and that
/// its capabilities admit (busy idle workers, the artifact's placement, Fibril w/o unmap,
/// futures without a stack of their own, NUMA-weighted victims), at P = 2.
#[test]
fn every_setting_each_runtime_admits() {
    let tested = every_runtime_in(|c| *c != PoolConfig::with_workers(c.workers));
    assert!(!tested.is_empty());
}
