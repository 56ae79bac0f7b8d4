//! Geometric segmented stacks: where `libfork`'s task frames live.
//!
//! A [`SegStack`] is a chain of *stacklets*, each one heap block that starts with its metadata
//! and is used as a bump-allocated linear stack. Allocation is a pointer increment in the top
//! stacklet; when the request does not fit, the next stacklet is the cached one if it is large
//! enough, or a new one twice the size of the top one (or large enough for the request, if
//! that is more). Deallocation is LIFO: it moves the stack pointer back to where it was before
//! the allocation, and when that empties the top stacklet, the previous one becomes the top and
//! the empty one is kept as the cache if it is at most twice as large as the previous one (the
//! libfork paper's rule, Section III-C: a larger one, made for one large frame, is freed), at
//! most one cached stacklet per stack (the older cache is freed). The cache guards against
//! "hot splitting" at a stacklet boundary.
//!
//! ```text
//!   stacklet 0 (first, kept)       stacklet 1 (top)               cached
//!  +------+-------------------+   +------+-----------+-------+   +------+---------------+
//!  | meta | frames ...        |<--| meta | frames .. |  free |   | meta |    (empty)    |
//!  +------+-------------------+   +------+-----------+-------+   +------+---------------+
//!                                                    ^ sp    ^ end
//! ```
//!
//! Each allocation returns a "mark": the stack pointer it moved, or null for an allocation that
//! moved to a new top stacklet (the previous stacklet kept its stack pointer). Giving the mark
//! back to [`SegStack::dealloc`] undoes exactly that allocation, alignment padding and stacklet
//! switch included, with one test on the fast path (is the mark null?). The owner must give
//! marks back in the reverse order of the allocations.
//!
//! A stack is an object of its own (not a worker's field) because its ownership moves: a
//! worker that must leave a frame suspended on its stack gives the stack up and takes an empty
//! one, and the worker that resumes that frame later takes the stack over (the libfork paper,
//! Algorithms 4 and 5). Only one worker uses a stack at a time; the hand-over is ordered by the
//! synchronisation of the frame's join counter or of the deque.

use std::alloc::{Layout, alloc, dealloc};
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};

/// Size of a stack's first stacklet, metadata included.
pub const FIRST_STACKLET_BYTES: usize = 4096;

/// Stacklets are aligned to this (and so is every stacklet's first free byte).
const STACKLET_ALIGN: usize = 64;

/// A stacklet's metadata, at its start.
#[repr(C, align(64))]
struct Stacklet {
    /// The stacklet below (older), or null for the first.
    prev: *mut Stacklet,
    /// Bytes in this block, metadata included.
    bytes: usize,
    /// The stack pointer of this stacklet while a newer one is the top.
    saved_sp: *mut u8,
}

impl Stacklet {
    fn base(this: *mut Stacklet) -> *mut u8 {
        // SAFETY: the metadata is the first `size_of::<Stacklet>()` bytes of the block.
        unsafe { this.cast::<u8>().add(size_of::<Stacklet>()) }
    }

    fn end(this: *mut Stacklet) -> *mut u8 {
        // SAFETY: `bytes` is the block's size, read from its own metadata.
        unsafe { this.cast::<u8>().add((*this).bytes) }
    }
}

/// Counters shared by every stack of a pool.
#[derive(Debug, Default)]
pub struct StackCounters {
    /// Stacklets allocated from the heap.
    pub stacklets_allocated: AtomicU64,
    /// Bytes of stacklets alive now (cached ones included).
    pub bytes_live: AtomicU64,
    /// The most `bytes_live` has been since the last reset.
    pub bytes_high_water: AtomicU64,
    /// Stacklets alive now.
    pub stacklets_live: AtomicU64,
    /// Stacks alive now.
    pub stacks_live: AtomicU64,
}

impl StackCounters {
    fn grew(&self, bytes: usize) {
        self.stacklets_allocated.fetch_add(1, Ordering::Relaxed);
        self.stacklets_live.fetch_add(1, Ordering::Relaxed);
        let now = self.bytes_live.fetch_add(bytes as u64, Ordering::Relaxed) + bytes as u64;
        self.bytes_high_water.fetch_max(now, Ordering::Relaxed);
    }

    fn shrank(&self, bytes: usize) {
        self.stacklets_live.fetch_sub(1, Ordering::Relaxed);
        self.bytes_live.fetch_sub(bytes as u64, Ordering::Relaxed);
    }
}

/// A segmented stack. Not `Sync`: one worker at a time uses it (see the module docs). Aligned
/// to 128 bytes (two cache lines, the unit of adjacent-line prefetch): its stack pointer is
/// written at every frame's allocation and free, and stacks move between workers, so two
/// workers' stacks must never share a line.
#[repr(align(128))]
pub struct SegStack {
    /// The top stacklet (holds the last allocation, or is the first stacklet).
    top: *mut Stacklet,
    /// The next free byte of `top`.
    sp: *mut u8,
    /// One past the last byte of `top`.
    end: *mut u8,
    /// An empty stacklet kept for the next growth, or null.
    cached: *mut Stacklet,
    /// Allocations not given back yet.
    live: usize,
    counters: *const StackCounters,
}

// SAFETY: a stack is plain memory owned by whoever holds it; its hand-over between workers is
// ordered by the runtime's synchronisation (module docs). The counters are atomics that the
// pool keeps alive longer than any stack.
unsafe impl Send for SegStack {}

impl std::fmt::Debug for SegStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SegStack")
            .field("live", &self.live)
            .finish_non_exhaustive()
    }
}

fn new_stacklet(bytes: usize, prev: *mut Stacklet, counters: &StackCounters) -> *mut Stacklet {
    let layout = Layout::from_size_align(bytes, STACKLET_ALIGN).expect("stacklet size overflows");
    // SAFETY: the layout has a non-zero size (at least the metadata).
    let p = unsafe { alloc(layout) }.cast::<Stacklet>();
    if p.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    // SAFETY: `p` is a fresh block of `bytes >= size_of::<Stacklet>()` bytes, suitably aligned.
    unsafe {
        p.write(Stacklet {
            prev,
            bytes,
            saved_sp: ptr::null_mut(),
        })
    };
    counters.grew(bytes);
    p
}

/// Frees a stacklet made by [`new_stacklet`].
///
/// # Safety
/// `s` came from `new_stacklet` and is not used afterwards.
unsafe fn free_stacklet(s: *mut Stacklet, counters: &StackCounters) {
    // SAFETY: the caller's contract; `bytes` is the size it was allocated with.
    unsafe {
        let bytes = (*s).bytes;
        counters.shrank(bytes);
        dealloc(
            s.cast(),
            Layout::from_size_align_unchecked(bytes, STACKLET_ALIGN),
        );
    }
}

impl SegStack {
    /// A new empty stack with one stacklet of [`FIRST_STACKLET_BYTES`].
    ///
    /// # Safety
    /// `counters` outlives the stack.
    pub unsafe fn new(counters: *const StackCounters) -> SegStack {
        // SAFETY: the caller keeps `counters` alive.
        let c = unsafe { &*counters };
        c.stacks_live.fetch_add(1, Ordering::Relaxed);
        let first = new_stacklet(FIRST_STACKLET_BYTES, ptr::null_mut(), c);
        SegStack {
            top: first,
            sp: Stacklet::base(first),
            end: Stacklet::end(first),
            cached: ptr::null_mut(),
            live: 0,
            counters,
        }
    }

    /// Whether every allocation has been given back.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Allocates `layout` (its alignment at most [`STACKLET_ALIGN`]) and returns the block and
    /// the mark to give back to [`SegStack::dealloc`].
    #[inline]
    pub fn alloc(&mut self, layout: Layout) -> (*mut u8, *mut u8) {
        debug_assert!(layout.align() <= STACKLET_ALIGN);
        let mark = self.sp;
        let start = (mark as usize + layout.align() - 1) & !(layout.align() - 1);
        self.live += 1;
        if start + layout.size() <= self.end as usize {
            self.sp = (start + layout.size()) as *mut u8;
            return (start as *mut u8, mark);
        }
        (self.grow(layout), ptr::null_mut())
    }

    /// Moves to a new top stacklet that fits `layout`, and allocates there.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, layout: Layout) -> *mut u8 {
        // SAFETY: the pool keeps the counters alive (contract of `new`).
        let counters = unsafe { &*self.counters };
        let need = size_of::<Stacklet>() + layout.size();
        // SAFETY: `top` is a live stacklet of this stack.
        let want = unsafe { (*self.top).bytes } * 2;
        // SAFETY: `top` is live; it keeps its stack pointer while it is not the top.
        unsafe { (*self.top).saved_sp = self.sp };
        let next = if !self.cached.is_null() && unsafe { (*self.cached).bytes } >= need {
            let c = self.cached;
            self.cached = ptr::null_mut();
            // SAFETY: the cached stacklet is live and unused; it becomes the top.
            unsafe { (*c).prev = self.top };
            c
        } else {
            if !self.cached.is_null() {
                // SAFETY: too small to use; nothing points into an empty cached stacklet.
                unsafe { free_stacklet(self.cached, counters) };
                self.cached = ptr::null_mut();
            }
            new_stacklet(want.max(need.next_power_of_two()), self.top, counters)
        };
        self.top = next;
        // The base is aligned to STACKLET_ALIGN, which is at least the layout's alignment.
        let start = Stacklet::base(next);
        // SAFETY: `need` bytes fit in the new stacklet.
        self.sp = unsafe { start.add(layout.size()) };
        self.end = Stacklet::end(next);
        start
    }

    /// Gives back the last allocation, whose mark is `mark`.
    ///
    /// # Safety
    /// `mark` is the mark of this stack's most recent allocation not given back yet.
    #[inline]
    pub unsafe fn dealloc(&mut self, mark: *mut u8) {
        self.live -= 1;
        if !mark.is_null() {
            self.sp = mark;
        } else {
            // SAFETY: the allocation was the first in the top stacklet (a null mark), per the
            // caller's contract.
            unsafe { self.shrink() };
        }
    }

    /// The top stacklet is empty: the previous one becomes the top, at the stack pointer it
    /// kept when the top was pushed.
    ///
    /// # Safety
    /// As [`SegStack::dealloc`], with a null mark: the top stacklet is not the first.
    #[cold]
    #[inline(never)]
    unsafe fn shrink(&mut self) {
        // SAFETY: the pool keeps the counters alive (contract of `new`).
        let counters = unsafe { &*self.counters };
        let empty = self.top;
        // SAFETY: `empty` is live and not the first stacklet (its first allocation had a null
        // mark).
        let prev = unsafe { (*empty).prev };
        debug_assert!(!prev.is_null());
        // SAFETY: both stacklets are live.
        let (empty_bytes, prev_bytes) = unsafe { ((*empty).bytes, (*prev).bytes) };
        if empty_bytes <= 2 * prev_bytes {
            if !self.cached.is_null() {
                // SAFETY: an empty cached stacklet has no allocation in it.
                unsafe { free_stacklet(self.cached, counters) };
            }
            self.cached = empty;
        } else {
            // SAFETY: an empty stacklet, in no chain once `top` moves below.
            unsafe { free_stacklet(empty, counters) };
        }
        self.top = prev;
        // SAFETY: `prev` is live; `grow` saved its stack pointer.
        self.sp = unsafe { (*prev).saved_sp };
        self.end = Stacklet::end(prev);
    }
}

impl Drop for SegStack {
    fn drop(&mut self) {
        assert!(
            self.live == 0 || std::thread::panicking(),
            "a libfork stack was dropped with {} frames on it",
            self.live
        );
        // SAFETY: the pool keeps the counters alive (contract of `new`).
        let counters = unsafe { &*self.counters };
        counters.stacks_live.fetch_sub(1, Ordering::Relaxed);
        let mut s = self.top;
        while !s.is_null() {
            // SAFETY: walking the chain of live stacklets; each is freed once.
            let prev = unsafe { (*s).prev };
            unsafe { free_stacklet(s, counters) };
            s = prev;
        }
        if !self.cached.is_null() {
            // SAFETY: the cached stacklet is live and in no chain.
            unsafe { free_stacklet(self.cached, counters) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifo_allocations_grow_geometrically_and_cache_one_stacklet() {
        let counters = StackCounters::default();
        // SAFETY: `counters` outlives the stack (dropped first, at the end of the scope).
        let mut s = unsafe { SegStack::new(&counters) };
        let block = Layout::from_size_align(1000, 16).unwrap();
        let mut marks = Vec::new();
        for i in 0..40u8 {
            let (p, m) = s.alloc(block);
            assert_eq!(p as usize % 16, 0);
            // SAFETY: `p` is a fresh 1000-byte block.
            unsafe { p.write_bytes(i, 1000) };
            marks.push((p, m, i));
        }
        // 40 KB in stacklets of 4, 8, 16, 32 KiB: four heap blocks, not forty.
        assert_eq!(counters.stacklets_allocated.load(Ordering::Relaxed), 4);
        for &(p, m, i) in marks.iter().rev() {
            // SAFETY: reading a block still allocated; marks given back in LIFO order.
            unsafe {
                assert_eq!(*p.add(999), i, "a block was overwritten");
                s.dealloc(m);
            }
        }
        assert!(s.is_empty());
        // Every stacklet but the first and one cached were freed.
        let live = counters.bytes_live.load(Ordering::Relaxed);
        assert_eq!(live, 4096 + 8192, "first + cached");
        // Hot splitting at a boundary reuses the cached stacklet.
        let (_, fill) = s.alloc(Layout::from_size_align(3500, 16).unwrap());
        for _ in 0..100 {
            let (_, m) = s.alloc(block);
            // SAFETY: the most recent allocation.
            unsafe { s.dealloc(m) };
        }
        // SAFETY: the most recent allocation.
        unsafe { s.dealloc(fill) };
        assert_eq!(counters.stacklets_allocated.load(Ordering::Relaxed), 4);
        assert_eq!(
            counters.bytes_high_water.load(Ordering::Relaxed),
            4096 + 8192 + 16384 + 32768
        );
        drop(s);
        assert_eq!(counters.bytes_live.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_large_request_gets_a_stacklet_of_its_own_size() {
        let counters = StackCounters::default();
        // SAFETY: `counters` outlives the stack.
        let mut s = unsafe { SegStack::new(&counters) };
        let (p, m) = s.alloc(Layout::from_size_align(100_000, 64).unwrap());
        assert_eq!(p as usize % 64, 0);
        // SAFETY: the block is 100,000 bytes.
        unsafe { p.write_bytes(7, 100_000) };
        // SAFETY: the most recent allocation.
        unsafe { s.dealloc(m) };
        assert!(s.is_empty());
        // More than twice the first stacklet: freed when it empties, not cached.
        assert!(s.cached.is_null());
        assert_eq!(counters.stacklets_live.load(Ordering::Relaxed), 1);
        assert_eq!(
            counters.bytes_live.load(Ordering::Relaxed),
            FIRST_STACKLET_BYTES as u64
        );
        // A stacklet twice the size of the previous one is cached.
        let (_, m) = s.alloc(Layout::from_size_align(FIRST_STACKLET_BYTES, 64).unwrap());
        // SAFETY: the most recent allocation.
        unsafe { s.dealloc(m) };
        assert!(!s.cached.is_null());
        assert_eq!(counters.stacklets_live.load(Ordering::Relaxed), 2);
    }
}
