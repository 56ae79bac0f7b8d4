//! A one-shot signal with a lock-free list of parked fibers: the join, scope and future latch.
//!
//! The state is one word: `EMPTY` (not set, nobody waiting), `SET`, or a pointer to the most
//! recently parked [`FiberNode`], whose `next` links the earlier ones. Parking pushes with a
//! CAS unless the state is `SET`; setting swaps in `SET` and takes the whole list. There is no
//! ABA problem: nodes are only ever pushed, and the list is taken out once.

use super::Policy;
use super::job::{FiberBox, FiberNode};
use crate::sync::{AtomicUsize, Ordering};
use std::marker::PhantomData;

const EMPTY: usize = 0;
const SET: usize = 1;

/// See the module documentation.
pub struct Signal<P: Policy> {
    state: AtomicUsize,
    /// The parked nodes are `FiberNode<P>`s.
    _policy: PhantomData<fn() -> P>,
}

impl<P: Policy> Default for Signal<P> {
    /// [`Signal::new`].
    fn default() -> Self {
        Self::new()
    }
}

impl<P: Policy> Signal<P> {
    /// A signal that is not set and has no waiters.
    pub fn new() -> Self {
        Signal {
            state: AtomicUsize::new(EMPTY),
            _policy: PhantomData,
        }
    }

    /// A signal that is set already.
    pub fn new_set() -> Self {
        Signal {
            state: AtomicUsize::new(SET),
            _policy: PhantomData,
        }
    }

    /// Has [`Signal::set`] happened? (Acquire: what the setter wrote before is visible.)
    #[inline]
    pub fn is_set(&self) -> bool {
        self.state.load(Ordering::Acquire) == SET
    }

    /// Is some fiber parked on this signal (not set yet)? Acquire: what the parked fibers'
    /// side wrote before it parked them is visible.
    #[inline]
    pub fn has_waiter(&self) -> bool {
        let s = self.state.load(Ordering::Acquire);
        s != EMPTY && s != SET
    }

    /// Parks the suspended fiber `f` on this signal. Returns it back if the signal is already
    /// set (the caller resumes it at once); otherwise it now belongs to the signal, and the
    /// caller must not touch `self` again (the fiber may be resumed, and the signal freed, at
    /// any moment).
    pub fn park(&self, f: FiberBox<P>) -> Option<FiberBox<P>> {
        let node = Box::into_raw(f);
        let mut cur = self.state.load(Ordering::Acquire);
        loop {
            if cur == SET {
                // SAFETY: `node` came from `Box::into_raw` above and was never published.
                return Some(unsafe { Box::from_raw(node) });
            }
            // SAFETY: `node` is unpublished, so we own it exclusively.
            unsafe { (*node).next = cur as *mut FiberNode<P> };
            match self.state.compare_exchange_weak(
                cur,
                node as usize,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return None,
                Err(now) => cur = now,
            }
        }
    }

    /// Sets the signal and hands every parked fiber to `ready`, returning how many.
    ///
    /// # Safety
    ///
    /// Called at most once per signal. `self` must be alive at the call; it is not touched after
    /// the swap that sets it (a waiter seeing `SET` may free it at once).
    pub unsafe fn set(&self, mut ready: impl FnMut(FiberBox<P>)) -> usize {
        let mut p = self.state.swap(SET, Ordering::AcqRel) as *mut FiberNode<P>;
        debug_assert!(p as usize != SET, "a signal was set twice");
        let mut n = 0;
        while !p.is_null() {
            // SAFETY: the swap took the whole list out; every node was published by `park`
            // from a `Box` and is now owned by us alone.
            let mut f = unsafe { Box::from_raw(p) };
            p = std::mem::replace(&mut f.next, std::ptr::null_mut());
            ready(f);
            n += 1;
        }
        n
    }
}
