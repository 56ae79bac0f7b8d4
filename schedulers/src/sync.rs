//! The atomics, fences and parking of the lock-free protocols: loom's under `cfg(loom)` (the
//! models of `tests/loom.rs`), std's otherwise (plain re-exports: the normal build is unchanged).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{
    AtomicBool, AtomicIsize, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, fence,
};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{
    AtomicBool, AtomicIsize, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, fence,
};
// loom has no compiler fence; under loom the deque never uses it (`deque::owner_fence` and the
// deque's asymmetric pops, which loom never runs: `membarrier` is not available under loom).
pub(crate) use std::sync::atomic::{Ordering, compiler_fence};

/// Parking of the idle workers (`fiberpool::sleep`).
pub(crate) mod thread {
    #[cfg(loom)]
    pub(crate) use loom::thread::{Thread, current, park};
    #[cfg(not(loom))]
    pub(crate) use std::thread::{Thread, current, park};
}

/// Stores `v` through an exclusive reference (std's `get_mut`; loom's atomics have `with_mut`).
#[inline(always)]
pub(crate) fn set_mut(a: &mut AtomicUsize, v: usize) {
    #[cfg(loom)]
    a.with_mut(|x| *x = v);
    #[cfg(not(loom))]
    {
        *a.get_mut() = v;
    }
}

/// Reads `a` through an exclusive reference (std's `get_mut`; loom's atomics have `with_mut`).
#[inline(always)]
pub(crate) fn load_mut(a: &mut AtomicUsize) -> usize {
    #[cfg(loom)]
    let v = a.with_mut(|x| *x);
    #[cfg(not(loom))]
    let v = *a.get_mut();
    v
}
