//! Deviations from the serial order (Spoonhower et al., SPAA 2009, Definition 1), which `abp`
//! and `prows` (with either placement) count exactly (`deviations` in their statistics; the scheme and
//! its proof are in `src/fiberpool/deviation.rs`).
//!
//! * One worker never deviates (with futures on their own fibers, the default): fork-join,
//!   futures, and random DAGs of joins, spawns, single- and multi-touch futures.
//! * Pure fork-join on two workers: every deviation is charged to a steal, at most two per
//!   steal, and every steal causes one (steals <= deviations <= 2 steals).
//! * Hand-made DAGs run under a forced schedule on two workers, whose counts are worked out in
//!   each test's comment. The schedules are forced by tasks that wait for what the other worker
//!   does (flags, the pool's counters, its fiber stacks in use), and by a budget of one steal a
//!   run (`PoolConfig::steals`), which stops an idle worker from stealing a fiber that
//!   the other worker is about to resume. Strand names: `s` the strand that forks, `a`/`b` a
//!   join's branches, `k` a join's continuation, `c` the creator's continuation after a fork,
//!   `t` a future's task. On `abp` and both `prows` placements: a stolen branch that ends first (2) or resumes
//!   its join (1), and a chain of d joins above a touch of a stolen future (`abp` 2 + 2d,
//!   `prows` 2: Spoonhower et al.'s Figure 5(a)). On `abp`: a touch whose worker ran other work
//!   before resuming it (it deviates) or nothing (it does not), and, with queued futures
//!   keeping the other worker busy, a stolen branch and a stolen continuation that do not
//!   deviate because their thief ran their predecessor just before: what a count of steals
//!   would get wrong.
//! * `FutureStack::Current` on one worker: 3 deviations per future whose touch runs it inline.

#[path = "common/fence.rs"]
mod fence;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use stealbench_schedulers::*;

mod common;
#[path = "common/fib.rs"]
mod fib;
use common::{leaf, mix, splitmix};
use fib::{fib_fj, fib_sf};

fn extra(s: &Stats, name: &str) -> u64 {
    s.extra(name)
        .unwrap_or_else(|| panic!("no counter {name}: {s:?}"))
}

/// A counter, or 0 if the runtime has none of that name.
fn extra_or_0(s: &Stats, name: &str) -> u64 {
    s.extra(name).unwrap_or(0)
}

/// (steals, deviations) of the pool's statistics.
fn counts(s: &Stats) -> (u64, u64) {
    (
        s.steals.expect("fiber pools count steals"),
        extra(s, "deviations"),
    )
}

/// Spins (yielding) until `cond` holds; panics after 10 s rather than hang the test.
fn wait_until(what: &str, cond: impl Fn() -> bool) {
    let t = Instant::now();
    while !cond() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "waited 10 s for {what}"
        );
        std::thread::yield_now();
    }
}

/// A flag one task sets and another waits for.
#[derive(Default)]
struct Flag(AtomicBool);

impl Flag {
    fn set(&self) {
        self.0.store(true, Ordering::Release);
    }
    fn wait(&self, what: &str) {
        wait_until(what, || self.0.load(Ordering::Acquire));
    }
}

/// One node of a random DAG whose shape and value depend on `seed` only: joins and scopes of
/// spawns, and if `futures`, single-touch futures (touched by their creator, inside a join's
/// branch, or by a spawned task) and multi-touch futures (touched by their creator, by spawned
/// tasks and by a chained future).
fn dag<W: Futures>(w: &W, seed: u64, depth: u32, futures: bool) -> u64 {
    let r = splitmix(seed);
    if depth == 0 || r.is_multiple_of(6) {
        return leaf(seed);
    }
    let d = depth - 1;
    let s = |i: u64| splitmix(seed.wrapping_add(i.wrapping_mul(0x1234_5678_9ABC_DEF1)));
    let kinds = if futures { 6 } else { 2 };
    match (r >> 8) % kinds {
        0 => {
            let (a, b) = w.join(|w| dag(w, s(1), d, futures), |w| dag(w, s(2), d, futures));
            mix(a, b)
        }
        1 => {
            let k = 1 + (r >> 16) as usize % 3;
            let slots: Vec<AtomicU64> = (0..k).map(|_| AtomicU64::new(0)).collect();
            let here = w.scope(|sc, w| {
                for (i, slot) in slots.iter().enumerate() {
                    let si = s(10 + i as u64);
                    sc.spawn(w, move |_, w| {
                        slot.store(dag(w, si, d, futures), Ordering::Relaxed)
                    });
                }
                dag(w, s(3), d, futures)
            });
            slots
                .iter()
                .fold(here, |acc, x| mix(acc, x.load(Ordering::Relaxed)))
        }
        2 => w.scope(|sc, w| {
            let x = w.future(sc, move |_, w| dag(w, s(1), d, futures));
            let y = dag(w, s(2), d, futures);
            mix(x.get(w), y)
        }),
        3 => w.scope(|sc, w| {
            let x = w.future(sc, move |_, w| dag(w, s(1), d, futures));
            let (a, b) = w.join(move |w| x.get(w), |w| dag(w, s(2), d, futures));
            mix(a, b)
        }),
        4 => {
            let out = AtomicU64::new(0);
            let own = w.scope(|sc, w| {
                let x = w.future(sc, move |_, w| dag(w, s(1), d, futures));
                let out = &out;
                sc.spawn(w, move |_, w| {
                    let y = dag(w, s(2), d, futures);
                    out.store(mix(x.get(w), y), Ordering::Relaxed)
                });
                dag(w, s(3), d, futures)
            });
            own ^ out.load(Ordering::Relaxed)
        }
        _ => {
            let acc = AtomicU64::new(0);
            let (own, chained) = w.scope(|sc, w| {
                let f = w.shared_future(sc, move |_, w| dag(w, s(1), d, futures));
                for i in 0..2 {
                    let f = f.clone();
                    let acc = &acc;
                    sc.spawn(w, move |_, w| {
                        let v = mix(*f.get(w), dag(w, s(20 + i), d, futures));
                        acc.fetch_add(v, Ordering::Relaxed);
                    });
                }
                let f2 = f.clone();
                let g = w.future(sc, move |_, w| mix(*f2.get(w), dag(w, s(3), d, futures)));
                (*f.get(w), g.get(w))
            });
            mix(mix(own, chained), acc.load(Ordering::Relaxed))
        }
    }
}

/// The suite for the fiber runtime `$Pool`; `$parsimonious`: a touch of an unfinished future
/// parks only its fiber and the worker goes on with its own deque (`abp`), rather than
/// suspending the whole deque (`prows`).
macro_rules! deviation_tests {
    ($name:ident, $Pool:ty, $parsimonious:expr) => {
        deviation_tests!($name, $Pool, $parsimonious, Placement::Paper);
    };
    ($name:ident, $Pool:ty, $parsimonious:expr, $placement:expr) => {
        mod $name {
            use super::*;

            /// `p` workers with the suite's placement, every other setting at its default.
            fn config(p: usize) -> PoolConfig {
                PoolConfig {
                    placement: $placement,
                    ..fence::config(p)
                }
            }

            fn pool(p: usize) -> $Pool {
                <$Pool>::start(&config(p)).unwrap()
            }

            /// Two workers under the forced schedule of `k` steals a run
            /// ([`PoolConfig::steals`]): after them, an idle worker steals nothing while
            /// the other runs a task.
            fn pool_budget(k: u64) -> $Pool {
                <$Pool>::start(&PoolConfig {
                    steals: Some(k),
                    ..config(2)
                })
                .unwrap()
            }

            /// Runs `f` on `pool` after a reset; its value and (steals, deviations).
            fn run_counted<R: Send>(
                pool: &$Pool,
                f: impl FnOnce(&<$Pool as ForkJoin>::Worker) -> R + Send,
            ) -> (R, (u64, u64)) {
                pool.reset_stats();
                let r = pool.run(f);
                (r, counts(&pool.stats()))
            }

            /// P = 1: the run is the serial elision itself, so nothing deviates, whatever the
            /// program (fork-join, futures, spawns, multi-touch futures touched by other tasks).
            #[test]
            fn one_worker_never_deviates() {
                let pool = pool(1);
                assert_eq!(run_counted(&pool, |w| fib_fj(w, 20)), (6765, (0, 0)));
                assert_eq!(run_counted(&pool, |w| fib_sf(w, 16)), (987, (0, 0)));
                for i in 0..200 {
                    let seed = splitmix(i ^ 0xDE71);
                    let depth = 3 + (seed % 5) as u32;
                    let (_, c) = run_counted(&pool, |w| dag(w, seed, depth, true));
                    assert_eq!(c, (0, 0), "DAG {i} (seed {seed:#x}, depth {depth})");
                }
            }

            /// The forced schedule stops no program that does not spin on another task: with
            /// a budget of 0 or 1 steals, random DAGs of joins, spawns and futures (whose
            /// touches suspend) end with the serial value.
            #[test]
            fn a_forced_schedule_stops_no_program() {
                let serial = pool(1);
                for k in [0, 1] {
                    let pool = pool_budget(k);
                    for i in 0..60 {
                        let seed = splitmix(i ^ 0xB0D6);
                        let want = serial.run(|w| dag(w, seed, 7, true));
                        assert_eq!(pool.run(|w| dag(w, seed, 7, true)), want, "budget {k}");
                    }
                }
            }

            /// Pure fork-join on 2 workers (joins, and scopes of spawns): a deviation is a
            /// stolen task's first strand or a sync whose branch was stolen, so at most two per
            /// steal (the bound of the papers). A steal usually makes the strand it starts
            /// deviate too, but not always: a thief that ran that strand's predecessor just
            /// before (see the `abp_stolen_*_right_after_*` tests) does not deviate, so fewer
            /// deviations than steals is possible, and happens with the fence fallback
            /// (`STEALBENCH_NO_MEMBARRIER`), whose timing differs. Each run starts with a join
            /// whose `a` waits until `b` has started, so it steals at least once and deviates
            /// at least once (`b` starts on the thief while `a` runs), and both workers then run
            /// a random DAG (or fib) side by side.
            #[test]
            fn fork_join_deviations_are_charged_to_steals() {
                let pool = pool(2);
                let (mut steals, mut devs) = (0, 0);
                for i in 0..300 {
                    let seed = splitmix(i ^ 0xF0F0);
                    let started = Flag::default();
                    let work = |w: &<$Pool as ForkJoin>::Worker, j: u64| {
                        if i % 3 == 0 {
                            fib_fj(w, 16)
                        } else {
                            dag(w, seed ^ j, 8, false)
                        }
                    };
                    let (v, (s, d)) = run_counted(&pool, |w| {
                        w.join(
                            |w| {
                                started.wait("b to start");
                                work(w, 1)
                            },
                            |w| {
                                started.set();
                                work(w, 2)
                            },
                        )
                    });
                    assert!(
                        s >= 1 && d >= 1 && d <= 2 * s,
                        "run {i}: {s} steals, {d} deviations ({v:?})"
                    );
                    steals += s;
                    devs += d;
                }
                eprintln!("{}: {steals} steals, {devs} deviations", <$Pool>::NAME);
            }

            /// `join(a, b)` whose `b` is stolen and ends before `a` does. The root's worker X
            /// pushes `b` and runs `a`, which waits until `b` has started, so only the other
            /// worker Y can take `b` (1 steal), then until Y's fiber is idle again (`b` is over
            /// and its signal set). Deviations: `b` on Y (its predecessor, `a`'s last strand,
            /// has not ended); `k` on X after `a` (its predecessor is `b`'s last strand, on Y).
            /// 2.
            #[test]
            fn stolen_branch_that_ends_first_deviates_twice() {
                let pool = pool(2);
                let started = Flag::default();
                let (_, c) = run_counted(&pool, |w| {
                    w.join(
                        |_| {
                            started.wait("b to start");
                            wait_until("b's fiber to retire", || pool.stacks_in_use() == 1);
                        },
                        |_| started.set(),
                    )
                });
                assert_eq!(c, (1, 2), "(steals, deviations)");
            }

            /// `join(a, b)` whose stolen `b` ends after `a`: the join's fiber parks, and Y,
            /// which ran `b`, resumes it. `a` waits until `b` has started (so Y stole it: 1
            /// steal, the budget: X cannot take the resumed fiber from Y's deque); `b` waits
            /// until the join's fiber is parked. Deviations: `b` on Y (`a` has not ended); not
            /// `k`, which Y runs right after `b`'s last strand. 1.
            #[test]
            fn stolen_branch_that_resumes_its_join_deviates_once() {
                let pool = pool_budget(1);
                let started = Flag::default();
                let (_, c) = run_counted(&pool, |w| {
                    w.join(
                        |_| started.wait("b to start"),
                        |_| {
                            started.set();
                            wait_until("the join's fiber to park", || {
                                extra(&pool.stats(), "suspensions") >= 1
                            });
                        },
                    )
                });
                assert_eq!(c, (1, 1), "(steals, deviations)");
            }

            /// A chain of `depth` joins after a stolen future (Spoonhower et al., Figure
            /// 5(a)): the future's task `t` runs on X (work-first), Y steals the root's
            /// continuation `c` (1 steal, the run's budget: Y steals nothing more while X
            /// runs); `c` nests `depth` joins `J1(A1, B1)`, `A1 = J2(A2, B2)`, ..., and the
            /// innermost `Ad` touches the future, whose task waits until that touch has
            /// suspended. Deviations:
            ///
            /// * both: `c` (its predecessor, `t`'s last strand, has not ended), and the strand
            ///   after the touch, on X after `t` (its predecessor, the strand before the
            ///   touch, ran on Y).
            /// * `abp` (parsimonious): the touch parks only its fiber, and Y pops `Bd`, ...,
            ///   `B1` from its own deque, each deviating (its `A` has not ended); `t` waits
            ///   until they are over and Y's fiber is idle. Back on X after the touch, every
            ///   `Ji`'s take-back fails and `Ji`'s continuation deviates (its predecessor `Bi`
            ///   ran on Y): 2 + 2 depth, growing with the span.
            /// * `prows`: the touch suspends Y's whole deque with `B1..Bd` in it; Y, out of budget,
            ///   steals nothing; the put makes that deque X's active deque, X resumes the
            ///   touch at its bottom and takes every `Bi` back inline, in serial order: 2,
            ///   whatever the depth.
            #[test]
            fn joins_after_a_stolen_future() {
                fn chain<W: Worker, H: FutureHandle<u64, Worker = W>>(
                    w: &W,
                    depth: u32,
                    x: H,
                    ran: &AtomicUsize,
                ) -> u64 {
                    if depth == 0 {
                        return x.get(w);
                    }
                    let (a, b) = w.join(
                        move |w| chain(w, depth - 1, x, ran),
                        |_| {
                            ran.fetch_add(1, Ordering::Release);
                            1
                        },
                    );
                    a + b
                }
                for depth in 0..=4u32 {
                    let pool = pool_budget(1);
                    let stolen = Flag::default();
                    let ran = AtomicUsize::new(0);
                    let (v, c) = run_counted(&pool, |w| {
                        w.scope(|s, w| {
                            let (pool, stolen, ran) = (&pool, &stolen, &ran);
                            let x = w.future(s, move |_, _| {
                                stolen.wait("the continuation to be stolen");
                                wait_until("the touch to suspend", || {
                                    let st = pool.stats();
                                    extra_or_0(&st, "suspensions")
                                        + extra_or_0(&st, "deque_suspensions")
                                        >= 1
                                });
                                if $parsimonious {
                                    wait_until("Y to run every B and go idle", || {
                                        ran.load(Ordering::Acquire) == depth as usize
                                            && pool.stacks_in_use() == 2
                                    });
                                }
                                100
                            });
                            stolen.set();
                            chain(w, depth, x, ran)
                        })
                    });
                    assert_eq!(v, 100 + depth as u64);
                    let want = if $parsimonious {
                        2 + 2 * depth as u64
                    } else {
                        2
                    };
                    assert_eq!(c, (1, want), "depth {depth}: (steals, deviations)");
                }
            }

            /// `FutureStack::Current` on one worker: a future's task is queued and its
            /// creator goes on, so each future deviates 3 times against the eager serial
            /// order: the creator's continuation, the task's first strand, and the strand
            /// after the touch that runs it inline. fib_sf(n) creates fib(n + 1) - 1 futures;
            /// fork-join is unaffected.
            #[test]
            fn current_stack_deviates_three_times_per_inline_future() {
                let pool = <$Pool>::start(&PoolConfig {
                    futures: FutureStack::Current,
                    ..config(1)
                })
                .unwrap();
                assert_eq!(run_counted(&pool, |w| fib_fj(w, 18)), (2584, (0, 0)));
                assert_eq!(
                    run_counted(&pool, |w| fib_sf(w, 15)),
                    (610, (0, 3 * (987 - 1)))
                );
            }
        }
    };
}

deviation_tests!(abp, stealbench_schedulers::abp::Abp, true);
deviation_tests!(prows, stealbench_schedulers::prows::Prows, false);
deviation_tests!(
    prows_artifact,
    stealbench_schedulers::prows::Prows,
    false,
    Placement::Artifact
);

/// `abp`: whether a touch deviates depends on what its worker ran in between, not on who
/// resumed it. A multi-touch future's task `t` runs on X; Y steals the root's continuation `c`
/// (1 steal), which spawns `u` (work-first, on Y); `u` touches the future and parks, and Y pops
/// `c`'s fiber back from its deque (`c2`, the spawn's continuation), which forks `join(a, b)`:
/// `a` touches the future and parks too, and Y pops `b` and runs it. `t` waits for both parks
/// and for Y to go idle (3 fibers in use: the root's, `u`'s, `t`'s); its put pushes `c2`'s
/// fiber, then `u`'s, onto X's deque; X runs `u` (the bottom), which waits until `a` is
/// resumed, so Y steals `c2`'s fiber back (2 steals); `a` then ends, and `c2` waits until `t`
/// and `u` are over. Deviations: `c` (`t` has not ended); `c2` (`u` has not ended); `b` (`a`
/// has not ended); `u` after its touch, on X (the strand before the touch ran on Y); `a` after
/// its touch, on Y, which ran that touch's strand but `b` since; the join's continuation after
/// `a` (`b` ran before `a` ended). 6. Without the join (`c2` touches the future itself), the
/// strand after `c2`'s touch follows its predecessor on Y and does not deviate: 3.
#[test]
fn abp_touch_resumed_by_its_own_worker() {
    use stealbench_schedulers::abp::Abp;
    for with_b in [true, false] {
        let pool = Abp::start(&fence::config(2)).unwrap();
        let stolen = Flag::default();
        let resumed = Flag::default();
        let ran_b = AtomicUsize::new(0);
        pool.reset_stats();
        let v = pool.run(|w| {
            w.scope(|s, w| {
                let (pool, stolen, resumed, ran_b) = (&pool, &stolen, &resumed, &ran_b);
                let f = w.shared_future(s, move |_, _| {
                    stolen.wait("the continuation to be stolen");
                    wait_until("both touches to park and Y to go idle", || {
                        extra(&pool.stats(), "suspensions") >= 2
                            && ran_b.load(Ordering::Acquire) == usize::from(with_b)
                            && pool.stacks_in_use() == 3
                    });
                    5u64
                });
                stolen.set();
                let f1 = f.clone();
                s.spawn(w, move |_, w| {
                    assert_eq!(*f1.get(w), 5);
                    resumed.wait("the second touch to resume");
                });
                let touch = |w: &stealbench_schedulers::abp::AbpWorker| {
                    let v = *f.get(w);
                    resumed.set();
                    v
                };
                let v = if with_b {
                    let (v, one) = w.join(touch, |_| {
                        ran_b.fetch_add(1, Ordering::Release);
                        1
                    });
                    v + one
                } else {
                    touch(w)
                };
                wait_until("the other tasks to end", || pool.stacks_in_use() == 1);
                v
            })
        });
        assert_eq!(v, 5 + u64::from(with_b));
        let want = if with_b { (2, 6) } else { (2, 3) };
        assert_eq!(
            counts(&pool.stats()),
            want,
            "with b: {with_b}: (steals, deviations)"
        );
    }
}

/// An `abp` pool of 2 workers whose single-touch futures are queued
/// (`FutureStack::Current`): a queued task left in a deque keeps a worker busy below an entry
/// that the other worker can then steal right after running its serial predecessor.
fn abp_current_2() -> stealbench_schedulers::abp::Abp {
    stealbench_schedulers::abp::Abp::start(&PoolConfig {
        futures: FutureStack::Current,
        ..fence::config(2)
    })
    .unwrap()
}

/// `abp`: a stolen branch that does not deviate (its thief ran `a`'s last strand just before).
/// A multi-touch future's task `t` runs on X (its own fiber, work-first); Y steals the root's
/// continuation `c` (1 steal), which forks `join(a, b)`; `a` queues a future `q` (its entry
/// below `b`'s), then touches the future and parks; Y pops `q` and runs it, and `q` waits
/// until the join has returned (so Y stays busy). `t` waits for the park; its put resumes `a`
/// on X, which drops `q`'s handle and ends; the join's take-back fails on X, its fiber parks,
/// and X steals `b` from Y's deque (2 steals), then resumes the join right after `b` (Y, in
/// `q`, cannot take it). The root waits until `q` has run and its fiber is idle before its
/// scope ends. Deviations: `c` (`t` has not
/// ended); `a`'s continuation after queueing `q` and `q`'s first strand (a queued future's
/// two); `a` after its touch, on X (the strand before it ran on Y). Not `b` (X ran `a`'s last
/// strand just before) nor the join's continuation (X ran `b` just before). 4.
#[test]
fn abp_stolen_branch_right_after_its_predecessor_does_not_deviate() {
    let pool = abp_current_2();
    let (stolen, joined, q_ran) = (Flag::default(), Flag::default(), Flag::default());
    pool.reset_stats();
    let v = pool.run(|w| {
        w.scope(|s, w| {
            let (pool, stolen, joined, q_ran) = (&pool, &stolen, &joined, &q_ran);
            let f = w.shared_future(s, move |_, _| {
                stolen.wait("the continuation to be stolen");
                wait_until("the touch to park", || {
                    extra(&pool.stats(), "suspensions") >= 1
                });
                5u64
            });
            stolen.set();
            let (x, y) = w.join(
                |w| {
                    let q = w.future(s, move |_, _| {
                        q_ran.set();
                        joined.wait("the join to return")
                    });
                    let v = *f.get(w);
                    drop(q);
                    v
                },
                |_| 1,
            );
            joined.set();
            // `q`'s fiber exists once `q` runs; only then does 1 fiber in use mean it is over.
            q_ran.wait("q to run");
            wait_until("the other tasks to end", || pool.stacks_in_use() == 1);
            x + y
        })
    });
    assert_eq!(v, 6);
    let st = pool.stats();
    assert_eq!(counts(&st), (2, 4), "(steals, deviations): {st:?}");
}

/// `abp`: a fork's continuation that does not deviate (its thief ran the child's last strand
/// just before). A multi-touch future's task `t` runs on X; Y steals the root's continuation
/// `c` (1 steal), which spawns `u` (work-first, on Y, `c` pushed below); `u` queues a future
/// `q` (its entry below `c`'s), then touches the future and parks; Y pops `q` and runs it,
/// and `q` waits until `c` continues after the spawn. `t` waits for the park; its put resumes
/// `u` on X, which drops `q`'s handle and ends; its deque is empty (it parted from `c`), and X
/// steals `c` from Y's deque (2 steals). The root waits until `q` has run and its fiber is
/// idle before its scope ends. Deviations: `c` (`t` has not ended); `u`'s continuation after
/// queueing `q` and `q`'s first strand; `u` after its touch, on X. Not `c` after the spawn (X
/// ran `u`'s last strand just before). 4.
#[test]
fn abp_stolen_continuation_right_after_its_child_does_not_deviate() {
    let pool = abp_current_2();
    let (stolen, resumed, q_ran) = (Flag::default(), Flag::default(), Flag::default());
    pool.reset_stats();
    let v = pool.run(|w| {
        w.scope(|s, w| {
            let (pool, stolen, resumed, q_ran) = (&pool, &stolen, &resumed, &q_ran);
            let f = w.shared_future(s, move |_, _| {
                stolen.wait("the continuation to be stolen");
                wait_until("the touch to park", || {
                    extra(&pool.stats(), "suspensions") >= 1
                });
                5u64
            });
            stolen.set();
            let f1 = f.clone();
            s.spawn(w, move |s, w| {
                let q = w.future(s, move |_, _| {
                    q_ran.set();
                    resumed.wait("the continuation to resume")
                });
                assert_eq!(*f1.get(w), 5);
                drop(q);
            });
            resumed.set();
            // `q`'s fiber exists once `q` runs; only then does 1 fiber in use mean it is over.
            q_ran.wait("q to run");
            wait_until("the other tasks to end", || pool.stacks_in_use() == 1);
            *f.get(w)
        })
    });
    assert_eq!(v, 5);
    let st = pool.stats();
    assert_eq!(counts(&st), (2, 4), "(steals, deviations): {st:?}");
}
