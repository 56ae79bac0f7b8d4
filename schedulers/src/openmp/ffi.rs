//! The C ABI of `shim/openmp.cpp` and its safe wrappers: LLVM's OpenMP runtime (libomp)'s
//! parallel regions and untied tasks as Rust calls.
//!
//! # How a task crosses the boundary
//!
//! As in `tbb::ffi` (feature `tbb`): a task is a C function pointer and a context pointer
//! ([`SbTask`], `*mut c_void`); a Rust closure crosses as a monomorphised `extern "C"`
//! trampoline and a pointer to its slot (on the caller's stack for [`run`] and [`join`], in a
//! box freed by the trampoline for [`OmpScope::spawn`]). The trampoline runs the closure under
//! [`catch_unwind`] and stores its panic payload; no panic unwinds into C++. After the wait
//! the wrapper re-raises the stored panic with [`resume_unwind`], payload unchanged (`a`'s
//! before `b`'s in a join, the body's before a spawned task's in a scope, the root's before
//! an entry callback's in a run).
//!
//! # What each call is in OpenMP
//!
//! * [`run`]: one `#pragma omp parallel num_threads(P)` region (after `omp_set_dynamic(0)`, so
//!   the team is exactly P unless the call is nested in another region), the root in a
//!   `#pragma omp single`; the other threads wait at the single's implicit barrier, running the
//!   region's tasks. It returns the team size seen inside the region with the root's value.
//!   [`run_observed`] also has every thread of the team call a Rust callback with its thread
//!   number on entering the region.
//! * [`join`]: `a` as a `#pragma omp task untied`, `b` inline, `#pragma omp taskwait`. The
//!   task is `a` because libomp runs a task *at its creation* whenever it does not defer it
//!   (a team of one thread, which libomp serializes; a full deque): spawning `a` keeps the
//!   serial order **`a` then `b`**. In a team of several threads `a` is deferred (stealable)
//!   and `b` runs first on the calling thread.
//! * [`scope`]: the body in a `#pragma omp taskgroup`; [`OmpScope::spawn`] is a
//!   `#pragma omp task untied`. The taskgroup waits for every task created in it and their
//!   descendants (so a spawned task may spawn more on the scope); a count of the scope's
//!   unfinished tasks covers spawns from threads outside the taskgroup (the scope then yields,
//!   `#pragma omp taskyield`, until it is zero). Serially (a team of one) every spawned task runs
//!   to completion at its creation: **spawn order, eagerly**, the papers' serial order.
//!
//! # One runtime per process
//!
//! libomp keeps one global thread pool and reads its settings from the environment when it
//! initialises, at the first OpenMP call of the process. What the Rust side must know:
//!
//! * Every region is forked by one long-lived thread of this module, `openmp-root`
//!   (started at the first call, stack [`ROOT_STACK_BYTES`]): [`run`] hands its closure over
//!   and blocks until the region has ended. libomp 14 corrupts its task allocator
//!   (`kmp_alloc.cpp` assertion, SIGSEGV, SIGBUS) when regions with tasks are forked by
//!   short-lived threads one after another (reproduced in plain C++: 50 `std::thread`s in
//!   turn, each forking a 2-thread region that runs fib(20) with tasks, crash almost every
//!   time; a test harness does exactly that). So the root of a run never runs on the caller,
//!   runs are serialised process-wide, and the per-thread settings (blocktime, dynamic
//!   adjustment) are the root thread's: [`set_blocktime`] sets them there.
//! * A [`run`] opens one parallel region; nothing is held between runs by this module, but
//!   libomp's worker threads persist after the region (in the root thread's "hot team", then
//!   in libomp's pool) and are reused by the next region.
//! * Idle policy: a thread out of work spins for the *blocktime*, then sleeps. libomp's
//!   default is 200 ms of spinning; `KMP_BLOCKTIME=0` (or `OMP_WAIT_POLICY=passive`) sleeps
//!   at once (lazy); `OMP_WAIT_POLICY=active` spins forever (busy, blocktime "infinite"); these
//!   are read at init. At run time [`set_blocktime`] (libomp's `kmp_set_blocktime`) sets it for
//!   the regions the root thread forks from then on (measured: after a region of 2
//!   threads, the idle worker burns ~ min(blocktime, idle time) of CPU; 0 ms with 0). It has
//!   no effect under `OMP_WAIT_POLICY=active`, whose blocktime stays infinite.
//! * Worker stack size: `OMP_STACKSIZE` / `KMP_STACKSIZE` at init, or [`set_stack_size`]
//!   (`kmp_set_stacksize_s`) before the process's first parallel region; libomp ignores it
//!   afterwards (the function reports the size in force). libomp's default is 4 MiB.
//! * Pinning: libomp binds threads only through `OMP_PROC_BIND` / `OMP_PLACES` /
//!   `KMP_AFFINITY`, read at init; with none set it binds nothing. A runtime that wants to pin
//!   can do it itself from [`run_observed`]'s entry callback (`sched_setaffinity(0, ..)` on
//!   the entering thread).
//! * [`join`], [`scope`] and [`OmpScope::spawn`] outside a region run in the calling
//!   thread's implicit team of one: tasks run at once, serially (libomp registers the calling
//!   thread as one of its roots). Meant for use inside [`run`].

use crate::cabi::{PanicSlot, Slot, unwrap_outcome};
use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{OnceLock, mpsc};

pub use crate::cabi::SbTask;

/// An entry callback across the C ABI: the context and the entering thread's number.
pub type SbObserveFn = unsafe extern "C" fn(ctx: *mut c_void, thread_num: c_int);

// The raw C ABI of shim/openmp.cpp. Every function is `noexcept` on the C++ side.
unsafe extern "C" {
    /// `omp_set_dynamic(0)`; one `parallel num_threads(threads)` region running `root(ctx)`
    /// in a `single`; returns `omp_get_num_threads()` as seen in the region.
    pub fn sb_omp_run(threads: c_int, root: SbTask, ctx: *mut c_void) -> c_int;
    /// As `sb_omp_run`, and each thread of the team calls `entry(ectx, thread_num)` first.
    pub fn sb_omp_run_observed(
        threads: c_int,
        entry: SbObserveFn,
        ectx: *mut c_void,
        root: SbTask,
        ctx: *mut c_void,
    ) -> c_int;
    /// `a` as an untied task, `b` inline, taskwait.
    pub fn sb_omp_join(a: SbTask, actx: *mut c_void, b: SbTask, bctx: *mut c_void);
    /// `task(ctx)` as an untied task (a child of the current task).
    pub fn sb_omp_spawn(task: SbTask, ctx: *mut c_void);
    /// `#pragma omp taskwait`: the current task's children.
    pub fn sb_omp_taskwait();
    /// `#pragma omp taskyield`.
    pub fn sb_omp_taskyield();
    /// `body(ctx)` in a `#pragma omp taskgroup` (waits for all tasks created in it, and
    /// their descendants).
    pub fn sb_omp_taskgroup(body: SbTask, ctx: *mut c_void);
    /// `omp_get_thread_num()`.
    pub fn sb_omp_thread_num() -> c_int;
    /// `omp_get_num_threads()`.
    pub fn sb_omp_num_threads() -> c_int;
    /// `omp_in_parallel()`.
    pub fn sb_omp_in_parallel() -> c_int;
    /// `omp_set_dynamic(flag)` for the calling thread.
    pub fn sb_omp_set_dynamic(flag: c_int);
    /// `omp_get_max_threads()`.
    pub fn sb_omp_max_threads() -> c_int;
    /// `kmp_set_blocktime(ms)`.
    pub fn sb_omp_set_blocktime(ms: c_int);
    /// `kmp_get_blocktime()`.
    pub fn sb_omp_get_blocktime() -> c_int;
    /// `kmp_set_stacksize_s(bytes)`, then the size in force.
    pub fn sb_omp_set_stacksize(bytes: usize) -> usize;
    /// `kmp_get_stacksize_s()`.
    pub fn sb_omp_get_stacksize() -> usize;
    /// fib(n) in a region of `threads` threads, written directly in C++ with untied tasks (no
    /// Rust in the loop).
    pub fn sb_omp_fib_native(threads: c_int, n: u64) -> u64;
}

/// `threads` as a team size for C.
fn team_size(threads: usize) -> c_int {
    c_int::try_from(threads)
        .ok()
        .filter(|&t| t >= 1)
        .unwrap_or_else(|| panic!("OpenMP: {threads} threads: need 1 ..= {}", c_int::MAX))
}

thread_local! {
    /// Whether this thread is one of libomp's: the root thread of this module, or a thread
    /// that has entered one of its regions (libomp's workers run nothing else).
    static OMP_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// The stack of the root thread that forks every region: that of every library runtime's
/// thread here (the root usually runs the `single`, so the top of every computation).
pub const ROOT_STACK_BYTES: usize = crate::config::THREAD_STACK_BYTES;

/// A job for the root thread, its lifetime erased by [`on_root`].
type Job = Box<dyn FnOnce() + Send + 'static>;

/// The queue of the root thread, started at the first use.
fn root_queue() -> &'static mpsc::Sender<Job> {
    static ROOT: OnceLock<mpsc::Sender<Job>> = OnceLock::new();
    ROOT.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("openmp-root".into())
            .stack_size(ROOT_STACK_BYTES)
            .spawn(move || {
                OMP_THREAD.set(true);
                // Each job catches its own panics (`on_root`), so this loop never unwinds.
                for job in rx {
                    job();
                }
            })
            .expect("OpenMP: could not start the root thread");
        tx
    })
}

/// Runs `f` on the root thread of this module and returns its value (its panic re-raised
/// here); runs it in place on a thread of libomp's (the root itself, a thread of a region),
/// where handing it over could wait for the caller's own region.
///
/// Why one root: libomp 14 corrupts its task allocator (kmp_alloc.cpp assertion, SIGSEGV,
/// SIGBUS) when parallel regions with tasks are forked by short-lived threads one after
/// another, as a test harness does; forking every region from one long-lived thread avoids
/// it, and serialises runs process-wide.
fn on_root<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    if OMP_THREAD.get() {
        return f();
    }
    let (done_tx, done_rx) = mpsc::sync_channel::<std::thread::Result<R>>(1);
    let job = move || {
        let out = catch_unwind(AssertUnwindSafe(f));
        // The receiver waits below; should it be gone, the outcome is dropped here.
        let _ = done_tx.send(out);
    };
    let job: Box<dyn FnOnce() + Send + '_> = Box::new(job);
    // SAFETY: only the lifetime is erased. This function returns (or unwinds) only after the
    // job has run: `recv` answers once the job has sent its outcome, by which time `f`, the
    // one part that may borrow from the caller, has been consumed (its value and captures
    // moved or dropped); or, should the root thread be gone without running it, the process
    // aborts. If `send` fails, the job is dropped here, unrun.
    let job: Job = unsafe { std::mem::transmute::<Box<dyn FnOnce() + Send + '_>, Job>(job) };
    if root_queue().send(job).is_err() {
        panic!("OpenMP: the root thread is gone");
    }
    match done_rx.recv() {
        Ok(out) => unwrap_outcome(out),
        Err(_) => {
            eprintln!("stealbench: the OpenMP root thread dropped a job unrun; aborting");
            std::process::abort();
        }
    }
}

/// What the entry trampoline of a region gets.
struct Entry<'a> {
    user: Option<&'a (dyn Fn(usize) + Sync)>,
    panics: PanicSlot,
}

/// Marks the entering thread as libomp's and calls the user's entry callback, if any,
/// recording its panic.
///
/// # Safety
/// `ctx` points to a live `Entry`.
unsafe extern "C" fn run_entry(ctx: *mut c_void, thread_num: c_int) {
    OMP_THREAD.set(true);
    // SAFETY: the caller's contract; shared access only (the callback is `Sync`, the slot a
    // mutex).
    let entry = unsafe { &*ctx.cast::<Entry<'_>>() };
    if let Some(f) = entry.user {
        let n = usize::try_from(thread_num).unwrap_or(usize::MAX);
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| f(n))) {
            entry.panics.record(p);
        }
    }
}

/// One region of `t` threads on the calling thread: the root's value or panic (first), the
/// entry's panic, the team size.
fn region<F, R>(t: c_int, user: Option<&(dyn Fn(usize) + Sync)>, f: F) -> (R, usize)
where
    F: FnOnce() -> R + Send,
    R: Send,
{
    let entry = Entry {
        user,
        panics: PanicSlot::new(),
    };
    let ectx = (&entry as *const Entry<'_>).cast_mut().cast::<c_void>();
    let mut slot = Slot::new(f);
    let (task, ctx) = slot.raw();
    // SAFETY: the region ends (every thread past the single's barrier, every task done) before
    // `sb_omp_run_observed` returns, and neither callback unwinds; so the slot and the entry
    // outlive their users. The root task alone touches its slot; the entry is only read.
    // `f` is `Send`: any thread of the team may run the single.
    let team = unsafe { sb_omp_run_observed(t, run_entry, ectx, task, ctx) };
    let v = unwrap_outcome(slot.outcome());
    if let Some(p) = entry.panics.take() {
        resume_unwind(p);
    }
    (v, usize::try_from(team).unwrap_or(0))
}

/// Runs `f` as the root of one parallel region of `threads` threads (in a `single`) and
/// returns its value and the team size seen inside the region (`threads`, unless the call is
/// nested in another region, where libomp gives 1 by default). The region is forked by this
/// module's root thread (see [`ROOT_STACK_BYTES`] and the module doc), the caller blocking
/// meanwhile; called from a thread of libomp's, it is forked in place (nested). A panic of
/// `f` is re-raised after the region. Panics if `threads` is 0 or above `c_int::MAX`.
pub fn run<F, R>(threads: usize, f: F) -> (R, usize)
where
    F: FnOnce() -> R + Send,
    R: Send,
{
    let t = team_size(threads);
    on_root(move || region(t, None, f))
}

/// As [`run`], and every thread of the team first calls `on_entry(thread_num)` on entering
/// the region, on that thread, before it runs any task: to count the threads, or to pin them
/// (`sched_setaffinity(0, ..)` acts on the calling thread; libomp binds nothing itself unless
/// `OMP_PROC_BIND` / `OMP_PLACES` say so). A panic of `f` (first) or of `on_entry` is
/// re-raised after the region.
pub fn run_observed<E, F, R>(threads: usize, on_entry: E, f: F) -> (R, usize)
where
    E: Fn(usize) + Sync,
    F: FnOnce() -> R + Send,
    R: Send,
{
    let t = team_size(threads);
    let e: &(dyn Fn(usize) + Sync) = &on_entry;
    on_root(move || region(t, Some(e), f))
}

/// Runs `a` and `b`, possibly in parallel, and returns both results: `a` as an untied task,
/// `b` inline, taskwait. Serially `a` runs before `b` (see the module doc). Both have
/// finished when `join` returns; a panic of either is re-raised then (`a`'s first).
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    // SAFETY: `sb_omp_join` returns after its taskwait, when both tasks have returned.
    unsafe { crate::cabi::join(sb_omp_join, a, b) }
}

/// A spawned closure on the heap, with its scope.
struct Spawned<'scope, F> {
    f: F,
    scope: *const OmpScope<'scope>,
}

/// What the tasks of a scope share with it.
struct ScopeState {
    panics: PanicSlot,
    /// Spawned and not yet finished.
    pending: AtomicUsize,
}

/// Runs a spawned closure with its scope, frees its box and counts it finished.
///
/// # Safety
/// `ctx` is a `Box<Spawned<'scope, F>>` from [`Box::into_raw`], run once, whose scope stays
/// live until its `pending` count has been decremented.
unsafe extern "C" fn run_spawned<'scope, F: FnOnce(&OmpScope<'scope>)>(ctx: *mut c_void) {
    // SAFETY: the caller's contract: the box is ours, taken back once.
    let job = unsafe { Box::from_raw(ctx.cast::<Spawned<'scope, F>>()) };
    let Spawned { f, scope } = *job;
    // SAFETY: the caller's contract: the scope waits for `pending` to reach zero before it
    // goes; the decrement below is this task's last access.
    let scope = unsafe { &*scope };
    let outcome = catch_unwind(AssertUnwindSafe(|| f(scope)));
    let state = &scope.state;
    if let Err(p) = outcome {
        state.panics.record(p);
    }
    state.pending.fetch_sub(1, Ordering::Release);
}

/// A scope of [`scope`]: untied OpenMP tasks that may borrow what outlives `'scope`.
pub struct OmpScope<'scope> {
    state: ScopeState,
    scope: PhantomData<&'scope mut &'scope ()>,
}

impl<'scope> OmpScope<'scope> {
    /// Spawns `f` as an untied task (boxed; the box is freed when it runs); `f` gets the scope,
    /// to spawn more. The scope waits for it before it closes; a panic of `f` is re-raised by
    /// [`scope`]. Serially (a team of one) `f` runs here, to completion, before `spawn`
    /// returns.
    pub fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&OmpScope<'scope>) + Send + 'scope,
    {
        self.state.pending.fetch_add(1, Ordering::Relaxed);
        let job = Box::into_raw(Box::new(Spawned {
            f,
            scope: self as *const OmpScope<'scope>,
        }));
        // SAFETY: the scope does not return before `pending` is zero again, i.e. before this
        // task has run (it is in the scope's taskgroup, or waited for by the count), so the
        // state, and everything `f` borrows (`'scope`), outlive it; the box is taken back once
        // by its trampoline.
        unsafe { sb_omp_spawn(run_spawned::<F>, job.cast()) };
    }
}

/// Opens a scope: `f` may spawn tasks ([`OmpScope::spawn`]) that borrow anything outliving
/// the call. The body runs in a taskgroup; `scope` returns, or unwinds, only after every
/// spawned task has finished. A panic of `f` (first) or of a task is re-raised then.
pub fn scope<'scope, F, R>(f: F) -> R
where
    F: FnOnce(&OmpScope<'scope>) -> R,
{
    let s = OmpScope {
        state: ScopeState {
            panics: PanicSlot::new(),
            pending: AtomicUsize::new(0),
        },
        scope: PhantomData,
    };
    let mut body = Slot::new(|| f(&s));
    let (task, ctx) = body.raw();
    // SAFETY: the body runs inline, inside the taskgroup, and never unwinds; the slot outlives
    // the call.
    unsafe { sb_omp_taskgroup(task, ctx) };
    // Tasks spawned from outside the taskgroup (another thread's spawn): wait for them too.
    while s.state.pending.load(Ordering::Acquire) != 0 {
        // SAFETY: no precondition: a task scheduling point.
        unsafe { sb_omp_taskyield() };
        std::hint::spin_loop();
    }
    let out = body.outcome();
    let task_panic = s.state.panics.take();
    match (out, task_panic) {
        (Err(p), _) | (Ok(_), Some(p)) => resume_unwind(p),
        (Ok(v), None) => v,
    }
}

/// The calling thread's number in its innermost team (0 outside a region).
pub fn thread_num() -> usize {
    // SAFETY: no precondition.
    usize::try_from(unsafe { sb_omp_thread_num() }).unwrap_or(0)
}

/// The size of the calling thread's innermost team (1 outside a region).
pub fn num_threads() -> usize {
    // SAFETY: no precondition.
    usize::try_from(unsafe { sb_omp_num_threads() }).unwrap_or(1)
}

/// Whether the calling thread is in an active parallel region.
pub fn in_parallel() -> bool {
    // SAFETY: no precondition.
    unsafe { sb_omp_in_parallel() != 0 }
}

/// Sets libomp's blocktime (ms a thread out of work spins before it sleeps) for the regions
/// [`run`] forks from now on (an ICV of the forking thread: set on the root thread); 0:
/// sleep at once. No effect under `OMP_WAIT_POLICY=active`.
pub fn set_blocktime(ms: u32) {
    let ms = c_int::try_from(ms).unwrap_or(c_int::MAX);
    // SAFETY: no precondition (libomp clamps the value to its range).
    on_root(move || unsafe { sb_omp_set_blocktime(ms) });
}

/// The blocktime in force for the regions [`run`] forks, in ms (`i32::MAX`: infinite, as
/// under `OMP_WAIT_POLICY=active`).
pub fn blocktime() -> i32 {
    // SAFETY: no precondition.
    on_root(|| unsafe { sb_omp_get_blocktime() })
}

/// Asks libomp for worker stacks of `bytes`; returns whether the size in force is now at
/// least that (libomp takes it only before the process's first parallel region; its default
/// is 4 MiB). The root thread's own stack is [`ROOT_STACK_BYTES`].
pub fn set_stack_size(bytes: usize) -> bool {
    // SAFETY: no precondition.
    on_root(move || unsafe { sb_omp_set_stacksize(bytes) } >= bytes)
}

/// The stack size of libomp's worker threads.
pub fn stack_size() -> usize {
    // SAFETY: no precondition.
    on_root(|| unsafe { sb_omp_get_stacksize() })
}

/// fib(`n`) in a region of `threads` threads forked by the root thread, written directly in
/// C++ with the pattern of [`join`] (no Rust in the loop): the baseline of the boundary's
/// cost.
pub fn fib_native(threads: usize, n: u64) -> u64 {
    let t = team_size(threads);
    // SAFETY: no precondition beyond a positive team size.
    on_root(move || unsafe { sb_omp_fib_native(t, n) })
}
