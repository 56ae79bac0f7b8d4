//! Fiber stacks: memory-mapped stacks with a guard page, kept in a per-worker pool.
//!
//! A [`Stack`] is one anonymous private mapping of `guard + size` bytes. Its lowest page is
//! `PROT_NONE` (the guard page), so running off the end of the stack faults instead of
//! overwriting the neighbouring memory. The mapping uses `MAP_NORESERVE`: a stack of several
//! MiB costs address space only, and physical pages are committed when first touched.
//!
//! A [`StackPool`] is the free list of one worker plus counters shared by every pool of a
//! runtime ([`StackCounters`]): stacks in use (taken and not yet given back), stacks mapped and
//! their high-water mark, and how many stacks were mapped since the last reset.
//!
//! # Invariants
//!
//! * A `Stack` owns its mapping: `[low, low + len)` is mapped, `low` is page aligned, the page
//!   at `low` is the guard, and `[low + guard, low + len)` is readable and writable. The mapping
//!   is unmapped exactly once, when the `Stack` is dropped.
//! * Every stack in a pool's free list has the pool's usable size and is not used by any
//!   fiber. A free list holds at most `cap` stacks; surplus stacks are unmapped.
//! * `in_use` = stacks handed out by [`StackPool::take`] (or [`StackPool::note_reused`])
//!   across all pools sharing the counters, minus stacks handed back by [`StackPool::give`] (or
//!   kept by the caller on an idle fiber: a bump of the `given` cell of
//!   [`StackPool::own_cells`]). `live` = stacks mapped by the pools and not unmapped =
//!   `in_use` + the stacks in all free lists (a pool's free stacks are unmapped when it
//!   drops); `high_water` is the largest `live` since the last
//!   [`StackCounters::reset_high_water`], so at least the largest `in_use`.
//!   A stack taken from one worker's pool may be given back to another worker's pool (fibers
//!   migrate), so the counters are shared and the free lists are not.

use crate::overflow::Guard;
use crate::stats::PerWorker;
use std::io;
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// The size of a memory page on this machine.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p <= 0 { 4096 } else { p as usize }
}

/// One fiber stack: a private anonymous mapping whose lowest page is a guard page.
#[derive(Debug)]
pub struct Stack {
    low: NonNull<u8>,
    len: usize,
    guard: usize,
    /// The guard page's registration with the overflow reporter ([`crate::overflow`]).
    watch: Option<Guard>,
}

// SAFETY: a `Stack` is the unique owner of its mapping; moving it to another thread moves that
// ownership, and the memory is not tied to the thread that mapped it.
unsafe impl Send for Stack {}

impl Stack {
    /// Maps a stack with at least `size` usable bytes (rounded up to whole pages) below its top,
    /// plus one guard page below them.
    pub fn new(size: usize) -> io::Result<Stack> {
        let page = page_size();
        let usable = size.max(page).div_ceil(page) * page;
        let len = usable + page;
        // SAFETY: an anonymous mapping at an address chosen by the kernel touches no existing
        // memory; the result is checked against MAP_FAILED.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let low = NonNull::new(p.cast::<u8>()).ok_or_else(|| io::Error::other("mmap gave 0"))?;
        let mut stack = Stack {
            low,
            len,
            guard: page,
            watch: None,
        };
        // SAFETY: `[low, low + page)` is the first page of the mapping we own.
        let rc = unsafe { libc::mprotect(p, page, libc::PROT_NONE) };
        if rc != 0 {
            return Err(io::Error::last_os_error()); // `stack` is dropped: unmapped.
        }
        stack.watch = Some(Guard::register(p as usize, page));
        Ok(stack)
    }

    /// The highest address (exclusive): the stack grows down from here.
    pub fn top(&self) -> usize {
        self.low.as_ptr() as usize + self.len
    }

    /// The lowest usable address (just above the guard page).
    pub fn bottom(&self) -> usize {
        self.low.as_ptr() as usize + self.guard
    }

    /// Usable bytes between the guard page and the top.
    pub fn usable_size(&self) -> usize {
        self.len - self.guard
    }

    /// Is `addr` inside the usable part of this stack?
    pub fn contains(&self, addr: usize) -> bool {
        addr >= self.bottom() && addr < self.top()
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // Unregistered before the pages go (they may be mapped again for something else).
        if let Some(g) = self.watch.take() {
            g.release();
        }
        // SAFETY: the mapping `[low, low + len)` is owned by this `Stack` and no fiber runs on
        // it any more (a fiber owns its stack and gives it back only once finished).
        unsafe {
            libc::munmap(self.low.as_ptr().cast(), self.len);
        }
    }
}

/// Counters shared by every [`StackPool`] of one runtime.
///
/// Takes and gives are counted per worker, by that worker only (no shared cache line on the
/// fast path), so [`StackCounters::in_use`] is exact whenever no worker is taking or giving,
/// e.g. between runs. Mapping and unmapping are rare and counted globally; the high-water mark
/// is that of *mapped* stacks, which bounds the stacks in use at any moment from above (in use
/// plus those in the free lists, at most `cap` per worker).
#[derive(Debug)]
pub struct StackCounters {
    taken: PerWorker,
    given: PerWorker,
    live: AtomicUsize,
    high_water: AtomicUsize,
    mapped: AtomicUsize,
}

impl StackCounters {
    /// Counters for `workers` pools.
    pub fn new(workers: usize) -> StackCounters {
        StackCounters {
            taken: PerWorker::new(workers),
            given: PerWorker::new(workers),
            live: AtomicUsize::new(0),
            high_water: AtomicUsize::new(0),
            mapped: AtomicUsize::new(0),
        }
    }
    /// Stacks taken from a pool and not given back (exact when no pool is in use).
    pub fn in_use(&self) -> usize {
        let given = self.given.sum();
        (self.taken.sum().saturating_sub(given)) as usize
    }
    /// Stacks mapped right now (in use or in a free list).
    pub fn mapped_now(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }
    /// The most stacks mapped at once since the last reset: an upper bound of the most in use.
    pub fn high_water(&self) -> usize {
        self.high_water.load(Ordering::Relaxed)
    }
    /// Stacks mapped since the last reset (free-list misses).
    pub fn mapped(&self) -> usize {
        self.mapped.load(Ordering::Relaxed)
    }
    /// Sets the high-water mark to the stacks mapped now and the mapped count to zero. Call it
    /// between runs.
    pub fn reset_high_water(&self) {
        self.high_water.store(self.mapped_now(), Ordering::Relaxed);
        self.mapped.store(0, Ordering::Relaxed);
    }
}

/// One worker's free list of stacks of one size, with counters shared across the runtime.
#[derive(Debug)]
pub struct StackPool {
    free: Vec<Stack>,
    size: usize,
    cap: usize,
    worker: usize,
    counters: Arc<StackCounters>,
}

impl StackPool {
    /// An empty pool of worker `worker` handing out stacks of `size` usable bytes, keeping at
    /// most `cap` free ones.
    pub fn new(size: usize, cap: usize, worker: usize, counters: Arc<StackCounters>) -> StackPool {
        StackPool {
            free: Vec::with_capacity(cap),
            size,
            cap,
            worker,
            counters,
        }
    }

    /// A free stack, mapping a new one if the free list is empty.
    #[inline]
    pub fn take(&mut self) -> io::Result<Stack> {
        let s = match self.free.pop() {
            Some(s) => s,
            None => self.map()?,
        };
        self.counters.taken.add_single_writer(self.worker, 1);
        Ok(s)
    }

    #[cold]
    fn map(&mut self) -> io::Result<Stack> {
        let s = Stack::new(self.size)?;
        let c = &*self.counters;
        c.mapped.fetch_add(1, Ordering::Relaxed);
        let live = c.live.fetch_add(1, Ordering::Relaxed) + 1;
        c.high_water.fetch_max(live, Ordering::Relaxed);
        Ok(s)
    }

    /// Gives back a stack no fiber uses any more. Past the cap it is unmapped.
    #[inline]
    pub fn give(&mut self, s: Stack) {
        debug_assert!(s.usable_size() >= self.size);
        self.counters.given.add_single_writer(self.worker, 1);
        if self.free.len() < self.cap {
            self.free.push(s);
        } else {
            self.counters.live.fetch_sub(1, Ordering::Relaxed);
            drop(s);
        }
    }

    /// Counts a stack kept on an idle fiber (counted as given back, see
    /// [`StackPool::own_cells`]) as taken again.
    #[inline]
    pub fn note_reused(&mut self) {
        self.counters.taken.add_single_writer(self.worker, 1);
    }

    /// This pool's cells of the `taken` and `given` counters, for a worker that bumps them
    /// itself on its fast path ([`PerWorker::bump`]): `given` when it keeps a taken stack on an
    /// idle fiber for reuse (such stacks are free: no task runs on them), `taken` when it
    /// reuses one (as [`StackPool::note_reused`]).
    pub fn own_cells(&self) -> (&AtomicU64, &AtomicU64) {
        (
            self.counters.taken.cell(self.worker),
            self.counters.given.cell(self.worker),
        )
    }

    /// Stacks in this worker's free list.
    pub fn free_len(&self) -> usize {
        self.free.len()
    }

    /// The counters shared by every pool of this runtime.
    pub fn counters(&self) -> &Arc<StackCounters> {
        &self.counters
    }
}

impl Drop for StackPool {
    fn drop(&mut self) {
        self.counters
            .live
            .fetch_sub(self.free.len(), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_is_writable_down_to_the_guard() {
        let s = Stack::new(64 * 1024).unwrap();
        assert!(s.usable_size() >= 64 * 1024);
        assert_eq!(s.top() % page_size(), 0);
        // SAFETY: both addresses are inside the usable, writable part of the mapping.
        unsafe {
            *((s.top() - 1) as *mut u8) = 1;
            *(s.bottom() as *mut u8) = 2;
        }
        assert!(s.contains(s.bottom()) && !s.contains(s.top()) && !s.contains(s.bottom() - 1));
    }

    #[test]
    fn pool_reuses_and_counts() {
        let c = Arc::new(StackCounters::new(2));
        let mut a = StackPool::new(16 * 1024, 2, 0, c.clone());
        let mut b = StackPool::new(16 * 1024, 2, 1, c.clone());
        let s1 = a.take().unwrap();
        let s2 = a.take().unwrap();
        let s3 = a.take().unwrap();
        assert_eq!((c.in_use(), c.high_water(), c.mapped()), (3, 3, 3));
        b.give(s1); // migrated to another worker's pool
        b.give(s2);
        b.give(s3); // beyond the cap: unmapped
        assert_eq!((c.in_use(), b.free_len(), a.free_len()), (0, 2, 0));
        assert_eq!(c.mapped_now(), 2);
        let _s = b.take().unwrap();
        assert_eq!((c.in_use(), c.mapped()), (1, 3));
        c.reset_high_water();
        assert_eq!((c.high_water(), c.mapped()), (2, 0));
        drop(b);
        assert_eq!(c.mapped_now(), 1);
    }
}
