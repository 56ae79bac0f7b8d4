//! The C ABI of `shim/tbb.cpp` and its safe wrappers: oneTBB's `task_arena`, `task_group`
//! and `task_scheduler_observer` as Rust calls.
//!
//! # How a task crosses the boundary
//!
//! A task is a C function pointer and a context pointer ([`SbTask`], `*mut c_void`). A Rust
//! closure crosses as a monomorphised `extern "C"` trampoline plus a pointer to its slot:
//!
//! * [`join`] and [`TbbArena::execute`] keep each closure on the caller's stack, in an
//!   `Option` slot beside the slot of its outcome; the trampoline takes the closure out, runs
//!   it under [`catch_unwind`] and stores its value or its panic payload. The C++ call returns
//!   only when both tasks have returned, so the slots outlive the tasks.
//! * [`TbbScope::spawn`] boxes the closure; the trampoline takes the box back (freeing it),
//!   runs the closure under [`catch_unwind`] and records the first panic payload in the
//!   scope.
//!
//! A panic never unwinds into C++: after the wait, the wrapper re-raises the stored panic with
//! [`resume_unwind`] (its payload unchanged), `a`'s before `b`'s in a join, the body's before a
//! spawned task's in a scope. The arena stays usable.
//!
//! # What each call is in oneTBB
//!
//! * [`TbbArena::new`]: a `task_arena(threads, 1)`: `threads` threads in all, one slot
//!   reserved for the external thread that calls [`TbbArena::execute`] (so the caller is one
//!   of the P and oneTBB adds `threads - 1` workers). The shim keeps one process-wide
//!   `global_control(max_allowed_parallelism)` at least at the sum of the threads of the live
//!   arenas, so an arena gets its workers even with more threads than CPUs (oneTBB's default
//!   caps workers at CPUs - 1). A `global_control(thread_stack_size)` lives with the arena:
//!   it sizes the stacks of the workers oneTBB *starts*. oneTBB fixes its workers' stack size
//!   when its thread pool starts (the first arena of the process, or the first after every
//!   arena and every thread that used oneTBB has gone), so in practice the first arena's stack
//!   size is the process's.
//! * [`join`]: one `task_group` per join: `b` is run on it (spawned onto the calling thread's
//!   deque, stealable), `a` runs inline, then `wait` (which runs tasks meanwhile). Serially
//!   (one thread) `b` runs only at the `wait`: **`a` before `b`**.
//! * [`scope`]: one heap `task_group`; [`TbbScope::spawn`] is `run` on it, the end of the
//!   scope its `wait`. Serially the spawned tasks run at the scope's end, **newest first**
//!   (oneTBB's owner takes its own deque LIFO): not in spawn order, and not at their creation.
//! * [`TbbArena::observe`]: a `task_scheduler_observer` bound to the arena; its
//!   `on_scheduler_entry` calls the Rust callback with the thread's slot, on every entry of a
//!   thread into the arena (workers leave an arena without work and enter it again, so one
//!   thread is seen many times; the external thread of an `execute` is seen too).
//!
//! `join` and `scope` use the arena of the calling thread: called inside
//! [`TbbArena::execute`] they run on its threads; called elsewhere, on oneTBB's implicit arena
//! of the calling thread (correct, but not the arena's P).

use crate::cabi::{PanicSlot, Slot, unwrap_outcome};
use crate::config::THREAD_STACK_BYTES;
use std::ffi::{c_int, c_void};
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::ptr::NonNull;

pub use crate::cabi::SbTask;

/// An observer callback across the C ABI: the context and the entering thread's slot.
pub type SbObserveFn = unsafe extern "C" fn(ctx: *mut c_void, thread_index: c_int);

// The raw C ABI of shim/tbb.cpp. Every function is `noexcept` on the C++ side.
unsafe extern "C" {
    /// A `task_arena(threads, 1)` with a `thread_stack_size` control of `stack_bytes`; null if
    /// `threads < 1` or on failure.
    pub fn sb_tbb_arena_new(threads: c_int, stack_bytes: usize) -> *mut c_void;
    /// Stops the arena's observer and frees the arena; nothing may run in it.
    pub fn sb_tbb_arena_free(arena: *mut c_void);
    /// Runs `task(ctx)` in the arena (`task_arena::execute`); returns when it has returned.
    pub fn sb_tbb_arena_execute(arena: *mut c_void, task: SbTask, ctx: *mut c_void);
    /// Calls `f(ctx, slot)` on every entry of a thread into the arena (replacing a previous
    /// observer); 0, or -1 on failure.
    pub fn sb_tbb_observe(arena: *mut c_void, f: SbObserveFn, ctx: *mut c_void) -> c_int;
    /// Stops the arena's observer, waiting for callbacks in flight.
    pub fn sb_tbb_unobserve(arena: *mut c_void);
    /// `task_arena::max_concurrency()`.
    pub fn sb_tbb_max_concurrency(arena: *mut c_void) -> c_int;
    /// `this_task_arena::current_thread_index()`, or -1 outside any arena.
    pub fn sb_tbb_current_index() -> c_int;
    /// One `task_group`: `b` run on it, `a` inline, `wait`.
    pub fn sb_tbb_join(a: SbTask, actx: *mut c_void, b: SbTask, bctx: *mut c_void);
    /// A heap `task_group`; null on failure.
    pub fn sb_tbb_group_new() -> *mut c_void;
    /// `task_group::run(task(ctx))`.
    pub fn sb_tbb_group_run(group: *mut c_void, task: SbTask, ctx: *mut c_void);
    /// `task_group::wait()`.
    pub fn sb_tbb_group_wait(group: *mut c_void);
    /// Waits for the group and frees it.
    pub fn sb_tbb_group_free(group: *mut c_void);
    /// fib(n) in the arena, written directly in C++ on `task_group` (no Rust in the loop).
    pub fn sb_tbb_fib_native(arena: *mut c_void, n: u64) -> u64;
}

/// Runs `a` and `b`, possibly in parallel, and returns both results: one oneTBB `task_group`,
/// `b` spawned on it, `a` inline, `wait`. Serially `a` runs before `b`. Both have finished
/// when `join` returns; a panic of either is re-raised then (`a`'s first).
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    // SAFETY: `sb_tbb_join` returns after the `task_group`'s wait, when both tasks have returned.
    unsafe { crate::cabi::join(sb_tbb_join, a, b) }
}

/// A spawned closure on the heap, with its scope.
struct Spawned<'scope, F> {
    f: F,
    scope: *const TbbScope<'scope>,
}

/// Runs a spawned closure with its scope and frees its box.
///
/// # Safety
/// `ctx` is a `Box<Spawned<'scope, F>>` from [`Box::into_raw`], run once, whose scope outlives
/// this call.
unsafe extern "C" fn run_spawned<'scope, F: FnOnce(&TbbScope<'scope>)>(ctx: *mut c_void) {
    // SAFETY: the caller's contract: the box is ours, taken back once.
    let job = unsafe { Box::from_raw(ctx.cast::<Spawned<'scope, F>>()) };
    let Spawned { f, scope } = *job;
    // SAFETY: the caller's contract: the scope waits for its tasks, so it outlives them.
    let scope = unsafe { &*scope };
    if let Err(p) = catch_unwind(AssertUnwindSafe(|| f(scope))) {
        scope.panics.record(p);
    }
}

/// A scope of [`scope`]: a oneTBB `task_group` whose tasks may borrow what outlives `'scope`.
pub struct TbbScope<'scope> {
    /// Owned by the [`Group`] of [`scope`], which outlives this.
    group: NonNull<c_void>,
    panics: PanicSlot,
    scope: PhantomData<&'scope mut &'scope ()>,
}

// SAFETY: `task_group::run` may be called from any thread (tasks of the group included), and
// the panic slot is a mutex; the group itself is only freed by the scope's owner, after the
// wait.
unsafe impl Sync for TbbScope<'_> {}

impl<'scope> TbbScope<'scope> {
    /// Spawns `f` on the scope's `task_group` (boxed; the box is freed when it runs); `f` gets
    /// the scope, to spawn more. The scope waits for it before it closes; a panic of `f` is
    /// re-raised by [`scope`].
    pub fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&TbbScope<'scope>) + Send + 'scope,
    {
        let job = Box::into_raw(Box::new(Spawned {
            f,
            scope: self as *const TbbScope<'scope>,
        }));
        // SAFETY: the group is live until the scope's owner frees it, after waiting for every
        // task run on it; so the box (taken back once by its trampoline) and the scope outlive
        // the task, and so does everything `f` borrows (`'scope`, which outlives the call of
        // `scope`).
        unsafe { sb_tbb_group_run(self.group.as_ptr(), run_spawned::<F>, job.cast()) };
    }
}

/// Owns a heap `task_group`: frees it (after a wait) when dropped.
struct Group(NonNull<c_void>);

impl Drop for Group {
    fn drop(&mut self) {
        // SAFETY: the group came from `sb_tbb_group_new` and is freed once, here; the free
        // waits first (a no-op after the scope's own wait).
        unsafe { sb_tbb_group_free(self.0.as_ptr()) };
    }
}

/// Opens a scope: `f` may spawn tasks ([`TbbScope::spawn`]) that borrow anything outliving
/// the call. `scope` returns, or unwinds, only after every spawned task has finished (the
/// `task_group`'s `wait`). A panic of `f` (first) or of a task is re-raised then.
///
/// Serially the spawned tasks run at the wait, newest first (oneTBB's order).
pub fn scope<'scope, F, R>(f: F) -> R
where
    F: FnOnce(&TbbScope<'scope>) -> R,
{
    // SAFETY: no precondition; null means out of memory.
    let group = Group(NonNull::new(unsafe { sb_tbb_group_new() }).expect("oneTBB: no task_group"));
    let s = TbbScope {
        group: group.0,
        panics: PanicSlot::new(),
        scope: PhantomData,
    };
    // The body's panic is caught, so the wait below is always reached.
    let body = catch_unwind(AssertUnwindSafe(|| f(&s)));
    // SAFETY: the group is live; the wait returns after every task run on it has finished.
    unsafe { sb_tbb_group_wait(group.0.as_ptr()) };
    let task_panic = s.panics.take();
    drop(group);
    match (body, task_panic) {
        (Err(p), _) | (Ok(_), Some(p)) => resume_unwind(p),
        (Ok(v), None) => v,
    }
}

/// A thread observer's callback, boxed twice so that C gets a thin pointer.
type ObserverFn = Box<dyn Fn(usize) + Send + Sync + 'static>;

/// Calls the observer callback behind `ctx`; a panic there aborts the process (it cannot be
/// carried anywhere).
///
/// # Safety
/// `ctx` points to a live [`ObserverFn`].
unsafe extern "C" fn run_observer(ctx: *mut c_void, index: c_int) {
    // SAFETY: the caller's contract: the arena keeps the box until observation has stopped.
    let f = unsafe { &*ctx.cast::<ObserverFn>() };
    let index = usize::try_from(index).unwrap_or(usize::MAX);
    if catch_unwind(AssertUnwindSafe(|| f(index))).is_err() {
        eprintln!("stealbench: a oneTBB thread observer panicked; aborting");
        std::process::abort();
    }
}

/// A oneTBB `task_arena` of exactly `threads` threads, the caller of [`TbbArena::execute`]
/// counting as one of them.
pub struct TbbArena {
    raw: NonNull<c_void>,
    threads: usize,
    // Dropped after the arena (the `Drop` impl runs first), whose free stops observation.
    observer: Option<Box<ObserverFn>>,
}

// SAFETY: a `task_arena` may be used (`execute`) and destroyed from any thread; the observer
// callback is `Send + Sync`.
unsafe impl Send for TbbArena {}
// SAFETY: `task_arena::execute` may be called from several threads at once.
unsafe impl Sync for TbbArena {}

impl TbbArena {
    /// An arena of `threads` threads whose workers get the stack of every library runtime's
    /// thread ([`THREAD_STACK_BYTES`]; see the module doc for when that takes).
    pub fn new(threads: usize) -> Result<Self, String> {
        Self::with_stack(threads, THREAD_STACK_BYTES)
    }

    /// An arena of `threads` threads whose workers get `stack_bytes` of stack.
    pub fn with_stack(threads: usize, stack_bytes: usize) -> Result<Self, String> {
        let t = c_int::try_from(threads)
            .ok()
            .filter(|&t| t >= 1)
            .ok_or_else(|| format!("oneTBB: {threads} threads: need 1 ..= {}", c_int::MAX))?;
        // SAFETY: no precondition; null on failure.
        let raw = NonNull::new(unsafe { sb_tbb_arena_new(t, stack_bytes) })
            .ok_or_else(|| format!("oneTBB: the arena of {threads} threads was not made"))?;
        Ok(TbbArena {
            raw,
            threads,
            observer: None,
        })
    }

    /// The number of threads asked for.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The arena's maximum concurrency as oneTBB reports it (`threads`).
    pub fn max_concurrency(&self) -> usize {
        // SAFETY: the arena is live.
        let c = unsafe { sb_tbb_max_concurrency(self.raw.as_ptr()) };
        usize::try_from(c).unwrap_or(0)
    }

    /// Calls `f(slot)` on every entry of a thread into the arena, `slot` being the thread's
    /// index in it (`0..threads`), on that thread: to count the threads taking part, or to pin
    /// them (`sched_setaffinity(0, ..)` acts on the calling thread). A thread that leaves the
    /// arena (no work) and comes back is seen again. Replaces the previous callback. Install
    /// it before the first [`TbbArena::execute`]: a thread already in the arena is seen only
    /// before its next stolen task. A panic in `f` aborts the process.
    pub fn observe<F>(&mut self, f: F)
    where
        F: Fn(usize) + Send + Sync + 'static,
    {
        let b: Box<ObserverFn> = Box::new(Box::new(f));
        let ctx = (&*b as *const ObserverFn).cast_mut().cast::<c_void>();
        // SAFETY: the arena is live; the box is kept in `self` until the observer is replaced
        // or the arena freed, both of which stop observation (waiting for callbacks in
        // flight) before the box goes.
        let rc = unsafe { sb_tbb_observe(self.raw.as_ptr(), run_observer, ctx) };
        assert_eq!(rc, 0, "oneTBB: the observer was not made");
        // The previous observer, if any, was stopped by `sb_tbb_observe`.
        self.observer = Some(b);
    }

    /// Stops the observer, if any (waiting for callbacks in flight).
    pub fn unobserve(&mut self) {
        // SAFETY: the arena is live.
        unsafe { sb_tbb_unobserve(self.raw.as_ptr()) };
        self.observer = None;
    }

    /// Runs `f` in the arena (`task_arena::execute`) and returns its value; a panic of `f` is
    /// re-raised here. The calling thread takes the arena's reserved slot and runs `f`; if no
    /// slot is free, oneTBB hands `f` to a thread of the arena and the caller blocks.
    pub fn execute<F, R>(&self, f: F) -> R
    where
        F: FnOnce() -> R + Send,
        R: Send,
    {
        let mut slot = Slot::new(f);
        let (task, ctx) = slot.raw();
        // SAFETY: the arena is live; `execute` returns after the task has returned (it never
        // unwinds), so the slot outlives the task, which alone touches it meanwhile.
        unsafe { sb_tbb_arena_execute(self.raw.as_ptr(), task, ctx) };
        unwrap_outcome(slot.outcome())
    }

    /// fib(`n`) in the arena, written directly in C++ on oneTBB with the pattern of [`join`]
    /// (no Rust in the loop): the baseline of the boundary's cost.
    pub fn fib_native(&self, n: u64) -> u64 {
        // SAFETY: the arena is live.
        unsafe { sb_tbb_fib_native(self.raw.as_ptr(), n) }
    }
}

impl Drop for TbbArena {
    fn drop(&mut self) {
        // SAFETY: made by `sb_tbb_arena_new`, freed once; no `execute` is running (`&mut`).
        unsafe { sb_tbb_arena_free(self.raw.as_ptr()) };
    }
}

/// The calling thread's slot in its current oneTBB arena, if it is in one.
pub fn current_thread_index() -> Option<usize> {
    // SAFETY: no precondition.
    usize::try_from(unsafe { sb_tbb_current_index() }).ok()
}
