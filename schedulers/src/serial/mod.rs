//! `serial`: the serial elision. `join` runs `a` then `b`, a spawn or a future runs to
//! completion where it is created, and a touch just reads the value. Its time is T_s.
//!
//! It implements both front-ends. Through the closure front-end, after inlining, a workload
//! compiles to its plain recursive code; through the async front-end every child's future is
//! made and polled to completion on the spot, pinned on the native stack of the poll that
//! starts it ([`SerialAsync`]), so it measures the async state machines alone.

use crate::api::{
    AsyncForkJoin, AsyncShared, AsyncWorker, ForkJoin, FutureHandle, Scheduler, Scope,
    SharedHandle, StartError, Worker,
};
use crate::config::{Capabilities, PoolConfig};
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
    const CAPABILITIES: Capabilities = Capabilities::SERIAL_ELISION;

    fn start(config: &PoolConfig) -> Result<Self, StartError> {
        Self::CAPABILITIES.admit(Self::NAME, config)?;
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
        F: FnOnce(&SerialScope<'s>, &SerialWorker) -> R + Send,
        R: Send,
    {
        f(
            &SerialScope {
                _marker: PhantomData,
            },
            self,
        )
    }
}

impl<'s> Scope<'s> for SerialScope<'s> {
    type Worker = SerialWorker;

    #[inline(always)]
    fn spawn<F>(&self, w: &SerialWorker, f: F)
    where
        F: FnOnce(&Self, &SerialWorker) + Send + 's,
    {
        f(self, w)
    }
}

impl<'s> SerialScope<'s> {
    #[inline(always)]
    pub(crate) fn future<T, F>(&self, w: &SerialWorker, f: F) -> SerialFuture<T>
    where
        F: FnOnce(&Self, &SerialWorker) -> T + Send + 's,
        T: Send + 's,
    {
        SerialFuture(f(self, w))
    }

    #[inline(always)]
    pub(crate) fn shared_future<T, F>(&self, w: &SerialWorker, f: F) -> SerialShared<T>
    where
        F: FnOnce(&Self, &SerialWorker) -> T + Send + 's,
        T: Send + Sync + 's,
    {
        SerialShared(Arc::new(f(self, w)))
    }
}

crate::api::futures_by_scope!(impl[] SerialWorker {
    scope: SerialScope, future: SerialFuture, shared: SerialShared, params: [], latency: default
});

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

/// Polls `fut` to completion on this thread. Serially every task this pool started has
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

/// The serial handle of the async front-end. A child's future is made and polled to completion
/// inside the poll of the operation that starts it, pinned on the native stack of that poll
/// call ("in place"): the parent's state machine holds only the closure, so recursion needs no
/// allocation, and the native stack grows and shrinks with the recursion as in the closure
/// front-end.
#[derive(Debug)]
pub struct SerialAsync<'scope> {
    _marker: PhantomData<&'scope mut &'scope ()>,
}

impl Clone for SerialAsync<'_> {
    fn clone(&self) -> Self {
        SerialAsync {
            _marker: PhantomData,
        }
    }
}

impl SerialAsync<'_> {
    #[inline(always)]
    fn new() -> Self {
        SerialAsync {
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

/// A deferred computation: on its first poll, runs `f` (which polls children in place) and is
/// ready with its value. It holds only the closure, never a child's future, so a parent's
/// state machine that awaits it has a finite size whatever the recursion.
struct InPlace<F>(Option<F>);

impl<F> Unpin for InPlace<F> {}

impl<F: FnOnce() -> T, T> std::future::Future for InPlace<F> {
    type Output = T;
    #[inline(always)]
    fn poll(mut self: std::pin::Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<T> {
        Poll::Ready((self
            .0
            .take()
            .expect("a serial operation was polled after it finished"))(
        ))
    }
}

impl<'scope> AsyncWorker<'scope> for SerialAsync<'scope> {
    type Handle<T: Send + 'scope> = Ready<T>;
    type Shared<T: Send + Sync + 'scope> = SerialShared<T>;

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
        FB::Output: Send + 'scope,
    {
        InPlace(Some(move || {
            let ra = run_to_completion(a(SerialAsync::new()));
            (ra, run_to_completion(b(SerialAsync::new())))
        }))
    }

    fn fork_reduce<I, F, Fut, G>(
        &self,
        items: I,
        mut child: F,
        init: Fut::Output,
        mut reduce: G,
    ) -> impl std::future::Future<Output = Fut::Output> + Send
    where
        I: IntoIterator + Send + 'scope,
        I::IntoIter: Send + 'scope,
        I::Item: Send + 'scope,
        F: FnMut(Self, I::Item) -> Fut + Send + 'scope,
        Fut: std::future::Future + Send + 'scope,
        Fut::Output: Send + 'scope,
        G: FnMut(Fut::Output, Fut::Output) -> Fut::Output + Send + 'scope,
    {
        InPlace(Some(move || {
            items.into_iter().fold(init, |acc, item| {
                reduce(acc, run_to_completion(child(SerialAsync::new(), item)))
            })
        }))
    }

    fn call<F, Fut>(&self, f: F) -> impl std::future::Future<Output = Fut::Output> + Send
    where
        F: FnOnce(Self) -> Fut + Send + 'scope,
        Fut: std::future::Future + Send + 'scope,
        Fut::Output: Send + 'scope,
    {
        InPlace(Some(move || run_to_completion(f(SerialAsync::new()))))
    }

    fn spawn<F, Fut>(&self, f: F) -> impl std::future::Future<Output = Ready<Fut::Output>> + Send
    where
        F: FnOnce(Self) -> Fut + Send + 'scope,
        Fut: std::future::Future + Send + 'scope,
        Fut::Output: Send + 'scope,
    {
        InPlace(Some(move || {
            Ready(Some(run_to_completion(f(SerialAsync::new()))))
        }))
    }

    fn spawn_shared<F, Fut>(
        &self,
        f: F,
    ) -> impl std::future::Future<Output = SerialShared<Fut::Output>> + Send
    where
        F: FnOnce(Self) -> Fut + Send + 'scope,
        Fut: std::future::Future + Send + 'scope,
        Fut::Output: Send + Sync + 'scope,
    {
        InPlace(Some(move || {
            SerialShared(Arc::new(run_to_completion(f(SerialAsync::new()))))
        }))
    }
}

impl AsyncForkJoin for Serial {
    type Worker<'scope> = SerialAsync<'scope>;

    fn run_async<'scope, R, F, Fut>(&self, f: F) -> R
    where
        F: FnOnce(SerialAsync<'scope>) -> Fut + Send,
        Fut: std::future::Future<Output = R> + Send + 'scope,
        R: Send + 'scope,
    {
        run_to_completion(f(SerialAsync::new()))
    }
}
