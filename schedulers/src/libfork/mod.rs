//! `libfork`: stackless continuation stealing with task frames on geometric segmented stacks
//! (the libfork paper, Section III, Algorithms 3-5), through the async front-end.
//!
//! # Frames, not nested futures
//!
//! Every forked, called and root task is a frame of its own ([`frame`]) on a segmented stack
//! ([`stack`]), with a link to its parent, and the worker polls the frame directly. A parent's
//! future never contains or polls a child's: at a fork or call the parent's awaitable
//! allocates the child's frame, leaves a [`Request`] with the worker and returns `Pending`, and
//! the worker loop (the trampoline that stands for C++'s symmetric transfer) does the rest. So
//! resuming a task costs one poll of its own state machine, whatever its depth.
//!
//! The awaitables reach their worker through the [`Context`] they are polled with: its waker's
//! data pointer is the worker's state, recognised by the waker's vtable (a task polled by
//! anything else panics). No `thread_local`: a task may resume on another thread, and what it
//! needs comes with each poll.
//!
//! # The operations (a parent P, on worker W with stack g)
//!
//! * **fork** (first child `a` of [`AsyncWorker::join`]; Algorithm 3): `a`'s frame is
//!   allocated on g, P is pushed on W's deque (its continuation, stealable), `a` is polled.
//! * **call** (`b` of `join`, and [`AsyncWorker::call`]): the same without the push.
//! * **return** (Algorithm 5): the frame is freed from g. A called child resumes its parent.
//!   A forked child pops W's deque: finding its parent there (the fast path, no atomic
//!   read-modify-write) it resumes it; finding the deque empty, its parent was stolen, and it
//!   does the implicit join: one `fetch_sub` on the parent's join counter. The last to arrive
//!   resumes the parent, taking over the parent's stack if it is not on it (its own is empty
//!   then); otherwise, if it is on the parent's stack, it leaves that stack to whoever will
//!   resume the parent and takes an empty one, and goes stealing.
//! * **join** (Algorithm 4): if P's continuation was never stolen since its last join, both
//!   children are done and P goes on. Otherwise P subtracts `JOIN_BIAS - steals` from its
//!   counter (the split counter: each thief counted its steal in P's frame without an atomic
//!   instruction, each robbed child subtracts 1); the last to arrive goes on with P as above.
//! * **steal**: a thief takes the oldest continuation from a victim's deque, counts the steal
//!   in that frame and resumes it on its own (empty) stack; the parent's later children are
//!   allocated there.
//!
//! A panic in a task is caught in its frame and delivered as its outcome; the join re-raises it
//! in the parent once both children are done, so it climbs to `run_async`, which re-raises it
//! after the whole computation has stopped. The pool stays usable.
//!
//! # Pools: busy and lazy
//!
//! [`IdlePolicy::Busy`]: idle workers never sleep, they keep stealing (yielding the CPU now
//! and then). [`IdlePolicy::Lazy`] (the default): the adaptive scheme of Lin, Huang and Wong
//! as libfork uses it, per NUMA node: the workers are grouped by the node of their CPU
//! ([`groups_of`]), and while any worker of the pool is active, each group keeps at least one
//! thief awake; the others sleep when they find nothing. A thief that finds work first counts
//! itself active, then stops counting itself a thief of its group, and if it was the group's
//! last thief it wakes a sleeper of the group; if it is the pool's first active worker, it also
//! wakes a sleeper of every other group left without a thief (one whose last thief went to
//! sleep while nobody was active). A thief that gives up sleeps only if it is not its group's
//! last thief while some worker is active. All these counters are `SeqCst`, so of a last thief
//! going to sleep and a first worker turning active, at least one sees the other. Pushes never
//! wake anyone.
//!
//! # Victims
//!
//! Each worker holds a [`VictimTable`] built at start ([`victim_tables`]) and walks it with a
//! [`StealPass`], drawing from its own xorshift64* generator: one draw and a scan of the
//! (few) levels per attempt. [`VictimPolicy::Uniform`] and [`VictimPolicy::RuntimeDefault`]
//! (the papers' runtimes steal uniformly, and so does libfork without hwloc): every other worker
//! equally likely. [`VictimPolicy::NumaWeighted`]: libfork's weighting ([`crate::victims`]):
//! the other workers in levels by topology distance from this worker's CPU, a worker of level i
//! weighing 1 / (n_i i^2) where n_i is the level's size, and a pass first tries each level-1
//! worker once, then draws. A worker's CPU is the one its pinning puts it on; unpinned workers
//! get the compact order's as a nominal placement ([`nominal_placement`]).
//!
//! # Counters
//!
//! `steals`, `steal_attempts`; extras `frames` (frames allocated), `stacklets_allocated`,
//! `sleeps` (attempts and sleeps count only while a `run_async` is in progress), and the
//! deques' `heavy_fences`, `fence_switches` and `symmetric_pops` ([`crate::deque::FenceCounts`];
//! the lazy pool's sleep needs no heavy fence: its counters are SeqCst); gauges `stack_bytes_high_water` (the most bytes of stacklets alive at once, all
//! stacks together), `stack_bytes_live`, `stacklets_live` and `stacks_live`. Between runs
//! each worker holds at most two stacks (its own and a spare), each of at most two stacklets
//! (the first and a cached one): more would be a leak, and the tests check it.

pub(crate) mod frame;
mod stack;

use crate::api::{AsyncForkJoin, AsyncShared, AsyncWorker, Scheduler, StartError};
use crate::config::{IdlePolicy, Pinning, PoolConfig, VictimPolicy};
use crate::deque::{self, FenceCounts, Owner, Stolen, Thief};
use crate::stats::{PerWorker, Stats};
use crate::topology::{Topology, pin_current_thread};
use crate::victims::{self, StealPass, VictimTable};
use frame::{Frame, Header, Kind, Slot};
use stack::{SegStack, StackCounters};
use std::cell::Cell;
use std::future::Future;
use std::marker::{PhantomData, PhantomPinned};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::pin::Pin;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};
use std::thread::{self, JoinHandle};

pub use stack::FIRST_STACKLET_BYTES;

/// Failed steal rounds (one attempt per other worker) before a lazy thief tries to sleep.
const ROUNDS_BEFORE_SLEEP: u32 = 64;

/// What a task's awaitable asks of the worker when it returns `Pending`.
#[derive(Debug, Clone, Copy)]
enum Request {
    /// Nothing: the task awaited something that is not a libfork operation.
    None,
    /// Push the current frame on the deque and run this child.
    Fork(*mut Header),
    /// Run this child; the current frame waits for it.
    Call(*mut Header),
    /// The current frame is at a join whose continuation was stolen: arrive at its counter.
    Join,
}

/// The pool's counters.
#[derive(Debug)]
struct Counters {
    steals: PerWorker,
    attempts: PerWorker,
    frames: PerWorker,
    sleeps: PerWorker,
}

/// What every worker shares.
struct Shared {
    thieves_handles: Box<[Thief]>,
    /// Root frames submitted by `run_async`, not taken by a worker yet.
    injector: Mutex<Vec<RootRef>>,
    /// Whether `injector` may be non-empty (read without the lock).
    injected: AtomicBool,
    idle: IdlePolicy,
    /// Workers running a task, in the whole pool.
    active: AtomicUsize,
    /// `run_async` calls in progress: the idle-time counters (steal attempts, sleeps) count
    /// only while one is, so an idle busy pool does not run them up between runs.
    runs: AtomicUsize,
    /// The lazy pool's groups: the workers of each NUMA node of the placement.
    groups: Box<[Group]>,
    terminate: AtomicBool,
    counters: Counters,
    stacks: StackCounters,
    /// The deques' fence counts (see [`crate::deque::FenceCounts`]).
    fences: Arc<FenceCounts>,
}

/// A root frame on its way to a worker.
struct RootRef(*mut Header);

// SAFETY: the root frame is handed to exactly one worker through the injector's lock; its
// state is `Send` (the bounds of `run_async`).
unsafe impl Send for RootRef {}

/// The workers of one NUMA node, as the lazy pool counts them: while any worker of the pool
/// is active, each group keeps at least one thief awake (see the module's "Pools").
struct Group {
    /// Workers of this group awake and looking for work.
    thieves: AtomicUsize,
    /// Workers of this group asleep (or about to be).
    sleepers: AtomicUsize,
    /// Bumped by every wake-up of this group; its sleepers wait for it to change.
    epoch: Mutex<u64>,
    wake: Condvar,
}

impl Group {
    fn new() -> Group {
        Group {
            thieves: AtomicUsize::new(0),
            sleepers: AtomicUsize::new(0),
            epoch: Mutex::new(0),
            wake: Condvar::new(),
        }
    }

    /// Wakes one sleeper of the group, if any.
    fn wake_one(&self) {
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            let mut e = self.epoch.lock().unwrap_or_else(PoisonError::into_inner);
            *e += 1;
            self.wake.notify_one();
        }
    }

    fn wake_all(&self) {
        let mut e = self.epoch.lock().unwrap_or_else(PoisonError::into_inner);
        *e += 1;
        self.wake.notify_all();
    }
}

impl Shared {
    /// Wakes one sleeper of the first group that has one (a new root needs one worker; every
    /// worker that is awake looks at the injector anyway).
    fn wake_one(&self) {
        if let Some(g) = self
            .groups
            .iter()
            .find(|g| g.sleepers.load(Ordering::SeqCst) > 0)
        {
            g.wake_one();
        }
    }

    fn wake_all(&self) {
        for g in &self.groups {
            g.wake_all();
        }
    }

    fn take_root(&self) -> Option<*mut Header> {
        if !self.injected.load(Ordering::SeqCst) {
            return None;
        }
        let mut q = self.injector.lock().unwrap_or_else(PoisonError::into_inner);
        let r = q.pop().map(|r| r.0);
        if q.is_empty() {
            self.injected.store(false, Ordering::SeqCst);
        }
        r
    }
}

/// A worker's own state, on its thread's stack; tasks reach it through their waker.
struct WorkerState {
    index: usize,
    shared: Arc<Shared>,
    owner: Owner,
    /// The stack new frames go on (empty whenever the worker looks for work).
    stack: Cell<*mut SegStack>,
    /// An empty stack kept for when the worker must give its stack up.
    spare: Cell<*mut SegStack>,
    /// The frame being polled.
    current: Cell<*mut Header>,
    request: Cell<Request>,
    frames: *const AtomicU64,
    rng: Cell<u64>,
    /// Whom this worker steals from ([`victim_tables`]).
    victims: VictimTable,
    /// This worker's lazy-pool group (its NUMA node, [`groups_of`]).
    group: usize,
}

/// The waker of every libfork poll: its data is the polling worker's [`WorkerState`]. Waking
/// does nothing: libfork tasks wait only for libfork operations, which the worker loop drives.
static WAKER_VTABLE: RawWakerVTable = RawWakerVTable::new(
    |data| RawWaker::new(data, &WAKER_VTABLE),
    |_| {},
    |_| {},
    |_| {},
);

/// The worker polling the current task, from its context.
#[inline(always)]
fn worker_of<'a>(cx: &Context<'a>) -> &'a WorkerState {
    let waker = cx.waker();
    assert!(
        ptr::eq(waker.vtable(), &WAKER_VTABLE),
        "a libfork operation was polled outside a libfork worker"
    );
    // SAFETY: a waker with this vtable is made only by `WorkerState::run` from the worker's
    // own state, which outlives every poll made with it.
    unsafe { &*waker.data().cast::<WorkerState>() }
}

impl WorkerState {
    /// Allocates a frame for the task made by `make`, whose outcome goes to `out`, as a child
    /// of the current frame on the current stack. If `make` panics, the space is given back
    /// and the panic goes on.
    #[inline(always)]
    fn new_frame<Fut: Future>(
        &self,
        make: impl FnOnce() -> Fut,
        out: *const Slot<Fut::Output>,
        kind: Kind,
    ) -> *mut Header {
        let layout = std::alloc::Layout::new::<Frame<Fut>>();
        assert!(
            layout.align() <= 64,
            "a libfork task's state is aligned to more than 64 bytes"
        );
        let stack = self.stack.get();
        // SAFETY: the worker's current stack is live and only this worker uses it.
        let (at, mark) = unsafe { (*stack).alloc(layout) };
        // SAFETY: per-worker counter cell, written only by this worker.
        PerWorker::bump(unsafe { &*self.frames }, 1);
        /// Gives the allocation back if making the future panics.
        struct Unwind(*mut SegStack, *mut u8);
        impl Drop for Unwind {
            fn drop(&mut self) {
                // SAFETY: the allocation is still the stack's last one.
                unsafe { (*self.0).dealloc(self.1) }
            }
        }
        let unwind = Unwind(stack, mark);
        // SAFETY: `at` has the frame's layout; `out` lives in the parent's awaitable, which
        // does not move (pinned) and is not dropped before the child has written it.
        let h = unsafe { Frame::write_with(at, make, out, self.current.get(), stack, mark, kind) };
        std::mem::forget(unwind);
        h
    }

    /// The pseudo-random next victim (xorshift64*).
    fn next_rand(&self) -> u64 {
        let mut x = self.rng.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng.set(x);
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Makes `s` (the stack of a frame about to be resumed) the current stack; the current
    /// one, empty, becomes the spare (or is freed if there is one). The root frame lives on no
    /// stack (`s` null): its resumer keeps its own, empty, stack.
    fn take_stack(&self, s: *mut SegStack) {
        let mine = self.stack.get();
        if mine == s || s.is_null() {
            return;
        }
        // SAFETY: the worker's own stack, not shared.
        debug_assert!(unsafe { (*mine).is_empty() });
        if self.spare.get().is_null() {
            self.spare.set(mine);
        } else {
            // SAFETY: an empty stack owned by this worker alone.
            drop(unsafe { Box::from_raw(mine) });
        }
        self.stack.set(s);
    }

    /// Gives up the current stack (it holds a suspended frame someone else will resume) and
    /// takes an empty one.
    fn leave_stack(&self) {
        let spare = self.spare.replace(ptr::null_mut());
        let fresh = if spare.is_null() {
            // SAFETY: the pool's counters outlive its stacks (workers are joined first).
            Box::into_raw(Box::new(unsafe { SegStack::new(&self.shared.stacks) }))
        } else {
            spare
        };
        self.stack.set(fresh);
    }

    /// A frame that is resumed after a completed join starts its next join afresh.
    ///
    /// # Safety
    /// `f` is live and this worker is the one going on with it.
    unsafe fn reset_join(f: *mut Header) {
        // SAFETY: the caller's contract; nobody else touches the frame's join state now.
        unsafe {
            (*f).steals.set(0);
            (*f).joins.reset();
        }
    }

    /// Runs `f` and everything the worker can do from it, until the worker has nothing left
    /// (its stack is then empty again). A task's panic is caught here, once around all the
    /// polls, and becomes the outcome of the frame that was being polled.
    ///
    /// # Safety
    /// `f` is a live frame this worker may resume (a stolen continuation, a new root).
    unsafe fn run(&self, f: *mut Header) {
        let raw = RawWaker::new((self as *const WorkerState).cast(), &WAKER_VTABLE);
        // SAFETY: the vtable's functions do nothing with the data.
        let waker = unsafe { Waker::from_raw(raw) };
        let mut next = Some(f);
        while let Some(f) = next {
            // SAFETY: `f` is ours to resume (the caller's contract, then `returned`'s).
            next = match catch_unwind(AssertUnwindSafe(|| unsafe { self.trampoline(f, &waker) })) {
                Ok(()) => None,
                Err(payload) => {
                    // A request the failed poll may have left is void with it.
                    self.request.set(Request::None);
                    let failed = self.current.get();
                    // SAFETY: the frame being polled panicked; it is live and ours.
                    unsafe {
                        ((*failed).fail)(failed, payload);
                        self.returned(failed)
                    }
                }
            };
        }
    }

    /// Polls frames from `f` on, forking, calling, joining and returning, until the worker has
    /// nothing left to run from here.
    ///
    /// # Safety
    /// As [`WorkerState::run`].
    #[inline(always)]
    unsafe fn trampoline(&self, mut f: *mut Header, waker: &Waker) {
        let mut cx = Context::from_waker(waker);
        loop {
            self.current.set(f);
            // SAFETY: `f` is live, unfinished, and this worker owns its execution.
            let polled = unsafe { ((*f).poll)(f, &mut cx) };
            f = match polled {
                Poll::Pending => match self.request.replace(Request::None) {
                    Request::Fork(child) => {
                        self.owner.push([f as usize, 0]);
                        child
                    }
                    Request::Call(child) => child,
                    // SAFETY: `f` is the frame at its join, run by this worker.
                    Request::Join => match unsafe { self.arrive_at_join(f) } {
                        true => f,
                        false => return,
                    },
                    Request::None => {
                        eprintln!(
                            "libfork: a task awaited something that is not a libfork \
                             operation (libfork tasks cannot wait for outside events)"
                        );
                        std::process::abort();
                    }
                },
                // SAFETY: `f` has just finished.
                Poll::Ready(()) => match unsafe { self.returned(f) } {
                    // SAFETY: `p` is live and ours to go on with; a resume hint is set only
                    // when `f` was its forked first child and popped it back (see
                    // `Header::resume`).
                    Some(p) => match unsafe { (*p).resume.take() } {
                        Some((make_second, op)) => {
                            self.current.set(p);
                            // SAFETY: `op` is `p`'s join, waiting for exactly this.
                            unsafe { make_second(op, (self as *const Self).cast()) }
                        }
                        None => p,
                    },
                    None => return,
                },
            };
        }
    }

    /// The explicit join of `f`, whose continuation was stolen (Algorithm 4): true if every
    /// child is done and this worker goes on with `f`.
    ///
    /// # Safety
    /// `f` is the live frame at its join, run by this worker.
    #[inline(never)]
    unsafe fn arrive_at_join(&self, f: *mut Header) -> bool {
        // SAFETY: the caller's contract.
        let steals = unsafe { (*f).steals.get() };
        // The parent's half of the split counter: release our writes (the second child's
        // result, our frees on its stack), acquire the children's.
        // SAFETY: the caller's contract.
        if unsafe { (*f).joins.parent_arrives(steals) } {
            // Last: every child is done; go on with the parent on its stack.
            // SAFETY: `f` is live; we are the one going on with it.
            unsafe {
                self.take_stack((*f).stack);
                Self::reset_join(f);
            }
            true
        } else {
            // A child is still out; its return will resume `f`.
            // SAFETY: reading the stack pointer of a live frame.
            if self.stack.get() == unsafe { (*f).stack } {
                self.leave_stack();
            }
            false
        }
    }

    /// What follows the return of `f` (Algorithm 5): frees its frame and gives the frame to
    /// go on with, if any (its parent, popped back or joined last).
    ///
    /// # Safety
    /// `f` is a live frame that has just finished (its outcome written), run by this worker.
    #[inline(always)]
    unsafe fn returned(&self, f: *mut Header) -> Option<*mut Header> {
        // SAFETY: the finished frame is live until freed below.
        let (parent, kind, mark) = unsafe { ((*f).parent, (*f).kind, (*f).mark) };
        if kind == Kind::Root {
            // `parent` is the run_async call's latch; the frame is its memory.
            // SAFETY: the latch lives until it is opened (run_async waits).
            unsafe { Latch::open(parent.cast()) };
            return None;
        }
        // SAFETY: a finished task's frame is the last allocation on the current stack: its
        // descendants are all freed, and whoever went on with it after its joins took over its
        // stack.
        unsafe { (*self.stack.get()).dealloc(mark) };
        if kind == Kind::Call {
            return Some(parent);
        }
        if let Some(e) = self.owner.pop() {
            debug_assert_eq!(e[0], parent as usize);
            return Some(parent);
        }
        // SAFETY: stolen: the implicit join; the parent stays live until its join completes,
        // which needs this arrival.
        unsafe { self.implicit_join(parent) }
    }

    /// A forked child's return found its parent stolen: its arrival at the parent's counter.
    ///
    /// # Safety
    /// As [`WorkerState::returned`]; `parent` is the child's parent.
    #[inline(never)]
    unsafe fn implicit_join(&self, parent: *mut Header) -> Option<*mut Header> {
        // SAFETY: the caller's contract.
        if unsafe { (*parent).joins.child_arrives() } {
            // Last to arrive: the parent is ours to go on with.
            // SAFETY: as above.
            unsafe {
                self.take_stack((*parent).stack);
                Self::reset_join(parent);
            }
            Some(parent)
        } else {
            // SAFETY: reading the stack pointer of a live frame.
            if self.stack.get() == unsafe { (*parent).stack } {
                self.leave_stack();
            }
            None
        }
    }

    /// One steal attempt from the next victim of `pass`.
    fn try_steal(&self, pass: &mut StealPass) -> Option<*mut Header> {
        if self.victims.is_empty() {
            return None;
        }
        let v = pass.next_victim(&self.victims, || self.next_rand());
        // Relaxed: a worker that read a run in progress just before it ended adds at most one
        // more; these are statistics, not synchronization.
        if self.shared.runs.load(Ordering::Relaxed) != 0 {
            self.shared
                .counters
                .attempts
                .add_single_writer(self.index, 1);
        }
        loop {
            match self.shared.thieves_handles[v].steal() {
                Stolen::Entry(e) => {
                    self.shared.counters.steals.add_single_writer(self.index, 1);
                    let f = e[0] as *mut Header;
                    // The thief's half of the split counter: the frame is ours now.
                    // SAFETY: a stolen continuation is live and only its thief touches it.
                    unsafe { (*f).steals.set((*f).steals.get() + 1) };
                    return Some(f);
                }
                Stolen::Empty => return None,
                Stolen::Retry => {}
            }
        }
    }

    /// Looks for work until it finds some (`Some`) or the pool terminates (`None`). Counted
    /// as a thief throughout.
    fn find_work(&self) -> Option<*mut Header> {
        let sh = &*self.shared;
        let p = sh.thieves_handles.len() as u32;
        let mut failed = 0u32;
        let mut pass = StealPass::new(&self.victims, self.next_rand());
        loop {
            if sh.terminate.load(Ordering::Relaxed) {
                return None;
            }
            if let Some(r) = sh.take_root() {
                return Some(r);
            }
            if let Some(f) = self.try_steal(&mut pass) {
                return Some(f);
            }
            failed += 1;
            if failed % p.max(1) != 0 {
                std::hint::spin_loop();
                continue;
            }
            let rounds = failed / p.max(1);
            match sh.idle {
                IdlePolicy::Busy => {
                    if rounds % 16 == 0 {
                        thread::yield_now();
                    }
                }
                IdlePolicy::Lazy if rounds >= ROUNDS_BEFORE_SLEEP => {
                    self.sleep();
                    failed = 0;
                    pass = StealPass::new(&self.victims, self.next_rand());
                }
                IdlePolicy::Lazy => thread::yield_now(),
            }
        }
    }

    /// A lazy thief that found nothing: sleeps unless it is its group's last thief while a
    /// worker is active (then it stays a thief), until woken.
    fn sleep(&self) {
        let sh = &*self.shared;
        let g = &sh.groups[self.group];
        let seen = *g.epoch.lock().unwrap_or_else(PoisonError::into_inner);
        g.sleepers.fetch_add(1, Ordering::SeqCst);
        if g.thieves.fetch_sub(1, Ordering::SeqCst) == 1 && sh.active.load(Ordering::SeqCst) > 0 {
            // The group's last thief while work may appear: stay awake.
            g.thieves.fetch_add(1, Ordering::SeqCst);
            g.sleepers.fetch_sub(1, Ordering::SeqCst);
            return;
        }
        // A root submitted, or a first worker turned active, after the epoch was read bumps
        // it, so the wait below sees it.
        let mut e = g.epoch.lock().unwrap_or_else(PoisonError::into_inner);
        if *e == seen && !sh.terminate.load(Ordering::SeqCst) && !sh.injected.load(Ordering::SeqCst)
        {
            if sh.runs.load(Ordering::Relaxed) != 0 {
                sh.counters.sleeps.add_single_writer(self.index, 1);
            }
            while *e == seen {
                e = g.wake.wait(e).unwrap_or_else(PoisonError::into_inner);
            }
        }
        drop(e);
        g.sleepers.fetch_sub(1, Ordering::SeqCst);
        g.thieves.fetch_add(1, Ordering::SeqCst);
    }

    /// The worker thread's loop: find work, run it, repeat.
    fn main_loop(&self) {
        let sh = &*self.shared;
        let g = &sh.groups[self.group];
        g.thieves.fetch_add(1, Ordering::SeqCst);
        while let Some(f) = self.find_work() {
            // Active before no longer a thief, so a last thief deciding whether it may sleep
            // sees this worker active (see `sleep`).
            let first_active = sh.active.fetch_add(1, Ordering::SeqCst) == 0;
            if sh.idle == IdlePolicy::Lazy {
                if g.thieves.fetch_sub(1, Ordering::SeqCst) == 1 {
                    g.wake_one();
                }
                if first_active {
                    // A group whose last thief went to sleep while nobody was active has no
                    // thief now that someone is: wake one of its sleepers. (SeqCst: either that
                    // thief saw `active > 0` and stayed, or its decrement is seen here.)
                    for (i, other) in sh.groups.iter().enumerate() {
                        if i != self.group && other.thieves.load(Ordering::SeqCst) == 0 {
                            other.wake_one();
                        }
                    }
                }
            } else {
                g.thieves.fetch_sub(1, Ordering::SeqCst);
            }
            // SAFETY: `f` is a stolen continuation or a new root, ours to resume.
            unsafe { self.run(f) };
            g.thieves.fetch_add(1, Ordering::SeqCst);
            sh.active.fetch_sub(1, Ordering::SeqCst);
        }
        g.thieves.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Drop for WorkerState {
    fn drop(&mut self) {
        for s in [self.stack.get(), self.spare.get()] {
            if !s.is_null() {
                // SAFETY: the worker's own stacks, empty now that it has stopped.
                drop(unsafe { Box::from_raw(s) });
            }
        }
    }
}

/// Where `run_async` waits for its root.
struct Latch {
    done: Mutex<bool>,
    cv: Condvar,
}

impl Latch {
    /// Opens the latch.
    ///
    /// # Safety
    /// `l` is live; it may be freed as soon as this returns.
    unsafe fn open(l: *const Latch) {
        // SAFETY: the caller's contract; the waiter cannot see `done` before we unlock.
        let l = unsafe { &*l };
        let mut d = l.done.lock().unwrap_or_else(PoisonError::into_inner);
        *d = true;
        l.cv.notify_all();
    }
}

/// The libfork pool.
pub struct LibforkPool {
    shared: Arc<Shared>,
    handles: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for LibforkPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LibforkPool")
            .field("workers", &self.handles.len())
            .field("idle", &self.shared.idle)
            .finish()
    }
}

impl Drop for LibforkPool {
    fn drop(&mut self) {
        self.shared.terminate.store(true, Ordering::SeqCst);
        self.shared.wake_all();
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

impl LibforkPool {
    /// Starts a pool as [`Scheduler::start`] does, on `topology` (the machine's, or a made-up
    /// one in tests: it decides the victims and the lazy pool's groups; pinning uses its CPU
    /// numbers).
    fn start_on(config: &PoolConfig, topology: &Topology) -> Result<Self, StartError> {
        let p = config.workers;
        if p == 0 {
            return Err(StartError::Unsupported(
                "libfork needs at least 1 worker".into(),
            ));
        }
        if config.future_stack != crate::config::FutureStack::New {
            return Err(StartError::Unsupported(
                "libfork has no futures, so no future stack to choose".into(),
            ));
        }
        let placement = topology.placement(config.pinning, p);
        let mut tables = victim_tables(config, topology).into_iter();
        let groups = groups_of(config, topology);
        let group_count = groups.iter().max().map_or(1, |g| g + 1);
        let fences = Arc::new(FenceCounts::new());
        let owners: Vec<(Owner, Thief)> = (0..p).map(|_| deque::in_pool(64, &fences)).collect();
        let shared = Arc::new(Shared {
            thieves_handles: owners.iter().map(|(_, t)| t.clone()).collect(),
            injector: Mutex::new(Vec::new()),
            injected: AtomicBool::new(false),
            idle: config.idle,
            active: AtomicUsize::new(0),
            runs: AtomicUsize::new(0),
            groups: (0..group_count).map(|_| Group::new()).collect(),
            terminate: AtomicBool::new(false),
            counters: Counters {
                steals: PerWorker::new(p),
                attempts: PerWorker::new(p),
                frames: PerWorker::new(p),
                sleeps: PerWorker::new(p),
            },
            stacks: StackCounters::default(),
            fences,
        });
        let mut pool = LibforkPool {
            shared: Arc::clone(&shared),
            handles: Vec::with_capacity(p),
        };
        for (i, (owner, _)) in owners.into_iter().enumerate() {
            let sh = Arc::clone(&shared);
            let cpu = placement.as_ref().map(|pl| pl[i]);
            let victims = tables.next().expect("one victim table per worker");
            let group = groups[i];
            let h = thread::Builder::new()
                .name(format!("libfork-{i}"))
                .spawn(move || {
                    if let Some(cpu) = cpu {
                        let _ = pin_current_thread(cpu);
                    }
                    // SAFETY: the counters live in `sh`, which outlives the worker's stacks
                    // (dropped with the `WorkerState` below).
                    let first = Box::into_raw(Box::new(unsafe { SegStack::new(&sh.stacks) }));
                    let frames: *const AtomicU64 = sh.counters.frames.cell(i);
                    let w = WorkerState {
                        index: i,
                        shared: sh,
                        owner,
                        stack: Cell::new(first),
                        spare: Cell::new(ptr::null_mut()),
                        current: Cell::new(ptr::null_mut()),
                        request: Cell::new(Request::None),
                        frames,
                        rng: Cell::new(0x9E37_79B9_7F4A_7C15 ^ ((i as u64 + 1) << 17)),
                        victims,
                        group,
                    };
                    w.main_loop();
                })
                .map_err(|e| StartError::Os(format!("spawning worker {i}: {e}")))?;
            pool.handles.push(h);
        }
        Ok(pool)
    }
}

impl Scheduler for LibforkPool {
    const NAME: &'static str = "libfork";

    fn start(config: &PoolConfig) -> Result<Self, StartError> {
        // Its stacks are segmented (they grow as deep as the tasks go), and it has no steal
        // budget.
        config.refuse_fiber_settings(Self::NAME)?;
        Self::start_on(config, &Topology::detect())
    }

    fn workers(&self) -> usize {
        self.handles.len()
    }

    fn stats(&self) -> Stats {
        let c = &self.shared.counters;
        let s = &self.shared.stacks;
        Stats {
            steals: Some(c.steals.sum()),
            steal_attempts: Some(c.attempts.sum()),
            extra: vec![
                ("frames", c.frames.sum()),
                (
                    "stacklets_allocated",
                    s.stacklets_allocated.load(Ordering::Relaxed),
                ),
                ("sleeps", c.sleeps.sum()),
            ]
            .into_iter()
            .chain(self.shared.fences.named())
            .collect(),
            gauges: vec![
                (
                    "stack_bytes_high_water",
                    s.bytes_high_water.load(Ordering::Relaxed),
                ),
                ("stack_bytes_live", s.bytes_live.load(Ordering::Relaxed)),
                ("stacklets_live", s.stacklets_live.load(Ordering::Relaxed)),
                ("stacks_live", s.stacks_live.load(Ordering::Relaxed)),
            ],
        }
    }

    fn reset_stats(&self) {
        let c = &self.shared.counters;
        for x in [&c.steals, &c.attempts, &c.frames, &c.sleeps] {
            x.reset();
        }
        self.shared.fences.reset();
        let s = &self.shared.stacks;
        s.stacklets_allocated.store(0, Ordering::Relaxed);
        s.bytes_high_water
            .store(s.bytes_live.load(Ordering::Relaxed), Ordering::Relaxed);
    }
}

/// Each worker's victims under `config`: uniform for [`VictimPolicy::Uniform`] and
/// [`VictimPolicy::RuntimeDefault`]; for [`VictimPolicy::NumaWeighted`], libfork's weighting
/// ([`victims`]) over the workers' [`nominal_placement`] (unpinned, their weights favour
/// workers that are near only on paper: pin for the weights to mean what they say).
fn victim_tables(config: &PoolConfig, topology: &Topology) -> Vec<VictimTable> {
    let p = config.workers;
    match config.victim {
        VictimPolicy::Uniform | VictimPolicy::RuntimeDefault => {
            (0..p).map(|w| VictimTable::uniform(p, w)).collect()
        }
        VictimPolicy::NumaWeighted => {
            victims::numa_tables(topology, &nominal_placement(config, topology))
        }
    }
}

/// The CPU of each worker, for the NUMA-aware parts of the pool: where `config.pinning` puts
/// it, or, unpinned ([`Pinning::None`]), the compact order's CPU (worker i on the i-th CPU,
/// filling a node first) as a nominal placement. The OS may move unpinned threads anywhere:
/// pin for the placement to describe the machine.
fn nominal_placement(config: &PoolConfig, topology: &Topology) -> Vec<usize> {
    let pinning = match config.pinning {
        Pinning::None => Pinning::Compact,
        pinned => pinned,
    };
    topology
        .placement(pinning, config.workers)
        .expect("a pinning other than none places every worker")
}

/// Each worker's lazy-pool group: the NUMA node of its CPU in the [`nominal_placement`],
/// numbered densely from 0 in the order the nodes first appear.
fn groups_of(config: &PoolConfig, topology: &Topology) -> Vec<usize> {
    let mut nodes: Vec<usize> = Vec::new();
    nominal_placement(config, topology)
        .iter()
        .map(|&c| {
            let node = topology.cpu(c).map_or(0, |c| c.node);
            nodes.iter().position(|&n| n == node).unwrap_or_else(|| {
                nodes.push(node);
                nodes.len() - 1
            })
        })
        .collect()
}

/// The root frame of a `run_async` call, in a box of its own.
///
/// # Safety
/// `out` and `latch` outlive the computation.
unsafe fn root_frame<Fut: Future>(
    fut: Fut,
    out: &Slot<Fut::Output>,
    latch: &Latch,
) -> (Box<std::mem::MaybeUninit<Frame<Fut>>>, *mut Header) {
    let mut root = Box::<Frame<Fut>>::new_uninit();
    // SAFETY: the box has the frame's layout; the rest is the caller's contract.
    let h = unsafe {
        Frame::write_with(
            root.as_mut_ptr().cast(),
            || fut,
            out,
            (latch as *const Latch).cast_mut().cast(),
            ptr::null_mut(),
            ptr::null_mut(),
            Kind::Root,
        )
    };
    (root, h)
}

impl AsyncForkJoin for LibforkPool {
    type Worker<'scope> = LibforkWorker<'scope>;
    const FUTURES: bool = false;

    fn run_async<'scope, R, F, Fut>(&self, f: F) -> R
    where
        F: FnOnce(LibforkWorker<'scope>) -> Fut + Send,
        Fut: Future<Output = R> + Send + 'scope,
        R: Send + 'scope,
    {
        let latch = Latch {
            done: Mutex::new(false),
            cv: Condvar::new(),
        };
        let out: Slot<R> = Slot::new();
        // SAFETY: `out` and `latch` live until the latch is opened, which is the worker's
        // last touch of the root frame.
        let (root, h) = unsafe { root_frame(f(LibforkWorker::new()), &out, &latch) };
        self.shared.runs.fetch_add(1, Ordering::Relaxed);
        {
            let mut q = self
                .shared
                .injector
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            q.push(RootRef(h));
            self.shared.injected.store(true, Ordering::SeqCst);
        }
        self.shared.wake_one();
        let mut d = latch.done.lock().unwrap_or_else(PoisonError::into_inner);
        while !*d {
            d = latch.cv.wait(d).unwrap_or_else(PoisonError::into_inner);
        }
        drop(d);
        self.shared.runs.fetch_sub(1, Ordering::Relaxed);
        // The root's future was dropped when it finished: free the memory only.
        drop(root);
        // SAFETY: the root wrote its outcome before opening the latch.
        match unsafe { out.take() } {
            Ok(r) => r,
            Err(payload) => resume_unwind(payload),
        }
    }
}

/// The handle of a libfork task. It carries nothing: the operations find their worker in the
/// context they are polled with.
pub struct LibforkWorker<'scope> {
    _marker: PhantomData<&'scope mut &'scope ()>,
}

impl LibforkWorker<'_> {
    fn new() -> Self {
        LibforkWorker {
            _marker: PhantomData,
        }
    }
}

impl Clone for LibforkWorker<'_> {
    fn clone(&self) -> Self {
        LibforkWorker::new()
    }
}

impl std::fmt::Debug for LibforkWorker<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LibforkWorker")
    }
}

/// Aborts the process if a libfork operation is dropped while one of its children may still
/// run (the child would write into freed memory). The runtime never does that; a program that
/// drops an unfinished `join` or `call` (a `select` over it, say) cannot run on libfork.
fn dropped_unfinished(op: &str) -> ! {
    eprintln!("libfork: a {op} was dropped before it finished (its children write into it)");
    std::process::abort();
}

/// The awaitable of [`AsyncWorker::join`]: fork `a`, call `b`, join. It owns both result
/// slots, so it must not move once polled (`PhantomPinned`) and must finish before it is
/// dropped (`Drop` aborts otherwise).
struct JoinOp<A, B, RA, RB> {
    /// 0: nothing started; 1: `a` forked; 2: `b` called; 3: waiting at the join; 4: finished;
    /// 5: making `b` after `a` returned here (nothing outstanding).
    state: u8,
    a: Option<A>,
    b: Option<B>,
    ra: Slot<RA>,
    rb: Slot<RB>,
    _pinned: PhantomPinned,
}

impl<A, B, FA, FB> Future for JoinOp<A, B, FA::Output, FB::Output>
where
    A: FnOnce() -> FA,
    B: FnOnce() -> FB,
    FA: Future,
    FB: Future,
{
    type Output = (FA::Output, FB::Output);

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let w = worker_of(cx);
        // SAFETY: nothing is moved out of the pinned fields; the slots stay where they are.
        let this = unsafe { self.get_unchecked_mut() };
        match this.state {
            0 => {
                let a = this.a.take().expect("state 0 holds the first child");
                let child = w.new_frame(a, &this.ra, Kind::Fork);
                w.request.set(Request::Fork(child));
                this.state = 1;
                let op: *mut Self = this;
                // SAFETY: the current frame is the one this join belongs to; the join does
                // not move (pinned) and waits in state 1 until the hint is taken or cleared.
                unsafe {
                    (*w.current.get())
                        .resume
                        .set(Some((Self::make_second, op.cast())))
                };
                return Poll::Pending;
            }
            1 => {
                // Resumed by a poll (stolen, or after a panic): the hint is void.
                // SAFETY: the current frame is the one this join belongs to.
                unsafe { (*w.current.get()).resume.set(None) };
                let b = this.b.take().expect("state 1 holds the second child");
                let rb = &this.rb;
                // SAFETY: the current frame is the one this join belongs to.
                if unsafe { (*w.current.get()).steals.get() } == 0 {
                    // `a` is done: a panic in making `b` may unwind through this join.
                    this.state = 5;
                    let child = w.new_frame(b, rb, Kind::Call);
                    w.request.set(Request::Call(child));
                    this.state = 2;
                    return Poll::Pending;
                }
                // `a` may still run elsewhere: a panic in making `b` is `b`'s outcome.
                match catch_unwind(AssertUnwindSafe(|| w.new_frame(b, rb, Kind::Call))) {
                    Ok(child) => {
                        w.request.set(Request::Call(child));
                        this.state = 2;
                        return Poll::Pending;
                    }
                    // SAFETY: no child writes `rb`.
                    Err(p) => unsafe { *this.rb.0.get() = Some(Err(p)) },
                }
                this.state = 2;
                return self_join(w, this);
            }
            2 => return self_join(w, this),
            3 => {}
            _ => panic!("a libfork join was polled after it finished"),
        }
        this.finish()
    }
}

/// State 2 of a join (both children returned to this worker, or `b` did and `a` was stolen):
/// goes on if the continuation was never stolen, else arrives at the join counter.
#[inline(always)]
fn self_join<A, B, RA, RB>(w: &WorkerState, this: &mut JoinOp<A, B, RA, RB>) -> Poll<(RA, RB)> {
    // SAFETY: the current frame is the one this join belongs to.
    if unsafe { (*w.current.get()).steals.get() } != 0 {
        w.request.set(Request::Join);
        this.state = 3;
        return Poll::Pending;
    }
    this.finish()
}

impl<A, B, FA, FB> JoinOp<A, B, FA::Output, FB::Output>
where
    A: FnOnce() -> FA,
    B: FnOnce() -> FB,
    FA: Future,
    FB: Future,
{
    /// The join's [`ResumeFn`]: state 1 of `poll` when the continuation was not stolen, done
    /// by the worker without polling the parent. A panic in making `b` unwinds to the worker
    /// loop with the parent current, as it would through the parent's poll.
    ///
    /// # Safety
    /// `op` is this join in state 1, its first child returned to this worker, `worker` the
    /// worker's [`WorkerState`] with the join's frame current.
    unsafe fn make_second(op: *mut (), worker: *const ()) -> *mut Header {
        // SAFETY: the caller's contract.
        let (this, w) = unsafe { (&mut *op.cast::<Self>(), &*worker.cast::<WorkerState>()) };
        let b = this.b.take().expect("state 1 holds the second child");
        this.state = 5;
        let child = w.new_frame(b, &this.rb, Kind::Call);
        this.state = 2;
        child
    }
}

impl<A, B, RA, RB> JoinOp<A, B, RA, RB> {
    /// Both children are done: their outcomes, or the first panic in serial order.
    fn finish(&mut self) -> Poll<(RA, RB)> {
        self.state = 4;
        // SAFETY: both children have returned and the join ordered their writes before us.
        let (ra, rb) = unsafe { (self.ra.take(), self.rb.take()) };
        match (ra, rb) {
            (Ok(a), Ok(b)) => Poll::Ready((a, b)),
            (Err(p), _) | (_, Err(p)) => resume_unwind(p),
        }
    }
}

impl<A, B, RA, RB> Drop for JoinOp<A, B, RA, RB> {
    fn drop(&mut self) {
        if matches!(self.state, 1..=3) {
            dropped_unfinished("join");
        }
    }
}

/// The awaitable of [`AsyncWorker::call`].
struct CallOp<F, R> {
    /// 0: not started; 1: the child runs; 2: finished.
    state: u8,
    f: Option<F>,
    r: Slot<R>,
    _pinned: PhantomPinned,
}

impl<F, Fut> Future for CallOp<F, Fut::Output>
where
    F: FnOnce() -> Fut,
    Fut: Future,
{
    type Output = Fut::Output;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Fut::Output> {
        let w = worker_of(cx);
        // SAFETY: nothing is moved out of the pinned slot.
        let this = unsafe { self.get_unchecked_mut() };
        match this.state {
            0 => {
                let f = this.f.take().expect("state 0 holds the child");
                let child = w.new_frame(f, &this.r, Kind::Call);
                w.request.set(Request::Call(child));
                this.state = 1;
                Poll::Pending
            }
            1 => {
                this.state = 2;
                // SAFETY: a called child has returned before its parent is resumed.
                match unsafe { this.r.take() } {
                    Ok(v) => Poll::Ready(v),
                    Err(p) => resume_unwind(p),
                }
            }
            _ => panic!("a libfork call was polled after it finished"),
        }
    }
}

impl<F, R> Drop for CallOp<F, R> {
    fn drop(&mut self) {
        if self.state == 1 {
            dropped_unfinished("call");
        }
    }
}

/// The future handles of a runtime without futures: no value of this type exists.
#[derive(Debug)]
pub struct NoFuture<T>(std::convert::Infallible, PhantomData<T>);

impl<T> Clone for NoFuture<T> {
    fn clone(&self) -> Self {
        match self.0 {}
    }
}

impl<T> Future for NoFuture<T> {
    type Output = T;
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<T> {
        match self.0 {}
    }
}

impl<T: Send + Sync> AsyncShared<T> for NoFuture<T> {
    #[allow(unreachable_code)]
    fn get<'a>(&'a self) -> impl Future<Output = &'a T> + Send + 'a
    where
        T: 'a,
    {
        match self.0 {}
        std::future::pending()
    }
}

/// The panic of a spawn on libfork (`AsyncForkJoin::FUTURES` is false; the harness never
/// asks).
fn no_futures() -> ! {
    panic!("libfork is a fork-join runtime: it has no futures (spawn, spawn_shared)")
}

impl<'scope> AsyncWorker<'scope> for LibforkWorker<'scope> {
    type Handle<T: Send + 'scope> = NoFuture<T>;
    type Shared<T: Send + Sync + 'scope> = NoFuture<T>;

    #[inline(always)]
    fn join<A, B, FA, FB>(
        &self,
        a: A,
        b: B,
    ) -> impl Future<Output = (FA::Output, FB::Output)> + Send
    where
        A: FnOnce(Self) -> FA + Send + 'scope,
        B: FnOnce(Self) -> FB + Send + 'scope,
        FA: Future + Send + 'scope,
        FB: Future + Send + 'scope,
        FA::Output: Send + 'scope,
        FB::Output: Send + 'scope,
    {
        JoinOp {
            state: 0,
            a: Some(move || a(LibforkWorker::new())),
            b: Some(move || b(LibforkWorker::new())),
            ra: Slot::new(),
            rb: Slot::new(),
            _pinned: PhantomPinned,
        }
    }

    #[inline(always)]
    fn call<F, Fut>(&self, f: F) -> impl Future<Output = Fut::Output> + Send
    where
        F: FnOnce(Self) -> Fut + Send + 'scope,
        Fut: Future + Send + 'scope,
        Fut::Output: Send + 'scope,
    {
        CallOp {
            state: 0,
            f: Some(move || f(LibforkWorker::new())),
            r: Slot::new(),
            _pinned: PhantomPinned,
        }
    }

    fn spawn<F, Fut>(&self, _f: F) -> impl Future<Output = NoFuture<Fut::Output>> + Send
    where
        F: FnOnce(Self) -> Fut + Send + 'scope,
        Fut: Future + Send + 'scope,
        Fut::Output: Send + 'scope,
    {
        std::future::poll_fn(|_| no_futures())
    }

    fn spawn_shared<F, Fut>(&self, _f: F) -> impl Future<Output = NoFuture<Fut::Output>> + Send
    where
        F: FnOnce(Self) -> Fut + Send + 'scope,
        Fut: Future + Send + 'scope,
        Fut::Output: Send + Sync + 'scope,
    {
        std::future::poll_fn(|_| no_futures())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{Cpu, NodeDistances};
    use std::time::{Duration, Instant};

    /// Two nodes of two CPUs each (CPU c on node c / 2), distances 10 / 20.
    fn two_nodes() -> Topology {
        Topology {
            cpus: (0..4)
                .map(|id| Cpu {
                    id,
                    core: id,
                    package: id / 2,
                    node: id / 2,
                })
                .collect(),
            caches: Vec::new(),
            distances: NodeDistances {
                nodes: vec![0, 1],
                matrix: vec![10, 20, 20, 10],
            },
        }
    }

    fn levels(t: &VictimTable) -> Vec<Vec<u32>> {
        t.levels().map(<[u32]>::to_vec).collect()
    }

    #[test]
    fn victim_tables_follow_the_policy_and_the_placement() {
        let topo = two_nodes();
        let config = |victim, pinning| PoolConfig {
            victim,
            pinning,
            ..PoolConfig::with_workers(4)
        };
        for victim in [VictimPolicy::Uniform, VictimPolicy::RuntimeDefault] {
            let t = victim_tables(&config(victim, Pinning::Scatter), &topo);
            assert_eq!(levels(&t[0]), vec![vec![1, 2, 3]], "{victim}");
            assert!(t[0].sweep().is_empty());
        }
        // Unpinned: the compact order's nominal placement, workers 0 and 1 on node 0.
        let t = victim_tables(&config(VictimPolicy::NumaWeighted, Pinning::None), &topo);
        assert_eq!(levels(&t[0]), vec![vec![1], vec![2, 3]]);
        assert_eq!(levels(&t[3]), vec![vec![2], vec![0, 1]]);
        // Scattered: workers 0 and 2 on node 0 (CPUs 0 and 1), 1 and 3 on node 1.
        let t = victim_tables(&config(VictimPolicy::NumaWeighted, Pinning::Scatter), &topo);
        assert_eq!(levels(&t[0]), vec![vec![2], vec![1, 3]]);
        assert!((t[0].probability(2) - 0.8).abs() < 1e-8);
        assert!((t[0].probability(1) - 0.1).abs() < 1e-8);
    }

    /// Two fake nodes of two CPUs each (two_nodes), 4 lazy workers: nominally workers 0, 1 on
    /// node 0 and 2, 3 on node 1.
    fn lazy_on_two_nodes() -> LibforkPool {
        let config = PoolConfig {
            idle: IdlePolicy::Lazy,
            ..PoolConfig::with_workers(4)
        };
        assert_eq!(groups_of(&config, &two_nodes()), [0, 0, 1, 1]);
        LibforkPool::start_on(&config, &two_nodes()).unwrap()
    }

    // The `+ Send` bound is what the front-end needs of a recursive task; `async fn` cannot
    // state it.
    #[allow(clippy::manual_async_fn)]
    fn fib<'s, C: AsyncWorker<'s>>(c: C, n: u64) -> impl Future<Output = u64> + Send + 's {
        async move {
            if n < 2 {
                return n;
            }
            let (a, b) = c.join(move |c| fib(c, n - 1), move |c| fib(c, n - 2)).await;
            a + b
        }
    }

    #[test]
    fn lazy_pool_keeps_a_thief_awake_in_every_group() {
        let pool = lazy_on_two_nodes();
        let release = AtomicBool::new(false);
        let state = |pool: &LibforkPool| {
            let g = &pool.shared.groups;
            let thieves: Vec<usize> = g.iter().map(|g| g.thieves.load(Ordering::SeqCst)).collect();
            let sleepers: usize = g.iter().map(|g| g.sleepers.load(Ordering::SeqCst)).sum();
            (thieves, sleepers)
        };
        thread::scope(|s| {
            // One worker stays active (its root spins) while the other three look for work and
            // give up: its group's other worker is that group's last thief and stays awake, and
            // the other group keeps one of its two awake: thieves [1, 1], one sleeper. (A
            // group-blind pool keeps one thief in all, two sleepers; no thief kept, three.) A
            // thief that stays awake passes through `sleep` now and then, so the state is
            // sampled and must be the usual one.
            let spinner = s.spawn(|| {
                pool.run_async(|_| async {
                    while !release.load(Ordering::Acquire) {
                        std::hint::spin_loop();
                    }
                    7
                })
            });
            let deadline = Instant::now() + Duration::from_secs(20);
            while pool.shared.active.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
                thread::sleep(Duration::from_millis(1));
            }
            // Time for the thieves to give up.
            thread::sleep(Duration::from_millis(500));
            let samples: Vec<(Vec<usize>, usize)> = (0..200)
                .map(|_| {
                    thread::sleep(Duration::from_millis(2));
                    state(&pool)
                })
                .collect();
            release.store(true, Ordering::Release);
            assert_eq!(spinner.join().unwrap(), 7);
            let usual = samples.iter().filter(|s| **s == (vec![1, 1], 1)).count();
            assert!(
                usual > samples.len() / 2,
                "thieves [1, 1] and one sleeper in only {usual} of {} samples: {:?}",
                samples.len(),
                &samples[..5]
            );
        });
        // And the pool still works, in both groups.
        for _ in 0..50 {
            assert_eq!(pool.run_async(|c| fib(c, 18)), 2584);
        }
    }
}
