//! The mechanism of a worker: polling frames in a loop (the trampoline), fork, call, the
//! joins and the returns (the paper's Algorithms 3-5), and the stacks a worker holds.

use super::frame::{Frame, Header, Kind, Slot};
use super::pool::{Latch, Shared};
use super::stack::SegStack;
use crate::deque::Owner;
use crate::stats::PerWorker;
use crate::victims::VictimTable;
use std::cell::Cell;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};

/// What a task's awaitable asks of the worker when it returns `Pending`.
#[derive(Debug, Clone, Copy)]
pub(super) enum Request {
    /// Nothing: the task awaited something that is not a libfork operation.
    None,
    /// Push the current frame on the deque and run this child.
    Fork(*mut Header),
    /// Run this child; the current frame waits for it.
    Call(*mut Header),
    /// The current frame is at a join whose continuation was stolen: arrive at its counter.
    Join,
}

/// A worker's own state, on its thread's stack; tasks reach it through their waker.
pub(super) struct WorkerState {
    pub(super) index: usize,
    pub(super) shared: Arc<Shared>,
    pub(super) owner: Owner,
    /// The stack new frames go on (empty whenever the worker looks for work).
    pub(super) stack: Cell<*mut SegStack>,
    /// An empty stack kept for when the worker must give its stack up.
    pub(super) spare: Cell<*mut SegStack>,
    /// The frame being polled.
    pub(super) current: Cell<*mut Header>,
    pub(super) request: Cell<Request>,
    pub(super) frames: *const AtomicU64,
    pub(super) rng: Cell<u64>,
    /// Whom this worker steals from ([`victim_tables`](super::numa::victim_tables)).
    pub(super) victims: VictimTable,
    /// This worker's lazy-pool group (its NUMA node, [`groups_of`](super::numa::groups_of)).
    pub(super) group: usize,
}

/// The waker of every libfork poll: its data is the polling worker's [`WorkerState`]. Waking
/// does nothing: libfork tasks wait only for libfork operations, which the worker loop drives.
pub(super) static WAKER_VTABLE: RawWakerVTable = RawWakerVTable::new(
    |data| RawWaker::new(data, &WAKER_VTABLE),
    |_| {},
    |_| {},
    |_| {},
);

/// The worker polling the current task, from its context.
#[inline(always)]
pub(super) fn worker_of<'a>(cx: &Context<'a>) -> &'a WorkerState {
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
    pub(super) fn new_frame<Fut: Future>(
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
    pub(super) fn next_rand(&self) -> u64 {
        crate::rng::xorshift64star(&self.rng)
    }

    /// Makes `s` (the stack of a frame about to be resumed) the current stack; the current
    /// one, empty, becomes the spare (or is freed if there is one). The root frame lives on no
    /// stack (`s` null): its resumer keeps its own, empty, stack.
    pub(super) fn take_stack(&self, s: *mut SegStack) {
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
    pub(super) fn leave_stack(&self) {
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
    pub(super) unsafe fn reset_join(f: *mut Header) {
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
    pub(super) unsafe fn run(&self, f: *mut Header) {
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
    pub(super) unsafe fn trampoline(&self, mut f: *mut Header, waker: &Waker) {
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
    pub(super) unsafe fn arrive_at_join(&self, f: *mut Header) -> bool {
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
    pub(super) unsafe fn returned(&self, f: *mut Header) -> Option<*mut Header> {
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
    pub(super) unsafe fn implicit_join(&self, parent: *mut Header) -> Option<*mut Header> {
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
