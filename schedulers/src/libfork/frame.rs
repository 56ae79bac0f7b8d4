//! Task frames: one per forked, called or root task, each polled by the worker directly.
//!
//! A frame is a [`Header`] followed by the task's future, which stays where it is (pinned)
//! until the frame is freed. The header links the frame to its parent and says how it was started, on
//! which stack it lives, and holds the parent-side join state (the split counter). The
//! monomorphic [`Frame`] is reached only through the header's poll function, so the worker loop
//! handles every frame alike.
//!
//! ```text
//!  segmented stack (grows up)
//!  +-----------------------------+  <- frame of the parent (its future holds the join, with
//!  | Header | out | parent's fut. |     the result slots of both children)
//!  +-----------------------------+
//!  | Header | out | child future  |  <- frame of the running child; `out` points at its slot
//!  |        |     |               |     in the parent's join
//!  +-----------------------------+  <- sp
//! ```
//!
//! A task's result goes to its slot as `Ok(value)`, or `Err(payload)` if the task panicked;
//! the parent's join re-raises the payload (so a panic climbs the tree to `run_async`).

use super::stack::SegStack;
use crate::sync::{AtomicU32, Ordering};
use std::any::Any;
use std::cell::{Cell, UnsafeCell};
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::ptr;
use std::task::{Context, Poll};

/// A child's result: its value, or the payload of its panic.
pub type Outcome<T> = Result<T, Box<dyn Any + Send>>;

/// Where a child writes its [`Outcome`]: a cell in the parent's join (or in `run_async`'s
/// frame for the root). Written once by the child; read by the parent only after the join
/// (ordered by the pop of the parent from the same worker's deque, or by the join counter).
pub struct Slot<T>(pub UnsafeCell<Option<Outcome<T>>>);

impl<T> Slot<T> {
    /// An empty slot.
    pub const fn new() -> Self {
        Slot(UnsafeCell::new(None))
    }

    /// Takes the outcome.
    ///
    /// # Safety
    /// The child has written it and no other access is in progress (after the join).
    pub unsafe fn take(&self) -> Outcome<T> {
        // SAFETY: the caller's contract.
        unsafe { (*self.0.get()).take() }.expect("a libfork child finished without a result")
    }
}

// SAFETY: a slot is written by one child and read by its parent after the join; the join's
// synchronisation orders the two (see `Slot`).
unsafe impl<T: Send> Sync for Slot<T> {}

/// How a task was started, which decides what happens when it returns (Algorithm 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Forked: its parent's continuation was pushed on the deque and may have been stolen.
    Fork,
    /// Called: its parent waits for it and was never made stealable.
    Call,
    /// The root of a `run_async`: its return ends the computation.
    Root,
}

/// Polls a frame's task once; on `Ready` its outcome is in its slot and its future dropped.
/// A panic of the task unwinds out of it (the worker loop catches it and calls the
/// [`FailFn`]).
pub type PollFn = unsafe fn(*mut Header, &mut Context<'_>) -> Poll<()>;

/// Ends a frame whose poll panicked: drops its future (unless it was being dropped) and makes
/// the panic's payload its outcome.
pub type FailFn = unsafe fn(*mut Header, Box<dyn Any + Send>);

/// Makes the second child of a join whose first child has just returned to the same worker
/// (`op` is the join's awaitable, `worker` the worker's state) and gives its frame: the
/// worker runs it without polling the parent in between. See [`Header::resume`].
pub type ResumeFn = unsafe fn(op: *mut (), worker: *const ()) -> *mut Header;

/// The part of a frame the worker loop sees.
#[repr(C)]
pub struct Header {
    /// The frame's monomorphic poll.
    pub poll: PollFn,
    /// The frame's monomorphic failure.
    pub fail: FailFn,
    /// The frame that started this one; for the root, the `run_async` call's latch.
    pub parent: *mut Header,
    /// The stack this frame lives on (null for the root, which lives in `run_async`).
    pub stack: *mut SegStack,
    /// The mark to give back to `stack` when the frame is freed.
    pub mark: *mut u8,
    pub kind: Kind,
    /// Set when the future's drop begins: a panic after that must not drop it again.
    pub dropped: Cell<bool>,
    /// Set by a join when it forks its first child, cleared when taken or when the frame is
    /// polled again: while set, the frame's continuation after that fork is "make the second
    /// child and call it", which the worker does itself when the first child returns and pops
    /// the frame back (saving a poll of the parent per join). A thief resumes the frame by
    /// polling it (which clears this), and a child whose parent was stolen never reads it.
    pub resume: Cell<Option<(ResumeFn, *mut ())>>,
    /// Times this frame's continuation was stolen since its last join. Written only by the
    /// worker that runs the frame (a thief counts its own steal before resuming it).
    pub steals: Cell<u32>,
    /// The join counter ([`JoinCounter`]).
    pub joins: JoinCounter,
}

/// The idle value of a [`JoinCounter`]: larger than any number of steals of one join.
pub const JOIN_BIAS: u32 = 1 << 30;

/// A frame's join counter, which decides who resumes the frame after a join whose
/// continuation was stolen (the split counter of nowa): [`JOIN_BIAS`] while no join is in
/// progress; each forked child whose parent was stolen subtracts 1 when it returns
/// ([`JoinCounter::child_arrives`]), the parent subtracts `JOIN_BIAS - steals` at its join
/// ([`JoinCounter::parent_arrives`]); whoever brings it to zero goes on with the parent.
/// Every arrival is AcqRel: it releases what its side wrote (a child's result, its frees on
/// the parent's stack), and the last one acquires what every other side wrote.
/// `tests/loom.rs` models it.
pub struct JoinCounter(AtomicU32);

impl JoinCounter {
    /// A counter with no join in progress.
    #[inline(always)]
    pub fn new() -> Self {
        JoinCounter(AtomicU32::new(JOIN_BIAS))
    }

    /// The parent's arrival at its join, its continuation stolen `steals` times since the last
    /// join (counted by the thieves in the frame, without an atomic instruction): true if it is
    /// the last, so every child is done and it goes on with the parent.
    #[inline(always)]
    pub fn parent_arrives(&self, steals: u32) -> bool {
        self.0.fetch_sub(JOIN_BIAS - steals, Ordering::AcqRel) == JOIN_BIAS - steals
    }

    /// A forked child's arrival, its parent stolen: true if it is the last, so it goes on with
    /// the parent.
    #[inline(always)]
    pub fn child_arrives(&self) -> bool {
        self.0.fetch_sub(1, Ordering::AcqRel) == 1
    }

    /// Makes the counter ready for the next join, by whoever goes on with the frame after the
    /// last arrival. Relaxed: the frame's next forks happen after it on this thread, and a
    /// thief reaches the frame through the deque, whose push releases it.
    #[inline(always)]
    pub fn reset(&self) {
        self.0.store(JOIN_BIAS, Ordering::Relaxed);
    }
}

impl Default for JoinCounter {
    fn default() -> Self {
        Self::new()
    }
}

/// A whole frame: header, where the outcome goes, and the task's future (pinned here until
/// the frame is freed).
#[repr(C)]
pub struct Frame<Fut: Future> {
    header: Header,
    out: *const Slot<Fut::Output>,
    fut: Fut,
}

impl<Fut: Future> Frame<Fut> {
    /// Writes a new frame at `at` (which has `Self`'s layout) and returns its header. The
    /// future is made by `make` after everything else is written, straight into the frame (no
    /// copy through the native stack); if `make` panics, the frame is not written and the
    /// panic goes on.
    ///
    /// # Safety
    /// `at` is valid for writes of `Self` and suitably aligned; `out` stays valid until the
    /// frame has written it.
    #[inline(always)]
    pub unsafe fn write_with(
        at: *mut u8,
        make: impl FnOnce() -> Fut,
        out: *const Slot<Fut::Output>,
        parent: *mut Header,
        stack: *mut SegStack,
        mark: *mut u8,
        kind: Kind,
    ) -> *mut Header {
        let frame = at.cast::<Self>();
        // SAFETY: the caller's contract.
        unsafe {
            (&raw mut (*frame).header).write(Header {
                poll: Self::poll,
                fail: Self::fail,
                parent,
                stack,
                mark,
                kind,
                dropped: Cell::new(false),
                resume: Cell::new(None),
                steals: Cell::new(0),
                joins: JoinCounter::new(),
            });
            (&raw mut (*frame).out).write(out);
            (&raw mut (*frame).fut).write(make());
        }
        frame.cast()
    }

    /// The frame's [`PollFn`]. No `catch_unwind` here: it would cost a call on every poll,
    /// so the worker loop catches a panic once, around all the polls it makes.
    ///
    /// # Safety
    /// `h` is the header of a live `Self` that has not finished.
    #[inline(always)]
    unsafe fn poll(h: *mut Header, cx: &mut Context<'_>) -> Poll<()> {
        let frame = h.cast::<Self>();
        // SAFETY: the caller's contract; the future is only touched by the worker running it,
        // and lives in the frame, which does not move until freed.
        let fut = unsafe { Pin::new_unchecked(&mut (*frame).fut) };
        let Poll::Ready(v) = fut.poll(cx) else {
            return Poll::Pending;
        };
        // Drop the future first (a panic there is the task's: `fail` sees `dropped`), then
        // publish; nobody reads the slot before the worker loop goes on.
        // SAFETY: the future is finished and never touched again; `dropped` keeps `fail` from
        // dropping it a second time; `out` is valid until written (contract of `write_with`),
        // and empty (a slot is written once), so nothing is dropped by the write.
        unsafe {
            (*h).dropped.set(true);
            ptr::drop_in_place(&raw mut (*frame).fut);
            (*(*frame).out).0.get().write(Some(Ok(v)));
        }
        Poll::Ready(())
    }

    /// The frame's [`FailFn`].
    ///
    /// # Safety
    /// `h` is the header of a live `Self` whose poll just panicked with `payload`.
    unsafe fn fail(h: *mut Header, payload: Box<dyn Any + Send>) {
        let frame = h.cast::<Self>();
        // SAFETY: the caller's contract: the future is not being polled, and is dropped here
        // at most once (`dropped`).
        unsafe {
            if !(*h).dropped.replace(true) {
                // A second panic, in the drop, is dropped: the first one is the outcome.
                let _ = catch_unwind(AssertUnwindSafe(|| {
                    ptr::drop_in_place(&raw mut (*frame).fut)
                }));
            }
            *(*(*frame).out).0.get() = Some(Err(payload));
        }
    }
}
