//! `rayon`: rayon's work-stealing pool (rayon-core) as a baseline, through the closure front-end.
//!
//! # What each operation is
//!
//! * [`ForkJoin::run`] is [`ThreadPool::install`]: the root task is injected into the pool and
//!   the calling thread blocks until it returns (or panics; the panic is re-raised there).
//! * [`Worker::join`] is [`rayon::join`]: `b` is pushed onto the worker's deque
//!   and `a` runs at once; `b` is popped back or stolen. Waiting for a stolen `b`, the worker runs
//!   other pool work (rayon's own policy).
//! * [`Worker::scope`] is [`rayon::scope`] and [`Scope::spawn`] is
//!   `rayon::Scope::spawn`: the spawned closure is boxed and pushed onto the local deque, the
//!   caller goes on (help-first). The scope's end waits for its tasks, running pool work
//!   meanwhile.
//!
//! # Futures (rayon has none; this is how they are built)
//!
//! * **Creation is lazy and help-first.** [`Futures::future`](crate::api::Futures::future) allocates a result cell (an `Arc`),
//!   then spawns the future's task into the rayon scope exactly like [`Scope::spawn`]: the task
//!   is pushed onto the creating worker's deque and the caller's continuation runs on. The
//!   task runs when a touch (or the scope's end) pops it back, or when a thief steals it. Unlike
//!   the papers' runtimes, the continuation is never stolen: the future's *task* is. So even on
//!   one worker the order is not the serial elision's: a future's task runs at its first touch
//!   (or at the scope's end, newest first), not at its creation; in fib `sf` on one worker every
//!   touch finds its task still queued (`touch_waits` = `futures_created`).
//! * **A touch never blocks its thread.** [`FutureHandle::get`] and [`SharedHandle::get`] return
//!   at once if the value is there. Otherwise (counted as a `touch_waits`) the worker loops:
//!   [`rayon::yield_now`] runs one piece of pool work (its own deque first,
//!   newest first, so a future task still in the toucher's deque is usually the next one run;
//!   then a steal; then a job injected from outside); when there is nothing to run it spins
//!   with exponential backoff (1, 2, ..., 32 pause instructions), then calls
//!   `std::thread::yield_now` between checks. Any work it runs executes *on top of* the
//!   touching frame, on the same stack.
//! * **Results.** The single-touch handle ([`RayonFuture`]) owns an `Arc` cell written once by
//!   the task and moved out by the one `get`. The multi-touch handle ([`RayonShared`]) is a
//!   clonable `Arc` around a `OnceLock`; `get` borrows from it. A handle that leaves its scope
//!   stays valid (the scope already waited for the task).
//! * **Panics.** A panic in a future's task marks the cell as failed with the panic's message
//!   and goes on unwinding into the rayon scope, which re-raises it at the scope's end. A
//!   touch of a failed future panics too, with the same message (a `String` payload), so a
//!   toucher never waits forever; whichever of the two reaches the scope first is re-raised.
//!
//! # Deadlock caveat of helping
//!
//! Because a waiting worker runs other tasks on top of its stack, a task can be stuck under
//! the task it is waiting for. Example with two workers: a task creates future F and spawns a
//! sibling task T holding a clone of F's handle. Worker 2 runs F's task, which waits (in a
//! `join`, a scope's end or a touch) for a piece stolen by worker 1, so worker 2 helps and
//! steals T; T touches F, whose task is suspended *below T on worker 2's own stack*: worker 2
//! can never return to it, and the computation hangs. rayon itself has the same limitation for
//! any blocking wait inside its jobs. Whether it happens depends on the schedule, so a test
//! passing once proves nothing. The rule that avoids it: **a task only waits for futures
//! created inside its own subtree** (by itself or by its descendants), as in structured
//! futures (fib `sf`) and fork-join. A future touched by a task that is not a descendant of its
//! creator (a handle passed sideways into a sibling spawn, general futures) is safe only when
//! the future's task itself never waits (a leaf computation). The papers' runtimes, which
//! suspend the waiting continuation instead of helping, do not have this restriction.
//!
//! Deep helping chains (a chain of futures each touching the previous one, touched from the
//! end) recurse on the worker's stack, which is why workers get a [`THREAD_STACK_BYTES`] stack.
//!
//! # Statistics
//!
//! rayon exposes no steal counter, so `steals` and `steal_attempts` are `None` (`n/a`). Extras,
//! counted on the pool's threads: `futures_created` (single- and multi-touch futures created)
//! and `touch_waits` (touches that found the value not ready and had to wait).
//!
//! # Configuration
//!
//! P worker threads named `stealbench-rayon-<i>`, each with a [`THREAD_STACK_BYTES`] stack
//! (virtual; only touched pages are committed), pinned by [`Pinning`](crate::config::Pinning)
//! through [`Topology::placement`]. Victim selection and idling are rayon's own: any victim
//! policy but `default` and the `busy` idle policy are rejected with
//! [`StartError::Unsupported`], as is every other setting its [`Scheduler::CAPABILITIES`] lack
//! (stack sizes, `futures=nostack`, a forced schedule, a placement).

use crate::api::{ForkJoin, FutureHandle, Scheduler, Scope, SharedHandle, StartError, Worker};
use crate::config::{Capabilities, PoolConfig};
use crate::stats::{PerWorker, Stats};
use crate::topology::{Topology, pin_current_thread};
use ::rayon::ThreadPool;
use std::any::Any;
use std::cell::{OnceCell, UnsafeCell};
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crate::config::THREAD_STACK_BYTES;

/// The pool's counters, one cell per worker.
#[derive(Debug)]
struct Counters {
    futures_created: PerWorker,
    touch_waits: PerWorker,
}

thread_local! {
    /// On a worker thread of a [`RayonPool`]: its index and its pool's counters.
    static CONTEXT: OnceCell<(usize, Arc<Counters>)> = const { OnceCell::new() };
}

/// Adds one to the counter `pick` selects, if the current thread is a pool worker (a handle
/// used on a foreign thread is not counted).
#[inline]
fn count(pick: fn(&Counters) -> &PerWorker) {
    let _ = CONTEXT.try_with(|c| {
        if let Some((i, counters)) = c.get() {
            pick(counters).add(*i, 1);
        }
    });
}

/// A rayon thread pool of P workers.
pub struct RayonPool {
    pool: ThreadPool,
    workers: usize,
    counters: Arc<Counters>,
}

impl fmt::Debug for RayonPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RayonPool")
            .field("workers", &self.workers)
            .finish_non_exhaustive()
    }
}

/// The rayon worker handle. It carries no state: rayon finds the current worker itself.
#[derive(Debug)]
pub struct RayonWorker {
    _private: (),
}

/// The one worker handle every task receives.
static WORKER: RayonWorker = RayonWorker { _private: () };

/// A scope of the rayon runtime: a `rayon::Scope`.
#[repr(transparent)]
pub struct RayonScope<'s> {
    inner: ::rayon::Scope<'s>,
}

impl fmt::Debug for RayonScope<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RayonScope").field(&self.inner).finish()
    }
}

impl<'s> RayonScope<'s> {
    /// Views a rayon scope as ours.
    #[inline(always)]
    fn wrap<'a>(inner: &'a ::rayon::Scope<'s>) -> &'a RayonScope<'s> {
        // SAFETY: `RayonScope<'s>` is `#[repr(transparent)]` over `rayon::Scope<'s>`, so the
        // two have the same layout and validity; the result borrows `*inner` for the same 'a.
        unsafe { &*(inner as *const ::rayon::Scope<'s> as *const RayonScope<'s>) }
    }
}

/// The message of a panic payload (`&str` or `String`), for re-raising it on touches.
fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a future's task panicked (with a payload that is not a string)".to_string()
    }
}

/// Waits, by helping, until `ready()` holds; see the module documentation.
#[inline]
fn wait_until(ready: impl Fn() -> bool) {
    if ready() {
        return;
    }
    count(|c| &c.touch_waits);
    let mut backoff = 0u32;
    while !ready() {
        match ::rayon::yield_now() {
            Some(::rayon::Yield::Executed) => backoff = 0,
            Some(::rayon::Yield::Idle) | None => {
                if backoff <= 5 {
                    for _ in 0..(1u32 << backoff) {
                        std::hint::spin_loop();
                    }
                    backoff += 1;
                } else {
                    std::thread::yield_now();
                }
            }
        }
    }
}

/// The result cell of a single-touch future: written once by its task, moved out once by its
/// handle.
struct Slot<T> {
    ready: AtomicBool,
    value: UnsafeCell<Option<Result<T, String>>>,
}

// SAFETY: `value` is written exactly once, by the future's task (`put` consumes the task's
// `Arc`, and only the task calls it), before `ready` is set with Release; it is then read
// only by the single handle (`RayonFuture` is not `Clone`, and `take` runs in the consuming
// `get`) after observing `ready` with Acquire. So there is never concurrent access, and the
// value moves between threads once, which `T: Send` allows (the same bound as `Mutex<T>`).
unsafe impl<T: Send> Sync for Slot<T> {}

impl<T> Slot<T> {
    fn new() -> Self {
        Slot {
            ready: AtomicBool::new(false),
            value: UnsafeCell::new(None),
        }
    }

    /// Puts the task's result. Called once, by the task, which then drops its reference.
    fn put(self: Arc<Self>, v: Result<T, String>) {
        // SAFETY: see the `Sync` impl: no one reads `value` before `ready` is set below, and
        // this is the only write.
        unsafe { *self.value.get() = Some(v) };
        self.ready.store(true, Ordering::Release);
    }

    fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }

    /// Moves the result out. Called once, by the handle, after `is_ready()` returned true.
    fn take(&self) -> Result<T, String> {
        debug_assert!(self.is_ready());
        // SAFETY: see the `Sync` impl: the task's write happened before our Acquire load of
        // `ready`, the task never touches `value` again, and the unique handle calls `take`
        // once.
        let v = unsafe { (*self.value.get()).take() };
        v.expect("a rayon future was taken twice")
    }
}

/// A single-touch future of the rayon runtime; see the module documentation.
pub struct RayonFuture<T> {
    slot: Arc<Slot<T>>,
}

impl<T> fmt::Debug for RayonFuture<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RayonFuture")
            .field("ready", &self.slot.is_ready())
            .finish()
    }
}

/// A multi-touch future of the rayon runtime: clones share one result.
pub struct RayonShared<T> {
    cell: Arc<OnceLock<Result<T, String>>>,
}

impl<T> Clone for RayonShared<T> {
    fn clone(&self) -> Self {
        RayonShared {
            cell: Arc::clone(&self.cell),
        }
    }
}

impl<T> fmt::Debug for RayonShared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RayonShared")
            .field("ready", &self.cell.get().is_some())
            .finish()
    }
}

impl Scheduler for RayonPool {
    const NAME: &'static str = "rayon";

    /// Its own policies only (it chooses its victims and puts idle workers to sleep); no
    /// general futures: a touch of an unfinished future helps (runs other work on top of the
    /// toucher's stack) instead of suspending, so the toucher can wait for a frame buried
    /// below it on its own stack.
    const CAPABILITIES: Capabilities = Capabilities {
        general_futures: false,
        ..Capabilities::OWN_POLICIES
    };

    fn start(config: &PoolConfig) -> Result<Self, StartError> {
        Self::CAPABILITIES.admit(Self::NAME, config)?;
        let p = config.workers;
        let placement = Topology::detect().placement(config.pinning, p);
        let counters = Arc::new(Counters {
            futures_created: PerWorker::new(p),
            touch_waits: PerWorker::new(p),
        });
        let pin_errors = Arc::new(Mutex::new(Vec::<String>::new()));
        let handler_counters = Arc::clone(&counters);
        let handler_errors = Arc::clone(&pin_errors);
        let pool = ::rayon::ThreadPoolBuilder::new()
            .num_threads(p)
            .thread_name(|i| format!("stealbench-rayon-{i}"))
            .stack_size(THREAD_STACK_BYTES)
            .start_handler(move |i| {
                if let Some(cpus) = &placement
                    && let Err(e) = pin_current_thread(cpus[i])
                {
                    handler_errors
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(format!("worker {i}: {e}"));
                }
                CONTEXT.with(|c| {
                    let _ = c.set((i, Arc::clone(&handler_counters)));
                });
            })
            .build()
            .map_err(|e| StartError::Os(format!("rayon pool: {e}")))?;
        // Every worker has run its start handler once it has run a broadcast job.
        pool.broadcast(|_| ());
        let errors =
            std::mem::take(&mut *pin_errors.lock().unwrap_or_else(PoisonError::into_inner));
        if !errors.is_empty() {
            return Err(StartError::Os(errors.join("; ")));
        }
        Ok(RayonPool {
            pool,
            workers: p,
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
                ("futures_created", self.counters.futures_created.sum()),
                ("touch_waits", self.counters.touch_waits.sum()),
            ],
            gauges: Vec::new(),
        }
    }

    fn reset_stats(&self) {
        self.counters.futures_created.reset();
        self.counters.touch_waits.reset();
    }
}

impl ForkJoin for RayonPool {
    type Worker = RayonWorker;

    fn run<R, F>(&self, f: F) -> R
    where
        F: FnOnce(&RayonWorker) -> R + Send,
        R: Send,
    {
        self.pool.install(|| f(&WORKER))
    }
}

impl Worker for RayonWorker {
    type Scope<'s> = RayonScope<'s>;

    #[inline]
    fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(&Self) -> RA + Send,
        B: FnOnce(&Self) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        ::rayon::join(|| a(&WORKER), || b(&WORKER))
    }

    #[inline]
    fn scope<'s, F, R>(&self, f: F) -> R
    where
        F: FnOnce(&RayonScope<'s>, &RayonWorker) -> R + Send,
        R: Send,
    {
        ::rayon::scope(|s| f(RayonScope::wrap(s), &WORKER))
    }
}

impl<'s> Scope<'s> for RayonScope<'s> {
    type Worker = RayonWorker;

    #[inline]
    fn spawn<F>(&self, _w: &RayonWorker, f: F)
    where
        F: FnOnce(&Self, &RayonWorker) + Send + 's,
    {
        self.inner.spawn(move |s| f(RayonScope::wrap(s), &WORKER));
    }
}

impl<'s> RayonScope<'s> {
    #[inline]
    pub(crate) fn future<T, F>(&self, _w: &RayonWorker, f: F) -> RayonFuture<T>
    where
        F: FnOnce(&Self, &RayonWorker) -> T + Send + 's,
        T: Send + 's,
    {
        count(|c| &c.futures_created);
        let slot = Arc::new(Slot::new());
        let producer = Arc::clone(&slot);
        self.inner.spawn(move |s| {
            match catch_unwind(AssertUnwindSafe(|| f(RayonScope::wrap(s), &WORKER))) {
                Ok(v) => producer.put(Ok(v)),
                Err(payload) => {
                    producer.put(Err(panic_message(&*payload)));
                    resume_unwind(payload)
                }
            }
        });
        RayonFuture { slot }
    }

    #[inline]
    pub(crate) fn shared_future<T, F>(&self, _w: &RayonWorker, f: F) -> RayonShared<T>
    where
        F: FnOnce(&Self, &RayonWorker) -> T + Send + 's,
        T: Send + Sync + 's,
    {
        count(|c| &c.futures_created);
        let cell = Arc::new(OnceLock::new());
        let producer = Arc::clone(&cell);
        self.inner.spawn(move |s| {
            match catch_unwind(AssertUnwindSafe(|| f(RayonScope::wrap(s), &WORKER))) {
                Ok(v) => {
                    let _ = producer.set(Ok(v));
                }
                Err(payload) => {
                    let _ = producer.set(Err(panic_message(&*payload)));
                    resume_unwind(payload)
                }
            }
        });
        RayonShared { cell }
    }
}

crate::api::futures_by_scope!(impl[] RayonWorker {
    scope: RayonScope, future: RayonFuture, shared: RayonShared, params: [], latency: default
});

impl<T: Send> FutureHandle<T> for RayonFuture<T> {
    type Worker = RayonWorker;

    #[inline]
    fn get(self, _w: &RayonWorker) -> T {
        wait_until(|| self.slot.is_ready());
        match self.slot.take() {
            Ok(v) => v,
            Err(message) => resume_unwind(Box::new(message)),
        }
    }
}

impl<T: Send + Sync> SharedHandle<T> for RayonShared<T> {
    type Worker = RayonWorker;

    #[inline]
    fn get(&self, _w: &RayonWorker) -> &T {
        wait_until(|| self.cell.get().is_some());
        match self.cell.get() {
            Some(Ok(v)) => v,
            Some(Err(message)) => resume_unwind(Box::new(message.clone())),
            None => unreachable!("wait_until returned before the future was set"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Pinning;

    #[test]
    fn rejects_what_it_cannot_honour() {
        crate::config::assert_refuses_all_but_own_policies("rayon", RayonPool::start);
    }

    #[test]
    fn workers_are_named_counted_and_pinned() {
        let mut c = PoolConfig::with_workers(2);
        c.pinning = Pinning::Compact;
        let pool = RayonPool::start(&c).unwrap();
        assert_eq!(pool.workers(), 2);
        let names = pool
            .pool
            .broadcast(|_| std::thread::current().name().map(String::from));
        let mut names: Vec<String> = names.into_iter().map(Option::unwrap).collect();
        names.sort();
        assert_eq!(names, ["stealbench-rayon-0", "stealbench-rayon-1"]);
        let expected = Topology::detect().placement(Pinning::Compact, 2).unwrap();
        let allowed = pool
            .pool
            .broadcast(|ctx| (ctx.index(), crate::topology::allowed_cpus()));
        for (i, cpus) in allowed {
            assert_eq!(cpus, vec![expected[i]], "worker {i}");
        }
    }

    #[test]
    fn futures_and_waits_are_counted() {
        let pool = RayonPool::start(&PoolConfig::with_workers(1)).unwrap();
        let r = pool.run(|w| {
            w.scope(|s, w| {
                let a = s.future(w, |_, _| 20u64);
                let b = s.shared_future(w, |_, _| 22u64);
                // On one worker both tasks are still queued: the first touch of each waits (b's
                // task is on top of the deque, so touching b runs only b).
                *b.get(w) + a.get(w) + *b.get(w)
            })
        });
        assert_eq!(r, 64);
        let st = pool.stats();
        assert_eq!(st.steals, None);
        assert_eq!(st.extra, vec![("futures_created", 2), ("touch_waits", 2)]);
        pool.reset_stats();
        assert_eq!(
            pool.stats().extra,
            vec![("futures_created", 0), ("touch_waits", 0)]
        );
    }
}
