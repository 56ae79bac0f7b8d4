//! The deques' fence counts as every deque runtime reports them: `heavy_fences`,
//! `fence_switches` and `symmetric_pops` in the statistics of `abp`, `fibril`, `prows` (both
//! placements) and `libfork`, and, on steal-heavy work with the default fence-mode
//! switching, few heavy fences per successful steal (see `src/deque.rs`).

#![allow(clippy::manual_async_fn)]

#[path = "common/fence.rs"]
mod fence;
use std::future::Future;
use stealbench_schedulers::abp::Abp;
use stealbench_schedulers::fibril::Fibril;
use stealbench_schedulers::libfork::LibforkPool;
use stealbench_schedulers::prows::Prows;
use stealbench_schedulers::*;

/// More workers than this machine's 2 cores: idle thieves hunt while others run.
const P: usize = 4;
/// Leaves of the binary tree: each a few hundred nanoseconds, so thieves find work often.
const LEAVES: u64 = 1 << 16;

fn leaf(i: u64) -> u64 {
    (0..64).fold(i, |a, k| {
        a.wrapping_mul(6364136223846793005).wrapping_add(k)
    })
}

/// The tree's value, serially.
fn serial(lo: u64, hi: u64) -> u64 {
    (lo..hi).map(leaf).fold(0, u64::wrapping_add)
}

fn tree_fj<W: Worker>(w: &W, lo: u64, hi: u64) -> u64 {
    if hi - lo == 1 {
        return leaf(lo);
    }
    let mid = lo + (hi - lo) / 2;
    let (a, b) = w.join(|w| tree_fj(w, lo, mid), |w| tree_fj(w, mid, hi));
    a.wrapping_add(b)
}

fn tree_af<'s, C: AsyncWorker<'s>>(
    c: C,
    lo: u64,
    hi: u64,
) -> impl Future<Output = u64> + Send + 's {
    async move {
        if hi - lo == 1 {
            return leaf(lo);
        }
        let mid = lo + (hi - lo) / 2;
        let (a, b) = c
            .join(move |c| tree_af(c, lo, mid), move |c| tree_af(c, mid, hi))
            .await;
        a.wrapping_add(b)
    }
}

/// The three counts are reported; with the default switching and `membarrier`, the runs after
/// a warm-up issue fewer heavy fences than half their steals, plus a few per worker for the
/// sleeps and for deques that went back to asymmetric mode and meet a burst again. Always
/// asymmetric (`STEALBENCH_FENCE_SWITCHING=0`) they issue at least one per steal, since every
/// steal passes the cheap look, and the bound fails (measured: 54 to 110 heavy fences for 54 to
/// 87 steals, against 0 to 18 for 56 to 106 with switching).
fn check(name: &str, stats: &Stats) {
    let get = |k: &str| {
        stats
            .extra(k)
            .unwrap_or_else(|| panic!("{name}: no {k} in {stats:?}"))
    };
    let (heavy, switches, pops) = (
        get("heavy_fences"),
        get("fence_switches"),
        get("symmetric_pops"),
    );
    let steals = stats.steals.expect("a deque runtime counts steals");
    eprintln!(
        "{name}: {steals} steals, {heavy} heavy fences, {switches} switches, {pops} symmetric pops"
    );
    if fence::mode().applied() == FenceMode::Adaptive {
        assert!(
            heavy < steals / 2 + 8 * P as u64,
            "{name}: {heavy} heavy fences for {steals} steals"
        );
    }
}

/// A warm-up run, a reset, three counted runs, then the check.
fn measure<S: Scheduler>(name: &str, pool: &S, run: impl Fn()) {
    run();
    pool.reset_stats();
    for _ in 0..3 {
        run();
    }
    check(name, &pool.stats());
}

/// `S` on `P` workers with `placement`, the tree run forking only.
fn closure_pool<S: ForkJoin>(name: &str, placement: Placement) {
    let pool = S::start(&PoolConfig {
        placement,
        ..fence::config(P)
    })
    .unwrap();
    let want = serial(0, LEAVES);
    measure(name, &pool, || {
        assert_eq!(pool.run(|w| tree_fj(w, 0, LEAVES)), want)
    });
}

fn libfork_pool() {
    let pool = LibforkPool::start(&fence::config(P)).unwrap();
    let want = serial(0, LEAVES);
    measure("libfork", &pool, || {
        assert_eq!(pool.run_async(|c| tree_af(c, 0, LEAVES)), want)
    });
}

/// One pool after another (not as parallel tests): each pool's workers have the machine's
/// cores to themselves, as far as the other tests let them.
#[test]
fn every_deque_runtime_reports_its_fences() {
    closure_pool::<Abp>("abp", Placement::Paper);
    closure_pool::<Fibril>("fibril", Placement::Paper);
    closure_pool::<Prows>("prows", Placement::Paper);
    closure_pool::<Prows>("prows/placement=artifact", Placement::Artifact);
    libfork_pool();
}

/// The fence counts of `S` on `P` workers in fence mode `mode`, over three runs of the tree.
fn counts_in<S: ForkJoin>(mode: FenceMode) -> (u64, u64) {
    let config = PoolConfig {
        fence: mode,
        ..PoolConfig::with_workers(P)
    };
    assert_eq!(
        S::CAPABILITIES.fence_applied(&config),
        Some(mode.applied()),
        "a deque runtime applies its configuration's fence mode"
    );
    let pool = S::start(&config).unwrap();
    let want = serial(0, LEAVES);
    for _ in 0..3 {
        assert_eq!(pool.run(|w| tree_fj(w, 0, LEAVES)), want);
    }
    let stats = pool.stats();
    let steals = stats.steals.expect("a deque runtime counts steals");
    (stats.extra("fence_switches").unwrap(), steals)
}

/// Pools in different fence modes side by side in one process, each as its configuration
/// says: `asymmetric` and `fenced` deques never switch, `eager` ones switch at steals (where
/// the kernel allows `membarrier`; without it every mode is applied as `fenced`). A runtime
/// with deques of its own library applies none.
#[test]
fn each_pool_applies_its_own_fence_mode() {
    for mode in [FenceMode::Asymmetric, FenceMode::Fenced] {
        assert_eq!(counts_in::<Abp>(mode).0, 0, "{mode}: switched");
        assert_eq!(counts_in::<Prows>(mode).0, 0, "{mode}: switched");
    }
    let (switches, steals) = counts_in::<Abp>(FenceMode::Eager);
    if FenceMode::Eager.applied() == FenceMode::Eager && steals > 0 {
        assert!(switches > 0, "eager: {steals} steals, no switch");
    }
    let rayon = PoolConfig {
        fence: FenceMode::Fenced,
        ..PoolConfig::with_workers(2)
    };
    let caps = <stealbench_schedulers::rayon::RayonPool as Scheduler>::CAPABILITIES;
    assert_eq!(caps.fence_applied(&rayon), None);
}
