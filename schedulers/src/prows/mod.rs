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
//!   otherwise into none; it is added to the future's set of suspended deques; the worker has no
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
//!   stealable deque, one moves from v' to v.
//!
//! The stealable sets, the deques' states and the active-deque slots are protected by one
//! pool-wide mutex: the paper assumes concurrent sets with constant amortized operations; these
//! operations (suspend, resume, steal, mug) are rare next to pushes and pops, which stay
//! lock-free on the owner's active deque. The random choices are exactly the paper's.
//!
//! Idle workers back off and sleep as in `abp` (the same Dekker handshake with the asymmetric
//! fence); `put` and every push wake a sleeper.
//!
//! # Statistics
//!
//! `steals`, `steal_attempts`; extras: `suspensions` (fibers parked at a join or scope sync),
//! `resumptions`, `deque_suspensions`, `deque_resumptions` (put made a deque active),
//! `muggings`, `rebalances` (a deque moved between stealable sets), `deques_created`,
//! `fibers_created`, `fiber_runs`, `sleeps`, `stacks_high_water`, `stacks_mapped`.
//!
//! # Limits
//!
//! As in `abp`: a task may migrate at every `join`, `scope`, `get` and fork, so it must not hold
//! a thread-local reference or a lock guard across them; `run` must not be called from inside a
//! task of the same pool.

mod signal;

use crate::api::{ForkJoin, FutureHandle, Scheduler, Scope, SharedHandle, StartError, Worker};
use crate::config::{IdlePolicy, PoolConfig, VictimPolicy};
use crate::deque::{self, Owner, Stolen, Thief, heavy_fence, light_fence};
use crate::fiber::{Fiber, FiberResult, Suspender};
use crate::stack::{StackCounters, StackPool};
use crate::stats::{PerWorker, Stats};
use crate::topology::{Topology, pin_current_thread};
use crossbeam_deque::{Injector, Steal};
use signal::Signal;
use std::any::Any;
use std::cell::{Cell, UnsafeCell};
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::panic::{self, AssertUnwindSafe};
use std::sync::MutexGuard;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering, fence};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::thread::{self, JoinHandle, Thread};

/// Usable bytes of every fiber stack unless [`Prows::with_stack_size`] says otherwise. Stacks are
/// mapped with `MAP_NORESERVE`, so this is address space; pages are committed when touched.
/// 16 MiB holds a join recursion 10,000 deep even in a debug build (about 1 KiB per level).
pub const DEFAULT_STACK_SIZE: usize = 16 << 20;

/// Free stacks each worker keeps for reuse; more are unmapped.
const POOL_CAP: usize = 32;

/// Idle fibers (finished their work, stack kept, ready for a new task) each worker keeps; their
/// stacks count as free. Reusing one saves creating a coroutine and allocating its box.
const IDLE_CAP: usize = 32;

/// Steal rounds before an idle worker starts yielding its CPU, then before it sleeps.
const SPIN_ROUNDS: u32 = 64;
const YIELD_ROUNDS: u32 = 16;

// ---------------------------------------------------------------------------------------------
// Jobs, fibers, deque entries
// ---------------------------------------------------------------------------------------------

/// A type-erased task: a pointer to a job record and the function that runs it.
#[derive(Clone, Copy)]
struct JobRef {
    data: *const (),
    exec: unsafe fn(*const (), &ProwsWorker),
}

// SAFETY: a `JobRef` is a pointer to a job record whose closure is `Send`; the records stay
// alive until their job has run (a join, scope or `run` does not return before that).
unsafe impl Send for JobRef {}

impl JobRef {
    /// # Safety
    /// `self.data` must still be alive and not yet executed.
    #[inline]
    unsafe fn execute(self, w: &ProwsWorker) {
        // SAFETY: forwarded from the caller.
        unsafe { (self.exec)(self.data, w) }
    }
}

/// A fork: the child closure, read (moved) by the new fiber from the parent's frame.
#[derive(Clone, Copy)]
struct ForkJob {
    data: *const (),
    start: unsafe fn(*const (), &ProwsWorker, FiberBox),
}

/// What a resume passes to a fiber: the resuming worker's state, and for a fiber that starts
/// (new, or idle and reused) its first task.
struct Input(*const Local, Option<Start>);

// SAFETY: the pointer is only dereferenced by the fiber the resuming worker runs, on that
// worker's thread, while the worker waits in `resume`; `Start` is `Send`.
unsafe impl Send for Input {}

/// What a fiber asks its driver for when it suspends.
enum Yield {
    /// Record me on this signal (or resume me at once if it is already set).
    Park(*const Signal),
    /// Push me (the continuation) onto the deque and run this child on a new fiber.
    Fork(ForkJob),
    /// I touched this unfinished future: suspend my whole active deque with me as its
    /// future-join node (or resume me at once if the future is done by now).
    SuspendDeque(*const FutState),
    /// My tasks are done: keep me as an idle fiber, and go on as `Exit` says.
    Done(Exit),
}

// SAFETY: the pointers are read by the driver on the thread the fiber suspended on, while the
// fiber (whose frame holds the pointees) is suspended and not yet published.
unsafe impl Send for Yield {}

/// How a fiber's round of work ends.
enum Exit {
    /// The deque is empty: back to the driver, which steals.
    Idle,
    /// The deque bottom was this fiber: the driver resumes it.
    SwitchTo(FiberBox),
}

type ProwsFiber = Fiber<Input, Yield, ()>;

/// A fiber with an intrusive link for the waiter lists of [`Signal`].
struct FiberNode {
    fiber: ProwsFiber,
    next: *mut FiberNode,
}

// SAFETY: `fiber` is `Send`, and `next` is only followed by the one thread that took the whole
// waiter list out of a signal.
unsafe impl Send for FiberNode {}

type FiberBox = Box<FiberNode>;

/// A deque entry.
enum Job {
    /// A task to run (a join's `b`, or a root task).
    Run(JobRef),
    /// A suspended fiber that is ready to continue.
    Resume(FiberBox),
}

impl Job {
    /// The two deque words: `[data, exec]` for a task, `[fiber, 0]` for a fiber.
    #[inline(always)]
    fn encode(self) -> deque::Entry {
        match self {
            Job::Run(j) => [j.data as usize, j.exec as usize],
            Job::Resume(f) => [Box::into_raw(f) as usize, 0],
        }
    }

    /// # Safety
    /// `e` must come from `encode`, and each encoded entry is decoded once.
    #[inline(always)]
    unsafe fn decode(e: deque::Entry) -> Job {
        if e[1] == 0 {
            // SAFETY: a zero second word marks a fiber box given up by `encode`.
            Job::Resume(unsafe { Box::from_raw(e[0] as *mut FiberNode) })
        } else {
            Job::Run(JobRef {
                data: e[0] as *const (),
                // SAFETY: a non-zero second word is a job's `exec` function pointer.
                exec: unsafe {
                    std::mem::transmute::<usize, unsafe fn(*const (), &ProwsWorker)>(e[1])
                },
            })
        }
    }
}

/// What a new fiber runs first.
enum Start {
    Run(JobRef),
    Fork(ForkJob, FiberBox),
}

// SAFETY: see `JobRef` and `Yield`: the pointees outlive the fiber's use of them.
unsafe impl Send for Start {}

// ---------------------------------------------------------------------------------------------
// The pool
// ---------------------------------------------------------------------------------------------

struct Counters {
    steals: PerWorker,
    attempts: PerWorker,
    suspensions: PerWorker,
    resumptions: PerWorker,
    fibers: PerWorker,
    fiber_runs: PerWorker,
    sleeps: PerWorker,
    deque_suspensions: PerWorker,
    deque_resumptions: PerWorker,
    deques_resumable: PerWorker,
    muggings: PerWorker,
    rebalances: PerWorker,
    deques: PerWorker,
}

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
    implicit: Option<FiberBox>,
}

/// A deque object: the deque itself, its thieves' handle and its state. It moves between
/// workers' active slots, stealable sets and futures' suspended sets.
struct Dq {
    /// The bottom end. Used only by the worker whose active deque this is, or, while the deque
    /// is suspended (active nowhere), by the holder of the pool-wide lock.
    owner: UnsafeCell<Owner>,
    thief: Thief,
    /// Locked only while holding the pool-wide lock (so it never blocks).
    meta: Mutex<DqMeta>,
}

// SAFETY: `owner` is used by one thread at a time: the one whose active deque this is (a deque
// is active in at most one slot, changed under the pool-wide lock, whose release/acquire orders
// the hand-over), or the lock holder while no worker has it active. The rest is `Sync`.
unsafe impl Sync for Dq {}
// SAFETY: see `Sync`; every field is `Send`.
unsafe impl Send for Dq {}

impl Dq {
    fn new() -> Arc<Dq> {
        let (owner, thief) = deque::new(64);
        Arc::new(Dq {
            owner: UnsafeCell::new(owner),
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

/// Active slots and stealable sets, under one lock.
struct Sets {
    active: Vec<Option<Arc<Dq>>>,
    stealable: Vec<Vec<Arc<Dq>>>,
}

/// State shared by all workers of a pool.
struct Shared {
    workers: usize,
    sets: Mutex<Sets>,
    injector: Injector<JobRef>,
    sleepers: AtomicUsize,
    sleeping: Box<[AtomicBool]>,
    threads: Box<[OnceLock<Thread>]>,
    terminate: AtomicBool,
    idle: IdlePolicy,
    counters: Counters,
    stacks: Arc<StackCounters>,
}

impl Shared {
    /// Is there anything to steal or inject anywhere?
    fn work_visible(&self) -> bool {
        if !self.injector.is_empty() {
            return true;
        }
        let g = self.lock_sets();
        g.active.iter().flatten().any(|d| !d.thief.is_empty())
            || g.stealable.iter().flatten().any(|d| !d.thief.is_empty())
    }

    fn lock_sets(&self) -> MutexGuard<'_, Sets> {
        self.sets.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wakes one sleeping worker, if any. Called after a SeqCst fence that follows a push.
    #[inline]
    fn notify(&self) {
        if self.sleepers.load(Ordering::Relaxed) > 0 {
            self.wake_one();
        }
    }

    #[cold]
    fn wake_one(&self) {
        for (i, s) in self.sleeping.iter().enumerate() {
            if s.load(Ordering::Relaxed) && s.swap(false, Ordering::AcqRel) {
                if let Some(t) = self.threads[i].get() {
                    t.unpark();
                }
                return;
            }
        }
    }

    fn wake_all(&self) {
        for (i, s) in self.sleeping.iter().enumerate() {
            s.store(false, Ordering::Release);
            if let Some(t) = self.threads[i].get() {
                t.unpark();
            }
        }
    }
}

/// One worker's private state, on its thread's stack. Fibers reach it only through the pointer
/// their last resume passed in, and only while this worker's thread runs them.
struct Local {
    index: usize,
    /// The bottom end of the active deque (null while the worker has none, between a
    /// suspension and a steal). `Sets::active[index]` holds the reference that keeps it alive.
    active: Cell<*const Owner>,
    stacks: UnsafeCell<StackPool>,
    idle: UnsafeCell<Vec<FiberBox>>,
    rng: Cell<u64>,
    stack_size: usize,
    shared: Arc<Shared>,
}

impl Local {
    /// Pushes onto the bottom of the deque and wakes a sleeper if there is one.
    #[inline]
    fn push(&self, job: Job) {
        self.owner().push(job.encode());
        // Pairs with the heavy fence in `sleep`: see the module documentation.
        light_fence();
        self.shared.notify();
    }

    /// Pops the bottom of the deque.
    #[inline]
    fn pop(&self) -> Option<Job> {
        // SAFETY: every entry of the deque was encoded by `push`, and popping takes it out.
        let a = self.active.get();
        if a.is_null() {
            return None;
        }
        // SAFETY: as in `owner`.
        unsafe { (*a).pop() }.map(|e| unsafe { Job::decode(e) })
    }

    /// The bottom end of the active deque. Fibers run only while their worker has one.
    #[inline(always)]
    fn owner(&self) -> &Owner {
        let a = self.active.get();
        debug_assert!(!a.is_null(), "a fiber ran without an active deque");
        // SAFETY: the active deque is kept alive by `Sets::active[self.index]`, and only this
        // worker uses its bottom end while it is active (see `Dq`).
        unsafe { &*a }
    }

    fn rand_below(&self, n: usize) -> usize {
        (self.next_rand() % n as u64) as usize
    }

    /// Makes `d` this worker's active deque (Algorithm 1, `setToActive`): out of its stealable
    /// set (rebalancing), state active; the previous active deque, empty, is dropped.
    fn set_to_active(&self, g: &mut Sets, d: Arc<Dq>) {
        let home = {
            let mut m = d.meta();
            m.status = Status::Active;
            m.home.take()
        };
        if let Some(h) = home {
            self.rebalance(g, h);
            self.remove_stealable(g, h, &d);
        }
        self.active.set(d.owner.get());
        g.active[self.index] = Some(d);
    }

    /// Removes `d` from worker `h`'s stealable set.
    fn remove_stealable(&self, g: &mut Sets, h: usize, d: &Arc<Dq>) {
        let set = &mut g.stealable[h];
        if let Some(i) = set.iter().position(|x| Arc::ptr_eq(x, d)) {
            set.swap_remove(i);
        } else {
            debug_assert!(false, "a deque's home set did not hold it");
        }
    }

    /// `rebalanceStealables(v)`: a random worker v' gives one stealable deque to v, if v' is not
    /// v and has one.
    fn rebalance(&self, g: &mut Sets, v: usize) {
        let v2 = self.rand_below(self.shared.workers);
        if v2 == v {
            return;
        }
        if let Some(d) = g.stealable[v2].pop() {
            d.meta().home = Some(v);
            g.stealable[v].push(d);
            self.shared
                .counters
                .rebalances
                .add_single_writer(self.index, 1);
        }
    }

    /// Gives this worker a new, empty active deque if it has none.
    fn ensure_active(&self, g: &mut Sets) {
        if self.active.get().is_null() {
            let d = Dq::new();
            self.shared.counters.deques.add_single_writer(self.index, 1);
            self.active.set(d.owner.get());
            g.active[self.index] = Some(d);
        }
    }

    /// Algorithm 1, lines 29-35 and `suspend`: the touching fiber `f` becomes the implicit
    /// bottom node of the active deque, which is suspended on `fut`. Returns `f` back if the
    /// future is done by now.
    fn suspend_deque(&self, fut: &FutState, f: FiberBox) -> Option<FiberBox> {
        let sh = &*self.shared;
        let mut g = sh.lock_sets();
        let mut waiting = fut.lock();
        if waiting.done {
            return Some(f);
        }
        let d = g.active[self.index]
            .take()
            .expect("a fiber touched a future without an active deque");
        self.active.set(std::ptr::null());
        {
            let mut m = d.meta();
            m.status = Status::Suspended;
            m.implicit = Some(f);
            if !d.thief.is_empty() {
                let v = self.rand_below(sh.workers);
                m.home = Some(v);
                g.stealable[v].push(Arc::clone(&d));
            }
        }
        waiting.suspended.push(d);
        sh.counters
            .deque_suspensions
            .add_single_writer(self.index, 1);
        None
    }

    /// Algorithm 1, lines 36-42: the deques suspended on a future that was just put become
    /// resumable; if this worker's active deque is empty, one of them becomes active.
    fn resume_deques(&self, mut list: Vec<Arc<Dq>>) {
        if list.is_empty() {
            return;
        }
        let sh = &*self.shared;
        let mut g = sh.lock_sets();
        for d in &list {
            let mut m = d.meta();
            let f = m
                .implicit
                .take()
                .expect("a suspended deque without its join fiber");
            // SAFETY: a suspended deque is active nowhere, and we hold the pool-wide lock, so
            // nobody else uses its bottom end (see `Dq`).
            unsafe { (*d.owner.get()).push(Job::Resume(f).encode()) };
            m.status = Status::Resumable;
            if m.home.is_none() {
                let v = self.rand_below(sh.workers);
                m.home = Some(v);
                g.stealable[v].push(Arc::clone(d));
            }
        }
        sh.counters
            .deques_resumable
            .add_single_writer(self.index, list.len() as u64);
        if self.owner().is_empty() {
            let d = list.swap_remove(self.rand_below(list.len()));
            self.set_to_active(&mut g, d);
            sh.counters
                .deque_resumptions
                .add_single_writer(self.index, 1);
        }
        drop(g);
        light_fence();
        sh.notify();
    }

    fn next_rand(&self) -> u64 {
        // xorshift64*
        let mut x = self.rng.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng.set(x);
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A fiber to run a new task: an idle one if there is one, else a new one. The caller
    /// resumes it with the task as its input's `Start`.
    fn fiber(&self) -> FiberBox {
        self.shared
            .counters
            .fiber_runs
            .add_single_writer(self.index, 1);
        // SAFETY: only this worker's thread touches its idle list and pool, not re-entrantly.
        if let Some(f) = unsafe { &mut *self.idle.get() }.pop() {
            // SAFETY: as above.
            unsafe { &mut *self.stacks.get() }.note_reused();
            return f;
        }
        self.new_fiber()
    }

    #[cold]
    fn new_fiber(&self) -> FiberBox {
        // SAFETY: only this worker's thread touches its pool, and not re-entrantly.
        let pool = unsafe { &mut *self.stacks.get() };
        let stack = pool.take().unwrap_or_else(|e| {
            eprintln!(
                "prows: cannot map a {} byte fiber stack: {e}",
                self.stack_size
            );
            std::process::abort()
        });
        self.shared.counters.fibers.add_single_writer(self.index, 1);
        let (lo, hi) = (stack.bottom(), stack.top());
        // SAFETY: what a fiber holds across a suspension is task data (closures and values
        // that are `Send` by the trait bounds) and this module's records, which are `Send`;
        // fiber code reaches worker state only through the resume input.
        let fiber = unsafe { Fiber::new(stack, move |sus, input| fiber_main(sus, input, lo, hi)) };
        Box::new(FiberNode {
            fiber,
            next: std::ptr::null_mut(),
        })
    }

    /// Keeps a fiber whose work is done for reuse, or ends it if enough are kept.
    fn retire(&self, f: FiberBox) {
        // SAFETY: only this worker's thread touches its idle list and pool, not re-entrantly.
        let (idle, pool) = unsafe { (&mut *self.idle.get(), &mut *self.stacks.get()) };
        if idle.len() < IDLE_CAP {
            pool.note_idle();
            idle.push(f);
        } else {
            self.end(f);
        }
    }

    /// Ends an idle fiber (its body returns) and gives its stack back to the pool.
    // The box is the fiber's identity in deques and waiter lists; ending it frees it.
    #[allow(clippy::boxed_local)]
    fn end(&self, mut f: FiberBox) {
        let r = f.fiber.resume(Input(self, None));
        debug_assert!(matches!(r, FiberResult::Return(())));
        let stack = f.fiber.into_stack();
        // SAFETY: as in `retire`.
        unsafe { &mut *self.stacks.get() }.give(stack);
    }

    /// Ends every idle fiber (at shutdown).
    fn end_idle(&self) {
        // SAFETY: as in `retire`.
        while let Some(f) = unsafe { &mut *self.idle.get() }.pop() {
            // SAFETY: as in `retire`.
            unsafe { &mut *self.stacks.get() }.note_reused();
            self.end(f);
        }
    }

    /// Resumes `f` (giving it `start` if it is to start a task) and carries out what it asks
    /// for, until a fiber parks or the deque runs dry.
    fn drive(&self, mut f: FiberBox, mut start: Option<Start>) {
        loop {
            match f.fiber.resume(Input(self, start.take())) {
                FiberResult::Yield(Yield::Park(sig)) => {
                    // SAFETY: the signal lives in the suspended fiber's frame or in an `Arc`
                    // that frame holds; the fiber cannot run before `park` publishes it.
                    match unsafe { (*sig).park(f) } {
                        None => {
                            self.shared
                                .counters
                                .suspensions
                                .add_single_writer(self.index, 1);
                            return;
                        }
                        Some(back) => f = back,
                    }
                }
                FiberResult::Yield(Yield::SuspendDeque(fut)) => {
                    // SAFETY: the future's state is kept alive by the handle in the suspended
                    // fiber's frame; the fiber cannot run before `suspend_deque` publishes it.
                    match self.suspend_deque(unsafe { &*fut }, f) {
                        None => return,
                        Some(back) => f = back,
                    }
                }
                FiberResult::Yield(Yield::Fork(job)) => {
                    let child = self.fiber();
                    start = Some(Start::Fork(job, f));
                    f = child;
                }
                FiberResult::Yield(Yield::Done(Exit::Idle)) => {
                    self.retire(f);
                    return;
                }
                FiberResult::Yield(Yield::Done(Exit::SwitchTo(g))) => {
                    self.retire(f);
                    f = g;
                }
                FiberResult::Return(()) => unreachable!("a fiber ended while it had work"),
            }
        }
    }

    /// One steal attempt (Algorithm 2): a root task from the injector, or a uniformly random
    /// victim (possibly this worker) and a uniformly random deque among its active and
    /// stealable deques; a muggable one is taken whole.
    fn steal_once(&self) -> Option<Job> {
        let sh = &*self.shared;
        loop {
            match sh.injector.steal() {
                Steal::Success(j) => {
                    self.ensure_active(&mut sh.lock_sets());
                    return Some(Job::Run(j));
                }
                Steal::Retry => continue,
                Steal::Empty => break,
            }
        }
        sh.counters.attempts.add_single_writer(self.index, 1);
        let mut g = sh.lock_sets();
        let v = self.rand_below(sh.workers);
        let has_active = usize::from(g.active[v].is_some());
        let n = has_active + g.stealable[v].len();
        if n == 0 {
            return None;
        }
        let k = self.rand_below(n);
        if v == self.index && k < has_active {
            // Our own active deque: empty, which is why we steal.
            return None;
        }
        let d = if k < has_active {
            Arc::clone(g.active[v].as_ref().expect("checked above"))
        } else {
            Arc::clone(&g.stealable[v][k - has_active])
        };
        let status = d.meta().status;
        if status == Status::Muggable {
            self.set_to_active(&mut g, d);
            sh.counters.muggings.add_single_writer(self.index, 1);
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
        if status != Status::Active {
            if d.thief.is_empty() {
                // No ready node left: out of the stealable set. A resumable deque is done with
                // (dropped with its last reference); a suspended one stays with its future.
                let home = d.meta().home.take();
                if let Some(h) = home {
                    self.remove_stealable(&mut g, h, &d);
                    self.rebalance(&mut g, v);
                }
            } else if status == Status::Resumable {
                d.meta().status = Status::Muggable;
            }
        }
        let e = e?;
        sh.counters.steals.add_single_writer(self.index, 1);
        self.ensure_active(&mut g);
        // SAFETY: the entry was encoded by a `push` onto that deque; stealing took it.
        Some(unsafe { Job::decode(e) })
    }

    /// The next job: own deque bottom, else steal, else back off and sleep. `None` at shutdown.
    fn find_work(&self) -> Option<Job> {
        if let Some(j) = self.pop() {
            return Some(j);
        }
        let sh = &*self.shared;
        let mut round = 0u32;
        loop {
            if sh.terminate.load(Ordering::Acquire) {
                return None;
            }
            if let Some(j) = self.steal_once() {
                return Some(j);
            }
            round += 1;
            if round < SPIN_ROUNDS {
                std::hint::spin_loop();
            } else if round < SPIN_ROUNDS + YIELD_ROUNDS || sh.idle == IdlePolicy::Busy {
                thread::yield_now();
            } else {
                self.sleep();
                round = 0;
            }
        }
    }

    #[cold]
    fn sleep(&self) {
        let sh = &*self.shared;
        let me = &sh.sleeping[self.index];
        sh.sleepers.fetch_add(1, Ordering::SeqCst);
        me.store(true, Ordering::SeqCst);
        // Pairs with the light fence in `push`: see the module documentation.
        heavy_fence();
        if !sh.work_visible() && !sh.terminate.load(Ordering::SeqCst) {
            sh.counters.sleeps.add_single_writer(self.index, 1);
            while me.load(Ordering::Acquire) && !sh.terminate.load(Ordering::Acquire) {
                thread::park();
            }
        }
        me.store(false, Ordering::Release);
        sh.sleepers.fetch_sub(1, Ordering::SeqCst);
    }
}

fn worker_main(shared: Arc<Shared>, index: usize, stack_size: usize) {
    let _ = shared.threads[index].set(thread::current());
    let local = Local {
        index,
        active: Cell::new(std::ptr::null()),
        stacks: UnsafeCell::new(StackPool::new(
            stack_size,
            POOL_CAP,
            index,
            Arc::clone(&shared.stacks),
        )),
        idle: UnsafeCell::new(Vec::with_capacity(IDLE_CAP)),
        rng: Cell::new(
            0x9E37_79B9_7F4A_7C15 ^ (index as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03),
        ),
        stack_size,
        shared,
    };
    while let Some(job) = local.find_work() {
        match job {
            Job::Run(j) => {
                let f = local.fiber();
                local.drive(f, Some(Start::Run(j)));
            }
            Job::Resume(f) => local.drive(f, None),
        }
    }
    local.end_idle();
    local.active.set(std::ptr::null());
    local.shared.lock_sets().active[index] = None;
}

/// The body of every fiber, in rounds: a round runs its first task, then the deque bottom until
/// it is empty or holds a fiber to resume; then the fiber idles (suspended with `Done`) until the
/// driver starts it on a new round, or ends it (a resume without a task).
fn fiber_main(sus: &Suspender<Input, Yield>, first: Input, lo: usize, hi: usize) {
    let Input(local, mut start) = first;
    let w = ProwsWorker {
        local: Cell::new(local),
        suspender: sus,
        stack_lo: lo,
        stack_hi: hi,
    };
    while let Some(s) = start {
        match s {
            // SAFETY: a job taken from a deque or the injector has not run yet and its record
            // is alive until it has.
            Start::Run(j) => unsafe { j.execute(&w) },
            // SAFETY: the fork record is in the parent's frame, which stays suspended until
            // `start` has moved the closure out and pushed the parent.
            Start::Fork(j, cont) => unsafe { (j.start)(j.data, &w, cont) },
        }
        let exit = loop {
            match w.local().pop() {
                // SAFETY: as above.
                Some(Job::Run(j)) => unsafe { j.execute(&w) },
                Some(Job::Resume(f)) => break Exit::SwitchTo(f),
                None => break Exit::Idle,
            }
        };
        let Input(local, next) = sus.suspend(Yield::Done(exit));
        w.local.set(local);
        start = next;
    }
}

/// The `abp` pool: P worker threads, one deque each, parsimonious stealing.
pub struct Prows {
    shared: Arc<Shared>,
    handles: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for Prows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prows")
            .field("workers", &self.handles.len())
            .finish()
    }
}

impl Prows {
    /// Starts a pool whose fibers get `stack_size` usable bytes of stack each.
    pub fn with_stack_size(config: &PoolConfig, stack_size: usize) -> Result<Prows, StartError> {
        let p = config.workers;
        if p == 0 {
            return Err(StartError::Unsupported(
                "prows needs at least 1 worker".into(),
            ));
        }
        if config.victim == VictimPolicy::NumaWeighted {
            return Err(StartError::Unsupported(
                "prows steals from a uniformly random victim only".into(),
            ));
        }
        let placement = Topology::detect().placement(config.pinning, p);
        let shared = Arc::new(Shared {
            workers: p,
            sets: Mutex::new(Sets {
                active: (0..p).map(|_| None).collect(),
                stealable: (0..p).map(|_| Vec::new()).collect(),
            }),
            injector: Injector::new(),
            sleepers: AtomicUsize::new(0),
            sleeping: (0..p).map(|_| AtomicBool::new(false)).collect(),
            threads: (0..p).map(|_| OnceLock::new()).collect(),
            terminate: AtomicBool::new(false),
            idle: config.idle,
            counters: Counters {
                steals: PerWorker::new(p),
                attempts: PerWorker::new(p),
                suspensions: PerWorker::new(p),
                resumptions: PerWorker::new(p),
                fibers: PerWorker::new(p),
                fiber_runs: PerWorker::new(p),
                sleeps: PerWorker::new(p),
                deque_suspensions: PerWorker::new(p),
                deque_resumptions: PerWorker::new(p),
                deques_resumable: PerWorker::new(p),
                muggings: PerWorker::new(p),
                rebalances: PerWorker::new(p),
                deques: PerWorker::new(p),
            },
            stacks: Arc::new(StackCounters::new(p)),
        });
        let mut pool = Prows {
            shared: Arc::clone(&shared),
            handles: Vec::with_capacity(p),
        };
        for i in 0..p {
            let sh = Arc::clone(&shared);
            let cpu = placement.as_ref().map(|pl| pl[i]);
            let h = thread::Builder::new()
                .name(format!("prows-{i}"))
                .spawn(move || {
                    if let Some(cpu) = cpu {
                        // Pinning is best effort: a refusal leaves the thread unpinned.
                        let _ = pin_current_thread(cpu);
                    }
                    worker_main(sh, i, stack_size)
                })
                .map_err(|e| StartError::Os(format!("spawning worker {i}: {e}")))?;
            pool.handles.push(h);
        }
        Ok(pool)
    }

    /// Fiber stacks currently in use (0 when no computation is running and every worker has
    /// retired its last fiber).
    pub fn stacks_in_use(&self) -> usize {
        self.shared.stacks.in_use()
    }
}

impl Drop for Prows {
    fn drop(&mut self) {
        self.shared.terminate.store(true, Ordering::SeqCst);
        self.shared.wake_all();
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

impl Scheduler for Prows {
    const NAME: &'static str = "prows";

    fn start(config: &PoolConfig) -> Result<Self, StartError> {
        Prows::with_stack_size(config, DEFAULT_STACK_SIZE)
    }

    fn workers(&self) -> usize {
        self.handles.len()
    }

    fn stats(&self) -> Stats {
        let c = &self.shared.counters;
        Stats {
            steals: Some(c.steals.sum()),
            steal_attempts: Some(c.attempts.sum()),
            extra: vec![
                ("suspensions", c.suspensions.sum()),
                ("resumptions", c.resumptions.sum()),
                ("fibers_created", c.fibers.sum()),
                ("fiber_runs", c.fiber_runs.sum()),
                ("sleeps", c.sleeps.sum()),
                ("deque_suspensions", c.deque_suspensions.sum()),
                ("deques_resumable", c.deques_resumable.sum()),
                ("deque_resumptions", c.deque_resumptions.sum()),
                ("muggings", c.muggings.sum()),
                ("rebalances", c.rebalances.sum()),
                ("deques_created", c.deques.sum()),
            ],
            gauges: vec![
                ("stacks_high_water", self.shared.stacks.high_water() as u64),
                ("stacks_mapped", self.shared.stacks.mapped() as u64),
            ],
        }
    }

    fn reset_stats(&self) {
        let c = &self.shared.counters;
        for x in [
            &c.steals,
            &c.attempts,
            &c.suspensions,
            &c.resumptions,
            &c.fibers,
            &c.fiber_runs,
            &c.sleeps,
            &c.deque_suspensions,
            &c.deques_resumable,
            &c.deque_resumptions,
            &c.muggings,
            &c.rebalances,
            &c.deques,
        ] {
            x.reset();
        }
        self.shared.stacks.reset_high_water();
    }
}

/// The root task of a `run` call, in the caller's frame.
struct RootJob<F, R> {
    f: UnsafeCell<Option<F>>,
    result: UnsafeCell<Option<thread::Result<R>>>,
    done: Arc<(Mutex<bool>, Condvar)>,
}

impl<F, R> RootJob<F, R>
where
    F: FnOnce(&ProwsWorker) -> R + Send,
    R: Send,
{
    unsafe fn exec(data: *const (), w: &ProwsWorker) {
        // SAFETY: `data` is the `RootJob` of a `run` call that blocks until `done` is set.
        let job = unsafe { &*(data as *const Self) };
        // SAFETY: the job runs once; nobody else touches `f` meanwhile.
        let f = unsafe { (*job.f.get()).take() }.expect("root job ran twice");
        let r = panic::catch_unwind(AssertUnwindSafe(|| f(w)));
        let done = Arc::clone(&job.done);
        // SAFETY: the caller reads `result` only after `done` is set below.
        unsafe { *job.result.get() = Some(r) };
        let mut g = done.0.lock().unwrap_or_else(|e| e.into_inner());
        *g = true;
        done.1.notify_all();
    }
}

impl ForkJoin for Prows {
    type Worker = ProwsWorker;

    fn run<R, F>(&self, f: F) -> R
    where
        F: FnOnce(&ProwsWorker) -> R + Send,
        R: Send,
    {
        let job = RootJob {
            f: UnsafeCell::new(Some(f)),
            result: UnsafeCell::new(None),
            done: Arc::new((Mutex::new(false), Condvar::new())),
        };
        self.shared.injector.push(JobRef {
            data: &job as *const RootJob<F, R> as *const (),
            exec: RootJob::<F, R>::exec,
        });
        fence(Ordering::SeqCst);
        self.shared.notify();
        let mut g = job.done.0.lock().unwrap_or_else(|e| e.into_inner());
        while !*g {
            g = job.done.1.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        drop(g);
        match job
            .result
            .into_inner()
            .expect("root job finished without a result")
        {
            Ok(r) => r,
            Err(p) => panic::resume_unwind(p),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The worker handle: join and scope
// ---------------------------------------------------------------------------------------------

/// The handle of one fiber: every task running on that fiber receives it. It stays valid when
/// the fiber migrates, because every resume updates the worker it points to.
pub struct ProwsWorker {
    local: Cell<*const Local>,
    suspender: *const Suspender<Input, Yield>,
    stack_lo: usize,
    stack_hi: usize,
}

impl std::fmt::Debug for ProwsWorker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProwsWorker")
            .field("worker", &self.local().index)
            .finish()
    }
}

// SAFETY: the handle's state is only used by code running on its own fiber, which `local()`
// checks on every use (the caller's stack must be the fiber's stack): a handle sent to another
// thread is unusable there (it panics), never racy. The fiber itself runs on one thread at a
// time.
unsafe impl Send for ProwsWorker {}
// SAFETY: see `Send`.
unsafe impl Sync for ProwsWorker {}

impl ProwsWorker {
    /// The current worker's state. Panics if called from another stack than this fiber's.
    #[inline(always)]
    fn local(&self) -> &Local {
        let probe = 0u8;
        let sp = &probe as *const u8 as usize;
        assert!(
            sp >= self.stack_lo && sp < self.stack_hi,
            "prows: a worker handle was used outside the task it was given to"
        );
        // SAFETY: we run on this handle's fiber (checked above), which the worker `local`
        // points to is running right now (set at the last resume).
        unsafe { &*self.local.get() }
    }

    /// Suspends this fiber, asking the driver for `y`; returns once resumed, on any worker.
    #[inline]
    fn suspend(&self, y: Yield) {
        let _ = self.local();
        // SAFETY: the suspender lives at the base of this fiber's stack, and we run on it.
        let Input(l, start) = unsafe { &*self.suspender }.suspend(y);
        debug_assert!(start.is_none(), "a suspended fiber was given a new task");
        self.local.set(l);
    }

    /// Waits until `sig` is set, suspending this fiber if it is not yet.
    #[inline]
    fn wait(&self, sig: &Signal) {
        if !sig.is_set() {
            self.suspend(Yield::Park(sig));
            debug_assert!(sig.is_set());
        }
    }

    /// A touch: if the future is not done, suspend the active deque with this fiber as its
    /// future-join node (Algorithm 1, lines 29-35) until a `put` makes it resumable.
    #[inline]
    fn touch(&self, fut: &FutState) {
        if !fut.is_done() {
            self.suspend(Yield::SuspendDeque(fut));
            debug_assert!(fut.is_done());
        }
    }

    /// Pushes the current fiber as the stealable continuation and runs `f` on a new fiber.
    fn fork<F: FnOnce(&ProwsWorker)>(&self, f: F) {
        unsafe fn start<F: FnOnce(&ProwsWorker)>(data: *const (), w: &ProwsWorker, cont: FiberBox) {
            // SAFETY: `data` is the `ManuallyDrop<F>` of the suspended `fork` frame; it is read
            // exactly once, here, before the continuation becomes stealable.
            let f = unsafe { std::ptr::read(data as *const F) };
            w.local().push(Job::Resume(cont));
            f(w);
        }
        let f = ManuallyDrop::new(f);
        self.suspend(Yield::Fork(ForkJob {
            data: &*f as *const F as *const (),
            start: start::<F>,
        }));
    }

    /// Sets `sig`, pushing every fiber parked on it onto this worker's deque.
    fn set(&self, sig: &Signal) {
        let local = self.local();
        // SAFETY: `sig` is alive for this call (the caller holds it); `set` touches it only
        // before the swap that lets its waiters go.
        let n = unsafe { sig.set(|f| local.push(Job::Resume(f))) };
        if n > 0 {
            local
                .shared
                .counters
                .resumptions
                .add_single_writer(local.index, n as u64);
        }
    }
}

/// The record of a join's `b`, in the frame of `join`.
struct StackJob<B, RB> {
    func: UnsafeCell<Option<B>>,
    result: UnsafeCell<Option<thread::Result<RB>>>,
    done: Signal,
}

impl<B, RB> StackJob<B, RB>
where
    B: FnOnce(&ProwsWorker) -> RB + Send,
    RB: Send,
{
    /// Runs `b` for a worker that took it from the deque (a thief, or the owner's worker after
    /// the owner suspended).
    unsafe fn exec(data: *const (), w: &ProwsWorker) {
        // SAFETY: the join frame holding this record waits for `done` before returning.
        let job = unsafe { &*(data as *const Self) };
        // SAFETY: whoever took the entry out of the deque is the only one to run it.
        let b = unsafe { (*job.func.get()).take() }.expect("join job ran twice");
        let r = panic::catch_unwind(AssertUnwindSafe(|| b(w)));
        // SAFETY: the owner reads `result` only after `done` is set.
        unsafe { *job.result.get() = Some(r) };
        w.set(&job.done);
    }
}

impl Worker for ProwsWorker {
    type Scope<'s> = ProwsScope<'s>;

    #[inline]
    fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(&Self) -> RA + Send,
        B: FnOnce(&Self) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        let job = StackJob {
            func: UnsafeCell::new(Some(b)),
            result: UnsafeCell::new(None),
            done: Signal::new(),
        };
        let me = JobRef {
            data: &job as *const StackJob<B, RB> as *const (),
            exec: StackJob::<B, RB>::exec,
        };
        self.local().push(Job::Run(me));
        let ra = panic::catch_unwind(AssertUnwindSafe(|| a(self)));
        // The sync. `a` may have migrated this fiber: fetch the worker again.
        let local = self.local();
        match local.pop() {
            Some(Job::Run(j)) if j.data == me.data => {
                // Not taken: `b` is ours to run (or to drop, if `a` panicked).
                let ra = match ra {
                    Ok(ra) => ra,
                    Err(p) => panic::resume_unwind(p),
                };
                // SAFETY: the entry was in no deque any more, so nobody else runs it.
                let b = unsafe { (*job.func.get()).take() }.expect("join job ran twice");
                return (ra, b(self));
            }
            Some(other) => {
                // `b` was taken; this is someone else's entry: put it back where it was.
                local.push(other);
            }
            None => {}
        }
        self.wait(&job.done);
        // SAFETY: `done` is set, so the taker wrote the result and touches the record no more.
        let rb = unsafe { (*job.result.get()).take() }.expect("join job finished without result");
        match (ra, rb) {
            (Ok(ra), Ok(rb)) => (ra, rb),
            (Err(p), _) | (_, Err(p)) => panic::resume_unwind(p),
        }
    }

    fn scope<'s, F, R>(&self, f: F) -> R
    where
        F: FnOnce(&ProwsScope<'s>) -> R + Send,
        R: Send,
    {
        let scope = ProwsScope {
            pending: AtomicUsize::new(1),
            done: Signal::new(),
            panic: Mutex::new(None),
            panicked: AtomicBool::new(false),
            _marker: PhantomData,
        };
        let r = panic::catch_unwind(AssertUnwindSafe(|| f(&scope)));
        // The sync: drop the owner's count; if tasks remain, the last one sets `done`. A count
        // of 1 means no task is left, and none can be added (only running tasks of the scope
        // spawn into it): the decrement can be skipped.
        if scope.pending.load(Ordering::Acquire) != 1
            && scope.pending.fetch_sub(1, Ordering::AcqRel) != 1
        {
            self.wait(&scope.done);
        }
        // `done` (or the last decrement) ordered every task's writes before this point.
        let child = if scope.panicked.load(Ordering::Relaxed) {
            scope.panic.lock().unwrap_or_else(|e| e.into_inner()).take()
        } else {
            None
        };
        if let Some(p) = child {
            panic::resume_unwind(p);
        }
        match r {
            Ok(r) => r,
            Err(p) => panic::resume_unwind(p),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Scopes and futures
// ---------------------------------------------------------------------------------------------

/// A scope of [`ProwsWorker::scope`]. Spawns are work-first: the spawned task runs at once on a
/// new fiber while the spawner's continuation is pushed and may be stolen; the same holds for
/// future creation.
pub struct ProwsScope<'s> {
    /// Unfinished tasks of the scope, plus 1 for the scope body until its end.
    pending: AtomicUsize,
    done: Signal,
    /// The first panic of a spawned or future task, re-raised at the scope's end.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// Set (before the task's completion is signalled) when `panic` was filled: the scope's end
    /// locks `panic` only then.
    panicked: AtomicBool,
    _marker: PhantomData<&'s mut &'s ()>,
}

impl std::fmt::Debug for ProwsScope<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProwsScope")
            .field("pending", &self.pending.load(Ordering::Relaxed))
            .finish()
    }
}

impl<'s> ProwsScope<'s> {
    /// Runs `body` as a task of this scope, work-first.
    fn fork_task<F: FnOnce(&ProwsWorker) + Send>(&self, w: &ProwsWorker, body: F) {
        self.pending.fetch_add(1, Ordering::Relaxed);
        let scope = self;
        w.fork(move |w| {
            if let Err(p) = panic::catch_unwind(AssertUnwindSafe(|| body(w))) {
                scope.panicked.store(true, Ordering::Relaxed);
                let mut slot = scope.panic.lock().unwrap_or_else(|e| e.into_inner());
                if slot.is_none() {
                    *slot = Some(p);
                }
            }
            if scope.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
                w.set(&scope.done);
            }
        });
    }
}

/// The result cell of a future: set once by its task, read by touches.
/// A future's completion and its set of suspended deques (Algorithm 1's `f.suspended`).
struct FutState {
    /// Set (Release) once the task put its value; the touch's fast check.
    done: AtomicBool,
    waiting: Mutex<Waiting>,
}

struct Waiting {
    done: bool,
    suspended: Vec<Arc<Dq>>,
}

impl FutState {
    fn new() -> Self {
        FutState {
            done: AtomicBool::new(false),
            waiting: Mutex::new(Waiting {
                done: false,
                suspended: Vec::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Waiting> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    #[inline]
    fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }
}

struct Cell2<T> {
    done: FutState,
    /// `Some` once the task returned; stays `None` if it panicked.
    value: UnsafeCell<Option<T>>,
}

// SAFETY: `value` is written once, by the future's task, before `done` is set (Release), and
// read only after `done` is seen set (Acquire): moving it between threads needs `T: Send`. A
// single-touch handle takes the value (again `T: Send`); only multi-touch handles share `&T`
// between threads, and `ProwsShared` is only created for `T: Sync` (by `shared_future`).
unsafe impl<T: Send> Send for Cell2<T> {}
// SAFETY: see `Send`.
unsafe impl<T: Send> Sync for Cell2<T> {}

impl<T> Cell2<T> {
    fn new() -> Self {
        Cell2 {
            done: FutState::new(),
            value: UnsafeCell::new(None),
        }
    }

    /// The task's end (`put`): store the value (if any), mark the future done and resume the
    /// deques suspended on it.
    fn put(&self, w: &ProwsWorker, v: Option<T>) {
        // SAFETY: only the future's task writes, once, before `done` is set.
        unsafe { *self.value.get() = v };
        let list = {
            let mut g = self.done.lock();
            g.done = true;
            self.done.done.store(true, Ordering::Release);
            std::mem::take(&mut g.suspended)
        };
        w.local().resume_deques(list);
    }
}

/// A single-touch future of `prows`.
pub struct ProwsFuture<T> {
    cell: Arc<Cell2<T>>,
}

/// A multi-touch future of `prows`.
pub struct ProwsShared<T> {
    cell: Arc<Cell2<T>>,
}

impl<T> Clone for ProwsShared<T> {
    fn clone(&self) -> Self {
        ProwsShared {
            cell: Arc::clone(&self.cell),
        }
    }
}

impl<T> std::fmt::Debug for ProwsFuture<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProwsFuture")
            .field("ready", &self.cell.done.is_done())
            .finish()
    }
}

impl<T> std::fmt::Debug for ProwsShared<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProwsShared")
            .field("ready", &self.cell.done.is_done())
            .finish()
    }
}

impl<'s> Scope<'s> for ProwsScope<'s> {
    type Worker = ProwsWorker;
    type Future<T: Send + 's> = ProwsFuture<T>;
    type SharedFuture<T: Send + Sync + 's> = ProwsShared<T>;

    fn spawn<F>(&self, w: &ProwsWorker, f: F)
    where
        F: FnOnce(&Self, &ProwsWorker) + Send + 's,
    {
        self.fork_task(w, move |w| f(self, w));
    }

    fn future<T, F>(&self, w: &ProwsWorker, f: F) -> ProwsFuture<T>
    where
        F: FnOnce(&Self, &ProwsWorker) -> T + Send + 's,
        T: Send + 's,
    {
        let cell = Arc::new(Cell2::new());
        let c = Arc::clone(&cell);
        self.fork_task(w, move |w| {
            let mut v = None;
            let r = panic::catch_unwind(AssertUnwindSafe(|| v = Some(f(self, w))));
            c.put(w, v);
            if let Err(p) = r {
                panic::resume_unwind(p);
            }
        });
        ProwsFuture { cell }
    }

    fn shared_future<T, F>(&self, w: &ProwsWorker, f: F) -> ProwsShared<T>
    where
        F: FnOnce(&Self, &ProwsWorker) -> T + Send + 's,
        T: Send + Sync + 's,
    {
        let ProwsFuture { cell } = self.future(w, f);
        ProwsShared { cell }
    }
}

impl<T: Send> FutureHandle<T> for ProwsFuture<T> {
    type Worker = ProwsWorker;

    fn get(self, w: &ProwsWorker) -> T {
        w.touch(&self.cell.done);
        // SAFETY: `done` is set, so the task wrote `value` and will not touch it again, and
        // this handle is the only one.
        unsafe { (*self.cell.value.get()).take() }.expect("prows: the future's task panicked")
    }
}

impl<T: Send + Sync> SharedHandle<T> for ProwsShared<T> {
    type Worker = ProwsWorker;

    fn get(&self, w: &ProwsWorker) -> &T {
        w.touch(&self.cell.done);
        // SAFETY: `done` is set, so `value` is written and from now on only read.
        unsafe { (*self.cell.value.get()).as_ref() }.expect("prows: the future's task panicked")
    }
}
