//! A worker of a fiber pool: the state shared by all workers ([`Shared`]), one worker's private
//! state ([`Local`]), the driver that resumes fibers and carries out what they ask for, the
//! search for work (own deque, injector, the policy's steal, backoff, sleep), and a fiber's
//! rounds of work (the entry of a round the driver starts, and the end of every round).

use super::handle::FiberWorker;
use super::job::{Exit, FiberBox, FiberNode, Input, Job, JobRef, ToDriver, Yield};
use super::rendezvous::{Rendezvous, RvPool};
use super::signal::Signal;
use super::sleep::Sleepers;
use super::{Policy, SPIN_ROUNDS, YIELD_ROUNDS};
use crate::config::{FutureStack, IdlePolicy};
use crate::deque::{self, FenceCounts};
use crate::fiber;
use crate::stack::{StackCounters, StackPool};
use crate::stats::PerWorker;
use crossbeam_deque::{Injector, Steal};
use std::cell::{Cell, UnsafeCell};
use std::mem::ManuallyDrop;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::thread;

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
    /// Strands that deviated from the serial order, charged to the worker that ran them
    /// (see [`super::deviation`]).
    pub deviations: PerWorker,
    /// Fibril's unmaps: fibers about to suspend whose stack below the frame their driver set
    /// out to give back to the OS (only with [`super::StackUse::release_suspended`]), whether
    /// or not a page there was resident; Fibril calls `madvise` on every such suspension. The
    /// driver releases before it parks, so a park that finds its signal set after all counts
    /// one here without a suspension.
    pub unmaps: PerWorker,
    /// Those of `unmaps` that found resident pages there and gave them back (one `madvise`
    /// each; the others make no call).
    pub unmaps_resident: PerWorker,
    /// Pages given back by those calls (resident before, by `mincore`).
    pub pages_released: PerWorker,
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
            deviations: PerWorker::new(p),
            unmaps: PerWorker::new(p),
            unmaps_resident: PerWorker::new(p),
            pages_released: PerWorker::new(p),
        }
    }
}

/// State shared by all workers of a pool.
pub struct Shared<P: Policy> {
    /// The policy's shared state (the deques thieves reach, its counters).
    pub pol: P::Shared,
    /// The fence counts of every deque of the pool, and of the sleepers' heavy fences.
    pub fences: Arc<FenceCounts>,
    /// Root tasks of `run`.
    pub injector: Injector<JobRef<P>>,
    /// Idle workers' sleep and wake-up, and the shutdown.
    pub sleep: Sleepers,
    /// What idle workers do.
    pub idle: IdlePolicy,
    /// Where future tasks run.
    pub futures: FutureStack,
    /// Whether a suspended fiber's stack gives its pages back: the policy's
    /// [`StackUse::release_suspended`](super::StackUse) unless the pool was started with
    /// [`Unmap::Off`](crate::config::Unmap).
    pub release_suspended: bool,
    /// The common counters.
    pub counters: Counters,
    /// Calls of `run` in progress. Idle-time counters (steal attempts, sleeps) count only
    /// while this is not zero: an idle pool hunting between runs is not part of any run.
    pub runs: AtomicUsize,
    /// Fiber stacks of all workers.
    pub stacks: Arc<StackCounters>,
    /// Per worker: its thread's id (for its page faults, read from `/proc`), 0 until known.
    pub tids: Box<[std::sync::atomic::AtomicI32]>,
    /// The worker threads' minor page faults at the last `reset_stats`.
    pub faults_base: AtomicU64,
    /// The forced schedule's steal budget ([`PoolConfig::steals`]), if any.
    ///
    /// [`PoolConfig::steals`]: crate::PoolConfig::steals
    pub budget: Option<u64>,
    /// With a budget: the steals counter's sum when the latest `run` began.
    pub steals_base: AtomicU64,
    /// With a budget: workers not in [`Local::find_work`]'s idle loop (running a task, or not
    /// started yet). Without one it is not kept.
    pub busy: AtomicUsize,
    /// The I/O thread of latency futures and its counters ([`super::latency`]).
    pub io: super::latency::PoolIo,
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

    /// Wakes one sleeping worker, if any ([`Sleepers::notify`]). Called after a push and the
    /// light side of the fence (or a SeqCst fence).
    #[inline]
    pub fn notify(&self) {
        self.sleep.notify();
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
    /// The idle fibers, linked through their `next` (an idle fiber waits on no signal), and
    /// how many there are.
    idle: Cell<*mut FiberNode<P>>,
    idle_len: Cell<usize>,
    rv: UnsafeCell<RvPool>,
    /// The driver's saved context while a fiber of this worker runs.
    driver: UnsafeCell<usize>,
    /// This worker's cells of the counters bumped at every fork: fibers started, stacks taken
    /// and given back (in `shared` and `stacks`, which this value keeps alive).
    runs_cell: *const AtomicU64,
    taken_cell: *const AtomicU64,
    given_cell: *const AtomicU64,
    rng: Cell<u64>,
    /// The worker's deviation mark: advanced by P at every strand end on a slow path, so the
    /// marks of worker i are i + kP, distinct from every other worker's (see
    /// [`super::deviation`]).
    pub(super) mark: Cell<u64>,
    /// P, the step of `mark`.
    pub(super) mark_step: u64,
    /// This worker's cell of `Counters::deviations` (in `shared`, which this value keeps
    /// alive), bumped without a read-modify-write: only this worker writes it.
    pub(super) deviations_cell: *const AtomicU64,
    stack_size: usize,
    /// Scratch space for `mincore` when a suspended stack's pages are released.
    scratch: UnsafeCell<Vec<u8>>,
    /// The pool's shared state.
    pub shared: Arc<Shared<P>>,
}

impl<P: Policy> Local<P> {
    /// Pushes onto the bottom of the deque and wakes a sleeper if there is one.
    #[inline]
    pub fn push(&self, job: Job<P>) {
        self.push_entry(job.encode());
    }

    #[inline(always)]
    fn push_entry(&self, e: deque::Entry) {
        let o = P::owner(self);
        o.push(e);
        // Pairs with the heavy fence in `Sleepers::sleep`: see `super::sleep`.
        o.light_fence();
        self.shared.notify();
    }

    /// Takes back the task entry whose record is at `data`, pushed by the running fiber, if
    /// it is still at the bottom of the deque (nobody took it): true if so. Another entry
    /// found there (ours was stolen) stays in the deque. The address identifies the entry:
    /// every entry's first word is the address of a live object (a task record, alive until
    /// its entry is taken, or a fiber node), and no two live objects share an address. Only
    /// while a fiber runs (so the worker has a deque).
    #[inline(always)]
    pub fn take_back(&self, data: *const ()) -> bool {
        match P::owner(self).pop() {
            Some(e) if e[0] == data as usize => true,
            Some(e) => {
                self.put_back(e);
                false
            }
            None => false,
        }
    }

    /// Pushes back an entry [`Self::take_back`] popped that was not the caller's.
    #[cold]
    fn put_back(&self, e: deque::Entry) {
        self.push_entry(e);
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
        crate::rng::xorshift64star(&self.rng)
    }

    /// A fiber to run a new task: an idle one if there is one, else a new one. The caller
    /// starts it over with the task's entry ([`crate::fiber::restart`] at its `top`) and
    /// switches to it.
    #[inline]
    pub fn fiber(&self) -> FiberBox<P> {
        // SAFETY: the cells live as long as `self` (see their fields), and only this worker
        // writes them.
        PerWorker::bump(unsafe { &*self.runs_cell }, 1);
        if let Some(f) = self.pop_idle() {
            // The stack counts as taken again (`StackPool::note_reused`). SAFETY: as above.
            PerWorker::bump(unsafe { &*self.taken_cell }, 1);
            return f;
        }
        self.new_fiber()
    }

    /// Takes an idle fiber off the idle list.
    #[inline(always)]
    fn pop_idle(&self) -> Option<FiberBox<P>> {
        let f = self.idle.get();
        if f.is_null() {
            return None;
        }
        // SAFETY: the list holds boxes given up by `keep_idle`, owned by the list, and only
        // this worker's thread touches it.
        let f = unsafe { Box::from_raw(f) };
        self.idle.set(f.next);
        self.idle_len.set(self.idle_len.get() - 1);
        Some(f)
    }

    #[cold]
    fn new_fiber(&self) -> FiberBox<P> {
        // SAFETY: only this worker's thread touches its pool, and not re-entrantly.
        let pool = unsafe { &mut *self.stacks.get() };
        let stack = pool.take().unwrap_or_else(|e| {
            // No unwinding from here: this may run on the worker's own stack, below every
            // fiber, or inside a fiber whose frames cannot be unwound; and no waiting, since the
            // task that needs the stack may be the one everything else waits for. The pool
            // checked at its start that each worker could map one; this is a later shortage.
            eprintln!(
                "{}: cannot map a {} byte fiber stack: {e} (give the process more address \
                 space, or the pool smaller stacks); exiting",
                P::NAME,
                self.stack_size
            );
            std::process::exit(1)
        });
        self.shared.counters.fibers.add_single_writer(self.index, 1);
        // The fiber's handle lives at the top of its stack, above every round's frames.
        const {
            assert!(
                std::mem::size_of::<FiberWorker<P>>() <= HANDLE_BYTES
                    && std::mem::align_of::<FiberWorker<P>>() <= 16
            )
        };
        let top = (stack.top() - HANDLE_BYTES) & !15;
        let mut node = Box::new(FiberNode {
            sp: 0,
            stack,
            top,
            next: std::ptr::null_mut(),
            fork_rv: std::ptr::null(),
            rv: self.rv_take(),
        });
        let handle = FiberWorker::new(self, &mut *node);
        // SAFETY: the stack is this fiber's alone; `[top, top + HANDLE_BYTES)` is inside it,
        // above every frame, and 16-byte aligned (the size and alignment are checked above). The handle
        // has no destructor: it goes with the stack. `fiber_entry` never returns. What a fiber
        // holds across a switch is task data (closures and values that are `Send` by the
        // trait bounds) and this module's records, which are `Send`; fiber code reaches worker
        // state only through its handle, which every switch into the fiber updates.
        // Every round restarts the context (`fiber::restart` at `top`); preparing it once here
        // writes what the restarts keep (the end of the frame chain) and leaves a valid `sp`.
        node.sp = unsafe {
            (top as *mut FiberWorker<P>).write(handle);
            fiber::prepare_below(top, fiber_entry::<P>, top)
        };
        node
    }

    /// The driver's saved context (valid while a fiber of this worker runs).
    #[inline(always)]
    pub fn driver_context(&self) -> usize {
        // SAFETY: only this worker's thread reads or writes it.
        unsafe { *self.driver.get() }
    }

    /// Can one more fiber be kept idle?
    #[inline(always)]
    pub fn idle_has_room(&self) -> bool {
        self.idle_len.get() < P::STACKS.idle
    }

    /// Keeps `f` (suspended with its round of work done, or about to be) as an idle fiber.
    /// The caller checked [`Self::idle_has_room`].
    #[inline(always)]
    pub fn keep_idle(&self, mut f: FiberBox<P>) {
        // The stack counts as given back (see `StackPool::own_cells`). SAFETY: the cell lives as
        // long as `self`, and only this worker writes it.
        PerWorker::bump(unsafe { &*self.given_cell }, 1);
        f.next = self.idle.get();
        self.idle.set(Box::into_raw(f));
        self.idle_len.set(self.idle_len.get() + 1);
    }

    /// Keeps a fiber whose work is done for reuse, or ends it if enough are kept.
    fn retire(&self, f: FiberBox<P>) {
        if self.idle_has_room() {
            self.keep_idle(f);
        } else {
            self.end(f);
        }
    }

    /// Ends a fiber whose round of work is over and gives its stack back to the pool. Its
    /// context is never continued: a round's frames hold nothing to drop (see `fiber_entry`).
    // The box is the fiber's identity in deques and waiter lists; ending it frees it.
    #[allow(clippy::boxed_local)]
    fn end(&self, f: FiberBox<P>) {
        let FiberNode { stack, rv, .. } = *f;
        // SAFETY: an idle fiber's rendezvous is its own and unused (see `FiberNode::rv`).
        unsafe { self.rv_give(rv) };
        // SAFETY: only this worker's thread touches its stack pool, and not re-entrantly.
        unsafe { &mut *self.stacks.get() }.give(stack);
    }

    /// Ends every idle fiber (at shutdown).
    fn end_idle(&self) {
        while let Some(f) = self.pop_idle() {
            // SAFETY: as in `end`.
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

    /// Gives back the pages of the suspended fiber `f`'s stack below its saved stack pointer
    /// (Fibril's `unmap`), if the policy says so. Called before `f` is published.
    #[inline(always)]
    fn release_suspended(&self, f: &FiberNode<P>) {
        if self.shared.release_suspended {
            self.release(f);
        }
    }

    #[inline(never)]
    fn release(&self, f: &FiberNode<P>) {
        let c = &self.shared.counters;
        c.unmaps.add_single_writer(self.index, 1);
        // SAFETY: only this worker's thread touches its scratch space, and not re-entrantly.
        let buf = unsafe { &mut *self.scratch.get() };
        // SAFETY: `f` is suspended (it switched to this driver, which has not published it
        // yet), its saved context is at `f.sp`, and nothing of it lives below: the switch
        // pushed its registers there last, and the message it passed is in its frame above
        // and was read already.
        let p = unsafe { f.stack.release_below(f.sp, buf) };
        if p.resident > 0 {
            c.unmaps_resident.add_single_writer(self.index, 1);
            c.pages_released
                .add_single_writer(self.index, p.resident as u64);
            self.shared.stacks.note_depth(p.depth);
        }
    }

    /// Continues `f` (giving it `start` if it is to start a task) and carries out what the
    /// fiber that switches back asks for (not always `f`: fibers switch straight to each
    /// other), until a fiber parks or the deque runs dry.
    fn drive(&self, mut f: FiberBox<P>, mut start: Option<JobRef<P>>) {
        loop {
            let to = if start.is_some() {
                // A new round of work: start the (new or idle) fiber over.
                // SAFETY: an idle or new fiber is ours alone and nothing runs on its stack.
                unsafe { fiber::restart(f.top, fiber_entry::<P>, f.top) }
            } else {
                f.sp
            };
            // The fiber owns its node while it runs.
            let _ = Box::into_raw(f);
            // SAFETY: `to` is a suspended fiber that only we continue, and it expects an
            // `Input`; whatever fiber switches back to the driver sends a `ToDriver`.
            let ToDriver(from, y) = unsafe {
                switch_msg::<Input<P>, ToDriver<P>>(
                    Input(self, start.take()),
                    to,
                    self.driver.get(),
                )
            };
            f = from;
            match y {
                Yield::Park(sig) => {
                    self.release_suspended(&f);
                    // SAFETY: the signal lives in the suspended fiber's frame or in an `Arc`
                    // that frame holds; the fiber cannot run before `park` publishes it.
                    match self.park(unsafe { &*sig }, f) {
                        None => return,
                        Some(back) => f = back,
                    }
                }
                Yield::Touch(fut) => {
                    self.release_suspended(&f);
                    // SAFETY: the future's state is kept alive by the handle in the suspended
                    // fiber's frame; the fiber cannot run before the policy publishes it.
                    match P::suspend_touch(self, unsafe { &*fut }, f) {
                        None => return,
                        Some(back) => f = back,
                    }
                }
                Yield::Done(Exit::Idle) => {
                    self.retire(f);
                    return;
                }
                Yield::Done(Exit::SwitchTo(g)) => {
                    self.retire(f);
                    f = g;
                }
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

    /// Whether the forced schedule holds this idle worker's steals: the run has had its
    /// budget of steals and another worker is running a task (see [`PoolConfig::steals`]).
    /// Relaxed loads: the budget shapes the schedule, it guards no data, and a worker that
    /// misses a change looks again 50 µs later.
    ///
    /// [`PoolConfig::steals`]: crate::PoolConfig::steals
    fn over_budget(&self) -> bool {
        let sh = &*self.shared;
        sh.budget.is_some_and(|k| {
            sh.counters
                .steals
                .sum()
                .saturating_sub(sh.steals_base.load(Ordering::Relaxed))
                >= k
                && sh.busy.load(Ordering::Relaxed) > 0
        })
    }

    /// The next job: own deque bottom, else steal, else back off and sleep. `None` at shutdown.
    fn find_work(&self) -> Option<Job<P>> {
        if let Some(j) = self.pop() {
            return Some(j);
        }
        let sh = &*self.shared;
        // With a budget, this worker is idle until it returns a job.
        let _idle = sh.budget.map(|_| Idle::new(&sh.busy));
        let mut round = 0u32;
        loop {
            if sh.sleep.terminating() {
                return None;
            }
            if self.over_budget() {
                // The forced schedule holds our steals: only our own deque (a put may fill
                // it meanwhile), without spinning a CPU.
                if let Some(j) = self.pop() {
                    return Some(j);
                }
                thread::sleep(std::time::Duration::from_micros(50));
                continue;
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

    /// Sleeps until a push or the shutdown wakes this worker, unless its last look at the
    /// deques finds work (the handshake of [`Sleepers::sleep`], whose heavy fence pairs with the
    /// light one in `push`).
    #[cold]
    fn sleep(&self) {
        let sh = &*self.shared;
        if sh.in_run() {
            // The heavy fence `Sleepers::sleep` issues.
            sh.fences.add_heavy();
        }
        sh.sleep.sleep(
            self.index,
            || sh.work_visible(),
            || {
                if sh.in_run() {
                    sh.counters.sleeps.add_single_writer(self.index, 1);
                }
            },
        );
    }
}

/// A worker in `find_work`'s idle loop, for the forced schedule's count of busy workers:
/// one less while it lives.
struct Idle<'a>(&'a AtomicUsize);

impl<'a> Idle<'a> {
    fn new(busy: &'a AtomicUsize) -> Self {
        busy.fetch_sub(1, Ordering::Relaxed);
        Idle(busy)
    }
}

impl Drop for Idle<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// The worker thread `index`: takes work until the pool terminates.
pub fn worker_main<P: Policy>(
    shared: Arc<Shared<P>>,
    index: usize,
    seed: P::Seed,
    stack_size: usize,
) {
    shared.sleep.register(index);
    // SAFETY: gettid has no preconditions.
    shared.tids[index].store(unsafe { libc::gettid() }, Ordering::Relaxed);
    let mut stacks = StackPool::new(
        stack_size,
        P::STACKS.free,
        index,
        Arc::clone(&shared.stacks),
    );
    if P::STACKS.spill {
        stacks = stacks.spilling();
    }
    let (taken, given) = stacks.own_cells();
    let (taken_cell, given_cell) = (taken as *const AtomicU64, given as *const AtomicU64);
    let local = Local {
        index,
        pol: P::local(seed),
        runs_cell: shared.counters.fiber_runs.cell(index),
        taken_cell,
        given_cell,
        stacks: UnsafeCell::new(stacks),
        idle: Cell::new(std::ptr::null_mut()),
        idle_len: Cell::new(0),
        rv: UnsafeCell::new(RvPool::new()),
        driver: UnsafeCell::new(0),
        rng: Cell::new(
            0x9E37_79B9_7F4A_7C15 ^ (index as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03),
        ),
        mark: Cell::new(index as u64),
        deviations_cell: shared.counters.deviations.cell(index),
        mark_step: shared.sleep.workers() as u64,
        stack_size,
        scratch: UnsafeCell::new(Vec::new()),
        shared,
    };
    while let Some(job) = local.find_work() {
        match job {
            Job::Run(j) => {
                let f = local.fiber();
                local.drive(f, Some(j));
            }
            Job::Resume(f) => local.drive(f, None),
        }
    }
    local.end_idle();
    P::exit(&local);
}

/// Switches from the running context (saving it in `*save`) to the one saved at `to`, moving
/// `msg` to it; returns the message moved to us by whoever continues us. The message stays in
/// this frame, and the receiver moves it out at once, before it can publish us.
///
/// # Safety
/// As [`fiber::switch`]; the context at `to` expects an `M`, and whoever continues us sends an
/// `R` (fibers receive [`Input`], drivers [`ToDriver`]).
#[inline(always)]
pub unsafe fn switch_msg<M, R>(msg: M, to: usize, save: *mut usize) -> R {
    let msg = ManuallyDrop::new(msg);
    // SAFETY: forwarded from the caller; the message is read (moved) once, by the receiver.
    unsafe {
        let r = fiber::switch(&*msg as *const M as usize, to, save);
        read_words(r as *const R)
    }
}

/// Moves an `R` out of `src` word by word. The sender wrote it just before the switch, field
/// by field; a wider load spanning two of those stores (the 16-byte moves the compiler would
/// pick to copy it) cannot take its data from the store buffer and stalls until the stores
/// reach the cache, twice on every fork. Word-sized volatile loads are not widened.
///
/// # Safety
/// As [`std::ptr::read`].
#[inline(always)]
unsafe fn read_words<R>(src: *const R) -> R {
    const { assert!(std::mem::align_of::<R>() >= 8 && std::mem::size_of::<R>().is_multiple_of(8)) };
    let mut out = std::mem::MaybeUninit::<R>::uninit();
    let (from, to) = (
        src as *const std::mem::MaybeUninit<u64>,
        out.as_mut_ptr() as *mut std::mem::MaybeUninit<u64>,
    );
    for i in 0..std::mem::size_of::<R>() / 8 {
        // SAFETY: both are valid for `size_of::<R>()` bytes (the caller's contract and our
        // buffer), 8-byte aligned (checked above), and words may be uninitialised padding.
        unsafe { to.add(i).write(from.add(i).read_volatile()) };
    }
    // SAFETY: every byte of `*src` was copied.
    unsafe { out.assume_init() }
}

/// Bytes at the top of every fiber stack for the fiber's handle.
const HANDLE_BYTES: usize = 32;

/// The worker a switch into a suspended fiber passes: the first field of its [`Input`].
///
/// # Safety
/// `msg` is the message of a switch whose sender sent an `Input`.
#[inline(always)]
pub unsafe fn read_first<P: Policy>(msg: usize) -> *const Local<P> {
    // SAFETY: `Input` is `repr(C)` with the worker first; the sender's frame holds it until
    // we read it.
    unsafe { read_words(msg as *const *const Local<P>) }
}

/// The entry of a fiber's round of work given by a driver (`w` is the fiber's handle): runs
/// the round's task, then the deque bottom until it is empty or holds a fiber to resume
/// ([`finish_round`]). It never returns, and nothing continues the context a round leaves
/// behind: the fiber's next round starts over at the top of its stack (so the round's frames
/// must hold nothing that needs dropping when it ends: the handle and plain pointers).
unsafe extern "C" fn fiber_entry<P: Policy>(first: usize, w: usize) -> ! {
    // SAFETY: the first message is the `Input` of the switch that started us (see
    // `switch_msg`), and `w` our handle (`new_fiber`, `drive`).
    let (Input(local, task), w) = unsafe {
        (
            read_words(first as *const Input<P>),
            FiberWorker::<P>::at(w),
        )
    };
    w.enter(local);
    let task = task.expect("a fiber round was started without a task");
    // SAFETY: a job taken from a deque or the injector has not run yet and its record is
    // alive until it has.
    unsafe { task.execute(w) };
    finish_round(w, None)
}

/// The end of a round of work: switch to `handed_back` (a forked child's parent, popped back)
/// if there is one, else run the deque bottom until it is empty (then go back to the driver)
/// or holds a fiber (then switch straight to it). The fiber is kept idle for a later round.
#[inline(always)]
pub(super) fn finish_round<P: Policy>(w: &FiberWorker<P>, handed_back: Option<FiberBox<P>>) -> ! {
    let next = match handed_back {
        Some(parent) => parent,
        None => loop {
            match w.here().pop() {
                // SAFETY: as in `fiber_entry`.
                Some(Job::Run(j)) => unsafe { j.execute(w) },
                Some(Job::Resume(f)) => break f,
                None => w.done(Exit::Idle),
            }
        },
    };
    w.idle_then(next)
}
