//! `fibril` gives a suspended stack's unused pages back to the OS: a deep recursion, then a
//! join that suspends, and `mincore` shows the recursion's pages resident before and gone
//! after (on `abp`, which keeps them, they stay). Also the counters that say so (`unmaps`,
//! Fibril's count of every suspension's release, and `unmaps_resident`, those that found
//! pages to give back), the scan of resident stack pages, and the count of stack pages first
//! touched, which a released page touched again does not raise (the spilling stack pool is
//! tested in `stack.rs`).

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use stealbench_schedulers::abp::Abp;
use stealbench_schedulers::fibril::Fibril;
use stealbench_schedulers::stack::page_size;
use stealbench_schedulers::*;

/// Frames of the deep recursion, each with a 4 KiB array it fills: about 2 MiB of stack.
const DEPTH: usize = 512;

/// Recurses `d` levels deep, each level filling 4 KiB of its frame; at the bottom, calls `at`
/// with an address in the deepest frame.
fn deep(d: usize, at: &mut dyn FnMut(usize)) -> u64 {
    let mut a = [0u8; 4096];
    a.fill(d as u8);
    let a = black_box(a);
    if d == 0 {
        at(a.as_ptr() as usize);
        return a[7] as u64;
    }
    deep(d - 1, at) + a[100] as u64
}

/// Resident pages of `[lo, hi)` (rounded out to pages), by `mincore`.
fn resident(lo: usize, hi: usize) -> usize {
    let page = page_size();
    let (lo, hi) = (lo & !(page - 1), hi.div_ceil(page) * page);
    let mut v = vec![0u8; (hi - lo) / page];
    // SAFETY: the range lies in a fiber stack the pool keeps mapped during the test (the
    // suspended parent's), page aligned, and `v` has one byte per page.
    let rc = unsafe { libc::mincore(lo as *mut libc::c_void, hi - lo, v.as_mut_ptr()) };
    assert_eq!(rc, 0, "mincore: {}", std::io::Error::last_os_error());
    v.iter().filter(|&&b| b & 1 != 0).count()
}

fn extra(s: &Stats, name: &str) -> u64 {
    s.extra(name)
        .or_else(|| s.gauge(name))
        .unwrap_or_else(|| panic!("no {name} in {s:?}"))
}

fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let t = Instant::now();
    while !cond() {
        assert!(t.elapsed() < Duration::from_secs(10), "timed out: {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// On 2 workers: `join(a, b)` where `b` is stolen and waits until the parent has suspended;
/// `a` recurses about 2 MiB deep first. Returns the recursion's resident pages (below `a`'s
/// frame, less a margin for the frames of the join itself) at its bottom, and in `b` once the
/// parent is suspended, and the statistics of the run.
fn deep_then_suspend<S: ForkJoin + Sync>(pool: &S) -> (usize, usize, Stats) {
    pool.reset_stats();
    let b_started = AtomicBool::new(false);
    let range = AtomicUsize::new(0);
    let hi = AtomicUsize::new(0);
    let before = AtomicUsize::new(0);
    let after = AtomicUsize::new(0);
    pool.run(|w| {
        w.join(
            |_| {
                wait_for("b stolen", || b_started.load(Ordering::Acquire));
                let top = black_box(0u8);
                // Leave the pages of the join's own frames out: 64 KiB below `a`'s frame.
                let high = (&top as *const u8 as usize) - (64 << 10);
                hi.store(high, Ordering::Relaxed);
                deep(DEPTH, &mut |lo| {
                    range.store(lo, Ordering::Relaxed);
                    before.store(resident(lo, high), Ordering::Relaxed);
                })
            },
            |_| {
                b_started.store(true, Ordering::Release);
                wait_for("the parent suspended", || {
                    extra(&pool.stats(), "suspensions") > 0
                });
                // The suspension is counted when the fiber is parked, after the release.
                let (lo, high) = (range.load(Ordering::Relaxed), hi.load(Ordering::Relaxed));
                after.store(resident(lo, high), Ordering::Relaxed);
            },
        )
    });
    let stats = pool.stats();
    (
        before.load(Ordering::Relaxed),
        after.load(Ordering::Relaxed),
        stats,
    )
}

#[test]
fn fibril_releases_the_pages_of_a_suspended_stack() {
    let pool = Fibril::start(&PoolConfig::with_workers(2)).unwrap();
    let (before, after, s) = deep_then_suspend(&pool);
    eprintln!("fibril: {before} pages resident before, {after} after; {s:?}");
    assert!(
        before >= DEPTH * 3 / 4,
        "{before} pages resident at the bottom"
    );
    assert!(
        after <= 4,
        "{after} of {before} pages still resident after the suspension"
    );
    // One suspension, exactly: `b` ends only once the parent is parked. Fibril unmaps at it,
    // and the recursion's pages were there to give back.
    assert_eq!(extra(&s, "suspensions"), 1, "{s:?}");
    assert_eq!(extra(&s, "unmaps"), 1, "{s:?}");
    assert_eq!(extra(&s, "unmaps_resident"), 1, "{s:?}");
    assert!(extra(&s, "pages_released") >= before as u64, "{s:?}");
    assert!(extra(&s, "stack_pages_touched") >= DEPTH as u64, "{s:?}");
    assert!(
        extra(&s, "stack_depth_pages_high_water") >= DEPTH as u64,
        "{s:?}"
    );
    assert!(extra(&s, "minor_faults") >= before as u64, "{s:?}");
}

#[test]
fn abp_and_fibril_without_unmap_keep_them() {
    let abp = Abp::start(&PoolConfig::with_workers(2)).unwrap();
    let (before, after, s) = deep_then_suspend(&abp);
    assert!(
        before >= DEPTH * 3 / 4 && after >= before - 4,
        "abp: {before} then {after}"
    );
    // It suspended once, as `fibril` did, and unmapped nothing.
    assert_eq!(extra(&s, "suspensions"), 1, "{s:?}");
    assert_eq!(
        (
            extra(&s, "unmaps"),
            extra(&s, "unmaps_resident"),
            extra(&s, "pages_released")
        ),
        (0, 0, 0)
    );
    assert!(extra(&s, "stack_pages_touched") >= DEPTH as u64, "{s:?}");
    assert!(
        extra(&s, "stack_depth_pages_high_water") >= DEPTH as u64,
        "{s:?}"
    );
    drop(abp);
    let nounmap = Fibril::start(&PoolConfig {
        unmap: Unmap::Off,
        ..PoolConfig::with_workers(2)
    })
    .unwrap();
    let (before, after, s) = deep_then_suspend(&nounmap);
    assert!(
        before >= DEPTH * 3 / 4 && after >= before - 4,
        "nounmap: {before} then {after}"
    );
    assert_eq!((extra(&s, "unmaps"), extra(&s, "unmaps_resident")), (0, 0));
}

/// Every suspension is an unmap (Fibril's count), whether or not its stack has pages to give
/// back (ours, `unmaps_resident`): on 2 workers, a loop of joins whose stolen `b` waits until
/// the parent has suspended. In the first, `a` recurses deep, so its suspension has pages
/// below the join to release; in the others `a` only spins (no call), so the suspensions park
/// at the same stack pointer as the first, with little or nothing touched below it since its
/// release.
#[test]
fn every_suspension_is_an_unmap_whether_or_not_it_releases_pages() {
    const JOINS: u64 = 6;
    let pool = Fibril::start(&PoolConfig::with_workers(2)).unwrap();
    pool.run(|_| ());
    pool.reset_stats();
    pool.run(|w| {
        for k in 0..JOINS {
            let b_started = AtomicBool::new(false);
            w.join(
                |_| {
                    let mut spins = 0u64;
                    while !b_started.load(Ordering::Acquire) {
                        spins += 1;
                        assert!(spins < 1 << 32, "b was never stolen");
                        std::hint::spin_loop();
                    }
                    if k == 0 {
                        black_box(deep(DEPTH / 8, &mut |_| ()));
                    }
                },
                |_| {
                    b_started.store(true, Ordering::Release);
                    wait_for("the parent suspended", || {
                        extra(&pool.stats(), "suspensions") > k
                    });
                },
            );
        }
    });
    let s = pool.stats();
    eprintln!("{s:?}");
    assert_eq!(extra(&s, "suspensions"), JOINS, "{s:?}");
    assert_eq!(extra(&s, "unmaps"), JOINS, "{s:?}");
    // Whether the later suspensions find a page to release depends on how deep the spinning
    // `a` and the steal path reach below the join (on the membarrier path, usually none; on
    // the fence fallback, a page each): `unmaps` counts them all the same.
    let resident = extra(&s, "unmaps_resident");
    assert!(
        (1..=JOINS).contains(&resident),
        "{resident} of {JOINS} unmaps released pages: {s:?}"
    );
    assert!(
        extra(&s, "pages_released") >= DEPTH as u64 / 8 * 3 / 4,
        "{s:?}"
    );
}

/// A page that an unmap gave back and that is touched again faults again, but it was first
/// touched once: `stack_pages_touched` (Fibril's S_P) counts it once, where the resident
/// snapshot and the page faults each see something else. The parent recurses deep, suspends
/// (its pages released), is resumed on its own stack and recurses as deep again.
#[test]
fn a_released_page_touched_again_is_touched_once() {
    let pool = Fibril::start(&PoolConfig::with_workers(2)).unwrap();
    pool.run(|_| ());
    let base = extra(&pool.stats(), "stack_pages_touched");
    pool.reset_stats();
    let b_started = AtomicBool::new(false);
    pool.run(|w| {
        w.join(
            |_| {
                wait_for("b stolen", || b_started.load(Ordering::Acquire));
                deep(DEPTH, &mut |_| ())
            },
            |_| {
                b_started.store(true, Ordering::Release);
                wait_for("the parent suspended", || {
                    extra(&pool.stats(), "suspensions") > 0
                });
            },
        );
        // Resumed on its own stack, whose pages below the join are gone: touch them again.
        deep(DEPTH, &mut |_| ())
    });
    let s = pool.stats();
    assert_eq!((extra(&s, "unmaps"), extra(&s, "unmaps_resident")), (1, 1));
    let released = extra(&s, "pages_released");
    assert!(released >= DEPTH as u64 * 3 / 4, "{s:?}");
    // Touched once each (a debug build's frames are larger than 4 KiB: compare with the
    // pages released, not with DEPTH)...
    let touched = extra(&s, "stack_pages_touched") - base;
    assert!(touched >= released, "{touched} pages touched: {s:?}");
    assert!(
        touched < released * 3 / 2,
        "{touched} pages touched: the released ones counted twice? {s:?}"
    );
    // ... but faulted twice.
    assert!(
        extra(&s, "minor_faults") >= touched + released * 3 / 4,
        "{s:?}"
    );
}

#[test]
fn resident_stack_pages_are_counted_exactly() {
    let pool = Fibril::start(&PoolConfig::with_workers(1)).unwrap();
    pool.run(|_| ());
    pool.reset_stats();
    let base = extra(&pool.stats(), "stack_pages_resident");
    // A deep recursion on a fiber that then goes idle: its pages stay (idle stacks keep
    // theirs, as Fibril's pooled stacks do) and the scan counts them.
    pool.run(|_| deep(DEPTH, &mut |_| ()));
    wait_for("the last fiber retired", || pool.stacks_in_use() == 0);
    let s = pool.stats();
    assert!(
        extra(&s, "stack_pages_resident") >= base + DEPTH as u64,
        "{base} then {s:?}"
    );
    assert!(
        extra(&s, "stack_depth_pages_high_water") >= DEPTH as u64,
        "{s:?}"
    );
    assert_eq!(extra(&s, "stacks_in_use"), 0, "{s:?}");
}
