//! Randomized stress test of `libfork` (lazy and busy pools, P = 1 and 2): random fork-join
//! DAGs (binary joins, calls, n-ary `fork_reduce` scopes nested in their children, panics in
//! children, in the making of a child and in the scope's iterator), each checked against the serial
//! runtime; after every batch the pool may hold no more stacks and stacklets than its workers'
//! own (no frame or stack leaked), and no frame is left on any stack.
//!
//! `LIBFORK_STRESS_RUNS=n` sets the number of DAGs per configuration (default 500).

// Recursive async functions write `-> impl Future + Send` out: the compiler cannot infer `Send`
// of a future whose type contains itself. Clippy would turn them into `async fn`s, which then
// fail to compile.
#![allow(clippy::manual_async_fn)]

#[path = "common/fence.rs"]
mod fence;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use stealbench_schedulers::libfork::LibforkPool;
use stealbench_schedulers::serial::Serial;
use stealbench_schedulers::*;

mod common;
use common::{leaf, mix, splitmix};

/// The deliberate panic's message.
const BOOM: &str = "deliberate panic in a random DAG";

/// One node of a random DAG; its shape and value depend on `seed` only. About one leaf in
/// `panic_odds` panics (0: none), and about one child in `2 * panic_odds` of a single join
/// panics as it is made (in its closure, before its future exists: the first child's in the
/// parent's poll, the second's where the worker makes it after the first returns).
fn node<'s, C: AsyncWorker<'s>>(
    c: C,
    seed: u64,
    depth: u32,
    panic_odds: u64,
) -> impl Future<Output = u64> + Send + 's {
    async move {
        let r = splitmix(seed);
        if depth == 0 || r.is_multiple_of(7) {
            if panic_odds != 0 && (r >> 32).is_multiple_of(panic_odds) {
                std::panic::panic_any(BOOM);
            }
            return leaf(seed);
        }
        let d = depth - 1;
        let s = move |i: u64| splitmix(seed.wrapping_add(i.wrapping_mul(0x1234_5678_9ABC_DEF1)));
        let made_badly = move |i: u64| panic_odds != 0 && s(i) % (2 * panic_odds) == 0;
        match (r >> 8) % 5 {
            0 | 1 => {
                let (a, b) = c
                    .join(
                        move |c| {
                            if made_badly(11) {
                                std::panic::panic_any(BOOM);
                            }
                            node(c, s(1), d, panic_odds)
                        },
                        move |c| {
                            if made_badly(12) {
                                std::panic::panic_any(BOOM);
                            }
                            node(c, s(2), d, panic_odds)
                        },
                    )
                    .await;
                mix(a, b)
            }
            2 => {
                let a = c.call(move |c| node(c, s(3), d, panic_odds)).await;
                mix(a, leaf(s(4)))
            }
            3 => {
                // Two joins in a row in one task: the join state starts afresh.
                let (a, b) = c
                    .join(
                        move |c| node(c, s(5), d, panic_odds),
                        move |_| async move { leaf(s(6)) },
                    )
                    .await;
                let (x, y) = c
                    .join(
                        move |_| async move { leaf(s(7)) },
                        move |c| node(c, s(8), d, panic_odds),
                    )
                    .await;
                mix(mix(a, b), mix(x, y))
            }
            _ => {
                // 0 to 5 children, reduced by an associative, non-commutative operation (so
                // the order of the reduction is checked), then a call in the same task.
                let n = (r >> 16) % 6;
                let iter_fails = panic_odds != 0 && s(20) % (4 * panic_odds) == 0;
                let items = (0..n).inspect(move |&i| {
                    if iter_fails && i == n / 2 {
                        std::panic::panic_any(BOOM);
                    }
                });
                let v = c
                    .fork_reduce(
                        items,
                        move |c, i| {
                            if made_badly(30 + i) {
                                std::panic::panic_any(BOOM);
                            }
                            node(c, s(40 + i), d, panic_odds)
                        },
                        leaf(s(9)),
                        affine,
                    )
                    .await;
                let w = c.call(move |c| node(c, s(10), d / 2, panic_odds)).await;
                mix(v, w)
            }
        }
    }
}

/// The composition of two affine maps of `u32` (`x -> a x + b`, `a` in the high half): an
/// associative operation that is not commutative.
fn affine(f: u64, g: u64) -> u64 {
    let (fa, fb) = ((f >> 32) as u32, f as u32);
    let (ga, gb) = ((g >> 32) as u32, g as u32);
    let a = fa.wrapping_mul(ga);
    let b = fa.wrapping_mul(gb).wrapping_add(fb);
    (u64::from(a) << 32) | u64::from(b)
}

fn runs() -> u64 {
    std::env::var("LIBFORK_STRESS_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500)
}

fn quiet_deliberate_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let msg = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_default();
            if msg != BOOM {
                default(info);
            }
        }));
    });
}

fn check_no_leak(pool: &LibforkPool, label: &str) {
    let st = pool.stats();
    let gauge = |k: &str| st.gauges.iter().find(|g| g.0 == k).unwrap().1;
    let p = pool.workers() as u64;
    assert!(gauge("stacks_live") <= 2 * p, "{label}: {st:?}");
    assert!(
        gauge("stacklets_live") <= 2 * gauge("stacks_live"),
        "{label}: {st:?}"
    );
}

fn stress(config: PoolConfig, label: &str) {
    quiet_deliberate_panics();
    let serial = Serial::start(&fence::config(1)).unwrap();
    let pool = LibforkPool::start(&config).unwrap();
    let mut steals = 0;
    for i in 0..runs() {
        let seed = splitmix(i ^ 0xABCD);
        let depth = 4 + (seed % 12) as u32;
        let panic_odds = if i % 5 == 4 { 40 } else { 0 };
        let want = catch_unwind(AssertUnwindSafe(|| {
            serial.run_async(|c| node(c, seed, depth, panic_odds))
        }));
        let got = catch_unwind(AssertUnwindSafe(|| {
            pool.run_async(|c| node(c, seed, depth, panic_odds))
        }));
        match (want, got) {
            (Ok(w), Ok(g)) => assert_eq!(w, g, "{label}: DAG {i} (seed {seed}, depth {depth})"),
            (Err(_), Err(p)) => {
                assert_eq!(p.downcast_ref::<&str>(), Some(&BOOM), "{label}: DAG {i}")
            }
            (w, g) => panic!(
                "{label}: DAG {i}: serial {} but libfork {}",
                if w.is_ok() { "finished" } else { "panicked" },
                if g.is_ok() { "finished" } else { "panicked" }
            ),
        }
        steals += pool.stats().steals.unwrap();
        pool.reset_stats();
        if i % 100 == 99 {
            check_no_leak(&pool, label);
        }
    }
    check_no_leak(&pool, label);
    if config.workers > 1 {
        // The small DAGs may all end before a lazy pool's second worker is awake: a few large
        // ones make sure continuations are stolen at all.
        for i in 0..20 {
            if steals > 0 {
                break;
            }
            let seed = splitmix(i ^ 0xB16);
            let want = serial.run_async(|c| node(c, seed, 24, 0));
            assert_eq!(
                pool.run_async(|c| node(c, seed, 24, 0)),
                want,
                "{label}: large DAG {i}"
            );
            steals += pool.stats().steals.unwrap();
        }
        assert!(
            steals > 0,
            "{label}: no DAG was ever stolen from: the test tests nothing"
        );
        check_no_leak(&pool, label);
    }
}

#[test]
fn random_dags_lazy_p1() {
    stress(fence::config(1), "lazy P=1");
}

#[test]
fn random_dags_lazy_p2() {
    stress(fence::config(2), "lazy P=2");
}

#[test]
fn random_dags_busy_p2() {
    stress(
        PoolConfig {
            idle: IdlePolicy::Busy,
            ..fence::config(2)
        },
        "busy P=2",
    );
}

/// Deep recursion on a narrow tree grows the stacks to many stacklets; afterwards they shrink
/// back to the first and one cached stacklet each.
#[test]
fn deep_recursion_gives_stacklets_back() {
    fn deep<'s, C: AsyncWorker<'s>>(c: C, d: u32) -> impl Future<Output = u64> + Send + 's {
        async move {
            if d == 0 {
                return 1;
            }
            let (a, b) = c.join(move |c| deep(c, d - 1), |_| async { 1 }).await;
            a + b
        }
    }
    for p in [1, 2] {
        let pool = LibforkPool::start(&fence::config(p)).unwrap();
        assert_eq!(pool.run_async(|c| deep(c, 50_000)), 50_001);
        let st = pool.stats();
        let get = |k: &str| {
            st.extra
                .iter()
                .chain(st.gauges.iter())
                .find(|g| g.0 == k)
                .unwrap()
                .1
        };
        assert!(get("stacklets_allocated") >= 5, "{st:?}");
        assert!(get("stack_bytes_high_water") >= 50_000 * 64, "{st:?}");
        check_no_leak(&pool, "deep");
    }
}

/// NUMA-weighted victims (libfork's weighting; on this machine's topology), unpinned (nominal
/// compact placement) and pinned: fib is right and continuations are stolen; then the random
/// DAGs.
#[test]
fn numa_weighted_victims_p2() {
    fn fib<'s, C: AsyncWorker<'s>>(c: C, n: u64) -> impl Future<Output = u64> + Send + 's {
        async move {
            if n < 2 {
                return n;
            }
            let (a, b) = c.join(move |c| fib(c, n - 1), move |c| fib(c, n - 2)).await;
            a + b
        }
    }
    for (pinning, idle) in [
        (Pinning::None, IdlePolicy::Lazy),
        (Pinning::Compact, IdlePolicy::Busy),
    ] {
        let config = PoolConfig {
            pinning,
            idle,
            victim: VictimPolicy::NumaWeighted,
            ..fence::config(2)
        };
        let pool = LibforkPool::start(&config).unwrap();
        let mut steals = 0;
        for _ in 0..20 {
            assert_eq!(pool.run_async(|c| fib(c, 24)), 46_368, "{config:?}");
            steals += pool.stats().steals.unwrap();
            if steals > 0 {
                break;
            }
        }
        assert!(steals > 0, "{config:?}: nothing was ever stolen");
        check_no_leak(&pool, "numa fib");
    }
    stress(
        PoolConfig {
            victim: VictimPolicy::NumaWeighted,
            ..fence::config(2)
        },
        "numa P=2",
    );
}

/// A `fork_reduce` loop whose continuation is stolen: long children on two busy workers, so
/// the loop moves between workers and children are left behind; the outputs still come back
/// in item order, and nothing leaks.
#[test]
fn fork_reduce_loop_moves_between_workers() {
    let pool = LibforkPool::start(&PoolConfig {
        idle: IdlePolicy::Busy,
        ..fence::config(2)
    })
    .unwrap();
    // Rounds until the loop has been stolen often (a loaded machine may leave the second
    // worker unscheduled for a while), checking every round's order.
    let mut steals = 0;
    for round in 0..400u64 {
        if steals >= 20 {
            break;
        }
        let got = pool.run_async(|c| async move {
            c.fork_reduce(
                0..64u64,
                move |_, i| async move {
                    let t = std::time::Instant::now();
                    while t.elapsed() < std::time::Duration::from_micros(30 + (i * round) % 50) {
                        std::hint::spin_loop();
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
        assert_eq!(got, (0..64).collect::<Vec<_>>(), "round {round}");
        steals += pool.stats().steals.unwrap();
        pool.reset_stats();
    }
    assert!(steals >= 20, "the loop was stolen only {steals} times");
    check_no_leak(&pool, "fork_reduce");
}
