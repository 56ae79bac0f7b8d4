//! `tokio`: tokio's multi-thread runtime as the heap-allocated-task baseline, through the async
//! front-end: every fork is a `tokio::spawn`ed task.
//!
//! # What each operation is
//!
//! * [`AsyncForkJoin::run_async`] opens a scope (a state that lives for the process and is
//!   reused by later scopes: a counter of unfinished tasks, a "closed" flag, the first panic,
//!   a generation), spawns the root future as a task of the runtime
//!   (so with P = 1 a single worker thread does all the work), then **blocks the calling
//!   thread** on a condition variable until the root and every task spawned in the scope have
//!   finished. It must not be called from a worker of the same pool (it panics: it would block
//!   that worker). The worker handle is a reference to the state and the scope's generation,
//!   copied into each child with no reference count (see [`ScopeState`]); per fork, the one
//!   write to memory every worker shares is the scope's counter, which lets a task borrow
//!   from `run_async`'s caller.
//! * Every fork is a task of the runtime: [`AsyncWorker::join`] spawns its first child `a`
//!   (boxed, its `'scope` lifetime erased, handed to `tokio::spawn`), then awaits the second
//!   child `b` in a box of its own, then awaits `a`'s handle. A spawn never runs the child
//!   inline: spawned from a worker, the task goes to that worker's local queue (tokio puts the
//!   newest task into its LIFO slot), the parent goes on, and the child runs when a worker
//!   picks it up (another worker may steal it at once; on one worker, only once the parent
//!   returns `Pending` or finishes). So with P = 1, `b` runs up to its first pending await
//!   before `a` starts, and in fib `sf` on one worker nearly every await of a child finds it
//!   not yet run (`touch_waits` close to `tasks_spawned`). The child's output travels through
//!   a `tokio::sync::oneshot` channel to the [`TokioHandle`] (the task's own output must be
//!   `'static`, the value is only `'scope`). Per fork: one box for the future, tokio's task
//!   cell, one oneshot cell.
//! * [`AsyncWorker::fork_reduce`] spawns every child but the last as `join` spawns `a`,
//!   awaits the last in a box, then awaits the handles in item order, reducing as it goes: one
//!   `Vec` of handles a scope besides the per-fork costs.
//! * [`AsyncWorker::call`] boxes the child's future and awaits it: every frame of a recursive
//!   computation lives on the heap, one allocation per call.
//! * [`AsyncWorker::spawn`] is the fork of `join` without the rest: the handle is returned at
//!   once. [`AsyncWorker::spawn_shared`] is the same with a [`TokioShared`] result: an `Arc`
//!   holding a `OnceLock` and a `tokio::sync::Notify`; [`AsyncShared::get`] returns at once
//!   when the value is there and otherwise waits for the notification (the task yields to
//!   tokio; no thread blocks).
//! * [`AsyncWorker::latency_future`] makes the I/O future inside the task and awaits it: the
//!   runtime is built with its timer and reactor (`enable_all`), so a wait on either suspends
//!   only the task, and the worker runs other tasks meanwhile (the async baseline of
//!   latency hiding; the fiber runtimes' closure front-end hides latency with an I/O thread).
//!
//! # Panics
//!
//! Each task runs inside `catch_unwind`; the first panic of the scope is kept and re-raised
//! from `run_async` once every task has finished; the pool stays usable. Awaiting a handle (or
//! a shared handle) whose task panicked panics too (a `String` payload saying so), which
//! unwinds the awaiting task, and so on up to the root: nothing waits forever. The original
//! panic is recorded before any awaiter can see the failure, so it is the one re-raised.
//!
//! # Statistics
//!
//! Tokio counts steals only in `tokio_unstable` builds, so `steals` and `steal_attempts` are
//! `None` (`n/a`). Extras: `tasks_spawned` (every task, the root included) and `touch_waits`
//! (awaits of a handle or a shared handle that found the value not ready).
//!
//! # Configuration
//!
//! P worker threads named `stealbench-tokio-<i>`, with a [`THREAD_STACK_BYTES`] stack (deep
//! chains of nested awaits poll recursively), pinned by
//! [`Pinning`](crate::config::Pinning) in `on_thread_start`. No I/O or timer driver. Victim
//! selection and idling are tokio's own: any victim policy but `default` and the `busy` idle
//! policy are rejected with [`StartError::Unsupported`], as is every other setting its
//! [`Scheduler::CAPABILITIES`] lack (stack sizes, `futures=nostack`, a forced schedule, a
//! placement).

use crate::api::{AsyncForkJoin, AsyncShared, AsyncWorker, Scheduler, StartError};
use crate::config::{Capabilities, PoolConfig};
use crate::stats::{PerWorker, Stats};
use crate::topology::{Topology, pin_current_thread};
use ::tokio::runtime::Runtime;
use ::tokio::sync::{Notify, oneshot};
use std::any::Any;
use std::cell::OnceCell;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::config::THREAD_STACK_BYTES;

/// How long `start` waits for the worker threads to come up.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The payload of the panic raised by awaiting a handle whose task panicked.
const AWAITED_PANIC: &str = "a task awaited through a tokio handle panicked";

/// Pool identities, to recognise a pool's own workers.
static NEXT_POOL_ID: AtomicU64 = AtomicU64::new(0);

/// The pool's counters, one cell per worker.
#[derive(Debug)]
struct Counters {
    /// Tasks spawned by each worker.
    tasks_spawned: PerWorker,
    /// Root tasks, spawned by `run_async`'s callers.
    roots: AtomicU64,
    touch_waits: PerWorker,
}

/// What a worker thread knows about itself.
struct WorkerContext {
    pool: u64,
    index: usize,
    counters: Arc<Counters>,
}

thread_local! {
    /// Set on the worker threads of a [`TokioPool`].
    static CONTEXT: OnceCell<WorkerContext> = const { OnceCell::new() };
}

/// The current thread's worker index in pool `pool`, if it is one of its workers.
fn worker_index_in(pool: u64) -> Option<usize> {
    CONTEXT
        .try_with(|c| c.get().filter(|w| w.pool == pool).map(|w| w.index))
        .ok()
        .flatten()
}

/// Counts a touch that had to wait, if the current thread is a worker: in its pool's cell of
/// that worker, which no other thread writes.
fn count_touch_wait() {
    let _ = CONTEXT.try_with(|c| {
        if let Some(w) = c.get() {
            w.counters.touch_waits.add_single_writer(w.index, 1);
        }
    });
}

/// Counts a task spawned by a worker, as [`count_touch_wait`] counts a wait (a root task is
/// spawned by `run_async`'s caller and counted apart).
fn count_spawn() {
    let _ = CONTEXT.try_with(|c| {
        if let Some(w) = c.get() {
            w.counters.tasks_spawned.add_single_writer(w.index, 1);
        }
    });
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A tokio multi-thread runtime of P workers.
pub struct TokioPool {
    runtime: Runtime,
    workers: usize,
    id: u64,
    counters: Arc<Counters>,
}

impl fmt::Debug for TokioPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokioPool")
            .field("workers", &self.workers)
            .finish_non_exhaustive()
    }
}

/// Worker start-up bookkeeping shared with `on_thread_start`.
#[derive(Default)]
struct Startup {
    started: usize,
    errors: Vec<String>,
}

/// Whether the OS gives `p` threads of [`THREAD_STACK_BYTES`] at once: starts them, each
/// waiting until all are started (or one was refused), then lets them end. An `Err` says how
/// many it gave and why it refused the next.
fn threads_available(p: usize) -> Result<(), StartError> {
    let (release, wait) = std::sync::mpsc::channel::<()>();
    let wait = Arc::new(Mutex::new(wait));
    let mut started = Vec::with_capacity(p);
    let mut refused = None;
    for _ in 0..p {
        let wait = Arc::clone(&wait);
        let spawned = std::thread::Builder::new()
            .stack_size(THREAD_STACK_BYTES)
            .spawn(move || {
                // Returns when the sender is dropped: every thread is let go at once.
                let _ = lock(&wait).recv();
            });
        match spawned {
            Ok(h) => started.push(h),
            Err(e) => {
                refused = Some(e);
                break;
            }
        }
    }
    drop(release);
    let n = started.len();
    for h in started {
        let _ = h.join();
    }
    match refused {
        None => Ok(()),
        Some(e) => Err(StartError::Os(format!(
            "tokio needs {p} worker threads; the OS gave {n}: {e}"
        ))),
    }
}

impl Scheduler for TokioPool {
    const NAME: &'static str = "tokio";

    /// Its own policies only (it chooses its victims and puts idle workers to sleep).
    const CAPABILITIES: Capabilities = Capabilities::OWN_POLICIES;

    fn start(config: &PoolConfig) -> Result<Self, StartError> {
        Self::CAPABILITIES.admit(Self::NAME, config)?;
        let p = config.workers;
        let id = NEXT_POOL_ID.fetch_add(1, Ordering::Relaxed);
        let placement = Topology::detect().placement(config.pinning, p);
        let counters = Arc::new(Counters {
            tasks_spawned: PerWorker::new(p),
            roots: AtomicU64::new(0),
            touch_waits: PerWorker::new(p),
        });
        let startup = Arc::new((Mutex::new(Startup::default()), Condvar::new()));
        let next_index = Arc::new(AtomicUsize::new(0));
        let next_name = AtomicUsize::new(0);
        let (handler_startup, handler_counters) = (Arc::clone(&startup), Arc::clone(&counters));
        let mut builder = ::tokio::runtime::Builder::new_multi_thread();
        builder
            // Its own timer and reactor: latency futures are awaited natively.
            .enable_all()
            .worker_threads(p)
            .thread_stack_size(THREAD_STACK_BYTES)
            .thread_name_fn(move || {
                format!(
                    "stealbench-tokio-{}",
                    next_name.fetch_add(1, Ordering::Relaxed)
                )
            })
            .on_thread_start(move || {
                // Tokio runs its workers on threads of its blocking pool, which calls this
                // for every thread it starts; only the first P are workers (this runtime
                // never calls `spawn_blocking`), later ones are numbered modulo P.
                let i = next_index.fetch_add(1, Ordering::Relaxed) % p;
                let pinned = match &placement {
                    Some(cpus) => pin_current_thread(cpus[i]),
                    None => Ok(()),
                };
                CONTEXT.with(|c| {
                    let _ = c.set(WorkerContext {
                        pool: id,
                        index: i,
                        counters: Arc::clone(&handler_counters),
                    });
                });
                let (state, cv) = &*handler_startup;
                let mut s = lock(state);
                s.started += 1;
                if let Err(e) = pinned {
                    s.errors.push(format!("worker {i}: {e}"));
                }
                cv.notify_all();
            });
        // Tokio panics when the OS refuses one of its worker threads, and then hangs in the
        // drop of its half-built pool: so first make sure the OS gives P such threads.
        threads_available(p)?;
        let runtime = builder
            .build()
            .map_err(|e| StartError::Os(format!("tokio runtime: {e}")))?;
        let (state, cv) = &*startup;
        let deadline = Instant::now() + START_TIMEOUT;
        let mut s = lock(state);
        while s.started < p {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(StartError::Os(format!(
                    "only {} of {p} tokio workers started",
                    s.started
                )));
            }
            s = cv
                .wait_timeout(s, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        if !s.errors.is_empty() {
            return Err(StartError::Os(s.errors.join("; ")));
        }
        drop(s);
        Ok(TokioPool {
            runtime,
            workers: p,
            id,
            counters,
        })
    }

    fn workers(&self) -> usize {
        self.workers
    }

    fn stats(&self) -> Stats {
        Stats {
            steals: None,
            steal_attempts: None,
            extra: vec![
                (
                    "tasks_spawned",
                    self.counters.tasks_spawned.sum()
                        + self.counters.roots.load(Ordering::Relaxed),
                ),
                ("touch_waits", self.counters.touch_waits.sum()),
            ],
            gauges: Vec::new(),
        }
    }

    fn reset_stats(&self) {
        self.counters.tasks_spawned.reset();
        self.counters.roots.store(0, Ordering::Relaxed);
        self.counters.touch_waits.reset();
    }
}

/// The state of one `run_async` call at a time, shared by its worker handles and tasks.
///
/// A worker handle is a copy of a reference to this state and the generation of the scope it
/// was made in: no reference count is touched per fork (each child gets a handle of its own,
/// and a count shared by every worker would be written by each of them on every fork). A
/// handle may outlive its scope (it can be returned from `run_async`), so states are never
/// freed: they live for the process, and [`FREE_SCOPES`] hands a closed one to the next
/// `run_async`, which opens it under a new generation. A handle whose generation is not the
/// state's, or whose state is closed, panics when it spawns.
struct ScopeState {
    /// Bumped when the state is opened for a new scope.
    generation: AtomicU64,
    /// Tasks spawned in the scope that have not finished (dropped their future) yet.
    pending: AtomicUsize,
    /// Set once `run_async` has seen `pending == 0`; a spawn after that panics.
    closed: AtomicBool,
    /// The first panic of any task.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// Guards the wait for `pending == 0`.
    done: Mutex<()>,
    all_done: Condvar,
}

/// Closed scope states, for the next `run_async` to open.
static FREE_SCOPES: Mutex<Vec<&'static ScopeState>> = Mutex::new(Vec::new());

impl ScopeState {
    /// A closed state (a free one, or a new one leaked for the process), opened for a new
    /// scope: its generation is returned.
    fn open() -> (&'static ScopeState, u64) {
        let state = lock(&FREE_SCOPES).pop().unwrap_or_else(|| {
            Box::leak(Box::new(ScopeState {
                generation: AtomicU64::new(0),
                pending: AtomicUsize::new(0),
                closed: AtomicBool::new(true),
                panic: Mutex::new(None),
                done: Mutex::new(()),
                all_done: Condvar::new(),
            }))
        });
        // The new generation is stored before `closed` is cleared (both SeqCst): a stale
        // handle's `enter` that sees the state open sees the new generation too.
        let generation = state.generation.fetch_add(1, Ordering::SeqCst) + 1;
        state.closed.store(false, Ordering::SeqCst);
        (state, generation)
    }

    /// Hands a closed state (its panic taken) to the next `run_async`.
    fn free(&'static self) {
        debug_assert!(self.closed.load(Ordering::Relaxed));
        lock(&FREE_SCOPES).push(self);
    }

    fn record_panic(&self, payload: Box<dyn Any + Send>) {
        let mut first = lock(&self.panic);
        if first.is_none() {
            *first = Some(payload);
        }
    }

    /// Registers a task about to be spawned by a handle of scope `generation`; panics if that
    /// scope has closed.
    fn enter(&self, generation: u64) {
        self.pending.fetch_add(1, Ordering::SeqCst);
        if self.closed.load(Ordering::SeqCst)
            || self.generation.load(Ordering::SeqCst) != generation
        {
            self.task_done();
            panic!("a tokio worker handle was used after its run_async returned");
        }
    }

    /// Called once per entered task, after the task has dropped its future.
    fn task_done(&self) {
        if self.pending.fetch_sub(1, Ordering::SeqCst) == 1 {
            // The state is never freed, so this is sound after `run_async` has returned; a
            // wake-up it gives the state's next scope is spurious, and that scope waits on.
            let _guard = lock(&self.done);
            self.all_done.notify_all();
        }
    }

    /// Blocks until every entered task is done, and closes the scope so that none can be
    /// entered afterwards.
    fn wait_and_close(&self) {
        let mut guard = lock(&self.done);
        loop {
            while self.pending.load(Ordering::SeqCst) != 0 {
                guard = self
                    .all_done
                    .wait(guard)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            self.closed.store(true, Ordering::SeqCst);
            // A spawn whose `enter` did not see `closed` incremented `pending` before the
            // store above (both SeqCst), so it is seen here and waited for.
            if self.pending.load(Ordering::SeqCst) == 0 {
                return;
            }
        }
    }
}

/// A task as tokio sees it: the scope's future, lifetime-erased, plus its scope.
struct ScopedTask {
    future: Option<Pin<Box<dyn Future<Output = ()> + Send + 'static>>>,
    scope: &'static ScopeState,
}

impl ScopedTask {
    /// Drops the future (and with it every `'scope` borrow), then tells the scope.
    fn finish(&mut self) {
        if let Some(future) = self.future.take() {
            if let Err(payload) = catch_unwind(AssertUnwindSafe(move || drop(future))) {
                self.scope.record_panic(payload);
            }
            self.scope.task_done();
        }
    }
}

impl Future for ScopedTask {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        let Some(future) = this.future.as_mut() else {
            return Poll::Ready(());
        };
        match catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(Poll::Pending) => return Poll::Pending,
            Ok(Poll::Ready(())) => {}
            // Recorded before the future (holding the result channel) is dropped, so an
            // awaiter sees the failure only after the original panic is kept.
            Err(payload) => this.scope.record_panic(payload),
        }
        this.finish();
        Poll::Ready(())
    }
}

impl Drop for ScopedTask {
    fn drop(&mut self) {
        // If tokio drops the task unfinished (it never does while `run_async` waits), or
        // `tokio::spawn` panics with it (a handle polled outside any runtime).
        self.finish();
    }
}

/// The worker handle of one [`TokioPool::run_async`] call: the scope it spawns into. A copy
/// of a reference and a number: making one per child costs nothing.
pub struct TokioWorker<'scope> {
    scope: &'static ScopeState,
    generation: u64,
    _marker: PhantomData<&'scope mut &'scope ()>,
}

impl Clone for TokioWorker<'_> {
    fn clone(&self) -> Self {
        *self
    }
}

impl Copy for TokioWorker<'_> {}

impl fmt::Debug for TokioWorker<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokioWorker")
            .field("pending", &self.scope.pending.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl<'scope> TokioWorker<'scope> {
    /// Spawns `future` as a task of the scope, on the runtime of the task polling this (a
    /// worker's local queue: tokio puts it in the LIFO slot).
    fn spawn_task(&self, future: impl Future<Output = ()> + Send + 'scope) {
        self.scope.enter(self.generation);
        let future: Pin<Box<dyn Future<Output = ()> + Send + 'scope>> = Box::pin(future);
        // SAFETY: only the lifetime changes (same type otherwise, so same layout). The future
        // may borrow data that lives for 'scope, which outlives the `run_async` call (it is a
        // lifetime parameter of that call). The erased future is owned by a `ScopedTask`,
        // which drops it before calling `task_done`; `run_async` does not return, normally or
        // by unwinding, before every entered task has called `task_done`, and `enter` above
        // panics once the scope has closed. So the future is never used or dropped after
        // 'scope ends.
        let future: Pin<Box<dyn Future<Output = ()> + Send + 'static>> =
            unsafe { std::mem::transmute(future) };
        count_spawn();
        // Outside a tokio runtime this panics, and the dropped `ScopedTask` leaves the scope.
        drop(::tokio::spawn(ScopedTask {
            future: Some(future),
            scope: self.scope,
        }));
    }
}

/// A single-touch handle of the tokio runtime: awaiting it yields the task's output.
pub struct TokioHandle<T> {
    result: oneshot::Receiver<T>,
    waited: bool,
}

impl<T> fmt::Debug for TokioHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokioHandle").finish_non_exhaustive()
    }
}

impl<T> Future for TokioHandle<T> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        match Pin::new(&mut self.result).poll(cx) {
            Poll::Ready(Ok(v)) => Poll::Ready(v),
            Poll::Ready(Err(_)) => resume_unwind(Box::new(AWAITED_PANIC.to_string())),
            Poll::Pending => {
                if !self.waited {
                    self.waited = true;
                    count_touch_wait();
                }
                Poll::Pending
            }
        }
    }
}

/// The shared result of a [`TokioShared`].
struct SharedSlot<T> {
    value: OnceLock<T>,
    failed: AtomicBool,
    notify: Notify,
}

/// Publishes a shared result when dropped: the value if it was set, else the failure.
struct Publish<T>(Arc<SharedSlot<T>>);

impl<T> Drop for Publish<T> {
    fn drop(&mut self) {
        if self.0.value.get().is_none() {
            self.0.failed.store(true, Ordering::Release);
        }
        self.0.notify.notify_waiters();
    }
}

/// A multi-touch handle of the tokio runtime: clones share one result.
pub struct TokioShared<T> {
    slot: Arc<SharedSlot<T>>,
}

impl<T> Clone for TokioShared<T> {
    fn clone(&self) -> Self {
        TokioShared {
            slot: Arc::clone(&self.slot),
        }
    }
}

impl<T> fmt::Debug for TokioShared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokioShared")
            .field("ready", &self.slot.value.get().is_some())
            .finish()
    }
}

impl<T: Send + Sync> AsyncShared<T> for TokioShared<T> {
    async fn get<'a>(&'a self) -> &'a T
    where
        T: 'a,
    {
        let mut counted = false;
        loop {
            // A `Notified` receives every `notify_waiters` made after its creation, so
            // creating it before looking at the value cannot miss the publication.
            let notified = self.slot.notify.notified();
            if let Some(v) = self.slot.value.get() {
                return v;
            }
            if self.slot.failed.load(Ordering::Acquire) {
                resume_unwind(Box::new(AWAITED_PANIC.to_string()));
            }
            if !counted {
                counted = true;
                count_touch_wait();
            }
            notified.await;
        }
    }
}

impl<'scope> TokioWorker<'scope> {
    /// Spawns `fut` as a task whose output goes to a single-touch handle.
    fn spawn_handle<T, Fut>(&self, fut: Fut) -> TokioHandle<T>
    where
        Fut: Future<Output = T> + Send + 'scope,
        T: Send + 'scope,
    {
        let (tx, rx) = oneshot::channel();
        self.spawn_task(async move {
            let _ = tx.send(fut.await);
        });
        TokioHandle {
            result: rx,
            waited: false,
        }
    }

    /// Spawns `fut` as a task whose output goes to a multi-touch handle.
    fn spawn_shared_handle<T, Fut>(&self, fut: Fut) -> TokioShared<T>
    where
        Fut: Future<Output = T> + Send + 'scope,
        T: Send + Sync + 'scope,
    {
        let slot = Arc::new(SharedSlot {
            value: OnceLock::new(),
            failed: AtomicBool::new(false),
            notify: Notify::new(),
        });
        let publish = Publish(Arc::clone(&slot));
        self.spawn_task(async move {
            let publish = publish;
            let v = fut.await;
            let _ = publish.0.value.set(v);
        });
        TokioShared { slot }
    }
}

impl<'scope> AsyncWorker<'scope> for TokioWorker<'scope> {
    type Handle<T: Send + 'scope> = TokioHandle<T>;
    type Shared<T: Send + Sync + 'scope> = TokioShared<T>;

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
        let this = *self;
        async move {
            let ha = this.spawn_handle(a(this));
            let rb = Box::pin(b(this)).await;
            (ha.await, rb)
        }
    }

    fn fork_reduce<I, F, Fut, G>(
        &self,
        items: I,
        mut child: F,
        init: Fut::Output,
        mut reduce: G,
    ) -> impl Future<Output = Fut::Output> + Send
    where
        I: IntoIterator + Send + 'scope,
        I::IntoIter: Send + 'scope,
        I::Item: Send + 'scope,
        F: FnMut(Self, I::Item) -> Fut + Send + 'scope,
        Fut: Future + Send + 'scope,
        Fut::Output: Send + 'scope,
        G: FnMut(Fut::Output, Fut::Output) -> Fut::Output + Send + 'scope,
    {
        let this = *self;
        async move {
            // Every child but the last is a task; the last is awaited in a box of its own,
            // as `join`'s second child; then the handles in item order.
            let mut items = items.into_iter().peekable();
            let mut handles = Vec::new();
            let mut last = None;
            while let Some(item) = items.next() {
                let fut = child(this, item);
                if items.peek().is_some() {
                    handles.push(this.spawn_handle(fut));
                } else {
                    last = Some(Box::pin(fut).await);
                }
            }
            let mut acc = init;
            for h in handles {
                acc = reduce(acc, h.await);
            }
            match last {
                Some(v) => reduce(acc, v),
                None => acc,
            }
        }
    }

    fn call<F, Fut>(&self, f: F) -> impl Future<Output = Fut::Output> + Send
    where
        F: FnOnce(Self) -> Fut + Send + 'scope,
        Fut: Future + Send + 'scope,
        Fut::Output: Send + 'scope,
    {
        let this = *self;
        async move { Box::pin(f(this)).await }
    }

    fn spawn<F, Fut>(&self, f: F) -> impl Future<Output = TokioHandle<Fut::Output>> + Send
    where
        F: FnOnce(Self) -> Fut + Send + 'scope,
        Fut: Future + Send + 'scope,
        Fut::Output: Send + 'scope,
    {
        let this = *self;
        // The handle (itself a future) is the output: awaiting `spawn` spawns, awaiting the
        // handle touches.
        #[allow(clippy::async_yields_async)]
        async move {
            this.spawn_handle(f(this))
        }
    }

    fn spawn_shared<F, Fut>(&self, f: F) -> impl Future<Output = TokioShared<Fut::Output>> + Send
    where
        F: FnOnce(Self) -> Fut + Send + 'scope,
        Fut: Future + Send + 'scope,
        Fut::Output: Send + Sync + 'scope,
    {
        let this = *self;
        async move { this.spawn_shared_handle(f(this)) }
    }

    /// Awaited natively: the task waits on tokio's own timer and reactor, and its worker runs
    /// other tasks meanwhile (the async baseline of latency hiding).
    // Not an `async fn`: its future would borrow `self`, and it must live for `'scope`.
    #[allow(clippy::manual_async_fn)]
    fn latency_future<T, M, Fut>(&self, make: M) -> impl Future<Output = T> + Send + 'scope
    where
        M: FnOnce() -> Fut + Send + 'scope,
        Fut: Future<Output = T> + Send + 'scope,
        T: Send + 'scope,
    {
        async move { make().await }
    }
}

impl AsyncForkJoin for TokioPool {
    type Worker<'scope> = TokioWorker<'scope>;

    fn run_async<'scope, R, F, Fut>(&self, f: F) -> R
    where
        F: FnOnce(TokioWorker<'scope>) -> Fut + Send,
        Fut: Future<Output = R> + Send + 'scope,
        R: Send + 'scope,
    {
        assert!(
            worker_index_in(self.id).is_none(),
            "run_async called from a worker of the same tokio pool (it would block that worker)"
        );
        let (scope, generation) = ScopeState::open();
        let worker = TokioWorker {
            scope,
            generation,
            _marker: PhantomData,
        };
        // `f` may already spawn tasks before it panics: they are waited for all the same.
        let result = match catch_unwind(AssertUnwindSafe(move || f(worker))) {
            Ok(root) => {
                let (tx, rx) = oneshot::channel();
                scope.enter(generation);
                let root: Pin<Box<dyn Future<Output = ()> + Send + 'scope>> =
                    Box::pin(async move {
                        let _ = tx.send(root.await);
                    });
                // SAFETY: as in `spawn_task`: only the lifetime changes, and this call waits
                // below until the task has dropped the future.
                let root: Pin<Box<dyn Future<Output = ()> + Send + 'static>> =
                    unsafe { std::mem::transmute(root) };
                self.counters.roots.fetch_add(1, Ordering::Relaxed);
                drop(self.runtime.spawn(ScopedTask {
                    future: Some(root),
                    scope,
                }));
                Some(rx)
            }
            Err(payload) => {
                scope.record_panic(payload);
                None
            }
        };
        scope.wait_and_close();
        let panic = lock(&scope.panic).take();
        scope.free();
        if let Some(payload) = panic {
            resume_unwind(payload);
        }
        match result.map(|mut rx| rx.try_recv()) {
            Some(Ok(r)) => r,
            _ => unreachable!("the root task finished without a result and without a panic"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Pinning;

    #[test]
    fn rejects_what_it_cannot_honour() {
        crate::config::assert_refuses_all_but_own_policies("tokio", TokioPool::start);
    }

    #[test]
    fn workers_are_named_indexed_and_pinned() {
        let mut c = PoolConfig::with_workers(2);
        c.pinning = Pinning::Compact;
        let pool = TokioPool::start(&c).unwrap();
        assert_eq!(pool.workers(), 2);
        let expected = Topology::detect().placement(Pinning::Compact, 2).unwrap();
        // Enough tasks that, with overwhelming likelihood, both workers run some; every one
        // checks the worker it runs on.
        let seen = Mutex::new(Vec::new());
        let (seen_ref, expected, id) = (&seen, &expected, pool.id);
        pool.run_async(|s| async move {
            let mut hs = Vec::new();
            for _ in 0..64 {
                hs.push(
                    s.spawn(move |_| async move {
                        let i = worker_index_in(id).expect("a task ran off the pool");
                        let name = std::thread::current().name().unwrap().to_string();
                        assert!(name.starts_with("stealbench-tokio-"), "{name}");
                        assert_eq!(
                            crate::topology::allowed_cpus(),
                            vec![expected[i]],
                            "worker {i}"
                        );
                        lock(seen_ref).push(i);
                    })
                    .await,
                );
            }
            for h in hs {
                h.await;
            }
        });
        let seen = seen.into_inner().unwrap();
        assert_eq!(seen.len(), 64);
        assert!(seen.iter().all(|&i| i < 2));
    }

    #[test]
    fn a_handle_used_after_its_scope_panics() {
        let pool = TokioPool::start(&PoolConfig::with_workers(1)).unwrap();
        let escaped = pool.run_async(|s| async move { s });
        let r = catch_unwind(AssertUnwindSafe(|| {
            let spawn = std::pin::pin!(escaped.spawn(|_| async {}));
            let _ = spawn.poll(&mut Context::from_waker(std::task::Waker::noop()));
        }));
        let msg = *r.unwrap_err().downcast::<&str>().unwrap();
        assert!(msg.contains("after its run_async returned"), "{msg}");
        assert_eq!(pool.run_async(|_| async { 5 }), 5);
    }

    #[test]
    fn a_stale_handle_cannot_spawn_into_the_next_scope_of_its_state() {
        let pool = TokioPool::start(&PoolConfig::with_workers(1)).unwrap();
        let escaped = pool.run_async(|s| async move { s });
        // The states are shared by the process's tests: run scopes until one opens the
        // escaped handle's state again (the next one, unless another test took it first).
        let mut reused = false;
        for _ in 0..100 {
            let (same_state, refused) = pool.run_async(move |s| async move {
                let r = catch_unwind(AssertUnwindSafe(|| {
                    let spawn = std::pin::pin!(escaped.spawn(|_| async {}));
                    let _ = spawn.poll(&mut Context::from_waker(std::task::Waker::noop()));
                }));
                // The open scope goes on: its own handle still spawns.
                let h = s.spawn(|_| async { 7 }).await;
                assert_eq!(h.await, 7);
                (std::ptr::eq(s.scope, escaped.scope), r.is_err())
            });
            assert!(refused, "a handle of a closed scope spawned");
            if same_state {
                reused = true;
                break;
            }
        }
        assert!(reused, "no scope reused the escaped handle's state");
    }

    #[test]
    fn run_async_from_its_own_worker_is_refused() {
        let pool = Arc::new(TokioPool::start(&PoolConfig::with_workers(1)).unwrap());
        let inner = Arc::clone(&pool);
        let r = catch_unwind(AssertUnwindSafe(|| {
            pool.run_async(|_| async move {
                let nested = catch_unwind(AssertUnwindSafe(|| inner.run_async(|_| async { 1 })));
                nested.is_err()
            })
        }));
        assert!(r.unwrap(), "a nested run_async on a worker must panic");
    }

    #[test]
    fn tasks_and_waits_are_counted() {
        let pool = TokioPool::start(&PoolConfig::with_workers(1)).unwrap();
        let r = pool.run_async(|s| async move {
            let a = s.spawn(|_| async { 20u64 }).await;
            let b = s.spawn_shared(|_| async { 22u64 }).await;
            // One worker, busy with the root: neither task has run at the first touch.
            a.await + *b.get().await + *b.get().await
        });
        assert_eq!(r, 64);
        let st = pool.stats();
        assert_eq!(st.steals, None);
        // root + 2; the first touch of `a` waits, and by then `b` has run too.
        assert_eq!(st.extra, vec![("tasks_spawned", 3), ("touch_waits", 1)]);
        pool.reset_stats();
        assert_eq!(
            pool.stats().extra,
            vec![("tasks_spawned", 0), ("touch_waits", 0)]
        );
    }
}
