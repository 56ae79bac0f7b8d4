//! A worker of a fiber pool: the state shared by all workers ([`Shared`]), one worker's private
//! state ([`Local`]), the driver that resumes fibers and carries out what they ask for, the
//! search for work (own deque, injector, the policy's steal, backoff, sleep), and the body of
//! every fiber.

use super::handle::FiberWorker;
use super::job::{Exit, FiberBox, FiberNode, Input, Job, JobRef, Start, Yield};
use super::rendezvous::{Rendezvous, RvPool};
use super::signal::Signal;
use super::{IDLE_CAP, POOL_CAP, Policy, SPIN_ROUNDS, YIELD_ROUNDS};
use crate::config::{FutureStack, IdlePolicy};
use crate::deque::{heavy_fence, light_fence};
use crate::fiber::{Fiber, FiberResult, Suspender};
use crate::stack::{StackCounters, StackPool};
use crate::stats::PerWorker;
use crossbeam_deque::{Injector, Steal};
use std::cell::{Cell, UnsafeCell};
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::{self, Thread};

/// The counters every fiber pool keeps (a policy keeps its own in [`Policy::Shared`]).
pub struct Counters {
    /// Successful steals.
    pub steals: PerWorker,
    /// Steal attempts.
    pub attempts: PerWorker,
    /// Fibers parked on a signal (a join or scope sync; `abp`: also a touch).
    pub suspensions: PerWorker,
    /// Parked fibers made ready again.
    pub resumptions: PerWorker,
    /// Fibers created.
    pub fibers: PerWorker,
    /// Fibers started on a task (new or reused).
    pub fiber_runs: PerWorker,
    /// Spawns and future creations whose continuation someone else took before the child
    /// ended (the child could not hand its result back directly).
    pub parted: PerWorker,
    /// Idle workers parked.
    pub sleeps: PerWorker,
}

impl Counters {
    /// Zeroed counters for `p` workers.
    pub fn new(p: usize) -> Self {
        Counters {
            steals: PerWorker::new(p),
            attempts: PerWorker::new(p),
            suspensions: PerWorker::new(p),
            resumptions: PerWorker::new(p),
            fibers: PerWorker::new(p),
            fiber_runs: PerWorker::new(p),
            parted: PerWorker::new(p),
            sleeps: PerWorker::new(p),
        }
    }
}

/// State shared by all workers of a pool.
pub struct Shared<P: Policy> {
    /// The policy's shared state (the deques thieves reach, its counters).
    pub pol: P::Shared,
    /// Root tasks of `run`.
    pub injector: Injector<JobRef<P>>,
    /// How many workers are (about to go) asleep.
    pub sleepers: AtomicUsize,
    /// Per worker: asleep (or about to be), cleared by the waker.
    pub sleeping: Box<[AtomicBool]>,
    /// The worker threads, to unpark them.
    pub threads: Box<[OnceLock<Thread>]>,
    /// Set when the pool is dropped.
    pub terminate: AtomicBool,
    /// What idle workers do.
    pub idle: IdlePolicy,
    /// Where future tasks run.
    pub future_stack: FutureStack,
    /// The common counters.
    pub counters: Counters,
    /// Calls of `run` in progress. Idle-time counters (steal attempts, sleeps) count only
    /// while this is not zero: an idle pool hunting between runs is not part of any run.
    pub runs: AtomicUsize,
    /// Fiber stacks of all workers.
    pub stacks: Arc<StackCounters>,
}

impl<P: Policy> Shared<P> {
    /// Whether idle-time counters count now (a `run` is in progress). Relaxed: a worker that
    /// read `true` just before the last run ended adds at most one more, and the counters are
    /// statistics, not synchronization.
    #[inline]
    pub fn in_run(&self) -> bool {
        self.runs.load(Ordering::Relaxed) != 0
    }

    /// Is there anything to steal or inject anywhere?
    fn work_visible(&self) -> bool {
        !self.injector.is_empty() || P::work_visible(&self.pol)
    }

    /// Wakes one sleeping worker, if any. Called after a SeqCst fence that follows a push.
    #[inline]
    pub fn notify(&self) {
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

    /// Wakes every worker (at shutdown).
    pub fn wake_all(&self) {
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
pub struct Local<P: Policy> {
    /// The worker's number.
    pub index: usize,
    /// The policy's per-worker state (the deque, or the active deque).
    pub pol: P::Local,
    stacks: UnsafeCell<StackPool>,
    idle: UnsafeCell<Vec<FiberBox<P>>>,
    rv: UnsafeCell<RvPool>,
    rng: Cell<u64>,
    stack_size: usize,
    /// The pool's shared state.
    pub shared: Arc<Shared<P>>,
}

impl<P: Policy> Local<P> {
    /// Pushes onto the bottom of the deque and wakes a sleeper if there is one.
    #[inline]
    pub fn push(&self, job: Job<P>) {
        P::owner(self).push(job.encode());
        // Pairs with the heavy fence in `sleep`: see the module documentation.
        light_fence();
        self.shared.notify();
    }

    /// Pops the bottom of the deque.
    #[inline]
    pub fn pop(&self) -> Option<Job<P>> {
        // SAFETY: every entry of the deque was encoded by `push`, and popping takes it out.
        P::pop(self).map(|e| unsafe { Job::decode(e) })
    }

    /// A fresh rendezvous for a fork, from this worker's pool.
    #[inline]
    pub fn rv_take(&self) -> *const Rendezvous {
        // SAFETY: only this worker's thread touches its pool, and not re-entrantly.
        unsafe { &mut *self.rv.get() }.take()
    }

    /// Recycles a rendezvous into this worker's pool.
    ///
    /// # Safety
    /// As [`RvPool::give`]: nobody uses `rv` any more.
    #[inline]
    pub unsafe fn rv_give(&self, rv: *const Rendezvous) {
        // SAFETY: only this worker's thread touches its pool; the rest is the caller's.
        unsafe { (*self.rv.get()).give(rv) }
    }

    /// The worker's next pseudo-random number.
    pub fn next_rand(&self) -> u64 {
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
    fn fiber(&self) -> FiberBox<P> {
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
    fn new_fiber(&self) -> FiberBox<P> {
        // SAFETY: only this worker's thread touches its pool, and not re-entrantly.
        let pool = unsafe { &mut *self.stacks.get() };
        let stack = pool.take().unwrap_or_else(|e| {
            eprintln!(
                "{}: cannot map a {} byte fiber stack: {e}",
                P::NAME,
                self.stack_size
            );
            std::process::abort()
        });
        self.shared.counters.fibers.add_single_writer(self.index, 1);
        let (lo, hi) = (stack.bottom(), stack.top());
        // SAFETY: what a fiber holds across a suspension is task data (closures and values
        // that are `Send` by the trait bounds) and this module's records, which are `Send`;
        // fiber code reaches worker state only through the resume input.
        let fiber =
            unsafe { Fiber::new(stack, move |sus, input| fiber_main::<P>(sus, input, lo, hi)) };
        Box::new(FiberNode {
            fiber,
            next: std::ptr::null_mut(),
            fork_rv: std::ptr::null(),
        })
    }

    /// Keeps a fiber whose work is done for reuse, or ends it if enough are kept.
    fn retire(&self, f: FiberBox<P>) {
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
    fn end(&self, mut f: FiberBox<P>) {
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

    /// Parks the suspended fiber `f` on `sig` ([`Signal::park`]): returns it back if `sig` is
    /// set already; otherwise `f` and `sig` must not be touched any more.
    pub fn park(&self, sig: &Signal<P>, f: FiberBox<P>) -> Option<FiberBox<P>> {
        let back = sig.park(f);
        if back.is_none() {
            self.shared
                .counters
                .suspensions
                .add_single_writer(self.index, 1);
        }
        back
    }

    /// Resumes `f` (giving it `start` if it is to start a task) and carries out what it asks
    /// for, until a fiber parks or the deque runs dry.
    fn drive(&self, mut f: FiberBox<P>, mut start: Option<Start<P>>) {
        loop {
            f.fork_rv = std::ptr::null();
            match f.fiber.resume(Input(self, start.take())) {
                FiberResult::Yield(Yield::Park(sig)) => {
                    // SAFETY: the signal lives in the suspended fiber's frame or in an `Arc`
                    // that frame holds; the fiber cannot run before `park` publishes it.
                    match self.park(unsafe { &*sig }, f) {
                        None => return,
                        Some(back) => f = back,
                    }
                }
                FiberResult::Yield(Yield::Touch(fut)) => {
                    // SAFETY: the future's state is kept alive by the handle in the suspended
                    // fiber's frame; the fiber cannot run before the policy publishes it.
                    match P::suspend_touch(self, unsafe { &*fut }, f) {
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

    /// One steal attempt: a root task from the injector, else the policy's steal.
    fn steal_once(&self) -> Option<Job<P>> {
        loop {
            match self.shared.injector.steal() {
                Steal::Success(j) => {
                    P::took_root_task(self);
                    return Some(Job::Run(j));
                }
                Steal::Retry => continue,
                Steal::Empty => break,
            }
        }
        P::steal(self)
    }

    /// The next job: own deque bottom, else steal, else back off and sleep. `None` at shutdown.
    fn find_work(&self) -> Option<Job<P>> {
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
            if sh.in_run() {
                sh.counters.sleeps.add_single_writer(self.index, 1);
            }
            while me.load(Ordering::Acquire) && !sh.terminate.load(Ordering::Acquire) {
                thread::park();
            }
        }
        me.store(false, Ordering::Release);
        sh.sleepers.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The worker thread `index`: takes work until the pool terminates.
pub fn worker_main<P: Policy>(
    shared: Arc<Shared<P>>,
    index: usize,
    seed: P::Seed,
    stack_size: usize,
) {
    let _ = shared.threads[index].set(thread::current());
    let local = Local {
        index,
        pol: P::local(seed),
        stacks: UnsafeCell::new(StackPool::new(
            stack_size,
            POOL_CAP,
            index,
            Arc::clone(&shared.stacks),
        )),
        idle: UnsafeCell::new(Vec::with_capacity(IDLE_CAP)),
        rv: UnsafeCell::new(RvPool::new()),
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
    P::exit(&local);
}

/// The body of every fiber, in rounds: a round runs its first task, then the deque bottom until
/// it is empty or holds a fiber to resume; then the fiber idles (suspended with `Done`) until the
/// driver starts it on a new round, or ends it (a resume without a task).
fn fiber_main<P: Policy>(
    sus: &Suspender<Input<P>, Yield<P>>,
    first: Input<P>,
    lo: usize,
    hi: usize,
) {
    let Input(local, mut start) = first;
    let w = FiberWorker::new(local, sus, lo, hi);
    while let Some(s) = start {
        let handed_back = match s {
            Start::Run(j) => {
                // SAFETY: a job taken from a deque or the injector has not run yet and its
                // record is alive until it has.
                unsafe { j.execute(&w) };
                None
            }
            // SAFETY: the fork record is in the parent's frame, which stays suspended until
            // `start` has moved the closure out and pushed the parent.
            Start::Fork(j, cont) => unsafe { (j.start)(j.data, &w, cont) },
        };
        let exit = if let Some(parent) = handed_back {
            Exit::SwitchTo(parent)
        } else {
            loop {
                match w.local().pop() {
                    // SAFETY: as above.
                    Some(Job::Run(j)) => unsafe { j.execute(&w) },
                    Some(Job::Resume(f)) => break Exit::SwitchTo(f),
                    None => break Exit::Idle,
                }
            }
        };
        let Input(local, next) = sus.suspend(Yield::Done(exit));
        w.set_local(local);
        start = next;
    }
}
