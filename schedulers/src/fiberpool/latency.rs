//! Latency-hiding futures on the fiber runtimes ([`Futures::latency_future`]): Rayon-LH's
//! `FutureJob`, with the pool's I/O thread ([`crate::io::IoThread`]) driving the waits.
//!
//! # The path of one latency future
//!
//! 1. **Creation** ([`start`], on the creating worker): `make` runs and the future it made is
//!    polled once, both inside the I/O runtime's context, so a timer or a socket registers
//!    with the pool's reactor there (the thesis's "part 1": the worker registers the wait).
//!    A future that is done at once gives a ready handle and nothing else happens. Otherwise
//!    the scope counts it, and it is spawned onto the I/O thread as an [`IoTask`] together
//!    with its result cell, which the handle shares (the same cell as a future task that
//!    parted from its creator: [`super::future`]).
//! 2. **Touch** (the ordinary touch of that cell, `FiberWorker::touch`): if the future is not
//!    done, the touching fiber suspends and the policy's `suspend_touch` decides what waits:
//!    `prows` suspends the whole active deque with the fiber as its implicit bottom node
//!    (Figure 3.1: Active to Suspended; into a random stealable set if it still has ready
//!    nodes) and the worker steals; `abp` parks the fiber on the future's signal and the
//!    worker pops its own deque.
//! 3. **Completion** (on the I/O thread: [`IoTask::poll`]): when the reactor or the timer
//!    wakes the task and its poll returns `Ready`, the future is dropped, its value (or its
//!    panic, kept by the scope) goes into the cell, and [`Policy::put_external`] does the
//!    put that no worker can do here: `prows` runs the thesis's callback (Algorithm 2: the
//!    fiber pushed at the bottom of each deque suspended on the future, Suspended to
//!    Resumable, into a random worker's stealable set if in none; the next steal from it
//!    makes it Muggable, and a mugging makes it some worker's Active deque), `abp` hands each
//!    parked fiber to a worker through the injector ([`set_external`]). Either way a sleeping
//!    worker is woken. Then the scope's count drops, and if it was the last task, the fiber
//!    waiting at the scope's end is made ready the same way.
//!
//! The future's own code runs on the I/O thread (after the first poll), where the thesis
//! re-polls it on a worker: a latency future is I/O, whose polls are short, and this way a
//! worker never runs a poll that finds nothing to do. The thesis's repeated-wake check (its
//! Algorithm 2, line 37) is tokio's: a task woken twice is polled once, and the put happens
//! exactly once, at completion.
//!
//! # Lost wake-ups
//!
//! A put from the I/O thread cannot race a half-done suspension: the touching fiber is
//! published (recorded on the future) by its worker's driver after it switched away, under
//! the same atomic word the put swaps (`prows`: also under the pool-wide lock, which the put
//! then takes). After making work visible (a deque entry under the pool-wide lock, or an
//! injector entry), the I/O thread issues a SeqCst fence and wakes a sleeper if any: with the
//! sleeper's fence before its last look at every deque and the injector, either the sleeper
//! sees the work or the I/O thread sees the sleeper.
//!
//! [`Futures::latency_future`]: crate::api::Futures::latency_future

use super::Policy;
use super::future::{Cell2, FiberScope, Repr};
use super::handle::FiberWorker;
use super::job::{FiberBox, FiberNode, Job, JobRef};
use super::signal::Signal;
use super::worker::Shared;
use crate::io::IoThread;
use crate::rng::SplitMix64;
use std::any::Any;
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering, fence};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, Waker};
use std::thread;

/// A pool's I/O side: its I/O thread, started at the pool's first latency future (whose
/// first poll runs in its context), and its counters.
#[derive(Debug, Default)]
pub struct PoolIo {
    thread: OnceLock<IoThread>,
    /// Latency futures created.
    created: AtomicU64,
    /// Those that were not done at their first poll (handed to the I/O thread).
    waited: AtomicU64,
    /// Deques (`prows`) or fibers (`abp`) the I/O thread made ready.
    readied: AtomicU64,
}

impl PoolIo {
    /// The I/O thread, started now if it was not (named after the runtime). Panics if it
    /// cannot start: the latency future cannot be waited for.
    fn thread(&self, runtime: &str) -> &IoThread {
        self.thread.get_or_init(|| {
            IoThread::start(format!("{runtime}-io")).unwrap_or_else(|e| panic!("{runtime}: {e}"))
        })
    }

    /// Stops the I/O thread, if it was started: every future still in flight is dropped, and
    /// its waiters see a panic (see [`IoTask`]'s `Drop`).
    pub fn stop(&self) {
        if let Some(t) = self.thread.get() {
            t.stop();
        }
    }

    /// The counters, for `Stats::extra`.
    pub fn stats(&self) -> [(&'static str, u64); 3] {
        [
            ("latency_futures", self.created.load(Ordering::Relaxed)),
            ("latency_waits", self.waited.load(Ordering::Relaxed)),
            ("latency_readied", self.readied.load(Ordering::Relaxed)),
        ]
    }

    /// Zeroes the counters.
    pub fn reset(&self) {
        for c in [&self.created, &self.waited, &self.readied] {
            c.store(0, Ordering::Relaxed);
        }
    }
}

/// The creation of a latency future of `scope` by the task of `w` (step 1 of the module
/// documentation): the handle's representation.
pub(super) fn start<'s, P, T, M, Fut>(
    scope: &FiberScope<'s, P>,
    w: &FiberWorker<P>,
    make: M,
) -> Repr<P, T>
where
    P: Policy,
    M: FnOnce() -> Fut + Send + 's,
    Fut: Future<Output = T> + Send + 's,
    T: Send + 's,
{
    let local = w.local();
    let shared = Arc::clone(&local.shared);
    shared.io.created.fetch_add(1, Ordering::Relaxed);
    let io = shared.io.thread(P::NAME);
    // Made and polled once in the I/O runtime's context; the guard is dropped before this
    // fiber can switch (neither `make` nor a poll gets a worker handle), so no thread-local
    // state of tokio's outlives this worker's hold of the fiber.
    let first = {
        let _cx = io.handle().enter();
        panic::catch_unwind(AssertUnwindSafe(|| {
            let mut fut: Pin<Box<dyn Future<Output = T> + Send + 's>> = Box::pin(make());
            // A waker that does nothing: if the future registered a wake-up with it, the
            // I/O thread's first poll replaces it, and that poll sees an event that happened
            // meanwhile (a future's poll checks readiness before it returns `Pending`).
            match fut.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
                Poll::Ready(v) => Ok(v),
                Poll::Pending => Err(fut),
            }
        }))
    };
    let fut = match first {
        Ok(Ok(v)) => return Repr::Ready(Some(v)),
        Ok(Err(fut)) => fut,
        Err(p) => {
            scope.keep_panic(p);
            return Repr::Ready(None);
        }
    };
    shared.io.waited.fetch_add(1, Ordering::Relaxed);
    // Counted until the I/O thread's completion, which has dropped the future by then.
    scope.pending.fetch_add(1, Ordering::Relaxed);
    let cell = Arc::new(Cell2::new());
    let task: Pin<Box<dyn Future<Output = ()> + Send + 's>> = Box::pin(IoTask {
        fut: Some(fut),
        cell: Some(Arc::clone(&cell)),
        scope: ScopePtr((scope as *const FiberScope<'s, P>).cast()),
        rng: SplitMix64::new(local.next_rand()),
        shared: Arc::clone(&shared),
    });
    // SAFETY: only the lifetime changes (same layout). What the task borrows for `'s` (the
    // future, its value, the scope) outlives it where it is used: the scope counts the task
    // (above) and does not end before the completion's decrement, and the completion drops
    // the future and the task's reference to the cell before that decrement (see
    // `IoTask::finish`); after it the task holds nothing of `'s` but a pointer it never
    // follows again, and tokio only drops it.
    let task: Pin<Box<dyn Future<Output = ()> + Send + 'static>> =
        unsafe { std::mem::transmute(task) };
    drop(io.handle().spawn(task));
    Repr::Cell(cell)
}

/// The scope of an [`IoTask`], its lifetime erased.
struct ScopePtr<P: Policy>(*const FiberScope<'static, P>);

// SAFETY: a scope is `Sync`; the pointer is followed only while the scope counts the task.
unsafe impl<P: Policy> Send for ScopePtr<P> {}

/// A latency future on the I/O thread: polls it until it completes, then delivers (step 3 of
/// the module documentation).
struct IoTask<P: Policy, T, F> {
    /// The future, until it completes.
    fut: Option<F>,
    /// The result cell the handle shares, until the delivery.
    cell: Option<Arc<Cell2<P, T>>>,
    scope: ScopePtr<P>,
    /// The put's random choices (`prows`: where a resumable deque goes), seeded by the
    /// creating worker.
    rng: SplitMix64,
    shared: Arc<Shared<P>>,
}

impl<P: Policy, T, F> IoTask<P, T, F> {
    /// The completion: the future is dropped already. Stores `out` (a panic goes to the scope,
    /// as a future task's), puts the cell, lets the task's reference to the cell go, then
    /// counts the task out of its scope (after which nothing of the scope is touched).
    fn finish(&mut self, out: thread::Result<T>) {
        let cell = self.cell.take().expect("a latency future delivered twice");
        // SAFETY: the scope counts this task until the decrement below, so it is alive.
        let scope = unsafe { &*self.scope.0 };
        let v = match out {
            Ok(v) => Some(v),
            Err(p) => {
                scope.keep_panic(p);
                None
            }
        };
        // SAFETY: only this task writes the value, once, before the put.
        unsafe { *cell.value.get() = v };
        let n = P::put_external(&self.shared, &cell.done, &mut self.rng);
        self.shared
            .io
            .readied
            .fetch_add(n as u64, Ordering::Relaxed);
        drop(cell);
        if scope.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            // The scope's last task: its body waits on `done`.
            set_external(&self.shared, &scope.done);
        }
    }
}

impl<P: Policy, T, F: Future<Output = T> + Unpin> Future for IoTask<P, T, F> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let Some(fut) = this.fut.as_mut() else {
            return Poll::Ready(());
        };
        let out = match panic::catch_unwind(AssertUnwindSafe(|| Pin::new(fut).poll(cx))) {
            Ok(Poll::Pending) => return Poll::Pending,
            Ok(Poll::Ready(v)) => Ok(v),
            Err(p) => Err(p),
        };
        // The future may borrow what the scope protects: gone before the scope can end.
        let out = match (out, drop_caught(this.fut.take())) {
            (Ok(v), None) => Ok(v),
            (Err(p), _) | (Ok(_), Some(p)) => Err(p),
        };
        this.finish(out);
        Poll::Ready(())
    }
}

/// Drops `x`, returning the panic of its destructor if there is one.
fn drop_caught<X>(x: X) -> Option<Box<dyn Any + Send>> {
    panic::catch_unwind(AssertUnwindSafe(move || drop(x))).err()
}

impl<P: Policy, T, F> Drop for IoTask<P, T, F> {
    /// A task dropped before its completion: the I/O thread stopped with the future in
    /// flight (the pool was dropped). The future is dropped and its waiters get a panic
    /// rather than wait forever. (With the scopes' discipline a pool cannot be dropped while
    /// one of its scopes waits, so this is a safety net.)
    fn drop(&mut self) {
        if self.cell.is_some() {
            let _ = drop_caught(self.fut.take());
            self.finish(Err(Box::new(format!(
                "{}: the I/O thread stopped before the latency future finished",
                P::NAME
            ))));
        }
    }
}

/// Makes `f`, a fiber the I/O thread released, ready: a job in the injector that pushes it
/// onto the deque of the worker that takes it (only a deque's owner may push onto it), where
/// that worker's fiber round pops it and switches to it.
fn inject_resume<P: Policy>(sh: &Shared<P>, f: FiberBox<P>) {
    sh.injector.push(JobRef {
        data: Box::into_raw(f) as *const (),
        exec: resume_exec::<P>,
    });
}

/// The job of [`inject_resume`].
///
/// # Safety
/// `data` is the fiber box [`inject_resume`] gave up, taken once (the injector hands each job
/// to one worker).
unsafe fn resume_exec<P: Policy>(data: *const (), w: &FiberWorker<P>) {
    // SAFETY: by the contract; the fiber is suspended, and its box is ours alone.
    let f = unsafe { Box::from_raw(data as *mut FiberNode<P>) };
    w.here().push(Job::Resume(f));
}

/// Sets `sig` from the I/O thread, which is no worker and has no deque: every fiber parked on
/// it goes to the injector, then a sleeping worker is woken. Returns how many fibers.
pub(crate) fn set_external<P: Policy>(sh: &Shared<P>, sig: &Signal<P>) -> usize {
    // SAFETY: `sig` is set once (by the put or the scope's last decrement, which happen once),
    // and is alive for the call; `set` does not touch it after the swap.
    let n = unsafe { sig.set(|f| inject_resume(sh, f)) };
    if n > 0 {
        wake_after_publish(sh);
    }
    n
}

/// After work was made visible by a thread that is no worker: the SeqCst fence of the
/// sleepers' handshake (see [`super::worker`]), then wake one sleeper if there is one.
pub(crate) fn wake_after_publish<P: Policy>(sh: &Shared<P>) {
    fence(Ordering::SeqCst);
    sh.notify();
}
