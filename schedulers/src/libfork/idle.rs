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
