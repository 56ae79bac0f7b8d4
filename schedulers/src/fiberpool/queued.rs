//! Futures without a stack of their own ([`FutureStack::Current`](crate::config::FutureStack::Current),
//! the ProWS paper's "-stack"): the task is a stealable job on its creator's deque, like a
//! join's second branch, and runs on the stack of whoever takes it.
//!
//! The record ([`Record`]) is boxed and has two references: the deque entry's and the handle's
//! ([`Queued`]). The fast path is the touch finding the entry still at its deque's bottom: it
//! pops it back (so both references are its own), runs the task inline and frees the record.
//! Otherwise whoever took the entry runs the task, stores the value, `put`s it (the policy's
//! completion: waiting touches resume) and drops its reference; the touch waits on the
//! policy's future state, takes the value and drops the other. The last reference frees the
//! record (AcqRel decrement: the other side's accesses happen before the free).
//!
//! The scope counts the task from its creation to its end, so a handle that is dropped, or
//! touched after its scope, never leaves a task running on borrowed data. A task created and
//! ended on the scope body's fiber (the fast path of `x = future(..); ..; get(x)` in the
//! body) is counted without an atomic instruction (see `FiberScope::count_queued`): the fast
//! path has no read-modify-write at all. Before that count, two atomic read-modify-writes on
//! the scope per future made fib(35) `sf` on `futures=nostack` cost 14.8 (abp) and 19.7 (prows)
//! times T_s.
//!
//! Against the serial elision, whose futures are eager, a queued future deviates by design
//! ([`super::deviation`]): the creator's continuation (counted at the creation), the task's
//! first strand (counted where it starts), and the strand after a touch that ran the task
//! inline (counted there).

use super::Policy;
use super::future::FiberScope;
use super::handle::FiberWorker;
use super::job::{Job, JobRef};
use std::cell::UnsafeCell;
use std::mem::ManuallyDrop;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The part of a record the handle reads, at its start (`repr(C)`), whatever the closure type.
#[repr(C)]
struct Head<P: Policy, T> {
    done: P::Fut,
    /// Written once by whoever runs the task (`None`: it panicked), before `done` is set.
    value: UnsafeCell<Option<T>>,
    /// The deque entry's and the handle's references.
    refs: AtomicUsize,
    /// The scope (a `FiberScope<'_, P>`), which counts the task until it ends.
    scope: *const (),
    /// Created on the scope body's fiber (see `FiberScope::count_queued`).
    on_body: bool,
}

/// A queued future task: the head, then the closure.
#[repr(C)]
struct Record<P: Policy, T, F> {
    head: Head<P, T>,
    /// Taken by whoever runs the task.
    func: UnsafeCell<Option<F>>,
}

/// The handle's side of a queued future.
pub(super) struct Queued<P: Policy, T> {
    head: *const Head<P, T>,
    /// Runs the task inline and frees the record (the handle popped the entry back).
    run_inline: unsafe fn(*const (), &FiberWorker<P>) -> Option<T>,
    /// Frees the record (the last reference).
    free: unsafe fn(*const ()),
}

// SAFETY: the record's value is written once before `done` is set (Release) and read after it
// is seen (Acquire), so moving the handle needs `T: Send`; the rest is `Sync` state or
// functions. A handle is only used by one task at a time (`get` consumes it).
unsafe impl<P: Policy, T: Send> Send for Queued<P, T> {}
// SAFETY: see `Send`; `&Queued` only reads `done`.
unsafe impl<P: Policy, T: Send> Sync for Queued<P, T> {}

/// Pushes `func` as a queued future task of `scope` onto this worker's deque.
pub(super) fn queue<P, T, F>(scope: &FiberScope<'_, P>, w: &FiberWorker<P>, func: F) -> Queued<P, T>
where
    P: Policy,
    F: FnOnce(&FiberWorker<P>) -> T + Send,
    T: Send,
{
    let on_body = scope.count_queued(w);
    let rec: *mut Record<P, T, F> = Box::into_raw(Box::new(Record {
        head: Head {
            done: P::new_fut(),
            value: UnsafeCell::new(None),
            refs: AtomicUsize::new(2),
            scope: scope as *const FiberScope<'_, P> as *const (),
            on_body,
        },
        func: UnsafeCell::new(Some(func)),
    }));
    let local = w.local();
    local.push(Job::Run(JobRef {
        data: rec as *const (),
        exec: exec::<P, T, F>,
    }));
    // The creator's continuation starts now, before the task, its serial predecessor.
    local.deviated(1);
    Queued {
        head: rec as *const Head<P, T>,
        run_inline: run_inline::<P, T, F>,
        free: free::<P, T, F>,
    }
}

/// Runs the task of `rec` (taking its closure) and ends it in its scope.
///
/// # Safety
/// The caller took the record's deque entry, so it is the only one to run it; the scope is
/// alive (it counts the task).
unsafe fn run<P: Policy, T, F: FnOnce(&FiberWorker<P>) -> T>(
    rec: &Record<P, T, F>,
    w: &FiberWorker<P>,
) -> Option<T> {
    // SAFETY: by the contract, nobody else takes the closure.
    let func = unsafe { (*rec.func.get()).take() }.expect("a queued future ran twice");
    // SAFETY: the scope counts this task until `end_task`.
    let scope = unsafe { &*(rec.head.scope as *const FiberScope<'_, P>) };
    match panic::catch_unwind(AssertUnwindSafe(|| func(w))) {
        Ok(v) => Some(v),
        Err(p) => {
            scope.keep_panic(p);
            None
        }
    }
}

/// The task's end in its scope: the last one sets the scope's signal.
///
/// # Safety
/// `head` is the task's, whose scope is alive because it counts the task; the scope is not
/// used afterwards.
unsafe fn end_task<P: Policy, T>(head: &Head<P, T>, w: &FiberWorker<P>) {
    // SAFETY: by the contract.
    let scope = unsafe { &*(head.scope as *const FiberScope<'_, P>) };
    scope.end_queued(w, head.on_body);
}

/// The deque entry's job: someone took it (a thief, or this worker's deque loop).
///
/// # Safety
/// `data` is a `Record<P, T, F>` from `queue`, its entry taken out of a deque once.
unsafe fn exec<P: Policy, T, F: FnOnce(&FiberWorker<P>) -> T>(data: *const (), w: &FiberWorker<P>) {
    // SAFETY: the entry's reference keeps the record alive until `release` below.
    let rec = unsafe { &*(data as *const Record<P, T, F>) };
    // The task's first strand: its serial predecessor, the creator's strand, was followed by
    // the creator's continuation on the creator's worker.
    w.here().deviated(1);
    // SAFETY: we took the entry.
    let v = unsafe { run(rec, w) };
    // A slow end (the next strand is whatever this worker finds next).
    w.here().end_strand();
    // SAFETY: written once, before `done` is set; the handle reads it only after.
    unsafe { *rec.head.value.get() = v };
    P::put(w, &rec.head.done);
    // SAFETY: the scope still counts the task.
    unsafe { end_task(&rec.head, w) };
    // SAFETY: the entry's reference, dropped once; `rec` is not used afterwards.
    unsafe { release(&rec.head, free::<P, T, F>, data) };
}

/// The handle popped the entry back: both references are its own.
///
/// # Safety
/// `data` is a `Record<P, T, F>` whose entry the handle took back; nobody else has it.
unsafe fn run_inline<P: Policy, T, F: FnOnce(&FiberWorker<P>) -> T>(
    data: *const (),
    w: &FiberWorker<P>,
) -> Option<T> {
    // SAFETY: by the contract the record is ours alone.
    let rec = unsafe { Box::from_raw(data as *mut Record<P, T, F>) };
    // SAFETY: we took the entry; the scope counts the task.
    let v = unsafe { run(&rec, w) };
    // SAFETY: as above.
    unsafe { end_task(&rec.head, w) };
    v
}

/// Frees a record.
///
/// # Safety
/// `data` is a `Record<P, T, F>` from `queue` whose last reference was just dropped.
unsafe fn free<P: Policy, T, F>(data: *const ()) {
    // SAFETY: by the contract.
    drop(unsafe { Box::from_raw(data as *mut Record<P, T, F>) });
}

/// Drops one reference; the last one frees the record.
///
/// # Safety
/// Each reference is dropped once; `head` is at `data`, freed by `free`.
unsafe fn release<P: Policy, T>(head: &Head<P, T>, free: unsafe fn(*const ()), data: *const ()) {
    if head.refs.fetch_sub(1, Ordering::AcqRel) == 1 {
        // SAFETY: the other reference is gone: nobody uses the record any more.
        unsafe { free(data) };
    }
}

impl<P: Policy, T> Queued<P, T> {
    /// Is the task done? (For `Debug`.)
    pub(super) fn is_done(&self) -> bool {
        // SAFETY: the handle's reference keeps the record alive.
        P::is_done(unsafe { &(*self.head).done })
    }

    /// The touch: runs the task here if its entry is still at the deque's bottom, else waits
    /// for it. `None` if the task panicked.
    pub(super) fn get(self, w: &FiberWorker<P>) -> Option<T> {
        let me = ManuallyDrop::new(self);
        let data = me.head as *const ();
        if w.local().take_back(data) {
            // SAFETY: our entry, taken back before anyone else took it: both references
            // are ours.
            let v = unsafe { (me.run_inline)(data, w) };
            // Two deviations: the task's first strand (its serial predecessor is the
            // creator's strand, not the one before this touch), and the strand after this
            // touch (its predecessor is the one before it; the task ran in between), charged
            // to whichever worker the task left this fiber on.
            w.here().deviated(2);
            return v;
        }
        // SAFETY: the handle's reference keeps the record alive.
        let head = unsafe { &*me.head };
        w.touch(&head.done);
        // SAFETY: `done` is set: the value is written and nobody else reads it.
        let v = unsafe { (*head.value.get()).take() };
        // SAFETY: the handle's reference, dropped once (`me` is not dropped).
        unsafe { release(head, me.free, data) };
        v
    }
}

impl<P: Policy, T> Drop for Queued<P, T> {
    fn drop(&mut self) {
        // An untouched handle: the task still runs (the scope counts it); drop our reference.
        // SAFETY: the handle's reference, dropped once.
        unsafe { release(&*self.head, self.free, self.head as *const ()) };
    }
}
