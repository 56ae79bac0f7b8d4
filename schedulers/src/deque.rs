//! A Chase-Lev work-stealing deque of two-word entries whose owner side needs no fence.
//!
//! The owner pushes and pops at the bottom, thieves steal at the top (Chase and Lev, SPAA 2005,
//! with the C11 orderings of Lê et al., PPoPP 2013). Both `pop` and `steal` need a full
//! (SeqCst) fence between their write of one index and their read of the other. Here the fence
//! is *asymmetric* (as in folly's `asymmetricLightBarrier`): the owner issues only a compiler
//! fence, and a thief issues `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, which makes every
//! running thread of the process execute a full memory barrier before it returns. For any
//! owner `pop` racing with a steal, the owner's barrier point (its compiler fence, made a real
//! barrier by the membarrier if the owner was running then, or by the context switch if it was
//! not) is either before the thief's syscall, so the thief reads the decremented `bottom`, or
//! after it, so the owner's read of `top` is later in real time than the thief's and sees at
//! least the value the thief saw: the two can only both aim at the last entry, and then both
//! compare-and-swap `top`, so exactly one wins. This is what makes the work-first fast path of a
//! join cost a few plain loads and stores. Where the kernel refuses `membarrier`, both sides use
//! `fence(SeqCst)` instead ([`heavy_fence_is_membarrier`] says which).
//!
//! Measured on fib(35) `fj` with `abp` at P=1 (2 vCPUs, T_s = 24 ms): T_1/T_s was 9.8 with
//! `crossbeam-deque` (whose `pop` issues a SeqCst fence, plus the fence the sleep protocol needs
//! after a push) and about 3.1 with this deque.
//!
//! The same asymmetric pair serves the runtimes' sleep protocol: a worker going to sleep calls
//! [`heavy_fence`] after announcing itself and before its last look at the deques, and a push
//! is followed by [`light_fence`] before reading the sleeper count.
//!
//! # Invariants
//!
//! * `top <= bottom + 1` at all times, and `bottom - top` (when positive) entries at indices
//!   `[top, bottom)` are live; only the owner writes `bottom` and the buffer; `top` only grows,
//!   by compare-and-swap (thieves, and the owner taking the last entry).
//! * Entries are stored as two `AtomicUsize` words written and read with relaxed atomics: a
//!   thief may read a slot the owner is overwriting, but then its compare-and-swap of `top`
//!   fails and it discards what it read, so a torn value is never used.
//! * A buffer that was replaced by a larger one is kept until the deque is dropped (thieves may
//!   still read it); entries are copied before the new buffer is published, and the owner never
//!   writes to an old buffer again, so any slot a thief reads there holds the value it would read
//!   in the new one.
//!
//! # Model checking
//!
//! `tests/loom.rs` checks the deque under loom (`--cfg loom`; see the crate's README): pop
//! against a steal of the last entry, two pops against two steals, a steal during pushes, a
//! push that reuses a stolen slot or grows the buffer during a steal, and two thieves with the
//! owner on one entry; each entry must be taken exactly once, whole, with what the owner wrote
//! before pushing it visible to the taker. What the models cover and what they do not:
//!
//! * **The fence pair is the fallback's**, `fence(SeqCst)` on both sides (what
//!   `STEALBENCH_NO_MEMBARRIER=1` selects): loom cannot model `membarrier`, a barrier the
//!   kernel makes the other threads execute, so under loom [`heavy_fence_is_membarrier`] is
//!   false. The asymmetric pair is correct if `membarrier` plus the owner's compiler fence act
//!   as the fallback's two fences, which is the argument above, not something loom checked.
//!   The models do show what rests on it: with the owner's fence reduced to a compiler fence
//!   and no `membarrier` (the owner side as it is, the thief side unable to make it a
//!   barrier), two steals and two pops take one entry twice.
//! * loom gives SeqCst *fences* a total order that also synchronizes (each fence acquires
//!   what every earlier one released), which is stronger than C11; SeqCst *accesses* it treats
//!   as AcqRel, weaker than C11. A bug that only C11's weaker fences expose can be missed.
//! * loom does not produce load buffering (a load reading a store that comes later in its
//!   own thread's future), so the Acquire of `top` in `make_room`, which orders a thief's read
//!   of a slot before the owner's overwrite of it, is not checked: weakened to Relaxed, the
//!   models still pass.
//! * Scenarios are small (two or three threads, at most three entries, a buffer of 2 under
//!   loom so that reuse and growth are reached) and explored at a bounded preemption depth.

use crate::sync::{AtomicIsize, AtomicPtr, AtomicUsize, Ordering, compiler_fence, fence};
use std::cell::{Cell, UnsafeCell};
use std::sync::Arc;
#[cfg(not(loom))]
use std::sync::OnceLock;
#[cfg(not(loom))]
use std::sync::atomic::AtomicU8;

const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
#[cfg(not(loom))]
const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

/// The smallest buffer. Under loom, 2: a model of a few entries then reaches the reuse of
/// stolen slots and the growth of the buffer.
const MIN_CAPACITY: usize = if cfg!(loom) { 2 } else { 16 };

/// Registers this process for expedited private membarrier once; true if the kernel agreed.
/// After the first call one relaxed load (a deque's owner handle asks once, at its creation,
/// and the free [`light_fence`] at every call): the answer never changes, and the registration holds for the whole process. Threads that
/// ask first at the same time all go through `register_membarrier`, whose `OnceLock` makes
/// them register once and agree.
#[cfg(not(loom))]
#[inline(always)]
fn membarrier_available() -> bool {
    static KNOWN: AtomicU8 = AtomicU8::new(0); // 0: not asked yet, 1: available, 2: not
    match KNOWN.load(Ordering::Relaxed) {
        0 => {
            let ok = register_membarrier();
            KNOWN.store(if ok { 1 } else { 2 }, Ordering::Relaxed);
            ok
        }
        k => k == 1,
    }
}

/// Under loom: never. loom cannot model `membarrier` (a barrier the kernel runs on the other
/// threads), so the models check the fallback, `fence(SeqCst)` on both sides, as
/// `STEALBENCH_NO_MEMBARRIER=1` selects.
#[cfg(loom)]
fn membarrier_available() -> bool {
    false
}

#[cfg(not(loom))]
#[cold]
fn register_membarrier() -> bool {
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| {
        if std::env::var_os("STEALBENCH_NO_MEMBARRIER").is_some() {
            return false;
        }
        #[cfg(target_os = "linux")]
        {
            // SAFETY: membarrier takes integer arguments only and has no memory effects on this
            // process other than barriers; a failure is reported in the return value.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_membarrier,
                    MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
                    0 as libc::c_long,
                    0 as libc::c_long,
                )
            };
            rc == 0
        }
        #[cfg(not(target_os = "linux"))]
        {
            false
        }
    })
}

/// Does [`heavy_fence`] use `membarrier` (and [`light_fence`] only a compiler fence)?
pub fn heavy_fence_is_membarrier() -> bool {
    membarrier_available()
}

/// The owner's side of the asymmetric fence (an [`Owner`] has its own, [`Owner::light_fence`],
/// which reads a flag it cached instead).
#[inline(always)]
pub fn light_fence() {
    owner_fence(membarrier_available());
}

/// The owner's side of the asymmetric fence: a compiler fence if `asymmetric` (the thieves'
/// side is `membarrier`), else a full one.
#[inline(always)]
fn owner_fence(asymmetric: bool) {
    if asymmetric {
        compiler_fence(Ordering::SeqCst);
    } else {
        fence(Ordering::SeqCst);
    }
}

/// The thief's (or sleeper's) side of the asymmetric fence: every thread of the process has
/// executed a full barrier when it returns.
pub fn heavy_fence() {
    if membarrier_available() {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: as in `membarrier_available`; the process is registered.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_membarrier,
                    MEMBARRIER_CMD_PRIVATE_EXPEDITED,
                    0 as libc::c_long,
                    0 as libc::c_long,
                )
            };
            if rc != 0 {
                // The owners run with compiler fences only: continuing would be unsound.
                eprintln!(
                    "stealbench: membarrier failed after registration: {}",
                    std::io::Error::last_os_error()
                );
                std::process::abort();
            }
        }
    }
    fence(Ordering::SeqCst);
}

/// A deque entry: two machine words, whose meaning is the user's.
pub type Entry = [usize; 2];

struct Buffer {
    slots: Box<[[AtomicUsize; 2]]>,
    mask: usize,
}

impl Buffer {
    fn new(cap: usize) -> Box<Buffer> {
        debug_assert!(cap.is_power_of_two());
        Box::new(Buffer {
            slots: (0..cap)
                .map(|_| [AtomicUsize::new(0), AtomicUsize::new(0)])
                .collect(),
            mask: cap - 1,
        })
    }
    #[inline(always)]
    fn write(&self, i: isize, e: Entry) {
        let s = &self.slots[i as usize & self.mask];
        s[0].store(e[0], Ordering::Relaxed);
        s[1].store(e[1], Ordering::Relaxed);
    }
    #[inline(always)]
    fn read(&self, i: isize) -> Entry {
        let s = &self.slots[i as usize & self.mask];
        [s[0].load(Ordering::Relaxed), s[1].load(Ordering::Relaxed)]
    }
}

/// Aligned to two cache lines so that two workers' deques never share one (the owner writes
/// `bottom` on every push and pop).
#[repr(align(128))]
struct Inner {
    bottom: AtomicIsize,
    top: AtomicIsize,
    buffer: AtomicPtr<Buffer>,
    /// Every buffer ever used (the current one last); only the owner pushes, see the invariants.
    /// Boxed: `buffer` points at them, so they must not move when the `Vec` grows.
    #[allow(clippy::vec_box)]
    retired: UnsafeCell<Vec<Box<Buffer>>>,
}

// SAFETY: `retired` is touched only by the owner (`Owner` is not `Sync` and is the only handle
// that grows the buffer) and by `Drop` once no handle is left; everything else is atomic.
unsafe impl Sync for Inner {}
// SAFETY: see `Sync`.
unsafe impl Send for Inner {}

/// The owner's handle: push and pop at the bottom.
///
/// It caches what only the owner changes (the buffer, its mask, `bottom`) so that push and pop
/// do not chase pointers; the cache is owner-private, which makes `Owner` `!Sync`.
pub struct Owner {
    inner: Arc<Inner>,
    /// The current buffer's slots (`inner.buffer`'s, cached).
    slots: Cell<*const [AtomicUsize; 2]>,
    /// The current buffer's capacity - 1.
    mask: Cell<usize>,
    /// The value of `inner.bottom` (only the owner writes it).
    bottom: Cell<isize>,
    /// A `top` the owner read earlier (Acquire) plus the capacity: since `top` only grows, a
    /// push at an index below this finds the buffer not full without reading `top`, and the
    /// slot it overwrites held an entry whose taking that read made visible.
    limit: Cell<isize>,
    /// Whether the light fence may be a compiler fence (membarrier is available).
    asymmetric: bool,
}

// SAFETY: the cached pointer points into a buffer the shared `Inner` keeps alive; moving the
// owner to another thread moves the right to push and pop with it (it is not `Sync`).
unsafe impl Send for Owner {}

/// A thief's handle: steal at the top. Clone it freely.
#[derive(Clone)]
pub struct Thief {
    inner: Arc<Inner>,
}

/// What a steal attempt found.
#[derive(Debug, PartialEq, Eq)]
pub enum Stolen {
    /// The top entry, now the thief's.
    Entry(Entry),
    /// Nothing to steal.
    Empty,
    /// Lost a race with another thief or the owner; try again.
    Retry,
}

impl std::fmt::Debug for Owner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Owner").field("len", &self.len()).finish()
    }
}

impl std::fmt::Debug for Thief {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Thief")
            .field("empty", &self.is_empty())
            .finish()
    }
}

/// A new empty deque: the owner's handle and a thief's handle.
pub fn new(initial_capacity: usize) -> (Owner, Thief) {
    let cap = initial_capacity.max(MIN_CAPACITY).next_power_of_two();
    let mut first = Buffer::new(cap);
    let ptr: *mut Buffer = &mut *first;
    let slots = first.slots.as_ptr();
    let inner = Arc::new(Inner {
        bottom: AtomicIsize::new(0),
        top: AtomicIsize::new(0),
        buffer: AtomicPtr::new(ptr),
        retired: UnsafeCell::new(vec![first]),
    });
    (
        Owner {
            inner: Arc::clone(&inner),
            slots: Cell::new(slots),
            mask: Cell::new(cap - 1),
            bottom: Cell::new(0),
            limit: Cell::new(cap as isize),
            asymmetric: membarrier_available(),
        },
        Thief { inner },
    )
}

impl Owner {
    /// Pushes at the bottom (the owner only).
    #[inline]
    pub fn push(&self, e: Entry) {
        let inner = &*self.inner;
        let b = self.bottom.get();
        if b >= self.limit.get() {
            self.make_room(b);
        }
        self.write(b, e);
        self.bottom.set(b + 1);
        // Release: a thief that reads this `bottom` (Acquire) also reads the entry.
        inner.bottom.store(b + 1, Ordering::Release);
    }

    #[inline(always)]
    fn slot(&self, i: isize) -> &[AtomicUsize; 2] {
        // SAFETY: `slots` points to the current buffer's `mask + 1` slots, alive while the
        // deque is, and the index is masked into range.
        unsafe { &*self.slots.get().add(i as usize & self.mask.get()) }
    }

    #[inline(always)]
    fn write(&self, i: isize, e: Entry) {
        let s = self.slot(i);
        s[0].store(e[0], Ordering::Relaxed);
        s[1].store(e[1], Ordering::Relaxed);
    }

    #[inline(always)]
    fn read(&self, i: isize) -> Entry {
        let s = self.slot(i);
        [s[0].load(Ordering::Relaxed), s[1].load(Ordering::Relaxed)]
    }

    /// Reads `top` again for a push at `b` and grows the buffer if it is full; sets `limit`.
    #[cold]
    fn make_room(&self, b: isize) {
        // Acquire: a thief's read of a slot happens before our later overwrite of it.
        let t = self.inner.top.load(Ordering::Acquire);
        if b - t > self.mask.get() as isize {
            self.grow(b, t);
        }
        self.limit.set(t + self.mask.get() as isize + 1);
    }

    fn grow(&self, b: isize, t: isize) {
        let inner = &*self.inner;
        let old = inner.buffer.load(Ordering::Relaxed);
        // SAFETY: the current buffer is alive.
        let old_cap = unsafe { (*old).mask } + 1;
        let mut new = Buffer::new(old_cap * 2);
        for i in t..b {
            new.write(i, self.read(i));
        }
        let ptr: *mut Buffer = &mut *new;
        // SAFETY: only the owner touches `retired` (see `Inner`).
        unsafe { (*inner.retired.get()).push(new) };
        // Release: a thief that loads this buffer (Acquire) sees the copied entries.
        inner.buffer.store(ptr, Ordering::Release);
        // SAFETY: `ptr` is the buffer just published, alive in `retired`.
        let (slots, mask) = unsafe { ((*ptr).slots.as_ptr(), (*ptr).mask) };
        self.slots.set(slots);
        self.mask.set(mask);
    }

    /// Pops at the bottom (the owner only).
    #[inline]
    pub fn pop(&self) -> Option<Entry> {
        let inner = &*self.inner;
        let b = self.bottom.get() - 1;
        inner.bottom.store(b, Ordering::Relaxed);
        // The owner's half of the asymmetric SeqCst fence (see the module documentation).
        self.light_fence();
        let t = inner.top.load(Ordering::Relaxed);
        if t > b {
            // Empty.
            inner.bottom.store(b + 1, Ordering::Relaxed);
            return None;
        }
        let e = self.read(b);
        if t == b {
            // The last entry: race the thieves for it.
            let won = inner
                .top
                .compare_exchange(t, t + 1, Ordering::SeqCst, Ordering::Relaxed)
                .is_ok();
            inner.bottom.store(b + 1, Ordering::Relaxed);
            return won.then_some(e);
        }
        self.bottom.set(b);
        Some(e)
    }

    /// The owner's side of the asymmetric fence, as [`light_fence`], but from the flag this
    /// handle cached at its creation (no load of the process-wide flag on the push path).
    #[inline(always)]
    pub fn light_fence(&self) {
        owner_fence(self.asymmetric);
    }

    /// Number of entries (exact for the owner).
    pub fn len(&self) -> usize {
        let b = self.bottom.get();
        let t = self.inner.top.load(Ordering::Relaxed);
        (b - t).max(0) as usize
    }

    /// Is the deque empty (exact for the owner)?
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A thief's handle to this deque.
    pub fn thief(&self) -> Thief {
        Thief {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl Thief {
    /// Steals the top entry.
    pub fn steal(&self) -> Stolen {
        let inner = &*self.inner;
        let t = inner.top.load(Ordering::Acquire);
        // Cheap look first: an apparently empty deque costs no barrier.
        if inner.bottom.load(Ordering::Acquire) <= t {
            return Stolen::Empty;
        }
        // The thief's half of the asymmetric SeqCst fence (see the module documentation).
        heavy_fence();
        let b = inner.bottom.load(Ordering::Acquire);
        if b <= t {
            return Stolen::Empty;
        }
        let buf = inner.buffer.load(Ordering::Acquire);
        // SAFETY: every buffer stays alive until the deque drops, and `self` keeps it alive.
        let e = unsafe { (*buf).read(t) };
        match inner
            .top
            .compare_exchange(t, t + 1, Ordering::SeqCst, Ordering::Relaxed)
        {
            Ok(_) => Stolen::Entry(e),
            Err(_) => Stolen::Retry,
        }
    }

    /// Does the deque look empty? Exact only after a [`heavy_fence`] by the caller, against
    /// pushes followed by [`light_fence`].
    pub fn is_empty(&self) -> bool {
        let t = self.inner.top.load(Ordering::Acquire);
        self.inner.bottom.load(Ordering::Acquire) <= t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    #[test]
    fn lifo_for_the_owner_fifo_for_thieves_and_growth() {
        let (o, t) = new(2);
        for i in 0..100 {
            o.push([i, i + 1]);
        }
        assert_eq!(o.len(), 100);
        assert_eq!(t.steal(), Stolen::Entry([0, 1]));
        assert_eq!(o.pop(), Some([99, 100]));
        assert_eq!(t.steal(), Stolen::Entry([1, 2]));
        while o.pop().is_some() {}
        assert!(o.is_empty() && t.is_empty());
        assert_eq!(t.steal(), Stolen::Empty);
        assert_eq!(o.pop(), None);
    }

    /// A full buffer whose top entries were stolen is reused, not grown: the push that finds
    /// `limit` reached reads `top` again.
    #[test]
    fn pushes_reuse_stolen_slots_without_growing() {
        let (o, t) = new(16);
        for i in 0..16 {
            o.push([i, 0]);
        }
        for i in 0..8 {
            assert_eq!(t.steal(), Stolen::Entry([i, 0]));
        }
        for i in 16..24 {
            o.push([i, 0]);
        }
        assert_eq!(o.mask.get(), 15, "grew although 8 slots were free");
        assert_eq!(o.len(), 16);
        o.push([24, 0]);
        assert_eq!(o.mask.get(), 31, "a full buffer must grow");
        assert_eq!(t.steal(), Stolen::Entry([8, 0]));
        for i in (9..25).rev() {
            assert_eq!(o.pop(), Some([i, 0]));
        }
        assert_eq!(o.pop(), None);
    }

    /// Every pushed value is taken exactly once by the owner or one of two thieves.
    #[test]
    fn concurrent_pops_and_steals_take_each_entry_once() {
        const N: usize = 200_000;
        let (o, t) = new(16);
        let stop = Arc::new(AtomicBool::new(false));
        let thieves: Vec<_> = (0..2)
            .map(|_| {
                let t = t.clone();
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let mut got = vec![];
                    while !stop.load(Ordering::Acquire) || !t.is_empty() {
                        if let Stolen::Entry(e) = t.steal() {
                            got.push(e[0]);
                            assert_eq!(e[1], !e[0]);
                        }
                    }
                    got
                })
            })
            .collect();
        let mut mine = vec![];
        for i in 0..N {
            o.push([i, !i]);
            if i % 3 == 0 {
                if let Some(e) = o.pop() {
                    assert_eq!(e[1], !e[0]);
                    mine.push(e[0]);
                }
            }
        }
        while let Some(e) = o.pop() {
            mine.push(e[0]);
        }
        stop.store(true, Ordering::Release);
        for h in thieves {
            mine.extend(h.join().unwrap());
        }
        mine.sort_unstable();
        assert_eq!(mine.len(), N);
        assert!(mine.iter().enumerate().all(|(i, &v)| i == v));
    }
}
