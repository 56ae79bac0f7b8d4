//! The idle policies: busy thieves, or the lazy pool's per-node groups that keep one thief
//! awake while work may appear (the module docs of [`super`], "Pools").

use super::worker::WorkerState;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};

/// The workers of one NUMA node, as the lazy pool counts them: while any worker of the pool
/// is active, each group keeps at least one thief awake (see the module's "Pools").
pub(super) struct Group {
    /// Workers of this group awake and looking for work.
    pub(super) thieves: AtomicUsize,
    /// Workers of this group asleep (or about to be).
    pub(super) sleepers: AtomicUsize,
    /// Bumped by every wake-up of this group; its sleepers wait for it to change.
    pub(super) epoch: Mutex<u64>,
    pub(super) wake: Condvar,
}

impl Group {
    pub(super) fn new() -> Group {
        Group {
            thieves: AtomicUsize::new(0),
            sleepers: AtomicUsize::new(0),
            epoch: Mutex::new(0),
            wake: Condvar::new(),
        }
    }

    /// Wakes one sleeper of the group, if any.
    pub(super) fn wake_one(&self) {
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            let mut e = self.epoch.lock().unwrap_or_else(PoisonError::into_inner);
            *e += 1;
            self.wake.notify_one();
        }
    }

    pub(super) fn wake_all(&self) {
        let mut e = self.epoch.lock().unwrap_or_else(PoisonError::into_inner);
        *e += 1;
        self.wake.notify_all();
    }
}

impl WorkerState {
    /// A lazy thief that found nothing: sleeps unless it is its group's last thief while a
    /// worker is active (then it stays a thief), until woken.
    pub(super) fn sleep(&self) {
        let sh = &*self.shared;
        let g = &sh.groups[self.group];
        let seen = *g.epoch.lock().unwrap_or_else(PoisonError::into_inner);
        g.sleepers.fetch_add(1, Ordering::SeqCst);
        if g.thieves.fetch_sub(1, Ordering::SeqCst) == 1 && sh.active.load(Ordering::SeqCst) > 0 {
            // The group's last thief while work may appear: stay awake.
            g.thieves.fetch_add(1, Ordering::SeqCst);
            g.sleepers.fetch_sub(1, Ordering::SeqCst);
            return;
        }
        // A root submitted, or a first worker turned active, after the epoch was read bumps
        // it, so the wait below sees it.
        let mut e = g.epoch.lock().unwrap_or_else(PoisonError::into_inner);
        if *e == seen && !sh.terminate.load(Ordering::SeqCst) && !sh.injected.load(Ordering::SeqCst)
        {
            if sh.runs.load(Ordering::Relaxed) != 0 {
                sh.counters.sleeps.add_single_writer(self.index, 1);
            }
            while *e == seen {
                e = g.wake.wait(e).unwrap_or_else(PoisonError::into_inner);
            }
        }
        drop(e);
        g.sleepers.fetch_sub(1, Ordering::SeqCst);
        g.thieves.fetch_add(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::super::numa::groups_of;
    use super::super::numa::tests::two_nodes;
    use super::super::pool::LibforkPool;
    use crate::api::{AsyncForkJoin, AsyncWorker};
    use crate::config::{IdlePolicy, PoolConfig};
    use std::future::Future;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::thread;
    use std::time::{Duration, Instant};

    /// Two fake nodes of two CPUs each (two_nodes), 4 lazy workers: nominally workers 0, 1 on
    /// node 0 and 2, 3 on node 1.
    fn lazy_on_two_nodes() -> LibforkPool {
        let config = PoolConfig {
            idle: IdlePolicy::Lazy,
            ..PoolConfig::with_workers(4)
        };
        assert_eq!(groups_of(&config, &two_nodes()), [0, 0, 1, 1]);
        LibforkPool::start_on(&config, &two_nodes()).unwrap()
    }

    // The `+ Send` bound is what the front-end needs of a recursive task; `async fn` cannot
    // state it.
    #[allow(clippy::manual_async_fn)]
    fn fib<'s, C: AsyncWorker<'s>>(c: C, n: u64) -> impl Future<Output = u64> + Send + 's {
        async move {
            if n < 2 {
                return n;
            }
            let (a, b) = c.join(move |c| fib(c, n - 1), move |c| fib(c, n - 2)).await;
            a + b
        }
    }

    #[test]
    fn lazy_pool_keeps_a_thief_awake_in_every_group() {
        let pool = lazy_on_two_nodes();
        let release = AtomicBool::new(false);
        let state = |pool: &LibforkPool| {
            let g = &pool.shared.groups;
            let thieves: Vec<usize> = g.iter().map(|g| g.thieves.load(Ordering::SeqCst)).collect();
            let sleepers: usize = g.iter().map(|g| g.sleepers.load(Ordering::SeqCst)).sum();
            (thieves, sleepers)
        };
        thread::scope(|s| {
            // One worker stays active (its root spins) while the other three look for work and
            // give up: its group's other worker is that group's last thief and stays awake, and
            // the other group keeps one of its two awake: thieves [1, 1], one sleeper. (A
            // group-blind pool keeps one thief in all, two sleepers; no thief kept, three.) A
            // thief that stays awake passes through `sleep` now and then, so the state is
            // sampled and must be the usual one.
            let spinner = s.spawn(|| {
                pool.run_async(|_| async {
                    while !release.load(Ordering::Acquire) {
                        std::hint::spin_loop();
                    }
                    7
                })
            });
            let deadline = Instant::now() + Duration::from_secs(20);
            while pool.shared.active.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
                thread::sleep(Duration::from_millis(1));
            }
            // Time for the thieves to give up: until the state is first the usual one (on a
            // loaded machine a thief may wait long for a core to give up on).
            while state(&pool) != (vec![1, 1], 1) && Instant::now() < deadline {
                thread::sleep(Duration::from_millis(10));
            }
            let samples: Vec<(Vec<usize>, usize)> = (0..200)
                .map(|_| {
                    thread::sleep(Duration::from_millis(2));
                    state(&pool)
                })
                .collect();
            release.store(true, Ordering::Release);
            assert_eq!(spinner.join().unwrap(), 7);
            let usual = samples.iter().filter(|s| **s == (vec![1, 1], 1)).count();
            assert!(
                usual > samples.len() / 2,
                "thieves [1, 1] and one sleeper in only {usual} of {} samples: {:?}",
                samples.len(),
                &samples[..5]
            );
        });
        // And the pool still works, in both groups.
        for _ in 0..50 {
            assert_eq!(pool.run_async(|c| fib(c, 18)), 2584);
        }
    }
}
