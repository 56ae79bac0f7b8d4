//! What `fibril`'s stacks cost and save: three measurements, printed to stderr (their last
//! results: `paper-figures/measurements.md`, "`fibril`'s stacks").
//!
//! * `unmap`: fib(32) fork-join at P = 2 on `fibril` and on `fibril` without unmapping,
//!   interleaved (median of 5 medians of 5 runs each), with the steals, suspensions, unmaps
//!   and pages released of the `fibril` runs.
//! * `rss`: a join tree whose every node first recurses deep (about 256 KiB of stack) and
//!   whose joins suspend often, at P = 2: the process's peak RSS growth (`VmHWM`, reset
//!   through `/proc/self/clear_refs`) on `abp`, `fibril` without unmapping, and `fibril`, twice
//!   each, with their stack counters.
//! * `spawn`: how many fiber rounds an n-ary scope of spawns costs against the same work as
//!   binary joins, fib(27) at P = 1 (what `fibril` does not do as Fibril does).
//!
//! `cargo run --release -p stealbench-workloads --example fibril_cost [unmap] [rss] [spawn]`
//! (default: all three, in that order). Run it on an otherwise idle machine: it times things,
//! and the peak RSS is the whole process's.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use stealbench_schedulers::abp::Abp;
use stealbench_schedulers::fibril::Fibril;
use stealbench_schedulers::*;

fn fib<W: Worker>(w: &W, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = w.join(|w| fib(w, n - 1), |w| fib(w, n - 2));
    a + b
}

fn stat(s: &Stats, name: &str) -> u64 {
    s.extra(name).or_else(|| s.gauge(name)).unwrap_or(0)
}

/// The median of `runs` timed runs of `f` on `pool`, and the pool's statistics over them.
fn time<S: ForkJoin>(pool: &S, runs: usize, f: impl Fn(&S) -> u64) -> (Duration, Stats) {
    f(pool);
    pool.reset_stats();
    let mut t: Vec<Duration> = (0..runs)
        .map(|_| {
            let s = Instant::now();
            black_box(f(pool));
            s.elapsed()
        })
        .collect();
    t.sort();
    (t[runs / 2], pool.stats())
}

/// `unmap`: the cost of unmapping at P = 2.
fn unmap_cost_on_fib_p2() {
    let n = 32;
    let cfg = PoolConfig::with_workers(2);
    let with = Fibril::start(&cfg).unwrap();
    let without = Fibril::start(&PoolConfig {
        unmap: Unmap::Off,
        ..cfg
    })
    .unwrap();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let (mut unmaps, mut resident, mut released, mut susp, mut steals) = (0, 0, 0, 0, 0);
    for _ in 0..5 {
        let (t, s) = time(&with, 5, |p| p.run(|w| fib(w, n)));
        a.push(t);
        unmaps += stat(&s, "unmaps");
        resident += stat(&s, "unmaps_resident");
        released += stat(&s, "pages_released");
        susp += stat(&s, "suspensions");
        steals += s.steals.unwrap_or(0);
        b.push(time(&without, 5, |p| p.run(|w| fib(w, n))).0);
    }
    a.sort();
    b.sort();
    eprintln!(
        "fib({n}) fj P=2: fibril {:?} (median of 5 medians), without unmap {:?}; \
         per 25 fibril runs: {steals} steals, {susp} suspensions, {unmaps} unmaps \
         ({resident} of them with resident pages), {released} pages released",
        a[2], b[2]
    );
}

/// Recurses about 256 KiB deep (64 frames of 4 KiB), then returns a value of `seed`.
fn deep(d: u32, seed: u64) -> u64 {
    let mut a = [0u8; 4000];
    a.fill(seed as u8);
    let a = black_box(a);
    if d == 0 {
        return a[3] as u64 + seed;
    }
    deep(d - 1, seed.wrapping_mul(31)) ^ a[17] as u64
}

/// A join tree of depth `d`: every node first recurses deep (so the stack below its join was
/// touched), then joins; the leaves wait a little so that joins suspend often at P = 2.
fn tree<W: Worker>(w: &W, d: u32, seed: u64) -> u64 {
    let x = deep(63, seed);
    if d == 0 {
        let t = Instant::now();
        while t.elapsed() < Duration::from_micros(20) {
            std::hint::spin_loop();
        }
        return x;
    }
    let (a, b) = w.join(
        |w| tree(w, d - 1, seed * 2),
        |w| tree(w, d - 1, seed * 2 + 1),
    );
    a ^ b ^ x
}

/// The field `field` (`VmHWM:`, peak RSS; `VmRSS:`) of this process's `/proc/self/status`, in
/// KiB.
fn status_kib(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"))
}

/// Starts a pool of `S`, resets the peak RSS, runs the tree `runs` times; returns the peak
/// growth over the RSS before the pool started, in KiB, and the statistics.
fn peak_growth<S: ForkJoin>(runs: usize, unmap: Unmap) -> (u64, Stats) {
    std::fs::write("/proc/self/clear_refs", "5").expect("cannot reset the peak RSS");
    let base = status_kib("VmRSS:");
    let pool = S::start(&PoolConfig {
        unmap,
        ..PoolConfig::with_workers(2)
    })
    .unwrap();
    for i in 0..runs {
        black_box(pool.run(|w| tree(w, 10, i as u64 + 1)));
    }
    let s = pool.stats();
    let peak = status_kib("VmHWM:");
    drop(pool);
    (peak.saturating_sub(base), s)
}

/// `rss`: the peak RSS growth of a deep join tree at P = 2.
fn peak_rss_deep_recursion_p2() {
    for round in 0..2 {
        for (name, (kib, s)) in [
            ("abp", peak_growth::<Abp>(5, Unmap::On)),
            ("fibril/unmap=off", peak_growth::<Fibril>(5, Unmap::Off)),
            ("fibril", peak_growth::<Fibril>(5, Unmap::On)),
        ] {
            eprintln!(
                "round {round} {name}: peak RSS +{kib} KiB; steals {:?}, suspensions {}, \
                 unmaps {} ({} with resident pages), pages released {}, minor faults {}, \
                 stacks mapped {}, stack pages resident at the end {}, first touched {}, \
                 deepest {} pages",
                s.steals,
                stat(&s, "suspensions"),
                stat(&s, "unmaps"),
                stat(&s, "unmaps_resident"),
                stat(&s, "pages_released"),
                stat(&s, "minor_faults"),
                stat(&s, "stacks_mapped"),
                stat(&s, "stack_pages_resident"),
                stat(&s, "stack_pages_touched"),
                stat(&s, "stack_depth_pages_high_water"),
            );
        }
    }
}

fn fib_spawn<W: Worker>(w: &W, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let a = AtomicU64::new(0);
    let b = w.scope(|s, w| {
        s.spawn(w, |_, w| a.store(fib_spawn(w, n - 1), Ordering::Relaxed));
        fib_spawn(w, n - 2)
    });
    a.into_inner() + b
}

/// `spawn`: fiber rounds of spawns against joins at P = 1.
fn spawn_vs_join_fibers() {
    let n = 27;
    let pool = Fibril::start(&PoolConfig::with_workers(1)).unwrap();
    let (tj, sj) = time(&pool, 5, |p| p.run(|w| fib(w, n)));
    let (ts, ss) = time(&pool, 5, |p| p.run(|w| fib_spawn(w, n)));
    eprintln!(
        "fib({n}) P=1 on fibril: join {tj:?}, {} fiber rounds per 5 runs; scope spawn {ts:?}, \
         {} fiber rounds per 5 runs",
        stat(&sj, "fiber_runs"),
        stat(&ss, "fiber_runs"),
    );
}

fn main() {
    let measurements: [(&str, fn()); 3] = [
        ("unmap", unmap_cost_on_fib_p2),
        ("rss", peak_rss_deep_recursion_p2),
        ("spawn", spawn_vs_join_fibers),
    ];
    let asked: Vec<String> = std::env::args().skip(1).collect();
    if let Some(bad) = asked
        .iter()
        .find(|a| !measurements.iter().any(|(name, _)| name == a))
    {
        eprintln!("fibril_cost: no measurement `{bad}` (unmap, rss, spawn)");
        std::process::exit(2);
    }
    for (name, measure) in measurements {
        if asked.is_empty() || asked.iter().any(|a| a == name) {
            measure();
        }
    }
}
