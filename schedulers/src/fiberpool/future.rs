//! Scopes and futures: [`FiberScope`] (spawns and future creation, work-first on a new fiber),
//! the result cell of a future, and the future handles [`FiberFuture`] and [`FiberShared`],
//! whose touch and put are the policy's.

use super::Policy;
use super::handle::FiberWorker;
use super::signal::Signal;
use crate::api::{FutureHandle, Scope, SharedHandle};
use std::any::Any;
use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A scope of [`FiberWorker::scope`](crate::api::Worker::scope). Spawns are work-first: the spawned task runs at once on a
/// new fiber while the spawner's continuation is pushed and may be stolen; the same holds for
/// future creation.
pub struct FiberScope<'s, P: Policy> {
    /// Unfinished tasks of the scope, plus 1 for the scope body until its end.
    pub(super) pending: AtomicUsize,
    /// Set by the last task to finish.
    pub(super) done: Signal<P>,
    /// The first panic of a spawned or future task, re-raised at the scope's end.
    pub(super) panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// Set (before the task's completion is signalled) when `panic` was filled: the scope's end
    /// locks `panic` only then.
    pub(super) panicked: AtomicBool,
    pub(super) _marker: PhantomData<&'s mut &'s ()>,
}

impl<P: Policy> std::fmt::Debug for FiberScope<'_, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(P::NAMES.scope)
            .field("pending", &self.pending.load(Ordering::Relaxed))
            .finish()
    }
}

impl<'s, P: Policy> FiberScope<'s, P> {
    /// Runs `body` as a task of this scope, work-first.
    fn fork_task<F: FnOnce(&FiberWorker<P>) + Send>(&self, w: &FiberWorker<P>, body: F) {
        self.pending.fetch_add(1, Ordering::Relaxed);
        let scope = self;
        w.fork(move |w| {
            if let Err(p) = panic::catch_unwind(AssertUnwindSafe(|| body(w))) {
                scope.panicked.store(true, Ordering::Relaxed);
                let mut slot = scope.panic.lock().unwrap_or_else(|e| e.into_inner());
                if slot.is_none() {
                    *slot = Some(p);
                }
            }
            if scope.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
                w.set(&scope.done);
            }
        });
    }
}

/// The result cell of a future: set once by its task, read by touches.
struct Cell2<P: Policy, T> {
    done: P::Fut,
    /// `Some` once the task returned; stays `None` if it panicked.
    value: UnsafeCell<Option<T>>,
}

// SAFETY: `value` is written once, by the future's task, before `done` is set (Release), and
// read only after `done` is seen set (Acquire): moving it between threads needs `T: Send`. A
// single-touch handle takes the value (again `T: Send`); only multi-touch handles share `&T`
// between threads, and `FiberShared` is only created for `T: Sync` (by `shared_future`).
unsafe impl<P: Policy, T: Send> Send for Cell2<P, T> {}
// SAFETY: see `Send`.
unsafe impl<P: Policy, T: Send> Sync for Cell2<P, T> {}

impl<P: Policy, T> Cell2<P, T> {
    fn new() -> Self {
        Cell2 {
            done: P::new_fut(),
            value: UnsafeCell::new(None),
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

/// A single-touch future of a fiber pool.
pub struct FiberFuture<P: Policy, T> {
    cell: Arc<Cell2<P, T>>,
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
        f.debug_struct(P::NAMES.future)
            .field("ready", &P::is_done(&self.cell.done))
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
    type Future<T: Send + 's> = FiberFuture<P, T>;
    type SharedFuture<T: Send + Sync + 's> = FiberShared<P, T>;

    fn spawn<F>(&self, w: &FiberWorker<P>, f: F)
    where
        F: FnOnce(&Self, &FiberWorker<P>) + Send + 's,
    {
        self.fork_task(w, move |w| f(self, w));
    }

    fn future<T, F>(&self, w: &FiberWorker<P>, f: F) -> FiberFuture<P, T>
    where
        F: FnOnce(&Self, &FiberWorker<P>) -> T + Send + 's,
        T: Send + 's,
    {
        let cell = Arc::new(Cell2::new());
        let c = Arc::clone(&cell);
        self.fork_task(w, move |w| {
            let mut v = None;
            let r = panic::catch_unwind(AssertUnwindSafe(|| v = Some(f(self, w))));
            c.put(w, v);
            if let Err(p) = r {
                panic::resume_unwind(p);
            }
        });
        FiberFuture { cell }
    }

    fn shared_future<T, F>(&self, w: &FiberWorker<P>, f: F) -> FiberShared<P, T>
    where
        F: FnOnce(&Self, &FiberWorker<P>) -> T + Send + 's,
        T: Send + Sync + 's,
    {
        let FiberFuture { cell } = self.future(w, f);
        FiberShared { cell }
    }
}

impl<P: Policy, T: Send> FutureHandle<T> for FiberFuture<P, T> {
    type Worker = FiberWorker<P>;

    fn get(self, w: &FiberWorker<P>) -> T {
        w.touch(&self.cell.done);
        // SAFETY: `done` is set, so the task wrote `value` and will not touch it again, and
        // this handle is the only one.
        unsafe { (*self.cell.value.get()).take() }
            .unwrap_or_else(|| panic!("{}: the future's task panicked", P::NAME))
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
