//! Idle workers' sleep and wake-up: the Dekker handshake between a worker going to sleep and a
//! push ([`Sleepers`]), and the shutdown.
//!
//! The sleeper announces itself (`count += 1`, its flag set), issues the *heavy* side of the
//! asymmetric fence of [`crate::deque`], and looks at the deques once more before it parks; a
//! push writes the deque, issues the *light* side, and wakes one sleeper if `count > 0`
//! ([`Sleepers::notify`]). The pair acts as two SeqCst fences, so either the sleeper sees the
//! new entry or the pusher sees the sleeper: no lost wake-up. A waker clears the sleeper's flag
//! before it unparks it, so a sleeper woken spuriously parks again. `tests/loom.rs` models it.
//! The handshake's fence pair is the pool's [`FenceMode`]'s whatever the deques' current modes
//! (a push's light fence stays a compiler fence in symmetric mode too; both are full fences in
//! the `fenced` mode), and the pool counts the heavy one in its `heavy_fences`.

use crate::config::FenceMode;
use crate::deque;
use crate::sync::thread::{self, Thread};
use crate::sync::{AtomicBool, AtomicUsize, Ordering, fence};
use std::sync::OnceLock;

/// The sleep state of a pool's workers (see the module documentation).
pub struct Sleepers {
    /// How many workers are (about to go) asleep.
    count: AtomicUsize,
    /// Per worker: asleep (or about to be), cleared by the waker.
    sleeping: Box<[AtomicBool]>,
    /// The worker threads, to unpark them (each sets its own: [`Sleepers::register`]).
    threads: Box<[OnceLock<Thread>]>,
    /// Set when the pool is dropped.
    terminate: AtomicBool,
    /// Whether the handshake's heavy fence is a `membarrier` (the pool's fence mode).
    membarrier: bool,
}

impl Sleepers {
    /// The sleep state of `p` workers, none asleep, in the default fence mode.
    pub fn new(p: usize) -> Self {
        Sleepers::for_mode(p, FenceMode::default())
    }

    /// The sleep state of `p` workers, none asleep, whose handshake uses the fence pair of
    /// `mode` as this machine applies it (the pushes' light fence must be the same mode's).
    pub fn for_mode(p: usize, mode: FenceMode) -> Self {
        Sleepers {
            membarrier: mode.applied().uses_membarrier(),
            count: AtomicUsize::new(0),
            sleeping: (0..p).map(|_| AtomicBool::new(false)).collect(),
            threads: (0..p).map(|_| OnceLock::new()).collect(),
            terminate: AtomicBool::new(false),
        }
    }

    /// The number of workers.
    pub fn workers(&self) -> usize {
        self.sleeping.len()
    }

    /// Worker `index`, on its thread at its start: makes it wakeable.
    pub fn register(&self, index: usize) {
        let _ = self.threads[index].set(thread::current());
    }

    /// Has the pool been dropped? (Acquire.)
    #[inline]
    pub fn terminating(&self) -> bool {
        self.terminate.load(Ordering::Acquire)
    }

    /// Wakes one sleeping worker, if any. Called after a push and the light side of the fence
    /// (or a SeqCst fence).
    #[inline]
    pub fn notify(&self) {
        if self.count.load(Ordering::Relaxed) > 0 {
            self.wake_one();
        }
    }

    #[cold]
    fn wake_one(&self) {
        for (i, s) in self.sleeping.iter().enumerate() {
            if s.load(Ordering::Relaxed) && s.swap(false, Ordering::AcqRel) {
                if let Some(t) = self.threads[i].get() {
                    t.unpark();
                }
                return;
            }
        }
    }

    /// Marks the pool terminating and wakes every worker (the pool's drop).
    pub fn terminate(&self) {
        self.terminate.store(true, Ordering::SeqCst);
        // A full fence, the other half of the sleeper's heavy one, between the store and the
        // look at the registered threads: of a worker registering (then going to sleep) and
        // this shutdown, either the sleeper sees `terminate` or we see its thread and unpark
        // it. Without it, C11 lets both miss (the SeqCst store does not order the later load
        // of the `OnceLock`): the loom model found a sleeper that slept through the shutdown.
        fence(Ordering::SeqCst);
        for (i, s) in self.sleeping.iter().enumerate() {
            s.store(false, Ordering::Release);
            if let Some(t) = self.threads[i].get() {
                t.unpark();
            }
        }
    }

    /// Worker `index`, which found nothing to do: sleeps unless `work_visible` (its last look
    /// at the deques, after the heavy fence) finds something or the pool is terminating, until
    /// a push or the shutdown wakes it. `slept` runs before it parks.
    #[cold]
    pub fn sleep(&self, index: usize, work_visible: impl FnOnce() -> bool, slept: impl FnOnce()) {
        let me = &self.sleeping[index];
        self.count.fetch_add(1, Ordering::SeqCst);
        me.store(true, Ordering::SeqCst);
        // Pairs with the light fence after a push: see the module documentation.
        deque::heavy(self.membarrier);
        if !work_visible() && !self.terminate.load(Ordering::SeqCst) {
            slept();
            while me.load(Ordering::Acquire) && !self.terminate.load(Ordering::Acquire) {
                thread::park();
            }
        }
        me.store(false, Ordering::Release);
        self.count.fetch_sub(1, Ordering::SeqCst);
    }
}
