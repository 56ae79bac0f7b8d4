//! Tests of the fiber runtimes `abp`, `fibril` and `prows` (with both placements,
//! `prows/placement=paper` and `prows/placement=artifact`), the same cases for all: fork-join,
//! scopes, futures, deep recursion, panics, idle sleep and wake-up, stack accounting, handles
//! used off their fiber, and configurations each accepts or refuses.

#[path = "common/fib.rs"]
mod fib;

#[path = "common/fence.rs"]
mod fence;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use stealbench_schedulers::*;

/// The suite for the fiber runtime `$Pool`, whose worker handle is `$Worker`, started with
/// `$placement` (the default, `Placement::Paper`, where it is not given).
macro_rules! fiber_runtime_tests {
    ($name:ident, $Pool:ty, $Worker:ty) => {
        fiber_runtime_tests!($name, $Pool, $Worker, Placement::Paper);
    };
    ($name:ident, $Pool:ty, $Worker:ty, $placement:expr) => {
        mod $name {
            use super::*;
            use fib::{fib_fj, fib_sf};

            /// `p` workers, every other setting at its default.
            fn config(p: usize) -> PoolConfig {
                PoolConfig {
                    placement: $placement,
                    ..fence::config(p)
                }
            }

            fn pool(p: usize) -> $Pool {
                <$Pool>::start(&config(p)).unwrap()
            }

            /// Stacks the process cannot map (1 PiB each, past any address space) make the
            /// start fail with the OS's refusal, as a library pool's refused threads do, not
            /// an abort in a worker.
            #[test]
            fn stacks_it_cannot_map_are_a_start_error() {
                let cfg = PoolConfig {
                    stack_size: Some(1 << 50),
                    ..config(2)
                };
                match <$Pool>::start(&cfg) {
                    Err(StartError::Os(m)) => {
                        assert!(m.contains("cannot map 2 fiber stacks of"), "{m}")
                    }
                    Err(e) => panic!("{e}"),
                    Ok(_) => panic!("a pool of 1 PiB stacks started"),
                }
            }

            fn stat(s: &Stats, name: &str) -> u64 {
                s.extra(name).unwrap()
            }

            /// Waits (bounded) until every worker has retired its last fiber after a run.
            fn wait_stacks_free(p: &$Pool) {
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

            #[test]
            fn fib_fj_and_sf_on_one_and_two_workers() {
                for p in [1, 2] {
                    let pool = pool(p);
                    assert_eq!(pool.run(|w| fib_fj(w, 22)), 17711, "fj P={p}");
                    assert_eq!(pool.run(|w| fib_sf(w, 18)), 2584, "sf P={p}");
                    let s = pool.stats();
                    assert_eq!(stat(&s, "suspensions"), stat(&s, "resumptions"), "{s:?}");
                    assert!(stat(&s, "fiber_runs") >= 2584, "{s:?}");
                    assert!(
                        stat(&s, "fibers_created") <= stat(&s, "fiber_runs"),
                        "{s:?}"
                    );
                    wait_stacks_free(&pool);
                }
            }

            #[test]
            fn scope_with_ten_thousand_spawns() {
                for p in [1, 2] {
                    let pool = pool(p);
                    let slots: Vec<AtomicUsize> =
                        (0..10_000).map(|_| AtomicUsize::new(0)).collect();
                    let total = pool.run(|w| {
                        w.scope(|s, w| {
                            for (i, slot) in slots.iter().enumerate() {
                                s.spawn(w, move |_, _| {
                                    slot.fetch_add(i + 1, Ordering::Relaxed);
                                });
                            }
                        });
                        slots
                            .iter()
                            .map(|s| s.load(Ordering::Relaxed))
                            .sum::<usize>()
                    });
                    assert_eq!(total, 10_000 * 10_001 / 2, "P={p}");
                    assert!(
                        slots
                            .iter()
                            .enumerate()
                            .all(|(i, s)| s.load(Ordering::Relaxed) == i + 1)
                    );
                    wait_stacks_free(&pool);
                }
            }

            #[test]
            fn scope_debug_says_whether_the_body_runs() {
                let pool = pool(1);
                let text = pool.run(|w| w.scope(|s, _| format!("{s:?}")));
                assert!(
                    text.contains("body_running: true") && text.contains("pending_besides_body: 0"),
                    "{text}"
                );
            }

            #[test]
            fn nested_spawns_borrow_and_mutate_disjoint_data() {
                fn fill<W: Futures>(w: &W, base: usize, out: &mut [usize]) {
                    if out.len() <= 3 {
                        for (i, o) in out.iter_mut().enumerate() {
                            *o = base + i;
                        }
                        return;
                    }
                    let mid = out.len() / 2;
                    let (l, r) = out.split_at_mut(mid);
                    w.scope(|s, w| {
                        s.spawn(w, move |_, w| fill(w, base, l));
                        s.spawn(w, move |_, w| fill(w, base + mid, r));
                    });
                }
                let pool = pool(2);
                let mut v = vec![0usize; 5_000];
                pool.run(|w| fill(w, 0, &mut v));
                assert!(v.iter().enumerate().all(|(i, &x)| i == x));
            }

            #[test]
            fn futures_single_multi_touch_other_task_and_chained() {
                for p in [1, 2] {
                    let pool = pool(p);
                    let seen = AtomicUsize::new(0);
                    let seen = &seen;
                    let r = pool.run(|w| {
                        w.scope(|s, w| {
                            // Single touch.
                            let a = w.future(s, |_, w| fib_fj(w, 15));
                            // Multi-touch, touched here and by two other tasks.
                            let b = w.shared_future(s, |_, w| fib_fj(w, 16));
                            for _ in 0..2 {
                                let b = b.clone();
                                s.spawn(w, move |_, w| {
                                    seen.fetch_add(*b.get(w) as usize, Ordering::Relaxed);
                                });
                            }
                            // Chained: a future whose task touches another future.
                            let b2 = b.clone();
                            let c = w.future(s, move |_, w| *b2.get(w) + 1);
                            let d = w.future(s, move |_, w| c.get(w) * 2);
                            let (av, bv, dv) = (a.get(w), *b.get(w), d.get(w));
                            (av, bv, bv, dv)
                        })
                    });
                    let (a, b, b_again, d) = r;
                    assert_eq!((a, b, b_again, d), (610, 987, 987, 2 * 988), "P={p}");
                    assert_eq!(seen.load(Ordering::Relaxed), 2 * 987);
                    wait_stacks_free(&pool);
                }
            }

            #[test]
            fn future_handle_escapes_its_scope() {
                let pool = pool(2);
                let v = pool.run(|w| {
                    let f = w.scope(|s, w| w.shared_future(s, |_, w| fib_fj(w, 12)));
                    *f.get(w) + f.clone().get(w)
                });
                assert_eq!(v, 2 * 144);
            }

            fn deep<W: Futures>(w: &W, d: u32) -> u64 {
                if d == 0 {
                    return 0;
                }
                let (a, b) = w.join(|w| deep(w, d - 1), |_| 1);
                a + b
            }

            fn deep_futures<W: Futures>(w: &W, d: u32) -> u64 {
                if d == 0 {
                    return 0;
                }
                w.scope(|s, w| {
                    let f = w.future(s, move |_, w| deep_futures(w, d - 1));
                    f.get(w) + 1
                })
            }

            #[test]
            fn recursion_ten_thousand_deep() {
                for p in [1, 2] {
                    let pool = pool(p);
                    assert_eq!(pool.run(|w| deep(w, 10_000)), 10_000, "P={p}");
                    wait_stacks_free(&pool);
                }
                // A chain of 2,000 futures nested in scopes: one suspended continuation fiber per level.
                let pool = pool(2);
                assert_eq!(pool.run(|w| deep_futures(w, 2_000)), 2_000);
                wait_stacks_free(&pool);
            }

            #[test]
            fn panics_reach_the_caller_and_the_pool_survives() {
                let pool = pool(2);
                let quiet = std::panic::take_hook();
                std::panic::set_hook(Box::new(|_| {}));
                type Case = Box<dyn Fn(&$Worker) -> u64 + Sync>;
                let cases: Vec<(&str, Case)> = vec![
                    ("root", Box::new(|_| panic!("boom root"))),
                    (
                        "join b",
                        Box::new(|w| {
                            let (a, _) = w.join(|w| fib_fj(w, 18), |_| -> u64 { panic!("boom b") });
                            a
                        }),
                    ),
                    (
                        "join a",
                        Box::new(|w| {
                            let (_, b) = w.join(|_| -> u64 { panic!("boom a") }, |w| fib_fj(w, 18));
                            b
                        }),
                    ),
                    (
                        "spawn",
                        Box::new(|w| {
                            w.scope(|s, w| {
                                s.spawn(w, |_, w| {
                                    fib_fj(w, 15);
                                    panic!("boom spawn")
                                });
                                fib_fj(w, 15)
                            })
                        }),
                    ),
                    (
                        "future",
                        Box::new(|w| {
                            w.scope(|s, w| {
                                let f = w.future(s, |_, w| -> u64 {
                                    fib_fj(w, 15);
                                    panic!("boom future")
                                });
                                f.get(w)
                            })
                        }),
                    ),
                ];
                for (name, case) in &cases {
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        pool.run(|w| case(w))
                    }));
                    let err = r.expect_err(name);
                    let msg = err
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| err.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    assert!(msg.starts_with("boom"), "{name}: {msg}");
                    assert_eq!(pool.run(|w| fib_fj(w, 20)), 6765, "usable after {name}");
                }
                std::panic::set_hook(quiet);
                wait_stacks_free(&pool);
            }

            #[test]
            fn idle_workers_sleep_and_wake() {
                let pool = pool(2);
                for _ in 0..5 {
                    // Long enough for the idle workers to go to sleep.
                    std::thread::sleep(Duration::from_millis(30));
                    assert_eq!(pool.run(|w| fib_fj(w, 18)), 2584);
                }
                // Two callers at once.
                std::thread::scope(|s| {
                    let a = s.spawn(|| pool.run(|w| fib_sf(w, 16)));
                    let b = s.spawn(|| pool.run(|w| fib_fj(w, 20)));
                    assert_eq!((a.join().unwrap(), b.join().unwrap()), (987, 6765));
                });
            }

            #[test]
            fn handle_used_on_another_thread_panics() {
                let pool = pool(1);
                let r = pool.run(|w| {
                    std::thread::scope(|s| {
                        s.spawn(|| {
                            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                w.join(|_| 1, |_| 2);
                            }))
                            .is_err()
                        })
                        .join()
                        .unwrap()
                    })
                });
                assert!(r, "using a worker handle on a foreign thread must panic");
            }

            #[test]
            fn pinned_busy_pool_and_rejected_configs() {
                // The settings a fiber runtime honours, each set (any other keeps its default).
                let mut cfg = PoolConfig::with_workers(2);
                cfg.pinning = Pinning::Compact;
                cfg.victim = VictimPolicy::Uniform;
                cfg.idle = IdlePolicy::Busy;
                cfg.futures = FutureStack::Current;
                // Small stacks, as `--stack-size 256K` gives them.
                cfg.stack_size = Some(256 << 10);
                // A forced schedule that never binds here (fib does not spin on others).
                cfg.steals = Some(1 << 40);
                cfg.placement = $placement;
                cfg.unmap = Unmap::On;
                cfg.fence = fence::mode();
                let pool = <$Pool>::start(&cfg).unwrap();
                assert_eq!(pool.workers(), 2);
                assert_eq!(pool.run(|w| fib_sf(w, 15)), 610);
                assert_eq!(pool.run(|w| fib_fj(w, 20)), 6765);
                drop(pool);
                assert!(<$Pool>::start(&config(0)).is_err());
                let numa = PoolConfig {
                    victim: VictimPolicy::NumaWeighted,
                    ..config(2)
                };
                assert!(matches!(
                    <$Pool>::start(&numa),
                    Err(StartError::Unsupported(_))
                ));
                // Only a runtime with stealable sets has a placement to choose.
                let artifact = PoolConfig {
                    placement: Placement::Artifact,
                    ..fence::config(2)
                };
                match <$Pool>::start(&artifact) {
                    Ok(_) => assert!(<$Pool>::CAPABILITIES.placement),
                    Err(e) => {
                        assert!(!<$Pool>::CAPABILITIES.placement);
                        assert!(e.to_string().contains("placement 'artifact'"), "{e}");
                    }
                }
            }
        }
    };
}

fiber_runtime_tests!(
    abp,
    stealbench_schedulers::abp::Abp,
    stealbench_schedulers::abp::AbpWorker
);
fiber_runtime_tests!(
    fibril,
    stealbench_schedulers::fibril::Fibril,
    stealbench_schedulers::fibril::FibrilWorker
);
fiber_runtime_tests!(
    prows,
    stealbench_schedulers::prows::Prows,
    stealbench_schedulers::prows::ProwsWorker
);
fiber_runtime_tests!(
    prows_artifact,
    stealbench_schedulers::prows::Prows,
    stealbench_schedulers::prows::ProwsWorker,
    Placement::Artifact
);
