//! `prows`: proactive work stealing with futures (Singer, Xu and Lee, PPoPP 2019, Algorithms 1
//! and 2) on stackful fibers, with Cilk-F's eager future creation on a new fiber.
//!
//! # The algorithm, point by point
//!
//! * Every worker has one **active deque** and a **stealable set** of deques it does not work on.
//!   Deques are objects (`Dq`) that move between workers; the owner works at the bottom of its
//!   active deque exactly as in [`crate::abp`] (same Chase-Lev deque, same join, same work-first
//!   fork of futures and spawns on a new fiber, same scope sync). **Fork-join without futures
//!   behaves exactly as `abp`**: a join's sync suspends only its fiber, which the last finisher
//!   pushes onto its own active deque.
//! * A **touch** (`get`) of an unfinished future (Algorithm 1, lines 29-35): the touching fiber is
//!   the future-join node; it is recorded at the deque's bottom (`pushBottomImplicit`: kept in
//!   the deque object, not ready), and the whole deque is **suspended**: if it still holds ready
//!   nodes it goes into the stealable set of a uniformly random worker (possibly this one),
//!   otherwise into none; it is added to the future's set of suspended deques (a lock-free
//!   list in one word, which the put swaps out whole: `prows/future.rs`); the worker has no
//!   active deque any more and steals.
//! * A **put** (the future task's end, lines 36-42) marks every deque suspended on the future
//!   **resumable** (its join fiber is pushed at its bottom, now ready); one that was in no
//!   stealable set goes into a uniformly random worker's set; then, if the putting worker's
//!   active deque is empty, it removes one of them at random and makes it its active deque
//!   (`setToActive`, lines 10-19), so the resumed fiber runs next.
//! * A **steal** (Algorithm 2): a uniformly random victim (possibly itself), then a uniformly
//!   random deque among the victim's active deque and stealable deques. A **muggable** deque is
//!   taken whole and becomes the thief's active deque; otherwise the thief pops its top. A deque
//!   left without ready nodes leaves the stealable set (a resumable one is then dropped; a
//!   suspended one stays with its future); a resumable deque stolen from becomes muggable.
//! * `rebalanceStealables(v)` runs on every removal from a stealable set (in `setToActive` and
//!   after a steal emptied a deque): it picks a random worker v'; if v' is not v and has a
//!   stealable deque, one moves from v' to v. (The paper's placement only; see below.)
//! * **Latency-hiding futures** (`Futures::latency_future`, the Rayon-LH thesis's ProWS-R): a
//!   touch of an unfinished one suspends the deque as above; its put is done by the pool's I/O
//!   thread when the I/O future completes (`put_external`: the thesis's callback, its
//!   Algorithm 2), which has no active deque to make one of them active: every deque becomes
//!   resumable in a stealable set and a sleeping worker is woken. The deque states are the
//!   thesis's Figure 3.1 (`Status`). See `fiberpool/latency.rs`.
//!
//! # Placement
//!
//! Where a deque goes when it becomes stealable (suspended with ready nodes, or made resumable
//! by a put while in no stealable set), and whether removals rebalance, is the pool's
//! [`Placement`] (`PoolConfig::placement`); everything else is the same code:
//!
//! | `placement` | where a stealable deque goes | `rebalanceStealables` |
//! |---|---|---|
//! | [`Placement::Paper`] (default) | a uniformly random worker (Algorithm 1) | on every removal from a stealable set |
//! | [`Placement::Artifact`] | the less loaded of two uniformly random workers (fewer stealable deques; ties go to the first) | never |
//!
//! The paper's analysis needs each stealable deque to sit at a uniformly random worker, which
//! its rebalancing preserves under removals; the authors' artifact (Cilk-F) instead keeps the
//! sets even with the power of two choices at insertion and does no rebalancing. Both are
//! offered so that the two can be compared (`stealbench run --runtime prows/placement=artifact
//! ...`).
//!
//! The stealable sets, the deques' states and the active-deque slots are protected by one
//! pool-wide mutex: the paper assumes concurrent sets with constant amortized operations; the
//! operations that change them (suspend, resume, mug, a steal that empties a stealable deque
//! or steals from a resumable one) are rare next to pushes and pops, which stay lock-free on
//! the owner's active deque, and next to steals from active deques, which take no lock either
//! (below). The random choices are exactly the paper's.
//!
//! # Stealing without the lock
//!
//! In fork-join every steal is from some worker's active deque, and the locked path does no
//! bookkeeping for one; so that thieves are not serialised on the mutex (as `abp`'s are not),
//! a steal attempt takes the lock only where the sets or a deque's state may change:
//!
//! * Every worker has a `Slot` that publishes, for readers without the lock, its active
//!   deque (a pointer under a seqlock: a version that is odd while the pointer changes) and the
//!   size of its stealable set. Only the lock's holder writes them, every write of an active
//!   deque going through `ProwsDeques::set_active`.
//! * The thief draws the victim v, then reads v's version, pointer and set size, and draws the
//!   deque k among them as before. If k is v's active deque, it steals from it without the
//!   lock and reads the version again. Unchanged, the slot held that deque, active, from
//!   before the pointer was read until after the steal: nothing to account for (the locked
//!   path does nothing for an active deque). Changed (the deque was suspended, or replaced,
//!   meanwhile), the thief takes the lock and does for the deque's status *now* what the
//!   locked path does after a steal: one left without ready nodes leaves its stealable set
//!   (and rebalances), a resumable one becomes muggable. The orderings: the thief's steal ends
//!   with a SeqCst compare-and-swap of the deque's `top` and its second read of the version
//!   is SeqCst; the writer stores the odd version and issues a SeqCst fence before it reads
//!   anything of the deque (whether it is empty, as a suspension does). Either the thief's read
//!   follows the fence in the SeqCst order, and it sees the version changed, or the fence
//!   follows the thief's compare-and-swap, and the writer sees the steal; so no steal escapes
//!   both the writer's and the thief's bookkeeping (`set_active` and `Local::steal` say it
//!   line by line).
//! * An odd version, a draw of a stealable deque, and the thief's need of an active deque of
//!   its own (after a suspension) take the lock, as before. A stealable deque drawn without
//!   the lock keeps its draw if the victim's slot and set size are still the ones the draw
//!   saw, else the locked path draws again from what it finds.
//! * A thief may dereference a deque's pointer after the deque left the slot. So that it is
//!   never freed meanwhile, the pool keeps every deque it made until it is dropped, and a
//!   deque nothing else refers to any more (an active deque replaced when empty, a resumable
//!   one emptied by a steal) goes to a free list, from which the next new active deque comes.
//!   Memory stays at the most deques alive at once (they are made per suspension: 24,000 to
//!   37,000 for one `hqsort` gf run at `--size quick` on 2 workers, so never freeing them
//!   was not an option), and a thief's attempt costs no epoch pin (a SeqCst read-modify-write
//!   with `crossbeam-epoch`) or hazard pointer. A recycled deque may be stolen from by a thief
//!   that read its pointer in an earlier life: it is then some worker's active deque, or
//!   empty, and the version check sends that thief to the bookkeeping.
//!
//! Idle workers back off and sleep as in `abp` (the same Dekker handshake with the asymmetric
//! fence); `put` and every push wake a sleeper.
//!
//! # Statistics
//!
//! `steals`, `steal_attempts`; extras: `heavy_fences`, `fence_switches`, `symmetric_pops` (as in
//! `abp`; a suspended deque is put in symmetric mode, so that steals from stealable deques,
//! made under the pool-wide lock, issue no `membarrier` unless switching is off; a worker's
//! exit hands its deque back the same way and counts a switch), `suspensions` (fibers parked
//! at a join or scope sync),
//! `resumptions`, `deque_suspensions`, `deque_resumptions` (put made a deque active),
//! `deques_resumable` (deques a put made resumable), `muggings`, `rebalances` (a deque moved
//! between stealable sets; always 0 with the [`Placement::Artifact`] placement), `deques_created` (new
//! active deques, recycled or newly allocated),
//! `fibers_created`, `fiber_runs`, `forks_parted`, `sleeps`, `deviations` (as in `abp`: exact,
//! per worker, by the shared code of `fiberpool/deviation.rs`; the ProWS paper's Definition 4.5
//! is the same as Spoonhower et al.'s Definition 1, and its Theorem 4.11 bounds them by
//! O(steals); a touch that suspends its whole deque lets the put's worker take the deque back
//! in serial order, so a chain of d joins above a suspended touch costs 2 deviations whatever
//! d, where `abp` pays 2 + 2d: the test `deviations::prows::joins_after_a_stolen_future`).
//! Gauges (levels, not zeroed by `reset_stats`):
//! `stacks_high_water`, `stacks_mapped`, and `stealable_high_water`: the largest number of
//! deques in all stealable sets together at any moment since the pool started or since the last
//! `reset_stats` (which sets it to the current number). The sets change only under the
//! pool-wide lock, so it is exact. Only suspended and resumable deques are ever stealable, so it
//! stays 0 while no touch finds its future unfinished (pure fork-join, for instance). As in
//! Algorithm 1, every deque a put resumes is in a stealable set before `setToActive` takes one
//! out, so it counts even when the putting worker takes it at once.
//!
//! # Limits
//!
//! As in `abp`: a task may migrate at every `join`, `scope`, `get` and fork, so it must not hold
//! a thread-local reference or a lock guard across them; `run` must not be called from inside a
//! task of the same pool.

use crate::config::{Capabilities, Placement, PoolConfig};
use crate::deque::{self, Entry, FenceCounts, Owner, Stolen, Thief};
use crate::fiberpool::Policy;
use crate::fiberpool::future::{FiberFuture, FiberScope, FiberShared};
use crate::fiberpool::handle::FiberWorker;
use crate::fiberpool::job::{FiberBox, Job};
use crate::fiberpool::latency;
use crate::fiberpool::pool::FiberPool;
use crate::fiberpool::worker::{Local, Shared};
use crate::rng::SplitMix64;
use crate::stats::PerWorker;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering, fence};
use std::sync::{Arc, Mutex, MutexGuard};

pub(crate) mod future;

use future::FutState;

pub use crate::fiberpool::DEFAULT_STACK_SIZE;

/// The `prows` pool of the paper: P worker threads, deques that move between them, proactive
/// stealing, its [`Placement`] as configured (by default the paper's: uniformly random, with
/// `rebalanceStealables`).
pub type Prows = FiberPool<ProwsPolicy>;
/// The handle of one fiber of [`Prows`]: every task running on that fiber receives it. It stays
/// valid when the fiber migrates, because every resume updates the worker it points to.
pub type ProwsWorker = FiberWorker<ProwsPolicy>;
/// A scope of [`ProwsWorker::scope`](crate::api::Worker::scope). Spawns are work-first: the
/// spawned task runs at once on a new fiber while the spawner's continuation is pushed and may
/// be stolen; the same holds for future creation.
pub type ProwsScope<'s> = FiberScope<'s, ProwsPolicy>;
/// A single-touch future of `prows`.
pub type ProwsFuture<T> = FiberFuture<ProwsPolicy, T>;
/// A multi-touch future of `prows`.
pub type ProwsShared<T> = FiberShared<ProwsPolicy, T>;

/// The deque policy of `prows` (see the module documentation): deque objects that move between
/// workers, stealable sets, a touch suspends the whole active deque; the pool's [`Placement`]
/// says where a deque that becomes stealable goes and whether removals rebalance (see
/// [Placement](self#placement)).
#[derive(Debug)]
pub struct ProwsPolicy;

/// The state of a deque object (Section 3 of the paper).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    /// Some worker works at its bottom.
    Active,
    /// Suspended at a touch: ready nodes, and a future-join fiber that is not ready.
    Suspended,
    /// Its future-join fiber is ready (pushed at its bottom); nobody works on it.
    Resumable,
    /// Resumable and stolen from once: the next thief takes all of it.
    Muggable,
}

/// What only the pool-wide lock's holder may read or change about a deque object.
struct DqMeta {
    status: Status,
    /// The worker whose stealable set holds this deque, if any.
    home: Option<usize>,
    /// The future-join fiber of a suspended deque (`pushBottomImplicit`).
    implicit: Option<FiberBox<ProwsPolicy>>,
}

/// A deque object: the deque itself, its thieves' handle and its state. It moves between
/// workers' active slots, stealable sets and futures' suspended sets.
struct Dq {
    /// The bottom end while the deque is active nowhere, used only by the holder of the
    /// pool-wide lock; `None` while it is a worker's active deque: that worker's `Local` holds
    /// the bottom end then (moved in and out under the lock), so its pushes and pops reach the
    /// deque through one pointer less.
    owner: UnsafeCell<Option<Owner>>,
    thief: Thief,
    /// Locked only while holding the pool-wide lock (so it never blocks).
    meta: Mutex<DqMeta>,
}

// SAFETY: `owner` is only used by the holder of the pool-wide lock (whose release/acquire
// orders the hand-over of the bottom end to and from a worker's `Local`). The rest is `Sync`.
unsafe impl Sync for Dq {}
// SAFETY: see `Sync`; every field is `Send`.
unsafe impl Send for Dq {}

impl Dq {
    fn new(fences: &Arc<FenceCounts>) -> Arc<Dq> {
        let (owner, thief) = deque::in_pool(64, fences);
        Arc::new(Dq {
            owner: UnsafeCell::new(Some(owner)),
            thief,
            meta: Mutex::new(DqMeta {
                status: Status::Active,
                home: None,
                implicit: None,
            }),
        })
    }

    fn meta(&self) -> MutexGuard<'_, DqMeta> {
        self.meta.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Active slots and stealable sets, under one lock, and every deque the pool made.
struct Sets {
    /// Every write goes through [`ProwsDeques::set_active`], which publishes it in the
    /// worker's [`Slot`].
    active: Vec<Option<Arc<Dq>>>,
    /// Every change is mirrored in the worker's [`Slot::stealable`].
    stealable: Vec<Vec<Arc<Dq>>>,
    /// Deques in all stealable sets together.
    stealable_now: usize,
    /// The largest `stealable_now` since the start or the last `reset_stats`.
    stealable_high_water: usize,
    /// Every deque this pool ever made, kept until the pool is dropped: thieves dereference
    /// deque pointers read from a [`Slot`] without the lock, after the deque may have left the
    /// slot (see [Stealing without the lock](self#stealing-without-the-lock)).
    all: Vec<Arc<Dq>>,
    /// Deques nothing refers to any more but `all` (and this list): empty, active nowhere, in
    /// no set and no future's list, ready to be a worker's new active deque again.
    free: Vec<Arc<Dq>>,
}

/// A worker's active deque and the size of its stealable set, published for thieves that read
/// them without the lock. Written only by the pool-wide lock's holder: `active` with the
/// seqlock protocol of [`ProwsDeques::set_active`], `stealable` whenever the set changes.
/// Aligned to two cache lines, as the deques are: thieves read it on every steal attempt.
#[repr(align(128))]
struct Slot {
    /// Odd while `active` is being changed; grows by 2 at every change, so a thief that reads
    /// the same even value before and after its steal knows the slot held the same deque, and
    /// that deque was active there, all along.
    version: AtomicU64,
    /// `Sets::active[v]`'s deque, null if none.
    active: AtomicPtr<Dq>,
    /// `Sets::stealable[v].len()`: only a hint for the thief's draw, which the locked path
    /// checks.
    stealable: AtomicUsize,
}

/// The deque objects' places and the policy's counters.
pub struct ProwsDeques {
    workers: usize,
    /// Where deques that become stealable go, and whether removals rebalance.
    placement: Placement,
    /// The pool's fence counts, for the deques it makes.
    fences: Arc<FenceCounts>,
    sets: Mutex<Sets>,
    slots: Box<[Slot]>,
    deque_suspensions: PerWorker,
    deque_resumptions: PerWorker,
    deques_resumable: PerWorker,
    muggings: PerWorker,
    rebalances: PerWorker,
    deques: PerWorker,
}

impl ProwsDeques {
    fn lock_sets(&self) -> MutexGuard<'_, Sets> {
        self.sets.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The deque `p` points to.
    ///
    /// # Safety
    /// `p` was read from this pool's `slots` or `sets` (is a deque this pool made), non-null.
    unsafe fn deque(&self, p: *const Dq) -> &Dq {
        // SAFETY: every deque this pool made is in `Sets::all`, which holds a reference to it
        // until the pool is dropped, and `&self` borrows the pool.
        unsafe { &*p }
    }

    /// Writes worker `v`'s active deque (the lock's holder, `g`): the only writer of
    /// `Sets::active`. Returns the previous one.
    ///
    /// The seqlock write: version odd, pointer, version even. Orderings:
    /// * the odd store is Relaxed and the version's first load too: only the lock's holder
    ///   writes it, and the lock orders the writers;
    /// * the SeqCst fence after the odd store pairs with a thief's SeqCst compare-and-swap of
    ///   the deque's `top` (its steal) followed by its SeqCst load of the version (see
    ///   `Local::steal`): either the thief's load comes after the fence in the SeqCst order,
    ///   and it reads the odd value or a later one (the slot changed: it takes the lock and
    ///   does the bookkeeping), or the fence comes after the thief's load, hence after its
    ///   compare-and-swap, and everything this lock's holder reads of the deque after the fence
    ///   (whether it is empty, when it is suspended) sees the steal. It also keeps the odd
    ///   store before the pointer's (as a Release fence would);
    /// * the pointer's Release store pairs with the thief's Acquire load: a thief that reads
    ///   the new pointer sees the deque as it was made or recycled, and (the odd store being
    ///   before) reads the odd version or a later one after its steal, so it never trusts a
    ///   pointer newer than the version it read first;
    /// * the even store is Release: a thief that reads it (Acquire) then reads this pointer or
    ///   a later one.
    fn set_active(&self, g: &mut Sets, v: usize, d: Option<Arc<Dq>>) -> Option<Arc<Dq>> {
        let slot = &self.slots[v];
        let s = slot.version.load(Ordering::Relaxed);
        debug_assert!(s.is_multiple_of(2), "a slot written twice at once");
        slot.version.store(s + 1, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        let p = d
            .as_ref()
            .map_or(std::ptr::null_mut(), |d| Arc::as_ptr(d).cast_mut());
        slot.active.store(p, Ordering::Release);
        slot.version.store(s + 2, Ordering::Release);
        std::mem::replace(&mut g.active[v], d)
    }

    /// Publishes the size of worker `v`'s stealable set after a change (Relaxed: a hint).
    fn publish_stealable(&self, g: &Sets, v: usize) {
        self.slots[v]
            .stealable
            .store(g.stealable[v].len(), Ordering::Relaxed);
    }

    /// Algorithm 1's put for one deque suspended on the future (the holder of the pool-wide
    /// lock `g`): its join fiber is pushed at its bottom, it becomes resumable, and one that
    /// was in no stealable set goes into the set of the worker `place` chooses.
    fn make_resumable(&self, g: &mut Sets, d: &Arc<Dq>, place: impl FnOnce(&Sets) -> usize) {
        let mut m = d.meta();
        let f = m
            .implicit
            .take()
            .expect("a suspended deque without its join fiber");
        // SAFETY: a suspended deque is active nowhere, and the caller holds the pool-wide
        // lock, so nobody else uses its bottom end (see `Dq`).
        unsafe { (*d.owner.get()).as_ref() }
            .expect("a suspended deque keeps its bottom end")
            .push(Job::Resume(f).encode());
        m.status = Status::Resumable;
        if m.home.is_none() {
            let v = place(g);
            self.add_stealable(g, &mut m, v, d);
        }
    }

    /// Puts `d` into worker `v`'s stealable set and records `v` as its home.
    fn add_stealable(&self, g: &mut Sets, m: &mut DqMeta, v: usize, d: &Arc<Dq>) {
        debug_assert!(m.home.is_none(), "a deque in two stealable sets");
        m.home = Some(v);
        g.stealable[v].push(Arc::clone(d));
        g.stealable_now += 1;
        g.stealable_high_water = g.stealable_high_water.max(g.stealable_now);
        self.publish_stealable(g, v);
    }

    /// Removes `d` from worker `h`'s stealable set (its home, already cleared by the caller);
    /// returns the set's reference to it.
    fn remove_stealable(&self, g: &mut Sets, h: usize, d: &Dq) -> Option<Arc<Dq>> {
        let set = &mut g.stealable[h];
        let Some(i) = set.iter().position(|x| std::ptr::eq(Arc::as_ptr(x), d)) else {
            debug_assert!(false, "a deque's home set did not hold it");
            return None;
        };
        let d = set.swap_remove(i);
        g.stealable_now -= 1;
        self.publish_stealable(g, h);
        Some(d)
    }

    /// A deque that its holder (under the lock, `g`) lets go of: if nothing but `Sets::all`
    /// refers to it any more, it goes to the free list (reset to active, for the next
    /// `ensure_active`), else it is simply dropped (whoever holds it lets go later, or it
    /// stays in `all` until the pool is dropped: a future dropped without a put, say).
    fn retire(&self, g: &mut Sets, d: Arc<Dq>) {
        // Nobody can take a new reference to `d` meanwhile: references are cloned only from
        // one held already, and `all`'s is behind the lock we hold. So a count of 2 (`d` and
        // `all`'s) stays 2.
        if Arc::strong_count(&d) != 2 {
            return;
        }
        // Acquire: pairs with the Release decrement of whoever dropped the last other
        // reference (maybe without the lock): its uses of the deque happen before its reuse.
        fence(Ordering::Acquire);
        let mut m = d.meta();
        // An empty deque in no set without a join fiber: what the scheduler's own releases
        // leave (its owner let go of it empty, or the steal that emptied it removed it). A
        // suspended deque whose future was dropped without a put keeps its join fiber: left
        // in `all`.
        if m.home.is_none() && m.implicit.is_none() && d.thief.is_empty() {
            m.status = Status::Active;
            drop(m);
            g.free.push(d);
        }
    }

    fn counters(&self) -> [(&'static str, &PerWorker); 6] {
        [
            ("deque_suspensions", &self.deque_suspensions),
            ("deques_resumable", &self.deques_resumable),
            ("deque_resumptions", &self.deque_resumptions),
            ("muggings", &self.muggings),
            ("rebalances", &self.rebalances),
            ("deques_created", &self.deques),
        ]
    }
}

/// The state of a `prows` future: done, or the deques suspended on it (Algorithm 1's
/// `f.suspended`, the lock-free list of `prows/future.rs`). A suspension adds its deque while
/// holding the pool-wide lock and finishes suspending it before it lets go; the put's
/// resumption of the deques it took out takes that lock, so it never sees a half-suspended
/// deque.
pub struct FutDeques(FutState<Arc<Dq>>);

impl Policy for ProwsPolicy {
    const NAME: &'static str = "prows";
    const NAMES: crate::fiberpool::Names = crate::fiberpool::Names {
        pool: "Prows",
        worker: "ProwsWorker",
        scope: "ProwsScope",
        future: "ProwsFuture",
        shared: "ProwsShared",
    };
    const CAPABILITIES: Capabilities = Capabilities {
        placement: true,
        ..crate::fiberpool::CAPABILITIES
    };
    type Shared = ProwsDeques;
    type Seed = ();
    /// The bottom end of the active deque (`None` while the worker has none, between a
    /// suspension and a steal), moved out of its `Dq` while it is active. Only the worker's
    /// own thread touches it, and it is replaced only while no reference to it is held (see
    /// `Local::set_owner`).
    type Local = UnsafeCell<Option<Owner>>;
    type Fut = FutDeques;

    fn new(config: &PoolConfig, fences: &Arc<FenceCounts>) -> (ProwsDeques, Vec<()>) {
        let p = config.workers;
        let sh = ProwsDeques {
            workers: p,
            placement: config.placement,
            fences: Arc::clone(fences),
            sets: Mutex::new(Sets {
                active: (0..p).map(|_| None).collect(),
                stealable: (0..p).map(|_| Vec::new()).collect(),
                stealable_now: 0,
                stealable_high_water: 0,
                all: Vec::new(),
                free: Vec::new(),
            }),
            slots: (0..p)
                .map(|_| Slot {
                    version: AtomicU64::new(0),
                    active: AtomicPtr::new(std::ptr::null_mut()),
                    stealable: AtomicUsize::new(0),
                })
                .collect(),
            deque_suspensions: PerWorker::new(p),
            deque_resumptions: PerWorker::new(p),
            deques_resumable: PerWorker::new(p),
            muggings: PerWorker::new(p),
            rebalances: PerWorker::new(p),
            deques: PerWorker::new(p),
        };
        (sh, vec![(); p])
    }

    fn local((): ()) -> UnsafeCell<Option<Owner>> {
        UnsafeCell::new(None)
    }

    #[inline(always)]
    fn owner(l: &Local<Self>) -> &Owner {
        l.owner()
    }

    #[inline(always)]
    fn pop(l: &Local<Self>) -> Option<Entry> {
        l.active_owner()?.pop()
    }

    fn work_visible(sh: &ProwsDeques) -> bool {
        let g = sh.lock_sets();
        g.active.iter().flatten().any(|d| !d.thief.is_empty())
            || g.stealable.iter().flatten().any(|d| !d.thief.is_empty())
    }

    fn took_root_task(l: &Local<Self>) {
        l.ensure_active(&mut l.shared.pol.lock_sets());
    }

    fn steal(l: &Local<Self>) -> Option<Job<Self>> {
        l.steal()
    }

    fn exit(l: &Local<Self>) {
        let pol = &l.shared.pol;
        let mut g = pol.lock_sets();
        if let Some(d) = pol.set_active(&mut g, l.index, None) {
            l.give_owner_back(&d);
        }
    }

    fn new_fut() -> FutDeques {
        FutDeques(FutState::new(false))
    }

    fn new_done_fut() -> FutDeques {
        FutDeques(FutState::new(true))
    }

    #[inline]
    fn is_done(fut: &FutDeques) -> bool {
        fut.0.is_done()
    }

    fn suspend_touch(
        l: &Local<Self>,
        fut: &FutDeques,
        f: FiberBox<Self>,
    ) -> Option<FiberBox<Self>> {
        l.suspend_deque(fut, f)
    }

    /// Marks the future done and resumes the deques suspended on it.
    fn put(w: &FiberWorker<Self>, fut: &FutDeques) {
        let list = fut.0.complete();
        if !list.is_empty() {
            w.local().resume_deques(list);
        }
    }

    /// The I/O thread's put of a latency future: the thesis's callback on every deque
    /// suspended on it ([`resume_deques_external`]).
    fn put_external(sh: &Shared<Self>, fut: &FutDeques, rng: &mut SplitMix64) -> usize {
        let list = fut.0.complete();
        let n = list.len();
        if n > 0 {
            resume_deques_external(sh, list, rng);
        }
        n
    }

    fn stats(sh: &ProwsDeques) -> Vec<(&'static str, u64)> {
        sh.counters().iter().map(|&(n, c)| (n, c.sum())).collect()
    }

    fn gauges(sh: &ProwsDeques) -> Vec<(&'static str, u64)> {
        let g = sh.lock_sets();
        vec![("stealable_high_water", g.stealable_high_water as u64)]
    }

    fn reset_stats(sh: &ProwsDeques) {
        for (_, c) in sh.counters() {
            c.reset();
        }
        let mut g = sh.lock_sets();
        g.stealable_high_water = g.stealable_now;
    }
}

/// Algorithm 1, lines 36-42, by a thread that is no worker (the pool's I/O thread, at a
/// latency future's completion): the Rayon-LH thesis's callback (its Algorithm 2). Every
/// deque suspended on the future gets its join fiber pushed at its bottom and becomes
/// resumable (Figure 3.1: Suspended to Resumable); one in no stealable set goes into the set
/// of a worker drawn by the placement (with `rng`). Nobody takes one as its active deque here
/// (the I/O thread has none): the first steal from it makes it muggable, the next takes it
/// whole. Then a sleeping worker is woken.
fn resume_deques_external(sh: &Shared<ProwsPolicy>, list: Vec<Arc<Dq>>, rng: &mut SplitMix64) {
    let p = sh.pol.workers;
    let mut g = sh.pol.lock_sets();
    for d in &list {
        sh.pol.make_resumable(&mut g, d, |g| {
            choose(sh.pol.placement, |v| g.stealable[v].len(), || rng.index(p))
        });
    }
    drop(g);
    latency::wake_after_publish(sh);
}

/// The placement's choice: of [`Placement::choices`] workers drawn by `draw`, the first whose
/// stealable set (of `len(v)` deques) is smallest.
fn choose(
    placement: Placement,
    len: impl Fn(usize) -> usize,
    mut draw: impl FnMut() -> usize,
) -> usize {
    let mut best = draw();
    for _ in 1..placement.choices() {
        let v = draw();
        if len(v) < len(best) {
            best = v;
        }
    }
    best
}

impl Local<ProwsPolicy> {
    /// The bottom end of the active deque. Fibers run only while their worker has one.
    #[inline(always)]
    fn owner(&self) -> &Owner {
        debug_assert!(
            self.active_owner().is_some(),
            "a fiber ran without an active deque"
        );
        // SAFETY: fibers run, and push, only while their worker has an active deque.
        unsafe { self.active_owner().unwrap_unchecked() }
    }

    /// The bottom end of the active deque, if the worker has one.
    #[inline(always)]
    fn active_owner(&self) -> Option<&Owner> {
        // SAFETY: only this worker's thread uses `pol`, and `set_owner` does not replace it
        // while a reference from here is alive.
        unsafe { (*self.pol.get()).as_ref() }
    }

    /// Replaces the worker's bottom end; returns the previous one. Called only from the
    /// scheduler's own steps (steal, suspension, put, exit), never while a push or pop of
    /// this worker is under way, so no reference from `active_owner` is alive.
    fn set_owner(&self, o: Option<Owner>) -> Option<Owner> {
        // SAFETY: see above; only this worker's thread uses `pol`.
        unsafe { std::mem::replace(&mut *self.pol.get(), o) }
    }

    /// Moves the bottom end of `d`, which is becoming this worker's active deque, into
    /// `pol`, and the previous active deque's bottom end back into `prev`. Under the
    /// pool-wide lock (the caller's `Sets` guard).
    fn take_owner_from(&self, d: &Dq, prev: Option<&Dq>) {
        // SAFETY: we hold the pool-wide lock, and `d` is active nowhere yet (see `Dq`).
        let o = unsafe { (*d.owner.get()).take() };
        assert!(o.is_some(), "a deque became active twice");
        let old = self.set_owner(o);
        if let Some(p) = prev {
            // SAFETY: as above; `p` stops being active here.
            unsafe { *p.owner.get() = old };
        }
    }

    /// Moves this worker's bottom end back into `d`, its active deque until now, in
    /// symmetric fence mode: nobody pops it until it is active again, and thieves (under the
    /// pool-wide lock, if it is stealable) then steal with a `fence(SeqCst)` instead of a
    /// `membarrier` (see [`crate::deque`]). Under the pool-wide lock.
    fn give_owner_back(&self, d: &Dq) {
        let o = self.set_owner(None);
        if let Some(o) = &o {
            o.make_symmetric();
        }
        // SAFETY: we hold the pool-wide lock, and `d` stops being active here (see `Dq`).
        unsafe { *d.owner.get() = o };
    }

    fn rand_below(&self, n: usize) -> usize {
        (self.next_rand() % n as u64) as usize
    }

    /// The worker whose stealable set receives a deque that becomes stealable: the one with
    /// the fewest stealable deques among [`Placement::choices`] uniformly random workers (the first on
    /// ties; with one choice, a uniformly random worker).
    fn place(&self, g: &Sets) -> usize {
        let p = self.shared.pol.workers;
        choose(
            self.shared.pol.placement,
            |v| g.stealable[v].len(),
            || self.rand_below(p),
        )
    }

    /// Makes `d` this worker's active deque (Algorithm 1, `setToActive`): out of its stealable
    /// set (rebalancing, if the placement does), state active; the previous active deque,
    /// empty, is let go of (and recycled, see `ProwsDeques::retire`).
    fn set_to_active(&self, g: &mut Sets, d: Arc<Dq>) {
        let pol = &self.shared.pol;
        let home = {
            let mut m = d.meta();
            m.status = Status::Active;
            m.home.take()
        };
        if let Some(h) = home {
            self.rebalance(g, h);
            pol.remove_stealable(g, h, &d);
        }
        self.take_owner_from(&d, g.active[self.index].as_deref());
        if let Some(prev) = pol.set_active(g, self.index, Some(d)) {
            pol.retire(g, prev);
        }
    }

    /// `rebalanceStealables(v)`: a random worker v' gives one stealable deque to v, if v' is not
    /// v and has one. Nothing if the placement does not rebalance.
    fn rebalance(&self, g: &mut Sets, v: usize) {
        if !self.shared.pol.placement.rebalances() {
            return;
        }
        let pol = &self.shared.pol;
        let v2 = self.rand_below(pol.workers);
        if v2 == v {
            return;
        }
        if let Some(d) = g.stealable[v2].pop() {
            d.meta().home = Some(v);
            g.stealable[v].push(d);
            pol.publish_stealable(g, v2);
            pol.publish_stealable(g, v);
            pol.rebalances.add_single_writer(self.index, 1);
        }
    }

    /// Gives this worker a new, empty active deque if it has none: a free one if there is
    /// one, else a newly made one (either counts in `deques_created`).
    fn ensure_active(&self, g: &mut Sets) {
        if g.active[self.index].is_none() {
            let pol = &self.shared.pol;
            let d = g.free.pop().unwrap_or_else(|| {
                let d = Dq::new(&pol.fences);
                g.all.push(Arc::clone(&d));
                d
            });
            pol.deques.add_single_writer(self.index, 1);
            self.take_owner_from(&d, None);
            pol.set_active(g, self.index, Some(d));
        }
    }

    /// Algorithm 1, lines 29-35 and `suspend`: the touching fiber `f` becomes the implicit
    /// bottom node of the active deque, which is suspended on `fut`. Returns `f` back if the
    /// future is done by now.
    fn suspend_deque(
        &self,
        fut: &FutDeques,
        f: FiberBox<ProwsPolicy>,
    ) -> Option<FiberBox<ProwsPolicy>> {
        let sh = &*self.shared;
        let mut g = sh.pol.lock_sets();
        let d = Arc::clone(
            g.active[self.index]
                .as_ref()
                .expect("a fiber touched a future without an active deque"),
        );
        // Recorded on the future first: a put from now on takes the list, then waits for
        // the pool-wide lock we hold, so it finds the deque fully suspended.
        if fut.0.add_suspended(Arc::clone(&d)).is_err() {
            return Some(f);
        }
        // Out of the slot before anything else: from the fence of `set_active` on, every steal
        // a thief made without the lock from the deque is visible here (the emptiness check
        // below counts it), or that thief sees the slot changed and takes the lock after us.
        sh.pol.set_active(&mut g, self.index, None);
        self.give_owner_back(&d);
        {
            let mut m = d.meta();
            m.status = Status::Suspended;
            m.implicit = Some(f);
            if !d.thief.is_empty() {
                let v = self.place(&g);
                sh.pol.add_stealable(&mut g, &mut m, v, &d);
            }
        }
        sh.pol.deque_suspensions.add_single_writer(self.index, 1);
        None
    }

    /// Algorithm 1, lines 36-42: the deques suspended on a future that was just put become
    /// resumable; if this worker's active deque is empty, one of them becomes active.
    fn resume_deques(&self, mut list: Vec<Arc<Dq>>) {
        if list.is_empty() {
            return;
        }
        let sh = &*self.shared;
        let mut g = sh.pol.lock_sets();
        for d in &list {
            sh.pol.make_resumable(&mut g, d, |g| self.place(g));
        }
        sh.pol
            .deques_resumable
            .add_single_writer(self.index, list.len() as u64);
        if self.owner().is_empty() {
            let d = list.swap_remove(self.rand_below(list.len()));
            self.set_to_active(&mut g, d);
            sh.pol.deque_resumptions.add_single_writer(self.index, 1);
        }
        // Under the lock: a thief that emptied one of them meanwhile (and removed it from its
        // set) must find it referenced by nothing else to recycle it.
        drop(list);
        drop(g);
        sh.fences.light_fence();
        sh.notify();
    }

    /// One steal attempt (Algorithm 2; the injector's root tasks were tried first, and
    /// `took_root_task` gives the worker an active deque for one): a uniformly random victim
    /// (possibly this worker) and a uniformly random deque among its active and stealable
    /// deques; a muggable one is taken whole.
    ///
    /// The victim and the deque are drawn from its [`Slot`], without the lock; a steal from
    /// its active deque takes no lock unless the slot changed meanwhile (see [Stealing
    /// without the lock](self#stealing-without-the-lock)); anything else is `steal_locked`.
    fn steal(&self) -> Option<Job<ProwsPolicy>> {
        let sh = &*self.shared;
        let pol = &sh.pol;
        if sh.in_run() {
            sh.counters.attempts.add_single_writer(self.index, 1);
        }
        let v = self.rand_below(pol.workers);
        let slot = &pol.slots[v];
        // Acquire: pairs with the Release store of the even version that ended the latest
        // write of the slot, so the pointer read next is that write's or a later one.
        let version = slot.version.load(Ordering::Acquire);
        if version % 2 == 1 {
            // The slot is being written: the locked path draws among what the writer leaves.
            return self.steal_locked(v, None);
        }
        // Acquire: pairs with the pointer's Release store in `set_active` (see there).
        let p = slot.active.load(Ordering::Acquire);
        let has_active = usize::from(!p.is_null());
        // Relaxed: a hint for the draw, which the locked path checks under the lock.
        let stealable = slot.stealable.load(Ordering::Relaxed);
        let n = has_active + stealable;
        if n == 0 {
            return None;
        }
        let k = self.rand_below(n);
        if k >= has_active {
            return self.steal_locked(
                v,
                Some(Drawn {
                    version,
                    stealable,
                    k,
                }),
            );
        }
        if v == self.index {
            // Our own active deque: empty, which is why we steal.
            return None;
        }
        // SAFETY: `p` was read from the pool's slot, non-null.
        let d = unsafe { pol.deque(p) };
        let e = loop {
            match d.thief.steal() {
                Stolen::Entry(e) => break e,
                // Nothing taken, nothing to account for.
                Stolen::Empty => return None,
                Stolen::Retry => continue,
            }
        };
        // SeqCst: `Thief::steal` took the entry by a SeqCst compare-and-swap of `top`, before
        // this load in the SeqCst order; with the fence in `set_active` that makes a Dekker
        // pair: either this load reads the version odd or later, or every write of the slot
        // from the one that follows `version` on sees the steal (see `set_active`). So an
        // unchanged version means the deque was the victim's active deque from before the
        // pointer was read until after the steal, and whoever changes the slot next sees the
        // steal: as in the locked path, an active deque needs no bookkeeping.
        let changed = slot.version.load(Ordering::SeqCst) != version;
        if changed || self.active_owner().is_none() {
            let mut g = pol.lock_sets();
            if changed {
                // The deque may be anything by now (suspended, resumable, another worker's,
                // recycled): the bookkeeping for its status now, as the locked path's.
                self.after_steal(&mut g, d);
            }
            self.ensure_active(&mut g);
        }
        sh.counters.steals.add_single_writer(self.index, 1);
        // SAFETY: the entry was encoded by a `push` onto that deque; stealing took it.
        Some(unsafe { Job::decode(e) })
    }

    /// A steal attempt under the lock from victim `v`: the deque `drawn` if nothing changed
    /// since the lock-free look drew it (a stealable one), else one drawn again among the
    /// victim's active and stealable deques.
    fn steal_locked(&self, v: usize, drawn: Option<Drawn>) -> Option<Job<ProwsPolicy>> {
        let sh = &*self.shared;
        let pol = &sh.pol;
        let mut g = pol.lock_sets();
        let has_active = usize::from(g.active[v].is_some());
        let n = has_active + g.stealable[v].len();
        if n == 0 {
            return None;
        }
        let k = match drawn {
            // Relaxed: the lock orders us after the version's writers.
            Some(dr)
                if dr.version == pol.slots[v].version.load(Ordering::Relaxed)
                    && dr.stealable == g.stealable[v].len() =>
            {
                dr.k
            }
            _ => self.rand_below(n),
        };
        if v == self.index && k < has_active {
            // Our own active deque: empty, which is why we steal.
            return None;
        }
        let p = if k < has_active {
            Arc::as_ptr(g.active[v].as_ref().expect("checked above"))
        } else {
            Arc::as_ptr(&g.stealable[v][k - has_active])
        };
        // SAFETY: `p` was read from the pool's sets.
        let d = unsafe { pol.deque(p) };
        if d.meta().status == Status::Muggable {
            debug_assert!(k >= has_active, "a muggable deque in an active slot");
            let d = Arc::clone(&g.stealable[v][k - has_active]);
            self.set_to_active(&mut g, d);
            pol.muggings.add_single_writer(self.index, 1);
            sh.counters.steals.add_single_writer(self.index, 1);
            drop(g);
            return self.pop();
        }
        let e = loop {
            match d.thief.steal() {
                Stolen::Entry(e) => break Some(e),
                Stolen::Empty => break None,
                Stolen::Retry => continue,
            }
        };
        self.after_steal(&mut g, d);
        let e = e?;
        sh.counters.steals.add_single_writer(self.index, 1);
        self.ensure_active(&mut g);
        // SAFETY: the entry was encoded by a `push` onto that deque; stealing took it.
        Some(unsafe { Job::decode(e) })
    }

    /// Algorithm 2's bookkeeping after a steal from `d` (under the lock), for its status now:
    /// none for an active deque; a deque left without ready nodes leaves its stealable set
    /// (rebalancing it) and, if nothing else refers to it (a resumable one), is recycled; a
    /// suspended one stays with its future; a resumable one stolen from becomes muggable.
    fn after_steal(&self, g: &mut Sets, d: &Dq) {
        let pol = &self.shared.pol;
        let mut m = d.meta();
        if m.status == Status::Active {
            return;
        }
        if d.thief.is_empty() {
            if let Some(h) = m.home.take() {
                drop(m);
                let set_ref = pol.remove_stealable(g, h, d);
                self.rebalance(g, h);
                if let Some(d) = set_ref {
                    pol.retire(g, d);
                }
            }
        } else if m.status == Status::Resumable {
            m.status = Status::Muggable;
        }
    }
}

/// What a steal attempt drew without the lock: a stealable deque `k` of a victim whose slot
/// had `version` and `stealable` then.
#[derive(Clone, Copy)]
struct Drawn {
    version: u64,
    stealable: usize,
    k: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{FutureHandle, Futures};
    use crate::{ForkJoin, PoolConfig, Scheduler};
    use std::sync::atomic::AtomicBool;

    /// A touch that suspends a deque holding a ready node, on 2 workers: the future's task
    /// waits for `b`, which only the other worker can take from the suspended deque.
    fn suspend_once<W: Futures>(w: &W) -> u64 {
        let released = AtomicBool::new(false);
        let released = &released;
        w.scope(|s, w| {
            let f = w.future(s, move |_, _| {
                while !released.load(Ordering::Acquire) {
                    std::thread::yield_now();
                }
                1u64
            });
            let (x, y) = w.join(
                move |w| f.get(w),
                move |_| {
                    released.store(true, Ordering::Release);
                    2u64
                },
            );
            x + y
        })
    }

    /// Deques are made per suspension but recycled: the pool's deques stay at the few alive at
    /// once, however many were created.
    #[test]
    fn deques_are_recycled() {
        let pool = Prows::start(&PoolConfig::with_workers(2)).unwrap();
        for _ in 0..300 {
            assert_eq!(pool.run(suspend_once), 3);
        }
        let created = pool
            .stats()
            .extra("deques_created")
            .expect("deques_created");
        let sets = pool.policy().lock_sets();
        let (all, free) = (sets.all.len(), sets.free.len());
        drop(sets);
        assert!(
            created >= 300,
            "{created} deques created for 300 suspensions"
        );
        assert!(all <= 16, "{all} deques allocated for {created} created");
        assert!(free + 2 >= all, "{free} of {all} deques free between runs");
    }

    /// `choose` with the set sizes `lens` and the draws `draws`, which it must use up.
    fn pick(placement: Placement, lens: &[usize], draws: &[usize]) -> usize {
        let mut it = draws.iter().copied();
        let v = choose(
            placement,
            |v| lens[v],
            || it.next().expect("one draw too many"),
        );
        assert!(
            it.next().is_none(),
            "{} draws expected",
            placement.choices()
        );
        v
    }

    #[test]
    fn paper_takes_its_one_draw_whatever_the_loads() {
        assert_eq!(pick(Placement::Paper, &[9, 0, 3], &[0]), 0);
        assert_eq!(pick(Placement::Paper, &[9, 0, 3], &[2]), 2);
    }

    #[test]
    fn artifact_takes_the_less_loaded_of_two_draws_the_first_on_ties() {
        use Placement::Artifact;
        assert_eq!(pick(Artifact, &[5, 0, 3], &[0, 1]), 1);
        assert_eq!(pick(Artifact, &[5, 0, 3], &[1, 0]), 1);
        assert_eq!(pick(Artifact, &[5, 0, 3], &[0, 2]), 2);
        assert_eq!(pick(Artifact, &[2, 2, 3], &[1, 0]), 1);
        assert_eq!(pick(Artifact, &[2, 2, 3], &[0, 0]), 0);
    }

    #[test]
    fn the_two_placements_are_configured_as_documented() {
        let p = Placement::Paper;
        assert_eq!((p.choices(), p.rebalances()), (1, true));
        let a = Placement::Artifact;
        assert_eq!((a.choices(), a.rebalances()), (2, false));
        assert_eq!(Placement::default(), p);
        assert_eq!(<Prows as crate::Scheduler>::NAME, "prows");
    }
}
