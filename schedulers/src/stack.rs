//! Fiber stacks: memory-mapped stacks with a guard page, kept in a per-worker pool.
//!
//! A [`Stack`] is one anonymous private mapping of `guard + size` bytes. Its lowest page is
//! `PROT_NONE` (the guard page), so running off the end of the stack faults instead of
//! overwriting the neighbouring memory. The mapping uses `MAP_NORESERVE`: a stack of several
//! MiB costs address space only, and physical pages are committed when first touched.
//!
//! A [`StackPool`] is the free list of one worker plus counters shared by every pool of a
//! runtime ([`StackCounters`]): stacks in use (taken and not yet given back), stacks mapped and
//! their high-water mark, and how many stacks were mapped since the last reset. A pool may
//! *spill* (Fibril's stack pool): past its cap, a given-back stack goes to a free list shared by
//! every pool of the runtime instead of being unmapped, and a pool whose own list is empty
//! takes from the shared one before it maps a new stack.
//!
//! The counters also hold the *registry* of every stack the pools have mapped, so the pages a
//! runtime's stacks hold can be counted exactly from outside ([`StackCounters::scan`]:
//! `mincore` over each stack), and the pages below a suspended fiber can be given back to the
//! OS ([`Stack::release_below`]: `madvise(MADV_DONTNEED)`, as Fibril's `unmap`).
//!
//! The registry also keeps, per stack, how deep it was ever seen: the pages of it *touched*
//! at least once, each of which cost one first-touch page fault (Fibril's count of stack
//! pages). A stack is used from its top down, so its touched pages are those from its top to
//! the deepest page ever resident. A page stops being resident only through
//! [`Stack::release_below`] (or unmapping), which looks at what is resident first, so every
//! touched page is seen: by the release that gives it back, by a scan, or when its stack is
//! unmapped. A released page touched again faults again but is not counted again, as in
//! Fibril, whose fault handler counts only a page's first fault.
//!
//! # Invariants
//!
//! * A `Stack` owns its mapping: `[low, low + len)` is mapped, `low` is page aligned, the page
//!   at `low` is the guard, and `[low + guard, low + len)` is readable and writable. The mapping
//!   is unmapped exactly once, when the `Stack` is dropped.
//! * Every stack in a pool's free list has the pool's usable size and is not used by any
//!   fiber. A free list holds at most `cap` stacks; surplus stacks are unmapped, or, in a
//!   spilling pool, go to the shared free list (whose stacks count as `live`, not `in_use`).
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
use std::collections::HashMap;
use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

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
    /// The registry this stack is listed in (stacks mapped by a [`StackPool`]).
    registry: Option<Registered>,
}

/// A registered stack's link to its registry.
#[derive(Debug)]
struct Registered {
    registry: Arc<Registry>,
    /// Its entry's count of touched pages ([`Entry::touched`]).
    touched: Arc<AtomicUsize>,
}

/// What [`Stack::release_below`] and [`Stack::resident`] found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pages {
    /// Resident pages in the range looked at (released ones, for `release_below`).
    pub resident: usize,
    /// The depth of the stack in pages: from its top down to the lowest resident page of the
    /// range looked at (0 if none is resident).
    pub depth: usize,
}

/// Counts the resident pages of `[lo, hi)` (page aligned) with `mincore`, and the distance in
/// pages from `top` down to the lowest of them. `buf` is scratch space.
fn mincore_pages(lo: usize, hi: usize, top: usize, buf: &mut Vec<u8>) -> Pages {
    let page = page_size();
    let n = (hi - lo) / page;
    if n == 0 {
        return Pages::default();
    }
    // `mincore` writes every byte of the vector: it only has to be long enough (and
    // `vec!` of zeros is one zeroed allocation, where `resize` writes byte by byte).
    if buf.len() < n {
        *buf = vec![0; n];
    }
    let buf = &mut buf[..n];
    // SAFETY: `[lo, hi)` is inside a mapping the caller keeps alive for the call, page
    // aligned, and `buf` has one byte per page of it.
    let rc = unsafe { libc::mincore(lo as *mut libc::c_void, hi - lo, buf.as_mut_ptr()) };
    if rc != 0 {
        return Pages::default();
    }
    let (resident, lowest) = resident_bits(buf);
    let depth = lowest.map_or(0, |i| (top - (lo + i * page)) / page);
    Pages { resident, depth }
}

/// The number of bytes of a `mincore` vector whose low bit (resident) is set, and the index
/// of the first such byte. Eight bytes a step: a 16 MiB stack has 4,096 pages, and the scan
/// runs on every Fibril unmap and every stack scan.
fn resident_bits(v: &[u8]) -> (usize, Option<usize>) {
    const LOW_BITS: u64 = 0x0101_0101_0101_0101;
    let mut resident = 0;
    let mut lowest = None;
    let (words, tail) = v.as_chunks::<8>();
    for (k, w) in words.iter().enumerate() {
        let bits = u64::from_le_bytes(*w) & LOW_BITS;
        if bits != 0 {
            resident += bits.count_ones() as usize;
            // Little-endian: byte i of the word is bits 8i..8i+8.
            lowest = lowest.or(Some(8 * k + bits.trailing_zeros() as usize / 8));
        }
    }
    for (i, &b) in tail.iter().enumerate() {
        if b & 1 != 0 {
            resident += 1;
            lowest = lowest.or(Some(8 * words.len() + i));
        }
    }
    (resident, lowest)
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
            registry: None,
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

    /// The resident pages of the whole usable stack (`mincore`), and its depth in pages.
    /// `buf` is scratch space.
    pub fn resident(&self, buf: &mut Vec<u8>) -> Pages {
        mincore_pages(self.bottom(), self.top(), self.top(), buf)
    }

    /// Gives the pages of this stack below the page that holds `sp` back to the OS
    /// (`madvise(MADV_DONTNEED)`: Fibril's `unmap`; the next touch of such a page maps a zeroed
    /// one, so no `remap` is needed). Returns what was resident there: the pages released and
    /// the depth the stack had reached (which raises the stack's count of touched pages).
    /// Nothing is called if no page there is resident.
    ///
    /// # Safety
    /// Nothing lives in the stack below `sp`: the fiber that runs on it is suspended with its
    /// stack pointer at `sp` (or above), and nobody runs on the stack until this returns.
    pub unsafe fn release_below(&self, sp: usize, buf: &mut Vec<u8>) -> Pages {
        let lo = self.bottom();
        let hi = sp & !(page_size() - 1);
        if hi <= lo || hi > self.top() {
            return Pages::default();
        }
        let found = mincore_pages(lo, hi, self.top(), buf);
        if found.resident > 0 {
            // SAFETY: `[lo, hi)` is page aligned, inside this stack's usable part, and holds no
            // live data (the caller's contract); the mapping is private and anonymous, so the
            // pages read as zero afterwards and nothing else refers to them.
            unsafe { libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_DONTNEED) };
            if let Some(r) = &self.registry {
                r.touched.fetch_max(found.depth, Ordering::Relaxed);
            }
        }
        found
    }
}

/// The stacks mapped by the pools of one runtime, by the lowest address of their usable part,
/// so they can be scanned ([`StackCounters::scan`]). A stack leaves it (under the lock) before
/// it is unmapped.
#[derive(Debug, Default)]
struct Registry {
    stacks: Mutex<HashMap<usize, Entry>>,
    /// The touched pages of the stacks unmapped so far (changed under the `stacks` lock).
    retired: AtomicUsize,
}

/// A registered stack.
#[derive(Debug)]
struct Entry {
    /// The top of its usable part.
    top: usize,
    /// Its pages touched so far: the deepest it was seen, in pages from its top. Raised by the
    /// stack's releases (its owner's thread) and by scans.
    touched: Arc<AtomicUsize>,
}

impl Registry {
    fn lock(&self) -> MutexGuard<'_, HashMap<usize, Entry>> {
        self.stacks.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // Out of the registry before the pages go, so no scan looks at an unmapped range; its
        // touched pages move to the registry's retired ones in the same critical section.
        if let Some(r) = self.registry.take() {
            let seen = self.resident(&mut Vec::new()).depth;
            let mut reg = r.registry.lock();
            reg.remove(&self.bottom());
            let touched = r.touched.load(Ordering::Relaxed).max(seen);
            r.registry.retired.fetch_add(touched, Ordering::Relaxed);
        }
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

/// What [`StackCounters::scan`] found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Scan {
    /// Pages resident in the mapped stacks now.
    pub resident: usize,
    /// The deepest mapped stack now, in pages from its top to its lowest resident page.
    pub deepest: usize,
    /// Pages of the runtime's stacks touched at least once since its first stack was mapped
    /// (those of stacks unmapped since included): one first-touch page fault each.
    pub touched: usize,
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
    /// The deepest any stack reached, in pages, as far as releases and scans saw it.
    deepest: AtomicUsize,
    registry: Arc<Registry>,
    /// The free list shared by the pools that spill ([`StackPool::spilling`]).
    spill: Mutex<Vec<Stack>>,
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
            deepest: AtomicUsize::new(0),
            registry: Arc::new(Registry::default()),
            spill: Mutex::new(Vec::new()),
        }
    }

    /// Counts the pages every mapped stack holds right now (exact: `mincore` over each), and
    /// raises the depth high-water mark to the deepest stack found and each stack's count of
    /// touched pages to its depth now.
    pub fn scan(&self) -> Scan {
        let mut buf = Vec::new();
        let reg = self.registry.lock();
        let mut total = Scan {
            touched: self.registry.retired.load(Ordering::Relaxed),
            ..Scan::default()
        };
        for (&lo, e) in reg.iter() {
            // Registered stacks stay mapped while the registry is locked (see `Stack::drop`).
            let p = mincore_pages(lo, e.top, e.top, &mut buf);
            total.resident += p.resident;
            total.deepest = total.deepest.max(p.depth);
            total.touched += e.touched.fetch_max(p.depth, Ordering::Relaxed).max(p.depth);
        }
        drop(reg);
        self.deepest.fetch_max(total.deepest, Ordering::Relaxed);
        total
    }

    /// Records that a stack reached `pages` deep (seen when its pages were released).
    pub fn note_depth(&self, pages: usize) {
        self.deepest.fetch_max(pages, Ordering::Relaxed);
    }

    /// The deepest stack in pages since the last reset (releases, and scans).
    pub fn deepest(&self) -> usize {
        self.deepest.load(Ordering::Relaxed)
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
        self.deepest.store(0, Ordering::Relaxed);
        self.scan();
    }
}

/// One worker's free list of stacks of one size, with counters shared across the runtime.
#[derive(Debug)]
pub struct StackPool {
    free: Vec<Stack>,
    size: usize,
    cap: usize,
    worker: usize,
    /// Past the cap, give to the shared free list instead of unmapping (and take from it).
    spill: bool,
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
            spill: false,
            counters,
        }
    }

    /// This pool spills: past its cap, given-back stacks go to the free list shared by the
    /// runtime's pools, from which a pool with an empty list takes before mapping.
    pub fn spilling(mut self) -> StackPool {
        self.spill = true;
        self
    }

    fn shared_free(&self) -> MutexGuard<'_, Vec<Stack>> {
        self.counters
            .spill
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// A free stack, mapping a new one if the free list is empty.
    #[inline]
    pub fn take(&mut self) -> io::Result<Stack> {
        let s = match self.free.pop() {
            Some(s) => s,
            None => match self.spill.then(|| self.shared_free().pop()).flatten() {
                Some(s) => s,
                None => self.map()?,
            },
        };
        self.counters.taken.add_single_writer(self.worker, 1);
        Ok(s)
    }

    #[cold]
    fn map(&mut self) -> io::Result<Stack> {
        let mut s = Stack::new(self.size)?;
        let c = &*self.counters;
        let touched = Arc::new(AtomicUsize::new(0));
        let e = Entry {
            top: s.top(),
            touched: Arc::clone(&touched),
        };
        c.registry.lock().insert(s.bottom(), e);
        s.registry = Some(Registered {
            registry: Arc::clone(&c.registry),
            touched,
        });
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
        } else if self.spill {
            self.shared_free().push(s);
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
    fn resident_bits_count_and_find_the_low_bit_in_every_position() {
        // Every length up to three words and a tail, with resident bytes (low bit set) and
        // bytes with only other bits set (mincore leaves those bits unspecified).
        for len in 0..27 {
            for pattern in [
                0u32,
                1,
                0b101,
                0x0F0F_0F0F,
                0x8000_0001,
                0xFFFF_FFFF,
                0x0200_0000,
            ] {
                let v: Vec<u8> = (0..len)
                    .map(|i| {
                        if pattern >> (i % 32) & 1 == 1 {
                            0x81
                        } else {
                            0xFE
                        }
                    })
                    .collect();
                let want_count = v.iter().filter(|&&b| b & 1 != 0).count();
                let want_first = v.iter().position(|&b| b & 1 != 0);
                assert_eq!(
                    resident_bits(&v),
                    (want_count, want_first),
                    "{len} {pattern:#x}"
                );
            }
        }
    }

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

    #[test]
    fn spilling_pools_share_their_surplus() {
        let c = Arc::new(StackCounters::new(2));
        let mut a = StackPool::new(16 * 1024, 1, 0, c.clone()).spilling();
        let mut b = StackPool::new(16 * 1024, 1, 1, c.clone()).spilling();
        let s: Vec<Stack> = (0..3).map(|_| a.take().unwrap()).collect();
        s.into_iter().for_each(|s| a.give(s)); // one kept, two spilled, none unmapped
        assert_eq!((a.free_len(), c.mapped_now(), c.in_use()), (1, 3, 0));
        let _x = b.take().unwrap();
        let _y = b.take().unwrap();
        assert_eq!(c.mapped(), 3, "b took the spilled stacks");
        let _z = b.take().unwrap();
        assert_eq!(c.mapped(), 4, "the shared list was empty: mapped");
    }

    #[test]
    fn release_below_gives_pages_back_and_scans_count_them_and_their_first_touches() {
        let c = Arc::new(StackCounters::new(1));
        let mut p = StackPool::new(64 * page_size(), 1, 0, c.clone());
        let s = p.take().unwrap();
        let page = page_size();
        for a in (s.bottom()..s.top()).step_by(page) {
            // SAFETY: every page of the usable part is writable.
            unsafe { *(a as *mut u8) = 1 };
        }
        let mut buf = Vec::new();
        assert_eq!(
            s.resident(&mut buf),
            Pages {
                resident: 64,
                depth: 64
            }
        );
        assert_eq!(
            c.scan(),
            Scan {
                resident: 64,
                deepest: 64,
                touched: 64
            }
        );
        // As if a fiber were suspended with its stack pointer in the 10th page from the top.
        let sp = s.top() - 9 * page - 100;
        // SAFETY: no fiber runs on this stack.
        let r = unsafe { s.release_below(sp, &mut buf) };
        assert_eq!(
            r,
            Pages {
                resident: 54,
                depth: 64
            }
        );
        assert_eq!(
            s.resident(&mut buf),
            Pages {
                resident: 10,
                depth: 10
            }
        );
        // SAFETY: as above; nothing resident is left below: no call.
        assert_eq!(unsafe { s.release_below(sp, &mut buf) }.resident, 0);
        assert_eq!(c.scan().resident, 10);
        assert_eq!(c.deepest(), 64);
        // The released pages were touched once: still 64, and touching 20 of them again (20
        // more faults) counts no page twice.
        assert_eq!(c.scan().touched, 64);
        for a in (s.top() - 30 * page..s.top() - 10 * page).step_by(page) {
            // SAFETY: as above.
            unsafe { *(a as *mut u8) = 2 };
        }
        assert_eq!(
            c.scan(),
            Scan {
                resident: 30,
                deepest: 30,
                touched: 64
            }
        );
        // A second stack, touched 5 pages deep; then both unmapped: their pages stay counted.
        let t = p.take().unwrap();
        for a in (t.top() - 5 * page..t.top()).step_by(page) {
            // SAFETY: as above.
            unsafe { *(a as *mut u8) = 3 };
        }
        assert_eq!(c.scan().touched, 69);
        p.give(s);
        p.give(t); // past the cap of 1: unmapped
        drop(p); // the one in the free list: unmapped
        assert_eq!(
            c.scan(),
            Scan {
                resident: 0,
                deepest: 0,
                touched: 69
            }
        );
    }
}
