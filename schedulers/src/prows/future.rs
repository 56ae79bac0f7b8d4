//! A future's completion and the list of what is suspended on it (Algorithm 1's
//! `f.suspended`), in one word. `prows` records the deques suspended at touches of the future
//! (`Arc<Dq>`); the list is generic over its entry `T` so that the loom models
//! (`tests/loom.rs`) check this code with a payload of their own, and it takes its atomics
//! from `crate::sync`.
//!
//! The word is `DONE`, or the last recorded entry's [`Waiter`] (null: none yet), whose `next`
//! links the earlier ones. A suspension pushes with a compare-and-swap unless the word is
//! `DONE`; the put swaps in `DONE` and takes the whole list, so a put nobody waits for costs
//! one swap. This is the protocol of the fibers' signal (`fiberpool/signal.rs`), on allocated
//! nodes holding an entry rather than on the fiber nodes themselves. There is no
//! ABA problem: nodes are only ever pushed, and the list is taken out once (by the put, or by
//! the drop of a future never put).
//!
//! # Orderings
//!
//! Two things cross threads through the word, each a Release/Acquire pair:
//!
//! * an entry, and what its adder wrote before [`FutState::add_suspended`] (a deque's
//!   suspension), to whoever takes it out: the adder's successful compare-and-swap is Release,
//!   the put's swap ([`FutState::complete`]) is Acquire. With several adders the put reads the
//!   last one's node; the earlier ones' are visible too, because each later compare-and-swap is
//!   a read-modify-write, which continues the release sequence of the earlier adder's store;
//! * the future's value, written before the put, to whoever sees `DONE`: the put's swap is
//!   Release, and [`FutState::is_done`] and an add that finds `DONE` (its first load, or its
//!   failed compare-and-swap) are Acquire, so a touch turned away resumes with the value
//!   visible.

use crate::sync::{AtomicUsize, Ordering, load_mut};
use std::marker::PhantomData;

/// See the module documentation.
pub struct FutState<T> {
    state: AtomicUsize,
    /// The list's nodes own `T`s.
    _entries: PhantomData<T>,
}

/// One entry in a future's list.
struct Waiter<T> {
    entry: T,
    next: *mut Waiter<T>,
}

/// The state word of a future that was put (not a `Waiter` address: those are aligned).
const DONE: usize = 1;

impl<T> FutState<T> {
    /// The state of a future, done already if `done`, with nothing suspended on it.
    pub fn new(done: bool) -> Self {
        FutState {
            state: AtomicUsize::new(if done { DONE } else { 0 }),
            _entries: PhantomData,
        }
    }

    /// Was the future put? Acquire: pairs with the Release of the put's swap, so the value
    /// written before the put is visible.
    #[inline]
    pub fn is_done(&self) -> bool {
        self.state.load(Ordering::Acquire) == DONE
    }

    /// Records `e` as suspended on this future; gives it back if the future is done (the
    /// value is then visible: the touch resumes at once).
    pub fn add_suspended(&self, e: T) -> Result<(), T> {
        let node = Box::into_raw(Box::new(Waiter {
            entry: e,
            next: std::ptr::null_mut(),
        }));
        // Acquire: if this reads `DONE`, pairs with the Release of the put's swap (the value
        // is visible to the caller). Reading a node needs no ordering: it is only linked.
        let mut cur = self.state.load(Ordering::Acquire);
        loop {
            if cur == DONE {
                // SAFETY: `node` came from `Box::into_raw` above and was never published.
                return Err(unsafe { Box::from_raw(node) }.entry);
            }
            // SAFETY: `node` is unpublished, so it is ours alone.
            unsafe { (*node).next = cur as *mut Waiter<T> };
            // Success, Release: pairs with the Acquire of the put's swap (or the exclusive
            // access of the drop), which then sees the node and what the caller wrote before
            // the call. No Acquire: the node read as `cur` is linked, not read.
            // Failure, Acquire: as the first load, for a `DONE` read here.
            match self.state.compare_exchange_weak(
                cur,
                node as usize,
                Ordering::Release,
                Ordering::Acquire,
            ) {
                Ok(_) => return Ok(()),
                Err(now) => cur = now,
            }
        }
    }

    /// The put: marks the future done and returns the entries suspended on it (the most
    /// recent first). Called at most once.
    pub fn complete(&self) -> Vec<T> {
        // Release: pairs with the Acquire of `is_done` and of an add that reads `DONE` (the
        // value written before the put is visible there). Acquire: pairs with the Release of
        // each add's compare-and-swap (the nodes and what their adders wrote are visible here).
        let list = self.state.swap(DONE, Ordering::AcqRel);
        assert_ne!(list, DONE, "a future was put twice");
        // SAFETY: the swap took the whole list out; its nodes are ours now.
        unsafe { take_list(list as *mut Waiter<T>) }
    }
}

/// The entries of a list of waiters, freeing the nodes.
///
/// # Safety
/// The nodes came from `add_suspended`, and nobody else holds the list.
unsafe fn take_list<T>(mut p: *mut Waiter<T>) -> Vec<T> {
    let mut v = Vec::new();
    while !p.is_null() {
        // SAFETY: by the contract.
        let w = unsafe { Box::from_raw(p) };
        p = w.next;
        v.push(w.entry);
    }
    v
}

impl<T> Drop for FutState<T> {
    fn drop(&mut self) {
        // No ordering: `&mut self` is exclusive, so every add happened before (whoever handed
        // the state over to this thread ordered it).
        let s = load_mut(&mut self.state);
        if s != DONE && s != 0 {
            // Never put (its task panicked out of the scope, say): free the list.
            // SAFETY: the state is ours alone, and the list was never taken out.
            drop(unsafe { take_list(s as *mut Waiter<T>) });
        }
    }
}

// SAFETY: the state owns the `T`s of its list; a node is touched only by its adder (before the
// compare-and-swap publishes it) and by whoever takes the whole list out (the put's swap, or
// the drop), so an entry only moves between threads, as a `T: Send` may.
unsafe impl<T: Send> Send for FutState<T> {}
// SAFETY: through `&FutState` an entry only moves from its adder's thread to the put's (see
// `Send`); no `&T` is ever shared.
unsafe impl<T: Send> Sync for FutState<T> {}

#[cfg(test)]
mod tests {
    use super::FutState;
    use std::sync::Arc;

    /// The list holds every entry added before the put, gives back one added after it, and
    /// drops its entries whether or not the future was put.
    #[test]
    fn records_entries_until_put() {
        let (a, b) = (Arc::new(1), Arc::new(2));
        let f = FutState::new(false);
        assert!(!f.is_done());
        assert!(f.add_suspended(Arc::clone(&a)).is_ok());
        assert!(f.add_suspended(Arc::clone(&b)).is_ok());
        let list = f.complete();
        assert!(f.is_done());
        assert_eq!(list.len(), 2);
        assert!(list.iter().any(|d| Arc::ptr_eq(d, &a)));
        assert!(list.iter().any(|d| Arc::ptr_eq(d, &b)));
        let late = f
            .add_suspended(Arc::clone(&a))
            .expect_err("suspended on a done future");
        assert!(Arc::ptr_eq(&late, &a));
        drop((late, list, f));
        assert_eq!(Arc::strong_count(&a), 1);
        let g = FutState::new(false);
        assert!(g.add_suspended(Arc::clone(&b)).is_ok());
        drop(g);
        assert_eq!(Arc::strong_count(&b), 1, "an unput future leaked its list");
        assert!(FutState::<Arc<i32>>::new(true).is_done());
    }
}
