//! `abp`: parsimonious work stealing with futures on stackful fibers, the `ws` scheduler of
//! Spoonhower et al. (SPAA 2009, Figure 2), i.e. Arora, Blumofe and Plaxton's deque scheduler
//! extended to futures.
//!
//! # The algorithm
//!
//! Every worker owns one Chase-Lev deque ([`crate::deque`]: LIFO at the bottom for the owner,
//! FIFO at the top for thieves, no fence on the owner's side; `crossbeam-deque` was measured
//! first and cost about 2.5x more per join, see the module's documentation).
//! Root tasks of [`ForkJoin::run`] arrive through a `crossbeam-deque` injector. A deque entry is either a *task* (a type-erased job record) or
//! a *fiber* to resume. A worker takes work from the bottom of its own deque, and only when it is
//! empty does it steal: a uniformly random victim, the top of its deque (parsimonious).
//!
//! * **`join(a, b)`** (work-first): the continuation after spawning `a` is exactly "run `b`,
//!   then sync", so `b` is pushed as a job record that lives on the caller's stack frame and `a`
//!   runs inline. At the sync the worker pops its deque bottom: if that is `b`, `b` runs inline
//!   (the fast path: no allocation, no `Arc`, no fiber switch). Otherwise `b` was taken by
//!   someone; if it has not finished, the fiber *suspends*: it records itself on `b`'s signal
//!   and the worker goes on with the bottom of its own deque on a fresh fiber. Whoever finishes
//!   `b` last pushes the suspended fiber onto the bottom of *its* deque, so it resumes there.
//! * **Future creation** (`Scope::future`, `Scope::shared_future`) and **`Scope::spawn`** are
//!   work-first too, as in Cilk-F: the current fiber (the continuation) is pushed onto the deque,
//!   where it is stealable, and the child runs eagerly on a new fiber from the pool. When the
//!   child returns, its fiber pops the deque bottom: if the continuation was not stolen it is
//!   resumed there.
//! * **Touch** (`get`) of an unfinished future suspends the current fiber on the future's list
//!   of waiters, and the worker goes on with the bottom of its own deque. When the future
//!   finishes (`put`), every waiter is pushed onto the bottom of the finishing worker's deque.
//! * **Scope end** waits for every spawn and future task of the scope the same way: a counter,
//!   and a signal the last finisher sets.
//!
//! A fiber's body runs its first task, then keeps popping its worker's deque bottom and running
//! the tasks inline; when it pops a fiber to resume, or finds the deque empty, it returns and its
//! stack goes back to the pool. Stealing and sleeping happen on the worker thread's own stack,
//! outside any fiber, in the *driver* that resumes fibers and performs what they ask for when
//! they suspend (park on a signal, fork a child). A fiber never holds worker state across a
//! switch: every resume passes the resuming worker's state, and the task's [`AbpWorker`] handle
//! (one per fiber) is updated with it.
//!
//! # Idle workers
//!
//! A worker that finds nothing tries to steal a few dozen times, then yields its CPU a few
//! times, then sleeps (with [`IdlePolicy::Lazy`], the default). Sleep is a Dekker handshake:
//! the sleeper announces itself (`sleepers += 1`, its flag set, then the *heavy* side of the
//! asymmetric fence of [`crate::deque`]) and looks at every deque once more before it parks; a
//! push issues the *light* side (a compiler fence when `membarrier` is available) after writing
//! the deque and wakes one sleeper if `sleepers > 0`. The pair acts as two SeqCst fences, so
//! either the sleeper sees the new entry or the pusher sees the sleeper: no lost wakeup. A
//! resumed fiber is pushed the same way, so it is always found.
//!
//! # Statistics
//!
//! `steals` and `steal_attempts`; extras: `suspensions` (fibers parked at a touch or a sync),
//! `resumptions` (parked fibers made ready again), `fibers_created`, `sleeps` (idle workers
//! parked), `stacks_high_water`,
//! `stacks_mapped`.
//!
//! # Limits
//!
//! A task may migrate at every `join`, `scope`, `get` and fork, so it must not hold a reference
//! into thread-local storage across them, nor a lock guard whose unlock must happen on the
//! locking thread. `run` must not be called from inside a task of the same pool.

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
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering, fence};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::thread::{self, JoinHandle, Thread};

/// Usable bytes of every fiber stack unless [`Abp::with_stack_size`] says otherwise. Stacks are
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
    exec: unsafe fn(*const (), &AbpWorker),
}

// SAFETY: a `JobRef` is a pointer to a job record whose closure is `Send`; the records stay
// alive until their job has run (a join, scope or `run` does not return before that).
unsafe impl Send for JobRef {}

impl JobRef {
    /// # Safety
    /// `self.data` must still be alive and not yet executed.
    #[inline]
    unsafe fn execute(self, w: &AbpWorker) {
        // SAFETY: forwarded from the caller.
        unsafe { (self.exec)(self.data, w) }
    }
}

/// A fork: the child closure, read (moved) by the new fiber from the parent's frame.
#[derive(Clone, Copy)]
struct ForkJob {
    data: *const (),
    start: unsafe fn(*const (), &AbpWorker, FiberBox),
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

type AbpFiber = Fiber<Input, Yield, ()>;

/// A fiber with an intrusive link for the waiter lists of [`Signal`].
struct FiberNode {
    fiber: AbpFiber,
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
                    std::mem::transmute::<usize, unsafe fn(*const (), &AbpWorker)>(e[1])
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
}

/// State shared by all workers of a pool.
struct Shared {
    thieves: Box<[Thief]>,
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
        !self.injector.is_empty() || self.thieves.iter().any(|t| !t.is_empty())
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
    deque: Owner,
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
        self.deque.push(job.encode());
        // Pairs with the heavy fence in `sleep`: see the module documentation.
        light_fence();
        self.shared.notify();
    }

    /// Pops the bottom of the deque.
    #[inline]
    fn pop(&self) -> Option<Job> {
        // SAFETY: every entry of the deque was encoded by `push`, and popping takes it out.
        self.deque.pop().map(|e| unsafe { Job::decode(e) })
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
                "abp: cannot map a {} byte fiber stack: {e}",
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

    /// One steal attempt from a uniformly random victim (and from the injector).
    fn steal_once(&self) -> Option<Job> {
        let sh = &*self.shared;
        loop {
            match sh.injector.steal() {
                Steal::Success(j) => return Some(Job::Run(j)),
                Steal::Retry => continue,
                Steal::Empty => break,
            }
        }
        let n = sh.thieves.len();
        if n < 2 {
            return None;
        }
        let mut v = (self.next_rand() % (n as u64 - 1)) as usize;
        if v >= self.index {
            v += 1;
        }
        sh.counters.attempts.add_single_writer(self.index, 1);
        loop {
            match sh.thieves[v].steal() {
                Stolen::Entry(e) => {
                    sh.counters.steals.add_single_writer(self.index, 1);
                    // SAFETY: the entry was encoded by its owner's `push`; stealing took it.
                    return Some(unsafe { Job::decode(e) });
                }
                Stolen::Retry => continue,
                Stolen::Empty => return None,
            }
        }
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

fn worker_main(shared: Arc<Shared>, index: usize, deque: Owner, stack_size: usize) {
    let _ = shared.threads[index].set(thread::current());
    let local = Local {
        index,
        deque,
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
}

/// The body of every fiber, in rounds: a round runs its first task, then the deque bottom until
/// it is empty or holds a fiber to resume; then the fiber idles (suspended with `Done`) until the
/// driver starts it on a new round, or ends it (a resume without a task).
fn fiber_main(sus: &Suspender<Input, Yield>, first: Input, lo: usize, hi: usize) {
    let Input(local, mut start) = first;
    let w = AbpWorker {
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
pub struct Abp {
    shared: Arc<Shared>,
    handles: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for Abp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Abp")
            .field("workers", &self.handles.len())
            .finish()
    }
}

impl Abp {
    /// Starts a pool whose fibers get `stack_size` usable bytes of stack each.
    pub fn with_stack_size(config: &PoolConfig, stack_size: usize) -> Result<Abp, StartError> {
        let p = config.workers;
        if p == 0 {
            return Err(StartError::Unsupported(
                "abp needs at least 1 worker".into(),
            ));
        }
        if config.victim == VictimPolicy::NumaWeighted {
            return Err(StartError::Unsupported(
                "abp steals from a uniformly random victim only".into(),
            ));
        }
        let placement = Topology::detect().placement(config.pinning, p);
        let (deques, thieves): (Vec<Owner>, Vec<Thief>) = (0..p).map(|_| deque::new(256)).unzip();
        let shared = Arc::new(Shared {
            thieves: thieves.into_boxed_slice(),
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
            },
            stacks: Arc::new(StackCounters::new(p)),
        });
        let mut pool = Abp {
            shared: Arc::clone(&shared),
            handles: Vec::with_capacity(p),
        };
        for (i, deque) in deques.into_iter().enumerate() {
            let sh = Arc::clone(&shared);
            let cpu = placement.as_ref().map(|pl| pl[i]);
            let h = thread::Builder::new()
                .name(format!("abp-{i}"))
                .spawn(move || {
                    if let Some(cpu) = cpu {
                        // Pinning is best effort: a refusal leaves the thread unpinned.
                        let _ = pin_current_thread(cpu);
                    }
                    worker_main(sh, i, deque, stack_size)
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

impl Drop for Abp {
    fn drop(&mut self) {
        self.shared.terminate.store(true, Ordering::SeqCst);
        self.shared.wake_all();
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

impl Scheduler for Abp {
    const NAME: &'static str = "abp";

    fn start(config: &PoolConfig) -> Result<Self, StartError> {
        Abp::with_stack_size(config, DEFAULT_STACK_SIZE)
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
    F: FnOnce(&AbpWorker) -> R + Send,
    R: Send,
{
    unsafe fn exec(data: *const (), w: &AbpWorker) {
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

impl ForkJoin for Abp {
    type Worker = AbpWorker;

    fn run<R, F>(&self, f: F) -> R
    where
        F: FnOnce(&AbpWorker) -> R + Send,
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
pub struct AbpWorker {
    local: Cell<*const Local>,
    suspender: *const Suspender<Input, Yield>,
    stack_lo: usize,
    stack_hi: usize,
}

impl std::fmt::Debug for AbpWorker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AbpWorker")
            .field("worker", &self.local().index)
            .finish()
    }
}

// SAFETY: the handle's state is only used by code running on its own fiber, which `local()`
// checks on every use (the caller's stack must be the fiber's stack): a handle sent to another
// thread is unusable there (it panics), never racy. The fiber itself runs on one thread at a
// time.
unsafe impl Send for AbpWorker {}
// SAFETY: see `Send`.
unsafe impl Sync for AbpWorker {}

impl AbpWorker {
    /// The current worker's state. Panics if called from another stack than this fiber's.
    #[inline(always)]
    fn local(&self) -> &Local {
        let probe = 0u8;
        let sp = &probe as *const u8 as usize;
        assert!(
            sp >= self.stack_lo && sp < self.stack_hi,
            "abp: a worker handle was used outside the task it was given to"
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

    /// Pushes the current fiber as the stealable continuation and runs `f` on a new fiber.
    fn fork<F: FnOnce(&AbpWorker)>(&self, f: F) {
        unsafe fn start<F: FnOnce(&AbpWorker)>(data: *const (), w: &AbpWorker, cont: FiberBox) {
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
    B: FnOnce(&AbpWorker) -> RB + Send,
    RB: Send,
{
    /// Runs `b` for a worker that took it from the deque (a thief, or the owner's worker after
    /// the owner suspended).
    unsafe fn exec(data: *const (), w: &AbpWorker) {
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

impl Worker for AbpWorker {
    type Scope<'s> = AbpScope<'s>;

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
        F: FnOnce(&AbpScope<'s>) -> R + Send,
        R: Send,
    {
        let scope = AbpScope {
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

/// A scope of [`AbpWorker::scope`]. Spawns are work-first: the spawned task runs at once on a
/// new fiber while the spawner's continuation is pushed and may be stolen; the same holds for
/// future creation.
pub struct AbpScope<'s> {
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

impl std::fmt::Debug for AbpScope<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AbpScope")
            .field("pending", &self.pending.load(Ordering::Relaxed))
            .finish()
    }
}

impl<'s> AbpScope<'s> {
    /// Runs `body` as a task of this scope, work-first.
    fn fork_task<F: FnOnce(&AbpWorker) + Send>(&self, w: &AbpWorker, body: F) {
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
struct Cell2<T> {
    done: Signal,
    /// `Some` once the task returned; stays `None` if it panicked.
    value: UnsafeCell<Option<T>>,
}

// SAFETY: `value` is written once, by the future's task, before `done` is set (Release), and
// read only after `done` is seen set (Acquire): moving it between threads needs `T: Send`. A
// single-touch handle takes the value (again `T: Send`); only multi-touch handles share `&T`
// between threads, and `AbpShared` is only created for `T: Sync` (by `shared_future`).
unsafe impl<T: Send> Send for Cell2<T> {}
// SAFETY: see `Send`.
unsafe impl<T: Send> Sync for Cell2<T> {}

impl<T> Cell2<T> {
    fn new() -> Self {
        Cell2 {
            done: Signal::new(),
            value: UnsafeCell::new(None),
        }
    }

    /// The task's end: store the value (if any) and release the waiters.
    fn put(&self, w: &AbpWorker, v: Option<T>) {
        // SAFETY: only the future's task writes, once, before `done` is set.
        unsafe { *self.value.get() = v };
        w.set(&self.done);
    }
}

/// A single-touch future of `abp`.
pub struct AbpFuture<T> {
    cell: Arc<Cell2<T>>,
}

/// A multi-touch future of `abp`.
pub struct AbpShared<T> {
    cell: Arc<Cell2<T>>,
}

impl<T> Clone for AbpShared<T> {
    fn clone(&self) -> Self {
        AbpShared {
            cell: Arc::clone(&self.cell),
        }
    }
}

impl<T> std::fmt::Debug for AbpFuture<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AbpFuture")
            .field("ready", &self.cell.done.is_set())
            .finish()
    }
}

impl<T> std::fmt::Debug for AbpShared<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AbpShared")
            .field("ready", &self.cell.done.is_set())
            .finish()
    }
}

impl<'s> Scope<'s> for AbpScope<'s> {
    type Worker = AbpWorker;
    type Future<T: Send + 's> = AbpFuture<T>;
    type SharedFuture<T: Send + Sync + 's> = AbpShared<T>;

    fn spawn<F>(&self, w: &AbpWorker, f: F)
    where
        F: FnOnce(&Self, &AbpWorker) + Send + 's,
    {
        self.fork_task(w, move |w| f(self, w));
    }

    fn future<T, F>(&self, w: &AbpWorker, f: F) -> AbpFuture<T>
    where
        F: FnOnce(&Self, &AbpWorker) -> T + Send + 's,
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
        AbpFuture { cell }
    }

    fn shared_future<T, F>(&self, w: &AbpWorker, f: F) -> AbpShared<T>
    where
        F: FnOnce(&Self, &AbpWorker) -> T + Send + 's,
        T: Send + Sync + 's,
    {
        let AbpFuture { cell } = self.future(w, f);
        AbpShared { cell }
    }
}

impl<T: Send> FutureHandle<T> for AbpFuture<T> {
    type Worker = AbpWorker;

    fn get(self, w: &AbpWorker) -> T {
        w.wait(&self.cell.done);
        // SAFETY: `done` is set, so the task wrote `value` and will not touch it again, and
        // this handle is the only one.
        unsafe { (*self.cell.value.get()).take() }.expect("abp: the future's task panicked")
    }
}

impl<T: Send + Sync> SharedHandle<T> for AbpShared<T> {
    type Worker = AbpWorker;

    fn get(&self, w: &AbpWorker) -> &T {
        w.wait(&self.cell.done);
        // SAFETY: `done` is set, so `value` is written and from now on only read.
        unsafe { (*self.cell.value.get()).as_ref() }.expect("abp: the future's task panicked")
    }
}
