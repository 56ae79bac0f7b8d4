//! The worker handle every task receives ([`FiberWorker`]): suspension, fork, `join` and
//! `scope`.

use super::Policy;
use super::future::{FiberScope, HOLD};
use super::job::{Exit, FiberBox, FiberNode, Input, Job, JobRef, ToDriver, Yield};
use super::rendezvous::Rendezvous;
use super::signal::Signal;
use super::worker::{Local, read_first, switch_msg};
use crate::api::Worker;
use crate::fiber;
use std::cell::{Cell, UnsafeCell};
use std::marker::PhantomData;
use std::mem::{ManuallyDrop, MaybeUninit};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicPtr, AtomicUsize};
use std::thread;

/// The handle of one fiber: every task running on that fiber receives it. It stays valid when
/// the fiber migrates, because every switch back into the fiber updates the worker it points
/// to.
pub struct FiberWorker<P: Policy> {
    local: Cell<*const Local<P>>,
    /// The fiber's own node (its box, which it owns while it runs).
    node: *mut FiberNode<P>,
    /// The fiber's stack: its lowest address and its size.
    stack_lo: usize,
    stack_len: usize,
}

impl<P: Policy> std::fmt::Debug for FiberWorker<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(P::NAMES.worker)
            .field("worker", &self.local().index)
            .finish()
    }
}

// SAFETY: the handle's state is only used by code running on its own fiber, which `local()`
// checks on every use (the caller's stack must be the fiber's stack): a handle sent to another
// thread is unusable there (it panics), never racy. The fiber itself runs on one thread at a
// time.
unsafe impl<P: Policy> Send for FiberWorker<P> {}
// SAFETY: see `Send`.
unsafe impl<P: Policy> Sync for FiberWorker<P> {}

impl<P: Policy> FiberWorker<P> {
    /// The handle of the fiber of `node`, first run by worker `local`.
    pub(super) fn new(local: *const Local<P>, node: *mut FiberNode<P>) -> Self {
        // SAFETY: the node outlives its fiber, whose stack never changes.
        let (lo, hi) = unsafe { ((*node).stack.bottom(), (*node).stack.top()) };
        FiberWorker {
            local: Cell::new(local),
            node,
            stack_lo: lo,
            stack_len: hi - lo,
        }
    }

    /// The current worker's state. Panics if called from another stack than this fiber's.
    #[inline(always)]
    pub(crate) fn local(&self) -> &Local<P> {
        let probe = 0u8;
        self.local_probed(&probe as *const u8 as usize)
    }

    /// As [`Self::local`], with `frame`, an address in the caller's own frame (a record it
    /// just made there, say), as the probe of the caller's stack.
    #[inline(always)]
    pub(crate) fn local_probed(&self, frame: usize) -> &Local<P> {
        assert!(
            self.stack_holds(frame),
            "{}: a worker handle was used outside the task it was given to",
            P::NAME
        );
        // SAFETY: we run on this handle's fiber (checked above), which the worker `local`
        // points to is running right now (set at the last switch into it).
        unsafe { &*self.local.get() }
    }

    /// Does this handle's fiber stack hold `addr`?
    #[inline(always)]
    pub(super) fn stack_holds(&self, addr: usize) -> bool {
        addr.wrapping_sub(self.stack_lo) < self.stack_len
    }

    /// The current worker's state, without `local`'s check: for this module's own code on
    /// paths where the caller is this fiber by construction (a fiber's body, the switches) or
    /// where the public operation that leads here already checked.
    #[inline(always)]
    pub(super) fn here(&self) -> &Local<P> {
        // SAFETY: we run on this handle's fiber (the caller's contract), which the worker
        // `local` points to is running right now (set at the last switch into it).
        unsafe { &*self.local.get() }
    }

    /// This fiber's node, as a box to hand over: only while it runs, and only once before
    /// it switches away (whoever receives the box continues it later, or keeps it idle).
    #[inline(always)]
    pub(super) fn own_box(&self) -> FiberBox<P> {
        // SAFETY: a running fiber owns its node (see `FiberNode`); the caller hands it over
        // in the message of the switch that follows.
        unsafe { Box::from_raw(self.node) }
    }

    /// Switches from this fiber to the context saved at `to`, handing it `msg`, which must be
    /// what that context expects (a fiber: [`Input`]; a driver: [`ToDriver`]) and carries this
    /// fiber's box. Returns when this fiber is continued, on any worker.
    ///
    /// # Safety
    /// `to` is a suspended context that only this switch continues; `msg` hands over this
    /// fiber's box (from [`Self::own_box`]).
    #[inline(always)]
    pub(super) unsafe fn switch_away<M>(&self, to: usize, msg: M) {
        // SAFETY: forwarded from the caller. Whoever continues a suspended fiber sends an
        // `Input` without a task, of which we read the first field, the worker (`repr(C)`).
        // Our node is alive (whoever holds its box keeps it until it continues us), and `sp`
        // is written by the switch itself, before anyone can continue us.
        let local = unsafe { switch_msg::<M, *const Local<P>>(msg, to, &raw mut (*self.node).sp) };
        self.local.set(local);
    }

    /// Switches away for good, at the end of this fiber's round of work: nobody continues
    /// the context left behind (the fiber's next round starts over at the top of its stack).
    ///
    /// # Safety
    /// As [`Self::switch_away`]; and the frames of the round hold nothing that needs dropping.
    #[inline(always)]
    unsafe fn switch_final<M>(&self, to: usize, msg: M) -> ! {
        let msg = std::mem::ManuallyDrop::new(msg);
        // SAFETY: forwarded from the caller; the receiver moves the message out of our frame
        // at once, and our frame stays as it is until then (see `switch_msg`).
        unsafe { fiber::jump(&*msg as *const M as usize, to) }
    }

    /// Sets the worker this fiber's next round of work runs on.
    #[inline(always)]
    pub(super) fn enter(&self, local: *const Local<P>) {
        self.local.set(local);
    }

    /// The handle of the fiber whose rounds start at `top` ([`FiberNode::top`]).
    ///
    /// # Safety
    /// `top` is the `top` of a live fiber node (its handle lives there, see `Local::new_fiber`).
    #[inline(always)]
    pub(super) unsafe fn at<'a>(top: usize) -> &'a FiberWorker<P> {
        // SAFETY: by the contract.
        unsafe { &*(top as *const FiberWorker<P>) }
    }

    /// This fiber's node, as a raw pointer, for a fork record: its box goes to the child,
    /// which takes it with `Box::from_raw` once this fiber has switched to it.
    #[inline(always)]
    pub(super) fn node_ptr(&self) -> *mut FiberNode<P> {
        self.node
    }

    /// Suspends this fiber, asking the driver for `y`; returns once resumed, on any worker.
    #[inline]
    fn suspend(&self, y: Yield<P>) {
        let to = self.here().driver_context();
        // SAFETY: the driver of the worker running us is suspended in `drive` and expects a
        // `ToDriver`; our box goes with it.
        unsafe { self.switch_away(to, ToDriver(self.own_box(), y)) }
    }

    /// Waits until `sig` is set, suspending this fiber if it is not yet.
    #[inline]
    pub(crate) fn wait(&self, sig: &Signal<P>) {
        if !sig.is_set() {
            self.suspend(Yield::Park(sig));
            debug_assert!(sig.is_set());
        }
    }

    /// [`Self::wait`] where the strand after the wait is the serial successor of the strand
    /// before it (a scope's end): if it suspends, that is a slow end and a slow start
    /// ([`super::deviation`]).
    #[inline]
    fn wait_in_strand(&self, sig: &Signal<P>) {
        if !sig.is_set() {
            let before = self.here().end_strand();
            self.suspend(Yield::Park(sig));
            debug_assert!(sig.is_set());
            self.here().start_strand(Some(before));
        }
    }

    /// A touch of a future: if it is not done, suspend this fiber and let the policy decide
    /// what happens to it and to the worker ([`Policy::suspend_touch`]) until a `put`. The
    /// strand after the touch is the serial successor of the one before it, so a suspension
    /// is a slow end and a slow start ([`super::deviation`]).
    #[inline]
    pub(super) fn touch(&self, fut: &P::Fut) {
        if !P::is_done(fut) {
            let before = self.here().end_strand();
            self.suspend(Yield::Touch(fut));
            debug_assert!(P::is_done(fut));
            self.here().start_strand(Some(before));
        }
    }

    /// Forks: starts `child` (from [`Local::fiber`]) over with `entry(record, its handle)`
    /// and switches straight to it; the entry pushes this fiber as the stealable continuation
    /// (its box is in the record) and runs the child's task. Returns when this fiber is
    /// continued: by the child at its end if the child popped it back, else by whoever stole
    /// it, on any worker.
    ///
    /// # Safety
    /// `record` is what `entry` expects, and it takes this fiber's box (see
    /// [`Self::node_ptr`]) before it publishes this fiber.
    #[inline(always)]
    pub(super) unsafe fn fork(
        &self,
        child: FiberBox<P>,
        entry: unsafe extern "C" fn(usize, usize) -> !,
        record: usize,
    ) {
        let local = self.here();
        let top = child.top;
        // SAFETY: an idle (or new) fiber is ours alone, nothing runs on its stack, and its
        // handle lives at `top`.
        let to = unsafe {
            Self::at(top).enter(local);
            fiber::restart(top, entry, top)
        };
        // The child owns its node while it runs.
        let _ = Box::into_raw(child);
        // SAFETY: the child starts with `entry(record, top)`; as in `switch_away`, whoever
        // continues us later sends an `Input` (the child itself, or a driver).
        let local = unsafe {
            let back = fiber::switch(record, to, &raw mut (*self.node).sp);
            read_first::<P>(back)
        };
        self.local.set(local);
        // SAFETY: we run, so we own our node.
        unsafe { (*self.node).fork_rv = std::ptr::null() };
    }

    /// The rendezvous of the fork this fiber runs as the child ([`FiberNode::rv`]).
    #[inline(always)]
    pub(super) fn own_rv(&self) -> *const Rendezvous {
        // SAFETY: we run, so we own our node.
        unsafe { (*self.node).rv }
    }

    /// Gives this fiber a new rendezvous: it left its own to the parent it parted from.
    #[cold]
    pub(super) fn renew_rv(&self) {
        let rv = self.here().rv_take();
        // SAFETY: we run, so we own our node.
        unsafe { (*self.node).rv = rv };
    }

    /// Ends this fiber's round of work: keeps it as an idle fiber of the current worker and
    /// switches straight to `g` (the deque's bottom), or, if the idle list is full, lets the
    /// driver do it (which ends this fiber). Never returns: the fiber's next round starts
    /// over at the top of its stack.
    #[inline(always)]
    pub(super) fn idle_then(&self, g: FiberBox<P>) -> ! {
        let local = self.here();
        if !local.idle_has_room() {
            self.done(Exit::SwitchTo(g));
        }
        local.keep_idle(self.own_box());
        let to = g.sp;
        // `g` owns its node while it runs.
        let _ = Box::into_raw(g);
        // SAFETY: `g` is suspended and ours alone and expects an `Input`; our node is in the
        // idle list, and our stack is reused only by this thread, after `g` read the message
        // (a round's frames hold only plain pointers and the handle).
        unsafe { self.switch_final(to, Input(local, None)) }
    }

    /// Ends this fiber's round of work through the driver (`exit`). Never returns, as
    /// [`Self::idle_then`].
    pub(super) fn done(&self, exit: Exit<P>) -> ! {
        let to = self.here().driver_context();
        // SAFETY: as in `suspend`: the driver expects a `ToDriver`, our box goes with it; as in
        // `idle_then` for what the round leaves behind.
        unsafe { self.switch_final(to, ToDriver(self.own_box(), Yield::Done(exit))) }
    }

    /// Sets `sig`, pushing every fiber parked on it onto this worker's deque.
    pub(crate) fn set(&self, sig: &Signal<P>) {
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

/// The record of a join's `b`, in the frame of `join`. Whoever takes its deque entry (the
/// join itself, a thief, or the join's worker after the join's fiber suspended) moves `func`
/// out, once; a taker other than the join writes `result` before it sets `done`, and the
/// join reads it once, after `done`. (No `Option` tags: who took the entry says which
/// field holds what.)
///
/// The two marks ([`super::deviation`]) are written only when `b` is not run inline, so the
/// fast path leaves them uninitialised: `a_end` by the join when its take-back fails, before
/// its fiber parks on `done` (read by `exec` only if it sees the fiber parked), and `b_end`
/// by `exec` before it sets `done` (read by the join after `done`).
struct StackJob<P: Policy, B, RB> {
    func: UnsafeCell<ManuallyDrop<B>>,
    result: UnsafeCell<MaybeUninit<thread::Result<RB>>>,
    done: Signal<P>,
    a_end: UnsafeCell<MaybeUninit<u64>>,
    b_end: UnsafeCell<MaybeUninit<u64>>,
}

impl<P: Policy, B, RB> StackJob<P, B, RB> {
    /// Runs `b` for a worker that took it from the deque (a thief, or the owner's worker after
    /// the owner suspended).
    unsafe fn exec(data: *const (), w: &FiberWorker<P>)
    where
        B: FnOnce(&FiberWorker<P>) -> RB + Send,
        RB: Send,
    {
        // SAFETY: the join frame holding this record waits for `done` before returning.
        let job = unsafe { &*(data as *const Self) };
        // SAFETY: whoever took the entry out of the deque is the only one to run it, and the
        // join no longer touches `func` once its entry was taken.
        let b = unsafe { ManuallyDrop::take(&mut *job.func.get()) };
        // A slow start: `b`'s serial predecessor is `a`'s last strand, whose end is known
        // only once the join's fiber is parked on `done` (see `super::deviation`).
        let a_end = if job.done.has_waiter() {
            // SAFETY: the join wrote `a_end` before its fiber was parked, which the Acquire
            // load of `has_waiter` saw; nobody writes it again.
            Some(unsafe { (*job.a_end.get()).assume_init() })
        } else {
            None
        };
        w.here().start_strand(a_end);
        let r = panic::catch_unwind(AssertUnwindSafe(|| b(w)));
        // `b` may have migrated this fiber: fetch the worker again. A slow end.
        let b_end = w.here().end_strand();
        // SAFETY: the join reads `result` and `b_end` only after `done` is set, and nobody
        // else writes them.
        unsafe {
            (*job.result.get()).write(r);
            (*job.b_end.get()).write(b_end);
        }
        w.set(&job.done);
    }
}

impl<P: Policy> Worker for FiberWorker<P> {
    type Scope<'s> = FiberScope<'s, P>;

    #[inline]
    fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(&Self) -> RA + Send,
        B: FnOnce(&Self) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        let job = StackJob {
            func: UnsafeCell::new(ManuallyDrop::new(b)),
            result: UnsafeCell::new(MaybeUninit::uninit()),
            done: Signal::new(),
            a_end: UnsafeCell::new(MaybeUninit::uninit()),
            b_end: UnsafeCell::new(MaybeUninit::uninit()),
        };
        let data = &job as *const StackJob<P, B, RB> as *const ();
        self.local_probed(data as usize).push(Job::Run(JobRef {
            data,
            exec: StackJob::<P, B, RB>::exec,
        }));
        let ra = panic::catch_unwind(AssertUnwindSafe(|| a(self)));
        // The sync. `a` may have migrated this fiber: fetch the worker again.
        if self.here().take_back(data) {
            // Not taken: `b` is ours to run (or to drop, if `a` panicked).
            // SAFETY: the entry is in no deque any more, so nobody else moves `func` out.
            let b = unsafe { ManuallyDrop::take(&mut *job.func.get()) };
            let ra = match ra {
                Ok(ra) => ra,
                Err(p) => {
                    drop(b);
                    panic::resume_unwind(p)
                }
            };
            return (ra, b(self));
        }
        // `a`'s last strand ended on a slow path: record its mark for `b`'s start (see
        // `StackJob`) before the fiber can park on `done`.
        let a_end = self.here().end_strand();
        // SAFETY: written once, here; `exec` reads it only after this fiber parked on `done`.
        unsafe { (*job.a_end.get()).write(a_end) };
        self.wait(&job.done);
        // The continuation starts on a slow path; its serial predecessor is `b`'s last strand.
        // SAFETY: `done` is set, so the taker wrote `b_end` (once, see `StackJob::exec`).
        self.here()
            .start_strand(Some(unsafe { (*job.b_end.get()).assume_init() }));
        // SAFETY: `done` is set, so the taker wrote the result (once, see `StackJob::exec`)
        // and touches the record no more.
        let rb = unsafe { (*job.result.get()).assume_init_read() };
        match (ra, rb) {
            (Ok(ra), Ok(rb)) => (ra, rb),
            (Err(p), _) | (_, Err(p)) => panic::resume_unwind(p),
        }
    }

    fn scope<'s, F, R>(&self, f: F) -> R
    where
        F: FnOnce(&FiberScope<'s, P>, &Self) -> R + Send,
        R: Send,
    {
        let scope = FiberScope {
            pending: AtomicUsize::new(HOLD),
            body_tasks: UnsafeCell::new(0),
            done: Signal::new(),
            panic: AtomicPtr::new(std::ptr::null_mut()),
            _marker: PhantomData,
        };
        let r = panic::catch_unwind(AssertUnwindSafe(|| f(&scope, self)));
        // The sync: if tasks remain, the last one sets `done`.
        if !scope.end_body() {
            self.wait_in_strand(&scope.done);
        }
        // `done` (or the last decrement) ordered every task's writes before this point.
        if let Some(p) = scope.take_panic() {
            panic::resume_unwind(p);
        }
        match r {
            Ok(r) => r,
            Err(p) => panic::resume_unwind(p),
        }
    }
}
