//! The `Scheduler` trait family: the only way the harness and the workloads reach a runtime.
//!
//! A runtime is a [`Scheduler`] (a pool with a lifecycle and statistics) plus one or both
//! front-ends:
//!
//! * [`ForkJoin`], the **closure front-end**: `join` and scopes with spawns; where the runtime
//!   has futures, its worker's [`Futures`] adds single-touch ([`FutureHandle`]) and multi-touch
//!   ([`SharedHandle`]) futures created in a scope ([`FutureForkJoin`]). Every task receives a worker
//!   handle `&W` explicitly; runtimes whose tasks may resume on another thread (stackful
//!   fibers) make that handle valid for the whole task, wherever it resumes, so workload code
//!   never reaches worker state through a `thread_local`.
//! * [`AsyncForkJoin`], the **async front-end** for stackless runtimes and heap-task baselines:
//!   tasks are Rust futures spawned into a scope that outlives them.
//!
//! Which runtime implements which front-end is listed in `schedulers/README.md`; the harness
//! runs every (runtime, workload variant) pair whose front-ends match.
//!
//! # Safety model
//!
//! Safe workload code cannot cause undefined behaviour through these traits:
//! * closures and futures that borrow local data are only accepted with a lifetime bound
//!   (`'s` / `'scope`) that the scope, join or `run` call outlives, and those calls do not
//!   return (normally or by unwinding) before every task they started has finished;
//! * future handles own their result cell, so a handle that escapes its scope is still valid
//!   (the scope already waited for the task).
//!
//! # Example
//!
//! ```
//! use stealbench_schedulers::{ForkJoin, PoolConfig, Scheduler, Worker, serial::Serial};
//!
//! fn fib<W: Worker>(w: &W, n: u64) -> u64 {
//!     if n < 2 {
//!         return n;
//!     }
//!     let (a, b) = w.join(|w| fib(w, n - 1), |w| fib(w, n - 2));
//!     a + b
//! }
//!
//! let pool = Serial::start(&PoolConfig::with_workers(1)).unwrap();
//! assert_eq!(pool.run(|w| fib(w, 20)), 6765);
//! ```

use crate::config::{Capabilities, PoolConfig};
use crate::stats::Stats;
use std::fmt;

/// Why a pool could not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartError {
    /// The configuration asks for something this runtime cannot do (for example a victim
    /// policy that rayon does not expose). The string says what.
    Unsupported(String),
    /// The operating system refused (thread creation, affinity, memory mapping).
    Os(String),
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StartError::Unsupported(s) => write!(f, "unsupported configuration: {s}"),
            StartError::Os(s) => write!(f, "the operating system refused: {s}"),
        }
    }
}

impl std::error::Error for StartError {}

/// A pool of workers: lifecycle and statistics. Dropping it stops its threads.
pub trait Scheduler: Sized + Send + Sync + 'static {
    /// The runtime's name as the harness and the tables print it (`serial`, `rayon`, ...).
    const NAME: &'static str;

    /// What the runtime can honour: its `start` refuses any other configuration
    /// ([`Capabilities::admit`]), and the harness refuses settings and variants by it.
    const CAPABILITIES: Capabilities;

    /// Starts a pool of `config.workers` workers.
    fn start(config: &PoolConfig) -> Result<Self, StartError>;

    /// The number of workers P.
    fn workers(&self) -> usize;

    /// Statistics gathered since the pool started or since the last [`reset_stats`].
    ///
    /// [`reset_stats`]: Scheduler::reset_stats
    fn stats(&self) -> Stats;

    /// Sets every counter back to zero. Call it between runs, never during one.
    fn reset_stats(&self);
}

/// The closure front-end: a pool that runs a root task given a worker handle.
pub trait ForkJoin: Scheduler {
    /// The handle every task receives.
    type Worker: Worker;

    /// Runs `f` as the root task on the pool's workers and returns its value. A panic in any
    /// task of the computation is propagated to the caller; the pool stays usable.
    fn run<R, F>(&self, f: F) -> R
    where
        F: FnOnce(&Self::Worker) -> R + Send,
        R: Send;
}

/// A worker handle: the operations a task may perform.
///
/// The handle passed to a closure is valid for that closure's whole execution, and every
/// closure a runtime calls is given its own: the two sides of a join, a scope's body, a spawned
/// task, a future's task. Code must use the handle it was given, never one of an enclosing
/// task, because a task may run on another worker than its parent. The trait does not make a
/// handle `Send` or `Sync`, so generic code cannot capture one in a closure (every closure
/// handed to a runtime is `Send`, and `&W` is `Send` only where `W: Sync`): the rule is kept by
/// the compiler, and a runtime whose handle is a library's own `&mut` scope (the heartbeat
/// scheduling baseline's) can hand that scope to its closures as it is, with no check at run time. A closure that captures
/// its parent's handle is refused:
///
/// ```compile_fail
/// use stealbench_schedulers::Worker;
///
/// fn nested<W: Worker>(w: &W) {
///     // `w` is the parent's: the child must use the handle it is given.
///     w.join(|_| w.join(|_| (), |_| ()), |_| ());
/// }
/// ```
pub trait Worker: Sized + 'static {
    /// The scope type of [`Worker::scope`].
    type Scope<'s>: Scope<'s, Worker = Self>;

    /// Runs `a` and `b`, possibly in parallel, and returns both results. Serially, `a` runs
    /// before `b`. Both have finished when `join` returns.
    fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(&Self) -> RA + Send,
        B: FnOnce(&Self) -> RB + Send,
        RA: Send,
        RB: Send;

    /// Opens a scope: tasks spawned and futures created in it may borrow anything that
    /// outlives `'s`. `scope` returns only after every one of them has finished (the sync).
    /// The body gets the scope and its own handle.
    fn scope<'s, F, R>(&self, f: F) -> R
    where
        F: FnOnce(&Self::Scope<'s>, &Self) -> R + Send,
        R: Send;
}

/// A scope of [`Worker::scope`]: spawns. Serially (one worker) the papers' runtimes run every
/// spawned task to completion at its creation (eager evaluation), so their serial order is the
/// left-to-right depth-first order of the papers; the library baselines keep their own (`tbb`
/// runs a scope's tasks at its end, newest first; the heartbeat scheduling baseline, whose library
/// has no spawn, at its end as a tree of joins). A program must not depend on the order, only on the scope's end. A
/// runtime with futures creates them in a scope through its worker's [`Futures`].
pub trait Scope<'s>: Sync {
    /// The worker handle type of this runtime.
    type Worker: Worker;

    /// Spawns `f`; the scope waits for it before it closes.
    fn spawn<F>(&self, w: &Self::Worker, f: F)
    where
        F: FnOnce(&Self, &Self::Worker) + Send + 's;
}

/// The futures of the closure front-end, an extension of [`Worker`] that a fork-join-only
/// runtime (the papers' TBB and OpenMP, the heartbeat scheduling baseline) does not implement: a workload variant that
/// creates futures is written for `W: Futures`, so it cannot be run, nor even compiled, on
/// such a runtime. A future belongs to the scope it is created in: the scope waits for it
/// before it closes.
pub trait Futures: Worker {
    /// Single-touch ("structured") future handle.
    type Future<'s, T: Send + 's>: FutureHandle<T, Worker = Self>;
    /// Multi-touch ("general") future handle.
    type SharedFuture<'s, T: Send + Sync + 's>: SharedHandle<T, Worker = Self>;

    /// Creates, in scope `s`, a future computing `f` (fut-create). Where the runtime supports
    /// it, `f` runs first and the continuation of the caller may be stolen.
    fn future<'s, T, F>(&self, s: &Self::Scope<'s>, f: F) -> Self::Future<'s, T>
    where
        F: FnOnce(&Self::Scope<'s>, &Self) -> T + Send + 's,
        T: Send + 's;

    /// Creates, in scope `s`, a future whose handle can be cloned and touched any number of
    /// times.
    fn shared_future<'s, T, F>(&self, s: &Self::Scope<'s>, f: F) -> Self::SharedFuture<'s, T>
    where
        F: FnOnce(&Self::Scope<'s>, &Self) -> T + Send + 's,
        T: Send + Sync + 's;

    /// Creates, in scope `s`, a **latency-hiding future** (Rayon-LH's `FutureJob`): its value
    /// is the output of the Rust future that `make` makes, typically one that waits for I/O or
    /// a timer ([`crate::io::sleep`], a tokio socket). The handle is single-touch, as
    /// [`Futures::future`]'s, and the scope waits for the future before it closes.
    ///
    /// `make` runs at once, in the context of the tokio runtime that will drive the future
    /// (so tokio's timers and sockets work in it); a panic in `make` or in the future is the
    /// future's, as a panic in a future task: the touch panics and the scope re-raises it.
    /// Neither gets a worker handle (nor can capture one: a handle is not `Sync`), as a runtime
    /// call there could switch fibers inside that tokio context (tokio then panics).
    ///
    /// The fiber runtimes (`abp`, `fibril`, `prows`) *hide* the latency: the future is polled
    /// once by the creating worker, then handed to the pool's I/O thread ([`crate::io`]); a
    /// touch of the unfinished future suspends the toucher (`prows`: its whole deque, the
    /// thesis's Figure 3.1; `abp`: its fiber) and the worker goes on with other work; when the
    /// future completes, the I/O thread makes the deque resumable (or pushes the fiber back)
    /// and wakes a sleeping worker. The default implementation, kept by the runtimes that
    /// cannot hide latency (`serial`, `rayon`), is the *classic* one: a future task that
    /// blocks its worker until the I/O future is done ([`crate::io::block_on`]).
    fn latency_future<'s, T, M, Fut>(&self, s: &Self::Scope<'s>, make: M) -> Self::Future<'s, T>
    where
        M: FnOnce() -> Fut + Send + 's,
        Fut: std::future::Future<Output = T> + Send + 's,
        T: Send + 's,
    {
        self.future(s, move |_, _| crate::io::block_on(make))
    }
}

/// A pool of the closure front-end whose workers have [`Futures`]: what a workload's future
/// variants are written for (`Workload::run_futures`).
pub trait FutureForkJoin: ForkJoin<Worker: Futures> {}

impl<S: ForkJoin<Worker: Futures>> FutureForkJoin for S {}

/// A single-touch future handle: `get` consumes it.
pub trait FutureHandle<T>: Send {
    /// The worker handle type of this runtime.
    type Worker: Worker;
    /// Touches the future: waits (by the runtime's policy) until its task has put its value,
    /// and returns the value. `w` is the handle of the touching task.
    fn get(self, w: &Self::Worker) -> T;
}

/// A multi-touch future handle: clones share one result.
pub trait SharedHandle<T>: Clone + Send + Sync {
    /// The worker handle type of this runtime.
    type Worker: Worker;
    /// Touches the future and borrows its value.
    fn get(&self, w: &Self::Worker) -> &T;
}

/// The async front-end: a pool that runs Rust futures as tasks.
///
/// The runtime owns the three fork-join operations and where every task's state machine
/// lives: workload code says *what* runs as a child ([`AsyncWorker::join`],
/// [`AsyncWorker::call`], [`AsyncWorker::spawn`]) by handing over a closure that makes the
/// child's future, and the runtime decides where that future is stored (on the heap, on the
/// native stack, on a segmented stack) and who polls it. So a recursive async workload function
/// names no `Box::pin`: its future holds the closures, never the child futures themselves, and
/// its size is finite.
///
/// A recursive async function declares its return type with `+ Send` (the compiler cannot infer
/// an auto trait of a type that contains itself):
///
/// ```
/// use std::future::Future;
/// use stealbench_schedulers::{AsyncForkJoin, AsyncWorker, PoolConfig, Scheduler, serial::Serial};
///
/// fn fib<'s, C: AsyncWorker<'s>>(c: C, n: u64) -> impl Future<Output = u64> + Send + 's {
///     async move {
///         if n < 2 {
///             return n;
///         }
///         let (a, b) = c.join(move |c| fib(c, n - 1), move |c| fib(c, n - 2)).await;
///         a + b
///     }
/// }
///
/// let pool = Serial::start(&PoolConfig::with_workers(1)).unwrap();
/// assert_eq!(pool.run_async(|c| fib(c, 20)), 6765);
/// ```
pub trait AsyncForkJoin: Scheduler {
    /// The handle handed to the root future and, through the closures, to every child.
    type Worker<'scope>: AsyncWorker<'scope>;

    /// Runs the future made by `f` as the root task and returns its output. Every task started
    /// in it has finished when `run_async` returns. A runtime whose tasks run after their
    /// creation panics when a handle is used after that. A panic in any task is propagated to
    /// the caller and the pool stays usable.
    fn run_async<'scope, R, F, Fut>(&self, f: F) -> R
    where
        F: FnOnce(Self::Worker<'scope>) -> Fut + Send,
        Fut: std::future::Future<Output = R> + Send + 'scope,
        R: Send + 'scope;
}

/// The operations of a task on the async front-end. Every child is given by a closure that
/// receives the child's own handle (use that one, not the parent's, inside the child) and
/// returns the child's future.
///
/// Serially (one worker) every child runs to completion where it is started, before the
/// parent's continuation: the papers' depth-first order.
pub trait AsyncWorker<'scope>: Clone + Send + Sync + 'scope {
    /// Single-touch future handle: awaiting it yields the task's output.
    type Handle<T: Send + 'scope>: std::future::Future<Output = T> + Send + 'scope;
    /// Multi-touch future handle: clones share one result.
    type Shared<T: Send + Sync + 'scope>: AsyncShared<T> + 'scope;

    /// Fork-join of two children: forks `a` (the parent's continuation, "call `b`, then join",
    /// may be stolen while `a` runs), calls `b`, then joins (waits for `a`). Serially `a` runs
    /// before `b`. Both have finished when the returned future is ready.
    fn join<A, B, FA, FB>(
        &self,
        a: A,
        b: B,
    ) -> impl std::future::Future<Output = (FA::Output, FB::Output)> + Send
    where
        A: FnOnce(Self) -> FA + Send + 'scope,
        B: FnOnce(Self) -> FB + Send + 'scope,
        FA: std::future::Future + Send + 'scope,
        FB: std::future::Future + Send + 'scope,
        FA::Output: Send + 'scope,
        FB::Output: Send + 'scope;

    /// Fork-join of any number of children, the loop of forks and the one join of libfork's and
    /// Cilk's programs: for each item of `items`, in order, the child `child(c, item)` runs
    /// first while the parent's continuation (the rest of the loop) may be stolen; the last
    /// child is called (nothing is left to steal); then the parent joins every child once. The
    /// output is `init` reduced with every child's output in item order:
    /// `reduce(reduce(init, out_0), out_1)...`, with the children's outputs grouped in any way,
    /// so `reduce` must be associative (a sum, a count merge). Serially the children run one
    /// after the other where they are forked, before the parent's continuation.
    ///
    /// The iterator is advanced, and `child` and `reduce` are called, by whichever worker is
    /// running the parent at that point (one at a time). A panic in a child, the iterator or
    /// `reduce` reaches `run_async` as every task's panic does, and no child is started after
    /// the parent has seen it. Where it climbs through the parent (`serial/front=async`: at once;
    /// `libfork`: at the join, once every child started has finished, the first in item order
    /// if several panic) the scope is its way up; `tokio` records it from the failed task.
    fn fork_reduce<I, F, Fut, G>(
        &self,
        items: I,
        child: F,
        init: Fut::Output,
        reduce: G,
    ) -> impl std::future::Future<Output = Fut::Output> + Send
    where
        I: IntoIterator + Send + 'scope,
        I::IntoIter: Send + 'scope,
        I::Item: Send + 'scope,
        F: FnMut(Self, I::Item) -> Fut + Send + 'scope,
        Fut: std::future::Future + Send + 'scope,
        Fut::Output: Send + 'scope,
        G: FnMut(Fut::Output, Fut::Output) -> Fut::Output + Send + 'scope;

    /// Calls a child: it runs to completion before the parent goes on, and the parent is not
    /// made stealable meanwhile. This is how a task awaits a recursive child of its own type.
    fn call<F, Fut>(&self, f: F) -> impl std::future::Future<Output = Fut::Output> + Send
    where
        F: FnOnce(Self) -> Fut + Send + 'scope,
        Fut: std::future::Future + Send + 'scope,
        Fut::Output: Send + 'scope;

    /// Creates a single-touch future (fut-create): awaiting the returned future starts the
    /// task and yields its handle. Where the runtime is work-first the task runs at once and
    /// the parent's continuation may be stolen; elsewhere (tokio) the task is queued.
    fn spawn<F, Fut>(
        &self,
        f: F,
    ) -> impl std::future::Future<Output = Self::Handle<Fut::Output>> + Send
    where
        F: FnOnce(Self) -> Fut + Send + 'scope,
        Fut: std::future::Future + Send + 'scope,
        Fut::Output: Send + 'scope;

    /// Creates a multi-touch future, as [`AsyncWorker::spawn`].
    fn spawn_shared<F, Fut>(
        &self,
        f: F,
    ) -> impl std::future::Future<Output = Self::Shared<Fut::Output>> + Send
    where
        F: FnOnce(Self) -> Fut + Send + 'scope,
        Fut: std::future::Future + Send + 'scope,
        Fut::Output: Send + Sync + 'scope;

    /// Waits for a latency future (the async front-end's [`Futures::latency_future`]): the
    /// returned future's output is that of the Rust future `make` makes. `tokio` awaits it
    /// natively (its own timer and reactor: the task is suspended, its worker runs other
    /// tasks); the default, kept by the runtimes whose tasks cannot wait for an outside event
    /// (`serial/front=async`, `libfork`), blocks the worker until the future is done
    /// ([`crate::io::block_on`]), the classic wait.
    fn latency_future<T, M, Fut>(
        &self,
        make: M,
    ) -> impl std::future::Future<Output = T> + Send + 'scope
    where
        M: FnOnce() -> Fut + Send + 'scope,
        Fut: std::future::Future<Output = T> + Send + 'scope,
        T: Send + 'scope,
    {
        async move { crate::io::block_on(make) }
    }
}

/// A multi-touch handle of the async front-end.
pub trait AsyncShared<T>: Clone + Send + Sync {
    /// Waits for the task and borrows its output.
    fn get<'a>(&'a self) -> impl std::future::Future<Output = &'a T> + Send + 'a
    where
        T: 'a;
}

/// Implements [`Futures`] for a worker whose scope type has the future operations as inherent
/// methods (`future`, `shared_future`, and `latency_future` where `latency: own`; `latency:
/// default` keeps the trait's blocking wait), which take the worker: every runtime with
/// futures keeps them beside its scope's `spawn`. `params: [P, ...]` are the runtime's type
/// parameters, after `'s` in the scope type and before `T` in the handle types.
macro_rules! futures_by_scope {
    (
        impl[$($g:tt)*] $W:ty {
            scope: $S:ident, future: $F:ident, shared: $SH:ident, params: [$($P:ident),*],
            latency: $latency:ident
        }
    ) => {
        impl<$($g)*> $crate::api::Futures for $W {
            type Future<'s, T: Send + 's> = $F<$($P,)* T>;
            type SharedFuture<'s, T: Send + Sync + 's> = $SH<$($P,)* T>;

            #[inline(always)]
            fn future<'s, T, F>(&self, s: &$S<'s $(, $P)*>, f: F) -> $F<$($P,)* T>
            where
                F: FnOnce(&$S<'s $(, $P)*>, &Self) -> T + Send + 's,
                T: Send + 's,
            {
                s.future(self, f)
            }

            #[inline(always)]
            fn shared_future<'s, T, F>(&self, s: &$S<'s $(, $P)*>, f: F) -> $SH<$($P,)* T>
            where
                F: FnOnce(&$S<'s $(, $P)*>, &Self) -> T + Send + 's,
                T: Send + Sync + 's,
            {
                s.shared_future(self, f)
            }

            $crate::api::futures_by_scope!(@$latency $S, $F, [$($P),*]);
        }
    };
    (@default $S:ident, $F:ident, [$($P:ident),*]) => {};
    (@own $S:ident, $F:ident, [$($P:ident),*]) => {
        #[inline(always)]
        fn latency_future<'s, T, M, Fut>(&self, s: &$S<'s $(, $P)*>, make: M) -> $F<$($P,)* T>
        where
            M: FnOnce() -> Fut + Send + 's,
            Fut: std::future::Future<Output = T> + Send + 's,
            T: Send + 's,
        {
            s.latency_future(self, make)
        }
    };
}

pub(crate) use futures_by_scope;
