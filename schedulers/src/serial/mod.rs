//! `serial`: the serial elision. `join` runs `a` then `b`, a spawn or a future runs to
//! completion where it is created, and a touch just reads the value. Its time is T_s.
//!
//! It implements both front-ends. Through the closure front-end, after inlining, a workload
//! compiles to its plain recursive code; through the async front-end every spawned future is
//! polled to completion on the spot, so it measures the async state machines alone.

use crate::api::{
    AsyncForkJoin, AsyncShared, ForkJoin, FutureHandle, Scheduler, Scope, SharedHandle, Spawner,
    StartError, Worker,
};
use crate::config::PoolConfig;
use crate::stats::Stats;
use std::marker::PhantomData;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

/// The serial pool: no threads, the caller runs everything.
#[derive(Debug)]
pub struct Serial {
    _private: (),
}

/// The serial worker handle.
#[derive(Debug, Clone, Copy)]
pub struct SerialWorker {
    _private: (),
}

/// The serial scope: nothing to wait for, every task already ran.
#[derive(Debug)]
pub struct SerialScope<'s> {
    _marker: PhantomData<&'s mut &'s ()>,
}

/// A single-touch future of the serial runtime: the value itself.
#[derive(Debug)]
pub struct SerialFuture<T>(T);

/// A multi-touch future of the serial runtime: the shared value.
#[derive(Debug)]
pub struct SerialShared<T>(Arc<T>);

impl<T> Clone for SerialShared<T> {
    fn clone(&self) -> Self {
        SerialShared(Arc::clone(&self.0))
    }
}

impl Scheduler for Serial {
    const NAME: &'static str = "serial";

    fn start(config: &PoolConfig) -> Result<Self, StartError> {
        if config.workers != 1 {
            return Err(StartError::Unsupported(format!(
                "the serial elision runs on exactly 1 worker, not {}",
                config.workers
            )));
        }
        Ok(Serial { _private: () })
    }

    fn workers(&self) -> usize {
        1
    }

    fn stats(&self) -> Stats {
        Stats {
            steals: Some(0),
            steal_attempts: Some(0),
            extra: Vec::new(),
            gauges: Vec::new(),
        }
    }

    fn reset_stats(&self) {}
}

impl ForkJoin for Serial {
    type Worker = SerialWorker;

    fn run<R, F>(&self, f: F) -> R
    where
        F: FnOnce(&SerialWorker) -> R + Send,
        R: Send,
    {
        f(&SerialWorker { _private: () })
    }
}

impl Worker for SerialWorker {
    type Scope<'s> = SerialScope<'s>;

    #[inline(always)]
    fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(&Self) -> RA + Send,
        B: FnOnce(&Self) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        let ra = a(self);
        (ra, b(self))
    }

    #[inline(always)]
    fn scope<'s, F, R>(&self, f: F) -> R
    where
        F: FnOnce(&SerialScope<'s>) -> R + Send,
        R: Send,
    {
        f(&SerialScope {
            _marker: PhantomData,
        })
    }
}

impl<'s> Scope<'s> for SerialScope<'s> {
    type Worker = SerialWorker;
    type Future<T: Send + 's> = SerialFuture<T>;
    type SharedFuture<T: Send + Sync + 's> = SerialShared<T>;

    #[inline(always)]
    fn spawn<F>(&self, w: &SerialWorker, f: F)
    where
        F: FnOnce(&Self, &SerialWorker) + Send + 's,
    {
        f(self, w)
    }

    #[inline(always)]
    fn future<T, F>(&self, w: &SerialWorker, f: F) -> SerialFuture<T>
    where
        F: FnOnce(&Self, &SerialWorker) -> T + Send + 's,
        T: Send + 's,
    {
        SerialFuture(f(self, w))
    }

    #[inline(always)]
    fn shared_future<T, F>(&self, w: &SerialWorker, f: F) -> SerialShared<T>
    where
        F: FnOnce(&Self, &SerialWorker) -> T + Send + 's,
        T: Send + Sync + 's,
    {
        SerialShared(Arc::new(f(self, w)))
    }
}

impl<T: Send> FutureHandle<T> for SerialFuture<T> {
    type Worker = SerialWorker;
    #[inline(always)]
    fn get(self, _w: &SerialWorker) -> T {
        self.0
    }
}

impl<T: Send + Sync> SharedHandle<T> for SerialShared<T> {
    type Worker = SerialWorker;
    #[inline(always)]
    fn get(&self, _w: &SerialWorker) -> &T {
        &self.0
    }
}

/// Polls `fut` to completion on this thread. Serially every task this pool spawned has
/// already finished, so a pending poll means the future waits on something outside the pool.
fn run_to_completion<F: std::future::Future>(fut: F) -> F::Output {
    let mut fut = pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    match fut.as_mut().poll(&mut cx) {
        Poll::Ready(v) => v,
        Poll::Pending => {
            panic!("serial runtime: a task is waiting on something that is not a task of this pool")
        }
    }
}

/// The serial spawner: a spawn runs the future to completion at once.
#[derive(Debug)]
pub struct SerialSpawner<'scope> {
    _marker: PhantomData<&'scope mut &'scope ()>,
}

impl Clone for SerialSpawner<'_> {
    fn clone(&self) -> Self {
        SerialSpawner {
            _marker: PhantomData,
        }
    }
}

/// The serial async handle: the finished value.
#[derive(Debug)]
pub struct Ready<T>(Option<T>);

impl<T> Unpin for Ready<T> {}

impl<T> std::future::Future for Ready<T> {
    type Output = T;
    fn poll(mut self: std::pin::Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<T> {
        Poll::Ready(self.0.take().expect("a serial handle was awaited twice"))
    }
}

impl<T: Send + Sync> AsyncShared<T> for SerialShared<T> {
    fn get<'a>(&'a self) -> impl std::future::Future<Output = &'a T> + Send + 'a
    where
        T: 'a,
    {
        std::future::ready(&*self.0)
    }
}

impl<'scope> Spawner<'scope> for SerialSpawner<'scope> {
    type Handle<T: Send + 'scope> = Ready<T>;
    type Shared<T: Send + Sync + 'scope> = SerialShared<T>;

    fn spawn<T, Fut>(&self, fut: Fut) -> Ready<T>
    where
        Fut: std::future::Future<Output = T> + Send + 'scope,
        T: Send + 'scope,
    {
        Ready(Some(run_to_completion(fut)))
    }

    fn spawn_shared<T, Fut>(&self, fut: Fut) -> SerialShared<T>
    where
        Fut: std::future::Future<Output = T> + Send + 'scope,
        T: Send + Sync + 'scope,
    {
        SerialShared(Arc::new(run_to_completion(fut)))
    }
}

impl AsyncForkJoin for Serial {
    type Spawner<'scope> = SerialSpawner<'scope>;

    fn run_async<'scope, R, F, Fut>(&self, f: F) -> R
    where
        F: FnOnce(SerialSpawner<'scope>) -> Fut,
        Fut: std::future::Future<Output = R> + Send + 'scope,
        R: Send + 'scope,
    {
        run_to_completion(f(SerialSpawner {
            _marker: PhantomData,
        }))
    }
}
