//! The two placements of `prows` (`PoolConfig::placement`: `Placement::Paper`, the default,
//! and `Placement::Artifact`, the authors' artifact's, spelt `prows/placement=artifact`) and
//! their statistics: the `stealable_high_water` gauge is 0 for pure fork-join
//! and at least 1 for a run that suspends a deque holding ready nodes, `reset_stats` lowers it to
//! the current level, and the artifact placement never rebalances while completing futures
//! whose touches suspend deques.

// Only fork-join fib here.
#[allow(dead_code)]
#[path = "common/fib.rs"]
mod fib;
use fib::fib_fj;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use stealbench_schedulers::prows::Prows;
use stealbench_schedulers::*;

fn extra(s: &Stats, name: &str) -> u64 {
    s.extra(name)
        .unwrap_or_else(|| panic!("no counter {name}: {s:?}"))
}

fn gauge(s: &Stats, name: &str) -> u64 {
    s.gauge(name)
        .unwrap_or_else(|| panic!("no gauge {name}: {s:?}"))
}

/// Spins (yielding) until `flag` is set; panics after 10 s rather than hang the test.
fn wait_for(flag: &AtomicBool) {
    let t = Instant::now();
    while !flag.load(Ordering::Acquire) {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the flag was never set"
        );
        std::thread::yield_now();
    }
}

/// A run on 2 workers that suspends a deque holding a ready node, every time: the future's task
/// (on the creating worker) waits for `released`; its creator's continuation, which only the
/// other worker can take meanwhile, pushes `b` of a join and touches the future in `a`. The
/// future is unfinished then (only `b` releases it), so the toucher's deque is suspended with
/// `b` in it, which makes it stealable; a thief runs `b`, the future finishes, its put resumes
/// the deque. Returns the value, which the caller checks.
fn suspend_with_ready_node<W: Futures>(w: &W) -> u64 {
    let released = AtomicBool::new(false);
    let released = &released;
    w.scope(|s, w| {
        let f = w.future(s, move |_, w| {
            wait_for(released);
            fib_fj(w, 15)
        });
        let (x, y) = w.join(
            move |w| f.get(w),
            move |w| {
                released.store(true, Ordering::Release);
                fib_fj(w, 10)
            },
        );
        x + y
    })
}

/// `prows` on 2 workers with `placement`.
fn pool(placement: Placement) -> Prows {
    Prows::start(&PoolConfig {
        placement,
        ..PoolConfig::with_workers(2)
    })
    .unwrap()
}

/// Both placements: fork-join leaves the gauge at 0, a suspension with a ready node raises it,
/// a reset brings it down to the current level (0 between runs).
fn high_water_counts_stealable_deques(placement: Placement) {
    let pool = pool(placement);
    assert_eq!(pool.run(|w| fib_fj(w, 20)), 6765);
    let s = pool.stats();
    assert_eq!(gauge(&s, "stealable_high_water"), 0, "fork-join: {s:?}");
    assert_eq!(extra(&s, "deque_suspensions"), 0, "fork-join: {s:?}");
    for _ in 0..3 {
        assert_eq!(pool.run(suspend_with_ready_node), 610 + 55);
    }
    let s = pool.stats();
    assert!(extra(&s, "deque_suspensions") >= 3, "{placement}: {s:?}");
    assert!(
        gauge(&s, "stealable_high_water") >= 1,
        "{placement}: a deque with a ready node was suspended: {s:?}"
    );
    pool.reset_stats();
    let s = pool.stats();
    assert_eq!(gauge(&s, "stealable_high_water"), 0, "after reset: {s:?}");
    assert_eq!(extra(&s, "deque_suspensions"), 0, "after reset: {s:?}");
}

#[test]
fn prows_stealable_high_water() {
    high_water_counts_stealable_deques(Placement::Paper);
}

#[test]
fn prows_artifact_stealable_high_water() {
    high_water_counts_stealable_deques(Placement::Artifact);
}

/// Futures each of whose tasks is touched, unfinished, by several other tasks: every touch of a
/// multi-touch future suspends its deque (most with ready nodes), so many deques are stealable
/// at once and rebalancing would have work to do.
fn many_suspensions<W: Futures>(w: &W, round: u64) -> u64 {
    let sum = AtomicU64::new(0);
    let sum = &sum;
    w.scope(|s, w| {
        for i in 0..8u64 {
            let released = std::sync::Arc::new(AtomicBool::new(false));
            let r = std::sync::Arc::clone(&released);
            let f = w.shared_future(s, move |_, w| {
                wait_for(&r);
                fib_fj(w, 12) + i + round
            });
            for _ in 0..3 {
                let f = f.clone();
                s.spawn(w, move |_, w| {
                    let (x, y) = w.join(|w| *f.get(w), |w| fib_fj(w, 8));
                    sum.fetch_add(x + y, Ordering::Relaxed);
                });
            }
            released.store(true, Ordering::Release);
        }
    });
    sum.load(Ordering::Relaxed)
}

/// 20 rounds of `many_suspensions` and `suspend_with_ready_node` on 2 workers with `placement`,
/// answers checked; the pool's statistics.
fn suspending_rounds(placement: Placement) -> Stats {
    let pool = pool(placement);
    for round in 0..20 {
        let want = 3 * (0..8).map(|i| 144 + i + round + 21).sum::<u64>();
        assert_eq!(pool.run(|w| many_suspensions(w, round)), want);
        assert_eq!(pool.run(suspend_with_ready_node), 610 + 55);
    }
    pool.stats()
}

/// The runs of `artifact_placement_never_rebalances` do make the paper's placement rebalance
/// (hundreds of deque suspensions, each removal from a stealable set a chance to), so its 0
/// there is the placement's doing.
#[test]
fn paper_placement_rebalances_on_the_same_runs() {
    let s = suspending_rounds(Placement::Paper);
    eprintln!("prows: {s:?}");
    assert!(extra(&s, "rebalances") > 0, "{s:?}");
}

#[test]
fn artifact_placement_never_rebalances() {
    let s = suspending_rounds(Placement::Artifact);
    eprintln!("prows/placement=artifact: {s:?}");
    assert!(extra(&s, "deque_suspensions") >= 20, "{s:?}");
    assert!(gauge(&s, "stealable_high_water") >= 1, "{s:?}");
    assert_eq!(extra(&s, "rebalances"), 0, "{s:?}");
    // Every suspended deque was made resumable by its future's put.
    assert_eq!(
        extra(&s, "deque_suspensions"),
        extra(&s, "deques_resumable"),
        "{s:?}"
    );
}
