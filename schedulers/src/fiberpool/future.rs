//! Scopes and futures: [`FiberScope`] (spawns and future creation, work-first on a new fiber),
//! the result cell of a future, and the future handles [`FiberFuture`] and [`FiberShared`],
//! whose touch and put are the policy's.

use super::Policy;
use super::handle::FiberWorker;
use super::job::{FiberBox, FiberNode, Job};
use super::queued::{self, Queued};
use super::rendezvous::Rendezvous;
use super::signal::Signal;
use super::worker;
use crate::api::{FutureHandle, Scope, SharedHandle};
use crate::config::FutureStack;
use std::any::Any;
use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::panic::{self, AssertUnwindSafe};
use std::ptr;
use std::sync::Arc;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// A scope of [`FiberWorker::scope`](crate::api::Worker::scope). Spawns are work-first: the spawned task runs at once on a
/// new fiber while the spawner's continuation is pushed and may be stolen; the same holds for
/// future creation.
pub struct FiberScope<'s, P: Policy> {
    /// Unfinished tasks of the scope counted by their creators or takers, plus [`HOLD`] for
    /// the scope body until its end, minus the queued tasks of `body_tasks` that others
    /// finished. At its end the body trades its hold for its own count, so from then on this
    /// is the number of unfinished tasks, and whoever brings it to zero sets `done`. Before
    /// that it stays far above zero, whatever the order of the other updates.
    pub(super) pending: AtomicUsize,
    /// Queued futures ([`FutureStack::Current`]) created by code on the body's fiber, minus
    /// those of them that finished there: counted without a read-modify-write, because only
    /// that fiber's code reads or writes it (see [`FiberScope::count_queued`]). The body's
    /// fiber is the one whose stack holds this scope (a local of `scope`).
    pub(super) body_tasks: UnsafeCell<usize>,
    /// Set by the last task to finish.
    pub(super) done: Signal<P>,
    /// The first panic of a spawned or future task (boxed once more: a thin pointer), null
    /// while there is none; taken and re-raised at the scope's end. Set before the task's
    /// completion is signalled, so the scope's end, which waits for that, sees it.
    pub(super) panic: AtomicPtr<Box<dyn Any + Send>>,
    pub(super) _marker: PhantomData<&'s mut &'s ()>,
}

/// What the scope body holds in [`FiberScope::pending`] until its end: far above any number of
/// tasks, so that no decrement by others brings it to zero before the body has added its own
/// count.
pub(super) const HOLD: usize = 1 << (usize::BITS - 2);

// SAFETY: `body_tasks` is read and written only by code running on the body's fiber (checked
// at each use: the scope lies on the running fiber's stack, see `count_queued`); that fiber
// runs on one thread at a time, and moving it to another thread goes through a deque or a
// signal, which order its accesses. Everything else is atomic or immutable.
unsafe impl<P: Policy> Sync for FiberScope<'_, P> {}
// SAFETY: see `Sync`.
unsafe impl<P: Policy> Send for FiberScope<'_, P> {}

impl<P: Policy> std::fmt::Debug for FiberScope<'_, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = self.pending.load(Ordering::Relaxed);
        let mut d = f.debug_struct(P::NAMES.scope);
        if p >= HOLD / 2 {
            // The body still holds the count; what its own fiber counts (`body_tasks`) is
            // not readable from here.
            d.field("body_running", &true)
                .field("pending_besides_body", &(p.wrapping_sub(HOLD) as isize))
        } else {
            d.field("body_running", &false).field("pending", &p)
        }
        .finish()
    }
}

/// The record of a fork in the parent's frame: what the child needs, and where it leaves its
/// result on the fast path.
struct ForkSlot<F, R, P: Policy> {
    /// The child's closure, moved out by the child before the parent becomes stealable.
    func: ManuallyDrop<F>,
    /// The parent's node: the child takes its box and pushes it (the continuation).
    parent: *mut FiberNode<P>,
    /// The scope (a `FiberScope<'_, P>`), which counts the child if the two part.
    scope: *const (),
    /// The child's result, written by the child on the fast path only (it popped the parent
    /// back, so the parent has not run since the fork and this frame is alive).
    result: Option<R>,
}

/// How a child that parted from its parent hands its result over when the parent arrived at
/// the rendezvous first and left its word there.
trait Delivery<P: Policy, R> {
    /// Delivers `v` (`None`: the task panicked) to what `word` stands for.
    ///
    /// # Safety
    /// `word` is what the parent of this kind of fork leaves at the rendezvous.
    unsafe fn deliver(w: &FiberWorker<P>, word: usize, v: Option<R>);
}

/// How a fork of a scope task ended, as the parent sees it when it resumes.
enum Forked<R> {
    /// The child finished and handed its result back directly (the fast path), or finished
    /// first at the rendezvous.
    Done(R),
    /// The child is still running: the parent must arrive at this rendezvous with its word.
    Parted(*const Rendezvous),
}

impl<'s, P: Policy> FiberScope<'s, P> {
    /// Runs `body` as a task of this scope, work-first: at once, on a new fiber, while this
    /// fiber's continuation waits in the deque and may be stolen. Its result is `None` if it
    /// panicked (the panic is kept for the scope's end).
    ///
    /// If the child pops the continuation back at its end (nobody took it: the usual case),
    /// it leaves its result in this frame and switches to it: no atomic instruction, no
    /// allocation, and the scope does not count the task (it is over before the parent goes
    /// on). Otherwise the two parted: the child arrives at the rendezvous with its boxed
    /// result and, if the parent arrived first, delivers it with `D`; the parent gets
    /// [`Forked::Parted`] and must call [`FiberScope::parent_arrives`].
    #[inline]
    fn fork_task<R, F, D>(&self, w: &FiberWorker<P>, body: F) -> Forked<Option<R>>
    where
        F: FnOnce(&FiberWorker<P>) -> R + Send,
        R: Send,
        D: Delivery<P, R>,
    {
        // The scope outlives its tasks: its end waits for every task that is not over before
        // its parent goes on.
        let child = move |w: &FiberWorker<P>| -> Option<R> {
            match panic::catch_unwind(AssertUnwindSafe(|| body(w))) {
                Ok(r) => Some(r),
                Err(p) => {
                    self.keep_panic(p);
                    None
                }
            }
        };
        let child_fiber = w.local().fiber();
        // Where the two sides meet if they part: the child's own (see `FiberNode::rv`).
        let rv = child_fiber.rv;
        let mut slot = ForkSlot::<_, Option<R>, P> {
            func: ManuallyDrop::new(child),
            parent: w.node_ptr(),
            scope: self as *const Self as *const (),
            result: None,
        };
        let record = &mut slot as *mut ForkSlot<_, Option<R>, P> as usize;
        // SAFETY: `start_fork` with these types expects this record, and takes our box from
        // it before it pushes us.
        unsafe { w.fork(child_fiber, start_fork_entry::<P, _, R, D>(&slot), record) };
        match slot.result.take() {
            // The child handed its result over directly and keeps its rendezvous.
            Some(r) => Forked::Done(r),
            None => Forked::Parted(rv),
        }
    }

    /// The parent's side of a parted fork: count the child as a task of the scope, then
    /// arrive with `word` (what the child needs to deliver its result). Returns the child's
    /// result if the child arrived first (it is over and not counted any more), else `None`
    /// (the child will deliver into what `word` stands for and keep the rendezvous).
    ///
    /// The parent's continuation started on a slow path, and nothing since ended a strand:
    /// its serial predecessor is the child's last strand, whose mark the child left at the
    /// rendezvous if it arrived first; if it did not, it had not arrived when the
    /// continuation started, so the continuation deviates ([`super::deviation`]).
    ///
    /// # Safety
    /// `rv` is this fork's rendezvous (from [`Forked::Parted`]), and `word` is what the
    /// child's `deliver` expects.
    unsafe fn parent_arrives<R>(
        &self,
        w: &FiberWorker<P>,
        rv: *const Rendezvous,
        word: usize,
    ) -> Option<Option<R>> {
        // Before arriving: the child decrements only after it saw our word.
        self.pending.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the parent arrives once; the rendezvous lives until the second arrival.
        let Some(first) = (unsafe { (*rv).arrive(word) }) else {
            w.here().start_strand(None);
            return None;
        };
        // SAFETY: the rendezvous lives until we recycle it below; the child arrived first,
        // after leaving its mark.
        w.here().start_strand(Some(unsafe { (*rv).child_end() }));
        // SAFETY: the child arrived first with its boxed result, which is ours now; and the
        // rendezvous is used by nobody else any more.
        let r = unsafe { *Box::from_raw(first as *mut Option<R>) };
        unsafe { w.here().rv_give(rv) };
        // Not the last: this task (or the scope body's hold) keeps it above zero.
        let before = self.pending.fetch_sub(1, Ordering::Relaxed);
        debug_assert!(before > 1);
        Some(r)
    }

    /// Is `w` (the handle of the running fiber) the scope body's fiber: is the scope on its
    /// stack?
    #[inline(always)]
    fn on_body_fiber(&self, w: &FiberWorker<P>) -> bool {
        w.stack_holds(self as *const Self as usize)
    }

    /// Counts a new queued task created by `w`'s fiber: without an atomic instruction if that
    /// is the body's fiber. Returns whether it is (to give to [`Self::end_queued`]).
    #[inline(always)]
    pub(super) fn count_queued(&self, w: &FiberWorker<P>) -> bool {
        let on_body = self.on_body_fiber(w);
        if on_body {
            // SAFETY: we run on the body's fiber (see `body_tasks`).
            unsafe { *self.body_tasks.get() += 1 };
        } else {
            self.pending.fetch_add(1, Ordering::Relaxed);
        }
        on_body
    }

    /// Ends a queued task counted by [`Self::count_queued`] (`on_body` is what it returned),
    /// run by `w`'s fiber: the last one to end after the body's end sets `done`.
    #[inline(always)]
    pub(super) fn end_queued(&self, w: &FiberWorker<P>, on_body: bool) {
        if on_body && self.on_body_fiber(w) {
            // SAFETY: we run on the body's fiber (see `body_tasks`), which is not at the
            // scope's end yet (it is running this task).
            unsafe { *self.body_tasks.get() -= 1 };
        } else if self.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            w.set(&self.done);
        }
    }

    /// The scope's end, on the body's fiber once the body returned: true if every task is
    /// over, else `done` will be set by the last one. Trades the body's hold on `pending` for
    /// its own count of queued tasks; skips that when both say no task is left (none can be
    /// added then: only running tasks of the scope create tasks in it).
    #[inline(always)]
    pub(super) fn end_body(&self) -> bool {
        // SAFETY: we run on the body's fiber, at the end of the body.
        let mine = unsafe { *self.body_tasks.get() };
        if mine == 0 && self.pending.load(Ordering::Acquire) == HOLD {
            return true;
        }
        let delta = mine.wrapping_sub(HOLD);
        self.pending
            .fetch_add(delta, Ordering::AcqRel)
            .wrapping_add(delta)
            == 0
    }

    /// Keeps the first panic of a task, for the scope's end.
    pub(super) fn keep_panic(&self, p: Box<dyn Any + Send>) {
        let mine = Box::into_raw(Box::new(p));
        // Relaxed: the scope's end reads it after the task's completion is signalled.
        if self
            .panic
            .compare_exchange(ptr::null_mut(), mine, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            // Not the first: drop ours. SAFETY: `mine` was never shared.
            drop(unsafe { Box::from_raw(mine) });
        }
    }

    /// Takes the first panic of the scope's tasks (at its end, when every task is over).
    /// Load and store, no swap: nobody else writes it any more.
    #[inline(always)]
    pub(super) fn take_panic(&self) -> Option<Box<dyn Any + Send>> {
        let p = self.panic.load(Ordering::Relaxed);
        if p.is_null() {
            return None;
        }
        self.panic.store(ptr::null_mut(), Ordering::Relaxed);
        // SAFETY: a non-null pointer is a box given up by `keep_panic`, taken once (cleared
        // above; every task is over, so nobody else writes it).
        Some(*unsafe { Box::from_raw(p) })
    }
}

/// The entry of the child of fork record `slot`: [`start_fork`] with the matching types.
fn start_fork_entry<P: Policy, F, R, D>(
    _slot: &ForkSlot<F, Option<R>, P>,
) -> unsafe extern "C" fn(usize, usize) -> !
where
    F: FnOnce(&FiberWorker<P>) -> Option<R>,
    D: Delivery<P, R>,
{
    start_fork::<P, F, R, D>
}

/// The entry of a forked child's fiber (`slot` is the parent's [`ForkSlot`], `w` the child's
/// handle): [`start_child`], then the end of the fiber's round of work (to the parent if the
/// child popped it back).
///
/// # Safety
/// As [`start_child`]; `w` is the handle of the fiber this runs on, whose worker is set.
unsafe extern "C" fn start_fork<P: Policy, F, R, D>(slot: usize, w: usize) -> !
where
    F: FnOnce(&FiberWorker<P>) -> Option<R>,
    D: Delivery<P, R>,
{
    // SAFETY: by the contract (see `FiberWorker::fork`).
    let w = unsafe { FiberWorker::<P>::at(w) };
    // SAFETY: by the contract.
    let handed_back = unsafe { start_child::<P, F, R, D>(slot as *const (), w) };
    worker::finish_round(w, handed_back)
}

/// The start of a forked child, on its new fiber: moves the closure out of the parent's
/// [`ForkSlot`], pushes the parent, runs the child, then tries to pop the parent back (see
/// [`FiberScope::fork_task`]). Returns the parent if it did.
///
/// # Safety
/// `data` is the `ForkSlot<F, Option<R>, P>` of a parent suspended in `fork_task`, not yet
/// published, whose box is ours.
#[inline(always)]
unsafe fn start_child<P: Policy, F, R, D: Delivery<P, R>>(
    data: *const (),
    w: &FiberWorker<P>,
) -> Option<FiberBox<P>>
where
    F: FnOnce(&FiberWorker<P>) -> Option<R>,
{
    let slot = data as *mut ForkSlot<F, Option<R>, P>;
    // SAFETY: the parent is suspended and unpublished: its frame is alive and ours alone until
    // the push below, and its box is ours (it switched to us). The closure is moved out
    // exactly once, here.
    let (f, scope, mut cont) = unsafe {
        (
            ManuallyDrop::take(&mut (*slot).func),
            (*slot).scope,
            Box::from_raw((*slot).parent),
        )
    };
    let rv = w.own_rv();
    cont.fork_rv = rv;
    w.here().push(Job::Resume(cont));
    // From here on the parent may be stolen: `slot` is not touched unless we pop it back.
    let out = f(w);
    // `f` may have migrated this fiber: fetch the worker again.
    let local = w.here();
    match local.pop() {
        Some(Job::Resume(g)) if g.fork_rv == rv => {
            // The parent, never continued since our push (a parent clears its `fork_rv` as
            // soon as it is continued, and `rv` is unique among unfinished forks).
            // SAFETY: so it is still suspended in `fork_task`, its frame alive, and only this
            // fiber will resume it.
            unsafe { (*slot).result = Some(out) };
            return Some(g);
        }
        Some(other) => local.push(other),
        None => {}
    }
    // SAFETY: `rv` is this fork's and the child has not arrived; the scope counts the task
    // until the child's decrement.
    unsafe { child_parted::<P, R, D>(w, rv, scope, out) };
    None
}

/// The child's side of a parted fork (see [`FiberScope::fork_task`]), out of line: its last
/// strand ended on a slow path, so it leaves its mark for the parent's continuation (see
/// `FiberScope::parent_arrives`), then arrives with its boxed result, and delivers it if the
/// parent arrived first.
///
/// # Safety
/// `rv` is the fork's rendezvous, at which the child has not arrived; `scope` is the fork's
/// `FiberScope<'_, P>`, alive while it counts the task.
#[cold]
unsafe fn child_parted<P: Policy, R, D: Delivery<P, R>>(
    w: &FiberWorker<P>,
    rv: *const Rendezvous,
    scope: *const (),
    out: Option<R>,
) {
    let local = w.here();
    local
        .shared
        .counters
        .parted
        .add_single_writer(local.index, 1);
    // SAFETY: the rendezvous lives until the second arrival, which has not happened yet.
    unsafe { (*rv).set_child_end(local.end_strand()) };
    let mine = Box::into_raw(Box::new(out));
    // SAFETY: the child arrives once, and the rendezvous lives until the second arrival.
    match unsafe { (*rv).arrive(mine as usize) } {
        // First: the parent will take our result and recycle the rendezvous. This fiber
        // needs another one for its next fork.
        None => w.renew_rv(),
        Some(word) => {
            // The parent came first, counted this task in the scope and left its word.
            // SAFETY: our box was not taken (we are second).
            let out = unsafe { *Box::from_raw(mine) };
            // SAFETY: `word` is what the parent left for `D` (see `parent_arrives`).
            unsafe { D::deliver(w, word, out) };
            // SAFETY: both sides arrived; nobody else uses the rendezvous any more, and this
            // fiber keeps it for its next fork.
            unsafe { (*rv).reset() };
            // SAFETY: the scope is alive: it counts this task until the decrement below.
            let scope = unsafe { &*(scope as *const FiberScope<'_, P>) };
            if scope.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
                w.set(&scope.done);
            }
        }
    }
}

/// The result cell of a future whose task parted from its creator (or of a latency future
/// waiting on the I/O thread, [`super::latency`]): set once by its task, read by touches.
pub(super) struct Cell2<P: Policy, T> {
    pub(super) done: P::Fut,
    /// `Some` once the task returned; stays `None` if it panicked.
    pub(super) value: UnsafeCell<Option<T>>,
}

// SAFETY: `value` is written once, by the future's task, before `done` is set (Release), and
// read only after `done` is seen set (Acquire): moving it between threads needs `T: Send`. A
// single-touch handle takes the value (again `T: Send`); only multi-touch handles share `&T`
// between threads, and `FiberShared` is only created for `T: Sync` (by `shared_future`).
unsafe impl<P: Policy, T: Send> Send for Cell2<P, T> {}
// SAFETY: see `Send`.
unsafe impl<P: Policy, T: Send> Sync for Cell2<P, T> {}

impl<P: Policy, T> Cell2<P, T> {
    pub(super) fn new() -> Self {
        Cell2 {
            done: P::new_fut(),
            value: UnsafeCell::new(None),
        }
    }

    /// A cell whose task is over (`None`: it panicked).
    fn done(v: Option<T>) -> Self {
        Cell2 {
            done: P::new_done_fut(),
            value: UnsafeCell::new(v),
        }
    }

    /// The task's end (`put`): store the value (if any) and let the policy mark the future done
    /// and release the touches waiting on it.
    fn put(&self, w: &FiberWorker<P>, v: Option<T>) {
        // SAFETY: only the future's task writes, once, before `done` is set.
        unsafe { *self.value.get() = v };
        P::put(w, &self.done);
    }
}

/// A future task's delivery: to the cell its creator left at the rendezvous, whose word is
/// `Arc::into_raw` of a `Cell2<P, T>` reference given to the task.
struct ToCell;

impl<P: Policy, T> Delivery<P, T> for ToCell {
    unsafe fn deliver(w: &FiberWorker<P>, word: usize, v: Option<T>) {
        // SAFETY: by the contract; this consumes the reference the creator gave.
        let cell = unsafe { Arc::from_raw(word as *const Cell2<P, T>) };
        cell.put(w, v);
    }
}

/// A spawned task delivers nothing: its creator's word is a marker.
struct Nothing;

impl<P: Policy> Delivery<P, ()> for Nothing {
    unsafe fn deliver(_: &FiberWorker<P>, _: usize, _: Option<()>) {}
}

/// What a single-touch handle holds.
pub(super) enum Repr<P: Policy, T> {
    /// The task finished before the handle was made (`None`: it panicked).
    Ready(Option<T>),
    /// The task parted from its creator: its result arrives in the cell.
    Cell(Arc<Cell2<P, T>>),
    /// The task was queued as a job on the creator's deque ([`FutureStack::Current`]).
    Queued(Queued<P, T>),
}

/// A single-touch future of a fiber pool.
pub struct FiberFuture<P: Policy, T> {
    repr: Repr<P, T>,
}

/// A multi-touch future of a fiber pool.
pub struct FiberShared<P: Policy, T> {
    cell: Arc<Cell2<P, T>>,
}

impl<P: Policy, T> Clone for FiberShared<P, T> {
    fn clone(&self) -> Self {
        FiberShared {
            cell: Arc::clone(&self.cell),
        }
    }
}

impl<P: Policy, T> std::fmt::Debug for FiberFuture<P, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ready = match &self.repr {
            Repr::Ready(_) => true,
            Repr::Cell(c) => P::is_done(&c.done),
            Repr::Queued(q) => q.is_done(),
        };
        f.debug_struct(P::NAMES.future)
            .field("ready", &ready)
            .finish()
    }
}

impl<P: Policy, T> std::fmt::Debug for FiberShared<P, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(P::NAMES.shared)
            .field("ready", &P::is_done(&self.cell.done))
            .finish()
    }
}

impl<'s, P: Policy> Scope<'s> for FiberScope<'s, P> {
    type Worker = FiberWorker<P>;

    fn spawn<F>(&self, w: &FiberWorker<P>, f: F)
    where
        F: FnOnce(&Self, &FiberWorker<P>) + Send + 's,
    {
        if let Forked::Parted(rv) = self.fork_task::<_, _, Nothing>(w, move |w| f(self, w)) {
            // SAFETY: `rv` is this fork's; the marker word is what `Nothing` expects.
            unsafe { self.parent_arrives::<()>(w, rv, 1) };
        }
    }
}

impl<'s, P: Policy> FiberScope<'s, P> {
    pub(crate) fn future<T, F>(&self, w: &FiberWorker<P>, f: F) -> FiberFuture<P, T>
    where
        F: FnOnce(&Self, &FiberWorker<P>) -> T + Send + 's,
        T: Send + 's,
    {
        // Unchecked: only the pool's immutable configuration is read here, and both paths
        // below check the handle before they use the worker.
        if w.here().shared.futures == FutureStack::Current {
            let q = queued::queue(self, w, move |w| f(self, w));
            return FiberFuture {
                repr: Repr::Queued(q),
            };
        }
        FiberFuture {
            repr: self.fork_future(w, f),
        }
    }

    pub(crate) fn shared_future<T, F>(&self, w: &FiberWorker<P>, f: F) -> FiberShared<P, T>
    where
        F: FnOnce(&Self, &FiberWorker<P>) -> T + Send + 's,
        T: Send + Sync + 's,
    {
        // Multi-touch futures always get their own fiber (see `FutureStack::Current`).
        let cell = match self.fork_future(w, f) {
            Repr::Ready(v) => Arc::new(Cell2::done(v)),
            Repr::Cell(c) => c,
            Repr::Queued(_) => unreachable!("fork_future does not queue"),
        };
        FiberShared { cell }
    }

    /// Polled once here, then driven by the pool's I/O thread; a touch of the unfinished
    /// future suspends as the policy says. See [`super::latency`].
    pub(crate) fn latency_future<T, M, Fut>(&self, w: &FiberWorker<P>, make: M) -> FiberFuture<P, T>
    where
        M: FnOnce() -> Fut + Send + 's,
        Fut: std::future::Future<Output = T> + Send + 's,
        T: Send + 's,
    {
        FiberFuture {
            repr: super::latency::start(self, w, make),
        }
    }
}

impl<'s, P: Policy> FiberScope<'s, P> {
    /// A future task, work-first on a new fiber (see [`FiberScope::fork_task`]).
    fn fork_future<T, F>(&self, w: &FiberWorker<P>, f: F) -> Repr<P, T>
    where
        F: FnOnce(&Self, &FiberWorker<P>) -> T + Send + 's,
        T: Send + 's,
    {
        match self.fork_task::<_, _, ToCell>(w, move |w| f(self, w)) {
            Forked::Done(v) => Repr::Ready(v),
            Forked::Parted(rv) => {
                let cell = Arc::new(Cell2::new());
                let word = Arc::into_raw(Arc::clone(&cell)) as usize;
                // SAFETY: `rv` is this fork's; the word is a cell reference for the task, as
                // `ToCell` expects.
                match unsafe { self.parent_arrives::<T>(w, rv, word) } {
                    None => Repr::Cell(cell),
                    Some(v) => {
                        // SAFETY: the task finished first and never saw the word: take back
                        // the reference it stands for.
                        drop(unsafe { Arc::from_raw(word as *const Cell2<P, T>) });
                        Repr::Ready(v)
                    }
                }
            }
        }
    }
}

crate::api::futures_by_scope!(impl[P: Policy] FiberWorker<P> {
    scope: FiberScope, future: FiberFuture, shared: FiberShared, params: [P], latency: own
});

impl<P: Policy, T: Send> FutureHandle<T> for FiberFuture<P, T> {
    type Worker = FiberWorker<P>;

    fn get(self, w: &FiberWorker<P>) -> T {
        let v = match self.repr {
            Repr::Ready(v) => v,
            Repr::Cell(cell) => {
                w.touch(&cell.done);
                // SAFETY: `done` is set, so the task wrote `value` and will not touch it
                // again, and this handle is the only one.
                unsafe { (*cell.value.get()).take() }
            }
            Repr::Queued(q) => q.get(w),
        };
        v.unwrap_or_else(|| panic!("{}: the future's task panicked", P::NAME))
    }
}

impl<P: Policy, T: Send + Sync> SharedHandle<T> for FiberShared<P, T> {
    type Worker = FiberWorker<P>;

    fn get(&self, w: &FiberWorker<P>) -> &T {
        w.touch(&self.cell.done);
        // SAFETY: `done` is set, so `value` is written and from now on only read.
        unsafe { (*self.cell.value.get()).as_ref() }
            .unwrap_or_else(|| panic!("{}: the future's task panicked", P::NAME))
    }
}
