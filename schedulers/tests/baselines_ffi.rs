//! The library layer of the oneTBB and OpenMP baselines (`tbb::ffi`, `openmp::ffi`): results,
//! serial order, panics carried across the C ABI, no leaked closure, exactly P threads.
//!
//! `cargo test -p stealbench-schedulers --features tbb,openmp --test baselines_ffi`

#![cfg(any(feature = "tbb", feature = "openmp"))]

use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

/// Counts its drops.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// The message of a panic payload.
fn message(p: &(dyn std::any::Any + Send)) -> &str {
    p.downcast_ref::<&str>()
        .copied()
        .or_else(|| p.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("<not a string>")
}

/// Runs `f`, which must panic with `want`.
fn expect_panic(want: &str, f: impl FnOnce()) {
    let p = catch_unwind(AssertUnwindSafe(f)).expect_err("no panic came back");
    assert_eq!(message(&*p), want);
}

/// Counts down `left`, then spins until every one of its takers has: all of them must be
/// running at once, on distinct threads. Records the thread. Fails after 20 s.
fn rendezvous(left: &AtomicUsize, seen: &Mutex<HashSet<ThreadId>>) {
    seen.lock().unwrap().insert(std::thread::current().id());
    left.fetch_sub(1, Ordering::SeqCst);
    let start = Instant::now();
    while left.load(Ordering::SeqCst) != 0 {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "not every thread took part"
        );
        std::thread::yield_now();
    }
}

#[cfg(feature = "tbb")]
mod tbb {
    use super::*;
    use stealbench_schedulers::config::THREAD_STACK_BYTES;
    use stealbench_schedulers::tbb::ffi::{self, TbbArena};

    /// The stack size of the calling thread, as pthreads reports it.
    fn stack_size() -> usize {
        // SAFETY: `attr` is initialised by `pthread_getattr_np` and destroyed once; the calls
        // concern the calling thread only.
        unsafe {
            let mut attr: libc::pthread_attr_t = std::mem::zeroed();
            assert_eq!(libc::pthread_getattr_np(libc::pthread_self(), &mut attr), 0);
            let mut size = 0usize;
            assert_eq!(libc::pthread_attr_getstacksize(&attr, &mut size), 0);
            libc::pthread_attr_destroy(&mut attr);
            size
        }
    }

    fn fib_join(n: u64) -> u64 {
        if n < 2 {
            return n;
        }
        let (a, b) = ffi::join(|| fib_join(n - 1), || fib_join(n - 2));
        a + b
    }

    fn fib_scope(n: u64) -> u64 {
        if n < 2 {
            return n;
        }
        let (mut a, mut b) = (0, 0);
        ffi::scope(|s| {
            s.spawn(|_| a = fib_scope(n - 1));
            s.spawn(|_| b = fib_scope(n - 2));
        });
        a + b
    }

    #[test]
    fn fib_at_1_and_2_threads() {
        for p in [1, 2] {
            let arena = TbbArena::new(p).unwrap();
            assert_eq!(arena.max_concurrency(), p);
            assert_eq!(arena.execute(|| fib_join(20)), 6765, "join, P = {p}");
            assert_eq!(arena.execute(|| fib_scope(20)), 6765, "scope, P = {p}");
            assert_eq!(arena.fib_native(20), 6765, "native, P = {p}");
        }
    }

    #[test]
    fn zero_threads_is_an_error() {
        assert!(TbbArena::new(0).is_err());
    }

    #[test]
    fn serial_order() {
        let arena = TbbArena::new(1).unwrap();
        let order = Mutex::new(Vec::new());
        let main = arena.execute(|| {
            let here = std::thread::current().id();
            ffi::join(
                || {
                    order
                        .lock()
                        .unwrap()
                        .push(("a", std::thread::current().id()))
                },
                || {
                    order
                        .lock()
                        .unwrap()
                        .push(("b", std::thread::current().id()))
                },
            );
            here
        });
        assert_eq!(*order.lock().unwrap(), [("a", main), ("b", main)]);

        // Spawns run at the scope's end, newest first: oneTBB's owner pops its deque LIFO.
        let order = Mutex::new(Vec::new());
        arena.execute(|| {
            ffi::scope(|s| {
                for i in 0..5 {
                    let order = &order;
                    s.spawn(move |_| order.lock().unwrap().push(i));
                }
                order.lock().unwrap().push(99);
            })
        });
        assert_eq!(*order.lock().unwrap(), [99, 4, 3, 2, 1, 0]);
    }

    #[test]
    fn panics_are_carried_and_the_arena_goes_on() {
        for p in [1, 2] {
            let arena = TbbArena::new(p).unwrap();
            let drops = Arc::new(AtomicUsize::new(0));
            let b_ran = AtomicUsize::new(0);
            expect_panic("in a", || {
                arena.execute(|| {
                    ffi::join(|| panic!("in a"), || b_ran.fetch_add(1, Ordering::SeqCst))
                });
            });
            assert_eq!(b_ran.load(Ordering::SeqCst), 1, "b ran to completion");
            expect_panic("in b", || {
                arena.execute(|| ffi::join(|| fib_join(10), || panic!("in b")));
            });
            expect_panic("in both: a", || {
                ffi::join(|| panic!("in both: a"), || panic!("in both: b"));
            });
            expect_panic("in the root", || arena.execute(|| panic!("in the root")));
            expect_panic("in a spawn", || {
                arena.execute(|| {
                    ffi::scope(|s| {
                        for i in 0..10 {
                            let c = Counted(drops.clone());
                            s.spawn(move |_| {
                                let _c = c;
                                if i == 3 {
                                    panic!("in a spawn");
                                }
                            });
                        }
                    })
                });
            });
            assert_eq!(drops.load(Ordering::SeqCst), 10, "every closure dropped");
            // The body's panic comes back after the tasks have finished.
            let finished = AtomicUsize::new(0);
            expect_panic("in the body", || {
                arena.execute(|| {
                    ffi::scope(|s| {
                        for _ in 0..4 {
                            s.spawn(|_| {
                                std::thread::sleep(Duration::from_millis(5));
                                finished.fetch_add(1, Ordering::SeqCst);
                            });
                        }
                        panic!("in the body");
                    })
                });
            });
            assert_eq!(finished.load(Ordering::SeqCst), 4);
            assert_eq!(arena.execute(|| fib_join(15)), 610, "usable afterwards");
        }
    }

    #[test]
    fn spawned_closures_are_freed() {
        let arena = TbbArena::new(2).unwrap();
        let drops = Arc::new(AtomicUsize::new(0));
        arena.execute(|| {
            ffi::scope(|s| {
                for _ in 0..1000 {
                    let c = Counted(drops.clone());
                    s.spawn(move |_| drop(c));
                }
                // A spawn from a spawned task, on the same scope.
                let c = Counted(drops.clone());
                s.spawn(move |s| s.spawn(move |_| drop(c)));
            })
        });
        assert_eq!(drops.load(Ordering::SeqCst), 1001);
    }

    #[test]
    fn exactly_p_threads() {
        for p in [2, 3] {
            let mut arena = TbbArena::new(p).unwrap();
            let entered = Arc::new(Mutex::new(HashSet::new()));
            let slots = Arc::new(Mutex::new(HashSet::new()));
            let (e, sl) = (entered.clone(), slots.clone());
            arena.observe(move |slot| {
                e.lock().unwrap().insert(std::thread::current().id());
                sl.lock().unwrap().insert(slot);
            });
            let left = AtomicUsize::new(p);
            let seen = Mutex::new(HashSet::new());
            let stacks = Mutex::new(Vec::new());
            let caller = std::thread::current().id();
            arena.execute(|| {
                ffi::scope(|s| {
                    for _ in 0..p {
                        s.spawn(|_| {
                            rendezvous(&left, &seen);
                            let index = ffi::current_thread_index().expect("in the arena");
                            assert!(index < p);
                            if std::thread::current().id() != caller {
                                stacks.lock().unwrap().push(stack_size());
                            }
                        });
                    }
                })
            });
            assert_eq!(seen.lock().unwrap().len(), p, "threads that ran a task");
            arena.unobserve();
            let entered = entered.lock().unwrap();
            assert_eq!(entered.len(), p, "threads the observer saw");
            assert!(entered.contains(&caller), "the caller is one of the P");
            assert!(slots.lock().unwrap().iter().all(|&i| i < p));
            // Workers started for these arenas have the stack asked for (every arena of this
            // process asks for the default).
            for &s in stacks.lock().unwrap().iter() {
                assert!(s >= THREAD_STACK_BYTES, "worker stack {s}");
            }
        }
    }

    #[test]
    fn outside_an_arena() {
        assert_eq!(ffi::current_thread_index(), None);
        assert_eq!(fib_join(12), 144);
    }
}

#[cfg(feature = "openmp")]
mod openmp {
    use super::*;
    use std::sync::PoisonError;
    use stealbench_schedulers::openmp::ffi;

    /// libomp is one runtime per process: these tests run one at a time.
    static OMP: Mutex<()> = Mutex::new(());

    fn lock() -> std::sync::MutexGuard<'static, ()> {
        OMP.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn fib_join(n: u64) -> u64 {
        if n < 2 {
            return n;
        }
        let (a, b) = ffi::join(|| fib_join(n - 1), || fib_join(n - 2));
        a + b
    }

    fn fib_scope(n: u64) -> u64 {
        if n < 2 {
            return n;
        }
        let (mut a, mut b) = (0, 0);
        ffi::scope(|s| {
            s.spawn(|_| a = fib_scope(n - 1));
            s.spawn(|_| b = fib_scope(n - 2));
        });
        a + b
    }

    #[test]
    fn fib_at_1_and_2_threads() {
        let _g = lock();
        for p in [1, 2] {
            assert_eq!(ffi::run(p, || fib_join(20)), (6765, p), "join, P = {p}");
            assert_eq!(ffi::run(p, || fib_scope(20)), (6765, p), "scope, P = {p}");
            assert_eq!(ffi::fib_native(p, 20), 6765, "native, P = {p}");
        }
    }

    #[test]
    fn serial_order() {
        let _g = lock();
        let order = Mutex::new(Vec::new());
        let (main, team) = ffi::run(1, || {
            ffi::join(
                || {
                    order
                        .lock()
                        .unwrap()
                        .push(("a", std::thread::current().id()))
                },
                || {
                    order
                        .lock()
                        .unwrap()
                        .push(("b", std::thread::current().id()))
                },
            );
            std::thread::current().id()
        });
        assert_eq!(team, 1);
        assert_eq!(*order.lock().unwrap(), [("a", main), ("b", main)]);

        // A team of one runs each spawned task at its creation: the serial elision's order.
        let order = Mutex::new(Vec::new());
        ffi::run(1, || {
            ffi::scope(|s| {
                for i in 0..5 {
                    let order = &order;
                    s.spawn(move |_| order.lock().unwrap().push(i));
                    order.lock().unwrap().push(10 + i);
                }
            })
        });
        assert_eq!(*order.lock().unwrap(), [0, 10, 1, 11, 2, 12, 3, 13, 4, 14]);
    }

    #[test]
    fn panics_are_carried_and_the_region_goes_on() {
        let _g = lock();
        for p in [1, 2] {
            let drops = Arc::new(AtomicUsize::new(0));
            let b_ran = AtomicUsize::new(0);
            expect_panic("in a", || {
                ffi::run(p, || {
                    ffi::join(|| panic!("in a"), || b_ran.fetch_add(1, Ordering::SeqCst))
                });
            });
            assert_eq!(b_ran.load(Ordering::SeqCst), 1, "b ran to completion");
            expect_panic("in b", || {
                ffi::run(p, || ffi::join(|| fib_join(10), || panic!("in b")));
            });
            expect_panic("in both: a", || {
                ffi::run(p, || {
                    ffi::join(|| panic!("in both: a"), || panic!("in both: b"));
                });
            });
            expect_panic("in the root", || {
                ffi::run(p, || panic!("in the root"));
            });
            expect_panic("in an entry", || {
                ffi::run_observed(
                    p,
                    |n| {
                        if n == p - 1 {
                            panic!("in an entry")
                        }
                    },
                    || fib_join(5),
                );
            });
            expect_panic("in a spawn", || {
                ffi::run(p, || {
                    ffi::scope(|s| {
                        for i in 0..10 {
                            let c = Counted(drops.clone());
                            s.spawn(move |_| {
                                let _c = c;
                                if i == 3 {
                                    panic!("in a spawn");
                                }
                            });
                        }
                    })
                });
            });
            assert_eq!(drops.load(Ordering::SeqCst), 10, "every closure dropped");
            let finished = AtomicUsize::new(0);
            expect_panic("in the body", || {
                ffi::run(p, || {
                    ffi::scope(|s| {
                        for _ in 0..4 {
                            s.spawn(|_| {
                                std::thread::sleep(Duration::from_millis(5));
                                finished.fetch_add(1, Ordering::SeqCst);
                            });
                        }
                        panic!("in the body");
                    })
                });
            });
            assert_eq!(finished.load(Ordering::SeqCst), 4);
            assert_eq!(ffi::run(p, || fib_join(15)), (610, p), "usable afterwards");
        }
    }

    #[test]
    fn spawned_closures_are_freed() {
        let _g = lock();
        let drops = Arc::new(AtomicUsize::new(0));
        ffi::run(2, || {
            ffi::scope(|s| {
                for _ in 0..1000 {
                    let c = Counted(drops.clone());
                    s.spawn(move |_| drop(c));
                }
                // A spawn from a spawned task, on the same scope: a descendant in the
                // taskgroup.
                let c = Counted(drops.clone());
                s.spawn(move |s| {
                    s.spawn(move |_| {
                        std::thread::sleep(Duration::from_millis(20));
                        drop(c)
                    })
                });
            })
        });
        assert_eq!(drops.load(Ordering::SeqCst), 1001);
    }

    #[test]
    fn exactly_p_threads() {
        let _g = lock();
        for p in [2, 3] {
            let entered = Mutex::new(HashSet::new());
            let nums = Mutex::new(Vec::new());
            let left = AtomicUsize::new(p);
            let seen = Mutex::new(HashSet::new());
            let ((), team) = ffi::run_observed(
                p,
                |n| {
                    entered.lock().unwrap().insert(std::thread::current().id());
                    nums.lock().unwrap().push(n);
                },
                || {
                    assert_eq!(ffi::num_threads(), p);
                    assert!(ffi::in_parallel());
                    ffi::scope(|s| {
                        for _ in 0..p {
                            s.spawn(|_| {
                                rendezvous(&left, &seen);
                                assert!(ffi::thread_num() < p);
                            });
                        }
                    })
                },
            );
            assert_eq!(team, p);
            assert_eq!(entered.lock().unwrap().len(), p, "threads that entered");
            let mut nums = nums.into_inner().unwrap();
            nums.sort_unstable();
            assert_eq!(nums, (0..p).collect::<Vec<_>>());
            assert_eq!(seen.lock().unwrap().len(), p, "threads that ran a task");
        }
    }

    /// The CPUs the calling thread may run on.
    fn affinity() -> Vec<usize> {
        // SAFETY: a zeroed `cpu_set_t` is a valid empty set, filled by the call for the
        // calling thread (pid 0).
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            assert_eq!(
                libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut set),
                0
            );
            (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .collect()
        }
    }

    /// Restricts the calling thread to `cpus`.
    fn pin(cpus: &[usize]) {
        // SAFETY: as in `affinity`; the set is filled before the call.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for &c in cpus {
                libc::CPU_SET(c, &mut set);
            }
            assert_eq!(
                libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set),
                0
            );
        }
    }

    #[test]
    fn the_entry_callback_can_pin() {
        let _g = lock();
        let all = affinity();
        let p = 2;
        // Pin thread n of the team to the n-th allowed CPU; libomp keeps the masks (it binds
        // nothing itself without OMP_PROC_BIND / OMP_PLACES), into the next region too.
        ffi::run_observed(p, |n| pin(&[all[n % all.len()]]), || ());
        let masks = Mutex::new(Vec::new());
        ffi::run_observed(p, |n| masks.lock().unwrap().push((n, affinity())), || ());
        let mut masks = masks.into_inner().unwrap();
        masks.sort();
        let want: Vec<_> = (0..p).map(|n| (n, vec![all[n % all.len()]])).collect();
        // Unpinned again before any assertion, for the other tests.
        ffi::run_observed(p, |_| pin(&all), || ());
        assert_eq!(masks, want);
    }

    #[test]
    fn blocktime_is_set_at_run_time() {
        let _g = lock();
        let before = ffi::blocktime();
        ffi::set_blocktime(0);
        // Under OMP_WAIT_POLICY=active libomp keeps an infinite blocktime.
        if before != i32::MAX {
            assert_eq!(ffi::blocktime(), 0);
            assert_eq!(ffi::run(2, ffi::blocktime), (0, 2), "the team inherits it");
        }
        ffi::set_blocktime(u32::try_from(before).unwrap());
        assert_eq!(ffi::blocktime(), before);
    }

    #[test]
    fn outside_a_region() {
        let _g = lock();
        assert!(!ffi::in_parallel());
        assert_eq!(ffi::thread_num(), 0);
        assert_eq!(ffi::num_threads(), 1);
        assert_eq!(fib_join(12), 144);
        assert_eq!(fib_scope(12), 144);
        assert!(ffi::stack_size() > 0);
    }
}
