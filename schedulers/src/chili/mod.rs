//! `chili`: the [chili](https://docs.rs/chili) crate's pool, the cheapest fork-join a Rust user
//! can pick today, as a baseline beside `rayon` and `tokio`.
//!
//! # What chili does
//!
//! Heartbeat scheduling, in the style of Spice: `join(a, b)` pushes `a` on a queue private to
//! its thread and runs `b`; nothing is stealable until the thread's heartbeat (every 100 µs,
//! set by a thread of chili's own) moves the oldest queued job to a shared map that idle
//! threads take from. A join whose job was not shared pops it back and runs it inline: almost
//! all joins cost a push and a pop on a private queue, and even those checks are skipped on 63
//! of every 64 joins while the queue holds three jobs or more. The price is latency: work
//! becomes stealable once per heartbeat per thread.
//!
//! # How `chili` maps onto the closure front-end
//!
//! * The pool is a `chili::ThreadPool` of `P - 1` threads of chili's own plus the thread that
//!   calls [`ForkJoin::run`], which runs the root (chili's own model: the caller's scope is the
//!   root's), so P threads run tasks. chili's heartbeat thread comes on top.
//! * `join(a, b)` is chili's join with the two closures swapped: chili runs its second closure
//!   inline first and its first one later, so serially `a` runs before `b`, as the trait says.
//!   The inline side (`a`) runs under `catch_unwind`: chili frees a join's stack record when
//!   its inline side unwinds, even while a thief still runs the other side, so no panic may
//!   leave that closure. The other side needs nothing of ours: chili catches its panic where a
//!   thief runs it and re-raises it after the wait, and where the owner pops it back and runs
//!   it inline, nothing else can reach the record any more. `a`'s panic is re-raised once `b`
//!   is done (if both panic, `b`'s unwinds first and `a`'s is dropped). That `catch_unwind` is
//!   the one cost of ours on chili's join (`workloads/examples/direct_floor.rs` measures it).
//! * chili has no spawn. A [`ChiliScope`] keeps its spawned tasks (boxed) and runs them at the
//!   scope's end as a balanced tree of joins, round after round until no task spawns another:
//!   a loop of spawns and a sync, as Cilk's `nqueens` writes it, runs as the tree of joins a
//!   chili user would write. Serially the tasks run after the scope's body, not at their
//!   spawn (as TBB's `task_group` runs them too).
//! * No futures: the runtime implements the closure front-end only, without
//!   [`Futures`](crate::Futures).
//! * Nothing of chili can be configured but the thread count: no pinning (chili starts its
//!   threads itself; [`Capabilities::pinning`] is `false`), its own victims (`default`) and
//!   its sleeping idle threads (`lazy`). It counts nothing, so its [`Stats`] are empty.
//!
//! # The handle
//!
//! chili hands each closure a `&mut chili::Scope`, and [`ChiliWorker`] is that scope as it is
//! (`repr(transparent)` over an `UnsafeCell`): a task's `&ChiliWorker` is chili's `&mut Scope`
//! seen through a shared reference, so making one costs nothing and a join reaches chili's
//! scope with no check. It is sound because a handle is neither `Send` nor `Sync` (the
//! `UnsafeCell`): a closure given to a join, a scope or a spawn must be `Send`, so none can
//! capture a handle, and the only `&ChiliWorker` a closure can use is the one it was given,
//! on the thread chili runs it on. While a join of a handle runs, its closures use their own
//! handles (chili's reborrows of the same scope), never the joining one.

use crate::api::{ForkJoin, Scheduler, Scope, StartError, Worker};
use crate::config::{Capabilities, PoolConfig};
use crate::stats::Stats;
use std::any::Any;
use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::num::NonZero;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::{Mutex, PoisonError};

/// The `chili` pool.
pub struct ChiliPool {
    pool: chili::ThreadPool,
    workers: usize,
}

impl std::fmt::Debug for ChiliPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChiliPool")
            .field("workers", &self.workers)
            .finish()
    }
}

impl Scheduler for ChiliPool {
    const NAME: &'static str = "chili";

    /// Threads and nothing else to choose: no futures, no pinning (chili starts its threads
    /// itself), its own victims and sleeping idle threads.
    const CAPABILITIES: Capabilities = Capabilities {
        futures: false,
        general_futures: false,
        pinning: false,
        ..Capabilities::OWN_POLICIES
    };

    fn start(config: &PoolConfig) -> Result<Self, StartError> {
        Self::CAPABILITIES.admit(Self::NAME, config)?;
        let threads = NonZero::new(config.workers).expect("admit refuses 0 workers");
        let pool = chili::ThreadPool::with_config(chili::Config {
            thread_count: Some(threads),
            ..chili::Config::default()
        });
        Ok(ChiliPool {
            pool,
            workers: config.workers,
        })
    }

    fn workers(&self) -> usize {
        self.workers
    }

    fn stats(&self) -> Stats {
        Stats::default()
    }

    fn reset_stats(&self) {}
}

impl ForkJoin for ChiliPool {
    type Worker = ChiliWorker;

    fn run<R, F>(&self, f: F) -> R
    where
        F: FnOnce(&ChiliWorker) -> R + Send,
        R: Send,
    {
        let mut scope = self.pool.scope();
        f(ChiliWorker::of(&mut scope))
    }
}

/// The handle of a task on `chili`: chili's scope of the closure running the task.
#[repr(transparent)]
pub struct ChiliWorker(UnsafeCell<chili::Scope<'static>>);

impl ChiliWorker {
    /// The handle of the closure that chili gave `scope`.
    #[inline(always)]
    fn of<'a>(scope: &'a mut chili::Scope<'_>) -> &'a ChiliWorker {
        // SAFETY: `ChiliWorker` is `repr(transparent)` over `UnsafeCell<chili::Scope>`, itself
        // `repr(transparent)`, so the pointer is one to a `ChiliWorker`. The erased lifetime is
        // that of the pool's borrow, which outlives every closure of the pool; the returned
        // reference lives no longer than chili's `&mut` it comes from, and holds it exclusively
        // (the caller gives its `&mut` up for `'a`).
        unsafe { &*(scope as *mut chili::Scope<'_>).cast::<ChiliWorker>() }
    }

    /// Chili's scope, for one call into chili.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    fn chili(&self) -> &mut chili::Scope<'static> {
        // SAFETY: a handle is the `&mut chili::Scope` chili gave one closure (`of`), and it is
        // neither `Send` nor `Sync`, so only that closure, on its thread, can use it: no closure
        // it hands to chili can capture it (they must be `Send`). The `&mut` made here lives
        // for one call into chili, during which the closures chili runs use their own scopes,
        // reborrowed from this one; so no two `&mut` to the scope are used at once.
        unsafe { &mut *self.0.get() }
    }
}

/// A panic caught on one side of a join or in a spawned task, to re-raise after the wait.
type Payload = Box<dyn Any + Send>;

impl Worker for ChiliWorker {
    type Scope<'s> = ChiliScope<'s>;

    #[inline]
    fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(&Self) -> RA + Send,
        B: FnOnce(&Self) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        // chili runs its second closure first, inline: `a` goes second, and is the only one
        // that must not unwind through chili's join (see the module docs).
        let (rb, ra) = self.chili().join(
            move |s| b(ChiliWorker::of(s)),
            move |s| catch_unwind(AssertUnwindSafe(|| a(ChiliWorker::of(s)))),
        );
        match ra {
            Ok(ra) => (ra, rb),
            Err(p) => resume_unwind(p),
        }
    }

    fn scope<'s, F, R>(&self, f: F) -> R
    where
        F: FnOnce(&ChiliScope<'s>, &ChiliWorker) -> R + Send,
        R: Send,
    {
        let scope = ChiliScope {
            tasks: Mutex::new(Vec::new()),
            panic: Mutex::new(None),
            _marker: PhantomData,
        };
        let body = catch_unwind(AssertUnwindSafe(|| f(&scope, self)));
        loop {
            let round = std::mem::take(&mut *lock(&scope.tasks));
            if round.is_empty() {
                break;
            }
            run_all(&scope, self, round);
        }
        let spawned = lock(&scope.panic).take();
        match (body, spawned) {
            (Err(p), _) | (Ok(_), Some(p)) => resume_unwind(p),
            (Ok(r), None) => r,
        }
    }
}

/// A spawned task, waiting for its scope's end.
type Task<'s> = Box<dyn FnOnce(&ChiliScope<'s>, &ChiliWorker) + Send + 's>;

/// A scope of [`ChiliWorker::scope`]: the spawned tasks, run at its end.
pub struct ChiliScope<'s> {
    /// Spawned and not started yet.
    tasks: Mutex<Vec<Task<'s>>>,
    /// The first panic of a spawned task.
    panic: Mutex<Option<Payload>>,
    _marker: PhantomData<&'s mut &'s ()>,
}

impl std::fmt::Debug for ChiliScope<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChiliScope")
            .field("waiting", &lock(&self.tasks).len())
            .finish()
    }
}

/// Locks `m`; a poisoned lock is taken as it is (no code panics while holding one of these).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `tasks` as a balanced tree of joins; a task's panic is kept in the scope.
fn run_all<'s>(scope: &ChiliScope<'s>, w: &ChiliWorker, mut tasks: Vec<Task<'s>>) {
    if tasks.len() == 1 {
        let task = tasks.pop().expect("one task");
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| task(scope, w))) {
            lock(&scope.panic).get_or_insert(p);
        }
        return;
    }
    let right = tasks.split_off(tasks.len() / 2);
    w.join(|w| run_all(scope, w, tasks), |w| run_all(scope, w, right));
}

impl<'s> Scope<'s> for ChiliScope<'s> {
    type Worker = ChiliWorker;

    fn spawn<F>(&self, _w: &ChiliWorker, f: F)
    where
        F: FnOnce(&Self, &ChiliWorker) + Send + 's,
    {
        lock(&self.tasks).push(Box::new(f));
    }
}
