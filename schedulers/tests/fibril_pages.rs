//! `fibril` gives a suspended stack's unused pages back to the OS: a deep recursion, then a
//! join that suspends, and `mincore` shows the recursion's pages resident before and gone
//! after (on `abp`, which keeps them, they stay). Also the counters that say so, and the
//! scan of resident stack pages (the spilling stack pool is tested in `stack.rs`).

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use stealbench_schedulers::abp::Abp;
use stealbench_schedulers::fibril::{Fibril, FibrilNoUnmap};
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
    assert!(extra(&s, "unmaps") >= 1, "{s:?}");
    assert!(extra(&s, "pages_released") >= before as u64, "{s:?}");
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
    assert_eq!((extra(&s, "unmaps"), extra(&s, "pages_released")), (0, 0));
    assert!(
        extra(&s, "stack_depth_pages_high_water") >= DEPTH as u64,
        "{s:?}"
    );
    drop(abp);
    let nounmap = FibrilNoUnmap::start(&PoolConfig::with_workers(2)).unwrap();
    let (before, after, s) = deep_then_suspend(&nounmap);
    assert!(
        before >= DEPTH * 3 / 4 && after >= before - 4,
        "nounmap: {before} then {after}"
    );
    assert_eq!(extra(&s, "unmaps"), 0);
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
