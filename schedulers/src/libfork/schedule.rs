//! Scheduling: stealing (the victims' deques through a [`StealPass`]), the search for work
//! and the worker thread's loop.

use super::frame::Header;
use super::worker::WorkerState;
use crate::config::IdlePolicy;
use crate::deque::Stolen;
use crate::victims::StealPass;
use std::sync::atomic::Ordering;
use std::thread;

/// Failed steal rounds (one attempt per other worker) before a lazy thief tries to sleep.
pub(super) const ROUNDS_BEFORE_SLEEP: u32 = 64;

impl WorkerState {
    /// One steal attempt from the next victim of `pass`.
    pub(super) fn try_steal(&self, pass: &mut StealPass) -> Option<*mut Header> {
        if self.victims.is_empty() {
            return None;
        }
        let v = pass.next_victim(&self.victims, || self.next_rand());
        // Relaxed: a worker that read a run in progress just before it ended adds at most one
        // more; these are statistics, not synchronization.
        if self.shared.runs.load(Ordering::Relaxed) != 0 {
            self.shared
                .counters
                .attempts
                .add_single_writer(self.index, 1);
        }
        loop {
            match self.shared.thieves_handles[v].steal() {
                Stolen::Entry(e) => {
                    self.shared.counters.steals.add_single_writer(self.index, 1);
                    let f = e[0] as *mut Header;
                    // The thief's half of the split counter: the frame is ours now.
                    // SAFETY: a stolen continuation is live and only its thief touches it.
                    unsafe { (*f).steals.set((*f).steals.get() + 1) };
                    return Some(f);
                }
                Stolen::Empty => return None,
                Stolen::Retry => {}
            }
        }
    }

    /// Looks for work until it finds some (`Some`) or the pool terminates (`None`). Counted
    /// as a thief throughout.
    pub(super) fn find_work(&self) -> Option<*mut Header> {
        let sh = &*self.shared;
        let p = sh.thieves_handles.len() as u32;
        let mut failed = 0u32;
        let mut pass = StealPass::new(&self.victims, self.next_rand());
        loop {
            if sh.terminate.load(Ordering::Relaxed) {
                return None;
            }
            if let Some(r) = sh.take_root() {
                return Some(r);
            }
            if let Some(f) = self.try_steal(&mut pass) {
                return Some(f);
            }
            failed += 1;
            if !failed.is_multiple_of(p.max(1)) {
                std::hint::spin_loop();
                continue;
            }
            let rounds = failed / p.max(1);
            match sh.idle {
                IdlePolicy::Busy => {
                    if rounds.is_multiple_of(16) {
                        thread::yield_now();
                    }
                }
                IdlePolicy::Lazy if rounds >= ROUNDS_BEFORE_SLEEP => {
                    self.sleep();
                    failed = 0;
                    pass = StealPass::new(&self.victims, self.next_rand());
                }
                IdlePolicy::Lazy => thread::yield_now(),
            }
        }
    }

    /// The worker thread's loop: find work, run it, repeat.
    pub(super) fn main_loop(&self) {
        let sh = &*self.shared;
        let g = &sh.groups[self.group];
        g.thieves.fetch_add(1, Ordering::SeqCst);
        while let Some(f) = self.find_work() {
            // Active before no longer a thief, so a last thief deciding whether it may sleep
            // sees this worker active (see `sleep`).
            let first_active = sh.active.fetch_add(1, Ordering::SeqCst) == 0;
            if sh.idle == IdlePolicy::Lazy {
                if g.thieves.fetch_sub(1, Ordering::SeqCst) == 1 {
                    g.wake_one();
                }
                if first_active {
                    // A group whose last thief went to sleep while nobody was active has no
                    // thief now that someone is: wake one of its sleepers. (SeqCst: either that
                    // thief saw `active > 0` and stayed, or its decrement is seen here.)
                    for (i, other) in sh.groups.iter().enumerate() {
                        if i != self.group && other.thieves.load(Ordering::SeqCst) == 0 {
                            other.wake_one();
                        }
                    }
                }
            } else {
                g.thieves.fetch_sub(1, Ordering::SeqCst);
            }
            // SAFETY: `f` is a stolen continuation or a new root, ours to resume.
            unsafe { self.run(f) };
            g.thieves.fetch_add(1, Ordering::SeqCst);
            sh.active.fetch_sub(1, Ordering::SeqCst);
        }
        g.thieves.fetch_sub(1, Ordering::SeqCst);
    }
}
