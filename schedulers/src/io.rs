//! I/O threads for latency-hiding futures ([`Futures::latency_future`]), and the blocking wait of
//! the runtimes that cannot hide latency.
//!
//! An [`IoThread`] is one OS thread driving a current-thread tokio runtime (its own epoll
//! instance and timer wheel) until it is stopped. The fiber runtimes start one per pool, at
//! the pool's first latency future; the I/O future a task hands over is made and first polled
//! by the task's worker inside that runtime's context (so tokio's timers and sockets register
//! with it), then spawned onto it: the I/O thread sleeps in `epoll_wait` until a timer or a
//! socket is ready, polls the future, and when it completes, does the put that makes the
//! waiting fiber or deque ready (`fiberpool/latency.rs`).
//!
//! Why tokio's driver rather than `async-io` (the thesis's choice): tokio is already the
//! project's dependency (its async baseline), its timer is the one that baseline awaits, and a
//! current-thread runtime gives each pool its own reactor on its own thread, dropped with the
//! pool, where `async-io` has one reactor per process and would add about fifteen crates. What
//! it costs: tokio's timers tick in milliseconds (a sleep of `d` ends between `d` and `d` plus
//! one millisecond later, a zero sleep included), and a future using them must be made inside
//! a tokio context, which is why the front-end takes a closure that makes the future
//! (`make`), not the future itself.
//!
//! [`block_on`] is the classic wait: the calling thread blocks until the future is done, which
//! is what the runtimes that cannot hide latency (`serial`, `rayon`, the async front-end but
//! `tokio`) do with a latency future. It drives the future with a process-wide I/O thread,
//! started at the first call.
//!
//! [`Futures::latency_future`]: crate::api::Futures::latency_future

use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::task::{Context, Poll};
use std::thread::{self, JoinHandle, ThreadId};
use std::time::Duration;
use tokio::runtime::{Builder, Handle};
use tokio::sync::oneshot;

/// A sleep of `d` on tokio's timer: the latency future of the workloads. Call it inside the
/// closure given to [`Futures::latency_future`](crate::api::Futures::latency_future) (or to
/// [`block_on`]), which runs in the I/O thread's context. A zero sleep is ready at its first
/// poll, as `async-io`'s zero timer is (tokio's own would wait for its driver's next
/// millisecond tick): no latency is no latency.
pub fn sleep(d: Duration) -> Sleep {
    Sleep((!d.is_zero()).then(|| Box::pin(tokio::time::sleep(d))))
}

/// The future of [`sleep`]: tokio's `Sleep`, or nothing for a zero duration.
#[derive(Debug)]
pub struct Sleep(Option<Pin<Box<tokio::time::Sleep>>>);

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match self.0.as_mut() {
            None => Poll::Ready(()),
            Some(s) => s.as_mut().poll(cx),
        }
    }
}

/// One thread driving a current-thread tokio runtime; see the module documentation.
#[derive(Debug)]
pub struct IoThread {
    handle: Handle,
    /// The stop signal and the thread, until [`IoThread::stop`].
    stop: Mutex<Option<(oneshot::Sender<()>, JoinHandle<()>)>>,
    id: ThreadId,
}

impl IoThread {
    /// Starts the thread, named `name`. `Err` if the OS refuses the thread or tokio the runtime.
    pub fn start(name: String) -> Result<IoThread, String> {
        let (handle_tx, handle_rx) = mpsc::channel();
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let join = thread::Builder::new()
            .name(name.clone())
            .spawn(move || {
                let rt = match Builder::new_current_thread().enable_all().build() {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = handle_tx.send(Err(format!("{name}: tokio runtime: {e}")));
                        return;
                    }
                };
                let _ = handle_tx.send(Ok(rt.handle().clone()));
                // Runs the spawned futures until the stop signal (or until the sender is
                // dropped, which also ends the wait).
                rt.block_on(async {
                    let _ = stop_rx.await;
                });
                // Dropping the runtime drops every future still in flight, on this thread.
                drop(rt);
            })
            .map_err(|e| format!("cannot start an I/O thread: {e}"))?;
        let id = join.thread().id();
        let handle = handle_rx
            .recv()
            .map_err(|_| "the I/O thread ended before its runtime started".to_string())??;
        Ok(IoThread {
            handle,
            stop: Mutex::new(Some((stop_tx, join))),
            id,
        })
    }

    /// The runtime's handle: enter it to make futures that use its timers and sockets, spawn
    /// onto it to have its thread drive them.
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// Stops the thread and waits for it: the futures still in flight are dropped on it
    /// (whatever they wait for), then the runtime. Idempotent. Called on the I/O thread itself
    /// (the last owner dropped there), it only signals: a thread cannot wait for itself.
    pub fn stop(&self) {
        let taken = self.stop.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some((tx, join)) = taken {
            let _ = tx.send(());
            if thread::current().id() != self.id {
                let _ = join.join();
            }
        }
    }
}

impl Drop for IoThread {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The process-wide I/O thread of [`block_on`], started at the first call. A failure to start
/// it is a panic of the caller.
fn classic() -> &'static IoThread {
    static CLASSIC: OnceLock<IoThread> = OnceLock::new();
    CLASSIC.get_or_init(|| {
        IoThread::start("stealbench-io".to_string()).unwrap_or_else(|e| panic!("{e}"))
    })
}

/// The classic wait: makes the future with `make` and blocks the calling thread until it is
/// done, returning its output (a panic in `make` or in the future is the caller's). The future
/// is polled on the calling thread; its timers and sockets are driven by a process-wide I/O
/// thread. This is how a runtime that cannot hide latency implements
/// [`Futures::latency_future`](crate::api::Futures::latency_future).
///
/// Must not be called from inside a tokio runtime's task (tokio refuses to block there).
pub fn block_on<T, M, Fut>(make: M) -> T
where
    M: FnOnce() -> Fut,
    Fut: Future<Output = T>,
{
    classic().handle().block_on(async move { make().await })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn block_on_waits_for_a_timer_and_returns_the_value() {
        let t = Instant::now();
        let v = block_on(|| async {
            sleep(Duration::from_millis(20)).await;
            7
        });
        assert_eq!(v, 7);
        assert!(t.elapsed() >= Duration::from_millis(20));
    }

    #[test]
    fn a_zero_sleep_is_ready_at_once() {
        let mut s = std::pin::pin!(sleep(Duration::ZERO));
        let mut cx = Context::from_waker(std::task::Waker::noop());
        assert!(s.as_mut().poll(&mut cx).is_ready());
    }

    #[test]
    fn an_io_thread_stops_with_a_sleep_in_flight() {
        let io = IoThread::start("test-io".into()).unwrap();
        io.handle().spawn(async {
            sleep(Duration::from_secs(3600)).await;
        });
        let t = Instant::now();
        drop(io);
        assert!(t.elapsed() < Duration::from_secs(5));
    }
}
