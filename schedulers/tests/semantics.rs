//! The semantics of the `Scheduler` trait family: one generic suite, instantiated by macro
//! ([`for_each_built_runtime!`]) for every runtime of the registry this build has, on each of
//! its front-ends, with the tests of futures where that front-end has them (a module per
//! runtime, `closures` and `asynch` in it). Each test runs in every configuration the
//! runtime's capabilities admit (`common/settings.rs`): P = 1, P = 2 where it runs worker
//! threads, and at P = 2 each setting that changes how its tasks run (futures without a stack
//! of their own, the artifact's placement, busy idle workers, NUMA-weighted victims, Fibril
//! w/o unmap).
//!
//! Every test checks values (never only "it did not crash"). The suite stays within the rules
//! every runtime supports; in particular a future touched by a task other than its creator's
//! subtree is a leaf computation, because helping runtimes (rayon) can deadlock otherwise (see
//! `stealbench_schedulers::rayon`).

// Recursive async functions write `-> impl Future + Send` out: the compiler cannot infer `Send`
// of a future whose type contains itself. Clippy would turn them into `async fn`s, which then
// fail to compile.
#![allow(clippy::manual_async_fn)]

#[path = "common/fib.rs"]
mod fib;

#[path = "common/fence.rs"]
mod fence;

#[path = "common/settings.rs"]
mod settings;
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Once;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use stealbench_schedulers::{
    AsyncForkJoin, AsyncShared, AsyncWorker, ForkJoin, FutureForkJoin, FutureHandle, FutureStack,
    Futures, PoolConfig, Scheduler, Scope, SharedHandle, Stats, Worker, for_each_built_runtime,
};

/// Recursion depth of the deep tests (nested joins, futures, spawns on one path).
const DEPTH: usize = 10_000;
/// Future nesting depth for pools whose futures share their toucher's stack.
const FUTURE_DEPTH_ONE_STACK: usize = 1_000;
/// Spawns in one scope.
const SPAWNS: usize = 10_000;
/// Length of the future chains.
const CHAIN: usize = 2_000;
/// Every deliberate panic's message starts with this; the panic hook keeps them quiet.
const DELIBERATE: &str = "deliberate panic";

/// Starts a pool with `config`, checks its worker count, and keeps deliberate panics quiet.
fn start_with<S: Scheduler>(config: PoolConfig) -> S {
    let p = config.workers;
    static QUIET: Once = Once::new();
    QUIET.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !message(info.payload()).starts_with(DELIBERATE) {
                default(info);
            }
        }));
    });
    let pool = S::start(&config).unwrap();
    assert_eq!(pool.workers(), p);
    pool
}

/// Runs `body` on a thread with a large stack: the serial runtime recurses on the caller's.
fn on_big_stack<R: Send>(body: impl FnOnce() -> R + Send) -> R {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(512 << 20)
            .spawn_scoped(s, body)
            .unwrap()
            .join()
            .unwrap_or_else(|p| resume_unwind(p))
    })
}

/// The text of a panic payload.
fn message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "<not a string>".to_string()
    }
}

/// Runs `f`, which must panic with a message containing `expected`.
fn expect_panic<R>(expected: &str, f: impl FnOnce() -> R) {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(_) => panic!("expected a panic containing {expected:?}, got none"),
        Err(p) => {
            let m = message(&*p);
            assert!(
                m.contains(expected),
                "panic {m:?} does not contain {expected:?}"
            );
        }
    }
}

fn extra(stats: &Stats, name: &str) -> Option<u64> {
    stats.extra(name)
}

/// After a reset: the same counters and gauges as before, every counter zero (or
/// unavailable); a gauge (a level such as stacks mapped) is not zeroed, and a high-water mark
/// drops to at most its value before the reset. Idle-time counters (steal attempts, sleeps)
/// count only while a run is in progress, so an idle pool leaves them alone; each of `workers`
/// workers may add one it began before the run ended, and one window of the deques'
/// fence-mode review that its last pop ended.
fn check_reset(before: &Stats, after: &Stats, workers: usize) {
    let names = |s: &Stats| s.named().into_iter().map(|(k, _)| k).collect::<Vec<_>>();
    assert_eq!(names(before), names(after));
    let counters = Stats {
        gauges: Vec::new(),
        ..after.clone()
    };
    for (k, v) in counters.named() {
        let most = if k == "steal_attempts" || k == "sleeps" {
            workers as u64
        } else if k == "heavy_fences" || k == "fence_switches" {
            // A worker's pop after the run (its look for more work) can end a window of the
            // deques' fence-mode review, and switch back with a heavy fence, or look and
            // switch to symmetric mode.
            workers as u64
        } else if k == "symmetric_pops" {
            // That window's pops, counted when it ends.
            (workers * fence::mode().switching().window as usize) as u64
        } else if k == "minor_faults" {
            // The fiber pools count the worker threads' faults from the reset on: a worker
            // that goes idle just after it may touch a few new pages (of its own stack).
            64 * workers as u64
        } else {
            0
        };
        assert!(
            v.is_none_or(|v| v <= most),
            "{k} = {v:?} after reset_stats (at most {most})"
        );
    }
    for ((k, b), (_, a)) in before.gauges.iter().zip(&after.gauges) {
        if k.ends_with("high_water") {
            assert!(a <= b, "{k}: {a} after reset, {b} before");
        }
    }
    if let (Some(s), Some(a)) = (before.steals, before.steal_attempts) {
        assert!(s <= a, "{s} steals out of {a} attempts");
    }
}

fn fib(n: u64) -> u64 {
    if n < 2 { n } else { fib(n - 1) + fib(n - 2) }
}

/// The value the future chains compute, serially.
fn chain_value(len: usize) -> u64 {
    (1..len as u64).fold(1, |acc, i| (acc * 31 + i) % 1_000_003)
}

/// The closure front-end suite.
mod fj {
    use super::*;
    use fib::{fib_fj, fib_sf};

    /// The leaves `lo..hi` in the order the join tree returns them.
    fn collect<W: Worker>(w: &W, lo: u32, hi: u32) -> Vec<u32> {
        if hi - lo == 1 {
            return vec![lo];
        }
        let mid = lo + (hi - lo) / 2;
        let (mut a, b) = w.join(|w| collect(w, lo, mid), |w| collect(w, mid, hi));
        a.extend(b);
        a
    }

    /// Writes `3 (offset + i) + 1` into `out[i]`, splitting the borrowed slice by joins.
    fn fill<W: Worker>(w: &W, out: &mut [u64], offset: u64, leaves: &AtomicUsize) {
        if out.len() <= 3 {
            for (i, x) in out.iter_mut().enumerate() {
                *x = 3 * (offset + i as u64) + 1;
            }
            leaves.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let mid = out.len() / 2;
        let (a, b) = out.split_at_mut(mid);
        w.join(
            |w| fill(w, a, offset, leaves),
            |w| fill(w, b, offset + mid as u64, leaves),
        );
    }

    pub fn join_results<S: ForkJoin>(pool: &S) {
        let (a, b) = pool.run(|w| w.join(|_| 6 * 7, |_| String::from("right")));
        assert_eq!((a, b.as_str()), (42, "right"));
        let (l, r) = pool.run(|w| w.join(|_| "left", |_| "right"));
        assert_eq!((l, r), ("left", "right"));
        assert_eq!(
            pool.run(|w| collect(w, 0, 1000)),
            (0..1000).collect::<Vec<_>>()
        );
        let mut out = vec![0u64; 1000];
        let leaves = AtomicUsize::new(0);
        pool.run(|w| fill(w, &mut out, 0, &leaves));
        for (i, x) in out.iter().enumerate() {
            assert_eq!(*x, 3 * i as u64 + 1, "slot {i}");
        }
        assert!(leaves.load(Ordering::Relaxed) >= 1000 / 3);
    }

    /// Sums `lo..hi` through a join tree, counting the leaves.
    fn sum_tree<W: Worker>(w: &W, lo: u64, hi: u64, leaves: &AtomicU64) -> u64 {
        if hi - lo == 1 {
            leaves.fetch_add(1, Ordering::Relaxed);
            return lo;
        }
        let mid = lo + (hi - lo) / 2;
        let (a, b) = w.join(
            |w| sum_tree(w, lo, mid, leaves),
            |w| sum_tree(w, mid, hi, leaves),
        );
        a + b
    }

    pub fn deep_nesting<S: ForkJoin>(pool: &S) {
        assert_eq!(pool.run(|w| fib_fj(w, 20)), fib(20));
        let n = 1u64 << 15;
        let leaves = AtomicU64::new(0);
        assert_eq!(pool.run(|w| sum_tree(w, 0, n, &leaves)), n * (n - 1) / 2);
        assert_eq!(
            leaves.load(Ordering::Relaxed),
            n,
            "every leaf runs exactly once"
        );
    }

    pub fn scope_with_many_spawns<S: ForkJoin>(pool: &S) {
        let mut slots = vec![0u64; SPAWNS];
        let ran = AtomicUsize::new(0);
        pool.run(|w| {
            w.scope(|s, w| {
                for (i, slot) in slots.iter_mut().enumerate() {
                    let ran = &ran;
                    let value = (i as u64) * (i as u64) + 1;
                    if i % 2 == 0 {
                        s.spawn(w, move |_, _| {
                            *slot = value;
                            ran.fetch_add(1, Ordering::Relaxed);
                        });
                    } else {
                        // A spawned task that spawns into the same scope.
                        s.spawn(w, move |s, w| {
                            s.spawn(w, move |_, _| {
                                *slot = value;
                                ran.fetch_add(1, Ordering::Relaxed);
                            })
                        });
                    }
                }
            });
            // The scope has waited for every task, nested spawns included.
            assert_eq!(ran.load(Ordering::Relaxed), SPAWNS);
        });
        for (i, v) in slots.iter().enumerate() {
            assert_eq!(*v, (i as u64) * (i as u64) + 1, "slot {i}");
        }
    }

    pub fn single_touch_futures<S: FutureForkJoin>(pool: &S) {
        assert_eq!(pool.run(|w| fib_sf(w, 18)), fib(18));
        let words = pool.run(|w| {
            w.scope(|s, w| {
                let hs: Vec<_> = (0..100)
                    .map(|i| w.future(s, move |_, _| format!("w{i}")))
                    .collect();
                // Touched in reverse creation order.
                let mut out: Vec<String> = hs.into_iter().rev().map(|h| h.get(w)).collect();
                out.reverse();
                out
            })
        });
        assert_eq!(words, (0..100).map(|i| format!("w{i}")).collect::<Vec<_>>());
        // A handle that leaves its scope is still valid.
        let v = pool.run(|w| {
            let h = w.scope(|s, w| w.future(s, |_, _| vec![1u8, 2, 3]));
            h.get(w)
        });
        assert_eq!(v, [1, 2, 3]);
    }

    pub fn multi_touch_futures<S: FutureForkJoin>(pool: &S) {
        let total = AtomicU64::new(0);
        let creator = pool.run(|w| {
            w.scope(|s, w| {
                let f = w.shared_future(s, |_, _| 21u64);
                for _ in 0..8 {
                    let g = f.clone();
                    let total = &total;
                    s.spawn(w, move |_, w| {
                        let first = *g.get(w);
                        assert_eq!(*g.get(w), first, "touches disagree");
                        total.fetch_add(2 * first, Ordering::Relaxed);
                    });
                }
                // Futures touching it too.
                let doubled: Vec<_> = (0..4)
                    .map(|k| {
                        let g = f.clone();
                        w.future(s, move |_, w| *g.get(w) * 2 + k)
                    })
                    .collect();
                let a = *f.get(w);
                let b = *f.clone().get(w);
                assert!(
                    std::ptr::eq(f.get(w), f.clone().get(w)),
                    "clones share one result"
                );
                let d: Vec<u64> = doubled.into_iter().map(|h| h.get(w)).collect();
                (a, b, d)
            })
        });
        assert_eq!(creator, (21, 21, vec![42, 43, 44, 45]));
        assert_eq!(total.load(Ordering::Relaxed), 8 * 42);
    }

    pub fn touched_by_another_task<S: FutureForkJoin>(pool: &S) {
        let out = AtomicU64::new(0);
        let via_future = pool.run(|w| {
            w.scope(|s, w| {
                let f = w.future(s, |_, _| 1234u64);
                let out = &out;
                s.spawn(w, move |_, w| out.store(f.get(w) + 1, Ordering::SeqCst));
                let g = w.future(s, |_, _| 100u64);
                let h = w.future(s, move |_, w| g.get(w) * 2);
                h.get(w)
            })
        });
        assert_eq!(out.load(Ordering::SeqCst), 1235);
        assert_eq!(via_future, 200);
    }

    pub fn chained_futures<S: FutureForkJoin>(pool: &S) {
        let single = pool.run(|w| {
            w.scope(|s, w| {
                let mut f = w.future(s, |_, _| 1u64);
                for i in 1..CHAIN as u64 {
                    let prev = f;
                    f = w.future(s, move |_, w| (prev.get(w) * 31 + i) % 1_000_003);
                }
                f.get(w)
            })
        });
        assert_eq!(single, chain_value(CHAIN));
        let shared = pool.run(|w| {
            w.scope(|s, w| {
                let mut f = w.shared_future(s, |_, _| 1u64);
                let first = f.clone();
                for i in 1..CHAIN as u64 {
                    let prev = f.clone();
                    f = w.shared_future(s, move |_, w| {
                        assert_eq!(*prev.get(w), *prev.clone().get(w));
                        (*prev.get(w) * 31 + i) % 1_000_003
                    });
                }
                (*f.get(w), *first.get(w))
            })
        });
        assert_eq!(shared, (chain_value(CHAIN), 1));
    }

    fn deep_join<W: Worker>(w: &W, d: usize) -> usize {
        if d == 0 {
            return 0;
        }
        let (a, b) = w.join(|w| deep_join(w, d - 1), |_| 1);
        a + b
    }

    fn deep_future<W: Futures>(w: &W, d: usize) -> usize {
        if d == 0 {
            return 0;
        }
        w.scope(|s, w| {
            let f = w.future(s, move |_, w| deep_future(w, d - 1));
            f.get(w) + 1
        })
    }

    /// Spawns `d` levels deep; `deepest` ends as the deepest level reached (`d` itself).
    fn deep_spawn<W: Worker>(w: &W, d: usize, deepest: &AtomicUsize) {
        deep_spawn_from(w, d, d, deepest);
    }

    fn deep_spawn_from<W: Worker>(w: &W, top: usize, d: usize, deepest: &AtomicUsize) {
        deepest.fetch_max(top - d, Ordering::Relaxed);
        if d > 0 {
            w.scope(|s, w| s.spawn(w, move |_, w| deep_spawn_from(w, top, d - 1, deepest)));
        }
    }

    /// Futures `future_depth` deep.
    pub fn deep_futures<S: FutureForkJoin>(pool: &S, future_depth: usize) {
        assert_eq!(pool.run(|w| deep_future(w, future_depth)), future_depth);
    }

    /// Joins `DEPTH` deep, spawns `future_depth` deep.
    pub fn deep_recursion<S: ForkJoin>(pool: &S, future_depth: usize) {
        assert_eq!(pool.run(|w| deep_join(w, DEPTH)), DEPTH);
        let deepest = AtomicUsize::new(0);
        pool.run(|w| deep_spawn(w, future_depth, &deepest));
        assert_eq!(deepest.load(Ordering::Relaxed), future_depth);
    }

    /// A future whose handle is dropped untouched still runs before its scope ends, and a
    /// handle may outlive its scope (its task is over by then).
    pub fn untouched_and_escaping_futures<S: FutureForkJoin>(pool: &S) {
        let ran = AtomicUsize::new(0);
        let ran = &ran;
        let got = pool.run(|w| {
            let h = w.scope(|s, w| {
                for i in 0..200u64 {
                    let f = w.future(s, move |_, _| {
                        ran.fetch_add(1, Ordering::SeqCst);
                        i
                    });
                    drop(f);
                }
                w.future(s, |_, _| 42u64)
            });
            assert_eq!(
                ran.load(Ordering::SeqCst),
                200,
                "untouched futures did not all run"
            );
            h.get(w)
        });
        assert_eq!(got, 42);
    }

    /// One scope's futures, created by its body, by a nested scope's body on the same fiber
    /// and by spawned tasks of the scope (other fibers, other workers), some touched by other
    /// tasks, some dropped untouched, with work in each so that thieves take some: the scope
    /// ends only after every one of them ran, however the counting is split between the
    /// body's fiber and the rest.
    pub fn futures_of_one_scope_from_many_tasks<S: FutureForkJoin>(pool: &S) {
        const ROUNDS: u64 = 20;
        for round in 0..ROUNDS {
            let ran = AtomicUsize::new(0);
            let ran = &ran;
            let work = move |i: u64| {
                ran.fetch_add(1, Ordering::SeqCst);
                fib(10 + (i + round) % 8)
            };
            let total = pool.run(|w| {
                let sum = AtomicU64::new(0);
                let sum = &sum;
                w.scope(|s, w| {
                    for i in 0..8u64 {
                        // Spawned tasks create futures in the same scope and touch half.
                        s.spawn(w, move |s, w| {
                            let f = w.future(s, move |_, _| work(i));
                            let g = w.future(s, move |_, _| work(i + 1));
                            sum.fetch_add(f.get(w), Ordering::SeqCst);
                            drop(g);
                        });
                    }
                    let mine: Vec<_> = (0..8u64)
                        .map(|i| w.future(s, move |_, _| work(i)))
                        .collect();
                    // A nested scope's body (same fiber) creates futures in the outer scope.
                    let from_inner = w.scope(|_, w| {
                        (0..4u64)
                            .map(|i| w.future(s, move |_, _| work(i + 2)))
                            .collect::<Vec<_>>()
                    });
                    // Touched by another task: a spawned task gets two of the body's handles.
                    let mut mine = mine.into_iter();
                    let (a, b) = (mine.next().unwrap(), mine.next().unwrap());
                    s.spawn(w, move |_, w| {
                        sum.fetch_add(a.get(w) + b.get(w), Ordering::SeqCst);
                    });
                    for (k, f) in mine.enumerate() {
                        if k % 2 == 0 {
                            sum.fetch_add(f.get(w), Ordering::SeqCst);
                        }
                    }
                    drop(from_inner);
                });
                assert_eq!(
                    ran.load(Ordering::SeqCst),
                    8 * 2 + 8 + 4,
                    "the scope ended before all of its futures ran"
                );
                sum.load(Ordering::SeqCst)
            });
            let want: u64 = (0..8u64).map(|i| fib(10 + (i + round) % 8)).sum::<u64>()
                + (0..2u64).map(|i| fib(10 + (i + round) % 8)).sum::<u64>()
                + (2..8u64)
                    .step_by(2)
                    .map(|i| fib(10 + (i + round) % 8))
                    .sum::<u64>();
            assert_eq!(total, want);
        }
    }

    pub fn panics_reach_run<S: ForkJoin>(pool: &S) {
        let works = |pool: &S| assert_eq!(pool.run(|w| fib_fj(w, 15)), fib(15));
        expect_panic("deliberate panic: join", || {
            pool.run(|w| w.join(|_| 1, |_| -> u32 { panic!("{DELIBERATE}: join") }))
        });
        works(pool);
        let written = AtomicUsize::new(0);
        expect_panic("deliberate panic: spawn", || {
            pool.run(|w| {
                w.scope(|s, w| {
                    for i in 0..100 {
                        let written = &written;
                        s.spawn(w, move |_, _| {
                            // The last one, so that even the eager serial elision has run
                            // all the others.
                            if i == 99 {
                                panic!("{DELIBERATE}: spawn");
                            }
                            written.fetch_add(1, Ordering::Relaxed);
                        });
                    }
                })
            })
        });
        assert_eq!(
            written.load(Ordering::Relaxed),
            99,
            "the other spawns all ran"
        );
        works(pool);
    }

    /// A panic in a future task reaches `run` whether its handle is touched, dropped or
    /// shared, and the pool stays usable.
    pub fn future_panics_reach_run<S: FutureForkJoin>(pool: &S) {
        let works = |pool: &S| assert_eq!(pool.run(|w| fib_fj(w, 15)), fib(15));
        expect_panic("deliberate panic: touched future", || {
            pool.run(|w| {
                w.scope(|s, w| {
                    let f = w.future(s, |_, _| -> u64 { panic!("{DELIBERATE}: touched future") });
                    f.get(w)
                })
            })
        });
        works(pool);
        expect_panic("deliberate panic: untouched future", || {
            pool.run(|w| {
                w.scope(|s, w| {
                    drop(w.future(s, |_, _| -> u64 {
                        panic!("{DELIBERATE}: untouched future")
                    }));
                    7
                })
            })
        });
        works(pool);
        expect_panic("deliberate panic: shared future", || {
            pool.run(|w| {
                w.scope(|s, w| {
                    let f =
                        w.shared_future(s, |_, _| -> u64 { panic!("{DELIBERATE}: shared future") });
                    for _ in 0..2 {
                        let g = f.clone();
                        s.spawn(w, move |_, w| assert_eq!(*g.get(w), 0));
                    }
                    *f.get(w)
                })
            })
        });
        works(pool);
    }

    /// Counters of fork-join runs go back to zero.
    pub fn stats_reset<S: ForkJoin>(pool: &S) {
        pool.reset_stats();
        assert_eq!(pool.run(|w| fib_fj(w, 15)), fib(15));
        let before = pool.stats();
        pool.reset_stats();
        std::thread::sleep(std::time::Duration::from_millis(30));
        check_reset(&before, &pool.stats(), pool.workers());
    }

    /// Counters of futures count every creation and go back to zero.
    pub fn future_stats_reset<S: FutureForkJoin>(pool: &S) {
        pool.reset_stats();
        let sum = pool.run(|w| {
            w.scope(|s, w| {
                let single: Vec<_> = (0..100u64).map(|i| w.future(s, move |_, _| i)).collect();
                let shared: Vec<_> = (0..50u64)
                    .map(|i| w.shared_future(s, move |_, _| i))
                    .collect();
                single.into_iter().map(|h| h.get(w)).sum::<u64>()
                    + shared.iter().map(|h| *h.get(w)).sum::<u64>()
            })
        });
        assert_eq!(sum, 4950 + 1225);
        let before = pool.stats();
        if let Some(n) = extra(&before, "futures_created") {
            assert_eq!(n, 150, "futures_created");
        }
        if let Some(n) = extra(&before, "touch_waits") {
            assert!(n <= 150, "{n} touch waits for 150 touches that can wait");
        }
        pool.reset_stats();
        // Long enough for idle workers to hunt through their spin and yield rounds.
        std::thread::sleep(std::time::Duration::from_millis(30));
        check_reset(&before, &pool.stats(), pool.workers());
    }
}

/// The async front-end suite. Fork-join tests run on every async runtime; the tests of
/// futures (`spawn`, `spawn_shared`) on those whose `Scheduler::CAPABILITIES` has `futures`.
mod af {
    use super::*;
    use std::future::Future;

    fn fib_join<'s, C: AsyncWorker<'s>>(c: C, n: u64) -> impl Future<Output = u64> + Send + 's {
        async move {
            if n < 2 {
                return n;
            }
            let (a, b) = c
                .join(move |c| fib_join(c, n - 1), move |c| fib_join(c, n - 2))
                .await;
            a + b
        }
    }

    fn fib_future<'s, C: AsyncWorker<'s>>(c: C, n: u64) -> impl Future<Output = u64> + Send + 's {
        async move {
            if n < 2 {
                return n;
            }
            let x = c.spawn(move |c| fib_future(c, n - 1)).await;
            let y = c.call(move |c| fib_future(c, n - 2)).await;
            x.await + y
        }
    }

    fn collect<'s, C: AsyncWorker<'s>>(
        c: C,
        lo: u32,
        hi: u32,
    ) -> impl Future<Output = Vec<u32>> + Send + 's {
        async move {
            if hi - lo == 1 {
                return vec![lo];
            }
            let mid = lo + (hi - lo) / 2;
            let (mut a, b) = c
                .join(move |c| collect(c, lo, mid), move |c| collect(c, mid, hi))
                .await;
            a.extend(b);
            a
        }
    }

    fn fill<'s, C: AsyncWorker<'s>>(
        c: C,
        out: &'s mut [u64],
        offset: u64,
    ) -> impl Future<Output = ()> + Send + 's {
        async move {
            if out.len() <= 3 {
                for (i, x) in out.iter_mut().enumerate() {
                    *x = 3 * (offset + i as u64) + 1;
                }
                return;
            }
            let mid = out.len() / 2;
            let (a, b) = out.split_at_mut(mid);
            c.join(
                move |c| fill(c, a, offset),
                move |c| fill(c, b, offset + mid as u64),
            )
            .await;
        }
    }

    pub fn join_results<P: AsyncForkJoin>(pool: &P) {
        let (a, b) = pool.run_async(|c| async move {
            c.join(|_| async { 6 * 7 }, |_| async { String::from("right") })
                .await
        });
        assert_eq!((a, b.as_str()), (42, "right"));
        assert_eq!(
            pool.run_async(|c| collect(c, 0, 1000)),
            (0..1000).collect::<Vec<_>>()
        );
        let mut out = vec![0u64; 1000];
        pool.run_async(|c| fill(c, &mut out, 0));
        for (i, x) in out.iter().enumerate() {
            assert_eq!(*x, 3 * i as u64 + 1, "slot {i}");
        }
        // A call returns its child's value; the parent goes on after it.
        let called = pool.run_async(|c| async move {
            let a = c.call(|c| fib_join(c, 10)).await;
            let b = c.call(|_| async { 1u64 }).await;
            a + b
        });
        assert_eq!(called, fib(10) + 1);
    }

    fn sum_tree<'s, C: AsyncWorker<'s>>(
        c: C,
        lo: u64,
        hi: u64,
        leaves: &'s AtomicU64,
    ) -> impl Future<Output = u64> + Send + 's {
        async move {
            if hi - lo == 1 {
                leaves.fetch_add(1, Ordering::Relaxed);
                return lo;
            }
            let mid = lo + (hi - lo) / 2;
            let (a, b) = c
                .join(
                    move |c| sum_tree(c, lo, mid, leaves),
                    move |c| sum_tree(c, mid, hi, leaves),
                )
                .await;
            a + b
        }
    }

    pub fn deep_nesting<P: AsyncForkJoin>(pool: &P) {
        assert_eq!(pool.run_async(|c| fib_join(c, 16)), fib(16));
        let n = 1u64 << 13;
        let leaves = AtomicU64::new(0);
        assert_eq!(
            pool.run_async(|c| sum_tree(c, 0, n, &leaves)),
            n * (n - 1) / 2
        );
        assert_eq!(
            leaves.load(Ordering::Relaxed),
            n,
            "every leaf runs exactly once"
        );
    }

    /// Each level calls the next.
    fn deep_call<'s, C: AsyncWorker<'s>>(
        c: C,
        d: usize,
    ) -> impl Future<Output = usize> + Send + 's {
        async move {
            if d == 0 {
                return 0;
            }
            c.call(move |c| deep_call(c, d - 1)).await + 1
        }
    }

    /// Each level forks the next (and a leaf beside it).
    fn deep_fork<'s, C: AsyncWorker<'s>>(
        c: C,
        d: usize,
    ) -> impl Future<Output = usize> + Send + 's {
        async move {
            if d == 0 {
                return 0;
            }
            let (a, b) = c.join(move |c| deep_fork(c, d - 1), |_| async { 1 }).await;
            a + b
        }
    }

    pub fn deep_recursion<P: AsyncForkJoin>(pool: &P) {
        assert_eq!(pool.run_async(|c| deep_call(c, DEPTH)), DEPTH);
        assert_eq!(pool.run_async(|c| deep_fork(c, DEPTH)), DEPTH);
    }

    /// A join whose first child panics at depth `d` of a fork-join tree.
    fn panicking_tree<'s, C: AsyncWorker<'s>>(
        c: C,
        d: u32,
    ) -> impl Future<Output = u64> + Send + 's {
        async move {
            if d == 0 {
                if std::hint::black_box(true) {
                    panic!("{DELIBERATE}: deep");
                }
                return 1;
            }
            let (a, b) = c
                .join(move |c| panicking_tree(c, d - 1), move |c| fib_join(c, 12))
                .await;
            a + b
        }
    }

    /// A complete tree of `arity` children a node and `depth` levels below this node, each
    /// node's children in one `fork_reduce` scope: its node count.
    fn kary<'s, C: AsyncWorker<'s>>(
        c: C,
        arity: u64,
        depth: u32,
    ) -> impl Future<Output = u64> + Send + 's {
        async move {
            if depth == 0 {
                return 1;
            }
            c.fork_reduce(
                0..arity,
                move |c, _| kary(c, arity, depth - 1),
                1,
                |a, b| a + b,
            )
            .await
        }
    }

    /// Spins for about `micros` µs (work long enough for a thief to take the continuation).
    fn spin(micros: u64) {
        let t = std::time::Instant::now();
        while t.elapsed() < std::time::Duration::from_micros(micros) {
            std::hint::spin_loop();
        }
    }

    pub fn fork_reduce_scopes<P: AsyncForkJoin>(pool: &P) {
        // No item: the init, no child.
        assert_eq!(
            pool.run_async(|c| async move {
                c.fork_reduce(0..0u32, |_, _| async { 1u64 }, 7, |a, b| a + b)
                    .await
            }),
            7
        );
        // The outputs are reduced in item order (concatenation is not commutative), whoever
        // ran the children and stole the loop.
        let ordered = pool.run_async(|c| async move {
            c.fork_reduce(
                0..200u32,
                |_, i| async move {
                    if i % 16 == 0 {
                        spin(200);
                    }
                    vec![i]
                },
                Vec::new(),
                |mut a, b| {
                    a.extend(b);
                    a
                },
            )
            .await
        });
        assert_eq!(ordered, (0..200).collect::<Vec<_>>());
        // Nested scopes: 5 children a node, 5 levels.
        assert_eq!(pool.run_async(|c| kary(c, 5, 5)), (5u64.pow(6) - 1) / 4);
        // Items borrowed from the caller: each child fills its own chunk.
        let mut out = vec![0u64; 1000];
        let filled = pool.run_async(|c| {
            let chunks = out.chunks_mut(7).enumerate();
            async move {
                c.fork_reduce(
                    chunks,
                    |_, (k, chunk)| async move {
                        for (i, x) in chunk.iter_mut().enumerate() {
                            *x = (7 * k + i) as u64 + 1;
                        }
                        chunk.len()
                    },
                    0,
                    |a, b| a + b,
                )
                .await
            }
        });
        assert_eq!(filled, 1000);
        assert!(out.iter().enumerate().all(|(i, &x)| x == i as u64 + 1));
        // A child panics among children that run on: the panic reaches run_async after every
        // child started has finished, and the pool stays usable.
        let started = AtomicUsize::new(0);
        let finished = AtomicUsize::new(0);
        let (started_ref, finished_ref) = (&started, &finished);
        expect_panic("deliberate panic: scope", || {
            pool.run_async(|c| async move {
                c.fork_reduce(
                    0..64u32,
                    move |c, i| async move {
                        started_ref.fetch_add(1, Ordering::SeqCst);
                        if i == 37 {
                            panic!("{DELIBERATE}: scope");
                        }
                        let v = kary(c, 3, 3).await;
                        spin(20);
                        finished_ref.fetch_add(1, Ordering::SeqCst);
                        v
                    },
                    0,
                    |a, b| a + b,
                )
                .await
            })
        });
        let (s, f) = (
            started.load(Ordering::SeqCst),
            finished.load(Ordering::SeqCst),
        );
        assert!(s >= 38 && f == s - 1, "started {s}, finished {f}");
        assert_eq!(pool.run_async(|c| kary(c, 4, 4)), (4u64.pow(5) - 1) / 3);
        // A panic in a nested scope's iterator climbs to run_async too.
        expect_panic("deliberate panic: items", || {
            pool.run_async(|c| async move {
                c.fork_reduce(
                    0..8u32,
                    |c, i| async move {
                        c.fork_reduce(
                            (0..8u32).inspect(move |&j| {
                                if i == 5 && j == 3 {
                                    panic!("{DELIBERATE}: items");
                                }
                            }),
                            |c, _| kary(c, 2, 3),
                            0,
                            |a, b| a + b,
                        )
                        .await
                    },
                    0,
                    |a, b| a + b,
                )
                .await
            })
        });
        assert_eq!(pool.run_async(|c| kary(c, 4, 4)), (4u64.pow(5) - 1) / 3);
    }

    pub fn fork_join_panics_reach_run<P: AsyncForkJoin>(pool: &P) {
        let works = |pool: &P| assert_eq!(pool.run_async(|c| fib_join(c, 15)), fib(15));
        expect_panic("deliberate panic: root", || {
            pool.run_async(|_| async {
                if std::hint::black_box(true) {
                    panic!("{DELIBERATE}: root");
                }
                1
            })
        });
        works(pool);
        expect_panic("deliberate panic: deep", || {
            pool.run_async(|c| panicking_tree(c, 12))
        });
        works(pool);
        // The second child panics while the first (and its subtree) may still run elsewhere.
        let ran = AtomicUsize::new(0);
        let ran_ref = &ran;
        expect_panic("deliberate panic: called", || {
            pool.run_async(|c| async move {
                c.join(
                    move |c| async move {
                        let v = fib_join(c, 18).await;
                        ran_ref.fetch_add(1, Ordering::SeqCst);
                        v
                    },
                    |_| async {
                        if std::hint::black_box(true) {
                            panic!("{DELIBERATE}: called");
                        }
                        0
                    },
                )
                .await
            })
        });
        assert_eq!(ran.load(Ordering::SeqCst), 1, "the forked child finished");
        works(pool);
        expect_panic("deliberate panic: call", || {
            pool.run_async(|c| async move {
                c.call(|_| async {
                    if std::hint::black_box(true) {
                        panic!("{DELIBERATE}: call");
                    }
                    0
                })
                .await
            })
        });
        works(pool);
        expect_panic("deliberate panic: maker", || {
            pool.run_async(|_| {
                if std::hint::black_box(true) {
                    panic!("{DELIBERATE}: maker");
                }
                async { 0 }
            })
        });
        works(pool);
    }

    pub fn fork_join_stats_reset<P: AsyncForkJoin>(pool: &P) {
        pool.reset_stats();
        assert_eq!(pool.run_async(|c| fib_join(c, 18)), fib(18));
        let before = pool.stats();
        pool.reset_stats();
        check_reset(&before, &pool.stats(), pool.workers());
    }

    pub fn scope_with_many_spawns<P: AsyncForkJoin>(pool: &P) {
        let mut slots = vec![0u64; SPAWNS];
        let slots_ref = &mut slots[..];
        let awaited = pool.run_async(|c| async move {
            let mut handles = Vec::new();
            for (i, slot) in slots_ref.iter_mut().enumerate() {
                let value = (i as u64) * (i as u64) + 1;
                match i % 3 {
                    0 => handles.push(
                        c.spawn(move |_| async move {
                            *slot = value;
                            i
                        })
                        .await,
                    ),
                    // Detached: the handle is dropped, run_async still waits for the task.
                    1 => drop(c.spawn(move |_| async move { *slot = value }).await),
                    // A task that spawns (and detaches) a task of its own.
                    _ => drop(
                        c.spawn(move |c| async move {
                            drop(c.spawn(move |_| async move { *slot = value }).await);
                        })
                        .await,
                    ),
                }
            }
            let mut sum = 0;
            for h in handles {
                sum += h.await;
            }
            sum
        });
        assert_eq!(awaited, (0..SPAWNS).step_by(3).sum::<usize>());
        for (i, v) in slots.iter().enumerate() {
            assert_eq!(*v, (i as u64) * (i as u64) + 1, "slot {i}");
        }
    }

    pub fn single_touch_futures<P: AsyncForkJoin>(pool: &P) {
        let words = pool.run_async(|c| async move {
            let mut hs = Vec::new();
            for i in 0..100 {
                hs.push(c.spawn(move |_| async move { format!("w{i}") }).await);
            }
            let mut out = Vec::new();
            for h in hs.into_iter().rev() {
                out.push(h.await);
            }
            out.reverse();
            out
        });
        assert_eq!(words, (0..100).map(|i| format!("w{i}")).collect::<Vec<_>>());
        assert_eq!(pool.run_async(|c| fib_future(c, 15)), fib(15));
    }

    pub fn multi_touch_futures<P: AsyncForkJoin>(pool: &P) {
        let total = AtomicU64::new(0);
        let total_ref = &total;
        let creator = pool.run_async(|c| async move {
            let f = c.spawn_shared(|_| async { 21u64 }).await;
            let mut hs = Vec::new();
            for k in 0..8u64 {
                let g = f.clone();
                hs.push(
                    c.spawn(move |_| async move {
                        let first = *g.get().await;
                        assert_eq!(*g.get().await, first, "touches disagree");
                        total_ref.fetch_add(2 * first, Ordering::Relaxed);
                        first + k
                    })
                    .await,
                );
            }
            let a = *f.get().await;
            let b = *f.clone().get().await;
            let g = f.clone();
            let (x, y) = (f.get().await, g.get().await);
            assert!(std::ptr::eq(x, y), "clones share one result");
            let mut ks = Vec::new();
            for h in hs {
                ks.push(h.await);
            }
            (a, b, ks)
        });
        assert_eq!(creator, (21, 21, (21..29).collect::<Vec<u64>>()));
        assert_eq!(total.load(Ordering::Relaxed), 8 * 42);
    }

    pub fn touched_by_another_task<P: AsyncForkJoin>(pool: &P) {
        let out = AtomicU64::new(0);
        let out_ref = &out;
        let r = pool.run_async(|c| async move {
            let f = c.spawn(|_| async { 1234u64 }).await;
            drop(
                c.spawn(move |_| async move { out_ref.store(f.await + 1, Ordering::SeqCst) })
                    .await,
            );
            let g = c.spawn(|_| async { 100u64 }).await;
            c.spawn(move |_| async move { g.await * 2 }).await.await
        });
        assert_eq!(out.load(Ordering::SeqCst), 1235);
        assert_eq!(r, 200);
    }

    pub fn chained_futures<P: AsyncForkJoin>(pool: &P) {
        let single = pool.run_async(|c| async move {
            let mut f = c.spawn(|_| async { 1u64 }).await;
            for i in 1..CHAIN as u64 {
                let prev = f;
                f = c
                    .spawn(move |_| async move { (prev.await * 31 + i) % 1_000_003 })
                    .await;
            }
            f.await
        });
        assert_eq!(single, chain_value(CHAIN));
        let shared = pool.run_async(|c| async move {
            let mut f = c.spawn_shared(|_| async { 1u64 }).await;
            let first = f.clone();
            for i in 1..CHAIN as u64 {
                let prev = f.clone();
                f = c
                    .spawn_shared(move |_| async move {
                        assert_eq!(*prev.get().await, *prev.clone().get().await);
                        (*prev.get().await * 31 + i) % 1_000_003
                    })
                    .await;
            }
            (*f.get().await, *first.get().await)
        });
        assert_eq!(shared, (chain_value(CHAIN), 1));
    }

    /// Each level spawns the next and awaits it.
    fn deep_spawn<'s, C: AsyncWorker<'s>>(
        c: C,
        d: usize,
    ) -> impl Future<Output = usize> + Send + 's {
        async move {
            if d == 0 {
                return 0;
            }
            c.spawn(move |c| deep_spawn(c, d - 1)).await.await + 1
        }
    }

    pub fn deep_futures<P: AsyncForkJoin>(pool: &P) {
        assert_eq!(pool.run_async(|c| deep_spawn(c, DEPTH)), DEPTH);
    }

    pub fn future_panics_reach_run<P: AsyncForkJoin>(pool: &P) {
        let works = |pool: &P| assert_eq!(pool.run_async(|c| fib_future(c, 15)), fib(15));
        expect_panic("deliberate panic: awaited", || {
            pool.run_async(|c| async move {
                let h = c
                    .spawn(|_| async {
                        if std::hint::black_box(true) {
                            panic!("{DELIBERATE}: awaited");
                        }
                        1
                    })
                    .await;
                h.await
            })
        });
        works(pool);
        let finished = AtomicUsize::new(0);
        let finished_ref = &finished;
        expect_panic("deliberate panic: detached", || {
            pool.run_async(|c| async move {
                for i in 0..50 {
                    drop(
                        c.spawn(move |_| async move {
                            // The last one (the serial elision runs spawns eagerly).
                            if i == 49 {
                                panic!("{DELIBERATE}: detached");
                            }
                            finished_ref.fetch_add(1, Ordering::SeqCst);
                        })
                        .await,
                    );
                }
                5
            })
        });
        assert_eq!(
            finished.load(Ordering::SeqCst),
            49,
            "the other tasks all ran"
        );
        works(pool);
        expect_panic("deliberate panic: shared", || {
            pool.run_async(|c| async move {
                let f = c
                    .spawn_shared(|_| async {
                        if std::hint::black_box(true) {
                            panic!("{DELIBERATE}: shared");
                        }
                        1u64
                    })
                    .await;
                let mut hs = Vec::new();
                for _ in 0..2 {
                    let g = f.clone();
                    hs.push(c.spawn(move |_| async move { *g.get().await }).await);
                }
                let mut sum = *f.get().await;
                for h in hs {
                    sum += h.await;
                }
                sum
            })
        });
        works(pool);
    }

    pub fn future_stats_reset<P: AsyncForkJoin>(pool: &P) {
        pool.reset_stats();
        let sum = pool.run_async(|c| async move {
            let mut single = Vec::new();
            for i in 0..100u64 {
                single.push(c.spawn(move |_| async move { i }).await);
            }
            let mut shared = Vec::new();
            for i in 0..50u64 {
                shared.push(c.spawn_shared(move |_| async move { i }).await);
            }
            let mut sum = 0;
            for h in single {
                sum += h.await;
            }
            for h in &shared {
                sum += *h.get().await;
            }
            sum
        });
        assert_eq!(sum, 4950 + 1225);
        let before = pool.stats();
        if let Some(n) = extra(&before, "tasks_spawned") {
            assert_eq!(n, 151, "tasks_spawned (150 and the root)");
        }
        if let Some(n) = extra(&before, "touch_waits") {
            assert!(n <= 150, "{n} touch waits for 150 touches that can wait");
        }
        pool.reset_stats();
        check_reset(&before, &pool.stats(), pool.workers());
    }
}

/// Runs `test` on `S` in each of its configurations ([`settings::configs`]), on a large
/// stack, with the future depth the configuration allows: nested futures without a stack of
/// their own nest on one fiber stack, a few frames more per level than a join, so they go
/// less deep. The configuration is printed first, so a failure names it.
fn each_config<S: Scheduler>(test: impl Fn(&S, usize) + Sync) {
    for config in settings::configs::<S>(fence::config) {
        eprintln!("{} in {config:?}", S::NAME);
        let depth = match config.futures {
            FutureStack::Current => FUTURE_DEPTH_ONE_STACK,
            FutureStack::New => DEPTH,
        };
        on_big_stack(|| test(&start_with::<S>(config), depth));
    }
}

/// The closure front-end suite for `$pool`: the fork-join tests, and the tests of futures
/// where it has them (`futures`; `fork_join`: none; `none`: no closure front-end).
macro_rules! closure_suite {
    ($pool:ty, none) => {};
    ($pool:ty, $futures:ident) => {
        mod closures {
            use super::*;

            #[test]
            fn join_results() {
                each_config(|pool: &$pool, _| fj::join_results(pool));
            }
            #[test]
            fn deep_nesting() {
                each_config(|pool: &$pool, _| fj::deep_nesting(pool));
            }
            #[test]
            fn scope_with_many_spawns() {
                each_config(|pool: &$pool, _| fj::scope_with_many_spawns(pool));
            }
            #[test]
            fn deep_recursion() {
                each_config(fj::deep_recursion::<$pool>);
            }
            #[test]
            fn panics_reach_run() {
                each_config(|pool: &$pool, _| fj::panics_reach_run(pool));
            }
            #[test]
            fn stats_reset() {
                each_config(|pool: &$pool, _| fj::stats_reset(pool));
            }
            closure_suite!(@futures $futures, $pool);
        }
    };
    (@futures fork_join, $pool:ty) => {};
    (@futures futures, $pool:ty) => {
        #[test]
        fn single_touch_futures() {
            each_config(|pool: &$pool, _| fj::single_touch_futures(pool));
        }
        #[test]
        fn multi_touch_futures() {
            each_config(|pool: &$pool, _| fj::multi_touch_futures(pool));
        }
        #[test]
        fn touched_by_another_task() {
            each_config(|pool: &$pool, _| fj::touched_by_another_task(pool));
        }
        #[test]
        fn chained_futures() {
            each_config(|pool: &$pool, _| fj::chained_futures(pool));
        }
        #[test]
        fn untouched_and_escaping_futures() {
            each_config(|pool: &$pool, _| fj::untouched_and_escaping_futures(pool));
        }
        #[test]
        fn futures_of_one_scope_from_many_tasks() {
            each_config(|pool: &$pool, _| fj::futures_of_one_scope_from_many_tasks(pool));
        }
        #[test]
        fn deep_futures() {
            each_config(fj::deep_futures::<$pool>);
        }
        #[test]
        fn future_panics_reach_run() {
            each_config(|pool: &$pool, _| fj::future_panics_reach_run(pool));
        }
        #[test]
        fn future_stats_reset() {
            each_config(|pool: &$pool, _| fj::future_stats_reset(pool));
        }
    };
}

/// The async front-end suite for `$pool`: the fork-join tests, and the tests of futures where
/// it has them (`futures`; `fork_join`: none; `no`: no async front-end).
macro_rules! async_suite {
    ($pool:ty, no) => {};
    ($pool:ty, $futures:ident) => {
        mod asynch {
            use super::*;

            #[test]
            fn join_results() {
                each_config(|pool: &$pool, _| af::join_results(pool));
            }
            #[test]
            fn deep_nesting() {
                each_config(|pool: &$pool, _| af::deep_nesting(pool));
            }
            #[test]
            fn deep_recursion() {
                each_config(|pool: &$pool, _| af::deep_recursion(pool));
            }
            #[test]
            fn fork_join_panics_reach_run() {
                each_config(|pool: &$pool, _| af::fork_join_panics_reach_run(pool));
            }
            #[test]
            fn fork_reduce_scopes() {
                each_config(|pool: &$pool, _| af::fork_reduce_scopes(pool));
            }
            #[test]
            fn fork_join_stats_reset() {
                each_config(|pool: &$pool, _| af::fork_join_stats_reset(pool));
            }
            async_suite!(@futures $futures, $pool);
        }
    };
    (@futures fork_join, $pool:ty) => {};
    (@futures futures, $pool:ty) => {
        #[test]
        fn scope_with_many_spawns() {
            each_config(|pool: &$pool, _| af::scope_with_many_spawns(pool));
        }
        #[test]
        fn single_touch_futures() {
            each_config(|pool: &$pool, _| af::single_touch_futures(pool));
        }
        #[test]
        fn multi_touch_futures() {
            each_config(|pool: &$pool, _| af::multi_touch_futures(pool));
        }
        #[test]
        fn touched_by_another_task() {
            each_config(|pool: &$pool, _| af::touched_by_another_task(pool));
        }
        #[test]
        fn chained_futures() {
            each_config(|pool: &$pool, _| af::chained_futures(pool));
        }
        #[test]
        fn deep_futures() {
            each_config(|pool: &$pool, _| af::deep_futures(pool));
        }
        #[test]
        fn future_panics_reach_run() {
            each_config(|pool: &$pool, _| af::future_panics_reach_run(pool));
        }
        #[test]
        fn future_stats_reset() {
            each_config(|pool: &$pool, _| af::future_stats_reset(pool));
        }
    };
}

/// A module per runtime this build has, named after it, with its front-ends' suites.
macro_rules! suites {
    ($rt:ident, $pool:ty, closure: $closure:ident, asynch: $asynch:ident) => {
        mod $rt {
            use super::*;

            closure_suite!($pool, $closure);
            async_suite!($pool, $asynch);
        }
    };
}

for_each_built_runtime!(suites);
