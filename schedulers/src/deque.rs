//! A Chase-Lev work-stealing deque of two-word entries whose owner side needs no fence while
//! thieves are rare, and whose thieves need no system call while they are many.
//!
//! The owner pushes and pops at the bottom, thieves steal at the top (Chase and Lev, SPAA 2005,
//! with the C11 orderings of Lê et al., PPoPP 2013). Both `pop` and `steal` need a full
//! (SeqCst) fence between their write of one index and their read of the other. Where that
//! fence goes is the deque's *fence mode*, which each deque's owner switches on its own
//! ([`Switching`]):
//!
//! * **Asymmetric** (as in folly's `asymmetricLightBarrier`): the owner issues only a compiler
//!   fence, and a thief issues `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, which makes every
//!   running thread of the process execute a full memory barrier before it returns. For any
//!   owner `pop` racing with a steal, the owner's barrier point (its compiler fence, made a real
//!   barrier by the membarrier if the owner was running then, or by the context switch if it
//!   was not) is either before the thief's syscall, so the thief reads the decremented
//!   `bottom`, or after it, so the owner's read of `top` is later in real time than the thief's
//!   and sees at least the value the thief saw: the two can only both aim at the last entry,
//!   and then both compare-and-swap `top`, so exactly one wins. This is what makes the
//!   work-first fast path of a join cost a few plain loads and stores. But every steal attempt
//!   that gets past the cheap look interrupts every core running the process: on 16 cores, a
//!   steal-heavy run spends more in those interrupts than in its work.
//! * **Symmetric**: both sides issue `fence(SeqCst)`, the textbook deque: a steal costs a fence,
//!   and so does every pop.
//!
//! The owner watches the heavy fences thieves issue on its deque (asymmetric) or the entries
//! they take (symmetric), and switches to whichever mode is cheaper for what it sees
//! ([`Switching`]): a deque under steal pressure pays a fence per pop, one nobody steals from
//! pays none. A pool chooses how its deques do this with its [`FenceMode`]
//! ([`PoolConfig::fence`](crate::PoolConfig::fence)), which its [`FenceCounts`] carry to every
//! deque it makes ([`in_pool`]): switching adaptively, eagerly, never (always asymmetric), or
//! `fenced`, symmetric for good with no `membarrier` at all. The mode is a generation counter, `mode`, odd while symmetric; only the owner
//! writes it, between two of its pops ([`Owner::pop`] decides before its first access to the
//! deque, [`Owner::make_symmetric`] outside pops).
//!
//! # Why switching is safe
//!
//! A thief reads `mode` (Acquire) before it reads `top`. If it is even, it issues the heavy
//! fence: that is correct against any owner, since a `membarrier` is at least a full fence on
//! both sides. If it is odd (`g`), the thief issues `fence(SeqCst)`, reads `bottom` (Acquire),
//! and reads `mode` again: only if it is still `g` does it go on with that `bottom`; otherwise
//! it issues the heavy fence and reads `bottom` again. Against which pops is the light fence
//! enough?
//!
//! * **Pops from before the switch to `g`** (the owner's compiler fence only): the owner's
//!   Release store of `g` comes after them, and the thief's Acquire read of `g` synchronizes
//!   with it, so they happen before everything the thief does next: its reads of `top` and
//!   `bottom` see them as a sequential program would.
//! * **Pops during `g`**: the owner issues `fence(SeqCst)` in each, the textbook pair.
//! * **Pops after the switch back** (to `g + 1`, even): the owner stores `g + 1` and then
//!   issues a heavy fence itself, before its next pop. That `membarrier` runs a full barrier
//!   X in the thief's thread at some point between the call and its return; a read of `mode`
//!   after X sees `g + 1` (the owner's store precedes the call). The thief's second read saw
//!   `g`, so it is before X, and so are its reads of `top` and `bottom` (Acquire keeps them in
//!   order before it). Those reads are then complete before the membarrier returns, hence
//!   before any later pop's store of `bottom`; and the pop's read of `top`, after the
//!   membarrier's barrier in the owner, reads no older value than the thief read. So the pop
//!   and the steal can only both aim at the last entry, which both take by compare-and-swap.
//!
//! A thief whose second read sees a new generation treats the pops of every mode as possible
//! and issues the heavy fence, which covers them all. The owner's own reads never depend on
//! the mode: it knows its mode (a `Cell`), and its store of a new mode is ordered after its
//! earlier pops by Release.
//!
//! Where the kernel refuses `membarrier`, and in the `fenced` mode, both sides always use
//! `fence(SeqCst)` and the deques never switch ([`heavy_fence_is_membarrier`] says whether the
//! kernel agreed, [`FenceMode::applied`] what a pool then applies; a deque made with an
//! explicit [`Switching`] still switches there, harmlessly, which the tests use). Every heavy
//! fence issued for the deque (a thief's on the asymmetric side, an owner's switching back:
//! a `membarrier`, or on the fallback a `fence(SeqCst)`), every switch to symmetric mode, and
//! the pops of every symmetric window that ended are counted in the [`FenceCounts`] the deque
//! was made with, which a pool shares among its deques and reports.
//!
//! Why a deque of our own rather than `crossbeam-deque`: its `pop` issues a SeqCst fence every
//! time (and the sleep protocol needed another after each push), which made `abp`'s fib `fj`
//! at P = 1 three times as slow as with this deque (`paper-figures/measurements.md`, "Our
//! deque against crossbeam-deque").
//!
//! The same asymmetric pair serves the runtimes' sleep protocol, whatever the deques' modes: a
//! worker going to sleep calls [`heavy_fence`] after announcing itself and before its last look
//! at the deques, and a push is followed by [`light_fence`] before reading the sleeper count.
//!
//! # Invariants
//!
//! * `top <= bottom + 1` at all times, and `bottom - top` (when positive) entries at indices
//!   `[top, bottom)` are live; only the owner writes `bottom` and the buffer; `top` only grows,
//!   by compare-and-swap (thieves, and the owner taking the last entry).
//! * Only the owner writes `mode`, and only between two pops (at the start of a pop, before
//!   its first access to the deque, or outside pops); while it is odd every pop issues
//!   `fence(SeqCst)` (some even-mode pops do too: on the fallback, and the one that looks),
//!   and a switch from odd to even is followed by the owner's heavy fence before its next pop.
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
//! push that reuses a stolen slot or grows the buffer during a steal, two thieves with the
//! owner on one entry, and the same races with the owner switching modes at every pop
//! as often as it can ([`Switching::EVERY_POP`]); each entry must be taken exactly once, whole, with what the owner
//! wrote before pushing it visible to the taker. What the models cover and what they do not:
//!
//! * **The fence pair is the fallback's**, `fence(SeqCst)` on both sides (the `fenced` mode's):
//!   loom cannot model `membarrier`, a barrier the
//!   kernel makes the other threads execute, so under loom [`heavy_fence_is_membarrier`] is
//!   false. The asymmetric pair is correct if `membarrier` plus the owner's compiler fence act
//!   as the fallback's two fences, which is the argument above, not something loom checked.
//!   The models do show what rests on it: with the owner's fence reduced to a compiler fence
//!   and no `membarrier` (the owner side as it is, the thief side unable to make it a
//!   barrier), two steals and two pops take one entry twice. Likewise the switching models
//!   run with every fence a full one: they show that switching at every pop loses and
//!   duplicates no entry and races on nothing, not that the generation protocol is needed (with
//!   full fences everywhere, dropping the thief's second read of `mode` would pass too); the
//!   argument for the switch back rests on the membarrier's barrier in the thief, which loom
//!   cannot place.
//! * loom gives SeqCst *fences* a total order that also synchronizes (each fence acquires
//!   what every earlier one released), which is stronger than C11; SeqCst *accesses* it treats
//!   as AcqRel, weaker than C11. A bug that only C11's weaker fences expose can be missed.
//! * loom does not produce load buffering (a load reading a store that comes later in its
//!   own thread's future), so the Acquire of `top` in `make_room`, which orders a thief's read
//!   of a slot before the owner's overwrite of it, is not checked: weakened to Relaxed, the
//!   models still pass.
//! * Scenarios are small (two or three threads, at most three entries, a buffer of 2 under
//!   loom so that reuse and growth are reached) and explored at a bounded preemption depth.

use crate::config::FenceMode;
use crate::sync::{
    AtomicIsize, AtomicPtr, AtomicU64, AtomicUsize, Ordering, compiler_fence, fence,
};
use std::cell::{Cell, UnsafeCell};
use std::sync::Arc;
#[cfg(not(loom))]
use std::sync::OnceLock;
#[cfg(not(loom))]
use std::sync::atomic::AtomicU8;
use std::time::Instant;

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
/// threads), so the models check the fallback, `fence(SeqCst)` on both sides, as the `fenced`
/// mode does.
#[cfg(loom)]
fn membarrier_available() -> bool {
    false
}

#[cfg(not(loom))]
#[cold]
fn register_membarrier() -> bool {
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| {
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

/// Does the kernel let this process use `membarrier` (so that [`heavy_fence`] is one, and
/// [`light_fence`] only a compiler fence)? Every [`FenceMode`] but `fenced` needs it.
pub fn heavy_fence_is_membarrier() -> bool {
    membarrier_available()
}

/// The owner's side of the asymmetric fence, paired with [`heavy_fence`] (a pool uses its own
/// pair, [`FenceCounts::light_fence`] and [`FenceCounts::heavy_fence`], or an [`Owner`]'s
/// [`Owner::light_fence`], which follow its fence mode).
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
    heavy(membarrier_available());
}

/// The heavy side of the pair: a `membarrier` if `membarrier` (the process is registered),
/// then a full fence.
#[inline]
pub(crate) fn heavy(membarrier: bool) {
    if membarrier {
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

/// A pool's fence setting and what its deques count of their fences, shared by all of them
/// (each deque is made with an `Arc` of one): the mode the pool applies ([`FenceMode::applied`]
/// of its configuration's) and the costs the modes trade against each other.
#[derive(Debug)]
pub struct FenceCounts {
    /// The mode applied (`fenced` where the kernel refuses `membarrier`).
    mode: FenceMode,
    /// Whether its heavy fence is a `membarrier` (the light one then a compiler fence).
    membarrier: bool,
    /// Heavy fences issued for the deques: by thieves in asymmetric mode (a `membarrier`, or
    /// on the fallback a `fence(SeqCst)`), by owners switching back to asymmetric mode, and
    /// those a pool adds for its sleepers ([`FenceCounts::add_heavy`]).
    heavy: AtomicU64,
    /// Switches of a deque from asymmetric to symmetric mode.
    to_symmetric: AtomicU64,
    /// Pops made in symmetric mode (each with a `fence(SeqCst)`), added when a window ends:
    /// the pops of a window still open are not counted yet.
    symmetric_pops: AtomicU64,
}

impl FenceCounts {
    /// Zeroed counts of a pool in the default mode, `adaptive` (see [`FenceCounts::for_mode`]).
    pub fn new() -> Self {
        FenceCounts::for_mode(FenceMode::default())
    }

    /// Zeroed counts of a pool whose deques use `mode`, as this machine allows it
    /// ([`FenceMode::applied`]).
    pub fn for_mode(mode: FenceMode) -> Self {
        let mode = mode.applied();
        FenceCounts {
            mode,
            membarrier: mode.uses_membarrier(),
            heavy: AtomicU64::new(0),
            to_symmetric: AtomicU64::new(0),
            symmetric_pops: AtomicU64::new(0),
        }
    }

    /// The fence mode the pool's deques apply.
    pub fn mode(&self) -> FenceMode {
        self.mode
    }

    /// The heavy side of the pool's fence pair (a sleeper's, see [`crate::deque`]): a
    /// `membarrier` and a full fence, or only the full fence in the `fenced` mode. Not counted:
    /// see [`FenceCounts::add_heavy`].
    pub fn heavy_fence(&self) {
        heavy(self.membarrier);
    }

    /// The light side of the pool's fence pair: a compiler fence, or a full one in the
    /// `fenced` mode.
    #[inline(always)]
    pub fn light_fence(&self) {
        owner_fence(self.membarrier);
    }

    /// Counts a heavy fence issued elsewhere on the deques' behalf (a sleeper's, see
    /// [`heavy_fence`]).
    pub fn add_heavy(&self) {
        self.heavy.fetch_add(1, Ordering::Relaxed);
    }

    /// Heavy fences so far (see the field docs).
    pub fn heavy(&self) -> u64 {
        self.heavy.load(Ordering::Relaxed)
    }

    /// The counts as a pool's statistics: `heavy_fences`, `fence_switches` (to symmetric
    /// mode), `symmetric_pops`. Relaxed: read after the run, which the pool's own
    /// synchronisation orders after every increment.
    pub fn named(&self) -> [(&'static str, u64); 3] {
        [
            ("heavy_fences", self.heavy()),
            ("fence_switches", self.to_symmetric.load(Ordering::Relaxed)),
            (
                "symmetric_pops",
                self.symmetric_pops.load(Ordering::Relaxed),
            ),
        ]
    }

    /// Zeroes the counts (between runs).
    pub fn reset(&self) {
        for c in [&self.heavy, &self.to_symmetric, &self.symmetric_pops] {
            c.store(0, Ordering::Relaxed);
        }
    }
}

impl Default for FenceCounts {
    fn default() -> Self {
        Self::new()
    }
}

/// When a deque's owner switches its fence mode (see the module documentation). The owner
/// decides only at the start of its own pops, and pays for it only where the mode's costs are:
///
/// * **Asymmetric**, a pop that empties the deque or takes its last entry and finds `top`
///   moved since the last look (thieves took entries, or the owner a last entry itself) has
///   the next pop *look* at the heavy fences thieves issued on the deque since: `burst` of
///   them, or any when the previous look that found some was less than `within_ns` ago, and
///   the deque goes symmetric. Thieves take the oldest entries, so an owner meets its losses
///   when it has popped down to them; the pops in between (a join's fast path) pay nothing
///   at all for the watch. An owner busy in one long task does not look meanwhile, so
///   thieves may take every entry of its deque with a heavy fence each before it switches;
///   with fine-grained work (many pops) it switches at its first few steals.
/// * **Symmetric**, every `window` pops the owner reviews the *steal rate*: a moving average
///   of entries stolen per window (`top`'s advance, less the owner's own takes of a last entry)
///   in 64ths, which each review multiplies by 31/32 (the decay rounded up, so that it reaches
///   0) and raises by 2 per steal: a steady x steals per window settle between 64x - 32 and
///   64x. A symmetric stint starts at `start_rate`, and the deque goes back once the rate has
///   fallen below `to_asymmetric`, which costs the owner one heavy fence.
///
/// The default weighs one `membarrier` (an interrupt on every core running the process: a few
/// microseconds of CPU per core, tens of microseconds in all on 16 cores) against a
/// `fence(SeqCst)` per pop (tens of cycles): two of them within 100 microseconds cost at least
/// what fencing every pop of that time would, so the deque switches; it returns after about 32
/// windows of 1024 pops without a steal, so a deque stolen from in bursts (UTS's) stays
/// symmetric between them, and one nobody steals from after the first steals (fib's) spends a
/// few percent of its pops fenced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Switching {
    /// Pops per review of a symmetric deque; 0: never switch (the deque stays asymmetric).
    pub window: u32,
    /// Heavy fences found at one look that make an asymmetric deque symmetric (0: every look
    /// does, even one that found none).
    pub burst: u64,
    /// Two looks that found heavy fences this close (nanoseconds) make it symmetric too.
    pub within_ns: u64,
    /// The steal rate a symmetric stint starts with (64ths of a steal per window).
    pub start_rate: u64,
    /// The rate below which a symmetric deque goes back.
    pub to_asymmetric: u64,
}

impl Switching {
    /// Symmetric at 2 heavy fences at one look or two looks 100 microseconds apart; a review
    /// every 1024 pops, starting at a rate of 64 (one steal a window), back below 16.
    pub const ADAPTIVE: Switching = Switching {
        window: 1024,
        burst: 2,
        within_ns: 100_000,
        start_rate: 64,
        to_asymmetric: 16,
    };

    /// Symmetric at every heavy fence, back after a window of 8 pops without a steal: the
    /// mode follows every steal and every quiet stretch, so that the pools' stress tests
    /// switch often, at irregular points.
    pub const EAGER: Switching = Switching {
        window: 8,
        burst: 1,
        within_ns: 0,
        start_rate: 2,
        to_asymmetric: 2,
    };

    /// Never switch.
    pub const NEVER: Switching = Switching {
        window: 0,
        burst: u64::MAX,
        within_ns: 0,
        start_rate: 0,
        to_asymmetric: 0,
    };

    /// Switch as often as the owner can, whatever the thieves did (for the tests and loom
    /// models): to symmetric at every look (the pop after one that emptied the deque or took
    /// its last entry), back after every symmetric pop, so that the asymmetric pops between,
    /// with a compiler fence only, meet steals of thieves that read a symmetric generation.
    pub const EVERY_POP: Switching = Switching {
        window: 1,
        burst: 0,
        within_ns: 0,
        start_rate: 0,
        to_asymmetric: u64::MAX,
    };
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
    /// The fence mode's generation: odd while symmetric. Only the owner writes it, between
    /// pops (see the module documentation).
    mode: AtomicUsize,
    /// Heavy fences thieves issued on this deque (the owner's review reads it).
    heavy: AtomicU64,
    /// Whether the heavy fence is a `membarrier` (the pool's mode uses one).
    membarrier: bool,
    buffer: AtomicPtr<Buffer>,
    /// The pool's counts.
    counts: Arc<FenceCounts>,
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
    /// Whether `membarrier` is available: the sleep protocol's light fence is then a compiler
    /// fence ([`Owner::light_fence`]), whatever the deque's mode.
    membarrier: bool,
    /// Whether the next pop takes the slow way, `pop_fenced`: in symmetric mode and on the
    /// fallback (every pop with `fence(SeqCst)`), or once after an asymmetric pop that found
    /// `top` moved (to look first).
    pop_fences: Cell<bool>,
    /// Asymmetric mode: `top` as of the owner's last look (a pop that finds it moved looks at
    /// the heavy fences thieves issued). Symmetric mode: `top` when the window began.
    seen_top: Cell<isize>,
    /// The rest of the mode's state, out of the way of the fields every push and pop uses
    /// (they share the worker's cache lines with its other hot state).
    modes: Box<Modes>,
}

/// An owner's fence-mode state that pushes and pops do not touch on their fast paths.
struct Modes {
    /// The value of `inner.mode` (only the owner writes it).
    mode: Cell<usize>,
    /// When to switch modes.
    switching: Switching,
    /// `inner.heavy` at the last look (asymmetric mode).
    seen_heavy: Cell<u64>,
    /// When the last look found heavy fences (asymmetric mode).
    last_event: Cell<Option<Instant>>,
    /// Symmetric mode: pops left in the window.
    left: Cell<u32>,
    /// Symmetric mode: last entries the owner took itself (advancing `top`) in the window.
    own_takes: Cell<u64>,
    /// Symmetric mode: the steal rate, in 64ths of a steal per window (see [`Switching`]).
    rate: Cell<u64>,
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

/// A new empty deque with counts of its own, in the default mode (`adaptive`): the owner's
/// handle and a thief's handle.
pub fn new(initial_capacity: usize) -> (Owner, Thief) {
    in_pool(initial_capacity, &Arc::new(FenceCounts::new()))
}

/// A new empty deque of a pool: it counts its fences in the pool's `counts` and fences and
/// switches modes as their [`FenceMode`] says.
pub fn in_pool(initial_capacity: usize, counts: &Arc<FenceCounts>) -> (Owner, Thief) {
    with(
        initial_capacity,
        Arc::clone(counts),
        counts.mode().switching(),
    )
}

/// A new empty deque that counts its fences in `counts`, fences as their mode says (with a
/// `membarrier` or not), and switches modes by `switching`. Without `membarrier` (the
/// `fenced` mode) the deque's mode never matters: both sides always fence.
pub fn with(
    initial_capacity: usize,
    counts: Arc<FenceCounts>,
    switching: Switching,
) -> (Owner, Thief) {
    let cap = initial_capacity.max(MIN_CAPACITY).next_power_of_two();
    let mut first = Buffer::new(cap);
    let ptr: *mut Buffer = &mut *first;
    let slots = first.slots.as_ptr();
    let membarrier = counts.membarrier;
    let inner = Arc::new(Inner {
        bottom: AtomicIsize::new(0),
        top: AtomicIsize::new(0),
        mode: AtomicUsize::new(0),
        heavy: AtomicU64::new(0),
        membarrier,
        buffer: AtomicPtr::new(ptr),
        counts,
        retired: UnsafeCell::new(vec![first]),
    });
    (
        Owner {
            inner: Arc::clone(&inner),
            slots: Cell::new(slots),
            mask: Cell::new(cap - 1),
            bottom: Cell::new(0),
            limit: Cell::new(cap as isize),
            membarrier,
            pop_fences: Cell::new(!membarrier),
            // Switching as often as it can: the first look, whatever `top` is.
            seen_top: Cell::new(if switching.burst == 0 { isize::MIN } else { 0 }),
            modes: Box::new(Modes {
                mode: Cell::new(0),
                switching,
                seen_heavy: Cell::new(0),
                last_event: Cell::new(None),
                left: Cell::new(0),
                own_takes: Cell::new(0),
                rate: Cell::new(0),
            }),
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
        if self.pop_fences.get() {
            self.pop_fenced()
        } else {
            self.pop_with::<false>()
        }
    }

    /// A pop with `fence(SeqCst)` (in symmetric mode, or on the fallback), or the one after an
    /// asymmetric pop that found `top` moved, which looks first. Between two pops: the end of a
    /// symmetric window, or the look (see [`Switching`]).
    #[cold]
    #[inline(never)]
    fn pop_fenced(&self) -> Option<Entry> {
        if self.is_symmetric() {
            let left = self.modes.left.get().wrapping_sub(1);
            self.modes.left.set(left);
            if left == 0 {
                self.review_window();
            }
        } else {
            self.pop_fences.set(!self.membarrier);
            // Relaxed: a count for a decision, as in `look`.
            let t = self.inner.top.load(Ordering::Relaxed);
            if t != self.seen_top.get() {
                self.look(t);
            }
        }
        if self.pop_fences.get() {
            self.pop_with::<true>()
        } else {
            self.pop_with::<false>()
        }
    }

    /// The pop itself, with the owner's half of the SeqCst fence pair: a compiler fence in
    /// asymmetric mode (the thieves' is a membarrier), a full one if `FENCED` (see the module
    /// documentation). An asymmetric pop that empties the deque and finds `top` moved since
    /// the last look has the next pop look (see [`Switching`]).
    #[inline(always)]
    fn pop_with<const FENCED: bool>(&self) -> Option<Entry> {
        let inner = &*self.inner;
        let b = self.bottom.get() - 1;
        inner.bottom.store(b, Ordering::Relaxed);
        if FENCED {
            fence(Ordering::SeqCst);
        } else {
            compiler_fence(Ordering::SeqCst);
        }
        let t = inner.top.load(Ordering::Relaxed);
        if t > b {
            // Empty.
            inner.bottom.store(b + 1, Ordering::Relaxed);
            self.look_if_moved::<FENCED>(t);
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
            if won {
                self.modes.own_takes.set(self.modes.own_takes.get() + 1);
            }
            self.look_if_moved::<FENCED>(t);
            return won.then_some(e);
        }
        // Not the last entry: nothing more to do (nor to look at; see `look_if_moved`).
        self.bottom.set(b);
        Some(e)
    }

    /// After an asymmetric pop that read `top` at `t` and found the deque empty or took its
    /// last entry: if `top` moved since the last look, the next pop goes the fenced way, which
    /// looks first. Only those pops look: thieves take the oldest entries, so an owner whose
    /// entries were stolen meets the fact when it has popped down to them, and pops of other
    /// entries (a join's fast path) pay nothing.
    #[inline(always)]
    fn look_if_moved<const FENCED: bool>(&self, t: isize) {
        if !FENCED && t != self.seen_top.get() {
            self.pop_fences.set(true);
        }
    }

    /// The owner's side of the sleep protocol's asymmetric fence, as the pool's
    /// [`FenceCounts::light_fence`], from the flag this handle cached at its creation (no
    /// pointer chased on the push path). The deque's mode does not change it: a sleeper always
    /// issues the heavy side.
    #[inline(always)]
    pub fn light_fence(&self) {
        owner_fence(self.membarrier);
    }

    /// Asymmetric mode, before a pop, `top` at `t`, moved since the last look (a steal, or the
    /// owner's own take of a last entry): goes symmetric if thieves issued `burst` heavy
    /// fences on the deque since the last look, or if this look and the last one that found
    /// any are less than `within_ns` apart (see [`Switching`]).
    #[cold]
    #[inline(never)]
    fn look(&self, t: isize) {
        let inner = &*self.inner;
        let sw = self.modes.switching;
        self.seen_top.set(t);
        if sw.window == 0 {
            return;
        }
        // Relaxed: a count for a decision, not synchronisation (the switch's own orderings
        // follow).
        let h = inner.heavy.load(Ordering::Relaxed);
        let events = h.wrapping_sub(self.modes.seen_heavy.replace(h));
        if events == 0 && sw.burst > 0 {
            return;
        }
        let recent = Self::clock().is_some_and(|now| {
            let last = self.modes.last_event.replace(Some(now));
            last.is_some_and(|l| now.duration_since(l).as_nanos() < u128::from(sw.within_ns))
        });
        if events >= sw.burst || recent {
            self.modes.left.set(sw.window);
            self.modes.own_takes.set(0);
            self.modes.rate.set(sw.start_rate);
            self.switch_mode(self.modes.mode.get() + 1);
            inner.counts.to_symmetric.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The time of a look; none under loom, whose executions must not depend on a clock.
    fn clock() -> Option<Instant> {
        if cfg!(loom) {
            None
        } else {
            Some(Instant::now())
        }
    }

    /// Symmetric mode, the end of a window of pops: updates the steal rate with the entries
    /// stolen in the window, and goes back to asymmetric mode if it fell below
    /// `to_asymmetric` (see [`Switching`]).
    #[cold]
    #[inline(never)]
    fn review_window(&self) {
        let inner = &*self.inner;
        let sw = self.modes.switching;
        self.modes.left.set(sw.window);
        inner
            .counts
            .symmetric_pops
            .fetch_add(u64::from(sw.window), Ordering::Relaxed);
        // Relaxed: counts for a decision, as in `look`.
        let t = inner.top.load(Ordering::Relaxed);
        let advanced = (t - self.seen_top.replace(t)).max(0) as u64;
        let stolen = advanced
            .saturating_sub(self.modes.own_takes.replace(0))
            .min(1 << 20);
        let rate = self.modes.rate.get();
        // Rounding the decay up lets a rate without steals reach 0.
        let rate = rate - rate.div_ceil(32) + 2 * stolen;
        self.modes.rate.set(rate);
        if rate < sw.to_asymmetric {
            self.switch_mode(self.modes.mode.get() + 1);
            // Before the next pop with a compiler fence only: every thief that read the old
            // generation has read `bottom` by the time this returns (see the module
            // documentation).
            heavy(self.membarrier);
            inner.counts.add_heavy();
            self.modes
                .seen_heavy
                .set(inner.heavy.load(Ordering::Relaxed));
            if sw.burst == 0 {
                // Switching as often as it can: the next look, whatever `top` is.
                self.seen_top.set(isize::MIN);
            }
        }
    }

    /// Publishes generation `g` of the mode and fences pops accordingly from the next one on.
    fn switch_mode(&self, g: usize) {
        self.modes.mode.set(g);
        // Release: the pops made so far happen before the reads of a thief that reads `g`.
        self.inner.mode.store(g, Ordering::Release);
        self.pop_fences.set(!self.membarrier || g % 2 == 1);
    }

    /// Switches to symmetric mode now, if it is not in it: for a deque its owner stops
    /// working on while thieves may go on stealing from it (a `prows` deque suspended at a
    /// touch), so that they need no heavy fence. Its rate starts at `to_asymmetric`, so once
    /// an owner pops it again, the first window without a steal brings it back. Between pops,
    /// as every switch; nothing on the fallback or with [`Switching::NEVER`].
    pub fn make_symmetric(&self) {
        let g = self.modes.mode.get();
        if g.is_multiple_of(2) && self.membarrier && self.modes.switching.window != 0 {
            self.modes.left.set(self.modes.switching.window);
            self.modes.own_takes.set(0);
            // No steal seen yet: back after the first window without one.
            self.modes.rate.set(self.modes.switching.to_asymmetric);
            self.seen_top.set(self.inner.top.load(Ordering::Relaxed));
            self.switch_mode(g + 1);
            self.inner
                .counts
                .to_symmetric
                .fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Is the deque in symmetric mode (its pops fenced)?
    pub fn is_symmetric(&self) -> bool {
        self.modes.mode.get() % 2 == 1
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
        // Acquire: a symmetric generation read here orders the pops before its switch before
        // everything that follows (see the module documentation).
        let g = inner.mode.load(Ordering::Acquire);
        let t = inner.top.load(Ordering::Acquire);
        // Cheap look first: an apparently empty deque costs no fence.
        if inner.bottom.load(Ordering::Acquire) <= t {
            return Stolen::Empty;
        }
        let b = if g % 2 == 1 {
            // Symmetric: the owner fences its pops.
            fence(Ordering::SeqCst);
            let b = inner.bottom.load(Ordering::Acquire);
            // Acquire on `bottom` keeps this read after it. Still `g`: the owner has not
            // switched back since, so `b` was read before any pop it fences no more.
            if inner.mode.load(Ordering::Acquire) == g {
                b
            } else {
                self.heavy_fence();
                inner.bottom.load(Ordering::Acquire)
            }
        } else {
            // Asymmetric: the thief's half of the pair.
            self.heavy_fence();
            inner.bottom.load(Ordering::Acquire)
        };
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

    /// The heavy fence, counted for the owner's look and in the pool's counts.
    fn heavy_fence(&self) {
        heavy(self.inner.membarrier);
        self.inner.heavy.fetch_add(1, Ordering::Relaxed);
        self.inner.counts.add_heavy();
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

    /// Every pushed value is taken exactly once by the owner or one of two thieves, with the
    /// pools' switching.
    #[test]
    fn concurrent_pops_and_steals_take_each_entry_once() {
        pops_and_steals(new(16), 200_000, 0);
    }

    /// The same with the owner switching modes as often as it can: symmetric at every look,
    /// back (with a heavy fence) after every symmetric pop, asymmetric pops between.
    #[test]
    fn concurrent_pops_and_steals_with_a_switch_at_every_pop() {
        let counts = Arc::new(FenceCounts::new());
        // Drained every 4 pushes: the owner meets the deque's bottom, and looks, often.
        pops_and_steals(
            with(16, Arc::clone(&counts), Switching::EVERY_POP),
            20_000,
            4,
        );
        let n = counts.named();
        assert!(n[1].1 > 1000, "{n:?}: too few switches to symmetric mode");
    }

    /// The same with a short window and a low threshold, so that the mode follows the
    /// thieves' pace and switches at irregular points.
    #[test]
    fn concurrent_pops_and_steals_with_eager_switching() {
        pops_and_steals(
            with(16, Arc::new(FenceCounts::new()), Switching::EAGER),
            100_000,
            16,
        );
    }

    /// The owner pushes `n` values (popping every third, and popping the deque empty every
    /// `drain_every` if not 0), two thieves steal until it is done; every value must be taken
    /// exactly once, whole.
    fn pops_and_steals((o, t): (Owner, Thief), n: usize, drain_every: usize) {
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
        for i in 0..n {
            o.push([i, !i]);
            if i % 3 == 0
                && let Some(e) = o.pop()
            {
                assert_eq!(e[1], !e[0]);
                mine.push(e[0]);
            }
            if drain_every != 0 && i % drain_every == 0 {
                while let Some(e) = o.pop() {
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
        assert_eq!(mine.len(), n);
        assert!(mine.iter().enumerate().all(|(i, &v)| i == v));
    }

    /// Steals from one thread at a steady pace: the deque goes symmetric at the second steal
    /// (two looks that found a heavy fence; `within_ns` unbounded here, so that a preempted
    /// test thread cannot move the switch), stays there while the steals go on (counting its
    /// pops), and goes back, with one heavy fence, once they stop. `NEVER` never switches.
    #[test]
    fn steal_pressure_switches_the_mode_and_back() {
        let counts = Arc::new(FenceCounts::new());
        let sw = Switching {
            within_ns: u64::MAX,
            ..Switching::ADAPTIVE
        };
        let (o, t) = with(16, Arc::clone(&counts), sw);
        let window = sw.window as usize;
        // Three entries an iteration, popped to the empty deque (where the owner looks: four
        // pops an iteration); a steal every window/6 iterations: about 1.5 a window of pops.
        let mut went_symmetric = None;
        for i in 0..40 * window {
            for k in 0..3 {
                o.push([i, k]);
            }
            if i % (window / 6) == 0 {
                assert!(matches!(t.steal(), Stolen::Entry(_)));
            }
            while o.pop().is_some() {}
            if o.is_symmetric() && went_symmetric.is_none() {
                went_symmetric = Some(i);
            }
        }
        let at = went_symmetric.expect("two steals in quick succession never made it symmetric");
        assert!(at <= window / 6 + 1, "symmetric only after {at} iterations");
        assert!(o.is_symmetric(), "went back although the steals went on");
        let [(_, heavy), (_, switches), (_, sym_pops)] = counts.named();
        assert_eq!(switches, 1);
        assert!(
            sym_pops >= (40 * window) as u64,
            "{sym_pops} symmetric pops"
        );
        // Symmetric steals issue no heavy fence: only the two before the switch count.
        assert_eq!(heavy, 2, "heavy fences");
        // No more steals: back to asymmetric within 64 windows (from a steady 1.5 steals a
        // window, the rate of about 70 decays below 16 in about 35), with one heavy fence.
        for i in 0..64 * window {
            o.push([i, 0]);
            o.pop();
        }
        assert!(!o.is_symmetric(), "still symmetric without steals");
        assert_eq!(counts.named()[0].1, heavy + 1);

        let (o, t) = with(16, Arc::new(FenceCounts::new()), Switching::NEVER);
        for i in 0..4 * window {
            o.push([i, 0]);
            o.push([i, 1]);
            t.steal();
            while o.pop().is_some() {}
        }
        assert!(!o.is_symmetric());
        // Its pops stay unfenced where `membarrier` is available.
        assert_eq!(o.pop_fences.get(), !heavy_fence_is_membarrier());
    }

    /// A pool's mode reaches its deques through its counts: `fenced` fences every pop and
    /// never switches, whatever the kernel allows; `asymmetric` never switches either.
    #[test]
    fn a_pools_fence_mode_reaches_its_deques() {
        let fenced = Arc::new(FenceCounts::for_mode(FenceMode::Fenced));
        assert_eq!(fenced.mode(), FenceMode::Fenced);
        let (o, t) = in_pool(16, &fenced);
        assert!(o.pop_fences.get() && !o.membarrier && !t.inner.membarrier);
        assert_eq!(o.modes.switching, Switching::NEVER);
        for i in 0..100 {
            o.push([i, 0]);
            o.push([i, 1]);
            assert!(matches!(t.steal(), Stolen::Entry(_)));
            while o.pop().is_some() {}
        }
        assert!(!o.is_symmetric());
        assert_eq!(fenced.named()[1].1, 0, "a fenced deque switched");
        let asym = Arc::new(FenceCounts::for_mode(FenceMode::Asymmetric));
        let (o, _) = in_pool(16, &asym);
        assert_eq!(o.modes.switching, Switching::NEVER);
        assert_eq!(o.membarrier, heavy_fence_is_membarrier());
        let (o, _) = in_pool(16, &Arc::new(FenceCounts::for_mode(FenceMode::Eager)));
        let eager = if heavy_fence_is_membarrier() {
            Switching::EAGER
        } else {
            Switching::NEVER
        };
        assert_eq!(o.modes.switching, eager);
    }
}
