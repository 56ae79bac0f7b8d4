//! The meeting point of a forked task and its continuation after they parted ([`Rendezvous`]),
//! and the per-worker pool that recycles them ([`RvPool`]).
//!
//! A fork of a scope task (a spawn or a future) runs the child at once on a new fiber while
//! the parent's continuation waits in the deque. Usually the child pops the continuation back
//! at its end and hands its result over on the same thread: nothing is shared, no atomic
//! instruction is needed, and the rendezvous is not touched. If someone else took the
//! continuation, the two sides *parted*: each arrives at the rendezvous once, in either order,
//! with a word ([`Rendezvous::arrive`]). The first arrival leaves its word and goes on; the
//! second finds the first's word and finishes the hand-over. What the words mean (the child's
//! boxed result, the parent's result cell) is the caller's.
//!
//! Every fiber owns a rendezvous (`FiberNode::rv`), which serves the forks it runs as the
//! child, so a fork takes none. A child that arrives second keeps its rendezvous ([`reset`]);
//! one that arrives first leaves it to its parent, who recycles it into its worker's pool
//! ([`RvPool`]), and takes another from its own worker's pool.
//!
//! [`reset`]: Rendezvous::reset

use crate::sync::{AtomicU64, AtomicUsize, Ordering, set_mut};

/// See the module documentation. `state` is 0 until the first arrival, then its word (never
/// 0). `child_end` is the mark of the child's last strand ([`super::deviation`]), written by
/// the child before it arrives and read by the parent only if the child arrived first.
#[derive(Debug, Default)]
pub struct Rendezvous {
    state: AtomicUsize,
    child_end: AtomicU64,
}

impl Rendezvous {
    /// One side arrives with `word` (not 0). Returns `None` if it is the first (the other side
    /// will take `word` and recycle the rendezvous), or the first side's word if it is the
    /// second: then it owns the rendezvous and must recycle it.
    ///
    /// AcqRel: the first side's writes before its arrival are visible to the second side after
    /// its arrival.
    ///
    /// # Safety
    /// Each side arrives at most once, while the rendezvous is alive (the second arrival is
    /// the last use before it is recycled).
    #[inline]
    pub unsafe fn arrive(&self, word: usize) -> Option<usize> {
        debug_assert!(word != 0);
        match self.state.swap(word, Ordering::AcqRel) {
            0 => None,
            first => Some(first),
        }
    }

    /// The child, before it arrives: the mark of its last strand's end. Relaxed: the arrival's
    /// swap publishes it.
    #[inline]
    pub fn set_child_end(&self, mark: u64) {
        self.child_end.store(mark, Ordering::Relaxed);
    }

    /// The mark the child left before it arrived, for a parent that arrived second. Relaxed:
    /// the parent's arrival, which found the child's word, ordered the child's store before
    /// this load.
    #[inline]
    pub fn child_end(&self) -> u64 {
        self.child_end.load(Ordering::Relaxed)
    }

    /// Makes a rendezvous that was used ready for the next fork.
    fn clear(&mut self) {
        set_mut(&mut self.state, 0);
    }

    /// As `clear`, for the second side, which keeps the rendezvous it arrived at (a fiber's
    /// own, see `FiberNode::rv`). Relaxed: the next fork that uses it reaches it through this
    /// thread (the fiber's next fork starts here, or after a switch that orders this store).
    ///
    /// # Safety
    /// Both sides arrived, and the caller is the only one left that uses it.
    #[inline]
    pub unsafe fn reset(&self) {
        self.state.store(0, Ordering::Relaxed);
    }
}

/// A worker's free rendezvous. Not shared: the worker's thread is its only user.
#[derive(Debug)]
pub struct RvPool {
    // Boxed: a rendezvous is handed out by address and must not move when the vector grows.
    #[allow(clippy::vec_box)]
    free: Vec<Box<Rendezvous>>,
}

/// Free rendezvous a worker keeps; more are freed.
const RV_CAP: usize = 256;

impl RvPool {
    /// An empty pool.
    pub fn new() -> Self {
        RvPool {
            free: Vec::with_capacity(RV_CAP),
        }
    }

    /// A rendezvous in its initial state.
    #[inline]
    pub fn take(&mut self) -> *const Rendezvous {
        Box::into_raw(self.free.pop().unwrap_or_default())
    }

    /// Takes back a rendezvous that neither side will use again.
    ///
    /// # Safety
    /// `rv` came from [`RvPool::take`] (of any worker) and is not used by anyone any more.
    #[inline]
    pub unsafe fn give(&mut self, rv: *const Rendezvous) {
        // SAFETY: by the contract, `rv` is a box given up by `take` and no longer shared.
        let mut b = unsafe { Box::from_raw(rv as *mut Rendezvous) };
        if self.free.len() < RV_CAP {
            b.clear();
            self.free.push(b);
        }
    }
}

impl Default for RvPool {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_arrival_gets_the_first_word() {
        let mut pool = RvPool::new();
        let rv = pool.take();
        // SAFETY: each side arrives once, while `rv` is alive.
        unsafe {
            assert_eq!((*rv).arrive(7), None);
            assert_eq!((*rv).arrive(9), Some(7));
            pool.give(rv);
        }
        let again = pool.take();
        // SAFETY: as above; the recycled rendezvous starts empty.
        unsafe {
            assert_eq!((*again).arrive(3), None);
            assert_eq!((*again).arrive(4), Some(3));
            pool.give(again);
        }
    }

    #[test]
    fn arrivals_race_from_two_threads() {
        for _ in 0..1000 {
            let rv = RvPool::new().take() as usize;
            let other = std::thread::spawn(move || {
                // SAFETY: this side arrives once; the rendezvous is freed only by the second.
                unsafe { (*(rv as *const Rendezvous)).arrive(1) }
            });
            // SAFETY: as above.
            let mine = unsafe { (*(rv as *const Rendezvous)).arrive(2) };
            let theirs = other.join().unwrap();
            // Exactly one side is second and sees the other's word.
            match (mine, theirs) {
                (Some(1), None) | (None, Some(2)) => {}
                r => panic!("bad outcome {r:?}"),
            }
            // SAFETY: both arrived; nobody uses it any more.
            unsafe { RvPool::new().give(rv as *const Rendezvous) };
        }
    }
}
